"""Red team round 10 on c4873ad: the EngiAI baseline_stats memo (run.py).  A grading with the
memo warm (statistics of other data computed first in this process) must give every record
a grading with the memo empty gives, on the sample run and on runs whose baseline differs
from the warm one only in ways a key could miss (one ulp, -0.0, sigma, SPEC changed between
calls); in-process callers on several threads must not lose their entry to another's clear."""
import re
import shutil

import h5py
import numpy as np
import pytest

from test_engiai_support import B, G
from test_engiai_support import grade_run as grade


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    root = tmp_path_factory.mktemp("engiai_gold") / "run"
    B.build_gold(str(root))
    return root


@pytest.fixture
def run(gold, tmp_path):
    shutil.copytree(gold, tmp_path / "run")
    return tmp_path / "run"

BASE = "baselines/training_code_beams2d/cgan_cnn_2d/seed5"


def records(run_dir):
    checks, trials, _ = grade(run_dir)
    # every record as printed, the wall time of the run's reads left out (it varies run to run)
    return ([re.sub(r"read in [0-9.]+ s", "read in _ s", repr(c.as_dict())) for c in checks],
            {t: (repr(tr.terms), repr(tr.score)) for t, tr in sorted(trials.items())},
            G.verdict(checks, strict=False), G.verdict(checks, strict=True))


def cold(run_dir):
    G._BASELINE_STATS.clear()
    try:
        return records(run_dir)
    finally:
        G._BASELINE_STATS.clear()


def warm(warm_dir, run_dir):
    G._BASELINE_STATS.clear()
    records(warm_dir)                       # the other run's statistics computed first
    assert G._BASELINE_STATS
    try:
        return records(run_dir)
    finally:
        G._BASELINE_STATS.clear()


def edit_baseline(run_dir, fn, attr=None):
    with h5py.File(run_dir / "reference.h5", "r+") as fh:
        if fn is not None:
            ds = fh[f"{BASE}/reference_designs"]
            ds[...] = fn(ds[()])
        if attr is not None:
            fh[BASE].attrs.update(attr)


def test_honest_sample_run_same_records_warm_and_cold(gold, run):
    assert warm(gold, run) == cold(run)


@pytest.mark.parametrize("edit", [
    ("one ulp", lambda a: np.nextafter(a, 2.0 * (a < 0.5)), None),
    ("-0.0 for 0.0", lambda a: np.where(a == 0.0, -0.0, a), None),
    ("big-endian copy", lambda a: a.astype(">f8"), None),
    ("one design moved", lambda a: np.concatenate([a[1:], a[:1]]), None),
    ("sigma one ulp up", None, "ulp"),
    ("sigma as an integer attribute", None, "int"),
])
def test_baseline_differing_where_a_key_could_miss_same_as_cold(gold, run, edit):
    _, fn, sig = edit
    attr = None
    if sig is not None:
        with h5py.File(run / "reference.h5", "r") as fh:
            s = float(fh[BASE].attrs["sigma"])
        attr = {"sigma": np.nextafter(s, np.inf) if sig == "ulp" else np.int64(max(1, round(s)))}
    edit_baseline(run, fn, attr)
    assert warm(gold, run) == cold(run)


def test_spec_changed_between_calls_is_a_new_key(gold, monkeypatch):
    """SPEC mutated in place after a grading (as a test or an embedding caller might): the
    statistics are recomputed, not the old SPEC's served."""
    G._BASELINE_STATS.clear()
    before = records(gold)
    monkeypatch.setitem(G.SPEC, "copy_distance_frac", G.SPEC["copy_distance_frac"] * 0.5)
    monkeypatch.setitem(G.SPEC, "copy_scale_percentile", 90)
    after_warm = records(gold)
    assert after_warm == cold(gold) and after_warm != before


def test_memo_entry_cleared_by_another_thread_between_store_and_read():
    """grade() from threads of one process (an embedding caller): thread B clears the full
    memo right after thread A stored its entry and before A reads it back.  A gets its own
    statistics, not a KeyError."""
    rng = np.random.default_rng(0)
    ref, bsm = rng.random((3, 4, 4)), rng.random((3, 4, 4))

    class ClearedByAnother(dict):
        def __setitem__(self, key, value):
            super().__setitem__(key, value)
            self.clear()                    # what the other thread's clear() does then

    saved = G._BASELINE_STATS
    G._BASELINE_STATS = ClearedByAnother()
    try:
        stats = G.baseline_stats(ref, bsm, 0.5)
    finally:
        G._BASELINE_STATS = saved
    assert stats["mmd"] == G.mmd(bsm, ref, 0.5)


def test_memo_honest_twin_entry_reused_and_equal():
    rng = np.random.default_rng(1)
    ref, bsm = rng.random((3, 4, 4)), rng.random((3, 4, 4))
    G._BASELINE_STATS.clear()
    try:
        a = G.baseline_stats(ref, bsm, 0.5)
        b = G.baseline_stats(ref.copy(order="F"), bsm.copy(), 0.5)
        assert b is a and a["mmd"] == G.mmd(bsm, ref, 0.5)
    finally:
        G._BASELINE_STATS.clear()
