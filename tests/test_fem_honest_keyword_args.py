"""Review of issue 10 (fem-red): library calls spelled with keyword arguments.  Before,
`cho_solve_banded(cb_and_lower=...)` / `cho_solve(c_and_lower=...)` applied a factorisation
the recorder could not find (it looked only for `lu_and_piv`), so an honest solver scored 0.0
with "not the stiffness matrix ()"; `spsolve(A=..., b=...)` hid its matrix (the recorder
looked only for `a`) and was REVIEW.  One submission uses all three (a banded Cholesky solve
refined twice: 0/1 combination (1, 1, 1)) and must score 1.0 with every audit proven.  It
also inverts a 4x4 matrix at import (an instrumented call outside solve): the grader's count
of audit records covers the whole call, import included (provenance.records)."""
from test_fem_support import assert_scores_one_with_proof, build, solver_source

KEYWORDS = ("c = scipy.linalg.cholesky_banded(band(A, 0, 3))\n"
            "    x = scipy.linalg.cho_solve_banded(cb_and_lower=(c, False), b=b)\n"
            "    cf = scipy.linalg.cho_factor(A.toarray())\n"
            "    x = x + scipy.linalg.cho_solve(c_and_lower=cf, b=b - A @ x)\n"
            "    x = x + scipy.sparse.linalg.spsolve(A=A.tocsc(), b=b - A @ x)")


def test_keyword_argument_calls_score_one():
    doc = assert_scores_one_with_proof(build("honest-keywords", solver_source(
        KEYWORDS, "\n_UNIT = np.linalg.inv(2.0 * np.eye(4))\n")))
    seen = set(doc["keys"]["solve_entry_points"])
    assert {"scipy.linalg.cho_solve_banded", "scipy.linalg.cho_solve",
            "scipy.sparse.linalg.spsolve"} <= seen, seen
