"""EngiAI issue 24: the answer key is the harness's, not the record's; every artefact, trace step
and value counts once, for what it is.  One section per item of the issue; each attack sits
beside the honest variant it must not touch."""
import json
import os
import shutil

import h5py
import numpy as np
import pytest

from conftest import REPO, run_grader, verdict_lines

from test_engiai_support import B, G, edit_key, edit_record, gold, rec_path, rekey, run  # noqa: F401
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
GRADER = REPO / "grade_engiai.py"
INTACT = 0.8111                 # the sample run's SCORE (test_engiai_sample)
DISTRACTOR = "beams2d-workflow-distractor-ex1"
SEED1 = "training_code_beams2d-t2-terse-seed1"


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def by_id(checks, cid):
    return [c for c in checks if c.id == cid]


def score(checks):
    return G.verdict(checks, strict=False)[1]


def C(name, args=None, **res):
    return {"name": name, "args": args or {}, "result": res}


# ================================================================ 1. the key is the harness's
def test_sample_run_is_keyed_and_unchanged_by_the_key(sample):
    checks, trials, cells = grade(sample)
    (h,) = by_id(checks, "run.harness")
    assert h.status is G.Status.INFO and "17 trial(s)" in h.message
    assert not [c for c in checks if c.id.endswith(".key")]         # every record agrees
    assert all(c["n"] == c["n_expected"] for c in cells)
    assert score(checks) == INTACT


def test_rewritten_expectation_in_the_record_earns_nothing_and_is_a_finding(sample):
    """The issue's attack: the distractor trial took the preview height 4.0; its record now
    says the export value was 4.0.  Before: task completion 1.0.  The harness's key is used."""
    def forge(r):
        r["expected"]["stl_expected_params"]["scale_z"] = 4.0
        r["expected"]["distractor"]["export_value"] = 4.0
    edit_record(sample, DISTRACTOR, forge)
    checks, trials, _ = grade(sample)
    t = trials[DISTRACTOR]
    assert t.terms["task_completion"] == 0.0
    (d,) = by_id(checks, f"trial.{DISTRACTOR}.distractor")
    assert d.measured["took"] == "preview"
    (k,) = by_id(checks, f"trial.{DISTRACTOR}.key")
    assert k.status is G.Status.FAIL and "expected.distractor.export_value" in k.message
    assert score(checks) == INTACT          # the same cell mean; the run is PARTIAL already


def test_honest_record_copy_with_other_number_spellings_agrees(sample):
    """Honest: the record's copy written with 12 for 12.0 and keys in another order."""
    def respell(r):
        p = r["expected"]["stl_expected_params"]
        r["expected"]["stl_expected_params"] = {"threshold": p["threshold"], "mirror_y": False,
                                                "scale_z": 12, "scale_xy": 1}
    edit_record(sample, DISTRACTOR, respell)
    checks, _, _ = grade(sample)
    assert not by_id(checks, f"trial.{DISTRACTOR}.key")
    rec = json.loads(rec_path(sample, DISTRACTOR).read_text())
    del rec["expected"]                                     # a record with no copy at all
    rec_path(sample, DISTRACTOR).write_text(json.dumps(rec))
    checks, trials, _ = grade(sample)
    assert not by_id(checks, f"trial.{DISTRACTOR}.key")
    assert trials[DISTRACTOR].terms["task_completion"] == 0.0   # still scored on the key


