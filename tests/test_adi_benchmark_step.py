"""The benchmark step witness (issue 21, round 5): the hidden-family witness proves the solver's
map on the hidden family only, so a solver that recognises the public benchmark could grade with
another method there.  The benchmark's data are separable in time (f, g = exp(-3t) times a fixed
field), so for any scheme of the family U_{n+1} = M U_n + E^n d; from the runs to T = 1, (N-1)h, h and
2h (anchor a = 1), with w = E^(N-2), V_a = U_{N-1} - w U_1 and V_b = U_N - w U_2 satisfy V_b = M V_a
with the scheme's zero-data map M (the last step's data term is the first steps' one, decayed).
In-process: the survey's variants are called directly (no recorder involved)."""
import math

import numpy as np
import pytest

from test_adi_support import survey, grader

COARSE = (0, 1, 2)


def step_jobs(solve, ps=COARSE):
    """bench:p, bench-1:p, bench-t1:p, bench-t2:p as the driver would return them, made in-process."""
    G = grader()
    out = {}
    for job in [{"tag": f"bench:{p}", "h": G.h_value(p)} for p in ps] + G.step_jobs(ps):
        X, Y, U = solve(job["h"], job.get("T", 1.0), None)
        out[job["tag"]] = {"status": "ok", "U": np.asarray(U, dtype=float), "error": ""}
    return out


def test_the_benchmark_data_are_separable_in_time():
    """The check's premise: f(t + s) = E(s) f(t) and u(t + s) = E(s) u(t) (so g too), E = exp(-3s)."""
    G = grader()
    pb = G._PROBLEMS["benchmark_problem"]()
    x = np.linspace(0.0, 1.0, 11)
    X, Y = np.meshgrid(x, x, indexing="ij")
    for t, s in ((0.0, 0.1), (0.37, 0.025), (0.9, 0.1)):
        E = G._bench_decay(s)
        assert E == pytest.approx(math.exp(-3.0 * s), rel=1e-14)
        assert np.allclose(pb.f(X, Y, t + s), E * pb.f(X, Y, t), rtol=1e-13, atol=1e-15)
        assert np.allclose(pb.g(X, Y, t + s), E * pb.g(X, Y, t), rtol=1e-13, atol=1e-17)


def test_step_runs_take_exactly_their_steps_of_h():
    """Per mesh one near-full run (N - 1 steps) and two short ones (a, a + 1 steps, a = 1); the fine
    meshes' runs after every coarse job, the finest mesh's run to (N - 1)h first of them."""
    G = grader()
    a = G.SPEC["bench_step_anchor"]
    assert a == 1
    jobs = G.step_jobs(range(5))
    assert len(jobs) == 15
    for job in jobs:
        kind = job["tag"].split(":")[0]
        n = {"bench-1": G.mesh_m(job["h"]) - 1, "bench-t1": a, "bench-t2": a + 1}[kind]
        assert job["T"] / job["h"] == n and int(job["T"] / job["h"]) == n and job["T"] / n == job["h"]
    plan = G.plan_jobs()
    tags = G.job_tags(plan)
    steps = [f"{k}:{p}" for p in range(5) for k in ("bench-1", "bench-t1", "bench-t2")]
    assert sorted(t for t in tags if t.startswith("bench-")) == sorted(steps)
    fine_tags = steps[9:] + ["bench:3"]
    fine = [i for i, t in enumerate(tags) if t in fine_tags]
    coarse = [i for i, t in enumerate(tags) if t not in fine_tags + ["bench:4"]]
    assert min(fine) > max(coarse)                          # the fine step runs after every coarse job
    assert tags[0] == "bench:4" and tags[max(coarse) + 1] == "bench-1:4"
    # one forked child per mesh for its short step runs (a child costs ~10-20 ms, the runs a few):
    # on a coarse mesh all three, on a fine one the two anchors (its run to (N - 1)h is a long job
    # of its own, sorted among the fine runs); each run keeps its own tag, T and message
    batched = {j["tag"]: [r["tag"] for r in j.get("then") or ()] for j in plan if j.get("then")}
    assert batched == {**{f"bench-1:{p}": [f"bench-t1:{p}", f"bench-t2:{p}"] for p in (0, 1, 2)},
                       **{f"bench-t1:{p}": [f"bench-t2:{p}"] for p in (3, 4)}}
    for j in plan:
        for r in j.get("then") or ():
            assert set(r) == {"tag", "T"} and r["T"] / j["h"] == {"bench-t1": a, "bench-t2": a + 1}[r["tag"][:8]]


