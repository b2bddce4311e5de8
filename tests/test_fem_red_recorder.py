"""Red team of issue 21's FEM recorder (second engineer, source in hand).

Attacks: a hand-written solve handed to the library so that a recorded library call returns
it (it solves K u = F to round-off, so only the recorder's provenance can tell), by ways that
run submitted code after the recorder's pre-call tamper comparison or change what the library
looks up without reassigning a module attribute:
- scipy's LAPACK memo (get_lapack_funcs.memo) changed in place: the library fetches a
  Python "routine" that is a hand-written elimination;
- a warnings.showwarning hook (spsolve warns for a COO matrix) swapping SuperLU's gssv
  inside the call, restored after it;
- a warning filter whose message pattern is an object with a match() method (the C
  warnings machinery calls it inside the call): the same swap, self-restoring;
- a timer signal whose handler fires inside the recorder (after its comparison) and swaps
  gssv for a self-restoring fake (witness: the fake perturbs its output, so a recorded
  solve that it answered fails provenance.recorded_solves).
Honest twins: factors reused across calls (splu, factorized, lu_factor cached per size),
positional flags, 2-D right-hand sides, a solve in a worker thread, COO to spsolve,
lu_factor(overwrite_a=True), banded Cholesky.
"""
from test_fem_support import assert_scores_one_with_proof, build, check, grade, solver_source, status_of

HAND = '\n\ndef _hand(a, b, *args, **kwargs):\n    """hand-written banded Gaussian elimination (bandwidth 3) of a dense a."""\n    import numpy as np\n    W = np.array(a, dtype=float)\n    x = np.array(b, dtype=float).reshape(-1)\n    m = x.size\n    for k in range(m - 1):\n        hi = min(m, k + 4)\n        f = W[k + 1:hi, k] / W[k, k]\n        W[k + 1:hi, k:hi] -= f[:, None] * W[k, k:hi]\n        x[k + 1:hi] -= f * x[k]\n    for k in range(m - 1, -1, -1):\n        hi = min(m, k + 4)\n        x[k] = (x[k] - W[k, k + 1:hi] @ x[k + 1:hi]) / W[k, k]\n    return x\n'

