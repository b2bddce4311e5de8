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

GRADER_NAME = "grade_fem"
GRADER_VERSION = "1.0.0"

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
    # seed: "observes a library linear solve of dimension 2(n-1)" -> 2*(n-1)
    # seed: "reruns n = 32 after replacing the results ... with non-finite values" -> NaN mode at
    # n = 32.  Decision (problem_spec.md): the finite perturbation (and an untampered repeat,
    # provenance.deterministic) runs at EVERY mesh: a solver honest at n = 32 only, with a
    # discarded dummy solve and an analytic field elsewhere, must not escape.
    "audit_nan_meshes": (32,),
    "audit_meshes": (32, 64, 128, 256, 512, 1024, 2048),
    "audit_rel_perturbation": 1e-6,  # specs/fem.md: "a finite perturbation (relative 1e-6)"
    "audit_unchanged_atol": 1e-12,   # seed: "an unchanged-field comparison uses rtol=0, atol=1e-12"
    # seed: "a library linear solve of dimension 2(n-1), exactly the free value/slope DOF count".
    # Decision (problem_spec.md): that solve's matrix must also carry the statement's stiffness
    # entries (distinct |entries| / max = 1, 1/2, h/4, h^2/3, h^2/12, to 1e-9 relative; entries
    # below 1e-10 of the largest count as zero), and only such solves are tampered with.
    "stiffness_sig_rel": 1e-9,
    "stiffness_sig_floor": 1e-10,
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


def import_audit(source: str, check_prefix: str) -> list:
    """AST pass: every import outside stdlib + numpy + scipy fails; importlib /
    __import__ / exec / eval are flagged for review (the allowlist is static)."""
    try:
        tree = parse_python(source, SPEC["solver_file"], f"{check_prefix}.syntax")
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


def hermite_field(coef, n: int, x):
    """The field at x from global (value, slope) unknowns, all four local DOFs."""
    import numpy as np
    k = np.minimum(np.floor(x * n).astype(np.int64), n - 1)
    t = x * n - k
    local = np.stack([coef[2 * k], coef[2 * k + 1], coef[2 * k + 2], coef[2 * k + 3]], axis=-1)
    return np.sum(hermite_shapes(t, 1.0 / n) * local, axis=-1)


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
    x_nodes, x_dense = prescribed_grids(n)
    return coef[0::2].copy(), hermite_field(coef, n, x_dense)


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
                     f"{len(arrs)} arrays with shapes (7,) / (2561,)"
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
        raise Reject("schema.n_values", f"n_values = {arrs['n_values'].tolist()}, expected 2^5..2^11",
                     arrs["n_values"], list(SPEC["meshes"]))
    out.append(Check("schema.n_values", Status.PASS, "n = 32..2048 (2^5..2^11)"))
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
    import numpy as np
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
    out.append(Check("sidecar.fields", Status.PASS,
                     'exact_solution, dofs_per_node == ["value", "slope"], asymptotic_order == 4'))
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
                     f"least-squares fit over n = 32..256: {fit:.4f}", claimed, fit)
    out.append(Check("sidecar.observed_order", Status.PASS,
                     f"observed_order_clean_regime = {claimed:.4f}, fit {fit:.4f} (tol 0.25)"))
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
    out.append(Check(cid, Status.PASS, "artifact block: n = 256, 2561 points, "
                     "dense_max_error == dense_errors[3]"))
    return out


# =============================================================================
# 3. NUMERICAL TIERS (recomputed from the arrays, never read from claims)
# =============================================================================
def check_tier1(arrs: dict) -> list:
    e = dict(zip(SPEC["meshes"], arrs["dense_errors"].tolist()))
    out = []
    bad = []
    for n, gold in SPEC["tier1_gold"].items():
        if abs(e[n] - gold) > SPEC["tier1_band"] * gold:
            bad.append(f"e*({n}) = {e[n]:.3e} (band {gold:.6e} +-25%)")
    msg = ", ".join(f"e*({n}) = {e[n]:.4e}" for n in SPEC["tier1_gold"])
    out.append(Check("tier1.dense_band", Status.FAIL if bad else Status.PASS,
                     "; ".join(bad) if bad else msg + " within +-25% of gold",
                     [e[n] for n in SPEC["tier1_gold"]], list(SPEC["tier1_gold"].values())))
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
    beta = orders(e)[:ns.index(SPEC["artifact_n"])]      # 32->64, 64->128, 128->256
    lo, hi = SPEC["order_band"]
    good = sum(lo <= b <= hi for b in beta)
    need = SPEC["clean_orders_needed"]
    out.append(Check("tier2.order4", Status.PASS if good >= need else Status.FAIL,
                     f"clean dense orders {', '.join(f'{b:.3f}' for b in beta)}: {good} of 3 in "
                     f"[{lo}, {hi}] (need {need})", beta, [lo, hi]))
    cap = min(SPEC["nodal_abs_max"], e[0] / SPEC["nodal_ratio"])
    ok = en[0] < SPEC["nodal_abs_max"] and en[0] < e[0] / SPEC["nodal_ratio"]
    out.append(Check("tier2.nodal_superconvergence", Status.PASS if ok else Status.FAIL,
                     f"e_n(32) = {en[0]:.3e}, need < 1e-8 and < e*(32)/100 = {e[0] / 100:.3e}",
                     en[0], cap))
    i256, i2048 = ns.index(SPEC["artifact_n"]), ns.index(2048)
    ok = e[i2048] > SPEC["roundoff_factor"] * e[i256]
    out.append(Check("tier2.roundoff_floor", Status.PASS if ok else Status.FAIL,
                     f"e*(2048) = {e[i2048]:.3e}, need > 10 e*(256) = {10 * e[i256]:.3e}",
                     e[i2048], 10 * e[i256]))
    return out


