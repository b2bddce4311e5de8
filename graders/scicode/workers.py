"""SUBPROCESS RUNNER (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import dataclasses
import hashlib
import json
import os
import queue
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from graders._embed import embed
from graders.common.records import (_INTERRUPT, join_unless_interrupted, make_dirs_below,
    new_work_dir, remove_work_dir)
from graders.common.reports import grader_sha256
from graders.common.sandbox import (CHILD_RUNTIME, _SANDBOX, _SANDBOX_INIT, _drain,
    _grader_site_dirs, _launch_cfg, _python_exe, decode_reply, sandbox_level)
from graders.scicode.comparison import _grader_cmp, decode_value
from graders.scicode.header import GRADER_NAME
from graders.scicode.protocol import StepProgram
from graders.scicode.sandbox_ops import StepResult, _step_key
from graders.scicode.shim import shim_module, write_shim
from graders.scicode.spec import SPEC
from graders.scicode.target_plan import HELPER_DECORATOR, TARGET_METHODS, decorate_helpers
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SUBPROCESS RUNNER: warm workers, one forked and killable child per step
# =============================================================================
# The worker prologue (adapted from the common DRIVER_PROLOGUE: the request
# stream stays open, one JSON job per line).  `send(obj)` writes one
# token-tagged JSON line to a pipe the runner opened.
WORKER_PROLOGUE = embed("scicode/child_worker_prologue.py")

# The worker body: warm imports, then per job fork a child that runs deps -> context ->
# code -> cases in one namespace and reports each outcome on its own token pipe; enforce
# the timeout; kill the child's group.  No target is ever in this process: `target` is
# an opaque stand-in, and the comparisons that involve it record the computed side as
# data (JSON, .npy bytes) for the grader, which judges them in its own process.
WORKER_BODY = embed("scicode/child_worker.py")


def _child_env(home: str) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
           "TMPDIR": home, "MPLBACKEND": "Agg",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


                          # memory within the byte cap (honest drivers send a few hundred)


def _sandboxed(work: str, rw: list, ro: list, argv: list, lifeline: int) -> list:
    """The command that runs argv (the warm worker) in the runner's sandbox: _SANDBOX_INIT as
    pid 1 of fresh user/net/mount/pid namespaces, the allow-list root (system and Python
    read-only, `ro`, the worker's own `rw` folders), pivot_root, the old root detached."""
    sandbox_level()
    make_dirs_below(work, os.path.join(work, "root"))   # the worker's box: never made again
    cfg = _launch_cfg(work, _SANDBOX["root"], rw, argv, rw[0], [], lifeline, ro)
    return _SANDBOX["prefix"] + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT, json.dumps(cfg)]


