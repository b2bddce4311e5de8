#!/usr/bin/env python3
"""The runtime guard's cost on inference (issue 23), side by side.

Each reference model is graded on the public seed (1100 problems) by grade_modchallenge.py, as a
user runs it (on the public set written once, --test-set), alternately with the guard (the default) and without it (--skip-static-check, which
also drops the guard); the figure compared is the grader's own inference time, g8.inference's
`measured` (seconds from "ready" to the last tier, the isolation audits left out).  A fourth model,
`events`, stands for the worst honest case the guard sees: every prediction resolves a string
annotation with typing.get_type_hints (an inert compile the hook must read and allow) and opens a
weights file (an audited open), so the hook judges two events per problem.

    python bench/modchallenge_guard.py [--repeat 3] [--models table_tier1,torch_tier1,zero_baseline,events]
    python bench/modchallenge_guard.py --micro [--repeat 7]

Prints, per model, the median inference seconds with and without the guard and their ratio; the
issue's target is a ratio under 1.05 on the reference models.  On a loaded machine the grader's
wall times scatter by more than that, so --micro measures the same thing in one process pair:
the driver's own guard (its text, taken from the grader) installed or not in a fresh
interpreter that loads a reference model and answers the public set's 1100 problems (plus one
flush event per problem, as the driver raises per batch of one), best of --repeat, alternated;
and the hook's cost per audit event (an unwatched event, the flush, an inert compile).
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
    args = [sys.executable, str(REPO / "grade_modchallenge.py"), str(sub), "--test-set", str(work / "public"),
            "--quiet", "--json", str(report)] + ([] if guard else ["--skip-static-check"])
    subprocess.run(args, capture_output=True, timeout=1800)
    doc = json.loads(report.read_text())
    checks = {c["id"]: c for c in doc["checks"]}
    want = "PASS" if guard else "SKIP"
    if checks.get("g3.runtime_guard", {}).get("status") != want:
        raise SystemExit(f"{sub.name}: g3.runtime_guard is {checks.get('g3.runtime_guard')}, expected {want}")
    return float(checks["g8.inference"]["measured"])


MICRO_CHILD = r"""
import ast, dataclasses, hashlib, importlib, importlib._bootstrap_external, json, keyword, opcode, os
import pathlib, re, sys, tempfile, time, types
guard, model_dir, entry, cases_file, lib, repo = sys.argv[1] == "1", *sys.argv[2:7]
sys.path[:0] = [lib, model_dir, repo]
import grade_modchallenge as g
cases = json.load(open(cases_file))
if guard:
    body = g.DRIVER_BODY
    block = body[body.index("GUARD_PROCESS = "):body.index("def send(")]
    ns = {"_os": os, "_sys": sys, "_re": re, "_hashlib": hashlib, "_dataclasses": dataclasses,
          "_pathlib": pathlib, "_types": types, "_ast": ast, "_ilx": importlib._bootstrap_external,
          "_keyword": keyword, "_opcode": opcode, "_il": importlib,
          "_time": time, "_CH": {"tok": "0" * 32, "out": os.open(os.devnull, os.O_WRONLY)},
          "_REQ": {"submission_dir": model_dir, "scratch_dir": tempfile.mkdtemp(), "mode": "bench"}}
    exec(compile(block, g.__file__, "exec"), ns)
    ok, what = ns["_guard_kernel_filter"]()            # as the driver: the kernel filter, the torch._C
    assert ok, what                                    # loader, then the hook
    sys.meta_path.insert(0, ns["_GuardTorchFinder"])
    ns["_guard_install"]({"digests": {}, "pickle_globals": "x^", "max_reports": 20})
mod, _, cls = entry.rpartition(".")
t_load = time.perf_counter()
model = getattr(importlib.import_module(mod), cls)()
model.load(model_dir)
t_load = time.perf_counter() - t_load
audit, n = sys.audit, len(cases)
t0 = time.perf_counter()
for a, b, p in cases:
    model.predict_digits_batch([(model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p))])
    audit("modchallenge.guard.flush")
