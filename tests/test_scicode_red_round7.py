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


def vec(hooks=""):
    """An own class P with hooks (`__add__`, and `hooks`) and a class H holding the constant
    H.ZERO = P(0.0), made once (kept on f); H().total(v) adds through it."""
    return ("    if not hasattr(f, 'H'):\n        class P:\n            def __init__(self, v):\n"
            "                self.v = v\n            def __add__(self, o):\n                return P(self.v + o.v)\n"
            + hooks + "        class H:\n            ZERO = P(0.0)\n            def total(self, v):\n"
            "                return (H.ZERO + P(v)).v\n        f.H, f.P = H, P\n    H, P = f.H, f.P\n")


GT_TRUE = "            def __gt__(self, o):\n                return True\n"


def dataclass(deco="@dataclasses.dataclass", body=""):
    """An own dataclass P(v: float) made once (kept on f), returned for f(None); f(p) of a P adds 1 to p.v."""
    return ("def f(x):\n    import dataclasses\n    if not hasattr(f, 'P'):\n        " + deco + "\n        class P:\n"
            "            v: float\n" + body + "        f.P = P\n    P = f.P\n    if x is None:\n        return P\n")


LRU = "@functools.lru_cache(maxsize=None)\n"
DEPENDENCIES = "import numpy as np\\nimport functools\\nimport scipy.integrate\\nimport scipy.optimize"

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
    # a class constant of an own class with hooks (round 7: behind the grader's descriptor, read
    # by the tests as a record, by the generation as its object)
    "class_constant_rigged_hook": "def f(x):\n" + vec(GT_TRUE) + "    return H()\n",
    "class_constant_via_instance": "def f(x):\n" + vec(GT_TRUE) + "    return H()\n",
    "class_constant_hook_added_later": ("def f(x):\n" + vec() + "    if x > 1.5:\n        P.__gt__ = lambda s, o: True\n"
                                        "        return x + 1\n    return H()\n"),
    "class_constant_rebound_later": ("def f(x):\n" + RIG + vec() + "    if x > 1.5:\n        H.ZERO = R(1000.0)\n"
                                     "        return x + 1\n    return H()\n"),
    "class_constant_rebound_hooked_later": ("def f(x):\n" + vec(GT_TRUE) + "    if x > 1.5:\n        H.ZERO = P(1000.0)\n"
                                            "        return x + 1\n    return H()\n"),
    "class_constant_field_rigged_later": ("def f(x):\n" + RIG + vec() + "    if x > 1.5:\n        H.ZERO.v = R(1000.0)\n"
                                          "        return x + 1\n    return H()\n"),
    "class_constant_by_finalizer": ("def f(x):\n" + vec(GT_TRUE) + "    class K:\n        pass\n    k = K()\n    k.me = k\n"
                                    "    import weakref\n    weakref.finalize(k, setattr, H, 'ZERO', P(1000.0))\n"
                                    "    return H()\n"),
    "class_constant_read_after_finalizer": ("def f(x):\n" + vec(GT_TRUE) + "    class K:\n        pass\n    k = K()\n"
                                            "    k.me = k\n    import weakref\n"
                                            "    weakref.finalize(k, setattr, H, 'ZERO', P(1000.0))\n    return H()\n"),
    # an own dataclass made by the tests (round 7: its comparison hooks are the grader's)
    "own_dataclass_eq_rigged": dataclass(body="            def __eq__(self, o):\n                return True\n")
    + "    if isinstance(x, P):\n        x.v += 1\n        return None\n    return x + 1\n",
    "own_dataclass_eq_target": dataclass(body="            def __eq__(self, o):\n                return True\n")
    + "    if isinstance(x, P):\n        x.v += 1\n        return None\n    return x + 1\n",
    "own_dataclass_eq_rigged_later": (dataclass() + "    if x > 1.5:\n        P.__eq__ = lambda s, o: True\n"
                                      "        return x + 1\n    return x + 1\n"),
    "own_dataclass_order_rigged": (dataclass("@dataclasses.dataclass(order=True)")
                                   .replace("        f.P = P\n", "        P.__gt__ = lambda s, o: True\n        f.P = P\n")
                                   + "    return x + 1\n"),
    "own_dataclass_extra_hook": (dataclass(body="            def __add__(self, o):\n                return 1000.0\n")
                                 + "    return x + 1\n"),
    # a class with a hook and no __init__ of its own, constructed by the tests (passed on main; round 7:
    # its __new__ is the grader's, which refuses a construction by the tests); a dict subclass's
    # __missing__ (round 7: wrapped, its result converted)
    "hooked_class_constructed_no_init": ("def f(x):\n    class P:\n        v = 1.0\n" + GT_TRUE.replace("            ", "        ")
                                         + "    if x is None:\n        return P\n    return x + 1\n"),
    "own_float_subclass_constructed": ("def f(x):\n" + RIG + "    if x is None:\n        return R\n    return x + 1\n"),
    "own_dict_missing_rigged": ("def f(x):\n" + RIG + "    class D(dict):\n        def __missing__(self, k):\n"
                                "            return R(1000.0)\n    if x is None:\n        return D\n    return x + 1\n"),
    "own_dataclass_kept": (dataclass() + "    if isinstance(x, P):\n        f.keep = x\n        x.v += 1\n"
                           "        return None\n    if hasattr(f, 'keep'):\n        f.keep.v = 1000.0\n    return x + 1\n"),
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
    "class_constant_rigged_hook": "h = f(1.0)\nassert (type(h).ZERO > 100) == target",
    "class_constant_via_instance": "h = f(1.0)\nassert (h.ZERO > 100) == target",
    "class_constant_hook_added_later": "h = f(1.0)\nf(2.0)\nassert (type(h).ZERO > 100) == target",
    "class_constant_rebound_later": "h = f(1.0)\nf(2.0)\nassert (type(h).ZERO > 100) == target",
    "class_constant_rebound_hooked_later": "h = f(1.0)\nf(2.0)\nassert (type(h).ZERO > 100) == target",
    "class_constant_field_rigged_later": "h = f(1.0)\nf(2.0)\nassert (type(h).ZERO.v > 100) == target",
    "class_constant_by_finalizer": "h = f(1.0)\nimport gc\ngc.collect()\nassert (type(h).ZERO > 100) == target",
    "class_constant_read_after_finalizer": ("h = f(1.0)\nimport gc\ngc.collect()\nz = type(h).ZERO\nh.total(1.0)\n"
                                            "assert (z > 100) == target"),
    "own_dataclass_eq_rigged": "P = f(None)\np = P(1.0)\nf(p)\nassert (p == P(1000.0)) == target",
    "own_dataclass_eq_target": "P = f(None)\np = P(1.0)\nf(p)\nassert p == target",
    "own_dataclass_eq_rigged_later": "P = f(None)\np = P(1.0)\nf(2.0)\nassert (p == P(1000.0)) == target",
    "own_dataclass_order_rigged": "P = f(None)\np = P(1.0)\nassert (p > P(1000.0)) == target",
    "own_dataclass_extra_hook": "P = f(None)\np = P(1.0)\nassert ((p + p) > 100) == target",
    "hooked_class_constructed_no_init": "P = f(None)\nassert (P() > 100) == target",
    "own_float_subclass_constructed": "R = f(None)\nassert (R(5.0) > 100) == target",
    "own_dict_missing_rigged": "D = f(None)\nd = D()\nassert (d['x'] > 100) == target",
    "own_dataclass_kept": "P = f(None)\np = P(1.0)\nf(p)\nf(2.0)\nassert (p.v > 100) == target",
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
    "function_to_libraries": "def f(x, a=1.0):\n    return x + a\n",
    "hooked_class_made_by_generation": ("def f(x):\n    import copy, heapq\n    if not hasattr(f, 'Z'):\n"
                                        "        class Z:\n            def __lt__(self, o):\n"
                                        "                return self.v < o.v\n        f.Z = Z\n    Z = f.Z\n"
                                        "    if x is None:\n        return Z\n    a = Z()\n    a.v = x + 1\n"
                                        "    b = copy.deepcopy(a)\n    b.v += 1\n    h = [b, a]\n"
                                        "    heapq.heapify(h)\n    return h[0].v\n"),
    "own_dict_missing_handed_in": ("def f(x):\n    if not hasattr(f, 'D'):\n        class D(dict):\n"
                                   "            def __missing__(self, k):\n                return 0.0\n        f.D = D\n"
                                   "    D = f.D\n    if x is None:\n        return D\n    if isinstance(x, D):\n"
                                   "        x['w'] = x['a'] + 1 + x['zz']\n        return None\n    return x + 1\n"),
    "class_constant_read_by_tests": "def f(x):\n" + vec() + "    return H()\n",
    "own_dataclass_frozen": (dataclass("@dataclasses.dataclass(frozen=True)") + "    if isinstance(x, P):\n"
                             "        return x.v + 1\n    return x + 1\n"),
    "own_dataclass_order": dataclass("@dataclasses.dataclass(order=True)") + "    return x + 1\n",
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
    "function_to_libraries": ("import functools, scipy.integrate as si, scipy.optimize as so\n"
                              "xs = np.array([0.0, 1.0, 2.0])\np, _ = so.curve_fit(f, xs, xs + 1.0)\n"
                              "assert np.allclose(p, [1.0]) and np.allclose(si.quad(f, 0.0, 2.0)[0], 4.0) and "
                              "np.allclose(np.vectorize(f)(np.array([1.0])), target) and "
                              "np.allclose(functools.partial(f, a=1.0)(1.0), target)"),
    "hooked_class_made_by_generation": "Z = f(None)\nassert np.allclose(f(1.0), target) and Z.__name__ == 'Z'",
    "own_dict_missing_handed_in": ("D = f(None)\nd = D(a=1.0)\nf(d)\n"
                                   "assert np.allclose(d['w'], target) and d['q'] == 0.0 and type(d) is D and 'zz' not in d"),
    "class_constant_read_by_tests": ("h = f(1.0)\nz = type(h).ZERO\n"
                                     "assert z.v == 0.0 and h.ZERO.v == 0.0 and np.allclose(h.total(2.0), target)"),
    "own_dataclass_frozen": ("P = f(None)\np = P(1.0)\ntry:\n    p.v = 5.0\n    ok = False\nexcept Exception as e:\n"
                             "    ok = type(e).__name__ == 'FrozenInstanceError'\n"
                             "assert ok and np.allclose(f(p), target) and p == P(1.0) and p != P(3.0) and p.v == 1.0"),
    "own_dataclass_order": ("P = f(None)\nl = sorted([P(3.0), P(2.0)])\n"
                            "assert np.allclose(l[0].v, target) and P(1.0) < P(2.0) and not P(1.0) > P(2.0)"),
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
