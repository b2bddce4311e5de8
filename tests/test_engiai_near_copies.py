"""EngiAI issue 16, item 1: copies by distance, not bytes.  Training-code samples that are the
reference designs (or the baseline's samples) plus small noise, and design trials whose design
is a near-copy of another example's ground truth or of another trial's design, are held for
review and their term is not credited; honest sample sets and designs beside them keep full
credit.  The threshold comes from the reference set itself (TRIAL_FORMAT.md decision 19)."""
import json

import h5py
import numpy as np
import pytest

from conftest import REPO, run_grader, verdict_lines

from test_engiai_support import B, G, edit_record, gold, run  # noqa: F401
from test_engiai_support import grade_run as grade

BASE = "baselines/training_code_beams2d/cgan_cnn_2d/seed5"
SAMPLES = ("trials", "code", "arrays.h5")


def refs_and_baseline(run_dir):
    with h5py.File(run_dir / "reference.h5", "r") as fh:
        return fh[f"{BASE}/reference_designs"][()].astype(np.float64), \
            fh[f"{BASE}/baseline_samples"][()].astype(np.float64)


def write_samples(run_dir, samples):
    B.h5_write(str(run_dir.joinpath(*SAMPLES)), {"samples": samples})


def by_id(checks, cid):
    return [c for c in checks if c.id == cid]


# ---------------------------------------------------------------- training-code samples
def test_honest_gold_model_keeps_full_model_quality_with_a_margin(gold):
    """The gold model generates new designs of the test distribution: nearest at ~0.44 of the
    reference spacing (its samples vs the baseline's), well above the 0.25 threshold."""
    checks, trials, _ = grade(gold)
    assert trials["code"].terms["model_quality"] == 1.0
    assert not by_id(checks, "trial.code.sample_copies")
    (d,) = by_id(checks, "trial.code.sample_distance")
    assert d.measured == pytest.approx(np.sqrt(150) / np.sqrt(760), rel=1e-9)   # 0.444
    assert d.measured > 1.7 * G.SPEC["copy_distance_frac"] and d.limit == G.SPEC["copy_distance_frac"]


@pytest.mark.parametrize("attack", [
    lambda r, b, rng: r + 1e-9,                                     # the attack
    lambda r, b, rng: r + rng.uniform(0, 0.45, r.shape) * (r < 0.5) - 0.4 * (r > 0.5),  # raw far, binarised identical
    lambda r, b, rng: np.abs(r - (rng.random(r.shape) < 6 / r[0].size)),   # ~6 cells flipped per sample
    lambda r, b, rng: np.clip(b + rng.normal(0, 1e-3, b.shape), 0, 1),   # the baseline's samples, jittered
    lambda r, b, rng: np.clip(r + 0.02 * np.sin(np.arange(r[0].size)).reshape(r.shape[1:]), 0, 1),  # structured noise
])
def test_near_copied_samples_are_held_and_not_credited(run, attack):
    refs, bsm = refs_and_baseline(run)
    write_samples(run, attack(refs, bsm, np.random.default_rng(3)))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.code.sample_copies")
    assert c.status is G.Status.REVIEW and c.measured == 4 and "not credited" in c.message
    t = trials["code"].terms
    assert t["model_quality"] == 0.0 and t["model_quality_if_cleared"] > 0.5   # what copying bought
    assert trials["code"].score == pytest.approx(0.45)          # the other five terms
    assert G.verdict(checks, strict=False)[0] == "PARTIAL"
    assert G.verdict(checks, strict=True) == ("FAIL", 0.0)


def test_one_near_copy_among_many_honest_samples_is_within_the_allowed_share(run):
    """copy_max_share and the references' own rate (second review): with the gold run's 4
    references the rate 0 of 4 is uncertain, so 1 or 3 near-copies in 40 samples are not held,
    but where the references show no near-copy every near-copy is left out of the MMD (an INFO
    record): they buy nothing.  25 in 40 is held."""
    refs, bsm = refs_and_baseline(run)
    honest = np.stack([B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in (1, 3, 5)])
    many = np.concatenate([honest] * 13 + [honest[:1]]).astype(np.float64)     # 40 samples
    for n_copies, held in ((1, False), (3, False), (25, True)):
        s = many.copy()
        s[:n_copies] = refs[np.arange(n_copies) % len(refs)] + 1e-6
        write_samples(run, s)
        checks, trials, _ = grade(run)
        assert bool(by_id(checks, "trial.code.sample_copies")) is held
        assert (trials["code"].terms["model_quality"] == 0.0) is held
        if not held:
            (info,) = by_id(checks, "trial.code.sample_copies_excluded")
            assert info.measured == n_copies


def test_near_copy_subprocess_default_and_strict(run, tmp_path):
    refs, _ = refs_and_baseline(run)
    write_samples(run, refs + 1e-9)
    rc, out, err, doc = run_grader(REPO / "grade_engiai.py", run, "--json", tmp_path / "r.json")
    assert "REVIEW_REQUIRED: trial.code.sample_copies" in out and "Traceback" not in err
    keys = verdict_lines(out)
    assert keys["RESULT"] == "PARTIAL" and float(keys["SCORE"]) < 1.0 and rc == 1
    (code,) = [t for t in doc["trials"] if t["trial_id"] == "code"]
    assert code["terms"]["model_quality"] == 0.0 and code["terms"]["model_quality_if_cleared"] == 1.0
    rc, out, _, _ = run_grader(REPO / "grade_engiai.py", run, "--strict", "--quiet")
    assert verdict_lines(out)["RESULT"] == "FAIL" and verdict_lines(out)["SCORE"] == "0.0"


