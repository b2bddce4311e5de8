"""PROMPT STYLES (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import hashlib
import math
from graders.common.records import Check, Reject, Status
from graders.engiai.design import (connectivity, constraint_match, describe_watertight, iou,
    objective_match, pixel_accuracy, watertight_report)
from graders.engiai.families import (Unscorable, optimal_count_check, succeeded, tool_efficiency,
    weighted)
from graders.engiai.guarded import as_number, read_h5_array, read_stl, safe_member, short
from graders.engiai.model_quality import copy_spaces
from graders.engiai.run import RunRefs
from graders.engiai.spec import PROBLEMS, SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# PROMPT STYLES: task completion, workflow parameter checks, the distractor
# =============================================================================
_STL_PARAMS = (("scale_xy", "scale_xy", "float"), ("scale_z", "scale_z", "float"),
               ("threshold", "threshold", "float"), ("mirror_y", "mirrored", "bool"))


def validate_stl_params(actual: dict, expected: dict) -> tuple:
    """(ok, violations): each float within 0.05 (strict), mirror_y == result's mirrored."""
    bad = []
    for exp_key, act_key, kind in _STL_PARAMS:
        e, a = expected.get(exp_key), actual.get(act_key)
        if kind == "bool":
            if not isinstance(e, bool) or not isinstance(a, bool) or a != e:
                bad.append(f"{exp_key}: got {short(a, as_repr=True)}, expected {short(e, as_repr=True)}")
        else:
            ea, aa = as_number(e), as_number(a)
            if ea is None or aa is None or not abs(aa - ea) < SPEC["stl_param_tol"]:
                bad.append(f"{exp_key}: got {short(a, as_repr=True)}, expected {short(e, as_repr=True)}")
    return not bad, bad


def expected_params(style: str, expected, gt: dict) -> list:
    """The list of expected export parameter sets, in order, for a workflow style."""
    if not isinstance(expected, dict) or not isinstance(expected.get("stl_expected_params"), dict):
        raise Unscorable(f"{style}: expected.stl_expected_params missing from the trial record")
    p = expected["stl_expected_params"]
    if style == "workflow-multi-export":
        exports = p.get("exports")
        if not isinstance(exports, list) or len(exports) != SPEC["multi_export_count"] or \
                not all(isinstance(e, dict) for e in exports):
            raise Unscorable(f"workflow-multi-export: stl_expected_params.exports must list "
                             f"{SPEC['multi_export_count']} objects")
        return exports
    if style == "workflow-conditional":
        try:
            thr = as_number(p["compliance_threshold"])
            if thr is None:
                raise ValueError("compliance_threshold is not a finite number")
            branch = p["branch_high"] if gt["compliance"] > thr else p["branch_low"]
            return [{"threshold": branch["threshold"], "mirror_y": branch["mirror_y"],
                     "scale_xy": p["common"]["scale_xy"], "scale_z": p["common"]["scale_z"]}]
        except (KeyError, TypeError, ValueError) as exc:
            raise Unscorable(f"workflow-conditional: cannot resolve the branch ({exc!r}): needs "
                             "compliance_threshold, branch_high, branch_low, common and the "
                             "ground-truth compliance")
    return [p]


def export_params(call: dict, stl_reports: dict) -> dict:
    """The parameters an export used: the tool result's, with scale_z replaced by the height
    of the STL it produced when that file was read (the geometry is the witness)."""
    got = dict(call["result"])
    rep = stl_reports.get(call["result"].get("stl_path"))
    if rep is not None:
        got["scale_z_reported"] = got.get("scale_z")
        got["scale_z"] = rep["z_extent"]
    return got


