"""The documented SLURM fan-out, run on a real scheduler: a single-node cluster (munged, slurmctld,
slurmd; config, keys, state and sockets in a temporary folder; every port on localhost) runs the
array script exactly as printed (extracted from docs/reports.md, not retyped) over a
handful of submissions for FEM and ADI, then the dependent merge job; the merged leaderboard must
be the one a local `grade_X.py subs/* --table` gives, and the merge job's exit code the local
run's.  Every daemon started here is stopped by its pid.  Where SLURM is not installed or cannot
start (no root, no munge, a daemon that dies), the test skips with a one-line reason."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REFERENCE, REPO

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "sinfo", "squeue", "scancel")
START_S = 30          # a daemon (or the node's first IDLE) later than this: SLURM cannot start here
JOBS_S = 600          # the whole array and the merge job (measured: see the note of issue 25)


def readme_blocks() -> tuple:
    """The fan-out section's two bash blocks, as printed: (grade.sbatch, the submitting lines).
    The section lives in docs/reports.md since issue 26 (the README points to it)."""
    text = (REPO / "docs" / "reports.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    script = next(b for b in blocks if "#SBATCH" in b and "SLURM_ARRAY_TASK_ID" in b)
    submit = next(b for b in blocks if "sbatch --parsable" in b and "--merge" in b)
    return script, submit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged + slurmctld + slurmd in the foreground (so their pids are ours), all in `root`."""

    def __init__(self, root: Path):
        self.root, self.procs, self.host = root, {}, socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.overrides = {}         # slurm.conf key -> value, in place of the line written below
        self.up = False             # the node came up: jobs may have run

    def why_not(self):
        """Why SLURM cannot run here (None when it can be tried)."""
        missing = [b for b in DAEMONS + CLIENTS if shutil.which(b) is None and
                   not os.path.exists(f"/usr/sbin/{b}")]
        if missing:
            return f"SLURM not installed ({', '.join(missing)} missing; apt-get install slurm-wlm munge)"
        if os.geteuid() != 0:
            return "SLURM's daemons need root here (slurmd runs jobs as their user)"
        return None

    def binary(self, name: str) -> str:
        return shutil.which(name) or f"/usr/sbin/{name}"

    def start(self) -> None:
        r = self.root
        for d in ("munge", "state", "spool", "log"):
            (r / d).mkdir(mode=0o700)
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        sock = r / "munge" / "munge.socket"
        self.spawn("munged", [self.binary("munged"), "-F", "--force", f"--key-file={key}",
                              f"--socket={sock}", f"--log-file={r / 'log' / 'munged.log'}",
                              f"--pid-file={r / 'munge' / 'munged.pid'}",
                              f"--seed-file={r / 'munge' / 'munged.seed'}"])
        self.wait_for(lambda: sock.exists(), "munged's socket")
        # each task asks for 2 CPUs (the README's --cpus-per-task) and a grader keeps about one
        # core busy, so the node declares two per core: one task per core at a time
        cpus = 2 * max(2, os.cpu_count() or 2)
        lines = [
            "ClusterName=graders", f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            "SlurmUser=root", "SlurmdUser=root", "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={sock}", f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}", f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}", f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd.log'}", "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
            "SchedulerType=sched/backfill", "SchedulerParameters=sched_interval=1",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "SlurmdParameters=config_overrides", "MpiDefault=none", "ReturnToService=2",
            "MinJobAge=600", "KillWait=5", "InactiveLimit=0",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
            f"PartitionName=grading Nodes={self.host} Default=YES MaxTime=INFINITE State=UP", ""]
        self.conf.write_text("\n".join(
            f"{k}={self.overrides[k]}" if k in self.overrides else line
            for line in lines for k in [line.split("=", 1)[0]]))
        self.spawn("slurmctld", [self.binary("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self.spawn("slurmd", [self.binary("slurmd"), "-D", "-N", self.host, "-f", str(self.conf)])
        self.wait_for(self.node_idle, "the node to come up IDLE")
        self.up = True

    def spawn(self, name: str, cmd: list) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env)
        log.close()

    def wait_for(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{dead[0]} exited ({self.procs[dead[0]].returncode}) while "
                                   f"waiting for {what}: {self.log_tail(dead[0])}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"no {what} within {START_S} s")

    def log_tail(self, name: str) -> str:
        for path in (self.root / "log" / f"{name}.log", self.root / "log" / f"{name}.out"):
            if path.exists() and path.read_text(errors="replace").strip():
                return path.read_text(errors="replace").strip().splitlines()[-1][:200]
        return "no log"

    def run(self, *cmd, timeout=60) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=timeout)

    def node_idle(self) -> bool:
        try:        # (a controller that is not up makes sinfo retry for its MessageTimeout)
            return self.run("sinfo", "-h", "-N", "-o", "%t", timeout=2).stdout.split() == ["idle"]
        except subprocess.TimeoutExpired:
            return False

    def jobs_in(self, workdir: Path) -> list:
        """Every job record whose working directory is `workdir`, as a dict of its fields."""
        out = self.run("scontrol", "-o", "show", "job").stdout
        jobs = [dict(f.split("=", 1) for f in line.split() if "=" in f) for line in out.splitlines()]
        return [j for j in jobs if j.get("WorkDir") == str(workdir)]

    def stop(self) -> None:
        """Jobs still running cancelled (their slurmstepd ends with them), then every daemon
        started here, by its pid: TERM, then KILL after 10 s."""
        if self.up and self.procs["slurmctld"].poll() is None:
            try:
                self.run("scancel", "--user", str(os.geteuid()), timeout=10)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and self.run(
                        "squeue", "-h", "-t", "RUNNING,COMPLETING", timeout=5).stdout.strip():
                    time.sleep(0.2)
            except (OSError, subprocess.SubprocessError):
                pass
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("slurm"))
    why = c.why_not()
    if why:
        pytest.skip(why)
    try:
        c.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        c.stop()
        pytest.skip(f"SLURM is installed but cannot start here: {str(exc)[:200]}")
    yield c
    c.stop()
    assert all(p.poll() is not None for p in c.procs.values())


def fem_subs(subs: Path) -> None:
    shutil.copytree(REFERENCE / "fem" / "gold", subs / "gold")
    for name in ("midpoint", "gauss2", "slopes_dropped"):
        shutil.copytree(REFERENCE / "fem" / "variants" / name, subs / name)


def adi_subs(subs: Path) -> None:
    gold = REFERENCE / "adi" / "gold"
    shutil.copytree(gold, subs / "gold")
    shutil.copytree(gold, subs / "broken_json")
    (subs / "broken_json" / "results.json").write_text("{not json")
    shutil.copytree(gold, subs / "no_solver")
    (subs / "no_solver" / "adi_solver.py").unlink()


FINISHED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")


def wait_jobs(cluster: Cluster, work: Path, n_tasks: int) -> tuple:
    """The array's n_tasks tasks and the merge job, all finished: ({task: (state, exit)}, merge's
    (state, exit)); an array task is a record with a single ArrayTaskId."""
    deadline, jobs = time.monotonic() + JOBS_S, []
    while time.monotonic() < deadline:
        jobs = cluster.jobs_in(work)
        tasks = {j["ArrayTaskId"]: (j["JobState"], j["ExitCode"]) for j in jobs
                 if j.get("ArrayTaskId", "").isdigit()}
        merge = [(j["JobState"], j["ExitCode"]) for j in jobs if "ArrayJobId" not in j]
        if len(tasks) == n_tasks and len(merge) == 1 and \
                all(s in FINISHED for s, _ in list(tasks.values()) + merge):
            return tasks, merge[0]
        time.sleep(0.5)
    pytest.fail(f"the array and merge job not finished within {JOBS_S} s: "
                f"{[(j.get('JobId'), j.get('JobState')) for j in jobs]}")


@pytest.mark.parametrize("bench, make_subs", [("fem", fem_subs), ("adi", adi_subs)])
def test_readme_array_script_on_slurm_gives_the_local_leaderboard(cluster, tmp_path, bench, make_subs):
    script, submit = readme_blocks()
    grader = f"grade_{bench}.py"
    work = tmp_path / "work"
    (work / "subs").mkdir(parents=True)
    make_subs(work / "subs")
    shutil.copy(REPO / grader, work / grader)
    # the README's text, with only the grader's name changed for the second benchmark
    (work / "grade.sbatch").write_text(script.replace("grade_fem.py", grader))
    (work / "submit.sh").write_text(submit.replace("grade_fem.py", grader))
    t0 = time.monotonic()
    done = subprocess.run(["bash", "-e", "submit.sh"], cwd=work, env=cluster.env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    n = len(list((work / "subs").iterdir()))
    tasks, (merge_state, merge_exit) = wait_jobs(cluster, work, n)
    wall = time.monotonic() - t0
    assert sorted(tasks, key=int) == [str(i) for i in range(n)]     # one task per submission
    # graded here, all at once, as the README says the merged table equals
    local = subprocess.run([sys.executable, grader, *sorted(str(p) + "/" for p in (work / "subs").iterdir()),
                            "--quiet", "--jobs", "2", "--table", "local.md"], cwd=work, capture_output=True, text=True,
                           timeout=600)
    merged = (work / "leaderboard.md").read_text()
    assert merged == (work / "local.md").read_text(), (merged, (work / "local.md").read_text())
    assert len(merged.splitlines()) == 2 + n
    assert merge_exit == f"{local.returncode}:0", (merge_state, merge_exit, local.returncode)
    print(f"\n{bench}: {n} submissions, array + merge on SLURM in {wall:.1f} s")


def test_a_slurm_that_cannot_start_is_one_line_and_leaves_no_daemon(tmp_path):
    """What the fixture turns into its skip reason: with the scheduler plugin missing, the
    controller (or slurmd, whichever reads it first) exits at once; the reason is one line naming
    the daemon and its own log line, and every daemon started is gone."""
    c = Cluster(tmp_path)
    why = c.why_not()
    if why:
        pytest.skip(why)
    c.overrides["SelectType"] = "select/none_such"
    with pytest.raises(RuntimeError) as caught:
        try:
            c.start()
        finally:
            c.stop()
    reason = str(caught.value)
    assert "\n" not in reason and re.match(r"(slurmctld|slurmd) exited \(1\) while waiting for ", reason)
    assert "Can't find plugin for select/none_such" in reason
    assert c.procs and all(p.poll() is not None for p in c.procs.values())
