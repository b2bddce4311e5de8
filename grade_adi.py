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

# The grader's own numerics on one BLAS thread (set before numpy is first imported): its
# results do not depend on the machine's core count, and idle OpenBLAS workers, which spin,
# do not take the core the isolated child needs (measured on the FEM gold: 0.15 s of CPU).
os.environ.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})

GRADER_NAME = "grade_adi"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

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
    "hidden_h": (0.1, 0.05, 0.025),   # the hidden meshes (the seed's two plus h = 0.025, ours)
    "hidden_tol": 3e-2,           # seed: "must land within 3e-2 of a reference" (on every hidden mesh)
    "hidden_min_drop": 2.0,       # seed: "falling by at least 2×" between hidden_h[0] and hidden_h[1]
    "hidden_min_fine_drop": 2.5,  # ours: between hidden_h[1] and hidden_h[2] (observed order >= 1.32):
                                  #   first order falls ~2.0x there, the accepted family >= 3.2x
    "audit_h": 0.1,               # seed: "On one hidden mesh the grader replaces every intercepted solve result"
    "audit_atol": 1e-12,          # seed: "unchanged to pointwise atol=1e-12 (rtol=0) fails with 0.0"
    "perturb_rel": 1e-6,          # ours: the finite audit scales each solve result by 1 + eps r, r in [1, 2)
    "iface_rtol": 1e-9,           # ours: solve(h) vs solve(h, 1.0, <benchmark problem object>), pointwise
    "ref_m": (40, 80),            # our MCS reference: Richardson from h = 1/40 and 1/80 (see PROBLEMS)
    "ref_theta": 1.0 / 3.0,
    "adi_op_rtol": 1e-9,          # ours: a counted solve's matrix is s (I - r D2) on grid lines to this
                                  #   relative round-off (constant diagonals, one r in every block)
    "adi_theta_rtol": 1e-8,       # ours: every counted solve of a run implies the same theta (x or y)
    "witness_h": 0.1,             # ours: the second witness, one step (T = k = h) on this mesh
    "witness_rtol": 1e-9,         # ours: the step equals the grader's replay to this (relative max norm);
                                  #   measured: honest family members 1e-15, a 2-D CN step 1e-2 off the family
    "witness_theta_max": 40.0,    # ours: theta searched in (0, this] (the accepted band ends at 8)
    "resid_rtol": 1e-10,          # ours: every recorded direct solve satisfies its own recorded system,
                                  #   |A x - b| <= this (|A| |x| + |b|) (inf-norms); a backward-stable
                                  #   solve of dimension <= 2(m+1) = 322 sits near n eps ~ 1e-14
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
# Hidden instance (design notes; measured with reference/adi/scheme_survey.py,
# which prints these columns beside the benchmark's; pinned by tests/test_adi_hidden.py):
#   a = 0.02, b = 0.028, c = 0.012 (SPD; b / 2 sqrt(ac) = 0.90, a strong mixed term),
#   T = 1, u = s + (1 + 2t) w + v with s = 0.1 (1 + x + y/2 + xy) (steady, the
#   non-zero Dirichlet data), w = 2 x(1-x) y(1-y) (a carrier driven by the source)
#   and v (zero data, no source) from 0.01 (sin(pi x) sin(pi y))^5 (1 + 0.6x - 0.3y
#   + 0.8xy): smooth, non-separable, no closed form, compatible to second order.
#   Every scheme of the family is exact on s; on w (linear in t, a biquadratic the
#   stencils differentiate exactly) a consistent second-order scheme has only
#   theta^2 k^2 a c splitting errors, small for these coefficients, while a
#   first-order one keeps its O(k) error k [(theta - 1/2)(F1 + F2)' - F0'/2],
#   large because the source varies in time.  Meshes h = 0.1, 0.05, 0.025: the
#   seed's >= 2x drop from 0.1 to 0.05, and ours, >= 2.5x from 0.05 to 0.025.
#   Reference: this grader's MCS (theta = 1/3) on h = 1/40 and 1/80,
#   Richardson-extrapolated: within 3.0e-6 of the (1/80, 1/160) one and 4.1e-6 of
#   the (1/160, 1/320) one; against either, every survey row's hidden errors agree
#   to 1 % and its drops to 0.02.  0.07 s of CPU (the (1/80, 1/160) one: 0.44 s).
#   Measured drops (0.1 -> 0.05, 0.05 -> 0.025): gold 3.02x, 3.63x (misses 3.0e-4,
#   1.0e-4, 2.8e-5); accepted family >= 3.02x and >= 3.19x (HV theta = 8), worst miss
#   8.8e-3 (MCS theta = 8, h = 0.1); first order <= 2.09x and <= 2.08x (CS theta =
#   0.8), Douglas 2.04x / 2.05x and 2.01x / 2.02x; mixed term dropped 0.91x / 0.98x
#   and 3.2e-2 to 3.5e-2 off.  Trivial answers miss by: zeros 0.59, the initial
#   state 0.24, the benchmark's manufactured field 0.57.
#   That is the CENTRE of the family a grading draws from (HIDDEN_FAMILY, hidden_draw;
#   tests/test_adi_hidden_family.py): over 57 members (16 corners, 41 random) the
#   accepted rows miss by <= 1.22e-2 and drop >= 2.89x / >= 3.13x, the first-order
#   rows' finer drop stays <= 2.15x; a field precomputed for the centre drops < 1.5x.
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


def witness_problem(draw):
    """The second witness's problem (ours): the benchmark's coefficients, f = g = 0, and a
    smooth initial state drawn for every grading, u0 = sum amp[p][q] sin((p+1) pi x)
    sin((q+1) pi y) (1 + s x y); solve() is called with T = k = h, one step."""
    amp = [[float(v) for v in row] for row in draw["amp"]]
    sxy = float(draw["s"])

    def u0(X, Y):
        out = 0.0 * X
        for p, row in enumerate(amp):
            for q, v in enumerate(row):
                out = out + v * _pnp.sin((p + 1) * _pnp.pi * X) * _pnp.sin((q + 1) * _pnp.pi * Y)
        return out * (1.0 + sxy * X * Y)

    def zero(X, Y, t):
        return 0.0 * X

    return Problem(1.0, 0.8, 0.5, u0, zero, zero)


HIDDEN_T = 1.0


# The calibrated centre of the hidden family; a grading draws its instance from
# HIDDEN_FAMILY (every parameter uniform in its interval, see hidden_draw) so that no
# precomputed field fits it.  b is set from rho = b / (2 sqrt(ac)).
HIDDEN_CENTRE = {"a": 0.02, "c": 0.012, "rho": 0.028 / (2.0 * _pm.sqrt(0.02 * 0.012)), "G": 2.0,
                 "beta": 2.0, "A": 0.01, "S": 0.1, "q1": 0.6, "q2": -0.3, "q3": 0.8}
HIDDEN_FAMILY = {"a": (0.018, 0.022), "c": (0.0108, 0.0132), "rho": (0.86, 0.92), "G": (1.8, 2.2),
                 "beta": (1.8, 2.2), "A": (0.008, 0.012), "S": (0.08, 0.12), "q1": (0.4, 0.8),
                 "q2": (-0.5, -0.1), "q3": (0.6, 1.0)}


def hidden_problem(draw=None):
    """u = s + (1 + beta t) w + v.  s (bilinear, steady) carries the non-zero Dirichlet data;
    w = G x(1-x) y(1-y) is a carrier driven by the source; v (zero on the boundary, no source)
    starts from the non-separable bump A (sin(pi x) sin(pi y))^5 q(x, y) and has no closed form.
    `draw` overrides parameters of HIDDEN_CENTRE (None: the centre itself)."""
    P = dict(HIDDEN_CENTRE, **(draw or {}))
    a, c, G, beta, A, S = (float(P[k]) for k in ("a", "c", "G", "beta", "A", "S"))
    b = 2.0 * float(P["rho"]) * _pm.sqrt(a * c)
    q1, q2, q3 = float(P["q1"]), float(P["q2"]), float(P["q3"])

    def s(X, Y):
        return S * (1.0 + X + 0.5 * Y + X * Y)

    def w(X, Y):
        return G * X * (1.0 - X) * Y * (1.0 - Y)

    def u0(X, Y):
        bump = (_pnp.sin(_pnp.pi * X) * _pnp.sin(_pnp.pi * Y)) ** 5
        return s(X, Y) + w(X, Y) + A * bump * (1.0 + q1 * X + q2 * Y + q3 * X * Y)

    def g(X, Y, t):
        return s(X, Y) + (1.0 + beta * t) * w(X, Y)

    def f(X, Y, t):   # u_t - (a u_xx + b u_xy + c u_yy) for the s and w parts (v has no source)
        Lw = G * (-2.0 * a * Y * (1.0 - Y) + b * (1.0 - 2.0 * X) * (1.0 - 2.0 * Y) - 2.0 * c * X * (1.0 - X))
        return beta * w(X, Y) - (1.0 + beta * t) * Lw - b * S

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
INTROSPECTION_MODULES = ("ctypes", "gc", "inspect", "_ctypes", "cffi",
                         # another process runs outside the solve instrumentation (ours)
                         "multiprocessing", "subprocess", "_posixsubprocess", "concurrent.futures.process")
PROCESS_CALLS = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "spawnv",
                 "spawnve", "system", "popen", "ProcessPoolExecutor")
INTROSPECTION_NAMES = ("__globals__", "__closure__", "cell_contents", "__code__", "__defaults__",
                       "__kwdefaults__", "f_globals", "f_locals", "f_back", "tb_frame", "_getframe",
                       "__main__", "__pyx_capi__", "get_referrers", "get_objects", "_superlu",
                       "_umath_linalg", "_flapack", "_fblas",
                       # private transform back ends behind numpy.fft / scipy.fft / scipy.fftpack
                       "_pocketfft", "pypocketfft", "_realtransforms", "_basic_backend")


def import_audit(source: str, check_prefix: str, local: set = frozenset(),
                 filename: str = SPEC["solver_file"]) -> list:
    """AST pass: every import outside stdlib + numpy + scipy (+ the submission's own
    `local` modules) fails; importlib / __import__ / exec / eval are flagged for
    review (the allowlist is static); so are process spawning and introspection."""
    try:
        tree = parse_python(source, filename, f"{check_prefix}.syntax")
        return _import_audit_tree(tree, check_prefix, local)
    except Reject as exc:
        return [exc.check]
    except RecursionError:
        return [Check(f"{check_prefix}.syntax", Status.FAIL, f"{filename}: cannot be audited (nested too "
                      "deeply)")]


