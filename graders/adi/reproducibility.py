"""REPRODUCIBILITY (a part of grade_adi.py; see CONTRIBUTING.md)."""
import base64
import math
import secrets
from graders.adi.hidden import hidden_draw, witness_draw
from graders.adi.problems import PROBLEM_SOURCE, _PROBLEMS, h_value, mesh_m, mesh_tag
from graders.adi.schema import Submitted, compare_arrays
from graders.adi.spec import SPEC
from graders.common.records import Check, Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# REPRODUCIBILITY (seed: "What the evaluator checks" 5)
# =============================================================================
def plan_jobs() -> list:
    """Coarse meshes, the hidden instance, the causal audits, the interface
    check and a repeat of the clean benchmark run first, in an order drawn
    afresh for every grading run (a solver that counts its calls cannot tell
    which one is audited); the fine meshes outside the shuffle: the finest
    first (with SPEC["job_concurrency"] = 2 jobs at once it runs beside all the
    others: a quarter of the run's work, no longer its tail), the other fine runs
    (the next finest, the step witness's) last, the longest first.  The fine runs
    are marked long: the driver starts the next as soon as no other long one runs
    (the finest mesh's run to (N - 1) h the moment its T = 1 run ends, not behind
    the coarse jobs left), and a second one beside it only when no coarse job is
    left (_next_job).  A hang on a fine mesh leaves everything else graded (-> 0.5):
    one job slot is always the coarse jobs'."""
    jobs = [{"tag": f"bench:{p}", "h": h_value(p), "problem": "benchmark"} for p in SPEC["coarse"]]
    jobs += [{"tag": f"hidden:{h:g}", "h": h, "problem": "hidden"} for h in SPEC["hidden_h"]]
    jobs.append({"tag": f"audit:{SPEC['audit_h']:g}", "h": SPEC["audit_h"], "problem": "hidden",
                 "poison": "nan"})
    jobs.append({"tag": f"auditbench:{SPEC['audit_h']:g}", "h": SPEC["audit_h"], "problem": "benchmark",
                 "poison": "nan"})
    jobs.append({"tag": f"perturb:{SPEC['audit_h']:g}", "h": SPEC["audit_h"], "problem": "hidden",
                 "poison": "scale"})
    jobs.append({"tag": f"perturbbench:{SPEC['audit_h']:g}", "h": SPEC["audit_h"], "problem": "benchmark",
                 "poison": "scale"})
    jobs.append({"tag": f"iface:{h_value(0):g}", "h": h_value(0), "problem": "benchmark_object"})
    jobs.append({"tag": f"repeat:{h_value(0):g}", "h": h_value(0), "problem": "benchmark"})
    jobs += [{"tag": f"witness:{h:g}", "h": h, "problem": "witness"} for h in SPEC["witness_h"]]
    jobs += one_child(step_jobs(SPEC["coarse"]))
    secrets.SystemRandom().shuffle(jobs)
    fine = [{"tag": f"bench:{p}", "h": h_value(p), "problem": "benchmark"} for p in SPEC["fine"]]
    steps = step_jobs(SPEC["fine"][::-1])
    steps = [j for j in steps if j["tag"].startswith("bench-1:")] + one_child(
        [j for j in steps if not j["tag"].startswith("bench-1:")])
    if SPEC["job_concurrency"] > 1:     # the rest of the fine runs, the longest first (the finest
        tail = sorted(steps + fine[:-1], key=lambda j: -_work(j))   # mesh's run to (N - 1) h), but the
        anchors = [j for j in tail if j["tag"].startswith("bench-t1:")]     # fine meshes' anchor runs
        rest = [j for j in tail if not j["tag"].startswith("bench-t1:")]   # (a few steps) right after
        return [dict(j, long=True) for j in fine[-1:]] + jobs + \
            [dict(j, long=True) for j in rest[:1] + anchors + rest[1:]]  # it: ReplayAhead's inputs
    return jobs + fine + steps


def _work(job) -> float:
    """A job's work ~ steps x grid = T / h^3, summed over its runs."""
    return sum(r.get("T", 1.0) for r in [job] + list(job.get("then") or ())) / job["h"] ** 3


def one_child(jobs: list) -> list:
    """The step witness's runs of one mesh as one job (one forked child: the first run's tag, the
    others in "then", run one after the other, each reported under its own tag).  A job child costs
    ~10-20 ms (fork of the warm parent, its namespaces and areas) beside runs of a few ms; each run
    is still a fresh import of adi_solver with its own log.  A solver learns nothing from sharing a
    process here that T does not tell it: these runs are the only ones with T < 1 on their mesh."""
    out, by_h = [], {}
    for j in jobs:
        if j["h"] in by_h:
            by_h[j["h"]].setdefault("then", []).append({"tag": j["tag"], "T": j["T"]})
        else:
            by_h[j["h"]] = dict(j)
            out.append(by_h[j["h"]])
    return out


