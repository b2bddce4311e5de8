"""5-8. PROVENANCE (a part of grade_fem.py; see CONTRIBUTING.md)."""
import base64
import math
import secrets
from graders.common.records import Check, Reject, Status, guarded
from graders.fem.problem import (env_band, exact_u, fidelity_tol, hermite_shapes, nonfinite_where,
    prescribed_grids, worst)
from graders.fem.schema import ARTIFACT_ARRAYS
from graders.fem.spec import SPEC
from graders.fem.system_map import (field_of, fit_01, fit_load, free_system, load_residual,
    reconstruction_tol, rhs_tol, statement_unknowns)
from graders.fem.tiers import check_tier1, check_tier2
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 5-8. PROVENANCE: judging the recorded runs (pure functions of the messages)
# =============================================================================
def _num(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _as_list(value) -> list:
    return value if isinstance(value, list) else []


def _grid_field(rec: dict, size: int, cid: str, what: str):
    """A returned grid sent as its differences from the prescribed one (i/(size-1)): the
    indices where its bits differ and its values there (the driver's encoding)."""
    import numpy as np
    try:
        at = np.frombuffer(base64.b64decode(rec.get("i"), validate=True), dtype="<i4")
        vals = np.frombuffer(base64.b64decode(rec.get("v"), validate=True), dtype="<f8")
    except (TypeError, ValueError):
        at = vals = None
    if at is None or at.size != vals.size or at.size > size or \
            (at.size and (int(at.min()) < 0 or int(at.max()) >= size)):
        raise Reject(cid, f"{what} is not a float64 array")
    arr = np.arange(size) / (size - 1)
    arr[at] = vals
    return arr


def _field(msg: dict, key: str, shape: tuple, cid: str):
    """A returned field as float64, shape-checked (numpy.testing order: shape first)."""
    import numpy as np
    f = (msg.get("fields") or {}).get(key) if isinstance(msg.get("fields"), dict) else None
    if not isinstance(f, dict) or not isinstance(f.get("shape"), list):
        raise Reject(cid, f"n={msg.get('n')}: {key} not returned")
    if tuple(f["shape"]) != shape or not isinstance(f.get("b64") or f.get("grid"), (str, dict)):
        raise Reject(cid, f"n={msg.get('n')}: {key} has shape {tuple(f['shape'])}, expected {shape}",
                     f["shape"], list(shape))
    if isinstance(f.get("grid"), dict) and key.startswith("x_") and shape[0] > 1:
        return _grid_field(f["grid"], shape[0], cid, f"n={msg.get('n')}: {key}")
    try:
        arr = np.frombuffer(base64.b64decode(f["b64"], validate=True), dtype=np.float64).copy()
    except (TypeError, ValueError):
        raise Reject(cid, f"n={msg.get('n')}: {key} is not a float64 array")
    if arr.shape != shape:
        raise Reject(cid, f"n={msg.get('n')}: {key} data length {arr.size}, expected {shape[0]}")
    return arr


def outcome_note(outcome) -> str:
    if outcome is None:
        return "not run"
    return {"timeout": f"timed out ({outcome.reason})", "crashed": outcome.reason,
            "no_reply": outcome.reason, "error": outcome.reason}.get(outcome.status, "")


def plan_jobs() -> dict:
    """{job id: {"n", "mode"}}: at every mesh `clean_runs` clean calls and one with the
    solve output substituted; NaN substitution at `audit_nan_meshes`.  Ids are random
    (the child learns nothing from them); the finest meshes come first (the longest calls:
    the cores stay busy to the end) and within a mesh the order is shuffled, so a call's
    place says nothing of its mode."""
    plan = {}
    for n in SPEC["meshes"]:
        modes = ["clean"] * SPEC["clean_runs"] + ["substitute"]
        modes += ["nan"] if n in SPEC["audit_nan_meshes"] else []
        for mode in modes:
            plan[secrets.token_hex(8)] = {"n": n, "mode": mode}
    order = list(plan)
    secrets.SystemRandom().shuffle(order)
    order.sort(key=lambda jid: -plan[jid]["n"])        # stable: shuffled within a mesh
    return {jid: plan[jid] for jid in order}


def job_results(outcome, plan: dict) -> dict:
    """{job id: {"mesh": the job's mesh message or None, "end": its job_end or None}}."""
    out = {jid: {"mesh": None, "end": None, "meshes": 0, "unsealed": 0} for jid in plan}
    msgs = [m for m in (outcome.messages if outcome else []) if isinstance(m, dict)]
    seals = {}                      # the warm parent's (a job child's lines carry "job")
    for m in msgs:
        if m.get("kind") == "seals" and "job" not in m and isinstance(m.get("seals"), dict):
            seals.update(m["seals"])
    for m in msgs:
        if m.get("job") not in out:
            continue
        slot = out[m["job"]]
        if m.get("kind") == "mesh":
            slot["meshes"] += 1
            if not (isinstance(m.get("seal"), str) and m["seal"] == seals.get(m["job"])):
                slot["unsealed"] += 1       # not the driver's: written by the submission
                continue
        if m.get("kind") == "mesh" and slot["mesh"] is None and m.get("n") == plan[m["job"]]["n"]:
            slot["mesh"] = m
        elif m.get("kind") == "job_end" and slot["end"] is None:
            slot["end"] = m
    return out


def job_failure(res: dict, outcome) -> str:
    """Why a job gave no field."""
    m, end = res["mesh"], res["end"]
    if m is not None and m.get("error"):
        return str(m["error"])
    if m is not None and isinstance(m.get("import"), dict) and not m["import"].get("ok"):
        return f"import failed: {m['import'].get('error')}"
    if isinstance(end, dict) and end.get("status") == "timeout":
        return f"did not finish within the budget ({end.get('reason')})"
    if isinstance(end, dict) and end.get("status") not in (None, "ok"):
        return f"{end.get('status')} ({end.get('reason')})"
    return outcome_note(outcome) or "no result"


def jobs_of(plan: dict, mode: str) -> dict:
    """{n: [job ids]} of one mode, in mesh order."""
    out: dict = {}
    for jid, job in plan.items():
        if job["mode"] == mode:
            out.setdefault(job["n"], []).append(jid)
    return out


def job_candidates(n: int, calls: list) -> list:
    """The candidate fields of a job: every column of every recorded stiffness solve
    (as the submission received it: substituted in an audited job), mapped onto the
    statement's unknowns.  The scale of a system comes from a solve of it whose
    right-hand side is the load vector; a solve of the same matrix with another
    right-hand side (a refinement step) borrows it."""
    import numpy as np
    scales = {}
    for c in calls:
        if c["kind"] != "solve" or not c["K"] or c["rhs"] is None:
            continue
        cols = c["rhs"] if c["rhs"].ndim == 2 else c["rhs"][:, None]
        c["loads"] = []
        for j in range(cols.shape[1]):
            mp, gamma, rel = fit_load(c["maps"], cols[:, j], n)
            c.setdefault("rel", []).append(rel)
            if mp is not None and rel <= rhs_tol(n):
                c["loads"].append(j)
                scales.setdefault(c["digest"], (mp, gamma))
    cands = []
    for k, c in enumerate(calls):
        got = c.get("sub") if c.get("sub") is not None else c.get("z")
        if c["kind"] != "solve" or not c["K"] or got is None:
            continue
        scale = scales.get(c["digest"])
        if scale is None:           # same map as a system with a known scale?
            scale = next((sc for sc in scales.values() for mp in c["maps"]
                          if np.array_equal(mp.perm, sc[0].perm)
                          and np.allclose(mp.dt, sc[0].dt, rtol=1e-12, atol=0)), None)
        if scale is None:
            continue
        cols = got if got.ndim == 2 else got[:, None]
        for j in range(cols.shape[1]):
            if len(cands) >= SPEC["max_candidates"]:
                return cands
            u = statement_unknowns(scale[0], scale[1], cols[:, j])
            nodes, dense = field_of(u, n)
            cands.append({"call": k, "col": j, "u": u, "nodes": nodes, "dense": dense, "scale": scale,
                          "load": j in c.get("loads", ()), "substituted": c.get("sub") is not None})
    return cands


def judge_job(n: int, calls: list, fields) -> dict:
    """Reconstruction of one job's returned field from its recorded stiffness solves:
    {"ksolves", "cands", "c", "lam", "res", "tol", "ok", "load", "residual", "bound"}."""
    ks = [c for c in calls if c["kind"] == "solve" and c["K"]]
    out = {"ksolves": len(ks), "cands": 0, "ok": False, "load": False, "res": math.inf, "tol": 0.0,
           "residual": math.inf, "bound": 0.0, "lam": 0.0, "c": ()}
    if not ks or fields is None:
        return out
    cands = job_candidates(n, calls)
    out["cands"] = len(cands)
    if not cands:
        return out
    c, lam, res, scale = fit_01([(d["nodes"], d["dense"]) for d in cands], fields[0], fields[1])
    tol = reconstruction_tol(scale)
    sel = [d for d, ci in zip(cands, c) if ci]
    out["unsolved"] = [calls[d["call"]]["fn"] for d in sel if not d["substituted"]
                       and not output_solves(calls[d["call"]], d["col"])]
    out.update(c=c, lam=lam, res=res, tol=tol, ok=res <= tol and abs(lam - 1) <= lam_tol(n) and bool(sel),
               load=any(d["load"] for d in sel), substituted=any(d["substituted"] for d in sel),
               picked=[(d["call"], d["col"]) for d in sel])
    if sel and all(not d["substituted"] for d in sel):
        import numpy as np
        u = lam * np.sum([d["u"] for d in sel], axis=0)
        out["residual"], out["bound"] = load_residual(u, n)
    return out


def output_solves(call: dict, col: int) -> bool:
    """Does the recorded output column solve the recorded system to a backward-stable
    solve's round-off?  (A record the submission forged on the channel must at least
    hold a solution of the statement's system.)"""
    import numpy as np
    A, z, b = call.get("A"), call.get("z"), call.get("rhs")
    if A is None or z is None or b is None:
        return False
    z = z if z.ndim == 1 else z[:, col]
    b = b if b.ndim == 1 else b[:, min(col, b.shape[1] - 1)]
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(b))):
        return False
    bound = SPEC["residual_roundoff"] * float(np.finfo(float).eps) * (
        float(np.max(abs(A) @ np.abs(z))) + float(np.max(np.abs(b))))
    return float(np.max(np.abs(A @ z - b))) <= bound