def _import_audit_tree(tree, check_prefix: str, local) -> list:
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic, intro = [], [], []
    for node in ast.walk(tree):
        word = node.attr if isinstance(node, ast.Attribute) else node.value if (
            isinstance(node, ast.Constant) and isinstance(node.value, str)) else None
        if word is not None and any(n in word for n in INTROSPECTION_NAMES):
            intro.append(f"{word[:40]!r} (line {node.lineno})")
        if isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS:
            intro.append(f"{node.attr!r}: another process (line {node.lineno})")
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
            if (top in INTROSPECTION_MODULES or name in INTROSPECTION_MODULES
                    or any(n in full for n in INTROSPECTION_NAMES)
                    or any(a.name in PROCESS_CALLS for a in node.names)):
                intro.append(f"import {full.strip()} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY and top not in local:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("__import__", "exec", "eval", "compile"):
            dynamic.append(f"{node.func.id}() (line {node.lineno})")
    out = []
    patched = library_assignments(tree)
    if patched:
        out.append(Check(f"{check_prefix}.library_assignment", Status.FAIL,
                         "assigns to (or deletes) an attribute of a NumPy/SciPy module, class or function, "
                         "which changes what the library computes and what a recorder reading it sees: "
                         + ", ".join(patched[:6]), patched))
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


def _root_name(node):
    """The name an attribute/subscript chain starts from (None through a call: `np.zeros(3)[0] = 1`
    assigns into a new array, not into the library)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def library_assignments(tree) -> list:
    """Statements that rebind an attribute of a name imported from numpy/scipy: `np.nonzero = f`,
    `csr_matrix.tocoo = f`, `del la.solve`, `setattr(np, ...)`, `vars(np)[...] = f`,
    `np.__dict__.update(...)` (ours, a tripwire: the recorder itself reads only references
    captured before the submission loads, and the driver snapshots the library for the tamper check)."""
    lib = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            lib |= {(a.asname or a.name.split(".")[0]) for a in node.names
                    if a.name.split(".")[0] in ALLOWED_THIRD_PARTY}
        elif isinstance(node, ast.ImportFrom) and not node.level and \
                (node.module or "").split(".")[0] in ALLOWED_THIRD_PARTY:
            lib |= {(a.asname or a.name) for a in node.names if a.name != "*"}
    hits = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for el in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(el, (ast.Attribute, ast.Subscript)) and _root_name(el) in lib and not (
                        isinstance(el, ast.Subscript) and isinstance(el.value, ast.Name)):
                    hits.append(f"line {node.lineno}")
                elif isinstance(el, ast.Subscript) and isinstance(el.value, ast.Call) and \
                        isinstance(el.value.func, ast.Name) and el.value.func.id == "vars" and \
                        el.value.args and _root_name(el.value.args[0]) in lib:
                    hits.append(f"line {node.lineno}")
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in ("setattr", "delattr") and node.args and \
                    _root_name(node.args[0]) in lib:
                hits.append(f"{f.id}() (line {node.lineno})")
            elif isinstance(f, ast.Attribute) and f.attr in ("__setattr__", "__delattr__", "update", "setdefault",
                                                              "__setitem__") and \
                    (f.attr.startswith("__") or (isinstance(f.value, ast.Attribute) and f.value.attr == "__dict__")) \
                    and _root_name(f.value) in lib:
                hits.append(f"{f.attr}() (line {node.lineno})")
    return sorted(set(hits), key=lambda h: int(h.rsplit(" ", 1)[-1].rstrip(")")))


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


_DRAW = {}
_DRAW_LOCK = threading.Lock()


def hidden_draw() -> dict:
    """This grading's hidden instance: every parameter of HIDDEN_FAMILY uniform in its interval,
    drawn once per grader process from the OS entropy source (the reference thread and the
    driver request read the same draw).  No precomputed field fits it; every member of the
    family separates the orders (margins measured over the family, PROBLEMS notes)."""
    with _DRAW_LOCK:
        if not _DRAW:
            rng = secrets.SystemRandom()
            _DRAW.update({k: rng.uniform(lo, hi) for k, (lo, hi) in _PROBLEMS["HIDDEN_FAMILY"].items()})
        return dict(_DRAW)


_WDRAW = {}


def witness_draw() -> dict:
    """The witness's initial state, drawn once per grader process (OS entropy)."""
    with _DRAW_LOCK:
        if not _WDRAW:
            rng = secrets.SystemRandom()
            _WDRAW.update(amp=[[rng.uniform(-1.0, 1.0) for _ in range(3)] for _ in range(3)],
                          s=rng.uniform(0.1, 0.5))
        return {"amp": [list(r) for r in _WDRAW["amp"]], "s": _WDRAW["s"]}


def hidden_instance_check() -> Check:
    """INFO: the drawn instance, so that a verdict can be reproduced (hidden_problem(draw))."""
    d = hidden_draw()
    p = _PROBLEMS["hidden_problem"](d)
    return Check("hidden.instance", Status.INFO,
                 f"hidden instance drawn for this grading: a = {p.a:.6g}, b = {p.b:.6g}, c = {p.c:.6g}; "
                 + ", ".join(f"{k} = {v:.6g}" for k, v in sorted(d.items()) if k not in ("a", "c")), d)


def hidden_reference(draw=None):
    """Richardson extrapolation of the reference on h = 1/ref_m[0] and 1/ref_m[1],
    returned on the coarser reference grid (which contains every hidden mesh's nodes).
    `draw`: the instance's parameters (None: this grading's draw, hidden_draw())."""
    import numpy as np
    mc, mf = SPEC["ref_m"]
    prob = _PROBLEMS["hidden_problem"](hidden_draw() if draw is None else draw)
    T = _PROBLEMS["HIDDEN_T"]
    coarse = mcs_reference(prob, mc, T)
    fine = mcs_reference(prob, mf, T)
    ref = (4.0 * fine[:: mf // mc, :: mf // mc] - coarse) / 3.0
    if not np.all(np.isfinite(ref)):
        raise RuntimeError("the grader's hidden-instance reference is not finite")
    return ref


def hidden_error(U, ref, h: float) -> float:
    """max |U - reference| on the nodes of mesh h (inf when U is not finite or misshapen)."""
    import numpy as np
    stride = SPEC["ref_m"][0] // mesh_m(h)
    R = ref[::stride, ::stride]
    U = np.asarray(U, dtype=float)
    if U.shape != R.shape:
        return float("inf")
    with np.errstate(all="ignore"):
        err = float(np.max(np.abs(U - R)))
    return err if math.isfinite(err) else float("inf")


def _drop_check(cid: str, errs: list, i: int, limit: float, rule: str) -> Check:
    """The error must fall by >= limit from hidden_h[i] to hidden_h[i + 1]."""
    h0, h1 = SPEC["hidden_h"][i], SPEC["hidden_h"][i + 1]
    e0, e1 = errs[i], errs[i + 1]
    if e0 is None or e1 is None or not (math.isfinite(e0) and math.isfinite(e1)):
        return Check(cid, Status.FAIL, f"no finite hidden errors on h={h0:g} and h={h1:g}")
    ratio = e0 / e1 if e1 > 0 else float("inf")
    order = math.log(ratio) / math.log(h0 / h1) if ratio > 0 and math.isfinite(ratio) else float("nan")
    ok = ratio >= limit
    return Check(cid, Status.PASS if ok else Status.FAIL,
                 f"hidden error falls {ratio:.2f}x from h={h0:g} to h={h1:g} (observed order {order:.2f}; "
                 f"need >= {limit:g}x, {rule})", ratio, limit)


def hidden_checks(results: dict, ref) -> list:
    """Every hidden mesh within hidden_tol of the reference; the error falls by
    hidden_min_drop from the first to the second mesh (seed) and by
    hidden_min_fine_drop from the second to the third (ours: tells order 2 from 1)."""
    out, errs = [hidden_instance_check()], []
    for h in SPEC["hidden_h"]:
        r = results.get(f"hidden:{h:g}")
        cid = f"hidden.error[{mesh_tag(h)}]"
        if r is None or r["status"] != "ok":
            out.append(Check(cid, Status.FAIL, f"solve(h={h:g}, T, problem) on the hidden instance: "
                             f"{_job_failure(r)}"))
            errs.append(None)
            continue
        err = hidden_error(r["U"], ref, h)
        ok = err <= SPEC["hidden_tol"]
        out.append(Check(cid, Status.PASS if ok else Status.FAIL,
                         f"max |U - reference| = {err:.3e} (limit {SPEC['hidden_tol']:g})", err,
                         SPEC["hidden_tol"]))
        errs.append(err)
    out.append(_drop_check("hidden.drop", errs, 0, SPEC["hidden_min_drop"], "seed"))
    out.append(_drop_check("hidden.order", errs, 1, SPEC["hidden_min_fine_drop"],
                           "second order falls ~4x, first order ~2x"))
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
    jobs.append({"tag": f"witness:{SPEC['witness_h']:g}", "h": SPEC["witness_h"], "problem": "witness"})
    secrets.SystemRandom().shuffle(jobs)
    jobs += [{"tag": f"bench:{p}", "h": h_value(p), "problem": "benchmark"} for p in SPEC["fine"]]
    return jobs


def driver_request(jobs: list, seed: int) -> dict:
    """What the driver reads: its jobs, the problems' source and the limits it applies."""
    return {"jobs": jobs, "problem_source": PROBLEM_SOURCE, "perturb_seed": seed, "hidden_draw": hidden_draw(),
            "witness_draw": witness_draw(),
            "perturb_rel": SPEC["perturb_rel"], "dim_factor": SPEC["dim_factor"],
            "max_half_bandwidth": SPEC["max_half_bandwidth"], "adi_op_rtol": SPEC["adi_op_rtol"],
            "resid_rtol": SPEC["resid_rtol"]}


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
        elif kind in ("violation", "tamper", "residual", "factor", "unreadable"):
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
    theta = submission_theta(jobs)
    return (_one_audit("audit.causal", jobs.get(f"hidden:{h:g}"), jobs.get(f"audit:{h:g}"), outcome, theta)
            + _one_audit("audit.causal_benchmark", jobs.get("bench:0"), jobs.get(f"auditbench:{h:g}"),
                         outcome, theta)
            + _one_perturbed("audit.perturbed", jobs.get(f"hidden:{h:g}"), jobs.get(f"perturb:{h:g}"),
                             outcome, theta)
            + _one_perturbed("audit.perturbed_benchmark", jobs.get("bench:0"),
                             jobs.get(f"perturbbench:{h:g}"), outcome, theta))


# -- the second witness of ADI structure (ours), independent of the in-process recorder ----
# One step (T = k = h) of the submitted solver on a grader-drawn problem with f = g = 0 is a
# linear map of u0.  The grader replays that step itself (outside the child) for every
# scheme of the family (Douglas, CS, MCS, HV) with theta fitted to the
# submitted field, and for a monolithic 2-D theta-step (I - phi k A) U1 = (I + (1 - phi) k A) U0.
_WITNESS_SCHEMES = ("Douglas", "CS", "MCS", "HV")


def witness_operators(m: int, h: float, a: float, b: float, c: float) -> tuple:
    """(A0, A1, A2): the mixed term and the two second differences on the interior, dense,
    for U[i, j] (x index i) flattened row-major; zero Dirichlet data."""
    import numpy as np
    n = m - 1
    D2 = (np.diag(np.full(n, -2.0)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)) / h ** 2
    D1 = (np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)) / (2.0 * h)
    eye = np.eye(n)
    return b * np.kron(D1, D1), a * np.kron(D2, eye), c * np.kron(eye, D2)


def adi_step(scheme: str, theta: float, U, ops, k: float):
    """One step of the family (in 't Hout & Foulon 2010, f = g = 0) from U (flattened)."""
    import numpy as np
    A0, A1, A2 = ops
    eye = np.eye(U.size)
    A = A0 + A1 + A2
    M1, M2 = eye - theta * k * A1, eye - theta * k * A2

    def stages(Z0, V):
        return np.linalg.solve(M2, np.linalg.solve(M1, Z0 - theta * k * (A1 @ V)) - theta * k * (A2 @ V))

    Y0 = U + k * (A @ U)
    Y2 = stages(Y0, U)
    if scheme == "Douglas":
        return Y2
    if scheme == "CS":
        return stages(Y0 + 0.5 * k * (A0 @ (Y2 - U)), U)
    if scheme == "MCS":
        return stages(Y0 + theta * k * (A0 @ (Y2 - U)) + (0.5 - theta) * k * (A @ (Y2 - U)), U)
    return stages(Y0 + 0.5 * k * (A @ (Y2 - U)), Y2)           # HV


def monolithic_step(phi: float, U, ops, k: float):
    import numpy as np
    A = ops[0] + ops[1] + ops[2]
    return np.linalg.solve(np.eye(U.size) - phi * k * A, U + (1.0 - phi) * k * (A @ U))


def fit_step(step, U1, starts) -> tuple:
    """(relative max-norm mismatch, theta) of the best theta for a one-parameter step map:
    a scan, then Gauss-Newton on |U1 - step(theta)|^2 (converges to round-off)."""
    import numpy as np
    scale = float(np.max(np.abs(U1))) or 1.0
    tmax = SPEC["witness_theta_max"]
    grid = list(np.geomspace(0.02, tmax, 24)) + [t for t in starts if t is not None and 0 < t <= tmax]

    def mis(t):
        with np.errstate(all="ignore"):
            r = U1 - step(t)
        return float(np.max(np.abs(r))) / scale if np.all(np.isfinite(r)) else math.inf

    best = min((mis(t), t) for t in grid)
    t = best[1]
    for _ in range(12):
        d = 1e-6 * max(t, 1e-3)
        with np.errstate(all="ignore"):
            r = U1 - step(t)
            J = (step(t + d) - step(t - d)) / (2.0 * d)
        jj = float(J @ J)
        if not (jj > 0 and np.all(np.isfinite(r))):
            break
        t_new = min(max(t + float(r @ J) / jj, 1e-6), tmax)
        if abs(t_new - t) <= 1e-15 * t:
            t = t_new
            break
        t = t_new
    return min(best, (mis(t), t))


def witness_check(jobs: dict, theta_hint) -> list:
    """The submitted one-step field against the grader's replays: PASS when it is a member
    of the family (to round-off), FAIL when it is a monolithic 2-D implicit step, REVIEW when
    it is neither (or when the witness disagrees with the recorder's theta)."""
    import numpy as np
    h = SPEC["witness_h"]
    r = jobs.get(f"witness:{h:g}")
    cid = "witness.adi_step"
    if r is None or r["status"] != "ok":
        return [Check(cid, Status.REVIEW, f"INCONCLUSIVE: one step solve({h:g}, T={h:g}, <witness problem>) "
                      f"{_job_failure(r)}; the second witness of ADI structure is missing; manual review")]
    m = mesh_m(h)
    x = np.linspace(0.0, 1.0, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    prob = _PROBLEMS["witness_problem"](witness_draw())
    U0 = np.asarray(prob.u0(X, Y), dtype=float)[1:-1, 1:-1].ravel()
    U1 = r["U"][1:-1, 1:-1].ravel()
    if not np.all(np.isfinite(U1)):
        return [Check(cid, Status.REVIEW, "the one-step witness field is not finite; manual review")]
    ops = witness_operators(m, h, prob.a, prob.b, prob.c)
    lim = SPEC["witness_rtol"]
    fam = []    # (with f = g = 0 the two 1-D operators commute: x- or y-sweep first is the same step)
    for scheme in _WITNESS_SCHEMES:
        mis, th = fit_step(lambda t, s=scheme: adi_step(s, t, U0, ops, h), U1, [theta_hint])
        fam.append((mis, th, scheme))
    mis, th, scheme = min(fam)
    mono, phi = fit_step(lambda t: monolithic_step(t, U0, ops, h), U1, [0.5])
    if mis <= lim:
        if theta_hint is not None and abs(th - theta_hint) > 1e-6 * theta_hint:
            return [Check(cid, Status.REVIEW, f"the one-step witness is {scheme} with theta = {th:.8g} "
                          f"(mismatch {mis:.1e}), but the recorded solves imply theta = {theta_hint:.8g}: the "
                          "two witnesses disagree; manual review", mis, lim)]
        return [Check(cid, Status.PASS, f"one step on a grader-drawn problem equals the grader's own replay of "
                      f"{scheme}, theta = {th:.8g}, to {mis:.1e} (limit {lim:g}); a monolithic 2-D "
                      f"step misses it by {mono:.1e}", mis, lim)]
    if mono <= lim:
        return [Check(cid, Status.FAIL, f"one step on a grader-drawn problem is a monolithic 2-D implicit step "
                      f"(I - phi k A) U1 = (I + (1 - phi) k A) U0 with phi = {phi:.6g} (mismatch {mono:.1e} <= "
                      f"{lim:g}), not ADI: the closest scheme of the family ({scheme}, theta = {th:.4g}) misses "
                      f"it by {mis:.1e}", mono, lim)]
    return [Check(cid, Status.REVIEW, f"one step on a grader-drawn problem matches no scheme of the family (closest: "
                  f"{scheme}, theta = {th:.4g}, off by {mis:.1e} > {lim:g}) and no monolithic 2-D step "
                  f"(off by {mono:.1e}): not a member of the Craig-Sneyd family; manual review", mis, lim)]


def _not_evidence(cid: str, count: int, what: str, log, theta):
    """A changed field proves the data path only when the spoiled solves include the
    submission's ADI operators (the driver spoils every ADI-shaped solve; the submission's
    theta is known only afterwards): otherwise REVIEW, not PASS."""
    if theta is not None and adi_counted(log, theta, both=False) > 0:
        return None
    return Check(cid, Status.REVIEW, f"INCONCLUSIVE: {count} solve result(s) spoiled and {what}, but none "
                 "of them is an ADI operator I - theta k kappa D2 with the theta of the clean runs (not "
                 "evidence); manual review")


def _one_perturbed(cid: str, clean, perturbed, outcome, theta=None) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if perturbed is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under perturbed "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = _log_int(perturbed["log"], "poisoned")
    if count == 0:
        return [Check(cid, Status.SKIP, "no ADI-operator solve to perturb (see audit.causal)")]
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
    weak = _not_evidence(cid, count, "the field changed", perturbed["log"], theta)
    if weak is not None:
        return [weak]
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


def _one_audit(cid: str, clean, poisoned, outcome, theta=None) -> list:
    import numpy as np
    if clean is None or clean["status"] != "ok":
        return [Check(cid, Status.SKIP, "no clean run to compare with")]
    if poisoned is None:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: the solver did not return under poisoned "
                      f"solves ({outcome.status}: {outcome.reason})")]
    count = _log_int(poisoned["log"], "poisoned")
    if count == 0:
        return [Check(cid, Status.REVIEW, "INCONCLUSIVE: no ADI-operator solve to poison "
                      "(hand-written solver, or only other systems solved?); manual review")]
    if poisoned["status"] != "ok":
        return [_not_evidence(cid, count, "solve() raised", poisoned["log"], theta) or
                Check(cid, Status.PASS, f"{count} solve(s) poisoned: solve() raised "
                      f"({poisoned['error'][:80]}): the observed solves feed the result")]
    U = poisoned["U"]
    if not np.all(np.isfinite(U)):
        return [_not_evidence(cid, count, "the field became non-finite", poisoned["log"], theta) or
                Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field became non-finite")]
    diff = float(np.max(np.abs(U - clean["U"])))
    if diff <= SPEC["audit_atol"]:
        return [Check(cid, Status.FAIL, f"{count} solve(s) poisoned with NaN, yet the returned field is "
                      f"finite and unchanged (max |diff| {diff:.1e} <= {SPEC['audit_atol']:g}, rtol 0): "
                      "the observed solves do not produce the result", diff, SPEC["audit_atol"])]
    return [_not_evidence(cid, count, "the field changed", poisoned["log"], theta) or
            Check(cid, Status.PASS, f"{count} solve(s) poisoned: the field changed (max |diff| "
                  f"{diff:.2e})", diff, SPEC["audit_atol"])]


def _log_int(log, key: str) -> int:
    v = log.get(key, 0) if isinstance(log, dict) else 0
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else 0


def _theta_items(log) -> list:
    """[(theta_x, theta_y, count)] of a run's ADI-operator solves (decoded defensively)."""
    items = []
    thetas = log.get("thetas") if isinstance(log, dict) else None
    for key, cnt in (thetas.items() if isinstance(thetas, dict) else ()):
        try:
            tx, ty = (float(v) for v in str(key).split("|"))
            cnt = int(cnt)
        except (TypeError, ValueError):
            continue
        if math.isfinite(tx) and math.isfinite(ty) and cnt > 0:
            items.append((tx, ty, cnt))
    return items


def _matches(items, theta, both: bool = False) -> int:
    """Solves whose implied theta (for kappa = a or c) is `theta`; with `both`, zero unless
    some of them are x-line and some y-line operators (an ADI step solves in both directions;
    one system whose theta happens to match at two meshes, e.g. r h / a = r (h/2) / c on the
    benchmark where a = 2c, does not)."""
    rtol = SPEC["adi_theta_rtol"]
    close = lambda v: abs(v - theta) <= rtol * theta     # noqa: E731
    n = sum(c for tx, ty, c in items if close(tx) or close(ty))
    if both and not (any(close(tx) for tx, _, _ in items) and any(close(ty) for _, ty, _ in items)):
        return 0
    return n


def _clean_runs(jobs: dict) -> list:
    """The benchmark and hidden runs (not the audits, the interface check or the repeat), in plan order."""
    return [t for t in sorted(jobs, key=tag_order)
            if not t.startswith(("audit", "perturb", "iface", "repeat", "witness"))]


def submission_theta(jobs: dict):
    """The submission's own theta: the value > 0 (for kappa = a or c) shared by the ADI-shaped
    solves of the most clean runs (then of the most solves).  A theta that changes with the mesh
    or the problem (an unrelated tridiagonal system, e.g. tridiag(-1, 4, -1)) is not the scheme's."""
    per_run = [_theta_items(jobs[t].get("log")) for t in _clean_runs(jobs)]
    best = ((0, 0), None)
    for cand in sorted({v for items in per_run for tx, ty, _ in items for v in (tx, ty) if v > 0}):
        hits = [_matches(items, cand, both=True) for items in per_run]
        score = (sum(1 for n in hits if n), sum(hits))
        if score > best[0]:
            best = (score, cand)
    return best[1]


def adi_counted(log, theta, both: bool = True) -> int:
    """Counted solves of one run: those whose matrix is the ADI operator I - theta k kappa D2
    (kappa = a or c of the problem solved) for the submission's theta, x- and y-line operators
    both present (`both`; an audited run, cut short by its poison, needs one); the rest are
    not evidence."""
    return _matches(_theta_items(log), theta, both) if theta is not None else 0


_TAG_ORDER = ("import", "bench", "hidden", "audit", "auditbench", "perturb", "perturbbench", "iface", "repeat",
              "witness")


def tag_order(tag: str) -> tuple:
    """A fixed order of job tags (plan order, not the random run order): stable reports."""
    kind, _, v = str(tag).partition(":")
    rank = _TAG_ORDER.index(kind) if kind in _TAG_ORDER else len(_TAG_ORDER)
    try:
        num = int(v) if kind == "bench" else -float(v)
    except ValueError:
        num = 0
    return rank, num, str(tag)


def structure_checks(jobs: dict, violations: list, ready: dict) -> list:
    """Dimension <= 2(m+1) and half-bandwidth <= 1 for every observed solve (nested ones:
    the dimension), no problem-sized transform / eigen-decomposition / matrix function;
    per-mesh REVIEW when a mesh shows no solve that is an ADI operator of its problem."""
    out = []
    tamper = sorted((v for v in violations if v.get("kind") == "tamper"), key=lambda v: tag_order(v.get("job")))
    if tamper:
        what = sorted({str(w) for v in tamper for w in (v.get("what") or [])})
        out.append(Check("structure.instrumentation", Status.FAIL,
                         f"the submission altered the grader's instrumentation ({_job_label(str(tamper[0].get('job')))}"
                         f": {', '.join(what[:5])})", what))
    lim_of = lambda v: SPEC["dim_factor"] * (v["m"] + 1)   # noqa: E731
    violations_ = violations
    violations = [v for v in violations_ if v.get("kind", "violation") == "violation"]
    sized = [v for v in violations if isinstance(v.get("dim"), int) and isinstance(v.get("m"), int)
             and v["dim"] > lim_of(v)]
    dims = [v for v in sized if v.get("route", "solve") != "spectral"]
    routes = [v for v in sized if v.get("route") == "spectral"]
    wide = [v for v in violations if isinstance(v.get("hb"), int) and v["hb"] > SPEC["max_half_bandwidth"]
            and v.get("route", "solve") != "spectral" and not v.get("nested")]

    def first(offences):    # the coarsest mesh's: the report must not depend on the random run order
        return min(offences, key=lambda v: (v["m"] if isinstance(v.get("m"), int) else 0,
                                            tag_order(str(v.get("job"))), str(v.get("fn"))))

    if dims:    # the first offence is reported, with how many runs offended
        v = first(dims)
        runs = len({str(w["job"]) for w in dims})
        lim = lim_of(v)
        where = " (nested inside another call)" if v.get("nested") else ""
        out.append(Check("structure.dimension", Status.FAIL,
                         f"{v['fn']} solved a system of dimension {v['dim']} on the m = {v['m']} grid "
                         f"({_job_label(str(v['job']))}){where}; limit {SPEC['dim_factor']}(m+1) = {lim}: "
                         f"not a 1-D sweep ({runs} run(s) offend)", v["dim"], lim))
    if routes:
        v = first(routes)
        runs = len({str(w["job"]) for w in routes})
        lim = lim_of(v)
        out.append(Check("structure.monolithic_route", Status.FAIL,
                         f"{v['fn']} worked on {v['dim']} unknowns at once on the m = {v['m']} grid "
                         f"({_job_label(str(v['job']))}); limit {SPEC['dim_factor']}(m+1) = {lim}: a "
                         "problem-sized transform, eigen-decomposition or matrix function is a "
                         f"monolithic 2-D solve ({runs} run(s) offend)", v["dim"], lim))
    if wide:
        v = first(wide)
        runs = len({str(w["job"]) for w in wide})
        out.append(Check("structure.bandwidth", Status.FAIL,
                         f"{v['fn']} solved a system of half-bandwidth {v['hb']} (dimension {v['dim']}, "
                         f"{_job_label(str(v['job']))}); limit {SPEC['max_half_bandwidth']}: not "
                         f"tridiagonal ({runs} run(s) offend)", v["hb"], SPEC["max_half_bandwidth"]))
    out += recorder_checks(jobs, violations_)
    done = {t: jobs[t] for t in _clean_runs(jobs)}
    total = sum(_log_int(r["log"], "count") for r in done.values())
    nested = sum(_log_int(r["log"], "nested") for r in done.values())
    if not dims:
        mx = max([_log_int(r["log"], "max_dim") for r in done.values()] or [0])
        out.append(Check("structure.dimension", Status.PASS,
                         f"{total} observed solves (+{nested} nested inside them), largest dimension {mx} "
                         f"(<= {SPEC['dim_factor']}(m+1) on every mesh)"))
    if not wide:
        mx = max([_log_int(r["log"], "max_hb") for r in done.values()] or [0])
        out.append(Check("structure.bandwidth", Status.PASS, f"largest observed half-bandwidth {mx}"))
    unknown = sum(_log_int(r["log"], "unknown_hb") for r in done.values())
    if unknown:
        out.append(Check("structure.unknown_bandwidth", Status.REVIEW,
                         f"{unknown} solve(s) whose half-bandwidth could not be measured"))
    used = {}
    for t in sorted(jobs, key=tag_order):
        rt = jobs[t]["log"].get("routes") if isinstance(jobs[t]["log"], dict) else None
        for fn, slot in (rt.items() if isinstance(rt, dict) else ()):
            if isinstance(slot, list) and len(slot) >= 3 and slot[2] and fn not in used:
                used[fn] = _job_label(t)
    if used and not routes:
        out.append(Check("structure.spectral_route", Status.REVIEW,
                         "transform / eigen-decomposition / matrix-function route(s) used, which an ADI "
                         "solver does not need and which can carry an implicit solve the solve audit "
                         "does not see: " + ", ".join(f"{fn} ({w})" for fn, w in sorted(used.items())[:6])
                         + "; manual review", sorted(used)))
    theta = submission_theta(jobs)
    counted = {t: adi_counted(r["log"], theta) for t, r in done.items()}
    seen = [t for t in done if counted[t] > 0]
    blind = [t for t in done if counted[t] == 0]
    for t in blind:
        name = _job_label(t)
        n = _log_int(done[t]["log"], "count")
        what = (f"{n} observed solve(s), none an ADI operator I - theta k kappa D2 of this problem along "
                "grid lines with the theta of the other runs (an identity or unrelated system is not "
                "evidence)" if n else
                "zero observable solves")
        if seen:
            msg = (f"{name}: {what} while {', '.join(_job_label(s) for s in seen)} made "
                   "some: the hybrid-evasion pattern (instrumented path on some meshes, an "
                   "uninstrumented one on others); manual review")
        else:
            msg = f"{name}: {what} (hand-written Thomas solver?); manual review"
        out.append(Check(f"structure.unobserved[{name}]", Status.REVIEW, msg))
    if seen:
        ncount = sum(counted.values())
        out.append(Check("structure.adi_operator", Status.PASS if not blind else Status.INFO,
                         f"{ncount} of {total} observed solves are ADI operators I - theta k kappa D2 of "
                         f"the problem solved, theta = {theta:.6g} on every mesh and both problems; the "
                         "causal audits poison only ADI-operator solves", theta, ncount))
    return out


def _first_event(violations: list, kind: str):
    evs = [v for v in violations if v.get("kind") == kind]
    return (min(evs, key=lambda v: (tag_order(str(v.get("job"))), str(v.get("fn")))), len(evs)) if evs else (None, 0)


def recorder_checks(jobs: dict, violations: list) -> list:
    """What the in-process recorder proved about each recorded call: the operands were the
    recorder's own (an operand it cannot own is a FAIL), every factor was used with the content
    it was produced with, and every recorded solve satisfies its own recorded system to
    round-off (a library that computed anything else is a FAIL naming the call)."""
    out = []
    v, n = _first_event(violations, "unreadable")
    if v is not None:
        out.append(Check("structure.operand", Status.FAIL,
                         f"{v.get('fn')} was handed an operand the recorder cannot own ({str(v.get('why'))[:120]}; "
                         f"{_job_label(str(v.get('job')))}): the call was refused ({n} call site(s))"))
    v, n = _first_event(violations, "factor")
    if v is not None:
        out.append(Check("structure.factor_changed", Status.FAIL,
                         f"{v.get('fn')} was handed a factor whose content changed after the observed "
                         f"factorisation produced it ({_job_label(str(v.get('job')))}; {n} call site(s)): "
                         "what is solved is no longer what was recorded"))
    v, n = _first_event(violations, "residual")
    lim = SPEC["resid_rtol"]
    if v is not None:
        ratio = v.get("ratio")
        out.append(Check("structure.solve_residual", Status.FAIL,
                         f"{v.get('fn')} returned a result that does not solve the system the recorder recorded "
                         f"(|A x - b| / (|A| |x| + |b|) = {ratio if isinstance(ratio, (int, float)) else float('nan'):.1e}"
                         f" > {v.get('limit')}; {_job_label(str(v.get('job')))}; {n} call site(s)): the "
                         "library computed something other than what it was shown", ratio, v.get("limit")))
    else:
        runs = [jobs[t]["log"] for t in sorted(jobs, key=tag_order)]
        checked = sum(_log_int(lg, "checked") for lg in runs)
        worst = max([float(lg["max_resid"]) for lg in runs if isinstance(lg.get("max_resid"), (int, float))
                     and math.isfinite(lg["max_resid"])] or [0.0])
        if checked:
            out.append(Check("structure.solve_residual", Status.PASS,
                             f"{checked} recorded solves checked against their own recorded operands: worst "
                             f"|A x - b| / (|A| |x| + |b|) = {worst:.1e} (limit {lim:g})", worst, lim))
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
# numpy.linalg, scipy.linalg, scipy.linalg.lapack/blas and scipy.sparse.linalg,
# and every route that can do a 2-D implicit solve without a banded system
# (numpy.fft / scipy.fft / scipy.fftpack transforms including DST/DCT,
# eigen-decompositions, QR, matrix functions, sparse eigensolvers and
# expm_multiply), BEFORE the submission is imported, replacing each original by
# identity in every loaded module (so `from scipy.linalg.lapack import dgtsv`
# gets the wrapper).  Every call is recorded, in every thread (per-thread
# nesting depth, one lock for the log): a call made while another wrapped call
# of the same thread runs is recorded as NESTED when its caller is NumPy/SciPy
# code (solve_banded calling LAPACK: counted once, dimension rule still
# applied), and as a solve of its own when its caller is the submission (a
# callback of an iterative solver, a LinearOperator's matvec).  Each solve's
# matrix is classified: a direct sum of 1-D operators I - r D2 on grid lines of
# m - 1 nodes (any scalar factor, r > 0) is an ADI operator, reported with the
# theta it implies for the x and y coefficients; factor-consuming calls inherit
# the class of the factorisation that made their factor.  Violations stream as
# they happen; in poison mode the result of every ADI-operator solve (never a
# factorisation, never another system) is replaced by NaNs or scaled by
# 1 + O(perturb_rel) (the causal audits); after each job the driver checks that
# no wrapper was removed.
# =============================================================================
DRIVER_BODY = r'''
import base64 as _b64, builtins as _builtins, inspect as _inspect, threading as _threading, time as _time
__builtins__ = dict(_builtins.__dict__)    # the functions below look builtins up here: a submission
#                                            reassigning builtins.max (or any) changes nothing they see
_SUBDIR = _sys.path.pop(0)             # numpy/scipy must not be shadowed by submission files
import numpy as _np
import numpy.fft as _npfft
import numpy.linalg as _npl
import scipy as _scipy
import scipy.fft as _sfft
import scipy.fftpack as _fftpack
import scipy.optimize as _sopt
import scipy.linalg as _sla
import scipy.linalg.lapack as _lapack
import scipy.linalg.blas as _blas
import scipy.sparse as _sp
import scipy.sparse.linalg as _spl
try:
    import numpy.linalg._umath_linalg as _uml
except Exception:
    _uml = None

_S = {"poison": False, "job": "import", "m": None, "log": None, "seen": set(), "kappa": None,
      "h2k": None}
_TL = _threading.local()                # per-thread nesting depth
_LOCK = _threading.RLock()              # the log, the violation set, the perturbation stream
_LIBDIRS = tuple(_os.path.dirname(m.__file__) + _os.sep for m in (_np, _scipy))
_BW_CAP = 4096                          # materialise at most this dimension to measure a bandwidth

# -- references captured before any submitted code runs ------------------------------------
# The recorder reads operands only through these: C-level numpy callables (ufuncs and
# multiarray builtins), methods of numpy's own immutable ndarray type, and descriptors taken
# from the library classes now.  Reassigning numpy/scipy module or class attributes later
# changes nothing the recorder sees (it may change what the library computes: every
# recorded solve is then checked against its own recorded operands, _check_solve).
_nd = _np.ndarray
_A = _np.array
_Z = _np.zeros
_CAT = _np.concatenate
_CPT = _np.copyto
_ARANGE = _np.arange
_MM = _np.matmul
_ABS = _np.absolute
_MAXR = _np.maximum.reduce
_ADDR = _np.add.reduce
_ORR = _np.logical_or.reduce
_ANDR = _np.logical_and.reduce
_ISF = _np.isfinite
_NE = _np.not_equal
_ADD_AT = _np.add.at
_WHERE = _np.where
_F8 = _np.dtype("float64")
_INTS = (int, _np.int64, _np.int32, _np.intp)
_INTP = _np.intp
_getframe = _sys._getframe
_issub = issubclass
_type = type
_len = len
_callable = callable
_b64encode = _b64.b64encode
_dumps = _json.dumps
_loads = _json.loads
import hashlib as _hashlib, weakref as _weakref
_blake = _hashlib.blake2b
_wref = _weakref.ref
_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None), _np.float64, _np.float32,
                      _np.float16, _np.complex128, _np.complex64, _np.int64, _np.int32, _np.int16,
                      _np.int8, _np.uint64, _np.uint32, _np.uint16, _np.uint8, _np.bool_,
                      _np.longdouble, _np.clongdouble})
_SPBASE = _sp._base._spbase
_SPARRAY = getattr(_sp, "sparray", None)
_SPFMT = {}                             # exact scipy sparse class -> its format
for _c in (_sp.csr_matrix, _sp.csc_matrix, _sp.coo_matrix, _sp.dia_matrix, _sp.bsr_matrix, _sp.lil_matrix,
           _sp.dok_matrix, *(getattr(_sp, n + "_array") for n in ("csr", "csc", "coo", "dia", "bsr", "lil", "dok")
                            if hasattr(_sp, n + "_array"))):
    _SPFMT[_c] = _c.__name__[:3]
_MAKE_SP = {(fmt, _SPARRAY is not None and _issub(c, _SPARRAY)): c for c, fmt in _SPFMT.items()
            if fmt in ("csr", "csc")}
_SPDICT = None                          # the instance-__dict__ descriptor of the sparse classes
for _c in _SPBASE.__mro__ + _sp.csr_matrix.__mro__:
    if _SPDICT is None and "__dict__" in _c.__dict__:
        _SPDICT = _c.__dict__["__dict__"]
_SPDICT_GET = type(_SPDICT).__get__
_LINOP = _spl.LinearOperator
_LINOP_MATMAT = _spl.LinearOperator.matmat
_LINOP_DICT = None
for _c in _LINOP.__mro__:
    if _LINOP_DICT is None and "__dict__" in _c.__dict__:
        _LINOP_DICT = _c.__dict__["__dict__"]
_LINOP_DICT_GET = type(_LINOP_DICT).__get__
_SPVIEW = {}                            # id(owned sparse object) -> (object, row, col, val, n_rows, n_cols)


class _Unreadable(Exception):
    """An operand the recorder cannot own without asking the object itself."""


def _arr(x):
    """An owned operand as an ndarray (plain data only: an exact ndarray, a scalar, or a
    list/tuple the recorder built from owned values)."""
    return x if _type(x) is _nd else _A(x)


def _anyv(a):
    a = _arr(a)
    return bool(a.size) and bool(_ORR(_NE(a, 0), axis=None))


def _eye(n):
    z = _Z((n, n))
    z.reshape(-1)[::n + 1] = 1.0
    return z


def _tri_mask(n, k, upper):
    i = _ARANGE(n).reshape(n, 1)
    j = _ARANGE(n).reshape(1, n)
    return (j - i >= k) if upper else (j - i <= k)


def _own_sparse(x):
    """An exact copy of a scipy sparse matrix/array (its class or any subclass), read from the
    instance's own storage through a descriptor captured at driver start (never a method of
    the object or its class); the recorder's view is the (row, col, val) triple computed here
    and the library gets a fresh exact csr/csc object built from that triple."""
    fmt = None
    for c in _type(x).__mro__:
        if c in _SPFMT:
            fmt = _SPFMT[c]
            break
    d = _SPDICT_GET(_SPDICT, x, _type(x))
    if _type(d) is not dict or fmt not in ("csr", "csc", "coo", "dia"):
        raise _Unreadable(f"sparse format {fmt} (convert to csr/csc/coo/dia)")
    shape = _own(d.get("_shape"))
    if (_type(shape) is not tuple or _len(shape) != 2 or any(_type(v) not in _INTS
                                                             for v in shape)):
        raise _Unreadable("sparse shape")
    nr, nc = int(shape[0]), int(shape[1])
    data = _own(d.get("data"))
    if fmt in ("csr", "csc"):
        ind, ptr = _own(d.get("indices")), _own(d.get("indptr"))
        if not (_type(data) is _nd and _type(ind) is _nd and _type(ptr) is _nd and data.ndim == 1
                and ind.shape == data.shape and ptr.ndim == 1 and ptr.size == (nr if fmt == "csr" else nc) + 1):
            raise _Unreadable("sparse storage")
        cnt = ptr[1:] - ptr[:-1]
        if _anyv(cnt < 0) or int(ptr[-1]) != data.size or int(ptr[0]) != 0:
            raise _Unreadable("sparse index pointer")
        major = _ARANGE(cnt.size).repeat(cnt)
        row, col = (major, ind) if fmt == "csr" else (ind, major)
    elif fmt == "coo":
        coords = _own(d.get("coords"))
        if coords is None:
            coords = (_own(d.get("row")), _own(d.get("col")))
        if not (_type(coords) is tuple and _len(coords) == 2 and all(_type(v) is _nd for v in coords)
                and _type(data) is _nd and coords[0].shape == data.shape == coords[1].shape):
            raise _Unreadable("sparse storage")
        row, col = coords
    else:   # dia: data (ndiag, L), offsets (ndiag,)
        off = _own(d.get("offsets"))
        if not (_type(data) is _nd and _type(off) is _nd and data.ndim == 2 and off.ndim == 1
                and off.size == data.shape[0]):
            raise _Unreadable("sparse storage")
        rows, cols, vals = [], [], []
        for q in range(off.size):
            k = int(off[q])
            j = _ARANGE(max(0, k), min(nc, nr + k, data.shape[1]))
            rows.append(j - k)
            cols.append(j)
            vals.append(data[q, j])
        row = _CAT(rows) if rows else _Z(0, dtype=int)
        col = _CAT(cols) if cols else _Z(0, dtype=int)
        data = _CAT(vals) if vals else _Z(0)
    row, col = row.astype(_INTP), col.astype(_INTP)
    if row.size and (int(_MAXR(row)) >= nr or int(_MAXR(col)) >= nc or bool(_ORR(row < 0)) or bool(_ORR(col < 0))):
        raise _Unreadable("sparse index out of range")
    is_array = _SPARRAY is not None and _issub(_type(x), _SPARRAY)
    cls = _MAKE_SP[("csc" if fmt == "csc" else "csr", is_array)]
    obj = cls((data.copy(), (row.copy(), col.copy())), shape=(nr, nc))
    with _LOCK:
        if _len(_SPVIEW) > 64:          # a view is read within the call that made it
            _SPVIEW.clear()
        _SPVIEW[id(obj)] = (obj, row, col, data, nr, nc)
    return obj


def _spview(x):
    v = _SPVIEW.get(id(x))
    return v if v is not None and v[0] is x else None


def _own_linop(x):
    """A LinearOperator materialised by the recorder (its columns, from its own matmat on
    the identity): the materialisation is recorded and is what the library solves."""
    d = _LINOP_DICT_GET(_LINOP_DICT, x, _type(x))
    shape = _own(d.get("shape")) if _type(d) is dict else None
    if (_type(shape) is not tuple or _len(shape) != 2 or any(_type(v) not in _INTS
                                                             for v in shape)):
        raise _Unreadable("LinearOperator shape")
    nr, nc = int(shape[0]), int(shape[1])
    if nr > _BW_CAP or nc > _BW_CAP:
        raise _Unreadable(f"LinearOperator of size {nr}x{nc} (larger than {_BW_CAP}: cannot be materialised)")
    M = _own(_LINOP_MATMAT(x, _eye(nc)))
    if _type(M) is not _nd:
        M = _own_plain_array(M)
    if M.shape != (nr, nc):
        raise _Unreadable("LinearOperator materialisation of the wrong shape")
    return M


def _own_plain_array(x):
    if _issub(_type(x), _nd):      # a subclass (np.matrix, ...): its raw buffer, no method of it
        out = _A(x, copy=True, subok=False)
        if _type(out) is not _nd or out.dtype.hasobject:
            raise _Unreadable("array subclass")
        return out
    raise _Unreadable(f"operand of type {_type(x).__name__}")


def _own(x, depth=0):
    """The recorder's own plain copy of one operand, by exact type: what is recorded and
    what the library is handed are this same object."""
    t = _type(x)
    if t is _nd:
        if x.dtype.hasobject:
            raise _Unreadable("object array")
        return x.copy(order="K")
    if t in _SCALARS:
        return x
    if depth > 8:
        raise _Unreadable("nested too deeply")
    if t is tuple or t is list:
        if _len(x) > 100000:
            raise _Unreadable("sequence too long")
        return t([_own(v, depth + 1) for v in x])
    if t is dict:
        return {k: _own(v, depth + 1) for k, v in x.items() if _type(k) is str}
    if _issub(t, _nd):
        return _own_plain_array(x)
    if _issub(t, _SPBASE):
        return _own_sparse(x)
    if _issub(t, _LINOP):
        return _own_linop(x)
    if t is _SolverProxy:
        return x
    if _callable(x):            # a callback (a preconditioner function, ...): code, not an operand
        return x
    raise _Unreadable(f"operand of type {t.__name__}")


# -- binding arguments with the library function's own signature --------------------------
def _params_of(fn):
    """[(name, default)] in positional order, from the Python signature or, for an f2py
    LAPACK/BLAS wrapper, from its docstring (`x,info = dgtsv(dl,d,du,b,[overwrite_dl,...])`
    and its `Default: N` lines); None when neither is readable."""
    doc = getattr(fn, "__doc__", None)
    if _type(fn).__name__ == "fortran" and isinstance(doc, str):
        head = doc.strip().split("\n", 1)[0]
        if "(" not in head or "=" not in head:
            return None
        outs = [s.strip() for s in head.split("=", 1)[0].split(",")]
        inner = head[head.index("(") + 1:head.rindex(")")]
        req, _, opt = inner.partition("[")
        names = [s.strip() for s in req.split(",") if s.strip()]
        optn = [s.strip() for s in opt.rstrip("]").split(",") if s.strip()]
        defaults = {}
        lines = doc.split("\n")
        for i, line in enumerate(lines[:-1]):
            nm = line.split(":", 1)[0].strip()
            if nm in optn and lines[i + 1].strip().startswith("Default:"):
                v = lines[i + 1].strip()[len("Default:"):].strip()
                if v.lstrip("-").isdigit():
                    defaults[nm] = int(v)
        return ([(n, _NODEF) for n in names] + [(n, defaults.get(n, _NODEF)) for n in optn], outs)
    try:
        sig = _inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ps.append((p.name, _NODEF if p.default is p.empty else p.default))
    return (ps, None)


_NODEF = object()


def _bind(params, args, kwargs):
    """name -> value for every parameter (defaults filled); positional and keyword alike."""
    out = {}
    if params is None:
        return None
    names = params[0]
    if _len(args) > _len(names):
        return None
    for (nm, _), v in zip(names, args):
        out[nm] = v
    for k, v in kwargs.items():
        out[k] = v
    for nm, dv in names:
        if nm not in out and dv is not _NODEF:
            out[nm] = dv
    return out


def _arg(args, kwargs, i, name, default=None):
    if _len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _hb_dense(a):
    a = _arr(a)
    if a.ndim < 2 or a.size == 0:
        return 0
    n = a.shape[-1]
    if n > _BW_CAP or a.shape[-2] > _BW_CAP:
        return None
    nz = a.reshape((-1,) + a.shape[-2:]).nonzero()
    return int(_MAXR(_ABS(nz[1] - nz[2]))) if _len(nz[1]) else 0


def _hb_any(A):
    v = _spview(A)
    if v is not None:
        keep = _NE(v[3], 0)
        return int(_MAXR(_ABS(v[1][keep] - v[2][keep]))) if _anyv(keep) else 0
    return _hb_dense(A)


def _shape_of(A):
    v = _spview(A)
    if v is not None:
        return (v[4], v[5])
    return _arr(A).shape


def _x_dense(args, kwargs):                 # f(a, ...): a dense (..., n, n) matrix
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(a.shape[-1]) if a.ndim else 1, _hb_dense(a), False


def _x_trsm(args, kwargs):                  # blas trsm(alpha, a, b)
    a = _arr(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), _hb_dense(a), False


def _x_factor(args, kwargs):                # lu_solve((lu, piv), b), getrs(lu, piv, b), potrs(c, b)
    f = _arg(args, kwargs, 0, "lu_and_piv")
    if isinstance(f, tuple):
        f = f[0]
    f = _arr(f)
    return int(f.shape[-1]), None, True    # bandwidth was checked at the factorisation


def _x_banded(args, kwargs):                # solve_banded((l, u), ab, b)
    lu = _arg(args, kwargs, 0, "l_and_u")
    ab = _arr(_arg(args, kwargs, 1, "ab"))
    u = int(lu[1])
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), max([abs(r - u) for r in rows] or [0]), False


def _x_hbanded(args, kwargs, lower_pos=4):  # solveh_banded(ab, b, ow_ab, ow_b, lower)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    lower = bool(_arg(args, kwargs, lower_pos, "lower", False))
    u = ab.shape[0] - 1
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), max([(r if lower else u - r) for r in rows] or [0]), False


def _x_cholbanded(args, kwargs):            # cholesky_banded(ab, overwrite_ab, lower)
    return _x_hbanded(args, kwargs, lower_pos=2)


def _x_chobanded(args, kwargs):             # cho_solve_banded((cb, lower), b)
    cb = _arr(_arg(args, kwargs, 0, "cb_and_lower")[0])
    return int(cb.shape[-1]), int(cb.shape[0] - 1), False


def _x_tri(args, kwargs):                   # gtsv(dl, d, du, b), gttrf(dl, d, du)
    d = _arr(_arg(args, kwargs, 1, "d"))
    return int(d.shape[0]), 1, False


def _x_tri0(args, kwargs):                  # ptsv(d, e, b), pttrf(d, e), pttrs(d, e, b)
    d = _arr(_arg(args, kwargs, 0, "d"))
    return int(d.shape[0]), 1, False


def _x_gbsv(args, kwargs):                  # gbsv(kl, ku, ab, b)
    ab = _arr(_arg(args, kwargs, 2, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 0, "kl")), int(_arg(args, kwargs, 1, "ku"))), False


def _x_gbtrf(args, kwargs):                 # gbtrf(ab, kl, ku), gbtrs(ab, kl, ku, b, ipiv)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), max(int(_arg(args, kwargs, 1, "kl")), int(_arg(args, kwargs, 2, "ku"))), False


def _x_pb(args, kwargs):                    # pbsv(ab, b), pbtrf(ab), pbtrs(ab, b)
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    return int(ab.shape[-1]), int(ab.shape[0] - 1), False


def _x_tbsv(args, kwargs):                  # blas tbsv(k, a, x)
    a = _arr(_arg(args, kwargs, 1, "a"))
    return int(a.shape[-1]), int(_arg(args, kwargs, 0, "k")), False


def _x_n0(args, kwargs):                    # ppsv(n, ap, b), pftrs(n, a, b), blas tpsv(n, ap, x): packed
    return int(_arg(args, kwargs, 0, "n")), None, False     # storage (bandwidth not measured)


def _x_tbtrs(args, kwargs):                 # tbtrs(ab, b): a banded triangular solve
    ab = _arr(_arg(args, kwargs, 0, "ab"))
    rows = [r for r in range(ab.shape[0]) if _anyv(ab[r] != 0)]
    return int(ab.shape[-1]), (max(rows) - min(rows) if rows else 0), False


def _x_trsyl(args, kwargs):                 # trsyl(a, b, c), tgsyl(a, b, c, ...): a 2-D solve of size c.size
    return int(_arr(_arg(args, kwargs, 2, "c")).size), int(_arr(_arg(args, kwargs, 0, "a")).shape[0]), False


def _x_sparse(args, kwargs):                # spsolve(A, b), splu(A), cg(A, b), ...
    A = _arg(args, kwargs, 0, "A")
    return int(_shape_of(A)[0]), _hb_any(A), False


def _x_sylvester(args, kwargs):             # solve_sylvester(a, b, q): a 2-D solve of size q.size
    q = _arr(_arg(args, kwargs, 2, "q"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_lyap(args, kwargs):                  # solve_{continuous,discrete}_lyapunov(a, q)
    q = _arr(_arg(args, kwargs, 1, "q"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(q.size), int(a.shape[0]), False


def _x_tensor(args, kwargs):                # numpy tensorsolve(a, b)
    b = _arr(_arg(args, kwargs, 1, "b"))
    a = _arr(_arg(args, kwargs, 0, "a"))
    n = int(b.size)
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_tensorinv(args, kwargs):
    a = _arr(_arg(args, kwargs, 0, "a"))
    ind = int(_arg(args, kwargs, 1, "ind", 2))
    n = _prod(a.shape[:ind])
    return n, (_hb_dense(a.reshape(n, -1)) if n <= _BW_CAP else None), False


def _x_toeplitz(args, kwargs):              # solve_toeplitz(c_or_cr, b)
    c = _arg(args, kwargs, 0, "c_or_cr")
    parts = [_arr(p).ravel() for p in (c if isinstance(c, tuple) else (c,))]
    hb = max([int(_flatnz(p[1:] != 0).max()) + 1 if _anyv(p[1:] != 0) else 0 for p in parts])
    return int(parts[0].size), hb, False


def _x_circulant(args, kwargs):             # solve_circulant(c, b)
    c = _arr(_arg(args, kwargs, 0, "c")).ravel()
    return int(c.size), (int(c.size - 1) if _anyv(c[1:] != 0) else 0), False


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
                 "potrs": _x_factor, "potri": _x_factor, "sytrs": _x_factor, "sytri": _x_factor,
                 "gtsvx": _x_tri, "ptsvx": _x_tri0, "tbtrs": _x_tbtrs, "trsyl": _x_trsyl, "tgsyl": _x_trsyl,
                 **{b: _x_n0 for b in ("ppsv", "pptrf", "pptrs", "pptri", "pftrf", "pftrs", "pftri")}}
for _b in ("gesv", "getrf", "posv", "potrf", "sysv", "sytrf", "hesv", "hetrf", "gels", "gelsd",
           "gelss", "gelsy", "trtrs", "gesvx", "posvx", "sysvx", "getc2", "gesc2", "pstrf", "trtri", "gglse"):
    _LAPACK_BASES[_b] = _x_dense
_ENTRY.append((_lapack, "scipy.linalg.lapack", {p + b: x for b, x in _LAPACK_BASES.items()
                                                for p in "sdcz"}))
_ENTRY.append((_blas, "scipy.linalg.blas", {**{p + "trsv": _x_dense for p in "sdcz"},
                                            **{p + "trsm": _x_trsm for p in "sdcz"},
                                            **{p + "tbsv": _x_tbsv for p in "sdcz"},
                                            **{p + "tpsv": _x_n0 for p in "sdcz"}}))


def _x_are(args, kwargs):                   # solve_{continuous,discrete}_are(a, b, q, r): X is n x n
    a = _arr(_arg(args, kwargs, 0, "a"))
    return int(a.shape[0]) ** 2, int(a.shape[0]), False


for _m, _mn, _t in _ENTRY:
    if _m is _sla:
        _t.update({"solve_continuous_are": _x_are, "solve_discrete_are": _x_are})

# Routes that can do a 2-D implicit solve without a banded system: extractors
# return (dimension, whether the result can reconstruct an operator).  The
# dimension of a transform is the product of its lengths along the transformed
# axes (a batch of 1-D transforms along lines has dimension m - 1).


def _ax_dim(a, s, axes, nd):
    a = _arr(a)
    if s is not None:
        return _prod(s if _type(s) in (tuple, list) else [s])
    if axes is None:
        axes = range(a.ndim) if nd is None else range(-nd, 0)
    return _prod([a.shape[int(v)] for v in (axes if _type(axes) in (tuple, list, range) else [axes])]) if a.ndim else 1


def _t_fft1(args, kwargs):                  # fft(x, n=None, axis=-1)
    n = _arg(args, kwargs, 1, "n")
    return (int(n) if n is not None else _ax_dim(_arg(args, kwargs, 0, "x", kwargs.get("a")), None,
                                                 [_arg(args, kwargs, 2, "axis", -1)], 1)), True


def _t_trig1(args, kwargs):                 # dct(x, type=2, n=None, axis=-1)
    n = _arg(args, kwargs, 2, "n")
    return (int(n) if n is not None else _ax_dim(_arg(args, kwargs, 0, "x"), None,
                                                 [_arg(args, kwargs, 3, "axis", -1)], 1)), True


def _t_fftn(nd):                            # fft2(x, s, axes) / fftn(x, s, axes)
    def x(args, kwargs):
        s = _arg(args, kwargs, 1, "s", kwargs.get("shape"))
        return _ax_dim(_arg(args, kwargs, 0, "x", kwargs.get("a")), s, _arg(args, kwargs, 2, "axes"), nd), True
    return x


def _t_trign(args, kwargs):                 # dctn(x, type, s, axes)
    s = _arg(args, kwargs, 2, "s", kwargs.get("shape"))
    return _ax_dim(_arg(args, kwargs, 0, "x"), s, _arg(args, kwargs, 3, "axes"), None), True


def _m_dense(vectors=True, flag=None, invert=False):
    """A matrix route on args[0]; `flag` names the keyword that switches vectors off/on."""
    def x(args, kwargs):
        a = _arr(_arg(args, kwargs, 0, "a"))
        v = vectors
        if flag is not None and flag in kwargs:
            v = bool(kwargs[flag]) != invert
        return (int(a.shape[-1]) if a.ndim else 1), v
    return x


def _m_len(args, kwargs):                   # eigh_tridiagonal(d, e)
    return int(_arr(_arg(args, kwargs, 0, "d")).shape[-1]), not kwargs.get("eigvals_only", False)


def _m_op(args, kwargs):                    # sparse eigs(A), expm(A), expm_multiply(A, B)
    A = _arg(args, kwargs, 0, "A")
    return int(_shape_of(A)[0]), True


def _o_x0(args, kwargs):                    # fsolve(func, x0), root(fun, x0), newton_krylov(F, xin)
    x0 = _arg(args, kwargs, 1, "x0", kwargs.get("xin"))
    return int(_arr(x0).size), True


def _o_lin(args, kwargs):                   # lsq_linear(A, b), nnls(A, b)
    return int(_shape_of(_arg(args, kwargs, 0, "A"))[1]), True


_FFT1 = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_FFT2 = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
_FFTN = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
_TRIG1 = ("dct", "idct", "dst", "idst")
_TRIGN = ("dctn", "idctn", "dstn", "idstn")
_ROUTES = [
    (_npfft, "numpy.fft", {**{n: _t_fft1 for n in _FFT1}, **{n: _t_fftn(2) for n in _FFT2},
                           **{n: _t_fftn(None) for n in _FFTN}}),
    (_sfft, "scipy.fft", {**{n: _t_fft1 for n in _FFT1}, **{n: _t_fftn(2) for n in _FFT2},
                          **{n: _t_fftn(None) for n in _FFTN}, **{n: _t_trig1 for n in _TRIG1},
                          **{n: _t_trign for n in _TRIGN}}),
    (_fftpack, "scipy.fftpack", {**{n: _t_fft1 for n in ("fft", "ifft", "rfft", "irfft")},
                                 **{n: _t_fftn(2) for n in ("fft2", "ifft2")},
                                 **{n: _t_fftn(None) for n in ("fftn", "ifftn")},
                                 **{n: _t_trig1 for n in _TRIG1}, **{n: _t_trign for n in _TRIGN}}),
    (_npl, "numpy.linalg", {"eig": _m_dense(), "eigh": _m_dense(), "eigvals": _m_dense(False),
                            "eigvalsh": _m_dense(False), "svd": _m_dense(True, "compute_uv"),
                            "svdvals": _m_dense(False), "qr": _m_dense()}),
    (_sla, "scipy.linalg", {"eig": _m_dense(), "eigh": _m_dense(True, "eigvals_only", True),
                            "eigvals": _m_dense(False), "eigvalsh": _m_dense(False),
                            "eig_banded": _m_dense(True, "eigvals_only", True),
                            "eigvals_banded": _m_dense(False), "eigh_tridiagonal": _m_len,
                            "eigvalsh_tridiagonal": _m_len, "svd": _m_dense(True, "compute_uv"),
                            "svdvals": _m_dense(False), "schur": _m_dense(), "qz": _m_dense(),
                            "ordqz": _m_dense(), "hessenberg": _m_dense(False, "calc_q"),
                            "qr": _m_dense(), "rq": _m_dense(), "qr_multiply": _m_dense(),
                            **{n: _m_dense() for n in ("expm", "logm", "sqrtm", "funm", "signm", "cosm",
                                                       "sinm", "tanm", "coshm", "sinhm", "tanhm",
                                                       "fractional_matrix_power", "expm_frechet")}}),
    (_spl, "scipy.sparse.linalg", {n: _m_op for n in ("eigs", "eigsh", "svds", "lobpcg", "expm",
                                                      "expm_multiply")}),
    # a 2-D implicit step is also a root / least-squares / minimisation problem
    (_sopt, "scipy.optimize", {**{n: _o_x0 for n in ("fsolve", "root", "least_squares", "leastsq", "minimize",
                                                     "newton_krylov", "anderson", "broyden1", "broyden2",
                                                     "diagbroyden", "excitingmixing", "linearmixing")},
                               "lsq_linear": _o_lin, "nnls": _o_lin}),
    (_lapack, "scipy.linalg.lapack", {p + n: _m_dense() for p in "sdcz" for n in (
        "syev", "syevd", "syevr", "syevx", "heev", "heevd", "heevr", "geev", "gesdd", "gesvd", "geqrf",
        "gees", "gges", "stev", "stevd", "stemr", "sbevd", "hbevd", "gejsv")}),
]
_FACTORISE = {"lu_factor", "cho_factor", "cholesky_banded", "getrf", "potrf", "gttrf", "pttrf", "gbtrf",
              "pbtrf", "lu", "cholesky", "ldl", "splu", "spilu", "factorized", "sytrf", "hetrf"}
_CONSUME = {"lu_solve", "cho_solve", "cho_solve_banded", "getrs", "getri", "potrs", "potri", "gttrs", "pttrs",
            "gbtrs", "pbtrs", "solve_triangular", "trtrs", "trsv", "trsm", "sytrs", "sytri"}
_TRIANGULAR = ("solve_triangular", "trtrs", "trsv", "trsm")
_OUTS = {}                              # wrapped name -> an f2py routine's output names


def _base(name):
    short = name.rsplit(".", 1)[-1]
    if name.startswith(("scipy.linalg.lapack.", "scipy.linalg.blas.")) and short[:1] in "sdcz":
        return short[1:]
    return short


def _send_violation(name, n, hb, nested=False, route="solve"):
    with _LOCK:
        key = (_S["job"], name, n, hb, nested)
        if key in _S["seen"] or len(_S["seen"]) >= 200:
            return
        _S["seen"].add(key)
    send({"kind": "violation", "job": _S["job"], "fn": name, "dim": n, "hb": hb, "m": _S["m"],
          "nested": nested, "route": route})


def _limit(m):
    return _REQ["dim_factor"] * (m + 1)


def _precheck(name, n, hb, nested=False):
    """A dimension or bandwidth offence is sent before the library runs (a hang inside it
    leaves the offence reported)."""
    m = _S["m"]
    if m is not None and ((n is not None and n > _limit(m)) or
                          (not nested and hb is not None and hb > _REQ["max_half_bandwidth"])):
        _send_violation(name, n, hb, nested)


def _record(name, n, hb, factor, nested, theta, chk=None, status=None):
    with _LOCK:
        log = _S["log"]
        if log is not None:
            if nested:
                log["nested"] += 1
                log["nested_fns"][name] = log["nested_fns"].get(name, 0) + 1
            else:
                log["count"] += 1
                log["fns"][name] = log["fns"].get(name, 0) + 1
                if n is not None:
                    log["max_dim"] = max(log["max_dim"], n)
                if hb is not None:
                    log["max_hb"] = max(log["max_hb"], hb)
                elif not factor:
                    log["unknown_hb"] += 1
                if chk is not None:
                    log["checked"] += 1
                    log["max_resid"] = max(log["max_resid"], float(chk[0]))
                if status == "foreign":
                    log["foreign"] += 1
                if theta is not None:
                    log["adi"] += 1
                    key = "%.10e|%.10e" % tuple(theta)
                    if key in log["thetas"] or len(log["thetas"]) < 64:
                        log["thetas"][key] = log["thetas"].get(key, 0) + 1
    if nested:
        _precheck(name, n, hb, True)


def _record_route(name, n, vectors, nested):
    m = _S["m"]
    with _LOCK:
        log = _S["log"]
        if log is not None:
            slot = log["routes"].setdefault(name, [0, 0, False, 0])   # calls, largest size,
            slot[0] += 1                                                # used with vectors at
            slot[1] = max(slot[1], n or 0)                              # top level, nested calls
            slot[2] = slot[2] or (bool(vectors) and not nested)
            slot[3] += bool(nested)
    if vectors and not nested and m is not None and n is not None and n > _limit(m):
        _send_violation(name, n, None, nested, route="spectral")   # a library's own sub-call: the
                                                                   # outer call was judged


_RNG = _np.random.default_rng(int(_REQ["perturb_seed"]))
_SAMPLE = _np.random.default_rng(int(_REQ["perturb_seed"]) ^ 0x5A5A5A5A).random   # which large solves are checked


def _prod(vals):
    n = 1
    for v in vals:
        n *= int(v)
    return n


def _flatnz(a):
    return _arr(a).reshape(-1).nonzero()[0]


# -- the effective matrix a routine reads ---------------------------------------------------
# An operator is ("tri", dl, d, du) (1-D diagonals), ("dense", M) (M (n, n), or a stack
# (..., n, n) solved system by system) or ("coo", row, col, val, n); built from owned
# operands only, with the routine's own flags (one triangle for pos/sym/her, band storage
# with its lower/upper, trans).
def _flag(v):
    if _type(v) is str:
        return v
    return bool(v) if _type(v) in _SCALARS else False


def _sym_from(M, lower):
    n = M.shape[-1]
    keep = _tri_mask(n, 0, not lower)
    T = M * keep
    strict = _tri_mask(n, -1 if lower else 1, not lower) if n > 1 else keep
    S = T * strict
    return T + S.swapaxes(-1, -2)


def _band_op(ab, diag, kmin, kmax):
    """A[i, j] = ab[diag + i - j, j] for offsets j - i in [kmin, kmax]."""
    ab = _arr(ab)
    if ab.ndim != 2:
        return None
    n = ab.shape[1]
    rows = {k: diag - k for k in range(kmin, kmax + 1) if 0 <= diag - k < ab.shape[0]}
    wide = [k for k, r in rows.items() if abs(k) > 1 and _anyv(ab[r, max(0, k):n + min(0, k)])]
    if not wide:
        z = _Z(max(n - 1, 0), dtype=ab.dtype)
        d = ab[rows[0]].copy() if 0 in rows else _Z(n, dtype=ab.dtype)
        du = ab[rows[1], 1:].copy() if 1 in rows else z
        dl = ab[rows[-1], :n - 1].copy() if -1 in rows else z
        return ("tri", dl, d, du)
    if n > _BW_CAP:
        return ("band", n, max(abs(k) for k in wide))
    M = _Z((n, n), dtype=ab.dtype)
    idx = _ARANGE(n)
    for k, r in rows.items():
        if k >= 0:
            M[idx[:n - k], idx[k:]] = ab[r, k:]
        else:
            M[idx[-k:], idx[:n + k]] = ab[r, :n + k]
    return ("dense", M)


def _sym_band_op(ab, lower):
    ab = _arr(ab)
    if ab.ndim != 2:
        return None
    u = ab.shape[0] - 1
    if lower:
        op = _band_op(ab, 0, -u, 0)         # A[i, j] = ab[i - j, j], i >= j
    else:
        op = _band_op(ab, u, 0, u)          # A[i, j] = ab[u + i - j, j], i <= j
    if op is None or op[0] == "band":
        return op
    if op[0] == "tri":
        off = op[1] if lower else op[3]
        return ("tri", off, op[2], off)
    return ("dense", _sym_from(op[1], lower))


def _dense_op(a, structure=None, lower=False, unit=False):
    """A dense square operand (or a stack), read as `structure` reads it."""
    if _spview(a) is not None:
        v = _spview(a)
        return ("coo", v[1], v[2], v[3], v[4]) if v[4] == v[5] else None
    a = _arr(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1:
        return None
    if a.size > _BW_CAP * _BW_CAP:
        return None
    n = a.shape[-1]
    if structure in ("pos", "positive definite", "sym", "symmetric", "her", "hermitian"):
        return ("dense", _sym_from(a, lower))
    if structure in ("upper triangular", "lower triangular", "triangle"):
        up = structure == "upper triangular" or (structure == "triangle" and not lower)
        T = a * _tri_mask(n, 0, up)
        if unit:
            T = T * _NE(_eye(n), 1) + _eye(n)
        return ("dense", T)
    if structure == "diagonal":
        return ("dense", a * _eye(n))
    if structure == "tridiagonal":
        return ("dense", a * _tri_mask(n, 1, False) * _tri_mask(n, -1, True))
    return ("dense", a.copy())


def _op_of(base, name, a, k):
    """The effective operator of a solve or factorisation call, or None."""
    if base == "solve" and name.startswith("scipy.linalg."):
        assume = _flag(_arg(a, k, 6, "assume_a"))
        op = _dense_op(_arg(a, k, 0, "a"), assume if _type(assume) is str else None,
                       _flag(_arg(a, k, 2, "lower", False)))
        return _op_T(op) if _flag(_arg(a, k, 7, "transposed", False)) is True else op
    if base in ("solve", "inv", "lu_factor", "getrf", "gesv", "lu", "tensorsolve"):
        return _dense_op(_arg(a, k, 0, "a"))
    if base in ("cho_factor", "posv", "potrf", "sysv", "sytrf", "hesv", "hetrf", "cholesky"):
        if name == "numpy.linalg.cholesky":
            lower = not _flag(k.get("upper", False))
        else:
            lower = _flag(_arg(a, k, 1, "lower", False)) if base in ("cho_factor", "cholesky") \
                else _flag(k.get("lower", 0))
        return _dense_op(_arg(a, k, 0, "a"), "sym", lower)
    if base == "ldl":
        return _dense_op(_arg(a, k, 0, "A", k.get("a")), "sym", _flag(_arg(a, k, 1, "lower", True)))
    if base in ("solve_triangular", "trtrs"):
        if base == "solve_triangular":
            lower, unit, tr = (_flag(_arg(a, k, 3, "lower", False)), _flag(_arg(a, k, 4, "unit_diagonal", False)),
                               _arg(a, k, 2, "trans", 0))
        else:
            lower, unit, tr = _flag(k.get("lower", 0)), _flag(k.get("unitdiag", 0)), k.get("trans", 0)
        op = _dense_op(_arg(a, k, 0, "a"), "triangle", lower, unit)
        return _op_T(op) if tr in (1, 2, "T", "C") else op
    if base == "solve_banded":
        lu = _arg(a, k, 0, "l_and_u")
        low, up = int(lu[0]), int(lu[1])
        return _band_op(_arg(a, k, 1, "ab"), up, -low, up)
    if base in ("solveh_banded", "cholesky_banded"):
        return _sym_band_op(_arg(a, k, 0, "ab"), _flag(_arg(a, k, 4 if base == "solveh_banded" else 2,
                                                             "lower", False)))
    if base in ("pbsv", "pbtrf"):
        return _sym_band_op(_arg(a, k, 0, "ab"), _flag(k.get("lower", 0)))
    if base in ("gbsv", "gbtrf"):
        kl, ku = int(k.get("kl")), int(k.get("ku"))
        return _band_op(k.get("ab"), kl + ku, -kl, ku)
    if base in ("gtsv", "gttrf", "gtsvx"):      # copies: the routine may overwrite its operands
        dl, d, du = (_arr(k.get(nm)).reshape(-1).copy() for nm in ("dl", "d", "du"))
        return ("tri", dl, d, du)
    if base in ("ptsv", "pttrf", "ptsvx"):
        d, e = _arr(k.get("d")).reshape(-1).copy(), _arr(k.get("e")).reshape(-1).copy()
        return ("tri", e, d, e)
    if base in ("spsolve", "splu", "factorized", "cg", "bicg", "bicgstab", "cgs", "gmres", "lgmres",
                "minres", "qmr", "gcrotmk", "tfqmr"):
        return _dense_op(_arg(a, k, 0, "A"))
    if base == "solve_toeplitz":
        c = _arg(a, k, 0, "c_or_cr")
        col, row = (c if _type(c) is tuple else (c, None))
        col = _arr(col).ravel()
        row = col.conj() if row is None else _arr(row).ravel()
        n = col.size
        if n > _BW_CAP or row.size != n:
            return None
        i = _ARANGE(n).reshape(n, 1) - _ARANGE(n).reshape(1, n)
        return ("dense", _WHERE(i >= 0, col[_ABS(i)], row[_ABS(i)]))
    if base == "solve_circulant":
        c = _arr(_arg(a, k, 0, "c")).ravel()
        n = c.size
        if n > _BW_CAP:
            return None
        i = (_ARANGE(n).reshape(n, 1) - _ARANGE(n).reshape(1, n)) % n
        return ("dense", c[i])
    return None


def _op_T(op):
    if op is None:
        return None
    if op[0] == "tri":
        return ("tri", op[3], op[2], op[1])
    if op[0] == "dense":
        return ("dense", op[1].swapaxes(-1, -2).copy())
    if op[0] == "coo":
        return ("coo", op[2], op[1], op[3], op[4])
    return op


def _op_n(op):
    if op[0] == "tri":
        return int(op[2].size)
    if op[0] == "dense":
        return int(op[1].shape[-1])
    if op[0] in ("coo", "band"):
        return int(op[4] if op[0] == "coo" else op[1])
    return None


def _op_hb(op):
    if op[0] == "tri":
        return 1 if (_anyv(op[1]) or _anyv(op[3])) else 0
    if op[0] == "dense":
        return _hb_dense(op[1])
    if op[0] == "coo":
        keep = _NE(op[3], 0)
        return int(_MAXR(_ABS(op[1][keep] - op[2][keep]))) if _anyv(keep) else 0
    if op[0] == "band":
        return op[2]
    return None


def _op_dense(op):
    """The operator as a dense (n, n) array (or stack), or None beyond the cap."""
    if op[0] == "dense":
        return op[1]
    n = _op_n(op)
    if n is None or n > _BW_CAP:
        return None
    if op[0] == "tri":
        dt = (op[1][:0] + op[2][:0] + op[3][:0]).dtype
        M = _Z((n, n), dtype=dt)
        i = _ARANGE(n)
        M[i, i] = op[2]
        if n > 1:
            M[i[1:], i[:-1]] = op[1]
            M[i[:-1], i[1:]] = op[3]
        return M
    if op[0] == "coo":
        M = _Z((n, n), dtype=op[3].dtype)
        _ADD_AT(M, (op[1], op[2]), op[3])
        return M
    return None


def _op_tri(op):
    """(dl, d, du) of a tridiagonal operator (a stack: the direct sum of its systems)."""
    if op is None:
        return None
    if op[0] == "tri":
        return op[1:]
    if op[0] == "coo":
        if _op_hb(op) > 1:
            return None
        op = ("dense", _op_dense(op))
        if op[1] is None:
            return None
    if op[0] != "dense":
        return None
    a = op[1]
    n = a.shape[-1]
    if n < 2 or n > _BW_CAP:
        return None
    if _hb_dense(a) > 1:
        return None
    if a.ndim == 2:
        return a.diagonal(-1), a.diagonal(0), a.diagonal(1)
    a = a.reshape((-1,) + a.shape[-2:])
    z = _Z((a.shape[0], 1), dtype=a.dtype)      # a zero coupling between consecutive systems
    sub = _CAT([a.diagonal(-1, 1, 2), z], axis=1).reshape(-1)[:-1]
    sup = _CAT([a.diagonal(1, 1, 2), z], axis=1).reshape(-1)[:-1]
    return sub, a.diagonal(0, 1, 2).reshape(-1), sup


def _op_apply(op, x):
    """A x (x (n,) or (n, k), or a stack) with the recorder's own arithmetic."""
    if op[0] == "tri":
        dl, d, du = op[1], op[2], op[3]
        if x.shape[0] != d.size:
            return None
        col = (lambda v: v) if x.ndim == 1 else (lambda v: v.reshape((v.size,) + (1,) * (x.ndim - 1)))
        y = col(d) * x
        if d.size > 1:
            y[1:] += col(dl) * x[:-1]
            y[:-1] += col(du) * x[1:]
        return y
    M = _op_dense(op)
    if M is None:
        return None
    if M.ndim > 2 and x.ndim == M.ndim - 1:     # a stack of systems with one vector each
        return _MM(M, x.reshape(x.shape + (1,))).reshape(x.shape)
    return _MM(M, x)


def _op_norm(op):
    if op[0] == "tri":
        return float(_MAXR(_ABS(op[2]) + _CAT([_Z(1), _ABS(op[1])]) + _CAT([_ABS(op[3]), _Z(1)])))
    M = _op_dense(op)
    if M is None:
        return None
    return float(_MAXR(_ADDR(_ABS(M), axis=-1), axis=None)) if M.size else 0.0


_THETA_CACHE = {}


def _theta(tri):
    """(theta_x, theta_y) when the tridiagonal matrix is, up to a scalar factor, a direct sum of
    I - r D2 (D2 = tridiag(1, -2, 1)) on grid lines of m - 1 nodes with one r > 0 (decoupled
    single rows allowed); theta = r h^2 / (k kappa) for kappa = a and c.  Otherwise None.
    Remembered by the diagonals' bytes (a solver reuses its few operators every step)."""
    m, kap, h2k = _S["m"], _S["kappa"], _S["h2k"]
    if tri is None or m is None or kap is None:
        return None
    dl, d, du = (_A(v, dtype=_F8).reshape(-1) for v in tri)
    key = (m, kap, h2k, dl.tobytes(), d.tobytes(), du.tobytes())
    hit = _THETA_CACHE.get(key, _MISSING)
    if hit is not _MISSING:
        return None if hit is None else list(hit)
    out = _theta_of(dl, d, du, m, kap, h2k)
    with _LOCK:
        if _len(_THETA_CACHE) > 256:
            _THETA_CACHE.clear()
        _THETA_CACHE[key] = None if out is None else tuple(out)
    return out


def _theta_of(dl, d, du, m, kap, h2k):
    n = d.size
    if n < 2 or dl.size != n - 1 or du.size != n - 1 or not (
            bool(_ANDR(_ISF(dl))) and bool(_ANDR(_ISF(d))) and bool(_ANDR(_ISF(du)))):
        return None
    rtol = float(_REQ["adi_op_rtol"])
    cut = ((dl == 0) & (du == 0)).nonzero()[0] + 1
    rs = []
    for lo, hi in zip(_CAT(([0], cut)).tolist(), _CAT((cut, [n])).tolist()):
        if hi - lo == 1:
            continue
        if hi - lo == m - 1:
            bl, bd, bu = dl[lo:hi - 1], d[lo:hi], du[lo:hi - 1]
        elif hi - lo == m + 1 and du[lo] == 0 and dl[hi - 2] == 0 and d[lo] != 0 and d[hi - 1] != 0:
            bl, bd, bu = dl[lo:hi - 2], d[lo + 1:hi - 1], du[lo + 1:hi - 1]   # Dirichlet rows kept
        else:
            return None
        o, dd = float(bl[0]), float(bd[0])
        tol = rtol * max(abs(o), abs(dd))
        if (bool(_ORR(_ABS(bl - o) > tol)) or bool(_ORR(_ABS(bu - o) > tol))
                or bool(_ORR(_ABS(bd - dd) > tol))):
            return None
        s = dd + 2.0 * o
        if abs(s) <= tol:
            return None
        r = -o / s
        if not r > 0:
            return None
        rs.append(r)
    if not rs or max(rs) - min(rs) > rtol * max(rs):
        return None
    return [rs[0] * h2k / kap[0], rs[0] * h2k / kap[1]]


# -- factors by content --------------------------------------------------------------------
# A factorisation's output is fingerprinted (blake2b of its bytes, shape and dtype) when it
# is produced, with the operator it factors and that operator's class; a consumer's factor is
# looked up by the fingerprint of ITS content.  A factor object that was registered but now
# has other content was changed between factorisation and use: a FAIL naming the call.
_FREG = {}                              # fingerprint -> (theta, op)
_FIDS = {}                              # id(factor array handed out) -> (weakref, fingerprint)
_FREG_BYTES = [0]
_FREG_CAP = 1 << 28                     # bytes of operators kept for the consumers' residual checks


def _fp(parts):
    h = _blake()
    for p in parts:
        if _type(p) is _nd:
            h.update(("%s%s" % (p.dtype.str, p.shape)).encode())
            h.update(p.tobytes(order="C"))
        else:
            h.update(repr(p).encode())
    return h.digest()


def _factor_parts(base, a, k, out=None):
    """(fingerprinted parts, the arrays a caller holds) of a factor: from a factorisation's
    output (out given) or from a consumer's arguments."""
    if out is not None:
        if base in ("lu_factor", "getrf"):
            return [out[0], out[1]], [out[0], out[1]]
        if base in ("cho_factor",):
            return [out[0], bool(out[1])], [out[0]]
        if base in ("potrf", "pbtrf"):
            return [out[0], _flag(k.get("lower", 0))], [out[0]]
        if base == "cholesky":
            low = (not _flag(k.get("upper", False))) if k.get("_numpy") else _flag(_arg(a, k, 1, "lower", False))
            return [out, low], [out]
        if base == "cholesky_banded":
            return [out, _flag(_arg(a, k, 2, "lower", False))], [out]
        if base == "gttrf":
            return list(out[:5]), list(out[:5])
        if base == "pttrf":
            return [out[0], out[1]], [out[0], out[1]]
        if base == "gbtrf":
            return [out[0], out[1], int(k.get("kl")), int(k.get("ku"))], [out[0], out[1]]
        return None, None
    if base == "solve_triangular":
        return [_arr(_arg(a, k, 0, "a")), _flag(_arg(a, k, 3, "lower", False))], None
    if base == "trtrs":
        return [_arr(k.get("a")), _flag(k.get("lower", 0))], None
    if base == "lu_solve":
        f = _arg(a, k, 0, "lu_and_piv")
        return [_arr(f[0]), _arr(f[1])], None
    if base == "getrs":
        return [_arr(k.get("lu")), _arr(k.get("piv"))], None
    if base == "cho_solve":
        f = _arg(a, k, 0, "c_and_lower")
        return [_arr(f[0]), _flag(f[1])], None
    if base == "cho_solve_banded":
        f = _arg(a, k, 0, "cb_and_lower")
        return [_arr(f[0]), _flag(f[1])], None
    if base in ("potrs", "pbtrs"):
        return [_arr(k.get("c", k.get("ab"))), _flag(k.get("lower", 0))], None
    if base == "gttrs":
        return [_arr(k.get(nm)) for nm in ("dl", "d", "du", "du2", "ipiv")], None
    if base == "pttrs":
        return [_arr(k.get("d")), _arr(k.get("e"))], None
    if base == "gbtrs":
        return [_arr(k.get("ab")), _arr(k.get("ipiv")), int(k.get("kl")), int(k.get("ku"))], None
    return None, None


def _register(base, a, k, out, theta, op):
    parts, held = _factor_parts(base, a, k, out)
    if parts is None:
        return
    key = _fp(parts)
    size = 0 if op is None else (op[1].nbytes if op[0] == "dense" else 3 * op[2].nbytes if op[0] == "tri" else 0)
    with _LOCK:
        if _FREG_BYTES[0] + size > _FREG_CAP:
            op = None                   # past the cap: the consumer is not evidence (fails closed)
        else:
            _FREG_BYTES[0] += size
        _FREG[key] = (theta, op)
        if base == "cholesky" or base == "cho_factor":    # the transposed factor read from the other triangle
            c = parts[0]
            _FREG[_fp([c.swapaxes(-1, -2).copy(order="C"), not parts[1]])] = (theta, op)
        for h in held:
            if _type(h) is _nd and _len(_FIDS) < 200000:
                try:
                    _FIDS[id(h)] = (_wref(h), key)
                except TypeError:
                    pass


def _reconstruct(base, a, k):
    """The operator a factor of unobserved origin stands for, where that is cheap and exact
    (LU with pivots, Cholesky); None otherwise."""
    if base in ("lu_solve", "getrs"):
        lu, piv = ((_arr(_arg(a, k, 0, "lu_and_piv")[0]), _arr(_arg(a, k, 0, "lu_and_piv")[1]))
                   if base == "lu_solve" else (_arr(k.get("lu")), _arr(k.get("piv"))))
        if lu.ndim != 2 or lu.shape[0] != lu.shape[1] or lu.shape[0] > _BW_CAP or piv.shape != (lu.shape[0],):
            return None
        n = lu.shape[0]
        L = lu * _tri_mask(n, -1, False) + _eye(n)
        M = _MM(L, lu * _tri_mask(n, 0, True))
        pv = piv.tolist()
        for i in range(n - 1, -1, -1):
            p = int(pv[i])
            if not 0 <= p < n:
                return None
            if p != i:
                M[[i, p]] = M[[p, i]]
        return ("dense", M)
    if base in ("cho_solve", "potrs"):
        if base == "cho_solve":
            c, low = _arr(_arg(a, k, 0, "c_and_lower")[0]), _flag(_arg(a, k, 0, "c_and_lower")[1])
        else:
            c, low = _arr(k.get("c")), _flag(k.get("lower", 0))
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] > _BW_CAP:
            return None
        n = c.shape[0]
        T = c * _tri_mask(n, 0, not low)
        return ("dense", _MM(T, T.T) if low else _MM(T.T, T))
    return None


# -- poisoning -------------------------------------------------------------------------
def _spoil(a):
    """mode "nan": every entry NaN; mode "scale": each entry times (1 + eps r), r in [1, 2)
    drawn per run (finite, invisible to an isnan/isfinite test)."""
    if _S["poison"] == "nan":
        out = a.copy()
        out[...] = float("nan")
        return out
    with _LOCK:
        r = _RNG.uniform(1.0, 2.0, size=a.shape)
    return a * (1.0 + float(_REQ["perturb_rel"]) * r)


def _poison(out):
    if _type(out) is _nd and out.dtype.kind in "fc":
        return _spoil(out)
    if _type(out) is tuple:
        return tuple(_poison(o) for o in out)
    if _type(out) is list:
        return [_poison(o) for o in out]
    return out


# -- the solution, the right-hand side and the residual -------------------------------------
_ITERATIVE = ("cg", "bicg", "bicgstab", "cgs", "gmres", "lgmres", "minres", "qmr", "gcrotmk", "tfqmr")
_RESID_SKIP = ("spilu", "pinv", "pinvh", "lstsq")       # approximate or least-squares by design


def _solution(base, out, outs):
    """The solution array in a solve's output (None: not a solve, or not found)."""
    if _type(out) is _nd:
        return out
    if _type(out) is tuple and out:
        if outs is not None:
            for nm in ("x", "b"):
                if nm in outs and outs.index(nm) < _len(out):
                    v = out[outs.index(nm)]
                    return v if _type(v) is _nd else None
            return None
        if base in _ITERATIVE and _type(out[0]) is _nd:
            return out[0]
    return None


def _rhs(base, a, k):
    """The right-hand side a solve was handed (owned), or None."""
    v = k.get("b", k.get("rhs"))
    if v is None and base in ("trsv", "tbsv", "tpsv"):
        v = k.get("x")
    if v is None and a:
        v = a[0] if base in ("solve()", "factorized()", "solve") and _len(a) == 1 else (a[1] if _len(a) > 1 else None)
    return None if v is None else _arr(v)


def _sampled(name, x):
    """Whether this solve's residual is checked: every small one (up to _CHECK_ALL entries in
    its solution), the first _CHECK_FIRST of each routine in each run, and each further one
    with probability _CHECK_P drawn from the grader's per-run seed (the solver cannot tell
    which); a library that lies on every step is caught with certainty in practice."""
    if _type(x) is not _nd or x.size <= _CHECK_ALL:
        return True
    log = _S["log"]
    seen = log["fns"].get(name, 0) if log is not None else 0
    if seen < _CHECK_FIRST:
        return True
    with _LOCK:
        return _SAMPLE() < _CHECK_P


_CHECK_ALL = 4096
_CHECK_FIRST = 8
_CHECK_P = 0.25


def _check_solve(name, base, op, x, b, k):
    """|A x - b| against round-off: (ratio, limit) or None when the call cannot be checked."""
    if op is None or x is None or _type(x) is not _nd:
        return None
    if base == "inv":
        n = _op_n(op)
        b = _eye(n) if op[0] != "dense" or op[1].ndim == 2 else (_Z(op[1].shape) + _eye(n))
    if b is None or x.dtype.kind not in "fc" or not bool(_ANDR(_ISF(x), axis=None)):
        return None
    try:
        Ax = _op_apply(op, x)
        if Ax is None:
            return None
        r = Ax - b
    except Exception:
        return None
    nA = _op_norm(op)
    if nA is None:
        return None
    scale = nA * float(_MAXR(_ABS(x), axis=None) if x.size else 0.0) + float(
        _MAXR(_ABS(b), axis=None) if b.size else 0.0)
    res = float(_MAXR(_ABS(r), axis=None)) if r.size else 0.0
    if base in _ITERATIVE:
        tol = k.get("rtol", k.get("tol", 1e-5))
        tol = float(tol) if _type(tol) in _SCALARS and _type(tol) not in (str, bytes) else 1e-5
        lim = max(100.0 * tol, float(_REQ["resid_rtol"]))
    else:
        lim = float(_REQ["resid_rtol"])
    ratio = res / scale if scale > 0 else (0.0 if res == 0 else float("inf"))
    return ratio, lim


class _SolverProxy:
    """SuperLU objects (and factorized() callables): their solves are counted, classified
    by the factorised matrix (the recorder's own copy), checked against it, and poisoned
    when it is an ADI operator."""

    def __init__(self, obj, name, n, theta, op):
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_n", n)
        object.__setattr__(self, "_theta", theta)
        object.__setattr__(self, "_op", op)

    def __getattr__(self, attr):
        val = getattr(self._obj, attr)
        if attr == "solve" and callable(val):
            return self._wrap(val, self._name + ".solve")
        return val

    def _wrap(self, fn, name):
        def solve(*args, **kwargs):
            tr = _arg(args, kwargs, 1, "trans", "N")
            op = _op_T(self._op) if tr in ("T", "H") else self._op
            return _call(fn, name, args, kwargs, lambda a, k: (self._n, None, True), theta=self._theta, op=op)
        return solve

    def __call__(self, *args, **kwargs):
        return _call(self._obj, self._name + "()", args, kwargs, lambda a, k: (self._n, None, True),
                     theta=self._theta, op=self._op)


def _depth():
    return getattr(_TL, "depth", 0)


def _nested():
    """Inside another wrapped call of this thread AND called from NumPy/SciPy code (a
    library's own sub-call).  A call from the submission (a callback, a matvec) is a
    solve of its own at any depth."""
    if not _depth():
        return False
    try:
        return _getframe(3).f_code.co_filename.startswith(_LIBDIRS)
    except Exception:
        return False


def _run(fn, args, kwargs):
    _TL.depth = _depth() + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _TL.depth -= 1


_NOTHETA = object()
_SHM = _np.shares_memory


def _event(kind, **fields):
    """A FAIL-grade observation (a residual, a changed factor, an unreadable operand), once per
    job, function and kind."""
    with _LOCK:
        key = (_S["job"], kind, fields.get("fn"))
        if key in _S["seen"] or _len(_S["seen"]) >= 200:
            return
        _S["seen"].add(key)
    send(dict(fields, kind=kind, job=_S["job"], m=_S["m"]))


def _consume(base, name, a, k, args, kwargs, params):
    """(theta, operator, status) of a factor-consuming call: the registered factorisation whose
    fingerprint matches the factor's content; "changed" when the factor object handed in was
    registered with other content; "foreign" when no observed factorisation made it."""
    parts, _ = _factor_parts(base, a, k)
    if parts is None:
        return None, None, "none"
    entry = _FREG.get(_fp(parts))
    if entry is not None:
        return entry[0], entry[1], "ok"
    ob = _bind(params, args, kwargs) if params is not None else None
    cand = []
    if base == "lu_solve" or base == "cho_solve" or base == "cho_solve_banded":
        f = _arg(args, kwargs, 0, {"lu_solve": "lu_and_piv", "cho_solve": "c_and_lower",
                                   "cho_solve_banded": "cb_and_lower"}[base])
        if _type(f) is tuple:
            cand = list(f)
    elif ob is not None:
        cand = [ob.get(nm) for nm in ("lu", "piv", "c", "ab", "dl", "d", "du", "du2", "ipiv", "e")]
    for c in cand:
        if _type(c) is _nd:
            e = _FIDS.get(id(c))
            if e is not None and e[0]() is c:
                return None, None, "changed"
    return None, _reconstruct(base, a, k), "foreign"


def _write_back(ob, bound, x_raw, x_final):
    """In-place results audited in place: every buffer the routine may overwrite
    (overwrite_X true) receives what the routine wrote into the recorder's copy of it, and
    the right-hand side's buffer the (spoiled) solution when the solution lives there."""
    if ob is None or bound is None:
        return
    for key, flag in bound.items():
        if _type(key) is not str or not key.startswith("overwrite_") or _flag(flag) is not True:
            continue
        nm = key[10:]
        dst, src = ob.get(nm), bound.get(nm)
        if _type(dst) is not _nd or _type(src) is not _nd or not dst.flags.writeable:
            continue
        if x_final is not x_raw and _type(x_raw) is _nd and _SHM(x_raw, src) and x_final.shape == src.shape:
            src = x_final
        if src.shape == dst.shape:
            try:
                _CPT(dst, src, casting="unsafe")
            except Exception:
                pass


def _call(fn, name, args, kwargs, extract, proxy=False, theta=_NOTHETA, op=_NOTHETA, params=None):
    nested = _nested()
    base = _base(name)
    if nested:      # a library's own sub-call: read (never replaced), dimension recorded
        try:
            n, hb, factor = extract(tuple([_own_soft(v) for v in args]), {kk: _own_soft(v) for kk, v in kwargs.items()})
        except Exception:
            n, hb, factor = None, None, False
        _record(name, n, hb, factor, True, None)
        return _run(fn, args, kwargs)
    try:
        oargs = tuple([_own(v) for v in args])
        okw = {kk: _own(v) for kk, v in kwargs.items()}
    except Exception as exc:        # _Unreadable, or a LinearOperator that raised while materialised
        why = str(exc)[:200] if isinstance(exc, _Unreadable) else f"{_type(exc).__name__} while reading it"
        _event("unreadable", fn=name, why=why)
        raise TypeError(f"{name}: the grader's solve recorder cannot own this operand ({why}); pass "
                        "numpy arrays, scipy sparse csr/csc/coo/dia matrices or LinearOperators") from None
    bound = _bind(params, oargs, okw) if params is not None else None
    a, k = ((), bound) if bound is not None else (oargs, okw)
    if name == "numpy.linalg.cholesky":
        k = dict(k, _numpy=True)
    try:
        n, hb, factor = extract(a, k)
    except Exception:
        n, hb, factor = None, None, False
    if op is _NOTHETA:
        try:
            op = _op_of(base, name, a, k)
        except Exception:
            op = None
    if op is not None and op[0] != "band" and not factor:
        try:
            n, hb = _op_n(op), _op_hb(op)
        except Exception:
            pass
    status = None
    if theta is _NOTHETA:
        if base in _CONSUME:
            try:
                theta, fop, status = _consume(base, name, a, k, args, kwargs, params)
            except Exception:
                theta, fop, status = None, None, "foreign"
            if status == "changed":
                _event("factor", fn=name)
            if base in _TRIANGULAR:
                status = None if status == "foreign" else status   # a triangular solve of its own
            else:
                tr = k.get("trans", 0)
                op = _op_T(fop) if tr in (1, 2, "T", "C") else fop
                if status == "foreign" and fop is not None:
                    theta = _theta(_op_tri(fop))
                    n, hb = _op_n(fop), _op_hb(fop)
        else:
            try:
                theta = _theta(_op_tri(op)) if op is not None else None
            except Exception:
                theta = None
    _precheck(name, n, hb)
    checkable = not proxy and base not in _FACTORISE and base not in _RESID_SKIP
    rhs = None
    if checkable and base != "inv":
        try:
            rhs = _rhs(base, a, k)
            if rhs is not None and any(_type(kk) is str and kk.startswith("overwrite_") and _flag(v) is True
                                       for kk, v in k.items()):
                rhs = rhs.copy()        # the routine may write its result into it
        except Exception:
            rhs = None
    out = _run(fn, oargs, okw)
    x = None
    if checkable:
        x = _solution(base, out, _OUTS.get(name))
        if base in _ITERATIVE and not (_type(out) is tuple and _len(out) > 1 and out[1] == 0):
            x = None                    # not converged: not a solve to check, not evidence
        try:
            sampled = _sampled(name, x)
            chk = _check_solve(name, base, op, x, rhs, k) if sampled else None
        except Exception:
            sampled, chk = True, None
        if chk is None:
            if theta is not None and sampled:
                theta = None            # a solve that cannot be checked is not evidence
        elif not chk[0] <= chk[1]:
            _event("residual", fn=name, ratio=chk[0], limit=chk[1], dim=n)
            theta = None
        _record(name, n, hb, factor, False, theta, chk, status)
    else:
        _record(name, n, hb, factor, False, theta, None, status)
    if proxy:       # spilu is incomplete by design: its solves are neither checked nor evidence
        spilu = base == "spilu"
        return _SolverProxy(out, name, n, None if spilu else theta, None if spilu else op)
    if base in _FACTORISE:
        try:
            _register(base, a, k, out, theta, op)
        except Exception:
            pass
        _write_back(_bind(params, args, kwargs) if params is not None else None, bound, None, None)
        return out
    final = out
    if _S["poison"] and theta is not None:
        with _LOCK:
            _S["log"]["poisoned"] += 1
        final = _poison(out)
    xf = _solution(base, final, _OUTS.get(name)) if final is not out else x
    _write_back(_bind(params, args, kwargs) if params is not None else None, bound, x, xf)
    return final


def _own_soft(x):
    """A route's operand: owned when it is an array-like the recorder can own, else untouched
    (a route records only a size)."""
    t = _type(x)
    if t is _nd or t in _SCALARS or _callable(x) and not _issub(t, _LINOP):
        return x
    try:
        return _own(x)
    except Exception:
        return x


def _call_route(fn, name, args, kwargs, extract):
    nested = _nested()
    if not nested:
        args = tuple([_own_soft(v) for v in args])
        kwargs = {kk: _own_soft(v) for kk, v in kwargs.items()}
    try:
        n, vectors = extract(args, kwargs)
    except Exception:
        n, vectors = None, True
    _record_route(name, n, vectors, nested)
    return _run(fn, args, kwargs)


_WRAPPED = {}
_PATCHED = []                           # (module, name, wrapper): checked after every job


def _integrity():
    """Names of entry points the submission un-wrapped, numpy/scipy module functions and
    library classes it reassigned or extended since driver start, and a depth left non-zero."""
    bad = [f"{getattr(m, '__name__', '?')}.{k}" for m, k, w in _PATCHED if m.__dict__.get(k, _MISSING) is not w]
    mods, classes = _SNAP
    for nm, (mod, items) in mods.items():
        d = mod.__dict__
        for k, v in items.items():
            if d.get(k, _MISSING) is not v:
                bad.append(f"{nm}.{k}")
    for cls, items in classes:
        cur = _TYPE_DICT_GET(_TYPE_DICT, cls)
        if _len(cur) != _len(items) or any(cur.get(k, _MISSING) is not v for k, v in items.items()):
            changed = sorted(k for k in set(cur) ^ set(items)) + sorted(
                k for k, v in items.items() if cur.get(k, _MISSING) is not v)
            bad.append(f"{cls.__module__}.{cls.__qualname__}.{(changed or ['?'])[0]}")
    if _depth() != 0:
        bad.append("instrumentation depth counter")
    return bad


_MISSING = object()
_TYPE_DICT = type.__dict__["__dict__"]
_TYPE_DICT_GET = type(_TYPE_DICT).__get__


def _snapshot():
    """The callables and submodules of every loaded numpy/scipy module, and the full
    attribute table of every (mutable) numpy/scipy class they hold, as loaded now."""
    mods, classes, seen = {}, [], set()
    for nm, mod in list(_sys.modules.items()):
        if type(mod) is not type(_sys) or not (nm in ("numpy", "scipy") or nm.startswith(("numpy.", "scipy."))):
            continue
        items = {}
        for k, v in list(mod.__dict__.items()):
            if callable(v) or type(v) is type(_sys):
                items[k] = v
            if isinstance(v, type) and id(v) not in seen and not (v.__flags__ & 256) and \
                    str(getattr(v, "__module__", "")).startswith(("numpy", "scipy")):
                seen.add(id(v))
                classes.append((v, dict(_TYPE_DICT_GET(_TYPE_DICT, v))))
        mods[nm] = (mod, items)
    return mods, classes


def _make(fn, name, extract, route=False):
    proxy = name.rsplit(".", 1)[-1] in ("splu", "spilu", "factorized")
    if route:
        def wrapper(*args, **kwargs):
            return _call_route(fn, name, args, kwargs, extract)
    else:
        params = _params_of(fn)
        if params is not None and params[1] is not None:
            _OUTS[name] = params[1]

        def wrapper(*args, **kwargs):
            return _call(fn, name, args, kwargs, extract, proxy, params=params)
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


for _tables, _route in ((_ENTRY, False), (_ROUTES, True)):
    for _mod, _mname, _table in _tables:
        if _mod is None:
            continue
        for _name, _x in _table.items():
            _fn = getattr(_mod, _name, None)
            if _fn is None or id(_fn) in _WRAPPED:
                continue
            _WRAPPED[id(_fn)] = (_fn, _make(_fn, f"{_mname}.{_name}", _x, _route))

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
_SNAP = _snapshot()                    # after the wrappers went in, before any submitted code
_sys.path.insert(0, _SUBDIR)
# the driver's state is not offered to the submission as sys.modules["__main__"]
_sys.modules["__main__"] = type(_sys)("__main__")


def _b64f(a):
    return _b64encode(_A(a, dtype="<f8", order="C").tobytes()).decode("ascii")


def _new_log():
    return {"count": 0, "fns": {}, "max_dim": 0, "max_hb": 0, "unknown_hb": 0, "adi": 0, "thetas": {},
            "poisoned": 0, "nested": 0, "nested_fns": {}, "routes": {}, "checked": 0, "max_resid": 0.0,
            "foreign": 0}


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
            _TL.depth = 0
    except BaseException as _exc:
        send({"kind": "import_error", "error": f"{type(_exc).__name__}: {_exc}"[:400]})
        raise SystemExit(3)


def _fresh_solve():
    """adi_solver imported in this forked job child (the warm parent never imports it): no
    cache or counter of one run (a poisoned one included) survives into the next."""
    import adi_solver
    return adi_solver.solve


def _run_job(job):
    """One job: the solve on its problem, with the instrumentation set for its mesh."""
    _np.random.seed()               # numpy's global generator: fresh entropy, as in a fresh process
    # (forked, every job would inherit the warm parent's state: unseeded np.random draws would
    # repeat in every call and read as deterministic; Python's random reseeds itself at fork)
    h = float(job["h"])
    m = int(round(1.0 / h))
    if job["problem"] == "hidden":
        prob = _PNS["hidden_problem"](_REQ["hidden_draw"])
        call_args = (h, float(_PNS["HIDDEN_T"]), prob)
    elif job["problem"] == "witness":
        prob = _PNS["witness_problem"](_REQ["witness_draw"])
        call_args = (h, h, prob)
    elif job["problem"] == "benchmark_object":
        prob = _PNS["benchmark_problem"]()
        call_args = (h, 1.0, prob)
    else:
        prob = _PNS["benchmark_problem"]()
        call_args = (h, 1.0, None)
    steps = max(1, int(round(call_args[1] / h)))
    with _LOCK:
        _S["job"], _S["m"], _S["log"] = job["tag"], m, _new_log()
        _S["kappa"], _S["h2k"] = (float(prob.a), float(prob.c)), h * h / (call_args[1] / steps)
        _S["poison"] = job.get("poison") or False
    t0 = _time.monotonic()
    msg = {"kind": "job", "tag": job["tag"]}
    try:
        res = _fresh_solve()(*call_args)
        _S["poison"] = False
        if not isinstance(res, (tuple, list)) or len(res) != 3:
            raise TypeError(f"solve returned {type(res).__name__}, expected (X, Y, U)")
        arrs = [_A(v, dtype=_F8) for v in res]
        for nm, a in zip("XYU", arrs):
            if a.shape != (m + 1, m + 1):
                raise ValueError(f"{nm} has shape {a.shape}, expected {(m + 1, m + 1)}")
        msg.update(status="ok", X=_b64f(arrs[0]), Y=_b64f(arrs[1]), U=_b64f(arrs[2]))
    except BaseException as exc:
        _S["poison"] = False
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            msg.update(status="error", error=f"{type(exc).__name__}")
        else:
            msg.update(status="error", error=f"{type(exc).__name__}: {exc}"[:400])
    with _LOCK:
        log = _loads(_dumps(_S["log"]))
    msg.update(wall=_time.monotonic() - t0, log=log, m=m)
    bad = _integrity()
    if bad:
        send({"kind": "tamper", "job": job["tag"], "what": bad[:10]})
        _TL.depth = 0
    send(msg)


if fork_jobs([{"id": "import"}], lambda _job: _import_job())[0]["status"] == "ok":
    fork_jobs([dict(_j, id=_j["tag"]) for _j in _REQ["jobs"]], _run_job)
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
    """Every record of the seed's checks: files, imports, arrays, sidecar, tiers, then (unless
    --no-exec or already 0.0) one isolated run of every job beside the hidden reference."""
    report = Report(submission)
    checks, phases, outcomes, keys = report.checks, report.phases, report.outcomes, report.keys
    t0 = time.monotonic()
    sub = Submitted()
    report.figures_data["submitted"] = sub                          # PLOTS: filled below
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
        keys["errors_submitted"] = [float(v) for v in sub.e]
        keys["fitted_order"] = float(fitted_order(sub.h, sub.e))
        if sub.tier3 is not None:
            checks += tier3_static_checks(sub)
    phases["static"] = time.monotonic() - t0
    progress(f"static checks done ({len(checks)} records)")
    if no_exec:
        checks.append(Check("provenance.exec", Status.SKIP, "--no-exec: the solver was not run; "
                            "provenance unverified, no score"))
        return report
    if sub.e is None or any(c.status is Status.FAIL and not c.id.startswith(TIER3_PREFIX) for c in checks):
        checks.append(Check("provenance.exec", Status.SKIP, "not executed: the static checks already "
                            "score 0.0"))
        return report
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
    progress("solver jobs started in an isolated child; hidden reference computing")
    outcome = run_isolated(submission, DRIVER_BODY, driver_request(plan_jobs(), perturb_seed()), budget)
    checks.append(sandbox_check())          # after the run: it established the level
    outcomes["solve"] = outcome
    checks.append(sandbox_check())
    worker.join()
    phases["execute"] = time.monotonic() - t1
    progress(f"solver jobs finished: {outcome.status} ({phases['execute']:.1f} s)")
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
        return report
    sig_ok = bool(ready.get("signature_ok"))
    checks.append(Check("provenance.solver", Status.PASS if sig_ok else Status.FAIL,
                        f"solve{ready.get('signature', '')}" + ("" if sig_ok else
                        ": must be solve(h, T=1.0, problem=None)")))
    regen_checks, regen = regeneration_checks(sub, jobs, outcome)
    checks += regen_checks
    checks += hidden_checks(jobs, ref_box["ref"])
    checks += causal_audit_check(jobs, outcome)
    checks += witness_check(jobs, submission_theta(jobs))
    checks += interface_check(jobs)
    checks += determinism_check(jobs)
    checks += structure_checks(jobs, violations, ready)
    checks += field_check(sub, jobs)
    report.figures_data.update(regenerated=regen, jobs=jobs, hidden_reference=ref_box["ref"])   # PLOTS
    keys["errors_regenerated"] = [None if v is None else float(v) for v in regen]
    hid = [c.measured for c in checks if c.id.startswith("hidden.error")]
    keys["hidden_errors"] = [float(v) if isinstance(v, float) else None for v in hid]
    keys["observed_solves"] = [{"run": _job_label(t), "solves": _log_int(jobs[t]["log"], "count")}
                               for t in sorted(jobs, key=tag_order)]
    theta = submission_theta(jobs)
    keys["adi_operator_solves"] = [{"run": _job_label(t), "solves": adi_counted(jobs[t]["log"], theta)}
                                   for t in sorted(jobs, key=tag_order)]
    return report


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


# ---- ADI figures ---------------------------------------------------------------------------
def plot_adi_convergence(data: dict, *, submission: str, result: str, score):
    """Max-norm error against h on log-log axes: submitted (filled, solid) and regenerated
    (open), the least-squares order written on the plot, the 100x reduction line, a slope-2 guide."""
    import numpy as np
    fig = new_figure(8.5, 6.0)
    ax = fig.add_subplot()
    h = np.array([h_value(p) for p in range(SPEC["n_meshes"])])
    sub_e = data.get("submitted")
    regen = data.get("regenerated")
    notes = []
    if sub_e is not None:
        e = np.asarray(sub_e, float)
        ok = np.isfinite(e) & (e > 0)
        ax.loglog(h[ok], e[ok], "o-", color=PLOT_COLORS["submitted"], ms=6, lw=1.4,
                  label="submitted max_norm_errors")
        if ok.all():
            fit = fitted_order(h, e)
            lo, hi = SPEC["tier2_fit_band"]
            notes.append(f"least-squares order, submitted: {fit:.3f}  (Tier 2 band [{lo}, {hi}])")
            red = SPEC["tier2_min_reduction"]
            ax.axhline(e[0] / red, color=PLOT_COLORS["limit"], ls="--", lw=1.0,
                       label=f"{red:g}× reduction: e(0.1)/{red:g} (Tier 2 needs e(0.00625) below)")
            ax.loglog(h, 0.5 * e[0] * (h / h[0]) ** 2, color="black", ls=":", lw=1.2,
                      label="slope-2 guide ∝ h²")
    else:
        notes.append("submitted errors: none usable")
    if regen is not None and any(v is not None for v in regen):
        idx = [p for p, v in enumerate(regen) if v is not None and math.isfinite(v) and v > 0]
        rv = np.array([regen[p] for p in idx])
        ax.loglog(h[idx], rv, "o", ms=12, mfc="none", mew=1.4, color=PLOT_COLORS["regenerated"],
                  label="regenerated by the grader")
        if len(idx) == SPEC["n_meshes"]:
            notes.append(f"least-squares order, regenerated: {fitted_order(h, rv):.3f}")
    else:
        notes.append("regenerated: none (not executed)")
    ax.text(0.03, 0.97, "\n".join(notes), transform=ax.transAxes, ha="left", va="top", fontsize=9,
            bbox=dict(boxstyle="round", fc="white", ec="0.6"))
    ax.set_xlabel("mesh size h = k  (unit-square lengths, dimensionless)")
    ax.set_ylabel("max-norm error at T = 1  (dimensionless)")
    ax.set_xlim(h.min() / 1.4, h.max() * 1.4)
    ax.grid(True, which="major", color="0.9", lw=0.6)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.95)
    verdict_title(fig, "benchmark errors against h", submission, result, score)
    return fig


def plot_adi_hidden(data: dict, *, submission: str, result: str, score):
    """The hidden instance: left, |U - reference| on the hidden meshes with the per-mesh limit
    and the required drops (seed's between the first two meshes, ours between the last two);
    right, the submission's fields beside the grader's reference on y = 1/2."""
    import numpy as np
    fig = new_figure(11.0, 5.0)
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.3))
    hidden, ref = data.get("hidden") or {}, data.get("hidden_reference")
    hs = list(SPEC["hidden_h"])
    errs = [hidden.get(h, (None, None))[1] for h in hs]
    ok = [i for i, v in enumerate(errs) if v is not None and math.isfinite(v) and v > 0]
    left.axhline(SPEC["hidden_tol"], color=PLOT_COLORS["FAIL"], ls="--", lw=1.2,
                 label=f"limit {SPEC['hidden_tol']:g} (per mesh)")
    if ok:
        left.loglog([hs[i] for i in ok], [errs[i] for i in ok], "o-", color=PLOT_COLORS["submitted"],
                    ms=7, label="submission: max |U − reference|")
        for i, drop, ls in ((0, SPEC["hidden_min_drop"], ":"), (1, SPEC["hidden_min_fine_drop"], "-.")):
            if i in ok:
                left.loglog(hs[i:i + 2], [errs[i], errs[i] / drop], color="black", ls=ls, lw=1.2,
                            label=f"required drop: {drop:g}× from h = {hs[i]:g} to {hs[i + 1]:g}")
    else:
        left.text(0.5, 0.5, "no hidden-instance run\n(not executed or failed)", ha="center",
                  va="center", transform=left.transAxes)
        left.set_yscale("log")
        left.set_xscale("log")
    left.set_xlim(min(hs) / 1.25, max(hs) * 1.25)
    left.set_xticks(hs, [f"{h:g}" for h in hs])
    left.xaxis.set_minor_formatter("")
    left.set_xlabel("mesh size h  (dimensionless)")
    left.set_ylabel("max |U − grader's reference| at T  (dimensionless)")
    left.set_title("errors on the hidden instance", fontsize=10)
    left.grid(True, which="major", color="0.9", lw=0.6)
    left.legend(loc="lower right", fontsize=8)
    if ref is not None:
        m = ref.shape[0] - 1
        xr = np.linspace(0.0, 1.0, m + 1)
        right.plot(xr, ref[:, m // 2], color=PLOT_COLORS["reference"], lw=2.2, alpha=0.8,
                   label=f"grader's MCS reference (Richardson, h = 1/{SPEC['ref_m'][0]}, 1/{SPEC['ref_m'][1]})")
    for (h, style) in zip(hs, ("s--", "^-.", "o-")):
        U = hidden.get(h, (None, None))[0]
        if U is not None and U.shape[0] % 2 == 1:
            mh = U.shape[0] - 1
            right.plot(np.linspace(0.0, 1.0, mh + 1), U[:, mh // 2], style, color=PLOT_COLORS["submitted"],
                       ms=4, lw=1.0, alpha=0.6 if h == hs[0] else 1.0, label=f"submission, h = {h:g}")
    right.set_xlabel("x  (on the line y = 1/2, dimensionless)")
    right.set_ylabel("u(x, 1/2, T)  (dimensionless)")
    right.set_title("fields beside the grader's reference", fontsize=10)
    right.grid(True, color="0.9", lw=0.6)
    if right.get_legend_handles_labels()[0]:
        right.legend(loc="lower center", fontsize=8)
    else:
        right.text(0.5, 0.5, "no reference computed (not executed)", ha="center", va="center",
                   transform=right.transAxes)
    verdict_title(fig, "the hidden instance", submission, result, score)
    return fig


def plot_adi_error_surface(data: dict, *, submission: str, result: str, score):
    """Heat map of the finest-mesh error U - U_exact: the submitted error_finest and, when the
    solver ran, the regenerated finest field's error, on one symmetric colour scale."""
    import numpy as np
    panels = [(name, E) for name, E in (("submitted error_finest", data.get("error_finest")),
                                        ("regenerated U − U_exact", data.get("error_regenerated")))
              if E is not None]
    fig = new_figure(5.4 * max(1, len(panels)) + 0.8, 5.2)
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    if not panels:
        axes[0].text(0.5, 0.5, "no finest-mesh error field (Tier 3 arrays unusable)", ha="center",
                     va="center", transform=axes[0].transAxes)
        axes[0].set_xlabel("x  (dimensionless)")
        axes[0].set_ylabel("y  (dimensionless)")
    else:
        with np.errstate(invalid="ignore"):
            vmax = max(float(np.nanmax(np.abs(E))) for _, E in panels) or 1.0
        for ax, (name, E) in zip(axes, panels):
            im = ax.imshow(np.asarray(E, float).T, origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r",
                           vmin=-vmax, vmax=vmax, interpolation="nearest", label=name)
            ax.set_title(f"{name}, max |·| = {np.nanmax(np.abs(E)):.3e}", fontsize=10)
            ax.set_xlabel("x  (dimensionless)")
            ax.set_ylabel("y  (dimensionless)")
        fig.colorbar(im, ax=list(axes), label="U − U_exact at T = 1  (dimensionless)", shrink=0.9)
    verdict_title(fig, f"finest-mesh error, h = {h_value(SPEC['n_meshes'] - 1):g} "
                  f"({SPEC['finest_shape'][0]}×{SPEC['finest_shape'][1]})", submission, result, score)
    return fig


def adi_plot_data(figures_data: dict) -> dict:
    """What the figures draw, from what grade() kept (the validated Submitted record, the
    regenerated errors, the decoded jobs and the grader's hidden reference)."""
    import numpy as np
    sub = figures_data.get("submitted")
    jobs = figures_data.get("jobs") or {}
    ref = figures_data.get("hidden_reference")
    data = {"submitted": None if sub is None or sub.e is None else sub.e,
            "regenerated": figures_data.get("regenerated"), "hidden_reference": ref,
            "error_finest": None if sub is None or sub.tier3 is None else sub.tier3["error_finest"],
            "error_regenerated": None, "hidden": {}}
    fine = jobs.get(f"bench:{SPEC['n_meshes'] - 1}")
    if fine and fine.get("status") == "ok" and fine["U"].shape == SPEC["finest_shape"]:
        with np.errstate(all="ignore"):
            data["error_regenerated"] = fine["U"] - _PROBLEMS["benchmark_exact"](fine["X"], fine["Y"],
                                                                                SPEC["final_time"])
    for h in SPEC["hidden_h"]:
        r = jobs.get(f"hidden:{h:g}")
        if r and r.get("status") == "ok" and ref is not None:
            stride = SPEC["ref_m"][0] // mesh_m(h)
            with np.errstate(all="ignore"):
                err = float(np.max(np.abs(r["U"] - ref[::stride, ::stride]))) \
                    if r["U"].shape == ref[::stride, ::stride].shape else None
            data["hidden"][h] = (r["U"], err)
    return data


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: every ADI figure, as INFO records listing the PNGs."""
    data = adi_plot_data(figures_data)
    kw = dict(submission=submission, result=result, score=score)
    return write_figures(out_dir, [
        ("adi_convergence", "errors vs h (log-log), fitted order, 100x reduction line",
         lambda: plot_adi_convergence(data, **kw)),
        ("adi_hidden", "hidden-instance errors and fields beside the grader's reference",
         lambda: plot_adi_hidden(data, **kw)),
        ("adi_error_surface", "finest-mesh error surface (heat map)",
         lambda: plot_adi_error_surface(data, **kw))])


# =============================================================================
# PRINTING AND CLI
# =============================================================================
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "errors_submitted": lambda v, keys: ", ".join(f"{e:.4e}" for e in v),
    "errors_regenerated": lambda v, keys: ", ".join("—" if e is None else f"{e:.4e}" for e in v),
    "hidden_errors": lambda v, keys: ", ".join("—" if e is None else f"{e:.3e}" for e in v),
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
    add_report_options(p, submissions_help="directory with adi_solver.py, results.json, "
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
    report = grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)
    report.keys["review_required"] = sum(c.status is Status.REVIEW for c in report.checks)
    return report


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

