"""Child program (embedded as text by the build; runs after common/child_driver_prologue.py)."""
from graders.common.child_driver_prologue import _REQ, _json, _os, _sys, fork_jobs, send
# -- end of source-tree preamble: the build keeps only what follows --
import base64 as _b64, inspect as _inspect, threading as _threading, time as _time
_SUBDIR = _sys.path.pop(0)             # numpy/scipy must not be shadowed by submission files
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
_FACTORS = {}                           # id(factor) -> (factor, theta pair or None)
_BW_CAP = 4096                          # materialise at most this dimension to measure a bandwidth


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _hb_dense(a):
    a = _np.asarray(a)
    if a.ndim < 2 or a.size == 0:
        return 0
    n = a.shape[-1]
    if n > _BW_CAP or a.shape[-2] > _BW_CAP:
        return None
    nz = _np.nonzero(a.reshape((-1,) + a.shape[-2:]))
    return int(_np.max(_np.abs(nz[1] - nz[2]))) if len(nz[1]) else 0


def _hb_any(A):
    if _sp.issparse(A):
        coo = A.tocoo()
        keep = coo.data != 0
        return int(_np.max(_np.abs(coo.row[keep] - coo.col[keep]))) if keep.any() else 0
    if isinstance(A, _spl.LinearOperator):
        n = A.shape[1]
        if n > _BW_CAP:
            return None
        return _hb_dense(A.matmat(_np.eye(n)))
    return _hb_dense(A)


def _x_dense(args, kwargs):                 # f(a, ...): a dense (..., n, n) matrix
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(a.shape[-1]) if a.ndim else 1, _hb_dense(a), False


def _x_trsm(args, kwargs):                  # blas trsm(alpha, a, b)
    a = _np.asarray(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), _hb_dense(a), False


def _x_factor(args, kwargs):                # lu_solve((lu, piv), b), getrs(lu, piv, b), potrs(c, b)
    f = _arg(args, kwargs, 0, "lu_and_piv")
    if isinstance(f, tuple):
        f = f[0]
    f = _np.asarray(f)
    return int(f.shape[-1]), None, True    # bandwidth was checked at the factorisation


def _x_banded(args, kwargs):                # solve_banded((l, u), ab, b)
    lu = _arg(args, kwargs, 0, "l_and_u")
    ab = _np.asarray(_arg(args, kwargs, 1, "ab"))
    u = int(lu[1])
    rows = [r for r in range(ab.shape[0]) if _np.any(ab[r] != 0)]
    return int(ab.shape[-1]), max([abs(r - u) for r in rows] or [0]), False


def _x_hbanded(args, kwargs, lower_pos=4):  # solveh_banded(ab, b, ow_ab, ow_b, lower)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    lower = bool(_arg(args, kwargs, lower_pos, "lower", False))
    u = ab.shape[0] - 1
    rows = [r for r in range(ab.shape[0]) if _np.any(ab[r] != 0)]
    return int(ab.shape[-1]), max([(r if lower else u - r) for r in rows] or [0]), False


def _x_cholbanded(args, kwargs):            # cholesky_banded(ab, overwrite_ab, lower)
    return _x_hbanded(args, kwargs, lower_pos=2)


def _x_chobanded(args, kwargs):             # cho_solve_banded((cb, lower), b)
    cb = _np.asarray(_arg(args, kwargs, 0, "cb_and_lower")[0])
    return int(cb.shape[-1]), int(cb.shape[0] - 1), False


def _x_tri(args, kwargs):                   # gtsv(dl, d, du, b), gttrf(dl, d, du)
    d = _np.asarray(_arg(args, kwargs, 1, "d"))
    return int(d.shape[0]), 1, False


def _x_tri0(args, kwargs):                  # ptsv(d, e, b), pttrf(d, e), pttrs(d, e, b)
    d = _np.asarray(_arg(args, kwargs, 0, "d"))
    return int(d.shape[0]), 1, False


def _x_gbsv(args, kwargs):                  # gbsv(kl, ku, ab, b)
    ab = _np.asarray(_arg(args, kwargs, 2, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 0, "kl")), int(_arg(args, kwargs, 1, "ku"))), False


def _x_gbtrf(args, kwargs):                 # gbtrf(ab, kl, ku), gbtrs(ab, kl, ku, b, ipiv)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 1, "kl")), int(_arg(args, kwargs, 2, "ku"))), False


