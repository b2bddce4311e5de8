"""Threshold calibration: run the in 't Hout-Foulon ADI family (Douglas, CS, MCS,
HV, plus MCS with the mixed term dropped) on the benchmark's five meshes and on
the hidden instance's three, and apply the published Tier 2 and hidden-instance
thresholds.  Prints the calibration table (benchmark columns, then hidden ones).

    python reference/adi/scheme_survey.py

Every variant is the gold solver (gold/adi_solver.py) with its SCHEME / THETA /
MIXED constants changed, so `variant_source(...)` is also a ready submission
(tests grade a few of them end to end).  The Tier 2 and hidden-instance rules
below are the published ones (problem_spec.md); they are written here
independently of grade_adi.py so the grader can be checked against them.  The
hidden problem itself is read from grade_adi.py (defined once, there); its
reference here is the gold scheme's own Richardson extrapolation, not the
grader's reference solver.
"""
import math
import os
import re
import sys
import types
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD_SOLVER = os.path.join(HERE, "gold", "adi_solver.py")
GRADER = os.path.join(HERE, "..", "..", "grade_adi.py")
H_VALUES = [0.1 * 2.0 ** -p for p in range(5)]

# (label, scheme, theta, mixed term kept, the seed's verdict)
ROWS = [
    ("MCS θ=1/3", "MCS", 1 / 3, True, "accept"),
    ("MCS θ=1/2", "MCS", 1 / 2, True, "accept"),
    ("MCS θ=1", "MCS", 1.0, True, "accept"),
    ("MCS θ=1.5", "MCS", 1.5, True, "accept"),
    ("MCS θ=3", "MCS", 3.0, True, "accept"),
    ("MCS θ=5", "MCS", 5.0, True, "accept"),
    ("MCS θ=8", "MCS", 8.0, True, "accept"),
    ("MCS θ=10", "MCS", 10.0, True, "reject"),
    ("MCS θ=20", "MCS", 20.0, True, "reject"),
    ("CS θ=1/2", "CS", 1 / 2, True, "accept"),
    ("HV θ=1/2", "HV", 1 / 2, True, "accept"),
    ("HV θ=1/2+√3/6", "HV", 1 / 2 + math.sqrt(3) / 6, True, "accept"),
    ("HV θ=2", "HV", 2.0, True, "accept"),
    ("HV θ=8", "HV", 8.0, True, "accept"),
    ("CS θ=1/3", "CS", 1 / 3, True, "reject"),
    ("CS θ=0.8", "CS", 0.8, True, "reject"),
    ("Douglas θ=1/2", "Douglas", 1 / 2, True, "reject"),
    ("Douglas θ=1", "Douglas", 1.0, True, "reject"),
    ("mixed term dropped (MCS 1/3)", "MCS", 1 / 3, False, "reject"),
]

# Rows the hidden instance must reject by itself (first order, or inconsistent)
FIRST_ORDER = ("CS θ=0.8", "Douglas θ=1/2", "Douglas θ=1", "mixed term dropped (MCS 1/3)")

# The published Tier 2 thresholds (problem_spec.md, "Tier 2")
MIN_REDUCTION = 100.0
FIT_BAND = (1.70, 2.30)
LAST_TWO_BAND = (1.60, 2.60)
FINEST_MAX = 1e-2
# The published hidden-instance thresholds (problem_spec.md, "Hidden instance")
HIDDEN_H = (0.1, 0.05, 0.025)
HIDDEN_TOL = 3e-2
HIDDEN_MIN_DROP = 2.0          # h = 0.1 -> 0.05 (seed)
HIDDEN_MIN_FINE_DROP = 2.5     # h = 0.05 -> 0.025 (ours)
HIDDEN_REF_M = (80, 160)       # the gold scheme's Richardson reference


