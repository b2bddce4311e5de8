"""GRADING (a part of grade_fem.py; see CONTRIBUTING.md)."""
import os
import time
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Report, Status
from graders.common.reports import progress
from graders.common.sandbox import sandbox_check
from graders.fem.execution import Execution, execution_checks
from graders.fem.files import check_files
from graders.fem.guarded import load_npz_file
from graders.fem.problem import orders
from graders.fem.schema import check_schema
from graders.fem.sidecar import check_sidecar
from graders.fem.sources import check_source
from graders.fem.spec import SPEC
from graders.fem.tiers import check_tier1, check_tier2, check_tier3
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> Report:
    """Files and static scan, then (started early, running meanwhile) the isolated phases,
    the arrays, sidecar and tiers, and last the phases judged against the grader's solution."""
    t_start = time.monotonic()
    report = Report(submission)
    checks, phases, keys = report.checks, report.phases, report.keys
    checks += check_files(submission)
    present = {c.id.split(".", 1)[1]: c.status is Status.PASS for c in checks}
    static = check_source(submission) if present[SPEC["solver_file"]] else []
    static_ok = present[SPEC["solver_file"]] and not any(c.status is Status.FAIL for c in static)
    run = Execution(submission, budget) if static_ok and not no_exec else None
    try:
        if run is not None:
            progress("phases regen and audit started in isolated children")
        arrs: dict = {}
        report.figures_data.update(arrays=arrs)     # PLOTS: filled below (and "fields" by execution_checks)
        if present[SPEC["npz_file"]]:
            try:
                raw = load_npz_file(os.path.join(submission, SPEC["npz_file"]), "schema.npz",
                                    SPEC["max_npz_bytes"])
                checks += check_schema(raw, arrs)
            except Reject as exc:
                checks.append(exc.check)
        schema_ok = "n_values" in arrs
        if present[SPEC["json_file"]]:
            try:
                doc = read_json_file(os.path.join(submission, SPEC["json_file"]), "sidecar.document",
                                     SPEC["max_json_bytes"])
                checks += (check_sidecar(doc, arrs) if schema_ok else
                           [Check("sidecar.document", Status.SKIP, "arrays invalid: nothing to compare")])
            except Reject as exc:
                checks.append(exc.check)
        if schema_ok:
            checks += check_tier1(arrs) + check_tier2(arrs) + check_tier3(arrs)
            e = arrs["dense_errors"]
            keys["e_star_n(32)"] = float(e[0])
            keys["dense_orders_clean"] = [float(b) for b in orders(e)[:3]]
            keys["nodal_error(32)"] = float(arrs["nodal_errors"][0])
        checks += static
        phases["static"] = time.monotonic() - t_start
        progress(f"static checks done ({len(checks)} records)")
        if no_exec:
            checks.append(Check("provenance.not_executed", Status.INFO,
                                "--no-exec: fem_solver.py not run, provenance not established"))
        elif run is None:
            checks.append(Check("provenance.not_executed", Status.SKIP,
                                "fem_solver.py missing or rejected statically: not run"))
        else:
            checks += execution_checks(run, arrs, report) + [sandbox_check()]   # after the runs: they established the level
            progress("phases judged: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()
                                                    if k in ("regen", "audit", "reference")))
        phases["total"] = time.monotonic() - t_start
        keys["review_required"] = sum(c.status is Status.REVIEW for c in checks)
        return report
    finally:                    # its staged copy, however the grading ends (Ctrl-C included)
        if run is not None:
            run.discard()

