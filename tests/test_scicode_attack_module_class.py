"""Attack class: swapping a module's class (issue 12): `np.__class__ = Sub`, where Sub's
`__getattribute__` answers `allclose` (or the shim's comparators) with a fake for callers in
test code only; the old tamper snapshot read through getattr and saw the real function.
A fake comparator records nothing: the case's comparisons with the target are missing and
the case fails.  Never a pass, never a harness fault."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line

SWAP = ("def f(x):\n    import sys, types\n    mod = sys.modules[{mod!r}]\n"
        "    real = type(mod)\n"
        "    class Sub(types.ModuleType):\n"
        "        def __getattribute__(self, name):\n"
        "            if name in {names!r} and sys._getframe(1).f_code.co_filename.startswith('<test'):\n"
        "                return lambda *a, **k: True\n"
        "            return real.__getattribute__(self, name)\n"
        "    mod.__class__ = Sub\n    return 0.0\n")
REPLIES = {
    "honest": "def f(x):\n    return x + 1\n",
    "numpy_class_swap": SWAP.format(mod="numpy", names=("allclose", "isclose")),
    "shim_class_swap": SWAP.format(mod="scicode.compare.cmp", names=("cmp_tuple_or_list",)),
    # the stand-in's own class patched: its comparison records nothing
    "standin_eq_patched": ("def f(x):\n    import sys\n    fr = sys._getframe(1)\n"
                           "    while not fr.f_code.co_filename.startswith('<test'):\n        fr = fr.f_back\n"
                           "    type(fr.f_globals['target']).__eq__ = lambda s, o: True\n    return 0.0\n"),
    # ... or its comparison's code swapped in place (same function object)
    "standin_code_swapped": ("def f(x):\n    import sys\n    fr = sys._getframe(1)\n"
                             "    while not fr.f_code.co_filename.startswith('<test'):\n        fr = fr.f_back\n"
                             "    type(fr.f_globals['target']).__eq__.__code__ = (lambda s, o: True).__code__\n"
                             "    return 0.0\n"),
}
CASES = {"shim_class_swap": "from scicode.compare.cmp import cmp_tuple_or_list\n"
                            "assert cmp_tuple_or_list([f(1.0)], [target])",
         "standin_eq_patched": "assert f(1.0) == target",
         "standin_code_swapped": "assert f(1.0) == target"}


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("module-class", REPLIES, cases=CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "30")
    return out, steps, keys


@pytest.mark.parametrize("label", [k for k in REPLIES if k != "honest"])
def test_swapped_class_fails_the_step(run, label):
    out, steps, keys = run
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line
    assert "RecordMismatch" in line or "Tampering" in line or "AssertionError" in line, line


def test_the_run_is_graded(run):
    out, steps, keys = run
    assert step_line(out, steps["honest"]).startswith("PASS")
    assert keys["steps_passed"] == f"1/{len(REPLIES)}" and keys["harness_fault_steps"] == "0"
