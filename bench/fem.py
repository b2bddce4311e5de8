#!/usr/bin/env python3
"""Grading cost of the FEM benchmark relative to the work it verifies.

Measures, as fresh processes in the same run (alternating, median of --repeat):
  study : the gold solver's own full study (reference/fem/make_gold.py: all seven
          meshes, errors, orders, results.json and reference_arrays.npz written)
  grade : python grade_fem.py reference/fem/gold (everything, incl. both isolated
          re-executions and the grader's own 5-point solution)
and prints the ratio grade / study (target <= 2).

    python bench/fem.py [--repeat 5]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def wall(cmd) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{proc.stdout}{proc.stderr}")
    return dt


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    gold = REPO / "reference" / "fem" / "gold"
    study, grade = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            out = Path(tmp) / f"study{i}"
            pair = [("study", [sys.executable, REPO / "reference" / "fem" / "make_gold.py", gold,
                               "--out", out]),
                    ("grade", [sys.executable, REPO / "grade_fem.py", gold])]
            for name, cmd in (pair if i % 2 == 0 else pair[::-1]):
                (study if name == "study" else grade).append(wall(cmd))
    s, g = statistics.median(study), statistics.median(grade)
    print(f"gold study run   : {s:.3f} s  (median of {args.repeat}; runs {', '.join(f'{x:.2f}' for x in study)})")
    print(f"grading the gold : {g:.3f} s  (median of {args.repeat}; runs {', '.join(f'{x:.2f}' for x in grade)})")
    print(f"ratio grade/study: {g / s:.2f}  (target <= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
