"""GUARDED INPUT (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import math
import os
import re
from graders.common.records import Reject
from graders.engiai.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
def short(value, n: int = 40, *, as_repr: bool = False) -> str:
    """str(value)[:n] (repr with as_repr) of an untrusted value that never raises: a value
    nested too deeply for repr, or too large, prints as a placeholder."""
    try:
        return (repr(value) if as_repr else str(value))[:n]
    except (RecursionError, MemoryError, ValueError):
        return f"<{type(value).__name__} nested too deeply>"


def get_path(obj, keys: tuple, check_id: str, where: str = "trial.json"):
    """obj[k0][k1]... with a Reject naming the missing key path."""
    cur = obj
    for i, key in enumerate(keys):
        ok = (isinstance(cur, dict) and isinstance(key, str) and key in cur) or \
             (isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur))
        if not ok:
            dotted = ".".join(str(k) for k in keys[: i + 1])
            raise Reject(check_id, f"{where}: {dotted} missing or of the wrong type")
        cur = cur[key]
    return cur


def get_number(obj, keys: tuple, check_id: str, *, integer: bool = False,
               where: str = "trial.json") -> float:
    """A finite real number (bool, string, null, NaN and inf are refused)."""
    value = get_path(obj, keys, check_id, where)
    dotted = ".".join(str(k) for k in keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Reject(check_id, f"{where}: {dotted} must be a number, got {type(value).__name__}")
    if as_number(value) is None:
        raise Reject(check_id, f"{where}: {dotted} is not finite ({short(value)})")
    if integer and value != int(value):
        raise Reject(check_id, f"{where}: {dotted} must be an integer, got {value!r}")
    return int(value) if integer else float(value)


def as_number(value):
    """A finite float from an untrusted value, or None (bools and strings are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)             # a JSON integer beyond the float range overflows
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def first_nonfinite(arr):
    """(count, index of the first non-finite entry) of an array."""
    import numpy as np
    bad = ~np.isfinite(arr)
    n = int(bad.sum())
    return n, (tuple(int(i) for i in np.argwhere(bad)[0]) if n else None)


def check_array(arr, name: str, shape: tuple, check_id: str, ndim: int | None = None,
                density: bool = False):
    """numpy.testing order: dtype, shape, then non-finite positions, then (density) the domain
    [0, 1] within density_tol.  Returns float64."""
    import numpy as np
    if arr.dtype.kind not in "biuf":
        raise Reject(check_id, f"array {name} has dtype {arr.dtype}, expected a real number type")
    if shape is not None and tuple(arr.shape) != tuple(shape):
        raise Reject(check_id, f"array {name} has shape {tuple(arr.shape)}, expected {tuple(shape)}",
                     list(arr.shape), list(shape))
    if ndim is not None and arr.ndim != ndim:
        raise Reject(check_id, f"array {name} has {arr.ndim} dimensions, expected {ndim}",
                     list(arr.shape))
    out = np.asarray(arr, dtype=np.float64)
    n, idx = first_nonfinite(out)
    if n:
        raise Reject(check_id, f"array {name}: {n} non-finite value(s), first at index {idx}", n, 0)
    if density:
        lo, hi = SPEC["density_range"]
        tol = SPEC["density_tol"]
        bad = (out < lo - tol) | (out > hi + tol)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise Reject(check_id, f"array {name}: {int(bad.sum())} value(s) outside the density "
                                   f"domain [{lo:g}, {hi:g}] (first {out[idx]:.6g} at index {idx}): "
                                   "out of domain, not binarised", int(bad.sum()), 0)
    return out


def _h5_open(path: str, check_id: str):
    import h5py
    if os.path.islink(path):
        raise Reject(check_id, f"{os.path.basename(path)} is a symlink (refused)")
    if not os.path.isfile(path):
        raise Reject(check_id, f"{os.path.basename(path)} missing")
    size = os.path.getsize(path)
    if size > SPEC["max_h5_bytes"]:
        raise Reject(check_id, f"{os.path.basename(path)} is {size} bytes", size, SPEC["max_h5_bytes"])
    try:
        return h5py.File(path, "r")
    except Exception as exc:  # OSError for a non-HDF5 file, anything else h5py raises
        raise Reject(check_id, f"{os.path.basename(path)} unreadable: {type(exc).__name__}: "
                               f"{str(exc)[:120]}")


