"""EngiAI end to end: the bundled sample run's aggregated table (as users run the grader), its
deterministic rebuild, the gold run scoring 1.0, the CLI options, the grader copied alone."""
import filecmp
import json
import math
import shutil
import sys

import h5py
import numpy as np
import pytest

from conftest import REPO, run_grader, verdict_lines

sys.path.insert(0, str(REPO / "reference" / "engiai"))
import build_engiai_run as B  # noqa: E402

GRADER = REPO / "grade_engiai.py"
SAMPLE = REPO / "reference" / "engiai" / "sample_run"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("engiai_sample")
    rc, out, err, doc = run_grader(GRADER, SAMPLE, "--json", tmp / "r.json", "--out", tmp / "out")
    return {"rc": rc, "out": out, "err": err, "doc": doc, "tmp": tmp,
            "cells": {(c["problem"], c["style"]): c for c in doc["cells"]},
            "trials": {t["trial_id"]: t for t in doc["trials"]}}


def test_sample_rebuild_is_byte_identical(tmp_path):
    B.build(str(tmp_path / "run"))
    cmp = filecmp.dircmp(tmp_path / "run", SAMPLE)

    def same(c):
        assert not c.left_only and not c.right_only and not c.diff_files and not c.funny_files
        for _, sub in c.subdirs.items():
            same(sub)
    same(cmp)
    for p in (tmp_path / "run").rglob("*"):
        if p.is_file():
            assert p.read_bytes() == (SAMPLE / p.relative_to(tmp_path / "run")).read_bytes(), p


def test_sample_verdict(graded):
    assert graded["rc"] == 1
    assert "Traceback" not in graded["err"]
    keys = verdict_lines(graded["out"])
    assert keys["RESULT"] == "PARTIAL"
    assert keys["trials"] == "17" and keys["trials_unscorable"] == "1"
    assert keys["trials_unsupported"] == "1" and keys["trials_invalid"] == "0"
    assert keys["cells"] == "14" and keys["cells_scored"] == "12"
    scored = [c["mean"] for c in graded["doc"]["cells"] if c["status"] == "scored"]
    assert len(scored) == 12
    assert float(keys["SCORE"]) == pytest.approx(sum(scored) / 12, abs=5e-5)
    assert graded["doc"]["score"] == float(keys["SCORE"])


def test_sample_table_unscorable_and_unsupported_cells(graded):
    c = graded["cells"][("training_code_beams2d", "t2-terse")]
    assert c["status"] == "unscorable" and c["mean"] is None and c["n"] == 2 and c["n_none"] == 1
    assert c["reasons"] == ["no baseline for (cgan_cnn_2d, seed 7) of training_code_beams2d"]
    t = graded["cells"][("thermoelastic2d", "full")]
    assert t["status"] == "unsupported" and t["n"] == 1
    table = [line for line in graded["out"].splitlines() if line.startswith("  training_code_beams2d")]
    assert table and "UNSCORABLE (1 of 2 None: no baseline" in table[0] and " - " in table[0]
    assert "REVIEW_REQUIRED: cell.thermoelastic2d/full UNSUPPORTED n=1" in graded["out"]


def test_sample_cells_hand_computed(graded):
    cells = graded["cells"]
    assert cells[("rag_beams2d", "rag-eval")]["mean"] == pytest.approx((1.0 + 0.0) / 2)
    assert cells[("hpc_train_beams2d", "hpc-train-cgan")]["mean"] == pytest.approx(1.0)
    # generate (epochs wrong) + submit + monitor x2 (RUNNING, TIMEOUT: never COMPLETED), no
    # evaluate: w_step 0.85, steps 2/4 (issue 24: outcomes, not calls; 3/4 before, 0.7100)
    assert cells[("hpc_train_photonics2d", "hpc-train-natural-diff")]["mean"] == pytest.approx(
        0.8 * 0.85 * 0.5 + 0.2 * 1.0)
    # workflow-random: design = ground truth (soft values), compliance 84 vs 80, all else perfect
    with h5py.File(SAMPLE / "trials" / "beams2d-workflow-random-ex0" / "arrays.h5") as fh:
        design_mean = float(np.mean(fh["design"][()]))
    with h5py.File(SAMPLE / "reference.h5") as fh:
        vf = float(fh["ground_truth/beams2d/0"].attrs["volfrac"])
    dq = 0.31 + 0.19 + 0.15 * 0.75 + 0.12 * math.exp(-abs(design_mean - vf) / 0.01) + 0.12 + 0.11
    assert cells[("beams2d", "workflow-random")]["mean"] == pytest.approx(0.65 * dq + 0.35)
    # multi-export: the same design, one of the two STL files leaky
    assert cells[("beams2d", "workflow-multi-export")]["mean"] == pytest.approx(
        0.65 * (dq - 0.11 * 0.5) + 0.35)
    # natural: render failed -> task completion 0
    assert cells[("beams2d", "natural")]["mean"] == pytest.approx(0.65 * dq + 0.20)


