"""Tier 3 arrays omitted honestly -> 0.5 (never a schema failure); a finest
field that differs pointwise from the regenerated one -> 0.5; a regenerated
error that differs from the table -> 0.0; a wrong returned grid -> 0.0."""
import numpy as np
import pytest

from test_adi_support import (GOLD, copy_gold, failed, grade, gold_variant_source, grader, read_arrays,
                              status, submission_from_solver, write_arrays)


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


def _bench_jobs(G, rel_shift=0.0, point_shift=0.0):
    """Regenerated benchmark runs equal to the gold's submitted study, optionally off."""
    arrays = read_arrays(GOLD)
    P = G._PROBLEMS
    jobs = {}
    for p in range(5):
        m = int(round(1 / G.h_value(p)))
        x = np.linspace(0.0, 1.0, m + 1)
        X, Y = np.meshgrid(x, x, indexing="ij")
        U = P["benchmark_exact"](X, Y, 1.0)
        U[m // 2, m // 2] += arrays["max_norm_errors"][p] * (1.0 + rel_shift)
        jobs[f"bench:{p}"] = {"status": "ok", "X": X, "Y": Y, "U": U, "wall": 0.0}
    finest = arrays["U_finest"].copy()
    finest[80, 80] += point_shift
    jobs["bench:4"]["U"] = finest
    return jobs, arrays


@pytest.mark.parametrize("rel,want", [(0.5e-6, "PASS"), (2e-6, "FAIL")])
def test_regeneration_tolerance_is_1e_6_relative(rel, want):
    """seed: regenerating e_h to within 1e-6 relative of the submitted values."""
    G = grader()
    jobs, arrays = _bench_jobs(G, rel_shift=rel)
    sub = G.Submitted(e=arrays["max_norm_errors"])
    checks, _ = G.regeneration_checks(sub, jobs, G.RunOutcome("ok", [], "", 0.0, 0, "", ""))
    st = {c.id: c.status.value for c in checks}
    assert st["provenance.regen[h=0.1]"] == want, st


@pytest.mark.parametrize("rel,want", [(0.5e-10, "PASS"), (3e-10, "FAIL")])
def test_pointwise_field_tolerance(rel, want):
    """seed: U_finest equal pointwise to the regenerated field, rtol=1e-10, atol=1e-12."""
    G = grader()
    arrays = read_arrays(GOLD)
    U = arrays["U_finest"]
    shift = rel * abs(U[80, 80]) + 1e-12
    jobs, _ = _bench_jobs(G, point_shift=shift)
    sub = G.Submitted(tier3={"U_finest": U})
    assert G.field_check(sub, jobs)[0].status.value == want
