"""5-8. PROVENANCE (a part of grade_fem.py; see CONTRIBUTING.md)."""
import base64
import math
import secrets
import threading
from graders.fem.judging import judge_job
from graders.fem.spec import SPEC
from graders.fem.system_map import free_system, maps_of_own_matrix, stiffness_maps
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 5-8. PROVENANCE: the grader's side of the audit, live (answers the child's asks)
# =============================================================================
def _b64_array(text, dtype: str, count: int):
    """A 1-D array decoded from base64 with exactly `count` items, or None."""
    import numpy as np
    if not isinstance(text, str) or not isinstance(count, int) or count < 0:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (TypeError, ValueError):
        return None
    if len(raw) != count * np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(raw, dtype=dtype).copy()


def decode_array(msg, m: int):
    """A recorded right-hand side / output: float64, shape (m,) or (m, k), else None."""
    if not isinstance(msg, dict) or not isinstance(msg.get("shape"), list):
        return None
    shape = msg["shape"]
    if not (1 <= len(shape) <= 2 and all(isinstance(s, int) and s > 0 for s in shape)
            and shape[0] == m):
        return None
    count = math.prod(shape)
    arr = _b64_array(msg.get("b64"), "<f8", count)
    return None if arr is None else arr.reshape(shape)


def decode_matrix(msg, m_expected: int):
    """A recorded matrix as CSR, or (None, why).  Only the statement's dimension is
    decoded (a record cannot make the grader allocate more than it)."""
    import scipy.sparse
    if not isinstance(msg, dict):
        return None, "its matrix could not be read (an operator object?)"
    shape = msg.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(s, int) for s in shape)):
        return None, "its matrix could not be read"
    if shape[0] != shape[1]:
        return None, f"its matrix is {shape[0]}x{shape[1]}, not square"
    if shape[0] != m_expected:
        return None, f"dimension {shape[0]}, expected {m_expected} = 2(n-1)"
    nnz = msg.get("nnz")
    if "r" not in msg or not isinstance(nnz, int) or not 0 <= nnz <= 16 * m_expected:
        return None, (f"its matrix has {nnz} nonzeros (K has at most 7 a row)" if isinstance(nnz, int)
                      else "its matrix could not be read")
    r, c, v = (_b64_array(msg.get(k), t, nnz) for k, t in (("r", "<i4"), ("c", "<i4"), ("v", "<f8")))
    m = shape[0]
    if r is None or c is None or v is None or (nnz and (min(r.min(), c.min()) < 0 or
                                                        max(r.max(), c.max()) >= m)):
        return None, "its matrix record is malformed"
    return scipy.sparse.csr_matrix((v, (r, c)), shape=(m, m)), ""


