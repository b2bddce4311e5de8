"""Usage errors, one rule in every grader: one line on stderr, exit 2, no traceback, nothing
graded and nothing written (main() in process, with grade() replaced by a tripwire)."""
import pytest

from conftest import REFERENCE
from test_reports_support import call_main, grader

SUBS = {"fem": REFERENCE / "fem" / "gold", "adi": REFERENCE / "adi" / "gold",
        "modchallenge": REFERENCE / "modchallenge" / "submissions" / "zero_baseline",
        "engiai": REFERENCE / "engiai" / "sample_run"}


def scicode_inputs(t):
    """Files that exist (their content is never read: a usage error stops before that)."""
    for name in ("p.jsonl", "t.h5"):
        (t / name).write_text("")
    (t / "gens").mkdir(exist_ok=True)
    return [t / "gens", "--problems", t / "p.jsonl", "--h5", t / "t.h5"]


def base(name, t):
    return scicode_inputs(t) if name == "scicode" else [SUBS[name]]


def common_cases(name, t):
    """(label, argv) for the rules every grader shares."""
    sub = base(name, t)
    (t / "file").write_text("")
    cases = [
        ("no submission", ["--problems", t / "p.jsonl", "--h5", t / "t.h5"] if name == "scicode" else []),
        ("absent submission", [t / "absent"] + sub[1:]),
        ("json under a file", sub + ["--json", t / "file" / "r.json"]),
        ("json is a directory", sub + ["--json", t]),
        ("json in a missing folder", sub + ["--json", t / "no" / "such" / "r.json"]),
        ("table extension", sub + ["--table", t / "t.txt"]),
        ("table under a file", sub + ["--table", t / "file" / "t.csv"]),
        ("jobs 0", sub + ["--jobs", "0"]),
        ("merge absent", ["--merge", t / "absent.json"]),
        ("unknown option", sub + ["--frobnicate"]),
        ("abbreviated option", sub + ["--qui"]),
        ("html under a file", sub + ["--html", t / "file" / "r.html"]),
        ("html is a directory", sub + ["--html", t]),
        ("json and html one file", sub + ["--json", t / "r.out", "--html", t / "r.out"]),
    ]
    if name in ("scicode", "modchallenge", "engiai"):
        cases += [("--limit 0", sub + ["--limit", "0"]),
                  ("--merge with a subset", ["--merge", t / "file", "--limit", "2"])]
    if name != "engiai":
        cases += [(f"--budget {v}", sub + ["--budget", v]) for v in ("0", "-1", "nan", "inf")]
        cases += [(f"--memory {v}", sub + ["--memory", v]) for v in ("0", "nan")]
    return cases


SPECIAL = {
    "modchallenge": lambda t: [
        ("absent test set", [SUBS["modchallenge"], "--test-set", t / "absent"]),
        ("load timeout", [SUBS["modchallenge"], "--load-timeout", "-1"]),
        ("total", [SUBS["modchallenge"], "--total", "12"]),
        ("bad seed", [SUBS["modchallenge"], "--seeds", "public,xyz"]),
        ("out under a file", [SUBS["modchallenge"], "--out", t / "file" / "d"]),
        ("write-tests with a submission", [SUBS["modchallenge"], "--write-tests", t / "w"])],
    "scicode": lambda t: [
        ("absent h5", scicode_inputs(t)[:-1] + [t / "absent.h5"]),
        ("absent problems", [t / "gens", "--problems", t / "p.jsonl", t / "absent.jsonl", "--h5", t / "t.h5"]),
        ("no --h5", [t / "gens", "--problems", t / "p.jsonl"]),
        ("absent special steps", scicode_inputs(t) + ["--special-steps", t / "absent"]),
        ("old and new spelling", scicode_inputs(t) + ["--timeout", "5", "--budget", "6"]),
        ("out under a file", scicode_inputs(t) + ["--out", t / "file" / "d"])],
    "engiai": lambda t: [
        ("out under a file", [SUBS["engiai"], "--out", t / "file" / "d"]),
        ("out inside the run", [SUBS["engiai"], "--out", SUBS["engiai"] / "rescored"]),
        ("style not accepted", [SUBS["engiai"], "--problem", "beams2d", "--style", "rag-eval"])],
}

def all_cases(name, t):
    return common_cases(name, t) + (SPECIAL[name](t) if name in SPECIAL else [])


@pytest.mark.parametrize("name", ["fem", "adi", "modchallenge", "scicode", "engiai"])
def test_every_usage_error_is_one_line_exit_2_before_any_work(name, tmp_path, capsys, monkeypatch):
    G = grader(name)

    def tripwire(*a, **k):
        raise AssertionError("grade() called on a usage error")
    monkeypatch.setattr(G, "grade", tripwire)
    monkeypatch.setattr(G, "generate_test_set", tripwire, raising=False)
    cases = all_cases(name, tmp_path)
    assert len(cases) >= 13
    for label, argv in cases:
        before = sorted(p.name for p in tmp_path.rglob("*"))
        rc, out, err = call_main(G, argv, capsys)
        lines = err.strip().splitlines()
        assert (rc, out) == (2, ""), (label, rc, out, err)
        assert len(lines) == 1 and "Traceback" not in err, (label, err)
        assert lines[0].startswith(f"grade_{name}"), (label, err)
        assert sorted(p.name for p in tmp_path.rglob("*")) == before, (label, "wrote a file")
    assert not (SUBS["engiai"] / "rescored").exists()


def test_a_writable_output_is_not_created_by_the_check(tmp_path):
    G = grader("fem")
    G.check_output_path(str(tmp_path / "r.json"), "--json")
    assert not (tmp_path / "r.json").exists()
    (tmp_path / "keep.json").write_text("old")
    G.check_output_path(str(tmp_path / "keep.json"), "--json")
    assert (tmp_path / "keep.json").read_text() == "old"