class Worker:
    """One warm interpreter (`python -I`, own session) that forks a child per step."""

    def __init__(self, base: str, shim_dir: str, warm: list):
        self.base, self.shim_dir, self.warm = base, shim_dir, warm
        self.proc = None
        self.start()

    def start(self) -> None:
        import socket
        if _INTERRUPT["at"] is not None:    # Ctrl-C: no new worker (nor its folder)
            raise RuntimeError("not started: the grader was interrupted")
        box = tempfile.mkdtemp(prefix="worker-", dir=self.base)
        work = os.path.join(box, "work")
        os.mkdir(work)
        driver = os.path.join(work, "worker_driver.py")
        with open(driver, "w") as fh:
            fh.write(WORKER_PROLOGUE + WORKER_BODY)
        self.token = secrets.token_hex(16)
        self.replies = queue.Queue()
        self.out, self.err = [], []
        rfd, wfd = os.pipe()
        self.life, life_child = socket.socketpair()
        try:    # no preexec_fn: this runs in several threads; the worker sets its own limits
            self.proc = subprocess.Popen(
                _sandboxed(box, [work], [self.shim_dir], [_python_exe(), "-I", "-S", "-B", driver, str(wfd)],
                           life_child.fileno()), cwd=work,
                env=_child_env(work),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(wfd, life_child.fileno()), start_new_session=True)
        finally:
            os.close(wfd)
            life_child.close()
        threading.Thread(target=self._read_replies, args=(os.fdopen(rfd, "rb"),), daemon=True).start()
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=_drain, args=(stream, sink, 64 << 10), daemon=True).start()
        init = {"token": self.token, "shim_dir": self.shim_dir, "work_dir": work, "warm": self.warm,
                "target_methods": list(TARGET_METHODS), "helper_name": HELPER_DECORATOR,
                "reap": bool(sandbox_level()["pid_namespace"]), "tmp_bytes": SPEC["runner_fsize_bytes"],
                "site": _grader_site_dirs(), "prefix": [sys.prefix, sys.exec_prefix],
                "max_plain_items": SPEC["max_plain_items"], "max_plain_depth": SPEC["max_plain_depth"]}
        self.proc.stdin.write((json.dumps(init) + "\n").encode())
        self.proc.stdin.flush()
        self.child = None
        hello = self._next(120.0)
        self.ready = isinstance(hello, dict) and hello.get("ready") is True
        self.shim = bool(self.ready and hello.get("shim"))
        runtime = hello.get("runtime") if self.ready else None
        if isinstance(runtime, dict) and not CHILD_RUNTIME:     # said before any generated code
            CHILD_RUNTIME.update({k: runtime.get(k) for k in ("python", "executable", "prefix", "modules")})

    def _read_replies(self, stream) -> None:
        for line in stream:
            body, _, why = decode_reply(line.rstrip(b"\n"), self.token)
            if why is None:
                self.replies.put(body)
        self.replies.put(None)          # the worker died or closed the channel

    def _next(self, timeout: float):
        try:
            return self.replies.get(timeout=max(timeout, 0.01))
        except queue.Empty:
            return "timeout"

    def run(self, job: dict, during=None) -> dict:
        """Send one job; the worker enforces job['timeout'], the runner adds a margin.
        `during()` is called (in this process) once the job is on its way."""
        if not self.ready or self.proc.poll() is not None:
            self.restart()
            if not self.ready:
                return {"status": "worker", "reason": "WorkerFault: worker failed to start",
                        "messages": []}
        for attempt in (1, 2):      # a worker gone since its last step: a fresh one takes the job
            try:
                self.proc.stdin.write((json.dumps(job) + "\n").encode())
                self.proc.stdin.flush()
                break
            except (BrokenPipeError, OSError):
                self.restart()
                if attempt == 2 or not self.ready:
                    return {"status": "worker", "reason": "WorkerFault: worker pipe closed", "messages": []}
        if during:
            during()
        deadline = time.monotonic() + float(job["timeout"]) + SPEC["worker_reply_margin_s"]
        while True:
            msg = self._next(deadline - time.monotonic())
            if isinstance(msg, dict) and "started" in msg:
                self.child = msg["started"]
                continue
            if isinstance(msg, dict) and isinstance(msg.get("result"), dict):
                self.child = None       # a step's process may have forged this line: it can
                res = dict(msg["result"], shim=self.shim)   # never claim a harness fault
                if res.get("status") not in ("ok", "timeout", "crashed"):
                    res["status"] = "crashed"
                return res
            # the worker died or stalled while it ran this step: the step's process can
            # kill or stop its parent, so this is the step's failure (a generation must not
            # void a run by faking a harness fault); a worker that cannot start stays one
            self.restart()
            if msg == "timeout":
                return {"status": "timeout", "reason": "its worker stopped answering", "messages": []}
            return {"status": "crashed", "reason": "its worker died during the step", "messages": []}

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        for pid in (self.child, self.proc.pid if self.proc else None):
            if pid:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError, OSError):
                    pass
        self.child = None
        if getattr(self, "life", None) is not None:
            self.life.close()       # the sandbox's init kills everything left when this closes
            self.life = None
        if self.proc:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


