"""EXECUTION (a part of grade_fem.py; see CONTRIBUTING.md)."""
import os
import platform
import shutil
import threading
import time
from graders.common.records import (Check, Report, Status, join_unless_interrupted, new_work_dir,
    remove_work_dir)
from graders.common.runner import RunOutcome, run_isolated
from graders.fem.audit_live import AuditSession
from graders.fem.driver_run import FEM_DRIVER
from graders.fem.header import GRADER_NAME
from graders.fem.judging import (check_artifact_provenance, check_causal, check_deterministic,
    check_fidelity, check_import_phase, check_library_intact, check_recorded_solves, check_records,
    check_regenerated, check_regenerated_tiers, check_reproduction, check_runtime_modules,
    check_solve_system, check_solve_writes, collect_regeneration, job_results, plan_jobs)
from graders.fem.problem import reference_study, worst
from graders.fem.spec import SPEC
from graders.fem.system_map import free_system, own_stiffness_maps
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# EXECUTION: the isolated phases, run beside the grader's own solution
# =============================================================================
def stage_solver(sub: str, stage: str) -> str:
    """A directory holding only fem_solver.py: the child never sees the submitted
    outputs (a solver cannot replay reference_arrays.npz) nor stale bytecode."""
    os.mkdir(stage)         # in the staging work dir: never made again once removed
    shutil.copyfile(os.path.join(sub, SPEC["solver_file"]), os.path.join(stage, SPEC["solver_file"]))
    return stage


class Execution:
    """The isolated run (one fresh fork per solve(n) call, clean and audited mixed in a
    random order, `job_concurrency` at once), started early so that it runs while the
    grader checks the files and computes its own solution."""

    def __init__(self, sub: str, budget: float):
        self.plan = plan_jobs()
        self.session = AuditSession(self.plan)
        self.outcome = None
        self.threads: list = []
        self.tmp = new_work_dir(f"{GRADER_NAME}-stage-")
        try:
            stage = stage_solver(sub, os.path.join(self.tmp, "submission"))
        except OSError as exc:
            self.outcome = RunOutcome("error", [], f"could not stage {SPEC['solver_file']}: {exc}",
                                      0.0, None, "", "")
            return
        request = {"jobs": [{"id": jid, "n": job["n"]} for jid, job in self.plan.items()],
                   "job_timeout": budget, "max_calls": SPEC["max_calls"],
                   "concurrency": SPEC["job_concurrency"]}
        self.launched = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True, args=(stage, budget, request)),
                        threading.Thread(target=self._prepare, daemon=True)]
        for t in self.threads:
            t.start()
        # The child's launch (copy, driver file, Popen) is on the critical path: the grader's
        # own work (numpy's import first) waits for it rather than take the interpreter lock
        # from it (~50 ms of the wall time on a busy machine).
        try:
            self.launched.wait(SPEC["launch_wait_s"])
        except BaseException:           # Ctrl-C before grade() holds this run: the copy goes now
            self.discard()
            raise

    def _run(self, stage: str, budget: float, request: dict) -> None:
        try:
            self.outcome = run_isolated(stage, FEM_DRIVER, request, budget,
                                        interact=self.session.interact, no_site=("numpy", "scipy"),
                                        launched=self.launched.set)
        finally:
            self.launched.set()

    def _prepare(self) -> None:
        """While the child starts up (~0.7 s): the grader's K and F, and the stiffness maps of
        K itself, ready before the first solve is shown to it (a job waits for its answer);
        the platform string of the report (platform.platform() runs `uname -p` once)."""
        self.launched.wait(SPEC["launch_wait_s"])
        for n in SPEC["meshes"]:
            free_system(n)
        for n in SPEC["meshes"]:
            own_stiffness_maps(n)
        platform.platform()

    def join(self):
        """The run's RunOutcome, once it is over."""
        for t in self.threads:
            if not join_unless_interrupted(t):
                return None             # Ctrl-C: the unwind goes on (the children are killed)
        return self.outcome

    def discard(self) -> None:
        """Remove the staged copy (the runner copies it at each launch, a relaunch included):
        grade() calls this in a finally, however the grading ends."""
        remove_work_dir(self.tmp)


def execution_checks(run: Execution, arrs: dict, report: Report) -> list:
    """Compute the grader's own solution while the jobs run, then judge the recorded runs
    (the regenerated fields are kept in report.figures_data for --plot)."""
    phases, outcomes, keys = report.phases, report.outcomes, report.keys
    t0 = time.monotonic()
    try:
        ref = reference_study()
    finally:
        phases["reference"] = time.monotonic() - t0
        outcome = run.join()
    plan, session = run.plan, run.session
    if outcome is not None:
        outcomes["regen"] = outcome
        phases["regen"] = outcome.wall
    results = job_results(outcome, plan)
    out = check_import_phase(outcome, results)
    meshes = collect_regeneration(outcome, plan, results)
    fields = report.figures_data["fields"] = {}
    out += check_regenerated(outcome, meshes, fields)
    out += check_solve_writes(meshes) if meshes else []
    out += check_reproduction(fields, arrs)
    out += check_deterministic(plan, results, session, fields)
    out += check_regenerated_tiers(fields)
    out += check_fidelity(fields, ref)
    out += check_solve_system(plan, results, session, fields)
    out += check_causal(plan, results, session, fields)
    out += check_records(plan, results, session)
    out += check_recorded_solves(plan, results, session)
    out += check_library_intact(results)
    out += check_runtime_modules(results)
    out += check_artifact_provenance(fields, arrs)
    if session.faults:
        out.append(Check("provenance.audit_exchange", Status.INFO, f"{len(session.faults)} malformed "
                         f"audit message(s) ignored: {session.faults[0]}"))
    if outcome is not None and outcome.forged:
        out.append(Check("provenance.channel", Status.INFO,
                         f"{outcome.forged} line(s) on the reply channel refused"))
    entry = [c for jid, calls in session.calls.items() if plan[jid]["mode"] == "clean" for c in calls]
    keys["solve_entry_points"] = sorted({str(c.get("fn")) for c in entry if c.get("K")})
    if fields and SPEC["artifact_n"] in fields and "uh_dense" in arrs:
        keys["artifact_deviation"] = float(worst(arrs["uh_dense"] - fields[SPEC["artifact_n"]][1])[1])
    return out


