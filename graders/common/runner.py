"""SUBPROCESS RUNNER (a part of grade_fem.py, grade_adi.py, grade_modchallenge.py; see CONTRIBUTING.md)."""
import dataclasses
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from graders._embed import embed
from graders.common.bench import GRADER_NAME, SPEC
from graders.common.records import _INTERRUPT, make_dirs_below, new_work_dir, remove_work_dir
from graders.common.sandbox import (CHILD_RUNTIME, JOB_AREAS, _PROBE_LOCK, _SANDBOX, _SANDBOX_INIT,
    _SHM_BYTES, _drain, _full_level, _full_prefix, _grader_site_dirs, _launch_cfg, _python_exe,
    decode_reply, sandbox_level)
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SUBPROCESS RUNNER
# =============================================================================
# One text in every grader that executes submitted code (a test asserts the copies are
# identical): features one grader needs are parameters of run_isolated, limits are the
# SPEC["runner_*"] entries, read at call time.
#
# Process tree of one run:  grader -> unshare (user, net, mount, pid namespaces) ->
# _SANDBOX_INIT (pid 1: builds the allow-list root, holds the lifeline) -> the driver
# (DRIVER_PROLOGUE + body; with fork_jobs, the warm parent of one forked child per job).
@dataclasses.dataclass
class RunOutcome:
    status: str                 # "ok" | "timeout" | "crashed" | "no_reply" | "error"
    messages: list              # every authentic (token-bearing) JSON message, in order
    reason: str
    wall: float
    returncode: int | None
    stdout: str                 # captured, capped; never printed unmarked
    stderr: str
    forged: int = 0             # unreadable or unauthenticated lines on the reply channel
    times: list = dataclasses.field(default_factory=list)    # arrival of each message (s from start)
    sandbox: dict = dataclasses.field(default_factory=dict)  # sandbox_level() of this run
    garbage: list = dataclasses.field(default_factory=list)  # why the first refused lines were refused
    runtime: dict = dataclasses.field(default_factory=dict)  # what the child said it runs with (report_runtime)


# The prologue every driver starts with.  It reads its request (with a one-time token) from
# stdin before anything of the submission runs and gives the driver body:
#   send(obj)    one token-tagged JSON line on a pipe the runner opened;
#   ask(obj)     send, then block for the grader's answer (run_isolated(interact=...));
#   receive()    the runner's next JSON line (run_isolated(followup=...)), None at its end;
#   report_runtime()  the interpreter, prefix and library versions this child imported, sent
#                once, before any submission code (fork_jobs sends it; a driver that does not
#                fork calls it before it loads the submission): the report's `run` block;
#   fork_jobs(jobs, run_job, concurrency=1)   the warm fork server: one fresh child per job,
#                started in the order given (up to `concurrency` at once), each in its own
#                process group and user namespace, its messages tagged {"job": id} by this
#                parent, then {"kind": "job_end", ...} per job.
#                In a gated run (run_isolated(gate=...)) it waits for the grader's go first.
# _LIM (the request's "runner" entry) holds the runner's limits and "isolated": whether this
# run was started in the allow-list root (file isolation; a run where it did not hold is
# discarded and started again at the level the probe finds).
# The submission's stdin is empty; its stdout/stderr are separate capped pipes.
DRIVER_PROLOGUE = embed("common/child_driver_prologue.py")

def _site_dirs(modules: tuple) -> list | None:
    """The grader's site directories (in its path order) when every module in `modules`
    is found in one of them as a plain package or module (no .pth processing needed);
    None otherwise (or if none given)."""
    import importlib.util
    dirs = _grader_site_dirs()
    if not modules or not dirs:
        return None
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = getattr(spec, "origin", None) if spec is not None else None
        origin = os.path.realpath(origin) if isinstance(origin, str) else None
        if not (origin and any(origin.startswith(d.rstrip("/") + "/") for d in dirs)):
            return None
    return dirs


