"""2. HOW EACH TIER SAMPLES ITS RANGE (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import dataclasses
import hashlib
import hmac
import itertools
import json
import math
import os
import random
from graders.common.records import Reject
from graders.modchallenge.spec import (MERSENNE_EXPONENTS, MERSENNE_FALLBACK, MR_BASES,
    MR_DETERMINISTIC_BELOW, MULT_SUB_TIERS, SPEC, TIER0_NEXTPRIME_MAX_BITS, TIERS)
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 2. HOW EACH TIER SAMPLES ITS RANGE: exact primes and test-set generation (gate 4)
# =============================================================================
_SMALL_PRIMES = {"bound": 1, "primes": ()}


def small_primes(bound: int) -> tuple:
    """All primes <= bound (a bytearray sieve, cached)."""
    if _SMALL_PRIMES["bound"] < bound:
        s = bytearray([1]) * (bound + 1)
        s[0:2] = b"\x00\x00"
        for i in range(2, math.isqrt(bound) + 1):
            if s[i]:
                s[i * i::i] = bytes(len(range(i * i, bound + 1, i)))
        _SMALL_PRIMES.update(bound=bound, primes=tuple(itertools.compress(range(bound + 1), s)))
    primes = _SMALL_PRIMES["primes"]
    if _SMALL_PRIMES["bound"] == bound:
        return primes
    return tuple(p for p in primes if p <= bound)


def strong_probable_prime(n: int, a: int) -> bool:
    """Miller-Rabin round to base a for odd n > 2."""
    d, s = n - 1, 0
    while not d & 1:
        d >>= 1
        s += 1
    x = pow(a, d, n)
    if x == 1 or x == n - 1:
        return True
    for _ in range(s - 1):
        x = x * x % n
        if x == n - 1:
            return True
    return False


def jacobi(a: int, n: int) -> int:
    """Jacobi symbol (a/n) for odd n > 0."""
    a %= n
    result = 1
    while a:
        while not a & 1:
            a >>= 1
            if n & 7 in (3, 5):
                result = -result
        a, n = n, a
        if a & 3 == 3 and n & 3 == 3:
            result = -result
        a %= n
    return result if n == 1 else 0


def strong_lucas_probable_prime(n: int) -> bool:
    """Strong Lucas test with Selfridge's parameters (D = 5, -7, 9, ...; P = 1, Q = (1-D)/4),
    for odd n > 2; perfect squares are composite."""
    if math.isqrt(n) ** 2 == n:
        return False
    D = 5
    while True:
        j = jacobi(D, n)
        if j == -1:
            break
        if j == 0 and abs(D) != n:
            return False
        D = -D - 2 if D > 0 else -D + 2
    Q = (1 - D) // 4
    d, s = n + 1, 0
    while not d & 1:
        d >>= 1
        s += 1
    U, V, Qk = 1, 1, Q % n                 # U_1, V_1 (P = 1), Q^1
    for bit in bin(d)[3:]:
        U, V = U * V % n, (V * V - 2 * Qk) % n      # index doubles
        Qk = Qk * Qk % n
        if bit == "1":                              # index + 1, halving mod n
            U, V = U + V, D * U + V
            U = (U if not U & 1 else U + n) >> 1
            V = (V if not V & 1 else V + n) >> 1
            U, V = U % n, V % n
            Qk = Qk * Q % n
    if U == 0 or V == 0:
        return True
    for _ in range(s - 1):
        V = (V * V - 2 * Qk) % n
        if V == 0:
            return True
        Qk = Qk * Qk % n
    return False


def is_prime(n: int) -> bool:
    """Exactly sympy.isprime's answer: proven-deterministic Miller-Rabin below 3.3e24,
    strong BPSW above (no BPSW pseudoprime is known)."""
    if n < 2:
        return False
    for q in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47):
        if n % q == 0:
            return n == q
    if n < 53 * 53:
        return True
    return strong_probable_prime(n, 2) and _prime_after_base2(n)


def _prime_after_base2(n: int) -> bool:
    """The rest of is_prime for an odd n > 2809 that passed base 2: the other twelve bases
    below the proven bound, the strong Lucas test (completing strong BPSW) above it."""
    if n < MR_DETERMINISTIC_BELOW:
        return all(strong_probable_prime(n, a) for a in MR_BASES[1:])
    return strong_lucas_probable_prime(n)


def _sieve_bound(bits: int) -> int:
    # trial-division bound grows with the cost of the test it saves (tuned in bench/modchallenge.py)
    return 1 << max(10, min(20, bits // 64 + 4))


SIEVE_WIDTH = 4096          # odd candidates per window (a span of 8192)


def _window(c: int, primes: tuple) -> list:
    """Indices i of the odd numbers c + 2i (i < SIEVE_WIDTH) with no factor in `primes`."""
    mark = bytearray(SIEVE_WIDTH)
    ones = b"\x01" * SIEVE_WIDTH
    neg = -c
    for q in primes:
        i0 = (neg % q) * ((q + 1) >> 1) % q
        if i0 < SIEVE_WIDTH:
            mark[i0::q] = ones[: (SIEVE_WIDTH - 1 - i0) // q + 1]
    return [i for i, m in enumerate(mark) if not m]


def _probable_then_exact(cand: int) -> bool:
    """is_prime for an odd candidate > 2^32 (base 2 first: it rejects almost every composite)."""
    return strong_probable_prime(cand, 2) and _prime_after_base2(cand)


_PRIME_MEMO = {}        # next_prime results of this process (repeated seeds, tier-0 primes)


def next_prime(n: int) -> int:
    """The smallest prime > n (sympy.nextprime's contract), memoised."""
    if n not in _PRIME_MEMO:
        if len(_PRIME_MEMO) > 4096:
            _PRIME_MEMO.clear()
        _PRIME_MEMO[n] = _next_prime_search(n)
    return _PRIME_MEMO[n]


def _next_prime_search(n: int) -> int:
    """The smallest prime > n via a windowed sieve and one base-2 Miller-Rabin per survivor
    before the full test."""
    if n < 2:
        return 2
    c = n + 1
    if c < 1 << 32:
        while not is_prime(c):
            c += 1
        return c
    primes = small_primes(_sieve_bound(c.bit_length()))[1:]     # odd primes, all < c
    c |= 1
    while True:
        for i in _window(c, primes):
            if _probable_then_exact(c + 2 * i):
                return c + 2 * i
        c += 2 * SIEVE_WIDTH


_SHARED = {}
PARALLEL_MIN_BITS = 600     # smaller searches are cheaper than shipping them to a worker


def _worker_init(best) -> None:
    _SHARED["best"] = best


def _worker_scan(k: int, c: int, indices: list):
    """Search k's window c: test c + 2i for i in `indices` (ascending) until one passes base 2,
    or until every index left is beyond search k's best hit so far (another worker's).  A
    base-2 pass becomes the best hit at once, then gets the rest of the test: returns
    ("prime", i), ("pseudo", i) for a base-2 strong pseudoprime, or None."""
    best = _SHARED["best"]
    for i in indices:
        if i > best[k]:
            return None
        cand = c + 2 * i
        if strong_probable_prime(cand, 2):
            with best.get_lock():
                if i < best[k]:
                    best[k] = i
            return ("prime", i) if _prime_after_base2(cand) else ("pseudo", i)
    return None


def _next_prime_all(values: list, jobs: int) -> list:
    """next_prime of each value.  With jobs > 1 the large searches run on forked workers:
    the survivors of each search's first window are dealt out interleaved, every search is
    queued at once (largest first; sieving the next one overlaps the workers' tests), and a
    worker stops at the first index past its search's best hit, then moves to the next search.
    Every index below the lowest hit has been tested, so a lowest hit that is prime is the
    answer; a window without a hit continues serially after it; a lowest hit that is a base-2
    pseudoprime (none is known to occur here) sends the value to the serial search.  Same
    primes as next_prime, sooner."""
    big = sorted({v for v in values if v.bit_length() > PARALLEL_MIN_BITS and v not in _PRIME_MEMO},
                 reverse=True)
    if jobs < 2 or not big:
        return [next_prime(v) for v in values]
    try:
        import concurrent.futures as cf
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        small_primes(_sieve_bound(big[0].bit_length() + 1))    # sieve once, before forking
        best = ctx.Array("q", [SIEVE_WIDTH] * len(big))
        searches = []
        with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                                    initargs=(best,)) as ex:
            for k, v in enumerate(big):
                c = (v + 1) | 1
                idx = _window(c, small_primes(_sieve_bound(c.bit_length()))[1:])
                searches.append((v, c, [ex.submit(_worker_scan, k, c, idx[j::jobs]) for j in range(jobs)]))
            for v, c, futs in searches:
                hits = sorted((h for h in (f.result() for f in futs) if h is not None), key=lambda h: h[1])
                if hits and hits[0][0] == "prime":
                    _PRIME_MEMO[v] = c + 2 * hits[0][1]
                elif not hits:                  # every survivor tested: none prime
                    _PRIME_MEMO[v] = _next_prime_search(c + 2 * (SIEVE_WIDTH - 1))
        return [next_prime(v) for v in values]
    except (ImportError, ValueError, OSError, RuntimeError, AttributeError):
        return [next_prime(v) for v in values]


