#!/usr/bin/env python3
"""Grader for the modular-multiplication challenge (modchallenge): a learned model computes a*b mod p.

Run:
    python grade_modchallenge.py SUBMISSION --public        # the reproducible public score
    python grade_modchallenge.py SUBMISSION                 # a fresh random seed (private-eval simulation)
    python grade_modchallenge.py SUBMISSION --seed HEX      # one given seed (bytes.fromhex)
    python grade_modchallenge.py SUBMISSION --seeds 5       # five random seeds + the robustness table
    python grade_modchallenge.py SUBMISSION --seeds public,1111,deadbeef
    python grade_modchallenge.py --write-tests DIR --public # write tier_<k>.jsonl, no submission needed
    python grade_modchallenge.py SUBMISSION --public --gpu --memory 32   # a GPU model (resident-memory watchdog)

SUBMISSION is a directory: manifest.json, Python code, weights (see
reference/modchallenge/problem_spec.md).  The grader runs the challenge's eight
gates in order (manifest, artifact size, static analysis, test-set generation,
model load, preprocess isolation, determinism, inference within budget),
running the model only in a fresh child interpreter on a private copy, with the
inference budget enforced from outside.  It reproduces the challenge's test
sets byte for byte without sympy (own BPSW nextprime).

Score: SCORE = overall_accuracy (mean accuracy over the completed scored tiers
1-10, incomplete tiers 0; the mean over seeds with --seeds) when the model is
ranked; 0.0 when a gate fails (gates 1-5 abort; a failed preprocess-isolation
or determinism gate reports the accuracies with ranked: false).  RESULT: PASS =
all gates pass and SCORE 1.0; PARTIAL = ranked, 0 < SCORE < 1 (including tiers
that ran out of budget); FAIL = a gate 1-7 failed or SCORE 0.  Exit codes: 0
full score, 1 graded below full score, 2 UNGRADED (--no-exec) or usage error,
3 grader failure.

Self-contained: the standard library only (numpy is not needed).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import enum
import hashlib
import hmac
import itertools
import json
import math
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

GRADER_NAME = "grade_modchallenge"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

# =============================================================================
# SPEC: every threshold, size and table (seed line / harness fact in comments)
# =============================================================================
SPEC = {
    "total": 1100,                      # seed §1 gate 4: "1100 problems = 100 x 11 tiers (0-10)"
    "budget_s": 300.0,                  # seed §1 gate 8: "<= 300 s wall (timeout_seconds)"
    "load_timeout_s": 300.0,            # harness: load "bounded separately" (value not given; ours)
    "max_artifact_bytes": 20 * 1024 ** 3,   # seed §1 gate 2: "<= 20 GB (EvalConfig.max_artifact_bytes)"
    "primes_per_tier": 5,               # seed §2: "draws 5 distinct primes per tier"
    "edge_cases_per_tier": 4,           # seed §2: "4 edge cases (a=0, b=0, a=1, b=1)"
    "rank_threshold": 0.90,             # seed §1 ranking keys: "accuracy >= 0.90"
    "determinism_checks": 10,           # seed §1 gate 7 / harness: 10 problems, Random(42)
    "determinism_rng": 42,
    "isolation_checks": 5,              # harness check_preprocess_isolation: 5 problems, Random(123)
    "isolation_rng": 123,
    "public_seed": b"modchallenge-public-benchmark-v1",   # seed §3
    "max_output_base": 2 ** 32,         # spec: output_base int in [2, 2^32] or "p"
    "entry_class_re": r"[a-zA-Z_]\w*(\.[a-zA-Z_]\w*)+",  # spec: manifest entry_class
    "max_manifest_bytes": 1 << 20,      # guarded input cap (ours)
    "max_source_bytes": 64 << 20,       # static analysis: larger .py files are a finding (ours)
    "max_digits": 8200,                 # significant output digits beyond this are wrong everywhere:
                                        # every answer < 2^8192 (tier-0 products of 4096-bit operands)
    "max_digit_bits": 9689,             # a digit wider than any base (2^32, or p <= 2^9689 - 1, the
                                        # largest tier-0 prime) is malformed; also keeps every digit
                                        # sent under Python's 4300-decimal-digit int/str limit
    "test_set_max_bytes": 64 << 20,     # --test-set file cap (ours)
    # issue 13: checks where the model really runs (ours; the harness checks before inference only)
    "inference_audits": 2,              # isolation audits at random batches of the inference stream,
                                        # plus one early (first 5% of batches) and one after the last
    "audit_credit_fraction": 0.20,      # the audits' own time is added to the deadline (and left
                                        # out of the tiers' wall times), up to this share of the
                                        # budget (the seed's GPU timing: <= 53 s of audit batches):
                                        # a model stalling on probes gains no more
    "audits_per_tier": 1,               # plus one at a random batch of every tier (a leak confined
                                        # to one tier, or to the later part of each, is audited)
    "audit_early_fraction": 0.05,
    "audit_pairs": 1,                   # problem pairs per audit: 3 probe problems each, answered
                                        # as usual (about 4% of the stream's problems in all)
    "stream_det_per_tier": 2,           # determinism re-run: problems drawn per completed tier from
                                        # the real inference stream, answered again (shuffled) by a
                                        # fresh process
    "memory_gb_max": 1024,              # --memory GB upper bound (usage error beyond; ours)
    # issue 23: the runtime guard (a PEP 578 audit hook in the model's process; ours)
    "guard_max_reports": 20,            # guard findings written per child run; the first decides the
                                        # verdict, the cap keeps a model flooding the hook from
                                        # flooding the result pipe (the rest are counted, not sent)
    # -- subprocess runner (the same names in every grader; read at call time) ----
    "runner_mem_bytes": 8 << 30,           # child address-space limit: a CPU model's weights and torch's arenas fit; GPU mode uses memory='resident'
    "runner_fsize_bytes": 256 << 20,  # largest file the child may write: a runaway writer cannot fill the disk
    "runner_cpu_slack_s": 30,         # RLIMIT_CPU = wall budget + this: a spinning child dies even unwatched
    "runner_term_grace_s": 2.0,       # SIGTERM -> SIGKILL: time to exit cleanly once the run is over
    "runner_output_cap_bytes": 64 << 10,   # stdout/stderr kept per stream: enough to show a traceback
    "runner_reply_cap_bytes": 256 << 20,   # reply channel: the largest honest study is ~10 MB of base64
    "runner_copy_cap_bytes": 20 * 1024 ** 3, # private submission copy: = max_artifact_bytes (gate 2): the model folder as the harness allows it
}

# seed §2 table / harness config.py: (tier, min_bits, max_bits, operand_bits, fixed primes)
TIERS = (
    (0, 1, 4096, 0, ()),                # tier 0: pure-multiplication diagnostic, unscored
    (1, 1, 3, 32, (2, 3, 5, 7)),
    (2, 4, 8, 48, ()),
    (3, 9, 16, 64, ()),
    (4, 17, 32, 96, ()),
    (5, 33, 64, 128, ()),
    (6, 65, 128, 256, ()),
    (7, 129, 256, 512, ()),
    (8, 257, 512, 1024, ()),
    (9, 513, 1024, 2048, ()),
    (10, 1025, 2048, 4096, ()),
)
SCORED_TIERS = tuple(t[0] for t in TIERS if t[0] > 0)
# seed §2 "Tier 0 ... no reduction": harness config.MULT_SUB_TIERS, 10 sub-tiers of operand bits
MULT_SUB_TIERS = ((1, 4), (5, 16), (17, 32), (33, 64), (65, 128), (129, 256), (257, 512),
                  (513, 1024), (1025, 2048), (2049, 4096))
# tier-0 p for sub-tiers whose max_bits > 128: the smallest listed Mersenne prime 2^e-1 with
# e >= 2*max_bits+1 (harness generator); sub-tiers <= 128 bits use nextprime((2^max_bits-1)^2).
TIER0_NEXTPRIME_MAX_BITS = 128
MERSENNE_EXPONENTS = (521, 607, 1279, 2203, 2281, 3217, 4253, 4423, 9689, 9941)
MERSENNE_FALLBACK = 19937

# spec "Static-analysis findings in the public harness"
FORBIDDEN_IMPORTS = frozenset({
    "sympy", "gmpy2", "mpmath", "flint", "decimal",
    "socket", "ssl", "urllib", "urllib2", "urllib3", "requests", "httpx", "http", "ftplib",
    "telnetlib", "smtplib", "poplib", "imaplib", "xmlrpc", "asyncio", "aiohttp",
    "subprocess", "multiprocessing", "ctypes", "cffi"})
DYNAMIC_EXEC = frozenset({"eval", "exec", "compile", "__import__"})
OS_PROCESS_CALLS = ("system", "popen")          # exact names
OS_PROCESS_PREFIXES = ("exec", "spawn", "fork")  # os.exec*, os.spawn*, os.fork*
# code the scan cannot read (the harness scans *.py only): flagged for review, never a finding
UNSCANNED_CODE_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")
# Escape hatches outside the harness's lists (issue 13): the harness's literal rules pass them, so
# failing them would disagree with its score; they are REVIEW_REQUIRED with the reason (--strict: 0).
REVIEW_IMPORTS = {
    "_ctypes": "the C module behind ctypes (a banned family)",
    "_cffi_backend": "the C module behind cffi (a banned family)",
    "_socket": "the C module behind socket (networking, a banned family)",
    "_ssl": "the C module behind ssl (networking, a banned family)",
    "_asyncio": "the C module behind asyncio (a banned family)",
    "_posixsubprocess": "the C module behind subprocess: starts processes (a banned family)",
    "_multiprocessing": "the C module behind multiprocessing (a banned family)",
    "_posixshmem": "multiprocessing's shared memory (a banned family)",
    "_decimal": "the C implementation of decimal (a banned family)",
    "_pydecimal": "the pure-Python implementation of decimal (a banned family)",
    "posix": "the C module behind os: system/fork/exec*/posix_spawn without the name os",
    "pty": "pty.spawn/pty.fork start processes",
    "importlib": "imports modules by computed name (reaches any banned module)",
    "imp": "imports modules by computed name (reaches any banned module)",
    "zipimport": "imports code from archives the scan does not read",
    "runpy": "runs modules and files as code",
    "code": "an interactive interpreter: runs source strings",
    "codeop": "compiles source strings",
    "builtins": "getattr(builtins, ...) reaches eval/exec/compile/__import__ by name",
    "marshal": "marshal.loads builds code objects",
    "dill": "unpickling serialised functions runs code",
    "cloudpickle": "unpickling serialised functions runs code",
    "symengine": "exact big-number arithmetic (like the banned sympy/gmpy2/flint)",
    "cypari2": "exact big-number arithmetic (like the banned sympy/gmpy2/flint)",
    "gmpy": "exact big-number arithmetic (like the banned gmpy2)",
    "__main__": "the grader's driver module (it shares the model's interpreter)",
}
# concurrent.futures' process pool starts processes (issue 23: its thread pool and `threading` are
# no escape hatch; the runtime guard fails any process the model starts, this is the early warning)
PROCESS_POOL_NAMES = frozenset({"ProcessPoolExecutor", "process"})   # concurrent.futures.<name>
# Unpickling globals the runtime guard allows (issue 23): the weights-only allowlist the task
# statement names for torch.load(weights_only=True) -- torch's own _get_allowed_globals (2.x):
# containers, tensor/parameter/storage classes, dtypes, quantisation schemes, the _rebuild_*
# functions -- plus numpy's array reconstruction (pickled ndarrays hold data only; every global
# inside an object array is checked on its own).  Regular expressions over "module.name".
GUARD_PICKLE_GLOBALS = (
    r"collections\.(OrderedDict|Counter)", r"builtins\.(bytearray|set|frozenset|complex|slice)",
    r"_codecs\.encode", r"torch\.(Size|Tensor|device|nn\.parameter\.Parameter)",
    r"torch\.serialization\._get_layout", r"torch\._utils\._rebuild_\w+",
    r"torch\._tensor\._rebuild_from_type_v2", r"torch\.(storage\.)?\w*(Tensor|Storage)",
    r"torch\.(u?int\d+|q?u?int\d+(x\d+)?|float\d+(_\w+)?|bfloat16|bool|complex\d+|bits\w+|"
    r"half|double|cfloat|cdouble|chalf|short|long)",
    r"torch\.per_(tensor|channel)_\w+",
    r"numpy\.(core|_core)\.multiarray\.(_reconstruct|scalar)", r"numpy\.(ndarray|dtype)",
    r"numpy\.dtypes\.\w+DType",
)
# module.function calls that load code (pickle and friends), flagged wherever called
REVIEW_LOAD_CALLS = {
    "pickle": ("load", "loads", "Unpickler"), "_pickle": ("load", "loads", "Unpickler"),
    "cPickle": ("load", "loads", "Unpickler"), "shelve": ("open",), "joblib": ("load",),
    "marshal": ("load", "loads"), "dill": ("load", "loads"), "cloudpickle": ("load", "loads"),
}
OS_REVIEW_PREFIXES = ("posix_spawn",)            # os.posix_spawn, os.posix_spawnp
# introspection that reaches code objects, other frames (the grader's driver shares the process)
# or the interpreter's object graph: review (an honest model has no use for them)
INTROSPECTION_ATTRS = frozenset({"_getframe", "currentframe", "f_back", "f_locals", "f_globals",
                                 "gi_frame", "tb_frame", "__subclasses__", "__globals__", "__code__",
                                 "CodeType", "FunctionType"})   # types.CodeType(...): bytecode built as data
# calls reaching other frames, the interpreter's object graph or its tracing hooks (module.function)
INTROSPECTION_CALLS = {
    "gc": ("get_objects", "get_referrers", "get_referents"),
    "inspect": ("stack", "trace", "getouterframes", "getinnerframes"),
    "sys": ("settrace", "setprofile", "_current_frames", "monitoring"),
    "threading": ("settrace", "setprofile", "settrace_all_threads", "setprofile_all_threads"),
    "traceback": ("walk_stack", "extract_stack", "print_stack", "format_stack"),
}
# importlib's submodules that read package data, not code (`importlib.resources.files(__package__)`
# to find weights): not an escape hatch by themselves; other importlib attributes are
IMPORTLIB_DATA = ("resources", "metadata")
# a module named in a string constant (a call argument or a subscript) reaches it without an import
# statement (importlib.import_module('decimal'), sys.modules['os'], resources.files('decimal')):
# the banned families and the escape-hatch modules above, except names common as plain words
NAMED_MODULE_WORDS = frozenset({"http", "code", "imp"})
# operators that are the modular product's own pieces, reached without the % / pow syntax
MODULAR_ATTRS = {"operator": ("mod", "imod", "pow", "ipow", "__mod__", "__pow__")}
MODULAR_DUNDERS = frozenset({"__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__divmod__",
                             "__rdivmod__"})          # int.__mod__, x.__pow__(y, m), on any receiver
SOURCE_ENCODINGS_SEEN_AS_UTF8 = ("utf-8", "utf-8-sig")   # tokenize.detect_encoding's names
# --gpu: what a CUDA runtime reads besides the Python installation (the runner already passes
# /dev/nvidia*): device selection variables, and a system CUDA toolkit where one is installed
GPU_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
           "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "LD_LIBRARY_PATH")
GPU_PATHS = ("/usr/local/cuda", "/usr/lib/wsl")

# exact primality: below this bound Miller-Rabin with the first 13 prime bases is proven
# deterministic (Sorenson & Webster 2015); above it, strong BPSW -- sympy.isprime's own split.
MR_DETERMINISTIC_BELOW = 3317044064679887385961981
MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


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


def _plain_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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


def python_source_encoding(data: bytes) -> str:
    """The encoding the interpreter reads `data` in (PEP 263 cookie, UTF-8 BOM, else UTF-8), as
    tokenize.detect_encoding finds it; ValueError when the interpreter itself would refuse the
    file (an unknown codec, a BOM with another cookie, bytes invalid in the encoding)."""
    import codecs
    import io
    import tokenize
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = codecs.decode(data, enc)             # strict, as compile() decodes it
    except Exception as exc:                        # any codec's own error (zlib, rot13, ...)
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:120]}")
    if not isinstance(text, str):
        raise ValueError(f"{enc} is not a text encoding")
    return enc


# =============================================================================
# STATIC CHECKS (the public harness's finding list)
# =============================================================================
def _is_int_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int"


def _scan(source, name: str) -> tuple:
    """(findings, reviews) for one Python source (str, or the file's bytes, parsed as the
    interpreter parses them: PEP 263 cookie and BOM honoured).  Each item is (name, line, rule,
    message).  Findings are the harness's rules: forbidden-import, dynamic-exec, subprocess
    (os.system/popen/exec*/spawn*/fork*), modmul-shortcut (int(_)*int(_)%int(_),
    pow(int(_),int(_),int(_))), syntax-error.  Reviews are the escape hatches outside its lists
    (REVIEW_IMPORTS, REVIEW_LOAD_CALLS, os.posix_spawn*, os's process calls reached through an
    alias, `from os import`, getattr by name, unpickling torch/numpy loads)."""
    try:
        tree = parse_python(source, name, "g3.static_check")
    except Reject as exc:
        return [(name, 0, "syntax-error", exc.check.message)], []
    out, review = [], []
    os_aliases = {"os"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            os_aliases.update(a.asname for a in node.names if a.name == "os" and a.asname)
    os_banned = tuple(OS_PROCESS_CALLS) + OS_PROCESS_PREFIXES
    called = set()                                  # Name nodes in a call's function position
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func)

    def os_process(attr):
        return attr in OS_PROCESS_CALLS or attr.startswith(OS_PROCESS_PREFIXES)

    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in FORBIDDEN_IMPORTS:
                    out.append((name, line, "forbidden-import", f"import of '{alias.name}'"))
                elif root == "importlib" and alias.name.split(".")[1:2] and \
                        alias.name.split(".")[1] in IMPORTLIB_DATA:
                    continue                        # its other attributes are flagged where used
                elif root in REVIEW_IMPORTS:
                    review.append((name, line, "escape-hatch", f"import of '{alias.name}': "
                                   f"{REVIEW_IMPORTS[root]}"))
                elif alias.name.startswith("concurrent.futures.process"):
                    review.append((name, line, "escape-hatch", f"import of '{alias.name}': "
                                   "ProcessPoolExecutor starts processes"))
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if root in FORBIDDEN_IMPORTS:
                out.append((name, line, "forbidden-import", f"import from '{node.module}'"))
            elif (node.module or "").startswith("concurrent.futures") and (
                    node.module.startswith("concurrent.futures.process")
                    or any(a.name in PROCESS_POOL_NAMES or a.name == "*" for a in node.names)):
                review.append((name, line, "escape-hatch", f"import from '{node.module}': "
                               "ProcessPoolExecutor starts processes"))
            elif root == "importlib" and (node.module.split(".")[1:2] and node.module.split(".")[1]
                                          in IMPORTLIB_DATA or node.module == "importlib" and
                                          all(a.name in IMPORTLIB_DATA for a in node.names)):
                pass                                # reads package data (weights), imports no code
            elif root in REVIEW_IMPORTS:
                review.append((name, line, "escape-hatch", f"import from '{node.module}': "
                               f"{REVIEW_IMPORTS[root]}"))
            elif node.module == "os":
                hit = [a.name for a in node.names if a.name == "*" or os_process(a.name)
                       or a.name.startswith(OS_REVIEW_PREFIXES)]
                if hit:
                    review.append((name, line, "escape-hatch", f"from os import {', '.join(hit)}: "
                                   "process calls without the name os"))
            elif root in REVIEW_LOAD_CALLS:
                hit = [a.name for a in node.names if a.name in REVIEW_LOAD_CALLS[root] or a.name == "*"]
                if hit:
                    review.append((name, line, "escape-hatch", f"from {node.module} import "
                                   f"{', '.join(hit)}: loading can run code"))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in DYNAMIC_EXEC:
                out.append((name, line, "dynamic-exec", f"call to '{f.id}'"))
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                mod, attr = f.value.id, f.attr
                if mod == "os" and os_process(attr):
                    out.append((name, line, "subprocess", f"call to 'os.{attr}'"))
                elif mod in os_aliases and (os_process(attr) or attr.startswith(OS_REVIEW_PREFIXES)):
                    review.append((name, line, "escape-hatch",
                                   f"call to '{mod}.{attr}': starts a process"
                                   + (f" (os imported as '{mod}')" if mod != "os" else "")))
                elif attr in REVIEW_LOAD_CALLS.get(mod, ()):
                    review.append((name, line, "escape-hatch", f"call to '{mod}.{attr}': loading "
                                   "can run code"))
                elif mod == "torch" and attr == "load" and not _keyword_is(node, "weights_only", True):
                    review.append((name, line, "escape-hatch", "torch.load without weights_only=True: "
                                   "unpickling can run code (torch < 2.6 defaults to False)"))
                elif mod in ("np", "numpy") and attr == "load" \
                        and not _keyword_is(node, "allow_pickle", False, absent_ok=True):
                    review.append((name, line, "escape-hatch", f"{mod}.load with allow_pickle: "
                                   "unpickling can run code"))
            if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                    and (node.args[1].value in DYNAMIC_EXEC
                         or isinstance(node.args[0], ast.Name) and node.args[0].id in os_aliases | {"posix"}
                         and node.args[1].value.startswith(os_banned + OS_REVIEW_PREFIXES)):
                review.append((name, line, "escape-hatch", f"getattr(_, {node.args[1].value!r}): "
                               "a banned call reached by name"))
            if isinstance(f, ast.Name) and f.id == "pow" and len(node.args) == 3 \
                    and all(_is_int_call(a) for a in node.args):
                out.append((name, line, "modmul-shortcut", "pow(int(_), int(_), int(_))"))
            elif isinstance(f, ast.Name) and f.id == "pow" and (len(node.args) == 3 or any(
                    k.arg == "mod" for k in node.keywords)):
                review.append((name, line, "modmul-shape", "pow(_, _, m): modular exponentiation "
                               "on values (the harness matches only pow(int(_), int(_), int(_)))"))
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) \
                    and f.value.attr in ("os", "posix") and (os_process(f.attr)
                                                             or f.attr.startswith(OS_REVIEW_PREFIXES)):
                review.append((name, line, "escape-hatch", f"call to '.{f.value.attr}.{f.attr}': "
                               "os's process calls reached through another module"))
            for arg in node.args:
                if _names_module(arg):
                    review.append((name, line, "escape-hatch", f"{arg.value!r} passed as an argument: "
                                   "a banned or escape-hatch module named in a string (imported or "
                                   "looked up by name)"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_int_call(node.right) \
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult) \
                and _is_int_call(node.left.left) and _is_int_call(node.left.right):
            out.append((name, line, "modmul-shortcut", "int(_) * int(_) % int(_)"))
        elif isinstance(node, ast.Attribute) and (node.attr in MODULAR_DUNDERS or isinstance(
                node.value, ast.Name) and node.attr in MODULAR_ATTRS.get(node.value.id, ())):
            review.append((name, line, "modmul-shape", f"'.{node.attr}': the modular product's "
                           "operators without the % / pow syntax"))
        elif isinstance(node, ast.Attribute) and node.attr == "ProcessPoolExecutor":
            review.append((name, line, "escape-hatch", "'.ProcessPoolExecutor': starts processes"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr in INTROSPECTION_CALLS.get(node.value.id, ()):
            review.append((name, line, "escape-hatch", f"'{node.value.id}.{node.attr}': reaches other "
                           "frames (the grader's driver), the object graph or the tracing hooks"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "sys" and node.attr == "modules":
            review.append((name, line, "escape-hatch", "sys.modules: modules reached by name (banned "
                           "ones already loaded, builtins, the grader's driver)"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "importlib" and node.attr not in IMPORTLIB_DATA:
            review.append((name, line, "escape-hatch", f"'importlib.{node.attr}': imports modules "
                           "by computed name (reaches any banned module)"))
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION_ATTRS:
            review.append((name, line, "escape-hatch", f"'.{node.attr}': introspection reaching code, "
                           "frames (the grader's driver) or the object graph"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value == "__main__":
            review.append((name, line, "escape-hatch", "['__main__']: the grader's driver module "
                           "(it shares the model's interpreter)"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and (node.slice.value in DYNAMIC_EXEC or _names_module(node.slice)):
            review.append((name, line, "escape-hatch", f"[{node.slice.value!r}]: a banned call or "
                           "module looked up by name"))
        elif isinstance(node, ast.Name) and node.id == "__builtins__" or \
                isinstance(node, ast.Constant) and node.value == "__builtins__" or \
                isinstance(node, ast.Attribute) and node.attr in ("__builtins__", "__self__"):
            review.append((name, line, "escape-hatch", "__builtins__ (or a builtin's __self__, the "
                           "builtins module) reaches eval/exec/compile/__import__ by name"))
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_EXEC and node not in called \
                and isinstance(node.ctx, ast.Load):
            review.append((name, line, "escape-hatch", f"'{node.id}' referenced, not called: an alias "
                           "of a banned call (the harness flags calls only)"))
    return out, review


def _names_module(node) -> bool:
    """A string constant naming a banned or escape-hatch module (its top-level package)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or len(node.value) > 100:
        return False
    root = node.value.split(".")[0]
    return root not in NAMED_MODULE_WORDS and (root in FORBIDDEN_IMPORTS or root in REVIEW_IMPORTS) \
        and re.fullmatch(r"[A-Za-z_][\w.]*", node.value) is not None


