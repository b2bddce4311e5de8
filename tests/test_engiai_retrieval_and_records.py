"""EngiAI issue 16, items 3 and 4, and guarded parsing: RAG credit needs a successful retrieval
that precedes the answer; a trial whose record cannot be read stays in its folder's cell as
INVALID (no cell: the run reports it and cannot PASS); deeply nested or oversized input is a
clean FAIL record, never a crash."""
import json
import shutil

import pytest

from conftest import REPO, run_grader, verdict_lines

from test_engiai_support import G, edit_record, gold, rec_path, run  # noqa: F401
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
GRADER = REPO / "grade_engiai.py"


def C(name, args=None, **res):
    return {"name": name, "args": args or {}, "result": res}


def rag_rec():
    return {"problem": "rag_beams2d", "expected": {"conditions": {"expected_volfrac": 0.35}}}


GOOD = C("search_documents", {"query": "volfrac"}, success=True,
         results=[{"source": "beams2d.md", "content": "volfrac = 0.35"}])
ANSWER = C("optimize_design", {"volfrac": 0.35})


def rag(calls):
    return G.score_rag(rag_rec(), calls, "t")[0]["rag_accuracy"]


# ---------------------------------------------------------------- RAG
def test_a_successful_retrieval_before_the_answer_keeps_full_credit():
    assert rag([GOOD, ANSWER]) == pytest.approx(1.0)
    assert rag([C("search_documents", success=True, results=["volfrac 0.35"]), ANSWER]) == \
        pytest.approx(1.0)
    # a failed call retried successfully before the answer: still informed
    assert rag([C("search_documents", success=False, error="timeout"), GOOD, ANSWER]) == \
        pytest.approx(1.0)


@pytest.mark.parametrize("search", [
    C("search_documents", success=False, error="connection refused"),
    C("search_documents", success="true", results=["volfrac 0.35"]),      # a fake success field
    C("search_documents", success=1, results=["volfrac 0.35"]),
    C("search_documents", success=True, error="index empty", results=["volfrac 0.35"]),
    C("search_documents", success=True),                                   # nothing returned
    C("search_documents", success=True, results=[]),
    C("search_documents", success=True, results=[""]),
    C("search_documents", success=True, results=[{"content": "  "}]),
    C("search_documents", success=True, results="volfrac 0.35"),           # not a list
    C("search_documents", success=True, results=[{"score": 0.9}]),         # no text
])
def test_a_failed_or_empty_retrieval_is_a_lucky_guess(search):
    assert rag([search, ANSWER]) == 0.0
    (c,) = G.score_rag(rag_rec(), [search, ANSWER], "t")[1]
    assert "0 successful retrieval(s) of 1" in c.message


def test_a_retrieval_after_the_answer_credits_only_the_call():
    # the RAG tool was used successfully, but after the parameter had been given
    assert rag([ANSWER, GOOD]) == pytest.approx(G.SPEC["rag_modes"][()]["rag_tool_called"])
    # the answer is the FIRST optimize_design carrying the value; a later repeat is not it
    assert rag([ANSWER, GOOD, ANSWER]) == pytest.approx(G.SPEC["rag_modes"][()]["rag_tool_called"])
    (c,) = G.score_rag(rag_rec(), [ANSWER, GOOD], "t")[1]
    assert "no successful retrieval before the answer" in c.message


def test_sample_rag_cell_is_unchanged(tmp_path):
    rc, out, _, doc = run_grader(GRADER, SAMPLE, "--json", tmp_path / "r.json", "--quiet")
    cell = [c for c in doc["cells"] if c["problem"] == "rag_beams2d"][0]
    assert cell["mean"] == pytest.approx(0.5)            # one looked it up, one guessed


