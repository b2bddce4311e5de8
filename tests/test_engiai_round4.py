"""EngiAI issue 24, round 4: what a previous red team left open.
1. A better trial copied under another key (exact, or perturbed by an ulp or by noise below the
   binarisation threshold) raised the sample run's SCORE 0.8111 -> 0.8220; copies are now found
   by the content of what is scored within duplicate_tol and count once.
2. The shifted-copy check's work cap fails closed.
3. An extra field in a record's copy of its expectation: INFO when no style reads it, FAIL
   (a disagreement with the key) when the grader reads that field.
Each attack sits beside the honest twin it must not touch."""
import json
import shutil

import h5py
import numpy as np
import pytest

from conftest import REPO

from test_engiai_support import G, edit_record, rec_path
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
INTACT = 0.8111                 # the sample run's SCORE (test_engiai_sample)
FULL0, NAT0 = "beams2d-full-ex0", "beams2d-natural-ex0"


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def by_id(checks, cid):
    return [c for c in checks if c.id == cid]


def score(checks):
    return G.verdict(checks, strict=False)[1]


def copy_trial(run, src, dst, perturb=None, **fields):
    """Trial `src` copied over trial `dst` (the key of dst: its style, example id, seed)."""
    d = run / "trials" / dst
    keep = json.loads(rec_path(run, dst).read_text())
    shutil.rmtree(d)
    shutil.copytree(run / "trials" / src, d)
    rec = json.loads(rec_path(run, dst).read_text())
    rec.update({k: keep[k] for k in ("trial_id", "prompt_style", "example_id", "seed")}, **fields)
    if perturb is not None:
        perturb(rec, d)
    rec_path(run, dst).write_text(json.dumps(rec))


def ulp(rec, d):
    """Every scored number one ulp away: the design's cells, the objectives."""
    for c in rec["tool_calls"]:
        for k, v in (c["result"].get("objectives") or {}).items():
            c["result"]["objectives"][k] = float(np.nextafter(v, np.inf))
    with h5py.File(d / "arrays.h5", "r+") as f:
        f["design"][...] = np.nextafter(f["design"][()], np.float32(0.5))


# ================================================================ 1. copies count once
def test_sample_run_unchanged_and_its_closest_honest_pair_is_far_from_the_tolerance(sample):
    """Honest twins: random-ex0 and derived-params-ex0 score the same (0.9483) with the very
    same design (four trials of the sample share example 0's design), but their exports differ:
    0.667 apart, 667x duplicate_tol.  Nothing is flagged, the SCORE is unchanged."""
    checks, trials, _ = grade(sample)
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    assert not by_id(checks, "run.duplicates_unchecked")
    (d,) = by_id(checks, "run.duplicates")
    assert d.measured == pytest.approx(2 / 3) and d.limit == G.SPEC["duplicate_tol"] == 1e-3
    assert "derived-params-ex0" in d.message and "random-ex0" in d.message
    a, b = trials["beams2d-workflow-random-ex0"], trials["beams2d-workflow-derived-params-ex0"]
    assert a.score == b.score and np.array_equal(a.content["arrays"][0], b.content["arrays"][0])
    assert score(checks) == INTACT


@pytest.mark.parametrize("perturb", [None, ulp], ids=["exact", "one_ulp"])
def test_a_better_trial_copied_under_another_key_never_raises_the_score(sample, perturb):
    """The measured attack: beams2d-full-ex0 (0.9295) copied over natural-ex0 (0.7983; same
    example, another style).  Before: SCORE 0.8111 -> 0.8220 (the exact copy REVIEWed but
    counted, the ulp copy not flagged).  Now the copy counts 0.0 until cleared: 0.7446."""
    copy_trial(sample, FULL0, NAT0, perturb)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert d.status is G.Status.REVIEW and d.measured == FULL0
    assert ("identical to" if perturb is None else "within") in d.message
    assert trials[NAT0].score == 0.0
    assert trials[NAT0].terms["overall_if_cleared"] == pytest.approx(trials[FULL0].score)
    assert trials[FULL0].score == pytest.approx(0.9295, abs=1e-4)
    assert score(checks) == pytest.approx(0.7446, abs=1e-4) and score(checks) < INTACT


def test_a_copy_with_calls_added_is_a_copy(sample):
    """Attack: the copy adds a failed render and a get_problem_details call (tool efficiency
    0.6: the copy scores 0.8495, still above the 0.7983 it replaces).  The trace is compared as
    the scoring reads it (objectives, exports, outcomes), not by its calls' count."""
    def more_calls(rec, d):
        rec["tool_calls"].insert(1, {"name": "get_problem_details", "args": {}, "result": {}})
        rec["tool_calls"].append({"name": "render_design", "args": {},
                                  "result": {"success": False, "error": "timeout"}})
    copy_trial(sample, FULL0, NAT0, more_calls)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert trials[NAT0].score == 0.0
    assert trials[NAT0].terms["overall_if_cleared"] == pytest.approx(0.8495, abs=1e-4)
    assert score(checks) < INTACT


