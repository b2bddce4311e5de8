"""Child program (embedded as text by the build; runs after scicode/child_worker_prologue.py)."""
from graders.scicode.child_worker_prologue import _FD, _INIT, _json, _os, _sys, send
# -- end of source-tree preamble: the build keeps only what follows --
import _thread, base64, builtins, io, random, resource, select, shutil, signal, tempfile, time, traceback
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
for _m in _INIT["warm"]:
    try:
        __import__(_m)
    except BaseException:
        pass
import numpy, scicode.compare.cmp as _SCC
__import__("scicode.parse.parse")
_SHIM_OK = all(_n in _sys.modules for _n in ("scicode.parse.parse", "scicode.compare.cmp"))
_CUR = {"case": -1, "arity": {}, "send": None}


def _emit(record):
    """A comparison's record leaves the process at once (nothing left to edit later)."""
    _CUR["send"]({"rec": _CUR["case"], "data": record})
_METHODS = frozenset(_INIT["target_methods"])


class _Target:
    """The opaque stand-in bound to `target`: no value, only its place (case, path)."""
    __slots__ = ("_case", "_path")
    __array_ufunc__ = None

    def __init__(self, case, path):
        self._case, self._path = case, path

    def __eq__(self, other):
        _emit({"kind": "==", "target": _ser(self), "other": _ser(other)})
        return True

    def __ne__(self, other):
        _emit({"kind": "!=", "target": _ser(self), "other": _ser(other)})
        return True

    __hash__ = object.__hash__

    def __getitem__(self, key):
        if isinstance(key, numpy.integer):
            key = int(key)
        if type(key) not in (int, str):
            raise TypeError("the target stand-in is indexed by a constant only")
        return _Target(self._case, self._path + [["i", key]])

    def __iter__(self):
        n = _CUR["arity"].get(_json.dumps([self._case, self._path]))
        if n is None:
            raise TypeError("the target stand-in is not iterable here")
        return iter([_Target(self._case, self._path + [["u", k]]) for k in range(n)])

    def __getattr__(self, name):
        if name in _METHODS:
            return lambda: _Target(self._case, self._path + [["m", name]])
        raise AttributeError(f"the target stand-in has no attribute {name!r} in this process")

    def __bool__(self):
        raise TypeError("the target's truth value is decided by the grader")

    def __len__(self):
        raise TypeError("the target's length is not known in this process")

    def __array__(self, *args, **kwargs):
        raise TypeError("the target is not available in this process")

    def __repr__(self):
        return "<target>"