@pytest.mark.parametrize("pinned", [True, False], ids=["witness_scheme", "recorder_theta"])
def test_every_family_row_of_the_survey_passes(pinned):
    """Every scheme of the survey (Douglas, CS, MCS, HV, theta from 1/3 to 20), pinned by the
    hidden-family witness or found at the recorder's theta; measured worst 6.0e-15 on h = 0.025,
    9.8e-15 on h = 0.0125 and 3.0e-14 on h = 0.00625 (MCS theta = 20; reference/adi/problem_spec.md),
    limit 1e-10."""
    G = grader()
    worst = 0.0
    for label, scheme, theta, mixed, _ in survey().ROWS:
        if not mixed:
            continue
        mod = survey().load_variant(scheme, theta, mixed)
        found = {"scheme": scheme, "theta": theta} if pinned else {}
        c = G.benchmark_step_check(step_jobs(mod.solve), found, theta)
        assert [x.status for x in c] == [G.Status.PASS], (label, [x.message for x in c])
        assert f"{scheme}, theta = {theta:.8g}" in c[0].message or not pinned, (label, c[0].message)
        worst = max(worst, c[0].measured)
    assert worst < 1e-3 * G.SPEC["bench_step_rtol"], worst


@pytest.mark.parametrize("label", ["MCS θ=1/3", "HV θ=1/2+√3/6", "CS θ=1/3"])
def test_theta_as_recorded_passes_on_every_mesh(label):
    """Through the grader the scheme's theta is the recorder's, printed to 11 digits; V_a is not small
    (max |V_a| up to ~max |U|), so a 5e-11 error in theta showed (1.3e-13 of max |U|, HV theta = 0.79,
    h = 0.1): the replay moves theta within bench_step_theta_rtol of the named one (round-off again).
    CS theta = 1/3 grows without bound on the fine meshes: its short runs are compared with each other
    at their own size, not max |U_N| (they read as 'the same field' before)."""
    G = grader()
    row = {r[0]: r for r in survey().ROWS}[label]
    theta = float(f"{row[2]:.10e}")
    assert theta != row[2]
    mod = survey().load_variant(row[1], row[2], row[3])
    c = G.benchmark_step_check(step_jobs(mod.solve, range(5)), {"scheme": row[1], "theta": theta}, theta)
    assert [x.status for x in c] == [G.Status.PASS], [x.message for x in c]
    assert c[0].measured < 1e-4 * c[0].limit, c[0].message


