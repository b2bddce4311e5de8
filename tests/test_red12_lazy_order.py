"""Red team round 12 (ADI/FEM): the warm parent's lazy numpy submodules (import_libraries: numpy.f2py,
numpy.testing, rec, char, ctypeslib, matlib loaded, if at all, by the submission inside a job, after
the recorder bound its references and took its tamper snapshots) and the job order with long jobs
(_next_job, plan_jobs).  What was tried and what each got: reference/adi/problem_spec.md, "Red team
round 12".

The one wrong verdict found: FEM's provenance.runtime_modules listed charset_normalizer and its mypyc
helper module (numpy.f2py's own imports, loaded in the warm parent by scipy's import before the
change) for a solver with `from numpy import *` (or any use of numpy.f2py): REVIEW, 0.0 under
--strict, where the code before scored 1.0.  Fixed in graders/fem/child_driver.py (_new_modules)."""
import ast
import json
import random
import subprocess
import sys

import pytest

import test_fem_support as fem
from test_adi_support import (copy_gold, drive, failed, gold_variant_source, grade, grader, message, reviews,
                              status, submission_from_solver)
from test_child_start import _prologue_source, _schedule

# -- FEM: numpy.f2py's own imports are not the submission's ---------------------------------------
STAR = fem.GOLD_SOURCE.replace("import numpy as np\n", "import numpy as np\nfrom numpy import *  # noqa\n", 1)


def _runtime_modules(doc):
    return [c for c in doc["checks"] if c["id"] == "provenance.runtime_modules"]


def test_fem_star_import_of_numpy_grades_as_the_gold():
    """`from numpy import *` loads numpy.f2py in the job (numpy.__all__ lists it), which imports
    charset_normalizer (and its <hash>__mypyc helper).  Before the fix: provenance.runtime_modules
    REVIEW naming both, FAIL 0.0 under --strict (measured; the code before 3017f13: PASS 1.0)."""
    assert STAR != fem.GOLD_SOURCE
    rc, out, err, doc, _ = fem.grade(fem.build("red12-star", STAR), "--strict")
    assert [c["status"] for c in _runtime_modules(doc)] == ["PASS"], _runtime_modules(doc)
    assert doc["result"] == "PASS" and doc["score"] == 1.0, fem.failed(doc)
    assert not [c for c in doc["checks"] if c["status"] == "REVIEW"]


def test_fem_numpy_f2py_loaded_does_not_hide_another_package():
    """The attack twin: numpy.f2py loaded (its exemption in force) and another package outside
    stdlib + numpy + scipy loaded at run time (pluggy, by a computed import): still reported,
    by its own name, and numpy.f2py's imports are not."""
    src = STAR.replace("    return {\"x_nodes\"", "    __import__('plug' + 'gy')\n    return {\"x_nodes\"", 1)
    assert src != STAR
    rc, out, err, doc, _ = fem.grade(fem.build("red12-star-other", src), "--strict")
    rm = _runtime_modules(doc)
    assert [c["status"] for c in rm] == ["REVIEW"] and "pluggy" in rm[0]["message"], rm
    assert "charset_normalizer" not in rm[0]["message"] and "__mypyc" not in rm[0]["message"], rm
    assert doc["score"] == 0.0


def test_fem_only_numpy_f2py_brings_a_package_outside_stdlib_numpy_scipy():
    """What the exemption rests on, measured in a fresh interpreter after the warm parent's imports:
    of the lazy submodules, only numpy.f2py loads a top-level module outside stdlib + numpy + scipy,
    and what it loads is covered by the exemption (charset_normalizer, mypyc helpers)."""
    code = _prologue_source("_LAZY_NUMPY", "import_libraries")
    probe = r"""
import json, sys
ns = {"_sys": sys}
exec(sys.argv[1], ns)
ns["import_libraries"](("numpy", "numpy.linalg", "numpy.ma", "numpy.polynomial", "scipy", "scipy.linalg",
                        "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse", "scipy.sparse.linalg"), True)
import numpy
std = set(sys.stdlib_module_names) | {"numpy", "scipy"}
out = {}
for n in ns["_LAZY_NUMPY"]:
    before = set(sys.modules)
    getattr(numpy, n)
    out[n] = sorted({m.split(".")[0] for m in set(sys.modules) - before} - std)
print(json.dumps(out))
"""
    out = json.loads(subprocess.run([sys.executable, "-c", probe, code], capture_output=True, text=True,
                                    check=True, timeout=120).stdout)
    tree = ast.parse(fem.grader.FEM_DRIVER)
    ns = {}
    src = "\n".join(ast.unparse(n) for n in tree.body if
                    (isinstance(n, ast.FunctionDef) and n.name == "_mypyc_helper") or
                    (isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "_NUMPY_LAZY_LOADS"
                                                       for t in n.targets)))
    exec(src, ns)
    assert "_NUMPY_LAZY_LOADS" in ns and "_mypyc_helper" in ns
    for n, tops in out.items():
        if n != "f2py":
            assert tops == [], (n, tops)
    assert all(m in ns["_NUMPY_LAZY_LOADS"]["numpy.f2py"] or ns["_mypyc_helper"](m) for m in out["f2py"]), out


