#!/usr/bin/env python3
"""Grader for the mixed-derivative ADI benchmark (u_t = a u_xx + b u_xy + c u_yy + f).

Run:
    python grade_adi.py SUBMISSION              # full grading
    python grade_adi.py SUBMISSION --budget 900 # allow a slower solver
    python grade_adi.py SUBMISSION --strict     # anything needing review scores 0.0
    python grade_adi.py SUBMISSION --no-exec    # diagnostics only: RESULT: UNGRADED, exit 2

SUBMISSION is a directory holding adi_solver.py, results.json and
reference_arrays.npz (see reference/adi/problem_spec.md).  The grader trusts
none of them: it recomputes every order and the exact solution, re-runs
`solve(h, T=1.0, problem=None)` in an isolated interpreter with every
NumPy/SciPy/LAPACK linear-solve entry point instrumented, runs it on a hidden
problem against its own MCS reference, and NaN-poisons (then slightly scales)
the observed solves on one hidden and one benchmark mesh to prove they produce
the returned field.

Score: 1.0 = Tier 1, 2 and 3 pass (all five meshes regenerated); 0.5 = Tier 1,
2 and the coarse-mesh provenance pass but Tier 3 is missing, fails or is
unverified; 0.0 = anything else.  Exit codes: 0 full score, 1 graded below
full score, 2 UNGRADED or usage error, 3 grader failure.

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
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

GRADER_NAME = "grade_adi"
GRADER_VERSION = "1.0.0"

# =============================================================================
# SPEC: every threshold, tolerance, mesh and file name (seed line in comments)
# =============================================================================
SPEC = {
    "budget_s": 600.0,            # seed: "--budget 900  # allow a slower solver" (default ours)
    "max_json_bytes": 1 << 20,    # guarded input size caps (not in seed)
    "max_npz_bytes": 64 << 20,
    "max_source_bytes": 1 << 20,
    "solver_file": "adi_solver.py",   # seed: "Required files missing (including adi_solver.py)"
    "results_file": "results.json",
    "arrays_file": "reference_arrays.npz",
    "n_meshes": 5,                # seed: "h_values exactly 0.1·2^-p", p = 0..4
    "h0": 0.1,
    "coarse": (0, 1, 2),          # seed: "h = 0.1, 0.05, 0.025 are regenerated before any Tier 1/Tier 2 credit"
    "fine": (3, 4),               # seed: "h = 0.0125, 0.00625 are regenerated before any Tier 3 credit"
    "h_rtol": 1e-12,              # h_values "exactly" 0.1·2^-p (float round-off only)
    "eoc_atol": 1e-9,             # seed: "eoc[1:] recomputed from max_norm_errors"
    "table_err_rtol": 1e-9,       # seed: convergence_table rows "against the arrays" (full precision)
    "table_eoc_atol": 1e-6,       # convergence_table eoc_order vs recomputed (problem_spec.md)
    "order_claim_atol": 1e-2,     # observed_order_of_convergence "supported by" the errors (problem_spec.md)
    "final_time": 1.0,            # seed: sidecar final_time; spec: T = 1
    "finest_shape": (161, 161),   # seed: "the true uniform 161×161 grid (indexing='ij')"
    "tier1_max": 1.0,             # seed: Tier 1 "e_h(0.1) finite and < 1.0"
    "tier2_min_reduction": 100.0,  # seed: "e(0.1) / e(0.00625) ≥ 100×"
    "tier2_fit_band": (1.70, 2.30),   # seed: "least-squares fitted order over all five meshes in [1.70, 2.30]"
    "tier2_last_band": (1.60, 2.60),  # seed: "both of the two finest experimental orders in [1.60, 2.60]"
    "tier2_finest_max": 1e-2,     # seed: "finest-mesh error < 1e-2"
    "regen_rtol": 1e-6,           # seed: "regenerating e_h to within 1e-6 relative of the submitted values"
    "field_rtol": 1e-10,          # seed: "U_finest equal pointwise to the regenerated finest field (rtol=1e-10,
    "field_atol": 1e-12,          #        atol=1e-12)"
    "grid_atol": 1e-12,           # grids / exact field / error field / Dirichlet data "equal" (ours)
    "self_err_rtol": 1e-8,        # seed: "max_norm_errors[4] equal to the error recomputed from U_finest" (ours)
    "dim_factor": 2,              # seed: "no linear system of dimension greater than 2(m+1)"
    "max_half_bandwidth": 1,      # seed: "and no system of half-bandwidth greater than 1"
    "hidden_h": (0.1, 0.05),      # seed: "error falling by at least 2× between h = 0.1 and h = 0.05"
    "hidden_tol": 3e-2,           # seed: "must land within 3e-2 of a reference"
    "hidden_min_drop": 2.0,       # seed: "falling by at least 2×"
    "audit_h": 0.1,               # seed: "On one hidden mesh the grader replaces every intercepted solve result"
    "audit_atol": 1e-12,          # seed: "unchanged to pointwise atol=1e-12 (rtol=0) fails with 0.0"
    "perturb_rel": 1e-6,          # ours: the finite audit scales each solve result by 1 + eps r, r in [1, 2)
    "iface_rtol": 1e-9,           # ours: solve(h) vs solve(h, 1.0, <benchmark problem object>), pointwise
    "ref_m": (40, 80),            # our MCS reference: Richardson from h = 1/40 and 1/80 (see PROBLEMS)
    "ref_theta": 1.0 / 3.0,
    # -- subprocess runner (the same names in every grader; read at call time) ----
    "runner_mem_bytes": 4 << 30,           # child address-space limit: a 161x161 ADI study needs well under 1 GiB; numpy/scipy import reserves ~1 GiB
    "runner_fsize_bytes": 256 << 20,  # largest file the child may write: a runaway writer cannot fill the disk
    "runner_cpu_slack_s": 30,         # RLIMIT_CPU = wall budget + this: a spinning child dies even unwatched
    "runner_term_grace_s": 2.0,       # SIGTERM -> SIGKILL: time to exit cleanly once the run is over
    "runner_output_cap_bytes": 64 << 10,   # stdout/stderr kept per stream: enough to show a traceback
    "runner_reply_cap_bytes": 256 << 20,   # reply channel: the largest honest study is ~10 MB of base64
    "runner_copy_cap_bytes": 512 << 20,      # private submission copy: a solver file and its folder; far above any honest submission
}

# The time-step rule must state k = h: "k", "=", "h", and nothing after h that
# makes it another rule (h^2, h/2, h*..., h2, hx, h.5).  seed: "matched by regex".
K_EQUALS_H = re.compile(r"(?<![\w.])k\s*=\s*h(?![\w(²^*/])(?!\.\d)(?!\s*(?:\*\*|[\^*/]))")

# =============================================================================
# PROBLEMS: the benchmark and the hidden instance, defined ONCE.  This source is
# executed here and inside the isolated driver, so a maintainer holding the
# original benchmark's spec swaps the problem in this one place.
#
# Benchmark (reference/adi/problem_spec.md): a = 1.0, b = 0.8, c = 0.5,
#   u = exp(-3t) x y sin(pi x) sin(pi y), f = u_t - (a u_xx + b u_xy + c u_yy), g = u.
#
# Hidden instance (design notes; measured with reference/adi/scheme_survey.py's
# family against this grader's reference, see tests/test_adi_hidden.py):
#   a = 0.025, b = 0.018, c = 0.015 (SPD: 4ac = 1.5e-3 > b^2 = 3.24e-4), T = 1.
#   w(x,y) = 0.02 (1 + x + y/2 + xy + x^2/2) has w_xxyy = 0; the Dirichlet data
#   g = (1 + 2t) w grow in time; f = 2w - (1 + 2t)(a w_xx + b w_xy) so that
#   u = (1 + 2t) w + v, with v_t = a v_xx + b v_xy + c v_yy, v = 0 on the
#   boundary, v(0) = 0.3 sin(pi x) sin(pi y)(1 + 0.6x - 0.3y + 0.8xy): a
#   smooth, non-separable initial state whose evolution under the mixed
#   operator has no closed form.  Small SPD coefficients keep large-theta MCS/HV
#   out of their pre-asymptotic regime at h = 0.1 (the probe at the seed's
#   scale failed MCS theta = 8), and the time-linear, w_xxyy = 0 carrier keeps
#   the theta^2 k^2 A1 A2 u_t splitting error small.
#   Reference: this grader's own MCS (theta = 1/3) on h = 1/40 and 1/80,
#   Richardson-extrapolated; it differs from the h = 1/80, 1/160 extrapolation
#   by 1.8e-5 (about 4 % of the gold's error at h = 0.05, 0.06 % of 3e-2).
#   Measured misses at h = 0.1 -> 0.05 (ratio): gold MCS 1/3 1.90e-3 -> 5.21e-4
#   (3.64); MCS 8 1.22e-2 -> 4.32e-3 (2.81); HV 8 1.06e-2 -> 3.74e-3 (2.83);
#   every scheme the survey accepts passes (tests/test_adi_hidden.py), and so
#   do first-order Douglas/CS (Tier 2 rejects those); the dropped mixed term
#   misses by 2.2e-2 with no drop (0.97x).  Trivial answers miss by: zeros
#   0.42, the initial state 0.16, the benchmark's manufactured field 0.40.
# =============================================================================
PROBLEM_SOURCE = r'''
import math as _pm
import numpy as _pnp


class Problem:
    """The interface solve() receives: floats a, b, c and vectorised u0, g, f."""

    def __init__(self, a, b, c, u0, g, f):
        self.a, self.b, self.c = float(a), float(b), float(c)
        self.u0, self.g, self.f = u0, g, f


def benchmark_exact(X, Y, t):
    return _pm.exp(-3.0 * t) * X * Y * _pnp.sin(_pnp.pi * X) * _pnp.sin(_pnp.pi * Y)


def benchmark_problem():
    a, b, c = 1.0, 0.8, 0.5
    pi = _pnp.pi

    def f(X, Y, t):
        p, dp = X * _pnp.sin(pi * X), _pnp.sin(pi * X) + pi * X * _pnp.cos(pi * X)
        q, dq = Y * _pnp.sin(pi * Y), _pnp.sin(pi * Y) + pi * Y * _pnp.cos(pi * Y)
        ddp = 2.0 * pi * _pnp.cos(pi * X) - pi * pi * p
        ddq = 2.0 * pi * _pnp.cos(pi * Y) - pi * pi * q
        return _pm.exp(-3.0 * t) * (-3.0 * p * q - a * ddp * q - b * dp * dq - c * p * ddq)

    return Problem(a, b, c, lambda X, Y: benchmark_exact(X, Y, 0.0), benchmark_exact, f)


HIDDEN_T = 1.0


def hidden_problem():
    a, b, c, G, beta, A = 0.025, 0.018, 0.015, 0.02, 2.0, 0.3

    def w(X, Y):
        return G * (1.0 + X + 0.5 * Y + X * Y + 0.5 * X * X)

    def u0(X, Y):
        return w(X, Y) + A * _pnp.sin(_pnp.pi * X) * _pnp.sin(_pnp.pi * Y) * (
            1.0 + 0.6 * X - 0.3 * Y + 0.8 * X * Y)

    def g(X, Y, t):
        return (1.0 + beta * t) * w(X, Y)

    def f(X, Y, t):   # w_xx = G, w_xy = G, w_yy = 0
        return beta * w(X, Y) - (1.0 + beta * t) * G * (a + b)

    return Problem(a, b, c, u0, g, f)
'''
_PROBLEMS: dict = {}
exec(compile(PROBLEM_SOURCE, "<grade_adi PROBLEMS>", "exec"), _PROBLEMS)


def h_value(p: int) -> float:
    """seed: h_values exactly 0.1·2^-p."""
    return SPEC["h0"] * 2.0 ** -p


def mesh_m(h: float) -> int:
    return int(round(1.0 / h))


def mesh_tag(h: float) -> str:
    return f"h={h:g}"


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


def load_npz_file(path: str, check_id: str, max_bytes: int, only=None) -> dict:
    """Load the arrays of an .npz (those named in `only`, when given; others are
    never decompressed) without pickles; raise Reject on anything odd."""
    import numpy as np
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in data.files:
                if only is None or key in only:
                    arrays[key] = data[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise Reject(check_id, f"{os.path.basename(path)} holds a pickled (object) array; "
                                   "pickles are refused")
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {str(exc)[:120]}")
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, ...
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
# Reaching the grader's in-process instrumentation (its state, the wrapped
# originals, the result channel) or native code behind it needs one of these;
# an ADI solver needs none.  Each use is flagged for review (ours).
INTROSPECTION_MODULES = ("ctypes", "gc", "inspect", "_ctypes", "cffi")
INTROSPECTION_NAMES = ("__globals__", "__closure__", "cell_contents", "__code__", "__defaults__",
                       "__kwdefaults__", "f_globals", "f_locals", "f_back", "tb_frame", "_getframe",
                       "__main__", "__pyx_capi__", "get_referrers", "get_objects", "_superlu",
                       "_umath_linalg", "_flapack", "_fblas")


def import_audit(source: str, check_prefix: str, local: set = frozenset(),
                 filename: str = SPEC["solver_file"]) -> list:
    """AST pass: every import outside stdlib + numpy + scipy (+ the submission's own
    `local` modules) fails; importlib / __import__ / exec / eval are flagged for
    review (the allowlist is static)."""
    try:
        tree = parse_python(source, filename, f"{check_prefix}.syntax")
    except Reject as exc:
        return [exc.check]
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic, intro = [], [], []
    for node in ast.walk(tree):
        word = node.attr if isinstance(node, ast.Attribute) else node.value if (
            isinstance(node, ast.Constant) and isinstance(node.value, str)) else None
        if word is not None and any(n in word for n in INTROSPECTION_NAMES):
            intro.append(f"{word[:40]!r} (line {node.lineno})")
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
            full = name + " " + " ".join(a.name for a in node.names)
            if top in INTROSPECTION_MODULES or any(n in full for n in INTROSPECTION_NAMES):
                intro.append(f"import {full.strip()} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY and top not in local:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("__import__", "exec", "eval", "compile"):
            dynamic.append(f"{node.func.id}() (line {node.lineno})")
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
    if intro:
        out.append(Check(f"{check_prefix}.introspection", Status.REVIEW,
                         "introspection or native-code access that could reach around the solve "
                         "instrumentation: " + ", ".join(intro[:8]), intro))
    return out


# =============================================================================
# ARRAY SCHEMA (seed: "What the evaluator checks" 1)
# =============================================================================
MANDATORY_ARRAYS = ("h_values", "max_norm_errors", "eoc")
TIER3_ARRAYS = ("X_finest", "Y_finest", "U_finest", "U_exact_finest", "error_finest")


@dataclasses.dataclass
class Submitted:
    """What the submission's files say, once validated (None = not usable)."""
    arrays: dict = None
    h: object = None            # (5,) descending h_values
    e: object = None            # (5,) max_norm_errors
    eoc: object = None
    tier3: dict = None          # name -> (161,161) float arrays, when all present and valid
    results: object = None


