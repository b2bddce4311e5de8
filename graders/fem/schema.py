"""1. ARRAY SCHEMA (a part of grade_fem.py; see CONTRIBUTING.md)."""
from graders.common.guarded_fields import get_array
from graders.common.records import Check, Reject, Status, guarded
from graders.fem.problem import mesh_text, nonfinite_where, orders, worst
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 1. ARRAY SCHEMA
# =============================================================================
ARTIFACT_ARRAYS = ("x_dense", "uh_dense", "uexact_dense", "error_dense")
STUDY_ARRAYS = ("n_values", "nodal_errors", "dense_errors", "nodal_eoc", "dense_eoc")


@guarded
def check_schema(raw: dict, parsed: dict) -> list:
    """Shapes, dtypes, finiteness, the mesh sequence, positivity, the EOC tails.
    Fills `parsed` with float64 arrays on success."""
    import numpy as np
    out = []
    n7 = (len(SPEC["meshes"]),)
    arrs = {name: get_array(raw, name, n7, "schema.arrays") for name in STUDY_ARRAYS}
    present = [a for a in ARTIFACT_ARRAYS if a in raw]
    if present and len(present) < len(ARTIFACT_ARRAYS):
        missing = [a for a in ARTIFACT_ARRAYS if a not in raw]
        raise Reject("schema.arrays", "artifact arrays partly missing: " + ", ".join(missing))
    for name in present:
        arrs[name] = get_array(raw, name, (SPEC["artifact_points"],), "schema.arrays")
    extra = sorted(set(raw) - set(STUDY_ARRAYS) - set(ARTIFACT_ARRAYS))
    out.append(Check("schema.arrays", Status.PASS,
                     f"{len(arrs)} arrays with shapes {n7} / ({SPEC['artifact_points']},)"
                     + (f"; extra arrays ignored: {', '.join(extra)}" if extra else "")))
    for name in ("n_values", "nodal_errors", "dense_errors") + tuple(present):
        where = nonfinite_where(arrs[name])
        if where:
            raise Reject("schema.finite", f"{name}: {where}")
    for name in ("nodal_eoc", "dense_eoc"):
        where = nonfinite_where(arrs[name][1:])
        if where:
            raise Reject("schema.finite", f"{name}[1:]: {where}")
    out.append(Check("schema.finite", Status.PASS, "all values finite (EOC heads excepted)"))
    want = np.array(SPEC["meshes"], float)
    if not np.array_equal(arrs["n_values"], want):
        raise Reject("schema.n_values", f"n_values = {arrs['n_values'].tolist()}, expected {mesh_text()}",
                     arrs["n_values"], list(SPEC["meshes"]))
    out.append(Check("schema.n_values", Status.PASS, f"n = {mesh_text()}"))
    for name in ("nodal_errors", "dense_errors"):
        if not np.all(arrs[name] > 0):
            i = int(np.argmin(arrs[name]))
            raise Reject("schema.errors_positive", f"{name}[{i}] = {arrs[name][i]!r} is not > 0")
    out.append(Check("schema.errors_positive", Status.PASS, "errors strictly positive"))
    for eoc, err in (("nodal_eoc", "nodal_errors"), ("dense_eoc", "dense_errors")):
        if not np.isnan(arrs[eoc][0]):
            raise Reject("schema.eoc", f"{eoc}[0] = {arrs[eoc][0]!r}, must be NaN")
        diff = arrs[eoc][1:] - np.array(orders(arrs[err]))
        i, d = worst(diff)
        if d > SPEC["eoc_atol"]:
            raise Reject("schema.eoc", f"{eoc}[{i + 1}] = {arrs[eoc][i + 1]:.6f}, recomputed from "
                         f"{err}: {arrs[eoc][i + 1] - diff[i]:.6f}", d, SPEC["eoc_atol"])
    out.append(Check("schema.eoc", Status.PASS, "nodal_eoc/dense_eoc: NaN head, tails recomputed"))
    parsed.update(arrs)
    return out


