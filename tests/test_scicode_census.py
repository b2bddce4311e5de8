"""The harness-fault census (seed: "Harness-fault census"), as a pure function and end to end."""
from test_scicode_support import gs

TARGET_NE = {"type": "NameError", "message": "name 'target' is not defined", "origin": "test"}
SCICODE_MNF = {"type": "ModuleNotFoundError", "message": "No module named 'scicode'", "origin": "test"}
PLAIN_ASSERT = {"type": "AssertionError", "message": "", "origin": "test"}


def fails(proto, n, start=0):
    return [dict(proto, step=f"{i}.1", phase="case 1") for i in range(start, start + n)]


def verdict_of(records):
    return [c for c in records if c.id == "census.verdict"][0]


def test_incident_shape_is_indicted():
    """2026-10-10: '0 % pass' = 251 target NameErrors + 36 scicode ModuleNotFoundErrors."""
    failures = fails(TARGET_NE, 251) + fails(SCICODE_MNF, 36, start=300)
    records, indicted, reasons = gs.census(failures, strict=False)
    assert indicted
    assert any("251x NameError: name 'target' is not defined (target_name_error)" in r for r in reasons)
    assert any("36x ModuleNotFoundError: No module named 'scicode' (scicode_module_missing)" in r
               for r in reasons)
    v = verdict_of(records)
    assert v.status is gs.Status.FAIL and "harness indicted" in v.message
    result, score = gs.verdict(records + [gs.Check("step.1.1", gs.Status.FAIL, "x")],
                               strict=False, no_exec=False)
    assert (result, score) == ("UNGRADED", None)


def test_single_target_name_error_indicts():
    _, indicted, _ = gs.census(fails(TARGET_NE, 1) + fails(PLAIN_ASSERT, 5, 10), strict=False)
    assert indicted


def test_ten_plain_assertion_failures_are_the_models():
    records, indicted, _ = gs.census(fails(PLAIN_ASSERT, 10), strict=False)
    assert not indicted
    assert verdict_of(records).status is gs.Status.PASS
    sig = [c for c in records if c.id == "census.signature"][0]
    assert sig.measured == 10 and sig.limit == "model"
    _, indicted, _ = gs.census(fails(PLAIN_ASSERT, 40), strict=True)
    assert not indicted


def test_ten_failures_sharing_one_other_signature_indicts():
    """The seed's 100 % rule, for failures no generation raised (here a failure list from
    elsewhere whose tracebacks do not pass through generated code); ten raised by the
    generation are the model's (issue 22: tests/test_scicode_census_evidence.py)."""
    te = {"type": "TypeError", "message": "unsupported operand type(s) for -: 'NoneType' and 'float'",
          "origin": "library"}
    _, indicted, reasons = gs.census(fails(te, 10), strict=False)
    assert indicted and "100% of 10 failures share one signature" in reasons[0]
    _, indicted, _ = gs.census(fails(te, 9), strict=False)            # < 10: not the rule
    assert not indicted
    _, indicted, _ = gs.census(fails(te, 9) + fails(PLAIN_ASSERT, 1, 50), strict=False)  # 90 %: no
    assert not indicted
    # an assertion raised inside a library is not the test's verdict: its own signature,
    # so the 100 % rule does not depend on which failure happens to come first
    lib = dict(PLAIN_ASSERT, origin="library")
    assert gs.signature(lib) == "AssertionError (in library)"
    for order in (fails(lib, 1) + fails(PLAIN_ASSERT, 9, 10), fails(PLAIN_ASSERT, 9, 10) + fails(lib, 1)):
        _, indicted, _ = gs.census(order, strict=False)
        assert not indicted


def test_missing_h5_group_indicts():
    miss = {"type": "TargetsMissing", "message": "group 5.1/test2 not in the targets file"}
    _, indicted, reasons = gs.census(fails(miss, 1), strict=False)
    assert indicted and "h5_group_missing" in reasons[0]


def test_strict_indicts_on_one_harness_signature():
    dep = {"type": "ImportError", "message": "cannot import name 'simps' from 'scipy.integrate'"}
    failures = [dict(dep, step="2.1", phase="deps")] + fails(PLAIN_ASSERT, 3, 10)
    records, indicted, _ = gs.census(failures, strict=False)
    assert not indicted
    assert any(c.id == "census.harness_faults" and c.status is gs.Status.REVIEW for c in records)
    _, indicted, reasons = gs.census(failures, strict=True)
    assert indicted and reasons[0].startswith("--strict")


