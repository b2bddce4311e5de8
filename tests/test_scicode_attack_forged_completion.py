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