def _b64npy(arr):
    buf = io.BytesIO()
    numpy.lib.format.write_array(buf, arr, allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _ser(v, depth=0):
    """What the test passed in, as data.  Exact types, read through the base classes' own
    slots (a subclass's overrides do not decide what is recorded)."""
    if depth > 100:
        return {"__opaque__": "deeply nested"}
    t = type(v)
    if t is _Target:
        return {"__target__": [v._case, v._path]}
    if v is None or v is True or v is False:
        return v
    if isinstance(v, bool):
        return bool.__bool__(v)
    if isinstance(v, int):
        return int.__int__(v)
    if isinstance(v, float):
        f = float.__float__(v)
        return f if f == f and f not in (float("inf"), float("-inf")) else {"__float__": repr(f)}
    if isinstance(v, complex):
        return {"__complex__": [_ser(complex.real.__get__(v)), _ser(complex.imag.__get__(v))]}
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, (bytes, bytearray)):
        return {"__bytes__": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, numpy.ndarray):
        arr = numpy.ndarray.view(v, numpy.ndarray)
        if arr.dtype.hasobject:
            return {"__objarray__": [list(arr.shape), [_ser(x, depth + 1) for x in arr.ravel()]]}
        return {"__array__": _b64npy(numpy.ascontiguousarray(arr))}
    if isinstance(v, numpy.generic):
        arr = numpy.asarray(v)
        if arr.dtype.hasobject:
            return {"__opaque__": t.__name__}
        return {"__npscalar__": _b64npy(arr)}
    if isinstance(v, tuple):
        return {"__tuple__": [_ser(x, depth + 1) for x in tuple.__iter__(v)]}
    if isinstance(v, list):
        return [_ser(x, depth + 1) for x in list.__iter__(v)]
    if isinstance(v, dict):
        return {"__dict__": [[_ser(k, depth + 1), _ser(x, depth + 1)] for k, x in dict.items(v)]}
    if isinstance(v, (set, frozenset)):
        return {"__set__" if isinstance(v, set) else "__frozenset__":
                [_ser(x, depth + 1) for x in (set.__iter__(v) if isinstance(v, set) else frozenset.__iter__(v))]}
    sp = _sys.modules.get("scipy.sparse")
    if sp is not None and sp.issparse(v):
        c = v.tocoo()
        return {"__sparse__": {"format": v.format, "shape": [int(n) for n in v.shape],
                               "array": not isinstance(v, sp.spmatrix), "data": _b64npy(numpy.asarray(c.data)),
                               "row": _b64npy(numpy.asarray(c.row)), "col": _b64npy(numpy.asarray(c.col))}}
    sy = _sys.modules.get("sympy")
    if sy is not None and isinstance(v, sy.Basic):
        if getattr(v, "is_Number", False):
            try:
                z = complex(v)
                return _ser(z.real if z.imag == 0 else z)
            except BaseException:
                pass
        return str(v)
    for dtype in (None, float, complex):    # an array-like of a library (a matrix type, a
        try:                                # memoryview, a sympy matrix of numbers): its data
            arr = numpy.asarray(v, dtype=dtype)
            if not arr.dtype.hasobject:
                return {"__array__": _b64npy(numpy.ascontiguousarray(arr))}
        except BaseException:
            pass
    return {"__opaque__": t.__name__}


def _has_target(values, depth=0):
    for x in values:
        t = type(x)
        if t is _Target:
            return True
        if depth < 4 and (t is tuple or t is list) and _has_target(x[:4096], depth + 1):
            return True
        if depth < 4 and t is dict and _has_target(list(x.values())[:4096], depth + 1):
            return True
    return False


def _recorder(kind, fn):
    """A comparator as the tests see it: with a target stand-in among its arguments it
    records what it was passed and returns True; otherwise it is the library's own."""
    def comparator(*args, **kwargs):
        if _has_target(args) or _has_target(kwargs.values()):
            _emit({"kind": kind, "args": [_ser(a) for a in args],
                   "kwargs": {str(k): _ser(x) for k, x in kwargs.items()}})
            return True
        return fn(*args, **kwargs)
    comparator.__name__, comparator.__doc__, comparator.__wrapped__ = fn.__name__, fn.__doc__, fn
    comparator.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
    comparator.__module__ = getattr(fn, "__module__", None)     # not the worker's module
    return comparator


def __scicode_helper__(fn):
    """A test-defined comparator called with the target: recorded, run by the grader."""
    return _recorder("helper." + fn.__name__, fn)


for _n in ("allclose", "isclose", "array_equal"):
    setattr(numpy, _n, _recorder("numpy." + _n, getattr(numpy, _n)))
for _n in ("cmp_tuple_or_list", "are_dicts_close", "are_csc_matrix_close"):
    setattr(_SCC, _n, _recorder("cmp." + _n, getattr(_SCC, _n)))

_HOOKS = frozenset(("__array_function__", "__array_ufunc__", "__array__", "__array_interface__",
                    "__array_struct__", "__array_priority__", "__array_wrap__", "__float__",
                    "__complex__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                    "__sub__", "__rsub__", "__abs__", "__bool__", "__len__", "__iter__", "__getitem__",
                    "__array_finalize__", "__add__", "__radd__", "__mul__", "__rmul__", "__truediv__",
                    "__rtruediv__", "__pow__", "__mod__", "__matmul__", "__neg__", "__round__", "__int__",
                    "__index__", "__and__", "__or__", "__invert__", "__getattr__", "__getattribute__", "__del__"))


