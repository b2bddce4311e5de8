#!/usr/bin/env python3
"""Grader for EngiAI evaluation runs: recorded agent trials rescored from their artefacts.

Run:
    python grade_engiai.py RUN_DIR                          # rescore every trial, print the table
    python grade_engiai.py RUN_DIR --problem beams2d        # only some problems (registry choices)
    python grade_engiai.py RUN_DIR --style workflow-distractor
    python grade_engiai.py RUN_DIR --json report.json --out rescored/
    python grade_engiai.py RUN_DIR --strict                 # anything inconclusive: FAIL, 0.0

RUN_DIR holds reference.h5 (ground-truth designs and objectives, MMD baselines) and
trials/<trial_id>/ (trial.json, arrays.h5, exported STL files, training_script.py);
reference/engiai/TRIAL_FORMAT.md describes every field.  Nothing submitted is executed:
scores are recomputed from the arrays, the STL geometry, the parsed training script and the
recorded tool trace; scores the trial claims are compared and reported, never used.

Per trial: design optimization = 0.65 design quality + 0.20 tool efficiency + 0.15 task
completion; RAG = rag_accuracy; HPC = 0.80 workflow completion + 0.20 tool efficiency;
training code = six weighted terms, model_quality = clip(baseline_mmd / agent_mmd, 0, 1).
A trial the harness could not make scorable (no baseline, no usable MMD, no ground truth,
thermoelastic2d unsupported by the agent's tools) has score None, and its (problem, style)
cell is printed UNSCORABLE / UNSUPPORTED with its reasons, never averaged; so is a cell holding
a trial whose record is malformed (INVALID): a bad trial is never silently dropped.

Score: the mean over fully scorable (problem, style) cells of the cell means.  RESULT: PASS
when every trial was scorable and every artefact valid; PARTIAL when some cell is not
scorable, some artefact invalid or some trace needs review (the score covers the scorable
cells); UNGRADED when no cell is scorable; FAIL (score 0.0) only under --strict, which makes
anything short of PASS fail (a gate on the run: trials and cells keep their None).  Exit codes: 0 PASS with score 1.0, 1 graded below that,
2 UNGRADED or usage error, 3 grader failure.  --no-exec changes nothing here: this grader
never executes what it grades (training scripts are only parsed), so it is accepted for
uniformity with the other graders and grading is identical.

Self-contained: needs only the standard library, numpy, scipy and h5py.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

GRADER_NAME = "grade_engiai"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

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
    "run_max_read_bytes": 1 << 30,     # bytes of trial artefacts read over the run
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

# the eight registered problems of the seed's family table (the issue's "nine" is not in the
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


# =============================================================================
# RECORDS
# =============================================================================
class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    REVIEW = "REVIEW"
    SKIP = "SKIP"
    INFO = "INFO"


@dataclasses.dataclass(frozen=True)
class Check:
    id: str
    status: Status
    message: str
    measured: object = None
    limit: object = None

    def as_dict(self) -> dict:
        return {"id": self.id, "status": self.status.value, "message": self.message,
                "measured": _jsonable(self.measured), "limit": _jsonable(self.limit)}


def _jsonable(value):
    """Numbers and containers in a form json.dumps accepts (NaN/inf as strings)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) or hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        v = value.item() if hasattr(value, "item") else value
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        return v
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        seq = value.tolist() if hasattr(value, "tolist") else value
        return [_jsonable(v) for v in seq]
    return str(value)


class Reject(Exception):
    """Raised by guarded accessors; caught at a check boundary and turned into FAIL."""

    def __init__(self, check_id: str, message: str, measured=None, limit=None):
        super().__init__(message)
        self.check = Check(check_id, Status.FAIL, message, measured, limit)


def guarded(fn):
    """Run a check function; a Reject becomes its FAIL record, never an escape."""
    def wrapper(*args, **kwargs) -> list:
        try:
            out = fn(*args, **kwargs)
        except Reject as exc:
            return [exc.check]
        return list(out) if isinstance(out, (list, tuple)) else [out]
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@dataclasses.dataclass
class Report:
    """One submission's grading: the records, and what the printer, JSON and plots need besides."""
    submission: str
    checks: list = dataclasses.field(default_factory=list)
    phases: dict = dataclasses.field(default_factory=dict)        # phase -> wall seconds
    outcomes: dict = dataclasses.field(default_factory=dict)      # phase -> RunOutcome (captured output)
    keys: dict = dataclasses.field(default_factory=dict)          # typed values, printed `key: value`
    figures_data: dict = dataclasses.field(default_factory=dict)  # arrays for --plot; not printed


# =============================================================================
# GUARDED INPUT: untrusted files and values
# =============================================================================
def read_json_file(path: str, check_id: str, max_bytes: int):
    """Parse a JSON file; raise Reject on missing, oversized, non-UTF-8 or malformed."""
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        return json.loads(text, parse_constant=lambda c: float(c))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Reject(check_id, f"{os.path.basename(path)} is not valid JSON: {str(exc)[:120]}")
    except (RecursionError, MemoryError) as exc:
        raise Reject(check_id, f"{os.path.basename(path)} cannot be parsed ({type(exc).__name__}: "
                               "nested too deeply or too large)")


def parse_python(source, filename: str, check_id: str):
    """ast.parse that never escapes: a syntax error, or a source nested too deeply or too large
    for the parser (RecursionError, MemoryError), becomes a Reject (a clean FAIL record)."""
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise Reject(check_id, f"{filename}: syntax error at line {exc.lineno}: {exc.msg}")
    except (RecursionError, MemoryError, ValueError) as exc:
        raise Reject(check_id, f"{filename}: cannot be parsed ({type(exc).__name__}: nested too "
                     "deeply or too large)")


def short(value, n: int = 40, *, as_repr: bool = False) -> str:
    """str(value)[:n] (repr with as_repr) of an untrusted value that never raises: a value
    nested too deeply for repr, or too large, prints as a placeholder."""
    try:
        return (repr(value) if as_repr else str(value))[:n]
    except (RecursionError, MemoryError, ValueError):
        return f"<{type(value).__name__} nested too deeply>"


def get_path(obj, keys: tuple, check_id: str, where: str = "trial.json"):
    """obj[k0][k1]... with a Reject naming the missing key path."""
    cur = obj
    for i, key in enumerate(keys):
        ok = (isinstance(cur, dict) and isinstance(key, str) and key in cur) or \
             (isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur))
        if not ok:
            dotted = ".".join(str(k) for k in keys[: i + 1])
            raise Reject(check_id, f"{where}: {dotted} missing or of the wrong type")
        cur = cur[key]
    return cur


def get_number(obj, keys: tuple, check_id: str, *, integer: bool = False,
               where: str = "trial.json") -> float:
    """A finite real number (bool, string, null, NaN and inf are refused)."""
    value = get_path(obj, keys, check_id, where)
    dotted = ".".join(str(k) for k in keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Reject(check_id, f"{where}: {dotted} must be a number, got {type(value).__name__}")
    if as_number(value) is None:
        raise Reject(check_id, f"{where}: {dotted} is not finite ({short(value)})")
    if integer and value != int(value):
        raise Reject(check_id, f"{where}: {dotted} must be an integer, got {value!r}")
    return int(value) if integer else float(value)


def as_number(value):
    """A finite float from an untrusted value, or None (bools and strings are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)             # a JSON integer beyond the float range overflows
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def first_nonfinite(arr):
    """(count, index of the first non-finite entry) of an array."""
    import numpy as np
    bad = ~np.isfinite(arr)
    n = int(bad.sum())
    return n, (tuple(int(i) for i in np.argwhere(bad)[0]) if n else None)


def check_array(arr, name: str, shape: tuple, check_id: str, ndim: int | None = None,
                density: bool = False):
    """numpy.testing order: dtype, shape, then non-finite positions, then (density) the domain
    [0, 1] within density_tol.  Returns float64."""
    import numpy as np
    if arr.dtype.kind not in "biuf":
        raise Reject(check_id, f"array {name} has dtype {arr.dtype}, expected a real number type")
    if shape is not None and tuple(arr.shape) != tuple(shape):
        raise Reject(check_id, f"array {name} has shape {tuple(arr.shape)}, expected {tuple(shape)}",
                     list(arr.shape), list(shape))
    if ndim is not None and arr.ndim != ndim:
        raise Reject(check_id, f"array {name} has {arr.ndim} dimensions, expected {ndim}",
                     list(arr.shape))
    out = np.asarray(arr, dtype=np.float64)
    n, idx = first_nonfinite(out)
    if n:
        raise Reject(check_id, f"array {name}: {n} non-finite value(s), first at index {idx}", n, 0)
    if density:
        lo, hi = SPEC["density_range"]
        tol = SPEC["density_tol"]
        bad = (out < lo - tol) | (out > hi + tol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise Reject(check_id, f"array {name}: {int(bad.sum())} value(s) outside the density "
                                   f"domain [{lo:g}, {hi:g}] (first {out[idx]:.6g} at index {idx}): "
                                   "out of domain, not binarised", int(bad.sum()), 0)
    return out


def _h5_open(path: str, check_id: str):
    import h5py
    if os.path.islink(path):
        raise Reject(check_id, f"{os.path.basename(path)} is a symlink (refused)")
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > SPEC["max_h5_bytes"]:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, SPEC["max_h5_bytes"])
    try:
        return h5py.File(path, "r")
    except Exception as exc:  # OSError for a non-HDF5 file, anything else h5py raises
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {type(exc).__name__}: "
                               f"{str(exc)[:120]}")


def _h5_get(fh, name: str, check_id: str):
    """fh[name] through hard links only: external and soft links (which could reach other
    files) are refused."""
    import h5py
    parts = [p for p in name.split("/") if p]
    cur = fh
    for i, part in enumerate(parts):
        if not isinstance(cur, h5py.Group):
            return None
        link = cur.get(part, getlink=True)
        if link is None:
            return None
        if not isinstance(link, h5py.HardLink):
            raise Reject(check_id, f"{os.path.basename(fh.filename)}: "
                                   f"{'/'.join(parts[:i + 1])} is a {type(link).__name__} (refused)")
        cur = cur[part]
    return cur


def read_h5_array(path: str, name: str, check_id: str, *, shape=None, ndim=None,
                  density: bool = False, budget=None):
    """One numeric dataset of an HDF5 file, checked (dtype, size, shape, finiteness; with
    density, the domain [0, 1]); its bytes are charged to the run's budget when given."""
    import h5py
    with _h5_open(path, check_id) as fh:
        obj = _h5_get(fh, name, check_id)
        if obj is None:
            raise Reject(check_id, f"{os.path.basename(path)}: dataset {name} missing")
        if not isinstance(obj, h5py.Dataset):
            raise Reject(check_id, f"{os.path.basename(path)}: {name} is not a dataset")
        if obj.is_virtual:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} is a virtual dataset (refused)")
        if obj.size > SPEC["max_array_elems"]:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} has {obj.size} elements",
                         obj.size, SPEC["max_array_elems"])
        if obj.dtype.kind not in "biuf":
            raise Reject(check_id, f"{os.path.basename(path)}: {name} has dtype {obj.dtype}, "
                                   "expected a real number type")
        if budget is not None:
            budget.charge(int(obj.size) * int(obj.dtype.itemsize), f"{os.path.basename(path)}:{name}",
                          check_id)
        try:
            arr = obj[()]
        except Exception as exc:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} unreadable: {str(exc)[:120]}")
    return check_array(arr, name, shape, check_id, ndim, density)


def read_h5_attrs(path: str, group: str, check_id: str):
    """Numeric scalar attributes of an HDF5 group, or None when the group is absent."""
    import h5py
    with _h5_open(path, check_id) as fh:
        obj = _h5_get(fh, group, check_id)
        if obj is None:
            return None
        if not isinstance(obj, h5py.Group):
            raise Reject(check_id, f"{os.path.basename(path)}: {group} is not a group")
        out = {}
        for key in obj.attrs:
            try:
                val = obj.attrs[key]
            except Exception:
                continue
            num = as_number(val.item() if hasattr(val, "item") and getattr(val, "ndim", 1) == 0
                            else val)
            if num is not None:
                out[key] = num
        return out


def read_stl(path: str, check_id: str, budget=None):
    """Triangles (n, 3, 3) float64 of a binary or ASCII STL; Reject when malformed (or past
    the run's read budget)."""
    import numpy as np
    name = os.path.basename(path)
    if not os.path.isfile(path) or os.path.islink(path):
        raise Reject(check_id, f"{name} missing")
    size = os.path.getsize(path)
    if size > SPEC["max_stl_bytes"]:
        raise Reject(check_id, f"{name} is {size} bytes", size, SPEC["max_stl_bytes"])
    if budget is not None:
        budget.charge(size, name, check_id)
    with open(path, "rb") as fh:
        data = fh.read()
    declared = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0]) if size >= 84 else None
    if declared is not None and size == 84 + 50 * declared:
        # binary: 80-byte header, facet count, 50 bytes per facet (the header may say "solid")
        rec = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
        tris = np.frombuffer(data, dtype=rec, count=declared, offset=84)["v"].astype(np.float64)
    else:
        why = (f"its header declares {declared} facets (84 + 50*{declared} bytes) but it has "
               f"{size} bytes" if declared is not None else f"{size} bytes, shorter than a header")
        if not data.isascii():
            raise Reject(check_id, f"{name}: neither a binary STL ({why}) nor ASCII text")
        tris = _parse_ascii_stl(data, name, check_id, why)
    if tris.shape[0] == 0:
        raise Reject(check_id, f"{name}: no triangles")
    n_bad, idx = first_nonfinite(tris)
    if n_bad:
        raise Reject(check_id, f"{name}: {n_bad} non-finite vertex coordinate(s), first at {idx}")
    return tris


# ASCII STL, matched one facet at a time (no token list: a 64 MiB file stays small in memory,
# and no nested repetition, so the regex engine keeps no per-token state).  Keywords are
# case-insensitive and any whitespace separates tokens.  Between facets only whitespace or a
# run of tokens opened by solid/endsolid (the solid's name) may appear; a facet keyword there
# means a malformed facet.
_STL_NUM = rb"\s+(\S+)"
_STL_FACET = re.compile(
    rb"(?<!\S)facet\s+normal\s+\S+\s+\S+\s+\S+\s+outer\s+loop"
    + (rb"\s+vertex" + _STL_NUM * 3) * 3 + rb"\s+endloop\s+endfacet(?!\S)", re.IGNORECASE)
_STL_TOKEN = re.compile(rb"\S+")
_STL_SOLID = re.compile(rb"(?:end)?solid", re.IGNORECASE)
_STL_KEYWORD = re.compile(rb"(?<!\S)(?:facet|endfacet|normal|outer|loop|endloop|vertex)(?!\S)",
                          re.IGNORECASE)


def _stl_gap_error(data: bytes, start: int, end: int):
    """None when data[start:end] may sit between facets, else (byte offset, token) of the fault."""
    first = _STL_TOKEN.search(data, start, end)
    if first is None:
        return None
    if not _STL_SOLID.fullmatch(first.group()):
        return first.start(), first.group()
    kw = _STL_KEYWORD.search(data, first.end(), end)
    return None if kw is None else (kw.start(), kw.group())


def _parse_ascii_stl(data: bytes, name: str, check_id: str, not_binary: str):
    import array
    import numpy as np
    first = _STL_TOKEN.search(data)
    if first is None or first.group().lower() != b"solid":
        raise Reject(check_id, f"{name}: neither a binary STL ({not_binary}) nor an ASCII STL "
                               "(no leading 'solid')")
    coords, pos, fault = array.array("d"), 0, None
    for m in _STL_FACET.finditer(data):
        fault = _stl_gap_error(data, pos, m.start())
        if fault:
            break
        try:
            coords.extend(float(g) for g in m.groups())
        except ValueError:
            bad = next(g for g in m.groups() if not _is_float(g))
            raise Reject(check_id, f"{name}: malformed ASCII STL: vertex coordinate "
                                   f"{bad[:20].decode()!r} near byte {m.start()}")
        pos = m.end()
    fault = fault or _stl_gap_error(data, pos, len(data))
    if fault:
        raise Reject(check_id, f"{name}: malformed ASCII STL: unexpected {fault[1][:20].decode()!r} "
                               f"near byte {fault[0]} (expected 'facet normal nx ny nz outer loop', "
                               "three 'vertex x y z', 'endloop endfacet', or 'endsolid')")
    return np.frombuffer(coords, dtype=np.float64).reshape(-1, 3, 3).copy()