def _is_bytecode(name: str) -> bool:
    """Compiled Python (an `__pycache__` folder, `.pyc`/`.pyo`): never copied.  Python imports a
    standalone `helper.pyc` with no source, and an unchecked-hash `__pycache__` entry instead of the
    source beside it, so a copied one would run code the static checks never read (measured: an
    unchecked-hash `__pycache__/adi_solver.*.pyc` ran in every ADI job).  Without it the child
    compiles the source it was given, as the checks read it."""
    return name == "__pycache__" or name.endswith((".pyc", ".pyo"))


def _copy_submission(src: str, dst: str, max_bytes: int) -> None:
    """Copy regular files and folders only (symlinks, specials and compiled Python are skipped)."""
    total = 0
    os.mkdir(dst)           # in the run's work dir: never made again once removed (make_dirs_below)
    for root, dirs, files in os.walk(src, followlinks=False):
        rel = os.path.relpath(root, src)
        target = dst if rel == "." else os.path.join(dst, rel)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d)) and not _is_bytecode(d)]
        for d in dirs:
            make_dirs_below(dst, os.path.join(target, d))
        for f in files:
            p = os.path.join(root, f)
            if os.path.islink(p) or not os.path.isfile(p) or _is_bytecode(f):
                continue
            total += os.path.getsize(p)
            if total > max_bytes:
                raise OSError(f"submission larger than {max_bytes} bytes")
            shutil.copyfile(p, os.path.join(target, f))


_MAX_MESSAGES = 100_000   # more are refused: millions of tiny messages would exhaust the grader's
                          # memory within the byte cap (honest drivers send a few hundred)


