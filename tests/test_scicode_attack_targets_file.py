"""Attack class: reading the targets file from disk (issue 12): its absolute path, a walk
of the temporary directories for the HDF5 signature, h5py imported under a built-up name,
the grader's command line or root through /proc.  The step's process has its own root
(system and Python directories read-only, a fresh /proc, a private /tmp): the file is not
in its view and nothing there names it.  Without that isolation the run is not certified
under --strict (REVIEW sandbox.file_isolation, RESULT: UNGRADED)."""
import os

import pytest

from test_scicode_support import gs, one_step_set, run_one_step_set, step_line

READ = ("    h = __import__('h5' + 'py')\n    g = h.File(p, 'r')['{step}/test1']\n"
        "    return float(g[list(g.keys())[0]][()])\n")


def replies(h5_path):
    return {
        "honest": "def f(x):\n    return x + 1\n",
        "absolute_path": f"def f(x):\n    p = {str(h5_path)!r}\n" + READ,
        "walks_for_hdf5": ("def f(x):\n    import os\n    p = None\n"
                           "    for top in ('/tmp', '/var/tmp', '/dev/shm', '/work', '/root', '/home', os.getcwd() + '/../..'):\n"
                           "        for d, _, fs in os.walk(top):\n            for n in fs:\n"
                           "                q = os.path.join(d, n)\n                try:\n"
                           "                    if open(q, 'rb').read(8) == b'\\x89HDF\\r\\n\\x1a\\n':\n"
                           "                        p = q\n                except OSError:\n                    pass\n" + READ),
        "grader_cmdline": ("def f(x):\n    import os\n    p = None\n"
                           "    for pid in os.listdir('/proc'):\n        try:\n"
                           "            a = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')\n"
                           "        except OSError:\n            continue\n"
                           "        if b'--h5' in a:\n            p = a[a.index(b'--h5') + 1].decode()\n" + READ),
        # root without capabilities: no chroot escape, no remount of the read-only binds
        "chroot_escape": (f"def f(x):\n    import os\n    os.mkdir('esc')\n    os.chroot('esc')\n"
                          "    for _ in range(64):\n        os.chdir('..')\n    os.chroot('.')\n"
                          f"    p = {str(h5_path)!r}\n" + READ),
        "remount_rw": ("def f(x):\n    import subprocess\n"
                       "    subprocess.run(['mount', '-o', 'remount,rw,bind', '/usr'], capture_output=True)\n"
                       "    open('/usr/.scicode_sandbox_probe', 'w').write('x')\n    return x + 1\n"),
        "proc_root": (f"def f(x):\n    import os\n    p = None\n"
                      "    for pid in os.listdir('/proc'):\n"
                      f"        q = f'/proc/{{pid}}/root' + {str(h5_path)!r}\n"
                      "        if pid.isdigit() and os.path.exists(q):\n            p = q\n" + READ),
    }


@pytest.fixture(scope="module")
def run():
    if not gs.sandbox_level()["file_isolation"]:
        pytest.skip("no mount/pid namespaces here: covered by test_without_isolation_strict_does_not_certify")
    probs, h5, gen, steps = one_step_set("targets-file", {k: "x" for k in replies("")})
    for label, text in replies(h5).items():
        (gen / f"{steps[label]}.txt").write_text(text.replace("{step}", steps[label]))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--jobs", "2", "--timeout", "60", "--strict")
    return out, steps, keys, doc


@pytest.mark.parametrize("label", ["absolute_path", "walks_for_hdf5", "grader_cmdline", "proc_root",
                                   "chroot_escape", "remount_rw"])
def test_targets_file_out_of_reach(run, label):
    out, steps, keys, doc = run
    line = step_line(out, steps[label])
    assert line.startswith("FAIL") and "[model]" in line, line
    assert not os.path.exists("/usr/.scicode_sandbox_probe")


def test_isolated_run_is_certified(run):
    out, steps, keys, doc = run
    assert step_line(out, steps["honest"]).startswith("PASS")
    assert "file isolation on" in out and "sandbox.file_isolation" not in out
    assert keys["RESULT"] == "PARTIAL" and keys["harness_fault_steps"] == "0"
    assert doc["sandbox"]["file_isolation"] is True


def test_without_isolation_strict_does_not_certify(monkeypatch):
    monkeypatch.setattr(gs, "_SANDBOX", dict(user_namespace=True, net_namespace=True, mount_namespace=False,
                                             pid_namespace=False, file_isolation=False, prefix=[], root=False,
                                             job_user_namespace=False, rlimits=["RLIMIT_AS"],
                                             note="mount/pid namespaces unavailable: test"))
    checks = gs.isolation_checks(strict=True) + [gs.Check("step.1.1", gs.Status.PASS, "1/1")]
    assert "file isolation OFF" in checks[0].message and "unavailable: test" in checks[0].message
    review = [c for c in checks if c.id == "sandbox.file_isolation"]
    assert review and review[0].status is gs.Status.REVIEW and "--strict does not certify" in review[0].message
    assert gs.verdict(checks, strict=True, no_exec=False) == ("UNGRADED", None)
    assert gs.verdict(checks, strict=False, no_exec=False) == ("PASS", 1.0)      # graded, flagged
