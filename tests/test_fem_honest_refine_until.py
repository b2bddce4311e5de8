"""Honest variant: iterative refinement until the residual is small.  In the clean call the
first solve already meets the criterion (one solve); in the audited call the substitute's
residual is large, so the loop runs to its limit (five solves, all substituted, the field
following them).  The old determinism check demanded the same solve outputs feed both
fields and scored this 0.0; only the load solves feeding the field must now be the same
(a correction solve depends on the substitute and runs as often as the data asks)."""
from test_fem_support import assert_scores_one_with_proof, build, check, solver_source

UNTIL = ("x = scipy.sparse.linalg.spsolve(A, b)\n"
         "    for it in range(4):\n"
         "        r = b - A @ x\n"
         "        if np.max(np.abs(r)) <= 1e-9 * np.max(np.abs(b)):\n"
         "            break\n"
         "        x = x + scipy.sparse.linalg.spsolve(A, r)")


def test_refinement_until_converged_scores_one():
    doc = assert_scores_one_with_proof(build("honest-refine-until", solver_source(UNTIL)))
    assert "max difference" in check(doc, "provenance.deterministic")["message"]
