"""Every grader's --json against its committed schema, for a passing, a failing and an UNGRADED
run (main() in process; the smallest cases that reach each verdict)."""
import json
import shutil
import sys

import pytest

from conftest import REFERENCE
from test_reports_support import call_main, grader, read_docs, validate

MOD = REFERENCE / "modchallenge" / "submissions"


@pytest.fixture(scope="module")
def small_mod():
    """The public seed's 110-problem set, the one the modchallenge tests write once per session."""
    from test_modchallenge_support import small_test_dir
    return ["--test-set", small_test_dir()]


def scicode_files(tmp):
    sys.path.insert(0, str(REFERENCE / "scicode"))
    import scicode_synthetic
    files = {k: str(v) for k, v in scicode_synthetic.write_all(str(tmp / "synthetic")).items()}
    wrong = tmp / "wrong"
    shutil.copytree(files["correct"], wrong)
    (wrong / "901.1.txt").write_text("```python\nimport numpy as np\n\ndef scale(x, k):\n"
                                     "    return np.asarray(x) * (k + 1)\n```\n")
    args = ["--problems", files["problems_test.jsonl"], files["problems_dev.jsonl"],
            "--h5", files["targets.h5"], "--special-steps", files["special"]]
    return files["correct"], str(wrong), args


def engiai_runs(tmp):
    sys.path.insert(0, str(REFERENCE / "engiai"))
    import build_engiai_run
    gold = tmp / "gold"
    build_engiai_run.build_gold(str(gold))
    empty = tmp / "empty"
    (empty / "trials").mkdir(parents=True)
    return gold, empty


def cases(name, tmp, small_mod):
    """(expected result, argv) for PASS-or-full, below full, UNGRADED."""
    if name == "fem":
        gold = REFERENCE / "fem" / "gold"
        return [("PASS", [gold]), ("FAIL", [REFERENCE / "fem" / "variants" / "midpoint"]),
                ("UNGRADED", [gold, "--no-exec"])]
    if name == "adi":
        gold = REFERENCE / "adi" / "gold"
        broken = tmp / "broken"
        shutil.copytree(gold, broken)
        (broken / "results.json").write_text("{not json")
        return [("PASS", [gold]), ("FAIL", [broken]), ("UNGRADED", [gold, "--no-exec"])]
    if name == "modchallenge":
        return [("PASS", [MOD / "bad_static_modmul", "--skip-static-check"] + small_mod),
                ("FAIL", [MOD / "bad_wrong_type"] + small_mod),
                ("UNGRADED", [MOD / "zero_baseline", "--no-exec"] + small_mod)]
    if name == "scicode":
        correct, wrong, args = scicode_files(tmp)
        return [("PASS", [correct] + args), ("PARTIAL", [wrong] + args),
                ("UNGRADED", [correct, "--no-exec"] + args)]
    gold, empty = engiai_runs(tmp)
    return [("PASS", [gold]), ("FAIL", [REFERENCE / "engiai" / "sample_run", "--strict"]),
            ("UNGRADED", [empty])]


@pytest.mark.parametrize("name", ["fem", "adi", "modchallenge", "scicode", "engiai"])
def test_json_report_validates_for_pass_fail_and_ungraded(name, tmp_path, capsys, request):
    G = grader(name)
    small = request.getfixturevalue("small_mod") if name == "modchallenge" else None
    for i, (want, argv) in enumerate(cases(name, tmp_path, small)):
        path = tmp_path / f"r{i}.json"
        rc, out, err = call_main(G, argv + ["--json", path], capsys)
        docs = read_docs(path)
        assert len(docs) == 1 and docs[0]["result"] == want, (want, out[-2000:], err[-2000:])
        doc = docs[0]
        validate(doc, name)
        assert G.schema_errors(doc, G.REPORT_SCHEMA) == []        # the grader's own check agrees
        assert G.report_error(doc) is None                        # --merge accepts it: claims follow
        assert doc["run"]["exit_code"] == rc == {"PASS": 0, "UNGRADED": 2}.get(want, 1)
        assert doc["version"] == G.GRADER_VERSION and len(doc["submission_sha256"]) == 64
        assert doc["run"]["options"]["json"] == str(path)
        assert all(not isinstance(v, str) or k in STRING_KEYS for k, v in doc["keys"].items()), doc["keys"]
        json.dumps(doc, allow_nan=False)


STRING_KEYS = {"seed", "split", "context", "mode"}     # the only keys whose values are words


def test_modchallenge_keys_are_typed(tmp_path, capsys, small_mod):
    rc, out, err = call_main(grader("modchallenge"), [MOD / "zero_baseline", "--json", tmp_path / "r.json"]
                             + small_mod, capsys)
    keys = read_docs(tmp_path / "r.json")[0]["keys"]
    assert isinstance(keys["overall_accuracy"], float) and keys["deterministic"] is True
    assert [t["tier"] for t in keys["tiers"]] == list(range(11)) and keys["tiers"][0]["scored"] is False
    assert "overall_accuracy: " + f"{keys['overall_accuracy']:.4f}" in out and "deterministic: true" in out