def test_loose_rag_tolerance_in_the_record_makes_no_wrong_answer_accurate(gold, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(gold, run)

    def wrong(r):
        r["tool_calls"][1]["args"]["volfrac"] = 0.5
        r["tool_calls"][0]["result"]["results"] = ["beams2d: volfrac 0.5, rmin 2.0"]
        r["expected"]["conditions"]["expected_volfrac_tolerance"] = 0.5
    edit_record(run, "rag", wrong)
    checks, trials, _ = grade(run)
    assert trials["rag"].terms["volfrac_accuracy"] == 0.0
    assert trials["rag"].score == pytest.approx(0.60)       # rmin 0.40 + tool 0.20, volfrac 0
    (k,) = by_id(checks, "trial.rag.key")
    assert "expected.conditions.expected_volfrac_tolerance" in k.message
    # the harness's own tolerance decides: where the manifest says 0.25, 0.5 is accurate
    edit_key(run, "rag", lambda e: e["expected"]["conditions"].update(expected_volfrac_tolerance=0.25))
    edit_record(run, "rag", lambda r: r["expected"]["conditions"].update(expected_volfrac_tolerance=0.25))
    checks, trials, _ = grade(run)
    assert trials["rag"].terms["volfrac_accuracy"] == 1.0 and not by_id(checks, "trial.rag.key")


def test_breaking_weak_trials_to_unknown_keys_never_raises_the_score(sample):
    """The issue's attack: every trial scoring below the run's SCORE pointed at an example id or
    seed no reference names.  Before: they became harness gaps left out (0.8253 -> 0.9089).
    Now they are INVALID (an unknown key), and their cells count 0."""
    _, trials, _ = grade(sample)
    weak = [t for t in trials.values() if t.score is not None and t.score < INTACT]
    assert len(weak) >= 5
    for t in weak:
        field = "example_id" if G.PROBLEMS[t.problem]["family"] in (
            "design_optimization", "rag_retrieval") else "seed"
        edit_record(sample, t.trial_id, lambda r: r.update({field: 999}))
    checks, trials, cells = grade(sample)
    for t in weak:
        assert trials[t.trial_id].status == "invalid"
        assert "not a trial the harness ran" in trials[t.trial_id].reasons[0]
    assert score(checks) < INTACT
    (m,) = by_id(checks, "run.missing_trials")         # their keys are no folder's now
    assert m.measured == len(weak)


@pytest.mark.parametrize("value", [True, "0", 0.0, [0], None])
def test_a_key_field_of_the_wrong_type_is_invalid_never_a_gap(sample, value):
    edit_record(sample, "beams2d-full-ex1", lambda r: r.update(example_id=value))
    checks, trials, _ = grade(sample)
    t = trials["beams2d-full-ex1"]
    assert t.status == "invalid" and t.problem == "beams2d"
    assert score(checks) < INTACT


def test_a_weak_trial_removed_is_missing_and_counts_zero(sample):
    """Dropping a weak trial's folder used to raise its cell's mean; the harness says how many
    trials a cell holds."""
    shutil.rmtree(sample / "trials" / "beams2d-full-ex1")        # the weaker of the two
    checks, trials, cells = grade(sample)
    (m,) = by_id(checks, "run.missing_trials")
    assert m.status is G.Status.FAIL and m.measured == 1 and "example_id=1" in m.message
    (cell,) = [c for c in cells if (c["problem"], c["style"]) == ("beams2d", "full")]
    assert cell["status"] == "invalid" and cell["n"] == 2 and cell["n_expected"] == 2
    assert score(checks) < INTACT


def test_harness_gap_needs_harness_side_evidence(sample):
    """Honest twin of the unknown key: the manifest lists seed 7, the reference holds no
    baseline for it: a harness gap (UNSCORABLE), left out of the SCORE as the seed asks."""
    checks, trials, cells = grade(sample)
    t = trials["training_code_beams2d-t2-terse-seed7"]
    assert t.status == "unscorable" and "no baseline" in t.reasons[0]
    assert score(checks) == INTACT


def test_unusable_manifest_entries_are_reported_and_their_trials_invalid(sample):
    prompts = B.read_prompts(sample)
    for e in prompts:
        if e["problem"] == "rag_beams2d" and e["example_id"] == 1:
            e["prompt_style"] = "rag-guess"
    prompts.append({"problem": "beams3d"})
    prompts.append(dict(prompts[0]))                                  # listed twice
    B.write_prompts(sample, prompts)
    checks, trials, _ = grade(sample)
    (bad,) = by_id(checks, "run.harness_entries")
    assert bad.status is G.Status.FAIL and bad.measured == 3
    assert trials["rag_beams2d-rag-eval-1"].status == "invalid"
    assert trials["beams2d-full-ex0"].status == "scored"              # the first entry kept


@pytest.mark.parametrize("breakage", ["missing", "not json", "wrong format", "float dataset"])
def test_a_broken_manifest_grades_the_run_zero_cleanly(sample, tmp_path, breakage):
    with h5py.File(sample / "reference.h5", "a") as fh:
        del fh["harness/trials"]
        if breakage == "not json":
            fh["harness/trials"] = np.frombuffer(b"{\"format", dtype=np.uint8)
        elif breakage == "wrong format":
            fh["harness/trials"] = np.frombuffer(b'{"format": "x", "trials": []}', dtype=np.uint8)
        elif breakage == "float dataset":
            fh["harness/trials"] = np.zeros(4)
    rc, out, err, doc = run_grader(GRADER, sample, "--json", tmp_path / "r.json")
    keys = verdict_lines(out)
    assert rc == 1 and "Traceback" not in err
    assert keys["RESULT"] == "PARTIAL" and keys["SCORE"] == "0.0"
    assert "FAIL  run.harness" in out and keys["trials_invalid"] == "17"


def test_a_huge_number_in_the_harness_expectation_is_a_clean_gap(run):
    edit_key(run, "beams2d-workflow-random", lambda e: e.update(
        prompt_style="workflow-conditional",
        expected={"stl_expected_params": {"compliance_threshold": 10 ** 400, "branch_high": {},
                                          "branch_low": {}, "common": {}}}))
    edit_record(run, "beams2d-workflow-random", lambda r: r.update(
        prompt_style="workflow-conditional", expected=None))
    _, trials, _ = grade(run)
    t = trials["beams2d-workflow-random"]
    assert t.status == "unscorable" and "compliance_threshold" in t.reasons[0]


def test_a_record_copy_nested_too_deeply_to_compare_is_a_finding_not_a_crash(run):
    text = rec_path(run, "beams2d-workflow-random").read_text()
    deep = "[" * 960 + '"x"' + "]" * 960          # as deep as the JSON parser still takes
    rec_path(run, "beams2d-workflow-random").write_text(
        text.rstrip().rstrip("}") + ', "expected": {"stl_expected_params": ' + deep + "}}")
    checks, trials, _ = grade(run)
    t = trials["beams2d-workflow-random"]
    assert t.status in ("scored", "invalid")
    assert [c for c in checks if c.id.startswith("trial.beams2d-workflow-random.")
            and c.status is G.Status.FAIL]


# ================================================================ 2. each thing counts once
def leaky_and_good(run, tid="photonics2d-multi"):
    d = run / "trials" / tid
    B.write_stl_binary(str(d / "leaky.stl"), B.mesh(B.photonic())[:-1])
    return d


def test_an_stl_name_listed_nine_times_counts_once(run):
    """The issue's attack: a leaky export hidden among nine listings of a watertight one
    (before: 0.9)."""
    leaky_and_good(run)
    edit_record(run, "photonics2d-multi", lambda r: r["artefacts"].update(
        stl=["leaky.stl"] + ["a.stl"] * 9))
    checks, trials, _ = grade(run)
    assert trials["photonics2d-multi"].terms["watertightness"] == 0.5
    (s,) = by_id(checks, "trial.photonics2d-multi.stl_set")
    assert s.measured == 2 and "8 name(s) listed again" in s.message


def test_byte_identical_copies_under_other_names_count_once(run):
    d = leaky_and_good(run)
    for i in range(5):
        shutil.copy(d / "a.stl", d / f"copy{i}.stl")
    edit_record(run, "photonics2d-multi", lambda r: r["artefacts"].update(
        stl=["leaky.stl", "a.stl"] + [f"copy{i}.stl" for i in range(5)]))
    checks, trials, _ = grade(run)
    assert trials["photonics2d-multi"].terms["watertightness"] == 0.5
    # the same triangles written as ASCII are the same content too
    B.write_stl_ascii(str(d / "copy0.stl"), B.mesh(B.photonic()))
    _, trials, _ = grade(run)
    assert trials["photonics2d-multi"].terms["watertightness"] == 0.5


def test_copies_of_one_solid_with_float_noise_count_once(run):
    """Other bytes, the same solid: a copy whose corners carry float noise, another triangulation
    of the same solid (quads split on the other diagonal) - each witnesses the same cells at the
    same scale, mirroring and height."""
    d = leaky_and_good(run)
    rng = np.random.default_rng(11)
    t = B.mesh(B.photonic()).astype(np.float64)
    names = ["leaky.stl", "a.stl"]
    for i in range(4):
        B.write_stl_binary(str(d / f"noisy{i}.stl"), t * (1.0 + rng.uniform(-2e-7, 2e-7, t.shape)))
        names.append(f"noisy{i}.stl")
    B.write_stl_binary(str(d / "flipped.stl"), t[:, [0, 2, 1]][:, ::-1])    # same faces, rotated order
    names.append("flipped.stl")
    edit_record(run, "photonics2d-multi", lambda r: r["artefacts"].update(stl=names))
    checks, trials, _ = grade(run)
    assert trials["photonics2d-multi"].terms["watertightness"] == 0.5
    (s,) = by_id(checks, "trial.photonics2d-multi.stl_solids")
    assert s.measured == 2


def test_honest_two_distinct_exports_both_count(run):
    checks, trials, _ = grade(run)
    assert trials["photonics2d-multi"].terms["watertightness"] == 1.0
    assert not by_id(checks, "trial.photonics2d-multi.stl_set")


def test_a_copy_varying_unscored_fields_under_another_key_is_still_a_duplicate(sample):
    """The issue's attack: the best trial copied over a weaker one's key, varying fields the
    grader never scores (claimed scores, a note, a tool's query, a result's timing)."""
    src, dst = "beams2d-workflow-random-ex0", "beams2d-workflow-derived-params-ex0"
    rec = json.loads(rec_path(sample, src).read_text())
    rec.update(trial_id=dst, prompt_style="workflow-derived-params", seed=48, note="rerun",
               claimed_scores={"overall": 0.99})
    rec["tool_calls"][0]["args"].update(comment="x", seed=7)     # design args are never scored
    rec["tool_calls"][1]["result"]["elapsed_s"] = 3.25
    rec["tool_calls"][1]["result"]["objectives"]["wall_time"] = 9.0   # not an objective scored
    for name in ("arrays.h5", "export.stl"):
        shutil.copy(sample / "trials" / src / name, sample / "trials" / dst / name)
    rec_path(sample, dst).write_text(json.dumps(rec))
    checks, trials, _ = grade(sample)
    (d,) = [c for c in checks if c.id.endswith(".duplicate")]     # the later folder is flagged
    assert d.id == f"trial.{src}.duplicate" and d.measured == dst
    assert d.status is G.Status.REVIEW
    assert trials[dst].content_sha256 == trials[src].content_sha256
    # its own key's expectation is used: the random export's parameters are wrong for it
    assert trials[dst].terms["task_completion"] == 0.0


def test_a_rag_copy_varying_a_passage_source_is_still_a_duplicate(sample):
    src, dst = "rag_beams2d-rag-eval-0", "rag_beams2d-rag-eval-1"
    rec = json.loads(rec_path(sample, src).read_text())
    rec.update(trial_id=dst, example_id=1, seed=53)
    rec["tool_calls"][0]["result"]["results"][0]["source"] = "other.md"
    rec["tool_calls"][0]["args"]["query"] = "what is the default volume fraction"
    rec_path(sample, dst).write_text(json.dumps(rec))
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{dst}.duplicate")
    # the copies count once (round 4): the copy scores 0.0 until cleared, 1.0 if cleared
    assert d.measured == src and trials[src].score == 1.0 and trials[dst].score == 0.0
    assert trials[dst].terms["overall_if_cleared"] == 1.0
    assert score(checks) == INTACT       # it replaced a 0.0 trial: the SCORE is not raised


def test_honest_trials_with_different_scored_content_are_not_duplicates(sample):
    checks, trials, _ = grade(sample)
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    shas = [t.content_sha256 for t in trials.values() if t.content_sha256]
    assert len(shas) == len(set(shas)) == 16


def test_a_better_copy_claiming_the_same_key_never_replaces_the_original(sample):
    """Two folders claim one key: the key counts once, with the worse outcome."""
    shutil.copytree(sample / "trials" / "beams2d-natural-ex0", sample / "trials" / "beams2d-natural-b")

    def fix_render(r):
        r["tool_calls"][2]["result"] = {"success": True}
        r["trial_id"] = "beams2d-natural-b"
    edit_record(sample, "beams2d-natural-b", fix_render)
    checks, trials, cells = grade(sample)
    assert trials["beams2d-natural-b"].score > trials["beams2d-natural-ex0"].score
    (d,) = by_id(checks, "trial.beams2d-natural-b.duplicate_key")
    assert d.measured == "beams2d-natural-ex0" and trials["beams2d-natural-b"].status == "duplicate"
    (cell,) = [c for c in cells if (c["problem"], c["style"]) == ("beams2d", "natural")]
    assert cell["n"] == 1 and cell["mean"] == pytest.approx(trials["beams2d-natural-ex0"].score)
    assert score(checks) == INTACT


def test_an_extra_trial_under_no_key_makes_its_cell_invalid(sample):
    shutil.copytree(sample / "trials" / "hpc_train_beams2d-hpc-train-cgan-0",
                    sample / "trials" / "hpc_train_beams2d-hpc-train-cgan-1")
    edit_record(sample, "hpc_train_beams2d-hpc-train-cgan-1", lambda r: r.update(seed=77))
    checks, trials, cells = grade(sample)
    assert trials["hpc_train_beams2d-hpc-train-cgan-1"].status == "invalid"
    (cell,) = [c for c in cells if c["problem"] == "hpc_train_beams2d"]
    assert cell["status"] == "invalid" and cell["n"] == 2 and cell["n_expected"] == 1
    assert score(checks) < INTACT


# ================================================================ 3. outcomes, not calls
def hpc_key():
    return {"problem": "hpc_train_beams2d", "expected": {"training_config": {
        "seed": 1, "epochs": 50, "algorithm": "cgan_cnn_2d", "problem_id": "beams2d"}}}


GEN = C("generate_training_command", {"seed": 1, "epochs": 50}, success=True)
METRICS = {"IOG": 1, "COG": 1, "FOG": 1, "MMD": 1, "DPP": 1, "viol": 0}


def test_hpc_steps_that_failed_are_not_credited():
    """The issue's case: submit failed, the monitor said FAILED, evaluation failed.  Before:
    workflow completion 0.85 for calling the tools; now only the generated command counts."""
    calls = [GEN, C("submit_slurm_job", success=False, error="sbatch: invalid account"),
             C("monitor_job_until_complete", success=True, state="FAILED"),
             C("evaluate_model", success=False, error="no checkpoint")]
    terms, (info,) = G.score_hpc(hpc_key(), calls, "hpc_train_beams2d", "hpc-train-cgan", "t")
    assert terms["step_completion"] == 0.25 and terms["config_correct"] == 1.0
    assert terms["workflow_completion"] == pytest.approx(0.85 * 0.25 + 0.15)
    assert "not done: submit_slurm_job, monitor_job_until_complete, evaluate_model" in info.message


def test_hpc_recovered_failure_still_completes():
    """Honest: the first job fails, the agent diagnoses, resubmits, and the second completes."""
    calls = [GEN, C("submit_slurm_job", success=True, job_id="11"),
             C("monitor_job_until_complete", {"job_id": "11"}, success=True, state="FAILED"),
             C("diagnose_job_failure", {"job_id": "11"}, success=True),
             C("submit_slurm_job", success=True, job_id=12),
             C("monitor_job_until_complete", {"job_id": 12}, success=True, state="COMPLETED"),
             C("evaluate_model", success=True, metrics=METRICS)]
    terms, _ = G.score_hpc(hpc_key(), calls, "hpc_train_beams2d", "hpc-train-cgan", "t")
    assert terms["step_completion"] == 1.0 and terms["workflow_completion"] == pytest.approx(1.0)


def test_a_completed_state_for_a_job_never_submitted_does_not_count():
    calls = [GEN, C("submit_slurm_job", success=True, job_id="11"),
             C("monitor_job_until_complete", {"job_id": "99"}, success=True, state="COMPLETED")]
    assert not G.job_completed(calls)
    assert not G.job_completed([C("monitor_job_until_complete", success=True, state="COMPLETED"),
                                C("submit_slurm_job", success=True, job_id="1")])   # before it
    assert G.job_completed(calls[:2] + [C("monitor_job_until_complete", success=True,
                                          state="COMPLETED")])                    # names none


def test_training_code_reads_the_job_the_same_way(run):
    def failed_job(r):
        for c in r["tool_calls"]:
            if c["name"] == "submit_slurm_job":
                c["result"] = {"success": False, "error": "QOS"}
    edit_record(run, "code", failed_job)
    _, trials, _ = grade(run)
    t = trials["code"].terms
    assert t["slurm_accepted"] == 0.0 and t["job_completion"] == 0.0   # the monitor said COMPLETED


# ================================================================ 4. domains
def test_a_density_outside_zero_one_is_a_finding_not_binarised(sample):
    """The issue's attack: -21.6 in one void cell makes the raw mean match the volume fraction
    (constraint match 1.0) while the binarised design is unchanged."""
    tdir = sample / "trials" / "beams2d-workflow-random-ex0"
    with h5py.File(tdir / "arrays.h5", "r") as fh:
        d = fh["design"][()].astype(np.float64)
    with h5py.File(sample / "reference.h5", "r") as fh:
        vf = float(fh["ground_truth/beams2d/0"].attrs["volfrac"])
    d[25, 5] = d[25, 5] - (d.mean() - vf) * d.size            # a void cell
    assert d[25, 5] < -1 and abs(d.mean() - vf) < 1e-9
    B.h5_write(str(tdir / "arrays.h5"), {"design": d})
    checks, trials, _ = grade(sample)
    t = trials["beams2d-workflow-random-ex0"]
    assert t.terms["constraint_match"] == 0.0 and t.terms["iou"] == 0.0
    (f,) = by_id(checks, "trial.beams2d-workflow-random-ex0.design")
    assert f.status is G.Status.FAIL and "outside the density domain" in f.message
    assert score(checks) < INTACT


@pytest.mark.parametrize("excess", [1e-9, 5e-7])
def test_round_off_beyond_the_bounds_is_accepted(run, excess):
    d = B.beam().astype(np.float64)
    d[0, 0], d[25, 20] = 1.0 + excess, -excess
    B.h5_write(str(run / "trials" / "beams2d-full" / "arrays.h5"), {"design": d})
    checks, trials, _ = grade(run)
    assert by_id(checks, "trial.beams2d-full.design")[0].status is G.Status.PASS


def test_samples_outside_the_domain_are_held_not_silently_used(run):
    with h5py.File(run / "trials" / "code" / "arrays.h5", "r") as fh:
        s = fh["samples"][()].astype(np.float64)
    B.h5_write(str(run / "trials" / "code" / "arrays.h5"), {"samples": s * 3.0 - 1.0})
    checks, trials, _ = grade(run)
    (c,) = by_id(checks, "trial.code.sample_domain")
    assert c.status is G.Status.REVIEW
    assert trials["code"].terms["model_quality"] == 0.0
    assert "model_quality_if_cleared" in trials["code"].terms


def test_a_ground_truth_outside_the_domain_is_a_harness_gap(run):
    with h5py.File(run / "reference.h5", "a") as fh:
        fh["ground_truth/beams2d/0/optimal_design"][0, 0] = 7.0
    _, trials, _ = grade(run)
    assert trials["beams2d-full"].status == "unscorable"
    assert "ground truth unusable" in trials["beams2d-full"].reasons[0]


# ================================================================ 5. a run-wide budget
def test_a_big_stl_listed_150_times_is_read_once(run):
    """The issue's attack (an 8 MiB STL listed 150 times was parsed 150 times, > 4 min): now one
    read, charged once to the run's budget."""
    d = run / "trials" / "photonics2d-multi"
    big = np.tile(B.mesh(B.photonic()), (40, 1, 1))          # ~1 MiB, not closed (doubled)
    B.write_stl_binary(str(d / "big.stl"), big)
    size = os.path.getsize(d / "big.stl")
    edit_record(run, "photonics2d-multi", lambda r: r["artefacts"].update(stl=["big.stl"] * 150))
    report = G.grade(str(run), set(G.list_problems()), set(G.list_styles()))
    (b,) = by_id(report.checks, "run.budget")
    assert b.status is G.Status.INFO and b.measured < 2 * size + (1 << 20)
    t = [t for t in report.figures_data["trials"] if t.trial_id == "photonics2d-multi"][0]
    assert t.terms["watertightness"] == 0.0


def test_past_the_read_budget_reads_are_refused_and_score_zero(run, monkeypatch):
    monkeypatch.setitem(G.SPEC, "run_max_read_bytes", 60_000)
    checks, trials, _ = grade(run)
    (b,) = by_id(checks, "run.budget")
    assert b.status is G.Status.FAIL and "refused" in b.message
    assert G.verdict(checks, strict=False)[1] < 1.0
    assert [t for t in trials.values() if t.status == "invalid" or
            any(c.status is G.Status.FAIL and c.id.startswith(f"trial.{t.trial_id}.")
                for c in checks)]


def test_past_the_time_budget_the_run_is_graded_zero_not_dropped(run, tmp_path):
    rc, out, err, _ = run_grader(GRADER, run, "--budget", "1e-9", "--quiet")
    keys = verdict_lines(out)
    assert rc == 1 and "Traceback" not in err
    assert keys["RESULT"] == "PARTIAL" and keys["SCORE"] == "0.0"
    assert "FAIL  run.budget" in out
    rc, _, err, _ = run_grader(GRADER, run, "--budget", "-1")
    assert rc == 2 and "--budget must be a positive" in err


def test_honest_runs_stay_well_within_the_budget(sample):
    checks, _, _ = grade(sample)
    (b,) = by_id(checks, "run.budget")
    assert b.status is G.Status.INFO and b.measured < G.SPEC["run_max_read_bytes"] / 1000


# ================================================================ 6. evidence as people write it
def rag_terms(text, value=0.35):
    key = {"problem": "rag_beams2d", "expected": {"conditions": {"expected_volfrac": 0.35}}}
    calls = [C("search_documents", success=True, results=[{"content": text}]),
             C("optimize_design", {"volfrac": value})]
    return G.score_rag(key, calls, "t")[0]


@pytest.mark.parametrize("text", [
    "the default volume fraction is 35 percent", "35 per cent of the domain", "35%", "35 pct",
    "volfrac 0.35", "a fraction of 7/20", "thirty-five percent", "Thirty five per cent",
    "zero point three five", "volume fraction: .35"])
def test_honest_passages_are_read_as_people_write_numbers(text):
    """The issue's honest case: "35 percent" was not read as 0.35 (accuracy credit lost)."""
    assert rag_terms(text)["rag_accuracy"] == pytest.approx(1.0), text


@pytest.mark.parametrize("text", ["beams2d uses 35 elements per row", "three fifths", "7/2",
                                  "thirty five", "a quarter of the volume"])
def test_passages_that_do_not_state_the_value_credit_no_accuracy(text):
    assert rag_terms(text)["rag_accuracy"] == pytest.approx(0.40), text


def test_fractions_and_words_read_other_values_too():
    assert G.passage_numbers("one half") == [0.5]
    assert 0.6 in G.passage_numbers("three fifths")
    assert 142.0 in G.passage_numbers("one hundred and forty-two")
    assert G.passage_numbers("beams2d") == []


def test_a_model_as_near_as_the_baseline_is_not_copying(sample):
    """The held-back honest case: the sample's seed-1 model (references with 8 of 5000 cells
    flipped) sits at 0.145 of the spacing, the baseline's own samples (15 cells flipped) at
    0.199.  Before: held as copies (model_quality 0, score 0.45); now 1.0."""
    checks, trials, _ = grade(sample)
    assert not by_id(checks, f"trial.{SEED1}.sample_copies")
    assert trials[SEED1].terms["model_quality"] == 1.0 and trials[SEED1].score == 1.0
    (d,) = by_id(checks, f"trial.{SEED1}.sample_distance")
    assert "0.0993 against the references" in d.message


@pytest.mark.parametrize("attack", [
    lambda r, rng: r + 1e-9 * (r < 0.5),                              # the references, exact-ish
    lambda r, rng: np.abs(r - (rng.random(r.shape) < 3 / r[0].size)),  # ~3 flipped cells
])
def test_copies_much_nearer_than_the_baseline_are_still_held(sample, attack):
    with h5py.File(sample / "reference.h5", "r") as fh:
        refs = fh["baselines/training_code_beams2d/cgan_cnn_2d/seed1/reference_designs"][()]
    B.h5_write(str(sample / "trials" / SEED1 / "arrays.h5"),
               {"samples": attack(refs.astype(np.float64), np.random.default_rng(5))})
    checks, trials, _ = grade(sample)
    (c,) = by_id(checks, f"trial.{SEED1}.sample_copies")
    assert c.status is G.Status.REVIEW and trials[SEED1].terms["model_quality"] == 0.0


def test_the_baseline_threshold_never_exceeds_the_spacing_rule(gold):
    """A baseline far from the references (the gold run's) leaves the 0.25 threshold alone."""
    checks, trials, _ = grade(gold)
    (d,) = by_id(checks, "trial.code.sample_distance")
    assert "near-copy below 0.25 (0.25 against the references)" in d.message
