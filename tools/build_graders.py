#!/usr/bin/env python3
"""Build the five single-file graders from the source tree (the SQLite amalgamation model).

    python3 tools/build_graders.py            # write grade_<bench>.py for every graders/<bench>/PARTS
    python3 tools/build_graders.py --check    # exit 1 naming every committed grader that differs
    python3 tools/build_graders.py --map B    # which tree file and line each line of grade_B.py is

Each `graders/<bench>/PARTS` lists, top to bottom, the tree files whose texts are joined into
`grade_<bench>.py`.  Of each file the grader keeps what follows its source-tree preamble
(graders/_embed.py states both rules), and `NAME = embed("path")` becomes the child program's
text as a raw string literal.  Standard library only; the output depends on nothing but the tree.

The build refuses (exit 2, one line per fault) a tree with a listed file missing, a required
section banner missing or out of order, a name defined at the top level of two parts of one
grader, a preamble import the grader's header does not bind the same way, a contract name
(graders/common/bench.py) the grader does not define, or a child program that does not compile
or cannot be written as a raw literal.
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from graders._embed import PREAMBLE_END, body_of, json_literal  # noqa: E402  (the tree's own rules)

TREE = os.path.join(ROOT, "graders")
RULE = "# " + "=" * 77
# The banners every grader shows, in this order (CONVENTIONS.md "Inside a grader file").
REQUIRED_SECTIONS = ("SPEC", "RECORDS", "GUARDED INPUT", "GRADING", "VERDICT", "PLOTS",
                     "PRINTING AND CLI", "REPORTS")
HOIST = "# (imports: tools/build_graders.py writes here every standard-library import the parts declare)\n"
HOISTED = "(hoisted imports)"
EMBED_RE = re.compile(r'^([A-Za-z_]\w*) = embed\("([\w/.-]+\.py)"\)\n', re.MULTILINE)
EMBED_JSON_RE = re.compile(r'^([A-Za-z_]\w*) = embed_json\("([\w/.-]+\.json)"\)\n', re.MULTILINE)


class BuildError(Exception):
    """A fault in the tree: the message names the file."""


def read(rel: str) -> str:
    path = os.path.join(TREE, rel)
    if not os.path.isfile(path):
        raise BuildError(f"graders/{rel}: listed but missing")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def benches() -> list:
    return sorted(d for d in os.listdir(TREE) if os.path.isfile(os.path.join(TREE, d, "PARTS")))


def parts_of(bench: str) -> list:
    lines = read(f"{bench}/PARTS").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def json_document(name: str, path: str) -> str:
    """`NAME = json.loads(...)` for the repository's JSON file at path."""
    import json
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            document = json.load(fh)
        return json_literal(name, document, path)
    except (OSError, ValueError) as exc:
        raise BuildError(f"{path}: cannot be embedded as {name} ({exc})")


def preamble_lines(text: str) -> int:
    """How many lines of a tree file the build drops (its preamble, closing line included)."""
    return text[:len(text) - len(body_of(text))].count("\n")


def child_literal(name: str, rel: str) -> str:
    """`NAME = r'''<child text>'''` for the child program at graders/<rel>."""
    text = "\n" + body_of(read(rel))
    try:
        compile(text, f"graders/{rel}", "exec")
    except SyntaxError as exc:
        raise BuildError(f"graders/{rel}: child program does not compile: {exc.msg} (line {exc.lineno})")
    if "'''" in text or text.endswith("\\"):
        raise BuildError(f"graders/{rel}: cannot be embedded as r'''...''' (holds ''' or ends in a backslash)")
    return f"{name} = r'''{text}'''\n"


def top_level_defs(tree: ast.Module) -> set:
    names = set()

    def walk(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body)
                walk(node.orelse)
                for h in getattr(node, "handlers", ()):
                    walk(h.body)
                walk(getattr(node, "finalbody", ()))
    walk(tree.body)
    return names


