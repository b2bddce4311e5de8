"""EngiAI watertightness from the STL itself: binary and ASCII, closed box, open box, per-cell cubes."""
import struct
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "reference" / "engiai"))
import grade_engiai as G  # noqa: E402
import build_engiai_run as B  # noqa: E402


def box(x0=0.0, y0=0.0, z0=0.0, x1=1.0, y1=1.0, z1=1.0):
    """12 outward-oriented triangles of an axis-aligned box (hand-written, not the mesher)."""
    v = {(i, j, k): (x1 if i else x0, y1 if j else y0, z1 if k else z0)
         for i in (0, 1) for j in (0, 1) for k in (0, 1)}
    quads = [((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)),   # top +z
             ((0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)),   # bottom -z
             ((1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)),   # +x
             ((0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)),   # -x
             ((0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)),   # +y
             ((0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1))]   # -y
    tris = []
    for a, b, c, d in quads:
        tris += [(v[a], v[b], v[c]), (v[a], v[c], v[d])]
    return np.asarray(tris, dtype=np.float32)


def report_of(tmp_path, tris, ascii_=False):
    path = tmp_path / ("t_ascii.stl" if ascii_ else "t.stl")
    (B.write_stl_ascii if ascii_ else B.write_stl_binary)(str(path), tris)
    return G.watertight_report(G.read_stl(str(path), "stl"))


@pytest.mark.parametrize("ascii_", [False, True])
def test_closed_box_is_watertight(tmp_path, ascii_):
    rep = report_of(tmp_path, box(), ascii_)
    assert rep["ok"] and rep["triangles"] == 12 and rep["edges"] == 18


@pytest.mark.parametrize("ascii_", [False, True])
def test_open_box_fails(tmp_path, ascii_):
    rep = report_of(tmp_path, box()[2:], ascii_)          # the top face removed
    assert not rep["ok"] and rep["boundary_edges"] == 4   # the rim of the missing face


@pytest.mark.parametrize("ascii_", [False, True])
def test_per_cell_cubes_sharing_a_face_fail(tmp_path, ascii_):
    two = np.concatenate([box(0, 0, 0, 1, 1, 1), box(1, 0, 0, 2, 1, 1)])
    rep = report_of(tmp_path, two, ascii_)
    assert not rep["ok"]
    # the shared face's four rim edges (two triangles from each cube) and its diagonal (both
    # cubes split that face along the same diagonal) are each used by four triangles
    assert rep["nonmanifold_edges"] == 5


def test_per_cell_cubes_of_a_design_fail_but_its_surface_passes(tmp_path):
    mask = np.zeros((3, 4), dtype=np.uint8)
    mask[1, :] = 1
    mask[:, 1] = 1
    cubes = np.concatenate([box(j, i, 0, j + 1, i + 1, 1) for i, j in zip(*np.nonzero(mask))])
    assert not report_of(tmp_path, cubes)["ok"]
    assert report_of(tmp_path, B.mesh(mask))["ok"]


def test_flipped_triangle_is_misoriented(tmp_path):
    t = box()
    t[0] = t[0][[0, 2, 1]]
    rep = report_of(tmp_path, t)
    assert not rep["ok"] and rep["misoriented_edges"] > 0


def test_two_disjoint_closed_boxes_pass(tmp_path):
    assert report_of(tmp_path, np.concatenate([box(), box(3, 3, 3, 4, 4, 4)]))["ok"]


def test_height_is_measured(tmp_path):
    assert report_of(tmp_path, box(z1=7.5))["z_extent"] == pytest.approx(7.5)


# ---------------------------------------------------------------- malformed STL -> Reject
def write(tmp_path, data: bytes):
    p = tmp_path / "bad.stl"
    p.write_bytes(data)
    return str(p)


@pytest.mark.parametrize("data,needle", [
    (b"", "neither"),
    (b"\x00" * 80 + struct.pack("<I", 3) + b"\x00" * 20, "neither"),            # truncated binary
    (b"\x00" * 80 + struct.pack("<I", 0), "no triangles"),
    (b"solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0\n", "malformed"),
    (b"solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 0\n vertex 1 0 0\n vertex 0 1 nan\n"
     b" endloop\n endfacet\nendsolid x\n", "non-finite"),
    (b"hello world", "no leading 'solid'"),
    (b"\xff\xfe\x00garbage", "neither"),
])
def test_malformed_stl_is_a_clean_reject(tmp_path, data, needle):
    with pytest.raises(G.Reject) as exc:
        G.read_stl(write(tmp_path, data), "stl")
    assert needle in exc.value.check.message
    assert exc.value.check.status is G.Status.FAIL


def test_binary_with_nan_vertex_rejected(tmp_path):
    t = box()
    t[3, 1, 2] = np.nan
    p = tmp_path / "nan.stl"
    B.write_stl_binary(str(p), t)
    with pytest.raises(G.Reject, match="non-finite"):
        G.read_stl(str(p), "stl")


# ---------------------------------------------------------------- vertex welding (float noise)
def test_float_noise_on_shared_vertices_is_welded(tmp_path):
    """Regression: vertices were welded on exact coordinates only, so an exporter that computes a
    shared corner twice with a few ulps of difference made a closed box read as leaky."""
    rng = np.random.default_rng(3)
    t = box().astype(np.float64)
    t += rng.uniform(-2e-6, 2e-6, t.shape)            # each copy of each corner moved independently
    rep = report_of(tmp_path, t.astype(np.float32))
    assert rep["ok"], rep
    assert rep["welded_within_tol"] > 0
    assert "near-coincident vertices welded" in G.describe_watertight(rep)


