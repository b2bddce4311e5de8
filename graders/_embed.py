"""The two rules the build applies to every file of the tree, shared by tools/build_graders.py and
by the tree itself (so a child program read from the tree is the text a grader embeds).

- A file may open with a *source-tree preamble* (a docstring and the imports that let pyflakes and
  editors resolve its names in the tree), closed by the line PREAMBLE_END.  The build keeps only
  what follows that line.  A file without the line is kept whole.
- `NAME = embed("bench/child_x.py")` at the top level of a part stands for the child program's
  text as a string literal: the build writes `NAME = r'''` + that text + `'''` in its place.
- `NAME = embed_json("schemas/x.json")` (a path from the repository root) stands for that JSON
  document: the build writes `NAME = json.loads(<its compact text as raw-string pieces>)`.
"""
import os

PREAMBLE_END = "# -- end of source-tree preamble: the build keeps only what follows --\n"
TREE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TREE)


def body_of(text: str) -> str:
    """What a grader keeps of a tree file: the text after the preamble, or all of it."""
    head, sep, tail = text.partition(PREAMBLE_END)
    return tail if sep else head


def embed(path: str, tree: str = TREE) -> str:
    """A child program's text as the grader holds it (a leading newline, as the literal opens
    on the line after `r'''`)."""
    with open(os.path.join(tree, path), encoding="utf-8") as fh:
        return "\n" + body_of(fh.read())


def embed_json(path: str, root: str = ROOT):
    """The JSON document at the repository path, parsed (what the grader's literal holds)."""
    import json
    with open(os.path.join(root, path), encoding="utf-8") as fh:
        return json.load(fh)


def json_literal(name: str, document, source: str) -> str:
    """`NAME = json.loads(...)`: the compact text in raw-string pieces of at most 92 characters
    (a piece never ends in a backslash); ValueError if the text holds a single quote."""
    import json
    text = json.dumps(document, separators=(",", ":"))
    if "'" in text:
        raise ValueError("holds a single quote")
    pieces, i = [], 0
    while i < len(text):
        j = min(i + 92, len(text))
        while text[j - 1] == "\\" and j > i + 1:
            j -= 1
        pieces.append(text[i:j])
        i = j
    return (f"{name} = json.loads(    # {source}, the same document\n"
            + "\n".join(f"    r'{piece}'" for piece in pieces) + ")\n")
