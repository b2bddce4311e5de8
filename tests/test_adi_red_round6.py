"""Red team, round 6: the benchmark step witness anchored at the start, and the ADI driver's
integrity check by dict version tags (second engineer, source in hand).

The step witness (graders/adi/causal.py benchmark_step_check) proves, on every benchmark mesh,
that the graded run's LAST step (U_{N-1} -> U_N) is a step of the scheme M with the data term of
the step from T = h to 2h.  Steps 2 .. N-2 are not looked at: a solver that chooses its method by
the step's index (known from h: N = 1/h), ADI at steps 0, 1 and N - 1 and Crank-Nicolson on the
full 2-D operator in between, gives the T = 1 run and the run to (N - 1)h the same prefix, so the
last step and the anchor check out while the graded field is Crank-Nicolson's.  No step run is
recognised or fitted (the residual the statement documents); the switch is by step index alone.
"""

import numpy as np
import pytest

from test_adi_benchmark_step import step_jobs
from test_adi_exploit_recorder import JOBS, failed, judge
from test_adi_support import GOLD, grader, survey

STEP_JOBS = JOBS + grader().step_jobs((0,))

# the gold's step loop, with the benchmark's steps 2 .. N-2 taken by Crank-Nicolson (2-D operator,
# mixed term, PCG preconditioned with the gold's own ADI line solves: the recorder sees honest
# solve_banded calls of I - theta k kappa D2 only); audits dodged by the round-4 probe
LOOP = "    for step in range(nsteps):\n        t0, t1 = step * k, (step + 1) * k\n"
CN_BRANCH = '''    for step in range(nsteps):
        t0, t1 = step * k, (step + 1) * k
        if _HYBRID(pb, h, step, m, nsteps):
            U = _cn_step(U, t0, t1, k, h, m, a, b, c, pb, X, Y, bands)
            continue
'''
HELPERS = '''

def _audited(h):
    n = int(round(1.0 / h)) - 1
    ab = np.zeros((3, n))
    ab[0, 1:] = -1.0
    ab[2, :-1] = -1.0
    ab[1] = 4.0
    rhs = np.arange(1.0, n + 1.0)
    try:
        x = solve_banded((1, 1), ab, rhs)
    except ValueError:
        return True
    r = 4.0 * x - rhs
    r[1:] -= x[:-1]
    r[:-1] -= x[1:]
    return not np.all(np.isfinite(x)) or np.max(np.abs(r)) > 1e-12 * np.max(np.abs(rhs))


_AUD = {}


def _HYBRID(pb, h, step, m, nsteps):
    bench = (float(pb.a), float(pb.b), float(pb.c)) == (1.0, 0.8, 0.5)
    if not bench:
        return False
    if h not in _AUD:
        _AUD[h] = _audited(h)
    return not _AUD[h] and SWITCH(step, m, nsteps)


def _cn_step(U, t0, t1, k, h, m, a, b, c, pb, X, Y, bands):
    """One Crank-Nicolson step on the full 2-D operator (interior; the benchmark's boundary data vanish)."""
    n = m - 1

    def A(W):
        P = np.zeros((m + 1, m + 1))
        P[1:-1, 1:-1] = W
        return (a * (P[2:, 1:-1] - 2 * P[1:-1, 1:-1] + P[:-2, 1:-1]) / h ** 2
                + c * (P[1:-1, 2:] - 2 * P[1:-1, 1:-1] + P[1:-1, :-2]) / h ** 2
                + b * (P[2:, 2:] - P[2:, :-2] - P[:-2, 2:] + P[:-2, :-2]) / (4 * h ** 2))
    V0 = U[1:-1, 1:-1]
    Xi, Yi = X[1:-1, 1:-1], Y[1:-1, 1:-1]
    rhs = V0 + 0.5 * k * A(V0) + 0.5 * k * (pb.f(Xi, Yi, t0) + pb.f(Xi, Yi, t1))

    def op(W):
        return W - 0.5 * k * A(W)

    def prec(R):
        D = solve_banded((1, 1), bands["x"], R)
        return solve_banded((1, 1), bands["y"], D.T).T
    x = V0.copy()
    r = rhs - op(x)
    z = prec(r)
    p = z.copy()
    rz = float(np.sum(r * z))
    nb = float(np.linalg.norm(rhs))
    for _ in range(500):
        if np.linalg.norm(r) <= 1e-15 * nb:
            break
        Ap = op(p)
        al = rz / float(np.sum(p * Ap))
        x = x + al * p
        r = r - al * Ap
        z = prec(r)
        rz2 = float(np.sum(r * z))
        p = z + (rz2 / rz) * p
        rz = rz2
    W = np.zeros((m + 1, m + 1))
    W[1:-1, 1:-1] = x
    return W
'''


