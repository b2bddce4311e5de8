"""STATIC CHECKS (a part of grade_fem.py; see CONTRIBUTING.md)."""
import ast
import sys
from graders.common.guarded import parse_python
from graders.common.records import Reject
from graders.common.static_imports import allowlist_records, import_statement_modules
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# STATIC CHECKS (import allowlist)
# =============================================================================
ALLOWED_THIRD_PARTY = ("numpy", "scipy")


def import_audit(tree, check_prefix: str) -> list:
    """AST pass (over a tree, or source text parsed with parse_python): every import
    outside stdlib + numpy + scipy fails; importlib / __import__ / exec / eval are
    flagged for review (the allowlist is static)."""
    if isinstance(tree, str):
        try:
            tree = parse_python(tree, SPEC["solver_file"], f"{check_prefix}.syntax")
        except Reject as exc:
            return [exc.check]
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
    bad, dynamic = [], []
    for node in ast.walk(tree):
        for name in import_statement_modules(node):
            top = name.split(".")[0]
            if top in ("importlib",):
                dynamic.append(f"import {name} (line {node.lineno})")
            elif top not in stdlib and top not in ALLOWED_THIRD_PARTY:
                bad.append(f"{name} (line {node.lineno})")
        if isinstance(node, ast.Call):
            fname = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if fname in ("__import__", "import_module", "exec", "eval", "compile"):
                dynamic.append(f"{fname}() (line {node.lineno})")
    out = allowlist_records(check_prefix, bad, dynamic)
    return out


