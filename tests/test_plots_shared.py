"""--plot in every grader: the shared PLOTS helpers (graders/common/plots.py); without
matplotlib --plot is a one-line usage error before any grading (and nothing imports it
otherwise); an unwritable DIR is a usage error; the leaderboard figure; drawing failures
are recorded, never raised."""
import subprocess
import sys

import pytest

from conftest import REFERENCE
from test_plots_support import GRADERS, script

SAMPLES = REFERENCE / "scicode" / "samples"
ARGS = {
    "fem": [REFERENCE / "fem" / "gold"],
    "adi": [REFERENCE / "adi" / "gold"],
    "modchallenge": [REFERENCE / "modchallenge" / "submissions" / "zero_baseline", "--public"],
    "engiai": [REFERENCE / "engiai" / "sample_run"],
    "scicode": [SAMPLES / "folder", "--problems", SAMPLES / "problems_synthetic_test.jsonl",
                "--h5", SAMPLES / "problems_synthetic_dev.jsonl"],   # exists; never read
}
# run a grader's main() with `import matplotlib` failing, as on a machine without the extra
NO_MPL = ("import runpy, sys; sys.modules['matplotlib'] = None; sys.argv = sys.argv[1:]; "
          "runpy.run_path(sys.argv[0], run_name='__main__')")


def test_shared_block_sits_above_printing_in_every_grader():
    for name in GRADERS:       # graders/common/plots.py, directly above PRINTING AND CLI
        text = script(name).read_text()
        assert text.index("# PLOTS: --plot DIR") < text.index("# PRINTING AND CLI")
        assert "def plot_report(" in text


@pytest.mark.parametrize("name", GRADERS)
def test_plot_without_matplotlib_is_a_usage_error(name, tmp_path):
    out = tmp_path / "figs"
    proc = subprocess.run([sys.executable, "-c", NO_MPL, str(script(name)), *map(str, ARGS[name]),
                           "--plot", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""                                   # nothing graded
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install '.[plots]'" in lines[0] and lines[0].startswith(f"grade_{name}:")
    assert not out.exists()


def test_graders_do_not_import_matplotlib_without_plot():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            + "; ".join(f"import grade_{n}" for n in GRADERS)
            + "; import grade_fem; grade_fem.main([sys.argv[2], '--no-exec', '--quiet']); "
              "print('matplotlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(script("fem").parent), str(ARGS["fem"][0])],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "False", proc.stdout + proc.stderr


def test_unwritable_plot_dir_is_a_usage_error(tmp_path):
    pytest.importorskip("matplotlib")
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = subprocess.run([sys.executable, str(script("fem")), str(ARGS["fem"][0]), "--plot",
                           str(blocker / "figs")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot create the directory" in proc.stderr


def test_leaderboard_figure():
    pytest.importorskip("matplotlib")
    from test_plots_support import grader, legend_labels, texts
    g = grader("engiai")
    rows = [{"submission": "/runs/b", "score": 0.5, "result": "PARTIAL"},
            {"submission": "/runs/a", "score": 1.0, "result": "PASS"},
            {"submission": "/runs/c$x$", "score": None, "result": "UNGRADED"},
            {"submission": "/runs/d", "score": 0.0, "result": "FAIL"}]
    fig = g.plot_leaderboard(rows)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "d", r"c\$x\$"]   # best first
    assert [round(p.get_width(), 3) for p in ax.patches] == [1.0, 0.5, 0.0, 0.0]
    assert {"PASS", "PARTIAL", "FAIL", "UNGRADED", "full score"} <= set(legend_labels(ax))
    assert "UNGRADED" in texts(fig) and "4 submission(s)" in fig._suptitle.get_text()
    assert ax.get_xlabel().startswith("SCORE") and ax.get_ylabel() == "submission"
    fig.savefig(__import__("io").BytesIO())       # the escaped name renders
    # the reports leaderboard's rows: another score column, extra keys ignored
    rows = [{"rank": 1, "submission": "m1", "result": "PARTIAL", "highest_tier_above_90": 3,
             "overall_accuracy": 0.4}, {"rank": 2, "submission": "m2", "result": "FAIL",
                                        "highest_tier_above_90": -1, "overall_accuracy": 0.0}]
    ax = g.plot_leaderboard(rows, score_key="overall_accuracy", score_label="overall_accuracy").axes[0]
    assert [round(p.get_width(), 3) for p in ax.patches] == [0.4, 0.0]
    assert ax.get_xlabel().startswith("overall_accuracy")


def test_several_submissions_helpers(tmp_path):
    pytest.importorskip("matplotlib")
    from test_plots_support import grader
    g = grader("scicode")
    assert g.plot_subdir("/figs", "/runs/a b/", 0) == "/figs/01-a_b"
    recs = g.write_leaderboard_figure(str(tmp_path), [{"submission": "x", "score": 0.5, "result": "PARTIAL"}])
    assert [c.id for c in recs] == ["figure.leaderboard"] and (tmp_path / "leaderboard.png").is_file()
    sub = tmp_path / g.plot_subdir(".", "/runs/x", 1)       # a child's subfolder is made on demand
    assert g.write_figures(str(sub), [("f", "c", lambda: g.new_figure(1, 1))])[0].measured == str(sub / "f.png")


def test_drawing_failure_is_recorded_not_raised(tmp_path):
    pytest.importorskip("matplotlib")
    from test_plots_support import grader
    g = grader("fem")

    def broken():
        raise ValueError("boom")
    recs = g.write_figures(str(tmp_path), [("ok", "fine", lambda: g.new_figure(2, 2)), ("bad", "x", broken)])
    assert [(c.id, c.status.value) for c in recs] == [("figure.ok", "INFO"), ("figure.bad", "INFO")]
    assert recs[0].measured == str(tmp_path / "ok.png") and (tmp_path / "ok.png").is_file()
    assert recs[1].message == "not drawn: ValueError: boom" and not (tmp_path / "bad.png").exists()
