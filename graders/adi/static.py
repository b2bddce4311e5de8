"""STATIC CHECKS (a part of grade_adi.py; see CONTRIBUTING.md)."""
import ast
import dataclasses
import os
import sys
from graders.adi.spec import SPEC
from graders.common.guarded import parse_python
from graders.common.records import Check, Reject, Status
from graders.common.static_imports import allowlist_records, import_statement_modules
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# STATIC CHECKS (import allowlist)
# =============================================================================
ALLOWED_THIRD_PARTY = ("numpy", "scipy")
# Reaching the grader's in-process instrumentation (its state, the wrapped
# originals, the result channel) or native code behind it needs one of these;
# an ADI solver needs none.  Each use is flagged for review (ours).
INTROSPECTION_MODULES = ("ctypes", "gc", "inspect", "_ctypes", "cffi",
                         # a debugger scripted through a StringIO goes "up" to the driver's
                         # module frame and runs a statement in its globals (red team round 5)
                         "pdb", "bdb",
                         # a trace / profile function runs inside the recorder and can jump over
                         # its lines (frame.f_lineno = ...): the trace module and the profilers
                         # install one with no settrace spelled (red team round 5)
                         "trace", "profile", "cProfile", "_lsprof",
                         # another process runs outside the solve instrumentation (ours)
                         "multiprocessing", "subprocess", "_posixsubprocess", "concurrent.futures.process")
PROCESS_CALLS = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "spawnv",
                 "spawnve", "system", "popen", "ProcessPoolExecutor")
INTROSPECTION_NAMES = ("__globals__", "__closure__", "cell_contents", "__code__", "__defaults__",
                       "__kwdefaults__", "f_globals", "f_locals", "f_back", "tb_frame", "_getframe",
                       "__main__", "__pyx_capi__", "get_referrers", "get_objects", "_superlu",
                       "_umath_linalg", "_flapack", "_fblas",
                       "settrace", "setprofile", "f_lineno", "f_trace", "f_code",
                       # private transform back ends behind numpy.fft / scipy.fft / scipy.fftpack
                       "_pocketfft", "pypocketfft", "_realtransforms", "_basic_backend")


def import_audit(source: str, check_prefix: str, local: set = frozenset(),
                 filename: str = SPEC["solver_file"]) -> list:
    """AST pass: every import outside stdlib + numpy + scipy (+ the submission's own
    `local` modules) fails; importlib / __import__ / exec / eval are flagged for
    review (the allowlist is static); so are process spawning and introspection."""
    try:
        tree = parse_python(source, filename, f"{check_prefix}.syntax")
        return _import_audit_tree(tree, check_prefix, local)
    except Reject as exc:
        return [exc.check]
    except RecursionError:
        return [Check(f"{check_prefix}.syntax", Status.FAIL, f"{filename}: cannot be audited (nested too "
                      "deeply)")]


def _import_audit_tree(tree, check_prefix: str, local) -> list:
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic, intro = [], [], []
    for node in ast.walk(tree):
        word = node.attr if isinstance(node, ast.Attribute) else node.value if (
            isinstance(node, ast.Constant) and isinstance(node.value, str)) else None
        if word is not None and any(n in word for n in INTROSPECTION_NAMES):
            intro.append(f"{word[:40]!r} (line {node.lineno})")
        if isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS:
            intro.append(f"{node.attr!r}: another process (line {node.lineno})")
        for name in import_statement_modules(node):
            top = name.split(".")[0]
            if top in ("importlib",):
                dynamic.append(f"import {name} (line {node.lineno})")
            full = name + " " + " ".join(a.name for a in node.names)
            if (top in INTROSPECTION_MODULES or name in INTROSPECTION_MODULES
                    or any(n in full for n in INTROSPECTION_NAMES)
                    or any(a.name in PROCESS_CALLS for a in node.names)):
                intro.append(f"import {full.strip()} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY and top not in local:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("__import__", "exec", "eval", "compile"):
            dynamic.append(f"{node.func.id}() (line {node.lineno})")
    out = allowlist_records(check_prefix, bad, dynamic)
    patched = library_assignments(tree)
    if patched:
        out.insert(0, Check(f"{check_prefix}.library_assignment", Status.FAIL,
                            "assigns to (or deletes) an attribute of a NumPy/SciPy module, class or function, "
                            "which changes what the library computes and what a recorder reading it sees: "
                            + ", ".join(patched[:6]), patched))
    if intro:
        out.append(Check(f"{check_prefix}.introspection", Status.REVIEW,
                         "introspection or native-code access that could reach around the solve "
                         "instrumentation: " + ", ".join(intro[:8]), intro))
    return out


def _root_name(node):
    """The name an attribute/subscript chain starts from (None through a call: `np.zeros(3)[0] = 1`
    assigns into a new array, not into the library)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _lib_rooted(node, lib) -> bool:
    """An expression that names a library object: `np.linalg`, `getattr(np, "linalg")`,
    `sys.modules["numpy.linalg"]`, a tuple/list of such, or a chain starting from one."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
                node.value.attr == "modules" and _root_name(node.value) == "sys" and \
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) and \
                node.slice.value.split(".")[0] in ALLOWED_THIRD_PARTY:
            return True
        node = node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return any(_lib_rooted(el, lib) for el in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "vars") \
            and node.args:
        return _lib_rooted(node.args[0], lib)
    return isinstance(node, ast.Name) and node.id in lib


