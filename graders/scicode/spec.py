"""SPEC (a part of grade_scicode.py; see CONTRIBUTING.md)."""
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SPEC: every threshold, count, file name (seed line in comments)
# =============================================================================
SPEC = {
    # seed "Scope = 338 steps = AA design count"; spec "Scores" (steps / problems per split)
    "official_counts": {"test": (288, 65), "dev": (50, 15), "all": (338, 80)},
    # spec "Data": official sha256 of the data files
    "official_sha256": {
        "problems_all.jsonl": "38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d",
        "problems_dev.jsonl": "193968aff23b7ed931c8f6d196b611e2f6694adb49e6cc085444a60ad2fc4f7b",
        "test_data.h5": "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890",
    },
    # spec "Scope": the three no-test steps, outside the scope (official injects reference code)
    "special_steps": ("13.6", "62.1", "76.3"),
    # spec "Resources": 51.4 takes 50-70 s; official script uses 1800 s. Ours: 600 s default.
    "timeout_s": 600.0,
    # spec "Resources": 10.11 needs 2.35 GB and fails under 2 GB; 4 GiB of address space.
    "mem_gb": 4.0,
    # the runner's limit names (same SPEC keys in every grader that runs code)
    "runner_fsize_bytes": 64 << 20,         # per-step file-size limit (stdout flood ends here)
    "runner_output_cap_bytes": 16 << 10,    # captured submission output kept per step
    "runner_reply_cap_bytes": 256 << 20,    # reply-pipe bytes kept per step (comparison records)
    "runner_cpu_slack_s": 30,               # RLIMIT_CPU = timeout + this
    "runner_max_messages": 100_000,         # messages kept per step (a record flood ends here)
    # the worker enforces each step's timeout itself; the grader waits this much longer for
    # its report before it counts the worker as stalled (the step's failure)
    "worker_reply_margin_s": 10.0,
    # a grader-side comparison whose broadcast exceeds both operands and this many elements
    # is refused (a record could otherwise make the grader's own process allocate without bound)
    "max_broadcast": 1 << 27,
    "max_generation_bytes": 2 << 20,
    "max_problems_bytes": 64 << 20,
    # seed "Harness-fault census": 100 % shared signature across >= 10 failures
    "census_min_failures": 10,
    # seed "DRY sandbox must emit `SCICODE_PASS (DRY_RUN)`"
    "dry_marker": "SCICODE_PASS (DRY_RUN)",
}