def _library_class(k):
    """A static (C) type, or a class its module really exports under its name (not one
    made by exec'd code, whatever `__module__` it claims)."""
    if not k.__flags__ & (1 << 9):          # Py_TPFLAGS_HEAPTYPE: NoneType, float, numpy scalars
        return True
    mod = _sys.modules.get(k.__module__) if k.__module__ != "__main__" else None
    for part in k.__qualname__.split("."):
        mod = getattr(mod, part, None)
    return mod is k


def _rigged(x, depth=0):
    for k in type(x).__mro__:
        if not _HOOKS.isdisjoint(vars(k)) and not _library_class(k):
            return True
    if depth < 3 and isinstance(x, dict):
        x = list(dict.values(x))
    return depth < 3 and isinstance(x, (list, tuple)) and any(_rigged(v, depth + 1) for v in x[:256])


class Tampering(Exception):
    """Generated code replaced a comparator or builtin the tests rely on."""


def _tampered(before, now=None):
    now, out = now or _snapshot(whole=False), []
    for (m, n), v in before.items():
        if n == "*":        # a whole module's names, live: new ones may appear (lazy imports), none change
            d = vars(_sys.modules[m]) if m in _sys.modules else {}
            if len(d) < len(v) or not all(map(_is, d.values(), v)):
                out += [f"{m}.{k}" for k, x in zip(d, v) if d[k] is not x][:3] or [f"{m}.*"]
            continue
        w = now[(m, n)]
        if w != v:
            out.append("threading (a thread left running; shut pools down)" if m == "threading" else f"{m}.{n}")
    return out


