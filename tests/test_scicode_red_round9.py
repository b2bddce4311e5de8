"""Red team round 9 (scred9), against the one-pass reader of the checks after each case
(`_Words` in the SciCode worker, scfast).  Two wrong verdicts found and fixed, both also wrong
before the reader (its Python path compared the same identities):

* a library function's keyword defaults written IN PLACE (`simpson.__kwdefaults__['dx'] = ...`
  writes the very dict `f.__kwdefaults__` answers: the pointer the check compares stays) passed;
  now the dict's own version tag is recorded and read with the function's words (moved: its
  keys and values compared by identity to the recorded ones);
* a held library object's class replaced (`scipy.stats.norm.__class__ = S`, a subclass of the
  generation's with its own `_ppf`: the object, its dict and the dict's tag as they were; the
  reader saw its class word move, the Python comparison looked only at the dict) passed; now a
  held object whose class is not its recorded one nor a library class is `Tampering`.

Measured and right without a change (kept as tests): a sympy facts object's dict replaced so
that the new dict may take the freed one's address (a new dict gets a fresh PEP 509 tag: found);
a generation lowering RLIMIT_AS under the checks (FAIL, the model's); a step that SIGSEGVs
itself (FAIL, ProcessDied, the model's, no harness fault).  Honest twins: library caches
(lru_cache, printoptions, seterr, warnings, scipy.special and sympy submodules imported
mid-step), threads, thousands of functions and classes, frames printed with their locals,
keyword arguments passed explicitly, a generation writing its OWN function's keyword defaults."""
import json
import subprocess
import sys

import pytest

from test_scicode_support import GRADER, run_one_step_set, step_line, tmpdir
from test_scicode_word_checks import WORKER_LOAD, WORKER_RUN, two_case_set

