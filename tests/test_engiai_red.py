"""EngiAI second review of issue 16 (attacker's view): cheats that must not earn credit and
honest runs that must not be penalised.  Each test names the attack or the honest case."""
import json
import shutil

import h5py
import numpy as np
import pytest

from conftest import REPO

from test_engiai_support import B, G, edit_record, gold, run  # noqa: F401
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
PHO = "training_code_photonics2d-t4-func-verbose-seed3"
INTACT = 0.8111                     # the sample run's SCORE (0.8253 before issue 24: its photonics
                                    # HPC job never reached COMPLETED, a step no longer counted)


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def _nan(a):
    a = a.copy()
    a[0, 0, 0] = np.nan
    return a


# ---------------------------------------------------------------- SCORE never rises by breaking one's samples
@pytest.mark.parametrize("breakage", ["nan", "null", "garbage_file"])
def test_breaking_ones_own_samples_never_raises_the_score(sample, breakage):
    """Before: the photonics model (score 0.6186, below the run's 0.8253) made UNSCORABLE by a
    NaN in its samples, a wrong shape, `samples: null` or an unreadable arrays.h5 left its cell
    out of the SCORE: 0.8441.  The trial stays None (the seed's "no usable MMD"), but the cell
    now counts 0.0."""
    tdir = sample / "trials" / PHO
    with h5py.File(tdir / "arrays.h5", "r") as fh:
        s = fh["samples"][()].astype(np.float64)
    if breakage == "nan":
        B.h5_write(str(tdir / "arrays.h5"), {"samples": _nan(s)})
    elif breakage == "garbage_file":
        (tdir / "arrays.h5").write_bytes(b"\x89HDF\r\n" + b"\0" * 100)
    else:
        edit_record(sample, PHO, lambda r: r["artefacts"].update(samples=None))
    checks, trials, cells = grade(sample)
    t = trials[PHO]
    assert t.score is None and t.status == "unscorable" and t.artefact_none
    (cell,) = [c for c in cells if c["problem"] == "training_code_photonics2d"]
    assert cell["status"] == "unscorable" and cell["n_artefact_none"] == 1
    (rec,) = [c for c in checks if c.id == "cell.training_code_photonics2d/t4-func-verbose"]
    assert "counts 0.0 in the SCORE" in rec.message
    assert G.verdict(checks, strict=False)[1] < INTACT


def test_a_missing_baseline_stays_out_of_the_score(sample):
    """The harness gap (no baseline for seed 7) keeps its cell out of the SCORE, as before."""
    checks, trials, cells = grade(sample)
    t = trials["training_code_beams2d-t2-terse-seed7"]
    assert t.score is None and not t.artefact_none
    (cell,) = [c for c in cells if c["problem"] == "training_code_beams2d"]
    assert cell["n_artefact_none"] == 0
    assert G.verdict(checks, strict=False)[1] == INTACT


# ---------------------------------------------------------------- near-copies against the data's own rate
Y, X = np.mgrid[0:50, 0:100] + 0.5


def family(u):
    """A low-dimensional design family (a well-trained generator's data manifold): five soft
    webs shifted by 20 u0, width 3 + 3 u1, flanges 4 + 4 u2; binarised, nearby parameters give
    the same pixels, so fresh draws coincide with the references as the references coincide
    with each other."""
    w, f = 3 + 3 * u[1], 4 + 4 * u[2]
    d = np.maximum(np.clip(f - Y + 0.5, 0, 1), np.clip(Y - (50 - f) + 0.5, 0, 1))
    for p in (10, 30, 50, 70, 90):
        d = np.maximum(d, np.clip(w / 2 - np.abs(X - (p + 20 * u[0] - 10)) + 0.5, 0, 1))
    return d


def base_of(refs, bsm, sigma=10.0):
    """A baseline record as RunRefs builds it (rigid moves checked)."""
    sp = G.reference_spacing(refs)

    def rates(rigid):
        return {"reference": G.reference_near_rate(refs, refs, sp, same=True, rigid=rigid),
                "baseline_samples": G.reference_near_rate(refs, bsm, sp, same=False, rigid=rigid)}
    return {"mmd": G.mmd(bsm, refs, sigma), "sigma": sigma, "reference": refs,
            "baseline_samples": bsm, "spacing": sp, "checks": [], "rigid": True,
            "near_rate": rates(True), "near_rate_plain": rates(False)}


def draws(rng, k):
    return np.stack([family(rng.random(3)) for _ in range(k)])