def task_completion(style: str, calls: list, expected, gt: dict, stl_reports: dict,
                    tid: str) -> tuple:
    """(score, checks).  full/natural: render_design succeeded.  workflow styles: a successful
    convert_design_to_stl whose file exists, with the expected parameters (the last export;
    the first two, in order, for multi-export)."""
    checks = []
    if style in ("full", "natural"):
        ok = any(c["name"] == "render_design" and succeeded(c) for c in calls)
        return (1.0 if ok else 0.0), [Check(f"trial.{tid}.task", Status.INFO,
                                            "render_design succeeded" if ok else
                                            "no successful render_design")]
    exports = []
    for c in calls:
        if c["name"] != "convert_design_to_stl" or not succeeded(c):
            continue
        path = c["result"].get("stl_path")
        if not isinstance(path, str) or path not in stl_reports:
            checks.append(Check(f"trial.{tid}.export", Status.FAIL,
                                f"convert_design_to_stl reports success but its file "
                                f"{short(c['result'].get('stl_path'), 60)!r} is not a readable "
                                "STL in the trial folder: export not counted"))
            continue
        exports.append(export_params(c, stl_reports))
    want = expected_params(style, expected, gt)
    if style == "workflow-multi-export":
        if len(exports) < len(want):
            return 0.0, checks + [Check(f"trial.{tid}.task", Status.INFO,
                                        f"{len(exports)} successful export(s), "
                                        f"{len(want)} expected")]
        got = exports[: len(want)]
    else:
        if not exports:
            return 0.0, checks + [Check(f"trial.{tid}.task", Status.INFO,
                                        "no successful convert_design_to_stl")]
        got = exports[-1:]
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        ok, viol = validate_stl_params(g, w)
        if not ok:
            bad.append((f"export {i + 1}: " if len(want) > 1 else "") + "; ".join(viol))
    if style == "workflow-distractor":
        checks += distractor_check(got[0], expected, tid)
    msg = "export parameters match" if not bad else "export parameters wrong: " + " | ".join(bad)
    return (0.0 if bad else 1.0), checks + [Check(f"trial.{tid}.task", Status.INFO, msg)]


_FOOT_OFFSET = (0.5 + 0.1180339887, 0.5 - 0.0729490169)   # inside the cell, off every grid diagonal


def cap_faces(tris, rep: dict) -> dict:
    """{"top": (k, 3, 2), "bottom": (k, 3, 2)}: the x/y corners of the faces lying in the plane
    z = z_max facing up, and in z = z_min facing down (within the weld tolerance)."""
    import numpy as np
    z = tris[..., 2]
    nz = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])[:, 2]
    tol = rep["weld_tol"]
    top = np.all(z >= z.max() - tol, axis=1) & (nz > 0)
    bottom = np.all(z <= z.min() + tol, axis=1) & (nz < 0)
    return {"top": tris[top][..., :2].copy(), "bottom": tris[bottom][..., :2].copy()}


def footprint(faces, shape: tuple, s: float, tol: float = 0.0):
    """(cells covered, hits outside the grid) of x/y triangles at scale s: cell (r, c) is covered
    when its sample point ((c + 0.618..) s, (r + 0.427..) s) lies in some face, edges included
    and widened by tol (the weld tolerance: the point sits off every grid line and unit-cell
    diagonal, but it can lie on the diagonal of a merged rectangle, where two triangles whose
    shared corners differ by float noise leave a gap of that width).  Scanline: per face and sample row,
    the face's x interval on that row covers a run of cells.  None when the faces span more
    than stl_footprint_max_tests (face, row) pairs."""
    import numpy as np
    rows, cols = shape
    diff = np.zeros((rows, cols + 1), dtype=np.int64)
    if len(faces) == 0:
        return diff[:, :cols] > 0, 0
    u = faces / s
    ox, oy = _FOOT_OFFSET
    r0 = np.ceil(u[..., 1].min(axis=1) - oy).astype(np.int64)
    r1 = np.floor(u[..., 1].max(axis=1) - oy).astype(np.int64)
    cnt = np.maximum(0, r1 - r0 + 1)
    total = int(cnt.sum())
    if total > SPEC["stl_footprint_max_tests"]:
        return None
    outside, eps, chunk = 0, min(0.1, max(1e-9, tol / s)), 1 << 20   # at most 0.1 cell
    bounds = np.searchsorted(np.cumsum(cnt), np.arange(0, total + chunk, chunk), side="right")
    bounds[0] = 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if lo >= hi:
            continue
        c = cnt[lo:hi]
        tri = np.repeat(np.arange(lo, hi), c)
        row = r0[tri] + np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        y = row + oy
        xl = np.full(y.shape, np.inf)
        xr = np.full(y.shape, -np.inf)
        for i, j in ((0, 1), (1, 2), (2, 0)):
            p, q = u[tri, i], u[tri, j]
            dy = q[:, 1] - p[:, 1]
            hit = ((p[:, 1] - y) * (q[:, 1] - y) <= 0) & (dy != 0)
            x = p[:, 0] + (y - p[:, 1]) * (q[:, 0] - p[:, 0]) / np.where(dy != 0, dy, 1.0)
            xl = np.where(hit, np.minimum(xl, x), xl)
            xr = np.where(hit, np.maximum(xr, x), xr)
        c0 = np.ceil(xl - eps - ox)
        c1 = np.floor(xr + eps - ox)
        run = np.isfinite(c0) & (c1 >= c0)
        row, c0, c1 = row[run], c0[run].astype(np.int64), c1[run].astype(np.int64)
        inside_row = (row >= 0) & (row < rows)
        outside += int(np.sum(~inside_row) + np.sum(np.maximum(0, -c0[inside_row])) +
                       np.sum(np.maximum(0, c1[inside_row] - (cols - 1))))
        row, c0, c1 = row[inside_row], np.clip(c0[inside_row], 0, cols), np.clip(c1[inside_row], -1, cols - 1)
        keep = c1 >= c0
        np.add.at(diff, (row[keep], c0[keep]), 1)
        np.add.at(diff, (row[keep], c1[keep] + 1), -1)
    return np.cumsum(diff, axis=1)[:, :cols] > 0, outside


