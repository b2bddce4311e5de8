"""SCORING (a part of grade_engiai.py; see CONTRIBUTING.md)."""
from graders.common.records import Check, Status
from graders.engiai.families import (Unscorable, evaluation_calls, job_completed,
    optimal_count_check, submitted_jobs, succeeded, tool_efficiency, weighted)
from graders.engiai.guarded import as_number, short
from graders.engiai.spec import PROBLEMS, SPEC, hpc_algorithm
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SCORING: HPC orchestration (workflow completion, tool efficiency)
# =============================================================================
def score_hpc(key: dict, calls: list, problem: str, style: str, tid: str, rec=None) -> tuple:
    """workflow_completion = w_step * steps/4 + 0.15 config (when generate_training_command
    succeeded) + 0.15 eval metrics (when an evaluation succeeded); w_step takes the rest.  A
    step counts only for its outcome: a successful generate_training_command, a submitted job
    (job id), a job that reached COMPLETED, a successful evaluation (issue 24).  The expected
    config is the harness manifest entry's (`key`), never the record's."""
    cfg, checks = PROBLEMS[problem], []
    want = (key.get("expected") or {}).get("training_config") if isinstance(key.get("expected"), dict) else None
    if not isinstance(want, dict):
        raise Unscorable("expected.training_config missing from the harness manifest")
    for k in ("seed", "epochs"):
        if as_number(want.get(k)) is None:
            raise Unscorable(f"expected.training_config.{k} missing or not a number in the harness "
                             "manifest: the config cannot be checked")
    if want.get("algorithm", hpc_algorithm(style)) != hpc_algorithm(style) or \
            want.get("problem_id", cfg["base_problem"]) != cfg["base_problem"]:
        checks.append(Check(f"trial.{tid}.config", Status.FAIL,
                            f"expected.training_config {short(want.get('algorithm'), as_repr=True)}/"
                            f"{short(want.get('problem_id'), as_repr=True)} contradicts the registry "
                            f"({hpc_algorithm(style)}/{cfg['base_problem']}); the registry's is used"))
    want = dict(want, algorithm=hpc_algorithm(style), problem_id=cfg["base_problem"])
    generated = [c for c in calls if c["name"] == "generate_training_command" and succeeded(c)]
    evaluated = evaluation_calls(calls)
    done = {"generate_training_command": bool(generated),
            "submit_slurm_job": bool(submitted_jobs(calls)),
            "monitor_job_until_complete": job_completed(calls),
            "evaluate_model": bool(evaluated)}
    rate = sum(done.values()) / len(done)

    def same_number(x, y):
        x, y = as_number(x), as_number(y)
        return x is not None and x == y

    def config_ok(c):
        a = c["args"].get("cfg", c["args"])
        if not isinstance(a, dict):
            return False
        return (same_number(a.get("seed"), want.get("seed")) and
                same_number(a.get("epochs"), want.get("epochs")) and
                a.get("algorithm", "cgan_cnn_2d") == want["algorithm"] and
                a.get("problem_id", "beams2d") == want["problem_id"])
    config = 1.0 if any(config_ok(c) for c in generated) else 0.0
    metrics = {}
    for c in evaluated:
        m = c["result"].get("metrics")
        if isinstance(m, dict):
            metrics.update({k: m[k] for k in SPEC["hpc_eval_metrics"] if as_number(m.get(k)) is not None})
    eval_score = min(1.0, len(metrics) / len(SPEC["hpc_eval_metrics"]))
    w2 = SPEC["hpc_secondary_weight"]
    w_cfg = w2 if done["generate_training_command"] else 0.0
    w_eval = w2 if done["evaluate_model"] else 0.0
    wc = (1.0 - w_cfg - w_eval) * rate + w_cfg * config + w_eval * eval_score
    optimal = cfg["optimal"][style]
    terms = {"step_completion": rate, "config_correct": config, "eval_metrics": eval_score,
             "workflow_completion": wc, "tool_efficiency": tool_efficiency(calls, optimal)}
    terms["overall"] = weighted(cfg["weights"], terms)
    checks += optimal_count_check(rec or {}, optimal, tid)
    missing = [s for s, ok in done.items() if not ok]
    checks.append(Check(f"trial.{tid}.workflow", Status.INFO,
                        f"steps {sum(done.values())}/{len(done)} (a step counts when its call "
                        "succeeded; the job when it reached COMPLETED)"
                        + (f"; not done: {', '.join(missing)}" if missing else "")
                        + f"; config {'correct' if config else 'wrong/absent'}; "
                          f"{len(metrics)}/{len(SPEC['hpc_eval_metrics'])} evaluation metrics"))
    return terms, checks


