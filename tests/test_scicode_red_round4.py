"""Issue 22 item 3, round 4, second engineer: attacks on the copy semantics of round 4 (what
crossed is a copy the grader made; what is handed to generated code is a copy written back),
with the source in hand.  Each attack must fail as the model's (FAIL [model], score 0); the
honest twins beside them must pass.  Grouped in one grader run per table (fast)."""
import pytest

from test_scicode_plain_data import RIG
from test_scicode_support import one_step_set, run_one_step_set, step_line

ATTACKS = {
    # a mutable object inside an immutable argument: the tuple was handed over as it is, its
    # inner list never copied nor written back converted
    "tuple_inner_list_in_place": ("def f(x):\n" + RIG + "    if type(x) is tuple:\n        x[0][0] = R(5.0)\n"
                                  "        return 0.0\n    return x + 1\n"),
    "tuple_inner_list_kept": ("def f(x):\n" + RIG + "    if type(x) is tuple:\n        f.keep = x[0]\n        return 0.0\n"
                              "    f.keep[0] = R(x)\n    return x + 1\n"),
    "tuple_inner_array_kept": ("def f(x):\n    if type(x) is tuple:\n        f.keep = x[0]\n        return 0.0\n"
                               "    f.keep[0] = 1e3\n    return x + 1\n"),
    # a library container handed over as it is (static type: deque; heap type: UserDict)
    "deque_in_place": ("def f(x):\n" + RIG + "    import collections\n    if type(x) is collections.deque:\n"
                       "        x[0] = R(5.0)\n        return 0.0\n    return x + 1\n"),
    "userdict_in_place": ("def f(x):\n" + RIG + "    import collections\n    if isinstance(x, collections.UserDict):\n"
                          "        x['v'] = R(5.0)\n        return 0.0\n    return x + 1\n"),
    "userdict_kept": ("def f(x):\n" + RIG + "    import collections\n    if isinstance(x, collections.UserDict):\n"
                      "        f.keep = x\n        return 0.0\n    f.keep['v'] = R(x)\n    return x + 1\n"),
    # the same list passed twice: both copies written back, both converted
    "aliased_arguments": ("def f(x, y=None):\n" + RIG + "    if y is not None:\n        x[0] = R(5.0)\n        y[0] = 1.0\n"
                          "        return 0.0\n    return x + 1\n"),
    # an unwrapped __new__ answers the test's constructor call with anything
    "dunder_new": ("def f(x):\n" + RIG + "    class H:\n        def __new__(cls, *a):\n"
                   "            return object.__new__(cls) if not a else R(a[0] + 100)\n    return H()\n"),
    # a context manager's (unwrapped) __enter__
    "dunder_enter": ("def f(x):\n" + RIG + "    class H:\n        def __enter__(self):\n            return R(x + 100)\n"
                     "        def __exit__(self, *a):\n            return False\n    return H()\n"),
    # copy.deepcopy of a returned own object runs its (unwrapped) __reduce_ex__ / __deepcopy__
    "dunder_deepcopy": ("def f(x):\n" + RIG + "    class H:\n        def __deepcopy__(self, memo):\n"
                        "            return R(x + 100)\n    h = H()\n    h.v = x + 1\n    return h\n"),
    "dunder_reduce": ("def f(x):\n" + RIG + "    class H:\n        def __reduce__(self):\n"
                      "            return (R, (x + 100,))\n    h = H()\n    h.v = x + 1\n    return h\n"),
    # an own class with a library base that has an __init__ (argparse.Namespace): `self` of a
    # method the test calls is not copied in; kept, rewritten by a later call
    "library_base_keeps_self": ("def f(x):\n" + RIG + "    import argparse\n    class H(argparse.Namespace):\n"
                                "        def g(self):\n            f.keep = self\n            return 0.0\n"
                                "    if x > 1.5:\n        f.keep.v = R(x)\n        return x + 1\n    return H(v=x + 1)\n"),
    # a class attribute of the step's own class, read through an object the test made
    "class_attribute": "def f(x):\n" + RIG + "    class H:\n        v = R(1000.0)\n    return H()\n",
    # a class attribute rebound / a class-level list filled by a later call, after the object crossed
    "class_attribute_later": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            v = 2.0\n"
                              "            box = [2.0]\n        f.H = H\n    if x > 1.5:\n        f.H.v = R(x)\n"
                              "        f.H.box[0] = R(x)\n        return x + 1\n    return f.H()\n"),
    # the class of an object that crossed changed by a later call, no object of it crossing after:
    # a method added, a property added, a comparison hook added
    "late_method_no_crossing": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            pass\n"
                                "        f.H = H\n    if x > 1.5:\n        f.H.g = lambda self: R(x)\n        return x + 1\n"
                                "    return f.H()\n"),
    "late_property": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            pass\n"
                      "        f.H = H\n    if x > 1.5:\n        f.H.v = property(lambda self: R(x))\n        return x + 1\n"
                      "    return f.H()\n"),
    "late_hook": ("def f(x):\n    if not hasattr(f, 'H'):\n        class H:\n            pass\n"
                  "        f.H = H\n    if x > 1.5:\n        f.H.__gt__ = lambda self, o: True\n        return x + 1\n"
                  "    return f.H()\n"),
    # the same, by a finalizer that gc runs in the middle of the test's code (no wrapped call)
    "late_hook_by_finalizer": ("def f(x):\n    class H:\n        pass\n    class K:\n        pass\n"
                               "    k = K()\n    k.me = k\n    import weakref\n"
                               "    weakref.finalize(k, setattr, H, '__gt__', lambda self, o: True)\n    return H()\n"),
    # a metaclass of its own whose (unwrapped) __call__ answers the test's constructor call
    "metaclass_call": ("def f(x):\n" + RIG + "    class M(type):\n        def __call__(cls, *a):\n"
                       "            return R(a[0] + 100) if a else type.__call__(cls)\n"
                       "    class H(metaclass=M):\n        pass\n    return H()\n"),
    # an exception raised to the tests, caught, its argument / attribute compared
    "raised_exception_args": ("def f(x):\n" + RIG + "    raise ValueError(R(x + 100))\n"),
    "raised_own_exception": ("def f(x):\n" + RIG + "    class X(Exception):\n        pass\n    e = X('no')\n"
                             "    e.v = R(x + 100)\n    raise e\n"),
    # an attribute name that is a str subclass: its __eq__ runs at the test's attribute lookup on
    # the copy, outside any wrapped call, and fills the copy's dict (found with gc) with R
    "str_subclass_attribute_name": (
        "def f(x):\n" + RIG + "    import gc\n    class S(str):\n        def __eq__(self, o):\n"
        "            for d in gc.get_referrers(self):\n                if type(d) is dict and 'w' not in d:\n"
        "                    d['w'] = R(1000.0)\n            return str.__eq__(self, o)\n"
        "        __hash__ = str.__hash__\n    class H:\n        pass\n    h = H()\n"
        "    h.__dict__[S('v')] = x + 1\n    return h\n"),
    "raised_hooked_exception": ("def f(x):\n" + RIG + "    class X(Exception):\n        def __reduce__(self):\n"
                                "            return (X, ())\n    e = X('no')\n    e.v = [R(x + 100)]\n    raise e\n"),
    # slots only, a class attribute that is an object (no instance dict to hold a copy)
    "slots_class_attribute": ("def f(x):\n" + RIG + "    class H:\n        __slots__ = ('w',)\n        v = [R(1000.0)]\n"
                              "    h = H()\n    h.w = x\n    return h\n"),
}
ATTACK_CASES = {
    "tuple_inner_list_in_place": "a = ([2.0],)\nf(a)\nassert (a[0][0] > 100) == target",
    "tuple_inner_list_kept": "a = ([2.0],)\nf(a)\nf(2.0)\nassert (a[0][0] > 100) == target",
    "tuple_inner_array_kept": "a = (np.array([2.0]),)\nf(a)\nf(2.0)\nassert (a[0][0] > 100) == target",
    "deque_in_place": "import collections\nd = collections.deque([2.0])\nf(d)\nassert (d[0] > 100) == target",
    "userdict_in_place": "import collections\nd = collections.UserDict(v=2.0)\nf(d)\nassert (d['v'] > 100) == target",
    "userdict_kept": "import collections\nd = collections.UserDict(v=2.0)\nf(d)\nf(2.0)\nassert (d['v'] > 100) == target",
    "aliased_arguments": "a = [2.0]\nf(a, a)\nassert (a[0] > 100) == target",
    "dunder_new": "H = type(f(1.0))\nassert (H(1.0) > 100) == target",
    "dunder_enter": "with f(1.0) as r:\n    v = r\nassert (v > 100) == target",
    "dunder_deepcopy": "import copy\nassert (copy.deepcopy(f(1.0)) > 100) == target",
    "dunder_reduce": "import copy\nassert (copy.copy(f(1.0)) > 100) == target",
    "library_base_keeps_self": "h = f(1.0)\nh.g()\nf(2.0)\nassert (h.v > 100) == target",
    "class_attribute": "assert (f(1.0).v > 100) == target",
    "class_attribute_later": "h = f(1.0)\nf(2.0)\nassert (h.v > 100 and h.box[0] > 100) == target",
    "slots_class_attribute": "assert (f(1.0).v[0] > 100) == target",
    "str_subclass_attribute_name": "h = f(1.0)\nh.v\nassert (h.w > 100) == target",
    "raised_hooked_exception": "try:\n    f(1.0)\nexcept Exception as e:\n    r = e.v[0]\nassert (r > 100) == target",
    "metaclass_call": "H = type(f(1.0))\nassert (H(1.0) > 100) == target",
    "raised_exception_args": "try:\n    f(1.0)\nexcept ValueError as e:\n    r = e.args[0]\nassert (r > 100) == target",
    "raised_own_exception": "try:\n    f(1.0)\nexcept Exception as e:\n    r = e.v\nassert (r > 100) == target",
    "late_method_no_crossing": "h = f(1.0)\nf(2.0)\nassert (h.g() > 100) == target",
    "late_property": "h = f(1.0)\nf(2.0)\nassert (h.v > 100) == target",
    "late_hook": "h = f(1.0)\nf(2.0)\nassert (h > 100) == target",
    "late_hook_by_finalizer": "h = f(1.0)\nimport gc\ngc.collect()\nassert (h > 100) == target",
}
# rows measured PASS (attack accepted) and not fixed yet: strict xfail with the reason (the two
# rows of this round, a library object handed in and kept, an own object on a library base keeping
# `self`, are closed: both are handed to generated code as copies, written back after the call)
OPEN = {}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("red-r4", ATTACKS, target=True, cases=ATTACK_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=OPEN[k]))
                                   if k in OPEN else k for k in sorted(ATTACKS)])
