"""EngiAI issue 24, red team round 4 (RAG copies): when are two RAG trials the same trial?

What a RAG trial is scored on is its answers and whether a successful retrieval before each
states the answered value.  Two RAG trials with the same answers are copies when their
retrievals state the same numbers (as before), or, when the numbers differ, when their passages'
texts are near-identical: of the smaller set of 8-character pieces (passage_shingles: case,
whitespace, punctuation, accents, invisible characters and look-alike letters ignored, per
passage) at least rag_copy_containment = 0.7 lie in the other's, and at least
rag_copy_min_shared = 20 do.  Before, the numbers alone decided: a copy of rag-eval-0 (1.0)
over rag-eval-1 (0.0) with one more number appended to its passage was another trial, SCORE
0.8111 -> 0.8528.  Each attack sits beside the honest twin it must not touch."""
import itertools
import json
import shutil

import pytest

from test_engiai_round4 import INTACT, SAMPLE, by_id, copy_trial, score
from test_engiai_support import G, edit_record
from test_engiai_support import grade_run as grade

RAG0, RAG1 = "rag_beams2d-rag-eval-0", "rag_beams2d-rag-eval-1"
PASSAGE = "beams2d: volume fraction volfrac = 0.35 by default"   # the sample's rag-eval-0
OTHER = {"source": "photonics2d.md", "content": "photonics2d: the default wavelength is 1.55 um"}


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def containment(a: list, b: list) -> tuple:
    return G.shingle_containment(G.passage_shingles(a), G.passage_shingles(b))


def passages(rec):
    return rec["tool_calls"][0]["result"]["results"]


def set_passage(text):
    def edit(rec, d=None):
        passages(rec)[0]["content"] = text
    return edit


# ======================================================= copies with edited passages
def appended(rec, d):
    passages(rec)[0]["content"] += " (0.4 for the tall variant)"


def prefixed(rec, d):
    passages(rec)[0]["content"] = "Note 2 of 3: " + PASSAGE + "; 0.4 when tall."


def respaced(rec, d):
    passages(rec)[0]["content"] = "  BEAMS2D -\tVolume  Fraction: volfrac=0.35, by default;  0.4 (tall)"


def passage_added_first(rec, d):
    passages(rec).insert(0, OTHER)


def as_plain_string(rec, d):
    passages(rec)[0] = PASSAGE + " and 0.4 for tall beams"


def repeated_with_more(rec, d):
    call = json.loads(json.dumps(rec["tool_calls"][0]))
    call["result"]["results"][0]["content"] += " Tall beams: 0.4."
    rec["tool_calls"].insert(1, call)


def mid_insert(rec, d):
    passages(rec)[0]["content"] = "beams2d: volume fraction (see 4.2) volfrac = 0.35 by default"


def edited_and_appended(rec, d):
    passages(rec)[0]["content"] = "beams2d: volume fraction volfrac = 0.35 as default (0.4 tall)"


def look_alikes(rec, d):
    """Latin a, e, o swapped for Cyrillic ones, a zero-width space in every word, a number
    appended: the same text to a reader."""
    t = PASSAGE.translate(str.maketrans("aeo", "\u0430\u0435\u043e"))
    passages(rec)[0]["content"] = t.replace("olu", "o\u200blu") + " (0.4 tall)"


def cut_into_words(rec, d):
    """The passage cut into one passage per word (each shorter than a piece), one more number."""
    rec["tool_calls"][0]["result"]["results"] = PASSAGE.split() + ["tall: 0.4"]


COPIES = [appended, prefixed, respaced, passage_added_first, as_plain_string,
          repeated_with_more, mid_insert, edited_and_appended, look_alikes, cut_into_words]


@pytest.mark.parametrize("perturb", COPIES, ids=lambda f: f.__name__)
def test_a_rag_copy_with_an_edited_passage_stating_other_numbers_is_a_copy(sample, perturb):
    """Attack: rag-eval-0 (1.0) over rag-eval-1 (0.0), its passage edited so that it states
    another set of numbers.  Before: another trial for every one of these, SCORE 0.8111 ->
    0.8528.  Held (0.0 until cleared, 1.0 if cleared), the SCORE unchanged."""
    copy_trial(sample, RAG0, RAG1, perturb)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{RAG1}.duplicate")
    assert d.measured == RAG0 and "state other numbers" in d.message
    assert trials[RAG1].score == 0.0 and trials[RAG1].terms["overall_if_cleared"] == 1.0
    assert score(checks) == INTACT


