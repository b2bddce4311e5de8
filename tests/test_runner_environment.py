"""Children run with the grader's own environment (issue 22 item 1).

The user's case: `python3 -m venv .venv` (its `python` is a symlink to the base interpreter),
then `pip install -e .` into it; the base interpreter does not have numpy/scipy/h5py.  Before
the fix every grader started its children as realpath(sys.executable), i.e. the base
interpreter, which could not import the venv's packages: every SciCode step was
`WorkerFault: worker failed to start`, a FEM child found numpy only when it was a plain file
of a site directory.

To reproduce that on a machine whose test interpreter has the packages, the venv is made from
a *bare* interpreter of the same Python version that lacks numpy (Debian's /usr/bin/python3
beside pyenv's here) and the packages are put into the venv only: hard-linked into its
site-packages (a normal install), or into a folder a .pth file of it names (an editable or
path install).  Each fixture first proves that the old launch (the link's target) cannot
import them, so the tests below fail on the old code.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO, REFERENCE, verdict_lines

PACKAGES = ("numpy", "scipy", "h5py")


def _bare_interpreter():
    """A Python of the test interpreter's version (ABI) that cannot import numpy."""
    ver = "%d.%d" % sys.version_info[:2]
    mine = os.path.realpath(sys.executable)
    for cand in (f"/usr/bin/python{ver}", f"/usr/local/bin/python{ver}", "/usr/bin/python3"):
        if not os.path.exists(cand) or os.path.realpath(cand) == mine:
            continue
        probe = subprocess.run([cand, "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2]);"
                                "import importlib.util as u; print(u.find_spec('numpy') is None)"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.split() == [ver, "True"]:
            return cand
    pytest.skip(f"no interpreter of Python {ver} without numpy here to make the user's venv from")


def _package_dirs():
    """The test interpreter's numpy/scipy/h5py folders and their bundled-library folders."""
    import importlib
    out = []
    for name in PACKAGES:
        pkg = Path(importlib.import_module(name).__file__).parent
        out.append(pkg)
        out += [Path(p) for p in glob.glob(str(pkg.parent / f"{name}.libs"))]
    return out


def _install(dirs, into: Path):
    into.mkdir(parents=True, exist_ok=True)
    for d in dirs:
        try:        # hard links: a real copy of the files, instantly (same file system)
            subprocess.run(["cp", "-al", str(d), str(into / d.name)], check=True, capture_output=True)
        except (subprocess.CalledProcessError, OSError):
            shutil.copytree(d, into / d.name, symlinks=True)


def _make_venv(root: Path, pth: bool) -> Path:
    bare = _bare_interpreter()
    subprocess.run([bare, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    py = root / "bin" / "python"
    assert py.is_symlink(), "a venv's python is a symlink (the ordinary install)"
    site_dir = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   check=True, capture_output=True, text=True).stdout.strip())
    if pth:         # the packages in a folder a .pth file names (an editable / path install)
        _install(_package_dirs(), root / "pkgs")
        (site_dir / "pkgs.pth").write_text(str(root / "pkgs") + "\n")
    else:
        _install(_package_dirs(), site_dir)
    # the reproduction holds: the venv imports them, the link's target (the old launch) cannot
    ok = subprocess.run([str(py), "-c", "import numpy, scipy.sparse, h5py"], capture_output=True)
    assert ok.returncode == 0, ok.stderr
    old = subprocess.run([os.path.realpath(py), "-I", "-c", "import numpy"], capture_output=True)
    assert old.returncode != 0, "the base interpreter must not see the venv's packages"
    return py


@pytest.fixture(scope="module")
def venv_site(tmp_path_factory):
    return _make_venv(tmp_path_factory.mktemp("venv") / "venv", pth=False)


@pytest.fixture(scope="module")
def venv_pth(tmp_path_factory):
    return _make_venv(tmp_path_factory.mktemp("venvpth") / "venv", pth=True)


def _run(py, *args, timeout=600):
    proc = subprocess.run([str(py), *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def test_readme_scicode_example_scores_1_from_a_symlinked_venv(venv_site, tmp_path):
    sc = tmp_path / "sc"
    code, _, err = _run(venv_site, REFERENCE / "scicode" / "scicode_synthetic.py", sc)
    assert code == 0, err
    report = tmp_path / "r.json"
    code, out, err = _run(venv_site, REPO / "grade_scicode.py", sc / "correct",
                          "--problems", sc / "problems_test.jsonl", sc / "problems_dev.jsonl",
                          "--h5", sc / "targets.h5", "--split", "all", "--special-steps", sc / "special",
                          "--json", report)
    keys = verdict_lines(out)
    assert (code, keys.get("RESULT"), keys.get("SCORE")) == (0, "PASS", "1.0"), out[-3000:] + err[-2000:]
    assert "WorkerFault" not in out
    run = json.loads(report.read_text())["run"]
    venv = venv_site.parent.parent
    assert run["versions_from"] == "child"
    assert run["child"]["prefix"] == str(venv)            # the venv, as the grader's own sys.prefix
    assert run["child"]["executable"] == str(venv_site)   # the venv's python, not its link target
    import h5py
    import numpy
    assert (run["numpy"], run["h5py"]) == (numpy.__version__, h5py.__version__)


def test_fem_gold_scores_1_from_a_venv_whose_packages_a_pth_file_adds(venv_pth, tmp_path):
    report = tmp_path / "f.json"
    code, out, err = _run(venv_pth, REPO / "grade_fem.py", REFERENCE / "fem" / "gold", "--json", report,
                          "--quiet")
    keys = verdict_lines(out)
    assert (code, keys.get("RESULT"), keys.get("SCORE")) == (0, "PASS", "1.0"), out[-3000:] + err[-2000:]
    run = json.loads(report.read_text())["run"]
    assert run["versions_from"] == "child" and run["child"]["prefix"] == str(venv_pth.parent.parent)
    assert run["h5py"] is None          # FEM's child does not import h5py: reported as not imported


def test_fem_gold_scores_1_from_a_symlinked_venv(venv_site):
    code, out, err = _run(venv_site, REPO / "grade_fem.py", REFERENCE / "fem" / "gold", "--quiet")
    assert (code, verdict_lines(out).get("SCORE")) == (0, "1.0"), out[-3000:] + err[-2000:]


RUNTIME_SCRIPT = textwrap.dedent('''
    import json, sys, tempfile
    sys.path.insert(0, sys.argv[1])
    import grade_adi as g
    sub = tempfile.mkdtemp()
    body = "import i22_user_probe\\nreport_runtime()\\nsend({'file': i22_user_probe.__file__})\\n"
    out = g.run_isolated(sub, body, {}, 60.0)
    print(json.dumps({"status": out.status, "reason": out.reason, "messages": out.messages,
                      "runtime": out.runtime, "stderr": out.stderr[-500:]}))
''')


def test_user_site_packages_reach_the_child(tmp_path):
    """A package installed with `pip install --user` (PYTHONUSERBASE here) is importable by
    the child, whose `python -I` alone would drop the user's site directory."""
    base = tmp_path / "userbase"
    env = dict(os.environ, PYTHONUSERBASE=str(base))
    user_site = subprocess.run([sys.executable, "-c", "import site; print(site.getusersitepackages())"],
                               env=env, capture_output=True, text=True, check=True).stdout.strip()
    Path(user_site).mkdir(parents=True)
    (Path(user_site) / "i22_user_probe.py").write_text("VALUE = 1\n")
    proc = subprocess.run([sys.executable, "-c", RUNTIME_SCRIPT, str(REPO)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["status"] == "ok", res
    assert res["messages"] == [{"file": os.path.realpath(Path(user_site) / "i22_user_probe.py")}], res
    assert res["runtime"]["kind"] == "runtime" and res["runtime"]["prefix"] == sys.prefix


def test_site_dirs_follow_the_graders_own_path_order():
    import grade_fem
    dirs = grade_fem._grader_site_dirs()
    real = [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
    assert dirs == [d for d in real if d in dirs]          # the grader's order
    assert len(dirs) == len(set(dirs)) and all(os.path.isabs(d) for d in dirs)
    import numpy
    assert any(os.path.realpath(numpy.__file__).startswith(d + "/") for d in dirs)
