"""SPEC (a part of grade_engiai.py; see CONTRIBUTING.md)."""
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SPEC: every threshold, tolerance, file name and weight (seed line in comments)
# =============================================================================
SPEC = {
    "trial_format": "engiai-trial/1",  # this project's format (spec: "the format of a trial record is this project's to define")
    "trials_dir": "trials",            # RUN_DIR/trials/<trial_id>/
    "trial_file": "trial.json",
    "arrays_file": "arrays.h5",
    "reference_file": "reference.h5",  # RUN_DIR/reference.h5: ground truth + MMD baselines
    "binarize_at": 0.5,                # spec: "Designs binarised at > 0.5"
    "stl_param_tol": 0.05,             # public task-completion scorer: float params within 0.05 (strict <)
    "stl_weld_rel_tol": 1e-5,          # not in seed: STL vertices closer than this fraction of the
                                       # mesh scale are one vertex (float noise; TRIAL_FORMAT.md)
    "stl_geometry_rel_tol": 1e-5,      # not in seed: exported volume/centroid vs the design's cells
    "stl_footprint_max_tests": 1 << 24,  # not in seed: (face, row) pairs the footprint witness scans
    "multi_export_count": 2,           # seed: "two exports from one optimization"
    "rag_default_tol": 0.05,           # public RAG scorer default tolerance, within <=
    "rag_modes": {                     # public RAG scorer: sub-weights by tested parameters
        (): {"volfrac": 0.60, "rag_tool_called": 0.40},
        ("forcedist",): {"volfrac": 0.40, "forcedist": 0.40, "rag_tool_called": 0.20},
        ("rmin",): {"volfrac": 0.40, "rmin": 0.40, "rag_tool_called": 0.20},
        ("forcedist", "rmin"): {"volfrac": 0.30, "forcedist": 0.30, "rmin": 0.30,
                                "rag_tool_called": 0.10},
    },
    "hpc_steps": ("generate_training_command", "submit_slurm_job",   # public HPC scorer
                  "monitor_job_until_complete", "evaluate_model"),
    "hpc_secondary_weight": 0.15,      # public HPC scorer: config 0.15 and eval 0.15 when called
    "hpc_eval_metrics": ("IOG", "COG", "FOG", "MMD", "DPP", "viol"),
    "claim_tol": 1e-6,                 # a claimed score within this of the recomputed one agrees
    "full_score_tol": 1e-9,            # SCORE 1.0 / exit 0 only within round-off of a full score
    "max_json_bytes": 4 << 20,         # guarded input caps (not in seed)
    "max_h5_bytes": 256 << 20,
    "max_array_elems": 1 << 24,
    "max_stl_bytes": 64 << 20,
    "max_script_bytes": 1 << 20,
    "max_tool_calls": 10000,
    # not in seed: copies by distance (TRIAL_FORMAT.md decision 19).  The reference spacing is
    # the copy_scale_percentile-th percentile of the reference designs' nearest-neighbour
    # distances (each to its nearest distinct other; raw values and binarised separately); a
    # sample (or design) nearer than copy_distance_frac of that spacing to a known design is a
    # near-copy; a sample set is held for review when its near-copies exceed copy_max_share of
    # its samples (an exact copy always counts)
    "copy_scale_percentile": 5.0,
    "copy_distance_frac": 0.25,
    "copy_max_share": 0.05,
    "copy_rigid_shift": 2,             # rigid moves that count as copies: flips x shifts by <= 2 cells
    "copy_rigid_max_ops": 1 << 33,     # distance work (moves x pairs x cells x 2) the check may take
    "copy_share_z": 3.0,               # standard errors of (sample near share - reference near
                                       # rate) tolerated beyond copy_max_share
    "copy_max_ground_truths": 4096,    # design copy check: more ground truths of a problem than
                                       # this -> only the run's own examples are compared
    "copy_baseline_frac": 0.5,         # issue 24: a sample is a near-copy of the references only
                                       # when it also lies nearer than this fraction of the
                                       # baseline's own samples' median distance to them (a model
                                       # as near as the baseline is not copying)
    # not in seed, issue 24 (TRIAL_FORMAT.md decision 19): trials under different keys whose
    # scored content agrees within this are copies, and each group of copies counts once.
    # Arrays (design, samples; densities) by the largest absolute difference of a cell or, when
    # smaller, by the larger of the share of cells binarised differently and the difference of
    # the means; other numbers (objectives, export parameters, RAG answers, STL scale and
    # height) relative to max(1, |value|); seeds and epochs exactly.  Sample run: the closest
    # distinct trials of one structure lie 0.667 apart (667x), the closest distinct designs
    # 0.0192 (19x: 96 of 5000 cells, beams2d full-ex1 vs workflow-conditional-ex1)
    "duplicate_tol": 1e-3,
    "duplicate_max_bytes": 256 << 20,  # arrays kept for the near-copy comparison over the run;
                                       # past it a trial is compared by exact content only (REVIEW)
    "duplicate_max_ops": 1 << 32,      # numbers compared pairwise over the run; past it the
                                       # pairs left are not compared (REVIEW: fail closed)
    # issue 24 (red team round 4): two RAG trials with the same answers whose retrievals state
    # other sets of numbers are still copies when their passages' texts are near-identical: of
    # the smaller text's distinct `rag_copy_shingle`-character pieces (rag._copy_text: NFKD
    # without marks, invisible characters or blank letters, casefolded, look-alike letters as
    # Latin, every character other than letters and digits dropped (red team round 5); per
    # passage and of the passages joined in order) at least `rag_copy_containment` lie in the
    # other's, and at least `rag_copy_min_shared` do (a short passage is a fragment of many
    # honest ones).  Measured: copies of the sample's passage with a number appended, a passage
    # added or dropped, whitespace or punctuation changed or put inside words: 1.0 (33 of 33);
    # with a clause inserted 0.788 (26), one word edited as well 0.727 (24 of 33); honest
    # passages stating 0.35 in other words (266 pairs whose numbers differ): none shares 20
    # (the most 17, 0.607 of 28); the 4 pairs at 0.7 or more share at most 7 (short passages)
    "rag_copy_shingle": 8,
    "rag_copy_containment": 0.7,
    "rag_copy_min_shared": 20,
    # issue 24: the answer key is the harness's (TRIAL_FORMAT.md "The harness manifest")
    "harness_dataset": "harness/trials",   # reference.h5: the trials the harness ran, keyed by
    "harness_format": "engiai-harness/1",  # (problem, prompt_style, example_id, seed), with
    "max_harness_bytes": 16 << 20,         # each one's expectations (JSON text, uint8 dataset)
    # spec "Registry": designs in [0, 1]; a value outside by more than round-off is a finding
    "density_range": (0.0, 1.0),
    "density_tol": 1e-6,               # not in seed: float round-off of a clipped optimizer
    "max_artefact_names": 1000,        # not in seed: names in artefacts.stl (listed once each)
    # not in seed: a budget for the run as a whole (issue 24); what is not read past it is a
    # FAIL record and scores 0 (never a None that leaves the SCORE)
    "run_max_read_bytes": 4 << 30,     # bytes of trial artefacts read over the run (an honest
                                       # run of 100 training-code trials, 100 float32 120x120
                                       # samples each, reads ~0.6 GB; the sample run 0.5 MB)
    "run_max_seconds": 1800.0,         # seconds of grading over the run (--budget overrides)
}