# -- ADI: honest solvers that use the lazy submodules -----------------------------------------------
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")     # numpy.matlib's, in the study
def test_adi_star_import_and_every_lazy_submodule_grade_as_the_gold(tmp_path):
    """Honest twin (passes before and after): `from numpy import *` at the top and numpy.f2py,
    ctypeslib, char, matlib, rec and dir(np) used inside solve: PASS 1.0, no REVIEW (ADI has no
    runtime-module check; the static scan flags none of these spellings)."""
    src = gold_variant_source("from scipy.linalg import solve_banded\n",
                              "from scipy.linalg import solve_banded\nfrom numpy import *  # noqa\n")
    src = src.replace("    return X, Y, U\n",
                      "    assert np.f2py.get_include() and np.ctypeslib.as_array(U).shape == U.shape\n"
                      "    assert np.char.upper(['a'])[0] == 'A' and np.matlib.zeros(2).shape == (1, 2)\n"
                      "    assert np.rec.fromarrays([U[0]]).shape == U[0].shape and 'testing' in dir(np)\n"
                      "    return X, Y, U\n", 1)
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub, "--strict")
    assert doc["result"] == "PASS" and doc["score"] == 1.0, (failed(doc), reviews(doc))
    assert not reviews(doc)


# -- planting numpy's lazy submodules: nothing the recorder or the library runs reaches them -------
PLANT = r'''
import sys as _s, types as _t


class _Planted(_t.ModuleType):
    def __getattr__(self, name):
        raise RuntimeError("PLANTED numpy submodule reached: " + self.__name__ + "." + name)


class _Finder:
    """Any numpy/scipy module not loaded yet, imported from now on, fails loudly."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "scipy") and name not in _s.modules:
            raise RuntimeError("PLANTED finder reached: " + name)
        return None


for _n in ("f2py", "testing", "rec", "char", "ctypeslib", "matlib"):
    _s.modules["numpy." + _n] = _Planted("numpy." + _n)
_s.meta_path.insert(0, _Finder())
'''


def _planted_jobs(tmp_path, extra=""):
    G = grader()
    anchor = "    pb = BenchmarkProblem() if problem is None else problem\n"
    src = gold_variant_source("from scipy.linalg import solve_banded\n",
                              "from scipy.linalg import solve_banded\n" + PLANT)
    src = src.replace(anchor, extra + anchor, 1)
    jobs = [{"tag": "bench:0", "h": 0.1, "problem": "benchmark"},
            {"tag": "audit:0.1", "h": 0.1, "problem": "hidden", "poison": "nan"},
            {"tag": "perturb:0.1", "h": 0.1, "problem": "hidden", "poison": "scale"},
            {"tag": "bench-1:0", "h": 0.1, "problem": "benchmark", "T": 9 * 0.1}]
    assert all(j["tag"].split(":")[0] in {t.split(":")[0] for t in G.job_tags(G.plan_jobs())} for j in jobs)
    ready, J, viol, _ = drive(tmp_path / "drv", src, jobs=jobs)
    return J, [v for v in viol if v.get("kind") == "tamper"]


