"""Child program (embedded as text by the build; runs after common/child_driver_prologue.py)."""
from graders.common.child_driver_prologue import _REQ, _json, _os, _sys, fork_jobs, import_libraries, send
# -- end of source-tree preamble: the build keeps only what follows --
_SUBDIR = _sys.path.pop(0)             # nothing this warm parent imports may be a submission's file
#   (numpy/scipy, and the standard modules below: a submitted base64.py or inspect.py imported here
#   ran before the gate's go, before the recorder bound its references, in a stopped run too, and
#   held the driver's globals; red team round 7).  Only a job child puts the folder on its path.
import base64 as _b64, builtins as _builtins, inspect as _inspect, threading as _threading, time as _time
__builtins__ = dict(_builtins.__dict__)    # the functions below look builtins up here: a submission
#                                            reassigning builtins.max (or any) changes nothing they see
import_libraries(("numpy", "numpy.fft", "numpy.linalg", "numpy.ma", "numpy.polynomial", "numpy.random",
                  "scipy", "scipy.fft", "scipy.fftpack", "scipy.optimize", "scipy.linalg",
                  "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse", "scipy.sparse.linalg"))
import numpy as _np
import numpy.fft as _npfft
import numpy.linalg as _npl
import scipy as _scipy
import scipy.fft as _sfft
import scipy.fftpack as _fftpack
import scipy.optimize as _sopt
import scipy.linalg as _sla
import scipy.linalg.lapack as _lapack
import scipy.linalg.blas as _blas
import scipy.sparse as _sp
import scipy.sparse.linalg as _spl
try:
    import numpy.linalg._umath_linalg as _uml
except Exception:
    _uml = None

_S = {"poison": False, "job": "import", "m": None, "log": None, "seen": set(), "kappa": None,
      "h2k": None}
_TL = _threading.local()                # per-thread nesting depth
_LOCK = _threading.RLock()              # the log, the violation set, the perturbation stream
_LIBDIRS = tuple(_os.path.dirname(m.__file__) + _os.sep for m in (_np, _scipy))
_BW_CAP = 4096                          # materialise at most this dimension to measure a bandwidth

# -- references captured before any submitted code runs ------------------------------------
# The recorder reads operands only through these: C-level numpy callables (ufuncs and
# multiarray builtins), methods of numpy's own immutable ndarray type, and descriptors taken
# from the library classes now.  Reassigning numpy/scipy module or class attributes later
# changes nothing the recorder sees (it may change what the library computes: every
# recorded solve is then checked against its own recorded operands, _check_solve).
_nd = _np.ndarray
_A = _np.array
_Z = _np.zeros
_CAT = _np.concatenate
_CPT = _np.copyto
_ARANGE = _np.arange
_MM = _np.matmul
_ABS = _np.absolute
_MAXR = _np.maximum.reduce
_ADDR = _np.add.reduce
_ORR = _np.logical_or.reduce
_ANDR = _np.logical_and.reduce
_ISF = _np.isfinite
_NE = _np.not_equal
_ADD_AT = _np.add.at
_WHERE = _np.where
_F8 = _np.dtype("float64")
_INTS = (int, _np.int64, _np.int32, _np.intp)
_INTP = _np.intp
_getframe = _sys._getframe
_issub = issubclass
_type = type
_len = len
_b64encode = _b64.b64encode
_dumps = _json.dumps
_loads = _json.loads
import hashlib as _hashlib, weakref as _weakref
_blake = _hashlib.blake2b
_wref = _weakref.ref
import functools as _functools, types as _types
_MATRIX = _np.matrix
_CALLBACKS = frozenset({_types.FunctionType, _types.MethodType, _types.BuiltinFunctionType,
                        _functools.partial, type(_np.add)})   # code handed in as a callback
_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None), _np.float64, _np.float32,
                      _np.float16, _np.complex128, _np.complex64, _np.int64, _np.int32, _np.int16,
                      _np.int8, _np.uint64, _np.uint32, _np.uint16, _np.uint8, _np.bool_,
                      _np.longdouble, _np.clongdouble})
_SPBASE = _sp._base._spbase
_SPARRAY = getattr(_sp, "sparray", None)
_SPFMT = {}                             # exact scipy sparse class -> its format
for _c in (_sp.csr_matrix, _sp.csc_matrix, _sp.coo_matrix, _sp.dia_matrix, _sp.bsr_matrix, _sp.lil_matrix,
           _sp.dok_matrix, *(getattr(_sp, n + "_array") for n in ("csr", "csc", "coo", "dia", "bsr", "lil", "dok")
                            if hasattr(_sp, n + "_array"))):
    _SPFMT[_c] = _c.__name__[:3]
_MAKE_SP = {(fmt, _SPARRAY is not None and _issub(c, _SPARRAY)): c for c, fmt in _SPFMT.items()
            if fmt in ("csr", "csc")}
_SPDICT = None                          # the instance-__dict__ descriptor of the sparse classes
for _c in _SPBASE.__mro__ + _sp.csr_matrix.__mro__:
    if _SPDICT is None and "__dict__" in _c.__dict__:
        _SPDICT = _c.__dict__["__dict__"]
_SPDICT_GET = type(_SPDICT).__get__
_LINOP = _spl.LinearOperator
_LINOP_MATMAT = _spl.LinearOperator.matmat
_LINOP_DICT = None
for _c in _LINOP.__mro__:
    if _LINOP_DICT is None and "__dict__" in _c.__dict__:
        _LINOP_DICT = _c.__dict__["__dict__"]
_LINOP_DICT_GET = type(_LINOP_DICT).__get__
_SPVIEW = {}                            # id(owned sparse object) -> (object, row, col, val, n_rows, n_cols)


class _Unreadable(Exception):
    """An operand the recorder cannot own without asking the object itself."""


def _arr(x):
    """An owned operand as an ndarray (plain data only: an exact ndarray, an owned np.matrix, a
    scalar, or a list/tuple the recorder built from owned values)."""
    t = _type(x)
    if t is _nd:
        return x
    if t is _MATRIX or t in _SCALARS or t is list or t is tuple:
        return _A(x, subok=False)
    raise _Unreadable(f"operand of type {t.__name__}")


def _anyv(a):
    a = _arr(a)
    return bool(a.size) and bool(_ORR(_NE(a, 0), axis=None))


def _eye(n):
    z = _Z((n, n))
    z.reshape(-1)[::n + 1] = 1.0
    return z


def _tri_mask(n, k, upper):
    i = _ARANGE(n).reshape(n, 1)
    j = _ARANGE(n).reshape(1, n)
    return (j - i >= k) if upper else (j - i <= k)


def _own_sparse(x):
    """An exact copy of a scipy sparse matrix/array (its class or any subclass), read from the
    instance's own storage through a descriptor captured at driver start (never a method of
    the object or its class); the recorder's view is the (row, col, val) triple computed here
    and the library gets a fresh exact csr/csc object built from that triple."""
    fmt = None
    for c in _type(x).__mro__:
        if c in _SPFMT:
            fmt = _SPFMT[c]
            break
    d = _SPDICT_GET(_SPDICT, x, _type(x))
    if _type(d) is not dict or fmt not in ("csr", "csc", "coo", "dia", "bsr", "lil", "dok"):
        raise _Unreadable(f"sparse format {fmt} (convert to csr/csc)")
    shape = _own(d.get("_shape"))
    if (_type(shape) is not tuple or _len(shape) != 2 or any(_type(v) not in _INTS
                                                             for v in shape)):
        raise _Unreadable("sparse shape")
    nr, nc = int(shape[0]), int(shape[1])
    if fmt in ("lil", "dok"):       # Python containers of plain numbers, read element by element
        rows, cols, vals = [], [], []
        if fmt == "lil":
            R, D = d.get("rows"), d.get("data")
            if not (_type(R) is _nd and _type(D) is _nd and R.shape == (nr,) and D.shape == (nr,)):
                raise _Unreadable("sparse storage")
            for i, (ri, di) in enumerate(zip(R.tolist(), D.tolist())):
                if _type(ri) is not list or _type(di) is not list or _len(ri) != _len(di):
                    raise _Unreadable("sparse storage")
                rows += [i] * _len(ri)
                cols += ri
                vals += di
        else:
            Dk = d.get("_dict")
            if _type(Dk) is not dict:
                raise _Unreadable("sparse storage")
            for key, v in Dk.items():
                if _type(key) is not tuple or _len(key) != 2:
                    raise _Unreadable("sparse storage")
                rows.append(key[0])
                cols.append(key[1])
                vals.append(v)
        if not all(_type(v) in _SCALARS and _type(v) not in (str, bytes) for v in rows + cols + vals):
            raise _Unreadable("sparse storage")
        row, col = _A(rows, dtype=_INTP), _A(cols, dtype=_INTP)
        data = _A(vals) if vals else _Z(0)
        fmt = "coo-built"
    else:
        data = _own(d.get("data"))
    if fmt == "bsr":
        ind, ptr = _own(d.get("indices")), _own(d.get("indptr"))
        if not (_type(data) is _nd and _type(ind) is _nd and _type(ptr) is _nd and data.ndim == 3
                and ind.shape == (data.shape[0],) and ptr.ndim == 1 and ptr.size >= 1
                and int(ptr[-1]) == data.shape[0] and int(ptr[0]) == 0):
            raise _Unreadable("sparse storage")
        R, C = data.shape[1], data.shape[2]
        cnt = ptr[1:] - ptr[:-1]
        if _anyv(cnt < 0):
            raise _Unreadable("sparse index pointer")
        brow = _ARANGE(cnt.size).repeat(cnt)
        rr = _ARANGE(R).reshape(1, R, 1).repeat(C, axis=2)
        cc = _ARANGE(C).reshape(1, 1, C).repeat(R, axis=1)
        row = (brow.reshape(-1, 1, 1) * R + rr).reshape(-1)
        col = (ind.astype(_INTP).reshape(-1, 1, 1) * C + cc).reshape(-1)
        data = data.reshape(-1)
    elif fmt == "coo-built":
        pass
    elif fmt in ("csr", "csc"):
        ind, ptr = _own(d.get("indices")), _own(d.get("indptr"))
        if not (_type(data) is _nd and _type(ind) is _nd and _type(ptr) is _nd and data.ndim == 1
                and ind.shape == data.shape and ptr.ndim == 1 and ptr.size == (nr if fmt == "csr" else nc) + 1):
            raise _Unreadable("sparse storage")
        cnt = ptr[1:] - ptr[:-1]
        if _anyv(cnt < 0) or int(ptr[-1]) != data.size or int(ptr[0]) != 0:
            raise _Unreadable("sparse index pointer")
        major = _ARANGE(cnt.size).repeat(cnt)
        row, col = (major, ind) if fmt == "csr" else (ind, major)
    elif fmt == "coo":
        coords = _own(d.get("coords"))
        if coords is None:
            coords = (_own(d.get("row")), _own(d.get("col")))
        if not (_type(coords) is tuple and _len(coords) == 2 and all(_type(v) is _nd for v in coords)
                and _type(data) is _nd and coords[0].shape == data.shape == coords[1].shape):
            raise _Unreadable("sparse storage")
        row, col = coords
    else:   # dia: data (ndiag, L), offsets (ndiag,)
        off = _own(d.get("offsets"))
        if not (_type(data) is _nd and _type(off) is _nd and data.ndim == 2 and off.ndim == 1
                and off.size == data.shape[0]):
            raise _Unreadable("sparse storage")
        rows, cols, vals = [], [], []
        for q in range(off.size):
            k = int(off[q])
            j = _ARANGE(max(0, k), min(nc, nr + k, data.shape[1]))
            rows.append(j - k)
            cols.append(j)
            vals.append(data[q, j])
        row = _CAT(rows) if rows else _Z(0, dtype=int)
        col = _CAT(cols) if cols else _Z(0, dtype=int)
        data = _CAT(vals) if vals else _Z(0)
    row, col = row.astype(_INTP), col.astype(_INTP)
    if row.size and (int(_MAXR(row)) >= nr or int(_MAXR(col)) >= nc or bool(_ORR(row < 0)) or bool(_ORR(col < 0))):
        raise _Unreadable("sparse index out of range")
    is_array = _SPARRAY is not None and _issub(_type(x), _SPARRAY)
    cls = _MAKE_SP[("csc" if fmt == "csc" else "csr", is_array)]
    obj = cls((data.copy(), (row.copy(), col.copy())), shape=(nr, nc))
    with _LOCK:
        if _len(_SPVIEW) > 64:          # a view is read within the call that made it
            _SPVIEW.clear()
        _SPVIEW[id(obj)] = (obj, row, col, data, nr, nc)
    return obj


