"""GUARDED INPUT (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import dataclasses
import hashlib
import json
import os
import re
from graders.common.records import Check, Reject, Status
from graders.scicode.protocol import header_name
from graders.scicode.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
STEP_RE = re.compile(r"^\d+\.\d+$")


def read_text_file(path: str, check_id: str, max_bytes: int) -> str:
    """UTF-8 text of a file; raise Reject on missing, oversized or non-UTF-8."""
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Reject(check_id, f"{os.path.basename(path)} is not UTF-8 ({exc.reason} at byte {exc.start})")


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclasses.dataclass
class Step:
    step: str                   # "10.1"
    problem: str                # "10"
    index: int                  # 0-based position in the problem
    header: str
    cases: list
    split: str                  # "test" | "dev"
    gold: str | None            # ground_truth_code (dev only)


@dataclasses.dataclass
class Problem:
    pid: str
    deps: str
    steps: list
    split: str


def load_problems(paths: list) -> tuple:
    """(problems, checks) from the official problem JSONL files.  A problem is
    dev when its steps carry ground_truth_code (problems_dev.jsonl does)."""
    problems, checks = {}, []
    for path in paths:
        cid = f"input.problems.{os.path.basename(path)}"
        if not os.path.isfile(path):      # a wrong path, not a grading outcome: no partial grading
            checks.append(Check("input.usage", Status.FAIL, f"problem file {path} missing (usage error)"))
            continue
        try:
            text = read_text_file(path, cid, SPEC["max_problems_bytes"])
        except Reject as exc:
            checks.append(exc.check)
            continue
        n = 0
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                pid = str(obj["problem_id"])
                raw_steps = obj["sub_steps"]
                deps = obj.get("required_dependencies") or ""
                if not isinstance(raw_steps, list) or not isinstance(deps, str):
                    raise TypeError("sub_steps/required_dependencies of the wrong type")
                split = "dev" if any(s.get("ground_truth_code") for s in raw_steps) else "test"
                steps = []
                for k, s in enumerate(raw_steps):
                    header_name(str(s["function_header"]))      # ValueError: no def/class
                    cases = s.get("test_cases") or []
                    if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
                        raise TypeError(f"step {s.get('step_number')}: test_cases must be strings")
                    steps.append(Step(str(s["step_number"]), pid, k, str(s["function_header"]),
                                      cases, split, s.get("ground_truth_code")))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                checks.append(Check(cid, Status.FAIL, f"line {lineno}: malformed problem "
                                    f"({type(exc).__name__}: {str(exc)[:100]})"))
                continue
            if pid in problems:
                checks.append(Check(cid, Status.FAIL, f"line {lineno}: problem {pid} given twice"))
                continue
            problems[pid] = Problem(pid, deps, steps, split)
            n += 1
        digest = sha256_file(path)
        official = SPEC["official_sha256"].get(os.path.basename(path))
        if digest in SPEC["official_sha256"].values():
            checks.append(Check(cid, Status.PASS, f"{n} problems; sha256 matches the official "
                                f"file ({digest[:12]})", digest))
        else:
            checks.append(Check(cid, Status.INFO, f"{n} problems; sha256 {digest[:12]} DIFFERS from "
                                f"the official {'file' if official else 'files'}"
                                f"{' ' + official[:12] if official else ''}", digest, official))
    return problems, checks


@dataclasses.dataclass
class Generations:
    texts: dict                 # step -> str (raw reply)
    errors: dict                # step -> model-fault reason (non-UTF-8, oversized, duplicate)
    unknown: list               # step names not in the problems
    checks: list


def load_generations(path: str, known: set) -> Generations:
    """A folder of <step>.txt/.py files or a JSONL of {"step_number","completion"}."""
    texts, errors, unknown, checks = {}, {}, [], []

    def put(step, text, where):
        if step not in known:
            unknown.append(step)
        elif step in texts and texts[step] != text:
            errors[step] = f"two different generations for step {step} ({where})"
        else:
            texts[step] = text

    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            stem, ext = os.path.splitext(name)
            if ext not in (".txt", ".py") or not STEP_RE.match(stem) or os.path.islink(full) \
                    or not os.path.isfile(full):
                if not name.startswith("."):
                    unknown.append(name)
                continue
            try:
                put(stem, read_text_file(full, "input.generations", SPEC["max_generation_bytes"]), name)
            except Reject as exc:
                errors[stem] = exc.check.message
        kind = "folder"
    elif os.path.isfile(path):
        try:
            text = read_text_file(path, "input.generations", 512 << 20)
        except Reject as exc:
            return Generations({}, {}, [], [exc.check])
        bad = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                step, completion = obj["step_number"], obj["completion"]
                if not isinstance(step, str) or not STEP_RE.match(step.strip()):
                    raise TypeError(f"step_number must be a string like \"10.1\", got {step!r:.30}")
                if not isinstance(completion, str):
                    raise TypeError("completion must be a string")
            except (ValueError, KeyError, TypeError) as exc:
                bad.append(f"line {lineno} ({type(exc).__name__}: {str(exc)[:80]})")
                continue
            if len(completion.encode("utf-8", "surrogatepass")) > SPEC["max_generation_bytes"]:
                errors[step.strip()] = f"generation larger than {SPEC['max_generation_bytes']} bytes"
                continue
            put(step.strip(), completion, f"line {lineno}")
        if bad:
            checks.append(Check("input.generations.jsonl", Status.FAIL,
                                f"{len(bad)} malformed line(s) ignored: " + "; ".join(bad[:5]),
                                len(bad)))
        kind = "JSONL"
    else:
        return Generations({}, {}, [], [Check("input.generations", Status.FAIL,
                                              f"{path}: no such file or folder")])
    checks.append(Check("input.generations", Status.PASS if texts else Status.FAIL,
                        f"{len(texts)} generation(s) read from a {kind}", len(texts)))
    if unknown:
        checks.append(Check("input.generations.unknown", Status.INFO,
                            f"{len(unknown)} entr(y/ies) not a step of the loaded problems, ignored: "
                            + ", ".join(sorted(set(unknown))[:10]), sorted(set(unknown))))
    return Generations(texts, errors, unknown, checks)


