"""Red team, round 7: the gated early start, the shared child of a mesh's step runs, the child's
malloc settings and the banded replay of the step witness (second engineer, source in hand).

1. Gate.  The driver imported its standard modules (base64, inspect, threading) while the
   prologue had put the submission's folder first on sys.path: a submitted `base64.py` ran in the
   warm parent -- before the gate's go, in a run the static checks stopped at the gate, before
   the recorder bound its references -- and could keep the driver's globals (`_S`, `_REQ`) for the
   jobs forked after (a job read the poison flag of its audit run: the audit detected, with no
   construct the static checks flag).  Fixed: the warm parent never has the folder on its path;
   each job child puts it there (child_driver.py `_job`).
2. The step runs of one mesh share a forked child: helper modules (and their caches) survive the
   fresh import of adi_solver between them.  An honest solver that memoises its trajectory there
   answers the anchors with no solve: still a PASS (the step runs are not clean runs of the
   structure checks); the fields are the ones it would compute, so nothing is gained.
3. The child's glibc malloc settings: with a 16 MiB mapping threshold and 256 MiB of heap kept, an
   honest solver's dropped 8 MiB temporaries stayed a hole below a small array it kept, and its
   later workspace (within the 4 GiB address-space limit under the defaults) raised MemoryError.
   Fixed: blocks from 256 KiB up are mapped on their own, 64 MiB of heap top kept.
4. The banded (pttrs) replay: solvers whose steps differ from the grader's in floating-point order
   (own Thomas algorithm, the y-sweep first where the data allow, LAPACK ptsv) pass the step witness.
"""
import shutil

import pytest

from test_adi_exploit_recorder import JOBS, failed, judge
from test_adi_support import GOLD, drive, gold_variant_source, grader

G = grader()
ONE_CHILD_JOBS = JOBS + G.one_child(G.step_jobs((0,)))     # the coarse mesh's step runs: one child


def _shadow(name: str, extra: str = "") -> str:
    """A submitted module named like a standard one: says it ran (stderr), then hands the real
    module on (so the driver works as before)."""
    return (f"import os, sys\nos.write(2, b'SHADOW {name} RAN\\n')\n{extra}"
            f"_here = os.path.dirname(os.path.abspath(__file__))\n"
            f"del sys.modules['{name}']\n_saved = list(sys.path)\n"
            f"sys.path[:] = [p for p in sys.path if os.path.abspath(p) != _here]\n"
            f"import {name} as _real\nsys.path[:] = _saved\nsys.modules['{name}'] = _real\n"
            f"globals().update({{k: v for k, v in vars(_real).items() if not k.startswith('__')}})\n"
            f"if '_D' in globals():\n    _real._D = _D          # what it kept, on the module the jobs import\n")


def _gold_into(sub):
    sub.mkdir(parents=True, exist_ok=True)
    for f in ("adi_solver.py", "results.json", "reference_arrays.npz"):
        shutil.copyfile(GOLD / f, sub / f)
    return sub


# -- 1. the gate ---------------------------------------------------------------------------------

def test_a_submitted_module_named_like_the_drivers_runs_nothing_before_the_go(tmp_path):
    """Stopped at the gate (a submission the static checks fail): nothing of it ran."""
    sub = _gold_into(tmp_path / "sub")
    for name in ("base64", "inspect", "threading"):
        (sub / f"{name}.py").write_text(_shadow(name))
    out = G.run_isolated(str(sub), G.DRIVER_BODY, G.driver_request(JOBS[:1], 1, draws=False), 60,
                         no_site=("numpy", "scipy"), gate=lambda: False)
    assert out.status == "error" and "stopped at the gate" in out.reason, out.reason
    assert "SHADOW" not in out.stderr, out.stderr[-1000:]


GRAB = "_D = sys.modules['__ma' + 'in__']     # the driver's module, before it hides itself\n"
AUDIT_SEEN = '''
import base64 as _b64mod


def _audited():
    d = getattr(_b64mod, "_D", None)
    return d is not None and bool(vars(d)["_S"]["poison"])
'''


