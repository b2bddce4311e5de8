"""RECORDS (a part of grade_fem.py, grade_adi.py, grade_engiai.py, grade_modchallenge.py, grade_scicode.py; see CONTRIBUTING.md)."""
import dataclasses
import enum
import math
import os
import shutil
import tempfile
import threading
import time
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# RECORDS
# =============================================================================
_INTERRUPT = {"at": None}     # set when interrupted: results arriving after it are not kept, and
                              # no child is started after it (see reports._interrupted)


# Work dirs this grader made and has not removed yet.  Each is removed by whoever made it, in a
# `finally`; after an interrupt a thread still starting a worker can write into one after that
# removal (seen: 1 of 4 full runs left a SciCode worker folder), so the interrupted exit removes
# whatever is still here once every child is gone (reports._interrupted_exit, the watch's exit).
_WORK_DIRS: set = set()


def new_work_dir(prefix: str, dir=None) -> str:
    """A fresh private directory (tempfile.mkdtemp) the interrupted exit removes if it is left."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    _WORK_DIRS.add(path)
    return path


def make_dirs_below(anchor: str, path: str) -> None:
    """os.makedirs(path, exist_ok=True) for a folder inside `anchor`, never making `anchor`
    itself (nor what holds it): a work dir the interrupted exit removed while a thread was still
    filling it stays removed (that thread gets FileNotFoundError, as at its next open)."""
    rel = os.path.relpath(path, anchor)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        raise ValueError(f"{path} is not inside {anchor}")
    cur = anchor
    for part in ([] if rel == os.curdir else rel.split(os.sep)):
        cur = os.path.join(cur, part)
        try:
            os.mkdir(cur)
        except FileExistsError:
            pass


def remove_work_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):   # a thread writing into it as it went leaves it: kept on the list
        _WORK_DIRS.discard(path)


def remove_left_work_dirs(wait: float = 2.0) -> None:
    """At an interrupted exit, after the children are killed: every work dir still here.  A
    process SIGKILLed a moment ago (a sandbox's pid 1 making its mount points) can still write
    into one while it is removed, so the removal is tried again for up to `wait` seconds
    (measured under load: a grade_many base dir left once of 3 with a single pass)."""
    deadline = time.monotonic() + wait
    while True:
        for path in sorted(_WORK_DIRS):
            remove_work_dir(path)
        if not _WORK_DIRS or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def join_unless_interrupted(thread) -> bool:
    """Wait for `thread` unless the grader is interrupted (Ctrl-C, SIGTERM): a wait in a
    `finally` that unwinds the interrupt must not keep the grader alive.  On the main thread an
    interrupt is raised (again: one a library callback swallowed, as importlib's module-lock
    callback does, must still end the grading); elsewhere False.  True if the thread ended."""
    while thread.is_alive():
        if _INTERRUPT["at"] is not None:
            if threading.current_thread() is threading.main_thread():
                raise KeyboardInterrupt
            return False
        thread.join(0.2)
    return True


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


