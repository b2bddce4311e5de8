"""Red team, round 5: ADI's second witness (second engineer, source in hand).

The witness assumes the solver cannot tell the witness run from the hidden run on its mesh: each
is a fresh forked process and their arguments have the same distribution.  But the two runs of
a mesh can talk: the jobs of one grading share a writable scratch folder (tempfile.gettempdir())
and, in the full sandbox, a private /dev/shm, and nothing in the ADI driver watches either.
The attack: on the hidden family, the first run of a (mesh, draw) pair to take a file lock is
answered with Crank-Nicolson on the full 2-D operator (PCG preconditioned with genuine ADI line
solves at the gold's theta = 1/3, so the recorder sees honest line solves only) and leaves its
u0 and field behind; the second run returns that field plus the gold's own ADI (MCS) map applied
to the difference of the two initial states with zero data.  The difference the witness takes
is then exactly an ADI map whatever the first run did: it proves nothing about the graded
hidden field.  The benchmark and the audits get the gold ADI (this is not the benchmark-only
case of test_adi_red_recorder.py, which another engineer handles).  The pair key is the draw's
coefficients and data sampled on the mesh, so it never meets another grading's draw.
Honest twin beside it: the same file traffic (a lock and an .npz per call) around a genuine ADI
run must not be turned away.
"""
import pytest

from test_adi_exploit_recorder import JOBS, failed, judge
from test_adi_red_recorder import ATTACK_PCG_WITNESS, _benchmark_only, attack

PAIR = '''

import fcntl as _fcntl
import hashlib as _hl
import os as _os
import tempfile as _tf


class _Diff:
    """The hidden problem with u0 replaced by a grid function and zero data."""
    def __init__(self, pb, D):
        self.a, self.b, self.c, self._D = pb.a, pb.b, pb.c, D

    def u0(self, X, Y):
        return self._D.copy()

    def f(self, X, Y, t):
        return np.zeros_like(np.asarray(X, dtype=float))

    def g(self, X, Y, t):
        return np.zeros_like(np.asarray(X, dtype=float))


def _shared():
    for d in (_tf.gettempdir(), "/dev/shm"):
        if _os.path.isdir(d) and _os.access(d, _os.W_OK):
            return d
    return None


def _paired(h, T, pb, first):
    m = int(round(1.0 / h))
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    u0 = np.asarray(pb.u0(X[1:-1, 1:-1], Y[1:-1, 1:-1]), dtype=float)
    key = _hl.sha256(repr((m, T, float(pb.a), float(pb.b), float(pb.c))).encode()
                     + np.asarray(pb.f(X, Y, 0.3), dtype=float).tobytes()
                     + np.asarray(pb.g(X, Y, 0.3), dtype=float).tobytes()).hexdigest()[:24]
    d = _shared()
    if d is None:
        return first(h, T, pb)
    path = _os.path.join(d, "adi-pair-" + key)
    with open(path + ".lock", "a") as lk:
        _fcntl.flock(lk, _fcntl.LOCK_EX)
        if _os.path.exists(path + ".npz"):
            z = np.load(path + ".npz")
            U = z["U"] + _adi(h, T, _Diff(pb, u0 - z["u0"]))[2]
            return X, Y, U
        Xf, Yf, U = first(h, T, pb)
        np.savez(path + ".npz", u0=u0, U=U)
        return Xf, Yf, U


def solve(h, T=1.0, problem=None):
    global SCHEME, THETA
    pb = BenchmarkProblem() if problem is None else problem
    bench = (float(pb.a), float(pb.b), float(pb.c)) == (1.0, 0.8, 0.5)
    if bench or FIRST is _adi or _audited(h):
        return _adi(h, T, pb)
    return _paired(h, T, pb, FIRST)


FIRST = _cn
'''


def _source(first="_cn"):
    tail = _benchmark_only(ATTACK_PCG_WITNESS)
    tail = tail[:tail.index("def solve(h, T=1.0, problem=None):")]
    return attack(tail + PAIR.replace("FIRST = _cn", "FIRST = " + first))


PAIR_JOBS = [j for j in JOBS if j["tag"] != "witness:0.1"] + [{"tag": "witness:0.1", "h": 0.1, "problem": "witness"}]


# closed: each job has private writable areas (tests/test_job_isolation.py); measured before:
# witness.adi_step PASS and every structure/causal check PASS with the hidden run answered by CN
def test_witness_pair_split_through_a_shared_file_is_not_a_pass(tmp_path):
    checks, J, _ = judge(tmp_path, _source(), PAIR_JOBS)
    assert J["hidden:0.1"]["status"] == "ok", J["hidden:0.1"]["error"]
    assert J["witness:0.1"]["status"] == "ok", J["witness:0.1"]["error"]
    assert failed(checks) or any(c.status.value == "REVIEW" for c in checks.values()), \
        {k: (c.status.value, c.message[:200]) for k, c in checks.items()}


def test_the_pair_split_attack_is_live_without_the_file(tmp_path, monkeypatch):
    """Control: the same Crank-Nicolson hidden runs with the pair key broken (each run its own
    file) is the round-4 verdict, witness.adi_step FAIL (the monolithic map): the file is what
    carries the attack."""
    src = _source().replace('"adi-pair-" + key', '"adi-pair-" + key + str(_os.getpid())')
    checks, J, _ = judge(tmp_path, src, PAIR_JOBS)
    assert J["witness:0.1"]["status"] == "ok", J["witness:0.1"]["error"]
    assert "witness.adi_step" in failed(checks), {k: c.message[:200] for k, c in checks.items()}