def unknowns_from_field(nodes, dense, n: int):
    """The free (value, slope) unknowns of a returned field read back from it: values at
    the nodes, slopes by least squares over each element's interior dense points (exact
    for a cubic-Hermite field), the clamped ends zero.  None if not finite."""
    import numpy as np
    from scipy.linalg import solveh_banded
    if not (np.all(np.isfinite(nodes)) and np.all(np.isfinite(dense))) or n < 3:
        return None
    f = SPEC["dense_factor"]
    t = np.arange(1, f) / f
    N = hermite_shapes(t, 1.0 / n)                        # (f-1, 4)
    k = np.arange(n)
    pts = dense[(f * k)[:, None] + np.arange(1, f)[None, :]]              # (n, f-1)
    r = pts - N[:, 0] * nodes[k, None] - N[:, 2] * nodes[k + 1, None]
    a22, a24, a44 = (float(np.dot(N[:, i], N[:, j])) for i, j in ((1, 1), (1, 3), (3, 3)))
    g2, g4 = (r * N[:, 1]).sum(axis=1), (r * N[:, 3]).sum(axis=1)   # per element: s_k, s_{k+1}
    diag = np.full(n + 1, a22 + a44)
    rhs = np.zeros(n + 1)
    np.add.at(rhs, k, g2)
    np.add.at(rhs, k + 1, g4)
    ab = np.zeros((2, n - 1))                             # upper band storage over s_1..s_{n-1}
    ab[0, 1:] = a24
    ab[1] = diag[1:-1]
    s = solveh_banded(ab, rhs[1:-1])
    return np.column_stack([nodes[1:-1], s]).ravel()


