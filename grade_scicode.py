#!/usr/bin/env python3
"""Grader for SciCode: the official protocol run locally, with a harness-fault census.

Run:
    python grade_scicode.py GENERATIONS --problems problems_all.jsonl problems_dev.jsonl \\
        --h5 test_data.h5 [--split test|dev|all] [--context self|reference] [--special-steps DIR]
        [--timeout S] [--mem-gb G] [--jobs N] [--dry-run] [--strict] [--no-exec]
        [--json PATH] [--out DIR] [--quiet]

GENERATIONS is the model's raw replies, one per step: either a folder of
`<step>.txt` / `<step>.py` files (e.g. `10.1.py`), or a JSONL file with one
`{"step_number": "10.1", "completion": "<raw reply>"}` object per line.
Markdown fences are stripped and the function/class named by the step's
header is extracted (reference/scicode/problem_spec.md has the details).

Every in-scope step runs in its own forked process (fresh temp dir, wall-clock
timeout, address-space/CPU/file-size limits) from a warm worker that has
already imported numpy/scipy/h5py.  Targets come from the official
`test_data.h5` through this grader's own reader; `target` is bound before each
test case; `scicode.compare.cmp` / `scicode.parse.parse` are provided by a
shim package.  Results travel only over a token-tagged pipe.

Score: steps passed / in-scope steps of the split (288 test, 50 dev, 338 all),
printed as `step_accuracy`; `problem_accuracy` = problems with every step
passed / problems (65, 15, 80).  A run whose failures indict the harness
(`target` NameError, missing `scicode` module, missing h5 groups, >= 10
failures all sharing one non-assertion signature; under --strict any
harness-fault signature) is not certified: RESULT: UNGRADED, exit 3.
Exit codes: 0 every step passed, 1 graded below full score, 2 UNGRADED
(--no-exec) or usage error (a GENERATIONS/--problems/--h5 path that does not exist),
3 harness indicted, unreadable targets file, or grader failure.

Self-contained: needs only the standard library, numpy, scipy and h5py.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import functools
import hashlib
import json
import math
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

GRADER_NAME = "grade_scicode"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

# =============================================================================
# SPEC: every threshold, count, file name (seed line in comments)
# =============================================================================
SPEC = {
    # seed "Scope = 338 steps = AA design count"; spec "Scores" (steps / problems per split)
    "official_counts": {"test": (288, 65), "dev": (50, 15), "all": (338, 80)},
    # spec "Data": official sha256 of the data files
    "official_sha256": {
        "problems_all.jsonl": "38797fef78f434720be6d053b4f3a86839d6f8ea5fb9115450677cd3a6edf81d",
        "problems_dev.jsonl": "193968aff23b7ed931c8f6d196b611e2f6694adb49e6cc085444a60ad2fc4f7b",
        "test_data.h5": "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890",
    },
    # spec "Scope": the three no-test steps, outside the scope (official injects reference code)
    "special_steps": ("13.6", "62.1", "76.3"),
    # spec "Resources": 51.4 takes 50-70 s; official script uses 1800 s. Ours: 600 s default.
    "timeout_s": 600.0,
    # spec "Resources": 10.11 needs 2.35 GB and fails under 2 GB; 4 GiB of address space.
    "mem_gb": 4.0,
    # the runner's limit names (same SPEC keys in every grader that runs code)
    "runner_fsize_bytes": 64 << 20,         # per-step file-size limit (stdout flood ends here)
    "runner_output_cap_bytes": 16 << 10,    # captured submission output kept per step
    "runner_reply_cap_bytes": 256 << 20,    # reply-pipe bytes kept per step (comparison records)
    "runner_cpu_slack_s": 30,               # RLIMIT_CPU = timeout + this
    "runner_max_messages": 100_000,         # messages kept per step (a record flood ends here)
    # the worker enforces each step's timeout itself; the grader waits this much longer for
    # its report before it counts the worker as stalled (the step's failure)
    "worker_reply_margin_s": 10.0,
    # a grader-side comparison whose broadcast exceeds both operands and this many elements
    # is refused (a record could otherwise make the grader's own process allocate without bound)
    "max_broadcast": 1 << 27,
    "max_generation_bytes": 2 << 20,
    "max_problems_bytes": 64 << 20,
    # seed "Harness-fault census": 100 % shared signature across >= 10 failures
    "census_min_failures": 10,
    # seed "DRY sandbox must emit `SCICODE_PASS (DRY_RUN)`"
    "dry_marker": "SCICODE_PASS (DRY_RUN)",
}


# =============================================================================
# RECORDS
# =============================================================================
class Status(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    REVIEW = "REVIEW"
    SKIP = "SKIP"
    INFO = "INFO"


@dataclasses.dataclass(frozen=True)
class Check:
    id: str
    status: Status
    message: str
    measured: object = None
    limit: object = None

    def as_dict(self) -> dict:
        return {"id": self.id, "status": self.status.value, "message": self.message,
                "measured": _jsonable(self.measured), "limit": _jsonable(self.limit)}


def _jsonable(value):
    """Numbers and containers in a form json.dumps accepts (NaN/inf as strings)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) or hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        v = value.item() if hasattr(value, "item") else value
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        return v
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        seq = value.tolist() if hasattr(value, "tolist") else value
        return [_jsonable(v) for v in seq]
    return str(value)


class Reject(Exception):
    """Raised by guarded accessors; caught at a check boundary and turned into FAIL."""

    def __init__(self, check_id: str, message: str, measured=None, limit=None):
        super().__init__(message)
        self.check = Check(check_id, Status.FAIL, message, measured, limit)


def guarded(fn):
    """Run a check function; a Reject becomes its FAIL record, never an escape."""
    def wrapper(*args, **kwargs) -> list:
        try:
            out = fn(*args, **kwargs)
        except Reject as exc:
            return [exc.check]
        return list(out) if isinstance(out, (list, tuple)) else [out]
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@dataclasses.dataclass
class Report:
    """One submission's grading: the records, and what the printer, JSON and plots need besides."""
    submission: str
    checks: list = dataclasses.field(default_factory=list)
    phases: dict = dataclasses.field(default_factory=dict)        # phase -> wall seconds
    outcomes: dict = dataclasses.field(default_factory=dict)      # phase -> RunOutcome (captured output)
    keys: dict = dataclasses.field(default_factory=dict)          # typed values, printed `key: value`
    figures_data: dict = dataclasses.field(default_factory=dict)  # arrays for --plot; not printed


# =============================================================================
# GUARDED INPUT: untrusted files and values
# =============================================================================
STEP_RE = re.compile(r"^\d+\.\d+$")


def parse_python(source, filename: str, check_id: str):
    """ast.parse that never escapes: a syntax error, or a source nested too deeply or too large
    for the parser (RecursionError, MemoryError), becomes a Reject (a clean FAIL record)."""
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise Reject(check_id, f"{filename}: syntax error at line {exc.lineno}: {exc.msg}")
    except (RecursionError, MemoryError, ValueError) as exc:
        raise Reject(check_id, f"{filename}: cannot be parsed ({type(exc).__name__}: nested too "
                     "deeply or too large)")


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


# =============================================================================
# STATIC CHECKS (reaching for grader state)
# =============================================================================
# Names whose use in a generation lets code reach the grader's state (targets,
# comparators, the reply pipe) instead of computing an answer.  Flagged for review.
SUSPECT_NAMES = {"globals": "globals()", "_getframe": "sys._getframe", "f_back": "frame.f_back",
                 "f_globals": "frame.f_globals", "__main__": "__main__", "gc": "gc",
                 "ctypes": "ctypes", "inspect": "inspect", "h5py": "h5py", "builtins": "builtins",
                 "__builtins__": "__builtins__", "_exit": "os._exit", "setattr": "setattr",
                 "modules": "sys.modules", "kill": "os.kill", "fork": "os.fork",
                 "__globals__": "function.__globals__", "tb_frame": "traceback.tb_frame",
                 "f_locals": "frame.f_locals", "gi_frame": "generator.gi_frame",
                 "cr_frame": "coroutine.cr_frame", "vars": "vars()",
                 "__closure__": "function.__closure__", "cell_contents": "cell.cell_contents",
                 "__getattribute__": "__getattribute__",
                 "execv": "os.exec*", "execve": "os.exec*", "execl": "os.exec*", "execle": "os.exec*",
                 "execlp": "os.exec*", "execvp": "os.exec*", "execvpe": "os.exec*", "execlpe": "os.exec*"}
# the same names spelled as strings (getattr(sys, "_getframe"), g["__globals__"]) are
# flagged too, and so is getattr with a computed attribute name
SUSPECT_STRINGS = {"_getframe", "f_back", "f_globals", "f_locals", "tb_frame", "__globals__",
                   "__builtins__", "__main__", "_exit", "gi_frame", "cr_frame", "modules",
                   "__closure__", "__getattribute__"}
MODULE_ALIASES = {"np", "numpy", "scipy", "sp", "math", "cmath", "la", "sys", "os"}


def _computed_attribute(call) -> bool:
    """getattr/hasattr(obj, <not a literal>, ...) or operator.attrgetter(<not a literal>)."""
    f = call.func
    if isinstance(f, ast.Name) and f.id in ("getattr", "hasattr"):
        names = call.args[1:2]
    elif isinstance(f, ast.Name) and f.id == "attrgetter" or isinstance(f, ast.Attribute) and f.attr == "attrgetter":
        names = call.args
    else:
        return False
    return any(not isinstance(a, ast.Constant) for a in names)