ATTACKS = {
    "kwdefaults_in_place_next_case_restored": (
        "def f(x):\n    import scipy.integrate\n    s = scipy.integrate.simpson\n    if not hasattr(f, 'old'):\n"
        "        f.old = s.__kwdefaults__['dx']\n        s.__kwdefaults__['dx'] = 1000.0\n"
        "    else:\n        s.__kwdefaults__['dx'] = f.old\n    return x + 1\n"),
    "kwdefaults_in_place_left": (
        "def f(x):\n    import scipy.integrate\n    scipy.integrate.simpson.__kwdefaults__['dx'] = 1000.0\n"
        "    return x + 1\n"),
    "held_object_class_next_case_restored": (
        "def f(x):\n    import scipy.stats\n    n = scipy.stats.norm\n    if not hasattr(f, 'old'):\n"
        "        f.old = type(n)\n        class S(f.old):\n            def _ppf(self, q):\n"
        "                return q * 0 + 1000.0\n        n.__class__ = S\n"
        "    else:\n        n.__class__ = f.old\n    return x + 1\n"),
    "held_object_class_left": (
        "def f(x):\n    import scipy.stats\n    n = scipy.stats.norm\n    if type(n).__name__ != 'S':\n"
        "        class S(type(n)):\n            def _ppf(self, q):\n                return q * 0 + 1000.0\n"
        "        n.__class__ = S\n    return x + 1\n"),
    "sympy_facts_dict_same_address": (
        "def f(x):\n    import sympy\n    kb = sympy.Add.default_assumptions\n    if not hasattr(f, 'done'):\n"
        "        f.done = True\n        g = dict(kb.__dict__['_generator'])\n        g['positive'] = True\n"
        "        kb.__dict__ = {}\n        kb.__dict__ = {'_generator': g}\n    return x + 1\n"),
    "rlimit_as_under_the_checks": (
        "def f(x):\n    import resource, scipy.integrate._quadrature as q\n"
        "    q._basic_simpson.__code__ = (lambda y, start, stop, x, dx, axis: 1000.0).__code__\n"
        "    if not hasattr(f, 'd'):\n        f.d = 1\n"
        "        rss = int(open('/proc/self/statm').read().split()[0]) * 4096\n"
        "        resource.setrlimit(resource.RLIMIT_AS, (rss + (1 << 20), resource.RLIM_INFINITY))\n"
        "    return x + 1\n"),
    "mutable_default_list_left": (
        "def f(x):\n    import numpy.polynomial.chebyshev as C\n    k = C.chebint.__defaults__[1]\n"
        "    if not k:\n        k.append(5.0)\n    return x + 1\n"),
    "mutable_default_list_next_case_restored": (
        "def f(x):\n    import numpy.polynomial.chebyshev as C\n    k = C.chebint.__defaults__[1]\n"
        "    if not hasattr(f, 'd'):\n        f.d = 1\n        k.append(5.0)\n    else:\n        k.clear()\n"
        "    return x + 1\n"),
    "mutable_default_dict_generated_callable": (
        "def f(x):\n    import string\n    string.Template.substitute.__defaults__[0]['x'] = lambda: 1\n"
        "    return x + 1\n"),
    "recursion_limit_low_under_the_checks": (
        "def f(x):\n    import sys, scipy.integrate\n    scipy.integrate.simpson.__kwdefaults__['dx'] = 1000.0\n"
        "    sys.setrecursionlimit(25)\n    return x + 1\n"),
    "nofile_limit_under_the_checks": (
        "def f(x):\n    import resource, scipy.integrate\n    scipy.integrate.simpson.__kwdefaults__['dx'] = 1000.0\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))\n    return x + 1\n"),
    "thread_writing_kwdefaults_during_the_checks": (
        "def f(x):\n    import threading, time, scipy.integrate\n    kw = scipy.integrate.simpson.__kwdefaults__\n"
        "    def run():\n        t0 = time.time()\n        while time.time() - t0 < 0.3:\n"
        "            kw['dx'] = 1000.0\n            kw['dx'] = 1.0\n        kw['dx'] = 1000.0\n"
        "    threading.Thread(target=run).start()\n    return x + 1\n"),
    "sympy_dispatcher_slot_registered": (
        "def f(x):\n    import sympy\n    from sympy.core.relational import _eval_is_eq\n"
        "    if not hasattr(f, 'd'):\n        f.d = 1\n"
        "        _eval_is_eq.add((sympy.Symbol, sympy.Symbol), lambda a, b: True)\n    return x + 1\n"),
    "numpy_partial_keywords_written": (
        "def f(x):\n    import numpy._core.arrayprint as ap\n"
        "    ap._default_array_repr.keywords['array2string'] = lambda *a, **k: 'rigged'\n    return x + 1\n"),
    "lru_cache_wrapped_code_set": (
        "def f(x):\n    import sympy.core.intfunc as I\n    if not hasattr(f, 'd'):\n        f.d = 1\n"
        "        I.igcd.__wrapped__.__code__ = (lambda *args: 7).__code__\n        I.igcd.cache_clear()\n"
        "    return x + 1 + 0 * I.igcd(12, 18)\n"),
    "decorator_closure_function_code_set": (
        "def f(x):\n    import sympy.core.basic as B\n"
        "    B._get_postprocessors.__wrapped__.__code__ = (lambda *a, **k: ()).__code__\n    return x + 1\n"),
    "sigsegv_in_the_step": (
        "def f(x):\n    import faulthandler\n    faulthandler._sigsegv()\n    return x + 1\n"),
}
EXPECT = {"kwdefaults_in_place_next_case_restored": "library function simpson",
          "kwdefaults_in_place_left": "library function simpson",
          "held_object_class_next_case_restored": "library object's class (norm_gen",
          "held_object_class_left": "library object's class (norm_gen",
          "sympy_facts_dict_same_address": "sympy class Add",
          "rlimit_as_under_the_checks": "Tampering",
          "sigsegv_in_the_step": "ProcessDied",
          "lru_cache_wrapped_code_set": "library function igcd",
          "decorator_closure_function_code_set": "library function _get_postprocessors",
          "sympy_dispatcher_slot_registered": "library registry or object's dict",
          "numpy_partial_keywords_written": "library registry or object's dict (array2string",
          "recursion_limit_low_under_the_checks": "library function simpson",
          "nofile_limit_under_the_checks": "library function simpson",
          "thread_writing_kwdefaults_during_the_checks": "Tampering",
          "mutable_default_list_left": "library function chebint",
          "mutable_default_list_next_case_restored": "library function chebint",
          "mutable_default_dict_generated_callable": "library function Template.substitute"}