def test_planted_lazy_submodules_and_an_import_finder_are_never_reached(tmp_path):
    """The submission replaces numpy.testing, f2py, rec, char, ctypeslib and matlib in sys.modules
    (they are not loaded: nothing is replaced that the tamper snapshot holds) and puts a finder
    first on sys.meta_path that fails any numpy/scipy import from then on: every run (the clean
    one, the poisoned audits, a step witness's run) ends ok, no tamper: neither the recorder nor
    scipy's solving path (nor the compat module's new __getattr__) imports or reads one of them."""
    J, tamper = _planted_jobs(tmp_path)
    assert all(J[t]["status"] == "ok" for t in ("bench:0", "perturb:0.1", "bench-1:0")), \
        {t: J[t].get("error") for t in J}
    assert "PLANTED" not in J["audit:0.1"].get("error", ""), J["audit:0.1"]    # (the gold's own
    assert not tamper, tamper                   # answer to NaN solves: "must not contain infs or NaNs")


def test_planted_lazy_submodule_is_live_where_the_solver_reads_it(tmp_path):
    """Control (the test above can fail): the solver itself importing from numpy.testing meets the
    plant."""
    J, _ = _planted_jobs(tmp_path, "    from numpy.testing import assert_equal\n")
    assert J["bench:0"]["status"] == "error" and "PLANTED numpy submodule" in J["bench:0"]["error"], J["bench:0"]


def test_scipys_solving_paths_never_ask_the_compat_getattr_and_numpy_ma_stays_loaded():
    """36 numpy/scipy calls an ADI or FEM solver makes (dense, banded, triangular, factor, sparse
    direct and iterative, transforms, root, expm, ...) after import_libraries: the compat module's
    __getattr__ is never asked and no lazy numpy submodule loads.  With numpy.ma hidden as well,
    the same calls load it (scipy.linalg's _asarray_validated reads np.ma at every call): it must
    stay preloaded, as must numpy.polynomial (the FEM gold's Gauss points)."""
    code = _prologue_source("_LAZY_NUMPY", "import_libraries")
    probe = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
ns = {"_sys": sys}
exec(sys.argv[1], ns)
ns["import_libraries"](("numpy", "numpy.fft", "numpy.linalg", "numpy.random", "scipy", "scipy.fft",
                        "scipy.fftpack", "scipy.optimize", "scipy.linalg", "scipy.linalg.lapack", "scipy.linalg.blas",
                        "scipy.sparse", "scipy.sparse.linalg"), False, ns["_LAZY_NUMPY"] + tuple(sys.argv[2:]))
