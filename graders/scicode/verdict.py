"""VERDICT (a part of grade_scicode.py; see CONTRIBUTING.md)."""
from graders.common.records import Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# VERDICT
# =============================================================================
def verdict(checks: list, *, strict: bool, no_exec: bool, dry: bool = False) -> tuple:
    """(result, score) from records alone: score = passed step records / step
    records; UNGRADED when nothing ran, a dry run proved only the plumbing, the census
    indicted the harness, or --strict without file isolation (not certified)."""
    if no_exec or dry:
        return "UNGRADED", None
    if strict and any(c.id == "sandbox.file_isolation" and c.status is Status.REVIEW for c in checks):
        return "UNGRADED", None
    if any(c.id == "census.verdict" and c.status is Status.FAIL for c in checks):
        return "UNGRADED", None
    if any(c.id in ("input.fatal", "input.usage") for c in checks):
        return "UNGRADED", None
    steps = [c for c in checks if c.id.startswith("step.")]
    if not steps:
        return "UNGRADED", None
    passed = sum(c.status is Status.PASS for c in steps)
    score = round(passed / len(steps), 4)
    result = "PASS" if passed == len(steps) else "PARTIAL" if passed else "FAIL"
    return result, score


