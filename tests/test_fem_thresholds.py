"""Every Tier threshold of the seed, probed on both sides of its boundary (pure
functions over the gold arrays), so that loosening or tightening one fails a test."""
import numpy as np
import pytest

from test_fem_support import gold_arrays, grader

S = grader.Status


def _arrs(**scale):
    """The gold arrays with some dense/nodal errors replaced: scale={'dense': {k: v}, 'nodal': {k: v}}."""
    g = gold_arrays()
    for key, rows in scale.items():
        arr = g[f"{key}_errors"].copy()
        for k, v in rows.items():
            arr[k] = v
        g[f"{key}_errors"] = arr
    return g


def _status(recs, cid):
    return next(r.status for r in recs if r.id == cid)


@pytest.mark.parametrize("factor,status", [(1.24, S.PASS), (1.26, S.FAIL), (0.76, S.PASS), (0.74, S.FAIL)])
def test_tier1_band_25_percent(factor, status):
    # e*(64) moved alone; orders move too, so look at the band record only
    g = _arrs(dense={1: grader.SPEC["tier1_gold"][64] * factor})
    assert _status(grader.check_tier1(g), "tier1.dense_band") is status


@pytest.mark.parametrize("beta,status", [(3.81, S.PASS), (3.79, S.FAIL), (4.19, S.PASS), (4.21, S.FAIL)])
def test_tier1_coarse_order_band(beta, status):
    e = gold_arrays()["dense_errors"]
    g = _arrs(dense={1: e[0] / 2**beta, 2: e[0] / 2**beta / 2**3.98})
    assert _status(grader.check_tier1(g), "tier1.coarse_orders") is status


@pytest.mark.parametrize("bad,status", [(1, S.PASS), (2, S.FAIL)])
def test_tier2_two_of_three_clean_orders(bad, status):
    e = gold_arrays()["dense_errors"].copy()
    betas = [3.5 if i < bad else 3.98 for i in range(3)]       # `bad` orders outside [3.8, 4.2]
    for i, b in enumerate(betas):
        e[i + 1] = e[i] / 2**b
    g = _arrs(dense=dict(enumerate(e)))
    assert _status(grader.check_tier2(g), "tier2.order4") is status


@pytest.mark.parametrize("en32,status", [(0.99e-8, S.FAIL), (5.3e-9, S.PASS), (5.5e-9, S.FAIL)])
def test_tier2_nodal_superconvergence(en32, status):
    # e*(32) = 5.40e-7: the ratio cap e*/100 = 5.4e-9 binds below the absolute 1e-8
    assert _status(grader.check_tier2(_arrs(nodal={0: en32})), "tier2.nodal_superconvergence") is status


def test_tier2_nodal_absolute_cap_binds_when_dense_error_is_large():
    g = _arrs(dense={0: 2e-6}, nodal={0: 1.01e-8})             # ratio cap 2e-8, absolute 1e-8
    assert _status(grader.check_tier2(g), "tier2.nodal_superconvergence") is S.FAIL
    g = _arrs(dense={0: 2e-6}, nodal={0: 0.99e-8})
    assert _status(grader.check_tier2(g), "tier2.nodal_superconvergence") is S.PASS


@pytest.mark.parametrize("factor,status", [(10.1, S.PASS), (9.9, S.FAIL)])
def test_tier2_roundoff_floor_factor_10(factor, status):
    e = gold_arrays()["dense_errors"]
    g = _arrs(dense={6: e[3] * factor})
    assert _status(grader.check_tier2(g), "tier2.roundoff_floor") is status


