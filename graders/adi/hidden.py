"""HIDDEN INSTANCE (a part of grade_adi.py; see CONTRIBUTING.md)."""
import math
import secrets
import threading
from graders.adi.problems import _PROBLEMS, mesh_m, mesh_tag
from graders.adi.reproducibility import _job_failure
from graders.adi.spec import SPEC
from graders.adi.tiers import boundary_mask
from graders.common.records import Check, Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# HIDDEN INSTANCE (seed: "What the evaluator checks" 6): the grader's own MCS
# =============================================================================
def mcs_reference(problem, m: int, T: float, theta: float = SPEC["ref_theta"]):
    """The grader's independent MCS (in 't Hout-Foulon) solver, k = h = 1/m.
    State: the full (m+1)^2 array with Dirichlet data on its ring.  The two
    implicit stages solve every grid line of one direction at once as multiple
    right-hand sides of one tridiagonal system (scipy.linalg.solve_banded)."""
    import numpy as np
    from scipy.linalg import solve_banded
    h = 1.0 / m
    steps = int(round(T / h))
    k = T / steps
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    ring = boundary_mask(X.shape)
    inner = (slice(1, -1), slice(1, -1))
    coef = {1: problem.a / h ** 2, 2: problem.c / h ** 2}
    mix = problem.b / (4.0 * h * h)

    def frame(t, interior):
        W = np.empty_like(X)
        W[ring] = problem.g(X[ring], Y[ring], t)
        W[inner] = interior
        return W

    def op(j, W):                       # F_j on the interior, boundary data included
        if j == 0:
            return None
        if j == 1:
            return coef[1] * (W[:-2, 1:-1] + W[2:, 1:-1] - 2.0 * W[1:-1, 1:-1])
        return coef[2] * (W[1:-1, :-2] + W[1:-1, 2:] - 2.0 * W[1:-1, 1:-1])

    source_cache = {}

    def op0(t, W):                      # mixed term + source, explicit
        if t not in source_cache:
            source_cache.clear()
            source_cache[t] = problem.f(X[inner], Y[inner], t)
        return mix * (W[2:, 2:] + W[:-2, :-2] - W[2:, :-2] - W[:-2, 2:]) + source_cache[t]

    n = m - 1
    lhs = {}
    for j in (1, 2):
        band = np.empty((3, n))
        band[0], band[1], band[2] = -theta * k * coef[j], 1.0 + 2.0 * theta * k * coef[j], -theta * k * coef[j]
        band[0, 0] = band[2, -1] = 0.0
        lhs[j] = band

    def implicit(j, rhs, t, Wt):
        """(I - theta k A_j) V = rhs + theta k (boundary part of F_j at t)."""
        r = rhs.copy()
        if j == 1:
            r[0, :] += theta * k * coef[1] * Wt[0, 1:-1]
            r[-1, :] += theta * k * coef[1] * Wt[-1, 1:-1]
            return solve_banded((1, 1), lhs[1], r)
        r[:, 0] += theta * k * coef[2] * Wt[1:-1, 0]
        r[:, -1] += theta * k * coef[2] * Wt[1:-1, -1]
        return solve_banded((1, 1), lhs[2], r.T).T

    W = frame(0.0, problem.u0(X[inner], Y[inner]))
    for s in range(steps):
        t_old, t_new = s * k, (s + 1) * k
        ring_new = frame(t_new, 0.0)
        f0, f1, f2 = op0(t_old, W), op(1, W), op(2, W)
        y0 = W[inner] + k * (f0 + f1 + f2)
        y1 = implicit(1, y0 - theta * k * f1, t_new, ring_new)
        y2 = implicit(2, y1 - theta * k * f2, t_new, ring_new)
        W2 = ring_new.copy()
        W2[inner] = y2
        g0 = op0(t_new, W2)
        z0 = y0 + theta * k * (g0 - f0) + (0.5 - theta) * k * (
            g0 + op(1, W2) + op(2, W2) - f0 - f1 - f2)
        z1 = implicit(1, z0 - theta * k * f1, t_new, ring_new)
        z2 = implicit(2, z1 - theta * k * f2, t_new, ring_new)
        W = ring_new
        W[inner] = z2
    return W


_DRAW = {}
_DRAW_LOCK = threading.Lock()


def hidden_draw() -> dict:
    """This grading's hidden instance: every parameter of HIDDEN_FAMILY uniform in its interval,
    drawn once per grader process from the OS entropy source (the reference thread and the
    driver request read the same draw).  No precomputed field fits it; every member of the
    family separates the orders (margins measured over the family, PROBLEMS notes)."""
    with _DRAW_LOCK:
        if not _DRAW:
            rng = secrets.SystemRandom()
            _DRAW.update({k: rng.uniform(lo, hi) for k, (lo, hi) in _PROBLEMS["HIDDEN_FAMILY"].items()})
        return dict(_DRAW)


_WDRAW = {}
WITNESS_KEYS = ("A", "q1", "q2", "q3")


def witness_gap(base: dict, cand: dict) -> float:
    """max |u0(cand) - u0(base)| on the coarsest witness mesh (whose nodes every finer one has;
    the two draws differ only in v's bump)."""
    import numpy as np
    m = mesh_m(max(SPEC["witness_h"]))
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    hp = _PROBLEMS["hidden_problem"]
    return float(np.max(np.abs(hp(cand).u0(X, Y) - hp(base).u0(X, Y))))


