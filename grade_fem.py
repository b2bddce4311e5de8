#!/usr/bin/env python3
"""Grader for the cubic-Hermite FEM (Euler-Bernoulli beam) benchmark.

Run:
    python grade_fem.py SUBMISSION              # full grading
    python grade_fem.py SUBMISSION --budget 900 # allow a slower solver
    python grade_fem.py SUBMISSION --strict     # anything inconclusive scores 0.0
    python grade_fem.py SUBMISSION --no-exec    # diagnostics only: RESULT: UNGRADED, exit 2

SUBMISSION is a directory holding fem_solver.py, results.json and
reference_arrays.npz (see reference/fem/problem_spec.md).

The grader trusts nothing it is given: it recomputes the exact solution and
every order of convergence from the submitted arrays, checks results.json
against the arrays, re-runs fem_solver.solve(n) for all seven meshes in an
isolated, instrumented subprocess (observing the library linear solve and
tampering with its output to prove it feeds the field), and compares every
returned field pointwise with its own 5-point-Gauss cubic-Hermite solution.

Score: 1.0 = Tier 1, 2 and 3 pass; 0.5 = Tier 1, 2 and provenance pass but
Tier 3 is missing or fails; 0.0 = anything else.  REVIEW_REQUIRED lines mark
what automation cannot decide; --strict scores them 0.0.  Exit codes: 0 full
score, 1 graded below full score, 2 UNGRADED or usage error, 3 grader failure.

Self-contained: needs only the standard library, numpy and scipy.
"""
from __future__ import annotations

import argparse
import ast
import base64
import dataclasses
import enum
import hashlib
import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The grader's own numerics on one BLAS thread (set before numpy is first imported): its
# results do not depend on the machine's core count, and idle OpenBLAS workers, which spin,
# do not take the core the isolated child needs (measured on the FEM gold: 0.15 s of CPU).
os.environ.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})

GRADER_NAME = "grade_fem"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

# =============================================================================
# SPEC: every threshold, tolerance, mesh and file name (seed line in comments)
# =============================================================================
SPEC = {
    # -- run / sandbox --------------------------------------------------------
    "budget_s": 600.0,          # seed: "--budget, default 600 s per phase"
    "max_json_bytes": 1 << 20,  # guarded input size caps (not in seed)
    "max_npz_bytes": 64 << 20,
    "max_npz_elements": 1 << 22,  # decompressed size cap (the nine arrays hold 10,279 elements)
    "max_source_bytes": 1 << 20,
    # -- files ----------------------------------------------------------------
    "solver_file": "fem_solver.py",     # seed: "fem_solver.py present ... exposing solve(n)"
    "json_file": "results.json",        # seed: "Sidecar consistency -- results.json"
    "npz_file": "reference_arrays.npz",  # seed: "does not trust reference_arrays.npz either"
    # -- the problem (specs/fem.md "The problem") -------------------------------
    "meshes": (32, 64, 128, 256, 512, 1024, 2048),  # seed: "n_values exactly 2^p, p = 5..11"
    "artifact_n": 256,          # seed: "Tier 3 (the n = 256 artifact)"
    "artifact_points": 2561,    # seed: "(7,) / (2561,)"; x_i = i/2560
    "dense_factor": 10,         # seed: "the prescribed grids j/n and i/(10n)"
    "grader_gauss_points": 5,   # seed: "its own cubic-Hermite implementation (5-point Gauss)"
    # -- Tier 1 (seed: "dense error e*_n at n = 32, 64, 128 within +-25 %") ------
    "tier1_gold": {32: 5.402330e-07, 64: 3.459441e-08, 128: 2.188513e-09},
    "tier1_band": 0.25,         # seed: "within +-25 % of the gold reference"
    "order_band": (3.8, 4.2),   # seed: "the two coarse dense orders in [3.8, 4.2]"
    # -- Tier 2 ----------------------------------------------------------------
    "clean_orders_needed": 2,   # seed: "at least two of the three clean-regime dense orders (n = 32 -> 256)"
    "nodal_abs_max": 1e-8,      # seed: "e_n(32) < 1e-8"
    "nodal_ratio": 100.0,       # seed: "and < e*_n(32)/100"
    "roundoff_factor": 10.0,    # seed: "e*_n(2048) > 10 * e*_n(256)"
    # -- Tier 3 (the n = 256 artifact) -------------------------------------------
    "grid_atol": 1e-15,         # seed: "equal to i/2560 to 1e-15 absolute"; also the j/n, i/(10n) grids
    "uexact_atol": 1e-14,       # seed: "uexact_dense equal to the analytic e^x x^2(1-x)^2" (decision: a few ulp of 0.1)
    "error_field_atol": 1e-15,  # seed: "error_dense == uh_dense - uexact_dense" (decision: 1e-15 abs)
    "artifact_max_error": 1e-9,  # seed: "max-norm error recomputed from uh_dense below 1e-9"
    "artifact_rel": 1e-6,       # seed: "that recomputed max-norm error equal to dense_errors[3]" (decision: 1e-6 rel)
    # -- artifact provenance (seed: "Known limits ... Pointwise artifact reproduction")
    "artifact_tier3_atol": 1e-11,  # seed: "Any deviation above 1e-11 ... Tier 3 fails (0.5)"
    "artifact_fail_atol": 1e-9,    # seed: "above ... (1e-9) the run fails outright (0.0)"
    # -- array schema / sidecar ---------------------------------------------------
    "eoc_atol": 1e-6,           # seed: "both tails recomputed from the submitted errors" (decision: 1e-6 abs)
    "json_error_rel": 1e-6,     # seed: "nodal_study.table and dense_study.table ... against the arrays" (decision)
    "json_beta_atol": 1e-4,     # seed: "every beta recomputed" (decision: 1e-4 abs, allows 4-decimal rounding)
    "h_rel": 1e-12,             # seed: "h == 1/n"
    "lsq_order_tol": 0.25,      # seed: "least-squares fit over n = 32...256, tolerance 0.25"
    "asymptotic_order": 4,      # seed: "asymptotic_order == 4"
    "dofs_per_node": ["value", "slope"],  # seed: 'dofs_per_node == ["value", "slope"]'
    # -- provenance -------------------------------------------------------------
    "regen_rel": 1e-6,          # seed: "regenerating both error measures to within 1e-6 relative"
    # ... with an absolute floor: the errors are differences from u(x) evaluated in floating
    # point, and an exact solution written in another (exact) order of operations moves an
    # error by its own round-off, which is no tiny fraction of an error that is itself
    # round-off (e_n from n = 64).  Floor = regen_abs_floor_eps * eps * max|u| (1.5e-15): over
    # ten spellings of u on every mesh's nodes and dense points (reference/fem/
    # exact_order_spread.py) the largest change was 1.2-2.9 eps max|u| for factored forms
    # (np.e**x, exp(x/2)**2, math.exp among them: they move the gold's e_n(32) by 3.1e-6
    # relative, e_n(128) by 1.4e-6, beyond the seed's 1e-6) and
    # 23 for the expanded polynomial e^x (x^2 - 2x^3 + x^4) (cancellation; Horner 19): 2.8x
    # headroom above the worst, 22x above the factored forms; 2.5 % of e_n(64) = 6e-14.  Tiers are re-evaluated on the regenerated errors, so a
    # difference this small buys a fabricated table nothing.
    "regen_abs_floor_eps": 64.0,
    # Decision (problem_spec.md, "Reproduction"): a submitted error off by more than 1e-6 relative
    # but by at most 4e-9 * (n/256)^4 absolute (linear-solve round-off, growing like n^4; the same
    # code under 1/2/4 BLAS threads and 4 CPU kernels moved its errors 6.4x less than this at worst)
    # is REVIEW_REQUIRED (environment mismatch), beyond it FAIL.
    "regen_env_band_256": 4e-9,
    # seed: "compares the returned dense field pointwise at every mesh n = 32 ... 2048 to 1e-9".
    # Clean regime (n <= 256): 1e-9 flat.  Round-off regime (n >= 512): legitimate
    # solvers disagree (specs/fem.md); the tolerance is 1e-9 * (n/256)^4, the n^4
    # growth of the fourth-order operator's condition number, continuous with the
    # 1e-9 at n = 256.  Derivation (reference/fem/problem_spec.md, "Pointwise
    # tolerance"): the largest deviation of 16 legitimate solver/ordering variants
    # x 3 load quadratures from this grader's banded-LU 5-point solution, divided
    # by (n/256)^4, is 9.6e-11 (256), 2.4e-10 (512), 1.8e-10 (1024), 1.1e-10
    # (2048): headroom >= 4x at every mesh.  Wrong fields sit at method level
    # (slope-dropped: 7e-5 at n = 512 against a 1.6e-8 tolerance).
    "fidelity_atol": 1e-9,
    "fidelity_clean_max_n": 256,
    "fidelity_growth": 4,
    # -- provenance: the stiffness solve, its map and the reconstruction ---------------
    # seed: "observes a library linear solve of dimension 2(n-1), exactly the free value/slope
    # DOF count".  Decision (problem_spec.md, "What the audit proves"): the solve's matrix must be
    # the statement's K under a DOF permutation P, a symmetric diagonal scaling D and a common
    # factor: normalised by its diagonal, its off-diagonal entries are K's (+-1/2, +-1/4,
    # +-sqrt(3)/4) to this absolute tolerance, entries below it count as zero.  Honest
    # assemblies (also equilibrated, scaled slopes) sit at ~1e-16.
    "stiffness_entry_tol": 1e-9,
    # Its right-hand side must be the load vector under the same map, to a relative tolerance
    # rhs_rel_32 * (32/n)^rhs_rel_power (max norm in the statement's unknowns, over max |F|).
    # Measured against the grader's 5-point load at n = 32: 3-point Gauss 1.8e-9 (falling like
    # h^4), 4-point 1.8e-14; 2-point 3.4e-5 and midpoint 1.8e-4 (falling like h^2).  2.5e-7
    # (32/n)^3 is 137x above the 3-point load and 137x below the 2-point one at n = 32, and
    # wider apart at every finer mesh (>= 540x both ways from n = 256).
    "rhs_rel_32": 2.5e-7,
    "rhs_rel_power": 3,
    # The scale of the unknowns is read from that right-hand side, so the reconstruction allows
    # a common factor within lam_factor * rhs tolerance of 1 (measured 2.3x at n = 32).
    "lam_factor": 10.0,
    # The field must be the cubic-Hermite reconstruction of a 0/1 combination of the observed
    # stiffness-solve outputs to reconstruction_rel of its scale (max |field|, at least
    # reconstruction_floor).  Measured over 19 honest solver variants: at most 0.078 of the
    # tolerance (8.3e-17 at a scale of 0.106; 13x inside); the closest cheat (the exact
    # interpolant beside a real solve) is off by >= 1.8e-14 (n = 64, against a 5-point solve;
    # 4.3e-14 against the 3-point gold; 4.5e-12 at n = 32): 17x outside.
    "reconstruction_rel": 1e-14,
    "reconstruction_floor": 1e-2,
    # and its unknowns must solve K u = F: max |K u - F| (extended precision) <= the load
    # tolerance * max |F| + residual_roundoff * eps * max(|K| |u|) (a backward-stable solve;
    # the 19 honest variants reach at most 0.058 of it, 17x inside; fake n^4 round-off noise
    # on an interpolant exceeds it by > 1e6).
    "residual_roundoff": 16.0,
    "fit_enumerate_max": 8,     # up to 8 candidate outputs: every 0/1 combination is tried
    "max_candidates": 16,       # solve-output columns considered per call
    "max_calls": 64,            # library calls recorded per call of solve(n)
    # seed: "reruns n = 32 after replacing the results ... with non-finite values".  Decision:
    # every mesh has clean_runs clean calls and one audited call whose stiffness-solve outputs
    # are replaced by the grader's random vectors (z (1 + U(-1/2, 1/2)) + audit_additive max|z|
    # N(0, 1), per entry; drawn after the child showed z); at audit_nan_meshes another with NaN
    # at audit_nan_entries chosen entries.  Each call is a fresh fork, in a shuffled order.
    # One clean call is enough: the audited call is the second regeneration (determinism is
    # judged on what its solve returned before the substitute; see check_deterministic).
    "clean_runs": 1,
    # Jobs forked at once by the run's one warm parent (one numpy/scipy import, both cores busy;
    # each job its own child, process group and user namespace, its asks answered by job id).
    "job_concurrency": 2,
    "audit_additive": 0.05,
    "audit_nan_meshes": (32,),
    "audit_nan_entries": 2,
    # seed: "solve(n) must be deterministic".  Two calls of a mesh compute the same field
    # pointwise up to the grader's first substitute: bitwise is expected (same code and inputs,
    # BLAS pinned to one thread); this is the tolerance (the reconstruction round-off, far below
    # any jitter that matters).  After the substitute each field is held to its own solve
    # outputs by the reconstruction tolerance (1.1e-15 absolute here), so jitter added after
    # the solve fails there, jitter before or in it fails here.
    "determinism_atol": 1e-15,
    # An explicit inverse Z = inv(K) is substituted by Z + u v^T: the field must move by
    # exactly beta = v^T b / gamma times the reconstruction of u (beta predicted from the load
    # vector within lam_tol), to this fraction of its scale.  Measured (numpy.linalg.inv, every
    # mesh): at most 1.1e-15 relative, 93x inside; a field that does not follow is off by O(1).
    "inverse_audit_rel": 1e-13,
    # grader self-check: its own 5-point solution must reproduce the method error
    "self_check_rel": 1e-3,     # specs/fem.md: e*(32) = 5.402333e-07 measured independently
    # -- subprocess runner (the same names in every grader; read at call time) ----
    "runner_mem_bytes": 16 << 30,          # child address-space limit: BLAS threads reserve address space per thread, so this is generous
    "runner_fsize_bytes": 256 << 20,  # largest file the child may write: a runaway writer cannot fill the disk
    "runner_cpu_slack_s": 30,         # RLIMIT_CPU = wall budget + this: a spinning child dies even unwatched
    "runner_term_grace_s": 2.0,       # SIGTERM -> SIGKILL: time to exit cleanly once the run is over
    "runner_output_cap_bytes": 64 << 10,   # stdout/stderr kept per stream: enough to show a traceback
    "runner_reply_cap_bytes": 256 << 20,   # reply channel: the largest honest study is ~10 MB of base64
    "runner_copy_cap_bytes": 512 << 20,      # private submission copy: a solver file and its folder; far above any honest submission
}


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
        raise Reject(check_id, f"{os.path.basename(path)} cannot be decoded ({type(exc).__name__}: "
                     "nested too deeply or too large)")
    except OSError as exc:
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {exc}")


def load_npz_file(path: str, check_id: str, max_bytes: int) -> dict:
    """Load every array of an .npz without pickles; raise Reject on anything odd."""
    import numpy as np
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            total = 0
            for key in data.files:      # headers first: a small file can claim a huge array
                with data.zip.open(key + ".npy") as fp:
                    version = np.lib.format.read_magic(fp)
                    shape = (np.lib.format.read_array_header_1_0 if version == (1, 0) else
                             np.lib.format.read_array_header_2_0)(fp)[0]
                total += math.prod(shape)
                if total > SPEC["max_npz_elements"]:
                    raise Reject(check_id, f"{os.path.basename(path)} declares more than "
                                           f"{SPEC['max_npz_elements']} array elements", total,
                                 SPEC["max_npz_elements"])
            for key in data.files:
                arrays[key] = data[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise Reject(check_id, f"{os.path.basename(path)} holds a pickled (object) array; "
                                   "pickles are refused")
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {str(exc)[:120]}")
    except Reject:
        raise
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, KeyError, ...
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: "
                               f"{type(exc).__name__}: {str(exc)[:120]}")
    return arrays


def get_path(obj, keys: tuple, check_id: str):
    """obj[k0][k1]... with a Reject naming the missing key path."""
    cur = obj
    for i, key in enumerate(keys):
        ok = (isinstance(cur, dict) and isinstance(key, str) and key in cur) or \
             (isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur))
        if not ok:
            where = ".".join(str(k) for k in keys[: i + 1])
            raise Reject(check_id, f"results.json: {where} missing or of the wrong type")
        cur = cur[key]
    return cur