def test_tier3_thresholds():
    g = gold_arrays()
    ok = {r.id: r.status for r in grader.check_tier3(g)}
    assert set(ok.values()) == {S.PASS}
    x = g["x_dense"].copy()
    x[7] += 4e-15                                                 # i/2560 to 1e-15
    assert _status(grader.check_tier3(dict(g, x_dense=x)), "tier3.x_dense") is S.FAIL
    ue = g["uexact_dense"].copy()
    ue[100] += 5e-14
    assert _status(grader.check_tier3(dict(g, uexact_dense=ue)), "tier3.uexact_dense") is S.FAIL
    err = g["error_dense"].copy()
    err[100] += 1e-14
    assert _status(grader.check_tier3(dict(g, error_dense=err)), "tier3.error_dense") is S.FAIL
    d = g["dense_errors"].copy()
    d[3] *= 1 + 2e-6
    assert _status(grader.check_tier3(dict(g, dense_errors=d)), "tier3.matches_table") is S.FAIL
    uh = g["uexact_dense"] + 1.01e-9 * np.sin(np.pi * g["x_dense"])
    assert _status(grader.check_tier3(dict(g, uh_dense=uh, error_dense=uh - g["uexact_dense"])),
                   "tier3.max_error") is S.FAIL


def test_artifact_provenance_bands():
    g = gold_arrays()
    n = grader.SPEC["artifact_n"]
    for dev, field_status, tier3_status in ((0.9e-11, S.PASS, S.PASS), (1.1e-11, S.PASS, S.FAIL),
                                            (0.9e-9, S.PASS, S.FAIL), (1.1e-9, S.FAIL, S.FAIL)):
        f = {n: (None, g["uh_dense"] + dev, g["x_dense"])}
        recs = grader.check_artifact_provenance(f, g)
        assert _status(recs, "provenance.artifact_field") is field_status, dev
        assert _status(recs, "tier3.artifact_reproduced") is tier3_status, dev


def test_fidelity_boundary():
    ref = {n: (None, np.zeros(10 * n + 1)) for n in grader.SPEC["meshes"]}
    for n in (256, 512, 2048):
        tol = grader.fidelity_tol(n)
        fields = {m: (None, np.zeros(10 * m + 1)) for m in grader.SPEC["meshes"]}
        fields[n] = (None, np.full(10 * n + 1, 0.99 * tol))
        assert grader.check_fidelity(fields, ref)[0].status is S.PASS, n
        fields[n] = (None, np.full(10 * n + 1, 1.01 * tol))
        assert grader.check_fidelity(fields, ref)[0].status is S.FAIL, n


def _sidecar_status(edit):
    from test_fem_support import gold_json
    doc = gold_json()
    edit(doc)
    return {r.id: r.status for r in grader.check_sidecar(doc, gold_arrays())}


@pytest.mark.parametrize("rel,status", [(0.9e-6, S.PASS), (1.1e-6, S.FAIL)])
def test_sidecar_error_rel_1e_6(rel, status):
    def edit(d):
        d["dense_study"]["table"][2]["e_star_n"] *= 1 + rel
    assert _sidecar_status(edit)["sidecar.dense_study"] is status


@pytest.mark.parametrize("delta,status", [(0.9e-4, S.PASS), (1.1e-4, S.FAIL)])
def test_sidecar_beta_1e_4(delta, status):
    def edit(d):
        d["nodal_study"]["table"][3]["beta"] += delta
    assert _sidecar_status(edit)["sidecar.nodal_study"] is status


@pytest.mark.parametrize("delta,status", [(0.24, S.PASS), (0.26, S.FAIL), (-0.26, S.FAIL)])
def test_sidecar_observed_order_tolerance_025(delta, status):
    e = gold_arrays()["dense_errors"][:4]
    fit = grader.lsq_order([32, 64, 128, 256], e)

    def edit(d):
        d["dense_study"]["observed_order_clean_regime"] = fit + delta
    assert _sidecar_status(edit)["sidecar.observed_order"] is status


@pytest.mark.parametrize("delta,status", [(0.9e-6, S.PASS), (1.1e-6, S.FAIL)])
def test_schema_eoc_tolerance(delta, status):
    raw = gold_arrays()
    raw["dense_eoc"] = raw["dense_eoc"].copy()
    raw["dense_eoc"][3] += delta
    assert _status(grader.check_schema(raw, {}), "schema.eoc") is status


def test_sidecar_h_must_be_one_over_n():
    def edit(d):
        d["dense_study"]["table"][6]["h"] = (1 / 2048) * (1 + 1e-11)
    assert _sidecar_status(edit)["sidecar.dense_study"] is S.FAIL
