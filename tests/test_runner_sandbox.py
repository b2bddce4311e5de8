"""Issue 9 items 3-5: the child sees only Python, its copy and a scratch folder; the warm fork
server's job children cannot reach the reply pipe, the warm parent or each other; memory limits
(address space, or resident memory watched from outside) end in a clean reason."""
import importlib
import json
import shutil
import sys

import pytest

from conftest import REPO, run_grader

sys.path.insert(0, str(REPO))
G = importlib.import_module("grade_fem")
LEVEL = G.sandbox_level()
needs_files = pytest.mark.skipif(not LEVEL["file_isolation"], reason="no mount/pid namespaces here")

SNOOP = r'''
import os
seen = {}
try:
    seen["secret"] = open(_REQ["secret"]).read()
except OSError as exc:
    seen["secret"] = type(exc).__name__
seen["root"] = sorted(os.listdir("/"))
seen["tmp"] = sorted(os.listdir("/tmp"))
seen["root_home"] = sorted(os.listdir("/root")) if os.path.isdir("/root") else None
seen["work"] = os.path.exists("/work") or os.path.exists("/home")
seen["pid"] = os.getpid()
seen["proc"] = sorted(p for p in os.listdir("/proc") if p.isdigit())
seen["dev"] = sorted(os.listdir("/dev"))
open(os.path.join(_REQ["scratch_dir"], "w"), "w").write("ok")     # scratch and copy writable
open("here", "w").write("ok")
try:                            # no state for a later solve call left in /tmp
    open("/tmp/hard-coded.txt", "w").write("ok")
    seen["tmp_writable"] = True
except OSError:
    seen["tmp_writable"] = False
try:
    open("/usr/x", "w")
    seen["usr_writable"] = True
except OSError:
    seen["usr_writable"] = False
import numpy
seen["numpy"] = numpy.__version__
send(seen)
'''


@needs_files
def test_child_sees_only_python_its_copy_and_scratch(tmp_path):
    secret = tmp_path / "answers.txt"
    secret.write_text("the expected values")
    sub = tmp_path / "sub"
    sub.mkdir()
    oc = G.run_isolated(str(sub), SNOOP, {"secret": str(secret)}, 60)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    seen = oc.messages[0]
    assert seen["secret"] in ("FileNotFoundError", "PermissionError")
    assert set(seen["root"]) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc",
                                 "root", "sbin", "tmp", "usr"}
    assert len(seen["tmp"]) == 1 and seen["tmp"][0].startswith("grade_fem-")     # its own run only
    assert not seen["tmp_writable"]     # /tmp read-only: no unwatched state between solve calls
    assert seen["root_home"] in (None, [".pyenv"]) and not seen["work"]
    assert seen["pid"] == 2 and seen["proc"] == ["1", "2"]       # init and itself
    assert {"null", "zero", "urandom", "random", "shm"} <= set(seen["dev"])
    assert not seen["usr_writable"] and seen["numpy"]
    assert oc.sandbox["file_isolation"] is True


FORK_PROBE = r'''
import ctypes, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)


def probe(job):
    if job["id"] == "a":
        out = {}
        try:
            os.write(_REQ["reply_fd"], b"x\n")
            out["reply_fd"] = "wrote"
        except OSError:
            out["reply_fd"] = "closed"
        for name in ("mem", "environ", "fd/%d" % _REQ["reply_fd"]):
            try:
                open("/proc/%d/%s" % (os.getppid(), name), "rb").read(1)
                out[name] = "read"
            except OSError:
                out[name] = "denied"
        out["ptrace"] = libc.ptrace(16, os.getppid(), 0, 0)         # PTRACE_ATTACH
        opened = []                                                 # init holds the lifeline
        for fd in (os.listdir("/proc/1/fd") if os.path.isdir("/proc/1/fd") else []):
            try:
                os.close(os.open("/proc/1/fd/" + fd, os.O_WRONLY))
                opened.append(fd)
            except OSError:
                pass
        out["init_fds"] = opened
        out["token"] = _CH["tok"]
        d = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)
        out["daemon"] = d.pid
        send(out)
    elif job["id"] == "b":
        pid = ask({"want": "daemon"})
        try:
            os.kill(pid, 0)
            send({"daemon_alive": True})
        except OSError:
            send({"daemon_alive": False})
    elif job["id"] == "c":
        send({"kind": "job", "job": "a", "forged": True})
    elif job["id"] == "t":
        time.sleep(30)


_REQ["reply_fd"] = _FD
fork_jobs([{"id": i} for i in ("a", "b", "c", "t")], probe)
send({"kind": "parent_done"})
'''


