"""FEM --plot: the convergence and artifact figures for a passing (gold), a failing (midpoint
load quadrature: loses nodal superconvergence) and an unexecuted submission; the CLI lists them."""
import json

import numpy as np

import pytest

pytest.importorskip("matplotlib")

from conftest import REFERENCE, run_grader  # noqa: E402
from test_plots_support import (assert_labelled, assert_titled, data_lines, grader,  # noqa: E402
                                legend_labels, script, texts)

g = grader("fem")
GOLD = REFERENCE / "fem" / "gold"


@pytest.fixture(scope="session")
def midpoint():
    from test_fem_support import build
    return build("plots-midpoint", (REFERENCE / "fem" / "variants" / "midpoint" / "fem_solver.py").read_text())


def graded(sub, no_exec=False):
    report = g.grade(str(sub), budget=600.0, strict=False, no_exec=no_exec)
    result, score = g.verdict(report.checks, strict=False, no_exec=no_exec)
    return g.fem_plot_data(report.figures_data), dict(submission=str(sub), result=result, score=score)


@pytest.fixture(scope="session")
def gold_run():
    return graded(GOLD)


@pytest.fixture(scope="session")
def midpoint_run(midpoint):
    return graded(midpoint)


def test_gold_convergence_figure(gold_run):
    data, kw = gold_run
    fig = g.plot_fem_convergence(data, **kw)
    assert_titled(fig, "gold", "PASS")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert_labelled(ax)
    lines = data_lines(ax)
    series = {"dense e*, submitted", "nodal e, submitted", "dense e*, regenerated", "nodal e, regenerated"}
    assert series <= set(lines), lines.keys()
    assert all(len(lines[s].get_xdata()) == 7 for s in series)
    assert "slope-4 guide ∝ h⁴" in lines
    labels = legend_labels(ax)
    assert any(lb.startswith("Tier 1 band") for lb in labels)
    assert any(lb.startswith("round-off regime") for lb in labels)
    # the band: one filled box per gold value, each spanning gold +-25 %
    bands = [c for c in ax.collections if c.get_label().startswith("Tier 1 band") or
             (c.get_label().startswith("_") and len(c.get_paths()) == 1)]
    ys = sorted(round(float(c.get_paths()[0].vertices[:, 1].max()), 15) for c in bands)
    assert [pytest.approx(v * 1.25) for v in sorted(g.SPEC["tier1_gold"].values())] == ys
    assert "dense slope, submitted: 3.980" in texts(fig) and "dense slope, regenerated: 3.980" in texts(fig)


def test_gold_artifact_figure(gold_run):
    data, kw = gold_run
    fig = g.plot_fem_artifact(data, **kw)
    top, bottom = fig.axes[:2]
    assert top.get_yscale() == "log" and bottom.get_yscale() == "log"
    assert_labelled(bottom)
    lines = data_lines(top)
    sub = [k for k in lines if k.startswith("submitted")]
    reg = [k for k in lines if k.startswith("regenerated")]
    assert len(sub) == 1 and len(reg) == 1 and len(lines[sub[0]].get_xdata()) == 2561
    assert any("Tier 3 limit" in k for k in lines)
    # the regeneration is the stored artifact bit for bit (the curve sits on its 1e-18 floor) or,
    # where numpy/OpenBLAS pick other kernels (an AMD EPYC), one ulp off (1.39e-17) at 54 of 2561
    dev = [ln for k, ln in data_lines(bottom).items() if k.startswith("|submitted")]
    assert len(dev) == 1
    ys = dev[0].get_ydata()
    assert max(ys) <= 2 * np.spacing(0.11), sorted(ys)[-3:]


def test_failing_submission_figures(midpoint_run):
    data, kw = midpoint_run
    assert kw["result"] == "FAIL"
    fig = g.plot_fem_convergence(data, **kw)
    assert_titled(fig, "plots-midpoint", "FAIL")
    lines = data_lines(fig.axes[0])
    assert {"dense e*, submitted", "nodal e, regenerated"} <= set(lines)
    # the lost superconvergence is what the figure shows: nodal e(32) far above gold's 4.5e-12
    assert lines["nodal e, submitted"].get_ydata()[0] > 1e-8      # n = 32 comes first
    fig = g.plot_fem_artifact(data, **kw)
    assert_titled(fig, "plots-midpoint", "FAIL")


def test_no_exec_draws_submitted_only():
    data, kw = graded(GOLD, no_exec=True)
    assert data["regenerated"] is None and kw["result"] == "UNGRADED"
    fig = g.plot_fem_convergence(data, **kw)
    lines = data_lines(fig.axes[0])
    assert "dense e*, submitted" in lines and not any("regenerated" in k for k in lines)
    assert "regenerated: none" in texts(fig)
    assert "no regenerated field" in texts(g.plot_fem_artifact(data, **kw))


def test_missing_arrays_still_drawn(tmp_path):
    (tmp_path / "fem_solver.py").write_text((GOLD / "fem_solver.py").read_text())
    data, kw = graded(tmp_path, no_exec=True)
    assert data["submitted"] is None
    assert "artifact arrays absent" in texts(g.plot_fem_artifact(data, **kw))
    g.plot_fem_convergence(data, **kw)


def test_cli_writes_and_lists_figures(tmp_path):
    out = tmp_path / "figs"
    rc, stdout, stderr, doc = run_grader(script("fem"), GOLD, "--plot", out, "--json", tmp_path / "r.json")
    assert rc == 0, stdout + stderr
    recs = {c["id"]: c for c in doc["checks"] if c["id"].startswith("figure.")}
    assert set(recs) == {"figure.fem_convergence", "figure.fem_artifact"}
    for c in recs.values():
        assert c["status"] == "INFO" and c["measured"].endswith(".png")
        assert open(c["measured"], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    lines = stdout.splitlines()
    fig_lines = [i for i, ln in enumerate(lines) if ln.startswith("INFO  figure.")]
    assert fig_lines and fig_lines[-1] + 1 == next(i for i, ln in enumerate(lines) if ln.startswith("summary:"))
    assert doc["result"] == "PASS" and json.dumps(doc)