def _generated(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(("<code ", "<context "))


def _checked(fn, before, step_function):
    """Defence in depth for the tests' own computations (`assert (f(x) > 0) == target`):
    when a function of generated code returns to the tests, the comparators and builtins
    must still be the objects they were, and the step's own function must not return an
    object whose class, made by the generation, overrides comparison or numpy hooks."""
    def checked(*args, **kwargs):
        out = fn(*args, **kwargs)
        bad = _tampered(before)
        if bad:
            raise Tampering("replaced " + ", ".join(bad))
        if step_function and _rigged(out):
            raise TypeError(f"returned {type(out).__name__} is or holds an object whose class, made by "
                            "the generation, overrides comparison/numpy hooks")
        return out
    checked.__name__, checked.__qualname__, checked.__doc__, checked.__wrapped__ = \
        fn.__name__, getattr(fn, "__qualname__", fn.__name__), fn.__doc__, fn
    return checked


def _check_generated(tns, before, step_name):
    """Wrap, in the tests' namespace, every function the generated code defined, and
    the methods of its classes (in place), with _checked."""
    import types
    for key, value in list(tns.items()):
        if isinstance(value, types.FunctionType) and _generated(value):
            tns[key] = _checked(value, before, key == step_name)
        elif isinstance(value, type) and vars(value).get("__module__") == "__main__":
            for attr, member in list(vars(value).items()):
                if attr.startswith("__") and attr not in ("__init__", "__call__"):
                    continue
                try:        # a class that refuses new attributes keeps its methods as they are
                    if isinstance(member, types.FunctionType) and _generated(member):
                        setattr(value, attr, _checked(member, before, False))
                    elif isinstance(member, (staticmethod, classmethod)) and _generated(member.__func__):
                        setattr(value, attr, type(member)(_checked(member.__func__, before, False)))
                except Exception:
                    pass


_GUARDED = [("numpy", n) for n in ("allclose", "isclose", "array_equal", "all", "any", "abs", "asarray",
                                    "ascontiguousarray", "ndarray", "generic", "integer")] + \
           [("builtins", n) for n in ("isinstance", "len", "all", "any", "abs", "__import__", "exec",
                                      "compile", "AssertionError", "bool", "float", "int", "zip", "print",
                                      "type", "str", "repr", "dict", "list", "tuple", "iter", "map", "vars")] + \
           [("scicode.compare.cmp", n) for n in ("cmp_tuple_or_list", "are_dicts_close",
                                                 "are_csc_matrix_close")]


_TARGET_SLOTS = ("__init__", "__eq__", "__ne__", "__hash__", "__getitem__", "__iter__", "__getattr__",
                 "__bool__", "__len__", "__array__", "__array_ufunc__", "_case", "_path")


def _fn_state(f):
    return (id(f), id(getattr(f, "__code__", None)), id(getattr(f, "__defaults__", None)))


def _recorder_state():
    """The recorder's own parts (functions with their code and defaults, the modules it
    uses), the interpreter's trace hooks and its threads (a hook could rewrite what the tests
    pass in before it is recorded)."""
    g = globals()
    fns = [vars(_Target).get(k) for k in _TARGET_SLOTS] + [g.get(k) for k in (
        "_emit", "_ser", "_has_target", "_b64npy", "_recorder")] + [_CUR.get("send")] + \
        [getattr(_sys.modules.get(m), n, None) for m, n in _GUARDED[:3] + _GUARDED[-3:]]
    return (tuple(_fn_state(f) for f in fns), id(type(_CUR)), id(g.get("_CUR")),
            tuple(id(g.get(k)) for k in ("numpy", "base64", "io", "_json", "_os", "_sys")),
            id(_json.dumps), id(_os.write), id(base64.b64encode), id(numpy.lib.format.write_array),
            id(_sys.gettrace()), id(_sys.getprofile()), _sys.getswitchinterval())


def _snapshot(whole=True):
    out = {(m, n): id(getattr(_sys.modules.get(m), n, None)) for m, n in _GUARDED}
    out[("recorder", "state")] = _recorder_state()
    out[("threading", "threads")] = _thread._count()   # one left running could rewrite a record first
    for m in _WHOLE_MODULES if whole else ():   # np.__dict__["sum"] = ... would rig `(np.sum(a) > b) == target`
        out[(m, "*")] = tuple(vars(_sys.modules[m]).values()) if m in _sys.modules else ()
    return out


_WHOLE_MODULES = ("numpy", "numpy.linalg", "numpy.random", "math", "cmath", "builtins")
from operator import is_ as _is


def _origin(exc):
    tb, fn = exc.__traceback__, ""
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return "test" if fn.startswith("<test ") else "submission" if fn.startswith("<") else "library"


def _via_submission(exc):
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(("<code ", "<context ")):
            return True
        tb = tb.tb_next
    return False


def _err(exc):
    return {"type": type(exc).__name__, "message": str(exc)[:500], "origin": _origin(exc),
            "via_submission": _via_submission(exc),
            "trace": "".join(traceback.format_exception_only(type(exc), exc))[-300:]}


def _child(jfd, wfd, token, out_path):
    """The step's process.  Forked and confined ahead of its job (while the worker waited
    for the grader): session, output capture, seeds, namespace and the tamper snapshot are
    ready when the job arrives on `jfd`; its limits are set from the job before any of its
    code runs."""
    try:
        _os.setsid()
    except OSError:
        pass
    null = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(null, 0)
    out = _os.open(out_path, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o600)
    _os.dup2(out, 1)
    _os.dup2(out, 2)
    random.seed()
    numpy.random.seed()

    def csend(obj, _w=_os.write, _d=_json.dumps):
        data = (_d({"token": token, "body": obj}, allow_nan=True, default=str) + "\n").encode()
        while data:
            data = data[_w(wfd, data):]

    # the program's namespace is `__main__`, as the official test script is: generated code
    # that imports `__main__` (also as `__import__(__name__)`) finds its own namespace, not the
    # worker's state (the recorder's channel); multiprocessing pickles its functions by name
    import types
    main = types.ModuleType("__main__")
    ns = main.__dict__
    ns["__builtins__"] = builtins
    _sys.modules["__main__"] = main
    _CUR["send"] = csend
    before = _snapshot()
    chunks = []
    while True:             # the job: one JSON document, then EOF (none: the worker is stopping)
        data = _os.read(jfd, 1 << 20)
        if not data:
            break
        chunks.append(data)
    _os.close(jfd)
    if not chunks:
        _os._exit(0)
    job = _json.loads(b"".join(chunks))
    del chunks
    mem, cpu = int(job["mem_bytes"]), int(job["timeout"]) + int(job["cpu_slack"])
    for res, val in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_CPU, cpu),
                     (resource.RLIMIT_FSIZE, int(job["fsize"])), (resource.RLIMIT_CORE, 0)):
        try:
            resource.setrlimit(res, (val, val))
        except (ValueError, OSError):
            pass
    step = job["step"]
    aborted = False
    for phase in ("deps", "context", "code"):
        src = job[phase]
        if not src or not src.strip() or (job["dry"] and phase != "deps"):
            continue
        try:
            exec(compile(src, f"<{phase} {step}>", "exec"), ns)
            csend({"phase": phase, "ok": True})
        except BaseException as exc:
            csend({"phase": phase, "ok": False, "error": _err(exc)})
            aborted = True
            break
    if not aborted and not job["dry"] and _tampered(before):
        csend({"phase": "code", "ok": False, "error": {
            "type": "Tampering", "origin": "submission", "via_submission": True,
            "message": "replaced " + ", ".join(_tampered(before)) + " while the program was defined"}})
        aborted = True
    if job["dry"] and not aborted:
        try:
            import importlib
            importlib.import_module("scicode.parse.parse")
            importlib.import_module("scicode.compare.cmp")
            for i in range(len(job["cases"])):
                ns["target"] = _Target(i, [])
            _sys.stdout.write(job["marker"] + "\n")
            _sys.stdout.flush()
            csend({"marker": job["marker"]})
        except BaseException as exc:
            csend({"phase": "dry", "ok": False, "error": _err(exc)})
    elif not aborted:
        # the cases share one namespace, a copy of the program's: the generation's
        # functions keep `ns` as their globals
        tns = dict(ns)
        tns[HELPER] = __scicode_helper__
        kind, name = job["definition"]
        _check_generated(tns, before, name if kind == "def" else None)
        for i, case in enumerate(job["cases"]):
            _CUR["case"], _CUR["arity"] = i, dict(job["arity"][i])
            tns["target"] = _Target(i, [])
            try:
                exec(compile(case, f"<test {step} case {i + 1}>", "exec"), tns)
                csend({"case": i, "ok": True})
            except BaseException as exc:
                csend({"case": i, "ok": False, "error": _err(exc)})
    after = _snapshot()
    tamper = _tampered(before, after)
    try:
        _sys.stdout.flush()
        _sys.stderr.flush()
    except BaseException:
        pass
    csend({"done": True, "tamper": tamper})
    _os._exit(0)


