#!/usr/bin/env python3
"""Rewrite each grader's REPORT_SCHEMA (graders/<bench>/cli.py) from schemas/grade_<bench>.report.schema.json.

    python3 tools/embed_schemas.py           # rewrite the literals, then run tools/build_graders.py
    python3 tools/embed_schemas.py --check   # exit 1 naming every grader whose literal differs

A grader checks reports against its schema itself (--merge, --out) and, copied alone, cannot read
schemas/, so it carries the schema as a literal: compact JSON in raw-string pieces of 92
characters (a piece never ends in a backslash; the schemas hold no single quote).
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHES = ("fem", "adi", "engiai", "modchallenge", "scicode")
START = "REPORT_SCHEMA = json.loads("


def literal(bench: str) -> str:
    with open(os.path.join(ROOT, "schemas", f"grade_{bench}.report.schema.json")) as fh:
        text = json.dumps(json.load(fh), separators=(",", ":"))
    if "'" in text:
        raise SystemExit(f"schemas/grade_{bench}.report.schema.json holds a single quote")
    pieces, i = [], 0
    while i < len(text):
        j = min(i + 92, len(text))
        while text[j - 1] == "\\":
            j -= 1
        pieces.append(text[i:j])
        i = j
    return (f"{START}    # schemas/grade_{bench}.report.schema.json, the same document\n"
            + "\n".join(f"    r'{p}'" for p in pieces) + ")\n")


def main(argv) -> int:
    check, stale = "--check" in argv, []
    for bench in BENCHES:
        path = os.path.join(ROOT, "graders", bench, "cli.py")
        with open(path) as fh:
            text = fh.read()
        start = text.index(START)
        end = start
        while not text[end:text.index("\n", end)].endswith("')"):
            end = text.index("\n", end) + 1
        end = text.index("\n", end) + 1
        new = text[:start] + literal(bench) + text[end:]
        if new != text:
            stale.append(path)
            if not check:
                with open(path, "w") as fh:
                    fh.write(new)
    for path in stale:
        print(f"{'differs' if check else 'rewrote'}: {os.path.relpath(path, ROOT)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
