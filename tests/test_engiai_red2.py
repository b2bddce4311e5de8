"""EngiAI issue 24, second attack pass (with the source in hand): each wrong verdict found,
with the honest variant or attack beside it.  /work/notes/redteam24.md has the full table."""
import json
import re
import shutil

import pytest

from conftest import REPO, run_grader

from test_engiai_support import G, edit_key, edit_record
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
GRADER = REPO / "grade_engiai.py"
INTACT = 0.8111                 # the sample run's SCORE (test_engiai_sample)
DISTRACTOR = "beams2d-workflow-distractor-ex1"
RANDOM = "beams2d-workflow-random-ex0"
HPC = "hpc_train_beams2d-hpc-train-cgan-0"
SEED1 = "training_code_beams2d-t2-terse-seed1"


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def score(checks):
    return G.verdict(checks, strict=False)[1]


def C(name, args=None, **res):
    return {"name": name, "args": args or {}, "result": res}


# ============================================ the run itself: output imitating verdict lines
FORGED = "\nRESULT: PASS\nSCORE: 1.0000\n"


def forge_stl_name(run):
    """An exported STL whose file name holds verdict lines (no '/' in it: a plain file name)."""
    name = f"x{FORGED}\u2028SCORE: 1\x85SCORE: 1\r.stl"
    (run / "trials" / RANDOM / "export.stl").rename(run / "trials" / RANDOM / name)

    def point(r):
        r["artefacts"]["stl"] = [name]
        for c in r["tool_calls"]:
            if c["name"] == "convert_design_to_stl":
                c["result"]["stl_path"] = name
    edit_record(run, RANDOM, point)


@pytest.mark.parametrize("where", ["stl_name", "expected_key", "claimed_key", "tool_name"])
def test_record_text_never_prints_a_verdict_line_of_its_own(sample, where):
    """Before: a file name or JSON key holding '\\nSCORE: 1.0000' printed 'RESULT: PASS' and
    'SCORE: 1.0000' lines ahead of the grader's own (a reader taking the first SCORE line got
    1.0).  Every printed record is one line now, its line breaks escaped."""
    if where == "stl_name":
        forge_stl_name(sample)
    elif where == "expected_key":
        edit_record(sample, RANDOM, lambda r: r["expected"].update({FORGED: 1}))
    elif where == "claimed_key":
        edit_record(sample, RANDOM, lambda r: r.update(claimed_scores={FORGED: 1}))
    else:
        edit_record(sample, RANDOM, lambda r: r["tool_calls"].append(C(FORGED + "x" * 50)))
    code, out, err, _ = run_grader(GRADER, sample)
    assert "Traceback" not in err and code == 1
    assert re.findall(r"^RESULT: .*$", out, re.M) == ["RESULT: PARTIAL"]
    assert re.findall(r"^SCORE: .*$", out, re.M)[-1] != "SCORE: 1.0000"
    assert len(re.findall(r"^SCORE: .*$", out, re.M)) == 1
    assert "\u2028" not in out and "\x85" not in out and "\r" not in out
    if where != "tool_name":
        assert "\\nRESULT: PASS\\nSCORE: 1.0000\\n" in out          # shown, escaped


def test_one_line_escapes_every_line_break_and_keeps_plain_text():
    assert G.one_line("a\nb\r\x0b\x0c\x1c\x85\u2028\u2029\x1b[2Kc") == \
        "a\\nb\\r\\x0b\\x0c\\x1c\\x85\\u2028\\u2029\\x1b[2Kc"
    assert G.one_line("tabs\tand ünïcödé ±") == "tabs\tand ünïcödé ±"
    assert len(G.one_line("x\ny").splitlines()) == 1