import numpy as np, scipy.linalg as sla, scipy.sparse as sp, scipy.sparse.linalg as spl, scipy.fft as sfft
import scipy.optimize as so
compat = sys.modules["scipy._lib.array_api_compat.numpy"]
asked, g0 = [], compat.__dict__["__getattr__"]
compat.__dict__["__getattr__"] = lambda name: (asked.append(name), g0(name))[1]
before = set(sys.modules)
n = 40
A = np.diag(np.full(n, 4.0)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
b = np.ones(n)
ab = np.zeros((3, n)); ab[0, 1:] = 1; ab[1] = 4; ab[2, :-1] = 1
S = sp.csr_matrix(A)
calls = [lambda: sla.solve(A, b), lambda: sla.solve_banded((1, 1), ab, b), lambda: sla.solveh_banded(ab[:2], b),
         lambda: sla.lu_solve(sla.lu_factor(A), b), lambda: sla.cho_solve(sla.cho_factor(A), b), lambda: sla.inv(A),
         lambda: sla.solve_triangular(A, b), lambda: spl.spsolve(S, b), lambda: spl.splu(S.tocsc()).solve(b),
         lambda: spl.cg(S, b), lambda: spl.gmres(S, b), lambda: sla.expm(A / 10), lambda: sfft.dst(b, type=1),
         lambda: sfft.idst(b, type=1), lambda: sfft.fft2(A), lambda: sfft.dctn(A),
         lambda: so.root(lambda x: A @ x - b, b), lambda: np.linalg.solve(A, b), lambda: sla.solve_toeplitz(A[:, 0], b),
         lambda: sla.eigh(A), lambda: sla.lstsq(A, b), lambda: sla.pinv(A), lambda: sla.lu(A), lambda: sla.qr(A),
         lambda: sla.svd(A), lambda: spl.eigsh(S, k=2), lambda: spl.expm_multiply(S, b), lambda: sp.kron(S, S).tocsr(),
         lambda: sp.diags([1, 2, 1], [-1, 0, 1], shape=(n, n)), lambda: np.unique(b),
         lambda: sla.solve_sylvester(A, A, A), lambda: sla.cholesky_banded(ab[:2]), lambda: spl.lsqr(S, b),
         lambda: spl.minres(S, b), lambda: spl.bicgstab(S, b), lambda: spl.factorized(S.tocsc())(b)]
for c in calls:
    c()
print(json.dumps({"calls": len(calls), "asked": asked,
                  "loaded": sorted(m for m in set(sys.modules) - before if m.startswith("numpy."))}))
"""
    run = [sys.executable, "-c", probe, code]
    out = json.loads(subprocess.run(run, capture_output=True, text=True, check=True, timeout=120).stdout)
    assert out["calls"] == 36 and out["asked"] == [] and out["loaded"] == [], out
    out = json.loads(subprocess.run(run + ["ma"], capture_output=True, text=True, check=True, timeout=120).stdout)
    assert out["asked"] == [] and "numpy.ma" in out["loaded"], out


# -- the job order: long jobs and the hang guarantee ------------------------------------------------
def test_short_jobs_never_wait_longer_than_alone_on_one_slot():
    """The bound the hang rule rests on, over the real plan, random job times (fine runs from 0.1x
    to 10x the coarse ones) and every long job or all of them hanging: each short job ends no later
    than if the short jobs ran alone, in their order, on one slot (so a budget that covers the short
    jobs on one slot grades every coarse, hidden and audit run, whatever the fine runs do).  Before
    the change the same bound held; a hang of the finest mesh's run to (N - 1) h only now holds one
    slot from the end of the T = 1 run (measured: the short jobs end at most at that bound, not at
    half the remaining short work after it, as when that run waited for them)."""
    G = grader()
    plan = G.plan_jobs()
    longs = [j["tag"] for j in plan if j.get("long")]
    rng = random.Random(12)
    for trial in range(60):
        scale = rng.choice((0.1, 0.5, 1, 3, 10))
        times = {j["tag"]: (scale if j.get("long") else 1) * rng.uniform(0.2, 2.0) for j in plan}
        dur = lambda j: times[j["tag"]]
        shorts = [j["tag"] for j in plan if not j.get("long")]
        alone = {}
        acc = 0.0
        for tag in shorts:
            acc += times[tag]
            alone[tag] = acc
        for hangs in [()] + [(t,) for t in longs] + [tuple(longs)]:
            sched = _schedule(plan, dur, hangs=hangs)
            assert set(shorts) <= set(sched), (hangs, sorted(set(shorts) - set(sched)))
            for tag in shorts:
                assert sched[tag][1] <= alone[tag] + 1e-9, (trial, hangs, tag, sched[tag], alone[tag])
            if not hangs:
                assert set(sched) == {j["tag"] for j in plan}


def test_hang_on_the_finest_meshs_run_to_N_minus_1_h_only_is_partial(tmp_path):
    """The finest mesh's run to (N - 1) h (the step witness's, a long job that now starts the moment
    the T = 1 run ends) hangs, everything else answers: every coarse, hidden and audit run graded,
    only the step witness unverified: 0.5 (measured the same with the code before 3017f13)."""
    sub = copy_gold(tmp_path / "sub")
    src = (sub / "adi_solver.py").read_text()
    hook = "    pb = BenchmarkProblem() if problem is None else problem"
    assert hook in src
    src = src.replace(hook, "    if h < 0.007 and 0.5 < T < 1.0:\n        import time\n        while True:\n"
                            "            time.sleep(1)\n" + hook, 1)
    (sub / "adi_solver.py").write_text(src)
    rc, stdout, stderr, doc = grade(sub, "--budget", "10")
    assert doc["result"] == "PARTIAL" and doc["score"] == 0.5 and rc == 1, failed(doc)
    assert failed(doc) == {"tier3.benchmark_step"}, failed(doc)
    st = status(doc)
    assert st["provenance.regen[h=0.025]"] == st["hidden.drop"] == st["audit.causal"] == "PASS"
    assert st["tier3.regen[h=0.00625]"] == "PASS", message(doc, "tier3.regen[h=0.00625]")


def _old_next(pending, running, end):
    """The order before 3017f13: the plan's own, whatever runs."""
    return pending.pop(0) if pending else end