def judge_inverse(n: int, calls: list, fields, clean) -> dict:
    """An explicit-inverse path.  Clean (clean is None): the field is a cubic-Hermite field
    whose unknowns solve K u = F.  Audited: the field moved by exactly beta times the
    reconstruction of the substitute's u mapped back, beta = v^T b / gamma predicted from
    the load vector."""
    import numpy as np
    out = {"ok": False, "res": math.inf, "tol": 0.0, "residual": math.inf, "bound": 0.0}
    inv = [c for c in calls if c["kind"] == "inverse" and c["K"]]
    if not inv or fields is None:
        return out
    if clean is None:
        u = unknowns_from_field(fields[0], fields[1], n)
        if u is None:
            return out
        nodes, dense = field_of(u, n)
        res = max(float(np.max(np.abs(nodes - fields[0]))), float(np.max(np.abs(dense - fields[1]))))
        tol = reconstruction_tol(float(np.max(np.abs(fields[1]))))
        out.update(res=res, tol=tol, ok=res <= tol)
        out["residual"], out["bound"] = load_residual(u, n)
        return out
    rec = next((c for c in inv if c.get("rank1") is not None), None)
    if rec is None:
        return out
    d = np.concatenate([fields[0] - clean[0], fields[1] - clean[1]])
    F = free_system(n)[1]
    ur, vr = rec["rank1"]
    scale = max(float(np.max(np.abs(d))), float(np.max(np.abs(fields[1]))))
    out["tol"] = SPEC["inverse_audit_rel"] * scale
    for mp in rec["maps"]:
        hw = np.concatenate(field_of(statement_unknowns(mp, 1.0, ur), n))
        beta = float(np.dot(hw, d)) / float(np.dot(hw, hw))
        terms = vr[mp.perm] * mp.dt * F
        res = float(np.max(np.abs(d - beta * hw)))
        pred_ok = abs(beta - float(np.sum(terms))) <= lam_tol(n) * float(np.sum(np.abs(terms)))
        if res < out["res"]:
            out.update(res=res, ok=res <= out["tol"] and pred_ok, beta=beta, beta_pred=float(np.sum(terms)))
    return out


def lam_tol(n: int) -> float:
    """How far the common factor of a reconstruction may be from 1: the scale of the
    unknowns is read from a right-hand side that may deviate from the grader's load
    vector by rhs_tol (a few times that in the fitted factor)."""
    return SPEC["lam_factor"] * rhs_tol(n) + 1e-12


def _fields_of(msg: dict, n: int):
    """(uh_nodes, uh_dense) of a job's mesh message, or None."""
    try:
        return (_field(msg, "uh_nodes", (n + 1,), "provenance.fields"),
                _field(msg, "uh_dense", (10 * n + 1,), "provenance.fields"))
    except Reject:
        return None


def _call_summary(calls: list) -> str:
    names = sorted({str(c.get("fn")) for c in calls if isinstance(c, dict)})
    return ", ".join(names)[:160] or "none"

def _import_infos(results: dict) -> list:
    return [r["mesh"]["import"] for r in results.values()
            if r["mesh"] is not None and isinstance(r["mesh"].get("import"), dict)]


@guarded
def check_import_phase(outcome, results: dict) -> list:
    """fem_solver importable (in every job), without side effects, exposing solve(n)."""
    infos = _import_infos(results)
    if not infos:
        why = next((job_failure(r, outcome) for r in results.values()), outcome_note(outcome))
        raise Reject("provenance.import", f"fem_solver could not be imported: {why}")
    bad = [i for i in infos if not i.get("ok")]
    if bad:
        raise Reject("provenance.import", f"importing fem_solver raised {bad[0].get('error')}")
    out = [Check("provenance.import", Status.PASS, f"fem_solver imported in {_num(infos[0].get('wall')):.2f} s "
                 f"(fresh in each of {len(infos)} jobs)")]
    writes = sorted({str(w) for i in infos for w in _as_list(i.get("writes"))})
    procs = max((int(_num(i.get("processes"))) for i in infos), default=0)
    why = (["importing fem_solver wrote: " + ", ".join(writes[:5])] if writes else []) + \
        ([f"importing fem_solver started {procs} process(es)"] if procs else [])
    out.append(Check("provenance.import_side_effects", Status.FAIL if why else Status.PASS,
                     "; ".join(why) or "importing fem_solver writes no file and starts no process",
                     writes + ([f"{procs} process(es)"] if procs else [])))
    ok = all(i.get("has_solve") for i in infos)
    out.append(Check("provenance.solve_callable", Status.PASS if ok else Status.FAIL,
                     "fem_solver.solve is callable" if ok else "fem_solver exposes no callable solve(n)"))
    return out


def collect_regeneration(outcome, plan: dict, results: dict, run: int = 0) -> dict:
    """{n: mesh message} of the `run`-th clean job at each mesh; a job that returned
    nothing becomes a message with its failure as the error."""
    out = {}
    for n, jids in jobs_of(plan, "clean").items():
        if len(jids) <= run:
            continue
        res = results[jids[run]]
        m = res["mesh"]
        if m is not None and "fields" in m:
            out[n] = m
        elif res["end"] is not None or m is not None:
            out[n] = {"n": n, "error": job_failure(res, outcome), "failed": True}
    return out


def presub_candidates(n: int, calls: list, k: int) -> list:
    """The candidate fields of call k of a job as its solve returned them, before the
    grader's substitute (what a clean call would have received), from the calls up to it."""
    prefix = [dict({key: v for key, v in c.items() if key not in ("loads", "rel")}, sub=None)
              for c in calls[:k + 1]]
    return [d for d in job_candidates(n, prefix) if d["call"] == k]