def solid_fit(rep: dict, design, s: float, thr: float, mirrored: bool, strict: bool,
              caps=None):
    """None when the design has no cell above thr; else whether the closed STL is the solid of
    the design's cells above thr (`>` when strict, else `>=`) at scale_xy s: cell (i, j) at
    x = j*s, y = i*s (rows reversed when mirrored), height z_extent; its volume N*s^2*h, x/y
    centroid and x/y bounding box must agree within stl_geometry_rel_tol (volume relative, the
    others relative to the mesh scale)."""
    import numpy as np
    mask = design > thr if strict else design >= thr
    cnt = int(mask.sum())
    if cnt == 0:
        return None
    rows, cols = np.nonzero(mask)
    n_rows = mask.shape[0]
    if mirrored:
        cy, ylo, yhi = n_rows - rows.mean() - 0.5, n_rows - 1 - rows.max(), n_rows - rows.min()
    else:
        cy, ylo, yhi = rows.mean() + 0.5, rows.min(), rows.max() + 1
    cx, xlo, xhi = cols.mean() + 0.5, cols.min(), cols.max() + 1
    tol, at = SPEC["stl_geometry_rel_tol"], SPEC["stl_geometry_rel_tol"] * rep["scale"]
    want_v = cnt * s * s * rep["z_extent"]
    # position is no part of the solid: an exporter may place the grid anywhere in x/y (many
    # centre the mesh); everything is compared after moving the mesh's bounding-box corner onto
    # the cells' (the shape, volume, centroid and footprint must still be the design's)
    (bx0, by0, _), (bx1, by1, _) = rep["bbox"]
    dx, dy = bx0 - s * xlo, by0 - s * ylo
    bx0, bx1, by0, by1 = bx0 - dx, bx1 - dx, by0 - dy, by1 - dy
    centroid = (rep["centroid"][0] - dx, rep["centroid"][1] - dy)
    if not (abs(rep["volume"] - want_v) <= tol * want_v and
            abs(centroid[0] - s * cx) <= at and abs(centroid[1] - s * cy) <= at and
            max(abs(bx0 - s * xlo), abs(bx1 - s * xhi), abs(by0 - s * ylo),
                abs(by1 - s * yhi)) <= at):
        return False
    # the footprint itself: the up-facing faces at the top and the down-facing faces at the
    # bottom each cover exactly the design's cells (a coarse solid with the right volume,
    # centroid and bounding box does not)
    want = mask[::-1] if mirrored else mask
    for faces in (caps or {}).values():
        got = footprint(faces - np.array([dx, dy]), mask.shape, s, rep["weld_tol"])
        if got is None or got[1] or not np.array_equal(got[0], want):
            return False
    return True