USUAL_MODULES = ("scipy.special", "scipy.integrate", "scipy.linalg", "scipy.optimize", "scipy.interpolate",
                 "scipy.signal", "scipy.spatial", "scipy.sparse.linalg", "scipy.fft",
                 "scipy.ndimage")
IMPORT_RE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w., \t(]+)|import[ \t]+([\w., \t]+))",
                       re.MULTILINE)


def imported_modules(text: str) -> set:
    """The modules a program's import statements name (its text read, nothing run)."""
    out = set()
    for m in IMPORT_RE.finditer(text):
        if m.group(1):
            out.add(m.group(1))
            out.update(f"{m.group(1)}.{n.split()[0]}" for n in m.group(2).replace("(", " ").split(",")
                       if n.split())
        else:
            out.update(n.split()[0] for n in m.group(3).split(",") if n.split())
    return out


def warm_modules(problems: list, texts=()) -> list:
    """What the workers import before any step: the modules the problems' dependency lines
    name, the shim's (numpy, scipy.sparse, h5py), and those of the usual scipy subpackages
    that a program text imports (`texts`: generations, reference code).  Only these names are
    ever imported in a worker; a module no text names, the step that uses it imports itself
    (as every step does in the official runner).  Each warm module costs every worker its
    import and every step's fork and exit its pages."""
    mods = {"numpy", "scipy", "scipy.sparse", "h5py"}
    for p in problems:
        for line in p.deps.splitlines():
            m = re.match(r"\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", line)
            if m:
                mods.add(m.group(1) or m.group(2))
    named = set()
    for text in texts:
        named |= imported_modules(text or "")
    mods |= {u for u in USUAL_MODULES if any(n == u or n.startswith(u + ".") for n in named)}
    return sorted(mods)


def worker_count(args, n_steps: int) -> int:
    """--jobs, else the cores this process may use; never more than there are steps."""
    n = args.jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1)
    return max(1, min(n, n_steps))


class WorkerPool:
    """Warm workers launched ahead of their steps, each started in a thread of its own (the
    sandbox probed once first): their start (each worker's imports) overlaps whatever the
    grader does meanwhile.  take() hands a started one to run_steps (which stops it);
    close() stops those never taken and removes the workers' folder."""

    def __init__(self, n: int, warm: list):
        self.base = new_work_dir(f"{GRADER_NAME}-")
        self.shim_dir = write_shim(os.path.join(self.base, "shim"))
        self.warm, self.n = warm, n
        self.started = queue.Queue()
        self.launcher = threading.Thread(target=self._launch, daemon=True)
        self.launcher.start()

    def _launch(self) -> None:
        try:
            sandbox_level()     # probed once, not by every starting worker at the same time
        except BaseException as exc:
            for _ in range(self.n):
                self.started.put(exc)
            return
        self.threads = [threading.Thread(target=self._start_one, daemon=True) for _ in range(self.n)]
        for t in self.threads:
            t.start()
        for t in self.threads:
            t.join()

    def _start_one(self) -> None:
        try:
            self.started.put(Worker(self.base, self.shim_dir, self.warm))
        except BaseException as exc:
            self.started.put(exc)

    def take(self) -> "Worker":
        item = self.started.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        try:
            if not join_unless_interrupted(self.launcher):
                return                  # Ctrl-C: the workers are killed with the grader's children
            while True:
                try:
                    item = self.started.get_nowait()
                except queue.Empty:
                    break
                if isinstance(item, Worker):
                    item.stop()
        finally:                        # the workers' folder, however the wait ended
            remove_work_dir(self.base)


_PRESTARTED = {}        # "pool": the WorkerPool prestart_workers launched for the coming steps


