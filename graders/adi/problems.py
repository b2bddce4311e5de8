"""PROBLEMS (a part of grade_adi.py; see CONTRIBUTING.md)."""
import threading
from graders._embed import embed
from graders.adi.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
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
PROBLEM_SOURCE = embed("adi/child_problems.py")
class _LazyProblems(dict):
    """PROBLEM_SOURCE's names, executed on the first look-up (it imports numpy: ~0.1 s the grader
    spends after launching the isolated child rather than before, issue 21)."""

    def __missing__(self, key):
        with _PROBLEMS_LOCK:
            if "__loaded__" not in self:
                names = {}
                exec(compile(PROBLEM_SOURCE, "<grade_adi PROBLEMS>", "exec"), names)
                self.update(names)
                dict.__setitem__(self, "__loaded__", True)
        return dict.__getitem__(self, key)


_PROBLEMS_LOCK = threading.Lock()
_PROBLEMS: dict = _LazyProblems()


def h_value(p: int) -> float:
    """seed: h_values exactly 0.1·2^-p."""
    return SPEC["h0"] * 2.0 ** -p


def mesh_m(h: float) -> int:
    return int(round(1.0 / h))


def mesh_tag(h: float) -> str:
    return f"h={h:g}"


