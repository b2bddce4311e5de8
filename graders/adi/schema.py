"""ARRAY SCHEMA (a part of grade_adi.py; see CONTRIBUTING.md)."""
import dataclasses
import math
from graders.adi.problems import h_value
from graders.adi.spec import SPEC
from graders.common.guarded_fields import get_array
from graders.common.records import Check, Reject, Status, guarded
# -- end of source-tree preamble: the build keeps only what follows --
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