def prestart_workers(args, selected: list, n_steps: int, gens) -> None:
    """Launch this grading's workers now, while the grader reads the generations, assembles
    the programs and plans the tests (execute_steps takes them; discard_prestarted stops them
    if it never runs)."""
    discard_prestarted()
    if n_steps and not args.no_exec:
        texts = list(gens.texts.values()) + [s.gold for p in selected for s in p.steps if s.gold]
        _PRESTARTED["pool"] = WorkerPool(worker_count(args, n_steps), warm_modules(selected, texts))


def discard_prestarted() -> None:
    pool = _PRESTARTED.pop("pool", None)
    if pool:
        pool.close()


def run_steps(jobs: list, n_jobs: int, pool, on_reply=None, prepare=None, warm_up=None) -> dict:
    """Run every job on the warm workers of `pool` (a WorkerPool); step -> raw worker reply, or, with
    `on_reply(step, reply, prepared)`, step -> what it returns (called under a lock as each
    reply arrives, so a step's records are judged and dropped while the others run).
    `prepare(step)` runs in the grader while the step runs (its result is `prepared`, None
    without it); `warm_up()` runs once, under the lock, while the workers start."""
    pending = queue.Queue()
    # a problem's last step tends to be its heavy one (a whole simulation): start those
    # first, then later steps before earlier ones; only the order changes, not the verdicts
    last = {}
    for job in jobs:
        pid, k = _step_key(job["step"])
        last[pid] = max(last.get(pid, 0), k)
    for job in sorted(jobs, key=lambda j: (_step_key(j["step"])[1] != last[_step_key(j["step"])[0]],
                                           -_step_key(j["step"])[1])):
        pending.put(job)
    results, lock = {}, threading.Lock()

    def serve():
        worker = pool.take()
        try:
            while True:
                try:
                    job = pending.get_nowait()
                except queue.Empty:
                    return
                box = {}

                def during(step=job["step"]):
                    box["read"] = prepare(step)
                reply = worker.run(job, during if prepare else None)
                with lock:
                    results[job["step"]] = on_reply(job["step"], reply, box.get("read")) if on_reply else reply
        except Exception:
            if _INTERRUPT["at"] is None:
                raise
            # interrupted: the grader is unwinding (its workers killed, their folder removed)
        finally:
            worker.stop()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, min(n_jobs, len(jobs))))]
    for t in threads:
        t.start()
    if warm_up:
        with lock:
            warm_up()
    for t in threads:
        t.join()
    return results


def make_job(prog: StepProgram, plans: list, timeout: float, mem_gb: float, dry: bool) -> dict:
    """What the worker gets for a step: its code and test text, the stand-ins' unpack
    arities (from the test text) -- no target, no targets file, no path to one."""
    return {"step": prog.step, "deps": prog.deps, "context": prog.context, "code": prog.code or "",
            "cases": [decorate_helpers(c, p.helpers) for c, p in zip(prog.cases, plans)],
            "arity": [p.arity for p in plans], "definition": list(prog.definition),
            "timeout": timeout, "mem_bytes": int(mem_gb * (1 << 30)),
            "cpu_slack": SPEC["runner_cpu_slack_s"], "fsize": SPEC["runner_fsize_bytes"],
            "capture": SPEC["runner_output_cap_bytes"], "reply_cap": SPEC["runner_reply_cap_bytes"],
            "max_messages": SPEC["runner_max_messages"],
            "dry": dry, "marker": SPEC["dry_marker"]}


