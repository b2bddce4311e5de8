"""Shared test helpers: paths, and running a grader the way a user does."""
import json
import os
import subprocess
import sys
from pathlib import Path

# The tests' own numpy (studies written in the test process, judges called in process) runs with
# one BLAS thread, as every grader's children and the FEM/ADI graders themselves do (their env is
# built afresh, so this pins nothing they would not pin).  With OpenBLAS's default, one spinning
# thread per core under three xdist workers on two cores, one test that writes a dense-solve study
# (tests/test_adi_exploit_dense.py) took 77 s of wall time in a full run, against 9.5 s pinned (24 s with two threads, the same minute, load 3.7).
for _key in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
             "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_key, "1")

import pytest  # noqa: E402

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


_CONFIG: dict = {}


def pytest_configure(config):
    _CONFIG["config"] = config


def shared_once(name: str, compute):
    """compute() once per test run, shared by every xdist worker: the first worker that asks
    computes it under a lock and pickles it into the run's common temp dir (the parent of the
    workers' own); the others wait, then read it.  Without xdist it is computed here.  For
    session-wide derived data (the ADI survey's 19 rows: 30+ s each time a worker computed it)."""
    import fcntl
    import pickle
    config = _CONFIG.get("config")
    # an xdist worker of this session (its config carries workerinput; its basetemp is the
    # controller's, fresh per session, / "popen-<worker id>"), not a session that merely
    # inherited PYTEST_XDIST_WORKER: that one's basetemp parent (pytest-of-<user>) is shared by
    # every session of every checkout, so it would serve a stale value
    worker = getattr(config, "workerinput", None) if config is not None else None
    base = config._tmp_path_factory.getbasetemp() if worker else None
    if not worker or not base.name.endswith(f"-{worker.get('workerid')}"):
        return compute()
    root = base.parent
    path = root / f"shared-{name}.pickle"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = compute()
        part = root / f"shared-{name}.part"
        part.write_bytes(pickle.dumps(value))
        part.rename(path)
        return value


# `pytest --write-file-costs PATH` writes each test file's summed setup+call+teardown time of the
# run (the controller's view under xdist), heaviest first: where a full run's time goes, by file.
def pytest_addoption(parser):
    parser.addoption("--write-file-costs", metavar="PATH", default=None,
                     help="write each test file's summed setup+call+teardown seconds to PATH")


_RUN_COSTS: dict = {}


def pytest_runtest_logreport(report):
    name = report.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    _RUN_COSTS[name] = _RUN_COSTS.get(name, 0.0) + float(getattr(report, "duration", 0.0) or 0.0)


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--write-file-costs", None)
    if path and not hasattr(session.config, "workerinput"):          # the controller only
        lines = [f"{cost:8.1f}  {name}" for name, cost in sorted(_RUN_COSTS.items(), key=lambda kv: -kv[1])]
        Path(path).write_text("\n".join(lines) + "\n")