def hybrid_source(switch: str) -> str:
    """The gold with the benchmark's step `step` (0-based) of a run of `nsteps` steps on the mesh with
    m = 1/h taken by Crank-Nicolson where `switch` (an expression in step, m, nsteps) holds."""
    src = (GOLD / "adi_solver.py").read_text()
    assert src.count(LOOP) == 1
    src = src.replace(LOOP, CN_BRANCH)
    return src + HELPERS + f"\n\ndef SWITCH(step, m, nsteps):\n    return {switch}\n"


def load(src: str, name: str):
    import types
    mod = types.ModuleType(name)
    exec(compile(src, name, "exec"), mod.__dict__)
    return mod


PINNED = {"scheme": "MCS", "theta": 1 / 3}

# the step-index switches (CN where the expression holds); the first is the attack, the others
# its controls (already caught by the last-step check before this round)
BY_INDEX = "2 <= step <= m - 2"                     # ADI at steps 0, 1 (the anchor) and N - 1 (the last)
CONTROLS = {"CN past the anchor runs": "nsteps > 2",
            "ADI at each run's own last step": "2 <= step < nsteps - 1"}


def test_adi_only_at_the_witnessed_steps_is_not_a_pass():
    """Fixed (round 6): measured before, witness.benchmark_step PASS, worst residual 5.6e-16 of max |U|
    on h = 0.1, 0.05, 0.025 with the graded field Crank-Nicolson's (1.1e-4 from the gold's on h = 0.1).
    Now U_(N-1) is replayed from U_2 by N - 3 steps of the witness's scheme with the anchor's data
    term: it misses the run to (N - 1)h by 2.9e-2, 7.4e-3, 1.9e-3 (4.7e-4, 1.2e-4 on the fine
    meshes) of max |U|, limit 1e-8: FAIL."""
    G = grader()
    mod = load(hybrid_source(BY_INDEX), "hybrid_by_index")
    J = step_jobs(mod.solve, (0, 1, 2))
    gold = load((GOLD / "adi_solver.py").read_text(), "gold_plain")
    assert np.max(np.abs(J["bench:0"]["U"] - gold.solve(0.1)[2])) > 1e-5       # the graded field is not ADI's
    c = G.benchmark_step_check(J, PINNED, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]
    assert "the steps before it are not" in c[0].message and "h = 0.1" in c[0].message, c[0].message
    assert c[0].measured > 1e4 * c[0].limit, c[0].message
    c = G.benchmark_step_check(J, {}, 1 / 3)                   # only the recorder's theta: REVIEW
    assert [x.status for x in c] == [G.Status.REVIEW], [x.message for x in c]


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_other_step_switches_fail(name):
    G = grader()
    mod = load(hybrid_source(CONTROLS[name]), "hybrid_control")
    c = G.benchmark_step_check(step_jobs(mod.solve, (0,)), PINNED, 1 / 3)
    assert [x.status for x in c] == [G.Status.FAIL], [x.message for x in c]


def test_honest_twin_the_same_machinery_never_switching_passes():
    """Honest twin: the same source (probe solve, PCG helpers present) whose switch never fires is
    the gold, step for step: PASS on every coarse mesh, the replay at round-off."""
    G = grader()
    mod = load(hybrid_source("False"), "hybrid_never")
    c = G.benchmark_step_check(step_jobs(mod.solve, (0, 1, 2)), PINNED, 1 / 3)
    assert [x.status for x in c] == [G.Status.PASS], [x.message for x in c]
    assert "every step between is one too" in c[0].message, c[0].message


def test_the_banded_replay_is_the_dense_one():
    """The replay's map (stencils and tridiagonal solves) equals adi_map's dense one to round-off."""
    G = grader()
    rng = np.random.default_rng(5)
    for m in (10, 23):
        h = 1.0 / m
        ops = G.witness_operators(m, h, 1.0, 0.8, 0.5)
        V = rng.standard_normal((m - 1, m - 1))
        for s in ("Douglas", "CS", "MCS", "HV"):
            for t in (1 / 3, 0.5, 3.0):
                a, b = G.adi_map(s, t, ops, h)(V), G.adi_map(s, t, ops, h, banded=True)(V)
                assert np.max(np.abs(a - b)) <= 1e-13 * np.max(np.abs(a)), (m, s, t)