def variant_source(scheme: str, theta: float, mixed: bool = True) -> str:
    """The gold solver's source with its scheme constants replaced."""
    with open(GOLD_SOLVER) as fh:
        src = fh.read()
    for name, value in (("SCHEME", repr(scheme)), ("THETA", repr(float(theta))),
                        ("MIXED", repr(bool(mixed)))):
        src, n = re.subn(rf"^{name} = .*$", f"{name} = {value}", src, count=1, flags=re.M)
        assert n == 1, name
    return src


def load_variant(scheme: str, theta: float, mixed: bool = True):
    mod = types.ModuleType(f"adi_{scheme}_{theta}")
    exec(compile(variant_source(scheme, theta, mixed), GOLD_SOLVER, "exec"), mod.__dict__)
    return mod


def study(mod) -> list:
    """Max-norm errors at T = 1 on the five meshes."""
    errs = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for h in H_VALUES:
            X, Y, U = mod.solve(h)
            errs.append(float(np.max(np.abs(U - mod.BenchmarkProblem.exact(X, Y, 1.0)))))
    return errs


def orders(errs: list) -> dict:
    e = np.asarray(errs, dtype=float)
    h = np.asarray(H_VALUES)
    with np.errstate(all="ignore"):
        eoc = np.log(e[:-1] / e[1:]) / np.log(h[:-1] / h[1:])
        fit = np.polyfit(np.log(h), np.log(e), 1)[0] if np.all(np.isfinite(e)) and np.all(e > 0) \
            else float("nan")
    return {"reduction": e[0] / e[-1], "fitted": float(fit), "eoc": eoc}


def tier2_reasons(errs: list) -> list:
    """Every published Tier 2 rule the errors break (empty = accepted)."""
    e = np.asarray(errs, dtype=float)
    if not np.all(np.isfinite(e)):
        return ["non-finite error (unstable)"]
    o = orders(errs)
    out = []
    if not np.all(np.diff(e) < 0):
        out.append("not strictly decreasing")
    if not o["reduction"] >= MIN_REDUCTION:
        out.append(f"reduction {o['reduction']:.1f}x < {MIN_REDUCTION:g}x")
    if not FIT_BAND[0] <= o["fitted"] <= FIT_BAND[1]:
        out.append(f"fitted order {o['fitted']:.3f} outside {FIT_BAND}")
    for q in (-2, -1):
        if not LAST_TWO_BAND[0] <= o["eoc"][q] <= LAST_TWO_BAND[1]:
            out.append(f"order {o['eoc'][q]:.3f} outside {LAST_TWO_BAND}")
    if not e[-1] < FINEST_MAX:
        out.append(f"finest error {e[-1]:.3e} >= {FINEST_MAX:g}")
    return out


def hidden_instance():
    """(problem, T) of the hidden instance, from grade_adi.py's PROBLEMS source."""
    with open(GRADER) as fh:
        src = fh.read()
    start = src.index("PROBLEM_SOURCE = r\'\'\'") + len("PROBLEM_SOURCE = r\'\'\'")
    ns = {}
    exec(compile(src[start:src.index("\'\'\'", start)], GRADER, "exec"), ns)
    return ns["hidden_problem"](), ns["HIDDEN_T"]


