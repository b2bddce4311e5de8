"""Grading wall time of the gold ADI submission against the gold solver's own
five-mesh study, both in fresh processes, interleaved in the same run.

    python bench/adi.py [--repeat N]

Prints the medians and their ratio (target: grading <= 2.5x the study).
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "reference" / "adi" / "gold"


def timed(cmd, **kw) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    study, grading = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            # the study: a fresh interpreter runs the gold's five meshes and writes its outputs
            study.append(timed([sys.executable, str(REPO / "reference" / "adi" / "make_gold.py"), tmp]))
            grading.append(timed([sys.executable, str(REPO / "grade_adi.py"), str(GOLD), "--quiet"]))
    s, g = statistics.median(study), statistics.median(grading)
    print(f"gold five-mesh study (fresh process): median {s:.3f} s  {['%.3f' % v for v in study]}")
    print(f"grade_adi.py on the gold:             median {g:.3f} s  {['%.3f' % v for v in grading]}")
    print(f"ratio grading/study: {g / s:.2f}  (target <= 2.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