@pytest.mark.xfail(strict=True, reason=(
    "measured, not fixed (the trade of 3017f13's order): a solver whose finest mesh's run to (N - 1) h "
    "alone hangs now holds one slot from the end of the T = 1 run, so the short jobs run on one slot "
    "throughout (they end at ~ S instead of ~ (S + W1) / 2: S the short jobs' time on one slot, W1 the "
    "finest T = 1 run's; in this test's model 6.38 s against 3.90 s).  Graded (the gold with 0.35 s of sleep at import, that run hanging): --budget 8: before "
    "PARTIAL 0.5 (every coarse, hidden and audit run graded), after FAIL 0.0 (hidden, witness, audit runs "
    "cut); --budget 6: 0.0 both; the same solver hanging on every fine run: 0.0 both at --budget 8.  The "
    "bound the hang rule always needed (a budget covering the short jobs on one slot: "
    "test_short_jobs_never_wait_longer_than_alone_on_one_slot) still holds; keeping the old margin means "
    "starting that run after the short jobs again (the ~0.1 s the change gained on the gold)"))
def test_a_hang_of_only_the_finest_meshs_run_to_N_minus_1_h_leaves_the_short_jobs_as_early_as_before():
    G = grader()
    plan = G.plan_jobs()
    dur = lambda j: 0.35 + 0.25e-6 * G._work(j)       # import-heavy: 0.35 s a job; the finest T = 1 run ~1.4 s
    shorts = [j["tag"] for j in plan if not j.get("long")]
    new = _schedule(plan, dur, hangs=("bench-1:4",))
    old = _schedule(plan, dur, hangs=("bench-1:4",), pick=_old_next)
    assert set(shorts) <= set(new) and set(shorts) <= set(old)
    assert max(new[t][1] for t in shorts) <= max(old[t][1] for t in shorts) + 1e-9, \
        (max(new[t][1] for t in shorts), max(old[t][1] for t in shorts))


# -- the recorder's wrapping: late modules hold no unwrapped entry point -----------------------------
_UNWRAPPED_PROBE = r'''
    import sys as _s, numpy as _n
    for _x in ("f2py", "testing", "rec", "char", "ctypeslib", "matlib"):
        getattr(_n, _x)
    _W = getattr(solve_banded, "__glob" + "als__")["_WRAPPED"]
    PLANT_ORIGINAL
    _bad = []
    for _nm, _m in list(_s.modules.items()):
        _d = getattr(_m, "__dict__", None)
        if type(_d) is not dict or _nm == "adi_solver":
            continue
        for _k, _v in list(_d.items()):
            _w = _W.get(id(_v))
            if _w is not None and _w[0] is _v:
                _bad.append(_nm + "." + _k)
    raise RuntimeError(("UNWRAPPED " + ", ".join(sorted(_bad)[:20])) if _bad else "CLEAN %d" % len(_W))
'''


def test_numpys_late_submodules_hold_no_unwrapped_entry_point(tmp_path):
    """The driver replaced every reference to a recorded entry point in the modules loaded at its
    start (_PATCHED); the six submodules now load later, in the job.  Loaded there (all six), no
    module holds an original the recorder wrapped (the scan reads the driver's _WRAPPED through a
    wrapper's globals, as a test only).  Control: an original planted into a new module is found."""
    anchor = "    pb = BenchmarkProblem() if problem is None else problem\n"
    clean = gold_variant_source(anchor, _UNWRAPPED_PROBE.replace("PLANT_ORIGINAL", "pass") + anchor)
    ready, J, viol, _ = drive(tmp_path / "clean", clean)
    assert J["bench:0"]["error"].startswith("RuntimeError: CLEAN "), J["bench:0"]["error"]
    assert int(J["bench:0"]["error"].rsplit(" ", 1)[1]) > 100          # (the recorder's entry points)
    planted = gold_variant_source(anchor, _UNWRAPPED_PROBE.replace(
        "PLANT_ORIGINAL", "_s.modules['planted_mod'] = type(_s)('planted_mod'); "
        "_s.modules['planted_mod'].f = next(iter(_W.values()))[0]") + anchor)
    ready, J, viol, _ = drive(tmp_path / "planted", planted)
    assert "UNWRAPPED planted_mod.f" in J["bench:0"]["error"], J["bench:0"]["error"]