def test_fork_server_jobs_are_confined_tagged_and_timed():
    box = {}

    def interact(body):
        return box.get("daemon")

    def rearm(body):
        if isinstance(body, dict) and "daemon" in body:
            box["daemon"] = body["daemon"]

    oc = G.run_isolated(str(REPO / "tests"), FORK_PROBE, {"job_timeout": 1.0}, 60,
                        interact=interact, rearm=rearm)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    by_job = {}
    for m in oc.messages:
        by_job.setdefault(m.get("job"), []).append(m)
    a = by_job["a"][0]
    assert a["reply_fd"] == "closed"
    assert a["token"] == ""                                          # nothing to sign with
    if LEVEL["job_user_namespace"]:
        fds = [v for k, v in a.items() if k.startswith("fd/")]
        assert a["mem"] == a["environ"] == "denied" and fds == ["denied"] and a["ptrace"] == -1
    if LEVEL["pid_namespace"]:
        assert a["init_fds"] == []
    assert [m for m in by_job["b"] if "daemon_alive" in m] == [{"daemon_alive": False, "job": "b"}]
    assert {"want": "daemon", "job": "b"} in by_job["b"]            # the ask, tagged
    assert [m for m in by_job["c"] if m.get("forged")] == [{"kind": "job", "job": "c", "forged": True}]
    ends = {m["job"]: m for m in oc.messages if m.get("kind") == "job_end"}
    assert [ends[j]["status"] for j in "abct"] == ["ok", "ok", "ok", "timeout"]
    assert "job limit" in ends["t"]["reason"] and ends["t"]["wall"] < 5
    assert oc.messages[-1] == {"kind": "parent_done"}


MEM = r'''
import time
blocks = []
try:
    for _ in range(_REQ["mb"] // 16):
        blocks.append(bytearray(16 << 20))        # touched: resident
        time.sleep(_REQ["pause"])
    send({"allocated": True})
except MemoryError:
    send({"memory_error": True})
'''


def test_address_space_limit_is_a_memory_error():
    oc = G.run_isolated(str(REPO / "tests"), MEM, {"mb": 1024, "pause": 0}, 60, mem_bytes=512 << 20)
    assert oc.messages == [{"memory_error": True}], (oc.reason, oc.stderr)


def test_resident_watchdog_kills_with_a_clean_reason():
    oc = G.run_isolated(str(REPO / "tests"), MEM, {"mb": 1024, "pause": 0.02}, 60,
                        mem_bytes=200 << 20, memory="resident")
    assert oc.status == "crashed" and f"exceeded {200 << 20} bytes resident" in oc.reason
    assert not any(m.get("allocated") for m in oc.messages)


# --- every executing grader, end to end: a submission reading a path the test created -----
SECRET_TEXT = "EXPECTED-VALUES-7f3a"


def _secret(tmp_path):
    d = tmp_path / "hidden"
    d.mkdir()
    (d / "answers.json").write_text(SECRET_TEXT)
    return d / "answers.json"


READER = '''def _peek(path):
    try:
        return "READ " + open(path).read()
    except OSError as exc:
        return "blocked " + type(exc).__name__
raise RuntimeError(_peek(%r))
'''


def _report(script, sub, tmp_path, *args):
    rc, out, err, doc = run_grader(REPO / script, sub, *args, "--json", tmp_path / "r.json", timeout=600)
    assert "Traceback" not in err and rc in (0, 1), err[-2000:]
    assert SECRET_TEXT not in out and SECRET_TEXT not in json.dumps(doc)
    assert doc["sandbox"]["file_isolation"] is True
    iso = [c for c in doc["checks"] if c["id"] == "sandbox.isolation"]
    assert iso and iso[0]["status"] == "INFO" and "file isolation on" in iso[0]["message"]
    return doc


