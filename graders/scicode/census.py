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
    # the worker could not import the scicode shim before any generated code ran
    ("shim_failed", lambda sig, f: sig.startswith("ShimFault") and f.get("origin") == "grader"),
    # a test form the grader cannot judge without the target in the step's process
    ("target_form_unsupported", lambda sig, f: sig.startswith("UnsupportedTargetUse")
     and f.get("origin") == "grader"),
)
# the seed's named signatures, and a harness that could not execute (a worker that never
# started, a shim that failed, targets it could not read): any occurrence indicts the run,
# whatever the number of steps
INDICTING_RULES = ("target_name_error", "scicode_module_missing", "h5_group_missing", "worker_fault",
                   "shim_failed")
GRADER_FOUND_NOT_RUN = ("MissingGeneration",)     # found by the grader: no generation to run


def generation_raised(f: dict) -> bool:
    """By the grader's own evidence, the generation's code or text caused this failure: its
    definition did not parse or extract, or the step's process reported it after generated
    code was defined (a context phase of the generation's own steps, its code, a test case,
    the run: an exception of any type or message, a timeout, a death, tampering, a refused
    value).  Not: what the grader found itself (origin "grader"), the problem's dependency
    lines (run before any generated code), reference context, a lost special step, a missing
    generation.  Without evidence (a failure list from elsewhere) only a traceback through
    generated code says so."""
    if f.get("origin") == "grader" or f.get("phase") == "deps" or f.get("lost_context"):
        return False
    if f.get("phase") == "extract":
        return f.get("type") not in GRADER_FOUND_NOT_RUN
    if f.get("evidence") is not None:
        return not (f.get("phase") == "context" and f.get("reference_context"))
    return not _not_raised_by_submission(f)


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


def census(failures: list, strict: bool, n_steps: int | None = None) -> tuple:
    """(records, indicted, reasons) from each failed step's first failure, each classified
    by its own evidence (a signature shared by failures of different classes is counted once
    per class, never by whichever failure came first).
    Indict when: a seed-named harness class, or a harness that could not execute, occurs;
    or >= 10 failures all share one signature and none was raised by a generation
    (generation_raised; n_steps: the run's step count, for "every step lacks a generation");
    or, --strict, any harness-classified failure."""
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
    # the seed's "100% of >= 10 failures share one signature": only failures no generation
    # raised by the grader's evidence (ten steps raising one exception are the model's ten
    # failures, however alike); a missing generation counts only when every step of the run
    # lacks one (an empty or misnamed folder), never as a way to void a low score
    if total >= SPEC["census_min_failures"] and len(sigs) == 1 and \
            not any(generation_raised(f) or is_test_verdict(f) for f in failures) and \
            (not all(f.get("type") in GRADER_FOUND_NOT_RUN for f in failures)
             or (n_steps is not None and total == n_steps)):
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


