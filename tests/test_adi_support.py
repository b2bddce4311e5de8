"""Shared helpers for the ADI tests (no tests here): building submissions from
the gold with one edit, grading them the way a user does, and caching the
gold's grade for the whole session."""
import functools
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from conftest import REFERENCE, REPO, run_grader, shared_once

GRADER = REPO / "grade_adi.py"
ADI_REF = REFERENCE / "adi"
GOLD = ADI_REF / "gold"


def _load(name, path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def grader():
    return _load("grade_adi", GRADER)


def survey():
    return _load("scheme_survey", ADI_REF / "scheme_survey.py")


@functools.lru_cache(maxsize=None)
def survey_rows() -> dict:
    """The survey's 19 rows (benchmark and hidden columns, hidden fields kept), computed
    once per test run and shared by the survey and hidden-instance tests (across xdist
    workers too: conftest.shared_once)."""
    return shared_once("adi-survey-rows",
                       lambda: {r["label"]: r for r in survey().survey(keep_fields=True)})


def make_gold():
    return _load("adi_make_gold", ADI_REF / "make_gold.py")


def copy_gold(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in ("adi_solver.py", "results.json", "reference_arrays.npz"):
        shutil.copyfile(GOLD / f, dest / f)
    return dest


def read_arrays(sub: Path) -> dict:
    with np.load(sub / "reference_arrays.npz") as z:
        return {k: z[k] for k in z.files}


def write_arrays(sub: Path, arrays: dict) -> None:
    np.savez(sub / "reference_arrays.npz", **arrays)


def read_results(sub: Path) -> dict:
    return json.loads((sub / "results.json").read_text())


def write_results(sub: Path, results) -> None:
    (sub / "results.json").write_text(json.dumps(results))


def submission_from_solver(dest: Path, source: str, tier3: bool = True) -> Path:
    """A consistent submission: the solver's own five-mesh study, written out
    exactly as the gold's writer does (so only the solver is under test)."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "adi_solver.py").write_text(source)
    mg = make_gold()
    errs, finest = mg.study(mg.load_solver(str(dest)))
    mg.write_outputs(str(dest), errs, finest, tier3=tier3)
    return dest


def gold_variant_source(old: str, new: str, count: int = 1) -> str:
    """The gold solver's source with one edit (asserted to apply)."""
    src = (GOLD / "adi_solver.py").read_text()
    assert src.count(old) >= count, old
    return src.replace(old, new)


def grade(sub, *args, tmp=None, timeout=600):
    """Run the grader as a subprocess; returns (rc, stdout, stderr, json doc)."""
    out = Path(tmp or sub) .parent / f"{Path(sub).name}.report.json"
    rc, stdout, stderr, doc = run_grader(GRADER, sub, "--json", out, *args, timeout=timeout)
    return rc, stdout, stderr, doc


def status(doc) -> dict:
    """check id -> status (the worst one when an id repeats)."""
    rank = {"FAIL": 3, "REVIEW": 2, "SKIP": 1, "INFO": 1, "PASS": 0}
    out = {}
    for c in doc["checks"]:
        if c["id"] not in out or rank[c["status"]] > rank[out[c["id"]]]:
            out[c["id"]] = c["status"]
    return out


def failed(doc) -> set:
    return {c["id"] for c in doc["checks"] if c["status"] == "FAIL"}


def reviews(doc) -> list:
    return [c for c in doc["checks"] if c["status"] == "REVIEW"]


def message(doc, cid) -> str:
    return " | ".join(c["message"] for c in doc["checks"] if c["id"] == cid)


@functools.lru_cache(maxsize=None)
def gold_grade(tmp_root: str):
    """Grade the gold ONCE per session, with the grader copied alone into an
    empty directory (the self-contained claim); returns (rc, stdout, stderr, doc)."""
    root = Path(tmp_root)
    alone = root / "alone"
    alone.mkdir()
    shutil.copyfile(GRADER, alone / "grade.py")
    report = root / "gold.json"
    rc, stdout, stderr, doc = run_grader(alone / "grade.py", GOLD, "--json", report, cwd=alone)
    return rc, stdout, stderr, doc


def drive(sub: Path, source: str, jobs=None, timeout: float = 120):
    """The grader's own driver on a few jobs of `source` (no full grading: fast).
    Returns (ready, {tag: job}, violations, outcome)."""
    G = grader()
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "adi_solver.py").write_text(source)
    jobs = jobs or [{"tag": "bench:0", "h": 0.1, "problem": "benchmark"}]
    outcome = G.run_isolated(str(sub), G.DRIVER_BODY, G.driver_request(jobs, 1), timeout)
    return G.decode_jobs(outcome) + (outcome,)