def test_a_copy_with_its_objectives_moved_is_a_copy(sample):
    """Attack: the copy's simulate_design objectives moved by 0.2% (objective_match barely
    moves).  Before this rule the copy was another trial: SCORE 0.8220.  The objectives are the
    simulation of the design: compared through the design."""
    def moved(rec, d):
        for c in rec["tool_calls"]:
            for k, v in (c["result"].get("objectives") or {}).items():
                c["result"]["objectives"][k] = v * 1.002
    copy_trial(sample, FULL0, NAT0, moved)
    checks, trials, _ = grade(sample)
    assert by_id(checks, f"trial.{NAT0}.duplicate") and trials[NAT0].score == 0.0
    assert score(checks) == pytest.approx(0.7446, abs=1e-4)


def test_a_copy_with_noise_below_the_threshold_is_a_copy(sample):
    """Attack: the copied design moved by up to 0.3 toward 0.5 (it binarises the same; its mean
    moves 2e-4), far past the ulp: the binarised design and its mean are what is scored."""
    def noisy(rec, d):
        with h5py.File(d / "arrays.h5", "r+") as f:
            x = f["design"][()].astype(np.float64)
            rng = np.random.default_rng(3)
            step = rng.uniform(0.0, 0.3, x.shape) * np.where(x > 0.5, -1.0, 1.0)
            f["design"][...] = (x + step * (rng.uniform(size=x.shape) < 0.002)).astype(np.float32)
    copy_trial(sample, FULL0, NAT0, noisy)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert "within" in d.message and trials[NAT0].score == 0.0
    assert score(checks) < INTACT


def test_the_member_adding_least_keeps_its_score_whichever_folder_is_the_copy(sample):
    """Attack the other way round: natural-ex0 (0.7983, alone in its cell) copied over full-ex0
    (a cell of two).  The copy scores 0.7983 there but adds half as much; it keeps its score and
    the original counts 0: the SCORE falls, never rises, whichever folder holds the copy."""
    copy_trial(sample, NAT0, FULL0)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert d.measured == FULL0 and trials[NAT0].score == 0.0
    assert trials[FULL0].score == pytest.approx(0.7983, abs=1e-4)
    assert score(checks) < INTACT


def test_a_rag_copy_with_its_passage_rephrased_and_ids_renamed_is_a_copy(sample):
    """Attack: rag-eval-0 (1.0) over rag-eval-1 (0.0), its query changed and its passage
    rewritten with the same numbers in other words: passages are compared by the numbers they
    state (what the scoring reads of them)."""
    def rephrase(rec, d):
        r = rec["tool_calls"][0]
        r["args"]["query"] = "default volfrac?"
        r["result"]["results"] = ["The default volume fraction for beams2d is 0.35."]
        rec["tool_calls"][1]["result"]["elapsed"] = 1.5
    copy_trial(sample, "rag_beams2d-rag-eval-0", "rag_beams2d-rag-eval-1", rephrase)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, "trial.rag_beams2d-rag-eval-1.duplicate")
    assert trials["rag_beams2d-rag-eval-1"].score == 0.0
    assert score(checks) == INTACT               # the 0.0 it replaced


def test_honest_rag_trials_reading_different_passages_are_not_copies(sample):
    """Honest twin: rag-eval-1 looks the value up too, in another passage ("35 percent"), and
    answers the same 0.35 (both examples expect it): the same score (1.0), other content."""
    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volume fraction"},
                                "result": {"success": True, "results": [
                                    "Beams default to a 35 percent volume fraction."]}}
    edit_record(sample, "rag_beams2d-rag-eval-1", look_up)
    checks, trials, _ = grade(sample)
    assert trials["rag_beams2d-rag-eval-1"].score == trials["rag_beams2d-rag-eval-0"].score == 1.0
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    assert score(checks) > INTACT


