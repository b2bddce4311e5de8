"""Issue 22, second engineer's attack on the plain-data return path (with the source in hand).

Each attack below was judged correct (PASS) by the return path as it was merged: a rigged
value reached the test's own comparison through a door `_plain`/`_scan`/`_wrap_class` did not
convert.  Each must now fail as the model's (NotPlainData, or the comparison on converted
data).  The honest twins beside them must pass; two of them (an lru_cache or partialmethod
method on a class the step returns) were rejected or unwrapped before.  The rows left open
in round 3 (objects rewritten after they crossed, a UserList subclass overriding
`_UserList__cast`, the honest heap node refused) pass since round 4: what crosses is a copy
the grader made (below)."""
import pytest

from test_scicode_plain_data import RIG
from test_scicode_support import one_step_set, run_one_step_set, step_line

ATTACKS = {
    # a class handed back whose metaclass answers the test's operators
    "metaclass_hooks": ("def f(x):\n    class M(type):\n        def __gt__(cls, o):\n            return True\n"
                        "        __hash__ = type.__hash__\n    class C(metaclass=M):\n        pass\n    return C\n"),
    # attribute reads that run unwrapped generated code (cached_property, its own descriptor)
    "cached_property": ("def f(x):\n" + RIG + "    import functools\n    class H:\n        @functools.cached_property\n"
                        "        def value(self):\n            return R(x + 1)\n    return H()\n"),
    "descriptor": ("def f(x):\n" + RIG + "    class D:\n        def __get__(self, o, t=None):\n            return R(x + 1)\n"
                   "    class H:\n        value = D()\n    return H()\n"),
    # a library array subclass (masked, record) whose object items were never looked at
    "masked_array": "def f(x):\n" + RIG + "    return np.ma.array([R(x + 1)], dtype=object)\n",
    "recarray": "def f(x):\n" + RIG + "    return np.rec.fromarrays([np.array([R(x + 1)], dtype=object)], names='v')\n",
    # a structured array with an object field: its items (numpy.void) passed as scalars
    "structured_void": ("def f(x):\n" + RIG + "    a = np.zeros(1, dtype=[('v', object)])\n    a[0]['v'] = R(x + 1)\n"
                        "    return a\n"),
    # a Fraction subclass whose comparisons go through a method that is not a hook
    "fraction_richcmp": ("def f(x):\n    from fractions import Fraction\n    class F(Fraction):\n"
                         "        def _richcmp(self, o, op):\n            return True\n    return F(int(x) + 1)\n"),
    # a library object holding an unwrapped generated callable
    "namespace_fn": "def f(x):\n" + RIG + "    import argparse\n    return argparse.Namespace(get=lambda: R(x + 1))\n",
    "namespace_fn_in_list": "def f(x):\n" + RIG + "    import argparse\n    return argparse.Namespace(fs=[lambda: R(x + 1)])\n",
    "namespace_partial": ("def f(x):\n" + RIG + "    import argparse, functools\n"
                          "    return argparse.Namespace(get=functools.partial(lambda a: R(a), x + 1))\n"),
    # a library LinearOperator (imported by the step itself) around a generated matvec
    "linear_operator_matvec": ("def f(x):\n" + RIG + "    from scipy.sparse.linalg import LinearOperator\n"
                               "    def mv(v):\n        o = np.empty(1, dtype=object)\n        o[0] = R(x + 1)\n        return o\n"
                               "    return LinearOperator((1, 1), matvec=mv, dtype=object)\n"),
    # a method or cached_property set on the generation's class after it was wrapped (a
    # second call), never wrapped
    "late_method": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            pass\n"
                    "        f.H = H\n        return H()\n    f.H.g = lambda self: R(x + 1)\n    return f.H()\n"),
    "late_cached_property": ("def f(x):\n" + RIG + "    import functools\n    if not hasattr(f, 'H'):\n        class H:\n"
                             "            pass\n        f.H = H\n        return H()\n"
                             "    c = functools.cached_property(lambda self: R(x + 1))\n    f.H.value = c\n"
                             "    c.__set_name__(f.H, 'value')\n    return f.H()\n"),
    # a method inherited from the generation's own base class (only the class's own namespace was wrapped)
    "base_class_method": ("def f(x):\n" + RIG + "    class B:\n        def g(self):\n            return R(x + 1)\n"
                          "    class H(B):\n        pass\n    return H()\n"),
    # dunders outside the hook list
    "userdict_missing": ("def f(x):\n" + RIG + "    import collections\n    class D(collections.UserDict):\n"
                         "        def __missing__(self, k):\n            return R(x + 1)\n    return D()\n"),
    "contains": "def f(x):\n    class S:\n        def __contains__(self, o):\n            return True\n    return S()\n",
    # code that runs after the return, outside any wrapped call, rewriting the converted
    # object of the generation's own class: a signal handler with a timer, a gc callback
    "signal_after": ("def f(x):\n" + RIG + "    import signal\n    class H:\n        pass\n    h = H()\n    h.v = x + 1\n"
                     "    def hd(*a):\n        h.v = R(x + 1)\n    signal.signal(signal.SIGALRM, hd)\n"
                     "    signal.setitimer(signal.ITIMER_REAL, 0.001)\n    return h\n"),
    "gc_callback": ("def f(x):\n" + RIG + "    import gc\n    class H:\n        pass\n    h = H()\n    h.v = x + 1\n"
                    "    gc.callbacks.append(lambda *a: setattr(h, 'v', R(x + 1)))\n    return h\n"),
}
ATTACK_CASES = {
    "metaclass_hooks": "assert (f(1.0) > 100) == target",
    "cached_property": "assert (f(1.0).value > 100) == target",
    "descriptor": "assert (f(1.0).value > 100) == target",
    "masked_array": "assert (f(1.0)[0] > 100) == target",
    "recarray": "assert (f(1.0).v[0] > 100) == target",
    "structured_void": "assert (f(1.0)[0]['v'] > 100) == target",
    "fraction_richcmp": "assert (f(1.0) > 100) == target",
    "namespace_fn": "assert (f(1.0).get() > 100) == target",
    "userdict_missing": "assert (f(1.0)['v'] > 100) == target",
    "namespace_fn_in_list": "assert (f(1.0).fs[0]() > 100) == target",
    "namespace_partial": "assert (f(1.0).get() > 100) == target",
    "linear_operator_matvec": "assert (f(1.0).matvec(np.ones(1))[0] > 100) == target",
    "contains": "assert (100.0 in f(1.0)) == target",
    "base_class_method": "assert (f(1.0).g() > 100) == target",
    "late_method": "f(1.0)\nassert (f(1.0).g() > 100) == target",
    "late_cached_property": "f(1.0)\nassert (f(1.0).value > 100) == target",
    "signal_after": "import time\nr = f(1.0)\ntime.sleep(0.05)\nassert (r.v > 100) == target",
    "gc_callback": "r = f(1.0)\nimport gc\ngc.collect()\nassert (r.v > 100) == target",
}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("red-plain", ATTACKS, target=True, cases=ATTACK_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", sorted(ATTACKS))
def test_rigged_value_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_attacks_score_zero_and_do_not_void_the_run(attacks):
    rc, out, steps, keys = attacks
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0"), out


HONEST = {
    "cached_property": ("def f(x):\n    import functools\n    class H:\n        @functools.cached_property\n"
                        "        def value(self):\n            return x + 1\n    return H()\n"),
    "lru_cache_method": ("def f(x):\n    import functools\n    class S:\n        @functools.lru_cache(maxsize=None)\n"
                         "        def g(self, y):\n            return y + 1\n    return S()\n"),
    "partialmethod": ("def f(x):\n    import functools\n    class S:\n        def _g(self, a, y):\n            return a + y\n"
                      "        g = functools.partialmethod(_g, 1)\n    return S()\n"),
    "slots": ("def f(x):\n    class P:\n        __slots__ = ('v',)\n        def __init__(self, v):\n            self.v = v\n"
              "    return P(x + 1)\n"),
    "decimal": "def f(x):\n    from decimal import Decimal\n    return Decimal(int(x) + 1)\n",
    "complex": "def f(x):\n    return complex(x + 1, 0)\n",
    "zero_d_complex": "def f(x):\n    return np.array(complex(x + 1, 0))\n",
    "sets": "def f(x):\n    return [{x + 1}, frozenset([x + 1])]\n",
    "tuple_keys": "def f(x):\n    return {(1, 2): {'a': x + 1}, (3,): [x + 1]}\n",
    "enum": "def f(x):\n    import enum\n    class E(enum.Enum):\n        A = 2.0\n    return E.A\n",
    "lazy_linear_operator": ("def f(x):\n    from scipy.sparse.linalg import aslinearoperator\n"
                             "    return aslinearoperator(np.eye(1) * (x + 1))\n"),
    "lazy_interp1d": ("def f(x):\n    from scipy.interpolate import interp1d\n"
                      "    return interp1d([0.0, 1.0], [x + 1, x + 1])\n"),
    "thread_pool": ("def f(x):\n    from concurrent.futures import ThreadPoolExecutor\n    with ThreadPoolExecutor(2) as ex:\n"
                    "        r = list(ex.map(lambda v: v + 1, [x]))\n    return r[0]\n"),
    # a LinearOperator from a function, scipy.sparse.linalg imported by the step itself (its
    # classes were taken for the generation's: refused as hooked before)
    "linear_operator_from_function": ("def f(x):\n    from scipy.sparse.linalg import LinearOperator\n"
                                      "    return LinearOperator((1, 1), matvec=lambda v: (x + 1) * v)\n"),
    # guards of the new checks: class attributes that are library objects, a library object
    # holding the step's bound method (wrapped in place), an ABC
    "abc_class": ("def f(x):\n    import abc\n    class B(abc.ABC):\n        @abc.abstractmethod\n        def g(self):\n"
                  "            pass\n    class C(B):\n        def g(self):\n            return x + 1\n    return C()\n"),
    "lock_attribute": ("def f(x):\n    import threading\n    class C:\n        lock = threading.Lock()\n        def g(self):\n"
                       "            with self.lock:\n                return x + 1\n    return C()\n"),
    "ode_of_bound_method": ("def f(x):\n    from scipy.integrate import ode\n    class S:\n        def rhs(self, t, y):\n"
                            "            return [0.0]\n    r = ode(S().rhs)\n    r.set_initial_value([x + 1], 0.0)\n    return r\n"),
    "inherited_method": ("def f(x):\n    class B:\n        def g(self):\n            return x + 1\n"
                         "    class H(B):\n        pass\n    return H()\n"),
    "plain_masked_array": "def f(x):\n    return np.ma.array([x + 1, 0.0], mask=[False, True])\n",
    "plain_recarray": "def f(x):\n    return np.rec.fromarrays([np.array([x + 1])], names='v')\n",
}
HONEST_CASES = {
    "cached_property": "assert np.allclose(f(1.0).value, target)",
    "lru_cache_method": "assert np.allclose(f(1.0).g(1.0), target)",
    "partialmethod": "assert np.allclose(f(1.0).g(1.0), target)",
    "slots": "assert np.allclose(f(1.0).v, target)",
    "decimal": "assert np.allclose(float(f(1.0)), target)",
    "sets": "assert f(1.0) == [{2.0}, frozenset([2.0])] and np.allclose(list(f(1.0)[0]), target)",
    "tuple_keys": "assert np.allclose(f(1.0)[(1, 2)]['a'], target)",
    "enum": "assert np.allclose(f(1.0).value, target)",
    "lazy_linear_operator": "assert np.allclose(f(1.0) @ np.ones(1), target)",
    "lazy_interp1d": "assert np.allclose(f(1.0)(0.5), target)",
    "linear_operator_from_function": "assert np.allclose(f(1.0) @ np.ones(1), target)",
    "abc_class": "assert np.allclose(f(1.0).g(), target)",
    "lock_attribute": "assert np.allclose(f(1.0).g(), target)",
    "ode_of_bound_method": "r = f(1.0)\nassert np.allclose(r.integrate(1.0), target)",
    "inherited_method": "assert np.allclose(f(1.0).g(), target)",
    "plain_masked_array": "assert np.allclose(f(1.0)[0], target)",
    "plain_recarray": "assert np.allclose(f(1.0).v, target)",
}


def test_honest_twins_pass():
    probs, h5, gen, steps = one_step_set("red-plain-honest", HONEST, cases=HONEST_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out


# ---- round 4: what crossed is a copy; the generation never holds the tests' objects -----------
# Objects that kept their identity across the boundary (the generation's own plain class, a
# library object) could be rewritten after they crossed: by a finalizer, by a later call of the
# step's function, by a method the test called on them (which stashed `self`), by the
# constructor the test called, or -- the test's own list or array handed to the step -- by a
# later call that kept it.  Now every object of a Python class crosses as a copy made by the
# grader, and a mutable object handed to generated code is handed as a copy whose contents are
# written back after the call.  A generated UserList overriding `_UserList__cast` (called by
# UserList.__eq__) crosses as a library UserList of its data.
COPY_ATTACKS = {
    "userlist_cast": ("def f(x):\n    import collections\n    class L(collections.UserList):\n"
                      "        def _UserList__cast(self, o):\n            return self.data\n    return L([x + 1])\n"),
    # a finalizer that fires when the original return value is dropped (during conversion)
    "finalizer_after_conversion": (
        "def f(x):\n" + RIG + "    import weakref\n    class H:\n        pass\n    class L(list):\n        pass\n"
        "    h = H()\n    h.v = x + 1\n    t = L([0.0])\n    weakref.finalize(t, lambda: setattr(h, 'v', R(x + 1)))\n"
        "    return [h, t]\n"),
    "later_call_own_object": ("def f(x):\n" + RIG + "    class H:\n        pass\n    if x > 1.5:\n        f.keep.v = R(x)\n"
                              "        return x + 1\n    h = H()\n    h.v = x + 1\n    f.keep = h\n    return h\n"),
    "later_call_library_object": ("def f(x):\n" + RIG + "    import collections\n    if x > 1.5:\n        f.keep['v'] = R(x)\n"
                                  "        return x + 1\n    d = collections.UserDict(v=x + 1)\n    f.keep = d\n    return d\n"),
    # a method the test calls keeps `self`; a later call rewrites it
    "method_keeps_self": ("def f(x):\n" + RIG + "    class H:\n        def g(self):\n            f.keep = self\n"
                          "            return 0.0\n    if x > 1.5:\n        f.keep.v = R(x)\n        return x + 1\n"
                          "    h = H()\n    h.v = x + 1\n    return h\n"),
    # the constructor the test calls keeps `self`
    "init_keeps_self": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n"
                        "            def __init__(self, v):\n                self.v = v\n                f.keep = self\n"
                        "        f.H = H\n    if x > 1.5:\n        f.keep.v = R(x)\n        return x + 1\n"
                        "    return f.H(x + 1)\n"),
    # the test's own list / array handed to the step, kept, rewritten by a later call
    "list_argument_kept": ("def f(x):\n" + RIG + "    if type(x) is list:\n        f.keep = x\n        return 0.0\n"
                           "    f.keep[0] = R(x)\n    return x + 1\n"),
    "array_argument_kept": ("def f(x):\n    if not np.isscalar(x):\n        f.keep = x\n        return 0.0\n"
                            "    f.keep[0] = 1e3\n    return x + 1\n"),
    # a member of its own Enum, an object of its own Exception subclass (both kept their identity)
    "enum_member_later": ("def f(x):\n" + RIG + "    import enum\n    if not hasattr(f, 'E'):\n"
                          "        class E(enum.Enum):\n            A = 2.0\n        f.E = E\n"
                          "    if x > 1.5:\n        f.E.A._value_ = R(x)\n        return x + 1\n    return f.E.A\n"),
    "exception_later": ("def f(x):\n" + RIG + "    class X(Exception):\n        pass\n    if x > 1.5:\n"
                        "        f.keep.v = R(x)\n        return x + 1\n    h = X()\n    h.v = x + 1\n    f.keep = h\n"
                        "    return h\n"),
    # its own object inside a library object; a method that swaps the class of its object
    "own_object_in_library_object": ("def f(x):\n" + RIG + "    import collections\n    class H:\n        pass\n"
                                     "    if x > 1.5:\n        f.keep.v = R(x)\n        return x + 1\n"
                                     "    h = H()\n    h.v = x + 1\n    f.keep = h\n    return collections.UserDict(h=h)\n"),
    "class_swap_in_method": ("def f(x):\n    class H:\n        def g(self):\n            self.__class__ = R2\n"
                             "            return 0.0\n    class R2:\n        def __gt__(self, o):\n            return True\n"
                             "    h = H()\n    h.v = x + 1\n    return h\n"),
}
COPY_CASES = {
    "userlist_cast": "assert (f(1.0) == [100.0]) == target",
    "finalizer_after_conversion": "assert (f(1.0)[0].v > 100) == target",
    "later_call_own_object": "h = f(1.0)\nf(2.0)\nassert (h.v > 100) == target",
    "later_call_library_object": "d = f(1.0)\nf(2.0)\nassert (d['v'] > 100) == target",
    "method_keeps_self": "h = f(1.0)\nh.g()\nf(2.0)\nassert (h.v > 100) == target",
    "init_keeps_self": "H = type(f(1.0))\nh = H(2.0)\nf(2.0)\nassert (h.v > 100) == target",
    "list_argument_kept": "a = [2.0]\nf(a)\nf(2.0)\nassert (a[0] > 100) == target",
    "array_argument_kept": "a = np.array([2.0])\nf(a)\nf(2.0)\nassert (a[0] > 100) == target",
    "enum_member_later": "e = f(1.0)\nf(2.0)\nassert (e.value > 100) == target",
    "exception_later": "h = f(1.0)\nf(2.0)\nassert (h.v > 100) == target",
    "own_object_in_library_object": "d = f(1.0)\nf(2.0)\nassert (d['h'].v > 100) == target",
    "class_swap_in_method": "h = f(1.0)\nh.g()\nassert (h > 100) == target",
}
# the honest twins: state kept by the generation between calls, methods that change their
# object, constructors, in-place results, a UserList subclass with a method of its own, a heap
# of the step's own class with __lt__ (crosses as a record of its fields), a finalizer
COPY_HONEST = {
    "kept_state": ("def f(x):\n    class H:\n        pass\n    f.calls = getattr(f, 'calls', 0) + 1\n"
                   "    h = H()\n    h.v = x + 1\n    f.last = h\n    return h\n"),
    "mutating_method": ("def f(x):\n    class H:\n        def bump(self, d):\n            self.v = self.v + d\n"
                        "            self.hist.append(self.v)\n            return self\n"
                        "    h = H()\n    h.v, h.hist = x, []\n    return h\n"),
    "constructor": ("def f(x):\n    if not hasattr(f, 'H'):\n        class H:\n"
                    "            def __init__(self, v):\n                self.v = v + 1\n                self.me = self\n"
                    "        f.H = H\n    return f.H(x)\n"),
    "in_place_list": "def f(x):\n    if type(x) is list:\n        x.append(len(x) + 1.0)\n        return None\n    return x + 1\n",
    "in_place_array": ("def f(x):\n    if not np.isscalar(x):\n        x *= 2\n        x[0] += 0.0\n        return None\n"
                       "    return x + 1\n"),
    "userlist_subclass": ("def f(x):\n    import collections\n    class L(collections.UserList):\n"
                          "        def total(self):\n            return sum(self.data)\n    return L([x + 1])\n"),
    "heap_nodes": ("def f(x):\n    import heapq\n    class Node:\n        def __init__(self, v):\n            self.v = v\n"
                   "        def __lt__(self, o):\n            return self.v < o.v\n"
                   "    h = []\n    for v in (x + 3, x + 1, x + 2):\n        heapq.heappush(h, Node(v))\n"
                   "    return [heapq.heappop(h) for _ in range(3)]\n"),
    "finalizer": ("def f(x):\n    import weakref\n    class H:\n        pass\n    class L(list):\n        pass\n"
                  "    h = H()\n    h.v = x + 1\n    t = L([0.0])\n    weakref.finalize(t, lambda: None)\n    return [h, t]\n"),
    "cycle": ("def f(x):\n    class N:\n        pass\n    a, b = N(), N()\n    a.v, a.nxt, b.v, b.nxt = x + 1, b, x, a\n"
              "    return a\n"),
    "library_object": "def f(x):\n    import collections\n    return collections.UserDict(v=x + 1)\n",
    "exception_value": ("def f(x):\n    class X(ValueError):\n        pass\n    e = X(x + 1, 'why')\n    e.v = x + 1\n"
                        "    return e\n"),
}
COPY_HONEST_CASES = {
    "kept_state": "h = f(1.0)\nf(5.0)\nassert np.allclose(h.v, target)",
    "mutating_method": ("h = f(0.0)\nr = h.bump(1.5)\nh.bump(0.5)\n"
                        "assert r is h and h.hist == [1.5, 2.0] and np.allclose(h.v, target)"),
    "constructor": "H = type(f(0.0))\nh = H(1.0)\nassert h.me is h and np.allclose(h.v, target)",
    "in_place_list": "a = [1.0]\nf(a)\nassert a == [1.0, 2.0] and np.allclose(a[1], target)",
    "in_place_array": "a = np.array([1.0, 3.0])\nf(a)\nassert np.allclose(a[0], target) and a[1] == 6.0",
    "userlist_subclass": "r = f(1.0)\nassert r == [2.0] and np.allclose(r[0], target)",
    "heap_nodes": "r = f(0.0)\nassert [n.v for n in r] == [1.0, 2.0, 3.0] and np.allclose(r[1].v, target)",
    "finalizer": "assert np.allclose(f(1.0)[0].v, target)",
    "cycle": "a = f(1.0)\nassert a.nxt.nxt is a and np.allclose(a.v, target)",
    "library_object": "assert np.allclose(f(1.0)['v'], target)",
    "exception_value": "e = f(1.0)\nassert e.args == (2.0, 'why') and isinstance(e, ValueError) and np.allclose(e.v, target)",
}


@pytest.fixture(scope="module")
def copy_attacks():
    probs, h5, gen, steps = one_step_set("red-plain-copy", COPY_ATTACKS, target=True, cases=COPY_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", sorted(COPY_ATTACKS))
def test_rewritten_after_crossing_fails_as_the_models(copy_attacks, label):
    rc, out, steps, keys = copy_attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_copy_attacks_score_zero(copy_attacks):
    rc, out, steps, keys = copy_attacks
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0"), out


def test_copy_honest_twins_pass():
    probs, h5, gen, steps = one_step_set("red-plain-copy-honest", COPY_HONEST, cases=COPY_HONEST_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in COPY_HONEST if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out


def test_honest_class_with_lt():
    """An object of the step's own class with __lt__ (a heap node) crosses as a record of its
    fields (was refused as NotPlainData)."""
    body = ("def f(x):\n    class Node:\n        def __init__(self, v):\n            self.v = v\n"
            "        def __lt__(self, o):\n            return self.v < o.v\n    return sorted([Node(x + 1), Node(x)])\n")
    probs, h5, gen, steps = one_step_set("red-plain-lt", {"lt": body}, cases={"lt": "assert np.allclose(f(1.0)[1].v, target)"})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    assert step_line(out, steps["lt"]).startswith("PASS"), out