def _is_float(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def safe_member(trial_dir: str, name, check_id: str) -> str:
    """A plain file name inside the trial folder (no separators, no '..', no symlink)."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or \
            "\\" in name or "\x00" in name:
        raise Reject(check_id, f"artefact name {short(name, 60, as_repr=True)} is not a plain file name in the trial folder")
    path = os.path.join(trial_dir, name)
    if os.path.islink(path):
        raise Reject(check_id, f"artefact {name} is a symlink (refused)")
    return path


# =============================================================================
# THE FOUR FAMILIES: trial record and trace
# =============================================================================
@dataclasses.dataclass
class Trial:
    """One graded trial: where it sits in the table and what came out of it."""
    trial_id: str
    problem: str | None = None
    style: str | None = None
    status: str = "invalid"       # scored | unscorable | unsupported | invalid | filtered
    score: float | None = None
    terms: dict = dataclasses.field(default_factory=dict)
    reasons: list = dataclasses.field(default_factory=list)
    claims: dict = dataclasses.field(default_factory=dict)
    content_sha256: str | None = None  # of what is scored: trace, arrays, STL (duplicate detection)
    artefact_none: bool = False        # score None because of the agent's own artefact (SCORE 0.0)
    key: tuple | None = None           # (problem, style, example_id, seed): its harness manifest entry

    def as_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))


class Unscorable(Exception):
    """A harness-side gap (no ground truth, no baseline, no usable MMD, missing expectation):
    the term is None with this reason, never 0 and never 1.  `artefact=True` when the None
    comes from the agent's own artefact (samples absent, unreadable, non-finite, misshapen: the
    seed's "no usable MMD"): the trial stays None, but its cell counts 0.0 in the SCORE, or
    breaking one's own samples would lift the SCORE (TRIAL_FORMAT.md decision 16)."""

    def __init__(self, message: str, *, artefact: bool = False):
        super().__init__(message)
        self.artefact = artefact


def parse_trace(rec: dict, tid: str) -> tuple:
    """(calls, checks): the tool trace as a list of {name, args, result} dicts."""
    cid = f"trial.{tid}.trace"
    calls = get_path(rec, ("tool_calls",), cid)
    if not isinstance(calls, list):
        raise Reject(cid, "trial.json: tool_calls must be a list")
    if len(calls) > SPEC["max_tool_calls"]:
        raise Reject(cid, f"trial.json: {len(calls)} tool calls", len(calls), SPEC["max_tool_calls"])
    out = []
    for i, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise Reject(cid, f"trial.json: tool_calls[{i}] is not an object with a string name")
        args = c.get("args", {})
        result = c.get("result")
        if not isinstance(args, dict):
            raise Reject(cid, f"trial.json: tool_calls[{i}].args must be an object")
        if result is not None and not isinstance(result, dict):
            raise Reject(cid, f"trial.json: tool_calls[{i}].result must be an object or null")
        out.append({"name": c["name"], "args": args, "result": result or {}})
    return out


def trace_checks(calls: list, problem: str, tid: str) -> list:
    """Unknown tool names: counted as calls, flagged for review."""
    known = set(PROBLEMS[problem]["tools"])
    unknown = sorted({c["name"] for c in calls if c["name"] not in known})
    if unknown:
        return [Check(f"trial.{tid}.unknown_tools", Status.REVIEW,
                      f"tool(s) outside the {PROBLEMS[problem]['family']} tool set: "
                      f"{', '.join(repr(u[:40]) for u in unknown)} (counted as calls)", unknown)]
    return []


def weighted(weights: dict, terms: dict) -> float:
    """sum of weight * term over a registry weight table."""
    return sum(w * terms[k] for k, w in weights.items())


def succeeded(call: dict) -> bool:
    """A tool call whose recorded result says success: true (exactly the JSON true)."""
    return call["result"].get("success") is True


# Outcomes, not calls (issue 24): a workflow step counts only when its tool call succeeded and,
# for a SLURM job, when the job reached a completed state; read the same way in the HPC and the
# training-code families.  A recovered failure (diagnose_job_failure, resubmit, complete) completes.
def job_id_of(value):
    """A job id as text ('81234' and 81234 are one id), or None when empty or not a scalar."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()[:200]
    return text or None


def submitted_jobs(calls: list) -> list:
    """(call index, job id) of every successful submit_slurm_job that returned a job id."""
    return [(i, job_id_of(c["result"].get("job_id"))) for i, c in enumerate(calls)
            if c["name"] == "submit_slurm_job" and succeeded(c)
            and job_id_of(c["result"].get("job_id")) is not None]


def job_completed(calls: list) -> bool:
    """Some successful monitor_job_until_complete reported state COMPLETED for a job submitted
    before it (the job it names, or any when it names none)."""
    jobs = submitted_jobs(calls)
    for i, c in enumerate(calls):
        if c["name"] != "monitor_job_until_complete" or not succeeded(c) or \
                c["result"].get("state") != "COMPLETED":
            continue
        named = c["args"].get("job_id", c["result"].get("job_id"))
        before = {j for k, j in jobs if k < i}
        if before and (named is None or job_id_of(named) in before):
            return True
    return False


def evaluation_calls(calls: list) -> list:
    """Successful model evaluations: evaluate_model, or execute_cli_command running
    engiopt.*.evaluate_* (public HPC scorer)."""
    return [c for c in calls if succeeded(c) and (
        c["name"] == "evaluate_model" or
        (c["name"] == "execute_cli_command" and isinstance(c["args"].get("command"), str)
         and "engiopt." in c["args"]["command"] and ".evaluate_" in c["args"]["command"]))]


def tool_efficiency(calls: list, optimal: tuple) -> float:
    """spec: min(1, optimal / actual), 0 with no calls."""
    return min(1.0, len(optimal) / len(calls)) if calls else 0.0


def optimal_count_check(rec: dict, optimal: tuple, tid: str) -> list:
    """A trial's own optimal_call_count is reported against the registry's, never used."""
    claimed = rec.get("optimal_call_count")
    if claimed is None or as_number(claimed) == len(optimal):
        return []
    shown = short(claimed, as_repr=True)
    return [Check(f"trial.{tid}.optimal_calls", Status.INFO,
                  f"trial records optimal_call_count={shown}; the registry's is {len(optimal)} "
                  f"({' > '.join(optimal)}), which is used",
                  as_number(claimed) if as_number(claimed) is not None else shown, len(optimal))]


# =============================================================================
# SCORING: design optimization (IoU, pixel accuracy, objective, constraint,
# connectivity, watertightness)
# =============================================================================
def binarize(design):
    return design > SPEC["binarize_at"]


def iou(a, b) -> float:
    """|A and B| / |A or B| of binarised designs; both empty -> 1.0 (identical; decided)."""
    import numpy as np
    a, b = binarize(a), binarize(b)
    union = int(np.logical_or(a, b).sum())
    return 1.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def pixel_accuracy(a, b) -> float:
    import numpy as np
    return float(np.mean(binarize(a) == binarize(b)))


def connectivity(design) -> float:
    """1.0 when the binarised design is exactly one 8-connected component."""
    import numpy as np
    from scipy import ndimage
    _, n = ndimage.label(binarize(design), structure=np.ones((3, 3), dtype=int))
    return 1.0 if n == 1 else 0.0


def objective_match(agent: dict, target: dict, objectives: tuple) -> tuple:
    """(score, per-objective detail): sum w*max(0, 1 - relerr/thr) / sum w; absolute error
    when the target is 0; a missing agent value scores 0; a missing target is Unscorable."""
    if not objectives:
        return 1.0, {}
    total, wsum, detail = 0.0, 0.0, {}
    for name, thr, w in objectives:
        t = target.get(name)
        if t is None:
            raise Unscorable(f"ground truth lacks objective {name}")
        a = as_number(agent.get(name)) if isinstance(agent, dict) else None
        if a is None:
            s = 0.0
        else:
            err = abs(a - t) / abs(t) if t != 0 else abs(a - t)
            s = max(0.0, 1.0 - err / thr)
        detail[name] = s
        total += w * s
        wsum += w
    return total / wsum, detail


def constraint_match(design, target: dict, constraints: tuple) -> float:
    """mean of exp(-|mean(design) - target| / tol); no constraint -> 1.0 (nothing violated)."""
    import numpy as np
    if not constraints:
        return 1.0
    vals = []
    for name, tol in constraints:
        t = target.get(name)
        if t is None:
            raise Unscorable(f"ground truth lacks condition {name}")
        vals.append(math.exp(-abs(float(np.mean(design)) - t) / tol))
    return float(np.mean(vals))


def weld_vertices(v, tol: float) -> tuple:
    """(vertex id per row of v, number of near-coincident vertices merged).  Rows with equal
    coordinates are one vertex; then vertices are merged when they share a cell of any of the
    8 grids of spacing tol shifted by 0 or tol/2 per axis: two vertices closer than tol/2 on
    every axis always merge, two farther than tol on some axis never do directly.  Deterministic,
    linear in memory (no pairwise search).  With tol = stl_weld_rel_tol * scale and
    |v| <= scale, the three cell indices pack into one int64 key."""
    import itertools
    import numpy as np
    order = np.lexsort((v[:, 2], v[:, 1], v[:, 0]))          # exact weld: sort rows, mark changes
    sv = v[order]
    new = np.concatenate([[True], np.any(sv[1:] != sv[:-1], axis=1)])
    ids = np.empty(len(v), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    uniq = sv[new]
    n = len(uniq)
    if not tol > 0 or n < 2:
        return ids, 0
    q = uniq / tol
    bound = int(np.ceil(np.abs(q).max())) + 2                # cell indices lie in [-bound, bound]
    if (2 * bound + 1) ** 3 >= 2 ** 62:      # unreachable with the caller's tol; exact weld only
        return ids, 0
    src, dst, idx = [], [], np.arange(n)
    for shift in itertools.product((0.0, 0.5), repeat=3):
        k = np.floor(q + np.asarray(shift)).astype(np.int64) + bound
        key = (k[:, 0] * (2 * bound + 1) + k[:, 1]) * (2 * bound + 1) + k[:, 2]
        _, first, cell = np.unique(key, return_index=True, return_inverse=True)
        rep = first[cell.reshape(-1)]
        shared = rep != idx
        src.append(idx[shared])
        dst.append(rep[shared])
    src, dst = np.concatenate(src), np.concatenate(dst)
    if src.size == 0:
        return ids, 0
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    graph = coo_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(n, n))
    count, label = connected_components(graph, directed=False)
    return label[ids].astype(np.int64), n - int(count)


def watertight_report(tris) -> dict:
    """The STL as a closed solid: every edge shared by exactly two triangles with opposite
    orientation, no degenerate triangle (two corners welded, or a corner within the weld
    tolerance of the line through the other two: zero area), no face used twice (a doubled face,
    or a triangle and its reverse: a two-sided sheet), and a positive enclosed volume (outward
    orientation; an inside-out mesh has negative volume).  Vertices are welded on equal
    coordinates and, against float noise, within stl_weld_rel_tol of the mesh scale (max of the
    bounding-box diagonal and the largest |coordinate|).  `closed` is the topology verdict,
    `ok` adds the volume; whether the solid is the design's (the volume/centroid witness) is
    decided by stl_witness, which needs the design."""
    import numpy as np
    n = tris.shape[0]
    v = tris.reshape(-1, 3)
    lo, hi = v.min(axis=0), v.max(axis=0)
    scale = max(float(np.linalg.norm(hi - lo)), float(np.abs(v).max()))
    tol = SPEC["stl_weld_rel_tol"] * scale
    inv, welded = weld_vertices(v, tol)
    f = inv.reshape(n, 3)
    nv = int(inv.max()) + 1
    # degenerate: two corners welded, or the triangle's height over its longest edge <= tol
    cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    longest = np.max(np.linalg.norm(tris - np.roll(tris, 1, axis=1), axis=2), axis=1)
    height = np.linalg.norm(cross, axis=1) / np.where(longest > 0, longest, 1.0)
    degenerate = int(np.sum((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2]) |
                            (height <= tol)))
    # doubled faces: the same three vertices in more than one triangle, whatever the order
    _, fcount = np.unique(np.sort(f, axis=1), axis=0, return_counts=True)
    doubled = int(fcount[fcount > 1].sum())
    a = np.concatenate([f[:, 0], f[:, 1], f[:, 2]])
    b = np.concatenate([f[:, 1], f[:, 2], f[:, 0]])
    _, ucount = np.unique(np.minimum(a, b) * nv + np.maximum(a, b), return_counts=True)
    _, dcount = np.unique(a * nv + b, return_counts=True)
    boundary = int(np.sum(ucount == 1))
    nonmanifold = int(np.sum(ucount > 2))
    # with every undirected edge used twice, a repeated directed edge means same orientation
    misoriented = int(np.sum(dcount > 1))
    closed = degenerate == 0 and boundary == 0 and nonmanifold == 0 and misoriented == 0 and \
        doubled == 0
    # enclosed volume and its centroid (tetrahedra from the origin; meaningful when closed)
    six_vol = np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2]))
    volume = float(six_vol.sum()) / 6.0
    centroid = ([float(c) for c in (six_vol @ tris.sum(axis=1)) / (24.0 * volume)]
                if volume != 0.0 else None)
    # a closed surface encloses positive volume when outward-oriented; a solid whose mean
    # thickness (2 V / area) is within the weld tolerance is no solid (a sheet, a flattened box)
    vol_floor = 0.5 * float(np.linalg.norm(cross, axis=1).sum()) * tol
    inside_out = closed and volume < -vol_floor
    zero_volume = closed and abs(volume) <= vol_floor
    # shells (vertex-connected pieces): an extruded design's every piece spans the full height;
    # a shell that does not (a floating box, an internal cavity) is no part of an extrusion
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n_shells, shell = connected_components(coo_matrix(
        (np.ones(a.size, dtype=np.int8), (a, b)), shape=(nv, nv)), directed=False)
    z = v[:, 2]
    zlo = np.full(n_shells, np.inf)
    zhi = np.full(n_shells, -np.inf)
    np.minimum.at(zlo, shell[inv], z)
    np.maximum.at(zhi, shell[inv], z)
    used = np.isfinite(zlo)
    partial = int(np.sum(used & ((zlo > z.min() + tol) | (zhi < z.max() - tol))))
    return {"ok": closed and volume > vol_floor, "closed": closed, "triangles": n,
            "edges": int(ucount.size), "boundary_edges": boundary,
            "nonmanifold_edges": nonmanifold, "misoriented_edges": misoriented,
            "degenerate_triangles": degenerate, "doubled_faces": doubled,
            "inside_out": bool(inside_out), "zero_volume": bool(zero_volume),
            "shells": int(used.sum()), "partial_shells": partial,
            "welded_within_tol": welded, "weld_tol": tol,
            "z_extent": float(tris[..., 2].max() - tris[..., 2].min()),
            "bbox": [[float(x) for x in lo], [float(x) for x in hi]],
            "volume": volume, "centroid": centroid, "scale": scale, "witness": None}


def describe_watertight(rep: dict) -> str:
    noise = (f"; {rep['welded_within_tol']} near-coincident vertices welded within "
             f"{rep['weld_tol']:.3g}" if rep["welded_within_tol"] else "")
    if rep["ok"]:
        head = (f"closed solid ({rep['triangles']} triangles, {rep['edges']} edges, each shared "
                f"by 2, volume {rep['volume']:.6g}{noise})")
    elif rep["closed"]:
        what = "inside-out (negative enclosed volume)" if rep["inside_out"] else \
            "encloses no volume"
        return (f"not watertight: edge-closed but {what}: volume {rep['volume']:.6g} "
                f"({rep['triangles']} triangles; volume/centroid witness not computed)")
    else:
        bits = [f"{rep[k]} {k.replace('_', ' ')}" for k in
                ("boundary_edges", "nonmanifold_edges", "misoriented_edges", "degenerate_triangles",
                 "doubled_faces") if rep[k]]
        return ("not watertight: " + ", ".join(bits) +
                " (volume/centroid witness not computed: not a closed surface)")
    w = rep.get("witness")
    if w is None:
        return head
    return (f"watertight: {head}; {w['why']}" if w["ok"] else
            f"not watertight: {head}, but {w['why']}")


# =============================================================================
# PROMPT STYLES: task completion, workflow parameter checks, the distractor
# =============================================================================
_STL_PARAMS = (("scale_xy", "scale_xy", "float"), ("scale_z", "scale_z", "float"),
               ("threshold", "threshold", "float"), ("mirror_y", "mirrored", "bool"))


def validate_stl_params(actual: dict, expected: dict) -> tuple:
    """(ok, violations): each float within 0.05 (strict), mirror_y == result's mirrored."""
    bad = []
    for exp_key, act_key, kind in _STL_PARAMS:
        e, a = expected.get(exp_key), actual.get(act_key)
        if kind == "bool":
            if not isinstance(e, bool) or not isinstance(a, bool) or a != e:
                bad.append(f"{exp_key}: got {short(a, as_repr=True)}, expected {short(e, as_repr=True)}")
        else:
            ea, aa = as_number(e), as_number(a)
            if ea is None or aa is None or not abs(aa - ea) < SPEC["stl_param_tol"]:
                bad.append(f"{exp_key}: got {short(a, as_repr=True)}, expected {short(e, as_repr=True)}")
    return not bad, bad


def expected_params(style: str, expected, gt: dict) -> list:
    """The list of expected export parameter sets, in order, for a workflow style."""
    if not isinstance(expected, dict) or not isinstance(expected.get("stl_expected_params"), dict):
        raise Unscorable(f"{style}: expected.stl_expected_params missing from the trial record")
    p = expected["stl_expected_params"]
    if style == "workflow-multi-export":
        exports = p.get("exports")
        if not isinstance(exports, list) or len(exports) != SPEC["multi_export_count"] or \
                not all(isinstance(e, dict) for e in exports):
            raise Unscorable(f"workflow-multi-export: stl_expected_params.exports must list "
                             f"{SPEC['multi_export_count']} objects")
        return exports
    if style == "workflow-conditional":
        try:
            thr = as_number(p["compliance_threshold"])
            if thr is None:
                raise ValueError("compliance_threshold is not a finite number")
            branch = p["branch_high"] if gt["compliance"] > thr else p["branch_low"]
            return [{"threshold": branch["threshold"], "mirror_y": branch["mirror_y"],
                     "scale_xy": p["common"]["scale_xy"], "scale_z": p["common"]["scale_z"]}]
        except (KeyError, TypeError, ValueError) as exc:
            raise Unscorable(f"workflow-conditional: cannot resolve the branch ({exc!r}): needs "
                             "compliance_threshold, branch_high, branch_low, common and the "
                             "ground-truth compliance")
    return [p]


def export_params(call: dict, stl_reports: dict) -> dict:
    """The parameters an export used: the tool result's, with scale_z replaced by the height
    of the STL it produced when that file was read (the geometry is the witness)."""
    got = dict(call["result"])
    rep = stl_reports.get(call["result"].get("stl_path"))
    if rep is not None:
        got["scale_z_reported"] = got.get("scale_z")
        got["scale_z"] = rep["z_extent"]
    return got


def task_completion(style: str, calls: list, expected, gt: dict, stl_reports: dict,
                    tid: str) -> tuple:
    """(score, checks).  full/natural: render_design succeeded.  workflow styles: a successful
    convert_design_to_stl whose file exists, with the expected parameters (the last export;
    the first two, in order, for multi-export)."""
    checks = []
    if style in ("full", "natural"):
        ok = any(c["name"] == "render_design" and succeeded(c) for c in calls)
        return (1.0 if ok else 0.0), [Check(f"trial.{tid}.task", Status.INFO,
                                            "render_design succeeded" if ok else
                                            "no successful render_design")]
    exports = []
    for c in calls:
        if c["name"] != "convert_design_to_stl" or not succeeded(c):
            continue
        path = c["result"].get("stl_path")
        if not isinstance(path, str) or path not in stl_reports:
            checks.append(Check(f"trial.{tid}.export", Status.FAIL,
                                f"convert_design_to_stl reports success but its file "
                                f"{short(c['result'].get('stl_path'), 60)!r} is not a readable "
                                "STL in the trial folder: export not counted"))
            continue
        exports.append(export_params(c, stl_reports))
    want = expected_params(style, expected, gt)
    if style == "workflow-multi-export":
        if len(exports) < len(want):
            return 0.0, checks + [Check(f"trial.{tid}.task", Status.INFO,
                                        f"{len(exports)} successful export(s), "
                                        f"{len(want)} expected")]
        got = exports[: len(want)]
    else:
        if not exports:
            return 0.0, checks + [Check(f"trial.{tid}.task", Status.INFO,
                                        "no successful convert_design_to_stl")]
        got = exports[-1:]
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        ok, viol = validate_stl_params(g, w)
        if not ok:
            bad.append((f"export {i + 1}: " if len(want) > 1 else "") + "; ".join(viol))
    if style == "workflow-distractor":
        checks += distractor_check(got[0], expected, tid)
    msg = "export parameters match" if not bad else "export parameters wrong: " + " | ".join(bad)
    return (0.0 if bad else 1.0), checks + [Check(f"trial.{tid}.task", Status.INFO, msg)]


_FOOT_OFFSET = (0.5 + 0.1180339887, 0.5 - 0.0729490169)   # inside the cell, off every grid diagonal


def cap_faces(tris, rep: dict) -> dict:
    """{"top": (k, 3, 2), "bottom": (k, 3, 2)}: the x/y corners of the faces lying in the plane
    z = z_max facing up, and in z = z_min facing down (within the weld tolerance)."""
    import numpy as np
    z = tris[..., 2]
    nz = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])[:, 2]
    tol = rep["weld_tol"]
    top = np.all(z >= z.max() - tol, axis=1) & (nz > 0)
    bottom = np.all(z <= z.min() + tol, axis=1) & (nz < 0)
    return {"top": tris[top][..., :2].copy(), "bottom": tris[bottom][..., :2].copy()}


def footprint(faces, shape: tuple, s: float, tol: float = 0.0):
    """(cells covered, hits outside the grid) of x/y triangles at scale s: cell (r, c) is covered
    when its sample point ((c + 0.618..) s, (r + 0.427..) s) lies in some face, edges included
    and widened by tol (the weld tolerance: the point sits off every grid line and unit-cell
    diagonal, but it can lie on the diagonal of a merged rectangle, where two triangles whose
    shared corners differ by float noise leave a gap of that width).  Scanline: per face and sample row,
    the face's x interval on that row covers a run of cells.  None when the faces span more
    than stl_footprint_max_tests (face, row) pairs."""
    import numpy as np
    rows, cols = shape
    diff = np.zeros((rows, cols + 1), dtype=np.int64)
    if len(faces) == 0:
        return diff[:, :cols] > 0, 0
    u = faces / s
    ox, oy = _FOOT_OFFSET
    r0 = np.ceil(u[..., 1].min(axis=1) - oy).astype(np.int64)
    r1 = np.floor(u[..., 1].max(axis=1) - oy).astype(np.int64)
    cnt = np.maximum(0, r1 - r0 + 1)
    total = int(cnt.sum())
    if total > SPEC["stl_footprint_max_tests"]:
        return None
    outside, eps, chunk = 0, min(0.1, max(1e-9, tol / s)), 1 << 20   # at most 0.1 cell
    bounds = np.searchsorted(np.cumsum(cnt), np.arange(0, total + chunk, chunk), side="right")
    bounds[0] = 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if lo >= hi:
            continue
        c = cnt[lo:hi]
        tri = np.repeat(np.arange(lo, hi), c)
        row = r0[tri] + np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        y = row + oy
        xl = np.full(y.shape, np.inf)
        xr = np.full(y.shape, -np.inf)
        for i, j in ((0, 1), (1, 2), (2, 0)):
            p, q = u[tri, i], u[tri, j]
            dy = q[:, 1] - p[:, 1]
            hit = ((p[:, 1] - y) * (q[:, 1] - y) <= 0) & (dy != 0)
            x = p[:, 0] + (y - p[:, 1]) * (q[:, 0] - p[:, 0]) / np.where(dy != 0, dy, 1.0)
            xl = np.where(hit, np.minimum(xl, x), xl)
            xr = np.where(hit, np.maximum(xr, x), xr)
        c0 = np.ceil(xl - eps - ox)
        c1 = np.floor(xr + eps - ox)
        run = np.isfinite(c0) & (c1 >= c0)
        row, c0, c1 = row[run], c0[run].astype(np.int64), c1[run].astype(np.int64)
        inside_row = (row >= 0) & (row < rows)
        outside += int(np.sum(~inside_row) + np.sum(np.maximum(0, -c0[inside_row])) +
                       np.sum(np.maximum(0, c1[inside_row] - (cols - 1))))
        row, c0, c1 = row[inside_row], np.clip(c0[inside_row], 0, cols), np.clip(c1[inside_row], -1, cols - 1)
        keep = c1 >= c0
        np.add.at(diff, (row[keep], c0[keep]), 1)
        np.add.at(diff, (row[keep], c1[keep] + 1), -1)
    return np.cumsum(diff, axis=1)[:, :cols] > 0, outside


