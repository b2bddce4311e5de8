"""EngiAI issue 16, item 2: watertight means a closed solid of the design.  Edge-manifold with
consistent orientation, no degenerate triangle, no doubled face, positive enclosed volume, and
the volume/centroid/footprint witness of the design's solid cells; the witness is never skipped
without a record saying why.  Honest meshes with another triangulation keep passing."""
import numpy as np
import pytest

from test_engiai_support import B, G, edit_record, gold, run  # noqa: F401
from test_engiai_support import grade_run as grade

TID = "beams2d-full"


def stl_record(checks, tid=TID):
    (c,) = [c for c in checks if c.id == f"trial.{tid}.stl"]
    return c


def write(run_dir, tris, name="design.stl"):
    B.write_stl_binary(str(run_dir / "trials" / TID / name), np.asarray(tris, dtype=np.float32))


def per_cell_mesh(mask, s=1.0, h=1.0):
    """An honest exporter with another triangulation: one quad per cell face (no merging),
    each split along the other diagonal; walls only where a solid cell meets empty space."""
    m = np.asarray(mask, dtype=bool)
    rows, cols = m.shape
    tris = []

    def quad(a, b, c, d):                    # a b c d counter-clockwise seen from outside
        tris.append((a, b, d))
        tris.append((b, c, d))

    def solid(i, j):
        return 0 <= i < rows and 0 <= j < cols and m[i, j]
    for i in range(rows):
        for j in range(cols):
            if not m[i, j]:
                continue
            x0, x1, y0, y1 = j * s, (j + 1) * s, i * s, (i + 1) * s
            quad((x0, y0, h), (x1, y0, h), (x1, y1, h), (x0, y1, h))
            quad((x0, y0, 0), (x0, y1, 0), (x1, y1, 0), (x1, y0, 0))
            if not solid(i, j + 1):
                quad((x1, y0, 0), (x1, y1, 0), (x1, y1, h), (x1, y0, h))
            if not solid(i, j - 1):
                quad((x0, y0, 0), (x0, y0, h), (x0, y1, h), (x0, y1, 0))
            if not solid(i + 1, j):
                quad((x0, y1, 0), (x0, y1, h), (x1, y1, h), (x1, y1, 0))
            if not solid(i - 1, j):
                quad((x0, y0, 0), (x1, y0, 0), (x1, y0, h), (x0, y0, h))
    return np.asarray(tris, dtype=np.float64)


def box(x0, x1, y0, y1, z0, z1):
    return per_cell_mesh(np.ones((1, 1), bool), 1.0, 1.0) * [x1 - x0, y1 - y0, z1 - z0] + [x0, y0, z0]


def test_the_genuine_exports_stay_watertight(gold):
    checks, trials, _ = grade(gold)
    c = stl_record(checks)
    assert c.message.startswith("design.stl: watertight: closed solid (204 triangles")
    assert "volume, x/y centroid and footprint are those of the design's" in c.message
    assert trials[TID].terms["watertightness"] == 1.0
    assert trials["photonics2d-multi"].terms["watertightness"] == 1.0


def test_an_honest_mesh_with_another_triangulation_is_watertight(run):
    write(run, per_cell_mesh(B.beam()))
    checks, trials, _ = grade(run)
    rep = stl_record(checks).measured
    assert rep["triangles"] > 204 and rep["ok"] and rep["witness"]["ok"]
    assert trials[TID].terms["watertightness"] == 1.0


@pytest.mark.parametrize("make,needle", [
    # the issue's two-triangle file: a triangle and the same triangle reversed
    (lambda t: np.array([[[0, 0, 0], [100, 0, 1], [0, 50, 1]], [[0, 0, 0], [0, 50, 1], [100, 0, 1]]]),
     "2 doubled faces"),
    (lambda t: np.concatenate([t, t[:, ::-1]]), "doubled faces"),          # mesh + its reverse
    (lambda t: t[:, ::-1], "inside-out"),                                   # every face reversed
    (lambda t: np.concatenate([t, [[[0, 0, 0], [1, 0, 0], [2, 0, 0]]]]), "degenerate"),
    (lambda t: np.concatenate([t, t]), "misoriented edges"),                # every face twice
    (lambda t: t * [1, 1, 2e-3], "encloses no volume"),    # flattened to 2x the weld tolerance
])
def test_sheets_doubled_degenerate_and_inside_out_meshes_fail_with_the_reason(run, make, needle):
    write(run, make(B.mesh(B.beam()).astype(np.float64)))
    checks, trials, _ = grade(run)
    c = stl_record(checks)
    assert "not watertight" in c.message and needle in c.message, c.message
    assert "witness not computed" in c.message
    assert trials[TID].terms["watertightness"] == 0.0


def ring():
    """A 32-triangle rectangular frame with beam()'s bounding box, cell count (1960) and
    centroid (50, 25): volume, centroid and bounding box all agree; only the footprint does not."""
    w = (300 - np.sqrt(300 ** 2 - 16 * 1960)) / 8
    m = np.ones((3, 3), bool)
    m[1, 1] = False
    t = B.mesh(m).astype(np.float64)
    for axis, lines in ((0, (0, w, 100 - w, 100)), (1, (0, w, 50 - w, 50))):
        t[..., axis] = np.asarray(lines)[np.rint(t[..., axis]).astype(int)]
    return t


@pytest.mark.parametrize("tris", [
    ring(),                                          # right volume, centroid and bounding box
    box(0, 1, 0, 1, 0, 1),                           # a tiny closed solid with the right z extent
    box(0, 100, 0, 50, 0, 1),                        # the design's bounding box, filled
    B.mesh(B.beam(webs=(15, 50, 85))),               # another design, same z extent
])
def test_a_closed_solid_that_is_not_the_designs_is_not_credited(run, tris):
    write(run, tris)
    checks, trials, _ = grade(run)
    c = stl_record(checks)
    assert c.message.startswith("design.stl: not watertight: closed solid")
    assert "footprint do not match the design's cells" in c.message
    assert trials[TID].terms["watertightness"] == 0.0


def test_no_design_means_no_witness_and_the_record_says_why(run):
    edit_record(run, TID, lambda r: r["artefacts"].update(design=None))
    checks, trials, _ = grade(run)
    c = stl_record(checks)
    assert "no valid design to witness it against" in c.message
    assert trials[TID].terms["watertightness"] == 0.0


def test_export_with_unreported_parameters_records_why_it_was_not_checked(run):
    def drop(r):
        for c in r["tool_calls"]:
            if c["name"] == "convert_design_to_stl":
                del c["result"]["mirrored"]
    edit_record(run, "beams2d-workflow-random", drop)
    checks, trials, _ = grade(run)
    (g,) = [c for c in checks if c.id == "trial.beams2d-workflow-random.export_geometry"]
    assert g.status is G.Status.INFO and "lacks" in g.message
    # the watertight witness still finds the design's solid (mirroring tried both ways)
    assert trials["beams2d-workflow-random"].terms["watertightness"] == 1.0


def test_watertight_report_fields_for_the_issue_sheet():
    sheet = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 1, 0], [1, 0, 0]]], float)
    rep = G.watertight_report(sheet)
    assert rep["boundary_edges"] == rep["misoriented_edges"] == 0       # what used to pass
    assert rep["doubled_faces"] == 2 and not rep["closed"] and not rep["ok"]
    cube = box(0, 1, 0, 1, 0, 1)
    rep = G.watertight_report(cube)
    assert rep["ok"] and rep["volume"] == pytest.approx(1.0)
    rep = G.watertight_report(cube[:, ::-1])
    assert rep["closed"] and rep["inside_out"] and not rep["ok"]
