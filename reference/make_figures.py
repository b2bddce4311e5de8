#!/usr/bin/env python3
"""Regenerate the README's figures in reference/figures/ (needs matplotlib: pip install '.[plots]').

    python3 reference/make_figures.py

Grades the bundled FEM gold submission and the EngiAI sample run with --plot, the way a user
does, and copies the two figures the README shows.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "reference" / "figures"
SHOWN = (  # (grader, submission, figure written by --plot, name in reference/figures)
    ("grade_fem.py", "reference/fem/gold", "fem_convergence.png", "fem_convergence.png"),
    ("grade_engiai.py", "reference/engiai/sample_run", "engiai_design_photonics2d-full-ex0.png",
     "engiai_design.png"),
)


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="make_figures-") as tmp:
        for script, sub, made, name in SHOWN:
            plots = Path(tmp) / script
            proc = subprocess.run([sys.executable, str(REPO / script), str(REPO / sub), "--quiet",
                                   "--plot", str(plots)], capture_output=True, text=True)
            if proc.returncode == 2 or not (plots / made).is_file():
                sys.stderr.write(proc.stderr)
                print(f"make_figures: {script} {sub} drew no {made}", file=sys.stderr)
                return 1
            shutil.copyfile(plots / made, OUT / name)
            print(f"{OUT / name}  ({script} {sub}: {proc.stdout.strip().splitlines()[-2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
