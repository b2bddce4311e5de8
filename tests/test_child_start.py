"""The job children's start and order (ADI issue 21, speed): what the warm parent imports
before the submission (import_libraries: numpy's lazy submodules that scipy's array-api layer
swept in, numpy.f2py and numpy.testing among them, are left lazy) and which job it forks next
when two run at once (_next_job: a fine mesh's run starts as soon as no other one runs, and
one job slot is always the coarse jobs')."""
import ast
import functools
import json
import subprocess
import sys

import pytest

import test_fem_support as fem
from test_adi_support import failed, gold_variant_source, grade, grader, reviews, submission_from_solver


@functools.lru_cache(maxsize=None)
def _prologue_source(*names):
    """The named top-level functions (and constants) of the child prologue as built into
    grade_adi.py, as source to run alone (the prologue itself talks to a grader at import)."""
    tree = ast.parse(grader().DRIVER_PROLOGUE)
    keep = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in names) or
            (isinstance(n, ast.Assign) and any(getattr(t, "id", None) in names for t in n.targets))]
    assert len(keep) == len(names), names
    return ast.unparse(ast.Module(body=keep, type_ignores=[]))


def _prologue_functions(*names):
    ns = {"_sys": sys}
    exec(_prologue_source(*names), ns)
    return ns


def _schedule(plan, dur, width=2, hangs=(), pick=None):
    """fork_jobs's order with _next_job (or pick), each job taking dur(job) (those in hangs never
    end): {tag: (start, end)} of the jobs started, in the order they started."""
    nj = pick or _prologue_functions("_is_long", "_next_job")["_next_job"]
    pending, running, out, t, end = list(plan), [], {}, 0.0, object()
    while True:
        while len(running) < width:
            job = nj(pending, running, end)
            if job is end:
                break
            stop = float("inf") if job["tag"] in hangs else t + dur(job)
            running.append({"job": job, "end": stop})
            out[job["tag"]] = (t, stop)
        live = [s for s in running if s["end"] < float("inf")]
        if not live:
            return out
        s = min(live, key=lambda s: s["end"])
        t = s["end"]
        running.remove(s)


def _ticks(job):
    return job.get("ticks", 1)


PLAN = ([{"tag": "F1", "long": True, "ticks": 5}] + [{"tag": f"c{i}"} for i in range(8)]
        + [{"tag": "F2", "long": True, "ticks": 5}, {"tag": "F3", "long": True}])


def test_next_long_job_starts_when_the_slot_of_the_one_before_is_free():
    starts = {tag: start for tag, (start, _) in _schedule(PLAN, _ticks).items()}
    assert starts["F1"] == 0 and starts["c0"] == 0
    assert starts["F2"] == 5                    # the moment F1 ended, before c5..c7
    assert max(starts[f"c{i}"] for i in range(8)) < starts["F3"]   # a second long one beside it
    assert starts["F3"] == 8                    # only once no short job is left


def test_one_slot_is_always_the_short_jobs():
    """Every long job hangs: every short job still runs (the hang rule, -> 0.5)."""
    tags = list(_schedule(PLAN, _ticks, hangs={"F1", "F2", "F3"}))
    assert {f"c{i}" for i in range(8)} <= set(tags)
    assert "F1" in tags and "F3" not in tags            # F2 in the free slot after the shorts
    tags = list(_schedule(PLAN, _ticks, hangs={"F1"}))
    assert set(tags) == {t["tag"] for t in PLAN}


def test_a_plan_without_long_jobs_runs_in_its_order():
    plan = [{"tag": f"j{i}"} for i in range(7)]
    assert list(_schedule(plan, _ticks)) == [j["tag"] for j in plan]
    assert list(_schedule(plan, _ticks, width=3)) == [j["tag"] for j in plan]


def test_the_plan_marks_exactly_the_fine_meshes_runs_long():
    G = grader()
    fine_h = {G.h_value(p) for p in G.SPEC["fine"]}
    plan = G.plan_jobs()
    assert plan[0]["tag"] == "bench:4" and plan[0]["long"] is True
    for job in plan:
        assert (job.get("long") is True) == (job["h"] in fine_h), job
    assert G.driver_request(plan, 1)["jobs"][0]["long"] is True


