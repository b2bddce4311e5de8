"""CLI (issue 12 item 5): --dry-run is plumbing only (RESULT: UNGRADED, no SCORE, exit 2, the
step results still printed); --budget / --memory / --jobs that are <= 0 (or not finite)
are usage errors: exit 2, one line on stderr, nothing graded."""
import pytest

from test_scicode_support import GRADER, grade, problem_args, run_grader, step_line, syn


def test_dry_run_is_ungraded_with_plumbing_results():
    rc, out, err, doc, keys = grade(syn()["correct"], "--dry-run")
    assert rc == 2 and keys["RESULT"] == "UNGRADED" and "SCORE" not in keys
    assert doc["result"] == "UNGRADED" and doc["score"] is None
    assert "SCICODE_PASS (DRY_RUN)" in step_line(out, "902.2") and "sandbox.isolation" in out


@pytest.mark.parametrize("flag,value", [("--budget", "0"), ("--budget", "-1"), ("--budget", "nan"),
                                        ("--budget", "inf"), ("--memory", "0"), ("--memory", "-2"),
                                        ("--jobs", "0"), ("--jobs", "-3")])
def test_non_positive_limits_are_usage_errors(flag, value):
    rc, out, err, _ = run_grader(GRADER, syn()["correct"], *problem_args(), flag, value, timeout=60)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and "positive" in lines[0], err