def _rng(seed: bytes, label: str) -> random.Random:
    return random.Random(hmac.new(seed, label.encode(), hashlib.sha256).digest())


@dataclasses.dataclass(frozen=True)
class Case:
    a: int
    b: int
    p: int
    expected: int
    tier_id: int

    def row(self) -> str:
        """One line of the published tier_<k>.jsonl format."""
        return json.dumps({"a": str(self.a), "b": str(self.b), "p": str(self.p),
                           "expected": str(self.expected), "tier_id": self.tier_id})


def _tier_primes(tier: tuple, count: int, seed: bytes, precomputed: list) -> list:
    """The harness's prime draw: nextprime(randrange(2^min, 2^max)), fallback nextprime(2^min)
    when it overshoots, distinct; `precomputed` holds next_prime of the first draws."""
    tid, lo_bits, hi_bits, _, fixed = tier
    if fixed:
        return [fixed[i % len(fixed)] for i in range(count)]
    rng = _rng(seed, f"primes-tier-{tid}")
    lo, hi = 1 << lo_bits, 1 << hi_bits
    primes, seen, k, fallback = [], set(), 0, None
    while len(primes) < count:
        cand = rng.randrange(lo, hi)
        p = precomputed[k] if k < len(precomputed) else next_prime(cand)
        k += 1
        if p >= hi:
            fallback = fallback or next_prime(lo)
            p = fallback
        if p not in seen:
            seen.add(p)
            primes.append(p)
    return primes


