"""PLOTS (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
from graders.common.plots import PLOT_COLORS, new_figure, plain_text, verdict_title, write_figures
from graders.modchallenge.spec import SPEC, TIERS
from graders.common.stats import wilson
# -- end of source-tree preamble: the build keeps only what follows --
# ---- modchallenge figures ------------------------------------------------------------------
def _tier_label(tier: tuple) -> str:
    tid, lo, hi = tier[0], tier[1], tier[2]
    return f"{tid}\n(×, no mod)" if tid == 0 else f"{tid}\n{lo}–{hi} b"


def plot_mod_accuracy(seeds: list, *, submission: str, result: str, score):
    """Accuracy per tier as bars (the mean over seeds; tier 0 hatched: an unscored diagnostic),
    one dot per seed when several seeds were graded, the 0.90 ranking line; incomplete tiers
    marked.  seeds: [(label, [TierResult, ...])]."""
    import numpy as np
    fig = new_figure(9.5, 5.2)
    ax = fig.add_subplot()
    ids = [t[0] for t in TIERS]
    graded = [(label, {t.tier_id: t for t in tiers}) for label, tiers in seeds if tiers]
    thr = SPEC["rank_threshold"]
    ax.axhline(thr, color=PLOT_COLORS["FAIL"], ls="--", lw=1.2,
               label=f"ranking threshold {thr:.2f} (highest_tier_above_90)")
    if graded:
        acc = np.array([[g[1][k].accuracy if k in g[1] else 0.0 for k in ids] for g in graded])
        mean = acc.mean(axis=0)
        ax.bar(ids[1:], mean[1:], color=PLOT_COLORS["submitted"], width=0.7, edgecolor="black", lw=0.5,
               label="accuracy" + (f", mean of {len(graded)} seeds" if len(graded) > 1 else ""))
        ax.bar(ids[:1], mean[:1], color="0.85", hatch="//", width=0.7, edgecolor="black", lw=0.5,
               label="tier 0: unscored diagnostic")
        cis = []                # each tier's Wilson 95 % interval, its problems pooled over seeds
        for k in ids:
            done = [g[1][k] for g in graded if k in g[1] and g[1][k].completed]
            n = sum(t.total for t in done)
            cis.append(wilson(sum(t.correct for t in done) / n, n) if n else None)
        has = [i for i, ci in enumerate(cis) if ci]
        if has:
            ax.errorbar([ids[i] for i in has], [mean[i] for i in has],
                        yerr=[[max(0.0, mean[i] - cis[i][0]) for i in has],
                              [max(0.0, cis[i][1] - mean[i]) for i in has]],
                        fmt="none", ecolor="black", elinewidth=1.0, capsize=3,
                        label="95 % interval (Wilson, problems pooled over seeds)")
        for k, m, top, ci in zip(ids, mean, acc.max(axis=0), cis):
            ax.text(k, max(top, ci[1] if ci else 0.0) + 0.025, f"{m:.2f}", ha="center",
                    va="bottom", fontsize=8)
        if len(graded) > 1:
            rng = np.random.default_rng(0)
            for i, (label, _) in enumerate(graded):
                ax.plot(np.array(ids) + rng.uniform(-0.18, 0.18, len(ids)), acc[i], "o", ms=4,
                        color="black", alpha=0.7, label="one dot per seed" if i == 0 else None)
        incomplete = sorted({k for _, g in graded for k in ids if k in g and not g[k].completed}
                            | {k for _, g in graded for k in ids if k not in g})
        for j, k in enumerate(incomplete):
            ax.plot(k, 0.04, "x", color=PLOT_COLORS["FAIL"], ms=9, mew=2,
                    label="tier not finished (scores 0)" if j == 0 else None)
    else:
        ax.text(0.5, 0.5, "no tier graded (a gate failed before inference, or --no-exec)",
                ha="center", va="center", transform=ax.transAxes, fontsize=11)
    ax.set_xticks(ids, [_tier_label(t) for t in TIERS], fontsize=8)
    ax.set_xlabel("tier (bits of p); tier 0 is the unscored multiplication diagnostic")
    ax.set_ylabel("accuracy (fraction of the tier's problems exactly right)")
    ax.set_ylim(0.0, 1.1)
    ax.set_xlim(-0.6, ids[-1] + 0.6)
    ax.grid(True, axis="y", color="0.9", lw=0.6)
    ax.legend(loc="upper right", fontsize=8, framealpha=0.95)
    verdict_title(fig, "accuracy per tier" + (f" over {len(graded)} seeds" if len(graded) > 1 else ""),
                  submission, result, score)
    return fig


def plot_mod_wall(seeds: list, budget: float, *, submission: str, result: str, score):
    """Cumulative inference wall time at the end of each tier, one line per seed, against
    the budget; a tier that did not finish has no point."""
    fig = new_figure(9.5, 5.0)
    ax = fig.add_subplot()
    ids = [t[0] for t in TIERS]
    ax.axhline(budget, color=PLOT_COLORS["FAIL"], ls="--", lw=1.2, label=f"budget {budget:g} s")
    drawn, low = 0, budget
    for label, tiers in seeds:
        pts = [(t.tier_id, t.wall) for t in tiers if t.completed and t.wall is not None]
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=5, lw=1.3,
                label=f"seed {plain_text(label)[:16]}")
        drawn += 1
        low = min([low] + [p[1] for p in pts if p[1] > 0])
    if not drawn:
        ax.text(0.5, 0.5, "no tier finished (not executed, or a gate failed)", ha="center",
                va="center", transform=ax.transAxes, fontsize=11)
    ax.set_yscale("log")
    ax.set_ylim(max(low, 1e-3) / 3, budget * 3)
    ax.set_xticks(ids, [_tier_label(t) for t in TIERS], fontsize=8)
    ax.set_xlim(-0.6, ids[-1] + 0.6)
    ax.set_xlabel("tier (bits of p), in the order inference runs")
    ax.set_ylabel("cumulative inference wall time (s)")
    ax.grid(True, color="0.9", lw=0.6)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.95)
    verdict_title(fig, "cumulative wall time per tier", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: every modchallenge figure, as INFO records listing the PNGs."""
    seeds = figures_data.get("seeds") or []
    budget = float(figures_data.get("budget") or SPEC["budget_s"])
    kw = dict(submission=submission, result=result, score=score)
    return write_figures(out_dir, [
        ("mod_accuracy", "accuracy per tier, the 0.90 line" + (", one dot per seed" if len(seeds) > 1
                                                                else ""),
         lambda: plot_mod_accuracy(seeds, **kw)),
        ("mod_wall", "cumulative wall time per tier against the budget",
         lambda: plot_mod_wall(seeds, budget, **kw))])