def preamble_imports(rel: str, text: str, hoisted: dict, contract_uses: dict) -> None:
    """Collect a part's preamble imports: standard-library ones are hoisted into the grader's
    header (at HOIST); a graders.common.bench import is a contract use, checked once all parts
    are read; other graders.* imports only resolve names in the tree (the parts share one
    namespace in the grader)."""
    head, sep, _ = text.partition(PREAMBLE_END)
    if not sep:
        return
    for node in ast.parse(head).body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
        if module == "__future__":
            hoisted.update({f"__future__.{a.name}": f"from __future__ import {a.name}" for a in node.names})
            continue
        if module == "graders" or module.startswith("graders."):
            if module == "graders.common.bench":
                for a in node.names:
                    contract_uses.setdefault(a.asname or a.name, rel)
            continue
        for a in node.names:
            top = (module if isinstance(node, ast.ImportFrom) else a.name).split(".")[0]
            if top not in sys.stdlib_module_names:
                raise BuildError(f"graders/{rel}: the preamble imports {top!r}, not a standard-library "
                                 f"module; import it where it is used (graders import numpy lazily)")
            if isinstance(node, ast.ImportFrom):
                line = f"from {module} import {a.name}" + (f" as {a.asname}" if a.asname else "")
            else:
                line = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
            bound = a.asname or (a.name if isinstance(node, ast.ImportFrom) else a.name.split(".")[0])
            if hoisted.setdefault(bound, line) != line:
                raise BuildError(f"graders/{rel}: binds {bound!r} as `{line}`; another part has "
                                 f"`{hoisted[bound]}`")


def hoisted_block(hoisted: dict) -> str:
    """The header's imports, in the order the graders always had: `import x` lines, then `from`."""
    future = sorted(ln for ln in set(hoisted.values()) if ln.startswith("from __future__ "))
    lines = sorted(set(hoisted.values()) - set(future), key=lambda ln: (ln.startswith("from "), ln))
    return "".join(ln + "\n" for ln in future) + ("\n" if future else "") + "".join(ln + "\n" for ln in lines)


def section_titles(text: str) -> list:
    lines = text.splitlines()
    return [lines[i + 1][2:] for i in range(len(lines) - 2)
            if lines[i] == RULE and lines[i + 1].startswith("# ") and lines[i + 1] != RULE]


