"""EngiAI bad input: missing files, wrong shapes, NaNs, unknown tools, malformed STL and records,
claimed scores that disagree.  Each gives a clean record with its reason, never a traceback."""
import json
import os
import shutil
import sys

import h5py
import numpy as np
import pytest

from conftest import REPO, run_grader

from test_engiai_support import ALL_P, ALL_S, B, G, edit_record, gold, rec_path, run  # noqa: F401
from test_engiai_support import grade_run as grade






def by_id(checks, cid):
    return [c for c in checks if c.id == cid]


def overall_without_design(watertight=0.0):
    """Hand formula: no usable design -> IoU, pixel, objective, constraint, connectivity 0, and
    watertightness 0 (issue 16: an STL is credited only as the design's closed solid, and there
    is no design to witness it against)."""
    return 0.65 * 0.11 * watertight + 0.20 * 1.0 + 0.15 * 1.0


# ---------------------------------------------------------------- design artefacts
def test_missing_design_file(run):
    os.remove(run / "trials" / "beams2d-full" / "arrays.h5")
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "arrays.h5 missing" in c.message
    assert trials["beams2d-full"].score == pytest.approx(overall_without_design())


def test_wrong_design_shape(run):
    B.h5_write(str(run / "trials" / "beams2d-full" / "arrays.h5"), {"design": np.ones((49, 100))})
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "(49, 100)" in c.message and "(50, 100)" in c.message
    assert trials["beams2d-full"].terms["iou"] == 0.0


def test_nan_in_design_reports_the_first_position(run):
    d = B.beam().astype(np.float64)
    d[3, 7] = np.nan
    d[10, 2] = np.inf
    B.h5_write(str(run / "trials" / "beams2d-full" / "arrays.h5"), {"design": d})
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "2 non-finite" in c.message and "(3, 7)" in c.message
    assert trials["beams2d-full"].score == pytest.approx(overall_without_design())


def test_string_dataset_refused(run):
    with h5py.File(run / "trials" / "beams2d-full" / "arrays.h5", "w") as fh:
        fh.create_dataset("design", data=np.array([b"x"] * 3))
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "dtype" in c.message


def test_arrays_file_not_hdf5(run):
    (run / "trials" / "beams2d-full" / "arrays.h5").write_bytes(b"PK\x03\x04 not hdf5")
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "unreadable" in c.message


def test_design_declared_null_is_info_and_zero(run):
    edit_record(run, "beams2d-full", lambda r: r["artefacts"].update(design=None))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.INFO
    assert trials["beams2d-full"].score == pytest.approx(overall_without_design())


# ---------------------------------------------------------------- STL
def test_malformed_stl_scores_zero_watertightness(run):
    (run / "trials" / "beams2d-full" / "design.stl").write_bytes(b"solid x\nfacet oops\n")
    checks, trials, _ = grade(run)
    fails = [c for c in by_id(checks, "trial.beams2d-full.stl") if c.status is G.Status.FAIL]
    assert fails and "malformed ASCII STL" in fails[0].message
    t = trials["beams2d-full"]
    assert t.terms["watertightness"] == 0.0
    assert t.score == pytest.approx(1.0 - 0.65 * 0.11)


def test_export_reported_successful_but_file_missing(run):
    os.remove(run / "trials" / "beams2d-workflow-random" / "e.stl")
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-workflow-random.export")
    assert c.status is G.Status.FAIL and "not counted" in c.message
    t = trials["beams2d-workflow-random"]
    assert t.terms["task_completion"] == 0.0 and t.terms["watertightness"] == 0.0


def test_artefact_name_escaping_the_trial_folder(run):
    edit_record(run, "beams2d-full", lambda r: r["artefacts"].update(stl=["../rag/trial.json"]))
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.stl")
    assert c.status is G.Status.FAIL and "not a plain file name" in c.message


def test_symlinked_artefact_refused(run):
    d = run / "trials" / "beams2d-full"
    os.remove(d / "design.stl")
    os.symlink(run / "trials" / "beams2d-workflow-random" / "e.stl", d / "design.stl")
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.stl")
    assert c.status is G.Status.FAIL and "symlink" in c.message


