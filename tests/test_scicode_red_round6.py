"""Issue 22, round 6 (second engineer, source in hand): the "only plain data crosses" copies
and write-backs of round 5 attacked.  Each attack must fail as the model's (FAIL [model],
score 0); each honest twin must pass.  Grouped in one grader run per table (fast)."""
import pytest

from test_scicode_support import one_step_set, run_one_step_set, step_line


def own(head, body, deco=""):
    """Lines of `f` that make its own class once (kept on f) and return it for f(None)."""
    name = head.split("(")[0]
    text = "".join("        " + ln + "\n" for ln in (deco + "class " + head + ":\n" + body).splitlines())
    return f"    if not hasattr(f, '{name}'):\n{text}        f.{name} = {name}\n    if x is None:\n        return f.{name}\n"


def kept_return(base_import, make):
    """f(1.0) returns an object it keeps (made by `make`, its .v or [0] = 2.0); f(2.0) rewrites it to 1000."""
    return ("def f(x):\n" + base_import + "    if x > 1.5:\n        k = f.keep\n"
            "        if hasattr(k, 'v'):\n            k.v = 1000.0\n        else:\n            k[0] = 1000.0\n"
            "        return x + 1\n" + make + "    f.keep = h\n    return h\n")


def kept_argument(imp, kind):
    """f(obj) keeps the tests' object; f(2.0) rewrites it to 1000."""
    return ("def f(x):\n    import " + imp + "\n    if isinstance(x, " + kind + "):\n        f.keep = x\n        return 0.0\n"
            "    k = f.keep\n    if hasattr(k, 'v'):\n        k.v = 1000.0\n    else:\n        k[0] = 1000.0\n"
            "    return x + 1\n")