def fitted_order(h, e) -> float:
    """Least-squares slope of log e against log h over all meshes (Tier 2 and the sidecar)."""
    import numpy as np
    return float(np.polyfit(np.log(np.asarray(h, float)), np.log(np.asarray(e, float)), 1)[0])


def pointwise_orders(h, e):
    """eoc[p] = log(e[p-1]/e[p]) / log(h[p-1]/h[p]) for p = 1..4."""
    import numpy as np
    h, e = np.asarray(h, float), np.asarray(e, float)
    with np.errstate(all="ignore"):
        return np.log(e[:-1] / e[1:]) / np.log(h[:-1] / h[1:])


def compare_arrays(check_id: str, what: str, measured, expected, *, rtol: float, atol: float) -> Check:
    """numpy.testing order: shape, then non-finite positions, then values; the
    worst index, its measured value and the tolerance are reported."""
    import numpy as np
    a, b = np.asarray(measured, float), np.asarray(expected, float)
    if a.shape != b.shape:
        return Check(check_id, Status.FAIL, f"{what}: shape {a.shape}, expected {b.shape}",
                     list(a.shape), list(b.shape))
    bad = ~np.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return Check(check_id, Status.FAIL, f"{what}: {int(bad.sum())} non-finite value(s), first at "
                     f"{idx}", int(bad.sum()), 0)
    dev = np.abs(a - b)
    tol = atol + rtol * np.abs(b)
    excess = dev - tol
    if a.size and excess.max() > 0:
        idx = np.unravel_index(int(np.argmax(excess)), a.shape)
        return Check(check_id, Status.FAIL,
                     f"{what}: worst at {tuple(int(i) for i in idx)}: {a[idx]:.6e} vs {b[idx]:.6e} "
                     f"(|diff| {dev[idx]:.2e} > atol {atol:g} + rtol {rtol:g}·|expected|)",
                     float(dev[idx]), float(tol[idx]))
    return Check(check_id, Status.PASS, f"{what}: equal within atol {atol:g}, rtol {rtol:g} "
                 f"(max |diff| {dev.max() if a.size else 0.0:.2e})", float(dev.max()) if a.size else 0.0,
                 atol)


@guarded
def check_array_schema(sub: Submitted) -> list:
    """h_values / max_norm_errors / eoc: present, (5,), finite, positive, exact
    descending h, eoc[0] NaN, eoc[1:] recomputed."""
    import numpy as np
    n = SPEC["n_meshes"]
    h = get_array(sub.arrays, "h_values", (n,), "schema.arrays")
    e = get_array(sub.arrays, "max_norm_errors", (n,), "schema.arrays")
    eoc = get_array(sub.arrays, "eoc", (n,), "schema.arrays")
    out = [Check("schema.arrays", Status.PASS, "h_values, max_norm_errors, eoc present with shape (5,)")]
    for name, arr in (("h_values", h), ("max_norm_errors", e)):
        if not np.all(np.isfinite(arr)):
            raise Reject("schema.finite", f"{name} has non-finite entries at "
                         f"{np.flatnonzero(~np.isfinite(arr)).tolist()}")
    if not np.all(np.isfinite(eoc[1:])):
        raise Reject("schema.finite", f"eoc[1:] has non-finite entries at "
                     f"{(1 + np.flatnonzero(~np.isfinite(eoc[1:]))).tolist()}")
    out.append(Check("schema.finite", Status.PASS, "h_values, max_norm_errors, eoc[1:] finite"))
    if not np.all(e > 0):
        raise Reject("schema.errors_positive", f"max_norm_errors not all positive: {e.tolist()}")
    out.append(Check("schema.errors_positive", Status.PASS, "max_norm_errors all positive"))
    want = np.array([h_value(p) for p in range(n)])
    if np.allclose(h, want[::-1], rtol=SPEC["h_rtol"], atol=0):
        raise Reject("schema.h_values", "h_values stored in ascending order; the spec requires "
                     "descending 0.1·2^-p, p = 0..4", h.tolist(), want.tolist())
    chk = compare_arrays("schema.h_values", "h_values vs 0.1·2^-p (descending)", h, want,
                         rtol=SPEC["h_rtol"], atol=0.0)
    out.append(chk)
    if chk.status is Status.FAIL:
        return out
    if not math.isnan(eoc[0]):
        raise Reject("schema.eoc", f"eoc[0] must be NaN, got {eoc[0]!r}", float(eoc[0]), "NaN")
    out.append(compare_arrays("schema.eoc", "eoc[1:] vs orders recomputed from max_norm_errors",
                              eoc[1:], pointwise_orders(want, e), rtol=0.0, atol=SPEC["eoc_atol"]))
    if all(c.status is Status.PASS for c in out):
        sub.h, sub.e, sub.eoc = want, e, eoc
    return out