_IMPORT = r"""
import json, sys
ns = {"_sys": sys}
exec(sys.argv[1], ns)
import numpy
before = (numpy.__dict__["__dir__"], numpy.__dict__["__all__"])
ns["import_libraries"](("numpy", "numpy.fft", "numpy.linalg", "numpy.ma", "numpy.polynomial",
                        "numpy.random", "scipy", "scipy.fft", "scipy.fftpack", "scipy.optimize",
                        "scipy.linalg", "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse",
                        "scipy.sparse.linalg"))
after = (numpy.__dict__["__dir__"], numpy.__dict__["__all__"])
compat = sys.modules["scipy._lib.array_api_compat.numpy"]
loaded = sorted(m for m in sys.modules if m.startswith("numpy.") and m.count(".") == 1)
names = sorted(n for n in dir(compat) if not n.startswith("_"))
lazy = {n: getattr(compat, n) is getattr(numpy, n) for n in ns["_LAZY_NUMPY"] if n != "matlib"}
print(json.dumps({"restored": before[0] is after[0] and before[1] is after[1],
                  "loaded": loaded, "names": names, "lazy": lazy,
                  "dir_f2py": "f2py" in dir(numpy), "all_f2py": "f2py" in numpy.__all__}))
"""

_PLAIN = r"""
import json, sys
import numpy, scipy.linalg
compat = sys.modules["scipy._lib.array_api_compat.numpy"]
print(json.dumps(sorted(n for n in dir(compat) if not n.startswith("_"))))
"""


def test_numpys_lazy_submodules_stay_lazy_and_scipys_copy_still_answers_them():
    ns = _prologue_functions("_LAZY_NUMPY", "import_libraries")
    code = _prologue_source("_LAZY_NUMPY", "import_libraries")
    out = json.loads(subprocess.run([sys.executable, "-c", _IMPORT, code], capture_output=True,
                                    text=True, check=True, timeout=120).stdout)
    assert out["restored"] and out["dir_f2py"] and out["all_f2py"]
    assert not {"numpy." + n for n in ns["_LAZY_NUMPY"]} & set(out["loaded"]), out["loaded"]
    assert {"numpy.ma", "numpy.polynomial", "numpy.random", "numpy.linalg", "numpy.fft"} <= set(out["loaded"])
    assert all(out["lazy"].values()), out["lazy"]        # compat.testing is numpy.testing, ...
    plain = json.loads(subprocess.run([sys.executable, "-c", _PLAIN], capture_output=True,
                                      text=True, check=True, timeout=120).stdout)
    assert set(plain) - set(out["names"]) <= set(ns["_LAZY_NUMPY"]), set(plain) - set(out["names"])
    assert set(out["names"]) <= set(plain)


@pytest.fixture(scope="module")
def lazy_user(tmp_path_factory):
    """The gold with a self-check through numpy.testing and numpy.rec (loaded by the job)."""
    src = gold_variant_source("    return X, Y, U\n",
                              "    np.testing.assert_array_equal(U, U)\n"
                              "    assert np.rec.fromarrays([U[0]]).shape == U[0].shape\n"
                              "    return X, Y, U\n")
    return submission_from_solver(tmp_path_factory.mktemp("lazy") / "sub", src)


def test_a_solver_that_uses_numpy_testing_grades_as_the_gold(lazy_user):
    rc, stdout, stderr, doc = grade(lazy_user, "--strict")
    assert doc["result"] == "PASS" and doc["score"] == 1.0, (failed(doc), reviews(doc))
    assert not reviews(doc)


def test_a_fem_solver_that_uses_numpy_testing_grades_as_the_gold():
    """FEM's twin (its gold's Gauss points come from numpy.polynomial, still loaded before)."""
    src = fem.GOLD_SOURCE.replace("    return {\"x_nodes\"", "    np.testing.assert_array_equal(coef, coef)\n"
                                  "    return {\"x_nodes\"", 1)
    assert src != fem.GOLD_SOURCE
    rc, out, err, doc, _ = fem.grade(fem.build("lazy-numpy-testing", src), "--strict")
    assert doc["result"] == "PASS" and doc["score"] == 1.0, fem.failed(doc)
    assert not [c for c in doc["checks"] if c["status"] == "REVIEW"]
