"""The verdict is a pure function of the records (seed "Score behavior")."""
import pytest

from test_fem_support import grader

C, S = grader.Check, grader.Status


def v(*recs, strict=False, no_exec=False):
    return grader.verdict(list(recs), strict=strict, no_exec=no_exec)


def test_all_pass():
    assert v(C("tier1.a", S.PASS, ""), C("tier3.b", S.PASS, "")) == ("PASS", 1.0)


def test_tier3_only_failure_is_half():
    assert v(C("tier1.a", S.PASS, ""), C("tier3.b", S.FAIL, "")) == ("PARTIAL", 0.5)


@pytest.mark.parametrize("cid", ["files.x", "schema.x", "sidecar.x", "tier1.x", "tier2.x",
                                 "static.imports", "provenance.x"])
def test_any_other_failure_is_zero(cid):
    assert v(C(cid, S.FAIL, ""), C("tier3.b", S.FAIL, "")) == ("FAIL", 0.0)
    assert v(C(cid, S.FAIL, "")) == ("FAIL", 0.0)


def test_review_and_strict():
    recs = (C("provenance.solve_observed", S.REVIEW, ""), C("tier3.b", S.FAIL, ""))
    assert v(*recs) == ("PARTIAL", 0.5)
    assert v(*recs, strict=True) == ("FAIL", 0.0)
    assert v(C("x.y", S.REVIEW, ""), strict=True) == ("FAIL", 0.0)


def test_no_exec_is_ungraded():
    assert v(C("tier1.a", S.PASS, ""), no_exec=True) == ("UNGRADED", None)
    assert v(C("tier1.a", S.FAIL, ""), no_exec=True) == ("UNGRADED", None)


def test_tier3_missing_is_half_end_to_end():
    from test_fem_support import edit_npz, failed, gold_copy, grade
    sub = gold_copy("tier3-missing")
    edit_npz(sub, x_dense=None, uh_dense=None, uexact_dense=None, error_dense=None)
    import json
    doc = json.loads((sub / "results.json").read_text())
    del doc["artifact"]
    (sub / "results.json").write_text(json.dumps(doc))
    rc, out, err, rep, keys = grade(sub)
    assert keys["SCORE"] == "0.5" and failed(rep) == {"tier3.artifact"}
