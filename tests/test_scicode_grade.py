"""End to end on the synthetic set: the correct replies score 1.0 (also from a copy of the
grader alone), JSONL and folder forms, dry run, --no-exec, --out, and every bad input."""
import json
import shutil

import h5py

from test_scicode_support import (GRADER, SCI, check, grade, h5_encoding, problem_args, run_grader, step_line,
                                  syn, synthetic, tmpdir, variant, verdict_lines)


def test_correct_generations_score_one():
    rc, out, err, doc, keys = grade(syn()["correct"])
    assert rc == 0, out + err
    assert (keys["RESULT"], keys["SCORE"]) == ("PASS", "1.0")
    assert keys["steps_passed"] == "6/6" and keys["problems_solved"] == "3/3"
    assert keys["context"] == "reference/self"                # dev: reference, test: self
    assert doc["result"] == "PASS" and doc["steps"]["901.2"]["cases"] == [{"i": 1, "ok": True},
                                                                         {"i": 2, "ok": True}]
    assert "demo run" not in out and "demo run" not in err    # only the definition runs


def test_grader_copied_alone_into_an_empty_dir():
    where = tmpdir("alone")
    shutil.copy(GRADER, where / "grade.py")
    rc, out, err, doc, keys = grade(syn()["correct"], script=where / "grade.py", cwd=where)
    assert rc == 0 and keys["SCORE"] == "1.0", out + err
    rc, out, err, _ = run_grader(where / "grade.py", "--help", cwd=where)
    assert rc == 0 and "--special-steps" in out and "exit codes" in out


def test_jsonl_generations_same_verdict():
    path = tmpdir("jsonl") / "gens.jsonl"
    with open(path, "w") as fh:
        for step in synthetic.SOLUTIONS:
            if step != "62.1":
                fh.write(json.dumps({"step_number": step, "completion": synthetic.reply(step)}) + "\n")
    rc, out, err, doc, keys = grade(path)
    assert rc == 0 and keys["steps_passed"] == "6/6"
    assert "from a JSONL" in check(doc, "input.generations")["message"]


def test_dry_run_marker_and_plumbing():
    rc, out, err, doc, keys = grade(syn()["correct"], "--dry-run")
    # plumbing only: the step results are printed, the run is not a grade (no SCORE, exit 2)
    assert (rc, keys["RESULT"], keys["mode"]) == (2, "UNGRADED", "DRY_RUN") and "SCORE" not in keys
    assert "SCICODE_PASS (DRY_RUN)" in step_line(out, "901.1") and keys["steps_passed"] == "6/6"
    # a broken generation still passes a dry run: only the plumbing is tested
    broken = variant("dry-broken", replace={"901.1": "def scale(x, k):\n    return None\n"})
    rc, out, err, doc, keys = grade(broken, "--dry-run")
    assert rc == 2 and step_line(out, "901.1").startswith("PASS")
    # a targets file without a step's groups fails that step's plumbing
    h5 = tmpdir("dry-h5") / "t.h5"
    h5_encoding.write_targets(h5, {k: v for k, v in synthetic.TARGETS.items() if k != "902.2"})
    rc, out, err, doc, keys = grade(syn()["correct"], "--dry-run", h5=h5)
    assert rc == 3 and keys["RESULT"] == "UNGRADED"
    assert "TargetsMissing" in step_line(out, "902.2")


def test_no_exec_is_ungraded():
    rc, out, err, doc, keys = grade(variant("noexec", drop=("901.3",)), "--no-exec")
    assert rc == 2 and keys["RESULT"] == "UNGRADED" and "SCORE" not in keys
    assert "FAIL  extract.901.3" in out and "MissingGeneration" in out