def _x_pb(args, kwargs):                    # pbsv(ab, b), pbtrf(ab), pbtrs(ab, b)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), int(ab.shape[0] - 1), False


def _x_tbsv(args, kwargs):                  # blas tbsv(k, a, x)
    a = _np.asarray(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), int(_arg(args, kwargs, 0, "k")), False


def _x_n0(args, kwargs):                    # ppsv(n, ap, b), pftrs(n, a, b), blas tpsv(n, ap, x): packed
    return int(_arg(args, kwargs, 0, "n")), None, False     # storage (bandwidth not measured)


def _x_tbtrs(args, kwargs):                 # tbtrs(ab, b): a banded triangular solve
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    rows = [r for r in range(ab.shape[0]) if _np.any(ab[r] != 0)]
    return int(ab.shape[-1]), (max(rows) - min(rows) if rows else 0), False


def _x_trsyl(args, kwargs):                 # trsyl(a, b, c), tgsyl(a, b, c, ...): a 2-D solve of size c.size
    return int(_np.asarray(_arg(args, kwargs, 2, "c")).size), int(_np.asarray(_arg(args, kwargs, 0, "a")).shape[0]), False


def _x_sparse(args, kwargs):                # spsolve(A, b), splu(A), cg(A, b), ...
    A = _arg(args, kwargs, 0, "A")
    if not (_sp.issparse(A) or isinstance(A, _spl.LinearOperator)):
        A = _np.asarray(A)
    return int(A.shape[0]), _hb_any(A), False