@pytest.fixture(scope="module")
def low_dim():
    """32 references, 32 baseline samples and 32 fresh draws of the 3-parameter family."""
    rng = np.random.default_rng(13)
    refs, bsm, samples = draws(rng, 32), draws(rng, 32), draws(rng, 32)
    return refs, bsm, samples, base_of(refs, bsm)


def test_a_perfect_generator_of_low_dimensional_data_is_not_held(low_dim):
    """Honest: samples drawn from the very distribution of the references (32 of each, a
    3-parameter family).  Before: 13 of 32 such samples lie below a quarter of the spacing (the
    references show it too: 2 of 32 among themselves, 4 of 32 against the baseline's samples),
    so the set was held and model_quality 0.  Now the share against each group is judged
    against the references' own rate: not held (TRIAL_FORMAT.md decision 19, measured rates)."""
    refs, bsm, samples, base = low_dim
    ratios = G.copy_ratios(samples, np.concatenate([refs, bsm]), base["spacing"])
    assert np.sum(ratios < 0.25) == 13                  # the old 5% rule held it
    assert base["near_rate_plain"]["reference"][0] == 2 / 32
    assert base["near_rate"]["reference"][0] == 0.5      # shifted references coincide more
    held, credited, checks = G.sample_copy_checks(samples, base, "t")
    assert not held and credited.all()


def test_copies_of_low_dimensional_data_are_still_held(low_dim):
    """Attack in the same world: every sample a reference plus noise 1e-2 (far below the noise
    that would move it off its reference)."""
    refs, _, _, base = low_dim
    rng = np.random.default_rng(12)
    copies = refs[rng.integers(0, 32, 32)] + 0.01 * rng.standard_normal((32, 50, 100))
    held, _, checks = G.sample_copy_checks(copies, base, "t")
    assert held and [c for c in checks if c.id == "trial.t.sample_copies"][0].status is G.Status.REVIEW


def test_a_baseline_that_memorised_the_references_excuses_no_copy():
    """Attack: the baseline's samples are the references with 15 cells flipped (the sample
    run's), so every reference has a near neighbour among them; the references' rate is taken
    against the other references, so copies of the references are still held."""
    rng = np.random.default_rng(13)
    refs = np.stack([B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in range(8)])
    bsm = np.stack([B.flip(r, 15, rng) for r in refs]).astype(np.float64)
    base = base_of(refs.astype(np.float64), bsm)
    assert base["near_rate"]["baseline_samples"][0] == 1.0
    assert base["near_rate"]["reference"][0] == 0.0
    held, _, _ = G.sample_copy_checks(refs + 1e-6, base, "t")
    assert held


def test_a_few_copies_padded_among_honest_samples_buy_nothing():
    """Attack: 1 near-copy (a reference + 1e-6) among 39 honest new designs, within the 5%
    share.  Before: it stayed in the MMD (up to 1/(1 - 0.05)^2 = +10.8% model_quality at the
    share).  Now it is left out of the MMD, with an INFO record."""
    rng = np.random.default_rng(14)
    refs = np.stack([B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in range(0, 8, 2)])
    honest = np.stack([B.flip(B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)), 30, rng)
                       for s in (1, 3, 5, 7) for _ in range(10)]).astype(np.float64)
    base = base_of(refs.astype(np.float64), np.stack([B.flip(r, 150, rng) for r in refs]) * 1.0)
    samples = honest.copy()
    samples[0] = refs[0] + 1e-6
    held, credited, checks = G.sample_copy_checks(samples, base, "t")
    assert not held and credited.sum() == 39 and not credited[0]
    (info,) = [c for c in checks if c.id == "trial.t.sample_copies_excluded"]
    assert info.status is G.Status.INFO
    with_copy = G.mmd(samples, base["reference"], 10.0)
    assert G.mmd(samples[credited], base["reference"], 10.0) > with_copy    # the copy helped


# ---------------------------------------------------------------- RAG: a retrieval that could have informed the answer
def C(name, args=None, **res):
    return {"name": name, "args": args or {}, "result": res}


def rag_terms(calls, **cond):
    rec = {"problem": "rag_beams2d",
           "expected": {"conditions": dict({"expected_volfrac": 0.35}, **cond)}}
    return G.score_rag(rec, calls, "t")


ANSWER = C("optimize_design", {"volfrac": 0.35})


@pytest.mark.parametrize("passage", ["hello", "beams2d topology optimisation", "volfrac 0.5",
                                     {"content": "see section 2"}])
