"""Issue 22, after round 4: what the tests compare is a copy the grader owns, made before the
generation could touch it again.  A library object the tests hand to generated code, `self` of
an own object on a library or data base, a memoryview (returned or handed in) are copies, written
back after the call; a class's data read through the class itself (`type(h).v`) must be plain
data at every return of a wrapped call and when the step ends; an array the generation reshaped
in place is written back in its new shape.  Each attack must fail as the model's (FAIL [model],
score 0); the honest twins beside them (a reference kept for caching, classes on library and
data bases used as such) must pass.  Grouped in one grader run per table (fast)."""
import pytest

from test_scicode_plain_data import RIG
from test_scicode_support import one_step_set, run_one_step_set, step_line

def own(head, body, deco=""):
    """Lines of `f` that make its own class once (kept on f) and return it for f(None): the
    tests get the class as upstream's would import it."""
    name = head.split("(")[0]
    text = "".join("        " + ln + "\n" for ln in (deco + "class " + head + ":\n" + body).splitlines())
    return f"    if not hasattr(f, '{name}'):\n{text}        f.{name} = {name}\n    if x is None:\n        return f.{name}\n"


ATTACKS = {
    # library objects the tests hand in, kept by the generation and rewritten by a later call
    "namespace_kept": ("def f(x):\n" + RIG + "    import argparse\n    if isinstance(x, argparse.Namespace):\n"
                       "        f.keep = x\n        return 0.0\n    f.keep.v = R(x)\n    return x + 1\n"),
    "masked_kept": ("def f(x):\n    if isinstance(x, np.ma.MaskedArray):\n        f.keep = x\n        return 0.0\n"
                    "    f.keep[0] = 1e3\n    return x + 1\n"),
    "counter_kept": ("def f(x):\n    import collections\n    if isinstance(x, collections.Counter):\n"
                     "        f.keep = x\n        return 0.0\n    f.keep['v'] = 1000\n    return x + 1\n"),
    # `self` of an own object on a data base (dict, ndarray, float) kept, rewritten later
    "own_dict_base_keeps_self": ("def f(x):\n" + RIG + own("D(dict)", "    def g(self):\n        f.keep = self\n        return 0.0\n")
                                 + "    f.keep['v'] = R(x)\n    return x + 1\n"),
    "own_array_base_keeps_self": ("def f(x):\n" + own("A(np.ndarray)", "    def g(self):\n        f.keep = self\n        return 0.0\n")
                                  + "    f.keep[0] = 1e3\n    return x + 1\n"),
    "own_float_base_keeps_self": ("def f(x):\n" + RIG + own("V(float)", "    def g(self):\n        f.keep = self\n        return 0.0\n")
                                  + "    f.keep.w = R(x)\n    return x + 1\n"),
    # a class attribute read through the class itself, rebound / filled by a later call, or by a
    # finalizer gc runs in the middle of the test's code
    "class_attribute_via_type": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            v = 2.0\n"
                                 "        f.H = H\n    if x > 1.5:\n        f.H.v = R(x)\n        return x + 1\n"
                                 "    return f.H()\n"),
    "class_list_via_type": ("def f(x):\n" + RIG + "    if not hasattr(f, 'H'):\n        class H:\n            box = [2.0]\n"
                            "        f.H = H\n    if x > 1.5:\n        f.H.box[0] = R(x)\n        return x + 1\n"
                            "    return f.H()\n"),
    "class_attribute_by_finalizer": ("def f(x):\n" + RIG + "    class H:\n        v = 2.0\n    class K:\n        pass\n"
                                     "    k = K()\n    k.me = k\n    import weakref\n"
                                     "    weakref.finalize(k, setattr, H, 'v', R(1000.0))\n    return H()\n"),
    "class_dispatch_table_via_type": ("def f(x):\n" + RIG + "    class H:\n        ops = {'g': lambda v: R(v + 1000)}\n"
                                      "        pair = (lambda v: R(v + 1000),)\n    return H()\n"),
    # a library object holding a library callable bound to an object the generation keeps (a
    # method, a builtin method, a partial): the test calls it after a later call rewrote that object
    "bound_method_in_namespace": ("def f(x):\n" + RIG + "    import argparse, collections\n    if not hasattr(f, 'd'):\n"
                                  "        f.d = collections.UserDict(v=2.0)\n    if x > 1.5:\n        f.d['v'] = R(x)\n"
                                  "        return x + 1\n    return argparse.Namespace(cb=f.d.__getitem__)\n"),
    "builtin_method_in_namespace": ("def f(x):\n" + RIG + "    import argparse\n    if not hasattr(f, 'd'):\n"
                                    "        f.d = {'v': 2.0}\n    if x > 1.5:\n        f.d['v'] = R(x)\n        return x + 1\n"
                                    "    return argparse.Namespace(cb=f.d.get)\n"),
    "partial_in_namespace": ("def f(x):\n" + RIG + "    import argparse, functools, operator\n    if not hasattr(f, 'd'):\n"
                             "        f.d = [2.0]\n    if x > 1.5:\n        f.d[0] = R(x)\n        return x + 1\n"
                             "    return argparse.Namespace(cb=functools.partial(operator.getitem, f.d, 0))\n"),
    # a memoryview of a buffer the generation keeps (returned), or one handed in and kept
    "memoryview_returned_kept": ("def f(x):\n    if not hasattr(f, 'b'):\n        f.b = bytearray(8)\n"
                                 "    m = memoryview(f.b).cast('d')\n    if x > 1.5:\n        m[0] = 1e3\n        return x + 1\n"
                                 "    m[0] = x + 1\n    return m\n"),
    "memoryview_argument_kept": ("def f(x):\n    if type(x) is memoryview:\n        f.keep = x\n        return 0.0\n"
                                 "    f.keep[0] = 1e3\n    return x + 1\n"),
    # an object array reshaped in place: what is written back in the new shape is converted
    "reshaped_object_array": ("def f(x):\n" + RIG + "    if not np.isscalar(x):\n        x.shape = (2, 2)\n"
                              "        x[1, 1] = R(5.0)\n        return None\n    return x + 1\n"),
}
ATTACK_CASES = {
    "namespace_kept": "import argparse\nn = argparse.Namespace(v=2.0)\nf(n)\nf(2.0)\nassert (n.v > 100) == target",
    "masked_kept": ("a = np.ma.array([2.0, 5.0], mask=[False, True])\nf(a)\nf(2.0)\n"
                    "assert (a[0] > 100) == target"),
    "counter_kept": "import collections\nc = collections.Counter(v=2)\nf(c)\nf(2.0)\nassert (c['v'] > 100) == target",
    "own_dict_base_keeps_self": "D = f(None)\nd = D(v=2.0)\nd.g()\nf(2.0)\nassert (d['v'] > 100) == target",
    "own_array_base_keeps_self": "A = f(None)\na = np.array([2.0]).view(A)\na.g()\nf(2.0)\nassert (a[0] > 100) == target",
    "own_float_base_keeps_self": "V = f(None)\nv = V(2.0)\nv.w = 2.0\nv.g()\nf(2.0)\nassert (v.w > 100) == target",
    "class_attribute_via_type": "h = f(1.0)\nf(2.0)\nassert (type(h).v > 100) == target",
    "class_list_via_type": "h = f(1.0)\nf(2.0)\nassert (type(h).box[0] > 100) == target",
    "class_attribute_by_finalizer": "h = f(1.0)\nimport gc\ngc.collect()\nassert (type(h).v > 100) == target",
    "class_dispatch_table_via_type": ("H = type(f(1.0))\n"
                                      "assert (H.ops['g'](1.0) > 100 or H.pair[0](1.0) > 100) == target"),
    "bound_method_in_namespace": "n = f(1.0)\nf(2.0)\nassert (n.cb('v') > 100) == target",
    "builtin_method_in_namespace": "n = f(1.0)\nf(2.0)\nassert (n.cb('v') > 100) == target",
    "partial_in_namespace": "n = f(1.0)\nf(2.0)\nassert (n.cb() > 100) == target",
    "memoryview_returned_kept": "m = f(1.0)\nf(2.0)\nassert (m[0] > 100) == target",
    "memoryview_argument_kept": ("b = bytearray(8)\nf(memoryview(b).cast('d'))\nf(2.0)\n"
                                 "assert (np.frombuffer(b)[0] > 100) == target"),
    "reshaped_object_array": "a = np.zeros(4, dtype=object)\nf(a)\nassert (a.reshape(-1)[3] > 100) == target",
}
# rows measured PASS (attack accepted) and not fixed: strict xfail with the reason
OPEN = {}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("red-r5", ATTACKS, target=True, cases=ATTACK_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=OPEN[k]))
                                   if k in OPEN else k for k in sorted(ATTACKS)])
