#!/usr/bin/env python3
"""Grader for the cubic-Hermite FEM (Euler-Bernoulli beam) benchmark.

Run:
    python grade_fem.py SUBMISSION              # full grading
    python grade_fem.py SUBMISSION --budget 900 # allow a slower solver
    python grade_fem.py SUBMISSION --strict     # anything inconclusive scores 0.0
    python grade_fem.py SUBMISSION --no-exec    # diagnostics only: RESULT: UNGRADED, exit 2

SUBMISSION is a directory holding fem_solver.py, results.json and
reference_arrays.npz (see reference/fem/problem_spec.md).

Score: 1.0 = Tier 1, 2 and 3 pass; 0.5 = Tier 1, 2 and provenance pass but
Tier 3 is missing or fails; 0.0 = anything else.  Exit codes: 0 full score,
1 graded below full score, 2 UNGRADED or usage error, 3 grader failure.

Self-contained: needs only the standard library, numpy and scipy.

THIS FILE IS THE FOUNDATION SKELETON: the common sections (records, guarded
input, subprocess runner, printing, CLI) are final; the FEM sections are
being written.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import hashlib
import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

GRADER_NAME = "grade_fem"
GRADER_VERSION = "0.1.0"

# =============================================================================
# SPEC: every threshold, tolerance, mesh and file name (seed line in comments)
# =============================================================================
SPEC = {
    "budget_s": 600.0,          # seed: "--budget, default 600 s per phase"
    "mem_bytes": 4 << 30,       # runner address-space limit (not in seed)
    "max_json_bytes": 1 << 20,  # guarded input size caps (not in seed)
    "max_npz_bytes": 64 << 20,
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


# =============================================================================
# GUARDED INPUT: untrusted files and values
# =============================================================================
def read_json_file(path: str, check_id: str, max_bytes: int):
    """Parse a JSON file; raise Reject on missing, oversized, non-UTF-8 or malformed."""
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
        return json.loads(text, parse_constant=lambda c: float(c))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Reject(check_id, f"{os.path.basename(path)} is not valid JSON: {str(exc)[:120]}")


def load_npz_file(path: str, check_id: str, max_bytes: int) -> dict:
    """Load every array of an .npz without pickles; raise Reject on anything odd."""
    import numpy as np
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in data.files:
                arrays[key] = data[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise Reject(check_id, f"{os.path.basename(path)} holds a pickled (object) array; "
                                   "pickles are refused")
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {str(exc)[:120]}")
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, ...
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: "
                               f"{type(exc).__name__}: {str(exc)[:120]}")
    return arrays


def get_path(obj, keys: tuple, check_id: str):
    """obj[k0][k1]... with a Reject naming the missing key path."""
    cur = obj
    for i, key in enumerate(keys):
        ok = (isinstance(cur, dict) and isinstance(key, str) and key in cur) or \
             (isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur))
        if not ok:
            where = ".".join(str(k) for k in keys[: i + 1])
            raise Reject(check_id, f"results.json: {where} missing or of the wrong type")
        cur = cur[key]
    return cur


def get_number(obj, keys: tuple, check_id: str, *, integer: bool = False) -> float:
    """A finite real number (bool, string, null, NaN and inf are refused)."""
    value = get_path(obj, keys, check_id)
    where = ".".join(str(k) for k in keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Reject(check_id, f"results.json: {where} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise Reject(check_id, f"results.json: {where} is not finite ({value!r})")
    if integer and value != int(value):
        raise Reject(check_id, f"results.json: {where} must be an integer, got {value!r}")
    return int(value) if integer else float(value)


def get_array(arrays: dict, name: str, shape: tuple, check_id: str):
    """A float64 copy of a real numeric array of exactly `shape`."""
    import numpy as np
    if name not in arrays:
        raise Reject(check_id, f"array {name} missing")
    arr = arrays[name]
    if arr.dtype.kind not in "iuf":
        raise Reject(check_id, f"array {name} has dtype {arr.dtype}, expected a real number type")
    if arr.shape != shape:
        raise Reject(check_id, f"array {name} has shape {arr.shape}, expected {shape}",
                     list(arr.shape), list(shape))
    return np.asarray(arr, dtype=np.float64)


# =============================================================================
# STATIC CHECKS (import allowlist)
# =============================================================================
ALLOWED_THIRD_PARTY = ("numpy", "scipy")


def import_audit(source: str, check_prefix: str) -> list:
    """AST pass: every import outside stdlib + numpy + scipy fails; importlib /
    __import__ / exec / eval are flagged for review (the allowlist is static)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return [Check(f"{check_prefix}.syntax", Status.FAIL, f"does not parse: {exc}")]
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic = [], []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:      # relative import inside the submission's own package
                continue
            names = [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top in ("importlib",):
                dynamic.append(f"import {name} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("__import__", "exec", "eval", "compile"):
            dynamic.append(f"{node.func.id}() (line {node.lineno})")
    out = []
    if bad:
        out.append(Check(f"{check_prefix}.imports", Status.FAIL,
                         "disallowed import(s): " + ", ".join(bad), bad, "stdlib + numpy + scipy"))
    else:
        out.append(Check(f"{check_prefix}.imports", Status.PASS, "imports within stdlib + numpy + scipy"))
    if dynamic:
        out.append(Check(f"{check_prefix}.dynamic_import", Status.REVIEW,
                         "dynamic import/exec the static allowlist cannot see: " + ", ".join(dynamic),
                         dynamic))
    return out


# =============================================================================
# SUBPROCESS RUNNER
# =============================================================================
@dataclasses.dataclass
class RunOutcome:
    status: str                 # "ok" | "timeout" | "crashed" | "no_reply" | "error"
    messages: list              # every authentic (token-bearing) JSON message, in order
    reason: str
    wall: float
    returncode: int | None
    stdout: str                 # captured, capped; never printed unmarked
    stderr: str
    forged: int = 0             # lines on the reply channel without the token


# The prologue every driver starts with.  It reads its request (with a one-time
# token) from stdin before anything of the submission runs, and gives the
# driver body `send(obj)`, which writes one token-tagged JSON line to a pipe
# the runner opened.  The submission's stdout/stderr are separate pipes.
DRIVER_PROLOGUE = r'''
import json as _json, os as _os, sys as _sys
_REQ = _json.loads(_sys.stdin.readline())
_sys.stdin.close()
_TOKEN = _REQ.pop("token")
_FD = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_FD, False)
def send(obj, _fd=_FD, _tok=_TOKEN, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps({"token": _tok, "body": obj}, allow_nan=True) + "\n").encode()
    while data:
        data = data[_write(_fd, data):]
_sys.path.insert(0, _REQ["submission_dir"])
_os.chdir(_REQ["submission_dir"])
'''


def _copy_submission(src: str, dst: str, max_bytes: int = 512 << 20) -> None:
    """Copy regular files and folders only (symlinks and specials are skipped)."""
    total = 0
    os.makedirs(dst)
    for root, dirs, files in os.walk(src, followlinks=False):
        rel = os.path.relpath(root, src)
        target = dst if rel == "." else os.path.join(dst, rel)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for d in dirs:
            os.makedirs(os.path.join(target, d), exist_ok=True)
        for f in files:
            p = os.path.join(root, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            total += os.path.getsize(p)
            if total > max_bytes:
                raise OSError(f"submission larger than {max_bytes} bytes")
            shutil.copyfile(p, os.path.join(target, f))


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


def run_isolated(submission_dir: str, driver_body: str, request: dict, timeout: float, *,
                 mem_bytes: int = SPEC["mem_bytes"], cap: int = 64 << 10,
                 reply_cap: int = 256 << 20) -> RunOutcome:
    """Run DRIVER_PROLOGUE + driver_body in a fresh interpreter on a private copy
    of the submission, with resource limits and a wall-clock timeout enforced
    from outside.  Only token-tagged lines on the runner's own pipe count."""
    work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-")
    t0 = time.monotonic()
    try:
        sub = os.path.join(work, "submission")
        try:
            _copy_submission(submission_dir, sub)
        except OSError as exc:
            return RunOutcome("error", [], f"could not copy submission: {exc}", 0.0, None, "", "")
        driver_dir = os.path.join(work, "driver")
        os.makedirs(driver_dir)
        os.makedirs(os.path.join(work, "home"))
        driver = os.path.join(driver_dir, "grader_driver.py")
        with open(driver, "w") as fh:
            fh.write(DRIVER_PROLOGUE + driver_body)
        token = secrets.token_hex(16)
        req = dict(request, token=token, submission_dir=sub)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(work, "home"),
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
               "TMPDIR": os.path.join(work, "home"),
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}
        for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV"):
            if key in os.environ:
                env[key] = os.environ[key]
        rfd, wfd = os.pipe()

        def limits():
            import resource
            for res, val in ((resource.RLIMIT_AS, mem_bytes),
                             (resource.RLIMIT_CPU, int(timeout) + 30),
                             (resource.RLIMIT_FSIZE, 256 << 20),
                             (resource.RLIMIT_CORE, 0)):
                try:
                    resource.setrlimit(res, (val, val))
                except (ValueError, OSError):
                    pass

        try:
            proc = subprocess.Popen([sys.executable, "-I", driver, str(wfd)], cwd=sub, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(wfd,),
                                    start_new_session=True, preexec_fn=limits)
        finally:
            os.close(wfd)
        out, err, reply = [], [], []
        readers = [threading.Thread(target=_drain, args=(proc.stdout, out, cap), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, cap), daemon=True),
                   threading.Thread(target=_drain, args=(os.fdopen(rfd, "rb"), reply, reply_cap),
                                    daemon=True)]
        for t in readers:
            t.start()
        try:
            proc.stdin.write((json.dumps(req) + "\n").encode())
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        # the whole process group goes, whether or not the driver exited
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=2)
                if sig == signal.SIGTERM:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                break
            except subprocess.TimeoutExpired:
                continue
        for t in readers:
            t.join(timeout=5)
        wall = time.monotonic() - t0
        messages, forged = [], 0
        for line in b"".join(reply).splitlines():
            try:
                msg = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                forged += 1
                continue
            if isinstance(msg, dict) and msg.get("token") == token and "body" in msg:
                messages.append(msg["body"])
            else:
                forged += 1
        stdout = b"".join(out).decode("utf-8", "replace")
        stderr = b"".join(err).decode("utf-8", "replace")
        rc = proc.returncode
        if timed_out:
            return RunOutcome("timeout", messages, f"exceeded the {timeout:g} s budget", wall, rc,
                              stdout, stderr, forged)
        if rc != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit code {rc}"]
            return RunOutcome("crashed", messages, f"child exited with {rc}: {last[0][:200]}",
                              wall, rc, stdout, stderr, forged)
        if not messages:
            return RunOutcome("no_reply", [], "child sent no result", wall, rc, stdout, stderr, forged)
        return RunOutcome("ok", messages, "", wall, rc, stdout, stderr, forged)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# =============================================================================