def test_a_copy_with_one_of_two_passages_dropped_is_a_copy(sample):
    """Attack: rag-eval-0 answers from two passages (its own plus another, still 1.0); the copy
    over rag-eval-1 keeps only the first (its numbers lose 1.55): one contains the other."""
    edit_record(sample, RAG0, lambda r: passages(r).append(OTHER))
    copy_trial(sample, RAG0, RAG1, lambda rec, d: passages(rec).pop())
    checks, trials, _ = grade(sample)
    assert trials[RAG0].score == 1.0
    assert by_id(checks, f"trial.{RAG1}.duplicate") and trials[RAG1].score == 0.0
    assert score(checks) == INTACT


def test_a_copy_with_its_passages_reordered_is_a_copy(sample):
    """Attack: rag-eval-0 with two passages, copied with them in the other order and a number
    added to one: only the pieces across the boundary change (0.901 of the smaller set)."""
    edit_record(sample, RAG0, lambda r: passages(r).append(OTHER))

    def reorder(rec, d):
        passages(rec).reverse()
        passages(rec)[0]["content"] += " (or 1.3 um)"
    copy_trial(sample, RAG0, RAG1, reorder)
    checks, trials, _ = grade(sample)
    assert by_id(checks, f"trial.{RAG1}.duplicate") and trials[RAG1].score == 0.0
    assert score(checks) == INTACT


def test_a_copy_with_another_answer_is_another_trial(sample):
    """The text decides only between trials with the same answers: the copy answering 0.36
    (within the 0.05 the key allows, 1e-2 from 0.35, 10x duplicate_tol) is another trial,
    as before (moving the trace's numbers is forging the harness's record)."""
    def answer(rec, d):
        rec["tool_calls"][1]["args"]["volfrac"] = 0.36
        appended(rec, d)
    copy_trial(sample, RAG0, RAG1, answer)
    checks, trials, _ = grade(sample)
    assert not by_id(checks, f"trial.{RAG1}.duplicate")


# ======================================================= honest twins
HONEST = [
    "Beams default to a 35 percent volume fraction.",         # the '35 percent' twin: 0.226
    "the default volume fraction is 35 percent",                # 0.25
    "| parameter | default |\n| volfrac | 0.35 |\n| rmin | 2 |",  # 0.125
    "In the beams2d benchmark the target volume fraction volfrac defaults to 0.35 of the "
    "domain (0.4 for tall beams).",
]


@pytest.mark.parametrize("text", HONEST)
def test_honest_rag_trials_answering_alike_from_other_passages_are_separate(sample, text):
    """Honest twin: rag-eval-1 does its own retrieval, another passage stating 0.35 among other
    numbers, and answers 0.35 (both examples expect it): both 1.0, no copy, the SCORE rises."""
    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volume fraction"},
                                "result": {"success": True, "results": [{"content": text}]}}
    edit_record(sample, RAG1, look_up)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].score == trials[RAG0].score == 1.0
    assert not [c for c in checks if c.id.endswith(".duplicate")]
    assert score(checks) > INTACT
    share, _ = containment([PASSAGE], [text])
    assert share < G.SPEC["rag_copy_containment"]


@pytest.mark.parametrize("own, other", [
    # the closest honest pair measured (0.607 of 28 pieces, 17 shared)
    ("The default volume fraction for beams2d is 0.35.", "the default volume fraction is 35 percent"),
    # a short passage: 7 of its 9 pieces (0.778) lie in the other, under the 20 shared
    ("volume fraction: .35", "the default volume fraction is 35 percent"),
    # the '35 percent' vs '0.35' case of inclusion: {0.35} within {35, 0.35}
    ("Beams default to a volume fraction of 0.35.", "Beams default to a 35 percent volume fraction.")])
