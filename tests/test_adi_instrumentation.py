"""The run-time instrumentation sees the less common legal entry points too:
SuperLU objects from splu (factorisation and .solve both counted, .solve
poisoned in the audit) and LAPACK routines fetched with get_lapack_funcs."""
from test_adi_support import grade, gold_variant_source, reviews, status, submission_from_solver


def _counts(doc):
    return {row["run"]: row["solves"] for row in doc["keys"]["observed_solves"]}


def test_splu_on_one_dimensional_lines(tmp_path):
    src = gold_variant_source("from scipy.linalg import solve_banded",
                              "import scipy.sparse as sp\nfrom scipy.sparse.linalg import splu")
    factor = ('    lus = {key: splu(sp.diags([ab[2, :-1], ab[1], ab[0, 1:]], [-1, 0, 1]).tocsc())\n'
              '           for key, ab in bands.items()}\n\n    def implicit(rhs, t, axis):')
    src = src.replace("    def implicit(rhs, t, axis):", factor)
    src = src.replace('solve_banded((1, 1), bands["x"], rhs)', 'lus["x"].solve(rhs)')
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T', 'lus["y"].solve(rhs.T).T')
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 1.0 and not reviews(doc), [c for c in doc["checks"] if c["status"] != "PASS"]
    assert _counts(doc)["benchmark h=0.1"] == 42           # 2 factorisations + 40 SuperLU.solve
    st = status(doc)
    assert st["audit.causal"] == "PASS" and st["structure.bandwidth"] == "PASS"


def test_get_lapack_funcs_is_observed(tmp_path):
    src = gold_variant_source("from scipy.linalg import solve_banded",
                              "from scipy.linalg import get_lapack_funcs")
    call = ('get_lapack_funcs(("gtsv",), (rhs,))[0](bands["{d}"][2, :-1], bands["{d}"][1], '
            'bands["{d}"][0, 1:], {r})[3]')
    src = src.replace('solve_banded((1, 1), bands["x"], rhs)', call.format(d="x", r="rhs"))
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T', call.format(d="y", r="rhs.T") + ".T")
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 1.0 and not reviews(doc)
    assert _counts(doc)["benchmark h=0.1"] == 40
    assert status(doc)["audit.causal"] == "PASS"


def _extractors():
    """The driver's recorder core (captured references, owning, binding) and its
    dimension/half-bandwidth extractors, executed standalone.  Each extractor is wrapped so
    that it is handed what the recorder hands it: the operands owned first (_own)."""
    import base64
    import json
    import sys
    import threading

    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    from test_adi_support import grader
    body = grader().DRIVER_BODY
    ns = {"_np": np, "_sys": sys, "_sp": sp, "_spl": spl, "_BW_CAP": 4096, "_b64": base64, "_json": json,
          "_LOCK": threading.RLock(), "_SolverProxy": type("_SolverProxy", (), {})}
    exec(body[body.index("# -- references captured"):body.index("_ENTRY = [")], ns)
    own = ns["_own"]
    return {k: (lambda f: lambda args, kw: f(tuple(own(a) for a in args), kw))(v) if k.startswith("_x_") else v
            for k, v in ns.items()}


def test_dimension_and_half_bandwidth_extractors():
    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl
    x = _extractors()
    tri = np.zeros((3, 6))
    tri[0, 1:], tri[1], tri[2, :-1] = -1, 2, -1
    assert x["_x_banded"](((1, 1), tri, np.ones(6)), {}) == (6, 1, False)
    wide = np.zeros((5, 6))
    wide[2] = 2
    assert x["_x_banded"](((2, 2), wide, np.ones(6)), {})[1] == 0      # zero outer rows do not count
    wide[0, 2:] = 1
    assert x["_x_banded"](((2, 2), wide, np.ones(6)), {})[1] == 2
    up = np.zeros((2, 6))
    up[0, 1:], up[1] = -1, 2
    assert x["_x_hbanded"]((up, np.ones(6)), {}) == (6, 1, False)
    assert x["_x_tri"]((tri[2, :-1], tri[1], tri[0, 1:], np.ones(6)), {}) == (6, 1, False)
    assert x["_x_gbsv"]((1, 1, np.zeros((4, 6)), np.ones(6)), {}) == (6, 1, False)
    assert x["_x_dense"]((np.eye(4) + np.diag([1.0, 1.0], 2),), {}) == (4, 2, False)
    assert x["_x_dense"]((np.stack([np.eye(5)] * 3),), {}) == (5, 0, False)     # batched: dimension n
    A = sp.diags([[1.0] * 5, [2.0] * 6, [1.0] * 5], [-1, 0, 1]).tocsc()
    assert x["_x_sparse"]((A, np.ones(6)), {}) == (6, 1, False)
    assert x["_x_sparse"]((sp.kron(A, sp.identity(6)).tocsc(),), {}) == (36, 6, False)
    assert x["_x_sparse"]((spl.aslinearoperator(A), np.ones(6)), {}) == (6, 1, False)
    assert x["_x_sylvester"]((np.eye(3), np.eye(3), np.ones((3, 3))), {})[0] == 9
    assert x["_x_circulant"]((np.array([2.0, -1, 0, -1]), np.ones(4)), {}) == (4, 3, False)
    assert x["_x_factor"](((np.eye(5), np.arange(5)), np.ones(5)), {}) == (5, None, True)


def test_factor_cache_across_calls_is_not_poisoned(tmp_path):
    """A legitimate solver caching its LU factors at module level across solve()
    calls: the grader runs its jobs in a random order, the causal audits
    included, and re-imports the submission for every job, so a factor
    poisoned in an audit never reaches a clean run."""
    src = gold_variant_source("from scipy.linalg import solve_banded",
                              "from scipy.linalg import lu_factor, lu_solve\n\n_LU = {}")
    factor = ('    for key, ab in bands.items():\n'
              '        ck = (key, n, round(k, 12), round(ab[1, 0], 12))\n'
              '        if ck not in _LU:\n'
              '            _LU[ck] = lu_factor(np.diag(ab[1]) + np.diag(ab[0, 1:], 1) + np.diag(ab[2, :-1], -1))\n'
              '        bands[key] = _LU[ck]\n\n    def implicit(rhs, t, axis):')
    src = src.replace("    def implicit(rhs, t, axis):", factor)
    src = src.replace('solve_banded((1, 1), bands["x"], rhs)', 'lu_solve(bands["x"], rhs)')
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T', 'lu_solve(bands["y"], rhs.T).T')
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 1.0 and not reviews(doc), [c for c in doc["checks"] if c["status"] != "PASS"]