def witness_draw() -> dict:
    """The second witness's instance: this grading's hidden draw with the part of u0 that carries
    no data (v's bump: A, q1, q2, q3) drawn afresh from the same intervals, once per grader
    process (OS entropy).  A single call cannot tell it from the hidden instance (same family,
    same T, same meshes); its field minus the hidden run's on each mesh of witness_h is the
    solver's own map applied to the difference of the initial states with zero data.  A candidate whose
    initial difference is under witness_min_gap is drawn again (so that round-off stays far below
    the witness tolerance)."""
    base = hidden_draw()
    with _DRAW_LOCK:
        if not _WDRAW:
            rng = secrets.SystemRandom()
            fam = _PROBLEMS["HIDDEN_FAMILY"]
            for _ in range(1000):
                cand = {k: rng.uniform(*fam[k]) for k in WITNESS_KEYS}
                if witness_gap(base, dict(base, **cand)) >= SPEC["witness_min_gap"]:
                    break
            _WDRAW.update(cand)
        return dict(base, **_WDRAW)


def hidden_instance_check() -> Check:
    """INFO: the drawn instance, so that a verdict can be reproduced (hidden_problem(draw))."""
    d = hidden_draw()
    p = _PROBLEMS["hidden_problem"](d)
    w = witness_draw()
    return Check("hidden.instance", Status.INFO,
                 f"hidden instance drawn for this grading: a = {p.a:.6g}, b = {p.b:.6g}, c = {p.c:.6g}; "
                 + ", ".join(f"{k} = {v:.6g}" for k, v in sorted(d.items()) if k not in ("a", "c"))
                 + "; the witness's bump: " + ", ".join(f"{k} = {w[k]:.17g}" for k in WITNESS_KEYS), d)


def hidden_reference(draw=None):
    """Richardson extrapolation of the reference on h = 1/ref_m[0] and 1/ref_m[1],
    returned on the coarser reference grid (which contains every hidden mesh's nodes).
    `draw`: the instance's parameters (None: this grading's draw, hidden_draw())."""
    import numpy as np
    mc, mf = SPEC["ref_m"]
    prob = _PROBLEMS["hidden_problem"](hidden_draw() if draw is None else draw)
    T = _PROBLEMS["HIDDEN_T"]
    coarse = mcs_reference(prob, mc, T)
    fine = mcs_reference(prob, mf, T)
    ref = (4.0 * fine[:: mf // mc, :: mf // mc] - coarse) / 3.0
    if not np.all(np.isfinite(ref)):
        raise RuntimeError("the grader's hidden-instance reference is not finite")
    return ref


def hidden_error(U, ref, h: float) -> float:
    """max |U - reference| on the nodes of mesh h (inf when U is not finite or misshapen)."""
    import numpy as np
    stride = SPEC["ref_m"][0] // mesh_m(h)
    R = ref[::stride, ::stride]
    U = np.asarray(U, dtype=float)
    if U.shape != R.shape:
        return float("inf")
    with np.errstate(all="ignore"):
        err = float(np.max(np.abs(U - R)))
    return err if math.isfinite(err) else float("inf")


def _drop_check(cid: str, errs: list, i: int, limit: float, rule: str) -> Check:
    """The error must fall by >= limit from hidden_h[i] to hidden_h[i + 1]."""
    h0, h1 = SPEC["hidden_h"][i], SPEC["hidden_h"][i + 1]
    e0, e1 = errs[i], errs[i + 1]
    if e0 is None or e1 is None or not (math.isfinite(e0) and math.isfinite(e1)):
        return Check(cid, Status.FAIL, f"no finite hidden errors on h={h0:g} and h={h1:g}")
    ratio = e0 / e1 if e1 > 0 else float("inf")
    order = math.log(ratio) / math.log(h0 / h1) if ratio > 0 and math.isfinite(ratio) else float("nan")
    ok = ratio >= limit
    return Check(cid, Status.PASS if ok else Status.FAIL,
                 f"hidden error falls {ratio:.2f}x from h={h0:g} to h={h1:g} (observed order {order:.2f}; "
                 f"need >= {limit:g}x, {rule})", ratio, limit)


def hidden_checks(results: dict, ref) -> list:
    """Every hidden mesh within hidden_tol of the reference; the error falls by
    hidden_min_drop from the first to the second mesh (seed) and by
    hidden_min_fine_drop from the second to the third (ours: tells order 2 from 1)."""
    out, errs = [hidden_instance_check()], []
    for h in SPEC["hidden_h"]:
        r = results.get(f"hidden:{h:g}")
        cid = f"hidden.error[{mesh_tag(h)}]"
        if r is None or r["status"] != "ok":
            out.append(Check(cid, Status.FAIL, f"solve(h={h:g}, T, problem) on the hidden instance: "
                             f"{_job_failure(r)}"))
            errs.append(None)
            continue
        err = hidden_error(r["U"], ref, h)
        ok = err <= SPEC["hidden_tol"]
        out.append(Check(cid, Status.PASS if ok else Status.FAIL,
                         f"max |U - reference| = {err:.3e} (limit {SPEC['hidden_tol']:g})", err,
                         SPEC["hidden_tol"]))
        errs.append(err)
    out.append(_drop_check("hidden.drop", errs, 0, SPEC["hidden_min_drop"], "seed"))
    out.append(_drop_check("hidden.order", errs, 1, SPEC["hidden_min_fine_drop"],
                           "second order falls ~4x, first order ~2x"))
    return out


