"""Child program (embedded as text by the build; runs after common/child_driver_prologue.py)."""
from graders.common.child_driver_prologue import (_LIM, _REQ, _live_children, _os, _sys, ask,
    fork_jobs, import_libraries, send)
# -- end of source-tree preamble: the build keeps only what follows --
import time as _time
_SUBDIR = _REQ["submission_dir"]
_WORK = _os.path.dirname(_SUBDIR)
while _SUBDIR in _sys.path:          # numpy/scipy must not be shadowed by submitted files
    _sys.path.remove(_SUBDIR)
import functools as _functools
import importlib.util as _importlib_util
import subprocess as _subprocess
import_libraries(("numpy", "numpy.linalg", "numpy.ma", "numpy.polynomial", "scipy", "scipy.linalg",
                  "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse", "scipy.sparse.linalg"),
                 optional=True)
import numpy as _np
import numpy.linalg
# (the folder goes on the path in each job child only, _run_job: nothing this warm parent imports,
# the standard modules below or fork_jobs's lazy ones, may be a submitted file; ADI red team round 7
# found the same door open in the ADI driver, where base64.py/inspect.py ran before the run's go)

# ---- references bound here, before any submitted code runs ------------------------------
# The recorder calls only these (C-level numpy functions, methods of numpy's own immutable
# types, captured descriptors): a submission that reassigns numpy/scipy module or class
# attributes changes nothing the recorder reads.  The tamper check (_tampered) sees such a
# reassignment anyway: it can change what the LIBRARY computes.
import binascii as _binascii
import hashlib as _hashlib
import inspect as _inspect
import operator as _operator
import types as _types
_b2a, _a2b = _binascii.b2a_base64, _binascii.a2b_base64
_blake2b = _hashlib.blake2b
_is = _operator.is_
_nd = _np.ndarray
_np_array, _np_empty, _np_zeros, _np_concat = _np.array, _np.empty, _np.zeros, _np.concatenate
_np_arange, _np_copyto, _np_frombuffer, _np_shares = _np.arange, _np.copyto, _np.frombuffer, _np.shares_memory
_np_contig, _np_isfinite, _np_ge, _np_le = _np.ascontiguousarray, _np.isfinite, _np.greater_equal, _np.less_equal
_np_f64, _np_i32, _np_i64, _np_u64 = _np.dtype(_np.float64), _np.dtype("<i4"), _np.dtype(_np.int64), _np.dtype(_np.uint64)
_np_matrix, _np_generic, _np_nan = _np.matrix, _np.generic, _np.nan
_np_lexsort, _np_bincount, _nd_cumsum = _np.lexsort, _np.bincount, _nd.cumsum
_nd_nonzero, _nd_repeat, _nd_astype, _nd_tobytes, _nd_item = (_nd.nonzero, _nd.repeat, _nd.astype,
                                                               _nd.tobytes, _np.generic.item)
_obj_new = object.__new__
_type, _len, _map, _all, _id, _tuple = type, len, map, all, id, tuple
_tname = type.__dict__["__name__"].__get__          # a type's own name (no metaclass asked)
# The builtins this program calls, bound as its own globals (found before the builtins
# module, which the submission can reach): reassigning builtins.len changes nothing here.
(abs, all, any, bool, callable, dict, enumerate, float, getattr, hasattr, id, int, isinstance,
 issubclass, iter, len, list, map, max, memoryview, min, next, object, range, repr, set, sorted,
 str, sum, tuple, type, zip) = (abs, all, any, bool, callable, dict, enumerate, float, getattr,
                                hasattr, id, int, isinstance, issubclass, iter, len, list, map, max,
                                memoryview, min, next, object, range, repr, set, sorted, str, sum,
                                tuple, type, zip)
_ModuleType = _types.ModuleType
_MODULES = _sys.modules
import re as _re
import signal as _signal
import gc as _gc
_gc_isenabled, _gc_disable, _gc_enable = _gc.isenabled, _gc.disable, _gc.enable
_pthread_sigmask, _SIG_BLOCK, _SIG_SETMASK = _signal.pthread_sigmask, _signal.SIG_BLOCK, _signal.SIG_SETMASK
_ALL_SIGNALS = _signal.valid_signals()
import warnings as _warnings
_Pattern = _re.Pattern
# scipy's get_lapack_funcs / get_blas_funcs memoise the LAPACK/BLAS routines they hand the
# library in a dict (the `memo` of their closure): changed in place, it would hand the library
# any callable.  Each entry must hold the extension's own routine objects (the tamper check).
_MEMOS, _FORTRAN, _WRAPPERS = [], None, {}
try:
    import scipy.linalg.blas as _slb
    import scipy.linalg.lapack as _sll
    _FORTRAN = type(_sll._flapack.dgesv)
    for _lbl, _getter in (("scipy.linalg.lapack.get_lapack_funcs", _sll.get_lapack_funcs),
                          ("scipy.linalg.blas.get_blas_funcs", _slb.get_blas_funcs)):
        _memo = _types.FunctionType.__dict__["__dict__"].__get__(_getter).get("memo")
        if type(_memo) is dict:
            _MEMOS.append((_lbl + ".memo", _memo))
except Exception:
    pass
_SP = []                             # (exact sparse class, format, its instances' __dict__ getter)
_SP_ENTRY = []                       # (exact lil/dok class, format, getter, CSC class, its getter)
try:
    import scipy.sparse as _sps
    for _fmt in ("csr", "csc", "coo", "bsr", "dia"):
        for _suffix in ("_matrix", "_array"):
            _cls = getattr(_sps, _fmt + _suffix, None)
            if _cls is None:
                continue
            for _k in _cls.__mro__:
                _kd = type.__dict__["__dict__"].__get__(_k)
                if "__dict__" in _kd:
                    _SP.append((_cls, _fmt, _kd["__dict__"].__get__))
                    break
    for _fmt in ("lil", "dok"):           # read entry by entry, handed over as CSC (the format
        for _suffix in ("_matrix", "_array"):     # spsolve/splu convert them to: same arithmetic)
            _cls, _to = getattr(_sps, _fmt + _suffix, None), getattr(_sps, "csc" + _suffix, None)
            if _cls is None or _to is None:
                continue
            for _k in _cls.__mro__:
                _kd = type.__dict__["__dict__"].__get__(_k)
                if "__dict__" in _kd:
                    _SP_ENTRY.append((_cls, _fmt, _kd["__dict__"].__get__, _to,
                                      next(g for c, f, g in _SP if c is _to)))
                    break
except Exception:
    pass


_NP_SCALARS = tuple(getattr(_np, t) for t in ("bool_", "int8", "int16", "int32", "int64", "uint8",
                                              "uint16", "uint32", "uint64", "float32", "float64",
                                              "intc", "intp", "longlong"))


def _one_of(t, types):
    """t is one of types, by identity (`in` would ask a metaclass's __eq__)."""
    for s in types:
        if t is s:
            return True
    return False


def _sparse_class(t):
    for cls, fmt, getdict in _SP:
        if t is cls:
            return fmt, getdict
    return None


def _b64e(data):
    return _b2a(data, newline=False)


def _b64d(text):
    return _a2b(text)


class _Unobservable(Exception):
    """An operand the recorder cannot own without asking the submitted object."""


# Entry points by kind.  solve: (matrix, right-hand side) -> solution; factor: matrix -> a
# factorisation that a later fsolve applies; inverse: matrix -> its inverse; tri: a triangular
# solve (a recorded solve when it is one half of a Cholesky substitution); other: counted.
_LAPACK = {"gesv": ("solve", 2), "gbsv": ("solve", 2), "posv": ("solve", 1), "pbsv": ("solve", 1),
           "sysv": ("solve", 2), "gtsv": ("solve", 3), "ptsv": ("solve", 2), "getrf": ("factor", 0),
           "gbtrf": ("factor", 0), "potrf": ("factor", 0), "pbtrf": ("factor", 0),
           "getrs": ("fsolve", 0), "gbtrs": ("fsolve", 0), "potrs": ("fsolve", 0),
           "pbtrs": ("fsolve", 0), "getri": ("other", 0), "potri": ("other", 0)}
_OTHER_LAPACK = ("hesv", "gesvx", "posvx", "gbsvx", "sytrf", "sytrs", "hetrf",
                 "pttrf", "pttrs", "gels", "gelsd", "gelss", "gelsy", "trtrs", "tbtrs", "geqrf",
                 "trsv", "trsm", "tbsv")
_ITER = ("cg", "cgs", "bicg", "bicgstab", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr",
         "lsqr", "lsmr")
_NAMES = {
    "numpy.linalg": ("solve", "inv", "lstsq", "pinv", "cholesky", "qr", "tensorsolve", "tensorinv"),
    "numpy.linalg._umath_linalg": ("solve", "solve1", "inv", "cholesky_lo", "cholesky_up", "lstsq",
                                   "qr_r_raw", "qr_reduced", "qr_complete"),
    "scipy.linalg": ("solve", "solve_banded", "solveh_banded", "solve_triangular", "inv", "pinv",
                     "lstsq", "lu", "lu_factor", "lu_solve", "cho_factor", "cho_solve",
                     "cholesky", "cholesky_banded", "cho_solve_banded", "ldl", "qr",
                     "solve_toeplitz", "solve_circulant"),
    "scipy.linalg._batched_linalg": ("_solve", "_inv"),
    "scipy.linalg._flapack": tuple(p + b for p in "sdcz" for b in tuple(_LAPACK) + _OTHER_LAPACK),
    "scipy.linalg._fblas": tuple(p + b for p in "sdcz" for b in _OTHER_LAPACK),
    "scipy.sparse.linalg": ("spsolve", "splu", "spilu", "factorized", "spsolve_triangular",
                            "inv") + _ITER,
    "scipy.sparse.linalg._dsolve._superlu": ("gssv", "gstrf"),
}