def test_a_submitted_module_holds_no_driver_state_for_the_jobs(tmp_path):
    """Measured before the fix: audit:0.1 and auditbench:0.1 raised 'audit seen' (the job read the
    driver's poison flag through the module its base64.py kept), perturb runs too; the static
    checks flagged nothing.  Now base64 is the standard module in every job and no job sees it."""
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              AUDIT_SEEN + "\n\ndef solve(h, T=1.0, problem=None):\n"
                              "    if _audited():\n        raise RuntimeError('audit seen')\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "base64.py").write_text(_shadow("base64", GRAB))
    assert not [c for c in G.audit_submission_sources(str(sub)) if c.status.value != "PASS"]
    ready, jobs, viol, outcome = drive(sub, src, JOBS)
    assert ready and ready.get("kind") == "ready", (ready, outcome.reason)
    assert "SHADOW" not in outcome.stderr
    assert set(jobs) == {j["tag"] for j in JOBS}
    assert not [t for t, j in jobs.items() if "audit seen" in j["error"]], {t: j["error"] for t, j in jobs.items()}
    assert all(j["status"] == "ok" for t, j in jobs.items() if not t.startswith("audit")), \
        {t: j["error"] for t, j in jobs.items()}         # (the NaN-poisoned audits raise, as the gold's)


def test_honest_twin_sibling_modules_and_a_package_import_in_every_job(tmp_path):
    """The folder is on the job's path: a sibling module and a package with a relative import load,
    in the import check, the plain runs and the shared child of the step runs."""
    sub = tmp_path / "sub"
    (sub / "adi_core").mkdir(parents=True)
    (sub / "adi_core" / "__init__.py").write_text("from .stepper import solve as run\n")
    (sub / "adi_core" / "stepper.py").write_text((GOLD / "adi_solver.py").read_text())
    (sub / "util_mesh.py").write_text("def steps(T, h):\n    return int(round(T / h))\n")
    src = ("import util_mesh\nfrom adi_core import run\n\n\n"
           "def solve(h, T=1.0, problem=None):\n    assert util_mesh.steps(T, h) >= 1\n"
           "    return run(h, T, problem)\n")
    checks, jobs, viol = judge(tmp_path, src, ONE_CHILD_JOBS)
    assert set(jobs) == set(G.job_tags(ONE_CHILD_JOBS))
    assert all(j["status"] == "ok" for t, j in jobs.items() if not t.startswith("audit")), \
        {t: j["error"] for t, j in jobs.items()}
    assert not failed(checks), failed(checks)
    assert checks["witness.benchmark_step"].status.value == "PASS", checks["witness.benchmark_step"].message


# -- 2. the shared child of a mesh's step runs -----------------------------------------------------

MEMO = '''
import memo_store


def solve(h, T=1.0, problem=None):
    """The gold's solve, its benchmark trajectory memoised in a helper module (per process): in
    the shared child the anchors are answered from the run to (N - 1) h, with no solve."""
    if problem is not None:
        return _solve(h, T, problem)
    key = (h, round(T / h))
    if key not in memo_store.FIELDS:
        memo_store.FIELDS[key] = _solve(h, T, problem)
        memo_store.RUNS.append(key)
    return memo_store.FIELDS[key]
'''


def test_honest_twin_a_trajectory_memo_shared_by_the_runs_of_one_child(tmp_path):
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n", "def _solve(h, T=1.0, problem=None):\n")
    src += MEMO.replace("memo_store.FIELDS[key] = _solve(h, T, problem)",
                        "memo_store.FIELDS[key] = _solve(h, T, problem)\n"
                        "        for j in range(1, key[1]):       # every state on the way, once\n"
                        "            memo_store.FIELDS.setdefault((h, j), _solve(h, j * h, problem))")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "memo_store.py").write_text("FIELDS = {}\nRUNS = []\n")
    checks, jobs, viol = judge(tmp_path, src, ONE_CHILD_JOBS)
    zero = [t for t, j in jobs.items() if t.startswith("bench-t") and j["log"].get("count") == 0]
    assert zero, "the anchors were expected to come from the memo (no solve of their own)"
    assert not failed(checks), failed(checks)
    assert checks["witness.benchmark_step"].status.value == "PASS", checks["witness.benchmark_step"].message
    assert not [k for k, c in checks.items() if c.status.value == "REVIEW"], \
        {k: c.message for k, c in checks.items() if c.status.value == "REVIEW"}