def test_honest_adi_with_the_same_file_traffic_passes(tmp_path):
    """Honest twin: the pair machinery with genuine ADI as the first run (the second run's field is
    then the first's plus the ADI map of the difference: ADI again, to round-off)."""
    src = _source().replace("if bench or FIRST is _adi or _audited(h):", "if bench or _audited(h):")
    src = src.replace("FIRST = _cn", "FIRST = _adi")
    checks, J, _ = judge(tmp_path, src, PAIR_JOBS)
    assert J["witness:0.1"]["status"] == "ok", J["witness:0.1"]["error"]
    bad = {k: c.message[:200] for k, c in checks.items() if c.status.value in ("FAIL", "REVIEW")}
    assert not bad, bad


# ---------------------------------------------------------------- a scripted debugger
# The ADI driver takes itself out of sys.modules["__main__"], but its module frame is still the
# oldest frame of every job: a pdb.Pdb fed commands from a StringIO goes "up" to it and runs a
# statement in the driver's globals (no name the scan looked for: pdb, Pdb, StringIO, "globals()").
# With them the solver reads _S["poison"] / _S["job"] and the unwrapped routines, as the
# wrapper-__globals__ case of test_adi_red_recorder.py does: Crank-Nicolson graded, ADI audited.
PDB = '''

import io as _io
import pdb as _pdb
_BOX = []


def _driver_globals():
    if not _BOX:
        cmds = "up\\n" * 60 + ("!_sys.modules['adi_solver']._BOX.append(globals()) "
                               "if '_S' in dir() and '_sys' in dir() else None\\ncontinue\\n")
        _pdb.Pdb(stdin=_io.StringIO(cmds), stdout=_io.StringIO(), readrc=False).set_trace()
    return _BOX[0] if _BOX else None
'''


def _pdb_source():
    from test_adi_red_recorder import ATTACK_GLOBALS
    old = 'G = getattr(solve_banded, "__glob" + "als__", None)'
    assert ATTACK_GLOBALS.count(old) == 1
    return attack(PDB + ATTACK_GLOBALS.replace(old, "G = _driver_globals()"))


def test_driver_state_through_a_scripted_debugger_is_flagged():
    from test_adi_support import grader
    recs = grader().import_audit(_pdb_source(), "static")
    intro = [r for r in recs if r.id == "static.introspection"]
    assert intro and intro[0].status.value == "REVIEW" and "pdb" in intro[0].message, \
        [(r.id, r.status.value, r.message[:120]) for r in recs]


def test_the_scripted_debugger_reaches_the_driver_state(tmp_path):
    """The run-time half, so the static flag above is not vacuous: under the driver the debugger
    route finds _S and the solver grades Crank-Nicolson while the audits and the witness get ADI
    (the witness by its job tag): structure and causal checks all PASS.  Control: the same solver
    without the debugger (G None) FAILs the structure, perturbation and witness checks."""
    checks, J, _ = judge(tmp_path, _pdb_source(), PAIR_JOBS)
    assert J["bench:0"]["status"] == "ok", J["bench:0"]["error"]
    assert not failed(checks), {k: c.message[:200] for k, c in checks.items() if c.status.value == "FAIL"}
    # measured: every structure and causal check PASS; the witness (ADI witness run minus the CN
    # hidden run: no member of the family) is REVIEW, the only run-time signal left
    assert checks["witness.adi_step"].status.value == "REVIEW", checks["witness.adi_step"].message
    checks, J, _ = judge(tmp_path / "control", _pdb_source().replace("G = _driver_globals()", "G = None"), PAIR_JOBS)
    assert {"structure.dimension", "audit.perturbed", "witness.adi_step"} <= failed(checks)


def test_ordinary_stdlib_imports_are_not_flagged():
    from test_adi_support import grader
    src = (GOLD_SRC() + "\nimport io\nimport functools\nfrom math import pi\nimport tempfile\nimport fcntl\n")
    recs = grader().import_audit(src, "static")
    assert not [r for r in recs if r.status.value in ("REVIEW", "FAIL")], [(r.id, r.message[:120]) for r in recs]


def GOLD_SRC():
    from test_adi_support import GOLD
    return (GOLD / "adi_solver.py").read_text()


# ---------------------------------------------------------------- trace and profile functions
# FEM (tests/test_fem_red_round5.py) measured a trace function installed through the standard
# `trace` module jumping (frame.f_lineno = ...) over the recorder's tamper comparison: 1.0 there.
# The ADI scan flagged none of the installers (sys.settrace, threading.setprofile, the trace
# module, cProfile) nor a frame jump; a run-time ADI attack was not built (the same class as the
# recorder-state case of test_adi_red_recorder.py: the scan is the line of defence in process).
TRACERS = ("import sys\nsys.settrace(lambda f, e, a: None)\n", "from sys import setprofile\n",
           "import threading\nthreading.setprofile(print)\n", "import trace\n", "import cProfile\n",
           "import profile\n", "def t(frame, e, a):\n    frame.f_lineno = 3\n    return t\n",
           "def t(frame, e, a):\n    return frame.f_code.co_name\n")


@pytest.mark.parametrize("src", TRACERS)
def test_trace_and_profile_installers_are_flagged(src):
    from test_adi_support import grader
    recs = [r for r in grader().import_audit(src, "static") if r.id == "static.introspection"]
    assert recs and recs[0].status.value == "REVIEW", src


def test_numpy_trace_is_not_a_tracer():
    from test_adi_support import grader
    src = GOLD_SRC() + "\nfrom numpy import trace as _tr\n_T = _tr(np.eye(3)) + np.trace(np.eye(2))\n"
    recs = grader().import_audit(src, "static")
    assert not [r for r in recs if r.status.value in ("REVIEW", "FAIL")], [(r.id, r.message[:120]) for r in recs]
