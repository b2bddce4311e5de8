"""Second review (branch sc-red): the recorder's channel out of reach of `__import__(__name__)`,
and honest generations the sandbox used to fail.

Before: the step's `__main__` was the worker's module, so `__import__(__name__)._CUR["send"]`
(or `__import__(np.allclose.__module__)`) gave a generation the recorder's token-tagged
channel with no name the audit flags: it forged `case ok` + `done` and left through
`os.execv('/bin/true')` (exit 0), passing a case whose own assertion fails.  Now `__main__` is
the program's namespace (as the official test script's) and the recorders claim numpy's
module.  Honest side: a write to /tmp failed (read-only root), multiprocessing could not
pickle the generation's functions (`attribute lookup f on __main__ failed`)."""
import pytest

from test_scicode_support import gs, one_step_set, run_one_step_set, step_line

FORGE = ("def f(x):\n    import os\n    c = MOD._CUR\n"
         "    c['send']({'case': 0, 'ok': True})\n    c['send']({'done': True, 'tamper': []})\n"
         "    os.execv('/bin/true', ['true'])\n")
BODIES = {
    "honest": "def f(x):\n    return x + 1\n",
    "forge_via_name": FORGE.replace("MOD", "__import__(__name__)"),
    "forge_via_module": FORGE.replace("MOD", "__import__(np.allclose.__module__)"),
    "forge_via_importlib": FORGE.replace("MOD", "__import__('importlib').import_module(np.isclose.__module__)"),
    # honest generations
    "numpy_scalar_eq": "def f(x):\n    return np.float64(x + 1)\n",
    "tuple_for_list": "def f(x):\n    return (x + 1,)\n",
    "prints_a_lot": "def f(x):\n    for i in range(100000):\n        print('line', i)\n    return x + 1\n",
    "writes_tmp": ("def f(x):\n    with open('/tmp/scicode_probe.npy', 'wb') as fh:\n        np.save(fh, x + 1)\n"
                   "    return float(np.load('/tmp/scicode_probe.npy'))\n"),
    "writes_cwd_abspath": ("def f(x):\n    import os\n    p = os.path.abspath('probe.npy')\n    np.save(p, x + 1)\n"
                           "    return float(np.load(p))\n"),
    "tempfile": ("def f(x):\n    import tempfile\n    with tempfile.NamedTemporaryFile() as fh:\n"
                 "        fh.write(b'a')\n    return x + 1\n"),
    "thread_pool": ("def f(x):\n    from concurrent.futures import ThreadPoolExecutor\n"
                    "    with ThreadPoolExecutor(2) as ex:\n        return list(ex.map(lambda v: v + 1, [x]))[0]\n"),
    "process_pool_pickles_f": ("def f(x, d=0):\n    if d:\n        return x + 1\n    import multiprocessing as mp\n"
                               "    with mp.Pool(2) as p:\n        return p.starmap(f, [(x, 1)])[0]\n"),
    "seeds_rng": "def f(x):\n    np.random.seed(0)\n    return x + 1 + 0 * np.random.rand()\n",
    "thread_pool_left_running": ("def f(x):\n    from concurrent.futures import ThreadPoolExecutor\n"
                                 "    return ThreadPoolExecutor(2).submit(lambda: x + 1).result()\n"),
}
CASES = {k: "y = f(1.0)\nassert y > 100\nassert np.allclose(y, target)" for k in BODIES if k.startswith("forge")}
CASES.update({"numpy_scalar_eq": "assert f(1.0) == target",
              "tuple_for_list": "from scicode.compare.cmp import cmp_tuple_or_list\n"
                                "assert cmp_tuple_or_list(f(1.0), [target])"})
FORGED = [k for k in BODIES if k.startswith("forge")]
HONEST = [k for k in BODIES if not k.startswith("forge") and k != "thread_pool_left_running"]


@pytest.fixture(scope="module")
def run():
    probs, h5, gen, steps = one_step_set("forged_completion", BODIES, cases=CASES)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "20", "--jobs", "2")
    return out, steps


@pytest.mark.parametrize("label", FORGED)
def test_forged_completion_fails(run, label):
    out, steps = run
    text = step_line(out, steps[label])
    assert text.startswith("FAIL") and "has no attribute '_CUR'" in text, text