# -- 3. the child's malloc settings ----------------------------------------------------------------

WORKSPACE = '''
import numpy as _npm


def _vm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) << 10


def _workspace(limit={limit}, margin=150 << 20):
    """Temporaries used and dropped, a small result kept, then one large workspace: at every moment
    within the address-space limit by `margin` (with the allocator's defaults)."""
    base = _vm()
    tmp = [_npm.ones({block}) for _ in range({count})]
    keep = _npm.full({keep}, sum(float(t[0]) for t in tmp))
    del tmp
    big = _npm.empty((limit - base - margin) // 8)
    big[:1] = keep[0]
    return float(big[0])
'''


@pytest.mark.parametrize("block,count,keep", [(1 << 20, 30, 1 << 15), (25000, 1200, 12000)],
                         ids=["8MiB-temporaries", "200KiB-temporaries"])
def test_honest_twin_a_large_workspace_after_dropped_temporaries(tmp_path, block, count, keep):
    """Measured before the fix (16 MiB / 256 MiB): the 8 MiB case raised MemoryError for a 3.62 GiB
    workspace (the 240 MiB of temporaries kept as a heap hole); with the defaults and now: ok."""
    pre = WORKSPACE.format(limit=G.SPEC["runner_mem_bytes"], block=block, count=count, keep=keep)
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              pre + "\n\ndef solve(h, T=1.0, problem=None):\n    _workspace()\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "adi_solver.py").write_text(src)
    out = G.run_isolated(str(sub), G.DRIVER_BODY, G.driver_request(JOBS[:1], 1), 120,
                         no_site=("numpy", "scipy"), env_set=G.CHILD_MALLOC)
    ready, jobs, viol = G.decode_jobs(out)
    assert jobs["bench:0"]["status"] == "ok", jobs["bench:0"]["error"]


# -- 4. the banded replay: other floating-point orders ---------------------------------------------

THOMAS = '''

def _thomas_banded(lu, ab, b):
    """solve_banded((1, 1), ab, b) by the Thomas algorithm (no pivoting), column by column."""
    import numpy as _n
    lo, up = lu
    assert (lo, up) == (1, 1)
    B = _n.array(b, dtype=float)
    n = ab.shape[1]
    sub_, dia, sup = ab[2], ab[1], ab[0]
    cp = _n.empty(n)
    dp = _n.empty_like(B)
    cp[0] = sup[1] / dia[0]
    dp[0] = B[0] / dia[0]
    for i in range(1, n):
        den = dia[i] - sub_[i - 1] * cp[i - 1]
        cp[i] = sup[i + 1] / den if i < n - 1 else 0.0
        dp[i] = (B[i] - sub_[i - 1] * dp[i - 1]) / den
    x = _n.empty_like(B)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x
'''
PTSV = '''

def _ptsv_banded(lu, ab, b):
    """solve_banded((1, 1), ab, b) by LAPACK's SPD tridiagonal ptsv (another elimination order)."""
    from scipy.linalg.lapack import dptsv
    return dptsv(ab[1].copy(), ab[0, 1:].copy(), b)[2]
'''


@pytest.mark.parametrize("helper,name", [(THOMAS, "_thomas_banded"), (PTSV, "_ptsv_banded")],
                         ids=["own-thomas", "lapack-ptsv"])
