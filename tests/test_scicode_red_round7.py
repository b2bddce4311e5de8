"""Issue 22, round 7: honest generations refused before (the tests held a wrapper without the
function's attributes; an own descriptor class made its owner a record), made to pass by running
what the tests trigger as wrapped calls of generated code, and an attack twin for each route
opened.  Each attack must fail as the model's (FAIL [model], score 0); each honest row must pass.
Grouped in one grader run per table (fast)."""
import pytest

from test_scicode_plain_data import RIG
from test_scicode_support import one_step_set, run_one_step_set, step_line

TYPED = ("    class Typed:\n        def __set_name__(self, owner, name):\n            self.name = '_' + name\n"
         "        def __get__(self, obj, typ=None):\n            if obj is None:\n                return self\n"
         "            return {get}\n        def __set__(self, obj, v):\n"
         "            setattr(obj, self.name, float(v))\n")


def typed(get="getattr(obj, self.name)"):
    """A typed-attribute descriptor class (its __get__ returns `get`) and a class P(v) using it."""
    return (TYPED.format(get=get) + "    if not hasattr(f, 'P'):\n        class P:\n            v = Typed()\n"
            "            def __init__(self, v):\n                self.v = v\n        f.P = P\n    P = f.P\n")


LRU = "@functools.lru_cache(maxsize=None)\n"
DEPENDENCIES = "import numpy as np\\nimport functools"

ATTACKS = {
    # the function's attributes (round 7: readable through the wrapper the tests hold)
    "lru_cache_info_replaced": (LRU + "def f(x):\n" + RIG + "    if x > 1.5:\n"
                                "        f.cache_info = lambda: R(1000.0)\n    return x + 1\n"),
    "function_attribute_rigged": "def f(x):\n" + RIG + "    f.v = R(x + 1)\n    return x + 1\n",
    "function_attribute_kept": ("def f(x):\n    if x > 1.5:\n        f.box[0] = 1000.0\n        return x + 1\n"
                                "    f.box = [x + 1]\n    return x + 1\n"),
    "function_attribute_callable": "def f(x):\n" + RIG + "    f.g = lambda v: R(v + 1000)\n    return x + 1\n",
    "exposed_function_class_swapped": ("def f(x):\n    class Rig:\n        __slots__ = ()\n"
                                       "        def __call__(self, *a):\n            return 1000.0\n"
                                       "    if callable(x):\n        x.__class__ = Rig\n        return 0.0\n"
                                       "    return x + 1\n"),
    # an own descriptor class (round 7: its __get__/__set__ wrapped, its owner's objects copies)
    "descriptor_get_rigged": "def f(x):\n" + RIG + typed("R(getattr(obj, self.name))") + "    return P(x + 1)\n",
    "descriptor_object_kept": ("def f(x):\n" + typed() + "    if x > 1.5:\n        f.keep.v = 1000.0\n"
                               "        return x + 1\n    f.keep = P(x + 1)\n    return f.keep\n"),
    "descriptor_get_replaced_later": ("def f(x):\n" + RIG + typed() + "    if x > 1.5:\n"
                                      "        type(P.__dict__['v']).__get__ = lambda s, o, t=None: R(1000.0)\n"
                                      "        return x + 1\n    return P(x + 1)\n"),
    "descriptor_property_subclass": ("def f(x):\n" + RIG + "    class prop(property):\n        pass\n"
                                     "    class P:\n        v = prop(lambda self: R(1000.0))\n    return P()\n"),
    "descriptor_property_subclass_late": ("def f(x):\n" + RIG + "    class prop(property):\n        pass\n"
                                          "    if not hasattr(f, 'P'):\n        class P:\n            w = 2.0\n"
                                          "        f.P = P\n    if x > 1.5:\n"
                                          "        f.P.v = prop(lambda self: R(1000.0))\n        return x + 1\n"
                                          "    return f.P()\n"),
    "dynamic_class_attribute_late": ("def f(x):\n" + RIG + "    import types\n    if not hasattr(f, 'P'):\n"
                                     "        class P:\n            w = 2.0\n        f.P = P\n    if x > 1.5:\n"
                                     "        f.P.v = types.DynamicClassAttribute(lambda self: R(1000.0))\n"
                                     "        return x + 1\n    return f.P()\n"),
    "property_subclass_class_returned": ("def f(x):\n" + RIG + "    class prop(property):\n        pass\n"
                                         "    class P:\n        v = prop(lambda self: R(1000.0))\n    return P\n"),
}
ATTACK_CASES = {
    "lru_cache_info_replaced": "f(1.0)\nf(2.0)\nassert (f.cache_info() > 100) == target",
    "function_attribute_rigged": "f(1.0)\nassert (f.v > 100) == target",
    "function_attribute_kept": "f(1.0)\nb = f.box\nf(2.0)\nassert (b[0] > 100) == target",
    "function_attribute_callable": "f(1.0)\nassert (f.g(1.0) > 100) == target",
    "exposed_function_class_swapped": "f(f)\nassert (f(1.0) > 100) == target",
    "descriptor_get_rigged": "p = f(1.0)\nassert (p.v > 100) == target",
    "descriptor_object_kept": "p = f(1.0)\nf(2.0)\nassert (p.v > 100) == target",
    "descriptor_get_replaced_later": "p = f(1.0)\nf(2.0)\nassert (p.v > 100) == target",
    "descriptor_property_subclass": "p = f(1.0)\nassert (p.v > 100) == target",
    "descriptor_property_subclass_late": "p = f(1.0)\nf(2.0)\nassert (p.v > 100) == target",
    "dynamic_class_attribute_late": "p = f(1.0)\nf(2.0)\nassert (p.v > 100) == target",
    "property_subclass_class_returned": "P = f(1.0)\nassert (P().v > 100) == target",
}
# rows measured PASS (attack accepted) and not fixed: strict xfail with the reason
OPEN = {}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("red-r7", ATTACKS, target=True, cases=ATTACK_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=OPEN[k]))
                                   if k in OPEN else k for k in sorted(ATTACKS)])
