"""The report machinery every grader shares (graders/common/reports.py): one version, the GRADING
section, the canonical submission digest, the leaderboard and table writers (pure functions)."""
import csv
import hashlib
import io
import re
import subprocess
import sys

import pytest

from conftest import REFERENCE, REPO
from test_reports_support import NAMES, call_main, grader

BANNER = re.compile(r"^# =+\n# (.+)\n# =+\n", re.M)


def source(name: str) -> str:
    return (REPO / f"grade_{name}.py").read_text()


def test_every_grader_version_is_the_package_version():
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    for name in NAMES:
        assert grader(name).GRADER_VERSION == version, name


@pytest.mark.parametrize("name", NAMES)
def test_version_option(name, capsys):
    rc, out, err = call_main(grader(name), ["--version"], capsys)
    assert rc == 0 and out.strip() == f"grade_{name} {grader(name).GRADER_VERSION}"


@pytest.mark.parametrize("name", NAMES)
def test_grading_section_sits_above_verdict_and_holds_only_grade(name):
    text = source(name)
    banners = [(m.group(1), m.start(), m.end()) for m in BANNER.finditer(text)]
    titles = [t for t, _, _ in banners]
    i = next(k for k, t in enumerate(titles) if t.startswith("GRADING"))
    assert titles[i + 1] == "VERDICT"
    body = text[banners[i][2]:banners[i + 1][1]]
    assert re.findall(r"^(?:def|class) (\w+)", body, re.M) == ["grade"]
    assert "-> Report:" in body


def test_tree_digest_is_sorted_paths_and_bytes(tmp_path):
    G = grader("fem")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.txt").write_bytes(b"xx")
    (tmp_path / "a.py").write_bytes(b"print(1)\n")
    (tmp_path / "link").symlink_to(tmp_path / "a.py")           # not followed, not hashed
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {rel}\n"
                    for rel, data in (("a.py", b"print(1)\n"), ("b/x.txt", b"xx")))
    got = G.tree_sha256(str(tmp_path))
    assert got == {"sha256": hashlib.sha256(lines.encode()).hexdigest(), "files": 2, "bytes": 11}
    (tmp_path / "b" / "x.txt").write_bytes(b"xy")                # one byte changes the digest
    assert G.tree_sha256(str(tmp_path))["sha256"] != got["sha256"]


def test_tree_digest_matches_the_documented_shell_pipeline():
    gold = REFERENCE / "fem" / "gold"
    shell = subprocess.run("find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
                           shell=True, cwd=gold, capture_output=True, text=True)
    if shell.returncode:
        pytest.skip("find/sha256sum not available")
    assert shell.stdout.split()[0] == grader("fem").tree_sha256(str(gold))["sha256"]


def doc(name, sub, result, score, **keys):
    return {"grader": f"grade_{name}", "submission": f"/x/{sub}", "submission_sha256": sub * 8,
            "result": result, "score": score, "keys": keys}


def test_leaderboard_orders_by_each_benchmarks_keys():
    fem = grader("fem").leaderboard([doc("fem", "a", "PARTIAL", 0.5, review_required=0),
                                     doc("fem", "b", "PASS", 1.0, review_required=2),
                                     doc("fem", "c", "PASS", 1.0, review_required=0),
                                     doc("fem", "d", "UNGRADED", None, review_required=0)])
    assert [(r["rank"], r["submission"]) for r in fem] == [(1, "c"), (2, "b"), (3, "a"), (4, "d")]
    mod = grader("modchallenge").leaderboard([
        doc("modchallenge", "low", "PARTIAL", 0.9, highest_tier_above_90=3, overall_accuracy=0.9),
        doc("modchallenge", "high", "PARTIAL", 0.5, highest_tier_above_90=7, overall_accuracy=0.5),
        doc("modchallenge", "tie", "PARTIAL", 0.95, highest_tier_above_90=3, overall_accuracy=0.95)])
    assert [r["submission"] for r in mod] == ["high", "tie", "low"]           # tier first, then accuracy
    sc = grader("scicode").leaderboard([
        doc("scicode", "p", "PARTIAL", 0.5, step_accuracy=0.5, problem_accuracy=0.4),
        doc("scicode", "q", "PARTIAL", 0.5, step_accuracy=0.5, problem_accuracy=0.2),
        doc("scicode", "r", "PARTIAL", 0.6, step_accuracy=0.6, problem_accuracy=0.0)])
    assert [r["submission"] for r in sc] == ["r", "p", "q"]
    ties = grader("engiai").leaderboard([doc("engiai", "y", "PASS", 1.0), doc("engiai", "x", "PASS", 1.0)])
    assert [(r["rank"], r["submission"]) for r in ties] == [(1, "x"), (1, "y")]     # a tie shares its rank