def stl_witness(rep: dict, design, exports: list, caps=None) -> dict:
    """Is a closed STL the solid of the trial's design?  {ok, why}.  The parameters tried: each
    successful convert_design_to_stl naming the file reports scale_xy, threshold and mirrored;
    beside the reported values the grader also tries scale_xy = the footprint's x extent over
    the design's column span, threshold = binarize_at and the other mirroring (the solid can be
    the design's while the tool result misreports a parameter; export_geometry_checks reports
    that as REVIEW); a missing or unusable reported value is simply not tried.  With no export call (the harness's
    design.stl of full/natural) every parameter is derived."""
    if design is None:
        return {"ok": False, "why": "there is no valid design to witness it against (volume and "
                                    "centroid of the design's cells): not credited"}
    if rep.get("partial_shells"):
        return {"ok": False, "why": (
            f"{rep['partial_shells']} of its {rep['shells']} shells do not span the full height "
            "(a floating piece or an internal cavity): not an extrusion of the design's cells")}
    sets, assumed = [], not exports
    for res in exports or [{}]:
        s, thr, mir = as_number(res.get("scale_xy")), as_number(res.get("threshold")), res.get("mirrored")
        assumed = assumed or s is None or thr is None or not isinstance(mir, bool)
        mirrors = (mir, not mir) if isinstance(mir, bool) else (False, True)
        for t in dict.fromkeys(x for x in (thr, SPEC["binarize_at"]) if x is not None):
            sets.append((s if s is not None and s > 0 else None, t, mirrors))
    import numpy as np
    tried, any_cells = 0, False
    for s_rep, thr, mirrors in sets:
        for strict in (True, False):
            mask = design > thr if strict else design >= thr
            if not mask.any():
                continue
            any_cells = True
            cols = np.nonzero(mask.any(axis=0))[0]
            (bx0, _, _), (bx1, _, _) = rep["bbox"]
            s_geo = (bx1 - bx0) / (cols.max() - cols.min() + 1)
            for s in {x for x in (s_rep, s_geo) if x is not None and x > 0}:
                for mir in mirrors:
                    tried += 1
                    if solid_fit(rep, design, s, thr, mir, strict, caps):
                        # the solid witnessed: its cells, scale, mirroring and height (files
                        # that are one solid, e.g. a copy with float noise, count once)
                        solid = (hashlib.sha256(np.packbits(mask).tobytes()).hexdigest(), mir,
                                 f"{s:.5g}", f"{rep['z_extent']:.5g}")
                        return {"ok": True, "solid": solid, "why": (
                            f"its volume, x/y centroid and footprint are those of the design's "
                            f"{int(mask.sum())} cells {'>' if strict else '>='} {thr:g} at scale_xy "
                            f"{s:g}, mirrored {mir}"
                            + (" (not every parameter reported by an export call: threshold "
                               f"{SPEC['binarize_at']:g}, scale from the footprint and both "
                               "mirrorings tried where missing)" if assumed else ""))}
    if not any_cells:
        return {"ok": False, "why": "the design has no cell above the export threshold: its solid "
                                    "would be empty"}
    return {"ok": False, "why": (
        f"its volume {rep['volume']:.6g}, centroid, bounding box or footprint do not match the "
        f"design's cells at any of the {tried} parameter set(s) tried (a closed solid, but not the "
        "design's)")}