def _pointwise(a, b) -> float:
    """max |a - b| over nodes and dense points (inf where shapes differ)."""
    import numpy as np
    if any(np.shape(x) != np.shape(y) for x, y in zip(a, b)):
        return math.inf
    with np.errstate(invalid="ignore"):
        return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def repeat_deviation(n: int, calls: list, clean_calls: list, got, clean_field,
                     judge=judge_job) -> tuple:
    """(deviation, why) of one audited call from the clean call of its mesh, as a second
    regeneration: nothing substituted (no observed stiffness solve) -> its field against the
    clean field; else its first substituted solve's output before the substitute (as
    candidate fields) against the clean call's same solve (unless that solve feeds neither
    field: a random probe), and the load solves feeding both fields must be the same
    (same_sources).  why is "" or the reason they cannot be compared."""
    import numpy as np
    k = next((i for i, c in enumerate(calls) if c.get("sub") is not None), None)
    if k is None:
        return (_pointwise(got, clean_field), "") if got is not None else \
            (math.inf, "a repeated call gave no field")
    if calls[k]["kind"] != "solve":     # an explicit inverse: judge_inverse bounds it, unless a
        if got is None or not any(c["kind"] == "solve" and c.get("sub") is not None for c in calls):
            return 0.0, "inverse"
        ja, jc = judge(n, calls, got), judge(n, clean_calls, clean_field)
        if not (ja["ok"] and jc["ok"]):     # substituted solve feeds the field (the inverse
            return 0.0, "inverse"           # beside it): its load solves are compared as below
        return same_sources(n, calls, clean_calls, ja, jc, clean_field, 0.0)
    same = len(clean_calls) > k and (clean_calls[k]["kind"], clean_calls[k]["fn"]) == \
        (calls[k]["kind"], calls[k]["fn"])
    if not same:
        return math.inf, (f"the library calls up to the first substituted solve ({calls[k]['fn']}) "
                          "differ from the clean call's")
    mine, theirs = presub_candidates(n, calls, k), presub_candidates(n, clean_calls, k)
    if len(mine) != len(theirs):
        return math.inf, (f"the first substituted solve ({calls[k]['fn']}) has {len(mine)} load "
                          f"column(s), the clean call's {len(theirs)}")
    if mine:
        dev = max(_pointwise((a["nodes"], a["dense"]), (b["nodes"], b["dense"]))
                  for a, b in zip(mine, theirs))
    else:                               # no load column gives a scale: the raw outputs, relative
        z, zc = calls[k].get("z"), clean_calls[k].get("z")
        dev = _pointwise((z,), (zc,)) / max(1.0, float(np.max(np.abs(zc)))) if \
            z is not None and zc is not None and zc.size else math.inf
    jc = judge(n, clean_calls, clean_field)
    probe = jc["ok"] and all(p[0] != k for p in jc["picked"])   # it does not feed the clean field
    if got is None or not np.all(np.isfinite(got[1])) or not jc["ok"]:
        return (0.0 if probe else dev), ""      # (a random probe, say; a call without a finite
    ja = judge(n, calls, got)                   # field shows nothing more: the substitute call
    if not ja["ok"]:                            # of its mesh carries the evidence)
        return dev, ""
    if probe and all(p[0] != k for p in ja["picked"]):
        dev = 0.0                               # it feeds neither field: what feeds them is
    if dev <= SPEC["determinism_atol"]:         # compared instead
        return same_sources(n, calls, clean_calls, ja, jc, clean_field, dev)
    return dev, ""


def _load_columns(calls: list, picked: list) -> dict:
    """{(call, column): right-hand side} of the solve columns feeding a field whose right-hand
    side is the load vector (what no substitute can change in a solver that repeats itself)."""
    out = {}
    for k, j in picked:
        c = calls[k]
        if j in c.get("loads", ()):
            out[(k, j)] = c["rhs"] if c["rhs"].ndim == 1 else c["rhs"][:, j]
    return out


def correction_residuals(n: int, calls: list, picked: list, loads: dict) -> str:
    """"" or why a correction solve feeding the clean field (a picked column whose right-hand
    side is not the load) is not a refinement step: its right-hand side must be the residual
    F - K u_prev of the load at the sum of the picked solves before it, to a backward-stable
    residual's round-off (in the statement's unknowns).  Such a step is pinned to the solves
    the determinism check compares; a correction with anything else in its right-hand side
    (random or not) is not, and would carry up to the load tolerance unverified."""
    import numpy as np
    if not loads or all(key in loads for key in picked):
        return ""
    K, _, Kabs = free_system(n)
    cands = {(d["call"], d["col"]): d for d in job_candidates(n, calls)}
    first = cands.get(min(loads))
    if first is None:
        return ""
    mp, gamma = first["scale"]
    b0 = loads[min(loads)][mp.perm] / (mp.dt * gamma)
    eps = float(np.finfo(float).eps)
    for k, j in sorted(picked):
        d = cands.get((k, j))
        if (k, j) in loads or d is None:
            continue
        prev = [cands[p]["u"] for p in picked if p[0] < k and p in cands]
        u_prev = np.sum(prev, axis=0) if prev else np.zeros_like(b0)
        rhs = calls[k]["rhs"]
        if rhs is None or (rhs.ndim == 2 and j >= rhs.shape[1]):
            return (f"the right-hand side of the correction solve {calls[k]['fn']} (call {k}) feeding "
                    "the field could not be read")
        rhs = rhs if rhs.ndim == 1 else rhs[:, j]
        mpk, gk = d["scale"]
        r = rhs[mpk.perm] / (mpk.dt * gk)
        dev = float(np.max(np.abs(r - (b0 - K @ u_prev))))
        bound = SPEC["residual_roundoff"] * eps * (float(np.max(Kabs @ np.abs(u_prev))) +
                                                   float(np.max(np.abs(b0))))
        if not dev <= bound:
            return (f"the correction solve {calls[k]['fn']} (call {k}) feeding the field solves for "
                    f"something else than the residual of the solves before it (|difference| "
                    f"{dev:.3e}, a residual's round-off {bound:.3e})")
    return ""


def same_sources(n: int, calls: list, clean_calls: list, ja: dict, jc: dict, clean_field,
                 dev: float) -> tuple:
    """(deviation, why) of the solves feeding an audited field from those feeding the clean
    field: the load solves among them are the same calls with the same right-hand sides (a
    later load solve does not depend on an earlier solve's output: after the first
    substitute it is still comparable), and the common factor is the same.  Correction
    solves (other right-hand sides, e.g. residuals) may differ: they depend on the
    substitute and run as often as the data asks."""
    import numpy as np
    la, lc = _load_columns(calls, ja["picked"]), _load_columns(clean_calls, jc["picked"])
    if set(la) != set(lc):
        return math.inf, (f"the field is built from other load solves ({sorted(la)}) than in the "
                          f"clean call ({sorted(lc)})")
    for (k, j), b in sorted(lc.items()):
        a = la[(k, j)]
        scale = float(np.max(np.abs(b))) or 1.0
        if calls[k]["fn"] != clean_calls[k]["fn"] or a.shape != b.shape or \
                not float(np.max(np.abs(a - b))) <= SPEC["determinism_atol"] * scale:
            return math.inf, (f"the right-hand side of the load solve {clean_calls[k]['fn']} (call {k}) "
                              "differs from the clean call's by "
                              f"{_pointwise((a,), (b,)) / scale:.3e} relative")
    why = correction_residuals(n, clean_calls, jc["picked"], lc)
    if why:
        return math.inf, why
    lam = abs(ja["lam"] - jc["lam"]) * float(np.max(np.abs(clean_field[1])))
    if not lam <= SPEC["determinism_atol"]:
        return math.inf, (f"the field's common factor differs from the clean call's ({ja['lam']:.17g} "
                          f"for {jc['lam']:.17g}: {lam:.3e} in the field)")
    return max(dev, lam), ""


