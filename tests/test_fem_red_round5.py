"""Red team, round 5: FEM's tamper comparison and its fast path (second engineer, source in hand).

The comparison skips a dict whose PEP 509 version tag is unchanged since its last clean
comparison.  The tag itself behaves (a self-test at driver start; every mutation path of a
module or class dict bumps it, tamper-after-a-clean-call in test_fem_red_recorder.py); what
the comparison does not see at all (a function's __code__/defaults/closure, the recorder's
own state) rests on the static introspection tripwire (problem_spec.md, "Assumed, not
proven").  Attacks here go around that tripwire without a dunder or a flagged attribute:
- `from sys import modules`: sys.modules["__main__"] is the child driver ("__main__" is a
  harmless dunder to the scan); its _ST["tamper"] list is cleared after SuperLU's gssv was
  swapped for a hand-written elimination for one spsolve and put back;
- `from operator import attrgetter as ag` (an alias: the scan knew attrgetter by name only)
  with a computed dunder: ag("__" + "globals__")(scipy.linalg.solve) is the recorder's wrapper's
  globals, the same _ST.
- a trace function installed through the standard `trace` module (Trace().runfunc; no settrace
  spelled) that, inside the recorder's _tamper_compare, sets frame.f_lineno to jump over the
  snapshot comparison: the swapped gssv went unreported (fixed at run time: an audit hook reports
  every sys.settrace / setprofile in a job as a tamper);
- b handed over as an object whose __array__ installs a self-restoring hand-written gssv: the
  recorder converts it after its comparison (fixed: compared again before the library runs);
- cyclic garbage whose __del__ installs the fake when a collection lands inside the recorder
  (fixed: no automatic collection during an outermost call);
- spsolve(..., use_umfpack=obj) with a __bool__ that installs the fake: the library asks it
  after every comparison (fixed: every argument the recorder does not record is handed over as
  its own plain copy, anything else makes the call unobservable);
- a debugger scripted through a StringIO: pdb.Pdb(stdin=io.StringIO("up\\n" * 40 + "!_ST[...]..."))
  .set_trace() goes up to the oldest frame, the driver's module, and clears the same list.
Before the fixes these graded 1.0 under --strict with every check PASS (no REVIEW line): a
hand-written solve dressed up as a library call (the finaliser: 0.0 by the determinism check
alone, because it fired in some calls only).  Honest twins: ordinary from-imports (`from scipy.linalg import
solve as s`, `from sys import float_info`, `from operator import itemgetter`, `from math import *`).
"""
import ast

from test_fem_support import assert_scores_one_with_proof, build, check, grade, grader, solver_source, status_of

HAND = '\n\ndef _hand(a, b, *args, **kwargs):\n    """hand-written banded Gaussian elimination (bandwidth 3) of a dense a."""\n    import numpy as np\n    W = np.array(a, dtype=float)\n    x = np.array(b, dtype=float).reshape(-1)\n    m = x.size\n    for k in range(m - 1):\n        hi = min(m, k + 4)\n        f = W[k + 1:hi, k] / W[k, k]\n        W[k + 1:hi, k:hi] -= f[:, None] * W[k, k:hi]\n        x[k + 1:hi] -= f * x[k]\n    for k in range(m - 1, -1, -1):\n        hi = min(m, k + 4)\n        x[k] = (x[k] - W[k, k + 1:hi] @ x[k + 1:hi]) / W[k, k]\n    return x\n'

# gssv swapped for the hand-written solve for one spsolve, then put back; `state()` is the
# recorder's _ST (None outside the grader: the study itself runs the same hand-written solve)
SWAP = '''import scipy.sparse.linalg._dsolve.linsolve as _ls
    real = _ls._superlu.gssv
    Ad = A.toarray()
    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):
        return _hand(Ad, b_), 0
    _ls._superlu.gssv = fake
    try:
        x = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    finally:
        _ls._superlu.gssv = real
        st = state()
        if st is not None:
            st["tamper"].clear()'''