def build(bench: str, with_map: bool = False):
    """grade_<bench>.py's text (and, with_map, [(first output line, tree file, first tree line,
    line count)]; the hoisted imports and the banner are held by no tree file: HOIST, BANNER)."""
    parts = parts_of(bench)
    if not parts:
        raise BuildError(f"graders/{bench}/PARTS: lists no part")
    texts = {rel: read(rel) for rel in parts}
    contract_uses, hoisted = {}, {}
    for rel in parts:
        preamble_imports(rel, texts[rel], hoisted, contract_uses)
        if EMBED_JSON_RE.search(body_of(texts[rel])):
            hoisted.setdefault("json", "import json")          # the literal is json.loads(...)
    owner, chunks, line_map = {}, [], []

    def emit(piece: str, src: str, first: int) -> None:
        if piece:
            line_map.append((sum(c.count("\n") for c in chunks) + 1, src, first, piece.count("\n")))
            chunks.append(piece)

    for rel in parts:
        text = texts[rel]
        body = body_of(text)
        skipped = preamble_lines(text)
        try:
            tree = ast.parse(body)
        except SyntaxError as exc:
            raise BuildError(f"graders/{rel}: does not parse: {exc.msg} (line {exc.lineno + skipped})")
        for name in top_level_defs(tree):
            if name in owner:
                raise BuildError(f"grade_{bench}.py: {name!r} is defined in both graders/{owner[name]} "
                                 f"and graders/{rel}; one would shadow the other")
            owner[name] = rel
        pos = 0
        pattern = "|".join((EMBED_RE.pattern, EMBED_JSON_RE.pattern, "^" + re.escape(HOIST)))
        for m in re.finditer(pattern, body, re.MULTILINE):
            line = skipped + body[:m.start()].count("\n") + 1
            emit(body[pos:m.start()], rel, skipped + body[:pos].count("\n") + 1)
            if m.group(0) == HOIST:
                emit(hoisted_block(hoisted), HOISTED, line)
            elif m.group(3):
                emit(json_document(m.group(3), m.group(4)), rel, line)
            else:
                literal = child_literal(m.group(1), m.group(2))
                emit(literal.split("\n", 1)[0] + "\n", rel, line)      # NAME = r''' (its own line)
                emit(literal.split("\n", 1)[1], m.group(2), preamble_lines(read(m.group(2))) + 1)
            pos = m.end()
        emit(body[pos:], rel, skipped + body[:pos].count("\n") + 1)
    if HOISTED not in [src for _, src, _, _ in line_map]:
        raise BuildError(f"graders/{parts[0]}: has no line {HOIST.strip()!r} for the hoisted imports")
    promised = top_level_defs(ast.parse(read("common/bench.py")))
    unwritten = sorted(n for n in contract_uses if n not in promised)
    if unwritten:
        raise BuildError(f"graders/{contract_uses[unwritten[0]]}: imports {', '.join(unwritten)} from "
                         f"graders/common/bench.py, which does not declare it (the contract)")
    missing = sorted(n for n in contract_uses if n not in owner)
    if missing:
        raise BuildError(f"grade_{bench}.py: defines no {', '.join(missing)} (used by "
                         f"graders/{contract_uses[missing[0]]}; see graders/common/bench.py)")
    text = "".join(chunks)
    first, _, rest = text.partition("\n")
    banner = (f"# GENERATED by tools/build_graders.py from graders/{bench}/PARTS: edit the tree, "
              f"not this file (CONTRIBUTING.md).\n")
    text = (first + "\n" + banner + rest) if first.startswith("#!") else banner + text
    shift = [(o + 1, s, f, c) for o, s, f, c in line_map]      # the banner line moves the rest down
    if first.startswith("#!"):              # the shebang stays line 1; the banner becomes line 2
        o, s, f, c = line_map[0]
        shift[0:1] = [(1, s, f, 1), (3, s, f + 1, c - 1)]
    line_map = shift
    titles = section_titles(text)
    at = 0
    for want in REQUIRED_SECTIONS:
        hits = [i for i, t in enumerate(titles) if i >= at and (t == want or t.startswith((want + ":", want + " ")))]
        if not hits:
            raise BuildError(f"grade_{bench}.py: section {want!r} is missing or out of order "
                             f"(needed order: {', '.join(REQUIRED_SECTIONS)})")
        at = hits[0]
    try:
        compile(text, f"grade_{bench}.py", "exec")
    except SyntaxError as exc:
        raise BuildError(f"grade_{bench}.py: the joined text does not compile: {exc.msg} (line {exc.lineno})")
    return (text, line_map) if with_map else text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 when any differs")
    ap.add_argument("--map", metavar="BENCH", help="print each output line range's tree file and line")
    args = ap.parse_args(argv)
    try:
        if args.map:
            for out, src, first, count in build(args.map, with_map=True)[1]:
                print(f"{out}\t{count}\tgraders/{src}\t{first}", flush=True)
            return 0
        built = {f"grade_{b}.py": build(b) for b in benches()}
    except BuildError as exc:
        print(f"build_graders: {exc}", file=sys.stderr)
        return 2
    stale = []
    for name, text in built.items():
        path = os.path.join(ROOT, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        if args.check:
            stale.append(name)
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            print(f"wrote {name}")
    if stale:
        for name in stale:
            print(f"build_graders: {name} differs from what the tree builds; run tools/build_graders.py",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
