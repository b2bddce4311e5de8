"""PRINTING AND CLI (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import argparse
import json
import os
import secrets
import time
from graders._embed import embed_json
from graders.common.options import add_shared_option, subset_requested, subset_text
from graders.common.records import Check, Report, Status
from graders.common.reports import (CliParser, EXIT_FULL, UsageError, add_report_options,
    check_output_path, progress_end, progress_phase, progress_start, tree_sha256)
from graders.modchallenge.gates_runtime import memory_options
from graders.modchallenge.grading import grade
from graders.modchallenge.header import GRADER_NAME
from graders.modchallenge.seeds import _RESUME_OPTIONS
from graders.modchallenge.spec import SPEC, TIERS
from graders.modchallenge.testgen import generate_test_set, write_test_set
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {}    # typed key -> printed text (all keys use format_value's defaults)
LEADERBOARD = (("highest_tier_above_90", "keys.highest_tier_above_90", "desc"),
               ("overall_accuracy", "keys.overall_accuracy", "desc"), ("score", "score", "desc"))
POSITIVE_OPTIONS = ("budget", "load_timeout", "memory")
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def _default_jobs() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):
        return max(1, min(4, os.cpu_count() or 1))


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="SCORE = overall_accuracy (mean over seeds) when gates 1-7 pass, else 0.0; "
               "RESULT PASS = SCORE 1.0 with every gate passed, PARTIAL = ranked and 0 < SCORE < 1, "
               "FAIL = a gate 1-7 failed or SCORE 0.\n"
               "exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure, 130 interrupted; with "
               "several submissions, the largest of theirs")
    add_report_options(p, submissions_help="directory with manifest.json, the model's Python code "
                       "and weights", jobs=False)
    p.add_argument("--total", type=int, default=SPEC["total"],
                   help="problems in the test set, a multiple of 11 (default %(default)s)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seed", metavar="HEX", help="master seed as hex (bytes.fromhex); default: random")
    g.add_argument("--public", action="store_true",
                   help="the public benchmark seed (hex of b'modchallenge-public-benchmark-v1')")
    g.add_argument("--seeds", metavar="LIST|N",
                   help="several seeds: a count N of random seeds, or a comma list of hex / 'public'; "
                        "prints the robustness table")
    g.add_argument("--test-set", metavar="DIR",
                   help="grade on tier_<k>.jsonl files from DIR instead of generating (every row is "
                        "re-checked: expected recomputed, p prime and p, a, b within the tier)")
    add_shared_option(p, "--limit", "problems of each tier (a SUBSET run: RESULT: SUBSET, no "
                      "SCORE line)", type=int, default=None)
    p.add_argument("--tier", type=int, action="append", choices=range(1, len(TIERS)), metavar="K",
                   help="smoke test: grade only tier K (repeatable; tier 0, the unscored "
                        "diagnostic, always runs) (a SUBSET run)")
    add_shared_option(p, "--budget", "inference over all tiers, enforced from outside (default "
                      "%(default)s)", type=float, default=SPEC["budget_s"])
    p.add_argument("--load-timeout", type=float, default=SPEC["load_timeout_s"],
                   help="seconds allowed for import + load() (default %(default)s)")
    add_shared_option(p, "--memory", "the model's child process (default "
                      f"{SPEC['runner_mem_bytes'] / 2 ** 30:g}): its address space, or with --gpu its "
                      "resident memory", type=float, default=None)
    p.add_argument("--gpu", action="store_true",
                   help="GPU mode: no address-space limit (CUDA reserves far more virtual memory than "
                        "it uses); the child's resident memory is watched from outside instead and "
                        "the run is killed (a clean FAIL) when it exceeds --memory")
    p.add_argument("--skip-static-check", action="store_true",
                   help="skip gate 3, the static scan and the runtime guard (the harness's trusted-use mode)")
    add_shared_option(p, "--jobs", "worker processes for the large primes of test generation "
                      "(default %(default)s); with several submissions, how many are graded at a "
                      "time (each then generates with one worker)", type=int, default=_default_jobs())
    p.add_argument("--write-tests", metavar="DIR",
                   help="no submission: write the generated set as DIR/tier_<k>.jsonl and exit 0")
    add_shared_option(p, "--strict")
    add_shared_option(p, "--no-exec", ": gates 1-4 only, RESULT: UNGRADED, exit 2")
    return p


def parse_seeds(args) -> list:
    """The seeds to grade, as bytes; ValueError on a bad value."""
    if args.public:
        return [SPEC["public_seed"]]
    if args.seed is not None:
        return [bytes.fromhex(args.seed)] if args.seed else [secrets.token_bytes(32)]
    if args.seeds is not None:
        text = args.seeds.strip()
        if text.isdigit() and "," not in text:
            n = int(text)
            if not 1 <= n <= 100:
                raise ValueError("--seeds N must be between 1 and 100")
            return [secrets.token_bytes(32) for _ in range(n)]
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise ValueError("--seeds: empty list")
        return [SPEC["public_seed"] if s == "public" else bytes.fromhex(s) for s in items]
    return [secrets.token_bytes(32)]


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    try:
        args.seed_list = [s.hex() for s in parse_seeds(args)]    # drawn once: every child grades the same
    except ValueError as exc:
        raise UsageError(f"bad seed: {exc}")
    if args.total <= 0 or args.total % len(TIERS):
        raise UsageError(f"--total must be a positive multiple of {len(TIERS)}")
    if args.test_set is not None and not os.path.isdir(args.test_set):
        raise UsageError(f"--test-set {args.test_set} is not a directory")
    if args.write_tests:
        if args.submissions or args.test_set or len(args.seed_list) != 1:
            raise UsageError("--write-tests takes no submission and one seed")
        if subset_requested(args):
            raise UsageError("--write-tests writes the whole test set: it takes no --limit or --tier")
        check_output_path(args.write_tests, "--write-tests", directory=True)
        return
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")
    if args.memory is not None and not 0 < args.memory <= SPEC["memory_gb_max"]:
        raise UsageError(f"--memory must be in (0, {SPEC['memory_gb_max']}] GiB")


def standalone_action(args):
    """--write-tests: generate and write the test set, no submission."""
    if not args.write_tests:
        return None
    seed = bytes.fromhex(args.seed_list[0])
    t = time.monotonic()
    progress_start(args, args.write_tests)
    progress_phase("generating the test set")
    try:
        test_set = generate_test_set(seed, args.total, max(1, args.jobs))
    finally:
        progress_end()
    paths = write_test_set(test_set, args.write_tests)
    print(f"seed: {seed.hex()}")
    print(f"wrote {len(paths)} files ({args.total} problems) to {args.write_tests} "
          f"in {time.monotonic() - t:.2f} s")
    return EXIT_FULL


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    subset = subset_of(args)
    _RESUME_OPTIONS.update(total=args.total, budget=args.budget, load_timeout=args.load_timeout,
                           subset=[subset["limit"], subset["tiers"]] if subset else None,
                           skip_static=args.skip_static_check, memory=args.memory, gpu=args.gpu,
                           test_set=tree_sha256(args.test_set)["sha256"] if args.test_set else None)
    report = grade(submission, seeds=[bytes.fromhex(s) for s in kept_seeds(args)], total=args.total,
                 budget=args.budget, load_timeout=args.load_timeout,
                 skip_static=args.skip_static_check, no_exec=args.no_exec, jobs=max(1, args.jobs),
                 test_dir=args.test_set, resume_dir=args.out,
                 memory=memory_options(args.memory, args.gpu), subset=subset)
    if subset:
        report.checks.append(Check("run.subset", Status.INFO, f"SUBSET: {subset['label']}; a "
                                   "smoke test, not a score of the test set"))
    return report


def subset_of(args):
    """--limit / --tier as grade()'s subset (with its label), or None when nothing is left out."""
    per = args.total // len(TIERS)
    tiers = sorted(set(args.tier or ()))
    kept_tiers = len(set(tiers) | {0}) if tiers else len(TIERS)
    graded = kept_tiers * min(args.limit or per, per)
    if graded >= args.total:
        return None
    return {"limit": args.limit, "tiers": tiers or None,
            "label": subset_text(graded, args.total, "problems", args)}