def test_through_the_driver(tmp_path):
    """End to end on h = 0.1 (the driver, the recorder, the audits, both witnesses): the
    hidden-family witness PASSes (ADI there), the audits are dodged by the probe, and the benchmark
    step witness is the only FAIL.  Before: no FAIL and no REVIEW among these checks."""
    checks, J, _ = judge(tmp_path, hybrid_source(BY_INDEX), STEP_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert checks["witness.adi_step"].status.value == "PASS", checks["witness.adi_step"].message
    assert failed(checks) == {"witness.benchmark_step"}, {k: c.message[:200] for k, c in checks.items()}


# The end-to-end run switches on the three coarse meshes only (m <= 40): the same switch on every
# mesh costs three Crank-Nicolson runs on h = 0.00625 (the study and the grader's T = 1 and step
# runs: PCG, ~98 iterations a step, 23 s each on one core), measured 71 CPU-s and up to 410 s of
# the suite's wall time; the grader judges the coarsest mesh first, so the verdict and its message
# are the same (the switch as written, every mesh, is judged through the driver on h = 0.1 above).
BY_INDEX_COARSE = f"({BY_INDEX}) and m <= 40"


def test_graded_end_to_end(tmp_path):
    """The whole grader on the step-index solver's own consistent submission (its five-mesh study):
    measured before (grade_adi.py at 6effe09), RESULT: PASS, SCORE: 1.0, review_required 0; now
    witness.benchmark_step FAIL on h = 0.1 (2.9e-2 of max |U|), SCORE 0.0."""
    from test_adi_support import grade, submission_from_solver
    sub = submission_from_solver(tmp_path / "sub", hybrid_source(BY_INDEX_COARSE))
    rc, stdout, stderr, doc = grade(sub)
    assert "SCORE: 0.0" in stdout and "RESULT: FAIL" in stdout, stdout[-2000:]
    bad = [c for c in doc["checks"] if c["status"] == "FAIL"]
    assert [c["id"] for c in bad] == ["witness.benchmark_step"], [(c["id"], c["message"][:200]) for c in bad]
    assert "the steps before it are not" in bad[0]["message"]


def test_honest_twin_through_the_driver(tmp_path):
    checks, J, _ = judge(tmp_path, hybrid_source("False"), STEP_JOBS)
    bad = {k: c.message[:200] for k, c in checks.items() if c.status.value in ("FAIL", "REVIEW")}
    assert not bad, bad


def _separable_below_coarsest(h, T=1.0, problem=None):
    from test_adi_benchmark_step import _separable
    mcs = survey().load_variant("MCS", 1 / 3, True).solve
    return (mcs if (problem is not None or h > 0.075) else _separable)(h, T, problem)


def test_a_separable_field_on_the_finer_meshes_only_is_not_a_pass():
    """Fixed (round 6): the vacuity guard looked at h = 0.1 only; the gold there and the separable
    manufactured field (tests/test_adi_benchmark_step.py _separable) on h = 0.05 ... 0.00625 passed
    (measured before: PASS, worst residual 7.7e-16; the replay of the steps between is satisfied by
    any separable trajectory too).  Now every mesh is guarded: REVIEW on h = 0.05 (4.2e-16 < 1e-8)."""
    G = grader()
    c = G.benchmark_step_check(step_jobs(_separable_below_coarsest, range(5)), PINNED, 1 / 3)
    assert [x.status for x in c] == [G.Status.REVIEW], [x.message for x in c]
    assert "h = 0.05" in c[0].message and "separable in time" in c[0].message, c[0].message


# -- fine-mesh step runs that fail on purpose ------------------------------------------------------
# A solver can take Crank-Nicolson on the fine meshes only and raise (or return NaN) in their step
# runs: before this round a fine step run that failed was Tier 3 unverified (tier3.benchmark_step,
# 0.5) whatever the failure, like a fine run not reached in time.  A run that raised or returned a
# non-finite field beside an ok T = 1 run on the same mesh chose to (its memory and time are at most
# the T = 1 run's): FAIL, as on the coarse meshes; a run not reached stays Tier 3 unverified.
def _fine_jobs(kind):
    G = grader()
    mcs = survey().load_variant("MCS", 1 / 3, True).solve
    jobs = step_jobs(mcs, (0,))
    jobs["bench:3"] = jobs["bench:0"]                   # a stand-in T = 1 run on h = 0.0125
    if kind != "none":                                  # its step runs (stand-ins) but one
        jobs.update({f"{t}:3": jobs[f"{t}:0"] for t in ("bench-1", "bench-t1", "bench-t2")})
    if kind == "raised":
        jobs["bench-1:3"] = {"status": "error", "error": "ValueError: T must be 1", "U": None}
    elif kind == "nan":
        jobs["bench-t2:3"] = dict(jobs["bench-t2:0"], U=np.full_like(jobs["bench-t2:0"]["U"], np.nan))
    return G, jobs


@pytest.mark.parametrize("kind", ["raised", "nan"])
def test_a_fine_step_run_that_fails_on_purpose_is_a_fail(kind):
    """Fixed (round 6): measured before, witness.benchmark_step PASS + tier3.benchmark_step FAIL
    (0.5 overall where the coarse meshes are honest)."""
    G, jobs = _fine_jobs(kind)
    c = G.benchmark_step_check(jobs, PINNED, 1 / 3)
    assert [(x.id, x.status) for x in c] == [("witness.benchmark_step", G.Status.FAIL)], [x.message for x in c]
    assert "h = 0.0125" in c[0].message or "solve(0.0125" in c[0].message, c[0].message


def test_honest_twin_a_fine_step_run_not_reached_is_tier3_unverified():
    G, jobs = _fine_jobs("none")
    c = G.benchmark_step_check(jobs, PINNED, 1 / 3)
    assert [(x.id, x.status) for x in c] == [("witness.benchmark_step", G.Status.PASS),
                                             ("tier3.benchmark_step", G.Status.FAIL)], [x.message for x in c]
    assert "not reached" in c[1].message


# -- the integrity check by dict version tags ---------------------------------------------------------
# After each job the driver compares only the dicts whose PEP 509 version tag moved since driver start
# (graders/adi/child_driver.py _moved_items).  Every change made through Python bumps the tag
# (tests/test_adi_exploit_tamper.py); what the full comparison caught and the tag skip misses is a change
# whose tag is put back by hand: ctypes (already loaded by the driver, so sys.modules holds it and no
# import is spelled) writes the 8 bytes after ma_used.  Measured on CPython 3.11.7, h = 0.1, the gold
# with the change inside solve(): numpy.linalg.cond replaced by numpy.linalg.norm, the tag restored:
# reported as tamper by the grader before the tag skip (234ae7a, numpy.linalg.cond), not after; the
# static scan flags nothing.  The same capability defeated the full comparison already: the driver's
# state is reachable through a wrapper's globals (a computed "__glob" + "als__", as in
# test_adi_red_recorder.py), and refreshing its reference (_SNAP before, _TAGS0 now) hides the same
# change from both (measured: not reported before or after).  Neither buys a pass by itself: the
# witnesses are behavioural and run the replays outside the child.
SWAP_BODY = ("    import sys as _s\n"
             "    _m = _s.modules['numpy.linalg']\n"
             "    setattr(_m, 'cond', _m.norm)\n")
TAG_PUT_BACK = ("    import sys as _s\n"
                "    _m = _s.modules['numpy.linalg']\n"
                "    _c = _s.modules['ctypes'].c_uint64.from_address(id(vars(_m)) + 24)\n"
                "    _v = _c.value\n"
                "    setattr(_m, 'cond', _m.norm)\n"
                "    _c.value = _v\n")
REFERENCE_REFRESHED = ("    import sys as _s\n"
                       "    _m = _s.modules['numpy.linalg']\n"
                       "    setattr(_m, 'cond', _m.norm)\n"
                       "    _G = getattr(solve_banded, '__glob' + 'als__')\n"
                       "    if _G.get('_TAGS0') is not None:\n"
                       "        _G['_TAGS0'] = [None if _a is None else _G['_TAG'](_a) for _a in _G['_ADDRS']]\n"
                       "    else:\n"
                       "        _G['_SNAP'] = _G['_snapshot']()\n")
HONEST_TAG_READ = ("    import sys as _s\n"
                   "    _m = _s.modules['numpy.linalg']\n"
                   "    _v = _s.modules['ctypes'].c_uint64.from_address(id(vars(_m)) + 24).value\n"
                   "    setattr(_m, 'cond', _m.cond)\n")


def _tamper_run(tmp_path, body):
    from test_adi_support import drive, gold_variant_source
    G = grader()
    anchor = '    pb = BenchmarkProblem() if problem is None else problem\n'
    src = gold_variant_source(anchor, body + anchor)
    static = [c for c in G.import_audit(src, "static") if c.status is not G.Status.PASS]
    ready, J, viol, _ = drive(tmp_path / "drv", src)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    return [w for v in viol if v.get("kind") == "tamper" for w in v["what"]], static


def test_a_plain_swap_is_reported(tmp_path):
    """Control: the same swap, tag not touched: reported (numpy.linalg.cond), static scan silent."""
    what, static = _tamper_run(tmp_path, SWAP_BODY)
    assert "numpy.linalg.cond" in what and not static, (what, static)


@pytest.mark.xfail(strict=True, reason="regression of the tag skip (measured, CPython 3.11.7): a swap whose "
                   "version tag is written back through ctypes (sys.modules['ctypes'], loaded by the driver; no "
                   "import spelled, static scan silent) is not reported; the full comparison before the tag skip "
                   "(234ae7a) reported numpy.linalg.cond.  Not a new capability: the same change hidden by "
                   "refreshing the driver's reference through a wrapper's globals went unreported before and after "
                   "(next test); closing either needs the child's state out of the child's reach")
def test_a_swap_with_its_tag_put_back_is_reported(tmp_path):
    what, static = _tamper_run(tmp_path, TAG_PUT_BACK)
    assert "numpy.linalg.cond" in what or static, (what, static)


@pytest.mark.xfail(strict=True, reason="pre-existing (measured before and after the tag skip): the driver's "
                   "reference state (_SNAP before, _TAGS0 now) refreshed through a wrapper's __globals__ (a computed "
                   "name, which the static scan does not see) hides a swap from the integrity check; only the "
                   "behavioural witnesses stand against what such a swap could buy")
def test_a_swap_with_the_reference_refreshed_is_reported(tmp_path):
    what, static = _tamper_run(tmp_path, REFERENCE_REFRESHED)
    assert "numpy.linalg.cond" in what or static, (what, static)


def test_honest_twin_a_tag_read_and_a_same_object_assignment_are_not_reported(tmp_path):
    what, static = _tamper_run(tmp_path, HONEST_TAG_READ)
    assert not what and not static, (what, static)


TYPE_SETATTR = ("    import sys as _s\n"
                "    _sp = _s.modules['scipy.sparse']\n"
                "    type.__setattr__(_sp.csr_matrix, 'tocoo', _sp.csr_matrix.tocsc)\n")
MODULE_CLASS_SWAPPED = ("    import sys as _s\n"
                        "    _m = _s.modules['numpy.linalg']\n"
                        "    class _Lying(type(_s)):\n"
                        "        def __getattribute__(self, k):\n"
                        "            return object.__getattribute__(self, 'norm' if k == 'cond' else k)\n"
                        "    _m.__class__ = _Lying\n")


def test_a_class_attribute_set_through_type_setattr_is_reported(tmp_path):
    """type.__setattr__ on a library class writes its dict: the tag moves (reported before and after)."""
    what, _ = _tamper_run(tmp_path, TYPE_SETATTR)
    assert "scipy.sparse._csr.csr_matrix.tocoo" in what, what


@pytest.mark.xfail(strict=True, reason="pre-existing (measured before and after the tag skip): a library module's "
                   "__class__ reassigned to a ModuleType subclass whose __getattribute__ answers numpy.linalg.cond "
                   "with norm leaves the module's dict (and its tag) as it was: no comparison of dicts can see it, "
                   "and the static scan does not flag it")
def test_a_library_module_with_its_class_swapped_is_reported(tmp_path):
    what, static = _tamper_run(tmp_path, MODULE_CLASS_SWAPPED)
    assert what or static, (what, static)


@pytest.mark.xfail(strict=True, reason="residual (by design): a fine mesh's step run not reached is Tier 3 "
                   "unverified (tier3.benchmark_step, 0.5), like a fine T = 1 run that hangs; a solver that takes "
                   "another method on the fine meshes only and stalls their step runs (never raising) gets 0.5, not a "
                   "FAIL: the grader cannot tell a stall from a slow machine without a per-job time bound")
def test_a_fine_mesh_whose_step_runs_stall_is_a_fail():
    G, jobs = _fine_jobs("none")          # bench:3 ok (whatever method), its step runs never returned
    c = G.benchmark_step_check(jobs, PINNED, 1 / 3)
    assert any(x.status is G.Status.FAIL and x.id == "witness.benchmark_step" for x in c), [x.message for x in c]
