"""Red team round 11 on c1f9142 (ReplayAhead, graders/adi/early.py): the forked grader that
computes the step witness's trajectory replays while the run goes on.  Found: a tag written by
another job's child (which decode_jobs never reads: run_of_job) counted as an input that had
arrived, so a submission made the fork fire before the witness pair and anchors were in (no replay
came back: 0 of 5, the speed-up lost); a fork that failed (EAGAIN, ENOMEM) left the pipe's two
descriptors open for the rest of the process and printed a thread traceback; and close() could
signal the forked pid after the thread had reaped it (a pid the system may hand to another
process).  Each attack has its honest twin beside it."""
import os
import threading

import pytest

from test_adi_support import GOLD, grader


@pytest.fixture(scope="module")
def gold_run():
    """(grader, every authentic message of one gold run in order, the replays its fork sent)."""
    G = grader()
    seen = {}
    plain = G.ReplayAhead

    class Kept(plain):
        def collect(self, timeout=None):
            n = plain.collect(self, 60.0)   # (the fork runs at nice 10: on a loaded machine it took 3 s)
            seen.update(msgs=list(self._msgs), got=n)
            return n
    G.ReplayAhead = Kept
    try:
        report = G.grade(os.fspath(GOLD), budget=600.0, strict=False, no_exec=False)
    finally:
        G.ReplayAhead = plain
        G._REPLAYS.clear()
    assert report.checks and seen["got"] == 5, seen.get("got")
    return G, seen["msgs"]


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _forked(ahead, wait=30.0) -> None:
    """Until the thread has forked (or ended): collect() before that drops the replays."""
    import time
    end = time.monotonic() + wait
    while time.monotonic() < end and ahead._pid is None and not ahead._got and ahead._thread.is_alive():
        time.sleep(0.005)


def _replays_from(G, msgs) -> int:
    ahead = G.ReplayAhead()
    ahead.allow()
    for body in msgs:
        ahead.watch(body)
    _forked(ahead)
    n = ahead.collect(timeout=30.0)
    assert not ahead._thread.is_alive()
    return n


def test_tags_another_child_wrote_do_not_make_the_fork_fire_early(gold_run):
    """Attack: before any result, the first job's child writes "job" messages carrying every tag
    ReplayAhead waits for (decode_jobs rejects them: run_of_job); measured before the fix the fork
    fired on them at once and sent 0 replays of 5.  Now only a tag read from its own child counts:
    all 5 replays come back.  Honest twin: the same run's messages without the forged ones, 5."""
    G, msgs = gold_run
    need = G.ReplayAhead()._need
    forged = [{"kind": "job", "tag": t, "job": "audit:0.1", "status": "ok", "U": [[0.0]]} for t in sorted(need)
              if not G.run_of_job(t, "audit:0.1")]
    assert len(forged) == len(need)
    first = next(i for i, m in enumerate(msgs) if isinstance(m, dict) and m.get("kind") == "job")
    ahead = G.ReplayAhead()
    ahead.allow()
    for body in msgs[:first] + forged:
        ahead.watch(body)
    _forked(ahead, wait=2.0)            # (the real results come later: a run's jobs take seconds)
    early = ahead._pid is not None or bool(ahead._got)
    for body in msgs[first:]:
        ahead.watch(body)
    _forked(ahead)
    assert (early, ahead.collect(timeout=30.0)) == (False, 5)
    assert _replays_from(G, msgs) == 5                     # honest twin


def test_a_fork_that_fails_leaves_no_descriptor_and_no_thread_error(gold_run, monkeypatch):
    """Attack (the process table or memory full when the inputs are in): os.fork raises EAGAIN.
    Measured before the fix: the pipe's 2 descriptors left open, the thread ended by the exception
    (threading.excepthook: the grader prints a traceback).  Now: nothing kept, nothing left, no
    error; the check computes its own replays.  Honest twin: the same inputs with a working fork:
    5 replays, no descriptor left."""
    G, msgs = gold_run
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(repr(args.exc_value)))
    before = _fds()
    assert _replays_from(G, msgs) == 5                     # honest twin
    assert _fds() == before and errors == []

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")
    monkeypatch.setattr(G.os, "fork", no_fork)
    assert _replays_from(G, msgs) == 0
    assert _fds() == before, "the pipe of a failed fork was left open"
    assert errors == []


def test_close_never_signals_a_pid_already_reaped(gold_run, monkeypatch):
    """Attack on the order of reaping and killing: close() called the instant the thread has reaped
    the forked grader (the grading's end racing the replays' end).  Measured before the fix: close()
    sent SIGKILL to the reaped pid (the system may have given it to another process by then).  Now
    the pid is forgotten as it is reaped.  Honest twin: close() while the fork runs kills it."""
    G, msgs = gold_run
    real_wait, real_kill = os.waitpid, os.kill
    reaped, killed, box = set(), [], {}

    def waitpid(pid, options):
        got = real_wait(pid, options)
        if threading.current_thread() is box["ahead"]._thread and got[0] == pid:
            reaped.add(pid)
            box["ahead"].close()                # the race, made certain
        return got

    def kill(pid, sig):
        killed.append((pid, pid in reaped))
        return real_kill(pid, sig)
    monkeypatch.setattr(G.os, "waitpid", waitpid)
    monkeypatch.setattr(G.os, "kill", kill)
    box["ahead"] = ahead = G.ReplayAhead()
    ahead.allow()
    for body in msgs:
        ahead.watch(body)
    ahead._thread.join(30.0)
    assert reaped and not [k for k in killed if k[1]], killed
    # honest twin: closed while it runs (stopped before it could send), the fork is killed and reaped
    monkeypatch.setattr(G, "_replay_child", lambda *a: (__import__("time").sleep(30), os._exit(0)))
    killed.clear()
    box["ahead"] = ahead = G.ReplayAhead()
    ahead.allow()
    for body in msgs:
        ahead.watch(body)
    for _ in range(200):
        if ahead._pid is not None:
            break
        __import__("time").sleep(0.01)
    pid = ahead._pid
    assert pid is not None
    ahead.close()
    ahead._thread.join(10.0)
    assert not ahead._thread.is_alive() and (pid, False) in killed
    assert pid in reaped
