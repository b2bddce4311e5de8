"""EngiAI --plot: per design trial agent / ground truth / difference with IoU and pixel accuracy
in the caption, and the problem x style heat map with None cells marked, for a passing run
(beams2d and photonics2d only) and a failing one (the whole sample run under --strict)."""
import json
import shutil

import pytest

pytest.importorskip("matplotlib")

from conftest import REFERENCE, run_grader  # noqa: E402
from test_plots_support import assert_titled, grader, legend_labels, script, texts  # noqa: E402

g = grader("engiai")
RUN = REFERENCE / "engiai" / "sample_run"


def graded(run, problems=None, strict=False):
    report = g.grade(str(run), set(problems or g.list_problems()), set(g.list_styles()))
    fd = report.figures_data
    result, score = g.verdict(report.checks, strict=strict)
    return fd, dict(submission=str(run), result=result, score=score)


@pytest.fixture(scope="session")
def passing():
    return graded(RUN, {"beams2d", "photonics2d"})


@pytest.fixture(scope="session")
def failing():
    return graded(RUN, strict=True)


def design_trials(fd):
    return [t for t in fd["trials"] if t.problem in ("beams2d", "photonics2d") and t.status == "scored"]


def test_design_figure(passing):
    fd, kw = passing
    assert kw["result"] == "PASS"
    trials = design_trials(fd)
    assert len(trials) == 9
    t = next(t for t in trials if t.trial_id == "beams2d-full-ex0")
    fig = g.plot_engiai_design(t, *g.design_pair(fd, t), **kw)
    assert_titled(fig, "sample_run", "PASS")
    panels = [ax for ax in fig.axes if ax.get_images() and ax.get_title()]
    assert [ax.get_title().split(" (")[0] for ax in panels] == ["agent's design", "ground truth", "difference"]
    assert all(ax.get_images()[0].get_array().shape == (50, 100) for ax in panels)
    assert all(ax.get_xlabel() == "x (pixels)" and ax.get_ylabel() == "y (pixels)" for ax in panels)
    caption = fig._supxlabel.get_text()
    assert f"IoU = {t.terms['iou']:.4f}" in caption and f"pixel accuracy = {t.terms['pixel_accuracy']:.4f}" in caption
    diff = panels[2].get_images()[0].get_array()
    n_agent_only = int((diff > 0).sum())
    assert n_agent_only > 0 and f"agent only ({n_agent_only} px)" in legend_labels(panels[2])
    # pixel accuracy is what the difference map shows: the share of agreeing pixels
    assert 1 - (diff != 0).mean() == pytest.approx(t.terms["pixel_accuracy"])


def test_cells_heat_map(failing):
    fd, kw = failing
    assert kw["result"] == "FAIL"
    fig = g.plot_engiai_cells(fd["cells"], **kw)
    assert_titled(fig, "sample_run", "FAIL")
    ax = fig.axes[0]
    problems = {c["problem"] for c in fd["cells"]}
    styles = {c["style"] for c in fd["cells"]}
    assert ax.get_images()[0].get_array().shape == (len(problems), len(styles)) == (8, 12)
    assert ax.get_xlabel() == "prompt style" and ax.get_ylabel() == "problem"
    nones = [c for c in fd["cells"] if c["mean"] is None]
    assert len(nones) == 2 and len([p for p in ax.patches if p.get_hatch() == "xx"]) == 2
    drawn = texts(fig)
    assert "UNSUPPORTED" in drawn and "UNSCORABLE" in drawn
    assert all(r[:40] in drawn.replace("\n", " ") for c in nones for r in c["reasons"])
    assert any(lb.startswith("None cell") for lb in legend_labels(ax))


def test_missing_design_and_cli(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    rec_path = run / "trials" / "beams2d-full-ex0" / "trial.json"
    rec = json.loads(rec_path.read_text())
    rec["artefacts"]["design"] = None
    rec_path.write_text(json.dumps(rec))
    fd, kw = graded(run, {"beams2d"})
    t = next(t for t in fd["trials"] if t.trial_id == "beams2d-full-ex0")
    fig = g.plot_engiai_design(t, *g.design_pair(fd, t), **kw)
    assert "no design produced" in texts(fig) and "nothing to compare" in texts(fig)
    assert "IoU = 0.0000" in fig._supxlabel.get_text()
    rc, out, err, doc = run_grader(script("engiai"), run, "--plot", run / "figs")
    assert rc == 2 and "--plot must not be inside RUN_DIR" in err
    rc, out, err, doc = run_grader(script("engiai"), run, "--problem", "beams2d", "--plot", tmp_path / "figs",
                                   "--json", tmp_path / "r.json")
    recs = [c for c in doc["checks"] if c["id"].startswith("figure.")]
    assert len(recs) == 9 and recs[-1]["id"] == "figure.engiai_cells"
    assert all((tmp_path / "figs" / (c["id"][7:] + ".png")).is_file() for c in recs)
