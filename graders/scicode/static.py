"""STATIC CHECKS (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import ast
from graders.common.guarded import parse_python
from graders.common.records import Reject
# -- end of source-tree preamble: the build keeps only what follows --
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


