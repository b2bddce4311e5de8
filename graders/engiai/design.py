"""SCORING (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import math
from graders.engiai.families import Unscorable
from graders.engiai.guarded import as_number
from graders.engiai.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SCORING: design optimization (IoU, pixel accuracy, objective, constraint,
# connectivity, watertightness)
# =============================================================================
def binarize(design):
    return design > SPEC["binarize_at"]


def iou(a, b) -> float:
    """|A and B| / |A or B| of binarised designs; both empty -> 1.0 (identical; decided)."""
    import numpy as np
    a, b = binarize(a), binarize(b)
    union = int(np.logical_or(a, b).sum())
    return 1.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def pixel_accuracy(a, b) -> float:
    import numpy as np
    return float(np.mean(binarize(a) == binarize(b)))


def connectivity(design) -> float:
    """1.0 when the binarised design is exactly one 8-connected component."""
    import numpy as np
    from scipy import ndimage
    _, n = ndimage.label(binarize(design), structure=np.ones((3, 3), dtype=int))
    return 1.0 if n == 1 else 0.0


def objective_match(agent: dict, target: dict, objectives: tuple) -> tuple:
    """(score, per-objective detail): sum w*max(0, 1 - relerr/thr) / sum w; absolute error
    when the target is 0; a missing agent value scores 0; a missing target is Unscorable."""
    if not objectives:
        return 1.0, {}
    total, wsum, detail = 0.0, 0.0, {}
    for name, thr, w in objectives:
        t = target.get(name)
        if t is None:
            raise Unscorable(f"ground truth lacks objective {name}")
        a = as_number(agent.get(name)) if isinstance(agent, dict) else None
        if a is None:
            s = 0.0
        else:
            err = abs(a - t) / abs(t) if t != 0 else abs(a - t)
            s = max(0.0, 1.0 - err / thr)
        detail[name] = s
        total += w * s
        wsum += w
    return total / wsum, detail


def constraint_match(design, target: dict, constraints: tuple) -> float:
    """mean of exp(-|mean(design) - target| / tol); no constraint -> 1.0 (nothing violated)."""
    import numpy as np
    if not constraints:
        return 1.0
    vals = []
    for name, tol in constraints:
        t = target.get(name)
        if t is None:
            raise Unscorable(f"ground truth lacks condition {name}")
        vals.append(math.exp(-abs(float(np.mean(design)) - t) / tol))
    return float(np.mean(vals))


def weld_vertices(v, tol: float) -> tuple:
    """(vertex id per row of v, number of near-coincident vertices merged).  Rows with equal
    coordinates are one vertex; then vertices are merged when they share a cell of any of the
    8 grids of spacing tol shifted by 0 or tol/2 per axis: two vertices closer than tol/2 on
    every axis always merge, two farther than tol on some axis never do directly.  Deterministic,
    linear in memory (no pairwise search).  With tol = stl_weld_rel_tol * scale and
    |v| <= scale, the three cell indices pack into one int64 key."""
    import itertools
    import numpy as np
    order = np.lexsort((v[:, 2], v[:, 1], v[:, 0]))          # exact weld: sort rows, mark changes
    sv = v[order]
    new = np.concatenate([[True], np.any(sv[1:] != sv[:-1], axis=1)])
    ids = np.empty(len(v), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    uniq = sv[new]
    n = len(uniq)
    if not tol > 0 or n < 2:
        return ids, 0
    q = uniq / tol
    bound = int(np.ceil(np.abs(q).max())) + 2                # cell indices lie in [-bound, bound]
    if (2 * bound + 1) ** 3 >= 2 ** 62:      # unreachable with the caller's tol; exact weld only
        return ids, 0
    src, dst, idx = [], [], np.arange(n)
    for shift in itertools.product((0.0, 0.5), repeat=3):
        k = np.floor(q + np.asarray(shift)).astype(np.int64) + bound
        key = (k[:, 0] * (2 * bound + 1) + k[:, 1]) * (2 * bound + 1) + k[:, 2]
        _, first, cell = np.unique(key, return_index=True, return_inverse=True)
        rep = first[cell.reshape(-1)]
        shared = rep != idx
        src.append(idx[shared])
        dst.append(rep[shared])
    src, dst = np.concatenate(src), np.concatenate(dst)
    if src.size == 0:
        return ids, 0
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    graph = coo_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(n, n))
    count, label = connected_components(graph, directed=False)
    return label[ids].astype(np.int64), n - int(count)


def watertight_report(tris) -> dict:
    """The STL as a closed solid: every edge shared by exactly two triangles with opposite
    orientation, no degenerate triangle (two corners welded, or a corner within the weld
    tolerance of the line through the other two: zero area), no face used twice (a doubled face,
    or a triangle and its reverse: a two-sided sheet), and a positive enclosed volume (outward
    orientation; an inside-out mesh has negative volume).  Vertices are welded on equal
    coordinates and, against float noise, within stl_weld_rel_tol of the mesh scale (max of the
    bounding-box diagonal and the largest |coordinate|).  `closed` is the topology verdict,
    `ok` adds the volume; whether the solid is the design's (the volume/centroid witness) is
    decided by stl_witness, which needs the design."""
    import numpy as np
    n = tris.shape[0]
    v = tris.reshape(-1, 3)
    lo, hi = v.min(axis=0), v.max(axis=0)
    scale = max(float(np.linalg.norm(hi - lo)), float(np.abs(v).max()))
    tol = SPEC["stl_weld_rel_tol"] * scale
    inv, welded = weld_vertices(v, tol)
    f = inv.reshape(n, 3)
    nv = int(inv.max()) + 1
    # degenerate: two corners welded, or the triangle's height over its longest edge <= tol
    cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    longest = np.max(np.linalg.norm(tris - np.roll(tris, 1, axis=1), axis=2), axis=1)
    height = np.linalg.norm(cross, axis=1) / np.where(longest > 0, longest, 1.0)
    degenerate = int(np.sum((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2]) |
                            (height <= tol)))
    # doubled faces: the same three vertices in more than one triangle, whatever the order
    _, fcount = np.unique(np.sort(f, axis=1), axis=0, return_counts=True)
    doubled = int(fcount[fcount > 1].sum())
    a = np.concatenate([f[:, 0], f[:, 1], f[:, 2]])
    b = np.concatenate([f[:, 1], f[:, 2], f[:, 0]])
    _, ucount = np.unique(np.minimum(a, b) * nv + np.maximum(a, b), return_counts=True)
    _, dcount = np.unique(a * nv + b, return_counts=True)
    boundary = int(np.sum(ucount == 1))
    nonmanifold = int(np.sum(ucount > 2))
    # with every undirected edge used twice, a repeated directed edge means same orientation
    misoriented = int(np.sum(dcount > 1))
    closed = degenerate == 0 and boundary == 0 and nonmanifold == 0 and misoriented == 0 and \
        doubled == 0
    # enclosed volume and its centroid (tetrahedra from the origin; meaningful when closed)
    six_vol = np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2]))
    volume = float(six_vol.sum()) / 6.0
    centroid = ([float(c) for c in (six_vol @ tris.sum(axis=1)) / (24.0 * volume)]
                if volume != 0.0 else None)
    # a closed surface encloses positive volume when outward-oriented; a solid whose mean
    # thickness (2 V / area) is within the weld tolerance is no solid (a sheet, a flattened box)
    vol_floor = 0.5 * float(np.linalg.norm(cross, axis=1).sum()) * tol
    inside_out = closed and volume < -vol_floor
    zero_volume = closed and abs(volume) <= vol_floor
    # shells (vertex-connected pieces): an extruded design's every piece spans the full height;
    # a shell that does not (a floating box, an internal cavity) is no part of an extrusion
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n_shells, shell = connected_components(coo_matrix(
        (np.ones(a.size, dtype=np.int8), (a, b)), shape=(nv, nv)), directed=False)
    z = v[:, 2]
    zlo = np.full(n_shells, np.inf)
    zhi = np.full(n_shells, -np.inf)
    np.minimum.at(zlo, shell[inv], z)
    np.maximum.at(zhi, shell[inv], z)
    used = np.isfinite(zlo)
    partial = int(np.sum(used & ((zlo > z.min() + tol) | (zhi < z.max() - tol))))
    return {"ok": closed and volume > vol_floor, "closed": closed, "triangles": n,
            "edges": int(ucount.size), "boundary_edges": boundary,
            "nonmanifold_edges": nonmanifold, "misoriented_edges": misoriented,
            "degenerate_triangles": degenerate, "doubled_faces": doubled,
            "inside_out": bool(inside_out), "zero_volume": bool(zero_volume),
            "shells": int(used.sum()), "partial_shells": partial,
            "welded_within_tol": welded, "weld_tol": tol,
            "z_extent": float(tris[..., 2].max() - tris[..., 2].min()),
            "bbox": [[float(x) for x in lo], [float(x) for x in hi]],
            "volume": volume, "centroid": centroid, "scale": scale, "witness": None}


def describe_watertight(rep: dict) -> str:
    noise = (f"; {rep['welded_within_tol']} near-coincident vertices welded within "
             f"{rep['weld_tol']:.3g}" if rep["welded_within_tol"] else "")
    if rep["ok"]:
        head = (f"closed solid ({rep['triangles']} triangles, {rep['edges']} edges, each shared "
                f"by 2, volume {rep['volume']:.6g}{noise})")
    elif rep["closed"]:
        what = "inside-out (negative enclosed volume)" if rep["inside_out"] else \
            "encloses no volume"
        return (f"not watertight: edge-closed but {what}: volume {rep['volume']:.6g} "
                f"({rep['triangles']} triangles; volume/centroid witness not computed)")
    else:
        bits = [f"{rep[k]} {k.replace('_', ' ')}" for k in
                ("boundary_edges", "nonmanifold_edges", "misoriented_edges", "degenerate_triangles",
                 "doubled_faces") if rep[k]]
        return ("not watertight: " + ", ".join(bits) +
                " (volume/centroid witness not computed: not a closed surface)")
    w = rep.get("witness")
    if w is None:
        return head
    return (f"watertight: {head}; {w['why']}" if w["ok"] else
            f"not watertight: {head}, but {w['why']}")


