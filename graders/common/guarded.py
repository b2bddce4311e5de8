"""GUARDED INPUT: parsing untrusted Python source (a part of every grader; see CONTRIBUTING.md)."""
import ast
from graders.common.records import Reject
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# GUARDED INPUT: untrusted files and values
# =============================================================================
def parse_python(source, filename: str, check_id: str):
    """ast.parse that never escapes: a syntax error, or a source nested too deeply or too large
    for the parser (RecursionError, MemoryError), becomes a Reject (a clean FAIL record)."""
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise Reject(check_id, f"{filename}: syntax error at line {exc.lineno}: {exc.msg}")
    except (RecursionError, MemoryError, ValueError) as exc:
        raise Reject(check_id, f"{filename}: cannot be parsed ({type(exc).__name__}: nested too "
                     "deeply or too large)")