def check_tier3(arrs: dict) -> list:
    """The n = 256 artifact, from the arrays alone."""
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
    why += [] if d <= SPEC["grid_atol"] else [f"|x - i/2560| = {d:.2e} at i = {i} (tol 1e-15)"]
    out.append(Check("tier3.x_dense", Status.PASS if ok else Status.FAIL,
                     "; ".join(why) if why else "strictly increasing, exactly 0.0..1.0, == i/2560",
                     d, SPEC["grid_atol"]))
    i, d = worst(ue - exact_u(x))
    out.append(Check("tier3.uexact_dense", Status.PASS if d <= SPEC["uexact_atol"] else Status.FAIL,
                     f"max |uexact_dense - e^x x^2 (1-x)^2| = {d:.2e} at i = {i} (tol 1e-14)",
                     d, SPEC["uexact_atol"]))
    i, d = worst(err - (uh - ue))
    out.append(Check("tier3.error_dense", Status.PASS if d <= SPEC["error_field_atol"] else Status.FAIL,
                     f"max |error_dense - (uh_dense - uexact_dense)| = {d:.2e} at i = {i}",
                     d, SPEC["error_field_atol"]))
    i, emax = worst(uh - exact_u(x))
    ok = emax < SPEC["artifact_max_error"]
    out.append(Check("tier3.max_error", Status.PASS if ok else Status.FAIL,
                     f"max |uh_dense - u| = {emax:.3e} at i = {i} (need < 1e-9)",
                     emax, SPEC["artifact_max_error"]))
    k = SPEC["meshes"].index(SPEC["artifact_n"])
    row = float(arrs["dense_errors"][k])
    ok = abs(emax - row) <= SPEC["artifact_rel"] * row
    out.append(Check("tier3.matches_table", Status.PASS if ok else Status.FAIL,
                     f"recomputed {emax:.6e} vs dense_errors[{k}] = {row:.6e} (rel 1e-6)", emax, row))
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
    out = import_audit(source, "static")
    if any(c.id == "static.syntax" for c in out):
        return out
    names = set()
    tree = parse_python(source, SPEC["solver_file"], "static.syntax")
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


# The grader's driver shares the child process with the submission: code that
# reaches the driver's namespace or frames could forge what it records.
INTROSPECTION_MODULES = ("__main__", "gc", "inspect", "ctypes", "builtins")
INTROSPECTION_ATTRS = ("modules", "_getframe", "f_back", "f_globals", "f_locals", "tb_frame",
                       "gi_frame", "cr_frame", "__globals__", "get_objects", "get_referrers")


