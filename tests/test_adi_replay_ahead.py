"""The step witness's trajectory replays computed while the isolated run goes on (ReplayAhead,
graders/adi/early.py; causal._REPLAYS): a forked copy of the grader replays each mesh's trajectory
from the witness pair and the anchor runs alone; the check after the run reads a replay back only
for inputs that are bit for bit the same, and writes the record it writes with nothing computed
ahead.  Also: the forked process never outlives the grading, and the plan runs the fine meshes'
anchor runs before the last long run ends."""
import os
import time

import numpy as np
import pytest

from test_adi_benchmark_step import step_jobs
from test_adi_support import GOLD, grader

PINNED = {"scheme": "MCS", "theta": 1 / 3}


def _gold_solve():
    import importlib.util
    spec = importlib.util.spec_from_file_location("adi_gold_replay_ahead", GOLD / "adi_solver.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.solve


def _inputs(G, jobs, p=1):
    ops, k = G._step_operators(p)
    a = G.SPEC["bench_step_anchor"]
    Ua, Ua1, UN1 = (G._interior(jobs[f"{t}:{p}"]) for t in ("bench-t1", "bench-t2", "bench-1"))
    return ops, k, Ua, Ua1, UN1, G.mesh_m(G.h_value(p)) - 2 - a


def test_a_replay_is_read_back_only_for_the_same_inputs():
    """Attack on the memo: a field planted under the digest of some inputs is read back for exactly
    those inputs; theta one ulp away, one anchor entry one ulp away, another scheme or step count
    each miss it and are computed (equal to the plain replay).  Honest twin: a Fortran-ordered
    copy of the same values is the same input."""
    G = grader()
    jobs = step_jobs(_gold_solve(), (1,))
    ops, k, Ua, Ua1, UN1, steps = _inputs(G, jobs)
    theta = 1 / 3
    key = G.replay_key("MCS", theta, ops, k, Ua, Ua1, steps)
    G._REPLAYS.clear()
    G.keep_replay(key, np.full(Ua.shape, 7.0))                  # planted
    try:
        assert G._trajectory_mismatch("MCS", theta, ops, k, Ua, Ua1, UN1, steps) == \
            float(np.max(np.abs(7.0 - UN1)))
        Ua1b = Ua1.copy()
        Ua1b[3, 4] = np.nextafter(Ua1b[3, 4], np.inf)
        for scheme, th, ua1, st in [("MCS", np.nextafter(theta, 1.0), Ua1, steps), ("MCS", theta, Ua1b, steps),
                                    ("HV", theta, Ua1, steps), ("MCS", theta, Ua1, steps - 1)]:
            got = G.trajectory_replay(scheme, th, ops, k, Ua, ua1, st)
            assert not np.all(got == 7.0)
            assert np.array_equal(got, G._replay(scheme, th, ops, k, Ua, ua1, st))
        assert G.replay_key("MCS", theta, ops, k, np.asfortranarray(Ua), Ua1, steps) == key
    finally:
        G._REPLAYS.clear()
    # with nothing planted: the plain replay's value
    assert G._trajectory_mismatch("MCS", theta, ops, k, Ua, Ua1, UN1, steps) == \
        float(np.max(np.abs(G._replay("MCS", theta, ops, k, Ua, Ua1, steps) - UN1)))
    # a kept field cannot be changed in place by whoever reads it
    Z = G.trajectory_replay("MCS", theta, ops, k, Ua, Ua1, steps)
    with pytest.raises(ValueError):
        Z[0, 0] = 1.0
    G._REPLAYS.clear()


def test_the_record_is_the_same_with_replays_kept_from_before():
    """benchmark_step_check after other schemes' and thetas' replays were kept (a stale memo) writes
    the record it writes on an empty one."""
    G = grader()
    jobs = step_jobs(_gold_solve(), (0, 1))
    G._REPLAYS.clear()
    fresh = G.benchmark_step_check(jobs, PINNED, 1 / 3)[0]
    G._REPLAYS.clear()
    G.benchmark_step_check(jobs, {"scheme": "HV", "theta": 0.5 + 1e-12}, 0.5)
    G.benchmark_step_check(jobs, PINNED, 1 / 3)
    again = G.benchmark_step_check(jobs, PINNED, 1 / 3)[0]
    G._REPLAYS.clear()
    assert (again.id, again.status, again.message, again.measured) == \
        (fresh.id, fresh.status, fresh.message, fresh.measured)
    assert fresh.status is G.Status.PASS, fresh.message


def test_the_trajectory_keeps_the_witness_theta_when_the_step_already_matches():
    """The trajectory is replayed at exactly the pinned theta when the last step matches there to the
    limit (what ReplayAhead computed ahead), while the step's own residual is still the Gauss-Newton
    polished one (the record unchanged); a theta off by more than the limit allows is moved and
    judged, and its trajectory (if any) is replayed at the moved theta."""
    G = grader()
    jobs = step_jobs(_gold_solve(), (1,))
    ops, k, Ua, Ua1, UN1, steps = _inputs(G, jobs)
    G._REPLAYS.clear()
    rec = G.benchmark_step_check(jobs, PINNED, 1 / 3)[0]
    assert rec.status is G.Status.PASS and rec.measured < 1e-4 * rec.limit, rec.message
    assert set(G._REPLAYS) == {G.replay_key("MCS", 1 / 3, ops, k, Ua, Ua1, steps)}   # the pinned theta
    G._REPLAYS.clear()
    off = 1 / 3 * (1 + 1e-3)                                               # far outside: moved, judged
    rec = G.benchmark_step_check(jobs, {"scheme": "MCS", "theta": off}, off)[0]
    assert rec.status is not G.Status.PASS
    assert G.replay_key("MCS", off, ops, k, Ua, Ua1, steps) not in G._REPLAYS
    G._REPLAYS.clear()


def test_replays_ahead_are_the_checks_own_replays():
    """replays_ahead on the results a run has sent so far (the witness pair, the anchors; no T = 1 or
    (N - 1)h run) gives, bit for bit, the fields the check computes after the run; and nothing when
    the witness pins no scheme (another problem's fields in the witness run)."""
    G = grader()
    jobs = step_jobs(_gold_solve(), (0, 1))
    solve = _gold_solve()
    G.request_draws()
    for h in G.SPEC["witness_h"][:1]:
        for tag, prob in ((f"witness:{h:g}", G._PROBLEMS["hidden_problem"](G.witness_draw())),
                          (f"hidden:{h:g}", G._PROBLEMS["hidden_problem"](G.hidden_draw()))):
            X, Y, U = solve(h, G._PROBLEMS["HIDDEN_T"], prob)
            jobs[tag] = {"status": "ok", "U": np.asarray(U, dtype=float), "error": "", "log": {}}
    partial = {t: r for t, r in jobs.items() if not t.startswith(("bench:", "bench-1:"))}
    G._REPLAYS.clear()
    ahead = list(G.replays_ahead(partial))
    assert len(ahead) == 2
    G._REPLAYS.clear()
    found = {}
    G.witness_check(jobs, None, meshes=G.SPEC["witness_h"][:1], found=found)
    assert found.get("scheme") == "MCS"
    G.benchmark_step_check(jobs, found, None)
    for key, Z in ahead:
        assert key in G._REPLAYS and np.array_equal(G._REPLAYS[key], Z)
    G._REPLAYS.clear()
    swapped = dict(partial)
    h0 = G.SPEC["witness_h"][0]
    hid = jobs[f"hidden:{h0:g}"]
    swapped[f"witness:{h0:g}"] = dict(hid, U=hid["U"] * 1.001)       # not the solver's map of the gap
    assert list(G.replays_ahead(swapped)) == []
    G._REPLAYS.clear()


def test_what_the_forked_grader_sends_is_read_only_whole():
    """_decode_replays: whole entries only, the bytes they used; a cut entry waits for the rest; an
    entry with an impossible shape ends the reading."""
    G = grader()
    Z = np.arange(12.0).reshape(3, 4)
    one = G._REPLAY_HEAD.pack(b"k" * 32, 3, 4) + Z.astype("<f8").tobytes()
    got, used = G._decode_replays(one + one)
    assert used == 2 * len(one) and len(got) == 2
    assert all(k == b"k" * 32 and np.array_equal(v, Z) for k, v in got)
    got, used = G._decode_replays(one + one[:-1])
    assert len(got) == 1 and used == len(one)
    assert G._decode_replays(one[:10]) == ([], 0)
    bad = G._REPLAY_HEAD.pack(b"k" * 32, -3, 4)
    got, used = G._decode_replays(one + bad + one)
    assert len(got) == 1 and used == len(one + bad + one)
    assert G._decode_replays(b"") == ([], 0)


def _children() -> set:
    kids = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as fh:
                kids.update(int(p) for p in fh.read().split())
        except OSError:
            pass
    return kids


def test_gold_grading_reads_the_replays_made_during_the_run():
    """On the gold every trajectory replay of the five meshes comes from the forked grader (none is
    computed by the checks after the run), the step witness passes with the record a fresh
    computation writes, and no process of it is left."""
    G = grader()
    G._REPLAYS.clear()
    before = _children()
    calls = []
    plain = G._replay

    def counted(*args):
        calls.append(args[-1])
        return plain(*args)
    keep = {}
    check = G.benchmark_step_check

    def kept(jobs, found, theta):
        keep.update(jobs=jobs, found=dict(found), theta=theta)
        return check(jobs, found, theta)
    G._replay, G.benchmark_step_check = counted, kept
    wait, G.REPLAY_WAIT_S = G.REPLAY_WAIT_S, 300.0     # (what is shown is where the replays come from,
    try:                                                # not how soon: a loaded machine starves nice 10)
        report = G.grade(os.fspath(GOLD), budget=600.0, strict=False, no_exec=False)
    finally:
        G._replay, G.benchmark_step_check, G.REPLAY_WAIT_S = plain, check, wait
    rec = [c for c in report.checks if c.id == "witness.benchmark_step"][0]
    assert rec.status is G.Status.PASS, rec.message
    assert calls == [], calls               # (the forked process's calls are not counted here)
    assert len(G._REPLAYS) == 5
    G._REPLAYS.clear()
    fresh = check(keep["jobs"], keep["found"], keep["theta"])[0]
    assert (fresh.status, fresh.message, fresh.measured) == (rec.status, rec.message, rec.measured)
    G._REPLAYS.clear()
    deadline = time.monotonic() + 5
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children() - before


def test_closed_before_its_inputs_arrive_it_never_forks():
    """A grading that ends before the anchors arrive (static FAIL, --no-exec, a run cut short):
    close() ends the thread; nothing was forked, nothing is kept."""
    G = grader()
    before = _children()
    ahead = G.ReplayAhead()
    ahead.allow()
    ahead.watch({"kind": "job", "tag": "witness:0.1"})
    assert ahead.collect(timeout=1.0) == 0
    assert not ahead._thread.is_alive()
    assert not _children() - before
    idle = G.ReplayAhead()                  # never allowed (a static FAIL, --no-exec): no thread at all
    idle.watch({"kind": "job", "tag": "witness:0.1"})
    idle.close()
    assert idle._thread.ident is None and idle.collect() == 0


def test_the_fine_anchors_run_before_the_last_long_run_ends():
    """plan_jobs: the finest mesh's T = 1 run first, the coarse jobs, then the finest mesh's run to
    (N - 1)h, then the fine meshes' anchor runs (what ReplayAhead waits for), then the rest: no
    fine run starts before every coarse job has."""
    G = grader()
    tags = [j["tag"] for j in G.plan_jobs()]
    fine = [str(p) for p in G.SPEC["fine"]]
    assert tags[0] == f"bench:{fine[-1]}"
    i = tags.index(f"bench-1:{fine[-1]}")
    assert not [t for t in tags[1:i] if t.split(":")[1] in fine]        # the coarse jobs, all before it
    assert set(tags[i + 1:i + 1 + len(fine)]) == {f"bench-t1:{p}" for p in fine}
    assert {f"bench-t2:{p}" for p in fine} <= set(G.job_tags(G.plan_jobs()))     # (in the same children)


def test_a_trajectory_missed_at_the_witness_theta_is_judged_at_the_polished_one():
    """Honest twin of the change: CS theta = 1/3 grows without bound, so on h = 0.0125 its trajectory
    replayed at theta as recorded (11 digits) misses by more than at the theta polished for the last
    step.  With the limit set between the two, the step witness still passes (the polished replay
    judges, as before ReplayAhead); below both it does not."""
    G = grader()
    from test_adi_support import survey
    row = {r[0]: r for r in survey().ROWS}["CS θ=1/3"]
    theta = float(f"{row[2]:.10e}")
    mod = survey().load_variant(row[1], row[2], row[3])
    jobs = step_jobs(mod.solve, (3,))
    ops, k, Ua, Ua1, UN1, steps = _inputs(G, jobs, p=3)
    scale = float(np.max(np.abs(G._interior(jobs["bench:3"]))))
    G._REPLAYS.clear()
    at_named = G._trajectory_mismatch("CS", theta, ops, k, Ua, Ua1, UN1, steps) / scale
    limit = G.SPEC["bench_traj_rtol"]
    try:
        G.SPEC["bench_traj_rtol"] = 0.0                 # below both: judged, not a PASS
        rec = G.benchmark_step_check(jobs, {"scheme": "CS", "theta": theta}, theta)[0]
        assert rec.status is G.Status.FAIL, rec.message
        polished = rec.measured                         # the trail at the polished theta
        assert polished < 0.5 * at_named, (polished, at_named)
        G.SPEC["bench_traj_rtol"] = (polished * at_named) ** 0.5
        rec = G.benchmark_step_check(jobs, {"scheme": "CS", "theta": theta}, theta)[0]
        assert rec.status is G.Status.PASS, rec.message
    finally:
        G.SPEC["bench_traj_rtol"] = limit
        G._REPLAYS.clear()


def test_a_forked_replay_that_does_not_finish_is_killed_and_the_check_computes_its_own():
    """A forked grader still running REPLAY_WAIT_S after the run (here: stuck for an hour) is killed; the
    check computes every replay itself and writes the same PASS; nothing is left running, and the
    grading does not wait for it."""
    G = grader()
    G._REPLAYS.clear()
    before = _children()
    calls = []
    plain, stuck, wait = G._replay, G.replays_ahead, G.REPLAY_WAIT_S

    def counted(*args):
        calls.append(args[-1])
        return plain(*args)

    def hangs(jobs):
        time.sleep(3600)
        return []
    G._replay, G.replays_ahead, G.REPLAY_WAIT_S = counted, hangs, 0.5
    t0 = time.monotonic()
    try:
        report = G.grade(os.fspath(GOLD), budget=600.0, strict=False, no_exec=False)
    finally:
        G._replay, G.replays_ahead, G.REPLAY_WAIT_S = plain, stuck, wait
    assert time.monotonic() - t0 < 120             # (a gold grading under the suite's load: < 60 s)
    rec = [c for c in report.checks if c.id == "witness.benchmark_step"][0]
    assert rec.status is G.Status.PASS, rec.message
    assert sorted(calls) == sorted(G.mesh_m(G.h_value(p)) - 2 - G.SPEC["bench_step_anchor"] for p in range(5))
    G._REPLAYS.clear()
    deadline = time.monotonic() + 5
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children() - before
