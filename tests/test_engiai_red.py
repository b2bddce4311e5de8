"""EngiAI second review of issue 16 (attacker's view): cheats that must not earn credit and
honest runs that must not be penalised.  Each test names the attack or the honest case."""
import json
import shutil

import h5py
import numpy as np
import pytest

from conftest import REPO

from test_engiai_support import B, G, edit_record, gold, run  # noqa: F401
from test_engiai_support import grade_run as grade

SAMPLE = REPO / "reference" / "engiai" / "sample_run"
PHO = "training_code_photonics2d-t4-func-verbose-seed3"
INTACT = 0.8253                     # the sample run's SCORE (test_engiai_sample pins it)


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "sample"
    shutil.copytree(SAMPLE, dst)
    return dst


def _nan(a):
    a = a.copy()
    a[0, 0, 0] = np.nan
    return a


# ---------------------------------------------------------------- SCORE never rises by breaking one's samples
@pytest.mark.parametrize("breakage", ["nan", "null", "garbage_file"])
def test_breaking_ones_own_samples_never_raises_the_score(sample, breakage):
    """Before: the photonics model (score 0.6186, below the run's 0.8253) made UNSCORABLE by a
    NaN in its samples, a wrong shape, `samples: null` or an unreadable arrays.h5 left its cell
    out of the SCORE: 0.8441.  The trial stays None (the seed's "no usable MMD"), but the cell
    now counts 0.0."""
    tdir = sample / "trials" / PHO
    with h5py.File(tdir / "arrays.h5", "r") as fh:
        s = fh["samples"][()].astype(np.float64)
    if breakage == "nan":
        B.h5_write(str(tdir / "arrays.h5"), {"samples": _nan(s)})
    elif breakage == "garbage_file":
        (tdir / "arrays.h5").write_bytes(b"\x89HDF\r\n" + b"\0" * 100)
    else:
        edit_record(sample, PHO, lambda r: r["artefacts"].update(samples=None))
    checks, trials, cells = grade(sample)
    t = trials[PHO]
    assert t.score is None and t.status == "unscorable" and t.artefact_none
    (cell,) = [c for c in cells if c["problem"] == "training_code_photonics2d"]
    assert cell["status"] == "unscorable" and cell["n_artefact_none"] == 1
    (rec,) = [c for c in checks if c.id == "cell.training_code_photonics2d/t4-func-verbose"]
    assert "counts 0.0 in the SCORE" in rec.message
    assert G.verdict(checks, strict=False)[1] < INTACT


def test_a_missing_baseline_stays_out_of_the_score(sample):
    """The harness gap (no baseline for seed 7) keeps its cell out of the SCORE, as before."""
    checks, trials, cells = grade(sample)
    t = trials["training_code_beams2d-t2-terse-seed7"]
    assert t.score is None and not t.artefact_none
    (cell,) = [c for c in cells if c["problem"] == "training_code_beams2d"]
    assert cell["n_artefact_none"] == 0
    assert G.verdict(checks, strict=False)[1] == INTACT
