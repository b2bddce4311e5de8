"""Compiled Python in a submission is never copied into the sandbox: the child compiles the sources
the static checks read.  Before, a standalone `helper.pyc` (no source) imported, and an
unchecked-hash `__pycache__` entry ran instead of the source beside it (measured with the ADI
grader: the bytecode ran in every job)."""
import importlib.util
import py_compile

import pytest

from conftest import REPO
from test_adi_support import _load, copy_gold, grade, status


@pytest.mark.parametrize("bench", ["fem", "adi", "modchallenge"])
def test_the_copy_skips_compiled_python(tmp_path, bench):
    G = _load(f"grade_{bench}", REPO / f"grade_{bench}.py")
    src = tmp_path / "src"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "__pycache__").mkdir()
    for rel in ("solver.py", "pkg/__init__.py", "pkg/__pycache__/mod.cpython-311.pyc",
                "__pycache__/solver.cpython-311.pyc", "helper.pyc", "old.pyo", "data.npz"):
        (src / rel).write_bytes(b"x")
    G._copy_submission(str(src), str(tmp_path / "dst"), 1 << 20)
    got = sorted(str(p.relative_to(tmp_path / "dst")) for p in (tmp_path / "dst").rglob("*"))
    assert got == ["data.npz", "pkg", "pkg/__init__.py", "solver.py"]


def _pyc(source, cfile):
    cfile.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(source), cfile=str(cfile), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def test_a_helpers_planted_bytecode_does_not_run(tmp_path):
    """Attack: the solver imports its own helper module; an unchecked-hash pyc of a rigged helper
    sits in __pycache__, and a standalone rigged `adi_extra.pyc` has no source at all.  Honest
    twin in one: the helper's source is what runs, so the gold still scores 1.0."""
    sub = copy_gold(tmp_path / "sub")
    (sub / "adi_helper.py").write_text("SCALE = 1.0\n")
    src = (sub / "adi_solver.py").read_text()
    (sub / "adi_solver.py").write_text("from adi_helper import SCALE\n" + src.replace(
        "def solve(h, T=1.0, problem=None):",
        "def solve(h, T=1.0, problem=None):\n    assert SCALE == 1.0, 'bytecode ran'"))
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "adi_helper.py").write_text("raise RuntimeError('bytecode ran')\n")
    tag = importlib.util.cache_from_source("x.py").split(".")[-2]
    _pyc(evil / "adi_helper.py", sub / "__pycache__" / f"adi_helper.{tag}.pyc")
    _pyc(evil / "adi_helper.py", sub / "adi_extra.pyc")
    rc, stdout, stderr, doc = grade(sub)
    assert "bytecode ran" not in stdout + stderr
    assert doc["score"] == 1.0 and status(doc)["provenance.solver"] == "PASS", stdout
