"""ADI EARLY RUN (a part of grade_adi.py; see CONTRIBUTING.md)."""
import os
import signal
import struct
import threading
import types
import warnings
from graders.adi.causal import keep_replay, replays_ahead
from graders.adi.reproducibility import (decode_jobs, driver_request, perturb_seed, plan_jobs, request_draws,
    run_of_job)
from graders.adi.spec import SPEC
from graders.adi.structure import DRIVER_BODY
from graders.common.runner import run_isolated
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# EARLY RUN: the isolated child started before the static checks, held at its gate
# =============================================================================
def keep_heap() -> None:
    """glibc's malloc returns freed memory above 128 KiB to the system at once (mmap/trim), so
    every 159 x 159 array of the step witness's replay (200 KB, ~10 per step) comes back as fresh
    zeroed pages: measured, the finest mesh's replay took 0.39 s of CPU this way and 0.19 s with the
    heap kept (mallopt M_TRIM_THRESHOLD / M_MMAP_THRESHOLD raised).  Only the grader's own process
    (a child started by exec does not inherit it); a no-op where the C library has no mallopt."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(-1, 256 << 20)          # M_TRIM_THRESHOLD: free memory kept up to 256 MiB
    mallopt(-3, 16 << 20)           # M_MMAP_THRESHOLD: blocks below 16 MiB from the heap


# glibc's malloc in the child kept from handing every freed 161 x 161 array back to the system
# (what keep_heap does in the grader): the solver's own steps allocate a few such arrays each, and
# with the defaults each comes back as fresh zeroed pages (measured: the gold's finest run ~15 %
# less CPU).  No result changes; other C libraries ignore the variables.  Blocks from 256 KiB up
# (a 161 x 161 array is 203 KiB) are still mapped on their own and unmapped when freed, and at most
# 64 MiB of free heap top is kept (glibc's own dynamic maximum): with a 16 MiB mapping threshold and
# 256 MiB kept, an honest solver's dropped 8 MiB temporaries stayed a hole in the heap below a small
# array it kept, and its later workspace, within the address-space limit under the defaults, raised
# MemoryError (red team round 7, tests/test_adi_red_round7.py).
CHILD_MALLOC = {"MALLOC_TRIM_THRESHOLD_": str(64 << 20), "MALLOC_MMAP_THRESHOLD_": str(256 << 10)}


class EarlyRun:
    """The isolated run, started before the static checks and held at its gate: the child's
    start-up (sandbox, interpreter, numpy/scipy and the recorder's set-up, a few tenths of a
    second) overlaps the grader's static checks; no job (nothing of the submission) runs before
    go(), and stop() ends it when the static checks already score 0.0.  The request does not
    depend on the static checks (a fresh plan, seed and draws, as before)."""

    def __init__(self, submission: str, budget: float, watch=None):
        self.launched = threading.Event()
        self._said, self._word, self._box = threading.Event(), [False], {}
        request = driver_request(plan_jobs(), perturb_seed(), draws=False)    # (no numpy needed yet)
        self._late = {}

        def run():
            try:
                self._box["outcome"] = run_isolated(submission, DRIVER_BODY, request, budget,
                                                    no_site=("numpy", "scipy"), launched=self.launched.set,
                                                    gate=self._gate, env_set=CHILD_MALLOC, rearm=watch)
            except BaseException as exc:     # surfaces in go() as a grader failure
                self._box["error"] = exc
            finally:
                self.launched.set()
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self.launched.wait(SPEC["launch_wait_s"])    # the launch first (the interpreter lock)

    def _gate(self):
        self._said.wait()
        return dict(self._late) if self._word[0] else False

    def go(self):
        """Let the jobs run (the draws go with the word); the run's outcome (raises what the
        runner raised)."""
        self._late.update(request_draws())
        self._word[0] = True
        self._said.set()
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        return self._box["outcome"]

    def stop(self) -> None:
        """No job runs; the child is ended and its folder removed."""
        if not self._said.is_set():
            self._said.set()
        self._thread.join()


# How long the checks after the run wait for the forked replays: on a quiet machine they are done
# before the run ends (~0.25 s of CPU on the gold, the finest mesh's 0.2 s first); one still running
# this long after the run (starved at nice 10 on a loaded machine, or stuck) is killed, and the check
# computes the replays that had not arrived itself, as it did before ReplayAhead (at most this much
# later than without it).
REPLAY_WAIT_S = 0.5


class ReplayAhead:
    """The step witness's trajectory replays (benchmark_step_check: 0.26 s of the grader's CPU after
    the run, 0.2 s of it the finest mesh's 157 steps) computed while the run's last jobs go on.  They
    read only the hidden-family witness pair and each mesh's anchor runs (T = a h, (a + 1) h), which
    the plan runs before the fine meshes' long runs end (plan_jobs); once those results have arrived
    (watch: the runner's authentic messages) and the grader's own reference is computed (allow), a
    forked copy of the grader decodes them as decode_jobs does and runs replays_ahead at nice 10,
    sending back each replay under the digest of its inputs as soon as it is computed.
    collect() puts them in causal._REPLAYS: the check after the run reads one back only for inputs
    identical bit for bit (any other theta, scheme or field is computed then).  Nothing is decided
    here.  The forked process runs only the grader's code; it dies with its thread (PDEATHSIG), and
    close() kills it."""

    def __init__(self):
        h0 = max(SPEC["witness_h"])
        self._need = {f"witness:{h0:g}", f"hidden:{h0:g}"} | {f"{t}:{p}" for p in SPEC["fine"]
                                                               for t in ("bench-t1", "bench-t2")}
        self._msgs, self._have, self._cv = [], set(), threading.Condition()
        self._closed, self._pid, self._got = False, None, []
        self._thread = threading.Thread(target=self._run, daemon=True)     # (started by allow())

    def watch(self, body):
        """Each authentic message of the run (the runner's reader thread): kept; never raises;
        returns None (as rearm: the deadline is not moved)."""
        try:
            with self._cv:
                self._msgs.append(body)
                if isinstance(body, dict) and body.get("kind") == "job" and body.get("tag") in self._need \
                        and run_of_job(body["tag"], body.get("job")):  # (a tag another job's child wrote
                    # is no result decode_jobs reads: it made the fork fire before the inputs were in)
                    self._have.add(body["tag"])
                    if self._have == self._need:
                        self._cv.notify()
        except Exception:
            pass
        return None

    def allow(self) -> None:
        """The grader's other threads hold no lock the fork would copy (the reference is computed):
        the thread that forks once the inputs are in starts (nothing runs before this call)."""
        with self._cv:
            if not self._closed and self._thread.ident is None:
                self._thread.start()

    def close(self) -> None:
        """No replay is wanted any more: the forked process (if any) is killed, the thread ends."""
        with self._cv:                  # (under the lock: the thread reaps and forgets the pid under
            self._closed = True         # it, so a pid signalled here is never one already reaped)
            self._cv.notify()
            if self._pid is not None:
                try:
                    os.kill(self._pid, 9)
                except OSError:
                    pass

    def collect(self, timeout: float = None) -> int:
        """Wait for the replays under way (at most `timeout` s, REPLAY_WAIT_S by default; then the
        forked grader is killed), keep those that arrived whole in causal._REPLAYS; how many."""
        timeout = REPLAY_WAIT_S if timeout is None else timeout
        with self._cv:
            fired = self._pid is not None or self._got
            started = self._thread.ident is not None
        if fired:
            self._thread.join(timeout)
        self.close()
        if started:
            self._thread.join()
        for key, Z in self._got:
            keep_replay(key, Z)
        return len(self._got)

    def _run(self):
        try:
            self._fork_and_read()
        except Exception:               # (no fork, no pipe: only a memo; the check computes its own)
            pass

    def _fork_and_read(self):
        with self._cv:
            while not self._closed and self._have != self._need:
                self._cv.wait()
            if self._closed:
                return
            msgs, parent = list(self._msgs), os.getpid()
            r, w = os.pipe()
            held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)    # (until the fork has
            try:                                                            # its own handlers)
                with warnings.catch_warnings():     # (Python 3.12+ warns of any fork beside threads:
                    warnings.simplefilter("ignore", DeprecationWarning)     # the forked grader takes
                    pid = os.fork()                 # no lock another thread could hold, _replay_child)
            except BaseException:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                os.close(r)
                os.close(w)
                raise
            if pid == 0:                # (the forked grader, signals still blocked: never returns)
                _replay_child(msgs, r, w, parent)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            self._pid = pid
        os.close(w)
        data = b""
        try:
            while True:             # each replay kept as soon as it is whole (the finest first)
                chunk = os.read(r, 1 << 20)
                if not chunk:
                    break
                got, used = _decode_replays(data + chunk)
                data = (data + chunk)[used:]
                with self._cv:
                    self._got += got
        finally:
            os.close(r)
            try:                        # (exited, not reaped: close() may still signal the pid, which
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)     # no other process can have yet)
            except ChildProcessError:
                pass
            with self._cv:              # reaped and forgotten at once: close() never signals a pid
                self._pid = None        # the system may have given another process (red team round 11)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass


_REPLAY_HEAD = struct.Struct("<32sqq")
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _replay_child(msgs, r, w, parent=None):
    """The forked grader's work: replays_ahead over the results so far, each sent as its digest,
    shape and float64 bytes on w; then os._exit (no handler, finaliser or buffer of the grader
    runs here).  Every other descriptor is closed first: the run's pipes must see their ends when
    the grader closes its own.  A grader that died before PR_SET_PDEATHSIG was set (it fires only
    for a death after the call) is seen by the parent id: this process ends at once."""
    try:
        import ctypes
        import gc
        import sys
        import warnings
        import numpy as np
        for sig in _STOP_SIGNALS:       # the grader's interrupt handlers are not this process's:
            signal.signal(sig, signal.SIG_DFL)      # a stop ends it (blocked since the fork)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        gc.disable()                    # (no finaliser of the grader's objects runs here)
        try:
            ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)      # PR_SET_PDEATHSIG, SIGKILL: dies with its thread
        except (OSError, AttributeError):
            pass
        if parent is not None and os.getppid() != parent:   # (died in between: reparented)
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, w)
        os.closerange(w + 1, 1 << 16)
        sys.stdout = sys.stderr = open(1, "w", closefd=False)   # (a lock another thread held at the
        # fork stays held in the copies of the grader's own streams)
        warnings.simplefilter("ignore")
        os.nice(10)                     # the jobs first: this fills the cores they leave idle
        jobs = decode_jobs(types.SimpleNamespace(messages=msgs))[1]
        for key, Z in replays_ahead(jobs):      # (each sent as soon as it is computed)
            Z = np.ascontiguousarray(Z, dtype="<f8")
            if Z.ndim == 2:
                os.write(w, _REPLAY_HEAD.pack(key, *Z.shape))
                view = memoryview(Z.tobytes())
                while view:
                    view = view[os.write(w, view):]
    except BaseException:
        pass
    os._exit(0)


def _decode_replays(data: bytes) -> tuple:
    """([(key, field)], bytes used) of the whole entries at the start of what the forked grader sent
    (a cut entry waits for the rest; one that cannot be read ends the reading: nothing after it)."""
    import numpy as np
    out, i = [], 0
    while len(data) - i >= _REPLAY_HEAD.size:
        key, n0, n1 = _REPLAY_HEAD.unpack_from(data, i)
        if not (0 <= n0 <= 1 << 14 and 0 <= n1 <= 1 << 14):
            return out, len(data)
        size = 8 * n0 * n1
        if len(data) - i - _REPLAY_HEAD.size < size:
            break
        i += _REPLAY_HEAD.size
        out.append((key, np.frombuffer(data[i:i + size], dtype="<f8").reshape(n0, n1)))
        i += size
    return out, i
