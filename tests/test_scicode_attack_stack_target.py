"""Attack class: reading the target off the stack (issue 12): `traceback.walk_stack`,
`StackSummary.extract(..., capture_locals=True)`, `frame.__getattribute__` with a built-up
name, `gc`.  The test's namespace holds only an opaque stand-in: nothing to read.  Handed
back to the tests (returned, or written into the test's own list), the stand-in is refused as
it crosses (NotPlainData, issue 22); turned into a number, it raises.  No step but the honest one passes."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line

FIND = ("    import traceback, sys\n    t = None\n    for fr, _ in traceback.walk_stack(sys._getframe()):\n"
        "        g = fr.__getattribute__('f_' + 'glob' + 'als')\n"
        "        if 'target' in g:\n            t = g['target']\n            break\n")
REPLIES = {
    "honest": "def f(x):\n    return x + 1\n",
    "returns_stack_target": "def f(x):\n" + FIND + "    return t\n",
    "float_of_stack_target": "def f(x):\n" + FIND + "    return float(t)\n",
    "array_of_stack_target": "def f(x):\n" + FIND + "    import numpy\n    return numpy.asarray(t, dtype=float)\n",
    "copy_of_stack_target": "def f(x):\n" + FIND + "    import copy\n    return copy.deepcopy(t)\n",
    "capture_locals": ("def f(x):\n    import traceback, sys\n"
                       "    s = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe()), capture_locals=True)\n"
                       "    vals = [fs.locals.get('target') for fs in s if fs.locals and 'target' in fs.locals]\n"
                       "    return float(vals[0]) if vals else 0.0\n"),
    "gc_scan": ("def f(x):\n    import gc, numpy\n"
                "    for o in gc.get_objects():\n"
                "        if isinstance(o, (float, numpy.ndarray)) and not isinstance(o, bool):\n"
                "            pass\n"
                "    cands = [o for o in gc.get_objects() if type(o).__name__ == '_Target']\n"
                "    return cands[0] if cands else 0.0\n"),
    # the stand-in's comparison turned on itself: a record whose computed side is the target
    "target_in_a_list": "def f(x):\n" + FIND + "    return [t][0]\n",
    # not returned but handed back through the test's own list: the record shows the stand-in
    "smuggled_via_argument": "def f(x):\n" + FIND + "    x.append(t)\n",
}
CASES = {"smuggled_via_argument": "out = []\nf(out)\nassert np.allclose(out[0], target)"}


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("stack-target", REPLIES, cases=CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "30")
    return out, steps, keys


@pytest.mark.parametrize("label,reason", [
    ("returns_stack_target", "NotPlainData: _Target, the test's target stand-in"),
    ("smuggled_via_argument", "NotPlainData: _Target, the test's target stand-in"),
    ("float_of_stack_target", "TypeError"),
    ("array_of_stack_target", "TypeError"),
    ("copy_of_stack_target", "NotPlainData: _Target, the test's target stand-in"),
    ("capture_locals", "ValueError: could not convert string to float: '<target>'"),   # locals as repr
    ("gc_scan", "NotPlainData: _Target, the test's target stand-in"),
    ("target_in_a_list", "NotPlainData: _Target, the test's target stand-in"),
])
def test_the_stack_holds_no_target(run, label, reason):
    out, steps, keys = run
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and reason in line and "[model]" in line, line


def test_only_the_honest_step_passes(run):
    out, steps, keys = run
    assert step_line(out, steps["honest"]).startswith("PASS")
    assert keys["steps_passed"] == f"1/{len(REPLIES)}" and keys["harness_fault_steps"] == "0"