def test_honest_twin_other_tridiagonal_solvers_pass_the_banded_replay(tmp_path, helper, name):
    src = gold_variant_source("from scipy.linalg import solve_banded\n",
                              "from scipy.linalg import solve_banded\n" + helper)
    src = src.replace("return solve_banded((1, 1), bands", f"return {name}((1, 1), bands")
    assert src.count(f"return {name}(") == 2
    checks, jobs, viol = judge(tmp_path, src, ONE_CHILD_JOBS)
    assert all(j["status"] == "ok" for t, j in jobs.items() if not t.startswith("audit")), \
        {t: j["error"] for t, j in jobs.items()}
    c = checks["witness.benchmark_step"]
    assert c.status.value == "PASS", c.message
    assert "FAIL" not in {x.status.value for x in checks.values() if x.id.startswith("witness")}


# -- the result channel: a job writing another run's result ----------------------------------------

FORGE = '''
import json as _js_f, os as _os_f, stat as _st_f, time as _tm_f


def _forge(tag, wait):
    """A result message for the run `tag`, written on every pipe this process may write (the
    driver's channel among them: a job child writes there what the driver writes)."""
    _tm_f.sleep(wait)
    line = (_js_f.dumps({"body": {"kind": "job", "tag": tag, "status": "error", "error": "FORGED"}})
            + "\\n").encode()
    for fd in range(3, 64):
        try:
            if _st_f.S_ISFIFO(_os_f.fstat(fd).st_mode):
                _os_f.write(fd, line)
        except OSError:
            pass
'''
FORGE_JOBS = [{"tag": "bench:0", "h": 0.1, "problem": "benchmark"},
              {"tag": "hidden:0.1", "h": 0.1, "problem": "hidden"},
              {"tag": "bench:1", "h": 0.05, "problem": "benchmark"}]


@pytest.mark.parametrize("target,wait", [("bench:0", 1.0), ("bench:1", 0.0)], ids=["another-run", "its-own-run"])
def test_a_result_written_by_the_submission_is_not_read(tmp_path, target, wait):
    """Measured before the fix: the last job (bench:1, after a 1 s wait) overwrote bench:0's result
    with its own message (the grader read the message's tag, not the child it came from).  A run's
    own forged message, written before the driver's, was overwritten by it (the last one read: one
    a thread wrote after the driver's would have won).  Now: the forged message is not read (a run
    with two results is an error), and structure.result_channel FAILs."""
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              FORGE + "\n\ndef solve(h, T=1.0, problem=None):\n    if h < 0.07:\n"
                              f"        _forge({target!r}, {wait!r})\n")
    ready, jobs, viol, outcome = drive(tmp_path / "sub", src, FORGE_JOBS)
    assert "FORGED" not in {j["error"] for j in jobs.values()}, {t: j["error"] for t, j in jobs.items()}
    if target == "bench:0":
        assert jobs["bench:0"]["status"] == "ok"
    else:
        assert jobs["bench:1"]["status"] == "error" and "more than one result" in jobs["bench:1"]["error"]
    c = [c for c in G.structure_checks(jobs, viol, ready) if c.id == "structure.result_channel"]
    assert c and c[0].status.value == "FAIL", c


def test_honest_twin_the_step_runs_of_a_shared_child_are_read(tmp_path):
    """The runs of one child (bench-t1/-t2 under bench-1's job id) are its own: read, no FAIL."""
    ready, jobs, viol, outcome = drive(tmp_path / "sub", (GOLD / "adi_solver.py").read_text(),
                                       JOBS[:1] + G.one_child(G.step_jobs((0,))))
    assert {t: j["status"] for t, j in jobs.items()} == {t: "ok" for t in ["bench:0"] + G.job_tags(
        G.one_child(G.step_jobs((0,))))}
    assert not [v for v in viol if v.get("kind") == "forged_result"]
    assert not [c for c in G.structure_checks(jobs, viol, ready) if c.id == "structure.result_channel"]


