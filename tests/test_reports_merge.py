"""--merge trusts nothing it merges: each report is checked against the grader's embedded schema
(a validator of the schema subset, no jsonschema needed), must come from this grader file (or
--allow-other-grader), and has its result, score, exit code, review flags and ranking keys
re-derived from its own records with the grader's verdict; a refusal is one named line, exit 2,
no ranking.  The same grading twice is listed once; the merge exits with the live run's code;
rows are named by the shortest path suffix that tells them apart, or by --label; several
submissions' --json is JSON Lines (.jsonl accepted)."""
import copy
import csv
import io
import json
import shutil
import subprocess
import sys

import pytest

from conftest import REFERENCE, REPO, run_grader
from test_reports_support import NAMES, call_main, grader, read_docs

FEM = REPO / "grade_fem.py"
GOLD = REFERENCE / "fem" / "gold"
MIDPOINT = REFERENCE / "fem" / "variants" / "midpoint"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Real FEM reports: gold (PASS), midpoint (FAIL), gold --no-exec (UNGRADED), as files."""
    tmp = tmp_path_factory.mktemp("merge")
    out = {}
    for name, argv in (("gold", [GOLD]), ("midpoint", [MIDPOINT]), ("noexec", [GOLD, "--no-exec"])):
        path = tmp / f"{name}.json"
        rc, _, err, doc = run_grader(FEM, *argv, "--quiet", "--json", path)
        assert doc is not None, err
        out[name] = (path, doc, rc)
    return out


def merge(*paths, extra=()) -> tuple:
    rc, out, err, _ = run_grader(FEM, "--merge", *paths, *extra)
    return rc, out, err


def refused(tmp_path, doc, name="r.json") -> tuple:
    """(exit code, stdout, stderr) of merging gold with one altered report."""
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path, merge(path)


def assert_refused(result, path, reason: str) -> None:
    rc, out, err = result
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and err.startswith(f"grade_fem: --merge {path}: refused: "), err
    assert reason in err and err.rstrip().endswith("(nothing ranked)") and "Traceback" not in err


# ---- the schema, embedded and checked without jsonschema ------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_embedded_schema_is_the_committed_one(name):
    committed = json.loads((REPO / "schemas" / f"grade_{name}.report.schema.json").read_text())
    G = grader(name)
    assert G.REPORT_SCHEMA == committed, "run tools/build_graders.py (it embeds schemas/)"
    used = set()

    def walk(node):
        if isinstance(node, dict):
            used.update(k for k in node if k not in ("properties",))
            for k, v in node.items():
                if k == "properties":
                    for sub in v.values():
                        walk(sub)
                elif isinstance(v, (dict, list)):
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(committed)
    assert used <= G.SCHEMA_KEYWORDS | {"properties"}     # every keyword the validator checks


MUTATIONS = [
    ("missing key", lambda d: d.pop("checks")),
    ("wrong type", lambda d: d.update(score="1.0")),
    ("bool for number", lambda d: d.update(score=True)),
    ("bool for integer", lambda d: d.update(submission_files=True)),
    ("enum", lambda d: d["checks"][0].update(status="GREAT")),
    ("const", lambda d: d["review"].append(dict(d["checks"][0], status="PASS"))),
    ("extra key", lambda d: d.update(bonus=1)),
    ("extra check key", lambda d: d["checks"][0].update(weight=2)),
    ("pattern", lambda d: d.update(grader_sha256="X" * 64)),
    ("minimum", lambda d: d.update(score=-0.5)),
    ("maximum", lambda d: d.update(score=1.5)),
    ("if/then", lambda d: d.update(result="UNGRADED")),
    ("if/else", lambda d: d.update(score=None)),
    ("nested run", lambda d: d["run"].pop("exit_code")),
    ("run enum", lambda d: d["run"].update(exit_code=7)),
    ("minLength", lambda d: d["checks"][0].update(id="")),
    ("label", lambda d: d.update(label="")),
    ("keys typed", lambda d: d["keys"].update(review_required=-1)),
]


@pytest.mark.parametrize("what, mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_schema_validator_agrees_with_jsonschema(reports, what, mutate):
    jsonschema = pytest.importorskip("jsonschema")
    G = grader("fem")
    doc = copy.deepcopy(reports["gold"][1])
    assert G.schema_errors(doc, G.REPORT_SCHEMA) == []
    mutate(doc)
    theirs = list(jsonschema.Draft202012Validator(G.REPORT_SCHEMA).iter_errors(doc))
    ours = G.schema_errors(doc, G.REPORT_SCHEMA)
    assert theirs and ours, (what, ours)


def test_validator_refuses_a_schema_keyword_it_does_not_know():
    G = grader("fem")
    assert "cannot check" in G.schema_errors(1, {"type": "integer", "multipleOf": 2})[0]


# ---- refusals: one named line, exit 2, nothing ranked ----------------------------------------------
def test_forged_verdict_is_refused(reports, tmp_path):
    doc = copy.deepcopy(reports["midpoint"][1])
    doc.update(result="PASS", score=1.0)
    doc["run"]["exit_code"] = 0
    path, result = refused(tmp_path, doc)
    assert_refused(result, path, "claims RESULT PASS SCORE 1.0, but its own records give RESULT FAIL SCORE 0.0")


def test_forged_score_alone_is_refused(reports, tmp_path):
    doc = copy.deepcopy(reports["midpoint"][1])
    doc["score"] = 0.5
    path, result = refused(tmp_path, doc)
    assert_refused(result, path, "SCORE 0.5, but its own records give RESULT FAIL SCORE 0.0")


def test_flipped_records_under_old_claims_are_refused(reports, tmp_path):
    """Records edited, claims left: the verdict re-derived from the records disagrees."""
    doc = copy.deepcopy(reports["midpoint"][1])
    for c in doc["checks"]:
        if c["status"] == "FAIL":
            c["status"] = "PASS"
    path, result = refused(tmp_path, doc)                # records now pass, claims still FAIL 0.0
    assert_refused(result, path, "claims RESULT FAIL SCORE 0.0, but its own records give RESULT PASS SCORE 1.0")


def test_forged_exit_code_review_flags_and_ranking_key_are_refused(reports, tmp_path):
    doc = copy.deepcopy(reports["midpoint"][1])
    doc["run"]["exit_code"] = 0
    path, result = refused(tmp_path, doc, "a.json")
    assert_refused(result, path, "claims exit code 0, but its records give 1")
    doc = copy.deepcopy(reports["gold"][1])
    doc["review"] = [dict(doc["checks"][0], status="REVIEW")]
    path, result = refused(tmp_path, doc, "b.json")
    assert_refused(result, path, "its review flags are not its REVIEW records")
    doc = copy.deepcopy(reports["midpoint"][1])
    doc["keys"]["review_required"] = 0 if doc["keys"]["review_required"] else 3
    path, result = refused(tmp_path, doc, "c.json")
    assert_refused(result, path, "claims review_required = ")


def test_other_grader_file_is_refused_unless_allowed(reports, tmp_path):
    doc = copy.deepcopy(reports["gold"][1])
    doc["grader_sha256"] = "0" * 64
    path, result = refused(tmp_path, doc)
    assert_refused(result, path, "written by another grade_fem file (grader_sha256 000000000000")
    rc, out, err = merge(path, extra=["--allow-other-grader"])
    assert rc == 0 and "| 1 " not in out and out.startswith("leaderboard (1 submission")
    doc["score"] = 0.5                                   # still re-judged when allowed
    path.write_text(json.dumps(doc))
    rc, out, err = merge(path, extra=["--allow-other-grader"])
    assert rc == 2 and out == "" and "its own records give RESULT PASS SCORE 1.0" in err


@pytest.mark.parametrize("what, text, reason", [
    ("truncated", None, "not JSON (truncated?)"),
    ("not json", "grade_fem PASS 1.0\n", "not JSON (truncated?)"),
    ("empty", "\n\n", "empty"),
    ("array", "[1, 2]", "a JSON list, not a report"),
    ("other grader", '{"grader": "grade_adi"}', "not a grade_fem report (grader: 'grade_adi')"),
    ("NaN", None, "NaN is not a JSON number"),
    ("schema", None, "breaks the grade_fem report schema: checks[0].status"),
    ("bad line", None, "line 2 is not JSON (truncated?)"),
])
def test_bad_report_files_are_refused_with_their_reason(reports, tmp_path, what, text, reason):
    gold = reports["gold"][0].read_text()
    doc = json.loads(gold)
    if what == "truncated":
        text = gold[:len(gold) // 2]
    elif what == "NaN":
        text = gold.replace('"score": 1.0', '"score": NaN')
    elif what == "schema":
        doc["checks"][0]["status"] = "OK"
        text = json.dumps(doc)
    elif what == "bad line":
        text = json.dumps(doc) + "\n" + json.dumps(doc)[:50] + "\n"
    path, result = refused(tmp_path, text, "r.jsonl")
    assert_refused(result, path, reason)


def test_not_utf8_is_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b'{"grader": "grade_fem\xff"}')
    assert_refused(merge(path), path, "not UTF-8 text")


def test_every_refused_report_is_named_and_nothing_ranked(reports, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("{")
    b.write_text("[]")
    rc, out, err = merge(reports["gold"][0], a, b)
    assert rc == 2 and out == "" and err.count(": refused: ") == 2 and "(2 reports refused, nothing ranked)" in err


# ---- duplicates, exit code ---------------------------------------------------------------------
def test_same_grading_twice_is_listed_once(reports, tmp_path):
    gold = reports["gold"][0]
    rc, out, err = merge(gold, gold)
    assert rc == 0 and out.startswith("leaderboard (1 submission;") and "listed once" in err
    copied = tmp_path / "elsewhere" / "gold"                # the same bytes graded from another path
    shutil.copytree(GOLD, copied)
    rc, _, _, doc = run_grader(FEM, copied, "--quiet", "--json", tmp_path / "copy.json")
    assert doc["submission_sha256"] == reports["gold"][1]["submission_sha256"]
    rc, out, err = merge(gold, tmp_path / "copy.json", reports["midpoint"][0])
    assert rc == 1 and out.startswith("leaderboard (2 submissions;") and err.count("listed once") == 1
    rc, out, err = merge(gold, reports["noexec"][0])        # the same bytes, other options: both
    assert out.startswith("leaderboard (2 submissions;") and "listed once" not in err


@pytest.mark.parametrize("names, live", [(("gold",), 0), (("gold", "midpoint"), 1),
                                         (("gold", "noexec"), 2), (("midpoint", "noexec"), 2)])
def test_merge_exits_with_the_live_runs_code(reports, names, live):
    assert max(reports[n][2] for n in names) == live          # what the live runs exited with
    rc, out, err = merge(*[reports[n][0] for n in names])
    assert rc == live and out.startswith("leaderboard (")


# ---- labels and JSON Lines ---------------------------------------------------------------------
def test_rows_are_named_by_the_shortest_suffix_that_tells_them_apart(tmp_path):
    G = grader("fem")
    docs = [{"submission": p} for p in ("/x/a/gold", "/x/b/gold", "/x/a/midpoint", "/y/b/gold/")]
    assert G.row_labels(docs) == ["a/gold", "x/b/gold", "midpoint", "y/b/gold"]
    assert G.row_labels([{"submission": "/x/a/gold", "label": "mine"}, {"submission": "/x/b/gold"}]) == \
        ["mine", "b/gold"]


def test_same_basenames_get_distinct_rows_live_and_merged(tmp_path):
    for d in ("a", "b"):
        shutil.copytree(MIDPOINT if d == "a" else GOLD, tmp_path / d / "sub")
    table, jsonl = tmp_path / "t.csv", tmp_path / "all.jsonl"
    rc, out, err, _ = run_grader(FEM, tmp_path / "a" / "sub", tmp_path / "b" / "sub", "--quiet",
                                 "--table", table, f"--json={jsonl}")   # (JSON Lines: not read back by run_grader)
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert rc == 1 and [r["submission"] for r in rows] == ["b/sub", "a/sub"]
    lines = jsonl.read_text().splitlines()                 # JSON Lines: one whole report a line
    assert len(lines) == 2 and all(json.loads(line)["grader"] == "grade_fem" for line in lines)
    rc, out, err = merge(jsonl, extra=["--table", tmp_path / "m.csv"])
    assert rc == 1 and (tmp_path / "m.csv").read_text() == table.read_text()


def test_label_names_rows_and_is_kept_in_the_report(tmp_path):
    jsonl = tmp_path / "all.jsonl"
    rc, out, err, _ = run_grader(FEM, GOLD, MIDPOINT, "--quiet", "--label", "team-a", "--label",
                                 "team-b", f"--json={jsonl}", "--table", tmp_path / "t.md")
    assert [d["label"] for d in read_docs(jsonl)] == ["team-a", "team-b"]
    assert "| 1 | team-a | PASS" in (tmp_path / "t.md").read_text()
    rc, out, err = merge(jsonl)
    assert "team-a" in out and "team-b" in out and rc == 1


@pytest.mark.parametrize("argv, why", [
    (["--label", "x"], "--label given 1 time(s) for 2 submission(s)"),
    (["--label", "x", "--label", "x"], "--label: every name must be non-empty, printable and different"),
    (["--allow-other-grader"], "--allow-other-grader applies to --merge only"),
])
def test_label_usage_errors(argv, why, capsys):
    rc, out, err = call_main(grader("fem"), [GOLD, MIDPOINT] + argv, capsys)
    assert rc == 2 and out == "" and err.strip() == f"grade_fem: {why}" + (
        ": one each, in order" if "time(s)" in why else "")


def test_merge_takes_no_label_or_out(reports, capsys):
    for extra in (["--label", "x"], ["--out", "o"]):
        rc, out, err = call_main(grader("fem"), ["--merge", reports["gold"][0]] + extra, capsys)
        assert rc == 2 and out == "" and "--merge grades nothing" in err


# ---- --sign: a report only a key holder can write ------------------------------------------------
def consistent_forgery(doc: dict) -> dict:
    """Every failing record turned to PASS and every claim rewritten to follow: what re-judging
    alone cannot tell from an honest report."""
    doc = copy.deepcopy(doc)
    for c in doc["checks"]:
        if c["status"] == "FAIL":
            c["status"] = "PASS"
    doc.update(result="PASS", score=1.0)
    doc["run"]["exit_code"] = 0
    return doc


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("signed")
    key = tmp / "key"
    key.write_bytes(bytes(range(48)))
    jsonl = tmp / "both.jsonl"
    rc, out, err, _ = run_grader(FEM, GOLD, MIDPOINT, "--quiet", "--sign", key, f"--json={jsonl}")
    assert rc == 1, err
    return key, jsonl, read_docs(jsonl)


def test_signed_reports_merge_and_a_consistent_forgery_does_not(signed, tmp_path):
    key, jsonl, docs = signed
    assert all(d["signature"].startswith("hmac-sha256:") for d in docs)
    rc, out, err = merge(jsonl, extra=["--sign", key])
    assert rc == 1 and out.startswith("leaderboard (2 submissions;")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(consistent_forgery(docs[1])))
    rc, out, err = merge(forged)                          # without a key: nothing to tell it by
    assert rc == 0 and "| 1 " not in out and " PASS " in out
    assert_refused(merge(forged, extra=["--sign", key]), forged,
                   "its signature does not match (edited after grading, or signed with another key)")


def test_unsigned_or_other_key_reports_are_refused_under_sign(signed, reports, tmp_path):
    key, jsonl, docs = signed
    gold = reports["gold"][0]
    assert_refused(merge(gold, extra=["--sign", key]), gold, "not signed (--sign takes only reports")
    other = tmp_path / "other.key"
    other.write_bytes(b"k" * 32)
    rc, out, err = merge(jsonl, extra=["--sign", other])
    assert rc == 2 and out == "" and err.count("its signature does not match") == 2


@pytest.mark.parametrize("content, why", [(b"short", "5 bytes; a key needs at least 32"), (None, "cannot be read")])
def test_sign_key_usage_errors(tmp_path, capsys, content, why):
    key = tmp_path / "key"
    if content is not None:
        key.write_bytes(content)
    rc, out, err = call_main(grader("fem"), [GOLD, "--sign", key], capsys)
    assert rc == 2 and out == "" and err.startswith(f"grade_fem: --sign {key}: ") and why in err


def test_a_name_cannot_add_lines_to_the_table(tmp_path):
    G = grader("fem")
    rows = G.leaderboard([{"submission": "/s/x\n| 1 | gold | PASS | 1.0 |", "result": "FAIL", "score": 0.0,
                           "keys": {"review_required": 0}, "submission_sha256": "a" * 64}])
    assert len(G.text_table(rows, G.leaderboard_columns())) == 2
    G.write_table(str(tmp_path / "t.md"), rows)
    assert len((tmp_path / "t.md").read_text().splitlines()) == 3 and "x\\n" in (tmp_path / "t.md").read_text()