def _keyword_is(call, key: str, value, absent_ok: bool = False) -> bool:
    """True when `call` passes key=<the literal value> (or omits it, with absent_ok)."""
    for kw in call.keywords:
        if kw.arg == key:
            return isinstance(kw.value, ast.Constant) and kw.value.value is value
        if kw.arg is None:                         # **kwargs: cannot tell
            return False
    return absent_ok


def scan_source(source, name: str) -> list:
    """The harness's findings (name, line, rule, message) for one source (see _scan)."""
    return _scan(source, name)[0]


def submission_files(root: str):
    """Regular files under root (symlinks are neither followed nor copied), sorted."""
    found = []
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(dirpath, d)))
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if not os.path.islink(p) and os.path.isfile(p):
                found.append(p)
    return found


def static_scan(root: str, digests: dict | None = None) -> tuple:
    """(findings, reviews, encodings) over every .py file under root.  Each file is read as the
    interpreter reads it (python_source_encoding, then the bytes parsed as compile() parses them);
    a file the interpreter would refuse is an unreadable-source finding; `encodings` lists
    (file, codec) for files declaring a codec other than UTF-8 (review: the harness reads UTF-8).
    `digests`, when given, receives {relative path: sha256 hex} of the bytes scanned: the runtime
    guard lets the model's process compile exactly these (issue 23)."""
    findings, reviews, encodings = [], [], []
    for path in submission_files(root):
        if not path.endswith(".py"):
            continue
        rel = os.path.relpath(path, root)
        size = os.path.getsize(path)
        if size > SPEC["max_source_bytes"]:
            findings.append((rel, 0, "unreadable-source", f"{size} bytes, over the analysis cap "
                             f"of {SPEC['max_source_bytes']}"))
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(SPEC["max_source_bytes"] + 1)
            enc = python_source_encoding(data)
        except (OSError, ValueError) as exc:
            findings.append((rel, 0, "unreadable-source", f"not readable as Python source: {exc}"))
            continue
        if enc not in SOURCE_ENCODINGS_SEEN_AS_UTF8:
            encodings.append((rel, enc))
        if digests is not None:
            digests[rel.replace(os.sep, "/")] = hashlib.sha256(data).hexdigest()
        f, r = _scan(data, rel)
        findings.extend(f)
        reviews.extend(r)
    return findings, reviews, encodings


def static_findings(root: str) -> list:
    return static_scan(root)[0]


# =============================================================================
# 1. WHAT THE HARNESS SCORES: gates 1-3 (manifest, artifact size, static analysis)
# =============================================================================
@guarded
def check_manifest(sub: str):
    """Gate 1: a well-formed manifest.json (spec: the manifest)."""
    cid = "g1.manifest"
    m = read_json_file(os.path.join(sub, "manifest.json"), cid, SPEC["max_manifest_bytes"])
    if not isinstance(m, dict):
        raise Reject(cid, f"manifest.json must be a JSON object, got {type(m).__name__}")
    ec = m.get("entry_class")
    if not isinstance(ec, str) or not re.fullmatch(SPEC["entry_class_re"], ec):
        raise Reject(cid, f"entry_class must be a dotted path 'module.Class', got {ec!r}"[:200])
    base = m.get("output_base")
    if isinstance(base, str):
        if base != "p":
            raise Reject(cid, f"output_base string must be \"p\", got {base!r}"[:200])
    elif not _plain_int(base) or not 2 <= base <= SPEC["max_output_base"]:
        raise Reject(cid, f"output_base must be an integer in [2, 2^32] or \"p\", got {base!r}"[:200],
                     base, [2, SPEC["max_output_base"]])
    for key in ("model_description", "training_description"):
        if not isinstance(m.get(key), str) or not m[key]:
            raise Reject(cid, f"{key} must be a non-empty string")
    if "framework" in m and not isinstance(m["framework"], str):
        raise Reject(cid, "framework must be a string when present")
    return Check(cid, Status.PASS, f"entry_class={ec}, output_base={base}",
                 {"entry_class": ec, "output_base": base})


def check_artifact_size(sub: str) -> list:
    """Gate 2: total size of the submission's regular files <= 20 GiB."""
    total = sum(os.path.getsize(p) for p in submission_files(sub))
    msg = f"{total / 1024 ** 3:.2f} GiB ({total} bytes)"
    if total > SPEC["max_artifact_bytes"]:
        return [Check("g2.artifact_size", Status.FAIL, msg + " exceeds 20 GiB", total,
                      SPEC["max_artifact_bytes"])]
    return [Check("g2.artifact_size", Status.PASS, msg + " <= 20 GiB", total, SPEC["max_artifact_bytes"])]


def check_static(sub: str, skip: bool, digests: dict | None = None) -> list:
    """Gate 3: zero static-analysis findings (`digests`: see static_scan)."""
    if skip:
        return [Check("g3.static_check", Status.SKIP, "skipped by --skip-static-check (trusted use)")]
    found, reviews, encodings = static_scan(sub, digests)
    if found:
        shown = "; ".join(f"{f}:{ln} [{rule}] {msg}" for f, ln, rule, msg in found[:6])
        more = f" (+{len(found) - 6} more)" if len(found) > 6 else ""
        out = [Check("g3.static_check", Status.FAIL, f"{len(found)} finding(s): {shown}{more}",
                     [list(f) for f in found], 0)]
    else:
        out = [Check("g3.static_check", Status.PASS, "0 findings", 0, 0)]
    if encodings:
        out.append(Check("g3.source_encoding", Status.REVIEW,
                         f"{len(encodings)} file(s) declare a source encoding other than UTF-8 "
                         f"(scanned as Python decodes them; the harness's UTF-8 reading sees other "
                         f"text): " + ", ".join(f"{f} ({e})" for f, e in encodings[:5]),
                         [list(e) for e in encodings]))
    if reviews:
        shown = "; ".join(f"{f}:{ln} {msg}" for f, ln, _, msg in reviews[:6])
        more = f" (+{len(reviews) - 6} more)" if len(reviews) > 6 else ""
        out.append(Check("g3.escape_hatch", Status.REVIEW,
                         f"{len(reviews)} use(s) of an escape hatch outside the harness's rules "
                         f"(no finding; review by hand): {shown}{more}", [list(r) for r in reviews]))
    hidden = [os.path.relpath(p, sub) for p in submission_files(sub)
              if p.lower().endswith(UNSCANNED_CODE_SUFFIXES)]
    if hidden:
        out.append(Check("g3.unscanned_code", Status.REVIEW,
                         f"{len(hidden)} compiled code file(s) the static scan cannot read "
                         f"(importable; review them by hand): {', '.join(hidden[:5])}"
                         f"{' ...' if len(hidden) > 5 else ''}", hidden))
    return out


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


# =============================================================================
# 1. WHAT THE HARNESS SCORES: gates 5-8 (load, isolation, determinism, inference)
# =============================================================================
SHIM_BASE_MODEL = r'''"""modchallenge.interface.base_model, as provided by grade_modchallenge (interface only)."""
from abc import ABC, abstractmethod


class ModularMultiplicationModel(ABC):
    """Base class of every submission: load once, then predict digits of a*b mod p."""

    @abstractmethod
    def load(self, model_dir):
        """Load weights and config from model_dir (called once, before anything else)."""

    def preprocess_a(self, a):
        """Encode the decimal string a; may depend on a only."""
        return a

    def preprocess_b(self, b):
        """Encode the decimal string b; may depend on b only."""
        return b

    def preprocess_p(self, p):
        """Encode the decimal string p; may depend on p only."""
        return p

    @abstractmethod
    def predict_digits(self, a_enc, b_enc, p_enc):
        """(a*b) mod p as a list of int digits in the manifest's output_base, MSB first."""

    def predict_digits_batch(self, inputs):
        """One result per (a_enc, b_enc, p_enc) triple, in order."""
        return [self.predict_digits(a, b, p) for a, b, p in inputs]

    def max_batch_size(self):
        """The largest batch the grader may pass (default 1)."""
        return 1
'''
SHIM_FILES = {
    "modchallenge/__init__.py": '"""Grader-provided shim of the challenge package."""\n',
    "modchallenge/interface/__init__.py": "",
    "modchallenge/interface/base_model.py": SHIM_BASE_MODEL,
}