def test_an_honest_design_a_few_percent_of_cells_apart_is_not_a_copy(sample):
    """Honest twin at the margin the sample shows: natural-ex0 keeps its own trace but its
    design is full-ex0's with 1% of the cells flipped (the sample's closest distinct honest
    designs differ in 1.9%, full-ex1 vs conditional-ex1): 10x the tolerance, not flagged."""
    d = sample / "trials" / NAT0
    shutil.copy(sample / "trials" / FULL0 / "arrays.h5", d / "arrays.h5")
    shutil.copy(sample / "trials" / FULL0 / "trial.json", d / "full.json")
    full = json.loads((d / "full.json").read_text())
    edit_record(sample, NAT0, lambda r: r.update(tool_calls=full["tool_calls"]))
    with h5py.File(d / "arrays.h5", "r+") as f:
        x = f["design"][()]
        flat = x.reshape(-1)
        idx = np.random.default_rng(5).choice(flat.size, flat.size // 100, replace=False)
        flat[idx] = 1.0 - flat[idx]
        f["design"][...] = x
    checks, trials, _ = grade(sample)
    assert not by_id(checks, f"trial.{NAT0}.duplicate")
    assert trials[NAT0].score > 0.5


def test_the_comparison_cap_fails_closed(sample, monkeypatch):
    """A cap that stops the near-copy comparison is a REVIEW naming the trials left unchecked
    (never a silent pass); past the memory cap, exact copies are still caught.  (Round 5: a
    pair whose scored numbers differ past the tolerance needs no comparison, so the sample run
    alone leaves nothing unchecked; a one-ulp copy stays uncompared.)"""
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)
    copy_trial(sample, FULL0, NAT0, ulp)
    checks, _, _ = grade(sample)
    (u,) = by_id(checks, "run.duplicates_unchecked")
    assert u.status is G.Status.REVIEW and "duplicate_max_ops" in u.message
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1 << 32)
    monkeypatch.setitem(G.SPEC, "duplicate_max_bytes", 1)
    copy_trial(sample, FULL0, NAT0)
    checks, trials, _ = grade(sample)
    (u,) = by_id(checks, "run.duplicates_unchecked")
    assert "exact content only" in u.message
    assert by_id(checks, f"trial.{NAT0}.duplicate") and trials[NAT0].score == 0.0


# ================================================================ 2. the rigid-move cap
def test_rigid_move_cap_holds_the_trial_for_review(sample, monkeypatch):
    """The sample photonics model (honest, 0.577 of the spacing) with the shifted-copy check
    capped away: held (model_quality not credited until cleared), with the reason; under the
    default cap it is not held (test_engiai_sample)."""
    tid = "training_code_photonics2d-t4-func-verbose-seed3"
    monkeypatch.setitem(G.SPEC, "copy_rigid_max_ops", 1)
    checks, trials, _ = grade(sample)
    (c,) = by_id(checks, f"trial.{tid}.sample_copies")
    assert c.status is G.Status.REVIEW and "were not checked" in c.message
    assert trials[tid].terms["model_quality"] == 0.0
    assert trials[tid].terms["model_quality_if_cleared"] == pytest.approx(0.4883, abs=1e-4)


# ================================================================ 3. extra fields in `expected`
DISTRACTOR = "beams2d-workflow-distractor-ex1"


def test_an_extra_unknown_field_in_the_records_expectation_is_info(sample):
    """Honest: a harness that writes a note and the prompt's text into the record's copy (and
    one nested in stl_expected_params): nothing reads them, nothing disagrees: INFO, the
    verdict and SCORE unchanged.  Before: FAIL trial.<id>.key."""
    def add(r):
        r["expected"]["prompt_text"] = "Export at 12 mm; preview at 4 mm."
        r["expected"]["stl_expected_params"]["units"] = "mm"
    edit_record(sample, DISTRACTOR, add)
    checks, _, _ = grade(sample)
    assert not by_id(checks, f"trial.{DISTRACTOR}.key")
    (x,) = by_id(checks, f"trial.{DISTRACTOR}.key_extra")
    assert x.status is G.Status.INFO and x.measured == 2
    assert "expected.prompt_text" in x.message and "expected.stl_expected_params.units" in x.message
    assert G.verdict(checks, strict=False)[:2] == ("PARTIAL", INTACT)


def test_an_extra_field_the_grader_reads_is_a_disagreement(sample):
    """Attack: the record adds a tolerance the harness's expectation leaves at its default
    (a field the grader does read): a disagreement with the key, FAIL, never used."""
    def loosen(r):
        r["expected"]["conditions"]["expected_forcedist"] = 0.2
    edit_record(sample, "rag_beams2d-rag-eval-0", loosen)
    checks, trials, _ = grade(sample)
    (k,) = by_id(checks, "trial.rag_beams2d-rag-eval-0.key")
    assert k.status is G.Status.FAIL and "expected.conditions.expected_forcedist" in k.message
    assert not by_id(checks, "trial.rag_beams2d-rag-eval-0.key_extra")
    assert trials["rag_beams2d-rag-eval-0"].score == 1.0        # scored on the harness's key