@guarded
def check_tier3_arrays(sub: Submitted) -> list:
    """The five Tier 3 arrays: optional; present ones shaped (161,161), finite.
    Absence or a defect degrades to a Tier 3 failure (0.5), never a schema one."""
    import numpy as np
    present = [k for k in TIER3_ARRAYS if k in sub.arrays]
    if not present:
        return Check("tier3.arrays", Status.FAIL, "Tier 3 arrays omitted (honest partial credit: 0.5)")
    missing = [k for k in TIER3_ARRAYS if k not in sub.arrays]
    if missing:
        raise Reject("tier3.arrays", f"Tier 3 arrays incomplete, missing {', '.join(missing)}")
    got = {}
    for k in TIER3_ARRAYS:
        arr = get_array(sub.arrays, k, SPEC["finest_shape"], "tier3.arrays")
        if not np.all(np.isfinite(arr)):
            raise Reject("tier3.arrays", f"{k} has {int((~np.isfinite(arr)).sum())} non-finite values")
        got[k] = arr
    sub.tier3 = got
    return Check("tier3.arrays", Status.PASS, "Tier 3 arrays present, shape (161, 161), finite")


# =============================================================================
# SIDECAR CONSISTENCY (seed: "What the evaluator checks" 2)
# =============================================================================
@guarded
def check_convergence_table(sub: Submitted) -> list:
    """results.json convergence_table rows p = 0..4 against the arrays."""
    cid = "sidecar.convergence_table"
    rows = get_path(sub.results, ("convergence_table",), cid)
    if not isinstance(rows, list) or len(rows) != SPEC["n_meshes"]:
        raise Reject(cid, f"convergence_table must be a list of {SPEC['n_meshes']} rows")
    orders = pointwise_orders(sub.h, sub.e)
    for i in range(SPEC["n_meshes"]):
        p = get_number(rows, (i, "p"), cid, integer=True)
        if p != i:
            raise Reject(cid, f"row {i}: p = {p}, expected {i} (wrong p index or row order)", p, i)
        h = get_number(rows, (i, "h"), cid)
        if abs(h - sub.h[i]) > SPEC["h_rtol"] * sub.h[i]:
            raise Reject(cid, f"row {i}: h = {h!r}, h_values[{i}] = {sub.h[i]!r}", h, float(sub.h[i]))
        err = get_number(rows, (i, "max_norm_error"), cid)
        if abs(err - sub.e[i]) > SPEC["table_err_rtol"] * sub.e[i]:
            raise Reject(cid, f"row {i}: max_norm_error = {err!r} but max_norm_errors[{i}] = "
                         f"{sub.e[i]!r}", err, float(sub.e[i]))
        if i == 0:
            val = get_path(rows, (0,), cid).get("eoc_order", None)
            if val is not None and not (isinstance(val, float) and math.isnan(val)):
                raise Reject(cid, f"row 0: eoc_order must be null, got {val!r}")
        else:
            q = get_number(rows, (i, "eoc_order"), cid)
            if abs(q - orders[i - 1]) > SPEC["table_eoc_atol"]:
                raise Reject(cid, f"row {i}: eoc_order = {q!r}, recomputed {orders[i - 1]:.9f}",
                             q, float(orders[i - 1]))
    return Check(cid, Status.PASS, "5 rows, p = 0..4, h / max_norm_error / eoc_order agree with the arrays")


@guarded
def check_sidecar_fields(sub: Submitted) -> list:
    """diffusion_matrix, final_time, time_step_rule (k = h), scheme, finest_mesh,
    observed_order_of_convergence."""
    bench = _PROBLEMS["benchmark_problem"]()
    out = []
    for key, want in (("a", bench.a), ("b", bench.b), ("c", bench.c)):
        got = get_number(sub.results, ("diffusion_matrix", key), "sidecar.diffusion_matrix")
        if abs(got - want) > 1e-12:
            raise Reject("sidecar.diffusion_matrix", f"diffusion_matrix.{key} = {got!r}, expected {want}",
                         got, want)
    out.append(Check("sidecar.diffusion_matrix", Status.PASS,
                     f"a = {bench.a}, b = {bench.b}, c = {bench.c}"))
    T = get_number(sub.results, ("final_time",), "sidecar.final_time")
    if abs(T - SPEC["final_time"]) > 1e-12:
        raise Reject("sidecar.final_time", f"final_time = {T!r}, expected {SPEC['final_time']}", T,
                     SPEC["final_time"])
    out.append(Check("sidecar.final_time", Status.PASS, f"final_time = {T:g}"))
    return out


@guarded
def check_time_step_rule(sub: Submitted) -> list:
    rule = get_path(sub.results, ("time_step_rule",), "sidecar.time_step_rule")
    if not isinstance(rule, str):
        raise Reject("sidecar.time_step_rule", f"time_step_rule must be text, got {type(rule).__name__}")
    if not K_EQUALS_H.search(rule):
        raise Reject("sidecar.time_step_rule", f"time_step_rule does not state k = h: {rule[:80]!r}")
    return Check("sidecar.time_step_rule", Status.PASS, f"states k = h: {rule[:60]!r}")


@guarded
def check_scheme(sub: Submitted) -> list:
    scheme = get_path(sub.results, ("scheme",), "sidecar.scheme")
    if not isinstance(scheme, str) or not scheme.strip():
        raise Reject("sidecar.scheme", "scheme must be a non-empty string")
    return Check("sidecar.scheme", Status.PASS, f"scheme: {scheme.strip()[:60]!r}")


@guarded
def check_finest_mesh(sub: Submitted) -> list:
    cid = "sidecar.finest_mesh"
    h = get_number(sub.results, ("finest_mesh", "h"), cid)
    want = h_value(SPEC["n_meshes"] - 1)
    if abs(h - want) > SPEC["h_rtol"] * want:
        raise Reject(cid, f"finest_mesh.h = {h!r}, expected {want}", h, want)
    shape = get_path(sub.results, ("finest_mesh", "shape"), cid)
    dims = [get_number(sub.results, ("finest_mesh", "shape", i), cid, integer=True)
            for i in range(len(shape))] if isinstance(shape, list) else None
    if dims != list(SPEC["finest_shape"]):
        raise Reject(cid, f"finest_mesh.shape = {shape!r}, expected {list(SPEC['finest_shape'])}")
    return Check(cid, Status.PASS, f"finest_mesh h = {want}, shape {list(SPEC['finest_shape'])}")


@guarded
def check_observed_order(sub: Submitted) -> list:
    cid = "sidecar.observed_order"
    claim = get_number(sub.results, ("observed_order_of_convergence",), cid)
    fit = fitted_order(sub.h, sub.e)
    if abs(claim - fit) > SPEC["order_claim_atol"]:
        raise Reject(cid, f"observed_order_of_convergence = {claim!r} but the errors give {fit:.4f}",
                     claim, fit)
    return Check(cid, Status.PASS, f"observed order {claim:.4f} supported by the errors ({fit:.4f})",
                 claim, fit)


# =============================================================================
# NUMERICAL TIERS (seed: "Visible benchmark thresholds")
# =============================================================================
def tier1_checks(e) -> list:
    e0 = float(e[0])
    ok = math.isfinite(e0) and e0 < SPEC["tier1_max"]
    return [Check("tier1.coarsest", Status.PASS if ok else Status.FAIL,
                  f"e(0.1) = {e0:.4e} {'<' if ok else 'not <'} {SPEC['tier1_max']:g}", e0, SPEC["tier1_max"])]


def tier2_checks(h, e) -> list:
    """The published Tier 2 rules on five errors (a pure function; the survey's
    numbers are fed to it in tests)."""
    import numpy as np
    e = np.asarray(e, float)
    h = np.asarray(h, float)
    if not np.all(np.isfinite(e)) or not np.all(e > 0):
        return [Check("tier2.finite", Status.FAIL, f"errors not finite and positive: {e.tolist()}")]
    out = []
    dec = bool(np.all(np.diff(e) < 0))
    out.append(Check("tier2.monotone", Status.PASS if dec else Status.FAIL,
                     "errors strictly decreasing" if dec else
                     f"errors not strictly decreasing: {', '.join(f'{v:.3e}' for v in e)}"))
    red = float(e[0] / e[-1])
    lim = SPEC["tier2_min_reduction"]
    out.append(Check("tier2.reduction", Status.PASS if red >= lim else Status.FAIL,
                     f"e(0.1)/e(0.00625) = {red:.1f}x (need >= {lim:g}x)", red, lim))
    fit = fitted_order(h, e)
    lo, hi = SPEC["tier2_fit_band"]
    out.append(Check("tier2.fitted_order", Status.PASS if lo <= fit <= hi else Status.FAIL,
                     f"least-squares order {fit:.3f} (band [{lo}, {hi}])", fit, [lo, hi]))
    q = pointwise_orders(h, e)[-2:]
    lo, hi = SPEC["tier2_last_band"]
    ok = bool(np.all((q >= lo) & (q <= hi)))
    out.append(Check("tier2.last_two_orders", Status.PASS if ok else Status.FAIL,
                     f"two finest orders {q[0]:.3f}, {q[1]:.3f} (band [{lo}, {hi}])", q.tolist(), [lo, hi]))
    lim = SPEC["tier2_finest_max"]
    out.append(Check("tier2.finest_error", Status.PASS if e[-1] < lim else Status.FAIL,
                     f"e(0.00625) = {e[-1]:.4e} (need < {lim:g})", float(e[-1]), lim))
    return out


