"""Threshold calibration: every row of the seed's table gets the seed's verdict
for the seed's reason, in the survey AND in the grader's own Tier 2 function;
a few schemes are also graded end to end as real submissions."""
import math

import pytest

from test_adi_support import failed, grade, grader, submission_from_solver, survey, survey_rows

# the Tier 2 check(s) that must fail for each rejected row (the seed's reason)
REASON = {
    "MCS θ=10": {"tier2.reduction", "tier2.fitted_order"},          # 79.9x, 1.652 in the seed
    "MCS θ=20": {"tier2.reduction", "tier2.fitted_order"},
    "CS θ=1/3": {"tier2.monotone", "tier2.finest_error"},            # unstable: overflow
    "CS θ=0.8": {"tier2.fitted_order", "tier2.last_two_orders"},     # order 1
    "Douglas θ=1/2": {"tier2.fitted_order", "tier2.last_two_orders"},
    "Douglas θ=1": {"tier2.fitted_order", "tier2.last_two_orders"},
    "mixed term dropped (MCS 1/3)": {"tier2.monotone", "tier2.reduction", "tier2.fitted_order"},
}


@pytest.fixture(scope="module")
def rows():
    return survey_rows()


def test_survey_has_the_seeds_19_rows(rows):
    S = survey()
    assert len(S.ROWS) == 19 and len(rows) == 19
    assert rows["MCS θ=8"]["seed"] == "accept" and rows["MCS θ=10"]["seed"] == "reject"
    assert rows["HV θ=8"]["seed"] == "accept"


@pytest.mark.parametrize("label", [r[0] for r in survey().ROWS])
def test_row_verdict_matches_the_seed(rows, label):
    G = grader()
    r = rows[label]
    assert r["verdict"] == r["seed"], (label, r["reasons"], r["hidden_reasons"])
    assert r["tier2"] == r["seed"], (label, r["reasons"])       # Tier 2 alone already agrees
    checks = G.tier2_checks([G.h_value(p) for p in range(5)], r["errors"])
    fails = {c.id for c in checks if c.status is G.Status.FAIL}
    if r["seed"] == "accept":
        assert not fails, (label, [c.message for c in checks if c.status is G.Status.FAIL])
        assert G.tier1_checks(r["errors"])[0].status is G.Status.PASS
    else:
        assert REASON[label] <= fails, (label, fails)


def test_the_band_ends_between_mcs_8_and_10(rows):
    e8, e10 = rows["MCS θ=8"]["orders"], rows["MCS θ=10"]["orders"]
    assert e8["reduction"] >= 100 and 1.70 <= e8["fitted"] <= 2.30
    assert e10["reduction"] < 100 and e10["fitted"] < 1.70


def test_cs_third_overflows(rows):
    e = rows["CS θ=1/3"]["errors"]
    assert not math.isfinite(e[-1]) or e[-1] > 1e10


def test_mixed_term_dropped_plateaus(rows):
    e = rows["mixed term dropped (MCS 1/3)"]["errors"]
    assert 1e-3 < e[0] < 5e-3 and abs(math.log(e[0] / e[-1])) < 0.1   # plateau near 2e-3


@pytest.mark.parametrize("scheme,theta,mixed,expect_fail", [
    ("Douglas", 0.5, True, {"tier2.fitted_order"}),
    ("MCS", 1 / 3, False, {"tier2.monotone", "tier2.fitted_order"}),
    ("HV", 8.0, True, set()),
])
def test_graded_end_to_end(tmp_path, scheme, theta, mixed, expect_fail):
    src = survey().variant_source(scheme, theta, mixed)
    sub = submission_from_solver(tmp_path / "sub", src)
    rc, stdout, stderr, doc = grade(sub)
    if expect_fail:
        assert doc["score"] == 0.0 and rc == 1
        assert expect_fail <= failed(doc), failed(doc)
    else:
        assert doc["score"] == 1.0 and rc == 0, failed(doc)