HELPER = _INIT["helper_name"]
_REAP = bool(_INIT.get("reap"))
_TMP_BYTES = int(_INIT["tmp_bytes"])       # a step's private /tmp: the file-size cap


def _spawn():
    """The next step's process, forked while the worker waits for its job (after the last
    step's processes were killed): its own user and mount namespaces, a private /tmp and
    its folder; it blocks reading its job from a pipe of its own.  Nothing of a job is in it
    before the job arrives, and no code of a generation runs in it before then."""
    token = secrets_token()
    step_dir = tempfile.mkdtemp(prefix="step-", dir=_INIT["work_dir"])
    out_path = _os.path.join(step_dir, ".captured_output")
    r, w = _os.pipe()
    jr, jw = _os.pipe()
    _sys.stdout.flush()
    _sys.stderr.flush()
    pid = _os.fork()
    if pid == 0:
        try:
            _os.close(r)
            _os.close(jw)
            _os.close(_FD)
            for _k in ("_TOKEN", "_INIT", "send", "_FD", "_line", "_SPARE"):   # channel secrets, job line
                globals().pop(_k, None)
            _own_user_namespace()
            _os.chdir(step_dir)
            _private_tmp(step_dir, _TMP_BYTES)
            _child(jr, w, token, out_path)
        finally:
            _os._exit(0)
    _os.close(w)
    _os.close(jr)
    try:        # the step's exit wakes the wait below (no polling interval)
        pidfd = _os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    return {"pid": pid, "r": r, "jw": jw, "pidfd": pidfd, "token": token, "step_dir": step_dir,
            "out_path": out_path}


