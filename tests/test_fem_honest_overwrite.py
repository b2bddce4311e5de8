"""Issue 10: a LAPACK banded solve told to overwrite its arguments (the band with its LU
factors, the right-hand side with the solution) scores 1.0: the recorder reads the matrix
and the right-hand side before the call, not after."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_overwriting_lapack_solve_scores_one():
    doc = assert_scores_one_with_proof(honest("overwrite"))
    assert any("dgbsv" in fn for fn in doc["keys"]["solve_entry_points"]), doc["keys"]["solve_entry_points"]
