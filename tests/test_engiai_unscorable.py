"""EngiAI UNSCORABLE semantics: None (never 0, never 1) with a reason, propagated to the cell,
which is printed with its count and reasons and never averaged; the run verdict."""
import json
import shutil
import sys

import h5py
import numpy as np
import pytest

from conftest import REPO

from test_engiai_support import ALL_P, ALL_S, B, G, edit_key, edit_record, gold, grade_run, rekey, run  # noqa: F401



def grade(run_dir):
    checks, trials, cells = grade_run(run_dir)
    return checks, trials, {(c["problem"], c["style"]): c for c in cells}




# ---------------------------------------------------------------- aggregation, pure
def T(tid, score, status="scored", reasons=(), cell=("beams2d", "full")):
    return G.Trial(tid, cell[0], cell[1], status, score, {}, list(reasons))


def test_cell_with_a_none_is_never_averaged():
    cells = G.aggregate([T("a", 0.5), T("b", None, "unscorable", ["no baseline"]), T("c", 1.0)])
    (c,) = cells
    assert c["status"] == "unscorable" and c["mean"] is None
    assert c["n"] == 3 and c["n_none"] == 1 and c["reasons"] == ["no baseline"]


def test_scored_cell_mean_and_count():
    (c,) = G.aggregate([T("a", 0.5), T("b", 0.25)])
    assert c["status"] == "scored" and c["mean"] == pytest.approx(0.375) and c["n"] == 2


def test_unsupported_and_invalid_trials():
    cells = G.aggregate([T("a", None, "unsupported", ["tools"], ("thermoelastic2d", "full")),
                         T("b", None, "invalid", ["bad json"], (None, None)),
                         T("c", None, "filtered")])
    assert [(c["problem"], c["status"]) for c in cells] == [("thermoelastic2d", "unsupported")]


def test_invalid_trial_with_a_known_cell_blocks_the_mean():
    (c,) = G.aggregate([T("a", 1.0), T("b", None, "invalid", ["trace garbled"]),
                        T("d", None, "unscorable", ["no baseline"])])
    assert c["status"] == "invalid" and c["mean"] is None and c["n"] == 3 and c["n_none"] == 2
    assert c["reasons"] == ["invalid record b: trace garbled", "no baseline"]


def test_cell_reasons_are_deduplicated_and_all_kept():
    cells = G.aggregate([T("a", None, "unscorable", ["r1"]), T("b", None, "unscorable", ["r2"]),
                         T("c", None, "unscorable", ["r1"])])
    assert cells[0]["reasons"] == ["r1", "r2"] and cells[0]["n_none"] == 3


# ---------------------------------------------------------------- verdict, pure
def cell_record(mean, status="scored"):
    c = {"problem": "p", "style": "s", "n": 1, "n_none": 0 if mean is not None else 1,
         "status": status, "mean": mean, "reasons": []}
    return G.cell_checks([c])[0]


def test_verdict_pass_partial_ungraded_strict():
    ok1, ok2 = cell_record(1.0), cell_record(0.5)
    none = cell_record(None, "unscorable")
    assert G.verdict([ok1, ok2], strict=False) == ("PASS", 0.75)
    assert G.verdict([ok1, ok2, none], strict=False) == ("PARTIAL", 0.75)   # None cell left out
    assert G.verdict([ok1, ok2, none], strict=True) == ("FAIL", 0.0)
    assert G.verdict([none], strict=False) == ("UNGRADED", None)
    assert G.verdict([none], strict=True) == ("FAIL", 0.0)
    bad_artefact = G.Check("trial.x.design", G.Status.FAIL, "missing")
    assert G.verdict([ok1, bad_artefact], strict=False) == ("PARTIAL", 1.0)
    info = G.Check("trial.x.claims", G.Status.INFO, "claims disagree")
    assert G.verdict([ok1, info], strict=True) == ("PASS", 1.0)       # a claim is only reported


def test_a_score_just_below_full_never_rounds_to_full():
    """Regression: a cell mean of 0.99999 (e.g. a volume fraction 1e-7 off) printed SCORE 1.0
    and exited 0, the code for a full score."""
    assert G.verdict([cell_record(0.99999)], strict=False) == ("PASS", 0.9999)
    assert G.verdict([cell_record(1.0 - 1e-12)], strict=False) == ("PASS", 1.0)   # round-off
    assert G.verdict([cell_record(0.99994)], strict=False) == ("PASS", 0.9999)


# ---------------------------------------------------------------- training code: no baseline
def test_no_baseline_is_none_with_reason_then_rescorable(run):
    rekey(run, "code", seed=9)          # the harness ran seed 9 and holds no baseline for it
    edit_record(run, "code", lambda r: r.update(claimed_scores={"model_quality": 1.0}))
    checks, trials, cells = grade(run)
    t = trials["code"]
    assert t.status == "unscorable" and t.score is None
    assert t.terms["model_quality"] is None and t.terms["overall"] is None
    assert "no baseline for (cgan_cnn_2d, seed 9)" in t.terms["model_quality_unscorable_reason"]
    assert t.terms["syntax"] == 1.0                     # the other terms are still recomputed
    assert t.claims["model_quality"]["agree"] is False
    c = cells[("training_code_beams2d", "t6v2-verbose")]
    assert c["status"] == "unscorable" and c["mean"] is None
    assert [x.status for x in checks if x.id == "cell.training_code_beams2d/t6v2-verbose"] == [G.Status.REVIEW]
    # a baseline for seed 9 appears: the same trial becomes scorable without touching it
    with h5py.File(run / "reference.h5", "a") as fh:
        fh.copy("baselines/training_code_beams2d/cgan_cnn_2d/seed5",
                "baselines/training_code_beams2d/cgan_cnn_2d/seed9")
    _, trials, cells = grade(run)
    assert trials["code"].status == "scored" and trials["code"].score == 1.0