def get_number(obj, keys: tuple, check_id: str, *, integer: bool = False) -> float:
    """A finite real number (bool, string, null, NaN and inf are refused)."""
    value = get_path(obj, keys, check_id)
    where = ".".join(str(k) for k in keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Reject(check_id, f"results.json: {where} must be a number, got {type(value).__name__}")
    try:
        finite = math.isfinite(value)
    except OverflowError:               # an integer beyond the float range
        raise Reject(check_id, f"results.json: {where} is out of range")
    if not finite:
        raise Reject(check_id, f"results.json: {where} is not finite ({value!r})")
    if integer and value != int(value):
        raise Reject(check_id, f"results.json: {where} must be an integer, got {value!r}")
    return int(value) if integer else float(value)


def get_array(arrays: dict, name: str, shape: tuple, check_id: str):
    """A float64 copy of a real numeric array of exactly `shape`."""
    import numpy as np
    if name not in arrays:
        raise Reject(check_id, f"array {name} missing")
    arr = arrays[name]
    if arr.dtype.kind not in "iuf":
        raise Reject(check_id, f"array {name} has dtype {arr.dtype}, expected a real number type")
    if arr.shape != shape:
        raise Reject(check_id, f"array {name} has shape {arr.shape}, expected {shape}",
                     list(arr.shape), list(shape))
    return np.asarray(arr, dtype=np.float64)


# =============================================================================
# STATIC CHECKS (import allowlist)
# =============================================================================
ALLOWED_THIRD_PARTY = ("numpy", "scipy")


def import_audit(tree, check_prefix: str) -> list:
    """AST pass (over a tree, or source text parsed with parse_python): every import
    outside stdlib + numpy + scipy fails; importlib / __import__ / exec / eval are
    flagged for review (the allowlist is static)."""
    if isinstance(tree, str):
        try:
            tree = parse_python(tree, SPEC["solver_file"], f"{check_prefix}.syntax")
        except Reject as exc:
            return [exc.check]
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic = [], []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:      # relative import inside the submission's own package
                continue
            names = [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top in ("importlib",):
                dynamic.append(f"import {name} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call):
            fname = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if fname in ("__import__", "import_module", "exec", "eval", "compile"):
                dynamic.append(f"{fname}() (line {node.lineno})")
    out = []
    if bad:
        out.append(Check(f"{check_prefix}.imports", Status.FAIL,
                         "disallowed import(s): " + ", ".join(bad), bad, "stdlib + numpy + scipy"))
    else:
        out.append(Check(f"{check_prefix}.imports", Status.PASS, "imports within stdlib + numpy + scipy"))
    if dynamic:
        out.append(Check(f"{check_prefix}.dynamic_import", Status.REVIEW,
                         "dynamic import/exec the static allowlist cannot see: " + ", ".join(dynamic),
                         dynamic))
    return out


# =============================================================================
# THE PROBLEM: exact solution and the grader's own cubic-Hermite solution
# =============================================================================
class GraderError(Exception):
    """The grader could not compute its own reference: exit 3, never a score."""


def exact_u(x):
    """u(x) = e^x x^2 (1 - x)^2, the manufactured solution."""
    import numpy as np
    return np.exp(x) * x**2 * (1 - x)**2


def load_f(x):
    """f = u'''' = e^x (x^4 + 14x^3 + 49x^2 + 32x - 12)."""
    import numpy as np
    return np.exp(x) * (x**4 + 14 * x**3 + 49 * x**2 + 32 * x - 12)


def hermite_shapes(t, h):
    """N1..N4 on the reference element t in [0, 1] (slope functions scaled by h)."""
    import numpy as np
    return np.stack([1 - 3 * t**2 + 2 * t**3, h * (t - 2 * t**2 + t**3),
                     3 * t**2 - 2 * t**3, h * (t**3 - t**2)], axis=-1)


def hermite_field(coef, n: int, x=None):
    """The field at x (default: the prescribed dense grid, whose elements and shape values
    are computed once per mesh) from global (value, slope) unknowns, all four local DOFs."""
    import numpy as np
    k, N = _dense_basis(n) if x is None else _basis(n, x)
    local = np.stack([coef[2 * k], coef[2 * k + 1], coef[2 * k + 2], coef[2 * k + 3]], axis=-1)
    return np.sum(N * local, axis=-1)


def _basis(n: int, x) -> tuple:
    """(element index, the four shape values) of each point x."""
    import numpy as np
    k = np.minimum(np.floor(x * n).astype(np.int64), n - 1)
    return k, hermite_shapes(x * n - k, 1.0 / n)


_DENSE_BASES: dict = {}


def _dense_basis(n: int) -> tuple:
    if n not in _DENSE_BASES:
        _DENSE_BASES[n] = _basis(n, prescribed_grids(n)[1])
    return _DENSE_BASES[n]


def mesh_text() -> str:
    """The mesh sequence as text, e.g. "32..2048 (2^5..2^11)"."""
    ns = SPEC["meshes"]
    return f"{ns[0]}..{ns[-1]} (2^{ns[0].bit_length() - 1}..2^{ns[-1].bit_length() - 1})"


def prescribed_grids(n: int) -> tuple:
    """x_j = j/n and x_i = i/(10n)."""
    import numpy as np
    m = SPEC["dense_factor"] * n
    return np.arange(n + 1) / n, np.arange(m + 1) / m


def reference_solution(n: int, gauss: int = SPEC["grader_gauss_points"]):
    """The grader's own C1 cubic-Hermite Ritz solution: interleaved (value, slope)
    unknowns, element stiffness EI/h^3 [..], `gauss`-point Gauss-Legendre load,
    clamped ends removed, banded LU (half-bandwidth 3).  Returns (nodes, dense)."""
    import numpy as np
    from scipy.linalg import solve_banded
    h = 1.0 / n
    ndof = 2 * (n + 1)
    ke = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                   [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    tq, wq = np.polynomial.legendre.leggauss(gauss)
    tq, wq = (tq + 1) / 2, wq / 2
    elems = np.arange(n)
    fe = h * (load_f((elems[:, None] + tq[None, :]) * h) * wq) @ hermite_shapes(tq, h)  # (n, 4)
    rhs = np.zeros(ndof)
    ab = np.zeros((7, ndof))                      # banded storage, l = u = 3
    for a in range(4):
        np.add.at(rhs, 2 * elems + a, fe[:, a])
        for b in range(4):                        # column 2k+b is distinct over k
            ab[3 + a - b, 2 * elems + b] += ke[a, b]
    coef = np.zeros(ndof)
    coef[2:-2] = solve_banded((3, 3), ab[:, 2:-2], rhs[2:-2])
    return coef[0::2].copy(), hermite_field(coef, n)


def reference_study() -> dict:
    """{n: (uh_nodes, uh_dense)} for every mesh, with a self-check of the method error."""
    import numpy as np
    ref = {n: reference_solution(n) for n in SPEC["meshes"]}
    n0 = SPEC["meshes"][0]
    e0 = float(np.max(np.abs(ref[n0][1] - exact_u(prescribed_grids(n0)[1]))))
    gold = SPEC["tier1_gold"][n0]
    if not abs(e0 - gold) <= SPEC["self_check_rel"] * gold:
        raise GraderError(f"own 5-point solution gives e*({n0}) = {e0:.6e}, expected {gold:.6e}")
    return ref


def fidelity_tol(n: int) -> float:
    """Pointwise tolerance against the grader's own solution (see SPEC)."""
    if n <= SPEC["fidelity_clean_max_n"]:
        return SPEC["fidelity_atol"]
    return SPEC["fidelity_atol"] * (n / SPEC["fidelity_clean_max_n"]) ** SPEC["fidelity_growth"]


def regen_floor() -> float:
    """The absolute floor of the reproduction rule: regen_abs_floor_eps * eps * max|u|."""
    import numpy as np
    xi = np.arange(SPEC["dense_factor"] * 256 + 1) / (SPEC["dense_factor"] * 256)
    return SPEC["regen_abs_floor_eps"] * float(np.finfo(float).eps) * float(np.max(np.abs(exact_u(xi))))


def env_band(n: int) -> float:
    """How far the same code's error at mesh n may move with the BLAS environment (see SPEC)."""
    return SPEC["regen_env_band_256"] * (n / SPEC["fidelity_clean_max_n"]) ** SPEC["fidelity_growth"]


def orders(errors) -> list:
    """beta_k = log2(e_{k-1} / e_k), k = 1.. (uniform refinement by 2), for positive
    errors; as a difference of logs, so that no ratio under- or overflows."""
    return [math.log2(errors[k - 1]) - math.log2(errors[k]) for k in range(1, len(errors))]


def lsq_order(ns, errors) -> float:
    """Least-squares slope of -log(e) against log(n)."""
    import numpy as np
    slope = np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(errors, float)), 1)[0]
    return float(-slope)


def worst(diff) -> tuple:
    """(index, value) of the largest |diff|."""
    import numpy as np
    i = int(np.argmax(np.abs(diff)))
    return i, float(abs(diff[i]))


def nonfinite_where(arr) -> str:
    import numpy as np
    bad = np.flatnonzero(~np.isfinite(arr))
    return f"{bad.size} non-finite value(s), first at index {int(bad[0])}" if bad.size else ""


# =============================================================================
# FILES PRESENT
# =============================================================================
def check_files(sub: str) -> list:
    out = []
    for key in ("solver_file", "json_file", "npz_file"):
        name = SPEC[key]
        p = os.path.join(sub, name)
        ok = os.path.isfile(p) and not os.path.islink(p)
        out.append(Check(f"files.{name}", Status.PASS if ok else Status.FAIL,
                         "present" if ok else "missing (or not a regular file)"))
    return out


# =============================================================================
# 1. ARRAY SCHEMA
# =============================================================================
ARTIFACT_ARRAYS = ("x_dense", "uh_dense", "uexact_dense", "error_dense")
STUDY_ARRAYS = ("n_values", "nodal_errors", "dense_errors", "nodal_eoc", "dense_eoc")


@guarded
def check_schema(raw: dict, parsed: dict) -> list:
    """Shapes, dtypes, finiteness, the mesh sequence, positivity, the EOC tails.
    Fills `parsed` with float64 arrays on success."""
    import numpy as np
    out = []
    n7 = (len(SPEC["meshes"]),)
    arrs = {name: get_array(raw, name, n7, "schema.arrays") for name in STUDY_ARRAYS}
    present = [a for a in ARTIFACT_ARRAYS if a in raw]
    if present and len(present) < len(ARTIFACT_ARRAYS):
        missing = [a for a in ARTIFACT_ARRAYS if a not in raw]
        raise Reject("schema.arrays", "artifact arrays partly missing: " + ", ".join(missing))
    for name in present:
        arrs[name] = get_array(raw, name, (SPEC["artifact_points"],), "schema.arrays")
    extra = sorted(set(raw) - set(STUDY_ARRAYS) - set(ARTIFACT_ARRAYS))
    out.append(Check("schema.arrays", Status.PASS,
                     f"{len(arrs)} arrays with shapes {n7} / ({SPEC['artifact_points']},)"
                     + (f"; extra arrays ignored: {', '.join(extra)}" if extra else "")))
    for name in ("n_values", "nodal_errors", "dense_errors") + tuple(present):
        where = nonfinite_where(arrs[name])
        if where:
            raise Reject("schema.finite", f"{name}: {where}")
    for name in ("nodal_eoc", "dense_eoc"):
        where = nonfinite_where(arrs[name][1:])
        if where:
            raise Reject("schema.finite", f"{name}[1:]: {where}")
    out.append(Check("schema.finite", Status.PASS, "all values finite (EOC heads excepted)"))
    want = np.array(SPEC["meshes"], float)
    if not np.array_equal(arrs["n_values"], want):
        raise Reject("schema.n_values", f"n_values = {arrs['n_values'].tolist()}, expected {mesh_text()}",
                     arrs["n_values"], list(SPEC["meshes"]))
    out.append(Check("schema.n_values", Status.PASS, f"n = {mesh_text()}"))
    for name in ("nodal_errors", "dense_errors"):
        if not np.all(arrs[name] > 0):
            i = int(np.argmin(arrs[name]))
            raise Reject("schema.errors_positive", f"{name}[{i}] = {arrs[name][i]!r} is not > 0")
    out.append(Check("schema.errors_positive", Status.PASS, "errors strictly positive"))
    for eoc, err in (("nodal_eoc", "nodal_errors"), ("dense_eoc", "dense_errors")):
        if not np.isnan(arrs[eoc][0]):
            raise Reject("schema.eoc", f"{eoc}[0] = {arrs[eoc][0]!r}, must be NaN")
        diff = arrs[eoc][1:] - np.array(orders(arrs[err]))
        i, d = worst(diff)
        if d > SPEC["eoc_atol"]:
            raise Reject("schema.eoc", f"{eoc}[{i + 1}] = {arrs[eoc][i + 1]:.6f}, recomputed from "
                         f"{err}: {arrs[eoc][i + 1] - diff[i]:.6f}", d, SPEC["eoc_atol"])
    out.append(Check("schema.eoc", Status.PASS, "nodal_eoc/dense_eoc: NaN head, tails recomputed"))
    parsed.update(arrs)
    return out


# =============================================================================
# 2. SIDECAR CONSISTENCY (results.json)
# =============================================================================
@guarded
def check_sidecar(doc, arrs: dict) -> list:
    """results.json against the (schema-checked) arrays."""
    out = []
    if not isinstance(doc, dict):
        raise Reject("sidecar.document", "results.json must hold a JSON object")
    text = get_path(doc, ("exact_solution",), "sidecar.fields")
    if not isinstance(text, str) or not text.strip():
        raise Reject("sidecar.fields", "exact_solution must be a non-empty string")
    if get_path(doc, ("dofs_per_node",), "sidecar.fields") != SPEC["dofs_per_node"]:
        raise Reject("sidecar.fields", f"dofs_per_node must be {SPEC['dofs_per_node']}")
    if get_number(doc, ("asymptotic_order",), "sidecar.fields") != SPEC["asymptotic_order"]:
        raise Reject("sidecar.fields", f"asymptotic_order must be {SPEC['asymptotic_order']}")
    out.append(Check("sidecar.fields", Status.PASS, f"exact_solution, dofs_per_node == "
                     f"{json.dumps(SPEC['dofs_per_node'])}, asymptotic_order == {SPEC['asymptotic_order']}"))
    ns = SPEC["meshes"]
    for study, key, arr in (("nodal_study", "e_n", "nodal_errors"),
                            ("dense_study", "e_star_n", "dense_errors")):
        cid = f"sidecar.{study}"
        table = get_path(doc, (study, "table"), cid)
        if not isinstance(table, list) or len(table) != len(ns):
            raise Reject(cid, f"{study}.table must be a list of {len(ns)} rows")
        errs = arrs[arr]
        betas = orders(errs)
        for k, n in enumerate(ns):
            if get_number(table, (k, "n"), cid, integer=True) != n:
                raise Reject(cid, f"{study}.table[{k}].n != {n}")
            h = get_number(table, (k, "h"), cid)
            if abs(h - 1.0 / n) > SPEC["h_rel"] / n:
                raise Reject(cid, f"{study}.table[{k}].h = {h!r}, expected 1/{n}", h, 1.0 / n)
            e = get_number(table, (k, key), cid)
            if abs(e - errs[k]) > SPEC["json_error_rel"] * errs[k]:
                raise Reject(cid, f"{study}.table[{k}].{key} = {e:.6e}, {arr}[{k}] = {errs[k]:.6e}",
                             e, float(errs[k]))
            beta = get_path(table, (k, "beta"), cid)
            if k == 0:
                if beta is not None:
                    raise Reject(cid, f"{study}.table[0].beta must be null, got {beta!r}")
                continue
            beta = get_number(table, (k, "beta"), cid)
            if abs(beta - betas[k - 1]) > SPEC["json_beta_atol"]:
                raise Reject(cid, f"{study}.table[{k}].beta = {beta:.6f}, recomputed "
                             f"{betas[k - 1]:.6f}", beta, betas[k - 1])
        out.append(Check(cid, Status.PASS, f"{study}.table: n, h = 1/n, {key}, beta all consistent"))
    claimed = get_number(doc, ("dense_study", "observed_order_clean_regime"), "sidecar.observed_order")
    clean = [k for k, n in enumerate(ns) if n <= SPEC["artifact_n"]]
    fit = lsq_order([ns[k] for k in clean], [arrs["dense_errors"][k] for k in clean])
    if abs(claimed - fit) > SPEC["lsq_order_tol"]:
        raise Reject("sidecar.observed_order", f"observed_order_clean_regime = {claimed:.4f}, "
                     f"least-squares fit over n = {ns[0]}..{SPEC['artifact_n']}: {fit:.4f}", claimed, fit)
    out.append(Check("sidecar.observed_order", Status.PASS,
                     f"observed_order_clean_regime = {claimed:.4f}, fit {fit:.4f} (tol {SPEC['lsq_order_tol']:g})",
                     abs(claimed - fit), SPEC["lsq_order_tol"]))
    has_arrays = all(a in arrs for a in ARTIFACT_ARRAYS)
    if "artifact" not in doc and not has_arrays:
        out.append(Check("sidecar.artifact", Status.SKIP, "no artifact block and no artifact arrays "
                         "(Tier 3 missing)"))
        return out
    cid = "sidecar.artifact"
    if get_number(doc, ("artifact", "n"), cid, integer=True) != SPEC["artifact_n"]:
        raise Reject(cid, f"artifact.n must be {SPEC['artifact_n']}")
    if get_number(doc, ("artifact", "points"), cid, integer=True) != SPEC["artifact_points"]:
        raise Reject(cid, f"artifact.points must be {SPEC['artifact_points']}")
    dme = get_number(doc, ("artifact", "dense_max_error"), cid)
    k = ns.index(SPEC["artifact_n"])
    ref = float(arrs["dense_errors"][k])
    if abs(dme - ref) > SPEC["json_error_rel"] * ref:
        raise Reject(cid, f"artifact.dense_max_error = {dme:.6e}, dense_errors[{k}] = {ref:.6e}",
                     dme, ref)
    out.append(Check(cid, Status.PASS, f"artifact block: n = {SPEC['artifact_n']}, "
                     f"{SPEC['artifact_points']} points, dense_max_error == dense_errors[{k}]"))
    return out


# =============================================================================
# 3. NUMERICAL TIERS (recomputed from the arrays, never read from claims)
# =============================================================================
def check_tier1(arrs: dict) -> list:
    e = dict(zip(SPEC["meshes"], arrs["dense_errors"].tolist()))
    out = []
    bad = []
    pct = 100 * SPEC["tier1_band"]
    for n, gold in SPEC["tier1_gold"].items():
        if abs(e[n] - gold) > SPEC["tier1_band"] * gold:
            bad.append(f"e*({n}) = {e[n]:.3e} (band {gold:.6e} +-{pct:g}%)")
    msg = ", ".join(f"e*({n}) = {e[n]:.4e}" for n in SPEC["tier1_gold"])
    out.append(Check("tier1.dense_band", Status.FAIL if bad else Status.PASS,
                     "; ".join(bad) if bad else msg + f" within +-{pct:g}% of gold",
                     [e[n] for n in SPEC["tier1_gold"]],
                     [[g * (1 - SPEC["tier1_band"]), g * (1 + SPEC["tier1_band"])]
                      for g in SPEC["tier1_gold"].values()]))
    beta = orders(arrs["dense_errors"])[:2]
    lo, hi = SPEC["order_band"]
    ok = all(lo <= b <= hi for b in beta)
    out.append(Check("tier1.coarse_orders", Status.PASS if ok else Status.FAIL,
                     f"dense orders 32->64->128: {beta[0]:.3f}, {beta[1]:.3f} (need [{lo}, {hi}])",
                     beta, [lo, hi]))
    return out


def check_tier2(arrs: dict) -> list:
    out = []
    ns = list(SPEC["meshes"])
    e = arrs["dense_errors"].tolist()
    en = arrs["nodal_errors"].tolist()
    n0 = ns[0]
    beta = orders(e)[:ns.index(SPEC["artifact_n"])]      # 32->64, 64->128, 128->256
    lo, hi = SPEC["order_band"]
    good = sum(lo <= b <= hi for b in beta)
    need = SPEC["clean_orders_needed"]
    out.append(Check("tier2.order4", Status.PASS if good >= need else Status.FAIL,
                     f"clean dense orders {', '.join(f'{b:.3f}' for b in beta)}: {good} of {len(beta)} in "
                     f"[{lo}, {hi}] (need {need})", beta, [lo, hi]))
    cap = min(SPEC["nodal_abs_max"], e[0] / SPEC["nodal_ratio"])
    ok = en[0] < SPEC["nodal_abs_max"] and en[0] < e[0] / SPEC["nodal_ratio"]
    out.append(Check("tier2.nodal_superconvergence", Status.PASS if ok else Status.FAIL,
                     f"e_n({n0}) = {en[0]:.3e}, need < {SPEC['nodal_abs_max']:g} and < e*({n0})/"
                     f"{SPEC['nodal_ratio']:g} = {e[0] / SPEC['nodal_ratio']:.3e}",
                     en[0], cap))
    i256, i2048 = ns.index(SPEC["artifact_n"]), len(ns) - 1
    ok = e[i2048] > SPEC["roundoff_factor"] * e[i256]
    out.append(Check("tier2.roundoff_floor", Status.PASS if ok else Status.FAIL,
                     f"e*({ns[-1]}) = {e[i2048]:.3e}, need > {SPEC['roundoff_factor']:g} e*({SPEC['artifact_n']})"
                     f" = {SPEC['roundoff_factor'] * e[i256]:.3e}", e[i2048], SPEC["roundoff_factor"] * e[i256]))
    return out


def check_tier3(arrs: dict) -> list:
    """The artifact (n = SPEC["artifact_n"]), from the arrays alone."""
    import numpy as np
    if not all(a in arrs for a in ARTIFACT_ARRAYS):
        return [Check("tier3.artifact", Status.FAIL, "artifact arrays absent (Tier 3 missing)")]
    out = []
    x, uh, ue, err = (arrs[a] for a in ARTIFACT_ARRAYS)
    m = SPEC["artifact_points"] - 1
    ok_inc = bool(np.all(np.diff(x) > 0))
    ok_ends = x[0] == 0.0 and x[-1] == 1.0
    i, d = worst(x - np.arange(m + 1) / m)
    ok = ok_inc and ok_ends and d <= SPEC["grid_atol"]
    why = [] if ok_inc else ["not strictly increasing"]
    why += [] if ok_ends else [f"ends {x[0]!r}, {x[-1]!r} (need exactly 0.0 and 1.0)"]
    why += [] if d <= SPEC["grid_atol"] else [f"|x - i/{m}| = {d:.2e} at i = {i} (tol {SPEC['grid_atol']:g})"]
    out.append(Check("tier3.x_dense", Status.PASS if ok else Status.FAIL,
                     "; ".join(why) if why else f"strictly increasing, exactly 0.0..1.0, == i/{m}",
                     d, SPEC["grid_atol"]))
    i, d = worst(ue - exact_u(x))
    out.append(Check("tier3.uexact_dense", Status.PASS if d <= SPEC["uexact_atol"] else Status.FAIL,
                     f"max |uexact_dense - e^x x^2 (1-x)^2| = {d:.2e} at i = {i} (tol {SPEC['uexact_atol']:g})",
                     d, SPEC["uexact_atol"]))
    i, d = worst(err - (uh - ue))
    out.append(Check("tier3.error_dense", Status.PASS if d <= SPEC["error_field_atol"] else Status.FAIL,
                     f"max |error_dense - (uh_dense - uexact_dense)| = {d:.2e} at i = {i}",
                     d, SPEC["error_field_atol"]))
    i, emax = worst(uh - exact_u(x))
    ok = emax < SPEC["artifact_max_error"]
    out.append(Check("tier3.max_error", Status.PASS if ok else Status.FAIL,
                     f"max |uh_dense - u| = {emax:.3e} at i = {i} (need < {SPEC['artifact_max_error']:g})",
                     emax, SPEC["artifact_max_error"]))
    k = SPEC["meshes"].index(SPEC["artifact_n"])
    row = float(arrs["dense_errors"][k])
    ok = abs(emax - row) <= SPEC["artifact_rel"] * row
    out.append(Check("tier3.matches_table", Status.PASS if ok else Status.FAIL,
                     f"recomputed {emax:.6e} vs dense_errors[{k}] = {row:.6e} (rel {SPEC['artifact_rel']:g})",
                     abs(emax - row) / row, SPEC["artifact_rel"]))
    return out


# =============================================================================
# 4. DEPENDENCY ALLOWLIST (static; see STATIC CHECKS) and source loading
# =============================================================================
@guarded
def check_source(sub: str) -> list:
    p = os.path.join(sub, SPEC["solver_file"])
    size = os.path.getsize(p)
    if size > SPEC["max_source_bytes"]:
        raise Reject("static.source", f"{SPEC['solver_file']} is {size} bytes")
    try:
        with open(p, "rb") as fh:
            source = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Reject("static.source", f"{SPEC['solver_file']} unreadable: {exc}")
    tree = parse_python(source, SPEC["solver_file"], "static.syntax")
    out = import_audit(tree, "static")
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    has_solve = "solve" in names
    out.append(Check("static.defines_solve", Status.PASS if has_solve else Status.INFO,
                     "top-level solve defined" if has_solve else
                     "no top-level `def solve` found statically (checked again at run time)"))
    return out + introspection_audit(tree)


# The grader's instrumentation shares the child process with the submission: code that
# reaches the interpreter's internals could rewrite what it records.  Reached by any
# spelling: attribute syntax, getattr/setattr/hasattr/delattr with a computed or dunder
# name, vars/globals/locals, __dict__ / __getattribute__, a dunder name as a string
# (a dict key, attrgetter), operator.attrgetter/methodcaller.
INTROSPECTION_MODULES = ("__main__", "gc", "inspect", "ctypes", "builtins")
INTROSPECTION_ATTRS = ("modules", "_getframe", "f_back", "f_globals", "f_locals", "f_builtins",
                       "tb_frame", "gi_frame", "cr_frame", "ag_frame", "get_objects",
                       "get_referrers", "get_referents", "_current_frames", "settrace", "setprofile")
HARMLESS_DUNDERS = ("__name__", "__doc__", "__init__", "__main__", "__version__", "__all__",
                    "__file__", "__future__", "__annotations__")
INTROSPECTION_BUILTINS = ("vars", "globals", "locals", "__builtins__", "__import__", "breakpoint")
ATTR_FUNCTIONS = ("getattr", "setattr", "hasattr", "delattr")


def _reaching_name(name: str) -> bool:
    """A name that reaches interpreter internals: a dunder other than the harmless few,
    or one of the frame / module-table attributes."""
    dunder = len(name) > 4 and name.startswith("__") and name.endswith("__")
    return (dunder and name not in HARMLESS_DUNDERS) or name in INTROSPECTION_ATTRS


def introspection_audit(tree) -> list:
    """REVIEW when the source reaches sys.modules, frames, gc, inspect, ctypes, a
    namespace or a dunder attribute, however spelled."""
    hits = []
    literal = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id in ATTR_FUNCTIONS
               and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
               and isinstance(node.args[1].value, str) and not _reaching_name(node.args[1].value)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Import):
            hits += [f"import {a.name} (line {line})" for a in node.names
                     if a.name.split(".")[0] in INTROSPECTION_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in \
                INTROSPECTION_MODULES and not node.level:
            hits.append(f"from {node.module} import ... (line {line})")
        elif isinstance(node, ast.Attribute) and (_reaching_name(node.attr) or
                                                  node.attr in ("attrgetter", "methodcaller")):
            hits.append(f".{node.attr} (line {line})")
        elif isinstance(node, ast.Name) and node.id in INTROSPECTION_BUILTINS + \
                ("attrgetter", "methodcaller"):
            hits.append(f"{node.id} (line {line})")
        elif isinstance(node, ast.Name) and node.id in ATTR_FUNCTIONS and id(node) not in literal:
            hits.append(f"{node.id} with a computed or internal name (line {line})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _reaching_name(node.value.strip()):
            hits.append(f"string {node.value.strip()!r} (line {line})")
    if not hits:
        return [Check("static.introspection", Status.PASS,
                      "no access to sys.modules, frames, namespaces, dunder attributes, gc, inspect "
                      "or ctypes")]
    return [Check("static.introspection", Status.REVIEW,
                  "reaches interpreter internals the grader's in-process instrumentation shares "
                  "(it could forge the recorded solves): " + ", ".join(hits[:6]), hits)]


# =============================================================================
# 5-8. PROVENANCE: the instrumented driver run inside the isolated child
# =============================================================================
# One run: the warm parent (numpy/scipy imported, BLAS pinned, instrumentation
# installed by identity over every attribute of every loaded numpy/scipy module,
# the submission NOT imported) forks one fresh child per job (fork_jobs); each
# child imports fem_solver afresh, calls solve(n) once and reports the field.
# Every outermost library call is shown to the grader as it happens: factorisations
# and solves with their matrix, right-hand side and output (ask), the solve's
# output replaced by whatever the grader answers (unchanged in a clean job, the
# grader's substitute in an audited one: decided in the grader, after the child
# has shown the real output).  Process creation is refused in a job.
FEM_DRIVER = r'''
import time as _time
_SUBDIR = _REQ["submission_dir"]
_WORK = _os.path.dirname(_SUBDIR)
while _SUBDIR in _sys.path:          # numpy/scipy must not be shadowed by submitted files
    _sys.path.remove(_SUBDIR)
import functools as _functools
import importlib.util as _importlib_util
import subprocess as _subprocess
import numpy as _np
import numpy.linalg
for _m in ("scipy", "scipy.linalg", "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse",
           "scipy.sparse.linalg"):
    try:
        __import__(_m)
    except Exception:
        pass
_sys.path.insert(0, _SUBDIR)

# ---- references bound here, before any submitted code runs ------------------------------
# The recorder calls only these (C-level numpy functions, methods of numpy's own immutable
# types, captured descriptors): a submission that reassigns numpy/scipy module or class
# attributes changes nothing the recorder reads.  The tamper check (_tampered) sees such a
# reassignment anyway: it can change what the LIBRARY computes.
import binascii as _binascii
import hashlib as _hashlib
import inspect as _inspect
import operator as _operator
import types as _types
_b2a, _a2b = _binascii.b2a_base64, _binascii.a2b_base64
_blake2b = _hashlib.blake2b
_is = _operator.is_
_nd = _np.ndarray
_np_array, _np_empty, _np_zeros, _np_concat = _np.array, _np.empty, _np.zeros, _np.concatenate
_np_arange, _np_copyto, _np_frombuffer, _np_shares = _np.arange, _np.copyto, _np.frombuffer, _np.shares_memory
_np_contig, _np_isfinite, _np_ge, _np_le = _np.ascontiguousarray, _np.isfinite, _np.greater_equal, _np.less_equal
_np_f64, _np_i32, _np_i64, _np_u64 = _np.dtype(_np.float64), _np.dtype("<i4"), _np.dtype(_np.int64), _np.dtype(_np.uint64)
_np_matrix, _np_generic, _np_nan = _np.matrix, _np.generic, _np.nan
_nd_nonzero, _nd_repeat, _nd_astype, _nd_tobytes, _nd_item = (_nd.nonzero, _nd.repeat, _nd.astype,
                                                               _nd.tobytes, _np.generic.item)
_obj_new = object.__new__
_type, _len, _map, _all, _id, _tuple = type, len, map, all, id, tuple
_ModuleType = _types.ModuleType
_MODULES = _sys.modules
_SP = []                             # (exact sparse class, format, its instances' __dict__ getter)
try:
    import scipy.sparse as _sps
    for _fmt in ("csr", "csc", "coo", "bsr", "dia"):
        for _suffix in ("_matrix", "_array"):
            _cls = getattr(_sps, _fmt + _suffix, None)
            if _cls is None:
                continue
            for _k in _cls.__mro__:
                _kd = type.__dict__["__dict__"].__get__(_k)
                if "__dict__" in _kd:
                    _SP.append((_cls, _fmt, _kd["__dict__"].__get__))
                    break
except Exception:
    pass


_NP_SCALARS = tuple(getattr(_np, t) for t in ("bool_", "int8", "int16", "int32", "int64", "uint8",
                                              "uint16", "uint32", "uint64", "float32", "float64",
                                              "intc", "intp", "longlong"))


def _one_of(t, types):
    """t is one of types, by identity (`in` would ask a metaclass's __eq__)."""
    for s in types:
        if t is s:
            return True
    return False


def _sparse_class(t):
    for cls, fmt, getdict in _SP:
        if t is cls:
            return fmt, getdict
    return None


def _b64e(data):
    return _b2a(data, newline=False)


def _b64d(text):
    return _a2b(text)


class _Unobservable(Exception):
    """An operand the recorder cannot own without asking the submitted object."""


# Entry points by kind.  solve: (matrix, right-hand side) -> solution; factor: matrix -> a
# factorisation that a later fsolve applies; inverse: matrix -> its inverse; tri: a triangular
# solve (a recorded solve when it is one half of a Cholesky substitution); other: counted.
_LAPACK = {"gesv": ("solve", 2), "gbsv": ("solve", 2), "posv": ("solve", 1), "pbsv": ("solve", 1),
           "sysv": ("solve", 2), "gtsv": ("solve", 3), "ptsv": ("solve", 2), "getrf": ("factor", 0),
           "gbtrf": ("factor", 0), "potrf": ("factor", 0), "pbtrf": ("factor", 0),
           "getrs": ("fsolve", 0), "gbtrs": ("fsolve", 0), "potrs": ("fsolve", 0),
           "pbtrs": ("fsolve", 0), "getri": ("other", 0), "potri": ("other", 0)}
_OTHER_LAPACK = ("hesv", "gesvx", "posvx", "gbsvx", "sytrf", "sytrs", "hetrf",
                 "pttrf", "pttrs", "gels", "gelsd", "gelss", "gelsy", "trtrs", "tbtrs", "geqrf",
                 "trsv", "trsm", "tbsv")
_ITER = ("cg", "cgs", "bicg", "bicgstab", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr",
         "lsqr", "lsmr")
_NAMES = {
    "numpy.linalg": ("solve", "inv", "lstsq", "pinv", "cholesky", "qr", "tensorsolve", "tensorinv"),
    "numpy.linalg._umath_linalg": ("solve", "solve1", "inv", "cholesky_lo", "cholesky_up", "lstsq",
                                   "qr_r_raw", "qr_reduced", "qr_complete"),
    "scipy.linalg": ("solve", "solve_banded", "solveh_banded", "solve_triangular", "inv", "pinv",
                     "lstsq", "lu", "lu_factor", "lu_solve", "cho_factor", "cho_solve",
                     "cholesky", "cholesky_banded", "cho_solve_banded", "ldl", "qr",
                     "solve_toeplitz", "solve_circulant"),
    "scipy.linalg._batched_linalg": ("_solve", "_inv"),
    "scipy.linalg._flapack": tuple(p + b for p in "sdcz" for b in tuple(_LAPACK) + _OTHER_LAPACK),
    "scipy.linalg._fblas": tuple(p + b for p in "sdcz" for b in _OTHER_LAPACK),
    "scipy.sparse.linalg": ("spsolve", "splu", "spilu", "factorized", "spsolve_triangular",
                            "inv") + _ITER,
    "scipy.sparse.linalg._dsolve._superlu": ("gssv", "gstrf"),
}

# How each entry point reads its operands: parameter -> role (A: an array the recorder copies,
# S: an array or an exact scipy.sparse matrix, F: a plain flag, P: a (factor, flag) pair, L: a
# (factor, pivots) pair), the kind, the index of the solution in the output, and how the
# matrix the routine reads is found (see _effective).
_A, _S, _F, _P, _L, _CB = "A", "S", "F", "P", "L", "CB"
_OVW = {"overwrite_a": _F, "overwrite_b": _F, "overwrite_ab": _F}
_SPEC = {
    "numpy.linalg.solve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg._umath_linalg.solve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg._umath_linalg.solve1": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg.tensorsolve": ({"a": _A, "b": _A}, "solve", None, "dense"),
    "numpy.linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "numpy.linalg._umath_linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "scipy.linalg.lstsq": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "scipy.linalg.solve": (dict(_OVW, a=_A, b=_A, lower=_F, assume_a=_F, transposed=_F), "solve",
                           None, "dense_assume"),
    "scipy.linalg._batched_linalg._solve": ({"a": _A, "b": _A}, "solve", 0, "dense"),
    "numpy.linalg.inv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg._umath_linalg.inv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg.pinv": ({"a": _A}, "inverse", None, "dense"),
    "numpy.linalg.tensorinv": ({"a": _A}, "inverse", None, "dense"),
    "scipy.linalg.inv": (dict(_OVW, a=_A), "inverse", None, "dense"),
    "scipy.linalg.pinv": ({"a": _A}, "inverse", None, "dense"),
    "scipy.linalg._batched_linalg._inv": ({"a": _A}, "inverse", 0, "dense"),
    "numpy.linalg.cholesky": ({"a": _A, "upper": _F}, "factor", None, "chol_np"),
    "numpy.linalg._umath_linalg.cholesky_lo": ({"a": _A}, "factor", None, "chol_lo"),
    "numpy.linalg._umath_linalg.cholesky_up": ({"a": _A}, "factor", None, "chol_up"),
    "scipy.linalg.cholesky": (dict(_OVW, a=_A, lower=_F), "factor", None, "chol"),
    "scipy.linalg.cho_factor": (dict(_OVW, a=_A, lower=_F), "factor", 0, "chol"),
    "scipy.linalg.lu_factor": (dict(_OVW, a=_A), "factor", 0, "dense"),
    "scipy.linalg.cholesky_banded": (dict(_OVW, ab=_A, lower=_F), "factor", None, "hband"),
    "scipy.linalg.lu_solve": (dict(_OVW, lu_and_piv=_L, b=_A, trans=_F), "fsolve", None, "lu_and_piv"),
    "scipy.linalg.cho_solve": (dict(_OVW, c_and_lower=_P, b=_A), "fsolve", None, "c_and_lower"),
    "scipy.linalg.cho_solve_banded": (dict(_OVW, cb_and_lower=_P, b=_A), "fsolve", None, "cb_and_lower"),
    "scipy.linalg.solve_banded": (dict(_OVW, l_and_u=_F, ab=_A, b=_A), "solve", None, "band"),
    "scipy.linalg.solveh_banded": (dict(_OVW, ab=_A, b=_A, lower=_F), "solve", None, "hband"),
    "scipy.linalg.solve_triangular": (dict(_OVW, a=_A, b=_A, trans=_F, lower=_F, unit_diagonal=_F),
                                      "tri", None, "tri"),
    "lapack.gesv": (dict(_OVW, a=_A, b=_A), "solve", 2, "dense"),
    "lapack.gbsv": (dict(_OVW, kl=_F, ku=_F, ab=_A, b=_A), "solve", 2, "gband"),
    "lapack.posv": (dict(_OVW, a=_A, b=_A, lower=_F), "solve", 1, "chol"),
    "lapack.sysv": (dict(_OVW, a=_A, b=_A, lower=_F), "solve", 2, "chol"),
    "lapack.pbsv": (dict(_OVW, ab=_A, b=_A, lower=_F), "solve", 1, "hband"),
    "lapack.gtsv": (dict(_OVW, dl=_A, d=_A, du=_A, b=_A, overwrite_dl=_F, overwrite_d=_F,
                         overwrite_du=_F), "solve", 3, "gtsv"),
    "lapack.ptsv": (dict(_OVW, d=_A, e=_A, b=_A, overwrite_d=_F, overwrite_e=_F), "solve", 2, "ptsv"),
    "lapack.getrf": (dict(_OVW, a=_A), "factor", 0, "dense"),
    "lapack.gbtrf": (dict(_OVW, ab=_A, kl=_F, ku=_F), "factor", 0, "gband"),
    "lapack.potrf": (dict(_OVW, a=_A, lower=_F, clean=_F), "factor", 0, "chol"),
    "lapack.pbtrf": (dict(_OVW, ab=_A, lower=_F), "factor", 0, "hband"),
    "lapack.getrs": (dict(_OVW, lu=_A, piv=_A, b=_A, trans=_F), "fsolve", 0, "getrs"),
    "lapack.gbtrs": (dict(_OVW, ab=_A, kl=_F, ku=_F, b=_A, ipiv=_A, trans=_F), "fsolve", 0, "gbtrs"),
    "lapack.potrs": (dict(_OVW, c=_A, b=_A, lower=_F), "fsolve", 0, "potrs"),
    "lapack.pbtrs": (dict(_OVW, ab=_A, b=_A, lower=_F), "fsolve", 0, "potrs_band"),
    "scipy.sparse.linalg.spsolve": ({"A": _S, "b": _A}, "solve", None, "sparse"),
    "scipy.sparse.linalg.splu": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.spilu": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.factorized": ({"A": _S}, "factor", None, "sparse"),
    "scipy.sparse.linalg.inv": ({"A": _S}, "inverse", None, "sparse"),
    "scipy.sparse.linalg._dsolve._superlu.gssv": ({"N": _F, "nzvals": _A, "colind": _A, "rowptr": _A,
                                                   "B": _A, "csc": _F}, "solve", 0, "gssv"),
    "scipy.sparse.linalg._dsolve._superlu.gstrf": ({"N": _F, "nzvals": _A, "rowind": _A, "colptr": _A},
                                                   "factor", None, "gstrf"),
    "SuperLU.solve": ({"rhs": _A, "trans": _F}, "fsolve", None, "proxy"),
    "factorized.solve": ({"rhs": _A, "trans": _F}, "fsolve", None, "proxy"),
}
# An iterative solver: its start x0 must be an observed solve's output (a start from a hidden
# solve converges at once), its preconditioner a matrix (an operator can steer the iteration
# to any vector), its callback sees copies of the iterates (it could overwrite them).
_SPEC.update({"scipy.sparse.linalg." + k: ({"A": _S, "b": _A, "x0": _A, "M": _S, "callback": _CB}, "solve", 0,
                                           "sparse") for k in _ITER})
_DIRECT_PARAMS = {        # C-level entry points (no introspectable signature)
    "numpy.linalg._umath_linalg.solve": ("a", "b"), "numpy.linalg._umath_linalg.solve1": ("a", "b"),
    "numpy.linalg._umath_linalg.inv": ("a",), "numpy.linalg._umath_linalg.cholesky_lo": ("a",),
    "numpy.linalg._umath_linalg.cholesky_up": ("a",), "numpy.linalg._umath_linalg.lstsq": ("a", "b"),
    "scipy.linalg._batched_linalg._solve": ("a", "b"), "scipy.linalg._batched_linalg._inv": ("a",),
    "scipy.sparse.linalg._dsolve._superlu.gssv": ("N", "nnz", "nzvals", "colind", "rowptr", "B", "csc",
                                                  "options"),
    "scipy.sparse.linalg._dsolve._superlu.gstrf": ("N", "nnz", "nzvals", "rowind", "colptr"),
    "SuperLU.solve": ("rhs", "trans"), "factorized.solve": ("rhs", "trans"),
}
_ST = {"depth": 0, "seq": 0, "calls": [], "n": 1, "fid": 0, "asks": 0, "tamper": []}
_FACT = {}                           # content fingerprint of a factor -> fid
_FACT_ID = {}                        # id(array of a factor) -> (fid, array): "changed" detection
_PROXY = {}                          # id(SuperLU proxy / factorized solve) -> (fid, object)
_CHOL = {}                           # fingerprint of a Cholesky factor's L / L^T -> (fid, "L" | "U")
_HALF = {}                           # fingerprint of a first substitution's output -> (fid, rhs)
_OUTS = set()                        # fingerprints of the solve outputs handed back (x0 of CG)


def _spec_key(name):
    if name.startswith(("scipy.linalg._flapack.", "scipy.linalg._fblas.")):
        return "lapack." + name.rsplit(".", 1)[-1][1:]
    return name


def _kind(name):
    s = _SPEC.get(_spec_key(name))
    return (s[1], s[2]) if s is not None else ("other", None)


def _params(name, fn):
    """The entry point's parameters as (names in positional order, keyword names, defaults),
    read ONCE here, before the submission loads (f2py wrappers: from their docstring)."""
    if name in _DIRECT_PARAMS:
        names = _DIRECT_PARAMS[name]
        return names, frozenset() if name.startswith(("numpy.", "scipy.linalg.")) else frozenset(names), {}
    try:
        sig = _inspect.signature(fn)
        pos = tuple(p.name for p in sig.parameters.values()
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        kw = frozenset(p.name for p in sig.parameters.values()
                       if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        dflt = {p.name: p.default for p in sig.parameters.values() if p.default is not p.empty}
        return pos, kw, dflt
    except (TypeError, ValueError):
        pass
    doc = fn.__doc__ if isinstance(getattr(fn, "__doc__", None), str) else ""
    head = doc.split("\n", 1)[0]
    if "(" in head and head.endswith(")"):         # f2py: "x,info = dpbtrs(ab,b,[lower,ldab,...])"
        inner = head[head.index("(") + 1:-1].replace("[", "").replace("]", "")
        names = tuple(t.strip() for t in inner.split(",") if t.strip())
        return names, frozenset(names), {}
    return (), frozenset(), {}


def _bind(params, args, kwargs):
    """{parameter: ("p", index) | ("k", key)} as the function's own signature binds them."""
    pos, kw, _ = params
    where = {}
    for i in range(min(_len(args), _len(pos))):
        where[pos[i]] = ("p", i)
    for key in kwargs:
        if key in kw and key not in where:
            where[key] = ("k", key)
    return where


def _plain(x):
    """A flag as a plain Python value the recorder owns (never a submitted object's answer)."""
    t = _type(x)
    if _one_of(t, (bool, int, float, str)) or x is None:
        return x
    if t is tuple or t is list:
        return _tuple(_plain(v) for v in x)
    if _one_of(t, _NP_SCALARS):
        return _nd_item(x)                  # a numpy scalar (its C type: immutable)
    raise _Unobservable("a flag of type %s" % t.__name__)


def _own_array(x):
    """x as an exact numpy array the recorder owns: a C-level copy (dtype and layout kept).  An
    ndarray subclass is read from its buffer (none of its methods runs); any other object is
    converted ONCE by numpy, and that conversion is what is recorded and what the library gets."""
    if _type(x) is _nd:
        return _np_array(x, copy=True, order="K")
    try:
        a = _np_array(x, copy=True, order="K", subok=False)
    except Exception as exc:
        raise _Unobservable("an operand numpy cannot convert (%s)" % _type(exc).__name__)
    if _type(a) is not _nd:
        raise _Unobservable("an operand that is not an array")
    return a


def _own_sparse(x):
    """(copy, entries) of an exact scipy.sparse matrix, read from its raw arrays through the
    recorder's own __dict__ getter (no method, property or class attribute of it is used);
    the copy is a new object of the same exact class holding copies of those arrays."""
    fmt, getdict = _sparse_class(_type(x))
    d = getdict(x)
    if _type(d) is not dict:
        raise _Unobservable("a sparse matrix without its arrays")
    shape = d.get("_shape")
    if _type(shape) is not tuple or _len(shape) != 2 or not _all(_type(s) is int and s >= 0 for s in shape):
        raise _Unobservable("a sparse matrix without a plain shape")
    keys = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
            "bsr": ("data", "indices", "indptr"), "coo": ("data", "coords"), "dia": ("data", "offsets")}[fmt]
    arrs = {}
    for key in keys:
        v = d.get(key)
        if key == "coords":
            if _type(v) is not tuple or _len(v) != 2 or not _all(_type(c) is _nd for c in v):
                raise _Unobservable("a COO matrix without plain coordinate arrays")
            arrs[key] = _tuple(_np_array(c, copy=True) for c in v)
        elif _type(v) is not _nd:
            raise _Unobservable("a sparse matrix whose %s is not a plain array" % key)
        else:
            arrs[key] = _np_array(v, copy=True)
    ent = _sparse_entries(fmt, shape, arrs)
    obj = _obj_new(_type(x))
    od = getdict(obj)
    od.update(arrs, _shape=shape, maxprint=50)
    if fmt == "coo":
        od["has_canonical_format"] = False
    return obj, ent


def _ints(a, lo, hi):
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and (int(a.min()) < lo or int(a.max()) >= hi)):
        raise _Unobservable("malformed sparse index arrays")
    return _nd_astype(a, _np_i64)


def _sparse_entries(fmt, shape, arrs):
    M, N = shape
    data = arrs["data"]
    if data.dtype.kind not in "biuf":
        raise _Unobservable("a sparse matrix of dtype %s" % data.dtype)
    if fmt in ("csr", "csc"):
        major, minor = (M, N) if fmt == "csr" else (N, M)
        ptr, idx = arrs["indptr"], arrs["indices"]
        if ptr.ndim != 1 or ptr.size != major + 1 or data.ndim != 1 or idx.size != data.size:
            raise _Unobservable("malformed compressed sparse arrays")
        ptr = _ints(ptr, 0, data.size + 1)
        nnz = int(ptr[-1])
        if int(ptr[0]) != 0 or (major and int((ptr[1:] - ptr[:-1]).min()) < 0):
            raise _Unobservable("malformed compressed sparse arrays")
        idx = _ints(idx[:nnz], 0, max(minor, 1))
        maj = _nd_repeat(_np_arange(major), ptr[1:] - ptr[:-1])
        return (shape, maj, idx, data[:nnz]) if fmt == "csr" else (shape, idx, maj, data[:nnz])
    if fmt == "coo":
        r, c = arrs["coords"]
        if data.ndim != 1 or r.size != data.size or c.size != data.size:
            raise _Unobservable("malformed COO arrays")
        return shape, _ints(r, 0, max(M, 1)), _ints(c, 0, max(N, 1)), data
    if fmt == "dia":
        off = arrs["offsets"]
        if data.ndim != 2 or off.ndim != 1 or off.size != data.shape[0] or off.dtype.kind not in "iu":
            raise _Unobservable("malformed DIA arrays")
        rs, cs, vs = [], [], []
        for r in range(off.size):
            k = int(off[r])
            j = _np_arange(max(0, k), min(N, M + k, data.shape[1]))
            rs.append(j - k)
            cs.append(j)
            vs.append(data[r, j])
        return shape, _np_concat(rs + [_np_zeros(0, _np_i64)]), _np_concat(cs + [_np_zeros(0, _np_i64)]), \
            _np_concat(vs + [_np_zeros(0, data.dtype)])
    # bsr
    ptr, idx = arrs["indptr"], arrs["indices"]
    if data.ndim != 3:
        raise _Unobservable("malformed BSR arrays")
    R, C = data.shape[1], data.shape[2]
    if not R or not C or M % R or N % C or ptr.ndim != 1 or ptr.size != M // R + 1 or idx.size != data.shape[0]:
        raise _Unobservable("malformed BSR arrays")
    ptr = _ints(ptr, 0, data.shape[0] + 1)
    idx = _ints(idx, 0, max(N // C, 1))
    nb = int(ptr[-1])
    brow = _nd_repeat(_np_arange(M // R), ptr[1:] - ptr[:-1])
    ii = (brow[:, None, None] * R + _np_arange(R)[None, :, None] + 0 * _np_arange(C)[None, None, :])
    jj = (idx[:nb, None, None] * C + _np_arange(C)[None, None, :] + 0 * _np_arange(R)[None, :, None])
    return shape, ii.ravel(), jj.ravel(), data[:nb].ravel()


def _own(role, x):
    """(the value handed to the library, what the recorder reads of it)."""
    if x is None:
        return None, None
    if role == _F:
        v = _plain(x)
        return v, v
    if role == _CB:
        if x is None:
            return None, None

        def callback(*args):
            return x(*(_np_array(a, copy=True) if _type(a) is _nd else a for a in args))
        return callback, None
    if role in (_P, _L):
        if not _one_of(_type(x), (tuple, list)) or _len(x) != 2:
            raise _Unobservable("a factor that is not a pair")
        first = _own_array(x[0])
        second = _own_array(x[1]) if role == _L else _plain(x[1])
        return (first, second), (first, second)
    if role == _S and _sparse_class(_type(x)) is not None:
        obj, ent = _own_sparse(x)
        return obj, ent
    if role == _S and not (issubclass(_type(x), _nd) or _one_of(_type(x), (list, tuple))):
        raise _Unobservable("an operator object (%s)" % _type(x).__name__)
    a = _own_array(x)
    return a, a


def _fp(*arrays):
    """Content fingerprint of a factor (dtype, shape and C-order bytes of each array)."""
    h = _blake2b(digest_size=20)
    for a in arrays:
        if _type(a) is not _nd:
            return None
        a = _np_contig(a)
        h.update(("%s%r|" % (a.dtype.str, a.shape)).encode())
        h.update(memoryview(a).cast("B"))
    return h.digest()


def _tri_mask(m, lower):
    ar = _np_arange(m)
    return (_np_ge if lower else _np_le).outer(ar, ar)


def _dense_entries(a, part="full"):
    """(shape, rows, cols, values) of the part of the 2-D array a a routine reads: "full",
    "upper"/"lower" (one triangle of a symmetric matrix, mirrored), "diag", "tridiag"."""
    if a.ndim != 2 or a.dtype.kind not in "biuf":
        raise _Unobservable("a matrix of shape %r, dtype %s" % (a.shape, a.dtype))
    i, j = _nd_nonzero(a)
    if part in ("upper", "lower"):
        keep = (i <= j) if part == "upper" else (i >= j)
        i, j = i[keep], j[keep]
        off = i != j
        v = a[i, j]
        return a.shape, _np_concat([i, j[off]]), _np_concat([j, i[off]]), _np_concat([v, v[off]])
    if part == "diag":
        keep = i == j
        i, j = i[keep], j[keep]
    elif part == "tridiag":
        keep = abs(i - j) <= 1
        i, j = i[keep], j[keep]
    return a.shape, i, j, a[i, j]


def _band(ab, l, u, sym=None):
    """Rows, cols, values of the matrix in LAPACK band storage ab[u + i - j, j] = A[i, j]
    (sym "upper"/"lower": one triangle of a symmetric matrix, mirrored)."""
    if ab.ndim != 2 or ab.dtype.kind not in "biuf" or l < 0 or u < 0 or ab.shape[0] < l + u + 1:
        raise _Unobservable("band storage of shape %r for (l, u) = (%d, %d)" % (ab.shape, l, u))
    m = ab.shape[1]
    rs, cs, vs = [], [], []
    for r in range(l + u + 1):
        off = r - u                  # i - j
        j = _np_arange(max(0, -off), min(m, m - off))
        rs.append(j + off)
        cs.append(j)
        vs.append(ab[r, j])
    i, j, v = _np_concat(rs), _np_concat(cs), _np_concat(vs)
    if sym:
        keep = i != j
        i, j, v = _np_concat([i, j[keep]]), _np_concat([j, i[keep]]), _np_concat([v, v[keep]])
    return (m, m), i, j, v


def _tridiag(sub, d, sup):
    m = d.shape[0]
    if d.ndim != 1 or sub.shape != (max(m - 1, 0),) or sup.shape != (max(m - 1, 0),):
        raise _Unobservable("tridiagonal operands of unequal lengths")
    k = _np_arange(m)
    return ((m, m), _np_concat([k, k[1:], k[:-1]]), _np_concat([k, k[:-1], k[1:]]),
            _np_concat([_nd_astype(d, _np_f64), _nd_astype(sub, _np_f64), _nd_astype(sup, _np_f64)]))


_ASSUME = {"pos": "sym", "positive definite": "sym", "sym": "sym", "symmetric": "sym", "her": "sym",
           "hermitian": "sym", "diagonal": "diag", "tridiagonal": "tridiag",
           "upper triangular": "triu", "lower triangular": "tril"}


def _effective(how, g):
    """The matrix the routine reads, as entries, from the owned operands g(name); a list of
    (entries, rhs, output-selector) per system for solves (a batched stack: one per system)."""
    if how in ("dense", "dense_assume"):
        a = g("a")
        part = "full"
        if how == "dense_assume":
            kind = _ASSUME.get(g("assume_a"), "full")
            lower = bool(g("lower"))
            part = {"sym": "lower" if lower else "upper", "triu": "triu", "tril": "tril"}.get(kind, kind)
            if g("transposed"):
                a = a.T
        return _systems(a, g("b"), part)
    if how in ("chol", "chol_np", "chol_lo", "chol_up"):
        low = {"chol": lambda: bool(g("lower")), "chol_np": lambda: not g("upper"),
               "chol_lo": lambda: True, "chol_up": lambda: False}[how]()
        return _systems(g("a"), g("b"), "lower" if low else "upper")
    if how == "band":
        lu = g("l_and_u")
        if _type(lu) is not tuple or _len(lu) != 2 or not _all(_type(v) is int for v in lu):
            raise _Unobservable("l_and_u is not a pair of integers")
        return [(_band(g("ab"), lu[0], lu[1]), g("b"), None)]
    if how == "hband":
        ab = g("ab")
        k = ab.shape[0] - 1 if ab.ndim == 2 else -1
        ent = _band(ab, k, 0, "lower") if g("lower") else _band(ab, 0, k, "upper")
        return [(ent, g("b"), None)]
    if how == "gband":
        kl, ku, ab = g("kl"), g("ku"), g("ab")
        if _type(kl) is not int or _type(ku) is not int or ab.ndim != 2 or ab.shape[0] < kl:
            raise _Unobservable("band storage without plain kl, ku")
        return [(_band(ab[kl:], kl, ku), g("b"), None)]
    if how == "gtsv":
        return [(_tridiag(g("dl"), g("d"), g("du")), g("b"), None)]
    if how == "ptsv":
        return [(_tridiag(g("e"), g("d"), g("e")), g("b"), None)]
    if how == "sparse":
        A = g("A")
        return [(_dense_entries(A) if _type(A) is _nd else A, g("b"), None)]
    if how == "gssv":
        return [(_gssv_entries(g, "colind", "rowptr", bool(g("csc"))), g("B"), None)]
    if how == "gstrf":
        return [(_gssv_entries(g, "rowind", "colptr", True), None, None)]
    return [(None, g("b"), None)]


def _gssv_entries(g, ind, ptr, csc):
    N = g("N")
    if _type(N) is not int:
        raise _Unobservable("SuperLU dimension is not an integer")
    return _sparse_entries("csc" if csc else "csr", (N, N), {"data": g("nzvals"), "indices": g(ind),
                                                             "indptr": g(ptr)})


def _systems(a, b, part):
    """One (entries, rhs, selector) per system of a (batched) dense solve."""
    if part in ("triu", "tril"):
        a = a * _tri_mask(a.shape[-1], part == "tril") if a.ndim == 2 else a
        part = "full"
    if a.ndim == 2:
        return [(_dense_entries(a, part), b, None)]
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise _Unobservable("a matrix of shape %r" % (a.shape,))
    batch = a.shape[:-2]
    count = 1
    for s in batch:
        count *= s
    if count > 16:
        raise _Unobservable("a batch of %d systems" % count)
    if b is not None and b.ndim > 2 and b.shape[:-2] != batch:
        raise _Unobservable("a batched right-hand side of shape %r" % (b.shape,))
    out = []
    flat = a.reshape((count,) + a.shape[-2:])
    for t in range(count):
        idx = _tuple(int(v) for v in _np_unravel(t, batch))
        rhs = b if b is None or b.ndim <= 2 else b[idx]
        out.append((_dense_entries(flat[t], part), rhs, idx))
    return out


_np_unravel = _np.unravel_index


def _arr(a, m):
    """A float64 array as a message (data only for at most 16 columns of length m)."""
    if _type(a) is not _nd:
        return None
    if a.dtype.kind not in "fiu" or a.ndim not in (1, 2) or a.shape[0] != m:
        return {"shape": list(a.shape), "dtype": str(a.dtype)}
    a = _np_contig(a, dtype=_np_f64)
    return {"shape": list(a.shape), "b64": _b64e(a).decode("ascii") if a.size <= 16 * m else None}


def _mat_msg(ent):
    if ent is None:
        return None
    shape, i, j, v = ent
    if v.dtype.kind not in "biuf":
        return {"shape": list(shape), "dtype": str(v.dtype)}
    nz = v != 0
    i, j, v = i[nz], j[nz], v[nz]
    m = int(shape[-1])
    msg = {"shape": [int(s) for s in shape], "nnz": int(v.size)}
    if v.size <= 16 * m:
        msg.update(r=_b64e(_np_contig(i, dtype=_np_i32)).decode("ascii"),
                   c=_b64e(_np_contig(j, dtype=_np_i32)).decode("ascii"),
                   v=_b64e(_np_contig(v, dtype=_np_f64)).decode("ascii"))
    return msg


def _pick(out, idx):
    return out if idx is None else out[idx]


def _substitute_into(x, reply):
    """Write the grader's substitute for a solve's output INTO the output array (so that a
    caller's buffer the library wrote the result to holds it too); False when not applied."""
    if not isinstance(reply, dict) or not isinstance(reply.get("sub"), str):
        return False
    new = _np_frombuffer(_b64d(reply["sub"]), dtype=_np_f64)
    if _type(x) is not _nd or new.size != x.size or not x.flags.writeable:
        return False
    _np_copyto(x, new.reshape(x.shape))
    return True


def _inverse_substitute(Z, reply):
    """The grader's substitute for an explicit inverse, written into Z: Z + u v^T (its
    vectors), or Z with NaN rows."""
    if not isinstance(reply, dict) or _type(Z) is not _nd or not Z.flags.writeable:
        return
    m = Z.shape[0]
    if isinstance(reply.get("rank1"), list) and len(reply["rank1"]) == 2:
        u, v = (_np_frombuffer(_b64d(t), dtype=_np_f64) for t in reply["rank1"])
        if u.size == m and v.size == m:
            _np_copyto(Z, Z + u[:, None] * v[None, :])
    elif isinstance(reply.get("nanrows"), list):
        Z[[int(i) for i in reply["nanrows"] if _type(i) is int and 0 <= i < m]] = _np_nan


class _LUProxy:
    """Stands in for a SuperLU object so that its C-level solve is observed."""
    def __init__(self, lu, fid):
        object.__setattr__(self, "_lu", lu)
        object.__setattr__(self, "_solve", _wrap("SuperLU.solve", lu.solve, fid))

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_lu"), name)

    def solve(self, *args, **kwargs):
        return object.__getattribute__(self, "_solve")(*args, **kwargs)


def _ask(rec):
    """ask, counted: the grader compares the count with the records it received (a record
    the submission wrote onto the channel itself is one the driver did not count)."""
    _ST["asks"] += 1
    return ask(rec)


def _factor_arrays(how, g):
    """The arrays of the factor an fsolve applies (what its fingerprint is taken of)."""
    if how == "lu_and_piv":
        return g("lu_and_piv")
    if how in ("c_and_lower", "cb_and_lower"):
        return (g(how)[0],)
    if how == "getrs":
        return g("lu"), g("piv")
    if how == "gbtrs":
        return g("ab"), g("ipiv")
    if how == "potrs":
        return (g("c"),)
    if how == "potrs_band":
        return (g("ab"),)
    return None


def _produced_arrays(name, how, out):
    """The arrays of a factorisation's output (fingerprinted when produced)."""
    key = _spec_key(name)
    if key in ("scipy.linalg.lu_factor", "lapack.getrf", "lapack.gbtrf"):
        return out[0], out[1]
    if key in ("scipy.linalg.cho_factor", "lapack.potrf", "lapack.pbtrf"):
        return (out[0],)
    return (out,)


def _register_cholesky(fid, c, lower):
    """A dense Cholesky factor: its L and L^T (the triangle the routine wrote) fingerprinted,
    so that two triangular substitutions with it are a recorded solve of the factored matrix."""
    if _type(c) is not _nd or c.ndim != 2 or c.shape[0] != c.shape[1]:
        return
    T = c * _tri_mask(c.shape[0], lower)
    L = T if lower else T.T
    _CHOL[_fp(L)] = (fid, "L")
    _CHOL[_fp(_np_contig(L.T))] = (fid, "U")


def _changed_factor(orig_items):
    """The fid of a registered factor one of whose arrays (by identity) was passed, or None."""
    for obj in orig_items:
        hit = _FACT_ID.get(_id(obj))
        if hit is not None and hit[1] is obj:
            return hit[0]
    return None


def _observe(name, fn, params, args, kwargs, fid):
    """One outermost library call: operands owned, recorded, handed to the library; the
    grader's answer applied (in place where the library wrote into a caller's buffer)."""
    spec = _SPEC.get(_spec_key(name))
    if spec is None:                # counted only
        out = _nested(fn, args, kwargs)
        _count(name, "other", args, kwargs)
        return out
    roles, kind, idx, how = spec
    where = _bind(params, args, kwargs)
    args2, kwargs2 = list(args), dict(kwargs)
    owned, orig, why = {}, {}, None
    for pname, role in roles.items():
        if pname not in where:
            continue
        w = where[pname]
        val = args[w[1]] if w[0] == "p" else kwargs[w[1]]
        try:
            given, read = _own(role, val)
        except _Unobservable as exc:
            why = "%s: %s" % (pname, exc)
            break
        except Exception as exc:
            why = "%s: %s" % (pname, _type(exc).__name__)
            break
        owned[pname], orig[pname] = read, val
        if w[0] == "p":
            args2[w[1]] = given
        else:
            kwargs2[w[1]] = given
    dflt = params[2]

    def g(pname):
        if pname in owned:
            return owned[pname]
        v = dflt.get(pname, 0 if pname in ("lower", "trans", "csc", "kl", "ku") else None)
        return v if _type(v) in (bool, int, float, str, tuple) or v is None else None

    if why is None and kind in ("solve", "factor", "inverse"):
        try:
            systems = [(ent, None if b is None else _np_array(b, copy=True), sel)
                       for ent, b, sel in _effective(how, g)]
        except _Unobservable as exc:
            why, systems = str(exc), None
        except Exception as exc:
            why, systems = "%s while reading the matrix" % _type(exc).__name__, None
    elif why is None and kind in ("fsolve", "tri"):
        b = g("b") if "b" in roles else g("rhs")
        systems = [(None, None if b is None else _np_array(b, copy=True), None)]
    else:
        systems = None
    if why is not None:                 # the call runs as the submission made it, unobserved
        out = _nested(fn, args, kwargs)
        return _unobservable(name, kind, idx, out, why)
    ffid, changed, tri = fid, None, None
    if kind == "fsolve" and fid is None:
        arrs = _factor_arrays(how, g)
        hit = _FACT.get(_fp(*arrs)) if arrs is not None else None
        ffid = hit
        if hit is None and arrs is not None:
            pair = orig.get(how) if how in ("lu_and_piv", "c_and_lower", "cb_and_lower") else None
            items = list(pair) if _one_of(_type(pair), (tuple, list)) else [orig.get(k) for k in
                                                                     ("lu", "piv", "c", "ab", "ipiv")]
            changed = _changed_factor(items)
    if kind == "tri":
        tri = _triangular_half(g)
        changed = _changed_factor([orig.get("a")]) if tri is None else None
    if _spec_key(name).rsplit(".", 1)[-1] in _ITER:
        x0 = owned.get("x0")
        if _type(x0) is _nd and x0.size and bool((x0 != 0).any()) and _fp(x0) not in _OUTS:
            return _unobservable(name, kind, idx, _nested(fn, args2, kwargs2),
                                 "x0: a start that is no observed solve's output")
    out = _nested(fn, args2, kwargs2)
    _tampered()
    _ST["depth"] += 1                   # what the grader's exchange does is not observed
    try:
        try:
            out = _answer(name, kind, idx, how, out, systems, ffid, changed, tri, g)
        except Exception as exc:
            send({"kind": "call", "fn": name, "cls": kind,
                  "note": (_type(exc).__name__ + ": " + str(exc))[:200]})
        out = _write_back(out, owned, orig, g)
        if kind in ("solve", "fsolve", "inverse") and _type(out) is _nd and \
                any(_type(v) is _np_matrix for v in orig.values()):
            out = out.view(_np_matrix)      # as numpy wraps a result for np.matrix operands
        return out
    finally:
        _ST["depth"] -= 1


def _nested(fn, args, kwargs):
    """The library call itself (the layers under it run unobserved)."""
    _ST["depth"] += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _ST["depth"] -= 1


def _triangular_half(g):
    """(fid, stage) when solve_triangular applies half of a registered Cholesky factor:
    stage 1 solves L y = b, stage 2 solves L^T x = y; None otherwise."""
    a = g("a")
    if g("unit_diagonal") or _type(a) is not _nd or a.ndim != 2 or a.shape[0] != a.shape[1]:
        return None
    low = bool(g("lower"))
    hit = _CHOL.get(_fp(a * _tri_mask(a.shape[0], low)))
    if hit is None:
        return None
    trans = g("trans")
    transposed = trans in (1, 2, "T", "C")
    return hit[0], (1 if (hit[1] == "L") != transposed else 2)


def _count(name, kind, args, kwargs, note=None, dim=None):
    for v in list(args) + list(kwargs.values()):
        if dim is None and _type(v) is _nd and v.ndim == 2:
            dim = int(v.shape[-1])
            break
    _ST["calls"].append({"fn": name, "kind": kind, "dim": dim})
    rec = {"kind": "call", "fn": name, "cls": kind, "dim": dim}
    if note:
        rec["note"] = note[:200]
    send(rec)


def _unobservable(name, kind, idx, out, why):
    """A call whose operands the recorder could not own: it ran as given; for a solve,
    factorisation or inverse the grader records that its matrix could not be read."""
    if kind not in ("solve", "factor", "inverse", "fsolve"):
        _count(name, kind, (), {}, why)
        return out
    rec = {"fn": name, "kind": "solve" if kind == "fsolve" else kind, "seq": _ST["seq"],
           "unobservable": why[:200], "mat": None}
    _ST["seq"] += 1
    x = out if idx is None or not _one_of(_type(out), (tuple, list)) else out[idx]
    m = int(x.shape[0]) if _type(x) is _nd and x.ndim >= 1 else None
    rec["dim"] = m
    _ST["calls"].append({"fn": name, "kind": kind, "dim": m})
    if len(_ST["calls"]) <= _REQ["max_calls"]:
        if kind == "factor":
            send(dict(rec, kind="call", cls=kind))
        else:                           # the grader records it: "its matrix could not be read"
            _ask(dict(rec, kind="solve" if kind == "fsolve" else kind))
    return out


def _answer(name, kind, idx, how, out, systems, fid, changed, tri, g):
    """Record the call and apply the grader's answer (the output, possibly replaced)."""
    rec = {"fn": name, "kind": kind, "seq": _ST["seq"]}
    _ST["seq"] += 1
    capped = len(_ST["calls"]) >= _REQ["max_calls"]
    x = _pick(out, idx) if kind in ("solve", "fsolve", "inverse", "tri") else None
    if capped:
        _ST["calls"].append({"fn": name, "kind": kind})
    elif kind == "factor":
        ent = systems[0][0] if systems else None
        new_fid = _ST["fid"] = _ST["fid"] + 1
        base = _spec_key(name).rsplit(".", 1)[-1]
        if base in ("splu", "spilu", "gstrf"):
            out = _LUProxy(out, new_fid)
            _PROXY[_id(out)] = (new_fid, out)
        elif base == "factorized" and callable(out):
            out = _wrap("factorized.solve", out, new_fid)
            _PROXY[_id(out)] = (new_fid, out)
        else:
            arrs = _produced_arrays(name, how, out)
            _FACT[_fp(*arrs)] = new_fid
            for a in arrs:
                _FACT_ID[_id(a)] = (new_fid, a)
            if how.startswith("chol"):
                low = {"chol": bool(g("lower")), "chol_np": not g("upper"), "chol_lo": True,
                       "chol_up": False}[how]
                _register_cholesky(new_fid, arrs[0], low)
        rec.update(fid=new_fid, mat=_mat_msg(ent), dim=int(ent[0][-1]) if ent is not None else None)
        _ST["calls"].append({"fn": name, "kind": kind, "dim": rec["dim"]})
        _ask(rec)
    elif kind == "tri" and tri is not None and tri[1] == 1 and _type(x) is _nd:
        _HALF[_fp(x)] = (tri[0], systems[0][1])            # the first substitution: L y = b
        _count(name, "other", (), {}, dim=int(x.shape[0]))
    elif kind == "tri" and tri is not None and tri[1] == 2 and _HALF.get(_fp(systems[0][1])) is not None \
            and _HALF[_fp(systems[0][1])][0] == tri[0]:
        first = _HALF[_fp(systems[0][1])]                  # the second: L^T x = y
        _solve_record(dict(rec, kind="fsolve", fn=name + " (Cholesky substitutions)"), x,
                      [(None, first[1], None)], tri[0], None)
    elif kind in ("solve", "fsolve") or (kind == "tri" and changed is not None):
        _solve_record(dict(rec, kind="fsolve") if kind == "tri" else rec, x, systems, fid, changed)
    elif kind == "inverse":
        ent = systems[0][0] if systems else None
        rec["mat"], rec["dim"] = _mat_msg(ent), int(ent[0][-1]) if ent is not None else None
        _ST["calls"].append({"fn": name, "kind": kind, "dim": rec["dim"]})
        if rec["dim"] and _type(x) is _nd and x.dtype == _np_f64 and x.shape == (rec["dim"],) * 2 \
                and len(systems) == 1:
            _inverse_substitute(x, _ask(rec))
        else:
            send(dict(rec, kind="call", cls=kind))
    else:
        _count(name, "other", (), {}, dim=int(x.shape[0]) if _type(x) is _nd and x.ndim else None)
    return out


def _solve_record(rec, x, systems, fid, changed):
    """Each system of a solve shown to the grader; its answer written into the output."""
    for ent, rhs, sel in systems:
        xs = x if sel is None or _type(x) is not _nd else x[sel]
        m = int(xs.shape[0]) if _type(xs) is _nd and xs.ndim >= 1 else 0
        r = dict(rec, fid=fid, rhs=_arr(rhs, m), out=_arr(xs, m), dim=m)
        if changed is not None:
            r["changed"] = changed
        if rec["kind"] == "solve":
            r["mat"] = _mat_msg(ent)
        _ST["calls"].append({"fn": rec["fn"], "kind": rec["kind"], "dim": m})
        if _type(xs) is _nd and xs.dtype == _np_f64 and (r["out"] or {}).get("b64"):
            _substitute_into(xs, _ask(dict(r, kind="solve")))
            _OUTS.add(_fp(xs))
        else:
            send(dict(r, kind="solve", unusable=True))


def _write_back(out, owned, orig, g):
    """A routine told to overwrite an operand wrote into the recorder's copy: that copy (with
    the grader's substitute, where it holds the solution) goes into the caller's buffer, and
    an output that IS the copy is returned as the caller's own array, as the library would."""
    for pname, a in owned.items():
        if not g("overwrite_" + pname) or _type(a) is not _nd:
            continue
        dst = orig[pname]
        if _type(dst) is not _nd or dst.shape != a.shape or dst.dtype != a.dtype or not dst.flags.writeable:
            continue
        _np_copyto(dst, a)
        if out is a:
            out = dst
        elif _type(out) is tuple and any(_is(o, a) for o in out):
            out = _tuple(dst if _is(o, a) else o for o in out)
    return out


def _wrap(name, fn, fid=None):
    """Observe the outermost library call (nested layers run unobserved under it)."""
    params = _params(name, fn)

    def wrapper(*args, **kwargs):
        if _ST["depth"]:
            return fn(*args, **kwargs)
        _tampered()
        return _observe(name, fn, params, args, kwargs, fid)
    try:
        _functools.update_wrapper(wrapper, fn)
    except Exception:
        pass
    return wrapper


def _install():
    targets = {}
    for modname, names in _NAMES.items():
        mod = _sys.modules.get(modname)
        for nm in names:
            fn = getattr(mod, nm, None) if mod is not None else None
            if fn is not None and callable(fn) and id(fn) not in targets:
                targets[id(fn)] = (fn, _wrap(modname + "." + nm, fn))
    patched = 0
    for modname, mod in list(_sys.modules.items()):
        if mod is None or not (modname in ("numpy", "scipy") or modname.startswith(("numpy.", "scipy."))):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for key, val in items:
            hit = targets.get(id(val))
            if hit is not None and hit[0] is val:
                try:
                    setattr(mod, key, hit[1])
                    patched += 1
                except (AttributeError, TypeError):
                    pass
    return len(targets), patched


# ---- the tamper check ----------------------------------------------------------------------
# Every attribute of every loaded numpy/scipy module, of the heap classes they define (and
# their bases), of builtins and of the stdlib modules the recorder and the message channel
# use, as bound once the instrumentation is installed; compared by identity (operator.is_,
# no __eq__ of anything) at every outermost instrumented call and when solve returns.  What
# the recorder reads does not depend on these (it uses the references above); what the
# LIBRARY computes does, so a reassignment is reported (provenance.library_intact).
_TAMPER_STDLIB = ("builtins", "json", "json.encoder", "json.decoder", "base64", "binascii", "hashlib",
                  "operator", "functools", "os", "posixpath", "inspect", "types")


def _tamper_snapshot():
    getd = type.__dict__["__dict__"].__get__
    snap, seen = [], set()
    names = sorted(k for k, m in _sys.modules.items() if m is not None and
                   (k.split(".")[0] in ("numpy", "scipy") or k in _TAMPER_STDLIB))
    classes = []
    for k in names:
        mod = _sys.modules[k]
        try:
            d = vars(mod)
        except TypeError:
            continue
        keys = list(d)
        snap.append((k, d, keys, [d[x] for x in keys]))
        for v in list(d.values()):
            if isinstance(v, type) and str(getattr(v, "__module__", "")).split(".")[0] in ("numpy", "scipy"):
                classes.extend(v.__mro__)
    for c in classes:
        if id(c) in seen or c is object or not (c.__flags__ & (1 << 9)) or c.__flags__ & (1 << 8):
            continue                    # static or immutable types cannot be changed
        seen.add(id(c))
        d = getd(c)
        keys = list(d)
        snap.append((c.__module__ + "." + c.__qualname__, d, keys, [d[x] for x in keys]))
    mods = [(k, _sys.modules[k]) for k in names]
    return snap, [k for k, _ in mods], [m for _, m in mods]


def _tamper_diff(label, d, keys, vals):
    bad = [label + "." + str(k) for k, v in zip(keys, vals) if d.get(k, _tamper_diff) is not v]
    for k in set(d) - set(keys):
        v = d[k]
        if k == "__warningregistry__" or (_type(v) is _ModuleType and
                                          getattr(v, "__name__", None) == label + "." + str(k)):
            keys.append(k)                  # a warning registry, a submodule imported lazily
            vals.append(v)
        else:
            bad.append(label + "." + str(k) + " (added)")
    return bad


def _tampered():
    """Reassigned numpy/scipy/builtins attributes since the driver started (reported once;
    a comparison that cannot be made is reported too: fail closed)."""
    try:
        _tamper_compare()
    except Exception as exc:
        if _len(_ST["tamper"]) < 20:
            _ST["tamper"].append("(the comparison failed: %s)" % _type(exc).__name__)


def _tamper_compare():
    snap, names, mods = _TAMPER
    if not _all(_map(_is, _map(_MODULES.get, names), mods)):
        for k, m in zip(names, mods):
            if _MODULES.get(k) is not m and "sys.modules[%r]" % k not in _ST["tamper"]:
                _ST["tamper"].append("sys.modules[%r]" % k)
    for entry in snap:
        label, d, keys, vals = entry
        if _len(d) == _len(keys) and _all(_map(_is, _map(d.get, keys), vals)):
            continue
        for b in _tamper_diff(label, d, keys, vals):
            if b not in _ST["tamper"] and _len(_ST["tamper"]) < 20:
                _ST["tamper"].append(b)


def _no_processes(*args, **kwargs):
    raise RuntimeError("the grader refuses to start processes: a solve in another process "
                       "cannot be observed (solve in the calling process)")


def _block_processes():
    """No process creation in a job: os.fork, posix_spawn, subprocess and multiprocessing
    (every start method) fail at once instead of hanging the job."""
    import _posixsubprocess
    for mod, names in ((_os, ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen",
                              "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe")),
                       (_posixsubprocess, ("fork_exec",)), (_subprocess, ("_fork_exec",))):
        for nm in names:
            if hasattr(mod, nm):
                setattr(mod, nm, _no_processes)
    _subprocess._USE_POSIX_SPAWN = False
    for label, d, keys, vals in _TAMPER[0]:     # the grader's own change: not a tamper
        if label == "os":
            for i, k in enumerate(keys):
                if d.get(k) is _no_processes:
                    vals[i] = _no_processes


def _children():
    """This process's live child processes (pids), sorted (the runner prologue's reader)."""
    return sorted(_live_children())


def _snapshot():
    """Every path under the work folder (copy, scratch) and, in the full sandbox, its private
    writable /dev/shm (shared by the jobs of a run: a file there is state across calls; the
    host's /dev/shm, seen without file isolation, is not watched: others write there)."""
    snap = {}
    for top in (_WORK,) + (("/dev/shm",) if _LIM.get("isolated") else ()):
        for root, dirs, files in _os.walk(top):
            for nm in dirs + files:
                p = _os.path.join(root, nm)
                try:
                    st = _os.lstat(p)
                    snap[p] = (st.st_size, st.st_mtime_ns, st.st_mode)
                except OSError:
                    pass
    return snap


def _diff(a, b):
    return sorted(_os.path.relpath(p, _WORK) if p.startswith(_WORK + _os.sep) else p
                  for p in set(a) | set(b) if a.get(p) != b.get(p))[:20]


def _fields(res, n):
    keys = ("x_nodes", "uh_nodes", "x_dense", "uh_dense")
    if isinstance(res, dict):
        missing = [k for k in keys if k not in res]
        if missing:
            raise ValueError("solve(n) result lacks " + ", ".join(missing))
        vals = [res[k] for k in keys]
    elif isinstance(res, (tuple, list)) and len(res) == 4:
        vals = list(res)
    else:
        raise ValueError("solve(n) must return a mapping with x_nodes, uh_nodes, x_dense, "
                         "uh_dense or a 4-tuple, got " + type(res).__name__)
    out = {}
    caps = (n + 1, n + 1, 10 * n + 1, 10 * n + 1)
    for k, v, cap in zip(keys, vals, caps):
        arr = _np_contig(_np_array(v, dtype=_np_f64, copy=True, subok=False))
        out[k] = {"shape": list(arr.shape),
                  "b64": _b64e(arr).decode("ascii") if arr.size <= cap else None}
        if k.startswith("x_") and arr.shape == (cap,) and cap > 1:     # a grid: only where it
            grid = _np_arange(cap) / (cap - 1)                          # is not the prescribed one
            at = _nd_nonzero(arr.view(_np_u64) != grid.view(_np_u64))[0]
            if at.size <= cap // 4:
                out[k] = {"shape": [cap], "grid": {"i": _b64e(_np_contig(at, dtype=_np_i32)).decode(),
                                                   "v": _b64e(_np_contig(arr[at])).decode()}}
    return out


_ntargets, _npatched = _install()
_TAMPER = _tamper_snapshot()
_MODS0 = set(_sys.modules)
_ALLOWED = set(getattr(_sys, "stdlib_module_names", ())) | {"numpy", "scipy", "fem_solver",
                                                                 "__mp_main__"}


def _new_modules():
    return sorted({m.split(".")[0] for m in set(_sys.modules) - _MODS0} - _ALLOWED)[:20]


def _compiled():
    """fem_solver.py compiled once here (compiling runs none of it), so that each job only
    executes it into a fresh module; None when it does not compile (the job's import then
    reports the error)."""
    try:
        with open(_os.path.join(_SUBDIR, "fem_solver.py"), "rb") as fh:
            return compile(fh.read(), _os.path.join(_SUBDIR, "fem_solver.py"), "exec",
                           dont_inherit=True)
    except BaseException:
        return None


_CODE = _compiled()


def _import_solver():
    """A fresh fem_solver module, as `import fem_solver` makes it."""
    if _CODE is None:
        import fem_solver
        return fem_solver
    spec = _importlib_util.spec_from_file_location("fem_solver", _os.path.join(_SUBDIR, "fem_solver.py"))
    mod = _importlib_util.module_from_spec(spec)
    _sys.modules["fem_solver"] = mod
    try:
        exec(_CODE, mod.__dict__)
    except BaseException:
        _sys.modules.pop("fem_solver", None)
        raise
    return mod


def _run_job(job):
    """One solve(n) in a fresh child: import fem_solver, call, report the field."""
    n = int(job["n"])
    _ST["n"] = n
    seal = _SEALS.pop(str(job["id"]), None)
    _SEALS.clear()                  # this child's copy: it keeps only its own secret
    _np.random.seed()               # numpy's global generator: fresh entropy, as in a fresh process
    # (forked, every job would inherit the warm parent's state: unseeded np.random draws would
    # repeat in every call and read as deterministic; Python's random reseeds itself at fork)
    before = _snapshot()
    t0 = _time.monotonic()
    try:
        _sub = _import_solver()
        err = None
    except BaseException as e:
        _sub, err = None, (type(e).__name__ + ": " + str(e))[:400]
    solve = getattr(_sub, "solve", None) if _sub is not None else None
    kids = _children()
    msg = {"kind": "mesh", "n": n, "import": {
        "ok": _sub is not None, "error": err, "has_solve": callable(solve),
        "writes": _diff(before, _snapshot()), "wall": _time.monotonic() - t0,
        "processes": len(kids), "targets": _ntargets, "patched": _npatched}}
    _block_processes()
    if kids:                        # a solve in those processes could not be observed
        msg.update(fields=None, error="importing fem_solver started %d process(es): a solve in "
                   "another process cannot be observed" % len(kids), calls=[], ncalls=0, writes=[])
    elif callable(solve):
        before = _snapshot()
        _ST["calls"], _ST["depth"], _ST["seq"] = [], 0, 0     # asks: counted over the whole job
        t = _time.monotonic()
        try:
            msg.update(fields=_fields(solve(n), n), error=None)
        except BaseException as e:
            msg.update(fields=None, error=(type(e).__name__ + ": " + str(e))[:400])
        msg.update(wall=_time.monotonic() - t, calls=_ST["calls"][:64], ncalls=len(_ST["calls"]),
                   asks=_ST["asks"],
                   writes=_diff(before, _snapshot()))
    _tampered()
    msg["tamper"] = _ST["tamper"][:20]
    msg["new_modules"] = _new_modules()
    msg["seal"] = seal
    send(msg)


# One secret per job, drawn here in the warm parent and sent to the grader on the parent's own
# channel (a job child's lines are tagged with its job, so it cannot send this); each job's
# result message carries its own secret, so a result message the submission writes onto the
# channel itself is told from the driver's.
import secrets as _secrets
_SEALS = {str(_j["id"]): _secrets.token_hex(16) for _j in _REQ["jobs"]}
send({"kind": "seals", "seals": _SEALS})
fork_jobs(_REQ["jobs"], _run_job, _REQ.get("concurrency", 1))
send({"kind": "done"})
for _stream in (_sys.stdout, _sys.stderr):
    _stream.flush()
_os._exit(0)                        # nothing left to finalise: skip the interpreter's teardown
'''


# =============================================================================
# 5-8. PROVENANCE: the stiffness solve, its map onto the statement's unknowns,
# and the reconstruction of the field from it (pure functions)
# =============================================================================
# A recorded solve of dimension m = 2(n-1) is the statement's system when its
# matrix A = alpha D P^T K P D for a permutation P of the unknowns, a diagonal
# D (equilibration, scaled slopes, signs) and a factor alpha: normalised by its
# own diagonal, A is a permuted, sign-flipped copy of K normalised by K's
# diagonal, whose off-diagonal entries are only 1/2 (value-value), 1/4
# (slope-slope) and sqrt(3)/4 (value-slope of neighbouring nodes).  Its
# right-hand side must then be gamma D P^T F (gamma = sign(alpha) |alpha|^(1/2)),
# F the load vector, and its output maps back to the statement's (value, slope)
# unknowns as u = P D z.
_FREE_SYSTEMS: dict = {}


def free_system(n: int) -> tuple:
    """(K, F, Kabs): the statement's free 2(n-1) stiffness matrix (CSR, interleaved
    value/slope; exact entries when n is a power of two), the grader's
    `grader_gauss_points` load vector, and |K| (for round-off bounds).  Cached."""
    import numpy as np
    import scipy.sparse
    if n in _FREE_SYSTEMS:
        return _FREE_SYSTEMS[n]
    h = 1.0 / n
    ndof = 2 * (n + 1)
    ke = np.array([[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                   [-12, -6 * h, 12, -6 * h], [6 * h, 2 * h * h, -6 * h, 4 * h * h]]) / h**3
    tq, wq = np.polynomial.legendre.leggauss(SPEC["grader_gauss_points"])
    tq, wq = (tq + 1) / 2, wq / 2
    elems = np.arange(n)
    fe = h * (load_f((elems[:, None] + tq[None, :]) * h) * wq) @ hermite_shapes(tq, h)
    rhs = np.zeros(ndof)
    for a in range(4):
        np.add.at(rhs, 2 * elems + a, fe[:, a])
    d = np.arange(4)
    rows = (2 * elems[:, None] + np.repeat(d, 4)[None, :]).ravel()
    cols = (2 * elems[:, None] + np.tile(d, 4)[None, :]).ravel()
    K = scipy.sparse.coo_matrix((np.tile(ke.ravel(), n), (rows, cols)), shape=(ndof, ndof)).tocsr()
    K = K[2:-2][:, 2:-2].tocsr()
    K.eliminate_zeros()
    _FREE_SYSTEMS[n] = (K, rhs[2:-2].copy(), abs(K))
    return _FREE_SYSTEMS[n]


def rhs_tol(n: int) -> float:
    """Relative tolerance on a load vector (see SPEC "rhs_rel_32")."""
    return SPEC["rhs_rel_32"] * (SPEC["meshes"][0] / n) ** SPEC["rhs_rel_power"]


@dataclasses.dataclass(frozen=True)
class StiffnessMap:
    """How a recorded system maps onto the statement's: K position q is the
    system's unknown perm[q]; dt[q] = sign * sqrt(|A_qq| / K_qq) (= |alpha|^(1/2) D_q);
    sigma the sign of A's diagonal (of alpha)."""
    perm: object
    dt: object
    sigma: float


def _chain(nodes, pairs) -> list:
    """The nodes in path order along `pairs` (an undirected simple path), or []."""
    nbr = {v: [] for v in nodes.tolist()}      # (numpy scalars one by one cost ms per mesh)
    for a, b in pairs:
        if a in nbr and b in nbr and b not in nbr[a]:
            nbr[a].append(b)
    ends = [v for v, ns in nbr.items() if len(ns) == 1]
    if len(nbr) == 1:
        return list(nbr)
    if len(ends) != 2 or any(len(ns) > 2 for ns in nbr.values()):
        return []
    path, prev = [min(ends)], None
    while len(path) < len(nbr):
        nxt = [w for w in nbr[path[-1]] if w != prev]
        if not nxt:
            return []
        prev = path[-1]
        path.append(nxt[0])
    return path if len(set(path)) == len(nbr) else []


def stiffness_maps(A, n: int) -> tuple:
    """([StiffnessMap, ...], reason): the ways the square sparse matrix A is the
    statement's free stiffness matrix under a DOF permutation, a symmetric diagonal
    scaling and a common factor (the mirror image x -> 1 - x is a second map; the
    load vector decides between them), or ([], why not)."""
    import numpy as np
    import scipy.sparse
    m = 2 * (n - 1)
    if A.shape != (m, m):
        return [], f"dimension {A.shape[0]}x{A.shape[1]}, expected {m} = 2(n-1)"
    A = scipy.sparse.csr_matrix(A, dtype=np.float64)
    A.sum_duplicates()
    if not np.all(np.isfinite(A.data)):
        return [], "non-finite entries"
    d = A.diagonal()
    if np.any(d == 0):
        return [], "a zero on the diagonal"
    sigma = float(np.sign(d[0]))
    if np.any(np.sign(d) != sigma):
        return [], "diagonal entries of both signs (no scaling of K has that)"
    s = 1.0 / np.sqrt(np.abs(d))
    C = A.tocoo()
    v = sigma * C.data * s[C.row] * s[C.col]
    off = (C.row != C.col) & (np.abs(v) > SPEC["stiffness_entry_tol"])
    r, c, v = C.row[off].astype(np.int64), C.col[off].astype(np.int64), v[off]
    refs = (0.5, 0.25, math.sqrt(3) / 4)          # value-value, slope-slope, value-slope
    cls = np.full(v.size, -1)
    for k, ref in enumerate(refs):
        cls[np.abs(np.abs(v) - ref) <= SPEC["stiffness_entry_tol"]] = k
    if np.any(cls < 0):
        i = int(np.flatnonzero(cls < 0)[0])
        return [], (f"normalised entry A[{r[i]},{c[i]}] = {v[i]:.6g} is none of +-1/2, +-1/4, "
                    "+-sqrt(3)/4 (the entries of K over its diagonal)")
    values = np.unique(r[cls == 0])
    slopes = np.unique(r[cls == 1])
    if values.size != n - 1 or slopes.size != n - 1 or np.intersect1d(values, slopes).size:
        return [], (f"{values.size} value-like and {slopes.size} slope-like unknowns, expected "
                    f"{n - 1} of each")
    vchain = _chain(values, zip(r[cls == 0].tolist(), c[cls == 0].tolist()))
    schain = _chain(slopes, zip(r[cls == 1].tolist(), c[cls == 1].tolist()))
    if not vchain or not schain:
        return [], "the value or slope couplings do not form one chain of nodes"
    vs = set(zip(r[cls == 2].tolist(), c[cls == 2].tolist()))
    Khat = free_system(n)[0]
    kd = 1.0 / np.sqrt(Khat.diagonal())
    Khat = scipy.sparse.diags(kd) @ Khat @ scipy.sparse.diags(kd)
    Bn = scipy.sparse.csr_matrix((sigma * C.data * s[C.row] * s[C.col], (C.row, C.col)), shape=(m, m))
    maps = []
    for vals_, slps in ((vchain, schain), (vchain[::-1], schain[::-1])):
        if n > 2 and (vals_[1], slps[0]) not in vs:
            slps = slps[::-1]
            if (vals_[1], slps[0]) not in vs:
                continue
        perm = np.empty(m, dtype=np.int64)
        perm[0::2], perm[1::2] = vals_, slps
        B = Bn[perm][:, perm]
        # signs t with B = T Khat T: along the value chain (K = -1/2), the slope chain
        # (+1/4), and one value-slope coupling (K(v_1, s_2) = +sqrt(3)/4)
        t = np.ones(m)
        if n > 2:
            vv = np.sign(np.asarray(B[np.arange(0, m - 2, 2), np.arange(2, m, 2)]).ravel())
            ss = np.sign(np.asarray(B[np.arange(1, m - 2, 2), np.arange(3, m, 2)]).ravel())
            t[0::2] = np.concatenate([[1.0], np.cumprod(-vv)])
            link = np.sign(B[0, 3]) * t[0] * ss[0]
            t[1::2] = link * np.concatenate([[1.0], np.cumprod(ss)])
        T = scipy.sparse.diags(t)
        diff = abs(B - T @ Khat @ T)
        worst_dev = float(diff.max()) if diff.nnz else 0.0
        if worst_dev > SPEC["stiffness_entry_tol"]:
            return [], (f"permuted and normalised, the matrix differs from K by {worst_dev:.3g} "
                        "(not a scaled, reordered stiffness matrix)")
        dt = t * np.sqrt(np.abs(d[perm]) / free_system(n)[0].diagonal())
        maps.append(StiffnessMap(perm, dt, sigma))
    if not maps:
        return [], "slopes and values are not coupled as neighbouring nodes are"
    return maps, ""


def fit_load(maps: list, b, n: int) -> tuple:
    """(map, gamma, rel): the map under which the right-hand-side column b is
    gamma D P^T F (F the grader's load vector), gamma by least squares in the
    statement's unknowns, and rel = max_q |b_q / (gamma dt_q) - F_q| / max |F| there
    (so that the tolerance does not depend on the submission's scaling).  The
    smaller rel over the maps (a system and its mirror image)."""
    import numpy as np
    F = free_system(n)[1]
    best = (None, 0.0, math.inf)
    scale = float(np.max(np.abs(F)))
    with np.errstate(all="ignore"):
        for mp in maps:
            bh = b[mp.perm] / mp.dt
            gamma = float(np.dot(bh, F)) / float(np.dot(F, F))
            if not gamma or not math.isfinite(gamma):
                continue
            rel = float(np.max(np.abs(bh / gamma - F)) / scale)
            if rel < best[2]:
                best = (mp, gamma, rel)
    return best


def statement_unknowns(mp: StiffnessMap, gamma: float, z):
    """The statement's free (value, slope) unknowns u = P D z for an output column z."""
    return mp.sigma * mp.dt * z[mp.perm] / gamma


def field_of(u, n: int) -> tuple:
    """(uh_nodes, uh_dense) of the free unknowns u (clamped ends added)."""
    import numpy as np
    coef = np.zeros(2 * (n + 1))
    coef[2:-2] = u
    return coef[0::2].copy(), hermite_field(coef, n)


def fit_01(candidates: list, nodes, dense) -> tuple:
    """(c, lam, residual, scale): the 0/1 combination c of the candidate fields
    [(nodes_k, dense_k), ...] and the common factor lam (least squares; it absorbs
    the load-vector tolerance in the scale gamma of the unknowns) that come closest
    to the returned field in max norm, that deviation, and the scale the
    reconstruction tolerance is relative to."""
    import itertools
    import numpy as np
    f = np.concatenate([nodes, dense])
    fmax = float(np.max(np.abs(f))) if np.all(np.isfinite(f)) else math.inf
    if not candidates:
        return (), 0.0, fmax, fmax
    Phi = np.stack([np.concatenate(cd) for cd in candidates], axis=1)
    k = Phi.shape[1]
    if k <= SPEC["fit_enumerate_max"]:
        combos = list(itertools.product((0, 1), repeat=k))[1:]
    else:
        ok = np.all(np.isfinite(Phi), axis=0)
        coef = np.zeros(k)
        if ok.any() and math.isfinite(fmax):
            coef[ok] = np.linalg.lstsq(Phi[:, ok], f, rcond=None)[0]
        combos = [tuple(int(x) for x in np.clip(np.round(coef), 0, 1))]
    best = ((), 0.0, fmax, fmax)
    with np.errstate(all="ignore"):
        for c in combos:
            sel = np.array(c, dtype=bool)
            if not sel.any():
                continue
            pred = Phi[:, sel].sum(axis=1)
            pp = float(np.dot(pred, pred))      # np.dot: `@` on vectors is far slower here
            lam = float(np.dot(pred, f)) / pp if pp > 0 else 0.0
            res = float(np.max(np.abs(lam * pred - f)))
            if not math.isfinite(res) or res >= best[2]:
                continue
            best = (tuple(c), lam, res, max(fmax, float(np.max(np.abs(pred)))))
    return best


def reconstruction_tol(scale: float) -> float:
    return SPEC["reconstruction_rel"] * max(scale, SPEC["reconstruction_floor"])


def load_residual(u, n: int) -> tuple:
    """(residual, bound): max |K u - F| (in extended precision where available) and
    what the load tolerance plus a backward-stable solve's round-off allow."""
    import numpy as np
    K, F, Kabs = free_system(n)
    C = K.tocoo()
    acc = np.zeros(F.size, dtype=np.longdouble)
    np.add.at(acc, C.row, C.data.astype(np.longdouble) * u[C.col].astype(np.longdouble))
    res = float(np.max(np.abs(acc - F.astype(np.longdouble))))
    bound = rhs_tol(n) * float(np.max(np.abs(F))) + \
        SPEC["residual_roundoff"] * float(np.finfo(float).eps) * float(np.max(Kabs @ np.abs(u)))
    return res, bound

# =============================================================================
# 5-8. PROVENANCE: the grader's side of the audit, live (answers the child's asks)
# =============================================================================
def _b64_array(text, dtype: str, count: int):
    """A 1-D array decoded from base64 with exactly `count` items, or None."""
    import numpy as np
    if not isinstance(text, str) or not isinstance(count, int) or count < 0:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (TypeError, ValueError):
        return None
    if len(raw) != count * np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(raw, dtype=dtype).copy()


def decode_array(msg, m: int):
    """A recorded right-hand side / output: float64, shape (m,) or (m, k), else None."""
    if not isinstance(msg, dict) or not isinstance(msg.get("shape"), list):
        return None
    shape = msg["shape"]
    if not (1 <= len(shape) <= 2 and all(isinstance(s, int) and s > 0 for s in shape)
            and shape[0] == m):
        return None
    count = math.prod(shape)
    arr = _b64_array(msg.get("b64"), "<f8", count)
    return None if arr is None else arr.reshape(shape)


def decode_matrix(msg, m_expected: int):
    """A recorded matrix as CSR, or (None, why).  Only the statement's dimension is
    decoded (a record cannot make the grader allocate more than it)."""
    import scipy.sparse
    if not isinstance(msg, dict):
        return None, "its matrix could not be read (an operator object?)"
    shape = msg.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(s, int) for s in shape)):
        return None, "its matrix could not be read"
    if shape[0] != shape[1]:
        return None, f"its matrix is {shape[0]}x{shape[1]}, not square"
    if shape[0] != m_expected:
        return None, f"dimension {shape[0]}, expected {m_expected} = 2(n-1)"
    nnz = msg.get("nnz")
    if "r" not in msg or not isinstance(nnz, int) or not 0 <= nnz <= 16 * m_expected:
        return None, (f"its matrix has {nnz} nonzeros (K has at most 7 a row)" if isinstance(nnz, int)
                      else "its matrix could not be read")
    r, c, v = (_b64_array(msg.get(k), t, nnz) for k, t in (("r", "<i4"), ("c", "<i4"), ("v", "<f8")))
    m = shape[0]
    if r is None or c is None or v is None or (nnz and (min(r.min(), c.min()) < 0 or
                                                        max(r.max(), c.max()) >= m)):
        return None, "its matrix record is malformed"
    return scipy.sparse.csr_matrix((v, (r, c)), shape=(m, m)), ""


class AuditSession:
    """Every library call of every job, as the child makes it.  Solves are answered
    at once: in a clean job with "unchanged", in an audited job (only if the matrix
    is the statement's) with the grader's own substitute, drawn here after the
    child has shown the real output.  Pure bookkeeping besides: judging is done
    from `calls` afterwards (judge(): each job's judgment computed once, for every
    check that reads it)."""

    def __init__(self, plan: dict):
        self.plan = plan                    # job id -> {"n": n, "mode": "clean"|"substitute"|"nan"}
        self.calls = {jid: [] for jid in plan}
        self.asked = {jid: 0 for jid in plan}   # audit asks received (factor/solve/inverse)
        self.factors: dict = {}             # (job, fid) -> matrix verdict
        self.cache: dict = {}               # matrix digest -> verdict
        self.rng = None                     # drawn at the first substitute (numpy not imported yet)
        self.faults: list = []
        self.lock = threading.Lock()
        self.judged: dict = {}              # id(a job's calls) -> judge_job of its own field

    def judge(self, n: int, calls: list, fields) -> dict:
        """judge_job of a job's calls and its own returned field, once per job."""
        if id(calls) not in self.judged:
            self.judged[id(calls)] = judge_job(n, calls, fields)
        return self.judged[id(calls)]

    def verdict(self, mat, n: int) -> dict:
        """{"K": bool, "why", "maps", "digest", "dim"} for a matrix record (cached by content:
        the record's own strings are the key, so a hit is an exact match, at the cost of one
        string hash and comparison; "digest" names the cached entry)."""
        parts = [mat.get(k) if isinstance(mat, dict) else None for k in ("shape", "r", "c", "v")]
        key = tuple(p if isinstance(p, str) else repr(p) for p in parts)
        if (key, n) not in self.cache:
            A, why = decode_matrix(mat, 2 * (n - 1))
            maps = []
            if A is not None:
                maps, why = stiffness_maps(A, n)
            self.cache[(key, n)] = {"K": bool(maps), "why": why, "maps": maps,
                                    "digest": f"matrix-{len(self.cache)}",
                                    "dim": A.shape[0] if A is not None else
                                    (mat.get("shape") or [None])[0] if isinstance(mat, dict) and
                                    isinstance(mat.get("shape"), list) else None,
                                    "A": A if maps else None}
        return self.cache[(key, n)]

    def interact(self, body):
        try:
            with self.lock:
                return self._handle(body)
        except Exception as exc:            # never escapes into the runner
            self.faults.append(f"{type(exc).__name__}: {exc}"[:200])
            return None

    def _handle(self, body):
        import numpy as np
        if not isinstance(body, dict) or body.get("job") not in self.plan:
            return None
        jid = body["job"]
        job = self.plan[jid]
        n = job["n"]
        calls = self.calls[jid]
        if body.get("kind") in ("factor", "solve", "inverse"):
            self.asked[jid] += 1
        if len(calls) >= SPEC["max_calls"]:
            return None
        fn = str(body.get("fn"))[:80]
        fid = body.get("fid") if isinstance(body.get("fid"), int) else None
        if body.get("kind") == "factor":
            v = self.verdict(body.get("mat"), n)
            if fid is not None:
                self.factors[(jid, fid)] = v
            calls.append({"fn": fn, "kind": "factor", "K": v["K"], "why": v["why"], "dim": v["dim"]})
            return None
        if body.get("kind") == "inverse":
            return self._inverse(jid, job, fn, body)
        if body.get("kind") != "solve":
            return None
        if isinstance(body.get("unobservable"), str):     # the recorder could not own an operand
            v = {"K": False, "why": "its matrix could not be read: " + body["unobservable"][:160],
                 "maps": [], "digest": None, "dim": None}
        elif body.get("mat") is not None or fid is None:
            v = self.verdict(body.get("mat"), n)
        else:
            v = self.factors.get((jid, fid), {"K": False, "why": "applies an unknown factorisation",
                                              "maps": [], "digest": None, "dim": None})
        m = 2 * (n - 1)
        z = decode_array(body.get("out"), m)
        rhs = decode_array(body.get("rhs"), m)
        rec = {"fn": fn, "kind": "solve", "K": v["K"], "why": v["why"], "maps": v["maps"],
               "digest": v["digest"], "dim": body.get("dim"), "z": z, "rhs": rhs, "sub": None,
               "A": v.get("A"), "changed": body.get("changed") if isinstance(body.get("changed"), int)
               else None}
        calls.append(rec)
        if z is None or not v["K"] or job["mode"] == "clean":
            return {"sub": None}
        if self.rng is None:
            self.rng = np.random.default_rng(secrets.randbits(128))
        if job["mode"] == "nan":
            sub = z.copy()
            sub[self.rng.choice(m, size=SPEC["audit_nan_entries"], replace=False)] = math.nan
        else:       # random entries of the solution's own scale, independent per entry
            scale = float(np.max(np.abs(z))) if np.all(np.isfinite(z)) and z.size else 1.0
            sub = z * (1 + self.rng.uniform(-0.5, 0.5, z.shape)) + \
                SPEC["audit_additive"] * (scale or 1.0) * self.rng.standard_normal(z.shape)
        rec["sub"] = sub
        return {"sub": base64.b64encode(np.ascontiguousarray(sub, dtype="<f8").tobytes()).decode("ascii")}

    def _inverse(self, jid, job, fn, body):
        """An explicit inverse Z of the stiffness matrix: substituted by Z + u v^T (random u;
        v with the signs of the load in the system's unknowns, so that v^T b is far from 0)
        or by NaN rows.  The field's change must then be (v^T b / gamma) times the
        reconstruction of u mapped back (judge_inverse)."""
        import numpy as np
        n = job["n"]
        m = 2 * (n - 1)
        v = self.verdict(body.get("mat"), n)
        rec = {"fn": fn, "kind": "inverse", "K": v["K"], "why": v["why"], "maps": v["maps"],
               "digest": v["digest"], "dim": v["dim"], "rank1": None, "sub": None}
        self.calls[jid].append(rec)
        if not v["K"] or job["mode"] == "clean":
            return None
        if self.rng is None:
            self.rng = np.random.default_rng(secrets.randbits(128))
        if job["mode"] == "nan":
            rows = [int(i) for i in self.rng.choice(m, size=SPEC["audit_nan_entries"], replace=False)]
            rec["sub"] = "nan"
            return {"nanrows": rows}
        mp = v["maps"][0]
        F = free_system(n)[1]
        u = self.rng.standard_normal(m)
        w = np.empty(m)
        w[mp.perm] = np.sign(mp.dt * F) * self.rng.uniform(0.5, 1.0, m)
        rec["rank1"], rec["sub"] = (u, w), "rank1"
        enc = lambda a: base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")
        return {"rank1": [enc(u), enc(w)]}


# =============================================================================
# 5-8. PROVENANCE: judging the recorded runs (pure functions of the messages)
# =============================================================================
def _num(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _as_list(value) -> list:
    return value if isinstance(value, list) else []


def _grid_field(rec: dict, size: int, cid: str, what: str):
    """A returned grid sent as its differences from the prescribed one (i/(size-1)): the
    indices where its bits differ and its values there (the driver's encoding)."""
    import numpy as np
    try:
        at = np.frombuffer(base64.b64decode(rec.get("i"), validate=True), dtype="<i4")
        vals = np.frombuffer(base64.b64decode(rec.get("v"), validate=True), dtype="<f8")
    except (TypeError, ValueError):
        at = vals = None
    if at is None or at.size != vals.size or at.size > size or \
            (at.size and (int(at.min()) < 0 or int(at.max()) >= size)):
        raise Reject(cid, f"{what} is not a float64 array")
    arr = np.arange(size) / (size - 1)
    arr[at] = vals
    return arr


def _field(msg: dict, key: str, shape: tuple, cid: str):
    """A returned field as float64, shape-checked (numpy.testing order: shape first)."""
    import numpy as np
    f = (msg.get("fields") or {}).get(key) if isinstance(msg.get("fields"), dict) else None
    if not isinstance(f, dict) or not isinstance(f.get("shape"), list):
        raise Reject(cid, f"n={msg.get('n')}: {key} not returned")
    if tuple(f["shape"]) != shape or not isinstance(f.get("b64") or f.get("grid"), (str, dict)):
        raise Reject(cid, f"n={msg.get('n')}: {key} has shape {tuple(f['shape'])}, expected {shape}",
                     f["shape"], list(shape))
    if isinstance(f.get("grid"), dict) and key.startswith("x_") and shape[0] > 1:
        return _grid_field(f["grid"], shape[0], cid, f"n={msg.get('n')}: {key}")
    try:
        arr = np.frombuffer(base64.b64decode(f["b64"], validate=True), dtype=np.float64).copy()
    except (TypeError, ValueError):
        raise Reject(cid, f"n={msg.get('n')}: {key} is not a float64 array")
    if arr.shape != shape:
        raise Reject(cid, f"n={msg.get('n')}: {key} data length {arr.size}, expected {shape[0]}")
    return arr


def outcome_note(outcome) -> str:
    if outcome is None:
        return "not run"
    return {"timeout": f"timed out ({outcome.reason})", "crashed": outcome.reason,
            "no_reply": outcome.reason, "error": outcome.reason}.get(outcome.status, "")


def plan_jobs() -> dict:
    """{job id: {"n", "mode"}}: at every mesh `clean_runs` clean calls and one with the
    solve output substituted; NaN substitution at `audit_nan_meshes`.  Ids are random
    (the child learns nothing from them); the finest meshes come first (the longest calls:
    the cores stay busy to the end) and within a mesh the order is shuffled, so a call's
    place says nothing of its mode."""
    plan = {}
    for n in SPEC["meshes"]:
        modes = ["clean"] * SPEC["clean_runs"] + ["substitute"]
        modes += ["nan"] if n in SPEC["audit_nan_meshes"] else []
        for mode in modes:
            plan[secrets.token_hex(8)] = {"n": n, "mode": mode}
    order = list(plan)
    secrets.SystemRandom().shuffle(order)
    order.sort(key=lambda jid: -plan[jid]["n"])        # stable: shuffled within a mesh
    return {jid: plan[jid] for jid in order}


def job_results(outcome, plan: dict) -> dict:
    """{job id: {"mesh": the job's mesh message or None, "end": its job_end or None}}."""
    out = {jid: {"mesh": None, "end": None, "meshes": 0, "unsealed": 0} for jid in plan}
    msgs = [m for m in (outcome.messages if outcome else []) if isinstance(m, dict)]
    seals = {}                      # the warm parent's (a job child's lines carry "job")
    for m in msgs:
        if m.get("kind") == "seals" and "job" not in m and isinstance(m.get("seals"), dict):
            seals.update(m["seals"])
    for m in msgs:
        if m.get("job") not in out:
            continue
        slot = out[m["job"]]
        if m.get("kind") == "mesh":
            slot["meshes"] += 1
            if not (isinstance(m.get("seal"), str) and m["seal"] == seals.get(m["job"])):
                slot["unsealed"] += 1       # not the driver's: written by the submission
                continue
        if m.get("kind") == "mesh" and slot["mesh"] is None and m.get("n") == plan[m["job"]]["n"]:
            slot["mesh"] = m
        elif m.get("kind") == "job_end" and slot["end"] is None:
            slot["end"] = m
    return out


def job_failure(res: dict, outcome) -> str:
    """Why a job gave no field."""
    m, end = res["mesh"], res["end"]
    if m is not None and m.get("error"):
        return str(m["error"])
    if m is not None and isinstance(m.get("import"), dict) and not m["import"].get("ok"):
        return f"import failed: {m['import'].get('error')}"
    if isinstance(end, dict) and end.get("status") == "timeout":
        return f"did not finish within the budget ({end.get('reason')})"
    if isinstance(end, dict) and end.get("status") not in (None, "ok"):
        return f"{end.get('status')} ({end.get('reason')})"
    return outcome_note(outcome) or "no result"


def jobs_of(plan: dict, mode: str) -> dict:
    """{n: [job ids]} of one mode, in mesh order."""
    out: dict = {}
    for jid, job in plan.items():
        if job["mode"] == mode:
            out.setdefault(job["n"], []).append(jid)
    return out


def job_candidates(n: int, calls: list) -> list:
    """The candidate fields of a job: every column of every recorded stiffness solve
    (as the submission received it: substituted in an audited job), mapped onto the
    statement's unknowns.  The scale of a system comes from a solve of it whose
    right-hand side is the load vector; a solve of the same matrix with another
    right-hand side (a refinement step) borrows it."""
    import numpy as np
    scales = {}
    for c in calls:
        if c["kind"] != "solve" or not c["K"] or c["rhs"] is None:
            continue
        cols = c["rhs"] if c["rhs"].ndim == 2 else c["rhs"][:, None]
        c["loads"] = []
        for j in range(cols.shape[1]):
            mp, gamma, rel = fit_load(c["maps"], cols[:, j], n)
            c.setdefault("rel", []).append(rel)
            if mp is not None and rel <= rhs_tol(n):
                c["loads"].append(j)
                scales.setdefault(c["digest"], (mp, gamma))
    cands = []
    for k, c in enumerate(calls):
        got = c.get("sub") if c.get("sub") is not None else c.get("z")
        if c["kind"] != "solve" or not c["K"] or got is None:
            continue
        scale = scales.get(c["digest"])
        if scale is None:           # same map as a system with a known scale?
            scale = next((sc for sc in scales.values() for mp in c["maps"]
                          if np.array_equal(mp.perm, sc[0].perm)
                          and np.allclose(mp.dt, sc[0].dt, rtol=1e-12, atol=0)), None)
        if scale is None:
            continue
        cols = got if got.ndim == 2 else got[:, None]
        for j in range(cols.shape[1]):
            if len(cands) >= SPEC["max_candidates"]:
                return cands
            u = statement_unknowns(scale[0], scale[1], cols[:, j])
            nodes, dense = field_of(u, n)
            cands.append({"call": k, "col": j, "u": u, "nodes": nodes, "dense": dense, "scale": scale,
                          "load": j in c.get("loads", ()), "substituted": c.get("sub") is not None})
    return cands


def judge_job(n: int, calls: list, fields) -> dict:
    """Reconstruction of one job's returned field from its recorded stiffness solves:
    {"ksolves", "cands", "c", "lam", "res", "tol", "ok", "load", "residual", "bound"}."""
    ks = [c for c in calls if c["kind"] == "solve" and c["K"]]
    out = {"ksolves": len(ks), "cands": 0, "ok": False, "load": False, "res": math.inf, "tol": 0.0,
           "residual": math.inf, "bound": 0.0, "lam": 0.0, "c": ()}
    if not ks or fields is None:
        return out
    cands = job_candidates(n, calls)
    out["cands"] = len(cands)
    if not cands:
        return out
    c, lam, res, scale = fit_01([(d["nodes"], d["dense"]) for d in cands], fields[0], fields[1])
    tol = reconstruction_tol(scale)
    sel = [d for d, ci in zip(cands, c) if ci]
    out["unsolved"] = [calls[d["call"]]["fn"] for d in sel if not d["substituted"]
                       and not output_solves(calls[d["call"]], d["col"])]
    out.update(c=c, lam=lam, res=res, tol=tol, ok=res <= tol and abs(lam - 1) <= lam_tol(n) and bool(sel),
               load=any(d["load"] for d in sel), substituted=any(d["substituted"] for d in sel),
               picked=[(d["call"], d["col"]) for d in sel])
    if sel and all(not d["substituted"] for d in sel):
        import numpy as np
        u = lam * np.sum([d["u"] for d in sel], axis=0)
        out["residual"], out["bound"] = load_residual(u, n)
    return out


def output_residual(call: dict, col: int) -> tuple:
    """(max |A z - b|, bound) of a recorded output column against its own recorded system,
    the bound a backward-stable solve's round-off: residual_roundoff eps (max |A||z| +
    max |b|); (inf, 0) when it cannot be evaluated."""
    import numpy as np
    A, z, b = call.get("A"), call.get("z"), call.get("rhs")
    if A is None or z is None or b is None:
        return math.inf, 0.0
    z = z if z.ndim == 1 else z[:, col]
    b = b if b.ndim == 1 else b[:, min(col, b.shape[1] - 1)]
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(b))):
        return math.inf, 0.0
    bound = SPEC["residual_roundoff"] * float(np.finfo(float).eps) * (
        float(np.max(abs(A) @ np.abs(z))) + float(np.max(np.abs(b))))
    return float(np.max(np.abs(A @ z - b))), bound


def output_solves(call: dict, col: int) -> bool:
    """Does the recorded output column solve the recorded system to a backward-stable
    solve's round-off?  (A record the submission forged on the channel must at least
    hold a solution of the statement's system.)"""
    res, bound = output_residual(call, col)
    return res <= bound


def unknowns_from_field(nodes, dense, n: int):
    """The free (value, slope) unknowns of a returned field read back from it: values at
    the nodes, slopes by least squares over each element's interior dense points (exact
    for a cubic-Hermite field), the clamped ends zero.  None if not finite."""
    import numpy as np
    from scipy.linalg import solveh_banded
    if not (np.all(np.isfinite(nodes)) and np.all(np.isfinite(dense))) or n < 3:
        return None
    f = SPEC["dense_factor"]
    t = np.arange(1, f) / f
    N = hermite_shapes(t, 1.0 / n)                        # (f-1, 4)
    k = np.arange(n)
    pts = dense[(f * k)[:, None] + np.arange(1, f)[None, :]]              # (n, f-1)
    r = pts - N[:, 0] * nodes[k, None] - N[:, 2] * nodes[k + 1, None]
    a22, a24, a44 = (float(np.dot(N[:, i], N[:, j])) for i, j in ((1, 1), (1, 3), (3, 3)))
    g2, g4 = (r * N[:, 1]).sum(axis=1), (r * N[:, 3]).sum(axis=1)   # per element: s_k, s_{k+1}
    diag = np.full(n + 1, a22 + a44)
    rhs = np.zeros(n + 1)
    np.add.at(rhs, k, g2)
    np.add.at(rhs, k + 1, g4)
    ab = np.zeros((2, n - 1))                             # upper band storage over s_1..s_{n-1}
    ab[0, 1:] = a24
    ab[1] = diag[1:-1]
    s = solveh_banded(ab, rhs[1:-1])
    return np.column_stack([nodes[1:-1], s]).ravel()


def judge_inverse(n: int, calls: list, fields, clean) -> dict:
    """An explicit-inverse path.  Clean (clean is None): the field is a cubic-Hermite field
    whose unknowns solve K u = F.  Audited: the field moved by exactly beta times the
    reconstruction of the substitute's u mapped back, beta = v^T b / gamma predicted from
    the load vector."""
    import numpy as np
    out = {"ok": False, "res": math.inf, "tol": 0.0, "residual": math.inf, "bound": 0.0}
    inv = [c for c in calls if c["kind"] == "inverse" and c["K"]]
    if not inv or fields is None:
        return out
    if clean is None:
        u = unknowns_from_field(fields[0], fields[1], n)
        if u is None:
            return out
        nodes, dense = field_of(u, n)
        res = max(float(np.max(np.abs(nodes - fields[0]))), float(np.max(np.abs(dense - fields[1]))))
        tol = reconstruction_tol(float(np.max(np.abs(fields[1]))))
        out.update(res=res, tol=tol, ok=res <= tol)
        out["residual"], out["bound"] = load_residual(u, n)
        return out
    rec = next((c for c in inv if c.get("rank1") is not None), None)
    if rec is None:
        return out
    d = np.concatenate([fields[0] - clean[0], fields[1] - clean[1]])
    F = free_system(n)[1]
    ur, vr = rec["rank1"]
    scale = max(float(np.max(np.abs(d))), float(np.max(np.abs(fields[1]))))
    out["tol"] = SPEC["inverse_audit_rel"] * scale
    for mp in rec["maps"]:
        hw = np.concatenate(field_of(statement_unknowns(mp, 1.0, ur), n))
        beta = float(np.dot(hw, d)) / float(np.dot(hw, hw))
        terms = vr[mp.perm] * mp.dt * F
        res = float(np.max(np.abs(d - beta * hw)))
        pred_ok = abs(beta - float(np.sum(terms))) <= lam_tol(n) * float(np.sum(np.abs(terms)))
        if res < out["res"]:
            out.update(res=res, ok=res <= out["tol"] and pred_ok, beta=beta, beta_pred=float(np.sum(terms)))
    return out


def lam_tol(n: int) -> float:
    """How far the common factor of a reconstruction may be from 1: the scale of the
    unknowns is read from a right-hand side that may deviate from the grader's load
    vector by rhs_tol (a few times that in the fitted factor)."""
    return SPEC["lam_factor"] * rhs_tol(n) + 1e-12


def _fields_of(msg: dict, n: int):
    """(uh_nodes, uh_dense) of a job's mesh message, or None."""
    try:
        return (_field(msg, "uh_nodes", (n + 1,), "provenance.fields"),
                _field(msg, "uh_dense", (10 * n + 1,), "provenance.fields"))
    except Reject:
        return None


def _call_summary(calls: list) -> str:
    names = sorted({str(c.get("fn")) for c in calls if isinstance(c, dict)})
    return ", ".join(names)[:160] or "none"

def _import_infos(results: dict) -> list:
    return [r["mesh"]["import"] for r in results.values()
            if r["mesh"] is not None and isinstance(r["mesh"].get("import"), dict)]


@guarded
def check_import_phase(outcome, results: dict) -> list:
    """fem_solver importable (in every job), without side effects, exposing solve(n)."""
    infos = _import_infos(results)
    if not infos:
        why = next((job_failure(r, outcome) for r in results.values()), outcome_note(outcome))
        raise Reject("provenance.import", f"fem_solver could not be imported: {why}")
    bad = [i for i in infos if not i.get("ok")]
    if bad:
        raise Reject("provenance.import", f"importing fem_solver raised {bad[0].get('error')}")
    out = [Check("provenance.import", Status.PASS, f"fem_solver imported in {_num(infos[0].get('wall')):.2f} s "
                 f"(fresh in each of {len(infos)} jobs)")]
    writes = sorted({str(w) for i in infos for w in _as_list(i.get("writes"))})
    procs = max((int(_num(i.get("processes"))) for i in infos), default=0)
    why = (["importing fem_solver wrote: " + ", ".join(writes[:5])] if writes else []) + \
        ([f"importing fem_solver started {procs} process(es)"] if procs else [])
    out.append(Check("provenance.import_side_effects", Status.FAIL if why else Status.PASS,
                     "; ".join(why) or "importing fem_solver writes no file and starts no process",
                     writes + ([f"{procs} process(es)"] if procs else [])))
    ok = all(i.get("has_solve") for i in infos)
    out.append(Check("provenance.solve_callable", Status.PASS if ok else Status.FAIL,
                     "fem_solver.solve is callable" if ok else "fem_solver exposes no callable solve(n)"))
    return out


def collect_regeneration(outcome, plan: dict, results: dict, run: int = 0) -> dict:
    """{n: mesh message} of the `run`-th clean job at each mesh; a job that returned
    nothing becomes a message with its failure as the error."""
    out = {}
    for n, jids in jobs_of(plan, "clean").items():
        if len(jids) <= run:
            continue
        res = results[jids[run]]
        m = res["mesh"]
        if m is not None and "fields" in m:
            out[n] = m
        elif res["end"] is not None or m is not None:
            out[n] = {"n": n, "error": job_failure(res, outcome), "failed": True}
    return out


def presub_candidates(n: int, calls: list, k: int) -> list:
    """The candidate fields of call k of a job as its solve returned them, before the
    grader's substitute (what a clean call would have received), from the calls up to it."""
    prefix = [dict({key: v for key, v in c.items() if key not in ("loads", "rel")}, sub=None)
              for c in calls[:k + 1]]
    return [d for d in job_candidates(n, prefix) if d["call"] == k]


def _pointwise(a, b) -> float:
    """max |a - b| over nodes and dense points (inf where shapes differ)."""
    import numpy as np
    if any(np.shape(x) != np.shape(y) for x, y in zip(a, b)):
        return math.inf
    with np.errstate(invalid="ignore"):
        return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def repeat_deviation(n: int, calls: list, clean_calls: list, got, clean_field,
                     judge=judge_job) -> tuple:
    """(deviation, why) of one audited call from the clean call of its mesh, as a second
    regeneration: nothing substituted (no observed stiffness solve) -> its field against the
    clean field; else its first substituted solve's output before the substitute (as
    candidate fields) against the clean call's same solve (unless that solve feeds neither
    field: a random probe), and the load solves feeding both fields must be the same
    (same_sources).  why is "" or the reason they cannot be compared."""
    import numpy as np
    k = next((i for i, c in enumerate(calls) if c.get("sub") is not None), None)
    if k is None:
        return (_pointwise(got, clean_field), "") if got is not None else \
            (math.inf, "a repeated call gave no field")
    if calls[k]["kind"] != "solve":     # an explicit inverse: judge_inverse bounds it, unless a
        if got is None or not any(c["kind"] == "solve" and c.get("sub") is not None for c in calls):
            return 0.0, "inverse"
        ja, jc = judge(n, calls, got), judge(n, clean_calls, clean_field)
        if not (ja["ok"] and jc["ok"]):     # substituted solve feeds the field (the inverse
            return 0.0, "inverse"           # beside it): its load solves are compared as below
        return same_sources(n, calls, clean_calls, ja, jc, clean_field, 0.0)
    same = len(clean_calls) > k and (clean_calls[k]["kind"], clean_calls[k]["fn"]) == \
        (calls[k]["kind"], calls[k]["fn"])
    if not same:
        return math.inf, (f"the library calls up to the first substituted solve ({calls[k]['fn']}) "
                          "differ from the clean call's")
    mine, theirs = presub_candidates(n, calls, k), presub_candidates(n, clean_calls, k)
    if len(mine) != len(theirs):
        return math.inf, (f"the first substituted solve ({calls[k]['fn']}) has {len(mine)} load "
                          f"column(s), the clean call's {len(theirs)}")
    if mine:
        dev = max(_pointwise((a["nodes"], a["dense"]), (b["nodes"], b["dense"]))
                  for a, b in zip(mine, theirs))
    else:                               # no load column gives a scale: the raw outputs, relative
        z, zc = calls[k].get("z"), clean_calls[k].get("z")
        dev = _pointwise((z,), (zc,)) / max(1.0, float(np.max(np.abs(zc)))) if \
            z is not None and zc is not None and zc.size else math.inf
    jc = judge(n, clean_calls, clean_field)
    probe = jc["ok"] and all(p[0] != k for p in jc["picked"])   # it does not feed the clean field
    if got is None or not np.all(np.isfinite(got[1])) or not jc["ok"]:
        return (0.0 if probe else dev), ""      # (a random probe, say; a call without a finite
    ja = judge(n, calls, got)                   # field shows nothing more: the substitute call
    if not ja["ok"]:                            # of its mesh carries the evidence)
        return dev, ""
    if probe and all(p[0] != k for p in ja["picked"]):
        dev = 0.0                               # it feeds neither field: what feeds them is
    if dev <= SPEC["determinism_atol"]:         # compared instead
        return same_sources(n, calls, clean_calls, ja, jc, clean_field, dev)
    return dev, ""


def _load_columns(calls: list, picked: list) -> dict:
    """{(call, column): right-hand side} of the solve columns feeding a field whose right-hand
    side is the load vector (what no substitute can change in a solver that repeats itself)."""
    out = {}
    for k, j in picked:
        c = calls[k]
        if j in c.get("loads", ()):
            out[(k, j)] = c["rhs"] if c["rhs"].ndim == 1 else c["rhs"][:, j]
    return out


def correction_residuals(n: int, calls: list, picked: list, loads: dict) -> str:
    """"" or why a correction solve feeding the clean field (a picked column whose right-hand
    side is not the load) is not a refinement step: its right-hand side must be the residual
    F - K u_prev of the load at the sum of the picked solves before it, to a backward-stable
    residual's round-off (in the statement's unknowns).  Such a step is pinned to the solves
    the determinism check compares; a correction with anything else in its right-hand side
    (random or not) is not, and would carry up to the load tolerance unverified."""
    import numpy as np
    if not loads or all(key in loads for key in picked):
        return ""
    K, _, Kabs = free_system(n)
    cands = {(d["call"], d["col"]): d for d in job_candidates(n, calls)}
    first = cands.get(min(loads))
    if first is None:
        return ""
    mp, gamma = first["scale"]
    b0 = loads[min(loads)][mp.perm] / (mp.dt * gamma)
    eps = float(np.finfo(float).eps)
    for k, j in sorted(picked):
        d = cands.get((k, j))
        if (k, j) in loads or d is None:
            continue
        prev = [cands[p]["u"] for p in picked if p[0] < k and p in cands]
        u_prev = np.sum(prev, axis=0) if prev else np.zeros_like(b0)
        rhs = calls[k]["rhs"]
        if rhs is None or (rhs.ndim == 2 and j >= rhs.shape[1]):
            return (f"the right-hand side of the correction solve {calls[k]['fn']} (call {k}) feeding "
                    "the field could not be read")
        rhs = rhs if rhs.ndim == 1 else rhs[:, j]
        mpk, gk = d["scale"]
        r = rhs[mpk.perm] / (mpk.dt * gk)
        dev = float(np.max(np.abs(r - (b0 - K @ u_prev))))
        bound = SPEC["residual_roundoff"] * eps * (float(np.max(Kabs @ np.abs(u_prev))) +
                                                   float(np.max(np.abs(b0))))
        if not dev <= bound:
            return (f"the correction solve {calls[k]['fn']} (call {k}) feeding the field solves for "
                    f"something else than the residual of the solves before it (|difference| "
                    f"{dev:.3e}, a residual's round-off {bound:.3e})")
    return ""


def same_sources(n: int, calls: list, clean_calls: list, ja: dict, jc: dict, clean_field,
                 dev: float) -> tuple:
    """(deviation, why) of the solves feeding an audited field from those feeding the clean
    field: the load solves among them are the same calls with the same right-hand sides (a
    later load solve does not depend on an earlier solve's output: after the first
    substitute it is still comparable), and the common factor is the same.  Correction
    solves (other right-hand sides, e.g. residuals) may differ: they depend on the
    substitute and run as often as the data asks."""
    import numpy as np
    la, lc = _load_columns(calls, ja["picked"]), _load_columns(clean_calls, jc["picked"])
    if set(la) != set(lc):
        return math.inf, (f"the field is built from other load solves ({sorted(la)}) than in the "
                          f"clean call ({sorted(lc)})")
    for (k, j), b in sorted(lc.items()):
        a = la[(k, j)]
        scale = float(np.max(np.abs(b))) or 1.0
        if calls[k]["fn"] != clean_calls[k]["fn"] or a.shape != b.shape or \
                not float(np.max(np.abs(a - b))) <= SPEC["determinism_atol"] * scale:
            return math.inf, (f"the right-hand side of the load solve {clean_calls[k]['fn']} (call {k}) "
                              "differs from the clean call's by "
                              f"{_pointwise((a,), (b,)) / scale:.3e} relative")
    why = correction_residuals(n, clean_calls, jc["picked"], lc)
    if why:
        return math.inf, why
    lam = abs(ja["lam"] - jc["lam"]) * float(np.max(np.abs(clean_field[1])))
    if not lam <= SPEC["determinism_atol"]:
        return math.inf, (f"the field's common factor differs from the clean call's ({ja['lam']:.17g} "
                          f"for {jc['lam']:.17g}: {lam:.3e} in the field)")
    return max(dev, lam), ""


def check_deterministic(plan: dict, results: dict, session, fields: dict) -> list:
    """A second regeneration of every mesh, read from its audited call(s): up to the grader's
    first substitute an audited call is a clean one, so what its solve returned (before the
    substitute) must equal what the clean call's returned, pointwise as fields (bitwise is
    expected: same code, same inputs, BLAS pinned to one thread; `determinism_atol` is the
    tolerance), from the same solves; after it, each field is tied to its solve outputs by
    the reconstruction (check_solve_system, check_causal).  A call in which nothing was
    substituted is compared field against field."""
    if not fields:
        return [Check("provenance.deterministic", Status.SKIP, "no regenerated fields")]
    lim = SPEC["determinism_atol"]
    clean = {n: jids[0] for n, jids in jobs_of(plan, "clean").items()}
    bad, worst_dev, compared, inverse = [], 0.0, set(), set()
    for jid, job in plan.items():
        n = job["n"]
        if job["mode"] == "clean" or n not in fields:
            continue
        m = results[jid]["mesh"]
        got = _fields_of(m, n) if m is not None and not m.get("error") else None
        dev, why = repeat_deviation(n, session.calls.get(jid, []), session.calls.get(clean[n], []),
                                    got, fields[n][:2], session.judge)
        if why == "inverse":
            inverse.add(n)
        elif why:
            bad.append(f"n={n}: {why}")
        elif not dev <= lim:
            bad.append(f"n={n}: max |difference| {dev:.3e}")
        else:
            compared.add(n)
            worst_dev = max(worst_dev, dev)
    if bad:
        return [Check("provenance.deterministic", Status.FAIL, "solve(n) is not reproducible in one "
                      f"environment: two calls of a mesh differ pointwise by more than {lim:g} before "
                      "the grader's substitute: " + "; ".join(bad[:4]), bad, lim)]
    note = (f"; at n = {sorted(inverse)} (explicit inverse) within the inverse audit's "
            f"{SPEC['inverse_audit_rel']:g} of the field's scale" if inverse else "")
    return [Check("provenance.deterministic", Status.PASS, "a second call of every mesh computes "
                  f"the same field pointwise up to the grader's substitute (max difference "
                  f"{worst_dev:.1e}, limit {lim:g}){note}", worst_dev, lim)]


def _share(value: float, limit: float) -> float:
    """value as a fraction of its limit (inf for a zero limit)."""
    return value / limit if limit else math.inf


def _residual_excess(n: int, j: dict) -> str:
    return f"n={n}: the field's unknowns leave |K u - F| = {j['residual']:.3e} (allowed {j['bound']:.3e})"


def check_solve_system(plan: dict, results: dict, session, fields: dict) -> list:
    """In every clean run: a library solve whose matrix is the statement's stiffness
    matrix (any ordering, scaling, storage) was observed; the field is the
    cubic-Hermite reconstruction of a 0/1 combination of the observed solves'
    outputs; those unknowns solve K u = F within the load tolerance."""
    if not fields:
        return [Check("provenance.solve_observed", Status.SKIP, "no regenerated meshes")]
    wrong, review, seen = {}, {}, []
    load_bad, rec_bad, rec_worst, load_worst = {}, {}, [], []
    for n, jids in jobs_of(plan, "clean").items():
        if n not in fields:
            continue
        for jid in jids:
            m = results[jid]["mesh"]
            got = _fields_of(m, n) if m is not None else None
            if got is None:
                continue
            calls = session.calls.get(jid, [])
            child = [c for c in _as_list(m.get("calls")) if isinstance(c, dict)]
            mdim = 2 * (n - 1)
            ks = [c for c in calls if c["kind"] == "solve" and c["K"]]
            if not ks:
                sized = [c for c in calls if c.get("dim") == mdim]
                unread = [c for c in sized if "could not be read" in str(c.get("why"))]
                not_k = [c for c in sized if c not in unread and c["kind"] in ("solve", "factor")
                         and not c.get("K")]
                inverse = [c for c in child if c.get("kind") == "inverse" and c.get("dim") == mdim]
                k_inverse = [c for c in calls if c["kind"] == "inverse" and c["K"]]
                if k_inverse:
                    seen.append(k_inverse[0]["fn"] + " (explicit inverse)")
                    j = judge_inverse(n, calls, got, None)
                    rec_worst.append((_share(j["res"], j["tol"]), n, j))
                    if not j["ok"]:
                        rec_bad.setdefault(n, f"n={n}: the field is not a cubic-Hermite field "
                                           f"(max |field - its reconstruction| = {j['res']:.2e}, "
                                           f"tolerance {j['tol']:.1e})")
                    elif not j["residual"] <= j["bound"]:
                        load_bad.setdefault(n, _residual_excess(n, j))
                    load_worst.append(_share(j["residual"], j["bound"]))
                    continue
                others = [c for c in child if c.get("kind") == "other" and c.get("dim") == mdim]
                if not_k:
                    wrong.setdefault(n, f"n={n}: {not_k[0]['fn']}: the {mdim}x{mdim} system is not the "
                                 f"stiffness matrix ({not_k[0]['why']})")
                elif inverse:
                    review.setdefault(n, f"n={n}: an explicit inverse ({inverse[0]['fn']}): the vector it "
                                  "is applied to is not observable, nor is the field's dependence on it")
                elif unread:
                    review.setdefault(n, f"n={n}: {unread[0]['fn']} ({mdim} unknowns): "
                                  f"{unread[0]['why']}")
                elif others or sized:
                    review.setdefault(n, f"n={n}: {_call_summary(others or sized)}: a library path the "
                                  "audit cannot follow to the field")
                elif child:
                    wrong.setdefault(n, f"n={n}: no library solve of the free-DOF dimension {mdim} "
                                 f"(dims {sorted({c.get('dim') for c in child if isinstance(c.get('dim'), int)})[:5]})")
                else:
                    review.setdefault(n, f"n={n}: no observable numpy/scipy linear solve (hand-written "
                                  "solver, ctypes or subprocess?)")
                continue
            seen.append(ks[0]["fn"])
            j = session.judge(n, calls, got)
            rec_worst.append((_share(j["res"], j["tol"]), n, j))
            if not j["ok"]:
                why = ("no solve of the stiffness matrix with the load vector as right-hand side "
                       "gives its scale" if not j["cands"] else
                       f"max |field - reconstruction| = {j['res']:.2e} (tolerance {j['tol']:.1e}), "
                       f"best 0/1 combination {list(j['c'])} of {j['cands']} solve output(s), "
                       f"factor {j['lam']:.9g}")
                rec_bad.setdefault(n, f"n={n}: {why}")
                continue
            if j.get("unsolved"):
                load_bad.setdefault(n, f"n={n}: the recorded output of {j['unsolved'][0]} does not "
                                    "solve its recorded system to round-off")
            elif not j["load"]:
                rels = [r for c in ks for r in c.get("rel", [])]
                load_bad.setdefault(n, f"n={n}: no solve feeding the field has the load vector as right-hand "
                                f"side (smallest relative deviation {min(rels, default=math.inf):.2e}, "
                                f"tolerance {rhs_tol(n):.1e})")
            elif not j["residual"] <= j["bound"]:
                load_bad.setdefault(n, _residual_excess(n, j))
            load_worst.append(_share(j["residual"], j["bound"]))
    wrong, review, rec_bad, load_bad = ([d[k] for k in sorted(d)] for d in (wrong, review, rec_bad, load_bad))
    out = []
    if wrong:
        out.append(Check("provenance.solve_observed", Status.FAIL, "; ".join(wrong[:3]), wrong))
    elif review:
        out.append(Check("provenance.solve_observed", Status.REVIEW, "; ".join(review[:3])
                         + " - verify by hand", review))
    else:
        out.append(Check("provenance.solve_observed", Status.PASS, "library solve of the "
                         f"2(n-1) stiffness system in every clean run: {seen[0]}"))
    if not rec_worst and not rec_bad:
        return out
    out.append(Check("provenance.reconstruction", Status.FAIL if rec_bad else Status.PASS,
                     ("the returned field is not the cubic-Hermite reconstruction of the observed "
                      f"stiffness solve at n = {', '.join(m.split(':')[0][2:] for m in rec_bad)}: "
                      + "; ".join(rec_bad[:3])) if rec_bad else
                     "every clean field is the cubic-Hermite reconstruction of its observed stiffness "
                     f"solve(s) to {max(r[0] for r in rec_worst):.2g} of the reconstruction tolerance "
                     f"({SPEC['reconstruction_rel']:g} of the field's scale)",
                     max((r[0] for r in rec_worst), default=None), 1.0))
    if not rec_bad:
        out.append(Check("provenance.load_vector", Status.FAIL if load_bad else Status.PASS,
                         ("the observed solve is not the statement's system: " + "; ".join(load_bad[:3]))
                         if load_bad else "the right-hand side feeding the field is the load vector "
                         f"(relative tolerance {rhs_tol(SPEC['meshes'][0]):g} at n = "
                         f"{SPEC['meshes'][0]}, ~h^{SPEC['rhs_rel_power']}) and its unknowns solve "
                         f"K u = F (worst {max(load_worst, default=0):.2g} of the allowed residual)",
                         max(load_worst, default=None), 1.0))
    return out


def check_causal(plan: dict, results: dict, session, fields: dict) -> list:
    """Audited runs: the observed stiffness solves' outputs replaced by the
    grader's random vectors (every mesh) or NaN at chosen entries
    (audit_nan_meshes); the field must be the reconstruction of the substitutes
    (resp. non-finite, or solve raises)."""
    import numpy as np
    out = []
    solved = {plan[jid]["n"] for jid, calls in session.calls.items() if plan[jid]["mode"] == "clean"
              and any(c["kind"] in ("solve", "inverse") and c["K"] for c in calls)}
    for mode, cid in (("substitute", "provenance.causal_substitution"), ("nan", "provenance.causal_nan")):
        ok, bad, review, unaudited = [], [], [], []
        for n, jids in jobs_of(plan, mode).items():
            if n not in fields:
                continue
            for jid in jids:
                res = results[jid]
                calls = session.calls.get(jid, [])
                subs = [c for c in calls if c.get("sub") is not None]
                m = res["mesh"]
                if not subs:
                    if m is None:
                        bad.append(f"n={n}: {job_failure(res, None)}")
                    elif n in solved:       # the clean runs made a stiffness solve, this one not
                        bad.append(f"n={n}: no stiffness solve in the audited run, though the "
                                   "clean runs made one")
                    else:
                        unaudited.append(n)
                    continue
                if m is None or m.get("error"):
                    if mode == "nan":
                        ok.append(n)
                    else:
                        review.append(f"n={n}: solve(n) stopped ({job_failure(res, None)[:120]})")
                    continue
                got = _fields_of(m, n)
                if got is None:
                    bad.append(f"n={n}: no field returned")
                    continue
                finite = bool(np.all(np.isfinite(got[0])) and np.all(np.isfinite(got[1])))
                if mode == "nan":
                    (bad if finite else ok).append(n if not finite else
                                                   f"n={n}: the field stayed finite with NaN in the solve output")
                    continue
                # an inverse beside a substituted stiffness solve (a condition estimate, say)
                # is judged by the solve: the field must follow the solve's substitute
                j = session.judge(n, calls, got) if any(c["kind"] == "solve" for c in subs) else None
                if j is not None and j["ok"] and j.get("substituted"):
                    ok.append(n)
                    continue
                if any(c["kind"] == "inverse" for c in subs):
                    j = judge_inverse(n, calls, got, fields[n][:2])
                    if j["ok"]:
                        ok.append(n)
                    else:
                        bad.append(f"n={n}: the explicit inverse was replaced by Z + u v^T: max |field "
                                   f"change - beta * reconstruction of u| = {j['res']:.2e} (tolerance "
                                   f"{j['tol']:.1e}), beta {j.get('beta', math.nan):.6g} for "
                                   f"{j.get('beta_pred', math.nan):.6g} predicted")
                    continue
                j = session.judge(n, calls, got) if j is None else j
                if j["ok"] and j.get("substituted"):
                    ok.append(n)
                elif not j["cands"]:
                    bad.append(f"n={n}: no stiffness solve with the load vector as right-hand side "
                               "to reconstruct the field from")
                else:
                    bad.append(f"n={n}: max |field - reconstruction of the substitute| = {j['res']:.2e} "
                               f"(tolerance {j['tol']:.1e}, factor {j['lam']:.6g}, 0/1 combination "
                               f"{list(j['c'])} of {j['cands']})")
        how = "replaced by random vectors" if mode == "substitute" else "NaN at chosen entries"
        if bad:
            out.append(Check(cid, Status.FAIL, f"solve output {how}: the field does not follow it: "
                             + "; ".join(map(str, bad[:3])), bad))
        elif review:
            out.append(Check(cid, Status.REVIEW, f"solve output {how}: " + "; ".join(review[:3])
                             + " - the dependence of the field on the solve is not shown; verify by hand",
                             review))
        elif not ok:
            out.append(Check(cid, Status.SKIP, "no stiffness solve to substitute (see provenance.solve_observed)"))
        else:
            out.append(Check(cid, Status.PASS, f"solve output {how}: the field "
                             + ("is the reconstruction of the substitute" if mode == "substitute"
                                else "became non-finite or solve raised")
                             + f" at n = {', '.join(map(str, ok))}", ok))
    return out


# Solvers whose output is not a backward-stable solution of the system they are given (an
# iterative tolerance, a least-squares fit): their outputs are held to round-off only where
# they feed the field (judge_job's "unsolved").
INDIRECT_SOLVES = ("cg", "cgs", "bicg", "bicgstab", "gmres", "lgmres", "minres", "qmr", "gcrotmk",
                   "tfqmr", "lsqr", "lsmr", "lstsq")


def check_recorded_solves(plan: dict, results: dict, session) -> list:
    """Every recorded direct solve of the statement's system, in every call (clean or audited:
    the output before the grader's substitute), solves its OWN recorded system to a
    backward-stable solve's round-off; and no factorisation was changed between the call
    that produced it and the call that applied it (fingerprinted by content).  What the
    library was handed is what was recorded: a library fed anything else (a lying operand, a
    replaced class method, an overwritten factor) cannot pass for the system it was shown."""
    bad, checked, worst = [], 0, 0.0
    for jid, calls in session.calls.items():
        n = plan[jid]["n"]
        for k, c in enumerate(calls):
            if c.get("changed") is not None:
                bad.append(f"n={n}: {c['fn']} (call {k}) applied a factorisation whose content "
                           f"changed after the call that produced it (factor {c['changed']})")
                continue
            if c["kind"] != "solve" or not c["K"] or c.get("A") is None or c.get("z") is None or \
                    c.get("rhs") is None or str(c["fn"]).rsplit(".", 1)[-1] in INDIRECT_SOLVES:
                continue
            import numpy as np
            if not (np.all(np.isfinite(c["z"])) and np.all(np.isfinite(c["rhs"]))):
                continue
            for j in range(c["z"].shape[1] if c["z"].ndim == 2 else 1):
                checked += 1
                res, bound = output_residual(c, j)
                worst = max(worst, _share(res, bound))
                if not res <= bound:
                    bad.append(f"n={n}: the output of {c['fn']} (call {k}, column {j}) does not solve "
                               "its recorded system to round-off: the library solved something "
                               "else than what was recorded")
                    break
    if bad:
        return [Check("provenance.recorded_solves", Status.FAIL, "; ".join(bad[:3]), bad)]
    if not checked:
        return [Check("provenance.recorded_solves", Status.SKIP, "no recorded direct solve of the "
                      "stiffness system to check (see provenance.solve_observed)")]
    return [Check("provenance.recorded_solves", Status.PASS, f"every recorded direct solve of the "
                  f"stiffness system ({checked} column(s)) solves its own recorded system (worst "
                  f"{worst:.2g} of {SPEC['residual_roundoff']:g} eps (|A||z| + |b|)); no factorisation "
                  "changed between its production and its use", worst, 1.0)]


def check_library_intact(results: dict) -> list:
    """numpy/scipy (modules, their classes), builtins and the stdlib modules the recorder and
    the channel use, as the driver bound them: the recorder reads only references bound
    before the submission loaded, but the LIBRARY runs through these attributes."""
    names = sorted({str(x) for r in results.values() if r["mesh"] is not None
                    for x in _as_list(r["mesh"].get("tamper"))})
    if not names:
        return [Check("provenance.library_intact", Status.PASS, "no numpy/scipy/builtins attribute "
                      "reassigned during any call")]
    return [Check("provenance.library_intact", Status.REVIEW, "the submission reassigned library "
                  "attributes: " + ", ".join(names[:6]) + " - what the library computed may not be "
                  "a library solve (every recorded solve still solves its recorded system, "
                  "provenance.recorded_solves); verify by hand", names)]


def check_records(plan: dict, results: dict, session) -> list:
    """The record channel carries only what the driver wrote: one result message per job,
    and as many audit records (factorisations, solves, inverses) as the driver counted
    making; each result message carries the job's secret (drawn in the warm parent, sent
    to the grader before any job ran).  A record written onto the channel by the submission
    itself (its descriptor can be guessed) is one more than the driver's count, and a
    result message it writes lacks the secret."""
    bad = []
    for jid, res in results.items():
        m = res["mesh"]
        if res.get("unsealed", 0):
            bad.append(f"n={plan[jid]['n']}: {res['unsealed']} result message(s) without the job's "
                       "secret")
        elif res.get("meshes", 0) > 1:
            bad.append(f"n={plan[jid]['n']}: {res['meshes']} result messages in one call")
        elif m is not None and "asks" in m and m["asks"] != session.asked.get(jid, 0):
            bad.append(f"n={plan[jid]['n']}: {session.asked.get(jid, 0)} audit record(s) received, "
                       f"the instrumentation made {m['asks']!r}")
    if bad:
        return [Check("provenance.records", Status.FAIL, "records on the channel that the grader's "
                      "instrumentation did not write (forged by the submission?): " + "; ".join(bad[:3]),
                      bad)]
    return [Check("provenance.records", Status.PASS, "every record on the channel was written by "
                  "the instrumentation (one result per call; audit records as counted)")]


def check_runtime_modules(results: dict) -> list:
    """Top-level modules outside stdlib + numpy + scipy that the submission loaded
    at run time (importlib/__import__ the static pass cannot see)."""
    names = sorted({str(x) for r in results.values() if r["mesh"] is not None
                    for x in _as_list(r["mesh"].get("new_modules"))})
    if not names:
        return [Check("provenance.runtime_modules", Status.PASS,
                      "no module outside stdlib + numpy + scipy loaded at run time")]
    return [Check("provenance.runtime_modules", Status.REVIEW,
                  "modules outside stdlib + numpy + scipy loaded at run time: " + ", ".join(names[:10])
                  + " - check for a FEM/PDE library", names)]


@guarded
def check_regenerated(outcome, meshes: dict, fields: dict) -> list:
    """Every mesh regenerated within the budget, on the prescribed grids, finite.
    Fills `fields` with {n: (uh_nodes, uh_dense, x_dense)}."""
    errors = [f"n={n}: {m['error']}" for n, m in sorted(meshes.items()) if m.get("error")]
    missing = [n for n in SPEC["meshes"] if n not in meshes]
    if errors or missing:
        parts = (["solve(n) failed: " + "; ".join(errors)[:600]] if errors else []) + \
            ([f"meshes {missing} not regenerated: {outcome_note(outcome) or 'child stopped'}"]
             if missing else [])
        raise Reject("provenance.regenerate", "; ".join(parts),
                     sorted([n for n, m in meshes.items() if m.get("error")] + missing))
    wall = sum(_num(meshes[n].get("wall")) for n in SPEC["meshes"])
    out = [Check("provenance.regenerate", Status.PASS,
                 f"all {len(SPEC['meshes'])} meshes regenerated (solve time {wall:.2f} s)", wall)]
    worst_grid = (0.0, 0)
    for n in SPEC["meshes"]:
        m = meshes[n]
        xj, xi = prescribed_grids(n)
        xn = _field(m, "x_nodes", xj.shape, "provenance.grids")
        xd = _field(m, "x_dense", xi.shape, "provenance.grids")
        un = _field(m, "uh_nodes", xj.shape, "provenance.grids")
        ud = _field(m, "uh_dense", xi.shape, "provenance.grids")
        for name, got, want in (("x_nodes", xn, xj), ("x_dense", xd, xi)):
            where = nonfinite_where(got)
            if where:
                raise Reject("provenance.grids", f"n={n}: {name}: {where}")
            i, d = worst(got - want)
            if d > SPEC["grid_atol"]:
                raise Reject("provenance.grids", f"n={n}: {name}[{i}] = {got[i]!r}, prescribed "
                             f"{want[i]!r} (|diff| {d:.2e} > {SPEC['grid_atol']:g}): nonconforming grid",
                             d, SPEC["grid_atol"])
            worst_grid = max(worst_grid, (d, n))
        for name, got in (("uh_nodes", un), ("uh_dense", ud)):
            where = nonfinite_where(got)
            if where:
                raise Reject("provenance.finite", f"n={n}: {name}: {where}")
        fields[n] = (un, ud, xd)
    out.append(Check("provenance.grids", Status.PASS, f"returned grids are j/n and i/({SPEC['dense_factor']}n) "
                     f"to {SPEC['grid_atol']:g} at every mesh", worst_grid[0], SPEC["grid_atol"]))
    out.append(Check("provenance.finite", Status.PASS, "returned fields finite at every mesh"))
    return out


def study_errors(fields: dict) -> dict:
    """{n: (e_n, e*_n)} recomputed from fields {n: (uh_nodes, uh_dense, ...)}."""
    import numpy as np
    out = {}
    for n, f in fields.items():
        xj, xi = prescribed_grids(n)
        out[n] = (float(np.max(np.abs(f[0] - exact_u(xj)))), float(np.max(np.abs(f[1] - exact_u(xi)))))
    return out


def check_reproduction(fields: dict, arrs: dict) -> list:
    """Regenerated nodal and dense errors against the submitted ones.  Within
    1e-6 relative (seed): PASS.  Beyond it but within the round-off band
    env_band(n) (the same code run with another BLAS thread count or CPU
    kernel): REVIEW.  Else FAIL."""
    if not fields or "nodal_errors" not in arrs:
        return [Check("provenance.reproduces_errors", Status.SKIP,
                      "nothing to compare (no regenerated fields or no valid arrays)")]
    regen = study_errors(fields)
    floor = regen_floor()
    bad, env, worst_rel = [], [], 0.0
    for k, n in enumerate(SPEC["meshes"]):
        for j, (name, arr) in enumerate((("e_n", "nodal_errors"), ("e*_n", "dense_errors"))):
            e_re, e_sub = regen[n][j], float(arrs[arr][k])
            rel = abs(e_re - e_sub) / e_sub
            if abs(e_re - e_sub) <= floor:      # the exact solution's own round-off
                continue
            worst_rel = max(worst_rel, rel)
            if rel <= SPEC["regen_rel"]:
                continue
            line = f"n={n} {name}: regenerated {e_re:.6e}, submitted {e_sub:.6e}"
            (env if abs(e_re - e_sub) <= env_band(n) else bad).append(line)
    if bad:
        return [Check("provenance.reproduces_errors", Status.FAIL,
                      "solver does not reproduce its submitted numbers: " + "; ".join(bad[:4]),
                      worst_rel, SPEC["regen_rel"])]
    if env:
        return [Check("provenance.reproduces_errors", Status.REVIEW,
                      f"submitted errors differ from the regenerated ones beyond {SPEC['regen_rel']:g} relative, by "
                      "amounts linear-solve round-off explains (BLAS threads/CPU kernel of the study "
                      "run differ from the grader's?): " + "; ".join(env[:4]) + " - verify the "
                      "study environment by hand", worst_rel, SPEC["regen_rel"])]
    return [Check("provenance.reproduces_errors", Status.PASS,
                  f"regenerated nodal and dense errors match the submitted ones (rel {SPEC['regen_rel']:g}, "
                  f"or within {floor:.2g} absolute: the exact solution's own round-off)",
                  worst_rel, SPEC["regen_rel"])]


def check_regenerated_tiers(fields: dict) -> list:
    """Tier 1 and Tier 2 evaluated on the regenerated errors as well, so that no
    verdict rests on submitted numbers the solver did not reproduce."""
    import numpy as np
    if len(fields) != len(SPEC["meshes"]):
        return [Check("provenance.regenerated_tiers", Status.SKIP, "no complete regeneration")]
    errs = study_errors(fields)
    arrs = {"nodal_errors": np.array([errs[n][0] for n in SPEC["meshes"]]),
            "dense_errors": np.array([errs[n][1] for n in SPEC["meshes"]])}
    if not (np.all(arrs["nodal_errors"] > 0) and np.all(arrs["dense_errors"] > 0)):
        return [Check("provenance.regenerated_tiers", Status.FAIL, "a regenerated error is zero")]
    bad = [c for c in check_tier1(arrs) + check_tier2(arrs) if c.status is Status.FAIL]
    return [Check("provenance.regenerated_tiers", Status.FAIL if bad else Status.PASS,
                  ("on the regenerated errors: " + "; ".join(f"{c.id}: {c.message}" for c in bad[:3]))
                  if bad else "Tier 1 and Tier 2 also pass on the regenerated errors")]


def check_fidelity(fields: dict, ref: dict) -> list:
    """Every returned dense field against the grader's own 5-point solution."""
    if not fields or not ref:
        return [Check("provenance.fidelity", Status.SKIP, "no regenerated fields to compare")]
    bad, parts = [], []
    for n in SPEC["meshes"]:
        i, d = worst(fields[n][1] - ref[n][1])
        tol = fidelity_tol(n)
        parts.append(f"{n}:{d:.1e}")
        if d > tol:
            bad.append(f"n={n}: |uh - own| = {d:.3e} at i = {i} (x = {i / (10 * n):.5f}), tol {tol:.1e}")
    return [Check("provenance.fidelity", Status.FAIL if bad else Status.PASS,
                  ("returned field is not the cubic-Hermite solution: " + "; ".join(bad[:3])) if bad
                  else "dense field matches the grader's own 5-point solution at every mesh ("
                  + " ".join(parts) + ")", parts, [fidelity_tol(n) for n in SPEC["meshes"]])]


def check_solve_writes(meshes: dict) -> list:
    writes = sorted({str(w) for m in meshes.values() for w in _as_list(m.get("writes"))})
    return [Check("provenance.solve_side_effects", Status.FAIL if writes else Status.PASS,
                  ("solve(n) wrote files: " + ", ".join(map(str, writes[:5]))) if writes
                  else "solve(n) writes no file", writes)]


def check_artifact_provenance(fields: dict, arrs: dict) -> list:
    """Submitted artifact field against the regenerated one: <= artifact_tier3_atol
    pass, up to artifact_fail_atol Tier 3 fails, beyond it provenance fails."""
    n = SPEC["artifact_n"]
    if n not in fields or not all(a in arrs for a in ARTIFACT_ARRAYS):
        return [Check("tier3.artifact_reproduced", Status.SKIP, "artifact or regenerated field absent")]
    _, ud, xd = fields[n]
    i, dx = worst(arrs["x_dense"] - xd)
    j, du = worst(arrs["uh_dense"] - ud)
    d = max(dx, du)
    where = f"x_dense dev {dx:.2e}, uh_dense dev {du:.2e} at i = {j}"
    out = [Check("provenance.artifact_field", Status.PASS if d <= SPEC["artifact_fail_atol"] else Status.FAIL,
                 f"submitted n={n} artifact vs regenerated: {where} (fail above {SPEC['artifact_fail_atol']:g})",
                 d, SPEC["artifact_fail_atol"]),
           Check("tier3.artifact_reproduced", Status.PASS if d <= SPEC["artifact_tier3_atol"] else Status.FAIL,
                 f"submitted n={n} artifact vs regenerated: {where} (Tier 3 needs <= "
                 f"{SPEC['artifact_tier3_atol']:g})",
                 d, SPEC["artifact_tier3_atol"])]
    return out



# =============================================================================
# EXECUTION: the isolated phases, run beside the grader's own solution
# =============================================================================
def stage_solver(sub: str, stage: str) -> str:
    """A directory holding only fem_solver.py: the child never sees the submitted
    outputs (a solver cannot replay reference_arrays.npz) nor stale bytecode."""
    os.makedirs(stage)
    shutil.copyfile(os.path.join(sub, SPEC["solver_file"]), os.path.join(stage, SPEC["solver_file"]))
    return stage


class Execution:
    """The isolated run (one fresh fork per solve(n) call, clean and audited mixed in a
    random order, `job_concurrency` at once), started early so that it runs while the
    grader checks the files and computes its own solution."""

    def __init__(self, sub: str, budget: float):
        self.plan = plan_jobs()
        self.session = AuditSession(self.plan)
        self.outcome = None
        self.threads: list = []
        self.tmp = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-stage-")
        try:
            stage = stage_solver(sub, os.path.join(self.tmp, "submission"))
        except OSError as exc:
            self.outcome = RunOutcome("error", [], f"could not stage {SPEC['solver_file']}: {exc}",
                                      0.0, None, "", "")
            return
        request = {"jobs": [{"id": jid, "n": job["n"]} for jid, job in self.plan.items()],
                   "job_timeout": budget, "max_calls": SPEC["max_calls"],
                   "concurrency": SPEC["job_concurrency"]}
        self.threads = [threading.Thread(target=self._run, daemon=True, args=(stage, budget, request)),
                        threading.Thread(target=lambda: [free_system(n) for n in SPEC["meshes"]],
                                         daemon=True)]   # the grader's K and F ready before the
        for t in self.threads:                           # first solve is shown to it
            t.start()

    def _run(self, stage: str, budget: float, request: dict) -> None:
        self.outcome = run_isolated(stage, FEM_DRIVER, request, budget, interact=self.session.interact,
                                    no_site=("numpy", "scipy"))

    def join(self):
        """The run's RunOutcome, once it is over."""
        for t in self.threads:
            t.join()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.outcome


def execution_checks(run: Execution, arrs: dict, report: Report) -> list:
    """Compute the grader's own solution while the jobs run, then judge the recorded runs
    (the regenerated fields are kept in report.figures_data for --plot)."""
    phases, outcomes, keys = report.phases, report.outcomes, report.keys
    t0 = time.monotonic()
    try:
        ref = reference_study()
    finally:
        phases["reference"] = time.monotonic() - t0
        outcome = run.join()
    plan, session = run.plan, run.session
    if outcome is not None:
        outcomes["regen"] = outcome
        phases["regen"] = outcome.wall
    results = job_results(outcome, plan)
    out = check_import_phase(outcome, results)
    meshes = collect_regeneration(outcome, plan, results)
    fields = report.figures_data["fields"] = {}
    out += check_regenerated(outcome, meshes, fields)
    out += check_solve_writes(meshes) if meshes else []
    out += check_reproduction(fields, arrs)
    out += check_deterministic(plan, results, session, fields)
    out += check_regenerated_tiers(fields)
    out += check_fidelity(fields, ref)
    out += check_solve_system(plan, results, session, fields)
    out += check_causal(plan, results, session, fields)
    out += check_records(plan, results, session)
    out += check_recorded_solves(plan, results, session)
    out += check_library_intact(results)
    out += check_runtime_modules(results)
    out += check_artifact_provenance(fields, arrs)
    if session.faults:
        out.append(Check("provenance.audit_exchange", Status.INFO, f"{len(session.faults)} malformed "
                         f"audit message(s) ignored: {session.faults[0]}"))
    if outcome is not None and outcome.forged:
        out.append(Check("provenance.channel", Status.INFO,
                         f"{outcome.forged} line(s) on the reply channel refused"))
    entry = [c for jid, calls in session.calls.items() if plan[jid]["mode"] == "clean" for c in calls]
    keys["solve_entry_points"] = sorted({str(c.get("fn")) for c in entry if c.get("K")})
    if fields and SPEC["artifact_n"] in fields and "uh_dense" in arrs:
        keys["artifact_deviation"] = float(worst(arrs["uh_dense"] - fields[SPEC["artifact_n"]][1])[1])
    return out


# =============================================================================
# SUBPROCESS RUNNER
# =============================================================================
# One text in every grader that executes submitted code (a test asserts the copies are
# identical): features one grader needs are parameters of run_isolated, limits are the
# SPEC["runner_*"] entries, read at call time.
#
# Process tree of one run:  grader -> unshare (user, net, mount, pid namespaces) ->
# _SANDBOX_INIT (pid 1: builds the allow-list root, holds the lifeline) -> the driver
# (DRIVER_PROLOGUE + body; with fork_jobs, the warm parent of one forked child per job).
@dataclasses.dataclass
class RunOutcome:
    status: str                 # "ok" | "timeout" | "crashed" | "no_reply" | "error"
    messages: list              # every authentic (token-bearing) JSON message, in order
    reason: str
    wall: float
    returncode: int | None
    stdout: str                 # captured, capped; never printed unmarked
    stderr: str
    forged: int = 0             # unreadable or unauthenticated lines on the reply channel
    times: list = dataclasses.field(default_factory=list)    # arrival of each message (s from start)
    sandbox: dict = dataclasses.field(default_factory=dict)  # sandbox_level() of this run
    garbage: list = dataclasses.field(default_factory=list)  # why the first refused lines were refused


# The prologue every driver starts with.  It reads its request (with a one-time token) from
# stdin before anything of the submission runs and gives the driver body:
#   send(obj)    one token-tagged JSON line on a pipe the runner opened;
#   ask(obj)     send, then block for the grader's answer (run_isolated(interact=...));
#   receive()    the runner's next JSON line (run_isolated(followup=...)), None at its end;
#   fork_jobs(jobs, run_job, concurrency=1)   the warm fork server: one fresh child per job,
#                started in the order given (up to `concurrency` at once), each in its own
#                process group and user namespace, its messages tagged {"job": id} by this
#                parent, then {"kind": "job_end", ...} per job.
# _LIM (the request's "runner" entry) holds the runner's limits and "isolated": whether this
# run was started in the allow-list root (file isolation; a run where it did not hold is
# discarded and started again at the level the probe finds).
# The submission's stdin is empty; its stdout/stderr are separate capped pipes.
DRIVER_PROLOGUE = r'''
import json as _json, os as _os, sys as _sys
_IN = _os.dup(0)
_os.set_inheritable(_IN, False)
_sys.stdin.close()
_NULL = _os.open(_os.devnull, _os.O_RDONLY)
_os.dup2(_NULL, 0)                                  # the submission's stdin is empty
_os.close(_NULL)
_INBUF = [b""]


def _readline(_read=_os.read):
    """One line from the grader (or the warm parent), without the newline; b"" at its end."""
    while b"\n" not in _INBUF[0]:
        chunk = _read(_CH["in"], 1 << 20)
        if not chunk:
            line, _INBUF[0] = _INBUF[0], b""
            return line
        _INBUF[0] += chunk
    line, _, _INBUF[0] = _INBUF[0].partition(b"\n")
    return line


def receive(_loads=_json.loads):
    """The runner's next JSON line, or None at end of input."""
    line = _readline()
    try:
        return _loads(line) if line else None
    except ValueError:
        return None


_CH = {"in": _IN}
_REQ = receive()
_CH["tok"] = _REQ.pop("token")
_LIM = _REQ.pop("runner")
_sys.path.extend(p for p in _LIM.get("path", ()) if p not in _sys.path)   # started without site
_CH["out"] = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_CH["out"], False)
_FD = _CH["out"]


def _put(obj, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps(obj, allow_nan=True) + "\n").encode()
    while data:
        data = data[_write(_CH["out"], data):]


def send(obj):
    """One message to the grader."""
    _put({"token": _CH["tok"], "body": obj} if _CH["tok"] else {"body": obj})


def ask(obj):
    """Send obj and return the grader's answer (None when the grader gives none)."""
    _put({"token": _CH["tok"], "body": obj, "ask": True} if _CH["tok"] else {"body": obj, "ask": True})
    reply = receive()
    return reply.get("reply") if isinstance(reply, dict) else None


def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None


def _own_user_namespace(libc):
    """This job child in a user namespace of its own (same ids): it holds no capability over
    the warm parent or another job.  False where the kernel refuses."""
    uid, gid = _os.geteuid(), _os.getegid()
    try:
        if libc is None or libc.unshare(0x10000000) != 0:         # CLONE_NEWUSER
            return False
        for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                           ("gid_map", "%d %d 1" % (gid, gid))):
            with open("/proc/self/" + name, "w") as fh:
                fh.write(text)
        return True
    except Exception:
        return False


def _job_child(job, run_job, wfd, rfd, libc):
    code = 1
    try:
        _os.setpgid(0, 0)
        _os.close(_FD)                      # the reply pipe and the grader's input: gone
        _os.close(_IN)
        _CH.update(out=wfd, tok="")
        _CH["in"] = rfd
        _INBUF[0] = b""
        _REQ.pop("jobs", None)
        if libc is not None:
            libc.prctl(1, 9, 0, 0, 0)       # PR_SET_PDEATHSIG, SIGKILL: dies with the parent
            libc.prctl(4, 1, 0, 0, 0)       # dumpable while it writes its own id maps ...
        _own_user_namespace(libc)
        if libc is not None:
            libc.prctl(4, 0, 0, 0, 0)       # ... then not: no later job may trace this one
        run_job(job)
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code in (None, 0) else 1
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    _os._exit(code)


def _decode_job_line(line, _loads=_json.loads):
    """(body, ask) of one line a job child wrote, or (None, why): never raises."""
    try:
        msg = _loads(line.decode("utf-8"))
    except RecursionError:
        return None, "nested too deeply"
    except MemoryError:
        return None, "too large to decode"
    except Exception as exc:
        return None, "not JSON (%s)" % type(exc).__name__
    if not isinstance(msg, dict) or "body" not in msg or set(msg) - {"body", "ask"}:
        return None, "not a message"
    body = msg["body"]
    if isinstance(body, dict) and body.get("kind") == "job_end":
        return None, "a job_end written by the job itself"
    stack = [(body, 0)]
    while stack:                            # a body the grader's decoder would refuse
        o, d = stack.pop()
        if d > 64:
            return None, "nested deeper than 64 levels"
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return body, msg.get("ask") is True


def _live_children():
    """This process's live child processes (pids), from /proc."""
    kids = set()
    try:
        for tid in _os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as fh:
                kids.update(int(p) for p in fh.read().split())
    except (OSError, ValueError):
        pass
    return kids


def _sweep_children(pgid, keep=()):
    """Kill the job's process group and every process left to this (subreaper) parent but
    the job children in `keep` (the jobs still running beside it)."""
    import signal
    try:
        _os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        left = _live_children() - set(keep)
        for pid in left:
            try:
                _os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in left:                    # reaped: not even a zombie is left for the next job
            try:
                _os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not left:
            return


def _relay_open(job, pid, rfd, wfd, limit):
    """The relay state of one running job child."""
    import time
    try:
        pidfd = _os.pidfd_open(pid)         # readable once the child has exited (Linux >= 5.3)
    except (AttributeError, OSError):
        pidfd = None
    t0 = time.monotonic()
    return {"job": job, "id": job["id"], "pid": pid, "rfd": rfd, "wfd": wfd, "pidfd": pidfd,
            "t0": t0, "limit": limit, "deadline": t0 + limit if limit else None,
            "buf": b"", "total": 0, "garbage": 0, "reasons": [], "waiting": False,
            "pending": b"", "eof": False, "st": None, "status": None, "reason": ""}


def _relay_take(s, chunk):
    """Pass on the complete lines of a job child's output, tagged with its id; False (the job
    is stopped) once it has written more than the reply cap."""
    s["total"] += len(chunk)
    if s["total"] > _LIM["reply_cap"]:
        s["garbage"] += 1
        s["reasons"].append("more than %d bytes of messages" % _LIM["reply_cap"])
        return False
    s["buf"] += chunk
    *lines, s["buf"] = s["buf"].split(b"\n")
    for line in lines:
        body, how = _decode_job_line(line)
        if body is None and how not in (True, False):
            s["garbage"] += 1
            if len(s["reasons"]) < 5:
                s["reasons"].append(how)
            continue
        tagged = dict(body, job=s["id"]) if isinstance(body, dict) else {"job": s["id"], "value": body}
        if how:
            _put({"token": _CH["tok"], "body": tagged, "ask": True})
            s["waiting"] = True
        else:
            send(tagged)
    return True


def _relay_read(s):
    chunk = _os.read(s["rfd"], 1 << 20)
    if not chunk:
        s["eof"] = True
    elif not _relay_take(s, chunk):
        s["status"], s["reason"] = "crashed", "flooded its message channel"


def _relay_close(s, keep):
    """End one job: what it wrote before it exited, its exit status, its processes swept (but
    the running jobs in `keep`); sends and returns its job_end."""
    import signal, time
    pid, st, status, reason = s["pid"], s["st"], s["status"], s["reason"]
    if st is not None and status is None and not s["eof"]:     # what it wrote before it exited
        _os.set_blocking(s["rfd"], False)
        try:
            while True:
                chunk = _os.read(s["rfd"], 1 << 20)
                if not chunk or not _relay_take(s, chunk):
                    break
        except BlockingIOError:
            pass
    for fd in (s["rfd"], s["wfd"]) + ((s["pidfd"],) if s["pidfd"] is not None else ()):
        _os.close(fd)
    if st is None:
        try:
            _os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            st = _os.waitpid(pid, 0)[1]
        except ChildProcessError:
            pass
    if status is None:
        if st is not None and _os.WIFEXITED(st) and _os.WEXITSTATUS(st) == 0:
            status = "ok"
        elif st is not None and _os.WIFEXITED(st):
            status, reason = "crashed", "exit code %d" % _os.WEXITSTATUS(st)
        elif st is not None:
            status, reason = "crashed", "killed by signal %d" % _os.WTERMSIG(st)
        else:
            status, reason = "crashed", "lost"
    _sweep_children(pid, keep)
    end = {"kind": "job_end", "job": s["id"], "status": status, "reason": reason,
           "wall": time.monotonic() - s["t0"]}
    if s["garbage"]:
        end.update(garbage=s["garbage"], garbage_reasons=s["reasons"])
    send(end)
    return end


def _relay_round(running):
    """One select() over the running jobs: their output, their exits, their pending answers
    and the grader's answers to their asks (routed by job id).  A job whose child exited,
    ran past its limit or flooded its channel gets its status here."""
    import select, time
    now = time.monotonic()
    for s in running:
        if s["deadline"] is not None and s["deadline"] <= now and s["status"] is None:
            s["status"], s["reason"] = "timeout", "exceeded the %g s job limit" % s["limit"]
    live = [s for s in running if s["status"] is None and s["st"] is None]
    if len(live) < len(running):
        return
    waiting = [s for s in live if s["waiting"]]
    buffered = bool(waiting) and b"\n" in _INBUF[0]
    rd = [fd for s in live for fd in ([] if s["eof"] else [s["rfd"]])
          + ([s["pidfd"]] if s["pidfd"] is not None else [])]
    rd += [_CH["in"]] if waiting and not buffered else []
    wr = [s["wfd"] for s in live if s["pending"]]
    waits = [s["deadline"] - now for s in live if s["deadline"] is not None]
    waits += [0.02] if any(s["pidfd"] is None for s in live) else []
    pause = 0 if buffered else min(waits) if waits else None
    ready_r, ready_w, _ = select.select(rd, wr, [], pause)
    for s in live:
        if s["wfd"] in ready_w:
            try:
                s["pending"] = s["pending"][_os.write(s["wfd"], s["pending"][:65536]):]
            except OSError:
                s["pending"] = b""
    if waiting and (buffered or _CH["in"] in ready_r):
        reply = receive()                   # the grader's answer (None once its input ended)
        to = [s for s in waiting if reply is None or not isinstance(reply, dict)
              or reply.get("job") == s["id"]]
        for s in to[:len(waiting) if reply is None else 1]:
            s["waiting"] = False
            answer = reply.get("reply") if isinstance(reply, dict) else None
            s["pending"] += (_json.dumps({"reply": answer}) + "\n").encode()
            _os.set_blocking(s["wfd"], False)
    for s in live:
        if s["rfd"] in ready_r:
            _relay_read(s)
        if s["status"] is None and (s["pidfd"] is None or s["pidfd"] in ready_r):
            done, code = _os.waitpid(s["pid"], _os.WNOHANG)
            if done:
                s["st"] = code


def fork_jobs(jobs, run_job, concurrency=1):
    """The warm fork server: for each job (in the order given) fork a child that runs
    run_job(job) and exits; relay its messages tagged with job["id"]; enforce
    _REQ["job_timeout"]; send one job_end per job.  Returns the job_end messages, in the
    jobs' order.  Up to `concurrency` jobs run at once (each its own child, process group and
    user namespace; their asks are answered by job id).
    jobs may be an iterator (e.g. one that ask()s the grader for the next job): a job child
    then holds no plan of the jobs after it, as it would in a list it inherited (with
    concurrency 1 only: the next job is drawn when no job is running)."""
    libc = _libc()
    if libc is not None:
        libc.prctl(4, 0, 0, 0, 0)           # PR_SET_DUMPABLE 0: no job may trace or read this parent
        libc.prctl(36, 1, 0, 0, 0)          # PR_SET_CHILD_SUBREAPER: a job's orphans come back here
    import gc
    gc.freeze()                             # the warm heap stays shared: a job's collections
    limit = _REQ.get("job_timeout")         # do not touch (copy) every page of it
    width = max(1, int(concurrency))
    source, end_of_jobs = iter(jobs if width == 1 else list(jobs)), object()
    running, ends, started = [], {}, 0
    while True:
        while len(running) < width:
            job = next(source, end_of_jobs)
            if job is end_of_jobs:
                break
            job = dict(job) if isinstance(job, dict) else {"value": job}
            job.setdefault("id", started)
            for stream in (_sys.stdout, _sys.stderr):
                stream.flush()
            c2p_r, c2p_w = _os.pipe()
            p2c_r, p2c_w = _os.pipe()
            pid = _os.fork()
            if pid == 0:
                _os.close(c2p_r)
                _os.close(p2c_w)
                for other in running:       # nothing of the jobs beside it
                    for fd in (other["rfd"], other["wfd"], other["pidfd"]):
                        if fd is not None:
                            _os.close(fd)
                _job_child(job, run_job, c2p_w, p2c_r, libc)
            try:
                _os.setpgid(pid, pid)       # (also done by the child: no race either way)
            except OSError:
                pass
            _os.close(c2p_w)
            _os.close(p2c_r)
            running.append(dict(_relay_open(job, pid, c2p_r, p2c_w, limit), order=started))
            started += 1
        if not running:
            break
        _relay_round(running)
        for s in [s for s in running if s["status"] is not None or s["st"] is not None]:
            running.remove(s)
            ends[s["order"]] = _relay_close(s, [r["pid"] for r in running])
    return [ends[i] for i in sorted(ends)]


_sys.path.insert(0, _REQ["submission_dir"])
_os.chdir(_REQ["submission_dir"])
'''

# pid 1 of the run's pid namespace (or, where there is none, a plain watcher), run as
# `python -I -S -B -c _SANDBOX_INIT <config>`.  With a config "root" it builds the
# allow-list root: a tmpfs holding read-only binds of the system and Python directories,
# the run's own folders, a minimal /dev and its own /proc; pivot_root to it and detach the
# old root (a chroot could be climbed out of).  It then starts the driver with the rlimits
# and stays: when the grader dies (the lifeline socket reads EOF) or the driver exits,
# everything else in the run is killed.  It reports the driver's exit on the lifeline.
_SANDBOX_INIT = r'''
import ctypes, json, os, resource, select, signal, sys
cfg = json.loads(sys.argv[1])
life = cfg["lifeline"]
os.set_inheritable(life, False)
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18
ATIME = ((1024, 1024), (2048, 2048), (4096, 1 << 21))       # statvfs bit -> mount flag


def tell(text):
    try:
        os.write(life, (text + "\n").encode())
    except OSError:
        pass


def mount(src, target, fstype, flags, data=None):
    enc = [None if v is None else v.encode() for v in (src, target, fstype, data)]
    if libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "mount %s on %s: %s" % (src, target, os.strerror(err)))


def bind(src, new, writable=False):
    target = new + src
    if os.path.islink(src):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.readlink(src), target)
        return
    if os.path.isdir(src):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    try:
        mount(src, target, None, MS_BIND)
    except OSError:                         # a mount with locked submounts (e.g. /sys) binds only
        mount(src, target, None, MS_BIND | MS_REC)              # with them
    flag = os.statvfs(src).f_flag
    locked = flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    locked |= sum(ms for st, ms in ATIME if flag & st)
    mount(None, target, None, MS_REMOUNT | MS_BIND | locked | (0 if writable else MS_RDONLY))


def build_root(new):
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for src in cfg["ro"]:
        if os.path.lexists(src):
            bind(src, new)
    for src in cfg["rw"]:
        bind(src, new, writable=True)
    dev = new + "/dev"
    os.makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for node in cfg["dev"]:
        if os.path.exists(node):
            bind(node, new, writable=True)
    os.makedirs(dev + "/shm")
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=%d" % cfg["shm_bytes"])
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev + "/" + name)
    os.makedirs(new + "/proc")
    try:                                    # refused where the host masks parts of its /proc:
        mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:                         # the child then runs without one
        pass
    os.chdir(new)
    if libc.syscall(cfg["pivot_root_nr"], b".", b".") != 0:
        raise OSError(ctypes.get_errno(), "pivot_root")
    if libc.umount2(b".", 2) != 0:                              # MNT_DETACH the old root
        raise OSError(ctypes.get_errno(), "umount old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


if cfg["root"]:
    try:
        build_root(cfg["root"])
    except Exception as exc:
        tell("setup " + str(exc)[:300])
        sys.exit(0)
pid1 = os.getpid() == 1
if cfg.get("probe"):                        # sandbox_level(): what a child would see here
    seen = {"pid1": pid1, "hidden_visible": os.path.exists(cfg["probe"]),
            "proc": os.path.exists("/proc/self/status"), "job_userns": False}
    probe = os.fork()
    if probe == 0:
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    seen["job_userns"] = os.waitpid(probe, 0)[1] == 0
    probe = os.fork()                       # the interpreter runs in this root
    if probe == 0:
        try:
            os.execv(cfg["python"], [cfg["python"], "-I", "-S", "-c", "import ctypes, json, math"])
        finally:
            os._exit(127)
    seen["python"] = os.waitpid(probe, 0)[1] == 0
    tell("probe " + json.dumps(seen))
    os._exit(0)
if not pid1:
    libc.prctl(1, 9, 0, 0, 0)               # PR_SET_PDEATHSIG, SIGKILL: dies with the grader
libc.prctl(4, 0, 0, 0, 0)                   # PR_SET_DUMPABLE 0: the driver cannot trace init
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *a: None)
child = 0


def on_term(*_):
    """The grader's SIGTERM: in a pid namespace it reaches the driver's group directly; else
    the driver has a group of its own, which goes now."""
    if not pid1 and child:
        try:
            os.killpg(child, signal.SIGKILL)
        except OSError:
            pass


signal.signal(signal.SIGTERM, on_term)
exec_r, exec_w = os.pipe()                  # closed by a successful exec (close-on-exec)
child = os.fork()
if child == 0:
    try:
        os.close(exec_r)
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        if not pid1:
            os.setpgid(0, 0)                # a group init can kill without killing itself
            libc.prctl(1, 9, 0, 0, 0)
        libc.prctl(4, 1, 0, 0, 0)
        uid, gid = os.geteuid(), os.getegid()
        own = b"n"
        if libc.unshare(0x10000000) == 0:   # CLONE_NEWUSER: no capability over init
            try:
                for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                                   ("gid_map", "%d %d 1" % (gid, gid))):
                    with open("/proc/self/" + name, "w") as fh:
                        fh.write(text)
                own = b"u"
            except OSError:
                pass
        os.write(exec_w, own)
        for name, value in cfg["rlimits"]:
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (AttributeError, ValueError, OSError):
                pass
        os.chdir(cfg["cwd"])
        os.execv(cfg["argv"][0], cfg["argv"])
    except BaseException as exc:
        os.write(2, ("sandbox: cannot start the driver: %r\n" % (exc,)).encode())
        os.write(exec_w, b"!" + repr(exc).encode()[:200])
    os._exit(127)
os.close(exec_w)
started = b""
while True:
    chunk = os.read(exec_r, 256)
    if not chunk:
        break
    started += chunk
os.close(exec_r)
if b"!" in started:
    tell("setup cannot start the driver: " + started.split(b"!", 1)[1].decode(errors="replace"))
else:
    tell("ready " + json.dumps({"pid1": pid1, "hidden_visible": os.path.exists(cfg["hidden"]),
                                "proc": os.path.exists("/proc/self/status"),
                                "job_userns": started.startswith(b"u"), "python": True}))
for fd in cfg["close"]:                     # the reply pipe and the request pipe: the driver's only
    try:
        os.close(fd)
    except OSError:
        pass
status = None
while status is None:
    try:
        ready = select.select([life, wake_r], [], [], 1.0)[0]
    except InterruptedError:
        ready = []
    if wake_r in ready:
        os.read(wake_r, 4096)
    if life in ready:
        try:
            gone = os.read(life, 4096) == b""
        except OSError:
            gone = True
        if gone:                            # the grader died: so does everything here
            break
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid == child:
            status = st
try:
    if pid1:
        os.kill(-1, signal.SIGKILL)          # every other process of this pid namespace
    else:
        os.killpg(child, signal.SIGKILL)     # whatever is left of the driver's group
except OSError:
    pass
if status is not None:
    tell(("exit %d" % os.WEXITSTATUS(status)) if os.WIFEXITED(status)
         else "signal %d" % os.WTERMSIG(status))
os._exit(0)
'''

_SANDBOX = {}          # the probed sandbox level and launch prefix (once per grader process)
_SHM_BYTES = 1 << 30   # the child's /dev/shm (multiprocessing's locks and shared arrays); RAM-backed
_PIVOT_ROOT_NR = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def _python_exe() -> str:
    """The real interpreter (not a pyenv shim or a symlink the sandbox would not hold)."""
    return os.path.realpath(sys.executable)


def _site_dirs(modules: tuple) -> list | None:
    """The site directories (in this interpreter's path order) when every module in `modules`
    is found in one of them as a plain package or module; None otherwise (or if none given)."""
    import importlib.util
    dirs = [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)
            and os.path.isdir(p)]
    if not modules or not dirs:
        return None
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = getattr(spec, "origin", None) if spec is not None else None
        if not (isinstance(origin, str) and any(origin.startswith(d.rstrip("/") + "/") for d in dirs)):
            return None
    return dirs