def check_deterministic(plan: dict, results: dict, session, fields: dict) -> list:
    """A second regeneration of every mesh, read from its audited call(s): up to the grader's
    first substitute an audited call is a clean one, so what its solve returned (before the
    substitute) must equal what the clean call's returned, pointwise as fields (bitwise is
    expected: same code, same inputs, BLAS pinned to one thread; `determinism_atol` is the
    tolerance), from the same solves; after it, each field is tied to its solve outputs by
    the reconstruction (check_solve_system, check_causal).  A call in which nothing was
    substituted is compared field against field."""
    if not fields:
        return [Check("provenance.deterministic", Status.SKIP, "no regenerated fields")]
    lim = SPEC["determinism_atol"]
    clean = {n: jids[0] for n, jids in jobs_of(plan, "clean").items()}
    bad, worst_dev, compared, inverse = [], 0.0, set(), set()
    for jid, job in plan.items():
        n = job["n"]
        if job["mode"] == "clean" or n not in fields:
            continue
        m = results[jid]["mesh"]
        got = _fields_of(m, n) if m is not None and not m.get("error") else None
        dev, why = repeat_deviation(n, session.calls.get(jid, []), session.calls.get(clean[n], []),
                                    got, fields[n][:2], session.judge)
        if why == "inverse":
            inverse.add(n)
        elif why:
            bad.append(f"n={n}: {why}")
        elif not dev <= lim:
            bad.append(f"n={n}: max |difference| {dev:.3e}")
        else:
            compared.add(n)
            worst_dev = max(worst_dev, dev)
    if bad:
        return [Check("provenance.deterministic", Status.FAIL, "solve(n) is not reproducible in one "
                      f"environment: two calls of a mesh differ pointwise by more than {lim:g} before "
                      "the grader's substitute: " + "; ".join(bad[:4]), bad, lim)]
    note = (f"; at n = {sorted(inverse)} (explicit inverse) within the inverse audit's "
            f"{SPEC['inverse_audit_rel']:g} of the field's scale" if inverse else "")
    return [Check("provenance.deterministic", Status.PASS, "a second call of every mesh computes "
                  f"the same field pointwise up to the grader's substitute (max difference "
                  f"{worst_dev:.1e}, limit {lim:g}){note}", worst_dev, lim)]


def _share(value: float, limit: float) -> float:
    """value as a fraction of its limit (inf for a zero limit)."""
    return value / limit if limit else math.inf


def _residual_excess(n: int, j: dict) -> str:
    return f"n={n}: the field's unknowns leave |K u - F| = {j['residual']:.3e} (allowed {j['bound']:.3e})"