def export_geometry_checks(calls: list, design, stl_reports: dict, tid: str, caps=None) -> list:
    """The exported solid against the final design and the parameters the export reports
    (solid_fit).  A mismatch is REVIEW (the export may not be of this design, or the tool
    result misreports scale_xy/threshold/mirrored); the export is still counted for task
    completion.  An export that cannot be checked gets an INFO record saying why."""
    out = []
    for c in calls:
        res = c["result"]
        name = res.get("stl_path")
        if c["name"] != "convert_design_to_stl" or not succeeded(c) or not isinstance(name, str) \
                or name not in stl_reports:
            continue
        rep = stl_reports[name]
        s, thr, mir = as_number(res.get("scale_xy")), as_number(res.get("threshold")), res.get("mirrored")
        why = ("there is no valid design" if design is None else
               "it is not a closed solid of positive volume" if not rep["ok"] else
               "the tool result lacks a positive scale_xy, a numeric threshold or a boolean "
               "mirrored" if s is None or s <= 0 or thr is None or not isinstance(mir, bool) else None)
        if why is not None:
            out.append(Check(f"trial.{tid}.export_geometry", Status.INFO,
                             f"{name}: reported export parameters not checked against the design: "
                             f"{why}"))
            continue
        fits = [f for f in (solid_fit(rep, design, s, thr, mir, strict, (caps or {}).get(name))
                            for strict in (True, False))
                if f is not None]
        if not fits:
            out.append(Check(f"trial.{tid}.export_geometry", Status.INFO,
                             f"{name}: reported export parameters not checked: the design has no "
                             f"cell above threshold {thr:g}"))
        elif not any(fits):
            out.append(Check(f"trial.{tid}.export_geometry", Status.REVIEW,
                             f"{name}: volume {rep['volume']:.6g}, centroid "
                             f"({rep['centroid'][0]:.6g}, {rep['centroid'][1]:.6g}) and footprint do "
                             f"not match the final design's cells above threshold {thr:g} at "
                             f"scale_xy {s:g}, mirrored {mir} (the export may be of another design, "
                             "or the tool result misreports its parameters)"))
    return out


def distractor_check(got: dict, expected, tid: str) -> list:
    """Which of the two plausible values the export took: export, preview or neither."""
    d = expected.get("distractor") if isinstance(expected, dict) else None
    if not isinstance(d, dict) or d.get("param") not in ("scale_xy", "scale_z", "threshold"):
        raise Unscorable("workflow-distractor: expected.distractor {param, export_value, "
                         "preview_value} missing from the trial record")
    param = d["param"]
    ev, pv, v = as_number(d.get("export_value")), as_number(d.get("preview_value")), \
        as_number(got.get(param))
    if ev is None or pv is None:
        raise Unscorable("workflow-distractor: export_value/preview_value are not numbers")
    tol = SPEC["stl_param_tol"]
    took = "neither"
    if v is not None and abs(v - ev) < tol:
        took = "export"
    elif v is not None and abs(v - pv) < tol:
        took = "preview"
    source = "STL height" if param == "scale_z" and "scale_z_reported" in got else "tool result"
    return [Check(f"trial.{tid}.distractor", Status.INFO,
                  f"{param} = {v!r} ({source}): took the {took.upper()} value "
                  f"(export {ev:g}, preview {pv:g})", {"value": v, "took": took},
                  {"export": ev, "preview": pv})]


def array_digest(a) -> str:
    """sha256 of an array's content (shape and float64 values), whatever file held it."""
    import numpy as np
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    return hashlib.sha256(repr(a.shape).encode() + a.tobytes()).hexdigest()


def stl_content(units: list, reports: dict) -> list:
    """What the grader scores of a trial's STL files, for the duplicate check (issue 24): per
    unit (the files counted as one), whether it is unreadable, open, closed or the witnessed
    solid of the design (its cells and mirroring), with its numbers (scale_xy and height of a
    solid, height of any other readable file), sorted: a copy whose vertices moved by an ulp,
    renamed, re-listed or re-triangulated is the same content."""
    out = []
    for unit in units:
        reps = [reports[n] for n in unit if n in reports]
        wit = next((r for r in reps if r["ok"] and (r.get("witness") or {}).get("ok")), None)
        if wit is not None:
            cells, mir, s, z = wit["witness"]["solid"]
            out.append([["solid", cells, mir], [float(s), float(z)]])
        elif reps:
            z = reps[0].get("z_extent")
            out.append([["closed" if reps[0]["ok"] else "open"],
                        [float(z)] if isinstance(z, float) and math.isfinite(z) else []])
        else:
            out.append([["unreadable"], []])
    return sorted(out, key=lambda u: (repr(u[0]), [round(x, 6) for x in u[1]]))