def _spview(x):
    v = _SPVIEW.get(id(x))
    return v if v is not None and v[0] is x else None


def _own_linop(x):
    """A LinearOperator materialised by the recorder (its columns, from its own matmat on
    the identity): the materialisation is recorded and is what the library solves."""
    d = _LINOP_DICT_GET(_LINOP_DICT, x, _type(x))
    shape = _own(d.get("shape")) if _type(d) is dict else None
    if (_type(shape) is not tuple or _len(shape) != 2 or any(_type(v) not in _INTS
                                                             for v in shape)):
        raise _Unreadable("LinearOperator shape")
    nr, nc = int(shape[0]), int(shape[1])
    if nr > _BW_CAP or nc > _BW_CAP:
        raise _Unreadable(f"LinearOperator of size {nr}x{nc} (larger than {_BW_CAP}: cannot be materialised)")
    M = _own(_LINOP_MATMAT(x, _eye(nc)))
    if _type(M) is not _nd:
        M = _own_plain_array(M)
    if M.shape != (nr, nc):
        raise _Unreadable("LinearOperator materialisation of the wrong shape")
    return M


def _own_plain_array(x):
    if _issub(_type(x), _nd):      # a subclass (np.matrix, ...): its raw buffer, no method of it
        out = _A(x, copy=True, subok=False)
        if _type(out) is not _nd or out.dtype.hasobject:
            raise _Unreadable("array subclass")
        return out
    raise _Unreadable(f"operand of type {_type(x).__name__}")


def _own(x, depth=0):
    """The recorder's own plain copy of one operand, by exact type: what is recorded and
    what the library is handed are this same object."""
    t = _type(x)
    if t is _nd:
        if x.dtype.hasobject:
            raise _Unreadable("object array")
        return x.copy(order="K")
    if t in _SCALARS:
        return x
    if depth > 8:
        raise _Unreadable("nested too deeply")
    if t is tuple or t is list:
        if _len(x) > 100000:
            raise _Unreadable("sequence too long")
        return t([_own(v, depth + 1) for v in x])
    if t is dict:
        return {k: _own(v, depth + 1) for k, v in x.items() if _type(k) is str}
    if t is _MATRIX:            # numpy's own matrix class: the raw buffer, handed on as a matrix
        return _own_plain_array(x).view(_MATRIX)
    if _issub(t, _nd):
        return _own_plain_array(x)
    if _issub(t, _SPBASE):
        return _own_sparse(x)
    if _issub(t, _LINOP):
        return _own_linop(x)
    if t is _SolverProxy:
        return x
    if t in _CALLBACKS:         # a callback (a function, a bound method, a partial): code, not an
        return x                # operand; any other callable object may carry its own __array__
    raise _Unreadable(f"operand of type {t.__name__}")


# -- binding arguments with the library function's own signature --------------------------
def _params_of(fn):
    """[(name, default)] in positional order, from the Python signature or, for an f2py
    LAPACK/BLAS wrapper, from its docstring (`x,info = dgtsv(dl,d,du,b,[overwrite_dl,...])`
    and its `Default: N` lines); None when neither is readable."""
    doc = getattr(fn, "__doc__", None)
    if _type(fn).__name__ == "fortran" and isinstance(doc, str):
        head = doc.strip().split("\n", 1)[0]
        if "(" not in head or "=" not in head:
            return None
        outs = [s.strip() for s in head.split("=", 1)[0].split(",")]
        inner = head[head.index("(") + 1:head.rindex(")")]
        req, _, opt = inner.partition("[")
        names = [s.strip() for s in req.split(",") if s.strip()]
        optn = [s.strip() for s in opt.rstrip("]").split(",") if s.strip()]
        defaults = {}
        lines = doc.split("\n")
        for i, line in enumerate(lines[:-1]):
            nm = line.split(":", 1)[0].strip()
            if nm in optn and lines[i + 1].strip().startswith("Default:"):
                v = lines[i + 1].strip()[len("Default:"):].strip()
                if v.lstrip("-").isdigit():
                    defaults[nm] = int(v)
        return ([(n, _NODEF) for n in names] + [(n, defaults.get(n, _NODEF)) for n in optn], outs)
    try:
        sig = _inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ps.append((p.name, _NODEF if p.default is p.empty else p.default))
    return (ps, None)


_NODEF = object()


def _bind(params, args, kwargs):
    """name -> value for every parameter (defaults filled); positional and keyword alike."""
    out = {}
    if params is None:
        return None
    names = params[0]
    if _len(args) > _len(names):
        return None
    for (nm, _), v in zip(names, args):
        out[nm] = v
    for k, v in kwargs.items():
        out[k] = v
    for nm, dv in names:
        if nm not in out and dv is not _NODEF:
            out[nm] = dv
    return out


def _arg(args, kwargs, i, name, default=None):
    if _len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _hb_dense(a):
    a = _arr(a)
    if a.ndim < 2 or a.size == 0:
        return 0
    n = a.shape[-1]
    if n > _BW_CAP or a.shape[-2] > _BW_CAP:
        return None
    nz = a.reshape((-1,) + a.shape[-2:]).nonzero()
    return int(_MAXR(_ABS(nz[1] - nz[2]))) if _len(nz[1]) else 0


def _hb_any(A):
    v = _spview(A)
    if v is not None:
        keep = _NE(v[3], 0)
        return int(_MAXR(_ABS(v[1][keep] - v[2][keep]))) if _anyv(keep) else 0
    return _hb_dense(A)


def _shape_of(A):
    v = _spview(A)
    if v is not None:
        return (v[4], v[5])
    return _arr(A).shape


def _x_dense(args, kwargs):                 # f(a, ...): a dense (..., n, n) matrix
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(a.shape[-1]) if a.ndim else 1, _hb_dense(a), False


def _x_trsm(args, kwargs):                  # blas trsm(alpha, a, b)
    a = _arr(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), _hb_dense(a), False


def _x_factor(args, kwargs):                # lu_solve((lu, piv), b), getrs(lu, piv, b), potrs(c, b)
    f = _arg(args, kwargs, 0, "lu_and_piv")
    if isinstance(f, tuple):
        f = f[0]
    f = _arr(f)
    return int(f.shape[-1]), None, True    # bandwidth was checked at the factorisation


def _x_banded(args, kwargs):                # solve_banded((l, u), ab, b)
    lu = _arg(args, kwargs, 0, "l_and_u")
    ab = _arr(_arg(args, kwargs, 1, "ab"))
    u = int(lu[1])
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), max([abs(r - u) for r in rows] or [0]), False


def _x_hbanded(args, kwargs, lower_pos=4):  # solveh_banded(ab, b, ow_ab, ow_b, lower)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    lower = bool(_arg(args, kwargs, lower_pos, "lower", False))
    u = ab.shape[0] - 1
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), max([(r if lower else u - r) for r in rows] or [0]), False


def _x_cholbanded(args, kwargs):            # cholesky_banded(ab, overwrite_ab, lower)
    return _x_hbanded(args, kwargs, lower_pos=2)


def _x_chobanded(args, kwargs):             # cho_solve_banded((cb, lower), b)
    cb = _arr(_arg(args, kwargs, 0, "cb_and_lower")[0])
    return int(cb.shape[-1]), int(cb.shape[0] - 1), False


def _x_tri(args, kwargs):                   # gtsv(dl, d, du, b), gttrf(dl, d, du)
    d = _arr(_arg(args, kwargs, 1, "d"))
    return int(d.shape[0]), 1, False


def _x_tri0(args, kwargs):                  # ptsv(d, e, b), pttrf(d, e), pttrs(d, e, b)
    d = _arr(_arg(args, kwargs, 0, "d"))
    return int(d.shape[0]), 1, False


def _x_gbsv(args, kwargs):                  # gbsv(kl, ku, ab, b)
    ab = _arr(_arg(args, kwargs, 2, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 0, "kl")), int(_arg(args, kwargs, 1, "ku"))), False


def _x_gbtrf(args, kwargs):                 # gbtrf(ab, kl, ku), gbtrs(ab, kl, ku, b, ipiv)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 1, "kl")), int(_arg(args, kwargs, 2, "ku"))), False


def _x_pb(args, kwargs):                    # pbsv(ab, b), pbtrf(ab), pbtrs(ab, b)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), int(ab.shape[0] - 1), False


def _x_tbsv(args, kwargs):                  # blas tbsv(k, a, x)
    a = _arr(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), int(_arg(args, kwargs, 0, "k")), False


def _x_n0(args, kwargs):                    # ppsv(n, ap, b), pftrs(n, a, b), blas tpsv(n, ap, x): packed
    return int(_arg(args, kwargs, 0, "n")), None, False     # storage (bandwidth not measured)


def _x_tbtrs(args, kwargs):                 # tbtrs(ab, b): a banded triangular solve
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), (max(rows) - min(rows) if rows else 0), False


def _x_trsyl(args, kwargs):                 # trsyl(a, b, c), tgsyl(a, b, c, ...): a 2-D solve of size c.size
    return int(_arr(_arg(args, kwargs, 2, "c")).size), int(_arr(_arg(args, kwargs, 0, "a")).shape[0]), False


def _x_sparse(args, kwargs):                # spsolve(A, b), splu(A), cg(A, b), ...
    A = _arg(args, kwargs, 0, "A")
    return int(_shape_of(A)[0]), _hb_any(A), False