def test_a_retrieval_whose_passages_do_not_state_the_value_credits_no_accuracy(passage):
    """Attack: a successful search_documents with junk results, then the guessed (or
    get_problem_details') value.  Before: full credit 1.0.  Now the 0.40 for using the tool."""
    calls = [C("search_documents", {"query": "x"}, success=True, results=[passage]), ANSWER]
    terms, (rec,) = rag_terms(calls)
    assert terms["rag_accuracy"] == pytest.approx(0.40) and terms["volfrac_accuracy"] == 1.0
    assert "no retrieval before the answer states 0.35" in rec.message


@pytest.mark.parametrize("text", ["volfrac = 0.35", "a volume fraction of 35% is used",
                                  "volfrac=.35 (default)", "VOLFRAC: 3.5e-1"])
def test_honest_passages_stating_the_value_in_any_usual_form_are_credited(text):
    terms, _ = rag_terms([C("search_documents", success=True, results=[{"content": text}]), ANSWER])
    assert terms["rag_accuracy"] == pytest.approx(1.0)


def test_an_honest_retry_after_an_unhelpful_retrieval_is_credited():
    """Honest: the first query returns an unrelated passage, the agent rephrases and the second
    states the value (and rmin, two-parameter mode), then answers."""
    calls = [C("search_documents", {"query": "beam"}, success=True, results=["MBB beam setup"]),
             C("search_documents", {"query": "volfrac rmin"}, success=False, error="timeout"),
             C("search_documents", {"query": "volfrac rmin"}, success=True,
               results=["defaults: volfrac 0.35, filter radius rmin 2.0"]),
             C("optimize_design", {"volfrac": 0.35, "rmin": 2.0})]
    terms, _ = rag_terms(calls, expected_rmin=2.0)
    assert terms["rag_accuracy"] == pytest.approx(1.0)


# ---------------------------------------------------------------- STL: honest exports from other tools
BEAM = B.beam().astype(np.float64)


def witnessed(tris, design=BEAM, exports=()):
    tris = np.asarray(tris, dtype=np.float64)
    rep = G.watertight_report(tris)
    if not rep["ok"]:
        return False
    rep["witness"] = G.stl_witness(rep, design, list(exports), G.cap_faces(tris, rep))
    return rep["witness"]["ok"]


def test_an_export_placed_elsewhere_in_x_y_is_still_the_designs_solid():
    """Honest: an exporter that centres the mesh (x, y shifted by -50, -25) or offsets it.
    Before: not watertight (bounding box and centroid compared at absolute positions)."""
    m = B.mesh(B.beam()).astype(np.float64)
    assert witnessed(m - [50.0, 25.0, 0.0]) and witnessed(m + [3.0, -7.5, 2.0])
    mir = B.mesh(B.beam(webs=(15, 50, 85)), 0.5, 2.0, True).astype(np.float64) - [25.0, 12.5, 0.0]
    assert witnessed(mir, B.beam(webs=(15, 50, 85)).astype(np.float64),
                     [{"scale_xy": 0.5, "threshold": 0.5, "mirrored": True}])


@pytest.mark.parametrize("rel", [6e-8, 2e-7])
def test_shared_corners_computed_apart_by_float_noise_still_witness(rel):
    """Honest: every corner of every facet carries its own float noise (an exporter computing a
    shared corner once per facet).  Before: the edge check welded them, but the footprint missed
    the cells whose sample point lies on a merged rectangle's diagonal (the (0.618, 0.427)
    offset lies on slope-3/2 lines through grid corners), so even float32-level noise (6e-8)
    made the genuine export not watertight.  (At 1e-6 per corner, 16 float32 ulps, the volume
    is off by up to 7e-6 against the 1e-5 tolerance, the height being the noisy extreme: 2 of 6
    draws fail, TRIAL_FORMAT.md.)"""
    m = B.mesh(B.beam()).astype(np.float64)
    noisy = m * (1 + rel * np.random.default_rng(1).standard_normal(m.shape))
    assert witnessed(noisy)


@pytest.mark.parametrize("name", ["bbox", "other", "frame"])
def test_a_wrong_solid_moved_elsewhere_still_fails(name):
    """Attack: translation invariance must not let another solid through."""
    if name == "bbox":
        mask = np.zeros((50, 100), np.uint8)
        mask[:, :] = 1
    elif name == "other":
        mask = B.beam(webs=(15, 50, 85))
    else:
        mask = B.beam(webs=())
    assert not witnessed(B.mesh(mask).astype(np.float64) - [50.0, 25.0, 0.0])


def _box(x0, x1, y0, y1, z0, z1, inward=False):
    t = B.mesh(np.ones((1, 1), np.uint8)).astype(np.float64) * [x1 - x0, y1 - y0, z1 - z0] + [x0, y0, z0]
    return t[:, ::-1] if inward else t


