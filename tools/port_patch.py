#!/usr/bin/env python3
"""Carry edits made to a generated grade_<bench>.py back into the source tree.

    python3 tools/port_patch.py PATCH          # PATCH: a unified diff of grade_*.py (git diff)
    python3 tools/port_patch.py --file grade_fem.py.edited --bench fem

With PATCH, each grader's hunks are applied (with `patch`, which tolerates moved lines) to a copy
of the grader the tree builds now; then the changed lines are written into the tree files they
came from (tools/build_graders.py --map), the graders are rebuilt, and the result is checked to be
exactly the patched text.  An edit that touches a line the tree does not hold (the build's banner,
the `NAME = r'''` line of an embedded child, its closing quotes) is refused and named.
Standard library only (plus the `patch` program for PATCH).
"""
from __future__ import annotations

import argparse
import bisect
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import build_graders  # noqa: E402


def prefer_previous(before: str, after: str) -> bool:
    """Lines inserted exactly between two tree files go to the end of the one before, unless the
    one after is an embedded child (its first lines) or the one before is shared and the one after
    is the benchmark's own (a benchmark's new function belongs to its own part, not to all)."""
    if "/child_" in after or before == build_graders.HOISTED:
        return False
    return not (before.startswith("common/") and not after.startswith("common/"))


def port_text(bench: str, new_text: str) -> list:
    """Write new_text's differences from the built grade_<bench>.py into the tree; the files changed."""
    old_text, line_map = build_graders.build(bench, with_map=True)
    old, new = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    starts = [o - 1 for o, _, _, _ in line_map]          # 0-based first output line of each chunk

    def chunk_of(i: int) -> int:
        return bisect.bisect_right(starts, i) - 1

    edits = {}          # tree file -> [(0-based line, lines removed, new lines)]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        spans = []
        i = i1
        while i < i2:               # split a removal at chunk boundaries
            k = chunk_of(i)
            end = min(i2, starts[k] + line_map[k][3])
            spans.append((k, i, max(end, i + 1)))
            i = max(end, i + 1)
        if not spans:               # a pure insertion before line i1 (or at the end)
            k = chunk_of(min(i1, len(old) - 1)) if i1 < len(old) else len(line_map) - 1
            at = i1 if i1 < len(old) else starts[k] + line_map[k][3]
            if at == starts[k] and k > 0 and prefer_previous(line_map[k - 1][1], line_map[k][1]):
                k -= 1              # between two parts: append to the one before (see below)
            spans = [(k, at, at)]
        for n, (k, a, b) in enumerate(spans):
            o, src, first, count = line_map[k]
            offset = a - starts[k]
            embeds_next = k + 1 < len(line_map) and "/child_" in line_map[k + 1][1] and count == 1
            if src == build_graders.HOISTED:
                raise SystemExit(f"port_patch: grade_{bench}.py line {a + 1}: a hoisted import; declare "
                                 f"it in the preamble of the part that uses it")
            touches = b > a or offset > 0           # removes lines, or inserts after the first
            if (offset >= count and b > a) or offset > count or (embeds_next and touches) \
                    or ("/child_" in src and offset + (b - a) > count - 1):
                raise SystemExit(f"port_patch: grade_{bench}.py line {a + 1}: the tree does not hold this "
                                 f"line (the build's banner, or an embedded child's opening or closing line)")
            edits.setdefault(src, []).append((first - 1 + offset, b - a, new[j1:j2] if n == 0 else []))
    for src, items in edits.items():
        path = os.path.join(build_graders.TREE, src)
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines(keepends=True)
        for at, removed, added in sorted(items, key=lambda e: e[0], reverse=True):
            lines[at:at + removed] = added
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(lines))
    rebuilt = build_graders.build(bench)
    if rebuilt != new_text:
        raise SystemExit(f"port_patch: after porting, the tree does not build grade_{bench}.py as edited; "
                         f"inspect `git diff graders/` (changed: {', '.join(sorted(edits))})")
    return sorted(edits)


def patched_graders(patch_path: str) -> dict:
    """bench -> the built grader with PATCH's hunks for it applied."""
    text = open(patch_path, encoding="utf-8").read()
    out = {}
    for bench in sorted(set(re.findall(r"^\+\+\+ b/grade_(\w+)\.py$", text, re.MULTILINE))):
        piece = re.search(rf"^diff --git a/grade_{bench}\.py b/grade_{bench}\.py\n.*?(?=^diff --git |\Z)",
                          text, re.MULTILINE | re.DOTALL)
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "g.py")
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(build_graders.build(bench))
            proc = subprocess.run(["patch", "--no-backup-if-mismatch", "-F", "3", target],
                                  input=piece.group(0) if piece else text, text=True,
                                  capture_output=True)
            if proc.returncode != 0:
                raise SystemExit(f"port_patch: grade_{bench}.py: patch did not apply:\n{proc.stdout}{proc.stderr}")
            out[bench] = open(target, encoding="utf-8").read()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("patch", nargs="?", help="unified diff of grade_*.py files")
    ap.add_argument("--file", help="an edited copy of a grader (with --bench)")
    ap.add_argument("--bench", help="the bench of --file")
    args = ap.parse_args(argv)
    if args.file:
        texts = {args.bench: open(args.file, encoding="utf-8").read()}
    elif args.patch:
        texts = patched_graders(args.patch)
    else:
        ap.error("give PATCH, or --file with --bench")
    for bench, text in texts.items():
        changed = port_text(bench, text)
        print(f"grade_{bench}.py: ported into {', '.join('graders/' + c for c in changed) or 'nothing'}")
    return build_graders.main([])


if __name__ == "__main__":
    sys.exit(main())
