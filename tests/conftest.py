"""Shared test helpers: paths, and running a grader the way a user does."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "reference"
# ../shared sits beside the checkout (read-only); GRADERS_SHARED overrides it.
SHARED = Path(os.environ.get("GRADERS_SHARED", REPO.parent / "shared")).resolve()


def shared_path(*parts) -> Path:
    """A path under ../shared, or skip the test cleanly when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is optional)")
    return path


def run_grader(script, *args, cwd=None, timeout=900):
    """Run a grader file as a subprocess. Returns (exit code, stdout, stderr, json doc or None).
    Pass --json yourself to get the doc; the helper reads it back."""
    args = [str(a) for a in args]
    proc = subprocess.run([sys.executable, str(script), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    doc = None
    if "--json" in args:
        path = Path(args[args.index("--json") + 1])
        if path.exists():
            doc = json.loads(path.read_text())
    return proc.returncode, proc.stdout, proc.stderr, doc


def verdict_lines(stdout: str) -> dict:
    """The `key: value` lines of a report (RESULT, SCORE, ranking keys)."""
    out = {}
    for line in stdout.splitlines():
        if ": " in line and not line.startswith((" ", "PASS", "FAIL", "INFO", "SKIP", "REVIEW")):
            key, _, value = line.partition(": ")
            out[key.strip()] = value.strip()
    return out


# --dist loadfile hands each worker a whole file, more as it nears the end of its queue, in the
# order collected.  xdist's own order (most tests first) sent the heavy files with few tests (the
# SciCode dev split, FEM's red team) out last, one worker running them alone at the end; so the
# files are collected heaviest first, by their cost in tests/file_costs.txt (seconds, measured),
# and the light ones fill in behind (--no-loadscope-reorder in pyproject keeps this order).
# `pytest --write-file-costs PATH` writes each file's total test time of that run in this format.
FILE_COSTS = Path(__file__).with_name("file_costs.txt")


def pytest_addoption(parser):
    parser.addoption("--write-file-costs", metavar="PATH", default=None,
                     help="write each test file's summed setup+call+teardown time to PATH "
                          "(the format of tests/file_costs.txt)")


def _file_costs() -> dict:
    costs = {}
    for line in FILE_COSTS.read_text().splitlines() if FILE_COSTS.exists() else ():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 2:
            costs[fields[1]] = float(fields[0])
    return costs


def pytest_collection_modifyitems(session, config, items):
    costs = _file_costs()
    # a file not measured yet counts as the median file: not held back to the very end
    unknown = sorted(costs.values())[len(costs) // 2] if costs else 0.0
    items.sort(key=lambda item: -costs.get(item.path.name, unknown))   # a stable sort: in-file order kept


_RUN_COSTS: dict = {}


def pytest_runtest_logreport(report):
    name = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    _RUN_COSTS[name] = _RUN_COSTS.get(name, 0.0) + float(getattr(report, "duration", 0.0) or 0.0)


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--write-file-costs", None)
    if path and not hasattr(session.config, "workerinput"):          # the controller only
        lines = [f"{cost:8.1f}  {name}" for name, cost in sorted(_RUN_COSTS.items(), key=lambda kv: -kv[1])]
        Path(path).write_text("\n".join(lines) + "\n")
