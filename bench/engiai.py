#!/usr/bin/env python3
"""EngiAI grader timings, measured side by side in one run (ratios, not absolute promises).

    python bench/engiai.py

1. grading the bundled sample run, and the same run with every trial copied 8 times
   (at most linear in the number of trials; ground truth and baselines are read once per run);
2. the grader's vectorised watertightness check against a plain-Python edge counter on the
   surface of a large design;
3. the grader's MMD against the sample builder's explicit double loop;
4. the cost of the tolerance weld (float noise, stl_weld_rel_tol) against exact welding only,
   and reading the same surface as an ASCII STL against binary (streaming ASCII parser).
"""
import os
import shutil
import sys
import tempfile
import time
from collections import Counter

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "reference", "engiai"))
import grade_engiai as G  # noqa: E402
import build_engiai_run as B  # noqa: E402

SAMPLE = os.path.join(REPO, "reference", "engiai", "sample_run")


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def naive_watertight(tris):
    """Plain-Python reference: dict of welded vertices, Counter of directed edges."""
    index, faces = {}, []
    for t in tris:
        faces.append([index.setdefault(tuple(v), len(index)) for v in t])
    directed = Counter()
    for a, b, c in faces:
        directed.update([(a, b), (b, c), (c, a)])
    for (a, b), n in directed.items():
        if n != 1 or directed.get((b, a)) != 1:
            return False
    return True


def main():
    ps, ss = set(G.list_problems()), set(G.list_styles())
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "run8")
        shutil.copytree(SAMPLE, big)
        for name in os.listdir(os.path.join(SAMPLE, "trials")):
            for k in range(1, 8):
                shutil.copytree(os.path.join(SAMPLE, "trials", name),
                                os.path.join(big, "trials", f"{name}-copy{k}"))
        t1 = best(lambda: G.grade(SAMPLE, ps, ss))
        t8 = best(lambda: G.grade(big, ps, ss))
    n = len(os.listdir(os.path.join(SAMPLE, "trials")))
    print(f"grade sample run ({n} trials)      {t1 * 1e3:8.1f} ms  ({t1 / n * 1e3:.1f} ms/trial)")
    print(f"grade 8x run ({8 * n} trials)        {t8 * 1e3:8.1f} ms  ratio 8x/1x = {t8 / t1:.2f} "
          "(linear would be 8; reference.h5 entries are cached)")

    rng = np.random.default_rng(0)
    mask = np.zeros((120, 120), dtype=np.uint8)
    for _ in range(60):                       # blocky rectangles, then cleaned of diagonal contacts
        i, j = rng.integers(0, 110, 2)
        mask[i:i + rng.integers(3, 10), j:j + rng.integers(3, 10)] = 1
    tris = B.mesh(mask).astype(np.float64)
    tv = best(lambda: G.watertight_report(tris))
    tn = best(lambda: naive_watertight(tris), repeat=1)
    print(f"watertight, {len(tris)} triangles: grader {tv * 1e3:.1f} ms, plain Python "
          f"{tn * 1e3:.1f} ms, ratio {tn / tv:.1f}x (agree: "
          f"{G.watertight_report(tris)['ok'] == naive_watertight(tris)})")

    x = rng.integers(0, 2, (8, 120, 120)).astype(np.float64)
    y = rng.integers(0, 2, (8, 120, 120)).astype(np.float64)
    tg = best(lambda: G.mmd(x, y, 10.0))
    tl = best(lambda: B.mmd_independent(x, y, 10.0), repeat=1)
    print(f"MMD 8x8 samples of 120x120: grader {tg * 1e3:.2f} ms, double loop {tl * 1e3:.1f} ms, "
          f"ratio {tl / tg:.1f}x (agree: {abs(G.mmd(x, y, 10.0) - max(0.0, B.mmd_independent(x, y, 10.0))) < 1e-12})")

    rel = G.SPEC["stl_weld_rel_tol"]
    big_mask = np.zeros((240, 480), dtype=np.uint8)
    big_mask[::3, :] = 1
    big_mask[:, ::3] = 1
    surf = B.mesh(big_mask).astype(np.float64)
    tw = best(lambda: G.watertight_report(surf))
    G.SPEC["stl_weld_rel_tol"] = 0.0
    try:
        te = best(lambda: G.watertight_report(surf))
    finally:
        G.SPEC["stl_weld_rel_tol"] = rel
    print(f"watertight, {len(surf)} triangles: with tolerance weld {tw * 1e3:.1f} ms, exact weld "
          f"only {te * 1e3:.1f} ms, ratio {tw / te:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        pb, pa = os.path.join(tmp, "b.stl"), os.path.join(tmp, "a.stl")
        B.write_stl_binary(pb, surf)
        B.write_stl_ascii(pa, surf)
        tb = best(lambda: G.read_stl(pb, "b"))
        ta = best(lambda: G.read_stl(pa, "a"), repeat=1)
        mb = os.path.getsize(pa) / 2 ** 20
    print(f"read STL, {len(surf)} triangles: binary {tb * 1e3:.1f} ms, ASCII ({mb:.1f} MiB) "
          f"{ta * 1e3:.1f} ms, ratio {ta / tb:.0f}x")


if __name__ == "__main__":
    main()