def solid_fit(rep: dict, design, s: float, thr: float, mirrored: bool, strict: bool,
              caps=None):
    """None when the design has no cell above thr; else whether the closed STL is the solid of
    the design's cells above thr (`>` when strict, else `>=`) at scale_xy s: cell (i, j) at
    x = j*s, y = i*s (rows reversed when mirrored), height z_extent; its volume N*s^2*h, x/y
    centroid and x/y bounding box must agree within stl_geometry_rel_tol (volume relative, the
    others relative to the mesh scale)."""
    import numpy as np
    mask = design > thr if strict else design >= thr
    cnt = int(mask.sum())
    if cnt == 0:
        return None
    rows, cols = np.nonzero(mask)
    n_rows = mask.shape[0]
    if mirrored:
        cy, ylo, yhi = n_rows - rows.mean() - 0.5, n_rows - 1 - rows.max(), n_rows - rows.min()
    else:
        cy, ylo, yhi = rows.mean() + 0.5, rows.min(), rows.max() + 1
    cx, xlo, xhi = cols.mean() + 0.5, cols.min(), cols.max() + 1
    tol, at = SPEC["stl_geometry_rel_tol"], SPEC["stl_geometry_rel_tol"] * rep["scale"]
    want_v = cnt * s * s * rep["z_extent"]
    # position is no part of the solid: an exporter may place the grid anywhere in x/y (many
    # centre the mesh); everything is compared after moving the mesh's bounding-box corner onto
    # the cells' (the shape, volume, centroid and footprint must still be the design's)
    (bx0, by0, _), (bx1, by1, _) = rep["bbox"]
    dx, dy = bx0 - s * xlo, by0 - s * ylo
    bx0, bx1, by0, by1 = bx0 - dx, bx1 - dx, by0 - dy, by1 - dy
    centroid = (rep["centroid"][0] - dx, rep["centroid"][1] - dy)
    if not (abs(rep["volume"] - want_v) <= tol * want_v and
            abs(centroid[0] - s * cx) <= at and abs(centroid[1] - s * cy) <= at and
            max(abs(bx0 - s * xlo), abs(bx1 - s * xhi), abs(by0 - s * ylo),
                abs(by1 - s * yhi)) <= at):
        return False
    # the footprint itself: the up-facing faces at the top and the down-facing faces at the
    # bottom each cover exactly the design's cells (a coarse solid with the right volume,
    # centroid and bounding box does not)
    want = mask[::-1] if mirrored else mask
    for faces in (caps or {}).values():
        got = footprint(faces - np.array([dx, dy]), mask.shape, s, rep["weld_tol"])
        if got is None or got[1] or not np.array_equal(got[0], want):
            return False
    return True


def stl_witness(rep: dict, design, exports: list, caps=None) -> dict:
    """Is a closed STL the solid of the trial's design?  {ok, why}.  The parameters tried: each
    successful convert_design_to_stl naming the file reports scale_xy, threshold and mirrored;
    beside the reported values the grader also tries scale_xy = the footprint's x extent over
    the design's column span, threshold = binarize_at and the other mirroring (the solid can be
    the design's while the tool result misreports a parameter; export_geometry_checks reports
    that as REVIEW); a missing or unusable reported value is simply not tried.  With no export call (the harness's
    design.stl of full/natural) every parameter is derived."""
    if design is None:
        return {"ok": False, "why": "there is no valid design to witness it against (volume and "
                                    "centroid of the design's cells): not credited"}
    if rep.get("partial_shells"):
        return {"ok": False, "why": (
            f"{rep['partial_shells']} of its {rep['shells']} shells do not span the full height "
            "(a floating piece or an internal cavity): not an extrusion of the design's cells")}
    sets, assumed = [], not exports
    for res in exports or [{}]:
        s, thr, mir = as_number(res.get("scale_xy")), as_number(res.get("threshold")), res.get("mirrored")
        assumed = assumed or s is None or thr is None or not isinstance(mir, bool)
        mirrors = (mir, not mir) if isinstance(mir, bool) else (False, True)
        for t in dict.fromkeys(x for x in (thr, SPEC["binarize_at"]) if x is not None):
            sets.append((s if s is not None and s > 0 else None, t, mirrors))
    import numpy as np
    tried, any_cells = 0, False
    for s_rep, thr, mirrors in sets:
        for strict in (True, False):
            mask = design > thr if strict else design >= thr
            if not mask.any():
                continue
            any_cells = True
            cols = np.nonzero(mask.any(axis=0))[0]
            (bx0, _, _), (bx1, _, _) = rep["bbox"]
            s_geo = (bx1 - bx0) / (cols.max() - cols.min() + 1)
            for s in {x for x in (s_rep, s_geo) if x is not None and x > 0}:
                for mir in mirrors:
                    tried += 1
                    if solid_fit(rep, design, s, thr, mir, strict, caps):
                        return {"ok": True, "why": (
                            f"its volume, x/y centroid and footprint are those of the design's "
                            f"{int(mask.sum())} cells {'>' if strict else '>='} {thr:g} at scale_xy "
                            f"{s:g}, mirrored {mir}"
                            + (" (not every parameter reported by an export call: threshold "
                               f"{SPEC['binarize_at']:g}, scale from the footprint and both "
                               "mirrorings tried where missing)" if assumed else ""))}
    if not any_cells:
        return {"ok": False, "why": "the design has no cell above the export threshold: its solid "
                                    "would be empty"}
    return {"ok": False, "why": (
        f"its volume {rep['volume']:.6g}, centroid, bounding box or footprint do not match the "
        f"design's cells at any of the {tried} parameter set(s) tried (a closed solid, but not the "
        "design's)")}


def export_geometry_checks(calls: list, design, stl_reports: dict, tid: str, caps=None) -> list:
    """The exported solid against the final design and the parameters the export reports
    (solid_fit).  A mismatch is REVIEW (the export may not be of this design, or the tool
    result misreports scale_xy/threshold/mirrored); the export is still counted for task
    completion.  An export that cannot be checked gets an INFO record saying why."""
    out = []
    for c in calls:
        res = c["result"]
        name = res.get("stl_path")
        if c["name"] != "convert_design_to_stl" or not succeeded(c) or not isinstance(name, str) \
                or name not in stl_reports:
            continue
        rep = stl_reports[name]
        s, thr, mir = as_number(res.get("scale_xy")), as_number(res.get("threshold")), res.get("mirrored")
        why = ("there is no valid design" if design is None else
               "it is not a closed solid of positive volume" if not rep["ok"] else
               "the tool result lacks a positive scale_xy, a numeric threshold or a boolean "
               "mirrored" if s is None or s <= 0 or thr is None or not isinstance(mir, bool) else None)
        if why is not None:
            out.append(Check(f"trial.{tid}.export_geometry", Status.INFO,
                             f"{name}: reported export parameters not checked against the design: "
                             f"{why}"))
            continue
        fits = [f for f in (solid_fit(rep, design, s, thr, mir, strict, (caps or {}).get(name))
                            for strict in (True, False))
                if f is not None]
        if not fits:
            out.append(Check(f"trial.{tid}.export_geometry", Status.INFO,
                             f"{name}: reported export parameters not checked: the design has no "
                             f"cell above threshold {thr:g}"))
        elif not any(fits):
            out.append(Check(f"trial.{tid}.export_geometry", Status.REVIEW,
                             f"{name}: volume {rep['volume']:.6g}, centroid "
                             f"({rep['centroid'][0]:.6g}, {rep['centroid'][1]:.6g}) and footprint do "
                             f"not match the final design's cells above threshold {thr:g} at "
                             f"scale_xy {s:g}, mirrored {mir} (the export may be of another design, "
                             "or the tool result misreports its parameters)"))
    return out


def distractor_check(got: dict, expected, tid: str) -> list:
    """Which of the two plausible values the export took: export, preview or neither."""
    d = expected.get("distractor") if isinstance(expected, dict) else None
    if not isinstance(d, dict) or d.get("param") not in ("scale_xy", "scale_z", "threshold"):
        raise Unscorable("workflow-distractor: expected.distractor {param, export_value, "
                         "preview_value} missing from the trial record")
    param = d["param"]
    ev, pv, v = as_number(d.get("export_value")), as_number(d.get("preview_value")), \
        as_number(got.get(param))
    if ev is None or pv is None:
        raise Unscorable("workflow-distractor: export_value/preview_value are not numbers")
    tol = SPEC["stl_param_tol"]
    took = "neither"
    if v is not None and abs(v - ev) < tol:
        took = "export"
    elif v is not None and abs(v - pv) < tol:
        took = "preview"
    source = "STL height" if param == "scale_z" and "scale_z_reported" in got else "tool result"
    return [Check(f"trial.{tid}.distractor", Status.INFO,
                  f"{param} = {v!r} ({source}): took the {took.upper()} value "
                  f"(export {ev:g}, preview {pv:g})", {"value": v, "took": took},
                  {"export": ev, "preview": pv})]


def array_digest(a) -> str:
    """sha256 of an array's content (shape and float64 values), whatever file held it."""
    import numpy as np
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return hashlib.sha256(repr(a.shape).encode() + a.tobytes()).hexdigest()


def read_stl_set(names, tdir: str, run: "RunRefs", tid: str) -> tuple:
    """(reports {name: watertight_report}, caps {name: cap faces}, units, checks) of the STL
    files a trial lists, as a set by content (issue 24: a name listed nine times was averaged
    nine times): a name listed again is read once; names whose triangles are identical are one
    unit (read, analysed once); an unreadable name is a unit of its own (FAIL record).
    Watertightness is the fraction of units that witness the design."""
    import copy
    cid = f"trial.{tid}.stl"
    if not isinstance(names, list):
        return {}, {}, [], [Check(cid, Status.FAIL, "artefacts.stl must be a list")]
    if len(names) > SPEC["max_artefact_names"]:
        return {}, {}, [["\0refused"]], [Check(
            cid, Status.FAIL, f"artefacts.stl lists {len(names)} names (more than "
            f"{SPEC['max_artefact_names']}): not read, watertightness 0", len(names),
            SPEC["max_artefact_names"])]
    reports, caps, units, checks, listed = {}, {}, {}, [], set()
    repeated = 0
    for raw in names:
        ukey = ("name", raw) if isinstance(raw, str) else ("bad", short(raw, 60, as_repr=True))
        if ukey in listed:
            repeated += 1
            continue
        listed.add(ukey)
        try:
            tris = read_stl(safe_member(tdir, raw, cid), cid, run.budget)
        except Reject as exc:
            checks.append(exc.check)
            units[ukey] = [None]
            continue
        digest = array_digest(tris)
        if digest in units:
            first = units[digest][0]
            reports[raw] = dict(copy.deepcopy(reports[first]), witness=None)
            caps[raw] = caps[first]
            units[digest].append(raw)
            continue
        rep = watertight_report(tris)
        reports[raw], units[digest] = rep, [raw]
        caps[raw] = cap_faces(tris, rep) if rep["ok"] else None
    run.content.setdefault(tid, []).append(("stl", sorted(k for k in units if isinstance(k, str))))
    same = sum(len(u) - 1 for u in units.values())
    if repeated or same:
        checks.append(Check(f"trial.{tid}.stl_set", Status.INFO,
                            f"artefacts.stl lists {len(names)} name(s): {len(units)} distinct "
                            f"file(s) by content ({repeated} name(s) listed again, {same} file(s) "
                            "with the content of another): each counts once", len(units),
                            len(names)))
    return reports, caps, list(units.values()), checks


def score_design(rec: dict, calls: list, problem: str, style: str, tdir: str, run: "RunRefs",
                 tid: str, key: dict) -> tuple:
    """(terms, checks) for a design-optimization trial, against the harness manifest entry
    `key` (its example_id picks the ground truth, its expected metadata the export parameters)."""
    import numpy as np
    cfg = PROBLEMS[problem]
    checks = []
    ex = key["example_id"]
    gt_design, gt = run.ground_truth(problem, ex)
    arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
    # the agent's design: declared absent -> 0 (agent produced none); declared but bad (wrong
    # shape, non-finite, densities outside [0, 1]) -> FAIL, 0
    design = None
    if arts.get("design") is None:
        checks.append(Check(f"trial.{tid}.design", Status.INFO, "no design produced (artefacts.design "
                                                                 "is null): design terms 0"))
    else:
        try:
            design = read_h5_array(safe_member(tdir, SPEC["arrays_file"], f"trial.{tid}.design"),
                                   "design", f"trial.{tid}.design", shape=cfg["design_shape"],
                                   density=True, budget=run.budget)
            run.content.setdefault(tid, []).append(("design", array_digest(design)))
            checks.append(Check(f"trial.{tid}.design", Status.PASS,
                                f"design {cfg['design_shape']} finite, densities in [0, 1]"))
        except Reject as exc:
            checks.append(Check(exc.check.id, Status.FAIL, exc.check.message + ": design terms 0",
                                exc.check.measured, exc.check.limit))
    stl_reports, caps, stl_units, more = read_stl_set(arts.get("stl", []), tdir, run, tid)
    checks += more
    # watertight = a closed solid of positive volume that is the design's (the witness)
    for name, rep in stl_reports.items():
        if rep["ok"]:
            rep["witness"] = stl_witness(rep, design, [
                c["result"] for c in calls if c["name"] == "convert_design_to_stl" and succeeded(c)
                and c["result"].get("stl_path") == name], caps.get(name))
        checks.append(Check(f"trial.{tid}.stl", Status.INFO, f"{name}: {describe_watertight(rep)}",
                            rep))
    # each distinct file counts once, for its content: a unit is the names sharing one content
    # (or one unreadable name); it is watertight when one of its names witnesses the design
    watertight = (float(np.mean([any(n in stl_reports and stl_reports[n]["ok"] and
                                     stl_reports[n]["witness"]["ok"] for n in unit)
                                 for unit in stl_units])) if stl_units else 0.0)
    if not stl_units:
        checks.append(Check(f"trial.{tid}.stl", Status.INFO, "no STL exported: watertightness 0"))
    sims = [c for c in calls if c["name"] == "simulate_design" and succeeded(c)]
    agent_obj = sims[-1]["result"].get("objectives", {}) if sims else {}
    if design is None:
        dq = {"iou": 0.0, "pixel_accuracy": 0.0, "objective_match": 0.0, "constraint_match": 0.0,
              "connectivity": 0.0}
    else:
        om, _ = objective_match(agent_obj, gt, cfg["objectives"])
        dq = {"iou": iou(design, gt_design), "pixel_accuracy": pixel_accuracy(design, gt_design),
              "objective_match": om, "constraint_match": constraint_match(design, gt, cfg["constraints"]),
              "connectivity": connectivity(design)}
    dq["watertightness"] = watertight
    terms = dict(dq)
    terms["design_quality"] = weighted(cfg["design_weights"], dq)
    optimal = cfg["optimal"][style]
    terms["tool_efficiency"] = tool_efficiency(calls, optimal)
    checks += optimal_count_check(rec, optimal, tid)
    tc, tc_checks = task_completion(style, calls, key.get("expected"), gt, stl_reports, tid)
    terms["task_completion"] = tc
    checks += tc_checks + export_geometry_checks(calls, design, stl_reports, tid, caps)
    terms["overall"] = weighted(cfg["weights"], terms)
    if design is not None:     # for the run's cross-trial copy check (design_copy_checks)
        run.designs[tid] = {"problem": problem, "example": ex, "design": design,
                            "optimized": any(c["name"] == "optimize_design" and succeeded(c)
                                             for c in calls)}
    return terms, checks


def design_copy_checks(trials: list, run: "RunRefs", checks: list) -> list:
    """Designs that are near-copies where no prompt style allows one (TRIAL_FORMAT.md decision
    19): no style hands the agent a ground-truth design, and every style's design must come
    from the agent's own optimize_design.  A scored design trial is held for review when its
    design (raw values or binarised) lies nearer than copy_distance_frac of the spacing between
    the two ground truths involved to
      - the ground truth of another example of its problem (a copy from the dataset);
      - the design of a trial of another example (a copied trial design; of the two, the one
        that fits its own ground truth worse is the copy, both on a tie);
      - its own example's ground truth while the trace has no successful optimize_design (the
        design did not come from the agent's optimization; spacing: its ground truth's nearest
        other ground truth, or its distance to the empty design when it is the only one).
    design_quality is then not credited (0, the value kept as design_quality_if_cleared) and
    the trial's score record in `checks` is replaced by the reduced one.  Returns the REVIEW
    records."""
    import numpy as np
    from scipy.spatial.distance import cdist
    frac = SPEC["copy_distance_frac"]
    scored = {t.trial_id: t for t in trials if t.status == "scored"}
    reasons = {}
    by_problem = {}
    for tid, e in run.designs.items():
        if tid in scored:
            by_problem.setdefault(e["problem"], []).append((tid, e))
    out = []
    for problem, entries in sorted(by_problem.items()):
        gts, every = run.all_ground_truths(problem, {e["example"] for _, e in entries})
        if not every:
            out.append(Check(f"run.design_copies.{problem}", Status.INFO,
                             f"more than {SPEC['copy_max_ground_truths']} ground truths of {problem}: "
                             "designs compared with the run's own examples' only"))
        exs = sorted(gts)
        gi = {ex: i for i, ex in enumerate(exs)}
        if any(e["example"] not in gi for _, e in entries):
            continue                  # cannot happen for a scored trial; nothing to compare with
        dsp = copy_spaces(np.stack([e["design"] for _, e in entries]))
        gsp = copy_spaces(np.stack([gts[ex] for ex in exs]))
        dd = {k: cdist(dsp[k], dsp[k]) for k in dsp}        # design - design
        dg = {k: cdist(dsp[k], gsp[k]) for k in dsp}        # design - ground truth
        gg = {k: cdist(gsp[k], gsp[k]) for k in gsp}        # ground truth - ground truth
        g0 = {k: np.linalg.norm(gsp[k], axis=1) for k in gsp}   # ground truth - empty design

        def near(dist, spacing):
            return any(spacing[k] > 0 and dist[k] < frac * spacing[k] for k in dist)
        for a, (tid, e) in enumerate(entries):
            own = gi[e["example"]]
            for ex in exs:
                j = gi[ex]
                if j != own and near({k: dg[k][a, j] for k in dg}, {k: gg[k][own, j] for k in gg}):
                    reasons.setdefault(tid, []).append(
                        f"a near-copy of the ground truth of example {ex}")
            if not e["optimized"]:
                spacing = {}
                for k in gg:
                    others = gg[k][own][gg[k][own] > 0]
                    spacing[k] = float(others.min()) if others.size else float(g0[k][own])
                if near({k: dg[k][a, own] for k in dg}, spacing):
                    reasons.setdefault(tid, []).append(
                        "a near-copy of its example's ground truth, while the trace shows no "
                        "successful optimize_design (no prompt style hands the agent the ground "
                        "truth)")
            for b in range(a + 1, len(entries)):
                tb, eb = entries[b]
                ob = gi[eb["example"]]
                if ob == own or not near({k: dd[k][a, b] for k in dd},
                                         {k: gg[k][own, ob] for k in gg}):
                    continue
                fa, fb = dg["raw"][a, own], dg["raw"][b, ob]
                for x, y, ey in ((tid, tb, eb["example"]), (tb, tid, e["example"])):
                    if (fa >= fb) if x == tid else (fb >= fa):
                        reasons.setdefault(x, []).append(
                            f"a near-copy of the design of trial {y} (example {ey}), and it fits "
                            "its own ground truth no better than that one fits its own")
    for tid in sorted(reasons):
        t = scored[tid]
        before = t.score
        t.terms["design_quality_if_cleared"] = t.terms["design_quality"]
        t.terms["design_quality"] = 0.0
        t.terms["overall"] = t.score = weighted(PROBLEMS[t.problem]["weights"], t.terms)
        for i, c in enumerate(checks):
            if c.id == f"trial.{tid}.score":
                checks[i] = Check(c.id, c.status, f"{t.score:.4f} (design_quality not credited "
                                  f"until reviewed; {before:.4f} if cleared)", t.score)
        out.append(Check(f"trial.{tid}.design_copy", Status.REVIEW,
                         f"the design is {'; '.join(reasons[tid][:3])} (nearer than {frac:g} of the "
                         f"spacing between the ground truths involved): design_quality not credited "
                         f"until a reviewer clears it (score {before:.4f} -> {t.score:.4f})",
                         len(reasons[tid]), 0))
    return out