def _cn_solver():
    """A Crank-Nicolson solver on the full 2-D operator (a dense solve: the recorder is not involved)."""
    from scipy.linalg import lu_factor, lu_solve
    G = grader()
    pb0 = G._PROBLEMS["benchmark_problem"]()

    def solve(h, T=1.0, problem=None):
        pb = pb0 if problem is None else problem
        m = int(round(1.0 / h))
        x = np.linspace(0.0, 1.0, m + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        N = int(round(T / h))
        k = T / N
        ops = G.witness_operators(m, h, pb.a, pb.b, pb.c)
        n = m - 1
        eye = np.eye(n)
        A = (pb.a * np.kron(ops["D2"], eye) + pb.c * np.kron(eye, ops["D2"])
             + pb.b * np.kron(ops["D1"], ops["D1"]))
        lu = lu_factor(np.eye(n * n) - 0.5 * k * A)
        U = np.asarray(pb.u0(X, Y), dtype=float)
        for s in range(N):          # the benchmark's boundary data vanish: the interior alone
            f = 0.5 * (pb.f(X, Y, s * k) + pb.f(X, Y, (s + 1) * k))[1:-1, 1:-1].ravel()
            V = U[1:-1, 1:-1].ravel()
            U = np.zeros_like(U)
            U[1:-1, 1:-1] = lu_solve(lu, V + 0.5 * k * (A @ V) + k * f).reshape(n, n)
        return X, Y, U
    return solve


def test_crank_nicolson_is_identified_as_monolithic():
    G = grader()
    c = G.benchmark_step_check(step_jobs(_cn_solver(), (0,)), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]
    assert "monolithic 2-D Crank-Nicolson step" in c[0].message
    assert c[0].measured > 1e6 * c[0].limit, c[0].message        # MCS misses it by 3.0e-3


def test_a_different_method_on_the_graded_call_only_fails_or_is_reviewed():
    """CN on the T = 1 run, MCS on the step runs: FAIL when the witness pinned the scheme, REVIEW
    when only the recorder's theta names it."""
    G = grader()
    mcs, cn = survey().load_variant("MCS", 1 / 3, True).solve, _cn_solver()

    def solve(h, T=1.0, problem=None):
        return (cn if abs(T - 1.0) < 1e-12 else mcs)(h, T, problem)
    jobs = step_jobs(solve, (0,))
    c = G.benchmark_step_check(jobs, {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]
    assert "another method than the hidden family" in c[0].message
    c = G.benchmark_step_check(jobs, {}, 1 / 3)
    assert [x.status for x in c] == [G.Status.REVIEW], [x.message for x in c]


def test_the_wrong_theta_is_not_a_pass():
    """The witness's theta matters: MCS theta = 1/2 replayed as MCS theta = 1/3 misses."""
    G = grader()
    mod = survey().load_variant("MCS", 1 / 2, True)
    c = G.benchmark_step_check(step_jobs(mod.solve, (0,)), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert c[0].status is G.Status.FAIL, c[0].message


def test_missing_step_runs():
    """A coarse step run that raised: FAIL; a fine one not reached: Tier 3 unverified; no scheme: REVIEW."""
    G = grader()
    mcs = survey().load_variant("MCS", 1 / 3, True).solve
    jobs = step_jobs(mcs, (0,))
    broken = dict(jobs, **{"bench-t2:0": {"status": "error", "error": "ValueError: T must be 1", "U": None}})
    c = G.benchmark_step_check(broken, {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL] and "T must be 1" in c[0].message, c[0].message
    fine = dict(jobs, **{"bench:3": jobs["bench:0"]})         # a stand-in T = 1 run on h = 0.0125
    c = G.benchmark_step_check(fine, {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [(x.id, x.status) for x in c] == [("witness.benchmark_step", G.Status.PASS),
                                             ("tier3.benchmark_step", G.Status.FAIL)], [x.message for x in c]
    assert "not reached" in c[1].message
    c = G.benchmark_step_check(jobs, {}, None)
    assert [x.status for x in c] == [G.Status.REVIEW]
    assert G.benchmark_step_check({}, {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)[0].status is G.Status.SKIP


def _doctored_solver():
    """The residual the step witness leaves open: Crank-Nicolson on the graded call (T = 1), MCS on
    the runs to (N - 1)h and h, and for the run to 2h the field that makes the last step an MCS step
    with the first steps' data term: U_2 = (U_N - M (U_{N-1} - w U_1)) / w, w = E^(N-2) (V_b = M V_a by
    construction; one application of the solver's own zero-data MCS step, no inverse needed)."""
    G = grader()
    mcs, cn = survey().load_variant("MCS", 1 / 3, True).solve, _cn_solver()

    def solve(h, T=1.0, problem=None):
        if problem is not None or abs(T - 1.0) < 1e-12:
            return (mcs if problem is not None else cn)(h, T, problem)
        m = int(round(1.0 / h))
        if int(round(T / h)) != 2:
            return mcs(h, T, problem)
        X, Y, UN = cn(h, 1.0, None)
        UN1, U1 = mcs(h, (m - 1) * h, None)[2], mcs(h, h, None)[2]
        w = math.exp(-3.0 * (m - 2) * h)
        M = G.adi_map("MCS", 1 / 3, G.witness_operators(m, h, 1.0, 0.8, 0.5), h)
        U = U1.copy()
        U[1:-1, 1:-1] = (UN[1:-1, 1:-1] - M((UN1 - w * U1)[1:-1, 1:-1])) / w
        return X, Y, U
    return solve


def _doctored_trajectory_solver():
    """The residual done in full (round 6: doctoring U_2 alone no longer passes, the steps between are
    replayed): Crank-Nicolson on the graded call, and for every run to T = jh < 1 the j-th field of
    an MCS trajectory from u0 whose source vector d* is chosen so that its N-th field is the CN field
    (S d* = U_N(CN) - M^N u0, S = sum_n E(t_n) M^(N-1-n), solved densely on h = 0.1)."""
    G = grader()
    mcs, cn = survey().load_variant("MCS", 1 / 3, True).solve, _cn_solver()
    memo = {}

    def trajectory(h):
        if h not in memo:
            m = int(round(1.0 / h))
            n = m - 1
            M = G.adi_map("MCS", 1 / 3, G.witness_operators(m, h, 1.0, 0.8, 0.5), h)
            X, Y, UN = cn(h, 1.0, None)
            U0 = G._PROBLEMS["benchmark_exact"](X, Y, 0.0)[1:-1, 1:-1]

            def S(d):
                Z = np.zeros((n, n))
                for j in range(m):
                    Z = M(Z) + math.exp(-3.0 * j * h) * d
                return Z
            cols = np.stack([S(e.reshape(n, n)).ravel() for e in np.eye(n * n)], axis=1)
            free = U0
            for _ in range(m):
                free = M(free)
            d = np.linalg.solve(cols, (UN[1:-1, 1:-1] - free).ravel()).reshape(n, n)
            Us, Z = [U0], U0
            for j in range(m):
                Z = M(Z) + math.exp(-3.0 * j * h) * d
                Us.append(Z)
            memo[h] = X, Y, Us
        return memo[h]

    def solve(h, T=1.0, problem=None):
        if problem is not None or abs(T - 1.0) < 1e-12:
            return (mcs if problem is not None else cn)(h, T, problem)
        X, Y, Us = trajectory(h)
        U = np.zeros_like(X)
        U[1:-1, 1:-1] = Us[int(round(T / h))]
        return X, Y, U
    return solve


def test_step_runs_doctored_at_the_anchor_only_fail():
    """Round 6: the round-5 doctor (U_2 fitted to the CN U_N, the other runs honest MCS) is caught
    by the replay of the steps between (U_(N-1) from U_2): FAIL."""
    G = grader()
    c = G.benchmark_step_check(step_jobs(_doctored_solver(), (0,)), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]
    assert "the steps before it are not" in c[0].message, c[0].message


@pytest.mark.xfail(strict=True, reason="residual of the benchmark step witness (measured): step runs recognised "
                   "(benchmark data, T < 1) and answered with the fields of an MCS trajectory whose source vector is "
                   "chosen to land on the Crank-Nicolson U_N pass (last step 1.5e-15 of max |U| on h = 0.1, limit 1e-10; "
                   "the steps between 6.4e-16, limit 1e-8; round 5's doctor of U_2 alone now FAILs); this is an ADI "
                   "trajectory with an unusual source vector, which no check of the steps can tell from an unusual "
                   "source treatment")
def test_step_runs_doctored_to_match_a_crank_nicolson_final_field_are_not_a_pass():
    G = grader()
    c = G.benchmark_step_check(step_jobs(_doctored_trajectory_solver(), (0,)), {"scheme": "MCS", "theta": 1 / 3},
                               1 / 3)
    assert c[0].status is not G.Status.PASS, c[0].message


def test_a_solver_that_ignores_t_is_told_so():
    G = grader()
    mcs = survey().load_variant("MCS", 1 / 3, True).solve
    c = G.benchmark_step_check(step_jobs(lambda h, T=1.0, problem=None: mcs(h, 1.0, problem), (0,)),
                               {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL] and "ignores T" in c[0].message, c[0].message


def _gold_source_shifted():
    """The gold with its source evaluated at t + k/2 (a data treatment the statement does not fix)."""
    import types
    src = survey().variant_source("MCS", 1 / 3, True)
    old = "memo[t] = (G, np.asarray(pb.f(Xi, Yi, t), dtype=float))"
    assert src.count(old) == 1
    mod = types.ModuleType("gold_shifted")
    exec(compile(src.replace(old, old.replace("t), dtype", "t + 0.5 * k), dtype")), "gold_shifted", "exec"),
         mod.__dict__)
    return mod.solve


def test_honest_implementations_with_other_data_treatments_pass():
    """Honest twins: the gold with its source at t + k/2, and an independent MCS (the grader's own
    reference solver, another floating-point order and boundary handling)."""
    G = grader()

    def reference(h, T=1.0, problem=None):
        m = G.mesh_m(h)
        x = np.linspace(0.0, 1.0, m + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        return X, Y, G.mcs_reference(problem or G._PROBLEMS["benchmark_problem"](), m, T)
    for solve in (_gold_source_shifted(), reference):
        c = G.benchmark_step_check(step_jobs(solve), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
        assert [x.status for x in c] == [G.Status.PASS], [x.message for x in c]
        assert c[0].measured < 1e-3 * c[0].limit, c[0].message


def _gold_first_step_special(steps=1):
    """The gold whose first `steps` steps take the source elsewhere (f at t + k/2 where t < steps k;
    the homogeneous map unchanged): a data start-up the hidden-family witness cannot see."""
    import types
    src = survey().variant_source("MCS", 1 / 3, True)
    old = "memo[t] = (G, np.asarray(pb.f(Xi, Yi, t), dtype=float))"
    assert src.count(old) == 1
    new = old.replace("t), dtype", f"t + 0.5 * k * (t < {steps - 0.5} * k)), dtype")
    mod = types.ModuleType("gold_first_step")
    exec(compile(src.replace(old, new), "gold_first_step", "exec"), mod.__dict__)
    return mod.solve


def test_a_special_first_step_of_the_data_passes():
    """The anchor is the step from T = h to 2h, not the first one: a solver whose first step treats the
    data differently (a start-up of a multi-level source formula) passes on every mesh.  A start-up of
    two steps or more is outside the witness's premise (the step from h to 2h is then special too):
    FAIL, as the statement says (reference/adi/problem_spec.md)."""
    G = grader()
    c = G.benchmark_step_check(step_jobs(_gold_first_step_special(1)), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.PASS], [x.message for x in c]
    assert c[0].measured < 1e-3 * c[0].limit, c[0].message
    c = G.benchmark_step_check(step_jobs(_gold_first_step_special(2), (0,)), {"scheme": "MCS", "theta": 1 / 3},
                               1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]


def _separable(h, T=1.0, problem=None):
    """A manufactured benchmark field with a synthetic O(h^2) error that decays like the solution:
    U(T) = exp(-3T) (psi + h^2 phi); its trajectory is separable, so V_a = V_b = 0."""
    G = grader()
    m = G.mesh_m(h)
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    U0 = G._PROBLEMS["benchmark_exact"](X, Y, 0.0)
    return X, Y, math.exp(-3.0 * T) * U0 * (1.0 + 0.3 * h * h * (1.0 + X * Y))


def test_a_separable_manufactured_field_is_not_witnessed():
    """V_b = 0 = M V_a would pass vacuously: on h = 0.1 the family's rows keep max |V_b| >= 6.4e-4 of
    max |U| (MCS theta = 1/3), a separable field has round-off (limit 1e-8): REVIEW."""
    G = grader()
    c = G.benchmark_step_check(step_jobs(_separable), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.REVIEW] and "separable in time" in c[0].message, c[0].message
    assert c[0].measured < 1e-6 * c[0].limit


@pytest.mark.xfail(strict=True, reason="residual (measured): a separable manufactured field plus a homogeneous "
                   "trajectory of the scheme, U(T) = exp(-3T) W + M^N z (z a fixed field, M^N by the scheme's own "
                   "zero-data steps), is a step of M from its predecessor, with the first steps' data term, on every mesh: PASS (residual 6.6e-16 of max |U|); the same class as "
                   "the doctored step runs (a free source vector)")
def test_a_separable_field_plus_a_homogeneous_trajectory_is_not_a_pass():
    G = grader()

    def solve(h, T=1.0, problem=None):
        X, Y, U = _separable(h, T, problem)
        m = G.mesh_m(h)
        step = G.adi_map("MCS", 1 / 3, G.witness_operators(m, h, 1.0, 0.8, 0.5), h)
        Z = 1e-3 * np.sin(np.pi * X[1:-1, 1:-1]) * np.sin(2 * np.pi * Y[1:-1, 1:-1])
        for _ in range(int(round(T / h))):
            Z = step(Z)
        U = U.copy()
        U[1:-1, 1:-1] += Z
        return X, Y, U
    c = G.benchmark_step_check(step_jobs(solve), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert c[0].status is not G.Status.PASS, c[0].message


def test_a_vacuous_coarsest_mesh_does_not_hide_a_failing_finer_one():
    """Separable (manufactured) on h = 0.1, Crank-Nicolson on h = 0.05: the FAIL stands."""
    G = grader()
    cn = _cn_solver()

    def solve(h, T=1.0, problem=None):
        return (_separable if h > 0.075 else cn)(h, T, problem)
    c = G.benchmark_step_check(step_jobs(solve, (0, 1)), {"scheme": "MCS", "theta": 1 / 3}, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL] and "h = 0.05" in c[0].message, c[0].message
