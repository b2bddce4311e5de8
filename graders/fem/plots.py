"""PLOTS (a part of grade_fem.py; see CONTRIBUTING.md)."""
import math
from graders.common.plots import PLOT_COLORS, new_figure, reciprocal, verdict_title, write_figures
from graders.fem.judging import study_errors
from graders.fem.problem import exact_u, lsq_order
from graders.fem.schema import ARTIFACT_ARRAYS
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
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