def test_round5_attack_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_round5_attacks_score_zero(attacks):
    rc, out, steps, keys = attacks
    assert rc == 1 and keys["RESULT"] == "FAIL" and keys["SCORE"] == "0.0", out
    assert "harness" not in out.split("census.verdict")[-1].splitlines()[0], out


HONEST = {
    # a library object handed in: read, written in place, kept for a later call (a cache)
    "namespace_cached": ("def f(x):\n    import argparse\n    if isinstance(x, argparse.Namespace):\n"
                         "        f.cfg = x\n        x.w = x.v + 1\n        return x.v + 1\n    return x + f.cfg.v\n"),
    "masked_cached": ("def f(x):\n    if isinstance(x, np.ma.MaskedArray):\n        x[0] = x[0] + 1\n        f.keep = x\n"
                      "        return None\n    return float(f.keep[0]) + x\n"),
    "counter_in_place": ("def f(x):\n    import collections\n    if isinstance(x, collections.Counter):\n"
                         "        x['w'] += 2\n        return None\n    return x + 1\n"),
    "interp1d_argument": "def f(x):\n    if callable(x):\n        return float(x(0.5))\n    return x + 1\n",
    "sparse_argument": ("def f(x):\n    import scipy.sparse as sp\n    if sp.issparse(x):\n        x.data[:] = x.data + 1\n"
                        "        return float(x.sum()) / 2\n    return x + 1\n"),
    # own classes on library and data bases, constructed by the tests, their methods called
    "own_dict_base": ("def f(x):\n" + own("D(dict)", "    def total(self):\n        return sum(self.values())\n"
                                            "    def bump(self):\n        self['w'] = self['v'] + 1\n")
                      + "    return x + 1\n"),
    "own_list_base": ("def f(x):\n" + own("L(list)", "    def push(self, v):\n        self.append(v)\n        return self\n")
                      + "    return x + 1\n"),
    "own_array_base": ("def f(x):\n" + own("A(np.ndarray)", "    def bump(self):\n        self += 1\n"
                                                 "    def scaled(self, k):\n        return np.asarray(self) * k\n")
                       + "    return x + 1\n"),
    "own_float_base": ("def f(x):\n" + own("V(float)", "    def twice(self):\n        self.n = getattr(self, 'n', 0) + 1\n"
                                             "        return float(self) * 2\n") + "    return x + 1\n"),
    "own_namespace_base": ("def f(x):\n    import argparse\n" + own("H(argparse.Namespace)", "    def g(self):\n"
                           "        self.w = self.v + 1\n        return self.w\n") + "    return x + 1\n"),
    "dataclass_argument": ("def f(x):\n    import dataclasses\n    @dataclasses.dataclass\n    class P:\n"
                           "        v: float\n    if x is None:\n        return P(1.0)\n    if hasattr(x, 'v'):\n"
                           "        x.v += 1\n        f.last = x\n        return None\n    return x + f.last.v - 1\n"),
    # class data read through the class itself: counters, constants, an array
    "class_data_via_type": ("def f(x):\n    if not hasattr(f, 'H'):\n        class H:\n            n = 0\n            k = 2.0\n"
                            "            scale = np.array([x + 1])\n            names = ['a']\n"
                            "            def __init__(self):\n                H.n += 1\n                H.names.append('b')\n"
                            "        f.H = H\n    return f.H()\n"),
    "class_dispatch_table": ("def f(x):\n    class H:\n        ops = {'inc': lambda v: v + 1}\n"
                             "        pair = (lambda v: v * 2,)\n        def run(self, v):\n"
                             "            return H.ops['inc'](v) + H.pair[0](v) - 2 * v\n    return H()\n"),
    "class_registry_shared": ("def f(x):\n    if not hasattr(f, 'H'):\n        class Reg:\n            pass\n"
                              "        reg = Reg()\n        reg.items = []\n        class H:\n            registry = reg\n"
                              "        f.H, f.items = H, reg.items\n    f.items.append(x)\n    return f.H()\n"),
    # memoryviews returned and handed in
    "memoryview_returned": "def f(x):\n    return memoryview(np.array([x + 1.0, x]))\n",
    "memoryview_argument_in_place": ("def f(x):\n    if type(x) is memoryview:\n        x[1] = x[0] + 2.0\n"
                                     "        return None\n    return x + 1\n"),
    # an array reshaped in place (the caller sees the new shape and what was written)
    "reshaped_in_place": ("def f(x):\n    if not np.isscalar(x):\n        x.shape = (2, 2)\n"
                          "        x[1, 1] = x[0, 0] + 1\n        return None\n    return x + 1\n"),
}
HONEST_CASES = {
    "namespace_cached": ("import argparse\nn = argparse.Namespace(v=1.0)\nr = f(n)\n"
                         "assert np.allclose(r, target) and np.allclose(n.w, target) and np.allclose(f(1.0), target)"),
    "masked_cached": ("a = np.ma.array([1.0, 5.0], mask=[False, True])\nf(a)\n"
                      "assert np.allclose(a[0], target) and bool(a.mask[1]) and np.allclose(f(0.0), target)"),
    "counter_in_place": ("import collections\nc = collections.Counter(v=1)\nf(c)\n"
                         "assert type(c) is collections.Counter and np.allclose(c['w'], target)"),
    "interp1d_argument": ("from scipy.interpolate import interp1d\ng = interp1d([0.0, 1.0], [1.0, 3.0])\n"
                          "assert np.allclose(f(g), target) and np.allclose(g(0.5), target)"),
    "sparse_argument": ("import scipy.sparse as sp\nA = sp.csr_matrix(np.eye(2))\nr = f(A)\n"
                        "assert np.allclose(r, target) and np.allclose(A.toarray()[0, 0], target)"),
    "own_dict_base": ("D = f(None)\nd = D(v=1.0)\nd.bump()\n"
                      "assert type(d) is D and np.allclose(d['w'], target) and np.allclose(d.total(), 3.0)"),
    "own_list_base": "L = f(None)\nl = L([1.0])\nl.push(2.0)\nassert len(l) == 2 and np.allclose(l[1], target)",
    "own_array_base": ("A = f(None)\na = np.array([1.0, 0.5]).view(A)\na.bump()\n"
                       "assert type(a) is A and np.allclose(a[0], target) and np.allclose(a.scaled(2.0), [4.0, 3.0])"),
    "own_float_base": "V = f(None)\nv = V(1.0)\nr = v.twice()\nassert v.n == 1 and np.allclose(r, target)",
    "own_namespace_base": "H = f(None)\nh = H(v=1.0)\nassert np.allclose(h.g(), target) and np.allclose(h.w, target)",
    "dataclass_argument": "p = f(None)\nf(p)\nassert np.allclose(p.v, target) and np.allclose(f(1.0), target)",
    "class_data_via_type": ("h = f(1.0)\nf(1.0)\nH = type(h)\n"
                            "assert H.n == 2 and H.names == ['a', 'b', 'b'] and np.allclose(H.scale, target) "
                            "and np.allclose(H.k, target)"),
    "class_dispatch_table": ("h = f(1.0)\nH = type(h)\nassert np.allclose(H.ops['inc'](1.0), target) "
                             "and np.allclose(H.pair[0](1.0), target) and np.allclose(h.ops['inc'](1.0), target) "
                             "and np.allclose(h.run(1.0), target)"),
    "class_registry_shared": ("f(1.0)\nh = f(1.0)\nitems = type(h).registry.items\n"
                              "assert len(items) == 2 and np.allclose(sum(items), target)"),
    "memoryview_returned": ("m = f(1.0)\nassert type(m) is memoryview and m.format == 'd' and not m.readonly "
                            "and np.allclose(m[0], target) and m[1] == 1.0"),
    "memoryview_argument_in_place": ("b = bytearray(16)\nm = memoryview(b).cast('d')\nf(m)\n"
                                     "assert np.allclose(np.frombuffer(b)[1], target) and np.allclose(m[1], target)"),
    "reshaped_in_place": "a = np.ones(4)\nf(a)\nassert a.shape == (2, 2) and np.allclose(a[1, 1], target)",
}

