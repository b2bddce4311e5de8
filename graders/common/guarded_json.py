"""GUARDED INPUT: one JSON file, read whole or refused (a part of grade_fem.py, grade_adi.py,
grade_engiai.py, grade_modchallenge.py; see CONTRIBUTING.md)."""
import json
import os
from graders.common.records import Reject
# -- end of source-tree preamble: the build keeps only what follows --
def read_json_file(path: str, check_id: str, max_bytes: int):
    """Parse a JSON file; raise Reject on missing, oversized, non-UTF-8 or malformed.  A leading
    UTF-8 byte order mark (Windows tools write one; RFC 8259 lets a parser ignore it) is
    skipped: it changes no value."""
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8-sig")
        return json.loads(text, parse_constant=lambda c: float(c))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Reject(check_id, f"{os.path.basename(path)} is not valid JSON: {str(exc)[:120]}")
    except (RecursionError, MemoryError) as exc:
        raise Reject(check_id, f"{os.path.basename(path)} cannot be decoded ({type(exc).__name__}: "
                     "nested too deeply or too large)")
    except OSError as exc:
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {exc}")