def read_stl_set(names, tdir: str, run: "RunRefs", tid: str) -> tuple:
    """(reports {name: watertight_report}, caps {name: cap faces}, units, checks) of the STL
    files a trial lists, as a set by content (issue 24: a name listed nine times was averaged
    nine times): a name listed again is read once; names whose triangles are identical are one
    unit (read, analysed once); an unreadable name is a unit of its own (FAIL record).
    Watertightness is the fraction of units that witness the design."""
    import copy
    cid = f"trial.{tid}.stl"
    if not isinstance(names, list):
        return {}, {}, [], [Check(cid, Status.FAIL, "artefacts.stl must be a list")]
    if len(names) > SPEC["max_artefact_names"]:
        return {}, {}, [["\0refused"]], [Check(
            cid, Status.FAIL, f"artefacts.stl lists {len(names)} names (more than "
            f"{SPEC['max_artefact_names']}): not read, watertightness 0", len(names),
            SPEC["max_artefact_names"])]
    reports, caps, units, checks, listed = {}, {}, {}, [], set()
    repeated = 0
    for raw in names:
        ukey = ("name", raw) if isinstance(raw, str) else ("bad", short(raw, 60, as_repr=True))
        if ukey in listed:
            repeated += 1
            continue
        listed.add(ukey)
        try:
            tris = read_stl(safe_member(tdir, raw, cid), cid, run.budget)
        except Reject as exc:
            checks.append(exc.check)
            units[ukey] = [None]
            continue
        digest = array_digest(tris)
        if digest in units:
            first = units[digest][0]
            reports[raw] = dict(copy.deepcopy(reports[first]), witness=None)
            caps[raw] = caps[first]
            units[digest].append(raw)
            continue
        rep = watertight_report(tris)
        reports[raw], units[digest] = rep, [raw]
        caps[raw] = cap_faces(tris, rep) if rep["ok"] else None
    same = sum(len(u) - 1 for u in units.values())
    if repeated or same:
        checks.append(Check(f"trial.{tid}.stl_set", Status.INFO,
                            f"artefacts.stl lists {len(names)} name(s): {len(units)} distinct "
                            f"file(s) by content ({repeated} name(s) listed again, {same} file(s) "
                            "with the content of another): each counts once", len(units),
                            len(names)))
    return reports, caps, list(units.values()), checks


