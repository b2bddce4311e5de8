"""The contract between the common parts and a benchmark's own parts.

The common parts (records, runner, reports, plots) call the names below; every grader that
includes one of those parts defines them in its own parts.  This module is never part of a
grader: it exists so that pyflakes and editors resolve the names in the tree, and so the
contract is written down once.  tools/build_graders.py checks that each grader defines every
name its common parts import from here.
"""
# -- identity (each grader's header) ---------------------------------------------------------
GRADER_NAME: str = ""          # "grade_<bench>": messages, the report, the sandbox's temp names
GRADER_VERSION: str = ""       # the package version (pyproject.toml); --version prints it

# -- limits (each grader's SPEC) ---------------------------------------------------------------
SPEC: dict = {}                # every threshold; the runner reads its runner_* entries at call time

# -- the command line and one submission (each grader's PRINTING AND CLI) ---------------------
KEY_FORMATS: dict = {}         # typed key -> printed text
LEADERBOARD: tuple = ()        # (column, report path, "asc"|"desc") ranking keys
POSITIVE_OPTIONS: tuple = ()   # options that must be > 0
OUTPUT_OPTIONS: tuple = ()     # (option, is_directory) paths checked writable before grading
SUBMISSIONS_HELP: str = ""     # what one SUBMISSION is (common/cli_solver.py's parser)
OUT_HELP: str = ""             # --out DIR: what the grader keeps there besides the reports
REPORT_SCHEMA: dict = {}       # schemas/<grader>.report.schema.json, the same document (--merge, --out)


def verdict(checks, *, strict, no_exec):
    """(result, score): the grader's one pure verdict function (common/cli_solver.py)."""


def leaderboard_keys_of(checks, args):
    """The LEADERBOARD keys re-derived from a report's records ({} where only the score ranks):
    a merged or kept report's keys must agree."""


def build_parser():
    """The grader's argparse parser (built on CliParser and add_report_options)."""


def usage_checks(args):
    """This grader's own usage rules (raise UsageError), beyond common_usage_checks."""


def standalone_action(args):
    """An action that replaces grading (e.g. --list), or None."""


def child_jobs(args):
    """How many submissions' children may run at once under --jobs."""


def grade_submission(args, submission):
    """Grade one submission: a Report."""


def report_verdict(report, args):
    """(result, score) from the report's records: the grader's pure verdict function."""


def finish_report(report, result, score, args):
    """Records that need the verdict (figures), added after it."""


def report_extra(report):
    """Extra top-level keys of the JSON report."""


def exit_code_of(report, result, score):
    """The process exit code for one graded submission."""


def print_submission_report(report, result, score, args):
    """Print one submission's lines, keys and verdict."""


def format_check(check, width=30):
    """One printed line for one record."""


def plot_report(out_dir, submission, result, score, checks, figures_data):
    """--plot DIR: the grader's figures, as INFO records listing the PNGs."""