def introspection_audit(tree) -> list:
    """REVIEW when the source touches sys.modules, frames, gc, inspect or ctypes."""
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            hits += [f"import {a.name} (line {node.lineno})" for a in node.names
                     if a.name.split(".")[0] in INTROSPECTION_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in \
                INTROSPECTION_MODULES and not node.level:
            hits.append(f"from {node.module} import ... (line {node.lineno})")
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION_ATTRS:
            hits.append(f".{node.attr} (line {node.lineno})")
    if not hits:
        return [Check("static.introspection", Status.PASS,
                      "no access to sys.modules, frames, gc, inspect or ctypes")]
    return [Check("static.introspection", Status.REVIEW,
                  "reaches interpreter internals the grader's in-process instrumentation shares "
                  "(it could forge the recorded solves): " + ", ".join(hits[:6]), hits)]


# =============================================================================
# 5-8. PROVENANCE: the instrumented driver run inside the isolated child
# =============================================================================
# Phase "regen": import fem_solver (watching for file writes), call solve(n)
# for all seven meshes, stream each returned field and the observed solves.
# Phase "audit": import afresh, call solve(32) with the outermost library
# solve/factor outputs tampered (finite relative perturbation first, then NaN).
# Instrumentation is installed before the submission is imported, by identity
# over every attribute of every loaded numpy/scipy module.
FEM_DRIVER = r'''
import time as _time
from base64 import b64encode as _b64
_SUBDIR = _REQ["submission_dir"]
_WORK = _os.path.dirname(_SUBDIR)
while _SUBDIR in _sys.path:          # numpy/scipy must not be shadowed by submitted files
    _sys.path.remove(_SUBDIR)
import functools as _functools
import numpy as _np
import numpy.linalg
_MODS = ["scipy", "scipy.linalg", "scipy.linalg.lapack", "scipy.linalg.blas", "scipy.sparse",
         "scipy.sparse.linalg"]
for _m in _MODS:
    try:
        __import__(_m)
    except Exception:
        pass
_sys.path.insert(0, _SUBDIR)

_LAPACK = ("gesv", "gbsv", "pbsv", "posv", "sysv", "hesv", "gtsv", "ptsv", "gesvx", "posvx",
           "gbsvx", "getrf", "getrs", "getri", "gbtrf", "gbtrs", "potrf", "potrs", "potri",
           "pbtrf", "pbtrs", "pttrf", "pttrs", "sytrf", "sytrs", "hetrf", "gels", "gelsd",
           "gelss", "gelsy", "trtrs", "tbtrs", "geqrf", "trsv", "trsm", "tbsv")
_NAMES = {
    "numpy.linalg": ("solve", "inv", "lstsq", "pinv", "cholesky", "qr", "tensorsolve", "tensorinv"),
    "numpy.linalg._umath_linalg": ("solve", "solve1", "inv", "cholesky_lo", "cholesky_up", "lstsq",
                                   "qr_r_raw", "qr_reduced", "qr_complete"),
    "scipy.linalg": ("solve", "solve_banded", "solveh_banded", "solve_triangular", "inv", "pinv",
                     "lstsq", "lu", "lu_factor", "lu_solve", "cho_factor", "cho_solve",
                     "cholesky", "cholesky_banded", "cho_solve_banded", "ldl", "qr",
                     "solve_toeplitz", "solve_circulant"),
    "scipy.linalg._batched_linalg": ("_solve", "_inv"),
    "scipy.linalg._flapack": tuple(p + b for p in "sdcz" for b in _LAPACK),
    "scipy.linalg._fblas": tuple(p + b for p in "sdcz" for b in _LAPACK),
    "scipy.sparse.linalg": ("spsolve", "splu", "spilu", "factorized", "spsolve_triangular", "cg",
                            "cgs", "bicg", "bicgstab", "gmres", "lgmres", "minres", "qmr",
                            "gcrotmk", "tfqmr", "lsqr", "lsmr", "inv"),
    "scipy.sparse.linalg._dsolve._superlu": ("gssv", "gstrf"),
}
_ST = {"depth": 0, "calls": [], "mode": None, "tampered": 0, "n": 1}
_FACTORY = ("splu", "spilu", "factorized")


def _matrix_of(args):
    flat = []
    for a in args:
        flat.extend(a if isinstance(a, (tuple, list)) and len(a) <= 4 else [a])
    for a in flat:
        shp = getattr(a, "shape", None)
        if isinstance(shp, tuple) and len(shp) >= 2:
            return a, flat
    for a in flat:
        shp = getattr(a, "shape", None)
        if isinstance(shp, tuple) and len(shp) == 1:
            return a, flat
    return None, flat


def _describe(name, args):
    rec = {"fn": name, "dim": None, "hb": None}
    try:
        a, flat = _matrix_of(args)
        if a is None:
            return rec
        shp = a.shape
        rec["dim"] = int(shp[-1])
        ints = [v for v in flat if isinstance(v, (int, _np.integer)) and not isinstance(v, bool)]
        pair = [v for v in args if isinstance(v, tuple) and len(v) == 2
                and all(isinstance(w, (int, _np.integer)) for w in v)]
        if pair:
            rec["hb"] = int(max(pair[0]))
        elif "gb" in name and len(ints) >= 2:
            rec["hb"] = int(max(ints[0], ints[1]))
        elif hasattr(a, "tocoo"):
            c = a.tocoo()
            rec["hb"] = int(_np.max(_np.abs(c.row.astype(_np.int64) - c.col))) if c.nnz else 0
        elif len(shp) == 2 and isinstance(a, _np.ndarray):
            if shp[0] == shp[1] and shp[0] <= 6000:
                i, j = _np.nonzero(a)
                rec["hb"] = int(_np.max(_np.abs(i - j))) if i.size else 0
            elif shp[0] < shp[1]:
                rec["hb"] = int(shp[0] - 1)
        rec["sig"] = _signature(a, rec["hb"])
    except Exception as exc:
        rec["note"] = type(exc).__name__
    return rec


def _signature(a, hb):
    """Does the matrix argument carry the statement's stiffness matrix?  Its
    distinct nonzero |entries|, over the largest, are {1, 1/2, h/4, h^2/3, h^2/12}
    (24/h^3, 12/h^3, 6/h^2, 8/h, 2/h) whatever the scaling, ordering or storage
    (dense, sparse, banded).  None when the argument's entries cannot be read."""
    if hasattr(a, "tocoo"):
        vals = _np.asarray(a.tocoo().data)
    elif isinstance(a, _np.ndarray) and a.ndim == 2:
        vals = a[a != 0]
    else:
        return None
    if vals.dtype.kind not in "fiu" or not vals.size:
        return False
    vals = _np.abs(vals.astype(_np.float64))
    if not _np.all(_np.isfinite(vals)) or (hb is not None and hb < 1):
        return False
    vals = vals / vals.max()
    vals = vals[vals > _REQ["sig_floor"]]
    h = 1.0 / _ST["n"]
    ref = _np.array([1.0, 0.5, h / 4, h * h / 3, h * h / 12])
    rel = _np.abs(vals[:, None] / ref[None, :] - 1) <= _REQ["sig_rel"]
    return bool(rel.any(axis=1).all() and rel.any(axis=0).all())


def _tamper(out):
    mode = _ST["mode"]
    if isinstance(out, _np.ndarray) and out.dtype.kind in "fc" and out.size:
        _ST["tampered"] += 1
        return _np.full_like(out, _np.nan) if mode == "nan" else out * (1 + _REQ["rel"])
    if isinstance(out, (tuple, list)):
        items = [_tamper(o) for o in out]
        try:
            return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
        except Exception:
            return tuple(items)
    return out


class _LUProxy:
    """Stands in for a SuperLU object so that its C-level solve is observed; the
    solve inherits the factorised matrix's stiffness signature."""
    def __init__(self, lu, sig):
        object.__setattr__(self, "_lu", lu)
        object.__setattr__(self, "_solve", _wrap("SuperLU.solve", lu.solve, sig))

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_lu"), name)

    def solve(self, *args, **kwargs):
        return object.__getattribute__(self, "_solve")(*args, **kwargs)


_UNSET = object()


def _wrap(name, fn, sig=_UNSET):
    """Record the outermost call; in an audit run tamper with its floating
    outputs unless its matrix is known NOT to be the stiffness matrix (a probe
    solve with a known answer must not reveal the audit)."""
    def wrapper(*args, **kwargs):
        outer = _ST["depth"] == 0
        rec = {}
        if outer:                      # the outermost call is recorded once ...
            rec = _describe(name, args)
            if sig is not _UNSET:
                rec["sig"] = sig
            _ST["calls"].append(rec)
        elif _ST["calls"]:             # ... nested library layers only counted under it
            rec = _ST["calls"][-1]
            rec["nested"] = rec.get("nested", 0) + 1
            rec["depth"] = max(rec.get("depth", 0), _ST["depth"])
        _ST["depth"] += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            _ST["depth"] -= 1
        if name.rsplit(".", 1)[-1] in ("splu", "spilu") and not isinstance(out, _LUProxy):
            out = _LUProxy(out, rec.get("sig"))
        elif name.endswith(".factorized") and callable(out):
            out = _wrap("factorized.solve", out, rec.get("sig"))
        if outer and _ST["mode"] and rec.get("sig") is not False:
            out = _tamper(out)
        return out
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


def _snapshot():
    snap = {}
    for root, dirs, files in _os.walk(_WORK):
        for nm in dirs + files:
            p = _os.path.join(root, nm)
            try:
                st = _os.lstat(p)
                snap[p] = (st.st_size, st.st_mtime_ns, st.st_mode)
            except OSError:
                pass
    return snap


def _diff(a, b):
    return sorted(_os.path.relpath(p, _WORK) for p in set(a) | set(b) if a.get(p) != b.get(p))[:20]


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
        arr = _np.ascontiguousarray(_np.asarray(v, dtype=_np.float64))
        out[k] = {"shape": list(arr.shape),
                  "b64": _b64(arr.tobytes()).decode("ascii") if arr.size <= cap else None}
    return out


_ntargets, _npatched = _install()
_MODS0 = set(_sys.modules)
_ALLOWED = set(getattr(_sys, "stdlib_module_names", ())) | {"numpy", "scipy", "fem_solver"}


def _new_modules():
    return sorted({m.split(".")[0] for m in set(_sys.modules) - _MODS0} - _ALLOWED)[:20]


def _import_solver():
    """fem_solver imported in this (fresh, forked) job child; its solve or None."""
    _before = _snapshot()
    _t0 = _time.monotonic()
    try:
        import fem_solver as _sub
        _err = None
    except BaseException as _e:
        _sub, _err = None, (type(_e).__name__ + ": " + str(_e))[:400]
    _fn = getattr(_sub, "solve", None) if _sub is not None else None
    send({"kind": "import", "ok": _sub is not None, "error": _err, "has_solve": callable(_fn),
          "new_modules": _new_modules(),
          "writes": _diff(_before, _snapshot()), "wall": _time.monotonic() - _t0,
          "targets": _ntargets, "patched": _npatched})
    return _fn if callable(_fn) else None


_solve = None


def _call(n):
    _ST["calls"], _ST["tampered"], _ST["depth"], _ST["n"] = [], 0, 0, n
    t = _time.monotonic()
    try:
        fields, err = _fields(_solve(n), n), None
    except BaseException as e:
        fields, err = None, (type(e).__name__ + ": " + str(e))[:400]
    return {"n": n, "fields": fields, "error": err, "wall": _time.monotonic() - t,
            "calls": _ST["calls"][:50], "ncalls": len(_ST["calls"]), "tampered": _ST["tampered"]}


def _run_job(job):
    """One solve call in a forked child that imports fem_solver afresh (the warm parent
    never imports it): no state of one call reaches another."""
    global _solve
    _solve = _import_solver()
    if _solve is None:
        raise SystemExit(3)             # no solve(n): the remaining calls are not made
    _n, _mode = job["n"], job["mode"]
    if _mode == "regen":
        _b = _snapshot()
        _msg = _call(_n)
        _msg.update(kind="mesh", writes=_diff(_b, _snapshot()))
    else:
        _ST["mode"] = None if _mode == "repeat" else _mode
        _msg = _call(_n)
        _ST["mode"] = None
        _msg.update(kind="audit", mode=_mode)
    send(_msg)
    send({"kind": "done", "new_modules": _new_modules()})


if _REQ["phase"] == "regen":
    _JOBS = [{"id": "regen:%d" % _n, "n": _n, "mode": "regen"} for _n in _REQ["meshes"]]
else:                               # every mesh: an untampered repeat, then tampered runs
    _JOBS = [{"id": "%s:%d" % (_mode, _n), "n": _n, "mode": _mode} for _n in _REQ["audit_meshes"]
             for _mode in (("repeat", "perturb", "nan") if _n in _REQ["audit_nan_meshes"]
                           else ("repeat", "perturb"))]
for _job in _JOBS:
    if fork_jobs([_job], _run_job)[0]["status"] != "ok" and _job is _JOBS[0]:
        break                       # the first call could not even import solve(n)
'''


# =============================================================================
# 5-8. PROVENANCE: judging the recorded runs (pure functions of the messages)
# =============================================================================
def _msgs(outcome, kind: str) -> list:
    return [m for m in (outcome.messages if outcome else []) if isinstance(m, dict)
            and m.get("kind") == kind]


def _num(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _as_list(value) -> list:
    return value if isinstance(value, list) else []


def _field(msg: dict, key: str, shape: tuple, cid: str):
    """A returned field as float64, shape-checked (numpy.testing order: shape first)."""
    import numpy as np
    f = (msg.get("fields") or {}).get(key) if isinstance(msg.get("fields"), dict) else None
    if not isinstance(f, dict) or not isinstance(f.get("shape"), list):
        raise Reject(cid, f"n={msg.get('n')}: {key} not returned")
    if tuple(f["shape"]) != shape or not isinstance(f.get("b64"), str):
        raise Reject(cid, f"n={msg.get('n')}: {key} has shape {tuple(f['shape'])}, expected {shape}",
                     f["shape"], list(shape))
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


@guarded
def check_import_phase(outcome) -> list:
    """fem_solver importable, without side effects, exposing solve(n)."""
    imp = _msgs(outcome, "import")
    if not imp:
        raise Reject("provenance.import", f"fem_solver could not be imported: {outcome_note(outcome)}")
    imp = imp[0]
    if not imp.get("ok"):
        raise Reject("provenance.import", f"importing fem_solver raised {imp.get('error')}")
    out = [Check("provenance.import", Status.PASS, f"fem_solver imported in {_num(imp.get('wall')):.2f} s")]
    writes = [str(w) for w in _as_list(imp.get("writes"))]
    out.append(Check("provenance.import_side_effects", Status.FAIL if writes else Status.PASS,
                     ("importing fem_solver wrote: " + ", ".join(map(str, writes))) if writes
                     else "importing fem_solver writes no file", writes))
    out.append(Check("provenance.solve_callable", Status.PASS if imp.get("has_solve") else Status.FAIL,
                     "fem_solver.solve is callable" if imp.get("has_solve")
                     else "fem_solver exposes no callable solve(n)"))
    return out


def collect_regeneration(outcome) -> dict:
    """{n: mesh message} from the regen phase."""
    return {m.get("n"): m for m in _msgs(outcome, "mesh") if isinstance(m.get("n"), int)}


@guarded
def check_regenerated(outcome, meshes: dict, fields: dict) -> list:
    """Every mesh regenerated within the budget, on the prescribed grids, finite.
    Fills `fields` with {n: (uh_nodes, uh_dense, x_dense)}."""
    import numpy as np
    errors = [f"n={n}: {m['error']}" for n, m in sorted(meshes.items()) if m.get("error")]
    missing = [n for n in SPEC["meshes"] if n not in meshes]
    if errors:
        raise Reject("provenance.regenerate", "solve(n) failed: " + "; ".join(errors)[:600])
    if missing:
        raise Reject("provenance.regenerate", f"meshes {missing} not regenerated: "
                     f"{outcome_note(outcome) or 'child stopped'}", missing)
    wall = sum(_num(meshes[n].get("wall")) for n in SPEC["meshes"])
    out = [Check("provenance.regenerate", Status.PASS,
                 f"all 7 meshes regenerated (solve time {wall:.2f} s)", wall)]
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
                             f"{want[i]!r} (|diff| {d:.2e} > 1e-15): nonconforming grid",
                             d, SPEC["grid_atol"])
            worst_grid = max(worst_grid, (d, n))
        for name, got in (("uh_nodes", un), ("uh_dense", ud)):
            where = nonfinite_where(got)
            if where:
                raise Reject("provenance.finite", f"n={n}: {name}: {where}")
        fields[n] = (un, ud, xd)
    out.append(Check("provenance.grids", Status.PASS, "returned grids are j/n and i/(10n) to 1e-15 "
                     "at every mesh", worst_grid[0], SPEC["grid_atol"]))
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
    bad, env, worst_rel = [], [], 0.0
    for k, n in enumerate(SPEC["meshes"]):
        for j, (name, arr) in enumerate((("e_n", "nodal_errors"), ("e*_n", "dense_errors"))):
            e_re, e_sub = regen[n][j], float(arrs[arr][k])
            rel = abs(e_re - e_sub) / e_sub
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
                      "submitted errors differ from the regenerated ones beyond 1e-6 relative, by "
                      "amounts linear-solve round-off explains (BLAS threads/CPU kernel of the study "
                      "run differ from the grader's?): " + "; ".join(env[:4]) + " - verify the "
                      "study environment by hand", worst_rel, SPEC["regen_rel"])]
    return [Check("provenance.reproduces_errors", Status.PASS,
                  "regenerated nodal and dense errors match the submitted ones (rel 1e-6)",
                  worst_rel, SPEC["regen_rel"])]


