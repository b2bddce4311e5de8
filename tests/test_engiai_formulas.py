"""EngiAI: each scoring formula on hand-built inputs, with hand-computed expected values."""
import math
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
import grade_engiai as G  # noqa: E402


# ---------------------------------------------------------------- design quality terms
def test_iou_and_pixel_accuracy_binarise_strictly_above_half():
    a = np.array([[0.6, 0.9, 0.5, 0.0]])     # -> 1 1 0 0 (0.5 is not > 0.5)
    b = np.array([[1.0, 0.0, 1.0, 0.2]])     # -> 1 0 1 0
    assert G.iou(a, b) == pytest.approx(1 / 3)          # intersection 1, union 3
    assert G.pixel_accuracy(a, b) == pytest.approx(0.5)  # equal at positions 0 and 3


def test_iou_both_empty_is_one_decided():
    z = np.zeros((3, 4))
    assert G.iou(z, z) == 1.0
    assert G.pixel_accuracy(z, z) == 1.0


def test_connectivity_is_8_connected_single_component():
    diag = np.array([[1.0, 0.0], [0.0, 1.0]])           # one component under 8-connectivity
    assert G.connectivity(diag) == 1.0
    two = np.zeros((5, 5))
    two[0, 0] = two[4, 4] = 1.0
    assert G.connectivity(two) == 0.0
    assert G.connectivity(np.zeros((4, 4))) == 0.0       # no component at all


def test_objective_match_beams_relative_error():
    # |84 - 80| / 80 = 0.05; 1 - 0.05 / 0.2 = 0.75
    s, detail = G.objective_match({"compliance": 84.0}, {"compliance": 80.0}, G._OBJ_BEAMS)
    assert s == pytest.approx(0.75)
    # beyond the threshold: max(0, .)
    assert G.objective_match({"compliance": 200.0}, {"compliance": 80.0}, G._OBJ_BEAMS)[0] == 0.0
    # a missing agent value scores 0
    assert G.objective_match({}, {"compliance": 80.0}, G._OBJ_BEAMS)[0] == 0.0


def test_objective_match_thermoelastic_weights_and_thresholds():
    target = {"structural_compliance": 3.0, "thermal_compliance": 2.0, "volume_fraction": 0.4}
    agent = {"structural_compliance": 3.3,   # rel 0.1 / thr 0.2 -> 0.5
             "thermal_compliance": 2.0,      # exact -> 1
             "volume_fraction": 0.42}        # rel 0.05 / thr 0.1 -> 0.5
    s, _ = G.objective_match(agent, target, G._OBJ_THERMO)
    assert s == pytest.approx((0.4 * 0.5 + 0.4 * 1.0 + 0.2 * 0.5) / 1.0)


def test_objective_match_absolute_error_when_target_zero():
    # |0.05 - 0| = 0.05, 1 - 0.05 / 0.2 = 0.75
    s, _ = G.objective_match({"compliance": 0.05}, {"compliance": 0.0}, G._OBJ_BEAMS)
    assert s == pytest.approx(0.75)


def test_objective_match_missing_target_is_unscorable():
    with pytest.raises(G.Unscorable):
        G.objective_match({"compliance": 1.0}, {}, G._OBJ_BEAMS)


def test_constraint_match_exponential():
    d = np.full((4, 4), 0.5)
    # exp(-|0.5 - 0.49| / 0.01) = exp(-1)
    assert G.constraint_match(d, {"volfrac": 0.49}, (("volfrac", 0.01),)) == pytest.approx(math.exp(-1))
    assert G.constraint_match(d, {}, ()) == 1.0              # no constraint: nothing violated


def test_tool_efficiency():
    calls = [{"name": n} for n in ("a", "b", "c", "d", "e")]
    assert G.tool_efficiency(calls, ("a", "b", "c")) == pytest.approx(3 / 5)
    assert G.tool_efficiency(calls[:2], ("a", "b", "c")) == 1.0   # min(1, 3/2)
    assert G.tool_efficiency([], ("a",)) == 0.0


# ---------------------------------------------------------------- MMD and model quality
def test_mmd_hand_computed_one_dimensional():
    x = np.array([[0.0], [2.0]])
    y = np.array([[1.0]])
    kxx = (1 + 1 + 2 * math.exp(-4 / 2)) / 4          # |0-2|^2 = 4, sigma 1
    kyy = 1.0
    kxy = math.exp(-1 / 2)
    assert G.mmd(x, y, 1.0) == pytest.approx(kxx + kyy - 2 * kxy)


def test_mmd_sigma_matters_and_flattens():
    x = np.zeros((1, 2, 3))
    y = np.zeros((1, 2, 3))
    y[0, 1, 2] = 2.0                                  # squared distance 4
    assert G.mmd(x, y, 10.0) == pytest.approx(2 - 2 * math.exp(-4 / 200))
    assert G.mmd(x, y, 1.0) == pytest.approx(2 - 2 * math.exp(-4 / 2))
    assert G.mmd(x, x, 1.0) == 0.0


