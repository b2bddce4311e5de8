"""Red team round 10 on 2a1af99: conftest.shared_once serves one run's value to that run only.
Each case runs a small pytest session in a subprocess whose conftest is this suite's
(shared_once and pytest_configure, loaded from tests/conftest.py), with --basetemp under one
common folder, so two sessions share the parent of their temp dirs."""
import os
import subprocess
import sys
import textwrap

from conftest import REPO

CONFTEST = textwrap.dedent(f"""
    import importlib.util
    _spec = importlib.util.spec_from_file_location("suite_conftest", {str(REPO / "tests" / "conftest.py")!r})
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)
    pytest_configure, shared_once = _mod.pytest_configure, _mod.shared_once
""")

TEST = textwrap.dedent("""
    import os
    from conftest import shared_once

    def compute():
        if os.environ["RED10_VALUE"] == "boom":
            raise RuntimeError("compute failed")
        return os.environ["RED10_VALUE"]

    def test_value():
        assert shared_once("red10", compute) == os.environ["RED10_VALUE"]
""")


def session(tmp_path, name, value, *, xdist: bool, worker_env: bool):
    d = tmp_path / "suite"
    d.mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    (d / "conftest.py").write_text(CONFTEST)
    (d / "test_shared.py").write_text(TEST)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}
    env["RED10_VALUE"] = value
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"     # xdist only (below): the installed plugins'
    #                                                 imports cost ~3.5 CPU-s a session
    if worker_env:          # inherited from an xdist worker that launched this session
        env["PYTEST_XDIST_WORKER"] = "gw0"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist.plugin",
           f"--basetemp={tmp_path / 'tmp' / name}", str(d)]
    cmd += ["-n", "2"] if xdist else ["-n", "0"]
    return subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=300)


def test_a_session_outside_xdist_with_an_inherited_worker_name_is_not_served_another_value(tmp_path):
    """PYTEST_XDIST_WORKER in the environment but no xdist session (a pytest launched by a test
    of an xdist worker inherits it): the first session's pickle sits in the common parent and
    the second session, computing another value, must not be served it."""
    first = session(tmp_path, "one", "first", xdist=False, worker_env=True)
    assert first.returncode == 0, first.stdout + first.stderr
    second = session(tmp_path, "two", "second", xdist=False, worker_env=True)
    assert second.returncode == 0, second.stdout + second.stderr


def test_honest_twin_two_xdist_sessions_each_see_their_own_value(tmp_path):
    for name, value in (("one", "first"), ("two", "second")):
        r = session(tmp_path, name, value, xdist=True, worker_env=False)
        assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
        assert (tmp_path / "tmp" / name / "shared-red10.pickle").is_file()   # shared, not per worker


def test_a_failing_compute_leaves_no_file_the_next_session_reads(tmp_path):
    """compute() raises in one session: nothing is pickled; the next session (same basetemp,
    cleaned by pytest) computes its own value."""
    bad = session(tmp_path, "one", "boom", xdist=True, worker_env=False)
    assert bad.returncode == 1 and "compute failed" in bad.stdout, bad.stdout + bad.stderr
    assert not list((tmp_path / "tmp" / "one").glob("shared-red10.pickle"))
    good = session(tmp_path, "one", "fine", xdist=True, worker_env=False)
    assert good.returncode == 0, good.stdout + good.stderr