# =============================================================================
# SCORING: RAG retrieval (accuracy credited only when the RAG tool was called)
# =============================================================================
_RAG_ALIASES = {"volfrac": ("volfrac", "volume_fraction", "vol_frac", "volume"),
                "forcedist": ("forcedist", "force_distribution", "force_dist", "forcedistribution"),
                "rmin": ("rmin", "filter_radius", "r_min")}


def rag_param(calls: list, param: str) -> tuple:
    """(value, call index): the first value of a parameter in optimize_design args (flat, then
    problem_config), the agent's answer for it; (None, None) when no call carries one."""
    for i, c in enumerate(calls):
        if c["name"] != "optimize_design":
            continue
        for scope in (c["args"], c["args"].get("problem_config")):
            if not isinstance(scope, dict):
                continue
            for alias in _RAG_ALIASES[param]:
                v = as_number(scope.get(alias))
                if v is not None:
                    return v, i
    return None, None


# numbers as people write them (issue 24: "35 percent" was not read as 0.35): digits, decimals
# and exponents; a percentage (`35%`, `35 percent`, `35 per cent`, `35 pct`) reads as 0.35 as well
# as 35; a fraction `7/20` as 0.35; number words up to 999 ("thirty-five percent", "zero point
# three five", "one half", "a third", "three quarters")
_PASSAGE_NUMBER = re.compile(
    r"(?<![\w.])([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
    r"(?:\s*/\s*(\d+(?:\.\d*)?|\.\d+)(?![\w.]))?"
    r"(\s*(?:%|(?:percent|per\s+cent|pct)(?![A-Za-z])))?", re.IGNORECASE)
_UNIT_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS_WORDS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_FRACTION_WORDS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
                   "fourth": 4, "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6,
                   "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8, "ninth": 9,
                   "ninths": 9, "tenth": 10, "tenths": 10}


def _cardinal(words: list, i: int) -> tuple:
    """(value, next index) of the number words starting at words[i] (0..999), or (None, i)."""
    def below_100(k):
        if k < len(words) and words[k] in _TENS_WORDS:
            v = _TENS_WORDS[words[k]]
            if k + 1 < len(words) and words[k + 1] in _UNIT_WORDS and 0 < _UNIT_WORDS[words[k + 1]] < 10:
                return v + _UNIT_WORDS[words[k + 1]], k + 2
            return v, k + 1
        if k < len(words) and words[k] in _UNIT_WORDS:
            return _UNIT_WORDS[words[k]], k + 1
        return None, k
    v, k = below_100(i)
    if v is None:
        return None, i
    if k < len(words) and words[k] == "hundred" and 0 < v < 10:
        v, k = v * 100, k + 1
        nxt = k + 1 if k < len(words) and words[k] == "and" else k
        rest, k2 = below_100(nxt)
        if rest is not None:
            v, k = v + rest, k2
    return v, k


def word_numbers(text: str) -> list:
    """Values written in words: cardinals, `point` decimals, fractions, percentages."""
    words = re.findall(r"[a-z]+", text.lower())
    out, i = [], 0
    while i < len(words):
        v, k = _cardinal(words, i)
        if v is None:
            if words[i] == "a" and i + 1 < len(words) and words[i + 1] in _FRACTION_WORDS:
                out.append(1.0 / _FRACTION_WORDS[words[i + 1]])
                i += 2
            else:
                i += 1
            continue
        value = float(v)
        if k < len(words) and words[k] == "point":
            digits = []
            while k + 1 < len(words) and words[k + 1] in _UNIT_WORDS and _UNIT_WORDS[words[k + 1]] < 10:
                digits.append(str(_UNIT_WORDS[words[k + 1]]))
                k += 1
            if digits:
                value = float(f"{v}.{''.join(digits)}")
                k += 1
        if k < len(words) and words[k] in _FRACTION_WORDS:
            out.append(value / _FRACTION_WORDS[words[k]])
            k += 1
        elif k < len(words) and (words[k] in ("percent", "pct") or
                                 (words[k] == "per" and k + 1 < len(words) and words[k + 1] == "cent")):
            out += [value, value / 100.0]
            k += 2 if words[k] == "per" else 1
        else:
            out.append(value)
        i = k
    return out


def passage_numbers(text: str) -> list:
    """Every value a passage states (digits, percentages, fractions, number words)."""
    out = []
    for m in _PASSAGE_NUMBER.finditer(text):
        try:
            x = float(m.group(1))
            if m.group(2) is not None:
                d = float(m.group(2))
                out += [x, d] + ([x / d] if d != 0 else [])
                continue
        except (ValueError, OverflowError):
            continue
        out += [x, x / 100.0] if m.group(3) else [x]
    return out + word_numbers(text)


def passage_text(p):
    """The text of one returned passage (a string, or an object's `content` or `text`)."""
    return p if isinstance(p, str) else (p.get("content") or p.get("text")) \
        if isinstance(p, dict) else None


def passages_state(call: dict, value: float, tol: float) -> bool:
    """Does a successful retrieval's text state `value` (some number in its passages within
    tol of it, read as people write numbers: passage_numbers)?  A retrieval that carries no
    such number could not have informed that answer (TRIAL_FORMAT.md decision 10)."""
    for p in call["result"].get("results") or ():
        text = passage_text(p)
        if not isinstance(text, str):
            continue
        if any(math.isfinite(v) and abs(v - value) <= tol for v in passage_numbers(text[:1 << 20])):
            return True
    return False


def retrieval_failure(call: dict):
    """None when a search_documents call is a successful retrieval, else why not.  Successful
    (TRIAL_FORMAT.md): result.success is exactly JSON true, result.error is absent, null, false
    or "", and result.results is a non-empty list of passages, each a non-empty string or an
    object whose `content` or `text` is a non-empty string."""
    res = call["result"]
    if res.get("success") is not True:
        return f"success is {short(res.get('success'), as_repr=True)}, not true"
    if res.get("error") not in (None, False, ""):
        return f"it reports an error ({short(res.get('error'), 60)!r})"
    passages = res.get("results")
    if not isinstance(passages, list) or not passages:
        return "it returned no passages (results missing or empty)"
    text = passage_text
    if not all(isinstance(text(p), str) and text(p).strip() for p in passages):
        return "a returned passage is empty or not text"
    return None


def score_rag(key: dict, calls: list, tid: str) -> tuple:
    """rag_accuracy: mode-weighted parameter accuracy plus the weight for using the RAG tool.
    `rag_tool_called` needs a successful retrieval (retrieval_failure); a parameter's accuracy
    counts only when a successful retrieval precedes the optimize_design call that gave the
    answer and states the answered value (passages_state): a failed or empty retrieval, one
    after the answer, or one whose passages carry no such number, is a lucky guess (seed:
    "a lucky guess scores nothing")."""
    cond = (key.get("expected") or {}).get("conditions") if isinstance(key.get("expected"), dict) else None
    if not isinstance(cond, dict) or as_number(cond.get("expected_volfrac")) is None:
        raise Unscorable("expected.conditions.expected_volfrac missing from the harness manifest")
    tested = tuple(p for p in ("forcedist", "rmin") if cond.get(f"expected_{p}") is not None)
    weights = SPEC["rag_modes"][tested]
    searches = [(i, retrieval_failure(c)) for i, c in enumerate(calls) if c["name"] == "search_documents"]
    good = [i for i, why in searches if why is None]
    terms, detail = {"rag_tool_called": 1.0 if good else 0.0}, []
    rag = weights["rag_tool_called"] * terms["rag_tool_called"]
    for p in ("volfrac",) + tested:
        exp = as_number(cond.get(f"expected_{p}"))
        if exp is None:
            raise Unscorable(f"expected.conditions.expected_{p} is not a number")
        tol = cond.get(f"expected_{p}_tolerance")
        tol = SPEC["rag_default_tol"] if tol is None else as_number(tol)
        if tol is None or tol < 0:
            raise Unscorable(f"expected.conditions.expected_{p}_tolerance in the harness manifest "
                             "is not a non-negative number")
        got, at = rag_param(calls, p)
        acc = 1.0 if got is not None and abs(got - exp) <= tol else 0.0
        before = [i for i in good if at is not None and i < at]
        informed = any(passages_state(calls[i], got, tol) for i in before)
        terms[f"{p}_accuracy"] = acc
        rag += weights[p] * acc * informed
        why = ("no successful retrieval before the answer" if not before else
               f"no retrieval before the answer states {got:g} (within {tol:g})")
        detail.append(f"{p} {got!r} vs {exp:g}+-{tol:g}: {'ok' if acc else 'off'}"
                      + ("" if informed or not acc else f" (not credited: {why})"))
    terms["rag_accuracy"] = rag
    terms["overall"] = weighted(PROBLEMS[key["problem"]]["weights"], terms)
    if not searches:
        head = "search_documents NOT called: parameter accuracy not credited; "
    else:
        bad = [f"call {i + 1}: {why}" for i, why in searches if why is not None]
        head = (f"{len(good)} successful retrieval(s) of {len(searches)} search_documents call(s)"
                + (f" ({'; '.join(bad[:3])})" if bad else "") + "; ")
    return terms, [Check(f"trial.{tid}.rag", Status.INFO, head + "; ".join(detail))]


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


# =============================================================================
# HOW MODEL QUALITY IS GRADED: training-code generation (six terms, MMD, UNSCORABLE)
# =============================================================================
def copy_spaces(a):
    """{space: (n, D) float64}: the arrays flattened, as raw values and binarised (> binarize_at);
    copies are measured in both (a copy plus noise below the threshold is identical binarised,
    a copy with a few flipped cells is close raw)."""
    import numpy as np
    flat = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    return {"raw": flat, "binarised": binarize(flat).astype(np.float64)}


def reference_spacing(refs) -> dict:
    """{space: spacing or None}: the copy_scale_percentile-th percentile of the reference designs'
    nearest-neighbour distances (each design to its nearest other, duplicates left out); None
    when fewer than two distinct designs (no spacing to compare with)."""
    import numpy as np
    from scipy.spatial.distance import cdist
    out = {}
    for space, x in copy_spaces(refs).items():
        d = cdist(x, x)
        d[d == 0] = np.inf                      # itself and exact duplicates
        nn = d.min(axis=1)
        nn = nn[np.isfinite(nn)]
        out[space] = float(np.percentile(nn, SPEC["copy_scale_percentile"])) if nn.size else None
    return out


# rigid moves of a design: the four flips (left-right, up-down, both) times the cyclic shifts by
# up to copy_rigid_shift cells on each axis; the identity is the plain distance
def rigid_moves():
    k = SPEC["copy_rigid_shift"]
    return tuple((f, dy, dx) for f in range(4) for dy in range(-k, k + 1) for dx in range(-k, k + 1)
                 if (f, dy, dx) != (0, 0, 0))


def rigid_move(a, f: int, dy: int, dx: int):
    import numpy as np
    a = a[:, :, ::-1] if f & 1 else a
    a = a[:, ::-1, :] if f & 2 else a
    return np.roll(a, (dy, dx), axis=(1, 2))


def rigid_affordable(rows: int, group: int, size: int) -> bool:
    """Whether comparing `rows` designs with every rigid move of `group` designs of `size` cells
    (both spaces) stays within copy_rigid_max_ops."""
    return len(rigid_moves()) * rows * group * size * 2 <= SPEC["copy_rigid_max_ops"]


def copy_ratios(samples, known, spacing: dict, *, rigid: bool = False, same: bool = False):
    """Per sample: the smallest over spaces of (distance to the nearest known design) / (that
    space's reference spacing); inf where no space has a spacing.  With rigid, the known
    designs' rigid moves (flips, small shifts) count as known designs too (a reference shifted
    by a cell is a copy).  With same, samples are the known designs themselves and row i is
    never compared with row i (nor with its own moves)."""
    import numpy as np
    from scipy.spatial.distance import cdist
    ratio = np.full(len(samples), np.inf)
    xs = copy_spaces(samples)
    known = np.asarray(known)
    for move in ((0, 0, 0),) + (rigid_moves() if rigid else ()):
        ks = copy_spaces(known if move == (0, 0, 0) else rigid_move(known, *move))
        for space, x in xs.items():
            if not spacing.get(space):
                continue
            d = cdist(x, ks[space])     # exact, and no BLAS threads (which crawl on a loaded host)
            if same:
                d[np.arange(len(x)), np.arange(len(x))] = np.inf
            ratio = np.minimum(ratio, d.min(axis=1) / spacing[space])
    return ratio


def reference_near_rate(refs, group, spacing: dict, *, same: bool, rigid: bool = False,
                        frac: float | None = None) -> tuple:
    """(near rate, exact rate) of the reference designs against a group of known designs: the
    fraction of reference designs nearer than frac (default copy_distance_frac) of the spacing (either space;
    with rigid, also to a rigid move of a group design) to some row of the group, and the
    fraction byte-identical to one.  With same=True the group is the references themselves
    (each against the others; duplicates count).  A reference design is a fresh draw of the
    data, as an honest generator's sample is: what the data shows against a group is what an
    honest sample shows against it."""
    import collections
    import numpy as np
    n = len(refs)
    if n < 2:
        return 0.0, 0.0
    ratio = copy_ratios(refs, group, spacing, rigid=rigid, same=same)
    gh = [hashlib.sha256(r.tobytes()).digest() for r in group]
    rh = [hashlib.sha256(r.tobytes()).digest() for r in refs]
    count = collections.Counter(gh)
    exact = sum(count[h] > (1 if same else 0) for h in rh)
    frac = SPEC["copy_distance_frac"] if frac is None else frac
    return float(np.mean(ratio < frac)), exact / n


def baseline_threshold(refs, bsm, spacing: dict, rigid: bool) -> tuple:
    """(threshold, median): the near-copy threshold against the reference designs, as a
    fraction of the spacing: copy_distance_frac, or copy_baseline_frac of the median distance
    of the baseline's own samples to the references when that is smaller (issue 24: a model
    whose samples lie as near the references as the committed baseline's do is not copying;
    the sample run's baseline lies at 0.2 of the spacing, so its threshold is 0.1)."""
    import numpy as np
    med = float(np.median(copy_ratios(bsm, refs, spacing, rigid=rigid)))
    return min(SPEC["copy_distance_frac"], SPEC["copy_baseline_frac"] * med), med


_COPY_GROUPS = (("reference", "reference designs"), ("baseline_samples", "baseline's samples"))


def sample_copy_checks(samples, base: dict, tid: str) -> tuple:
    """(held, credited, checks): are the samples copies of the reference designs or of the
    baseline's samples, exactly (bytes) or by distance (copy_ratios below copy_distance_frac)?
    Each group is judged against what the data itself shows: the reference designs' near rate
    p against that group (reference_near_rate: each reference against the other references, or
    against the baseline's samples) is what an honest generator's samples show.  The set is held
    for review (REVIEW sample_copies) when its near share against a group exceeds p by more than
    copy_max_share plus copy_share_z standard errors of the two proportions, or when a sample
    is an exact copy of a row no reference design duplicates.  `credited` masks the samples the
    MMD is computed on: near-copies within the allowed share but beyond the count p predicts
    (p m + copy_share_z standard deviations, per group; the nearest ones first) are left out,
    so they buy nothing; a set left with nothing is held.  An INFO record gives the nearest
    ratio either way."""
    import numpy as np
    m, frac = samples.shape[0], SPEC["copy_distance_frac"]
    n_ref = len(base["reference"])
    rows = [hashlib.sha256(row.tobytes()).digest() for row in samples]
    size = int(np.prod(samples.shape[1:]))
    rigid = bool(base.get("rigid")) and rigid_affordable(
        m, n_ref + len(base["baseline_samples"]), size)
    ratios, near_any, held_by = np.full(m, np.inf), np.zeros(m, dtype=bool), []
    excess = np.zeros(m, dtype=bool)
    exact_total = 0
    # against the references the threshold is the baseline's (baseline_threshold), against the
    # baseline's samples copy_distance_frac
    ref_thr, ref_med = base.get("ref_threshold" if rigid else "ref_threshold_plain") or (frac, None)
    for key, label in _COPY_GROUPS:
        thr = ref_thr if key == "reference" else frac
        group = base[key]
        gset = {hashlib.sha256(r.tobytes()).digest() for r in group}
        exact = sum(h in gset for h in rows)
        r = copy_ratios(samples, group, base["spacing"], rigid=rigid)
        ratios = np.minimum(ratios, r)
        near_any |= r < thr
        near = int(np.sum(r < thr))
        p, p_exact = base["near_rate" if rigid else "near_rate_plain"][key]
        # beyond the count the data's own rate predicts (plus copy_share_z of its noise), the
        # nearest near-copies are excess; with p = 0 every near-copy is
        expect = p * m + SPEC["copy_share_z"] * math.sqrt(p * (1.0 - p) * m * (1.0 + m / n_ref))
        n_excess = max(0, near - int(math.floor(expect + 0.5)))
        excess[np.argsort(r, kind="stable")[:n_excess]] = True
        pt = (p * n_ref + 0.5) / (n_ref + 1.0)     # the rate's uncertainty, also at 0 of n
        allowed = p + SPEC["copy_max_share"] + SPEC["copy_share_z"] * math.sqrt(
            pt * (1.0 - pt) * (1.0 / m + 1.0 / n_ref))
        exact_total += exact
        if (exact > 0 and p_exact == 0.0) or near / m > allowed:
            held_by.append(f"{near} of {m} nearer than {thr:.3g} of the reference spacing to the "
                           f"{label} ({exact} exact; the reference designs' own rate against "
                           f"them is {p:.3g}, at most {allowed:.1%} allowed)")
    near = int(near_any.sum())
    spaced = {k: v for k, v in base["spacing"].items() if v}
    checks = []
    if not spaced:
        checks.append(Check(f"trial.{tid}.sample_distance", Status.INFO,
                            "the reference designs hold fewer than two distinct designs: no "
                            "spacing, so only exact copies were checked"))
    else:
        checks.append(Check(f"trial.{tid}.sample_distance", Status.INFO,
                            f"nearest sample at {float(ratios.min()):.3g} of the reference spacing "
                            f"(median {float(np.median(ratios)):.3g}; spacing "
                            + ", ".join(f"{k} {v:.4g}" for k, v in spaced.items())
                            + f"); near-copy below {frac:g} ({ref_thr:.3g} against the references"
                            + (f", half the baseline's own samples' median {ref_med:.3g}"
                               if ref_thr < frac else "")
                            + f"): {near} of {m}; the reference designs' own near rate "
                            + ", ".join(f"{base['near_rate' if rigid else 'near_rate_plain'][k][0]:.3g}"
                                        f" ({lab})" for k, lab in _COPY_GROUPS)
                            + ("; flips and shifts by up to "
                               f"{SPEC['copy_rigid_shift']} cells count as copies" if rigid else
                               "; rigid moves not checked (beyond copy_rigid_max_ops)"),
                            float(ratios.min()), frac))
    if excess.all() and not held_by:        # nothing would be left to score: a copied set
        held_by.append(f"every one of the {m} sample(s) is a near-copy")
    held = bool(held_by)
    credited = np.ones(m, dtype=bool)
    if held:
        n = max(exact_total, near)
        checks.append(Check(f"trial.{tid}.sample_copies", Status.REVIEW,
                            f"{n} of {m} samples are copies of the reference designs or of the "
                            f"baseline's samples ({'; '.join(held_by)}): the MMD would measure "
                            "copied data, not the agent's model; model_quality is not credited "
                            "until a reviewer clears it", n, 0))
    elif excess.any():
        credited = ~excess
        k = int(excess.sum())
        checks.append(Check(f"trial.{tid}.sample_copies_excluded", Status.INFO,
                            f"{k} of {m} samples are near-copies beyond what the reference designs' "
                            f"own rate predicts (nearer than {ref_thr:.3g}/{frac:g} of the reference spacing to a "
                            "known design, within the allowed share): left out of the MMD", k, 0))
    return held, credited, checks


