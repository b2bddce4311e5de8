"""PRINTING AND CLI (a part of grade_fem.py; see CONTRIBUTING.md)."""
from graders._embed import embed_json
from graders.common.cli_solver import apply_memory
from graders.common.records import Report, Status
from graders.fem.grading import grade
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "e_star_n(32)": lambda v, keys: f"{v:.6e}",
    "dense_orders_clean": lambda v, keys: " ".join(f"{b:.3f}" for b in v),
    "nodal_error(32)": lambda v, keys: f"{v:.3e}",
    "solve_entry_points": lambda v, keys: ", ".join(v) or "none observed",
    "artifact_deviation": lambda v, keys: f"{v:.3e}",
}
LEADERBOARD = (("score", "score", "desc"), ("review_required", "keys.review_required", "asc"))
POSITIVE_OPTIONS = ("budget", "memory")
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))
SUBMISSIONS_HELP = "directory with fem_solver.py, results.json, reference_arrays.npz"


def grade_submission(args, submission: str) -> Report:
    apply_memory(args)
    return grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    return {"review_required": sum(c.status is Status.REVIEW for c in checks)}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ""
REPORT_SCHEMA = embed_json("schemas/grade_fem.report.schema.json")