def test_extra_shells_whose_volume_and_moments_cancel_are_not_the_design():
    """Attack: the design's solid plus two floating boxes in the empty bays and two cavities of
    the same volume inside the webs, placed so the volume and the x/y centroid are unchanged
    (the caps are untouched).  Before: watertight.  Now every shell must span the full height
    (an extrusion's pieces do)."""
    m = B.mesh(B.beam()).astype(np.float64)
    extra = [_box(19.5, 20.5, 24.5, 25.5, 0.3, 0.6), _box(39.5, 40.5, 24.5, 25.5, 0.3, 0.6),
             _box(9.5, 10.5, 24.5, 25.5, 0.3, 0.6, True), _box(49.5, 50.5, 24.5, 25.5, 0.3, 0.6, True)]
    tris = np.concatenate([m] + extra)
    rep = G.watertight_report(tris)
    assert rep["ok"] and rep["volume"] == pytest.approx(1960) and rep["partial_shells"] == 4
    assert not witnessed(tris)
    two = B.beam(webs=(15, 50, 85))
    two[:, 40:60] = 0                            # honest: a design in two pieces, two full shells
    rep2 = G.watertight_report(B.mesh(two).astype(np.float64))
    assert rep2["shells"] == 2 and rep2["partial_shells"] == 0
    assert witnessed(B.mesh(two), two.astype(np.float64))


# ---------------------------------------------------------------- rigid moves of the references
def gold_base(gold_dir):
    run = G.RunRefs(str(gold_dir))
    return run.baseline("training_code_beams2d", "cgan_cnn_2d", 5)


@pytest.mark.parametrize("move", [
    lambda r: np.roll(r, 1, axis=2),                               # shifted a cell right
    lambda r: np.roll(r, -2, axis=1),                              # two cells up
    lambda r: np.pad(r, ((0, 0), (0, 0), (1, 0)))[:, :, :100],     # shifted, zero-filled
    lambda r: np.roll(r[:, ::-1, :], 1, axis=2),                   # flipped and shifted
])
def test_references_moved_rigidly_are_copies(gold, move):
    """Attack: the test designs shifted by a cell or two, or flipped (the pixel distance puts a
    one-cell shift at 0.45-0.62 of the spacing, where honest new designs sit).  Before: not
    held, model_quality 1.0.  Now the references' flips and shifts by up to 2 cells count as
    known designs."""
    base = gold_base(gold)
    held, _, checks = G.sample_copy_checks(move(base["reference"]), base, "t")
    assert held and "flips and shifts" in checks[0].message


def test_honest_gold_samples_stay_clear_of_rigid_copies(gold):
    """Honest: the gold model's new beams lie at 0.447 of the spacing from the references even
    allowing flips and shifts (0.444 from the baseline's samples): 1.8x the threshold."""
    base = gold_base(gold)
    honest = np.stack([B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s))
                       for s in (1, 3, 5, 7)]).astype(np.float64)
    held, credited, checks = G.sample_copy_checks(honest, base, "t")
    assert not held and credited.all()
    r = G.copy_ratios(honest, base["reference"], base["spacing"], rigid=True)
    assert r.min() == pytest.approx(np.sqrt(152) / np.sqrt(760), rel=1e-9)     # 0.447


def test_beyond_the_budget_rigid_moves_are_not_checked_and_the_set_is_held(gold, monkeypatch):
    """Round 4: the cap that stops the shifted-copy check fails closed (held for review, with
    the work it would take), where it used to pass the shifted references silently."""
    base = gold_base(gold)
    monkeypatch.setitem(G.SPEC, "copy_rigid_max_ops", 1)
    held, _, checks = G.sample_copy_checks(np.roll(base["reference"], 1, axis=2), base, "t")
    assert held and "rigid moves NOT checked" in checks[0].message
    (c,) = [c for c in checks if c.id == "trial.t.sample_copies"]
    assert c.status is G.Status.REVIEW and "copy_rigid_max_ops" in c.message


def test_a_single_copied_sample_with_few_references_is_held(gold):
    """Attack: one sample, a reference + 1e-6, against the gold run's 4 references: the share
    test alone cannot tell (1 of 1 is within the noise of a rate measured on 4 designs), but
    leaving the near-copy out would leave nothing to score: held."""
    base = gold_base(gold)
    held, _, checks = G.sample_copy_checks(base["reference"][:1] + 1e-6, base, "t")
    assert held and "every one of the 1 sample(s) is a near-copy" in checks[-1].message
