"""COMPARISON RECORDS (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import ast
import math
import sys
from graders.scicode.shim import SHIM_CMP
from graders.scicode.spec import SPEC
from graders.scicode.target_plan import CasePlan, Site, TARGET_METHODS
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# COMPARISON RECORDS: decoded and judged in the grader's own process
# =============================================================================
# A record is JSON the step's process wrote: plain values, numpy arrays as .npy bytes
# (np.load with allow_pickle=False), tagged tuples/dicts/sets/sparse matrices, and
# {"__target__": [case, path]} where the test passed a target stand-in.  Decoding never
# runs code of the record's choosing and never raises anything but RecordError.
class RecordError(Exception):
    pass


class Placeholder:
    """Where a record held a target stand-in."""
    __slots__ = ("case", "path")

    def __init__(self, case, path):
        self.case, self.path = case, path

    def __repr__(self):
        return f"<target of case {self.case + 1}{''.join(f'[{p[1]!r}]' for p in self.path)}>"


class Opaque:
    """A computed value the step's process could not express as data (a generation's object):
    it equals nothing, and numpy cannot compare it."""
    __slots__ = ("name",)
    __array_ufunc__ = None

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = object.__hash__

    def __array__(self, *args, **kwargs):
        raise TypeError(f"a {self.name} object cannot be compared outside the step's process")

    def __repr__(self):
        return f"<{self.name} object>"


def _npy(text: str):
    import base64
    import io
    import numpy
    try:
        return numpy.load(io.BytesIO(base64.b64decode(text.encode("ascii"), validate=True)),
                          allow_pickle=False)
    except Exception as exc:
        raise RecordError(f"bad array data ({type(exc).__name__})")


def decode_value(obj, depth: int = 0):
    """A record value -> Python/numpy/scipy data.  RecordError on anything unexpected."""
    if depth > 200:
        raise RecordError("nested too deeply")
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode_value(v, depth + 1) for v in obj]
    if not isinstance(obj, dict) or len(obj) != 1:
        raise RecordError("not a tagged value")
    (tag, v), = obj.items()
    if tag == "__tuple__" and isinstance(v, list):
        return tuple(decode_value(x, depth + 1) for x in v)
    if tag in ("__set__", "__frozenset__") and isinstance(v, list):
        items = [decode_value(x, depth + 1) for x in v]
        try:
            return set(items) if tag == "__set__" else frozenset(items)
        except TypeError:
            raise RecordError("unhashable set member")
    if tag == "__dict__" and isinstance(v, list):
        out = {}
        for kv in v:
            if not isinstance(kv, list) or len(kv) != 2:
                raise RecordError("bad dict item")
            key = decode_value(kv[0], depth + 1)
            try:
                out[key] = decode_value(kv[1], depth + 1)
            except TypeError:
                raise RecordError("unhashable dict key")
        return out
    if tag == "__float__" and v in ("nan", "inf", "-inf"):
        return float(v)
    if tag == "__complex__" and isinstance(v, list) and len(v) == 2:
        return complex(decode_value(v[0], depth + 1), decode_value(v[1], depth + 1))
    if tag == "__bytes__" and isinstance(v, str):
        import base64
        try:
            return base64.b64decode(v.encode("ascii"), validate=True)
        except Exception:
            raise RecordError("bad bytes")
    if tag == "__array__" and isinstance(v, str):
        return _npy(v)
    if tag == "__npscalar__" and isinstance(v, str):
        arr = _npy(v)
        if arr.ndim != 0:
            raise RecordError("a numpy scalar that is not 0-d")
        return arr[()]
    if tag == "__objarray__" and isinstance(v, list) and len(v) == 2 and isinstance(v[0], list):
        import numpy
        shape, items = v
        if not all(isinstance(n, int) and n >= 0 for n in shape) or not isinstance(items, list) \
                or math.prod(shape) != len(items):
            raise RecordError("bad object array")
        arr = numpy.empty(len(items), dtype=object)
        for k, x in enumerate(items):
            arr[k] = decode_value(x, depth + 1)
        return arr.reshape(shape)
    if tag == "__sparse__" and isinstance(v, dict):
        import numpy
        import scipy.sparse
        try:
            fmt, shape, as_array = v["format"], tuple(v["shape"]), bool(v["array"])
            data, row, col = (_npy(v[k]) for k in ("data", "row", "col"))
            if fmt not in ("csr", "csc", "coo", "bsr", "lil", "dok", "dia") or len(shape) != 2 or \
                    not all(isinstance(n, int) and 0 <= n < 1 << 40 for n in shape):
                raise ValueError("format/shape")
            if shape[0] * shape[1] > SPEC["max_broadcast"]:     # the comparators call toarray()
                raise RecordError(f"a sparse matrix of shape {shape} is too large to compare")
            cls = scipy.sparse.coo_array if as_array else scipy.sparse.coo_matrix
            m = cls((data, (row.astype(numpy.int64), col.astype(numpy.int64))), shape=shape)
            return m.asformat(fmt)
        except RecordError:
            raise
        except Exception as exc:
            raise RecordError(f"bad sparse matrix ({type(exc).__name__})")
    if tag == "__target__" and isinstance(v, list) and len(v) == 2 and isinstance(v[0], int) \
            and isinstance(v[1], list):
        return Placeholder(v[0], v[1])
    if tag == "__opaque__" and isinstance(v, str):
        return Opaque(v[:80])
    raise RecordError(f"unknown tag {str(tag)[:30]!r}")


def _has_placeholder(value, depth=0) -> bool:
    if isinstance(value, Placeholder):
        return True
    if depth > 200:
        return True
    if isinstance(value, dict):
        return any(_has_placeholder(k, depth + 1) or _has_placeholder(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_placeholder(v, depth + 1) for v in value)
    if type(value).__name__ == "ndarray" and value.dtype == object:
        return any(_has_placeholder(v, depth + 1) for v in value.ravel())
    return False


def _matches(tse, value) -> bool:
    """The record holds, where the plan has a target expression, exactly its stand-ins."""
    if tse[0] == "path":
        return isinstance(value, Placeholder) and value.case == tse[1] and value.path == tse[2]
    kind = tuple if tse[0] == "tuple" else list
    return type(value) is kind and len(value) == len(tse[1]) and all(_matches(t, v) for t, v in zip(tse[1], value))


def resolve_target(tse, targets: dict):
    """The real value of a target expression of the plan (the grader's targets; the method
    names are the plan's whitelist)."""
    if tse[0] != "path":
        parts = [resolve_target(t, targets) for t in tse[1]]
        return tuple(parts) if tse[0] == "tuple" else parts
    value = targets[tse[1]]
    for step in tse[2]:
        if step[0] == "i":
            value = value[step[1]]
        elif step[0] == "u":
            value = list(value)[step[1]]
        elif step[0] == "m" and step[1] in TARGET_METHODS:
            value = getattr(value, step[1])()
        else:
            raise RecordError("bad target path")
    return value


class _RefusingNumpy:
    """numpy as the grader's comparisons see it: numpy's own answer, except that allclose /
    isclose refuse a vacuous pass (one operand empty, the other not; numpy says True) and a
    comparison whose broadcast would be absurdly larger than both operands."""

    def __init__(self):
        import numpy
        self._np = numpy

    def __getattr__(self, name):
        return getattr(self._np, name)

    def _guard(self, a, b):
        np = self._np
        sa, sb = np.shape(a), np.shape(b)
        if (0 in sa) != (0 in sb):
            return "vacuous"
        size = math.prod(np.broadcast_shapes(sa, sb))
        if size > max(math.prod(sa), math.prod(sb), 1) and size > SPEC["max_broadcast"]:
            return "broadcast"
        return None

    def allclose(self, a, b, *args, **kwargs):
        if self._guard(a, b):
            return False
        return self._np.allclose(a, b, *args, **kwargs)

    def isclose(self, a, b, *args, **kwargs):
        if self._guard(a, b):
            return self._np.zeros(1, dtype=bool)
        return self._np.isclose(a, b, *args, **kwargs)


def _grader_cmp():
    """The shim's comparators in the grader's process, over the refusing numpy (its own copy:
    shim_module("cmp") keeps numpy's answers)."""
    import types
    key = "_grade_scicode_grader_cmp"
    if key not in sys.modules:
        mod = types.ModuleType(key)
        exec(compile(SHIM_CMP, "<grader cmp>", "exec"), mod.__dict__)
        mod.np = _RefusingNumpy()
        sys.modules[key] = mod
    return sys.modules[key]


def helper_namespace(deps: str, cases: list, upto: int) -> dict:
    """The test's own functions (its text: defs of cases 1..upto) with the problem's import
    lines, for the helpers a site calls with the target.  Test text only: no generated code."""
    ns = {"__name__": "scicode_helpers", "__builtins__": __builtins__}
    for line in deps.splitlines():
        try:
            exec(compile(line.strip(), "<deps>", "exec"), ns)
        except Exception:
            pass
    for text in cases[:upto + 1]:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                try:
                    exec(compile(ast.Module(body=[node], type_ignores=[]), "<test helper>", "exec"), ns)
                except Exception:
                    pass
    return ns


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def evaluate_site(site: Site, record, targets: dict, helpers) -> tuple:
    """(passed, reason) of one comparison: the record checked against the plan, then the
    comparison made here with the official semantics."""
    if not isinstance(record, dict):
        raise RecordError("not a record")
    if site.kind in ("==", "!="):
        if record.get("kind") != site.kind or set(record) != {"kind", "target", "other"}:
            raise RecordError(f"expected a `{site.kind}` record for `{site.text[:60]}`")
        tslot = next(s for s in site.slots if s[0] == "target")
        if not _matches(tslot[1], decode_value(record["target"])):
            raise RecordError(f"`{site.text[:60]}` recorded another target part")
        other = decode_value(record["other"])
        if _has_placeholder(other):
            raise RecordError(f"`{site.text[:60]}`: the computed side holds the target stand-in")
        vals = [resolve_target(s[1], targets) if s[0] == "target" else s[1] if s[0] == "const" else other
                for s in site.slots]
        try:
            if _RefusingNumpy()._guard(*vals) == "broadcast":
                return False, f"`{site.text[:60]}`: a broadcast far larger than both sides"
        except Exception:
            pass            # not array-like: Python's own `==`
        try:
            res = vals[0] == vals[1] if site.kind == "==" else vals[0] != vals[1]
            ok = bool(res)
        except Exception as exc:
            return False, f"{type(exc).__name__}: {str(exc)[:120]}"
        return ok, "" if ok else f"`{site.text[:80]}` is False (computed {_short(other)})"
    if record.get("kind") != site.kind or set(record) != {"kind", "args", "kwargs"} or \
            not isinstance(record["args"], list) or not isinstance(record["kwargs"], dict):
        raise RecordError(f"expected a {site.kind} record for `{site.text[:60]}`")
    if len(record["args"]) != len(site.slots) or set(record["kwargs"]) != set(site.kwargs):
        raise RecordError(f"`{site.text[:60]}` recorded other arguments")
    args, kwargs, computed = [], {}, []
    for slot, raw in list(zip(site.slots, record["args"])) + \
            [(site.kwargs[k], record["kwargs"][k]) for k in sorted(site.kwargs)]:
        value = decode_value(raw)
        if slot[0] == "target":
            if not _matches(slot[1], value):
                raise RecordError(f"`{site.text[:60]}` recorded another target part")
            value = resolve_target(slot[1], targets)
        elif _has_placeholder(value):
            raise RecordError(f"`{site.text[:60]}`: the computed side holds the target stand-in")
        elif slot[0] == "const":
            value = slot[1]             # the test's literal, not what the record says
        else:
            computed.append(value)
        args.append(value)
    n = len(site.slots)
    args, kwargs = args[:n], dict(zip(sorted(site.kwargs), args[n:]))
    group, _, name = site.kind.partition(".")
    if group == "numpy":
        fn = getattr(_RefusingNumpy(), name)
    elif group == "cmp":
        fn = getattr(_grader_cmp(), name)
    else:
        fn = helpers().get(name)
        if fn is None:
            return False, f"test helper {name} could not be defined in the grader"
    try:
        ok = bool(fn(*args, **kwargs))
    except Exception as exc:
        return False, f"{site.kind}: {type(exc).__name__}: {str(exc)[:120]}"
    return ok, "" if ok else (f"`{site.text[:80]}` is False" +
                              (f" (computed {_short(computed[0])})" if computed else ""))


def evaluate_case(plan: CasePlan, records, targets: dict, helpers) -> dict | None:
    """None when every comparison of the case holds; else the case's failure."""
    if plan.error:
        return {"type": "UnsupportedTargetUse", "message": plan.error, "origin": "grader"}
    try:
        if not isinstance(records, list):
            raise RecordError("no records")
        if len(records) != len(plan.sites):
            raise RecordError(f"{len(records)} comparison record(s) with the target, the test "
                              f"makes {len(plan.sites)}")
        for case, path, n in plan.unpacks:      # `a, b = target` must unpack the real target
            try:
                got = len(list(resolve_target(["path", case, path], targets)))
            except Exception as exc:
                return {"type": "TypeError", "message": f"cannot unpack the target: {exc}"[:200],
                        "origin": "test"}
            if got != n:
                return {"type": "ValueError", "message": f"the target unpacks to {got} values, the "
                        f"test names {n}", "origin": "test"}
        for site, rec in zip(plan.sites, records):
            ok, why = evaluate_site(site, rec, targets, helpers)
            if not ok:      # the test's own assertion: signature "AssertionError", as upstream's
                return {"type": "AssertionError", "message": "", "detail": why, "origin": "test"}
    except RecordError as exc:
        return {"type": "RecordMismatch", "message": str(exc)[:300], "origin": "submission"}
    except (RecursionError, MemoryError) as exc:
        return {"type": "RecordMismatch", "message": f"record not judgeable ({type(exc).__name__})",
                "origin": "submission"}
    return None