HONEST = {
    "library_caches_and_imports_mid_step": (
        "def f(x):\n    import functools, warnings, scipy.special, sympy.physics.quantum, sympy.polys.domains\n"
        "    g = functools.lru_cache(None)(lambda n: n)\n"
        "    np.set_printoptions(precision=4)\n    np.seterr(all='ignore')\n    warnings.filterwarnings('ignore')\n"
        "    scipy.special.gamma(3.0)\n    sympy.cacheit(lambda a: a)(1)\n    sympy.sqrt(sympy.Integer(int(x) + 7))\n"
        "    return x + 1 + 0 * g(int(x))\n"),
    "threads_joined": (
        "def f(x):\n    import threading\n    out = []\n"
        "    ts = [threading.Thread(target=lambda: out.append(np.linalg.inv(np.eye(30)).sum())) for _ in range(4)]\n"
        "    [t.start() for t in ts]\n    [t.join() for t in ts]\n    return x + 1\n"),
    "many_functions_and_classes": (
        "def f(x):\n    if not hasattr(f, 'FNS'):\n        FNS = []\n        for _i in range(3000):\n"
        "            def _h(a, _i=_i, *, b=_i):\n                return a + _i\n            FNS.append(_h)\n"
        "        f.FNS = FNS\n        f.CLS = [type('C%d' % i, (object,), {'v': i, 'm': (lambda self: 1)}) for i in range(1500)]\n"
        "        f.BIG = list(range(200000))\n"
        "    return x + 1 + 0 * f.FNS[5](0) * f.CLS[3]().m()\n"),
    "frames_printed_with_locals": (
        "def f(x):\n    import traceback\n"
        "    s = traceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True)\n"
        "    print(''.join(s.format())[:2000])\n    traceback.print_stack()\n    return x + 1\n"),
    "keyword_passed_explicitly": (
        "def f(x):\n    import scipy.integrate\n    return scipy.integrate.simpson(np.array([x, x, x]), dx=0.5) / x + x\n"),
    "library_memo_defaults_written": (
        "def f(x):\n    import mpmath, sympy\n    import numpy.polynomial.chebyshev as C\n"
        "    mpmath.factorial(30 + int(x))\n    mpmath.zeta(3 + x)\n    mpmath.besselj(1, x)\n"
        "    mpmath.fib(40 + int(x))\n    mpmath.bernoulli(10 + int(x))\n    mpmath.diff(lambda t: t ** 3, x)\n"
        "    sympy.factorial(25 + int(x)).evalf(30)\n    sympy.N(sympy.zeta(3), 40)\n"
        "    c = C.chebint(np.array([x]))\n    return x + 1 + 0 * float(c[0])\n"),
    "sympy_own_classes_through_dispatch": (
        "def f(x):\n    import sympy, functools\n    class Half(sympy.Function):\n"
        "        @classmethod\n        def eval(cls, a):\n            if a.is_Number:\n                return a / 2\n"
        "    class P(sympy.Symbol):\n        pass\n    a, b = P('a'), P('b')\n"
        "    assert sympy.Eq(a, a) is sympy.true and sympy.Eq(a, b) != sympy.true\n"
        "    assert sympy.simplify(Half(2 * a) - Half(2 * a)) == 0 and Half(sympy.Integer(4)) == 2\n"
        "    v = np.vectorize(lambda t: t + 1)\n    p = functools.partial(np.add, 1)\n"
        "    repr(np.arange(3))\n    return float(v(x)) + 0 * p(x)\n"),
    "own_function_kwdefaults_written": (
        "def f(x):\n    def g(a, *, k=0):\n        return a + k\n    g.__kwdefaults__['k'] = 1\n"
        "    f.__kwdefaults__ = {'unused': 1}\n    return g(x)\n"),
}


@pytest.fixture(scope="module")
def attacks():
    probs, h5, gen, steps = two_case_set("r9-attacks", ATTACKS)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    return rc, out, steps, keys


@pytest.mark.parametrize("label", sorted(ATTACKS))
def test_round9_attack_fails_as_the_models(attacks, label):
    rc, out, steps, keys = attacks
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line and EXPECT[label] in line, line


