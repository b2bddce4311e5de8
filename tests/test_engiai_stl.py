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
