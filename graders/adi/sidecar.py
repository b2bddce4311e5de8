"""SIDECAR CONSISTENCY (a part of grade_adi.py; see CONTRIBUTING.md)."""
import math
from graders.adi.problems import _PROBLEMS, h_value
from graders.adi.schema import Submitted, fitted_order, pointwise_orders
from graders.adi.spec import K_EQUALS_H, SPEC
from graders.common.guarded_fields import get_number, get_path
from graders.common.records import Check, Reject, Status, guarded
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SIDECAR CONSISTENCY (seed: "What the evaluator checks" 2)
# =============================================================================
@guarded
def check_convergence_table(sub: Submitted) -> list:
    """results.json convergence_table rows p = 0..4 against the arrays."""
    cid = "sidecar.convergence_table"
    rows = get_path(sub.results, ("convergence_table",), cid)
    if not isinstance(rows, list) or len(rows) != SPEC["n_meshes"]:
        raise Reject(cid, f"convergence_table must be a list of {SPEC['n_meshes']} rows")
    orders = pointwise_orders(sub.h, sub.e)
    for i in range(SPEC["n_meshes"]):
        p = get_number(rows, (i, "p"), cid, integer=True)
        if p != i:
            raise Reject(cid, f"row {i}: p = {p}, expected {i} (wrong p index or row order)", p, i)
        h = get_number(rows, (i, "h"), cid)
        if abs(h - sub.h[i]) > SPEC["h_rtol"] * sub.h[i]:
            raise Reject(cid, f"row {i}: h = {h!r}, h_values[{i}] = {sub.h[i]!r}", h, float(sub.h[i]))
        err = get_number(rows, (i, "max_norm_error"), cid)
        if abs(err - sub.e[i]) > SPEC["table_err_rtol"] * sub.e[i]:
            raise Reject(cid, f"row {i}: max_norm_error = {err!r} but max_norm_errors[{i}] = "
                         f"{sub.e[i]!r}", err, float(sub.e[i]))
        if i == 0:
            val = get_path(rows, (0,), cid).get("eoc_order", None)
            if val is not None and not (isinstance(val, float) and math.isnan(val)):
                raise Reject(cid, f"row 0: eoc_order must be null, got {val!r}")
        else:
            q = get_number(rows, (i, "eoc_order"), cid)
            if abs(q - orders[i - 1]) > SPEC["table_eoc_atol"]:
                raise Reject(cid, f"row {i}: eoc_order = {q!r}, recomputed {orders[i - 1]:.9f}",
                             q, float(orders[i - 1]))
    return Check(cid, Status.PASS, "5 rows, p = 0..4, h / max_norm_error / eoc_order agree with the arrays")


@guarded
def check_sidecar_fields(sub: Submitted) -> list:
    """diffusion_matrix, final_time, time_step_rule (k = h), scheme, finest_mesh,
    observed_order_of_convergence."""
    bench = _PROBLEMS["benchmark_problem"]()
    out = []
    for key, want in (("a", bench.a), ("b", bench.b), ("c", bench.c)):
        got = get_number(sub.results, ("diffusion_matrix", key), "sidecar.diffusion_matrix")
        if abs(got - want) > 1e-12:
            raise Reject("sidecar.diffusion_matrix", f"diffusion_matrix.{key} = {got!r}, expected {want}",
                         got, want)
    out.append(Check("sidecar.diffusion_matrix", Status.PASS,
                     f"a = {bench.a}, b = {bench.b}, c = {bench.c}"))
    T = get_number(sub.results, ("final_time",), "sidecar.final_time")
    if abs(T - SPEC["final_time"]) > 1e-12:
        raise Reject("sidecar.final_time", f"final_time = {T!r}, expected {SPEC['final_time']}", T,
                     SPEC["final_time"])
    out.append(Check("sidecar.final_time", Status.PASS, f"final_time = {T:g}"))
    return out


@guarded
def check_time_step_rule(sub: Submitted) -> list:
    rule = get_path(sub.results, ("time_step_rule",), "sidecar.time_step_rule")
    if not isinstance(rule, str):
        raise Reject("sidecar.time_step_rule", f"time_step_rule must be text, got {type(rule).__name__}")
    if not K_EQUALS_H.search(rule):
        raise Reject("sidecar.time_step_rule", f"time_step_rule does not state k = h: {rule[:80]!r}")
    return Check("sidecar.time_step_rule", Status.PASS, f"states k = h: {rule[:60]!r}")


@guarded
def check_scheme(sub: Submitted) -> list:
    scheme = get_path(sub.results, ("scheme",), "sidecar.scheme")
    if not isinstance(scheme, str) or not scheme.strip():
        raise Reject("sidecar.scheme", "scheme must be a non-empty string")
    return Check("sidecar.scheme", Status.PASS, f"scheme: {scheme.strip()[:60]!r}")


@guarded
def check_finest_mesh(sub: Submitted) -> list:
    cid = "sidecar.finest_mesh"
    h = get_number(sub.results, ("finest_mesh", "h"), cid)
    want = h_value(SPEC["n_meshes"] - 1)
    if abs(h - want) > SPEC["h_rtol"] * want:
        raise Reject(cid, f"finest_mesh.h = {h!r}, expected {want}", h, want)
    shape = get_path(sub.results, ("finest_mesh", "shape"), cid)
    dims = [get_number(sub.results, ("finest_mesh", "shape", i), cid, integer=True)
            for i in range(len(shape))] if isinstance(shape, list) else None
    if dims != list(SPEC["finest_shape"]):
        raise Reject(cid, f"finest_mesh.shape = {shape!r}, expected {list(SPEC['finest_shape'])}")
    return Check(cid, Status.PASS, f"finest_mesh h = {want}, shape {list(SPEC['finest_shape'])}")


@guarded
def check_observed_order(sub: Submitted) -> list:
    cid = "sidecar.observed_order"
    claim = get_number(sub.results, ("observed_order_of_convergence",), cid)
    fit = fitted_order(sub.h, sub.e)
    if abs(claim - fit) > SPEC["order_claim_atol"]:
        raise Reject(cid, f"observed_order_of_convergence = {claim!r} but the errors give {fit:.4f}",
                     claim, fit)
    return Check(cid, Status.PASS, f"observed order {claim:.4f} supported by the errors ({fit:.4f})",
                 claim, fit)


