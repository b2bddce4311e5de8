"""CAUSAL SWEEP AUDIT (a part of grade_adi.py; see CONTRIBUTING.md)."""
import math
from graders.adi.hidden import hidden_draw, witness_draw
from graders.adi.problems import _PROBLEMS, h_value, mesh_m, mesh_tag
from graders.adi.reproducibility import _job_failure
from graders.adi.schema import compare_arrays
from graders.adi.spec import SPEC
from graders.common.records import Check, Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# CAUSAL SWEEP AUDIT (seed: "What the evaluator checks" 7)
# =============================================================================
def causal_audit_check(jobs: dict, outcome) -> list:
    """Poisoned rerun vs the clean run on the same mesh: on one hidden mesh (the
    seed's audit) and, as our addition, on the coarsest benchmark mesh, so that a
    solver honest on the hidden problem but faking the benchmark is caught too.
    Our second addition, the finite audit, scales every solve result by a tiny
    random factor instead: a NaN test cannot see it, so a solver that discards
    its sweeps and reacts only to NaN (raising, falling back, or 0*sweep, which
    NaN turns non-finite) returns an unchanged field and fails."""
    h = SPEC["audit_h"]
    theta = submission_theta(jobs)
    return (_one_audit("audit.causal", jobs.get(f"hidden:{h:g}"), jobs.get(f"audit:{h:g}"), outcome, theta)
            + _one_audit("audit.causal_benchmark", jobs.get("bench:0"), jobs.get(f"auditbench:{h:g}"),
                         outcome, theta)
            + _one_perturbed("audit.perturbed", jobs.get(f"hidden:{h:g}"), jobs.get(f"perturb:{h:g}"),
                             outcome, theta)
            + _one_perturbed("audit.perturbed_benchmark", jobs.get("bench:0"),
                             jobs.get(f"perturbbench:{h:g}"), outcome, theta))


# -- the second witness of ADI structure (ours), independent of the in-process recorder ----
# The witness run is an ordinary hidden-family run (T = 1, k = h, several steps, non-zero source
# and Dirichlet data) on witness_h; its draw is this grading's hidden draw with v's initial bump
# redrawn (witness_draw), so that no single call can tell it from the hidden run on that mesh.
# Every member of the family is affine in (u0, f, g): the witness field minus the hidden run's is
# N steps of the scheme's own linear map applied to the difference of the initial states, with
# zero data, whatever the solver does with f and g.  The grader replays that map itself (outside
# the child) for every scheme of the family (Douglas, CS, MCS, HV) with theta fitted to the
# returned difference, and for a monolithic 2-D theta-step (I - phi k A) U1 = (I + (1 - phi) k A) U0.
_WITNESS_SCHEMES = ("Douglas", "CS", "MCS", "HV")


def witness_operators(m: int, h: float, a: float, b: float, c: float) -> dict:
    """The 1-D pieces of F0 (mixed term), F1 = a dxx and F2 = c dyy on the interior with zero
    Dirichlet data, acting on V[i, j] (x index i) as (m-1) x (m-1) arrays:
    F0 V = b D1 V D1^T, F1 V = a D2 V, F2 V = c V D2^T (small matrices: no 2-D operator is built
    except for the monolithic map)."""
    import numpy as np
    n = m - 1
    D2 = (np.diag(np.full(n, -2.0)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)) / h ** 2
    D1 = (np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)) / (2.0 * h)
    return {"n": n, "D1": D1, "D2": D2, "a": float(a), "b": float(b), "c": float(c)}


def _f012(ops):
    D1, D2, a, b, c = ops["D1"], ops["D2"], ops["a"], ops["b"], ops["c"]
    return (lambda V: b * (D1 @ V @ D1.T), lambda V: a * (D2 @ V), lambda V: c * (V @ D2.T))


def _stencils(ops):
    """The three-point stencils of F0, F1 and F2 (O(n^2) a call instead of dense products: long
    replays), each along the rows of a C-ordered array (numpy's fast case: a stencil along the
    contiguous axis runs ~3x slower, so a y-stencil works on a transposed copy; the values are the
    same operations in the same order either way)."""
    import numpy as np
    a, b, c, s2, s1 = ops["a"], ops["b"], ops["c"], ops["D2"][0, 1], ops["D1"][0, 1]

    def rows(V):                    # V^T as a C-ordered array (a copy only when it is not one)
        W = V.T
        return W if W.flags.c_contiguous else np.ascontiguousarray(W)

    def d2x(V):                     # D2 V: (V[i-1] - 2 V[i] + V[i+1]) / h^2, zero outside
        out = -2.0 * V
        out[1:] += V[:-1]
        out[:-1] += V[1:]
        return s2 * out

    def d1x(V):                     # D1 V: (V[i+1] - V[i-1]) / (2h)
        out = np.zeros_like(V)
        out[:-1] += V[1:]
        out[1:] -= V[:-1]
        return s1 * out
    return (lambda V: b * d1x(rows(d1x(V))).T, lambda V: a * d2x(V), lambda V: c * d2x(rows(V)).T)


def _banded_solver(r: float, n: int):
    """R -> (I - r h^2 D2)^{-1} R along axis 0 (r = theta k kappa / h^2 > 0: symmetric positive
    definite, so LAPACK's pttrs with the factor computed once; ~2x faster than solve_banded's
    pivoting gtsv, which also refactors and validates its operands on every call)."""
    import numpy as np
    from scipy.linalg import solve_banded
    from scipy.linalg.lapack import dpttrf, dpttrs
    if r > 0 and math.isfinite(r):
        d, e, info = dpttrf(np.full(n, 1.0 + 2.0 * r), np.full(n - 1, -r))
        if info == 0:
            return lambda R: dpttrs(d, e, R)[0]
    ab = np.empty((3, n))
    ab[0], ab[1], ab[2] = -r, 1.0 + 2.0 * r, -r
    return lambda R: solve_banded((1, 1), ab, R, check_finite=False)


def adi_map(scheme: str, theta: float, ops, k: float, banded: bool = False):
    """One step of the family (in 't Hout & Foulon 2010) with zero data, V -> V+ on the interior.
    banded: the same map by stencils and tridiagonal solves (O(n^2) a step, for long replays)."""
    import numpy as np
    if banded:
        return _adi_map_banded(scheme, theta, ops, k)
    F0, F1, F2 = _f012(ops)
    eye = np.eye(ops["n"])
    M1i = np.linalg.inv(eye - theta * k * ops["a"] * ops["D2"])
    M2iT = np.linalg.inv(eye - theta * k * ops["c"] * ops["D2"]).T

    def stages(Z0, V):
        return (M1i @ (Z0 - theta * k * F1(V)) - theta * k * F2(V)) @ M2iT

    def F(V):
        return F0(V) + F1(V) + F2(V)

    def step(U):
        Y0 = U + k * F(U)
        Y2 = stages(Y0, U)
        if scheme == "Douglas":
            return Y2
        if scheme == "CS":
            return stages(Y0 + 0.5 * k * F0(Y2 - U), U)
        if scheme == "MCS":
            return stages(Y0 + theta * k * F0(Y2 - U) + (0.5 - theta) * k * F(Y2 - U), U)
        return stages(Y0 + 0.5 * k * F(Y2 - U), Y2)           # HV
    return step


