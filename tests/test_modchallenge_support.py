"""Shared helpers for the modchallenge tests (no tests of its own).

Expensive things are computed once per pytest process: the grader module, the public-seed
test set (1100 problems) and a 110-problem public-seed set written to a temp folder, which
the subprocess runs grade against with --test-set (the primes are shared, so the second
generation is nearly free)."""
import atexit
import functools
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from conftest import REFERENCE, REPO, run_grader, shared_once

GRADER = REPO / "grade_modchallenge.py"
SUBS = REFERENCE / "modchallenge" / "submissions"
PUBLIC_DIR = ("data", "modchallenge", "public_benchmark")


@functools.lru_cache(None)
def grader():
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module("grade_modchallenge")


@functools.lru_cache(None)
def public_set(total=1100):
    """The public seed's set (4 s on two cores): once per test run, shared by the xdist workers."""
    g = grader()
    return shared_once(f"modchallenge-public-set-{total}",
                       lambda: g.generate_test_set(g.SPEC["public_seed"], total, jobs=2))


@functools.lru_cache(None)
def small_test_dir() -> str:
    """The public seed's 110-problem set (10 per tier), written once."""
    public_set(1100)                      # computes (and memoises) every prime once
    g = grader()
    d = tempfile.mkdtemp(prefix="mc-tests-")
    atexit.register(shutil.rmtree, d, True)
    g.write_test_set(public_set(110), d)
    return d


def grade(sub, tmp_path, *args, test_set=True, name="report.json"):
    """Run the grader as a user does; returns (rc, stdout, stderr, json doc, checks by id)."""
    report = Path(tmp_path) / name
    extra = ["--test-set", small_test_dir()] if test_set else []
    rc, out, err, doc = run_grader(GRADER, sub, *extra, *args, "--json", report, timeout=300)
    checks = {c["id"]: c for c in doc["checks"]} if doc else {}
    return rc, out, err, doc, checks


def make_submission(root: Path, model_py: str, *, manifest=None, extra=None) -> Path:
    """A submission folder: model.py + manifest.json (+ extra files)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "model.py").write_text(model_py)
    m = {"entry_class": "model.M", "output_base": 10, "model_description": "test model",
         "training_description": "none"}
    if manifest is not None:
        m = manifest
    if m is not ...:
        (root / "manifest.json").write_text(m if isinstance(m, str) else json.dumps(m))
    for rel, text in (extra or {}).items():
        (root / rel).write_text(text)
    return root


HEADER = "from modchallenge.interface.base_model import ModularMultiplicationModel\n\n"


def model_source(methods: str) -> str:
    """model.py with class M(ModularMultiplicationModel): `methods` (indented by 4) replace the
    default load (no-op) and predict_digits (returns [0])."""
    defaults = {"def load": "    def load(self, model_dir):\n        pass\n",
                "def predict_digits(": "    def predict_digits(self, a, b, p):\n        return [0]\n"}
    body = "".join(v for k, v in defaults.items() if k not in methods) + methods
    return HEADER + "import os, sys, time\n\n\nclass M(ModularMultiplicationModel):\n" + body


def gate_statuses(checks: dict) -> dict:
    return {cid: c["status"] for cid, c in checks.items() if cid.startswith("g")}


def tier_accuracy(checks: dict, prefix="") -> dict:
    return {int(cid.rsplit(".", 1)[1]): c["measured"] for cid, c in checks.items()
            if cid.startswith(prefix + "tier.")}


@functools.lru_cache(None)
def zero_baseline_checks() -> dict:
    """The always-zero baseline graded once on the 110-problem set: its checks by id."""
    d = tempfile.mkdtemp(prefix="mc-zero-")
    atexit.register(shutil.rmtree, d, True)
    return grade(SUBS / "zero_baseline", d)[4]