def test_out_dir_official_style():
    outdir = tmpdir("outdir")
    rc, out, err, doc, keys = grade(variant("outgen", drop=("902.2",)), "--out", str(outdir))
    assert rc == 1
    passed = json.loads((outdir / "scicode.json").read_text())
    assert passed["902"] == ["902.1"] and passed["901"] == ["901.1", "901.2", "901.3"]
    txt = (outdir / "scicode.txt").read_text()
    assert "correct problems: 2/3" in txt and "correct steps: 5/6" in txt
    assert (outdir / "logs" / "902.2.txt").read_text().strip() == "fail"


def test_missing_generation_is_a_named_model_failure():
    rc, out, err, doc, keys = grade(variant("missing", drop=("901.2",)))
    assert rc == 1 and keys["steps_passed"] == "5/6" and keys["harness_fault_steps"] == "0"
    assert "MissingGeneration: no generation for step 901.2 [model]" in step_line(out, "901.2")


def test_unknown_steps_and_non_utf8_and_fences():
    gen = variant("misc", replace={"901.1": b"def scale(x, k):\n    return x * k  # \xff\n",
                                   "902.1": "```py\n" + synthetic.SOLUTIONS["902.1"] + "```\n"},
                  extra={"999.1.txt": "def z(): pass\n", "README.md": "notes"})
    rc, out, err, doc, keys = grade(gen)
    assert "not UTF-8" in step_line(out, "901.1") and step_line(out, "901.1").startswith("FAIL")
    assert step_line(out, "902.1").startswith("PASS")
    assert "999.1.txt" not in out or "ignored" in check(doc, "input.generations.unknown")["message"]
    assert check(doc, "input.generations.unknown")["measured"] == ["999.1", "README.md"]
    assert rc == 1


def test_malformed_jsonl_lines():
    path = tmpdir("badjsonl") / "gens.jsonl"
    good = [json.dumps({"step_number": s, "completion": synthetic.reply(s)})
            for s in synthetic.SOLUTIONS if s not in ("62.1", "901.3")]
    path.write_text("\n".join(good + ["{broken", '{"step_number": 901.3, "completion": "x"}']) + "\n")
    rc, out, err, doc, keys = grade(path)
    assert rc == 1 and keys["steps_passed"] == "5/6"
    c = check(doc, "input.generations.jsonl")
    assert c["status"] == "FAIL" and c["measured"] == 2
    assert "MissingGeneration" in step_line(out, "901.3")


def test_missing_and_corrupt_h5_are_clean_ungraded():
    """A path that does not exist is a usage error (exit 2, CONVENTIONS); a targets file
    that exists but cannot be read is the grader's own reference failing (exit 3)."""
    rc, out, err, doc, keys = grade(syn()["correct"], h5=tmpdir("noh5") / "absent.h5")
    assert rc == 2 and not out and doc is None and "Traceback" not in err     # usage error: nothing graded
    assert len(err.strip().splitlines()) == 1 and "--h5" in err and "absent.h5: no such file" in err
    bad = tmpdir("corrupt") / "t.h5"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n" + b"garbage" * 100)
    rc, out, err, doc, keys = grade(syn()["correct"], h5=bad)
    assert rc == 3 and "unreadable" in check(doc, "input.fatal")["message"] and "Traceback" not in err


def test_missing_problem_file_is_a_usage_error_not_a_partial_grade():
    """Two problem files asked for, one absent: nothing is graded (no silent half score)."""
    s = syn()
    out = tmpdir("noprob") / "r.json"
    rc, stdout, stderr, doc = run_grader(GRADER, s["correct"], "--problems", s["problems_test.jsonl"],
                                         tmpdir("noprob2") / "absent.jsonl", "--h5", s["targets.h5"],
                                         "--json", out)
    assert rc == 2 and not stdout and doc is None and not out.exists()      # usage error: nothing graded
    assert len(stderr.strip().splitlines()) == 1 and "absent.jsonl: no such file" in stderr