def _readonly_paths(extra=()) -> list:
    """What the child may read: the system's programs, libraries and /etc, and the Python
    installation with its site-packages; nothing else of the filesystem."""
    import site
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
    py = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix,
                                        sys.base_exec_prefix)}
    try:
        sites = list(site.getsitepackages())
    except AttributeError:
        sites = []
    for p in sites + sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and os.path.isdir(p):
            py.add(os.path.realpath(p))
    py.add(os.path.dirname(_python_exe()))
    paths += sorted(p for p in py if p != "/")
    paths += [os.path.realpath(p) for p in extra]
    keep = []
    for p in paths:
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in keep):
            keep.append(p)
    return keep


def _launch_cfg(work: str, root: bool, rw: list, argv: list, cwd: str, rlimits: list,
                lifeline: int, ro_extra=(), hidden: str = "") -> dict:
    import glob
    import platform
    return {"root": os.path.join(work, "root") if root else None,
            "ro": _readonly_paths(ro_extra) + [d for d in (os.path.join(work, "driver"),)
                                               if os.path.isdir(d)],
            "rw": rw, "dev": ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
            + sorted(glob.glob("/dev/nvidia*")), "shm_bytes": _SHM_BYTES,
            "pivot_root_nr": _PIVOT_ROOT_NR.get(platform.machine(), -1),
            "argv": argv, "cwd": cwd, "rlimits": rlimits, "lifeline": lifeline, "hidden": hidden,
            "close": [0] + [int(a) for a in argv[-1:] if a.isdigit()]}


