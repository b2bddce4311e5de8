"""Runs that survive interruption: SciCode interrupted (SIGINT) after some steps keeps them in
--out DIR, and the rerun grades only the rest with the same totals as an uninterrupted run;
modchallenge's --seeds the same; Ctrl-C is exit 130, no traceback, children gone."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REFERENCE, REPO, run_grader, verdict_lines
from test_reports_support import call_main, grader, read_docs

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


def interrupt_when(cmd, ready, timeout=120, env=None) -> tuple:
    """Start cmd, send SIGINT once ready() holds; (exit code, stderr, its children at that moment)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint, env=env)
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
    (tmp_path / "tmp").mkdir()
    rc, out, err, kids = interrupt_when(
        [sys.executable, grader, *scicode, "--out", str(tmp_path / "run")],
        lambda: kept.is_dir() and len(list(kept.glob("*.json"))) >= 3,
        env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")))
    done = len(list(kept.glob("*.json")))
    assert rc == 130 and "Traceback" not in err and "interrupted" in err and 3 <= done < 6
    assert "RESULT:" not in out and kids and not any(alive(p) for p in kids)
    assert not list((tmp_path / "tmp").iterdir())     # the workers' folder removed too
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
    rc, out, err, _ = run_grader(grader, *scicode, "--out", tmp_path / "full")
    assert rc == 0 and "resume: 1 of 1 submission(s) reused" in err and "steps_passed: 6/6" in out


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
    assert G.report_error(first) is None and G.report_error(again) is None   # two seeds re-judged
    assert again["keys"] == first["keys"] and again["score"] == first["score"]
    assert [c for c in again["checks"] if c["id"] != "run.resume"] == \
        [c for c in first["checks"] if c["id"] != "run.resume"]
    assert again["phases"]["seed1.total"] < 1.0          # nothing re-run


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:                 # gone between the listing and the read
        return ""


NO_USERNS = "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"


@pytest.mark.parametrize("host", ["this-host", "no-user-namespaces"])
def test_ctrl_c_is_exit_130_children_gone_no_traceback(tmp_path, host):
    """Ctrl-C as soon as the first child exists (its sandbox init not yet reporting): on a host
    without user namespaces (a CI container: an `unshare` that fails, as there) that first
    launch would be probed and relaunched; after the interrupt nothing is."""
    sub = tmp_path / "sub"
    shutil.copytree(REFERENCE / "fem" / "gold", sub)
    (sub / "fem_solver.py").write_text("import time\n\n\ndef solve(n):\n    while True:\n        time.sleep(1)\n")
    cmd = [sys.executable, str(REPO / "grade_fem.py"), str(sub), "--json", str(tmp_path / "r.json")]
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"))      # where its work dirs go
    (tmp_path / "tmp").mkdir()
    if host == "no-user-namespaces":
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "unshare").write_text(NO_USERNS)
        (tmp_path / "bin" / "unshare").chmod(0o755)
        env["PATH"] = f"{tmp_path / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and \
            not any("grader_driver" in cmdline(p) for p in descendants(proc.pid)):
        time.sleep(0.005)
    kids = descendants(proc.pid)
    t_sig = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "RESULT" not in out, (out, err)
    assert "still busy" not in err, err          # the clean unwind, not the last-resort exit
    assert time.monotonic() - t_sig < 20, err
    assert kids and not any(alive(p) for p in kids)
    assert not (tmp_path / "r.json").exists()
    assert not list((tmp_path / "tmp").iterdir())     # its staging and work dirs removed too


STUCK_AFTER_INTERRUPT = """
import importlib.util, os, signal, sys, time
spec = importlib.util.spec_from_file_location("g", sys.argv[1])
g = sys.modules["g"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
g.INTERRUPT_EXIT_S = 1.0
g.start_interrupt_watch()
signal.signal(signal.SIGINT, g._interrupted)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    pass
while True:                 # a wait the unwind cannot break (what the last-resort exit is for)
    time.sleep(0.1)
"""