def job_tags(plan: list) -> list:
    """Every run's tag of a plan, in order (a job's own, then those of its "then")."""
    return [t for j in plan for t in [j["tag"]] + [r["tag"] for r in j.get("then") or ()]]


def step_jobs(meshes) -> list:
    """The benchmark step witness's runs (ours), beside the T = 1 run (N = 1/h steps) on every
    benchmark mesh: solve(h) to T = (N - 1) h (the graded run's predecessor), and to T = a h and
    (a + 1) h with a = SPEC["bench_step_anchor"] (a few steps: the anchor of the data term).  T is
    the float product j * h, for which T / h is the integer j exactly and T / j == h (so int(T / h),
    round(T / h) and a loop to T all take the same j steps of k = h).  Tags: bench-1:p (to
    (N - 1) h), bench-t1:p and bench-t2:p (to a h and (a + 1) h)."""
    a = SPEC["bench_step_anchor"]
    out = []
    for p in meshes:
        h = h_value(p)
        n = mesh_m(h)
        out += [{"tag": tag, "h": h, "problem": "benchmark", "T": j * h}
                for tag, j in ((f"bench-1:{p}", n - 1), (f"bench-t1:{p}", a), (f"bench-t2:{p}", a + 1))]
    return out


def driver_request(jobs: list, seed: int, draws: bool = True) -> dict:
    """What the driver reads: its jobs, the problems' source and the limits it applies; without
    `draws`, not the hidden and witness draws (draws(): sent with the gate's go, EarlyRun)."""
    return {"jobs": jobs, "problem_source": PROBLEM_SOURCE, "perturb_seed": seed,
            **(request_draws() if draws else {}),
            "perturb_rel": SPEC["perturb_rel"], "dim_factor": SPEC["dim_factor"],
            "max_half_bandwidth": SPEC["max_half_bandwidth"], "adi_op_rtol": SPEC["adi_op_rtol"],
            "resid_rtol": SPEC["resid_rtol"], "concurrency": SPEC["job_concurrency"]}


def request_draws() -> dict:
    """The request's hidden and witness draws (the witness draw's gap test needs numpy)."""
    return {"hidden_draw": hidden_draw(), "witness_draw": witness_draw()}


def perturb_seed() -> int:
    """Per-run seed of the finite audit's factors (a submission cannot predict them)."""
    return secrets.randbits(63)


def run_of_job(tag: str, job) -> bool:
    """Whether a run's result (tag) may come from the forked child of job `job` (the tag the warm
    parent puts on everything that child writes, which the child cannot forge): its own, or a step
    run of the same mesh (one_child: the step runs of one mesh share a child)."""
    if tag == job:
        return True
    steps = ("bench-1:", "bench-t1:", "bench-t2:")
    return (isinstance(job, str) and tag.startswith(steps) and job.startswith(steps)
            and tag.split(":", 1)[1] == job.split(":", 1)[1])


def decode_jobs(outcome) -> tuple:
    """(ready message or None, {tag: job result}, [violations]) from the runner's messages.  A result
    is read only from the child that ran it (run_of_job), once: one written by another job's child
    (a job can write on its channel what the driver writes: measured, the last job overwrote an
    earlier run's result, red team round 7) is a "forged_result" violation and not read; a second
    result for one run makes that run an error; so is a second "ready" of the import check (the first
    one is read: the submission's import can write one before the driver's)."""
    import numpy as np
    ready, jobs, violations = None, {}, []
    for msg in outcome.messages:
        if not isinstance(msg, dict):
            continue
        kind = msg.get("kind")
        if kind in ("ready", "import_error") and ready is None and msg.get("job") == "import":
            ready = msg
        elif kind in ("ready", "import_error") and msg.get("job") == "import":     # the driver sends one
            violations.append({"kind": "forged_result", "job": "import", "tag": "import",
                               "why": "a second ready of the import check"})
        elif kind in ("violation", "tamper", "residual", "factor", "unreadable"):
            violations.append(msg)
        elif kind == "job" and isinstance(msg.get("tag"), str) and not run_of_job(msg["tag"], msg.get("job")):
            violations.append({"kind": "forged_result", "job": str(msg.get("job"))[:80], "tag": msg["tag"][:80],
                               "why": "a result written by another run's child"})
        elif kind == "job" and isinstance(msg.get("tag"), str) and msg["tag"] in jobs:
            violations.append({"kind": "forged_result", "job": str(msg.get("job"))[:80], "tag": msg["tag"][:80],
                               "why": "a second result for one run"})
            jobs[msg["tag"]] = dict(jobs[msg["tag"]], status="error", error="more than one result for this run "
                                    "(one not written by the driver)")
        elif kind == "job" and isinstance(msg.get("tag"), str):
            r = {"status": msg.get("status"), "error": str(msg.get("error", ""))[:400],
                 "log": msg.get("log") if isinstance(msg.get("log"), dict) else {},
                 "wall": msg.get("wall")}
            if r["status"] == "ok":
                try:
                    m = int(msg["m"])
                    r["X"], r["Y"], r["U"] = (np.frombuffer(base64.b64decode(msg[k]), dtype="<f8")
                                              .reshape(m + 1, m + 1) for k in "XYU")
                except (KeyError, ValueError, TypeError) as exc:
                    r = dict(r, status="error", error=f"garbled reply: {exc}")
            jobs[msg["tag"]] = r
        if kind == "job_end" and isinstance(msg.get("garbage"), int) and msg["garbage"] > 0:
            # (counted by the warm parent: lines on a job's channel the driver did not write -- a
            # partial line written first spoils the driver's result after it, and a run "not reached"
            # reads as a harness gap: INCONCLUSIVE instead of the FAIL its result would earn)
            violations.append({"kind": "forged_result", "job": str(msg.get("job"))[:80],
                               "tag": str(msg.get("job"))[:80],
                               "why": f"{msg['garbage']} unreadable line(s) on its channel"})
        if kind == "job_end" and isinstance(msg.get("job"), str) and msg["job"] in jobs:
            left = msg.get("left") if msg.get("isolation") != "private" else []
            jobs[msg["job"]]["left"] = [str(p)[:200] for p in left[:20]] if isinstance(left, list) \
                else ["(unreadable list)"]
    return ready, jobs, violations