def _library_aliases(tree, lib) -> set:
    """Names bound to library objects (`L = np.linalg`, `for m in (np.linalg,)`,
    `B = sys.modules["scipy.linalg._basic"]`), to a fixed point."""
    lib = set(lib)
    while True:
        new = set()
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, (ast.For, ast.comprehension)):
                pairs = [(node.target, node.iter)]
            elif isinstance(node, ast.NamedExpr):
                pairs = [(node.target, node.value)]
            for target, value in pairs:
                if _lib_rooted(value, lib) and isinstance(target, (ast.Name, ast.Tuple, ast.List)):
                    new |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)
                            and isinstance(n.ctx, ast.Store)} - lib
        if not new:
            return lib
        lib |= new


def library_assignments(tree) -> list:
    """Statements that rebind an attribute of a name imported from numpy/scipy: `np.nonzero = f`,
    `csr_matrix.tocoo = f`, `del la.solve`, `setattr(np, ...)`, `vars(np)[...] = f`,
    `np.__dict__.update(...)` (ours, a tripwire: the recorder itself reads only references
    captured before the submission loads, and the driver snapshots the library for the tamper check)."""
    lib = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            lib |= {(a.asname or a.name.split(".")[0]) for a in node.names
                    if a.name.split(".")[0] in ALLOWED_THIRD_PARTY}
        elif isinstance(node, ast.ImportFrom) and not node.level and \
                (node.module or "").split(".")[0] in ALLOWED_THIRD_PARTY:
            lib |= {(a.asname or a.name) for a in node.names if a.name != "*"}
    lib |= _library_aliases(tree, lib)
    hits = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for el in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(el, ast.Attribute) and _lib_rooted(el.value, lib) and _root_name(el) not in lib:
                    hits.append(f"line {node.lineno}")
                elif isinstance(el, (ast.Attribute, ast.Subscript)) and _root_name(el) in lib and not (
                        isinstance(el, ast.Subscript) and isinstance(el.value, ast.Name)):
                    hits.append(f"line {node.lineno}")
                elif isinstance(el, ast.Subscript) and isinstance(el.value, ast.Call) and \
                        isinstance(el.value.func, ast.Name) and el.value.func.id == "vars" and \
                        el.value.args and _root_name(el.value.args[0]) in lib:
                    hits.append(f"line {node.lineno}")
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in ("setattr", "delattr") and node.args and \
                    (_root_name(node.args[0]) in lib or _lib_rooted(node.args[0], lib)):
                hits.append(f"{f.id}() (line {node.lineno})")
            elif isinstance(f, ast.Attribute) and f.attr in ("__setattr__", "__delattr__", "update", "setdefault",
                                                              "__setitem__") and \
                    (f.attr.startswith("__") or (isinstance(f.value, ast.Attribute) and f.value.attr == "__dict__")) \
                    and _root_name(f.value) in lib:
                hits.append(f"{f.attr}() (line {node.lineno})")
    return sorted(set(hits), key=lambda h: int(h.rsplit(" ", 1)[-1].rstrip(")")))


def audit_submission_sources(submission: str) -> list:
    """import_audit over adi_solver.py and every other .py file in the submission
    (a sibling module or package the solver imports is allowed and audited alike)."""
    local = {os.path.splitext(f)[0] for f in os.listdir(submission) if f.endswith(".py")} | \
            {d for d in os.listdir(submission) if os.path.isfile(os.path.join(submission, d, "__init__.py"))}
    out = []
    for root, dirs, files in os.walk(submission, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, submission)
            if not name.endswith(".py") or not os.path.isfile(path) or os.path.islink(path):
                continue
            if os.path.getsize(path) > SPEC["max_source_bytes"]:
                out.append(Check("static.imports", Status.FAIL, f"{rel} larger than "
                                 f"{SPEC['max_source_bytes']} bytes"))
                continue
            with open(path, "rb") as fh:
                source = fh.read().decode("utf-8", "replace")
            for c in import_audit(source, "static", local=local, filename=rel):
                out.append(dataclasses.replace(c, message=f"{rel}: {c.message}"))
    merged = {}
    for c in out:   # one record per id: the worst
        rank = {Status.FAIL: 3, Status.REVIEW: 2, Status.SKIP: 1, Status.INFO: 1, Status.PASS: 0}
        if c.id not in merged or rank[c.status] > rank[merged[c.id].status]:
            merged[c.id] = c
    return list(merged.values())