def exact_finest():
    """The analytic exact field at T on the finest grid (X, Y, U_exact)."""
    import numpy as np
    x = np.linspace(0.0, 1.0, SPEC["finest_shape"][0])
    X, Y = np.meshgrid(x, x, indexing="ij")
    return X, Y, _PROBLEMS["benchmark_exact"](X, Y, SPEC["final_time"])


def boundary_mask(shape):
    import numpy as np
    ring = np.ones(shape, dtype=bool)
    ring[1:-1, 1:-1] = False
    return ring


def tier3_static_checks(sub: Submitted) -> list:
    """The submitted finest-mesh surfaces against the analytic data and the table."""
    import numpy as np
    X, Y, Uex = exact_finest()
    t3 = sub.tier3
    atol = SPEC["grid_atol"]
    out = [compare_arrays("tier3.grid", "X_finest", t3["X_finest"], X, rtol=0, atol=atol),
           compare_arrays("tier3.grid", "Y_finest", t3["Y_finest"], Y, rtol=0, atol=atol),
           compare_arrays("tier3.exact_field", "U_exact_finest vs the analytic solution",
                          t3["U_exact_finest"], Uex, rtol=SPEC["field_rtol"], atol=atol),
           compare_arrays("tier3.error_field", "error_finest vs U_finest - U_exact_finest",
                          t3["error_finest"], t3["U_finest"] - t3["U_exact_finest"], rtol=0, atol=atol)]
    ring = boundary_mask(Uex.shape)
    out.append(compare_arrays("tier3.dirichlet", "U_finest on the boundary vs the exact Dirichlet data",
                              t3["U_finest"][ring], Uex[ring], rtol=0, atol=atol))
    e_rec = float(np.max(np.abs(t3["U_finest"] - Uex)))
    e4 = float(sub.e[-1]) if sub.e is not None else float("nan")
    ok = abs(e_rec - e4) <= SPEC["self_err_rtol"] * e4
    out.append(Check("tier3.table_row", Status.PASS if ok else Status.FAIL,
                     f"max_norm_errors[4] = {e4:.6e}, recomputed from U_finest {e_rec:.6e}"
                     + ("" if ok else " (Tier 3 surfaces and the table come from different runs)"),
                     e_rec, e4))
    # several records share an id (X and Y); keep the worst per id
    merged = {}
    for c in out:
        if c.id not in merged or (merged[c.id].status is Status.PASS and c.status is not Status.PASS):
            merged[c.id] = c
    return list(merged.values())


# =============================================================================
# HIDDEN INSTANCE (seed: "What the evaluator checks" 6): the grader's own MCS
# =============================================================================
def mcs_reference(problem, m: int, T: float, theta: float = SPEC["ref_theta"]):
    """The grader's independent MCS (in 't Hout-Foulon) solver, k = h = 1/m.
    State: the full (m+1)^2 array with Dirichlet data on its ring.  The two
    implicit stages solve every grid line of one direction at once as multiple
    right-hand sides of one tridiagonal system (scipy.linalg.solve_banded)."""
    import numpy as np
    from scipy.linalg import solve_banded
    h = 1.0 / m
    steps = int(round(T / h))
    k = T / steps
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    ring = boundary_mask(X.shape)
    inner = (slice(1, -1), slice(1, -1))
    coef = {1: problem.a / h ** 2, 2: problem.c / h ** 2}
    mix = problem.b / (4.0 * h * h)

    def frame(t, interior):
        W = np.empty_like(X)
        W[ring] = problem.g(X[ring], Y[ring], t)
        W[inner] = interior
        return W

    def op(j, W):                       # F_j on the interior, boundary data included
        if j == 0:
            return None
        if j == 1:
            return coef[1] * (W[:-2, 1:-1] + W[2:, 1:-1] - 2.0 * W[1:-1, 1:-1])
        return coef[2] * (W[1:-1, :-2] + W[1:-1, 2:] - 2.0 * W[1:-1, 1:-1])

    source_cache = {}

    def op0(t, W):                      # mixed term + source, explicit
        if t not in source_cache:
            source_cache.clear()
            source_cache[t] = problem.f(X[inner], Y[inner], t)
        return mix * (W[2:, 2:] + W[:-2, :-2] - W[2:, :-2] - W[:-2, 2:]) + source_cache[t]

    n = m - 1
    lhs = {}
    for j in (1, 2):
        band = np.empty((3, n))
        band[0], band[1], band[2] = -theta * k * coef[j], 1.0 + 2.0 * theta * k * coef[j], -theta * k * coef[j]
        band[0, 0] = band[2, -1] = 0.0
        lhs[j] = band

    def implicit(j, rhs, t, Wt):
        """(I - theta k A_j) V = rhs + theta k (boundary part of F_j at t)."""
        r = rhs.copy()
        if j == 1:
            r[0, :] += theta * k * coef[1] * Wt[0, 1:-1]
            r[-1, :] += theta * k * coef[1] * Wt[-1, 1:-1]
            return solve_banded((1, 1), lhs[1], r)
        r[:, 0] += theta * k * coef[2] * Wt[1:-1, 0]
        r[:, -1] += theta * k * coef[2] * Wt[1:-1, -1]
        return solve_banded((1, 1), lhs[2], r.T).T

    W = frame(0.0, problem.u0(X[inner], Y[inner]))
    for s in range(steps):
        t_old, t_new = s * k, (s + 1) * k
        ring_new = frame(t_new, 0.0)
        f0, f1, f2 = op0(t_old, W), op(1, W), op(2, W)
        y0 = W[inner] + k * (f0 + f1 + f2)
        y1 = implicit(1, y0 - theta * k * f1, t_new, ring_new)
        y2 = implicit(2, y1 - theta * k * f2, t_new, ring_new)
        W2 = ring_new.copy()
        W2[inner] = y2
        g0 = op0(t_new, W2)
        z0 = y0 + theta * k * (g0 - f0) + (0.5 - theta) * k * (
            g0 + op(1, W2) + op(2, W2) - f0 - f1 - f2)
        z1 = implicit(1, z0 - theta * k * f1, t_new, ring_new)
        z2 = implicit(2, z1 - theta * k * f2, t_new, ring_new)
        W = ring_new
        W[inner] = z2
    return W