def check_deterministic(audit_outcome, fields: dict) -> list:
    """A second, untampered regeneration in the grader's own (pinned) environment
    must reproduce the first one's errors to 1e-6 relative (seed's tolerance)."""
    if not fields:
        return [Check("provenance.deterministic", Status.SKIP, "no regenerated fields")]
    runs = {m.get("n"): m for m in _msgs(audit_outcome, "audit") if m.get("mode") == "repeat"}
    first, bad, missing = study_errors(fields), [], []
    again = {}
    for n in SPEC["meshes"]:
        m = runs.get(n)
        try:
            if m is None or m.get("error"):
                raise Reject("provenance.deterministic", "")
            again[n] = (_field(m, "uh_nodes", (n + 1,), "provenance.deterministic"),
                        _field(m, "uh_dense", (10 * n + 1,), "provenance.deterministic"))
        except Reject:
            missing.append(n)
    if missing:
        return [Check("provenance.deterministic", Status.FAIL, f"repeat run gave no field at n = "
                      f"{missing}: {outcome_note(audit_outcome) or 'solve(n) failed the second time'}")]
    second = study_errors(again)
    for n in SPEC["meshes"]:
        for j, name in enumerate(("e_n", "e*_n")):
            a, b = first[n][j], second[n][j]
            if not abs(a - b) <= SPEC["regen_rel"] * max(a, 1e-300):
                bad.append(f"n={n} {name}: {a:.6e} then {b:.6e}")
    return [Check("provenance.deterministic", Status.FAIL if bad else Status.PASS,
                  ("solve(n) is not reproducible in one environment: " + "; ".join(bad[:4])) if bad
                  else "a second regeneration reproduces every error to 1e-6 relative")]


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