# ---- REGISTRY: the one table every CLI choice list and every weight comes from ----
# seed "Prompt styles": beams2d and photonics2d both accept seven styles
DESIGN_STYLES = ("full", "natural", "workflow-random", "workflow-derived-params",
                 "workflow-distractor", "workflow-conditional", "workflow-multi-export")
# seed "Difficulty tiers": --prompt-style {tier}-{terse|verbose}, sixteen combinations
TIER_STYLES = tuple(f"{t}-{v}" for t in ("t2", "t3", "t4", "t4-func", "t5", "t5-func", "t6", "t6v2")
                    for v in ("terse", "verbose"))
# seed: "the hpc_train_* problems use hpc-train-cgan, hpc-train-diff, hpc-train-natural-cgan
# and hpc-train-natural-diff"
HPC_STYLES = ("hpc-train-cgan", "hpc-train-diff", "hpc-train-natural-cgan", "hpc-train-natural-diff")
ALGORITHMS = ("cgan_cnn_2d", "diffusion_2d_cond")  # seed: --algorithm cgan_cnn_2d (default) or diffusion_2d_cond

# seed "Scoring": design_quality 0.65, tool_efficiency 0.20, task_completion 0.15
_W_DESIGN = {"design_quality": 0.65, "tool_efficiency": 0.20, "task_completion": 0.15}
# seed: IoU 0.31, pixel accuracy 0.19, objective match 0.15, constraint match 0.12,
# connectivity 0.12, watertightness 0.11
_W_DQ = {"iou": 0.31, "pixel_accuracy": 0.19, "objective_match": 0.15, "constraint_match": 0.12,
         "connectivity": 0.12, "watertightness": 0.11}
