"""A documented limit, pinned (problem_spec.md, "Known limits": laundering): a
hand-written Thomas solver that multiplies each stage's result by the genuine operator
and solves it back shows ADI-operator solves that feed its field, so its per-mesh review
flags disappear; without the laundering the same solver is REVIEW on every mesh.  If a
check ever closes this, this test says so and the spec's limit must be rewritten."""
from test_adi_support import drive, gold_variant_source, grader

THOMAS = '''
def _thomas(ab, R):
    """Hand-written Thomas on the (3, n) band layout, every column of R at once."""
    import numpy as np
    n = ab.shape[1]
    c, d = np.zeros(n), np.array(R, dtype=float)
    c[0] = ab[0, 1] / ab[1, 0]
    d[0] = d[0] / ab[1, 0]
    for i in range(1, n):
        den = ab[1, i] - ab[2, i - 1] * c[i - 1]
        c[i] = ab[0, i + 1] / den if i < n - 1 else 0.0
        d[i] = (d[i] - ab[2, i - 1] * d[i - 1]) / den
    for i in range(n - 2, -1, -1):
        d[i] -= c[i] * d[i + 1]
    return d


def _launder(ab, V):
    """Multiply by the genuine operator and solve it back: the solve returns V."""
    AV = ab[1][:, None] * V
    AV[1:] += ab[2, :-1][:, None] * V[:-1]
    AV[:-1] += ab[0, 1:][:, None] * V[1:]
    return solve_banded((1, 1), ab, AV)
'''


def _source(launder: bool) -> str:
    src = gold_variant_source('solve_banded((1, 1), bands["x"], rhs)',
                              ('_launder(bands["x"], _thomas(bands["x"], rhs))' if launder
                               else '_thomas(bands["x"], rhs)'))
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T',
                      '_launder(bands["y"], _thomas(bands["y"], rhs.T)).T' if launder
                      else '_thomas(bands["y"], rhs.T).T')
    return src.replace("\ndef solve(", THOMAS + "\n\ndef solve(")


def test_laundered_hand_written_solver_loses_its_review_flags(tmp_path):
    G = grader()
    jobs = [{"tag": "bench:0", "h": 0.1, "problem": "benchmark"}, {"tag": "hidden:0.1", "h": 0.1, "problem": "hidden"}]
    out = {}
    for launder in (False, True):
        ready, J, viol, _ = drive(tmp_path / f"sub{launder}", _source(launder), jobs)
        assert all(j["status"] == "ok" for j in J.values()), {t: j["error"] for t, j in J.items()}
        out[launder] = {c.id: c.status for c in G.structure_checks(J, viol, ready)}
    assert out[False]["structure.unobserved[benchmark h=0.1]"] is G.Status.REVIEW
    assert out[False]["structure.unobserved[hidden h=0.1]"] is G.Status.REVIEW
    assert all(s is G.Status.PASS for s in out[True].values()), out[True]    # the limit
