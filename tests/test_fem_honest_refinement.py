"""Issue 10: one step of iterative refinement with a library solver (x1 + dx, two observed
solves of the stiffness matrix) scores 1.0.  The refinement step cancels any finite change
of x1 (dx = K^-1 (F - K x1)), so the audit substitutes every stiffness solve's output with an
independent random vector and the field must be the reconstruction of x1 + dx as received."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_iterative_refinement_scores_one():
    doc = assert_scores_one_with_proof(honest("refinement"))
    assert any("spsolve" in fn for fn in doc["keys"]["solve_entry_points"]), doc["keys"]["solve_entry_points"]