@pytest.mark.parametrize("name", ["grade_fem.py", "grade_engiai.py"])
def test_interrupted_grader_that_cannot_unwind_still_exits_130(tmp_path, name):
    proc = subprocess.run([sys.executable, "-c", STUCK_AFTER_INTERRUPT, str(REPO / name)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130 and "still busy 1 s after the interrupt" in proc.stderr, proc


def test_no_child_starts_after_an_interrupt(tmp_path):
    """What a worker thread would start after Ctrl-C is refused before anything is launched."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("grade_fem_interrupt", REPO / "grade_fem.py")
    g = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    (tmp_path / "s").mkdir()
    g._INTERRUPT["at"] = time.monotonic()
    before = descendants(os.getpid())
    try:
        out = g.run_isolated(str(tmp_path / "s"), "raise SystemExit(0)\n", {}, 5.0)
    finally:
        g._INTERRUPT["at"] = None
    assert out.status == "error" and "interrupted" in out.reason and out.wall == 0.0
    assert descendants(os.getpid()) == before


def test_work_dirs_written_after_their_removal_go_at_the_interrupted_exit(tmp_path, monkeypatch):
    """A thread still starting a worker when Ctrl-C came can write into a work dir after its
    owner removed it (seen in a full run: a SciCode worker folder left, 1 of 4 runs): the
    interrupted exit removes what is still there once the children are gone; after the interrupt
    no SciCode worker makes a folder at all."""
    import importlib.util
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    spec = importlib.util.spec_from_file_location("grade_scicode_workdirs", REPO / "grade_scicode.py")
    g = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    g.tempfile.tempdir = None                       # TMPDIR read again
    base = g.new_work_dir("grade_scicode-")
    g.remove_work_dir(base)                         # its owner's finally
    assert not os.path.exists(base) and not g._WORK_DIRS
    kept = g.new_work_dir("grade_scicode-")
    with monkeypatch.context() as m:                # a removal that fails stays on the list
        m.setattr(g.shutil, "rmtree", lambda path, ignore_errors=False: None)
        g.remove_work_dir(kept)
    assert g._WORK_DIRS == {kept}
    os.makedirs(os.path.join(kept, "worker-x", "work"))    # written by a thread the interrupt cut
    g._INTERRUPT["at"] = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match="interrupted"):
            g.Worker(kept, kept, [])
        assert os.listdir(kept) == ["worker-x"]     # no new worker folder after the interrupt
        code, doc = g._interrupted_exit("sub")
    finally:
        g._INTERRUPT["at"] = None
        g.tempfile.tempdir = None
    assert code == 130 and doc is None and not os.listdir(tmp_path) and not g._WORK_DIRS


# ---- --out DIR in every grader: each submission's report kept, reused by a rerun -----------------
FEM = REPO / "grade_fem.py"


def fem_subs(tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(REFERENCE / "fem" / "gold", subs / "gold")
    shutil.copytree(REFERENCE / "fem" / "variants" / "midpoint", subs / "midpoint")
    return [subs / "gold", subs / "midpoint"]


def test_many_submissions_resume_what_out_kept(tmp_path):
    subs, out = fem_subs(tmp_path), tmp_path / "out"
    first = run_grader(FEM, *subs, "--out", out, "--quiet", f"--json={tmp_path / 'a.jsonl'}",
                       "--table", tmp_path / "a.csv")
    assert first[0] == 1 and "resume: 0 of 2 submission(s) reused" in first[2]
    kept = sorted((out / "reports").iterdir())
    assert [p.name.split(".")[0] for p in kept] == ["gold", "midpoint"]
    again = run_grader(FEM, *subs, "--out", out, "--quiet", f"--json={tmp_path / 'b.jsonl'}",
                       "--table", tmp_path / "b.csv")
    assert again[0] == 1 and "resume: 2 of 2 submission(s) reused" in again[2]
    assert again[1].count("(reused: the report --out kept") == 2 and "[grade_fem" not in again[2]
    assert (tmp_path / "b.csv").read_text() == (tmp_path / "a.csv").read_text()
    assert read_docs(tmp_path / "b.jsonl") == read_docs(tmp_path / "a.jsonl")
    with open(subs[1] / "fem_solver.py", "a") as fh:        # other bytes: graded again
        fh.write("\n# edited\n")
    rc, out_text, err, _ = run_grader(FEM, *subs, "--out", out, "--quiet")
    assert rc == 1 and "resume: 1 of 2 submission(s) reused" in err
    rc, out_text, err, _ = run_grader(FEM, *subs, "--out", out, "--quiet", "--strict")
    assert "resume: 0 of 2 submission(s) reused" in err      # other options: graded again
    rc, out_text, err, _ = run_grader(FEM, *subs, "--out", out, "--quiet", "--strict")
    assert "resume: 2 of 2 submission(s) reused" in err      # ... and kept in their place


def test_a_forged_kept_report_is_graded_again_and_replaced(tmp_path):
    sub, out = fem_subs(tmp_path)[1], tmp_path / "out"
    rc, _, err, _ = run_grader(FEM, sub, "--out", out, "--quiet")
    kept = next((out / "reports").iterdir())
    doc = json.loads(kept.read_text())
    doc.update(result="PASS", score=1.0)
    doc["run"]["exit_code"] = 0
    kept.write_text(json.dumps(doc))
    rc, stdout, err, _ = run_grader(FEM, sub, "--out", out)
    assert rc == 1 and "resume: 0 of 1" in err and "not reused: claims RESULT PASS" in err
    assert json.loads(kept.read_text())["result"] == "FAIL" and "RESULT: FAIL" in stdout


@pytest.mark.parametrize("name, text, why", [
    ("notes.txt", "mine", "not a name --out gives a report"),
    ("gold.0123456789ab.json", '{"grader": "grade_fem", "checks": [', "not JSON (truncated?)"),
    ("gold.0123456789ab.json", '{"grader": "grade_adi"}', "not a grade_fem report"),
])
def test_foreign_files_in_out_are_a_usage_error_and_kept(tmp_path, name, text, why):
    sub, out = fem_subs(tmp_path)[0], tmp_path / "out"
    (out / "reports").mkdir(parents=True)
    (out / "reports" / name).write_text(text)
    rc, stdout, err, _ = run_grader(FEM, sub, "--out", out)
    path = out / "reports" / name
    assert rc == 2 and stdout == "" and err.count("\n") == 1
    assert err.startswith(f"grade_fem: --out {out}: {path} is not a report grade_fem kept (") and why in err
    assert err.rstrip().endswith("move it away or choose another DIR") and path.read_text() == text


def test_a_failed_grading_replaces_nothing_kept(tmp_path, capsys, monkeypatch):
    G = grader("fem")
    sub, out = fem_subs(tmp_path)[0], tmp_path / "out"
    rc, _, err = call_main(G, [sub, "--out", out, "--quiet", "--strict"], capsys)
    kept = next((out / "reports").iterdir())
    before = kept.read_bytes()

    def broken(args, submission):
        raise RuntimeError("a grader bug")
    monkeypatch.setattr(G, "grade_submission", broken)
    rc, stdout, err = call_main(G, [sub, "--out", out, "--quiet"], capsys)   # not reused: other options
    assert rc == 3 and "resume: 0 of 1" in err and "GRADER_ERROR" in stdout
    assert kept.read_bytes() == before and sorted(p.name for p in (out / "reports").iterdir()) == [kept.name]


@pytest.mark.parametrize("name", ["adi", "engiai"])
def test_single_submission_resume_in_other_graders(name, tmp_path, capsys):
    G = grader(name)
    if name == "adi":
        sub = REFERENCE / "adi" / "gold"
    else:
        sys.path.insert(0, str(REFERENCE / "engiai"))
        import build_engiai_run
        sub = tmp_path / "gold"
        build_engiai_run.build_gold(str(sub))
    out = tmp_path / "out"
    rc, first, err = call_main(G, [sub, "--out", out, "--json", tmp_path / "a.json"], capsys)
    assert rc == 0 and "resume: 0 of 1 submission(s) reused" in err
    rc, again, err = call_main(G, [sub, "--out", out, "--json", tmp_path / "b.json"], capsys)
    assert rc == 0 and "resume: 1 of 1 submission(s) reused" in err
    assert read_docs(tmp_path / "b.json") == read_docs(tmp_path / "a.json")
    assert again.splitlines()[-2:] == first.splitlines()[-2:] == ["RESULT: PASS", "SCORE: 1.0"]


def test_an_interrupted_leaderboard_run_continues_where_it_stopped(tmp_path):
    subs, out = fem_subs(tmp_path), tmp_path / "out"
    shutil.copytree(REFERENCE / "fem" / "variants" / "gauss2", tmp_path / "subs" / "gauss2")
    subs.append(tmp_path / "subs" / "gauss2")
    full = run_grader(FEM, *subs, "--quiet", "--table", tmp_path / "full.csv")
    kept = out / "reports"
    rc, stdout, err, kids = interrupt_when(
        [sys.executable, str(FEM), *map(str, subs), "--quiet", "--out", str(out)],
        lambda: kept.is_dir() and len(list(kept.glob("*.json"))) >= 1)
    done = len(list(kept.glob("*.json")))
    assert rc == 130 and "Traceback" not in err and 1 <= done < 3, (done, err[-500:])
    assert not any(alive(p) for p in kids) and not list(kept.glob(".*.tmp"))
    rc, stdout, err, _ = run_grader(FEM, *subs, "--quiet", "--out", out, "--table", tmp_path / "again.csv")
    assert rc == full[0] == 1 and f"resume: {done} of 3 submission(s) reused" in err
    assert stdout.count("(reused: the report --out kept") == done
    assert (tmp_path / "again.csv").read_text() == (tmp_path / "full.csv").read_text()
