"""Gold submission: Modified Craig-Sneyd (MCS) ADI, theta = 1/3, for

    u_t = a u_xx + b u_xy + c u_yy + f   on [0,1]^2, Dirichlet data g, k = h.

Splitting F = F0 + F1 + F2: F0 = mixed term + source (explicit), F1 = a d_xx and
F2 = c d_yy (implicit).  Every implicit solve is one tridiagonal system of
dimension m-1 with all grid lines of one direction passed as right-hand sides
(scipy.linalg.solve_banded).  The module constants SCHEME / THETA / MIXED select
other members of the in 't Hout-Foulon family; the gold is MCS, theta = 1/3.
"""
import math

import numpy as np
from scipy.linalg import solve_banded

SCHEME = "MCS"        # "Douglas" | "CS" | "MCS" | "HV"
THETA = 1.0 / 3.0
MIXED = True          # False drops the mixed derivative (a wrong scheme, for the survey)


class BenchmarkProblem:
    """u = exp(-3t) x y sin(pi x) sin(pi y); a = 1.0, b = 0.8, c = 0.5."""
    a, b, c = 1.0, 0.8, 0.5

    def __init__(self):
        self._cache = (None, None, None)

    @staticmethod
    def exact(X, Y, t):
        return math.exp(-3.0 * t) * X * Y * np.sin(np.pi * X) * np.sin(np.pi * Y)

    def u0(self, X, Y):
        return self.exact(X, Y, 0.0)

    def g(self, X, Y, t):
        return self.exact(X, Y, t)

    def f(self, X, Y, t):
        """f = u_t - (a u_xx + b u_xy + c u_yy) = exp(-3t) S(x, y)."""
        cx, cy, S = self._cache
        if cx is not X or cy is not Y:
            pi = np.pi
            p = lambda s: s * np.sin(pi * s)
            dp = lambda s: np.sin(pi * s) + pi * s * np.cos(pi * s)
            ddp = lambda s: 2.0 * pi * np.cos(pi * s) - pi * pi * s * np.sin(pi * s)
            S = (-3.0 * p(X) * p(Y) - self.a * ddp(X) * p(Y)
                 - self.b * dp(X) * dp(Y) - self.c * p(X) * ddp(Y))
            self._cache = (X, Y, S)
        return math.exp(-3.0 * t) * S


def solve(h, T=1.0, problem=None):
    """Return (X, Y, U): the (m+1)x(m+1) grid (indexing='ij') and U(T), k = h."""
    pb = BenchmarkProblem() if problem is None else problem
    m = int(round(1.0 / h))
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    nsteps = int(round(T / h))
    k = T / nsteps
    a, b, c = float(pb.a), float(pb.b), float(pb.c)
    rx, ry, rxy = a / h ** 2, c / h ** 2, (b / (4.0 * h ** 2) if MIXED else 0.0)
    th = THETA
    n = m - 1
    Xi, Yi = X[1:-1, 1:-1], Y[1:-1, 1:-1]
    ring = np.ones((m + 1, m + 1), dtype=bool)
    ring[1:-1, 1:-1] = False
    Xb, Yb = X[ring], Y[ring]
    memo = {}

    def data(t):
        """(boundary-padded template, interior source) at time t, computed once."""
        if t not in memo:
            if len(memo) > 4:
                memo.clear()
            G = np.zeros((m + 1, m + 1))
            G[ring] = pb.g(Xb, Yb, t)
            memo[t] = (G, np.asarray(pb.f(Xi, Yi, t), dtype=float))
        return memo[t]

    def with_bc(V, t):
        W = data(t)[0].copy()
        W[1:-1, 1:-1] = V
        return W

    def F0(t, W):
        return rxy * (W[2:, 2:] - W[2:, :-2] - W[:-2, 2:] + W[:-2, :-2]) + data(t)[1]

    def F1(W):
        return rx * (W[2:, 1:-1] - 2.0 * W[1:-1, 1:-1] + W[:-2, 1:-1])

    def F2(W):
        return ry * (W[1:-1, 2:] - 2.0 * W[1:-1, 1:-1] + W[1:-1, :-2])

    bands = {}
    for key, r in (("x", rx), ("y", ry)):
        ab = np.zeros((3, n))
        ab[0, 1:] = -th * k * r
        ab[1, :] = 1.0 + 2.0 * th * k * r
        ab[2, :-1] = -th * k * r
        bands[key] = ab

    def implicit(rhs, t, axis):
        """Solve (I - th k Fj) V = rhs (+ the boundary part of th k Fj at t) along axis."""
        G = data(t)[0]
        rhs = rhs.copy()
        if axis == 0:
            rhs[0, :] += th * k * rx * G[0, 1:-1]
            rhs[-1, :] += th * k * rx * G[-1, 1:-1]
            return solve_banded((1, 1), bands["x"], rhs)
        rhs[:, 0] += th * k * ry * G[1:-1, 0]
        rhs[:, -1] += th * k * ry * G[1:-1, -1]
        return solve_banded((1, 1), bands["y"], rhs.T).T

    def stages(Z0, t1, P1, P2):
        Z1 = implicit(Z0 - th * k * P1, t1, 0)
        return implicit(Z1 - th * k * P2, t1, 1)

    U = with_bc(np.asarray(pb.u0(Xi, Yi), dtype=float), 0.0)
    for step in range(nsteps):
        t0, t1 = step * k, (step + 1) * k
        A0, A1, A2 = F0(t0, U), F1(U), F2(U)
        Y0 = U[1:-1, 1:-1] + k * (A0 + A1 + A2)
        Y2 = stages(Y0, t1, A1, A2)
        if SCHEME == "Douglas":
            V = Y2
        else:
            W2 = with_bc(Y2, t1)
            B0 = F0(t1, W2)
            if SCHEME == "CS":
                V = stages(Y0 + 0.5 * k * (B0 - A0), t1, A1, A2)
            elif SCHEME == "MCS":
                Zh = Y0 + th * k * (B0 - A0)
                Z0 = Zh + (0.5 - th) * k * (B0 + F1(W2) + F2(W2) - A0 - A1 - A2)
                V = stages(Z0, t1, A1, A2)
            elif SCHEME == "HV":
                B1, B2 = F1(W2), F2(W2)
                V = stages(Y0 + 0.5 * k * (B0 + B1 + B2 - A0 - A1 - A2), t1, B1, B2)
            else:
                raise ValueError(f"unknown scheme {SCHEME}")
        U = with_bc(V, t1)
    return X, Y, U
