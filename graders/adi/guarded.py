"""GUARDED INPUT (a part of grade_adi.py; see CONTRIBUTING.md)."""
import os
from graders.common.records import Reject
# -- end of source-tree preamble: the build keeps only what follows --
def load_npz_file(path: str, check_id: str, max_bytes: int, only=None) -> dict:
    """Load the arrays of an .npz (those named in `only`, when given; others are
    never decompressed) without pickles; raise Reject on anything odd."""
    import numpy as np
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            for key in data.files:
                if only is None or key in only:
                    arrays[key] = data[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise Reject(check_id, f"{os.path.basename(path)} holds a pickled (object) array; "
                                   "pickles are refused")
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {str(exc)[:120]}")
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, ...
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: "
                               f"{type(exc).__name__}: {str(exc)[:120]}")
    return arrays


