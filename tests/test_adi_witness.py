"""The second witness of ADI structure (issue 21): a hidden-family run on h = 0.1 (T = 1, ten
steps, non-zero source and Dirichlet data) whose draw differs from the hidden instance's only in
v's initial bump; the witness field minus the hidden run's is the solver's own linear map applied
to the initial difference with zero data, replayed by the grader outside the child.  Every scheme
of the survey's family must be recognised (with its own theta, to round-off), a monolithic 2-D
map must be identified as one, and anything else is REVIEW.  In-process: the survey's variants
are called directly (the witness does not depend on the recorder)."""
import numpy as np
import pytest

from test_adi_support import grader, survey

H = 0.1
SEEDS = (11, 12)


@pytest.fixture(autouse=True)
def _keep_draws():
    """These tests set the process's hidden and witness draws; put them back afterwards."""
    G = grader()
    saved = (dict(G._DRAW), dict(G._WDRAW))
    yield
    with G._DRAW_LOCK:
        G._DRAW.clear()
        G._WDRAW.clear()
        G._DRAW.update(saved[0])
        G._WDRAW.update(saved[1])


def set_draws(seed):
    """A hidden draw from the family (seeded) and the grader's own witness draw beside it."""
    G = grader()
    rng = np.random.default_rng(seed)
    with G._DRAW_LOCK:
        G._DRAW.clear()
        G._WDRAW.clear()
        G._DRAW.update({k: rng.uniform(lo, hi) for k, (lo, hi) in G._PROBLEMS["HIDDEN_FAMILY"].items()})
    return G.witness_draw()


def witness_jobs(solve, hidden_solve=None, hs=(H,)):
    """The two runs the witness compares on each mesh of hs, made in-process (hidden_solve:
    another solver for the hidden run, default the same)."""
    G = grader()
    T = G._PROBLEMS["HIDDEN_T"]
    out = {}
    for h in hs:
        for tag, draw, fn in (("hidden", G.hidden_draw(), hidden_solve or solve),
                              ("witness", G.witness_draw(), solve)):
            X, Y, U = fn(h, T, G._PROBLEMS["hidden_problem"](draw))
            out[f"{tag}:{h:g}"] = {"status": "ok", "U": np.asarray(U, dtype=float), "error": ""}
    return out


def test_the_witness_draw_is_a_hidden_family_member_differing_only_in_the_bump():
    G = grader()
    fam = G._PROBLEMS["HIDDEN_FAMILY"]
    for seed in SEEDS:
        w = set_draws(seed)
        d = G.hidden_draw()
        assert set(w) == set(d) == set(fam)
        assert all(fam[k][0] <= w[k] <= fam[k][1] for k in fam)
        assert {k for k in fam if w[k] != d[k]} == set(G.WITNESS_KEYS)
        assert G.witness_gap(d, w) >= G.SPEC["witness_min_gap"]
        assert G.witness_draw() == w                   # drawn once per grader process


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_every_family_row_of_the_survey_is_recognised(seed):
    G = grader()
    set_draws(seed)
    worst = 0.0
    for label, scheme, theta, mixed, _ in survey().ROWS:
        mod = survey().load_variant(scheme, theta, mixed)
        c = G.witness_check(witness_jobs(mod.solve), theta, (H,))[0]
        if mixed:
            assert c.status is G.Status.PASS, (label, c.message)
            assert f"theta = {theta:.8g}" in c.message, (label, c.message)
            worst = max(worst, c.measured)
        else:           # the mixed term dropped: no member of the family, no monolithic map
            assert c.status is G.Status.REVIEW, (label, c.message)
    assert worst < 1e-10        # measured <= 5.9e-12 (at the smallest gap); the limit is 1e-8


def _monolithic(phi):
    """A full 2-D theta-method (Crank-Nicolson at phi = 1/2) with the data at their time levels."""
    def solve(h, T, prob):
        m = int(round(1 / h))
        n = m - 1
        x = np.linspace(0.0, 1.0, m + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        N = int(round(T / h))
        k = T / N
        D2 = (np.diag(np.full(n, -2.0)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)) / h ** 2
        D1 = (np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)) / (2 * h)
        A = prob.a * np.kron(D2, np.eye(n)) + prob.c * np.kron(np.eye(n), D2) + prob.b * np.kron(D1, D1)
        a, b, c = prob.a, prob.b, prob.c

        def full(W):
            return (a * (W[2:, 1:-1] - 2 * W[1:-1, 1:-1] + W[:-2, 1:-1]) / h ** 2
                    + c * (W[1:-1, 2:] - 2 * W[1:-1, 1:-1] + W[1:-1, :-2]) / h ** 2
                    + b * (W[2:, 2:] - W[2:, :-2] - W[:-2, 2:] + W[:-2, :-2]) / (4 * h * h))
        U = np.asarray(prob.u0(X, Y), dtype=float).copy()
        ring = np.ones_like(U, dtype=bool)
        ring[1:-1, 1:-1] = False
        U[ring] = prob.g(X, Y, 0.0)[ring]
        from scipy.linalg import lu_factor, lu_solve
        lu = lu_factor(np.eye(n * n) - phi * k * A)
        for s in range(N):
            G1 = np.zeros_like(U)
            G1[ring] = prob.g(X, Y, (s + 1) * k)[ring]
            rhs = (U[1:-1, 1:-1] + (1 - phi) * k * full(U) + phi * k * full(G1)
                   + k * ((1 - phi) * prob.f(X, Y, s * k) + phi * prob.f(X, Y, (s + 1) * k))[1:-1, 1:-1])
            U = G1.copy()
            U[1:-1, 1:-1] = lu_solve(lu, rhs.ravel()).reshape(n, n)
        return X, Y, U
    return solve


