"""EngiAI issue 24, round 4, second engineer (red team): the duplicate aggregation, its work
caps and extra `expected` fields attacked with the source in hand.  Each attack asserts the
verdict a correct grader gives; each sits beside an honest twin."""
import json
import shutil

import h5py
import numpy as np
import pytest

from test_engiai_round4 import FULL0, INTACT, NAT0, SAMPLE, by_id, copy_trial, score, ulp
from test_engiai_support import G, edit_record
from test_engiai_support import grade_run as grade

T1, T7 = "training_code_beams2d-t2-terse-seed1", "training_code_beams2d-t2-terse-seed7"
RAG0, RAG1 = "rag_beams2d-rag-eval-0", "rag_beams2d-rag-eval-1"


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def held(checks, trials, tid):
    return bool(by_id(checks, f"trial.{tid}.duplicate")) and trials[tid].score == 0.0


def copy_trial_any(run, src, dst, perturb):
    """copy_trial for records without every key field (training code has no example_id)."""
    keep = json.loads((run / "trials" / dst / "trial.json").read_text())
    shutil.rmtree(run / "trials" / dst)
    shutil.copytree(run / "trials" / src, run / "trials" / dst)
    rec = json.loads((run / "trials" / dst / "trial.json").read_text())
    rec.update({k: keep[k] for k in ("trial_id", "prompt_style", "example_id", "seed") if k in keep})
    perturb(rec, run / "trials" / dst)
    (run / "trials" / dst / "trial.json").write_text(json.dumps(rec))