# seed: "thermoelastic2d shifts constraint match to 0 and objective match to 0.27"
_W_DQ_THERMO = dict(_W_DQ, constraint_match=0.0, objective_match=0.27)
_W_RAG = {"rag_accuracy": 1.0}                                         # seed: a single rag_accuracy term
_W_HPC = {"workflow_completion": 0.80, "tool_efficiency": 0.20}        # seed: HPC orchestration
_W_CODE = {"model_quality": 0.55, "code_quality": 0.15, "job_completion": 0.10,   # seed: six terms
           "dryrun": 0.10, "syntax": 0.05, "slurm_accepted": 0.05}

# tools each family's agent can call (seed "Training-code generation": all nine tools bind to
# HPCAgent; the others from the public scorers); a name outside this set is an unknown tool
_TOOLS_DESIGN = ("create_problem", "get_problem_details", "optimize_design", "simulate_design",
                 "render_design", "convert_design_to_stl", "ask_human_for_clarification")
_TOOLS_RAG = _TOOLS_DESIGN + ("search_documents",)
_TOOLS_HPC = ("generate_training_command", "submit_slurm_job", "monitor_job_until_complete",
              "evaluate_model", "execute_cli_command", "diagnose_job_failure")
_TOOLS_CODE = ("write_training_script", "validate_training_script", "generate_training_slurm",
               "validate_slurm_script", "dryrun_training_script", "submit_slurm_job",
               "monitor_job_until_complete", "evaluate_model", "diagnose_job_failure")

# optimal tool sequences per style (tool efficiency = min(1, optimal / actual)); the registry's,
# not the trial's: a trial's own optimal_call_count is compared and reported, never used
_OPT_RENDER = ("optimize_design", "simulate_design", "render_design")
_OPT_EXPORT = ("optimize_design", "simulate_design", "convert_design_to_stl")
_OPTIMAL_DESIGN = {s: (_OPT_RENDER if s in ("full", "natural") else _OPT_EXPORT) for s in DESIGN_STYLES}
_OPTIMAL_DESIGN["workflow-multi-export"] = _OPT_EXPORT + ("convert_design_to_stl",)
_OPTIMAL_HPC = {s: SPEC["hpc_steps"] for s in HPC_STYLES}
_OBJ_BEAMS = (("compliance", 0.2, 1.0),)           # (name, relative error threshold, weight)
_OBJ_PHOTONICS = (("total_overlap", 0.2, 1.0),)
_OBJ_THERMO = (("structural_compliance", 0.2, 0.4), ("thermal_compliance", 0.2, 0.4),
               ("volume_fraction", 0.1, 0.2))   # spec: 0.1 for thermoelastic volume fraction

