"""1. WHAT THE HARNESS SCORES (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import dataclasses
import math
import os
import random
import signal
import time
from graders._embed import embed
from graders.common.records import Check, Status
from graders.common.reports import progress
from graders.common.runner import run_isolated
from graders.modchallenge.decoding import decode_packed, score_tier
from graders.modchallenge.guarded import _plain_int
from graders.modchallenge.spec import (GPU_ENV, GPU_PATHS, GUARD_PICKLE_GLOBALS, MULT_SUB_TIERS,
    SPEC, TIERS)
from graders.modchallenge.testgen import Case
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 1. WHAT THE HARNESS SCORES: gates 5-8 (load, isolation, determinism, inference)
# =============================================================================
SHIM_BASE_MODEL = embed("modchallenge/child_base_model.py")
SHIM_FILES = {
    "modchallenge/__init__.py": '"""Grader-provided shim of the challenge package."""\n',
    "modchallenge/interface/__init__.py": "",
    "modchallenge/interface/base_model.py": SHIM_BASE_MODEL,
}

# The child's program after DRIVER_PROLOGUE: load the entry class, then run what the request
# asks ("check": isolation + two determinism passes; "infer": one determinism pass, "ready",
# then every tier in order), reporting each step through send().  Digits are type-checked
# here (bool / non-int is malformed), leading zeros dropped, and plain ints sent.
DRIVER_BODY = embed("modchallenge/child_driver.py")


def _samples(test_set: dict) -> tuple:
    """The harness's determinism sample (Random(42), 10 problems, tier 0 included) and
    isolation pairs (Random(123), 5 problems, paired with the reversed sample)."""
    flat = [c for tid in sorted(test_set) for c in test_set[tid]]
    det = random.Random(SPEC["determinism_rng"]).sample(flat, min(SPEC["determinism_checks"], len(flat)))
    iso = random.Random(SPEC["isolation_rng"]).sample(flat, min(SPEC["isolation_checks"], len(flat)))
    return det, list(zip(iso, iso[::-1]))


def _triple(c: Case) -> list:
    return [str(c.a), str(c.b), str(c.p)]


def _events(outcome, name: str) -> list:
    return [(m, t) for m, t in zip(outcome.messages, outcome.times)
            if isinstance(m, dict) and m.get("event") == name]


def _child_reason(outcome, what: str) -> str:
    if outcome.status in ("timeout", "crashed", "error"):
        return f"{what}: {outcome.reason}"
    return f"{what}: the child stopped without reporting it ({outcome.reason or 'exited'})"


def guard_request(digests: dict | None) -> dict | None:
    """The runtime guard's part of every child request (issue 23): the digests of the sources the
    static scan read, the unpickling allowlist, the report cap.  None (no guard) when the scan was
    skipped (--skip-static-check: trusted use, nothing was read)."""
    if digests is None:
        return None
    return {"digests": dict(digests), "pickle_globals": "|".join(f"(?:{r})" for r in GUARD_PICKLE_GLOBALS),
            "max_reports": SPEC["guard_max_reports"]}


def runtime_guard_check(outcomes: dict, guard: dict | None) -> Check:
    """g3.runtime_guard: no child run of the model reported a guard finding, and none carried an
    unreadable line on its result pipe (a guard report could have been lost in it: fails closed)."""
    cid = "g3.runtime_guard"
    if guard is None:
        return Check(cid, Status.SKIP, "not run: no static scan to allow against (--skip-static-check: trusted use)")
    found = [(name, body) for name, oc in outcomes.items() for body, _ in _events(oc, "guard")]
    if found:
        name, b = found[0]
        return Check(cid, Status.FAIL, f"{len(found)} runtime finding(s); first, in the {name} run: "
                     f"{str(b.get('what'))[:60]}: {str(b.get('reason'))[:200]} at "
                     f"{str(b.get('where'))[:120]} (not ranked)", len(found), 0)
    killed = [name for name, oc in outcomes.items() if oc.returncode == -signal.SIGSYS]
    if killed:
        return Check(cid, Status.FAIL, f"the kernel's system-call filter ended the {killed[0]} run (SIGSYS): "
                     "the model's process made a socket other than AF_UNIX, a process or a program where "
                     "no audit event is raised (native code, e.g. torch.distributed's TCPStore); the "
                     "filter refused it before it existed (not ranked)", len(killed), 0)
    garbled = {name: oc.forged for name, oc in outcomes.items() if oc.forged}
    if garbled:
        return Check(cid, Status.FAIL, f"{sum(garbled.values())} unreadable line(s) on the result pipe "
                     f"({', '.join(garbled)} run): a guard report may be lost in them (not ranked)",
                     sum(garbled.values()), 0)
    off = [str(b.get("what"))[:120] for oc in outcomes.values() for b, _ in _events(oc, "kernel_filter")
           if b.get("installed") is not True]
    kernel = (f"; the kernel filter was not installed ({off[0]}): sockets and processes made in native "
              "code were not watched" if off else "; the kernel filter held (no native socket or process)")
    return Check(cid, Status.PASS, f"{len(outcomes)} run(s) watched from before the submission's "
                 "import: nothing compiled, unmarshalled or unpickled but what the static scan read, the "
                 "installation's own files and the allowlists; no process, socket or native call" + kernel,
                 0, 0)


def run_model(sub: str, manifest: dict, test_set: dict, *, budget: float, load_timeout: float,
              memory: dict | None = None, guard: dict | None = None) -> dict:
    """Gates 5-8 for one test set: three child runs ("check", "infer", then "recheck", the
    independent determinism re-run of problems drawn from the inference stream), each under the
    runtime guard (`guard`: guard_request(), None for none).  `memory` is run_isolated's memory
    keywords (memory_options).  Returns {"checks": [...], "tiers": [TierResult], "outcomes":
    {...}, "deterministic": bool, "isolated": bool, "guarded": bool}; g3.runtime_guard first."""
    memory = memory if memory is not None else memory_options(None, False)
    det_sample, pairs = _samples(test_set)
    base = manifest["output_base"]
    common = {"entry_class": manifest["entry_class"], "max_digits": SPEC["max_digits"],
              "max_digit_bits": SPEC["max_digit_bits"], "det_sample": [_triple(c) for c in det_sample],
              "guard": guard}

    def rearm_once():
        """A fresh rearm for one run: load gets load_timeout, the first "loaded" and the first
        "ready" each give the budget, once (a model repeating them cannot keep its process alive)."""
        seen = set()

        def rearm(body):
            event = body.get("event") if isinstance(body, dict) else None
            if event in ("loaded", "ready") and event not in seen:
                seen.add(event)
                return budget
            return None
        return rearm

    cpu = int(load_timeout + 3 * budget) + 60
    check = run_isolated(sub, DRIVER_BODY, dict(common, mode="check",
                                                iso_pairs=[[_triple(x), _triple(y)] for x, y in pairs]),
                         load_timeout, rearm=rearm_once(), lib_files=SHIM_FILES, cpu_seconds=cpu, **memory)
    outcomes = {"load+checks": check}
    progress(f"gates 5-7: load, isolation and determinism child {check.status} ({check.wall:.1f} s)")
    checks = []
    failed = _events(check, "load_failed")
    loaded = _events(check, "loaded")
    if failed or not loaded:
        why = failed[0][0].get("reason") if failed else _child_reason(check, "model load did not finish")
        checks.append(Check("g5.model_load", Status.FAIL, str(why)[:300]))
        for cid in ("g6.preprocess_isolation", "g7.determinism", "g8.inference"):
            checks.append(Check(cid, Status.SKIP, "not run: the model did not load"))
        guarded = runtime_guard_check(outcomes, guard)
        return {"checks": [guarded] + checks, "tiers": [], "outcomes": outcomes, "deterministic": False,
                "isolated": False, "loaded": False, "guarded": guarded.status is not Status.FAIL}
    checks.append(Check("g5.model_load", Status.PASS,
                        f"{manifest['entry_class']} subclasses ModularMultiplicationModel; "
                        f"loaded in {loaded[0][1]:.2f} s", round(loaded[0][1], 3)))
    iso = _events(check, "isolation")
    if not iso:
        isolated, msg = False, _child_reason(check, "isolation check did not finish")
    else:
        reason = iso[0][0].get("reason")
        isolated = reason == ""
        msg = (f"hooks are per-argument and stateless on {len(pairs)} problems" if isolated
               else str(reason)[:300])
    checks.append(Check("g6.preprocess_isolation", Status.PASS if isolated else Status.FAIL,
                        msg if isolated else msg + " (not ranked)"))

    # the tiers go to the child only once it is "ready" (loaded, determinism pass C done), when
    # the budget starts: nothing of the test set but the 10+5 check problems is visible earlier
    stream = _InferenceInteraction(test_set)

    infer_budget = rearm_once()
    clock = {"deadline": None, "asked": None, "credit": 0.0}
    credit_cap = SPEC["audit_credit_fraction"] * budget

    def infer_rearm(body):                 # the tiers are handed out only once "ready" started the budget
        event = body.get("event") if isinstance(body, dict) else None
        if event == "ready":
            stream.ready = True
        extra = infer_budget(body)
        now = time.monotonic()
        if event == "ready" and extra is not None:
            clock["deadline"] = now + extra
        elif event in ("batch", "end"):
            clock["asked"] = now
        elif event == "audit" and clock["deadline"] is not None and clock["asked"] is not None:
            # the audit's time (from the question to its report) is the grader's, not the
            # model's: the deadline moves by it, up to audit_credit_fraction of the budget
            spent = min(now - clock["asked"], credit_cap - clock["credit"])
            clock["asked"] = None
            if spent > 0:
                clock["credit"] += spent
                clock["deadline"] += spent
                return clock["deadline"] - now
        return extra

    infer = run_isolated(sub, DRIVER_BODY, dict(common, mode="infer"), load_timeout, rearm=infer_rearm,
                         lib_files=SHIM_FILES, cpu_seconds=cpu, interact=stream, **memory)
    outcomes["inference"] = infer
    progress(f"gate 8: inference child {infer.status} ({infer.wall:.1f} s of the {budget:g} s budget)")

    # determinism: passes A, B (one process) and C (a fresh one), decoded, all equal
    passes = {}
    for outcome in (check, infer):
        for body, _ in _events(outcome, "det"):
            passes.setdefault(body.get("pass"), body)
    det_err = next((f"pass {k}: {v['error']}" for k, v in passes.items() if "error" in v), None)
    decoded = {}
    for label in ("A", "B", "C"):
        body = passes.get(label)
        if body is None or "outputs" not in body:
            continue
        outs = body["outputs"]
        if isinstance(outs, list) and len(outs) == len(det_sample):
            decoded[label] = [decode_packed(o, base, c.p, c.tier_id == 0) for o, c in zip(outs, det_sample)]
        else:
            det_err = det_err or f"pass {label}: result of the wrong length"
    if det_err:
        deterministic, dmsg = False, str(det_err)[:300]
    elif "A" not in decoded or "B" not in decoded:
        deterministic, dmsg = False, _child_reason(check, "determinism check did not finish")
    else:
        runs = [decoded[k] for k in ("A", "B", "C") if k in decoded]
        diff = [i for i in range(len(det_sample)) if len({repr(r[i]) for r in runs}) > 1]
        deterministic = not diff
        dmsg = (f"{len(det_sample)} problems identical over {len(runs)} runs "
                f"({'2 processes' if 'C' in decoded else '1 process'})" if deterministic else
                f"problem {diff[0]} (tier {det_sample[diff[0]].tier_id}) differs between runs")
    checks.append(Check("g7.determinism", Status.PASS if deterministic else Status.FAIL,
                        dmsg if deterministic else dmsg + " (not ranked)"))
    checks.insert(next(i for i, c in enumerate(checks) if c.id == "g6.preprocess_isolation") + 1,
                  inference_isolation_check(infer, stream))

    # inference: tiers whose results arrived within the budget after "ready" (the model's time:
    # the audits' time, credited as the deadline was moved, is not counted)
    ready = _events(infer, "ready")
    t_ready = ready[0][1] if ready else None
    by_tier = {}
    for body, t in _events(infer, "tier"):
        tid = body.get("tier")
        wall = None if t_ready is None else t - t_ready - audit_time_before(infer, t, budget)
        if _plain_int(tid) and tid in test_set and tid not in by_tier and wall is not None \
                and wall <= budget:
            by_tier[tid] = (body, wall)
    tiers = []
    stop = None
    for tid in sorted(test_set):
        body, wall = by_tier.get(tid, (None, None))
        if body is None and stop is None:
            stop = tid
        r = score_tier(test_set[tid], body, base, wall)
        if body is None:
            r = dataclasses.replace(r, note=("not finished within the budget" if infer.status == "timeout"
                                             else _child_reason(infer, "stopped")))
        tiers.append(r)
    incomplete = [t for t in tiers if not t.completed and t.tier_id > 0]
    last = max((t.wall for t in tiers if t.wall is not None), default=0.0)
    if t_ready is None:
        checks.append(Check("g8.inference", Status.FAIL,
                            _child_reason(infer, "inference did not start"), None, budget))
    elif incomplete:
        first = incomplete[0]
        checks.append(Check("g8.inference", Status.FAIL,
                            f"{len(incomplete)} scored tier(s) incomplete, scored 0; first: tier "
                            f"{first.tier_id}: {first.note}", round(last, 3), budget))
    else:
        checks.append(Check("g8.inference", Status.PASS,
                            f"{last:.2f} s, all {len(tiers)} tiers completed (budget {budget:g} s)",
                            round(last, 3), budget))
    if tiers and not tiers[0].completed and not incomplete and t_ready is not None:
        checks.append(Check("g8.tier0", Status.INFO, f"diagnostic tier 0 incomplete: {tiers[0].note}"))
    # determinism of the real stream: problems drawn from it, answered again by a fresh process
    stream_det, recheck = stream_determinism(sub, common, test_set, by_tier, base, load_timeout=load_timeout,
                                             budget=budget, cpu=cpu, memory=memory, rearm=rearm_once())
    checks.insert(next(i for i, c in enumerate(checks) if c.id == "g7.determinism") + 1, stream_det)
    if recheck is not None:
        outcomes["determinism re-run"] = recheck
    deterministic = deterministic and stream_det.status is Status.PASS
    isolated = isolated and all(c.status is not Status.FAIL for c in checks if c.id == "g6.isolation_in_inference")
    forged = sum(o.forged for o in outcomes.values())
    if forged:
        checks.append(Check("g8.reply_channel", Status.REVIEW,
                            f"{forged} line(s) on the result pipe without the run token"))
    guarded = runtime_guard_check(outcomes, guard)
    return {"checks": [guarded] + checks, "tiers": tiers, "outcomes": outcomes,
            "deterministic": deterministic, "isolated": isolated, "loaded": True,
            "guarded": guarded.status is not Status.FAIL}


def probe_operand_range(tid: int, same_prime: list) -> tuple:
    """[lo, hi) of an audit probe's operands for tier tid, given the tier's cases with the probe's
    prime: the tier's operand range (TIERS), or for tier 0 the smallest sub-tier range (MULT_SUB_TIERS)
    holding those cases' operands, so that a * b < p as in the tier."""
    if tid != 0:
        bits = next((t[3] for t in TIERS if t[0] == tid), 0)
        if bits:
            return 0, 1 << bits
    width = max((max(c.a, c.b).bit_length() for c in same_prime), default=1)
    lo_bits, hi_bits = next(((a, b) for a, b in MULT_SUB_TIERS if b >= width), MULT_SUB_TIERS[-1])
    hi = 1 << hi_bits
    p = min((c.p for c in same_prime), default=0)
    if (hi - 1) ** 2 >= p:                          # a test set from files: keep a * b < p anyway
        hi = max(2, math.isqrt(max(p - 1, 0)) + 1)
        return 0, hi
    return (1 << (lo_bits - 1) if lo_bits > 1 else 0), hi


