"""Bad input: a missing class, not a subclass, raising/hanging/exiting/printing models and
garbage outputs all end as clean records with their reason -- never a traceback -- and the
submission directory is never modified."""
import hashlib
import os

import pytest

from conftest import verdict_lines
from test_modchallenge_support import SUBS, grade, grader, make_submission, model_source, public_set

LOAD_FAILS = {
    "no_module": ({"entry_class": "nomodule.M"}, model_source(""), "cannot import entry_class nomodule.M"),
    "no_class": ({"entry_class": "model.Missing"}, model_source(""), "cannot import entry_class model.Missing"),
    "not_subclass": ({}, "class M:\n    def load(self, d):\n        pass\n"
                         "    def predict_digits(self, a, b, p):\n        return [0]\n",
                     "is not a subclass of modchallenge.interface.base_model.ModularMultiplicationModel"),
    "not_a_class": ({}, "M = 3\n", "is not a subclass"),
    "abstract": ({}, model_source("").replace("    def predict_digits(self, a, b, p):\n        return [0]\n", ""),
                 "raised while loading: TypeError"),
    "raises_in_load": ({}, model_source("    def load(self, d):\n        raise RuntimeError('weights corrupt')\n"),
                       "raised while loading: RuntimeError: weights corrupt"),
    "raises_at_import": ({}, "raise ImportError('torch missing')\n", "cannot import entry_class model.M"),
    "syntax_error_elsewhere": ({}, model_source("") + "\nimport helper\n", "raised while loading: SyntaxError"),
    "exits_in_load": ({}, model_source("    def load(self, d):\n        sys.exit(4)\n"),
                      "model load did not finish: child exited with 4"),
    "hard_exit_in_load": ({}, model_source("    def load(self, d):\n        os._exit(0)\n"),
                          "model load did not finish"),
    "hangs_in_load": ({}, model_source("    def load(self, d):\n        time.sleep(60)\n"),
                      "model load did not finish: killed at its"),
}


@pytest.mark.parametrize("case", sorted(LOAD_FAILS))
def test_gate5_load_failures(tmp_path, case):
    manifest_over, source, reason = LOAD_FAILS[case]
    manifest = {"entry_class": "model.M", "output_base": 10, "model_description": "d",
                "training_description": "t", **manifest_over}
    extra = {"helper.py": "x = 1\n"} if case == "syntax_error_elsewhere" else None
    sub = make_submission(tmp_path / "sub", source, manifest=manifest, extra=extra)
    if case == "syntax_error_elsewhere":      # a helper that imports but is broken at run time
        (sub / "helper.py").write_text("raise SyntaxError('broken')\n")
    rc, out, err, doc, checks = grade(sub, tmp_path, "--load-timeout", "2", "--skip-static-check")
    assert "Traceback" not in out + err
    assert checks["g5.model_load"]["status"] == "FAIL", checks["g5.model_load"]
    assert reason in checks["g5.model_load"]["message"]
    for later in ("g6.preprocess_isolation", "g7.determinism", "g8.inference"):
        assert checks[later]["status"] == "SKIP"
    keys = verdict_lines(out)
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0")


def test_printing_model_output_never_reaches_stdout_unmarked(tmp_path):
    source = model_source(
        "    def load(self, d):\n        print('RESULT: PASS')\n        print('SCORE: 1.0', file=sys.stderr)\n"
        "    def predict_digits(self, a, b, p):\n        print('SCORE: 1.0 from predict')\n        return [0]\n")
    sub = make_submission(tmp_path / "sub", source)
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert out.count("RESULT:") == 1 and "SCORE: 1.0" not in out and verdict_lines(out)["RESULT"] == "PARTIAL"
    assert "submission output:" in err and "    RESULT: PASS" in err
    assert checks["g8.inference"]["status"] == "PASS"


GARBAGE = "    def predict_digits(self, a, b, p):\n        self.n = getattr(self, 'n', 0) + 1\n" \
          "        if a == '0':\n            return [0, 0, 0, 0]\n" \
          "        return (None, {'d': 0}, [[0]], [-1], [10], 'x' * 10, [0] * 10 ** 5 + [1] * 9000,\n" \
          "                [2 ** 30000], float('nan'), (0,), [True])[self.n % 11]\n"


def test_garbage_outputs_score_zero_per_problem_only(tmp_path):
    sub = make_submission(tmp_path / "sub", model_source(GARBAGE))
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert "Traceback" not in out + err
    assert checks["g8.inference"]["status"] == "PASS"           # tiers complete, answers wrong
    # only the a = 0 edge case of each tier gets a well-formed answer ([0, 0, 0, 0] = 0)
    assert [checks[f"tier.{k}"]["measured"] for k in range(1, 11)] == [0.1] * 10
    assert verdict_lines(out)["overall_accuracy"] == "0.1000" and rc == 1