class AuditSession:
    """Every library call of every job, as the child makes it.  Solves are answered
    at once: in a clean job with "unchanged", in an audited job (only if the matrix
    is the statement's) with the grader's own substitute, drawn here after the
    child has shown the real output.  Pure bookkeeping besides: judging is done
    from `calls` afterwards (judge(): each job's judgment computed once, for every
    check that reads it)."""

    def __init__(self, plan: dict):
        self.plan = plan                    # job id -> {"n": n, "mode": "clean"|"substitute"|"nan"}
        self.calls = {jid: [] for jid in plan}
        self.asked = {jid: 0 for jid in plan}   # audit asks received (factor/solve/inverse)
        self.factors: dict = {}             # (job, fid) -> matrix verdict
        self.cache: dict = {}               # matrix digest -> verdict
        self.rng = None                     # drawn at the first substitute (numpy not imported yet)
        self.faults: list = []
        self.lock = threading.Lock()
        self.judged: dict = {}              # id(a job's calls) -> judge_job of its own field

    def judge(self, n: int, calls: list, fields) -> dict:
        """judge_job of a job's calls and its own returned field, once per job."""
        if id(calls) not in self.judged:
            self.judged[id(calls)] = judge_job(n, calls, fields)
        return self.judged[id(calls)]

    def verdict(self, mat, n: int) -> dict:
        """{"K": bool, "why", "maps", "digest", "dim"} for a matrix record (cached by content:
        the record's own strings are the key, so a hit is an exact match, at the cost of one
        string hash and comparison; "digest" names the cached entry)."""
        parts = [mat.get(k) if isinstance(mat, dict) else None for k in ("shape", "r", "c", "v")]
        key = tuple(p if isinstance(p, str) else repr(p) for p in parts)
        if (key, n) not in self.cache:
            A, why = decode_matrix(mat, 2 * (n - 1))
            maps = []
            if A is not None:
                maps, why = maps_of_own_matrix(A, n) or stiffness_maps(A, n)
            self.cache[(key, n)] = {"K": bool(maps), "why": why, "maps": maps,
                                    "digest": f"matrix-{len(self.cache)}",
                                    "dim": A.shape[0] if A is not None else
                                    (mat.get("shape") or [None])[0] if isinstance(mat, dict) and
                                    isinstance(mat.get("shape"), list) else None,
                                    "A": A if maps else None}
        return self.cache[(key, n)]

    def interact(self, body):
        try:
            with self.lock:
                return self._handle(body)
        except Exception as exc:            # never escapes into the runner
            self.faults.append(f"{type(exc).__name__}: {exc}"[:200])
            return None

    def _handle(self, body):
        import numpy as np
        if not isinstance(body, dict) or body.get("job") not in self.plan:
            return None
        jid = body["job"]
        job = self.plan[jid]
        n = job["n"]
        calls = self.calls[jid]
        if body.get("kind") in ("factor", "solve", "inverse"):
            self.asked[jid] += 1
        if len(calls) >= SPEC["max_calls"]:
            return None
        fn = str(body.get("fn"))[:80]
        fid = body.get("fid") if isinstance(body.get("fid"), int) else None
        if body.get("kind") == "factor":
            v = self.verdict(body.get("mat"), n)
            if fid is not None:
                self.factors[(jid, fid)] = v
            calls.append({"fn": fn, "kind": "factor", "K": v["K"], "why": v["why"], "dim": v["dim"]})
            return None
        if body.get("kind") == "inverse":
            return self._inverse(jid, job, fn, body)
        if body.get("kind") != "solve":
            return None
        if isinstance(body.get("unobservable"), str):     # the recorder could not own an operand
            v = {"K": False, "why": "its matrix could not be read: " + body["unobservable"][:160],
                 "maps": [], "digest": None, "dim": None}
        elif body.get("mat") is not None or fid is None:
            v = self.verdict(body.get("mat"), n)
        else:
            v = self.factors.get((jid, fid), {"K": False, "why": "applies an unknown factorisation",
                                              "maps": [], "digest": None, "dim": None})
        m = 2 * (n - 1)
        z = decode_array(body.get("out"), m)
        rhs = decode_array(body.get("rhs"), m)
        rec = {"fn": fn, "kind": "solve", "K": v["K"], "why": v["why"], "maps": v["maps"],
               "digest": v["digest"], "dim": body.get("dim"), "z": z, "rhs": rhs, "sub": None,
               "A": v.get("A"), "changed": body.get("changed") if isinstance(body.get("changed"), int)
               else None}
        calls.append(rec)
        if z is None or not v["K"] or job["mode"] == "clean":
            return {"sub": None}
        if self.rng is None:
            self.rng = np.random.default_rng(secrets.randbits(128))
        if job["mode"] == "nan":
            sub = z.copy()
            sub[self.rng.choice(m, size=SPEC["audit_nan_entries"], replace=False)] = math.nan
        else:       # random entries of the solution's own scale, independent per entry
            scale = float(np.max(np.abs(z))) if np.all(np.isfinite(z)) and z.size else 1.0
            sub = z * (1 + self.rng.uniform(-0.5, 0.5, z.shape)) + \
                SPEC["audit_additive"] * (scale or 1.0) * self.rng.standard_normal(z.shape)
        rec["sub"] = sub
        return {"sub": base64.b64encode(np.ascontiguousarray(sub, dtype="<f8").tobytes()).decode("ascii")}

    def _inverse(self, jid, job, fn, body):
        """An explicit inverse Z of the stiffness matrix: substituted by Z + u v^T (random u;
        v with the signs of the load in the system's unknowns, so that v^T b is far from 0)
        or by NaN rows.  The field's change must then be (v^T b / gamma) times the
        reconstruction of u mapped back (judge_inverse)."""
        import numpy as np
        n = job["n"]
        m = 2 * (n - 1)
        v = self.verdict(body.get("mat"), n)
        rec = {"fn": fn, "kind": "inverse", "K": v["K"], "why": v["why"], "maps": v["maps"],
               "digest": v["digest"], "dim": v["dim"], "rank1": None, "sub": None}
        self.calls[jid].append(rec)
        if not v["K"] or job["mode"] == "clean":
            return None
        if self.rng is None:
            self.rng = np.random.default_rng(secrets.randbits(128))
        if job["mode"] == "nan":
            rows = [int(i) for i in self.rng.choice(m, size=SPEC["audit_nan_entries"], replace=False)]
            rec["sub"] = "nan"
            return {"nanrows": rows}
        mp = v["maps"][0]
        F = free_system(n)[1]
        u = self.rng.standard_normal(m)
        w = np.empty(m)
        w[mp.perm] = np.sign(mp.dt * F) * self.rng.uniform(0.5, 1.0, m)
        rec["rank1"], rec["sub"] = (u, w), "rank1"
        enc = lambda a: base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")
        return {"rank1": [enc(u), enc(w)]}


