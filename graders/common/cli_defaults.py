"""PRINTING AND CLI: the verdict, exit code and printing of one submission for the graders
that need nothing more (a part of grade_fem.py, grade_adi.py, grade_modchallenge.py; see
CONTRIBUTING.md)."""
from graders.common.bench import verdict
from graders.common.printing import print_report, print_submission_output
from graders.common.records import Report
from graders.common.reports import EXIT_BELOW, EXIT_FULL, EXIT_UNGRADED
# -- end of source-tree preamble: the build keeps only what follows --
def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict, no_exec=args.no_exec)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    print_submission_output(report.outcomes)
    print_report(report.checks, result, score, report.keys, quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {}