def test_model_exiting_during_inference_keeps_reported_tiers(tmp_path):
    # 10 determinism calls, then tiers 0, 1, 2 (10 each) and 5 calls into tier 3, less the calls
    # of the audit probes drawn among them (3 each)
    source = model_source("    def predict_digits(self, a, b, p):\n"
                          "        self.n = getattr(self, 'n', 0) + 1\n"
                          "        if self.n > 45:\n            os._exit(3)\n"
                          "        return [0]\n")
    sub = make_submission(tmp_path / "sub", source)
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert "Traceback" not in out
    g8 = checks["g8.inference"]
    assert g8["status"] == "FAIL" and "child exited with 3" in g8["message"]
    done = [k for k in range(11) if "incomplete" not in checks[f"tier.{k}"]["message"]]
    assert done == list(range(len(done))) and 1 <= len(done) <= 3
    assert "incomplete" in checks[f"tier.{len(done)}"]["message"]
    assert checks["g7.determinism"]["status"] == "PASS"


def test_hanging_predict_is_killed_at_the_budget(tmp_path):
    source = model_source("    def predict_digits(self, a, b, p):\n"
                          "        self.n = getattr(self, 'n', 0) + 1\n"
                          "        if self.n > 45:\n            time.sleep(600)\n        return [0]\n")
    sub = make_submission(tmp_path / "sub", source)
    rc, out, err, doc, checks = grade(sub, tmp_path, "--budget", "2")
    assert checks["g8.inference"]["status"] == "FAIL"
    assert "not finished within the budget" in checks["g8.inference"]["message"]
    done = [k for k in range(11) if "incomplete" not in checks[f"tier.{k}"]["message"]]
    assert done == list(range(len(done))) and 1 <= len(done) <= 3     # 45 calls: the 10 of pass C, and
    assert doc["phases"]["seed1.total"] < 60                           # the stream's and audit probes'


def test_exceptions_in_predict_score_the_batch_zero(tmp_path):
    source = model_source("    def predict_digits(self, a, b, p):\n        raise ValueError('no')\n")
    rc, out, err, doc, checks = grade(make_submission(tmp_path / "sub", source), tmp_path)
    assert checks["g8.inference"]["status"] == "PASS" and checks["g7.determinism"]["status"] == "PASS"
    assert verdict_lines(out)["overall_accuracy"] == "0.0000" and verdict_lines(out)["RESULT"] == "FAIL"


def _tree_digest(root):
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            h.update(p.encode() + open(p, "rb").read())
    return h.hexdigest()


def test_submission_directory_is_never_modified(tmp_path):
    source = model_source("    def load(self, d):\n"
                          "        open(os.path.join(d, 'model.py'), 'w').write('vandalised')\n"
                          "        open(os.path.join(d, 'new.txt'), 'w').write('x')\n")
    sub = make_submission(tmp_path / "sub", source)
    before = _tree_digest(sub)
    grade(sub, tmp_path)
    assert _tree_digest(sub) == before and not (sub / "new.txt").exists()
    assert not any((SUBS / "zero_baseline").glob("__pycache__"))


def test_one_huge_digit_is_wrong_for_that_problem_only(tmp_path):
    """A digit past Python's 4300-decimal-digit int/str limit used to crash the child's reply
    (every tier lost, determinism failed): it is malformed for its own problem only."""
    source = model_source("    def predict_digits(self, a, b, p):\n"
                          "        return [2 ** 15000] if a == '1' else [0]\n")
    rc, out, err, doc, checks = grade(make_submission(tmp_path / "sub", source), tmp_path)
    assert checks["g7.determinism"]["status"] == "PASS" and checks["g8.inference"]["status"] == "PASS"
    for k in range(11):             # every tier complete; right exactly where a != 1 and a*b = 0
        cases = public_set(110)[k]
        want = sum(c.expected == 0 and c.a != 1 for c in cases) / len(cases)
        assert checks[f"tier.{k}"]["measured"] == round(want, 4), k


def test_digit_width_cap_admits_every_valid_digit_and_stays_serialisable():
    g = grader()
    widest_base = max(g.SPEC["max_output_base"], g.tier0_prime(g.MULT_SUB_TIERS[-1][1]))
    assert (widest_base - 1).bit_length() <= g.SPEC["max_digit_bits"]
    assert len(str(2 ** g.SPEC["max_digit_bits"])) < 4300          # sys.get_int_max_str_digits default
