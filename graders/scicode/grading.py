"""GRADING (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import os
import time
from graders.common.records import Check, Report, Status
from graders.common.reports import UsageError
from graders.scicode.census import census
from graders.scicode.guarded import load_generations, load_problems
from graders.scicode.protocol import assemble, lift_int_digit_limit
from graders.scicode.sandbox_ops import (_step_key, execute_steps, isolation_checks, select_steps,
    step_records, summary_keys)
from graders.scicode.shim import check_h5
from graders.scicode.spec import SPEC
from graders.scicode.workers import prestart_workers
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the protocol's order, over one set of generations
# =============================================================================
def grade(args) -> Report:
    """Problems, targets and generations loaded; every in-scope step's program assembled; the
    steps run on warm workers (with --out, each result kept as it finishes and reused by a rerun
    of the same inputs and grader); step records, the census and the keys.  report.outcomes holds
    each step's StepResult."""
    t0 = time.monotonic()
    lift_int_digit_limit()
    report = Report(args.submission)
    checks, phases = report.checks, report.phases
    problems, pchecks = load_problems(args.problems)
    checks += pchecks
    if args.split is None:
        present = {p.split for p in problems.values()}
        args.split = present.pop() if len(present) == 1 else "all"
    selected = [p for p in problems.values() if args.split in ("all", p.split)]
    if not selected and not any(c.id == "input.usage" for c in checks):
        checks.append(Check("input.fatal", Status.FAIL, f"no problems of split {args.split!r} could be read from the problem files"))
        return report
    if not selected:
        return report
    in_scope = [(p, s) for p in selected for s in p.steps if s.step not in SPEC["special_steps"]]
    report.figures_data["steps"] = [(p.pid, s.index, s.step) for p, s in in_scope]     # PLOTS
    n_probs = len({p.pid for p, _ in in_scope})
    official = SPEC["official_counts"][args.split]
    checks.append(Check("input.scope", Status.INFO,
                        f"{args.split}: {len(in_scope)} in-scope steps of {n_probs} problems "
                        f"({sum(len(p.steps) for p in selected) - len(in_scope)} no-test step(s) excluded); "
                        f"official {args.split}: {official[0]} / {official[1]}"
                        + ("" if (len(in_scope), n_probs) == official else " (these files differ)"),
                        [len(in_scope), n_probs], list(official)))
    in_scope, subset = select_steps(in_scope, args)        # the scope above stays the split's
    if subset:
        report.keys["subset"] = subset
        checks.append(Check("run.subset", Status.INFO, f"SUBSET: {subset}; a smoke test, not a "
                            "score of the split"))
    gens = load_generations(args.submission, {s.step for p in selected for s in p.steps})
    prestart_workers(args, selected, len(in_scope) if args.h5 and os.path.isfile(args.h5) else 0, gens)
    if args.no_exec and not os.path.exists(args.h5):
        checks.append(Check("input.h5", Status.SKIP, f"targets file {args.h5} absent (--no-exec)"))
    else:
        checks += check_h5(args.h5)
    checks += gens.checks
    phases["load"] = time.monotonic() - t0
    progs = {}
    for p, s in in_scope:
        mode = args.context or ("reference" if p.split == "dev" else "self")
        if mode == "reference" and any(pr.gold is None for pr in p.steps[:s.index]
                                       if pr.step not in SPEC["special_steps"]):
            raise UsageError(f"--context reference needs ground_truth_code; problem {p.pid} "
                             "(test split) has none")
        progs[s.step] = assemble(p, s, mode, gens, args.special_steps)
    contexts = sorted({args.context or ("reference" if p.split == "dev" else "self") for p in selected})
    checks.append(Check("context.mode", Status.INFO, "prior-step context: " + " / ".join(
        f"{m} ({'dev' if m == 'reference' else 'test'} default)" if not args.context else m for m in contexts)))
    lost = sorted({pr.step for pr in progs.values() if pr.lost_context}, key=_step_key)
    if lost:
        checks.append(Check("context.special_steps", Status.REVIEW,
                            f"no reference code for {', '.join(sorted({progs[s].lost_context for s in lost}))} "
                            f"(--special-steps DIR): steps {', '.join(lost)} lose context; their failures "
                            "count as harness faults", lost))
    ignored = sorted(set(gens.texts) & set(SPEC["special_steps"]))
    if ignored:
        checks.append(Check("context.special_generations", Status.INFO,
                            f"generations for no-test steps {', '.join(ignored)} are not graded or used "
                            "(their code comes from --special-steps)"))
    if args.no_exec or any(c.id in ("input.fatal", "input.usage") for c in checks):
        results = {}
        for sid, prog in progs.items():
            if prog.error:
                checks.append(Check(f"extract.{sid}", Status.FAIL, f"{prog.error['type']}: {prog.error['message']}"))
        for sid, prog in progs.items():
            if prog.audit:
                checks.append(Check(f"audit.{sid}", Status.REVIEW, "generation " + "; ".join(prog.audit[:4])))
        return report
    t1 = time.monotonic()
    results, run_records = execute_steps(progs, args, selected)
    checks += run_records + isolation_checks(args.strict)
    phases["execute"] = time.monotonic() - t1
    ordered = {sid: progs[sid] for sid in sorted(progs, key=_step_key)}
    srecords, failures = step_records(ordered, results, args.dry_run, args.strict)
    crecords, _, _ = census(failures, args.strict, len(ordered))
    checks += srecords + crecords
    report.keys.update(summary_keys(checks, problems, args.split, "/".join(contexts), args.dry_run))
    phases["total"] = time.monotonic() - t0
    report.outcomes.update({sid: results[sid] for sid in ordered})
    return report