def test_sample_training_code_mmd_independent(graded):
    with h5py.File(SAMPLE / "reference.h5") as fh:
        g = fh["baselines/training_code_photonics2d/diffusion_2d_cond/seed3"]
        ref, bsm, sigma = g["reference_designs"][()], g["baseline_samples"][()], g.attrs["sigma"]
    with h5py.File(SAMPLE / "trials" / "training_code_photonics2d-t4-func-verbose-seed3" / "arrays.h5") as fh:
        agent = fh["samples"][()]
    mq = min(1.0, B.mmd_independent(bsm, ref, sigma) / B.mmd_independent(agent, ref, sigma))
    assert 0 < mq < 1
    # dryrun failed: 0.55 mq + 0.15 code + 0.10 job + 0 dryrun + 0.05 syntax + 0.05 slurm
    assert graded["cells"][("training_code_photonics2d", "t4-func-verbose")]["mean"] == \
        pytest.approx(0.55 * mq + 0.35, rel=1e-9)


def test_sample_distractor_took_the_preview(graded):
    doc = graded["doc"]
    d = [c for c in doc["checks"] if c["id"] == "trial.beams2d-workflow-distractor-ex1.distractor"][0]
    assert d["measured"]["took"] == "preview" and "PREVIEW" in d["message"]
    t = graded["trials"]["beams2d-workflow-distractor-ex1"]
    assert t["terms"]["task_completion"] == 0.0
    assert t["claims"]["task_completion"] == {"claimed": 1.0, "recomputed": 0.0, "agree": False}


def test_sample_leaky_stl_and_public_watertight_claim(graded):
    out = graded["out"]
    assert "export_b.stl: not watertight: 3 boundary edges" in out
    t = graded["trials"]["beams2d-full-ex0"]
    assert t["terms"]["watertightness"] == 1.0 and t["claims"]["watertightness"]["agree"] is False


def test_out_dir(graded):
    out = graded["tmp"] / "out"
    trials = json.loads((out / "trials.json").read_text())
    assert len(trials) == 17
    rows = (out / "cells.tsv").read_text().splitlines()
    assert rows[0].startswith("problem\tstyle\tn\tmean") and len(rows) == 15


def test_out_inside_the_run_refused(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE, run)
    rc, out, err, _ = run_grader(GRADER, run, "--out", run / "rescored")
    assert rc == 2 and "must not be inside RUN_DIR" in err
    assert not (run / "rescored").exists()
    rc, out, err, _ = run_grader(GRADER, run, "--json", run / "trials" / "report.json")
    assert rc == 2 and "--json must not be inside RUN_DIR" in err
    assert not (run / "trials" / "report.json").exists()


def test_strict_and_no_exec(tmp_path):
    rc, out, _, _ = run_grader(GRADER, SAMPLE, "--strict", "--quiet")
    assert rc == 1 and verdict_lines(out)["RESULT"] == "FAIL" and verdict_lines(out)["SCORE"] == "0.0"
    assert "INFO" not in out                                  # --quiet: FAIL/REVIEW records only
    rc2, out2, _, _ = run_grader(GRADER, SAMPLE, "--no-exec", "--quiet")
    assert rc2 == 1 and verdict_lines(out2)["RESULT"] == "PARTIAL"   # grading unchanged


def test_problem_filter(graded):
    rc, out, _, _ = run_grader(GRADER, SAMPLE, "--problem", "rag_beams2d")
    keys = verdict_lines(out)
    assert keys["trials"] == "2" and keys["RESULT"] == "SUBSET" and "SCORE" not in keys and rc == 1
    assert keys["subset_result"] == "PASS" and keys["subset_score"] == "0.5000"     # issue 26
    assert "SKIP  run.filter" in out


def test_gold_scores_one_end_to_end(tmp_path):
    B.build_gold(str(tmp_path / "gold"))
    rc, out, err, doc = run_grader(GRADER, tmp_path / "gold", "--json", tmp_path / "g.json")
    keys = verdict_lines(out)
    assert rc == 0 and keys["RESULT"] == "PASS" and keys["SCORE"] == "1.0", out
    assert doc["score"] == 1.0 and not doc["review"]


def test_grader_copied_alone_grades_the_sample(tmp_path, graded):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(GRADER, alone / "grade.py")
    rc, out, err, _ = run_grader(alone / "grade.py", SAMPLE, cwd=alone)
    assert rc == 1 and "Traceback" not in err
    assert verdict_lines(out)["SCORE"] == verdict_lines(graded["out"])["SCORE"]
    rc, out, _, _ = run_grader(alone / "grade.py", "--help", cwd=alone)
    assert rc == 0 and "RUN_DIR" in out and "--no-exec" in out and "exit codes" in out
