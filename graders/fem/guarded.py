"""GUARDED INPUT (a part of grade_fem.py; see CONTRIBUTING.md)."""
import math
import os
from graders.common.records import Reject
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
def load_npz_file(path: str, check_id: str, max_bytes: int) -> dict:
    """Load every array of an .npz without pickles; raise Reject on anything odd."""
    import numpy as np
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, max_bytes)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            total = 0
            for key in data.files:      # headers first: a small file can claim a huge array
                with data.zip.open(key + ".npy") as fp:
                    version = np.lib.format.read_magic(fp)
                    shape = (np.lib.format.read_array_header_1_0 if version == (1, 0) else
                             np.lib.format.read_array_header_2_0)(fp)[0]
                total += math.prod(shape)
                if total > SPEC["max_npz_elements"]:
                    raise Reject(check_id, f"{os.path.basename(path)} declares more than "
                                           f"{SPEC['max_npz_elements']} array elements", total,
                                 SPEC["max_npz_elements"])
            for key in data.files:
                arrays[key] = data[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise Reject(check_id, f"{os.path.basename(path)} holds a pickled (object) array; "
                                   "pickles are refused")
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {str(exc)[:120]}")
    except Reject:
        raise
    except Exception as exc:  # zipfile.BadZipFile, OSError, EOFError, KeyError, ...
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: "
                               f"{type(exc).__name__}: {str(exc)[:120]}")
    return arrays