def _try_launch(prefix: list, root: bool, work: str) -> dict | None:
    """Start _SANDBOX_INIT through prefix in probe mode; what it saw, or None if it did not run."""
    import socket
    marker = os.path.join(work, "hidden")
    with open(marker, "w") as fh:
        fh.write("x")
    os.makedirs(os.path.join(work, "root"), exist_ok=True)
    a, b = socket.socketpair()
    try:
        cfg = dict(_launch_cfg(work, root, [], [], "/", [], b.fileno()), probe=marker,
                   python=_python_exe())
        proc = subprocess.Popen(prefix + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT,
                                          json.dumps(cfg)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(b.fileno(),),
                                start_new_session=True)
        b.close()
        proc.wait(timeout=30)
        a.settimeout(5)
        said = a.recv(65536).decode(errors="replace")
        if proc.returncode != 0 or not said.startswith("probe "):
            return None
        return json.loads(said[6:])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        a.close()
        b.close()


_PROBE_LOCK = threading.Lock()


def sandbox_level() -> dict:
    """How the child is confined here (probed once by running a child the real way)."""
    with _PROBE_LOCK:
        if not _SANDBOX:
            _probe_sandbox()
    return {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}


def _full_prefix() -> list:
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    return [unshare, "--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc", "--fork",
            "--kill-child"]


