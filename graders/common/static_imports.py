"""STATIC CHECKS: the modules an import statement names, and the allowlist's records (a part
of grade_fem.py, grade_adi.py; see CONTRIBUTING.md)."""
import ast
from graders.common.records import Check, Status
# -- end of source-tree preamble: the build keeps only what follows --
def import_statement_modules(node) -> list:
    """The modules an import statement names; none for a relative import (inside the
    submission's own package) or any other node."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level:
        return [node.module or ""]
    return []


def allowlist_records(check_prefix: str, bad: list, dynamic: list) -> list:
    """The import allowlist's records: disallowed imports FAIL; dynamic imports the static
    list cannot see are for REVIEW."""
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


