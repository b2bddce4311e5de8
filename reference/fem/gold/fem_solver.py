"""Gold reference: cubic-Hermite (C1) finite elements for the clamped
Euler-Bernoulli beam u'''' = f on [0, 1], u = u' = 0 at both ends, with the
manufactured solution u(x) = e^x x^2 (1 - x)^2.

solve(n) assembles the global stiffness matrix (two unknowns per node: value
and slope, interleaved), integrates the load with 3-point Gauss-Legendre per
element, removes the four clamped boundary unknowns, solves the 2(n-1) system
with a sparse direct solver, and reconstructs the field on the nodes j/n and on
the dense grid i/(10n) from all four local unknowns of the containing element.
"""
import numpy as np
import scipy.sparse
import scipy.sparse.linalg

GAUSS_POINTS = 3


def load(x):
    """f = u'''' for u = e^x x^2 (1 - x)^2."""
    return np.exp(x) * (x**4 + 14 * x**3 + 49 * x**2 + 32 * x - 12)


def hermite_basis(t, h):
    """The four cubic-Hermite shape functions on the reference element t in [0, 1]."""
    return np.stack([1 - 3 * t**2 + 2 * t**3,
                     h * (t - 2 * t**2 + t**3),
                     3 * t**2 - 2 * t**3,
                     h * (t**3 - t**2)], axis=-1)


def element_stiffness(h):
    return np.array([[12, 6 * h, -12, 6 * h],
                     [6 * h, 4 * h**2, -6 * h, 2 * h**2],
                     [-12, -6 * h, 12, -6 * h],
                     [6 * h, 2 * h**2, -6 * h, 4 * h**2]]) / h**3


def evaluate(coef, n, x):
    """The Hermite field at points x from the global vector coef (value, slope per node)."""
    h = 1.0 / n
    k = np.minimum(np.floor(x * n).astype(int), n - 1)
    t = x * n - k
    local = np.stack([coef[2 * k], coef[2 * k + 1], coef[2 * k + 2], coef[2 * k + 3]], axis=-1)
    return np.sum(hermite_basis(t, h) * local, axis=-1)


def solve(n):
    h = 1.0 / n
    ndof = 2 * (n + 1)
    ke = element_stiffness(h)
    tq, wq = np.polynomial.legendre.leggauss(GAUSS_POINTS)
    tq, wq = (tq + 1) / 2, wq / 2
    rows, cols, vals = [], [], []
    rhs = np.zeros(ndof)
    nq = hermite_basis(tq, h)                      # (q, 4)
    for k in range(n):
        dofs = np.arange(2 * k, 2 * k + 4)
        rows.append(np.repeat(dofs, 4))
        cols.append(np.tile(dofs, 4))
        vals.append(ke.ravel())
        xq = (k + tq) * h
        rhs[dofs] += h * (wq * load(xq)) @ nq
    K = scipy.sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                shape=(ndof, ndof)).tocsr()
    free = np.arange(2, ndof - 2)
    coef = np.zeros(ndof)
    coef[free] = scipy.sparse.linalg.spsolve(K[free][:, free], rhs[free])
    x_nodes = np.arange(n + 1) / n
    x_dense = np.arange(10 * n + 1) / (10 * n)
    return {"x_nodes": x_nodes, "uh_nodes": coef[0::2], "x_dense": x_dense,
            "uh_dense": evaluate(coef, n, x_dense)}