def check_solve_observed(meshes: dict) -> list:
    """At every mesh an outermost numpy/scipy solve of dimension 2(n-1) whose
    matrix carries the statement's stiffness entries (any scaling, ordering,
    storage); a matrix whose entries cannot be read goes to review."""
    if not meshes:
        return [Check("provenance.solve_observed", Status.SKIP, "no regenerated meshes")]
    wrong, not_k, unread, unseen, seen = [], [], [], [], []
    for n in SPEC["meshes"]:
        m = meshes.get(n)
        if m is None:
            continue
        calls = [c for c in _as_list(m.get("calls")) if isinstance(c, dict)]
        dims = [c.get("dim") for c in calls]
        sized = [c for c in calls if c.get("dim") == 2 * (n - 1)]
        if not calls:
            unseen.append(n)
        elif not sized:
            wrong.append(f"n={n}: dims {sorted(set(d for d in dims if isinstance(d, int)))[:5]}, "
                         f"expected {2 * (n - 1)}")
        elif any(c.get("sig") is True for c in sized):
            c = next(c for c in sized if c.get("sig") is True)
            seen.append(f"{c.get('fn')} (hb {c.get('hb')})")
        elif any(c.get("sig") is None for c in sized):
            unread.append(n)
        else:
            not_k.append(f"n={n}: {', '.join(sorted({str(c.get('fn')) for c in sized}))[:120]}")
    out = []
    if wrong or not_k:
        out.append(Check("provenance.solve_observed", Status.FAIL, "; ".join(
            (["no library solve of the free-DOF dimension 2(n-1): " + "; ".join(wrong[:3])] if wrong
             else []) + (["the 2(n-1) system solved is not the stiffness matrix of the statement "
                          "(entries 24/h^3, 12/h^3, 6/h^2, 8/h, 2/h up to scaling): "
                          + "; ".join(not_k[:3])] if not_k else []))))
    elif unseen or unread:
        out.append(Check("provenance.solve_observed", Status.REVIEW, "; ".join(
            ([f"n={','.join(map(str, unseen))}: no observable numpy/scipy linear solve "
              "(hand-written solver, ctypes or subprocess?)"] if unseen else [])
            + ([f"n={','.join(map(str, unread))}: the matrix of the 2(n-1) solve could not be "
                "read (operator object?)"] if unread else [])) + " - verify by hand", unseen + unread))
    else:
        out.append(Check("provenance.solve_observed", Status.PASS,
                         f"library solve of the 2(n-1) stiffness system at every mesh: {seen[0]}"))
    return out


def check_runtime_modules(outcome) -> list:
    """Top-level modules outside stdlib + numpy + scipy that the submission loaded
    at run time (importlib/__import__ the static pass cannot see)."""
    names = sorted({str(n) for m in _msgs(outcome, "import") + _msgs(outcome, "done")
                    for n in _as_list(m.get("new_modules"))})
    if not names:
        return [Check("provenance.runtime_modules", Status.PASS,
                      "no module outside stdlib + numpy + scipy loaded at run time")]
    return [Check("provenance.runtime_modules", Status.REVIEW,
                  "modules outside stdlib + numpy + scipy loaded at run time: " + ", ".join(names[:10])
                  + " - check for a FEM/PDE library", names)]


