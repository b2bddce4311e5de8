"""Shared EngiAI test helpers (no tests here): the grader and the run builder as
modules, a gold run built once per module, a private copy of it per test."""
import json
import shutil
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "reference" / "engiai"))
import grade_engiai as G  # noqa: E402
import build_engiai_run as B  # noqa: E402

ALL_P, ALL_S = set(G.list_problems()), set(G.list_styles())


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    root = tmp_path_factory.mktemp("engiai_gold") / "run"
    B.build_gold(str(root))
    return root


@pytest.fixture
def run(gold, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(gold, dst)
    return dst


def grade_run(run_dir):
    """(checks, {trial_id: trial}, cells) of a run graded in-process."""
    report = G.grade(str(run_dir), ALL_P, ALL_S)
    trials, cells = report.figures_data["trials"], report.figures_data["cells"]
    return report.checks, {t.trial_id: t for t in trials}, cells


def rec_path(run_dir, tid):
    return run_dir / "trials" / tid / "trial.json"


def edit_record(run_dir, tid, fn):
    """Apply fn to a trial's parsed record and write it back."""
    p = rec_path(run_dir, tid)
    rec = json.loads(p.read_text())
    fn(rec)
    p.write_text(json.dumps(rec))


def edit_key(run_dir, tid, fn):
    """Apply fn to the harness manifest entry (reference.h5) of a trial's key: what the trial
    is scored against is the harness's, never the record's (issue 24)."""
    rec = json.loads(rec_path(run_dir, tid).read_text())
    prompts = B.read_prompts(run_dir)
    key = (rec["problem"], rec["prompt_style"], rec.get("example_id"), rec.get("seed"))
    (i,) = [i for i, e in enumerate(prompts)
            if (e["problem"], e["prompt_style"], e["example_id"], e["seed"]) == key]
    fn(prompts[i])
    B.write_prompts(run_dir, prompts)


def rekey(run_dir, tid, **fields):
    """The harness ran this trial under other key fields: its manifest entry and its record
    both change."""
    edit_key(run_dir, tid, lambda e: e.update(fields))
    edit_record(run_dir, tid, lambda r: r.update(fields))
