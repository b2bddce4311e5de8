"""VERDICT (a part of grade_fem.py; see CONTRIBUTING.md)."""
from graders.common.records import Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# VERDICT
# =============================================================================
def tier_of(check_id: str) -> str:
    return check_id.split(".", 1)[0]


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  Seed "Score behavior": any failure
    outside Tier 3 -> 0.0; --strict and a review flag -> 0.0; a Tier 3 failure
    (missing artifact, artifact checks, 1e-11 < deviation <= 1e-9) -> 0.5."""
    if no_exec:
        return "UNGRADED", None
    fails = [c for c in checks if c.status is Status.FAIL]
    if any(tier_of(c.id) != "tier3" for c in fails):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    if fails:
        return "PARTIAL", 0.5
    return "PASS", 1.0


