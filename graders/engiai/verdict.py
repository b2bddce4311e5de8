"""VERDICT (a part of grade_engiai.py; see CONTRIBUTING.md)."""
from graders.common.records import Status
from graders.engiai.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# VERDICT
# =============================================================================
def verdict(checks: list, *, strict: bool) -> tuple:
    """(result, score) from records alone.  Score = mean over the scorable cells' means and a
    0.0 for every INVALID cell, every UNSCORABLE cell holding a None the agent's own artefact
    caused (unusable samples), and every malformed trial with no cell (run.unplaced_trials): a
    malformed record or artefact never raises the SCORE (issue 16).  UNSCORABLE/UNSUPPORTED
    cells of harness gaps only (the seed's None: no baseline, no ground truth) stay out of it."""
    cells = [c.measured for c in checks if c.id.startswith("cell.") and isinstance(c.measured, dict)]
    means = [c["mean"] for c in cells if c.get("status") == "scored"]
    zeros = [0.0] * sum(c.get("status") == "invalid" or
                        (c.get("status") == "unscorable" and bool(c.get("n_artefact_none")))
                        for c in cells)
    zeros += [0.0] * sum(int(c.measured) for c in checks if c.id == "run.unplaced_trials")
    inconclusive = any(c.status in (Status.FAIL, Status.REVIEW) for c in checks)
    if strict and (inconclusive or not means):
        return "FAIL", 0.0
    if not means and not zeros:
        return "UNGRADED", None
    means += zeros          # a run of broken trials only is graded 0.0 (issue 24), not UNGRADED
    exact = sum(means) / len(means)
    score = round(exact, 4)
    if score == 1.0 and exact < 1.0 - SPEC["full_score_tol"]:
        score = 0.9999           # below full never prints (or exits) as full
    return ("PARTIAL" if inconclusive else "PASS"), score


