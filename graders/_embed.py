"""The two rules the build applies to every file of the tree, shared by tools/build_graders.py and
by the tree itself (so a child program read from the tree is the text a grader embeds).

- A file may open with a *source-tree preamble* (a docstring and the imports that let pyflakes and
  editors resolve its names in the tree), closed by the line PREAMBLE_END.  The build keeps only
  what follows that line.  A file without the line is kept whole.
- `NAME = embed("bench/child_x.py")` at the top level of a part stands for the child program's
  text as a string literal: the build writes `NAME = r'''` + that text + `'''` in its place.
"""
import os

PREAMBLE_END = "# -- end of source-tree preamble: the build keeps only what follows --\n"
TREE = os.path.dirname(os.path.abspath(__file__))


def body_of(text: str) -> str:
    """What a grader keeps of a tree file: the text after the preamble, or all of it."""
    head, sep, tail = text.partition(PREAMBLE_END)
    return tail if sep else head


def embed(path: str, tree: str = TREE) -> str:
    """A child program's text as the grader holds it (a leading newline, as the literal opens
    on the line after `r'''`)."""
    with open(os.path.join(tree, path), encoding="utf-8") as fh:
        return "\n" + body_of(fh.read())