# The child's program after DRIVER_PROLOGUE: load the entry class, then run what the request
# asks ("check": isolation + two determinism passes; "infer": one determinism pass, "ready",
# then every tier in order), reporting each step through send().  Digits are type-checked
# here (bool / non-int is malformed), leading zeros dropped, and plain ints sent.
DRIVER_BODY = r'''
_path = list(_sys.path)                 # stdlib modules of the driver: never the submission's copies
_sys.path.remove(_REQ["submission_dir"])
import copy as _copy, importlib as _il, operator as _op, pickle as _pickle, time as _time
import dataclasses as _dataclasses, hashlib as _hashlib, pathlib as _pathlib, re as _re, types as _types
import ast as _ast, importlib._bootstrap_external as _ilx
_sys.path[:] = _path
_sys.path.insert(0, _REQ["lib_dir"])
from modchallenge.interface.base_model import ModularMultiplicationModel as _Base


# ---- The runtime guard (issue 23): a PEP 578 audit hook, installed below before anything of the
# submission is imported, judging every event of this process from then on.  The rule (the task
# statement's "runtime guard" section says what it proves and what it does not):
#   compile   text from a file: allowed when the file is one the static scan read (its path under
#             the submission and the sha256 the grader sent) or a file of the Python installation
#             (the bytes equal the file on disk).  Text from no file: allowed when it is inert
#             (names, dots, subscripts, commas, `|`, quoted names: typing's string annotations),
#             namedtuple's constructor lambda, a dataclass method generated for identifier field
#             names, or compiled by an installation function that compiles (its code names exec,
#             eval or compile) while a library's module body is being imported; ast.parse (a
#             syntax tree, not code: numpy's .npy header reader) when its flags ask for a tree only;
#             else a finding.  A tree compiled to code later is judged as text from no file.
#   marshal   only importlib's own read of a .pyc of the installation (bytes equal to the file).
#   pickle    globals of the weights-only allowlist (GUARD_PICKLE_GLOBALS) only.
#   ctypes.*, code.__new__, gc's object-graph walks, sys._current_frames: findings unless a
#             library's import does it (the object-graph walks are also refused: they would
#             reach this hook); replacing __code__/__defaults__/__kwdefaults__ of a function of
#             this driver (the guard's helpers among them): a finding.
#   processes, sockets, writes into the installation or the grader's files: findings, always.
# "A library's import": walking out from the event, a module body of the installation comes
# before any frame of the submission or of this driver.  Findings are written to the result pipe
# at once (the first SPEC guard_max_reports per run); the hook holds its state in its closure
# and takes every helper, builtin and constant through default arguments bound here.
GUARD_PROCESS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
                           "os.fork", "os.forkpty", "os.startfile", "pty.spawn"})
GUARD_INTROSPECT = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                              "sys._current_frames"})
GUARD_WRITES = frozenset({"open", "os.rename", "os.link", "os.symlink"})
GUARD_EVENTS = frozenset({"compile", "marshal.loads", "marshal.load", "pickle.find_class", "code.__new__",
                          "object.__setattr__", "modchallenge.guard.flush",
                          "cpython._PySys_ClearAuditHooks"}) | GUARD_PROCESS | GUARD_INTROSPECT | GUARD_WRITES
GUARD_PREFIXES = ("ctypes.", "socket.")
GUARD_COMPILERS = frozenset({"exec", "eval", "compile"})
GUARD_FUNC_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
GUARD_WRITE_FLAGS = _os.O_WRONLY | _os.O_RDWR | _os.O_APPEND | _os.O_CREAT | _os.O_TRUNC
_GUARD_INERT = _re.compile(r"(?:[\w\s.,\[\]|]|'[\w.]*'|\"[\w.]*\")*")
_GUARD_NAMEDTUPLE = _re.compile(r"lambda _cls, [\w, ]*: _tuple_new\(_cls, \([\w, ]*\)\)")
_GUARD_ESCAPE = {c: "?" for c in range(32)}
_GUARD_ESCAPE.update({ord('"'): "'", ord("\\"): "/", 127: "?"})


def _guard_read(path, limit, _open=_os.open, _read=_os.read, _close=_os.close, _flags=_os.O_RDONLY,
                _join=b"".join, _min=min, _len=len):
    """Up to `limit` bytes of a file, or None."""
    try:
        fd = _open(path, _flags)
    except BaseException:
        return None
    try:
        parts, n = [], 0
        while n < limit:
            chunk = _read(fd, _min(limit - n, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            n += _len(chunk)
        return _join(parts)
    except BaseException:
        return None
    finally:
        _close(fd)


def _guard_blame(frame, g):
    """'submission' (a frame of the submission or the driver comes first, walking out from the
    event), 'library' (a module body of the installation, being imported, comes first) or 'none'."""
    sub, here, roots = g[0], g[1], g[2]
    f = frame
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if fn.startswith(sub) or fn == here:
            return "submission"
        if code.co_name == "<module>" and (fn.startswith(roots) or fn.startswith("<frozen ")):
            return "library"
        f = f.f_back
    return "none"


def _guard_where(frame, g, _str=str, _len=len):
    """The first frame of the submission, walking out from the event."""
    sub = g[0]
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(sub):
            return "%s:%s in %s" % (fn[_len(sub):], _str(f.f_lineno), f.f_code.co_name)
        f = f.f_back
    return "no frame of the submission on the stack (the driver, or a thread it did not start)"


def _guard_dataclass_ok(frame, g, _type=type, _str=str, _dict=dict):
    """A dataclass method generated by dataclasses for fields whose names are all identifiers (the
    only text it interpolates): the `fields` of the _process_class frame below."""
    process_code, field_type, name_get = g[6], g[7], g[8]
    f = frame
    while f is not None and f.f_code is not process_code:
        f = f.f_back
    if f is None:
        return False
    fields = _dict.get(f.f_locals, "fields")
    if _type(fields) is not _dict:
        return False
    for k, v in _dict.items(fields):
        if _type(k) is not _str or not _str.isidentifier(k) or _type(v) is not field_type:
            return False
        n = name_get(v)
        if _type(n) is not _str or not _str.isidentifier(n):
            return False
    return True


def _guard_compile(args, frame, g, _type=type, _str=str, _bytes=bytes, _len=len,
                   _views=(bytearray, memoryview), _sha=_hashlib.sha256, _read=_guard_read,
                   _blame=_guard_blame, _dataclass=_guard_dataclass_ok, _inert=_GUARD_INERT.fullmatch,
                   _nt=_GUARD_NAMEDTUPLE.fullmatch, _compilers=GUARD_COMPILERS, _dict=dict, _int=int):
    """None when this compile is allowed, else the reason."""
    sub, roots, digests, gen_codes = g[0], g[2], g[3], g[5]
    src, fn = args[0], args[1]
    t = _type(src)
    data = src if t is _bytes else _bytes(src) if t in _views else \
        _str.encode(src, "utf-8", "surrogatepass") if t is _str else None
    named = _type(fn) is _str
    if named and fn.startswith(sub):
        rel = fn[_len(sub):]
        want = digests.get(rel)
        if want is None:
            return "compiles %s, a file the static scan did not read" % rel
        if data is None or _sha(data).hexdigest() != want:
            return "compiles text under the name %s that is not the file the static scan read" % rel
        return None
    if named and data is not None and fn.startswith(roots) and _read(fn, _len(data) + 1) == data:
        return None
    if data is not None:
        try:
            text = _bytes.decode(data, "utf-8")
        except BaseException:
            text = None
        if text is not None and (_inert(text) is not None or _nt(text) is not None):
            return None
    f = frame
    while f is not None and f.f_code.co_filename.startswith("<frozen importlib"):
        f = f.f_back
    if f is not None:
        code = f.f_code
        if code in gen_codes and _dataclass(f, g):
            return None
        if code is g[12] and _type(_dict.get(f.f_locals, "flags")) is _int \
                and _dict.get(f.f_locals, "flags") & 0x400:          # ast.PyCF_ONLY_AST: a tree
            return None
        if code.co_filename.startswith(roots) and not _compilers.isdisjoint(code.co_names) \
                and _blame(frame, g) == "library":
            return None
    return "compiles text that is no file the static scan read (%s)" % (fn if named else _type(fn).__name__)[:160]


def _guard_marshal(args, frame, g, _type=type, _str=str, _bytes=bytes, _len=len, _dict=dict,
                   _mv=memoryview, _read=_guard_read, _blame=_guard_blame):
    """None for importlib reading a .pyc of the installation (bytes equal to the file), or a
    library's import; else the reason."""
    roots, bytecode = g[2], g[9]
    if frame is not None and frame.f_code is bytecode and args:
        path = _dict.get(frame.f_locals, "bytecode_path")
        data = args[0]
        if _type(path) is _str and path.startswith(roots) and _type(data) in (_bytes, _mv):
            data = _bytes(data)
            disk = _read(path, _len(data) + 17)
            if disk is not None and disk[16:] == data:
                return None
    if _blame(frame, g) == "library":
        return None
    return "loads code with marshal that is no .pyc of the Python installation"


def _guard_written(event, args, g, _type=type, _str=str, _bytes=bytes, _int=int, _len=len,
                   _flags=GUARD_WRITE_FLAGS, _fsdecode=_os.fsdecode, _fspath=_os.fspath,
                   _getcwd=_os.getcwd, _join="/".join):
    """The reason when an open-for-writing, rename, link or symlink lands in the installation or
    the grader's files (or names its target through an object the guard cannot read); else None."""
    if event == "open":
        if _len(args) >= 3 and _type(args[2]) is _int and not args[2] & _flags:
            return None
        path = args[0]
    else:
        path = args[1] if _len(args) >= 2 else None
    t = _type(path)
    if t is _int:
        return None
    p = path if t is _str else _fsdecode(path) if t is _bytes else _fspath(path) if t in g[10] else None
    if _type(p) is not _str:
        return "%s: a target path the guard cannot read (%s)" % (event, t.__name__)
    if not p.startswith("/"):
        p = _getcwd() + "/" + p
    parts = []
    for part in p.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    p = "/" + _join(parts)
    if (p + "/").startswith(g[4]):
        return "%s: writes into the Python installation or the grader's files (%s)" % (event, p[:160])
    return None


def _guard_judge(event, args, frame, g, _type=type, _str=str, _len=len, _compile=_guard_compile,
                 _marshal=_guard_marshal, _written=_guard_written, _blame=_guard_blame,
                 _where=_guard_where, _process=GUARD_PROCESS, _introspect=GUARD_INTROSPECT,
                 _writes=GUARD_WRITES, _attrs=GUARD_FUNC_ATTRS, _fn=_types.FunctionType,
                 _code_of=_types.FunctionType.__code__.__get__):
    """None when the event is allowed, else (reason, first frame of the submission, refuse)."""
    reason, refuse = None, False
    if event == "compile":
        reason = _compile(args, frame, g)
    elif event == "marshal.loads" or event == "marshal.load":
        reason = _marshal(args, frame, g)
    elif event == "pickle.find_class":
        key = args[0] + "." + args[1] if _type(args[0]) is _str and _type(args[1]) is _str else None
        if (key is None or g[11](key) is None) and _blame(frame, g) != "library":
            reason = "unpickles the global %s, outside the weights-only allowlist" % (key or "?")[:160]
    elif event in _process:
        reason = "starts a process (%s)" % event
    elif event.startswith("socket."):
        reason = "uses a socket (%s)" % event
    elif event in _writes:
        reason = _written(event, args, g)
    elif event == "object.__setattr__":
        if _len(args) >= 2 and _type(args[0]) is _fn and _type(args[1]) is _str and args[1] in _attrs \
                and _code_of(args[0]).co_filename == g[1]:
            reason = "replaces %s of a function of the grader's driver" % args[1]
    elif event in _introspect or event.startswith("ctypes.") or event == "code.__new__":
        if _blame(frame, g) != "library":
            refuse = event in _introspect
            reason = ("walks the interpreter's object graph or other threads' frames (%s): refused"
                      % event if refuse else "calls native code through ctypes (%s)" % event
                      if event.startswith("ctypes.") else "builds a code object (code.__new__)")
    if reason is None:
        return None
    return reason, _where(frame, g), refuse


def _guard_line(tok, mode, n, event, reason, where, _str=str, _table=_GUARD_ESCAPE):
    """One result-pipe line, JSON built here (no library the model can reach)."""
    out = []
    for s in (event, reason, where):
        out.append(_str.encode(_str.translate(_str(s)[:400], _table), "ascii", "replace"))
    return (b'{"token": "' + tok + b'", "body": {"event": "guard", "mode": "' + mode + b'", "n": '
            + _str.encode(_str(n)) + b', "what": "' + out[0] + b'", "reason": "' + out[1]
            + b'", "where": "' + out[2] + b'"}}\n')


def _guard_write(fd, ident, lines, _fstat=_os.fstat, _write=_os.write, _join=b"".join):
    """Write the lines to the result pipe, if the descriptor is still the runner's; True when done."""
    try:
        st = _fstat(fd)
        if (st.st_dev, st.st_ino) != ident:
            return False
        data = _join(lines)
        while data:
            data = data[_write(fd, data):]
        return True
    except BaseException:
        return False


def _guard_install(cfg, _addhook=_sys.addaudithook, _getframe=_sys._getframe, _judge=_guard_judge,
                   _line=_guard_line, _write=_guard_write, _events=GUARD_EVENTS,
                   _prefixes=GUARD_PREFIXES, _type=type, _str=str, _err=RuntimeError):
    """Add the audit hook (it cannot be removed; its state lives in this closure only)."""
    sub = _os.path.join(_REQ["submission_dir"], "")
    scratch = _os.path.join(_REQ["scratch_dir"], "")
    here = _guard_install.__code__.co_filename
    driver_dir = _os.path.join(_os.path.dirname(here), "")
    roots = set()
    for p in [_sys.prefix, _sys.base_prefix, _sys.exec_prefix, _sys.base_exec_prefix] + _sys.path:
        if _type(p) is _str and _os.path.isabs(p):
            for q in (_os.path.join(p, ""), _os.path.join(_os.path.realpath(p), "")):
                if not (sub.startswith(q) or scratch.startswith(q) or q.startswith(sub)
                        or q.startswith(scratch)):
                    roots.add(q)
    roots.add(driver_dir)
    gen = tuple(c.__code__ for c in (getattr(_dataclasses, "_create_fn", None),
                                     getattr(getattr(_dataclasses, "_FuncBuilder", None),
                                             "add_fns_to_class", None)) if c is not None)
    g = (sub, here, tuple(sorted(roots)), _types.MappingProxyType(dict(cfg["digests"])),
         tuple(sorted(roots)), gen, _dataclasses._process_class.__code__, _dataclasses.Field,
         _dataclasses.Field.__dict__["name"].__get__, _ilx._compile_bytecode.__code__,
         (_pathlib.PurePosixPath, _pathlib.PosixPath), _re.compile(cfg["pickle_globals"]).fullmatch,
         _ast.parse.__code__)
    tok, mode = _str.encode(_CH["tok"]), _str.encode(_REQ["mode"])
    fd = _CH["out"]
    st = _os.fstat(fd)
    ident = (st.st_dev, st.st_ino)
    limit = int(cfg["max_reports"])
    pending, count = (), 0

    def hook(event, args):
        nonlocal pending, count
        if _type(event) is not _str or event not in _events and not event.startswith(_prefixes):
            return
        try:
            verdict = _judge(event, args, _getframe(1), g)
        except BaseException:
            verdict = ("the guard could not judge this event: fails closed", "?", False)
        if verdict is not None:
            count += 1
            if count <= limit:
                pending += (_line(tok, mode, count, event, verdict[0], verdict[1]),)
        if pending and _write(fd, ident, pending):
            pending = ()
        if verdict is not None and verdict[2]:
            raise _err("modchallenge grader: %s is refused in the model's process" % event)

    _addhook(hook)


def send(obj, _send=send, _audit=_sys.audit):
    """The prologue's send, after the guard wrote what it still holds (the flush event)."""
    _audit("modchallenge.guard.flush")
    _send(obj)


def ask(obj, _ask=ask, _audit=_sys.audit):
    """The prologue's ask, after the guard wrote what it still holds."""
    _audit("modchallenge.guard.flush")
    return _ask(obj)


if _REQ.get("guard") is not None:
    _guard_install(_REQ.pop("guard"))


def _short(exc):
    return (type(exc).__name__ + ": " + str(exc))[:300]


def _pack(out):
    if not isinstance(out, list):
        return {"m": "output is " + type(out).__name__ + ", not a list"}
    digits = []
    for i, d in enumerate(out):
        if isinstance(d, bool) or not isinstance(d, int):
            return {"m": "digit %d has type %s" % (i, type(d).__name__)}
        d = int.__index__(d)
        if d.bit_length() > _REQ["max_digit_bits"]:
            return {"m": "digit %d wider than any base" % i}
        digits.append(d)
    k = 0
    while k < len(digits) and digits[k] == 0:
        k += 1
    digits = digits[k:]
    if len(digits) > _REQ["max_digits"]:
        return {"m": "%d significant digits: larger than any answer" % len(digits)}
    return digits


def _run_batch(model, batch):
    """(packed outputs, None) or (None, reason) for a batch-length violation."""
    try:
        enc = [(model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p)) for a, b, p in batch]
        res = model.predict_digits_batch(enc)
        if len(res) != len(batch):
            return None, "predict_digits_batch returned %d results for %d inputs" % (len(res), len(batch))
        return [_pack(r) for r, _ in zip(res, batch)], None
    except Exception as exc:
        return [{"m": "raised " + _short(exc)}] * len(batch), None


def _batch_size(model):
    """max_batch_size() as the harness uses it (any integer, numpy's too); anything else is 1."""
    try:
        n = model.max_batch_size()
        if isinstance(n, bool):
            return 1
        return max(1, min(int.__index__(_op.index(n)), 1 << 20))
    except Exception:
        return 1


def _det_pass(model, label, sample, bs):
    outs = []
    for i in range(0, len(sample), bs):
        got, bad = _run_batch(model, sample[i:i + bs])
        if bad:
            send({"event": "det", "pass": label, "error": bad})
            return
        outs.extend(got)
    send({"event": "det", "pass": label, "outputs": outs})


def _same(x, y):
    """Equal encodings: ==, arrays all equal with one shape, or the same pickled content (custom
    objects without __eq__), or the same repr."""
    try:
        r = x == y
        if isinstance(r, bool) and r:
            return True
        if not isinstance(r, bool) and hasattr(r, "all"):
            return bool(r.all()) and getattr(x, "shape", None) == getattr(y, "shape", None)
    except Exception:
        pass
    try:
        if type(x) is type(y) and _pickle.dumps(x, 4) == _pickle.dumps(y, 4):
            return True
    except Exception:
        pass
    try:
        return type(x) is type(y) and repr(x) == repr(y)
    except Exception:
        return False


def _snap(x):
    """A copy taken when a hook returns: an encoding the model mutates later cannot be made to
    match a later call after the fact."""
    try:
        return _copy.deepcopy(x)
    except Exception:
        return x


def _isolation(model, pairs):
    pa, pb, pp = model.preprocess_a, model.preprocess_b, model.preprocess_p
    for (a, b, p), (a2, b2, p2) in pairs:
        first = (_snap(pa(a)), _snap(pb(b)), _snap(pp(p)))
        pa(a2); pb(b2); pp(p2)
        again = (pa(a), pb(b), pp(p))              # the harness's sequence
        pa(a2)
        eb = pb(b)                                   # after another a
        pb(b2)
        ep = pp(p)                                   # after another a and b
        pp(p2)
        ea = pa(a)                                   # after another p
        names = ("preprocess_a", "preprocess_b", "preprocess_p")
        for k in range(3):
            if not _same(first[k], again[k]):
                return names[k] + " gave a different result for the same input when called again"
        for name, x, y, other in (("preprocess_b", first[1], eb, "preprocess_a"),
                                  ("preprocess_p", first[2], ep, "preprocess_a/_b"),
                                  ("preprocess_a", first[0], ea, "preprocess_p")):
            if not _same(x, y):
                return name + " changed after " + other + " saw another argument (cross-argument state)"
    return ""


t0 = _time.monotonic()
try:
    _mod, _, _cls = _REQ["entry_class"].rpartition(".")
    try:
        cls = getattr(_il.import_module(_mod), _cls)
    except (ImportError, AttributeError) as exc:
        send({"event": "load_failed", "reason": "cannot import entry_class " + _REQ["entry_class"] + ": " + _short(exc)})
        raise SystemExit(0)
    if not (isinstance(cls, type) and issubclass(cls, _Base)):
        send({"event": "load_failed", "reason": _REQ["entry_class"] + " is not a subclass of "
              "modchallenge.interface.base_model.ModularMultiplicationModel"})
        raise SystemExit(0)
    model = cls()
    model.load(_REQ["submission_dir"])
except SystemExit:
    raise
except BaseException as exc:
    send({"event": "load_failed", "reason": "raised while loading: " + _short(exc)})
    raise SystemExit(0)
send({"event": "loaded", "seconds": _time.monotonic() - t0})
bs = _batch_size(model)

def _audit(model, pairs, where, _send=send):
    """Isolation re-checked inside this (the inference) process, after predictions ran, with
    probe problems that look like the stream's: for a pair x, y of problems with one prime, the
    triples (xa, xb, p), (ya, xb, p), (xa, yb, p) go through the hooks and predict_digits_batch
    in batches as usual (answers discarded); each hook must give one encoding of its argument
    whatever the other arguments were."""
    probes = []
    for x, y in pairs:
        probes += [(x[0], x[1], x[2]), (y[0], x[1], y[2]), (x[0], y[1], x[2])]
    snaps = []
    try:
        for i in range(0, len(probes), bs):
            enc = []
            for a, b, p in probes[i:i + bs]:
                e = (model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p))
                enc.append(e)
                snaps.append(tuple(_snap(v) for v in e))
            try:
                model.predict_digits_batch(enc)
            except Exception:
                pass
        reason = ""
        for k in range(0, len(snaps), 3):
            t1, t2, t3 = snaps[k:k + 3]
            for name, x, y, other in (("preprocess_b", t1[1], t2[1], "preprocess_a/_p"),
                                      ("preprocess_a", t1[0], t3[0], "the hooks before it"),
                                      ("preprocess_p", t1[2], t3[2], "preprocess_b")):
                if not reason and not _same(x, y):
                    reason = (name + " gave another encoding of the same argument once " + other +
                              " had seen other arguments (cross-argument state)")
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    _send({"event": "audit", "where": where, "reason": reason})


def _after_batch(model, where, _ask=ask):
    """Ask the grader whether to audit now: the decision is the grader's, made when asked."""
    reply = _ask({"event": "batch"})
    if isinstance(reply, dict) and reply.get("audit"):
        _audit(model, reply["audit"], where)


if _REQ["mode"] == "check":
    try:
        reason = _isolation(model, _REQ["iso_pairs"])
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    send({"event": "isolation", "reason": reason})
    for label in ("A", "B"):
        try:
            _det_pass(model, label, _REQ["det_sample"], bs)
        except Exception as exc:
            send({"event": "det", "pass": label, "error": "raised " + _short(exc)})
elif _REQ["mode"] == "recheck":
    _plan = ask({"event": "plan", "batch_size": bs}) or {}
    _cases = _plan.get("cases", [])
    outs, bad = [], None
    for i in range(0, len(_cases), bs):
        got, bad = _run_batch(model, _cases[i:i + bs])
        if bad:
            break
        outs.extend(got)
    send({"event": "recheck", "error": bad} if bad else {"event": "recheck", "outputs": outs})
else:
    try:
        _det_pass(model, "C", _REQ["det_sample"], bs)
    except Exception as exc:
        send({"event": "det", "pass": "C", "error": "raised " + _short(exc)})
    send({"event": "ready", "batch_size": bs})
    _TIERS = ask({"event": "plan", "batch_size": bs})   # the test set arrives only now, clock running
    for tid, cases in (_TIERS or {}).get("tiers", []):
        outs, bad = [], None
        for i in range(0, len(cases), bs):
            got, bad = _run_batch(model, cases[i:i + bs])
            if bad:
                break
            outs.extend(got)
            if i + bs < len(cases):                # after a tier's last batch: once it is reported
                _after_batch(model, "tier %s, after problem %d" % (tid, i + len(got)))
        if bad:
            send({"event": "tier", "tier": tid, "complete": False, "reason": bad})
        else:
            send({"event": "tier", "tier": tid, "complete": True, "outputs": outs})
            if cases:
                _after_batch(model, "tier %s, after problem %d" % (tid, len(outs)))
    _reply = ask({"event": "end"})
    if isinstance(_reply, dict) and _reply.get("audit"):
        _audit(model, _reply["audit"], "after the last tier")
    send({"event": "done"})
'''


