"""Issue 21 (ADI half), second engineer's attack on the new recorder and the second witness.

Each case is a non-ADI second-order method (Crank-Nicolson on the full 2-D operator, with the
mixed term) that the grader must not pass; the correct verdict is at least one FAIL among the
structure, causal-audit and witness checks.  Both cases got every one of them PASS (and, run
end to end under --strict, SCORE 1.0 with no REVIEW line; see /work/notes/redteam21-adi.md):
  - the recorder's own state is reachable from the submission: every wrapper installed on
    numpy/scipy is a Python function whose __globals__ is the driver's namespace (not an audited
    attribute; the static scan only sees the literal spelling), so the solver reads
    _S["poison"], the job tag _S["job"] and the originals in _WRAPPED: it returns Crank-Nicolson
    computed by the unwrapped splu, and the gold's ADI answer when audited or when its job tag
    names the witness (round 4: the witness is no longer recognisable from its arguments, but the
    tag in the driver's state still names it.  Round 5: the state is still readable, but the
    benchmark step witness, outside the solver's process, fails the CN it grades with);
  - no introspection at all: CN's system solved by PCG preconditioned with genuine ADI line
    solves (every recorded solve is an honest ADI operator whose residual checks out, the audits
    poison solves that feed the field), and the witness's single step (T = h) answered with a
    plain Douglas theta = 1/2 step: the witness could be recognised, so it never saw the scheme
    that is graded.  Fixed in round 4: the witness is a hidden-family run (T = 1, ten steps,
    non-zero data) differenced with the hidden run on the same mesh; the solver cannot tell it
    from the hidden run, and the difference is the monolithic map: witness.adi_step FAIL.  The audits can be recognised too (one probe line solve whose residual the
    solver checks: NaN or a 1 + O(1e-6) scaling shows); without that probe the perturbation
    audit FAILs it ("field unchanged"), which is the right verdict.
  - round 4's re-aim: CN only where the problem is the public benchmark (its coefficients), honest
    MCS on every hidden-family run, the audits dodged by the probe: the hidden-family witness
    cannot see it.  Fixed in round 5 by the benchmark step witness (the benchmark's own last step,
    replayed from the runs to T = 1, (N - 1)h, h and 2h): witness.benchmark_step FAIL.
"""
import pytest

from test_adi_exploit_recorder import JOBS, failed, judge
from test_adi_support import GOLD, grader

# the recorder tests' jobs plus the benchmark step witness's two runs on h = 0.1 (T = 0.9, 0.8)
STEP_JOBS = JOBS + grader().step_jobs((0,))