def test_targets_missing_groups_indict_the_harness():
    h5 = tmpdir("missing-groups") / "t.h5"
    shutil.copy(syn()["targets.h5"], h5)
    with h5py.File(h5, "a") as f:
        del f["901.1/test2"]
    rc, out, err, doc, keys = grade(syn()["correct"], h5=h5)
    assert rc == 3 and keys["RESULT"] == "UNGRADED" and "SCORE" not in keys
    assert "TargetsMissing: group 901.1/test2 not in the targets file [harness:h5_group_missing]" in \
        step_line(out, "901.1")
    assert "harness indicted" in check(doc, "census.verdict")["message"]


def test_special_step_without_dir_is_a_harness_fault_strict_indicts():
    rc, out, err, doc, keys = grade(syn()["correct"], special=False)
    assert rc == 1 and keys["harness_fault_steps"] == "1"
    assert "REVIEW_REQUIRED: context.special_steps" in out and "62.2" in out
    assert "[harness:special_context_lost]" in step_line(out, "62.2")
    rc, out, err, doc, keys = grade(syn()["correct"], "--strict", special=False)
    assert rc == 3 and keys["RESULT"] == "UNGRADED"
    assert "--strict" in check(doc, "census.verdict")["message"]


def test_forced_contexts_and_splits():
    # dev forced to self context: the model's own 902.1 is used by 902.2
    gen = variant("selfctx", replace={"902.1": "def square(x):\n    return x ** 3\n"})
    rc, out, err, doc, keys = grade(gen, "--context", "self", "--split", "dev")
    assert keys["steps_passed"] == "0/2" and keys["context"] == "self"
    rc, out, err, doc, keys = grade(gen, "--split", "dev")          # reference context: 902.2 passes
    assert keys["steps_passed"] == "1/2" and step_line(out, "902.2").startswith("PASS")
    # reference context on the test split is impossible (no ground_truth_code): usage error
    rc, out, err, doc, keys = grade(gen, "--context", "reference", "--split", "test")
    assert rc == 2 and "ground_truth_code" in err


def test_timeout_and_memory_options():
    gen = variant("slow", replace={"901.1": "def scale(x, k):\n    import time\n    time.sleep(30)\n"})
    rc, out, err, doc, keys = grade(gen, "--timeout", "2")
    assert "Timeout: exceeded the 2 s budget" in step_line(out, "901.1")
    assert doc["steps"]["901.1"]["failure"]["message"] == "exceeded the 2 s budget"


def test_committed_samples_grade_fully():
    samples = SCI / "samples"
    for gens in (samples / "generations.jsonl", samples / "folder"):
        out = tmpdir("samples") / "r.json"
        rc, stdout, stderr, doc = run_grader(GRADER, gens, "--problems",
                                             samples / "problems_synthetic_test.jsonl",
                                             samples / "problems_synthetic_dev.jsonl",
                                             "--h5", syn()["targets.h5"], "--special-steps",
                                             samples / "special", "--json", out)
        assert rc == 0 and verdict_lines(stdout)["steps_passed"] == "6/6", stdout + stderr


def test_strict_fails_flagged_steps():
    gen = variant("strict-audit", replace={"902.1": "def square(x):\n    g = globals()\n    return x ** 2\n"})
    rc, out, err, doc, keys = grade(gen)
    assert rc == 0 and "REVIEW_REQUIRED: audit.902.1 generation uses globals()" in out
    rc, out, err, doc, keys = grade(gen, "--strict")
    assert rc == 1 and step_line(out, "902.1").startswith("FAIL") and keys["steps_passed"] == "5/6"


def test_empty_generations_indicted_as_systematic():
    from test_scicode_support import one_step_set, run_one_step_set
    probs, h5, gen, steps = one_step_set("empty", {f"s{i}": "x" for i in range(10)})
    for f in gen.iterdir():
        f.unlink()
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert rc == 3 and keys["RESULT"] == "UNGRADED"
    assert "100% of 10 failures share one signature: MissingGeneration" in out
