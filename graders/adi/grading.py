"""GRADING (a part of grade_adi.py; see CONTRIBUTING.md)."""
import os
import platform
import threading
import time
from graders.adi.causal import (_job_label, _log_int, adi_counted, benchmark_step_check, causal_audit_check,
    determinism_check, interface_check, structure_checks, submission_theta, tag_order,
    witness_check)
from graders.adi.guarded import load_npz_file
from graders.adi.hidden import hidden_checks, hidden_reference
from graders.adi.early import EarlyRun, ReplayAhead, keep_heap
from graders.adi.reproducibility import decode_jobs, field_check, regeneration_checks
from graders.adi.schema import (MANDATORY_ARRAYS, Submitted, TIER3_ARRAYS, check_array_schema,
    check_tier3_arrays, fitted_order)
from graders.adi.sidecar import (check_convergence_table, check_finest_mesh, check_observed_order,
    check_scheme, check_sidecar_fields, check_time_step_rule)
from graders.adi.spec import SPEC
from graders.adi.static import audit_submission_sources
from graders.adi.tiers import tier1_checks, tier2_checks, tier3_static_checks
from graders.adi.verdict import TIER3_PREFIX
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Report, Status
from graders.common.reports import progress
from graders.common.sandbox import sandbox_check
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> Report:
    """Every record of the seed's checks: files, imports, arrays, sidecar, tiers, then (unless
    --no-exec or already 0.0) one isolated run of every job beside the hidden reference.  The
    run's child starts before the static checks and waits for them (EarlyRun); it is stopped
    however the grading ends."""
    early, ahead = None, ReplayAhead()
    if not no_exec and os.path.isfile(os.path.join(submission, SPEC["solver_file"])):
        early = EarlyRun(submission, budget, watch=ahead.watch)
    try:
        report = Report(submission)
        checks, phases, outcomes, keys = report.checks, report.phases, report.outcomes, report.keys
        t0 = time.monotonic()
        sub = Submitted()
        report.figures_data["submitted"] = sub                          # PLOTS: filled below
        solver_path = os.path.join(submission, SPEC["solver_file"])
        missing = [f for f in (SPEC["solver_file"], SPEC["results_file"], SPEC["arrays_file"])
                   if not os.path.isfile(os.path.join(submission, f))]
        checks.append(Check("static.files", Status.FAIL if missing else Status.PASS,
                            f"missing: {', '.join(missing)}" if missing else "adi_solver.py, results.json, "
                            "reference_arrays.npz present"))
        # dependency allowlist (static): the solver and any module beside it
        if os.path.isfile(solver_path):
            checks += audit_submission_sources(submission)
        # array schema
        try:
            sub.arrays = load_npz_file(os.path.join(submission, SPEC["arrays_file"]), "schema.npz",
                                       SPEC["max_npz_bytes"], only=MANDATORY_ARRAYS + TIER3_ARRAYS)
        except Reject as exc:
            checks.append(exc.check)
        if sub.arrays is not None:
            checks += check_array_schema(sub)
            checks += check_tier3_arrays(sub)
        # sidecar
        try:
            sub.results = read_json_file(os.path.join(submission, SPEC["results_file"]), "sidecar.json",
                                         SPEC["max_json_bytes"])
            if not isinstance(sub.results, dict):
                raise Reject("sidecar.json", "results.json must hold a JSON object")
        except Reject as exc:
            checks.append(exc.check)
            sub.results = None
        if sub.results is not None:
            if sub.e is not None:
                checks += check_convergence_table(sub)
                checks += check_observed_order(sub)
            checks += check_sidecar_fields(sub)
            checks += check_time_step_rule(sub)
            checks += check_scheme(sub)
            checks += check_finest_mesh(sub)
        # numerical tiers, from the submitted errors (verified below by regeneration)
        if sub.e is not None:
            checks += tier1_checks(sub.e)
            checks += tier2_checks(sub.h, sub.e)
            keys["errors_submitted"] = [float(v) for v in sub.e]
            keys["fitted_order"] = float(fitted_order(sub.h, sub.e))
            if sub.tier3 is not None:
                checks += tier3_static_checks(sub)
        phases["static"] = time.monotonic() - t0
        progress(f"static checks done ({len(checks)} records)")
        if no_exec:
            checks.append(Check("provenance.exec", Status.SKIP, "--no-exec: the solver was not run; "
                                "provenance unverified, no score"))
            return report
        if early is None or sub.e is None or any(c.status is Status.FAIL and not c.id.startswith(TIER3_PREFIX)
                                                 for c in checks):
            checks.append(Check("provenance.exec", Status.SKIP, "not executed: the static checks already "
                                "score 0.0"))
            return report
        # execution: the grader's reference runs beside the isolated child
        keep_heap()
        t1 = time.monotonic()
        ref_box = {}

        def compute_reference():
            # (the child was launched before the static checks: EarlyRun)
            try:
                ref_box["ref"] = hidden_reference()
            except BaseException as exc:   # surfaces below as a grader failure
                ref_box["error"] = exc
            try:    # the witness replay's own library (monolithic_map), imported here while the child starts
                __import__("scipy.sparse.linalg")   # up, not after the run (~0.05 s off the tail); imported
            except ImportError:                     # again where used (an error surfaces there)
                pass
            platform.platform()             # (the report's platform string runs `uname -p` once: here,
            ahead.allow()                   # not after the run) this thread's work done: ReplayAhead may fork

        worker = threading.Thread(target=compute_reference, daemon=True)
        worker.start()
        progress("solver jobs started in an isolated child; hidden reference computing")
        outcome = early.go()
        checks.append(sandbox_check())          # after the run: it established the level
        outcomes["solve"] = outcome
        worker.join()
        phases["execute"] = time.monotonic() - t1
        progress(f"solver jobs finished: {outcome.status} ({phases['execute']:.1f} s)")
        if "error" in ref_box:
            raise RuntimeError(f"hidden-instance reference could not be computed: {ref_box['error']!r}")
        ready, jobs, violations = decode_jobs(outcome)
        if outcome.forged:
            checks.append(Check("provenance.channel", Status.REVIEW,
                                f"{outcome.forged} unauthenticated line(s) on the result channel ignored"))
        if ready is None or ready.get("kind") != "ready":
            why = ready.get("error") if ready else f"{outcome.status}: {outcome.reason}"
            checks.append(Check("provenance.solver", Status.FAIL, f"adi_solver.py could not be imported: {why}"))
            checks += [c for c in structure_checks({}, violations, ready) if c.status is Status.FAIL]
            return report
        sig_ok = bool(ready.get("signature_ok"))
        checks.append(Check("provenance.solver", Status.PASS if sig_ok else Status.FAIL,
                            f"solve{ready.get('signature', '')}" + ("" if sig_ok else
                            ": must be solve(h, T=1.0, problem=None)")))
        regen_checks, regen = regeneration_checks(sub, jobs, outcome)
        checks += regen_checks
        checks += hidden_checks(jobs, ref_box["ref"])
        checks += causal_audit_check(jobs, outcome)
        found = {}
        checks += witness_check(jobs, submission_theta(jobs), found=found)
        ahead.collect()                 # the replays computed while the run went on (read back by digest)
        checks += benchmark_step_check(jobs, found, submission_theta(jobs))
        checks += interface_check(jobs)
        checks += determinism_check(jobs)
        checks += structure_checks(jobs, violations, ready)
        checks += field_check(sub, jobs)
        report.figures_data.update(regenerated=regen, jobs=jobs, hidden_reference=ref_box["ref"])   # PLOTS
        keys["errors_regenerated"] = [None if v is None else float(v) for v in regen]
        hid = [c.measured for c in checks if c.id.startswith("hidden.error")]
        keys["hidden_errors"] = [float(v) if isinstance(v, float) else None for v in hid]
        keys["observed_solves"] = [{"run": _job_label(t), "solves": _log_int(jobs[t]["log"], "count")}
                                   for t in sorted(jobs, key=tag_order)]
        theta = submission_theta(jobs)
        keys["adi_operator_solves"] = [{"run": _job_label(t), "solves": adi_counted(jobs[t]["log"], theta)}
                                       for t in sorted(jobs, key=tag_order)]
        return report
    finally:
        ahead.close()
        if early is not None:
            early.stop()            # (after go(): nothing left to do)