def test_samples_declared_null_is_unscorable_not_zero(run):
    edit_record(run, "code", lambda r: r["artefacts"].update(samples=None))
    _, trials, _ = grade(run)
    assert trials["code"].score is None
    assert "produced no samples" in trials["code"].terms["model_quality_unscorable_reason"]


def test_baseline_without_sigma_is_unscorable(run):
    with h5py.File(run / "reference.h5", "a") as fh:
        del fh["baselines/training_code_beams2d/cgan_cnn_2d/seed5"].attrs["sigma"]
    _, trials, _ = grade(run)
    assert trials["code"].score is None and "sigma" in trials["code"].reasons[0]


def test_baseline_identical_to_reference_is_unscorable(run):
    with h5py.File(run / "reference.h5", "a") as fh:
        g = fh["baselines/training_code_beams2d/cgan_cnn_2d/seed5"]
        g["baseline_samples"][...] = g["reference_designs"][...]
    _, trials, _ = grade(run)
    assert trials["code"].score is None and "not positive" in trials["code"].reasons[0]


def test_model_quality_hand_computed_and_recorded_baseline_compared(run):
    """Reference {zeros}, baseline {20 ones}, agent {40 ones}, sigma 10:
    MMD = 2 - 2 exp(-k / 200); model_quality = (1 - e^-0.1) / (1 - e^-0.2)."""
    ref = np.zeros((1, 50, 100))
    base = ref.copy()
    base[0, 0, :20] = 1
    agent = ref.copy()
    agent[0, 1, :40] = 1
    B.write_reference(str(run), {}, {("training_code_beams2d", "cgan_cnn_2d", 5): (ref, base, 10.0)},
                      recorded_mmd=False, prompts=B.read_prompts(run))
    with h5py.File(run / "reference.h5", "a") as fh:
        fh["baselines/training_code_beams2d/cgan_cnn_2d/seed5"].attrs["baseline_mmd"] = 0.5
    B.h5_write(str(run / "trials" / "code" / "arrays.h5"), {"samples": agent})
    checks, trials, _ = grade(run)
    t = trials["code"]
    mq = (1 - np.exp(-0.1)) / (1 - np.exp(-0.2))
    assert t.terms["baseline_mmd"] == pytest.approx(2 - 2 * np.exp(-0.1))
    assert t.terms["model_quality"] == pytest.approx(mq)
    assert t.score == pytest.approx(0.55 * mq + 0.45)
    note = [c for c in checks if c.id.startswith("baseline.")]
    assert note and "recorded baseline_mmd 0.5" in note[0].message


# ---------------------------------------------------------------- other harness gaps
def test_missing_expectation_is_unscorable(run):
    edit_key(run, "beams2d-workflow-random", lambda e: e.update(expected={}))
    _, trials, cells = grade(run)
    t = trials["beams2d-workflow-random"]
    assert t.status == "unscorable" and "stl_expected_params missing" in t.reasons[0]
    assert cells[("beams2d", "workflow-random")]["status"] == "unscorable"


def test_missing_ground_truth_example_is_unscorable(run):
    rekey(run, "beams2d-full", example_id=42)     # the harness ran it: a harness gap
    _, trials, _ = grade(run)
    assert trials["beams2d-full"].score is None
    assert "no ground truth for beams2d example 42" in trials["beams2d-full"].reasons[0]


def test_thermoelastic_trial_unsupported_whatever_it_holds(run):
    """Even a trial dressed as perfect is reported unsupported: the agent's tools cannot run it."""
    rekey(run, "beams2d-full", problem="thermoelastic2d")
    edit_record(run, "beams2d-full", lambda r: r.update(claimed_scores={"overall": 1.0}))
    checks, trials, cells = grade(run)
    t = trials["beams2d-full"]
    assert t.status == "unsupported" and t.score is None
    assert "agent's tools do not support it" in t.reasons[0]
    c = cells[("thermoelastic2d", "full")]
    assert c["status"] == "unsupported" and c["mean"] is None
    assert G.verdict(checks, strict=False)[0] == "PARTIAL"


@pytest.mark.parametrize("drop", ["seed", "epochs"])
def test_hpc_expectation_without_seed_or_epochs_is_unscorable(run, drop):
    """A harness gap (the prompt's training config lacks a field) is None, not a 0 for the
    agent's config term."""
    edit_key(run, "hpc", lambda e: e["expected"]["training_config"].pop(drop))
    _, trials, cells = grade(run)
    t = trials["hpc"]
    assert t.status == "unscorable" and t.score is None and f"training_config.{drop}" in t.reasons[0]
    assert cells[("hpc_train_photonics2d", "hpc-train-diff")]["status"] == "unscorable"
