"""GRADING (a part of grade_adi.py; see CONTRIBUTING.md)."""
import os
import threading
import time
from graders.adi.causal import (_job_label, _log_int, adi_counted, benchmark_step_check, causal_audit_check,
    determinism_check, interface_check, structure_checks, submission_theta, tag_order,
    witness_check)
from graders.adi.guarded import load_npz_file
from graders.adi.hidden import hidden_checks, hidden_reference
from graders.adi.reproducibility import (decode_jobs, driver_request, field_check, perturb_seed,
    plan_jobs, regeneration_checks, request_draws)
from graders.adi.schema import (MANDATORY_ARRAYS, Submitted, TIER3_ARRAYS, check_array_schema,
    check_tier3_arrays, fitted_order)
from graders.adi.sidecar import (check_convergence_table, check_finest_mesh, check_observed_order,
    check_scheme, check_sidecar_fields, check_time_step_rule)
from graders.adi.spec import SPEC
from graders.adi.static import audit_submission_sources
from graders.adi.structure import DRIVER_BODY
from graders.adi.tiers import tier1_checks, tier2_checks, tier3_static_checks
from graders.adi.verdict import TIER3_PREFIX
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Report, Status
from graders.common.reports import progress
from graders.common.runner import run_isolated
from graders.common.sandbox import sandbox_check
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def keep_heap() -> None:
    """glibc's malloc returns freed memory above 128 KiB to the system at once (mmap/trim), so
    every 159 x 159 array of the step witness's replay (200 KB, ~10 per step) comes back as fresh
    zeroed pages: measured, the finest mesh's replay took 0.39 s of CPU this way and 0.19 s with the
    heap kept (mallopt M_TRIM_THRESHOLD / M_MMAP_THRESHOLD raised).  Only the grader's own process
    (a child started by exec does not inherit it); a no-op where the C library has no mallopt."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(-1, 256 << 20)          # M_TRIM_THRESHOLD: free memory kept up to 256 MiB
    mallopt(-3, 16 << 20)           # M_MMAP_THRESHOLD: blocks below 16 MiB from the heap


# glibc's malloc in the child kept from handing every freed 161 x 161 array back to the system
# (what keep_heap does in the grader): the solver's own steps allocate a few such arrays each, and
# with the defaults each comes back as fresh zeroed pages (measured: the gold's finest run ~15 %
# less CPU).  No result changes; other C libraries ignore the variables.  Blocks from 256 KiB up
# (a 161 x 161 array is 203 KiB) are still mapped on their own and unmapped when freed, and at most
# 64 MiB of free heap top is kept (glibc's own dynamic maximum): with a 16 MiB mapping threshold and
# 256 MiB kept, an honest solver's dropped 8 MiB temporaries stayed a hole in the heap below a small
# array it kept, and its later workspace, within the address-space limit under the defaults, raised
# MemoryError (red team round 7, tests/test_adi_red_round7.py).
CHILD_MALLOC = {"MALLOC_TRIM_THRESHOLD_": str(64 << 20), "MALLOC_MMAP_THRESHOLD_": str(256 << 10)}


class EarlyRun:
    """The isolated run, started before the static checks and held at its gate: the child's
    start-up (sandbox, interpreter, numpy/scipy and the recorder's set-up, a few tenths of a
    second) overlaps the grader's static checks; no job (nothing of the submission) runs before
    go(), and stop() ends it when the static checks already score 0.0.  The request does not
    depend on the static checks (a fresh plan, seed and draws, as before)."""

    def __init__(self, submission: str, budget: float):
        self.launched = threading.Event()
        self._said, self._word, self._box = threading.Event(), [False], {}
        request = driver_request(plan_jobs(), perturb_seed(), draws=False)    # (no numpy needed yet)
        self._late = {}

        def run():
            try:
                self._box["outcome"] = run_isolated(submission, DRIVER_BODY, request, budget,
                                                    no_site=("numpy", "scipy"), launched=self.launched.set,
                                                    gate=self._gate, env_set=CHILD_MALLOC)
            except BaseException as exc:     # surfaces in go() as a grader failure
                self._box["error"] = exc
            finally:
                self.launched.set()
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self.launched.wait(SPEC["launch_wait_s"])    # the launch first (the interpreter lock)

    def _gate(self):
        self._said.wait()
        return dict(self._late) if self._word[0] else False

    def go(self):
        """Let the jobs run (the draws go with the word); the run's outcome (raises what the
        runner raised)."""
        self._late.update(request_draws())
        self._word[0] = True
        self._said.set()
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        return self._box["outcome"]

    def stop(self) -> None:
        """No job runs; the child is ended and its folder removed."""
        if not self._said.is_set():
            self._said.set()
        self._thread.join()


def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> Report:
    """Every record of the seed's checks: files, imports, arrays, sidecar, tiers, then (unless
    --no-exec or already 0.0) one isolated run of every job beside the hidden reference.  The
    run's child starts before the static checks and waits for them (EarlyRun)."""
    early = None
    if not no_exec and os.path.isfile(os.path.join(submission, SPEC["solver_file"])):
        early = EarlyRun(submission, budget)
    try:
        return _grade(submission, early, strict=strict, no_exec=no_exec)
    finally:
        if early is not None:
            early.stop()            # (after go(): nothing left to do)


def _grade(submission: str, early, *, strict: bool, no_exec: bool) -> Report:
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

    worker = threading.Thread(target=compute_reference, daemon=True)
    worker.start()
    progress("solver jobs started in an isolated child; hidden reference computing")
    outcome = early.go()
    checks.append(sandbox_check())          # after the run: it established the level
    outcomes["solve"] = outcome
    checks.append(sandbox_check())
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


