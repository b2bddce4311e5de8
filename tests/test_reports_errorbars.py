"""Error bars on every estimate (issue 26 item 3): the formulas (docs/reports.md, "Error bars"),
the typed keys *_stderr / *_ci95 of SciCode, modchallenge and EngiAI, and the leaderboard's
marking of neighbours whose intervals overlap."""
import math

import pytest

from conftest import REFERENCE
from test_reports_support import call_main, grader, read_docs, validate


def test_wilson_interval_known_values():
    G = grader("fem")
    assert G.wilson(0.0, 10) == [0.0, 0.2775]          # never of zero width at 0 ...
    assert G.wilson(1.0, 10) == [0.7225, 1.0]          # ... nor at 1, never outside [0, 1]
    assert G.wilson(0.5, 10) == [0.2366, 0.7634]
    se, ci = G.binomial_estimate(62, 100)
    assert se == round(math.sqrt(0.62 * 0.38 / 100), 4) and ci[0] < 0.62 < ci[1]


def test_clustered_error_is_larger_when_steps_in_a_problem_move_together():
    G = grader("scicode")
    independent = [(1, 1)] * 20 + [(0, 1)] * 20          # 40 problems of one step each
    together = [(4, 4)] * 5 + [(0, 4)] * 5                # 40 steps in 10 problems, all-or-nothing
    mixed = [(2, 4)] * 10                                 # every problem half solved
    se_i, _ = G.clustered_estimate(independent)
    se_t, ci_t = G.clustered_estimate(together)
    se_m, _ = G.clustered_estimate(mixed)
    naive = math.sqrt(0.5 * 0.5 / 40)
    assert se_i == round(naive * math.sqrt(40 / 39), 4)      # one step per cluster: binomial x CR1
    assert se_t == pytest.approx(naive * 2 * math.sqrt(10 / 9), abs=1e-4)   # design effect 4
    assert se_m == 0.0                                       # no spread between problems
    assert ci_t[1] - ci_t[0] > 2 * 1.96 * naive              # the interval widens with it
    assert G.clustered_estimate([(3, 4)]) == (None, None)    # one problem: no spread to measure


def test_mean_interval_uses_student_t_and_stays_in_range():
    G = grader("engiai")
    se, ci = G.mean_estimate([0.5, 0.6, 0.7])
    assert se == round(0.1 / math.sqrt(3), 4)
    assert ci == [round(0.6 - 4.303 * 0.1 / math.sqrt(3), 4), round(0.6 + 4.303 * 0.1 / math.sqrt(3), 4)]
    assert G.mean_estimate([0.2, 0.4, 0.6])[1][0] == 0.0       # clipped to the scores' range
    assert G.mean_estimate([0.0, 1.0])[1] == [0.0, 1.0]
    assert G.mean_estimate([0.7]) == (None, None)


def test_scicode_keys_cluster_steps_within_problems():
    G = grader("scicode")
    checks = [G.Check(f"step.{p}.{s}", G.Status.PASS if ok else G.Status.FAIL, "m")
              for p, steps in ((1, [1, 1, 1]), (2, [0, 0]), (3, [1, 0]), (4, [1, 1]))
              for s, ok in enumerate(steps, 1)]
    keys = G.summary_keys(checks, {}, "test", "self", False)
    assert keys["step_accuracy"] == round(6 / 9, 4)
    assert (keys["step_accuracy_stderr"], keys["step_accuracy_ci95"]) == \
        G.clustered_estimate([(3, 3), (0, 2), (1, 2), (2, 2)])
    assert (keys["problem_accuracy_stderr"], keys["problem_accuracy_ci95"]) == G.binomial_estimate(2, 4)


def test_modchallenge_overall_error_is_stratified_by_tier():
    G = grader("modchallenge")
    tiers = [G.TierResult(0, 100, 90, True)] + [G.TierResult(k, 100, 50, True) for k in range(1, 11)]
    row = G.tier_error(tiers[3])
    assert (row["accuracy_stderr"], row["accuracy_ci95"]) == G.binomial_estimate(50, 100)
    assert G.tier_error(G.TierResult(4, 100, 0, False)) == {"accuracy_stderr": None, "accuracy_ci95": None}
    out = G.overall_error([{"tiers": tiers}], 0.5)
    assert out["overall_accuracy_stderr"] == round(math.sqrt(10 * 0.25 / 100) / 10, 4)
    lo, hi = out["overall_accuracy_ci95"]
    assert lo < 0.5 < hi and hi - lo == pytest.approx(2 * 1.96 * 0.0158, abs=2e-3)
    two = G.overall_error([{"tiers": tiers}, {"tiers": tiers}], 0.5)   # two seeds: sqrt(2) smaller
    assert two["overall_accuracy_stderr"] == pytest.approx(out["overall_accuracy_stderr"] / math.sqrt(2), abs=1e-4)


def test_engiai_score_terms_are_the_verdicts_and_every_estimate_has_its_bar(tmp_path, capsys):
    G = grader("engiai")
    rc, out, err = call_main(G, [REFERENCE / "engiai" / "sample_run", "--json", tmp_path / "r.json"], capsys)
    doc = read_docs(tmp_path / "r.json")[0]
    validate(doc, "engiai")
    checks = [G.Check(c["id"], G.Status[c["status"]], c["message"], c["measured"]) for c in doc["checks"]]
    scored, zeros = G.score_terms(checks)
    assert round(sum(c["mean"] for c in scored) / (len(scored) + zeros), 4) == doc["score"]
    keys = doc["keys"]
    lo, hi = keys["score_ci95"]
    assert keys["score_stderr"] > 0 and lo <= doc["score"] <= hi
    assert keys["trial_mean_ci95"][0] <= keys["trial_mean"] <= keys["trial_mean_ci95"][1]
    for cell in doc["cells"]:
        if cell["status"] == "scored" and cell["n"] >= 2:
            assert cell["ci95"][0] <= cell["mean"] <= cell["ci95"][1]
        else:
            assert cell["stderr"] is None and cell["ci95"] is None
    assert f"score_ci95: [{lo:.4f}, {hi:.4f}]" in out and "score_stderr: " in out


def fake_doc(G, name, value, ci):
    return {"grader": G.GRADER_NAME, "submission": f"/x/{name}", "submission_sha256": name * 8,
            "result": "PARTIAL", "score": value,
            "keys": {"step_accuracy": value, "step_accuracy_ci95": ci, "problem_accuracy": value}}


def test_leaderboard_marks_neighbours_whose_intervals_overlap(capsys):
    G = grader("scicode")
    docs = [fake_doc(G, "a", 0.412, [0.35, 0.47]), fake_doc(G, "b", 0.405, [0.34, 0.46]),
            fake_doc(G, "c", 0.10, [0.05, 0.15])]
    rows = G.leaderboard(docs)
    assert [r["submission"] for r in rows] == ["a", "b", "c"]
    assert [r["overlaps_above"] for r in rows] == [None, True, False]
    assert rows[0]["ci95"] == [0.35, 0.47]
    G.print_leaderboard(rows)
    out = capsys.readouterr().out
    assert "ci95" in out and "overlaps_above" in out and "[0.3500, 0.4700]" in out
    assert "not resolved" in out
    fem = grader("fem")                 # a tier score is no estimate: no interval columns
    assert "ci95" not in fem.leaderboard([{"grader": "grade_fem", "submission": "/s", "score": 1.0,
                                           "result": "PASS", "keys": {}}])[0]
