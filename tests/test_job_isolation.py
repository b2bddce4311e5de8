"""The jobs of one run cannot talk through files (red team round 5, attack A1).

The hidden and witness runs of a mesh are forked jobs of one driver; they shared the scratch
folder, /dev/shm and the submission copy, so the first run of a pair could leave its field in a
file for the second (the witness pair split of test_adi_red_round5.py: 1.0 under --strict).
Each job now gets private writable areas (its own user + mount namespace: a tmpfs over the
scratch folder, /dev/shm and a writable /tmp, an overlay over the copy, locked under a second
namespace so it cannot be unmounted; its own SysV IPC and network).  Where the kernel refuses
(simulated with JOB_AREAS["private"] = False) the warm parent watches the areas: a job that
leaves anything there makes the witness REVIEW, with the files named."""
import importlib
import sys

import pytest

from conftest import REPO
from test_adi_exploit_recorder import failed, judge
from test_adi_red_round5 import PAIR_JOBS, _source
from test_adi_support import gold_variant_source, grader

sys.path.insert(0, str(REPO))
F = importlib.import_module("grade_fem")
LEVEL = F.sandbox_level()
needs_private = pytest.mark.skipif(not LEVEL.get("job_private_areas"),
                                   reason="no mount namespace per job on this host")

LEAK = r'''
import os, tempfile
def run(job):
    got = {"scratch": sorted(os.listdir(_REQ["scratch_dir"])), "shm": sorted(os.listdir("/dev/shm")),
           "copy": sorted(os.listdir(_REQ["submission_dir"])), "cwd": sorted(os.listdir(".")),
           "ipc": os.readlink("/proc/self/ns/ipc"), "net": os.readlink("/proc/self/ns/net")}
    for d in (_REQ["scratch_dir"], "/dev/shm", _REQ["submission_dir"], "."):
        try:
            with open(os.path.join(d, "from-%s" % job["id"]), "w") as fh:
                fh.write("x")
        except OSError:
            pass
    with tempfile.NamedTemporaryFile() as fh:           # TMPDIR works within the job
        fh.write(b"abc")
        fh.flush()
        got["tmpfile"] = open(fh.name).read()
    send(got)
fork_jobs([{"id": "one"}, {"id": "two"}], run)
'''


def _leak_run(mod, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "keep.txt").write_text("k")
    oc = mod.run_isolated(str(sub), LEAK, {}, 60)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    got = {m["job"]: m for m in oc.messages if "scratch" in m}
    ends = {m["job"]: m for m in oc.messages if m.get("kind") == "job_end"}
    return got, ends


@needs_private
def test_a_file_one_job_writes_is_not_seen_by_the_next(tmp_path):
    got, ends = _leak_run(F, tmp_path)
    two = got["two"]
    assert two["scratch"] == [] and two["shm"] == [] and two["copy"] == ["keep.txt"] \
        and two["cwd"] == ["keep.txt"], two
    assert got["one"]["tmpfile"] == two["tmpfile"] == "abc"
    assert got["one"]["ipc"] != two["ipc"] and got["one"]["net"] != two["net"]
    assert [ends[j]["isolation"] for j in ("one", "two")] == ["private", "private"]
    assert not (tmp_path / "sub" / "from-one").exists()


def test_watched_jobs_name_what_they_leave(tmp_path, monkeypatch):
    """Control (the fallback: no mount namespace per job): the file job one writes IS seen by job
    two, and each job_end lists what was left in the shared areas."""
    monkeypatch.setitem(F.JOB_AREAS, "private", False)
    got, ends = _leak_run(F, tmp_path)
    assert "from-one" in got["two"]["scratch"], got["two"]
    assert ends["one"]["isolation"] == "watched" and ends["one"]["left_count"] > 0
    assert any(p.endswith("/from-one") for p in ends["one"]["left"]), ends["one"]
    assert "shared writable areas, watched" in F.sandbox_check().message


def test_the_pair_split_through_a_shared_file_does_not_pass(tmp_path):
    """A1: whatever the host allows, the witness of the CN hidden run is not PASS (private areas:
    the second run finds no file and the witness sees the monolithic map; watched: REVIEW)."""
    checks, J, _ = judge(tmp_path, _source(), PAIR_JOBS)
    assert J["hidden:0.1"]["status"] == "ok" and J["witness:0.1"]["status"] == "ok"
    st = checks["witness.adi_step"].status.value
    assert st in ("FAIL", "REVIEW"), checks["witness.adi_step"].message
    if LEVEL.get("job_private_areas"):
        assert "witness.adi_step" in failed(checks), checks["witness.adi_step"].message