def test_honest_twins_at_the_measured_margin_are_separate(sample, own, other):
    """Honest twins where the text comes closest: rag-eval-0 and rag-eval-1 each retrieve their
    own passage, both answer 0.35 (1.0 each); the numbers differ, the texts are not the same."""
    edit_record(sample, RAG0, set_passage(own))

    def look_up(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volfrac"},
                                "result": {"success": True, "results": [other]}}
    edit_record(sample, RAG1, look_up)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].score == trials[RAG0].score == 1.0
    assert not [c for c in checks if c.id.endswith(".duplicate")]


# ======================================================= the measured margin
POOL = [  # honest ways of stating the volume fraction (tests/test_engiai_key.py, _red2.py) and
    # passages written independently of the sample's
    "the default volume fraction is 35 percent", "35 per cent of the domain", "35%", "35 pct",
    "volfrac 0.35", "a fraction of 7/20", "thirty-five percent", "Thirty five per cent",
    "zero point three five", "volume fraction: .35", "a 35-percent volume fraction", "35 per-cent",
    "体积分数 35％", "35 ± 5 %", "35±5%", "between 30-40%", "30 to 40 percent", "30\u201340 %",
    "point three five", "thirty-five hundredths", "seven twentieths",
    "Beams default to a 35 percent volume fraction.",
    "The default volume fraction for beams2d is 0.35.",
    "## beams2d\nParameters: volfrac (float, default 0.35), rmin (default 2.0), forcedist (default 0.0).",
    "In the beams2d benchmark the target volume fraction volfrac defaults to 0.35 of the domain.",
    "| parameter | default |\n| volfrac | 0.35 |\n| rmin | 2 |", PASSAGE]


def stated(text):
    return sorted({round(v, 12) for v in G.passage_numbers(text)})


def test_the_margin_between_copies_and_honest_passages():
    """The measurement behind rag_copy_containment = 0.7 and rag_copy_min_shared = 20 (8-char
    pieces).  Honest pairs whose numbers differ (266 of the pool's 351): where 20 or more
    pieces are shared: none (red team round 5: the text read without spaces, the most shared
    is 17, 0.607 of 28; before, 0.618 of 34 with 21 shared); the 4 pairs at 0.7 or more share
    at most 7 pieces (short passages: "volfrac 0.35" lies whole, 3 of 3, in a table).
    Copies of the sample's passage (33 pieces): 1.0 (33 shared) with a number appended,
    prefixed, re-spaced, look-alike letters, a passage added; 0.788 (26) with a clause
    inserted; 0.727 (24) with a word edited too."""
    pairs = [(containment([a], [b]), a, b) for a, b in itertools.combinations(POOL, 2)
             if stated(a) != stated(b)]
    assert len(pairs) == 266
    shared = [s for (s, n), a, b in pairs if n >= G.SPEC["rag_copy_min_shared"]]
    assert not shared and max(n for (s, n), a, b in pairs) == 17
    high = [n for (s, n), a, b in pairs if s >= G.SPEC["rag_copy_containment"]]
    assert len(high) == 4 and max(high) == 7
    assert max(pairs)[0] == (1.0, 3)
    for perturb, share in [(appended, 1.0), (prefixed, 1.0), (respaced, 1.0), (look_alikes, 1.0),
                           (mid_insert, 26 / 33), (edited_and_appended, 24 / 33)]:
        rec = {"tool_calls": [{"result": {"results": [{"content": PASSAGE}]}}]}
        perturb(rec, None)
        assert containment([PASSAGE], [p["content"] for p in passages(rec)]) == (
            pytest.approx(share), round(share * 33)), perturb.__name__