def _samples(test_set: dict) -> tuple:
    """The harness's determinism sample (Random(42), 10 problems, tier 0 included) and
    isolation pairs (Random(123), 5 problems, paired with the reversed sample)."""
    flat = [c for tid in sorted(test_set) for c in test_set[tid]]
    det = random.Random(SPEC["determinism_rng"]).sample(flat, min(SPEC["determinism_checks"], len(flat)))
    iso = random.Random(SPEC["isolation_rng"]).sample(flat, min(SPEC["isolation_checks"], len(flat)))
    return det, list(zip(iso, iso[::-1]))


def _triple(c: Case) -> list:
    return [str(c.a), str(c.b), str(c.p)]


def _events(outcome, name: str) -> list:
    return [(m, t) for m, t in zip(outcome.messages, outcome.times)
            if isinstance(m, dict) and m.get("event") == name]


def _child_reason(outcome, what: str) -> str:
    if outcome.status in ("timeout", "crashed", "error"):
        return f"{what}: {outcome.reason}"
    return f"{what}: the child stopped without reporting it ({outcome.reason or 'exited'})"


def guard_request(digests: dict | None) -> dict | None:
    """The runtime guard's part of every child request (issue 23): the digests of the sources the
    static scan read, the unpickling allowlist, the report cap.  None (no guard) when the scan was
    skipped (--skip-static-check: trusted use, nothing was read)."""
    if digests is None:
        return None
    return {"digests": dict(digests), "pickle_globals": "|".join(f"(?:{r})" for r in GUARD_PICKLE_GLOBALS),
            "max_reports": SPEC["guard_max_reports"]}


def runtime_guard_check(outcomes: dict, guard: dict | None) -> Check:
    """g3.runtime_guard: no child run of the model reported a guard finding, and none carried an
    unreadable line on its result pipe (a guard report could have been lost in it: fails closed)."""
    cid = "g3.runtime_guard"
    if guard is None:
        return Check(cid, Status.SKIP, "not run: no static scan to allow against (--skip-static-check: trusted use)")
    found = [(name, body) for name, oc in outcomes.items() for body, _ in _events(oc, "guard")]
    if found:
        name, b = found[0]
        return Check(cid, Status.FAIL, f"{len(found)} runtime finding(s); first, in the {name} run: "
                     f"{str(b.get('what'))[:60]}: {str(b.get('reason'))[:200]} at "
                     f"{str(b.get('where'))[:120]} (not ranked)", len(found), 0)
    garbled = {name: oc.forged for name, oc in outcomes.items() if oc.forged}
    if garbled:
        return Check(cid, Status.FAIL, f"{sum(garbled.values())} unreadable line(s) on the result pipe "
                     f"({', '.join(garbled)} run): a guard report may be lost in them (not ranked)",
                     sum(garbled.values()), 0)
    return Check(cid, Status.PASS, f"{len(outcomes)} run(s) watched from before the submission's "
                 "import: nothing compiled, unmarshalled or unpickled but what the static scan read, the "
                 "installation's own files and the allowlists; no process, socket or native call", 0, 0)


def run_model(sub: str, manifest: dict, test_set: dict, *, budget: float, load_timeout: float,
              memory: dict | None = None, guard: dict | None = None) -> dict:
    """Gates 5-8 for one test set: three child runs ("check", "infer", then "recheck", the
    independent determinism re-run of problems drawn from the inference stream), each under the
    runtime guard (`guard`: guard_request(), None for none).  `memory` is run_isolated's memory
    keywords (memory_options).  Returns {"checks": [...], "tiers": [TierResult], "outcomes":
    {...}, "deterministic": bool, "isolated": bool, "guarded": bool}; g3.runtime_guard first."""
    memory = memory if memory is not None else memory_options(None, False)
    det_sample, pairs = _samples(test_set)
    base = manifest["output_base"]
    common = {"entry_class": manifest["entry_class"], "max_digits": SPEC["max_digits"],
              "max_digit_bits": SPEC["max_digit_bits"], "det_sample": [_triple(c) for c in det_sample],
              "guard": guard}

    def rearm_once():
        """A fresh rearm for one run: load gets load_timeout, the first "loaded" and the first
        "ready" each give the budget, once (a model repeating them cannot keep its process alive)."""
        seen = set()

        def rearm(body):
            event = body.get("event") if isinstance(body, dict) else None
            if event in ("loaded", "ready") and event not in seen:
                seen.add(event)
                return budget
            return None
        return rearm

    cpu = int(load_timeout + 3 * budget) + 60
    check = run_isolated(sub, DRIVER_BODY, dict(common, mode="check",
                                                iso_pairs=[[_triple(x), _triple(y)] for x, y in pairs]),
                         load_timeout, rearm=rearm_once(), lib_files=SHIM_FILES, cpu_seconds=cpu, **memory)
    outcomes = {"load+checks": check}
    progress(f"gates 5-7: load, isolation and determinism child {check.status} ({check.wall:.1f} s)")
    checks = []
    failed = _events(check, "load_failed")
    loaded = _events(check, "loaded")
    if failed or not loaded:
        why = failed[0][0].get("reason") if failed else _child_reason(check, "model load did not finish")
        checks.append(Check("g5.model_load", Status.FAIL, str(why)[:300]))
        for cid in ("g6.preprocess_isolation", "g7.determinism", "g8.inference"):
            checks.append(Check(cid, Status.SKIP, "not run: the model did not load"))
        guarded = runtime_guard_check(outcomes, guard)
        return {"checks": [guarded] + checks, "tiers": [], "outcomes": outcomes, "deterministic": False,
                "isolated": False, "loaded": False, "guarded": guarded.status is not Status.FAIL}
    checks.append(Check("g5.model_load", Status.PASS,
                        f"{manifest['entry_class']} subclasses ModularMultiplicationModel; "
                        f"loaded in {loaded[0][1]:.2f} s", round(loaded[0][1], 3)))
    iso = _events(check, "isolation")
    if not iso:
        isolated, msg = False, _child_reason(check, "isolation check did not finish")
    else:
        reason = iso[0][0].get("reason")
        isolated = reason == ""
        msg = (f"hooks are per-argument and stateless on {len(pairs)} problems" if isolated
               else str(reason)[:300])
    checks.append(Check("g6.preprocess_isolation", Status.PASS if isolated else Status.FAIL,
                        msg if isolated else msg + " (not ranked)"))

    # the tiers go to the child only once it is "ready" (loaded, determinism pass C done), when
    # the budget starts: nothing of the test set but the 10+5 check problems is visible earlier
    stream = _InferenceInteraction(test_set)

    infer_budget = rearm_once()
    clock = {"deadline": None, "asked": None, "credit": 0.0}
    credit_cap = SPEC["audit_credit_fraction"] * budget

    def infer_rearm(body):                 # the tiers are handed out only once "ready" started the budget
        event = body.get("event") if isinstance(body, dict) else None
        if event == "ready":
            stream.ready = True
        extra = infer_budget(body)
        now = time.monotonic()
        if event == "ready" and extra is not None:
            clock["deadline"] = now + extra
        elif event in ("batch", "end"):
            clock["asked"] = now
        elif event == "audit" and clock["deadline"] is not None and clock["asked"] is not None:
            # the audit's time (from the question to its report) is the grader's, not the
            # model's: the deadline moves by it, up to audit_credit_fraction of the budget
            spent = min(now - clock["asked"], credit_cap - clock["credit"])
            clock["asked"] = None
            if spent > 0:
                clock["credit"] += spent
                clock["deadline"] += spent
                return clock["deadline"] - now
        return extra

    infer = run_isolated(sub, DRIVER_BODY, dict(common, mode="infer"), load_timeout, rearm=infer_rearm,
                         lib_files=SHIM_FILES, cpu_seconds=cpu, interact=stream, **memory)
    outcomes["inference"] = infer
    progress(f"gate 8: inference child {infer.status} ({infer.wall:.1f} s of the {budget:g} s budget)")

    # determinism: passes A, B (one process) and C (a fresh one), decoded, all equal
    passes = {}
    for outcome in (check, infer):
        for body, _ in _events(outcome, "det"):
            passes.setdefault(body.get("pass"), body)
    det_err = next((f"pass {k}: {v['error']}" for k, v in passes.items() if "error" in v), None)
    decoded = {}
    for label in ("A", "B", "C"):
        body = passes.get(label)
        if body is None or "outputs" not in body:
            continue
        outs = body["outputs"]
        if isinstance(outs, list) and len(outs) == len(det_sample):
            decoded[label] = [decode_packed(o, base, c.p, c.tier_id == 0) for o, c in zip(outs, det_sample)]
        else:
            det_err = det_err or f"pass {label}: result of the wrong length"
    if det_err:
        deterministic, dmsg = False, str(det_err)[:300]
    elif "A" not in decoded or "B" not in decoded:
        deterministic, dmsg = False, _child_reason(check, "determinism check did not finish")
    else:
        runs = [decoded[k] for k in ("A", "B", "C") if k in decoded]
        diff = [i for i in range(len(det_sample)) if len({repr(r[i]) for r in runs}) > 1]
        deterministic = not diff
        dmsg = (f"{len(det_sample)} problems identical over {len(runs)} runs "
                f"({'2 processes' if 'C' in decoded else '1 process'})" if deterministic else
                f"problem {diff[0]} (tier {det_sample[diff[0]].tier_id}) differs between runs")
    checks.append(Check("g7.determinism", Status.PASS if deterministic else Status.FAIL,
                        dmsg if deterministic else dmsg + " (not ranked)"))
    checks.insert(next(i for i, c in enumerate(checks) if c.id == "g6.preprocess_isolation") + 1,
                  inference_isolation_check(infer, stream))

    # inference: tiers whose results arrived within the budget after "ready" (the model's time:
    # the audits' time, credited as the deadline was moved, is not counted)
    ready = _events(infer, "ready")
    t_ready = ready[0][1] if ready else None
    by_tier = {}
    for body, t in _events(infer, "tier"):
        tid = body.get("tier")
        wall = None if t_ready is None else t - t_ready - audit_time_before(infer, t, budget)
        if _plain_int(tid) and tid in test_set and tid not in by_tier and wall is not None \
                and wall <= budget:
            by_tier[tid] = (body, wall)
    tiers = []
    stop = None
    for tid in sorted(test_set):
        body, wall = by_tier.get(tid, (None, None))
        if body is None and stop is None:
            stop = tid
        r = score_tier(test_set[tid], body, base, wall)
        if body is None:
            r = dataclasses.replace(r, note=("not finished within the budget" if infer.status == "timeout"
                                             else _child_reason(infer, "stopped")))
        tiers.append(r)
    incomplete = [t for t in tiers if not t.completed and t.tier_id > 0]
    last = max((t.wall for t in tiers if t.wall is not None), default=0.0)
    if t_ready is None:
        checks.append(Check("g8.inference", Status.FAIL,
                            _child_reason(infer, "inference did not start"), None, budget))
    elif incomplete:
        first = incomplete[0]
        checks.append(Check("g8.inference", Status.FAIL,
                            f"{len(incomplete)} scored tier(s) incomplete, scored 0; first: tier "
                            f"{first.tier_id}: {first.note}", round(last, 3), budget))
    else:
        checks.append(Check("g8.inference", Status.PASS,
                            f"{last:.2f} s, all {len(tiers)} tiers completed (budget {budget:g} s)",
                            round(last, 3), budget))
    if tiers and not tiers[0].completed and not incomplete and t_ready is not None:
        checks.append(Check("g8.tier0", Status.INFO, f"diagnostic tier 0 incomplete: {tiers[0].note}"))
    # determinism of the real stream: problems drawn from it, answered again by a fresh process
    stream_det, recheck = stream_determinism(sub, common, test_set, by_tier, base, load_timeout=load_timeout,
                                             budget=budget, cpu=cpu, memory=memory, rearm=rearm_once())
    checks.insert(next(i for i, c in enumerate(checks) if c.id == "g7.determinism") + 1, stream_det)
    if recheck is not None:
        outcomes["determinism re-run"] = recheck
    deterministic = deterministic and stream_det.status is Status.PASS
    isolated = isolated and all(c.status is not Status.FAIL for c in checks if c.id == "g6.isolation_in_inference")
    forged = sum(o.forged for o in outcomes.values())
    if forged:
        checks.append(Check("g8.reply_channel", Status.REVIEW,
                            f"{forged} line(s) on the result pipe without the run token"))
    guarded = runtime_guard_check(outcomes, guard)
    return {"checks": [guarded] + checks, "tiers": tiers, "outcomes": outcomes,
            "deterministic": deterministic, "isolated": isolated, "loaded": True,
            "guarded": guarded.status is not Status.FAIL}


def probe_operand_range(tid: int, same_prime: list) -> tuple:
    """[lo, hi) of an audit probe's operands for tier tid, given the tier's cases with the probe's
    prime: the tier's operand range (TIERS), or for tier 0 the smallest sub-tier range (MULT_SUB_TIERS)
    holding those cases' operands, so that a * b < p as in the tier."""
    if tid != 0:
        bits = next((t[3] for t in TIERS if t[0] == tid), 0)
        if bits:
            return 0, 1 << bits
    width = max((max(c.a, c.b).bit_length() for c in same_prime), default=1)
    lo_bits, hi_bits = next(((a, b) for a, b in MULT_SUB_TIERS if b >= width), MULT_SUB_TIERS[-1])
    hi = 1 << hi_bits
    p = min((c.p for c in same_prime), default=0)
    if (hi - 1) ** 2 >= p:                          # a test set from files: keep a * b < p anyway
        hi = max(2, math.isqrt(max(p - 1, 0)) + 1)
        return 0, hi
    return (1 << (lo_bits - 1) if lo_bits > 1 else 0), hi


def audit_time_before(outcome, t: float, budget: float) -> float:
    """Seconds the inference process spent in isolation audits reported before time t (each from
    the after-batch question that started it to its "audit" report), capped as the deadline
    credit is (SPEC audit_credit_fraction of the budget)."""
    total, asked = 0.0, None
    for m, tm in zip(outcome.messages, outcome.times):
        if tm > t:
            break
        event = m.get("event") if isinstance(m, dict) else None
        if event in ("batch", "end"):
            asked = tm
        elif event == "audit" and asked is not None:
            total, asked = total + tm - asked, None
    return min(total, SPEC["audit_credit_fraction"] * budget)


