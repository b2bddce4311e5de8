#!/usr/bin/env python3
"""(Re)build the bundled sample EngiAI run, deterministically.

    python reference/engiai/build_engiai_run.py [OUT_DIR]   # default: reference/engiai/sample_run

The run follows TRIAL_FORMAT.md: OUT_DIR/reference.h5 (ground truth and MMD baselines) and
OUT_DIR/trials/<trial_id>/ (trial.json, arrays.h5, STL files, training_script.py).  It covers
every family and the edge cases: a distractor trial that took the preview value, a training-code
trial with no baseline (UNSCORABLE), a thermoelastic2d trial (unsupported by the agent's
tools), a leaky STL, an ASCII STL, a RAG trial that guessed without calling the RAG tool, and
claimed scores that disagree with the recomputed ones.

Everything is built from fixed shapes and one seeded generator; HDF5 datasets are written
without timestamps, so a rebuild gives byte-identical files.  This script does not import the
grader: the STL exporter, the designs and the claimed scores are its own.
"""
import json
import os
import shutil
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT = "engiai-trial/1"


# ---------------------------------------------------------------- designs (0/1 masks)
def beam(h=50, w=100, webs=(10, 30, 50, 70, 90), flange=6, web=4):
    """A truss-like beam: top and bottom flanges joined by vertical webs."""
    m = np.zeros((h, w), dtype=np.uint8)
    m[:flange] = 1
    m[h - flange:] = 1
    for c in webs:
        m[:, max(0, c - web // 2): c + web // 2] = 1
    return m


def photonic(n=120, k=0):
    """A blocky photonic layout: a frame with two bars (shifted by k)."""
    m = np.zeros((n, n), dtype=np.uint8)
    m[20:100, 20:30] = 1
    m[20:100, 90:100] = 1
    m[20 + k:30 + k, 20:100] = 1
    m[80:90, 20:100] = 1
    return m


def flip(m, k, rng):
    """m with k distinct pixels flipped."""
    out = m.copy().reshape(-1)
    idx = rng.choice(out.size, size=k, replace=False)
    out[idx] = 1 - out[idx]
    return out.reshape(m.shape)


# ---------------------------------------------------------------- STL export
def mesh(mask, scale_xy=1.0, scale_z=1.0, mirror_y=False):
    """Closed triangle surface of the extruded mask.  Grid lines are compressed to the
    columns/rows where the mask changes, so the surface has no T-junctions and few
    triangles; every edge is shared by two triangles with opposite orientation
    (masks must not touch only diagonally)."""
    m = np.asarray(mask, dtype=bool)
    if mirror_y:
        m = m[::-1]
    h, w = m.shape
    xs = sorted({0, w} | {j for j in range(1, w) if np.any(m[:, j] != m[:, j - 1])})
    ys = sorted({0, h} | {i for i in range(1, h) if np.any(m[i] != m[i - 1])})
    solid = np.array([[m[ys[l], xs[k]] for k in range(len(xs) - 1)] for l in range(len(ys) - 1)])
    tris = []

    def quad(a, b, c, d):
        tris.append((a, b, c))
        tris.append((a, c, d))

    z1 = scale_z
    for l in range(len(ys) - 1):
        for k in range(len(xs) - 1):
            if not solid[l, k]:
                continue
            x0, x1 = xs[k] * scale_xy, xs[k + 1] * scale_xy
            y0, y1 = ys[l] * scale_xy, ys[l + 1] * scale_xy
            quad((x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1))       # top, +z
            quad((x0, y0, 0), (x0, y1, 0), (x1, y1, 0), (x1, y0, 0))           # bottom, -z
            if k + 1 == solid.shape[1] or not solid[l, k + 1]:                 # +x wall
                quad((x1, y0, 0), (x1, y1, 0), (x1, y1, z1), (x1, y0, z1))
            if k == 0 or not solid[l, k - 1]:                                  # -x wall
                quad((x0, y0, 0), (x0, y0, z1), (x0, y1, z1), (x0, y1, 0))
            if l + 1 == solid.shape[0] or not solid[l + 1, k]:                 # +y wall
                quad((x0, y1, 0), (x0, y1, z1), (x1, y1, z1), (x1, y1, 0))
            if l == 0 or not solid[l - 1, k]:                                  # -y wall
                quad((x0, y0, 0), (x1, y0, 0), (x1, y0, z1), (x0, y0, z1))
    return np.asarray(tris, dtype=np.float32)


def write_stl_binary(path, tris):
    tris = np.asarray(tris, dtype=np.float32)
    normals = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    norms = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = (normals / np.where(norms == 0, 1, norms)).astype(np.float32)
    rec = np.zeros(len(tris), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["n"], rec["v"] = normals, tris
    with open(path, "wb") as fh:
        fh.write(b"engiai sample run binary STL".ljust(80, b" "))
        fh.write(np.uint32(len(tris)).tobytes())
        fh.write(rec.tobytes())


def write_stl_ascii(path, tris, name="design"):
    lines = [f"solid {name}"]
    for t in np.asarray(tris, dtype=np.float32):
        n = np.cross(t[1] - t[0], t[2] - t[0])
        n = n / (np.linalg.norm(n) or 1.0)
        lines.append(f"  facet normal {n[0]:.6g} {n[1]:.6g} {n[2]:.6g}")
        lines.append("    outer loop")
        for v in t:
            lines.append(f"      vertex {float(v[0])!r} {float(v[1])!r} {float(v[2])!r}")
        lines.append("    endloop")
        lines.append("  endfacet")
    lines.append(f"endsolid {name}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------- HDF5 helpers
def h5_write(path, datasets, attrs=None):
    """datasets: {path: array}; attrs: {group path: {name: value}}; no timestamps."""
    with h5py.File(path, "w", libver="earliest", track_order=False) as fh:
        for name, arr in datasets.items():
            fh.create_dataset(name, data=arr, compression="gzip", compression_opts=9,
                              shuffle=False, track_times=False)
        for grp, values in (attrs or {}).items():
            g = fh.require_group(grp)
            for k, v in values.items():
                g.attrs[k] = v


def mmd_independent(x, y, sigma):
    """Biased Gaussian-kernel MMD written out with explicit loops (the builder's own)."""
    x = x.reshape(len(x), -1).astype(np.float64)
    y = y.reshape(len(y), -1).astype(np.float64)

    def mean_k(a, b):
        total = 0.0
        for u in a:
            for v in b:
                total += np.exp(-np.sum((u - v) ** 2) / (2 * sigma ** 2))
        return total / (len(a) * len(b))
    return mean_k(x, x) + mean_k(y, y) - 2 * mean_k(x, y)


# ---------------------------------------------------------------- the run
HARNESS_FORMAT = "engiai-harness/1"
HARNESS_PATH = "harness/trials"


def prompt_entry(rec):
    """The harness's own key and expectation of one trial (what it generated the prompt with):
    (problem, prompt_style, example_id, seed), the algorithm (training code) and the style's
    expected metadata.  The grader scores against this, never against the record's copy."""
    p = rec["problem"]
    return {"problem": p, "prompt_style": rec["prompt_style"],
            "example_id": rec.get("example_id"), "seed": rec.get("seed"),
            "algorithm": rec.get("algorithm", "cgan_cnn_2d") if p.startswith("training_code_") else None,
            "expected": rec.get("expected")}


def encode_prompts(prompts):
    """The harness manifest as the uint8 bytes of one JSON document (sorted, compact)."""
    text = json.dumps({"format": HARNESS_FORMAT, "trials": list(prompts)}, sort_keys=True,
                      separators=(",", ":"))
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def read_prompts(run_dir):
    """The manifest entries of RUN_DIR/reference.h5 (for tests that edit the key)."""
    with h5py.File(os.path.join(run_dir, "reference.h5"), "r") as fh:
        return json.loads(fh[HARNESS_PATH][()].tobytes().decode("utf-8"))["trials"]


def write_prompts(run_dir, prompts):
    """Replace the manifest of RUN_DIR/reference.h5 (tests)."""
    with h5py.File(os.path.join(run_dir, "reference.h5"), "a") as fh:
        if HARNESS_PATH in fh:
            del fh[HARNESS_PATH]
        fh.create_dataset(HARNESS_PATH, data=encode_prompts(prompts), track_times=False)


def write_reference(out, gt, baselines, recorded_mmd=True, prompts=None):
    """out/reference.h5 from gt {(problem, example): (design, attrs)}, baselines
    {(problem, algorithm, seed): (reference_designs, baseline_samples, sigma)} and the harness
    manifest `prompts` (prompt_entry of every trial the harness ran; None: no manifest)."""
    datasets, attrs = {}, {}
    if prompts is not None:
        datasets[HARNESS_PATH] = encode_prompts(prompts)
    for (p, ex), (design, a) in gt.items():
        datasets[f"ground_truth/{p}/{ex}/optimal_design"] = design
        attrs[f"ground_truth/{p}/{ex}"] = dict(a)
    for (p, alg, seed), (ref, bsm, sigma) in baselines.items():
        grp = f"baselines/{p}/{alg}/seed{seed}"
        datasets[f"{grp}/reference_designs"] = ref
        datasets[f"{grp}/baseline_samples"] = bsm
        attrs[grp] = {"sigma": sigma}
        if recorded_mmd:
            attrs[grp]["baseline_mmd"] = mmd_independent(bsm, ref, sigma)
    h5_write(os.path.join(out, "reference.h5"), datasets, attrs)


def write_trial(trials_dir, tid, rec, arrays=None, files=None, prompts=None):
    """trials_dir/tid/: trial.json (format and trial_id added), arrays.h5, other files
    (files: {name: writer(path)}); the trial's harness entry is appended to `prompts`."""
    if prompts is not None:
        prompts.append(prompt_entry(rec))
    d = os.path.join(trials_dir, tid)
    os.makedirs(d)
    rec = dict({"format": FORMAT, "trial_id": tid}, **rec)
    with open(os.path.join(d, "trial.json"), "w") as fh:
        json.dump(rec, fh, indent=1)
        fh.write("\n")
    if arrays:
        h5_write(os.path.join(d, "arrays.h5"), arrays)
    for name, writer in (files or {}).items():
        writer(os.path.join(d, name))


def call(name, args=None, **result):
    return {"name": name, "args": args or {}, "result": result or None}


def build(out):
    rng = np.random.default_rng(20260407)
    if os.path.isdir(out):
        shutil.rmtree(out)
    trials_dir = os.path.join(out, "trials")
    os.makedirs(trials_dir)

    # ground truth: designs, objectives, conditions (what the dataset holds)
    gt = {("beams2d", 0): (beam(), {"compliance": 80.0}),
          ("beams2d", 1): (beam(webs=(15, 50, 85)), {"compliance": 120.0}),
          ("photonics2d", 0): (photonic(), {"total_overlap": 0.8, "lambda1": 1.5, "lambda2": 1.3,
                                            "blur_radius": 2.0}),
          ("thermoelastic2d", 0): (np.pad(np.ones((44, 44), np.uint8), 10),
                                   {"structural_compliance": 3.0, "thermal_compliance": 2.0,
                                    "volume_fraction": 0.47})}
    for (p, ex), (design, a) in gt.items():
        if p == "beams2d":
            a["volfrac"] = float(design.mean())
    # MMD baselines: reference designs, the baseline model's samples, sigma
    beam_refs = np.stack([beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in range(8)])
    pho_refs = np.stack([photonic(k=s) for s in range(8)])
    baselines = {
        ("training_code_beams2d", "cgan_cnn_2d", 1): (beam_refs,
                                                      np.stack([flip(r, 15, rng) for r in beam_refs]), 10.0),
        ("training_code_photonics2d", "diffusion_2d_cond", 3): (
            pho_refs, np.stack([flip(r, 20, rng) for r in pho_refs]), 10.0),
    }
    prompts = []

    def trial(tid, rec, arrays=None, files=None):
        write_trial(trials_dir, tid, rec, arrays, files, prompts)

    def soft(mask):
        """An optimizer's design: near-binary values."""
        return (0.02 + 0.96 * mask).astype(np.float32)

    render = [call("optimize_design", {"volfrac": 0.5}, success=True),
              call("simulate_design", {}, success=True, objectives={"compliance": 84.0}),
              call("render_design", {}, success=True, save_path="design.png")]

    # 1 beams2d/full: close to the ground truth; the public tool's watertightness flag claimed
    d0 = beam(webs=(10, 30, 50, 70, 92))
    trial("beams2d-full-ex0", {
        "problem": "beams2d", "prompt_style": "full", "example_id": 0, "seed": 42,
        "optimal_call_count": 3, "tool_calls": render,
        "artefacts": {"design": "arrays.h5:design", "stl": ["design.stl"]},
        "claimed_scores": {"iou": float((d0 & gt[("beams2d", 0)][0]).sum() /
                                        (d0 | gt[("beams2d", 0)][0]).sum()),
                           "tool_efficiency": 1.0, "task_completion": 1.0, "watertightness": 0.0}},
        {"design": soft(d0)}, {"design.stl": lambda p: write_stl_binary(p, mesh(d0))})

    # 2 beams2d/full: two disconnected pieces, five calls for an optimum of three
    d1 = beam(webs=(15, 50, 85))
    d1[:, 60:64] = 0
    d1[:, 60:64] = 0
    d1[:6, 58:66] = 0
    d1[44:, 58:66] = 0
    trial("beams2d-full-ex1", {
        "problem": "beams2d", "prompt_style": "full", "example_id": 1, "seed": 43,
        "tool_calls": [call("get_problem_details", {}, success=True),
                       call("optimize_design", {"volfrac": 0.4}, success=True),
                       call("simulate_design", {}, success=True, objectives={"compliance": 150.0}),
                       call("get_problem_details", {}, success=True),
                       call("render_design", {}, success=True, save_path="design.png")],
        "artefacts": {"design": "arrays.h5:design", "stl": ["design.stl"]}},
        {"design": soft(d1)}, {"design.stl": lambda p: write_stl_binary(p, mesh(d1))})

    # 3 beams2d/workflow-random: exact export parameters
    p3 = {"scale_xy": 0.5, "scale_z": 7.5, "threshold": 0.5, "mirror_y": False}
    trial("beams2d-workflow-random-ex0", {
        "problem": "beams2d", "prompt_style": "workflow-random", "example_id": 0, "seed": 44,
        "expected": {"stl_expected_params": p3},
        "tool_calls": render[:2] + [call("convert_design_to_stl", {"scale_xy": 0.5, "scale_z": 7.5,
                                                                   "threshold": 0.5, "mirror_y": False},
                                         success=True, stl_path="export.stl", scale_xy=0.5,
                                         scale_z=7.5, threshold=0.5, mirrored=False)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["export.stl"]}},
        {"design": soft(beam())}, {"export.stl": lambda p: write_stl_binary(p, mesh(beam(), 0.5, 7.5))})

    # 4 beams2d/workflow-distractor: the export took the PREVIEW height; the tool call succeeded
    p4 = {"scale_xy": 1.0, "scale_z": 12.0, "threshold": 0.5, "mirror_y": False}
    trial("beams2d-workflow-distractor-ex1", {
        "problem": "beams2d", "prompt_style": "workflow-distractor", "example_id": 1, "seed": 45,
        "expected": {"stl_expected_params": p4,
                     "distractor": {"param": "scale_z", "export_value": 12.0, "preview_value": 4.0}},
        "tool_calls": [call("optimize_design", {"volfrac": 0.4}, success=True),
                       call("simulate_design", {}, success=True, objectives={"compliance": 118.0}),
                       call("convert_design_to_stl", {"scale_xy": 1.0, "scale_z": 4.0,
                                                      "threshold": 0.5, "mirror_y": False},
                            success=True, stl_path="export.stl", scale_xy=1.0, scale_z=4.0,
                            threshold=0.5, mirrored=False)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["export.stl"]},
        "claimed_scores": {"task_completion": 1.0}},
        {"design": soft(beam(webs=(15, 50, 85)))},
        {"export.stl": lambda p: write_stl_binary(p, mesh(beam(webs=(15, 50, 85)), 1.0, 4.0))})

    # 5 beams2d/workflow-multi-export: two exports, the second one leaky (a facet dropped)
    pa = {"scale_xy": 1.0, "scale_z": 5.0, "threshold": 0.5, "mirror_y": False}
    pb = {"scale_xy": 2.0, "scale_z": 3.0, "threshold": 0.5, "mirror_y": True}
    trial("beams2d-workflow-multi-export-ex0", {
        "problem": "beams2d", "prompt_style": "workflow-multi-export", "example_id": 0, "seed": 46,
        "expected": {"stl_expected_params": {"multi_export": True, "exports": [pa, pb]}},
        "tool_calls": render[:2] + [
            call("convert_design_to_stl", pa, success=True, stl_path="export_a.stl", scale_xy=1.0,
                 scale_z=5.0, threshold=0.5, mirrored=False),
            call("convert_design_to_stl", pb, success=True, stl_path="export_b.stl", scale_xy=2.0,
                 scale_z=3.0, threshold=0.5, mirrored=True)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["export_a.stl", "export_b.stl"]}},
        {"design": soft(beam())},
        {"export_a.stl": lambda p: write_stl_binary(p, mesh(beam(), 1.0, 5.0)),
         "export_b.stl": lambda p: write_stl_binary(p, mesh(beam(), 2.0, 3.0, True)[:-1])})

    # 6 beams2d/workflow-conditional: ground-truth compliance 120 > 100: the high branch
    cond = {"conditional": True, "compliance_threshold": 100.0,
            "branch_high": {"threshold": 0.6, "mirror_y": True},
            "branch_low": {"threshold": 0.4, "mirror_y": False},
            "common": {"scale_xy": 1.0, "scale_z": 6.0}}
    d6 = beam(webs=(15, 50, 85))
    trial("beams2d-workflow-conditional-ex1", {
        "problem": "beams2d", "prompt_style": "workflow-conditional", "example_id": 1, "seed": 47,
        "expected": {"stl_expected_params": cond},
        "tool_calls": [call("optimize_design", {"volfrac": 0.4}, success=True),
                       call("simulate_design", {}, success=True, objectives={"compliance": 121.0}),
                       call("convert_design_to_stl", {"scale_xy": 1.0, "scale_z": 6.0,
                                                      "threshold": 0.6, "mirror_y": True},
                            success=True, stl_path="export.stl", scale_xy=1.0, scale_z=6.0,
                            threshold=0.6, mirrored=True)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["export.stl"]}},
        {"design": soft(d6)}, {"export.stl": lambda p: write_stl_binary(p, mesh(d6, 1.0, 6.0, True))})

    # 7 beams2d/workflow-derived-params: computed parameters right, exported as ASCII STL
    p7 = {"scale_xy": 0.25, "scale_z": 2.5, "threshold": 0.45, "mirror_y": False}
    trial("beams2d-workflow-derived-params-ex0", {
        "problem": "beams2d", "prompt_style": "workflow-derived-params", "example_id": 0, "seed": 48,
        "expected": {"stl_expected_params": p7},
        "tool_calls": render[:2] + [call("convert_design_to_stl", {"scale_xy": 0.25, "scale_z": 2.5,
                                                                   "threshold": 0.45, "mirror_y": False},
                                         success=True, stl_path="export.stl", scale_xy=0.25,
                                         scale_z=2.5, threshold=0.45, mirrored=False)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["export.stl"]}},
        {"design": soft(beam())}, {"export.stl": lambda p: write_stl_ascii(p, mesh(beam(), 0.25, 2.5))})

    # 8 beams2d/natural: render_design failed
    trial("beams2d-natural-ex0", {
        "problem": "beams2d", "prompt_style": "natural", "example_id": 0, "seed": 49,
        "tool_calls": render[:2] + [call("render_design", {}, success=False, error="bad colormap")],
        "artefacts": {"design": "arrays.h5:design", "stl": ["design.stl"]}},
        {"design": soft(beam())}, {"design.stl": lambda p: write_stl_binary(p, mesh(beam()))})

    # 9 photonics2d/full: a shifted bar, ASCII STL
    d9 = photonic(k=4)
    trial("photonics2d-full-ex0", {
        "problem": "photonics2d", "prompt_style": "full", "example_id": 0, "seed": 50,
        "tool_calls": [call("optimize_design", {"lambda1": 1.5, "lambda2": 1.3}, success=True),
                       call("simulate_design", {}, success=True, objectives={"total_overlap": 0.7}),
                       call("render_design", {}, success=True, save_path="design.png")],
        "artefacts": {"design": "arrays.h5:design", "stl": ["design.stl"]}},
        {"design": soft(d9)}, {"design.stl": lambda p: write_stl_ascii(p, mesh(d9))})

    # 10 thermoelastic2d/full: registered, but the agent's tools fail at create_problem
    trial("thermoelastic2d-full-ex0", {
        "problem": "thermoelastic2d", "prompt_style": "full", "example_id": 0, "seed": 51,
        "tool_calls": [call("create_problem", {"problem_id": "thermoelastic2d"}, success=False,
                            error="Unsupported problem 'thermoelastic2d' (beams2d, photonics2d)")],
        "artefacts": {"design": None, "stl": []},
        "claimed_scores": {"overall": 0.0}})

    # 11-12 rag_beams2d: one looked it up, one guessed the same value without the RAG tool
    rag_cond = {"conditions": {"expected_volfrac": 0.35, "expected_volfrac_tolerance": 0.05}}
    trial("rag_beams2d-rag-eval-0", {
        "problem": "rag_beams2d", "prompt_style": "rag-eval", "example_id": 0, "seed": 52,
        "expected": rag_cond,
        "tool_calls": [call("search_documents", {"query": "beams2d default volume fraction"},
                            success=True, results=[{"source": "beams2d.md", "content":
                                                    "beams2d: volume fraction volfrac = 0.35 by "
                                                    "default"}]),
                       call("optimize_design", {"volfrac": 0.35}, success=True)],
        "artefacts": {}})
    trial("rag_beams2d-rag-eval-1", {
        "problem": "rag_beams2d", "prompt_style": "rag-eval", "example_id": 1, "seed": 53,
        "expected": rag_cond,
        "tool_calls": [call("get_problem_details", {}, success=True),
                       call("optimize_design", {"problem_config": {"volfrac": 0.35}}, success=True)],
        "artefacts": {}, "claimed_scores": {"rag_accuracy": 0.6}})

    # 13-14 HPC orchestration
    metrics = {"IOG": 0.12, "COG": 0.3, "FOG": 0.05, "MMD": 0.02, "DPP": 0.4, "viol": 0.0}
    trial("hpc_train_beams2d-hpc-train-cgan-0", {
        "problem": "hpc_train_beams2d", "prompt_style": "hpc-train-cgan", "seed": 54,
        "expected": {"training_config": {"seed": 1, "epochs": 50, "algorithm": "cgan_cnn_2d",
                                         "problem_id": "beams2d"}},
        "tool_calls": [call("generate_training_command", {"cfg": {"seed": 1, "epochs": 50,
                                                                  "algorithm": "cgan_cnn_2d",
                                                                  "problem_id": "beams2d"}},
                            success=True),
                       call("submit_slurm_job", {}, success=True, job_id="81234"),
                       call("monitor_job_until_complete", {"job_id": "81234"}, success=True,
                            state="COMPLETED"),
                       call("evaluate_model", {}, success=True, metrics=metrics)],
        "artefacts": {}})
    trial("hpc_train_photonics2d-hpc-train-natural-diff-0", {
        "problem": "hpc_train_photonics2d", "prompt_style": "hpc-train-natural-diff", "seed": 55,
        "expected": {"training_config": {"seed": 2, "epochs": 100, "algorithm": "diffusion_2d_cond",
                                         "problem_id": "photonics2d"}},
        "tool_calls": [call("generate_training_command", {"seed": 2, "epochs": 10,
                                                          "algorithm": "diffusion_2d_cond",
                                                          "problem_id": "photonics2d"}, success=True),
                       call("submit_slurm_job", {}, success=True, job_id="81240"),
                       call("monitor_job_until_complete", {"job_id": "81240"}, success=True,
                            state="RUNNING"),
                       call("monitor_job_until_complete", {"job_id": "81240"}, success=True,
                            state="TIMEOUT")],
        "artefacts": {}})

    # 15-17 training-code generation
    script = ("import numpy as np\n\n\ndef sample(n, conditions):\n"
              "    return np.zeros((n, 50, 100))\n")
    full_chain = [call("write_training_script", {}, success=True),
                  call("validate_training_script", {}, success=True),
                  call("generate_training_slurm", {}, success=True),
                  call("validate_slurm_script", {}, success=True),
                  call("dryrun_training_script", {}, success=True),
                  call("submit_slurm_job", {}, success=True, job_id="90001"),
                  call("monitor_job_until_complete", {"job_id": "90001"}, success=True,
                       state="COMPLETED"),
                  call("evaluate_model", {}, success=True)]
    good = np.stack([flip(r, 8, rng) for r in beam_refs])
    trial("training_code_beams2d-t2-terse-seed1", {
        "problem": "training_code_beams2d", "prompt_style": "t2-terse", "algorithm": "cgan_cnn_2d",
        "seed": 1, "tool_calls": full_chain,
        "artefacts": {"training_script": "training_script.py", "samples": "arrays.h5:samples"}},
        {"samples": good}, {"training_script.py": lambda p: open(p, "w").write(script)})
    trial("training_code_beams2d-t2-terse-seed7", {
        "problem": "training_code_beams2d", "prompt_style": "t2-terse", "algorithm": "cgan_cnn_2d",
        "seed": 7, "tool_calls": full_chain,
        "artefacts": {"training_script": "training_script.py", "samples": "arrays.h5:samples"},
        "claimed_scores": {"model_quality": 1.0, "overall": 1.0}},
        {"samples": np.stack([flip(r, 8, rng) for r in beam_refs])},
        {"training_script.py": lambda p: open(p, "w").write(script)})
    worse = np.stack([flip(r, 40, rng) for r in pho_refs])
    chain_no_dryrun = [dict(c) for c in full_chain]
    chain_no_dryrun[4] = call("dryrun_training_script", {}, success=False, error="sbatch: QOS limit")
    trial("training_code_photonics2d-t4-func-verbose-seed3", {
        "problem": "training_code_photonics2d", "prompt_style": "t4-func-verbose",
        "algorithm": "diffusion_2d_cond", "seed": 3, "tool_calls": chain_no_dryrun,
        "artefacts": {"training_script": "training_script.py", "samples": "arrays.h5:samples"}},
        {"samples": worse},
        {"training_script.py": lambda p: open(p, "w").write(script.replace("50, 100", "120, 120"))})
    write_reference(out, gt, baselines, prompts=prompts)


def build_gold(out):
    """A small run in which every trial is perfect (the grader must give PASS, SCORE 1.0):
    beams2d full and workflow-random, photonics2d workflow-multi-export, rag-eval (a successful
    retrieval before the answer), hpc-train-diff, training code t6v2-verbose whose model
    generates new designs of the test distribution (none near a copy of a test design) with a
    lower MMD than the baseline's."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    trials_dir = os.path.join(out, "trials")
    os.makedirs(trials_dir)
    b, ph = beam(), photonic()
    # the test set: beams at even web shifts; both models generate NEW beams (odd shifts, never
    # a test design): the baseline's with 150 cells flipped, the agent's clean, so the agent's
    # MMD is below the baseline's without any sample near a copy (nearest at ~0.7 of the
    # reference spacing, the near-copy threshold is 0.25)
    shifted = [beam(webs=(10 + s, 30 + s, 50 + s, 70 + s, 90 - s)) for s in range(8)]
    refs = np.stack(shifted[0::2])
    new = np.stack(shifted[1::2])
    frng = np.random.default_rng(5)
    bsm = np.stack([flip(m, 150, frng) for m in new])
    prompts = []
    sim_b = call("simulate_design", {}, success=True, objectives={"compliance": 80.0})
    write_trial(trials_dir, "beams2d-full", {
        "problem": "beams2d", "prompt_style": "full", "example_id": 0, "seed": 1,
        "tool_calls": [call("optimize_design", {}, success=True), sim_b,
                       call("render_design", {}, success=True)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["design.stl"]}},
        {"design": b.astype(np.float64)}, {"design.stl": lambda p: write_stl_binary(p, mesh(b))},
        prompts)
    pr = {"scale_xy": 1.5, "scale_z": 2.0, "threshold": 0.5, "mirror_y": True}
    write_trial(trials_dir, "beams2d-workflow-random", {
        "problem": "beams2d", "prompt_style": "workflow-random", "example_id": 0, "seed": 2,
        "expected": {"stl_expected_params": pr},
        "tool_calls": [call("optimize_design", {}, success=True), sim_b,
                       call("convert_design_to_stl", pr, success=True, stl_path="e.stl",
                            scale_xy=1.5, scale_z=2.0, threshold=0.5, mirrored=True)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["e.stl"]}},
        {"design": b.astype(np.float32)},
        {"e.stl": lambda p: write_stl_ascii(p, mesh(b, 1.5, 2.0, True))}, prompts)
    ea = {"scale_xy": 1.0, "scale_z": 1.0, "threshold": 0.5, "mirror_y": False}
    eb = {"scale_xy": 0.5, "scale_z": 3.0, "threshold": 0.5, "mirror_y": False}
    write_trial(trials_dir, "photonics2d-multi", {
        "problem": "photonics2d", "prompt_style": "workflow-multi-export", "example_id": 0, "seed": 3,
        "expected": {"stl_expected_params": {"multi_export": True, "exports": [ea, eb]}},
        "tool_calls": [call("optimize_design", {}, success=True),
                       call("simulate_design", {}, success=True, objectives={"total_overlap": 0.8}),
                       call("convert_design_to_stl", ea, success=True, stl_path="a.stl",
                            scale_xy=1.0, scale_z=1.0, threshold=0.5, mirrored=False),
                       call("convert_design_to_stl", eb, success=True, stl_path="b.stl",
                            scale_xy=0.5, scale_z=3.0, threshold=0.5, mirrored=False)],
        "artefacts": {"design": "arrays.h5:design", "stl": ["a.stl", "b.stl"]}},
        {"design": ph.astype(np.float64)},
        {"a.stl": lambda p: write_stl_binary(p, mesh(ph)),
         "b.stl": lambda p: write_stl_binary(p, mesh(ph, 0.5, 3.0))}, prompts)
    write_trial(trials_dir, "rag", {
        "problem": "rag_beams2d", "prompt_style": "rag-eval", "example_id": 0, "seed": 4,
        "expected": {"conditions": {"expected_volfrac": 0.3, "expected_rmin": 2.0}},
        "tool_calls": [call("search_documents", {"query": "beams2d volfrac rmin"}, success=True,
                            results=["beams2d: volfrac 0.3, filter radius rmin 2.0"]),
                       call("optimize_design", {"volfrac": 0.3, "rmin": 2.0}, success=True)],
        "artefacts": {}}, prompts=prompts)
    write_trial(trials_dir, "hpc", {
        "problem": "hpc_train_photonics2d", "prompt_style": "hpc-train-diff", "seed": 5,
        "expected": {"training_config": {"seed": 5, "epochs": 20}},
        "tool_calls": [call("generate_training_command",
                            {"seed": 5, "epochs": 20, "algorithm": "diffusion_2d_cond",
                             "problem_id": "photonics2d"}, success=True),
                       call("submit_slurm_job", {}, success=True, job_id="1"),
                       call("monitor_job_until_complete", {}, success=True, state="COMPLETED"),
                       call("evaluate_model", {}, success=True,
                            metrics={"IOG": 0.1, "COG": 0.1, "FOG": 0.1, "MMD": 0.1, "DPP": 0.1,
                                     "viol": 0.0})],
        "artefacts": {}}, prompts=prompts)
    chain = [call(n, {}, success=True) for n in ("write_training_script", "validate_training_script",
                                                  "generate_training_slurm", "validate_slurm_script",
                                                  "dryrun_training_script")]
    chain += [call("submit_slurm_job", {}, success=True, job_id="7"),
              call("monitor_job_until_complete", {}, success=True, state="COMPLETED"),
              call("evaluate_model", {}, success=True)]
    write_trial(trials_dir, "code", {
        "problem": "training_code_beams2d", "prompt_style": "t6v2-verbose", "seed": 5,
        "tool_calls": chain,
        "artefacts": {"training_script": "train.py", "samples": "arrays.h5:samples"}},
        {"samples": new.astype(np.float64)},
        {"train.py": lambda p: open(p, "w").write("x = 1\n")}, prompts)
    write_reference(out, {("beams2d", 0): (b, {"compliance": 80.0, "volfrac": float(b.mean())}),
                          ("photonics2d", 0): (ph, {"total_overlap": 0.8})},
                    {("training_code_beams2d", "cgan_cnn_2d", 5): (refs, bsm, 10.0)},
                    prompts=prompts)


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "sample_run"))
