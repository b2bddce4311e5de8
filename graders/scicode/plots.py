"""PLOTS (a part of grade_scicode.py; see CONTRIBUTING.md)."""
from graders.common.plots import new_figure, plain_text, verdict_title, write_figures
from graders.common.records import Status
from graders.scicode.sandbox_ops import _step_key
# -- end of source-tree preamble: the build keeps only what follows --
# ---- SciCode figures -----------------------------------------------------------------------
STEP_STATES = (("passed", "#2e7d32"), ("failed (model)", "#c62828"),
               ("failed (harness)", "#ef8f00"), ("not run", "#bdbdbd"))


def step_states(steps: list, checks: list) -> dict:
    """{step: state} for the in-scope steps [(problem, index, step)], from the records alone:
    a PASS step record is passed, a FAIL one is failed (harness) when the census classified
    it a harness fault, else failed (model); a step with no record did not run."""
    rec = {c.id[5:]: c for c in checks if c.id.startswith("step.")}
    out = {}
    for _, _, sid in steps:
        c = rec.get(sid)
        out[sid] = ("not run" if c is None else "passed" if c.status is Status.PASS
                    else "failed (harness)" if "[harness:" in c.message else "failed (model)")
    return out


def plot_scicode_grid(steps: list, states: dict, *, submission: str, result: str, score):
    """The problems x steps grid: one cell per in-scope step, coloured passed / failed (model)
    / failed (harness) / not run; positions with no in-scope step (no-test steps) blank."""
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    problems = sorted({p for p, _, _ in steps}, key=lambda p: _step_key(p + ".0"))
    width = max([i for _, i, _ in steps], default=0) + 1
    grid = np.full((max(1, len(problems)), width), np.nan)
    code = {name: k for k, (name, _) in enumerate(STEP_STATES)}
    for p, i, sid in steps:
        grid[problems.index(p), i] = code[states.get(sid, "not run")]
    fig = new_figure(max(6.5, 0.45 * width + 4.5), 2.2 + 0.24 * max(1, len(problems)))
    ax = fig.add_subplot()
    ax.imshow(np.ma.masked_invalid(grid), cmap=ListedColormap([c for _, c in STEP_STATES]),
              vmin=-0.5, vmax=len(STEP_STATES) - 0.5, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(width), [str(i + 1) for i in range(width)], fontsize=8)
    ax.set_yticks(np.arange(len(problems)), [plain_text(p) for p in problems],
                  fontsize=7 if len(problems) > 30 else 9)
    ax.set_xticks(np.arange(width + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(problems) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1.0)
    ax.tick_params(which="minor", length=0)
    if len(steps) <= 300:
        for p, i, sid in steps:
            ax.text(i, problems.index(p), plain_text(sid), ha="center", va="center", fontsize=7,
                    color="white" if states.get(sid) != "not run" else "black")
    counts = {name: sum(v == name for v in states.values()) for name, _ in STEP_STATES}
    ax.legend(handles=[Patch(fc=c, label=f"{name}: {counts[name]}") for name, c in STEP_STATES]
              + [Patch(fc="white", ec="0.6", label="no in-scope step (no-test step or none)")],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.set_xlabel("step within the problem (1-based)")
    ax.set_ylabel("problem id")
    if not steps:
        ax.text(0.5, 0.5, "no in-scope step", ha="center", va="center", transform=ax.transAxes)
    verdict_title(fig, f"{counts['passed']}/{len(steps)} steps passed", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: the problems x steps grid, as an INFO record listing the PNG."""
    steps = figures_data.get("steps") or []
    states = step_states(steps, checks)
    return write_figures(out_dir, [
        ("scicode_steps", "problems x steps grid: passed / failed (model) / failed (harness) / not run",
         lambda: plot_scicode_grid(steps, states, submission=submission, result=result, score=score))])