class _ReplyReader:
    """Reads the reply pipe line by line as it arrives: authenticates each line, stamps its
    arrival time, lets `rearm` move the deadline (e.g. start the budget at "ready"), and
    hands asks to the grader's interact callback.  Never raises on what the child writes."""

    def __init__(self, stream, token: str, t0: float, deadline: list, rearm, cap: int, on_ask):
        self.stream, self.token, self.t0, self.deadline, self.rearm, self.cap = \
            stream, token, t0, deadline, rearm, cap
        self.messages, self.times, self.forged, self.garbage = [], [], 0, []
        self.lock = threading.Lock()
        self.on_ask = on_ask
        self.errors = []                # exceptions of the grader's own callbacks
        self.on_message = None          # called with each authentic body, outside the lock
        self.runtime = None             # the child's report_runtime() (the first one only)

    def refuse(self, why: str, count: int = 1) -> None:
        with self.lock:
            self.forged += count
            if len(self.garbage) < 10:
                self.garbage.append(why)

    def run(self) -> None:
        buf, total, over = b"", 0, False
        while True:
            chunk = self.stream.read1(1 << 20)
            if not chunk:
                break
            if over:
                continue                # drained and dropped: the child keeps no grader busy
            total += len(chunk)
            if total > self.cap:
                over, buf = True, b""
                self.refuse(f"reply channel over {self.cap} bytes: the rest ignored")
                continue
            buf += chunk
            if b"\n" in chunk:
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self.take(line)
        if buf and not over:
            self.take(buf)
        self.stream.close()

    def take(self, line: bytes) -> None:
        now = time.monotonic()
        body, is_ask, why = decode_reply(line, self.token)
        if why is not None:
            self.refuse(why)
            return
        if isinstance(body, dict) and body.get("kind") == "job_end":
            n = body.get("garbage")
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                for why in (body.get("garbage_reasons") or [])[:3]:
                    self.refuse(f"job {body.get('job')}: {why}", 0)
                self.refuse(f"job {body.get('job')}: {n} unreadable line(s)", n)
        if len(self.messages) >= _MAX_MESSAGES:
            self.refuse(f"more than {_MAX_MESSAGES} messages")
            return
        if self.runtime is None and isinstance(body, dict) and body.get("kind") == "runtime":
            self.runtime = body         # sent before any submission code: not a driver message
            if not CHILD_RUNTIME:
                CHILD_RUNTIME.update({k: body.get(k) for k in ("python", "executable", "prefix", "modules")})
            return
        with self.lock:
            self.messages.append(body)
            self.times.append(now - self.t0)
        try:                            # the grader's callbacks see the child's data: a bug there
            extra = self.rearm(body) if self.rearm is not None else None      # is an error
            if extra is not None:
                with self.lock:
                    self.deadline[0] = now + extra
            if is_ask:
                self.on_ask(body)
            elif self.on_message is not None:
                self.on_message(body)
        except Exception as exc:
            self.errors.append(f"the grader's rearm/followup callback raised {exc!r}"[:300])


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and all its descendants (read from outside, /proc)."""
    total, stack, seen = 0, [pid], set()
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * page
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


# OpenBLAS's CPU kernel pinned where the user did not choose one: a DYNAMIC_ARCH OpenBLAS (numpy's
# and scipy's wheels) picks its kernel by CPU generation, and a solve's round-off follows it (the
# FEM gold's round-off-level nodal errors moved by up to 2e-3 relative on an AVX-512 machine,
# which picks SkylakeX: REVIEW for the committed gold). Haswell's kernel runs on every x86-64 CPU
# with AVX2 and FMA; elsewhere (older x86, ARM) nothing is set. The same pin is in the gold
# generators (reference/*/make_gold.py), so a study run there reproduces under the grader.
BLAS_KERNEL = "Haswell"


def blas_kernel_env() -> dict:
    """{"OPENBLAS_CORETYPE": BLAS_KERNEL} on an x86-64 CPU with AVX2 and FMA, else {}."""
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        return {}
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return {}
    return {"OPENBLAS_CORETYPE": BLAS_KERNEL} if {"avx2", "fma"} <= set(flags) else {}


def run_isolated(submission_dir: str, driver_body: str, request: dict, timeout: float, *,
                 interact=None, followup=None, rearm=None, lib_files: dict | None = None,
                 cpu_seconds: int | None = None, mem_bytes: int | None = None,
                 memory: str = "address", env_pass: tuple = (), ro_paths: tuple = (),
                 no_site: tuple = (), launched=None, gate=None, env_set: dict | None = None) -> RunOutcome:
    """Run DRIVER_PROLOGUE + driver_body in a fresh sandboxed interpreter on a private copy of
    the submission, with resource limits and a wall-clock deadline enforced from outside.
    Only token-tagged lines on the runner's own pipe count.
      interact(body) -> reply   answers every ask() of the child (in a grader thread);
      followup(body) -> obj     one line for the child's receive(), sent (once) when it returns
                                something; until then the child's input stays open and empty;
      rearm(body) -> seconds    a message moves the deadline to now + seconds;
      lib_files {rel: text}     written to a private folder, request["lib_dir"];
      cpu_seconds               RLIMIT_CPU (default: timeout + SPEC["runner_cpu_slack_s"]);
      mem_bytes, memory         the memory limit (default SPEC["runner_mem_bytes"]): "address"
                                = RLIMIT_AS per process; "resident" = the child tree's resident
                                memory polled from outside (GPU runtimes reserve huge address
                                space), killed with a clean reason on excess;
      env_set                   environment variables set in the child (e.g. its allocator's
                                settings), before those passed through;
      env_pass, ro_paths        environment variables passed through, extra read-only paths
                                the child may see (e.g. CUDA's);
      no_site                   modules the driver needs (e.g. ("numpy", "scipy")): when every one
                                of them is found in the site directories themselves (not through
                                a .pth import hook), the driver starts without `site` (python -S:
                                its .pth imports cost ~25 ms) and gets those directories on its
                                path; else it starts as usual;
      launched()                called (in the runner's thread) once the child process is
                                started: a grader holding back its own work until then gives
                                the launch the interpreter lock (FEM);
      gate() -> bool | dict     the child starts at once but runs no job before the grader says
                                go: called in a runner thread once the child is started, it may
                                block (e.g. while the grader's static checks run beside the
                                child's start-up); True (or a dict: entries added to the
                                driver's request first) lets fork_jobs start the jobs and the
                                deadline (timeout) counts from then, False ends the run before
                                any job, with no probe or second run (status "error"); the
                                request says "gated" and fork_jobs waits for the word."""
    limits = {k: SPEC[f"runner_{k}"] for k in ("mem_bytes", "fsize_bytes", "cpu_slack_s",
                                               "term_grace_s", "output_cap_bytes",
                                               "reply_cap_bytes", "copy_cap_bytes")}
    mem = int(mem_bytes if mem_bytes is not None else limits["mem_bytes"])
    with _PROBE_LOCK:
        known = dict(_SANDBOX)
    if _INTERRUPT["at"] is not None:       # Ctrl-C: nothing new starts (and nothing is probed)
        return RunOutcome("error", [], "not started: the grader was interrupted", 0.0, None, "", "")
    # Before anything is known, launch in the full sandbox at once: its init reports what held
    # (no separate probe on the critical path); if it did not hold, probe, and run again.
    plan = known or {"prefix": _full_prefix(), "root": True}
    level = {k: v for k, v in known.items() if k not in ("prefix", "root")}
    again = dict(interact=interact, followup=followup, rearm=rearm, lib_files=lib_files,
                 cpu_seconds=cpu_seconds, mem_bytes=mem_bytes, memory=memory, env_pass=env_pass,
                 ro_paths=ro_paths, no_site=no_site, launched=launched, gate=gate, env_set=env_set)
    work = new_work_dir(f"{GRADER_NAME}-")
    t0 = time.monotonic()
    try:
        sub = os.path.join(work, "submission")
        try:
            _copy_submission(submission_dir, sub, limits["copy_cap_bytes"])
        except OSError as exc:
            return RunOutcome("error", [], f"could not copy submission: {exc}", 0.0, None, "", "",
                              sandbox=level)
        driver_dir = os.path.join(work, "driver")
        home = os.path.join(work, "home")
        os.mkdir(driver_dir)
        os.mkdir(home)
        os.mkdir(os.path.join(work, "root"))
        lib = os.path.join(driver_dir, "lib")
        for rel, text in (lib_files or {}).items():
            make_dirs_below(driver_dir, os.path.dirname(os.path.join(lib, rel)))
            with open(os.path.join(lib, rel), "w") as fh:
                fh.write(text)
        driver = os.path.join(driver_dir, "grader_driver.py")
        with open(driver, "w") as fh:
            fh.write(DRIVER_PROLOGUE + driver_body)
        token = secrets.token_hex(16)
        site_dirs = _site_dirs(no_site)      # plain: no .pth files to run (~25 ms saved)
        req = dict(request, token=token, submission_dir=sub, lib_dir=lib, scratch_dir=home,
                   runner={"reply_cap": limits["reply_cap_bytes"], "isolated": bool(plan["root"]),
                           "job_private": bool(JOB_AREAS["private"]), "job_tmpfs_bytes": _SHM_BYTES,
                           "job_ipc_net": bool(JOB_AREAS.get("ipc_net", True)),
                           "path": site_dirs or _grader_site_dirs(), "pth": site_dirs is None,
                           "prefix": [sys.prefix, sys.exec_prefix]})
        if gate is not None:
            req["gated"] = True
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home,
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        # BLAS threads pinned to 1 (CONVENTIONS): the verdict must not depend on the grading
        # machine's core count (a dense LAPACK solve's round-off depends on the thread count).
        env.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")})
        env.update(blas_kernel_env())
        env.update({str(k): str(v) for k, v in (env_set or {}).items()})
        for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV") + tuple(env_pass):
            if key in os.environ:
                env[key] = os.environ[key]
        cpu = cpu_seconds if cpu_seconds is not None else int(timeout) + int(limits["cpu_slack_s"])
        rlimits = [["RLIMIT_CPU", int(cpu)], ["RLIMIT_FSIZE", int(limits["fsize_bytes"])],
                   ["RLIMIT_CORE", 0]] + ([["RLIMIT_AS", mem]] if memory == "address" else [])
        import socket
        life, life_child = socket.socketpair()
        rfd, wfd = os.pipe()
        cfg = _launch_cfg(work, plan["root"], [sub, home],
                          [_python_exe(), "-I", "-S", "-B", driver, str(wfd)],
                          sub, rlimits,
                          life_child.fileno(), ro_paths, os.path.realpath(submission_dir))
        try:
            proc = subprocess.Popen(plan["prefix"] + [_python_exe(), "-I", "-S", "-B", "-c",
                                                          _SANDBOX_INIT, json.dumps(cfg)],
                                    cwd=sub, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(wfd, life_child.fileno()),
                                    start_new_session=True)
        except OSError as exc:
            for fd in (rfd, wfd):
                os.close(fd)
            life.close()
            life_child.close()
            if not known and _INTERRUPT["at"] is None:  # e.g. no unshare here: probe, run again
                sandbox_level()
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            return RunOutcome("error", [], f"could not start the child: {exc}", 0.0, None, "", "",
                              sandbox=level)
        os.close(wfd)
        life_child.close()
        if launched is not None:
            launched()
        import queue
        import select
        deadline = [time.monotonic() + timeout]
        out, err, failure = [], [], []
        lines = queue.Queue()          # what the grader writes to the child's input, in order
        lines.put(req)
        asks = queue.Queue()

        def write_lines():
            while True:
                obj = lines.get()
                if obj is None:
                    break
                try:
                    proc.stdin.write((json.dumps(obj) + "\n").encode())
                    proc.stdin.flush()
                except (OSError, ValueError):
                    break
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

        def answer_asks():
            while True:
                body = asks.get()
                if body is None:
                    break
                try:
                    reply = interact(body) if interact is not None else None
                except Exception as exc:          # the grader's own callback failed
                    failure.append(f"the grader's interact callback raised {exc!r}"[:300])
                    reply = None
                lines.put({"reply": reply, "job": body.get("job") if isinstance(body, dict) else None})

        reader = _ReplyReader(os.fdopen(rfd, "rb"), token, t0, deadline, rearm,
                              limits["reply_cap_bytes"], asks.put)
        reader.errors = failure        # a callback error ends the run as "error"
        if followup is not None:
            pending = [followup]

            def on_message(body):
                obj = pending[0](body) if pending else None
                if obj is not None:
                    pending.clear()
                    lines.put(obj)
            reader.on_message = on_message
        stopped = []                   # the gate said stop: no job ran
        if gate is not None:
            deadline[0] = float("inf")            # held at the gate: no deadline yet

            def open_gate():
                try:
                    word = gate()
                except Exception as exc:          # the grader's own callback failed
                    failure.append(f"the grader's gate callback raised {exc!r}"[:300])
                    word = False
                go = word is True or isinstance(word, dict)
                with reader.lock:      # the budget counts from the go (stop: the deadline is now)
                    deadline[0] = time.monotonic() + (timeout if go else 0.0)
                    if not go:
                        stopped.append(True)
                lines.put({"go": go, "request": word} if isinstance(word, dict) else {"go": go})
                if interact is None and followup is None:
                    lines.put(None)
            threading.Thread(target=open_gate, daemon=True).start()
        elif interact is None and followup is None:
            lines.put(None)            # nothing more will be said: the child's input ends
        cap = limits["output_cap_bytes"]
        threads = [threading.Thread(target=_drain, args=(proc.stdout, out, cap), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, cap), daemon=True),
                   threading.Thread(target=reader.run, daemon=True),
                   threading.Thread(target=write_lines, daemon=True),
                   threading.Thread(target=answer_asks, daemon=True)]
        for t in threads:
            t.start()
        timed_out, over_mem, next_rss = False, None, 0.0
        try:
            exited = os.pidfd_open(proc.pid)    # readable the moment the child exits (Linux >= 5.3)
        except (AttributeError, OSError):
            exited = None
        while True:
            with reader.lock:
                left = deadline[0] - time.monotonic()
            if left <= 0:
                timed_out = proc.poll() is None
                break
            if failure:
                break
            if memory == "resident" and time.monotonic() >= next_rss:
                next_rss = time.monotonic() + 0.1
                rss = _tree_rss(proc.pid)
                if rss > mem:
                    over_mem = rss
                    break
            if exited is not None:              # (Popen.wait(timeout) polls in growing sleeps)
                select.select([exited], [], [], min(left, 0.05))
                if proc.poll() is not None:
                    break
                continue
            try:
                proc.wait(timeout=min(left, 0.05))
                break
            except subprocess.TimeoutExpired:
                continue
        if exited is not None:
            os.close(exited)
        with reader.lock:          # nothing arriving after the deadline counts
            n_in_time = len(reader.messages)
            limit_s = deadline[0] - t0
        # the whole process group goes, whether or not the driver exited (and with unshare's
        # pid namespace every process of the run, daemons included, when its init dies)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=float(limits["term_grace_s"]))
                if sig == signal.SIGTERM:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                break
            except subprocess.TimeoutExpired:
                continue
        lines.put(None)
        asks.put(None)
        for t in threads[:3]:
            t.join(timeout=5)
        life.settimeout(0.5)
        told = b""
        try:
            while True:
                chunk = life.recv(65536)
                if not chunk:
                    break
                told += chunk
        except OSError:
            pass
        life.close()
        said, ready = "", None
        for said_line in told.decode("utf-8", "replace").splitlines():
            if said_line.startswith("ready "):
                try:
                    ready = json.loads(said_line[6:])
                except ValueError:
                    pass
            else:
                said = said_line.strip()
        wall = time.monotonic() - t0
        keep = n_in_time if timed_out else len(reader.messages)
        messages, times = reader.messages[:keep], reader.times[:keep]
        forged, garbage = reader.forged, list(reader.garbage)
        stdout = b"".join(out).decode("utf-8", "replace")
        stderr = b"".join(err).decode("utf-8", "replace")
        rc = proc.returncode
        if said.startswith("exit "):
            rc = int(said.split()[1])
        elif said.startswith("signal "):
            rc = -int(said.split()[1])
        if stopped:                    # (no probe, no second run: nothing was to run)
            return RunOutcome("error", [], "stopped at the gate: no job ran", wall, rc, stdout, stderr,
                              sandbox=level)
        if not known:
            full = _full_level(ready)
            if _INTERRUPT["at"] is not None:
                return RunOutcome("error", messages, "stopped: the grader was interrupted", wall, rc,
                                  stdout, stderr)
            if full is None or said.startswith("setup ") or (rc == 127 and not messages):
                sandbox_level()                       # the full sandbox did not hold: probe,
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            with _PROBE_LOCK:
                if not _SANDBOX:
                    _SANDBOX.update(full)
            level = {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}
        extra = dict(forged=forged, times=times, sandbox=level, garbage=garbage,
                     runtime=dict(reader.runtime or {}))
        if said.startswith("setup "):
            return RunOutcome("error", [], f"sandbox setup failed: {said[6:]}", wall, rc, stdout, stderr,
                              **extra)
        if failure:
            return RunOutcome("error", messages, failure[0], wall, rc, stdout, stderr, **extra)
        if over_mem is not None:
            return RunOutcome("crashed", messages,
                              f"exceeded {mem} bytes resident ({over_mem} measured)",
                              wall, rc, stdout, stderr, **extra)
        if timed_out:
            return RunOutcome("timeout", messages, f"killed at its {limit_s:.1f} s deadline (the budget)",
                              wall, rc, stdout, stderr, **extra)
        junk = (f" ({forged} unreadable line(s) on the reply channel; first: {garbage[0]})"
                if garbage else "")
        if rc != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit code {rc}"]
            return RunOutcome("crashed", messages, f"child exited with {rc}: {last[0][:200]}{junk}",
                              wall, rc, stdout, stderr, **extra)
        if not messages:
            return RunOutcome("no_reply", [], f"child sent no result{junk}", wall, rc, stdout, stderr,
                              **extra)
        return RunOutcome("ok", messages, "", wall, rc, stdout, stderr, **extra)
    finally:
        remove_work_dir(work)