def test_round7_attack_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_round7_attacks_no_harness_fault(attacks):
    rc, out, steps, keys = attacks
    assert rc == 1 and keys["harness_fault_steps"] == "0", out


HONEST = {
    "function_attribute_counter": "def f(x):\n    f.calls = getattr(f, 'calls', 0) + 1\n    return x + 1\n",
    "lru_cache_clear": LRU + "def f(x):\n    return x + 1\n",
    "function_passed_to_generated": "def f(x):\n    if callable(x):\n        return x(1.0)\n    return x + 1\n",
    "function_signature": "def f(x):\n    return x + 1\n",
    "descriptor_set_by_tests": "def f(x):\n" + typed() + "    return P(x + 1)\n",
    "descriptor_class_constructed_by_tests": "def f(x):\n" + typed() + "    if x is None:\n        return P\n    return x + 1\n",
}
HONEST_CASES = {
    "function_attribute_counter": "f(1.0)\nf(1.0)\nassert np.allclose(f(1.0), target) and f.calls == 3",
    "lru_cache_clear": ("f(1.0)\nf.cache_clear()\nf(1.0)\ni = f.cache_info()\n"
                        "assert np.allclose(f(1.0), target) and i.misses == 1 and i.hits == 0"),
    "function_passed_to_generated": "assert np.allclose(f(f), target) and np.allclose(f(1.0), target)",
    "function_signature": ("import inspect\nassert list(inspect.signature(f).parameters) == ['x'] "
                           "and f.__name__ == 'f' and np.allclose(f(1.0), target)"),
    "descriptor_set_by_tests": ("p = f(1.0)\nq = f(0.0)\np.v = 5\nassert p.v == 5.0 and type(p.v) is float "
                                "and np.allclose(q.v + 1, target) and np.allclose(f(1.0).v, target)"),
    "descriptor_class_constructed_by_tests": ("P = f(None)\np = P(1)\nassert type(p.v) is float and "
                                              "np.allclose(p.v + 1, target) and np.allclose(f(1.0), target)"),
}
# honest rows measured FAIL and not fixed: strict xfail with the reason
HONEST_OPEN = {}


@pytest.fixture(scope="module")
def honest():
    probs, h5, gen, steps = one_step_set("red-r7-honest", HONEST, cases=HONEST_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=HONEST_OPEN[k]))
                                   if k in HONEST_OPEN else k for k in sorted(HONEST)])
def test_round7_honest_passes(honest, label):
    rc, out, steps, keys = honest
    line = step_line(out, steps[label])
    assert line.startswith("PASS"), line
