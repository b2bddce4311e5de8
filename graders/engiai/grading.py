"""GRADING (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import os
import time
from graders.common.records import Check, Report, Status
from graders.common.reports import progress_count
from graders.engiai.aggregation import (aggregate, cell_checks, filter_checks, key_lines,
    reference_file_check)
from graders.engiai.prompts import design_copy_checks
from graders.engiai.run import (RunRefs, budget_checks, duplicate_checks, grade_trial,
    key_accounting, unplaced_checks)
from graders.engiai.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the seed's order, over one run
# =============================================================================
def grade(run_dir: str, problems: set, styles: set, seconds: float | None = None,
          limit: int | None = None) -> Report:
    """Every trial rescored (filtered by problem and style), duplicates, then the cells;
    the trials and cells travel in figures_data (for --out, the JSON report and plots)."""
    t0 = time.monotonic()
    report = Report(run_dir)
    checks, trials = report.checks, []
    tdir = os.path.join(run_dir, SPEC["trials_dir"])
    report.figures_data.update(trials=trials, cells=[])
    if not os.path.isdir(tdir) or os.path.islink(tdir):
        checks.append(Check("run.trials", Status.FAIL, f"{SPEC['trials_dir']}/ missing in {run_dir}"))
    else:
        checks += reference_file_check(run_dir)
        run = RunRefs(run_dir, seconds)
        checks += run.load_manifest()
        names = [n for n in sorted(os.listdir(tdir)) if os.path.isdir(os.path.join(tdir, n))]
        t_trials = time.monotonic()
        for i, name in enumerate(names):
            if limit and sum(t.status != "filtered" for t in trials) >= limit:
                report.figures_data["left_out"] = len(names) - i          # --limit: a SUBSET
                break
            trial, more = grade_trial(os.path.join(tdir, name), run, problems, styles)
            report.figures_data.setdefault("trial_dirs", {})[trial.trial_id] = os.path.join(tdir, name)  # PLOTS
            trials.append(trial)
            checks += more
            if (i + 1) % 25 == 0 or i + 1 == len(names):
                progress_count("trials", i + 1, len(names), t_trials)
        missing, more = key_accounting(trials, run, problems, styles)
        if report.figures_data.get("left_out"):     # --limit: the unread keys were left out, not lost
            missing, more = [], [c for c in more if c.id != "run.missing_trials"]
        trials += missing
        checks += more + unplaced_checks(trials)
        checks += design_copy_checks(trials, run, checks)
        checks += duplicate_checks(trials, run, checks) + budget_checks(run)
        checks += filter_checks(trials)
        expected = {}
        for e in (run.keys or {}).values():
            cell = (e["problem"], e["prompt_style"])
            expected[cell] = expected.get(cell, 0) + 1
        cells = aggregate(trials, expected)
        checks += cell_checks(cells)
        report.figures_data["cells"] = cells
        report.figures_data["run_refs"] = run                                # PLOTS
    report.keys.update(key_lines(trials, report.figures_data["cells"], checks))
    report.phases["grade"] = time.monotonic() - t0
    return report