# ---------------------------------------------------------------- trace
def test_unknown_tool_flagged_and_counted(run):
    edit_record(run, "beams2d-full", lambda r: r["tool_calls"].append(
        {"name": "rm_rf_slash", "args": {}, "result": {"success": True}}))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.unknown_tools")
    assert c.status is G.Status.REVIEW and "rm_rf_slash" in c.message
    t = trials["beams2d-full"]
    assert t.terms["tool_efficiency"] == pytest.approx(3 / 4)
    assert t.score == pytest.approx(0.65 + 0.20 * 0.75 + 0.15)


@pytest.mark.parametrize("calls,needle", [
    ({"name": "x"}, "tool_calls must be a list"),
    ([{"args": {}}], "string name"),
    ([{"name": "optimize_design", "args": [1]}], "args must be an object"),
    ([{"name": "optimize_design", "args": {}, "result": "ok"}], "result must be an object"),
])
def test_malformed_trace_invalidates_the_trial(run, calls, needle):
    edit_record(run, "beams2d-full", lambda r: r.update(tool_calls=calls))
    checks, trials, cells = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.trace")
    assert c.status is G.Status.FAIL and needle in c.message
    assert trials["beams2d-full"].status == "invalid"
    # the cell is known, so the invalid trial stays in it as a None: never averaged
    (cell,) = [x for x in cells if (x["problem"], x["style"]) == ("beams2d", "full")]
    assert cell["status"] == "invalid" and cell["mean"] is None and cell["n_none"] == 1
    assert cell["reasons"][0].startswith("invalid record beams2d-full: ")


def test_a_broken_trial_cannot_be_dropped_to_raise_its_cell_mean(run):
    """Regression: an invalid trial with a readable problem and style used to vanish from its
    cell, so corrupting the record of a bad trial raised the cell's mean."""
    shutil.copytree(run / "trials" / "beams2d-full", run / "trials" / "beams2d-full-bad")
    prompts = B.read_prompts(run)       # the harness ran a second beams2d/full trial (seed 99)
    prompts.append(dict([e for e in prompts if e["prompt_style"] == "full"][0], seed=99))
    B.write_prompts(run, prompts)
    edit_record(run, "beams2d-full-bad", lambda r: r.update(trial_id="beams2d-full-bad", seed=99,
                                                            tool_calls="garbled"))
    checks, trials, cells = grade(run)
    assert trials["beams2d-full-bad"].status == "invalid"
    (cell,) = [x for x in cells if (x["problem"], x["style"]) == ("beams2d", "full")]
    assert cell["n"] == 2 and cell["status"] == "invalid" and cell["mean"] is None
    assert [c.status for c in checks if c.id == "cell.beams2d/full"] == [G.Status.REVIEW]
    result, score = G.verdict(checks, strict=False)
    assert result == "PARTIAL"
    # a record whose problem is unreadable takes the cell its folder name gives (issue 16)
    # (its key is then claimed by no folder: the missing trial sits in the cell too, issue 24)
    edit_record(run, "beams2d-full-bad", lambda r: r.update(problem=None))
    _, trials, cells = grade(run)
    assert trials["beams2d-full-bad"].status == "invalid"
    (cell,) = [x for x in cells if (x["problem"], x["style"]) == ("beams2d", "full")]
    assert cell["n"] == 3 and cell["status"] == "invalid" and cell["n_expected"] == 2


