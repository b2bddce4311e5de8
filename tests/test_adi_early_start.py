"""The isolated child starts before the static checks and waits at a gate (issue 21's speed
work, run_isolated(gate=...), fork_jobs waits for the word): nothing of the submission runs
before the go, a stop ends the run with no job run (and no probe or second run), and the time
budget counts from the go, not from the launch."""
import time

from test_adi_support import GOLD, copy_gold, grade, grader, status

JOB = [{"tag": "bench:0", "h": 0.1, "problem": "benchmark"}]


def _run(gate, budget):
    G = grader()
    return G.run_isolated(str(GOLD), G.DRIVER_BODY, G.driver_request(JOB, 1), budget,
                          no_site=("numpy", "scipy"), gate=gate)


def _kinds(out):
    return [m.get("kind") for m in out.messages if isinstance(m, dict)]


def test_a_stopped_gate_runs_no_job():
    out = _run(lambda: False, 30.0)
    assert out.status == "error" and "stopped at the gate" in out.reason, out.reason
    assert out.messages == [] and out.runtime == {}        # not even the import check ran


def test_the_budget_counts_from_the_go():
    """Held at the gate longer than its budget, the run still has its whole budget after the go."""
    def late():
        time.sleep(4.0)
        return True
    out = _run(late, 3.0)
    assert out.status == "ok", out.reason
    assert "ready" in _kinds(out) and [m.get("tag") for m in out.messages
                                       if isinstance(m, dict) and m.get("kind") == "job"] == ["bench:0"]


def test_a_submission_the_static_checks_fail_is_not_run(tmp_path):
    """Its child was started (gated) and is ended at the gate: the report is the static one."""
    sub = copy_gold(tmp_path / "sub")
    (sub / "results.json").write_text('{"x": 1}')
    t0 = time.monotonic()
    rc, stdout, stderr, doc = grade(sub)
    assert doc["score"] == 0.0
    st = status(doc)
    assert st["provenance.exec"] == "SKIP" and not any(k.startswith(("witness.", "audit.", "hidden.error"))
                                                      for k in st)
    assert time.monotonic() - t0 < 30