def sample_domain_checks(samples, tid: str) -> list:
    """Samples are designs: densities in [0, 1] (within density_tol).  Values outside are a
    finding (REVIEW, model_quality not credited until cleared), never clipped or binarised
    silently (issue 24); an unclamped generator's overshoot is for a reviewer to clear."""
    lo, hi = SPEC["density_range"]
    bad = (samples < lo - SPEC["density_tol"]) | (samples > hi + SPEC["density_tol"])
    if not bad.any():
        return []
    return [Check(f"trial.{tid}.sample_domain", Status.REVIEW,
                  f"{int(bad.sum())} sample value(s) outside the density domain [{lo:g}, {hi:g}] "
                  f"(min {float(samples.min()):.6g}, max {float(samples.max()):.6g}): the MMD of "
                  "out-of-domain designs is not credited until a reviewer clears it",
                  int(bad.sum()), 0)]


def mmd(x, y, sigma: float) -> float:
    """Biased Gaussian-kernel MMD on flattened samples: mean Kxx + mean Kyy - 2 mean Kxy,
    K = exp(-|a - b|^2 / (2 sigma^2)); clamped at 0 against round-off."""
    import numpy as np
    from scipy.spatial.distance import cdist
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    g = 1.0 / (2.0 * sigma * sigma)

    def k(a, b):
        return np.exp(-g * cdist(a, b, "sqeuclidean")).mean()
    return max(0.0, float(k(x, x) + k(y, y) - 2.0 * k(x, y)))


def model_quality(baseline_mmd: float, agent_mmd: float) -> float:
    """seed: clip(baseline_mmd / agent_mmd, 0, 1); an agent MMD of 0 matches the reference: 1."""
    if agent_mmd <= 0.0:
        return 1.0
    return min(1.0, max(0.0, baseline_mmd / agent_mmd))


def last_result(calls: list, name: str):
    hits = [c for c in calls if c["name"] == name]
    return hits[-1] if hits else None


def score_training_code(rec: dict, calls: list, problem: str, tdir: str, run: "RunRefs",
                        tid: str, key: dict) -> tuple:
    """(terms, checks): syntax (the script parses), code_quality (validate_training_script, the
    local one-epoch gate, succeeded), dryrun (dryrun_training_script, the one-epoch SLURM job,
    succeeded), slurm_accepted (submit_slurm_job returned a job id), job_completion (the
    monitored job ended COMPLETED), model_quality (MMD against the recorded baseline)."""
    cfg, checks, terms = PROBLEMS[problem], [], {}
    arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
    algorithm, seed = key["algorithm"] or ALGORITHMS[0], key["seed"]    # the harness's, not the record's
    # syntax: parsed, never executed
    syntax = 0.0
    if arts.get("training_script") is None:
        checks.append(Check(f"trial.{tid}.script", Status.INFO, "no training script written: syntax 0"))
    else:
        cid = f"trial.{tid}.script"
        try:
            path = safe_member(tdir, arts["training_script"], cid)
            if not os.path.isfile(path):
                raise Reject(cid, f"{arts['training_script']} missing")
            if os.path.getsize(path) > SPEC["max_script_bytes"]:
                raise Reject(cid, f"{arts['training_script']} larger than {SPEC['max_script_bytes']} bytes")
            run.budget.charge(os.path.getsize(path), arts["training_script"], cid)
            with open(path, "rb") as fh:
                src = fh.read()
            run.content.setdefault(tid, []).append(("script", hashlib.sha256(src).hexdigest()))
            try:
                parse_python(src, arts["training_script"], cid)
                syntax = 1.0
                checks.append(Check(cid, Status.INFO, f"{arts['training_script']} parses"))
            except Reject as exc:
                # the agent's syntax error is its score (syntax 0, an INFO line); a script the
                # parser cannot take (nested too deeply, too large) is a FAIL record
                status = Status.INFO if isinstance(exc.__context__, SyntaxError) else Status.FAIL
                checks.append(Check(cid, status, f"{exc.check.message[:160]}: syntax 0"))
        except Reject as exc:
            checks.append(Check(exc.check.id, Status.FAIL, exc.check.message + ": syntax 0"))
    terms["syntax"] = syntax
    v = last_result(calls, "validate_training_script")
    terms["code_quality"] = 1.0 if v is not None and succeeded(v) else 0.0
    d = last_result(calls, "dryrun_training_script")
    terms["dryrun"] = 1.0 if d is not None and succeeded(d) else 0.0
    terms["slurm_accepted"] = 1.0 if submitted_jobs(calls) else 0.0
    terms["job_completion"] = 1.0 if job_completed(calls) else 0.0
    # model quality: the grader's own MMD, or None with the reason
    try:
        base = run.baseline(problem, algorithm, seed)
        if arts.get("samples") is None:
            raise Unscorable("no usable MMD: the evaluation produced no samples "
                             "(artefacts.samples is null)", artefact=True)
        cid = f"trial.{tid}.samples"
        try:
            samples = read_h5_array(safe_member(tdir, SPEC["arrays_file"], cid), "samples", cid, ndim=3,
                                    budget=run.budget)
            if tuple(samples.shape[1:]) != tuple(cfg["design_shape"]) or samples.shape[0] < 1:
                raise Reject(cid, f"array samples has shape {samples.shape}, expected "
                                  f"(n, {cfg['design_shape'][0]}, {cfg['design_shape'][1]})")
        except Reject as exc:
            checks.append(exc.check)
            raise Unscorable(f"no usable MMD: {exc.check.message}", artefact=True)
        run.content.setdefault(tid, []).append(("samples", array_digest(samples)))
        held, credited, more = sample_copy_checks(samples, base, tid)
        checks += more + sample_domain_checks(samples, tid)
        held = held or any(c.id.endswith(".sample_domain") for c in checks)
        agent = mmd(samples[credited], base["reference"], base["sigma"])
        terms["agent_mmd"], terms["baseline_mmd"], terms["sigma"] = agent, base["mmd"], base["sigma"]
        terms["model_quality"] = model_quality(base["mmd"], agent)
        if held:        # copied samples: not credited until reviewed; the value kept for the reviewer
            terms["model_quality_if_cleared"] = terms["model_quality"]
            terms["model_quality"] = 0.0
        checks.append(Check(f"trial.{tid}.mmd", Status.INFO,
                            f"agent MMD {agent:.6g} vs baseline {base['mmd']:.6g} (sigma {base['sigma']:g}, "
                            f"{samples.shape[0]} samples vs {base['reference'].shape[0]} reference)"))
        checks += base["checks"]
    except Unscorable as exc:
        terms["model_quality"] = None
        terms["model_quality_unscorable_reason"] = str(exc)
        terms["model_quality_unscorable_artefact"] = exc.artefact
        terms["overall"] = None
        return terms, checks
    terms["overall"] = weighted(cfg["weights"], terms)
    return terms, checks


# =============================================================================
# RUN: reference file (ground truth, baselines) and the trial loop
# =============================================================================
class RunBudget:
    """Bytes of trial artefacts read and seconds spent over the whole run (issue 24: one 8 MiB
    STL listed 150 times was parsed 150 times, > 4 minutes; the 64 MiB cap is per file).  A read
    past either limit raises Reject (the term it feeds scores 0, with a FAIL record), never a
    silent skip; `refused` lists what was not read for the run's FAIL run.budget record."""

    def __init__(self, max_bytes: int, max_seconds: float):
        self.max_bytes, self.max_seconds = int(max_bytes), float(max_seconds)
        self.bytes = 0
        self.t0 = time.monotonic()
        self.refused = []

    def exhausted(self):
        """Why the run's budget is spent, or None."""
        spent = time.monotonic() - self.t0
        if spent > self.max_seconds:
            return f"the run's time budget is spent ({spent:.0f} s of {self.max_seconds:g} s)"
        if self.bytes >= self.max_bytes:
            return f"the run's read budget is spent ({self.bytes} of {self.max_bytes} bytes)"
        return None

    def charge(self, n: int, what: str, check_id: str) -> None:
        why = self.exhausted()
        if why is None and self.bytes + n > self.max_bytes:
            why = (f"reading it ({n} bytes) would pass the run's read budget ({self.bytes} of "
                   f"{self.max_bytes} bytes read)")
        if why is not None:
            self.refused.append(f"{check_id}: {what}")
            raise Reject(check_id, f"{what} not read: {why}", self.bytes + n, self.max_bytes)
        self.bytes += n


def manifest_entry_problem(e):
    """Why one entry of the harness manifest is unusable, or None."""
    if not isinstance(e, dict):
        return "not an object"
    p, s = e.get("problem"), e.get("prompt_style")
    if not isinstance(p, str) or p not in PROBLEMS:
        return f"problem {short(p, as_repr=True)} is not registered"
    if not isinstance(s, str) or s not in PROBLEMS[p]["styles"]:
        return f"prompt_style {short(s, as_repr=True)} is not accepted by {p}"
    for f in ("example_id", "seed"):
        v = e.get(f)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            return f"{f} {short(v, as_repr=True)} is not an integer"
    fam = PROBLEMS[p]["family"]
    if fam in ("design_optimization", "rag_retrieval") and e.get("example_id") is None:
        return f"a {fam} trial needs an example_id"
    if fam == "training_code" and e.get("seed") is None:
        return "a training-code trial needs a seed (it selects the baseline)"
    if e.get("algorithm") is not None and e.get("algorithm") not in ALGORITHMS:
        return f"algorithm {short(e.get('algorithm'), as_repr=True)} is not one of {', '.join(ALGORITHMS)}"
    if e.get("expected") is not None and not isinstance(e.get("expected"), dict):
        return "expected is not an object"
    return None


def trial_key(problem: str, style: str, example_id, seed) -> tuple:
    return (problem, style, example_id, seed)


def show_key(key: tuple) -> str:
    p, s, ex, seed = key
    return f"{p}/{s} example_id={short(ex, 20, as_repr=True)} seed={short(seed, 20, as_repr=True)}"


class RunRefs:
    """RUN_DIR/reference.h5, read on demand: the harness manifest (the key: which trials the
    harness ran and what each prompt expects), ground truth per (problem, example) and MMD
    baselines per (problem, algorithm, seed).  A missing ground truth or baseline of a trial
    the manifest lists is Unscorable (a harness gap with harness-side evidence); a trial the
    manifest does not list is invalid."""

    def __init__(self, run_dir: str, seconds: float | None = None):
        self.path = os.path.join(run_dir, SPEC["reference_file"])
        self._cache = {}
        self._reported = set()   # baseline notes are printed once, not once per trial
        self.designs = {}        # trial id -> the scored design trial's design (copy checks)
        self.content = {}        # trial id -> digests of what was scored (duplicate checks)
        self.keys = None         # (problem, style, example_id, seed) -> manifest entry
        self.manifest_error = None
        self.budget = RunBudget(SPEC["run_max_read_bytes"],
                                SPEC["run_max_seconds"] if seconds is None else seconds)

    def load_manifest(self) -> list:
        """Read the harness manifest (SPEC harness_dataset) once; records saying what it holds.
        Unusable entries are left out (a trial claiming one is then unknown: invalid)."""
        import numpy as np
        import h5py
        self.keys = {}
        try:
            with _h5_open(self.path, "run.harness") as fh:
                obj = _h5_get(fh, SPEC["harness_dataset"], "run.harness")
                if not isinstance(obj, h5py.Dataset) or obj.dtype != np.uint8 or obj.ndim != 1:
                    raise Reject("run.harness", f"{SPEC['reference_file']} has no "
                                 f"{SPEC['harness_dataset']} (a uint8 JSON document)")
                if obj.size > SPEC["max_harness_bytes"]:
                    raise Reject("run.harness", f"{SPEC['harness_dataset']} is {obj.size} bytes",
                                 obj.size, SPEC["max_harness_bytes"])
                text = obj[()].tobytes().decode("utf-8")
            doc = json.loads(text, parse_constant=lambda c: float(c))
        except Reject as exc:
            self.manifest_error = exc.check.message
        except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
            self.manifest_error = (f"{SPEC['harness_dataset']} is not a readable JSON document "
                                   f"({type(exc).__name__})")
        except Exception as exc:   # h5py errors reading a harness dataset
            self.manifest_error = f"{SPEC['harness_dataset']} unreadable ({type(exc).__name__})"
        else:
            if not isinstance(doc, dict) or doc.get("format") != SPEC["harness_format"] or \
                    not isinstance(doc.get("trials"), list):
                self.manifest_error = (f"{SPEC['harness_dataset']} is not an "
                                       f"{SPEC['harness_format']!r} document with a trials list")
        if self.manifest_error is not None:
            return [Check("run.harness", Status.FAIL, f"no harness manifest: {self.manifest_error}; "
                          "no trial's key can be checked, so every trial is invalid (counted 0)")]
        bad = []
        for i, e in enumerate(doc["trials"]):
            why = manifest_entry_problem(e)
            key = None if why else trial_key(e["problem"], e["prompt_style"], e.get("example_id"),
                                              e.get("seed"))
            if key is not None and key in self.keys:
                why = f"{show_key(key)} listed twice (the first kept)"
            if why:
                bad.append(f"trials[{i}]: {why}")
                continue
            alg = e.get("algorithm")
            if PROBLEMS[e["problem"]]["family"] == "training_code" and alg is None:
                alg = ALGORITHMS[0]                   # seed: cgan_cnn_2d is the default
            self.keys[key] = {"key": key, "problem": e["problem"], "prompt_style": e["prompt_style"],
                              "example_id": e.get("example_id"), "seed": e.get("seed"),
                              "algorithm": alg, "expected": e.get("expected")}
        out = [Check("run.harness", Status.INFO, f"harness manifest: {len(self.keys)} trial(s) "
                     "keyed by (problem, prompt_style, example_id, seed); expectations, tolerances "
                     "and algorithms are read from it, never from a trial record")]
        if bad:
            out.append(Check("run.harness_entries", Status.FAIL, f"{len(bad)} unusable manifest "
                             f"entr{'y' if len(bad) == 1 else 'ies'} left out: " + "; ".join(bad[:5])
                             + (" ..." if len(bad) > 5 else ""), len(bad), 0))
        return out

    def key_of(self, rec: dict, problem: str, style: str, check_id: str) -> dict:
        """The manifest entry of a record's (problem, prompt_style, example_id, seed); Reject
        (an invalid trial, counted 0) when the harness lists no such trial."""
        if self.keys is None:
            self.load_manifest()
        for f in ("example_id", "seed"):
            v = rec.get(f)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise Reject(check_id, f"{f} {short(v, as_repr=True)} is not an integer: the trial "
                                       "names no key the harness knows")
        key = trial_key(problem, style, rec.get("example_id"), rec.get("seed"))
        if self.manifest_error is not None:
            raise Reject(check_id, f"{show_key(key)}: no harness manifest to check it against "
                                   f"({self.manifest_error})")
        entry = self.keys.get(key)
        if entry is None:
            raise Reject(check_id, f"{show_key(key)} is not a trial the harness ran (the manifest "
                                   f"{SPEC['reference_file']}:{SPEC['harness_dataset']} does not "
                                   "list it): an unknown key is invalid, never a harness gap")
        return entry

    def all_ground_truths(self, problem: str, wanted: set) -> tuple:
        """({example: design} of the readable ground truths of a problem, all compared): every
        one, or only the `wanted` examples when there are more than copy_max_ground_truths."""
        import h5py
        out = {}
        try:
            with _h5_open(self.path, "run.reference") as fh:
                grp = _h5_get(fh, f"ground_truth/{problem}", "run.reference")
                names = list(grp.keys()) if isinstance(grp, h5py.Group) else []
        except Reject:
            return out, False
        exs = [int(n) for n in names if re.fullmatch(r"-?[0-9]{1,18}", n)]
        every = len(exs) <= SPEC["copy_max_ground_truths"]
        for ex in exs if every else sorted(wanted & set(exs)):
            try:
                out[ex] = self.ground_truth(problem, ex)[0]
            except Unscorable:
                continue
        return out, every

    def ground_truth(self, problem: str, example: int) -> tuple:
        key = ("gt", problem, example)
        if key not in self._cache:
            grp = f"ground_truth/{problem}/{example}"
            try:
                attrs = read_h5_attrs(self.path, grp, "run.reference")
                if attrs is None:
                    raise Unscorable(f"no ground truth for {problem} example {example} in reference.h5")
                design = read_h5_array(self.path, f"{grp}/optimal_design", "run.reference",
                                       shape=PROBLEMS[problem]["design_shape"], density=True)
                self._cache[key] = (design, attrs)
            except Reject as exc:
                raise Unscorable(f"ground truth unusable: {exc.check.message}")
        return self._cache[key]

    def baseline(self, problem: str, algorithm: str, seed: int) -> dict:
        key = ("bl", problem, algorithm, seed)
        if key not in self._cache:
            self._cache[key] = self._load_baseline(problem, algorithm, seed)
        val = self._cache[key]
        if isinstance(val, str):
            raise Unscorable(val)
        if key in self._reported:
            return dict(val, checks=[])
        self._reported.add(key)
        return val

    def _load_baseline(self, problem: str, algorithm: str, seed: int):
        grp = f"baselines/{problem}/{algorithm}/seed{seed}"
        shape = PROBLEMS[problem]["design_shape"]
        try:
            attrs = read_h5_attrs(self.path, grp, "run.reference")
            if attrs is None:
                return f"no baseline for ({algorithm}, seed {seed}) of {problem}"
            sigma = attrs.get("sigma")
            # the kernel's 1/(2 sigma^2) must be a positive finite number
            if sigma is None or sigma <= 0 or sigma * sigma == 0.0 or \
                    not 0.0 < 0.5 / (sigma * sigma) < math.inf:
                return f"baseline ({algorithm}, seed {seed}) records no usable positive sigma " \
                       f"({sigma!r})"
            ref = read_h5_array(self.path, f"{grp}/reference_designs", "run.reference", ndim=3,
                                density=True)
            bsm = read_h5_array(self.path, f"{grp}/baseline_samples", "run.reference", ndim=3,
                                density=True)
            for name, a in (("reference_designs", ref), ("baseline_samples", bsm)):
                if tuple(a.shape[1:]) != tuple(shape) or a.shape[0] < 1:
                    return f"baseline ({algorithm}, seed {seed}): {name} has shape {a.shape}"
        except Reject as exc:
            return f"baseline ({algorithm}, seed {seed}) unusable: {exc.check.message}"
        value = mmd(bsm, ref, sigma)
        if not value > 0:
            return f"baseline ({algorithm}, seed {seed}): baseline MMD is {value:g}, not positive"
        checks = []
        rec = attrs.get("baseline_mmd")
        if rec is not None and abs(rec - value) > SPEC["claim_tol"] * max(1.0, abs(value)):
            checks.append(Check(f"baseline.{problem}.{algorithm}.seed{seed}", Status.INFO,
                                f"recorded baseline_mmd {rec:.6g} differs from the recomputed "
                                f"{value:.6g}; the recomputed one is used", rec, value))
        spacing = reference_spacing(ref)
        rigid = rigid_affordable(len(ref), len(ref) + len(bsm), int(ref[0].size))

        thr_plain = baseline_threshold(ref, bsm, spacing, False)
        thr_rigid = baseline_threshold(ref, bsm, spacing, True) if rigid else thr_plain

        def rates(rig, thr):
            return {"reference": reference_near_rate(ref, ref, spacing, same=True, rigid=rig,
                                                     frac=thr[0]),
                    "baseline_samples": reference_near_rate(ref, bsm, spacing, same=False,
                                                            rigid=rig)}
        plain = rates(False, thr_plain)
        return {"mmd": value, "sigma": sigma, "reference": ref, "baseline_samples": bsm,
                "spacing": spacing, "checks": checks, "rigid": rigid, "near_rate_plain": plain,
                "near_rate": rates(True, thr_rigid) if rigid else plain,
                "ref_threshold_plain": thr_plain, "ref_threshold": thr_rigid}


