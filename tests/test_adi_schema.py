"""Array schema (seed check 1): mandatory arrays present, (5,), finite,
positive; any violation is 0.0 and is reported before anything runs."""
import numpy as np
import pytest

from test_adi_support import copy_gold, failed, grade, grader, read_arrays, write_arrays


def _edit(name):
    def nan_error(a):
        a["max_norm_errors"] = a["max_norm_errors"].copy()
        a["max_norm_errors"][2] = np.nan

    def negative_error(a):
        a["max_norm_errors"] = -a["max_norm_errors"]

    def short(a):
        a["h_values"] = a["h_values"][:4]

    def missing_eoc(a):
        del a["eoc"]

    def string_dtype(a):
        a["max_norm_errors"] = a["max_norm_errors"].astype(str)

    return {"nan_error": (nan_error, "schema.finite"), "negative_error": (negative_error,
            "schema.errors_positive"), "short": (short, "schema.arrays"),
            "missing_eoc": (missing_eoc, "schema.arrays"), "string_dtype": (string_dtype, "schema.arrays")}[name]


@pytest.mark.parametrize("name", ["nan_error", "negative_error", "short", "missing_eoc", "string_dtype"])
def test_schema_violation_is_zero(tmp_path, name):
    fn, cid = _edit(name)
    sub = copy_gold(tmp_path / "sub")
    arrays = read_arrays(sub)
    fn(arrays)
    write_arrays(sub, arrays)
    rc, stdout, stderr, doc = grade(sub)
    assert rc == 1 and doc["score"] == 0.0 and "Traceback" not in stderr
    assert failed(doc) == {cid}, failed(doc)
    assert "provenance.exec" in {c["id"] for c in doc["checks"]}     # nothing was run


def test_compare_arrays_reports_worst_index_and_nonfinite_first():
    G = grader()
    a = np.zeros((3, 3))
    a[1, 2] = 1e-6
    c = G.compare_arrays("x", "field", a, np.zeros((3, 3)), rtol=0, atol=1e-12)
    assert c.status is G.Status.FAIL and "(1, 2)" in c.message
    a[0, 0] = np.nan
    c = G.compare_arrays("x", "field", a, np.zeros((3, 3)), rtol=0, atol=1e-12)
    assert "non-finite" in c.message and "(0, 0)" in c.message
    c = G.compare_arrays("x", "field", np.zeros((2, 3)), np.zeros((3, 3)), rtol=0, atol=1e-12)
    assert "shape" in c.message


def test_reference_failure_is_a_grader_error_not_a_score(tmp_path, capsys, monkeypatch):
    """Exit 3 and no SCORE when the grader's own reference cannot be computed."""
    G = grader()
    sub = copy_gold(tmp_path / "sub")

    def broken():
        raise FloatingPointError("reference diverged")
    monkeypatch.setattr(G, "hidden_reference", broken)
    rc = G.main([str(sub)])
    out = capsys.readouterr().out
    assert rc == 3 and "GRADER_ERROR" in out and "SCORE" not in out