ATTACKS = {
    # the tests' own objects of C types handed in as they are, kept and rewritten by a later call
    "simplenamespace_argument_kept": kept_argument("types", "types.SimpleNamespace"),
    "array_array_argument_kept": kept_argument("array", "array.array"),
    # own classes on C bases (not copied: identity kept), returned, kept and rewritten
    "own_random_base_kept": kept_return("    import random\n",
                                        "    class H(random.Random):\n        pass\n    h = H(0)\n    h.v = 2.0\n"),
    "own_deque_base_kept": kept_return("    import collections\n",
                                       "    class H(collections.deque):\n        pass\n    h = H([2.0])\n"),
    "own_ordereddict_base_kept": kept_return("    import collections\n",
                                             "    class H(collections.OrderedDict):\n        pass\n    h = H()\n    h[0] = 2.0\n"),
    "own_deque_self_kept": ("def f(x):\n    import collections\n" + own("Q(collections.deque)",
                            "    def g(self):\n        f.keep = self\n        return 0.0\n")
                            + "    f.keep[0] = 1000.0\n    return x + 1\n"),
    # a library class whose objects never crossed, its method replaced by a later call: the tests build one
    "library_class_rigged": ("def f(x):\n    import scipy.sparse as sp\n    if x > 1.5:\n"
                             "        sp.csr_matrix.toarray = lambda self, *a, **k: np.full(self.shape, 1000.0)\n"
                             "        return x + 1\n    return np.array([[x]])\n"),
    "sympy_boolean_rigged": ("def f(x):\n    import sympy\n    if x > 1.5:\n"
                             "        type(sympy.S.false).__eq__ = lambda s, o: True\n        return x + 1\n"
                             "    return sympy.Integer(2)\n"),
    # a partial the tests hand in (a C object): kept, rewritten through __setstate__ by a later call
    "partial_argument_setstate": ("def f(x):\n    import functools\n    if isinstance(x, functools.partial):\n"
                                  "        f.keep = x\n        return 0.0\n"
                                  "    f.keep.__setstate__((lambda *a: 1000.0, (), {}, None))\n    return x + 1\n"),
    # deep, cyclic and huge values returned or written back: refused (fail closed), no harness fault
    "deep_list_returned": "def f(x):\n    a = [x]\n    for i in range(100000):\n        a = [a]\n    return a\n",
    "cyclic_list_returned": "def f(x):\n    a = [1000.0]\n    a.append(a)\n    return a\n",
    "cyclic_written_back": ("def f(x):\n    import argparse\n    if isinstance(x, argparse.Namespace):\n"
                            "        x.v = [1000.0]\n        x.v.append(x.v)\n        return None\n    return x + 1\n"),
    "huge_dict_written_back": ("def f(x):\n    if isinstance(x, dict):\n"
                               "        x.update({i: float(i) for i in range(3000000)})\n        return None\n    return x + 1\n"),
    # mutable C objects returned (before: handed to the tests as they were), kept and rewritten by a later call
    "array_array_returned_kept": ("def f(x):\n    import array\n    if x > 1.5:\n        f.keep[0] = 1000.0\n"
                                  "        return x + 1\n    f.keep = array.array('d', [2.0])\n    return f.keep\n"),
    "bytesio_returned_kept": ("def f(x):\n    import io\n    if x > 1.5:\n        f.keep.seek(0)\n"
                              "        f.keep.write(b'9999')\n        return x + 1\n    f.keep = io.BytesIO(b'2')\n"
                              "    return f.keep\n"),
    "own_array_array_base_kept": kept_return("    import array\n", "    class H(array.array):\n        pass\n"
                                             "    h = H('d', [2.0])\n"),
    "own_array_array_self_kept": ("def f(x):\n    import array\n" + own("A(array.array)",
                                  "    def g(self):\n        f.keep = self\n        return 0.0\n")
                                  + "    f.keep[0] = 1000.0\n    return x + 1\n"),
    "own_random_self_kept": ("def f(x):\n    import random\n" + own("Rng(random.Random)",
                             "    def g(self):\n        f.keep = self\n        return 0.0\n")
                             + "    f.keep.v = 1000.0\n    return x + 1\n"),
    # sympy's lazily filled caches, excluded from the watch: a fact forged after the expression crossed
    "sympy_assumption_forged": ("def f(x):\n    import sympy\n    if not hasattr(f, 's'):\n"
                                "        f.s = sympy.Symbol('h22_r6')\n    if x > 1.5:\n"
                                "        f.s._assumptions['positive'] = True\n        return x + 1\n    return f.s\n"),
}
ATTACK_CASES = {
    "simplenamespace_argument_kept": ("import types\nn = types.SimpleNamespace(v=2.0)\nf(n)\nf(2.0)\n"
                                      "assert (n.v > 100) == target"),
    "array_array_argument_kept": "import array\na = array.array('d', [2.0])\nf(a)\nf(2.0)\nassert (a[0] > 100) == target",
    "own_random_base_kept": "h = f(1.0)\nf(2.0)\nassert (h.v > 100) == target",
    "own_deque_base_kept": "h = f(1.0)\nf(2.0)\nassert (h[0] > 100) == target",
    "own_ordereddict_base_kept": "h = f(1.0)\nf(2.0)\nassert (h[0] > 100) == target",
    "own_deque_self_kept": "Q = f(None)\nq = Q([2.0])\nq.g()\nf(2.0)\nassert (q[0] > 100) == target",
    "library_class_rigged": ("import scipy.sparse as sp\nf(2.0)\nA = sp.csr_matrix(f(1.0))\n"
                             "assert (A.toarray()[0, 0] > 100) == target"),
    "sympy_boolean_rigged": "e = f(1.0)\nf(2.0)\nassert (e > 100) == target",
    "partial_argument_setstate": ("import functools\np = functools.partial(np.add, 1.0)\nf(p)\nf(2.0)\n"
                                  "assert (p(1.0) > 100) == target"),
    "deep_list_returned": "assert (f(1.0) is not None) == target",
    "cyclic_list_returned": "assert (f(1.0)[0] > 100) == target",
    "cyclic_written_back": "import argparse\nn = argparse.Namespace(v=0.0)\nf(n)\nassert (n.v[0] > 100) == target",
    "huge_dict_written_back": "d = {}\nf(d)\nassert (len(d) > 100) == target",
    "array_array_returned_kept": "a = f(1.0)\nf(2.0)\nassert (a[0] > 100) == target",
    "bytesio_returned_kept": "b = f(1.0)\nf(2.0)\nassert (float(b.getvalue()) > 100) == target",
    "own_array_array_base_kept": "a = f(1.0)\nf(2.0)\nassert (a[0] > 100) == target",
    "own_array_array_self_kept": "A = f(None)\na = A('d', [2.0])\na.g()\nf(2.0)\nassert (a[0] > 100) == target",
    "own_random_self_kept": "Rng = f(None)\nr = Rng(0)\nr.v = 2.0\nr.g()\nf(2.0)\nassert (r.v > 100) == target",
    "sympy_assumption_forged": "s = f(1.0)\nf(2.0)\nassert (s.is_positive is True) == target",
}
DEPENDENCIES = "import numpy as np\\nimport sympy\\nimport scipy.sparse"
# rows measured PASS (attack accepted) and not fixed: strict xfail with the reason (sympy_assumption_forged,
# open in round 6, is closed: the facts cached in kept sympy nodes are derived again, tests/test_scicode_red_watch.py)
OPEN = {}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = one_step_set("red-r6", ATTACKS, target=True, cases=ATTACK_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"' + DEPENDENCIES + '"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=OPEN[k]))
                                   if k in OPEN else k for k in sorted(ATTACKS)])