@pytest.mark.parametrize("label", HONEST)
def test_honest_generation_passes(run, label):
    out, steps = run
    text = step_line(out, steps[label])
    assert text.startswith("PASS"), text


def test_thread_left_running_is_named(run):
    out, steps = run
    text = step_line(out, steps["thread_pool_left_running"])
    assert text.startswith("FAIL") and "a thread left running" in text, text


def test_audit_flags_the_remaining_routes():
    for code in ("def f(x):\n    return np.allclose.__closure__\n",
                 "def f(x):\n    return np.allclose.__getattribute__('__glob' + 'als__')\n",
                 "def f(x):\n    import os\n    os.execv('/bin/true', ['true'])\n",
                 "def f(x):\n    g = getattr\n    return g(np.allclose, '__glo' + 'bals__')\n",
                 "def f(x):\n    import operator\n    return operator.attrgetter('__glo' + 'bals__')(np.allclose)\n"):
        assert gs.audit_generation(code), code
    assert not gs.audit_generation(BODIES["process_pool_pickles_f"])
    assert not gs.audit_generation("def f(x):\n    import operator\n    return sorted(x, key=operator.attrgetter('real'))\n")


RIGGED = {
    # numpy calls __array_finalize__ on every result of a ufunc on the subclass: it could
    # rewrite the test's own boolean (`(f(x) > 0).all() == target`) before it is recorded
    "finalize_subclass": ("def f(x):\n    class A(np.ndarray):\n        def __array_finalize__(self, obj):\n"
                          "            pass\n    return np.asarray([x + 1]).view(A)\n"),
    "mul_hook": ("def f(x):\n    class M(float):\n        def __mul__(self, o):\n            return 2.0\n"
                 "    return M(0.0)\n"),
    "nested_two_deep": ("def f(x):\n    class E(float):\n        def __eq__(self, o):\n            return True\n"
                        "    return [[E(0.0)]]\n"),
    "honest_namedtuple": ("def f(x):\n    import collections\n    P = collections.namedtuple('P', 'v')\n"
                          "    return P(x + 1)\n"),
}
RIGGED_CASES = {"finalize_subclass": "assert np.allclose(f(1.0), target)",
                "mul_hook": "assert np.allclose(f(1.0) * 1.0, target)",
                "nested_two_deep": "assert f(1.0)[0][0] == target",
                "honest_namedtuple": "assert np.allclose(f(1.0)[0], target)"}


def test_rigged_returns_refused_honest_namedtuple_passes():
    probs, h5, gen, steps = one_step_set("rigged_returns", RIGGED, cases=RIGGED_CASES)
    out = run_one_step_set(probs, h5, gen, "--timeout", "20", "--jobs", "2")[1]
    for label in ("finalize_subclass", "mul_hook", "nested_two_deep"):
        text = step_line(out, steps[label])
        assert text.startswith("FAIL") and "NotPlainData: " in text, text
    assert step_line(out, steps["honest_namedtuple"]).startswith("PASS")


def test_honest_dicts_and_sparse_matrices_pass():
    """Float (and numpy float) dict keys through are_dicts_close; csc/csr/coo_array/dense
    answers against a sparse target, which the official encoding reads back as CSR."""
    import numpy as np
    import scipy.sparse as sp
    dicts = {"float_keys": "def f(x):\n    return {1.5: x + 1, 3.0: 4.0}\n",
             "npfloat_keys": "def f(x):\n    return {np.float64(1.5): np.float64(x + 1), np.float64(3.0): 4}\n",
             "wrong": "def f(x):\n    return {1.5: 0.0, 3.0: 4.0}\n"}
    cases = {k: "from scicode.compare.cmp import are_dicts_close\nassert are_dicts_close(f(1.0), target)"
             for k in dicts}
    probs, h5, gen, steps = one_step_set("dict_keys", dicts, target={1.5: 2.0, 3.0: 4.0}, cases=cases)
    out = run_one_step_set(probs, h5, gen, "--timeout", "20")[1]
    assert [step_line(out, steps[k])[:4] for k in dicts] == ["PASS", "PASS", "FAIL"], out
    mk = "    import scipy.sparse as sp\n    return sp.{}(np.array([[1.0, 0], [0, 2.0]]))\n"
    mats = {"csc": "def f(x):\n" + mk.format("csc_matrix"), "csr": "def f(x):\n" + mk.format("csr_matrix"),
            "coo_array": "def f(x):\n" + mk.format("coo_array"),
            "dense": "def f(x):\n    return np.array([[1.0, 0], [0, 2.0]])\n",
            "wrong": "def f(x):\n    import scipy.sparse as sp\n    return sp.csc_matrix(np.eye(2))\n"}
    cases = {k: "from scicode.compare.cmp import are_csc_matrix_close\nassert are_csc_matrix_close(f(1.0), target)"
             for k in mats}
    cases["dense"] = "assert np.allclose(f(1.0), target.toarray())"
    probs, h5, gen, steps = one_step_set("sparse_answers", mats, target=sp.csc_matrix(np.diag([1.0, 2.0])),
                                         cases=cases)
    out = run_one_step_set(probs, h5, gen, "--timeout", "20")[1]
    assert [step_line(out, steps[k])[:4] for k in mats] == ["PASS"] * 4 + ["FAIL"], out