@pytest.mark.parametrize("phi", [0.5, 1.0])
def test_a_monolithic_map_is_identified(phi):
    G = grader()
    set_draws(SEEDS[0])
    for hint in (None, 0.5):
        c = G.witness_check(witness_jobs(_monolithic(phi)), hint, (H,))[0]
        assert c.status is G.Status.FAIL, c.message
        assert f"phi = {phi:.6g}" in c.message
        # the closest member of the family misses by far more than round-off (measured >= 3.8e-4)
        assert float(c.message.split("misses it by ")[1]) > 1e-4


def test_a_map_that_changes_with_the_mesh_is_caught_on_the_mesh_where_it_changes():
    """ADI where the witness used to look (h = 0.1), Crank-Nicolson on the finer hidden meshes: the
    witness runs on every hidden mesh, the coarsest pins the scheme and theta, and h = 0.05 is the
    monolithic map (measured: CN misses the family by >= 1.9e-4 there, >= 6.1e-5 on h = 0.025)."""
    G = grader()
    set_draws(SEEDS[1])
    mcs, cn = survey().load_variant("MCS", 1 / 3), _monolithic(0.5)

    def solve(h, T, prob):
        return (mcs.solve if h > 0.075 else cn)(h, T, prob)
    hs = (0.1, 0.05)
    c = G.witness_check(witness_jobs(solve, hs=hs), 1 / 3, hs)[0]
    assert c.status is G.Status.FAIL and "on h = 0.05" in c.message and "phi = 0.5" in c.message, c.message
    c = G.witness_check(witness_jobs(mcs.solve, hs=hs), 1 / 3, hs)[0]
    assert c.status is G.Status.PASS and "worst of 2 meshes" in c.message, c.message


def test_witnesses_disagreeing_is_review():
    G = grader()
    set_draws(SEEDS[0])
    mod = survey().load_variant("MCS", 1 / 3)
    c = G.witness_check(witness_jobs(mod.solve), 0.5, (H,))[0]
    assert c.status is G.Status.REVIEW and "disagree" in c.message


def test_different_maps_in_the_two_runs_are_not_a_pass():
    """A solver that answers the two runs with different schemes is caught by the difference."""
    G = grader()
    set_draws(SEEDS[1])
    mcs = survey().load_variant("MCS", 1 / 3)
    c = G.witness_check(witness_jobs(_monolithic(0.5), hidden_solve=mcs.solve), 1 / 3, (H,))[0]
    assert c.status is not G.Status.PASS, c.message


def test_a_missing_or_broken_witness_run_is_review():
    G = grader()
    set_draws(SEEDS[0])
    assert G.witness_check({}, None)[0].status is G.Status.REVIEW
    assert G.witness_check({}, None, (H,))[0].status is G.Status.REVIEW
    ok = {"status": "ok", "U": np.zeros((11, 11)), "error": ""}
    jobs = {f"witness:{H:g}": {"status": "error", "error": "ValueError: T must be 1", "log": {}}, f"hidden:{H:g}": ok}
    c = G.witness_check(jobs, None, (H,))[0]
    assert c.status is G.Status.REVIEW and "T must be 1" in c.message
    jobs = {f"witness:{H:g}": {"status": "ok", "U": np.full((11, 11), np.nan), "error": ""}, f"hidden:{H:g}": ok}
    assert G.witness_check(jobs, None, (H,))[0].status is G.Status.REVIEW
    jobs = {f"witness:{H:g}": ok}
    c = G.witness_check(jobs, None, (H,))[0]
    assert c.status is G.Status.REVIEW and "hidden run" in c.message


def test_the_grading_plan_has_the_witness_beside_the_hidden_run_it_is_differenced_with():
    G = grader()
    assert set(G.SPEC["witness_h"]) == set(G.SPEC["hidden_h"])
    jobs = {j["tag"]: j for j in G.plan_jobs()}
    for h in G.SPEC["witness_h"]:
        w, hd = jobs[f"witness:{h:g}"], jobs[f"hidden:{h:g}"]
        assert w["h"] == hd["h"] == h and not w.get("poison") and not hd.get("poison")
    req = G.driver_request(list(jobs.values()), 1)
    assert set(req["witness_draw"]) == set(req["hidden_draw"])