# ---------------------------------------------------------------- unreadable records
def sample_copy(tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(SAMPLE, dst)
    return dst


def test_unparseable_trial_json_stays_in_its_cell_as_invalid(tmp_path):
    """The issue's case: `{"broken` as beams2d-full-ex0's record used to leave the cell (0.6767
    shown as ok over the other trial).  Now the cell is INVALID, and an INVALID cell counts 0.0
    in the SCORE, so breaking a record can never raise it (merely excluding the cell would give
    0.8273 > 0.8253 here).  Issue 24: the record's key is unreadable, so the harness's
    beams2d/full example 0 trial is also reported missing in that cell (n 3, counted 0 either
    way); the sample's SCORE is 0.8111 since the HPC outcome rule."""
    run_dir = sample_copy(tmp_path)
    (run_dir / "trials" / "beams2d-full-ex0" / "trial.json").write_text('{"broken')
    rc, out, err, doc = run_grader(GRADER, run_dir, "--json", tmp_path / "r.json")
    assert "Traceback" not in err
    cell = [c for c in doc["cells"] if (c["problem"], c["style"]) == ("beams2d", "full")][0]
    assert cell["status"] == "invalid" and cell["n"] == 3 and cell["n_none"] == 2
    assert cell["n_expected"] == 2
    assert cell["mean"] is None
    rec = [c for c in doc["checks"] if c["id"] == "trial.beams2d-full-ex0.record"][0]
    assert rec["status"] == "FAIL" and "not valid JSON" in rec["message"]
    assert "kept as INVALID in the cell beams2d/full its folder name gives" in rec["message"]
    keys = verdict_lines(out)
    assert keys["RESULT"] == "PARTIAL" and keys["trials_invalid"] == "1"
    assert keys["trials_missing"] == "1"
    scored = [c["mean"] for c in doc["cells"] if c["status"] == "scored"]
    assert len(scored) == 11 and float(keys["SCORE"]) == pytest.approx(sum(scored) / 12, abs=5e-5)
    assert float(keys["SCORE"]) == pytest.approx(0.7442, abs=5e-5) and float(keys["SCORE"]) < 0.8111


@pytest.mark.parametrize("folder,cell", [
    ("training_code_photonics2d-t4-func-verbose-seed9", ("training_code_photonics2d", "t4-func-verbose")),
    ("training_code_beams2d-t4-terse", ("training_code_beams2d", "t4-terse")),
    ("beams2d-workflow-multi-export-ex3", ("beams2d", "workflow-multi-export")),
    ("beams2d-workflow", None), ("beams3d-full-ex0", None), ("rag", None), ("beams2d", None),
])
def test_cell_from_folder(folder, cell):
    assert G.cell_from_folder(folder) == cell


def test_unreadable_record_and_folder_name_is_reported_and_the_run_cannot_pass(gold, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(gold, run_dir)
    (run_dir / "trials" / "mystery").mkdir()
    (run_dir / "trials" / "mystery" / "trial.json").write_text('{"broken')
    checks, trials, cells = grade(run_dir)
    assert trials["mystery"].status == "invalid" and trials["mystery"].problem is None
    (u,) = [c for c in checks if c.id == "run.unplaced_trials"]
    assert u.status is G.Status.FAIL and "mystery" in u.message and u.measured == 1
    # PARTIAL, and the lost trial counts 0.0 in the SCORE (6 scored cells at 1.0 + one 0.0)
    assert G.verdict(checks, strict=False) == ("PARTIAL", round(6 / 7, 4))
    # with a folder name that names a cell, it sits there instead
    shutil.move(run_dir / "trials" / "mystery", run_dir / "trials" / "beams2d-full-retry")
    checks, trials, cells = grade(run_dir)
    assert not [c for c in checks if c.id == "run.unplaced_trials"]
    (cell,) = [c for c in cells if (c["problem"], c["style"]) == ("beams2d", "full")]
    assert cell["status"] == "invalid" and cell["n"] == 2


def test_unreadable_record_outside_the_filter_is_filtered(gold, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(gold, run_dir)
    (run_dir / "trials" / "beams2d-full-retry").mkdir()
    (run_dir / "trials" / "beams2d-full-retry" / "trial.json").write_text("[1")
    checks = G.grade(str(run_dir), {"rag_beams2d"}, {"rag-eval"}).checks
    assert G.verdict(checks, strict=False) == ("PASS", 1.0)


def test_wrong_format_record_keeps_its_records_cell(run):
    edit_record(run, "rag", lambda r: r.update(format="engiai-trial/0"))
    _, trials, cells = grade(run)
    assert trials["rag"].status == "invalid" and trials["rag"].problem == "rag_beams2d"
    (cell,) = [c for c in cells if c["problem"] == "rag_beams2d"]
    assert cell["status"] == "invalid"


# ---------------------------------------------------------------- guarded parsing
def test_deeply_nested_trial_json_is_a_clean_fail(run):
    rec_path(run, "rag").write_text("[" * 200000 + "]" * 200000)
    checks, trials, _ = grade(run)
    (c,) = [c for c in checks if c.id == "trial.rag.record"]
    assert c.status is G.Status.FAIL and "nested too deeply" in c.message


@pytest.mark.parametrize("field", ["format", "problem", "prompt_style", "claimed_scores",
                                   "optimal_call_count", "expected", "artefacts", "tool_calls"])
def test_values_nested_to_the_json_limit_never_crash(run, tmp_path, field):
    """A value nested as deep as json.loads accepts, in any field, grades without an
    exception (repr/str of such a value would overflow the stack)."""
    depth, mark = 950, "__DEEP__"
    deep = "[" * depth + "]" * depth          # spliced in as text: json.loads here would overflow

    def splice(tid, fn):
        p = rec_path(run, tid)
        rec = json.loads(p.read_text())
        fn(rec)
        p.write_text(json.dumps(rec).replace(json.dumps(mark), deep))
    if field == "tool_calls":
        splice("hpc", lambda r: r["tool_calls"][0]["args"].update(command=mark, cfg=mark))
        splice("beams2d-workflow-random", lambda r: r["tool_calls"][-1]["result"].update(
            mirrored=mark, stl_path=mark, scale_xy=mark))
        splice("rag", lambda r: r["tool_calls"][0]["result"].update(results=mark, error=mark))
    else:
        splice("beams2d-workflow-random", lambda r: r.update({field: mark}))
    rc, out, err, _ = run_grader(GRADER, run, "--json", tmp_path / "r.json", "--out", tmp_path / "o")
    assert "Traceback" not in err and rc in (0, 1), err[-2000:]


def test_deeply_nested_training_script_is_a_fail_record_not_a_crash(run):
    (run / "trials" / "code" / "train.py").write_text("x = 1" + "+1" * 200000 + "\n")
    checks, trials, _ = grade(run)
    (c,) = [c for c in checks if c.id == "trial.code.script"]
    assert c.status is G.Status.FAIL and "nested too deeply" in c.message
    assert trials["code"].terms["syntax"] == 0.0
    # an ordinary syntax error is the agent's: syntax 0, an INFO line
    (run / "trials" / "code" / "train.py").write_text("def f(:\n")
    checks, trials, _ = grade(run)
    (c,) = [c for c in checks if c.id == "trial.code.script"]
    assert c.status is G.Status.INFO and "syntax error at line 1" in c.message