def test_model_quality_clip():
    assert G.model_quality(0.2, 0.4) == pytest.approx(0.5)
    assert G.model_quality(0.4, 0.2) == 1.0     # beating the baseline scores 1.0
    assert G.model_quality(0.4, 0.0) == 1.0     # identical to the reference


# ---------------------------------------------------------------- task completion parameters
P = {"scale_xy": 1.0, "scale_z": 12.0, "threshold": 0.5, "mirror_y": False}


def result(**kw):
    base = {"scale_xy": 1.0, "scale_z": 12.0, "threshold": 0.5, "mirrored": False}
    base.update(kw)
    return base


def test_stl_params_tolerance_is_strict_005():
    assert G.validate_stl_params(result(scale_xy=1.049), P)[0]
    assert not G.validate_stl_params(result(scale_xy=1.05), P)[0]
    assert not G.validate_stl_params(result(mirrored=True), P)[0]
    assert not G.validate_stl_params({"scale_xy": 1.0}, P)[0]      # missing params are violations


def test_conditional_branch_from_ground_truth():
    cond = {"stl_expected_params": {
        "conditional": True, "compliance_threshold": 100.0,
        "branch_high": {"threshold": 0.6, "mirror_y": True},
        "branch_low": {"threshold": 0.4, "mirror_y": False},
        "common": {"scale_xy": 2.0, "scale_z": 3.0}}}
    hi = G.expected_params("workflow-conditional", cond, {"compliance": 120.0})
    lo = G.expected_params("workflow-conditional", cond, {"compliance": 100.0})   # not > threshold
    assert hi == [{"threshold": 0.6, "mirror_y": True, "scale_xy": 2.0, "scale_z": 3.0}]
    assert lo[0]["threshold"] == 0.4 and lo[0]["mirror_y"] is False
    with pytest.raises(G.Unscorable):
        G.expected_params("workflow-conditional", cond, {})       # no ground-truth compliance


def export_call(path, **kw):
    return {"name": "convert_design_to_stl", "args": {}, "result": dict(result(**kw), success=True,
                                                                          stl_path=path)}


def reports(*names, z=12.0):
    return {n: {"ok": True, "z_extent": z} for n in names}


def test_multi_export_first_two_in_order():
    a = dict(P)
    b = dict(P, scale_z=3.0, mirror_y=True)
    exp = {"stl_expected_params": {"multi_export": True, "exports": [a, b]}}
    calls = [export_call("a.stl"), export_call("b.stl", scale_z=3.0, mirrored=True)]
    reps = {"a.stl": {"ok": True, "z_extent": 12.0}, "b.stl": {"ok": True, "z_extent": 3.0}}
    assert G.task_completion("workflow-multi-export", calls, exp, {}, reps, "t")[0] == 1.0
    swapped = [calls[1], calls[0]]
    assert G.task_completion("workflow-multi-export", swapped, exp, {}, reps, "t")[0] == 0.0
    assert G.task_completion("workflow-multi-export", calls[:1], exp, {}, reps, "t")[0] == 0.0


def test_export_height_comes_from_the_stl_not_the_tool_result():
    exp = {"stl_expected_params": P}
    calls = [export_call("e.stl")]                    # the result claims scale_z 12
    ok = G.task_completion("workflow-random", calls, exp, {}, reports("e.stl", z=12.0), "t")[0]
    lie = G.task_completion("workflow-random", calls, exp, {}, reports("e.stl", z=4.0), "t")[0]
    assert ok == 1.0 and lie == 0.0


def test_export_without_its_file_is_not_counted():
    score, checks = G.task_completion("workflow-random", [export_call("gone.stl")],
                                      {"stl_expected_params": P}, {}, {}, "t")
    assert score == 0.0
    assert any(c.id == "t.export" or c.id == "trial.t.export" for c in checks)
    assert any(c.status is G.Status.FAIL for c in checks)


@pytest.mark.parametrize("height,took,score", [(12.0, "export", 1.0), (4.0, "preview", 0.0),
                                               (7.0, "neither", 0.0), (12.04, "export", 1.0),
                                               (12.06, "neither", 0.0), (3.96, "preview", 0.0),
                                               (4.06, "neither", 0.0)])
def test_distractor_classification(height, took, score):
    exp = {"stl_expected_params": P,
           "distractor": {"param": "scale_z", "export_value": 12.0, "preview_value": 4.0}}
    s, checks = G.task_completion("workflow-distractor", [export_call("e.stl", scale_z=height)],
                                  exp, {}, reports("e.stl", z=height), "t")
    d = [c for c in checks if c.id.endswith(".distractor")][0]
    assert d.measured["took"] == took
    assert s == score