def _adi_map_banded(scheme: str, theta: float, ops, k: float):
    """adi_map(banded=True): the same formulas as the dense map, each F_j(V) evaluated once per
    step (the dense form recomputes F1(U) and F2(U) in every stage)."""
    F0, F1, F2 = _stencils(ops)
    tk = theta * k
    s2 = ops["D2"][0, 1]
    solve_x, solve_y = (_banded_solver(tk * kap * s2, ops["n"]) for kap in (ops["a"], ops["c"]))

    def parts(V):
        return F0(V), F1(V), F2(V)

    def stages(Z0, f1, f2):         # f1, f2: F1(V), F2(V) of the stage's V
        Z1 = solve_x(Z0 - tk * f1)
        return solve_y((Z1 - tk * f2).T).T

    def step(U):
        f0, f1, f2 = parts(U)
        Y0 = U + k * (f0 + f1 + f2)
        Y2 = stages(Y0, f1, f2)
        if scheme == "Douglas":
            return Y2
        W = Y2 - U
        if scheme == "CS":
            return stages(Y0 + 0.5 * k * F0(W), f1, f2)
        w0, w1, w2 = parts(W)
        if scheme == "MCS":
            return stages(Y0 + tk * w0 + (0.5 - theta) * k * (w0 + w1 + w2), f1, f2)
        g1, g2 = F1(Y2), F2(Y2)
        return stages(Y0 + 0.5 * k * (w0 + w1 + w2), g1, g2)    # HV
    return step


