"""PRINTING AND CLI (a part of grade_adi.py; see CONTRIBUTING.md)."""
from graders._embed import embed_json
from graders.adi.grading import grade
from graders.common.cli_solver import apply_memory
from graders.common.records import Report, Status
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "errors_submitted": lambda v, keys: ", ".join(f"{e:.4e}" for e in v),
    "errors_regenerated": lambda v, keys: ", ".join("—" if e is None else f"{e:.4e}" for e in v),
    "hidden_errors": lambda v, keys: ", ".join("—" if e is None else f"{e:.3e}" for e in v),
}
LEADERBOARD = (("score", "score", "desc"), ("review_required", "keys.review_required", "asc"))
POSITIVE_OPTIONS = ("budget", "memory")
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))
SUBMISSIONS_HELP = "directory with adi_solver.py, results.json, reference_arrays.npz"


def grade_submission(args, submission: str) -> Report:
    apply_memory(args)
    report = grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)
    report.keys["review_required"] = sum(c.status is Status.REVIEW for c in report.checks)
    return report


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    return {"review_required": sum(c.status is Status.REVIEW for c in checks)}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ""
REPORT_SCHEMA = embed_json("schemas/grade_adi.report.schema.json")