CASES = {
    "from-sys-modules": (SWAP, HAND + '''
import scipy.sparse.linalg
from sys import modules as _M


def state():
    return getattr(_M["__main__"], "_ST", None)
'''),
    "attrgetter-alias": (SWAP, HAND + '''
import scipy.sparse.linalg
from operator import attrgetter as _ag


def state():
    return _ag("__" + "globals__")(scipy.linalg.solve).get("_ST")
'''),
    # a debugger driven by a script: no flagged name (pdb, Pdb, StringIO); "up" to the oldest
    # frame, the driver's module, where `_ST` is a global
    "pdb-script": (SWAP, HAND + '''
import io
import pdb
import scipy.sparse.linalg


class _Box:
    def clear(self):
        cmds = "up\\n" * 40 + "!_ST['tamper'].clear() if '_ST' in dir() else None\\ncontinue\\n"
        pdb.Pdb(stdin=io.StringIO(cmds), stdout=io.StringIO(), readrc=False).set_trace()
        return None


def state():
    return {"tamper": _Box()}
'''),
    # a trace function installed by the standard `trace` module (no settrace spelled) that jumps
    # (frame.f_lineno = ...) over the tamper comparison's snapshot loop inside the recorder
    "trace-jump": (SWAP.replace("x = scipy.sparse.linalg.spsolve(A.tocsc(), b)",
                                "x = _traced(scipy.sparse.linalg.spsolve, A.tocsc(), b)"), HAND + '''
import linecache
import trace
import scipy.sparse.linalg


def _lt(frame, why, arg):
    if why == "line":
        lines = sorted({ln for _, _, ln in frame.f_code.co_lines() if ln})
        hit = [ln for ln in lines if "_containers_tampered()" in linecache.getline(frame.f_code.co_filename, ln)]
        target = hit[0] if hit else lines[-3]
        if frame.f_lineno < target:
            frame.f_lineno = target
    return _lt


def _gt(frame, why, arg):
    if why == "call" and frame.f_code.co_name == "_tamper_compare":
        return _lt
    return None


def _traced(f, *args):
    t = trace.Trace(count=0, trace=0)
    t.donothing = 0
    t.globaltrace = _gt
    return t.runfunc(f, *args)


def state():
    return None
'''),
    # b handed over as an object whose __array__ (run by the recorder while it owns the operand,
    # after its tamper comparison) installs a self-restoring hand-written gssv
    "array-hook": ('''import scipy.sparse.linalg._dsolve.linsolve as _ls
    real = _ls._superlu.gssv
    Ad = A.toarray()
    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):
        _ls._superlu.gssv = real
        return _hand(Ad, b_), 0
    class Rhs:
        def __array__(self, dtype=None, copy=None):
            _ls._superlu.gssv = fake
            return np.array(b, dtype=dtype)
    try:
        x = scipy.sparse.linalg.spsolve(A.tocsc(), Rhs())
    finally:
        _ls._superlu.gssv = real''', HAND + "\nimport scipy.sparse.linalg\n"),
    # honest twin: an operand that converts itself (the same class, no swap)
    "array-honest": ('''class Rhs:
        def __array__(self, dtype=None, copy=None):
            return np.array(b, dtype=dtype)
    x = scipy.sparse.linalg.spsolve(A.tocsc(), Rhs())''', "\nimport scipy.sparse.linalg\n"),
    # a flag the recorder does not own (spsolve's use_umfpack) as an object whose __bool__, asked
    # by spsolve itself after the recorder's comparisons, installs a self-restoring hand solve
    "flag-bool": ('''import scipy.sparse.linalg._dsolve.linsolve as _ls
    real = _ls._superlu.gssv
    Ad = A.toarray()
    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):
        _ls._superlu.gssv = real
        return _hand(Ad, b_), 0
    class No:
        def __bool__(self):
            _ls._superlu.gssv = fake
            return False
    try:
        x = scipy.sparse.linalg.spsolve(A.tocsc(), b, use_umfpack=No())
    finally:
        _ls._superlu.gssv = real''', HAND + "\nimport scipy.sparse.linalg\n"),
    # honest twin: plain flags the recorder does not own (a string, a bool, an options dict)
    "flags-honest": ('''lu = scipy.sparse.linalg.splu(A.tocsc(), permc_spec="NATURAL", options=dict(Equil=False))
    x = lu.solve(b)
    x = scipy.sparse.linalg.spsolve(A.tocsc(), b, permc_spec="MMD_AT_PLUS_A", use_umfpack=False)''',
                     "\nimport scipy.sparse.linalg\n"),
    # the control: the same swap, the tamper list left alone (the fake did run inside the call)
    "swap-not-hidden": (SWAP, HAND + '\nimport scipy.sparse.linalg\n\n\ndef state():\n    return None\n'),
    # honest: ordinary from-imports, positional arguments
    "from-imports-honest": ('x = _solve(A.toarray(), b, False, False, False, True, "pos")\n    '
                            'assert _ig(0)([float_info.epsilon]) > 0 and pi > 3',
                            '\nfrom scipy.linalg import solve as _solve\nfrom sys import float_info\n'
                            'from operator import itemgetter as _ig\nfrom math import *\n'),
}