def test_full_and_natural_need_a_successful_render():
    ok = [{"name": "render_design", "args": {}, "result": {"success": True}}]
    bad = [{"name": "render_design", "args": {}, "result": {"success": "yes"}}]  # not JSON true
    assert G.task_completion("full", ok, None, {}, {}, "t")[0] == 1.0
    assert G.task_completion("natural", bad, None, {}, {}, "t")[0] == 0.0


# ---------------------------------------------------------------- RAG, HPC
def rag_rec(**cond):
    c = {"expected_volfrac": 0.35}
    c.update(cond)
    return {"problem": "rag_beams2d", "expected": {"conditions": c}}


def C(name, args=None, **res):
    return {"name": name, "args": args or {}, "result": res}


def test_rag_accuracy_only_when_the_rag_tool_was_called():
    guess = [C("optimize_design", {"volfrac": 0.35})]
    looked = [C("search_documents", success=True, results=["volfrac 0.35"])] + guess
    assert G.score_rag(rag_rec(), guess, "t")[0]["rag_accuracy"] == 0.0
    assert G.score_rag(rag_rec(), looked, "t")[0]["rag_accuracy"] == pytest.approx(1.0)
    wrong = [C("search_documents", success=True, results=["volfrac 0.35"]),
             C("optimize_design", {"problem_config": {"volume": 0.5}})]
    assert G.score_rag(rag_rec(), wrong, "t")[0]["rag_accuracy"] == pytest.approx(0.40)


def test_rag_two_parameter_mode():
    calls = [C("search_documents", success=True, results=[{"content": "volfrac 0.35, rmin 2"}]),
             C("optimize_design", {"volfrac": 0.36, "rmin": 9.0})]
    terms = G.score_rag(rag_rec(expected_rmin=2.0), calls, "t")[0]
    assert terms["rag_accuracy"] == pytest.approx(0.40 * 1 + 0.40 * 0 + 0.20)


def test_rag_without_expected_volfrac_is_unscorable():
    with pytest.raises(G.Unscorable):
        G.score_rag({"problem": "rag_beams2d", "expected": {}}, [], "t")


def hpc_rec(epochs=50):
    return {"expected": {"training_config": {"seed": 1, "epochs": epochs,
                                             "algorithm": "cgan_cnn_2d", "problem_id": "beams2d"}}}


def test_hpc_full_workflow():
    calls = [C("generate_training_command", {"cfg": {"seed": 1, "epochs": 50, "algorithm": "cgan_cnn_2d",
                                                     "problem_id": "beams2d"}}, success=True),
             C("submit_slurm_job", success=True, job_id="7"),
             C("monitor_job_until_complete", {"job_id": "7"}, success=True, state="COMPLETED"),
             C("evaluate_model", success=True,
               metrics={"IOG": 1, "COG": 1, "FOG": 1, "MMD": 1, "DPP": 1, "viol": 0})]
    terms, _ = G.score_hpc(hpc_rec(), calls, "hpc_train_beams2d", "hpc-train-cgan", "t")
    assert terms["workflow_completion"] == pytest.approx(1.0)
    assert terms["overall"] == pytest.approx(1.0)


def test_hpc_partial_workflow_hand_computed():
    # generate (wrong epochs), submit, monitor x3 (RUNNING, RUNNING, COMPLETED); no evaluate:
    # w_cfg 0.15 (generate succeeded), w_eval 0 -> w_step 0.85; steps 3/4; config 0
    calls = [C("generate_training_command", {"seed": 1, "epochs": 5}, success=True),
             C("submit_slurm_job", success=True, job_id=81),
             C("monitor_job_until_complete", success=True, state="RUNNING"),
             C("monitor_job_until_complete", success=True, state="RUNNING"),
             C("monitor_job_until_complete", {"job_id": "81"}, success=True, state="COMPLETED")]
    terms, _ = G.score_hpc(hpc_rec(), calls, "hpc_train_beams2d", "hpc-train-cgan", "t")
    wc = 0.85 * 0.75
    assert terms["workflow_completion"] == pytest.approx(wc)
    assert terms["tool_efficiency"] == pytest.approx(4 / 5)
    assert terms["overall"] == pytest.approx(0.8 * wc + 0.2 * 0.8)


def test_hpc_style_fixes_the_algorithm():
    calls = [C("generate_training_command", {"seed": 1, "epochs": 50, "algorithm": "cgan_cnn_2d",
                                             "problem_id": "beams2d"}, success=True)]
    # hpc-train-diff asks for diffusion_2d_cond: the cgan config is not correct, and the record
    # claiming cgan contradicts the registry
    terms, checks = G.score_hpc(hpc_rec(), calls, "hpc_train_beams2d", "hpc-train-diff", "t")
    assert terms["config_correct"] == 0.0
    assert any(c.status is G.Status.FAIL and c.id.endswith(".config") for c in checks)