# library objects (the dependency lines import sympy and scipy's subpackages: their classes are the library's)
HONEST_LIBRARY = {
    "sympy_matrix_returned": "def f(x):\n    import sympy\n    return sympy.Matrix([[x + 1, 0], [0, 1]])\n",
    "sympy_matrix_argument": ("def f(x):\n    import sympy\n    if isinstance(x, sympy.MatrixBase):\n"
                              "        return float(x[0, 0]) + 1\n    return x + 1\n"),
    "sympy_matrix_in_place": ("def f(x):\n    import sympy\n    if isinstance(x, sympy.MatrixBase):\n"
                              "        x[0, 0] = x[0, 0] + 1\n        return None\n    return x + 1\n"),
    "optimize_result_argument": "def f(x):\n    if hasattr(x, 'fun'):\n        return x.fun + x['x'][0]\n    return x + 1\n",
    "generator_argument": ("def f(x):\n    if hasattr(x, 'normal'):\n        f.rng = x\n        return float(x.normal()) * 0 + 2.0\n"
                           "    return x + 1\n"),
    "random_argument": "def f(x):\n    if hasattr(x, 'random'):\n        return x.random() * 0 + 2.0\n    return x + 1\n",
    "matrix_in_place": "def f(x):\n    if isinstance(x, np.matrix):\n        x[0, 0] += 1\n        return None\n    return x + 1\n",
    "memoryview_0d": "def f(x):\n    return memoryview(np.array(x + 1.0)).cast('B').cast('d', ())\n",
    # sympy expressions and a library's enum member, kept by identity: used, queried, hashed
    "sympy_expression_used": ("def f(x):\n    import sympy\n    if not hasattr(f, 's'):\n"
                              "        f.s = sympy.Symbol('h22_v', positive=True)\n    e = f.s ** 2 + x\n"
                              "    return e if x < 1.5 else float(e.subs(f.s, 1))\n"),
    "sympy_handed_in": ("def f(x):\n    import sympy\n    if isinstance(x, sympy.Basic):\n        f.keep = x\n"
                        "        return float(sympy.diff(x ** 2, x).subs(x, 1))\n    return float(f.keep.subs(f.keep, x)) + 1\n"),
    "enum_member": "def f(x):\n    import signal\n    return signal.Signals.SIGINT if x > 0 else x + 1\n",
    # library objects holding callables with state of their own (bound methods, vectorized
    # methods, lambdas): returned and used, handed in
    "frozen_distribution": "def f(x):\n    import scipy.stats as st\n    return st.norm(loc=x + 1, scale=1.0)\n",
    "distribution_handed_in": "def f(x):\n    if hasattr(x, 'pdf'):\n        return float(x.mean()) + 1\n    return x + 1\n",
    "minimize_result": ("def f(x):\n    from scipy.optimize import minimize\n"
                        "    return minimize(lambda p: float((p[0] - x - 1) ** 2), [0.0], method='L-BFGS-B')\n"),
    "minimize_result_handed_in": "def f(x):\n    if hasattr(x, 'fun'):\n        return float(x.x[0]) + 1\n    return x + 1\n",
    "linear_operator": ("def f(x):\n    from scipy.sparse.linalg import LinearOperator\n"
                        "    return LinearOperator((2, 2), matvec=lambda v: (x + 1) * np.asarray(v))\n"),
    "cubic_spline": ("def f(x):\n    from scipy.interpolate import CubicSpline\n"
                     "    return CubicSpline([0.0, 1.0, 2.0], [x + 1] * 3)\n"),
    "solve_ivp_dense": ("def f(x):\n    from scipy.integrate import solve_ivp\n"
                        "    return solve_ivp(lambda t, y: 0 * y, (0.0, 1.0), [x + 1], dense_output=True)\n"),
    "partial_of_library_function": ("def f(x):\n    import argparse, functools\n"
                                    "    return argparse.Namespace(cb=functools.partial(np.add, x))\n"),
}
HONEST_LIBRARY_CASES = {
    "sympy_matrix_returned": ("m = f(1.0)\nassert np.allclose(float(m[0, 0]), target) and m.shape == (2, 2) "
                              "and np.allclose(float((m * m)[0, 0]), 4.0)"),
    "sympy_matrix_argument": "import sympy\nm = sympy.Matrix([[1, 0], [0, 1]])\nassert np.allclose(f(m), target)",
    "sympy_matrix_in_place": ("import sympy\nm = sympy.Matrix([[1, 0], [0, 1]])\nf(m)\n"
                              "assert np.allclose(float(m[0, 0]), target) and np.allclose(float(m.det()), 2.0)"),
    "optimize_result_argument": ("from scipy.optimize import OptimizeResult\nr = OptimizeResult(fun=1.0, x=np.array([1.0]))\n"
                                 "assert np.allclose(f(r), target)"),
    "generator_argument": ("rng = np.random.default_rng(0)\nr = f(rng)\nv = rng.normal()\n"
                           "assert np.allclose(r, target) and v == np.random.default_rng(0).normal(size=2)[1]"),
    "random_argument": "import random\nr = random.Random(0)\nassert np.allclose(f(r), target)",
    "matrix_in_place": ("a = np.matrix([[1.0, 0.0]])\nf(a)\n"
                        "assert np.allclose(a[0, 0], target) and type(a) is np.matrix"),
    "memoryview_0d": "m = f(1.0)\nassert np.allclose(m.tolist(), target) and m.shape == ()",
    "sympy_expression_used": ("import sympy\ne = f(1.0)\ns = sorted(e.free_symbols, key=str)[0]\n"
                              "d = {e: 1}\nok = e.is_positive and float(sympy.simplify(e - s ** 2)) == 1.0 and d[e] == 1\n"
                              "assert ok and np.allclose(f(2.0), 3.0) and np.allclose(float(e.subs(s, 1)), target)"),
    "sympy_handed_in": ("import sympy\ns = sympy.Symbol('h22_w')\nassert np.allclose(f(s), target) and "
                        "np.allclose(f(1.0), target) and str(s) == 'h22_w'"),
    "enum_member": "import signal\ne = f(1.0)\nassert e is signal.SIGINT and np.allclose(int(e), target)",
    "frozen_distribution": ("d = f(1.0)\nassert np.allclose(d.mean(), target) and np.allclose(d.ppf(0.5), target) "
                            "and np.allclose(d.cdf([2.0, 2.0]), 0.5)"),
    "distribution_handed_in": ("import scipy.stats as st\nd = st.norm(loc=1.0)\n"
                               "assert np.allclose(f(d), target) and np.allclose(d.ppf(0.5), 1.0)"),
    "minimize_result": ("r = f(1.0)\nv = r.hess_inv.matvec(np.ones(1))\n"
                        "assert np.allclose(r.x, target, atol=1e-4) and r.success and v.shape == (1,) and v[0] > 0"),
    "minimize_result_handed_in": ("from scipy.optimize import minimize\n"
                                  "r = minimize(lambda p: float((p[0] - 1) ** 2), [0.0], method='L-BFGS-B')\n"
                                  "assert np.allclose(f(r), target, atol=1e-4) and r.hess_inv.matvec(np.ones(1)).shape == (1,)"),
    "linear_operator": ("A = f(1.0)\nassert np.allclose(A.matvec(np.ones(2)), target) "
                        "and np.allclose(A @ np.ones(2), target)"),
    "cubic_spline": "s = f(1.0)\nassert np.allclose(s(0.5), target) and np.allclose(s.derivative()(0.5), 0.0)",
    "solve_ivp_dense": "r = f(1.0)\nassert np.allclose(r.y[0, -1], target) and np.allclose(r.sol(0.5), target)",
    "partial_of_library_function": "n = f(1.0)\nassert np.allclose(n.cb(1.0), target)",
}
LIBRARY_DEPENDENCIES = ("import numpy as np\\nimport sympy\\nimport scipy.stats\\nimport scipy.optimize\\n"
                        "import scipy.integrate\\nimport scipy.interpolate\\nimport scipy.sparse.linalg")