def audit_generation(code: str) -> list:
    """Reasons a definition needs review: it reads `target(s)` as a free name,
    reaches for frames/globals/the h5 file, or rebinds a library attribute."""
    try:
        tree = parse_python(code, "generation", "audit")
    except Reject:
        return []
    reasons, bound = [], set()
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Name):
            name = node.id
            if name in ("getattr", "hasattr") and id(node) not in called and name not in bound:
                reasons.append(f"passes {name} as a value")
            if name in ("target", "targets") and name not in bound:
                reasons.append(f"reads the test's `{name}`")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                    and node.value.id in MODULE_ALIASES:
                reasons.append(f"rebinds {node.value.id}.{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                for part in ((getattr(node, "module", None) or "") + "." + alias.name).split("."):
                    if part in SUSPECT_NAMES:
                        reasons.append(f"imports {part}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                ("/proc/" in node.value or node.value.endswith(".h5") or node.value in SUSPECT_STRINGS):
            reasons.append(f"names {node.value[:40]!r}")
        elif isinstance(node, ast.Call) and _computed_attribute(node):
            reasons.append(f"{ast.unparse(node.func)[:30]} with a computed attribute name")
        if name in SUSPECT_NAMES and name not in bound:
            reasons.append(f"uses {SUSPECT_NAMES[name]}")
    return sorted(set(reasons))


# =============================================================================
# PROTOCOL LAW: fences, extraction, context
# =============================================================================
FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*$", re.MULTILINE)


def strip_fences(text: str) -> list:
    """Code blocks of a markdown reply, in order.  No fence: the whole text is
    one block.  An unclosed fence runs to the end (a truncated reply).  A leading
    byte-order mark is dropped; a block indented as a whole (a fence inside a
    markdown list item) is dedented."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    fences = list(FENCE_RE.finditer(text))
    if not fences:
        return [text]
    blocks, i = [], 0
    while i < len(fences):
        opening = fences[i]
        closing = next((f for f in fences[i + 1:] if f.group(1)[0] == opening.group(1)[0]
                        and len(f.group(1)) >= len(opening.group(1)) and not f.group(2)), None)
        end = closing.start() if closing else len(text)
        blocks.append(textwrap.dedent(text[opening.end() + 1:end]) if opening.end() < len(text) else "")
        if closing is None:
            break
        i = fences.index(closing) + 1
    return blocks


HEADER_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def header_name(header: str) -> tuple:
    """(kind, name) of the definition a step's function_header declares: its FIRST
    def/class line.  (Upstream tries `def` first and so returns `__init__` for a
    class header -- SciCode issues #49/#59; a class header names the class.)"""
    m = HEADER_RE.search(header)
    if not m:
        raise ValueError("no def/class in the function header")
    return m.group(1), m.group(2)


class ExtractionError(Exception):
    pass


def extract_definition(text: str, kind: str, name: str) -> str:
    """Source of the `kind` definition named `name` in a raw reply, fences
    stripped.  The last code block that defines it wins, and within it the last
    top-level definition (what running the reply would bind), else a nested
    one; all blocks joined is the last resort.  Anything outside the definition
    (imports, helpers, prints) is dropped, as the seed's extraction does."""
    blocks = strip_fences(text)
    candidates = list(reversed(blocks)) + (["\n".join(blocks)] if len(blocks) > 1 else [])
    types = (ast.ClassDef,) if kind == "class" else (ast.FunctionDef, ast.AsyncFunctionDef)
    first_error, parsed_any = None, False
    for block in candidates:
        try:
            tree = parse_python(block, "generation", "extract")
        except Reject as exc:
            first_error = first_error or exc.check.message
            continue
        parsed_any = True
        top = [n for n in tree.body if isinstance(n, types) and n.name == name]
        nested = [n for n in ast.walk(tree) if isinstance(n, types) and n.name == name]
        if top or nested:
            try:
                return ast.unparse((top or nested)[-1])
            except RecursionError:
                raise ExtractionError(f"`{kind} {name}` is nested too deeply to be extracted")
    if not parsed_any and first_error is not None:
        raise SyntaxError(first_error.replace("generation: ", "", 1))
    raise ExtractionError(f"no `{kind} {name}` in the generation")


@dataclasses.dataclass
class StepProgram:
    """What one step runs: dependencies, prior-step context, the step's code, its tests."""
    step: str
    problem: str
    deps: str
    context: str
    code: str | None            # None: the step cannot run (reason in `error`)
    error: dict | None          # {"type","message"} model fault found before execution
    cases: list
    lost_context: str | None    # special step whose code is absent (harness fault)
    audit: list
    definition: tuple = ("def", "")     # (kind, name) the step's header declares


def special_code(step: Step, special_dir: str | None) -> str | None:
    """Reference code of a no-test step from --special-steps DIR/<step>.txt|.py."""
    if not special_dir:
        return None
    kind, name = header_name(step.header)
    for ext in (".txt", ".py"):
        p = os.path.join(special_dir, step.step + ext)
        if os.path.isfile(p):
            try:
                return extract_definition(read_text_file(p, "special", SPEC["max_generation_bytes"]),
                                          kind, name)
            except (Reject, SyntaxError, ExtractionError):
                return None
    return None


def generation_code(step: Step, gens: Generations) -> tuple:
    """(code, error) for a step from its generation; error is a model-fault dict."""
    if step.step in gens.errors:
        return None, {"type": "BadGeneration", "message": gens.errors[step.step]}
    if step.step not in gens.texts:
        return None, {"type": "MissingGeneration", "message": f"no generation for step {step.step}"}
    kind, name = header_name(step.header)
    try:
        return extract_definition(gens.texts[step.step], kind, name), None
    except SyntaxError as exc:
        return None, {"type": "SyntaxError", "message": str(exc)}
    except ExtractionError as exc:
        return None, {"type": "ExtractionError", "message": str(exc)}


def assemble(problem: Problem, step: Step, context_mode: str, gens: Generations,
             special_dir: str | None) -> StepProgram:
    """The program of one in-scope step.  self: prior steps' own generations
    (fence-stripped, definition extracted); reference: prior ground_truth_code.
    The no-test steps contribute --special-steps code, or nothing (lost context)."""
    parts, lost = [], None
    for prior in problem.steps[:step.index]:
        if prior.step in SPEC["special_steps"]:
            code = special_code(prior, special_dir)
            if code is None:
                lost = prior.step
            else:
                parts.append(code)
        elif context_mode == "reference":
            parts.append(prior.gold or "")
        else:
            code, _ = generation_code(prior, gens)
            if code is not None:
                parts.append(code)
    code, error = generation_code(step, gens)
    return StepProgram(step.step, problem.pid, problem.deps, "\n\n".join(parts), code, error,
                       step.cases, lost, audit_generation(code) if code else [], header_name(step.header))


# =============================================================================
# TARGET PLAN: how each test case uses `target`, read from the test text alone
# =============================================================================
# The step's process never holds a target: `target` is bound to an opaque stand-in, every
# comparison that involves it records what the test passed in (as data) and returns True,
# and the grader evaluates those records against the real targets in its own process.
# What the grader trusts is this plan, made from the (trusted) test text: which
# comparisons a case makes with the target, in which order, with which constants.  A
# record that does not match the plan (missing, extra, another kind, a target stand-in on
# the computed side) fails its case: a generation that forges records can only lose.
NUMPY_COMPARATORS = ("allclose", "isclose", "array_equal")
SHIM_COMPARATORS = ("cmp_tuple_or_list", "are_dicts_close", "are_csc_matrix_close")
TARGET_METHODS = ("any", "all", "item", "tolist", "sum", "min", "max", "mean", "copy", "ravel",
                  "flatten", "conj", "toarray", "todense")
HELPER_DECORATOR = "__scicode_helper__"


class Unsupported(Exception):
    """A use of `target` the plan cannot express (the census lists them; none in the 338 steps)."""


@dataclasses.dataclass
class Site:
    kind: str           # "numpy.allclose" | "cmp.cmp_tuple_or_list" | "helper.NAME" | "==" | "!="
    slots: list         # per operand: ["target", tse] | ["const", value] | ["computed", None]
    kwargs: dict        # name -> ["const", value] | ["computed", None]
    text: str


@dataclasses.dataclass
class CasePlan:
    sites: list
    arity: dict                 # json(path) of a stand-in the case unpacks -> number of names
    unpacks: list               # [(case, path, n)]: the grader checks the real target unpacks so
    helpers: list               # test-defined functions a site calls with the target
    form: str                   # census class of the case
    error: str | None = None    # Unsupported: why


def _const(node):
    """The value of a literal expression of the test text (numbers, strings, tuples, +-*/**),
    or raise ValueError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, str, bool,
                                                                   type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const(node.operand)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _const(node.left), _const(node.right)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            raise ValueError("non-numeric operands")
        if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 1e6):
            raise ValueError("power too large")
        try:
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a / b if isinstance(node.op, ast.Div) else a ** b
        except (ArithmeticError, ValueError) as exc:
            raise ValueError(str(exc))
    if isinstance(node, ast.Tuple):
        return tuple(_const(e) for e in node.elts)
    raise ValueError("not a literal")


class _Planner:
    """Plans the cases of one step in order (names unpacked from a target stay bound to it
    in later cases, as in the shared namespace)."""

    def __init__(self):
        self.names = {}         # name -> (case, path) of a target part
        self.helpers = set()    # functions defined by the step's test text

    def _mentions(self, node, names) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    def _tse(self, node, case):
        """Target-side expression: ["path", case, path] | ["tuple"/"list", [tse...]] | None."""
        if isinstance(node, ast.Name):
            if node.id == "target":
                return ["path", case, []]
            if node.id in self.names:
                c, p = self.names[node.id]
                return ["path", c, list(p)]
            return None
        if isinstance(node, ast.Subscript):
            base = self._tse(node.value, case)
            if base is None or base[0] != "path":
                return None
            try:
                k = _const(node.slice)
            except ValueError:
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: the target indexed by a computed key")
            if not isinstance(k, (int, str)) or isinstance(k, bool):
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: the target indexed by {type(k).__name__}")
            return ["path", base[1], base[2] + [["i", k]]]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords:
            base = self._tse(node.func.value, case)
            if base is None:
                return None
            if base[0] != "path" or node.func.attr not in TARGET_METHODS:
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: a method of the target outside "
                                  f"{', '.join(TARGET_METHODS[:4])}, ...")
            return ["path", base[1], base[2] + [["m", node.func.attr]]]
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
            parts = [self._tse(e, case) for e in node.elts]
            if all(p is not None for p in parts):
                return ["tuple" if isinstance(node, ast.Tuple) else "list", parts]
        return None

    def _slot(self, node, case, names):
        tse = self._tse(node, case)
        if tse is not None:
            return ["target", tse]
        if self._mentions(node, names):
            raise Unsupported(f"`{ast.unparse(node)[:60]}` computes with the target")
        try:
            return ["const", _const(node)]
        except ValueError:
            return ["computed", None]

    def _site(self, node, case, names) -> Site:
        text = ast.unparse(node)[:160]
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in NUMPY_COMPARATORS and \
                    isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy"):
                kind = f"numpy.{f.attr}"
            elif isinstance(f, ast.Name) and f.id in SHIM_COMPARATORS or \
                    isinstance(f, ast.Attribute) and f.attr in SHIM_COMPARATORS:
                kind = f"cmp.{f.id if isinstance(f, ast.Name) else f.attr}"
            elif isinstance(f, ast.Name) and f.id in self.helpers:
                kind = f"helper.{f.id}"
            else:
                raise Unsupported(f"`{text[:60]}`: the target passed to {ast.unparse(f)[:40]}")
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                raise Unsupported(f"`{text[:60]}`: starred arguments")
            slots = [self._slot(a, case, names) for a in node.args]
            kwargs = {k.arg: self._slot(k.value, case, names) for k in node.keywords}
            if any(s[0] == "target" for s in kwargs.values()):
                raise Unsupported(f"`{text[:60]}`: the target as a keyword argument")
            if not any(s[0] == "target" for s in slots):
                raise Unsupported(f"`{text[:60]}` uses the target inside an argument")
            return Site(kind, slots, kwargs, text)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            left, right = self._slot(node.left, case, names), self._slot(node.comparators[0], case, names)
            sides = [s for s in (left, right) if s[0] == "target"]
            if len(sides) != 1 or sides[0][1][0] != "path":
                raise Unsupported(f"`{text[:60]}`: not one target (part) against a computed value")
            return Site("==" if isinstance(node.ops[0], ast.Eq) else "!=", [left, right], {}, text)
        raise Unsupported(f"`{text[:60]}`: the target outside a comparison call or ==")

    def plan(self, case_text: str, case: int) -> CasePlan:
        try:
            tree = parse_python(case_text, f"<test case {case + 1}>", "plan")
        except Reject as exc:
            return CasePlan([], {}, [], [], "unsupported", exc.check.message)
        sites, arity, unpacks, forms = [], {}, [], set()
        names = {"target"} | set(self.names)
        try:
            for stmt in tree.body:
                names = {"target"} | set(self.names)
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    params = {a.arg for a in ast.walk(stmt.args) if isinstance(a, ast.arg)}
                    if any(self._mentions(n, names - params) for n in stmt.body + stmt.decorator_list):
                        raise Unsupported(f"function {stmt.name} reads the target")
                    self.helpers.add(stmt.name)
                    self.names.pop(stmt.name, None)
                    continue
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                        self._tse(stmt.value, case) is not None:
                    src, dst = self._tse(stmt.value, case), stmt.targets[0]
                    if src[0] != "path":
                        raise Unsupported("a tuple of target parts assigned")
                    if isinstance(dst, ast.Name):
                        self.names[dst.id] = (src[1], src[2])
                    elif isinstance(dst, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in dst.elts):
                        arity[json.dumps([src[1], src[2]])] = len(dst.elts)
                        unpacks.append((src[1], src[2], len(dst.elts)))
                        for k, e in enumerate(dst.elts):
                            self.names[e.id] = (src[1], src[2] + [["u", k]])
                        forms.add("unpack")
                    else:
                        raise Unsupported("the target assigned to a pattern")
                    continue
                if not self._mentions(stmt, names):
                    for n in ast.walk(stmt):        # a name rebound by the test is no longer a target part
                        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                            self.names.pop(n.id, None)
                        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                            self.names.pop(n.name, None)
                    continue
                if not isinstance(stmt, ast.Assert) or (stmt.msg is not None and self._mentions(stmt.msg, names)):
                    raise Unsupported(f"line {stmt.lineno}: `{ast.unparse(stmt)[:60]}` uses the target "
                                      "outside an assert")
                stack, operands = [stmt.test], []
                while stack:                      # the operands of an `and` chain, left to right
                    node = stack.pop(0)
                    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                        stack[:0] = node.values
                    else:
                        operands.append(node)
                for node in operands:
                    if self._mentions(node, names):
                        site = self._site(node, case, names)
                        sites.append(site)
                        forms.add(site.kind.split(".")[0] if site.kind in ("==", "!=") or
                                  site.kind.startswith("helper.") else site.kind)
                        if len(operands) > 1:
                            forms.add("and-chain")
        except Unsupported as exc:
            return CasePlan([], {}, [], [], "unsupported", str(exc))
        except RecursionError:
            return CasePlan([], {}, [], [], "unsupported", "test text nested too deeply")
        helpers = sorted({s.kind[7:] for s in sites if s.kind.startswith("helper.")})
        form = "no target" if not sites else "+".join(sorted(forms))
        return CasePlan(sites, arity, unpacks, helpers, form)


def plan_step(cases: list) -> list:
    planner = _Planner()
    return [planner.plan(c, i) for i, c in enumerate(cases)]


def decorate_helpers(case_text: str, helpers: list) -> str:
    """The case with `@__scicode_helper__` above each top-level def a site calls with the
    target (10.6's are_equivalent): the step's process records the call, the grader runs the
    helper (test text) on the recorded data.  Nothing else of the text changes."""
    if not helpers:
        return case_text
    tree = ast.parse(case_text)
    lines = case_text.splitlines(keepends=True)
    for node in sorted((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in helpers),
                       key=lambda n: -n.lineno):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        lines.insert(first, " " * node.col_offset + "@" + HELPER_DECORATOR + "\n")
    return "".join(lines)


# =============================================================================
# SHIM: the scicode import paths inside the sandbox, and the h5 reader
# =============================================================================
# Written as a package `scicode` (parse/parse.py, compare/cmp.py) into every
# worker's import path, and exec'd by the grader itself for its own use.
SHIM_PARSE = r'''
"""scicode.parse.parse, as provided by grade_scicode: the official h5 target encoding."""
import h5py
import numpy as np
import scipy.sparse

H5PY_FILE = "test_data.h5"


class TargetsMissing(KeyError):
    """A test's group is absent from the targets file (a harness fault)."""


def _decode(value):
    return value.decode("utf-8", errors="strict") if isinstance(value, bytes) else value


def read_sparse(group):
    """data+shape with row+col: COO; with blocksize: BSR; else CSR (a CSC matrix
    written by the official writer comes back as CSR, as upstream)."""
    data = group["data"][()]
    shape = tuple(int(s) for s in group["shape"][()])
    if "row" in group and "col" in group:
        return scipy.sparse.coo_matrix((data, (group["row"][()], group["col"][()])), shape=shape)
    if "blocksize" in group:
        return scipy.sparse.bsr_matrix((data, group["indices"][()], group["indptr"][()]),
                                       shape=shape,
                                       blocksize=tuple(int(b) for b in group["blocksize"][()]))
    return scipy.sparse.csr_matrix((data, group["indices"][()], group["indptr"][()]), shape=shape)


def read_list(group):
    """Children's raw values in name order (bytes stay bytes, as upstream); a
    child group, which upstream cannot read, is decoded as a datagroup."""
    return [group[k][()] if isinstance(group[k], h5py.Dataset) else read_datagroup(group[k])
            for k in group.keys()]


def read_dict(group):
    out = {}
    for key, obj in group.items():
        if isinstance(obj, h5py.Group):
            out[key] = read_sparse(obj["sparse_matrix"])
            continue
        value = obj[()]
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", errors="strict")
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def read_datagroup(group):
    """First key (h5py name order) `list` -> list, `sparse_matrix` -> sparse, else a
    dict; an empty group (an empty dict written officially) -> None, as upstream."""
    keys = list(group.keys())
    if not keys:
        return None
    if keys and keys[0] == "list":
        return read_list(group["list"])
    if keys and keys[0] == "sparse_matrix":
        return read_sparse(group["sparse_matrix"])
    return read_dict(group)


def read_value(obj):
    return _decode(obj[()]) if isinstance(obj, h5py.Dataset) else read_datagroup(obj)


def read_test_target(h5, step_id, test_number):
    """Target of test `test_number` (from 1) of `step_id`: one child unwrapped,
    several -> a tuple in h5py name order (var1, var10, var2, ...)."""
    path = f"{step_id}/test{test_number}"
    if path not in h5:
        raise TargetsMissing(f"group {path} not in the targets file")
    group = h5[path]
    if not isinstance(group, h5py.Group):
        raise TargetsMissing(f"{path} is not a group")
    keys = list(group.keys())
    if len(keys) == 1:
        return read_value(group[keys[0]])
    return tuple(read_value(group[k]) for k in keys)


def process_hdf5_to_tuple(step_id, test_num, h5py_file=None):
    """The official entry point: a list with one target per test case."""
    with h5py.File(h5py_file or H5PY_FILE, "r") as h5:
        return [read_test_target(h5, step_id, i + 1) for i in range(test_num)]
'''

SHIM_CMP = r'''
"""scicode.compare.cmp, as provided by grade_scicode (official semantics)."""
import sys
import numpy as np
import scipy.sparse

_SPARSE = (scipy.sparse.csr_matrix, scipy.sparse.csc_matrix, scipy.sparse.bsr_matrix,
           scipy.sparse.coo_matrix)


def _is_symbol(x):
    sympy = sys.modules.get("sympy")     # a Symbol exists only if sympy was imported
    return sympy is not None and isinstance(x, sympy.Symbol)


def process_symbol_in_dict(d):
    """Symbol values become str; a Symbol key becomes str and keeps the ORIGINAL
    value (upstream's order of operations: a Symbol value under a Symbol key stays a Symbol)."""
    out = {}
    for key, value in d.items():
        out[key] = str(value) if _is_symbol(value) else value
        if _is_symbol(key):
            out[str(key)] = d[key]
            out.pop(key)
    return out


def are_dicts_close(dict1, dict2, atol=1e-8, rtol=1e-5):
    dict1, dict2 = process_symbol_in_dict(dict1), process_symbol_in_dict(dict2)
    if dict1.keys() != dict2.keys():
        return False
    for key in dict1:
        v1, v2 = dict1[key], dict2[key]
        if isinstance(v1, str) or _is_symbol(v1):
            if not v1 == v2:
                return False
        elif isinstance(v1, _SPARSE):
            if not np.allclose(v1.toarray(), v2.toarray(), atol=atol, rtol=rtol):
                return False
        else:
            try:
                if not np.allclose(v1, v2, atol=atol, rtol=rtol):
                    return False
            except ValueError:
                if not v1 == v2:
                    return False
    return True


def are_csc_matrix_close(matrix1, matrix2):
    return np.allclose(matrix1.toarray(), matrix2.toarray())


def cmp_tuple_or_list(var1, var2):
    if len(var1) != len(var2):
        return False
    for v1, v2 in zip(var1, var2):
        if isinstance(v1, dict):
            if not are_dicts_close(v1, v2):
                return False
        elif isinstance(v1, (scipy.sparse.csr_matrix, scipy.sparse.csc_matrix)):
            if not are_csc_matrix_close(v1, v2):
                return False
        elif isinstance(v1, bool):
            if not v1 == v2:
                return False
        else:
            try:
                if not np.allclose(v1, v2):
                    return False
            except ValueError:
                if not v1 == v2:
                    return False
    return True
'''

SHIM_FILES = {"scicode/__init__.py": '"""grade_scicode shim of the scicode package."""\n',
              "scicode/parse/__init__.py": "", "scicode/parse/parse.py": SHIM_PARSE,
              "scicode/compare/__init__.py": "", "scicode/compare/cmp.py": SHIM_CMP}


def write_shim(root: str) -> str:
    for rel, text in SHIM_FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    return root


def shim_module(which: str):
    """The shim's parse or cmp module loaded in this process (tests and the grader use it)."""
    import types
    key = f"_grade_scicode_shim_{which}"
    if key not in sys.modules:
        mod = types.ModuleType(key)
        exec(compile(SHIM_PARSE if which == "parse" else SHIM_CMP, f"<shim {which}>", "exec"),
             mod.__dict__)
        sys.modules[key] = mod
    return sys.modules[key]


def check_h5(path: str) -> list:
    """The targets file opens, and its sha256 against the official one."""
    if not os.path.isfile(path):
        return [Check("input.usage", Status.FAIL, f"targets file {path} missing (usage error)")]
    try:
        import h5py
        with h5py.File(path, "r") as h5:
            n = len(h5.keys())
    except Exception as exc:
        return [Check("input.fatal", Status.FAIL,
                      f"targets file unreadable: {type(exc).__name__}: {str(exc)[:120]}")]
    digest = sha256_file(path)
    official = SPEC["official_sha256"]["test_data.h5"]
    if digest == official:
        return [Check("input.h5", Status.PASS, f"{n} step groups; sha256 matches the official test_data.h5")]
    return [Check("input.h5", Status.INFO, f"{n} step groups; sha256 {digest[:12]} DIFFERS from the "
                  f"official test_data.h5 {official[:12]} (a locally built targets file?)", digest, official)]


# =============================================================================
# COMPARISON RECORDS: decoded and judged in the grader's own process
# =============================================================================
# A record is JSON the step's process wrote: plain values, numpy arrays as .npy bytes
# (np.load with allow_pickle=False), tagged tuples/dicts/sets/sparse matrices, and
# {"__target__": [case, path]} where the test passed a target stand-in.  Decoding never
# runs code of the record's choosing and never raises anything but RecordError.
class RecordError(Exception):
    pass


class Placeholder:
    """Where a record held a target stand-in."""
    __slots__ = ("case", "path")

    def __init__(self, case, path):
        self.case, self.path = case, path

    def __repr__(self):
        return f"<target of case {self.case + 1}{''.join(f'[{p[1]!r}]' for p in self.path)}>"


class Opaque:
    """A computed value the step's process could not express as data (a generation's object):
    it equals nothing, and numpy cannot compare it."""
    __slots__ = ("name",)
    __array_ufunc__ = None

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = object.__hash__

    def __array__(self, *args, **kwargs):
        raise TypeError(f"a {self.name} object cannot be compared outside the step's process")

    def __repr__(self):
        return f"<{self.name} object>"


def _npy(text: str):
    import base64
    import io
    import numpy
    try:
        return numpy.load(io.BytesIO(base64.b64decode(text.encode("ascii"), validate=True)),
                          allow_pickle=False)
    except Exception as exc:
        raise RecordError(f"bad array data ({type(exc).__name__})")


def decode_value(obj, depth: int = 0):
    """A record value -> Python/numpy/scipy data.  RecordError on anything unexpected."""
    if depth > 200:
        raise RecordError("nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode_value(v, depth + 1) for v in obj]
    if not isinstance(obj, dict) or len(obj) != 1:
        raise RecordError("not a tagged value")
    (tag, v), = obj.items()
    if tag == "__tuple__" and isinstance(v, list):
        return tuple(decode_value(x, depth + 1) for x in v)
    if tag in ("__set__", "__frozenset__") and isinstance(v, list):
        items = [decode_value(x, depth + 1) for x in v]
        try:
            return set(items) if tag == "__set__" else frozenset(items)
        except TypeError:
            raise RecordError("unhashable set member")
    if tag == "__dict__" and isinstance(v, list):
        out = {}
        for kv in v:
            if not isinstance(kv, list) or len(kv) != 2:
                raise RecordError("bad dict item")
            key = decode_value(kv[0], depth + 1)
            try:
                out[key] = decode_value(kv[1], depth + 1)
            except TypeError:
                raise RecordError("unhashable dict key")
        return out
    if tag == "__float__" and v in ("nan", "inf", "-inf"):
        return float(v)
    if tag == "__complex__" and isinstance(v, list) and len(v) == 2:
        return complex(decode_value(v[0], depth + 1), decode_value(v[1], depth + 1))
    if tag == "__bytes__" and isinstance(v, str):
        import base64
        try:
            return base64.b64decode(v.encode("ascii"), validate=True)
        except Exception:
            raise RecordError("bad bytes")
    if tag == "__array__" and isinstance(v, str):
        return _npy(v)
    if tag == "__npscalar__" and isinstance(v, str):
        arr = _npy(v)
        if arr.ndim != 0:
            raise RecordError("a numpy scalar that is not 0-d")
        return arr[()]
    if tag == "__objarray__" and isinstance(v, list) and len(v) == 2 and isinstance(v[0], list):
        import numpy
        shape, items = v
        if not all(isinstance(n, int) and n >= 0 for n in shape) or not isinstance(items, list) \
                or math.prod(shape) != len(items):
            raise RecordError("bad object array")
        arr = numpy.empty(len(items), dtype=object)
        for k, x in enumerate(items):
            arr[k] = decode_value(x, depth + 1)
        return arr.reshape(shape)
    if tag == "__sparse__" and isinstance(v, dict):
        import numpy
        import scipy.sparse
        try:
            fmt, shape, as_array = v["format"], tuple(v["shape"]), bool(v["array"])
            data, row, col = (_npy(v[k]) for k in ("data", "row", "col"))
            if fmt not in ("csr", "csc", "coo", "bsr", "lil", "dok", "dia") or len(shape) != 2 or \
                    not all(isinstance(n, int) and 0 <= n < 1 << 40 for n in shape):
                raise ValueError("format/shape")
            if shape[0] * shape[1] > SPEC["max_broadcast"]:     # the comparators call toarray()
                raise RecordError(f"a sparse matrix of shape {shape} is too large to compare")
            cls = scipy.sparse.coo_array if as_array else scipy.sparse.coo_matrix
            m = cls((data, (row.astype(numpy.int64), col.astype(numpy.int64))), shape=shape)
            return m.asformat(fmt)
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"bad sparse matrix ({type(exc).__name__})")
    if tag == "__target__" and isinstance(v, list) and len(v) == 2 and isinstance(v[0], int) \
            and isinstance(v[1], list):
        return Placeholder(v[0], v[1])
    if tag == "__opaque__" and isinstance(v, str):
        return Opaque(v[:80])
    raise RecordError(f"unknown tag {str(tag)[:30]!r}")


def _has_placeholder(value, depth=0) -> bool:
    if isinstance(value, Placeholder):
        return True
    if depth > 200:
        return True
    if isinstance(value, dict):
        return any(_has_placeholder(k, depth + 1) or _has_placeholder(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_placeholder(v, depth + 1) for v in value)
    if type(value).__name__ == "ndarray" and value.dtype == object:
        return any(_has_placeholder(v, depth + 1) for v in value.ravel())
    return False


def _matches(tse, value) -> bool:
    """The record holds, where the plan has a target expression, exactly its stand-ins."""
    if tse[0] == "path":
        return isinstance(value, Placeholder) and value.case == tse[1] and value.path == tse[2]
    kind = tuple if tse[0] == "tuple" else list
    return type(value) is kind and len(value) == len(tse[1]) and all(_matches(t, v) for t, v in zip(tse[1], value))


def resolve_target(tse, targets: dict):
    """The real value of a target expression of the plan (the grader's targets; the method
    names are the plan's whitelist)."""
    if tse[0] != "path":
        parts = [resolve_target(t, targets) for t in tse[1]]
        return tuple(parts) if tse[0] == "tuple" else parts
    value = targets[tse[1]]
    for step in tse[2]:
        if step[0] == "i":
            value = value[step[1]]
        elif step[0] == "u":
            value = list(value)[step[1]]
        elif step[0] == "m" and step[1] in TARGET_METHODS:
            value = getattr(value, step[1])()
        else:
            raise RecordError("bad target path")
    return value


class _RefusingNumpy:
    """numpy as the grader's comparisons see it: numpy's own answer, except that allclose /
    isclose refuse a vacuous pass (one operand empty, the other not; numpy says True) and a
    comparison whose broadcast would be absurdly larger than both operands."""

    def __init__(self):
        import numpy
        self._np = numpy

    def __getattr__(self, name):
        return getattr(self._np, name)

    def _guard(self, a, b):
        np = self._np
        sa, sb = np.shape(a), np.shape(b)
        if (0 in sa) != (0 in sb):
            return "vacuous"
        size = math.prod(np.broadcast_shapes(sa, sb))
        if size > max(math.prod(sa), math.prod(sb), 1) and size > SPEC["max_broadcast"]:
            return "broadcast"
        return None

    def allclose(self, a, b, *args, **kwargs):
        if self._guard(a, b):
            return False
        return self._np.allclose(a, b, *args, **kwargs)

    def isclose(self, a, b, *args, **kwargs):
        if self._guard(a, b):
            return self._np.zeros(1, dtype=bool)
        return self._np.isclose(a, b, *args, **kwargs)


def _grader_cmp():
    """The shim's comparators in the grader's process, over the refusing numpy (its own copy:
    shim_module("cmp") keeps numpy's answers)."""
    import types
    key = "_grade_scicode_grader_cmp"
    if key not in sys.modules:
        mod = types.ModuleType(key)
        exec(compile(SHIM_CMP, "<grader cmp>", "exec"), mod.__dict__)
        mod.np = _RefusingNumpy()
        sys.modules[key] = mod
    return sys.modules[key]


def helper_namespace(deps: str, cases: list, upto: int) -> dict:
    """The test's own functions (its text: defs of cases 1..upto) with the problem's import
    lines, for the helpers a site calls with the target.  Test text only: no generated code."""
    ns = {"__name__": "scicode_helpers", "__builtins__": __builtins__}
    for line in deps.splitlines():
        try:
            exec(compile(line.strip(), "<deps>", "exec"), ns)
        except Exception:
            pass
    for text in cases[:upto + 1]:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                try:
                    exec(compile(ast.Module(body=[node], type_ignores=[]), "<test helper>", "exec"), ns)
                except Exception:
                    pass
    return ns


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def evaluate_site(site: Site, record, targets: dict, helpers) -> tuple:
    """(passed, reason) of one comparison: the record checked against the plan, then the
    comparison made here with the official semantics."""
    if not isinstance(record, dict):
        raise RecordError("not a record")
    if site.kind in ("==", "!="):
        if record.get("kind") != site.kind or set(record) != {"kind", "target", "other"}:
            raise RecordError(f"expected a `{site.kind}` record for `{site.text[:60]}`")
        tslot = next(s for s in site.slots if s[0] == "target")
        if not _matches(tslot[1], decode_value(record["target"])):
            raise RecordError(f"`{site.text[:60]}` recorded another target part")
        other = decode_value(record["other"])
        if _has_placeholder(other):
            raise RecordError(f"`{site.text[:60]}`: the computed side holds the target stand-in")
        vals = [resolve_target(s[1], targets) if s[0] == "target" else s[1] if s[0] == "const" else other
                for s in site.slots]
        try:
            if _RefusingNumpy()._guard(*vals) == "broadcast":
                return False, f"`{site.text[:60]}`: a broadcast far larger than both sides"
        except Exception:
            pass            # not array-like: Python's own `==`
        try:
            res = vals[0] == vals[1] if site.kind == "==" else vals[0] != vals[1]
            ok = bool(res)
        except Exception as exc:
            return False, f"{type(exc).__name__}: {str(exc)[:120]}"
        return ok, "" if ok else f"`{site.text[:80]}` is False (computed {_short(other)})"
    if record.get("kind") != site.kind or set(record) != {"kind", "args", "kwargs"} or \
            not isinstance(record["args"], list) or not isinstance(record["kwargs"], dict):
        raise RecordError(f"expected a {site.kind} record for `{site.text[:60]}`")
    if len(record["args"]) != len(site.slots) or set(record["kwargs"]) != set(site.kwargs):
        raise RecordError(f"`{site.text[:60]}` recorded other arguments")
    args, kwargs, computed = [], {}, []
    for slot, raw in list(zip(site.slots, record["args"])) + \
            [(site.kwargs[k], record["kwargs"][k]) for k in sorted(site.kwargs)]:
        value = decode_value(raw)
        if slot[0] == "target":
            if not _matches(slot[1], value):
                raise RecordError(f"`{site.text[:60]}` recorded another target part")
            value = resolve_target(slot[1], targets)
        elif _has_placeholder(value):
            raise RecordError(f"`{site.text[:60]}`: the computed side holds the target stand-in")
        elif slot[0] == "const":
            value = slot[1]             # the test's literal, not what the record says
        else:
            computed.append(value)
        args.append(value)
    n = len(site.slots)
    args, kwargs = args[:n], dict(zip(sorted(site.kwargs), args[n:]))
    group, _, name = site.kind.partition(".")
    if group == "numpy":
        fn = getattr(_RefusingNumpy(), name)
    elif group == "cmp":
        fn = getattr(_grader_cmp(), name)
    else:
        fn = helpers().get(name)
        if fn is None:
            return False, f"test helper {name} could not be defined in the grader"
    try:
        ok = bool(fn(*args, **kwargs))
    except Exception as exc:
        return False, f"{site.kind}: {type(exc).__name__}: {str(exc)[:120]}"
    return ok, "" if ok else (f"`{site.text[:80]}` is False" +
                              (f" (computed {_short(computed[0])})" if computed else ""))


def evaluate_case(plan: CasePlan, records, targets: dict, helpers) -> dict | None:
    """None when every comparison of the case holds; else the case's failure."""
    if plan.error:
        return {"type": "UnsupportedTargetUse", "message": plan.error, "origin": "grader"}
    try:
        if not isinstance(records, list):
            raise RecordError("no records")
        if len(records) != len(plan.sites):
            raise RecordError(f"{len(records)} comparison record(s) with the target, the test "
                              f"makes {len(plan.sites)}")
        for case, path, n in plan.unpacks:      # `a, b = target` must unpack the real target
            try:
                got = len(list(resolve_target(["path", case, path], targets)))
            except Exception as exc:
                return {"type": "TypeError", "message": f"cannot unpack the target: {exc}"[:200],
                        "origin": "test"}
            if got != n:
                return {"type": "ValueError", "message": f"the target unpacks to {got} values, the "
                        f"test names {n}", "origin": "test"}
        for site, rec in zip(plan.sites, records):
            ok, why = evaluate_site(site, rec, targets, helpers)
            if not ok:      # the test's own assertion: signature "AssertionError", as upstream's
                return {"type": "AssertionError", "message": "", "detail": why, "origin": "test"}
    except RecordError as exc:
        return {"type": "RecordMismatch", "message": str(exc)[:300], "origin": "submission"}
    except (RecursionError, MemoryError) as exc:
        return {"type": "RecordMismatch", "message": f"record not judgeable ({type(exc).__name__})",
                "origin": "submission"}
    return None


# =============================================================================
# HARNESS-FAULT CENSUS
# =============================================================================
def _not_raised_by_submission(f: dict) -> bool:
    """The failure did not pass through generated code: a generation that raises
    `NameError('target')`, `ModuleNotFoundError('scicode')` or its own `TargetsMissing`
    class must not void the run by imitating a harness signature."""
    return f.get("origin") != "submission" and not f.get("via_submission")


def _harness_evidence(f: dict, what: str) -> bool:
    """Is the harness to blame for a failure that names `what` (targets, shim, grader)?  By
    the grader's own evidence when it has it: it knows whether it delivered this case's
    target stand-in and whether the worker imported the shim before any generated code ran;
    a failure the grader itself found carries origin "grader".  Given the evidence, a
    delivered target or shim that went missing was removed by generated code: the model's.
    Without evidence (a failure list from elsewhere, e.g. an upstream log), the signature
    and where it was raised decide, as the seed's census does."""
    ev = f.get("evidence")
    if ev is None:
        return _not_raised_by_submission(f)
    if what == "grader":
        return f.get("origin") == "grader"
    return not ev.get(what, False)


HARNESS_RULES = (
    # (rule id, predicate over (signature, failure dict)), seed "Harness-fault census"
    ("target_name_error", lambda sig, f: re.match(r"NameError: name '(_scicode_)?target", sig) is not None
     and _harness_evidence(f, "targets")),
    ("scicode_module_missing", lambda sig, f: sig.startswith(("ModuleNotFoundError: No module named 'scicode",
                                                              "ImportError: cannot import name")) and "scicode" in sig
     and _harness_evidence(f, "shim")),
    ("h5_group_missing", lambda sig, f: sig.startswith(("TargetsMissing", "TargetsUnreadable"))
     and _harness_evidence(f, "grader")),
    # a dependency line of the problem failed to import (they run before any generated code)
    ("dependency_missing", lambda sig, f: f.get("phase") == "deps"),
    ("special_context_lost", lambda sig, f: bool(f.get("lost_context"))),
    ("worker_fault", lambda sig, f: sig.startswith("WorkerFault") and _harness_evidence(f, "grader")),
    # a test form the grader cannot judge without the target in the step's process
    ("target_form_unsupported", lambda sig, f: sig.startswith("UnsupportedTargetUse")
     and f.get("origin") == "grader"),
)
# the seed's named signatures: any occurrence indicts the run
INDICTING_RULES = ("target_name_error", "scicode_module_missing", "h5_group_missing")


def signature(failure: dict) -> str:
    """Exception type and normalised message: numbers, addresses and long quotes folded."""
    kind = failure.get("type") or "Error"
    msg = (failure.get("message") or "").strip().splitlines()
    msg = msg[0] if msg else ""
    msg = re.sub(r"0x[0-9a-fA-F]+", "ADDR", msg)
    msg = re.sub(r"(?<![\w'])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", "N", msg)
    msg = re.sub(r"'([^']{40})[^']+'", r"'\1...'", msg)[:160]
    origin = failure.get("origin")
    where = f" (in {origin})" if kind == "AssertionError" and origin in ("submission", "library") else ""
    return f"{kind}{where}: {msg}" if msg else f"{kind}{where}"


def classify(failure: dict) -> str:
    """'harness:<rule>' or 'model'."""
    sig = signature(failure)
    for rule, pred in HARNESS_RULES:
        if pred(sig, failure):
            return f"harness:{rule}"
    return "model"


def is_test_verdict(failure: dict) -> bool:
    """A plain assertion raised by the test itself: the model's wrong answer."""
    return failure.get("type") == "AssertionError" and failure.get("origin") == "test"


def census(failures: list, strict: bool) -> tuple:
    """(records, indicted, reasons) from each failed step's first failure, each classified
    by its own evidence (a signature shared by failures of different classes is counted once
    per class, never by whichever failure came first).
    Indict when: a seed-named harness class occurs; or >= 10 failures all share one
    signature and they are not all the test's own assertion; or, --strict, any
    harness-classified failure."""
    counts, samples = {}, {}
    for f in failures:
        key = (signature(f), classify(f))
        counts[key] = counts.get(key, 0) + 1
        samples.setdefault(key, []).append(f.get("step", "?"))
    reasons = []
    for (sig, cls), n in counts.items():
        rule = cls.partition(":")[2]
        if rule in INDICTING_RULES:
            reasons.append(f"{n}x {sig} ({rule})")
    total = len(failures)
    sigs = {sig for sig, _ in counts}
    if total >= SPEC["census_min_failures"] and len(sigs) == 1 and \
            not all(is_test_verdict(f) for f in failures):
        reasons.append(f"100% of {total} failures share one signature: {next(iter(sigs))}")
    harness = sum(n for (sig, cls), n in counts.items() if cls != "model")
    if strict and harness and not reasons:
        reasons.append(f"--strict: {harness} harness-fault failure(s)")
    records = []
    for (sig, cls), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        steps = samples[(sig, cls)]
        records.append(Check("census.signature", Status.INFO,
                             f"{n:>4}x [{cls}] {sig}  (steps {', '.join(steps[:6])}"
                             f"{', ...' if len(steps) > 6 else ''})", n, cls))
    if reasons:
        records.append(Check("census.verdict", Status.FAIL,
                             "harness indicted, score not certified: " + "; ".join(reasons),
                             harness, total))
    elif harness:
        records.append(Check("census.harness_faults", Status.REVIEW,
                             f"{harness} of {total} failure(s) are harness faults, counted as failed "
                             "steps but not the model's fault", harness, total))
        records.append(Check("census.verdict", Status.PASS,
                             f"{total} failure(s), no indicting pattern"))
    else:
        records.append(Check("census.verdict", Status.PASS,
                             f"{total} failure(s), all model faults" if total else "no failures"))
    return records, bool(reasons), reasons


# =============================================================================
# SANDBOX OPS: per-step results and records
# =============================================================================
@dataclasses.dataclass
class StepResult:
    step: str
    passed: bool
    cases: list                 # [{"i", "ok", "error"?}]
    failure: dict | None        # the first failure (what the official script would stop at)
    wall: float
    stdout: str = ""
    stderr: str = ""
    marker: bool = False        # dry run: SCICODE_PASS (DRY_RUN) came over the pipe


def _child_error(err) -> dict:
    """A failure as the step's process reported it, sanitised: plain strings, and never the
    origin "grader" (which only the grader's own findings carry)."""
    if not isinstance(err, dict):
        return {"type": "ProcessExit", "message": "malformed case report", "origin": "submission"}
    out = {k: str(err.get(k) or "")[:500] for k in ("type", "message", "trace")}
    origin = err.get("origin")
    out["origin"] = origin if origin in ("test", "submission", "library") else "submission"
    out["via_submission"] = bool(err.get("via_submission"))
    return out


def judge(prog: StepProgram, reply: dict, dry: bool, plans: list | None = None,
          targets: dict | None = None, missing: dict | None = None, helpers=None) -> StepResult:
    """A step's verdict.  The worker's authenticated messages say what the test code did
    (and carry the comparison records); the grader's own evidence (which targets it could
    read: `targets`, `missing`) and its plans of the test text decide each case."""
    plans = plans if plans is not None else plan_step(prog.cases)
    targets, missing = targets or {}, missing or {}
    helpers = helpers or (lambda: helper_namespace(prog.deps, prog.cases, len(prog.cases) - 1))
    evidence = {"targets": True, "shim": bool(reply.get("shim", True))}
    n = len(prog.cases)
    reported, twice, records = [None] * n, set(), [[] for _ in range(n)]
    phase_failure, marker, done, tamper = None, False, False, []
    for msg in reply.get("messages", []):
        if not isinstance(msg, dict):
            continue
        if "phase" in msg and not msg.get("ok"):
            if phase_failure is None:
                phase_failure = dict(_child_error(msg.get("error")), phase=str(msg["phase"])[:20])
        elif "rec" in msg and type(msg["rec"]) is int and 0 <= msg["rec"] < n:
            records[msg["rec"]].append(msg.get("data"))
        elif "case" in msg and type(msg["case"]) is int and 0 <= msg["case"] < n:
            if reported[msg["case"]] is not None:
                twice.add(msg["case"])
            reported[msg["case"]] = msg
        elif msg.get("marker") == SPEC["dry_marker"]:
            marker = True
        elif msg.get("done") is True:
            done = True
            tamper = [str(t)[:80] for t in msg.get("tamper") or []][:20]
    out, case_failure, unreported, grader_found = [], None, False, None
    for i in range(n):
        c, err = reported[i], None
        if i in missing:                    # the grader's own finding, whatever the child said
            err = dict(missing[i], origin="grader")
        elif dry:
            err = None
        elif c is None:
            out.append({"i": i + 1, "ok": False, "error": "not run"})
            unreported = True
            continue
        elif i in twice:
            err = {"type": "RecordMismatch", "message": "case reported twice", "origin": "submission"}
        elif not c.get("ok"):
            err = _child_error(c.get("error"))
        else:
            err = evaluate_case(plans[i], records[i], targets, helpers)
        if err is None:
            out.append({"i": i + 1, "ok": True})
            continue
        err = dict(err, phase=f"case {i + 1}", evidence=dict(evidence, targets=i not in missing))
        out.append({"i": i + 1, "ok": False,
                    "error": f"{err['type']}: {err.get('message') or err.get('detail') or ''}"[:300]})
        case_failure = case_failure or err
        if err.get("origin") == "grader" and grader_found is None:
            grader_found = err          # the harness's fault is reported whatever else failed
    failure = grader_found or (dict(phase_failure, evidence=evidence) if phase_failure else None) or case_failure
    status = reply.get("status", "ok")
    ev = {"evidence": evidence}
    if tamper and not grader_found:     # a replaced comparator or builtin outranks what the tests then said
        failure = {"type": "Tampering", "message": "replaced " + ", ".join(tamper), "phase": "run",
                   "origin": "submission", **ev}
    if failure is None and status == "timeout":
        failure = {"type": "Timeout", "message": reply.get("reason", "timed out"), "phase": "run", **ev}
    if failure is None and status != "ok":
        worker = status == "worker"
        failure = {"type": "WorkerFault" if worker else "ProcessDied", "message": reply.get("reason", status),
                   "phase": "run", "origin": "grader" if worker else "submission", **ev}
    if failure is None and not done:
        failure = {"type": "ProcessExit", "message": "exited before its tests completed "
                   f"({reply.get('reason') or 'no completion message'})", "phase": "run", **ev}
    if failure is None and unreported:
        failure = {"type": "ProcessExit", "message": "not every test case reported", "phase": "run", **ev}
    if failure is None and dry and not marker:
        failure = {"type": "NoDryMarker", "message": f"{SPEC['dry_marker']} not received", "phase": "run", **ev}
    return StepResult(prog.step, failure is None, out, failure, float(reply.get("wall", 0.0)),
                      str(reply.get("stdout", "")), str(reply.get("stderr", "")), marker)


def pre_failed(prog: StepProgram) -> StepResult:
    """A step that cannot run (missing/unextractable generation): a model failure."""
    return StepResult(prog.step, False, [{"i": i + 1, "ok": False, "error": "not run"}
                                         for i in range(len(prog.cases))],
                      dict(prog.error, phase="extract"), 0.0)


def step_records(progs: dict, results: dict, dry: bool, strict: bool) -> tuple:
    """(records, failures for the census) for every in-scope step."""
    records, failures = [], []
    for step, prog in progs.items():
        res = results[step]
        n_ok = sum(c["ok"] for c in res.cases)
        review = strict and bool(prog.audit)
        if res.passed and not review:
            msg = (f"{SPEC['dry_marker']}: plumbing ok, {len(prog.cases)} target(s) bound" if dry
                   else f"{n_ok}/{len(prog.cases)} cases ({res.wall:.1f} s)")
            records.append(Check(f"step.{step}", Status.PASS, msg, n_ok, len(prog.cases)))
        else:
            f = dict(res.failure or {"type": "Review", "message": "flagged code under --strict"},
                     step=step, lost_context=prog.lost_context)
            failures.append(f)
            cls = classify(f)
            msg = (f.get("message") or f.get("detail") or "").strip().splitlines()
            records.append(Check(f"step.{step}", Status.FAIL,
                                 f"{n_ok}/{len(prog.cases)} cases; {f.get('phase', '?')}: {f.get('type')}"
                                 f"{': ' + msg[0][:160] if msg else ''} [{cls}]", n_ok, len(prog.cases),))
        if prog.audit:
            records.append(Check(f"audit.{step}", Status.REVIEW,
                                 "generation " + "; ".join(prog.audit[:4]), prog.audit))
    return records, failures


def summary_keys(checks: list, problems: dict, split: str, context: str, dry: bool) -> dict:
    """The benchmark's key lines, from the step records (typed)."""
    steps = {c.id[5:]: c.status is Status.PASS for c in checks if c.id.startswith("step.")}
    by_problem = {}
    for sid, ok in steps.items():
        by_problem.setdefault(sid.split(".")[0], []).append(ok)
    solved = sum(all(v) for v in by_problem.values())
    n_steps, n_probs = len(steps), len(by_problem)
    passed = sum(steps.values())
    harness = sum(1 for c in checks if c.id.startswith("step.") and "[harness:" in c.message)
    keys = {"split": split, "context": context, "mode": "DRY_RUN" if dry else "normal",
            "steps_passed": passed, "steps_in_scope": n_steps,
            "step_accuracy": round(passed / n_steps, 4) if n_steps else None,
            "problems_solved": solved, "problems_in_scope": n_probs,
            "problem_accuracy": round(solved / n_probs, 4) if n_probs else None,
            "harness_fault_steps": harness}
    return keys


def _step_key(step: str) -> tuple:
    a, _, b = step.partition(".")
    return (int(a) if a.isdigit() else 0, int(b) if b.isdigit() else 0)


def execute_steps(progs: dict, args, selected: list) -> tuple:
    """Run every runnable step in the sandbox and judge it as its reply arrives: the
    targets are read here, in the grader's process, and never sent anywhere.  With --out,
    each judged result is kept as it is made and reused by a rerun of the same inputs and
    grader (ResumeStore); one progress line per finished step.  (results, records)"""
    results = {sid: pre_failed(pr) for sid, pr in progs.items() if pr.code is None}
    plans = {sid: plan_step(pr.cases) for sid, pr in progs.items() if pr.code is not None}
    h5 = os.path.abspath(args.h5)
    missing = {sid: targets_present(h5, sid, len(progs[sid].cases)) for sid in plans}
    jobs = {sid: make_job(progs[sid], plans[sid], args.timeout, args.mem_gb, args.dry_run) for sid in plans}
    kept = ResumeStore(args.out, h5, list(jobs.values())) if args.out else None
    reused = kept.results if kept else {}
    todo = [job for sid, job in jobs.items() if sid not in reused]
    records = []
    if kept:
        records.append(Check("run.resume", Status.INFO, f"{len(reused)} of {len(jobs)} step(s) reused "
                             f"from {kept.dir} (same program, targets file and grader)", len(reused), len(jobs)))
        progress(f"resume: {len(reused)} of {len(jobs)} step(s) already graded in {kept.dir}, "
                 f"{len(todo)} to run")
    t1, tally = time.monotonic(), {"done": 0, "passed": 0}

    def helper_ns(sid):
        prog = progs[sid]
        return functools.lru_cache(None)(lambda: helper_namespace(prog.deps, prog.cases, len(prog.cases) - 1))

    def prepare(sid):
        """While the step runs, in the grader's process: its targets, and the tests' own
        helpers (test text and import lines) where a case calls one with the target."""
        helpers = helper_ns(sid)
        if not args.dry_run and any(p.helpers for p in plans[sid]):
            helpers()
        return (({}, {}) if args.dry_run else read_step_targets(h5, sid, len(progs[sid].cases))), helpers

    def on_reply(sid, reply, read):
        prog = progs[sid]
        (targets, errors), helpers = read if read is not None else prepare(sid)
        del read
        res = judge(prog, reply, args.dry_run, plans[sid], targets, {**errors, **missing[sid]}, helpers)
        del targets
        if kept and _INTERRUPT["at"] is None:      # a step cut short by Ctrl-C is not a result
            kept.save(jobs[sid], res)
        tally["done"] += 1
        tally["passed"] += res.passed
        progress_count("steps", tally["done"], len(todo), t1, f"{tally['passed']} passed, last {sid}")
        return res

    n_jobs = worker_count(args, len(todo))
    judged = {}
    pool = _PRESTARTED.pop("pool", None)
    if todo:
        pool = pool or WorkerPool(n_jobs, warm_modules(selected, [t for pr in progs.values()
                                                                  for t in (pr.context, pr.code)]))
        try:
            judged = run_steps(todo, n_jobs, pool, on_reply, prepare, warm_grader)
        finally:
            pool.close()
    elif pool:
        pool.close()
    for sid in jobs:
        results[sid] = reused.get(sid) or judged.get(sid) or judge(
            progs[sid], {"status": "worker", "reason": "WorkerFault: no reply"}, args.dry_run,
            plans[sid], {}, missing[sid])
    return results, records


def isolation_checks(strict: bool) -> list:
    """INFO sandbox.isolation; without file isolation the targets file is within reach of
    the step processes' file view: REVIEW, and --strict does not certify."""
    out = [sandbox_check()]
    if not sandbox_level()["file_isolation"]:
        out.append(Check("sandbox.file_isolation", Status.REVIEW,
                         "the step processes can see the host's files (the targets file included): "
                         + sandbox_level()["note"] + (STRICT_UNCERTIFIED if strict else ""),
                         False, True))
    return out


STRICT_UNCERTIFIED = "; --strict does not certify this run"     # exit 3, as an indicted run


def strict_uncertified(checks: list) -> bool:
    """--strict asked for a certified run and the step processes could see the host's files."""
    return any(c.id == "sandbox.file_isolation" and c.status is Status.REVIEW
               and c.message.endswith(STRICT_UNCERTIFIED) for c in checks)


# =============================================================================
# SUBPROCESS RUNNER: warm workers, one forked and killable child per step
# =============================================================================
# The worker prologue (adapted from the common DRIVER_PROLOGUE: the request
# stream stays open, one JSON job per line).  `send(obj)` writes one
# token-tagged JSON line to a pipe the runner opened.
WORKER_PROLOGUE = r'''
import json as _json, os as _os, sys as _sys
_INIT = _json.loads(_sys.stdin.readline())
_TOKEN = _INIT.pop("token")
_FD = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_FD, False)
def send(obj, _fd=_FD, _tok=_TOKEN, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps({"token": _tok, "body": obj}, allow_nan=True, default=str) + "\n").encode()
    while data:
        data = data[_write(_fd, data):]
_sys.path.insert(0, _INIT["shim_dir"])
_os.chdir(_INIT["work_dir"])
'''

# The worker body: warm imports, then per job fork a child that runs deps -> context ->
# code -> cases in one namespace and reports each outcome on its own token pipe; enforce
# the timeout; kill the child's group.  No target is ever in this process: `target` is
# an opaque stand-in, and the comparisons that involve it record the computed side as
# data (JSON, .npy bytes) for the grader, which judges them in its own process.
WORKER_BODY = r'''
import _thread, base64, builtins, io, random, resource, select, shutil, signal, tempfile, time, traceback
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
for _m in _INIT["warm"]:
    try:
        __import__(_m)
    except BaseException:
        pass
import numpy, scicode.compare.cmp as _SCC
__import__("scicode.parse.parse")
_SHIM_OK = all(_n in _sys.modules for _n in ("scicode.parse.parse", "scicode.compare.cmp"))
_CUR = {"case": -1, "arity": {}, "send": None}


def _emit(record):
    """A comparison's record leaves the process at once (nothing left to edit later)."""
    _CUR["send"]({"rec": _CUR["case"], "data": record})
_METHODS = frozenset(_INIT["target_methods"])


class _Target:
    """The opaque stand-in bound to `target`: no value, only its place (case, path)."""
    __slots__ = ("_case", "_path")
    __array_ufunc__ = None

    def __init__(self, case, path):
        self._case, self._path = case, path

    def __eq__(self, other):
        _emit({"kind": "==", "target": _ser(self), "other": _ser(other)})
        return True

    def __ne__(self, other):
        _emit({"kind": "!=", "target": _ser(self), "other": _ser(other)})
        return True

    __hash__ = object.__hash__

    def __getitem__(self, key):
        if isinstance(key, numpy.integer):
            key = int(key)
        if type(key) not in (int, str):
            raise TypeError("the target stand-in is indexed by a constant only")
        return _Target(self._case, self._path + [["i", key]])

    def __iter__(self):
        n = _CUR["arity"].get(_json.dumps([self._case, self._path]))
        if n is None:
            raise TypeError("the target stand-in is not iterable here")
        return iter([_Target(self._case, self._path + [["u", k]]) for k in range(n)])

    def __getattr__(self, name):
        if name in _METHODS:
            return lambda: _Target(self._case, self._path + [["m", name]])
        raise AttributeError(f"the target stand-in has no attribute {name!r} in this process")

    def __bool__(self):
        raise TypeError("the target's truth value is decided by the grader")

    def __len__(self):
        raise TypeError("the target's length is not known in this process")

    def __array__(self, *args, **kwargs):
        raise TypeError("the target is not available in this process")

    def __repr__(self):
        return "<target>"


def _b64npy(arr):
    buf = io.BytesIO()
    numpy.lib.format.write_array(buf, arr, allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _ser(v, depth=0):
    """What the test passed in, as data.  Exact types, read through the base classes' own
    slots (a subclass's overrides do not decide what is recorded)."""
    if depth > 100:
        return {"__opaque__": "deeply nested"}
    t = type(v)
    if t is _Target:
        return {"__target__": [v._case, v._path]}
    if v is None or v is True or v is False:
        return v
    if isinstance(v, bool):
        return bool.__bool__(v)
    if isinstance(v, int):
        return int.__int__(v)
    if isinstance(v, float):
        f = float.__float__(v)
        return f if f == f and f not in (float("inf"), float("-inf")) else {"__float__": repr(f)}
    if isinstance(v, complex):
        return {"__complex__": [_ser(complex.real.__get__(v)), _ser(complex.imag.__get__(v))]}
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, numpy.ndarray):
        arr = numpy.ndarray.view(v, numpy.ndarray)
        if arr.dtype.hasobject:
            return {"__objarray__": [list(arr.shape), [_ser(x, depth + 1) for x in arr.ravel()]]}
        return {"__array__": _b64npy(numpy.ascontiguousarray(arr))}
    if isinstance(v, numpy.generic):
        arr = numpy.asarray(v)
        if arr.dtype.hasobject:
            return {"__opaque__": t.__name__}
        return {"__npscalar__": _b64npy(arr)}
    if isinstance(v, tuple):
        return {"__tuple__": [_ser(x, depth + 1) for x in tuple.__iter__(v)]}
    if isinstance(v, list):
        return [_ser(x, depth + 1) for x in list.__iter__(v)]
    if isinstance(v, dict):
        return {"__dict__": [[_ser(k, depth + 1), _ser(x, depth + 1)] for k, x in dict.items(v)]}
    if isinstance(v, (set, frozenset)):
        return {"__set__" if isinstance(v, set) else "__frozenset__":
                [_ser(x, depth + 1) for x in (set.__iter__(v) if isinstance(v, set) else frozenset.__iter__(v))]}
    sp = _sys.modules.get("scipy.sparse")
    if sp is not None and sp.issparse(v):
        c = v.tocoo()
        return {"__sparse__": {"format": v.format, "shape": [int(n) for n in v.shape],
                               "array": not isinstance(v, sp.spmatrix), "data": _b64npy(numpy.asarray(c.data)),
                               "row": _b64npy(numpy.asarray(c.row)), "col": _b64npy(numpy.asarray(c.col))}}
    sy = _sys.modules.get("sympy")
    if sy is not None and isinstance(v, sy.Basic):
        if getattr(v, "is_Number", False):
            try:
                z = complex(v)
                return _ser(z.real if z.imag == 0 else z)
            except BaseException:
                pass
        return str(v)
    for dtype in (None, float, complex):    # an array-like of a library (a matrix type, a
        try:                                # memoryview, a sympy matrix of numbers): its data
            arr = numpy.asarray(v, dtype=dtype)
            if not arr.dtype.hasobject:
                return {"__array__": _b64npy(numpy.ascontiguousarray(arr))}
        except BaseException:
            pass
    return {"__opaque__": t.__name__}


def _has_target(values, depth=0):
    for x in values:
        t = type(x)
        if t is _Target:
            return True
        if depth < 4 and (t is tuple or t is list) and _has_target(x[:4096], depth + 1):
            return True
        if depth < 4 and t is dict and _has_target(list(x.values())[:4096], depth + 1):
            return True
    return False


def _recorder(kind, fn):
    """A comparator as the tests see it: with a target stand-in among its arguments it
    records what it was passed and returns True; otherwise it is the library's own."""
    def comparator(*args, **kwargs):
        if _has_target(args) or _has_target(kwargs.values()):
            _emit({"kind": kind, "args": [_ser(a) for a in args],
                   "kwargs": {str(k): _ser(x) for k, x in kwargs.items()}})
            return True
        return fn(*args, **kwargs)
    comparator.__name__, comparator.__doc__, comparator.__wrapped__ = fn.__name__, fn.__doc__, fn
    comparator.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    comparator.__module__ = getattr(fn, "__module__", None)     # not the worker's module
    return comparator


def __scicode_helper__(fn):
    """A test-defined comparator called with the target: recorded, run by the grader."""
    return _recorder("helper." + fn.__name__, fn)


for _n in ("allclose", "isclose", "array_equal"):
    setattr(numpy, _n, _recorder("numpy." + _n, getattr(numpy, _n)))
for _n in ("cmp_tuple_or_list", "are_dicts_close", "are_csc_matrix_close"):
    setattr(_SCC, _n, _recorder("cmp." + _n, getattr(_SCC, _n)))

_HOOKS = frozenset(("__array_function__", "__array_ufunc__", "__array__", "__array_interface__",
                    "__array_struct__", "__array_priority__", "__array_wrap__", "__float__",
                    "__complex__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                    "__sub__", "__rsub__", "__abs__", "__bool__", "__len__", "__iter__", "__getitem__",
                    "__array_finalize__", "__add__", "__radd__", "__mul__", "__rmul__", "__truediv__",
                    "__rtruediv__", "__pow__", "__mod__", "__matmul__", "__neg__", "__round__", "__int__",
                    "__index__", "__and__", "__or__", "__invert__", "__getattr__", "__getattribute__", "__del__"))


def _library_class(k):
    """A static (C) type, or a class its module really exports under its name (not one
    made by exec'd code, whatever `__module__` it claims)."""
    if not k.__flags__ & (1 << 9):          # Py_TPFLAGS_HEAPTYPE: NoneType, float, numpy scalars
        return True
    mod = _sys.modules.get(k.__module__) if k.__module__ != "__main__" else None
    for part in k.__qualname__.split("."):
        mod = getattr(mod, part, None)
    return mod is k


def _rigged(x, depth=0):
    for k in type(x).__mro__:
        if not _HOOKS.isdisjoint(vars(k)) and not _library_class(k):
            return True
    if depth < 3 and isinstance(x, dict):
        x = list(dict.values(x))
    return depth < 3 and isinstance(x, (list, tuple)) and any(_rigged(v, depth + 1) for v in x[:256])


class Tampering(Exception):
    """Generated code replaced a comparator or builtin the tests rely on."""


def _tampered(before, now=None):
    now, out = now or _snapshot(whole=False), []
    for (m, n), v in before.items():
        if n == "*":        # a whole module's names, live: new ones may appear (lazy imports), none change
            d = vars(_sys.modules[m]) if m in _sys.modules else {}
            if len(d) < len(v) or not all(map(_is, d.values(), v)):
                out += [f"{m}.{k}" for k, x in zip(d, v) if d[k] is not x][:3] or [f"{m}.*"]
            continue
        w = now[(m, n)]
        if w != v:
            out.append("threading (a thread left running; shut pools down)" if m == "threading" else f"{m}.{n}")
    return out


def _generated(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(("<code ", "<context "))


def _checked(fn, before, step_function):
    """Defence in depth for the tests' own computations (`assert (f(x) > 0) == target`):
    when a function of generated code returns to the tests, the comparators and builtins
    must still be the objects they were, and the step's own function must not return an
    object whose class, made by the generation, overrides comparison or numpy hooks."""
    def checked(*args, **kwargs):
        out = fn(*args, **kwargs)
        bad = _tampered(before)
        if bad:
            raise Tampering("replaced " + ", ".join(bad))
        if step_function and _rigged(out):
            raise TypeError(f"returned {type(out).__name__} is or holds an object whose class, made by "
                            "the generation, overrides comparison/numpy hooks")
        return out
    checked.__name__, checked.__qualname__, checked.__doc__, checked.__wrapped__ = \
        fn.__name__, getattr(fn, "__qualname__", fn.__name__), fn.__doc__, fn
    return checked


def _check_generated(tns, before, step_name):
    """Wrap, in the tests' namespace, every function the generated code defined, and
    the methods of its classes (in place), with _checked."""
    import types
    for key, value in list(tns.items()):
        if isinstance(value, types.FunctionType) and _generated(value):
            tns[key] = _checked(value, before, key == step_name)
        elif isinstance(value, type) and vars(value).get("__module__") == "__main__":
            for attr, member in list(vars(value).items()):
                if attr.startswith("__") and attr not in ("__init__", "__call__"):
                    continue
                try:        # a class that refuses new attributes keeps its methods as they are
                    if isinstance(member, types.FunctionType) and _generated(member):
                        setattr(value, attr, _checked(member, before, False))
                    elif isinstance(member, (staticmethod, classmethod)) and _generated(member.__func__):
                        setattr(value, attr, type(member)(_checked(member.__func__, before, False)))
                except Exception:
                    pass


_GUARDED = [("numpy", n) for n in ("allclose", "isclose", "array_equal", "all", "any", "abs", "asarray",
                                    "ascontiguousarray", "ndarray", "generic", "integer")] + \
           [("builtins", n) for n in ("isinstance", "len", "all", "any", "abs", "__import__", "exec",
                                      "compile", "AssertionError", "bool", "float", "int", "zip", "print",
                                      "type", "str", "repr", "dict", "list", "tuple", "iter", "map", "vars")] + \
           [("scicode.compare.cmp", n) for n in ("cmp_tuple_or_list", "are_dicts_close",
                                                 "are_csc_matrix_close")]


_TARGET_SLOTS = ("__init__", "__eq__", "__ne__", "__hash__", "__getitem__", "__iter__", "__getattr__",
                 "__bool__", "__len__", "__array__", "__array_ufunc__", "_case", "_path")


def _fn_state(f):
    return (id(f), id(getattr(f, "__code__", None)), id(getattr(f, "__defaults__", None)))


def _recorder_state():
    """The recorder's own parts (functions with their code and defaults, the modules it
    uses), the interpreter's trace hooks and its threads (a hook could rewrite what the tests
    pass in before it is recorded)."""
    g = globals()
    fns = [vars(_Target).get(k) for k in _TARGET_SLOTS] + [g.get(k) for k in (
        "_emit", "_ser", "_has_target", "_b64npy", "_recorder")] + [_CUR.get("send")] + \
        [getattr(_sys.modules.get(m), n, None) for m, n in _GUARDED[:3] + _GUARDED[-3:]]
    return (tuple(_fn_state(f) for f in fns), id(type(_CUR)), id(g.get("_CUR")),
            tuple(id(g.get(k)) for k in ("numpy", "base64", "io", "_json", "_os", "_sys")),
            id(_json.dumps), id(_os.write), id(base64.b64encode), id(numpy.lib.format.write_array),
            id(_sys.gettrace()), id(_sys.getprofile()), _sys.getswitchinterval())


def _snapshot(whole=True):
    out = {(m, n): id(getattr(_sys.modules.get(m), n, None)) for m, n in _GUARDED}
    out[("recorder", "state")] = _recorder_state()
    out[("threading", "threads")] = _thread._count()   # one left running could rewrite a record first
    for m in _WHOLE_MODULES if whole else ():   # np.__dict__["sum"] = ... would rig `(np.sum(a) > b) == target`
        out[(m, "*")] = tuple(vars(_sys.modules[m]).values()) if m in _sys.modules else ()
    return out


_WHOLE_MODULES = ("numpy", "numpy.linalg", "numpy.random", "math", "cmath", "builtins")
from operator import is_ as _is


def _origin(exc):
    tb, fn = exc.__traceback__, ""
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return "test" if fn.startswith("<test ") else "submission" if fn.startswith("<") else "library"


def _via_submission(exc):
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(("<code ", "<context ")):
            return True
        tb = tb.tb_next
    return False


def _err(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:500], "origin": _origin(exc),
            "via_submission": _via_submission(exc),
            "trace": "".join(traceback.format_exception_only(type(exc), exc))[-300:]}


def _child(jfd, wfd, token, out_path):
    """The step's process.  Forked and confined ahead of its job (while the worker waited
    for the grader): session, output capture, seeds, namespace and the tamper snapshot are
    ready when the job arrives on `jfd`; its limits are set from the job before any of its
    code runs."""
    try:
        _os.setsid()
    except OSError:
        pass
    null = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(null, 0)
    out = _os.open(out_path, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o600)
    _os.dup2(out, 1)
    _os.dup2(out, 2)
    random.seed()
    numpy.random.seed()

    def csend(obj, _w=_os.write, _d=_json.dumps):
        data = (_d({"token": token, "body": obj}, allow_nan=True, default=str) + "\n").encode()
        while data:
            data = data[_w(wfd, data):]

    # the program's namespace is `__main__`, as the official test script is: generated code
    # that imports `__main__` (also as `__import__(__name__)`) finds its own namespace, not the
    # worker's state (the recorder's channel); multiprocessing pickles its functions by name
    import types
    main = types.ModuleType("__main__")
    ns = main.__dict__
    ns["__builtins__"] = builtins
    _sys.modules["__main__"] = main
    _CUR["send"] = csend
    before = _snapshot()
    chunks = []
    while True:             # the job: one JSON document, then EOF (none: the worker is stopping)
        data = _os.read(jfd, 1 << 20)
        if not data:
            break
        chunks.append(data)
    _os.close(jfd)
    if not chunks:
        _os._exit(0)
    job = _json.loads(b"".join(chunks))
    del chunks
    mem, cpu = int(job["mem_bytes"]), int(job["timeout"]) + int(job["cpu_slack"])
    for res, val in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_CPU, cpu),
                     (resource.RLIMIT_FSIZE, int(job["fsize"])), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(res, (val, val))
        except (ValueError, OSError):
            pass
    step = job["step"]
    aborted = False
    for phase in ("deps", "context", "code"):
        src = job[phase]
        if not src or not src.strip() or (job["dry"] and phase != "deps"):
            continue
        try:
            exec(compile(src, f"<{phase} {step}>", "exec"), ns)
            csend({"phase": phase, "ok": True})
        except BaseException as exc:
            csend({"phase": phase, "ok": False, "error": _err(exc)})
            aborted = True
            break
    if not aborted and not job["dry"] and _tampered(before):
        csend({"phase": "code", "ok": False, "error": {
            "type": "Tampering", "origin": "submission", "via_submission": True,
            "message": "replaced " + ", ".join(_tampered(before)) + " while the program was defined"}})
        aborted = True
    if job["dry"] and not aborted:
        try:
            import importlib
            importlib.import_module("scicode.parse.parse")
            importlib.import_module("scicode.compare.cmp")
            for i in range(len(job["cases"])):
                ns["target"] = _Target(i, [])
            _sys.stdout.write(job["marker"] + "\n")
            _sys.stdout.flush()
            csend({"marker": job["marker"]})
        except BaseException as exc:
            csend({"phase": "dry", "ok": False, "error": _err(exc)})
    elif not aborted:
        # the cases share one namespace, a copy of the program's: the generation's
        # functions keep `ns` as their globals
        tns = dict(ns)
        tns[HELPER] = __scicode_helper__
        kind, name = job["definition"]
        _check_generated(tns, before, name if kind == "def" else None)
        for i, case in enumerate(job["cases"]):
            _CUR["case"], _CUR["arity"] = i, dict(job["arity"][i])
            tns["target"] = _Target(i, [])
            try:
                exec(compile(case, f"<test {step} case {i + 1}>", "exec"), tns)
                csend({"case": i, "ok": True})
            except BaseException as exc:
                csend({"case": i, "ok": False, "error": _err(exc)})
    after = _snapshot()
    tamper = _tampered(before, after)
    try:
        _sys.stdout.flush()
        _sys.stderr.flush()
    except BaseException:
        pass
    csend({"done": True, "tamper": tamper})
    _os._exit(0)


HELPER = _INIT["helper_name"]
_REAP = bool(_INIT.get("reap"))
_TMP_BYTES = int(_INIT["tmp_bytes"])       # a step's private /tmp: the file-size cap


def _spawn():
    """The next step's process, forked while the worker waits for its job (after the last
    step's processes were killed): its own user and mount namespaces, a private /tmp and
    its folder; it blocks reading its job from a pipe of its own.  Nothing of a job is in it
    before the job arrives, and no code of a generation runs in it before then."""
    token = secrets_token()
    step_dir = tempfile.mkdtemp(prefix="step-", dir=_INIT["work_dir"])
    out_path = _os.path.join(step_dir, ".captured_output")
    r, w = _os.pipe()
    jr, jw = _os.pipe()
    _sys.stdout.flush()
    _sys.stderr.flush()
    pid = _os.fork()
    if pid == 0:
        try:
            _os.close(r)
            _os.close(jw)
            _os.close(_FD)
            for _k in ("_TOKEN", "_INIT", "send", "_FD", "_line", "_SPARE"):   # channel secrets, job line
                globals().pop(_k, None)
            _own_user_namespace()
            _os.chdir(step_dir)
            _private_tmp(step_dir, _TMP_BYTES)
            _child(jr, w, token, out_path)
        finally:
            _os._exit(0)
    _os.close(w)
    _os.close(jr)
    try:        # the step's exit wakes the wait below (no polling interval)
        pidfd = _os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    return {"pid": pid, "r": r, "jw": jw, "pidfd": pidfd, "token": token, "step_dir": step_dir,
            "out_path": out_path}


def _completed(chunks, token):
    """The reply so far ends with the step's completion message (sent after its last case,
    its tamper check and its output flush; nothing but the process's exit follows it)."""
    tail = chunks[-1][-4097:]
    if len(tail) < 4097 and len(chunks) > 1:
        tail = chunks[-2][-4097:] + tail
    try:
        msg = _json.loads(tail[:-1].rsplit(b"\n", 1)[-1])
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (isinstance(msg, dict) and msg.get("token") == token and isinstance(msg.get("body"), dict)
            and msg["body"].get("done") is True)


_UNREAPED = []      # step processes killed by the worker, reaped once the kernel is done with them


def _reap_killed():
    for pid in list(_UNREAPED):
        try:
            if _os.waitpid(pid, _os.WNOHANG)[0]:
                _UNREAPED.remove(pid)
        except ChildProcessError:
            _UNREAPED.remove(pid)


def _reap():
    """Reap this worker's exited children: the killed step processes, and any other child
    (a step's leftovers; none is alive then, no spare forked yet)."""
    _reap_killed()
    while True:
        try:
            if _os.waitpid(-1, _os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


def _discard(spare):
    """A spare that gets no job (the worker stops): EOF on its job pipe ends it."""
    _os.close(spare["jw"])
    try:
        _os.killpg(spare["pid"], signal.SIGKILL)
    except OSError:
        pass
    try:
        _os.waitpid(spare["pid"], 0)
    except ChildProcessError:
        pass
    for fd in (spare["r"], spare["pidfd"]):
        if fd is not None:
            _os.close(fd)
    shutil.rmtree(spare["step_dir"], ignore_errors=True)


def _run(job, job_line, spare):
    t0 = time.monotonic()
    pid, r, pidfd, token, out_path = (spare[k] for k in ("pid", "r", "pidfd", "token", "out_path"))
    try:
        data = job_line.encode()
        while data:
            data = data[_os.write(spare["jw"], data):]
    except OSError:         # the step's process is gone already: its exit status says how
        pass
    _os.close(spare["jw"])
    send({"started": pid})
    _reap_killed()
    deadline = t0 + float(job["timeout"])
    chunks, kept, eof, status, rc, over = [], 0, False, None, None, False
    while True:
        now = time.monotonic()
        if now >= deadline:
            status = "timeout"
            break
        watch = ([] if eof else [r]) + ([] if pidfd is None else [pidfd])
        if watch:
            ready, _, _ = select.select(watch, [], [], min(0.25, deadline - now))
            if not ready:
                _reap_killed()
        else:       # no pidfd (an old kernel): the exit is polled
            ready = []
            time.sleep(0.002)
        if r in ready:
            data = _os.read(r, 1 << 20)
            if not data:
                eof = True
            elif kept < job["reply_cap"]:
                chunks.append(data)
                kept += len(data)
                if data.endswith(b"\n") and _completed(chunks, token):
                    status = "ok"       # its tests are over: what is left of it is an exit
                    break
            else:
                over = True
        if pidfd is not None and pidfd not in ready:
            continue
        wpid, st = _os.waitpid(pid, _os.WNOHANG)
        if not wpid and pidfd is not None:
            time.sleep(0.001)       # (a pidfd readable before its process can be reaped)
        if wpid:
            rc = _os.waitstatus_to_exitcode(st)
            status = "ok" if rc == 0 else "crashed"
            break
    try:
        _os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if status == "timeout":
        try:
            _os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if _REAP:       # alone with the sandbox's init: no process of this step outlives it (one
        try:        # kill(-1) reaches all but init and this worker, and no fork escapes it)
            _os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    if rc is None:  # SIGKILLed now: it can run no more code; reaped once its exit is done
        _UNREAPED.append(pid)
    _reap()
    _os.set_blocking(r, False)      # what it wrote before it was stopped
    try:
        while True:
            data = _os.read(r, 1 << 20)
            if not data:
                break
            if kept < job["reply_cap"]:
                chunks.append(data)
                kept += len(data)
            else:
                over = True
    except BlockingIOError:
        pass
    _os.close(r)
    if pidfd is not None:
        _os.close(pidfd)
    messages, forged = [], 0
    for line in b"".join(chunks).splitlines():
        if len(messages) >= job["max_messages"]:
            over = True
            break
        try:
            msg = _json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            forged += 1
            continue
        if isinstance(msg, dict) and msg.get("token") == token and "body" in msg:
            messages.append(msg["body"])
        else:
            forged += 1
    try:
        with open(out_path, "rb") as fh:
            captured = fh.read(job["capture"]).decode("utf-8", "replace")
    except OSError:
        captured = ""
    reason = ""
    if status == "timeout":
        reason = f"exceeded the {float(job['timeout']):g} s budget"
    elif status == "crashed":
        reason = (f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}")
    if over:
        reason = (reason + "; " if reason else "") + "reply over its cap (bytes or messages)"
    send({"result": {"status": status, "reason": reason, "messages": messages, "forged": forged,
                     "wall": time.monotonic() - t0, "stdout": captured, "rc": rc, "over_cap": over}})
    shutil.rmtree(spare["step_dir"], ignore_errors=True)     # after the reply: off the grader's wait


def secrets_token():
    return _os.urandom(16).hex()


def _own_user_namespace():
    """The step's process in a user namespace of its own: no capability over its worker
    (which holds the channel to the grader), as the runner's fork_jobs does for a job."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        uid, gid = _os.geteuid(), _os.getegid()
        # CLONE_NEWUSER, with a mount namespace of its own where the host allows it (_private_tmp)
        if libc.unshare(0x10000000 | 0x00020000) == 0 or libc.unshare(0x10000000) == 0:
            for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                               ("gid_map", "%d %d 1" % (gid, gid))):
                try:
                    with open("/proc/self/" + name, "w") as fh:
                        fh.write(text)
                except OSError:
                    pass
    except BaseException:
        pass


def _private_tmp(step_dir, size):
    """Where /tmp is part of the sandbox's read-only root, the step gets a private /tmp (a
    tmpfs of the file-size cap, gone with the step), as the official harness lets a
    generation write temporary files; its own folder is bound back at its path (cwd,
    absolute paths, the captured output).  Nothing changes where /tmp is writable already."""
    if not _os.path.isdir("/tmp") or _os.access("/tmp", _os.W_OK):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        flags = ctypes.c_ulong(0x2 | 0x4)                   # MS_NOSUID | MS_NODEV
        _os.chdir(step_dir)
        if libc.mount(b"tmpfs", b"/tmp", b"tmpfs", flags, b"mode=1777,size=%d" % int(size)) != 0:
            return
        if step_dir.startswith("/tmp/"):
            _os.makedirs(step_dir, exist_ok=True)
            libc.mount(b".", step_dir.encode(), None, ctypes.c_ulong(0x1000), None)     # MS_BIND
            _os.chdir(step_dir)
    except BaseException:
        pass


send({"ready": True, "shim": _SHIM_OK})
_SPARE = _spawn()
for _line in _sys.stdin:
    if not _line.strip():
        continue
    _run(_json.loads(_line), _line, _SPARE)
    _SPARE = _spawn()
_discard(_SPARE)
'''


def _child_env(home: str) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
           "TMPDIR": home, "MPLBACKEND": "Agg",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}
    for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _drain(stream, sink: list, cap: int) -> None:
    kept = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if kept < cap:
            sink.append(chunk[: cap - kept])
            kept += len(sink[-1])
    stream.close()


# The sandbox pieces below are the runner's (grade_fem.py SUBPROCESS RUNNER, branch
# `runner`, RUNNER-API-READY), copied verbatim: same names, same SPEC keys, same text.
# pid 1 of the run's pid namespace (or, where there is none, a plain watcher), run as
# `python -I -S -B -c _SANDBOX_INIT <config>`.  With a config "root" it builds the
# allow-list root: a tmpfs holding read-only binds of the system and Python directories,
# the run's own folders, a minimal /dev and its own /proc; pivot_root to it and detach the
# old root (a chroot could be climbed out of).  It then starts the driver with the rlimits
# and stays: when the grader dies (the lifeline socket reads EOF) or the driver exits,
# everything else in the run is killed.  It reports the driver's exit on the lifeline.
_SANDBOX_INIT = r'''
import ctypes, json, os, resource, select, signal, sys
cfg = json.loads(sys.argv[1])
life = cfg["lifeline"]
os.set_inheritable(life, False)
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18
ATIME = ((1024, 1024), (2048, 2048), (4096, 1 << 21))       # statvfs bit -> mount flag


def tell(text):
    try:
        os.write(life, (text + "\n").encode())
    except OSError:
        pass


def mount(src, target, fstype, flags, data=None):
    enc = [None if v is None else v.encode() for v in (src, target, fstype, data)]
    if libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "mount %s on %s: %s" % (src, target, os.strerror(err)))


def bind(src, new, writable=False):
    target = new + src
    if os.path.islink(src):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.readlink(src), target)
        return
    if os.path.isdir(src):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    mount(src, target, None, MS_BIND)
    flag = os.statvfs(src).f_flag
    locked = flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    locked |= sum(ms for st, ms in ATIME if flag & st)
    mount(None, target, None, MS_REMOUNT | MS_BIND | locked | (0 if writable else MS_RDONLY))


def build_root(new):
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for src in cfg["ro"]:
        if os.path.lexists(src):
            bind(src, new)
    for src in cfg["rw"]:
        bind(src, new, writable=True)
    dev = new + "/dev"
    os.makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for node in cfg["dev"]:
        if os.path.exists(node):
            bind(node, new, writable=True)
    os.makedirs(dev + "/shm")
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=%d" % cfg["shm_bytes"])
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev + "/" + name)
    os.makedirs(new + "/proc")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(new)
    if libc.syscall(cfg["pivot_root_nr"], b".", b".") != 0:
        raise OSError(ctypes.get_errno(), "pivot_root")
    if libc.umount2(b".", 2) != 0:                              # MNT_DETACH the old root
        raise OSError(ctypes.get_errno(), "umount old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


if cfg["root"]:
    try:
        build_root(cfg["root"])
    except Exception as exc:
        tell("setup " + str(exc)[:300])
        sys.exit(0)
pid1 = os.getpid() == 1
if not pid1:
    libc.prctl(1, 9, 0, 0, 0)               # PR_SET_PDEATHSIG, SIGKILL: dies with the grader
libc.prctl(4, 0, 0, 0, 0)                   # PR_SET_DUMPABLE 0: the driver cannot trace init
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *a: None)
child = 0


def on_term(*_):
    """The grader's SIGTERM: in a pid namespace it reaches the driver's group directly; else
    the driver has a group of its own, which goes now."""
    if not pid1 and child:
        try:
            os.killpg(child, signal.SIGKILL)
        except OSError:
            pass


signal.signal(signal.SIGTERM, on_term)
child = os.fork()
if child == 0:
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        if not pid1:
            os.setpgid(0, 0)                # a group init can kill without killing itself
            libc.prctl(1, 9, 0, 0, 0)
        libc.prctl(4, 1, 0, 0, 0)
        uid, gid = os.geteuid(), os.getegid()
        if libc.unshare(0x10000000) == 0:   # CLONE_NEWUSER: no capability over init
            try:
                for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                                   ("gid_map", "%d %d 1" % (gid, gid))):
                    with open("/proc/self/" + name, "w") as fh:
                        fh.write(text)
            except OSError:
                pass
        for name, value in cfg["rlimits"]:
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (AttributeError, ValueError, OSError):
                pass
        os.chdir(cfg["cwd"])
        os.execv(cfg["argv"][0], cfg["argv"])
    except BaseException as exc:
        os.write(2, ("sandbox: cannot start the driver: %r\n" % (exc,)).encode())
    os._exit(127)
for fd in cfg["close"]:                     # the reply pipe and the request pipe: the driver's only
    try:
        os.close(fd)
    except OSError:
        pass
status = None
while status is None:
    try:
        ready = select.select([life, wake_r], [], [], 1.0)[0]
    except InterruptedError:
        ready = []
    if wake_r in ready:
        os.read(wake_r, 4096)
    if life in ready:
        try:
            gone = os.read(life, 4096) == b""
        except OSError:
            gone = True
        if gone:                            # the grader died: so does everything here
            break
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid == child:
            status = st
try:
    if pid1:
        os.kill(-1, signal.SIGKILL)          # every other process of this pid namespace
    else:
        os.killpg(child, signal.SIGKILL)     # whatever is left of the driver's group
except OSError:
    pass
if status is not None:
    tell(("exit %d" % os.WEXITSTATUS(status)) if os.WIFEXITED(status)
         else "signal %d" % os.WTERMSIG(status))
os._exit(0)
'''

_SANDBOX = {}          # the probed sandbox level and launch prefix (once per grader process)
_PIVOT_ROOT_NR = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def _python_exe() -> str:
    """The real interpreter (not a pyenv shim or a symlink the sandbox would not hold)."""
    return os.path.realpath(sys.executable)


def _readonly_paths(extra=()) -> list:
    """What the child may read: the system's programs, libraries and /etc, and the Python
    installation with its site-packages; nothing else of the filesystem."""
    import site
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
    py = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix,
                                        sys.base_exec_prefix)}
    try:
        sites = list(site.getsitepackages())
    except AttributeError:
        sites = []
    for p in sites + sys.path:
        if p and ("site-packages" in p or "dist-packages" in p) and os.path.isdir(p):
            py.add(os.path.realpath(p))
    py.add(os.path.dirname(_python_exe()))
    paths += sorted(p for p in py if p != "/")
    paths += [os.path.realpath(p) for p in extra]
    keep = []
    for p in paths:
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in keep):
            keep.append(p)
    return keep


def _launch_cfg(work: str, root: bool, rw: list, argv: list, cwd: str, rlimits: list,
                lifeline: int, ro_extra=()) -> dict:
    import glob
    import platform
    return {"root": os.path.join(work, "root") if root else None,
            "ro": _readonly_paths(ro_extra) + [d for d in (os.path.join(work, "driver"),)
                                               if os.path.isdir(d)],
            "rw": rw, "dev": ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
            + sorted(glob.glob("/dev/nvidia*")), "shm_bytes": 1 << 30,
            "pivot_root_nr": _PIVOT_ROOT_NR.get(platform.machine(), -1),
            "argv": argv, "cwd": cwd, "rlimits": rlimits, "lifeline": lifeline,
            "close": [0] + [int(a) for a in argv[-1:] if a.isdigit()]}


_PROBE = r'''
import json, os, sys
seen = {"pid": os.getpid(), "hidden_visible": os.path.exists(sys.argv[1]),
        "proc": os.path.exists("/proc/self/status")}
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    seen["job_userns"] = os.fork() == 0 or None
    if seen["job_userns"] is True:
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    seen["job_userns"] = os.waitpid(-1, 0)[1] == 0
except Exception:
    seen["job_userns"] = False
print(json.dumps(seen))
'''


def _try_launch(prefix: list, root: bool, work: str) -> dict | None:
    """Run _PROBE through prefix + _SANDBOX_INIT; what it saw, or None if it did not run."""
    import socket
    marker = os.path.join(work, "hidden")
    with open(marker, "w") as fh:
        fh.write("x")
    os.makedirs(os.path.join(work, "root"), exist_ok=True)
    a, b = socket.socketpair()
    try:
        cfg = _launch_cfg(work, root, [], [_python_exe(), "-I", "-S", "-c", _PROBE, marker], "/",
                          [], b.fileno())
        proc = subprocess.Popen(prefix + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT,
                                          json.dumps(cfg)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=(b.fileno(),),
                                start_new_session=True)
        b.close()
        out, _ = proc.communicate(timeout=30)
        a.settimeout(5)
        said = a.recv(4096).decode(errors="replace")
        if proc.returncode != 0 or not said.startswith("exit 0"):
            return None
        return json.loads(out.decode().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None
    finally:
        a.close()
        b.close()


def sandbox_level() -> dict:
    """How the child is confined here (probed once by running a child the real way)."""
    if not _SANDBOX:
        work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-probe-")
        try:
            unshare = shutil.which("unshare") or "/usr/bin/unshare"
            full = [unshare, "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork",
                    "--kill-child"]
            seen = _try_launch(full, True, work)
            if seen and not seen["hidden_visible"] and seen["pid"] == 2 and seen["proc"]:
                level = dict(user_namespace=True, net_namespace=True, mount_namespace=True,
                             pid_namespace=True, file_isolation=True, prefix=full, root=True,
                             job_user_namespace=bool(seen.get("job_userns")), note="")
            else:
                basic = [unshare, "--user", "--map-root-user", "--net"]
                seen = _try_launch(basic, False, work)
                level = dict(user_namespace=bool(seen), net_namespace=bool(seen),
                             mount_namespace=False, pid_namespace=False, file_isolation=False,
                             prefix=basic if seen else [], root=False,
                             job_user_namespace=bool(seen and seen.get("job_userns")),
                             note="mount/pid namespaces unavailable: the child can read any "
                             "file the grader's user can" + ("" if seen else
                                                             "; no user/network namespace either"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        level["rlimits"] = ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"]
        _SANDBOX.update(level)
    return {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}


def sandbox_check() -> Check:
    """INFO sandbox.isolation: what confined the child in this grading."""
    lv = sandbox_level()
    ns = [n for n in ("user", "net", "mount", "pid") if lv[f"{n}_namespace"]]
    msg = (f"namespaces: {', '.join(ns) or 'none'}; file isolation "
           f"{'on (the child sees only Python, its copy and a scratch folder)' if lv['file_isolation'] else 'OFF'}"
           f"; rlimits: {', '.join(r[7:] for r in lv['rlimits'])}")
    return Check("sandbox.isolation", Status.INFO, msg + (f"; {lv['note']}" if lv["note"] else ""),
                 lv["file_isolation"])


_MAX_DEPTH = 64        # deeper message bodies are refused (no grader code walks them recursively)
_MAX_MESSAGES = 100_000   # more are refused: millions of tiny messages would exhaust the grader's
                          # memory within the byte cap (honest drivers send a few hundred)


def _too_deep(obj) -> bool:
    stack = [(obj, 0)]
    while stack:
        o, d = stack.pop()
        if d > _MAX_DEPTH:
            return True
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return False


def decode_reply(line: bytes, token: str) -> tuple:
    """(body, is_ask, None) for an authentic reply line, (None, False, why) for anything
    else.  Never raises: garbage is the child's failure, never the grader's."""
    import hmac
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, False, f"invalid UTF-8 at byte {exc.start}"
    try:
        msg = json.loads(text)
    except RecursionError:
        return None, False, "JSON nested too deeply to decode"
    except MemoryError:
        return None, False, "JSON too large to decode"
    except ValueError as exc:
        return None, False, f"not JSON ({str(exc)[:80]})"
    except Exception as exc:          # anything else json may raise on hostile input
        return None, False, f"not JSON ({type(exc).__name__})"
    if not isinstance(msg, dict) or not isinstance(msg.get("token"), str):
        return None, False, "no run token"
    if not hmac.compare_digest(msg["token"].encode("utf-8", "replace"), token.encode()):
        return None, False, "wrong run token"
    if "body" not in msg or set(msg) - {"token", "body", "ask"} or msg.get("ask", False) not in (True, False):
        return None, False, "malformed message (valid token)"
    if _too_deep(msg["body"]):
        return None, False, f"message nested deeper than {_MAX_DEPTH} levels (valid token)"
    return msg["body"], msg.get("ask") is True, None



def _sandboxed(work: str, rw: list, ro: list, argv: list, lifeline: int) -> list:
    """The command that runs argv (the warm worker) in the runner's sandbox: _SANDBOX_INIT as
    pid 1 of fresh user/net/mount/pid namespaces, the allow-list root (system and Python
    read-only, `ro`, the worker's own `rw` folders), pivot_root, the old root detached."""
    sandbox_level()
    os.makedirs(os.path.join(work, "root"), exist_ok=True)
    cfg = _launch_cfg(work, _SANDBOX["root"], rw, argv, rw[0], [], lifeline, ro)
    return _SANDBOX["prefix"] + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT, json.dumps(cfg)]


class Worker:
    """One warm interpreter (`python -I`, own session) that forks a child per step."""

    def __init__(self, base: str, shim_dir: str, warm: list):
        self.base, self.shim_dir, self.warm = base, shim_dir, warm
        self.proc = None
        self.start()

    def start(self) -> None:
        import socket
        box = tempfile.mkdtemp(prefix="worker-", dir=self.base)
        work = os.path.join(box, "work")
        os.mkdir(work)
        driver = os.path.join(work, "worker_driver.py")
        with open(driver, "w") as fh:
            fh.write(WORKER_PROLOGUE + WORKER_BODY)
        self.token = secrets.token_hex(16)
        self.replies = queue.Queue()
        self.out, self.err = [], []
        rfd, wfd = os.pipe()
        self.life, life_child = socket.socketpair()
        try:    # no preexec_fn: this runs in several threads; the worker sets its own limits
            self.proc = subprocess.Popen(
                _sandboxed(box, [work], [self.shim_dir], [_python_exe(), "-I", "-B", driver, str(wfd)],
                           life_child.fileno()), cwd=work,
                env=_child_env(work),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(wfd, life_child.fileno()), start_new_session=True)
        finally:
            os.close(wfd)
            life_child.close()
        threading.Thread(target=self._read_replies, args=(os.fdopen(rfd, "rb"),), daemon=True).start()
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=_drain, args=(stream, sink, 64 << 10), daemon=True).start()
        init = {"token": self.token, "shim_dir": self.shim_dir, "work_dir": work, "warm": self.warm,
                "target_methods": list(TARGET_METHODS), "helper_name": HELPER_DECORATOR,
                "reap": bool(sandbox_level()["pid_namespace"]), "tmp_bytes": SPEC["runner_fsize_bytes"]}
        self.proc.stdin.write((json.dumps(init) + "\n").encode())
        self.proc.stdin.flush()
        self.child = None
        hello = self._next(120.0)
        self.ready = isinstance(hello, dict) and hello.get("ready") is True
        self.shim = bool(self.ready and hello.get("shim"))

    def _read_replies(self, stream) -> None:
        for line in stream:
            body, _, why = decode_reply(line.rstrip(b"\n"), self.token)
            if why is None:
                self.replies.put(body)
        self.replies.put(None)          # the worker died or closed the channel

    def _next(self, timeout: float):
        try:
            return self.replies.get(timeout=max(timeout, 0.01))
        except queue.Empty:
            return "timeout"

    def run(self, job: dict, during=None) -> dict:
        """Send one job; the worker enforces job['timeout'], the runner adds a margin.
        `during()` is called (in this process) once the job is on its way."""
        if not self.ready or self.proc.poll() is not None:
            self.restart()
            if not self.ready:
                return {"status": "worker", "reason": "WorkerFault: worker failed to start",
                        "messages": []}
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.restart()
            return {"status": "worker", "reason": "WorkerFault: worker pipe closed", "messages": []}
        if during:
            during()
        deadline = time.monotonic() + float(job["timeout"]) + SPEC["worker_reply_margin_s"]
        while True:
            msg = self._next(deadline - time.monotonic())
            if isinstance(msg, dict) and "started" in msg:
                self.child = msg["started"]
                continue
            if isinstance(msg, dict) and isinstance(msg.get("result"), dict):
                self.child = None       # a step's process may have forged this line: it can
                res = dict(msg["result"], shim=self.shim)   # never claim a harness fault
                if res.get("status") not in ("ok", "timeout", "crashed"):
                    res["status"] = "crashed"
                return res
            # the worker died or stalled while it ran this step: the step's process can
            # kill or stop its parent, so this is the step's failure (a generation must not
            # void a run by faking a harness fault); a worker that cannot start stays one
            self.restart()
            if msg == "timeout":
                return {"status": "timeout", "reason": "its worker stopped answering", "messages": []}
            return {"status": "crashed", "reason": "its worker died during the step", "messages": []}

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        for pid in (self.child, self.proc.pid if self.proc else None):
            if pid:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError, OSError):
                    pass
        self.child = None
        if getattr(self, "life", None) is not None:
            self.life.close()       # the sandbox's init kills everything left when this closes
            self.life = None
        if self.proc:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


