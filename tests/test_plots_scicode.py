"""SciCode --plot: the problems x steps grid for a passing run (the committed samples) and a
failing one (a wrong answer, a missing generation, a harness fault from lost special-step
context), and for --no-exec (every step not run)."""
import shutil

import pytest

pytest.importorskip("matplotlib")

from conftest import REFERENCE, run_grader  # noqa: E402
from test_plots_support import assert_titled, grader, legend_labels, script  # noqa: E402

g = grader("scicode")
SAMPLES = REFERENCE / "scicode" / "samples"
PROBLEMS = [SAMPLES / "problems_synthetic_test.jsonl", SAMPLES / "problems_synthetic_dev.jsonl"]


@pytest.fixture(scope="session")
def targets():
    from test_scicode_support import syn
    return syn()["targets.h5"]


def run(gens, targets, tmp_path, *flags):
    out = tmp_path / "figs"
    rc, stdout, stderr, doc = run_grader(script("scicode"), gens, "--problems", *PROBLEMS, "--h5", targets,
                                         *flags, "--plot", out, "--json", tmp_path / "r.json")
    return rc, doc, out


def grid_of(doc, steps):
    checks = [g.Check(c["id"], g.Status(c["status"]), c["message"]) for c in doc["checks"]]
    states = g.step_states(steps, checks)
    return states, g.plot_scicode_grid(steps, states, submission=doc["submission"], result=doc["result"],
                                       score=doc["score"])


STEPS = [("62", 1, "62.2"), ("901", 0, "901.1"), ("901", 1, "901.2"), ("901", 2, "901.3"),
         ("902", 0, "902.1"), ("902", 1, "902.2")]


def test_passing_grid(targets, tmp_path):
    rc, doc, out = run(SAMPLES / "folder", targets, tmp_path, "--special-steps", SAMPLES / "special")
    assert rc == 0 and (out / "scicode_steps.png").is_file()
    assert [c["id"] for c in doc["checks"] if c["id"].startswith("figure.")] == ["figure.scicode_steps"]
    states, fig = grid_of(doc, STEPS)
    assert set(states.values()) == {"passed"}
    assert_titled(fig, "folder", "PASS")
    ax = fig.axes[0]
    grid = ax.get_images()[0].get_array()
    assert grid.shape == (3, 3)                  # problems 62, 901, 902 x steps 1..3
    assert grid.mask[0, 0] and grid.mask[0, 2]   # 62.1 is a no-test step; 62 has no third step
    assert "passed: 6" in legend_labels(ax)
    # the grader's own in-scope step list is what STEPS spells out
    args = g.build_parser().parse_args([str(SAMPLES / "folder"), "--problems", *map(str, PROBLEMS),
                                        "--h5", str(targets), "--no-exec"])
    assert sorted(g.grade_submission(args, args.submissions[0]).figures_data["steps"]) == sorted(STEPS)


def test_failing_grid(targets, tmp_path):
    gens = tmp_path / "gens"
    shutil.copytree(SAMPLES / "folder", gens)
    (gens / "901.1.txt").write_text("def scale(x, k):\n    return x\n")
    (gens / "902.2.py").unlink()
    rc, doc, out = run(gens, targets, tmp_path)          # no --special-steps: 62.2 loses context
    assert rc == 1 and doc["result"] == "PARTIAL"
    states, fig = grid_of(doc, STEPS)
    assert states["62.2"] == "failed (harness)" and states["901.1"] == "failed (model)"
    assert states["902.2"] == "failed (model)" and states["901.2"] == "passed"
    labels = legend_labels(fig.axes[0])
    assert {"passed: 2", "failed (model): 3", "failed (harness): 1", "not run: 0"} <= set(labels)
    assert_titled(fig, "gens", "PARTIAL")


def test_no_exec_grid_not_run(targets, tmp_path):
    rc, doc, out = run(SAMPLES / "folder", targets, tmp_path, "--no-exec")
    assert rc == 2 and (out / "scicode_steps.png").is_file()
    states, fig = grid_of(doc, STEPS)
    assert set(states.values()) == {"not run"} and "not run: 6" in legend_labels(fig.axes[0])