class _InferenceInteraction:
    """The grader's side of the inference process's ask() calls: the tiers on "plan" (the budget
    is already running), and after each batch the decision whether to audit isolation now, drawn
    here (SystemRandom) when asked, so nothing in the child tells it which batches are audited."""

    def __init__(self, test_set: dict):
        self.test_set, self.rng = test_set, random.SystemRandom()
        self.asks, self.audit_at, self.sent = 0, set(), []     # sent: ask counts audited
        self.batch_tier = []                                    # tier of the k-th batch
        self.ready = False                                      # set by the "ready" message

    def pairs(self, tid: int) -> list:
        """SPEC audit_pairs pairs x, y of FRESH problems of tier tid, as triples: one of the tier's
        primes (drawn from its cases), operands drawn like the tier's own (uniform below
        2^operand_bits; tier 0: in the sub-tier's range of that prime).  Fresh operands, not
        problems of the test set: a probe (xa, xb, p) is never a problem the stream already
        answered, so a hook that leaks only on arguments it has not seen yet (and is plain on
        repeats) leaks on the first probe and is caught by the second."""
        cases = self.test_set[tid]
        out = []
        for _ in range(SPEC["audit_pairs"]):
            p = self.rng.choice(cases).p
            lo, hi = probe_operand_range(tid, [c for c in cases if c.p == p])
            xa, xb, ya, yb = (self.rng.randrange(lo, hi) for _ in range(4))
            out.append([[str(xa), str(xb), str(p)], [str(ya), str(yb), str(p)]])
        return out

    def __call__(self, body):
        event = body.get("event") if isinstance(body, dict) else None
        if event == "plan" and not self.batch_tier and self.ready:
            bs = body.get("batch_size")
            bs = bs if _plain_int(bs) and bs >= 1 else 1
            for tid in sorted(self.test_set):
                self.batch_tier += [tid] * -(-len(self.test_set[tid]) // bs)
            n = max(1, len(self.batch_tier))
            early = max(1, int(n * SPEC["audit_early_fraction"]))
            per_tier = {}                                   # one audit at a random batch of each tier
            for k, tid in enumerate(self.batch_tier, 1):
                per_tier.setdefault(tid, []).append(k)
            self.audit_at = {self.rng.randint(1, early)} | set(
                self.rng.sample(range(1, n + 1), min(SPEC["inference_audits"], n))) | {
                self.rng.choice(ks) for ks in per_tier.values() for _ in range(SPEC["audits_per_tier"])}
            return {"tiers": [[tid, [_triple(c) for c in self.test_set[tid]]] for tid in sorted(self.test_set)]}
        if event == "batch":
            self.asks += 1
            if self.asks in self.audit_at and self.asks <= len(self.batch_tier):
                self.sent.append(self.asks)
                return {"audit": self.pairs(self.batch_tier[self.asks - 1])}
            return None
        if event == "end" and self.batch_tier:
            self.sent.append("end")
            return {"audit": self.pairs(max(self.test_set))}
        return None


def inference_isolation_check(infer, stream: _InferenceInteraction) -> Check:
    """g6.isolation_in_inference: every audit the grader asked for came back clean."""
    cid = "g6.isolation_in_inference"
    audits = [b for b, _ in _events(infer, "audit")]
    bad = next((b for b in audits if b.get("reason") != ""), None)
    if bad is not None:
        return Check(cid, Status.FAIL, f"{bad.get('where', '?')}: {str(bad.get('reason'))[:250]} "
                     "(inside the inference process, after predictions ran; not ranked)"[:400],
                     len(audits), len(stream.sent))
    if stream.asks > len(stream.batch_tier):
        return Check(cid, Status.FAIL, f"{stream.asks} after-batch questions for {len(stream.batch_tier)} "
                     "batches: something other than the driver asked for audits (not ranked)",
                     len(audits), len(stream.sent))
    missing = len(stream.sent) - len(audits)
    cut = missing == 1 and infer.status == "timeout"       # the budget ran out during the last audit:
    if missing and not cut:                                # its tiers are lost anyway, no verdict on it
        return Check(cid, Status.FAIL, f"{len(audits)} of {len(stream.sent)} audit(s) reported; "
                     f"{_child_reason(infer, 'an audit did not finish')} (not ranked)",
                     len(audits), len(stream.sent))
    note = f" (one more cut by the budget: {infer.reason})" if cut else ""
    if not audits:
        return Check(cid, Status.SKIP, _child_reason(infer, "the stream stopped before the first "
                                                     "audit finished") + note, 0, len(stream.sent))
    return Check(cid, Status.PASS, f"{len(audits)} audit(s) at batches the grader drew while the model "
                 f"ran: hooks per-argument and stateless after predictions{note}", len(audits), len(stream.sent))


def stream_determinism(sub: str, common: dict, test_set: dict, by_tier: dict, base, *, load_timeout: float,
                       budget: float, cpu: int, memory: dict, rearm) -> tuple:
    """g7.determinism_stream: SPEC stream_det_per_tier problems drawn (SystemRandom) from each tier
    the inference stream completed, answered again in a shuffled order by a fresh process, decoded
    and compared.  (Check, RunOutcome of the re-run or None)."""
    cid = "g7.determinism_stream"
    rng = random.SystemRandom()
    drawn = []                                     # (case, stream's packed output)
    for tid in sorted(by_tier):
        body, _ = by_tier[tid]
        outs = body.get("outputs")
        if body.get("complete") is not True or not isinstance(outs, list) or len(outs) != len(test_set[tid]):
            continue
        for i in rng.sample(range(len(outs)), min(SPEC["stream_det_per_tier"], len(outs))):
            drawn.append((test_set[tid][i], outs[i]))
    if not drawn:
        return Check(cid, Status.FAIL, "no completed tier to draw from: the inference stream's "
                     "determinism cannot be checked (not ranked)"), None
    order = list(range(len(drawn)))
    while len(order) > 1 and order == sorted(order):
        rng.shuffle(order)
    plan = {"cases": [_triple(drawn[k][0]) for k in order]}
    recheck = run_isolated(sub, DRIVER_BODY, dict(common, mode="recheck"), load_timeout, rearm=rearm,
                           lib_files=SHIM_FILES, cpu_seconds=cpu, **memory,
                           interact=lambda body: plan if isinstance(body, dict)
                           and body.get("event") == "plan" else None)
    got = _events(recheck, "recheck")
    what = f"{len(drawn)} problems drawn from the inference stream"
    if not got:
        return Check(cid, Status.FAIL, f"{what}: " + _child_reason(recheck, "the independent re-run did not "
                     "finish") + " (not ranked)", None, len(drawn)), recheck
    body = got[0][0]
    outs = body.get("outputs")
    if "error" in body or not isinstance(outs, list) or len(outs) != len(order):
        return Check(cid, Status.FAIL, f"{what}: the independent re-run: "
                     f"{str(body.get('error') or 'result of the wrong length')[:200]} (not ranked)",
                     None, len(drawn)), recheck
    diff = []
    for k, out in zip(order, outs):
        case, first = drawn[k]
        if repr(decode_packed(first, base, case.p, case.tier_id == 0)) != \
                repr(decode_packed(out, base, case.p, case.tier_id == 0)):
            diff.append(case.tier_id)
    if diff:
        return Check(cid, Status.FAIL, f"{len(diff)} of {what} answered differently by an independent "
                     f"process (shuffled order); tiers {sorted(set(diff))} (not ranked)",
                     len(diff), 0), recheck
    return Check(cid, Status.PASS, f"{what} (every completed tier) answered identically by an "
                 "independent process in a shuffled order", 0, 0), recheck


def memory_options(memory_gb, gpu: bool) -> dict:
    """run_isolated's memory keywords: --memory GB (default SPEC runner_mem_bytes) as the
    address-space limit, or with --gpu as the limit of the outside resident-memory watchdog, plus
    the CUDA environment variables and folders a GPU runtime needs (GPU_ENV, GPU_PATHS)."""
    limit = int(memory_gb * 2 ** 30) if memory_gb is not None else SPEC["runner_mem_bytes"]
    if not gpu:
        return {"mem_bytes": limit, "memory": "address"}
    return {"mem_bytes": limit, "memory": "resident", "env_pass": GPU_ENV,
            "ro_paths": tuple(p for p in GPU_PATHS if os.path.exists(p))}


def tier_records(tiers: list, prefix: str = "") -> list:
    out = []
    for t in tiers:
        acc = f"{t.accuracy:.4f} ({t.correct}/{t.total})" if t.completed else f"0 (incomplete: {t.note})"
        wall = f", done at {t.wall:.2f} s" if t.wall is not None and t.completed else ""
        tag = " [unscored diagnostic]" if t.tier_id == 0 else ""
        bad = f"; {t.malformed} malformed, e.g. {t.note}" if t.completed and t.malformed else ""
        out.append(Check(f"{prefix}tier.{t.tier_id}", Status.INFO, f"accuracy {acc}{wall}{bad}{tag}",
                         round(t.accuracy, 4), SPEC["rank_threshold"]))
    bad = [t for t in tiers if t.tier_id > 0 and t.completed and t.malformed]
    if bad:     # a score lowered by undecodable replies says so in a FAIL line, not only in numbers
        n, total = sum(t.malformed for t in bad), sum(t.total for t in tiers if t.tier_id > 0)
        out.append(Check(f"{prefix}g8.malformed_outputs", Status.FAIL,
                         f"{n} of {total} scored replies did not decode (counted wrong), e.g. tier "
                         f"{bad[0].tier_id}: {bad[0].note}", n, 0))
    return out


# =============================================================================
# 5. SEED / RANGE ROBUSTNESS: one seed's gates 4-8, and the multi-seed table
# =============================================================================
def seed_label(seed: bytes) -> str:
    return "public" if seed == SPEC["public_seed"] else seed.hex()


def grade_seed(sub: str, manifest: dict, seed: bytes, *, total: int, budget: float,
               load_timeout: float, no_exec: bool, jobs: int, test_dir: str | None,
               prefix: str, memory: dict | None = None, guard: dict | None = None) -> dict:
    """Gates 4-8 (and the runtime part of gate 3) for one seed; records carry `prefix`; `memory`:
    memory_options(); `guard`: guard_request()."""
    t0 = time.monotonic()
    checks = []
    try:
        test_set = read_test_set(test_dir) if test_dir else generate_test_set(seed, total, jobs)
    except Reject as exc:
        checks.append(exc.check)
        test_set = None
    gen_s = time.monotonic() - t0
    result = {"seed": seed, "gen_s": gen_s, "tiers": [], "outcomes": {}, "deterministic": False,
              "isolated": False, "ranked": False, "executed": False}
    if test_set is None:
        result["checks"] = [dataclasses.replace(c, id=prefix + c.id) for c in checks] + [
            Check(prefix + cid, Status.SKIP, "not run: no test set") for cid in
            ("g5.model_load", "g6.preprocess_isolation", "g7.determinism", "g8.inference")]
        return result
    n = sum(len(v) for v in test_set.values())
    origin = f"read from {test_dir} (expected recomputed, p prime, rows in their tier)" if test_dir else \
        f"seed {seed_label(seed)}"
    checks.append(Check("g4.testgen", Status.PASS,
                        f"{n} problems = {n // len(test_set)} x {len(test_set)} tiers (0-10), "
                        f"{origin}, {gen_s:.2f} s", n, total))
    result["test_set"] = test_set
    if no_exec:
        checks += [Check(cid, Status.SKIP, "not run (--no-exec)") for cid in
                   ("g5.model_load", "g6.preprocess_isolation", "g7.determinism", "g8.inference")]
    else:
        run = run_model(sub, manifest, test_set, budget=budget, load_timeout=load_timeout, memory=memory,
                        guard=guard)
        checks += run["checks"]
        result.update(tiers=run["tiers"], outcomes=run["outcomes"], deterministic=run["deterministic"],
                      isolated=run["isolated"], executed=run["loaded"],
                      ranked=run["deterministic"] and run["isolated"] and run["guarded"])
        if run["tiers"]:
            overall, htop = ranking_keys(run["tiers"])
            checks += tier_records(run["tiers"])
            checks.append(Check("rank.overall_accuracy", Status.INFO,
                                f"{overall:.4f} (mean over scored tiers 1-10)", overall))
            checks.append(Check("rank.highest_tier_above_90", Status.INFO, str(htop), htop))
            result.update(overall=overall, htop=htop)
    result["checks"] = [dataclasses.replace(c, id=prefix + c.id) for c in checks]
    return result


def robustness_row(r: dict) -> str:
    """One row of the seed's §5 table: seed, t1-t7 (min), t8, t9, t10, overall, htop, det."""
    acc = {t.tier_id: t.accuracy for t in r["tiers"]}
    if not acc:
        return f"{seed_label(r['seed'])}  (not graded)"
    t17 = min(acc.get(k, 0.0) for k in range(1, 8))
    return (f"{seed_label(r['seed'])}  {t17:.2f}  {acc.get(8, 0):.2f}  {acc.get(9, 0):.2f}  "
            f"{acc.get(10, 0):.2f}  {r.get('overall', 0.0):.4f}  {r.get('htop', -1)}  "
            f"{'yes' if r['deterministic'] else 'NO'}")


def answers_hidden_check(test_dir) -> list:
    """Without file isolation the model could read the expected values (a --test-set file, or
    the seed in the grader's command line): such a grading does not certify (REVIEW)."""
    if sandbox_level()["file_isolation"]:
        return []
    where = f"the test-set file {test_dir}" if test_dir else "the seed on the grader's command line"
    return [Check("sandbox.answers_hidden", Status.REVIEW,
                  f"file isolation unavailable: the model could read {where} (expected values)")]


def seed_keys(results: list, total: int, test_dir: str | None, many: bool) -> dict:
    """The seed's §3 tier table (one seed) or §5 robustness table (several), typed."""
    keys = {"seed": f"(test set {test_dir})" if test_dir else ",".join(seed_label(r["seed"]) for r in results),
            "total": sum(len(v) for v in results[0].get("test_set", {}).values()) or results[0].get(
                "total") or total}
    graded = [r for r in results if r["tiers"]]
    if not many and graded:
        keys["tiers"] = [{"tier": t.tier_id, "scored": t.tier_id > 0, "accuracy": round(t.accuracy, 4),
                          "completed": t.completed,
                          "cumulative_wall_s": round(t.wall, 2) if t.wall is not None and t.completed
                          else None} for t in graded[0]["tiers"]]
    if many:
        keys["robustness"] = [robustness_record(r) for r in results]
    return keys


def robustness_record(r: dict) -> dict:
    """One row of the seed's §5 table, typed: t1-t7 (min), t8, t9, t10, overall, htop, det."""
    acc = {t.tier_id: t.accuracy for t in r["tiers"]}
    return {"seed": seed_label(r["seed"]),
            "t1_t7_min": round(min(acc.get(k, 0.0) for k in range(1, 8)), 4) if acc else None,
            "t8": round(acc.get(8, 0.0), 4) if acc else None, "t9": round(acc.get(9, 0.0), 4) if acc else None,
            "t10": round(acc.get(10, 0.0), 4) if acc else None,
            "overall": r.get("overall", 0.0) if acc else None, "htop": r.get("htop", -1),
            "deterministic": bool(r["deterministic"])}


def resume_key(submission: str, seed: bytes, prefix: str, no_exec: bool) -> str:
    """What a kept seed result depends on: the grader's bytes, the submission's bytes, the seed
    and every option that changes a seed's records."""
    opts = {k: v for k, v in sorted(_RESUME_OPTIONS.items())}
    if submission not in _SUBMISSION_DIGESTS:       # hashed once per grading, not per seed and use
        _SUBMISSION_DIGESTS[submission] = tree_sha256(submission)["sha256"]
    text = json.dumps([grader_sha256(), _SUBMISSION_DIGESTS[submission], seed.hex(), prefix,
                       no_exec, opts], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


_SUBMISSION_DIGESTS: dict = {}  # submission path -> tree digest (the grader never writes it)


_RESUME_OPTIONS: dict = {}     # set by grade_submission: total, budget, load_timeout, test set ...


def resume_load(resume_dir, submission, seed, prefix, no_exec):
    """A seed's kept result, or None (absent, other inputs, unreadable)."""
    if not resume_dir:
        return None
    path = os.path.join(resume_dir, f"seed-{hashlib.sha256(seed).hexdigest()[:16]}-"
                                    f"{prefix.rstrip('.') or 's'}.json")
    try:
        with open(path) as fh:
            doc = json.load(fh)
        if doc.get("key") != resume_key(submission, seed, prefix, no_exec):
            return None
        r = doc["result"]
        return {"seed": seed, "gen_s": 0.0, "outcomes": {}, "resumed": True, "total": r["total"],
                "deterministic": r["deterministic"], "isolated": r["isolated"], "ranked": r["ranked"],
                "executed": r["executed"], "tiers": [TierResult(**t) for t in r["tiers"]],
                **({"overall": r["overall"], "htop": r["htop"]} if "overall" in r else {}),
                "checks": [Check(c["id"], Status(c["status"]), c["message"], c["measured"], c["limit"])
                           for c in r["checks"]]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def resume_save(resume_dir, submission, seed, prefix, no_exec, r) -> None:
    """Keep a finished seed's records (written to a temp file, then renamed: never half a file)."""
    if not resume_dir:
        return
    path = os.path.join(resume_dir, f"seed-{hashlib.sha256(seed).hexdigest()[:16]}-"
                                    f"{prefix.rstrip('.') or 's'}.json")
    keep = {"total": sum(len(v) for v in r.get("test_set", {}).values()),
            "deterministic": r["deterministic"], "isolated": r["isolated"], "ranked": r["ranked"],
            "executed": r["executed"], "tiers": [dataclasses.asdict(t) for t in r["tiers"]],
            "checks": [c.as_dict() for c in r["checks"]],
            **({"overall": r["overall"], "htop": r["htop"]} if "overall" in r else {})}
    try:
        with open(path + ".tmp", "w") as fh:
            json.dump({"key": resume_key(submission, seed, prefix, no_exec), "result": keep}, fh)
        os.replace(path + ".tmp", path)
    except (OSError, TypeError, ValueError):
        pass


# =============================================================================
# SUBPROCESS RUNNER
# =============================================================================
# One text in every grader that executes submitted code (a test asserts the copies are
# identical): features one grader needs are parameters of run_isolated, limits are the
# SPEC["runner_*"] entries, read at call time.
#
# Process tree of one run:  grader -> unshare (user, net, mount, pid namespaces) ->
# _SANDBOX_INIT (pid 1: builds the allow-list root, holds the lifeline) -> the driver
# (DRIVER_PROLOGUE + body; with fork_jobs, the warm parent of one forked child per job).
@dataclasses.dataclass
class RunOutcome:
    status: str                 # "ok" | "timeout" | "crashed" | "no_reply" | "error"
    messages: list              # every authentic (token-bearing) JSON message, in order
    reason: str
    wall: float
    returncode: int | None
    stdout: str                 # captured, capped; never printed unmarked
    stderr: str
    forged: int = 0             # unreadable or unauthenticated lines on the reply channel
    times: list = dataclasses.field(default_factory=list)    # arrival of each message (s from start)
    sandbox: dict = dataclasses.field(default_factory=dict)  # sandbox_level() of this run
    garbage: list = dataclasses.field(default_factory=list)  # why the first refused lines were refused


# The prologue every driver starts with.  It reads its request (with a one-time token) from
# stdin before anything of the submission runs and gives the driver body:
#   send(obj)    one token-tagged JSON line on a pipe the runner opened;
#   ask(obj)     send, then block for the grader's answer (run_isolated(interact=...));
#   receive()    the runner's next JSON line (run_isolated(followup=...)), None at its end;
#   fork_jobs(jobs, run_job, concurrency=1)   the warm fork server: one fresh child per job,
#                started in the order given (up to `concurrency` at once), each in its own
#                process group and user namespace, its messages tagged {"job": id} by this
#                parent, then {"kind": "job_end", ...} per job.
# _LIM (the request's "runner" entry) holds the runner's limits and "isolated": whether this
# run was started in the allow-list root (file isolation; a run where it did not hold is
# discarded and started again at the level the probe finds).
# The submission's stdin is empty; its stdout/stderr are separate capped pipes.
DRIVER_PROLOGUE = r'''
import json as _json, os as _os, sys as _sys
_IN = _os.dup(0)
_os.set_inheritable(_IN, False)
_sys.stdin.close()
_NULL = _os.open(_os.devnull, _os.O_RDONLY)
_os.dup2(_NULL, 0)                                  # the submission's stdin is empty
_os.close(_NULL)
_INBUF = [b""]


def _readline(_read=_os.read):
    """One line from the grader (or the warm parent), without the newline; b"" at its end."""
    while b"\n" not in _INBUF[0]:
        chunk = _read(_CH["in"], 1 << 20)
        if not chunk:
            line, _INBUF[0] = _INBUF[0], b""
            return line
        _INBUF[0] += chunk
    line, _, _INBUF[0] = _INBUF[0].partition(b"\n")
    return line


def receive(_loads=_json.loads):
    """The runner's next JSON line, or None at end of input."""
    line = _readline()
    try:
        return _loads(line) if line else None
    except ValueError:
        return None


_CH = {"in": _IN}
_REQ = receive()
_CH["tok"] = _REQ.pop("token")
_LIM = _REQ.pop("runner")
_sys.path.extend(p for p in _LIM.get("path", ()) if p not in _sys.path)   # started without site
_CH["out"] = _os.dup(int(_sys.argv[1]))
_os.close(int(_sys.argv[1]))
_os.set_inheritable(_CH["out"], False)
_FD = _CH["out"]


def _put(obj, _dumps=_json.dumps, _write=_os.write):
    data = (_dumps(obj, allow_nan=True) + "\n").encode()
    while data:
        data = data[_write(_CH["out"], data):]


def send(obj):
    """One message to the grader."""
    _put({"token": _CH["tok"], "body": obj} if _CH["tok"] else {"body": obj})


def ask(obj):
    """Send obj and return the grader's answer (None when the grader gives none)."""
    _put({"token": _CH["tok"], "body": obj, "ask": True} if _CH["tok"] else {"body": obj, "ask": True})
    reply = receive()
    return reply.get("reply") if isinstance(reply, dict) else None


def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None


def _own_user_namespace(libc):
    """This job child in a user namespace of its own (same ids): it holds no capability over
    the warm parent or another job.  False where the kernel refuses."""
    uid, gid = _os.geteuid(), _os.getegid()
    try:
        if libc is None or libc.unshare(0x10000000) != 0:         # CLONE_NEWUSER
            return False
        for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                           ("gid_map", "%d %d 1" % (gid, gid))):
            with open("/proc/self/" + name, "w") as fh:
                fh.write(text)
        return True
    except Exception:
        return False


def _job_child(job, run_job, wfd, rfd, libc):
    code = 1
    try:
        _os.setpgid(0, 0)
        _os.close(_FD)                      # the reply pipe and the grader's input: gone
        _os.close(_IN)
        _CH.update(out=wfd, tok="")
        _CH["in"] = rfd
        _INBUF[0] = b""
        _REQ.pop("jobs", None)
        if libc is not None:
            libc.prctl(1, 9, 0, 0, 0)       # PR_SET_PDEATHSIG, SIGKILL: dies with the parent
            libc.prctl(4, 1, 0, 0, 0)       # dumpable while it writes its own id maps ...
        _own_user_namespace(libc)
        if libc is not None:
            libc.prctl(4, 0, 0, 0, 0)       # ... then not: no later job may trace this one
        run_job(job)
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code in (None, 0) else 1
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    for stream in (_sys.stdout, _sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    _os._exit(code)


def _decode_job_line(line, _loads=_json.loads):
    """(body, ask) of one line a job child wrote, or (None, why): never raises."""
    try:
        msg = _loads(line.decode("utf-8"))
    except RecursionError:
        return None, "nested too deeply"
    except MemoryError:
        return None, "too large to decode"
    except Exception as exc:
        return None, "not JSON (%s)" % type(exc).__name__
    if not isinstance(msg, dict) or "body" not in msg or set(msg) - {"body", "ask"}:
        return None, "not a message"
    body = msg["body"]
    if isinstance(body, dict) and body.get("kind") == "job_end":
        return None, "a job_end written by the job itself"
    stack = [(body, 0)]
    while stack:                            # a body the grader's decoder would refuse
        o, d = stack.pop()
        if d > 64:
            return None, "nested deeper than 64 levels"
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return body, msg.get("ask") is True


def _live_children():
    """This process's live child processes (pids), from /proc."""
    kids = set()
    try:
        for tid in _os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % tid) as fh:
                kids.update(int(p) for p in fh.read().split())
    except (OSError, ValueError):
        pass
    return kids


def _sweep_children(pgid, keep=()):
    """Kill the job's process group and every process left to this (subreaper) parent but
    the job children in `keep` (the jobs still running beside it)."""
    import signal
    try:
        _os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(100):
        left = _live_children() - set(keep)
        for pid in left:
            try:
                _os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in left:                    # reaped: not even a zombie is left for the next job
            try:
                _os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not left:
            return


def _relay_open(job, pid, rfd, wfd, limit):
    """The relay state of one running job child."""
    import time
    try:
        pidfd = _os.pidfd_open(pid)         # readable once the child has exited (Linux >= 5.3)
    except (AttributeError, OSError):
        pidfd = None
    t0 = time.monotonic()
    return {"job": job, "id": job["id"], "pid": pid, "rfd": rfd, "wfd": wfd, "pidfd": pidfd,
            "t0": t0, "limit": limit, "deadline": t0 + limit if limit else None,
            "buf": b"", "total": 0, "garbage": 0, "reasons": [], "waiting": False,
            "pending": b"", "eof": False, "st": None, "status": None, "reason": ""}


def _relay_take(s, chunk):
    """Pass on the complete lines of a job child's output, tagged with its id; False (the job
    is stopped) once it has written more than the reply cap."""
    s["total"] += len(chunk)
    if s["total"] > _LIM["reply_cap"]:
        s["garbage"] += 1
        s["reasons"].append("more than %d bytes of messages" % _LIM["reply_cap"])
        return False
    s["buf"] += chunk
    *lines, s["buf"] = s["buf"].split(b"\n")
    for line in lines:
        body, how = _decode_job_line(line)
        if body is None and how not in (True, False):
            s["garbage"] += 1
            if len(s["reasons"]) < 5:
                s["reasons"].append(how)
            continue
        tagged = dict(body, job=s["id"]) if isinstance(body, dict) else {"job": s["id"], "value": body}
        if how:
            _put({"token": _CH["tok"], "body": tagged, "ask": True})
            s["waiting"] = True
        else:
            send(tagged)
    return True


def _relay_read(s):
    chunk = _os.read(s["rfd"], 1 << 20)
    if not chunk:
        s["eof"] = True
    elif not _relay_take(s, chunk):
        s["status"], s["reason"] = "crashed", "flooded its message channel"


def _relay_close(s, keep):
    """End one job: what it wrote before it exited, its exit status, its processes swept (but
    the running jobs in `keep`); sends and returns its job_end."""
    import signal, time
    pid, st, status, reason = s["pid"], s["st"], s["status"], s["reason"]
    if st is not None and status is None and not s["eof"]:     # what it wrote before it exited
        _os.set_blocking(s["rfd"], False)
        try:
            while True:
                chunk = _os.read(s["rfd"], 1 << 20)
                if not chunk or not _relay_take(s, chunk):
                    break
        except BlockingIOError:
            pass
    for fd in (s["rfd"], s["wfd"]) + ((s["pidfd"],) if s["pidfd"] is not None else ()):
        _os.close(fd)
    if st is None:
        try:
            _os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            st = _os.waitpid(pid, 0)[1]
        except ChildProcessError:
            pass
    if status is None:
        if st is not None and _os.WIFEXITED(st) and _os.WEXITSTATUS(st) == 0:
            status = "ok"
        elif st is not None and _os.WIFEXITED(st):
            status, reason = "crashed", "exit code %d" % _os.WEXITSTATUS(st)
        elif st is not None:
            status, reason = "crashed", "killed by signal %d" % _os.WTERMSIG(st)
        else:
            status, reason = "crashed", "lost"
    _sweep_children(pid, keep)
    end = {"kind": "job_end", "job": s["id"], "status": status, "reason": reason,
           "wall": time.monotonic() - s["t0"]}
    if s["garbage"]:
        end.update(garbage=s["garbage"], garbage_reasons=s["reasons"])
    send(end)
    return end


def _relay_round(running):
    """One select() over the running jobs: their output, their exits, their pending answers
    and the grader's answers to their asks (routed by job id).  A job whose child exited,
    ran past its limit or flooded its channel gets its status here."""
    import select, time
    now = time.monotonic()
    for s in running:
        if s["deadline"] is not None and s["deadline"] <= now and s["status"] is None:
            s["status"], s["reason"] = "timeout", "exceeded the %g s job limit" % s["limit"]
    live = [s for s in running if s["status"] is None and s["st"] is None]
    if len(live) < len(running):
        return
    waiting = [s for s in live if s["waiting"]]
    buffered = bool(waiting) and b"\n" in _INBUF[0]
    rd = [fd for s in live for fd in ([] if s["eof"] else [s["rfd"]])
          + ([s["pidfd"]] if s["pidfd"] is not None else [])]
    rd += [_CH["in"]] if waiting and not buffered else []
    wr = [s["wfd"] for s in live if s["pending"]]
    waits = [s["deadline"] - now for s in live if s["deadline"] is not None]
    waits += [0.02] if any(s["pidfd"] is None for s in live) else []
    pause = 0 if buffered else min(waits) if waits else None
    ready_r, ready_w, _ = select.select(rd, wr, [], pause)
    for s in live:
        if s["wfd"] in ready_w:
            try:
                s["pending"] = s["pending"][_os.write(s["wfd"], s["pending"][:65536]):]
            except OSError:
                s["pending"] = b""
    if waiting and (buffered or _CH["in"] in ready_r):
        reply = receive()                   # the grader's answer (None once its input ended)
        to = [s for s in waiting if reply is None or not isinstance(reply, dict)
              or reply.get("job") == s["id"]]
        for s in to[:len(waiting) if reply is None else 1]:
            s["waiting"] = False
            answer = reply.get("reply") if isinstance(reply, dict) else None
            s["pending"] += (_json.dumps({"reply": answer}) + "\n").encode()
            _os.set_blocking(s["wfd"], False)
    for s in live:
        if s["rfd"] in ready_r:
            _relay_read(s)
        if s["status"] is None and (s["pidfd"] is None or s["pidfd"] in ready_r):
            done, code = _os.waitpid(s["pid"], _os.WNOHANG)
            if done:
                s["st"] = code


def fork_jobs(jobs, run_job, concurrency=1):
    """The warm fork server: for each job (in the order given) fork a child that runs
    run_job(job) and exits; relay its messages tagged with job["id"]; enforce
    _REQ["job_timeout"]; send one job_end per job.  Returns the job_end messages, in the
    jobs' order.  Up to `concurrency` jobs run at once (each its own child, process group and
    user namespace; their asks are answered by job id).
    jobs may be an iterator (e.g. one that ask()s the grader for the next job): a job child
    then holds no plan of the jobs after it, as it would in a list it inherited (with
    concurrency 1 only: the next job is drawn when no job is running)."""
    libc = _libc()
    if libc is not None:
        libc.prctl(4, 0, 0, 0, 0)           # PR_SET_DUMPABLE 0: no job may trace or read this parent
        libc.prctl(36, 1, 0, 0, 0)          # PR_SET_CHILD_SUBREAPER: a job's orphans come back here
    import gc
    gc.freeze()                             # the warm heap stays shared: a job's collections
    limit = _REQ.get("job_timeout")         # do not touch (copy) every page of it
    width = max(1, int(concurrency))
    source, end_of_jobs = iter(jobs if width == 1 else list(jobs)), object()
    running, ends, started = [], {}, 0
    while True:
        while len(running) < width:
            job = next(source, end_of_jobs)
            if job is end_of_jobs:
                break
            job = dict(job) if isinstance(job, dict) else {"value": job}
            job.setdefault("id", started)
            for stream in (_sys.stdout, _sys.stderr):
                stream.flush()
            c2p_r, c2p_w = _os.pipe()
            p2c_r, p2c_w = _os.pipe()
            pid = _os.fork()
            if pid == 0:
                _os.close(c2p_r)
                _os.close(p2c_w)
                for other in running:       # nothing of the jobs beside it
                    for fd in (other["rfd"], other["wfd"], other["pidfd"]):
                        if fd is not None:
                            _os.close(fd)
                _job_child(job, run_job, c2p_w, p2c_r, libc)
            try:
                _os.setpgid(pid, pid)       # (also done by the child: no race either way)
            except OSError:
                pass
            _os.close(c2p_w)
            _os.close(p2c_r)
            running.append(dict(_relay_open(job, pid, c2p_r, p2c_w, limit), order=started))
            started += 1
        if not running:
            break
        _relay_round(running)
        for s in [s for s in running if s["status"] is not None or s["st"] is not None]:
            running.remove(s)
            ends[s["order"]] = _relay_close(s, [r["pid"] for r in running])
    return [ends[i] for i in sorted(ends)]


_sys.path.insert(0, _REQ["submission_dir"])
_os.chdir(_REQ["submission_dir"])
'''

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
    try:
        mount(src, target, None, MS_BIND)
    except OSError:                         # a mount with locked submounts (e.g. /sys) binds only
        mount(src, target, None, MS_BIND | MS_REC)              # with them
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
    try:                                    # refused where the host masks parts of its /proc:
        mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:                         # the child then runs without one
        pass
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
if cfg.get("probe"):                        # sandbox_level(): what a child would see here
    seen = {"pid1": pid1, "hidden_visible": os.path.exists(cfg["probe"]),
            "proc": os.path.exists("/proc/self/status"), "job_userns": False}
    probe = os.fork()
    if probe == 0:
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    seen["job_userns"] = os.waitpid(probe, 0)[1] == 0
    probe = os.fork()                       # the interpreter runs in this root
    if probe == 0:
        try:
            os.execv(cfg["python"], [cfg["python"], "-I", "-S", "-c", "import ctypes, json, math"])
        finally:
            os._exit(127)
    seen["python"] = os.waitpid(probe, 0)[1] == 0
    tell("probe " + json.dumps(seen))
    os._exit(0)
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
exec_r, exec_w = os.pipe()                  # closed by a successful exec (close-on-exec)
child = os.fork()
if child == 0:
    try:
        os.close(exec_r)
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        if not pid1:
            os.setpgid(0, 0)                # a group init can kill without killing itself
            libc.prctl(1, 9, 0, 0, 0)
        libc.prctl(4, 1, 0, 0, 0)
        uid, gid = os.geteuid(), os.getegid()
        own = b"n"
        if libc.unshare(0x10000000) == 0:   # CLONE_NEWUSER: no capability over init
            try:
                for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                                   ("gid_map", "%d %d 1" % (gid, gid))):
                    with open("/proc/self/" + name, "w") as fh:
                        fh.write(text)
                own = b"u"
            except OSError:
                pass
        os.write(exec_w, own)
        for name, value in cfg["rlimits"]:
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (AttributeError, ValueError, OSError):
                pass
        os.chdir(cfg["cwd"])
        os.execv(cfg["argv"][0], cfg["argv"])
    except BaseException as exc:
        os.write(2, ("sandbox: cannot start the driver: %r\n" % (exc,)).encode())
        os.write(exec_w, b"!" + repr(exc).encode()[:200])
    os._exit(127)
os.close(exec_w)
started = b""
while True:
    chunk = os.read(exec_r, 256)
    if not chunk:
        break
    started += chunk
os.close(exec_r)
if b"!" in started:
    tell("setup cannot start the driver: " + started.split(b"!", 1)[1].decode(errors="replace"))
else:
    tell("ready " + json.dumps({"pid1": pid1, "hidden_visible": os.path.exists(cfg["hidden"]),
                                "proc": os.path.exists("/proc/self/status"),
                                "job_userns": started.startswith(b"u"), "python": True}))
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
_SHM_BYTES = 1 << 30   # the child's /dev/shm (multiprocessing's locks and shared arrays); RAM-backed
_PIVOT_ROOT_NR = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def _python_exe() -> str:
    """The real interpreter (not a pyenv shim or a symlink the sandbox would not hold)."""
    return os.path.realpath(sys.executable)


def _site_dirs(modules: tuple) -> list | None:
    """The site directories (in this interpreter's path order) when every module in `modules`
    is found in one of them as a plain package or module; None otherwise (or if none given)."""
    import importlib.util
    dirs = [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)
            and os.path.isdir(p)]
    if not modules or not dirs:
        return None
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = getattr(spec, "origin", None) if spec is not None else None
        if not (isinstance(origin, str) and any(origin.startswith(d.rstrip("/") + "/") for d in dirs)):
            return None
    return dirs


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
                lifeline: int, ro_extra=(), hidden: str = "") -> dict:
    import glob
    import platform
    return {"root": os.path.join(work, "root") if root else None,
            "ro": _readonly_paths(ro_extra) + [d for d in (os.path.join(work, "driver"),)
                                               if os.path.isdir(d)],
            "rw": rw, "dev": ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
            + sorted(glob.glob("/dev/nvidia*")), "shm_bytes": _SHM_BYTES,
            "pivot_root_nr": _PIVOT_ROOT_NR.get(platform.machine(), -1),
            "argv": argv, "cwd": cwd, "rlimits": rlimits, "lifeline": lifeline, "hidden": hidden,
            "close": [0] + [int(a) for a in argv[-1:] if a.isdigit()]}


