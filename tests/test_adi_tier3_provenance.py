"""Tier 3 arrays omitted honestly -> 0.5 (never a schema failure); a finest
field that differs pointwise from the regenerated one -> 0.5; a regenerated
error that differs from the table -> 0.0; a wrong returned grid -> 0.0."""
import numpy as np

from test_adi_support import (copy_gold, failed, grade, gold_variant_source, read_arrays, status,
                              submission_from_solver, write_arrays)


def test_tier3_arrays_omitted_scores_half(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    arrays = {k: v for k, v in read_arrays(sub).items()
              if k in ("h_values", "max_norm_errors", "eoc")}
    write_arrays(sub, arrays)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["result"] == "PARTIAL" and doc["score"] == 0.5 and rc == 1
    assert failed(doc) == {"tier3.arrays", "tier3.U_pointwise"}
    assert not any(c.startswith("schema.") for c in failed(doc))
    assert status(doc)["tier3.regen[h=0.00625]"] == "PASS"


def test_partial_tier3_set_is_a_tier3_failure(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    arrays = read_arrays(sub)
    del arrays["error_finest"]
    arrays["U_exact_finest"] = arrays["U_exact_finest"][:160]
    write_arrays(sub, arrays)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.5 and "tier3.arrays" in failed(doc)


def test_pointwise_field_mismatch_is_tier3_only(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    arrays = read_arrays(sub)
    U = arrays["U_finest"].copy()
    U[40, 100] += 1e-9                       # far below the max error: the table row still matches
    arrays["U_finest"] = U
    arrays["error_finest"] = U - arrays["U_exact_finest"]
    write_arrays(sub, arrays)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.5
    assert failed(doc) == {"tier3.U_pointwise"}, failed(doc)


def test_regenerated_error_mismatch_is_zero(tmp_path):
    sub = copy_gold(tmp_path / "sub")
    (sub / "adi_solver.py").write_text(gold_variant_source("THETA = 1.0 / 3.0", "THETA = 0.34"))
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0
    assert "provenance.regen[h=0.1]" in failed(doc)


def test_wrong_grid_orientation_is_zero(tmp_path):
    src = gold_variant_source('    return X, Y, U\n', '    return Y, X, U\n')
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0 and "provenance.grid[h=0.1]" in failed(doc)
