"""Every legitimate library solver scores 1.0 end to end, and the round-off-aware
pointwise tolerance (n >= 512) accepts each of them while still rejecting a
wrong field."""
import numpy as np
import pytest

from test_fem_support import LEGIT_SOLVES, _TMP, build, failed, grade, grader, make_gold, solver_source

# End to end (build + grade): a 1.0 includes provenance.fidelity, i.e. the pointwise
# tolerance accepts each of these solvers at every mesh.  The gold itself is spsolve on CSR.
# cho_factor, lu_factor and the dense inverse (the remaining entry points of
# problem_spec.md's derivation; dense, so slow to build and re-run) are checked
# against the tolerance directly, below.
END_TO_END = ["splu", "factorized", "banded_lu", "lapack_dgbsv", "cholesky_banded", "scipy_solve",
              "numpy_dense_lu", "blocked_scaled"]


# the outermost entry point the instrumentation must see (patched by identity before
# the import: the from-imported LAPACK alias and SuperLU's C-level solve included)
ENTRY = {"splu": "SuperLU.solve", "factorized": "factorized.solve",
         "banded_lu": "scipy.linalg.solve_banded", "lapack_dgbsv": "scipy.linalg._flapack.dgbsv",
         "cholesky_banded": "scipy.linalg.solveh_banded", "scipy_solve": "scipy.linalg.solve",
         "numpy_dense_lu": "numpy.linalg.solve", "blocked_scaled": "scipy.sparse.linalg.spsolve"}


@pytest.mark.parametrize("name", END_TO_END)
def test_legitimate_solver_scores_one(name):
    sub = build(f"legit-{name}", solver_source(LEGIT_SOLVES[name]))
    rc, out, err, doc, keys = grade(sub)
    assert rc == 0 and keys["SCORE"] == "1.0", [c for c in doc["checks"] if c["status"] != "PASS"]
    st = {c["id"]: c["status"] for c in doc["checks"]}
    # observed, and causally proven by tampering (not merely unreviewed)
    for cid in ("provenance.solve_observed", "provenance.reconstruction", "provenance.load_vector",
                "provenance.causal_substitution", "provenance.causal_nan", "provenance.fidelity"):
        assert st[cid] == "PASS", cid
    assert ENTRY[name] in keys["solve_entry_points"]


def _fields(solver_name):
    path = _TMP / f"tol-{solver_name}.py"
    path.write_text(solver_source(LEGIT_SOLVES[solver_name]))
    return make_gold.load_solver(str(path), f"tol_{solver_name}")


@pytest.fixture(scope="module")
def reference():
    return grader.reference_study()


@pytest.mark.parametrize("name", sorted(set(LEGIT_SOLVES) - set(END_TO_END)))
def test_pointwise_tolerance_accepts_each_solver(name, reference):
    mod = _fields(name)
    fields = {}
    for n in grader.SPEC["meshes"]:
        r = mod.solve(n)
        fields[n] = (r["uh_nodes"], r["uh_dense"], r["x_dense"])
    [rec] = grader.check_fidelity(fields, reference)
    assert rec.status is grader.Status.PASS, rec.message


def test_tolerance_values_and_wrong_field_rejected(reference):
    assert grader.fidelity_tol(256) == 1e-9
    assert grader.fidelity_tol(512) == pytest.approx(1.6e-8)
    assert grader.fidelity_tol(2048) == pytest.approx(4.096e-6)
    # Cholesky-type solvers deviate by 4.5e-7 at n = 2048 (specs/fem.md): inside the tolerance,
    # but above a flat 1e-9, which is why the tolerance must grow
    chol = _fields("cholesky_banded").solve(2048)["uh_dense"]
    dev = np.max(np.abs(chol - reference[2048][1]))
    assert 1e-9 < dev < grader.fidelity_tol(2048)
    # a field with the method's own error level is rejected at every mesh
    # (slope-dropped reconstruction: 1.16e-3 at n = 32, order 1 -> 1.8e-5 at n = 2048)
    fields = {n: (None, reference[n][1] + 1.16e-3 * 32 / n, None) for n in grader.SPEC["meshes"]}
    [rec] = grader.check_fidelity(fields, reference)
    assert rec.status is grader.Status.FAIL
