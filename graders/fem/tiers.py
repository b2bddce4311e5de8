"""3. NUMERICAL TIERS (a part of grade_fem.py; see CONTRIBUTING.md)."""
from graders.common.records import Check, Status
from graders.fem.problem import exact_u, orders, worst
from graders.fem.schema import ARTIFACT_ARRAYS
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
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


