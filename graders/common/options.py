"""PRINTING AND CLI: the option vocabulary every grader shares: one name, one unit and one
opening of the help text for one idea (a part of every grader; see CONTRIBUTING.md)."""
import argparse
import sys
# -- end of source-tree preamble: the build keeps only what follows --
SHARED_OPTIONS = {      # option -> (metavar, the help's opening words: the same in every grader)
    "--budget": ("SECONDS", "wall-clock limit in seconds of"),
    "--memory": ("GB", "memory limit in GiB of"),
    "--out": ("DIR", "keep this run's working outputs in DIR:"),
    "--jobs": ("N", "how many run at a time:"),
    "--limit": ("N", "smoke test: grade only the first N"),
    "--quiet": (None, "print only FAIL / REVIEW_REQUIRED lines, the summary, the keys and the "
                      "verdict; no progress"),
    "--strict": (None, "anything needing review scores 0.0"),
    "--no-exec": (None, "do not run submitted code"),
    "--json": ("PATH", "also write the report as JSON to PATH"),
    "--table": ("PATH", "write the leaderboard to PATH"),
    "--plot": ("DIR", "also write PNG figures to DIR"),
    "--html": ("PATH", "also write one self-contained HTML report to PATH"),
}
# old spelling -> the shared one; each still works for one release, with a one-line notice
DEPRECATED_OPTIONS = {"--timeout": "--budget", "--mem-gb": "--memory"}


def add_shared_option(p, option: str, detail: str = "", **kw):
    """`option` as SHARED_OPTIONS spells it: its metavar and the help's opening words, then
    this grader's `detail` (what the unit is, the default)."""
    metavar, opening = SHARED_OPTIONS[option]
    if metavar is None:
        kw.setdefault("action", "store_true")
    else:
        kw.setdefault("metavar", metavar)
    sep = "" if not detail or detail[0] in ";:," else " "
    return p.add_argument(option, help=opening + sep + detail, **kw)


class DeprecatedOption(argparse.Action):
    """An old spelling (DEPRECATED_OPTIONS): one line on stderr, the value kept under a private
    name that CliParser moves to the shared option's destination after parsing."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)       # the notice: resolve_deprecated, once


def add_deprecated_option(p, old: str, **kw) -> None:
    """`old` kept for one release as an alias of DEPRECATED_OPTIONS[old] (hidden from --help)."""
    p.add_argument(old, action=DeprecatedOption, dest="_old_" + old.lstrip("-").replace("-", "_"),
                   default=None, help=argparse.SUPPRESS, **kw)


def resolve_deprecated(parser, args, argv) -> None:
    """Move each old spelling's value to the shared option; both given is a conflict (exit 2)."""
    given = {a.split("=", 1)[0] for a in argv if isinstance(a, str) and a.startswith("--")}
    for old, new in DEPRECATED_OPTIONS.items():
        dest = "_old_" + old.lstrip("-").replace("-", "_")
        if not hasattr(args, dest):
            continue
        value = getattr(args, dest)
        delattr(args, dest)
        if value is None:
            continue
        if new in given:
            parser.error(f"{old} and {new} conflict: give only {new}")
        print(f"{parser.prog}: {old} is deprecated: use {new} (the old spelling goes in the next "
              "release)", file=sys.stderr)
        setattr(args, new.lstrip("-").replace("-", "_"), value)


SUBSET_OPTIONS = ("limit", "only", "problem", "tier", "style")   # any given: a SUBSET run


def subset_requested(args) -> bool:
    """Whether the user asked for a subset (--limit N, or an explicit selection)."""
    return any(getattr(args, name, None) for name in SUBSET_OPTIONS)


def subset_text(graded: int, total: int, unit: str, args) -> str:
    """The label of a subset run: what was graded of what, and the options that chose it."""
    chose = " ".join(f"--{name} {' '.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                     for name in SUBSET_OPTIONS if (v := getattr(args, name, None)))
    return f"{graded} of {total} {unit} ({chose})"