def _job_failure(r) -> str:
    if r is None:
        return "not reached (the run stopped before it)"
    return f"raised {r['error']}" if r["status"] != "ok" else "ok"


def grid_check(r: dict, h: float) -> bool:
    import numpy as np
    x = np.linspace(0.0, 1.0, mesh_m(h) + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    return bool(np.all(np.abs(r["X"] - X) <= SPEC["grid_atol"]) and
                np.all(np.abs(r["Y"] - Y) <= SPEC["grid_atol"]))


def regeneration_checks(sub: Submitted, jobs: dict, outcome) -> tuple:
    """Per benchmark mesh: the run returned the true grid and reproduced the
    submitted error (coarse: before Tier 1/2 credit; fine: before Tier 3 credit).
    Returns (checks, regenerated errors)."""
    import numpy as np
    out, regen = [], [None] * SPEC["n_meshes"]
    T = SPEC["final_time"]
    for p in SPEC["coarse"] + SPEC["fine"]:
        h = h_value(p)
        r = jobs.get(f"bench:{p}")
        fine = p in SPEC["fine"]
        if r is None or r["status"] != "ok":
            why = _job_failure(r)
            if r is None and outcome.status != "ok":
                why = f"{outcome.status}: {outcome.reason}"
            if fine:
                out.append(Check(f"tier3.regen[{mesh_tag(h)}]", Status.FAIL,
                                 f"finest meshes not regenerated ({why}): Tier 3 unverified"))
            else:
                out.append(Check(f"provenance.regen[{mesh_tag(h)}]", Status.FAIL,
                                 f"solve({h:g}) could not be regenerated: {why}"))
            continue
        if not grid_check(r, h):
            out.append(Check(f"provenance.grid[{mesh_tag(h)}]", Status.FAIL,
                             f"returned (X, Y) is not the uniform {mesh_m(h) + 1}x{mesh_m(h) + 1} grid "
                             "(indexing='ij')"))
            continue
        with np.errstate(all="ignore"):
            e = float(np.max(np.abs(r["U"] - _PROBLEMS["benchmark_exact"](r["X"], r["Y"], T))))
        regen[p] = e
        claimed = float(sub.e[p])
        ok = math.isfinite(e) and abs(e - claimed) <= SPEC["regen_rtol"] * claimed
        out.append(Check(f"provenance.regen[{mesh_tag(h)}]", Status.PASS if ok else Status.FAIL,
                         f"regenerated e = {e:.6e}, submitted {claimed:.6e}"
                         + ("" if ok else f" (differs by more than {SPEC['regen_rtol']:g} relative)"),
                         e, claimed))
        if fine:
            out.append(Check(f"tier3.regen[{mesh_tag(h)}]", Status.PASS, f"regenerated in {r['wall']:.2f} s"
                             if isinstance(r.get("wall"), (int, float)) else "regenerated"))
    return out, regen


def field_check(sub: Submitted, jobs: dict) -> list:
    """seed: the regenerated finest U must match U_finest pointwise (Tier 3)."""
    r = jobs.get(f"bench:{SPEC['n_meshes'] - 1}")
    if sub.tier3 is None or r is None or r["status"] != "ok":
        return [Check("tier3.U_pointwise", Status.FAIL, "not compared: "
                      + ("Tier 3 arrays unusable" if sub.tier3 is None else "finest mesh not regenerated"))]
    return [compare_arrays("tier3.U_pointwise", "U_finest vs the regenerated finest field",
                           sub.tier3["U_finest"], r["U"], rtol=SPEC["field_rtol"], atol=SPEC["field_atol"])]