@pytest.mark.parametrize("shift,ok", [(1e-6, True), (1e-4, False), (1e-2, False)])
def test_a_real_gap_is_not_welded(tmp_path, shift, ok):
    """One corner copy moved by shift * (box size): below the tolerance (1e-5 of the scale) it
    is noise, above it a gap, and the box leaks."""
    t = box(0, 0, 0, 100, 50, 12).astype(np.float64)
    t[0, 0] += shift * 100.0 * np.array([1.0, 0.0, 0.0])
    rep = G.watertight_report(t)
    assert rep["ok"] is ok, rep
    if not ok:
        assert rep["boundary_edges"] > 0


def test_weld_merges_across_a_grid_line_and_not_beyond_tol():
    v = np.array([[-1e-9, 0.0, 0.0], [1e-9, 0.0, 0.0],     # straddle the cell boundary at 0
                  [0.5, 0.5, 0.5], [0.5 + 2e-3, 0.5, 0.5],  # 2 tol apart: distinct
                  [0.5, 0.5, 0.5]])                         # exact copy of row 2
    ids, merged = G.weld_vertices(v, 1e-3)
    assert ids[0] == ids[1] and ids[2] == ids[4] and ids[2] != ids[3]
    assert merged == 1 and len(set(ids.tolist())) == 3


def test_triangle_smaller_than_the_tolerance_is_degenerate():
    t = np.concatenate([box(0, 0, 0, 100, 100, 100),
                        np.array([[[50, 50, 200], [50 + 1e-6, 50, 200], [50, 50 + 1e-6, 200]]],
                                 dtype=np.float32)])
    rep = G.watertight_report(t.astype(np.float64))
    assert not rep["ok"] and rep["degenerate_triangles"] == 1


# ---------------------------------------------------------------- ASCII variants, binary counts
ONE = ("facet normal 0 0 1 outer loop vertex {} vertex {} vertex {} endloop endfacet")


def ascii_box(sep_line="\n", upper=False, one_line=False, two_solids=False):
    facets = []
    for tri in box():
        verts = [" ".join(repr(float(c)) for c in v) for v in tri]
        facets.append(ONE.format(*verts))
    if two_solids:
        body = ("solid a" + sep_line + sep_line.join(facets[:6]) + sep_line + "endsolid a"
                + sep_line + "solid b" + sep_line + sep_line.join(facets[6:]) + sep_line
                + "endsolid b")
    else:
        body = "solid my part" + sep_line + sep_line.join(facets) + sep_line + "endsolid my part"
    if one_line:
        body = body.replace(sep_line, " ")
    return (body.upper() if upper else body).replace("\n", sep_line)


@pytest.mark.parametrize("kw", [dict(sep_line="\r\n"), dict(sep_line="\n\t  \t"),
                                dict(upper=True), dict(one_line=True), dict(two_solids=True)])
def test_ascii_with_odd_whitespace_case_and_layout_parses(tmp_path, kw):
    p = tmp_path / "odd.stl"
    p.write_text(ascii_box(**kw))
    tris = G.read_stl(str(p), "stl")
    np.testing.assert_array_equal(tris, box().astype(np.float64))
    assert G.watertight_report(tris)["ok"]


@pytest.mark.parametrize("body,needle", [
    ("solid a\n" + ONE.format("0 0 0", "1 0 0", "0 1 0") + "\njunk\n" + ONE.format("0 0 0", "1 0 0", "0 1 0")
     + "\nendsolid a\n", "unexpected 'junk'"),
    ("solid a\n" + ONE.replace("endloop", "vertex 1 1 1 endloop").format("0 0 0", "1 0 0", "0 1 0")
     + "\nendsolid a\n", "unexpected 'facet'"),
    ("solid a\n" + ONE.format("0 0 0", "1 0 0", "0 1 zz") + "\nendsolid a\n", "coordinate 'zz'"),
])
def test_ascii_structure_errors_name_the_token(tmp_path, body, needle):
    p = tmp_path / "bad.stl"
    p.write_text(body)
    with pytest.raises(G.Reject, match=needle):
        G.read_stl(str(p), "stl")


def test_binary_with_a_lying_facet_count_is_rejected_with_the_count(tmp_path):
    p = tmp_path / "lie.stl"
    B.write_stl_binary(str(p), box())
    data = bytearray(p.read_bytes())
    data[0] = 0xFF                                     # a non-ASCII header byte, as exporters write
    data[80:84] = struct.pack("<I", 13)                # 12 facets written, 13 declared
    p.write_bytes(bytes(data))
    with pytest.raises(G.Reject, match="declares 13 facets .* has 684 bytes"):
        G.read_stl(str(p), "stl")


def test_binary_whose_header_says_solid_is_read_as_binary(tmp_path):
    p = tmp_path / "hdr.stl"
    B.write_stl_binary(str(p), box())
    data = bytearray(p.read_bytes())
    data[:12] = b"solid binary"
    p.write_bytes(bytes(data))
    assert G.watertight_report(G.read_stl(str(p), "stl"))["ok"]


def test_huge_ascii_name_is_read_in_bounded_memory(tmp_path):
    """Regression: the ASCII parser split the whole file into a token list first (about 1 GB
    for a 64 MiB file of short tokens); the streaming parser rejects this one cleanly."""
    import tracemalloc
    p = tmp_path / "names.stl"
    p.write_bytes(b"solid " + b"ab " * 2_000_000 + b"facet normal 0 0 1\n")   # 6 MB
    tracemalloc.start()
    try:
        with pytest.raises(G.Reject, match="unexpected 'facet'"):
            G.read_stl(str(p), "stl")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * p.stat().st_size, peak          # the file itself, not a token per word