def monolithic_map(phi: float, ops, k: float):
    """One monolithic 2-D theta-step (I - phi k A) U1 = (I + (1 - phi) k A) U0, zero data."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import splu
    n = ops["n"]
    if "A2d" not in ops:            # the 2-D operator, built once per witness
        eye = sp.identity(n, format="csr")
        D1, D2 = sp.csr_matrix(ops["D1"]), sp.csr_matrix(ops["D2"])
        ops["A2d"] = (ops["b"] * sp.kron(D1, D1) + ops["a"] * sp.kron(D2, eye)
                      + ops["c"] * sp.kron(eye, D2)).tocsc()
    A = ops["A2d"]
    big = sp.identity(n * n, format="csc")
    lu = splu((big - phi * k * A).tocsc())
    B = (big + (1.0 - phi) * k * A).tocsr()
    return lambda U: lu.solve(B @ U.ravel()).reshape(n, n)


def propagate(step, U, steps: int):
    """`steps` applications of a one-step map to U ((m-1) x (m-1)); flattened."""
    for _ in range(steps):
        U = step(U)
    return U.ravel()


def fit_step(step, U1, starts, scan: bool = True) -> tuple:
    """(relative max-norm mismatch, theta) of the best theta for a one-parameter map:
    a scan (or the given starts alone), then Gauss-Newton on |U1 - step(theta)|^2 (converges
    to round-off)."""
    import numpy as np
    scale = float(np.max(np.abs(U1))) or 1.0
    tmax = SPEC["witness_theta_max"]
    grid = (list(np.geomspace(0.02, tmax, 24)) if scan else []) + [t for t in starts
                                                                    if t is not None and 0 < t <= tmax]

    def mis(t):
        with np.errstate(all="ignore"):
            r = U1 - step(t)
        return float(np.max(np.abs(r))) / scale if np.all(np.isfinite(r)) else math.inf

    best = min((mis(t), t) for t in grid)
    t = best[1]
    for _ in range(12):
        d = 1e-6 * max(t, 1e-3)
        with np.errstate(all="ignore"):
            r = U1 - step(t)
            J = (step(t + d) - step(t - d)) / (2.0 * d)
        jj = float(J @ J)
        if not (jj > 0 and np.all(np.isfinite(r))):
            break
        t_new = min(max(t + float(r @ J) / jj, 1e-6), tmax)
        if abs(t_new - t) <= 1e-15 * t:
            t = t_new
            break
        t = t_new
    return min(best, (mis(t), t))


def witness_fields(jobs: dict, h: float):
    """(D0, D1, ops, steps, k) for the witness on mesh h: the difference of the initial states
    (interior, (m-1) x (m-1)) and of the returned fields (interior, flattened), or a reason
    string when either run is unusable."""
    import numpy as np
    runs = (jobs.get(f"witness:{h:g}"), jobs.get(f"hidden:{h:g}"))
    for what, r in zip(("witness run", "hidden run"), runs):
        if r is None or r["status"] != "ok":
            return f"the {what} solve({h:g}, T, <hidden-family problem>) {_job_failure(r)}"
        if not np.all(np.isfinite(r["U"])):
            return f"the {what}'s field on h = {h:g} is not finite"
    m = mesh_m(h)
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pw, ph = _PROBLEMS["hidden_problem"](witness_draw()), _PROBLEMS["hidden_problem"](hidden_draw())
    D0 = (np.asarray(pw.u0(X, Y), dtype=float) - np.asarray(ph.u0(X, Y), dtype=float))[1:-1, 1:-1]
    D1 = (runs[0]["U"] - runs[1]["U"])[1:-1, 1:-1].ravel()
    T = _PROBLEMS["HIDDEN_T"]
    steps = max(1, int(round(T / h)))
    return D0, D1, witness_operators(m, h, ph.a, ph.b, ph.c), steps, T / steps


def witness_check(jobs: dict, theta_hint, meshes=None, found=None) -> list:
    """One record for the witness on every mesh of witness_h (`meshes`: those planned), coarsest
    first: FAIL when any mesh's difference is monolithic, else REVIEW when any is no member of the
    family (or disagrees with the recorder's theta, or is missing), else PASS (the worst mesh's
    record).  Only the coarsest mesh scans theta; the finer ones must be the same scheme with the
    same theta (Gauss-Newton from it), or else are tried against the monolithic map from phi = 1/2:
    an honest run costs a few evaluations per mesh, and a solver whose map changes with the mesh
    is caught on the mesh where it changes.  `found` (a dict): receives the matched scheme and theta
    (keys "scheme", "theta") when the coarsest mesh matched a member of the family."""
    hs = sorted(SPEC["witness_h"] if meshes is None else meshes, reverse=True)
    left = sorted({p for t, r in jobs.items() if t.startswith(("hidden:", "witness:"))
                   for p in (r.get("left") or ())})
    if left:        # shared writable areas (no mount namespace per job here), and not left clean
        return [Check("witness.adi_step", Status.REVIEW, "INCONCLUSIVE: the jobs shared their writable "
                      "areas here (the kernel gave no mount namespace per job) and files were left there "
                      f"that a later job could read ({', '.join(left[:5])}"
                      f"{' ...' if len(left) > 5 else ''}): the hidden and witness runs are not shown "
                      "independent, so their difference proves nothing; manual review")]
    first, pinned = _witness_one(jobs, theta_hint, hs[0], None)
    if pinned is not None and found is not None:
        found.update(scheme=pinned[0], theta=pinned[1])
    got = [first]
    if first.status is not Status.FAIL:
        got += [_witness_one(jobs, theta_hint, h, pinned or ("", None))[0] for h in hs[1:]]
    for st in (Status.FAIL, Status.REVIEW):
        bad = [c for c in got if c.status is st]
        if bad:
            return [bad[0]]
    worst = max(got, key=lambda c: c.measured)
    return [Check("witness.adi_step", Status.PASS, worst.message + (f" (worst of {len(got)} meshes)"
                                                                    if len(got) > 1 else ""),
                  worst.measured, worst.limit)]


def _witness_one(jobs: dict, theta_hint, h: float, pinned) -> tuple:
    """(record, (scheme, theta) when it matched) for the witness run minus the hidden run on mesh h
    against the grader's replays: PASS when it is N steps of a member of the family (to round-off),
    FAIL when it is N monolithic 2-D implicit steps, REVIEW when it is neither (or when the witness
    disagrees with the recorder's theta).  `pinned`: None on the first mesh (the recorder's theta,
    then a scan over theta); else the (scheme, theta) of the first mesh ("" when it matched none)."""
    import numpy as np
    cid = "witness.adi_step"
    got = witness_fields(jobs, h)
    if isinstance(got, str):
        return Check(cid, Status.REVIEW, f"INCONCLUSIVE: {got}; the second witness of ADI structure is "
                     "missing; manual review"), None
    D0, D1, ops, steps, k = got
    lim = SPEC["witness_rtol"]
    # (with zero data the two 1-D operators commute: x- or y-sweep first is the same map)
    scale = float(np.max(np.abs(D1))) or 1.0

    def fam_map(s):
        return lambda t: propagate(adi_map(s, t, ops, k), D0, steps)

    def at(s, t):
        return float(np.max(np.abs(D1 - fam_map(s)(t)))) / scale
    fam = []
    if pinned is not None:
        if pinned[0]:
            mis0 = at(*pinned)
            fam = [(mis0, pinned[1], pinned[0]) if mis0 <= lim else
                   fit_step(fam_map(pinned[0]), D1, [pinned[1]], scan=False) + (pinned[0],)]
    elif theta_hint is not None and 0 < theta_hint <= SPEC["witness_theta_max"]:
        # the recorder's theta (printed to 11 digits) first: an honest run matches at once (else
        # Gauss-Newton polishes it); the scan over theta is for the rest
        fam = sorted((at(s, theta_hint), theta_hint, s) for s in _WITNESS_SCHEMES)[:1]
        if fam[0][0] > lim:
            fam = [fit_step(fam_map(fam[0][2]), D1, [theta_hint], scan=False) + (fam[0][2],)]
    if pinned is None and (not fam or min(fam)[0] > lim):
        fam += [fit_step(fam_map(s), D1, [theta_hint]) + (s,) for s in _WITNESS_SCHEMES]
    mis, th, scheme = min(fam) if fam else (math.inf, math.nan, "none tried")

    def mono_map(phi):
        return propagate(monolithic_map(phi, ops, k), D0, steps)
    if mis <= lim:
        mono, phi = float(np.max(np.abs(D1 - mono_map(0.5)))) / scale, 0.5
    else:
        mono, phi = fit_step(mono_map, D1, [0.5], scan=pinned is None)
    what = (f"the witness run (a hidden-family draw, {steps} steps on h = {h:g}) minus the hidden run on "
            "the same mesh")
    if mis <= lim:
        if theta_hint is not None and abs(th - theta_hint) > 1e-6 * theta_hint:
            return Check(cid, Status.REVIEW, f"{what} is {scheme} with theta = {th:.8g} (mismatch {mis:.1e}), "
                         f"but the recorded solves imply theta = {theta_hint:.8g}: the two witnesses "
                         "disagree; manual review", mis, lim), None
        return Check(cid, Status.PASS, f"{what} equals the grader's own replay of {scheme}, theta = "
                     f"{th:.8g}, to {mis:.1e} (limit {lim:g}); the monolithic 2-D Crank-Nicolson map misses "
                     f"it by {mono:.1e}", mis, lim), (scheme, th)
    if mono <= lim:
        return Check(cid, Status.FAIL, f"{what} is {steps} monolithic 2-D implicit steps "
                     f"(I - phi k A) U1 = (I + (1 - phi) k A) U0 with phi = {phi:.6g} (mismatch {mono:.1e} <= "
                     f"{lim:g}), not ADI: the closest scheme of the family ({scheme}, theta = {th:.4g}) misses "
                     f"it by {mis:.1e}", mono, lim), None
    where = "" if pinned is None else " (the scheme and theta matched on the coarsest mesh)"
    return Check(cid, Status.REVIEW, f"{what} matches no scheme of the family{where} (closest: {scheme}, "
                 f"theta = {th:.4g}, off by {mis:.1e} > {lim:g}) and no monolithic 2-D map (off by {mono:.1e}): "
                 "not a member of the Craig-Sneyd family (or not the same map in both runs, or on every "
                 "mesh); manual review", mis, lim), None


# -- the benchmark step witness (ours): the graded runs themselves, independent of the recorder ----
# The hidden-family witness proves the solver's map on the hidden family; a solver that recognises
# the public benchmark (by its coefficients or data) could still grade with another method there.
# The benchmark's data are separable in time, f(t) = E(t) phi and g(t) = E(t) gamma with
# E(t) = exp(-3t), so for every scheme of the family -- whatever it does with f and g inside a step,
# as long as the step at t_n is the step at 0 shifted in time -- U_{n+1} = M U_n + E(t_n) d with the
# scheme's zero-data map M and one vector d.  The graded run's last step, U_N - M U_{N-1} = E(t_{N-1}) d,
# and an early step of the same trajectory, U_{a+1} - M U_a = E(t_a) d (a = SPEC["bench_step_anchor"]),
# carry the same d: with w = E(t_{N-1-a}), V_a = U_{N-1} - w U_a and V_b = U_N - w U_{a+1} satisfy
# V_b = M V_a.  The runs needed beside T = 1: one to (N - 1) h and two of a few steps (a h, (a + 1) h).
# The data drop out, and the residual (relative to max |U_N|) is round-off for the scheme that the
# hidden-family witness identified, on every benchmark mesh.
def benchmark_step_check(jobs: dict, found: dict, theta_hint) -> list:
    """witness.benchmark_step: on every benchmark mesh (coarsest first), V_b = M V_a for the scheme
    and theta the hidden-family witness matched (`found`; else every scheme of the family at the
    recorder's theta, REVIEW when none fits).  FAIL when a mesh misses it and the step is a monolithic
    2-D theta-step, or misses the witness's own scheme, or when the steps between the anchor and the
    last one are not the scheme's (_trajectory_mismatch); a step run that raised or returned a
    non-finite field is a FAIL; a fine mesh's step run not reached is Tier 3 unverified
    (tier3.benchmark_step, 0.5), like the finest runs themselves."""
    import numpy as np
    cid, lim, a = "witness.benchmark_step", SPEC["bench_step_rtol"], SPEC["bench_step_anchor"]
    pinned = (found or {}).get("scheme"), (found or {}).get("theta")
    if pinned[0]:
        cands = [pinned]
    elif theta_hint is not None and 0 < theta_hint <= SPEC["witness_theta_max"]:
        cands = [(s, theta_hint) for s in _WITNESS_SCHEMES]
    else:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: neither the hidden-family witness nor the recorded "
                      "solves name a scheme and theta to replay the benchmark's steps with; manual review")]
    runs_of = f"the runs to T = 1, (N - 1)h, {_steps_h(a)} and {_steps_h(a + 1)}"
    out, worst, fine_missing, vacuous, trails = [], None, [], None, 0.0
    for p in SPEC["coarse"] + SPEC["fine"]:
        h = h_value(p)
        m = mesh_m(h)
        steps = (m, m - 1, a, a + 1)          # U_N, U_{N-1}, U_a, U_{a+1}
        runs = [jobs.get(f"{t}:{p}") for t in ("bench", "bench-1", "bench-t1", "bench-t2")]
        if runs[0] is None or runs[0]["status"] != "ok" or not np.all(np.isfinite(runs[0]["U"])):
            continue                      # the T = 1 run itself: judged by provenance.regen / tier3.regen
        bad = [(j, r) for j, r in zip(steps[1:], runs[1:]) if r is None or r["status"] != "ok"
               or not np.all(np.isfinite(r["U"]))]
        if bad:
            j, r = ([b for b in bad if b[1] is not None] or bad)[0]
            why = _job_failure(r) if (r is None or r["status"] != "ok") else "returned a non-finite field"
            msg = f"solve({h:g}, T = {_steps_h(j)}) on the benchmark {why}"
            if p in SPEC["fine"] and r is None:     # not reached (time): unverified, like the fine runs;
                # one that raised or returned a non-finite field beside an ok T = 1 run on its mesh
                # chose to (its memory and time are at most the T = 1 run's): FAIL, as on the coarse meshes
                fine_missing.append(msg)
                continue
            return [Check(cid, Status.FAIL, f"{msg}: the benchmark's steps cannot be witnessed (solve(h, T) "
                          "must take N = T/h steps of k = h for any T)")]
        ops, k = _step_operators(p)
        w = _bench_decay((m - 1 - a) * k)
        UN, UN1, Ua, Ua1 = (_interior(r) for r in runs)
        Va, Vb = UN1 - w * Ua, UN - w * Ua1
        scale = float(np.max(np.abs(UN))) or 1.0
        fields = list(zip(("1",) + tuple(_steps_h(j) for j in steps[1:]), (UN, UN1, Ua, Ua1)))
        same = [(i, j) for n, (i, A) in enumerate(fields) for j, B in fields[n + 1:]     # (each pair to its
                if float(np.max(np.abs(A - B))) <= lim * max(float(np.max(np.abs(A))),    # own size: U_N may be
                                                             float(np.max(np.abs(B))))]    # far larger than U_1)
        if same:
            i, j = same[0]
            return [Check(cid, Status.FAIL, f"solve({h:g}, T) on the benchmark returns the same field for T = "
                          f"{i} and {j}: it ignores T (it must return the solution at "
                          "time T, N = T/h steps of k = h), so the benchmark's steps cannot be witnessed")]

        def mis(step):
            with np.errstate(all="ignore"):
                r = Vb - np.asarray(step(Va)).reshape(Vb.shape)
            return float(np.max(np.abs(r))) / scale if np.all(np.isfinite(r)) else math.inf
        defect = float(np.max(np.abs(Vb))) / scale
        if vacuous is None and defect <= SPEC["bench_step_min_defect"]:    # on any mesh (red team round 6:
            # on h = 0.1 alone, a separable field on the finer meshes beside ADI on h = 0.1 passed); the
            # other meshes still run
            vacuous = Check(cid, Status.REVIEW, f"on the benchmark mesh h = {h:g} the returned fields are separable "
                            f"in time to {defect:.1e} of max |U| (U(T) = exp(-3 T) W: V_b = U_N - w U_{a + 1} "
                            f"vanishes, limit {SPEC['bench_step_min_defect']:g}), which no scheme of the family is "
                            "on this mesh: the step witness is vacuous (a manufactured field?); manual review",
                            defect, SPEC["bench_step_min_defect"])
        def at(s, t):
            """(mismatch, s, theta, theta of the trajectory) with theta moved within its printed
            precision (relative bench_step_theta_rtol) to the least-squares best for this step (one
            Gauss-Newton step).  The trajectory below is replayed at the theta given when the step
            already matches there (to lim): that replay reads no T = 1 or (N - 1)h run, so ReplayAhead
            computed it while the run went on; else at the moved theta."""
            base = np.asarray(adi_map(s, t, ops, k)(Va))
            with np.errstate(all="ignore"):
                r0 = Vb - base.reshape(Vb.shape)
            keep = np.all(np.isfinite(r0)) and float(np.max(np.abs(r0))) / scale <= lim
            dt = 1e-7 * t
            J = (np.asarray(adi_map(s, t + dt, ops, k)(Va)) - base) / dt
            with np.errstate(all="ignore"):
                jj, rj = float(np.sum(J * J)), float(np.sum(r0 * J.reshape(Vb.shape)))
            move = rj / jj if jj > 0 and math.isfinite(rj / jj) else 0.0
            eps = SPEC["bench_step_theta_rtol"] * t
            moved = t + max(-eps, min(eps, move))
            return mis(adi_map(s, moved, ops, k)), s, moved, (t if keep else moved)
        got = min(at(s, t) for s, t in cands)
        if got[0] <= lim:
            # the steps between: U_{N-1} replayed from U_{a+1} by N - 2 - a steps of M, each with the
            # anchor's data term decayed (a solver that takes only the witnessed steps by ADI
            # and the others by another method misses it by the difference of the two methods)
            trail = _trajectory_mismatch(got[1], got[3], ops, k, Ua, Ua1, UN1, m - 2 - a) / scale
            if not trail <= SPEC["bench_traj_rtol"] and got[3] != got[2]:     # (at the witness's theta:
                # computed ahead; a miss there is judged at the theta polished for the last step, as
                # before: CS theta = 1/3 grows without bound and needs it on h = 0.00625)
                trail = _trajectory_mismatch(got[1], got[2], ops, k, Ua, Ua1, UN1, m - 2 - a) / scale
            if not trail <= SPEC["bench_traj_rtol"]:
                whose = ("the scheme the hidden-family witness identified" if pinned[0] else
                         "the scheme of the family that fits its last step at the recorded theta")
                return [Check(cid, Status.FAIL if pinned[0] else Status.REVIEW,
                              f"on the benchmark mesh h = {h:g}, the last step of solve(h) is a step of {got[1]}, "
                              f"theta = {got[2]:.8g}, but the steps before it are not: U_(N-1) replayed from the run "
                              f"to {_steps_h(a + 1)} by {m - 2 - a} steps of {whose} with the same data term misses "
                              f"the run to (N - 1)h by {trail:.1e} of max |U| (limit {SPEC['bench_traj_rtol']:g}): "
                              + ("only some of the benchmark's steps are the hidden family's scheme" if pinned[0]
                                 else "manual review"), trail, SPEC["bench_traj_rtol"])]
            trails = max(trails, trail)
            if worst is None or got[0] > worst[0]:
                worst = got[:3] + (h,)
            continue
        mono = mis(monolithic_map(0.5, ops, k))
        what = (f"on the benchmark mesh h = {h:g}, the last step of solve(h) (from {runs_of}, the "
                "time-separable data eliminated)")
        if mono <= lim:
            return [Check(cid, Status.FAIL, f"{what} is the monolithic 2-D Crank-Nicolson step (I - k/2 A) U1 = "
                          f"(I + k/2 A) U0 (mismatch {mono:.1e} <= {lim:g} of max |U|), not ADI: {got[1]}, theta = "
                          f"{got[2]:.6g} misses it by {got[0]:.1e}", got[0], lim)]
        whose = ("the scheme the hidden-family witness identified" if pinned[0] else
                 "any scheme of the family at the recorded theta")
        st = Status.FAIL if pinned[0] else Status.REVIEW
        return [Check(cid, st, f"{what} is not a step of {whose} ({got[1]}, theta = {got[2]:.8g}: off by "
                      f"{got[0]:.1e} > {lim:g} of max |U|; the monolithic Crank-Nicolson step: {mono:.1e})"
                      + (": the benchmark is solved by another method than the hidden family" if pinned[0]
                         else "; manual review"), got[0], lim)]
    if fine_missing:
        out.append(Check("tier3.benchmark_step", Status.FAIL, f"{fine_missing[0]}: the finest meshes' steps are "
                         "not witnessed (Tier 3 unverified)"))
    if vacuous is not None:
        return [vacuous] + out
    if worst is None:
        return out or [Check(cid, Status.SKIP, "no benchmark run to witness")]
    return [Check(cid, Status.PASS, f"the last step of every benchmark run (T = 1 against the run to (N - 1)h, "
                  f"its data term against the step from T = {_steps_h(a)} to {_steps_h(a + 1)}) is a step of "
                  f"{worst[1]}, theta = {worst[2]:.8g}: worst residual {worst[0]:.1e} of max |U| (h = {worst[3]:g}; "
                  f"limit {lim:g}); every step between is one too (U_(N-1) replayed from T = {_steps_h(a + 1)}: worst "
                  f"{trails:.1e}, limit {SPEC['bench_traj_rtol']:g})", worst[0], lim)] + out


def _trajectory_mismatch(scheme, theta, ops, k, Ua, Ua1, UN1, steps) -> float:
    """max |U_(N-1) - replay| (trajectory_replay); inf when the replay is not finite."""
    import numpy as np
    Z = trajectory_replay(scheme, theta, ops, k, Ua, Ua1, steps)
    with np.errstate(all="ignore"):
        r = float(np.max(np.abs(Z - UN1)))
    return r if math.isfinite(r) else math.inf


def trajectory_replay(scheme, theta, ops, k, Ua, Ua1, steps):
    """U_(N-1) replayed from U_(a+1) by `steps` steps of the scheme's zero-data map M, step j
    (j = 1 .. steps) adding E(j k) (U_(a+1) - M U_a): the trajectory between the anchor and the
    graded run's last step, were every step of it the scheme's (the data term of step a + j is the
    anchor's, decayed by E(j k)).  It reads no T = 1 or (N - 1)h run: ReplayAhead (EARLY RUN)
    computes it while those still run, kept in _REPLAYS by replay_key."""
    return _keyed_replay(scheme, theta, ops, k, Ua, Ua1, steps)[1]


def _keyed_replay(scheme, theta, ops, k, Ua, Ua1, steps) -> tuple:
    """(replay_key, the kept field): read back, or computed and kept."""
    key = replay_key(scheme, theta, ops, k, Ua, Ua1, steps)
    Z = _REPLAYS.get(key)
    if Z is None:
        Z = keep_replay(key, _replay(scheme, theta, ops, k, Ua, Ua1, steps))
    return key, Z


def _replay(scheme, theta, ops, k, Ua, Ua1, steps):
    import numpy as np
    M = adi_map(scheme, theta, ops, k, banded=True)
    D = Ua1 - M(Ua)
    Z = Ua1
    with np.errstate(all="ignore"):
        for j in range(1, steps + 1):
            Z = M(Z) + _bench_decay(j * k) * D
    return Z


# Replays already computed in this process, by the SHA-256 of every input of trajectory_replay
# (replay_key): the replay is a pure, deterministic function of them, so a field kept under the
# digest of the same inputs is the field it would compute; inputs that differ in any bit (another
# scheme, theta, anchor field) miss and are computed then.  ReplayAhead fills it from a forked
# copy of this process (the grader's own code on the run's authentic results, nothing else).
_REPLAYS = {}
_REPLAYS_MAX = 32                       # (a few per grading: the memory of a long --jobs run)


def replay_key(scheme, theta, ops, k, Ua, Ua1, steps) -> bytes:
    import hashlib
    import struct
    import numpy as np
    d = hashlib.sha256(repr((str(scheme), int(steps), int(ops["n"]))).encode())
    d.update(struct.pack("<5d", float(theta), float(k), float(ops["a"]), float(ops["b"]), float(ops["c"])))
    for A in (ops["D1"], ops["D2"], Ua, Ua1):
        A = np.asarray(A)
        d.update(repr((A.dtype.str, A.shape)).encode())
        d.update(np.ascontiguousarray(A).tobytes())
    return d.digest()


def keep_replay(key: bytes, Z):
    """Z kept under key as an owned, read-only copy (returned)."""
    import numpy as np
    Z = np.array(Z, dtype=float)
    Z.flags.writeable = False
    if len(_REPLAYS) >= _REPLAYS_MAX:
        _REPLAYS.clear()
    _REPLAYS[key] = Z
    return Z


def _step_operators(p):
    """(ops, k) of the step witness on benchmark mesh p (benchmark_step_check and ReplayAhead alike)."""
    h = h_value(p)
    m = mesh_m(h)
    return witness_operators(m, h, *(float(getattr(_bench_problem(), c)) for c in "abc")), 1.0 / m


def _interior(r):
    import numpy as np
    return np.asarray(r["U"], dtype=float)[1:-1, 1:-1]


def replays_ahead(jobs: dict):
    """(replay_key, field) of each trajectory replay benchmark_step_check reads when each mesh's last
    step matches the scheme and theta the hidden-family witness pins on its coarsest mesh (at() keeps
    that theta), as each is computed, the finest mesh first: from the witness pair and each mesh's
    anchor runs (T = a h, (a + 1) h) alone.  None when the witness pins nothing.  The results given may
    be partial (the run still going on): a theta or field that differs later only makes the check
    compute its own."""
    theta_hint = submission_theta(jobs)
    _, pinned = _witness_one(jobs, theta_hint, max(SPEC["witness_h"]), None)
    if pinned is None or not pinned[0]:
        return
    a = SPEC["bench_step_anchor"]
    for p in sorted(SPEC["coarse"] + SPEC["fine"], reverse=True):
        runs = [jobs.get(f"{t}:{p}") for t in ("bench-t1", "bench-t2")]
        if any(r is None or r["status"] != "ok" or not _finite(r["U"]) for r in runs):
            continue
        ops, k = _step_operators(p)
        Ua, Ua1 = (_interior(r) for r in runs)
        steps = mesh_m(h_value(p)) - 2 - a
        yield _keyed_replay(pinned[0], pinned[1], ops, k, Ua, Ua1, steps)


def _finite(U) -> bool:
    import numpy as np
    return bool(np.all(np.isfinite(U)))


def _steps_h(j: int) -> str:
    """T = j h as the messages write it (j = N: T = 1)."""
    return "h" if j == 1 else f"{j}h"


def _bench_problem():
    return _PROBLEMS["benchmark_problem"]()


def _bench_decay(k: float) -> float:
    """E(k) = u(t + k) / u(t) of the benchmark's time-separable solution (exp(-3 k)), read off the
    problem definition itself (a point where u does not vanish)."""
    ex = _PROBLEMS["benchmark_exact"]
    return float(ex(0.5, 0.5, k) / ex(0.5, 0.5, 0.0))


def _not_evidence(cid: str, count: int, what: str, log, theta):
    """A changed field proves the data path only when the spoiled solves include the
    submission's ADI operators (the driver spoils every ADI-shaped solve; the submission's
    theta is known only afterwards): otherwise REVIEW, not PASS."""
    if theta is not None and adi_counted(log, theta, both=False) > 0:
        return None
    return Check(cid, Status.REVIEW, f"INCONCLUSIVE: {count} solve result(s) spoiled and {what}, but none "
                 "of them is an ADI operator I - theta k kappa D2 with the theta of the clean runs (not "
                 "evidence); manual review")


def _one_perturbed(cid: str, clean, perturbed, outcome, theta=None) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if perturbed is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under perturbed "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = _log_int(perturbed["log"], "poisoned")
    if count == 0:
        return [Check(cid, Status.SKIP, "no ADI-operator solve to perturb (see audit.causal)")]
    eps = SPEC["perturb_rel"]
    if perturbed["status"] != "ok":
        return [Check(cid, Status.REVIEW, f"{count} solve result(s) scaled by 1 + O({eps:g}): solve() "
                      f"raised ({perturbed['error'][:80]}), which a genuine ADI data path does not do "
                      "(a solver that inspects its solve results?); manual review")]
    U = perturbed["U"]
    if not np.all(np.isfinite(U)):
        return [Check(cid, Status.REVIEW, f"{count} solve result(s) scaled by 1 + O({eps:g}): the field "
                      "became non-finite, which a genuine ADI data path does not do; manual review")]
    diff = float(np.max(np.abs(U - clean["U"])))
    if diff <= SPEC["audit_atol"]:
        return [Check(cid, Status.FAIL, f"{count} solve result(s) scaled by 1 + O({eps:g}), yet the "
                      f"returned field is unchanged (max |diff| {diff:.1e} <= {SPEC['audit_atol']:g}, rtol "
                      "0): the observed solves do not produce the result (discarded sweeps?)", diff,
                      SPEC["audit_atol"])]
    weak = _not_evidence(cid, count, "the field changed", perturbed["log"], theta)
    if weak is not None:
        return [weak]
    return [Check(cid, Status.PASS, f"{count} solve result(s) scaled by 1 + O({eps:g}): the field "
                  f"changed (max |diff| {diff:.2e})", diff, SPEC["audit_atol"])]


def _against_clean_run(jobs: dict, cid: str, tag: str, call: str, rtol: float) -> list:
    """The job `tag` must reproduce the clean benchmark h = 0.1 run pointwise."""
    h = h_value(0)
    clean, other = jobs.get("bench:0"), jobs.get(f"{tag}:{h:g}")
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean benchmark run to compare with")]
    if other is None or other["status"] != "ok":
        return [Check(cid, Status.FAIL, f"{call.format(h=h)}: {_job_failure(other)}")]
    return [compare_arrays(cid, f"solve({h:g}) vs {call.format(h=h)}", other["U"], clean["U"],
                           rtol=rtol, atol=SPEC["field_atol"])]


def determinism_check(jobs: dict) -> list:
    """A repeat of the clean benchmark h = 0.1 run must reproduce it pointwise
    (the field tolerances): otherwise "changed under poisoning" proves nothing,
    as a solver could add run-to-run jitter to every answer (ours)."""
    return _against_clean_run(jobs, "provenance.deterministic", "repeat", "the repeated solve({h:g})",
                              SPEC["field_rtol"])


def interface_check(jobs: dict) -> list:
    """problem=None must mean the benchmark problem: solve(0.1) equals
    solve(0.1, 1.0, <the benchmark as a problem object>) pointwise (ours)."""
    return _against_clean_run(jobs, "provenance.problem_interface", "iface",
                              "solve({h:g}, 1.0, <benchmark problem object>)", SPEC["iface_rtol"])


def _one_audit(cid: str, clean, poisoned, outcome, theta=None) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if poisoned is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under poisoned "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = _log_int(poisoned["log"], "poisoned")
    if count == 0:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: no ADI-operator solve to poison "
                      "(hand-written solver, or only other systems solved?); manual review")]
    if poisoned["status"] != "ok":
        return [_not_evidence(cid, count, "solve() raised", poisoned["log"], theta) or
                Check(cid, Status.PASS, f"{count} solve(s) poisoned: solve() raised "
                      f"({poisoned['error'][:80]}): the observed solves feed the result")]
    U = poisoned["U"]
    if not np.all(np.isfinite(U)):
        return [_not_evidence(cid, count, "the field became non-finite", poisoned["log"], theta) or
                Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field became non-finite")]
    diff = float(np.max(np.abs(U - clean["U"])))
    if diff <= SPEC["audit_atol"]:
        return [Check(cid, Status.FAIL, f"{count} solve(s) poisoned with NaN, yet the returned field is "
                      f"finite and unchanged (max |diff| {diff:.1e} <= {SPEC['audit_atol']:g}, rtol 0): "
                      "the observed solves do not produce the result", diff, SPEC["audit_atol"])]
    return [_not_evidence(cid, count, "the field changed", poisoned["log"], theta) or
            Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field changed (max |diff| "
                  f"{diff:.2e})", diff, SPEC["audit_atol"])]


def _log_int(log, key: str) -> int:
    v = log.get(key, 0) if isinstance(log, dict) else 0
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else 0


def _theta_items(log) -> list:
    """[(theta_x, theta_y, count)] of a run's ADI-operator solves (decoded defensively)."""
    items = []
    thetas = log.get("thetas") if isinstance(log, dict) else None
    for key, cnt in (thetas.items() if isinstance(thetas, dict) else ()):
        try:
            tx, ty = (float(v) for v in str(key).split("|"))
            cnt = int(cnt)
        except (TypeError, ValueError):
            continue
        if math.isfinite(tx) and math.isfinite(ty) and cnt > 0:
            items.append((tx, ty, cnt))
    return items


def _matches(items, theta, both: bool = False) -> int:
    """Solves whose implied theta (for kappa = a or c) is `theta`; with `both`, zero unless
    some of them are x-line and some y-line operators (an ADI step solves in both directions;
    one system whose theta happens to match at two meshes, e.g. r h / a = r (h/2) / c on the
    benchmark where a = 2c, does not)."""
    rtol = SPEC["adi_theta_rtol"]
    close = lambda v: abs(v - theta) <= rtol * theta     # noqa: E731
    n = sum(c for tx, ty, c in items if close(tx) or close(ty))
    if both and not (any(close(tx) for tx, _, _ in items) and any(close(ty) for _, ty, _ in items)):
        return 0
    return n


def _clean_runs(jobs: dict) -> list:
    """The benchmark and hidden runs (not the audits, the interface check or the repeat), in plan order."""
    return [t for t in sorted(jobs, key=tag_order)
            if not t.startswith(("audit", "perturb", "iface", "repeat", "witness", "bench-"))]


def submission_theta(jobs: dict):
    """The submission's own theta: the value > 0 (for kappa = a or c) shared by the ADI-shaped
    solves of the most clean runs (then of the most solves).  A theta that changes with the mesh
    or the problem (an unrelated tridiagonal system, e.g. tridiag(-1, 4, -1)) is not the scheme's."""
    per_run = [_theta_items(jobs[t].get("log")) for t in _clean_runs(jobs)]
    best = ((0, 0), None)
    for cand in sorted({v for items in per_run for tx, ty, _ in items for v in (tx, ty) if v > 0}):
        hits = [_matches(items, cand, both=True) for items in per_run]
        score = (sum(1 for n in hits if n), sum(hits))
        if score > best[0]:
            best = (score, cand)
    return best[1]


def adi_counted(log, theta, both: bool = True) -> int:
    """Counted solves of one run: those whose matrix is the ADI operator I - theta k kappa D2
    (kappa = a or c of the problem solved) for the submission's theta, x- and y-line operators
    both present (`both`; an audited run, cut short by its poison, needs one); the rest are
    not evidence."""
    return _matches(_theta_items(log), theta, both) if theta is not None else 0


_TAG_ORDER = ("import", "bench", "bench-1", "bench-t1", "bench-t2", "hidden", "audit", "auditbench", "perturb", "perturbbench", "iface", "repeat",
              "witness")


def tag_order(tag: str) -> tuple:
    """A fixed order of job tags (plan order, not the random run order): stable reports."""
    kind, _, v = str(tag).partition(":")
    rank = _TAG_ORDER.index(kind) if kind in _TAG_ORDER else len(_TAG_ORDER)
    try:
        num = int(v) if kind in ("bench", "bench-1", "bench-t1", "bench-t2") else -float(v)
    except ValueError:
        num = 0
    return rank, num, str(tag)


def structure_checks(jobs: dict, violations: list, ready: dict) -> list:
    """Dimension <= 2(m+1) and half-bandwidth <= 1 for every observed solve (nested ones:
    the dimension), no problem-sized transform / eigen-decomposition / matrix function;
    per-mesh REVIEW when a mesh shows no solve that is an ADI operator of its problem."""
    out = []
    tamper = sorted((v for v in violations if v.get("kind") == "tamper"), key=lambda v: tag_order(v.get("job")))
    if tamper:
        what = sorted({str(w) for v in tamper for w in (v.get("what") or [])})
        out.append(Check("structure.instrumentation", Status.FAIL,
                         f"the submission altered the grader's instrumentation ({_job_label(str(tamper[0].get('job')))}"
                         f": {', '.join(what[:5])})", what))
    forged = [v for v in violations if v.get("kind") == "forged_result"]
    if forged:
        out.append(Check("structure.result_channel", Status.FAIL,
                         f"the submission wrote on the driver's result channel ({str(forged[0].get('why'))[:80]}: "
                         f"the run {_job_label(str(forged[0].get('tag')))}, the child of "
                         f"{_job_label(str(forged[0].get('job')))}; {len(forged)} such): what it wrote is not read"))
    lim_of = lambda v: SPEC["dim_factor"] * (v["m"] + 1)   # noqa: E731
    violations_ = violations
    violations = [v for v in violations_ if v.get("kind", "violation") == "violation"]
    sized = [v for v in violations if isinstance(v.get("dim"), int) and isinstance(v.get("m"), int)
             and v["dim"] > lim_of(v)]
    dims = [v for v in sized if v.get("route", "solve") != "spectral"]
    routes = [v for v in sized if v.get("route") == "spectral"]
    wide = [v for v in violations if isinstance(v.get("hb"), int) and v["hb"] > SPEC["max_half_bandwidth"]
            and v.get("route", "solve") != "spectral" and not v.get("nested")]

    def first(offences):    # the coarsest mesh's: the report must not depend on the random run order
        return min(offences, key=lambda v: (v["m"] if isinstance(v.get("m"), int) else 0,
                                            tag_order(str(v.get("job"))), str(v.get("fn"))))

    if dims:    # the first offence is reported, with how many runs offended
        v = first(dims)
        runs = len({str(w["job"]) for w in dims})
        lim = lim_of(v)
        where = " (nested inside another call)" if v.get("nested") else ""
        out.append(Check("structure.dimension", Status.FAIL,
                         f"{v['fn']} solved a system of dimension {v['dim']} on the m = {v['m']} grid "
                         f"({_job_label(str(v['job']))}){where}; limit {SPEC['dim_factor']}(m+1) = {lim}: "
                         f"not a 1-D sweep ({runs} run(s) offend)", v["dim"], lim))
    if routes:
        v = first(routes)
        runs = len({str(w["job"]) for w in routes})
        lim = lim_of(v)
        out.append(Check("structure.monolithic_route", Status.FAIL,
                         f"{v['fn']} worked on {v['dim']} unknowns at once on the m = {v['m']} grid "
                         f"({_job_label(str(v['job']))}); limit {SPEC['dim_factor']}(m+1) = {lim}: a "
                         "problem-sized transform, eigen-decomposition or matrix function is a "
                         f"monolithic 2-D solve ({runs} run(s) offend)", v["dim"], lim))
    if wide:
        v = first(wide)
        runs = len({str(w["job"]) for w in wide})
        out.append(Check("structure.bandwidth", Status.FAIL,
                         f"{v['fn']} solved a system of half-bandwidth {v['hb']} (dimension {v['dim']}, "
                         f"{_job_label(str(v['job']))}); limit {SPEC['max_half_bandwidth']}: not "
                         f"tridiagonal ({runs} run(s) offend)", v["hb"], SPEC["max_half_bandwidth"]))
    out += recorder_checks(jobs, violations_)
    done = {t: jobs[t] for t in _clean_runs(jobs)}
    total = sum(_log_int(r["log"], "count") for r in done.values())
    nested = sum(_log_int(r["log"], "nested") for r in done.values())
    if not dims:
        mx = max([_log_int(r["log"], "max_dim") for r in done.values()] or [0])
        out.append(Check("structure.dimension", Status.PASS,
                         f"{total} observed solves (+{nested} nested inside them), largest dimension {mx} "
                         f"(<= {SPEC['dim_factor']}(m+1) on every mesh)"))
    if not wide:
        mx = max([_log_int(r["log"], "max_hb") for r in done.values()] or [0])
        out.append(Check("structure.bandwidth", Status.PASS, f"largest observed half-bandwidth {mx}"))
    unknown = sum(_log_int(r["log"], "unknown_hb") for r in done.values())
    if unknown:
        out.append(Check("structure.unknown_bandwidth", Status.REVIEW,
                         f"{unknown} solve(s) whose half-bandwidth could not be measured"))
    used = {}
    for t in sorted(jobs, key=tag_order):
        rt = jobs[t]["log"].get("routes") if isinstance(jobs[t]["log"], dict) else None
        for fn, slot in (rt.items() if isinstance(rt, dict) else ()):
            if isinstance(slot, list) and len(slot) >= 3 and slot[2] and fn not in used:
                used[fn] = _job_label(t)
    if used and not routes:
        out.append(Check("structure.spectral_route", Status.REVIEW,
                         "transform / eigen-decomposition / matrix-function route(s) used, which an ADI "
                         "solver does not need and which can carry an implicit solve the solve audit "
                         "does not see: " + ", ".join(f"{fn} ({w})" for fn, w in sorted(used.items())[:6])
                         + "; manual review", sorted(used)))
    theta = submission_theta(jobs)
    counted = {t: adi_counted(r["log"], theta) for t, r in done.items()}
    seen = [t for t in done if counted[t] > 0]
    blind = [t for t in done if counted[t] == 0]
    for t in blind:
        name = _job_label(t)
        n = _log_int(done[t]["log"], "count")
        what = (f"{n} observed solve(s), none an ADI operator I - theta k kappa D2 of this problem along "
                "grid lines with the theta of the other runs (an identity or unrelated system is not "
                "evidence)" if n else
                "zero observable solves")
        if seen:
            msg = (f"{name}: {what} while {', '.join(_job_label(s) for s in seen)} made "
                   "some: the hybrid-evasion pattern (instrumented path on some meshes, an "
                   "uninstrumented one on others); manual review")
        else:
            msg = f"{name}: {what} (hand-written Thomas solver?); manual review"
        out.append(Check(f"structure.unobserved[{name}]", Status.REVIEW, msg))
    if seen:
        ncount = sum(counted.values())
        out.append(Check("structure.adi_operator", Status.PASS if not blind else Status.INFO,
                         f"{ncount} of {total} observed solves are ADI operators I - theta k kappa D2 of "
                         f"the problem solved, theta = {theta:.6g} on every mesh and both problems; the "
                         "causal audits poison only ADI-operator solves", theta, ncount))
    return out


def _first_event(violations: list, kind: str):
    evs = [v for v in violations if v.get("kind") == kind]
    return (min(evs, key=lambda v: (tag_order(str(v.get("job"))), str(v.get("fn")))), len(evs)) if evs else (None, 0)


def recorder_checks(jobs: dict, violations: list) -> list:
    """What the in-process recorder proved about each recorded call: the operands were the
    recorder's own (an operand it cannot own is a FAIL), every factor was used with the content
    it was produced with, and every recorded solve satisfies its own recorded system to
    round-off (a library that computed anything else is a FAIL naming the call)."""
    out = []
    v, n = _first_event(violations, "unreadable")
    if v is not None:
        out.append(Check("structure.operand", Status.FAIL,
                         f"{v.get('fn')} was handed an operand the recorder cannot own ({str(v.get('why'))[:120]}; "
                         f"{_job_label(str(v.get('job')))}): the call was refused ({n} call site(s))"))
    v, n = _first_event(violations, "factor")
    if v is not None:
        out.append(Check("structure.factor_changed", Status.FAIL,
                         f"{v.get('fn')} was handed a factor whose content changed after the observed "
                         f"factorisation produced it ({_job_label(str(v.get('job')))}; {n} call site(s)): "
                         "what is solved is no longer what was recorded"))
    v, n = _first_event(violations, "residual")
    lim = SPEC["resid_rtol"]
    if v is not None:
        ratio = v.get("ratio")
        out.append(Check("structure.solve_residual", Status.FAIL,
                         f"{v.get('fn')} returned a result that does not solve the system the recorder recorded "
                         f"(|A x - b| / (|A| |x| + |b|) = {ratio if isinstance(ratio, (int, float)) else float('nan'):.1e}"
                         f" > {v.get('limit')}; {_job_label(str(v.get('job')))}; {n} call site(s)): the "
                         "library computed something other than what it was shown", ratio, v.get("limit")))
    else:
        runs = [jobs[t]["log"] for t in sorted(jobs, key=tag_order)]
        checked = sum(_log_int(lg, "checked") for lg in runs)
        worst = max([float(lg["max_resid"]) for lg in runs if isinstance(lg.get("max_resid"), (int, float))
                     and math.isfinite(lg["max_resid"])] or [0.0])
        if checked:
            out.append(Check("structure.solve_residual", Status.PASS,
                             f"{checked} recorded solves checked against their own recorded operands: worst "
                             f"|A x - b| / (|A| |x| + |b|) = {worst:.1e} (limit {lim:g})", worst, lim))
    return out


def _job_label(tag: str) -> str:
    kind, _, v = tag.partition(":")
    if kind == "import":
        return "at import"
    if kind == "bench" and v.isdigit():
        return f"benchmark {mesh_tag(h_value(int(v)))}"
    if kind == "bench-1" and v.isdigit():
        return f"benchmark {mesh_tag(h_value(int(v)))} to T = (N - 1)h"
    if kind in ("bench-t1", "bench-t2") and v.isdigit():
        return f"benchmark {mesh_tag(h_value(int(v)))} to T = {_steps_h(SPEC['bench_step_anchor'] + int(kind[-1]) - 1)}"
    if kind == "auditbench":
        return f"audit benchmark h={v}"
    return f"{kind} h={v}"