USUAL_MODULES = ("scipy.special", "scipy.integrate", "scipy.linalg", "scipy.optimize", "scipy.interpolate",
                 "scipy.signal", "scipy.spatial")
IMPORT_RE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w., \t(]+)|import[ \t]+([\w., \t]+))",
                       re.MULTILINE)


def imported_modules(text: str) -> set:
    """The modules a program's import statements name (its text read, nothing run)."""
    out = set()
    for m in IMPORT_RE.finditer(text):
        if m.group(1):
            out.add(m.group(1))
            out.update(f"{m.group(1)}.{n.split()[0]}" for n in m.group(2).replace("(", " ").split(",")
                       if n.split())
        else:
            out.update(n.split()[0] for n in m.group(3).split(",") if n.split())
    return out


def warm_modules(problems: list, texts=()) -> list:
    """What the workers import before any step: the modules the problems' dependency lines
    name, the shim's (numpy, scipy.sparse, h5py), and those of the usual scipy subpackages
    that a program text imports (`texts`: generations, reference code).  Only these names are
    ever imported in a worker; a module no text names, the step that uses it imports itself
    (as every step does in the official runner).  Each warm module costs every worker its
    import and every step's fork and exit its pages."""
    mods = {"numpy", "scipy", "scipy.sparse", "h5py"}
    for p in problems:
        for line in p.deps.splitlines():
            m = re.match(r"\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", line)
            if m:
                mods.add(m.group(1) or m.group(2))
    named = set()
    for text in texts:
        named |= imported_modules(text or "")
    mods |= {u for u in USUAL_MODULES if any(n == u or n.startswith(u + ".") for n in named)}
    return sorted(mods)