def kept_seeds(args) -> list:
    """The seeds to grade; with --out, random draws are kept in DIR/seeds.json, so a rerun of the
    same request (e.g. --seeds 5) grades the same seeds and can resume them."""
    if not args.out or args.public or args.seed or (args.seeds and "," in args.seeds):
        return args.seed_list
    path = os.path.join(args.out, "seeds.json")
    request = {"seeds": args.seeds, "seed": args.seed}
    try:
        with open(path) as fh:
            kept = json.load(fh)
        if kept.get("request") == request and len(kept.get("seeds", [])) == len(args.seed_list):
            return [bytes.fromhex(s).hex() for s in kept["seeds"]]
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    with open(path, "w") as fh:
        json.dump({"request": request, "seeds": args.seed_list}, fh)
    return args.seed_list


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records, as grade() computes them from its
    seeds (a seed without rank records counts 0.0 and -1; no seed reached: gates 1-3 failed)."""
    def values(name):
        return [c.measured for c in checks if c.id == name or c.id.split(".", 1)[-1] == name
                and c.id[:1] == "s" and c.id.split(".", 1)[0][1:].isdigit()]
    seeds = len(values("g4.testgen"))
    overall, htop = values("rank.overall_accuracy"), values("rank.highest_tier_above_90")
    if not seeds:
        return {"overall_accuracy": 0.0, "highest_tier_above_90": -1}
    return {"overall_accuracy": round(sum(overall) / seeds, 4),
            "highest_tier_above_90": min(htop + [-1] * (seeds - len(htop)))}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ("also each seed's result as it finishes; a rerun with the same DIR, submission, "
            "options and grader skips the seeds already graded")
REPORT_SCHEMA = embed_json("schemas/grade_modchallenge.report.schema.json")
