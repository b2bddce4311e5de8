"""Subsets for smoke tests (issue 26 item 4): --limit N (SciCode steps, modchallenge problems per
tier, EngiAI trials) and explicit selections (--only, --problem, --tier); a subset run says
RESULT: SUBSET, prints no SCORE line, keeps its own verdict and score under keys.subset_result /
keys.subset_score, exits as a full run over those units would, and ranks after every full run."""
import pytest

from conftest import REFERENCE, verdict_lines
from test_reports_support import call_main, grader, read_docs, validate
from test_scicode_support import problem_args, syn


def scicode(argv, tmp_path, capsys):
    G = grader("scicode")
    rc, out, err = call_main(G, [syn()["correct"], *problem_args(), "--split", "all", *argv,
                                 "--json", tmp_path / "r.json"], capsys)
    return rc, out, err, (read_docs(tmp_path / "r.json")[0] if (tmp_path / "r.json").exists() else None)


def doc_checks(tmp_path):
    return read_docs(tmp_path / "r.json")[0]["checks"]


def test_scicode_limit_is_a_labelled_subset(tmp_path, capsys):
    rc, out, err, doc = scicode(["--limit", "2"], tmp_path, capsys)
    keys = verdict_lines(out)
    assert rc == 0 and keys["RESULT"] == "SUBSET" and "SCORE" not in keys
    assert keys["subset"] == "2 of 6 in-scope steps (--limit 2)" and keys["steps_in_scope"] == "2"
    assert keys["subset_result"] == "PASS" and keys["subset_score"] == "1.0000"
    assert "INFO  run.subset" in out and "not a score of the split" in out
    scope = next(c for c in doc_checks(tmp_path) if c["id"] == "input.scope")
    assert scope["measured"] == [6, 3]              # the split's scope, not the subset's
    assert doc["result"] == "SUBSET" and doc["score"] is None and doc["keys"]["subset_score"] == 1.0
    assert len([c for c in doc["checks"] if c["id"].startswith("step.")]) == 2
    validate(doc, "scicode")


def test_scicode_official_outputs_of_a_subset_say_so(tmp_path, capsys):
    rc, out, err, doc = scicode(["--limit", "1", "--out", tmp_path / "out"], tmp_path, capsys)
    text = (tmp_path / "out" / "scicode.txt").read_text()
    assert text.startswith("SUBSET: 1 of 6 in-scope steps") and "correct steps: 1/1" in text


def test_scicode_explicit_selection(tmp_path, capsys):
    steps = sorted(c["id"][5:] for c in scicode([], tmp_path, capsys)[3]["checks"] if c["id"].startswith("step."))
    rc, out, err, doc = scicode(["--only", steps[-1]], tmp_path, capsys)
    assert [c["id"] for c in doc["checks"] if c["id"].startswith("step.")] == [f"step.{steps[-1]}"]
    assert doc["result"] == "SUBSET" and f"--only {steps[-1]}" in doc["keys"]["subset"]
    pid = steps[0].split(".")[0]
    rc, out, err, doc = scicode(["--problem", pid], tmp_path, capsys)
    assert {c["id"][5:].split(".")[0] for c in doc["checks"] if c["id"].startswith("step.")} == {pid}
    rc, out, err, doc = scicode(["--limit", "100"], tmp_path, capsys)    # nothing left out: a full run
    assert doc["result"] == "PASS" and doc["score"] == 1.0 and "subset" not in doc["keys"]


def test_scicode_unknown_step_is_a_usage_error(tmp_path, capsys):
    rc, out, err, doc = scicode(["--only", "999.9"], tmp_path, capsys)
    assert rc == 2 and out == "" and doc is None
    assert err.strip().splitlines() == [err.strip().splitlines()[-1]] and "--only 999.9" in err


