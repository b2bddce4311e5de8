"""Issue 10, the grader-side proof as pure functions: a recorded system is the statement's
stiffness matrix under a DOF permutation, a symmetric diagonal scaling and a common factor
(stiffness_maps); its right-hand side is the load vector under the same map within the
quadrature tolerance (fit_load; 2-point Gauss and midpoint loads fail); the output maps back
to the statement's unknowns, and the returned field must be the reconstruction of a 0/1
combination of the outputs (fit_01) whose unknowns solve K u = F (load_residual)."""
import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg

from test_fem_support import grader

G = grader


def load(n, q):
    """The load vector with q-point Gauss (q = "mid": midpoint rule)."""
    h = 1.0 / n
    if q == "mid":
        tq, wq = np.array([0.5]), np.array([1.0])
    else:
        tq, wq = np.polynomial.legendre.leggauss(q)
        tq, wq = (tq + 1) / 2, wq / 2
    e = np.arange(n)
    fe = h * (G.load_f((e[:, None] + tq) * h) * wq) @ G.hermite_shapes(tq, h)
    F = np.zeros(2 * (n + 1))
    for a in range(4):
        np.add.at(F, 2 * e + a, fe[:, a])
    return F[2:-2]


def scrambled(n, seed=1, factor=3.7):
    """(A, b, P, D): K and the 3-point load under a random permutation, a random signed
    diagonal scaling (equilibration with sign flips) and a common factor."""
    K = G.free_system(n)[0]
    rng = np.random.default_rng(seed)
    m = K.shape[0]
    p = rng.permutation(m)
    d = np.where(rng.random(m) < 0.5, -1.0, 1.0) / np.sqrt(K.diagonal())
    D = scipy.sparse.diags(d)
    A = (factor * D @ K @ D).tocsr()[p][:, p]
    return A, (factor * d * load(n, 3))[p], p, d


@pytest.mark.parametrize("n", [32, 2048])
def test_scrambled_system_is_recognised_and_maps_back(n):
    A, b, p, d = scrambled(n)
    maps, why = G.stiffness_maps(A, n)
    assert len(maps) == 2, why                   # the system and its mirror image x -> 1 - x
    mp, gamma, rel = G.fit_load(maps, b, n)
    assert rel < G.rhs_tol(n) / 100
    z = scipy.sparse.linalg.spsolve(A.tocsc(), b)
    y = np.empty_like(z)
    y[p] = z
    honest = G.field_of(d * y, n)                 # what the submission reconstructs
    ours = G.field_of(G.statement_unknowns(mp, gamma, z), n)
    c, lam, res, scale = G.fit_01([ours], *honest)
    assert c == (1,) and abs(lam - 1) <= G.lam_tol(n)
    assert res <= G.reconstruction_tol(scale) / 10


def test_wrong_matrices_are_refused_with_a_reason():
    n = 32
    K = G.free_system(n)[0]
    m = K.shape[0]
    assert not G.stiffness_maps(2 * scipy.sparse.identity(m, format="csr"), n)[0]
    bad = K.tolil()
    bad[5, 7] *= 1.01                             # one wrong coupling
    maps, why = G.stiffness_maps(bad.tocsr(), n)
    assert not maps and "normalised" in why
    maps, why = G.stiffness_maps(scipy.sparse.identity(m + 4, format="csr"), n)
    assert not maps and "2(n-1)" in why           # boundary rows kept (penalty / identity rows)
    lagrange = scipy.sparse.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    assert not G.stiffness_maps(lagrange.tocsr(), n)[0]


@pytest.mark.parametrize("n", [32, 256, 2048])
def test_load_tolerance_admits_3_point_gauss_and_refuses_2_point_and_midpoint(n):
    maps, _ = G.stiffness_maps(G.free_system(n)[0], n)
    rel = {q: G.fit_load(maps, load(n, q), n)[2] for q in (3, 4, 2, "mid")}
    assert rel[3] < G.rhs_tol(n) / 100 and rel[4] < G.rhs_tol(n) / 100
    assert rel[2] > 100 * G.rhs_tol(n) and rel["mid"] > 100 * G.rhs_tol(n)


def test_refinement_is_a_01_combination_and_small_weight_is_not():
    n = 64
    K, F, _ = G.free_system(n)
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal(F.size)                          # a substituted first solve
    dx = scipy.sparse.linalg.spsolve(K.tocsc(), F - K @ x1)   # the refinement step after it
    cands = [G.field_of(x1, n), G.field_of(dx, n), G.field_of(x1 * 0.5, n)]
    nodes, dense = G.field_of(x1 + dx, n)
    c, lam, res, scale = G.fit_01(cands, nodes, dense)
    assert c == (1, 1, 0) and res <= G.reconstruction_tol(scale)
    nodes, dense = G.field_of(x1 + 1e-3 * dx, n)
    c, lam, res, scale = G.fit_01(cands, nodes, dense)
    assert res > 1e6 * G.reconstruction_tol(scale)


def test_load_residual_separates_roundoff_from_fake_noise():
    n = 2048
    K, F, _ = G.free_system(n)
    u = scipy.sparse.linalg.spsolve(K.tocsc(), load(n, 3))
    res, bound = G.load_residual(u, n)
    assert res < bound / 4
    x = np.arange(1, n) / n
    noise = np.repeat(5e-10 * (n / 512) ** 4 * np.sin(np.pi * x) ** 2, 2)
    noisy = u + noise * np.random.default_rng(0).standard_normal(u.size)
    res, bound = G.load_residual(noisy, n)
    assert res > 1e6 * bound