# ======================================================= a design copy moved past the prefilter
def test_a_copy_with_solid_cells_lowered_but_still_solid_is_a_copy(sample):
    """Attack: full-ex0 copied over natural-ex0 with 1% of its solid cells lowered by 0.3 (still
    above the 0.5 threshold: the binarised design, STL and objectives unchanged); the array
    mean moves by more than duplicate_tol, which the means prefilter used to skip."""
    def lowered(rec, d):
        with h5py.File(d / "arrays.h5", "r+") as f:
            x = f["design"][()]
            flat = x.reshape(-1)
            solid = np.flatnonzero(flat > 0.85)
            idx = np.random.default_rng(1).choice(solid, max(solid.size // 50, 1), replace=False)
            flat[idx] -= 0.3
            f["design"][...] = x
    copy_trial(sample, FULL0, NAT0, lowered)
    checks, trials, _ = grade(sample)
    assert held(checks, trials, NAT0)
    assert score(checks) < INTACT


# ======================================================= training samples reordered
def test_a_training_copy_with_its_samples_reordered_is_a_copy():
    """Attack: a training trial's generated samples permuted (model quality reads the set, not
    its order).  Before: the permuted copy lay ~0.5 apart cell by cell (another trial).  The
    sample set is compared in a canonical order: the same content (sha256 equal, distance 0).
    (In the sample run seed7's key makes the copy UNSCORABLE, so this is a unit test.)"""
    class R:
        duplicate_bytes = 0
    s = np.random.default_rng(0).uniform(size=(8, 50, 100))
    calls = [{"name": "validate_training_script", "args": {}, "result": {"success": True}}]
    p = "training_code_beams2d"
    a = G.content_signature(p, calls, [("samples", s)], R(), "a")
    b = G.content_signature(p, calls, [("samples", s[::-1])], R(), "b")
    c = G.content_signature(p, calls, [("samples", np.roll(s, 1, axis=2))], R(), "c")
    assert a["sha256"] == b["sha256"] and G.content_distance(a, b) == 0.0
    assert G.content_distance(a, c) > 0.1              # honest twin: another sample set


# ======================================================= RAG copy with the retrieval repeated
def test_a_rag_copy_with_its_retrieval_repeated_is_a_copy(sample):
    """Attack: rag-eval-0 (1.0) over rag-eval-1 (0.0) with its search_documents call repeated
    (the same passage twice): the scoring reads the same answer grounded in the same numbers."""
    def twice(rec, d):
        rec["tool_calls"].insert(1, json.loads(json.dumps(rec["tool_calls"][0])))
    copy_trial(sample, RAG0, RAG1, twice)
    checks, trials, _ = grade(sample)
    assert held(checks, trials, RAG1)
    assert score(checks) == INTACT


# ======================================================= the work caps
@pytest.mark.parametrize("cap", ["duplicate_max_ops", "duplicate_max_bytes"])
def test_a_near_copy_past_a_work_cap_never_counts(sample, monkeypatch, cap):
    """Attack: the run padded so that the comparison caps are exhausted, then a 1-ulp copy.
    Before: run REVIEW but the copy's score counted (0.8220 non-strict).  A correct grader
    holds every trial it could not compare with a trial of the same structure and close
    array means (counted once until cleared): the SCORE never rises."""
    monkeypatch.setitem(G.SPEC, cap, 1)
    copy_trial(sample, FULL0, NAT0, ulp)
    checks, trials, _ = grade(sample)
    (u,) = by_id(checks, "run.duplicates_unchecked")
    assert u.status is G.Status.REVIEW
    assert G.verdict(checks, strict=True)[1] == 0.0
    assert trials[NAT0].score == 0.0 and score(checks) < INTACT


def test_an_exact_copy_past_the_ops_cap_is_still_caught(sample, monkeypatch):
    """Attack: ops cap exhausted, exact copy: identical content costs no work (sha256)."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)
    copy_trial(sample, FULL0, NAT0)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert "identical to" in d.message and trials[NAT0].score == 0.0


def test_honest_sample_past_the_ops_cap_holds_only_comparable_trials(sample, monkeypatch):
    """Honest twin: the sample run with the ops cap at 1: only trials that share a structure
    and array means with another, and whose scored numbers lie within the tolerance, are held
    (none else loses its score).  Round 5: in the sample every such pair's numbers (exports)
    differ, so none is held and the run has no REVIEW (before: workflow-random-ex0 was held,
    0.8111 -> 0.7321)."""
    monkeypatch.setitem(G.SPEC, "duplicate_max_ops", 1)
    checks, trials, _ = grade(sample)
    assert not by_id(checks, "run.duplicates_unchecked")
    held_ids = {c.id.split(".")[1] for c in checks if c.id.endswith(".duplicate")}
    assert held_ids <= {"beams2d-workflow-random-ex0", "beams2d-workflow-derived-params-ex0",
                        "beams2d-workflow-multi-export-ex0", "beams2d-full-ex0",
                        "beams2d-natural-ex0", "beams2d-full-ex1",
                        "beams2d-workflow-conditional-ex1", "beams2d-workflow-distractor-ex1"}


# ======================================================= extra `expected` fields
def test_an_extra_expected_field_under_another_case_is_not_read(sample):
    """Attack: the record's copy adds `Expected_Volfrac_Tolerance` (another spelling of a read
    field) loosening the RAG tolerance: nothing reads it (the key is the harness's), so at most
    INFO; rag-eval-1 (answer wrong) stays 0.0."""
    def loosen(r):
        r["expected"]["conditions"]["Expected_Volfrac_Tolerance"] = 10.0
        r["expected"]["expected_volfrac_tolerance"] = 10.0
    edit_record(sample, RAG1, loosen)
    checks, trials, _ = grade(sample)
    assert trials[RAG1].score == 0.0
    assert score(checks) <= INTACT


# ======================================================= honest twins
def test_honest_deterministic_twin_is_held_for_review_not_failed(sample):
    """Honest twin: a deterministic agent that answers full and natural on example 0 with the
    same trace and design (same task, same answer).  The grader cannot tell it from a copy: it
    is counted once with a REVIEW naming the kept member (clearable; overall_if_cleared
    kept), never a FAIL; the run is PARTIAL."""
    copy_trial(sample, FULL0, NAT0)
    checks, trials, _ = grade(sample)
    (d,) = by_id(checks, f"trial.{NAT0}.duplicate")
    assert d.status is G.Status.REVIEW and "deterministic agent" in d.message
    assert trials[NAT0].terms["overall_if_cleared"] > 0.9
    assert not [c for c in checks if c.status is G.Status.FAIL and "duplicate" in c.id]


# ======================================================= STL re-serialised
def binary_to_ascii_reversed(path):
    """A binary STL rewritten as ASCII with its facets in reverse order (float32 exact)."""
    import struct
    raw = path.read_bytes()
    (n,) = struct.unpack_from("<I", raw, 80)
    facets = [struct.unpack_from("<12f", raw, 84 + 50 * i) for i in range(n)]
    out = ["solid copy"]
    for f in reversed(facets):
        out.append("facet normal %.9g %.9g %.9g" % f[:3])
        out.append("outer loop")
        out += ["vertex %.9g %.9g %.9g" % f[3 + 3 * k: 6 + 3 * k] for k in range(3)]
        out += ["endloop", "endfacet"]
    out.append("endsolid copy")
    path.write_text("\n".join(out) + "\n")


def test_a_copy_with_its_stl_reserialised_is_a_copy(sample):
    """Attack: full-ex0 over natural-ex0 with design.stl rewritten as ASCII, facets reversed:
    the STL is compared as the solid it witnesses, not as bytes."""
    copy_trial(sample, FULL0, NAT0, lambda rec, d: binary_to_ascii_reversed(d / "design.stl"))
    checks, trials, _ = grade(sample)
    assert held(checks, trials, NAT0)
    assert score(checks) < INTACT


# ======================================================= RAG copy stating one more number
def test_a_rag_copy_whose_passage_states_one_more_number_is_a_copy(sample):
    """Attack: rag-eval-0 (1.0) over rag-eval-1 (0.0), the passage stating one more number.
    Before: another trial (the numbers stated differ), SCORE 0.8111 -> 0.8528 non-strict.
    Now the passages' texts decide when the numbers differ: all 40 pieces of the original lie in
    the copy's (rag_copy_containment 0.7); held, SCORE unchanged.  The honest twin comparing the
    sets by inclusion merged (test_engiai_round4's "35 percent" passage) shares 10 of 38
    pieces, 0.263: separate (tests/test_engiai_rag_copies.py)."""
    def more(rec, d):
        rec["tool_calls"][0]["result"]["results"][0]["content"] += " (0.4 for the tall variant)"
    copy_trial(sample, RAG0, RAG1, more)
    checks, trials, _ = grade(sample)
    assert held(checks, trials, RAG1)
    assert score(checks) == INTACT
