"""modchallenge --plot: accuracy bars per tier (0.90 line, one dot per seed) and cumulative
wall time against the budget, for a graded (zero baseline, 110 public problems) and a failing (gate 3)
submission; the several-seeds figure from recorded tier results."""
import pytest

pytest.importorskip("matplotlib")

from conftest import REFERENCE, run_grader  # noqa: E402
from test_plots_support import (assert_labelled, assert_titled, data_lines, grader,  # noqa: E402
                                legend_labels, script, texts)

g = grader("modchallenge")
SUBS = REFERENCE / "modchallenge" / "submissions"


def graded(sub, **kw):
    fd = {}
    from test_modchallenge_support import small_test_dir     # the public seed's 110 problems, memoised
    args = dict(seeds=[g.SPEC["public_seed"]], total=110, budget=300.0, load_timeout=300.0,
                skip_static=False, no_exec=False, jobs=2, test_dir=small_test_dir())
    args.update(kw)
    report = g.grade(str(sub), **args)
    fd = report.figures_data
    result, score = g.verdict(report.checks, strict=False, no_exec=args["no_exec"])
    return fd, dict(submission=str(sub), result=result, score=score)


@pytest.fixture(scope="session")
def baseline_run():
    return graded(SUBS / "zero_baseline")


def bars(ax):
    return [p for p in ax.patches if p.get_height() > 0 or p.get_width() > 0]


def test_graded_submission(baseline_run):
    fd, kw = baseline_run
    assert kw["result"] == "PARTIAL" and 0 < kw["score"] < 1
    fig = g.plot_mod_accuracy(fd["seeds"], **kw)
    assert_titled(fig, "zero_baseline", "PARTIAL")
    ax = fig.axes[0]
    assert_labelled(ax)
    assert len(ax.patches) == 11                       # one bar per tier, tier 0 included
    tiers = fd["seeds"][0][1]
    heights = {round(p.get_x() + p.get_width() / 2): p.get_height() for p in ax.patches}
    assert heights == {t.tier_id: pytest.approx(t.accuracy) for t in tiers}
    thr = [ln for k, ln in data_lines(ax).items() if k.startswith("ranking threshold")]
    assert len(thr) == 1 and thr[0].get_ydata()[0] == 0.90
    assert "one dot per seed" not in legend_labels(ax)
    fig = g.plot_mod_wall(fd["seeds"], fd["budget"], **kw)
    ax = fig.axes[0]
    lines = data_lines(ax)
    assert lines["budget 300 s"].get_ydata()[0] == 300.0
    seed_lines = [ln for k, ln in lines.items() if k.startswith("seed ")]
    assert len(seed_lines) == 1 and len(seed_lines[0].get_xdata()) == 11
    assert ax.get_ylabel() == "cumulative inference wall time (s)"


def test_several_seeds_one_dot_each():
    T = g.TierResult
    seeds = [("a", [T(k, 100, 95 if k < 4 else 30, k < 10, 0.4 * (k + 1)) for k in range(11)]),
             ("b", [T(k, 100, 92 if k < 4 else 20, True, 0.5 * (k + 1)) for k in range(11)]),
             ("c", [T(k, 100, 99 if k < 4 else 10, True, 0.3 * (k + 1)) for k in range(11)])]
    fig = g.plot_mod_accuracy(seeds, submission="many", result="PARTIAL", score=0.4)
    ax = fig.axes[0]
    dots = data_lines(ax)["one dot per seed"]
    assert len(dots.get_xdata()) == 11
    assert len([ln for ln in ax.get_lines() if ln.get_marker() == "o"]) == 3     # one set per seed
    heights = {round(p.get_x() + p.get_width() / 2): p.get_height() for p in ax.patches}
    assert heights[1] == pytest.approx((0.95 + 0.92 + 0.99) / 3)
    assert "tier not finished (scores 0)" in legend_labels(ax)    # seed a's tier 10
    wall = g.plot_mod_wall(seeds, 300.0, submission="many", result="PARTIAL", score=0.4)
    seed_lines = {k: ln for k, ln in data_lines(wall.axes[0]).items() if k.startswith("seed ")}
    assert len(seed_lines) == 3 and len(seed_lines["seed a"].get_xdata()) == 10


def test_failing_submission_cli(tmp_path):
    out = tmp_path / "figs"
    rc, stdout, stderr, doc = run_grader(script("modchallenge"), SUBS / "bad_static_modmul", "--public",
                                         "--plot", out, "--json", tmp_path / "r.json")
    assert rc == 1 and doc["result"] == "FAIL", stdout + stderr
    recs = {c["id"]: c["measured"] for c in doc["checks"] if c["id"].startswith("figure.")}
    assert set(recs) == {"figure.mod_accuracy", "figure.mod_wall"}
    assert all(open(p, "rb").read(4) == b"\x89PNG" for p in recs.values())
    fd, kw = graded(SUBS / "bad_static_modmul")
    fig = g.plot_mod_accuracy(fd["seeds"], **kw)
    assert_titled(fig, "bad_static_modmul", "FAIL")
    assert "no tier graded" in texts(fig) and not bars(fig.axes[0])
