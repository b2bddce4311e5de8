"""The second witness of ADI structure (issue 21): one step (T = k = h) of the submitted
solver on a grader-drawn problem with f = g = 0, replayed by the grader outside the child.
Every scheme of the survey's family must be recognised (with its own theta, to round-off),
a monolithic 2-D step must be identified as one, and anything else is REVIEW.  In-process:
the survey's variants are called directly (the witness does not depend on the recorder)."""
import numpy as np
import pytest

from test_adi_support import grader, survey

H = 0.1
DRAWS = [{"amp": [[0.9, -0.4, 0.2], [-0.7, 0.5, 0.1], [0.3, -0.2, 0.6]], "s": 0.3},
         {"amp": [[-0.2, 0.8, -0.6], [0.4, -0.9, 0.7], [-0.5, 0.1, -0.3]], "s": 0.45}]


def witness_field(solve, draw):
    G = grader()
    with G._DRAW_LOCK:
        G._WDRAW.clear()
        G._WDRAW.update(draw)
    prob = G._PROBLEMS["witness_problem"](G.witness_draw())
    X, Y, U = solve(H, H, prob)
    return {f"witness:{H:g}": {"status": "ok", "U": np.asarray(U, dtype=float), "error": ""}}


@pytest.mark.parametrize("draw", range(len(DRAWS)))
def test_every_family_row_of_the_survey_is_recognised(draw):
    G = grader()
    worst = 0.0
    for label, scheme, theta, mixed, _ in survey().ROWS:
        mod = survey().load_variant(scheme, theta, mixed)
        jobs = witness_field(mod.solve, DRAWS[draw])
        c = G.witness_check(jobs, theta)[0]
        if mixed:
            assert c.status is G.Status.PASS, (label, c.message)
            assert f"theta = {theta:.8g}" in c.message, (label, c.message)
            worst = max(worst, c.measured)
        else:           # the mixed term dropped: no member of the family, no monolithic step
            assert c.status is G.Status.REVIEW, (label, c.message)
    assert worst < 1e-13        # measured 4e-15; the limit is 1e-9


def _monolithic(phi):
    G = grader()

    def solve(h, T, prob):
        m = int(round(1 / h))
        x = np.linspace(0.0, 1.0, m + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        U = np.asarray(prob.u0(X, Y), dtype=float)
        ops = G.witness_operators(m, h, prob.a, prob.b, prob.c)
        V = G.monolithic_step(phi, U[1:-1, 1:-1].ravel(), ops, T)
        out = np.zeros_like(U)
        out[1:-1, 1:-1] = V.reshape(m - 1, m - 1)
        return X, Y, out
    return solve


@pytest.mark.parametrize("phi", [0.5, 1.0, 0.6])
def test_a_monolithic_step_is_identified(phi):
    G = grader()
    for draw in DRAWS:
        c = G.witness_check(witness_field(_monolithic(phi), draw), None)[0]
        assert c.status is G.Status.FAIL, c.message
        assert f"phi = {phi:.6g}" in c.message
        # the closest member of the family misses by far more than round-off
        assert float(c.message.split("misses it by ")[1]) > 1e-3


def test_witnesses_disagreeing_is_review():
    G = grader()
    mod = survey().load_variant("MCS", 1 / 3)
    c = G.witness_check(witness_field(mod.solve, DRAWS[0]), 0.5)[0]
    assert c.status is G.Status.REVIEW and "disagree" in c.message


def test_a_missing_or_broken_witness_run_is_review():
    G = grader()
    assert G.witness_check({}, None)[0].status is G.Status.REVIEW
    jobs = {f"witness:{H:g}": {"status": "error", "error": "ValueError: T must be 1", "log": {}}}
    c = G.witness_check(jobs, None)[0]
    assert c.status is G.Status.REVIEW and "T must be 1" in c.message
    jobs = {f"witness:{H:g}": {"status": "ok", "U": np.full((11, 11), np.nan), "error": ""}}
    assert G.witness_check(jobs, None)[0].status is G.Status.REVIEW
