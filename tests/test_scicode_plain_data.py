"""Issue 22 items 3 and 4: only plain data crosses from a step to the tests and to the judge,
converted by exact type and entirely; every callable a step defines is wrapped.

Each attack returns an object whose class (made by the generation) answers the test's own
arithmetic or comparison -- `(f(x) > 100) == target` with a boolean target, or a test without
`target` that decides its own `==` (dev problem 78's cases) -- through a door the previous
return check missed: a class registered where it looked up "library classes", a definition
that is a callable but not a plain function (staticmethod, partial, callable object,
np.vectorize), a rigged element past the first 256 items or three levels deep, or inside an
object array.  Each honest twin returns the same kind of thing honestly and must pass:
dataclass, namedtuple, Fraction, 0-d arrays (0-d stays 0-d), static methods, partials,
vectorized and cached functions, closures, the generation's own plain class."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line

# a rigged class made inside the function (module-level helpers are dropped by extraction)
RIG = ("    class R(float):\n"
       "        def __gt__(self, o):\n            return True\n"
       "        def __eq__(self, o):\n            return True\n"
       "        __hash__ = float.__hash__\n")
REGISTER = ("    import sys\n    R.__module__, R.__qualname__ = 'numpy', 'R_i22'\n"
            "    setattr(sys.modules['numpy'], 'R_i22', R)\n")

ATTACKS = {
    # the class registered where the old check looked up library classes
    "registered_library_class": "def f(x):\n" + RIG + REGISTER + "    return R(x + 1)\n",
    "registered_no_target": "def f(x):\n" + RIG + REGISTER + "    return R(x + 1)\n",
    # callables that are not plain functions were never wrapped
    "staticmethod_def": "@staticmethod\ndef f(x):\n" + RIG + "    return R(x + 1)\n",
    "partial_def": ("@(lambda g: __import__('functools').partial(g, 0))\ndef f(unused, x):\n" + RIG
                    + "    return R(x + 1)\n"),
    "callable_object_def": ("@(lambda g: type('C', (), {'__call__': lambda self, x: g(x)})())\ndef f(x):\n"
                            + RIG + "    return R(x + 1)\n"),
    "vectorize_def": "@(lambda g: np.vectorize(g, otypes=[object]))\ndef f(x):\n" + RIG + "    return R(x + 1)\n",
    # containers inspected partly: past the first 256 items, deeper than three levels
    "past_the_cut": "def f(x):\n" + RIG + "    return [0.0] * 300 + [R(x + 1)]\n",
    "four_deep": "def f(x):\n" + RIG + "    return [[[[R(x + 1)]]]]\n",
    "object_array": ("def f(x):\n" + RIG + "    a = np.empty(2, dtype=object)\n    a[0], a[1] = 0.0, R(x + 1)\n"
                     "    return a\n"),
    # a returned closure that hands back a rigged value
    "returned_closure": "def f(x):\n" + RIG + "    return lambda: R(x + 1)\n",
}
ATTACK_CASES = {
    "registered_library_class": "assert (f(1.0) > 100) == target",
    "registered_no_target": "assert f(1.0) == 100.0",
    "staticmethod_def": "assert (f(1.0) > 100) == target",
    "partial_def": "assert (f(1.0) > 100) == target",
    "callable_object_def": "assert (f(1.0) > 100) == target",
    "vectorize_def": "assert (f(1.0)[()] > 100) == target",
    "past_the_cut": "assert (f(1.0)[300] > 100) == target",
    "four_deep": "assert (f(1.0)[0][0][0][0] > 100) == target",
    "object_array": "assert (f(1.0)[1] > 100) == target",
    "returned_closure": "assert (f(1.0)() > 100) == target",
}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("plain-attacks", ATTACKS, target=True, cases=ATTACK_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", sorted(ATTACKS))
def test_rigged_value_through_every_door_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "NotPlainData" in line and "[model]" in line, line


def test_attacks_score_zero_and_do_not_void_the_run(attacks):
    rc, out, steps, keys = attacks
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0"), out


HONEST = {
    "dataclass": ("def f(x):\n    import dataclasses\n    @dataclasses.dataclass\n    class Res:\n"
                  "        value: float\n        label: str = 'ok'\n    return Res(x + 1)\n"),
    "namedtuple": "def f(x):\n    import collections\n    P = collections.namedtuple('P', 'v w')\n    return P(x + 1, 0)\n",
    "fraction_in_list": "def f(x):\n    from fractions import Fraction\n    return [Fraction(int(x) + 1, 1)]\n",
    "fraction": "def f(x):\n    from fractions import Fraction\n    return Fraction(int(x * 2) + 2, 2)\n",
    "zero_d_array": "def f(x):\n    return np.array(x + 1)\n",
    "zero_d_in_list": "def f(x):\n    return [np.array(x + 1), np.float64(x + 1)]\n",
    "staticmethod": "@staticmethod\ndef f(x):\n    return x + 1\n",
    "partial": "@(lambda g: __import__('functools').partial(g, 0))\ndef f(unused, x):\n    return x + 1\n",
    "vectorize": "@np.vectorize\ndef f(x):\n    return x + 1\n",
    "lru_cache": "@__import__('functools').lru_cache(maxsize=None)\ndef f(x):\n    return x + 1\n",
    "wraps_decorator": ("@(lambda g: __import__('functools').wraps(g)(lambda *a, **k: g(*a, **k)))\n"
                       "def f(x):\n    return x + 1\n"),
    "closure": "def f(x):\n    return lambda y: x + y\n",
    "own_plain_class": ("def f(x):\n    class Holder:\n        def __init__(self, v):\n            self.v = [v]\n"
                        "        def __repr__(self):\n            return 'Holder(%r)' % self.v\n"
                        "        def get(self):\n            return self.v[0]\n    return Holder(x + 1)\n"),
    "big_list": "def f(x):\n    return [x + 1] * 200000\n",
    "nested_dict_tuple": "def f(x):\n    return {'a': (x + 1, {'b': [x + 1]})}\n",
    "sparse": "def f(x):\n    import scipy.sparse as sp\n    return sp.csr_matrix(np.array([[x + 1]]))\n",
    "matrix": "def f(x):\n    return np.matrix([[x + 1]])\n",
    "generator": "def f(x):\n    return (v for v in [x + 1])\n",
}
HONEST_CASES = {
    "dataclass": "r = f(1.0)\nassert r.label == 'ok' and np.allclose(r.value, target)",
    "namedtuple": "v, w = f(1.0)\nassert np.allclose(f(1.0).v, target) and w == 0",
    "fraction_in_list": "assert np.allclose(f(1.0), target)",
    "fraction": "assert np.allclose(f(1.0), target) and f(1.0) == 2",
    "zero_d_array": "assert f(1.0).shape == () and np.allclose(f(1.0), target)",
    "zero_d_in_list": "assert np.allclose(f(1.0), target)",
    "vectorize": "assert np.allclose(f(1.0), target)",
    "closure": "assert np.allclose(f(1.0)(1.0), target)",
    "own_plain_class": "h = f(1.0)\nassert np.allclose(h.get(), target) and np.allclose(h.v[0], target)",
    "big_list": "assert np.allclose(f(1.0), target)",
    "nested_dict_tuple": "assert np.allclose(f(1.0)['a'][1]['b'], target)",
    "sparse": "assert np.allclose(f(1.0).toarray(), target)",
    "matrix": "assert np.allclose(f(1.0), target)",
    "generator": "assert np.allclose(list(f(1.0)), target)",
}


def test_honest_twins_pass():
    probs, h5, gen, steps = one_step_set("plain-honest", HONEST, cases=HONEST_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out


def test_honest_dataclass_compared_with_the_target_whole():
    """A dataclass handed to the comparison itself: recorded with its fields and judged in
    the grader as the official `==` would (a dataclass equals only one of its class)."""
    bodies = {"dc_eq": ("def f(x):\n    import dataclasses\n    @dataclasses.dataclass\n    class Res:\n"
                        "        value: float\n    return Res(x + 1)\n")}
    probs, h5, gen, steps = one_step_set("plain-dc-eq", bodies, cases={"dc_eq": "assert f(1.0) == target"})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    line = step_line(out, steps["dc_eq"])
    assert line.startswith("FAIL") and "AssertionError" in line and "[model]" in line, line


def test_too_deep_or_too_large_fails_with_its_reason():
    deep = "def f(x):\n    v = x + 1\n    for _ in range(40):\n        v = [v]\n    return v\n"
    bodies = {"deep_return": deep, "deep_record": deep}
    cases = {"deep_return": "assert f(1.0) is not None", "deep_record": "assert np.allclose(f(1.0), target)"}
    probs, h5, gen, steps = one_step_set("plain-deep", bodies, cases=cases)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    for label in bodies:
        line = step_line(out, steps[label])
        assert line.startswith("FAIL") and "NotPlainData: nested deeper than" in line, line
    assert keys["RESULT"] == "FAIL" and "harness indicted" not in out


def test_class_header_step_methods_of_every_kind_are_wrapped(tmp_path):
    """A class step (`class Solver:`): its static and class methods, properties and
    __call__ hand plain data to the tests; honest twins of each pass."""
    import json
    import test_scicode_support as sup
    cls = ("class Solver:\n    def __init__(self, x):\n        self.x = x\n"
           "    @staticmethod\n    def make(x):\n" + RIG.replace("    ", "        ", 1).replace("\n    ", "\n        ")
           + "        return R(x + 1)\n"
           "    @classmethod\n    def honest(cls, x):\n        return cls(x).value\n"
           "    @property\n    def value(self):\n        return self.x + 1\n"
           "    def __call__(self):\n        return self.x + 1\n")
    root = sup.tmpdir("plain-class")
    gen = root / "gen"
    gen.mkdir()
    cases = ["assert (Solver.make(1.0) > 100) == target",
             "assert np.allclose(Solver.honest(1.0), 2.0) and np.allclose(Solver(1.0).value, 2.0)",
             "assert np.allclose(Solver(1.0)(), 2.0)"]
    prob = {"problem_id": "850", "problem_name": "cls", "required_dependencies": "import numpy as np",
            "sub_steps": [{"step_number": "850.1", "function_header": "class Solver:\n    '''x'''",
                           "test_cases": cases, "step_description_prompt": "", "step_background": "",
                           "return_line": ""}]}
    probs = root / "problems.jsonl"
    probs.write_text(json.dumps(prob) + "\n")
    h5 = root / "targets.h5"
    sup.scicode_h5_encoding.write_targets(h5, {"850.1": [True, None, None]})
    (gen / "850.1.txt").write_text(cls)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    line = step_line(out, "850.1")
    assert line.startswith("FAIL") and "2/3 cases" in line and "NotPlainData" in line, out


# ---- found attacking the new return path with the source in hand ---------------------------
REDTEAM = {
    # its own ndarray subclass without hooks: numpy's reductions call the subclass's `max`
    "ndarray_subclass_method": ("def f(x):\n    class A(np.ndarray):\n        def max(self, *a, **k):\n"
                                "            return 1e9\n    return np.array([x + 1]).view(A)\n"),
    # a rigged object written into the test's own list (an "in-place result")
    "smuggled_into_argument": "def f(out):\n" + RIG + "    out.append(R(2.0))\n",
    # a metaclass answering `__flags__` to pass its class off as a static (C) type
    "metaclass_flags": ("def f(x):\n    class M(type):\n        __flags__ = 0\n" + RIG.replace("(float)", "(float, metaclass=M)")
                        + "    return R(x + 1)\n"),
    # a float subclass without hooks of its own but an `is_integer` the test calls
    "float_subclass_method": ("def f(x):\n    class F(float):\n        def is_integer(self):\n"
                              "            return False\n    return F(x + 1)\n"),
}
REDTEAM_CASES = {
    "ndarray_subclass_method": "assert (np.max(f(1.0)) > 100) == target",
    "smuggled_into_argument": "out = []\nf(out)\nassert (out[0] > 100) == target",
    "metaclass_flags": "assert (f(1.0) > 100) == target",
    "float_subclass_method": "assert (not f(1.0).is_integer()) == target",
}


def test_redteam_doors_fail():
    probs, h5, gen, steps = one_step_set("plain-redteam", REDTEAM, target=True, cases=REDTEAM_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    passed = [step_line(out, steps[k]) for k in REDTEAM if step_line(out, steps[k]).startswith("PASS")]
    assert not passed, "\n".join(passed)
    assert (rc, keys["SCORE"]) == (1, "0.0"), out


IN_PLACE = {
    "fills_list": "def f(out):\n    out.extend([2.0, np.float64(2.0)])\n",
    "fills_array": "def f(out):\n    out[:] = 2.0\n",
    "fills_dict": "def f(out):\n    out['v'] = np.array(2.0)\n",
    "own_subclass_as_data": "def f(x):\n    class V(list):\n        pass\n    return V([x + 1])\n",
}
IN_PLACE_CASES = {
    "fills_list": "out = []\nf(out)\nassert np.allclose(out, target)",
    "fills_array": "out = np.zeros(3)\nf(out)\nassert np.allclose(out, target)",
    "fills_dict": "out = {}\nf(out)\nassert out['v'].shape == () and np.allclose(out['v'], target)",
    "own_subclass_as_data": "assert np.allclose(f(1.0), target)",
}


def test_in_place_results_pass():
    probs, h5, gen, steps = one_step_set("plain-inplace", IN_PLACE, cases=IN_PLACE_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in IN_PLACE if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)


# ---- second pass: library objects that hold or forward to a generation's object -----------
LIBRARY_HOLDERS = {
    "userdict": "def f(x):\n" + RIG + "    import collections\n    return collections.UserDict(v=R(x + 1))\n",
    "chainmap": "def f(x):\n" + RIG + "    import collections\n    return collections.ChainMap({'v': R(x + 1)})\n",
    "namespace": "def f(x):\n" + RIG + "    import argparse\n    return argparse.Namespace(v=R(x + 1))\n",
    "weakref_proxy": ("def f(x):\n" + RIG + "    import weakref\n    r = R(x + 1)\n    f.keep = r\n"
                      "    return {'v': weakref.proxy(r)}\n"),
    "mappingproxy": "def f(x):\n" + RIG + "    import types\n    return types.MappingProxyType({'v': R(x + 1)})\n",
}
HOLDER_CASES = {k: "assert (f(1.0)['v'] > 100) == target" for k in LIBRARY_HOLDERS}
HOLDER_CASES["namespace"] = "assert (f(1.0).v > 100) == target"


def test_library_objects_holding_a_rigged_object_fail():
    probs, h5, gen, steps = one_step_set("plain-holders", LIBRARY_HOLDERS, target=True, cases=HOLDER_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    passed = [step_line(out, steps[k]) for k in LIBRARY_HOLDERS if step_line(out, steps[k]).startswith("PASS")]
    assert not passed, "\n".join(passed)


HONEST_HOLDERS = {
    "userdict": "def f(x):\n    import collections\n    return collections.UserDict(v=x + 1)\n",
    "namespace": "def f(x):\n    import argparse\n    return argparse.Namespace(v=np.array(x + 1))\n",
    "optimize_result": ("def f(x):\n    import scipy.optimize as so\n"
                        "    return so.minimize_scalar(lambda y: (y - x - 1) ** 2)\n"),
}
HONEST_HOLDER_CASES = {"userdict": "assert np.allclose(f(1.0)['v'], target)",
                       "namespace": "assert np.allclose(f(1.0).v, target)",
                       "optimize_result": "assert np.allclose(f(1.0).x, target)"}


def test_honest_library_objects_pass():
    probs, h5, gen, steps = one_step_set("plain-holders-honest", HONEST_HOLDERS, cases=HONEST_HOLDER_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST_HOLDERS if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