# How each entry point reads its operands: parameter -> role (A: an array the recorder copies,
# S: an array or an exact scipy.sparse matrix, F: a plain flag, P: a (factor, flag) pair, L: a
# (factor, pivots) pair), the kind, the index of the solution in the output, and how the
# matrix the routine reads is found (see _effective).
_A, _S, _F, _P, _L, _CB = "A", "S", "F", "P", "L", "CB"
_OVW = {"overwrite_a": _F, "overwrite_b": _F, "overwrite_ab": _F}
_SPEC = {
    "numpy.linalg.solve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg._umath_linalg.solve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg._umath_linalg.solve1": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg.tensorsolve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "numpy.linalg._umath_linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "scipy.linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "scipy.linalg.solve": (dict(_OVW, a=_A, b=_A, lower=_F, assume_a=_F, transposed=_F), "solve",
                           None, "dense_assume"),
    "scipy.linalg._batched_linalg._solve": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "numpy.linalg.inv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg._umath_linalg.inv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg.pinv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg.tensorinv": ({"a": _A}, "inverse", None, "dense"),
    "scipy.linalg.inv": (dict(_OVW, a=_A), "inverse", None, "dense"),
    "scipy.linalg.pinv": ({"a": _A}, "inverse", None, "dense"),
    "scipy.linalg._batched_linalg._inv": ({"a": _A}, "inverse", 0, "dense"),
    "numpy.linalg.cholesky": ({"a": _A, "upper": _F}, "factor", None, "chol_np"),
    "numpy.linalg._umath_linalg.cholesky_lo": ({"a": _A}, "factor", None, "chol_lo"),
    "numpy.linalg._umath_linalg.cholesky_up": ({"a": _A}, "factor", None, "chol_up"),
    "scipy.linalg.cholesky": (dict(_OVW, a=_A, lower=_F), "factor", None, "chol"),
    "scipy.linalg.cho_factor": (dict(_OVW, a=_A, lower=_F), "factor", 0, "chol"),
    "scipy.linalg.lu_factor": (dict(_OVW, a=_A), "factor", 0, "dense"),
    "scipy.linalg.cholesky_banded": (dict(_OVW, ab=_A, lower=_F), "factor", None, "hband"),
    "scipy.linalg.lu_solve": (dict(_OVW, lu_and_piv=_L, b=_A, trans=_F), "fsolve", None, "lu_and_piv"),
    "scipy.linalg.cho_solve": (dict(_OVW, c_and_lower=_P, b=_A), "fsolve", None, "c_and_lower"),
    "scipy.linalg.cho_solve_banded": (dict(_OVW, cb_and_lower=_P, b=_A), "fsolve", None, "cb_and_lower"),
    "scipy.linalg.solve_banded": (dict(_OVW, l_and_u=_F, ab=_A, b=_A), "solve", None, "band"),
    "scipy.linalg.solveh_banded": (dict(_OVW, ab=_A, b=_A, lower=_F), "solve", None, "hband"),
    "scipy.linalg.solve_triangular": (dict(_OVW, a=_A, b=_A, trans=_F, lower=_F, unit_diagonal=_F),
                                      "tri", None, "tri"),
    "lapack.gesv": (dict(_OVW, a=_A, b=_A), "solve", 2, "dense"),
    "lapack.gbsv": (dict(_OVW, kl=_F, ku=_F, ab=_A, b=_A), "solve", 2, "gband"),
    "lapack.posv": (dict(_OVW, a=_A, b=_A, lower=_F), "solve", 1, "chol"),
    "lapack.sysv": (dict(_OVW, a=_A, b=_A, lower=_F), "solve", 2, "chol"),
    "lapack.pbsv": (dict(_OVW, ab=_A, b=_A, lower=_F), "solve", 1, "hband"),
    "lapack.gtsv": (dict(_OVW, dl=_A, d=_A, du=_A, b=_A, overwrite_dl=_F, overwrite_d=_F,
                         overwrite_du=_F), "solve", 3, "gtsv"),
    "lapack.ptsv": (dict(_OVW, d=_A, e=_A, b=_A, overwrite_d=_F, overwrite_e=_F), "solve", 2, "ptsv"),
    "lapack.getrf": (dict(_OVW, a=_A), "factor", 0, "dense"),
    "lapack.gbtrf": (dict(_OVW, ab=_A, kl=_F, ku=_F), "factor", 0, "gband"),
    "lapack.potrf": (dict(_OVW, a=_A, lower=_F, clean=_F), "factor", 0, "chol"),
    "lapack.pbtrf": (dict(_OVW, ab=_A, lower=_F), "factor", 0, "hband"),
    "lapack.getrs": (dict(_OVW, lu=_A, piv=_A, b=_A, trans=_F), "fsolve", 0, "getrs"),
    "lapack.gbtrs": (dict(_OVW, ab=_A, kl=_F, ku=_F, b=_A, ipiv=_A, trans=_F), "fsolve", 0, "gbtrs"),
    "lapack.potrs": (dict(_OVW, c=_A, b=_A, lower=_F), "fsolve", 0, "potrs"),
    "lapack.pbtrs": (dict(_OVW, ab=_A, b=_A, lower=_F), "fsolve", 0, "potrs_band"),
    "scipy.sparse.linalg.spsolve": ({"A": _S, "b": _A}, "solve", None, "sparse"),
    "scipy.sparse.linalg.splu": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.spilu": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.factorized": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.inv": ({"A": _S}, "inverse", None, "sparse"),
    "scipy.sparse.linalg._dsolve._superlu.gssv": ({"N": _F, "nzvals": _A, "colind": _A, "rowptr": _A,
                                                   "B": _A, "csc": _F}, "solve", 0, "gssv"),
    "scipy.sparse.linalg._dsolve._superlu.gstrf": ({"N": _F, "nzvals": _A, "rowind": _A, "colptr": _A},
                                                   "factor", None, "gstrf"),
    "SuperLU.solve": ({"rhs": _A, "trans": _F}, "fsolve", None, "proxy"),
    "factorized.solve": ({"rhs": _A, "trans": _F}, "fsolve", None, "proxy"),
}
# An iterative solver: its start x0 must be an observed solve's output (a start from a hidden
# solve converges at once), its preconditioner a matrix (an operator can steer the iteration
# to any vector), its callback sees copies of the iterates (it could overwrite them).
_SPEC.update({"scipy.sparse.linalg." + k: ({"A": _S, "b": _A, "x0": _A, "M": _S, "callback": _CB}, "solve", 0,
                                           "sparse") for k in _ITER})
_DIRECT_PARAMS = {        # C-level entry points (no introspectable signature)
    "numpy.linalg._umath_linalg.solve": ("a", "b"), "numpy.linalg._umath_linalg.solve1": ("a", "b"),
    "numpy.linalg._umath_linalg.inv": ("a",), "numpy.linalg._umath_linalg.cholesky_lo": ("a",),
    "numpy.linalg._umath_linalg.cholesky_up": ("a",), "numpy.linalg._umath_linalg.lstsq": ("a", "b"),
    "scipy.linalg._batched_linalg._solve": ("a", "b"), "scipy.linalg._batched_linalg._inv": ("a",),
    "scipy.sparse.linalg._dsolve._superlu.gssv": ("N", "nnz", "nzvals", "colind", "rowptr", "B", "csc",
                                                  "options"),
    "scipy.sparse.linalg._dsolve._superlu.gstrf": ("N", "nnz", "nzvals", "rowind", "colptr"),
    "SuperLU.solve": ("rhs", "trans"), "factorized.solve": ("rhs", "trans"),
}
_ST = {"depth": 0, "seq": 0, "calls": [], "n": 1, "fid": 0, "asks": 0, "tamper": []}
# A trace or profile function (sys.settrace / setprofile, however installed: the trace module,
# pdb/bdb, cProfile, threading.settrace) runs submitted code inside the recorder, after its
# tamper comparison, and a trace function can even jump over the recorder's own lines
# (frame.f_lineno = ...): red team round 5 skipped the comparison that way around a swapped
# gssv, 1.0 under --strict.  Every installation is an audit event; the hook (it cannot be
# removed) reports it as a tamper.  Nothing honest installs one (a thread start does only when
# threading.settrace / setprofile was called).
_TRACE_EVENTS = frozenset(("sys.settrace", "sys.setprofile", "sys.monitoring.register_callback",
                           "sys.monitoring.set_events", "sys.monitoring.set_local_events"))


def _audit_hook(event, args):
    if event in _TRACE_EVENTS:
        what = event + " (a trace or profile function runs submitted code inside the recorder)"
        if what not in _ST["tamper"] and _len(_ST["tamper"]) < 20:
            _ST["tamper"].append(what)


_sys.addaudithook(_audit_hook)
_FACT = {}                           # content fingerprint of a factor -> fid
_FACT_ID = {}                        # id(array of a factor) -> (fid, array): "changed" detection
_PROXY = {}                          # id(SuperLU proxy / factorized solve) -> (fid, object)
_CHOL = {}                           # fingerprint of a Cholesky factor's L / L^T -> (fid, "L" | "U")
_HALF = {}                           # fingerprint of a first substitution's output -> (fid, rhs)
_OUTS = set()                        # fingerprints of the solve outputs handed back (x0 of CG)


def _spec_key(name):
    if name.startswith(("scipy.linalg._flapack.", "scipy.linalg._fblas.")):
        return "lapack." + name.rsplit(".", 1)[-1][1:]
    return name


def _kind(name):
    s = _SPEC.get(_spec_key(name))
    return (s[1], s[2]) if s is not None else ("other", None)


