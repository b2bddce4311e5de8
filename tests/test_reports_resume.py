"""Runs that survive interruption: SciCode interrupted (SIGINT) after some steps keeps them in
--out DIR, and the rerun grades only the rest with the same totals as an uninterrupted run;
modchallenge's --seeds the same; Ctrl-C is exit 130, no traceback, children gone."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REFERENCE, REPO, run_grader, verdict_lines
from test_reports_support import call_main, read_docs

SLOW_STEP = "901.1"        # run last (a problem's last step and later steps go first): 1 s a case


def default_sigint():
    """As at a terminal: the test runner may have been started with SIGINT ignored, which a
    child would inherit (Python keeps an inherited SIG_IGN)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def scicode(tmp_path_factory):
    sys.path.insert(0, str(REFERENCE / "scicode"))
    import scicode_synthetic
    tmp = tmp_path_factory.mktemp("resume")
    files = scicode_synthetic.write_all(str(tmp / "synthetic"))
    gens = tmp / "gens"
    shutil.copytree(files["correct"], gens)
    (gens / f"{SLOW_STEP}.txt").write_text("```python\nimport numpy as np\n\n"
                                           "def scale(x, k):\n    import time\n    time.sleep(1)\n"
                                           "    return np.asarray(x) * k\n```\n")
    args = [gens, "--problems", files["problems_test.jsonl"], files["problems_dev.jsonl"],
            "--h5", files["targets.h5"], "--special-steps", files["special"], "--jobs", "1"]
    return [str(a) for a in args]


def descendants(pid: int) -> set:
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def interrupt_when(cmd, ready, timeout=120) -> tuple:
    """Start cmd, send SIGINT once ready() holds; (exit code, stderr, its children at that moment)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    kids = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, kids


def test_scicode_interrupted_then_resumed_grades_only_the_rest(scicode, tmp_path):
    grader = str(REPO / "grade_scicode.py")
    rc, full_out, _, full = run_grader(grader, *scicode, "--out", tmp_path / "full",
                                       "--json", tmp_path / "full.json")
    assert rc == 0 and full["keys"]["steps_in_scope"] == 6
    kept = tmp_path / "run" / "resume"
    rc, out, err, kids = interrupt_when(
        [sys.executable, grader, *scicode, "--out", str(tmp_path / "run")],
        lambda: kept.is_dir() and len(list(kept.glob("*.json"))) >= 3)
    done = len(list(kept.glob("*.json")))
    assert rc == 130 and "Traceback" not in err and "interrupted" in err and 3 <= done < 6
    assert "RESULT:" not in out and kids and not any(alive(p) for p in kids)
    rc, out, err, doc = run_grader(grader, *scicode, "--out", tmp_path / "run", "--json", tmp_path / "r.json")
    assert f"resume: {done} of 6 step(s) already graded" in err
    assert f"steps {6 - done}/{6 - done}" in err                       # only the rest ran
    reuse = next(c for c in doc["checks"] if c["id"] == "run.resume")
    assert (reuse["measured"], reuse["limit"]) == (done, 6)
    assert doc["keys"] == full["keys"] and doc["score"] == full["score"] == 1.0
    same = {c["id"]: c["status"] for c in doc["checks"] if c["id"] != "run.resume"}
    assert same == {c["id"]: c["status"] for c in full["checks"] if c["id"] != "run.resume"}
    assert verdict_lines(out)["steps_passed"] == verdict_lines(full_out)["steps_passed"] == "6/6"
    rc, out, err, doc = run_grader(grader, *scicode, "--out", tmp_path / "run", "--dry-run",
                                   "--json", tmp_path / "d.json")
    assert "resume: 0 of 6" in err and doc["keys"]["mode"] == "DRY_RUN"   # other inputs: not reused


def test_modchallenge_seeds_resume(tmp_path, capsys, monkeypatch):
    """In process, every seed graded on the public seed's small set (test generation is the
    slow part and is not what resume is about)."""
    from test_modchallenge_support import grader, small_test_dir
    G = grader()
    cases = G.read_test_set(small_test_dir())
    monkeypatch.setattr(G, "generate_test_set", lambda seed, total, jobs: cases)
    sub = REFERENCE / "modchallenge" / "submissions" / "zero_baseline"
    args = [sub, "--seeds", "public,11", "--total", "110", "--out", tmp_path / "o"]
    rc, out, err = call_main(G, args + ["--json", tmp_path / "a.json"], capsys)
    assert "resume: 0 of 2" in err and rc == 1
    rc, out, err = call_main(G, args + ["--json", tmp_path / "k.json"], capsys)
    assert "resume: 1 of 1 submission(s) reused" in err and "model_load" not in err  # the report kept
    assert read_docs(tmp_path / "k.json") == read_docs(tmp_path / "a.json") and rc == 1
    shutil.rmtree(tmp_path / "o" / "reports")           # without it, each seed still resumes
    rc, out, err = call_main(G, args + ["--json", tmp_path / "b.json"], capsys)
    assert "resume: 2 of 2 seed(s) reused" in err and "model_load" not in err
    first, again = read_docs(tmp_path / "a.json")[0], read_docs(tmp_path / "b.json")[0]
    assert again["keys"] == first["keys"] and again["score"] == first["score"]
    assert [c for c in again["checks"] if c["id"] != "run.resume"] == \
        [c for c in first["checks"] if c["id"] != "run.resume"]
    assert again["phases"]["seed1.total"] < 1.0          # nothing re-run


def test_ctrl_c_is_exit_130_children_gone_no_traceback(tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(REFERENCE / "fem" / "gold", sub)
    (sub / "fem_solver.py").write_text("import time\n\n\ndef solve(n):\n    while True:\n        time.sleep(1)\n")
    cmd = [sys.executable, str(REPO / "grade_fem.py"), str(sub), "--json", str(tmp_path / "r.json")]
    holder = {}

    def running():
        kids = descendants(holder["pid"]) if "pid" in holder else set()
        return any("grader_driver" in open(f"/proc/{p}/cmdline", "rb").read().decode("utf-8", "replace")
                   for p in kids if os.path.exists(f"/proc/{p}/cmdline"))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    holder["pid"] = proc.pid
    deadline = time.monotonic() + 60
    while not running() and time.monotonic() < deadline:
        time.sleep(0.05)
    kids = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "RESULT" not in out, (out, err)
    assert kids and not any(alive(p) for p in kids)
    assert not (tmp_path / "r.json").exists()