def check_solve_writes(meshes: dict) -> list:
    writes = sorted({str(w) for m in meshes.values() for w in _as_list(m.get("writes"))})
    return [Check("provenance.solve_side_effects", Status.FAIL if writes else Status.PASS,
                  ("solve(n) wrote files: " + ", ".join(map(str, writes[:5]))) if writes
                  else "solve(n) writes no file", writes)]


def check_artifact_provenance(fields: dict, arrs: dict) -> list:
    """Submitted n = 256 field against the regenerated one: <= 1e-11 pass,
    (1e-11, 1e-9] Tier 3 fails, > 1e-9 provenance fails."""
    import numpy as np
    n = SPEC["artifact_n"]
    if n not in fields or not all(a in arrs for a in ARTIFACT_ARRAYS):
        return [Check("tier3.artifact_reproduced", Status.SKIP, "artifact or regenerated field absent")]
    _, ud, xd = fields[n]
    i, dx = worst(arrs["x_dense"] - xd)
    j, du = worst(arrs["uh_dense"] - ud)
    d = max(dx, du)
    where = f"x_dense dev {dx:.2e}, uh_dense dev {du:.2e} at i = {j}"
    out = [Check("provenance.artifact_field", Status.PASS if d <= SPEC["artifact_fail_atol"] else Status.FAIL,
                 f"submitted n=256 artifact vs regenerated: {where} (fail above 1e-9)",
                 d, SPEC["artifact_fail_atol"]),
           Check("tier3.artifact_reproduced", Status.PASS if d <= SPEC["artifact_tier3_atol"] else Status.FAIL,
                 f"submitted n=256 artifact vs regenerated: {where} (Tier 3 needs <= 1e-11)",
                 d, SPEC["artifact_tier3_atol"])]
    return out


def check_causal(audit_outcome, fields: dict) -> list:
    """Every audit mesh rerun with the outermost solve outputs perturbed / NaN:
    the field must change (rtol=0, atol=1e-12), become non-finite, or raise."""
    import numpy as np
    runs = {(m.get("n"), m.get("mode")): m for m in _msgs(audit_outcome, "audit")}
    out = []
    for mode in ("perturb", "nan"):
        cid = f"provenance.causal_{mode}"
        how = "perturbed" if mode == "perturb" else "replaced by NaN"
        ok, unchanged, noreport, untouchable, unseen = [], [], [], [], []
        for n in SPEC["audit_meshes"] if mode == "perturb" else SPEC["audit_nan_meshes"]:
            m = runs.get((n, mode))
            if n not in fields:
                continue
            if m is None:
                noreport.append(n)
                continue
            calls = [c for c in _as_list(m.get("calls")) if isinstance(c, dict)]
            if not calls:
                unseen.append(n)
                continue
            if all(c.get("sig") is False for c in calls):
                unchanged.append((n, None))       # nothing but non-stiffness solves: nothing feeds
                continue
            if not m.get("tampered"):
                untouchable.append(n)
                continue
            if m.get("error"):
                ok.append(n)                      # tampering made solve(n) raise
                continue
            try:
                ud = _field(m, "uh_dense", fields[n][1].shape, cid)
            except Reject:
                ok.append(n)                      # no usable field returned
                continue
            if not np.all(np.isfinite(ud)):
                ok.append(n)
                continue
            d = worst(ud - fields[n][1])[1]
            if d > SPEC["audit_unchanged_atol"]:
                ok.append(n)
            else:
                unchanged.append((n, d))
        if noreport:
            out.append(Check(cid, Status.FAIL, f"audit run did not report n = {noreport}: "
                             f"{outcome_note(audit_outcome) or 'child stopped'}", noreport))
        elif unchanged:
            where = ", ".join(f"n={n} (max dev {d:.1e})" if d is not None else
                              f"n={n} (no stiffness-matrix solve to tamper with)" for n, d in unchanged)
            out.append(Check(cid, Status.FAIL, f"field unchanged (<= 1e-12) after the solve output "
                             f"was {how} at {where}: the library solve does not feed the result "
                             "(dummy solve)", [n for n, _ in unchanged], SPEC["audit_unchanged_atol"]))
        elif untouchable:
            out.append(Check(cid, Status.REVIEW, f"n = {untouchable}: library calls observed but "
                             "none returned a floating array that could be tampered with - verify "
                             "by hand", untouchable))
        elif not ok:
            out.append(Check(cid, Status.SKIP, "no observable library solve to tamper with"))
        else:
            out.append(Check(cid, Status.PASS, f"solve output {how}: the field changed, became "
                             f"non-finite or solve raised at n = {', '.join(map(str, ok))}"
                             + (f" (no observable solve at n = {unseen})" if unseen else ""), ok))
    return out


# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def _run_phase(results: dict, name: str, sub: str, budget: float, request: dict) -> None:
    results[name] = run_isolated(sub, FEM_DRIVER, request, budget)


def stage_solver(sub: str, stage: str) -> str:
    """A directory holding only fem_solver.py: the child never sees the submitted
    outputs (a solver cannot replay reference_arrays.npz) nor stale bytecode."""
    os.makedirs(stage)
    shutil.copyfile(os.path.join(sub, SPEC["solver_file"]), os.path.join(stage, SPEC["solver_file"]))
    return stage


class Execution:
    """The isolated phases, started early so they run while the grader checks
    the files and computes its own solution."""

    def __init__(self, sub: str, budget: float):
        self.results: dict = {}
        self.tmp = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-stage-")
        common = {"meshes": list(SPEC["meshes"]), "rel": SPEC["audit_rel_perturbation"],
                  "audit_meshes": list(SPEC["audit_meshes"]),
                  "audit_nan_meshes": list(SPEC["audit_nan_meshes"]),
                  "sig_rel": SPEC["stiffness_sig_rel"], "sig_floor": SPEC["stiffness_sig_floor"]}
        try:
            stage = stage_solver(sub, os.path.join(self.tmp, "submission"))
        except OSError as exc:
            self.threads = []
            self.results = {ph: RunOutcome("error", [], f"could not stage {SPEC['solver_file']}: {exc}",
                                           0.0, None, "", "") for ph in ("regen", "audit")}
            return
        self.threads = [threading.Thread(target=_run_phase, daemon=True,
                                         args=(self.results, ph, stage, budget, dict(common, phase=ph)))
                        for ph in ("regen", "audit")]
        for t in self.threads:
            t.start()

    def join(self) -> dict:
        for t in self.threads:
            t.join()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.results


