"""Attack class: voiding the run (issue 12).  A generation deletes the target name from the
test's namespace (found by a stack walk), so the test itself raises `NameError: target`;
or removes the shim module, fakes a harness-looking exception, kills or stops its worker,
or corrupts the reply pipe.  The grader knows it delivered the target stand-in and the
shim (the worker imported it before any generated code ran): each of these is that step's
failure, the model's -- the run stays graded, also under --strict."""
import pytest

from test_scicode_support import gs, one_step_set, run_one_step_set, step_line

TESTNS = ("    import sys\n    fr = sys._getframe(1)\n"
          "    while fr is not None and not fr.f_code.co_filename.startswith('<test'):\n        fr = fr.f_back\n"
          "    g = fr.f_globals\n")
REPLIES = {
    "honest": "def f(x):\n    return x + 1\n",
    "deletes_target": "def f(x):\n" + TESTNS + "    del g['target']\n    return x + 1\n",
    "rebinds_target": "def f(x):\n" + TESTNS + "    g['target'] = x + 1\n    return x + 1\n",
    "deletes_shim": ("def f(x):\n    import sys\n    for k in list(sys.modules):\n"
                     "        if k.startswith('scicode'):\n            del sys.modules[k]\n"
                     "    sys.path[:] = []\n    return x + 1\n"),
    "raises_target_nameerror": "def f(x):\n    raise NameError(\"name 'target' is not defined\")\n",
    "kills_worker": "def f(x):\n    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n    os.killpg(0, signal.SIGKILL)\n",
    "stops_worker": "def f(x):\n    import os, signal, time\n    os.kill(os.getppid(), signal.SIGSTOP)\n    time.sleep(60)\n",
    "corrupts_reply": ("def f(x):\n    import os\n    for fd in range(3, 64):\n        try:\n"
                       "            os.write(fd, b'\\xff\\xfe{garbage\\n' * 1000)\n        except OSError:\n            pass\n"
                       "    return 0.0\n"),
}
CASES = {"deletes_shim": "assert np.allclose(f(1.0), target)\n"
                         "from scicode.compare.cmp import cmp_tuple_or_list\nassert cmp_tuple_or_list([1], [1])",
         "rebinds_target": "assert np.allclose(f(1.0), target)"}


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("void-run", REPLIES, cases=CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "4", "--strict")
    return rc, out, steps, keys


@pytest.mark.parametrize("label,reason", [
    ("deletes_target", "NameError: name 'target' is not defined [model]"),
    ("rebinds_target", "[model]"),
    ("deletes_shim", "[model]"),
    ("raises_target_nameerror", "NameError: name 'target' is not defined [model]"),
    ("kills_worker", "[model]"),        # the worker is pid 1 of its namespace: the kill is ignored
    ("stops_worker", "[model]"),
    ("corrupts_reply", "[model]"),
])
def test_a_generation_fails_only_its_own_step(run, label, reason):
    rc, out, steps, keys = run
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and reason in line, line


def test_the_run_is_graded_not_indicted(run):
    rc, out, steps, keys = run
    assert "harness indicted" not in out
    assert (rc, keys["RESULT"], keys["harness_fault_steps"]) == (1, "PARTIAL", "0")
    assert step_line(out, steps["honest"]).startswith("PASS")


def test_evidence_not_first_failure_classifies():
    """The same signature, with and without the grader's evidence: two census lines, each
    its own class (not the class of whichever came first)."""
    ne = {"type": "NameError", "message": "name 'target' is not defined", "origin": "test"}
    delivered = dict(ne, step="1.1", evidence={"targets": True, "shim": True})
    undelivered = dict(ne, step="2.1", evidence={"targets": False, "shim": True})
    for order in ([delivered, undelivered], [undelivered, delivered]):
        records, indicted, reasons = gs.census(order, strict=False)
        classes = sorted(c.limit for c in records if c.id == "census.signature")
        assert classes == ["harness:target_name_error", "model"] and indicted
    _, indicted, _ = gs.census([delivered] * 3, strict=True)
    assert not indicted
    # a forged worker result cannot claim a harness fault either
    prog = gs.StepProgram("1.1", "1", "", "", "def f(): pass", None, ["assert True"], None, [])
    res = gs.judge(prog, {"status": "crashed", "reason": "x", "messages": [
        {"case": 0, "ok": False, "error": {"type": "TargetsMissing", "message": "group 1.1/test1", "origin": "grader"}}]},
        dry=False)
    assert gs.classify(dict(res.failure, step="1.1")) == "model"