def _completed(chunks, token):
    """The reply so far ends with the step's completion message (sent after its last case,
    its tamper check and its output flush; nothing but the process's exit follows it)."""
    tail = chunks[-1][-4097:]
    if len(tail) < 4097 and len(chunks) > 1:
        tail = chunks[-2][-4097:] + tail
    try:
        msg = _json.loads(tail[:-1].rsplit(b"\n", 1)[-1])
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (isinstance(msg, dict) and msg.get("token") == token and isinstance(msg.get("body"), dict)
            and msg["body"].get("done") is True)


_UNREAPED = []      # step processes killed by the worker, reaped once the kernel is done with them


def _reap_killed():
    for pid in list(_UNREAPED):
        try:
            if _os.waitpid(pid, _os.WNOHANG)[0]:
                _UNREAPED.remove(pid)
        except ChildProcessError:
            _UNREAPED.remove(pid)


def _reap():
    """Reap this worker's exited children: the killed step processes, and any other child
    (a step's leftovers; none is alive then, no spare forked yet)."""
    _reap_killed()
    while True:
        try:
            if _os.waitpid(-1, _os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


def _discard(spare):
    """A spare that gets no job (the worker stops): EOF on its job pipe ends it."""
    _os.close(spare["jw"])
    try:
        _os.killpg(spare["pid"], signal.SIGKILL)
    except OSError:
        pass
    try:
        _os.waitpid(spare["pid"], 0)
    except ChildProcessError:
        pass
    for fd in (spare["r"], spare["pidfd"]):
        if fd is not None:
            _os.close(fd)
    shutil.rmtree(spare["step_dir"], ignore_errors=True)


def _run(job, job_line, spare):
    t0 = time.monotonic()
    pid, r, pidfd, token, out_path = (spare[k] for k in ("pid", "r", "pidfd", "token", "out_path"))
    try:
        data = job_line.encode()
        while data:
            data = data[_os.write(spare["jw"], data):]
    except OSError:         # the step's process is gone already: its exit status says how
        pass
    _os.close(spare["jw"])
    send({"started": pid})
    _reap_killed()
    deadline = t0 + float(job["timeout"])
    chunks, kept, eof, status, rc, over = [], 0, False, None, None, False
    while True:
        now = time.monotonic()
        if now >= deadline:
            status = "timeout"
            break
        watch = ([] if eof else [r]) + ([] if pidfd is None else [pidfd])
        if watch:
            ready, _, _ = select.select(watch, [], [], min(0.25, deadline - now))
            if not ready:
                _reap_killed()
        else:       # no pidfd (an old kernel): the exit is polled
            ready = []
            time.sleep(0.002)
        if r in ready:
            data = _os.read(r, 1 << 20)
            if not data:
                eof = True
            elif kept < job["reply_cap"]:
                chunks.append(data)
                kept += len(data)
                if data.endswith(b"\n") and _completed(chunks, token):
                    status = "ok"       # its tests are over: what is left of it is an exit
                    break
            else:
                over = True
        if pidfd is not None and pidfd not in ready:
            continue
        wpid, st = _os.waitpid(pid, _os.WNOHANG)
        if not wpid and pidfd is not None:
            time.sleep(0.001)       # (a pidfd readable before its process can be reaped)
        if wpid:
            rc = _os.waitstatus_to_exitcode(st)
            status = "ok" if rc == 0 else "crashed"
            break
    try:
        _os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if status == "timeout":
        try:
            _os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if _REAP:       # alone with the sandbox's init: no process of this step outlives it (one
        try:        # kill(-1) reaches all but init and this worker, and no fork escapes it)
            _os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    if rc is None:  # SIGKILLed now: it can run no more code; reaped once its exit is done
        _UNREAPED.append(pid)
    _reap()
    _os.set_blocking(r, False)      # what it wrote before it was stopped
    try:
        while True:
            data = _os.read(r, 1 << 20)
            if not data:
                break
            if kept < job["reply_cap"]:
                chunks.append(data)
                kept += len(data)
            else:
                over = True
    except BlockingIOError:
        pass
    _os.close(r)
    if pidfd is not None:
        _os.close(pidfd)
    messages, forged = [], 0
    for line in b"".join(chunks).splitlines():
        if len(messages) >= job["max_messages"]:
            over = True
            break
        try:
            msg = _json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            forged += 1
            continue
        if isinstance(msg, dict) and msg.get("token") == token and "body" in msg:
            messages.append(msg["body"])
        else:
            forged += 1
    try:
        with open(out_path, "rb") as fh:
            captured = fh.read(job["capture"]).decode("utf-8", "replace")
    except OSError:
        captured = ""
    reason = ""
    if status == "timeout":
        reason = f"exceeded the {float(job['timeout']):g} s budget"
    elif status == "crashed":
        reason = (f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}")
    if over:
        reason = (reason + "; " if reason else "") + "reply over its cap (bytes or messages)"
    send({"result": {"status": status, "reason": reason, "messages": messages, "forged": forged,
                     "wall": time.monotonic() - t0, "stdout": captured, "rc": rc, "over_cap": over}})
    shutil.rmtree(spare["step_dir"], ignore_errors=True)     # after the reply: off the grader's wait


def secrets_token():
    return _os.urandom(16).hex()


def _own_user_namespace():
    """The step's process in a user namespace of its own: no capability over its worker
    (which holds the channel to the grader), as the runner's fork_jobs does for a job."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        uid, gid = _os.geteuid(), _os.getegid()
        # CLONE_NEWUSER, with a mount namespace of its own where the host allows it (_private_tmp)
        if libc.unshare(0x10000000 | 0x00020000) == 0 or libc.unshare(0x10000000) == 0:
            for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                               ("gid_map", "%d %d 1" % (gid, gid))):
                try:
                    with open("/proc/self/" + name, "w") as fh:
                        fh.write(text)
                except OSError:
                    pass
    except BaseException:
        pass


def _private_tmp(step_dir, size):
    """Where /tmp is part of the sandbox's read-only root, the step gets a private /tmp (a
    tmpfs of the file-size cap, gone with the step), as the official harness lets a
    generation write temporary files; its own folder is bound back at its path (cwd,
    absolute paths, the captured output).  Nothing changes where /tmp is writable already."""
    if not _os.path.isdir("/tmp") or _os.access("/tmp", _os.W_OK):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        flags = ctypes.c_ulong(0x2 | 0x4)                   # MS_NOSUID | MS_NODEV
        _os.chdir(step_dir)
        if libc.mount(b"tmpfs", b"/tmp", b"tmpfs", flags, b"mode=1777,size=%d" % int(size)) != 0:
            return
        if step_dir.startswith("/tmp/"):
            _os.makedirs(step_dir, exist_ok=True)
            libc.mount(b".", step_dir.encode(), None, ctypes.c_ulong(0x1000), None)     # MS_BIND
            _os.chdir(step_dir)
    except BaseException:
        pass


send({"ready": True, "shim": _SHIM_OK})
_SPARE = _spawn()
for _line in _sys.stdin:
    if not _line.strip():
        continue
    _run(_json.loads(_line), _line, _SPARE)
    _SPARE = _spawn()
_discard(_SPARE)