def _params(name, fn):
    """The entry point's parameters as (names in positional order, keyword names, defaults),
    read ONCE here, before the submission loads (f2py wrappers: from their docstring)."""
    if name in _DIRECT_PARAMS:
        names = _DIRECT_PARAMS[name]
        return names, frozenset() if name.startswith(("numpy.", "scipy.linalg.")) else frozenset(names), {}
    try:
        sig = _inspect.signature(fn)
        pos = tuple(p.name for p in sig.parameters.values()
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        kw = frozenset(p.name for p in sig.parameters.values()
                       if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        dflt = {p.name: p.default for p in sig.parameters.values() if p.default is not p.empty}
        return pos, kw, dflt
    except (TypeError, ValueError):
        pass
    doc = fn.__doc__ if isinstance(getattr(fn, "__doc__", None), str) else ""
    head = doc.split("\n", 1)[0]
    if "(" in head and head.endswith(")"):         # f2py: "x,info = dpbtrs(ab,b,[lower,ldab,...])"
        inner = head[head.index("(") + 1:-1].replace("[", "").replace("]", "")
        names = tuple(t.strip() for t in inner.split(",") if t.strip())
        return names, frozenset(names), {}
    return (), frozenset(), {}


def _bind(params, args, kwargs):
    """{parameter: ("p", index) | ("k", key)} as the function's own signature binds them."""
    pos, kw, _ = params
    where = {}
    for i in range(min(_len(args), _len(pos))):
        where[pos[i]] = ("p", i)
    for key in kwargs:
        if key in kw and key not in where:
            where[key] = ("k", key)
    return where


def _plain(x):
    """A flag as a plain Python value the recorder owns (never a submitted object's answer)."""
    t = _type(x)
    if _one_of(t, (bool, int, float, str)) or x is None:
        return x
    if t is tuple or t is list:
        return _tuple(_plain(v) for v in x)
    if _one_of(t, _NP_SCALARS):
        return _nd_item(x)                  # a numpy scalar (its C type: immutable)
    raise _Unobservable("a flag of type %s" % _tname(t))


def _plain_flag(x):
    """An argument the recorder does not record, as a plain value of its own (a list stays a
    list, an options dict a dict of plain values); anything else is unobservable."""
    t = _type(x)
    if t is dict:
        return {_plain(k): _plain_flag(v) for k, v in dict.items(x)}
    if t is list:
        return list(_plain(x))
    return _plain(x)


def _own_array(x):
    """x as an exact numpy array the recorder owns: a C-level copy (dtype and layout kept).  An
    ndarray subclass is read from its buffer (none of its methods runs); any other object is
    converted ONCE by numpy, and that conversion is what is recorded and what the library gets."""
    if _type(x) is _nd:
        return _np_array(x, copy=True, order="K")
    try:
        a = _np_array(x, copy=True, order="K", subok=False)
    except Exception as exc:
        raise _Unobservable("an operand numpy cannot convert (%s)" % _tname(_type(exc)))
    if _type(a) is not _nd:
        raise _Unobservable("an operand that is not an array")
    return a


def _own_sparse(x):
    """(copy, entries) of an exact scipy.sparse matrix, read from its raw arrays through the
    recorder's own __dict__ getter (no method, property or class attribute of it is used);
    the copy is a new object of the same exact class holding copies of those arrays."""
    fmt, getdict = _sparse_class(_type(x))
    d = getdict(x)
    if _type(d) is not dict:
        raise _Unobservable("a sparse matrix without its arrays")
    shape = d.get("_shape")
    if _type(shape) is not tuple or _len(shape) != 2 or not _all(_type(s) is int and s >= 0 for s in shape):
        raise _Unobservable("a sparse matrix without a plain shape")
    keys = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
            "bsr": ("data", "indices", "indptr"), "coo": ("data", "coords"), "dia": ("data", "offsets")}[fmt]
    arrs = {}
    for key in keys:
        v = d.get(key)
        if key == "coords":
            if _type(v) is not tuple or _len(v) != 2 or not _all(_type(c) is _nd for c in v):
                raise _Unobservable("a COO matrix without plain coordinate arrays")
            arrs[key] = _tuple(_np_array(c, copy=True) for c in v)
        elif _type(v) is not _nd:
            raise _Unobservable("a sparse matrix whose %s is not a plain array" % key)
        else:
            arrs[key] = _np_array(v, copy=True)
    ent = _sparse_entries(fmt, shape, arrs)
    obj = _obj_new(_type(x))
    od = getdict(obj)
    od.update(arrs, _shape=shape, maxprint=50)
    if fmt == "coo":
        od["has_canonical_format"] = False
    return obj, ent


def _own_entrywise(x, fmt, getdict, to, to_getdict):
    """(copy, entries) of an exact lil/dok matrix: its row lists (lil) or its entry dict (dok,
    read with dict's own items()) converted once, handed over as a new CSC object (the format
    spsolve and splu convert them to, so the library's arithmetic is unchanged)."""
    d = getdict(x)
    shape = d.get("_shape") if _type(d) is dict else None
    if _type(shape) is not tuple or _len(shape) != 2 or not _all(_type(s) is int and s >= 0 for s in shape):
        raise _Unobservable("a %s matrix without a plain shape" % fmt)
    M, N = shape
    if M > 1 << 20 or N > 1 << 20:
        raise _Unobservable("a %s matrix too large to read entry by entry" % fmt)
    if fmt == "lil":
        rows, data = d.get("rows"), d.get("data")
        if _type(rows) is not _nd or _type(data) is not _nd or rows.shape != (M,) or data.shape != (M,):
            raise _Unobservable("a LIL matrix without plain row lists")
        ii, jj, vv = [], [], []
        for r in range(M):
            cr, vr = rows[r], data[r]
            if _type(cr) is not list or _type(vr) is not list or _len(cr) != _len(vr):
                raise _Unobservable("a LIL matrix without plain row lists")
            jj.append(_np_array(cr, dtype=_np_i64))
            vv.append(_np_array(vr, dtype=_np_f64))
            ii.append(_np_zeros(_len(cr), _np_i64) + r)
        i, j, v = (_np_concat(a + [_np_zeros(0, t)]) for a, t in ((ii, _np_i64), (jj, _np_i64), (vv, _np_f64)))
    else:
        store = d.get("_dict")
        if _type(store) is not dict:
            raise _Unobservable("a DOK matrix without a plain dict of entries")
        items = list(dict.items(store))
        keys = [k for k, _ in items]
        if not _all(_type(k) is tuple and _len(k) == 2 for k in keys):
            raise _Unobservable("a DOK matrix with keys that are not pairs")
        ij = _np_array(keys, dtype=_np_i64).reshape(-1, 2)
        i, j = ij[:, 0].copy(), ij[:, 1].copy()
        v = _np_array([val for _, val in items], dtype=_np_f64).reshape(-1)
    i, j = _ints(i, 0, max(M, 1)), _ints(j, 0, max(N, 1))
    order = _np_lexsort((i, j))                        # by column, then row
    i, j, v = i[order], j[order], v[order]
    ptr = _np_concat([_np_zeros(1, _np_i64), _nd_cumsum(_np_bincount(j, minlength=N)[:N])])
    obj = _obj_new(to)
    to_getdict(obj).update(_shape=shape, maxprint=50, data=v, indices=_nd_astype(i, _np_i32),
                           indptr=_nd_astype(ptr, _np_i32))
    return obj, (shape, i, j, v)


def _ints(a, lo, hi):
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and (int(a.min()) < lo or int(a.max()) >= hi)):
        raise _Unobservable("malformed sparse index arrays")
    return _nd_astype(a, _np_i64)