def test_pieces_ignore_order_cuts_and_writing():
    """Pieces are per passage and of the passages joined in order: the passages' order changes
    only the pieces across their boundary (64 of 71 shared, 0.901), a passage cut into words nothing
    (33 of 33); case, whitespace, punctuation, accents, zero-width characters and look-alike
    letters change nothing."""
    a = G.passage_shingles([PASSAGE, OTHER["content"]])
    b = G.passage_shingles([OTHER["content"], PASSAGE])
    assert (a.size, b.size) == (71, 71) and G.shingle_containment(a, b) == (pytest.approx(64 / 71), 64)
    assert containment([PASSAGE], PASSAGE.split()) == (1.0, 33)
    assert G.passage_shingles(["BEAMS2D -- Volume\u00a0fraction:\tvolfrac=0.35; by default!",
                               "photonics2d: the default wavelength is 1.55 \u00b5m"]).size
    assert G.passage_shingles(["b\u00e9ams2d: v\u200bolume fr\u0430ction volfrac = 0.35 by default"]
                              ).tolist() == G.passage_shingles([PASSAGE]).tolist()
    assert G.passage_shingles([]).size == 0 and G.shingle_containment(a, a[:0]) == (0.0, 0)


def test_the_rag_text_past_the_bytes_cap_fails_closed(sample, monkeypatch):
    """Past duplicate_max_bytes the passages' pieces are not kept: a pair of RAG trials of one
    structure is held as a possible copy (REVIEW run.duplicates_unchecked), never a silent pass."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_bytes", 1)
    copy_trial(sample, RAG0, RAG1, appended)
    checks, trials, _ = grade(sample)
    assert by_id(checks, "run.duplicates_unchecked")
    assert by_id(checks, f"trial.{RAG1}.duplicate") and trials[RAG1].score == 0.0
    assert score(checks) <= INTACT


def test_past_the_bytes_cap_rag_trials_with_other_answers_are_not_held(sample, monkeypatch):
    """Honest twin past the cap: rag-eval-1 retrieves its own passage and answers 0.5 (wrong,
    uncredited): other answers, never held, whether or not the texts were kept."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_bytes", 1)

    def other_answer(rec):
        rec["tool_calls"][0] = {"name": "search_documents", "args": {"query": "volume fraction"},
                                "result": {"success": True, "results": [PASSAGE + "; 0.5 tall"]}}
        rec["tool_calls"][1]["args"]["problem_config"]["volfrac"] = 0.5
    edit_record(sample, RAG1, other_answer)
    checks, trials, _ = grade(sample)
    assert not by_id(checks, f"trial.{RAG1}.duplicate")


# ======================================================= answers the key does not score
def untested_answer(rec, d):
    rec["tool_calls"][1]["args"]["forcedist"] = 0.0


def later_untested_answer(rec, d):
    rec["tool_calls"].append({"name": "optimize_design", "args": {"rmin": 2.0},
                              "result": {"success": True}})


@pytest.mark.parametrize("perturb", [untested_answer, later_untested_answer], ids=lambda f: f.__name__)
def test_a_rag_copy_adding_an_answer_the_key_does_not_score_is_a_copy(sample, perturb):
    """Attack: rag-eval-0 over rag-eval-1 with a forcedist (or, in a later call, an rmin) the
    key does not test (both sample keys test volfrac only).  Before: another structure, another
    trial, SCORE 0.8111 -> 0.8528.  Only the answers the key scores are compared."""
    copy_trial(sample, RAG0, RAG1, perturb)
    checks, trials, _ = grade(sample)
    assert by_id(checks, f"trial.{RAG1}.duplicate") and trials[RAG1].score == 0.0
    assert score(checks) == INTACT


def test_answers_the_key_scores_are_compared():
    """Honest twin: where the key tests forcedist, two trials answering it differently (0.0,
    0.5) with one passage are other trials; where it does not, they are one."""
    class R:
        duplicate_bytes = 0

    def sig(forcedist, tested):
        calls = [{"name": "search_documents", "args": {},
                  "result": {"success": True, "results": [PASSAGE + "; forcedist 0 or 0.5"]}},
                 {"name": "optimize_design", "args": {"volfrac": 0.35, "forcedist": forcedist},
                  "result": {"success": True}}]
        return G.content_signature("rag_beams2d", calls, [("rag_scored", tested)], R(), "t")
    both = ["volfrac", "forcedist"]
    assert G.content_distance(sig(0.0, both), sig(0.5, both)) == pytest.approx(0.5)
    assert G.content_distance(sig(0.0, ["volfrac"]), sig(0.5, ["volfrac"])) == 0.0
