"""HARNESS-FAULT CENSUS (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import re
from graders.common.records import Check, Status
from graders.scicode.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# HARNESS-FAULT CENSUS
# =============================================================================
def _not_raised_by_submission(f: dict) -> bool:
    """The failure did not pass through generated code: a generation that raises
    `NameError('target')`, `ModuleNotFoundError('scicode')` or its own `TargetsMissing`
    class must not void the run by imitating a harness signature."""
    return f.get("origin") != "submission" and not f.get("via_submission")


def _harness_evidence(f: dict, what: str) -> bool:
    """Is the harness to blame for a failure that names `what` (targets, shim, grader)?  By
    the grader's own evidence when it has it: it knows whether it delivered this case's
    target stand-in and whether the worker imported the shim before any generated code ran;
    a failure the grader itself found carries origin "grader".  Given the evidence, a
    delivered target or shim that went missing was removed by generated code: the model's.
    Without evidence (a failure list from elsewhere, e.g. an upstream log), the signature
    and where it was raised decide, as the seed's census does."""
    ev = f.get("evidence")
    if ev is None:
        return _not_raised_by_submission(f)
    if what == "grader":
        return f.get("origin") == "grader"
    return not ev.get(what, False)


HARNESS_RULES = (
    # (rule id, predicate over (signature, failure dict)), seed "Harness-fault census"
    ("target_name_error", lambda sig, f: re.match(r"NameError: name '(_scicode_)?target", sig) is not None
     and _harness_evidence(f, "targets")),
    ("scicode_module_missing", lambda sig, f: sig.startswith(("ModuleNotFoundError: No module named 'scicode",
                                                              "ImportError: cannot import name")) and "scicode" in sig
     and _harness_evidence(f, "shim")),
    ("h5_group_missing", lambda sig, f: sig.startswith(("TargetsMissing", "TargetsUnreadable"))
     and _harness_evidence(f, "grader")),
    # a dependency line of the problem failed to import (they run before any generated code)
    ("dependency_missing", lambda sig, f: f.get("phase") == "deps"),
    ("special_context_lost", lambda sig, f: bool(f.get("lost_context"))),
    ("worker_fault", lambda sig, f: sig.startswith("WorkerFault") and _harness_evidence(f, "grader")),
    # a test form the grader cannot judge without the target in the step's process
    ("target_form_unsupported", lambda sig, f: sig.startswith("UnsupportedTargetUse")
     and f.get("origin") == "grader"),
)
# the seed's named signatures: any occurrence indicts the run
INDICTING_RULES = ("target_name_error", "scicode_module_missing", "h5_group_missing")


def signature(failure: dict) -> str:
    """Exception type and normalised message: numbers, addresses and long quotes folded."""
    kind = failure.get("type") or "Error"
    msg = (failure.get("message") or "").strip().splitlines()
    msg = msg[0] if msg else ""
    msg = re.sub(r"0x[0-9a-fA-F]+", "ADDR", msg)
    msg = re.sub(r"(?<![\w'])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", "N", msg)
    msg = re.sub(r"'([^']{40})[^']+'", r"'\1...'", msg)[:160]
    origin = failure.get("origin")
    where = f" (in {origin})" if kind == "AssertionError" and origin in ("submission", "library") else ""
    return f"{kind}{where}: {msg}" if msg else f"{kind}{where}"


def classify(failure: dict) -> str:
    """'harness:<rule>' or 'model'."""
    sig = signature(failure)
    for rule, pred in HARNESS_RULES:
        if pred(sig, failure):
            return f"harness:{rule}"
    return "model"


def is_test_verdict(failure: dict) -> bool:
    """A plain assertion raised by the test itself: the model's wrong answer."""
    return failure.get("type") == "AssertionError" and failure.get("origin") == "test"


def census(failures: list, strict: bool) -> tuple:
    """(records, indicted, reasons) from each failed step's first failure, each classified
    by its own evidence (a signature shared by failures of different classes is counted once
    per class, never by whichever failure came first).
    Indict when: a seed-named harness class occurs; or >= 10 failures all share one
    signature and they are not all the test's own assertion; or, --strict, any
    harness-classified failure."""
    counts, samples = {}, {}
    for f in failures:
        key = (signature(f), classify(f))
        counts[key] = counts.get(key, 0) + 1
        samples.setdefault(key, []).append(f.get("step", "?"))
    reasons = []
    for (sig, cls), n in counts.items():
        rule = cls.partition(":")[2]
        if rule in INDICTING_RULES:
            reasons.append(f"{n}x {sig} ({rule})")
    total = len(failures)
    sigs = {sig for sig, _ in counts}
    if total >= SPEC["census_min_failures"] and len(sigs) == 1 and \
            not all(is_test_verdict(f) for f in failures):
        reasons.append(f"100% of {total} failures share one signature: {next(iter(sigs))}")
    harness = sum(n for (sig, cls), n in counts.items() if cls != "model")
    if strict and harness and not reasons:
        reasons.append(f"--strict: {harness} harness-fault failure(s)")
    records = []
    for (sig, cls), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        steps = samples[(sig, cls)]
        records.append(Check("census.signature", Status.INFO,
                             f"{n:>4}x [{cls}] {sig}  (steps {', '.join(steps[:6])}"
                             f"{', ...' if len(steps) > 6 else ''})", n, cls))
    if reasons:
        records.append(Check("census.verdict", Status.FAIL,
                             "harness indicted, score not certified: " + "; ".join(reasons),
                             harness, total))
    elif harness:
        records.append(Check("census.harness_faults", Status.REVIEW,
                             f"{harness} of {total} failure(s) are harness faults, counted as failed "
                             "steps but not the model's fault", harness, total))
        records.append(Check("census.verdict", Status.PASS,
                             f"{total} failure(s), no indicting pattern"))
    else:
        records.append(Check("census.verdict", Status.PASS,
                             f"{total} failure(s), all model faults" if total else "no failures"))
    return records, bool(reasons), reasons