def targets_present(h5_path: str, step: str, n: int) -> dict:
    """case -> failure for each case of `step` whose group the targets file lacks (the
    grader's own evidence, before anything runs)."""
    import h5py
    try:
        with h5py.File(h5_path, "r") as h5:
            return {i: {"type": "TargetsMissing", "message": f"group {step}/test{i + 1} not in the targets file"}
                    for i in range(n) if f"{step}/test{i + 1}" not in h5}
    except Exception as exc:
        return {i: {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
                for i in range(n)}


def warm_grader() -> None:
    """The grader's own target reader and comparators loaded (h5py, numpy, scipy.sparse, a
    sparse matrix and a .npy decoded once) while the workers start, not on the first reply."""
    import base64
    import io
    import numpy
    import scipy.sparse
    shim_module("parse")
    _grader_cmp()
    buf = io.BytesIO()
    numpy.lib.format.write_array(buf, numpy.zeros(1), allow_pickle=False)
    decode_value({"__array__": base64.b64encode(buf.getvalue()).decode("ascii")})
    scipy.sparse.coo_matrix((1, 1)).tocsr()


def read_step_targets(h5_path: str, step: str, n: int) -> tuple:
    """({case: target}, {case: failure}) read in the grader's process by its own reader."""
    import h5py
    reader = shim_module("parse")
    targets, errors = {}, {}
    try:
        with h5py.File(h5_path, "r") as h5:
            for i in range(n):
                try:
                    targets[i] = reader.read_test_target(h5, step, i + 1)
                except reader.TargetsMissing as exc:
                    errors[i] = {"type": "TargetsMissing", "message": str(exc).strip("'\"")}
                except Exception as exc:
                    errors[i] = {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
    except Exception as exc:
        errors = {i: {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
                  for i in range(n)}
    return targets, errors




class ResumeStore:
    """--out DIR/resume: one file per finished step, `{"key", "result"}`, written as each step is
    judged.  The result is the judged StepResult (the verdict of each case, the failure, the
    captured output): rebuilding the step's records needs neither its generated code run again
    nor the targets, and the records the step's process sent are not kept.  The key is the
    sha256 of the grader's bytes, the targets file's path, size and mtime, and the step's whole
    job (program, test cases, limits, dry run), so a rerun reuses a step only when nothing its
    verdict depends on changed."""

    def __init__(self, out_dir: str, h5: str, jobs: list):
        self.dir = os.path.join(out_dir, "resume")
        os.makedirs(self.dir, exist_ok=True)
        try:
            st = os.stat(h5)
            h5_id = [os.path.abspath(h5), st.st_size, st.st_mtime_ns]
        except OSError:
            h5_id = [os.path.abspath(h5), None, None]
        self.base = [grader_sha256(), h5_id]
        self.results = {}
        for job in jobs:
            try:
                with open(self._path(job)) as fh:
                    doc = json.load(fh)
                if isinstance(doc, dict) and doc.get("key") == self.key(job):
                    res = self._result(job["step"], doc.get("result"))
                    if res is not None:
                        self.results[job["step"]] = res
            except (OSError, ValueError, RecursionError):
                pass

    @staticmethod
    def _result(step: str, d):
        """The kept StepResult, or None unless every field has its type."""
        fields = {f.name for f in dataclasses.fields(StepResult)}
        if not isinstance(d, dict) or set(d) != fields or d["step"] != step:
            return None
        if not (isinstance(d["passed"], bool) and isinstance(d["cases"], list)
                and all(isinstance(c, dict) for c in d["cases"])
                and (d["failure"] is None or isinstance(d["failure"], dict))
                and isinstance(d["wall"], (int, float)) and not isinstance(d["wall"], bool)
                and isinstance(d["stdout"], str) and isinstance(d["stderr"], str)
                and isinstance(d["marker"], bool)):
            return None
        return StepResult(**d)

    def key(self, job: dict) -> str:
        text = json.dumps([self.base, job], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, job: dict) -> str:
        return os.path.join(self.dir, re.sub(r"[^\w.-]", "_", job["step"]) + ".json")

    def save(self, job: dict, result: "StepResult") -> None:
        """Written to a temp file, then renamed: an interrupted write leaves no half a result."""
        path = self._path(job)
        try:
            with open(path + ".tmp", "w") as fh:
                json.dump({"key": self.key(job), "result": dataclasses.asdict(result)}, fh,
                          allow_nan=False)
            os.replace(path + ".tmp", path)
        except (OSError, TypeError, ValueError):
            pass