ATTACK_GLOBALS = '\n\nimport scipy.sparse as _sp\nfrom scipy.sparse.linalg import splu as _splu\n\n\ndef _orig(wrapper):\n    G = getattr(solve_banded, "__glob" + "als__", None)\n    if G is None or "_WRAPPED" not in G:\n        return wrapper, None\n    for v in list(G["_WRAPPED"].values()):\n        if v[1] is wrapper:\n            return v[0], G\n    return wrapper, G\n\n\ndef _cn(h, T, pb, lu_fn):\n    m = int(round(1.0 / h))\n    x = np.linspace(0.0, 1.0, m + 1)\n    X, Y = np.meshgrid(x, x, indexing="ij")\n    N = int(round(T / h))\n    k = T / N\n    a, b, c = float(pb.a), float(pb.b), float(pb.c)\n    n = m - 1\n    D2 = _sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]) / h ** 2\n    D1 = _sp.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1]) / (2 * h)\n    I = _sp.identity(n)\n    A = a * _sp.kron(D2, I) + c * _sp.kron(I, D2) + b * _sp.kron(D1, D1)\n    M = (_sp.identity(n * n) - 0.5 * k * A).tocsc()\n    LU = lu_fn(M)\n\n    def full(W):\n        return (a * (W[2:, 1:-1] - 2 * W[1:-1, 1:-1] + W[:-2, 1:-1]) / h ** 2\n                + c * (W[1:-1, 2:] - 2 * W[1:-1, 1:-1] + W[1:-1, :-2]) / h ** 2\n                + b * (W[2:, 2:] - W[2:, :-2] - W[:-2, 2:] + W[:-2, :-2]) / (4 * h ** 2))\n    U = np.asarray(pb.u0(X, Y), dtype=float).copy()\n    ring = np.ones_like(U, dtype=bool)\n    ring[1:-1, 1:-1] = False\n    U[ring] = pb.g(X, Y, 0.0)[ring]\n    for s in range(N):\n        t0, t1 = s * k, (s + 1) * k\n        G1 = np.zeros_like(U)\n        G1[ring] = pb.g(X, Y, t1)[ring]\n        rhs = (U[1:-1, 1:-1] + 0.5 * k * full(U) + 0.5 * k * full(G1)\n               + 0.5 * k * (pb.f(X, Y, t0) + pb.f(X, Y, t1))[1:-1, 1:-1])\n        V = LU.solve(rhs.ravel()).reshape(n, n)\n        U = G1.copy()\n        U[1:-1, 1:-1] = V\n    return X, Y, U\n\n\ndef solve(h, T=1.0, problem=None):\n    pb = BenchmarkProblem() if problem is None else problem\n    X, Y, U = _adi(h, T, pb)                      # the recorder sees an honest ADI run\n    lu_fn, G = _orig(_splu)\n    if G is not None and (G["_S"]["poison"] or str(G["_S"]["job"]).startswith("witness")):\n        return X, Y, U                            # audits and the witness (its job tag) get the ADI answer\n    return _cn(h, T, pb, lu_fn)\n'

ATTACK_PCG_WITNESS = '\n\nimport scipy.sparse as _sp\n\n\ndef _cn(h, T, pb):\n    """Crank-Nicolson on the full 2-D operator; each step\'s system solved by PCG whose\n    preconditioner is a pair of genuine ADI line solves (theta = 1/2)."""\n    m = int(round(1.0 / h))\n    x = np.linspace(0.0, 1.0, m + 1)\n    X, Y = np.meshgrid(x, x, indexing="ij")\n    N = int(round(T / h))\n    k = T / N\n    a, b, c = float(pb.a), float(pb.b), float(pb.c)\n    n = m - 1\n    D2 = _sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]) / h ** 2\n    D1 = _sp.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1]) / (2 * h)\n    I = _sp.identity(n)\n    A = a * _sp.kron(D2, I) + c * _sp.kron(I, D2) + b * _sp.kron(D1, D1)\n    M = (_sp.identity(n * n) - 0.5 * k * A).tocsr()\n\n    def band(kap):\n        r = 0.5 * k * kap / h ** 2\n        ab = np.zeros((3, n))\n        ab[0, 1:] = -r\n        ab[2, :-1] = -r\n        ab[1] = 1 + 2 * r\n        return ab\n    bx, by = band(a), band(c)\n\n    def prec(R):\n        D = solve_banded((1, 1), bx, R.reshape(n, n))\n        return solve_banded((1, 1), by, D.T).T.ravel()\n\n    def pcg(rhs, x0):\n        xk = x0.copy()\n        r = rhs - M @ xk\n        z = prec(r)\n        p = z.copy()\n        rz = r @ z\n        nb = np.linalg.norm(rhs)\n        for _ in range(400):\n            if np.linalg.norm(r) <= 1e-14 * nb:\n                break\n            Ap = M @ p\n            al = rz / (p @ Ap)\n            xk += al * p\n            r -= al * Ap\n            z = prec(r)\n            rz2 = r @ z\n            p = z + (rz2 / rz) * p\n            rz = rz2\n        return xk\n\n    def full(W):\n        return (a * (W[2:, 1:-1] - 2 * W[1:-1, 1:-1] + W[:-2, 1:-1]) / h ** 2\n                + c * (W[1:-1, 2:] - 2 * W[1:-1, 1:-1] + W[1:-1, :-2]) / h ** 2\n                + b * (W[2:, 2:] - W[2:, :-2] - W[:-2, 2:] + W[:-2, :-2]) / (4 * h ** 2))\n    U = np.asarray(pb.u0(X, Y), dtype=float).copy()\n    ring = np.ones_like(U, dtype=bool)\n    ring[1:-1, 1:-1] = False\n    U[ring] = pb.g(X, Y, 0.0)[ring]\n    for s in range(N):\n        t0, t1 = s * k, (s + 1) * k\n        G1 = np.zeros_like(U)\n        G1[ring] = pb.g(X, Y, t1)[ring]\n        rhs = (U[1:-1, 1:-1] + 0.5 * k * full(U) + 0.5 * k * full(G1)\n               + 0.5 * k * (pb.f(X, Y, t0) + pb.f(X, Y, t1))[1:-1, 1:-1])\n        V = pcg(rhs.ravel(), U[1:-1, 1:-1].ravel()).reshape(n, n)\n        U = G1.copy()\n        U[1:-1, 1:-1] = V\n    return X, Y, U\n\n\n\ndef _audited(h):\n    """Whether the grader is poisoning or scaling solve results: one probe solve, checked."""\n    n = int(round(1.0 / h)) - 1\n    ab = np.zeros((3, n))\n    ab[0, 1:] = -1.0\n    ab[2, :-1] = -1.0\n    ab[1] = 4.0\n    rhs = np.arange(1.0, n + 1.0)\n    try:\n        x = solve_banded((1, 1), ab, rhs)\n    except ValueError:\n        return True\n    r = 4.0 * x - rhs\n    r[1:] -= x[:-1]\n    r[:-1] -= x[1:]\n    return not np.all(np.isfinite(x)) or np.max(np.abs(r)) > 1e-12 * np.max(np.abs(rhs))\n\n\ndef solve(h, T=1.0, problem=None):\n    global SCHEME, THETA\n    SCHEME, THETA = "Douglas", 0.5           # the same theta as the preconditioner\'s line solves\n    pb = BenchmarkProblem() if problem is None else problem\n    if abs(T - h) < 1e-12 or _audited(h):    # a single step (the witness) or an audit: plain ADI\n        return _adi(h, T, pb)\n    return _cn(h, T, pb)\n'


