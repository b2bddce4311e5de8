"""Attack class: patching numpy below the guarded names (issue 12).  `np.allclose` calls
`numpy._core.numeric.isclose` and `.all` internally; a generation that rebinds them (or
numpy's ufuncs' Python-level helpers) made the old in-process comparison answer True.
Here the comparison that decides a case runs in the grader's process on recorded data:
every such step fails (and the honest one passes)."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line

REPLIES = {
    "honest": "def f(x):\n    return x + 1\n",
    "patches_core_isclose": ("def f(x):\n    import numpy._core.numeric as n, numpy\n"
                             "    n.isclose = lambda *a, **k: numpy.ones(1, dtype=bool)\n"
                             "    n.all = lambda *a, **k: True\n    return 0.0\n"),
    "patches_core_allclose_dict": ("def f(x):\n    import numpy._core.numeric as n\n"
                                   "    n.__dict__['allclose'] = lambda *a, **k: True\n"
                                   "    n.__dict__['isclose'] = lambda *a, **k: True\n    return 0.0\n"),
    "patches_ufunc_helpers": ("def f(x):\n    import numpy._core._methods as m\n"
                              "    m._all = lambda *a, **k: True\n    m._any = lambda *a, **k: True\n"
                              "    return 0.0\n"),
    "patches_shim_internals": ("def f(x):\n    import sys\n    c = sys.modules['scicode.compare.cmp']\n"
                               "    c.np = type('N', (), {'allclose': staticmethod(lambda *a, **k: True)})\n"
                               "    return 0.0\n"),
}
CASES = {"patches_shim_internals": "from scicode.compare.cmp import cmp_tuple_or_list\n"
                                   "assert cmp_tuple_or_list([f(1.0)], [target])"}


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("numpy-internals", REPLIES, cases=CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "30")
    return out, steps, keys, doc


@pytest.mark.parametrize("label", [k for k in REPLIES if k != "honest"])
def test_patched_internals_fail_the_step(run, label):
    out, steps, keys, doc = run
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line
    case = doc["steps"][steps[label]]["cases"][0]       # judged by the grader (the shim's module, which
    assert not case["ok"], case                         # the tests import, is checked at every return: there
    assert ("AssertionError" in case["error"] and "is False" in case["error"]) or \
        (label == "patches_shim_internals" and case["error"].startswith("Tampering")), case   # the call fails)
    # since every loaded module is watched after each case, the rebinding is Tampering too
    assert "Tampering" in line and "rebound" in line, line


def test_honest_step_passes_and_the_run_is_graded(run):
    out, steps, keys, doc = run
    assert step_line(out, steps["honest"]).startswith("PASS")
    assert keys["steps_passed"] == f"1/{len(REPLIES)}" and keys["harness_fault_steps"] == "0"