def test_engiai_limit_and_problem_are_subsets(tmp_path, capsys):
    G = grader("engiai")
    run = REFERENCE / "engiai" / "sample_run"
    rc, out, err = call_main(G, [run, "--limit", "3", "--json", tmp_path / "r.json"], capsys)
    doc = read_docs(tmp_path / "r.json")[0]
    assert doc["result"] == "SUBSET" and doc["score"] is None and doc["keys"]["trials"] == 3
    assert doc["keys"]["subset"] == "3 of 17 trials (--limit 3)" and "SCORE:" not in out
    assert rc == 1                  # as a full run over those trials: PASS below 1.0
    validate(doc, "engiai")
    rc, out, err = call_main(G, [run, "--problem", "rag_beams2d"], capsys)
    assert verdict_lines(out)["RESULT"] == "SUBSET" and verdict_lines(out)["subset"].startswith("2 of 17")


def test_modchallenge_subset_selects_problems_per_tier():
    G = grader("modchallenge")
    test_set = {k: [f"{k}-{i}" for i in range(100)] for k in range(11)}
    out = G.select_problems(test_set, {"limit": 3, "tiers": [2, 5]})
    assert out == {0: ["0-0", "0-1", "0-2"], 2: ["2-0", "2-1", "2-2"], 5: ["5-0", "5-1", "5-2"]}
    args = G.build_parser().parse_args(["sub", "--limit", "5", "--tier", "1", "--tier", "3"])
    sub = G.subset_of(args)
    assert sub == {"limit": 5, "tiers": [1, 3], "label": "15 of 1100 problems (--limit 5 --tier 1 3)"}
    assert G.subset_of(G.build_parser().parse_args(["sub", "--limit", "100"])) is None   # all of it
    assert G.subset_of(G.build_parser().parse_args(["sub"])) is None


def test_subset_runs_rank_after_every_full_run():
    G = grader("scicode")
    docs = [{"grader": G.GRADER_NAME, "submission": f"/x/{n}", "submission_sha256": n * 8, "result": r,
             "score": None, "keys": {"step_accuracy": v, "problem_accuracy": v}}
            for n, r, v in (("smoke", "SUBSET", 1.0), ("full", "PARTIAL", 0.3))]
    rows = G.leaderboard(docs)
    assert [(r["submission"], r["rank"]) for r in rows] == [("full", 1), ("smoke", 2)]


@pytest.mark.parametrize("name,argv", [
    ("engiai", [str(REFERENCE / "engiai" / "sample_run"), "--limit", "0"]),
    ("modchallenge", [str(REFERENCE / "modchallenge" / "submissions" / "zero_baseline"), "--limit", "-1"]),
    ("engiai", ["--merge", str(REFERENCE / "engiai" / "sample_run" / "reference.h5"), "--limit", "2"]),
    ("modchallenge", ["--write-tests", "/nonexistent-i26/w", "--public", "--tier", "2"]),
])
def test_bad_subset_options_are_usage_errors(name, argv, capsys, monkeypatch):
    G = grader(name)
    monkeypatch.setattr(G, "grade", lambda *a, **k: (_ for _ in ()).throw(AssertionError("graded")))
    rc, out, err = call_main(G, argv, capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "--write-tests" not in argv or "takes no --limit or --tier" in err


def test_a_subset_report_merges_as_a_subset_and_cannot_claim_a_score(tmp_path, capsys):
    """--merge re-judges each report from its records: a SUBSET report (its run.subset record)
    is accepted as SUBSET; the same report edited to claim its subset score as a full SCORE is
    refused."""
    import json
    G = grader("engiai")
    run = REFERENCE / "engiai" / "sample_run"
    call_main(G, [run, "--limit", "3", "--json", tmp_path / "r.json"], capsys)
    rc, out, err = call_main(G, ["--merge", tmp_path / "r.json"], capsys)
    assert rc == 1 and "SUBSET" in out, err
    doc = read_docs(tmp_path / "r.json")[0]
    doc["result"], doc["score"] = doc["keys"]["subset_result"], doc["keys"]["subset_score"]
    (tmp_path / "forged.json").write_text(json.dumps(doc))
    rc, out, err = call_main(G, ["--merge", tmp_path / "forged.json"], capsys)
    assert rc == 2 and "refused" in err and "RESULT SUBSET" in err, err