# VERDICT
# =============================================================================
def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  FEM sections fill this in."""
    if no_exec:
        return "UNGRADED", None
    if any(c.status is Status.FAIL for c in checks):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    return "PASS", 1.0


# =============================================================================
# PRINTING AND CLI
# =============================================================================
def format_check(c: Check) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<30} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None) -> None:
    stream = stream or sys.stdout
    for c in checks:
        print(format_check(c), file=stream)
    counts = {s: sum(c.status is s for c in checks) for s in Status}
    print("summary: " + ", ".join(f"{s.value.lower()}={n}" for s, n in counts.items()), file=stream)
    for key, value in keys.items():
        print(f"{key}: {value}", file=stream)
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
        for line in text.splitlines()[:200]:
            print("    " + line, file=stream)


def grader_sha256() -> str:
    with open(os.path.abspath(__file__), "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def write_json_report(path: str, submission: str, checks: list, result: str, score,
                      phases: dict, keys: dict) -> None:
    doc = {"grader": GRADER_NAME, "version": GRADER_VERSION, "grader_sha256": grader_sha256(),
           "submission": os.path.abspath(submission),
           "checks": [c.as_dict() for c in checks],
           "review": [c.as_dict() for c in checks if c.status is Status.REVIEW],
           "phases": {k: round(v, 4) for k, v in phases.items()},
           "keys": _jsonable(keys), "result": result, "score": score}
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=2, allow_nan=False)
        fh.write("\n")


EXIT_FULL, EXIT_BELOW, EXIT_UNGRADED, EXIT_GRADER = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure")
    p.add_argument("submission", help="directory with fem_solver.py, results.json, reference_arrays.npz")
    p.add_argument("--budget", type=float, default=SPEC["budget_s"],
                   help="wall-clock seconds per execution phase (default %(default)s)")
    p.add_argument("--strict", action="store_true", help="anything needing review scores 0.0")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: diagnostics only, RESULT: UNGRADED, exit 2")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON to PATH")
    p.add_argument("--quiet", action="store_true", help="print only the summary and verdict")
    return p


def grade(submission: str, *, budget: float, strict: bool, no_exec: bool) -> tuple:
    """(checks, phases, outcomes).  FEM sections fill this in."""
    raise NotImplementedError


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if not os.path.isdir(args.submission):
        print(f"{GRADER_NAME}: {args.submission} is not a directory", file=sys.stderr)
        return EXIT_UNGRADED
    try:
        checks, phases, outcomes = grade(args.submission, budget=args.budget,
                                         strict=args.strict, no_exec=args.no_exec)
    except Exception as exc:  # a grader bug: never reported as a score
        import traceback
        traceback.print_exc(file=sys.stderr)
        print(f"GRADER_ERROR: {type(exc).__name__}: {exc}")
        print("RESULT: UNGRADED")
        return EXIT_GRADER
    result, score = verdict(checks, strict=args.strict, no_exec=args.no_exec)
    print_submission_output(outcomes)
    shown = [c for c in checks if not args.quiet or c.status in (Status.FAIL, Status.REVIEW)]
    print_report(shown, result, score, {})
    if args.json:
        write_json_report(args.json, args.submission, checks, result, score, phases, {})
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


if __name__ == "__main__":
    sys.exit(main())
