"""PRINTING AND CLI (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import argparse
import dataclasses
import json
import os
from graders._embed import embed_json
from graders.common.options import add_deprecated_option, add_shared_option
from graders.common.printing import print_report, print_submission_output
from graders.common.records import Report, Status
from graders.common.reports import (CliParser, EXIT_BELOW, EXIT_FULL, EXIT_GRADER, EXIT_UNGRADED,
    UsageError, add_report_options)
from graders.scicode.grading import grade
from graders.scicode.header import GRADER_NAME
from graders.scicode.sandbox_ops import strict_uncertified, summary_keys
from graders.scicode.spec import SPEC
from graders.scicode.verdict import verdict
from graders.scicode.workers import discard_prestarted
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "steps_passed": lambda v, keys: f"{v}/{keys.get('steps_in_scope')}",
    "problems_solved": lambda v, keys: f"{v}/{keys.get('problems_in_scope')}",
}
LEADERBOARD = (("step_accuracy", "keys.step_accuracy", "desc"),
               ("problem_accuracy", "keys.problem_accuracy", "desc"))
POSITIVE_OPTIONS = ("budget", "memory", "jobs")   # > 0 and finite (NaN, inf: usage errors)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def write_official_outputs(out_dir: str, results: dict, keys: dict, wall: float) -> None:
    """Official-style outputs: <out>/scicode.json (problem -> passed steps),
    <out>/scicode.txt (summary), <out>/logs/<step>.txt (pass | fail | time out)."""
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    passed = {}
    for step, res in results.items():
        pid = step.split(".")[0]
        passed.setdefault(pid, [])
        if res.passed:
            passed[pid].append(step)
        word = "pass" if res.passed else "time out" if (res.failure or {}).get("type") == "Timeout" else "fail"
        with open(os.path.join(out_dir, "logs", f"{step}.txt"), "w") as fh:
            fh.write(word + "\n")
    order = sorted(passed, key=lambda p: int(p) if p.isdigit() else 0)
    with open(os.path.join(out_dir, "scicode.json"), "w") as fh:
        json.dump({p: passed[p] for p in order}, fh, indent=4)
    solved = [int(p) if p.isdigit() else p for p in order
              if len(passed[p]) == sum(1 for s in results if s.split(".")[0] == p)]
    with open(os.path.join(out_dir, "scicode.txt"), "w") as fh:
        if keys.get("subset"):          # a smoke test is never written as a full score
            fh.write(f"SUBSET: {keys['subset']}; not a score of the split\n\n")
        fh.write(f"correct problems: {keys['problems_solved']}/{keys['problems_in_scope']}\n"
                 f"correct steps: {keys['steps_passed']}/{keys['steps_in_scope']}\n\n"
                 f"duration: {wall} seconds\n\ncorrect problems: \n\n{solved}\n")


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="generations: a folder of <step>.txt/<step>.py raw replies, or a JSONL of "
               '{"step_number": "10.1", "completion": "..."} lines.\n'
               "exit codes: 0 every step passed, 1 graded below full score, "
               "2 UNGRADED (--no-exec, --dry-run) or usage error (a path that does not exist, an "
               "option out of range, an output that cannot be written), "
               "3 harness indicted, --strict without file isolation, unreadable targets file, or "
               "grader failure, 130 interrupted; "
               "with several generation sets, the largest of theirs")
    add_report_options(p, submissions_help="folder of <step>.txt/.py replies, or a JSONL of "
                       "{step_number, completion}", jobs=False)
    p.add_argument("--problems", nargs="+", metavar="FILE",
                   help="problems_all.jsonl and/or problems_dev.jsonl (required)")
    p.add_argument("--h5", metavar="PATH", help="the targets file test_data.h5 (required)")
    p.add_argument("--split", choices=("test", "dev", "all"), default=None,
                   help="which loaded problems to grade (dev = problems with ground_truth_code); "
                        "default: every loaded problem (named by the splits present)")
    p.add_argument("--context", choices=("self", "reference"), default=None,
                   help="prior-step code: the generations' own (default for test) or "
                        "ground_truth_code (default for dev)")
    p.add_argument("--special-steps", metavar="DIR",
                   help="reference code of the no-test steps 13.6, 62.1, 76.3 as DIR/<step>.txt")
    add_shared_option(p, "--limit", "in-scope steps in step order (a SUBSET run: RESULT: SUBSET, "
                      "no SCORE line)", type=int, default=None)
    p.add_argument("--only", nargs="+", metavar="STEP",
                   help="smoke test: grade only these steps, e.g. 10.1 10.2 (a SUBSET run)")
    p.add_argument("--problem", nargs="+", metavar="PID",
                   help="smoke test: grade only these problems' steps (a SUBSET run)")
    add_shared_option(p, "--budget", "one step (default %(default)s)", type=float,
                      default=SPEC["timeout_s"])
    add_deprecated_option(p, "--timeout", type=float)
    add_shared_option(p, "--memory", "one step, its address space (default %(default)s)",
                      type=float, default=SPEC["mem_gb"])
    add_deprecated_option(p, "--mem-gb", type=float)
    add_shared_option(p, "--jobs", "parallel step workers (default: cores); with several "
                      "generation sets, how many are graded at a time (each then with one worker)",
                      type=int, default=None)
    p.add_argument("--dry-run", action="store_true",
                   help=f"prove the plumbing only; a step passes where '{SPEC['dry_marker']}' is seen; "
                        "RESULT: UNGRADED, no SCORE, exit 2")
    add_shared_option(p, "--strict", "; a single harness-fault failure indicts the run; flagged "
                      "code fails its step; without file isolation the run is not certified "
                      "(UNGRADED, exit 3)")
    add_shared_option(p, "--no-exec", ": diagnostics only, RESULT: UNGRADED, exit 2")
    return p


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    if args.merge:
        return
    if not args.problems:
        raise UsageError("--problems FILE ... is required")
    if not args.h5:
        raise UsageError("--h5 PATH is required")
    for path in args.problems:
        if not os.path.isfile(path):
            raise UsageError(f"--problems {path}: no such file")
    if not os.path.isfile(args.h5) and not args.no_exec:
        raise UsageError(f"--h5 {args.h5}: no such file")
    if args.special_steps and not os.path.isdir(args.special_steps):
        raise UsageError(f"--special-steps {args.special_steps} is not a folder")
    for sub in args.submissions:
        if not os.path.exists(sub):
            raise UsageError(f"{sub}: no such file or folder")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    args = argparse.Namespace(**vars(args))
    args.submission = submission
    try:
        report = grade(args)
    finally:
        discard_prestarted()        # workers launched for steps that never ran (an early return)
    if args.out and report.outcomes:
        write_official_outputs(args.out, report.outcomes, report.keys,
                               round(report.phases.get("total", 0.0), 2))
    return report


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict, no_exec=args.no_exec, dry=args.dry_run)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        indicted = any(c.id in ("census.verdict", "input.fatal") and c.status is Status.FAIL
                       for c in report.checks) or strict_uncertified(report.checks)
        return EXIT_GRADER if indicted else EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    print_submission_output({f"step {s}": r for s, r in report.outcomes.items() if not r.passed},
                            max_lines=40, max_chars=300)
    print_report(report.checks, result, score, report.keys, quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {"steps": {s: dataclasses.asdict(r) for s, r in report.outcomes.items()}}


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    keys = summary_keys(checks, {}, "", "", False)
    return {k: keys[k] for k in ("step_accuracy", "problem_accuracy")}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ("also official-style outputs (scicode.json, scicode.txt, logs/) and resume/: each step's "
            "judged result as it finishes; a rerun with the same DIR, inputs and grader skips the "
            "steps already graded (one generation set per DIR)")
REPORT_SCHEMA = embed_json("schemas/grade_scicode.report.schema.json")