def _h5_get(fh, name: str, check_id: str):
    """fh[name] through hard links only: external and soft links (which could reach other
    files) are refused."""
    import h5py
    parts = [p for p in name.split("/") if p]
    cur = fh
    for i, part in enumerate(parts):
        if not isinstance(cur, h5py.Group):
            return None
        link = cur.get(part, getlink=True)
        if link is None:
            return None
        if not isinstance(link, h5py.HardLink):
            raise Reject(check_id, f"{os.path.basename(fh.filename)}: "
                                   f"{'/'.join(parts[:i + 1])} is a {type(link).__name__} (refused)")
        cur = cur[part]
    return cur


def read_h5_array(path: str, name: str, check_id: str, *, shape=None, ndim=None,
                  density: bool = False, budget=None):
    """One numeric dataset of an HDF5 file, checked (dtype, size, shape, finiteness; with
    density, the domain [0, 1]); its bytes are charged to the run's budget when given."""
    import h5py
    with _h5_open(path, check_id) as fh:
        obj = _h5_get(fh, name, check_id)
        if obj is None:
            raise Reject(check_id, f"{os.path.basename(path)}: dataset {name} missing")
        if not isinstance(obj, h5py.Dataset):
            raise Reject(check_id, f"{os.path.basename(path)}: {name} is not a dataset")
        if obj.is_virtual:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} is a virtual dataset (refused)")
        if obj.size > SPEC["max_array_elems"]:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} has {obj.size} elements",
                         obj.size, SPEC["max_array_elems"])
        if obj.dtype.kind not in "biuf":
            raise Reject(check_id, f"{os.path.basename(path)}: {name} has dtype {obj.dtype}, "
                                   "expected a real number type")
        if budget is not None:
            budget.charge(int(obj.size) * int(obj.dtype.itemsize), f"{os.path.basename(path)}:{name}",
                          check_id)
        try:
            arr = obj[()]
        except Exception as exc:
            raise Reject(check_id, f"{os.path.basename(path)}: {name} unreadable: {str(exc)[:120]}")
    return check_array(arr, name, shape, check_id, ndim, density)


def read_h5_attrs(path: str, group: str, check_id: str):
    """Numeric scalar attributes of an HDF5 group, or None when the group is absent."""
    import h5py
    with _h5_open(path, check_id) as fh:
        obj = _h5_get(fh, group, check_id)
        if obj is None:
            return None
        if not isinstance(obj, h5py.Group):
            raise Reject(check_id, f"{os.path.basename(path)}: {group} is not a group")
        out = {}
        for key in obj.attrs:
            try:
                val = obj.attrs[key]
            except Exception:
                continue
            num = as_number(val.item() if hasattr(val, "item") and getattr(val, "ndim", 1) == 0
                            else val)
            if num is not None:
                out[key] = num
        return out


def read_stl(path: str, check_id: str, budget=None):
    """Triangles (n, 3, 3) float64 of a binary or ASCII STL; Reject when malformed (or past
    the run's read budget)."""
    import numpy as np
    name = os.path.basename(path)
    if not os.path.isfile(path) or os.path.islink(path):
        raise Reject(check_id, f"{name} missing")
    size = os.path.getsize(path)
    if size > SPEC["max_stl_bytes"]:
        raise Reject(check_id, f"{name} is {size} bytes", size, SPEC["max_stl_bytes"])
    if budget is not None:
        budget.charge(size, name, check_id)
    with open(path, "rb") as fh:
        data = fh.read()
    declared = int(np.frombuffer(data, dtype="<u4", count=1, offset=80)[0]) if size >= 84 else None
    if declared is not None and size == 84 + 50 * declared:
        # binary: 80-byte header, facet count, 50 bytes per facet (the header may say "solid")
        rec = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
        tris = np.frombuffer(data, dtype=rec, count=declared, offset=84)["v"].astype(np.float64)
    else:
        why = (f"its header declares {declared} facets (84 + 50*{declared} bytes) but it has "
               f"{size} bytes" if declared is not None else f"{size} bytes, shorter than a header")
        if not data.isascii():
            raise Reject(check_id, f"{name}: neither a binary STL ({why}) nor ASCII text")
        tris = _parse_ascii_stl(data, name, check_id, why)
    if tris.shape[0] == 0:
        raise Reject(check_id, f"{name}: no triangles")
    n_bad, idx = first_nonfinite(tris)
    if n_bad:
        raise Reject(check_id, f"{name}: {n_bad} non-finite vertex coordinate(s), first at {idx}")
    return tris