def _x_sylvester(args, kwargs):             # solve_sylvester(a, b, q): a 2-D solve of size q.size
    q = _arr(_arg(args, kwargs, 2, "q"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_lyap(args, kwargs):                  # solve_{continuous,discrete}_lyapunov(a, q)
    q = _arr(_arg(args, kwargs, 1, "q"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_tensor(args, kwargs):                # numpy tensorsolve(a, b)
    b = _arr(_arg(args, kwargs, 1, "b"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    n = int(b.size)
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_tensorinv(args, kwargs):
    a = _arr(_arg(args, kwargs, 0, "a"))
    ind = int(_arg(args, kwargs, 1, "ind", 2))
    n = _prod(a.shape[:ind])
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_toeplitz(args, kwargs):              # solve_toeplitz(c_or_cr, b)
    c = _arg(args, kwargs, 0, "c_or_cr")
    parts = [_arr(p).ravel() for p in (c if isinstance(c, tuple) else (c,))]
    hb = max([int(_flatnz(p[1:] != 0).max()) + 1 if _anyv(p[1:] != 0) else 0 for p in parts])
    return int(parts[0].size), hb, False


def _x_circulant(args, kwargs):             # solve_circulant(c, b)
    c = _arr(_arg(args, kwargs, 0, "c")).ravel()
    return int(c.size), (int(c.size - 1) if _anyv(c[1:] != 0) else 0), False


_ENTRY = [
    (_npl, "numpy.linalg", {"solve": _x_dense, "inv": _x_dense, "pinv": _x_dense, "lstsq": _x_dense,
                            "cholesky": _x_dense,
                            "tensorsolve": _x_tensor, "tensorinv": _x_tensorinv}),
    (_uml, "numpy.linalg._umath_linalg", {"solve": _x_dense, "solve1": _x_dense, "inv": _x_dense}),
    (_sla, "scipy.linalg", {"solve": _x_dense, "inv": _x_dense, "pinv": _x_dense, "pinvh": _x_dense,
                            "lstsq": _x_dense, "lu": _x_dense, "lu_factor": _x_dense,
                            "cho_factor": _x_dense, "cholesky": _x_dense,
                            "ldl": _x_dense, "solve_triangular": _x_dense,
                            "lu_solve": _x_factor, "cho_solve": _x_factor,
                            "solve_banded": _x_banded, "solveh_banded": _x_hbanded,
                            "cholesky_banded": _x_cholbanded, "cho_solve_banded": _x_chobanded,
                            "solve_toeplitz": _x_toeplitz, "solve_circulant": _x_circulant,
                            "solve_sylvester": _x_sylvester,
                            "solve_continuous_lyapunov": _x_lyap, "solve_discrete_lyapunov": _x_lyap,
                            "solve_lyapunov": _x_lyap}),
    (_spl, "scipy.sparse.linalg", {n: _x_sparse for n in (
        "spsolve", "spsolve_triangular", "splu", "spilu", "factorized", "inv", "cg", "bicg",
        "bicgstab", "cgs", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr", "lsqr", "lsmr")}),
]
_LAPACK_BASES = {"gtsv": _x_tri, "gttrf": _x_tri, "gttrs": _x_tri, "ptsv": _x_tri0, "pttrf": _x_tri0,
                 "pttrs": _x_tri0, "gbsv": _x_gbsv, "gbtrf": _x_gbtrf, "gbtrs": _x_gbtrf,
                 "pbsv": _x_pb, "pbtrf": _x_pb, "pbtrs": _x_pb, "getrs": _x_factor, "getri": _x_factor,
                 "potrs": _x_factor, "potri": _x_factor, "sytrs": _x_factor, "sytri": _x_factor,
                 "gtsvx": _x_tri, "ptsvx": _x_tri0, "tbtrs": _x_tbtrs, "trsyl": _x_trsyl, "tgsyl": _x_trsyl,
                 **{b: _x_n0 for b in ("ppsv", "pptrf", "pptrs", "pptri", "pftrf", "pftrs", "pftri")}}
for _b in ("gesv", "getrf", "posv", "potrf", "sysv", "sytrf", "hesv", "hetrf", "gels", "gelsd",
           "gelss", "gelsy", "trtrs", "gesvx", "posvx", "sysvx", "getc2", "gesc2", "pstrf", "trtri", "gglse"):
    _LAPACK_BASES[_b] = _x_dense
_ENTRY.append((_lapack, "scipy.linalg.lapack", {p + b: x for b, x in _LAPACK_BASES.items()
                                                for p in "sdcz"}))
_ENTRY.append((_blas, "scipy.linalg.blas", {**{p + "trsv": _x_dense for p in "sdcz"},
                                            **{p + "trsm": _x_trsm for p in "sdcz"},
                                            **{p + "tbsv": _x_tbsv for p in "sdcz"},
                                            **{p + "tpsv": _x_n0 for p in "sdcz"}}))


def _x_are(args, kwargs):                   # solve_{continuous,discrete}_are(a, b, q, r): X is n x n
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(a.shape[0]) ** 2, int(a.shape[0]), False


for _m, _mn, _t in _ENTRY:
    if _m is _sla:
        _t.update({"solve_continuous_are": _x_are, "solve_discrete_are": _x_are})

# Routes that can do a 2-D implicit solve without a banded system: extractors
# return (dimension, whether the result can reconstruct an operator).  The
# dimension of a transform is the product of its lengths along the transformed
# axes (a batch of 1-D transforms along lines has dimension m - 1).


def _ax_dim(a, s, axes, nd):
    a = _arr(a)
    if s is not None:
        return _prod(s if _type(s) in (tuple, list) else [s])
    if axes is None:
        axes = range(a.ndim) if nd is None else range(-nd, 0)
    return _prod([a.shape[int(v)] for v in (axes if _type(axes) in (tuple, list, range) else [axes])]) if a.ndim else 1


def _t_fft1(args, kwargs):                  # fft(x, n=None, axis=-1)
    n = _arg(args, kwargs, 1, "n")
    return (int(n) if n is not None else _ax_dim(_arg(args, kwargs, 0, "x", kwargs.get("a")), None,
                                                 [_arg(args, kwargs, 2, "axis", -1)], 1)), True


def _t_trig1(args, kwargs):                 # dct(x, type=2, n=None, axis=-1)
    n = _arg(args, kwargs, 2, "n")
    return (int(n) if n is not None else _ax_dim(_arg(args, kwargs, 0, "x"), None,
                                                 [_arg(args, kwargs, 3, "axis", -1)], 1)), True


def _t_fftn(nd):                            # fft2(x, s, axes) / fftn(x, s, axes)
    def x(args, kwargs):
        s = _arg(args, kwargs, 1, "s", kwargs.get("shape"))
        return _ax_dim(_arg(args, kwargs, 0, "x", kwargs.get("a")), s, _arg(args, kwargs, 2, "axes"), nd), True
    return x


def _t_trign(args, kwargs):                 # dctn(x, type, s, axes)
    s = _arg(args, kwargs, 2, "s", kwargs.get("shape"))
    return _ax_dim(_arg(args, kwargs, 0, "x"), s, _arg(args, kwargs, 3, "axes"), None), True


def _m_dense(vectors=True, flag=None, invert=False):
    """A matrix route on args[0]; `flag` names the keyword that switches vectors off/on."""
    def x(args, kwargs):
        a = _arr(_arg(args, kwargs, 0, "a"))
        v = vectors
        if flag is not None and flag in kwargs:
            v = bool(kwargs[flag]) != invert
        return (int(a.shape[-1]) if a.ndim else 1), v
    return x


def _m_len(args, kwargs):                   # eigh_tridiagonal(d, e)
    return int(_arr(_arg(args, kwargs, 0, "d")).shape[-1]), not kwargs.get("eigvals_only", False)


def _m_op(args, kwargs):                    # sparse eigs(A), expm(A), expm_multiply(A, B)
    A = _arg(args, kwargs, 0, "A")
    return int(_shape_of(A)[0]), True


def _o_x0(args, kwargs):                    # fsolve(func, x0), root(fun, x0), newton_krylov(F, xin)
    x0 = _arg(args, kwargs, 1, "x0", kwargs.get("xin"))
    return int(_arr(x0).size), True


def _o_lin(args, kwargs):                   # lsq_linear(A, b), nnls(A, b)
    return int(_shape_of(_arg(args, kwargs, 0, "A"))[1]), True


_FFT1 = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_FFT2 = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
_FFTN = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
_TRIG1 = ("dct", "idct", "dst", "idst")
_TRIGN = ("dctn", "idctn", "dstn", "idstn")
_ROUTES = [
    (_npfft, "numpy.fft", {**{n: _t_fft1 for n in _FFT1}, **{n: _t_fftn(2) for n in _FFT2},
                           **{n: _t_fftn(None) for n in _FFTN}}),
    (_sfft, "scipy.fft", {**{n: _t_fft1 for n in _FFT1}, **{n: _t_fftn(2) for n in _FFT2},
                          **{n: _t_fftn(None) for n in _FFTN}, **{n: _t_trig1 for n in _TRIG1},
                          **{n: _t_trign for n in _TRIGN}}),
    (_fftpack, "scipy.fftpack", {**{n: _t_fft1 for n in ("fft", "ifft", "rfft", "irfft")},
                                 **{n: _t_fftn(2) for n in ("fft2", "ifft2")},
                                 **{n: _t_fftn(None) for n in ("fftn", "ifftn")},
                                 **{n: _t_trig1 for n in _TRIG1}, **{n: _t_trign for n in _TRIGN}}),
    (_npl, "numpy.linalg", {"eig": _m_dense(), "eigh": _m_dense(), "eigvals": _m_dense(False),
                            "eigvalsh": _m_dense(False), "svd": _m_dense(True, "compute_uv"),
                            "svdvals": _m_dense(False), "qr": _m_dense()}),
    (_sla, "scipy.linalg", {"eig": _m_dense(), "eigh": _m_dense(True, "eigvals_only", True),
                            "eigvals": _m_dense(False), "eigvalsh": _m_dense(False),
                            "eig_banded": _m_dense(True, "eigvals_only", True),
                            "eigvals_banded": _m_dense(False), "eigh_tridiagonal": _m_len,
                            "eigvalsh_tridiagonal": _m_len, "svd": _m_dense(True, "compute_uv"),
                            "svdvals": _m_dense(False), "schur": _m_dense(), "qz": _m_dense(),
                            "ordqz": _m_dense(), "hessenberg": _m_dense(False, "calc_q"),
                            "qr": _m_dense(), "rq": _m_dense(), "qr_multiply": _m_dense(),
                            **{n: _m_dense() for n in ("expm", "logm", "sqrtm", "funm", "signm", "cosm",
                                                       "sinm", "tanm", "coshm", "sinhm", "tanhm",
                                                       "fractional_matrix_power", "expm_frechet")}}),
    (_spl, "scipy.sparse.linalg", {n: _m_op for n in ("eigs", "eigsh", "svds", "lobpcg", "expm",
                                                      "expm_multiply")}),
    # a 2-D implicit step is also a root / least-squares / minimisation problem
    (_sopt, "scipy.optimize", {**{n: _o_x0 for n in ("fsolve", "root", "least_squares", "leastsq", "minimize",
                                                     "newton_krylov", "anderson", "broyden1", "broyden2",
                                                     "diagbroyden", "excitingmixing", "linearmixing")},
                               "lsq_linear": _o_lin, "nnls": _o_lin}),
    (_lapack, "scipy.linalg.lapack", {p + n: _m_dense() for p in "sdcz" for n in (
        "syev", "syevd", "syevr", "syevx", "heev", "heevd", "heevr", "geev", "gesdd", "gesvd", "geqrf",
        "gees", "gges", "stev", "stevd", "stemr", "sbevd", "hbevd", "gejsv")}),
]
_FACTORISE = {"lu_factor", "cho_factor", "cholesky_banded", "getrf", "potrf", "gttrf", "pttrf", "gbtrf",
              "pbtrf", "lu", "cholesky", "ldl", "splu", "spilu", "factorized", "sytrf", "hetrf"}
_CONSUME = {"lu_solve", "cho_solve", "cho_solve_banded", "getrs", "getri", "potrs", "potri", "gttrs", "pttrs",
            "gbtrs", "pbtrs", "solve_triangular", "trtrs", "trsv", "trsm", "sytrs", "sytri"}
_TRIANGULAR = ("solve_triangular", "trtrs", "trsv", "trsm")
_OUTS = {}                              # wrapped name -> an f2py routine's output names


def _base(name):
    short = name.rsplit(".", 1)[-1]
    if name.startswith(("scipy.linalg.lapack.", "scipy.linalg.blas.")) and short[:1] in "sdcz":
        return short[1:]
    return short


def _send_violation(name, n, hb, nested=False, route="solve"):
    with _LOCK:
        key = (_S["job"], name, n, hb, nested)
        if key in _S["seen"] or len(_S["seen"]) >= 200:
            return
        _S["seen"].add(key)
    send({"kind": "violation", "job": _S["job"], "fn": name, "dim": n, "hb": hb, "m": _S["m"],
          "nested": nested, "route": route})


def _limit(m):
    return _REQ["dim_factor"] * (m + 1)


def _precheck(name, n, hb, nested=False):
    """A dimension or bandwidth offence is sent before the library runs (a hang inside it
    leaves the offence reported)."""
    m = _S["m"]
    if m is not None and ((n is not None and n > _limit(m)) or
                          (not nested and hb is not None and hb > _REQ["max_half_bandwidth"])):
        _send_violation(name, n, hb, nested)


def _record(name, n, hb, factor, nested, theta, chk=None, status=None):
    with _LOCK:
        log = _S["log"]
        if log is not None:
            if nested:
                log["nested"] += 1
                log["nested_fns"][name] = log["nested_fns"].get(name, 0) + 1
            else:
                log["count"] += 1
                log["fns"][name] = log["fns"].get(name, 0) + 1
                if n is not None:
                    log["max_dim"] = max(log["max_dim"], n)
                if hb is not None:
                    log["max_hb"] = max(log["max_hb"], hb)
                elif not factor:
                    log["unknown_hb"] += 1
                if chk is not None:
                    log["checked"] += 1
                    log["max_resid"] = max(log["max_resid"], float(chk[0]))
                if status == "foreign":
                    log["foreign"] += 1
                if theta is not None:
                    log["adi"] += 1
                    key = "%.10e|%.10e" % tuple(theta)
                    if key in log["thetas"] or len(log["thetas"]) < 64:
                        log["thetas"][key] = log["thetas"].get(key, 0) + 1
    if nested:
        _precheck(name, n, hb, True)


def _record_route(name, n, vectors, nested):
    m = _S["m"]
    with _LOCK:
        log = _S["log"]
        if log is not None:
            slot = log["routes"].setdefault(name, [0, 0, False, 0])   # calls, largest size,
            slot[0] += 1                                                # used with vectors at
            slot[1] = max(slot[1], n or 0)                              # top level, nested calls
            slot[2] = slot[2] or (bool(vectors) and not nested)
            slot[3] += bool(nested)
    if vectors and not nested and m is not None and n is not None and n > _limit(m):
        _send_violation(name, n, None, nested, route="spectral")   # a library's own sub-call: the
                                                                   # outer call was judged


_RNG = _np.random.default_rng(int(_REQ["perturb_seed"]))
_SAMPLE = _np.random.default_rng(int(_REQ["perturb_seed"]) ^ 0x5A5A5A5A).random   # which large solves are checked


def _prod(vals):
    n = 1
    for v in vals:
        n *= int(v)
    return n


def _flatnz(a):
    return _arr(a).reshape(-1).nonzero()[0]


# -- the effective matrix a routine reads ---------------------------------------------------
# An operator is ("tri", dl, d, du) (1-D diagonals), ("dense", M) (M (n, n), or a stack
# (..., n, n) solved system by system) or ("coo", row, col, val, n); built from owned
# operands only, with the routine's own flags (one triangle for pos/sym/her, band storage
# with its lower/upper, trans).
def _flag(v):
    if _type(v) is str:
        return v
    return bool(v) if _type(v) in _SCALARS else False


def _sym_from(M, lower):
    n = M.shape[-1]
    keep = _tri_mask(n, 0, not lower)
    T = M * keep
    strict = _tri_mask(n, -1 if lower else 1, not lower) if n > 1 else keep
    S = T * strict
    return T + S.swapaxes(-1, -2)


def _band_op(ab, diag, kmin, kmax):
    """A[i, j] = ab[diag + i - j, j] for offsets j - i in [kmin, kmax]."""
    ab = _arr(ab)
    if ab.ndim != 2:
        return None
    n = ab.shape[1]
    rows = {k: diag - k for k in range(kmin, kmax + 1) if 0 <= diag - k < ab.shape[0]}
    wide = [k for k, r in rows.items() if abs(k) > 1 and _anyv(ab[r, max(0, k):n + min(0, k)])]
    if not wide:
        z = _Z(max(n - 1, 0), dtype=ab.dtype)
        d = ab[rows[0]].copy() if 0 in rows else _Z(n, dtype=ab.dtype)
        du = ab[rows[1], 1:].copy() if 1 in rows else z
        dl = ab[rows[-1], :n - 1].copy() if -1 in rows else z
        return ("tri", dl, d, du)
    if n > _BW_CAP:
        return ("band", n, max(abs(k) for k in wide))
    M = _Z((n, n), dtype=ab.dtype)
    idx = _ARANGE(n)
    for k, r in rows.items():
        if k >= 0:
            M[idx[:n - k], idx[k:]] = ab[r, k:]
        else:
            M[idx[-k:], idx[:n + k]] = ab[r, :n + k]
    return ("dense", M)


def _sym_band_op(ab, lower):
    ab = _arr(ab)
    if ab.ndim != 2:
        return None
    u = ab.shape[0] - 1
    if lower:
        op = _band_op(ab, 0, -u, 0)         # A[i, j] = ab[i - j, j], i >= j
    else:
        op = _band_op(ab, u, 0, u)          # A[i, j] = ab[u + i - j, j], i <= j
    if op is None or op[0] == "band":
        return op
    if op[0] == "tri":
        off = op[1] if lower else op[3]
        return ("tri", off, op[2], off)
    return ("dense", _sym_from(op[1], lower))


def _dense_op(a, structure=None, lower=False, unit=False):
    """A dense square operand (or a stack), read as `structure` reads it."""
    if _spview(a) is not None:
        v = _spview(a)
        return ("coo", v[1], v[2], v[3], v[4]) if v[4] == v[5] else None
    a = _arr(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1:
        return None
    if a.size > _BW_CAP * _BW_CAP:
        return None
    n = a.shape[-1]
    if structure in ("pos", "positive definite", "sym", "symmetric", "her", "hermitian"):
        return ("dense", _sym_from(a, lower))
    if structure in ("upper triangular", "lower triangular", "triangle"):
        up = structure == "upper triangular" or (structure == "triangle" and not lower)
        T = a * _tri_mask(n, 0, up)
        if unit:
            T = T * _NE(_eye(n), 1) + _eye(n)
        return ("dense", T)
    if structure == "diagonal":
        return ("dense", a * _eye(n))
    if structure == "tridiagonal":
        return ("dense", a * _tri_mask(n, 1, False) * _tri_mask(n, -1, True))
    return ("dense", a.copy())


def _op_of(base, name, a, k):
    """The effective operator of a solve or factorisation call, or None."""
    if base == "solve" and name.startswith("scipy.linalg."):
        assume = _flag(_arg(a, k, 6, "assume_a"))
        op = _dense_op(_arg(a, k, 0, "a"), assume if _type(assume) is str else None,
                       _flag(_arg(a, k, 2, "lower", False)))
        return _op_T(op) if _flag(_arg(a, k, 7, "transposed", False)) is True else op
    if base in ("solve", "inv", "lu_factor", "getrf", "gesv", "lu", "tensorsolve"):
        return _dense_op(_arg(a, k, 0, "a"))
    if base in ("cho_factor", "posv", "potrf", "sysv", "sytrf", "hesv", "hetrf", "cholesky"):
        if name == "numpy.linalg.cholesky":
            lower = not _flag(k.get("upper", False))
        else:
            lower = _flag(_arg(a, k, 1, "lower", False)) if base in ("cho_factor", "cholesky") \
                else _flag(k.get("lower", 0))
        return _dense_op(_arg(a, k, 0, "a"), "sym", lower)
    if base == "ldl":
        return _dense_op(_arg(a, k, 0, "A", k.get("a")), "sym", _flag(_arg(a, k, 1, "lower", True)))
    if base in ("solve_triangular", "trtrs"):
        if base == "solve_triangular":
            lower, unit, tr = (_flag(_arg(a, k, 3, "lower", False)), _flag(_arg(a, k, 4, "unit_diagonal", False)),
                               _arg(a, k, 2, "trans", 0))
        else:
            lower, unit, tr = _flag(k.get("lower", 0)), _flag(k.get("unitdiag", 0)), k.get("trans", 0)
        op = _dense_op(_arg(a, k, 0, "a"), "triangle", lower, unit)
        return _op_T(op) if tr in (1, 2, "T", "C") else op
    if base == "solve_banded":
        lu = _arg(a, k, 0, "l_and_u")
        low, up = int(lu[0]), int(lu[1])
        return _band_op(_arg(a, k, 1, "ab"), up, -low, up)
    if base in ("solveh_banded", "cholesky_banded"):
        return _sym_band_op(_arg(a, k, 0, "ab"), _flag(_arg(a, k, 4 if base == "solveh_banded" else 2,
                                                             "lower", False)))
    if base in ("pbsv", "pbtrf"):
        return _sym_band_op(_arg(a, k, 0, "ab"), _flag(k.get("lower", 0)))
    if base in ("gbsv", "gbtrf"):
        kl, ku = int(k.get("kl")), int(k.get("ku"))
        return _band_op(k.get("ab"), kl + ku, -kl, ku)
    if base in ("gtsv", "gttrf", "gtsvx"):      # copies: the routine may overwrite its operands
        dl, d, du = (_arr(k.get(nm)).reshape(-1).copy() for nm in ("dl", "d", "du"))
        return ("tri", dl, d, du)
    if base in ("ptsv", "pttrf", "ptsvx"):
        d, e = _arr(k.get("d")).reshape(-1).copy(), _arr(k.get("e")).reshape(-1).copy()
        return ("tri", e, d, e)
    if base in ("spsolve", "splu", "factorized", "cg", "bicg", "bicgstab", "cgs", "gmres", "lgmres",
                "minres", "qmr", "gcrotmk", "tfqmr"):
        return _dense_op(_arg(a, k, 0, "A"))
    if base == "solve_toeplitz":
        c = _arg(a, k, 0, "c_or_cr")
        col, row = (c if _type(c) is tuple else (c, None))
        col = _arr(col).ravel()
        row = col.conj() if row is None else _arr(row).ravel()
        n = col.size
        if n > _BW_CAP or row.size != n:
            return None
        i = _ARANGE(n).reshape(n, 1) - _ARANGE(n).reshape(1, n)
        return ("dense", _WHERE(i >= 0, col[_ABS(i)], row[_ABS(i)]))
    if base == "solve_circulant":
        c = _arr(_arg(a, k, 0, "c")).ravel()
        n = c.size
        if n > _BW_CAP:
            return None
        i = (_ARANGE(n).reshape(n, 1) - _ARANGE(n).reshape(1, n)) % n
        return ("dense", c[i])
    return None


def _op_T(op):
    if op is None:
        return None
    if op[0] == "tri":
        return ("tri", op[3], op[2], op[1])
    if op[0] == "dense":
        return ("dense", op[1].swapaxes(-1, -2).copy())
    if op[0] == "coo":
        return ("coo", op[2], op[1], op[3], op[4])
    return op


def _op_n(op):
    if op[0] == "tri":
        return int(op[2].size)
    if op[0] == "dense":
        return int(op[1].shape[-1])
    if op[0] in ("coo", "band"):
        return int(op[4] if op[0] == "coo" else op[1])
    return None


def _op_hb(op):
    if op[0] == "tri":
        return 1 if (_anyv(op[1]) or _anyv(op[3])) else 0
    if op[0] == "dense":
        return _hb_dense(op[1])
    if op[0] == "coo":
        keep = _NE(op[3], 0)
        return int(_MAXR(_ABS(op[1][keep] - op[2][keep]))) if _anyv(keep) else 0
    if op[0] == "band":
        return op[2]
    return None


def _op_dense(op):
    """The operator as a dense (n, n) array (or stack), or None beyond the cap."""
    if op[0] == "dense":
        return op[1]
    n = _op_n(op)
    if n is None or n > _BW_CAP:
        return None
    if op[0] == "tri":
        dt = (op[1][:0] + op[2][:0] + op[3][:0]).dtype
        M = _Z((n, n), dtype=dt)
        i = _ARANGE(n)
        M[i, i] = op[2]
        if n > 1:
            M[i[1:], i[:-1]] = op[1]
            M[i[:-1], i[1:]] = op[3]
        return M
    if op[0] == "coo":
        M = _Z((n, n), dtype=op[3].dtype)
        _ADD_AT(M, (op[1], op[2]), op[3])
        return M
    return None


def _op_tri(op):
    """(dl, d, du) of a tridiagonal operator (a stack: the direct sum of its systems)."""
    if op is None:
        return None
    if op[0] == "tri":
        return op[1:]
    if op[0] == "coo":
        if _op_hb(op) > 1:
            return None
        op = ("dense", _op_dense(op))
        if op[1] is None:
            return None
    if op[0] != "dense":
        return None
    a = op[1]
    n = a.shape[-1]
    if n < 2 or n > _BW_CAP:
        return None
    if _hb_dense(a) > 1:
        return None
    if a.ndim == 2:
        return a.diagonal(-1), a.diagonal(0), a.diagonal(1)
    a = a.reshape((-1,) + a.shape[-2:])
    z = _Z((a.shape[0], 1), dtype=a.dtype)      # a zero coupling between consecutive systems
    sub = _CAT([a.diagonal(-1, 1, 2), z], axis=1).reshape(-1)[:-1]
    sup = _CAT([a.diagonal(1, 1, 2), z], axis=1).reshape(-1)[:-1]
    return sub, a.diagonal(0, 1, 2).reshape(-1), sup


def _op_apply(op, x):
    """A x (x (n,) or (n, k), or a stack) with the recorder's own arithmetic."""
    if op[0] == "tri":
        dl, d, du = op[1], op[2], op[3]
        if x.shape[0] != d.size:
            return None
        col = (lambda v: v) if x.ndim == 1 else (lambda v: v.reshape((v.size,) + (1,) * (x.ndim - 1)))
        y = col(d) * x
        if d.size > 1:
            y[1:] += col(dl) * x[:-1]
            y[:-1] += col(du) * x[1:]
        return y
    M = _op_dense(op)
    if M is None:
        return None
    if M.ndim > 2 and x.ndim == M.ndim - 1:     # a stack of systems with one vector each
        return _MM(M, x.reshape(x.shape + (1,))).reshape(x.shape)
    return _MM(M, x)


def _op_norm(op):
    if op[0] == "tri":
        return float(_MAXR(_ABS(op[2]) + _CAT([_Z(1), _ABS(op[1])]) + _CAT([_ABS(op[3]), _Z(1)])))
    M = _op_dense(op)
    if M is None:
        return None
    return float(_MAXR(_ADDR(_ABS(M), axis=-1), axis=None)) if M.size else 0.0


_THETA_CACHE = {}


def _theta(tri):
    """(theta_x, theta_y) when the tridiagonal matrix is, up to a scalar factor, a direct sum of
    I - r D2 (D2 = tridiag(1, -2, 1)) on grid lines of m - 1 nodes with one r > 0 (decoupled
    single rows allowed); theta = r h^2 / (k kappa) for kappa = a and c.  Otherwise None.
    Remembered by the diagonals' bytes (a solver reuses its few operators every step)."""
    m, kap, h2k = _S["m"], _S["kappa"], _S["h2k"]
    if tri is None or m is None or kap is None:
        return None
    dl, d, du = (_A(v, dtype=_F8).reshape(-1) for v in tri)
    key = (m, kap, h2k, dl.tobytes(), d.tobytes(), du.tobytes())
    hit = _THETA_CACHE.get(key, _MISSING)
    if hit is not _MISSING:
        return None if hit is None else list(hit)
    out = _theta_of(dl, d, du, m, kap, h2k)
    with _LOCK:
        if _len(_THETA_CACHE) > 256:
            _THETA_CACHE.clear()
        _THETA_CACHE[key] = None if out is None else tuple(out)
    return out


def _theta_of(dl, d, du, m, kap, h2k):
    n = d.size
    if n < 2 or dl.size != n - 1 or du.size != n - 1 or not (
            bool(_ANDR(_ISF(dl))) and bool(_ANDR(_ISF(d))) and bool(_ANDR(_ISF(du)))):
        return None
    rtol = float(_REQ["adi_op_rtol"])
    cut = ((dl == 0) & (du == 0)).nonzero()[0] + 1
    rs = []
    for lo, hi in zip(_CAT(([0], cut)).tolist(), _CAT((cut, [n])).tolist()):
        if hi - lo == 1:
            continue
        if hi - lo == m - 1:
            bl, bd, bu = dl[lo:hi - 1], d[lo:hi], du[lo:hi - 1]
        elif hi - lo == m + 1 and du[lo] == 0 and dl[hi - 2] == 0 and d[lo] != 0 and d[hi - 1] != 0:
            bl, bd, bu = dl[lo:hi - 2], d[lo + 1:hi - 1], du[lo + 1:hi - 1]   # Dirichlet rows kept
        else:
            return None
        o, dd = float(bl[0]), float(bd[0])
        tol = rtol * max(abs(o), abs(dd))
        if (bool(_ORR(_ABS(bl - o) > tol)) or bool(_ORR(_ABS(bu - o) > tol))
                or bool(_ORR(_ABS(bd - dd) > tol))):
            return None
        s = dd + 2.0 * o
        if abs(s) <= tol:
            return None
        r = -o / s
        if not r > 0:
            return None
        rs.append(r)
    if not rs or max(rs) - min(rs) > rtol * max(rs):
        return None
    return [rs[0] * h2k / kap[0], rs[0] * h2k / kap[1]]


# -- factors by content --------------------------------------------------------------------
# A factorisation's output is fingerprinted (blake2b of its bytes, shape and dtype) when it
# is produced, with the operator it factors and that operator's class; a consumer's factor is
# looked up by the fingerprint of ITS content.  A factor object that was registered but now
# has other content was changed between factorisation and use: a FAIL naming the call.
_FREG = {}                              # fingerprint -> (theta, op)
_FIDS = {}                              # id(factor array handed out) -> (weakref, fingerprint)
_FREG_BYTES = [0]
_FREG_CAP = 1 << 28                     # bytes of operators kept for the consumers' residual checks


def _fp(parts):
    h = _blake()
    for p in parts:
        if _type(p) is _nd:
            h.update(("%s%s" % (p.dtype.str, p.shape)).encode())
            h.update(p.tobytes(order="C"))
        else:
            h.update(repr(p).encode())
    return h.digest()


def _factor_parts(base, a, k, out=None):
    """(fingerprinted parts, the arrays a caller holds) of a factor: from a factorisation's
    output (out given) or from a consumer's arguments."""
    if out is not None:
        if base in ("lu_factor", "getrf"):
            return [out[0], out[1]], [out[0], out[1]]
        if base in ("cho_factor",):
            return [out[0], bool(out[1])], [out[0]]
        if base in ("potrf", "pbtrf"):
            return [out[0], _flag(k.get("lower", 0))], [out[0]]
        if base == "cholesky":
            low = (not _flag(k.get("upper", False))) if k.get("_numpy") else _flag(_arg(a, k, 1, "lower", False))
            return [out, low], [out]
        if base == "cholesky_banded":
            return [out, _flag(_arg(a, k, 2, "lower", False))], [out]
        if base == "gttrf":
            return list(out[:5]), list(out[:5])
        if base == "pttrf":
            return [out[0], out[1]], [out[0], out[1]]
        if base == "gbtrf":
            return [out[0], out[1], int(k.get("kl")), int(k.get("ku"))], [out[0], out[1]]
        return None, None
    if base == "solve_triangular":
        return [_arr(_arg(a, k, 0, "a")), _flag(_arg(a, k, 3, "lower", False))], None
    if base == "trtrs":
        return [_arr(k.get("a")), _flag(k.get("lower", 0))], None
    if base == "lu_solve":
        f = _arg(a, k, 0, "lu_and_piv")
        return [_arr(f[0]), _arr(f[1])], None
    if base == "getrs":
        return [_arr(k.get("lu")), _arr(k.get("piv"))], None
    if base == "cho_solve":
        f = _arg(a, k, 0, "c_and_lower")
        return [_arr(f[0]), _flag(f[1])], None
    if base == "cho_solve_banded":
        f = _arg(a, k, 0, "cb_and_lower")
        return [_arr(f[0]), _flag(f[1])], None
    if base in ("potrs", "pbtrs"):
        return [_arr(k.get("c", k.get("ab"))), _flag(k.get("lower", 0))], None
    if base == "gttrs":
        return [_arr(k.get(nm)) for nm in ("dl", "d", "du", "du2", "ipiv")], None
    if base == "pttrs":
        return [_arr(k.get("d")), _arr(k.get("e"))], None
    if base == "gbtrs":
        return [_arr(k.get("ab")), _arr(k.get("ipiv")), int(k.get("kl")), int(k.get("ku"))], None
    return None, None


def _register(base, a, k, out, theta, op):
    parts, held = _factor_parts(base, a, k, out)
    if parts is None:
        return
    key = _fp(parts)
    size = 0 if op is None else (op[1].nbytes if op[0] == "dense" else 3 * op[2].nbytes if op[0] == "tri" else 0)
    with _LOCK:
        if _FREG_BYTES[0] + size > _FREG_CAP:
            op = None                   # past the cap: the consumer is not evidence (fails closed)
        else:
            _FREG_BYTES[0] += size
        _FREG[key] = (theta, op)
        if base == "cholesky" or base == "cho_factor":    # the transposed factor read from the other triangle
            c = parts[0]
            _FREG[_fp([c.swapaxes(-1, -2).copy(order="C"), not parts[1]])] = (theta, op)
        for h in held:
            if _type(h) is _nd and _len(_FIDS) < 200000:
                try:
                    _FIDS[id(h)] = (_wref(h), key)
                except TypeError:
                    pass


def _reconstruct(base, a, k):
    """The operator a factor of unobserved origin stands for, where that is cheap and exact
    (LU with pivots, Cholesky); None otherwise."""
    if base in ("lu_solve", "getrs"):
        lu, piv = ((_arr(_arg(a, k, 0, "lu_and_piv")[0]), _arr(_arg(a, k, 0, "lu_and_piv")[1]))
                   if base == "lu_solve" else (_arr(k.get("lu")), _arr(k.get("piv"))))
        if lu.ndim != 2 or lu.shape[0] != lu.shape[1] or lu.shape[0] > _BW_CAP or piv.shape != (lu.shape[0],):
            return None
        n = lu.shape[0]
        L = lu * _tri_mask(n, -1, False) + _eye(n)
        M = _MM(L, lu * _tri_mask(n, 0, True))
        pv = piv.tolist()
        for i in range(n - 1, -1, -1):
            p = int(pv[i])
            if not 0 <= p < n:
                return None
            if p != i:
                M[[i, p]] = M[[p, i]]
        return ("dense", M)
    if base in ("cho_solve", "potrs"):
        if base == "cho_solve":
            c, low = _arr(_arg(a, k, 0, "c_and_lower")[0]), _flag(_arg(a, k, 0, "c_and_lower")[1])
        else:
            c, low = _arr(k.get("c")), _flag(k.get("lower", 0))
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] > _BW_CAP:
            return None
        n = c.shape[0]
        T = c * _tri_mask(n, 0, not low)
        return ("dense", _MM(T, T.T) if low else _MM(T.T, T))
    return None


# -- poisoning -------------------------------------------------------------------------
def _spoil(a):
    """mode "nan": every entry NaN; mode "scale": each entry times (1 + eps r), r in [1, 2)
    drawn per run (finite, invisible to an isnan/isfinite test)."""
    if _S["poison"] == "nan":
        out = a.copy()
        out[...] = float("nan")
        return out
    with _LOCK:
        r = _RNG.uniform(1.0, 2.0, size=a.shape)
    return a * (1.0 + float(_REQ["perturb_rel"]) * r)


def _poison(out):
    if _type(out) is _nd and out.dtype.kind in "fc":
        return _spoil(out)
    if _type(out) is _MATRIX and out.dtype.kind in "fc":
        return _spoil(_A(out, subok=False)).view(_MATRIX)
    if _type(out) is tuple:
        return tuple(_poison(o) for o in out)
    if _type(out) is list:
        return [_poison(o) for o in out]
    return out


# -- the solution, the right-hand side and the residual -------------------------------------
_ITERATIVE = ("cg", "bicg", "bicgstab", "cgs", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr")
_RESID_SKIP = ("spilu", "pinv", "pinvh", "lstsq")       # approximate or least-squares by design


def _solution(base, out, outs):
    """The solution array in a solve's output (None: not a solve, or not found)."""
    if _type(out) is _nd:
        return out
    if _type(out) is _MATRIX:
        return _A(out, subok=False)
    if _type(out) is tuple and out:
        if outs is not None:
            for nm in ("x", "b"):
                if nm in outs and outs.index(nm) < _len(out):
                    v = out[outs.index(nm)]
                    return v if _type(v) is _nd else None
            return None
        if base in _ITERATIVE and _type(out[0]) is _nd:
            return out[0]
    return None


def _rhs(base, a, k):
    """The right-hand side a solve was handed (owned), or None."""
    v = k.get("b", k.get("rhs"))
    if v is None and base in ("trsv", "tbsv", "tpsv"):
        v = k.get("x")
    if v is None and a:
        v = a[0] if base in ("solve()", "factorized()", "solve") and _len(a) == 1 else (a[1] if _len(a) > 1 else None)
    return None if v is None else _arr(v)


def _sampled(name, x):
    """Whether this solve's residual is checked: every small one (up to _CHECK_ALL entries in
    its solution), the first _CHECK_FIRST of each routine in each run, and each further one
    with probability _CHECK_P drawn from the grader's per-run seed (the solver cannot tell
    which); a library that lies on every step is caught with certainty in practice."""
    if _type(x) is not _nd or x.size <= _CHECK_ALL:
        return True
    log = _S["log"]
    seen = log["fns"].get(name, 0) if log is not None else 0
    if seen < _CHECK_FIRST:
        return True
    with _LOCK:
        return _SAMPLE() < _CHECK_P


_CHECK_ALL = 4096
_CHECK_FIRST = 8
_CHECK_P = 0.25


def _check_solve(name, base, op, x, b, k):
    """|A x - b| against round-off: (ratio, limit) or None when the call cannot be checked."""
    if op is None or x is None or _type(x) is not _nd:
        return None
    if base == "inv":
        n = _op_n(op)
        b = _eye(n) if op[0] != "dense" or op[1].ndim == 2 else (_Z(op[1].shape) + _eye(n))
    if b is None or x.dtype.kind not in "fc" or not bool(_ANDR(_ISF(x), axis=None)):
        return None
    try:
        Ax = _op_apply(op, x)
        if Ax is None:
            return None
        r = Ax - b
    except Exception:
        return None
    nA = _op_norm(op)
    if nA is None:
        return None
    scale = nA * float(_MAXR(_ABS(x), axis=None) if x.size else 0.0) + float(
        _MAXR(_ABS(b), axis=None) if b.size else 0.0)
    res = float(_MAXR(_ABS(r), axis=None)) if r.size else 0.0
    if base in _ITERATIVE:
        tol = k.get("rtol", k.get("tol", 1e-5))
        tol = float(tol) if _type(tol) in _SCALARS and _type(tol) not in (str, bytes) else 1e-5
        lim = max(100.0 * tol, float(_REQ["resid_rtol"]))
    else:
        lim = float(_REQ["resid_rtol"])
    ratio = res / scale if scale > 0 else (0.0 if res == 0 else float("inf"))
    return ratio, lim


class _SolverProxy:
    """SuperLU objects (and factorized() callables): their solves are counted, classified
    by the factorised matrix (the recorder's own copy), checked against it, and poisoned
    when it is an ADI operator."""

    def __init__(self, obj, name, n, theta, op):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_n", n)
        object.__setattr__(self, "_theta", theta)
        object.__setattr__(self, "_op", op)

    def __getattr__(self, attr):
        val = getattr(self._obj, attr)
        if attr == "solve" and callable(val):
            return self._wrap(val, self._name + ".solve")
        return val

    def _wrap(self, fn, name):
        def solve(*args, **kwargs):
            tr = _arg(args, kwargs, 1, "trans", "N")
            op = _op_T(self._op) if tr in ("T", "H") else self._op
            return _call(fn, name, args, kwargs, lambda a, k: (self._n, None, True), theta=self._theta, op=op)
        return solve

    def __call__(self, *args, **kwargs):
        return _call(self._obj, self._name + "()", args, kwargs, lambda a, k: (self._n, None, True),
                     theta=self._theta, op=self._op)


def _depth():
    return getattr(_TL, "depth", 0)


def _nested():
    """Inside another wrapped call of this thread AND reached from it through NumPy/SciPy code
    only (a library's own sub-call).  A call with submitted code anywhere between it and the
    enclosing wrapped call (a callback, a matvec, a library trampoline such as
    numpy.apply_along_axis inside a callback) is a solve of its own at any depth."""
    if not _depth():
        return False
    try:
        f = _getframe(3)
        while f is not None:
            code = f.f_code
            if code is _RUN_CODE:
                return True
            if not code.co_filename.startswith(_LIBDIRS):
                return False
            f = f.f_back
    except Exception:
        pass
    return False


def _run(fn, args, kwargs):
    _TL.depth = _depth() + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _TL.depth -= 1


_RUN_CODE = _run.__code__


_NOTHETA = object()
_SHM = _np.shares_memory


def _event(kind, **fields):
    """A FAIL-grade observation (a residual, a changed factor, an unreadable operand), once per
    job, function and kind."""
    with _LOCK:
        key = (_S["job"], kind, fields.get("fn"))
        if key in _S["seen"] or _len(_S["seen"]) >= 200:
            return
        _S["seen"].add(key)
    send(dict(fields, kind=kind, job=_S["job"], m=_S["m"]))


def _consume(base, name, a, k, args, kwargs, params):
    """(theta, operator, status) of a factor-consuming call: the registered factorisation whose
    fingerprint matches the factor's content; "changed" when the factor object handed in was
    registered with other content; "foreign" when no observed factorisation made it."""
    parts, _ = _factor_parts(base, a, k)
    if parts is None:
        return None, None, "none"
    entry = _FREG.get(_fp(parts))
    if entry is not None:
        return entry[0], entry[1], "ok"
    ob = _bind(params, args, kwargs) if params is not None else None
    cand = []
    if base == "lu_solve" or base == "cho_solve" or base == "cho_solve_banded":
        f = _arg(args, kwargs, 0, {"lu_solve": "lu_and_piv", "cho_solve": "c_and_lower",
                                   "cho_solve_banded": "cb_and_lower"}[base])
        if _type(f) is tuple or _type(f) is list:
            cand = list(f)
    elif ob is not None:
        cand = [ob.get(nm) for nm in ("lu", "piv", "c", "ab", "dl", "d", "du", "du2", "ipiv", "e")]
    for c in cand:
        if _type(c) is _nd:
            e = _FIDS.get(id(c))
            if e is not None and e[0]() is c:
                return None, None, "changed"
    return None, _reconstruct(base, a, k), "foreign"


def _write_back(ob, bound, x_raw, x_final):
    """In-place results audited in place: every buffer the routine may overwrite
    (overwrite_X true) receives what the routine wrote into the recorder's copy of it, and
    the right-hand side's buffer the (spoiled) solution when the solution lives there."""
    if ob is None or bound is None:
        return
    for key, flag in bound.items():
        if _type(key) is not str or not key.startswith("overwrite_") or _flag(flag) is not True:
            continue
        nm = key[10:]
        dst, src = ob.get(nm), bound.get(nm)
        if _type(dst) is not _nd or _type(src) is not _nd or not dst.flags.writeable:
            continue
        if x_final is not x_raw and _type(x_raw) is _nd and _SHM(x_raw, src) and x_final.shape == src.shape:
            src = x_final
        if src.shape == dst.shape:
            try:
                _CPT(dst, src, casting="unsafe")
            except Exception:
                pass


def _call(fn, name, args, kwargs, extract, proxy=False, theta=_NOTHETA, op=_NOTHETA, params=None):
    nested = _nested()
    base = _base(name)
    if nested:      # a library's own sub-call: read (never replaced), dimension recorded
        try:
            n, hb, factor = extract(tuple([_own_soft(v, True) for v in args]),
                                    {kk: _own_soft(v, True) for kk, v in kwargs.items()})
        except Exception:
            n, hb, factor = None, None, False
        _record(name, n, hb, factor, True, None)
        return _run(fn, args, kwargs)
    try:
        oargs = tuple([_own(v) for v in args])
        okw = {kk: _own(v) for kk, v in kwargs.items()}
    except Exception as exc:        # _Unreadable, or a LinearOperator that raised while materialised
        why = str(exc)[:200] if isinstance(exc, _Unreadable) else f"{_type(exc).__name__} while reading it"
        _event("unreadable", fn=name, why=why)
        raise TypeError(f"{name}: the grader's solve recorder cannot own this operand ({why}); pass "
                        "numpy arrays, scipy sparse csr/csc/coo/dia matrices or LinearOperators") from None
    bound = _bind(params, oargs, okw) if params is not None else None
    a, k = ((), bound) if bound is not None else (oargs, okw)
    if name == "numpy.linalg.cholesky":
        k = dict(k, _numpy=True)
    try:
        n, hb, factor = extract(a, k)
    except Exception:
        n, hb, factor = None, None, False
    if op is _NOTHETA:
        try:
            op = _op_of(base, name, a, k)
        except Exception:
            op = None
    if op is not None and op[0] != "band" and not factor:
        try:
            n, hb = _op_n(op), _op_hb(op)
        except Exception:
            pass
    status = None
    if theta is _NOTHETA:
        if base in _CONSUME:
            try:
                theta, fop, status = _consume(base, name, a, k, args, kwargs, params)
            except Exception:
                theta, fop, status = None, None, "foreign"
            if status == "changed":
                _event("factor", fn=name)
            if base in _TRIANGULAR:
                status = None if status == "foreign" else status   # a triangular solve of its own
            else:
                tr = k.get("trans", 0)
                op = _op_T(fop) if tr in (1, 2, "T", "C") else fop
                if status == "foreign" and fop is not None:
                    theta = _theta(_op_tri(fop))
                    n, hb = _op_n(fop), _op_hb(fop)
        else:
            try:
                theta = _theta(_op_tri(op)) if op is not None else None
            except Exception:
                theta = None
    _precheck(name, n, hb)
    checkable = not proxy and base not in _FACTORISE and base not in _RESID_SKIP
    rhs = None
    if checkable and base != "inv":
        try:
            rhs = _rhs(base, a, k)
            if rhs is not None and any(_type(kk) is str and kk.startswith("overwrite_") and _flag(v) is True
                                       for kk, v in k.items()):
                rhs = rhs.copy()        # the routine may write its result into it
        except Exception:
            rhs = None
    out = _run(fn, oargs, okw)
    x = None
    if checkable:
        x = _solution(base, out, _OUTS.get(name))
        if base in _ITERATIVE and not (_type(out) is tuple and _len(out) > 1 and out[1] == 0):
            x = None                    # not converged: not a solve to check, not evidence
        try:
            sampled = _sampled(name, x)
            chk = _check_solve(name, base, op, x, rhs, k) if sampled else None
        except Exception:
            sampled, chk = True, None
        if chk is None:
            if theta is not None and sampled:
                theta = None            # a solve that cannot be checked is not evidence
        elif not chk[0] <= chk[1]:
            _event("residual", fn=name, ratio=chk[0], limit=chk[1], dim=n)
            theta = None
        _record(name, n, hb, factor, False, theta, chk, status)
    else:
        _record(name, n, hb, factor, False, theta, None, status)
    if proxy:       # spilu is incomplete by design: its solves are neither checked nor evidence
        spilu = base == "spilu"
        return _SolverProxy(out, name, n, None if spilu else theta, None if spilu else op)
    if base in _FACTORISE:
        try:
            _register(base, a, k, out, theta, op)
        except Exception:
            pass
        _write_back(_bind(params, args, kwargs) if params is not None else None, bound, None, None)
        return out
    final = out
    if _S["poison"] and theta is not None:
        with _LOCK:
            _S["log"]["poisoned"] += 1
        final = _poison(out)
    xf = _solution(base, final, _OUTS.get(name)) if final is not out else x
    _write_back(_bind(params, args, kwargs) if params is not None else None, bound, x, xf)
    return final


class _Opaque:
    """Stands, for the recorder's reading only, for an operand it could not own (reading it
    raises: the size is then unknown, which is flagged, never guessed by asking the object)."""


_OPAQUE = _Opaque()


def _own_soft(x, read=False):
    """A route's or a nested call's operand: owned when the recorder can own it; otherwise the
    object itself is handed on (a route records only a size) and, for reading, _OPAQUE."""
    t = _type(x)
    if t is _nd or t in _SCALARS or t in _CALLBACKS:
        return x
    try:
        return _own(x)
    except Exception:
        return _OPAQUE if read else x


def _call_route(fn, name, args, kwargs, extract):
    nested = _nested()
    if not nested:
        args = tuple([_own_soft(v) for v in args])
        kwargs = {kk: _own_soft(v) for kk, v in kwargs.items()}
    try:
        n, vectors = extract(tuple([_own_soft(v, True) for v in args]),
                             {kk: _own_soft(v, True) for kk, v in kwargs.items()})
    except Exception:
        n, vectors = None, True
    _record_route(name, n, vectors, nested)
    return _run(fn, args, kwargs)


_WRAPPED = {}
_PATCHED = []                           # (module, name, wrapper): checked after every job


def _integrity():
    """Names of entry points the submission un-wrapped, numpy/scipy module functions and
    library classes it reassigned or extended since driver start, and a depth left non-zero.
    (Compared by identity at C level: map(dict.get, keys) against the values kept.)
    Only the dicts whose version tag moved since driver start are compared (the same comparison,
    the same verdict: an unchanged tag is an unchanged dict, _tag_reader); every one where the
    tags are not available.  Reading a tag touches no object, while the comparison's reference
    counts write to every page holding a compared value: copy-on-write faults after the fork,
    ~10 ms a job on a quiet machine, ~50 ms under load."""
    bad = []
    for i in _moved_items():
        kind, owner, keys, vals, label = _ITEMS[i]
        if kind == "patched":
            d = owner.__dict__
            bad += [f"{getattr(owner, '__name__', '?')}.{k}" for k, w in zip(keys, vals)
                    if d.get(k, _MISSING) is not w]
        elif kind == "module":
            d = owner.__dict__
            if not all(map(_IS, map(d.get, keys), vals)):
                bad += [f"{label}.{k}" for k, v in zip(keys, vals) if d.get(k, _MISSING) is not v]
        else:
            cur = _TYPE_DICT_GET(_TYPE_DICT, owner)
            if _len(cur) != _len(keys) or not all(map(_IS, map(cur.get, keys), vals)):
                items = dict(zip(keys, vals))
                changed = sorted(k for k in set(cur) ^ set(items)) + sorted(
                    k for k, v in items.items() if cur.get(k, _MISSING) is not v)
                bad.append(f"{owner.__module__}.{owner.__qualname__}.{(changed or ['?'])[0]}")
    if _depth() != 0:
        bad.append("instrumentation depth counter")
    return bad


import operator as _operator
_IS = _operator.is_
_MISSING = object()
_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_DICT_GET = type(_TYPE_DICT).__get__


def _snapshot():
    """The callables and submodules of every loaded numpy/scipy module, and the full
    attribute table of every (mutable) numpy/scipy class they hold, as loaded now."""
    mods, classes, seen = {}, [], set()
    for nm, mod in list(_sys.modules.items()):
        if type(mod) is not type(_sys) or not (nm in ("numpy", "scipy") or nm.startswith(("numpy.", "scipy."))):
            continue
        items = {}
        for k, v in list(mod.__dict__.items()):
            if callable(v) or type(v) is type(_sys):
                items[k] = v
            if isinstance(v, type) and id(v) not in seen and not (v.__flags__ & 256) and \
                    str(getattr(v, "__module__", "")).startswith(("numpy", "scipy")):
                seen.add(id(v))
                table = dict(_TYPE_DICT_GET(_TYPE_DICT, v))
                classes.append((v, tuple(table), tuple(table.values())))
        mods[nm] = (mod, tuple(items), tuple(items.values()))
    return mods, classes


def _make(fn, name, extract, route=False):
    proxy = name.rsplit(".", 1)[-1] in ("splu", "spilu", "factorized")
    if route:
        def wrapper(*args, **kwargs):
            return _call_route(fn, name, args, kwargs, extract)
    else:
        params = _params_of(fn)
        if params is not None and params[1] is not None:
            _OUTS[name] = params[1]

        def wrapper(*args, **kwargs):
            return _call(fn, name, args, kwargs, extract, proxy, params=params)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except Exception:
            pass
    try:    # function attributes callers rely on (lstsq.default_lapack_driver), never the
        wrapper.__dict__.update({k: v for k, v in vars(fn).items() if k != "__wrapped__"})  # original
    except TypeError:
        pass
    return wrapper


for _tables, _route in ((_ENTRY, False), (_ROUTES, True)):
    for _mod, _mname, _table in _tables:
        if _mod is None:
            continue
        for _name, _x in _table.items():
            _fn = getattr(_mod, _name, None)
            if _fn is None or id(_fn) in _WRAPPED:
                continue
            _WRAPPED[id(_fn)] = (_fn, _make(_fn, f"{_mname}.{_name}", _x, _route))

for _modobj in list(_sys.modules.values()):
    _d = getattr(_modobj, "__dict__", None)
    if not isinstance(_d, dict) or _modobj is _sys.modules.get("builtins"):
        continue
    for _k, _v in list(_d.items()):
        _w = _WRAPPED.get(id(_v))
        if _w is not None and _w[0] is _v:
            try:
                setattr(_modobj, _k, _w[1])
                _PATCHED.append((_modobj, _k, _w[1]))
            except Exception:
                pass


def _map_funcs(getter):
    def get_funcs(*args, **kwargs):
        out = getter(*args, **kwargs)
        if isinstance(out, (list, tuple)):
            return type(out)(_WRAPPED.get(id(f), (f, f))[1] if _WRAPPED.get(id(f), (None,))[0] is f
                             else f for f in out)
        w = _WRAPPED.get(id(out))
        return w[1] if w is not None and w[0] is out else out
    return get_funcs


for _modobj, _gname in ((_lapack, "get_lapack_funcs"), (_blas, "get_blas_funcs"), (_sla, "get_lapack_funcs"),
                        (_sla, "get_blas_funcs")):
    _g = getattr(_modobj, _gname, None)
    if _g is not None and not getattr(_g, "_grader_mapped", False):
        _mg = _map_funcs(_g)
        _mg._grader_mapped = True
        setattr(_modobj, _gname, _mg)

_PNS = {}
exec(compile(_REQ["problem_source"], "<problems>", "exec"), _PNS)
_SNAP = _snapshot()                    # after the wrappers went in, before any submitted code


def _tag_reader():
    """A reader of a dict's PEP 509 version tag (ma_version_tag, the 8 bytes after ma_used in a
    64-bit CPython 3.8-3.13 dict), or None where that is not shown to hold here.  CPython gives a
    dict a new tag, from one global counter that only grows, on every change (set, delete, clear,
    pop, update, a module's or class's attribute assignment): a dict whose tag equals the one read
    at the snapshot has not changed since.  Checked on probes: ma_used read back as len(), and a
    new tag after each kind of change a submission could make."""
    import gc
    if (_sys.implementation.name != "cpython" or not (3, 8) <= _sys.version_info[:2] <= (3, 13)
            or hasattr(_sys, "gettotalrefcount") or _sys.maxsize != 2 ** 63 - 1):
        return None
    try:
        import ctypes
        u64, ssz = ctypes.c_uint64.from_address, ctypes.c_ssize_t.from_address

        def tag(addr):
            return u64(addr + 24).value
        probe = {"a": 1, "b": 2}
        mod = type(_sys)("_tag_probe")
        mod.f = len

        class Probe:
            f = len
        cdict = gc.get_referents(_TYPE_DICT_GET(_TYPE_DICT, Probe))
        if len(cdict) != 1 or type(cdict[0]) is not dict or ssz(id(probe) + 16).value != 2:
            return None
        changes = [(probe, lambda: probe.__setitem__("c", 3)), (probe, lambda: probe.__setitem__("a", 4)),
                   (probe, lambda: probe.pop("c")), (probe, lambda: probe.update(a=5)),
                   (probe, lambda: probe.setdefault("d", 6)), (probe, probe.popitem), (probe, probe.clear),
                   (mod.__dict__, lambda: setattr(mod, "f", abs)), (mod.__dict__, lambda: delattr(mod, "f")),
                   (cdict[0], lambda: setattr(Probe, "f", abs)), (cdict[0], lambda: delattr(Probe, "f"))]
        for d, change in changes:
            if ssz(id(d) + 16).value != len(d):
                return None
            before = tag(id(d))
            change()
            if not tag(id(d)) > before:
                return None
        return tag
    except Exception:
        return None


def _checked_items():
    """What _integrity compares, one entry per dict: ("patched", module, names, wrappers, "") for
    the entry points the driver wrapped (grouped by module), ("module", module, names, values,
    its sys.modules name) and ("class", class, names, values, "") for _SNAP; and the address of each entry's dict (None: no tag
    for it, always compared).  The dicts stay alive (these entries hold their modules and classes)
    and never move."""
    import gc
    items, groups = [], {}
    for m, k, w in _PATCHED:
        if id(m) not in groups:
            groups[id(m)] = (m, [], [])
            items.append(groups[id(m)])
        groups[id(m)][1].append(k)
        groups[id(m)][2].append(w)
    items = [("patched", m, tuple(ks), tuple(ws), "") for m, ks, ws in items]
    mods, classes = _SNAP
    items += [("module", mod, keys, vals, nm) for nm, (mod, keys, vals) in mods.items()]
    items += [("class", cls, keys, vals, "") for cls, keys, vals in classes]
    addrs = []
    for kind, owner, _, _, _ in items:
        d = getattr(owner, "__dict__", None) if kind != "class" else None
        if kind == "class":
            inner = gc.get_referents(_TYPE_DICT_GET(_TYPE_DICT, owner))
            d = inner[0] if len(inner) == 1 else None
        addrs.append(id(d) if type(d) is dict else None)
    return items, addrs


_ITEMS, _ADDRS = _checked_items()
_TAG = _tag_reader()
_TAGS0 = [None if a is None else _TAG(a) for a in _ADDRS] if _TAG is not None else None


def _moved_items():
    """Indices (into _ITEMS) of the entries whose dict's tag moved since driver start (all of them
    without tags)."""
    if _TAGS0 is None:
        return range(len(_ITEMS))
    tag = _TAG
    return [i for i, (a, t) in enumerate(zip(_ADDRS, _TAGS0)) if a is None or tag(a) != t]


# the driver's state is not offered to the submission as sys.modules["__main__"]
_sys.modules["__main__"] = type(_sys)("__main__")


def _b64f(a):
    return _b64encode(_A(a, dtype="<f8", order="C").tobytes()).decode("ascii")


def _new_log():
    return {"count": 0, "fns": {}, "max_dim": 0, "max_hb": 0, "unknown_hb": 0, "adi": 0, "thetas": {},
            "poisoned": 0, "nested": 0, "nested_fns": {}, "routes": {}, "checked": 0, "max_resid": 0.0,
            "foreign": 0}


import importlib.util as _importlib_util


def _compiled():
    """adi_solver.py compiled once here in the warm parent (compiling runs none of it; ~5 ms a
    job saved), so that each job only executes it into a fresh module; None when it does not
    compile (the job's own import then reports the error)."""
    try:
        with open(_os.path.join(_SUBDIR, "adi_solver.py"), "rb") as fh:
            return compile(fh.read(), _os.path.join(_SUBDIR, "adi_solver.py"), "exec", dont_inherit=True)
    except BaseException:
        return None


def _import_solver():
    """A fresh adi_solver module, as `import adi_solver` makes it (from the source: the audited
    text, never a bytecode file beside it)."""
    if _CODE is None:
        import adi_solver
        return adi_solver
    spec = _importlib_util.spec_from_file_location("adi_solver", _os.path.join(_SUBDIR, "adi_solver.py"))
    mod = _importlib_util.module_from_spec(spec)
    _sys.modules["adi_solver"] = mod
    try:
        exec(_CODE, mod.__dict__)
    except BaseException:
        _sys.modules.pop("adi_solver", None)
        raise
    return _sys.modules.get("adi_solver", mod)


def _import_job():
    """The import check, in a forked child of its own: signature, import-time solves."""
    _S["log"] = _new_log()
    try:
        _sub = _import_solver()
        _solve = getattr(_sub, "solve", None)
        if not callable(_solve):
            raise AttributeError("adi_solver has no callable solve")
        try:
            _sig = _inspect.signature(_solve)
            _sig.bind(0.1, T=1.0, problem=None)
            _ps = _sig.parameters
            _ok = ("T" in _ps and _ps["T"].default == 1.0 and "problem" in _ps
                   and _ps["problem"].default is None)
        except (TypeError, ValueError):
            _sig, _ok = "(unreadable)", False
        send({"kind": "ready", "signature": str(_sig), "signature_ok": bool(_ok),
              "import_solves": _S["log"]["count"]})
        if _integrity():
            send({"kind": "tamper", "job": "import", "what": _integrity()[:10]})
            _TL.depth = 0
    except BaseException as _exc:
        send({"kind": "import_error", "error": f"{type(_exc).__name__}: {_exc}"[:400]})
        raise SystemExit(3)


def _fresh_solve():
    """adi_solver imported in this forked job child (the warm parent never imports it): no
    cache or counter of one run (a poisoned one included) survives into the next."""
    return _import_solver().solve


def _run_job(job):
    """One job: its run, then those of job["then"] (the step witness's short runs of one mesh, one
    child for all: each a fresh import of adi_solver with its own log, message and integrity check;
    a run that raises does not stop the next)."""
    _run_one(job)
    for _more in job.get("then") or ():
        _run_one(dict(job, then=None, **_more))


def _run_one(job):
    """One run: the solve on its problem, with the instrumentation set for its mesh."""
    _np.random.seed()               # numpy's global generator: fresh entropy, as in a fresh process
    # (forked, every job would inherit the warm parent's state: unseeded np.random draws would
    # repeat in every call and read as deterministic; Python's random reseeds itself at fork)
    h = float(job["h"])
    m = int(round(1.0 / h))
    if job["problem"] == "hidden":
        prob = _PNS["hidden_problem"](_REQ["hidden_draw"])
        call_args = (h, float(_PNS["HIDDEN_T"]), prob)
    elif job["problem"] == "witness":
        prob = _PNS["hidden_problem"](_REQ["witness_draw"])     # a hidden-family draw, as hidden
        call_args = (h, float(_PNS["HIDDEN_T"]), prob)
    elif job["problem"] == "benchmark_object":
        prob = _PNS["benchmark_problem"]()
        call_args = (h, 1.0, prob)
    else:               # the benchmark (problem None), to T = 1 or to a step before it (the step witness)
        prob = _PNS["benchmark_problem"]()
        call_args = (h, float(job.get("T", 1.0)), None)
    steps = max(1, int(round(call_args[1] / h)))
    with _LOCK:
        _S["job"], _S["m"], _S["log"] = job["tag"], m, _new_log()
        _S["kappa"], _S["h2k"] = (float(prob.a), float(prob.c)), h * h / (call_args[1] / steps)
        _S["poison"] = job.get("poison") or False
    t0 = _time.monotonic()
    msg = {"kind": "job", "tag": job["tag"]}
    try:
        res = _fresh_solve()(*call_args)
        _S["poison"] = False
        if not isinstance(res, (tuple, list)) or len(res) != 3:
            raise TypeError(f"solve returned {type(res).__name__}, expected (X, Y, U)")
        arrs = [_A(v, dtype=_F8) for v in res]
        for nm, a in zip("XYU", arrs):
            if a.shape != (m + 1, m + 1):
                raise ValueError(f"{nm} has shape {a.shape}, expected {(m + 1, m + 1)}")
        msg.update(status="ok", X=_b64f(arrs[0]), Y=_b64f(arrs[1]), U=_b64f(arrs[2]))
    except BaseException as exc:
        _S["poison"] = False
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            msg.update(status="error", error=f"{type(exc).__name__}")
        else:
            msg.update(status="error", error=f"{type(exc).__name__}: {exc}"[:400])
    with _LOCK:
        log = _loads(_dumps(_S["log"]))
    msg.update(wall=_time.monotonic() - t0, log=log, m=m)
    bad = _integrity()
    if bad:
        send({"kind": "tamper", "job": job["tag"], "what": bad[:10]})
        _TL.depth = 0
    send(msg)


_CODE = _compiled()
# The import check runs as the first job, beside the first solve (not alone before every job: ~0.03 s
# of the wall time on the critical path).  A solver whose import fails fails every job at its own
# import as well; the grader reads no job without the import check's "ready" (grading.py).


def _job(job):
    """A job child: the submission's folder on its path (its sibling modules import; never in the
    warm parent, whose own lazy imports, e.g. fork_jobs's, must be the standard library's), then
    its runs."""
    _sys.path.insert(0, _SUBDIR)
    return _import_job() if job["id"] == "import" else _run_job(job)


fork_jobs([{"id": "import"}] + [dict(_j, id=_j["tag"]) for _j in _REQ["jobs"]], _job, _REQ.get("concurrency", 1))
send({"kind": "done"})
for _stream in (_sys.stdout, _sys.stderr):
    _stream.flush()
_os._exit(0)                        # nothing left to finalise: skip the interpreter's teardown
#                                     (numpy/scipy freed object by object: ~0.1 s of CPU)