def test_session_substitutes_only_verified_stiffness_solves():
    import base64
    n = 32
    K = G.free_system(n)[0].tocoo()
    m = K.shape[0]
    enc = lambda a, t: base64.b64encode(np.ascontiguousarray(a, dtype=t).tobytes()).decode()
    mat = {"shape": [m, m], "nnz": K.nnz, "r": enc(K.row, "<i4"), "c": enc(K.col, "<i4"),
           "v": enc(K.data, "<f8")}
    z = np.linspace(1, 2, m)
    arr = {"shape": [m], "b64": enc(z, "<f8")}
    plan = {"a": {"n": n, "mode": "clean"}, "b": {"n": n, "mode": "substitute"},
            "c": {"n": n, "mode": "nan"}}
    s = G.AuditSession(plan)
    body = {"kind": "solve", "fn": "f", "mat": mat, "rhs": arr, "out": arr, "dim": m}
    assert s.interact(dict(body, job="a")) == {"sub": None}
    sub = np.frombuffer(base64.b64decode(s.interact(dict(body, job="b"))["sub"]))
    assert sub.shape == (m,) and not np.allclose(sub / z, (sub / z)[0])   # not a uniform factor
    assert np.isnan(np.frombuffer(base64.b64decode(s.interact(dict(body, job="c"))["sub"]))).sum() \
        == G.SPEC["audit_nan_entries"]
    eye = dict(mat, nnz=m, r=enc(np.arange(m), "<i4"), c=enc(np.arange(m), "<i4"), v=enc(2 * np.ones(m), "<f8"))
    assert s.interact(dict(body, job="b", mat=eye)) == {"sub": None}        # a probe: untouched
    for junk in (None, 7, {"job": "zz"}, {"job": "b", "kind": "solve", "mat": {"shape": "x"}},
                 dict(body, job="b", out={"shape": [m], "b64": "!!"})):
        s.interact(junk)                                                  # never raises


def test_a_recorded_output_must_solve_its_recorded_system():
    # (from n = 64 the interpolant itself solves K u = F within round-off: the known limit)
    n = 32
    K, F = G.free_system(n)[0], load(n, 3)             # the gold's system
    z = scipy.sparse.linalg.spsolve(K.tocsc(), F)
    call = {"A": K, "z": z, "rhs": F}
    assert G.output_solves(call, 0)
    x = np.arange(n + 1) / n       # a forged record: the interpolant's unknowns as "the output"
    u = np.column_stack([np.exp(x) * x**2 * (1 - x)**2,
                         np.exp(x) * (x**4 + 2 * x**3 - 5 * x**2 + 2 * x)]).ravel()[2:-2]
    assert not G.output_solves(dict(call, z=u), 0)


def test_explicit_inverse_clean_and_substituted_pure():
    """inv(K) @ b: the clean field is a Hermite field solving K u = F; with Z + u v^T the
    field moves by beta times the reconstruction of u, beta predicted from the load."""
    n = 32
    K, F = G.free_system(n)[0], load(n, 3)
    maps, _ = G.stiffness_maps(K, n)
    Z = np.linalg.inv(K.toarray())
    clean = G.field_of(Z @ F, n)
    rec = {"kind": "inverse", "K": True, "maps": maps, "rank1": None}
    j = G.judge_inverse(n, [rec], clean, None)
    assert j["ok"] and j["residual"] <= j["bound"]
    rng = np.random.default_rng(3)
    u, v = rng.standard_normal(F.size), np.sign(F) * rng.uniform(0.5, 1, F.size)
    rec["rank1"] = (u, v)
    audited = G.field_of((Z + np.outer(u, v)) @ F, n)
    j = G.judge_inverse(n, [rec], audited, clean)
    assert j["ok"] and j["res"] < j["tol"] / 10
    # a field that ignores the substitute (the clean field again, plus nothing) does not pass
    assert not G.judge_inverse(n, [rec], clean, clean)["ok"]
    # nor does one that follows it at small weight
    weak = G.field_of(Z @ F + 1e-3 * u * float(v @ F), n)
    assert not G.judge_inverse(n, [rec], weak, clean)["ok"]


@pytest.mark.parametrize("n", [32, 256])
def test_own_matrix_shortcut_is_stiffness_maps_of_that_matrix(n):
    # The grader answers a recorded matrix that is bit for bit its own K with the maps it
    # computed for K in advance: they must be what stiffness_maps computes for the record
    # (COO with its entries in another order, int64 indices); any other matrix - scaled,
    # one entry one ulp off, an explicit zero more - is not taken for K.
    K = G.free_system(n)[0]
    C = K.tocoo()
    order = np.random.default_rng(1).permutation(C.nnz)
    A = scipy.sparse.csr_matrix((C.data[order], (C.row[order].astype(np.int64), C.col[order])), shape=K.shape)
    fast, slow = G.maps_of_own_matrix(A, n), G.stiffness_maps(A.copy(), n)
    assert fast is not None and fast[1] == slow[1] == "" and len(fast[0]) == len(slow[0]) == 2
    for a, b in zip(fast[0], slow[0]):
        assert np.array_equal(a.perm, b.perm) and np.array_equal(a.dt, b.dt) and a.sigma == b.sigma
    off = A.copy()
    off.data[5] = np.nextafter(off.data[5], np.inf)
    zero = scipy.sparse.csr_matrix((np.append(C.data, 0.0), (np.append(C.row, 0), np.append(C.col, n))),
                                   shape=K.shape)
    for other in (2.0 * A, off, zero):
        assert G.maps_of_own_matrix(other, n) is None
