"""Issue 9 "Bad input": nothing a grader started outlives it — after a normal run, and when the
grader itself is SIGKILLed mid-run (its children die with the run's pid namespace, whose init
exits when the grader's end of the lifeline closes).  Processes are found by a marker file each
of them holds open (forked pool workers inherit it; the daemon gets it passed)."""
import importlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
G = importlib.import_module("grade_fem")
pytestmark = pytest.mark.skipif(not G.sandbox_level()["pid_namespace"],
                                reason="no pid namespace here: daemons may outlive the grader")

SPAWN = '''import multiprocessing as _mp, os as _os, subprocess as _sp, sys as _sys, time as _t
_fd = _os.open("marker-%s", _os.O_CREAT | _os.O_RDWR)
_os.set_inheritable(_fd, True)
_pool = _mp.get_context("fork").Pool(2)
_res = [_pool.apply_async(_t.sleep, (300,)) for _ in range(2)]
_sp.Popen([_sys.executable, "-c", "import time; time.sleep(300)"], pass_fds=(_fd,),
          start_new_session=True)
'''


def holders(mark: str) -> list:
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if mark in os.readlink(f"/proc/{pid}/fd/{fd}"):
                    out.append(int(pid))
                    break
        except OSError:
            continue
    return out


def wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def test_daemons_and_pools_die_when_the_run_ends():
    mark = uuid.uuid4().hex
    body = SPAWN % mark + "send({'started': True})\n"
    oc = G.run_isolated(str(REPO / "tests"), body, {}, 60)
    assert oc.messages == [{"started": True}], (oc.reason, oc.stderr)
    assert wait_for(lambda: not holders(mark), 5), holders(mark)


def test_sigkilled_grader_leaves_no_process(tmp_path):
    mark = uuid.uuid4().hex
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "reference" / "fem" / "gold", sub)
    (sub / "fem_solver.py").write_text(SPAWN % mark + "_t.sleep(300)\n" + (sub / "fem_solver.py").read_text())
    (tmp_path / "tmp").mkdir()      # a SIGKILLed grader cannot remove its work dirs: not in /tmp
    grader = subprocess.Popen([sys.executable, str(REPO / "grade_fem.py"), str(sub)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True, env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")))
    try:
        # both phases: job child + 2 pool workers + daemon, each
        assert wait_for(lambda: len(holders(mark)) >= 4, 60), holders(mark)
    finally:
        grader.kill()
        grader.wait()
    assert wait_for(lambda: not holders(mark), 10), holders(mark)