def _tier_cases(tier: tuple, n: int, primes: list, seed: bytes) -> list:
    tid, _, _, operand_bits, _ = tier
    rng = _rng(seed, f"cases-tier-{tid}")
    top = 1 << operand_bits
    cases = []
    edge = min(SPEC["edge_cases_per_tier"], n)
    for i in range(edge):                            # (0,r), (r,0), (1,r), (r,1)
        p = primes[i % len(primes)]
        fa, fb = ((0, None), (None, 0), (1, None), (None, 1))[i % 4]
        a = fa if fa is not None else rng.randrange(0, top)
        b = fb if fb is not None else rng.randrange(0, top)
        cases.append(Case(a, b, p, a * b % p, tid))
    for _ in range(n - edge):
        p = primes[rng.randrange(len(primes))]
        a = rng.randrange(0, top)
        b = rng.randrange(0, top)
        cases.append(Case(a, b, p, a * b % p, tid))
    return cases


def tier0_prime(max_bits: int) -> int:
    if max_bits <= TIER0_NEXTPRIME_MAX_BITS:
        return next_prime((2 ** max_bits - 1) ** 2)
    need = 2 * max_bits + 1
    return 2 ** next((e for e in MERSENNE_EXPONENTS if e >= need), MERSENNE_FALLBACK) - 1


def _tier0_cases(n: int, seed: bytes) -> list:
    rng = _rng(seed, "cases-tier-0-mult")
    per, extra = divmod(n, len(MULT_SUB_TIERS))
    cases = []
    for idx, (min_bits, max_bits) in enumerate(MULT_SUB_TIERS):
        p = tier0_prime(max_bits)
        lo, hi = (2 ** (min_bits - 1) if min_bits > 1 else 0), 2 ** max_bits
        for j in range(per + (idx < extra)):
            if idx == 0 and j < SPEC["edge_cases_per_tier"]:
                fa, fb = ((0, None), (None, 0), (1, None), (None, 1))[j % 4]
                a = fa if fa is not None else rng.randrange(lo, hi)
                b = fb if fb is not None else rng.randrange(lo, hi)
            else:
                a = rng.randrange(lo, hi)
                b = rng.randrange(lo, hi)
            cases.append(Case(a, b, p, a * b, 0))
    return cases