def _b64(arr):
    import base64
    import io
    import numpy as np
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode()


def test_records_cannot_make_the_grader_allocate_without_bound():
    """Before: `f(x) == target` with a (1, 10**6) answer against a (2000, 1) target made the
    grader's own process build a 2·10**9-element array; a computed sparse matrix of shape
    (2**31, 2) was converted (CSR index arrays of 16 GB) before any comparison."""
    import numpy as np
    site = gs.Site("==", [["computed", None], ["target", ["path", 0, []]]], {}, "f(x) == target")
    rec = {"kind": "==", "target": {"__target__": [0, []]}, "other": {"__array__": _b64(np.zeros((1, 10**6)))}}
    ok, why = gs.evaluate_site(site, rec, {0: np.zeros((2000, 1))}, None)
    assert not ok and "broadcast" in why
    for other, target in ((2.0, 2.0), ("abc", "abc"), ([1, [2, 3]], [1, [2, 3]]), (True, True)):
        rec = {"kind": "==", "target": {"__target__": [0, []]}, "other": other}
        assert gs.evaluate_site(site, rec, {0: target}, None) == (True, "")
    sparse = {"__sparse__": {"format": "csr", "shape": [2**31, 2], "array": False, "data": _b64(np.ones(1)),
                             "row": _b64(np.zeros(1, int)), "col": _b64(np.zeros(1, int))}}
    with pytest.raises(gs.RecordError, match="too large"):
        gs.decode_value(sparse)


MODULE_PATCHES = {
    # before: each passed with zeros (np.sum, np.linalg.norm, math.fsum were not guarded)
    "patch_sum_at_definition": "def f(x, _=np.__dict__.__setitem__('sum', lambda *a, **k: 2.0)):\n    return np.zeros(3)\n",
    "patch_linalg": "def f(x):\n    np.linalg.__dict__['norm'] = lambda *a, **k: 2.0\n    return np.zeros(3)\n",
    "patch_math": "def f(x):\n    import math\n    vars(math)['fsum'] = lambda *a: 2.0\n    return [0.0]\n",
    # new names in numpy (lazy submodule imports) are not tampering
    "lazy_imports": ("def f(x):\n    import numpy.testing, numpy.polynomial, scipy.special\n"
                     "    np.testing.assert_allclose(1, 1)\n    return x + 1\n"),
}
MODULE_CASES = {"patch_sum_at_definition": "assert np.allclose(np.sum(f(1.0)), target)",
                "patch_linalg": "y = f(1.0)\nassert np.allclose(np.linalg.norm(y), target)",
                "patch_math": "import math\ny = f(1.0)\nassert np.allclose(math.fsum(y), target)"}


def test_patching_any_numpy_or_math_name_is_tampering():
    probs, h5, gen, steps = one_step_set("module_patches", MODULE_PATCHES, cases=MODULE_CASES)
    out = run_one_step_set(probs, h5, gen, "--timeout", "20", "--jobs", "2")[1]
    for label, name in (("patch_sum_at_definition", "numpy.sum"), ("patch_linalg", "numpy.linalg.norm"),
                        ("patch_math", "math.fsum")):
        text = step_line(out, steps[label])
        assert text.startswith("FAIL") and f"Tampering: replaced {name}" in text, text
    assert step_line(out, steps["lazy_imports"]).startswith("PASS")
