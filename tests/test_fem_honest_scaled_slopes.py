"""Issue 10: unknowns (value, h * slope) -- the system S^-1 K S^-1 y = S^-1 F -- score 1.0
(a "dummy solve" finding before)."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_scaled_slope_unknowns_score_one():
    assert_scores_one_with_proof(honest("scaled_slopes"))