def execution_checks(run: Execution, arrs: dict, phases: dict, outcomes: dict, keys: dict) -> list:
    """Compute the grader's own solution while the phases run, then judge the recorded runs."""
    t0 = time.monotonic()
    try:
        ref = reference_study()
    finally:
        phases["reference"] = time.monotonic() - t0
        results = run.join()
    regen, audit = results.get("regen"), results.get("audit")
    outcomes.update({k: v for k, v in results.items() if v is not None})
    for name, oc in results.items():
        phases[name] = oc.wall
    out = check_import_phase(regen)
    meshes = collect_regeneration(regen)
    fields: dict = {}
    out += check_regenerated(regen, meshes, fields)
    out += check_solve_writes(meshes) if meshes else []
    out += check_reproduction(fields, arrs)
    out += check_deterministic(audit, fields)
    out += check_regenerated_tiers(fields)
    out += check_fidelity(fields, ref)
    out += check_solve_observed(meshes)
    out += check_causal(audit, fields)
    out += check_runtime_modules(regen)
    out += check_artifact_provenance(fields, arrs)
    for oc_name, oc in results.items():
        if oc is not None and oc.forged:
            out.append(Check(f"provenance.channel_{oc_name}", Status.INFO,
                             f"{oc.forged} line(s) on the reply channel without the run token ignored"))
    entry = [c for m in meshes.values() for c in _as_list(m.get("calls")) if isinstance(c, dict)]
    keys["solve_entry_points"] = ", ".join(sorted({str(c.get("fn")) for c in entry})) or "none observed"
    if fields and SPEC["artifact_n"] in fields and "uh_dense" in arrs:
        keys["artifact_deviation"] = f"{worst(arrs['uh_dense'] - fields[SPEC['artifact_n']][1])[1]:.3e}"
    return out


def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> tuple:
    """(checks, phases, outcomes, keys)."""
    t_start = time.monotonic()
    checks, phases, outcomes, keys = [], {}, {}, {}
    checks += check_files(submission)
    present = {c.id.split(".", 1)[1]: c.status is Status.PASS for c in checks}
    static = check_source(submission) if present[SPEC["solver_file"]] else []
    static_ok = present[SPEC["solver_file"]] and not any(c.status is Status.FAIL for c in static)
    run = Execution(submission, budget) if static_ok and not no_exec else None
    arrs: dict = {}
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
        keys["e_star_n(32)"] = f"{e[0]:.6e}"
        keys["dense_orders_clean"] = " ".join(f"{b:.3f}" for b in orders(e)[:3])
        keys["nodal_error(32)"] = f"{arrs['nodal_errors'][0]:.3e}"
    checks += static
    phases["static"] = time.monotonic() - t_start
    if no_exec:
        checks.append(Check("provenance.not_executed", Status.INFO,
                            "--no-exec: fem_solver.py not run, provenance not established"))
    elif run is None:
        checks.append(Check("provenance.not_executed", Status.SKIP,
                            "fem_solver.py missing or rejected statically: not run"))
    else:
        checks += execution_checks(run, arrs, phases, outcomes, keys) + [sandbox_check()]
    phases["total"] = time.monotonic() - t_start
    keys["review_required"] = sum(c.status is Status.REVIEW for c in checks)
    return checks, phases, outcomes, keys


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
#   fork_jobs(jobs, run_job)   the warm fork server: one fresh child per job, in the order
#                given, each in its own process group and user namespace, its messages
#                tagged {"job": id} by this parent, then {"kind": "job_end", ...} per job.
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


