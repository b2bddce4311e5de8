"""Dependency allowlist (static AST pass), missing files, and the import
entry point."""
import pytest

from test_adi_support import copy_gold, failed, grade, grader, message, reviews, status


def test_disallowed_import_is_zero_without_running(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    src = (sub / "adi_solver.py").read_text()
    (sub / "adi_solver.py").write_text("try:\n    import fipy\nexcept ImportError:\n    fipy = None\n" + src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and failed(doc) == {"static.imports"}
    assert "fipy" in message(doc, "static.imports")
    assert status(doc)["provenance.exec"] == "SKIP"


def test_dynamic_import_is_flagged_for_review(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    src = (sub / "adi_solver.py").read_text()
    (sub / "adi_solver.py").write_text(src + "\nimport importlib\n_np = importlib.import_module('numpy')\n")
    rc, stdout, stderr, doc = grade(sub)
    assert [c["id"] for c in reviews(doc)] == ["static.dynamic_import"]
    assert doc["score"] == 1.0
    assert "REVIEW_REQUIRED: static.dynamic_import" in stdout


def test_missing_solver_is_zero(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    (sub / "adi_solver.py").unlink()
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and "static.files" in failed(doc) and "adi_solver.py" in stdout


def test_missing_arrays_is_zero(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    (sub / "reference_arrays.npz").unlink()
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and {"static.files", "schema.npz"} <= failed(doc)


def test_solver_without_solve_is_zero(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    src = (sub / "adi_solver.py").read_text().replace("def solve(h, T=1.0, problem=None):",
                                                      "def run(h, T=1.0, problem=None):")
    (sub / "adi_solver.py").write_text(src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and "provenance.solver" in failed(doc)


def test_local_helper_module_is_allowed_and_audited():
    G = grader()
    assert G.import_audit("import helper\n", "static", local={"helper"})[0].status is G.Status.PASS
    assert G.import_audit("import helper\n", "static")[0].status is G.Status.FAIL


def test_disallowed_import_in_a_local_package_is_caught(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    (sub / "helpers").mkdir()
    (sub / "helpers" / "__init__.py").write_text("import fenics\n")
    src = (sub / "adi_solver.py").read_text()
    (sub / "adi_solver.py").write_text("import helpers  # noqa\n" + src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and failed(doc) == {"static.imports"}
    assert "fenics" in message(doc, "static.imports")


def test_source_too_deep_for_the_parser_is_a_clean_fail(tmp_path):
    """issue 11, bad input: an ast.parse that raises MemoryError/RecursionError is a FAIL
    record (score 0.0, exit 1), never a grader failure (exit 3)."""
    sub = copy_gold(tmp_path / "sub")
    (sub / "adi_solver.py").write_text("x = " + "-" * 200000 + "1\n")
    rc, stdout, stderr, doc = grade(sub)
    assert rc == 1 and doc["score"] == 0.0, (rc, stdout[-500:], stderr[-500:])
    assert "static.syntax" in failed(doc) and "cannot be parsed" in stdout


@pytest.mark.parametrize("snippet", ["import multiprocessing", "from subprocess import run",
                                     "import os\nos.fork()", "from concurrent.futures import ProcessPoolExecutor"])
def test_another_process_is_flagged(snippet):
    G = grader()
    ids = {c.id: c.status for c in G.import_audit(snippet + "\n", "static")}
    assert ids.get("static.introspection") is G.Status.REVIEW, (snippet, ids)


def test_threads_are_not_flagged():
    G = grader()
    src = "import threading\nimport concurrent.futures as cf\npool = cf.ThreadPoolExecutor(2)\n"
    assert all(c.status is G.Status.PASS for c in G.import_audit(src, "static"))


LIBRARY_PATCHES = [
    "np.nonzero = len", "csr_matrix.tocoo = None", "sp.csr_matrix.diagonal = None", "del la.solve",
    "setattr(np, 'triu', 1)", "vars(np)['tril'] = 2", "np.__dict__.update(a=1)",
    "np.linalg.__dict__['solve'] = 3", "np.linalg.solve, x = f, 1", "la.solve += 1",
]
HONEST_ASSIGNMENTS = [
    "x = np.zeros(3)\nx[0] = 1", "A = csr_matrix(np.eye(3))\nA.data[0] = 2", "np.zeros(3)[0] = 1",
    "y = np.linalg.solve(np.eye(2), np.ones(2))", "d = {}\nd['np'] = np", "np.seterr(all='ignore')",
]
PREFIX = "import numpy as np\nimport scipy.sparse as sp\nfrom scipy.sparse import csr_matrix\nfrom numpy import linalg as la\n"


@pytest.mark.parametrize("line", LIBRARY_PATCHES)
def test_assignment_to_a_library_attribute_fails(line):
    G = grader()
    ids = {c.id: c.status for c in G.import_audit(PREFIX + line + "\n", "static")}
    assert ids.get("static.library_assignment") is G.Status.FAIL, (line, ids)


@pytest.mark.parametrize("code", HONEST_ASSIGNMENTS)
def test_ordinary_assignments_are_not_library_patches(code):
    G = grader()
    ids = {c.id for c in G.import_audit(PREFIX + code + "\n", "static")}
    assert "static.library_assignment" not in ids, code
