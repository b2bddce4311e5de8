"""The seed's threshold-calibration table: each variant submission (its solver
plus its own honestly computed outputs) gets the seed's verdict for the seed's
reason."""
import pytest

from test_fem_support import FEM, build, failed, grade


def variant(name):
    src = (FEM / "variants" / name / "fem_solver.py").read_text()
    return build(f"variant-{name}", src)


def test_slopes_dropped_fails_tier1_band_and_order():
    rc, out, err, doc, keys = grade(variant("slopes_dropped"))
    assert rc == 1 and keys["SCORE"] == "0.0" and keys["RESULT"] == "FAIL"
    bad = failed(doc)
    assert {"tier1.dense_band", "tier1.coarse_orders"} <= bad
    assert "tier2.nodal_superconvergence" not in bad          # nodal study identical to gold
    band = next(c for c in doc["checks"] if c["id"] == "tier1.dense_band")
    assert band["measured"][0] == pytest.approx(1.159243e-03, rel=1e-5)    # seed: 1.159e-03
    orders = next(c for c in doc["checks"] if c["id"] == "tier1.coarse_orders")["measured"]
    assert orders == pytest.approx([1.013, 1.003], abs=2e-3)              # seed: 1.013 / 1.003
    nodal = next(c for c in doc["checks"] if c["id"] == "tier2.nodal_superconvergence")
    assert nodal["measured"] == pytest.approx(4.48e-12, rel=0.01)          # seed: identical 4.48e-12


@pytest.mark.parametrize("name,e32,en32", [("gauss2", 5.494841e-07, 8.963e-08),
                                           ("midpoint", 4.916569e-07, 4.706e-07)])
def test_under_integrated_load_fails_nodal_superconvergence(name, e32, en32):
    rc, out, err, doc, keys = grade(variant(name))
    assert rc == 1 and keys["SCORE"] == "0.0"
    bad = failed(doc)
    assert "tier2.nodal_superconvergence" in bad
    # the seed's reason, and only it among the tiers: order 4 and the Tier 1 band survive
    assert not {"tier1.dense_band", "tier1.coarse_orders", "tier2.order4"} & bad
    band = next(c for c in doc["checks"] if c["id"] == "tier1.dense_band")
    assert band["measured"][0] == pytest.approx(e32, rel=1e-5)
    nodal = next(c for c in doc["checks"] if c["id"] == "tier2.nodal_superconvergence")
    assert nodal["measured"] == pytest.approx(en32, rel=1e-3)
    assert "FAIL  tier2.nodal_superconvergence" in out
