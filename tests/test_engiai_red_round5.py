"""EngiAI issue 24, red team round 5: the RAG copy check (same answers, and the same numbers
stated or near-identical passage texts) attacked with the source in hand, on the sample run:
rag-eval-0 (1.0) copied over rag-eval-1 (0.0), its passage edited so that it states another
set of numbers (" (0.4 tall)" appended) and its text no longer matches piece by piece.
Before this round, an intra-word '.', space, Hangul filler or blank Braille cell every 4
characters, or unlisted look-alike letters (Armenian "օ", Latin "ɑ", small capitals), made the
copy another trial: SCORE 0.8111 -> 0.8528.  The text is now read without the characters
between letters and digits, blank letters dropped and more look-alikes mapped.  What stays
open is a strict xfail with its measurement.  Each attack sits beside an honest twin."""
import json
import shutil

import h5py
import numpy as np
import pytest

from test_engiai_round4 import FULL0, INTACT, NAT0, SAMPLE, by_id, copy_trial, score
from test_engiai_support import G, edit_record
from test_engiai_support import grade_run as grade

RAG0, RAG1 = "rag_beams2d-rag-eval-0", "rag_beams2d-rag-eval-1"
PASSAGE = "beams2d: volume fraction volfrac = 0.35 by default"   # the sample's rag-eval-0
MORE = " (0.4 tall)"                                             # another set of numbers


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def passages(rec):
    return rec["tool_calls"][0]["result"]["results"]


def every(text, n, ins):
    """`ins` after every n-th character that is a letter."""
    return "".join(c + (ins if i % n == n - 1 and c.isalpha() else "") for i, c in enumerate(text))


def garbled(text, n):
    """Every n-th letter replaced by another ASCII letter (a typo every n characters)."""
    out = list(text)
    for i in range(n - 1, len(out), n):
        if out[i].isalpha():
            out[i] = "x" if out[i] != "x" else "y"
    return "".join(out)


def passage(text):
    def edit(rec, d):
        passages(rec)[0]["content"] = text
    edit.text = text
    return edit


def held(checks, trials, tid=RAG1):
    return bool(by_id(checks, f"trial.{tid}.duplicate")) and trials[tid].score == 0.0


# ======================================================= copies caught after this round
FIXED = {   # name: (edited passage, containment of the sample's pieces before this round)
    "dot_inside_words": every(PASSAGE, 4, ".") + MORE,                  # 0.225 (9 of 40)
    "space_inside_words": every(PASSAGE, 4, " ") + MORE,                # 0.225
    "hangul_filler_inside_words": every(PASSAGE, 4, "\u3164") + MORE,   # 0.100 (4)
    "braille_blank_inside_words": every(PASSAGE, 4, "\u2800") + MORE,   # 0.225
    "armenian_o_latin_alpha": PASSAGE.replace("o", "\u0585").replace("a", "\u0251") + MORE,  # 0.15
    "latin_small_capitals": PASSAGE.replace("a", "\u1d00").replace("e", "\u1d07") + MORE,    # 0.275
    "cherokee_lisu_capitals": PASSAGE.upper().replace("A", "\ua4ee").replace("E", "\u13ac") + MORE,
    # before: its full-width "０．３５" read as 0 and 35, the copy scored 0.4 (no gain); read
    # as ASCII it is credited 1.0 and must be held
    "fullwidth": "".join(chr(ord(c) + 0xfee0) if "!" <= c <= "~" else c for c in PASSAGE) + MORE,
}
CAUGHT = {  # caught before this round as well (regressions)
    "soft_hyphen_every_2": every(PASSAGE, 2, "\u00ad") + MORE,
    "rtl_mark_every_2": every(PASSAGE, 2, "\u200f") + MORE,
    "combining_accent_on_every_letter": every(PASSAGE, 1, "\u0301") + MORE,
    "mathematical_bold": "".join(chr(0x1d41a + ord(c) - 97) if "a" <= c <= "z" else c
                                 for c in PASSAGE) + MORE,
}