TERM_NAMES = ("overall", "design_quality", "iou", "pixel_accuracy", "objective_match",
              "constraint_match", "connectivity", "watertightness", "tool_efficiency",
              "task_completion", "rag_accuracy", "workflow_completion", "model_quality",
              "code_quality", "job_completion", "dryrun", "syntax", "slurm_accepted")


def compare_claims(rec: dict, terms: dict, tid: str) -> tuple:
    """Claimed scores against recomputed ones: reported, never used."""
    claimed = rec.get("claimed_scores")
    if claimed is None:
        return {}, []
    if not isinstance(claimed, dict):
        return {}, [Check(f"trial.{tid}.claims", Status.INFO, "claimed_scores is not an object: ignored")]
    out, diffs = {}, []
    for key in sorted(claimed):
        if key not in TERM_NAMES:
            diffs.append(f"{short(key, 30)}: not a term this grader computes")
            continue
        c, r = claimed[key], terms.get(key)
        cn = None if c is None else as_number(c)
        agree = (c is None and r is None) or (cn is not None and r is not None and
                                              abs(cn - r) <= SPEC["claim_tol"])
        out[key] = {"claimed": c if (c is None or cn is not None) else short(c),
                    "recomputed": r, "agree": agree}
        if not agree:
            rs = "None" if r is None else f"{r:.4f}"
            diffs.append(f"{key} claimed {short(c, 20)}, recomputed {rs}")
    if not diffs:
        return out, [Check(f"trial.{tid}.claims", Status.INFO,
                           f"{len(out)} claimed score(s) agree with the recomputed ones")]
    return out, [Check(f"trial.{tid}.claims", Status.INFO, "claims disagree (reported, not used): "
                       + "; ".join(diffs[:6]) + (" ..." if len(diffs) > 6 else ""), len(diffs))]


# the fields of a tool call the grader reads (args: RAG answers, HPC config, CLI command, job
# ids; results: outcomes, objectives, export parameters, passages, metrics): a trial's content
# fingerprint is made of these, so a copy that varies anything else is still a copy
_SCORED_ARGS = frozenset(a for v in _RAG_ALIASES.values() for a in v) | {
    "problem_config", "cfg", "seed", "epochs", "algorithm", "problem_id", "command", "job_id"}
_SCORED_RESULTS = frozenset({"success", "error", "results", "objectives", "stl_path", "scale_xy",
                             "scale_z", "threshold", "mirrored", "job_id", "state", "metrics"})


def content_fingerprint(problem: str, calls: list, content) -> str | None:
    """sha256 of what a trial is scored on (issue 24): its problem, the trace reduced to the
    fields the grader reads, and the content digests of its arrays, STL files and script
    (`content`, noted while scoring); None when the trace cannot be serialised."""
    trace = [[c["name"], {k: v for k, v in c["args"].items() if k in _SCORED_ARGS},
              {k: v for k, v in c["result"].items() if k in _SCORED_RESULTS}] for c in calls]
    try:
        text = json.dumps([problem, trace, sorted(content)], sort_keys=True, default=str)
    except (ValueError, TypeError, RecursionError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def duplicate_checks(trials: list) -> list:
    """A trial whose scored content (trace, arrays, STL, script: content_fingerprint) repeats
    another's under a different harness key is flagged for review (a deterministic agent can
    repeat itself on two prompts; a copied trial is the other reading); both keep their keys.
    Trials claiming the same key are counted once (key_accounting)."""
    first, out = {}, []
    for t in trials:
        if t.content_sha256 is None or t.status in ("filtered", "duplicate", "missing"):
            continue
        if t.content_sha256 in first:
            out.append(Check(f"trial.{t.trial_id}.duplicate", Status.REVIEW,
                             f"scored content (trace, arrays, STL files, script) identical to trial "
                             f"{first[t.content_sha256]}'s, under another harness key: a copied "
                             "trial, or a deterministic agent repeating itself; a reviewer decides",
                             first[t.content_sha256]))
        else:
            first[t.content_sha256] = t.trial_id
    return out


def first_difference(a, b, path: str = ""):
    """The first path at which two JSON values differ (numbers by value, booleans only equal to
    booleans), or None when they agree."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is type(b) and a == b else (path or "(value)")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            return None if float(a) == float(b) else (path or "(value)")
        except OverflowError:
            return None if a == b else (path or "(value)")
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip(".")
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d is not None:
                return d.lstrip(".")
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})".lstrip(".")
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d is not None:
                return d.lstrip(".")
        return None
    return None if a == b else (path or "(value)").lstrip(".")


def key_checks(rec: dict, key: dict, tid: str) -> list:
    """A record's own copy of the key (its `expected` metadata, a training-code `algorithm`)
    against the harness manifest: the manifest's is used; a disagreement is a FAIL finding
    (issue 24: a rewritten `expected` turned a wrong export into task completion 1.0)."""
    diffs = []
    try:
        if rec.get("expected") is not None:
            d = first_difference(rec["expected"], key.get("expected") or {})
            if d is not None:
                diffs.append(f"expected.{d}")
        if PROBLEMS[key["problem"]]["family"] == "training_code" and "algorithm" in rec and \
                rec["algorithm"] != key["algorithm"]:
            diffs.append(f"algorithm {short(rec['algorithm'], as_repr=True)} (harness "
                         f"{key['algorithm']!r})")
    except (RecursionError, MemoryError):
        diffs.append("expected (nested too deeply to compare)")
    if not diffs:
        return []
    return [Check(f"trial.{tid}.key", Status.FAIL,
                  "the record's own copy of its key disagrees with the harness manifest at "
                  + "; ".join(short(d, 120) for d in diffs) + ": the harness's is used", diffs)]


def key_accounting(trials: list, run: "RunRefs", problems: set, styles: set) -> tuple:
    """Each harness key counts once in its cell (issue 24).  (placeholders, checks):
    several trial folders claiming one key keep the worst of them in the cell (invalid, then a
    None of the agent's own artefact, then a None, then the lowest score) and the others are
    `duplicate` (REVIEW, not counted); a key the manifest lists with no trial claiming it is a
    `missing` trial in its cell (its cell INVALID, counted 0: dropping a weak trial can never
    raise a mean)."""
    by_key, checks = {}, []
    for t in trials:
        if t.key is not None and t.status != "filtered":
            by_key.setdefault(t.key, []).append(t)

    def rank(t):
        if t.status == "invalid":
            return (0, 0.0, t.trial_id)
        if t.score is None:
            return (1 if t.artefact_none else 2, 0.0, t.trial_id)
        return (3, t.score, t.trial_id)
    for key, ts in by_key.items():
        if len(ts) < 2:
            continue
        keep = min(ts, key=rank)
        for t in ts:
            if t is keep:
                continue
            t.status = "duplicate"
            checks.append(Check(f"trial.{t.trial_id}.duplicate_key", Status.REVIEW,
                                f"claims the harness key {show_key(key)} that trial {keep.trial_id} "
                                f"also claims: the key counts once, with {keep.trial_id}'s "
                                "outcome (the worse of the claimants); this one is not counted",
                                keep.trial_id))
    missing = []
    for key, e in sorted((run.keys or {}).items(), key=lambda kv: repr(kv[0])):
        if key in by_key or e["problem"] not in problems or e["prompt_style"] not in styles:
            continue
        name = re.sub(r"[^A-Za-z0-9._-]", "_", f"missing-{e['problem']}-{e['prompt_style']}-ex"
                      f"{e['example_id']}-seed{e['seed']}")[:100]
        t = Trial(name, problem=e["problem"], style=e["prompt_style"], status="missing", key=key)
        t.reasons.append(f"{show_key(key)}: the harness ran it but no trial folder claims it")
        missing.append(t)
    if missing:
        checks.append(Check("run.missing_trials", Status.FAIL,
                            f"{len(missing)} trial(s) the harness manifest lists have no trial "
                            "folder (each counted 0 in its cell, whose mean is then not taken): "
                            + ", ".join(show_key(t.key) for t in missing[:5])
                            + (" ..." if len(missing) > 5 else ""), len(missing), 0))
    return missing, checks


def budget_checks(run: "RunRefs") -> list:
    """What the run's budget (RunBudget) read and refused."""
    b = run.budget
    spent = time.monotonic() - b.t0
    out = [Check("run.budget", Status.INFO if not b.refused else Status.FAIL,
                 f"{b.bytes} bytes of trial files read in {spent:.1f} s (budget {b.max_bytes} bytes, "
                 f"{b.max_seconds:g} s)" + (f"; {len(b.refused)} read(s) refused past it, each "
                 "scoring 0 on what it feeds: " + "; ".join(b.refused[:5]) +
                 (" ..." if len(b.refused) > 5 else "") + " (--budget raises the time budget)"
                 if b.refused else ""), b.bytes, b.max_bytes)]
    return out


def cell_from_folder(name: str):
    """(problem, style) that a trial folder named `<problem>-<prompt_style>[-<suffix>]` names
    (TRIAL_FORMAT.md, "Layout"), or None.  Problem names hold no '-'; the longest style of that
    problem that the rest starts with wins (t4-func-terse before t4-terse)."""
    problem, sep, rest = name.partition("-")
    if not sep or problem not in PROBLEMS:
        return None
    for style in sorted(PROBLEMS[problem]["styles"], key=len, reverse=True):
        if rest == style or rest.startswith(style + "-"):
            return problem, style
    return None


def invalid_trial(trial: Trial, check: Check, folder: str, problems: set, styles: set) -> tuple:
    """(Trial, checks) for a trial whose record is malformed.  It keeps the cell its record
    names; a record that names none (unreadable, not an object, unregistered problem or style)
    takes the cell its folder name gives, as INVALID; with neither it has no cell and the run
    reports it (unplaced_checks)."""
    msg = check.message
    if trial.problem is None:
        cell = cell_from_folder(folder)
        if cell is not None:
            trial.problem, trial.style = cell
            msg += f" (kept as INVALID in the cell {cell[0]}/{cell[1]} its folder name gives)"
        else:
            msg += (" (its folder name gives no registered <problem>-<prompt_style>: the trial "
                    "has no cell)")
    if trial.problem is not None and (trial.problem not in problems or trial.style not in styles):
        trial.status = "filtered"
        return trial, []
    trial.reasons.append(msg)
    return trial, [Check(check.id, Status.FAIL, msg, check.measured, check.limit)]


def unplaced_checks(trials: list) -> list:
    """A malformed trial whose record and folder name both fail to name a cell cannot be
    averaged anywhere: the run reports it and cannot PASS."""
    lost = [t.trial_id for t in trials if t.status == "invalid" and t.problem is None]
    if not lost:
        return []
    return [Check("run.unplaced_trials", Status.FAIL,
                  f"{len(lost)} malformed trial(s) with no cell (neither the record nor the folder "
                  f"name gives a registered problem and style): {', '.join(lost[:10])}"
                  + (" ..." if len(lost) > 10 else "") + "; the run cannot PASS", len(lost), 0)]


def grade_trial(tdir: str, run: RunRefs, problems: set, styles: set) -> tuple:
    """(Trial, checks) for one trial folder.  Never raises for bad input."""
    tid = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(tdir.rstrip(os.sep)))[:100]
    trial, checks = Trial(tid), []
    cid = f"trial.{tid}.record"
    try:
        if os.path.islink(tdir):
            raise Reject(cid, "trial folder is a symlink (refused)")
        if os.path.islink(os.path.join(tdir, SPEC["trial_file"])):
            raise Reject(cid, f"{SPEC['trial_file']} is a symlink (refused)")
        path = os.path.join(tdir, SPEC["trial_file"])
        if os.path.isfile(path):        # charged to the run's budget (refused past it)
            run.budget.charge(min(os.path.getsize(path), SPEC["max_json_bytes"]),
                              SPEC["trial_file"], cid)
        rec = read_json_file(path, cid, SPEC["max_json_bytes"])
        if not isinstance(rec, dict):
            raise Reject(cid, "trial.json is not a JSON object")
        problem, style = rec.get("problem"), rec.get("prompt_style")
        problem_ok = isinstance(problem, str) and problem in PROBLEMS
        key, unknown = None, None
        if problem_ok and isinstance(style, str) and style in PROBLEMS[problem]["styles"]:
            # the cell is known from here on: a trial invalid past this point still counts in
            # its cell (as None), so dropping a bad trial can never raise a cell's mean
            trial.problem, trial.style = problem, style
            try:        # the harness's key: claimed even when the record is otherwise malformed
                key = run.key_of(rec, problem, style, cid)
                trial.key = key["key"]
            except Reject as exc:
                unknown = exc
        if rec.get("format") != SPEC["trial_format"]:
            raise Reject(cid, f"format {short(rec.get('format'))!r}, expected {SPEC['trial_format']!r}")
        if not problem_ok:
            raise Reject(cid, f"problem {short(problem)!r} is not registered "
                              f"(valid: {', '.join(list_problems())})")
        if trial.style is None:
            raise Reject(cid, f"prompt_style {short(style)!r} is not accepted by {problem} "
                              f"(valid: {', '.join(PROBLEMS[problem]['styles'])})")
        if problem not in problems or style not in styles:
            trial.status = "filtered"
            return trial, []
        if unknown is not None:
            raise unknown
        if not isinstance(rec.get("artefacts", {}), dict):
            raise Reject(cid, "trial.json: artefacts must be an object")
        calls = parse_trace(rec, tid)
    except Reject as exc:
        return invalid_trial(trial, exc.check, os.path.basename(tdir.rstrip(os.sep)), problems,
                             styles)
    cfg = PROBLEMS[problem]
    checks.append(Check(cid, Status.PASS, f"{problem} / {style}, {len(calls)} tool call(s); "
                        f"harness key {show_key(trial.key)}"))
    checks += key_checks(rec, key, tid) + trace_checks(calls, problem, tid)
    if not cfg["agent_tools_support"]:
        # seed warning: the agent's EngiBench tools support only beams2d and photonics2d
        fail = [c for c in calls if c["name"] == "create_problem" and not succeeded(c)]
        trial.status = "unsupported"
        trial.reasons.append(f"{problem} is registered but the agent's tools do not support it "
                             "(evaluations fail at create_problem)"
                             + ("; the trace shows create_problem failing" if fail else ""))
        checks.append(Check(f"trial.{tid}.unsupported", Status.REVIEW, trial.reasons[-1]))
        trial.claims, cl = compare_claims(rec, {"overall": None}, tid)
        return trial, checks + cl
    try:
        fam = cfg["family"]
        if fam == "design_optimization":
            terms, more = score_design(rec, calls, problem, style, tdir, run, tid, key)
        elif fam == "rag_retrieval":
            terms, more = score_rag(key, calls, tid)
        elif fam == "hpc_orchestration":
            terms, more = score_hpc(key, calls, problem, style, tid, rec)
        else:
            terms, more = score_training_code(rec, calls, problem, tdir, run, tid, key)
    except Unscorable as exc:
        terms, more = {"overall": None}, []
        trial.reasons.append(str(exc))
    except Reject as exc:
        trial.reasons.append(exc.check.message)
        return trial, checks + [exc.check]
    except (RecursionError, MemoryError) as exc:   # a value nested too deeply for some walk
        msg = f"trial.json cannot be graded ({type(exc).__name__}: a value nested too deeply or too large)"
        trial.reasons.append(msg)
        return trial, checks + [Check(cid, Status.FAIL, msg)]
    checks += more
    trial.terms, trial.score = terms, terms.get("overall")
    if trial.score is None:
        trial.status = "unscorable"
        trial.artefact_none = terms.get("model_quality_unscorable_artefact") is True
        if terms.get("model_quality_unscorable_reason"):
            trial.reasons.append(terms["model_quality_unscorable_reason"])
        checks.append(Check(f"trial.{tid}.unscorable", Status.REVIEW,
                            "score None: " + "; ".join(trial.reasons)))
    else:
        trial.status = "scored"
        shown = " ".join(f"{k}={v:.4f}" for k, v in terms.items()
                         if k != "overall" and k in TERM_NAMES and v is not None)
        checks.append(Check(f"trial.{tid}.score", Status.INFO, f"{trial.score:.4f} ({shown})",
                            trial.score))
    trial.claims, cl = compare_claims(rec, terms, tid)
    trial.content_sha256 = content_fingerprint(problem, calls, run.content.get(tid, ()))
    return trial, checks + cl


# =============================================================================
# AGGREGATION: per (problem, style) cell, never averaging a None
# =============================================================================
def aggregate(trials: list, expected=None) -> list:
    """One dict per (problem, style) cell that holds a trial: mean and count when every trial
    is scored; otherwise INVALID (some trial record of the cell is malformed or names a key the
    harness does not know, or a trial the harness ran is missing), UNSCORABLE or UNSUPPORTED
    (every None is an unsupported trial), with the reasons, never averaged.  A malformed record
    whose problem and style are readable stays in its cell as a None; a duplicate claimant of a
    key is not counted (key_accounting).  `expected`: {(problem, style): trials the harness
    manifest lists}, reported beside the count."""
    cells = {}
    for t in trials:
        if t.status in ("scored", "unscorable", "unsupported", "missing") or \
                (t.status == "invalid" and t.problem is not None and t.style is not None):
            cells.setdefault((t.problem, t.style), []).append(t)
    out = []
    for (p, s), ts in sorted(cells.items()):
        nones = [t for t in ts if t.score is None]
        cell = {"problem": p, "style": s, "n": len(ts), "n_none": len(nones),
                "n_artefact_none": sum(t.artefact_none for t in nones),
                "n_expected": (expected or {}).get((p, s), 0)}
        if not nones:
            cell.update(status="scored", mean=sum(t.score for t in ts) / len(ts), reasons=[])
        else:
            kind = "INVALID" if any(t.status in ("invalid", "missing") for t in nones) else \
                "UNSUPPORTED" if all(t.status == "unsupported" for t in nones) else "UNSCORABLE"
            reasons = sorted({(f"invalid record {t.trial_id}: " if t.status == "invalid" else
                               "missing trial: " if t.status == "missing" else "") + r
                              for t in nones for r in t.reasons})
            cell.update(status=kind.lower(), mean=None, reasons=reasons)
        out.append(cell)
    return out


def cell_checks(cells: list) -> list:
    out = []
    for c in cells:
        cid = f"cell.{c['problem']}/{c['style']}"
        if c["status"] == "scored":
            out.append(Check(cid, Status.INFO, f"mean {c['mean']:.4f} over n={c['n']} (the harness "
                             f"ran {c.get('n_expected', 0)})", c, None))
        else:
            zero = (f"; {c['n_artefact_none']} None from the agent's own artefact: the cell counts "
                    "0.0 in the SCORE" if c.get("n_artefact_none") else "")
            out.append(Check(cid, Status.REVIEW,
                             f"{c['status'].upper()} n={c['n']} ({c['n_none']} None, not averaged"
                             f"{zero}): " + "; ".join(c["reasons"]), c, None))
    return out


def reference_file_check(run_dir: str) -> list:
    if os.path.isfile(os.path.join(run_dir, SPEC["reference_file"])):
        return []
    # INFO, not FAIL: a RAG/HPC-only run needs no reference file; a trial that does need
    # it is UNSCORABLE with this reason, which already keeps the run from PASS
    return [Check("run.reference", Status.INFO, f"{SPEC['reference_file']} missing: "
                  "no ground truth or baselines (design and training-code trials unscorable)")]


def filter_checks(trials: list) -> list:
    out = []
    filtered = sum(t.status == "filtered" for t in trials)
    if filtered:
        out.append(Check("run.filter", Status.SKIP, f"{filtered} trial(s) outside --problem/--style"))
    if not any(t.status != "filtered" for t in trials):
        out.append(Check("run.trials", Status.INFO, "no trial to grade"))
    return out


def key_lines(trials: list, cells: list, checks: list) -> dict:
    graded = [t for t in trials if t.status not in ("filtered", "missing")]
    scored = [t for t in graded if t.status == "scored"]
    return {
        "trials": len(graded),
        "trials_scored": len(scored),
        "trials_unscorable": sum(t.status == "unscorable" for t in graded),
        "trials_unsupported": sum(t.status == "unsupported" for t in graded),
        "trials_invalid": sum(t.status == "invalid" for t in graded),
        "trials_missing": sum(t.status == "missing" for t in trials),
        "trials_duplicate": sum(t.status == "duplicate" for t in graded),
        "cells": len(cells),
        "cells_scored": sum(c["status"] == "scored" for c in cells),
        "claims_disagreeing": sum(1 for t in graded for v in t.claims.values() if not v["agree"]),
        "trial_mean": sum(t.score for t in scored) / len(scored) if scored else None,
    }


# =============================================================================
# GRADING: the checks above, in the seed's order, over one run
# =============================================================================
def grade(run_dir: str, problems: set, styles: set, seconds: float | None = None) -> Report:
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
            trial, more = grade_trial(os.path.join(tdir, name), run, problems, styles)
            report.figures_data.setdefault("trial_dirs", {})[trial.trial_id] = os.path.join(tdir, name)  # PLOTS
            trials.append(trial)
            checks += more
            if (i + 1) % 25 == 0 or i + 1 == len(names):
                progress_count("trials", i + 1, len(names), t_trials)
        missing, more = key_accounting(trials, run, problems, styles)
        trials += missing
        checks += more + duplicate_checks(trials) + unplaced_checks(trials)
        checks += design_copy_checks(trials, run, checks) + budget_checks(run)
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


# =============================================================================
# VERDICT
# =============================================================================
def verdict(checks: list, *, strict: bool) -> tuple:
    """(result, score) from records alone.  Score = mean over the scorable cells' means and a
    0.0 for every INVALID cell, every UNSCORABLE cell holding a None the agent's own artefact
    caused (unusable samples), and every malformed trial with no cell (run.unplaced_trials): a
    malformed record or artefact never raises the SCORE (issue 16).  UNSCORABLE/UNSUPPORTED
    cells of harness gaps only (the seed's None: no baseline, no ground truth) stay out of it."""
    cells = [c.measured for c in checks if c.id.startswith("cell.") and isinstance(c.measured, dict)]
    means = [c["mean"] for c in cells if c.get("status") == "scored"]
    zeros = [0.0] * sum(c.get("status") == "invalid" or
                        (c.get("status") == "unscorable" and bool(c.get("n_artefact_none")))
                        for c in cells)
    zeros += [0.0] * sum(int(c.measured) for c in checks if c.id == "run.unplaced_trials")
    inconclusive = any(c.status in (Status.FAIL, Status.REVIEW) for c in checks)
    if strict and (inconclusive or not means):
        return "FAIL", 0.0
    if not means and not zeros:
        return "UNGRADED", None
    means += zeros          # a run of broken trials only is graded 0.0 (issue 24), not UNGRADED
    exact = sum(means) / len(means)
    score = round(exact, 4)
    if score == 1.0 and exact < 1.0 - SPEC["full_score_tol"]:
        score = 0.9999           # below full never prints (or exits) as full
    return ("PARTIAL" if inconclusive else "PASS"), score


# =============================================================================
# PLOTS: --plot DIR writes PNG figures (matplotlib, an optional extra: pip install '.[plots]').
# matplotlib is imported only here and only under --plot; figures are drawn on the Agg canvas
# without pyplot (no global state, nothing shown).  Every plot_* function RETURNS its Figure,
# so tests check what is drawn; write_figures saves them and lists them as INFO records
# (`figure.<name>`, measured = the PNG's path) at the end of the report and in --json.
# =============================================================================
PLOT_COLORS = {"submitted": "#1f77b4", "regenerated": "#d62728", "reference": "#2ca02c",
               "limit": "#444444", "PASS": "#2e7d32", "PARTIAL": "#ef8f00", "FAIL": "#c62828",
               "UNGRADED": "#9e9e9e"}


def plot_usage_error(out_dir: str):
    """Why `--plot DIR` cannot be honoured (checked before any grading), or None."""
    try:
        import matplotlib
    except ImportError:
        matplotlib = None
    if matplotlib is None:
        return ("--plot needs matplotlib, which is not installed: pip install '.[plots]' "
                "(or: pip install matplotlib)")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        return f"--plot {out_dir}: cannot create the directory ({exc.strerror or exc})"
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK | os.X_OK):
        return f"--plot {out_dir}: not a writable directory"
    return None


