"""SANDBOX OPS (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import dataclasses
import functools
import os
import time
from graders.common.options import subset_text
from graders.common.records import Check, Status
from graders.common.records import _INTERRUPT
from graders.common.reports import UsageError, progress, progress_count
from graders.common.sandbox import sandbox_check, sandbox_level
from graders.common.stats import binomial_estimate, clustered_estimate
from graders.scicode.census import classify
from graders.scicode.comparison import evaluate_case, helper_namespace
from graders.scicode.protocol import StepProgram
from graders.scicode.spec import SPEC
from graders.scicode.target_plan import plan_step
from graders.scicode.workers import (ResumeStore, WorkerPool, _PRESTARTED, make_job,
    read_step_targets, run_steps, targets_present, warm_grader, warm_modules, worker_count)
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SANDBOX OPS: per-step results and records
# =============================================================================
@dataclasses.dataclass
class StepResult:
    step: str
    passed: bool
    cases: list                 # [{"i", "ok", "error"?}]
    failure: dict | None        # the first failure (what the official script would stop at)
    wall: float
    stdout: str = ""
    stderr: str = ""
    marker: bool = False        # dry run: SCICODE_PASS (DRY_RUN) came over the pipe


def _child_error(err) -> dict:
    """A failure as the step's process reported it, sanitised: plain strings, and never the
    origin "grader" (which only the grader's own findings carry)."""
    if not isinstance(err, dict):
        return {"type": "ProcessExit", "message": "malformed case report", "origin": "submission"}
    out = {k: str(err.get(k) or "")[:500] for k in ("type", "message", "trace")}
    origin = err.get("origin")
    out["origin"] = origin if origin in ("test", "submission", "library") else "submission"
    out["via_submission"] = bool(err.get("via_submission"))
    return out


def judge(prog: StepProgram, reply: dict, dry: bool, plans: list | None = None,
          targets: dict | None = None, missing: dict | None = None, helpers=None) -> StepResult:
    """A step's verdict.  The worker's authenticated messages say what the test code did
    (and carry the comparison records); the grader's own evidence (which targets it could
    read: `targets`, `missing`) and its plans of the test text decide each case."""
    plans = plans if plans is not None else plan_step(prog.cases)
    targets, missing = targets or {}, missing or {}
    helpers = helpers or (lambda: helper_namespace(prog.deps, prog.cases, len(prog.cases) - 1))
    evidence = {"targets": True, "shim": bool(reply.get("shim", True))}
    n = len(prog.cases)
    reported, twice, records = [None] * n, set(), [[] for _ in range(n)]
    phase_failure, marker, done, tamper = None, False, False, []
    order, reached = {"deps": 0, "context": 1, "code": 2}, -1
    for msg in reply.get("messages", []):
        if not isinstance(msg, dict):
            continue
        # the phases report in order (deps, context, code), each once, before any case: a
        # phase report out of that order was written by generated code (a forged "harness"
        # phase, e.g. a deps failure, must not void the run) and counts as the generation's
        rank = order.get(str(msg.get("phase")), 3) if "phase" in msg else 3
        late = "phase" in msg and rank <= min(reached, 1)     # (code-phase reports are the generation's anyway)
        reached = max(reached, rank)
        if "phase" in msg and not msg.get("ok"):
            if phase_failure is None:
                phase_failure = dict(_child_error(msg.get("error")), phase=str(msg["phase"])[:20],
                                     reference_context=prog.reference)
                if late:
                    phase_failure = {"type": "RecordMismatch", "message": "a phase report out of "
                                     "order (written by generated code)", "origin": "submission",
                                     "phase": "run"}
        elif "rec" in msg and type(msg["rec"]) is int and 0 <= msg["rec"] < n:
            records[msg["rec"]].append(msg.get("data"))
        elif "case" in msg and type(msg["case"]) is int and 0 <= msg["case"] < n:
            if reported[msg["case"]] is not None:
                twice.add(msg["case"])
            reported[msg["case"]] = msg
        elif msg.get("marker") == SPEC["dry_marker"]:
            marker = True
        elif msg.get("done") is True:
            done = True
            tamper = [str(t)[:80] for t in msg.get("tamper") or []][:20]
    out, case_failure, unreported, grader_found = [], None, False, None
    for i in range(n):
        c, err = reported[i], None
        if i in missing:                    # the grader's own finding, whatever the child said
            err = dict(missing[i], origin="grader")
        elif dry:
            err = None
        elif c is None:
            out.append({"i": i + 1, "ok": False, "error": "not run"})
            unreported = True
            continue
        elif i in twice:
            err = {"type": "RecordMismatch", "message": "case reported twice", "origin": "submission"}
        elif not c.get("ok"):
            err = _child_error(c.get("error"))
        else:
            err = evaluate_case(plans[i], records[i], targets, helpers)
        if err is None:
            out.append({"i": i + 1, "ok": True})
            continue
        err = dict(err, phase=f"case {i + 1}", evidence=dict(evidence, targets=i not in missing))
        out.append({"i": i + 1, "ok": False,
                    "error": f"{err['type']}: {err.get('message') or err.get('detail') or ''}"[:300]})
        case_failure = case_failure or err
        if err.get("origin") == "grader" and grader_found is None:
            grader_found = err          # the harness's fault is reported whatever else failed
    if reply.get("shim") is False and reply.get("status") != "worker" and grader_found is None:
        grader_found = {"type": "ShimFault", "message": "the worker could not import the scicode shim "
                        "before any generated code ran", "phase": "run", "origin": "grader",
                        "evidence": evidence}
    failure = grader_found or (dict(phase_failure, evidence=evidence) if phase_failure else None) or case_failure
    status = reply.get("status", "ok")
    ev = {"evidence": evidence}
    if tamper and not grader_found:     # a replaced comparator or builtin outranks what the tests then said
        failure = {"type": "Tampering", "message": "replaced " + ", ".join(tamper), "phase": "run",
                   "origin": "submission", **ev}
    if failure is None and status == "timeout":
        failure = {"type": "Timeout", "message": reply.get("reason", "timed out"), "phase": "run", **ev}
    if failure is None and status != "ok":
        worker = status == "worker"
        failure = {"type": "WorkerFault" if worker else "ProcessDied", "message": reply.get("reason", status),
                   "phase": "run", "origin": "grader" if worker else "submission", **ev}
    if failure is None and not done:
        failure = {"type": "ProcessExit", "message": "exited before its tests completed "
                   f"({reply.get('reason') or 'no completion message'})", "phase": "run", **ev}
    if failure is None and unreported:
        failure = {"type": "ProcessExit", "message": "not every test case reported", "phase": "run", **ev}
    if failure is None and dry and not marker:
        failure = {"type": "NoDryMarker", "message": f"{SPEC['dry_marker']} not received", "phase": "run", **ev}
    return StepResult(prog.step, failure is None, out, failure, float(reply.get("wall", 0.0)),
                      str(reply.get("stdout", "")), str(reply.get("stderr", "")), marker)


def pre_failed(prog: StepProgram) -> StepResult:
    """A step that cannot run (missing/unextractable generation): a model failure."""
    return StepResult(prog.step, False, [{"i": i + 1, "ok": False, "error": "not run"}
                                         for i in range(len(prog.cases))],
                      dict(prog.error, phase="extract"), 0.0)


def step_records(progs: dict, results: dict, dry: bool, strict: bool) -> tuple:
    """(records, failures for the census) for every in-scope step."""
    records, failures = [], []
    for step, prog in progs.items():
        res = results[step]
        n_ok = sum(c["ok"] for c in res.cases)
        review = strict and bool(prog.audit)
        if res.passed and not review:
            msg = (f"{SPEC['dry_marker']}: plumbing ok, {len(prog.cases)} target(s) bound" if dry
                   else f"{n_ok}/{len(prog.cases)} cases ({res.wall:.1f} s)")
            records.append(Check(f"step.{step}", Status.PASS, msg, n_ok, len(prog.cases)))
        else:
            f = dict(res.failure or {"type": "Review", "message": "flagged code under --strict"},
                     step=step, lost_context=prog.lost_context)
            failures.append(f)
            cls = classify(f)
            msg = (f.get("message") or f.get("detail") or "").strip().splitlines()
            records.append(Check(f"step.{step}", Status.FAIL,
                                 f"{n_ok}/{len(prog.cases)} cases; {f.get('phase', '?')}: {f.get('type')}"
                                 f"{': ' + msg[0][:160] if msg else ''} [{cls}]", n_ok, len(prog.cases),))
        if prog.audit:
            records.append(Check(f"audit.{step}", Status.REVIEW,
                                 "generation " + "; ".join(prog.audit[:4]), prog.audit))
    return records, failures


def summary_keys(checks: list, problems: dict, split: str, context: str, dry: bool) -> dict:
    """The benchmark's key lines, from the step records (typed)."""
    steps = {c.id[5:]: c.status is Status.PASS for c in checks if c.id.startswith("step.")}
    by_problem = {}
    for sid, ok in steps.items():
        by_problem.setdefault(sid.split(".")[0], []).append(ok)
    solved = sum(all(v) for v in by_problem.values())
    n_steps, n_probs = len(steps), len(by_problem)
    passed = sum(steps.values())
    harness = sum(1 for c in checks if c.id.startswith("step.") and "[harness:" in c.message)
    step_se, step_ci = clustered_estimate([(sum(v), len(v)) for v in by_problem.values()])
    prob_se, prob_ci = binomial_estimate(solved, n_probs)
    keys = {"split": split, "context": context, "mode": "DRY_RUN" if dry else "normal",
            "steps_passed": passed, "steps_in_scope": n_steps,
            "step_accuracy": round(passed / n_steps, 4) if n_steps else None,
            "step_accuracy_stderr": step_se, "step_accuracy_ci95": step_ci,  # steps cluster in problems
            "problems_solved": solved, "problems_in_scope": n_probs,
            "problem_accuracy": round(solved / n_probs, 4) if n_probs else None,
            "problem_accuracy_stderr": prob_se, "problem_accuracy_ci95": prob_ci,
            "harness_fault_steps": harness}
    return keys


def _step_key(step: str) -> tuple:
    a, _, b = step.partition(".")
    return (int(a) if a.isdigit() else 0, int(b) if b.isdigit() else 0)


def select_steps(in_scope: list, args) -> tuple:
    """--problem PID ..., --only STEP ..., then --limit N (the first N in step order): (the
    steps kept, the subset's label or None).  A named step or problem not in scope: UsageError."""
    total = len(in_scope)
    for option, wanted, of in (("--problem", args.problem, lambda p, s: p.pid),
                               ("--only", args.only, lambda p, s: s.step)):
        if wanted:
            missing = sorted(set(wanted) - {of(p, s) for p, s in in_scope})
            if missing:
                raise UsageError(f"{option} {' '.join(missing)}: not an in-scope "
                                 f"{'problem' if option == '--problem' else 'step'} of this split")
            in_scope = [(p, s) for p, s in in_scope if of(p, s) in set(wanted)]
    if args.limit:
        in_scope = sorted(in_scope, key=lambda ps: _step_key(ps[1].step))[:args.limit]
    kept = {s.step for _, s in in_scope}
    in_scope = [(p, s) for p, s in in_scope if s.step in kept]
    return in_scope, (subset_text(len(in_scope), total, "in-scope steps", args)
                      if len(in_scope) < total else None)


def execute_steps(progs: dict, args, selected: list) -> tuple:
    """Run every runnable step in the sandbox and judge it as its reply arrives: the
    targets are read here, in the grader's process, and never sent anywhere.  With --out,
    each judged result is kept as it is made and reused by a rerun of the same inputs and
    grader (ResumeStore); one progress line per finished step.  (results, records)"""
    results = {sid: pre_failed(pr) for sid, pr in progs.items() if pr.code is None}
    plans = {sid: plan_step(pr.cases) for sid, pr in progs.items() if pr.code is not None}
    h5 = os.path.abspath(args.h5)
    missing = {sid: targets_present(h5, sid, len(progs[sid].cases)) for sid in plans}
    jobs = {sid: make_job(progs[sid], plans[sid], args.budget, args.memory, args.dry_run) for sid in plans}
    kept = ResumeStore(args.out, h5, list(jobs.values())) if args.out else None
    reused = kept.results if kept else {}
    todo = [job for sid, job in jobs.items() if sid not in reused]
    records = []
    if kept:
        records.append(Check("run.resume", Status.INFO, f"{len(reused)} of {len(jobs)} step(s) reused "
                             f"from {kept.dir} (same program, targets file and grader)", len(reused), len(jobs)))
        progress(f"resume: {len(reused)} of {len(jobs)} step(s) already graded in {kept.dir}, "
                 f"{len(todo)} to run")
    t1, tally = time.monotonic(), {"done": 0, "passed": 0}

    def helper_ns(sid):
        prog = progs[sid]
        return functools.lru_cache(None)(lambda: helper_namespace(prog.deps, prog.cases, len(prog.cases) - 1))

    def prepare(sid):
        """While the step runs, in the grader's process: its targets, and the tests' own
        helpers (test text and import lines) where a case calls one with the target."""
        helpers = helper_ns(sid)
        if not args.dry_run and any(p.helpers for p in plans[sid]):
            helpers()
        return (({}, {}) if args.dry_run else read_step_targets(h5, sid, len(progs[sid].cases))), helpers

    def on_reply(sid, reply, read):
        prog = progs[sid]
        (targets, errors), helpers = read if read is not None else prepare(sid)
        del read
        res = judge(prog, reply, args.dry_run, plans[sid], targets, {**errors, **missing[sid]}, helpers)
        del targets
        if kept and _INTERRUPT["at"] is None:      # a step cut short by Ctrl-C is not a result
            kept.save(jobs[sid], res)
        tally["done"] += 1
        tally["passed"] += res.passed
        progress_count("steps", tally["done"], len(todo), t1, f"{tally['passed']} passed, last {sid}")
        return res

    n_jobs = worker_count(args, len(todo))
    judged = {}
    pool = _PRESTARTED.pop("pool", None)
    if todo:
        pool = pool or WorkerPool(n_jobs, warm_modules(selected, [t for pr in progs.values()
                                                                  for t in (pr.context, pr.code)]))
        try:
            judged = run_steps(todo, n_jobs, pool, on_reply, prepare, warm_grader)
        finally:
            pool.close()
    elif pool:
        pool.close()
    for sid in jobs:
        results[sid] = reused.get(sid) or judged.get(sid) or judge(
            progs[sid], {"status": "worker", "reason": "WorkerFault: no reply"}, args.dry_run,
            plans[sid], {}, missing[sid])
    return results, records


def isolation_checks(strict: bool) -> list:
    """INFO sandbox.isolation; without file isolation the targets file is within reach of
    the step processes' file view: REVIEW, and --strict does not certify."""
    out = [sandbox_check()]
    if not sandbox_level()["file_isolation"]:
        out.append(Check("sandbox.file_isolation", Status.REVIEW,
                         "the step processes can see the host's files (the targets file included): "
                         + sandbox_level()["note"] + (STRICT_UNCERTIFIED if strict else ""),
                         False, True))
    return out


STRICT_UNCERTIFIED = "; --strict does not certify this run"     # exit 3, as an indicted run


def strict_uncertified(checks: list) -> bool:
    """--strict asked for a certified run and the step processes could see the host's files."""
    return any(c.id == "sandbox.file_isolation" and c.status is Status.REVIEW
               and c.message.endswith(STRICT_UNCERTIFIED) for c in checks)


