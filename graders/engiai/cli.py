"""PRINTING AND CLI (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import argparse
import json
import os
from graders._embed import embed_json
from graders.common.options import add_shared_option, subset_requested, subset_text
from graders.common.printing import print_report
from graders.common.records import Check, Report, Status
from graders.common.reports import (CliParser, EXIT_BELOW, EXIT_FULL, EXIT_UNGRADED, UsageError,
    add_report_options, text_table)
from graders.engiai.grading import grade
from graders.engiai.header import GRADER_NAME
from graders.engiai.spec import PROBLEMS, SPEC, list_problems, list_styles
from graders.engiai.verdict import verdict
from graders.common.stats import interval_text
from graders.engiai.uncertainty import score_error
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "trial_mean": lambda v, keys: "n/a" if v is None else f"{v:.4f}",
}
LEADERBOARD = (("score", "score", "desc"),)
POSITIVE_OPTIONS = ("budget",)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def format_table(cells: list) -> list:
    """The aggregated (problem, style) table under its title line, one indented line per cell,
    columns sized to fit."""
    rows = [{"problem": c["problem"], "style": c["style"], "n": c["n"],
             "mean": f"{c['mean']:.4f}" if c["mean"] is not None else "-",
             "stderr": f"{c['stderr']:.4f}" if c.get("stderr") is not None else "-",
             "ci95": interval_text(c.get("ci95")) if c.get("ci95") else "-",
             "status": "ok" if c["status"] == "scored" else
             f"{c['status'].upper()} ({c['n_none']} of {c['n']} None: {'; '.join(c['reasons'])})"}
            for c in cells]
    return (["table (per problem/style cell; INVALID/UNSCORABLE/UNSUPPORTED cells are never averaged)"]
            + text_table(rows, ["problem", "style", "n", "mean", "stderr", "ci95", "status"]))


def write_out_dir(out: str, trials: list, cells: list) -> None:
    """--out DIR: trials.json (every trial's recomputed terms, claims, reasons) and cells.tsv."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "trials.json"), "w") as fh:
        json.dump([t.as_dict() for t in trials if t.status != "filtered"], fh, indent=2,
                  allow_nan=False)
        fh.write("\n")
    with open(os.path.join(out, "cells.tsv"), "w") as fh:
        fh.write("problem\tstyle\tn\tmean\tstatus\tn_none\treasons\n")
        for c in cells:
            mean = "" if c["mean"] is None else f"{c['mean']:.6f}"
            fh.write(f"{c['problem']}\t{c['style']}\t{c['n']}\t{mean}\t{c['status']}\t"
                     f"{c['n_none']}\t{' | '.join(c['reasons'])}\n")


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="RESULT: PASS every trial scorable and every artefact valid; PARTIAL some cell "
               "INVALID/UNSCORABLE/UNSUPPORTED, some artefact invalid or some trace to review; UNGRADED "
               "no cell to score; FAIL only with --strict.  SCORE: mean of the scorable cells' "
               "means, an INVALID cell counting 0.0.  exit codes: 0 PASS with score 1.0, 1 graded below that, 2 UNGRADED or "
               "usage error, 3 grader failure, 130 interrupted; with several runs, the largest")
    add_report_options(p, submissions_help="run directory with reference.h5 and "
                       "trials/<id>/trial.json (reference/engiai/TRIAL_FORMAT.md)")
    p.add_argument("--problem", action="append", choices=list_problems(), metavar="P",
                   help="grade only this registered problem (repeatable; a SUBSET run when it "
                        "leaves trials out); choices: "
                        + ", ".join(list_problems()))
    p.add_argument("--style", action="append", choices=list_styles(), metavar="S",
                   help="grade only this prompt style (repeatable; a SUBSET run when it leaves "
                        "trials out); it must be accepted by a "
                        "selected problem; choices: " + ", ".join(list_styles()))
    add_shared_option(p, "--limit", "trials in name order that --problem / --style keep (a SUBSET "
                      "run: RESULT: SUBSET, no SCORE line)", type=int, default=None)
    add_shared_option(p, "--strict", "; anything short of PASS (unscorable cell, invalid "
                      "artefact, trace to review) is RESULT: FAIL, SCORE: 0.0")
    add_shared_option(p, "--budget", f"the whole run's reading (default "
                      f"{SPEC['run_max_seconds']:g}); what is not read within it scores 0 with a "
                      "FAIL record", type=float, default=None)
    add_shared_option(p, "--no-exec", ": accepted for uniformity; this grader never executes "
                      "what it grades (scripts are only parsed), so grading is unchanged")
    return p


def resolve_filters(parser, args) -> tuple:
    """(problems, styles) after checking every chosen style is accepted by a chosen problem."""
    problems = set(args.problem or list_problems())
    accepted = {s for p in problems for s in PROBLEMS[p]["styles"]}
    for s in args.style or ():
        if s not in accepted:
            valid = "; ".join(f"{p}: {', '.join(PROBLEMS[p]['styles'])}" for p in sorted(problems))
            parser.error(f"argument --style: {s!r} is not accepted by the selected problem(s) "
                         f"(valid choices: {valid})")
    return problems, set(args.style or accepted)


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    resolve_filters(build_parser(), args)
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")
        run = os.path.realpath(sub)
        for opt, target in (("--out", args.out), ("--json", args.json), ("--table", args.table),
                            ("--plot", getattr(args, "plot", None))):
            if target and (os.path.realpath(target) == run or
                           os.path.realpath(target).startswith(run + os.sep)):
                raise UsageError(f"{opt} must not be inside RUN_DIR (the run is never modified)")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    problems, styles = resolve_filters(build_parser(), args)
    report = grade(submission, problems, styles, getattr(args, "budget", None), args.limit)
    trials = report.figures_data["trials"]
    graded = sum(t.status != "filtered" for t in trials)
    left_out = report.figures_data.get("left_out", 0) + len(trials) - graded
    if left_out and subset_requested(args):
        report.keys["subset"] = subset_text(graded, graded + left_out, "trials", args)
        report.checks.append(Check("run.subset", Status.INFO, f"SUBSET: {report.keys['subset']}; "
                                   "a smoke test, not a score of the run"))
    report.keys.update(score_error(report.checks, report.figures_data["trials"]))
    if args.out:
        write_out_dir(args.out, report.figures_data["trials"], report.figures_data["cells"])
    return report


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if (result == "PASS" and score == 1.0) else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    cells = report.figures_data["cells"]
    print_report(report.checks, result, score, report.keys,
                 format_table(cells) if cells and not args.quiet else (), quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {"trials": [t.as_dict() for t in report.figures_data["trials"] if t.status != "filtered"],
            "cells": report.figures_data["cells"]}


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (here: the score alone ranks)."""
    return {}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = "also trials.json (recomputed terms per trial) and cells.tsv (DIR must not be inside RUN_DIR)"
REPORT_SCHEMA = embed_json("schemas/grade_engiai.report.schema.json")