@needs_files
@pytest.mark.parametrize("script,solver,gold,cid", [
    ("grade_fem.py", "fem_solver.py", "fem", "provenance.import"),
    ("grade_adi.py", "adi_solver.py", "adi", "provenance.solver")])
def test_solver_cannot_read_a_file_outside_its_copy(tmp_path, script, solver, gold, cid):
    secret = _secret(tmp_path)
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "reference" / gold / "gold", sub)
    (sub / solver).write_text(READER % str(secret) + (sub / solver).read_text())
    doc = _report(script, sub, tmp_path)
    msg = [c["message"] for c in doc["checks"] if c["id"] == cid and c["status"] == "FAIL"]
    assert msg and "blocked FileNotFoundError" in msg[0], msg


# one row per tier, on known primes (2^k - 1 Mersenne primes, 2^255 - 19, NIST P-384's prime):
# a valid --test-set the grader re-checks in milliseconds (generating one takes seconds)
TIER_PRIMES = {1: 7, 2: 31, 3: 2 ** 13 - 1, 4: 2 ** 31 - 1, 5: 2 ** 61 - 1, 6: 2 ** 127 - 1,
               7: 2 ** 255 - 19, 8: 2 ** 384 - 2 ** 128 - 2 ** 96 + 2 ** 32 - 1, 9: 2 ** 521 - 1,
               10: 2 ** 1279 - 1}


def tiny_test_set(d):
    d.mkdir()
    (d / "tier_0.jsonl").write_text(json.dumps({"a": "2", "b": "3", "p": "7", "expected": "6",
                                                "tier_id": 0}) + "\n")
    for tid, p in TIER_PRIMES.items():
        (d / f"tier_{tid}.jsonl").write_text(json.dumps(
            {"a": "3", "b": "5", "p": str(p), "expected": str(15 % p), "tier_id": tid}) + "\n")
    return d


@needs_files
def test_model_cannot_read_the_test_set_it_is_graded_on(tmp_path):
    from test_modchallenge_support import make_submission, model_source
    tests = tiny_test_set(tmp_path / "tests")
    src = model_source("    def load(self, model_dir):\n"
                       "        try:\n"
                       "            raise RuntimeError('READ ' + open(%r).read())\n"
                       "        except OSError as exc:\n"
                       "            raise RuntimeError('blocked ' + type(exc).__name__)\n"
                       % str(tests / "tier_5.jsonl"))
    sub = make_submission(tmp_path / "sub", src)
    doc = _report("grade_modchallenge.py", sub, tmp_path, "--test-set", str(tests))
    g4 = [c for c in doc["checks"] if c["id"] == "g4.testgen"][0]
    assert g4["status"] == "PASS", g4
    g5 = [c for c in doc["checks"] if c["id"] == "g5.model_load"][0]
    assert g5["status"] == "FAIL" and "blocked FileNotFoundError" in g5["message"], g5
    assert "READ" not in json.dumps(doc) and str(2 ** 61 - 1) not in json.dumps(doc["checks"])
    assert not any(c["id"] == "sandbox.answers_hidden" for c in doc["checks"])


def _no_namespaces(mod, monkeypatch):
    level = dict(mod.sandbox_level(), prefix=[], root=False, user_namespace=False, net_namespace=False,
                 mount_namespace=False, pid_namespace=False, ipc_namespace=False,
                 file_isolation=False, job_user_namespace=False, note="forced off by the test")
    monkeypatch.setattr(mod, "_SANDBOX", level)


def test_without_namespaces_grading_still_works_and_says_so(monkeypatch):
    _no_namespaces(G, monkeypatch)
    body = r'''
def run(job):
    send({"got": ask({"n": job["n"]})})
fork_jobs([{"id": 1, "n": 1}, {"id": 2, "n": 2}], run)
'''
    oc = G.run_isolated(str(REPO / "tests"), body, {}, 60, interact=lambda b: b["n"] * 10)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    assert [m["got"] for m in oc.messages if "got" in m] == [10, 20]
    assert oc.sandbox["file_isolation"] is False
    check = G.sandbox_check()
    assert check.status is G.Status.INFO and "file isolation OFF" in check.message