def attack(tail: str) -> str:
    src = (GOLD / "adi_solver.py").read_text()
    old = "def solve(h, T=1.0, problem=None):"
    assert src.count(old) == 1
    return src.replace(old, "def _adi(h, T=1.0, problem=None):") + tail


def test_recorder_state_read_through_wrapper_globals_is_not_a_pass(tmp_path):
    """The recorder's state is still readable (round 5, measured on CPython 3.11.7: reading a
    function's __globals__ or __closure__ or a cell's cell_contents raises no audit event, so an
    audit hook cannot refuse it; __code__, __defaults__, gi_frame and tb_frame do raise
    "object.__getattr__").  What it buys no longer passes: both witnesses are behavioural and run
    outside the solver's process.  Here the solver answers the audits and the witness (its job
    tag) with ADI and everything else with Crank-Nicolson through the unwrapped splu: the
    benchmark step witness finds the monolithic CN step on the benchmark (FAIL) and the
    hidden-family witness a difference of two different maps (REVIEW).  Answering every
    hidden-family run with ADI and the benchmark's step runs with doctored fields is the residual
    (tests/test_adi_benchmark_step.py, strict xfail), and needs no introspection."""
    checks, J, _ = judge(tmp_path, attack(ATTACK_GLOBALS), STEP_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert failed(checks) == {"witness.benchmark_step"}, {k: c.message for k, c in checks.items()}
    assert "monolithic 2-D Crank-Nicolson step" in checks["witness.benchmark_step"].message
    assert checks["witness.adi_step"].status.value == "REVIEW", checks["witness.adi_step"].message


def test_crank_nicolson_by_adi_preconditioned_cg_with_recognised_witness_is_not_a_pass(tmp_path):
    """Fixed (round 4): the witness is a hidden-family run indistinguishable from the hidden run on
    its mesh (T = 1, ten steps, non-zero data); the attack's T = h test no longer finds it, so it
    gets Crank-Nicolson like the hidden run, and the difference of the two is the monolithic map."""
    checks, J, _ = judge(tmp_path, attack(ATTACK_PCG_WITNESS))
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert J["witness:0.1"]["status"] == "ok", J["witness:0.1"]["error"]
    assert failed(checks) == {"witness.adi_step"}, {k: c.message for k, c in checks.items()}
    assert "monolithic 2-D implicit steps" in checks["witness.adi_step"].message
    assert "phi = 0.5 " in checks["witness.adi_step"].message


def _benchmark_only(tail: str) -> str:
    """The PCG attack re-aimed (round 4): Crank-Nicolson only where the problem is the public
    benchmark (problem None or its coefficients), the gold's MCS theta = 1/3 on every other problem
    (the hidden instance and the witness alike), the preconditioner's line solves at the same
    theta, and the audits recognised by the probe."""
    tail = tail.replace("r = 0.5 * k * kap / h ** 2", "r = k * kap / (3.0 * h ** 2)")
    i = tail.index("def solve(h, T=1.0, problem=None):")
    return tail[:i] + (
        "def solve(h, T=1.0, problem=None):\n"
        "    pb = BenchmarkProblem() if problem is None else problem\n"
        "    bench = (float(pb.a), float(pb.b), float(pb.c)) == (1.0, 0.8, 0.5)\n"
        "    if not bench or _audited(h):\n"
        "        return _adi(h, T, pb)\n"
        "    return _cn(h, T, pb)\n")


def test_crank_nicolson_on_the_benchmark_only_is_not_a_pass(tmp_path):
    """Fixed (round 5): the hidden-family witness proves the solver's map on the hidden family only
    (it PASSes here), but the benchmark step witness replays the benchmark's own last step from the
    runs to T = 1, 0.9 and 0.8 (the time-separable data eliminated): it is the monolithic 2-D
    Crank-Nicolson step, not the MCS step the hidden family shows.  The probe that dodges the
    audits does not help: the step runs are ordinary, unpoisoned benchmark runs."""
    checks, J, _ = judge(tmp_path, attack(_benchmark_only(ATTACK_PCG_WITNESS)), STEP_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert checks["witness.adi_step"].status.value == "PASS", checks["witness.adi_step"].message
    assert failed(checks) == {"witness.benchmark_step"}, {k: c.message for k, c in checks.items()}
    msg = checks["witness.benchmark_step"].message
    assert "monolithic 2-D Crank-Nicolson step" in msg and "h = 0.1" in msg, msg


def _final_time_only(tail: str) -> str:
    """The same, Crank-Nicolson only on the graded call itself (the benchmark to T = 1): the step
    witness's runs to T < 1 get the honest MCS, so the last step joins a CN field to MCS ones."""
    tail = _benchmark_only(tail)
    old = "    if not bench or _audited(h):\n"
    assert tail.count(old) == 1
    return tail.replace(old, "    if not bench or abs(T - 1.0) > 1e-12 or _audited(h):\n")


def test_crank_nicolson_on_the_graded_call_only_is_not_a_pass(tmp_path):
    checks, J, _ = judge(tmp_path, attack(_final_time_only(ATTACK_PCG_WITNESS)), STEP_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert checks["witness.adi_step"].status.value == "PASS", checks["witness.adi_step"].message
    assert failed(checks) == {"witness.benchmark_step"}, {k: c.message for k, c in checks.items()}
    msg = checks["witness.benchmark_step"].message
    assert "not a step of the scheme the hidden-family witness identified (MCS" in msg, msg


def test_gold_passes_the_benchmark_step_witness_through_the_driver(tmp_path):
    checks, J, _ = judge(tmp_path, (GOLD / "adi_solver.py").read_text(), STEP_JOBS)
    bad = {k: c.message for k, c in checks.items() if c.status.value in ("FAIL", "REVIEW")}
    assert not bad, bad
    c = checks["witness.benchmark_step"]
    assert c.status.value == "PASS" and "MCS, theta = 0.33333333" in c.message, c.message
    assert c.measured < 1e-3 * c.limit, c.message


# ---------------------------------------------------------------- honest twins tried beside them
# Each must be counted ADI with every structure and audit check and the witness PASS.
HONEST = {
    # Thomas-like LAPACK pair, factors computed once per direction and reused across steps
    # (a factor the recorder fingerprints at dgttrf and looks up by content at dgttrs)
    "gttrf_cached": ("""            return solve_banded((1, 1), bands["x"], rhs)""",
                     """            return _gt("x", bands["x"], rhs)"""),
    # the in-place LAPACK routine called positionally, the solution read from the caller's buffer
    "dgtsv_positional_in_place": ("""            return solve_banded((1, 1), bands["x"], rhs)""",
                                  """            rhs = np.asfortranarray(rhs)   # dgtsv writes b in place only when Fortran-ordered
            _dgtsv(bands["x"][2, :-1].copy(), bands["x"][1].copy(), bands["x"][0, 1:].copy(), rhs, 0, 0, 0, 1)
            return rhs"""),
}
HONEST_HELPERS = '''

from scipy.linalg.lapack import dgttrf as _dgttrf, dgttrs as _dgttrs, dgtsv as _dgtsv
_FAC = {}


def _gt(key, ab, rhs):
    if key not in _FAC or _FAC[key][0].shape != ab[1].shape:
        _FAC[key] = _dgttrf(ab[2, :-1], ab[1], ab[0, 1:])[:5]
    dl, d, du, du2, ipiv = _FAC[key]
    x, info = _dgttrs(dl, d, du, du2, ipiv, rhs)
    return x
'''


@pytest.mark.parametrize("kind", sorted(HONEST))
def test_honest_thomas_like_variant_passes(tmp_path, kind):
    old, new = HONEST[kind]
    src = (GOLD / "adi_solver.py").read_text()
    assert src.count(old) == 1
    src = src.replace(old, new) + HONEST_HELPERS
    checks, J, _ = judge(tmp_path, src, STEP_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    bad = {k: c.message for k, c in checks.items() if c.status.value in ("FAIL", "REVIEW")}
    assert not bad, bad
    assert checks["structure.adi_operator"].status.value == "PASS"
    assert checks["witness.benchmark_step"].status.value == "PASS"


# ---------------------------------------------------------------- static tripwire: aliases
# library_assignments only followed names imported from numpy/scipy; an alias or a
# sys.modules lookup slipped past it (the run-time snapshot and residual check still apply).
ALIASED_PATCHES = {
    "alias": "import scipy.linalg\nL = scipy.linalg\nL.solve_banded = print\n",
    "sys_modules": "import sys\nimport scipy.linalg\nsys.modules['scipy.linalg._basic'].get_lapack_funcs = print\n",
    "loop_target": "import numpy as np\nfor m in (np.linalg,):\n    m.solve = print\n",
    "getattr_alias": "import numpy as np\nlin = getattr(np, 'linalg')\nlin.solve = print\n",
    "setattr_sys_modules": "import sys\nsetattr(sys.modules['numpy'], 'nonzero', print)\n",
}
HONEST_ASSIGNMENTS = ("import numpy as np\nimport sys\nA = np.zeros(3)\nA[0] = 1\nA.flags.writeable = False\n"
                      "mod = sys.modules[__name__]\nmod.CACHE = 1\nclass P:\n    pass\np = P()\np.a = np.pi\n"
                      "q = np.pi\nfor v in np.arange(3):\n    A[int(v)] = q\nX, Y = np.meshgrid(A, A)\nX[0] = 2\n")


@pytest.mark.parametrize("kind", sorted(ALIASED_PATCHES))
def test_library_patched_through_an_alias_is_flagged(kind):
    import ast
    from test_adi_support import grader
    assert grader().library_assignments(ast.parse(ALIASED_PATCHES[kind]))


def test_honest_assignments_are_not_flagged():
    import ast
    from test_adi_support import grader
    assert grader().library_assignments(ast.parse(HONEST_ASSIGNMENTS)) == []
