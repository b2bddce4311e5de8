#!/usr/bin/env python3
"""Time to generate the 1100-problem public modchallenge test set, side by side.

Each variant runs in a fresh process, in the same run, on the same code path
(grade_modchallenge.generate_test_set); only the prime search differs:
  grader-1 : the grader's nextprime (windowed sieve + base-2 Miller-Rabin filter + BPSW), serial
  grader-2 : the same on 2 forked workers (--jobs 2; the default is min(4, cores)): every large
             search queued at once, each window's survivors dealt out interleaved, a worker
             moving on as soon as another has the search's first base-2 pass
  naive    : a naive nextprime written here: every odd candidate gets Miller-Rabin with the first
             12 prime bases (the kind of re-implementation that took ~45 s)
  sympy    : sympy.nextprime, the challenge harness's own (only if sympy is installed)
All variants must produce byte-identical sets (sha256 printed); the target is <= 3 s of wall
time.  CPU seconds (the process plus its workers) are printed too: on a shared machine they
show the work done when the wall time is inflated by other load.

    python bench/modchallenge.py [--repeat 3] [--skip-naive]
"""
import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def naive_next_prime(n: int) -> int:
    """Smallest prime > n: Miller-Rabin with 12 fixed bases on every odd number."""
    def mr(m):
        if m < 2:
            return False
        for q in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
            if m % q == 0:
                return m == q
        d, s = m - 1, 0
        while d % 2 == 0:
            d //= 2
            s += 1
        for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
            x = pow(a, d, m)
            if x in (1, m - 1):
                continue
            for _ in range(s - 1):
                x = x * x % m
                if x == m - 1:
                    break
            else:
                return False
        return True
    c = n + 1
    while not mr(c):
        c += 1
    return c


def child(mode: str) -> None:
    sys.path.insert(0, str(REPO))
    import grade_modchallenge as g
    jobs = 1
    if mode == "grader-2":
        jobs = 2
    elif mode == "naive":
        g._next_prime_search = naive_next_prime
    elif mode == "sympy":
        from sympy import nextprime
        g._next_prime_search = lambda n: int(nextprime(n))
    import resource
    t, cpu = time.perf_counter(), time.process_time()
    ts = g.generate_test_set(g.SPEC["public_seed"], 1100, jobs=jobs)
    dt = time.perf_counter() - t
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)          # the reaped workers
    cpu = time.process_time() - cpu + kids.ru_utime + kids.ru_stime
    digest = hashlib.sha256("".join(c.row() + "\n" for k in sorted(ts) for c in ts[k]).encode()).hexdigest()
    print(json.dumps({"seconds": dt, "cpu": cpu, "sha256": digest}))


def run(mode: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", mode], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="runs of the grader variants (median)")
    p.add_argument("--skip-naive", action="store_true", help="skip the slow baselines")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child)
        return 0
    modes = ["grader-1", "grader-2"]
    if not args.skip_naive:
        modes.append("naive")
        import importlib.util
        if importlib.util.find_spec("sympy") is not None:
            modes.append("sympy")
    times, cpus, digests = {m: [] for m in modes}, {m: [] for m in modes}, {}
    for i in range(args.repeat):
        for m in modes:
            if m in ("naive", "sympy") and i > 0:
                continue                      # the slow baselines once
            r = run(m)
            times[m].append(r["seconds"])
            cpus[m].append(r["cpu"])
            digests[m] = r["sha256"]
    fast = statistics.median(times["grader-2"])
    print(f"{'variant':<10} {'seconds':>9} {'x grader-2':>11} {'cpu s':>7}  sha256 of the 11 tiers")
    for m in modes:
        med = statistics.median(times[m])
        print(f"{m:<10} {med:9.2f} {med / fast:11.2f} {statistics.median(cpus[m]):7.2f}  {digests[m][:16]}")
    same = len(set(digests.values())) == 1
    print(f"identical sets: {same}; target <= 3 s: {'met' if fast <= 3.0 else 'NOT met'} "
          f"(grader-2 {fast:.2f} s, grader-1 {statistics.median(times['grader-1']):.2f} s)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
