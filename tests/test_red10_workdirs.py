"""Red team round 10 on a268d91: the work-dir registry (new_work_dir / remove_work_dir /
remove_left_work_dirs).  What a child (or a grader thread the interrupt cut) leaves in or puts
in place of a work dir must not make the removal delete or follow anything outside it; and a
grader thread still setting up a run when the interrupted exit removed its work dir must not
make that dir again (os.makedirs of a path inside it re-creates the removed dir itself, which
nothing removes afterwards: the exit has passed)."""
import importlib.util
import os
import sys

import pytest

from conftest import REPO


def load(name, monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    spec = importlib.util.spec_from_file_location(f"grade_{name}_red10", REPO / f"grade_{name}.py")
    g = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    g.tempfile.tempdir = None
    return g


@pytest.fixture(params=["scicode"])
def g(request, monkeypatch, tmp_path):
    mod = load(request.param, monkeypatch, tmp_path)
    yield mod
    mod._INTERRUPT["at"] = None
    mod.tempfile.tempdir = None
    sys.modules.pop(mod.__name__, None)


def outside(tmp_path):
    keep = tmp_path / "outside"
    (keep / "deep").mkdir(parents=True)
    (keep / "deep" / "precious.txt").write_text("keep me")
    return keep


def intact(keep):
    return (keep / "deep" / "precious.txt").read_text() == "keep me"


# ---- symlinks and replaced dirs: the removal never leaves its own dirs ---------------------------
def test_symlinks_inside_a_work_dir_are_removed_not_followed(g, tmp_path):
    keep = outside(tmp_path)
    work = g.new_work_dir("grade_scicode-")
    os.symlink(keep, os.path.join(work, "to_dir"))
    os.symlink(keep / "deep" / "precious.txt", os.path.join(work, "to_file"))
    os.makedirs(os.path.join(work, "a", "b"))
    os.symlink(keep / "deep", os.path.join(work, "a", "b", "c"))
    g.remove_work_dir(work)
    assert intact(keep) and not os.path.lexists(work) and not g._WORK_DIRS


def test_a_work_dir_replaced_by_a_symlink_is_not_followed(g, tmp_path):
    """The work dir renamed away and a symlink to another folder put at its path (between
    mkdtemp and the removal): neither the owner's removal nor the interrupted exit's deletes
    what the link points to."""
    keep = outside(tmp_path)
    work = g.new_work_dir("grade_scicode-")
    os.rename(work, work + ".moved")
    os.symlink(keep, work)
    g.remove_work_dir(work)
    g.remove_left_work_dirs()
    assert intact(keep) and os.path.islink(work)


def test_honest_twin_work_dirs_removed_and_forgotten(g, tmp_path):
    dirs = [g.new_work_dir(p) for p in ("grade_scicode-", "grade_scicode-probe-")]
    for d in dirs:
        os.makedirs(os.path.join(d, "x", "y"))
        open(os.path.join(d, "x", "f"), "w").close()
    g.remove_work_dir(dirs[0])
    assert g._WORK_DIRS == {dirs[1]}
    g.remove_left_work_dirs()
    assert not g._WORK_DIRS and not os.listdir(tmp_path / "tmp")


# ---- a grader thread past its interrupt check when the exit removed its work dir -------------------
def test_a_scicode_worker_starting_when_its_folder_went_does_not_make_it_again(g, tmp_path, monkeypatch):
    """Worker.start passed its interrupt check; the interrupted exit removes the workers'
    folder (here: while the worker asks for the sandbox level); the start goes on.  Measured
    before the fix: the sandbox command's os.makedirs(box/root) made the removed folder again
    (grade_scicode-*/worker-*/root left in TMPDIR after the exit)."""
    base = g.new_work_dir("grade_scicode-")
    shim = g.write_shim(os.path.join(base, "shim"))

    def level_then_exit():
        g.remove_left_work_dirs()               # the interrupted exit, on the main thread
        return {"prefix": [], "pid_namespace": False}
    monkeypatch.setattr(g, "sandbox_level", level_then_exit)
    with pytest.raises(Exception):
        g.Worker(base, shim, [])
    assert not os.listdir(tmp_path / "tmp")


@pytest.mark.parametrize("g", ["fem", "adi"], indirect=True)
def test_a_run_setting_up_when_its_work_dir_went_does_not_make_it_again(g, tmp_path, monkeypatch):
    """run_isolated copied the submission; the interrupted exit removes its work dir; the
    thread goes on making the driver's folders.  They must not make the work dir again (the
    run's own finally would remove it, but a thread the exit cuts never gets there)."""
    sub = tmp_path / "sub"
    (sub / "pkg").mkdir(parents=True)
    (sub / "pkg" / "m.py").write_text("x = 1\n")
    copy, remove = g._copy_submission, g.remove_work_dir
    seen, exited = [], []

    def copy_then_exit(src, dst, cap):
        copy(src, dst, cap)
        g.remove_left_work_dirs()
        exited.append(True)

    def run_finally_removes(path):     # is the work dir there again when the run's finally comes?
        if exited:
            seen.append(os.path.lexists(path))
        remove(path)
    monkeypatch.setattr(g, "_copy_submission", copy_then_exit)
    monkeypatch.setattr(g, "remove_work_dir", run_finally_removes)
    monkeypatch.setitem(g._SANDBOX, "prefix", [])
    try:
        g.run_isolated(str(sub), "pass\n", {}, 5.0, lib_files={"a/b/c.py": "y = 2\n"})
    except Exception:
        pass
    assert seen and not any(seen) and not os.listdir(tmp_path / "tmp")


@pytest.mark.parametrize("g", ["fem", "adi"], indirect=True)
def test_honest_twin_copy_and_driver_folders_made_as_before(g, tmp_path):
    sub = tmp_path / "sub"
    (sub / "pkg" / "inner").mkdir(parents=True)
    (sub / "pkg" / "inner" / "m.py").write_text("x = 1\n")
    (sub / "top.py").write_text("y = 1\n")
    work = g.new_work_dir("grade_scicode-")
    g._copy_submission(str(sub), os.path.join(work, "submission"), 1 << 20)
    assert open(os.path.join(work, "submission", "pkg", "inner", "m.py")).read() == "x = 1\n"
    assert os.path.isfile(os.path.join(work, "submission", "top.py"))
    g.remove_work_dir(work)
    assert not os.listdir(tmp_path / "tmp")


@pytest.mark.parametrize("g", ["fem"], indirect=True)
def test_fem_staging_after_its_folder_went_does_not_make_it_again(g, tmp_path):
    """FEM's staged copy: the interrupted exit removed the staging dir before stage_solver
    made its submission folder; the folder is not made (before: os.makedirs re-made the
    staging dir itself)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / g.SPEC["solver_file"]).write_text("x = 1\n")
    tmp = g.new_work_dir("grade_fem-stage-")
    g.remove_left_work_dirs()
    with pytest.raises(OSError):
        g.stage_solver(str(sub), os.path.join(tmp, "submission"))
    assert not os.listdir(tmp_path / "tmp")
    assert (sub / g.SPEC["solver_file"]).read_text() == "x = 1\n"        # the submission untouched


@pytest.mark.parametrize("g", ["fem"], indirect=True)
def test_honest_twin_fem_staging_makes_its_copy(g, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / g.SPEC["solver_file"]).write_text("x = 1\n")
    tmp = g.new_work_dir("grade_fem-stage-")
    stage = g.stage_solver(str(sub), os.path.join(tmp, "submission"))
    assert os.listdir(stage) == [g.SPEC["solver_file"]]
    g.remove_work_dir(tmp)
    assert not os.listdir(tmp_path / "tmp") and os.listdir(sub) == [g.SPEC["solver_file"]]


@pytest.mark.parametrize("g", ["fem"], indirect=True)
def test_make_dirs_below_refuses_a_path_outside_its_anchor(g, tmp_path):
    anchor = g.new_work_dir("grade_fem-")
    g.make_dirs_below(anchor, os.path.join(anchor, "a", "b"))
    g.make_dirs_below(anchor, os.path.join(anchor, "a", "b"))          # exist_ok, as before
    assert os.path.isdir(os.path.join(anchor, "a", "b"))
    with pytest.raises(ValueError):
        g.make_dirs_below(anchor, str(tmp_path / "elsewhere"))
    assert not (tmp_path / "elsewhere").exists()
    g.remove_work_dir(anchor)


# ---- grade_many: the child graders' own work dirs ---------------------------------------------
def _tree(path):
    out = []
    for root, dirs, files in os.walk(path):
        out += [os.path.relpath(os.path.join(root, x), path) for x in dirs + files]
    return sorted(out)


def test_many_submissions_interrupted_leave_no_child_graders_work_dirs(tmp_path):
    """grade_many (two FEM submissions, --jobs 2) interrupted once both child graders staged
    their copies: the handler SIGKILLs the child graders (kill_descendants) before they can
    remove their own work dirs.  Measured before the fix: 20 entries (grade_fem-*,
    grade_fem-stage-*) left in TMPDIR at 0.8 s and 1.5 s into the run, 2 of 2 tries, on main
    too.  Now each child grader's TMPDIR is inside the parent's work dir, removed with it."""
    import time
    from test_reports_resume import FEM, fem_subs, interrupt_when
    subs = fem_subs(tmp_path)
    before = {s.name: _tree(s) for s in subs}
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    rc, out, err, kids = interrupt_when(
        [sys.executable, str(FEM), *map(str, subs), "--jobs", "2"],
        lambda: sum("grade_fem-stage-" in p for p in _tree(tmp)) >= 2,
        env=dict(os.environ, TMPDIR=str(tmp)))
    assert rc == 130 and "Traceback" not in err and kids, err
    time.sleep(0.2)
    assert _tree(tmp) == []
    assert {s.name: _tree(s) for s in subs} == before           # the submissions untouched


def test_honest_twin_many_submissions_graded_leave_nothing(tmp_path, monkeypatch):
    from conftest import run_grader
    from test_reports_resume import FEM, fem_subs
    subs = fem_subs(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    rc, out, err, _ = run_grader(FEM, *subs, "--jobs", "2")
    assert rc == 1 and "RESULT: PASS" in out and "RESULT: FAIL" in out, err   # as before
    assert _tree(tmp) == []


def test_interrupted_exit_removes_a_dir_a_dying_child_still_wrote_into(g, tmp_path, monkeypatch):
    """The first removal at the interrupted exit fails because a process killed a moment ago
    is still writing into the dir (here: the first rmtree finds a new entry and gives up, as
    rmdir's ENOTEMPTY does); it is tried again.  Measured before: one pass, the dir left (a
    grade_many base left once in a loaded run)."""
    work = g.new_work_dir("grade_scicode-")
    real, calls = g.shutil.rmtree, []

    def racing_rmtree(path, ignore_errors=False):
        calls.append(path)
        if len(calls) == 1:                 # the dying writer wins the first pass
            open(os.path.join(path, "late"), "w").close()
            return
        real(path, ignore_errors=ignore_errors)
    monkeypatch.setattr(g.shutil, "rmtree", racing_rmtree)
    g.remove_left_work_dirs()
    assert not os.path.lexists(work) and not g._WORK_DIRS and len(calls) == 2


def test_honest_twin_a_dir_that_cannot_go_is_given_up_after_the_wait(g, tmp_path, monkeypatch):
    import time
    work = g.new_work_dir("grade_scicode-")
    monkeypatch.setattr(g.shutil, "rmtree", lambda path, ignore_errors=False: None)
    t0 = time.monotonic()
    g.remove_left_work_dirs(wait=0.3)
    assert 0.25 < time.monotonic() - t0 < 2.0 and g._WORK_DIRS == {work}
    monkeypatch.undo()
    g.remove_work_dir(work)