def check_solve_system(plan: dict, results: dict, session, fields: dict) -> list:
    """In every clean run: a library solve whose matrix is the statement's stiffness
    matrix (any ordering, scaling, storage) was observed; the field is the
    cubic-Hermite reconstruction of a 0/1 combination of the observed solves'
    outputs; those unknowns solve K u = F within the load tolerance."""
    if not fields:
        return [Check("provenance.solve_observed", Status.SKIP, "no regenerated meshes")]
    wrong, review, seen = {}, {}, []
    load_bad, rec_bad, rec_worst, load_worst = {}, {}, [], []
    for n, jids in jobs_of(plan, "clean").items():
        if n not in fields:
            continue
        for jid in jids:
            m = results[jid]["mesh"]
            got = _fields_of(m, n) if m is not None else None
            if got is None:
                continue
            calls = session.calls.get(jid, [])
            child = [c for c in _as_list(m.get("calls")) if isinstance(c, dict)]
            mdim = 2 * (n - 1)
            ks = [c for c in calls if c["kind"] == "solve" and c["K"]]
            if not ks:
                sized = [c for c in calls if c.get("dim") == mdim]
                unread = [c for c in sized if "could not be read" in str(c.get("why"))]
                not_k = [c for c in sized if c not in unread and c["kind"] in ("solve", "factor")
                         and not c.get("K")]
                inverse = [c for c in child if c.get("kind") == "inverse" and c.get("dim") == mdim]
                k_inverse = [c for c in calls if c["kind"] == "inverse" and c["K"]]
                if k_inverse:
                    seen.append(k_inverse[0]["fn"] + " (explicit inverse)")
                    j = judge_inverse(n, calls, got, None)
                    rec_worst.append((_share(j["res"], j["tol"]), n, j))
                    if not j["ok"]:
                        rec_bad.setdefault(n, f"n={n}: the field is not a cubic-Hermite field "
                                           f"(max |field - its reconstruction| = {j['res']:.2e}, "
                                           f"tolerance {j['tol']:.1e})")
                    elif not j["residual"] <= j["bound"]:
                        load_bad.setdefault(n, _residual_excess(n, j))
                    load_worst.append(_share(j["residual"], j["bound"]))
                    continue
                others = [c for c in child if c.get("kind") == "other" and c.get("dim") == mdim]
                if not_k:
                    wrong.setdefault(n, f"n={n}: {not_k[0]['fn']}: the {mdim}x{mdim} system is not the "
                                 f"stiffness matrix ({not_k[0]['why']})")
                elif inverse:
                    review.setdefault(n, f"n={n}: an explicit inverse ({inverse[0]['fn']}): the vector it "
                                  "is applied to is not observable, nor is the field's dependence on it")
                elif unread:
                    review.setdefault(n, f"n={n}: {unread[0]['fn']}: the matrix of the {mdim} solve could "
                                  "not be read (operator object?)")
                elif others or sized:
                    review.setdefault(n, f"n={n}: {_call_summary(others or sized)}: a library path the "
                                  "audit cannot follow to the field")
                elif child:
                    wrong.setdefault(n, f"n={n}: no library solve of the free-DOF dimension {mdim} "
                                 f"(dims {sorted({c.get('dim') for c in child if isinstance(c.get('dim'), int)})[:5]})")
                else:
                    review.setdefault(n, f"n={n}: no observable numpy/scipy linear solve (hand-written "
                                  "solver, ctypes or subprocess?)")
                continue
            seen.append(ks[0]["fn"])
            j = session.judge(n, calls, got)
            rec_worst.append((_share(j["res"], j["tol"]), n, j))
            if not j["ok"]:
                why = ("no solve of the stiffness matrix with the load vector as right-hand side "
                       "gives its scale" if not j["cands"] else
                       f"max |field - reconstruction| = {j['res']:.2e} (tolerance {j['tol']:.1e}), "
                       f"best 0/1 combination {list(j['c'])} of {j['cands']} solve output(s), "
                       f"factor {j['lam']:.9g}")
                rec_bad.setdefault(n, f"n={n}: {why}")
                continue
            if j.get("unsolved"):
                load_bad.setdefault(n, f"n={n}: the recorded output of {j['unsolved'][0]} does not "
                                    "solve its recorded system to round-off")
            elif not j["load"]:
                rels = [r for c in ks for r in c.get("rel", [])]
                load_bad.setdefault(n, f"n={n}: no solve feeding the field has the load vector as right-hand "
                                f"side (smallest relative deviation {min(rels, default=math.inf):.2e}, "
                                f"tolerance {rhs_tol(n):.1e})")
            elif not j["residual"] <= j["bound"]:
                load_bad.setdefault(n, _residual_excess(n, j))
            load_worst.append(_share(j["residual"], j["bound"]))
    wrong, review, rec_bad, load_bad = ([d[k] for k in sorted(d)] for d in (wrong, review, rec_bad, load_bad))
    out = []
    if wrong:
        out.append(Check("provenance.solve_observed", Status.FAIL, "; ".join(wrong[:3]), wrong))
    elif review:
        out.append(Check("provenance.solve_observed", Status.REVIEW, "; ".join(review[:3])
                         + " - verify by hand", review))
    else:
        out.append(Check("provenance.solve_observed", Status.PASS, "library solve of the "
                         f"2(n-1) stiffness system in every clean run: {seen[0]}"))
    if not rec_worst and not rec_bad:
        return out
    out.append(Check("provenance.reconstruction", Status.FAIL if rec_bad else Status.PASS,
                     ("the returned field is not the cubic-Hermite reconstruction of the observed "
                      f"stiffness solve at n = {', '.join(m.split(':')[0][2:] for m in rec_bad)}: "
                      + "; ".join(rec_bad[:3])) if rec_bad else
                     "every clean field is the cubic-Hermite reconstruction of its observed stiffness "
                     f"solve(s) to {max(r[0] for r in rec_worst):.2g} of the reconstruction tolerance "
                     f"({SPEC['reconstruction_rel']:g} of the field's scale)",
                     max((r[0] for r in rec_worst), default=None), 1.0))
    if not rec_bad:
        out.append(Check("provenance.load_vector", Status.FAIL if load_bad else Status.PASS,
                         ("the observed solve is not the statement's system: " + "; ".join(load_bad[:3]))
                         if load_bad else "the right-hand side feeding the field is the load vector "
                         f"(relative tolerance {rhs_tol(SPEC['meshes'][0]):g} at n = "
                         f"{SPEC['meshes'][0]}, ~h^{SPEC['rhs_rel_power']}) and its unknowns solve "
                         f"K u = F (worst {max(load_worst, default=0):.2g} of the allowed residual)",
                         max(load_worst, default=None), 1.0))
    return out


def check_causal(plan: dict, results: dict, session, fields: dict) -> list:
    """Audited runs: the observed stiffness solves' outputs replaced by the
    grader's random vectors (every mesh) or NaN at chosen entries
    (audit_nan_meshes); the field must be the reconstruction of the substitutes
    (resp. non-finite, or solve raises)."""
    import numpy as np
    out = []
    solved = {plan[jid]["n"] for jid, calls in session.calls.items() if plan[jid]["mode"] == "clean"
              and any(c["kind"] in ("solve", "inverse") and c["K"] for c in calls)}
    for mode, cid in (("substitute", "provenance.causal_substitution"), ("nan", "provenance.causal_nan")):
        ok, bad, review, unaudited = [], [], [], []
        for n, jids in jobs_of(plan, mode).items():
            if n not in fields:
                continue
            for jid in jids:
                res = results[jid]
                calls = session.calls.get(jid, [])
                subs = [c for c in calls if c.get("sub") is not None]
                m = res["mesh"]
                if not subs:
                    if m is None:
                        bad.append(f"n={n}: {job_failure(res, None)}")
                    elif n in solved:       # the clean runs made a stiffness solve, this one not
                        bad.append(f"n={n}: no stiffness solve in the audited run, though the "
                                   "clean runs made one")
                    else:
                        unaudited.append(n)
                    continue
                if m is None or m.get("error"):
                    if mode == "nan":
                        ok.append(n)
                    else:
                        review.append(f"n={n}: solve(n) stopped ({job_failure(res, None)[:120]})")
                    continue
                got = _fields_of(m, n)
                if got is None:
                    bad.append(f"n={n}: no field returned")
                    continue
                finite = bool(np.all(np.isfinite(got[0])) and np.all(np.isfinite(got[1])))
                if mode == "nan":
                    (bad if finite else ok).append(n if not finite else
                                                   f"n={n}: the field stayed finite with NaN in the solve output")
                    continue
                # an inverse beside a substituted stiffness solve (a condition estimate, say)
                # is judged by the solve: the field must follow the solve's substitute
                j = session.judge(n, calls, got) if any(c["kind"] == "solve" for c in subs) else None
                if j is not None and j["ok"] and j.get("substituted"):
                    ok.append(n)
                    continue
                if any(c["kind"] == "inverse" for c in subs):
                    j = judge_inverse(n, calls, got, fields[n][:2])
                    if j["ok"]:
                        ok.append(n)
                    else:
                        bad.append(f"n={n}: the explicit inverse was replaced by Z + u v^T: max |field "
                                   f"change - beta * reconstruction of u| = {j['res']:.2e} (tolerance "
                                   f"{j['tol']:.1e}), beta {j.get('beta', math.nan):.6g} for "
                                   f"{j.get('beta_pred', math.nan):.6g} predicted")
                    continue
                j = session.judge(n, calls, got) if j is None else j
                if j["ok"] and j.get("substituted"):
                    ok.append(n)
                elif not j["cands"]:
                    bad.append(f"n={n}: no stiffness solve with the load vector as right-hand side "
                               "to reconstruct the field from")
                else:
                    bad.append(f"n={n}: max |field - reconstruction of the substitute| = {j['res']:.2e} "
                               f"(tolerance {j['tol']:.1e}, factor {j['lam']:.6g}, 0/1 combination "
                               f"{list(j['c'])} of {j['cands']})")
        how = "replaced by random vectors" if mode == "substitute" else "NaN at chosen entries"
        if bad:
            out.append(Check(cid, Status.FAIL, f"solve output {how}: the field does not follow it: "
                             + "; ".join(map(str, bad[:3])), bad))
        elif review:
            out.append(Check(cid, Status.REVIEW, f"solve output {how}: " + "; ".join(review[:3])
                             + " - the dependence of the field on the solve is not shown; verify by hand",
                             review))
        elif not ok:
            out.append(Check(cid, Status.SKIP, "no stiffness solve to substitute (see provenance.solve_observed)"))
        else:
            out.append(Check(cid, Status.PASS, f"solve output {how}: the field "
                             + ("is the reconstruction of the substitute" if mode == "substitute"
                                else "became non-finite or solve raised")
                             + f" at n = {', '.join(map(str, ok))}", ok))
    return out