def _graded(name):
    body, extra = CASES[name]
    sub = build(f"red5-{name}", solver_source(body, extra))
    rc, out, err, doc, keys = grade(sub, "--strict")
    assert rc in (0, 1), err[-2000:]
    return doc, keys, status_of(doc)


def test_recorder_state_through_from_sys_import_modules_is_review():
    doc, keys, st = _graded("from-sys-modules")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["static.introspection"] == "REVIEW"
    assert "modules" in check(doc, "static.introspection")["message"]


def test_recorder_state_through_an_attrgetter_alias_is_review():
    doc, keys, st = _graded("attrgetter-alias")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["static.introspection"] == "REVIEW"
    assert "attrgetter" in check(doc, "static.introspection")["message"]


def test_recorder_state_through_a_scripted_debugger_is_review():
    doc, keys, st = _graded("pdb-script")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["static.introspection"] == "REVIEW"
    assert "pdb" in check(doc, "static.introspection")["message"]


def test_a_trace_function_jumping_over_the_tamper_comparison_is_not_a_pass():
    # before the fix: 1.0 under --strict, every check PASS (the jump skipped the comparison of
    # the swapped gssv); the trace module spells no flagged name
    doc, keys, st = _graded("trace-jump")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["provenance.library_intact"] == "REVIEW"
    assert "sys.settrace" in check(doc, "provenance.library_intact")["message"]


def test_the_swap_itself_is_seen_by_the_tamper_comparison():
    doc, keys, st = _graded("swap-not-hidden")
    assert st["provenance.library_intact"] == "REVIEW", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert "gssv" in check(doc, "provenance.library_intact")["message"]
    assert st["static.introspection"] == "PASS"


def test_from_imports_that_reach_internals_are_flagged_however_aliased():
    for src in ("from sys import modules as M\nM['__main__']._ST\n",
                "from sys import _getframe as g\ng(1)\n",
                "from sys import settrace, setprofile\n",
                "from threading import settrace as t\n",
                "from sys import _current_frames\n",
                "from operator import attrgetter as ag\nag('f_' + 'locals')\n",
                "from operator import methodcaller as mc\n",
                "from sys import *\nmodules['__main__']\n",
                "from operator import *\n", "import pdb\n", "from bdb import Bdb\n"):
        [rec] = grader.introspection_audit(ast.parse(src))
        assert rec.status.name == "REVIEW", (src, rec.message)


