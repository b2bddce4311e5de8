"""Shared, cached builders for the FEM tests (no tests here).

Everything expensive is built once per pytest process: submissions are made
with reference/fem/make_gold.py's build_submission (the solver plus its own
honestly computed outputs), grading results are memoised by (dir, flags).
"""
import atexit
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import REPO, REFERENCE, run_grader, verdict_lines

FEM = REFERENCE / "fem"
GOLD = FEM / "gold"
GRADER = REPO / "grade_fem.py"
GOLD_SOURCE = (GOLD / "fem_solver.py").read_text()
GOLD_SOLVE_LINE = "    coef[free] = scipy.sparse.linalg.spsolve(K[free][:, free], rhs[free])\n"

_TMP = Path(tempfile.mkdtemp(prefix="test_fem-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
sys.dont_write_bytecode = True


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


make_gold = _load(FEM / "make_gold.py", "fem_make_gold")
grader = _load(GRADER, "grade_fem_under_test")

# Legitimate ways to solve the free 2(n-1) system K u = b (K is the gold's CSR matrix).
LEGIT_SOLVES = {
    "sparse_spsolve": "x = scipy.sparse.linalg.spsolve(A, b)",
    "splu": "x = scipy.sparse.linalg.splu(A.tocsc()).solve(b)",
    "factorized": "x = scipy.sparse.linalg.factorized(A.tocsc())(b)",
    "banded_lu": "x = scipy.linalg.solve_banded((3, 3), band(A, 3, 3), b)",
    "lapack_dgbsv": ("ab = np.vstack([np.zeros((3, A.shape[0])), band(A, 3, 3)])\n"
                     "    x = dgbsv(3, 3, ab, b)[2]"),
    "cholesky_banded": "x = scipy.linalg.solveh_banded(band(A, 0, 3), b)",
    "cho_factor": "x = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A.toarray()), b)",
    "scipy_solve": "x = scipy.linalg.solve(A.toarray(), b)",
    "numpy_dense_lu": "x = np.linalg.solve(A.toarray(), b)",
    "lu_factor": "x = scipy.linalg.lu_solve(scipy.linalg.lu_factor(A.toarray()), b)",
    "dense_inverse": "x = np.linalg.inv(A.toarray()) @ b",
    # unknowns reordered (all values, then all slopes) and the system scaled by h^3: still
    # the stiffness matrix of the statement for provenance.solve_observed
    "blocked_scaled": ("p = np.concatenate([np.arange(0, A.shape[0], 2), np.arange(1, A.shape[0], 2)])\n"
                       "    s = 1.0 / A.diagonal().max()\n"
                       "    x = np.empty_like(b)\n"
                       "    x[p] = scipy.sparse.linalg.spsolve((s * A)[p][:, p].tocsc(), s * b[p])"),
}

_HELPERS = '''
import scipy.linalg
from scipy.linalg.lapack import dgbsv


def band(A, lower, upper):
    """LAPACK band storage of a sparse matrix: ab[upper + i - j, j] = A[i, j]."""
    m = A.shape[0]
    ab = np.zeros((lower + upper + 1, m))
    for d in range(-lower, upper + 1):
        diag = A.diagonal(d)
        if d >= 0:
            ab[upper - d, d:] = diag
        else:
            ab[upper - d, :m + d] = diag
    return ab


def linear_solve(A, b):
    {body}
    return x
'''


def solver_source(body: str, extra: str = "") -> str:
    """The gold solver with its linear solve replaced by `body` (A, b -> x)."""
    src = GOLD_SOURCE.replace(GOLD_SOLVE_LINE,
                              "    coef[free] = linear_solve(K[free][:, free], rhs[free])\n")
    assert src != GOLD_SOURCE
    return src + _HELPERS.replace("{body}", body) + extra


# The study runs the way problem_spec.md asks and the grader re-runs it: BLAS
# single-threaded (dense LAPACK round-off depends on the thread count).
PINNED_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                  VECLIB_MAXIMUM_THREADS="1", NUMEXPR_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")


def make_study(solver_dir: Path, env=None) -> None:
    """Run reference/fem/make_gold.py on solver_dir as a fresh process (pinned by default)."""
    subprocess.run([sys.executable, str(FEM / "make_gold.py"), str(solver_dir)], check=True,
                   capture_output=True, env=env or PINNED_ENV, timeout=600)


@functools.lru_cache(maxsize=None)
def build(name: str, source: str) -> Path:
    """A complete submission (solver + its honest outputs) in a cached temp dir."""
    out = _TMP / name
    out.mkdir()
    (out / "fem_solver.py").write_text(source)
    make_study(out)
    return out


def copy_submission(src: Path, name: str) -> Path:
    dst = _TMP / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@functools.lru_cache(maxsize=None)
def grade(path: Path, *flags: str):
    """Run the grader as a subprocess (as users do): (rc, stdout, stderr, json doc, verdict keys)."""
    report = _TMP / f"report-{abs(hash((str(path),) + flags))}.json"
    rc, out, err, doc = run_grader(GRADER, path, "--json", report, *flags)
    return rc, out, err, doc, verdict_lines(out)


def status_of(doc: dict) -> dict:
    return {c["id"]: c["status"] for c in doc["checks"]}


def failed(doc: dict) -> set:
    return {c["id"] for c in doc["checks"] if c["status"] == "FAIL"}


def gold_copy(name: str) -> Path:
    """A fresh copy of the bundled gold submission, to be edited by one test."""
    return copy_submission(GOLD, name)


def edit_npz(path: Path, **changes) -> None:
    """Rewrite reference_arrays.npz with some arrays replaced (None deletes)."""
    import numpy as np
    f = path / "reference_arrays.npz"
    with np.load(f) as data:
        arrays = {k: data[k] for k in data.files}
    for k, v in changes.items():
        if v is None:
            arrays.pop(k, None)
        else:
            arrays[k] = v
    np.savez(f, **arrays)


def gold_arrays() -> dict:
    import numpy as np
    with np.load(GOLD / "reference_arrays.npz") as data:
        return {k: data[k].copy() for k in data.files}


def gold_json() -> dict:
    return json.loads((GOLD / "results.json").read_text())


def edit_json(path: Path, fn) -> None:
    """Apply fn(doc) to results.json (fn edits in place)."""
    f = path / "results.json"
    doc = json.loads(f.read_text())
    fn(doc)
    f.write_text(json.dumps(doc))


def tree_digest(path: Path) -> dict:
    """{relative path: sha256} of every file, to prove a directory was not modified."""
    import hashlib
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


# The gold solve() replaced by a wrapper: the honest gold code stays available as _gold_solve.
WRAP_SOLVE = '''

_gold_solve = solve


def exact_coefficients(n):
    """Values and slopes of the exact solution at the nodes (the Hermite interpolant)."""
    x = np.arange(n + 1) / n
    coef = np.empty(2 * (n + 1))
    coef[0::2] = np.exp(x) * x**2 * (1 - x)**2
    coef[1::2] = np.exp(x) * (x**4 + 2 * x**3 - 5 * x**2 + 2 * x)
    return coef


def free_stiffness(n):
    """The statement's 2(n-1) stiffness matrix (CSR): what a dummy solve must pass to be
    recognised as a solve of the FEM system."""
    ke = element_stiffness(1.0 / n)
    d = np.arange(4)
    rows = np.concatenate([2 * k + np.repeat(d, 4) for k in range(n)])
    cols = np.concatenate([2 * k + np.tile(d, 4) for k in range(n)])
    K = scipy.sparse.coo_matrix((np.tile(ke.ravel(), n), (rows, cols)),
                                shape=(2 * (n + 1),) * 2).tocsr()
    return K[2:-2][:, 2:-2]


def fake_noise(n, x):
    """Deterministic noise of the size linear-solve round-off has at mesh n."""
    rng = np.random.default_rng(x.size)
    return 5e-10 * (n / 512) ** 4 * rng.standard_normal(x.size) * np.sin(np.pi * x) ** 2


def interpolant_fields(n, scale=1 + 1e-12, noise=False):
    """The exact Hermite interpolant on the prescribed grids (optionally with fake noise)."""
    coef = exact_coefficients(n) * scale
    x_nodes, x_dense = np.arange(n + 1) / n, np.arange(10 * n + 1) / (10 * n)
    un, ud = coef[0::2], evaluate(coef, n, x_dense)
    if noise:
        un, ud = un + fake_noise(n, x_nodes), ud + fake_noise(n, x_dense)
    return {"x_nodes": x_nodes, "uh_nodes": un, "x_dense": x_dense, "uh_dense": ud}


def solve(n):
{body}
'''


def wrapped_solver(body: str, extra_top: str = "") -> str:
    """Gold source + a new solve(n) whose body is `body` (indented 4)."""
    return extra_top + GOLD_SOURCE + WRAP_SOLVE.replace("{body}", body)


# Honest variants of the linear solve (issue 10): each must score 1.0.
HONEST_SOLVES = {
    # one step of iterative refinement with a library solver
    "refinement": ("x = scipy.sparse.linalg.spsolve(A, b)\n"
                   "    x = x + scipy.sparse.linalg.spsolve(A, b - A @ x)"),
    # symmetric diagonal scaling D K D y = D F (Jacobi equilibration), x = D y
    "equilibration": ("d = 1.0 / np.sqrt(A.diagonal())\n"
                      "    D = scipy.sparse.diags(d)\n"
                      "    x = d * scipy.sparse.linalg.spsolve((D @ A @ D).tocsc(), d * b)"),
    # unknowns (value, h * slope)
    "scaled_slopes": ("h = 2.0 / (A.shape[0] + 2)\n"
                      "    s = np.ones(A.shape[0])\n"
                      "    s[1::2] = h\n"
                      "    S = scipy.sparse.diags(1.0 / s)\n"
                      "    x = scipy.sparse.linalg.spsolve((S @ A @ S).tocsc(), b / s) / s"),
    # several right-hand sides in one call; the load column feeds the field
    "multiple_rhs": ("B = np.column_stack([b, np.ones_like(b), A @ np.linspace(0, 1, A.shape[0])])\n"
                     "    x = scipy.sparse.linalg.splu(A.tocsc()).solve(B)[:, 0]"),
    # a direct solve polished by conjugate gradients (observed as a solve of its own)
    "cg_polish": ("x0 = scipy.linalg.solveh_banded(band(A, 0, 3), b)\n"
                  "    x, info = scipy.sparse.linalg.cg(A, b, x0=x0, rtol=1e-14, maxiter=5)"),
    # LAPACK told to overwrite its inputs (the matrix with its LU factors, b with x): the
    # recorder reads both before the call
    "overwrite": ("ab = np.asfortranarray(np.vstack([np.zeros((3, A.shape[0])), band(A, 3, 3)]))\n"
                  "    x = b.copy()\n"
                  "    lu, piv, x, info = dgbsv(3, 3, ab, x, overwrite_ab=1, overwrite_b=1)"),
    # SuperLU's private entry point (dimension misread as nnz = 364 at n = 32 before issue 10)
    "superlu_gssv": ("from scipy.sparse.linalg._dsolve import _superlu\n"
                     "    C = A.tocsc()\n"
                     "    x, info = _superlu.gssv(C.shape[0], C.nnz, C.data, C.indices.astype(np.intc),\n"
                     "                            C.indptr.astype(np.intc), b.copy(), 1)"),
}

# The statement's free load vector as the gold assembles it (3-point Gauss), for cheats
# that make a convincing solve of the real system on the side.
LOAD_VECTOR = '''

def load_vector(n):
    h = 1.0 / n
    tq, wq = np.polynomial.legendre.leggauss(3)
    tq, wq = (tq + 1) / 2, wq / 2
    rhs = np.zeros(2 * (n + 1))
    nq = hermite_basis(tq, h)
    for k in range(n):
        rhs[2 * k:2 * k + 4] += h * (wq * load((k + tq) * h)) @ nq
    return rhs[2:-2]


def field_from(coef, n):
    x_dense = np.arange(10 * n + 1) / (10 * n)
    return {"x_nodes": np.arange(n + 1) / n, "uh_nodes": coef[0::2], "x_dense": x_dense,
            "uh_dense": evaluate(coef, n, x_dense)}
'''


def cheat_solver(body: str, extra_top: str = "") -> str:
    """wrapped_solver with the load vector and field helpers of LOAD_VECTOR."""
    return wrapped_solver(body, extra_top="import scipy.linalg\n" + extra_top) + LOAD_VECTOR


def honest(name: str):
    """A built submission solving with HONEST_SOLVES[name]."""
    return build(f"honest-{name}", solver_source(HONEST_SOLVES[name]))


def check(doc: dict, cid: str) -> dict:
    return next(c for c in doc["checks"] if c["id"] == cid)


PROOF_CHECKS = ("provenance.solve_observed", "provenance.load_vector", "provenance.reconstruction",
                "provenance.causal_substitution", "provenance.causal_nan", "provenance.deterministic",
                "provenance.fidelity")


def assert_scores_one_with_proof(sub) -> dict:
    """Graded 1.0 with every audit proven (PASS, not merely unreviewed); returns the doc."""
    rc, out, err, doc, keys = grade(sub)
    assert rc == 0 and keys["SCORE"] == "1.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    st = status_of(doc)
    for cid in PROOF_CHECKS:
        assert st[cid] == "PASS", (cid, check(doc, cid)["message"])
    assert keys["review_required"] == "0"
    return doc
