"""Many submissions, one table: three submissions of mixed outcomes in one call (each in its own
grader process, two at a time) give the right order and CSV; --merge of their separate reports
gives the identical table."""
import csv
import io
import sys

import pytest

from conftest import REFERENCE, REPO, run_grader
from test_reports_support import read_docs, validate


@pytest.fixture(scope="module")
def engiai_runs(tmp_path_factory):
    """A PASS run (the builder's gold), a PARTIAL one (the sample) and an UNGRADED one (no trial)."""
    sys.path.insert(0, str(REFERENCE / "engiai"))
    import build_engiai_run
    tmp = tmp_path_factory.mktemp("runs")
    build_engiai_run.build_gold(str(tmp / "gold"))
    (tmp / "empty" / "trials").mkdir(parents=True)
    return [tmp / "empty", REFERENCE / "engiai" / "sample_run", tmp / "gold"]


def leaderboard_lines(stdout: str) -> list:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("leaderboard ("))
    return lines[start:]


def test_three_engiai_runs_one_call_then_merge(engiai_runs, tmp_path):
    grader = REPO / "grade_engiai.py"
    table, reports = tmp_path / "board.csv", tmp_path / "all.jsonl"
    rc, out, err, _ = run_grader(grader, *engiai_runs, "--jobs", "2", "--table", table, f"--json={reports}")
    assert rc == 2                                            # the largest: one run is UNGRADED
    assert [line for line in out.splitlines() if line.startswith("=== ")] == \
        [f"=== {p}" for p in engiai_runs]                    # reports in the order given
    assert out.count("RESULT: ") == 3 and "Traceback" not in err
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert [(r["rank"], r["submission"], r["result"]) for r in rows] == [
        ("1", "gold", "PASS"), ("2", "sample_run", "PARTIAL"), ("3", "empty", "UNGRADED")]
    assert rows[0]["score"] == "1.0" and rows[1]["score"] == "0.8111" and rows[2]["score"] == ""
    docs = read_docs(reports)
    assert [d["result"] for d in docs] == ["UNGRADED", "PARTIAL", "PASS"]
    for d in docs:
        validate(d, "engiai")
    board = leaderboard_lines(out)
    assert board[0].startswith("leaderboard (3 submissions; ranked by score)")
    # graded elsewhere, one task per submission, then merged: the identical table
    singles = []
    for i, run in enumerate(engiai_runs):
        singles.append(tmp_path / f"r{i}.json")
        run_grader(grader, run, "--json", singles[-1])
    merged = tmp_path / "merged.csv"
    rc, mout, merr, _ = run_grader(grader, "--merge", *reversed(singles), "--table", merged)
    assert rc == 2      # the live run's exit code (one run is UNGRADED), not 0
    assert merged.read_text() == table.read_text() and leaderboard_lines(mout) == board
    md = tmp_path / "board.md"
    run_grader(grader, "--merge", reports, "--table", md)
    assert md.read_text().splitlines()[2].startswith("| 1 | gold | PASS | 1.0")


def test_three_fem_submissions_one_call(tmp_path):
    subs = [REFERENCE / "fem" / "variants" / "midpoint", REFERENCE / "fem" / "gold",
            REFERENCE / "fem" / "variants" / "slopes_dropped"]
    table = tmp_path / "fem.csv"
    rc, out, err, _ = run_grader(REPO / "grade_fem.py", *subs, "--jobs", "2", "--table", table,
                                 f"--json={tmp_path / 'fem.jsonl'}")     # JSON lines: not read back
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert rc == 1 and [r["submission"] for r in rows] == ["gold", "midpoint", "slopes_dropped"]
    assert [r["rank"] for r in rows] == ["1", "2", "2"]        # the two 0.0 share rank 2
    for d in read_docs(tmp_path / "fem.jsonl"):
        validate(d, "fem")
    rc, mout, _, _ = run_grader(REPO / "grade_fem.py", "--merge", tmp_path / "fem.jsonl",
                                "--table", tmp_path / "m.csv")
    assert (tmp_path / "m.csv").read_text() == table.read_text()
    assert leaderboard_lines(mout) == leaderboard_lines(out)


def test_merge_refuses_another_graders_reports(tmp_path):
    (tmp_path / "r.json").write_text('{"grader": "grade_adi"}')
    rc, out, err, _ = run_grader(REPO / "grade_fem.py", "--merge", tmp_path / "r.json")
    assert rc == 2 and out == "" and err.strip() == (f"grade_fem: --merge {tmp_path / 'r.json'}: refused: "
                                                     "not a grade_fem report (grader: 'grade_adi') "
                                                     "(nothing ranked)")