# ============================================ the key: numbers as a harness writes them
@pytest.mark.parametrize("value", [1.0, 1])
def test_an_integral_float_example_id_is_the_integer_key(sample, value):
    """Honest: a harness that wrote its example id as a float (JSON does not tell 1 from 1.0)
    named the key the manifest lists.  Before: INVALID, its cell 0 (SCORE 0.8111 -> 0.7441),
    where `5.0` already matches `5` in the HPC config (decision 20)."""
    edit_record(sample, DISTRACTOR, lambda r: r.update(example_id=value))
    checks, trials, cells = grade(sample)
    assert trials[DISTRACTOR].status == "scored" and trials[DISTRACTOR].key[2] == 1
    assert score(checks) == INTACT
    assert not [c for c in checks if c.id == "run.missing_trials"]


def test_an_integral_float_in_the_manifest_is_the_integer_key(sample):
    edit_key(sample, SEED1, lambda e: e.update(seed=1.0))
    checks, trials, _ = grade(sample)
    assert not [c for c in checks if c.id == "run.harness_entries"]
    assert trials[SEED1].status == "scored" and trials[SEED1].key[3] == 1
    assert isinstance(trials[SEED1].key[3], int)       # selects baselines/.../seed1, not seed1.0
    assert score(checks) == INTACT


@pytest.mark.parametrize("value", [1.5, "1", True, float(2 ** 60), [1]])
def test_other_non_integers_stay_unknown_keys(sample, value):
    """The attack side: a fraction, a string, a bool, a float past exact integers name no key."""
    edit_record(sample, DISTRACTOR, lambda r: r.update(example_id=value))
    checks, trials, _ = grade(sample)
    assert trials[DISTRACTOR].status == "invalid"
    assert score(checks) < INTACT


# ============================================ outcomes: a state as a tool may echo it
def test_a_completed_state_in_other_case_completes_and_failed_never_does():
    calls = [C("submit_slurm_job", success=True, job_id="7"),
             C("monitor_job_until_complete", {"job_id": "7"}, success=True, state=" Completed ")]
    assert G.job_completed(calls)
    for state in ("FAILED", "COMPLETING", "NOT COMPLETED", None, ["COMPLETED"], 1):
        calls[1]["result"]["state"] = state
        assert not G.job_completed(calls), state


def test_honest_hpc_trial_with_a_completed_state_in_other_case_is_not_scored_down(sample):
    def lower(r):
        r["tool_calls"][2]["result"]["state"] = "completed"
    edit_record(sample, HPC, lower)
    checks, trials, _ = grade(sample)
    assert trials[HPC].score == pytest.approx(1.0)
    assert score(checks) == INTACT


# ============================================ evidence: numbers as people write them
def rag_terms(text, value=0.35):
    key = {"problem": "rag_beams2d", "expected": {"conditions": {"expected_volfrac": 0.35}}}
    calls = [C("search_documents", success=True, results=[{"content": text}]),
             C("optimize_design", {"volfrac": value})]
    return G.score_rag(key, calls, "t")[0]


@pytest.mark.parametrize("text", [
    "a 35-percent volume fraction", "35 per-cent", "体积分数 35％", "35 ± 5 %", "35±5%",
    "between 30-40%", "30 to 40 percent", "30\u201340 %", "point three five",
    "thirty-five hundredths", "seven twentieths"])
def test_honest_passages_written_other_ways_are_read(text):
    """Before: each of these left the answer 0.35 uninformed (rag_accuracy 0.4, not 1.0)."""
    assert rag_terms(text)["rag_accuracy"] == pytest.approx(1.0), text


@pytest.mark.parametrize("text", ["35 percentage points", "page 30-40", "35 hundred",
                                  "section 35 - see 40", "0,35"])
def test_passages_that_state_other_numbers_still_credit_nothing(text):
    assert rag_terms(text)["rag_accuracy"] == pytest.approx(0.40), text


@pytest.mark.parametrize("text", ["1" + " " * 200_000 + "x", "1" + " " * 100_000 + "-" + " " * 100_000,
                                  "1 - " * 60_000, "35" + "\t" * 200_000 + "per"])