# ---------------------------------------------------------------- records
@pytest.mark.parametrize("mutate,needle", [
    (lambda p: p.write_text("{not json"), "not valid JSON"),
    (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
    (lambda p: p.write_text(json.dumps({"format": "v0"})), "expected 'engiai-trial/1'"),
    (lambda p: p.unlink(), "trial.json missing"),
])
def test_unreadable_record(run, mutate, needle):
    mutate(rec_path(run, "rag"))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.rag.record")
    assert c.status is G.Status.FAIL and needle in c.message
    assert trials["rag"].status == "invalid"


def test_unregistered_problem_lists_the_valid_ones(run):
    edit_record(run, "rag", lambda r: r.update(problem="beams3d"))
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.rag.record")
    assert "'beams3d' is not registered" in c.message and "training_code_photonics2d" in c.message


def test_style_not_accepted_lists_the_problems_styles(run):
    edit_record(run, "rag", lambda r: r.update(prompt_style="full"))
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.rag.record")
    assert "'full' is not accepted by rag_beams2d" in c.message and "rag-eval" in c.message


def test_weird_folder_name_is_sanitised(run):
    os.rename(run / "trials" / "rag", run / "trials" / "rag bad\nname")
    checks, trials, _ = grade(run)
    assert "rag_bad_name" in trials
    assert all("\n" not in c.id for c in checks)


# ---------------------------------------------------------------- claims
def test_claimed_scores_disagreeing_are_reported_never_used(run):
    edit_record(run, "rag", lambda r: r.update(claimed_scores={"rag_accuracy": 0.25, "overall": "high",
                                                               "vibes": 1.0}))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.rag.claims")
    assert c.status is G.Status.INFO and c.measured == 3
    assert "rag_accuracy claimed 0.25, recomputed 1.0000" in c.message and "vibes" in c.message
    assert trials["rag"].score == 1.0
    assert trials["rag"].claims["rag_accuracy"] == {"claimed": 0.25, "recomputed": 1.0, "agree": False}


def test_claimed_overall_never_replaces_the_recomputed_score(run):
    """A trial whose design is wrong claims a perfect overall: the trial, its cell and the run
    score use the recomputed value; the claim is only reported."""
    B.h5_write(str(run / "trials" / "beams2d-full" / "arrays.h5"),
               {"design": np.zeros((50, 100))})
    edit_record(run, "beams2d-full", lambda r: r.update(claimed_scores={"overall": 1.0, "iou": 1.0}))
    checks, trials, cells = grade(run)
    t = trials["beams2d-full"]
    assert t.score < 0.6 and t.terms["iou"] == 0.0
    assert t.claims["overall"] == {"claimed": 1.0, "recomputed": t.score, "agree": False}
    (cell,) = [c for c in cells if (c["problem"], c["style"]) == ("beams2d", "full")]
    assert cell["mean"] == t.score
    means = [c["mean"] for c in cells]
    assert G.verdict(checks, strict=False)[1] == round(sum(means) / len(means), 4)


def test_claims_that_agree(run):
    edit_record(run, "rag", lambda r: r.update(claimed_scores={"rag_accuracy": 1.0}))
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.rag.claims")
    assert "agree" in c.message and "disagree" not in c.message


def test_optimal_call_count_claim_reported_registry_used(run):
    edit_record(run, "beams2d-full", lambda r: r.update(optimal_call_count=1))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.optimal_calls")
    assert "registry's is 3" in c.message
    assert trials["beams2d-full"].terms["tool_efficiency"] == 1.0


# ---------------------------------------------------------------- training-code samples
@pytest.mark.parametrize("samples,needle", [
    (np.full((4, 50, 100), np.nan), "non-finite"),
    (np.zeros((4, 100, 50)), "expected (n, 50, 100)"),
    (np.zeros((50, 100)), "2 dimensions"),
])
def test_unusable_samples_make_the_trial_unscorable(run, samples, needle):
    B.h5_write(str(run / "trials" / "code" / "arrays.h5"), {"samples": samples})
    checks, trials, cells = grade(run)
    (c,) = by_id(checks, "trial.code.samples")
    assert c.status is G.Status.FAIL and needle in c.message
    t = trials["code"]
    assert t.status == "unscorable" and t.score is None and t.terms["model_quality"] is None
    assert "no usable MMD" in t.terms["model_quality_unscorable_reason"]


def test_record_algorithm_disagreeing_with_the_harness_is_a_finding(run):
    """The algorithm (which picks the baseline) is the harness's; the record's own copy is
    compared with it (issue 24)."""
    edit_record(run, "code", lambda r: r.update(algorithm="gpt_2d"))
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.code.key")
    assert c.status is G.Status.FAIL and "gpt_2d" in c.message and "cgan_cnn_2d" in c.message
    assert trials["code"].status == "scored" and trials["code"].score == pytest.approx(1.0)
    assert G.verdict(checks, strict=False)[0] == "PARTIAL"


def test_syntax_error_scores_zero_syntax_without_running_anything(run, tmp_path):
    marker = tmp_path / "ran"
    (run / "trials" / "code" / "train.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\ndef broken(:\n")
    _, trials, _ = grade(run)
    t = trials["code"]
    assert t.terms["syntax"] == 0.0 and t.score == pytest.approx(1.0 - 0.05)
    assert not marker.exists()


# ---------------------------------------------------------------- run level
def test_missing_reference_file(run):
    """The reference holds the harness's key (issue 24): without it no trial is known; every
    trial is invalid and the run is graded 0.0, never a harness gap left out of the SCORE."""
    os.remove(run / "reference.h5")
    checks, trials, cells = grade(run)
    (h,) = by_id(checks, "run.harness")
    assert h.status is G.Status.FAIL and "reference.h5 missing" in h.message
    assert all(t.status == "invalid" for t in trials.values())
    assert "no harness manifest" in trials["rag"].reasons[0]
    assert G.verdict(checks, strict=False) == ("PARTIAL", 0.0)


def test_rag_and_hpc_only_run_needs_no_ground_truth_or_baseline(run):
    """Honest: a reference.h5 holding only the manifest grades RAG and HPC trials in full."""
    prompts = [e for e in B.read_prompts(run) if e["problem"].startswith(("rag", "hpc"))]
    B.write_reference(str(run), {}, {}, prompts=prompts)
    for tid in ("beams2d-full", "beams2d-workflow-random", "photonics2d-multi", "code"):
        shutil.rmtree(run / "trials" / tid)
    checks, trials, _ = grade(run)
    assert G.verdict(checks, strict=True) == ("PASS", 1.0)


def test_missing_trials_dir_is_ungraded(run):
    shutil.rmtree(run / "trials")
    checks = G.grade(str(run), ALL_P, ALL_S).checks
    assert by_id(checks, "run.trials")[0].status is G.Status.FAIL
    assert G.verdict(checks, strict=False) == ("UNGRADED", None)


def test_everything_broken_at_once_subprocess(run, tmp_path):
    """One run with every malformation: a clean report, exit 1, no traceback, run untouched."""
    (run / "trials" / "beams2d-full" / "design.stl").write_bytes(b"\x00" * 90)
    B.h5_write(str(run / "trials" / "beams2d-workflow-random" / "arrays.h5"),
               {"design": np.full((50, 100), np.nan)})
    edit_record(run, "hpc", lambda r: r["tool_calls"].append({"name": "sudo", "args": {}}))
    rec_path(run, "rag").write_text("\x00\xff")
    B.h5_write(str(run / "trials" / "code" / "arrays.h5"), {"samples": np.zeros((2, 3, 4))})
    edit_record(run, "photonics2d-multi", lambda r: r.update(claimed_scores={"overall": 0.1}))
    before = sorted((p, os.path.getsize(p)) for p in map(str, run.rglob("*")) if os.path.isfile(p))
    rc, out, err, doc = run_grader(REPO / "grade_engiai.py", run, "--json", tmp_path / "r.json")
    assert "Traceback" not in err and "Traceback" not in out
    assert rc == 1
    assert "RESULT: PARTIAL" in out
    ids = {c["id"]: c["status"] for c in doc["checks"]}
    assert ids["trial.beams2d-full.stl"] == "FAIL"
    assert ids["trial.beams2d-workflow-random.design"] == "FAIL"
    assert ids["trial.hpc.unknown_tools"] == "REVIEW"
    assert ids["trial.rag.record"] == "FAIL"
    assert ids["trial.code.samples"] == "FAIL"
    assert ids["cell.training_code_beams2d/t6v2-verbose"] == "REVIEW"
    after = sorted((p, os.path.getsize(p)) for p in map(str, run.rglob("*")) if os.path.isfile(p))
    assert before == after


def test_unhashable_fields_are_clean_records(run):
    edit_record(run, "rag", lambda r: r.update(problem=["rag_beams2d"]))
    edit_record(run, "beams2d-workflow-random",
                lambda r: r["tool_calls"][2]["result"].update(stl_path=["e.stl"]))
    checks, trials, _ = grade(run)
    assert trials["rag"].status == "invalid"
    (c,) = by_id(checks, "trial.beams2d-workflow-random.export")
    assert c.status is G.Status.FAIL
    assert trials["beams2d-workflow-random"].terms["task_completion"] == 0.0


def test_external_link_in_arrays_refused(run, tmp_path):
    other = tmp_path / "elsewhere.h5"
    B.h5_write(str(other), {"design": B.beam().astype(float)})
    with h5py.File(run / "trials" / "beams2d-full" / "arrays.h5", "w") as fh:
        fh["design"] = h5py.ExternalLink(str(other), "design")
    checks, _, _ = grade(run)
    (c,) = by_id(checks, "trial.beams2d-full.design")
    assert c.status is G.Status.FAIL and "ExternalLink (refused)" in c.message


# ---------------------------------------------------------------- values beyond float range
# Regression: these used to escape as OverflowError / TypeError (exit 3, "grader failure").
HUGE = 10 ** 400          # a valid JSON integer that no float can hold


def _hpc_seed(r, v):
    r["tool_calls"][0]["args"]["seed"] = v


@pytest.mark.parametrize("tid,mutate,check", [
    ("beams2d-full", lambda r: r.update(optimal_call_count=HUGE),
     lambda t: t.terms["tool_efficiency"] == 1.0),
    ("rag", lambda r: r.update(claimed_scores={"overall": HUGE}),
     lambda t: t.score == 1.0 and t.claims["overall"]["agree"] is False),
    # the record's copy of the expectation is not used (issue 24): scored on the harness's
    ("hpc", lambda r: r["expected"]["training_config"].update(seed=float("inf")),
     lambda t: t.status == "scored" and t.score == 1.0),
    ("hpc", lambda r: _hpc_seed(r, HUGE), lambda t: t.terms["config_correct"] == 0.0),
    ("hpc", lambda r: _hpc_seed(r, "5"), lambda t: t.terms["config_correct"] == 0.0),
    ("hpc", lambda r: _hpc_seed(r, 5.9), lambda t: t.terms["config_correct"] == 0.0),
    ("hpc", lambda r: _hpc_seed(r, 5.0), lambda t: t.terms["config_correct"] == 1.0),
    ("beams2d-workflow-random", lambda r: r["tool_calls"][2]["result"].update(scale_xy=HUGE),
     lambda t: t.terms["task_completion"] == 0.0),
    ("beams2d-workflow-random", lambda r: r.update(
        prompt_style="workflow-conditional",
        expected={"stl_expected_params": {"compliance_threshold": HUGE, "branch_high": {},
                                          "branch_low": {}, "common": {}}}),
     lambda t: t.status == "invalid" and "not a trial the harness ran" in t.reasons[0]),
    ("photonics2d-multi", lambda r: r["artefacts"].update(stl=[["a.stl"], {}, 3]),
     lambda t: t.terms["watertightness"] == 0.0),
])
def test_out_of_range_and_unhashable_values_are_clean(run, tid, mutate, check):
    edit_record(run, tid, mutate)
    checks, trials, _ = grade(run)
    G.verdict(checks, strict=False)
    assert check(trials[tid]), trials[tid]


@pytest.mark.parametrize("sigma", [1e-200, 1e200])
def test_sigma_whose_kernel_width_is_not_representable_is_unscorable(run, sigma):
    with h5py.File(run / "reference.h5", "a") as fh:
        fh["baselines/training_code_beams2d/cgan_cnn_2d/seed5"].attrs["sigma"] = sigma
    _, trials, _ = grade(run)
    assert trials["code"].score is None and "usable positive sigma" in trials["code"].reasons[0]


# ---------------------------------------------------------------- size caps (sparse files: no disk)
@pytest.mark.parametrize("name,cap,check_id", [
    ("design.stl", "max_stl_bytes", "trial.beams2d-full.stl"),
    ("arrays.h5", "max_h5_bytes", "trial.beams2d-full.design"),
    ("trial.json", "max_json_bytes", "trial.beams2d-full.record"),
])
def test_oversized_files_are_refused_before_reading(run, name, cap, check_id):
    p = run / "trials" / "beams2d-full" / name
    with open(p, "r+b") as fh:
        fh.truncate(G.SPEC[cap] + 1)
    checks, trials, _ = grade(run)
    (c,) = [c for c in checks if c.id == check_id and c.status is G.Status.FAIL]
    assert f"is {G.SPEC[cap] + 1} bytes" in c.message and c.limit == G.SPEC[cap]
