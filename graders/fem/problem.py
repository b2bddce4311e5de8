"""THE PROBLEM (a part of grade_fem.py; see CONTRIBUTING.md)."""
import math
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# THE PROBLEM: exact solution and the grader's own cubic-Hermite solution
# =============================================================================
class GraderError(Exception):
    """The grader could not compute its own reference: exit 3, never a score."""


def exact_u(x):
    """u(x) = e^x x^2 (1 - x)^2, the manufactured solution."""
    import numpy as np
    return np.exp(x) * x**2 * (1 - x)**2


def load_f(x):
    """f = u'''' = e^x (x^4 + 14x^3 + 49x^2 + 32x - 12)."""
    import numpy as np
    return np.exp(x) * (x**4 + 14 * x**3 + 49 * x**2 + 32 * x - 12)


def hermite_shapes(t, h):
    """N1..N4 on the reference element t in [0, 1] (slope functions scaled by h)."""
    import numpy as np
    return np.stack([1 - 3 * t**2 + 2 * t**3, h * (t - 2 * t**2 + t**3),
                     3 * t**2 - 2 * t**3, h * (t**3 - t**2)], axis=-1)


def hermite_field(coef, n: int, x=None):
    """The field at x (default: the prescribed dense grid, whose elements and shape values
    are computed once per mesh) from global (value, slope) unknowns, all four local DOFs."""
    import numpy as np
    k, N = _dense_basis(n) if x is None else _basis(n, x)
    local = np.stack([coef[2 * k], coef[2 * k + 1], coef[2 * k + 2], coef[2 * k + 3]], axis=-1)
    return np.sum(N * local, axis=-1)


def _basis(n: int, x) -> tuple:
    """(element index, the four shape values) of each point x."""
    import numpy as np
    k = np.minimum(np.floor(x * n).astype(np.int64), n - 1)
    return k, hermite_shapes(x * n - k, 1.0 / n)


_DENSE_BASES: dict = {}


def _dense_basis(n: int) -> tuple:
    if n not in _DENSE_BASES:
        _DENSE_BASES[n] = _basis(n, prescribed_grids(n)[1])
    return _DENSE_BASES[n]


def mesh_text() -> str:
    """The mesh sequence as text, e.g. "32..2048 (2^5..2^11)"."""
    ns = SPEC["meshes"]
    return f"{ns[0]}..{ns[-1]} (2^{ns[0].bit_length() - 1}..2^{ns[-1].bit_length() - 1})"


def prescribed_grids(n: int) -> tuple:
    """x_j = j/n and x_i = i/(10n)."""
    import numpy as np
    m = SPEC["dense_factor"] * n
    return np.arange(n + 1) / n, np.arange(m + 1) / m


def reference_solution(n: int, gauss: int = SPEC["grader_gauss_points"]):
    """The grader's own C1 cubic-Hermite Ritz solution: interleaved (value, slope)
    unknowns, element stiffness EI/h^3 [..], `gauss`-point Gauss-Legendre load,
    clamped ends removed, banded LU (half-bandwidth 3).  Returns (nodes, dense)."""
    import numpy as np
    from scipy.linalg import solve_banded
    h = 1.0 / n
    ndof = 2 * (n + 1)
    ke = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                   [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    tq, wq = np.polynomial.legendre.leggauss(gauss)
    tq, wq = (tq + 1) / 2, wq / 2
    elems = np.arange(n)
    fe = h * (load_f((elems[:, None] + tq[None, :]) * h) * wq) @ hermite_shapes(tq, h)  # (n, 4)
    rhs = np.zeros(ndof)
    ab = np.zeros((7, ndof))                      # banded storage, l = u = 3
    for a in range(4):
        np.add.at(rhs, 2 * elems + a, fe[:, a])
        for b in range(4):                        # column 2k+b is distinct over k
            ab[3 + a - b, 2 * elems + b] += ke[a, b]
    coef = np.zeros(ndof)
    coef[2:-2] = solve_banded((3, 3), ab[:, 2:-2], rhs[2:-2])
    return coef[0::2].copy(), hermite_field(coef, n)


def reference_study() -> dict:
    """{n: (uh_nodes, uh_dense)} for every mesh, with a self-check of the method error."""
    import numpy as np
    ref = {n: reference_solution(n) for n in SPEC["meshes"]}
    n0 = SPEC["meshes"][0]
    e0 = float(np.max(np.abs(ref[n0][1] - exact_u(prescribed_grids(n0)[1]))))
    gold = SPEC["tier1_gold"][n0]
    if not abs(e0 - gold) <= SPEC["self_check_rel"] * gold:
        raise GraderError(f"own 5-point solution gives e*({n0}) = {e0:.6e}, expected {gold:.6e}")
    return ref


def fidelity_tol(n: int) -> float:
    """Pointwise tolerance against the grader's own solution (see SPEC)."""
    if n <= SPEC["fidelity_clean_max_n"]:
        return SPEC["fidelity_atol"]
    return SPEC["fidelity_atol"] * (n / SPEC["fidelity_clean_max_n"]) ** SPEC["fidelity_growth"]


def env_band(n: int) -> float:
    """How far the same code's error at mesh n may move with the BLAS environment (see SPEC)."""
    return SPEC["regen_env_band_256"] * (n / SPEC["fidelity_clean_max_n"]) ** SPEC["fidelity_growth"]


def orders(errors) -> list:
    """beta_k = log2(e_{k-1} / e_k), k = 1.. (uniform refinement by 2), for positive
    errors; as a difference of logs, so that no ratio under- or overflows."""
    return [math.log2(errors[k - 1]) - math.log2(errors[k]) for k in range(1, len(errors))]


def lsq_order(ns, errors) -> float:
    """Least-squares slope of -log(e) against log(n)."""
    import numpy as np
    slope = np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(errors, float)), 1)[0]
    return float(-slope)


def worst(diff) -> tuple:
    """(index, value) of the largest |diff|."""
    import numpy as np
    i = int(np.argmax(np.abs(diff)))
    return i, float(abs(diff[i]))


def nonfinite_where(arr) -> str:
    import numpy as np
    bad = np.flatnonzero(~np.isfinite(arr))
    return f"{bad.size} non-finite value(s), first at index {int(bad[0])}" if bad.size else ""