def test_table_files_csv_and_markdown(tmp_path):
    G = grader("fem")
    rows = G.leaderboard([doc("fem", "a", "PASS", 1.0, review_required=0),
                          doc("fem", "b|c", "UNGRADED", None, review_required=None)])
    G.write_table(str(tmp_path / "t.csv"), rows)
    got = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert [dict(r) for r in got] == [
        {"rank": "1", "submission": "a", "result": "PASS", "score": "1.0", "review_required": "0",
         "sha256": "aaaaaaaa"},
        {"rank": "2", "submission": "b|c", "result": "UNGRADED", "score": "", "review_required": "",
         "sha256": "b|cb|cb|cb|c"}]
    G.write_table(str(tmp_path / "t.md"), rows)
    md = (tmp_path / "t.md").read_text().splitlines()
    assert md[0] == "| rank | submission | result | score | review_required | sha256 |"
    assert md[1] == "|---|---|---|---|---|---|" and md[3].startswith("| 2 | b\\|c | UNGRADED | - |")


def test_text_columns_are_sized_to_their_content():
    G = grader("fem")
    lines = G.text_table([{"id": "x" * 45, "v": 1}, {"id": "y", "v": 22}], ["id", "v"])
    assert len({line.index(v) for line, v in zip(lines[1:], ("1", "22"))}) == 1
    long = G.Check("provenance.a_check_id_longer_than_thirty_chars", G.Status.PASS, "m")
    short = G.Check("tier1.x", G.Status.FAIL, "m")
    out = io.StringIO()
    G.print_report([long, short], "PASS", 1.0, {}, stream=out)
    first, second = out.getvalue().splitlines()[:2]
    assert first.index(" m") == second.index(" m")                 # messages start in one column


def test_progress_goes_to_stderr_only_and_not_under_quiet(tmp_path):
    gold = REFERENCE / "fem" / "gold"
    proc = subprocess.run([sys.executable, str(REPO / "grade_fem.py"), str(gold), "--no-exec"],
                          capture_output=True, text=True)
    assert "static checks done" in proc.stderr and "[grade_fem gold" in proc.stderr
    assert "static checks done" not in proc.stdout
    quiet = subprocess.run([sys.executable, str(REPO / "grade_fem.py"), str(gold), "--no-exec", "--quiet"],
                           capture_output=True, text=True)
    assert quiet.stderr == "" and quiet.returncode == proc.returncode == 2
    summary = [line for line in proc.stdout.splitlines() if line.startswith("summary:")]
    assert summary == [line for line in quiet.stdout.splitlines() if line.startswith("summary:")]


def test_quiet_never_changes_the_summary_counts(tmp_path, capsys):
    """EngiAI and SciCode used to count only the printed lines under --quiet."""
    sys.path.insert(0, str(REFERENCE / "scicode"))
    import scicode_synthetic
    files = {k: str(v) for k, v in scicode_synthetic.write_all(str(tmp_path / "sc")).items()}
    runs = {"engiai": [REFERENCE / "engiai" / "sample_run"],
            "scicode": [files["correct"], "--problems", files["problems_test.jsonl"], "--h5",
                        files["targets.h5"], "--no-exec"]}
    for name, argv in runs.items():
        summaries = []
        for extra in ([], ["--quiet"]):
            rc, out, err = call_main(grader(name), argv + extra, capsys)
            summaries.append([line for line in out.splitlines() if line.startswith("summary:")])
            if extra:
                assert err == "" and len(out.splitlines()) < n_lines, name      # fewer lines shown
            n_lines = len(out.splitlines())
        assert summaries[0] == summaries[1] and len(summaries[0]) == 1, (name, summaries)