def test_round4_attack_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_round4_attacks_fail_the_run(attacks):
    rc, out, steps, keys = attacks
    assert rc == 1 and keys["RESULT"] == "FAIL", out
    assert "harness" not in out.split("census.verdict")[-1].splitlines()[0], out


def test_round4_attacks_score_zero(attacks):
    rc, out, steps, keys = attacks
    assert keys["SCORE"] == "0.0", out


HONEST = {
    # class constants read through the object (an array, a counter the class keeps) and a method
    # a heap node class that counts its objects on the class (its namespace changes each call)
    "hooked_class_counter": ("def f(x):\n    import heapq\n    if not hasattr(f, 'N'):\n        class N:\n"
                             "            count = 0\n            def __init__(self, v):\n                self.v = v\n"
                             "                N.count += 1\n            def __lt__(self, o):\n                return self.v < o.v\n"
                             "        f.N = N\n    h = []\n    for v in (x + 2, x + 1):\n        heapq.heappush(h, f.N(v))\n"
                             "    return heapq.heappop(h)\n"),
    # a method added to the class by a later call (monkeypatching), then called by the test
    "late_method": ("def f(x):\n    if not hasattr(f, 'H'):\n        class H:\n            pass\n        f.H = H\n"
                    "    if x > 1.5:\n        f.H.g = lambda self: self.v\n        return x + 1\n    h = f.H()\n    h.v = x + 1\n"
                    "    return h\n"),
    # an exception the test expects, its message and value read; a metaclass with an honest __call__
    "raised_exception": ("def f(x):\n    class X(ValueError):\n        pass\n    if x < 0:\n"
                         "        e = X('negative', x)\n        e.v = x + 3\n        raise e\n    return x + 1\n"),
    "metaclass_call": ("def f(x):\n    class M(type):\n        def __call__(cls, *a):\n            o = type.__call__(cls)\n"
                       "            o.v = a[0] + 1 if a else 0.0\n            return o\n"
                       "    class H(metaclass=M):\n        pass\n    return H(x)\n"),
    "class_constants": ("def f(x):\n    class H:\n        coeffs = np.array([x + 1, 0.0])\n        n = 0\n"
                        "        def __init__(self):\n            H.n += 1\n        def scale(self):\n"
                        "            return self.coeffs[0] * H.n\n    return H()\n"),
    "slots_class_constant": ("def f(x):\n    class H:\n        __slots__ = ('w',)\n        k = 2.0\n"
                             "    h = H()\n    h.w = x\n    return h\n"),
    # in-place results through a tuple of arrays / lists (the tuple's items are the caller's)
    "tuple_of_arrays_in_place": ("def f(x):\n    if type(x) is tuple:\n        a, b = x\n        a += b\n        b[0] = 0.0\n"
                                 "        return None\n    return x + 1\n"),
    "tuple_of_lists_in_place": ("def f(x):\n    if type(x) is tuple:\n        x[0].append(x[1][0] + 1)\n        return None\n"
                                "    return x + 1\n"),
    "deque_in_place": ("def f(x):\n    import collections\n    if type(x) is collections.deque:\n"
                       "        x.append(x[0] + 1)\n        return None\n    return x + 1\n"),
    "userdict_in_place": ("def f(x):\n    import collections\n    if isinstance(x, collections.UserDict):\n"
                          "        x['w'] = x['v'] + 1\n        return None\n    return x + 1\n"),
    "returns_its_argument": ("def f(x):\n    if not np.isscalar(x):\n        x[0] = x[0] + 1\n        return x\n"
                             "    return x + 1\n"),
    "aliased_arguments": "def f(x, y=None):\n    if y is not None:\n        x[0] = x[0] + 1\n        return None\n    return x + 1\n",
    # a class the test constructs, with a __new__ of its own (and one with __deepcopy__)
    "dunder_new": ("def f(x):\n    class H:\n        def __new__(cls, *a):\n            return super().__new__(cls)\n"
                   "        def __init__(self, v):\n            self.v = v + 1\n    return H(x)\n"),
    "context_manager": ("def f(x):\n    class H:\n        def __enter__(self):\n            return self.v\n"
                        "        def __exit__(self, *a):\n            return False\n    h = H()\n    h.v = x + 1\n    return h\n"),
    "dunder_deepcopy": ("def f(x):\n    import copy\n    class H:\n        def __deepcopy__(self, memo):\n"
                        "            n = H()\n            n.v = copy.deepcopy(self.v, memo)\n            return n\n"
                        "    h = H()\n    h.v = x + 1\n    return h\n"),
    "dataclass": ("def f(x):\n    import dataclasses\n    @dataclasses.dataclass(order=True)\n    class P:\n        v: float\n"
                  "        w: float = 0.0\n    return sorted([P(x + 1), P(x)])\n"),
    "namedtuple": ("def f(x):\n    import collections\n    P = collections.namedtuple('P', 'v w')\n"
                   "    return P(x + 1, x)\n"),
    "enum_in_step": ("def f(x):\n    import enum\n    class E(enum.Enum):\n        A = 1\n        B = 2\n"
                     "    e = E.B if x > 0 else E.A\n    return float(e is E.B and e == E.B) + x\n"),
    "heap_tuples": ("def f(x):\n    import heapq\n    h = []\n    for i, v in enumerate((x + 3, x + 1, x + 2)):\n"
                    "        heapq.heappush(h, (v, i, [v]))\n    return [heapq.heappop(h) for _ in range(3)]\n"),
    "masked_in_place": ("def f(x):\n    if isinstance(x, np.ma.MaskedArray):\n        x[0] = x[0] + 1\n        return x\n"
                        "    return x + 1\n"),
    "sympy": ("def f(x):\n    import sympy\n    s = sympy.Symbol('s')\n"
              "    return float(sympy.integrate(s, (s, 0, 2)).evalf()) + x - 1\n"),
}
HONEST_CASES = {
    "raised_exception": ("try:\n    f(-1.0)\n    ok = False\nexcept ValueError as e:\n"
                         "    ok = 'negative' in str(e) and e.args[1] == -1.0\n    v = e.v\nassert ok and np.allclose(v, target)"),
    "metaclass_call": "H = type(f(0.0))\nassert np.allclose(H(1.0).v, target) and np.allclose(f(1.0).v, 2.0)",
    "hooked_class_counter": "f(0.0)\nassert np.allclose(f(1.0).v, target)",
    "late_method": "h = f(1.0)\nf(2.0)\nassert np.allclose(h.g(), target)",
    "class_constants": "h = f(1.0)\nassert h.n == 1 and np.allclose(h.coeffs[0], target) and np.allclose(h.scale(), target)",
    "slots_class_constant": "assert np.allclose(f(1.0).w * f(1.0).k, target)",
    "tuple_of_arrays_in_place": ("a, b = np.array([1.0]), np.array([1.0])\nf((a, b))\n"
                                 "assert np.allclose(a, target) and b[0] == 0.0"),
    "tuple_of_lists_in_place": "a = [1.0]\nf((a, [1.0]))\nassert a == [1.0, 2.0] and np.allclose(a[1], target)",
    "deque_in_place": ("import collections\nd = collections.deque([1.0])\nf(d)\n"
                       "assert list(d) == [1.0, 2.0] and np.allclose(d[1], target)"),
    "userdict_in_place": "import collections\nd = collections.UserDict(v=1.0)\nf(d)\nassert np.allclose(d['w'], target)",
    "returns_its_argument": "a = np.array([1.0])\nr = f(a)\nassert np.allclose(a, target) and np.allclose(r, target)",
    "aliased_arguments": "a = [1.0]\nf(a, a)\nassert np.allclose(a[0], target)",
    "dunder_new": "H = type(f(0.0))\nassert np.allclose(H(1.0).v, target) and np.allclose(f(1.0).v, 2.0)",
    "context_manager": "with f(1.0) as r:\n    v = r\nassert np.allclose(v, target)",
    "dunder_deepcopy": "import copy\nassert np.allclose(copy.deepcopy(f(1.0)).v, target)",
    "dataclass": "r = f(1.0)\nassert r[0].v == 1.0 and np.allclose(r[1].v, target)",
    "namedtuple": "r = f(1.0)\nassert r.w == 1.0 and np.allclose(r.v, target)",
    "enum_in_step": "assert np.allclose(f(1.0), target)",
    "heap_tuples": "r = f(0.0)\nassert [t[0] for t in r] == [1.0, 2.0, 3.0] and np.allclose(r[1][2], [target])",
    "masked_in_place": ("a = np.ma.array([1.0, 5.0], mask=[False, True])\nr = f(a)\n"
                        "assert np.allclose(a[0], target) and bool(a.mask[1])"),
    "sympy": "assert np.allclose(f(1.0), target)",
}


def test_round4_honest_twins_pass():
    probs, h5, gen, steps = one_step_set("red-r4-honest", HONEST, cases=HONEST_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out
