"""Honest variant: a condition estimate with an unseeded random probe vector, solved with the
same factorisation before the load (the probe feeds nothing of the field).  The first
substituted solve is then the probe, which differs between two calls (numpy's generator is
reseeded in every call, as in a fresh process): comparing it scored this solver 0.0, though
its field is bitwise reproducible.  The first substituted solve is compared only when it feeds
a field; the load solves feeding both fields are compared in any case."""
from test_fem_support import assert_scores_one_with_proof, build, solver_source

RANDOM_PROBE = ("lu = scipy.sparse.linalg.splu(A.tocsc())\n"
                "    est = np.max(np.abs(lu.solve(np.random.rand(A.shape[0]))))   # condition estimate\n"
                "    x = lu.solve(b)")


def test_random_probe_before_the_load_solve_scores_one():
    assert_scores_one_with_proof(build("honest-random-probe", solver_source(RANDOM_PROBE)))
