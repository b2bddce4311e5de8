"""Issue 10: several right-hand sides in one SuperLU solve (the load, a constant, K times a
known vector); the column that feeds the field is the load vector: 1.0."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_multiple_right_hand_sides_score_one():
    doc = assert_scores_one_with_proof(honest("multiple_rhs"))
    assert any("SuperLU.solve" in fn for fn in doc["keys"]["solve_entry_points"]), doc["keys"]["solve_entry_points"]