# library objects kept by identity (singletons by design) that crossed, changed by a later call
ATTACKS_LIBRARY = {
    "enum_member_attribute": ("def f(x):\n" + RIG + "    import signal\n    m = signal.Signals.SIGINT\n    if x > 1.5:\n"
                              "        m.v = R(x)\n        return x + 1\n    m.v = 2.0\n    return m\n"),
    "sympy_symbol_renamed": ("def f(x):\n    import sympy\n    if not hasattr(f, 's'):\n        f.s = sympy.Symbol('h22_s')\n"
                             "    if x > 1.5:\n        type(f.s).name.__set__(f.s, 'rigged')\n        return x + 1\n"
                             "    return f.s + 1\n"),
    "sympy_args_replaced": ("def f(x):\n    import sympy\n    if not hasattr(f, 'e'):\n"
                            "        f.e = sympy.Symbol('h22_t') + 2\n    if x > 1.5:\n"
                            "        sympy.Basic._args.__set__(f.e, (sympy.Integer(1000),))\n        return x + 1\n"
                            "    return f.e\n"),
    "sympy_handed_in_renamed": ("def f(x):\n    import sympy\n    if isinstance(x, sympy.Basic):\n        f.keep = x\n"
                                "        return 0.0\n    type(f.keep).name.__set__(f.keep, 'rigged')\n    return x + 1\n"),
}
ATTACKS_LIBRARY_CASES = {
    "enum_member_attribute": "e = f(1.0)\nf(2.0)\nassert (e.v > 100) == target",
    "sympy_symbol_renamed": "e = f(1.0)\nf(2.0)\nassert ('rigged' in str(e)) == target",
    "sympy_args_replaced": "e = f(1.0)\nf(2.0)\nassert ('1000' in str(e)) == target",
    "sympy_handed_in_renamed": ("import sympy\ns = sympy.Symbol('h22_u')\nf(s)\nf(2.0)\n"
                                "assert ('rigged' in str(s)) == target"),
}


