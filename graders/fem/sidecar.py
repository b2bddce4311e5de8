"""2. SIDECAR CONSISTENCY (a part of grade_fem.py; see CONTRIBUTING.md)."""
import json
from graders.common.guarded_fields import get_number, get_path
from graders.common.records import Check, Reject, Status, guarded
from graders.fem.problem import lsq_order, orders
from graders.fem.schema import ARTIFACT_ARRAYS
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 2. SIDECAR CONSISTENCY (results.json)
# =============================================================================
@guarded
def check_sidecar(doc, arrs: dict) -> list:
    """results.json against the (schema-checked) arrays."""
    out = []
    if not isinstance(doc, dict):
        raise Reject("sidecar.document", "results.json must hold a JSON object")
    text = get_path(doc, ("exact_solution",), "sidecar.fields")
    if not isinstance(text, str) or not text.strip():
        raise Reject("sidecar.fields", "exact_solution must be a non-empty string")
    if get_path(doc, ("dofs_per_node",), "sidecar.fields") != SPEC["dofs_per_node"]:
        raise Reject("sidecar.fields", f"dofs_per_node must be {SPEC['dofs_per_node']}")
    if get_number(doc, ("asymptotic_order",), "sidecar.fields") != SPEC["asymptotic_order"]:
        raise Reject("sidecar.fields", f"asymptotic_order must be {SPEC['asymptotic_order']}")
    out.append(Check("sidecar.fields", Status.PASS, f"exact_solution, dofs_per_node == "
                     f"{json.dumps(SPEC['dofs_per_node'])}, asymptotic_order == {SPEC['asymptotic_order']}"))
    ns = SPEC["meshes"]
    for study, key, arr in (("nodal_study", "e_n", "nodal_errors"),
                            ("dense_study", "e_star_n", "dense_errors")):
        cid = f"sidecar.{study}"
        table = get_path(doc, (study, "table"), cid)
        if not isinstance(table, list) or len(table) != len(ns):
            raise Reject(cid, f"{study}.table must be a list of {len(ns)} rows")
        errs = arrs[arr]
        betas = orders(errs)
        for k, n in enumerate(ns):
            if get_number(table, (k, "n"), cid, integer=True) != n:
                raise Reject(cid, f"{study}.table[{k}].n != {n}")
            h = get_number(table, (k, "h"), cid)
            if abs(h - 1.0 / n) > SPEC["h_rel"] / n:
                raise Reject(cid, f"{study}.table[{k}].h = {h!r}, expected 1/{n}", h, 1.0 / n)
            e = get_number(table, (k, key), cid)
            if abs(e - errs[k]) > SPEC["json_error_rel"] * errs[k]:
                raise Reject(cid, f"{study}.table[{k}].{key} = {e:.6e}, {arr}[{k}] = {errs[k]:.6e}",
                             e, float(errs[k]))
            beta = get_path(table, (k, "beta"), cid)
            if k == 0:
                if beta is not None:
                    raise Reject(cid, f"{study}.table[0].beta must be null, got {beta!r}")
                continue
            beta = get_number(table, (k, "beta"), cid)
            if abs(beta - betas[k - 1]) > SPEC["json_beta_atol"]:
                raise Reject(cid, f"{study}.table[{k}].beta = {beta:.6f}, recomputed "
                             f"{betas[k - 1]:.6f}", beta, betas[k - 1])
        out.append(Check(cid, Status.PASS, f"{study}.table: n, h = 1/n, {key}, beta all consistent"))
    claimed = get_number(doc, ("dense_study", "observed_order_clean_regime"), "sidecar.observed_order")
    clean = [k for k, n in enumerate(ns) if n <= SPEC["artifact_n"]]
    fit = lsq_order([ns[k] for k in clean], [arrs["dense_errors"][k] for k in clean])
    if abs(claimed - fit) > SPEC["lsq_order_tol"]:
        raise Reject("sidecar.observed_order", f"observed_order_clean_regime = {claimed:.4f}, "
                     f"least-squares fit over n = {ns[0]}..{SPEC['artifact_n']}: {fit:.4f}", claimed, fit)
    out.append(Check("sidecar.observed_order", Status.PASS,
                     f"observed_order_clean_regime = {claimed:.4f}, fit {fit:.4f} (tol {SPEC['lsq_order_tol']:g})",
                     abs(claimed - fit), SPEC["lsq_order_tol"]))
    has_arrays = all(a in arrs for a in ARTIFACT_ARRAYS)
    if "artifact" not in doc and not has_arrays:
        out.append(Check("sidecar.artifact", Status.SKIP, "no artifact block and no artifact arrays "
                         "(Tier 3 missing)"))
        return out
    cid = "sidecar.artifact"
    if get_number(doc, ("artifact", "n"), cid, integer=True) != SPEC["artifact_n"]:
        raise Reject(cid, f"artifact.n must be {SPEC['artifact_n']}")
    if get_number(doc, ("artifact", "points"), cid, integer=True) != SPEC["artifact_points"]:
        raise Reject(cid, f"artifact.points must be {SPEC['artifact_points']}")
    dme = get_number(doc, ("artifact", "dense_max_error"), cid)
    k = ns.index(SPEC["artifact_n"])
    ref = float(arrs["dense_errors"][k])
    if abs(dme - ref) > SPEC["json_error_rel"] * ref:
        raise Reject(cid, f"artifact.dense_max_error = {dme:.6e}, dense_errors[{k}] = {ref:.6e}",
                     dme, ref)
    out.append(Check(cid, Status.PASS, f"artifact block: n = {SPEC['artifact_n']}, "
                     f"{SPEC['artifact_points']} points, dense_max_error == dense_errors[{k}]"))
    return out


