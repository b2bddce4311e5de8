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


def test_the_child_is_launched_before_the_grader_imports_numpy():
    """The request's draws (numpy) go with the gate's word: the launch waits for no import."""
    import json
    import subprocess
    import sys
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('G', {str(grader().__file__)!r})\n"
        "G = importlib.util.module_from_spec(spec); sys.modules['G'] = G; spec.loader.exec_module(G)\n"
        "seen = []\n"
        "popen = G.subprocess.Popen\n"
        "def spy(*a, **k):\n"
        "    seen.append('numpy' in sys.modules); return popen(*a, **k)\n"
        "G.subprocess.Popen = spy\n"
        f"sys.argv = ['grade_adi', {str(GOLD)!r}, '--quiet']\n"
        "try:\n    G.main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(seen))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen and seen[0] is False, out.stdout[-2000:] + out.stderr[-2000:]