# the eight registered problems of the seed's family table (the "nine" is not in the
# seed or the spec: reference/engiai/TRIAL_FORMAT.md, decision 17)
PROBLEMS = {
    "beams2d": dict(
        family="design_optimization", styles=DESIGN_STYLES, weights=_W_DESIGN, design_weights=_W_DQ,
        dataset="IDEALLab/beams_2d_50_100_v0", design_shape=(50, 100), objectives=_OBJ_BEAMS,
        constraints=(("volfrac", 0.01),), tools=_TOOLS_DESIGN, optimal=_OPTIMAL_DESIGN,
        agent_tools_support=True),
    "photonics2d": dict(
        family="design_optimization", styles=DESIGN_STYLES, weights=_W_DESIGN, design_weights=_W_DQ,
        dataset="IDEALLab/photonics_2d_120_120_v0", design_shape=(120, 120),
        objectives=_OBJ_PHOTONICS, constraints=(), tools=_TOOLS_DESIGN, optimal=_OPTIMAL_DESIGN,
        agent_tools_support=True),
    # seed warning: registered, but the agent's tools support only beams2d and photonics2d
    "thermoelastic2d": dict(
        family="design_optimization", styles=DESIGN_STYLES, weights=_W_DESIGN,
        design_weights=_W_DQ_THERMO, dataset="IDEALLab/thermoelastic_2d_v0", design_shape=(64, 64),
        objectives=_OBJ_THERMO, constraints=(), tools=_TOOLS_DESIGN, optimal=_OPTIMAL_DESIGN,
        agent_tools_support=False),
    # seed: "The last three families carry no dataset and no objectives"
    "rag_beams2d": dict(
        family="rag_retrieval", styles=("rag-eval",), weights=_W_RAG, dataset=None,
        design_shape=None, objectives=(), constraints=(), tools=_TOOLS_RAG, optimal=None,
        agent_tools_support=True),
    "hpc_train_beams2d": dict(
        family="hpc_orchestration", styles=HPC_STYLES, weights=_W_HPC, dataset=None,
        design_shape=None, objectives=(), constraints=(), tools=_TOOLS_HPC, optimal=_OPTIMAL_HPC,
        agent_tools_support=True, base_problem="beams2d"),
    "hpc_train_photonics2d": dict(
        family="hpc_orchestration", styles=HPC_STYLES, weights=_W_HPC, dataset=None,
        design_shape=None, objectives=(), constraints=(), tools=_TOOLS_HPC, optimal=_OPTIMAL_HPC,
        agent_tools_support=True, base_problem="photonics2d"),
    "training_code_beams2d": dict(
        family="training_code", styles=TIER_STYLES, weights=_W_CODE, dataset=None,
        design_shape=(50, 100), objectives=(), constraints=(), tools=_TOOLS_CODE, optimal=None,
        agent_tools_support=True, base_problem="beams2d"),
    "training_code_photonics2d": dict(
        family="training_code", styles=TIER_STYLES, weights=_W_CODE, dataset=None,
        design_shape=(120, 120), objectives=(), constraints=(), tools=_TOOLS_CODE, optimal=None,
        agent_tools_support=True, base_problem="photonics2d"),
}


def list_problems() -> list:
    """Every registered problem (the --problem choices)."""
    return sorted(PROBLEMS)


def list_styles() -> list:
    """Every prompt style some registered problem accepts (the --style choices)."""
    return sorted({s for p in PROBLEMS.values() for s in p["styles"]})


def hpc_algorithm(style: str) -> str:
    """The training algorithm an hpc-train-* style asks for."""
    return "diffusion_2d_cond" if style.endswith("-diff") else "cgan_cnn_2d"