@pytest.mark.parametrize("name", list(FIXED) + list(CAUGHT))
def test_a_rag_copy_with_its_text_cut_or_disguised_is_a_copy(sample, name):
    """Attack: the copy's passage to a reader is the original plus a number.  Before this round
    the FIXED ones were another trial (SCORE 0.8111 -> 0.8528); held now, SCORE unchanged."""
    text = {**FIXED, **CAUGHT}[name]
    copy_trial(sample, RAG0, RAG1, passage(text))
    share, shared = G.shingle_containment(G.passage_shingles([PASSAGE]), G.passage_shingles([text]))
    assert share >= G.SPEC["rag_copy_containment"] and shared >= G.SPEC["rag_copy_min_shared"]
    checks, trials, _ = grade(sample)
    assert held(checks, trials)
    assert trials[RAG1].terms["overall_if_cleared"] == 1.0
    assert score(checks) == INTACT


def test_a_rag_copy_split_over_two_retrievals_is_a_copy(sample):
    """Attack: the passage cut in two, returned by two search_documents calls, a number added
    to the second: the passages are read joined in order (1.0, 33 of 33)."""
    def split(rec, d):
        second = json.loads(json.dumps(rec["tool_calls"][0]))
        passages(rec)[0]["content"] = PASSAGE[:25]
        second["result"]["results"][0]["content"] = PASSAGE[25:] + MORE
        rec["tool_calls"].insert(1, second)
    copy_trial(sample, RAG0, RAG1, split)
    checks, trials, _ = grade(sample)
    assert held(checks, trials) and score(checks) == INTACT


def test_a_rag_copy_with_unread_fields_changed_is_a_copy(sample):
    """Attack: besides the number appended, every field the scoring does not read is changed
    (the query, the passage's source, a note, claimed scores, an extra argument of the search)."""
    def unread(rec, d):
        c = rec["tool_calls"][0]
        c["args"] = {"query": "what is the volume fraction?", "top_k": 3}
        passages(rec)[0].update(source="other.md", score=0.93, content=PASSAGE + MORE)
        rec["note"] = "independent run"
        rec["claimed_scores"] = {"overall": 1.0}
    copy_trial(sample, RAG0, RAG1, unread)
    checks, trials, _ = grade(sample)
    assert held(checks, trials) and score(checks) == INTACT


# ======================================================= honest twins of the normalisation
def test_an_honest_full_width_passage_is_read_and_credited(sample):
    """Honest twin (found by the full-width attack): rag-eval-1 retrieves its own passage
    written in full-width characters, as CJK documents are, "ｖｏｌｆｒａｃ＝０．３５", and
    answers 0.35.  Before: "０．３５" read as 0 and 35, the answer not credited (0.4).  Read in
    ASCII (full-width forms, passage_numbers) it states 0.35 and 2: 1.0, and no copy (other numbers, a
    short passage; a passage stating only 0.35 would be held as rag-eval-0's, by decision 19)."""
    text = ("\uff56\uff4f\uff4c\uff46\uff52\uff41\uff43\uff1d\uff10\uff0e\uff13\uff15"
            "\uff0c\uff52\uff4d\uff49\uff4e\uff1d\uff12")     # ｖｏｌｆｒａｃ＝０．３５，ｒｍｉｎ＝２
    assert G.passage_numbers(text) == [0.35, 2.0]

    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volfrac"},
                                "result": {"success": True, "results": [text]}}
    edit_record(sample, RAG1, look_up)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].score == 1.0 and not by_id(checks, f"trial.{RAG1}.duplicate")
    assert score(checks) > INTACT


