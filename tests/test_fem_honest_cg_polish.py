"""Issue 10: a banded Cholesky solve polished by conjugate gradients: both are observed
solves of the stiffness matrix, the field follows the last one: 1.0."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_cg_polishing_scores_one():
    doc = assert_scores_one_with_proof(honest("cg_polish"))
    assert any("scipy.sparse.linalg.cg" in fn for fn in doc["keys"]["solve_entry_points"]), doc["keys"]["solve_entry_points"]