def hidden_reference():
    """The gold scheme (MCS, theta = 1/3) on h = 1/80 and 1/160, Richardson-extrapolated,
    on the 1/80 grid (which holds every hidden mesh's nodes)."""
    prob, T = hidden_instance()
    gold = load_variant("MCS", 1 / 3)
    mc, mf = HIDDEN_REF_M
    coarse, fine = (gold.solve(1.0 / m, T, prob)[2] for m in (mc, mf))
    return (4.0 * fine[:: mf // mc, :: mf // mc] - coarse) / 3.0


def hidden_study(mod, ref) -> tuple:
    """Max |U - reference| on the hidden meshes, and the fields."""
    prob, T = hidden_instance()
    errs, fields = [], []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for h in HIDDEN_H:
            X, Y, U = mod.solve(h, T, prob)
            stride = HIDDEN_REF_M[0] // int(round(1.0 / h))
            e = float(np.max(np.abs(U - ref[::stride, ::stride])))
            errs.append(e if math.isfinite(e) else float("inf"))
            fields.append(U)
    return errs, fields


def hidden_reasons(errs: list) -> list:
    """Every published hidden-instance rule the errors break (empty = passes)."""
    out = [f"h={h:g}: {e:.3e} > {HIDDEN_TOL:g}" for h, e in zip(HIDDEN_H, errs) if not e <= HIDDEN_TOL]
    for i, lim in ((0, HIDDEN_MIN_DROP), (1, HIDDEN_MIN_FINE_DROP)):
        drop = errs[i] / errs[i + 1] if errs[i + 1] > 0 else float("inf")
        if not drop >= lim:
            out.append(f"falls {drop:.2f}x from h={HIDDEN_H[i]:g} to {HIDDEN_H[i + 1]:g} < {lim:g}x")
    return out


def survey(rows=ROWS, keep_fields: bool = False) -> list:
    out = []
    ref = hidden_reference()
    for label, scheme, theta, mixed, seed in rows:
        mod = load_variant(scheme, theta, mixed)
        errs = study(mod)
        reasons = tier2_reasons(errs)
        herrs, fields = hidden_study(mod, ref)
        hreasons = hidden_reasons(herrs)
        row = {"label": label, "scheme": scheme, "theta": theta, "mixed": mixed,
               "errors": errs, "orders": orders(errs), "reasons": reasons,
               "tier2": "reject" if reasons else "accept",
               "hidden_errors": herrs, "hidden_reasons": hreasons,
               "hidden": "fail" if hreasons else "pass",
               "verdict": "reject" if reasons or hreasons else "accept", "seed": seed}
        if keep_fields:
            row["hidden_fields"] = fields
        out.append(row)
    return out


def main() -> int:
    rows = survey()
    hh = ", ".join(f"{h:g}" for h in HIDDEN_H)
    print(f"| scheme | e(0.1) | e(0.00625) | reduction | fitted | last two orders | Tier 2 | "
          f"hidden e({hh}) | hidden drops | hidden | verdict | seed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        e, o = r["errors"], r["orders"]
        if all(math.isfinite(v) for v in e):
            cols = (f"{e[0]:.3e} | {e[-1]:.3e} | {o['reduction']:.1f}x | {o['fitted']:.3f} | "
                    f"{o['eoc'][-2]:.2f}, {o['eoc'][-1]:.2f}")
        else:
            cols = f"{e[0]:.3e} | {e[-1]:.1e} | — | — | —"
        why = f" ({'; '.join(r['reasons'])})" if r["reasons"] else ""
        he = r["hidden_errors"]
        drops = ", ".join(f"{he[i] / he[i + 1]:.2f}x" if he[i + 1] > 0 else "—" for i in range(len(he) - 1))
        hwhy = f" ({'; '.join(r['hidden_reasons'])})" if r["hidden_reasons"] else ""
        print(f"| {r['label']} | {cols} | {r['tier2']}{why} | {', '.join(f'{v:.3e}' for v in he)} | "
              f"{drops} | {r['hidden']}{hwhy} | {r['verdict']} | {r['seed']} |")
    bad = [r["label"] for r in rows if r["verdict"] != r["seed"]]
    print(f"{len(rows) - len(bad)}/{len(rows)} verdicts agree with the seed"
          + (f"; disagree: {', '.join(bad)}" if bad else ""))
    first = [r["label"] for r in rows if r["label"] in FIRST_ORDER and r["hidden"] != "fail"]
    print(f"first-order / inconsistent rows failing the hidden instance alone: "
          f"{len(FIRST_ORDER) - len(first)}/{len(FIRST_ORDER)}" + (f"; pass: {', '.join(first)}" if first else ""))
    return 1 if bad or first else 0


if __name__ == "__main__":
    sys.exit(main())
