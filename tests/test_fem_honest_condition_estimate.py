"""An honest solver that also forms inv(K) (a condition estimate, say) beside its stiffness
solve (review of issue 10, fem-red).  In the audited call both are substituted; the field
follows the solve's substitute, as it must, but the causal audit judged the call by the
inverse (the field "did not move by beta u") and failed it: measured end to end, 0.0 with
`beta 0.0015 for -18.5 predicted`.  Now a call with a substituted solve is judged by the
solve first.  Pure: check_causal on the records of one audited call."""
import base64

import numpy as np
import scipy.sparse.linalg

from test_fem_support import grader as G


def _msg(n, nodes, dense):
    enc = lambda a: base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")
    return {"kind": "mesh", "n": n, "error": None,
            "fields": {"uh_nodes": {"shape": [n + 1], "b64": enc(nodes)},
                       "uh_dense": {"shape": [10 * n + 1], "b64": enc(dense)}}}


def _audited(follow_solve=True):
    n = 32
    K, F, _ = G.free_system(n)
    maps, why = G.stiffness_maps(K, n)
    assert maps, why
    z = scipy.sparse.linalg.spsolve(K.tocsc(), F)
    rng = np.random.default_rng(3)
    sub = z * (1 + rng.uniform(-0.5, 0.5, z.shape)) + 0.05 * np.max(np.abs(z)) * rng.standard_normal(z.shape)
    m = z.size
    inv = {"fn": "numpy.linalg.inv", "kind": "inverse", "K": True, "why": "", "maps": maps,
           "digest": "k", "dim": m, "rank1": (rng.standard_normal(m), rng.uniform(0.5, 1, m)),
           "sub": "rank1"}
    solve = {"fn": "scipy.sparse.linalg.spsolve", "kind": "solve", "K": True, "why": "", "maps": maps,
             "digest": "k", "dim": m, "z": z, "rhs": F.copy(), "sub": sub, "A": K}
    got = G.field_of(sub if follow_solve else z + 1e-3 * (sub - z), n)
    plan = {"j": {"n": n, "mode": "substitute"}}
    results = {"j": {"mesh": _msg(n, *got), "end": None}}
    session = G.AuditSession(plan)
    session.calls["j"] = [inv, solve]
    fields = {n: G.field_of(z, n)}
    return {c.id: c for c in G.check_causal(plan, results, session, fields)}


def test_inverse_beside_a_substituted_solve_is_judged_by_the_solve():
    rec = _audited()["provenance.causal_substitution"]
    assert rec.status is G.Status.PASS, rec.message


def test_a_field_that_does_not_follow_the_solve_still_fails():
    rec = _audited(follow_solve=False)["provenance.causal_substitution"]
    assert rec.status is G.Status.FAIL, rec.message