def score_design(rec: dict, calls: list, problem: str, style: str, tdir: str, run: "RunRefs",
                 tid: str, key: dict) -> tuple:
    """(terms, checks) for a design-optimization trial, against the harness manifest entry
    `key` (its example_id picks the ground truth, its expected metadata the export parameters)."""
    import numpy as np
    cfg = PROBLEMS[problem]
    checks = []
    ex = key["example_id"]
    gt_design, gt = run.ground_truth(problem, ex)
    arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
    # the agent's design: declared absent -> 0 (agent produced none); declared but bad (wrong
    # shape, non-finite, densities outside [0, 1]) -> FAIL, 0
    design = None
    if arts.get("design") is None:
        checks.append(Check(f"trial.{tid}.design", Status.INFO, "no design produced (artefacts.design "
                                                                 "is null): design terms 0"))
    else:
        try:
            design = read_h5_array(safe_member(tdir, SPEC["arrays_file"], f"trial.{tid}.design"),
                                   "design", f"trial.{tid}.design", shape=cfg["design_shape"],
                                   density=True, budget=run.budget)
            run.content.setdefault(tid, []).append(("design", design))
            checks.append(Check(f"trial.{tid}.design", Status.PASS,
                                f"design {cfg['design_shape']} finite, densities in [0, 1]"))
        except Reject as exc:
            checks.append(Check(exc.check.id, Status.FAIL, exc.check.message + ": design terms 0",
                                exc.check.measured, exc.check.limit))
    stl_reports, caps, stl_units, more = read_stl_set(arts.get("stl", []), tdir, run, tid)
    checks += more
    # watertight = a closed solid of positive volume that is the design's (the witness)
    for name, rep in stl_reports.items():
        if rep["ok"]:
            rep["witness"] = stl_witness(rep, design, [
                c["result"] for c in calls if c["name"] == "convert_design_to_stl" and succeeded(c)
                and c["result"].get("stl_path") == name], caps.get(name))
        checks.append(Check(f"trial.{tid}.stl", Status.INFO, f"{name}: {describe_watertight(rep)}",
                            rep))
    # each distinct file counts once, for its content: a unit is the names sharing one content
    # (or one unreadable name); it is watertight when one of its names witnesses the design
    # files that witness one and the same solid of the design are one unit too (a copy with a
    # vertex moved by an ulp is other bytes, but not another export)
    merged, by_solid = [], {}
    for unit in stl_units:
        solid = next((stl_reports[n]["witness"]["solid"] for n in unit if n in stl_reports
                      and stl_reports[n]["ok"] and stl_reports[n]["witness"]["ok"]), None)
        if solid is not None and solid in by_solid:
            by_solid[solid].extend(unit)
            continue
        merged.append(list(unit))
        if solid is not None:
            by_solid[solid] = merged[-1]
    if len(merged) < len(stl_units):
        checks.append(Check(f"trial.{tid}.stl_solids", Status.INFO,
                            f"{len(stl_units)} distinct file(s) are {len(merged)} distinct solid(s) "
                            "(files witnessing the same cells at the same scale, mirroring and "
                            "height count once)", len(merged), len(stl_units)))
    stl_units = merged
    run.content.setdefault(tid, []).append(("stl", stl_content(stl_units, stl_reports)))
    watertight = (float(np.mean([any(n in stl_reports and stl_reports[n]["ok"] and
                                     stl_reports[n]["witness"]["ok"] for n in unit)
                                 for unit in stl_units])) if stl_units else 0.0)
    if not stl_units:
        checks.append(Check(f"trial.{tid}.stl", Status.INFO, "no STL exported: watertightness 0"))
    sims = [c for c in calls if c["name"] == "simulate_design" and succeeded(c)]
    agent_obj = sims[-1]["result"].get("objectives", {}) if sims else {}
    if design is None:
        dq = {"iou": 0.0, "pixel_accuracy": 0.0, "objective_match": 0.0, "constraint_match": 0.0,
              "connectivity": 0.0}
    else:
        om, _ = objective_match(agent_obj, gt, cfg["objectives"])
        dq = {"iou": iou(design, gt_design), "pixel_accuracy": pixel_accuracy(design, gt_design),
              "objective_match": om, "constraint_match": constraint_match(design, gt, cfg["constraints"]),
              "connectivity": connectivity(design)}
    dq["watertightness"] = watertight
    terms = dict(dq)
    terms["design_quality"] = weighted(cfg["design_weights"], dq)
    optimal = cfg["optimal"][style]
    terms["tool_efficiency"] = tool_efficiency(calls, optimal)
    checks += optimal_count_check(rec, optimal, tid)
    tc, tc_checks = task_completion(style, calls, key.get("expected"), gt, stl_reports, tid)
    terms["task_completion"] = tc
    checks += tc_checks + export_geometry_checks(calls, design, stl_reports, tid, caps)
    terms["overall"] = weighted(cfg["weights"], terms)
    if design is not None:     # for the run's cross-trial copy check (design_copy_checks)
        run.designs[tid] = {"problem": problem, "example": ex, "design": design,
                            "optimized": any(c["name"] == "optimize_design" and succeeded(c)
                                             for c in calls)}
    return terms, checks