def generate_test_set(seed: bytes, total: int, jobs: int = 1) -> dict:
    """{tier_id: [Case]} exactly as the harness's generate_private_test_set(seed, total)."""
    if total <= 0 or total % len(TIERS):
        raise ValueError(f"total ({total}) must be a positive multiple of {len(TIERS)}")
    n = total // len(TIERS)
    count = SPEC["primes_per_tier"]
    draws = {}                                  # first `count` draws of every tier, in one batch
    for tier in TIERS:
        if tier[0] > 0 and not tier[4]:
            rng = _rng(seed, f"primes-tier-{tier[0]}")
            draws[tier[0]] = [rng.randrange(1 << tier[1], 1 << tier[2]) for _ in range(count)]
    flat = [(tid, v) for tid, vs in draws.items() for v in vs]
    found = _next_prime_all([v for _, v in flat], jobs)
    pre = {tid: [p for (t, _), p in zip(flat, found) if t == tid] for tid in draws}
    out = {}
    for tier in TIERS:
        if tier[0] == 0:
            out[0] = _tier0_cases(n, seed)
        else:
            primes = _tier_primes(tier, count, seed, pre.get(tier[0], []))
            out[tier[0]] = _tier_cases(tier, n, primes, seed)
    return out


def write_test_set(test_set: dict, directory: str) -> list:
    os.makedirs(directory, exist_ok=True)
    written = []
    for tid, cases in sorted(test_set.items()):
        path = os.path.join(directory, f"tier_{tid}.jsonl")
        with open(path, "w", newline="\n") as fh:
            fh.write("".join(c.row() + "\n" for c in cases))
        written.append(path)
    return written


def _decimal(value, where: str, cid: str) -> int:
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() \
            or (len(value) > 1 and value[0] == "0") or len(value) > 4000:
        raise Reject(cid, f"{where}: not a canonical decimal string")
    return int(value)


def read_test_set(directory: str) -> dict:
    """A test set from tier_<k>.jsonl files (e.g. --write-tests output or the published set),
    every row re-checked: structure, expected recomputed, p prime on tiers 1-10."""
    cid = "g4.testgen"
    out = {}
    for tier in TIERS:
        tid, lo_bits, hi_bits, operand_bits, fixed = tier
        path = os.path.join(directory, f"tier_{tid}.jsonl")
        if not os.path.isfile(path) or os.path.getsize(path) > SPEC["test_set_max_bytes"]:
            raise Reject(cid, f"{path}: missing or larger than the cap")
        with open(path, "rb") as fh:
            lines = fh.read().decode("utf-8", "replace").splitlines()
        cases, checked = [], {}
        for i, line in enumerate(lines):
            where = f"tier_{tid}.jsonl line {i + 1}"
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                raise Reject(cid, f"{where}: not JSON")
            if not isinstance(row, dict) or row.get("tier_id") != tid or isinstance(row.get("tier_id"), bool):
                raise Reject(cid, f"{where}: not a row of tier {tid}")
            a, b, p, e = (_decimal(row.get(k), f"{where} {k}", cid) for k in ("a", "b", "p", "expected"))
            want = a * b if tid == 0 else (a * b % p if p else -1)
            if e != want or p < 2 or (tid == 0 and a * b >= p):
                raise Reject(cid, f"{where}: expected is not a*b{'' if tid == 0 else ' mod p'}")
            if tid > 0 and (max(a, b) >> operand_bits or (p not in fixed if fixed else
                                                          not 1 << lo_bits <= p < 1 << hi_bits)):
                raise Reject(cid, f"{where}: p or an operand outside tier {tid}'s range")
            if tid > 0 and p not in checked:
                checked[p] = is_prime(p)
                if not checked[p]:
                    raise Reject(cid, f"{where}: p is not prime")
            cases.append(Case(a, b, p, e, tid))
        out[tid] = cases
    sizes = {len(c) for c in out.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise Reject(cid, f"tiers have different or zero sizes: {sorted(sizes)}")
    return out


