"""The source tree and its build (issue 20): the committed graders are what graders/ builds; an
edit of one common part changes every grader that includes it and no other; the build refuses a
broken tree with a named reason and writes nothing; the tree is pyflakes-clean as it stands (no
extraction step), holds no long program text in a string, and its child programs are the texts
the graders embed."""
import ast
import importlib
import io
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
BENCHES = ["adi", "engiai", "fem", "modchallenge", "scicode"]
BUILD = REPO / "tools" / "build_graders.py"


def run_build(root, *args):
    return subprocess.run([sys.executable, str(root / "tools" / "build_graders.py"), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def tree(tmp_path):
    """A private copy of the tree, the tools and the committed graders."""
    for d in ("graders", "tools", "schemas"):
        shutil.copytree(REPO / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    for b in BENCHES:
        shutil.copy(REPO / f"grade_{b}.py", tmp_path)
    return tmp_path


def graders_text(root) -> dict:
    return {b: (root / f"grade_{b}.py").read_text() for b in BENCHES}


def append_to_body(path, line):
    path.write_text(path.read_text() + line)


def test_committed_graders_are_what_the_tree_builds():
    proc = run_build(REPO, "--check")
    assert proc.returncode == 0, proc.stderr


def test_check_names_a_stale_grader(tree):
    append_to_body(tree / "grade_engiai.py", "# edited by hand\n")
    proc = run_build(tree, "--check")
    assert proc.returncode == 1 and "grade_engiai.py differs" in proc.stderr
    assert "grade_fem.py" not in proc.stderr


@pytest.mark.parametrize("part, changed", [
    ("common/records.py", set(BENCHES)),
    ("common/runner.py", {"fem", "adi", "modchallenge"}),
    ("common/child_driver_prologue.py", {"fem", "adi", "modchallenge"}),
    ("common/cli_solver.py", {"fem", "adi"}),
    ("scicode/child_worker.py", {"scicode"}),
])
def test_one_edit_in_the_tree_changes_exactly_the_graders_that_include_it(tree, part, changed):
    before = graders_text(tree)
    append_to_body(tree / "graders" / part, "# one edit\n")
    proc = run_build(tree)
    assert proc.returncode == 0, proc.stderr
    after = graders_text(tree)
    assert {b for b in BENCHES if after[b] != before[b]} == changed
    for b in changed:
        assert "# one edit\n" in after[b]
    assert run_build(tree, "--check").returncode == 0


def test_a_schema_edit_changes_its_grader_only(tree):
    before = graders_text(tree)
    path = tree / "schemas" / "grade_adi.report.schema.json"
    path.write_text(path.read_text().replace('"type": "object"', '"type": "object", "title": "edited"', 1))
    assert run_build(tree, "--check").returncode == 1
    assert run_build(tree).returncode == 0
    after = graders_text(tree)
    assert {b for b in BENCHES if after[b] != before[b]} == {"adi"} and '"title":"edited"' in after["adi"]


def break_section(root):
    p = root / "graders/fem/verdict.py"
    p.write_text(p.read_text().replace("# VERDICT\n", "# VERDICTS, misspelt\n"))


def duplicate_definition(root):
    append_to_body(root / "graders/fem/cli.py", "\n\ndef verdict(checks):\n    return None\n")


def child_that_does_not_compile(root):
    append_to_body(root / "graders/fem/child_driver.py", "def broken(:\n")


def missing_part(root):
    (root / "graders/adi/tiers.py").unlink()


def third_party_in_preamble(root):
    p = root / "graders/fem/tiers.py"
    p.write_text("import numpy\n" + p.read_text())


def undeclared_contract_name(root):
    p = root / "graders/common/plots.py"
    p.write_text("from graders.common.bench import NOT_IN_THE_CONTRACT\n" + p.read_text())


@pytest.mark.parametrize("breakage, named", [
    (break_section, "section 'VERDICT' is missing or out of order"),
    (duplicate_definition, "'verdict' is defined in both graders/fem/verdict.py and graders/fem/cli.py"),
    (child_that_does_not_compile, "graders/fem/child_driver.py: child program does not compile"),
    (missing_part, "graders/adi/tiers.py: listed but missing"),
    (third_party_in_preamble, "graders/fem/tiers.py: the preamble imports 'numpy'"),
    (undeclared_contract_name, "NOT_IN_THE_CONTRACT from graders/common/bench.py"),
])
def test_the_build_refuses_a_broken_tree_and_writes_nothing(tree, breakage, named):
    before = graders_text(tree)
    breakage(tree)
    proc = run_build(tree)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], proc.stderr
    assert graders_text(tree) == before


def test_port_patch_carries_an_edit_of_a_grader_into_the_tree(tree):
    edited = (tree / "grade_fem.py").read_text()
    edited = edited.replace("def run_isolated(", "# ported edit (runner)\ndef run_isolated(", 1)
    edited = edited.replace('_SUBDIR = _REQ["submission_dir"]\n',
                            '_SUBDIR = _REQ["submission_dir"]\n# ported edit (child)\n', 1)
    out = tree / "edited.py"
    out.write_text(edited)
    proc = subprocess.run([sys.executable, str(tree / "tools/port_patch.py"), "--file", str(out),
                           "--bench", "fem"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# ported edit (runner)" in (tree / "graders/common/runner.py").read_text()
    assert "# ported edit (child)" in (tree / "graders/fem/child_driver.py").read_text()
    assert (tree / "grade_fem.py").read_text() == edited
    assert "# ported edit (runner)" in (tree / "grade_adi.py").read_text()


def tree_files():
    return sorted(p for d in ("graders", "tools") for p in (REPO / d).rglob("*.py"))


def test_pyflakes_is_clean_over_the_whole_tree_and_the_graders():
    from pyflakes import api, reporter
    out = io.StringIO()
    for path in tree_files() + [REPO / f"grade_{b}.py" for b in BENCHES]:
        api.check(path.read_text(), str(path.relative_to(REPO)), reporter.Reporter(out, out))
    assert out.getvalue() == ""


def test_no_string_literal_in_the_tree_holds_more_than_30_lines_of_program_text():
    long_programs = []
    for path in tree_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.count("\n") > 30:
                try:
                    compile(node.value, "<literal>", "exec")
                except SyntaxError:
                    continue            # prose (a docstring), not a program
                long_programs.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert long_programs == []


@pytest.mark.parametrize("bench, name, child", [
    ("fem", "DRIVER_PROLOGUE", "common/child_driver_prologue.py"),
    ("adi", "_SANDBOX_INIT", "common/child_sandbox_init.py"),
    ("fem", "FEM_DRIVER", "fem/child_driver.py"),
    ("adi", "DRIVER_BODY", "adi/child_driver.py"),
    ("modchallenge", "DRIVER_BODY", "modchallenge/child_driver.py"),
    ("scicode", "WORKER_BODY", "scicode/child_worker.py"),
    ("scicode", "SHIM_CMP", "scicode/child_shim_cmp.py"),
])
def test_a_grader_holds_its_child_programs_as_the_tree_has_them(bench, name, child):
    from graders._embed import embed
    mod = importlib.import_module(f"grade_{bench}")
    assert getattr(mod, name) == embed(child)


def test_a_child_module_is_importable_and_testable_as_code():
    pytest.importorskip("scipy")
    cmp = importlib.import_module("graders.scicode.child_shim_cmp")
    assert cmp.cmp_tuple_or_list((1.0, [2.0, 3.0]), (1.0, [2.0, 3.0 + 1e-12]))
    assert not cmp.cmp_tuple_or_list((1.0, 2.0), (1.0, 2.5))


def test_generated_graders_say_so_and_from_where():
    for b in BENCHES:
        lines = (REPO / f"grade_{b}.py").read_text().splitlines()
        assert lines[0] == "#!/usr/bin/env python3"
        assert lines[1].startswith(f"# GENERATED by tools/build_graders.py from graders/{b}/PARTS")


def test_map_names_the_tree_file_of_every_line():
    proc = run_build(REPO, "--map", "fem")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    starts = [int(r[0]) for r in rows]
    assert starts == sorted(starts) and starts[0] == 1
    assert any(r[2] == "graders/fem/child_driver.py" for r in rows)


def test_port_patch_gives_a_function_added_between_two_parts_to_the_benchmarks_own(tree):
    rows = [line.split("\t") for line in run_build(tree, "--map", "modchallenge").stdout.splitlines()]
    first_shared = next(int(r[0]) for r in rows if r[2] == "graders/common/cli_defaults.py")
    lines = (tree / "grade_modchallenge.py").read_text().splitlines(keepends=True)
    lines.insert(first_shared - 1, "def brand_new_helper():\n    return 1\n\n\n")
    out = tree / "edited.py"
    out.write_text("".join(lines))
    proc = subprocess.run([sys.executable, str(tree / "tools/port_patch.py"), "--file", str(out),
                           "--bench", "modchallenge"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "brand_new_helper" in (tree / "graders/modchallenge/cli.py").read_text()
    assert "brand_new_helper" not in (tree / "graders/common/cli_defaults.py").read_text()
    assert "brand_new_helper" not in (tree / "grade_fem.py").read_text()