def new_figure(width: float, height: float):
    """A Figure on the Agg canvas (no pyplot), laid out with constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def reciprocal(x):
    """1/x for a secondary axis (h <-> n), quiet at 0."""
    import numpy as np
    with np.errstate(divide="ignore"):
        return 1.0 / np.asarray(x, float)


def plain_text(text) -> str:
    """Untrusted text (a submission's name, a reason) shown literally: no mathtext."""
    return str(text).replace("$", r"\$")[:80]


def verdict_title(fig, what: str, submission: str, result: str, score) -> None:
    """Every figure's title: the submission, what the figure shows, and the verdict."""
    name = os.path.basename(os.path.normpath(str(submission))) or str(submission)
    tail = f"RESULT: {result}" + ("" if score is None else f"   SCORE: {score}")
    fig.suptitle(f"{plain_text(name)}: {what}\n{tail}", fontsize=11)


def write_figures(out_dir: str, figures: list) -> list:
    """figures: [(name, caption, build)], build() -> Figure, saved as DIR/<name>.png.  One INFO
    record per figure; a figure that cannot be drawn says so and never changes the grade."""
    out = []
    try:
        os.makedirs(out_dir, exist_ok=True)     # a per-submission subfolder is made here
    except OSError:
        pass                                    # each figure then records why it is missing
    for name, caption, build in figures:
        path = os.path.join(os.path.abspath(out_dir), f"{name}.png")
        try:
            build().savefig(path)
        except Exception as exc:    # a drawing failure must not turn into a grading failure
            out.append(Check(f"figure.{name}", Status.INFO,
                             f"not drawn: {type(exc).__name__}: {str(exc)[:200]}"))
            continue
        out.append(Check(f"figure.{name}", Status.INFO, f"{path}: {caption}", path))
    return out


def plot_leaderboard(rows: list, *, score_key: str = "score", score_label: str = "SCORE",
                     grader: str = GRADER_NAME):
    """Several submissions graded in one call: one horizontal bar per submission, best first,
    coloured by RESULT; an UNGRADED row (score None) is marked UNGRADED at 0.
    rows: [{"submission": str, score_key: float | None, "result": str, ...}] (the leaderboard's
    rows; score_key names the column drawn, e.g. "overall_accuracy" or "step_accuracy")."""
    def value(r):
        v = r.get(score_key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
            else None
    ranked = sorted(rows, key=lambda r: (value(r) is None, -(value(r) or 0.0)))
    fig = new_figure(8.0, 1.6 + 0.38 * max(1, len(ranked)))
    ax = fig.add_subplot()
    names = [plain_text(os.path.basename(os.path.normpath(str(r.get("submission", "?"))))) for r in ranked]
    seen = set()
    for i, r in enumerate(ranked):
        score = value(r)
        result = str(r.get("result") or ("UNGRADED" if score is None else "graded"))
        color = PLOT_COLORS.get(result, PLOT_COLORS["submitted"])
        ax.barh(i, 0.0 if score is None else float(score), color=color, height=0.6,
                hatch=None if score is not None else "//", edgecolor=color,
                label=None if result in seen else result)
        seen.add(result)
        ax.text((score or 0.0) + 0.01, i, "UNGRADED" if score is None else f"{score:.4g}  {result}",
                va="center", fontsize=9)
    ax.set_yticks(range(len(ranked)), names)
    ax.invert_yaxis()
    ax.set_xlim(0.0, max([1.0] + [value(r) or 0.0 for r in ranked]) * 1.12)
    ax.axvline(1.0, color=PLOT_COLORS["limit"], lw=0.8, ls=":", label="full score")
    ax.set_xlabel(f"{score_label} (fraction of full credit, dimensionless)")
    ax.set_ylabel("submission")
    ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{grader}: leaderboard of {len(ranked)} submission(s), best first", fontsize=11)
    return fig


def plot_subdir(out_dir: str, submission: str, index: int) -> str:
    """With several submissions, each one's figures go to DIR/<k>-<name> (names may repeat)."""
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_"
                   for ch in os.path.basename(os.path.normpath(str(submission))))[:60]
    return os.path.join(out_dir, f"{index + 1:02d}-{name or 'submission'}")


def write_leaderboard_figure(out_dir: str, rows: list, **kw) -> list:
    """DIR/leaderboard.png for several submissions (kw: plot_leaderboard's); its INFO record."""
    return write_figures(out_dir, [("leaderboard", f"scores of {len(rows)} submissions",
                                    lambda: plot_leaderboard(rows, **kw))])


# ---- EngiAI figures ------------------------------------------------------------------------
def design_pair(figures_data: dict, trial) -> tuple:
    """(agent design or None, ground truth or None, why-not text) for a design trial, read
    again through the same guarded readers score_design uses (never raises)."""
    cfg = PROBLEMS[trial.problem]
    tdir = (figures_data.get("trial_dirs") or {}).get(trial.trial_id)
    run = figures_data.get("run_refs")
    design = gt = None
    why = []
    try:
        rec = read_json_file(os.path.join(tdir, SPEC["trial_file"]), "plot", SPEC["max_json_bytes"])
        arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
        if arts.get("design") is None:
            why.append("no design produced")
        else:
            design = read_h5_array(safe_member(tdir, SPEC["arrays_file"], "plot"), "design", "plot",
                                   shape=cfg["design_shape"])
        ex = rec.get("example_id")
        if run is not None and isinstance(ex, int) and not isinstance(ex, bool):
            gt = run.ground_truth(trial.problem, ex)[0]
    except (Reject, Unscorable, TypeError, AttributeError) as exc:
        why.append(exc.check.message if isinstance(exc, Reject) else str(exc))
    if gt is None and not why:
        why.append("no ground truth")
    return design, gt, "; ".join(why)


def plot_engiai_design(trial, design, gt, why: str, *, submission: str, result: str, score):
    """One design trial: the agent's design, the ground truth and their difference (binarised
    at SPEC binarize_at) side by side; IoU and pixel accuracy (recomputed) in the caption."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    fig = new_figure(13.0, 4.4)
    axes = fig.subplots(1, 3)
    shown = None
    for ax, (name, arr) in zip(axes[:2], (("agent's design", design), ("ground truth", gt))):
        ax.set_title(name, fontsize=10)
        if arr is None:
            ax.text(0.5, 0.5, plain_text(why or "absent"), ha="center", va="center",
                    transform=ax.transAxes, fontsize=9, wrap=True)
        else:
            shown = ax.imshow(arr, cmap="gray_r", vmin=0.0, vmax=1.0, interpolation="nearest",
                              aspect="equal")
        ax.set_xlabel("x (pixels)")
        ax.set_ylabel("y (pixels)")
    if shown is not None:
        fig.colorbar(shown, ax=list(axes[:2]), label="material density (0 void, 1 solid)", shrink=0.55)
    ax = axes[2]
    ax.set_title(f"difference (binarised at > {SPEC['binarize_at']:g})", fontsize=10)
    ax.set_xlabel("x (pixels)")
    ax.set_ylabel("y (pixels)")
    if design is not None and gt is not None:
        diff = binarize(design).astype(int) - binarize(gt).astype(int)
        cmap = ListedColormap(["#2166ac", "#f7f7f7", "#b2182b"])
        ax.imshow(diff, cmap=cmap, vmin=-1.5, vmax=1.5, interpolation="nearest", aspect="equal")
        ax.legend(handles=[Patch(fc="#b2182b", label=f"agent only ({int((diff > 0).sum())} px)"),
                           Patch(fc="#2166ac", label=f"ground truth only ({int((diff < 0).sum())} px)"),
                           Patch(fc="#f7f7f7", ec="0.6", label="agree")],
                  loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    else:
        ax.text(0.5, 0.5, "nothing to compare", ha="center", va="center", transform=ax.transAxes)
    t = trial.terms or {}
    fmt = lambda v: "n/a" if v is None else f"{v:.4f}"    # noqa: E731
    fig.supxlabel(f"IoU = {fmt(t.get('iou'))}    pixel accuracy = {fmt(t.get('pixel_accuracy'))}    "
                  f"trial overall = {fmt(trial.score)}   (recomputed by the grader)", fontsize=10)
    verdict_title(fig, f"trial {plain_text(trial.trial_id)} ({trial.problem} / {trial.style})",
                  submission, result, score)
    return fig


def plot_engiai_cells(cells: list, *, submission: str, result: str, score):
    """The problem x style table of cell means as a heat map; a None cell (INVALID, UNSCORABLE,
    UNSUPPORTED: no mean) is hatched grey, marked with its status and a numbered reason listed
    under the map; a combination with no trial is blank."""
    import numpy as np
    from matplotlib.patches import Patch, Rectangle
    problems = [p for p in list_problems() if any(c["problem"] == p for c in cells)]
    styles = [s for s in list_styles() if any(c["style"] == s for c in cells)]
    fig = new_figure(max(7.0, 0.95 * len(styles) + 4.0), 2.6 + 0.5 * max(1, len(problems)))
    ax = fig.add_subplot()
    grid = np.full((max(1, len(problems)), max(1, len(styles))), np.nan)
    for c in cells:
        if c["mean"] is not None:
            grid[problems.index(c["problem"]), styles.index(c["style"])] = c["mean"]
    im = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    notes = []
    for c in cells:
        i, j = problems.index(c["problem"]), styles.index(c["style"])
        if c["mean"] is not None:
            ax.text(j, i, f"{c['mean']:.3f}\nn={c['n']}", ha="center", va="center", fontsize=8,
                    color="white" if c["mean"] < 0.6 else "black")
            continue
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fc="0.85", ec="0.4", hatch="xx", lw=0.5))
        notes.append(f"[{len(notes) + 1}] {c['problem']} / {c['style']}: " + "; ".join(c["reasons"]))
        ax.text(j, i, f"{c['status'].upper()}\n{c['n_none']}/{c['n']} None [{len(notes)}]",
                ha="center", va="center", fontsize=7, color=PLOT_COLORS["FAIL"],
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    ax.set_xticks(range(len(styles)), [plain_text(s) for s in styles], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(problems)), [plain_text(p) for p in problems], fontsize=8)
    ax.set_xlabel("prompt style")
    ax.set_ylabel("problem")
    fig.colorbar(im, ax=ax, label="cell mean of the trial scores (0-1)", shrink=0.9)
    ax.legend(handles=[Patch(fc="0.85", ec="0.4", hatch="xx", label="None cell, reason [k] below "
                             "(UNSCORABLE/UNSUPPORTED: left out of SCORE; INVALID: counts 0)"),
                       Patch(fc="white", ec="0.6", label="no trial")],
              loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=8, frameon=False)
    if notes:
        import textwrap
        fig.supxlabel("\n".join(textwrap.fill(n.replace("$", r"\$")[:600], 160) for n in notes),
                      fontsize=7, ha="left", x=0.02)
    if not cells:
        ax.text(0.5, 0.5, "no cell (no trial graded)", ha="center", va="center", transform=ax.transAxes)
    verdict_title(fig, "cell means per problem and prompt style", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: one figure per design trial and the cell heat map, as INFO records."""
    figures = []
    for t in figures_data.get("trials") or []:
        if t.problem is None or PROBLEMS[t.problem]["family"] != "design_optimization" or \
                t.status not in ("scored", "unscorable"):
            continue
        iou_v, pa = (t.terms or {}).get("iou"), (t.terms or {}).get("pixel_accuracy")
        caption = (f"design trial {t.trial_id}: agent, ground truth, difference; IoU "
                   f"{'n/a' if iou_v is None else f'{iou_v:.4f}'}, pixel accuracy "
                   f"{'n/a' if pa is None else f'{pa:.4f}'}")
        figures.append((f"engiai_design_{t.trial_id}", caption,
                        lambda t=t: plot_engiai_design(t, *design_pair(figures_data, t),
                                                       submission=submission, result=result, score=score)))
    figures.append(("engiai_cells", "problem x style cell means (heat map), None cells with reasons",
                    lambda: plot_engiai_cells(figures_data.get("cells") or [], submission=submission,
                                              result=result, score=score)))
    return write_figures(out_dir, figures)


# =============================================================================
# PRINTING AND CLI
# =============================================================================
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "trial_mean": lambda v, keys: "n/a" if v is None else f"{v:.4f}",
}
LEADERBOARD = (("score", "score", "desc"),)
POSITIVE_OPTIONS = ("budget",)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def format_check(c: Check, width: int = 30) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<{width}} {c.message}"


def format_table(cells: list) -> list:
    """The aggregated (problem, style) table, one indented line per cell, columns sized to fit."""
    rows = [{"problem": c["problem"], "style": c["style"], "n": c["n"],
             "mean": f"{c['mean']:.4f}" if c["mean"] is not None else "-",
             "status": "ok" if c["status"] == "scored" else
             f"{c['status'].upper()} ({c['n_none']} of {c['n']} None: {'; '.join(c['reasons'])})"}
            for c in cells]
    return text_table(rows, ["problem", "style", "n", "mean", "status"])


def print_report(checks: list, result: str, score, keys: dict, table=(), stream=None,
                 quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW when quiet), the summary over ALL checks, the cell
    table, keys, verdict."""
    stream = stream or sys.stdout
    shown = [c for c in checks if not quiet or c.status in (Status.FAIL, Status.REVIEW)]
    width = max([30] + [len(c.id) for c in shown])
    for c in shown:
        print(format_check(c, width), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    if table:
        print("table (per problem/style cell; INVALID/UNSCORABLE/UNSUPPORTED cells are never averaged)",
              file=stream)
        for line in table:
            print(line, file=stream)
    for key, value in keys.items():
        print(f"{key}: {format_value(key, value, keys)}", file=stream)
    print(f"RESULT: {result}", file=stream)
    if score is not None:
        print(f"SCORE: {score}", file=stream)


def write_out_dir(out: str, trials: list, cells: list) -> None:
    """--out DIR: trials.json (every trial's recomputed terms, claims, reasons) and cells.tsv."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "trials.json"), "w") as fh:
        json.dump([t.as_dict() for t in trials if t.status != "filtered"], fh, indent=2,
                  allow_nan=False)
        fh.write("\n")
    with open(os.path.join(out, "cells.tsv"), "w") as fh:
        fh.write("problem\tstyle\tn\tmean\tstatus\tn_none\treasons\n")
        for c in cells:
            mean = "" if c["mean"] is None else f"{c['mean']:.6f}"
            fh.write(f"{c['problem']}\t{c['style']}\t{c['n']}\t{mean}\t{c['status']}\t"
                     f"{c['n_none']}\t{' | '.join(c['reasons'])}\n")


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="RESULT: PASS every trial scorable and every artefact valid; PARTIAL some cell "
               "INVALID/UNSCORABLE/UNSUPPORTED, some artefact invalid or some trace to review; UNGRADED "
               "no scorable cell; FAIL only with --strict.  SCORE: mean of the scorable cells' "
               "means.  exit codes: 0 PASS with score 1.0, 1 graded below that, 2 UNGRADED or "
               "usage error, 3 grader failure, 130 interrupted; with several runs, the largest")
    add_report_options(p, submissions_help="run directory with reference.h5 and "
                       "trials/<id>/trial.json (reference/engiai/TRIAL_FORMAT.md)")
    p.add_argument("--problem", action="append", choices=list_problems(), metavar="P",
                   help="grade only this registered problem (repeatable); choices: "
                        + ", ".join(list_problems()))
    p.add_argument("--style", action="append", choices=list_styles(), metavar="S",
                   help="grade only this prompt style (repeatable); it must be accepted by a "
                        "selected problem; choices: " + ", ".join(list_styles()))
    p.add_argument("--strict", action="store_true",
                   help="anything short of PASS (unscorable cell, invalid artefact, trace to "
                        "review) is RESULT: FAIL, SCORE: 0.0")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help=f"seconds the whole run may take (default {SPEC['run_max_seconds']:g}); "
                        "what is not read within it scores 0 with a FAIL record")
    p.add_argument("--no-exec", action="store_true",
                   help="accepted for uniformity; this grader never executes what it grades "
                        "(scripts are only parsed), so grading is unchanged")
    p.add_argument("--out", metavar="DIR",
                   help="write trials.json (recomputed terms per trial) and cells.tsv to DIR "
                        "(must not be inside RUN_DIR; one run only)")
    return p


