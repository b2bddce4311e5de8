"""PRINTING AND CLI: the command line of the two solver benchmarks (a part of grade_fem.py,
grade_adi.py; see CONTRIBUTING.md)."""
import argparse
import os
from graders.common.bench import GRADER_NAME, SPEC, SUBMISSIONS_HELP
from graders.common.options import add_shared_option
from graders.common.reports import CliParser, UsageError, add_report_options
# -- end of source-tree preamble: the build keeps only what follows --
def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure, 130 interrupted; "
               "with several submissions, the largest of theirs")
    add_report_options(p, submissions_help=SUBMISSIONS_HELP)
    add_shared_option(p, "--budget", "each execution phase (default %(default)s)", type=float,
                      default=SPEC["budget_s"])
    add_shared_option(p, "--memory", "each child process, its address space (default "
                      "%(default)s)", type=float, default=SPEC["runner_mem_bytes"] / 2 ** 30)
    add_shared_option(p, "--strict")
    add_shared_option(p, "--no-exec", ": diagnostics only, RESULT: UNGRADED, exit 2")
    return p


def apply_memory(args) -> None:
    """--memory GB as the runner's address-space limit (the runner reads SPEC at call time)."""
    if getattr(args, "memory", None):
        SPEC["runner_mem_bytes"] = int(args.memory * 2 ** 30)


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


