"""PLOTS (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import os
from graders.common.guarded_json import read_json_file
from graders.common.plots import PLOT_COLORS, new_figure, plain_text, verdict_title, write_figures
from graders.common.records import Reject
from graders.engiai.design import binarize
from graders.engiai.families import Unscorable
from graders.engiai.guarded import read_h5_array, safe_member
from graders.engiai.spec import PROBLEMS, SPEC, list_problems, list_styles
# -- end of source-tree preamble: the build keeps only what follows --
# ---- EngiAI figures ------------------------------------------------------------------------
def design_pair(figures_data: dict, trial) -> tuple:
    """(agent design or None, ground truth or None, why-not text) for a design trial, read
    again through the same guarded readers score_design uses (never raises)."""
    cfg = PROBLEMS[trial.problem]
    tdir = (figures_data.get("trial_dirs") or {}).get(trial.trial_id)
    run = figures_data.get("run_refs")
    design = gt = None
    why = []
    try:
        rec = read_json_file(os.path.join(tdir, SPEC["trial_file"]), "plot", SPEC["max_json_bytes"])
        arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
        if arts.get("design") is None:
            why.append("no design produced")
        else:
            design = read_h5_array(safe_member(tdir, SPEC["arrays_file"], "plot"), "design", "plot",
                                   shape=cfg["design_shape"])
        ex = trial.key[2] if trial.key is not None else None     # the harness key's example
        if run is not None and isinstance(ex, int) and not isinstance(ex, bool):
            gt = run.ground_truth(trial.problem, ex)[0]
    except (Reject, Unscorable, TypeError, AttributeError) as exc:
        why.append(exc.check.message if isinstance(exc, Reject) else str(exc))
    if gt is None and not why:
        why.append("no ground truth")
    return design, gt, "; ".join(why)


def plot_engiai_design(trial, design, gt, why: str, *, submission: str, result: str, score):
    """One design trial: the agent's design, the ground truth and their difference (binarised
    at SPEC binarize_at) side by side; IoU and pixel accuracy (recomputed) in the caption."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    fig = new_figure(13.0, 4.4)
    axes = fig.subplots(1, 3)
    shown = None
    for ax, (name, arr) in zip(axes[:2], (("agent's design", design), ("ground truth", gt))):
        ax.set_title(name, fontsize=10)
        if arr is None:
            ax.text(0.5, 0.5, plain_text(why or "absent"), ha="center", va="center",
                    transform=ax.transAxes, fontsize=9, wrap=True)
        else:
            shown = ax.imshow(arr, cmap="gray_r", vmin=0.0, vmax=1.0, interpolation="nearest",
                              aspect="equal")
        ax.set_xlabel("x (pixels)")
        ax.set_ylabel("y (pixels)")
    if shown is not None:
        fig.colorbar(shown, ax=list(axes[:2]), label="material density (0 void, 1 solid)", shrink=0.55)
    ax = axes[2]
    ax.set_title(f"difference (binarised at > {SPEC['binarize_at']:g})", fontsize=10)
    ax.set_xlabel("x (pixels)")
    ax.set_ylabel("y (pixels)")
    if design is not None and gt is not None:
        diff = binarize(design).astype(int) - binarize(gt).astype(int)
        cmap = ListedColormap(["#2166ac", "#f7f7f7", "#b2182b"])
        ax.imshow(diff, cmap=cmap, vmin=-1.5, vmax=1.5, interpolation="nearest", aspect="equal")
        ax.legend(handles=[Patch(fc="#b2182b", label=f"agent only ({int((diff > 0).sum())} px)"),
                           Patch(fc="#2166ac", label=f"ground truth only ({int((diff < 0).sum())} px)"),
                           Patch(fc="#f7f7f7", ec="0.6", label="agree")],
                  loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    else:
        ax.text(0.5, 0.5, "nothing to compare", ha="center", va="center", transform=ax.transAxes)
    t = trial.terms or {}
    fmt = lambda v: "n/a" if v is None else f"{v:.4f}"    # noqa: E731
    fig.supxlabel(f"IoU = {fmt(t.get('iou'))}    pixel accuracy = {fmt(t.get('pixel_accuracy'))}    "
                  f"trial overall = {fmt(trial.score)}   (recomputed by the grader)", fontsize=10)
    verdict_title(fig, f"trial {plain_text(trial.trial_id)} ({trial.problem} / {trial.style})",
                  submission, result, score)
    return fig


def plot_engiai_cells(cells: list, *, submission: str, result: str, score):
    """The problem x style table of cell means as a heat map; a None cell (INVALID, UNSCORABLE,
    UNSUPPORTED: no mean) is hatched grey, marked with its status and a numbered reason listed
    under the map; a combination with no trial is blank."""
    import numpy as np
    from matplotlib.patches import Patch, Rectangle
    problems = [p for p in list_problems() if any(c["problem"] == p for c in cells)]
    styles = [s for s in list_styles() if any(c["style"] == s for c in cells)]
    fig = new_figure(max(7.0, 0.95 * len(styles) + 4.0), 2.6 + 0.5 * max(1, len(problems)))
    ax = fig.add_subplot()
    grid = np.full((max(1, len(problems)), max(1, len(styles))), np.nan)
    for c in cells:
        if c["mean"] is not None:
            grid[problems.index(c["problem"]), styles.index(c["style"])] = c["mean"]
    im = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    notes = []
    for c in cells:
        i, j = problems.index(c["problem"]), styles.index(c["style"])
        if c["mean"] is not None:
            se = f" ±{c['stderr']:.3f}" if c.get("stderr") is not None else ""
            ax.text(j, i, f"{c['mean']:.3f}{se}\nn={c['n']}", ha="center", va="center", fontsize=8,
                    color="white" if c["mean"] < 0.6 else "black")
            continue
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fc="0.85", ec="0.4", hatch="xx", lw=0.5))
        notes.append(f"[{len(notes) + 1}] {c['problem']} / {c['style']}: " + "; ".join(c["reasons"]))
        ax.text(j, i, f"{c['status'].upper()}\n{c['n_none']}/{c['n']} None [{len(notes)}]",
                ha="center", va="center", fontsize=7, color=PLOT_COLORS["FAIL"],
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    ax.set_xticks(range(len(styles)), [plain_text(s) for s in styles], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(problems)), [plain_text(p) for p in problems], fontsize=8)
    ax.set_xlabel("prompt style")
    ax.set_ylabel("problem")
    fig.colorbar(im, ax=ax, label="cell mean of the trial scores (0-1)", shrink=0.9)
    ax.legend(handles=[Patch(fc="0.85", ec="0.4", hatch="xx", label="None cell, reason [k] below "
                             "(UNSCORABLE/UNSUPPORTED: left out of SCORE; INVALID: counts 0)"),
                       Patch(fc="white", ec="0.6", label="no trial")],
              loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=8, frameon=False)
    if notes:
        import textwrap
        fig.supxlabel("\n".join(textwrap.fill(n.replace("$", r"\$")[:600], 160) for n in notes),
                      fontsize=7, ha="left", x=0.02)
    if not cells:
        ax.text(0.5, 0.5, "no cell (no trial graded)", ha="center", va="center", transform=ax.transAxes)
    verdict_title(fig, "cell means per problem and prompt style (± standard error where n >= 2)",
                  submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: one figure per design trial and the cell heat map, as INFO records."""
    figures = []
    for t in figures_data.get("trials") or []:
        if t.problem is None or PROBLEMS[t.problem]["family"] != "design_optimization" or \
                t.status not in ("scored", "unscorable"):
            continue
        iou_v, pa = (t.terms or {}).get("iou"), (t.terms or {}).get("pixel_accuracy")
        caption = (f"design trial {t.trial_id}: agent, ground truth, difference; IoU "
                   f"{'n/a' if iou_v is None else f'{iou_v:.4f}'}, pixel accuracy "
                   f"{'n/a' if pa is None else f'{pa:.4f}'}")
        figures.append((f"engiai_design_{t.trial_id}", caption,
                        lambda t=t: plot_engiai_design(t, *design_pair(figures_data, t),
                                                       submission=submission, result=result, score=score)))
    figures.append(("engiai_cells", "problem x style cell means (heat map), None cells with reasons",
                    lambda: plot_engiai_cells(figures_data.get("cells") or [], submission=submission,
                                              result=result, score=score)))
    return write_figures(out_dir, figures)