CASES = {
    'code-swap': ('x = scipy.linalg.solve(A.toarray(), b)',
        HAND + '\nimport scipy.linalg as _sl\ngetattr(_sl.solve, "__wrapped__", _sl.solve).__code__ = _hand.__code__\n'),
    'memo-dict': ('Ad = A.toarray()\n    _DENSE[Ad.shape[0]] = Ad\n    ab = band(A, 0, 3)\n    x = scipy.linalg.solveh_banded(ab, b)          # fills the memo\n    import scipy.linalg.lapack as _lp\n    memo = _lp.get_lapack_funcs.memo\n    def fake(a1, b1, lower=0, overwrite_ab=0, overwrite_b=0):\n        return a1, _hand(_DENSE[b1.shape[0]], b1), 0\n    for k in list(memo):\n        if "pbsv" in k[0]:\n            memo[k] = (fake,)\n    x = scipy.linalg.solveh_banded(ab, b)',
        HAND + '\n_DENSE = {}\n'),
    'warn-hook': ('import warnings\n    import scipy.sparse.linalg._dsolve.linsolve as _ls\n    real = _ls._superlu.gssv\n    Ad = A.toarray()\n    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):\n        return _hand(Ad, b_), 0\n    def hook(*args, **kwargs):\n        _ls._superlu.gssv = fake\n    old = warnings.showwarning\n    with warnings.catch_warnings():\n        warnings.simplefilter("always")\n        warnings.showwarning = hook\n        try:\n            x = scipy.sparse.linalg.spsolve(A.tocoo(), b)\n        finally:\n            _ls._superlu.gssv = real\n            warnings.showwarning = old',
        HAND + '\nimport scipy.sparse.linalg\n'),
    'signal-timer': ('import signal\n    import scipy.sparse.linalg._dsolve.linsolve as _ls\n    real = _ls._superlu.gssv\n    Ad = A.toarray()\n    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):\n        _ls._superlu.gssv = real\n        return _hand(Ad, b_) * (1 + 1e-6), 0\n    def handler(signum, frame):\n        if frame.f_code.co_name in ("_own", "_own_sparse", "_sparse_entries", "_ints", "_effective",\n                                    "_observe", "_nested", "_systems", "_bind", "_plain", "_own_array"):\n            _ls._superlu.gssv = fake\n    old = signal.signal(signal.SIGALRM, handler)\n    signal.setitimer(signal.ITIMER_REAL, 2e-5, 2e-5)\n    try:\n        x = scipy.sparse.linalg.spsolve(A.tocsc(), b)\n    finally:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n        signal.signal(signal.SIGALRM, old)\n        _ls._superlu.gssv = real',
        HAND + '\nimport scipy.sparse.linalg\n'),
    'splu-cache': ('x = _cached_lu(A.shape[0], A).solve(b)',
        '\n_LU = {}\ndef _cached_lu(m, A):\n    if m not in _LU:\n        _LU[m] = scipy.sparse.linalg.splu(A.tocsc())\n    return _LU[m]\nimport scipy.sparse.linalg\n'),
    'factorized-cache': ('x = _cached(A.shape[0], A)(b)',
        '\n_F = {}\ndef _cached(m, A):\n    if m not in _F:\n        _F[m] = scipy.sparse.linalg.factorized(A.tocsc())\n    return _F[m]\nimport scipy.sparse.linalg\n'),
    'thread-solve': ('import concurrent.futures as cf\n    with cf.ThreadPoolExecutor(1) as ex:\n        x = ex.submit(scipy.sparse.linalg.spsolve, A.tocsc(), b).result()',
        '\nimport scipy.sparse.linalg\n'),
    'coo-spsolve': ('x = scipy.sparse.linalg.spsolve(A.tocoo(), b)',
        '\nimport scipy.sparse.linalg\n'),
    'lu-overwrite-a': ('Kd = A.toarray()\n    lu, piv = scipy.linalg.lu_factor(Kd, overwrite_a=True)\n    Kd = lu if lu is not Kd and not np.shares_memory(lu, Kd) else Kd\n    x = scipy.linalg.lu_solve((Kd, piv), b)',
        ''),
    'cho-banded': ('cb = scipy.linalg.cholesky_banded(band(A, 0, 3))\n    x = scipy.linalg.cho_solve_banded((cb, False), b)',
        ''),
    'cho-positional': ('c = scipy.linalg.cho_factor(A.toarray(), True)\n    x = scipy.linalg.cho_solve(c, b)',
        ''),
    'lu-factor-cache': ('x = scipy.linalg.lu_solve(_lf(A.shape[0], A), b)',
        '\n_L = {}\ndef _lf(m, A):\n    if m not in _L:\n        _L[m] = scipy.linalg.lu_factor(A.toarray())\n    return _L[m]\n'),
    'solve-2d-rhs': ("x = scipy.linalg.solve(A.toarray(), b[:, None], assume_a='pos')[:, 0]",
        ''),
    'solve-banded-positional': ('x = scipy.linalg.solve_banded((3, 3), band(A, 3, 3), b, False, False, True)',
        ''),
}
# A warning filter whose message "pattern" is an object with a match() method: the C warnings
# machinery calls it inside spsolve (which warns for a COO matrix); it swaps gssv for a
# hand-written solve that puts the real routine back as soon as it has run.
CASES["filter-matcher"] = ('''import warnings
    import scipy.sparse.linalg._dsolve.linsolve as _ls
    real = _ls._superlu.gssv
    Ad = A.toarray()
    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):
        _ls._superlu.gssv = real
        return _hand(Ad, b_), 0
    class Matcher:
        def match(self, text):
            _ls._superlu.gssv = fake
            return True
    with warnings.catch_warnings():
        warnings.filters.insert(0, ("ignore", Matcher(), Warning, None, 0))
        x = scipy.sparse.linalg.spsolve(A.tocoo(), b)''', HAND + "\nimport scipy.sparse.linalg\n")

# honest: warnings recorded around the solve (catch_warnings(record=True) installs list.append
# as warnings' hook: a C function, no submitted code) and a module-level "ignore" filter
CASES["warnings-record"] = ('''import warnings
    warnings.filterwarnings("ignore", message="spsolve requires")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = scipy.sparse.linalg.spsolve(A.tocoo(), b)
    assert caught''', "\nimport scipy.sparse.linalg\n")

