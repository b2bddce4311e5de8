"""PRINTING AND CLI: the lines every grader prints (a part of every grader; see CONTRIBUTING.md)."""
import re
import sys
from graders.common.records import Check, Status
from graders.common.reports import format_value
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# PRINTING AND CLI
# =============================================================================
# line breaks (every separator str.splitlines knows) and other control characters
_NOT_ONE_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text) -> str:
    """Text printed as one line: line breaks and control characters written as escapes.  A
    record's message can quote a submission's names (a file name, a JSON key); one holding
    '\\nSCORE: 1.0000' must not print a verdict line of its own."""
    return _NOT_ONE_LINE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                             str(text))


def format_check(c: Check, width: int = 30) -> str:
    if c.status is Status.REVIEW:
        return one_line(f"REVIEW_REQUIRED: {c.id} {c.message}")
    return one_line(f"{c.status.value:<5} {c.id:<{width}} {c.message}")


def print_report(checks: list, result: str, score, keys: dict, table=(), stream=None,
                 quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW when quiet), the summary over ALL checks, the grader's
    table lines, keys, verdict."""
    stream = stream or sys.stdout
    shown = [c for c in checks if not quiet or c.status in (Status.FAIL, Status.REVIEW)]
    width = max([30] + [len(c.id) for c in shown])
    for c in shown:
        print(format_check(c, width), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    for line in table:
        print(one_line(line), file=stream)
    for key, value in keys.items():
        head, *rows = f"{key}: {format_value(key, value, keys)}".split("\n")
        print(one_line(head), file=stream)
        for row in rows:            # a table's rows, always indented: none can pass for a verdict line
            print(one_line(row if row.startswith(" ") else "  " + row), file=stream)
    print(f"RESULT: {result}", file=stream)
    if score is not None:
        print(f"SCORE: {score}", file=stream)


def print_submission_output(outcomes: dict, stream=None, max_lines: int = 200, max_chars=None) -> None:
    """Captured child output, indented under a header, on stderr only: the first max_lines
    lines of each phase, each cut to max_chars characters (None: whole)."""
    stream = stream or sys.stderr
    shown = False
    for phase, oc in outcomes.items():
        text = (oc.stdout + oc.stderr).strip()
        if not text:
            continue
        if not shown:
            print("submission output:", file=stream)
            shown = True
        print(f"  [{phase}]", file=stream)
        for line in text.splitlines()[:max_lines]:
            print("    " + line[:max_chars], file=stream)


