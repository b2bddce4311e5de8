"""Gates 1-4, each failing for its own reason (manifest, artifact size, static analysis,
test-set generation), plus the CLI's usage errors and --no-exec."""
import json

import pytest

from conftest import run_grader, verdict_lines
from test_modchallenge_support import (GRADER, SUBS, grade, grader, make_submission, model_source,
                                       small_test_dir)

OK_MANIFEST = {"entry_class": "model.M", "output_base": 10, "model_description": "d",
               "training_description": "t"}


@pytest.mark.parametrize("manifest, reason", [
    (..., "manifest.json missing"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (dict(OK_MANIFEST, entry_class="M"), "entry_class must be a dotted path"),
    (dict(OK_MANIFEST, entry_class="model.M; import os"), "entry_class must be a dotted path"),
    (dict(OK_MANIFEST, entry_class=3), "entry_class must be a dotted path"),
    (dict(OK_MANIFEST, output_base=True), "output_base must be an integer"),
    (dict(OK_MANIFEST, output_base=1), "output_base must be an integer"),
    (dict(OK_MANIFEST, output_base=2 ** 32 + 1), "output_base must be an integer"),
    (dict(OK_MANIFEST, output_base=10.0), "output_base must be an integer"),
    (dict(OK_MANIFEST, output_base="q"), "output_base string must be"),
    (dict(OK_MANIFEST, model_description=""), "model_description must be a non-empty string"),
    ({k: v for k, v in OK_MANIFEST.items() if k != "training_description"},
     "training_description must be a non-empty string"),
    (dict(OK_MANIFEST, framework=7), "framework must be a string"),
])
def test_gate1_manifest_failures_are_clean_records(tmp_path, manifest, reason):
    sub = make_submission(tmp_path / "sub", model_source(""), manifest=manifest)
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert rc == 1 and "Traceback" not in out + err
    assert checks["g1.manifest"]["status"] == "FAIL" and reason in checks["g1.manifest"]["message"]
    assert all(checks[g]["status"] == "SKIP" for g in ("g4.testgen", "g5.model_load", "g8.inference"))
    keys = verdict_lines(out)
    assert (keys["RESULT"], keys["SCORE"], keys["ranked"]) == ("FAIL", "0.0", "false")


def test_gate1_accepts_base_p_and_the_largest_base(tmp_path):
    g = grader()
    for base in ("p", 2 ** 32, 2):
        sub = make_submission(tmp_path / f"s{base}", model_source(""), manifest=dict(OK_MANIFEST, output_base=base))
        (rec,) = g.check_manifest(str(sub))
        assert rec.status is g.Status.PASS, rec.message


def test_gate2_artifact_size_over_the_limit(tmp_path, monkeypatch):
    g = grader()
    sub = make_submission(tmp_path / "sub", model_source(""), extra={"weights.bin": "x" * 5000})
    (ok,) = g.check_artifact_size(str(sub))
    assert ok.status is g.Status.PASS and ok.measured > 5000
    monkeypatch.setitem(g.SPEC, "max_artifact_bytes", 4096)
    (bad,) = g.check_artifact_size(str(sub))
    assert bad.status is g.Status.FAIL and bad.id == "g2.artifact_size" and bad.limit == 4096
    assert g.verdict([bad], strict=False, no_exec=False) == ("FAIL", 0.0)


def test_gate2_sparse_21_gib_file_fails_before_anything_runs(tmp_path):
    sub = make_submission(tmp_path / "sub", model_source(""))
    try:
        with open(sub / "weights.bin", "wb") as fh:
            fh.truncate(21 * 1024 ** 3)                  # sparse: no disk used
    except OSError:
        pytest.skip("no sparse files here")
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert checks["g2.artifact_size"]["status"] == "FAIL" and "exceeds 20 GiB" in checks["g2.artifact_size"]["message"]
    assert checks["g4.testgen"]["status"] == "SKIP" and verdict_lines(out)["RESULT"] == "FAIL"
    # the report's tree digest is refused on size too: 21 GiB are not read to hash them
    assert rc == 1 and "Traceback" not in out + err
    assert doc["submission_sha256"] is None and doc["submission_bytes"] > 21 * 1024 ** 3
    assert doc["submission_files"] == 3
    # --out keeps its report; a rerun does not reuse it: bytes never hashed are not known to be the same
    for name in ("kept.json", "again.json"):
        rc2, out2, err2, doc2, checks2 = grade(sub, tmp_path, "--public", "--out", tmp_path / "out",
                                               test_set=False, name=name)
    assert "not reused: the submission is over the size limit" in err2, err2[-2000:]
    assert rc2 == 1 and checks2["g2.artifact_size"]["status"] == "FAIL" and doc2["submission_sha256"] is None


def test_tree_digest_refuses_a_tree_over_its_byte_budget(tmp_path, monkeypatch):
    reports = grader()
    sub = make_submission(tmp_path / "sub", model_source(""), extra={"weights.bin": "x" * 5000})
    whole = reports.tree_sha256(str(sub))
    size = whole["bytes"]
    assert whole["sha256"] and reports.tree_sha256(str(sub), size) == whole     # at the budget: read
    assert reports.tree_sha256(str(sub), size - 1) == {"sha256": None, "files": 3, "bytes": size}
    # a file that grows past the budget after its size was taken is not read to its end
    real_getsize = reports.os.path.getsize
    monkeypatch.setattr(reports.os.path, "getsize",
                        lambda p: 0 if str(p).endswith("weights.bin") else real_getsize(p))
    assert reports.tree_sha256(str(sub), size - 4000) == {"sha256": None, "files": 3, "bytes": size}


def test_gate2_limit_is_20_gib():
    assert grader().SPEC["max_artifact_bytes"] == 20 * 1024 ** 3


STATIC_CASES = [
    ("import sympy\n", "forbidden-import"),
    ("from gmpy2 import mpz\n", "forbidden-import"),
    ("import urllib.request\n", "forbidden-import"),
    ("import decimal\n", "forbidden-import"),
    ("from multiprocessing import Pool\n", "forbidden-import"),
    ("import ctypes\n", "forbidden-import"),
    ("x = eval('1')\n", "dynamic-exec"),
    ("exec('x = 1')\n", "dynamic-exec"),
    ("m = __import__('os')\n", "dynamic-exec"),
    ("c = compile('1', 'f', 'eval')\n", "dynamic-exec"),
    ("import os\nos.system('ls')\n", "subprocess"),
    ("import os\nos.execvp('ls', ['ls'])\n", "subprocess"),
    ("import os\nos.posix_spawn\nos.spawnl(0, 'x')\n", "subprocess"),
    ("import os\nos.fork()\n", "subprocess"),
    ("import os\nos.popen('ls')\n", "subprocess"),
    ("def f(a, b, p):\n    return int(a) * int(b) % int(p)\n", "modmul-shortcut"),
    ("def f(a, b, p):\n    return (int(a) * int(b)) % int(p)\n", "modmul-shortcut"),
    ("def f(a, b, p):\n    return pow(int(a), int(b), int(p))\n", "modmul-shortcut"),
    ("def f(:\n", "syntax-error"),
]


@pytest.mark.parametrize("source, rule", STATIC_CASES)
def test_static_scan_finds_each_rule(source, rule):
    assert [f[2] for f in grader().scan_source(source, "m.py")] == [rule]


@pytest.mark.parametrize("source", [
    "import os\nprint(os.path.join('a', 'b'))\n",
    "def f(a, b):\n    return int(a) * int(b)\n",              # no reduction by int(p)
    "def f(a, b, p):\n    return a * b % p\n",                   # not the int(_) shape
    "def f(x):\n    return pow(x, 2)\n",
    "import json, math, random, hashlib\n",
    "x = 'eval exec sympy'\n",
])
def test_static_scan_passes_innocent_code(source):
    assert grader().scan_source(source, "m.py") == []


def test_gate3_scans_every_py_file_and_non_utf8(tmp_path):
    sub = make_submission(tmp_path / "sub", model_source(""),
                          extra={"helper.py": "import socket\n"})
    (sub / "pkg").mkdir()
    (sub / "pkg" / "deep.py").write_bytes(b"x = '\xff\xfe'\n")
    (rec,) = grader().check_static(str(sub), False)
    assert rec.status.value == "FAIL" and rec.measured[0][2] == "forbidden-import"
    assert {f[2] for f in rec.measured} == {"forbidden-import", "unreadable-source"}


def test_gate4_tampered_test_set_fails_cleanly(tmp_path):
    import shutil
    bad = tmp_path / "set"
    shutil.copytree(small_test_dir(), bad)
    lines = (bad / "tier_4.jsonl").read_text().splitlines()
    row = json.loads(lines[5])
    row["expected"] = str(int(row["expected"]) + 1)
    lines[5] = json.dumps(row)
    (bad / "tier_4.jsonl").write_text("\n".join(lines) + "\n")
    sub = SUBS / "zero_baseline"
    rc, out, err, doc = run_grader(GRADER, sub, "--test-set", bad, "--json", tmp_path / "r.json")
    checks = {c["id"]: c for c in doc["checks"]}
    assert checks["g4.testgen"]["status"] == "FAIL" and "tier_4.jsonl line 6" in checks["g4.testgen"]["message"]
    assert checks["g5.model_load"]["status"] == "SKIP" and rc == 1
    row["expected"], row["p"] = str(int(row["a"]) * int(row["b"]) % 131073), "131073"   # 3 * 43691
    lines[5] = json.dumps(row)
    (bad / "tier_4.jsonl").write_text("\n".join(lines) + "\n")
    rc, out, err, doc = run_grader(GRADER, sub, "--test-set", bad, "--json", tmp_path / "r.json")
    assert "p is not prime" in {c["id"]: c for c in doc["checks"]}["g4.testgen"]["message"]


def test_usage_errors_exit_2(tmp_path):
    sub = SUBS / "zero_baseline"
    for args in (["--total", "100"], ["--seed", "xyz"], ["--seeds", "0"], ["--budget", "0"]):
        rc, out, err, _ = run_grader(GRADER, sub, *args)
        assert rc == 2 and "RESULT" not in out, args
    rc, out, err, _ = run_grader(GRADER, tmp_path / "nope")
    assert rc == 2


def test_no_exec_runs_gates_1_to_4_only(tmp_path):
    rc, out, err, doc, checks = grade(SUBS / "zero_baseline", tmp_path, "--no-exec")
    assert rc == 2 and verdict_lines(out)["RESULT"] == "UNGRADED" and "SCORE" not in verdict_lines(out)
    assert [checks[f"g{k}." + n]["status"] for k, n in
            ((1, "manifest"), (2, "artifact_size"), (3, "static_check"), (4, "testgen"))] == ["PASS"] * 4
    assert all(checks[c]["status"] == "SKIP" for c in
               ("g5.model_load", "g6.preprocess_isolation", "g7.determinism", "g8.inference"))


@pytest.mark.parametrize("module", sorted(grader().FORBIDDEN_IMPORTS))
def test_every_listed_module_is_a_finding_in_every_import_form(module):
    g = grader()
    for source in (f"import {module}\n", f"import json, {module}.sub as x\n",
                   f"from {module}.sub import y\n", f"def f():\n    from {module} import z\n"):
        assert [f[2] for f in g.scan_source(source, "m.py")] == ["forbidden-import"], source
    assert g.scan_source(f"import {module}_extra\nimport my{module}\n", "m.py") == []


@pytest.mark.parametrize("name", ["system", "popen", "execv", "execl", "execle", "execlp", "execlpe",
                                  "execvp", "execvpe", "execve", "spawnl", "spawnle", "spawnlp",
                                  "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "fork",
                                  "forkpty"])
def test_every_listed_os_process_call_is_a_finding(name):
    assert [f[2] for f in grader().scan_source(f"import os\nos.{name}()\n", "m.py")] == ["subprocess"]


@pytest.mark.parametrize("source", ["class C:\n    def m(self, a, b, p):\n        return int(a) * int(b) % int(p)\n",
                                    "f = lambda a, b, p: [pow(int(a), int(b), int(p))]\n",
                                    "x = [eval(s) for s in ('1',)]\n"])
def test_findings_nested_anywhere_in_the_tree(source):
    assert len(grader().scan_source(source, "m.py")) == 1


@pytest.mark.parametrize("tier, field, value", [(3, "p", str(2 ** 61 - 1)), (1, "p", "11"),
                                               (2, "a", str(2 ** 48))])
def test_gate4_test_set_rows_outside_their_tier_are_refused(tmp_path, tier, field, value):
    """--test-set rows must fit the tier's table (p range, operand bits): a prime from another tier
    (and the cost of testing a huge one) is refused before anything runs."""
    import shutil
    bad = tmp_path / "set"
    shutil.copytree(small_test_dir(), bad)
    lines = (bad / f"tier_{tier}.jsonl").read_text().splitlines()
    row = json.loads(lines[4])
    row[field] = value
    row["expected"] = str(int(row["a"]) * int(row["b"]) % int(row["p"]))
    lines[4] = json.dumps(row)
    (bad / f"tier_{tier}.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(grader().Reject) as exc:
        grader().read_test_set(str(bad))
    assert f"tier_{tier}.jsonl line 5: p or an operand outside tier {tier}'s range" in exc.value.check.message
    assert len(grader().read_test_set(small_test_dir())) == 11