def test_round6_attack_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line


def test_round6_attacks_no_harness_fault(attacks):
    rc, out, steps, keys = attacks
    assert rc == 1 and keys["RESULT"] in ("FAIL", "PARTIAL") and keys["harness_fault_steps"] == "0", out
    assert "harness" not in out.split("census.verdict")[-1].splitlines()[0], out


HONEST = {
    "generator_returned": "def f(x):\n    yield x + 1\n    yield x + 2\n",
    "generator_send": "def f(x):\n    while True:\n        x = yield x + 1\n",
    "generator_throw_close": ("def f(x):\n    try:\n        yield x + 1\n    except ValueError:\n"
                              "        f.caught = True\n        yield x + 2\n    finally:\n        x = 0.0\n"),
    "libraries_used": ("def f(x):\n    import warnings, scipy.sparse as sp, scipy.stats as st, sympy\n"
                       "    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n"
                       "        A = sp.csr_matrix(np.eye(2) * (x + 1))\n        s = sympy.Symbol('h22_r6h')\n"
                       "        v = float(sympy.diff(s ** 2, s).subs(s, (x + 1) / 2))\n"
                       "        d = st.norm(loc=x + 1)\n    with np.errstate(divide='ignore'):\n"
                       "        w = np.log(np.zeros(1))\n    return float(A.toarray()[0, 0] + v + d.mean()) / 3 + 0 * float(w[0] < 0)\n"),
    "partial_argument": ("def f(x):\n    import functools\n    if isinstance(x, functools.partial):\n"
                         "        return float(x(1.0))\n    return x + 1\n"),
    "io_returned": ("def f(x):\n    import io\n    b = io.StringIO()\n    b.write(str(x + 1))\n"
                    "    return b if x > 0 else io.BytesIO(b'ab')\n"),
    "own_array_array_base": ("def f(x):\n    import array\n" + own("A(array.array)", "    def bump(self):\n"
                             "        self[0] += 1\n        return self\n") + "    return array.array('d', [x + 1])\n"),
    "own_random_base": ("def f(x):\n    import random\n" + own("Rng(random.Random)", "    def draw(self):\n"
                        "        self.n = getattr(self, 'n', 0) + 1\n        return self.random()\n")
                        + "    if isinstance(x, random.Random):\n        return x.random() * 0 + 2.0\n"
                        "    return f.Rng(7) if x > 0 else x + 1\n"),
    # library classes subclassed by the generation (their namespaces must not count as changed)
    "rv_continuous_subclass": ("def f(x):\n    import scipy.stats as st\n    class U(st.rv_continuous):\n"
                               "        def _pdf(self, t):\n            return np.where((t >= 0) & (t <= 1), 1.0, 0.0)\n"
                               "    return float(U(a=0, b=1).mean()) * 2 * (x + 1)\n"),
    "sympy_function_subclass": ("def f(x):\n    import sympy\n    class g(sympy.Function):\n        @classmethod\n"
                                "        def eval(cls, a):\n            if a.is_Number:\n                return a + 1\n"
                                "    return float(g(sympy.Float(x)))\n"),
    "map_returned": "def f(x):\n    return map(lambda v: v + 1, [x, x])\n",
    "dict_keys_returned": "def f(x):\n    return {x + 1: 0}.keys()\n",
    "lru_cache": "@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x + 1\n",
    "lru_cache_info": "@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x + 1\n",
    "own_dict_custom_setitem": ("def f(x):\n" + own("D(dict)", "    def __setitem__(self, k, v):\n"
                                                 "        super().__setitem__(k, 2 * v)\n"
                                                 "    def put(self, k, v):\n        self[k] = v\n")
                                + "    return x + 1\n"),
    "own_deque_base": ("def f(x):\n    import collections\n" + own("Q(collections.deque)",
                       "    def push(self, v):\n        self.append(v)\n        return len(self)\n")
                       + "    return collections.deque([x + 1], maxlen=3) if x > 0 else x + 1\n"),
    "own_ordereddict_base": ("def f(x):\n    import collections\n" + own("C(collections.OrderedDict)",
                             "    def put(self, k, v):\n        self[k] = v\n        self.move_to_end(k, last=False)\n")
                             + "    return x + 1\n"),
    "array_array_in_place": ("def f(x):\n    import array\n    if isinstance(x, array.array):\n"
                             "        x[1] = x[0] + 1\n        f.keep = x\n        return None\n    return x + 1\n"),
    "simplenamespace_config_written": ("def f(x):\n    import types\n    if isinstance(x, types.SimpleNamespace):\n"
                                       "        x.w = x.v + 1\n        return None\n    return x + 1\n"),
    "own_dict_missing": ("def f(x):\n" + own("D(dict)", "    def __missing__(self, k):\n        return 0.0\n")
                         + "    return x + 1\n"),
    "set_name_descriptor": ("def f(x):\n    class Typed:\n        def __set_name__(self, owner, name):\n"
                            "            self.name = '_' + name\n        def __get__(self, obj, typ=None):\n"
                            "            return getattr(obj, self.name)\n        def __set__(self, obj, v):\n"
                            "            setattr(obj, self.name, float(v))\n    class P:\n        v = Typed()\n"
                            "        def __init__(self, v):\n            self.v = v\n    return P(x + 1)\n"),
}
HONEST_CASES = {
    "generator_returned": "g = f(1.0)\nassert np.allclose(next(g), target) and list(g) == [3.0]",
    "generator_send": "g = f(1.0)\nv = next(g)\nw = g.send(2.0)\nassert np.allclose(v, target) and w == 3.0",
    "generator_throw_close": ("g = f(1.0)\nv = next(g)\nw = g.throw(ValueError)\nc = g.close()\n"
                              "assert np.allclose(v, target) and w == 3.0 and c is None"),
    "libraries_used": ("import scipy.sparse as sp\nassert np.allclose(f(1.0), target) and "
                       "np.allclose(sp.csr_matrix(np.eye(2) * f(1.0)).toarray()[0, 0], target)"),
    "partial_argument": ("import functools\np = functools.partial(np.add, 1.0)\n"
                         "assert np.allclose(f(p), target) and np.allclose(p(1.0), target)"),
    "io_returned": ("b = f(1.0)\nc = f(0.0)\nassert np.allclose(float(b.getvalue()), target) and b.read() == '' "
                    "and c.read() == b'ab'"),
    "own_array_array_base": ("A = f(None)\na = A('d', [1.0])\nr = a.bump()\n"
                             "assert np.allclose(a[0], target) and np.allclose(r[0], target) and np.allclose(f(1.0)[0], target)"),
    "own_random_base": ("import random\nRng = f(None)\ng = Rng(0)\na = g.draw()\nb = g.draw()\nr = random.Random(0)\n"
                        "c = f(r)\nd = r.random()\nh = f(1.0)\nref = random.Random(0)\nx1, x2 = ref.random(), ref.random()\n"
                        "assert np.allclose(c, target) and (a, b) == (x1, x2) and g.n == 2 and d == x2 "
                        "and h.random() == random.Random(7).random()"),
    "map_returned": "assert np.allclose(list(f(1.0)), target)",
    "dict_keys_returned": "assert np.allclose(list(f(1.0)), target)",
    "lru_cache": "a = f(1.0)\nb = f(1.0)\nassert np.allclose(a, target) and np.allclose(b, target)",
    "lru_cache_info": "a = f(1.0)\nb = f(1.0)\nassert np.allclose(a, target) and f.cache_info().hits == 1",
    "own_dict_custom_setitem": ("D = f(None)\nd = D()\nd['a'] = 1.0\nd.put('b', 0.5)\n"
                                "assert np.allclose(d['a'], target) and d['b'] == 1.0"),
    "own_deque_base": ("Q = f(None)\nq = Q([1.0], 2)\nn = q.push(2.0)\nq.push(3.0)\nr = f(1.0)\n"
                       "assert n == 2 and list(q) == [2.0, 3.0] and q.maxlen == 2 and r.maxlen == 3 "
                       "and np.allclose(r[0], target)"),
    "own_ordereddict_base": ("C = f(None)\nc = C()\nc.put('a', 1.0)\nc.put('b', 2.0)\n"
                             "assert list(c) == ['b', 'a'] and np.allclose(c['b'], target)"),
    "array_array_in_place": "import array\na = array.array('d', [1.0, 0.0])\nf(a)\nassert np.allclose(a[1], target)",
    "simplenamespace_config_written": ("import types\nn = types.SimpleNamespace(v=1.0)\nf(n)\n"
                                       "assert np.allclose(n.w, target)"),
    "own_dict_missing": "D = f(None)\nd = D(a=2.0)\nassert np.allclose(d['a'], target) and d['c'] == 0.0",
    "set_name_descriptor": "p = f(1.0)\nassert np.allclose(p.v, target)",
}
HONEST_OPEN = {
    "own_random_base_kept": (
        "an object of the generation's own class on a C base the copy cannot rebuild (random.Random's "
        "_random.Random) crosses as it is (its attributes settled in place), so a later call rewrites what the "
        "tests hold (measured PASS, h.v = 1000.0); documented in Known limits ('a subclass of a C type'); "
        "refusing such objects outright would fail honest Random subclasses, copying needs each C type's state"),
}


@pytest.fixture(scope="module")
def honest():
    probs, h5, gen, steps = one_step_set("red-r6-honest", HONEST, cases=HONEST_CASES)
    probs.write_text(probs.read_text().replace('"import numpy as np"', '"import numpy as np\\nimport functools\\nimport scipy.sparse\\nimport scipy.stats\\nimport sympy"'))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=HONEST_OPEN[k]))
                                   if k in HONEST_OPEN else k for k in sorted(HONEST)])
def test_round6_honest_twin_passes(honest, label):
    rc, out, steps, keys = honest
    line = step_line(out, steps[label])
    assert line.startswith("PASS"), line
