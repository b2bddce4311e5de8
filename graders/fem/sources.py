"""4. DEPENDENCY ALLOWLIST (a part of grade_fem.py; see CONTRIBUTING.md)."""
import ast
import os
from graders.common.guarded import parse_python
from graders.common.records import Check, Reject, Status, guarded
from graders.fem.spec import SPEC
from graders.fem.static import import_audit
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 4. DEPENDENCY ALLOWLIST (static; see STATIC CHECKS) and source loading
# =============================================================================
@guarded
def check_source(sub: str) -> list:
    p = os.path.join(sub, SPEC["solver_file"])
    size = os.path.getsize(p)
    if size > SPEC["max_source_bytes"]:
        raise Reject("static.source", f"{SPEC['solver_file']} is {size} bytes")
    try:
        with open(p, "rb") as fh:
            source = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Reject("static.source", f"{SPEC['solver_file']} unreadable: {exc}")
    tree = parse_python(source, SPEC["solver_file"], "static.syntax")
    out = import_audit(tree, "static")
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    has_solve = "solve" in names
    out.append(Check("static.defines_solve", Status.PASS if has_solve else Status.INFO,
                     "top-level solve defined" if has_solve else
                     "no top-level `def solve` found statically (checked again at run time)"))
    return out + introspection_audit(tree)


# The grader's instrumentation shares the child process with the submission: code that
# reaches the interpreter's internals could rewrite what it records.  Reached by any
# spelling: attribute syntax, getattr/setattr/hasattr/delattr with a computed or dunder
# name, vars/globals/locals, __dict__ / __getattribute__, a dunder name as a string
# (a dict key, attrgetter), operator.attrgetter/methodcaller, importlib.import_module of one of
# those modules or of a computed name.
# pdb/bdb: a debugger scripted through a StringIO goes "up" to the driver's frame and runs any
# statement in its globals with no flagged name spelled (red team round 5)
INTROSPECTION_MODULES = ("__main__", "gc", "inspect", "ctypes", "builtins", "pdb", "bdb")
INTROSPECTION_ATTRS = ("modules", "_getframe", "f_back", "f_globals", "f_locals", "f_builtins",
                       "tb_frame", "gi_frame", "cr_frame", "ag_frame", "get_objects",
                       "get_referrers", "get_referents", "_current_frames", "settrace", "setprofile")
HARMLESS_DUNDERS = ("__name__", "__doc__", "__init__", "__main__", "__version__", "__all__",
                    "__file__", "__future__", "__annotations__")
INTROSPECTION_BUILTINS = ("vars", "globals", "locals", "__builtins__", "__import__", "breakpoint")
ATTR_FUNCTIONS = ("getattr", "setattr", "hasattr", "delattr")
# modules whose star import binds a name above (sys.modules, sys.settrace, threading.settrace,
# operator.attrgetter): red team round 5 reached the recorder's state through
# `from sys import modules` and an attrgetter alias with nothing else flagged
STAR_REACHING = ("sys", "operator", "threading")


def _reaching_name(name: str) -> bool:
    """A name that reaches interpreter internals: a dunder other than the harmless few,
    or one of the frame / module-table attributes."""
    dunder = len(name) > 4 and name.startswith("__") and name.endswith("__")
    return (dunder and name not in HARMLESS_DUNDERS) or name in INTROSPECTION_ATTRS


def _imports_by_name(call) -> bool:
    """importlib.import_module("gc") (or of a computed name): the import statement's check
    would not see the module it loads."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name != "import_module":
        return False
    arg = call.args[0] if call.args else None
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return True
    return arg.value.split(".")[0] in INTROSPECTION_MODULES


def introspection_audit(tree) -> list:
    """REVIEW when the source reaches sys.modules, frames, gc, inspect, ctypes, a
    namespace or a dunder attribute, however spelled."""
    hits = []
    literal = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and isinstance(node.func, ast.Name) and node.func.id in ATTR_FUNCTIONS
               and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
               and isinstance(node.args[1].value, str) and not _reaching_name(node.args[1].value)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Call) and _imports_by_name(node):
            hits.append(f"import_module of an internal or computed name (line {line})")
        if isinstance(node, ast.Import):
            hits += [f"import {a.name} (line {line})" for a in node.names
                     if a.name.split(".")[0] in INTROSPECTION_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in \
                INTROSPECTION_MODULES and not node.level:
            hits.append(f"from {node.module} import ... (line {line})")
        elif isinstance(node, ast.ImportFrom) and not node.level and any(
                _reaching_name(a.name) or a.name in ("attrgetter", "methodcaller") or
                (a.name == "*" and (node.module or "").split(".")[0] in STAR_REACHING) for a in node.names):
            hits.append(f"from {node.module} import "       # `from sys import modules as M`:
                        + ", ".join(a.name for a in node.names) + f" (line {line})")   # any alias
        elif isinstance(node, ast.Attribute) and (_reaching_name(node.attr) or
                                                  node.attr in ("attrgetter", "methodcaller")):
            hits.append(f".{node.attr} (line {line})")
        elif isinstance(node, ast.Name) and node.id in INTROSPECTION_BUILTINS + \
                ("attrgetter", "methodcaller"):
            hits.append(f"{node.id} (line {line})")
        elif isinstance(node, ast.Name) and node.id in ATTR_FUNCTIONS and id(node) not in literal:
            hits.append(f"{node.id} with a computed or internal name (line {line})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                _reaching_name(node.value.strip()):
            hits.append(f"string {node.value.strip()!r} (line {line})")
    if not hits:
        return [Check("static.introspection", Status.PASS,
                      "no access to sys.modules, frames, namespaces, dunder attributes, gc, inspect "
                      "or ctypes")]
    return [Check("static.introspection", Status.REVIEW,
                  "reaches interpreter internals the grader's in-process instrumentation shares "
                  "(it could forge the recorded solves): " + ", ".join(hits[:6]), hits)]