def test_modchallenge_without_file_isolation_does_not_certify(monkeypatch):
    M = importlib.import_module("grade_modchallenge")
    assert M.answers_hidden_check("/x") == [] or not M.sandbox_level()["file_isolation"]
    _no_namespaces(M, monkeypatch)
    rec = M.answers_hidden_check("/some/test-set")
    assert [c.status for c in rec] == [M.Status.REVIEW] and "/some/test-set" in rec[0].message
    ok = [M.Check("rank.overall_accuracy", M.Status.INFO, "", 1.0)]
    assert M.verdict(ok + rec, strict=True, no_exec=False) == ("FAIL", 0.0)


def test_jobs_handed_out_one_by_one_and_asks_without_an_answer():
    body = r'''
def plan():
    while True:
        job = ask({"want": "next job"})        # the grader decides each job only now
        if job is None:
            return
        yield job


def run(job):
    send({"n": job["n"], "answer": ask({"q": job["n"]})})
fork_jobs(plan(), run)
'''
    queue = [{"id": "x", "n": 1}, {"id": "y", "n": 2}]

    def interact(b):
        if b.get("want") == "next job":
            return queue.pop(0) if queue else None
        return b["q"] * 100 if b["q"] == 1 else None

    oc = G.run_isolated(str(REPO / "tests"), body, {"job_timeout": 5}, 60, interact=interact)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    got = [(m["job"], m["answer"]) for m in oc.messages if "answer" in m]
    assert got == [("x", 100), ("y", None)]
    no_interact = G.run_isolated(str(REPO / "tests"), "def run(job):\n    send({'a': ask(1)})\n"
                                 "fork_jobs([{'id': 1}], run)\n", {"job_timeout": 5}, 60)
    assert [m for m in no_interact.messages if "a" in m] == [{"a": None, "job": 1}]


CONCURRENT = r'''
import os, time
def run(job):
    t0 = time.time()
    fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
    answer = ask({"q": job["id"]})
    if job["id"] == "slow":
        time.sleep(1.0)
    send({"answer": answer, "t0": t0, "t1": time.time(), "fds": len(fds)})
ends = fork_jobs([{"id": i} for i in ("slow", "a", "b", "c")], run, 2)
send({"order": [e["job"] for e in ends]})
'''


def test_fork_server_runs_jobs_side_by_side_answering_each_by_job():
    """fork_jobs(..., concurrency=2): the jobs after "slow" run (one after another) while it
    is still running; each ask is answered by job id; a job child holds none of the other
    running job's pipes; ending a job sweeps its processes, not the job beside it."""
    oc = G.run_isolated(str(REPO / "tests"), CONCURRENT, {"job_timeout": 10}, 60,
                        interact=lambda b: "for " + b["q"])
    assert oc.status == "ok", (oc.reason, oc.stderr)
    res = {m["job"]: m for m in oc.messages if "answer" in m}
    assert {j: r["answer"] for j, r in res.items()} == {j: "for " + j for j in ("slow", "a", "b", "c")}
    assert res["c"]["t1"] < res["slow"]["t1"] and res["a"]["t0"] < res["slow"]["t1"]
    assert res["a"]["fds"] == res["b"]["fds"] == res["c"]["fds"] == res["slow"]["fds"]
    ends = [m for m in oc.messages if m.get("kind") == "job_end"]
    assert [e["job"] for e in ends][-1] == "slow" and all(e["status"] == "ok" for e in ends)
    assert oc.messages[-1] == {"order": ["slow", "a", "b", "c"]}        # returned in the jobs' order


SITE_PROBE = r'''
import sys
import numpy
send({"no_site": sys.flags.no_site, "numpy": numpy.__version__, "pth": "site" in sys.modules})
'''


