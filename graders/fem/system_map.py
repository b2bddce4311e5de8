"""5-8. PROVENANCE (a part of grade_fem.py; see CONTRIBUTING.md)."""
import dataclasses
import math
from graders.fem.problem import hermite_field, hermite_shapes, load_f
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 5-8. PROVENANCE: the stiffness solve, its map onto the statement's unknowns,
# and the reconstruction of the field from it (pure functions)
# =============================================================================
# A recorded solve of dimension m = 2(n-1) is the statement's system when its
# matrix A = alpha D P^T K P D for a permutation P of the unknowns, a diagonal
# D (equilibration, scaled slopes, signs) and a factor alpha: normalised by its
# own diagonal, A is a permuted, sign-flipped copy of K normalised by K's
# diagonal, whose off-diagonal entries are only 1/2 (value-value), 1/4
# (slope-slope) and sqrt(3)/4 (value-slope of neighbouring nodes).  Its
# right-hand side must then be gamma D P^T F (gamma = sign(alpha) |alpha|^(1/2)),
# F the load vector, and its output maps back to the statement's (value, slope)
# unknowns as u = P D z.
_FREE_SYSTEMS: dict = {}


def free_system(n: int) -> tuple:
    """(K, F, Kabs): the statement's free 2(n-1) stiffness matrix (CSR, interleaved
    value/slope; exact entries when n is a power of two), the grader's
    `grader_gauss_points` load vector, and |K| (for round-off bounds).  Cached."""
    import numpy as np
    import scipy.sparse
    if n in _FREE_SYSTEMS:
        return _FREE_SYSTEMS[n]
    h = 1.0 / n
    ndof = 2 * (n + 1)
    ke = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                   [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    tq, wq = np.polynomial.legendre.leggauss(SPEC["grader_gauss_points"])
    tq, wq = (tq + 1) / 2, wq / 2
    elems = np.arange(n)
    fe = h * (load_f((elems[:, None] + tq[None, :]) * h) * wq) @ hermite_shapes(tq, h)
    rhs = np.zeros(ndof)
    for a in range(4):
        np.add.at(rhs, 2 * elems + a, fe[:, a])
    d = np.arange(4)
    rows = (2 * elems[:, None] + np.repeat(d, 4)[None, :]).ravel()
    cols = (2 * elems[:, None] + np.tile(d, 4)[None, :]).ravel()
    K = scipy.sparse.coo_matrix((np.tile(ke.ravel(), n), (rows, cols)), shape=(ndof, ndof)).tocsr()
    K = K[2:-2][:, 2:-2].tocsr()
    K.eliminate_zeros()
    _FREE_SYSTEMS[n] = (K, rhs[2:-2].copy(), abs(K))
    return _FREE_SYSTEMS[n]


def rhs_tol(n: int) -> float:
    """Relative tolerance on a load vector (see SPEC "rhs_rel_32")."""
    return SPEC["rhs_rel_32"] * (SPEC["meshes"][0] / n) ** SPEC["rhs_rel_power"]


@dataclasses.dataclass(frozen=True)
class StiffnessMap:
    """How a recorded system maps onto the statement's: K position q is the
    system's unknown perm[q]; dt[q] = sign * sqrt(|A_qq| / K_qq) (= |alpha|^(1/2) D_q);
    sigma the sign of A's diagonal (of alpha)."""
    perm: object
    dt: object
    sigma: float


def _chain(nodes, pairs) -> list:
    """The nodes in path order along `pairs` (an undirected simple path), or []."""
    nbr = {v: [] for v in nodes.tolist()}      # (numpy scalars one by one cost ms per mesh)
    for a, b in pairs:
        if a in nbr and b in nbr and b not in nbr[a]:
            nbr[a].append(b)
    ends = [v for v, ns in nbr.items() if len(ns) == 1]
    if len(nbr) == 1:
        return list(nbr)
    if len(ends) != 2 or any(len(ns) > 2 for ns in nbr.values()):
        return []
    path, prev = [min(ends)], None
    while len(path) < len(nbr):
        nxt = [w for w in nbr[path[-1]] if w != prev]
        if not nxt:
            return []
        prev = path[-1]
        path.append(nxt[0])
    return path if len(set(path)) == len(nbr) else []


def stiffness_maps(A, n: int) -> tuple:
    """([StiffnessMap, ...], reason): the ways the square sparse matrix A is the
    statement's free stiffness matrix under a DOF permutation, a symmetric diagonal
    scaling and a common factor (the mirror image x -> 1 - x is a second map; the
    load vector decides between them), or ([], why not)."""
    import numpy as np
    import scipy.sparse
    m = 2 * (n - 1)
    if A.shape != (m, m):
        return [], f"dimension {A.shape[0]}x{A.shape[1]}, expected {m} = 2(n-1)"
    A = scipy.sparse.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    if not np.all(np.isfinite(A.data)):
        return [], "non-finite entries"
    d = A.diagonal()
    if np.any(d == 0):
        return [], "a zero on the diagonal"
    sigma = float(np.sign(d[0]))
    if np.any(np.sign(d) != sigma):
        return [], "diagonal entries of both signs (no scaling of K has that)"
    s = 1.0 / np.sqrt(np.abs(d))
    C = A.tocoo()
    v = sigma * C.data * s[C.row] * s[C.col]
    off = (C.row != C.col) & (np.abs(v) > SPEC["stiffness_entry_tol"])
    r, c, v = C.row[off].astype(np.int64), C.col[off].astype(np.int64), v[off]
    refs = (0.5, 0.25, math.sqrt(3) / 4)          # value-value, slope-slope, value-slope
    cls = np.full(v.size, -1)
    for k, ref in enumerate(refs):
        cls[np.abs(np.abs(v) - ref) <= SPEC["stiffness_entry_tol"]] = k
    if np.any(cls < 0):
        i = int(np.flatnonzero(cls < 0)[0])
        return [], (f"normalised entry A[{r[i]},{c[i]}] = {v[i]:.6g} is none of +-1/2, +-1/4, "
                    "+-sqrt(3)/4 (the entries of K over its diagonal)")
    values = np.unique(r[cls == 0])
    slopes = np.unique(r[cls == 1])
    if values.size != n - 1 or slopes.size != n - 1 or np.intersect1d(values, slopes).size:
        return [], (f"{values.size} value-like and {slopes.size} slope-like unknowns, expected "
                    f"{n - 1} of each")
    vchain = _chain(values, zip(r[cls == 0].tolist(), c[cls == 0].tolist()))
    schain = _chain(slopes, zip(r[cls == 1].tolist(), c[cls == 1].tolist()))
    if not vchain or not schain:
        return [], "the value or slope couplings do not form one chain of nodes"
    vs = set(zip(r[cls == 2].tolist(), c[cls == 2].tolist()))
    Khat = free_system(n)[0]
    kd = 1.0 / np.sqrt(Khat.diagonal())
    Khat = scipy.sparse.diags(kd) @ Khat @ scipy.sparse.diags(kd)
    Bn = scipy.sparse.csr_matrix((sigma * C.data * s[C.row] * s[C.col], (C.row, C.col)), shape=(m, m))
    maps = []
    for vals_, slps in ((vchain, schain), (vchain[::-1], schain[::-1])):
        if n > 2 and (vals_[1], slps[0]) not in vs:
            slps = slps[::-1]
            if (vals_[1], slps[0]) not in vs:
                continue
        perm = np.empty(m, dtype=np.int64)
        perm[0::2], perm[1::2] = vals_, slps
        B = Bn[perm][:, perm]
        # signs t with B = T Khat T: along the value chain (K = -1/2), the slope chain
        # (+1/4), and one value-slope coupling (K(v_1, s_2) = +sqrt(3)/4)
        t = np.ones(m)
        if n > 2:
            vv = np.sign(np.asarray(B[np.arange(0, m - 2, 2), np.arange(2, m, 2)]).ravel())
            ss = np.sign(np.asarray(B[np.arange(1, m - 2, 2), np.arange(3, m, 2)]).ravel())
            t[0::2] = np.concatenate([[1.0], np.cumprod(-vv)])
            link = np.sign(B[0, 3]) * t[0] * ss[0]
            t[1::2] = link * np.concatenate([[1.0], np.cumprod(ss)])
        T = scipy.sparse.diags(t)
        diff = abs(B - T @ Khat @ T)
        worst_dev = float(diff.max()) if diff.nnz else 0.0
        if worst_dev > SPEC["stiffness_entry_tol"]:
            return [], (f"permuted and normalised, the matrix differs from K by {worst_dev:.3g} "
                        "(not a scaled, reordered stiffness matrix)")
        dt = t * np.sqrt(np.abs(d[perm]) / free_system(n)[0].diagonal())
        maps.append(StiffnessMap(perm, dt, sigma))
    if not maps:
        return [], "slopes and values are not coupled as neighbouring nodes are"
    return maps, ""


_OWN_MAPS: dict = {}


def own_stiffness_maps(n: int) -> tuple:
    """(the free K in canonical CSR, stiffness_maps(K, n) = (maps, why)) of the statement's
    own matrix, computed once (Execution computes them while the child starts up)."""
    if n not in _OWN_MAPS:
        K = free_system(n)[0].copy()
        K.sum_duplicates()
        _OWN_MAPS[n] = (K, stiffness_maps(K, n))
    return _OWN_MAPS[n]


def maps_of_own_matrix(A, n: int):
    """stiffness_maps(A, n) = (maps, why) when A is, entry for entry and bit for bit, the
    statement's own K (its canonical CSR arrays equal: stiffness_maps reads nothing else, so
    its answer is the one computed for K, ~30 ms at n = 2048 that a job no longer waits
    for); None otherwise (the caller computes it)."""
    import numpy as np
    import scipy.sparse
    K, maps = own_stiffness_maps(n)
    if A.shape != K.shape or A.nnz != K.nnz:
        return None
    A = scipy.sparse.csr_matrix(A, dtype=np.float64, copy=True)
    A.sum_duplicates()
    if not (np.array_equal(A.indptr, K.indptr) and np.array_equal(A.indices, K.indices)
            and np.array_equal(A.data.view(np.uint64), K.data.view(np.uint64))):
        return None
    return maps


def fit_load(maps: list, b, n: int) -> tuple:
    """(map, gamma, rel): the map under which the right-hand-side column b is
    gamma D P^T F (F the grader's load vector), gamma by least squares in the
    statement's unknowns, and rel = max_q |b_q / (gamma dt_q) - F_q| / max |F| there
    (so that the tolerance does not depend on the submission's scaling).  The
    smaller rel over the maps (a system and its mirror image)."""
    import numpy as np
    F = free_system(n)[1]
    best = (None, 0.0, math.inf)
    scale = float(np.max(np.abs(F)))
    with np.errstate(all="ignore"):
        for mp in maps:
            bh = b[mp.perm] / mp.dt
            gamma = float(np.dot(bh, F)) / float(np.dot(F, F))
            if not gamma or not math.isfinite(gamma):
                continue
            rel = float(np.max(np.abs(bh / gamma - F)) / scale)
            if rel < best[2]:
                best = (mp, gamma, rel)
    return best


def statement_unknowns(mp: StiffnessMap, gamma: float, z):
    """The statement's free (value, slope) unknowns u = P D z for an output column z."""
    return mp.sigma * mp.dt * z[mp.perm] / gamma


def field_of(u, n: int) -> tuple:
    """(uh_nodes, uh_dense) of the free unknowns u (clamped ends added)."""
    import numpy as np
    coef = np.zeros(2 * (n + 1))
    coef[2:-2] = u
    return coef[0::2].copy(), hermite_field(coef, n)


def fit_01(candidates: list, nodes, dense) -> tuple:
    """(c, lam, residual, scale): the 0/1 combination c of the candidate fields
    [(nodes_k, dense_k), ...] and the common factor lam (least squares; it absorbs
    the load-vector tolerance in the scale gamma of the unknowns) that come closest
    to the returned field in max norm, that deviation, and the scale the
    reconstruction tolerance is relative to."""
    import itertools
    import numpy as np
    f = np.concatenate([nodes, dense])
    fmax = float(np.max(np.abs(f))) if np.all(np.isfinite(f)) else math.inf
    if not candidates:
        return (), 0.0, fmax, fmax
    Phi = np.stack([np.concatenate(cd) for cd in candidates], axis=1)
    k = Phi.shape[1]
    if k <= SPEC["fit_enumerate_max"]:
        combos = list(itertools.product((0, 1), repeat=k))[1:]
    else:
        ok = np.all(np.isfinite(Phi), axis=0)
        coef = np.zeros(k)
        if ok.any() and math.isfinite(fmax):
            coef[ok] = np.linalg.lstsq(Phi[:, ok], f, rcond=None)[0]
        combos = [tuple(int(x) for x in np.clip(np.round(coef), 0, 1))]
    best = ((), 0.0, fmax, fmax)
    with np.errstate(all="ignore"):
        for c in combos:
            sel = np.array(c, dtype=bool)
            if not sel.any():
                continue
            pred = Phi[:, sel].sum(axis=1)
            pp = float(np.dot(pred, pred))      # np.dot: `@` on vectors is far slower here
            lam = float(np.dot(pred, f)) / pp if pp > 0 else 0.0
            res = float(np.max(np.abs(lam * pred - f)))
            if not math.isfinite(res) or res >= best[2]:
                continue
            best = (tuple(c), lam, res, max(fmax, float(np.max(np.abs(pred)))))
    return best


def reconstruction_tol(scale: float) -> float:
    return SPEC["reconstruction_rel"] * max(scale, SPEC["reconstruction_floor"])


def load_residual(u, n: int) -> tuple:
    """(residual, bound): max |K u - F| (in extended precision where available) and
    what the load tolerance plus a backward-stable solve's round-off allow."""
    import numpy as np
    K, F, Kabs = free_system(n)
    C = K.tocoo()
    acc = np.zeros(F.size, dtype=np.longdouble)
    np.add.at(acc, C.row, C.data.astype(np.longdouble) * u[C.col].astype(np.longdouble))
    res = float(np.max(np.abs(acc - F.astype(np.longdouble))))
    bound = rhs_tol(n) * float(np.max(np.abs(F))) + \
        SPEC["residual_roundoff"] * float(np.finfo(float).eps) * float(np.max(Kabs @ np.abs(u)))
    return res, bound

