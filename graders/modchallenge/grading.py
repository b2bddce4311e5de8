"""GRADING (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import time
from graders.common.records import Check, Report, Status
from graders.common.records import _INTERRUPT
from graders.common.reports import progress, progress_count
from graders.common.sandbox import sandbox_check
from graders.modchallenge.gates_runtime import guard_request
from graders.modchallenge.gates_static import check_artifact_size, check_manifest, check_static
from graders.modchallenge.seeds import (answers_hidden_check, grade_seed, overall_error, resume_load,
    resume_save, seed_keys, seed_label)
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def grade(submission: str, *, seeds: list, total: int, budget: float, load_timeout: float,
          skip_static: bool, no_exec: bool, jobs: int, test_dir: str | None,
          resume_dir: str | None = None, memory: dict | None = None,
          subset: dict | None = None) -> Report:
    """Gates 1-3 once, then gates 4-8 per seed (each seed's result kept in resume_dir when
    given, and reused when the same seed, inputs and grader are graded again), then the keys."""
    report = Report(submission)
    checks, phases, keys = report.checks, report.phases, report.keys
    report.figures_data.update(budget=budget, seeds=[])                    # PLOTS
    if subset:
        keys["subset"] = subset["label"]
    t = time.monotonic()
    checks += check_manifest(submission)
    manifest = checks[0].measured if checks[0].status is Status.PASS else None
    checks += check_artifact_size(submission)
    digests = None if skip_static else {}
    checks += check_static(submission, skip_static, digests)
    phases["gates1-3"] = time.monotonic() - t
    progress("gates 1-3: " + ", ".join(f"{c.id} {c.status.value}" for c in checks if c.id[:2] in
                                       ("g1", "g2", "g3") and "." in c.id))
    if any(c.status is Status.FAIL for c in checks):
        checks += [Check(cid, Status.SKIP, "not run: an earlier gate failed") for cid in
                   ("g4.testgen", "g5.model_load", "g6.preprocess_isolation", "g7.determinism",
                    "g8.inference")]
        keys.update(seed=",".join(seed_label(s) for s in seeds), overall_accuracy=0.0,
                    highest_tier_above_90=-1, deterministic=False, ranked=False)
        return report
    many = len(seeds) > 1
    results, t_seeds, resumed = [], time.monotonic(), 0
    for i, seed in enumerate(seeds):
        t = time.monotonic()
        prefix = f"s{i + 1}." if many else ""
        r = resume_load(resume_dir, submission, seed, prefix, no_exec)
        resumed += r is not None
        if r is None:
            r = grade_seed(submission, manifest, seed, total=total, budget=budget,
                           load_timeout=load_timeout, no_exec=no_exec, jobs=jobs, test_dir=test_dir,
                           prefix=prefix, memory=memory, guard=guard_request(digests),
                           subset=subset)
            if _INTERRUPT["at"] is None:            # a seed cut short by Ctrl-C is not a result
                resume_save(resume_dir, submission, seed, prefix, no_exec, r)
        phases[f"seed{i + 1}.generate"] = r["gen_s"]
        phases[f"seed{i + 1}.total"] = time.monotonic() - t
        checks += r["checks"]
        for name, oc in r["outcomes"].items():
            report.outcomes[f"seed {i + 1} {name}" if many else name] = oc
        results.append(r)
        report.figures_data["seeds"].append((seed_label(seed), r["tiers"]))     # PLOTS
        progress_count("seeds", i + 1, len(seeds), t_seeds,
                       f"{seed_label(seed)[:16]}: overall {r.get('overall', 0.0):.4f}"
                       + (", resumed" if r.get("resumed") else ""))
    if resume_dir:
        progress(f"resume: {resumed} of {len(seeds)} seed(s) reused from {resume_dir}")
        checks.append(Check("run.resume", Status.INFO, f"{resumed} of {len(seeds)} seed(s) reused "
                            f"from {resume_dir} (same seed, submission bytes, options and grader)",
                            resumed, len(seeds)))
    if not no_exec:                          # after the runs: they established the level
        checks += [sandbox_check()] + answers_hidden_check(test_dir)
    keys.update(seed_keys(results, total, test_dir, many))
    if no_exec:
        return report
    overall = [r.get("overall", 0.0) for r in results]
    keys["overall_accuracy"] = round(sum(overall) / len(overall), 4)
    keys.update(overall_error(results, keys["overall_accuracy"]))
    if many:
        keys["overall_accuracy_min"] = min(overall)
    keys["highest_tier_above_90"] = min(r.get("htop", -1) for r in results)
    keys["deterministic"] = all(r["deterministic"] for r in results)
    keys["ranked"] = all(r["ranked"] for r in results)
    return report