def worker_count(args, n_steps: int) -> int:
    """--jobs, else the cores this process may use; never more than there are steps."""
    n = args.jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1)
    return max(1, min(n, n_steps))


class WorkerPool:
    """Warm workers launched ahead of their steps, each started in a thread of its own (the
    sandbox probed once first): their start (each worker's imports) overlaps whatever the
    grader does meanwhile.  take() hands a started one to run_steps (which stops it);
    close() stops those never taken and removes the workers' folder."""

    def __init__(self, n: int, warm: list):
        self.base = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-")
        self.shim_dir = write_shim(os.path.join(self.base, "shim"))
        self.warm, self.n = warm, n
        self.started = queue.Queue()
        self.launcher = threading.Thread(target=self._launch, daemon=True)
        self.launcher.start()

    def _launch(self) -> None:
        try:
            sandbox_level()     # probed once, not by every starting worker at the same time
        except BaseException as exc:
            for _ in range(self.n):
                self.started.put(exc)
            return
        self.threads = [threading.Thread(target=self._start_one, daemon=True) for _ in range(self.n)]
        for t in self.threads:
            t.start()
        for t in self.threads:
            t.join()

    def _start_one(self) -> None:
        try:
            self.started.put(Worker(self.base, self.shim_dir, self.warm))
        except BaseException as exc:
            self.started.put(exc)

    def take(self) -> "Worker":
        item = self.started.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self.launcher.join()
        while True:
            try:
                item = self.started.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, Worker):
                item.stop()
        shutil.rmtree(self.base, ignore_errors=True)


