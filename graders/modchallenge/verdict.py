"""VERDICT (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
from graders.common.records import Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# VERDICT
# =============================================================================
RANK_GATES = ("g1.", "g2.", "g3.", "g4.", "g5.", "g6.", "g7.")


def _gate(cid: str) -> str:
    return cid.split(".", 1)[1] + "." if cid.startswith("s") and cid[1:2].isdigit() else cid


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  SCORE = overall_accuracy (mean over seeds) when
    gates 1-7 pass; a failed gate 1-7 gives FAIL 0.0; incomplete tiers (gate 8) only lower it."""
    if no_exec:
        return "UNGRADED", None
    fails = [c for c in checks if c.status is Status.FAIL]
    if any(_gate(c.id).startswith(RANK_GATES) for c in fails):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    overall = [c.measured for c in checks if c.id.endswith("rank.overall_accuracy")]
    if not overall:
        return "FAIL", 0.0
    score = round(sum(overall) / len(overall), 4)
    if score >= 1.0 and not fails:
        return "PASS", 1.0
    return ("PARTIAL", score) if score > 0 else ("FAIL", 0.0)