# ASCII STL, matched one facet at a time (no token list: a 64 MiB file stays small in memory,
# and no nested repetition, so the regex engine keeps no per-token state).  Keywords are
# case-insensitive and any whitespace separates tokens.  Between facets only whitespace or a
# run of tokens opened by solid/endsolid (the solid's name) may appear; a facet keyword there
# means a malformed facet.
_STL_NUM = rb"\s+(\S+)"
_STL_FACET = re.compile(
    rb"(?<!\S)facet\s+normal\s+\S+\s+\S+\s+\S+\s+outer\s+loop"
    + (rb"\s+vertex" + _STL_NUM * 3) * 3 + rb"\s+endloop\s+endfacet(?!\S)", re.IGNORECASE)
_STL_TOKEN = re.compile(rb"\S+")
_STL_SOLID = re.compile(rb"(?:end)?solid", re.IGNORECASE)
_STL_KEYWORD = re.compile(rb"(?<!\S)(?:facet|endfacet|normal|outer|loop|endloop|vertex)(?!\S)",
                          re.IGNORECASE)


def _stl_gap_error(data: bytes, start: int, end: int):
    """None when data[start:end] may sit between facets, else (byte offset, token) of the fault."""
    first = _STL_TOKEN.search(data, start, end)
    if first is None:
        return None
    if not _STL_SOLID.fullmatch(first.group()):
        return first.start(), first.group()
    kw = _STL_KEYWORD.search(data, first.end(), end)
    return None if kw is None else (kw.start(), kw.group())


def _parse_ascii_stl(data: bytes, name: str, check_id: str, not_binary: str):
    import array
    import numpy as np
    first = _STL_TOKEN.search(data)
    if first is None or first.group().lower() != b"solid":
        raise Reject(check_id, f"{name}: neither a binary STL ({not_binary}) nor an ASCII STL "
                               "(no leading 'solid')")
    coords, pos, fault = array.array("d"), 0, None
    for m in _STL_FACET.finditer(data):
        fault = _stl_gap_error(data, pos, m.start())
        if fault:
            break
        try:
            coords.extend(float(g) for g in m.groups())
        except ValueError:
            bad = next(g for g in m.groups() if not _is_float(g))
            raise Reject(check_id, f"{name}: malformed ASCII STL: vertex coordinate "
                                   f"{bad[:20].decode()!r} near byte {m.start()}")
        pos = m.end()
    fault = fault or _stl_gap_error(data, pos, len(data))
    if fault:
        raise Reject(check_id, f"{name}: malformed ASCII STL: unexpected {fault[1][:20].decode()!r} "
                               f"near byte {fault[0]} (expected 'facet normal nx ny nz outer loop', "
                               "three 'vertex x y z', 'endloop endfacet', or 'endsolid')")
    return np.frombuffer(coords, dtype=np.float64).reshape(-1, 3, 3).copy()


def _is_float(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def safe_member(trial_dir: str, name, check_id: str) -> str:
    """A plain file name inside the trial folder (no separators, no '..', no symlink)."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or \
            "\\" in name or "\x00" in name:
        raise Reject(check_id, f"artefact name {short(name, 60, as_repr=True)} is not a plain file name in the trial folder")
    path = os.path.join(trial_dir, name)
    if os.path.islink(path):
        raise Reject(check_id, f"artefact {name} is a symlink (refused)")
    return path