@pytest.mark.parametrize("other", [
    # the closest honest pair of the margin pool (17 shared, 0.607 of 28)
    "the default volume fraction is 35 percent",           # states 35 and 0.35
    # words that run together once spaces are dropped ("volume fraction" vs "volumefraction")
    "volumefraction:0.35, rmin:2 (see beams2d defaults table)",
    # a CJK passage: its own letters kept
    "beams2d 的默认体积分数为 35％，过滤半径为 2",
])
def test_honest_passages_stay_apart_with_the_text_read_joined(sample, other):
    """Honest twins: rag-eval-1 retrieves its own passage, states 0.35 among other numbers
    and answers 0.35: another trial, both 1.0, the SCORE rises.  (Each states another number
    as well: two passages stating the same numbers are one trial's evidence, decision 19.)"""
    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volume fraction"},
                                "result": {"success": True, "results": [{"content": other}]}}
    edit_record(sample, RAG1, look_up)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].score == trials[RAG0].score == 1.0
    assert not by_id(checks, f"trial.{RAG1}.duplicate")
    assert score(checks) > INTACT


def test_two_examples_answered_from_the_same_canonical_passage_are_held_for_review(sample):
    """Honest cost, kept by decision 19: rag-eval-1 retrieves the very passage rag-eval-0 did
    (one corpus, one canonical passage: an honest agent does exactly this) and answers 0.35.
    The scored content is identical, the retrievals' text the same; nothing in the record can
    tell this from a copy, so the pair counts once until a reviewer clears it (1.0 if cleared)
    and the SCORE stays at the one trial's.  A correct grader may not credit both silently:
    the copy attack is byte-for-byte this record."""
    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "default volfrac"},
                                "result": {"success": True,
                                           "results": [{"source": "beams2d.md", "content": PASSAGE}]}}
    edit_record(sample, RAG1, look_up)
    checks, trials, _ = grade(sample)
    assert held(checks, trials) and trials[RAG1].terms["overall_if_cleared"] == 1.0
    assert score(checks) == INTACT
    assert G.verdict(checks, strict=True)[0] != G.verdict(checks, strict=False)[0] or \
        by_id(checks, f"trial.{RAG1}.duplicate")[0].status == G.Status.REVIEW


# ======================================================= a design copy just above the tolerance
def test_a_design_copy_shifted_by_twice_the_tolerance_off_the_threshold_is_a_copy(sample):
    """Attack: full-ex0 over natural-ex0 with every cell more than 0.01 from the 0.5 threshold
    moved by 2e-3 (2x duplicate_tol) toward it: the binarised design, STL and objectives are
    the same; the design is its binarisation, so it is the same design."""
    def shifted(rec, d):
        with h5py.File(d / "arrays.h5", "r+") as f:
            x = f["design"][()].astype(np.float64)
            far = np.abs(x - 0.5) > 0.01
            x[far] -= 2e-3 * np.sign(x[far] - 0.5)
            f["design"][...] = x.astype(f["design"].dtype)
    copy_trial(sample, FULL0, NAT0, shifted)
    checks, trials, _ = grade(sample)
    assert held(checks, trials, NAT0)
    assert score(checks) < INTACT


# ======================================================= open: strict xfails with the measurement
@pytest.mark.xfail(strict=True, reason=(
    "open: a typo every 7th character (garbled(PASSAGE, 7) + ' (0.4 tall)') leaves 1 of 33 "
    "pieces shared (0.03); any edit denser than one per 8 characters defeats 8-character "
    "pieces, and the grader reads only the numbers of the text, so it cannot tell a garbled "
    "copy from an honest other passage; SCORE 0.8111 -> 0.8528"))
def test_a_rag_copy_with_a_typo_every_seven_characters_is_a_copy(sample):
    copy_trial(sample, RAG0, RAG1, passage(garbled(PASSAGE, 7) + MORE))
    checks, trials, _ = grade(sample)
    assert held(checks, trials)


@pytest.mark.xfail(strict=True, reason=(
    "open: the passage's words in reverse order plus a number share 4 of 33 pieces (0.121); "
    "a bag-of-words measure would merge honest passages built from the same vocabulary "
    "('the default volume fraction is 35 percent' vs '... for beams2d is 0.35'); SCORE "
    "0.8111 -> 0.8528"))