# The comparison's fast path skips a dict whose version tag has not changed since its last
# clean comparison: a module attribute and a class attribute changed only AFTER a first,
# clean library call (their tags already recorded clean) must still be reported at the next.
CASES["tamper-after-a-clean-call"] = ('''x = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    import scipy.sparse.linalg._dsolve.linsolve as _ls
    _ls.is_pydata_spmatrix = (lambda f: lambda m: f(m))(_ls.is_pydata_spmatrix)
    scipy.sparse.csc_matrix.probe_attribute = 1
    x = scipy.sparse.linalg.spsolve(A.tocsc(), b)''', "\nimport scipy.sparse.linalg\n")

HONEST = ("warnings-record", "splu-cache", "factorized-cache", "thread-solve", "coo-spsolve", "lu-overwrite-a", "cho-banded",
          "cho-positional", "lu-factor-cache", "solve-2d-rhs", "solve-banded-positional")


def _graded(name):
    body, extra = CASES[name]
    sub = build(f"red21-{name}", solver_source(body, extra))
    rc, out, err, doc, keys = grade(sub, "--strict")
    assert rc in (0, 1), err[-2000:]
    return doc, keys, status_of(doc)


def test_code_swap_of_the_wrapped_function_is_review():
    # __code__ of the library function under the recorder's wrapper replaced by a hand-written
    # elimination: no attribute is reassigned; the static tripwire is what sees it.
    doc, keys, st = _graded("code-swap")
    assert keys["SCORE"] == "0.0" and st["static.introspection"] == "REVIEW"


def test_lapack_memo_changed_in_place_is_review():
    doc, keys, st = _graded("memo-dict")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["provenance.library_intact"] == "REVIEW"
    assert "get_lapack_funcs.memo" in check(doc, "provenance.library_intact")["message"]


def test_warning_hook_swapping_a_routine_mid_call_is_review():
    doc, keys, st = _graded("warn-hook")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["provenance.library_intact"] == "REVIEW"
    assert "warnings.showwarning" in check(doc, "provenance.library_intact")["message"]


def test_warning_filter_running_code_mid_call_is_review():
    doc, keys, st = _graded("filter-matcher")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["provenance.library_intact"] == "REVIEW"
    assert "warnings.filters" in check(doc, "provenance.library_intact")["message"]


def test_change_after_a_clean_call_is_still_reported():
    doc, keys, st = _graded("tamper-after-a-clean-call")
    assert st["provenance.library_intact"] == "REVIEW", [c for c in doc["checks"] if c["status"] != "PASS"]
    msg = check(doc, "provenance.library_intact")["message"]
    assert "is_pydata_spmatrix" in msg and "probe_attribute" in msg, msg


def test_signal_handler_cannot_run_inside_the_recorder():
    # The handler acts only inside the recorder's own functions, so outside the grader the
    # study is a genuine spsolve.  Under the grader, signals are held for the call: the
    # (output-perturbing) fake never runs and the library's genuine solve scores 1.0.  Before
    # the fix the fake ran: provenance.recorded_solves FAIL - with an exact hand-written
    # fake instead, 1.0 with no REVIEW line.
    body, extra = CASES["signal-timer"]
    assert_scores_one_with_proof(build("red21-signal-timer", solver_source(body, extra)))


def test_honest_twins_score_one():
    bad = {}
    for name in HONEST:
        body, extra = CASES[name]
        try:
            assert_scores_one_with_proof(build(f"red21-{name}", solver_source(body, extra)))
        except AssertionError as exc:
            bad[name] = str(exc)[:300]
    assert not bad, bad


def test_import_module_of_gc_is_caught_by_the_static_tripwire():
    # importlib.import_module("gc") reached gc.callbacks (code run at every collection,
    # inside a library call) with static.introspection PASS before.
    import ast
    from test_fem_support import grader
    for src in ('import importlib\ngc = importlib.import_module("gc")\ngc.callbacks.append(print)\n',
                'from importlib import import_module\nm = import_module("g" + "c")\n'):
        [rec] = grader.introspection_audit(ast.parse(src))
        assert rec.status.name == "REVIEW" and "import_module" in rec.message, rec.message
    [rec] = grader.introspection_audit(ast.parse('import importlib\nm = importlib.import_module("scipy.sparse")\n'))
    assert rec.status.name == "PASS", rec.message