_PRESTARTED = {}        # "pool": the WorkerPool prestart_workers launched for the coming steps


def prestart_workers(args, selected: list, n_steps: int, gens) -> None:
    """Launch this grading's workers now, while the grader reads the generations, assembles
    the programs and plans the tests (execute_steps takes them; discard_prestarted stops them
    if it never runs)."""
    discard_prestarted()
    if n_steps and not args.no_exec:
        texts = list(gens.texts.values()) + [s.gold for p in selected for s in p.steps if s.gold]
        _PRESTARTED["pool"] = WorkerPool(worker_count(args, n_steps), warm_modules(selected, texts))


def discard_prestarted() -> None:
    pool = _PRESTARTED.pop("pool", None)
    if pool:
        pool.close()


def run_steps(jobs: list, n_jobs: int, pool, on_reply=None, prepare=None, warm_up=None) -> dict:
    """Run every job on the warm workers of `pool` (a WorkerPool); step -> raw worker reply, or, with
    `on_reply(step, reply, prepared)`, step -> what it returns (called under a lock as each
    reply arrives, so a step's records are judged and dropped while the others run).
    `prepare(step)` runs in the grader while the step runs (its result is `prepared`, None
    without it); `warm_up()` runs once, under the lock, while the workers start."""
    pending = queue.Queue()
    # a problem's last step tends to be its heavy one (a whole simulation): start those
    # first, then later steps before earlier ones; only the order changes, not the verdicts
    last = {}
    for job in jobs:
        pid, k = _step_key(job["step"])
        last[pid] = max(last.get(pid, 0), k)
    for job in sorted(jobs, key=lambda j: (_step_key(j["step"])[1] != last[_step_key(j["step"])[0]],
                                           -_step_key(j["step"])[1])):
        pending.put(job)
    results, lock = {}, threading.Lock()

    def serve():
        worker = pool.take()
        try:
            while True:
                try:
                    job = pending.get_nowait()
                except queue.Empty:
                    return
                box = {}

                def during(step=job["step"]):
                    box["read"] = prepare(step)
                reply = worker.run(job, during if prepare else None)
                with lock:
                    results[job["step"]] = on_reply(job["step"], reply, box.get("read")) if on_reply else reply
        except Exception:
            if _INTERRUPT["at"] is None:
                raise
            # interrupted: the grader is unwinding (its workers killed, their folder removed)
        finally:
            worker.stop()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, min(n_jobs, len(jobs))))]
    for t in threads:
        t.start()
    if warm_up:
        with lock:
            warm_up()
    for t in threads:
        t.join()
    return results


