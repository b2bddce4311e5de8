"""Throughput: grade_scicode.py (warm workers, one forked child per step, --jobs = cores)
against the official protocol's runner (one fresh `python script.py` per step, in sequence,
exit 0 = pass), on the real dev split graded with its reference code.

    python bench/scicode.py --problems problems_dev.jsonl [--jobs N]

problems_dev.jsonl is the official SciCode dev split (the public SciCode repository's
`eval/data/problems_dev.jsonl`); the default path is `$GRADERS_SHARED/data/scicode/problems_dev.jsonl`, with
GRADERS_SHARED defaulting to the folder beside the checkout.

Builds a targets file from ground_truth_code first (reference/scicode/build_scicode_targets.py,
not timed), then times both runners on all 50 dev steps, on the light steps (all but 51.4,
47.4, 10.11) and on the quick steps (own compute < 0.5 s: what per-step overhead costs),
checks that they agree step by step, and prints the ratios.  On the full dev split the
steps' own compute (about 65 s, a third of it in 51.4) bounds any runner on 2 cores: the
ratio there is at most about 2x plus the startup saved; the overhead ratio is the quick one.  The sequential runner imports this grader's `scicode` shim (lighter than
the real package, which also imports sympy and datasets), so its times are a lower bound.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "reference" / "scicode"))
sys.path.insert(0, str(REPO))
import build_scicode_targets  # noqa: E402
import grade_scicode  # noqa: E402

HEAVY = ("51.4", "47.4", "10.11")


def official_script(step, deps, context, code, n_cases, cases, h5):
    """The script the official test_generated_code.py writes for one step."""
    lines = [deps, context, code, "", "from scicode.parse.parse import process_hdf5_to_tuple", "",
             f"targets = process_hdf5_to_tuple({step!r}, {n_cases}, {str(h5)!r})"]
    for i, case in enumerate(cases):
        lines += [f"target = targets[{i}]", "", case]
    return "\n".join(lines) + "\n"


def run_sequential(items, h5, shim, work):
    """One fresh interpreter per step, in order; returns ({step: passed}, wall)."""
    env = dict(os.environ, PYTHONPATH=str(shim), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    verdicts = {}
    t0 = time.monotonic()
    for step, deps, context, code, cases in items:
        path = Path(work) / f"{step}.py"
        path.write_text(official_script(step, deps, context, code, len(cases), cases, h5))
        try:
            proc = subprocess.run([sys.executable, str(path)], cwd=work, env=env, capture_output=True,
                                  timeout=1800)
            verdicts[step] = proc.returncode == 0
        except subprocess.TimeoutExpired:
            verdicts[step] = False
    return verdicts, time.monotonic() - t0


def run_grader(gen, problems, h5, jobs, work):
    report = Path(work) / "report.json"
    args = [sys.executable, str(REPO / "grade_scicode.py"), str(gen), "--problems", str(problems),
            "--h5", str(h5), "--json", str(report)]
    if jobs:
        args += ["--jobs", str(jobs)]
    t0 = time.monotonic()
    subprocess.run(args, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - t0
    doc = json.loads(report.read_text())
    verdicts = {c["id"][5:]: c["status"] == "PASS" for c in doc["checks"] if c["id"].startswith("step.")}
    return verdicts, wall


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared = Path(os.environ.get("GRADERS_SHARED", REPO.parent / "shared"))
    p.add_argument("--problems", default=str(shared / "data" / "scicode" / "problems_dev.jsonl"),
                   help="the official problems_dev.jsonl (default: %(default)s)")
    p.add_argument("--jobs", type=int, default=None, help="grader workers (default: cores)")
    p.add_argument("--keep", action="store_true", help="keep the work dir (targets, scripts, reports)")
    a = p.parse_args(argv)
    if not os.path.isfile(a.problems):
        print(f"bench/scicode.py needs the official SciCode dev problems (problems_dev.jsonl, 15 "
              f"problems with ground_truth_code): {a.problems} not found. Get it from the public "
              "SciCode repository (eval/data/problems_dev.jsonl) and pass --problems PATH.",
              file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench_scicode-"))
    h5, gen = work / "targets.h5", work / "gen"
    t0 = time.monotonic()
    ref_secs = build_scicode_targets.build(a.problems, str(h5), jobs=os.cpu_count() or 1, generations=str(gen))
    print(f"targets built from ground_truth_code in {time.monotonic() - t0:.1f} s (not timed below); reference compute per step summed: {sum(ref_secs.values()):.1f} s")
    shim = grade_scicode.write_shim(str(work / "shim"))
    items = build_scicode_targets.dev_items(a.problems)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores: {cores}, grader --jobs {a.jobs or cores}")
    subsets = (("all dev steps", items),
               ("light dev steps", [it for it in items if it[0] not in HEAVY]),
               ("quick dev steps (< 0.5 s own compute)", [it for it in items if ref_secs[it[0]] < 0.5]))
    for label, subset in subsets:
        sub_gen = work / f"gen-{len(subset)}"
        sub_gen.mkdir(exist_ok=True)
        for it in subset:
            (sub_gen / f"{it[0]}.py").write_text((gen / f"{it[0]}.py").read_text())
        seq_dir = work / f"seq-{len(subset)}"
        seq_dir.mkdir(exist_ok=True)
        seq, seq_wall = run_sequential(subset, h5, shim, seq_dir)
        ours, our_wall = run_grader(sub_gen, a.problems, h5, a.jobs, work)
        ours = {s: ours[s] for s in seq}
        agree = sum(ours[s] == seq[s] for s in seq)
        print(f"{label} ({len(subset)}): official sequential {seq_wall:6.1f} s ({sum(seq.values())} pass) | "
              f"grade_scicode {our_wall:6.1f} s ({sum(ours.values())} pass) | verdicts agree on "
              f"{agree}/{len(seq)} | ratio {seq_wall / our_wall:.2f}x")
    if a.keep:
        print(f"(work dir {work})")
    else:
        import shutil
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