def test_a_ready_written_by_the_import_is_a_fail(tmp_path):
    """The import check's "ready" (signature, import-time solves) is the first one its child
    writes: measured before the fix, an import that wrote its own ("signature_ok": true,
    "import_solves": 0) before the driver's was read for a solve(h, T=0.5) whose signature is wrong
    (provenance.solver PASS).  Now its second one is structure.result_channel FAIL."""
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              FORGE.replace('{"kind": "job", "tag": tag, "status": "error", "error": "FORGED"}',
                                            '{"kind": "ready", "signature": "(h, T=1.0, problem=None)", '
                                            '"signature_ok": True, "import_solves": 0}')
                              + "\n\n_forge('import', 0.0)\n\n\ndef solve(h, T=0.5, problem=None):\n")
    ready, jobs, viol, outcome = drive(tmp_path / "sub", src, JOBS[:1])
    c = [c for c in G.structure_checks(jobs, viol, ready) if c.id == "structure.result_channel"]
    assert c and c[0].status.value == "FAIL", (ready, viol)


SPOIL = '''
import os as _os_s, stat as _st_s


def _spoil():
    """A partial line on every pipe this process may write: the driver's result after it is
    unreadable, and the run reads as not reached."""
    for fd in range(3, 64):
        try:
            if _st_s.S_ISFIFO(_os_s.fstat(fd).st_mode):
                _os_s.write(fd, b"{")
        except OSError:
            pass
'''


def test_a_run_that_spoils_its_own_result_is_a_fail_not_a_gap(tmp_path):
    """Measured before the fix: the witness run (the one that would show a monolithic map) spoiled
    its own result with a partial line: witness.adi_step REVIEW (INCONCLUSIVE: not reached) and
    provenance.channel REVIEW -- a harness gap the submission made.  Now structure.result_channel
    FAILs (the warm parent counted the unreadable line on that job's channel)."""
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              SPOIL + "\n\ndef solve(h, T=1.0, problem=None):\n"
                              "    if problem is not None and abs(problem.a - 0.02) > 1e-12:\n"
                              "        _spoil()\n")
    # (the witness draw differs from the hidden one, whose a is drawn too: spoil both runs but the
    # centre's; what matters is a run whose result the submission made unreadable)
    ready, jobs, viol, outcome = drive(tmp_path / "sub", src, JOBS)
    assert "witness:0.1" not in jobs or jobs["witness:0.1"]["status"] != "ok"
    c = [c for c in G.structure_checks(jobs, viol, ready) if c.id == "structure.result_channel"]
    assert c and c[0].status.value == "FAIL", viol


def test_honest_twin_a_chatty_solver_writes_no_unreadable_line(tmp_path):
    """stdout and stderr are the submission's own pipes: printing (a lot, without newlines too) is
    not writing on the result channel."""
    src = gold_variant_source("def solve(h, T=1.0, problem=None):\n",
                              "import sys as _sys_c\n\n\ndef solve(h, T=1.0, problem=None):\n"
                              "    print('{' * 5000, end='')\n    _sys_c.stderr.write('{\"body\": 1}')\n")
    ready, jobs, viol, outcome = drive(tmp_path / "sub", src, JOBS[:2])
    assert all(j["status"] == "ok" for j in jobs.values())
    assert not [v for v in viol if v.get("kind") == "forged_result"], viol


def test_honest_twin_the_y_sweep_first_passes_the_banded_replay(tmp_path):
    """The y-line solves before the x-line ones: with zero data the same map M (the 1-D operators
    commute; round-off differs), with the data another data term, which the step witness eliminates."""
    src = gold_variant_source("""        Z1 = implicit(Z0 - th * k * P1, t1, 0)
        return implicit(Z1 - th * k * P2, t1, 1)""", """        Z1 = implicit(Z0 - th * k * P2, t1, 1)
        return implicit(Z1 - th * k * P1, t1, 0)""")
    checks, jobs, viol = judge(tmp_path, src, ONE_CHILD_JOBS)
    assert all(j["status"] == "ok" for t, j in jobs.items() if not t.startswith("audit")), \
        {t: j["error"] for t, j in jobs.items()}
    assert not failed(checks), failed(checks)
    c = checks["witness.benchmark_step"]
    assert c.status.value == "PASS", c.message