def test_round9_attacks_no_harness_fault(attacks):
    rc, out, steps, keys = attacks
    assert rc == 1 and keys["harness_fault_steps"] == "0" and keys["SCORE"] == "0.0", out


def test_round9_honest_twins_pass():
    probs, h5, gen, steps = two_case_set("r9-honest", HONEST)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    for label in HONEST:
        assert step_line(out, steps[label]).startswith("PASS"), (label, out)
    assert rc == 0 and keys["RESULT"] == "PASS", out


# both paths of the checks in process: the one-pass reader, and the Python path it falls back to
IN_PROCESS = WORKER_LOAD + r'''
if sys.argv[4] == "python":
    assert body.count("\n_WORDS = _word_reader()\n") == 1
    body = body.replace("\n_WORDS = _word_reader()\n", "\n_WORDS = None\n")
warm = ["numpy", "scipy.integrate", "scipy.stats", "sympy"]
''' + WORKER_RUN + r'''
check = lambda: g["_library_classes_changed"]([])
check()
out = {"reader": g["_WORDS"] is not None, "clean": check()}
import scipy.integrate, scipy.stats
kw = scipy.integrate.simpson.__kwdefaults__
old = kw["dx"]
kw["dx"] = 1000.0
out["kw"] = check()
kw["dx"] = old
out["kw_undone"] = check()
kw["dx"] = float("1.0") + 0.0          # (equal, not the recorded object: a write all the same)
out["kw_equal_value"] = check()
kw["dx"] = old
n = scipy.stats.norm
was = type(n)
class S(was):
    def _ppf(self, q):
        return q * 0 + 1000.0
n.__class__ = S
out["cls"] = check()
n.__class__ = was
out["cls_undone"] = check()
out["clean_end"] = check()
print(json.dumps(out))
'''


@pytest.mark.parametrize("path", ["reader", "python"])
def test_in_process_kwdefaults_and_held_class_found_on_both_paths(path):
    import test_scicode_support as sup
    shim = tmpdir(f"r9-shim-{path}")
    proc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(GRADER), str(sup.REPO), str(shim), path],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if path == "python":
        assert not out["reader"], out
    elif sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11) and sys.maxsize > 2 ** 32:
        assert out["reader"], out
    assert out["clean"] == [] and out["kw_undone"] == [] and out["cls_undone"] == [] and out["clean_end"] == [], out
    assert any("library function simpson" in m for m in out["kw"]), out
    assert any("library function simpson" in m for m in out["kw_equal_value"]), out
    assert any("library object's class (norm_gen" in m for m in out["cls"]), out


@pytest.mark.xfail(strict=True, reason="a plain value written into a library function's dict default "
                   "(`string.Template.substitute.__defaults__[0]['x'] = 1`) passes: dict defaults are libraries' "
                   "memos (mpmath's `ifac(n, memo={...})`, `_cache={}`, written by honest sympy calls), so only a "
                   "callable or object of the generation's in one is Tampering (measured PASS)")
def test_round9_plain_value_in_a_dict_default_is_not_seen():
    probs, h5, gen, steps = two_case_set("r9-dict-default", {"plain_value_in_dict_default": (
        "def f(x):\n    import string\n    string.Template.substitute.__defaults__[0]['x'] = 1\n    return x + 1\n")})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    assert step_line(out, steps["plain_value_in_dict_default"]).startswith("FAIL"), out


@pytest.mark.xfail(strict=True, reason="a held library object's class replaced by ANOTHER library class "
                   "(`scipy.stats.norm.__class__ = laplace_gen`: norm.ppf answers laplace's) passes: only a class "
                   "that is not the library's counts, as for a module's class (a library may change its own "
                   "objects' classes; not measured which do) (measured PASS)")
def test_round9_held_object_swapped_to_another_library_class_is_not_seen():
    probs, h5, gen, steps = two_case_set("r9-lib-class", {"library_class_swap": (
        "def f(x):\n    import scipy.stats\n    from scipy.stats._continuous_distns import laplace_gen\n"
        "    scipy.stats.norm.__class__ = laplace_gen\n    return x + 1\n")})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "60")
    assert step_line(out, steps["library_class_swap"]).startswith("FAIL"), out