infer = time.perf_counter() - t0
per = {}
for name, fn in (("unwatched", lambda: audit("bench.unwatched")), ("flush", lambda: audit("modchallenge.guard.flush")),
                 ("inert compile", lambda: compile("typing.Optional[int]", "<s>", "eval"))):
    k = 20000
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    per[name] = (time.perf_counter() - t0) / k
print(json.dumps({"infer": infer, "load": t_load, "per_event": per}))
"""


def micro(args) -> None:
    import statistics as st
    work = Path(tempfile.mkdtemp(prefix="mc-guard-micro-"))
    try:
        subprocess.run([sys.executable, str(REPO / "grade_modchallenge.py"), "--write-tests", str(work / "public"),
                        "--public", "--quiet"], check=True, capture_output=True, timeout=600)
        cases = []
        for k in range(11):
            for line in (work / "public" / f"tier_{k}.jsonl").read_text().splitlines():
                row = json.loads(line)
                cases.append([row["a"], row["b"], row["p"]])
        (work / "cases.json").write_text(json.dumps(cases))
        lib = work / "lib"
        sys.path.insert(0, str(REPO))
        import grade_modchallenge as g
        for rel, text in g.SHIM_FILES.items():
            (lib / rel).parent.mkdir(parents=True, exist_ok=True)
            (lib / rel).write_text(text)
        (work / "child.py").write_text(MICRO_CHILD)
        print(f"{'model':16s} {'guard s':>9s} {'no guard s':>11s} {'ratio':>7s}   (best of {args.repeat}, "
              f"{len(cases)} problems + 1 flush each, one process per run)")
        per_event = []
        for name in args.models.split(","):
            sub = prepare(name, work)
            if sub is None:
                print(f"{name:16s} skipped (torch not installed)")
                continue
            entry = json.loads((sub / "manifest.json").read_text())["entry_class"]
            runs, loads = {True: [], False: []}, {True: [], False: []}
            for _ in range(args.repeat):
                for guard in (True, False):
                    out = subprocess.run([sys.executable, "-I", str(work / "child.py"), "1" if guard else "0",
                                          str(sub), entry, str(work / "cases.json"), str(lib), str(REPO)],
                                         capture_output=True, text=True, timeout=1200,
                                         env={"OMP_NUM_THREADS": "1"}, cwd=str(work))
                    if out.returncode:
                        raise SystemExit(out.stderr[-2000:])
                    doc = json.loads(out.stdout.strip().splitlines()[-1])
                    runs[guard].append(doc["infer"])
                    loads[guard].append(doc["load"])
                    per_event.append((guard, doc["per_event"]))
            on, off = min(runs[True]), min(runs[False])
            print(f"{name:16s} {on:9.4f} {off:11.4f} {on / off:7.3f}   on={[round(x, 4) for x in runs[True]]} "
                  f"off={[round(x, 4) for x in runs[False]]}; import + load {min(loads[True]):.3f} s with, "
                  f"{min(loads[False]):.3f} s without", flush=True)
        for key in per_event[0][1]:
            on = st.median(p[key] for guard, p in per_event if guard) * 1e6
            off = st.median(p[key] for guard, p in per_event if not guard) * 1e6
            print(f"per event, {key}: {on:.2f} us with the guard, {off:.2f} us without: the hook adds "
                  f"{on - off:.2f} us (medians over {len(per_event) // 2} runs each)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default="table_tier1,torch_tier1,zero_baseline,events")
    ap.add_argument("--micro", action="store_true", help="one process pair per run: the guard's own cost")
    args = ap.parse_args()
    if args.micro:
        return micro(args)
    work = Path(tempfile.mkdtemp(prefix="mc-guard-bench-"))
    try:
        subprocess.run([sys.executable, str(REPO / "grade_modchallenge.py"), "--write-tests", str(work / "public"),
                        "--public", "--quiet"], check=True, capture_output=True, timeout=600)
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