def resolve_filters(parser, args) -> tuple:
    """(problems, styles) after checking every chosen style is accepted by a chosen problem."""
    problems = set(args.problem or list_problems())
    accepted = {s for p in problems for s in PROBLEMS[p]["styles"]}
    for s in args.style or ():
        if s not in accepted:
            valid = "; ".join(f"{p}: {', '.join(PROBLEMS[p]['styles'])}" for p in sorted(problems))
            parser.error(f"argument --style: {s!r} is not accepted by the selected problem(s) "
                         f"(valid choices: {valid})")
    return problems, set(args.style or accepted)


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    resolve_filters(build_parser(), args)
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")
        run = os.path.realpath(sub)
        for opt, target in (("--out", args.out), ("--json", args.json), ("--table", args.table),
                            ("--plot", getattr(args, "plot", None))):
            if target and (os.path.realpath(target) == run or
                           os.path.realpath(target).startswith(run + os.sep)):
                raise UsageError(f"{opt} must not be inside RUN_DIR (the run is never modified)")
    if args.out and len(args.submissions) > 1:
        raise UsageError("--out takes one run (grade several runs with --json and --table)")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    problems, styles = resolve_filters(build_parser(), args)
    report = grade(submission, problems, styles, getattr(args, "budget", None))
    if args.out:
        write_out_dir(args.out, report.figures_data["trials"], report.figures_data["cells"])
    return report


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if (result == "PASS" and score == 1.0) else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    cells = report.figures_data["cells"]
    print_report(report.checks, result, score, report.keys, format_table(cells) if cells else (),
                 quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {"trials": [t.as_dict() for t in report.figures_data["trials"] if t.status != "filtered"],
            "cells": report.figures_data["cells"]}


# =============================================================================
# REPORTS: usage errors, the run block, progress, many submissions, the
# leaderboard (the same text in every grader; only the tables LEADERBOARD,
# KEY_FORMATS, POSITIVE_OPTIONS and OUTPUT_OPTIONS above differ)
# =============================================================================
class UsageError(Exception):
    """Something wrong with the grader's own inputs: one line on stderr, exit 2, before any work."""


class CliParser(argparse.ArgumentParser):
    """argparse whose errors are one line on stderr (no usage block) and exit 2."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_UNGRADED)


EXIT_FULL, EXIT_BELOW, EXIT_UNGRADED, EXIT_GRADER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
TABLE_FORMATS = {".csv": "csv", ".md": "markdown", ".markdown": "markdown"}
_PROGRESS = {"on": False, "label": "", "t0": 0.0, "tty": False}


def add_report_options(p, *, submissions_help: str, jobs: bool = True) -> None:
    """The options every grader shares: submissions, --json, --table, --merge, --jobs, --quiet,
    --version (the hidden --report-child runs one submission of a many-submission call)."""
    p.add_argument("submissions", nargs="*", metavar="SUBMISSION", help=submissions_help +
                   " (several: each graded in its own grader process, then a leaderboard)")
    p.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH (checked "
                   "writable before grading); with several submissions, one document per line")
    p.add_argument("--table", metavar="PATH", help="write the leaderboard to PATH: CSV (.csv) or "
                   "Markdown (.md)")
    p.add_argument("--merge", nargs="+", metavar="REPORT.json",
                   help="no grading: build the leaderboard from reports written by --json elsewhere")
    if jobs:
        p.add_argument("--jobs", type=int, default=1,
                       help="with several submissions, how many are graded at a time (default 1)")
    p.add_argument("--quiet", action="store_true",
                   help="print only FAIL / REVIEW_REQUIRED lines, the summary and the verdict; no "
                        "progress (the summary still counts every record)")
    p.add_argument("--plot", metavar="DIR", help="also write PNG figures to DIR, listed as figure.* "
                   "records (needs matplotlib: pip install '.[plots]'); with several submissions, "
                   "one subfolder each and DIR/leaderboard.png")
    p.add_argument("--version", action="version", version=f"{GRADER_NAME} {GRADER_VERSION}")
    p.add_argument("--report-child", metavar="FILE", help=argparse.SUPPRESS)


def check_output_path(path: str, option: str, *, directory: bool = False) -> None:
    """An output path the grader will write, proven writable now (UsageError if not).  A file
    that did not exist before is removed again; a directory is created."""
    try:
        if directory:
            os.makedirs(path, exist_ok=True)
            with tempfile.TemporaryFile(dir=path):
                pass
            return
        if os.path.isdir(path):
            raise UsageError(f"{option} {path}: is a directory")
        existed = os.path.exists(path)
        with open(path, "a"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot be written ({exc.strerror or exc})")


def common_usage_checks(args) -> None:
    """The usage rules every grader shares (its own come from usage_checks)."""
    for name in POSITIVE_OPTIONS:
        value = getattr(args, name, None)
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)
                                      and value > 0):
            raise UsageError(f"--{name.replace('_', '-')} must be a positive finite number, "
                             f"not {value}")
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.merge:
        if args.submissions:
            raise UsageError("--merge takes report files, not submissions")
        for path in args.merge:
            if not os.path.isfile(path):
                raise UsageError(f"--merge {path}: no such report file")
    if args.table and os.path.splitext(args.table)[1].lower() not in TABLE_FORMATS:
        raise UsageError(f"--table {args.table}: the name must end in .csv or .md")
    for name, is_dir in OUTPUT_OPTIONS:
        if getattr(args, name, None):
            check_output_path(getattr(args, name), f"--{name.replace('_', '-')}", directory=is_dir)
    if getattr(args, "plot", None) and (why := plot_usage_error(args.plot)):
        raise UsageError(why)


def progress(message: str) -> None:
    """One progress event on stderr (never stdout): a line each when stderr is not a terminal,
    one rewritten line when it is; nothing under --quiet."""
    if not _PROGRESS["on"]:
        return
    text = f"[{GRADER_NAME}{_PROGRESS['label']} {time.monotonic() - _PROGRESS['t0']:6.1f}s] {message}"
    try:
        if _PROGRESS["tty"]:
            sys.stderr.write("\r\x1b[K" + text[:200])
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def progress_count(what: str, done: int, total: int, t_start: float, extra: str = "") -> None:
    """`what done/total (extra), ETA` from the mean time per finished item."""
    spent = time.monotonic() - t_start
    eta = f", ETA {spent / done * (total - done):.0f} s" if 0 < done < total else ""
    progress(f"{what} {done}/{total}{' (' + extra + ')' if extra else ''}{eta}")


def progress_start(args, submission: str) -> None:
    _PROGRESS.update(on=not getattr(args, "quiet", False), t0=time.monotonic(),
                     label=f" {os.path.basename(os.path.normpath(submission))}",
                     tty=hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def progress_end() -> None:
    if _PROGRESS["on"] and _PROGRESS["tty"]:
        sys.stderr.write("\n")
    _PROGRESS["on"] = False


def tree_sha256(path: str) -> dict:
    """The canonical digest of a submission as graded: every regular file under `path` (symlinks
    and special files are not followed or hashed), sorted by relative POSIX path (bytewise, UTF-8),
    each as the line `<sha256 of its bytes>  <relative path>\\n`, and the sha256 of those lines;
    the same as `find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum`
    run inside the directory.  A single-file submission is its one line, named by its basename."""
    if os.path.isfile(path):
        files = [(os.path.basename(path), path)]
    else:
        files = []
        for root, dirs, names in os.walk(path, followlinks=False):
            for name in names:
                full = os.path.join(root, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    files.append((os.path.relpath(full, path).replace(os.sep, "/"), full))
    files.sort(key=lambda f: f[0].encode("utf-8", "surrogateescape"))
    outer, n_bytes = hashlib.sha256(), 0
    for rel, full in files:
        inner = hashlib.sha256()
        try:
            with open(full, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    inner.update(chunk)
                    n_bytes += len(chunk)
        except OSError:
            continue
        outer.update(f"{inner.hexdigest()}  {rel}\n".encode("utf-8", "surrogateescape"))
    return {"sha256": outer.hexdigest(), "files": len(files), "bytes": n_bytes}


def grader_sha256() -> str:
    with open(os.path.abspath(__file__), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def run_block(args, exit_code: int, started: float, wall: float) -> dict:
    """Options, exit code, start time, wall, versions, platform and the sandbox level of a run."""
    import importlib.metadata
    import platform

    def version(dist):
        loaded = getattr(sys.modules.get(dist), "__version__", None)      # (no metadata scan)
        if isinstance(loaded, str):
            return loaded
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    options = {k: v for k, v in sorted(vars(args).items()) if k not in ("submissions", "report_child")}
    level = globals().get("sandbox_level")
    return {"options": _jsonable(options), "exit_code": exit_code,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "wall_s": round(wall, 3), "python": platform.python_version(),
            "numpy": version("numpy"), "scipy": version("scipy"), "h5py": version("h5py"),
            "platform": platform.platform(),
            "sandbox": level() if callable(level) else {"available": False}}


def format_value(key: str, value, keys: dict) -> str:
    """A typed key as printed: KEY_FORMATS first, then bool -> true/false, float -> 4 decimals,
    lists joined by ', ', None -> n/a."""
    fmt = KEY_FORMATS.get(key)
    if fmt is not None:
        return fmt(value, keys)
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        columns = list(dict.fromkeys(k for row in value for k in row))
        return "\n".join([f"{len(value)} rows"] + text_table(value, columns))
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value("", v, keys) for v in value)
    return str(value)


def text_table(rows: list, columns: list, indent: str = "  ") -> list:
    """Rows (dicts) as aligned text lines, every column as wide as its widest cell."""
    cells = [[str(c) for c in columns]] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return [indent + "  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in cells]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def report_doc(report, result: str, score, args, exit_code: int, started: float, wall: float) -> dict:
    """The JSON report: typed values only (the schema is schemas/<grader>.report.schema.json)."""
    sub = report.submission
    digest = tree_sha256(sub) if os.path.exists(sub) else {"sha256": None, "files": 0, "bytes": 0}
    doc = {"grader": GRADER_NAME, "version": GRADER_VERSION, "grader_sha256": grader_sha256(),
           "submission": os.path.abspath(sub), "submission_sha256": digest["sha256"],
           "submission_files": digest["files"], "submission_bytes": digest["bytes"],
           "checks": [c.as_dict() for c in report.checks],
           "review": [c.as_dict() for c in report.checks if c.status is Status.REVIEW],
           "phases": {k: round(v, 4) for k, v in report.phases.items()},
           "keys": _jsonable(report.keys), "result": result, "score": score,
           "run": run_block(args, exit_code, started, wall)}
    doc["sandbox"] = doc["run"]["sandbox"]      # also at the top, where CONVENTIONS names it
    doc.update(_jsonable(report_extra(report)))
    return doc


def write_json(path: str, docs: list) -> None:
    """One document (indented), or one per line when there are several."""
    with open(path, "w") as fh:
        if len(docs) == 1:
            json.dump(docs[0], fh, indent=2, allow_nan=False)
            fh.write("\n")
        else:
            for doc in docs:
                fh.write(json.dumps(doc, allow_nan=False) + "\n")


def read_reports(path: str) -> list:
    """The documents of a --json file (one indented document, or one per line)."""
    try:
        with open(path) as fh:
            text = fh.read()
        try:
            docs = [json.loads(text)]
        except ValueError:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--merge {path}: not a report ({type(exc).__name__})")
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("grader") != GRADER_NAME:
            raise UsageError(f"--merge {path}: not a {GRADER_NAME} report")
    return docs


def _doc_value(doc: dict, path: str):
    value = doc
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def leaderboard(docs: list) -> list:
    """One row per report, ranked by LEADERBOARD's keys in order (None last; ties share a rank,
    then by submission name)."""
    rows = []
    for doc in docs:
        row = {"submission": os.path.basename(os.path.normpath(str(doc.get("submission")))),
               "result": doc.get("result")}
        for column, path, _ in LEADERBOARD:
            row[column] = _doc_value(doc, path)
        row["sha256"] = (doc.get("submission_sha256") or "")[:12] or None
        rows.append(row)

    def order(row):
        out = []
        for column, _, direction in LEADERBOARD:
            v = row[column]
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            out.append((0, -v if direction == "desc" else v) if ok else (1, 0))
        return out
    rows.sort(key=lambda r: (order(r), r["submission"], r["sha256"] or ""))
    for i, row in enumerate(rows):
        same = i and order(row) == order(rows[i - 1])
        row["rank"] = rows[i - 1]["rank"] if same else i + 1
    return [{"rank": r.pop("rank"), **r} for r in rows]


def leaderboard_columns() -> list:
    return ["rank", "submission", "result"] + [c for c, _, _ in LEADERBOARD] + ["sha256"]


def write_table(path: str, rows: list) -> None:
    """The leaderboard as CSV or Markdown, chosen by the file name's extension."""
    import csv
    columns = leaderboard_columns()
    with open(path, "w", newline="") as fh:
        if TABLE_FORMATS[os.path.splitext(path)[1].lower()] == "csv":
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(columns)
            for r in rows:
                writer.writerow(["" if r.get(c) is None else str(r[c]).lower() if isinstance(r[c], bool)
                                 else r[c] for c in columns])
        else:
            fh.write("| " + " | ".join(columns) + " |\n")
            fh.write("|" + "|".join("---" for _ in columns) + "|\n")
            for r in rows:
                fh.write("| " + " | ".join(_cell(r.get(c)).replace("|", "\\|") for c in columns) + " |\n")


def print_leaderboard(rows: list, stream=None) -> None:
    stream = stream or sys.stdout
    print(f"leaderboard ({len(rows)} submission{'s' if len(rows) != 1 else ''}; ranked by "
          + ", then ".join(c for c, _, _ in LEADERBOARD) + "):", file=stream)
    for line in text_table(rows, leaderboard_columns()):
        print(line, file=stream)


def kill_descendants() -> None:
    """SIGKILL every process this grader started that is still alive (found by parent pid under
    /proc; each in its own process group, which goes with it)."""
    me, parent = os.getpid(), {}
    try:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        stat = fh.read().decode("ascii", "replace")
                    parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
    except OSError:
        return
    found, frontier = set(), {me}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier and pid not in found}
        found |= frontier
    for pid in found:
        for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
            try:
                kill(pid)
            except (ProcessLookupError, PermissionError, OSError):
                pass


def grade_single(args, submission: str) -> tuple:
    """Grade one submission in this process: (exit code, the JSON document or None)."""
    started, t0 = time.time(), time.monotonic()
    progress_start(args, submission)
    try:
        report = grade_submission(args, submission)
        result, score = report_verdict(report, args)
        if getattr(args, "plot", None):
            report.checks += plot_report(args.plot, submission, result, score, report.checks,
                                         report.figures_data)
        finish_report(report, result, score, args)
    except UsageError as exc:
        progress_end()
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED, None
    except Exception as exc:
        if _INTERRUPT["at"] is None:
            return _grader_error(exc)
        return _interrupted_exit(submission)    # an import or a wait broken by the interrupt
    except KeyboardInterrupt:
        return _interrupted_exit(submission)
    progress_end()
    code = exit_code_of(report, result, score)
    print_submission_report(report, result, score, args)
    return code, report_doc(report, result, score, args, code, started, time.monotonic() - t0)


def _interrupted_exit(submission: str) -> tuple:
    progress_end()
    kill_descendants()
    print(f"{GRADER_NAME}: interrupted: {submission} not graded (results kept by --out are "
          "reused when rerun)", file=sys.stderr)
    return EXIT_INTERRUPTED, None


def _grader_error(exc) -> tuple:
    """A grader bug (called while it is handled): never reported as a score."""
    import traceback
    progress_end()
    traceback.print_exc(file=sys.stderr)
    print(f"GRADER_ERROR: {type(exc).__name__}: {exc}")
    print("RESULT: UNGRADED")
    return EXIT_GRADER, None


def grade_many(args) -> tuple:
    """Every submission in its own grader process (`--jobs` at a time), so no state, crash or
    limit of one reaches another; reports printed in the order given.  (codes, documents)"""
    import concurrent.futures
    base = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-many-")
    children = {}

    def one(i, sub):
        req = os.path.join(base, f"{i}.request.json")
        out = os.path.join(base, f"{i}.report.json")
        child = dict(vars(args), submissions=[sub], json=out, table=None, merge=None,
                     report_child=None, jobs=child_jobs(args),
                     plot=plot_subdir(args.plot, sub, i) if getattr(args, "plot", None) else None)
        with open(req, "w") as fh:
            json.dump(child, fh)
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--report-child", req],
                                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        children[i] = proc
        stdout = proc.communicate()[0].decode("utf-8", "replace")
        doc = None
        if os.path.isfile(out):
            try:
                with open(out) as fh:
                    doc = json.load(fh)
            except (OSError, ValueError):
                doc = None
        return proc.returncode, stdout, doc

    codes, docs = [], []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs or 1))
    futures = [pool.submit(one, i, sub) for i, sub in enumerate(args.submissions)]
    try:
        for sub, fut in zip(args.submissions, futures):
            code, stdout, doc = fut.result()
            print(f"=== {sub}", flush=True)
            sys.stdout.write(stdout)
            sys.stdout.flush()
            if code == -signal.SIGINT or code == EXIT_INTERRUPTED:
                raise KeyboardInterrupt
            codes.append(code)
            docs.append(doc or {"grader": GRADER_NAME, "submission": os.path.abspath(sub),
                                "result": "GRADER_ERROR", "score": None, "keys": {}})
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        for proc in list(children.values()):
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        kill_descendants()
        codes.append(EXIT_INTERRUPTED)
        print(f"{GRADER_NAME}: interrupted after {len(docs)} of {len(args.submissions)} "
              "submissions (the leaderboard below holds the finished ones)", file=sys.stderr)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(base, ignore_errors=True)
    return codes, docs


def _interrupted(signum, frame):
    """Ctrl-C (SIGINT) or SIGTERM: every child goes at once (a thread waiting on one is released),
    then KeyboardInterrupt unwinds to grade_single / grade_many: exit 130, no traceback."""
    if _INTERRUPT["at"] is None:
        _INTERRUPT["at"] = time.monotonic()
        threading.Thread(target=_reap_after_interrupt, daemon=True).start()
    kill_descendants()
    raise KeyboardInterrupt


def _reap_after_interrupt() -> None:
    """Children a worker thread starts after the interrupt (a phase that was about to begin, a
    worker restarted) go too, until this grader exits."""
    while time.monotonic() - _INTERRUPT["at"] < 60:
        time.sleep(0.2)
        kill_descendants()


_INTERRUPT = {"at": None}     # set when interrupted: results arriving after it are not kept


def run_cli(argv=None) -> int:
    """Parse, check usage, then grade one submission here or several in child graders, or merge."""
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):     # an inherited SIG_IGN (nohup, &) is kept
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, _interrupted)
    except ValueError:          # not the main thread: the default handlers stay
        pass
    try:
        return _run_cli(argv)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_cli(argv) -> int:
    for stream in (sys.stdout, sys.stderr):     # a submission's message may hold lone
        try:                                     # surrogates or text the locale cannot encode
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        args = build_parser().parse_args(argv)
        if args.report_child:
            with open(args.report_child) as fh:
                args = argparse.Namespace(**json.load(fh))
        else:
            usage_checks(args)
            common_usage_checks(args)
            done = standalone_action(args)
            if done is not None:
                return done
            if not args.submissions and not args.merge:
                raise UsageError("no submission given (see --help)")
    except UsageError as exc:
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED
    try:
        if args.merge:
            docs = [doc for path in args.merge for doc in read_reports(path)]
            codes = [EXIT_FULL]
        elif len(args.submissions) == 1:
            code, doc = grade_single(args, args.submissions[0])
            codes, docs = [code], [doc] if doc else []
        else:
            codes, docs = grade_many(args)
        if args.json and docs and not args.merge:
            write_json(args.json, docs)
        if len(docs) > 1 or args.merge:
            rows = leaderboard(docs)
            print_leaderboard(rows)
            if getattr(args, "plot", None):
                for c in write_leaderboard_figure(args.plot, [
                        {"submission": d.get("submission"), "score": d.get("score"),
                         "result": d.get("result")} for d in docs]):
                    print(format_check(c))
        if args.table:
            write_table(args.table, leaderboard(docs))
    except UsageError as exc:
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED
    except KeyboardInterrupt:
        kill_descendants()
        print(f"{GRADER_NAME}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_INTERRUPTED if EXIT_INTERRUPTED in codes else max(codes)


def main(argv=None) -> int:
    return run_cli(argv)


if __name__ == "__main__":
    sys.exit(main())
