"""DECODING AND SCORING (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import dataclasses
from graders.modchallenge.guarded import _plain_int
from graders.modchallenge.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# DECODING AND SCORING (harness decoder rules; seed §1 ranking keys)
# =============================================================================
class Malformed(ValueError):
    pass


def decode_answer(digits, base, p: int, tier_zero: bool) -> int:
    """Digits MSB first -> int: a list of plain ints (bool refused) in [0, base); [] is 0;
    on tiers 1-10 a value >= p is malformed.  base is an int or "p" (the prime)."""
    b = p if base == "p" else base
    if not _plain_int(b) or b < 2:
        raise Malformed(f"invalid base {base!r}")
    if not isinstance(digits, list):
        raise Malformed(f"output is {type(digits).__name__}, not a list")
    value = 0
    for i, d in enumerate(digits):
        if not _plain_int(d):
            raise Malformed(f"digit {i} has type {type(d).__name__}")
        if not 0 <= d < b:
            raise Malformed(f"digit {i} = {d} outside [0, {b})")
        value = value * b + d
    if not tier_zero and value >= p:
        raise Malformed("decoded value >= p on a scored tier")
    return value


def decode_packed(item, base, p: int, tier_zero: bool):
    """The child's packed output (a digit list, or {"m": reason} when the child already
    found it malformed) -> int, or None for malformed."""
    if isinstance(item, dict):
        return None
    try:
        return decode_answer(item, base, p, tier_zero)
    except Malformed:
        return None


@dataclasses.dataclass(frozen=True)
class TierResult:
    tier_id: int
    total: int
    correct: int
    completed: bool
    wall: float | None = None          # cumulative seconds since inference start
    note: str = ""                     # why incomplete; when complete, the first malformed reply
    malformed: int = 0                 # replies that did not decode (counted wrong)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total and self.completed else 0.0


def ranking_keys(tiers: list) -> tuple:
    """(overall_accuracy, highest_tier_above_90) over scored tiers 1-10 (results.py):
    overall = sum of completed scored accuracies / number of scored tiers; htop = the
    largest completed scored tier with accuracy >= 0.90, else -1.  Both tier-0 blind."""
    scored = [t for t in tiers if t.tier_id > 0]
    overall = sum(t.accuracy for t in scored if t.completed) / len(scored) if scored else 0.0
    above = [t.tier_id for t in scored if t.completed and t.accuracy >= SPEC["rank_threshold"]]
    return round(overall, 4), max(above, default=-1)


def score_tier(cases: list, message, base, wall) -> TierResult:
    tid = cases[0].tier_id
    if not isinstance(message, dict) or message.get("complete") is not True:
        note = message.get("reason") if isinstance(message, dict) else None
        return TierResult(tid, len(cases), 0, False, wall, str(note or "not finished")[:200])
    outs = message.get("outputs")
    if not isinstance(outs, list) or len(outs) != len(cases):
        return TierResult(tid, len(cases), 0, False, wall, "result of the wrong length")
    decoded = [decode_packed(o, base, c.p, tid == 0) for o, c in zip(outs, cases)]
    correct = sum(d == c.expected for d, c in zip(decoded, cases))
    bad = [(o, c) for o, d, c in zip(outs, decoded, cases) if d is None]
    return TierResult(tid, len(cases), correct, True, wall, malformed_reason(*bad[0], base) if bad else "",
                      len(bad))


def malformed_reason(item, case, base) -> str:
    if isinstance(item, dict):
        return str(item.get("m"))[:120]
    try:
        decode_answer(item, base, case.p, case.tier_id == 0)
    except Malformed as exc:
        return str(exc)[:120]
    return "malformed"