def hidden_reference():
    """Richardson extrapolation of the reference on h = 1/40 and 1/80, returned on
    the 1/40 grid (which contains the h = 0.1 and 0.05 nodes)."""
    import numpy as np
    mc, mf = SPEC["ref_m"]
    prob = _PROBLEMS["hidden_problem"]()
    T = _PROBLEMS["HIDDEN_T"]
    coarse = mcs_reference(prob, mc, T)
    fine = mcs_reference(prob, mf, T)
    ref = (4.0 * fine[:: mf // mc, :: mf // mc] - coarse) / 3.0
    if not np.all(np.isfinite(ref)):
        raise RuntimeError("the grader's hidden-instance reference is not finite")
    return ref


def hidden_checks(results: dict, ref) -> list:
    """Each hidden mesh within 3e-2 of the reference, and a >= 2x drop."""
    import numpy as np
    out, errs = [], []
    mc = SPEC["ref_m"][0]
    for h in SPEC["hidden_h"]:
        tag = f"hidden:{h:g}"
        r = results.get(tag)
        cid = f"hidden.error[{mesh_tag(h)}]"
        if r is None or r["status"] != "ok":
            out.append(Check(cid, Status.FAIL, f"solve(h={h:g}, T, problem) on the hidden instance: "
                             f"{_job_failure(r)}"))
            errs.append(None)
            continue
        stride = mc // mesh_m(h)
        with np.errstate(all="ignore"):
            err = float(np.max(np.abs(r["U"] - ref[::stride, ::stride])))
        err = err if math.isfinite(err) else float("inf")
        ok = err <= SPEC["hidden_tol"]
        out.append(Check(cid, Status.PASS if ok else Status.FAIL,
                         f"max |U - reference| = {err:.3e} (limit {SPEC['hidden_tol']:g})", err,
                         SPEC["hidden_tol"]))
        errs.append(err)
    if all(e is not None and math.isfinite(e) for e in errs):
        ratio = errs[0] / errs[1] if errs[1] > 0 else float("inf")
        ok = ratio >= SPEC["hidden_min_drop"]
        out.append(Check("hidden.drop", Status.PASS if ok else Status.FAIL,
                         f"hidden error falls {ratio:.2f}x from h=0.1 to h=0.05 (need >= "
                         f"{SPEC['hidden_min_drop']:g}x)", ratio, SPEC["hidden_min_drop"]))
    else:
        out.append(Check("hidden.drop", Status.FAIL, "no finite hidden errors on both meshes"))
    return out


# =============================================================================
# REPRODUCIBILITY (seed: "What the evaluator checks" 5)
# =============================================================================
def plan_jobs() -> list:
    """Coarse meshes, the hidden instance, the causal audits, the interface
    check and a repeat of the clean benchmark run first, in an order drawn
    afresh for every grading run (a solver that counts its calls cannot tell
    which one is audited); the fine meshes last, so a hang there leaves
    everything else graded (-> 0.5)."""
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
    secrets.SystemRandom().shuffle(jobs)
    jobs += [{"tag": f"bench:{p}", "h": h_value(p), "problem": "benchmark"} for p in SPEC["fine"]]
    return jobs


def perturb_seed() -> int:
    """Per-run seed of the finite audit's factors (a submission cannot predict them)."""
    return secrets.randbits(63)


def decode_jobs(outcome) -> tuple:
    """(ready message or None, {tag: job result}, [violations]) from the runner's messages."""
    import numpy as np
    ready, jobs, violations = None, {}, []
    for msg in outcome.messages:
        if not isinstance(msg, dict):
            continue
        kind = msg.get("kind")
        if kind in ("ready", "import_error") and ready is None:
            ready = msg
        elif kind in ("violation", "tamper"):
            violations.append(msg)
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


# =============================================================================
# CAUSAL SWEEP AUDIT (seed: "What the evaluator checks" 7)
# =============================================================================
def causal_audit_check(jobs: dict, outcome) -> list:
    """Poisoned rerun vs the clean run on the same mesh: on one hidden mesh (the
    seed's audit) and, as our addition, on the coarsest benchmark mesh, so that a
    solver honest on the hidden problem but faking the benchmark is caught too.
    Our second addition, the finite audit, scales every solve result by a tiny
    random factor instead: a NaN test cannot see it, so a solver that discards
    its sweeps and reacts only to NaN (raising, falling back, or 0*sweep, which
    NaN turns non-finite) returns an unchanged field and fails."""
    h = SPEC["audit_h"]
    return (_one_audit("audit.causal", jobs.get(f"hidden:{h:g}"), jobs.get(f"audit:{h:g}"), outcome)
            + _one_audit("audit.causal_benchmark", jobs.get("bench:0"), jobs.get(f"auditbench:{h:g}"),
                         outcome)
            + _one_perturbed("audit.perturbed", jobs.get(f"hidden:{h:g}"), jobs.get(f"perturb:{h:g}"),
                             outcome)
            + _one_perturbed("audit.perturbed_benchmark", jobs.get("bench:0"),
                             jobs.get(f"perturbbench:{h:g}"), outcome))


def _one_perturbed(cid: str, clean, perturbed, outcome) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if perturbed is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under perturbed "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = int(perturbed["log"].get("count", 0) or 0)
    if count == 0:
        return [Check(cid, Status.SKIP, "no interceptable solve to perturb (see audit.causal)")]
    eps = SPEC["perturb_rel"]
    if perturbed["status"] != "ok":
        return [Check(cid, Status.REVIEW, f"{count} solve result(s) scaled by 1 + O({eps:g}): solve() "
                      f"raised ({perturbed['error'][:80]}), which a genuine ADI data path does not do "
                      "(a solver that inspects its solve results?); manual review")]
    U = perturbed["U"]
    if not np.all(np.isfinite(U)):
        return [Check(cid, Status.REVIEW, f"{count} solve result(s) scaled by 1 + O({eps:g}): the field "
                      "became non-finite, which a genuine ADI data path does not do; manual review")]
    diff = float(np.max(np.abs(U - clean["U"])))
    if diff <= SPEC["audit_atol"]:
        return [Check(cid, Status.FAIL, f"{count} solve result(s) scaled by 1 + O({eps:g}), yet the "
                      f"returned field is unchanged (max |diff| {diff:.1e} <= {SPEC['audit_atol']:g}, rtol "
                      "0): the observed solves do not produce the result (discarded sweeps?)", diff,
                      SPEC["audit_atol"])]
    return [Check(cid, Status.PASS, f"{count} solve result(s) scaled by 1 + O({eps:g}): the field "
                  f"changed (max |diff| {diff:.2e})", diff, SPEC["audit_atol"])]


def _against_clean_run(jobs: dict, cid: str, tag: str, call: str, rtol: float) -> list:
    """The job `tag` must reproduce the clean benchmark h = 0.1 run pointwise."""
    h = h_value(0)
    clean, other = jobs.get("bench:0"), jobs.get(f"{tag}:{h:g}")
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean benchmark run to compare with")]
    if other is None or other["status"] != "ok":
        return [Check(cid, Status.FAIL, f"{call.format(h=h)}: {_job_failure(other)}")]
    return [compare_arrays(cid, f"solve({h:g}) vs {call.format(h=h)}", other["U"], clean["U"],
                           rtol=rtol, atol=SPEC["field_atol"])]


def determinism_check(jobs: dict) -> list:
    """A repeat of the clean benchmark h = 0.1 run must reproduce it pointwise
    (the field tolerances): otherwise "changed under poisoning" proves nothing,
    as a solver could add run-to-run jitter to every answer (ours)."""
    return _against_clean_run(jobs, "provenance.deterministic", "repeat", "the repeated solve({h:g})",
                              SPEC["field_rtol"])


def interface_check(jobs: dict) -> list:
    """problem=None must mean the benchmark problem: solve(0.1) equals
    solve(0.1, 1.0, <the benchmark as a problem object>) pointwise (ours)."""
    return _against_clean_run(jobs, "provenance.problem_interface", "iface",
                              "solve({h:g}, 1.0, <benchmark problem object>)", SPEC["iface_rtol"])


def _one_audit(cid: str, clean, poisoned, outcome) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if poisoned is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under poisoned "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = int(poisoned["log"].get("count", 0) or 0)
    if count == 0:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: no interceptable solve to poison "
                      "(hand-written solver?); manual review")]
    if poisoned["status"] != "ok":
        return [Check(cid, Status.PASS, f"{count} solve(s) poisoned: solve() raised "
                      f"({poisoned['error'][:80]}): the observed solves feed the result")]
    U = poisoned["U"]
    if not np.all(np.isfinite(U)):
        return [Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field became non-finite")]
    diff = float(np.max(np.abs(U - clean["U"])))
    if diff <= SPEC["audit_atol"]:
        return [Check(cid, Status.FAIL, f"{count} solve(s) poisoned with NaN, yet the returned field is "
                      f"finite and unchanged (max |diff| {diff:.1e} <= {SPEC['audit_atol']:g}, rtol 0): "
                      "the observed solves do not produce the result", diff, SPEC["audit_atol"])]
    return [Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field changed (max |diff| "
                  f"{diff:.2e})", diff, SPEC["audit_atol"])]


def structure_checks(jobs: dict, violations: list, ready: dict) -> list:
    """Dimension <= 2(m+1) and half-bandwidth <= 1 for every observed solve;
    per-mesh REVIEW when a mesh shows no observable solve at all."""
    out = []
    tamper = [v for v in violations if v.get("kind") == "tamper"]
    if tamper:
        what = sorted({str(w) for v in tamper for w in (v.get("what") or [])})
        out.append(Check("structure.instrumentation", Status.FAIL,
                         f"the submission altered the grader's instrumentation ({_job_label(str(tamper[0].get('job')))}"
                         f": {', '.join(what[:5])})", what))
    dims = [v for v in violations if isinstance(v.get("dim"), int) and isinstance(v.get("m"), int)
            and v["dim"] > SPEC["dim_factor"] * (v["m"] + 1)]
    wide = [v for v in violations if isinstance(v.get("hb"), int) and v["hb"] > SPEC["max_half_bandwidth"]]

    def first(offences):    # the coarsest mesh's: the report must not depend on the random run order
        return min(offences, key=lambda v: (v["m"] if isinstance(v.get("m"), int) else 0, str(v.get("job"))))

    if dims:    # the first offence is reported, with how many runs offended
        v = first(dims)
        runs = len({w["job"] for w in dims})
        lim = SPEC["dim_factor"] * (v["m"] + 1)
        out.append(Check("structure.dimension", Status.FAIL,
                         f"{v['fn']} solved a system of dimension {v['dim']} on the m = {v['m']} grid "
                         f"({_job_label(str(v['job']))}); limit 2(m+1) = {lim}: not a 1-D "
                         f"sweep ({runs} run(s) offend)", v["dim"], lim))
    if wide:
        v = first(wide)
        runs = len({w["job"] for w in wide})
        out.append(Check("structure.bandwidth", Status.FAIL,
                         f"{v['fn']} solved a system of half-bandwidth {v['hb']} (dimension {v['dim']}, "
                         f"{_job_label(str(v['job']))}); limit {SPEC['max_half_bandwidth']}: not "
                         f"tridiagonal ({runs} run(s) offend)", v["hb"], SPEC["max_half_bandwidth"]))
    done = {t: r for t, r in jobs.items() if not t.startswith(("audit", "perturb", "iface", "repeat"))}
    total = sum(int(r["log"].get("count", 0) or 0) for r in done.values())
    if not dims:
        mx = max([int(r["log"].get("max_dim", 0) or 0) for r in done.values()] or [0])
        out.append(Check("structure.dimension", Status.PASS,
                         f"{total} observed solves, largest dimension {mx} (<= 2(m+1) on every mesh)"))
    if not wide:
        mx = max([int(r["log"].get("max_hb", 0) or 0) for r in done.values()] or [0])
        out.append(Check("structure.bandwidth", Status.PASS, f"largest observed half-bandwidth {mx}"))
    unknown = sum(int(r["log"].get("unknown_hb", 0) or 0) for r in done.values())
    if unknown:
        out.append(Check("structure.unknown_bandwidth", Status.REVIEW,
                         f"{unknown} solve(s) whose half-bandwidth could not be measured"))
    seen = [t for t, r in done.items() if int(r["log"].get("count", 0) or 0) > 0]
    blind = [t for t, r in done.items() if int(r["log"].get("count", 0) or 0) == 0]
    for t in blind:
        name = _job_label(t)
        if seen:
            msg = (f"{name}: zero observable solves while {', '.join(_job_label(s) for s in seen)} made "
                   "some: the hybrid-evasion pattern (instrumented path on some meshes, an "
                   "uninstrumented one on others); manual review")
        else:
            msg = f"{name}: zero observable solves (hand-written Thomas solver?); manual review"
        out.append(Check(f"structure.unobserved[{name}]", Status.REVIEW, msg))
    return out


def _job_label(tag: str) -> str:
    kind, _, v = tag.partition(":")
    if kind == "import":
        return "at import"
    if kind == "bench" and v.isdigit():
        return f"benchmark {mesh_tag(h_value(int(v)))}"
    if kind == "auditbench":
        return f"audit benchmark h={v}"
    return f"{kind} h={v}"


# =============================================================================
# ADI STRUCTURE AT RUN TIME (seed: "What the evaluator checks" 8): the driver
# the isolated interpreter runs.  It wraps every linear-solve entry point of
# numpy.linalg, scipy.linalg, scipy.linalg.lapack/blas and scipy.sparse.linalg
# BEFORE the submission is imported, replacing each original by identity in
# every loaded module (so `from scipy.linalg.lapack import dgtsv` gets the
# wrapper), records dimension and half-bandwidth of the outermost call only
# (solve_banded calls LAPACK internally), streams violations as they happen,
# and in poison mode replaces every intercepted result by NaNs or scales it by
# 1 + O(perturb_rel) (the causal audits); after each job it checks that no
# wrapper was removed.
# Wrapped: solves, inverses, least squares and the factorisations used for
# solving (LU, Cholesky, LDL, banded/tridiagonal LAPACK), Sylvester/Lyapunov
# solves (a 2-D solve of size q.size) and the BLAS triangular solves.  SVD, QR
# and eigen-decompositions are not linear solves and are left alone (a spectral
# norm of U must not count as a dense solve).
# =============================================================================
DRIVER_BODY = r'''
import base64 as _b64, inspect as _inspect, math as _math, time as _time, traceback as _tb
_SUBDIR = _sys.path.pop(0)             # numpy/scipy must not be shadowed by submission files
import numpy as _np
import numpy.linalg as _npl
import scipy.linalg as _sla
import scipy.linalg.lapack as _lapack
import scipy.linalg.blas as _blas
import scipy.sparse as _sp
import scipy.sparse.linalg as _spl
try:
    import numpy.linalg._umath_linalg as _uml
except Exception:
    _uml = None

_S = {"depth": 0, "poison": False, "job": "import", "m": None, "log": None, "seen": set()}
_BW_CAP = 4096                          # materialise at most this dimension to measure a bandwidth


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _hb_dense(a):
    a = _np.asarray(a)
    if a.ndim < 2 or a.size == 0:
        return 0
    n = a.shape[-1]
    if n > _BW_CAP or a.shape[-2] > _BW_CAP:
        return None
    nz = _np.nonzero(a.reshape((-1,) + a.shape[-2:]))
    return int(_np.max(_np.abs(nz[1] - nz[2]))) if len(nz[1]) else 0


def _hb_any(A):
    if _sp.issparse(A):
        coo = A.tocoo()
        keep = coo.data != 0
        return int(_np.max(_np.abs(coo.row[keep] - coo.col[keep]))) if keep.any() else 0
    if isinstance(A, _spl.LinearOperator):
        n = A.shape[1]
        if n > _BW_CAP:
            return None
        return _hb_dense(A.matmat(_np.eye(n)))
    return _hb_dense(A)


def _x_dense(args, kwargs):                 # f(a, ...): a dense (..., n, n) matrix
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(a.shape[-1]) if a.ndim else 1, _hb_dense(a), False


def _x_trsm(args, kwargs):                  # blas trsm(alpha, a, b)
    a = _np.asarray(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), _hb_dense(a), False


def _x_factor(args, kwargs):                # lu_solve((lu, piv), b), getrs(lu, piv, b), potrs(c, b)
    f = _arg(args, kwargs, 0, "lu_and_piv")
    if isinstance(f, tuple):
        f = f[0]
    f = _np.asarray(f)
    return int(f.shape[-1]), None, True    # bandwidth was checked at the factorisation


def _x_banded(args, kwargs):                # solve_banded((l, u), ab, b)
    lu = _arg(args, kwargs, 0, "l_and_u")
    ab = _np.asarray(_arg(args, kwargs, 1, "ab"))
    u = int(lu[1])
    rows = [r for r in range(ab.shape[0]) if _np.any(ab[r] != 0)]
    return int(ab.shape[-1]), max([abs(r - u) for r in rows] or [0]), False


def _x_hbanded(args, kwargs, lower_pos=4):  # solveh_banded(ab, b, ow_ab, ow_b, lower)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    lower = bool(_arg(args, kwargs, lower_pos, "lower", False))
    u = ab.shape[0] - 1
    rows = [r for r in range(ab.shape[0]) if _np.any(ab[r] != 0)]
    return int(ab.shape[-1]), max([(r if lower else u - r) for r in rows] or [0]), False


def _x_cholbanded(args, kwargs):            # cholesky_banded(ab, overwrite_ab, lower)
    return _x_hbanded(args, kwargs, lower_pos=2)


def _x_chobanded(args, kwargs):             # cho_solve_banded((cb, lower), b)
    cb = _np.asarray(_arg(args, kwargs, 0, "cb_and_lower")[0])
    return int(cb.shape[-1]), int(cb.shape[0] - 1), False


def _x_tri(args, kwargs):                   # gtsv(dl, d, du, b), gttrf(dl, d, du)
    d = _np.asarray(_arg(args, kwargs, 1, "d"))
    return int(d.shape[0]), 1, False


def _x_tri0(args, kwargs):                  # ptsv(d, e, b), pttrf(d, e), pttrs(d, e, b)
    d = _np.asarray(_arg(args, kwargs, 0, "d"))
    return int(d.shape[0]), 1, False


def _x_gbsv(args, kwargs):                  # gbsv(kl, ku, ab, b)
    ab = _np.asarray(_arg(args, kwargs, 2, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 0, "kl")), int(_arg(args, kwargs, 1, "ku"))), False


def _x_gbtrf(args, kwargs):                 # gbtrf(ab, kl, ku), gbtrs(ab, kl, ku, b, ipiv)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 1, "kl")), int(_arg(args, kwargs, 2, "ku"))), False


def _x_pb(args, kwargs):                    # pbsv(ab, b), pbtrf(ab), pbtrs(ab, b)
    ab = _np.asarray(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), int(ab.shape[0] - 1), False


def _x_tbsv(args, kwargs):                  # blas tbsv(k, a, x)
    a = _np.asarray(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), int(_arg(args, kwargs, 0, "k")), False


def _x_sparse(args, kwargs):                # spsolve(A, b), splu(A), cg(A, b), ...
    A = _arg(args, kwargs, 0, "A")
    if not (_sp.issparse(A) or isinstance(A, _spl.LinearOperator)):
        A = _np.asarray(A)
    return int(A.shape[0]), _hb_any(A), False


def _x_sylvester(args, kwargs):             # solve_sylvester(a, b, q): a 2-D solve of size q.size
    q = _np.asarray(_arg(args, kwargs, 2, "q"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_lyap(args, kwargs):                  # solve_{continuous,discrete}_lyapunov(a, q)
    q = _np.asarray(_arg(args, kwargs, 1, "q"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_tensor(args, kwargs):                # numpy tensorsolve(a, b)
    b = _np.asarray(_arg(args, kwargs, 1, "b"))
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    n = int(b.size)
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_tensorinv(args, kwargs):
    a = _np.asarray(_arg(args, kwargs, 0, "a"))
    ind = int(_arg(args, kwargs, 1, "ind", 2))
    n = int(_np.prod(a.shape[:ind]))
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_toeplitz(args, kwargs):              # solve_toeplitz(c_or_cr, b)
    c = _arg(args, kwargs, 0, "c_or_cr")
    parts = [_np.asarray(p).ravel() for p in (c if isinstance(c, tuple) else (c,))]
    hb = max([int(_np.flatnonzero(p[1:] != 0).max()) + 1 if _np.any(p[1:] != 0) else 0 for p in parts])
    return int(parts[0].size), hb, False


def _x_circulant(args, kwargs):             # solve_circulant(c, b)
    c = _np.asarray(_arg(args, kwargs, 0, "c")).ravel()
    return int(c.size), (int(c.size - 1) if _np.any(c[1:] != 0) else 0), False


_ENTRY = [
    (_npl, "numpy.linalg", {"solve": _x_dense, "inv": _x_dense, "pinv": _x_dense, "lstsq": _x_dense,
                            "cholesky": _x_dense,
                            "tensorsolve": _x_tensor, "tensorinv": _x_tensorinv}),
    (_uml, "numpy.linalg._umath_linalg", {"solve": _x_dense, "solve1": _x_dense, "inv": _x_dense}),
    (_sla, "scipy.linalg", {"solve": _x_dense, "inv": _x_dense, "pinv": _x_dense, "pinvh": _x_dense,
                            "lstsq": _x_dense, "lu": _x_dense, "lu_factor": _x_dense,
                            "cho_factor": _x_dense, "cholesky": _x_dense,
                            "ldl": _x_dense, "solve_triangular": _x_dense,
                            "lu_solve": _x_factor, "cho_solve": _x_factor,
                            "solve_banded": _x_banded, "solveh_banded": _x_hbanded,
                            "cholesky_banded": _x_cholbanded, "cho_solve_banded": _x_chobanded,
                            "solve_toeplitz": _x_toeplitz, "solve_circulant": _x_circulant,
                            "solve_sylvester": _x_sylvester,
                            "solve_continuous_lyapunov": _x_lyap, "solve_discrete_lyapunov": _x_lyap,
                            "solve_lyapunov": _x_lyap}),
    (_spl, "scipy.sparse.linalg", {n: _x_sparse for n in (
        "spsolve", "spsolve_triangular", "splu", "spilu", "factorized", "inv", "cg", "bicg",
        "bicgstab", "cgs", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr", "lsqr", "lsmr")}),
]
_LAPACK_BASES = {"gtsv": _x_tri, "gttrf": _x_tri, "gttrs": _x_tri, "ptsv": _x_tri0, "pttrf": _x_tri0,
                 "pttrs": _x_tri0, "gbsv": _x_gbsv, "gbtrf": _x_gbtrf, "gbtrs": _x_gbtrf,
                 "pbsv": _x_pb, "pbtrf": _x_pb, "pbtrs": _x_pb, "getrs": _x_factor, "getri": _x_factor,
                 "potrs": _x_factor, "potri": _x_factor}
for _b in ("gesv", "getrf", "posv", "potrf", "sysv", "sytrf", "hesv", "hetrf", "gels", "gelsd",
           "gelss", "gelsy", "trtrs", "gesvx", "posvx", "sysvx", "getc2", "gesc2"):
    _LAPACK_BASES[_b] = _x_dense
_ENTRY.append((_lapack, "scipy.linalg.lapack", {p + b: x for b, x in _LAPACK_BASES.items()
                                                for p in "sdcz"}))
_ENTRY.append((_blas, "scipy.linalg.blas", {**{p + "trsv": _x_dense for p in "sdcz"},
                                            **{p + "trsm": _x_trsm for p in "sdcz"},
                                            **{p + "tbsv": _x_tbsv for p in "sdcz"}}))


def _send_violation(name, n, hb):
    key = (_S["job"], name, n, hb)
    if key not in _S["seen"] and len(_S["seen"]) < 200:
        _S["seen"].add(key)
        send({"kind": "violation", "job": _S["job"], "fn": name, "dim": n, "hb": hb, "m": _S["m"]})


def _record(name, n, hb, factor):
    log = _S["log"]
    m = _S["m"]
    if log is not None:
        log["count"] += 1
        log["fns"][name] = log["fns"].get(name, 0) + 1
        if n is not None:
            log["max_dim"] = max(log["max_dim"], n)
        if hb is not None:
            log["max_hb"] = max(log["max_hb"], hb)
        elif not factor:
            log["unknown_hb"] += 1
    if m is not None and ((n is not None and n > _REQ["dim_factor"] * (m + 1)) or
                          (hb is not None and hb > _REQ["max_half_bandwidth"])):
        _send_violation(name, n, hb)


_RNG = _np.random.default_rng(int(_REQ["perturb_seed"]))


def _spoil(a):
    """mode "nan": every entry NaN; mode "scale": each entry times (1 + eps r), r in [1, 2)
    drawn per run (finite, invisible to an isnan/isfinite test)."""
    if _S["poison"] == "nan":
        return _np.full_like(a, _np.nan)
    r = _RNG.uniform(1.0, 2.0, size=a.shape)
    return a * (1.0 + float(_REQ["perturb_rel"]) * r)


def _poison(out):
    if isinstance(out, _np.ndarray) and out.dtype.kind in "fc":
        return _spoil(out)
    if isinstance(out, tuple):
        return tuple(_poison(o) for o in out)
    if isinstance(out, list):
        return [_poison(o) for o in out]
    if _sp.issparse(out) and out.dtype.kind in "fc":
        out = out.copy()
        out.data[:] = _spoil(out.data)
        return out
    return out


class _SolverProxy:
    """SuperLU objects (and factorized() callables): their solves are counted and poisoned."""

    def __init__(self, obj, name, n):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_n", n)

    def __getattr__(self, attr):
        val = getattr(self._obj, attr)
        if attr == "solve" and callable(val):
            return self._wrap(val, self._name + ".solve")
        return val

    def _wrap(self, fn, name):
        def solve(*args, **kwargs):
            return _call(fn, name, args, kwargs, lambda a, k: (self._n, None, True))
        return solve

    def __call__(self, *args, **kwargs):
        return _call(self._obj, self._name + "()", args, kwargs, lambda a, k: (self._n, None, True))


def _call(fn, name, args, kwargs, extract, proxy=False):
    if _S["depth"]:
        return fn(*args, **kwargs)
    try:
        n, hb, factor = extract(args, kwargs)
    except Exception:
        n, hb, factor = None, None, False
    _record(name, n, hb, factor)
    _S["depth"] += 1
    try:
        out = fn(*args, **kwargs)
    finally:
        _S["depth"] -= 1
    if proxy:
        return _SolverProxy(out, name, n)
    return _poison(out) if _S["poison"] else out


_WRAPPED = {}
_PATCHED = []                           # (module, name, wrapper): checked after every job


def _integrity():
    """Names of entry points the submission un-wrapped, and a depth left non-zero."""
    bad = [f"{getattr(m, '__name__', '?')}.{k}" for m, k, w in _PATCHED if getattr(m, k, None) is not w]
    if _S["depth"] != 0:
        bad.append("instrumentation depth counter")
    return bad


def _make(fn, name, extract):
    proxy = name.rsplit(".", 1)[-1] in ("splu", "spilu", "factorized")

    def wrapper(*args, **kwargs):
        return _call(fn, name, args, kwargs, extract, proxy)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except Exception:
            pass
    try:    # function attributes callers rely on (lstsq.default_lapack_driver), never the
        wrapper.__dict__.update({k: v for k, v in vars(fn).items() if k != "__wrapped__"})  # original
    except TypeError:
        pass
    return wrapper


for _mod, _mname, _table in _ENTRY:
    if _mod is None:
        continue
    for _name, _x in _table.items():
        _fn = getattr(_mod, _name, None)
        if _fn is None or id(_fn) in _WRAPPED:
            continue
        _WRAPPED[id(_fn)] = (_fn, _make(_fn, f"{_mname}.{_name}", _x))

for _modobj in list(_sys.modules.values()):
    _d = getattr(_modobj, "__dict__", None)
    if not isinstance(_d, dict) or _modobj is _sys.modules.get("builtins"):
        continue
    for _k, _v in list(_d.items()):
        _w = _WRAPPED.get(id(_v))
        if _w is not None and _w[0] is _v:
            try:
                setattr(_modobj, _k, _w[1])
                _PATCHED.append((_modobj, _k, _w[1]))
            except Exception:
                pass


def _map_funcs(getter):
    def get_funcs(*args, **kwargs):
        out = getter(*args, **kwargs)
        if isinstance(out, (list, tuple)):
            return type(out)(_WRAPPED.get(id(f), (f, f))[1] if _WRAPPED.get(id(f), (None,))[0] is f
                             else f for f in out)
        w = _WRAPPED.get(id(out))
        return w[1] if w is not None and w[0] is out else out
    return get_funcs


for _modobj, _gname in ((_lapack, "get_lapack_funcs"), (_blas, "get_blas_funcs"), (_sla, "get_lapack_funcs"),
                        (_sla, "get_blas_funcs")):
    _g = getattr(_modobj, _gname, None)
    if _g is not None and not getattr(_g, "_grader_mapped", False):
        _mg = _map_funcs(_g)
        _mg._grader_mapped = True
        setattr(_modobj, _gname, _mg)

_PNS = {}
exec(compile(_REQ["problem_source"], "<problems>", "exec"), _PNS)
_sys.path.insert(0, _SUBDIR)
# the driver's state is not offered to the submission as sys.modules["__main__"]
_sys.modules["__main__"] = type(_sys)("__main__")


def _b64f(a):
    return _b64.b64encode(_np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _new_log():
    return {"count": 0, "fns": {}, "max_dim": 0, "max_hb": 0, "unknown_hb": 0}


def _import_job():
    """The import check, in a forked child of its own: signature, import-time solves."""
    _S["log"] = _new_log()
    try:
        import adi_solver as _sub
        _solve = getattr(_sub, "solve", None)
        if not callable(_solve):
            raise AttributeError("adi_solver has no callable solve")
        try:
            _sig = _inspect.signature(_solve)
            _sig.bind(0.1, T=1.0, problem=None)
            _ps = _sig.parameters
            _ok = ("T" in _ps and _ps["T"].default == 1.0 and "problem" in _ps
                   and _ps["problem"].default is None)
        except (TypeError, ValueError):
            _sig, _ok = "(unreadable)", False
        send({"kind": "ready", "signature": str(_sig), "signature_ok": bool(_ok),
              "import_solves": _S["log"]["count"]})
        if _integrity():
            send({"kind": "tamper", "job": "import", "what": _integrity()[:10]})
            _S["depth"] = 0
    except BaseException as _exc:
        send({"kind": "import_error", "error": f"{type(_exc).__name__}: {_exc}"[:400]})
        raise SystemExit(3)


def _fresh_solve():
    """adi_solver imported in this forked job child (the warm parent never imports it): no
    cache or counter of one run (a poisoned one included) survives into the next."""
    import adi_solver
    return adi_solver.solve


def _solve_job(_job):
    _h = float(_job["h"])
    _m = int(round(1.0 / _h))
    _S["job"], _S["m"], _S["log"] = _job["tag"], _m, _new_log()
    if _job["problem"] == "hidden":
        _call_args = (_h, float(_PNS["HIDDEN_T"]), _PNS["hidden_problem"]())
    elif _job["problem"] == "benchmark_object":
        _call_args = (_h, 1.0, _PNS["benchmark_problem"]())
    else:
        _call_args = (_h, 1.0, None)
    _S["poison"] = _job.get("poison") or False
    _t0 = _time.monotonic()
    _msg = {"kind": "job", "tag": _job["tag"]}
    try:
        _res = _fresh_solve()(*_call_args)
        _S["poison"] = False
        if not isinstance(_res, (tuple, list)) or len(_res) != 3:
            raise TypeError(f"solve returned {type(_res).__name__}, expected (X, Y, U)")
        _arrs = [_np.array(_v, dtype=_np.float64) for _v in _res]
        for _nm, _a in zip("XYU", _arrs):
            if _a.shape != (_m + 1, _m + 1):
                raise ValueError(f"{_nm} has shape {_a.shape}, expected {(_m + 1, _m + 1)}")
        _msg.update(status="ok", X=_b64f(_arrs[0]), Y=_b64f(_arrs[1]), U=_b64f(_arrs[2]))
    except BaseException as _exc:
        _S["poison"] = False
        if isinstance(_exc, (KeyboardInterrupt, SystemExit)):
            _msg.update(status="error", error=f"{type(_exc).__name__}")
        else:
            _msg.update(status="error", error=f"{type(_exc).__name__}: {_exc}"[:400])
    _msg.update(wall=_time.monotonic() - _t0, log=_S["log"], m=_m)
    _bad = _integrity()
    if _bad:
        send({"kind": "tamper", "job": _job["tag"], "what": _bad[:10]})
        _S["depth"] = 0
    send(_msg)


if fork_jobs([{"id": "import"}], lambda _job: _import_job())[0]["status"] == "ok":
    fork_jobs([dict(_j, id=_j["tag"]) for _j in _REQ["jobs"]], _solve_job)
send({"kind": "done"})
'''


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
TIER3_PREFIX = "tier3."


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  Any FAIL outside Tier 3 -> 0.0;
    REVIEW under --strict -> 0.0; Tier 3 all PASS -> 1.0, otherwise 0.5."""
    if no_exec:
        return "UNGRADED", None
    if any(c.status is Status.FAIL and not c.id.startswith(TIER3_PREFIX) for c in checks):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    tier3 = [c for c in checks if c.id.startswith(TIER3_PREFIX)]
    if tier3 and all(c.status is Status.PASS for c in tier3):
        return "PASS", 1.0
    return "PARTIAL", 0.5


# =============================================================================
# PRINTING AND CLI
# =============================================================================
def format_check(c: Check) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<30} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None, counted=None) -> None:
    """`checks` are printed; the summary counts `counted` (all records, also under --quiet)."""
    stream = stream or sys.stdout
    for c in checks:
        print(format_check(c), file=stream)
    counted = checks if counted is None else counted
    counts = {s: sum(c.status is s for c in counted) for s in Status}
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
    p.add_argument("submission", help="directory with adi_solver.py, results.json, reference_arrays.npz")
    p.add_argument("--budget", type=float, default=SPEC["budget_s"],
                   help="wall-clock seconds per execution phase (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="anything needing review scores 0.0")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: diagnostics only, RESULT: UNGRADED, exit 2")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON to PATH")
    p.add_argument("--quiet", action="store_true", help="print only the summary and verdict")
    return p


def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> tuple:
    """(checks, phases, outcomes, keys): every record of the seed's checks."""
    phases, outcomes, keys = {}, {}, {}
    t0 = time.monotonic()
    checks = []
    sub = Submitted()
    solver_path = os.path.join(submission, SPEC["solver_file"])
    missing = [f for f in (SPEC["solver_file"], SPEC["results_file"], SPEC["arrays_file"])
               if not os.path.isfile(os.path.join(submission, f))]
    checks.append(Check("static.files", Status.FAIL if missing else Status.PASS,
                        f"missing: {', '.join(missing)}" if missing else "adi_solver.py, results.json, "
                        "reference_arrays.npz present"))
    # dependency allowlist (static): the solver and any module beside it
    if os.path.isfile(solver_path):
        checks += audit_submission_sources(submission)
    # array schema
    try:
        sub.arrays = load_npz_file(os.path.join(submission, SPEC["arrays_file"]), "schema.npz",
                                   SPEC["max_npz_bytes"], only=MANDATORY_ARRAYS + TIER3_ARRAYS)
    except Reject as exc:
        checks.append(exc.check)
    if sub.arrays is not None:
        checks += check_array_schema(sub)
        checks += check_tier3_arrays(sub)
    # sidecar
    try:
        sub.results = read_json_file(os.path.join(submission, SPEC["results_file"]), "sidecar.json",
                                     SPEC["max_json_bytes"])
        if not isinstance(sub.results, dict):
            raise Reject("sidecar.json", "results.json must hold a JSON object")
    except Reject as exc:
        checks.append(exc.check)
        sub.results = None
    if sub.results is not None:
        if sub.e is not None:
            checks += check_convergence_table(sub)
            checks += check_observed_order(sub)
        checks += check_sidecar_fields(sub)
        checks += check_time_step_rule(sub)
        checks += check_scheme(sub)
        checks += check_finest_mesh(sub)
    # numerical tiers, from the submitted errors (verified below by regeneration)
    if sub.e is not None:
        checks += tier1_checks(sub.e)
        checks += tier2_checks(sub.h, sub.e)
        keys["errors_submitted"] = ", ".join(f"{v:.4e}" for v in sub.e)
        keys["fitted_order"] = f"{fitted_order(sub.h, sub.e):.4f}"
        if sub.tier3 is not None:
            checks += tier3_static_checks(sub)
    phases["static"] = time.monotonic() - t0
    if no_exec:
        checks.append(Check("provenance.exec", Status.SKIP, "--no-exec: the solver was not run; "
                            "provenance unverified, no score"))
        return checks, phases, outcomes, keys
    if sub.e is None or any(c.status is Status.FAIL and not c.id.startswith(TIER3_PREFIX) for c in checks):
        checks.append(Check("provenance.exec", Status.SKIP, "not executed: the static checks already "
                            "score 0.0"))
        return checks, phases, outcomes, keys
    # execution: the grader's reference runs beside the isolated child
    t1 = time.monotonic()
    ref_box = {}

    def compute_reference():
        try:
            ref_box["ref"] = hidden_reference()
        except BaseException as exc:   # surfaces below as a grader failure
            ref_box["error"] = exc

    worker = threading.Thread(target=compute_reference, daemon=True)
    worker.start()
    outcome = run_isolated(submission, DRIVER_BODY,
                           {"jobs": plan_jobs(), "problem_source": PROBLEM_SOURCE,
                            "perturb_seed": perturb_seed(), "perturb_rel": SPEC["perturb_rel"],
                            "dim_factor": SPEC["dim_factor"],
                            "max_half_bandwidth": SPEC["max_half_bandwidth"]}, budget)
    outcomes["solve"] = outcome
    checks.append(sandbox_check())
    worker.join()
    phases["execute"] = time.monotonic() - t1
    if "error" in ref_box:
        raise RuntimeError(f"hidden-instance reference could not be computed: {ref_box['error']!r}")
    ready, jobs, violations = decode_jobs(outcome)
    if outcome.forged:
        checks.append(Check("provenance.channel", Status.REVIEW,
                            f"{outcome.forged} unauthenticated line(s) on the result channel ignored"))
    if ready is None or ready.get("kind") != "ready":
        why = ready.get("error") if ready else f"{outcome.status}: {outcome.reason}"
        checks.append(Check("provenance.solver", Status.FAIL, f"adi_solver.py could not be imported: {why}"))
        checks += [c for c in structure_checks({}, violations, ready) if c.status is Status.FAIL]
        return checks, phases, outcomes, keys
    sig_ok = bool(ready.get("signature_ok"))
    checks.append(Check("provenance.solver", Status.PASS if sig_ok else Status.FAIL,
                        f"solve{ready.get('signature', '')}" + ("" if sig_ok else
                        ": must be solve(h, T=1.0, problem=None)")))
    regen_checks, regen = regeneration_checks(sub, jobs, outcome)
    checks += regen_checks
    checks += hidden_checks(jobs, ref_box["ref"])
    checks += causal_audit_check(jobs, outcome)
    checks += interface_check(jobs)
    checks += determinism_check(jobs)
    checks += structure_checks(jobs, violations, ready)
    checks += field_check(sub, jobs)
    keys["errors_regenerated"] = ", ".join("—" if v is None else f"{v:.4e}" for v in regen)
    hid = [c.measured for c in checks if c.id.startswith("hidden.error")]
    keys["hidden_errors"] = ", ".join(f"{v:.3e}" if isinstance(v, float) else "—" for v in hid)
    keys["observed_solves"] = "; ".join(f"{_job_label(t)}: {int(r['log'].get('count', 0) or 0)}"
                                        for t, r in jobs.items())
    return checks, phases, outcomes, keys


def audit_submission_sources(submission: str) -> list:
    """import_audit over adi_solver.py and every other .py file in the submission
    (a sibling module or package the solver imports is allowed and audited alike)."""
    local = {os.path.splitext(f)[0] for f in os.listdir(submission) if f.endswith(".py")} | \
            {d for d in os.listdir(submission) if os.path.isfile(os.path.join(submission, d, "__init__.py"))}
    out = []
    for root, dirs, files in os.walk(submission, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, submission)
            if not name.endswith(".py") or not os.path.isfile(path) or os.path.islink(path):
                continue
            if os.path.getsize(path) > SPEC["max_source_bytes"]:
                out.append(Check("static.imports", Status.FAIL, f"{rel} larger than "
                                 f"{SPEC['max_source_bytes']} bytes"))
                continue
            with open(path, "rb") as fh:
                source = fh.read().decode("utf-8", "replace")
            for c in import_audit(source, "static", local=local, filename=rel):
                out.append(dataclasses.replace(c, message=f"{rel}: {c.message}"))
    merged = {}
    for c in out:   # one record per id: the worst
        rank = {Status.FAIL: 3, Status.REVIEW: 2, Status.SKIP: 1, Status.INFO: 1, Status.PASS: 0}
        if c.id not in merged or rank[c.status] > rank[merged[c.id].status]:
            merged[c.id] = c
    return list(merged.values())


def main(argv=None) -> int:
    for stream in (sys.stdout, sys.stderr):     # a submission's message may hold lone
        try:                                     # surrogates or text the locale cannot encode
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    args = build_parser().parse_args(argv)
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
    shown = [c for c in checks if not args.quiet or c.status in (Status.FAIL, Status.REVIEW)]
    print_report(shown, result, score, keys, counted=checks)
    if args.json:
        write_json_report(args.json, args.submission, checks, result, score, phases, keys)
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


if __name__ == "__main__":
    sys.exit(main())

