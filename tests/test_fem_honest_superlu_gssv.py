"""Issue 10: SuperLU's private gssv entry point.  Its matrix is passed as (N, nnz, data,
indices, indptr): the old recorder read the data array as the matrix (dimension 364 at
n = 32, where 2(n-1) = 62) and scored the honest solver 0.0."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_private_gssv_scores_one():
    doc = assert_scores_one_with_proof(honest("superlu_gssv"))
    assert any("_superlu.gssv" in fn for fn in doc["keys"]["solve_entry_points"]), doc["keys"]["solve_entry_points"]