def _sweep_children(pgid):
    """Kill the job's process group and every process left to this (subreaper) parent."""
    import signal
    try:
        _os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        left = set()
        try:
            for tid in _os.listdir("/proc/self/task"):
                with open("/proc/self/task/%s/children" % tid) as fh:
                    left.update(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            pass
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


def _relay_job(job, pid, rfd, wfd, limit):
    """Relay one job child's messages (tagged with its id) until it exits or its limit.  The
    child's exit ends the job even if processes it started still hold its pipe open."""
    import select, signal, time
    jid = job["id"]
    t0 = time.monotonic()
    deadline = t0 + limit if limit else None
    try:
        pidfd = _os.pidfd_open(pid)         # readable once the child has exited (Linux >= 5.3)
    except (AttributeError, OSError):
        pidfd = None
    state = {"buf": b"", "total": 0, "garbage": 0, "reasons": [], "waiting": False}
    pending, status, reason, eof, st = b"", None, "", False, None

    def take(chunk):
        state["total"] += len(chunk)
        if state["total"] > _LIM["reply_cap"]:
            state["garbage"] += 1
            state["reasons"].append("more than %d bytes of messages" % _LIM["reply_cap"])
            return False
        state["buf"] += chunk
        *lines, state["buf"] = state["buf"].split(b"\n")
        for line in lines:
            body, how = _decode_job_line(line)
            if body is None and how not in (True, False):
                state["garbage"] += 1
                if len(state["reasons"]) < 5:
                    state["reasons"].append(how)
                continue
            tagged = dict(body, job=jid) if isinstance(body, dict) else {"job": jid, "value": body}
            if how:
                _put({"token": _CH["tok"], "body": tagged, "ask": True})
                state["waiting"] = True
            else:
                send(tagged)
        return True

    while st is None:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            status, reason = "timeout", "exceeded the %g s job limit" % limit
            break
        waiting = state["waiting"]
        buffered = waiting and b"\n" in _INBUF[0]
        rd = ([] if eof else [rfd]) + ([_CH["in"]] if waiting and not buffered else []) \
            + ([pidfd] if pidfd is not None else [])
        pause = 0 if buffered else left if pidfd is not None else min(0.02, left or 0.02)
        ready_r, ready_w, _ = select.select(rd, [wfd] if pending else [], [], pause)
        if wfd in ready_w:
            try:
                pending = pending[_os.write(wfd, pending[:65536]):]
            except OSError:
                pending = b""
        if waiting and (buffered or _CH["in"] in ready_r):
            reply = receive()               # the grader's answer (None once its input ended)
            state["waiting"] = False
            ok = isinstance(reply, dict) and reply.get("job") == jid
            pending += (_json.dumps({"reply": reply.get("reply") if ok else None}) + "\n").encode()
            _os.set_blocking(wfd, False)
        if rfd in ready_r:
            chunk = _os.read(rfd, 1 << 20)
            if not chunk:
                eof = True
            elif not take(chunk):
                status, reason = "crashed", "flooded its message channel"
                break
        if pidfd is None or pidfd in ready_r:
            done, code = _os.waitpid(pid, _os.WNOHANG)
            if done:
                st = code
    if st is not None and status is None and not eof:   # what it wrote before it exited
        _os.set_blocking(rfd, False)
        try:
            while True:
                chunk = _os.read(rfd, 1 << 20)
                if not chunk or not take(chunk):
                    break
        except BlockingIOError:
            pass
    for fd in (rfd, wfd) + ((pidfd,) if pidfd is not None else ()):
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
    _sweep_children(pid)
    end = {"kind": "job_end", "job": jid, "status": status, "reason": reason,
           "wall": time.monotonic() - t0}
    if state["garbage"]:
        end.update(garbage=state["garbage"], garbage_reasons=state["reasons"])
    send(end)
    return end


def fork_jobs(jobs, run_job):
    """The warm fork server: for each job (in the order given) fork a child that runs
    run_job(job) and exits; relay its messages tagged with job["id"]; enforce
    _REQ["job_timeout"]; send one job_end per job.  Returns the job_end messages.
    jobs may be an iterator (e.g. one that ask()s the grader for the next job): a job child
    then holds no plan of the jobs after it, as it would in a list it inherited."""
    libc = _libc()
    if libc is not None:
        libc.prctl(4, 0, 0, 0, 0)           # PR_SET_DUMPABLE 0: no job may trace or read this parent
        libc.prctl(36, 1, 0, 0, 0)          # PR_SET_CHILD_SUBREAPER: a job's orphans come back here
    import gc
    gc.freeze()                             # the warm heap stays shared: a job's collections
    limit = _REQ.get("job_timeout")         # do not touch (copy) every page of it
    ends = []
    for i, job in enumerate(jobs):
        job = dict(job) if isinstance(job, dict) else {"value": job}
        job.setdefault("id", i)
        for stream in (_sys.stdout, _sys.stderr):
            stream.flush()
        c2p_r, c2p_w = _os.pipe()
        p2c_r, p2c_w = _os.pipe()
        pid = _os.fork()
        if pid == 0:
            _os.close(c2p_r)
            _os.close(p2c_w)
            _job_child(job, run_job, c2p_w, p2c_r, libc)
        try:
            _os.setpgid(pid, pid)           # (also done by the child: no race either way)
        except OSError:
            pass
        _os.close(c2p_w)
        _os.close(p2c_r)
        ends.append(_relay_job(job, pid, c2p_r, p2c_w, limit))
    return ends


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
                 memory: str = "address", env_pass: tuple = (), ro_paths: tuple = ()) -> RunOutcome:
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
                                the child may see (e.g. CUDA's)."""
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
                 ro_paths=ro_paths)
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
        req = dict(request, token=token, submission_dir=sub, lib_dir=lib, scratch_dir=home,
                   runner={"reply_cap": limits["reply_cap_bytes"]})
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
                          [_python_exe(), "-I", "-B", driver, str(wfd)], sub, rlimits,
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
            try:
                proc.wait(timeout=min(left, 0.05))
                break
            except subprocess.TimeoutExpired:
                continue
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
# PRINTING AND CLI
# =============================================================================
def format_check(c: Check) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<30} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None, quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW when quiet), the summary over ALL checks, keys, verdict."""
    stream = stream or sys.stdout
    for c in checks:
        if not quiet or c.status in (Status.FAIL, Status.REVIEW):
            print(format_check(c), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    for key, value in keys.items():
        print(f"{key}: {value}", file=stream)
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


def grader_sha256() -> str:
    with open(os.path.abspath(__file__), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def write_json_report(path: str, submission: str, checks: list, result: str, score,
                      phases: dict, keys: dict) -> None:
    doc = {"grader": GRADER_NAME, "version": GRADER_VERSION, "grader_sha256": grader_sha256(),
           "submission": os.path.abspath(submission),
           "checks": [c.as_dict() for c in checks],
           "review": [c.as_dict() for c in checks if c.status is Status.REVIEW],
           "phases": {k: round(v, 4) for k, v in phases.items()},
           "keys": _jsonable(keys), "result": result, "score": score, "sandbox": sandbox_level()}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2, allow_nan=False)
        fh.write("\n")


EXIT_FULL, EXIT_BELOW, EXIT_UNGRADED, EXIT_GRADER = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure")
    p.add_argument("submission", help="directory with fem_solver.py, results.json, reference_arrays.npz")
    p.add_argument("--budget", type=float, default=SPEC["budget_s"],
                   help="wall-clock seconds per execution phase (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="anything needing review scores 0.0")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: diagnostics only, RESULT: UNGRADED, exit 2")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON to PATH")
    p.add_argument("--quiet", action="store_true",
                   help="print only FAIL / REVIEW_REQUIRED lines, the summary and the verdict")
    return p


def main(argv=None) -> int:
    for stream in (sys.stdout, sys.stderr):     # a submission's message may hold lone
        try:                                     # surrogates or text the locale cannot encode
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    args = build_parser().parse_args(argv)
    if not args.budget > 0 or not math.isfinite(args.budget):
        print(f"{GRADER_NAME}: --budget must be a positive number of seconds", file=sys.stderr)
        return EXIT_UNGRADED
    if not os.path.isdir(args.submission):
        print(f"{GRADER_NAME}: {args.submission} is not a directory", file=sys.stderr)
        return EXIT_UNGRADED
    try:
        checks, phases, outcomes, keys = grade(args.submission, budget=args.budget,
                                               strict=args.strict, no_exec=args.no_exec)
    except Exception as exc:  # a grader bug: never reported as a score
        import traceback
        traceback.print_exc(file=sys.stderr)
        print(f"GRADER_ERROR: {type(exc).__name__}: {exc}")
        print("RESULT: UNGRADED")
        return EXIT_GRADER
    result, score = verdict(checks, strict=args.strict, no_exec=args.no_exec)
    print_submission_output(outcomes)
    print_report(checks, result, score, keys, quiet=args.quiet)
    if args.json:
        write_json_report(args.json, args.submission, checks, result, score, phases, keys)
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


if __name__ == "__main__":
    sys.exit(main())