def check_records(plan: dict, results: dict, session) -> list:
    """The record channel carries only what the driver wrote: one result message per job,
    and as many audit records (factorisations, solves, inverses) as the driver counted
    making; each result message carries the job's secret (drawn in the warm parent, sent
    to the grader before any job ran).  A record written onto the channel by the submission
    itself (its descriptor can be guessed) is one more than the driver's count, and a
    result message it writes lacks the secret."""
    bad = []
    for jid, res in results.items():
        m = res["mesh"]
        if res.get("unsealed", 0):
            bad.append(f"n={plan[jid]['n']}: {res['unsealed']} result message(s) without the job's "
                       "secret")
        elif res.get("meshes", 0) > 1:
            bad.append(f"n={plan[jid]['n']}: {res['meshes']} result messages in one call")
        elif m is not None and "asks" in m and m["asks"] != session.asked.get(jid, 0):
            bad.append(f"n={plan[jid]['n']}: {session.asked.get(jid, 0)} audit record(s) received, "
                       f"the instrumentation made {m['asks']!r}")
    if bad:
        return [Check("provenance.records", Status.FAIL, "records on the channel that the grader's "
                      "instrumentation did not write (forged by the submission?): " + "; ".join(bad[:3]),
                      bad)]
    return [Check("provenance.records", Status.PASS, "every record on the channel was written by "
                  "the instrumentation (one result per call; audit records as counted)")]


def check_runtime_modules(results: dict) -> list:
    """Top-level modules outside stdlib + numpy + scipy that the submission loaded
    at run time (importlib/__import__ the static pass cannot see)."""
    names = sorted({str(x) for r in results.values() if r["mesh"] is not None
                    for x in _as_list(r["mesh"].get("new_modules"))})
    if not names:
        return [Check("provenance.runtime_modules", Status.PASS,
                      "no module outside stdlib + numpy + scipy loaded at run time")]
    return [Check("provenance.runtime_modules", Status.REVIEW,
                  "modules outside stdlib + numpy + scipy loaded at run time: " + ", ".join(names[:10])
                  + " - check for a FEM/PDE library", names)]


@guarded
def check_regenerated(outcome, meshes: dict, fields: dict) -> list:
    """Every mesh regenerated within the budget, on the prescribed grids, finite.
    Fills `fields` with {n: (uh_nodes, uh_dense, x_dense)}."""
    errors = [f"n={n}: {m['error']}" for n, m in sorted(meshes.items()) if m.get("error")]
    missing = [n for n in SPEC["meshes"] if n not in meshes]
    if errors or missing:
        parts = (["solve(n) failed: " + "; ".join(errors)[:600]] if errors else []) + \
            ([f"meshes {missing} not regenerated: {outcome_note(outcome) or 'child stopped'}"]
             if missing else [])
        raise Reject("provenance.regenerate", "; ".join(parts),
                     sorted([n for n, m in meshes.items() if m.get("error")] + missing))
    wall = sum(_num(meshes[n].get("wall")) for n in SPEC["meshes"])
    out = [Check("provenance.regenerate", Status.PASS,
                 f"all {len(SPEC['meshes'])} meshes regenerated (solve time {wall:.2f} s)", wall)]
    worst_grid = (0.0, 0)
    for n in SPEC["meshes"]:
        m = meshes[n]
        xj, xi = prescribed_grids(n)
        xn = _field(m, "x_nodes", xj.shape, "provenance.grids")
        xd = _field(m, "x_dense", xi.shape, "provenance.grids")
        un = _field(m, "uh_nodes", xj.shape, "provenance.grids")
        ud = _field(m, "uh_dense", xi.shape, "provenance.grids")
        for name, got, want in (("x_nodes", xn, xj), ("x_dense", xd, xi)):
            where = nonfinite_where(got)
            if where:
                raise Reject("provenance.grids", f"n={n}: {name}: {where}")
            i, d = worst(got - want)
            if d > SPEC["grid_atol"]:
                raise Reject("provenance.grids", f"n={n}: {name}[{i}] = {got[i]!r}, prescribed "
                             f"{want[i]!r} (|diff| {d:.2e} > {SPEC['grid_atol']:g}): nonconforming grid",
                             d, SPEC["grid_atol"])
            worst_grid = max(worst_grid, (d, n))
        for name, got in (("uh_nodes", un), ("uh_dense", ud)):
            where = nonfinite_where(got)
            if where:
                raise Reject("provenance.finite", f"n={n}: {name}: {where}")
        fields[n] = (un, ud, xd)
    out.append(Check("provenance.grids", Status.PASS, f"returned grids are j/n and i/({SPEC['dense_factor']}n) "
                     f"to {SPEC['grid_atol']:g} at every mesh", worst_grid[0], SPEC["grid_atol"]))
    out.append(Check("provenance.finite", Status.PASS, "returned fields finite at every mesh"))
    return out