def _full_level(seen: dict) -> dict | None:
    """The full sandbox's level from what its init saw, or None if it did not hold."""
    if not (seen and seen.get("python") and seen.get("pid1") and not seen.get("hidden_visible")):
        return None
    return dict(user_namespace=True, net_namespace=True, mount_namespace=True,
                pid_namespace=True, ipc_namespace=True, file_isolation=True,
                prefix=_full_prefix(), root=True, job_user_namespace=bool(seen.get("job_userns")),
                note="" if seen.get("proc") else "the child has no /proc (the host refused one)",
                rlimits=["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"])


def _probe_sandbox() -> None:
    """Try the full sandbox, then user+net namespaces only, then none."""
    work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-probe-")
    try:
        unshare = shutil.which("unshare") or "/usr/bin/unshare"
        level = _full_level(_try_launch(_full_prefix(), True, work))
        if level is None:
            basic = [unshare, "--user", "--map-root-user", "--net"]
            seen = _try_launch(basic, False, work)
            seen = seen if seen and seen["python"] else None
            level = dict(user_namespace=bool(seen), net_namespace=bool(seen),
                         mount_namespace=False, pid_namespace=False, ipc_namespace=False,
                         file_isolation=False,
                         prefix=basic if seen else [], root=False,
                         job_user_namespace=bool(seen and seen.get("job_userns")),
                         note="mount/pid namespaces unavailable: the child can read any "
                         "file the grader's user can" + ("" if seen else
                                                         "; no user/network namespace either"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    level["rlimits"] = ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"]
    _SANDBOX.update(level)


def sandbox_check() -> Check:
    """INFO sandbox.isolation: what confined the child in this grading."""
    lv = sandbox_level()
    ns = [n for n in ("user", "net", "mount", "pid", "ipc") if lv.get(f"{n}_namespace")]
    files = "on (the child sees only Python, its copy and a scratch folder)" if lv["file_isolation"] \
        else "OFF"
    msg = (f"namespaces: {', '.join(ns) or 'none'}; file isolation {files}"
           f"; rlimits: {', '.join(r[7:] for r in lv['rlimits'])}")
    return Check("sandbox.isolation", Status.INFO, msg + (f"; {lv['note']}" if lv["note"] else ""),
                 lv["file_isolation"])


def _copy_submission(src: str, dst: str, max_bytes: int) -> None:
    """Copy regular files and folders only (symlinks and specials are skipped)."""
    total = 0
    os.makedirs(dst)
    for root, dirs, files in os.walk(src, followlinks=False):
        rel = os.path.relpath(root, src)
        target = dst if rel == "." else os.path.join(dst, rel)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for d in dirs:
            os.makedirs(os.path.join(target, d), exist_ok=True)
        for f in files:
            p = os.path.join(root, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            total += os.path.getsize(p)
            if total > max_bytes:
                raise OSError(f"submission larger than {max_bytes} bytes")
            shutil.copyfile(p, os.path.join(target, f))


def _drain(stream, sink: list, cap: int) -> None:
    kept = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if kept < cap:
            sink.append(chunk[: cap - kept])
            kept += len(sink[-1])
    stream.close()


_MAX_DEPTH = 64        # deeper message bodies are refused (no grader code walks them recursively)
_MAX_MESSAGES = 100_000   # more are refused: millions of tiny messages would exhaust the grader's
                          # memory within the byte cap (honest drivers send a few hundred)


def _too_deep(obj) -> bool:
    stack = [(obj, 0)]
    while stack:
        o, d = stack.pop()
        if d > _MAX_DEPTH:
            return True
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return False


def decode_reply(line: bytes, token: str) -> tuple:
    """(body, is_ask, None) for an authentic reply line, (None, False, why) for anything
    else.  Never raises: garbage is the child's failure, never the grader's."""
    import hmac
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, False, f"invalid UTF-8 at byte {exc.start}"
    try:
        msg = json.loads(text)
    except RecursionError:
        return None, False, "JSON nested too deeply to decode"
    except MemoryError:
        return None, False, "JSON too large to decode"
    except ValueError as exc:
        return None, False, f"not JSON ({str(exc)[:80]})"
    except Exception as exc:          # anything else json may raise on hostile input
        return None, False, f"not JSON ({type(exc).__name__})"
    if not isinstance(msg, dict) or not isinstance(msg.get("token"), str):
        return None, False, "no run token"
    if not hmac.compare_digest(msg["token"].encode("utf-8", "replace"), token.encode()):
        return None, False, "wrong run token"
    if "body" not in msg or set(msg) - {"token", "body", "ask"} \
            or msg.get("ask", False) not in (True, False):
        return None, False, "malformed message (valid token)"
    if _too_deep(msg["body"]):
        return None, False, f"message nested deeper than {_MAX_DEPTH} levels (valid token)"
    return msg["body"], msg.get("ask") is True, None


class _ReplyReader:
    """Reads the reply pipe line by line as it arrives: authenticates each line, stamps its
    arrival time, lets `rearm` move the deadline (e.g. start the budget at "ready"), and
    hands asks to the grader's interact callback.  Never raises on what the child writes."""

    def __init__(self, stream, token: str, t0: float, deadline: list, rearm, cap: int, on_ask):
        self.stream, self.token, self.t0, self.deadline, self.rearm, self.cap = \
            stream, token, t0, deadline, rearm, cap
        self.messages, self.times, self.forged, self.garbage = [], [], 0, []
        self.lock = threading.Lock()
        self.on_ask = on_ask
        self.errors = []                # exceptions of the grader's own callbacks
        self.on_message = None          # called with each authentic body, outside the lock

    def refuse(self, why: str, count: int = 1) -> None:
        with self.lock:
            self.forged += count
            if len(self.garbage) < 10:
                self.garbage.append(why)

    def run(self) -> None:
        buf, total, over = b"", 0, False
        while True:
            chunk = self.stream.read1(1 << 20)
            if not chunk:
                break
            if over:
                continue                # drained and dropped: the child keeps no grader busy
            total += len(chunk)
            if total > self.cap:
                over, buf = True, b""
                self.refuse(f"reply channel over {self.cap} bytes: the rest ignored")
                continue
            buf += chunk
            if b"\n" in chunk:
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self.take(line)
        if buf and not over:
            self.take(buf)
        self.stream.close()

    def take(self, line: bytes) -> None:
        now = time.monotonic()
        body, is_ask, why = decode_reply(line, self.token)
        if why is not None:
            self.refuse(why)
            return
        if isinstance(body, dict) and body.get("kind") == "job_end":
            n = body.get("garbage")
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                for why in (body.get("garbage_reasons") or [])[:3]:
                    self.refuse(f"job {body.get('job')}: {why}", 0)
                self.refuse(f"job {body.get('job')}: {n} unreadable line(s)", n)
        if len(self.messages) >= _MAX_MESSAGES:
            self.refuse(f"more than {_MAX_MESSAGES} messages")
            return
        with self.lock:
            self.messages.append(body)
            self.times.append(now - self.t0)
        try:                            # the grader's callbacks see the child's data: a bug there
            extra = self.rearm(body) if self.rearm is not None else None      # is an error
            if extra is not None:
                with self.lock:
                    self.deadline[0] = now + extra
            if is_ask:
                self.on_ask(body)
            elif self.on_message is not None:
                self.on_message(body)
        except Exception as exc:
            self.errors.append(f"the grader's rearm/followup callback raised {exc!r}"[:300])


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and all its descendants (read from outside, /proc)."""
    total, stack, seen = 0, [pid], set()
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * page
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_isolated(submission_dir: str, driver_body: str, request: dict, timeout: float, *,
                 interact=None, followup=None, rearm=None, lib_files: dict | None = None,
                 cpu_seconds: int | None = None, mem_bytes: int | None = None,
                 memory: str = "address", env_pass: tuple = (), ro_paths: tuple = (),
                 no_site: tuple = ()) -> RunOutcome:
    """Run DRIVER_PROLOGUE + driver_body in a fresh sandboxed interpreter on a private copy of
    the submission, with resource limits and a wall-clock deadline enforced from outside.
    Only token-tagged lines on the runner's own pipe count.
      interact(body) -> reply   answers every ask() of the child (in a grader thread);
      followup(body) -> obj     one line for the child's receive(), sent (once) when it returns
                                something; until then the child's input stays open and empty;
      rearm(body) -> seconds    a message moves the deadline to now + seconds;
      lib_files {rel: text}     written to a private folder, request["lib_dir"];
      cpu_seconds               RLIMIT_CPU (default: timeout + SPEC["runner_cpu_slack_s"]);
      mem_bytes, memory         the memory limit (default SPEC["runner_mem_bytes"]): "address"
                                = RLIMIT_AS per process; "resident" = the child tree's resident
                                memory polled from outside (GPU runtimes reserve huge address
                                space), killed with a clean reason on excess;
      env_pass, ro_paths        environment variables passed through, extra read-only paths
                                the child may see (e.g. CUDA's);
      no_site                   modules the driver needs (e.g. ("numpy", "scipy")): when every one
                                of them is found in the site directories themselves (not through
                                a .pth import hook), the driver starts without `site` (python -S:
                                its .pth imports cost ~25 ms) and gets those directories on its
                                path; else it starts as usual."""
    limits = {k: SPEC[f"runner_{k}"] for k in ("mem_bytes", "fsize_bytes", "cpu_slack_s",
                                               "term_grace_s", "output_cap_bytes",
                                               "reply_cap_bytes", "copy_cap_bytes")}
    mem = int(mem_bytes if mem_bytes is not None else limits["mem_bytes"])
    with _PROBE_LOCK:
        known = dict(_SANDBOX)
    # Before anything is known, launch in the full sandbox at once: its init reports what held
    # (no separate probe on the critical path); if it did not hold, probe, and run again.
    plan = known or {"prefix": _full_prefix(), "root": True}
    level = {k: v for k, v in known.items() if k not in ("prefix", "root")}
    again = dict(interact=interact, followup=followup, rearm=rearm, lib_files=lib_files,
                 cpu_seconds=cpu_seconds, mem_bytes=mem_bytes, memory=memory, env_pass=env_pass,
                 ro_paths=ro_paths, no_site=no_site)
    work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-")
    t0 = time.monotonic()
    try:
        sub = os.path.join(work, "submission")
        try:
            _copy_submission(submission_dir, sub, limits["copy_cap_bytes"])
        except OSError as exc:
            return RunOutcome("error", [], f"could not copy submission: {exc}", 0.0, None, "", "",
                              sandbox=level)
        driver_dir = os.path.join(work, "driver")
        home = os.path.join(work, "home")
        os.makedirs(driver_dir)
        os.makedirs(home)
        os.makedirs(os.path.join(work, "root"))
        lib = os.path.join(driver_dir, "lib")
        for rel, text in (lib_files or {}).items():
            os.makedirs(os.path.dirname(os.path.join(lib, rel)), exist_ok=True)
            with open(os.path.join(lib, rel), "w") as fh:
                fh.write(text)
        driver = os.path.join(driver_dir, "grader_driver.py")
        with open(driver, "w") as fh:
            fh.write(DRIVER_PROLOGUE + driver_body)
        token = secrets.token_hex(16)
        site_dirs = _site_dirs(no_site)
        req = dict(request, token=token, submission_dir=sub, lib_dir=lib, scratch_dir=home,
                   runner={"reply_cap": limits["reply_cap_bytes"], "isolated": bool(plan["root"]),
                           "path": site_dirs or []})
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home,
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        # BLAS threads pinned to 1 (CONVENTIONS): the verdict must not depend on the grading
        # machine's core count (a dense LAPACK solve's round-off depends on the thread count).
        env.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")})
        for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV") + tuple(env_pass):
            if key in os.environ:
                env[key] = os.environ[key]
        cpu = cpu_seconds if cpu_seconds is not None else int(timeout) + int(limits["cpu_slack_s"])
        rlimits = [["RLIMIT_CPU", int(cpu)], ["RLIMIT_FSIZE", int(limits["fsize_bytes"])],
                   ["RLIMIT_CORE", 0]] + ([["RLIMIT_AS", mem]] if memory == "address" else [])
        import socket
        life, life_child = socket.socketpair()
        rfd, wfd = os.pipe()
        cfg = _launch_cfg(work, plan["root"], [sub, home],
                          [_python_exe(), "-I", "-B"] + (["-S"] if site_dirs else []) + [driver, str(wfd)],
                          sub, rlimits,
                          life_child.fileno(), ro_paths, os.path.realpath(submission_dir))
        try:
            proc = subprocess.Popen(plan["prefix"] + [_python_exe(), "-I", "-S", "-B", "-c",
                                                          _SANDBOX_INIT, json.dumps(cfg)],
                                    cwd=sub, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(wfd, life_child.fileno()),
                                    start_new_session=True)
        except OSError as exc:
            for fd in (rfd, wfd):
                os.close(fd)
            life.close()
            life_child.close()
            if not known:                              # e.g. no unshare here: probe, run again
                sandbox_level()
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            return RunOutcome("error", [], f"could not start the child: {exc}", 0.0, None, "", "",
                              sandbox=level)
        os.close(wfd)
        life_child.close()
        import queue
        import select
        deadline = [time.monotonic() + timeout]
        out, err, failure = [], [], []
        lines = queue.Queue()          # what the grader writes to the child's input, in order
        lines.put(req)
        asks = queue.Queue()

        def write_lines():
            while True:
                obj = lines.get()
                if obj is None:
                    break
                try:
                    proc.stdin.write((json.dumps(obj) + "\n").encode())
                    proc.stdin.flush()
                except (OSError, ValueError):
                    break
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

        def answer_asks():
            while True:
                body = asks.get()
                if body is None:
                    break
                try:
                    reply = interact(body) if interact is not None else None
                except Exception as exc:          # the grader's own callback failed
                    failure.append(f"the grader's interact callback raised {exc!r}"[:300])
                    reply = None
                lines.put({"reply": reply, "job": body.get("job") if isinstance(body, dict) else None})

        reader = _ReplyReader(os.fdopen(rfd, "rb"), token, t0, deadline, rearm,
                              limits["reply_cap_bytes"], asks.put)
        reader.errors = failure        # a callback error ends the run as "error"
        if followup is not None:
            pending = [followup]

            def on_message(body):
                obj = pending[0](body) if pending else None
                if obj is not None:
                    pending.clear()
                    lines.put(obj)
            reader.on_message = on_message
        if interact is None and followup is None:
            lines.put(None)            # nothing more will be said: the child's input ends
        cap = limits["output_cap_bytes"]
        threads = [threading.Thread(target=_drain, args=(proc.stdout, out, cap), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, cap), daemon=True),
                   threading.Thread(target=reader.run, daemon=True),
                   threading.Thread(target=write_lines, daemon=True),
                   threading.Thread(target=answer_asks, daemon=True)]
        for t in threads:
            t.start()
        timed_out, over_mem, next_rss = False, None, 0.0
        try:
            exited = os.pidfd_open(proc.pid)    # readable the moment the child exits (Linux >= 5.3)
        except (AttributeError, OSError):
            exited = None
        while True:
            with reader.lock:
                left = deadline[0] - time.monotonic()
            if left <= 0:
                timed_out = proc.poll() is None
                break
            if failure:
                break
            if memory == "resident" and time.monotonic() >= next_rss:
                next_rss = time.monotonic() + 0.1
                rss = _tree_rss(proc.pid)
                if rss > mem:
                    over_mem = rss
                    break
            if exited is not None:              # (Popen.wait(timeout) polls in growing sleeps)
                select.select([exited], [], [], min(left, 0.05))
                if proc.poll() is not None:
                    break
                continue
            try:
                proc.wait(timeout=min(left, 0.05))
                break
            except subprocess.TimeoutExpired:
                continue
        if exited is not None:
            os.close(exited)
        with reader.lock:          # nothing arriving after the deadline counts
            n_in_time = len(reader.messages)
            limit_s = deadline[0] - t0
        # the whole process group goes, whether or not the driver exited (and with unshare's
        # pid namespace every process of the run, daemons included, when its init dies)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=float(limits["term_grace_s"]))
                if sig == signal.SIGTERM:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                break
            except subprocess.TimeoutExpired:
                continue
        lines.put(None)
        asks.put(None)
        for t in threads[:3]:
            t.join(timeout=5)
        life.settimeout(0.5)
        told = b""
        try:
            while True:
                chunk = life.recv(65536)
                if not chunk:
                    break
                told += chunk
        except OSError:
            pass
        life.close()
        said, ready = "", None
        for said_line in told.decode("utf-8", "replace").splitlines():
            if said_line.startswith("ready "):
                try:
                    ready = json.loads(said_line[6:])
                except ValueError:
                    pass
            else:
                said = said_line.strip()
        wall = time.monotonic() - t0
        keep = n_in_time if timed_out else len(reader.messages)
        messages, times = reader.messages[:keep], reader.times[:keep]
        forged, garbage = reader.forged, list(reader.garbage)
        stdout = b"".join(out).decode("utf-8", "replace")
        stderr = b"".join(err).decode("utf-8", "replace")
        rc = proc.returncode
        if said.startswith("exit "):
            rc = int(said.split()[1])
        elif said.startswith("signal "):
            rc = -int(said.split()[1])
        if not known:
            full = _full_level(ready)
            if full is None or said.startswith("setup ") or (rc == 127 and not messages):
                sandbox_level()                       # the full sandbox did not hold: probe,
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            with _PROBE_LOCK:
                if not _SANDBOX:
                    _SANDBOX.update(full)
            level = {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}
        extra = dict(forged=forged, times=times, sandbox=level, garbage=garbage)
        if said.startswith("setup "):
            return RunOutcome("error", [], f"sandbox setup failed: {said[6:]}", wall, rc, stdout, stderr,
                              **extra)
        if failure:
            return RunOutcome("error", messages, failure[0], wall, rc, stdout, stderr, **extra)
        if over_mem is not None:
            return RunOutcome("crashed", messages,
                              f"exceeded {mem} bytes resident ({over_mem} measured)",
                              wall, rc, stdout, stderr, **extra)
        if timed_out:
            return RunOutcome("timeout", messages, f"killed at its {limit_s:.1f} s deadline (the budget)",
                              wall, rc, stdout, stderr, **extra)
        junk = (f" ({forged} unreadable line(s) on the reply channel; first: {garbage[0]})"
                if garbage else "")
        if rc != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit code {rc}"]
            return RunOutcome("crashed", messages, f"child exited with {rc}: {last[0][:200]}{junk}",
                              wall, rc, stdout, stderr, **extra)
        if not messages:
            return RunOutcome("no_reply", [], f"child sent no result{junk}", wall, rc, stdout, stderr,
                              **extra)
        return RunOutcome("ok", messages, "", wall, rc, stdout, stderr, **extra)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> Report:
    """Files and static scan, then (started early, running meanwhile) the isolated phases,
    the arrays, sidecar and tiers, and last the phases judged against the grader's solution."""
    t_start = time.monotonic()
    report = Report(submission)
    checks, phases, keys = report.checks, report.phases, report.keys
    checks += check_files(submission)
    present = {c.id.split(".", 1)[1]: c.status is Status.PASS for c in checks}
    static = check_source(submission) if present[SPEC["solver_file"]] else []
    static_ok = present[SPEC["solver_file"]] and not any(c.status is Status.FAIL for c in static)
    run = Execution(submission, budget) if static_ok and not no_exec else None
    if run is not None:
        progress("phases regen and audit started in isolated children")
    arrs: dict = {}
    report.figures_data.update(arrays=arrs)     # PLOTS: filled below (and "fields" by execution_checks)
    if present[SPEC["npz_file"]]:
        try:
            raw = load_npz_file(os.path.join(submission, SPEC["npz_file"]), "schema.npz",
                                SPEC["max_npz_bytes"])
            checks += check_schema(raw, arrs)
        except Reject as exc:
            checks.append(exc.check)
    schema_ok = "n_values" in arrs
    if present[SPEC["json_file"]]:
        try:
            doc = read_json_file(os.path.join(submission, SPEC["json_file"]), "sidecar.document",
                                 SPEC["max_json_bytes"])
            checks += (check_sidecar(doc, arrs) if schema_ok else
                       [Check("sidecar.document", Status.SKIP, "arrays invalid: nothing to compare")])
        except Reject as exc:
            checks.append(exc.check)
    if schema_ok:
        checks += check_tier1(arrs) + check_tier2(arrs) + check_tier3(arrs)
        e = arrs["dense_errors"]
        keys["e_star_n(32)"] = float(e[0])
        keys["dense_orders_clean"] = [float(b) for b in orders(e)[:3]]
        keys["nodal_error(32)"] = float(arrs["nodal_errors"][0])
    checks += static
    phases["static"] = time.monotonic() - t_start
    progress(f"static checks done ({len(checks)} records)")
    if no_exec:
        checks.append(Check("provenance.not_executed", Status.INFO,
                            "--no-exec: fem_solver.py not run, provenance not established"))
    elif run is None:
        checks.append(Check("provenance.not_executed", Status.SKIP,
                            "fem_solver.py missing or rejected statically: not run"))
    else:
        checks += execution_checks(run, arrs, report) + [sandbox_check()]   # after the runs: they established the level
        progress("phases judged: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()
                                                if k in ("regen", "audit", "reference")))
    phases["total"] = time.monotonic() - t_start
    keys["review_required"] = sum(c.status is Status.REVIEW for c in checks)
    return report


# =============================================================================
# VERDICT
# =============================================================================
def tier_of(check_id: str) -> str:
    return check_id.split(".", 1)[0]


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  Seed "Score behavior": any failure
    outside Tier 3 -> 0.0; --strict and a review flag -> 0.0; a Tier 3 failure
    (missing artifact, artifact checks, 1e-11 < deviation <= 1e-9) -> 0.5."""
    if no_exec:
        return "UNGRADED", None
    fails = [c for c in checks if c.status is Status.FAIL]
    if any(tier_of(c.id) != "tier3" for c in fails):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    if fails:
        return "PARTIAL", 0.5
    return "PASS", 1.0


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


# ---- FEM figures ---------------------------------------------------------------------------
def fem_plot_data(figures_data: dict) -> dict:
    """What the figures draw, from what grade() kept: the submitted arrays (validated by
    check_schema) and the regenerated fields execution_checks decoded."""
    import numpy as np
    arrs = figures_data.get("arrays") or {}
    ns = list(SPEC["meshes"])
    data = {"n": ns, "submitted": None, "regenerated": None, "artifact": None,
            "artifact_regenerated": None}
    if "n_values" in arrs:
        data["submitted"] = (np.asarray(arrs["nodal_errors"], float),
                             np.asarray(arrs["dense_errors"], float))
        if all(a in arrs for a in ARTIFACT_ARRAYS):
            data["artifact"] = {a: np.asarray(arrs[a], float) for a in ARTIFACT_ARRAYS}
    fields = figures_data.get("fields") or {}
    if len(fields) == len(ns):
        errs = study_errors(fields)
        data["regenerated"] = (np.array([errs[n][0] for n in ns]), np.array([errs[n][1] for n in ns]))
        data["artifact_regenerated"] = fields[SPEC["artifact_n"]][1]
    return data


def plot_fem_convergence(data: dict, *, submission: str, result: str, score):
    """Nodal and dense max-norm errors against h on log-log axes, submitted (filled, solid)
    and regenerated (open, dashed); the Tier 1 band around the gold values, a slope-4 guide,
    the fitted clean-regime slope, the round-off regime shaded."""
    import numpy as np
    fig = new_figure(8.5, 6.4)
    ax = fig.add_subplot()
    ns = np.asarray(data["n"], float)
    h = 1.0 / ns
    clean = ns <= SPEC["artifact_n"]
    gold_n = np.array(list(SPEC["tier1_gold"]), float)
    gold = np.array(list(SPEC["tier1_gold"].values()))
    ax.axvspan(h.min() / 1.4, math.sqrt(h[clean].min() * h[~clean].max()), color="0.85", lw=0,
               label=f"round-off regime n ≥ {int(ns[~clean].min())}\n(Tier 2: e*(2048) > 10 e*(256))")
    band = SPEC["tier1_band"]
    for i, (gn, g) in enumerate(zip(gold_n, gold)):
        ax.fill_between([1.0 / gn / 1.25, 1.25 / gn], g * (1 - band), g * (1 + band),
                        fc=PLOT_COLORS["reference"], alpha=0.45, ec=PLOT_COLORS["reference"], lw=1.2,
                        label=f"Tier 1 band: gold e*(n) ± {band:.0%}" if i == 0 else None)
    h_guide = h[clean]
    ax.loglog(h_guide, 0.2 * gold[0] * (h_guide / h_guide.max()) ** 4, color="black", ls=":",
              lw=1.2, label="slope-4 guide ∝ h⁴")
    notes = []
    for source, style in (("submitted", dict(ls="-", ms=6, filled=True)),
                          ("regenerated", dict(ls="--", ms=11, filled=False))):
        errs = data.get(source)
        if errs is None:
            notes.append(f"{source}: none" + (" (not executed or not reproduced)"
                                              if source == "regenerated" else ""))
            continue
        for kind, e, marker, color in (("dense e*", errs[1], "o", PLOT_COLORS["submitted"]),
                                       ("nodal e", errs[0], "s", "#9467bd")):
            ok = np.isfinite(e) & (e > 0)
            ax.loglog(h[ok], e[ok], marker=marker, ls=style["ls"], ms=style["ms"], color=color,
                      mfc=color if style["filled"] else "none", mew=1.4, lw=1.4 if style["filled"] else 1.0,
                      label=f"{kind}, {source}")
        ok = clean & np.isfinite(errs[1]) & (errs[1] > 0)
        if ok.sum() >= 2:
            notes.append(f"dense slope, {source}: {lsq_order(ns[ok], errs[1][ok]):.3f}")
    notes.insert(0, f"least-squares fit over the clean regime n = {int(ns[clean].min())}..{int(ns[clean].max())}:")
    ax.text(0.62, 0.97, "\n".join(notes), transform=ax.transAxes, ha="center", va="top", fontsize=9,
            bbox=dict(boxstyle="round", fc="white", ec="0.6"))
    ax.set_xlabel("mesh size h = 1/n  (beam lengths; the beam is [0, 1], dimensionless)")
    ax.set_ylabel("max-norm error of u  (dimensionless)")
    top = ax.secondary_xaxis("top", functions=(reciprocal, reciprocal))
    top.set_xlabel("n (elements)")
    ax.set_xlim(h.min() / 1.4, h.max() * 1.4)
    ax.grid(True, which="major", color="0.9", lw=0.6)
    ax.legend(loc="lower left", fontsize=8, framealpha=0.95)
    verdict_title(fig, "nodal and dense errors against h", submission, result, score)
    return fig


def plot_fem_artifact(data: dict, *, submission: str, result: str, score):
    """The n = 256 artifact: pointwise error uh - u against x (submitted, and regenerated
    when the solver ran), the Tier 3 limit; below, |submitted - regenerated| against the
    artifact provenance thresholds."""
    import numpy as np
    fig = new_figure(9.0, 6.4)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    art, regen = data.get("artifact"), data.get("artifact_regenerated")
    lim = SPEC["artifact_max_error"]
    if art is None:
        top.text(0.5, 0.5, "artifact arrays absent or invalid (Tier 3 missing)", ha="center",
                 va="center", transform=top.transAxes, fontsize=11, color=PLOT_COLORS["FAIL"])
        top.set_yscale("log")
    else:
        x = art["x_dense"]
        curves = [("submitted: |uh_dense − u| (recomputed)", art["uh_dense"], "-", PLOT_COLORS["submitted"])]
        if regen is not None:
            curves.append(("regenerated: |solve(256) − u|", regen, "--", PLOT_COLORS["regenerated"]))
        peak = 0.0
        for label, uh, ls, color in curves:
            err = np.abs(uh - exact_u(x))
            peak = max(peak, float(np.nanmax(err)))
            top.semilogy(x, np.maximum(err, 1e-18), ls=ls, color=color, lw=0.9 if ls == "-" else 0.7,
                         alpha=1.0 if ls == "-" else 0.8,
                         label=f"{label}, max {np.nanmax(err):.3e}")
        top.set_ylim(max(1e-18, min(peak, lim) / 1e5), max(peak, lim) * 8)
    top.axhline(lim, color=PLOT_COLORS["FAIL"], ls=":", lw=1.2, label=f"Tier 3 limit: max |uh − u| < {lim:g}")
    top.set_ylabel("pointwise error |uh − u|\n(dimensionless)")
    top.legend(loc="lower right", fontsize=8, framealpha=0.95)
    top.grid(True, color="0.9", lw=0.6)
    if art is not None and regen is not None:
        dev = np.abs(art["uh_dense"] - regen)
        floor = 1e-18
        bottom.semilogy(x, np.maximum(dev, floor), color="#8c564b", lw=1.0,
                        label="|submitted − regenerated|" + (" (0 drawn at 1e-18)" if (dev == 0).any() else ""))
        bottom.axhline(SPEC["artifact_tier3_atol"], color=PLOT_COLORS["PARTIAL"], ls="--", lw=1.0,
                       label=f"above {SPEC['artifact_tier3_atol']:g}: Tier 3 fails (0.5)")
        bottom.axhline(SPEC["artifact_fail_atol"], color=PLOT_COLORS["FAIL"], ls="--", lw=1.0,
                       label=f"above {SPEC['artifact_fail_atol']:g}: FAIL (0.0)")
        bottom.set_ylim(floor / 3, max(1e-7, float(dev.max()) * 10))
        bottom.legend(loc="upper right", fontsize=8)
    else:
        bottom.text(0.5, 0.5, "no regenerated field to compare with\n(solver not executed or not "
                    "reproduced)", ha="center", va="center", transform=bottom.transAxes, fontsize=10)
    bottom.set_ylabel("|uh_submitted − uh_regenerated|\n(dimensionless)")
    bottom.set_xlabel("x  (beam coordinate, dimensionless)")
    bottom.grid(True, color="0.9", lw=0.6)
    verdict_title(fig, f"the n = {SPEC['artifact_n']} artifact, pointwise", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: every FEM figure, as INFO records listing the PNGs."""
    data = fem_plot_data(figures_data)
    kw = dict(submission=submission, result=result, score=score)
    return write_figures(out_dir, [
        ("fem_convergence", "nodal and dense errors vs h (log-log), submitted and regenerated, "
         "Tier 1 band, slope-4 guide, round-off regime", lambda: plot_fem_convergence(data, **kw)),
        ("fem_artifact", f"n = {SPEC['artifact_n']} artifact: pointwise error vs x",
         lambda: plot_fem_artifact(data, **kw))])


# =============================================================================
# PRINTING AND CLI
# =============================================================================
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "e_star_n(32)": lambda v, keys: f"{v:.6e}",
    "dense_orders_clean": lambda v, keys: " ".join(f"{b:.3f}" for b in v),
    "nodal_error(32)": lambda v, keys: f"{v:.3e}",
    "solve_entry_points": lambda v, keys: ", ".join(v) or "none observed",
    "artifact_deviation": lambda v, keys: f"{v:.3e}",
}
LEADERBOARD = (("score", "score", "desc"), ("review_required", "keys.review_required", "asc"))
POSITIVE_OPTIONS = ("budget",)
OUTPUT_OPTIONS = (("json", False), ("table", False))


def format_check(c: Check, width: int = 30) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<{width}} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None, quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW when quiet), the summary over ALL checks, keys, verdict."""
    stream = stream or sys.stdout
    shown = [c for c in checks if not quiet or c.status in (Status.FAIL, Status.REVIEW)]
    width = max([30] + [len(c.id) for c in shown])
    for c in shown:
        print(format_check(c, width), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    for key, value in keys.items():
        print(f"{key}: {format_value(key, value, keys)}", file=stream)
    print(f"RESULT: {result}", file=stream)
    if score is not None:
        print(f"SCORE: {score}", file=stream)


def print_submission_output(outcomes: dict, stream=None) -> None:
    """Captured child output, indented under a header, on stderr only."""
    stream = stream or sys.stderr
    shown = False
    for phase, oc in outcomes.items():
        text = (oc.stdout + oc.stderr).strip()
        if not text:
            continue
        if not shown:
            print("submission output:", file=stream)
            shown = True
        print(f"  [{phase}]", file=stream)
        for line in text.splitlines()[:200]:
            print("    " + line, file=stream)


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure, 130 interrupted; "
               "with several submissions, the largest of theirs")
    add_report_options(p, submissions_help="directory with fem_solver.py, results.json, "
                       "reference_arrays.npz")
    p.add_argument("--budget", type=float, default=SPEC["budget_s"],
                   help="wall-clock seconds per execution phase (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="anything needing review scores 0.0")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: diagnostics only, RESULT: UNGRADED, exit 2")
    return p


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    return grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict, no_exec=args.no_exec)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    print_submission_output(report.outcomes)
    print_report(report.checks, result, score, report.keys, quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {}


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