def make_job(prog: StepProgram, plans: list, timeout: float, mem_gb: float, dry: bool) -> dict:
    """What the worker gets for a step: its code and test text, the stand-ins' unpack
    arities (from the test text) -- no target, no targets file, no path to one."""
    return {"step": prog.step, "deps": prog.deps, "context": prog.context, "code": prog.code or "",
            "cases": [decorate_helpers(c, p.helpers) for c, p in zip(prog.cases, plans)],
            "arity": [p.arity for p in plans], "definition": list(prog.definition),
            "timeout": timeout, "mem_bytes": int(mem_gb * (1 << 30)),
            "cpu_slack": SPEC["runner_cpu_slack_s"], "fsize": SPEC["runner_fsize_bytes"],
            "capture": SPEC["runner_output_cap_bytes"], "reply_cap": SPEC["runner_reply_cap_bytes"],
            "max_messages": SPEC["runner_max_messages"],
            "dry": dry, "marker": SPEC["dry_marker"]}


def targets_present(h5_path: str, step: str, n: int) -> dict:
    """case -> failure for each case of `step` whose group the targets file lacks (the
    grader's own evidence, before anything runs)."""
    import h5py
    try:
        with h5py.File(h5_path, "r") as h5:
            return {i: {"type": "TargetsMissing", "message": f"group {step}/test{i + 1} not in the targets file"}
                    for i in range(n) if f"{step}/test{i + 1}" not in h5}
    except Exception as exc:
        return {i: {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
                for i in range(n)}


def warm_grader() -> None:
    """The grader's own target reader and comparators loaded (h5py, numpy, scipy.sparse, a
    sparse matrix and a .npy decoded once) while the workers start, not on the first reply."""
    import base64
    import io
    import numpy
    import scipy.sparse
    shim_module("parse")
    _grader_cmp()
    buf = io.BytesIO()
    numpy.lib.format.write_array(buf, numpy.zeros(1), allow_pickle=False)
    decode_value({"__array__": base64.b64encode(buf.getvalue()).decode("ascii")})
    scipy.sparse.coo_matrix((1, 1)).tocsr()


def read_step_targets(h5_path: str, step: str, n: int) -> tuple:
    """({case: target}, {case: failure}) read in the grader's process by its own reader."""
    import h5py
    reader = shim_module("parse")
    targets, errors = {}, {}
    try:
        with h5py.File(h5_path, "r") as h5:
            for i in range(n):
                try:
                    targets[i] = reader.read_test_target(h5, step, i + 1)
                except reader.TargetsMissing as exc:
                    errors[i] = {"type": "TargetsMissing", "message": str(exc).strip("'\"")}
                except Exception as exc:
                    errors[i] = {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
    except Exception as exc:
        errors = {i: {"type": "TargetsUnreadable", "message": f"{type(exc).__name__}: {exc}"[:300]}
                  for i in range(n)}
    return targets, errors




class ResumeStore:
    """--out DIR/resume: one file per finished step, `{"key", "result"}`, written as each step is
    judged.  The result is the judged StepResult (the verdict of each case, the failure, the
    captured output): rebuilding the step's records needs neither its generated code run again
    nor the targets, and the records the step's process sent are not kept.  The key is the
    sha256 of the grader's bytes, the targets file's path, size and mtime, and the step's whole
    job (program, test cases, limits, dry run), so a rerun reuses a step only when nothing its
    verdict depends on changed."""

    def __init__(self, out_dir: str, h5: str, jobs: list):
        self.dir = os.path.join(out_dir, "resume")
        os.makedirs(self.dir, exist_ok=True)
        try:
            st = os.stat(h5)
            h5_id = [os.path.abspath(h5), st.st_size, st.st_mtime_ns]
        except OSError:
            h5_id = [os.path.abspath(h5), None, None]
        self.base = [grader_sha256(), h5_id]
        self.results = {}
        for job in jobs:
            try:
                with open(self._path(job)) as fh:
                    doc = json.load(fh)
                if isinstance(doc, dict) and doc.get("key") == self.key(job):
                    res = self._result(job["step"], doc.get("result"))
                    if res is not None:
                        self.results[job["step"]] = res
            except (OSError, ValueError, RecursionError):
                pass

    @staticmethod
    def _result(step: str, d):
        """The kept StepResult, or None unless every field has its type."""
        fields = {f.name for f in dataclasses.fields(StepResult)}
        if not isinstance(d, dict) or set(d) != fields or d["step"] != step:
            return None
        if not (isinstance(d["passed"], bool) and isinstance(d["cases"], list)
                and all(isinstance(c, dict) for c in d["cases"])
                and (d["failure"] is None or isinstance(d["failure"], dict))
                and isinstance(d["wall"], (int, float)) and not isinstance(d["wall"], bool)
                and isinstance(d["stdout"], str) and isinstance(d["stderr"], str)
                and isinstance(d["marker"], bool)):
            return None
        return StepResult(**d)

    def key(self, job: dict) -> str:
        text = json.dumps([self.base, job], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, job: dict) -> str:
        return os.path.join(self.dir, re.sub(r"[^\w.-]", "_", job["step"]) + ".json")

    def save(self, job: dict, result: "StepResult") -> None:
        """Written to a temp file, then renamed: an interrupted write leaves no half a result."""
        path = self._path(job)
        try:
            with open(path + ".tmp", "w") as fh:
                json.dump({"key": self.key(job), "result": dataclasses.asdict(result)}, fh,
                          allow_nan=False)
            os.replace(path + ".tmp", path)
        except (OSError, TypeError, ValueError):
            pass


# =============================================================================
# GRADING: the checks above, in the protocol's order, over one set of generations
# =============================================================================
def grade(args) -> Report:
    """Problems, targets and generations loaded; every in-scope step's program assembled; the
    steps run on warm workers (with --out, each result kept as it finishes and reused by a rerun
    of the same inputs and grader); step records, the census and the keys.  report.outcomes holds
    each step's StepResult."""
    t0 = time.monotonic()
    report = Report(args.submission)
    checks, phases = report.checks, report.phases
    problems, pchecks = load_problems(args.problems)
    checks += pchecks
    if args.split is None:
        present = {p.split for p in problems.values()}
        args.split = present.pop() if len(present) == 1 else "all"
    selected = [p for p in problems.values() if args.split in ("all", p.split)]
    if not selected and not any(c.id == "input.usage" for c in checks):
        checks.append(Check("input.fatal", Status.FAIL, f"no problems of split {args.split!r} could be read from the problem files"))
        return report
    if not selected:
        return report
    in_scope = [(p, s) for p in selected for s in p.steps if s.step not in SPEC["special_steps"]]
    report.figures_data["steps"] = [(p.pid, s.index, s.step) for p, s in in_scope]     # PLOTS
    n_probs = len({p.pid for p, _ in in_scope})
    official = SPEC["official_counts"][args.split]
    checks.append(Check("input.scope", Status.INFO,
                        f"{args.split}: {len(in_scope)} in-scope steps of {n_probs} problems "
                        f"({sum(len(p.steps) for p in selected) - len(in_scope)} no-test step(s) excluded); "
                        f"official {args.split}: {official[0]} / {official[1]}"
                        + ("" if (len(in_scope), n_probs) == official else " (these files differ)"),
                        [len(in_scope), n_probs], list(official)))
    gens = load_generations(args.submission, {s.step for p in selected for s in p.steps})
    prestart_workers(args, selected, len(in_scope) if args.h5 and os.path.isfile(args.h5) else 0, gens)
    if args.no_exec and not os.path.exists(args.h5):
        checks.append(Check("input.h5", Status.SKIP, f"targets file {args.h5} absent (--no-exec)"))
    else:
        checks += check_h5(args.h5)
    checks += gens.checks
    phases["load"] = time.monotonic() - t0
    progs = {}
    for p, s in in_scope:
        mode = args.context or ("reference" if p.split == "dev" else "self")
        if mode == "reference" and any(pr.gold is None for pr in p.steps[:s.index]
                                       if pr.step not in SPEC["special_steps"]):
            raise UsageError(f"--context reference needs ground_truth_code; problem {p.pid} "
                             "(test split) has none")
        progs[s.step] = assemble(p, s, mode, gens, args.special_steps)
    contexts = sorted({args.context or ("reference" if p.split == "dev" else "self") for p in selected})
    checks.append(Check("context.mode", Status.INFO, "prior-step context: " + " / ".join(
        f"{m} ({'dev' if m == 'reference' else 'test'} default)" if not args.context else m for m in contexts)))
    lost = sorted({pr.step for pr in progs.values() if pr.lost_context}, key=_step_key)
    if lost:
        checks.append(Check("context.special_steps", Status.REVIEW,
                            f"no reference code for {', '.join(sorted({progs[s].lost_context for s in lost}))} "
                            f"(--special-steps DIR): steps {', '.join(lost)} lose context; their failures "
                            "count as harness faults", lost))
    ignored = sorted(set(gens.texts) & set(SPEC["special_steps"]))
    if ignored:
        checks.append(Check("context.special_generations", Status.INFO,
                            f"generations for no-test steps {', '.join(ignored)} are not graded or used "
                            "(their code comes from --special-steps)"))
    if args.no_exec or any(c.id in ("input.fatal", "input.usage") for c in checks):
        results = {}
        for sid, prog in progs.items():
            if prog.error:
                checks.append(Check(f"extract.{sid}", Status.FAIL, f"{prog.error['type']}: {prog.error['message']}"))
        for sid, prog in progs.items():
            if prog.audit:
                checks.append(Check(f"audit.{sid}", Status.REVIEW, "generation " + "; ".join(prog.audit[:4])))
        return report
    t1 = time.monotonic()
    results, run_records = execute_steps(progs, args, selected)
    checks += run_records + isolation_checks(args.strict)
    phases["execute"] = time.monotonic() - t1
    ordered = {sid: progs[sid] for sid in sorted(progs, key=_step_key)}
    srecords, failures = step_records(ordered, results, args.dry_run, args.strict)
    crecords, _, _ = census(failures, args.strict)
    checks += srecords + crecords
    report.keys.update(summary_keys(checks, problems, args.split, "/".join(contexts), args.dry_run))
    phases["total"] = time.monotonic() - t0
    report.outcomes.update({sid: results[sid] for sid in ordered})
    return report


# =============================================================================
# VERDICT
# =============================================================================
def verdict(checks: list, *, strict: bool, no_exec: bool, dry: bool = False) -> tuple:
    """(result, score) from records alone: score = passed step records / step
    records; UNGRADED when nothing ran, a dry run proved only the plumbing, the census
    indicted the harness, or --strict without file isolation (not certified)."""
    if no_exec or dry:
        return "UNGRADED", None
    if strict and any(c.id == "sandbox.file_isolation" and c.status is Status.REVIEW for c in checks):
        return "UNGRADED", None
    if any(c.id == "census.verdict" and c.status is Status.FAIL for c in checks):
        return "UNGRADED", None
    if any(c.id in ("input.fatal", "input.usage") for c in checks):
        return "UNGRADED", None
    steps = [c for c in checks if c.id.startswith("step.")]
    if not steps:
        return "UNGRADED", None
    passed = sum(c.status is Status.PASS for c in steps)
    score = round(passed / len(steps), 4)
    result = "PASS" if passed == len(steps) else "PARTIAL" if passed else "FAIL"
    return result, score


# =============================================================================
# PLOTS: --plot DIR writes PNG figures (matplotlib, an optional extra: pip install '.[plots]').
# matplotlib is imported only here and only under --plot; figures are drawn on the Agg canvas
# without pyplot (no global state, nothing shown).  Every plot_* function RETURNS its Figure,
# so tests check what is drawn; write_figures saves them and lists them as INFO records
# (`figure.<name>`, measured = the PNG's path) at the end of the report and in --json.
# =============================================================================
PLOT_COLORS = {"submitted": "#1f77b4", "regenerated": "#d62728", "reference": "#2ca02c",
               "limit": "#444444", "PASS": "#2e7d32", "PARTIAL": "#ef8f00", "FAIL": "#c62828",
               "UNGRADED": "#9e9e9e"}


def plot_usage_error(out_dir: str):
    """Why `--plot DIR` cannot be honoured (checked before any grading), or None."""
    try:
        import matplotlib
    except ImportError:
        matplotlib = None
    if matplotlib is None:
        return ("--plot needs matplotlib, which is not installed: pip install '.[plots]' "
                "(or: pip install matplotlib)")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        return f"--plot {out_dir}: cannot create the directory ({exc.strerror or exc})"
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK | os.X_OK):
        return f"--plot {out_dir}: not a writable directory"
    return None


def new_figure(width: float, height: float):
    """A Figure on the Agg canvas (no pyplot), laid out with constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def reciprocal(x):
    """1/x for a secondary axis (h <-> n), quiet at 0."""
    import numpy as np
    with np.errstate(divide="ignore"):
        return 1.0 / np.asarray(x, float)


def plain_text(text) -> str:
    """Untrusted text (a submission's name, a reason) shown literally: no mathtext."""
    return str(text).replace("$", r"\$")[:80]


def verdict_title(fig, what: str, submission: str, result: str, score) -> None:
    """Every figure's title: the submission, what the figure shows, and the verdict."""
    name = os.path.basename(os.path.normpath(str(submission))) or str(submission)
    tail = f"RESULT: {result}" + ("" if score is None else f"   SCORE: {score}")
    fig.suptitle(f"{plain_text(name)}: {what}\n{tail}", fontsize=11)


def write_figures(out_dir: str, figures: list) -> list:
    """figures: [(name, caption, build)], build() -> Figure, saved as DIR/<name>.png.  One INFO
    record per figure; a figure that cannot be drawn says so and never changes the grade."""
    out = []
    try:
        os.makedirs(out_dir, exist_ok=True)     # a per-submission subfolder is made here
    except OSError:
        pass                                    # each figure then records why it is missing
    for name, caption, build in figures:
        path = os.path.join(os.path.abspath(out_dir), f"{name}.png")
        try:
            build().savefig(path)
        except Exception as exc:    # a drawing failure must not turn into a grading failure
            out.append(Check(f"figure.{name}", Status.INFO,
                             f"not drawn: {type(exc).__name__}: {str(exc)[:200]}"))
            continue
        out.append(Check(f"figure.{name}", Status.INFO, f"{path}: {caption}", path))
    return out


def plot_leaderboard(rows: list, *, score_key: str = "score", score_label: str = "SCORE",
                     grader: str = GRADER_NAME):
    """Several submissions graded in one call: one horizontal bar per submission, best first,
    coloured by RESULT; an UNGRADED row (score None) is marked UNGRADED at 0.
    rows: [{"submission": str, score_key: float | None, "result": str, ...}] (the leaderboard's
    rows; score_key names the column drawn, e.g. "overall_accuracy" or "step_accuracy")."""
    def value(r):
        v = r.get(score_key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
            else None
    ranked = sorted(rows, key=lambda r: (value(r) is None, -(value(r) or 0.0)))
    fig = new_figure(8.0, 1.6 + 0.38 * max(1, len(ranked)))
    ax = fig.add_subplot()
    names = [plain_text(os.path.basename(os.path.normpath(str(r.get("submission", "?"))))) for r in ranked]
    seen = set()
    for i, r in enumerate(ranked):
        score = value(r)
        result = str(r.get("result") or ("UNGRADED" if score is None else "graded"))
        color = PLOT_COLORS.get(result, PLOT_COLORS["submitted"])
        ax.barh(i, 0.0 if score is None else float(score), color=color, height=0.6,
                hatch=None if score is not None else "//", edgecolor=color,
                label=None if result in seen else result)
        seen.add(result)
        ax.text((score or 0.0) + 0.01, i, "UNGRADED" if score is None else f"{score:.4g}  {result}",
                va="center", fontsize=9)
    ax.set_yticks(range(len(ranked)), names)
    ax.invert_yaxis()
    ax.set_xlim(0.0, max([1.0] + [value(r) or 0.0 for r in ranked]) * 1.12)
    ax.axvline(1.0, color=PLOT_COLORS["limit"], lw=0.8, ls=":", label="full score")
    ax.set_xlabel(f"{score_label} (fraction of full credit, dimensionless)")
    ax.set_ylabel("submission")
    ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(f"{grader}: leaderboard of {len(ranked)} submission(s), best first", fontsize=11)
    return fig


def plot_subdir(out_dir: str, submission: str, index: int) -> str:
    """With several submissions, each one's figures go to DIR/<k>-<name> (names may repeat)."""
    name = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_"
                   for ch in os.path.basename(os.path.normpath(str(submission))))[:60]
    return os.path.join(out_dir, f"{index + 1:02d}-{name or 'submission'}")


def write_leaderboard_figure(out_dir: str, rows: list, **kw) -> list:
    """DIR/leaderboard.png for several submissions (kw: plot_leaderboard's); its INFO record."""
    return write_figures(out_dir, [("leaderboard", f"scores of {len(rows)} submissions",
                                    lambda: plot_leaderboard(rows, **kw))])


# ---- SciCode figures -----------------------------------------------------------------------
STEP_STATES = (("passed", "#2e7d32"), ("failed (model)", "#c62828"),
               ("failed (harness)", "#ef8f00"), ("not run", "#bdbdbd"))


def step_states(steps: list, checks: list) -> dict:
    """{step: state} for the in-scope steps [(problem, index, step)], from the records alone:
    a PASS step record is passed, a FAIL one is failed (harness) when the census classified
    it a harness fault, else failed (model); a step with no record did not run."""
    rec = {c.id[5:]: c for c in checks if c.id.startswith("step.")}
    out = {}
    for _, _, sid in steps:
        c = rec.get(sid)
        out[sid] = ("not run" if c is None else "passed" if c.status is Status.PASS
                    else "failed (harness)" if "[harness:" in c.message else "failed (model)")
    return out


def plot_scicode_grid(steps: list, states: dict, *, submission: str, result: str, score):
    """The problems x steps grid: one cell per in-scope step, coloured passed / failed (model)
    / failed (harness) / not run; positions with no in-scope step (no-test steps) blank."""
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    problems = sorted({p for p, _, _ in steps}, key=lambda p: _step_key(p + ".0"))
    width = max([i for _, i, _ in steps], default=0) + 1
    grid = np.full((max(1, len(problems)), width), np.nan)
    code = {name: k for k, (name, _) in enumerate(STEP_STATES)}
    for p, i, sid in steps:
        grid[problems.index(p), i] = code[states.get(sid, "not run")]
    fig = new_figure(max(6.5, 0.45 * width + 4.5), 2.2 + 0.24 * max(1, len(problems)))
    ax = fig.add_subplot()
    ax.imshow(np.ma.masked_invalid(grid), cmap=ListedColormap([c for _, c in STEP_STATES]),
              vmin=-0.5, vmax=len(STEP_STATES) - 0.5, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(width), [str(i + 1) for i in range(width)], fontsize=8)
    ax.set_yticks(np.arange(len(problems)), [plain_text(p) for p in problems],
                  fontsize=7 if len(problems) > 30 else 9)
    ax.set_xticks(np.arange(width + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(problems) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", lw=1.0)
    ax.tick_params(which="minor", length=0)
    if len(steps) <= 300:
        for p, i, sid in steps:
            ax.text(i, problems.index(p), plain_text(sid), ha="center", va="center", fontsize=7,
                    color="white" if states.get(sid) != "not run" else "black")
    counts = {name: sum(v == name for v in states.values()) for name, _ in STEP_STATES}
    ax.legend(handles=[Patch(fc=c, label=f"{name}: {counts[name]}") for name, c in STEP_STATES]
              + [Patch(fc="white", ec="0.6", label="no in-scope step (no-test step or none)")],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.set_xlabel("step within the problem (1-based)")
    ax.set_ylabel("problem id")
    if not steps:
        ax.text(0.5, 0.5, "no in-scope step", ha="center", va="center", transform=ax.transAxes)
    verdict_title(fig, f"{counts['passed']}/{len(steps)} steps passed", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: the problems x steps grid, as an INFO record listing the PNG."""
    steps = figures_data.get("steps") or []
    states = step_states(steps, checks)
    return write_figures(out_dir, [
        ("scicode_steps", "problems x steps grid: passed / failed (model) / failed (harness) / not run",
         lambda: plot_scicode_grid(steps, states, submission=submission, result=result, score=score))])


# =============================================================================
# PRINTING AND CLI
# =============================================================================
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "steps_passed": lambda v, keys: f"{v}/{keys.get('steps_in_scope')}",
    "problems_solved": lambda v, keys: f"{v}/{keys.get('problems_in_scope')}",
}
LEADERBOARD = (("step_accuracy", "keys.step_accuracy", "desc"),
               ("problem_accuracy", "keys.problem_accuracy", "desc"))
POSITIVE_OPTIONS = ("timeout", "mem_gb", "jobs")   # > 0 and finite (NaN, inf: usage errors)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def format_check(c: Check, width: int = 30) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<{width}} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None, quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW and the census when quiet), the summary over ALL
    checks, keys, verdict."""
    stream = stream or sys.stdout
    shown = [c for c in checks if not quiet or c.status in (Status.FAIL, Status.REVIEW)
             or c.id.startswith("census.")]
    width = max([30] + [len(c.id) for c in shown])
    for c in shown:
        print(format_check(c, width), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    for key, value in keys.items():
        print(f"{key}: {format_value(key, value, keys)}", file=stream)
    print(f"RESULT: {result}", file=stream)
    if score is not None:
        print(f"SCORE: {score}", file=stream)


def print_submission_output(outcomes: dict, stream=None) -> None:
    """Captured child output, indented under a header, on stderr only."""
    stream = stream or sys.stderr
    shown = False
    for phase, oc in outcomes.items():
        text = (oc.stdout + oc.stderr).strip()
        if not text:
            continue
        if not shown:
            print("submission output:", file=stream)
            shown = True
        print(f"  [{phase}]", file=stream)
        for line in text.splitlines()[:40]:
            print("    " + line[:300], file=stream)


def write_official_outputs(out_dir: str, results: dict, keys: dict, wall: float) -> None:
    """Official-style outputs: <out>/scicode.json (problem -> passed steps),
    <out>/scicode.txt (summary), <out>/logs/<step>.txt (pass | fail | time out)."""
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    passed = {}
    for step, res in results.items():
        pid = step.split(".")[0]
        passed.setdefault(pid, [])
        if res.passed:
            passed[pid].append(step)
        word = "pass" if res.passed else "time out" if (res.failure or {}).get("type") == "Timeout" else "fail"
        with open(os.path.join(out_dir, "logs", f"{step}.txt"), "w") as fh:
            fh.write(word + "\n")
    order = sorted(passed, key=lambda p: int(p) if p.isdigit() else 0)
    with open(os.path.join(out_dir, "scicode.json"), "w") as fh:
        json.dump({p: passed[p] for p in order}, fh, indent=4)
    solved = [int(p) if p.isdigit() else p for p in order
              if len(passed[p]) == sum(1 for s in results if s.split(".")[0] == p)]
    with open(os.path.join(out_dir, "scicode.txt"), "w") as fh:
        fh.write(f"correct problems: {keys['problems_solved']}/{keys['problems_in_scope']}\n"
                 f"correct steps: {keys['steps_passed']}/{keys['steps_in_scope']}\n\n"
                 f"duration: {wall} seconds\n\ncorrect problems: \n\n{solved}\n")


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="generations: a folder of <step>.txt/<step>.py raw replies, or a JSONL of "
               '{"step_number": "10.1", "completion": "..."} lines.\n'
               "exit codes: 0 every step passed, 1 graded below full score, "
               "2 UNGRADED (--no-exec, --dry-run) or usage error (a path that does not exist, an "
               "option out of range, an output that cannot be written), "
               "3 harness indicted, --strict without file isolation, unreadable targets file, or "
               "grader failure, 130 interrupted; "
               "with several generation sets, the largest of theirs")
    add_report_options(p, submissions_help="folder of <step>.txt/.py replies, or a JSONL of "
                       "{step_number, completion}", jobs=False)
    p.add_argument("--problems", nargs="+", metavar="FILE",
                   help="problems_all.jsonl and/or problems_dev.jsonl (required)")
    p.add_argument("--h5", metavar="PATH", help="the targets file test_data.h5 (required)")
    p.add_argument("--split", choices=("test", "dev", "all"), default=None,
                   help="which loaded problems to grade (dev = problems with ground_truth_code); "
                        "default: every loaded problem (named by the splits present)")
    p.add_argument("--context", choices=("self", "reference"), default=None,
                   help="prior-step code: the generations' own (default for test) or "
                        "ground_truth_code (default for dev)")
    p.add_argument("--special-steps", metavar="DIR",
                   help="reference code of the no-test steps 13.6, 62.1, 76.3 as DIR/<step>.txt")
    p.add_argument("--timeout", type=float, default=SPEC["timeout_s"],
                   help="wall-clock seconds per step (default %(default)s)")
    p.add_argument("--mem-gb", type=float, default=SPEC["mem_gb"],
                   help="address-space limit per step in GiB (default %(default)s)")
    p.add_argument("--jobs", type=int, default=None,
                   help="parallel step workers (default: cores); with several generation sets, "
                        "how many are graded at a time (each then with one worker)")
    p.add_argument("--dry-run", action="store_true",
                   help=f"prove the plumbing only; a step passes where '{SPEC['dry_marker']}' is seen; "
                        "RESULT: UNGRADED, no SCORE, exit 2")
    p.add_argument("--strict", action="store_true",
                   help="a single harness-fault failure indicts the run; flagged code fails its step; "
                        "without file isolation the run is not certified (UNGRADED, exit 3)")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: diagnostics only, RESULT: UNGRADED, exit 2")
    return p


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    if args.merge:
        return
    if not args.problems:
        raise UsageError("--problems FILE ... is required")
    if not args.h5:
        raise UsageError("--h5 PATH is required")
    for path in args.problems:
        if not os.path.isfile(path):
            raise UsageError(f"--problems {path}: no such file")
    if not os.path.isfile(args.h5) and not args.no_exec:
        raise UsageError(f"--h5 {args.h5}: no such file")
    if args.special_steps and not os.path.isdir(args.special_steps):
        raise UsageError(f"--special-steps {args.special_steps} is not a folder")
    for sub in args.submissions:
        if not os.path.exists(sub):
            raise UsageError(f"{sub}: no such file or folder")


def standalone_action(args):
    return None


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    args = argparse.Namespace(**vars(args))
    args.submission = submission
    try:
        report = grade(args)
    finally:
        discard_prestarted()        # workers launched for steps that never ran (an early return)
    if args.out and report.outcomes:
        write_official_outputs(args.out, report.outcomes, report.keys,
                               round(report.phases.get("total", 0.0), 2))
    return report


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict, no_exec=args.no_exec, dry=args.dry_run)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        indicted = any(c.id in ("census.verdict", "input.fatal") and c.status is Status.FAIL
                       for c in report.checks) or strict_uncertified(report.checks)
        return EXIT_GRADER if indicted else EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    print_submission_output({f"step {s}": r for s, r in report.outcomes.items() if not r.passed})
    print_report(report.checks, result, score, report.keys, quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {"steps": {s: dataclasses.asdict(r) for s, r in report.outcomes.items()}}

def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    keys = summary_keys(checks, {}, "", "", False)
    return {k: keys[k] for k in ("step_accuracy", "problem_accuracy")}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ("also official-style outputs (scicode.json, scicode.txt, logs/) and resume/: each step's "
            "judged result as it finishes; a rerun with the same DIR, inputs and grader skips the "
            "steps already graded (one generation set per DIR)")
REPORT_SCHEMA = json.loads(    # schemas/grade_scicode.report.schema.json, the same document
    r'{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"grade_scicode.report.schema'
    r'.json","title":"grade_scicode report (--json)","description":"One submission graded by grade'
    r'_scicode.py: every record, typed keys, the run block. With several submissions --json holds '
    r'one such document per line.","type":"object","required":["grader","version","grader_sha256",'
    r'"submission","submission_sha256","submission_files","submission_bytes","checks","review","ph'
    r'ases","keys","result","score","run","steps","sandbox"],"properties":{"grader":{"const":"grad'
    r'e_scicode"},"version":{"type":"string","pattern":"^\\d+\\.\\d+\\.\\d+"},"grader_sha256":{"ty'
    r'pe":"string","pattern":"^[0-9a-f]{64}$"},"submission":{"type":"string"},"label":{"type":"str'
    r'ing","minLength":1,"pattern":"^[^\\u0000-\\u001f\\u007f]+$","description":"the row name give'
    r'n with --label (else the leaderboard names the row by the shortest path suffix that tells it'
    r' apart)"},"submission_sha256":{"type":["string","null"],"pattern":"^[0-9a-f]{64}$"},"submiss'
    r'ion_files":{"type":"integer","minimum":0},"submission_bytes":{"type":"integer","minimum":0},'
    r'"checks":{"type":"array","items":{"type":"object","required":["id","status","message","measu'
    r'red","limit"],"additionalProperties":false,"properties":{"id":{"type":"string","minLength":1'
    r'},"status":{"enum":["PASS","FAIL","REVIEW","SKIP","INFO"]},"message":{"type":"string"},"meas'
    r'ured":{},"limit":{}}}},"review":{"type":"array","items":{"type":"object","required":["id","s'
    r'tatus","message","measured","limit"],"additionalProperties":false,"properties":{"id":{"type"'
    r':"string","minLength":1},"status":{"const":"REVIEW"},"message":{"type":"string"},"measured":'
    r'{},"limit":{}}}},"phases":{"type":"object","additionalProperties":{"type":"number","minimum"'
    r':0}},"keys":{"type":"object","properties":{"split":{"enum":["test","dev","all"]},"context":{'
    r'"type":"string"},"mode":{"enum":["normal","DRY_RUN"]},"steps_passed":{"type":"integer","mini'
    r'mum":0},"steps_in_scope":{"type":"integer","minimum":0},"step_accuracy":{"type":["number","n'
    r'ull"],"minimum":0,"maximum":1},"problems_solved":{"type":"integer","minimum":0},"problems_in'
    r'_scope":{"type":"integer","minimum":0},"problem_accuracy":{"type":["number","null"],"minimum'
    r'":0,"maximum":1},"harness_fault_steps":{"type":"integer","minimum":0}},"additionalProperties'
    r'":{"type":["number","integer","boolean","string","array","object","null"]}},"result":{"enum"'
    r':["PASS","PARTIAL","FAIL","UNGRADED"]},"score":{"type":["number","null"],"minimum":0,"maximu'
    r'm":1},"run":{"type":"object","properties":{"options":{"type":"object"},"exit_code":{"enum":['
    r'0,1,2,3,130]},"started":{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d'
    r'\\dZ$"},"wall_s":{"type":"number","minimum":0},"python":{"type":"string"},"numpy":{"type":["'
    r'string","null"]},"scipy":{"type":["string","null"]},"h5py":{"type":["string","null"]},"platf'
    r'orm":{"type":"string"},"sandbox":{"type":"object"}},"required":["options","exit_code","start'
    r'ed","wall_s","python","numpy","scipy","h5py","platform","sandbox"],"additionalProperties":fa'
    r'lse},"steps":{"type":"object","additionalProperties":{"type":"object","required":["step","pa'
    r'ssed","cases","failure","wall"],"properties":{"step":{"type":"string"},"passed":{"type":"boo'
    r'lean"},"cases":{"type":"array","items":{"type":"object"}},"failure":{"type":["object","null"'
    r']},"wall":{"type":"number"},"stdout":{"type":"string"},"stderr":{"type":"string"},"marker":{'
    r'"type":"boolean"}}}},"sandbox":{"type":"object","description":"sandbox_level() of the runner'
    r' (the same as run.sandbox); {\"available\": false} where no code runs or the runner does not'
    r' report it"},"signature":{"type":"string","pattern":"^hmac-sha256:[0-9a-f]{64}$","descriptio'
    r'n":"with --sign KEYFILE: HMAC-SHA256 keyed by the bytes of KEYFILE over this document withou'
    r't its signature, as JSON with sorted keys, no spaces, ASCII only; --merge --sign refuses a r'
    r'eport without a matching one"}},"additionalProperties":false,"allOf":[{"if":{"properties":{"'
    r'result":{"const":"UNGRADED"}}},"then":{"properties":{"score":{"type":"null"}}},"else":{"prop'
    r'erties":{"score":{"type":"number"}}}}]}')


# =============================================================================
# REPORTS: usage errors, the run block, progress, many submissions, the
# leaderboard (the same text in every grader; only the tables LEADERBOARD,
# KEY_FORMATS, POSITIVE_OPTIONS and OUTPUT_OPTIONS above differ)
# =============================================================================
class UsageError(Exception):
    """Something wrong with the grader's own inputs: one line on stderr, exit 2, before any work."""


class CliParser(argparse.ArgumentParser):
    """argparse whose errors are one line on stderr (no usage block) and exit 2."""

    def error(self, message):
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_UNGRADED)


EXIT_FULL, EXIT_BELOW, EXIT_UNGRADED, EXIT_GRADER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
TABLE_FORMATS = {".csv": "csv", ".md": "markdown", ".markdown": "markdown"}
_PROGRESS = {"on": False, "label": "", "t0": 0.0, "tty": False}


def add_report_options(p, *, submissions_help: str, jobs: bool = True) -> None:
    """The options every grader shares: submissions, --json, --table, --merge, --jobs, --quiet,
    --version (the hidden --report-child runs one submission of a many-submission call)."""
    p.add_argument("submissions", nargs="*", metavar="SUBMISSION", help=submissions_help +
                   " (several: each graded in its own grader process, then a leaderboard)")
    p.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH (checked "
                   "writable before grading); with several submissions a JSON Lines file, one "
                   "document per line (name it .jsonl)")
    p.add_argument("--table", metavar="PATH", help="write the leaderboard to PATH: CSV (.csv) or "
                   "Markdown (.md)")
    p.add_argument("--merge", nargs="+", metavar="REPORT.json",
                   help="no grading: build the leaderboard from reports written by --json elsewhere "
                        "(.json or .jsonl); each is re-judged from its own records by this grader "
                        "and refused (exit 2, no ranking) when its claims do not follow, it breaks "
                        "the report schema or another grader file wrote it; the same submission "
                        "and options twice is listed once; the exit code is the live run's")
    p.add_argument("--sign", metavar="KEYFILE",
                   help="sign each report with HMAC-SHA256 keyed by KEYFILE's bytes (at least 32; "
                        "keep the file where submitted code cannot read it); with --merge or --out, "
                        "refuse every report not signed with that key")
    p.add_argument("--allow-other-grader", action="store_true",
                   help="with --merge: accept reports whose grader_sha256 is not this grader "
                        "file's (their records are still re-judged by this grader)")
    p.add_argument("--label", action="append", metavar="NAME",
                   help="the submission's name in the leaderboard and its report (once per "
                        "submission, in order; default: the shortest path suffix that tells the "
                        "submissions apart)")
    p.add_argument("--out", metavar="DIR",
                   help="keep each submission's report in DIR/reports/ as it finishes; a rerun with "
                        "the same DIR reuses every kept report whose submission bytes, grading "
                        "options and grader file match (with several submissions each one's own "
                        "outputs go to DIR/subs/NAME/)" + (f"; {OUT_HELP}" if OUT_HELP else ""))
    if jobs:
        p.add_argument("--jobs", type=int, default=1,
                       help="with several submissions, how many are graded at a time (default 1)")
    p.add_argument("--quiet", action="store_true",
                   help="print only FAIL / REVIEW_REQUIRED lines, the summary and the verdict; no "
                        "progress (the summary still counts every record)")
    p.add_argument("--plot", metavar="DIR", help="also write PNG figures to DIR, listed as figure.* "
                   "records (needs matplotlib: pip install '.[plots]'); with several submissions, "
                   "one subfolder each and DIR/leaderboard.png")
    p.add_argument("--version", action="version", version=f"{GRADER_NAME} {GRADER_VERSION}")
    p.add_argument("--report-child", metavar="FILE", help=argparse.SUPPRESS)


def check_output_path(path: str, option: str, *, directory: bool = False) -> None:
    """An output path the grader will write, proven writable now (UsageError if not).  A file
    that did not exist before is removed again; a directory is created."""
    try:
        if directory:
            os.makedirs(path, exist_ok=True)
            with tempfile.TemporaryFile(dir=path):
                pass
            return
        if os.path.isdir(path):
            raise UsageError(f"{option} {path}: is a directory")
        existed = os.path.exists(path)
        with open(path, "a"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot be written ({exc.strerror or exc})")


def common_usage_checks(args) -> None:
    """The usage rules every grader shares (its own come from usage_checks)."""
    for name in POSITIVE_OPTIONS:
        value = getattr(args, name, None)
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)
                                      and value > 0):
            raise UsageError(f"--{name.replace('_', '-')} must be a positive finite number, "
                             f"not {value}")
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.merge:
        if args.submissions:
            raise UsageError("--merge takes report files, not submissions")
        for path in args.merge:
            if not os.path.isfile(path):
                raise UsageError(f"--merge {path}: no such report file")
        for name in ("label", "out"):
            if getattr(args, name, None):
                raise UsageError(f"--{name} applies to gradings; --merge grades nothing (merged "
                                 "reports keep the labels they were graded with)")
    elif getattr(args, "allow_other_grader", False):
        raise UsageError("--allow-other-grader applies to --merge only")
    labels = getattr(args, "label", None)
    if labels:
        if len(labels) != len(args.submissions):
            raise UsageError(f"--label given {len(labels)} time(s) for {len(args.submissions)} "
                             "submission(s): one each, in order")
        if len(set(labels)) != len(labels) or not all(s.strip() and s.isprintable() for s in labels):
            raise UsageError("--label: every name must be non-empty, printable and different")
    if args.table and os.path.splitext(args.table)[1].lower() not in TABLE_FORMATS:
        raise UsageError(f"--table {args.table}: the name must end in .csv or .md")
    for name, is_dir in OUTPUT_OPTIONS:
        if getattr(args, name, None):
            check_output_path(getattr(args, name), f"--{name.replace('_', '-')}", directory=is_dir)
    if getattr(args, "plot", None) and (why := plot_usage_error(args.plot)):
        raise UsageError(why)
    if getattr(args, "sign", None):
        signing_key(args.sign)
    if getattr(args, "out", None):
        check_kept_reports(args.out)


def progress(message: str) -> None:
    """One progress event on stderr (never stdout): a line each when stderr is not a terminal,
    one rewritten line when it is; nothing under --quiet."""
    if not _PROGRESS["on"]:
        return
    text = f"[{GRADER_NAME}{_PROGRESS['label']} {time.monotonic() - _PROGRESS['t0']:6.1f}s] {message}"
    try:
        if _PROGRESS["tty"]:
            sys.stderr.write("\r\x1b[K" + text[:200])
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def progress_count(what: str, done: int, total: int, t_start: float, extra: str = "") -> None:
    """`what done/total (extra), ETA` from the mean time per finished item."""
    spent = time.monotonic() - t_start
    eta = f", ETA {spent / done * (total - done):.0f} s" if 0 < done < total else ""
    progress(f"{what} {done}/{total}{' (' + extra + ')' if extra else ''}{eta}")


def progress_start(args, submission: str) -> None:
    _PROGRESS.update(on=not getattr(args, "quiet", False), t0=time.monotonic(),
                     label=f" {os.path.basename(os.path.normpath(submission))}",
                     tty=hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


def progress_end() -> None:
    if _PROGRESS["on"] and _PROGRESS["tty"]:
        sys.stderr.write("\n")
    _PROGRESS["on"] = False


def tree_sha256(path: str) -> dict:
    """The canonical digest of a submission as graded: every regular file under `path` (symlinks
    and special files are not followed or hashed), sorted by relative POSIX path (bytewise, UTF-8),
    each as the line `<sha256 of its bytes>  <relative path>\\n`, and the sha256 of those lines;
    the same as `find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum`
    run inside the directory.  A single-file submission is its one line, named by its basename."""
    if os.path.isfile(path):
        files = [(os.path.basename(path), path)]
    else:
        files = []
        for root, dirs, names in os.walk(path, followlinks=False):
            for name in names:
                full = os.path.join(root, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    files.append((os.path.relpath(full, path).replace(os.sep, "/"), full))
    files.sort(key=lambda f: f[0].encode("utf-8", "surrogateescape"))
    outer, n_bytes = hashlib.sha256(), 0
    for rel, full in files:
        inner = hashlib.sha256()
        try:
            with open(full, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    inner.update(chunk)
                    n_bytes += len(chunk)
        except OSError:
            continue
        outer.update(f"{inner.hexdigest()}  {rel}\n".encode("utf-8", "surrogateescape"))
    return {"sha256": outer.hexdigest(), "files": len(files), "bytes": n_bytes}


def grader_sha256() -> str:
    with open(os.path.abspath(__file__), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def run_block(args, exit_code: int, started: float, wall: float) -> dict:
    """Options, exit code, start time, wall, versions, platform and the sandbox level of a run."""
    import importlib.metadata
    import platform

    def version(dist):
        loaded = getattr(sys.modules.get(dist), "__version__", None)      # (no metadata scan)
        if isinstance(loaded, str):
            return loaded
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    options = {k: v for k, v in sorted(vars(args).items()) if k not in ("submissions", "report_child",
                                                                         "keep")}
    level = globals().get("sandbox_level")
    return {"options": _jsonable(options), "exit_code": exit_code,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "wall_s": round(wall, 3), "python": platform.python_version(),
            "numpy": version("numpy"), "scipy": version("scipy"), "h5py": version("h5py"),
            "platform": platform.platform(),
            "sandbox": level() if callable(level) else {"available": False}}


def format_value(key: str, value, keys: dict) -> str:
    """A typed key as printed: KEY_FORMATS first, then bool -> true/false, float -> 4 decimals,
    lists joined by ', ', None -> n/a."""
    fmt = KEY_FORMATS.get(key)
    if fmt is not None:
        try:
            return fmt(value, keys)
        except (TypeError, ValueError, KeyError, AttributeError):   # e.g. "nan" read back from JSON
            return str(value)
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        columns = list(dict.fromkeys(k for row in value for k in row))
        return "\n".join([f"{len(value)} rows"] + text_table(value, columns))
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value("", v, keys) for v in value)
    return str(value)


def text_table(rows: list, columns: list, indent: str = "  ") -> list:
    """Rows (dicts) as aligned text lines, every column as wide as its widest cell."""
    cells = [[str(c) for c in columns]] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return [indent + "  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in cells]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(value))   # one line


def report_doc(report, result: str, score, args, exit_code: int, started: float, wall: float) -> dict:
    """The JSON report: typed values only (the schema is schemas/<grader>.report.schema.json)."""
    sub = report.submission
    digest = tree_sha256(sub) if os.path.exists(sub) else {"sha256": None, "files": 0, "bytes": 0}
    doc = {"grader": GRADER_NAME, "version": GRADER_VERSION, "grader_sha256": grader_sha256(),
           "submission": os.path.abspath(sub), "submission_sha256": digest["sha256"],
           "submission_files": digest["files"], "submission_bytes": digest["bytes"],
           "checks": [c.as_dict() for c in report.checks],
           "review": [c.as_dict() for c in report.checks if c.status is Status.REVIEW],
           "phases": {k: round(v, 4) for k, v in report.phases.items()},
           "keys": _jsonable(report.keys), "result": result, "score": score,
           "run": run_block(args, exit_code, started, wall)}
    doc["sandbox"] = doc["run"]["sandbox"]      # also at the top, where CONVENTIONS names it
    if getattr(args, "label", None):
        doc["label"] = args.label[0]
    if getattr(args, "sign", None):
        doc["signature"] = report_signature(doc, signing_key(args.sign))
    doc.update(_jsonable(report_extra(report)))
    return doc


def write_json(path: str, docs: list) -> None:
    """One document (indented), or one per line when there are several."""
    with open(path, "w") as fh:
        if len(docs) == 1:
            json.dump(docs[0], fh, indent=2, allow_nan=False)
            fh.write("\n")
        else:
            for doc in docs:
                fh.write(json.dumps(doc, allow_nan=False) + "\n")


def _finite_only(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


def read_reports(path: str, option: str = "--merge") -> list:
    """The documents of a --json file (one indented document, or JSON Lines: one per line); a
    file that is not that is refused with its reason (UsageError)."""
    def refuse(why):
        return UsageError(f"{option} {path}: refused: {why}")
    try:
        with open(path, "rb") as fh:
            text = fh.read(SPEC_REPORT_MAX_BYTES + 1).decode("utf-8")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot be read ({exc.strerror or exc})")
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text")
    if len(text) > SPEC_REPORT_MAX_BYTES:
        raise refuse(f"larger than {SPEC_REPORT_MAX_BYTES} bytes")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise refuse("empty")
    try:
        docs = [json.loads(text, parse_constant=_finite_only)]
    except (ValueError, RecursionError) as exc:
        if len(lines) == 1 or not lines[0][1].lstrip().startswith("{") or \
                lines[0][1].strip() == "{":          # one document, cut short or not JSON
            raise refuse(f"not JSON (truncated?): {str(exc)[:120]}")
        docs = []
        for n, line in lines:
            try:
                docs.append(json.loads(line, parse_constant=_finite_only))
            except (ValueError, RecursionError) as exc:
                raise refuse(f"line {n} is not JSON (truncated?): {str(exc)[:120]}")
    for doc in docs:
        if not isinstance(doc, dict):
            raise refuse(f"a JSON {type(doc).__name__}, not a report")
        if doc.get("grader") != GRADER_NAME:
            raise refuse(f"not a {GRADER_NAME} report (grader: {str(doc.get('grader'))[:40]!r})")
    return docs


SPEC_REPORT_MAX_BYTES = 1 << 30     # a report read back (--merge, --out): far above any report seen
SCHEMA_KEYWORDS = {"$schema", "$id", "title", "description", "type", "const", "enum", "required",
                   "properties", "additionalProperties", "items", "pattern", "minLength", "minimum",
                   "maximum", "allOf", "if", "then", "else"}


def _json_type_is(value, name: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {"object": isinstance(value, dict), "array": isinstance(value, list),
            "string": isinstance(value, str), "boolean": isinstance(value, bool),
            "null": value is None, "number": number,
            "integer": number and (isinstance(value, int) or float(value).is_integer())}.get(name, False)


def _json_equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def schema_errors(value, schema: dict, where: str = "") -> list:
    """Where `value` breaks `schema` ([] when it conforms): the subset of JSON Schema 2020-12
    the report schemas use (SCHEMA_KEYWORDS); a schema using any other keyword is itself an
    error, so this check never passes what it does not understand."""
    import re
    at = where or "the document"
    unknown = set(schema) - SCHEMA_KEYWORDS
    if unknown:
        return [f"{at}: the schema uses {sorted(unknown)}, which this grader cannot check"]
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not any(_json_type_is(value, n) for n in names):
            return [f"{at}: {type(value).__name__} where {' or '.join(names)} is required"]
    errors = []
    if "const" in schema and not _json_equal(value, schema["const"]):
        errors.append(f"{at}: {str(value)[:40]!r} is not {schema['const']!r}")
    if "enum" in schema and not any(_json_equal(value, e) for e in schema["enum"]):
        errors.append(f"{at}: {str(value)[:40]!r} is not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{at}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{at}: {value[:40]!r} does not match {schema['pattern']}")
    if _json_type_is(value, "number"):
        if "minimum" in schema and not value >= schema["minimum"]:
            errors.append(f"{at}: {value} < {schema['minimum']}")
        if "maximum" in schema and not value <= schema["maximum"]:
            errors.append(f"{at}: {value} > {schema['maximum']}")
    if isinstance(value, dict):
        errors += [f"{at}: '{k}' is missing" for k in schema.get("required", ()) if k not in value]
        props, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
        for k, item in value.items():
            inner = f"{where}.{k}" if where else k
            if k in props:
                errors += schema_errors(item, props[k], inner)
            elif extra is False:
                errors.append(f"{at}: unexpected key '{k}'")
            elif isinstance(extra, dict):
                errors += schema_errors(item, extra, inner)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{where}[{i}]")
    for sub in schema.get("allOf", ()):
        errors += schema_errors(value, sub, where)
    if "if" in schema:
        branch = schema.get("else" if schema_errors(value, schema["if"], where) else "then")
        if branch is not None:
            errors += schema_errors(value, branch, where)
    return errors


def _from_json(value):
    """A measured/limit value as the grader held it before _jsonable (non-finite floats are
    written as their repr)."""
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return value


def report_args(doc: dict) -> argparse.Namespace:
    """The options a report was graded with, over this grader's defaults."""
    args = build_parser().parse_args([])
    for k, v in doc["run"]["options"].items():
        if k in vars(args):
            setattr(args, k, v)
    return args


def claims_error(doc: dict):
    """Why a report's claims do not follow from its own records (None when they do): result,
    score, exit code, review flags and the ranking keys, re-derived with this grader's verdict."""
    try:
        checks = [Check(c["id"], Status(c["status"]), c["message"], _from_json(c["measured"]),
                        _from_json(c["limit"])) for c in doc["checks"]]
        args = report_args(doc)
        record = argparse.Namespace(checks=checks)
        result, score = report_verdict(record, args)
        code = exit_code_of(record, result, score)
        ranking = leaderboard_keys_of(checks, args)
    except Exception as exc:            # a record this grader's verdict cannot read
        return f"its records cannot be judged ({type(exc).__name__}: {str(exc)[:80]})"
    if (doc["result"], doc["score"]) != (result, score):
        return (f"claims RESULT {doc['result']} SCORE {doc['score']}, but its own records give "
                f"RESULT {result} SCORE {score}")
    if doc["run"]["exit_code"] != code:
        return f"claims exit code {doc['run']['exit_code']}, but its records give {code}"
    if doc["review"] != [c for c in doc["checks"] if c["status"] == Status.REVIEW.value]:
        return "its review flags are not its REVIEW records"
    for key, value in ranking.items():
        if key in doc["keys"] and not _json_equal(doc["keys"][key], _jsonable(value)):
            return f"claims {key} = {doc['keys'][key]}, but its records give {_jsonable(value)}"
    return None


def signing_key(path):
    """The --sign key (the bytes of KEYFILE, read once), or None without --sign; UsageError when
    it cannot be read or is too short to be a key."""
    if not path:
        return None
    if path not in _SIGNING_KEYS:
        try:
            with open(path, "rb") as fh:
                key = fh.read(1 << 16)
        except OSError as exc:
            raise UsageError(f"--sign {path}: cannot be read ({exc.strerror or exc})")
        if len(key) < 32:
            raise UsageError(f"--sign {path}: {len(key)} bytes; a key needs at least 32 "
                             "(e.g. head -c 32 /dev/urandom > KEYFILE)")
        _SIGNING_KEYS[path] = key
    return _SIGNING_KEYS[path]


_SIGNING_KEYS = {}


def report_signature(doc: dict, key: bytes) -> str:
    """HMAC-SHA256 of the report without its signature, as canonical JSON (sorted keys, no
    spaces, ASCII): the same after any JSON round trip, different after any edit."""
    import hmac
    body = json.dumps({k: v for k, v in doc.items() if k != "signature"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return "hmac-sha256:" + hmac.new(key, body.encode("ascii"), hashlib.sha256).hexdigest()


def report_error(doc: dict, *, other_grader: bool = False, key: bytes = None):
    """Why this grader refuses a report it did not just write (None when it accepts it): the
    schema, its signature (with --sign), the grader file that wrote it, and claims that do not
    follow from its records."""
    import hmac
    errors = schema_errors(doc, REPORT_SCHEMA)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"breaks the {GRADER_NAME} report schema: {errors[0]}{more}"
    if key is not None and "signature" not in doc:
        return "not signed (--sign takes only reports signed with its key)"
    if key is not None and not hmac.compare_digest(doc["signature"], report_signature(doc, key)):
        return "its signature does not match (edited after grading, or signed with another key)"
    if doc["grader_sha256"] != grader_sha256() and not other_grader:
        return (f"written by another {GRADER_NAME} file (grader_sha256 {doc['grader_sha256'][:12]}, "
                f"this one {grader_sha256()[:12]}; --allow-other-grader accepts it)")
    return claims_error(doc)


def grading_options(options: dict) -> dict:
    """The options that can change a grading: all but the outputs and the parallelism (what two
    reports must share to stand for the same grading)."""
    run_only = ("submissions", "json", "table", "merge", "jobs", "quiet", "plot", "out", "label",
                "allow_other_grader", "report_child", "keep", "sign")
    return {k: v for k, v in sorted(options.items()) if k not in run_only}


def report_identity(doc: dict) -> tuple:
    """One grading: the submission's bytes (its path when it had none) and its grading options."""
    return (doc["submission_sha256"] or doc["submission"],
            json.dumps(grading_options(doc["run"]["options"]), sort_keys=True))


def merge_reports(args) -> tuple:
    """The reports of --merge, each re-judged; (exit codes, documents), or a UsageError naming
    every refused report.  The same grading twice is listed once."""
    refused, docs, seen = [], [], {}
    for path in args.merge:
        try:
            found = read_reports(path)
        except UsageError as exc:
            refused.append(str(exc))
            continue
        for n, doc in enumerate(found, 1):
            where = path if len(found) == 1 else f"{path} (document {n})"
            why = report_error(doc, other_grader=getattr(args, "allow_other_grader", False),
                               key=signing_key(getattr(args, "sign", None)))
            if why:
                refused.append(f"--merge {where}: refused: {why}")
                continue
            key = report_identity(doc)
            if key in seen:
                first = docs[seen[key][1]]
                differs = "" if (first["result"], first["score"]) == (doc["result"], doc["score"]) \
                    else f" (its RESULT {doc['result']} SCORE {doc['score']} differs: the first is kept)"
                print(f"{GRADER_NAME}: --merge {where}: the same submission (sha256 "
                      f"{str(key[0])[:12]}) and options as {seen[key][0]}: listed once{differs}",
                      file=sys.stderr)
                continue
            seen[key] = (where, len(docs))
            docs.append(doc)
    if refused:
        for line in refused[:-1]:
            print(f"{GRADER_NAME}: {line}", file=sys.stderr)
        raise UsageError(refused[-1] + (f" ({len(refused)} reports refused, nothing ranked)"
                                        if len(refused) > 1 else " (nothing ranked)"))
    return [doc["run"]["exit_code"] for doc in docs], docs


def kept_report_path(out: str, submission: str) -> str:
    """Where --out DIR keeps a submission's report: DIR/reports/<its name>.<12 hex of the sha256
    of its absolute path>.json."""
    full = os.path.abspath(submission)
    name = "".join(ch if ch.isalnum() or ch in "-_" else "_"
                   for ch in os.path.basename(os.path.normpath(full)))[:60] or "submission"
    return os.path.join(out, "reports", f"{name}.{hashlib.sha256(full.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}.json")


def _is_kept_name(name: str) -> bool:
    stem, _, tag = name[:-len(".json")].rpartition(".")
    return name.endswith(".json") and bool(stem) and len(tag) == 12 and \
        all(ch in "0123456789abcdef" for ch in tag)


def check_kept_reports(out: str) -> None:
    """--out DIR: every file in DIR/reports/ must be a report this grader kept there (a foreign
    or damaged file is a usage error, never overwritten); left-over *.tmp files are ignored."""
    folder = os.path.join(out, "reports")
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.startswith(".") and name.endswith(".tmp"):
            continue
        why = None
        if not _is_kept_name(name) or os.path.islink(path) or not os.path.isfile(path):
            why = "not a name --out gives a report"
        else:
            try:
                read_reports(path, "--out")
            except UsageError as exc:
                why = str(exc).split(": refused: ", 1)[-1]
        if why:
            raise UsageError(f"--out {out}: {path} is not a report {GRADER_NAME} kept ({why}); "
                             "move it away or choose another DIR")


def reusable_report(args, submission: str, path: str):
    """The report --out kept for this submission when it stands for this grading (the same
    bytes, path, grading options and grader file, its claims re-judged); else None."""
    if not os.path.isfile(path):
        return None
    try:
        doc = read_reports(path, "--out")[0]
    except UsageError:
        return None
    why = report_error(doc, key=signing_key(getattr(args, "sign", None)))
    if why is None:
        same = {"submission": os.path.abspath(submission),
                "submission_sha256": tree_sha256(submission)["sha256"] if os.path.exists(submission)
                else None,
                "options": grading_options(_jsonable(dict(vars(args)))),
                "label": args.label[args.submissions.index(submission)] if args.label else None}
        kept = {"submission": doc["submission"], "submission_sha256": doc["submission_sha256"],
                "options": grading_options(doc["run"]["options"]), "label": doc.get("label")}
        why = next((f"its {k} differs" for k in same if same[k] != kept[k]), None)
    if why:
        print(f"{GRADER_NAME}: resume: {path} not reused: {why}", file=sys.stderr)
        return None
    return doc


def keep_report(path: str, doc: dict, code: int) -> None:
    """Keep a finished grading's report (written whole, then renamed over the old one); a
    grading that failed (grader error, interruption) keeps nothing and replaces nothing."""
    if doc is None or code not in (EXIT_FULL, EXIT_BELOW, EXIT_UNGRADED):
        return
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=2, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        print(f"{GRADER_NAME}: --out: could not keep {path} ({exc.strerror or exc})", file=sys.stderr)


def print_kept_report(doc: dict, args, stream=None) -> int:
    """A reused report as the grading printed it (its records, keys and verdict); its exit code."""
    checks = [Check(c["id"], Status(c["status"]), c["message"], c["measured"], c["limit"])
              for c in doc["checks"]]
    print(f"(reused: the report --out kept, graded {doc['run']['started']})", file=stream or sys.stdout)
    print_report(checks, doc["result"], doc["score"], doc["keys"], stream=stream, quiet=args.quiet)
    return doc["run"]["exit_code"]


def _doc_value(doc: dict, path: str):
    value = doc
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def row_labels(docs: list) -> list:
    """Each report's row name: its --label, else the shortest trailing part of its path that no
    other report's (different) path ends with (`a/gold`, `b/gold`; `gold` when it is alone)."""
    paths = [[p for p in os.path.normpath(str(d.get("submission"))).split(os.sep) if p] or ["?"]
             for d in docs]
    labels = []
    for i, (doc, parts) in enumerate(zip(docs, paths)):
        if isinstance(doc.get("label"), str) and doc["label"]:
            labels.append(doc["label"])
            continue
        others = [p for j, p in enumerate(paths) if j != i and p != parts]
        k = 1
        while k < len(parts) and any(o[-k:] == parts[-k:] for o in others):
            k += 1
        labels.append("/".join(parts[-k:]))
    return labels


def leaderboard(docs: list) -> list:
    """One row per report, ranked by LEADERBOARD's keys in order (None last; ties share a rank,
    then by submission name)."""
    rows = []
    for doc, label in zip(docs, row_labels(docs)):
        row = {"submission": label, "result": doc.get("result")}
        for column, path, _ in LEADERBOARD:
            row[column] = _doc_value(doc, path)
        row["sha256"] = (doc.get("submission_sha256") or "")[:12] or None
        rows.append(row)

    def order(row):
        out = []
        for column, _, direction in LEADERBOARD:
            v = row[column]
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            out.append((0, -v if direction == "desc" else v) if ok else (1, 0))
        return out
    rows.sort(key=lambda r: (order(r), r["submission"], r["sha256"] or ""))
    for i, row in enumerate(rows):
        same = i and order(row) == order(rows[i - 1])
        row["rank"] = rows[i - 1]["rank"] if same else i + 1
    return [{"rank": r.pop("rank"), **r} for r in rows]


def leaderboard_columns() -> list:
    return ["rank", "submission", "result"] + [c for c, _, _ in LEADERBOARD] + ["sha256"]


def write_table(path: str, rows: list) -> None:
    """The leaderboard as CSV or Markdown, chosen by the file name's extension."""
    import csv
    columns = leaderboard_columns()
    with open(path, "w", newline="") as fh:
        if TABLE_FORMATS[os.path.splitext(path)[1].lower()] == "csv":
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(columns)
            for r in rows:
                writer.writerow(["" if r.get(c) is None else str(r[c]).lower() if isinstance(r[c], bool)
                                 else r[c] for c in columns])
        else:
            fh.write("| " + " | ".join(columns) + " |\n")
            fh.write("|" + "|".join("---" for _ in columns) + "|\n")
            for r in rows:
                fh.write("| " + " | ".join(_cell(r.get(c)).replace("|", "\\|") for c in columns) + " |\n")


def print_leaderboard(rows: list, stream=None) -> None:
    stream = stream or sys.stdout
    print(f"leaderboard ({len(rows)} submission{'s' if len(rows) != 1 else ''}; ranked by "
          + ", then ".join(c for c, _, _ in LEADERBOARD) + "):", file=stream)
    for line in text_table(rows, leaderboard_columns()):
        print(line, file=stream)


def kill_descendants() -> None:
    """SIGKILL every process this grader started that is still alive (found by parent pid under
    /proc; each in its own process group, which goes with it)."""
    me, parent = os.getpid(), {}
    try:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        stat = fh.read().decode("ascii", "replace")
                    parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
    except OSError:
        return
    found, frontier = set(), {me}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier and pid not in found}
        found |= frontier
    for pid in found:
        for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
            try:
                kill(pid)
            except (ProcessLookupError, PermissionError, OSError):
                pass


def grade_single(args, submission: str) -> tuple:
    """Grade one submission in this process: (exit code, the JSON document or None)."""
    started, t0 = time.time(), time.monotonic()
    progress_start(args, submission)
    try:
        report = grade_submission(args, submission)
        result, score = report_verdict(report, args)
        if getattr(args, "plot", None):
            report.checks += plot_report(args.plot, submission, result, score, report.checks,
                                         report.figures_data)
        finish_report(report, result, score, args)
    except UsageError as exc:
        progress_end()
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED, None
    except Exception as exc:
        if _INTERRUPT["at"] is None:
            return _grader_error(exc)
        return _interrupted_exit(submission)    # an import or a wait broken by the interrupt
    except KeyboardInterrupt:
        return _interrupted_exit(submission)
    progress_end()
    code = exit_code_of(report, result, score)
    print_submission_report(report, result, score, args)
    return code, report_doc(report, result, score, args, code, started, time.monotonic() - t0)


def _interrupted_exit(submission: str) -> tuple:
    progress_end()
    kill_descendants()
    print(f"{GRADER_NAME}: interrupted: {submission} not graded (results kept by --out are "
          "reused when rerun)", file=sys.stderr)
    return EXIT_INTERRUPTED, None


def _grader_error(exc) -> tuple:
    """A grader bug (called while it is handled): never reported as a score."""
    import traceback
    progress_end()
    traceback.print_exc(file=sys.stderr)
    print(f"GRADER_ERROR: {type(exc).__name__}: {exc}")
    print("RESULT: UNGRADED")
    return EXIT_GRADER, None


def grade_many(args, reused: dict) -> tuple:
    """Every submission in its own grader process (`--jobs` at a time), so no state, crash or
    limit of one reaches another; reports printed in the order given; `reused` (index -> report
    --out kept) are printed, not graded.  (codes, documents)"""
    import concurrent.futures
    import io
    base = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-many-")
    children = {}

    def one(i, sub):
        if i in reused:
            text = io.StringIO()
            return print_kept_report(reused[i], args, text), text.getvalue(), reused[i]
        req = os.path.join(base, f"{i}.request.json")
        out = os.path.join(base, f"{i}.report.json")
        own = None
        if args.out:        # this submission's own outputs (steps, seeds, trials) and its kept report
            own = os.path.join(args.out, "subs", os.path.basename(kept_report_path(args.out, sub))[:-5])
            os.makedirs(own, exist_ok=True)
        child = dict(vars(args), submissions=[sub], json=out, table=None, merge=None,
                     report_child=None, jobs=child_jobs(args), out=own,
                     keep=kept_report_path(args.out, sub) if args.out else None,
                     label=[args.label[i]] if args.label else None,
                     plot=plot_subdir(args.plot, sub, i) if getattr(args, "plot", None) else None)
        with open(req, "w") as fh:
            json.dump(child, fh)
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--report-child", req],
                                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        children[i] = proc
        stdout = proc.communicate()[0].decode("utf-8", "replace")
        doc = None
        if os.path.isfile(out):
            try:
                with open(out) as fh:
                    doc = json.load(fh)
            except (OSError, ValueError):
                doc = None
        return proc.returncode, stdout, doc

    codes, docs = [], []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs or 1))
    futures = [pool.submit(one, i, sub) for i, sub in enumerate(args.submissions)]
    try:
        for sub, fut in zip(args.submissions, futures):
            code, stdout, doc = fut.result()
            print(f"=== {sub}", flush=True)
            sys.stdout.write(stdout)
            sys.stdout.flush()
            if code == -signal.SIGINT or code == EXIT_INTERRUPTED:
                raise KeyboardInterrupt
            codes.append(code)
            docs.append(doc or {"grader": GRADER_NAME, "submission": os.path.abspath(sub),
                                "result": "GRADER_ERROR", "score": None, "keys": {}})
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        for proc in list(children.values()):
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGINT)
                    proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
        kill_descendants()
        codes.append(EXIT_INTERRUPTED)
        print(f"{GRADER_NAME}: interrupted after {len(docs)} of {len(args.submissions)} "
              "submissions (the leaderboard below holds the finished ones)", file=sys.stderr)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(base, ignore_errors=True)
    return codes, docs


def _interrupted(signum, frame):
    """Ctrl-C (SIGINT) or SIGTERM: every child goes at once (a thread waiting on one is released),
    then KeyboardInterrupt unwinds to grade_single / grade_many: exit 130, no traceback."""
    if _INTERRUPT["at"] is None:
        _INTERRUPT["at"] = time.monotonic()
        threading.Thread(target=_reap_after_interrupt, daemon=True).start()
    kill_descendants()
    raise KeyboardInterrupt


def _reap_after_interrupt() -> None:
    """Children a worker thread starts after the interrupt (a phase that was about to begin, a
    worker restarted) go too, until this grader exits."""
    while time.monotonic() - _INTERRUPT["at"] < 60:
        time.sleep(0.2)
        kill_descendants()


_INTERRUPT = {"at": None}     # set when interrupted: results arriving after it are not kept


def run_cli(argv=None) -> int:
    """Parse, check usage, then grade one submission here or several in child graders, or merge."""
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):     # an inherited SIG_IGN (nohup, &) is kept
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, _interrupted)
    except ValueError:          # not the main thread: the default handlers stay
        pass
    try:
        return _run_cli(argv)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def grade_all(args) -> tuple:
    """The submissions graded: one here, several in child graders; with --out, what a former
    run kept for the same grading is reused and each new report kept as it finishes."""
    subs, reused = args.submissions, {}
    if args.out and not args.report_child:
        for i, sub in enumerate(subs):
            doc = reusable_report(args, sub, kept_report_path(args.out, sub))
            if doc is not None:
                reused[i] = doc
        print(f"{GRADER_NAME}: resume: {len(reused)} of {len(subs)} submission(s) reused from "
              f"{args.out}", file=sys.stderr)
    if len(subs) > 1:
        return grade_many(args, reused)
    if reused:
        return [print_kept_report(reused[0], args)], [reused[0]]
    code, doc = grade_single(args, subs[0])
    keep = getattr(args, "keep", None) or (kept_report_path(args.out, subs[0]) if args.out else None)
    if keep and _INTERRUPT["at"] is None:
        keep_report(keep, doc, code)
    return [code], [doc] if doc else []


def _run_cli(argv) -> int:
    for stream in (sys.stdout, sys.stderr):     # a submission's message may hold lone
        try:                                     # surrogates or text the locale cannot encode
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        args = build_parser().parse_args(argv)
        if args.report_child:
            with open(args.report_child) as fh:
                args = argparse.Namespace(**json.load(fh))
        else:
            usage_checks(args)
            common_usage_checks(args)
            done = standalone_action(args)
            if done is not None:
                return done
            if not args.submissions and not args.merge:
                raise UsageError("no submission given (see --help)")
    except UsageError as exc:
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED
    try:
        if args.merge:
            codes, docs = merge_reports(args)
        else:
            codes, docs = grade_all(args)
        if args.json and docs and not args.merge:
            write_json(args.json, docs)
        if len(docs) > 1 or args.merge:
            rows = leaderboard(docs)
            print_leaderboard(rows)
            if getattr(args, "plot", None):
                for c in write_leaderboard_figure(args.plot, [
                        {"submission": d.get("submission"), "score": d.get("score"),
                         "result": d.get("result")} for d in docs]):
                    print(format_check(c))
        if args.table:
            write_table(args.table, leaderboard(docs))
    except UsageError as exc:
        print(f"{GRADER_NAME}: {exc}", file=sys.stderr)
        return EXIT_UNGRADED
    except KeyboardInterrupt:
        kill_descendants()
        print(f"{GRADER_NAME}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_INTERRUPTED if EXIT_INTERRUPTED in codes else max(codes)


def main(argv=None) -> int:
    return run_cli(argv)


if __name__ == "__main__":
    sys.exit(main())
