"""5. SEED / RANGE ROBUSTNESS (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import dataclasses
import hashlib
import json
import math
import os
import time
from graders.common.records import Check, Reject, Status
from graders.common.reports import grader_sha256, progress_phase, tree_sha256
from graders.common.sandbox import sandbox_level
from graders.modchallenge.decoding import TierResult, ranking_keys
from graders.modchallenge.gates_runtime import run_model, tier_records
from graders.modchallenge.spec import SPEC
from graders.modchallenge.testgen import generate_test_set, read_test_set
from graders.common.stats import binomial_estimate, proportion_interval
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 5. SEED / RANGE ROBUSTNESS: one seed's gates 4-8, and the multi-seed table
# =============================================================================
def seed_label(seed: bytes) -> str:
    return "public" if seed == SPEC["public_seed"] else seed.hex()


def grade_seed(sub: str, manifest: dict, seed: bytes, *, total: int, budget: float,
               load_timeout: float, no_exec: bool, jobs: int, test_dir: str | None,
               prefix: str, memory: dict | None = None, guard: dict | None = None,
               subset: dict | None = None) -> dict:
    """Gates 4-8 (and the runtime part of gate 3) for one seed; records carry `prefix`; `memory`:
    memory_options(); `guard`: guard_request(); `subset` ({"limit": N, "tiers": [...]}, a smoke
    test): the model sees only those problems."""
    t0 = time.monotonic()
    checks = []
    progress_phase(f"gate 4: {'reading' if test_dir else 'generating'} the test set "
                   f"(seed {seed_label(seed)[:16]})")
    try:
        test_set = read_test_set(test_dir) if test_dir else generate_test_set(seed, total, jobs)
    except Reject as exc:
        checks.append(exc.check)
        test_set = None
    gen_s = time.monotonic() - t0
    result = {"seed": seed, "gen_s": gen_s, "tiers": [], "outcomes": {}, "deterministic": False,
              "isolated": False, "ranked": False, "executed": False}
    if test_set is None:
        result["checks"] = [dataclasses.replace(c, id=prefix + c.id) for c in checks] + [
            Check(prefix + cid, Status.SKIP, "not run: no test set") for cid in
            ("g5.model_load", "g6.preprocess_isolation", "g7.determinism", "g8.inference")]
        return result
    n = sum(len(v) for v in test_set.values())
    origin = f"read from {test_dir} (expected recomputed, p prime, rows in their tier)" if test_dir else \
        f"seed {seed_label(seed)}"
    checks.append(Check("g4.testgen", Status.PASS,
                        f"{n} problems = {n // len(test_set)} x {len(test_set)} tiers (0-10), "
                        f"{origin}, {gen_s:.2f} s", n, total))
    if subset:
        test_set = select_problems(test_set, subset)
    result["test_set"] = test_set
    if no_exec:
        checks += [Check(cid, Status.SKIP, "not run (--no-exec)") for cid in
                   ("g5.model_load", "g6.preprocess_isolation", "g7.determinism", "g8.inference")]
    else:
        run = run_model(sub, manifest, test_set, budget=budget, load_timeout=load_timeout, memory=memory,
                        guard=guard)
        checks += run["checks"]
        result.update(tiers=run["tiers"], outcomes=run["outcomes"], deterministic=run["deterministic"],
                      isolated=run["isolated"], executed=run["loaded"],
                      ranked=run["deterministic"] and run["isolated"] and run["guarded"])
        if run["tiers"]:
            overall, htop = ranking_keys(run["tiers"])
            checks += tier_records(run["tiers"])
            checks.append(Check("rank.overall_accuracy", Status.INFO,
                                f"{overall:.4f} (mean over scored tiers 1-10)", overall))
            checks.append(Check("rank.highest_tier_above_90", Status.INFO, str(htop), htop))
            result.update(overall=overall, htop=htop)
    result["checks"] = [dataclasses.replace(c, id=prefix + c.id) for c in checks]
    return result


def robustness_row(r: dict) -> str:
    """One row of the seed's §5 table: seed, t1-t7 (min), t8, t9, t10, overall, htop, det."""
    acc = {t.tier_id: t.accuracy for t in r["tiers"]}
    if not acc:
        return f"{seed_label(r['seed'])}  (not graded)"
    t17 = min(acc.get(k, 0.0) for k in range(1, 8))
    return (f"{seed_label(r['seed'])}  {t17:.2f}  {acc.get(8, 0):.2f}  {acc.get(9, 0):.2f}  "
            f"{acc.get(10, 0):.2f}  {r.get('overall', 0.0):.4f}  {r.get('htop', -1)}  "
            f"{'yes' if r['deterministic'] else 'NO'}")


def answers_hidden_check(test_dir) -> list:
    """Without file isolation the model could read the expected values (a --test-set file, or
    the seed in the grader's command line): such a grading does not certify (REVIEW)."""
    if sandbox_level()["file_isolation"]:
        return []
    where = f"the test-set file {test_dir}" if test_dir else "the seed on the grader's command line"
    return [Check("sandbox.answers_hidden", Status.REVIEW,
                  f"file isolation unavailable: the model could read {where} (expected values)")]


def seed_keys(results: list, total: int, test_dir: str | None, many: bool) -> dict:
    """The seed's §3 tier table (one seed) or §5 robustness table (several), typed."""
    keys = {"seed": f"(test set {test_dir})" if test_dir else ",".join(seed_label(r["seed"]) for r in results),
            "total": sum(len(v) for v in results[0].get("test_set", {}).values()) or results[0].get(
                "total") or total}
    graded = [r for r in results if r["tiers"]]
    if not many and graded:
        keys["tiers"] = [{"tier": t.tier_id, "scored": t.tier_id > 0, "accuracy": round(t.accuracy, 4),
                          **tier_error(t), "completed": t.completed,
                          "cumulative_wall_s": round(t.wall, 2) if t.wall is not None and t.completed
                          else None} for t in graded[0]["tiers"]]
    if many:
        keys["robustness"] = [robustness_record(r) for r in results]
    return keys


