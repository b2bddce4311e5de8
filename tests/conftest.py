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
