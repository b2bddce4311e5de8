"""VERDICT (a part of grade_adi.py; see CONTRIBUTING.md)."""
from graders.common.records import Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# VERDICT
# =============================================================================
TIER3_PREFIX = "tier3."


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  Any FAIL outside Tier 3 -> 0.0;
    REVIEW under --strict -> 0.0; Tier 3 all PASS -> 1.0, otherwise 0.5."""
    if no_exec:
        return "UNGRADED", None
    if any(c.status is Status.FAIL and not c.id.startswith(TIER3_PREFIX) for c in checks):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    tier3 = [c for c in checks if c.id.startswith(TIER3_PREFIX)]
    if tier3 and all(c.status is Status.PASS for c in tier3):
        return "PASS", 1.0
    return "PARTIAL", 0.5