def design_copy_checks(trials: list, run: "RunRefs", checks: list) -> list:
    """Designs that are near-copies where no prompt style allows one (TRIAL_FORMAT.md decision
    19): no style hands the agent a ground-truth design, and every style's design must come
    from the agent's own optimize_design.  A scored design trial is held for review when its
    design (raw values or binarised) lies nearer than copy_distance_frac of the spacing between
    the two ground truths involved to
      - the ground truth of another example of its problem (a copy from the dataset);
      - the design of a trial of another example (a copied trial design; of the two, the one
        that fits its own ground truth worse is the copy, both on a tie);
      - its own example's ground truth while the trace has no successful optimize_design (the
        design did not come from the agent's optimization; spacing: its ground truth's nearest
        other ground truth, or its distance to the empty design when it is the only one).
    design_quality is then not credited (0, the value kept as design_quality_if_cleared) and
    the trial's score record in `checks` is replaced by the reduced one.  Returns the REVIEW
    records."""
    import numpy as np
    from scipy.spatial.distance import cdist
    frac = SPEC["copy_distance_frac"]
    scored = {t.trial_id: t for t in trials if t.status == "scored"}
    reasons = {}
    by_problem = {}
    for tid, e in run.designs.items():
        if tid in scored:
            by_problem.setdefault(e["problem"], []).append((tid, e))
    out = []
    for problem, entries in sorted(by_problem.items()):
        gts, every = run.all_ground_truths(problem, {e["example"] for _, e in entries})
        if not every:
            out.append(Check(f"run.design_copies.{problem}", Status.INFO,
                             f"more than {SPEC['copy_max_ground_truths']} ground truths of {problem}: "
                             "designs compared with the run's own examples' only"))
        exs = sorted(gts)
        gi = {ex: i for i, ex in enumerate(exs)}
        if any(e["example"] not in gi for _, e in entries):
            continue                  # cannot happen for a scored trial; nothing to compare with
        dsp = copy_spaces(np.stack([e["design"] for _, e in entries]))
        gsp = copy_spaces(np.stack([gts[ex] for ex in exs]))
        dd = {k: cdist(dsp[k], dsp[k]) for k in dsp}        # design - design
        dg = {k: cdist(dsp[k], gsp[k]) for k in dsp}        # design - ground truth
        gg = {k: cdist(gsp[k], gsp[k]) for k in gsp}        # ground truth - ground truth
        g0 = {k: np.linalg.norm(gsp[k], axis=1) for k in gsp}   # ground truth - empty design

        def near(dist, spacing):
            return any(spacing[k] > 0 and dist[k] < frac * spacing[k] for k in dist)
        for a, (tid, e) in enumerate(entries):
            own = gi[e["example"]]
            for ex in exs:
                j = gi[ex]
                if j != own and near({k: dg[k][a, j] for k in dg}, {k: gg[k][own, j] for k in gg}):
                    reasons.setdefault(tid, []).append(
                        f"a near-copy of the ground truth of example {ex}")
            if not e["optimized"]:
                spacing = {}
                for k in gg:
                    others = gg[k][own][gg[k][own] > 0]
                    spacing[k] = float(others.min()) if others.size else float(g0[k][own])
                if near({k: dg[k][a, own] for k in dg}, spacing):
                    reasons.setdefault(tid, []).append(
                        "a near-copy of its example's ground truth, while the trace shows no "
                        "successful optimize_design (no prompt style hands the agent the ground "
                        "truth)")
            for b in range(a + 1, len(entries)):
                tb, eb = entries[b]
                ob = gi[eb["example"]]
                if ob == own or not near({k: dd[k][a, b] for k in dd},
                                         {k: gg[k][own, ob] for k in gg}):
                    continue
                fa, fb = dg["raw"][a, own], dg["raw"][b, ob]
                for x, y, ey in ((tid, tb, eb["example"]), (tb, tid, e["example"])):
                    if (fa >= fb) if x == tid else (fb >= fa):
                        reasons.setdefault(x, []).append(
                            f"a near-copy of the design of trial {y} (example {ey}), and it fits "
                            "its own ground truth no better than that one fits its own")
    for tid in sorted(reasons):
        t = scored[tid]
        before = t.score
        t.terms["design_quality_if_cleared"] = t.terms["design_quality"]
        t.terms["design_quality"] = 0.0
        t.terms["overall"] = t.score = weighted(PROBLEMS[t.problem]["weights"], t.terms)
        for i, c in enumerate(checks):
            if c.id == f"trial.{tid}.score":
                checks[i] = Check(c.id, c.status, f"{t.score:.4f} (design_quality not credited "
                                  f"until reviewed; {before:.4f} if cleared)", t.score)
        out.append(Check(f"trial.{tid}.design_copy", Status.REVIEW,
                         f"the design is {'; '.join(reasons[tid][:3])} (nearer than {frac:g} of the "
                         f"spacing between the ground truths involved): design_quality not credited "
                         f"until a reviewer clears it (score {before:.4f} -> {t.score:.4f})",
                         len(reasons[tid]), 0))
    return out


