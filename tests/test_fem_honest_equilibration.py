"""Issue 10: symmetric diagonal scaling D K D y = D F (Jacobi equilibration), x = D y, scores
1.0: the observed matrix is K under a symmetric diagonal scaling, its right-hand side the load
vector under the same map, and the field the reconstruction of D y."""
from test_fem_support import assert_scores_one_with_proof, honest


def test_equilibrated_system_scores_one():
    assert_scores_one_with_proof(honest("equilibration"))