def _sparse_entries(fmt, shape, arrs):
    M, N = shape
    data = arrs["data"]
    if data.dtype.kind not in "biuf":
        raise _Unobservable("a sparse matrix of dtype %s" % data.dtype)
    if fmt in ("csr", "csc"):
        major, minor = (M, N) if fmt == "csr" else (N, M)
        ptr, idx = arrs["indptr"], arrs["indices"]
        if ptr.ndim != 1 or ptr.size != major + 1 or data.ndim != 1 or idx.size != data.size:
            raise _Unobservable("malformed compressed sparse arrays")
        ptr = _ints(ptr, 0, data.size + 1)
        nnz = int(ptr[-1])
        if int(ptr[0]) != 0 or (major and int((ptr[1:] - ptr[:-1]).min()) < 0):
            raise _Unobservable("malformed compressed sparse arrays")
        idx = _ints(idx[:nnz], 0, max(minor, 1))
        maj = _nd_repeat(_np_arange(major), ptr[1:] - ptr[:-1])
        return (shape, maj, idx, data[:nnz]) if fmt == "csr" else (shape, idx, maj, data[:nnz])
    if fmt == "coo":
        r, c = arrs["coords"]
        if data.ndim != 1 or r.size != data.size or c.size != data.size:
            raise _Unobservable("malformed COO arrays")
        return shape, _ints(r, 0, max(M, 1)), _ints(c, 0, max(N, 1)), data
    if fmt == "dia":
        off = arrs["offsets"]
        if data.ndim != 2 or off.ndim != 1 or off.size != data.shape[0] or off.dtype.kind not in "iu":
            raise _Unobservable("malformed DIA arrays")
        rs, cs, vs = [], [], []
        for r in range(off.size):
            k = int(off[r])
            j = _np_arange(max(0, k), min(N, M + k, data.shape[1]))
            rs.append(j - k)
            cs.append(j)
            vs.append(data[r, j])
        return shape, _np_concat(rs + [_np_zeros(0, _np_i64)]), _np_concat(cs + [_np_zeros(0, _np_i64)]), \
            _np_concat(vs + [_np_zeros(0, data.dtype)])
    # bsr
    ptr, idx = arrs["indptr"], arrs["indices"]
    if data.ndim != 3:
        raise _Unobservable("malformed BSR arrays")
    R, C = data.shape[1], data.shape[2]
    if not R or not C or M % R or N % C or ptr.ndim != 1 or ptr.size != M // R + 1 or idx.size != data.shape[0]:
        raise _Unobservable("malformed BSR arrays")
    ptr = _ints(ptr, 0, data.shape[0] + 1)
    idx = _ints(idx, 0, max(N // C, 1))
    nb = int(ptr[-1])
    brow = _nd_repeat(_np_arange(M // R), ptr[1:] - ptr[:-1])
    ii = (brow[:, None, None] * R + _np_arange(R)[None, :, None] + 0 * _np_arange(C)[None, None, :])
    jj = (idx[:nb, None, None] * C + _np_arange(C)[None, None, :] + 0 * _np_arange(R)[None, :, None])
    return shape, ii.ravel(), jj.ravel(), data[:nb].ravel()


def _own(role, x):
    """(the value handed to the library, what the recorder reads of it)."""
    if x is None:
        return None, None
    if role == _F:
        v = _plain(x)
        return v, v
    if role == _CB:
        if x is None:
            return None, None

        def callback(*args):
            return x(*(_np_array(a, copy=True) if _type(a) is _nd else a for a in args))
        return callback, None
    if role in (_P, _L):
        if not _one_of(_type(x), (tuple, list)) or _len(x) != 2:
            raise _Unobservable("a factor that is not a pair")
        first = _own_array(x[0])
        second = _own_array(x[1]) if role == _L else _plain(x[1])
        return (first, second), (first, second)
    if role == _S and _sparse_class(_type(x)) is not None:
        obj, ent = _own_sparse(x)
        return obj, ent
    for cls, fmt, getdict, to, to_getdict in _SP_ENTRY:
        if _type(x) is cls:
            return _own_entrywise(x, fmt, getdict, to, to_getdict)
    if role == _S and not (issubclass(_type(x), _nd) or _one_of(_type(x), (list, tuple))):
        raise _Unobservable("an operator object (%s)" % _tname(_type(x)))
    a = _own_array(x)
    return a, a


def _fp(*arrays):
    """Content fingerprint of a factor (dtype, shape and C-order bytes of each array)."""
    h = _blake2b(digest_size=20)
    for a in arrays:
        if _type(a) is not _nd:
            return None
        a = _np_contig(a)
        h.update(("%s%r|" % (a.dtype.str, a.shape)).encode())
        h.update(memoryview(a).cast("B"))
    return h.digest()


def _tri_mask(m, lower):
    ar = _np_arange(m)
    return (_np_ge if lower else _np_le).outer(ar, ar)


def _dense_entries(a, part="full"):
    """(shape, rows, cols, values) of the part of the 2-D array a a routine reads: "full",
    "upper"/"lower" (one triangle of a symmetric matrix, mirrored), "diag", "tridiag"."""
    if a.ndim != 2 or a.dtype.kind not in "biuf":
        raise _Unobservable("a matrix of shape %r, dtype %s" % (a.shape, a.dtype))
    i, j = _nd_nonzero(a)
    if part in ("upper", "lower"):
        keep = (i <= j) if part == "upper" else (i >= j)
        i, j = i[keep], j[keep]
        off = i != j
        v = a[i, j]
        return a.shape, _np_concat([i, j[off]]), _np_concat([j, i[off]]), _np_concat([v, v[off]])
    if part == "diag":
        keep = i == j
        i, j = i[keep], j[keep]
    elif part == "tridiag":
        keep = abs(i - j) <= 1
        i, j = i[keep], j[keep]
    return a.shape, i, j, a[i, j]


def _band(ab, l, u, sym=None):
    """Rows, cols, values of the matrix in LAPACK band storage ab[u + i - j, j] = A[i, j]
    (sym "upper"/"lower": one triangle of a symmetric matrix, mirrored)."""
    if ab.ndim != 2 or ab.dtype.kind not in "biuf" or l < 0 or u < 0 or ab.shape[0] < l + u + 1:
        raise _Unobservable("band storage of shape %r for (l, u) = (%d, %d)" % (ab.shape, l, u))
    m = ab.shape[1]
    rs, cs, vs = [], [], []
    for r in range(l + u + 1):
        off = r - u                  # i - j
        j = _np_arange(max(0, -off), min(m, m - off))
        rs.append(j + off)
        cs.append(j)
        vs.append(ab[r, j])
    i, j, v = _np_concat(rs), _np_concat(cs), _np_concat(vs)
    if sym:
        keep = i != j
        i, j, v = _np_concat([i, j[keep]]), _np_concat([j, i[keep]]), _np_concat([v, v[keep]])
    return (m, m), i, j, v


def _tridiag(sub, d, sup):
    m = d.shape[0]
    if d.ndim != 1 or sub.shape != (max(m - 1, 0),) or sup.shape != (max(m - 1, 0),):
        raise _Unobservable("tridiagonal operands of unequal lengths")
    k = _np_arange(m)
    return ((m, m), _np_concat([k, k[1:], k[:-1]]), _np_concat([k, k[:-1], k[1:]]),
            _np_concat([_nd_astype(d, _np_f64), _nd_astype(sub, _np_f64), _nd_astype(sup, _np_f64)]))


_ASSUME = {"pos": "sym", "positive definite": "sym", "sym": "sym", "symmetric": "sym", "her": "sym",
           "hermitian": "sym", "diagonal": "diag", "tridiagonal": "tridiag",
           "upper triangular": "triu", "lower triangular": "tril"}


def _effective(how, g):
    """The matrix the routine reads, as entries, from the owned operands g(name); a list of
    (entries, rhs, output-selector) per system for solves (a batched stack: one per system)."""
    if how in ("dense", "dense_assume"):
        a = g("a")
        part = "full"
        if how == "dense_assume":
            kind = _ASSUME.get(g("assume_a"), "full")
            lower = bool(g("lower"))
            part = {"sym": "lower" if lower else "upper", "triu": "triu", "tril": "tril"}.get(kind, kind)
            if g("transposed"):
                a = a.T
        return _systems(a, g("b"), part)
    if how in ("chol", "chol_np", "chol_lo", "chol_up"):
        low = {"chol": lambda: bool(g("lower")), "chol_np": lambda: not g("upper"),
               "chol_lo": lambda: True, "chol_up": lambda: False}[how]()
        return _systems(g("a"), g("b"), "lower" if low else "upper")
    if how == "band":
        lu = g("l_and_u")
        if _type(lu) is not tuple or _len(lu) != 2 or not _all(_type(v) is int for v in lu):
            raise _Unobservable("l_and_u is not a pair of integers")
        return [(_band(g("ab"), lu[0], lu[1]), g("b"), None)]
    if how == "hband":
        ab = g("ab")
        k = ab.shape[0] - 1 if ab.ndim == 2 else -1
        ent = _band(ab, k, 0, "lower") if g("lower") else _band(ab, 0, k, "upper")
        return [(ent, g("b"), None)]
    if how == "gband":
        kl, ku, ab = g("kl"), g("ku"), g("ab")
        if _type(kl) is not int or _type(ku) is not int or ab.ndim != 2 or ab.shape[0] < kl:
            raise _Unobservable("band storage without plain kl, ku")
        return [(_band(ab[kl:], kl, ku), g("b"), None)]
    if how == "gtsv":
        return [(_tridiag(g("dl"), g("d"), g("du")), g("b"), None)]
    if how == "ptsv":
        return [(_tridiag(g("e"), g("d"), g("e")), g("b"), None)]
    if how == "sparse":
        A = g("A")
        return [(_dense_entries(A) if _type(A) is _nd else A, g("b"), None)]
    if how == "gssv":
        return [(_gssv_entries(g, "colind", "rowptr", bool(g("csc"))), g("B"), None)]
    if how == "gstrf":
        return [(_gssv_entries(g, "rowind", "colptr", True), None, None)]
    return [(None, g("b"), None)]


def _gssv_entries(g, ind, ptr, csc):
    N = g("N")
    if _type(N) is not int:
        raise _Unobservable("SuperLU dimension is not an integer")
    return _sparse_entries("csc" if csc else "csr", (N, N), {"data": g("nzvals"), "indices": g(ind),
                                                             "indptr": g(ptr)})


def _systems(a, b, part):
    """One (entries, rhs, selector) per system of a (batched) dense solve."""
    if part in ("triu", "tril"):
        a = a * _tri_mask(a.shape[-1], part == "tril") if a.ndim == 2 else a
        part = "full"
    if a.ndim == 2:
        return [(_dense_entries(a, part), b, None)]
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise _Unobservable("a matrix of shape %r" % (a.shape,))
    batch = a.shape[:-2]
    count = 1
    for s in batch:
        count *= s
    if count > 16:
        raise _Unobservable("a batch of %d systems" % count)
    if b is not None and b.ndim > 2 and b.shape[:-2] != batch:
        raise _Unobservable("a batched right-hand side of shape %r" % (b.shape,))
    out = []
    flat = a.reshape((count,) + a.shape[-2:])
    for t in range(count):
        idx = _tuple(int(v) for v in _np_unravel(t, batch))
        rhs = b if b is None or b.ndim <= 2 else b[idx]
        out.append((_dense_entries(flat[t], part), rhs, idx))
    return out


_np_unravel = _np.unravel_index


def _arr(a, m):
    """A float64 array as a message (data only for at most 16 columns of length m)."""
    if _type(a) is not _nd:
        return None
    if a.dtype.kind not in "fiu" or a.ndim not in (1, 2) or a.shape[0] != m:
        return {"shape": list(a.shape), "dtype": str(a.dtype)}
    a = _np_contig(a, dtype=_np_f64)
    return {"shape": list(a.shape), "b64": _b64e(a).decode("ascii") if a.size <= 16 * m else None}


def _mat_msg(ent):
    if ent is None:
        return None
    shape, i, j, v = ent
    if v.dtype.kind not in "biuf":
        return {"shape": list(shape), "dtype": str(v.dtype)}
    nz = v != 0
    i, j, v = i[nz], j[nz], v[nz]
    m = int(shape[-1])
    msg = {"shape": [int(s) for s in shape], "nnz": int(v.size)}
    if v.size <= 16 * m:
        msg.update(r=_b64e(_np_contig(i, dtype=_np_i32)).decode("ascii"),
                   c=_b64e(_np_contig(j, dtype=_np_i32)).decode("ascii"),
                   v=_b64e(_np_contig(v, dtype=_np_f64)).decode("ascii"))
    return msg


def _pick(out, idx):
    return out if idx is None else out[idx]


def _substitute_into(x, reply):
    """Write the grader's substitute for a solve's output INTO the output array (so that a
    caller's buffer the library wrote the result to holds it too); False when not applied."""
    if not isinstance(reply, dict) or not isinstance(reply.get("sub"), str):
        return False
    new = _np_frombuffer(_b64d(reply["sub"]), dtype=_np_f64)
    if _type(x) is not _nd or new.size != x.size or not x.flags.writeable:
        return False
    _np_copyto(x, new.reshape(x.shape))
    return True


def _inverse_substitute(Z, reply):
    """The grader's substitute for an explicit inverse, written into Z: Z + u v^T (its
    vectors), or Z with NaN rows."""
    if not isinstance(reply, dict) or _type(Z) is not _nd or not Z.flags.writeable:
        return
    m = Z.shape[0]
    if isinstance(reply.get("rank1"), list) and len(reply["rank1"]) == 2:
        u, v = (_np_frombuffer(_b64d(t), dtype=_np_f64) for t in reply["rank1"])
        if u.size == m and v.size == m:
            _np_copyto(Z, Z + u[:, None] * v[None, :])
    elif isinstance(reply.get("nanrows"), list):
        Z[[int(i) for i in reply["nanrows"] if _type(i) is int and 0 <= i < m]] = _np_nan


class _LUProxy:
    """Stands in for a SuperLU object so that its C-level solve is observed."""
    def __init__(self, lu, fid):
        object.__setattr__(self, "_lu", lu)
        object.__setattr__(self, "_solve", _wrap("SuperLU.solve", lu.solve, fid))

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_lu"), name)

    def solve(self, *args, **kwargs):
        return object.__getattribute__(self, "_solve")(*args, **kwargs)


def _ask(rec):
    """ask, counted: the grader compares the count with the records it received (a record
    the submission wrote onto the channel itself is one the driver did not count)."""
    _ST["asks"] += 1
    return ask(rec)


def _factor_arrays(how, g):
    """The arrays of the factor an fsolve applies (what its fingerprint is taken of)."""
    if how == "lu_and_piv":
        return g("lu_and_piv")
    if how in ("c_and_lower", "cb_and_lower"):
        return (g(how)[0],)
    if how == "getrs":
        return g("lu"), g("piv")
    if how == "gbtrs":
        return g("ab"), g("ipiv")
    if how == "potrs":
        return (g("c"),)
    if how == "potrs_band":
        return (g("ab"),)
    return None


def _produced_arrays(name, how, out):
    """The arrays of a factorisation's output (fingerprinted when produced)."""
    key = _spec_key(name)
    if key in ("scipy.linalg.lu_factor", "lapack.getrf", "lapack.gbtrf"):
        return out[0], out[1]
    if key in ("scipy.linalg.cho_factor", "lapack.potrf", "lapack.pbtrf"):
        return (out[0],)
    return (out,)


def _register_cholesky(fid, c, lower):
    """A dense Cholesky factor: its L and L^T (the triangle the routine wrote) fingerprinted,
    so that two triangular substitutions with it are a recorded solve of the factored matrix."""
    if _type(c) is not _nd or c.ndim != 2 or c.shape[0] != c.shape[1]:
        return
    T = c * _tri_mask(c.shape[0], lower)
    L = T if lower else T.T
    _CHOL[_fp(L)] = (fid, "L")
    _CHOL[_fp(_np_contig(L.T))] = (fid, "U")


def _changed_factor(orig_items):
    """The fid of a registered factor one of whose arrays (by identity) was passed, or None."""
    for obj in orig_items:
        hit = _FACT_ID.get(_id(obj))
        if hit is not None and hit[1] is obj:
            return hit[0]
    return None


def _observe(name, fn, params, args, kwargs, fid):
    """One outermost library call: operands owned, recorded, handed to the library; the
    grader's answer applied (in place where the library wrote into a caller's buffer)."""
    spec = _SPEC.get(_spec_key(name))
    if spec is None:                # counted only
        out = _nested(fn, args, kwargs)
        _count(name, "other", args, kwargs)
        return out
    roles, kind, idx, how = spec
    if name.startswith("scipy.linalg._batched_linalg.") and (_len(args) > _len(params[0]) or kwargs):
        return _unobservable(name, kind, idx, _nested(fn, args, kwargs),
                             "a private batched call with structure arguments")
    where = _bind(params, args, kwargs)
    args2, kwargs2 = list(args), dict(kwargs)
    owned, orig, why = {}, {}, None
    for pname, role in roles.items():
        if pname not in where:
            continue
        w = where[pname]
        val = args[w[1]] if w[0] == "p" else kwargs[w[1]]
        try:
            given, read = _own(role, val)
        except _Unobservable as exc:
            why = "%s: %s" % (pname, exc)
            break
        except Exception as exc:
            why = "%s: %s" % (pname, _tname(_type(exc)))
            break
        owned[pname], orig[pname] = read, val
        if w[0] == "p":
            args2[w[1]] = given
        else:
            kwargs2[w[1]] = given
    for pname, w in (where.items() if why is None else ()):
        if pname in roles:
            continue
        val = args[w[1]] if w[0] == "p" else kwargs[w[1]]
        try:                # every other argument too: the library asks a flag object (its
            p = _plain_flag(val)    # __bool__, __eq__, ...) after the comparison (round 5)
        except _Unobservable as exc:
            why = "%s: %s" % (pname, exc)
            break
        if p is not val:
            if w[0] == "p":
                args2[w[1]] = p
            else:
                kwargs2[w[1]] = p
    dflt = params[2]

    def g(pname):
        if pname in owned:
            return owned[pname]
        v = dflt.get(pname, 0 if pname in ("lower", "trans", "csc", "kl", "ku") else None)
        return v if _type(v) in (bool, int, float, str, tuple) or v is None else None

    if why is None and kind in ("solve", "factor", "inverse"):
        try:
            systems = [(ent, None if b is None else _np_array(b, copy=True), sel)
                       for ent, b, sel in _effective(how, g)]
        except _Unobservable as exc:
            why, systems = str(exc), None
        except Exception as exc:
            why, systems = "%s while reading the matrix" % _tname(_type(exc)), None
    elif why is None and kind in ("fsolve", "tri"):
        b = g("b") if "b" in roles else g("rhs")
        systems = [(None, None if b is None else _np_array(b, copy=True), None)]
    else:
        systems = None
    if why is not None:                 # the call runs as the submission made it, unobserved
        out = _nested(fn, args, kwargs)
        return _unobservable(name, kind, idx, out, why)
    ffid, changed, tri = fid, None, None
    if kind == "fsolve" and fid is None:
        arrs = _factor_arrays(how, g)
        hit = _FACT.get(_fp(*arrs)) if arrs is not None else None
        ffid = hit
        if hit is None and arrs is not None:
            pair = orig.get(how) if how in ("lu_and_piv", "c_and_lower", "cb_and_lower") else None
            items = list(pair) if _one_of(_type(pair), (tuple, list)) else [orig.get(k) for k in
                                                                     ("lu", "piv", "c", "ab", "ipiv")]
            changed = _changed_factor(items)
    if kind == "tri":
        tri = _triangular_half(g)
        changed = _changed_factor([orig.get("a")]) if tri is None else None
    if _spec_key(name).rsplit(".", 1)[-1] in _ITER:
        x0 = owned.get("x0")
        if _type(x0) is _nd and x0.size and bool((x0 != 0).any()) and _fp(x0) not in _OUTS:
            return _unobservable(name, kind, idx, _nested(fn, args2, kwargs2),
                                 "x0: a start that is no observed solve's output")
    _tampered()         # owning the operands may have run submitted code (an __array__, a
    out = _nested(fn, args2, kwargs2)   # list element's __float__): compared again (round 5)
    if orig.get("callback") is not None:     # submitted code ran inside the library call
        _tampered()
    _ST["depth"] += 1                   # what the grader's exchange does is not observed
    try:
        try:
            out = _answer(name, kind, idx, how, out, systems, ffid, changed, tri, g)
        except Exception as exc:
            send({"kind": "call", "fn": name, "cls": kind,
                  "note": (_type(exc).__name__ + ": " + str(exc))[:200]})
        out = _write_back(out, owned, orig, g)
        if kind in ("solve", "fsolve", "inverse") and _type(out) is _nd and \
                any(_type(v) is _np_matrix for v in orig.values()):
            out = out.view(_np_matrix)      # as numpy wraps a result for np.matrix operands
        return out
    finally:
        _ST["depth"] -= 1


def _nested(fn, args, kwargs):
    """The library call itself (the layers under it run unobserved)."""
    _ST["depth"] += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _ST["depth"] -= 1


def _triangular_half(g):
    """(fid, stage) when solve_triangular applies half of a registered Cholesky factor:
    stage 1 solves L y = b, stage 2 solves L^T x = y; None otherwise."""
    a = g("a")
    if g("unit_diagonal") or _type(a) is not _nd or a.ndim != 2 or a.shape[0] != a.shape[1]:
        return None
    low = bool(g("lower"))
    hit = _CHOL.get(_fp(a * _tri_mask(a.shape[0], low)))
    if hit is None:
        return None
    trans = g("trans")
    transposed = trans in (1, 2, "T", "C")
    return hit[0], (1 if (hit[1] == "L") != transposed else 2)


def _count(name, kind, args, kwargs, note=None, dim=None):
    for v in list(args) + list(kwargs.values()):
        if dim is None and _type(v) is _nd and v.ndim == 2:
            dim = int(v.shape[-1])
            break
    _ST["calls"].append({"fn": name, "kind": kind, "dim": dim})
    rec = {"kind": "call", "fn": name, "cls": kind, "dim": dim}
    if note:
        rec["note"] = note[:200]
    send(rec)


def _unobservable(name, kind, idx, out, why):
    """A call whose operands the recorder could not own: it ran as given; for a solve,
    factorisation or inverse the grader records that its matrix could not be read."""
    if kind not in ("solve", "factor", "inverse", "fsolve"):
        _count(name, kind, (), {}, why)
        return out
    rec = {"fn": name, "kind": "solve" if kind == "fsolve" else kind, "seq": _ST["seq"],
           "unobservable": why[:200], "mat": None}
    _ST["seq"] += 1
    x = out if idx is None or not _one_of(_type(out), (tuple, list)) else out[idx]
    m = int(x.shape[0]) if _type(x) is _nd and x.ndim >= 1 else None
    rec["dim"] = m
    _ST["calls"].append({"fn": name, "kind": kind, "dim": m})
    if len(_ST["calls"]) <= _REQ["max_calls"]:
        if kind == "factor":
            send(dict(rec, kind="call", cls=kind))
        else:                           # the grader records it: "its matrix could not be read"
            _ask(dict(rec, kind="solve" if kind == "fsolve" else kind))
    return out


def _answer(name, kind, idx, how, out, systems, fid, changed, tri, g):
    """Record the call and apply the grader's answer (the output, possibly replaced)."""
    rec = {"fn": name, "kind": kind, "seq": _ST["seq"]}
    _ST["seq"] += 1
    capped = len(_ST["calls"]) >= _REQ["max_calls"]
    x = _pick(out, idx) if kind in ("solve", "fsolve", "inverse", "tri") else None
    if capped:
        _ST["calls"].append({"fn": name, "kind": kind})
    elif kind == "factor":
        ent = systems[0][0] if systems else None
        new_fid = _ST["fid"] = _ST["fid"] + 1
        base = _spec_key(name).rsplit(".", 1)[-1]
        if base in ("splu", "spilu", "gstrf"):
            out = _LUProxy(out, new_fid)
            _PROXY[_id(out)] = (new_fid, out)
        elif base == "factorized" and callable(out):
            out = _wrap("factorized.solve", out, new_fid)
            _PROXY[_id(out)] = (new_fid, out)
        else:
            arrs = _produced_arrays(name, how, out)
            _FACT[_fp(*arrs)] = new_fid
            for a in arrs:
                _FACT_ID[_id(a)] = (new_fid, a)
            if how.startswith("chol"):
                low = {"chol": bool(g("lower")), "chol_np": not g("upper"), "chol_lo": True,
                       "chol_up": False}[how]
                _register_cholesky(new_fid, arrs[0], low)
        rec.update(fid=new_fid, mat=_mat_msg(ent), dim=int(ent[0][-1]) if ent is not None else None)
        _ST["calls"].append({"fn": name, "kind": kind, "dim": rec["dim"]})
        _ask(rec)
    elif kind == "tri" and tri is not None and tri[1] == 1 and _type(x) is _nd:
        _HALF[_fp(x)] = (tri[0], systems[0][1])            # the first substitution: L y = b
        _count(name, "other", (), {}, dim=int(x.shape[0]))
    elif kind == "tri" and tri is not None and tri[1] == 2 and _HALF.get(_fp(systems[0][1])) is not None \
            and _HALF[_fp(systems[0][1])][0] == tri[0]:
        first = _HALF[_fp(systems[0][1])]                  # the second: L^T x = y
        _solve_record(dict(rec, kind="fsolve", fn=name + " (Cholesky substitutions)"), x,
                      [(None, first[1], None)], tri[0], None)
    elif kind in ("solve", "fsolve") or (kind == "tri" and changed is not None):
        _solve_record(dict(rec, kind="fsolve") if kind == "tri" else rec, x, systems, fid, changed)
    elif kind == "inverse":
        ent = systems[0][0] if systems else None
        rec["mat"], rec["dim"] = _mat_msg(ent), int(ent[0][-1]) if ent is not None else None
        _ST["calls"].append({"fn": name, "kind": kind, "dim": rec["dim"]})
        if rec["dim"] and _type(x) is _nd and x.dtype == _np_f64 and x.shape == (rec["dim"],) * 2 \
                and len(systems) == 1:
            _inverse_substitute(x, _ask(rec))
        else:
            send(dict(rec, kind="call", cls=kind))
    else:
        _count(name, "other", (), {}, dim=int(x.shape[0]) if _type(x) is _nd and x.ndim else None)
    return out


def _solve_record(rec, x, systems, fid, changed):
    """Each system of a solve shown to the grader; its answer written into the output."""
    for ent, rhs, sel in systems:
        xs = x if sel is None or _type(x) is not _nd else x[sel]
        m = int(xs.shape[0]) if _type(xs) is _nd and xs.ndim >= 1 else 0
        r = dict(rec, fid=fid, rhs=_arr(rhs, m), out=_arr(xs, m), dim=m)
        if changed is not None:
            r["changed"] = changed
        if rec["kind"] == "solve":
            r["mat"] = _mat_msg(ent)
        _ST["calls"].append({"fn": rec["fn"], "kind": rec["kind"], "dim": m})
        if _type(xs) is _nd and xs.dtype == _np_f64 and (r["out"] or {}).get("b64"):
            _substitute_into(xs, _ask(dict(r, kind="solve")))
            _OUTS.add(_fp(xs))
        else:
            send(dict(r, kind="solve", unusable=True))


def _write_back(out, owned, orig, g):
    """A routine told to overwrite an operand wrote into the recorder's copy: that copy (with
    the grader's substitute, where it holds the solution) goes into the caller's buffer, and
    an output that IS the copy is returned as the caller's own array, as the library would."""
    for pname, a in owned.items():
        if not g("overwrite_" + pname) or _type(a) is not _nd:
            continue
        dst = orig[pname]
        if _type(dst) is not _nd or dst.shape != a.shape or dst.dtype != a.dtype or not dst.flags.writeable:
            continue
        _np_copyto(dst, a)
        if out is a:
            out = dst
        elif _type(out) is tuple and any(_is(o, a) for o in out):
            out = _tuple(dst if _is(o, a) else o for o in out)
    return out


def _sig_hold():
    """Signals held (blocked in this thread) for one outermost library call: a Python signal
    handler (a timer's, say) would otherwise run submitted code inside the recorder, after
    the tamper comparison, and could swap a library routine for the call and back.  Delivered
    when the call returns.  (A signal another thread of the submission receives still runs
    its handler in the main thread: threads are a limit problem_spec.md states.)"""
    try:
        return _pthread_sigmask(_SIG_BLOCK, _ALL_SIGNALS)
    except Exception:
        return None


def _sig_release(held):
    if held is not None:
        try:
            _pthread_sigmask(_SIG_SETMASK, held)
        except Exception:
            pass


def _wrap(name, fn, fid=None):
    """Observe the outermost library call (nested layers run unobserved under it)."""
    params = _params(name, fn)

    def wrapper(*args, **kwargs):
        if _ST["depth"]:
            return fn(*args, **kwargs)
        held = _sig_hold()          # no signal handler runs submitted code between the
        collect = _gc_isenabled()   # comparison and the library's own reads; no automatic
        if collect:                 # collection either (a finaliser, __del__ or weakref.finalize,
            _gc_disable()           # of submitted cyclic garbage would run inside the call)
        try:
            _tampered()
            return _observe(name, fn, params, args, kwargs, fid)
        finally:
            if collect:
                _gc_enable()
            _sig_release(held)
    try:
        _functools.update_wrapper(wrapper, fn)
    except Exception:
        pass
    return wrapper


def _install():
    targets = {}
    for modname, names in _NAMES.items():
        mod = _sys.modules.get(modname)
        for nm in names:
            fn = getattr(mod, nm, None) if mod is not None else None
            if fn is not None and callable(fn) and id(fn) not in targets:
                targets[id(fn)] = (fn, _wrap(modname + "." + nm, fn))
                _WRAPPERS[id(targets[id(fn)][1])] = targets[id(fn)][1]
    patched = 0
    for modname, mod in list(_sys.modules.items()):
        if mod is None or not (modname in ("numpy", "scipy") or modname.startswith(("numpy.", "scipy."))):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for key, val in items:
            hit = targets.get(id(val))
            if hit is not None and hit[0] is val:
                try:
                    setattr(mod, key, hit[1])
                    patched += 1
                except (AttributeError, TypeError):
                    pass
    return len(targets), patched


# ---- the tamper check ----------------------------------------------------------------------
# Every attribute of every loaded numpy/scipy module, of the heap classes they define (and
# their bases), of builtins and of the stdlib modules the recorder and the message channel
# use, as bound once the instrumentation is installed; compared by identity (operator.is_,
# no __eq__ of anything) before every outermost instrumented call (after it too where a
# callback ran submitted code inside it) and when solve returns.  What the recorder reads
# does not depend on these (it uses the references above); what the LIBRARY computes does, so
# a reassignment is reported (provenance.library_intact).  Subpackages on no linear-solve
# path are left out (a quarter of the attributes: the comparison runs in every call).
_TAMPER_STDLIB = ("builtins", "json", "json.encoder", "json.decoder", "base64", "binascii", "hashlib",
                  "operator", "functools", "os", "posixpath", "warnings")
# warnings: its hooks (showwarning, formatwarning, ...) would run submitted code INSIDE a
# library call that warns, after the pre-call comparison.  catch_warnings() rebinds these
# (their content is checked instead: _warning_filters_plain); a C function as a hook (the
# list.append of catch_warnings(record=True)) runs no submitted code.
_TAMPER_FREE = {"warnings": ("filters", "defaultaction", "onceregistry", "_filters_version")}
_BUILTIN_FN = type(len)
_TAMPER_SKIP = ("numpy.f2py", "numpy.ma", "numpy._typing", "numpy.typing", "numpy.random",
                "numpy.testing", "numpy.fft", "numpy.char", "numpy.strings", "numpy.rec",
                "numpy.ctypeslib", "numpy.polynomial", "scipy.linalg.cython_lapack",
                "scipy.linalg.cython_blas")


def _tamper_scope(name, _memo={}):
    if name not in _memo:
        _memo[name] = not any(name == p or name.startswith(p + ".") for p in _TAMPER_SKIP)
    return _memo[name]


def _tamper_snapshot():
    getd = type.__dict__["__dict__"].__get__
    snap, seen = [], set()
    names = sorted(k for k, m in _sys.modules.items() if m is not None and _tamper_scope(k) and
                   (k.split(".")[0] in ("numpy", "scipy") or k in _TAMPER_STDLIB))
    classes = []
    for k in names:
        mod = _sys.modules[k]
        try:
            d = vars(mod)
        except TypeError:
            continue
        keys = list(d)
        snap.append((k, d, keys, [d[x] for x in keys]))
        for v in list(d.values()):
            where = str(getattr(v, "__module__", "")) if isinstance(v, type) else ""
            if where.split(".")[0] in ("numpy", "scipy") and _tamper_scope(where):
                classes.extend(v.__mro__)
    for c in classes:
        if id(c) in seen or c is object or not (c.__flags__ & (1 << 9)) or c.__flags__ & (1 << 8):
            continue                    # static or immutable types cannot be changed
        seen.add(id(c))
        d = getd(c)
        keys = list(d)
        snap.append((c.__module__ + "." + c.__qualname__, d, keys, [d[x] for x in keys]))
    mods = [(k, _sys.modules[k]) for k in names]
    return snap, [k for k, _ in mods], [m for _, m in mods]


# The comparison's fast path: CPython gives every dict a version tag (PEP 509, ma_version_tag)
# that takes a new value, never used before, from a global counter at EVERY change of the
# dict (set, replace, delete, clear, update, pop, setdefault; a module's or a class's
# attribute assignment is one).  A dict whose tag is the one read just before its last clean
# comparison has not changed since, and is not compared again entry by entry (that touched
# every value's reference count, so in a fresh fork it copied thousands of shared pages:
# ~8 ms of CPU per job, the largest cost the recorder added).  Tags are read from the dict's
# own memory with a C getter captured here (no method or attribute of anything the
# submission can reach is used), and only where a self-test at driver start shows them
# behaving so on this interpreter; elsewhere every comparison is the full one.  Forging a
# tag needs a write into interpreter memory, which can alter a library without changing any
# attribute at all (problem_spec.md: interpreter internals are assumed, not proven).
def _tag_readers(snap):
    """{"read": a tag reader per snapshot entry, "clean": each one's tag at its last clean
    comparison, "modules"/"modules_clean": the same for sys.modules}, or None."""
    try:
        import ctypes
        import gc
        word = ctypes.sizeof(ctypes.c_ssize_t)
        if _sys.implementation.name != "cpython" or word != 8 or \
                not (3, 11) <= _sys.version_info[:2] <= (3, 13):
            return None
        get = type.__dict__["__dict__"].__get__(ctypes._SimpleCData)["value"].__get__
        mk_tag, mk_used = ctypes.c_uint64.from_address, ctypes.c_ssize_t.from_address

        def reader(d):                  # ob_refcnt, ob_type, ma_used, ma_version_tag
            return mk_tag(id(d) + 3 * word)

        def real_dict(d):               # a class's __dict__ is a proxy of its dict
            if _type(d) is dict:
                return d
            refs = gc.get_referents(d)
            return refs[0] if _len(refs) == 1 and _type(refs[0]) is dict else None

        if not _tags_behave(reader, get, lambda d: get(mk_used(id(d) + 2 * word)), real_dict):
            return None
        dicts = [real_dict(d) for _, d, _, _ in snap]
        if any(d is None for d in dicts):
            return None
        read = [reader(d) for d in dicts]
        mods = reader(_MODULES)
        return {"get": get, "read": read, "clean": list(_map(get, read)), "keep": dicts,
                "modules": mods, "modules_clean": get(mods)}
    except Exception:
        return None


def _tags_behave(reader, get, used, real_dict):
    """The self-test: a dict's entry count read where ma_used should be, and a new tag after
    every kind of change (of a plain dict, a module's and a class's attributes, also from a
    loop the interpreter specialises); an unchanged dict keeps its tag."""
    d = {"k%d" % i: i for i in range(7)}
    if used(d) != 7:
        return False
    r = reader(d)
    seen = [get(r)]
    if get(r) != seen[0]:
        return False
    for change in (lambda: d.__setitem__("k7", 7), lambda: d.__setitem__("k0", -1),
                   lambda: d.__delitem__("k1"), lambda: d.update(k9=9), lambda: d.pop("k2"),
                   lambda: d.setdefault("k10", 1), lambda: d.popitem(), d.clear):
        change()
        seen.append(get(r))
    if used(d) != 0:
        return False
    mod = _types.ModuleType("_tag_probe")
    cls = type("_TagProbe", (), {})
    for owner, dct in ((mod, vars(mod)), (cls, real_dict(type.__dict__["__dict__"].__get__(cls)))):
        if dct is None:
            return False
        r = reader(dct)
        scope = {"o": owner}
        exec("def f(o, v):\n    o.x = v\n", scope)
        for v in range(64):             # the same store, specialised after a few rounds
            scope["f"](owner, v)
            seen.append(get(r))
        delattr(owner, "x")
        seen.append(get(r))
    return 0 not in seen and _len(set(seen)) == _len(seen)


def _tamper_diff(label, d, keys, vals):
    free = _TAMPER_FREE.get(label, ())
    bad = [label + "." + str(k) for k, v in zip(keys, vals) if d.get(k, _tamper_diff) is not v and
           not (_type(k) is str and k in free) and not (label == "warnings" and _type(d.get(k)) is _BUILTIN_FN)]
    for k in set(d) - set(keys):
        v = d[k]
        if k == "__warningregistry__" or (_type(v) is _ModuleType and
                                          getattr(v, "__name__", None) == label + "." + str(k)):
            keys.append(k)                  # a warning registry, a submodule imported lazily
            vals.append(v)
        elif not (_type(k) is str and k in free):
            bad.append(label + "." + str(k) + " (added)")
    return bad


def _plain_routines(v):
    """A memo entry: the extension's own LAPACK/BLAS routine objects (one, or a list/tuple),
    or the recorder's wrapper of one (the memo caches what the patched module hands out)."""
    items = v if _type(v) is list or _type(v) is tuple else (v,)
    return _all(_type(r) is _FORTRAN or _WRAPPERS.get(_id(r)) is r for r in items)


def _warning_filters_plain():
    """warnings.filters holds only plain 5-tuples (an action string, compiled patterns, exact
    strings (the interpreter's own default filters) or None, a warning class of metaclass `type`, a line number): the C warnings machinery calls
    a filter's pattern .match and the category's subclass check inside a library call."""
    f = _warnings.__dict__.get("filters")
    if _type(f) is not list:
        return False
    for e in list.__iter__(f):
        if _type(e) is not tuple or _len(e) != 5 or _type(e[0]) is not str or _type(e[4]) is not int or \
                _type(e[2]) is not type or not (e[1] is None or _type(e[1]) is _Pattern or _type(e[1]) is str) \
                or not (e[3] is None or _type(e[3]) is _Pattern or _type(e[3]) is str):
            return False
    return True


def _containers_tampered():
    """Module-level containers the library reads at call time, changed in place."""
    bad = []
    for label, memo in _MEMOS:
        if not _all(_map(_plain_routines, dict.values(memo))):
            bad.append(label + " (an entry that is not a LAPACK/BLAS routine)")
    if not _warning_filters_plain():
        bad.append("warnings.filters (an entry that is not a plain filter)")
    return bad


def _tampered(channel_only=False):
    """Reassigned numpy/scipy/builtins attributes since the driver started (reported once;
    a comparison that cannot be made is reported too: fail closed).  channel_only: the
    modules the result message is written through (when solve returns: a library attribute
    reassigned after the last library call can no longer change one)."""
    try:
        _tamper_compare(channel_only)
    except Exception as exc:
        if _len(_ST["tamper"]) < 20:
            _ST["tamper"].append("(the comparison failed: %s)" % _tname(_type(exc)))


def _tamper_compare(channel_only):
    snap, names, mods = _TAMPER
    tags = _TAGS
    mtag = tags["get"](tags["modules"]) if tags is not None else None
    if tags is None or mtag != tags["modules_clean"]:
        if _all(_map(_is, _map(_MODULES.get, names), mods)):
            if tags is not None:
                tags["modules_clean"] = mtag
        else:
            for k, m in zip(names, mods):
                if _MODULES.get(k) is not m and "sys.modules[%r]" % k not in _ST["tamper"]:
                    _ST["tamper"].append("sys.modules[%r]" % k)
    now = list(_map(tags["get"], tags["read"])) if tags is not None else None
    if now is not None and now == tags["clean"]:      # no dict of the snapshot has changed
        snap = ()
    for i, entry in enumerate(snap):
        label, d, keys, vals = entry
        if channel_only and label not in _TAMPER_STDLIB:
            continue
        if now is not None and now[i] == tags["clean"][i]:
            continue
        if _len(d) == _len(keys) and _all(_map(_is, _map(d.get, keys), vals)):
            bad = ()
        else:
            bad = _tamper_diff(label, d, keys, vals)
        for b in bad:
            if b not in _ST["tamper"] and _len(_ST["tamper"]) < 20:
                _ST["tamper"].append(b)
        if now is not None and not bad:
            tags["clean"][i] = now[i]       # the tag read before this clean comparison
    for b in _containers_tampered():
        if b not in _ST["tamper"] and _len(_ST["tamper"]) < 20:
            _ST["tamper"].append(b)


def _no_processes(*args, **kwargs):
    raise RuntimeError("the grader refuses to start processes: a solve in another process "
                       "cannot be observed (solve in the calling process)")


def _block_processes():
    """No process creation in a job: os.fork, posix_spawn, subprocess and multiprocessing
    (every start method) fail at once instead of hanging the job."""
    import _posixsubprocess
    for mod, names in ((_os, ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen",
                              "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe")),
                       (_posixsubprocess, ("fork_exec",)), (_subprocess, ("_fork_exec",))):
        for nm in names:
            if hasattr(mod, nm):
                setattr(mod, nm, _no_processes)
    _subprocess._USE_POSIX_SPAWN = False
    for label, d, keys, vals in _TAMPER[0]:     # the grader's own change: not a tamper
        if label == "os":
            for i, k in enumerate(keys):
                if d.get(k) is _no_processes:
                    vals[i] = _no_processes


def _children():
    """This process's live child processes (pids), sorted (the runner prologue's reader)."""
    return sorted(_live_children())


def _snapshot():
    """Every path under the work folder (copy, scratch) and, in the full sandbox, its private
    writable /dev/shm (shared by the jobs of a run: a file there is state across calls; the
    host's /dev/shm, seen without file isolation, is not watched: others write there)."""
    snap = {}
    for top in (_WORK,) + (("/dev/shm",) if _LIM.get("isolated") else ()):
        for root, dirs, files in _os.walk(top):
            for nm in dirs + files:
                p = _os.path.join(root, nm)
                try:
                    st = _os.lstat(p)
                    snap[p] = (st.st_size, st.st_mtime_ns, st.st_mode)
                except OSError:
                    pass
    return snap


def _diff(a, b):
    return sorted(_os.path.relpath(p, _WORK) if p.startswith(_WORK + _os.sep) else p
                  for p in set(a) | set(b) if a.get(p) != b.get(p))[:20]


def _fields(res, n):
    keys = ("x_nodes", "uh_nodes", "x_dense", "uh_dense")
    if isinstance(res, dict):
        missing = [k for k in keys if k not in res]
        if missing:
            raise ValueError("solve(n) result lacks " + ", ".join(missing))
        vals = [res[k] for k in keys]
    elif isinstance(res, (tuple, list)) and len(res) == 4:
        vals = list(res)
    else:
        raise ValueError("solve(n) must return a mapping with x_nodes, uh_nodes, x_dense, "
                         "uh_dense or a 4-tuple, got " + type(res).__name__)
    out = {}
    caps = (n + 1, n + 1, 10 * n + 1, 10 * n + 1)
    for k, v, cap in zip(keys, vals, caps):
        arr = _np_contig(_np_array(v, dtype=_np_f64, copy=True, subok=False))
        out[k] = {"shape": list(arr.shape),
                  "b64": _b64e(arr).decode("ascii") if arr.size <= cap else None}
        if k.startswith("x_") and arr.shape == (cap,) and cap > 1:     # a grid: only where it
            grid = _np_arange(cap) / (cap - 1)                          # is not the prescribed one
            at = _nd_nonzero(arr.view(_np_u64) != grid.view(_np_u64))[0]
            if at.size <= cap // 4:
                out[k] = {"shape": [cap], "grid": {"i": _b64e(_np_contig(at, dtype=_np_i32)).decode(),
                                                   "v": _b64e(_np_contig(arr[at])).decode()}}
    return out


_ntargets, _npatched = _install()
_TAMPER = _tamper_snapshot()
_TAGS = _tag_readers(_TAMPER[0])
_MODS0 = set(_sys.modules)
_ALLOWED = set(getattr(_sys, "stdlib_module_names", ())) | {"numpy", "scipy", "fem_solver",
                                                                 "__mp_main__"}


# numpy.f2py, one of numpy's submodules the warm parent leaves lazy (import_libraries), imports
# charset_normalizer where it is installed (numpy/f2py/crackfortran.py), a package compiled by mypyc
# with a runtime helper module of its own (named <20 hex digits>__mypyc): modules numpy loads, not
# the submission (scipy's import loaded them in the warm parent before issue 21's speed work).
# Without this, a solver that loads numpy.f2py (`from numpy import *` does) was reported here
# (REVIEW, 0.0 under --strict; ADI/FEM red team round 12).  Exempt only in a job that loaded
# numpy.f2py; any other package still shows by its own name (a mypyc-compiled one included).
_NUMPY_LAZY_LOADS = {"numpy.f2py": ("charset_normalizer",)}


def _mypyc_helper(name):
    return len(name) == 27 and name.endswith("__mypyc") and all(c in "0123456789abcdef" for c in name[:20])


def _new_modules():
    new = {m.split(".")[0] for m in set(_sys.modules) - _MODS0} - _ALLOWED
    for sub, tops in _NUMPY_LAZY_LOADS.items():
        if sub in _sys.modules and sub not in _MODS0:
            new = {m for m in new if m not in tops and not _mypyc_helper(m)}
    return sorted(new)[:20]


def _compiled():
    """fem_solver.py compiled once here (compiling runs none of it), so that each job only
    executes it into a fresh module; None when it does not compile (the job's import then
    reports the error)."""
    try:
        with open(_os.path.join(_SUBDIR, "fem_solver.py"), "rb") as fh:
            return compile(fh.read(), _os.path.join(_SUBDIR, "fem_solver.py"), "exec",
                           dont_inherit=True)
    except BaseException:
        return None


_CODE = _compiled()


def _import_solver():
    """A fresh fem_solver module, as `import fem_solver` makes it."""
    if _CODE is None:
        import fem_solver
        return fem_solver
    spec = _importlib_util.spec_from_file_location("fem_solver", _os.path.join(_SUBDIR, "fem_solver.py"))
    mod = _importlib_util.module_from_spec(spec)
    _sys.modules["fem_solver"] = mod
    try:
        exec(_CODE, mod.__dict__)
    except BaseException:
        _sys.modules.pop("fem_solver", None)
        raise
    return mod


def _run_job(job):
    """One solve(n) in a fresh child: import fem_solver, call, report the field."""
    _sys.path.insert(0, _SUBDIR)    # its sibling modules import (never in the warm parent)
    n = int(job["n"])
    _ST["n"] = n
    seal = _SEALS.pop(str(job["id"]), None)
    _SEALS.clear()                  # this child's copy: it keeps only its own secret
    _np.random.seed()               # numpy's global generator: fresh entropy, as in a fresh process
    # (forked, every job would inherit the warm parent's state: unseeded np.random draws would
    # repeat in every call and read as deterministic; Python's random reseeds itself at fork)
    before = _snapshot()
    t0 = _time.monotonic()
    try:
        _sub = _import_solver()
        err = None
    except BaseException as e:
        _sub, err = None, (type(e).__name__ + ": " + str(e))[:400]
    solve = getattr(_sub, "solve", None) if _sub is not None else None
    kids = _children()
    msg = {"kind": "mesh", "n": n, "import": {
        "ok": _sub is not None, "error": err, "has_solve": callable(solve),
        "writes": _diff(before, _snapshot()), "wall": _time.monotonic() - t0,
        "processes": len(kids), "targets": _ntargets, "patched": _npatched}}
    _block_processes()
    if kids:                        # a solve in those processes could not be observed
        msg.update(fields=None, error="importing fem_solver started %d process(es): a solve in "
                   "another process cannot be observed" % len(kids), calls=[], ncalls=0, writes=[])
    elif callable(solve):
        before = _snapshot()
        _ST["calls"], _ST["depth"], _ST["seq"] = [], 0, 0     # asks: counted over the whole job
        t = _time.monotonic()
        try:
            msg.update(fields=_fields(solve(n), n), error=None)
        except BaseException as e:
            msg.update(fields=None, error=(type(e).__name__ + ": " + str(e))[:400])
        msg.update(wall=_time.monotonic() - t, calls=_ST["calls"][:64], ncalls=len(_ST["calls"]),
                   asks=_ST["asks"],
                   writes=_diff(before, _snapshot()))
    _tampered(channel_only=_ST["seq"] > 0)    # every library call was preceded by a full one
    msg["tamper"] = _ST["tamper"][:20]
    msg["new_modules"] = _new_modules()
    msg["seal"] = seal
    send(msg)


# One secret per job, drawn here in the warm parent and sent to the grader on the parent's own
# channel (a job child's lines are tagged with its job, so it cannot send this); each job's
# result message carries its own secret, so a result message the submission writes onto the
# channel itself is told from the driver's.
import secrets as _secrets
_SEALS = {str(_j["id"]): _secrets.token_hex(16) for _j in _REQ["jobs"]}
send({"kind": "seals", "seals": _SEALS})
fork_jobs(_REQ["jobs"], _run_job, _REQ.get("concurrency", 1))
send({"kind": "done"})
for _stream in (_sys.stdout, _sys.stderr):
    _stream.flush()
_os._exit(0)                        # nothing left to finalise: skip the interpreter's teardown