def audit_time_before(outcome, t: float, budget: float) -> float:
    """Seconds the inference process spent in isolation audits reported before time t (each from
    the after-batch question that started it to its "audit" report), capped as the deadline
    credit is (SPEC audit_credit_fraction of the budget)."""
    total, asked = 0.0, None
    for m, tm in zip(outcome.messages, outcome.times):
        if tm > t:
            break
        event = m.get("event") if isinstance(m, dict) else None
        if event in ("batch", "end"):
            asked = tm
        elif event == "audit" and asked is not None:
            total, asked = total + tm - asked, None
    return min(total, SPEC["audit_credit_fraction"] * budget)


class _InferenceInteraction:
    """The grader's side of the inference process's ask() calls: the tiers on "plan" (the budget
    is already running), and after each batch the decision whether to audit isolation now, drawn
    here (SystemRandom) when asked, so nothing in the child tells it which batches are audited."""

    def __init__(self, test_set: dict):
        self.test_set, self.rng = test_set, random.SystemRandom()
        self.asks, self.audit_at, self.sent = 0, set(), []     # sent: ask counts audited
        self.batch_tier = []                                    # tier of the k-th batch
        self.ready = False                                      # set by the "ready" message

    def pairs(self, tid: int) -> list:
        """SPEC audit_pairs pairs x, y of FRESH problems of tier tid, as triples: one of the tier's
        primes (drawn from its cases), operands drawn like the tier's own (uniform below
        2^operand_bits; tier 0: in the sub-tier's range of that prime).  Fresh operands, not
        problems of the test set: a probe (xa, xb, p) is never a problem the stream already
        answered, so a hook that leaks only on arguments it has not seen yet (and is plain on
        repeats) leaks on the first probe and is caught by the second."""
        cases = self.test_set[tid]
        out = []
        for _ in range(SPEC["audit_pairs"]):
            p = self.rng.choice(cases).p
            lo, hi = probe_operand_range(tid, [c for c in cases if c.p == p])
            xa, xb, ya, yb = (self.rng.randrange(lo, hi) for _ in range(4))
            out.append([[str(xa), str(xb), str(p)], [str(ya), str(yb), str(p)]])
        return out

    def __call__(self, body):
        event = body.get("event") if isinstance(body, dict) else None
        if event == "plan" and not self.batch_tier and self.ready:
            bs = body.get("batch_size")
            bs = bs if _plain_int(bs) and bs >= 1 else 1
            for tid in sorted(self.test_set):
                self.batch_tier += [tid] * -(-len(self.test_set[tid]) // bs)
            n = max(1, len(self.batch_tier))
            early = max(1, int(n * SPEC["audit_early_fraction"]))
            per_tier = {}                                   # one audit at a random batch of each tier
            for k, tid in enumerate(self.batch_tier, 1):
                per_tier.setdefault(tid, []).append(k)
            self.audit_at = {self.rng.randint(1, early)} | set(
                self.rng.sample(range(1, n + 1), min(SPEC["inference_audits"], n))) | {
                self.rng.choice(ks) for ks in per_tier.values() for _ in range(SPEC["audits_per_tier"])}
            return {"tiers": [[tid, [_triple(c) for c in self.test_set[tid]]] for tid in sorted(self.test_set)]}
        if event == "batch":
            self.asks += 1
            if self.asks in self.audit_at and self.asks <= len(self.batch_tier):
                self.sent.append(self.asks)
                return {"audit": self.pairs(self.batch_tier[self.asks - 1])}
            return None
        if event == "end" and self.batch_tier:
            self.sent.append("end")
            return {"audit": self.pairs(max(self.test_set))}
        return None


def inference_isolation_check(infer, stream: _InferenceInteraction) -> Check:
    """g6.isolation_in_inference: every audit the grader asked for came back clean."""
    cid = "g6.isolation_in_inference"
    audits = [b for b, _ in _events(infer, "audit")]
    bad = next((b for b in audits if b.get("reason") != ""), None)
    if bad is not None:
        return Check(cid, Status.FAIL, f"{bad.get('where', '?')}: {str(bad.get('reason'))[:250]} "
                     "(inside the inference process, after predictions ran; not ranked)"[:400],
                     len(audits), len(stream.sent))
    if stream.asks > len(stream.batch_tier):
        return Check(cid, Status.FAIL, f"{stream.asks} after-batch questions for {len(stream.batch_tier)} "
                     "batches: something other than the driver asked for audits (not ranked)",
                     len(audits), len(stream.sent))
    missing = len(stream.sent) - len(audits)
    cut = missing == 1 and infer.status == "timeout"       # the budget ran out during the last audit:
    if missing and not cut:                                # its tiers are lost anyway, no verdict on it
        return Check(cid, Status.FAIL, f"{len(audits)} of {len(stream.sent)} audit(s) reported; "
                     f"{_child_reason(infer, 'an audit did not finish')} (not ranked)",
                     len(audits), len(stream.sent))
    note = f" (one more cut by the budget: {infer.reason})" if cut else ""
    if not audits:
        return Check(cid, Status.SKIP, _child_reason(infer, "the stream stopped before the first "
                                                     "audit finished") + note, 0, len(stream.sent))
    return Check(cid, Status.PASS, f"{len(audits)} audit(s) at batches the grader drew while the model "
                 f"ran: hooks per-argument and stateless after predictions{note}", len(audits), len(stream.sent))


def stream_determinism(sub: str, common: dict, test_set: dict, by_tier: dict, base, *, load_timeout: float,
                       budget: float, cpu: int, memory: dict, rearm) -> tuple:
    """g7.determinism_stream: SPEC stream_det_per_tier problems drawn (SystemRandom) from each tier
    the inference stream completed, answered again in a shuffled order by a fresh process, decoded
    and compared.  (Check, RunOutcome of the re-run or None)."""
    cid = "g7.determinism_stream"
    rng = random.SystemRandom()
    drawn = []                                     # (case, stream's packed output)
    for tid in sorted(by_tier):
        body, _ = by_tier[tid]
        outs = body.get("outputs")
        if body.get("complete") is not True or not isinstance(outs, list) or len(outs) != len(test_set[tid]):
            continue
        for i in rng.sample(range(len(outs)), min(SPEC["stream_det_per_tier"], len(outs))):
            drawn.append((test_set[tid][i], outs[i]))
    if not drawn:
        return Check(cid, Status.FAIL, "no completed tier to draw from: the inference stream's "
                     "determinism cannot be checked (not ranked)"), None
    order = list(range(len(drawn)))
    while len(order) > 1 and order == sorted(order):
        rng.shuffle(order)
    plan = {"cases": [_triple(drawn[k][0]) for k in order]}
    recheck = run_isolated(sub, DRIVER_BODY, dict(common, mode="recheck"), load_timeout, rearm=rearm,
                           lib_files=SHIM_FILES, cpu_seconds=cpu, **memory,
                           interact=lambda body: plan if isinstance(body, dict)
                           and body.get("event") == "plan" else None)
    got = _events(recheck, "recheck")
    what = f"{len(drawn)} problems drawn from the inference stream"
    if not got:
        return Check(cid, Status.FAIL, f"{what}: " + _child_reason(recheck, "the independent re-run did not "
                     "finish") + " (not ranked)", None, len(drawn)), recheck
    body = got[0][0]
    outs = body.get("outputs")
    if "error" in body or not isinstance(outs, list) or len(outs) != len(order):
        return Check(cid, Status.FAIL, f"{what}: the independent re-run: "
                     f"{str(body.get('error') or 'result of the wrong length')[:200]} (not ranked)",
                     None, len(drawn)), recheck
    diff = []
    for k, out in zip(order, outs):
        case, first = drawn[k]
        if repr(decode_packed(first, base, case.p, case.tier_id == 0)) != \
                repr(decode_packed(out, base, case.p, case.tier_id == 0)):
            diff.append(case.tier_id)
    if diff:
        return Check(cid, Status.FAIL, f"{len(diff)} of {what} answered differently by an independent "
                     f"process (shuffled order); tiers {sorted(set(diff))} (not ranked)",
                     len(diff), 0), recheck
    return Check(cid, Status.PASS, f"{what} (every completed tier) answered identically by an "
                 "independent process in a shuffled order", 0, 0), recheck


def memory_options(memory_gb, gpu: bool) -> dict:
    """run_isolated's memory keywords: --memory GB (default SPEC runner_mem_bytes) as the
    address-space limit, or with --gpu as the limit of the outside resident-memory watchdog, plus
    the CUDA environment variables and folders a GPU runtime needs (GPU_ENV, GPU_PATHS)."""
    limit = int(memory_gb * 2 ** 30) if memory_gb is not None else SPEC["runner_mem_bytes"]
    if not gpu:
        return {"mem_bytes": limit, "memory": "address"}
    return {"mem_bytes": limit, "memory": "resident", "env_pass": GPU_ENV,
            "ro_paths": tuple(p for p in GPU_PATHS if os.path.exists(p))}


def tier_records(tiers: list, prefix: str = "") -> list:
    out = []
    for t in tiers:
        acc = f"{t.accuracy:.4f} ({t.correct}/{t.total})" if t.completed else f"0 (incomplete: {t.note})"
        wall = f", done at {t.wall:.2f} s" if t.wall is not None and t.completed else ""
        tag = " [unscored diagnostic]" if t.tier_id == 0 else ""
        bad = f"; {t.malformed} malformed, e.g. {t.note}" if t.completed and t.malformed else ""
        out.append(Check(f"{prefix}tier.{t.tier_id}", Status.INFO, f"accuracy {acc}{wall}{bad}{tag}",
                         round(t.accuracy, 4), SPEC["rank_threshold"]))
    bad = [t for t in tiers if t.tier_id > 0 and t.completed and t.malformed]
    if bad:     # a score lowered by undecodable replies says so in a FAIL line, not only in numbers
        n, total = sum(t.malformed for t in bad), sum(t.total for t in tiers if t.tier_id > 0)
        out.append(Check(f"{prefix}g8.malformed_outputs", Status.FAIL,
                         f"{n} of {total} scored replies did not decode (counted wrong), e.g. tier "
                         f"{bad[0].tier_id}: {bad[0].note}", n, 0))
    return out