def test_driver_starts_without_site_only_when_its_modules_need_none():
    """run_isolated(no_site=...): the driver always starts without `site` (python -S) and gets
    the grader's own site directories (issue 22); it skips their .pth files when the modules
    it needs are plain files there, and processes them (site.addsitedir) otherwise."""
    fast = G.run_isolated(str(REPO / "tests"), SITE_PROBE, {}, 60, no_site=("numpy",))
    usual = G.run_isolated(str(REPO / "tests"), SITE_PROBE, {}, 60,
                           no_site=("numpy", "no_such_module_here"))
    assert fast.status == usual.status == "ok", (fast.reason, usual.reason)
    assert fast.messages[0]["no_site"] == usual.messages[0]["no_site"] == 1
    assert fast.messages[0]["pth"] is False and usual.messages[0]["pth"] is True
    assert fast.messages[0]["numpy"] == usual.messages[0]["numpy"]
    assert G._site_dirs(()) is None and G._site_dirs(("no_such_module_here",)) is None


def test_a_job_ends_when_its_child_exits_even_if_its_pool_holds_the_pipe():
    body = r'''
import multiprocessing
def run(job):
    pool = multiprocessing.get_context("fork").Pool(2)      # workers inherit the job's pipe
    pool.apply_async(__import__("time").sleep, (30,))
    send({"started": True})
fork_jobs([{"id": "p"}, {"id": "q"}], run)
'''
    oc = G.run_isolated(str(REPO / "tests"), body, {}, 60)
    ends = [m for m in oc.messages if m.get("kind") == "job_end"]
    assert [e["status"] for e in ends] == ["ok", "ok"], (oc.reason, oc.stderr)
    assert oc.wall < 15 and all(e["wall"] < 5 for e in ends)


@needs_files
def test_gpu_mode_parameters_pass_paths_and_environment(monkeypatch):
    """What a CUDA model needs (modchallenge's GPU mode): extra read-only paths (/sys), the
    device variables, and the resident-memory watchdog instead of the address-space limit."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    body = ('import os, resource\nsend({"sys": os.path.isdir("/sys/class"), '
            '"env": os.environ.get("CUDA_VISIBLE_DEVICES"), '
            '"as": resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY})\n')
    oc = G.run_isolated(str(REPO / "tests"), body, {}, 30, ro_paths=("/sys",),
                        env_pass=("CUDA_VISIBLE_DEVICES",), memory="resident", mem_bytes=2 << 30)
    assert oc.messages == [{"sys": True, "env": "0", "as": True}], (oc.reason, oc.stderr)
    plain = G.run_isolated(str(REPO / "tests"), body, {}, 30)
    assert plain.messages == [{"sys": False, "env": None, "as": False}], (plain.reason, plain.stderr)


def test_a_grader_callback_that_raises_is_an_error_outcome_not_a_crash():
    body = 'send({"a": 1})\nprint(ask({"b": 2}))\n'

    def bad(body):
        raise KeyError("grader bug")
    for kw in ({"rearm": bad}, {"interact": bad}, {"followup": bad}):
        oc = G.run_isolated(str(REPO / "tests"), body, {}, 30, **kw)
        assert oc.status == "error" and "raised KeyError" in oc.reason, (kw, oc.reason)


def test_first_run_without_a_probe_falls_back_when_the_full_sandbox_does_not_hold(monkeypatch):
    """The first run launches in the full sandbox at once; where that fails (here: no unshare
    binary) the runner probes and runs again, and the level says what held."""
    monkeypatch.setattr(G, "_SANDBOX", {})
    monkeypatch.setattr(G, "_full_prefix", lambda: ["/nonexistent/unshare"])
    oc = G.run_isolated(str(REPO / "tests"), "send(1)\n", {}, 30)
    assert oc.status == "ok" and oc.messages == [1], (oc.reason, oc.stderr)
    assert oc.sandbox["file_isolation"] is False and oc.sandbox["mount_namespace"] is False
    assert G.sandbox_level() == oc.sandbox


@needs_files
def test_first_run_establishes_the_level_without_a_probe(monkeypatch):
    monkeypatch.setattr(G, "_SANDBOX", {})
    probes = []
    monkeypatch.setattr(G, "_probe_sandbox", lambda: probes.append(1))
    oc = G.run_isolated(str(REPO / "tests"), "send(1)\n", {}, 30)
    assert oc.messages == [1] and oc.sandbox["file_isolation"] is True and probes == []