def test_ordinary_from_imports_pass_the_tripwire():
    for src in ("from scipy.linalg import solve as s\n", "from sys import float_info, maxsize\n",
                "from operator import itemgetter, mul\n", "from math import *\n",
                "from functools import reduce, partial\n", "from numpy import *\n"):
        [rec] = grader.introspection_audit(ast.parse(src))
        assert rec.status.name == "PASS", (src, rec.message)


def test_honest_from_imports_score_one():
    body, extra = CASES["from-imports-honest"]
    assert_scores_one_with_proof(build("red5-from-imports-honest", solver_source(body, extra)))


def test_an_operand_converting_itself_cannot_swap_the_library_unseen():
    # before the fix: 1.0 under --strict, every check PASS (the __array__ ran after the comparison)
    doc, keys, st = _graded("array-hook")
    assert keys["SCORE"] == "0.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    assert st["provenance.library_intact"] == "REVIEW"
    assert "gssv" in check(doc, "provenance.library_intact")["message"]


def test_an_operand_converting_itself_honestly_scores_one():
    body, extra = CASES["array-honest"]
    assert_scores_one_with_proof(build("red5-array-honest", solver_source(body, extra)))


# Cyclic garbage whose __del__ installs a (self-restoring, output-perturbing: a witness that it
# ran) hand-written gssv when a collection lands inside the recorder after its comparison; each
# too-early collection re-arms the next one ~10 allocations later (690 live lists held per step).
GC_BODY = '''import scipy.sparse.linalg._dsolve.linsolve as _ls
    real = _ls._superlu.gssv
    Ad = A.toarray()
    def fake(N, nnz, data, indices, indptr, b_, flag, options=None):
        _ls._superlu.gssv = real
        return _hand(Ad, b_) * (1 + 1e-6), 0
    _GC.update(real=real, fake=fake, on=True, keep=[], steps=0)
    _arm()
    try:
        x = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    finally:
        _GC["on"] = False
        _ls._superlu.gssv = real
        _GC["keep"] = []'''
GC_EXTRA = HAND + '''
import traceback
import scipy.sparse.linalg
import scipy.sparse.linalg._dsolve.linsolve as _ls0
_GC = {"on": False, "steps": 0}


class _Bomb:
    def __init__(self):
        self.me = self

    def __del__(self):
        if not _GC["on"]:
            return
        names = [fs.name for fs in traceback.extract_stack()]
        if "_observe" in names and "_tampered" not in names and "_tamper_compare" not in names:
            _ls0._superlu.gssv = _GC["fake"]
            _GC["on"] = False
            return
        if _GC["steps"] < 5000:
            _arm()


def _arm():
    _GC["steps"] += 1
    _GC["keep"].append([[] for _ in range(690)])
    _Bomb()
'''


def test_a_finaliser_cannot_run_inside_a_recorded_call():
    # Before the fix the fake ran inside some calls and not others: 0.0 by provenance.deterministic
    # FAIL alone (n = 512: two calls differ by 1.1e-7; 5.9e-10 with an unperturbed hand solve),
    # library_intact and recorded_solves PASS - the swap itself went unseen.  Automatic collection
    # is off for the outermost call now: the library's own spsolve is what is graded, 1.0.
    assert_scores_one_with_proof(build("red5-gc-bomb", solver_source(GC_BODY, GC_EXTRA)))


def test_a_flag_object_asked_by_the_library_cannot_swap_it_unseen():
    # before the fix: 1.0 under --strict, every check PASS (spsolve asked the flag's __bool__ after
    # every comparison of the recorder)
    doc, keys, st = _graded("flag-bool")
    bad = [c for c in doc["checks"] if c["status"] not in ("PASS", "INFO")]
    assert keys["SCORE"] == "0.0", bad
    assert any("use_umfpack" in c["message"] for c in bad), bad


def test_plain_flags_the_recorder_does_not_own_score_one():
    body, extra = CASES["flags-honest"]
    assert_scores_one_with_proof(build("red5-flags-honest", solver_source(body, extra)))
