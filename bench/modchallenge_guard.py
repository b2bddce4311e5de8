#!/usr/bin/env python3
"""The runtime guard's cost on inference (issue 23), side by side.

Each reference model is graded on the public seed (1100 problems) by grade_modchallenge.py, as a
user runs it, alternately with the guard (the default) and without it (--skip-static-check, which
also drops the guard); the figure compared is the grader's own inference time, g8.inference's
`measured` (seconds from "ready" to the last tier, the isolation audits left out).  A fourth model,
`events`, stands for the worst honest case the guard sees: every prediction resolves a string
annotation with typing.get_type_hints (an inert compile the hook must read and allow) and opens a
weights file (an audited open), so the hook judges two events per problem.

    python bench/modchallenge_guard.py [--repeat 3] [--models table_tier1,torch_tier1,zero_baseline,events]

Prints, per model, the median inference seconds with and without the guard and their ratio; the
issue's target is a ratio under 1.05 on the reference models.
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUBS = REPO / "reference" / "modchallenge" / "submissions"

EVENTS_MODEL = '''"""Honest but audit-heavy: two audited events per prediction (bench only)."""
import os
import typing

from modchallenge.interface.base_model import ModularMultiplicationModel


class Hinted:
    value: "typing.Optional[int]"


class M(ModularMultiplicationModel):
    def load(self, model_dir):
        self.path = os.path.join(model_dir, "manifest.json")

    def predict_digits(self, a, b, p):
        typing.get_type_hints(Hinted)
        with open(self.path, "rb") as fh:
            fh.read(1)
        return [0]
'''


def prepare(name: str, work: Path) -> Path | None:
    """A private copy of one model (torch_tier1 gets its weights; None when torch is missing)."""
    dst = work / name
    if name == "events":
        dst.mkdir()
        (dst / "model.py").write_text(EVENTS_MODEL)
        (dst / "manifest.json").write_text(json.dumps({
            "entry_class": "model.M", "output_base": 10, "model_description": "bench",
            "training_description": "none"}))
        return dst
    shutil.copytree(SUBS / name, dst)
    if name == "torch_tier1":
        try:
            subprocess.run([sys.executable, str(dst / "make_weights.py"), str(dst)], check=True,
                           capture_output=True, timeout=300)
        except (subprocess.CalledProcessError, OSError):
            return None
    return dst


def inference_seconds(sub: Path, guard: bool, work: Path) -> float:
    report = work / "report.json"
    args = [sys.executable, str(REPO / "grade_modchallenge.py"), str(sub), "--public", "--quiet",
            "--json", str(report)] + ([] if guard else ["--skip-static-check"])
    subprocess.run(args, capture_output=True, timeout=1800)
    doc = json.loads(report.read_text())
    checks = {c["id"]: c for c in doc["checks"]}
    want = "PASS" if guard else "SKIP"
    if checks.get("g3.runtime_guard", {}).get("status") != want:
        raise SystemExit(f"{sub.name}: g3.runtime_guard is {checks.get('g3.runtime_guard')}, expected {want}")
    return float(checks["g8.inference"]["measured"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default="table_tier1,torch_tier1,zero_baseline,events")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mc-guard-bench-"))
    try:
        print(f"{'model':16s} {'guard s':>9s} {'no guard s':>11s} {'ratio':>7s}   (median of {args.repeat}, "
              "g8.inference on the public 1100 problems)")
        for name in args.models.split(","):
            sub = prepare(name, work)
            if sub is None:
                print(f"{name:16s} skipped (torch not installed)")
                continue
            on, off = [], []
            for _ in range(args.repeat):           # alternated: drift on a shared machine hits both
                on.append(inference_seconds(sub, True, work))
                off.append(inference_seconds(sub, False, work))
            m_on, m_off = statistics.median(on), statistics.median(off)
            ratio = m_on / m_off if m_off > 0 else float("nan")
            print(f"{name:16s} {m_on:9.3f} {m_off:11.3f} {ratio:7.3f}   on={on} off={off}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