def select_problems(test_set: dict, subset: dict) -> dict:
    """A SUBSET of a generated (or read) test set: the chosen tiers (tier 0, the unscored
    diagnostic, always) and the first `limit` problems of each."""
    tiers, limit = subset.get("tiers"), subset.get("limit")
    return {k: v[:limit] if limit else v for k, v in test_set.items()
            if not tiers or k == 0 or k in tiers}


def tier_error(t) -> dict:
    """A completed tier's accuracy as an estimate: binomial standard error and Wilson interval
    over its problems (an unfinished tier scores 0 by rule: no error bar)."""
    se, ci = binomial_estimate(t.correct, t.total) if t.completed else (None, None)
    return {"accuracy_stderr": se, "accuracy_ci95": ci}


def overall_error(results: list, overall: float) -> dict:
    """overall_accuracy (the mean over seeds of the mean over scored tiers 1-10) as an estimate:
    the tiers are independent strata, so its variance is sum(p(1-p)/n) over every completed
    scored tier of every seed, divided by (seeds x scored tiers)^2; a tier that did not finish,
    or a seed that did not run, is 0 by rule (no variance)."""
    scored = max((sum(t.tier_id > 0 for t in r["tiers"]) for r in results), default=0)
    cells = [t for r in results for t in r["tiers"] if t.tier_id > 0 and t.completed and t.total]
    if not scored or not cells:
        return {}
    se = math.sqrt(sum(t.accuracy * (1 - t.accuracy) / t.total for t in cells)) / (len(results) * scored)
    return {"overall_accuracy_stderr": round(se, 4),
            "overall_accuracy_ci95": proportion_interval(overall, se, sum(t.total for t in cells))}


def robustness_record(r: dict) -> dict:
    """One row of the seed's §5 table, typed: t1-t7 (min), t8, t9, t10, overall, htop, det."""
    acc = {t.tier_id: t.accuracy for t in r["tiers"]}
    return {"seed": seed_label(r["seed"]),
            "t1_t7_min": round(min(acc.get(k, 0.0) for k in range(1, 8)), 4) if acc else None,
            "t8": round(acc.get(8, 0.0), 4) if acc else None, "t9": round(acc.get(9, 0.0), 4) if acc else None,
            "t10": round(acc.get(10, 0.0), 4) if acc else None,
            "overall": r.get("overall", 0.0) if acc else None, "htop": r.get("htop", -1),
            "deterministic": bool(r["deterministic"])}


def resume_key(submission: str, seed: bytes, prefix: str, no_exec: bool) -> str:
    """What a kept seed result depends on: the grader's bytes, the submission's bytes, the seed
    and every option that changes a seed's records."""
    opts = {k: v for k, v in sorted(_RESUME_OPTIONS.items())}
    if submission not in _SUBMISSION_DIGESTS:       # hashed once per grading, not per seed and use
        _SUBMISSION_DIGESTS[submission] = tree_sha256(submission)["sha256"]
    text = json.dumps([grader_sha256(), _SUBMISSION_DIGESTS[submission], seed.hex(), prefix,
                       no_exec, opts], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


_SUBMISSION_DIGESTS: dict = {}  # submission path -> tree digest (the grader never writes it)


_RESUME_OPTIONS: dict = {}     # set by grade_submission: total, budget, load_timeout, test set ...


def resume_load(resume_dir, submission, seed, prefix, no_exec):
    """A seed's kept result, or None (absent, other inputs, unreadable)."""
    if not resume_dir:
        return None
    path = os.path.join(resume_dir, f"seed-{hashlib.sha256(seed).hexdigest()[:16]}-"
                                    f"{prefix.rstrip('.') or 's'}.json")
    try:
        with open(path) as fh:
            doc = json.load(fh)
        if doc.get("key") != resume_key(submission, seed, prefix, no_exec):
            return None
        r = doc["result"]
        return {"seed": seed, "gen_s": 0.0, "outcomes": {}, "resumed": True, "total": r["total"],
                "deterministic": r["deterministic"], "isolated": r["isolated"], "ranked": r["ranked"],
                "executed": r["executed"], "tiers": [TierResult(**t) for t in r["tiers"]],
                **({"overall": r["overall"], "htop": r["htop"]} if "overall" in r else {}),
                "checks": [Check(c["id"], Status(c["status"]), c["message"], c["measured"], c["limit"])
                           for c in r["checks"]]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def resume_save(resume_dir, submission, seed, prefix, no_exec, r) -> None:
    """Keep a finished seed's records (written to a temp file, then renamed: never half a file)."""
    if not resume_dir:
        return
    path = os.path.join(resume_dir, f"seed-{hashlib.sha256(seed).hexdigest()[:16]}-"
                                    f"{prefix.rstrip('.') or 's'}.json")
    keep = {"total": sum(len(v) for v in r.get("test_set", {}).values()),
            "deterministic": r["deterministic"], "isolated": r["isolated"], "ranked": r["ranked"],
            "executed": r["executed"], "tiers": [dataclasses.asdict(t) for t in r["tiers"]],
            "checks": [c.as_dict() for c in r["checks"]],
            **({"overall": r["overall"], "htop": r["htop"]} if "overall" in r else {})}
    try:
        with open(path + ".tmp", "w") as fh:
            json.dump({"key": resume_key(submission, seed, prefix, no_exec), "result": keep}, fh)
        os.replace(path + ".tmp", path)
    except (OSError, TypeError, ValueError):
        pass


