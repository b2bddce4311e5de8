"""The extraction law end to end (seed: "Submitted function extracted via
extract_function_name + get_function_from_code"; problem_spec.md step 2): what of a reply
runs, and which imports a step gets.  One grader run, one reply per step; the problem's
required_dependencies are `import numpy as np`; the test is `np.allclose(f(1.0), target)`."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line

REPLIES = {
    # a correct reply that relies on the problem's required_dependencies only
    "uses_dependencies": "```python\ndef f(x):\n    return np.float64(x) + 1\n```",
    # the reply's own top-level imports are not part of the extracted function (upstream's
    # extract_python_script strips every import line too): a module outside the
    # dependencies is a NameError, the model's fault
    "top_level_extra_import": "```python\nimport math\ndef f(x):\n    return math.floor(x) + 1.0\n```",
    # an import inside the function survives extraction (ast.unparse keeps the body);
    # upstream's import-stripping regex would remove it: this grader is more lenient here
    "import_inside_body": "```python\ndef f(x):\n    import math\n    return math.floor(x) + 1.0\n```",
    # module-level helpers are dropped with everything outside the named definition
    "helper_outside": "```python\ndef _g(x):\n    return x + 1\n\ndef f(x):\n    return _g(x)\n```",
    # a helper nested in the function is part of it
    "helper_nested": "```python\ndef f(x):\n    def _g(y):\n        return y + 1\n    return _g(x)\n```",
    # defined twice: the last top-level definition is what running the reply binds
    "defined_twice": "```python\ndef f(x):\n    return 0.0\n\ndef f(x):\n    return x + 1\n```",
    # a draft block, then the corrected block: the last block defining it wins
    "two_blocks": "Draft:\n```python\ndef f(x):\n    return 0.0\n```\nFixed:\n```python\ndef f(x):\n    return x + 1\n```",
    # decorators come with the definition; one from the dependencies works
    "decorator_from_dependencies": "```python\n@np.vectorize\ndef f(x):\n    return x + 1\n```",
    # a decorator from a module the reply imported itself: NameError when defined
    "decorator_extra_import": "```python\nimport functools\n@functools.lru_cache(None)\ndef f(x):\n    return x + 1\n```",
    # async def matches a def header, but calling it returns a coroutine: a wrong answer
    "async_def": "```python\nasync def f(x):\n    return x + 1\n```",
    # legitimate return values of library and builtin types pass the rigged-class check
    "returns_library_types": ("```python\nimport collections\ndef f(x):\n    import scipy.sparse, scipy.optimize\n"
                              "    P = collections.namedtuple('P', 'v') if False else None\n"
                              "    s = scipy.sparse.csr_matrix(np.eye(1))\n"
                              "    r = scipy.optimize.OptimizeResult(x=x + 1)\n"
                              "    return [np.float64(r.x), s.toarray()[0, 0] + x][0]\n```"),
    "returns_own_namedtuple": ("```python\ndef f(x):\n    from collections import namedtuple\n"
                               "    P = namedtuple('P', 'a')\n    return P(x + 1)\n```"),
    # the generation's own use of numpy.allclose gets numpy's answer (allclose([], 0) is
    # True); only the tests' verdict comparisons refuse a vacuous pass
    "own_vacuous_allclose": ("```python\ndef f(x):\n    e = np.array([])\n"
                             "    return x + 1 if np.allclose(e, 0.0) and np.isclose(e, 1.0).size == 0 else 0.0\n```"),
    # module-level code (a print of the pass marker, a sys.exit) never runs
    "module_level_noise": ("```python\nimport sys\ndef f(x):\n    return x + 1\nprint('SCICODE_PASS')\n"
                           "sys.exit(0)\n```"),
}


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("protocol", REPLIES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "30")
    return out, steps


@pytest.mark.parametrize("label,expected", [
    ("uses_dependencies", "PASS"),
    ("top_level_extra_import", "FAIL", ),
    ("import_inside_body", "PASS"),
    ("helper_outside", "FAIL"),
    ("helper_nested", "PASS"),
    ("defined_twice", "PASS"),
    ("two_blocks", "PASS"),
    ("decorator_from_dependencies", "PASS"),
    ("decorator_extra_import", "FAIL"),
    ("async_def", "FAIL"),
    ("module_level_noise", "PASS"),
    ("own_vacuous_allclose", "PASS"),
    ("returns_library_types", "PASS"),
    ("returns_own_namedtuple", "PASS"),
])
def test_extraction_law(run, label, expected):
    out, steps = run
    assert step_line(out, steps[label]).startswith(expected), step_line(out, steps[label])


@pytest.mark.parametrize("label,reason", [
    ("top_level_extra_import", "case 1: NameError: name 'math' is not defined [model]"),
    ("helper_outside", "case 1: NameError: name '_g' is not defined [model]"),
    ("decorator_extra_import", "code: NameError: name 'functools' is not defined [model]"),
    ("async_def", "a coroutine object cannot be compared outside the step's process [model]"),
])
def test_extraction_failures_are_the_models(run, label, reason):
    out, steps = run
    assert reason in step_line(out, steps[label])