def test_classification():
    assert gs.classify(dict(TARGET_NE)) == "harness:target_name_error"
    assert gs.classify(dict(TARGET_NE, message="name '_scicode_target_ab12cd34' is not defined")) == \
        "harness:target_name_error"
    # a generation reading the global `target` itself is the model's doing, not the harness's
    assert gs.classify(dict(TARGET_NE, origin="submission")) == "model"
    assert gs.classify({"type": "NameError", "message": "name 'base' is not defined",
                        "lost_context": "62.1"}) == "harness:special_context_lost"
    assert gs.classify({"type": "ModuleNotFoundError", "message": "No module named 'mpl_toolkits'",
                        "phase": "deps"}) == "harness:dependency_missing"
    assert gs.classify({"type": "ModuleNotFoundError", "message": "No module named 'foo'",
                        "phase": "case 1", "origin": "submission"}) == "model"
    assert gs.classify({"type": "Timeout", "message": "exceeded the 5 s budget"}) == "model"


def test_signature_normalisation():
    a = gs.signature({"type": "ValueError", "message": "shapes (3,4) and (5,) at 0x7f3a9c not aligned: 4 (dim 1)"})
    b = gs.signature({"type": "ValueError", "message": "shapes (2,2) and (7,) at 0x11aa not aligned: 2 (dim 0)"})
    assert a == b == "ValueError: shapes (N,N) and (N,) at ADDR not aligned: N (dim N)"
    assert gs.signature(PLAIN_ASSERT) == "AssertionError"
    assert gs.signature(dict(PLAIN_ASSERT, origin="submission")) == "AssertionError (in submission)"


def test_end_to_end_ten_wrong_answers_graded_not_indicted():
    from test_scicode_support import one_step_set, run_one_step_set
    probs, h5, gen, steps = one_step_set("ten-wrong", {f"w{i}": f"def f(x):\n    return x + {i + 2}\n"
                                                     for i in range(10)})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0")
    assert "  10x [model] AssertionError" in out
    assert "census.verdict                 10 failure(s), all model faults" in out


def test_imitated_harness_signatures_are_the_models():
    """A failure raised through generated code is the model's, whatever it is called."""
    for proto in (TARGET_NE, SCICODE_MNF, {"type": "TargetsMissing", "message": "group 1.1/test1"},
                  {"type": "WorkerFault", "message": "worker died"}):
        assert gs.classify(dict(proto, origin="submission")) == "model"
        assert gs.classify(dict(proto, origin="library", via_submission=True)) == "model"
        assert gs.classify(dict(proto, origin="test")).startswith("harness:")


def test_end_to_end_a_generation_cannot_void_the_run():
    """Generations raising the seed's harness signatures themselves: graded, not indicted."""
    from test_scicode_support import one_step_set, run_one_step_set, step_line
    replies = {
        "honest": "def f(x):\n    return x + 1\n",
        "fake_target": "def f(x):\n    raise NameError(\"name 'target' is not defined\")\n",
        "fake_scicode": "def f(x):\n    raise ModuleNotFoundError(\"No module named 'scicode'\")\n",
        "fake_scicode_lib": "def f(x):\n    import importlib\n    return importlib.import_module('scicode.nothere')\n",
        "fake_h5": "def f(x):\n    class TargetsMissing(Exception):\n        pass\n"
                   "    raise TargetsMissing('group 1.1/test1 not in the targets file')\n",
        "kills_worker": "def f(x):\n    import os, signal\n    os.killpg(os.getppid(), signal.SIGKILL)\n",
    }
    probs, h5, gen, steps = one_step_set("imitate", replies)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--strict")
    assert (rc, keys["RESULT"], keys["SCORE"], keys["harness_fault_steps"]) == (1, "PARTIAL", "0.1667", "0")
    assert "harness indicted" not in out
    assert step_line(out, steps["kills_worker"]).endswith("[model]")
    assert step_line(out, steps["honest"]).startswith("PASS")
