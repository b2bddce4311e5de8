"""Shared, cached builders for the SciCode tests (no tests here).

The synthetic problem set (reference/scicode/scicode_synthetic.py) is written once per pytest
process; grading runs are memoised by (generations, flags).
"""
import atexit
import functools
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

from conftest import REPO, REFERENCE, run_grader, verdict_lines

SCI = REFERENCE / "scicode"
GRADER = REPO / "grade_scicode.py"
sys.dont_write_bytecode = True
sys.path.insert(0, str(SCI))

import scicode_h5_encoding  # noqa: E402
import scicode_synthetic  # noqa: E402

h5_encoding, synthetic = scicode_h5_encoding, scicode_synthetic   # short names for the tests

_TMP = Path(tempfile.mkdtemp(prefix="test_scicode-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def _load():
    spec = importlib.util.spec_from_file_location("grade_scicode", GRADER)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["grade_scicode"] = mod
    spec.loader.exec_module(mod)
    return mod


gs = _load()


@functools.lru_cache(maxsize=None)
def syn() -> dict:
    """The synthetic problems, targets and correct generations (built once)."""
    return {k: Path(v) for k, v in scicode_synthetic.write_all(str(_TMP / "synthetic")).items()}


def tmpdir(name: str) -> Path:
    path = _TMP / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def variant(name: str, replace: dict = None, drop=(), extra: dict = None) -> Path:
    """A copy of the correct generations with some steps replaced, dropped or added."""
    src = syn()["correct"]
    dst = tmpdir(name)
    for f in src.iterdir():
        step = f.stem
        if step in drop:
            continue
        data = f.read_bytes()
        if replace and step in replace:
            new = replace[step]
            data = new if isinstance(new, bytes) else new.encode("utf-8")
        (dst / f.name).write_bytes(data)
    for fname, text in (extra or {}).items():
        (dst / fname).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return dst


def problem_args(special=True, h5=None):
    s = syn()
    args = ["--problems", s["problems_test.jsonl"], s["problems_dev.jsonl"],
            "--h5", h5 or s["targets.h5"]]
    if special:
        args += ["--special-steps", s["special"]]
    return args


_CACHE = {}


def grade(gen, *flags, special=True, h5=None, script=GRADER, cwd=None):
    """(rc, stdout, stderr, json doc, key lines) of one grader run (memoised)."""
    key = (str(gen), flags, special, str(h5), str(script))
    if key not in _CACHE:
        out = tmpdir(f"json-{len(_CACHE)}") / "report.json"
        rc, stdout, stderr, doc = run_grader(script, gen, *problem_args(special, h5), *flags,
                                             "--json", out, cwd=cwd, timeout=600)
        _CACHE[key] = (rc, stdout, stderr, doc, verdict_lines(stdout))
    return _CACHE[key]


def step_line(stdout: str, step: str) -> str:
    for line in stdout.splitlines():
        if line.split()[1:2] == [f"step.{step}"]:
            return line
    raise AssertionError(f"no line for step {step}:\n{stdout}")


def check(doc: dict, cid: str) -> dict:
    for c in doc["checks"]:
        if c["id"] == cid:
            return c
    raise AssertionError(f"no check {cid}")


def with_reply(body: str) -> str:
    """A fenced raw reply around `body`."""
    return f"Sure.\n```python\nimport numpy as np\nimport os, sys, time\n{body}\n```\n"


def one_step_set(name: str, bodies: dict, target=2.0, cases: dict = None) -> tuple:
    """(problems.jsonl, targets.h5, generations dir) of independent one-step problems
    800, 801, ...: `def f(x)` must return x + 1 (test: f(1.0) against `target`).
    bodies: label -> the reply text for that problem's step; cases: label -> another test
    case text for that step.  Returns also label -> step."""
    import json
    root = tmpdir(f"oneset-{name}")
    gen = root / "gen"
    gen.mkdir()
    steps, problems, targets = {}, [], {}
    for i, (label, reply) in enumerate(bodies.items()):
        pid = str(800 + i)
        step = f"{pid}.1"
        steps[label] = step
        problems.append({"problem_id": pid, "problem_name": label,
                         "required_dependencies": "import numpy as np",
                         "sub_steps": [{"step_number": step, "function_header": "def f(x):\n    '''x + 1'''",
                                        "test_cases": [(cases or {}).get(
                                            label, "assert np.allclose(f(1.0), target)")],
                                        "step_description_prompt": label, "step_background": "",
                                        "return_line": "    return y"}]})
        targets[step] = [target]
        (gen / f"{step}.txt").write_bytes(reply if isinstance(reply, bytes) else reply.encode("utf-8"))
    probs = root / "problems.jsonl"
    probs.write_text("".join(json.dumps(p) + "\n" for p in problems))
    h5 = root / "targets.h5"
    scicode_h5_encoding.write_targets(h5, targets)
    return probs, h5, gen, steps


def run_one_step_set(probs, h5, gen, *flags):
    out = gen.parent / "report.json"
    rc, stdout, stderr, doc = run_grader(GRADER, gen, "--problems", probs, "--h5", h5, *flags,
                                         "--json", out, timeout=600)
    return rc, stdout, stderr, doc, verdict_lines(stdout)
