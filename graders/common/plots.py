"""PLOTS (a part of grade_fem.py, grade_adi.py, grade_engiai.py, grade_modchallenge.py, grade_scicode.py; see CONTRIBUTING.md)."""
import math
import os
from graders.common.bench import GRADER_NAME
from graders.common.records import Check, Status
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# PLOTS: --plot DIR writes PNG figures (matplotlib, an optional extra: pip install '.[plots]').
# matplotlib is imported only here and only under --plot; figures are drawn on the Agg canvas
# without pyplot (no global state, nothing shown).  Every plot_* function RETURNS its Figure,
# so tests check what is drawn; write_figures saves them and lists them as INFO records
# (`figure.<name>`, measured = the PNG's path) at the end of the report and in --json.
# =============================================================================
PLOT_COLORS = {"submitted": "#1f77b4", "regenerated": "#d62728", "reference": "#2ca02c",
               "limit": "#444444", "PASS": "#2e7d32", "PARTIAL": "#ef8f00", "FAIL": "#c62828",
               "UNGRADED": "#9e9e9e", "SUBSET": "#6a1b9a"}


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
    rows: [{"submission": str, score_key: float | None, "result": str, "ci95": [lo, hi] (optional:
    drawn as an error bar), ...}] (the leaderboard's rows; score_key names the column drawn, e.g.
    "overall_accuracy" or "step_accuracy")."""
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
        ci = r.get("ci95")
        if score is not None and isinstance(ci, (list, tuple)) and len(ci) == 2:
            ax.errorbar(score, i, xerr=[[max(0.0, score - ci[0])], [max(0.0, ci[1] - score)]],
                        fmt="none", ecolor="black", elinewidth=1.0, capsize=3,
                        label=None if "ci" in seen else "95 % interval")
            seen.add("ci")
        right = max(score or 0.0, ci[1] if score is not None and isinstance(ci, (list, tuple))
                    and len(ci) == 2 else 0.0)
        ax.text(right + 0.01, i, "UNGRADED" if score is None else f"{score:.4g}  {result}",
                va="center", fontsize=9)
    ax.set_yticks(range(len(ranked)), names)
    ax.invert_yaxis()
    ax.set_xlim(0.0, max([1.0] + [value(r) or 0.0 for r in ranked]) * 1.25)
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