def _x_sylvester(args, kwargs):             # solve_sylvester(a, b, q): a 2-D solve of size q.size
    q = _np.asarray(_arg(args, kwargs, 2, "q"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_lyap(args, kwargs):                  # solve_{continuous,discrete}_lyapunov(a, q)
    q = _np.asarray(_arg(args, kwargs, 1, "q"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_tensor(args, kwargs):                # numpy tensorsolve(a, b)
    b = _np.asarray(_arg(args, kwargs, 1, "b"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    n = int(b.size)
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_tensorinv(args, kwargs):
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    ind = int(_arg(args, kwargs, 1, "ind", 2))
    n = int(_np.prod(a.shape[:ind]))
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_toeplitz(args, kwargs):              # solve_toeplitz(c_or_cr, b)
    c = _arg(args, kwargs, 0, "c_or_cr")
    parts = [_np.asarray(p).ravel() for p in (c if isinstance(c, tuple) else (c,))]
    hb = max([int(_np.flatnonzero(p[1:] != 0).max()) + 1 if _np.any(p[1:] != 0) else 0 for p in parts])
    return int(parts[0].size), hb, False


def _x_circulant(args, kwargs):             # solve_circulant(c, b)
    c = _np.asarray(_arg(args, kwargs, 0, "c")).ravel()
    return int(c.size), (int(c.size - 1) if _np.any(c[1:] != 0) else 0), False


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
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(a.shape[0]) ** 2, int(a.shape[0]), False


for _m, _mn, _t in _ENTRY:
    if _m is _sla:
        _t.update({"solve_continuous_are": _x_are, "solve_discrete_are": _x_are})

# Routes that can do a 2-D implicit solve without a banded system: extractors
# return (dimension, whether the result can reconstruct an operator).  The
# dimension of a transform is the product of its lengths along the transformed
# axes (a batch of 1-D transforms along lines has dimension m - 1).


def _ax_dim(a, s, axes, nd):
    a = _np.asarray(a)
    if s is not None:
        return int(_np.prod([int(v) for v in _np.atleast_1d(s)]))
    if axes is None:
        axes = range(a.ndim) if nd is None else range(-nd, 0)
    return int(_np.prod([a.shape[int(v)] for v in _np.atleast_1d(list(axes))])) if a.ndim else 1


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
        a = _np.asarray(_arg(args, kwargs, 0, "a"))
        v = vectors
        if flag is not None and flag in kwargs:
            v = bool(kwargs[flag]) != invert
        return (int(a.shape[-1]) if a.ndim else 1), v
    return x


def _m_len(args, kwargs):                   # eigh_tridiagonal(d, e)
    return int(_np.asarray(_arg(args, kwargs, 0, "d")).shape[-1]), not kwargs.get("eigvals_only", False)


def _m_op(args, kwargs):                    # sparse eigs(A), expm(A), expm_multiply(A, B)
    A = _arg(args, kwargs, 0, "A")
    return int(A.shape[0]), True


def _o_x0(args, kwargs):                    # fsolve(func, x0), root(fun, x0), newton_krylov(F, xin)
    x0 = _arg(args, kwargs, 1, "x0", kwargs.get("xin"))
    return int(_np.size(x0)), True


def _o_lin(args, kwargs):                   # lsq_linear(A, b), nnls(A, b)
    return int(_arg(args, kwargs, 0, "A").shape[1]), True


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
_CONSUME = {"lu_solve": lambda a, k: _arg(a, k, 0, "lu_and_piv")[0],
            "cho_solve": lambda a, k: _arg(a, k, 0, "c_and_lower")[0],
            "cho_solve_banded": lambda a, k: _arg(a, k, 0, "cb_and_lower")[0],
            "getrs": lambda a, k: _arg(a, k, 0, "lu"), "getri": lambda a, k: _arg(a, k, 0, "lu"),
            "potrs": lambda a, k: _arg(a, k, 0, "c"), "potri": lambda a, k: _arg(a, k, 0, "c"),
            "gttrs": lambda a, k: _arg(a, k, 1, "d"), "pttrs": lambda a, k: _arg(a, k, 0, "d"),
            "gbtrs": lambda a, k: _arg(a, k, 0, "ab"), "pbtrs": lambda a, k: _arg(a, k, 0, "c"),
            "solve_triangular": lambda a, k: _arg(a, k, 0, "a"), "trtrs": lambda a, k: _arg(a, k, 0, "a"),
            "trsv": lambda a, k: _arg(a, k, 0, "a"), "trsm": lambda a, k: _arg(a, k, 1, "a"),
            "sytrs": lambda a, k: _arg(a, k, 0, "a"), "sytri": lambda a, k: _arg(a, k, 0, "a")}


def _base(name):
    short = name.rsplit(".", 1)[-1]
    if name.startswith(("scipy.linalg.lapack.", "scipy.linalg.blas.")) and short[:1] in "sdcz":
        return short[1:]
    return short


def _band_rows(ab, diag, zero_rows):
    """(sub, diag, super) of a LAPACK band layout, or None when another row is non-zero."""
    ab = _np.asarray(ab)
    if ab.ndim != 2 or any(_np.any(ab[r] != 0) for r in zero_rows if 0 <= r < ab.shape[0]):
        return None
    sub = ab[diag + 1, :-1] if diag + 1 < ab.shape[0] else _np.zeros(ab.shape[1] - 1)
    sup = ab[diag - 1, 1:] if diag >= 1 else _np.zeros(ab.shape[1] - 1)
    return sub, ab[diag], sup


def _sym_band(ab, lower):
    ab = _np.asarray(ab)
    if ab.ndim != 2:
        return None
    if lower:
        if any(_np.any(ab[r] != 0) for r in range(2, ab.shape[0])):
            return None
        e = ab[1, :-1] if ab.shape[0] > 1 else _np.zeros(ab.shape[1] - 1)
        return e, ab[0], e
    if any(_np.any(ab[r] != 0) for r in range(ab.shape[0] - 2)):
        return None
    e = ab[-2, 1:] if ab.shape[0] > 1 else _np.zeros(ab.shape[1] - 1)
    return e, ab[-1], e


def _dense_tri(a):
    if _sp.issparse(a):
        if a.shape[0] != a.shape[1] or a.shape[0] < 2:
            return None
        coo = a.tocoo()
        if _np.any(_np.abs(coo.row[coo.data != 0] - coo.col[coo.data != 0]) > 1):
            return None
        return a.diagonal(-1), a.diagonal(0), a.diagonal(1)
    if isinstance(a, _spl.LinearOperator):
        if a.shape[0] > _BW_CAP:
            return None
        a = a.matmat(_np.eye(a.shape[1]))
    a = _np.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2 or a.shape[-1] > _BW_CAP:
        return None
    if a.ndim > 2:      # a stack of line systems (numpy/scipy batch): their direct sum
        if a.size > _BW_CAP * _BW_CAP:
            return None
        a = a.reshape((-1,) + a.shape[-2:])
    if _np.any(_np.triu(a, 2)) or _np.any(_np.tril(a, -2)):
        return None
    if a.ndim == 2:
        return _np.diagonal(a, -1), _np.diagonal(a), _np.diagonal(a, 1)
    z = _np.zeros((a.shape[0], 1))      # a zero coupling between consecutive systems
    sub = _np.concatenate([_np.diagonal(a, -1, 1, 2), z], axis=1).ravel()[:-1]
    sup = _np.concatenate([_np.diagonal(a, 1, 1, 2), z], axis=1).ravel()[:-1]
    return sub, _np.diagonal(a, 0, 1, 2).ravel(), sup


def _tri(base, args, kwargs):
    """The three diagonals of the system a solve or factorisation is handed, when tridiagonal."""
    if base == "solve_banded":
        low, up = (int(v) for v in _arg(args, kwargs, 0, "l_and_u"))
        return _band_rows(_arg(args, kwargs, 1, "ab"), up, [r for r in range(low + up + 1)
                                                           if abs(r - up) > 1])
    if base == "solveh_banded":
        return _sym_band(_arg(args, kwargs, 0, "ab"), bool(_arg(args, kwargs, 4, "lower", False)))
    if base == "cholesky_banded":
        return _sym_band(_arg(args, kwargs, 0, "ab"), bool(_arg(args, kwargs, 2, "lower", False)))
    if base in ("gtsv", "gttrf", "gtsvx"):
        return tuple(_arg(args, kwargs, i, nm) for i, nm in enumerate(("dl", "d", "du")))
    if base in ("ptsv", "pttrf", "ptsvx"):
        e = _arg(args, kwargs, 1, "e")
        return e, _arg(args, kwargs, 0, "d"), e
    if base in ("gbsv", "gbtrf"):
        if base == "gbsv":
            kl, ku, ab = int(_arg(args, kwargs, 0, "kl")), int(_arg(args, kwargs, 1, "ku")), _arg(args, kwargs, 2, "ab")
        else:
            ab, kl, ku = _arg(args, kwargs, 0, "ab"), int(_arg(args, kwargs, 1, "kl")), int(_arg(args, kwargs, 2, "ku"))
        dg = kl + ku
        return _band_rows(ab, dg, [r for r in range(kl, 2 * kl + ku + 1) if abs(r - dg) > 1])
    if base in ("pbsv", "pbtrf"):
        return _sym_band(_arg(args, kwargs, 0, "ab"), bool(kwargs.get("lower", 0)))
    if base == "solve_toeplitz":
        c = _arg(args, kwargs, 0, "c_or_cr")
        col, row = (c if isinstance(c, tuple) else (c, c))
        col, row = _np.asarray(col).ravel(), _np.asarray(row).ravel()
        if col.size < 2 or _np.any(col[2:]) or _np.any(row[2:]):
            return None
        n = col.size
        return _np.full(n - 1, col[1]), _np.full(n, col[0]), _np.full(n - 1, row[1])
    if base in ("solve", "inv", "pinv", "pinvh", "lstsq", "lu_factor", "cho_factor", "cholesky", "lu", "ldl",
                "gesv", "getrf", "posv", "potrf", "sysv", "sytrf", "gels", "gelsd", "gelss", "gelsy",
                "spsolve", "splu", "spilu", "factorized", "cg", "bicg", "bicgstab", "cgs", "gmres",
                "lgmres", "minres", "qmr", "gcrotmk", "tfqmr", "lsqr", "lsmr"):
        return _dense_tri(_arg(args, kwargs, 0, "a", kwargs.get("A")))
    return None


def _theta(tri):
    """(theta_x, theta_y) when the tridiagonal matrix is, up to a scalar factor, a direct sum of
    I - r D2 (D2 = tridiag(1, -2, 1)) on grid lines of m - 1 nodes with one r > 0 (decoupled
    single rows allowed); theta = r h^2 / (k kappa) for kappa = a and c.  Otherwise None."""
    m, kap, h2k = _S["m"], _S["kappa"], _S["h2k"]
    if tri is None or m is None or kap is None:
        return None
    dl, d, du = (_np.asarray(v, dtype=float).ravel() for v in tri)
    n = d.size
    if n < 2 or dl.size != n - 1 or du.size != n - 1 or not (
            _np.all(_np.isfinite(dl)) and _np.all(_np.isfinite(d)) and _np.all(_np.isfinite(du))):
        return None
    rtol = float(_REQ["adi_op_rtol"])
    cut = _np.flatnonzero((dl == 0) & (du == 0)) + 1
    rs = []
    for lo, hi in zip(_np.concatenate(([0], cut)), _np.concatenate((cut, [n]))):
        if hi - lo == 1:
            continue
        if hi - lo == m - 1:
            bl, bd, bu = dl[lo:hi - 1], d[lo:hi], du[lo:hi - 1]
        elif hi - lo == m + 1 and du[lo] == 0 and dl[hi - 2] == 0 and d[lo] != 0 and d[hi - 1] != 0:
            bl, bd, bu = dl[lo:hi - 2], d[lo + 1:hi - 1], du[lo + 1:hi - 1]   # Dirichlet rows kept
        else:
            return None
        o, dd = bl[0], bd[0]
        tol = rtol * max(abs(o), abs(dd))
        if (_np.any(_np.abs(bl - o) > tol) or _np.any(_np.abs(bu - o) > tol)
                or _np.any(_np.abs(bd - dd) > tol)):
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


def _register(out, base, theta):
    """Remember the factor a factorisation returned, with its class, for its consumers."""
    if base in ("lu_factor", "cho_factor", "getrf", "potrf", "gbtrf", "pbtrf", "pttrf"):
        objs = [out[0]]
    elif base == "gttrf":
        objs = [out[1]]
    elif base == "lu":
        objs = list(out[-2:])
    elif base in ("cholesky", "cholesky_banded"):
        objs = [out]
    else:
        return
    with _LOCK:
        for o in objs:
            if len(_FACTORS) < 20000:
                _FACTORS[id(o)] = (o, theta)


def _factor_theta(base, args, kwargs):
    try:
        f = _CONSUME[base](args, kwargs)
    except Exception:
        return None
    entry = _FACTORS.get(id(f))
    return entry[1] if entry is not None and entry[0] is f else None


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


def _record(name, n, hb, factor, nested, theta):
    m = _S["m"]
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
                if theta is not None:
                    log["adi"] += 1
                    key = "%.10e|%.10e" % tuple(theta)
                    if key in log["thetas"] or len(log["thetas"]) < 64:
                        log["thetas"][key] = log["thetas"].get(key, 0) + 1
    if m is not None and ((n is not None and n > _limit(m)) or
                          (not nested and hb is not None and hb > _REQ["max_half_bandwidth"])):
        _send_violation(name, n, hb, nested)


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


def _spoil(a):
    """mode "nan": every entry NaN; mode "scale": each entry times (1 + eps r), r in [1, 2)
    drawn per run (finite, invisible to an isnan/isfinite test)."""
    if _S["poison"] == "nan":
        return _np.full_like(a, _np.nan)
    with _LOCK:
        r = _RNG.uniform(1.0, 2.0, size=a.shape)
    return a * (1.0 + float(_REQ["perturb_rel"]) * r)


def _poison(out):
    if isinstance(out, _np.ndarray) and out.dtype.kind in "fc":
        return _spoil(out)
    if isinstance(out, tuple):
        return tuple(_poison(o) for o in out)
    if isinstance(out, list):
        return [_poison(o) for o in out]
    if _sp.issparse(out) and out.dtype.kind in "fc":
        out = out.copy()
        out.data[:] = _spoil(out.data)
        return out
    return out


class _SolverProxy:
    """SuperLU objects (and factorized() callables): their solves are counted, classified
    by the factorised matrix, and poisoned when it is an ADI operator."""

    def __init__(self, obj, name, n, theta):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_n", n)
        object.__setattr__(self, "_theta", theta)

    def __getattr__(self, attr):
        val = getattr(self._obj, attr)
        if attr == "solve" and callable(val):
            return self._wrap(val, self._name + ".solve")
        return val

    def _wrap(self, fn, name):
        def solve(*args, **kwargs):
            return _call(fn, name, args, kwargs, lambda a, k: (self._n, None, True), theta=self._theta)
        return solve

    def __call__(self, *args, **kwargs):
        return _call(self._obj, self._name + "()", args, kwargs, lambda a, k: (self._n, None, True),
                     theta=self._theta)


def _depth():
    return getattr(_TL, "depth", 0)


def _nested():
    """Inside another wrapped call of this thread AND called from NumPy/SciPy code (a
    library's own sub-call).  A call from the submission (a callback, a matvec) is a
    solve of its own at any depth."""
    if not _depth():
        return False
    try:
        return _sys._getframe(3).f_code.co_filename.startswith(_LIBDIRS)
    except Exception:
        return False


def _run(fn, args, kwargs):
    _TL.depth = _depth() + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _TL.depth -= 1


_NOTHETA = object()


def _call(fn, name, args, kwargs, extract, proxy=False, theta=_NOTHETA):
    nested = _nested()
    try:
        n, hb, factor = extract(args, kwargs)
    except Exception:
        n, hb, factor = None, None, False
    base = _base(name)
    if nested:
        _record(name, n, hb, factor, True, None)
        return _run(fn, args, kwargs)
    if theta is _NOTHETA:
        try:
            theta = _factor_theta(base, args, kwargs) if base in _CONSUME else _theta(_tri(base, args, kwargs))
        except Exception:
            theta = None
    _record(name, n, hb, factor, False, theta)
    out = _run(fn, args, kwargs)
    if proxy:
        return _SolverProxy(out, name, n, theta)
    if base in _FACTORISE:
        if theta is not None:
            try:
                _register(out, base, theta)
            except Exception:
                pass
        return out
    if _S["poison"] and theta is not None:
        with _LOCK:
            _S["log"]["poisoned"] += 1
        return _poison(out)
    return out


def _call_route(fn, name, args, kwargs, extract):
    nested = _nested()
    try:
        n, vectors = extract(args, kwargs)
    except Exception:
        n, vectors = None, True
    _record_route(name, n, vectors, nested)
    return _run(fn, args, kwargs)


_WRAPPED = {}
_PATCHED = []                           # (module, name, wrapper): checked after every job


def _integrity():
    """Names of entry points the submission un-wrapped, and a depth left non-zero."""
    bad = [f"{getattr(m, '__name__', '?')}.{k}" for m, k, w in _PATCHED if getattr(m, k, None) is not w]
    if _depth() != 0:
        bad.append("instrumentation depth counter")
    return bad


def _make(fn, name, extract, route=False):
    proxy = name.rsplit(".", 1)[-1] in ("splu", "spilu", "factorized")
    if route:
        def wrapper(*args, **kwargs):
            return _call_route(fn, name, args, kwargs, extract)
    else:
        def wrapper(*args, **kwargs):
            return _call(fn, name, args, kwargs, extract, proxy)
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
_sys.path.insert(0, _SUBDIR)
# the driver's state is not offered to the submission as sys.modules["__main__"]
_sys.modules["__main__"] = type(_sys)("__main__")


def _b64f(a):
    return _b64.b64encode(_np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _new_log():
    return {"count": 0, "fns": {}, "max_dim": 0, "max_hb": 0, "unknown_hb": 0, "adi": 0, "thetas": {},
            "poisoned": 0, "nested": 0, "nested_fns": {}, "routes": {}}


def _import_job():
    """The import check, in a forked child of its own: signature, import-time solves."""
    _S["log"] = _new_log()
    try:
        import adi_solver as _sub
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
    import adi_solver
    return adi_solver.solve


def _run_job(job):
    """One job: the solve on its problem, with the instrumentation set for its mesh."""
    _np.random.seed()               # numpy's global generator: fresh entropy, as in a fresh process
    # (forked, every job would inherit the warm parent's state: unseeded np.random draws would
    # repeat in every call and read as deterministic; Python's random reseeds itself at fork)
    h = float(job["h"])
    m = int(round(1.0 / h))
    if job["problem"] == "hidden":
        prob = _PNS["hidden_problem"](_REQ["hidden_draw"])
        call_args = (h, float(_PNS["HIDDEN_T"]), prob)
    elif job["problem"] == "benchmark_object":
        prob = _PNS["benchmark_problem"]()
        call_args = (h, 1.0, prob)
    else:
        prob = _PNS["benchmark_problem"]()
        call_args = (h, 1.0, None)
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
        arrs = [_np.array(v, dtype=_np.float64) for v in res]
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
        log = _json.loads(_json.dumps(_S["log"]))
    msg.update(wall=_time.monotonic() - t0, log=log, m=m)
    bad = _integrity()
    if bad:
        send({"kind": "tamper", "job": job["tag"], "what": bad[:10]})
        _TL.depth = 0
    send(msg)


if fork_jobs([{"id": "import"}], lambda _job: _import_job())[0]["status"] == "ok":
    fork_jobs([dict(_j, id=_j["tag"]) for _j in _REQ["jobs"]], _run_job)
send({"kind": "done"})
