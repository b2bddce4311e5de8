#!/usr/bin/env python3
"""Rewrite the source-tree preamble imports of parts from what their code uses.

    python3 tools/tree_imports.py graders/fem/cli.py ...   # rewrite these parts' preambles
    python3 tools/tree_imports.py --all                    # every part listed in a PARTS file

A part's preamble (graders/_embed.py) imports what its code uses: standard-library modules (the
build hoists them into the grader's header) and names other parts define (`from graders.<x>
import name`; a common part takes a benchmark's names from graders/common/bench.py, the
contract).  This tool works that list out with pyflakes (a test dependency) and rewrites it,
keeping the preamble's docstring.  Child programs (child_*.py) are not parts: edit their
preambles by hand.  A name it cannot place is printed, and the part is left as it was.
"""
from __future__ import annotations

import ast
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import build_graders  # noqa: E402
from build_graders import PREAMBLE_END, body_of, read, top_level_defs  # noqa: E402


def undefined_names(body: str, rel: str) -> set:
    from pyflakes import api, reporter
    out = io.StringIO()
    api.check(body, rel, reporter.Reporter(out, out))
    return set(re.findall(r"undefined name '([^']+)'", out.getvalue()))


def import_lines(text: str) -> dict:
    """bound name -> import line, of a part's preamble (standard library and __future__ only)."""
    head, sep, _ = text.partition(PREAMBLE_END)
    out = {}
    for node in ast.parse(head if sep else "").body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
        elif isinstance(node, ast.ImportFrom) and not node.module.startswith("graders"):
            for a in node.names:
                out[a.asname or a.name] = f"from {node.module} import {a.name}" + (f" as {a.asname}" if a.asname else "")
    return out


def module_of(rel: str) -> str:
    return "graders." + rel[:-3].replace("/", ".")


def preamble(doc: str, lines: list, tree_names: dict) -> str:
    future = sorted(ln for ln in lines if ln.startswith("from __future__"))
    std = sorted(set(lines) - set(future), key=lambda ln: (ln.startswith("from "), ln))
    out = [doc] + future + ([""] if future else []) + std
    for mod in sorted(tree_names):
        names = sorted(tree_names[mod])
        line = f"from {mod} import " + ", ".join(names)
        if len(line) > 100:
            line, cur = "", f"from {mod} import ("
            for n in names:
                if len(cur) + len(n) + 2 > 100:
                    line += cur.rstrip() + "\n"
                    cur = "    "
                cur += n + ", "
            line += cur[:-2] + ")"
        out.append(line)
    return "\n".join(out) + "\n" + PREAMBLE_END


def rewrite(rel: str, graders: dict, defs: dict, hoisted: dict) -> bool:
    text = read(rel)
    body = body_of(text)
    head = text[:len(text) - len(body)]
    doc_node = ast.parse(head).body[:1] if head else []
    if not (doc_node and isinstance(doc_node[0], ast.Expr) and isinstance(doc_node[0].value, ast.Constant)):
        print(f"{rel}: no preamble docstring; add one first", file=sys.stderr)
        return False
    doc = ast.get_source_segment(head, doc_node[0])
    users = [b for b, parts in graders.items() if rel in parts]
    lines, tree_names, lost = set(), {}, []
    keep_future = [ln for ln in import_lines(text).values() if ln.startswith("from __future__")]
    lines.update(keep_future)
    for name in sorted(undefined_names(body, rel)):
        placed = False
        if name in ("embed", "embed_json"):     # the build's stand-ins for a child's text, a JSON file
            tree_names.setdefault("graders._embed", set()).add(name)
            continue
        for b in users:
            owner = next((q for q in graders[b] if q != rel and name in defs[q]), None)
            if owner:
                mod = ("graders.common.bench" if rel.startswith("common/") and not owner.startswith("common/")
                       else module_of(owner))
                tree_names.setdefault(mod, set()).add(name)
                placed = True
                break
            if name in hoisted[b]:
                lines.add(hoisted[b][name])
                placed = True
                break
        if not placed and name in sys.stdlib_module_names:
            lines.add(f"import {name}")
            placed = True
        if not placed:
            lost.append(name)
    if lost:
        print(f"{rel}: cannot place {', '.join(lost)}; left as it was", file=sys.stderr)
        return False
    new = preamble(doc, sorted(lines), tree_names) + body
    if new != text:
        with open(os.path.join(build_graders.TREE, rel), "w", encoding="utf-8") as fh:
            fh.write(new)
        print(f"rewrote graders/{rel}")
    return True


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    graders = {b: build_graders.parts_of(b) for b in build_graders.benches()}
    every = sorted({p for parts in graders.values() for p in parts})
    defs = {p: top_level_defs(ast.parse(body_of(read(p)))) for p in every}
    hoisted = {b: {k: v for p in parts for k, v in import_lines(read(p)).items()} for b, parts in graders.items()}
    targets = every if argv == ["--all"] else [os.path.relpath(os.path.abspath(a), build_graders.TREE) for a in argv]
    if not targets:
        print(__doc__, file=sys.stderr)
        return 2
    ok = all([rewrite(t, graders, defs, hoisted) for t in targets])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