def test_round5_library_identity_attacks_fail():
    probs, h5, gen, steps = one_step_set("red-r5-lib", ATTACKS_LIBRARY, target=True, cases=ATTACKS_LIBRARY_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + LIBRARY_DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    passed = [step_line(out, steps[k]) for k in ATTACKS_LIBRARY
              if not (step_line(out, steps[k]).startswith("FAIL") and "[model]" in step_line(out, steps[k]))]
    assert not passed, "\n".join(passed)
    assert rc == 1 and keys["SCORE"] == "0.0", out


# found this round: a function of a library module outside the watched ones (numpy, numpy.linalg,
# numpy.random, math, cmath, builtins) rebound by a later call answered the tests; closed since (the
# modules the tests reach are watched at every return, every loaded one after each case; its variants:
# tests/test_scicode_red_watch.py)
LIBRARY_MODULE_REBOUND = ("def f(x):\n" + RIG + "    import scipy.integrate\n    if x > 1.5:\n"
                          "        scipy.integrate.simpson = lambda *a, **k: R(1000.0)\n    return x + 1\n")


def test_round5_library_module_rebound_fails():
    probs, h5, gen, steps = one_step_set("red-r5-module", {"module": LIBRARY_MODULE_REBOUND}, target=True,
                                         cases={"module": "import scipy.integrate\nf(1.0)\nf(2.0)\n"
                                                          "assert (scipy.integrate.simpson([1.0, 1.0]) > 100) == target"})
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + LIBRARY_DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    line = step_line(out, steps["module"])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_round5_honest_library_objects_pass():
    probs, h5, gen, steps = one_step_set("red-r5-honest-lib", HONEST_LIBRARY, cases=HONEST_LIBRARY_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + LIBRARY_DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST_LIBRARY
              if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out


def test_round5_honest_twins_pass():
    probs, h5, gen, steps = one_step_set("red-r5-honest", HONEST, cases=HONEST_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    failed = [step_line(out, steps[k]) for k in HONEST if not step_line(out, steps[k]).startswith("PASS")]
    assert not failed, "\n".join(failed)
    assert (rc, keys["SCORE"]) == (0, "1.0"), out


# honest generations measured FAIL before round 7 (refused as not plain data), with the reason they
# were refused then; they pass since round 7 (tests/test_scicode_red_round7.py: the class constant
# stands behind the grader's descriptor, a generation's dataclass has the grader's comparison hooks)
HONEST_OPEN = {
    "class_constant_hooked_object": (
        "def f(x):\n    class P:\n        def __init__(self, v):\n            self.v = v\n"
        "        def __add__(self, o):\n            return P(self.v + o.v)\n    class H:\n        ZERO = P(0.0)\n"
        "        def total(self, v):\n            return (H.ZERO + P(v)).v\n    return H()\n",
        "a class constant that is an object of the generation's own class with hooks (a Vector's ZERO) is "
        "refused: read through the class itself (`type(h).ZERO`) its hooks would run in the tests unwrapped, "
        "and no copy can stand between the tests and the class"),
    "own_dataclass_constructed_by_tests": (
        "def f(x):\n    import dataclasses\n    if not hasattr(f, 'P'):\n        @dataclasses.dataclass\n"
        "        class P:\n            v: float\n        f.P = P\n    if x is None:\n        return f.P\n"
        "    if isinstance(x, f.P):\n        x.v += 1\n        return None\n    return x + 1\n",
        "an object of the generation's own class with hooks (a dataclass's generated __eq__) made by the tests "
        "is refused when handed to generated code (its hooks would answer the tests' comparisons unwrapped); "
        "measured before this round too"),
}
HONEST_OPEN_CASES = {
    "class_constant_hooked_object": "h = f(1.0)\nassert np.allclose(h.total(2.0), target)",
    "own_dataclass_constructed_by_tests": "P = f(None)\np = P(1.0)\nf(p)\nassert np.allclose(p.v, target)",
}


@pytest.fixture(scope="module")
def honest_open():
    probs, h5, gen, steps = one_step_set("red-r5-honest-open", {k: v[0] for k, v in HONEST_OPEN.items()},
                                         cases=HONEST_OPEN_CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return out, steps


@pytest.mark.parametrize("label", sorted(HONEST_OPEN))
def test_round5_honest_open(honest_open, label):
    out, steps = honest_open
    line = step_line(out, steps[label])
    assert line.startswith("PASS"), line