def test_a_rag_copy_with_its_words_reordered_is_a_copy(sample):
    copy_trial(sample, RAG0, RAG1, passage(" ".join(PASSAGE.split()[::-1]) + MORE))
    checks, trials, _ = grade(sample)
    assert held(checks, trials)


@pytest.mark.xfail(strict=True, reason=(
    "open: the byte-identical passage with the answer moved 0.35 -> 0.352 (2x duplicate_tol, "
    "within the key's 0.05 and 'stated' within it) is another trial's content: answers are "
    "compared at duplicate_tol, and widening that to the key's tolerance would merge honest "
    "examples whose expected values differ by less than it; SCORE 0.8111 -> 0.8528"))
def test_a_rag_copy_with_its_answer_nudged_is_a_copy(sample):
    def nudged(rec, d):
        rec["tool_calls"][1]["args"]["volfrac"] = 0.352
    copy_trial(sample, RAG0, RAG1, nudged)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].terms.get("overall_if_cleared", trials[RAG1].score) == 1.0
    assert held(checks, trials)


# ======================================================= the cost of reading odd text
def test_reading_numbers_never_expands_a_passage(monkeypatch):
    """Full-width forms are read by a one-to-one table: no normalisation that can turn one
    character into 18 (U+FDFA under NFKC: a 2^20-character passage took 1.6 s per read, and a
    passage is read once per parameter per retrieval)."""
    def refuse(*a):
        raise AssertionError("passage_numbers normalised its text")
    with monkeypatch.context() as m:
        m.setattr(G.unicodedata, "normalize", refuse)
        got = G.passage_numbers("\ufdfa" * 1000 + " \uff10\uff0e\uff13\uff15")
    assert got == [0.35]


def test_copy_text_is_cut_after_decomposition():
    """U+FDFA decomposes into 18 characters: the copy check's text is cut to 2^21 characters
    after NFKD (a 2^20-character passage of it took 8.8 s uncut), and cut text of one passage
    still matches itself."""
    t = "\ufdfa" * (1 << 17)
    assert len(G._copy_text(t)) <= 1 << 21
    a = G.passage_shingles([t + " 0.35"])
    assert G.shingle_containment(a, G.passage_shingles([t]))[0] == 1.0


# ======================================================= the pairwise work cap
def test_past_the_work_cap_a_rag_copy_is_still_held(sample, monkeypatch):
    """Attack: the run's duplicate_max_ops spent (here: 1): a copy of rag-eval-0 with a number
    appended is not compared but held (fail closed), the SCORE unchanged."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)
    copy_trial(sample, RAG0, RAG1, passage(PASSAGE + MORE))
    checks, trials, _ = grade(sample)
    assert by_id(checks, "run.duplicates_unchecked") and held(checks, trials)
    assert score(checks) == INTACT


def test_past_the_work_cap_trials_whose_scored_numbers_differ_are_not_held(sample, monkeypatch):
    """Honest twin: past duplicate_max_ops, rag-eval-1 retrieves its own passage and answers
    0.5 (rag-eval-0: 0.35).  Before: every pair of one structure past the cap was held, so
    the honest rag-eval-0 (1.0) counted 0 and the SCORE fell 0.8111 -> 0.7071 (and the
    sample run alone: workflow-random-ex0, whose exports differ 0.667, 0.8111 -> 0.7321).
    Answers (or export parameters) apart past the tolerance are never copies: a look at the
    first 64 scored numbers, bounded, clears them."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)

    def other_answer(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volume fraction"},
                                "result": {"success": True, "results": [PASSAGE + "; 0.5 tall"]}}
        rec["tool_calls"][1]["args"]["problem_config"]["volfrac"] = 0.5
    edit_record(sample, RAG1, other_answer)
    checks, trials, _ = grade(sample)
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    assert trials[RAG0].score == 1.0 and score(checks) > INTACT


def test_past_the_work_cap_the_sample_run_is_unchanged(sample, monkeypatch):
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)
    checks, trials, _ = grade(sample)
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    assert score(checks) == INTACT