def test_reference_spacing_is_the_nearest_neighbour_percentile():
    refs = np.stack([B.beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in (0, 2, 4, 6)])
    sp = G.reference_spacing(np.concatenate([refs, refs[:1]]))   # a duplicate is left out
    assert sp["raw"] == pytest.approx(np.sqrt(760)) and sp["binarised"] == pytest.approx(np.sqrt(760))
    assert G.reference_spacing(refs[:1]) == {"raw": None, "binarised": None}


def test_a_single_reference_design_records_that_only_exact_copies_are_checked(run):
    with h5py.File(run / "reference.h5", "a") as fh:
        g = fh[BASE]
        keep = g["reference_designs"][()][:1]
        del g["reference_designs"]
        g.create_dataset("reference_designs", data=keep)
    checks, trials, _ = grade(run)
    (d,) = by_id(checks, "trial.code.sample_distance")
    assert "only exact copies were checked" in d.message


# ---------------------------------------------------------------- designs
def two_example_run(run):
    """Add a second beams2d ground truth (example 1) and a full-style trial for it."""
    gt1 = B.beam(webs=(15, 50, 85)).astype(np.float64)
    with h5py.File(run / "reference.h5", "a") as fh:
        g = fh.create_group("ground_truth/beams2d/1")
        g.create_dataset("optimal_design", data=gt1)
        g.attrs["compliance"] = 120.0
        g.attrs["volfrac"] = float(gt1.mean())
    src = run / "trials" / "beams2d-full"
    dst = run / "trials" / "beams2d-full-ex1"
    dst.mkdir()
    rec = json.loads((src / "trial.json").read_text())
    rec.update(trial_id="beams2d-full-ex1", example_id=1, seed=11)
    (dst / "trial.json").write_text(json.dumps(rec))
    prompts = B.read_prompts(run)                  # the harness ran it (issue 24)
    prompts.append(dict([e for e in prompts if e["prompt_style"] == "full"][0], example_id=1, seed=11))
    B.write_prompts(run, prompts)
    return gt1, dst


def put_design(tdir, design):
    B.h5_write(str(tdir / "arrays.h5"), {"design": design})
    B.write_stl_binary(str(tdir / "design.stl"), B.mesh(design > 0.5))


def test_honest_designs_of_two_examples_are_not_copies(run):
    gt1, dst = two_example_run(run)
    d = gt1.copy()
    d[20:24, 30:34] = 1                                     # the agent's own, close to its truth
    put_design(dst, d)
    checks, trials, _ = grade(run)
    assert not [c for c in checks if c.id.endswith(".design_copy")]
    t = trials["beams2d-full-ex1"].terms
    assert "design_quality_if_cleared" not in t and t["iou"] > 0.95


def test_design_copied_from_another_examples_ground_truth_is_held(run):
    _, dst = two_example_run(run)
    put_design(dst, B.beam().astype(np.float64) * 0.97 + 0.01)       # example 0's truth, rescaled
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full-ex1.design_copy")
    assert c.status is G.Status.REVIEW and "ground truth of example 0" in c.message
    t = trials["beams2d-full-ex1"]
    assert t.terms["design_quality"] == 0.0 and t.terms["design_quality_if_cleared"] > 0
    assert t.score == pytest.approx(0.20 * 1.0 + 0.15 * 1.0)
    (s,) = by_id(checks, "trial.beams2d-full-ex1.score")
    assert s.measured == t.score and "not credited" in s.message
    # the trial whose own example it is, is fine: same design, its own truth
    assert not by_id(checks, "trial.beams2d-full.design_copy")
    assert G.verdict(checks, strict=True) == ("FAIL", 0.0)


def test_design_copied_from_another_trial_flags_the_copy_not_the_original(run):
    _, dst = two_example_run(run)
    src_design = B.beam().astype(np.float64)
    src_design[0:3, 0:3] = 0                                # trial beams2d-full's own design
    put_design(run / "trials" / "beams2d-full", src_design)
    put_design(dst, src_design + 1e-7)
    checks, trials, _ = grade(run)
    ids = {c.id for c in checks if c.id.endswith(".design_copy")}
    assert ids == {"trial.beams2d-full-ex1.design_copy"}
    (c,) = by_id(checks, "trial.beams2d-full-ex1.design_copy")
    assert "design of trial beams2d-full" in c.message or "ground truth of example 0" in c.message


def test_ground_truth_without_optimization_is_held_with_optimization_is_not(run):
    design = B.beam().astype(np.float64)                    # exactly the ground truth (gold)
    checks, _, _ = grade(run)
    assert not by_id(checks, "trial.beams2d-full.design_copy")          # optimized: fine

    def no_opt(r):
        r["tool_calls"] = [c for c in r["tool_calls"] if c["name"] != "optimize_design"]
    edit_record(run, "beams2d-full", no_opt)
    put_design(run / "trials" / "beams2d-full", design)
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design_copy")
    assert "no successful optimize_design" in c.message
    assert trials["beams2d-full"].terms["design_quality"] == 0.0


def test_too_many_ground_truths_compares_the_runs_own_examples_and_says_so(run, monkeypatch):
    _, dst = two_example_run(run)
    put_design(dst, B.beam().astype(np.float64) * 0.97 + 0.01)
    monkeypatch.setitem(G.SPEC, "copy_max_ground_truths", 1)
    checks, _, _ = grade(run)
    (i,) = [c for c in checks if c.id == "run.design_copies.beams2d"]
    assert i.status is G.Status.INFO and "run's own examples" in i.message
    assert by_id(checks, "trial.beams2d-full-ex1.design_copy")       # still found: both in the run