def _try_launch(prefix: list, root: bool, work: str) -> dict | None:
    """Start _SANDBOX_INIT through prefix in probe mode; what it saw, or None if it did not run."""
    import socket
    marker = os.path.join(work, "hidden")
    with open(marker, "w") as fh:
        fh.write("x")
    os.makedirs(os.path.join(work, "root"), exist_ok=True)
    a, b = socket.socketpair()
    try:
        cfg = dict(_launch_cfg(work, root, [], [], "/", [], b.fileno()), probe=marker,
                   python=_python_exe())
        proc = subprocess.Popen(prefix + [_python_exe(), "-I", "-S", "-B", "-c", _SANDBOX_INIT,
                                          json.dumps(cfg)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, pass_fds=(b.fileno(),),
                                start_new_session=True)
        b.close()
        proc.wait(timeout=30)
        a.settimeout(5)
        said = a.recv(65536).decode(errors="replace")
        if proc.returncode != 0 or not said.startswith("probe "):
            return None
        return json.loads(said[6:])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        a.close()
        b.close()


_PROBE_LOCK = threading.Lock()


def sandbox_level() -> dict:
    """How the child is confined here (probed once by running a child the real way)."""
    with _PROBE_LOCK:
        if not _SANDBOX:
            _probe_sandbox()
    return {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}


def _full_prefix() -> list:
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    return [unshare, "--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc", "--fork",
            "--kill-child"]


def _full_level(seen: dict) -> dict | None:
    """The full sandbox's level from what its init saw, or None if it did not hold."""
    if not (seen and seen.get("python") and seen.get("pid1") and not seen.get("hidden_visible")):
        return None
    return dict(user_namespace=True, net_namespace=True, mount_namespace=True,
                pid_namespace=True, ipc_namespace=True, file_isolation=True,
                prefix=_full_prefix(), root=True, job_user_namespace=bool(seen.get("job_userns")),
                note="" if seen.get("proc") else "the child has no /proc (the host refused one)",
                rlimits=["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"])


def _probe_sandbox() -> None:
    """Try the full sandbox, then user+net namespaces only, then none."""
    work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-probe-")
    try:
        unshare = shutil.which("unshare") or "/usr/bin/unshare"
        level = _full_level(_try_launch(_full_prefix(), True, work))
        if level is None:
            basic = [unshare, "--user", "--map-root-user", "--net"]
            seen = _try_launch(basic, False, work)
            seen = seen if seen and seen["python"] else None
            level = dict(user_namespace=bool(seen), net_namespace=bool(seen),
                         mount_namespace=False, pid_namespace=False, ipc_namespace=False,
                         file_isolation=False,
                         prefix=basic if seen else [], root=False,
                         job_user_namespace=bool(seen and seen.get("job_userns")),
                         note="mount/pid namespaces unavailable: the child can read any "
                         "file the grader's user can" + ("" if seen else
                                                         "; no user/network namespace either"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    level["rlimits"] = ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"]
    _SANDBOX.update(level)


def sandbox_check() -> Check:
    """INFO sandbox.isolation: what confined the child in this grading."""
    lv = sandbox_level()
    ns = [n for n in ("user", "net", "mount", "pid", "ipc") if lv.get(f"{n}_namespace")]
    files = "on (the child sees only Python, its copy and a scratch folder)" if lv["file_isolation"] \
        else "OFF"
    msg = (f"namespaces: {', '.join(ns) or 'none'}; file isolation {files}"
           f"; rlimits: {', '.join(r[7:] for r in lv['rlimits'])}")
    return Check("sandbox.isolation", Status.INFO, msg + (f"; {lv['note']}" if lv["note"] else ""),
                 lv["file_isolation"])


def _copy_submission(src: str, dst: str, max_bytes: int) -> None:
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
    if "body" not in msg or set(msg) - {"token", "body", "ask"} \
            or msg.get("ask", False) not in (True, False):
        return None, False, "malformed message (valid token)"
    if _too_deep(msg["body"]):
        return None, False, f"message nested deeper than {_MAX_DEPTH} levels (valid token)"
    return msg["body"], msg.get("ask") is True, None


class _ReplyReader:
    """Reads the reply pipe line by line as it arrives: authenticates each line, stamps its
    arrival time, lets `rearm` move the deadline (e.g. start the budget at "ready"), and
    hands asks to the grader's interact callback.  Never raises on what the child writes."""

    def __init__(self, stream, token: str, t0: float, deadline: list, rearm, cap: int, on_ask):
        self.stream, self.token, self.t0, self.deadline, self.rearm, self.cap = \
            stream, token, t0, deadline, rearm, cap
        self.messages, self.times, self.forged, self.garbage = [], [], 0, []
        self.lock = threading.Lock()
        self.on_ask = on_ask
        self.errors = []                # exceptions of the grader's own callbacks
        self.on_message = None          # called with each authentic body, outside the lock

    def refuse(self, why: str, count: int = 1) -> None:
        with self.lock:
            self.forged += count
            if len(self.garbage) < 10:
                self.garbage.append(why)

    def run(self) -> None:
        buf, total, over = b"", 0, False
        while True:
            chunk = self.stream.read1(1 << 20)
            if not chunk:
                break
            if over:
                continue                # drained and dropped: the child keeps no grader busy
            total += len(chunk)
            if total > self.cap:
                over, buf = True, b""
                self.refuse(f"reply channel over {self.cap} bytes: the rest ignored")
                continue
            buf += chunk
            if b"\n" in chunk:
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self.take(line)
        if buf and not over:
            self.take(buf)
        self.stream.close()

    def take(self, line: bytes) -> None:
        now = time.monotonic()
        body, is_ask, why = decode_reply(line, self.token)
        if why is not None:
            self.refuse(why)
            return
        if isinstance(body, dict) and body.get("kind") == "job_end":
            n = body.get("garbage")
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                for why in (body.get("garbage_reasons") or [])[:3]:
                    self.refuse(f"job {body.get('job')}: {why}", 0)
                self.refuse(f"job {body.get('job')}: {n} unreadable line(s)", n)
        if len(self.messages) >= _MAX_MESSAGES:
            self.refuse(f"more than {_MAX_MESSAGES} messages")
            return
        with self.lock:
            self.messages.append(body)
            self.times.append(now - self.t0)
        try:                            # the grader's callbacks see the child's data: a bug there
            extra = self.rearm(body) if self.rearm is not None else None      # is an error
            if extra is not None:
                with self.lock:
                    self.deadline[0] = now + extra
            if is_ask:
                self.on_ask(body)
            elif self.on_message is not None:
                self.on_message(body)
        except Exception as exc:
            self.errors.append(f"the grader's rearm/followup callback raised {exc!r}"[:300])


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and all its descendants (read from outside, /proc)."""
    total, stack, seen = 0, [pid], set()
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * page
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_isolated(submission_dir: str, driver_body: str, request: dict, timeout: float, *,
                 interact=None, followup=None, rearm=None, lib_files: dict | None = None,
                 cpu_seconds: int | None = None, mem_bytes: int | None = None,
                 memory: str = "address", env_pass: tuple = (), ro_paths: tuple = (),
                 no_site: tuple = ()) -> RunOutcome:
    """Run DRIVER_PROLOGUE + driver_body in a fresh sandboxed interpreter on a private copy of
    the submission, with resource limits and a wall-clock deadline enforced from outside.
    Only token-tagged lines on the runner's own pipe count.
      interact(body) -> reply   answers every ask() of the child (in a grader thread);
      followup(body) -> obj     one line for the child's receive(), sent (once) when it returns
                                something; until then the child's input stays open and empty;
      rearm(body) -> seconds    a message moves the deadline to now + seconds;
      lib_files {rel: text}     written to a private folder, request["lib_dir"];
      cpu_seconds               RLIMIT_CPU (default: timeout + SPEC["runner_cpu_slack_s"]);
      mem_bytes, memory         the memory limit (default SPEC["runner_mem_bytes"]): "address"
                                = RLIMIT_AS per process; "resident" = the child tree's resident
                                memory polled from outside (GPU runtimes reserve huge address
                                space), killed with a clean reason on excess;
      env_pass, ro_paths        environment variables passed through, extra read-only paths
                                the child may see (e.g. CUDA's);
      no_site                   modules the driver needs (e.g. ("numpy", "scipy")): when every one
                                of them is found in the site directories themselves (not through
                                a .pth import hook), the driver starts without `site` (python -S:
                                its .pth imports cost ~25 ms) and gets those directories on its
                                path; else it starts as usual."""
    limits = {k: SPEC[f"runner_{k}"] for k in ("mem_bytes", "fsize_bytes", "cpu_slack_s",
                                               "term_grace_s", "output_cap_bytes",
                                               "reply_cap_bytes", "copy_cap_bytes")}
    mem = int(mem_bytes if mem_bytes is not None else limits["mem_bytes"])
    with _PROBE_LOCK:
        known = dict(_SANDBOX)
    # Before anything is known, launch in the full sandbox at once: its init reports what held
    # (no separate probe on the critical path); if it did not hold, probe, and run again.
    plan = known or {"prefix": _full_prefix(), "root": True}
    level = {k: v for k, v in known.items() if k not in ("prefix", "root")}
    again = dict(interact=interact, followup=followup, rearm=rearm, lib_files=lib_files,
                 cpu_seconds=cpu_seconds, mem_bytes=mem_bytes, memory=memory, env_pass=env_pass,
                 ro_paths=ro_paths, no_site=no_site)
    work = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-")
    t0 = time.monotonic()
    try:
        sub = os.path.join(work, "submission")
        try:
            _copy_submission(submission_dir, sub, limits["copy_cap_bytes"])
        except OSError as exc:
            return RunOutcome("error", [], f"could not copy submission: {exc}", 0.0, None, "", "",
                              sandbox=level)
        driver_dir = os.path.join(work, "driver")
        home = os.path.join(work, "home")
        os.makedirs(driver_dir)
        os.makedirs(home)
        os.makedirs(os.path.join(work, "root"))
        lib = os.path.join(driver_dir, "lib")
        for rel, text in (lib_files or {}).items():
            os.makedirs(os.path.dirname(os.path.join(lib, rel)), exist_ok=True)
            with open(os.path.join(lib, rel), "w") as fh:
                fh.write(text)
        driver = os.path.join(driver_dir, "grader_driver.py")
        with open(driver, "w") as fh:
            fh.write(DRIVER_PROLOGUE + driver_body)
        token = secrets.token_hex(16)
        site_dirs = _site_dirs(no_site)
        req = dict(request, token=token, submission_dir=sub, lib_dir=lib, scratch_dir=home,
                   runner={"reply_cap": limits["reply_cap_bytes"], "isolated": bool(plan["root"]),
                           "path": site_dirs or []})
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home,
               "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
        # BLAS threads pinned to 1 (CONVENTIONS): the verdict must not depend on the grading
        # machine's core count (a dense LAPACK solve's round-off depends on the thread count).
        env.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")})
        for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV") + tuple(env_pass):
            if key in os.environ:
                env[key] = os.environ[key]
        cpu = cpu_seconds if cpu_seconds is not None else int(timeout) + int(limits["cpu_slack_s"])
        rlimits = [["RLIMIT_CPU", int(cpu)], ["RLIMIT_FSIZE", int(limits["fsize_bytes"])],
                   ["RLIMIT_CORE", 0]] + ([["RLIMIT_AS", mem]] if memory == "address" else [])
        import socket
        life, life_child = socket.socketpair()
        rfd, wfd = os.pipe()
        cfg = _launch_cfg(work, plan["root"], [sub, home],
                          [_python_exe(), "-I", "-B"] + (["-S"] if site_dirs else []) + [driver, str(wfd)],
                          sub, rlimits,
                          life_child.fileno(), ro_paths, os.path.realpath(submission_dir))
        try:
            proc = subprocess.Popen(plan["prefix"] + [_python_exe(), "-I", "-S", "-B", "-c",
                                                          _SANDBOX_INIT, json.dumps(cfg)],
                                    cwd=sub, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(wfd, life_child.fileno()),
                                    start_new_session=True)
        except OSError as exc:
            for fd in (rfd, wfd):
                os.close(fd)
            life.close()
            life_child.close()
            if not known:                              # e.g. no unshare here: probe, run again
                sandbox_level()
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            return RunOutcome("error", [], f"could not start the child: {exc}", 0.0, None, "", "",
                              sandbox=level)
        os.close(wfd)
        life_child.close()
        import queue
        import select
        deadline = [time.monotonic() + timeout]
        out, err, failure = [], [], []
        lines = queue.Queue()          # what the grader writes to the child's input, in order
        lines.put(req)
        asks = queue.Queue()

        def write_lines():
            while True:
                obj = lines.get()
                if obj is None:
                    break
                try:
                    proc.stdin.write((json.dumps(obj) + "\n").encode())
                    proc.stdin.flush()
                except (OSError, ValueError):
                    break
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

        def answer_asks():
            while True:
                body = asks.get()
                if body is None:
                    break
                try:
                    reply = interact(body) if interact is not None else None
                except Exception as exc:          # the grader's own callback failed
                    failure.append(f"the grader's interact callback raised {exc!r}"[:300])
                    reply = None
                lines.put({"reply": reply, "job": body.get("job") if isinstance(body, dict) else None})

        reader = _ReplyReader(os.fdopen(rfd, "rb"), token, t0, deadline, rearm,
                              limits["reply_cap_bytes"], asks.put)
        reader.errors = failure        # a callback error ends the run as "error"
        if followup is not None:
            pending = [followup]

            def on_message(body):
                obj = pending[0](body) if pending else None
                if obj is not None:
                    pending.clear()
                    lines.put(obj)
            reader.on_message = on_message
        if interact is None and followup is None:
            lines.put(None)            # nothing more will be said: the child's input ends
        cap = limits["output_cap_bytes"]
        threads = [threading.Thread(target=_drain, args=(proc.stdout, out, cap), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, err, cap), daemon=True),
                   threading.Thread(target=reader.run, daemon=True),
                   threading.Thread(target=write_lines, daemon=True),
                   threading.Thread(target=answer_asks, daemon=True)]
        for t in threads:
            t.start()
        timed_out, over_mem, next_rss = False, None, 0.0
        try:
            exited = os.pidfd_open(proc.pid)    # readable the moment the child exits (Linux >= 5.3)
        except (AttributeError, OSError):
            exited = None
        while True:
            with reader.lock:
                left = deadline[0] - time.monotonic()
            if left <= 0:
                timed_out = proc.poll() is None
                break
            if failure:
                break
            if memory == "resident" and time.monotonic() >= next_rss:
                next_rss = time.monotonic() + 0.1
                rss = _tree_rss(proc.pid)
                if rss > mem:
                    over_mem = rss
                    break
            if exited is not None:              # (Popen.wait(timeout) polls in growing sleeps)
                select.select([exited], [], [], min(left, 0.05))
                if proc.poll() is not None:
                    break
                continue
            try:
                proc.wait(timeout=min(left, 0.05))
                break
            except subprocess.TimeoutExpired:
                continue
        if exited is not None:
            os.close(exited)
        with reader.lock:          # nothing arriving after the deadline counts
            n_in_time = len(reader.messages)
            limit_s = deadline[0] - t0
        # the whole process group goes, whether or not the driver exited (and with unshare's
        # pid namespace every process of the run, daemons included, when its init dies)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                proc.wait(timeout=float(limits["term_grace_s"]))
                if sig == signal.SIGTERM:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                break
            except subprocess.TimeoutExpired:
                continue
        lines.put(None)
        asks.put(None)
        for t in threads[:3]:
            t.join(timeout=5)
        life.settimeout(0.5)
        told = b""
        try:
            while True:
                chunk = life.recv(65536)
                if not chunk:
                    break
                told += chunk
        except OSError:
            pass
        life.close()
        said, ready = "", None
        for said_line in told.decode("utf-8", "replace").splitlines():
            if said_line.startswith("ready "):
                try:
                    ready = json.loads(said_line[6:])
                except ValueError:
                    pass
            else:
                said = said_line.strip()
        wall = time.monotonic() - t0
        keep = n_in_time if timed_out else len(reader.messages)
        messages, times = reader.messages[:keep], reader.times[:keep]
        forged, garbage = reader.forged, list(reader.garbage)
        stdout = b"".join(out).decode("utf-8", "replace")
        stderr = b"".join(err).decode("utf-8", "replace")
        rc = proc.returncode
        if said.startswith("exit "):
            rc = int(said.split()[1])
        elif said.startswith("signal "):
            rc = -int(said.split()[1])
        if not known:
            full = _full_level(ready)
            if full is None or said.startswith("setup ") or (rc == 127 and not messages):
                sandbox_level()                       # the full sandbox did not hold: probe,
                return run_isolated(submission_dir, driver_body, request, timeout, **again)
            with _PROBE_LOCK:
                if not _SANDBOX:
                    _SANDBOX.update(full)
            level = {k: v for k, v in _SANDBOX.items() if k not in ("prefix", "root")}
        extra = dict(forged=forged, times=times, sandbox=level, garbage=garbage)
        if said.startswith("setup "):
            return RunOutcome("error", [], f"sandbox setup failed: {said[6:]}", wall, rc, stdout, stderr,
                              **extra)
        if failure:
            return RunOutcome("error", messages, failure[0], wall, rc, stdout, stderr, **extra)
        if over_mem is not None:
            return RunOutcome("crashed", messages,
                              f"exceeded {mem} bytes resident ({over_mem} measured)",
                              wall, rc, stdout, stderr, **extra)
        if timed_out:
            return RunOutcome("timeout", messages, f"killed at its {limit_s:.1f} s deadline (the budget)",
                              wall, rc, stdout, stderr, **extra)
        junk = (f" ({forged} unreadable line(s) on the reply channel; first: {garbage[0]})"
                if garbage else "")
        if rc != 0:
            last = stderr.strip().splitlines()[-1:] or [f"exit code {rc}"]
            return RunOutcome("crashed", messages, f"child exited with {rc}: {last[0][:200]}{junk}",
                              wall, rc, stdout, stderr, **extra)
        if not messages:
            return RunOutcome("no_reply", [], f"child sent no result{junk}", wall, rc, stdout, stderr,
                              **extra)
        return RunOutcome("ok", messages, "", wall, rc, stdout, stderr, **extra)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# =============================================================================
# GRADING: the checks above, in the seed's order, over one submission
# =============================================================================
def grade(submission: str, *, seeds: list, total: int, budget: float, load_timeout: float,
          skip_static: bool, no_exec: bool, jobs: int, test_dir: str | None,
          resume_dir: str | None = None, memory: dict | None = None) -> Report:
    """Gates 1-3 once, then gates 4-8 per seed (each seed's result kept in resume_dir when
    given, and reused when the same seed, inputs and grader are graded again), then the keys."""
    report = Report(submission)
    checks, phases, keys = report.checks, report.phases, report.keys
    report.figures_data.update(budget=budget, seeds=[])                    # PLOTS
    t = time.monotonic()
    checks += check_manifest(submission)
    manifest = checks[0].measured if checks[0].status is Status.PASS else None
    checks += check_artifact_size(submission)
    digests = None if skip_static else {}
    checks += check_static(submission, skip_static, digests)
    phases["gates1-3"] = time.monotonic() - t
    progress("gates 1-3: " + ", ".join(f"{c.id} {c.status.value}" for c in checks if c.id[:2] in
                                       ("g1", "g2", "g3") and "." in c.id))
    if any(c.status is Status.FAIL for c in checks):
        checks += [Check(cid, Status.SKIP, "not run: an earlier gate failed") for cid in
                   ("g4.testgen", "g5.model_load", "g6.preprocess_isolation", "g7.determinism",
                    "g8.inference")]
        keys.update(seed=",".join(seed_label(s) for s in seeds), overall_accuracy=0.0,
                    highest_tier_above_90=-1, deterministic=False, ranked=False)
        return report
    many = len(seeds) > 1
    results, t_seeds, resumed = [], time.monotonic(), 0
    for i, seed in enumerate(seeds):
        t = time.monotonic()
        prefix = f"s{i + 1}." if many else ""
        r = resume_load(resume_dir, submission, seed, prefix, no_exec)
        resumed += r is not None
        if r is None:
            r = grade_seed(submission, manifest, seed, total=total, budget=budget,
                           load_timeout=load_timeout, no_exec=no_exec, jobs=jobs, test_dir=test_dir,
                           prefix=prefix, memory=memory, guard=guard_request(digests))
            if _INTERRUPT["at"] is None:            # a seed cut short by Ctrl-C is not a result
                resume_save(resume_dir, submission, seed, prefix, no_exec, r)
        phases[f"seed{i + 1}.generate"] = r["gen_s"]
        phases[f"seed{i + 1}.total"] = time.monotonic() - t
        checks += r["checks"]
        for name, oc in r["outcomes"].items():
            report.outcomes[f"seed {i + 1} {name}" if many else name] = oc
        results.append(r)
        report.figures_data["seeds"].append((seed_label(seed), r["tiers"]))     # PLOTS
        progress_count("seeds", i + 1, len(seeds), t_seeds,
                       f"{seed_label(seed)[:16]}: overall {r.get('overall', 0.0):.4f}"
                       + (", resumed" if r.get("resumed") else ""))
    if resume_dir:
        progress(f"resume: {resumed} of {len(seeds)} seed(s) reused from {resume_dir}")
        checks.append(Check("run.resume", Status.INFO, f"{resumed} of {len(seeds)} seed(s) reused "
                            f"from {resume_dir} (same seed, submission bytes, options and grader)",
                            resumed, len(seeds)))
    if not no_exec:                          # after the runs: they established the level
        checks += [sandbox_check()] + answers_hidden_check(test_dir)
    keys.update(seed_keys(results, total, test_dir, many))
    if no_exec:
        return report
    overall = [r.get("overall", 0.0) for r in results]
    keys["overall_accuracy"] = round(sum(overall) / len(overall), 4)
    if many:
        keys["overall_accuracy_min"] = min(overall)
    keys["highest_tier_above_90"] = min(r.get("htop", -1) for r in results)
    keys["deterministic"] = all(r["deterministic"] for r in results)
    keys["ranked"] = all(r["ranked"] for r in results)
    return report


# =============================================================================
# VERDICT
# =============================================================================
RANK_GATES = ("g1.", "g2.", "g3.", "g4.", "g5.", "g6.", "g7.")


def _gate(cid: str) -> str:
    return cid.split(".", 1)[1] + "." if cid.startswith("s") and cid[1:2].isdigit() else cid


def verdict(checks: list, *, strict: bool, no_exec: bool) -> tuple:
    """(result, score) from records alone.  SCORE = overall_accuracy (mean over seeds) when
    gates 1-7 pass; a failed gate 1-7 gives FAIL 0.0; incomplete tiers (gate 8) only lower it."""
    if no_exec:
        return "UNGRADED", None
    fails = [c for c in checks if c.status is Status.FAIL]
    if any(_gate(c.id).startswith(RANK_GATES) for c in fails):
        return "FAIL", 0.0
    if strict and any(c.status is Status.REVIEW for c in checks):
        return "FAIL", 0.0
    overall = [c.measured for c in checks if c.id.endswith("rank.overall_accuracy")]
    if not overall:
        return "FAIL", 0.0
    score = round(sum(overall) / len(overall), 4)
    if score >= 1.0 and not fails:
        return "PASS", 1.0
    return ("PARTIAL", score) if score > 0 else ("FAIL", 0.0)


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


# ---- modchallenge figures ------------------------------------------------------------------
def _tier_label(tier: tuple) -> str:
    tid, lo, hi = tier[0], tier[1], tier[2]
    return f"{tid}\n(×, no mod)" if tid == 0 else f"{tid}\n{lo}–{hi} b"


def plot_mod_accuracy(seeds: list, *, submission: str, result: str, score):
    """Accuracy per tier as bars (the mean over seeds; tier 0 hatched: an unscored diagnostic),
    one dot per seed when several seeds were graded, the 0.90 ranking line; incomplete tiers
    marked.  seeds: [(label, [TierResult, ...])]."""
    import numpy as np
    fig = new_figure(9.5, 5.2)
    ax = fig.add_subplot()
    ids = [t[0] for t in TIERS]
    graded = [(label, {t.tier_id: t for t in tiers}) for label, tiers in seeds if tiers]
    thr = SPEC["rank_threshold"]
    ax.axhline(thr, color=PLOT_COLORS["FAIL"], ls="--", lw=1.2,
               label=f"ranking threshold {thr:.2f} (highest_tier_above_90)")
    if graded:
        acc = np.array([[g[1][k].accuracy if k in g[1] else 0.0 for k in ids] for g in graded])
        mean = acc.mean(axis=0)
        ax.bar(ids[1:], mean[1:], color=PLOT_COLORS["submitted"], width=0.7, edgecolor="black", lw=0.5,
               label="accuracy" + (f", mean of {len(graded)} seeds" if len(graded) > 1 else ""))
        ax.bar(ids[:1], mean[:1], color="0.85", hatch="//", width=0.7, edgecolor="black", lw=0.5,
               label="tier 0: unscored diagnostic")
        for k, m, top in zip(ids, mean, acc.max(axis=0)):
            ax.text(k, top + 0.025, f"{m:.2f}", ha="center", va="bottom", fontsize=8)
        if len(graded) > 1:
            rng = np.random.default_rng(0)
            for i, (label, _) in enumerate(graded):
                ax.plot(np.array(ids) + rng.uniform(-0.18, 0.18, len(ids)), acc[i], "o", ms=4,
                        color="black", alpha=0.7, label="one dot per seed" if i == 0 else None)
        incomplete = sorted({k for _, g in graded for k in ids if k in g and not g[k].completed}
                            | {k for _, g in graded for k in ids if k not in g})
        for j, k in enumerate(incomplete):
            ax.plot(k, 0.04, "x", color=PLOT_COLORS["FAIL"], ms=9, mew=2,
                    label="tier not finished (scores 0)" if j == 0 else None)
    else:
        ax.text(0.5, 0.5, "no tier graded (a gate failed before inference, or --no-exec)",
                ha="center", va="center", transform=ax.transAxes, fontsize=11)
    ax.set_xticks(ids, [_tier_label(t) for t in TIERS], fontsize=8)
    ax.set_xlabel("tier (bits of p); tier 0 is the unscored multiplication diagnostic")
    ax.set_ylabel("accuracy (fraction of the tier's problems exactly right)")
    ax.set_ylim(0.0, 1.1)
    ax.set_xlim(-0.6, ids[-1] + 0.6)
    ax.grid(True, axis="y", color="0.9", lw=0.6)
    ax.legend(loc="upper right", fontsize=8, framealpha=0.95)
    verdict_title(fig, "accuracy per tier" + (f" over {len(graded)} seeds" if len(graded) > 1 else ""),
                  submission, result, score)
    return fig


def plot_mod_wall(seeds: list, budget: float, *, submission: str, result: str, score):
    """Cumulative inference wall time at the end of each tier, one line per seed, against
    the budget; a tier that did not finish has no point."""
    fig = new_figure(9.5, 5.0)
    ax = fig.add_subplot()
    ids = [t[0] for t in TIERS]
    ax.axhline(budget, color=PLOT_COLORS["FAIL"], ls="--", lw=1.2, label=f"budget {budget:g} s")
    drawn, low = 0, budget
    for label, tiers in seeds:
        pts = [(t.tier_id, t.wall) for t in tiers if t.completed and t.wall is not None]
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=5, lw=1.3,
                label=f"seed {plain_text(label)[:16]}")
        drawn += 1
        low = min([low] + [p[1] for p in pts if p[1] > 0])
    if not drawn:
        ax.text(0.5, 0.5, "no tier finished (not executed, or a gate failed)", ha="center",
                va="center", transform=ax.transAxes, fontsize=11)
    ax.set_yscale("log")
    ax.set_ylim(max(low, 1e-3) / 3, budget * 3)
    ax.set_xticks(ids, [_tier_label(t) for t in TIERS], fontsize=8)
    ax.set_xlim(-0.6, ids[-1] + 0.6)
    ax.set_xlabel("tier (bits of p), in the order inference runs")
    ax.set_ylabel("cumulative inference wall time (s)")
    ax.grid(True, color="0.9", lw=0.6)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.95)
    verdict_title(fig, "cumulative wall time per tier", submission, result, score)
    return fig


def plot_report(out_dir: str, submission: str, result: str, score, checks: list,
                figures_data: dict) -> list:
    """--plot DIR: every modchallenge figure, as INFO records listing the PNGs."""
    seeds = figures_data.get("seeds") or []
    budget = float(figures_data.get("budget") or SPEC["budget_s"])
    kw = dict(submission=submission, result=result, score=score)
    return write_figures(out_dir, [
        ("mod_accuracy", "accuracy per tier, the 0.90 line" + (", one dot per seed" if len(seeds) > 1
                                                                else ""),
         lambda: plot_mod_accuracy(seeds, **kw)),
        ("mod_wall", "cumulative wall time per tier against the budget",
         lambda: plot_mod_wall(seeds, budget, **kw))])


# =============================================================================
# PRINTING AND CLI
# =============================================================================
KEY_FORMATS = {}    # typed key -> printed text (all keys use format_value's defaults)
LEADERBOARD = (("highest_tier_above_90", "keys.highest_tier_above_90", "desc"),
               ("overall_accuracy", "keys.overall_accuracy", "desc"), ("score", "score", "desc"))
POSITIVE_OPTIONS = ("budget", "load_timeout")
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))


def format_check(c: Check, width: int = 30) -> str:
    if c.status is Status.REVIEW:
        return f"REVIEW_REQUIRED: {c.id} {c.message}"
    return f"{c.status.value:<5} {c.id:<{width}} {c.message}"


def print_report(checks: list, result: str, score, keys: dict, stream=None, quiet: bool = False) -> None:
    """Every check line (only FAIL/REVIEW when quiet), the summary over ALL checks, keys, verdict."""
    stream = stream or sys.stdout
    shown = [c for c in checks if not quiet or c.status in (Status.FAIL, Status.REVIEW)]
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
        for line in text.splitlines()[:200]:
            print("    " + line, file=stream)


def _default_jobs() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):
        return max(1, min(4, os.cpu_count() or 1))


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog=GRADER_NAME, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="SCORE = overall_accuracy (mean over seeds) when gates 1-7 pass, else 0.0; "
               "RESULT PASS = SCORE 1.0 with every gate passed, PARTIAL = ranked and 0 < SCORE < 1, "
               "FAIL = a gate 1-7 failed or SCORE 0.\n"
               "exit codes: 0 full score, 1 graded below full score, "
               "2 UNGRADED (--no-exec) or usage error, 3 grader failure, 130 interrupted; with "
               "several submissions, the largest of theirs")
    add_report_options(p, submissions_help="directory with manifest.json, the model's Python code "
                       "and weights", jobs=False)
    p.add_argument("--total", type=int, default=SPEC["total"],
                   help="problems in the test set, a multiple of 11 (default %(default)s)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seed", metavar="HEX", help="master seed as hex (bytes.fromhex); default: random")
    g.add_argument("--public", action="store_true",
                   help="the public benchmark seed (hex of b'modchallenge-public-benchmark-v1')")
    g.add_argument("--seeds", metavar="LIST|N",
                   help="several seeds: a count N of random seeds, or a comma list of hex / 'public'; "
                        "prints the robustness table")
    g.add_argument("--test-set", metavar="DIR",
                   help="grade on tier_<k>.jsonl files from DIR instead of generating (every row is "
                        "re-checked: expected recomputed, p prime and p, a, b within the tier)")
    p.add_argument("--budget", type=float, default=SPEC["budget_s"],
                   help="inference wall-clock seconds for all tiers, enforced from outside "
                        "(default %(default)s)")
    p.add_argument("--load-timeout", type=float, default=SPEC["load_timeout_s"],
                   help="seconds allowed for import + load() (default %(default)s)")
    p.add_argument("--memory", metavar="GB", type=float, default=None,
                   help="memory limit of the model's child process in GiB (default "
                        f"{SPEC['runner_mem_bytes'] / 2 ** 30:g}): its address space, or with --gpu its "
                        "resident memory")
    p.add_argument("--gpu", action="store_true",
                   help="GPU mode: no address-space limit (CUDA reserves far more virtual memory than "
                        "it uses); the child's resident memory is watched from outside instead and "
                        "the run is killed (a clean FAIL) when it exceeds --memory")
    p.add_argument("--skip-static-check", action="store_true",
                   help="skip gate 3 (the harness's trusted-use mode)")
    p.add_argument("--jobs", type=int, default=_default_jobs(),
                   help="worker processes for the large primes of test generation (default "
                        "%(default)s); with several submissions, how many are graded at a time "
                        "(each then generates with one worker)")
    p.add_argument("--out", metavar="DIR",
                   help="keep each seed's result in DIR as it finishes; rerun with the same DIR, "
                        "submission, options and grader to skip the seeds already graded")
    p.add_argument("--write-tests", metavar="DIR",
                   help="no submission: write the generated set as DIR/tier_<k>.jsonl and exit 0")
    p.add_argument("--strict", action="store_true", help="anything needing review scores 0.0")
    p.add_argument("--no-exec", action="store_true",
                   help="do not run submitted code: gates 1-4 only, RESULT: UNGRADED, exit 2")
    return p


def parse_seeds(args) -> list:
    """The seeds to grade, as bytes; ValueError on a bad value."""
    if args.public:
        return [SPEC["public_seed"]]
    if args.seed is not None:
        return [bytes.fromhex(args.seed)] if args.seed else [secrets.token_bytes(32)]
    if args.seeds is not None:
        text = args.seeds.strip()
        if text.isdigit() and "," not in text:
            n = int(text)
            if not 1 <= n <= 100:
                raise ValueError("--seeds N must be between 1 and 100")
            return [secrets.token_bytes(32) for _ in range(n)]
        items = [s.strip() for s in text.split(",") if s.strip()]
        if not items:
            raise ValueError("--seeds: empty list")
        return [SPEC["public_seed"] if s == "public" else bytes.fromhex(s) for s in items]
    return [secrets.token_bytes(32)]


def usage_checks(args) -> None:
    """This grader's own usage rules (UsageError), beyond common_usage_checks."""
    try:
        args.seed_list = [s.hex() for s in parse_seeds(args)]    # drawn once: every child grades the same
    except ValueError as exc:
        raise UsageError(f"bad seed: {exc}")
    if args.total <= 0 or args.total % len(TIERS):
        raise UsageError(f"--total must be a positive multiple of {len(TIERS)}")
    if args.test_set is not None and not os.path.isdir(args.test_set):
        raise UsageError(f"--test-set {args.test_set} is not a directory")
    if args.write_tests:
        if args.submissions or args.test_set or len(args.seed_list) != 1:
            raise UsageError("--write-tests takes no submission and one seed")
        check_output_path(args.write_tests, "--write-tests", directory=True)
        return
    for sub in args.submissions:
        if not os.path.isdir(sub):
            raise UsageError(f"{sub} is not a directory")
    if args.out and len(args.submissions) > 1:
        raise UsageError("--out takes one submission (grade several with --json and --table)")
    if args.memory is not None and not 0 < args.memory <= SPEC["memory_gb_max"]:
        raise UsageError(f"--memory must be in (0, {SPEC['memory_gb_max']}] GiB")


def standalone_action(args):
    """--write-tests: generate and write the test set, no submission."""
    if not args.write_tests:
        return None
    seed = bytes.fromhex(args.seed_list[0])
    t = time.monotonic()
    paths = write_test_set(generate_test_set(seed, args.total, max(1, args.jobs)), args.write_tests)
    print(f"seed: {seed.hex()}")
    print(f"wrote {len(paths)} files ({args.total} problems) to {args.write_tests} "
          f"in {time.monotonic() - t:.2f} s")
    return EXIT_FULL


def child_jobs(args) -> int:
    return 1


def grade_submission(args, submission: str) -> Report:
    _RESUME_OPTIONS.update(total=args.total, budget=args.budget, load_timeout=args.load_timeout,
                           skip_static=args.skip_static_check, memory=args.memory, gpu=args.gpu,
                           test_set=tree_sha256(args.test_set)["sha256"] if args.test_set else None)
    return grade(submission, seeds=[bytes.fromhex(s) for s in kept_seeds(args)], total=args.total,
                 budget=args.budget, load_timeout=args.load_timeout,
                 skip_static=args.skip_static_check, no_exec=args.no_exec, jobs=max(1, args.jobs),
                 test_dir=args.test_set, resume_dir=args.out,
                 memory=memory_options(args.memory, args.gpu))


def kept_seeds(args) -> list:
    """The seeds to grade; with --out, random draws are kept in DIR/seeds.json, so a rerun of the
    same request (e.g. --seeds 5) grades the same seeds and can resume them."""
    if not args.out or args.public or args.seed or (args.seeds and "," in args.seeds):
        return args.seed_list
    path = os.path.join(args.out, "seeds.json")
    request = {"seeds": args.seeds, "seed": args.seed}
    try:
        with open(path) as fh:
            kept = json.load(fh)
        if kept.get("request") == request and len(kept.get("seeds", [])) == len(args.seed_list):
            return [bytes.fromhex(s).hex() for s in kept["seeds"]]
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    with open(path, "w") as fh:
        json.dump({"request": request, "seeds": args.seed_list}, fh)
    return args.seed_list


def report_verdict(report: Report, args) -> tuple:
    return verdict(report.checks, strict=args.strict, no_exec=args.no_exec)


def finish_report(report: Report, result: str, score, args) -> None:
    """After the verdict, before printing: records that need the verdict (e.g. figures) go here."""


def exit_code_of(report: Report, result: str, score) -> int:
    if result == "UNGRADED":
        return EXIT_UNGRADED
    return EXIT_FULL if score == 1.0 else EXIT_BELOW


def print_submission_report(report: Report, result: str, score, args) -> None:
    print_submission_output(report.outcomes)
    print_report(report.checks, result, score, report.keys, quiet=args.quiet)


def report_extra(report: Report) -> dict:
    return {}


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
                   "writable before grading); with several submissions, one document per line")
    p.add_argument("--table", metavar="PATH", help="write the leaderboard to PATH: CSV (.csv) or "
                   "Markdown (.md)")
    p.add_argument("--merge", nargs="+", metavar="REPORT.json",
                   help="no grading: build the leaderboard from reports written by --json elsewhere")
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
    if args.table and os.path.splitext(args.table)[1].lower() not in TABLE_FORMATS:
        raise UsageError(f"--table {args.table}: the name must end in .csv or .md")
    for name, is_dir in OUTPUT_OPTIONS:
        if getattr(args, name, None):
            check_output_path(getattr(args, name), f"--{name.replace('_', '-')}", directory=is_dir)
    if getattr(args, "plot", None) and (why := plot_usage_error(args.plot)):
        raise UsageError(why)


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

    options = {k: v for k, v in sorted(vars(args).items()) if k not in ("submissions", "report_child")}
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
        return fmt(value, keys)
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
    return str(value)


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


def read_reports(path: str) -> list:
    """The documents of a --json file (one indented document, or one per line)."""
    try:
        with open(path) as fh:
            text = fh.read()
        try:
            docs = [json.loads(text)]
        except ValueError:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--merge {path}: not a report ({type(exc).__name__})")
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("grader") != GRADER_NAME:
            raise UsageError(f"--merge {path}: not a {GRADER_NAME} report")
    return docs


def _doc_value(doc: dict, path: str):
    value = doc
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def leaderboard(docs: list) -> list:
    """One row per report, ranked by LEADERBOARD's keys in order (None last; ties share a rank,
    then by submission name)."""
    rows = []
    for doc in docs:
        row = {"submission": os.path.basename(os.path.normpath(str(doc.get("submission")))),
               "result": doc.get("result")}
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


def grade_many(args) -> tuple:
    """Every submission in its own grader process (`--jobs` at a time), so no state, crash or
    limit of one reaches another; reports printed in the order given.  (codes, documents)"""
    import concurrent.futures
    base = tempfile.mkdtemp(prefix=f"{GRADER_NAME}-many-")
    children = {}

    def one(i, sub):
        req = os.path.join(base, f"{i}.request.json")
        out = os.path.join(base, f"{i}.report.json")
        child = dict(vars(args), submissions=[sub], json=out, table=None, merge=None,
                     report_child=None, jobs=child_jobs(args),
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
            docs = [doc for path in args.merge for doc in read_reports(path)]
            codes = [EXIT_FULL]
        elif len(args.submissions) == 1:
            code, doc = grade_single(args, args.submissions[0])
            codes, docs = [code], [doc] if doc else []
        else:
            codes, docs = grade_many(args)
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