def test_the_pair_split_without_private_areas_is_review_with_the_files(tmp_path, monkeypatch):
    G = grader()
    monkeypatch.setitem(G.JOB_AREAS, "private", False)
    checks, J, _ = judge(tmp_path, _source(), PAIR_JOBS)
    c = checks["witness.adi_step"]
    assert c.status.value == "REVIEW" and "adi-pair-" in c.message and "shared" in c.message, c.message


TEMPFILE = '''

import os as _o, tempfile as _t
_solve_orig = solve


def solve(h, T=1.0, problem=None):
    X, Y, U = _solve_orig(h, T, problem)
    fd, path = _t.mkstemp(suffix=".npy")                 # a checkpoint written and read back
    _o.close(fd)
    np.save(path, U)
    U = np.load(path)
    _o.remove(path)
    return X, Y, U
'''


@needs_private
def test_honest_solver_with_its_own_temp_file_passes(tmp_path):
    src = gold_variant_source("def solve(h, T=1.0, problem=None):", "def solve(h, T=1.0, problem=None):") + TEMPFILE
    checks, J, _ = judge(tmp_path, src, PAIR_JOBS)
    bad = {k: c.message[:200] for k, c in checks.items() if c.status.value in ("FAIL", "REVIEW")}
    assert not bad, bad
    assert checks["witness.adi_step"].status.value == "PASS"


def test_without_namespaces_for_the_run_a_job_still_gets_its_own_scratch(tmp_path, monkeypatch):
    """No sandbox namespaces for the run (a host without them for the launcher; file isolation
    OFF): where the kernel still lets a job make its own mount namespace, its scratch folder
    and copy are its own; else the job_end says it was watched.  Either way a file job one
    leaves in the scratch folder is never both seen by job two and unreported."""
    level = dict(F.sandbox_level(), prefix=[], root=False, user_namespace=False, net_namespace=False,
                 mount_namespace=False, pid_namespace=False, ipc_namespace=False,
                 file_isolation=False, note="forced off by the test")
    monkeypatch.setattr(F, "_SANDBOX", level)
    got, ends = _leak_run(F, tmp_path)
    seen = "from-one" in got["two"]["scratch"] or "from-one" in got["two"]["copy"]
    reported = any(p.endswith("/from-one") for p in ends["one"].get("left", []))
    assert not seen or reported, (got["two"], ends["one"])
    assert got["two"]["tmpfile"] == "abc"
    if LEVEL.get("job_private_areas"):
        assert ends["one"]["isolation"] == "private" and not seen, (got["two"], ends["one"])


SYSV = r'''
import ctypes, os
def run(job):
    libc = ctypes.CDLL(None, use_errno=True)
    if job["id"] == "one":
        send({"made": libc.shmget(0x5eed, 4096, 0o1600)})      # IPC_CREAT | 0600
    else:
        send({"found": libc.shmget(0x5eed, 0, 0)})
fork_jobs([{"id": "one"}, {"id": "two"}], run)
'''


@pytest.mark.parametrize("ipc_net", [True, False])
def test_a_sysv_segment_of_one_job_is_private_or_reported(tmp_path, monkeypatch, ipc_net):
    """SysV IPC outlives a job: with an IPC namespace per job the next job finds nothing; in the
    sandbox's shared IPC namespace (simulated refusal) it is found, and listed as left."""
    monkeypatch.setitem(F.JOB_AREAS, "private", False)
    monkeypatch.setitem(F.JOB_AREAS, "ipc_net", ipc_net)
    oc = F.run_isolated(str(tmp_path), SYSV, {}, 60)
    assert oc.status == "ok", (oc.reason, oc.stderr)
    got = {m["job"]: m for m in oc.messages if "made" in m or "found" in m}
    ends = {m["job"]: m for m in oc.messages if m.get("kind") == "job_end"}
    assert got["one"]["made"] >= 0
    if ipc_net:
        assert got["two"]["found"] == -1
    else:
        assert got["two"]["found"] >= 0 and ends["two"]["isolation"] == "watched"
        if LEVEL.get("ipc_namespace"):
            assert any(p.startswith("sysvipc shm key") for p in ends["one"]["left"]), ends["one"]