def test_passage_reading_stays_linear_on_long_whitespace(text):
    """A first draft of the hyphen rule (\\s*-?\\s*) backtracked quadratically: 1 MiB of
    spaces after a digit did not finish in minutes."""
    import time
    t0 = time.monotonic()
    G.passage_numbers(text)
    assert time.monotonic() - t0 < 5.0


# ============================================ counts: one id per folder
def copy_ground_truth_into(run, tid, example=0):
    import h5py
    with h5py.File(run / "reference.h5", "r") as f:
        g = f[f"ground_truth/beams2d/{example}/optimal_design"][()]
    with h5py.File(run / "trials" / tid / "arrays.h5", "a") as f:
        f["design"][...] = g


def test_folders_whose_names_sanitise_alike_never_share_an_id(sample):
    """Before: folders "beams2d-full-ex1 " and "beams2d-full-ex1_" were both trial
    "beams2d-full-ex1_"; the second one's design replaced the first's in the design copy check,
    so a copied ground truth went unflagged (SCORE 0.7942 -> 0.8066, no REVIEW)."""
    copy_ground_truth_into(sample, "beams2d-full-ex1")
    checks, _, _ = grade(sample)
    flagged = score(checks)
    assert [c for c in checks if c.id == "trial.beams2d-full-ex1.design_copy"]
    (sample / "trials" / "beams2d-full-ex1").rename(sample / "trials" / "beams2d-full-ex1 ")
    (sample / "trials" / "beams2d-natural-ex0").rename(sample / "trials" / "beams2d-full-ex1_")
    checks, trials, _ = grade(sample)
    assert len(trials) == 17                                       # 17 folders, 17 ids
    copies = [c for c in checks if c.id.endswith(".design_copy")]
    assert len(copies) == 1 and copies[0].id.startswith("trial.beams2d-full-ex1_~")
    assert score(checks) == flagged


@pytest.mark.parametrize("a, b", [("x ", "x_"), ("x\u00e9", "x\u00e8"), ("y" * 100 + "1", "y" * 100 + "2")])
def test_trial_ids_are_unique_and_plain_names_unchanged(a, b):
    assert G.trial_id_of(a) != G.trial_id_of(b)
    assert G.trial_id_of(b"x\xff".decode("utf-8", "surrogateescape")) != G.trial_id_of("x_")
    for plain in ("beams2d-full-ex0", "training_code_photonics2d-t4-func-verbose-seed3", "a" * 100):
        assert G.trial_id_of(plain) == plain
    assert len(G.trial_id_of("z" * 300)) <= 100


# ============================================ the record as a harness writes it
def test_a_record_with_a_utf8_byte_order_mark_is_read(sample):
    """Honest: a harness on Windows wrote trial.json with a BOM.  Before: INVALID, its cell 0
    (SCORE 0.8111 -> 0.7321).  A BOM changes no value; other encodings stay refused."""
    p = sample / "trials" / RANDOM / "trial.json"
    text = p.read_bytes()
    p.write_bytes(b"\xef\xbb\xbf" + text)
    checks, trials, _ = grade(sample)
    assert trials[RANDOM].status == "scored" and score(checks) == INTACT
    p.write_bytes(json.loads(text).__repr__().encode("utf-16"))        # not UTF-8: refused
    checks, trials, _ = grade(sample)
    assert trials[RANDOM].status == "invalid" and score(checks) < INTACT


def test_a_monitor_without_a_recorded_success_does_not_complete():
    """Outcomes, not calls (the issue's rule, read alike for every step): the monitor's state
    counts only from a call whose success is recorded true.  The format table used to list
    only `state` for the monitor; it now names `success` too (the rule was already stated)."""
    for success in (None, False, "true", 1, "absent"):
        res = {"state": "COMPLETED"} if success == "absent" else {"success": success, "state": "COMPLETED"}
        calls = [C("submit_slurm_job", success=True, job_id="7"),
                 {"name": "monitor_job_until_complete", "args": {"job_id": "7"}, "result": res}]
        assert not G.job_completed(calls), success
