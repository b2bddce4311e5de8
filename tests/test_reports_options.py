"""One option vocabulary (issue 26 item 1): every grader's --help spells each shared option
alike (same name, same metavar/unit, same opening words of its help); old spellings still work
for one release with one line on stderr; abbreviations are refused."""
import re

import pytest

from test_reports_support import NAMES, call_main, grader

# option -> the graders that must have it (the rest of SHARED_OPTIONS: wherever it exists)
REQUIRED = {
    "--json": NAMES, "--table": NAMES, "--html": NAMES, "--quiet": NAMES, "--plot": NAMES,
    "--strict": NAMES, "--no-exec": NAMES, "--jobs": NAMES,
    "--budget": NAMES,                                          # EngiAI: the whole run's reading
    "--memory": ("fem", "adi", "modchallenge", "scicode"),
    "--out": ("modchallenge", "scicode", "engiai"),
    "--limit": ("modchallenge", "scicode", "engiai"),           # the graders with countable units
}


def help_text(name, capsys, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "2000")        # one line per option: no wrapping to undo
    rc, out, err = call_main(grader(name), ["--help"], capsys)
    assert rc == 0 and err == ""
    return out


def option_lines(text: str) -> dict:
    """option -> its help line (`  --budget SECONDS   wall-clock ...`)."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s+(--[a-z][a-z0-9-]*)(?: ([A-Z][A-Z0-9_.]*(?: \[[^]]*\])?))?\s{2,}(.*)$", line)
        if m:
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


@pytest.mark.parametrize("name", NAMES)
def test_shared_options_are_spelled_and_described_alike(name, capsys, monkeypatch):
    G = grader(name)
    lines = option_lines(help_text(name, capsys, monkeypatch))
    for option, (metavar, opening) in G.SHARED_OPTIONS.items():
        if name in REQUIRED.get(option, ()):
            assert option in lines, (name, option)
        if option not in lines:
            continue
        got_metavar, got_help = lines[option]
        assert got_metavar == metavar, (name, option, got_metavar)
        assert got_help.startswith(opening), (name, option, got_help)
    for old in G.DEPRECATED_OPTIONS:                 # hidden: the help shows one spelling
        assert old not in lines, (name, old)


def test_the_vocabulary_is_one_table_in_every_grader():
    tables = {name: (grader(name).SHARED_OPTIONS, grader(name).DEPRECATED_OPTIONS) for name in NAMES}
    assert len({repr(t) for t in tables.values()}) == 1


@pytest.mark.parametrize("old,new,value", [("--timeout", "budget", "7.5"), ("--mem-gb", "memory", "3")])
def test_old_scicode_spellings_still_work_with_one_notice(old, new, value, capsys):
    G = grader("scicode")
    args = G.build_parser().parse_args(["gens", "--problems", "p.jsonl", "--h5", "t.h5", old, value])
    err = capsys.readouterr().err
    assert getattr(args, new) == float(value)
    assert len(err.strip().splitlines()) == 1 and "deprecated" in err and f"--{new}" in err
    assert not any(k.startswith("_old_") for k in vars(args))


def test_old_and_new_spelling_together_conflict(capsys, tmp_path):
    G = grader("scicode")
    for name in ("p.jsonl", "t.h5"):
        (tmp_path / name).write_text("")
    (tmp_path / "gens").mkdir()
    base = [tmp_path / "gens", "--problems", tmp_path / "p.jsonl", "--h5", tmp_path / "t.h5"]
    rc, out, err = call_main(G, base + ["--timeout", "5", "--budget", "6"], capsys)
    assert rc == 2 and out == ""
    assert err.strip().splitlines()[-1].startswith("grade_scicode: error: --timeout and --budget conflict")


@pytest.mark.parametrize("name", NAMES)
def test_abbreviations_are_refused(name, capsys):
    G = grader(name)
    rc, out, err = call_main(G, ["--qui", "x"], capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "unrecognized arguments: --qui" in err


def test_memory_sets_the_runner_limit():
    G = grader("adi")
    saved = G.SPEC["runner_mem_bytes"]
    try:
        args = G.build_parser().parse_args(["sub", "--memory", "2.5"])
        assert args.memory == 2.5
        G.apply_memory(args)
        assert G.SPEC["runner_mem_bytes"] == int(2.5 * 2 ** 30)
    finally:
        G.SPEC["runner_mem_bytes"] = saved
