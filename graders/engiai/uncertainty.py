"""VERDICT: the SCORE's error bar (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import math
from graders.common.stats import t975
# -- end of source-tree preamble: the build keeps only what follows --
def score_terms(checks: list) -> tuple:
    """The terms verdict() averages into SCORE, read the same way from the records: the scored
    cells ({problem, style, n, mean}), and how many terms are 0.0 by rule (an INVALID cell, an
    UNSCORABLE one the agent's own artefact caused, an unplaced malformed trial).
    tests/test_reports_errorbars.py checks that their mean is verdict()'s SCORE."""
    cells = [c.measured for c in checks if c.id.startswith("cell.") and isinstance(c.measured, dict)]
    scored = [c for c in cells if c.get("status") == "scored"]
    zeros = sum(c.get("status") == "invalid" or
                (c.get("status") == "unscorable" and bool(c.get("n_artefact_none"))) for c in cells)
    zeros += sum(int(c.measured) for c in checks if c.id == "run.unplaced_trials")
    return scored, zeros


def score_error(checks: list, trials: list) -> dict:
    """SCORE (the mean of C terms: the scored cells' means and the rule's zeros) as an estimate:
    each cell mean's variance is sigma^2 / n_c with sigma the pooled within-cell standard
    deviation (one-way ANOVA; df = sum(n_c - 1)), since most cells hold one or two trials and
    cannot estimate their own spread; zeros by rule have none.  SE = sigma sqrt(sum 1/n_c) / C,
    the interval SCORE -+ t(df) SE clipped to [0, 1].  No cell with two trials: None."""
    scored, zeros = score_terms(checks)
    if not scored:
        return {}
    by_cell = {}
    for t in trials:
        if t.status == "scored":
            by_cell.setdefault((t.problem, t.style), []).append(t.score)
    ss, df = 0.0, 0
    for c in scored:
        values = by_cell.get((c["problem"], c["style"]), [])
        if len(values) >= 2:
            m = sum(values) / len(values)
            ss += sum((v - m) ** 2 for v in values)
            df += len(values) - 1
    if not df:
        return {"score_stderr": None, "score_ci95": None}
    terms = len(scored) + zeros
    se = math.sqrt(ss / df) * math.sqrt(sum(1 / c["n"] for c in scored)) / terms
    mean = (sum(c["mean"] for c in scored)) / terms
    half = t975(df) * se
    return {"score_stderr": round(se, 4),
            "score_ci95": [round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4)]}