def study_errors(fields: dict) -> dict:
    """{n: (e_n, e*_n)} recomputed from fields {n: (uh_nodes, uh_dense, ...)}."""
    import numpy as np
    out = {}
    for n, f in fields.items():
        xj, xi = prescribed_grids(n)
        out[n] = (float(np.max(np.abs(f[0] - exact_u(xj)))), float(np.max(np.abs(f[1] - exact_u(xi)))))
    return out


def check_reproduction(fields: dict, arrs: dict) -> list:
    """Regenerated nodal and dense errors against the submitted ones.  Within
    1e-6 relative (seed): PASS.  Beyond it but within the round-off band
    env_band(n) (the same code run with another BLAS thread count or CPU
    kernel): REVIEW.  Else FAIL."""
    if not fields or "nodal_errors" not in arrs:
        return [Check("provenance.reproduces_errors", Status.SKIP,
                      "nothing to compare (no regenerated fields or no valid arrays)")]
    regen = study_errors(fields)
    bad, env, worst_rel = [], [], 0.0
    for k, n in enumerate(SPEC["meshes"]):
        for j, (name, arr) in enumerate((("e_n", "nodal_errors"), ("e*_n", "dense_errors"))):
            e_re, e_sub = regen[n][j], float(arrs[arr][k])
            rel = abs(e_re - e_sub) / e_sub
            worst_rel = max(worst_rel, rel)
            if rel <= SPEC["regen_rel"]:
                continue
            line = f"n={n} {name}: regenerated {e_re:.6e}, submitted {e_sub:.6e}"
            (env if abs(e_re - e_sub) <= env_band(n) else bad).append(line)
    if bad:
        return [Check("provenance.reproduces_errors", Status.FAIL,
                      "solver does not reproduce its submitted numbers: " + "; ".join(bad[:4]),
                      worst_rel, SPEC["regen_rel"])]
    if env:
        return [Check("provenance.reproduces_errors", Status.REVIEW,
                      f"submitted errors differ from the regenerated ones beyond {SPEC['regen_rel']:g} relative, by "
                      "amounts linear-solve round-off explains (BLAS threads/CPU kernel of the study "
                      "run differ from the grader's?): " + "; ".join(env[:4]) + " - verify the "
                      "study environment by hand", worst_rel, SPEC["regen_rel"])]
    return [Check("provenance.reproduces_errors", Status.PASS,
                  f"regenerated nodal and dense errors match the submitted ones (rel {SPEC['regen_rel']:g})",
                  worst_rel, SPEC["regen_rel"])]


def check_regenerated_tiers(fields: dict) -> list:
    """Tier 1 and Tier 2 evaluated on the regenerated errors as well, so that no
    verdict rests on submitted numbers the solver did not reproduce."""
    import numpy as np
    if len(fields) != len(SPEC["meshes"]):
        return [Check("provenance.regenerated_tiers", Status.SKIP, "no complete regeneration")]
    errs = study_errors(fields)
    arrs = {"nodal_errors": np.array([errs[n][0] for n in SPEC["meshes"]]),
            "dense_errors": np.array([errs[n][1] for n in SPEC["meshes"]])}
    if not (np.all(arrs["nodal_errors"] > 0) and np.all(arrs["dense_errors"] > 0)):
        return [Check("provenance.regenerated_tiers", Status.FAIL, "a regenerated error is zero")]
    bad = [c for c in check_tier1(arrs) + check_tier2(arrs) if c.status is Status.FAIL]
    return [Check("provenance.regenerated_tiers", Status.FAIL if bad else Status.PASS,
                  ("on the regenerated errors: " + "; ".join(f"{c.id}: {c.message}" for c in bad[:3]))
                  if bad else "Tier 1 and Tier 2 also pass on the regenerated errors")]


def check_fidelity(fields: dict, ref: dict) -> list:
    """Every returned dense field against the grader's own 5-point solution."""
    if not fields or not ref:
        return [Check("provenance.fidelity", Status.SKIP, "no regenerated fields to compare")]
    bad, parts = [], []
    for n in SPEC["meshes"]:
        i, d = worst(fields[n][1] - ref[n][1])
        tol = fidelity_tol(n)
        parts.append(f"{n}:{d:.1e}")
        if d > tol:
            bad.append(f"n={n}: |uh - own| = {d:.3e} at i = {i} (x = {i / (10 * n):.5f}), tol {tol:.1e}")
    return [Check("provenance.fidelity", Status.FAIL if bad else Status.PASS,
                  ("returned field is not the cubic-Hermite solution: " + "; ".join(bad[:3])) if bad
                  else "dense field matches the grader's own 5-point solution at every mesh ("
                  + " ".join(parts) + ")", parts, [fidelity_tol(n) for n in SPEC["meshes"]])]


def check_solve_writes(meshes: dict) -> list:
    writes = sorted({str(w) for m in meshes.values() for w in _as_list(m.get("writes"))})
    return [Check("provenance.solve_side_effects", Status.FAIL if writes else Status.PASS,
                  ("solve(n) wrote files: " + ", ".join(map(str, writes[:5]))) if writes
                  else "solve(n) writes no file", writes)]


def check_artifact_provenance(fields: dict, arrs: dict) -> list:
    """Submitted artifact field against the regenerated one: <= artifact_tier3_atol
    pass, up to artifact_fail_atol Tier 3 fails, beyond it provenance fails."""
    n = SPEC["artifact_n"]
    if n not in fields or not all(a in arrs for a in ARTIFACT_ARRAYS):
        return [Check("tier3.artifact_reproduced", Status.SKIP, "artifact or regenerated field absent")]
    _, ud, xd = fields[n]
    i, dx = worst(arrs["x_dense"] - xd)
    j, du = worst(arrs["uh_dense"] - ud)
    d = max(dx, du)
    where = f"x_dense dev {dx:.2e}, uh_dense dev {du:.2e} at i = {j}"
    out = [Check("provenance.artifact_field", Status.PASS if d <= SPEC["artifact_fail_atol"] else Status.FAIL,
                 f"submitted n={n} artifact vs regenerated: {where} (fail above {SPEC['artifact_fail_atol']:g})",
                 d, SPEC["artifact_fail_atol"]),
           Check("tier3.artifact_reproduced", Status.PASS if d <= SPEC["artifact_tier3_atol"] else Status.FAIL,
                 f"submitted n={n} artifact vs regenerated: {where} (Tier 3 needs <= "
                 f"{SPEC['artifact_tier3_atol']:g})",
                 d, SPEC["artifact_tier3_atol"])]
    return out



