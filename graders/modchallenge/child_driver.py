"""Child program (embedded as text by the build; runs after common/child_driver_prologue.py)."""
from graders.common.child_driver_prologue import _CH, _REQ, _os, _sys, ask, report_runtime, send
# -- end of source-tree preamble: the build keeps only what follows --
_path = list(_sys.path)                 # stdlib modules of the driver: never the submission's copies
_sys.path.remove(_REQ["submission_dir"])
import copy as _copy, importlib as _il, operator as _op, pickle as _pickle, time as _time
import dataclasses as _dataclasses, hashlib as _hashlib, pathlib as _pathlib, re as _re, types as _types
import ast as _ast, importlib._bootstrap_external as _ilx, keyword as _keyword, opcode as _opcode
import _imp
_sys.path[:] = _path
_sys.path.insert(0, _REQ["lib_dir"])
from modchallenge.interface.base_model import ModularMultiplicationModel as _Base


# ---- The runtime guard (issue 23): a PEP 578 audit hook, installed below before anything of the
# submission is imported, judging every event of this process from then on.  The rule (the task
# statement's "runtime guard" section says what it proves and what it does not):
#   compile   text from a file: allowed when the file is one the static scan read (its path under
#             the submission and the sha256 the grader sent; a file in a codec the interpreter
#             does not decode natively is not) or a file of the Python installation (the bytes
#             equal the file on disk, neither it nor its link changed status since the hook
#             started).  Text from no file: allowed when it is inert (names, dots, subscripts,
#             commas, `|`, quoted names, whitespace: typing's string annotations; no statement
#             keyword -- `from decimal import Decimal as D` is a forbidden import the scan never
#             read), namedtuple's constructor lambda, a
#             method dataclasses generates (called by dataclasses, identifier field names),
#             ast.parse asking for a tree only (numpy's .npy header; a tree compiled later is
#             judged as text from no file), or compiled by an installation function whose call
#             spells exec(/eval(/compile( and finds the real builtin under that name, while a
#             library's module is being imported (_guard_called: not a name the model rebound to a
#             partial of eval that a library's body calls) and the text is of a declared shape
#             (_guard_shape: the text may be formatted from state the model planted); else a finding.
#   marshal   only importlib's own read of a .pyc of the installation (bytes equal to the file).
#   pickle    globals of the weights-only allowlist (GUARD_PICKLE_GLOBALS) only (neither has an
#             allowance for a library's import).
#   ctypes.*, code.__new__: findings unless a library's import does it (ctypes: only dlopen of
#             the installation's libraries and dlsym; code.__new__: only a call spelled `.replace(`);
#             gc's object-graph walks, sys._current_frames: findings, always (and refused) (the object-graph walks are also refused: they would
#             reach this hook); replacing __code__/__defaults__/__kwdefaults__ of a function of
#             this driver (the guard's helpers among them): a finding.
#   processes, sockets, writes into the installation or the grader's files: findings, always.
# "A library's import": walking out from the event, a module body of the installation, run by
# the import system under its own name (not as __main__), comes before any frame of the
# submission or of this driver.  Findings are written to the result pipe at once (the first
# SPEC guard_max_reports per run), through the driver's descriptor or the hook's own copy of it;
# a finding neither reaches kills the process before the event's operation runs.  The hook holds its state in its closure and takes every
# helper, builtin and constant through default arguments bound here.
GUARD_PROCESS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
                           "os.fork", "os.forkpty", "os.startfile", "pty.spawn",
                           "modchallenge.guard.fork_exec"})
# _posixsubprocess.fork_exec raises no audit event (subprocess.Popen raises its own before calling
# it): the driver loads the module before the hook and puts _guard_fork_exec in its place; a fresh
# copy of the module (deleted from sys.modules and imported again, module_from_spec, a spec under
# another package: the init symbol is named after the last component) raises `import`
GUARD_NATIVE_SPAWNERS = frozenset({"_posixsubprocess"})
GUARD_INTROSPECT = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                              "sys._current_frames"})
GUARD_WRITES = frozenset({"open", "os.rename", "os.link", "os.symlink"})
# a sub-interpreter (_xxsubinterpreters.create, _testcapi.run_in_subinterp) has none of this
# interpreter's audit hooks (sys.addaudithook is per interpreter): text run there is unwatched.
# Creating one raises this event in the creating interpreter: refused (issue 23 round 4 red team)
GUARD_INTERPRETERS = frozenset({"cpython.PyInterpreterState_New"})
# CPython's C test modules: _testcapi.run_in_subinterp swaps the thread state out first, so its
# sub-interpreter raises no event here at all (and both reach interpreter internals): loading one
# is refused (no library of the installation imports them outside its tests)
GUARD_NATIVE_REFUSED = frozenset({"_testcapi", "_testinternalcapi"})
# an embedded interpreter of text the scan reads as data: SQL (`select 3*4%5`) computes with no
# compile event; sqlite3 raises these when a database is opened / an extension is loaded
GUARD_EMBEDDED = frozenset({"sqlite3.connect", "sqlite3.enable_load_extension", "sqlite3.load_extension"})
# _tkinter is a Tcl interpreter in the process (tkinter.Tcl() needs no display): `expr {a * b % p}`
# computes with bignums from text, and no event follows its import (round 5's red team); _curses'
# tparm runs terminfo's parameterized strings, a stack language (`%p1%p2%*%p3%m%d`: a*b mod p in C
# ints) once setupterm found a terminal description: both refused at their import
GUARD_NATIVE_INTERPRETERS = frozenset({"_tkinter", "_curses"})
# TorchScript compiles text in C++ with no audit event (issue 23 round 5): torch._C's entry points
# that take TorchScript source, IR text or a serialized TorchScript archive are replaced, in the
# module torch._C is created as (by the driver's loader, _GuardExtensionLoader, before anything
# else can hold it), by stubs that raise modchallenge.guard.torchscript and refuse;
# CompilationUnit(TEXT) runs the text through C++ (its `define` is stubbed, its __init__ takes no
# text: an empty unit is built by the hook, which alone holds the original __init__)
GUARD_TORCH_TEXT = ("parse_ir", "_parse_source_def", "import_ir_module", "import_ir_module_from_buffer",
                    "_import_ir_module_from_package", "_load_for_lite_interpreter",
                    "_load_for_lite_interpreter_from_buffer", "_load_jit_module_from_bytes",
                    "_load_jit_module_from_file", "_load_mobile_module_from_bytes",
                    "_load_mobile_module_from_file", "_jit_pass_custom_pattern_based_rewrite",
                    "_jit_pass_custom_pattern_based_rewrite_graph")
GUARD_TORCH_METHODS = (("CompilationUnit", "define"), ("ScriptModule", "_define"))
GUARD_TORCH = frozenset({"modchallenge.guard.torch_c", "modchallenge.guard.cu_init",
                         "modchallenge.guard.script_define"})
# torch.jit.script of an nn.Sequential / ModuleList / ModuleDict defines its __len__ (and an empty
# ModuleDict's __contains__) from text through ScriptModule.define -> _define (torch/jit/_recursive.py):
# exactly these texts, a constant and nothing else, are compiled by the hook (the only holder of the
# original _define); any other text is the TorchScript finding
GUARD_SCRIPT_DEFINE = ("def __len__(self):\n   return ", "def __contains__(self, key: str):\n   return False\n")
# libhdf5 dlopens filter/VOL/VFD plugins from its plugin folders in C (no `import` event: a shared
# object shipped as data, copied to scratch and named by h5py.h5pl.append, computed a*b mod p in its
# filter, round 5's red team).  The driver empties the search path (HDF5_PLUGIN_PATH="" before
# anything loads libhdf5: no folder at all, not even the built-in defaults); setting the variable is
# refused, and h5py.h5pl (created by the driver's loader, like torch._C) has stubs in place of the
# functions that add or replace a folder
GUARD_H5PL = ("append", "prepend", "insert", "replace")
GUARD_ENV_PINNED = frozenset({"HDF5_PLUGIN_PATH"})
GUARD_LOADED_BY_DRIVER = frozenset({"_C", "h5pl"})      # extension modules only the driver's loader makes
GUARD_EVENTS = frozenset({"compile", "marshal.loads", "marshal.load", "pickle.find_class", "code.__new__",
                          "object.__setattr__", "modchallenge.guard.flush", "modchallenge.guard.torchscript",
                          "cpython._PySys_ClearAuditHooks", "import", "os.putenv", "os.unsetenv",
                          "modchallenge.guard.h5plugin"}) | GUARD_PROCESS | GUARD_INTROSPECT | GUARD_WRITES \
    | GUARD_INTERPRETERS | GUARD_EMBEDDED | GUARD_TORCH
GUARD_PREFIXES = ("ctypes.", "socket.")
GUARD_COMPILERS = frozenset({"exec", "eval", "compile"})
# events a library's import may raise (measured: torch's CDLL loads, types.coroutine's co.replace);
# a library's import reached through a rebound builtin could otherwise call anything -- the
# object-graph walks above among them, which reach this hook's closure (none measured at import)
GUARD_LIBRARY_IMPORT_OK = frozenset({"ctypes.dlopen", "ctypes.dlsym", "code.__new__"})
GUARD_FUNC_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
GUARD_WRITE_FLAGS = _os.O_WRONLY | _os.O_RDWR | _os.O_APPEND | _os.O_CREAT | _os.O_TRUNC
_GUARD_INERT = _re.compile(   # names, dots, subscripts, commas, |, quoted names; no statement keyword
    r"(?:[\s.,\[\]|]|\b(?!(?:import|from|as|del|global|nonlocal|raise|assert|return|yield|await|async"
    r"|with|pass|break|continue|class|def|try|while)\b)\w+\b|'[\w.]*'|\"[\w.]*\")*")
_GUARD_NAMEDTUPLE = _re.compile(r"lambda _cls, [\w, ]*: _tuple_new\(_cls, \([\w, ]*\)\)")
_GUARD_ESCAPE = {c: "?" for c in range(32)}
_GUARD_ESCAPE.update({ord('"'): "'", ord("\\"): "/", 127: "?"})


def _guard_read(path, limit, before, _open=_os.open, _read=_os.read, _close=_os.close,
                _flags=_os.O_RDONLY, _join=b"".join, _min=min, _len=len, _stat=_os.stat,
                _lstat=_os.lstat, _base=BaseException):
    """Up to `limit` bytes of a file of the installation, or None -- None also when the file or
    the link naming it changed status since `before` (the file system's clock at the hook's
    start, _guard_clock): a file written,
    renamed, linked or symlinked there by the model is not the installation's own (a status
    change time cannot be set back by a process)."""
    try:
        if _lstat(path).st_ctime_ns >= before or _stat(path).st_ctime_ns >= before:
            return None
        fd = _open(path, _flags)
    except _base:
        return None
    try:
        parts, n = [], 0
        while n < limit:
            chunk = _read(fd, _min(limit - n, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            n += _len(chunk)
        return _join(parts)
    except _base:
        return None
    finally:
        _close(fd)


def _guard_blame(frame, g, _dict=dict):
    """'submission' (a frame of the submission or the driver comes first, walking out from the
    event), 'library' (a module body of the installation being imported comes first: executed by
    the import system, under its own name, not as __main__ -- runpy and a spec named __main__ run
    a module's command line, which reads sys.argv) or 'none'."""
    sub, here, roots = g[0], g[1], g[2]
    f = frame
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        if fn.startswith(sub) or fn == here:
            return "submission"
        if code.co_name == "<module>" and (fn.startswith(roots) or fn.startswith("<frozen ")) \
                and f.f_back is not None and f.f_back.f_code.co_filename.startswith("<frozen importlib") \
                and _dict.get(f.f_globals, "__name__") != "__main__":
            return "library"
        f = f.f_back
    return "none"


def _guard_where(frame, g, _str=str, _len=len):
    """The first frame of the submission, walking out from the event."""
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        for pre in g[0]:
            if fn.startswith(pre):
                return "%s:%s in %s" % (fn[_len(pre):], _str(f.f_lineno), f.f_code.co_name)
        f = f.f_back
    return "no frame of the submission on the stack (the driver, or a thread it did not start)"


def _guard_callee(frame, ops, _list=list):
    """(opcode, argument) of the LOAD_* instruction starting where the source of the call running
    in `frame` starts (its callee: a name or an attribute), or (-1, 0) when there is none."""
    lg, ln, ext, loads, gshift, attrs, ashift = ops
    code = frame.f_code
    raw = code.co_code
    pos = _list(code.co_positions())
    i = frame.f_lasti // 2
    line, _, col, _ = pos[i]
    j = i - 1
    while j >= 0:
        p = pos[j]
        if raw[2 * j] in loads and p[0] == line and p[1] == line and p[2] == col:
            break
        j -= 1
    if j < 0:
        return -1, 0
    arg, k, shift = raw[2 * j + 1], j - 1, 8
    while k >= 0 and raw[2 * k] == ext:
        arg |= raw[2 * k + 1] << shift
        shift += 8
        k -= 1
    return raw[2 * j], arg


def _guard_called(frame, want, ops, _type=type, _dict=dict, _base=BaseException,
                  _callee=_guard_callee):
    """True when the call running in `frame` calls, by the bare name its source spells, the object
    `want` maps that name to (the real builtin captured before the submission loaded): a library's
    own `exec(text)`, not a builtin or module global the model rebound to another callable
    (functools.partial(eval, TEXT) called as `globals()` or `object()` by a library module's
    body).  The callee is the LOAD_* instruction starting where the call's source starts; a name
    `want` maps to None is accepted as an attribute (`co.replace(...)`) of any receiver."""
    lg, ln, ext, loads, gshift, attrs, ashift = ops
    try:
        code = frame.f_code
        op, arg = _callee(frame, ops)
        if op not in (lg, ln) and op not in attrs:
            return False
        if op in attrs:
            name = code.co_names[arg >> ashift]
            return name in want and want.get(name) is None
        name = code.co_names[arg >> gshift if op == lg else arg]
        real = want.get(name)
        if real is None:
            return False
        if op == ln:
            loc = frame.f_locals
            if _type(loc) is not _dict:
                return False
            if _dict.__contains__(loc, name):
                return _dict.get(loc, name) is real
        glb, blt = frame.f_globals, frame.f_builtins
        if _type(glb) is not _dict or _type(blt) is not _dict:
            return False
        if _dict.__contains__(glb, name):
            return _dict.get(glb, name) is real
        return _dict.get(blt, name) is real
    except _base:
        return False


GUARD_CLASS_CALLS = frozenset({"__init__", "__new__", "__init_subclass__", "__set_name__", "__call__"})


def _guard_linked(frame, g, _callee=_guard_callee, _type=type, _dict=dict, _base=BaseException,
                  _issub=issubclass, _fn=_types.FunctionType, _code_of=_types.FunctionType.__code__.__get__,
                  _class_calls=GUARD_CLASS_CALLS, _gen_flags=0x20 | 0x80 | 0x100 | 0x200,
                  _mro=type.__dict__["__mro__"].__get__, _cdict=type.__dict__["__dict__"].__get__,
                  _sm=staticmethod, _cm=classmethod, _unwrap=staticmethod.__func__.__get__,
                  _unwrapc=classmethod.__func__.__get__, _proxy=_types.MappingProxyType):
    """True when every frame from `frame` (the one compiling) out to the library module body
    being imported was called by the frame outside it as that frame's source spells: a name that
    resolves (locals, globals, builtins: dicts read, nothing called) to this very function (not a
    method bound to an object the model chose: Bdb().run under `int`, fed an environment string), or to
    a class whose own (MRO) __init__/__new__ is the frame's code; an attribute call `x.NAME(` of a
    function named NAME (or a class's __init__/__new__); a code the caller holds among its
    constants (comprehension, class body, nested def); a generator resumed.  Not a C
    forwarder the model planted under a name a library's body calls (functools.partial of an
    installation function that exec()s its argument, e.g. cProfile.Profile().runctx)."""
    sub, here, roots = g[0], g[1], g[2]
    lg, ln, ext, loads, gshift, attrs, ashift = g[15]

    def _runs(cls, name, code):               # the class's own (MRO) __init__/__new__ is this code
        for c in _mro(cls):
            d = _cdict(c)
            if _type(d) is not _proxy or not _proxy.__contains__(d, name):
                continue
            v = _proxy.get(d, name)
            if _type(v) is _sm:
                v = _unwrap(v)
            elif _type(v) is _cm:
                v = _unwrapc(v)
            return _type(v) is _fn and _code_of(v) is code
        return False

    f = frame
    try:
        while f is not None:
            code = f.f_code
            fn = code.co_filename
            if fn.startswith(sub) or fn == here:
                return False
            if code.co_name == "<module>" and (fn.startswith(roots) or fn.startswith("<frozen ")) \
                    and f.f_back is not None and f.f_back.f_code.co_filename.startswith("<frozen importlib") \
                    and _dict.get(f.f_globals, "__name__") != "__main__":
                return True                          # the library module body: every link checked
            p = f.f_back
            if p is None:
                return False
            if code.co_flags & _gen_flags:            # a generator or coroutine, resumed
                f = p
                continue
            pcode = p.f_code
            op, arg = _callee(p, g[15])
            if op < 0:
                return False
            name = code.co_name
            if op in attrs:
                ok = pcode.co_names[arg >> ashift] == name or name in _class_calls
            elif op == lg or op == ln:
                spelled = pcode.co_names[arg >> gshift if op == lg else arg]
                obj, found = None, False
                for d in ((p.f_locals,) if op == ln else ()) + (p.f_globals, p.f_builtins):
                    if _type(d) is not _dict:
                        return False
                    if _dict.__contains__(d, spelled):
                        obj, found = _dict.get(d, spelled), True
                        break
                t = _type(obj)
                ok = found and (t is _fn and _code_of(obj) is code
                                or _issub(t, _type) and name in _class_calls and _runs(obj, name, code))
            else:                   # a code the caller holds: comprehension, class body, nested def
                ok = code in pcode.co_consts
            if not ok:
                return False
            f = p
        return False
    except _base:
        return False


def _guard_dataclass_ok(frame, g, _type=type, _str=str, _dict=dict):
    """A dataclass method generated by dataclasses for fields whose names are all identifiers (the
    only text it interpolates): the `fields` of the _process_class frame below."""
    sub, here, process_code, field_type, name_get = g[0], g[1], g[6], g[7], g[8]
    f = frame
    while f is not None and f.f_code is not process_code:
        fn = f.f_code.co_filename
        if fn.startswith(sub) or fn == here:          # called by the submission, not by dataclasses
            return False
        f = f.f_back
    if f is None:
        return False
    fields = _dict.get(f.f_locals, "fields")
    if _type(fields) is not _dict:
        return False
    for k, v in _dict.items(fields):
        if _type(k) is not _str or not _str.isidentifier(k) or _type(v) is not field_type:
            return False
        n = name_get(v)
        if _type(n) is not _str or not _str.isidentifier(n):
            return False
    return True


# Text a library's import compiles from strings is accepted only in these shapes (issue 23, round
# 4): the library's exec(f"from {mod.__name__} import *") formats state the model can plant (a
# module with a forged __name__ in sys.modules), so whose the text is cannot be told from who
# calls exec -- only from what the text is.  Measured on numpy 2.4 / scipy 1.17 / torch 2.13
# imports (the note issue23-round4.md lists them): `from M import *` (scipy's array_api_compat),
# `del NAME` (scipy.stats), f2py's combinator lambdas, and wrapper functions forwarding their
# parameters (scipy.stats' argument parsers, scipy.optimize's nonlin solvers, scipy's tuple
# bunches); dataclasses, namedtuple, string annotations and ast.parse have rules of their own.
GUARD_SHAPE_NODES = ("Module", "Expr", "Import", "ImportFrom", "alias", "Delete", "Name", "Lambda",
                     "arguments", "arg", "Subscript", "Constant", "Call", "UnaryOp", "Not", "BoolOp",
                     "FunctionDef", "Return", "Assign", "For", "If", "Raise", "Compare", "In", "NotIn",
                     "Tuple", "List", "Attribute", "Starred", "keyword", "BinOp", "Mod")
GUARD_SHAPE_DUNDERS = frozenset({"__dict__", "__class__", "__name__"})   # read, never called
_GUARD_WORD = _re.compile(r"[\w.]{0,80}")            # a string constant outside a raise's message
_GUARD_DOTTED = _re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _guard_module_real(name, g, _stat=_os.stat, _base=BaseException, _type=type, _str=str, _any=any,
                       _dotted=_GUARD_DOTTED.fullmatch, _kw=frozenset(_keyword.kwlist)):
    """True when `name` is a module of the grader's installation: a built-in module, or a package
    folder / .py / extension file under one of its site folders (found on disk; nothing imported)."""
    if _type(name) is not _str or _dotted(name) is None or _any(w in _kw for w in name.split(".")):
        return False
    if name in g[18]:
        return True
    rel = name.replace(".", "/")
    for root in g[2]:
        for cand in [root + rel + "/__init__.py", root + rel + ".py"] + [root + rel + s for s in g[19]]:
            try:
                if _stat(cand).st_mode & 0o170000 == 0o100000:
                    return True
            except _base:
                pass
    return False


def _guard_shape(text, g, _compile=compile, _type=type, _str=str, _len=len, _all=all, _int=int, _list=list,
                 _word=_GUARD_WORD.fullmatch, _dunders=GUARD_SHAPE_DUNDERS, _real=_guard_module_real,
                 _dict=dict, _base=BaseException, _none=type(None), _scalars=(bool, int, float)):
    """The declared shape `text` is in (a short name), or None: `from M import *` / `import M` of
    a real module of the installation; `del NAME`s; a lambda calling its own defaulted parameters
    on its first one, joined by and/or/not; functions (no decorators, no annotations, constant
    defaults) whose statements assign, loop, test membership, raise a formatted error and return
    names, tuples and one-deep calls -- of a non-builtin global or a method of a parameter, on
    names -- with no operator but a raise message's `%`.  Nothing else: no arithmetic, no call of
    a builtin or of a call's result, no dunder method."""
    N, fields, blt = g[20], g[21], g[22]

    def f(node, name):
        return _dict.get(fields(node), name)

    def t(node):
        return _type(node)

    def is_(node, kind):
        return _type(node) is N[kind]

    def names(seq):
        return _type(seq) is _list and _all(is_(x, "Name") for x in seq)

    def const(node, raise_msg=False):
        if not is_(node, "Constant"):
            return False
        v = f(node, "value")
        if _type(v) is _str:
            return raise_msg and _len(v) <= 200 and "\n" not in v or _word(v) is not None
        return _type(v) is _none or _type(v) in _scalars

    def attr(node, params, depth=0):       # p.a / p.__class__.__name__, rooted at a parameter
        if is_(node, "Name"):
            return depth > 0 and f(node, "id") in params
        if not is_(node, "Attribute") or depth >= 2:
            return False
        a = f(node, "attr")
        return _type(a) is _str and (not a.startswith("__") or a in _dunders) \
            and attr(f(node, "value"), params, depth + 1)

    def leaf(node, params):                # names, constants, tuples/lists of them, p.attr
        if is_(node, "Name") or const(node) or attr(node, params):
            return True
        if is_(node, "Tuple") or is_(node, "List"):
            return _all(leaf(x, params) for x in f(node, "elts"))
        return is_(node, "Starred") and is_(f(node, "value"), "Name")

    def call(node, params):                # one call, not nested, of a global or a parameter's method
        if not is_(node, "Call"):
            return False
        fn = f(node, "func")
        if is_(fn, "Name"):
            if f(fn, "id") in blt or f(fn, "id") in params:
                return False
        elif not (is_(fn, "Attribute") and attr(fn, params) and not f(fn, "attr").startswith("__")):
            return False
        return _all(leaf(x, params) for x in f(node, "args")) and \
            _all(is_(f(k, "value"), "Name") or const(f(k, "value")) for k in f(node, "keywords"))

    def expr(node, params):
        return leaf(node, params) or call(node, params)

    def target(node, params):
        if is_(node, "Name"):
            return True
        if is_(node, "Tuple"):
            return _all(is_(x, "Name") for x in f(node, "elts"))
        return is_(node, "Subscript") and attr(f(node, "value"), params) and is_(f(node, "slice"), "Name")

    def stmts(body, params):
        if _type(body) is not _list:
            return False
        for s in body:
            if is_(s, "Return"):
                ok = f(s, "value") is None or expr(f(s, "value"), params)
            elif is_(s, "Assign"):
                ok = _all(target(x, params) for x in f(s, "targets")) and expr(f(s, "value"), params)
            elif is_(s, "For"):
                ok = target(f(s, "target"), params) and expr(f(s, "iter"), params) \
                    and not f(s, "orelse") and stmts(f(s, "body"), params)
            elif is_(s, "If"):
                c = f(s, "test")
                ok = is_(c, "Compare") and is_(f(c, "left"), "Name") and _len(f(c, "ops")) == 1 \
                    and (is_(f(c, "ops")[0], "In") or is_(f(c, "ops")[0], "NotIn")) \
                    and leaf(f(c, "comparators")[0], params) \
                    and stmts(f(s, "body"), params) and stmts(f(s, "orelse"), params)
            elif is_(s, "Raise"):
                e = f(s, "exc")
                ok = f(s, "cause") is None and is_(e, "Call") and is_(f(e, "func"), "Name") \
                    and f(f(e, "func"), "id").endswith("Error") and not f(e, "keywords") \
                    and _len(f(e, "args")) == 1
                if ok:
                    m = f(e, "args")[0]
                    ok = const(m, True) or is_(m, "BinOp") and is_(f(m, "op"), "Mod") \
                        and const(f(m, "left"), True) and leaf(f(m, "right"), params)
            else:
                ok = False
            if not ok:
                return False
        return True

    def signature(a, constant_defaults):
        if f(a, "posonlyargs") or not _all(f(x, "annotation") is None for x in
                                           f(a, "args") + f(a, "kwonlyargs")):
            return None
        for v in (f(a, "vararg"), f(a, "kwarg")):
            if v is not None and f(v, "annotation") is not None:
                return None
        defaults = f(a, "defaults") + [d for d in f(a, "kw_defaults") if d is not None]
        if constant_defaults and not _all(const(d) for d in defaults):
            return None
        return [f(x, "arg") for x in f(a, "args") + f(a, "kwonlyargs")] + \
            [f(v, "arg") for v in (f(a, "vararg"), f(a, "kwarg")) if v is not None]

    def combinator(node, params, first):
        if is_(node, "Call"):
            return is_(f(node, "func"), "Name") and f(f(node, "func"), "id") in params \
                and f(f(node, "func"), "id") != first and not f(node, "keywords") \
                and _len(f(node, "args")) == 1 and is_(f(node, "args")[0], "Name") \
                and f(f(node, "args")[0], "id") == first
        if is_(node, "UnaryOp"):
            return is_(f(node, "op"), "Not") and combinator(f(node, "operand"), params, first)
        return is_(node, "BoolOp") and _all(combinator(v, params, first) for v in f(node, "values"))

    try:
        tree = _compile(text, "<guard>", "exec", 0x400)          # a syntax tree only
        body = f(tree, "body")
        if _type(body) is not _list or not body:
            return None
        s0 = body[0]
        if _len(body) == 1 and is_(s0, "ImportFrom"):
            al = f(s0, "names")
            return "import" if f(s0, "level") == 0 and _len(al) == 1 and f(al[0], "name") == "*" \
                and _real(f(s0, "module"), g) else None
        if _len(body) == 1 and is_(s0, "Import"):
            return "import" if _all(f(x, "asname") is None and _real(f(x, "name"), g)
                                    for x in f(s0, "names")) else None
        if _all(is_(s, "Delete") and names(f(s, "targets")) for s in body):
            return "del"
        if _len(body) == 1 and is_(s0, "Expr") and is_(f(s0, "value"), "Lambda"):
            lam = f(s0, "value")
            a = f(lam, "args")
            params = signature(a, False)
            if not params or f(a, "vararg") or f(a, "kwarg") or f(a, "kwonlyargs"):
                return None
            for d in f(a, "defaults"):
                if not (is_(d, "Name") or is_(d, "Subscript") and is_(f(d, "value"), "Name")
                        and const(f(d, "slice")) and _type(f(f(d, "slice"), "value")) is _int):
                    return None
            return "lambda" if combinator(f(lam, "body"), params, params[0]) else None
        for s in body:
            if not is_(s, "FunctionDef") or f(s, "decorator_list") or f(s, "returns") is not None:
                return None
            params = signature(f(s, "args"), True)
            if params is None or not stmts(f(s, "body"), params):
                return None
        return "def"
    except _base:
        return None


GUARD_TREE_NODES = ("Module", "Expr", "Constant", "Tuple", "List", "Dict", "Set", "UnaryOp", "USub",
                    "UAdd", "BinOp", "Add", "Sub", "Load", "FunctionDef", "AsyncFunctionDef",
                    "ClassDef", "Pass", "arguments", "arg")
GUARD_TREE_POSITIONS = frozenset({"lineno", "col_offset", "end_lineno", "end_col_offset"})


def _guard_tree(text, _compile=compile, _base=BaseException):
    """The guard's own tree-only parse (its compile event is the guard's, by this code object)."""
    try:
        return _compile(text, "<guard>", "exec", 0x400)
    except _base:
        return None


def _guard_tree_ok(text, caller, g, _type=type, _str=str, _bytes=bytes, _len=len, _list=list,
                   _all=all, _dict=dict, _tree=_guard_tree, _read=_guard_read, _sha=_hashlib.sha256,
                   _pos=GUARD_TREE_POSITIONS, _ast_t=_ast.AST, _isinst=isinstance,
                   _mro=type.__dict__["__mro__"].__get__, _cdict=type.__dict__["__dict__"].__get__,
                   _mp_get=_types.MappingProxyType.get, _fn=_types.FunctionType,
                   _code_of=_types.FunctionType.__code__.__get__, _base=BaseException, _range=range):
    """A tree-only parse (ast.parse) is allowed for (a) a literal (numpy's .npy header through
    ast.literal_eval), (b) a builtin's text signature (inspect: `def foo(...): pass`, no
    annotation, decorator or return annotation: a body that computes nothing), (c) text whose tree
    equals (positions aside) the tree of one function or class definition of a .py file the static
    scan read (path and digest, the file read from disk by the guard) or of a file of the
    installation -- torch.jit.script's parse of inspect.getsource (dedented, comment lines dropped
    by torch.jit's attribute check; a string constant's lines may differ in leading blanks only:
    a docstring re-indented by the dedent): whatever linecache holds, the tree must be the file's
    own, a def inside a string literal of the file is none."""
    N, fields = g[25], g[21]
    t = _tree(text)
    if t is None or _type(t) is not N["Module"]:
        return False
    body = _dict.get(fields(t), "body")
    if _type(body) is not _list or _len(body) != 1:
        return False
    s0 = body[0]
    k = _type(s0)

    def lit(n, depth=0):
        kn = _type(n)
        if depth > 50:
            return False
        if kn is N["Constant"]:
            return True
        if kn is N["Tuple"] or kn is N["List"] or kn is N["Set"]:
            return _all(lit(x, depth + 1) for x in _dict.get(fields(n), "elts"))
        if kn is N["Dict"]:
            return _all(x is not None and lit(x, depth + 1) for x in _dict.get(fields(n), "keys")) \
                and _all(lit(x, depth + 1) for x in _dict.get(fields(n), "values"))
        if kn is N["UnaryOp"]:
            return _type(_dict.get(fields(n), "op")) in (N["USub"], N["UAdd"]) \
                and lit(_dict.get(fields(n), "operand"), depth + 1)
        if kn is N["BinOp"]:             # complex literals: 1+2j
            return _type(_dict.get(fields(n), "op")) in (N["Add"], N["Sub"]) \
                and lit(_dict.get(fields(n), "left"), depth + 1) \
                and lit(_dict.get(fields(n), "right"), depth + 1)
        return False

    if k is N["Expr"]:
        return lit(_dict.get(fields(s0), "value"))
    if k is N["FunctionDef"]:
        d = fields(s0)
        a = _dict.get(d, "args")
        body = _dict.get(d, "body")
        if _type(body) is _list and _len(body) == 1 and _type(body[0]) is N["Pass"] \
                and not _dict.get(d, "decorator_list") and _dict.get(d, "returns") is None \
                and _type(a) is N["arguments"]:
            ad = fields(a)
            params = _dict.get(ad, "posonlyargs") + _dict.get(ad, "args") + _dict.get(ad, "kwonlyargs") \
                + [v for v in (_dict.get(ad, "vararg"), _dict.get(ad, "kwarg")) if v is not None]
            if _all(_type(x) is N["arg"] and _dict.get(fields(x), "annotation") is None for x in params):
                return True
    if k is not N["FunctionDef"] and k is not N["AsyncFunctionDef"] and k is not N["ClassDef"]:
        return False

    def same(x, y, depth=0):
        if depth > 200:
            return False
        tx = _type(x)
        if tx is not _type(y):
            return False
        if tx is _list:
            return _len(x) == _len(y) and _all(same(x[i], y[i], depth + 1) for i in _range(_len(x)))
        if _isinst(x, _ast_t):
            dx, dy = fields(x), fields(y)
            kx = [n for n in dx if n not in _pos]
            if _len(kx) != _len([n for n in dy if n not in _pos]):
                return False
            return _all(n in dy and same(dx[n], dy[n], depth + 1) for n in kx)
        if tx is _str and x != y:        # a multi-line string (docstring) re-indented by the dedent
            return [_str.lstrip(ln, " \t") for ln in _str.split(x, "\n")] == \
                [_str.lstrip(ln, " \t") for ln in _str.split(y, "\n")]
        return x == y

    defs = (N["FunctionDef"], N["AsyncFunctionDef"], N["ClassDef"])

    def walk(n, out, depth=0):          # every definition of the file, by name
        if depth > 200:
            return
        if _type(n) is _list:
            for x in n:
                walk(x, out, depth + 1)
        elif _isinst(n, _ast_t):
            if _type(n) in defs:
                nm = _dict.get(fields(n), "name")
                if _type(nm) is _str:
                    _dict.setdefault(out, nm, []).append(n)
            for v in fields(n).values():            # every statement list: if/try/with/class bodies
                if _type(v) is _list:
                    walk(v, out, depth + 1)

    paths = [g[0][0] + rel for rel in g[3] if rel.endswith(".py")]
    loc = caller.f_locals if caller is not None else {}
    fn = _dict.get(loc, "filename")
    if _type(fn) is _str:
        paths.append(fn)
    mod = _dict.get(loc, "nn_module")                # torch.jit._check: inspect.getsource(__init__)
    if mod is not None:
        try:
            for c in _mro(_type(mod)):
                init = _mp_get(_cdict(c), "__init__")
                if _type(init) is _fn:
                    paths.append(_code_of(init).co_filename)
                    break
        except _base:
            pass
    for p in paths:
        if _type(p) is not _str or not p.endswith(".py"):      # source files, never data read as data
            continue
        rel = None
        for pre in g[0]:
            if p.startswith(pre):
                rel = p[_len(pre):]
                break
        if rel is not None:
            want = _mp_get(g[3], rel)
            data = _read(g[0][0] + rel, 1 << 26, g[13]) if _type(want) is _str else None
            if data is None or _sha(data).hexdigest() != want:
                continue
        elif p.startswith(g[2]) and "/../" not in p:
            data = _read(p, 1 << 26, g[13])
            if data is None:
                continue
        else:
            continue
        key = _sha(data).hexdigest()       # the guard's cache (in the hook's state, g): a file's
        index = _dict.get(g[26], key)      # definitions parsed once per content
        if index is None:
            try:
                ft = _tree(_bytes.decode(data, "utf-8"))
            except _base:
                ft = None
            index = {}
            if ft is not None:
                walk(ft, index)
            g[26][key] = index
        found = _dict.get(index, _dict.get(fields(s0), "name"), [])
        if _all(not same(s0, n) for n in found):
            continue
        return True
    return False


def _guard_compile(args, frame, g, _type=type, _str=str, _bytes=bytes, _len=len,
                   _views=(bytearray, memoryview), _sha=_hashlib.sha256, _read=_guard_read,
                   _blame=_guard_blame, _dataclass=_guard_dataclass_ok, _inert=_GUARD_INERT.fullmatch,
                   _nt=_GUARD_NAMEDTUPLE.fullmatch, _called=_guard_called, _dict=dict, _int=int,
                   _base=BaseException, _shape=_guard_shape, _linked=_guard_linked, _treeok=_guard_tree_ok):
    """None when this compile is allowed, else the reason."""
    sub, roots, digests, gen_codes = g[0], g[2], g[3], g[5]
    if frame is not None and (frame.f_code is g[17] or frame.f_code is g[24]):   # the guard's own parse
        return None
    src, fn = args[0], args[1]
    t = _type(src)
    data = src if t is _bytes else _bytes(src) if t in _views else \
        _str.encode(src, "utf-8", "surrogatepass") if t is _str else None
    named = _type(fn) is _str
    rel = None
    for pre in sub if named else ():
        if fn.startswith(pre):
            rel = fn[_len(pre):]
            break
    if rel is not None:
        want = digests.get(rel)
        if want is None:
            return "compiles %s, a file the static scan did not read" % rel
        if want.startswith("codec:"):
            return ("compiles %s, which declares the %s codec: decoded through a codec registry the "
                    "model's process can change, not necessarily as the scan read it" % (rel, want[6:]))
        if data is None or _sha(data).hexdigest() != want:
            return "compiles text under the name %s that is not the file the static scan read" % rel
        return None
    if named and data is not None and fn.startswith(roots) and _read(fn, _len(data) + 1, g[13]) == data:
        return None
    text = None
    if data is not None:
        try:
            text = _bytes.decode(data, "utf-8")
        except _base:
            text = None
        if text is not None and (_inert(text) is not None or _nt(text) is not None):
            return None
    f = frame
    while f is not None and f.f_code.co_filename.startswith("<frozen importlib"):
        f = f.f_back
    if f is not None:
        code = f.f_code
        if code in gen_codes and _dataclass(f, g) and _called(f, g[14], g[15]):
            return None
        if code is g[12] and _type(_dict.get(f.f_locals, "flags")) is _int \
                and _dict.get(f.f_locals, "flags") & 0x400 and _called(f, g[14], g[15]):   # a tree only
            if text is not None and _treeok(text, f.f_back, g):
                return None
            return ("parses text into a tree (ast.parse in %s) that is no literal, no builtin's text "
                    "signature and no definition of a file the static scan read or of the installation"
                    % (f.f_back.f_code.co_name[:40] if f.f_back is not None else "?"))
        if code.co_filename.startswith(roots) and _called(f, g[14], g[15]) \
                and _blame(frame, g) == "library":
            if text is not None and _shape(text, g) is not None:
                if _linked(f, g):
                    return None
                return ("compiles text during a library's import (%s in ...%s) through a call no "
                        "frame's source spells (a forwarder under a name a library calls)"
                        % (code.co_name[:40], code.co_filename[-48:]))
            return ("compiles text during a library's import (%s in ...%s) that is none of the shapes "
                    "of import-time code generation the guard accepts (text from state the model can "
                    "plant)" % (code.co_name[:40], code.co_filename[-48:]))
    return "compiles text that is no file the static scan read (%s)" % (fn if named else _type(fn).__name__)[:160]


def _guard_marshal(args, frame, g, _type=type, _str=str, _bytes=bytes, _len=len, _dict=dict,
                   _mv=memoryview, _read=_guard_read):
    """None for importlib reading a .pyc of the installation (bytes equal to the file); else the
    reason.  (No allowance for a library's import: none of the installation unmarshals while
    importing, and a builtin the model rebound to functools.partial(marshal.loads, DATA) would be
    called by a library module's body -- issue 23's red team.)"""
    sub, roots, bytecode = g[0], g[2], g[9]
    path = None
    if frame is not None and frame.f_code is bytecode and args:
        path = _dict.get(frame.f_locals, "bytecode_path")
        data = args[0]
        if _type(path) is _str and path.startswith(roots) and _type(data) in (_bytes, _mv):
            data = _bytes(data)
            disk = _read(path, _len(data) + 17, g[13])
            if disk is not None and disk[16:] == data:
                return None
    named = " (%s)" % (path[_len(sub[0]):] if path.startswith(sub[0]) else path)[-160:] if _type(path) is _str else ""
    return "loads code with marshal that is no .pyc of the Python installation" + named


def _guard_written(event, args, g, _type=type, _str=str, _bytes=bytes, _int=int, _len=len,
                   _flags=GUARD_WRITE_FLAGS, _fsdecode=_os.fsdecode, _fspath=_os.fspath,
                   _getcwd=_os.getcwd, _join="/".join):
    """The reason when an open-for-writing, rename, link or symlink lands in the installation or
    the grader's files (or names its target through an object the guard cannot read); else None."""
    if event == "open":
        if _len(args) >= 3 and _type(args[2]) is _int and not args[2] & _flags:
            return None
        path = args[0]
    else:
        path = args[1] if _len(args) >= 2 else None
    t = _type(path)
    if t is _int:
        return None
    p = path if t is _str else _fsdecode(path) if t is _bytes else _fspath(path) if t in g[10] else None
    if _type(p) is not _str:
        return "%s: a target path the guard cannot read (%s)" % (event, t.__name__)
    if not p.startswith("/"):
        p = _getcwd() + "/" + p
    parts = []
    for part in p.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    p = "/" + _join(parts)
    if (p + "/").startswith(g[4]):
        return "%s: writes into the Python installation or the grader's files (%s)" % (event, p[:160])
    return None


def _guard_library_call(event, args, frame, g, _type=type, _str=str, _called=_guard_called):
    """A library import's ctypes/code event as the installation raises it: dlopen of a library of
    the installation (or a bare soname the loader finds in the system's folders), code.replace
    called by that name -- not a builtin the model rebound to a partial of CDLL or CodeType."""
    if event == "ctypes.dlopen":
        name = args[0] if args else None
        return name is None or _type(name) is _str and ("/" not in name or name.startswith(g[2]))
    if event == "code.__new__":
        return frame is not None and _called(frame, g[16], g[15])
    return True


def _guard_via_loader(frame, g, _depth=4):
    """True when the driver's extension loader (_GuardExtensionLoader.create_module) is among the
    innermost frames of the event (create_dynamic's `import`, or the loader's own event)."""
    f = frame
    while f is not None and _depth > 0:
        if f.f_code is g[23]:
            return True
        f = f.f_back
        _depth -= 1
    return False


def _guard_judge(event, args, frame, g, _type=type, _str=str, _len=len, _compile=_guard_compile,
                 _marshal=_guard_marshal, _written=_guard_written, _blame=_guard_blame,
                 _where=_guard_where, _process=GUARD_PROCESS, _introspect=GUARD_INTROSPECT,
                 _writes=GUARD_WRITES, _attrs=GUARD_FUNC_ATTRS, _fn=_types.FunctionType,
                 _code_of=_types.FunctionType.__code__.__get__, _lib_ok=GUARD_LIBRARY_IMPORT_OK,
                 _lib_call=_guard_library_call, _spawners=GUARD_NATIVE_SPAWNERS,
                 _interpreters=GUARD_INTERPRETERS, _refused=GUARD_NATIVE_REFUSED,
                 _embedded=GUARD_EMBEDDED, _via_loader=_guard_via_loader,
                 _tcl=GUARD_NATIVE_INTERPRETERS, _by_driver=GUARD_LOADED_BY_DRIVER,
                 _pinned=GUARD_ENV_PINNED, _bytes=bytes):
    """None when the event is allowed, else (reason, first frame of the submission, refuse)."""
    reason, refuse = None, False
    if event == "import":
        name = args[0] if args and _type(args[0]) is _str else None
        path = args[1] if _len(args) >= 2 and _type(args[1]) is _str else None   # an extension's file
        if name is None or name.rpartition(".")[2] in _spawners:
            reason, refuse = "loads a fresh copy of %s (process creation with no audit event)" % (
                name or "a module the guard cannot name")[:160], True
        elif name.rpartition(".")[2] in _refused:
            reason, refuse = "loads %s (CPython's C test module: a sub-interpreter with no audit " \
                "event)" % name[:160], True
        elif name.rpartition(".")[2] in _tcl:
            reason, refuse = "loads %s (an embedded interpreter, %s: it computes from text no compile " \
                "event covers)" % (name[:160], "Tcl" if name.endswith("_tkinter") else
                                   "terminfo's parameterized strings"), True
        elif path is not None and (not path.startswith(g[2]) or "/../" in path or "/./" in path):
            reason, refuse = "loads native code from outside the Python installation (the extension " \
                "module %s)" % path[-160:], True
        elif path is not None and name.rpartition(".")[2] in _by_driver and not _via_loader(frame, g, 1):
            reason, refuse = "creates the extension module %s outside the driver's loader (torch._C's " \
                "TorchScript text entry points, h5py.h5pl's plugin folders would not be refused)" % name[:160], True
    elif event == "os.putenv" or event == "os.unsetenv":
        key = args[0] if args else None
        key = _bytes.decode(key, "utf-8", "replace") if _type(key) is _bytes else key
        if _type(key) is not _str or key in _pinned:
            reason, refuse = "sets %s (libhdf5 would load native plugins from a folder the model " \
                "chose)" % (key if _type(key) is _str else "an environment variable the guard cannot " \
                            "read")[:160], True
    elif event == "modchallenge.guard.h5plugin":
        reason, refuse = "adds an HDF5 plugin folder (%s: libhdf5 loads native code from it with no " \
            "event)" % (args[0] if args and _type(args[0]) is _str else "?")[:160], True
    elif event == "modchallenge.guard.torchscript":
        reason, refuse = "compiles TorchScript from text or a serialized archive in native code (%s)" % (
            args[0] if args and _type(args[0]) is _str else "?")[:160], True
    elif event in _interpreters:
        reason, refuse = "creates a sub-interpreter, where no audit hook of this one runs (%s): " \
            "refused" % event, True
    elif event in _embedded:
        reason = "runs text in an embedded interpreter (%s: SQL computes from text no scan reads as code)" % event
    elif event == "compile":
        reason = _compile(args, frame, g)
    elif event == "marshal.loads" or event == "marshal.load":
        reason = _marshal(args, frame, g)
    elif event == "pickle.find_class":
        key = args[0] + "." + args[1] if _type(args[0]) is _str and _type(args[1]) is _str else None
        if key is None or g[11](key) is None:          # a library's import too (see _guard_marshal)
            reason = "unpickles the global %s, outside the weights-only allowlist" % (key or "?")[:160]
    elif event in _process:
        reason = "starts a process (%s)" % event
    elif event.startswith("socket."):
        reason = "uses a socket (%s)" % event
    elif event in _writes:
        reason = _written(event, args, g)
    elif event == "object.__setattr__":
        if _len(args) >= 2 and _type(args[0]) is _fn and _type(args[1]) is _str and args[1] in _attrs \
                and _code_of(args[0]).co_filename == g[1]:
            reason = "replaces %s of a function of the grader's driver" % args[1]
    elif event in _introspect or event.startswith("ctypes.") or event == "code.__new__":
        if event not in _lib_ok or _blame(frame, g) != "library" or not _lib_call(event, args, frame, g):
            refuse = event in _introspect
            reason = ("walks the interpreter's object graph or other threads' frames (%s): refused"
                      % event if refuse else "calls native code through ctypes (%s)" % event
                      if event.startswith("ctypes.") else "builds a code object (code.__new__)")
    if reason is None:
        return None
    return reason, _where(frame, g), refuse


def _guard_line(tok, mode, n, event, reason, where, _str=str, _table=_GUARD_ESCAPE):
    """One result-pipe line, JSON built here (no library the model can reach)."""
    out = []
    for s in (event, reason, where):
        out.append(_str.encode(_str.translate(_str(s)[:400], _table), "ascii", "replace"))
    return (b'{"token": "' + tok + b'", "body": {"event": "guard", "mode": "' + mode + b'", "n": '
            + _str.encode(_str(n)) + b', "what": "' + out[0] + b'", "reason": "' + out[1]
            + b'", "where": "' + out[2] + b'"}}\n')


def _guard_write(fd, ident, lines, _fstat=_os.fstat, _write=_os.write, _join=b"".join,
                 _base=BaseException):
    """Write the lines to the result pipe, if the descriptor is still the runner's; True when done."""
    try:
        st = _fstat(fd)
        if (st.st_dev, st.st_ino) != ident:
            return False
        data = _join(lines)
        while data:
            data = data[_write(fd, data):]
        return True
    except _base:
        return False


def _guard_clock(scratch):
    """The file system's own clock now (ns): the status-change time of a file created here (file
    times come from a coarser clock than time.time_ns, which can run a few ms ahead of it)."""
    marker = _os.path.join(scratch, ".guard-clock-%d" % _os.getpid())
    try:
        _os.close(_os.open(marker, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o600))
        try:
            return _os.stat(marker).st_ctime_ns
        finally:
            _os.unlink(marker)
    except OSError:
        return _time.time_ns() - 50_000_000


def _guard_script_define(self, *args, _audit=_sys.audit, _err=RuntimeError, **kwargs):
    """torch._C.ScriptModule._define: the hook compiles the container texts of GUARD_SCRIPT_DEFINE
    with the original it alone holds; anything else raises the TorchScript finding there."""
    if kwargs:
        _audit("modchallenge.guard.torchscript", "torch._C.ScriptModule._define")
        raise _err("modchallenge grader: torch._C.ScriptModule._define (TorchScript from text) is refused")
    _audit("modchallenge.guard.script_define", self, args)


def _guard_script_text_ok(src, _type=type, _str=str, _texts=GUARD_SCRIPT_DEFINE, _len=len):
    """True for torch's container texts only: `def __len__(self):\n   return N\n` (N decimal
    digits) or the empty ModuleDict's `__contains__` returning False."""
    if _type(src) is not _str or _len(src) > 80:
        return False
    if src == _texts[1]:
        return True
    head = _texts[0]
    if not src.startswith(head) or not src.endswith("\n"):
        return False
    digits = src[_len(head):-1]
    if not 0 < _len(digits) <= 12:
        return False
    for c in digits:
        if not "0" <= c <= "9":
            return False
    return True


def _guard_install(cfg, _addhook=_sys.addaudithook, _getframe=_sys._getframe, _judge=_guard_judge,
                   _line=_guard_line, _write=_guard_write, _events=GUARD_EVENTS,
                   _prefixes=GUARD_PREFIXES, _type=type, _str=str, _err=RuntimeError,
                   _flushes=frozenset({"modchallenge.guard.flush", "cpython._PySys_ClearAuditHooks"}),
                   _verr=ValueError, _base=BaseException, _kill=_os.kill, _getpid=_os.getpid,
                   _torch=GUARD_TORCH, _len=len, _via_loader=_guard_via_loader,
                   _text_ok=_guard_script_text_ok, _tuple=tuple):
    """Add the audit hook (it cannot be removed; its state lives in this closure only)."""
    sub = _os.path.join(_REQ["submission_dir"], "")
    real = _os.path.join(_os.path.realpath(sub), "")
    subs = (sub,) if real == sub else (sub, real)    # a model may name its folder by either path
    scratch = _os.path.join(_REQ["scratch_dir"], "")
    here = _guard_install.__code__.co_filename
    driver_dir = _os.path.join(_os.path.dirname(here), "")
    roots = set()
    for p in [_sys.prefix, _sys.base_prefix, _sys.exec_prefix, _sys.base_exec_prefix] + _sys.path:
        if _type(p) is _str and _os.path.isabs(p):
            for q in (_os.path.join(p, ""), _os.path.join(_os.path.realpath(p), "")):
                if not (q.startswith(subs + (scratch,)) or any(pre.startswith(q) for pre in subs)
                        or scratch.startswith(q)):
                    roots.add(q)
    roots.add(driver_dir)
    _b = vars(_sys.modules["builtins"])              # eval/exec/compile as they are before the submission
    gen = tuple(c.__code__ for c in (getattr(_dataclasses, "_create_fn", None),
                                     getattr(getattr(_dataclasses, "_FuncBuilder", None),
                                             "add_fns_to_class", None)) if c is not None)
    g = (subs, here, tuple(sorted(roots)), _types.MappingProxyType(dict(cfg["digests"])),
         tuple(sorted(roots)), gen, _dataclasses._process_class.__code__, _dataclasses.Field,
         _dataclasses.Field.__dict__["name"].__get__, _ilx._compile_bytecode.__code__,
         (_pathlib.PurePosixPath, _pathlib.PosixPath), _re.compile(cfg["pickle_globals"]).fullmatch,
         _ast.parse.__code__, _guard_clock(scratch),
         _types.MappingProxyType({n: _b[n] for n in GUARD_COMPILERS}),
         (_opcode.opmap["LOAD_GLOBAL"], _opcode.opmap["LOAD_NAME"], _opcode.EXTENDED_ARG,
          frozenset(op for name, op in _opcode.opmap.items() if name.startswith("LOAD_")), 1,
          frozenset(_opcode.opmap[n] for n in ("LOAD_ATTR", "LOAD_METHOD") if n in _opcode.opmap),
          1 if _sys.version_info >= (3, 12) else 0),
         _types.MappingProxyType({"replace": None}), _guard_shape.__code__,
         frozenset(_sys.builtin_module_names), tuple(_ilx.EXTENSION_SUFFIXES),
         _types.MappingProxyType({n: getattr(_ast, n) for n in GUARD_SHAPE_NODES}),
         _ast.AST.__dict__["__dict__"].__get__, _b, _GuardExtensionLoader.create_module.__code__,
         _guard_tree.__code__, _types.MappingProxyType({n: getattr(_ast, n) for n in GUARD_TREE_NODES}),
         {})                           # the tree-only rule's cache: file digest -> its definitions by name
    _patch = _guard_torch_patch
    tok, mode = _str.encode(_CH["tok"]), _str.encode(_REQ["mode"])
    fd = _CH["out"]
    st = _os.fstat(fd)
    ident = (st.st_dev, st.st_ino)
    spare = _os.dup(fd)                 # the hook's own copy of the result pipe (not inherited)
    limit = int(cfg["max_reports"])
    pending, count, cu_init = (), 0, (None, None)

    def hook(event, args):
        nonlocal pending, count, cu_init
        if _type(event) is not _str or event not in _events and not event.startswith(_prefixes):
            return
        verdict = None
        if event == "modchallenge.guard.script_define":      # a container's __len__/__contains__
            call = args[1] if _len(args) == 2 else None
            if (cu_init[1] is not None and _type(call) is _tuple and _len(call) == 3
                    and _text_ok(call[1])):
                cu_init[1](args[0], call[0], call[1], call[2])
                return
            event, args = "modchallenge.guard.torchscript", ("torch._C.ScriptModule._define",)
        if event in _torch:
            if event == "modchallenge.guard.cu_init":        # an empty CompilationUnit, no text
                if cu_init[0] is not None and _len(args) == 1:
                    cu_init[0](args[0])
                return
            if _len(args) != 1 or not _via_loader(_getframe(1), g, 1):
                return
            try:                                               # torch._C, just created
                cu_init = _patch(args[0], cu_init)
                return
            except _base:
                verdict = ("the guard could not put its stubs in torch._C: fails closed", "?", True)
        elif event not in _flushes:
            try:
                try:
                    frame = _getframe(1)
                except _verr:                        # raised with no Python frame (a C thread)
                    frame = None
                verdict = _judge(event, args, frame, g)
            except _base:
                verdict = ("the guard could not judge this event: fails closed", "?", False)
        if verdict is not None:
            count += 1
            if count <= limit:
                pending += (_line(tok, mode, count, event, verdict[0], verdict[1]),)
        if pending and (_write(fd, ident, pending) or _write(spare, ident, pending)):
            pending = ()
        if verdict is not None and pending:
            # neither descriptor is the runner's pipe any more (the model moved it, e.g. pointed the
            # driver's _CH["out"] at a copy and put /dev/null in its place): a finding that cannot
            # be delivered ends the run here, before the event's operation runs (fails closed)
            _kill(_getpid(), 9)
        if verdict is not None and verdict[2]:
            raise _err("modchallenge grader: %s is refused in the model's process" % event)

    _addhook(hook)


def _guard_fork_exec(*args, _audit=_sys.audit, _err=RuntimeError):
    """In place of _posixsubprocess.fork_exec (which raises no audit event): a guard finding."""
    _audit("modchallenge.guard.fork_exec")
    raise _err("modchallenge grader: _posixsubprocess.fork_exec is refused in the model's process")


def _guard_spawners(stub):
    """Load the modules that start processes without an audit event and put `stub` in place of
    their entry points, here and wherever a module already bound them (subprocess's _fork_exec)."""
    for name in GUARD_NATIVE_SPAWNERS:
        try:
            mod = _il.import_module(name)
        except ImportError:
            continue
        real = getattr(mod, "fork_exec", None)
        if real is None:
            continue
        for m in list(_sys.modules.values()):
            d = getattr(m, "__dict__", None)
            if type(d) is dict:
                for k, v in list(d.items()):
                    if v is real:
                        d[k] = stub
        del real


def _guard_torch_stub(name, _audit=_sys.audit, _err=RuntimeError):
    """A refusing stand-in for torch._C's `name`: raises modchallenge.guard.torchscript (a finding)."""
    def refused(*args, **kwargs):
        _audit("modchallenge.guard.torchscript", "torch._C." + name)
        raise _err("modchallenge grader: torch._C.%s (TorchScript from text) is refused" % name)
    refused.__name__ = name
    return refused


def _guard_cu_init(self, *args, _audit=_sys.audit, _err=RuntimeError, **kwargs):
    """torch._C.CompilationUnit.__init__: no argument (an empty unit, built by the hook, the only
    holder of the original __init__); CompilationUnit(TEXT) compiles TEXT in C++: refused."""
    if args or kwargs:
        _audit("modchallenge.guard.torchscript", "torch._C.CompilationUnit(TEXT)")
        raise _err("modchallenge grader: CompilationUnit(TEXT) (TorchScript from text) is refused")
    _audit("modchallenge.guard.cu_init", self)


def _guard_h5pl_stub(name, _audit=_sys.audit, _err=RuntimeError):
    """A refusing stand-in for h5py.h5pl's `name`: raises modchallenge.guard.h5plugin (a finding)."""
    def refused(*args, **kwargs):
        _audit("modchallenge.guard.h5plugin", "h5py.h5pl." + name)
        raise _err("modchallenge grader: h5py.h5pl.%s (a native plugin folder) is refused" % name)
    refused.__name__ = name
    return refused


def _guard_torch_patch(module, held, _names=GUARD_TORCH_TEXT, _methods=GUARD_TORCH_METHODS,
                       _stub=_guard_torch_stub, _init=_guard_cu_init, _sdef=_guard_script_define,
                       _vars=vars, _dict=dict,
                       _isinstance=isinstance, _type=type, _setattr=setattr, _h5pl=GUARD_H5PL,
                       _h5stub=_guard_h5pl_stub, _str=str):
    """Put the stubs in place of torch._C's text entry points in the module just created (run by
    the hook, from the driver's loader); returns (the original CompilationUnit.__init__, the
    original ScriptModule._define), kept in the hook's closure only, or `held` where an earlier
    module gave them.  In h5py.h5pl, the functions that add or replace a plugin folder."""
    d = _vars(module)
    mod_name = _dict.get(d, "__name__")
    if _type(mod_name) is _str and mod_name.rpartition(".")[2] == "h5pl":
        for name in _h5pl:
            if _dict.__contains__(d, name):
                d[name] = _h5stub(name)
        return held
    for name in _names:
        if _dict.__contains__(d, name):
            d[name] = _stub(name)
    init, define = held
    for cls_name, meth in _methods:
        cls = _dict.get(d, cls_name)
        if _isinstance(cls, _type) and meth in cls.__dict__:
            if cls_name == "ScriptModule" and meth == "_define" and define is None:
                define = cls.__dict__[meth]
                _setattr(cls, meth, _sdef)
            else:
                _setattr(cls, meth, _stub(cls_name + "." + meth))
    cu = _dict.get(d, "CompilationUnit")
    if init is None and _isinstance(cu, _type) and "__init__" in cu.__dict__:
        init = cu.__dict__["__init__"]
        _setattr(cu, "__init__", _init)
    return (init, define)


class _GuardExtensionLoader(_ilx.ExtensionFileLoader):
    """The loader of every extension module named `_C` (torch._C among them): the module it
    creates goes to the hook (modchallenge.guard.torch_c) before anyone else holds it.  An
    extension named `_C` created by any other frame is a refused finding (_guard_judge)."""

    def create_module(self, spec, _audit=_sys.audit, _create=_imp.create_dynamic, _exec=_imp.exec_dynamic,
                      _type=type, _str=str, _vars=vars, _get=dict.get):
        # _imp.create_dynamic called here, bound before the submission: not through super() (a
        # subclass of the model's could put a class in the MRO that returns a decoy to the hook and
        # keeps the real module) nor through _imp's attribute (replaceable); the `import` event is
        # raised in this very frame (_guard_judge asks for it, depth 1)
        module = _create(spec)
        name = _get(_vars(module), "__name__")     # the name the extension was made under
        if _type(name) is _str and name.rpartition(".")[2] == "h5pl":
            _exec(module)     # multi-phase (Cython): filled by its exec, a no-op when run again
        _audit("modchallenge.guard.torch_c", module)
        return module


class _GuardTorchFinder:
    """sys.meta_path[0] while the guard is on: specs of modules named `_C` get the driver's
    loader (the model can remove this finder: then torch._C's import is refused, not unwatched)."""

    @staticmethod
    def find_spec(name, path=None, target=None, _finder=_ilx.PathFinder, _loader=_GuardExtensionLoader,
                  _ext=_ilx.ExtensionFileLoader, _type=type, _str=str, _by_driver=GUARD_LOADED_BY_DRIVER):
        if _type(name) is not _str or name.rpartition(".")[2] not in _by_driver:
            return None
        spec = _finder.find_spec(name, path, target)
        if spec is not None and _type(spec.loader) is _ext:
            spec.loader = _loader(spec.loader.name, spec.loader.path)
        return spec


# The kernel's part of the guard (issue 23 round 5): a seccomp filter, installed before the hook
# (and before anything submitted), that no code of the process can remove.  Native code raises no
# audit event (torch.distributed's TCPStore makes TCP sockets in C++): the filter ends the process
# (SIGSYS, SECCOMP_RET_KILL_PROCESS) at a socket of any family but AF_UNIX, a process (fork,
# vfork, clone without CLONE_THREAD) or a program (execve, execveat), so the socket or process
# never exists and the grader reads the signal as a finding.  clone3 (whose flags the filter
# cannot read) and io_uring_setup (sockets without socket(2)) fail with ENOSYS: glibc starts its
# threads with clone then.  Other architectures' system calls (x32, i386) end the process too.
# (AUDIT_ARCH, socket, socketpair, clone, clone3, killed, io_uring_setup, x32 bit); clone's flags
# are its first argument on both.
GUARD_SYSCALLS = {"x86_64": (0xC000003E, 41, 53, 56, 435, (57, 58, 59, 322), 425, 0x40000000),
                  "aarch64": (0xC00000B7, 198, 199, 220, 435, (221, 281), 425, 0)}


def _guard_kernel_filter():
    """Install the seccomp filter for this process and its threads: (installed, what)."""
    arch = _os.uname().machine
    table = GUARD_SYSCALLS.get(arch)
    if table is None:
        return False, "no system-call table for %s" % arch
    audit_arch, sock, pair, clone, clone3, killed, uring, x32 = table
    KILL, ALLOW, ENOSYS = 0x80000000, 0x7FFF0000, 0x00050000 | 38
    LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06            # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JSET|K, RET|K
    prog = [(LD, 0, 0, 4), (JEQ, 1, 0, audit_arch), (RET, 0, 0, KILL), (LD, 0, 0, 0)]
    if x32:
        prog += [(JSET, 0, 1, x32), (RET, 0, 0, KILL)]
    for nr in (sock, pair):                                 # family (args[0], low word) AF_UNIX only
        prog += [(JEQ, 0, 4, nr), (LD, 0, 0, 16), (JEQ, 1, 0, 1), (RET, 0, 0, KILL), (RET, 0, 0, ALLOW)]
    prog += [(JEQ, 0, 4, clone), (LD, 0, 0, 16), (JSET, 1, 0, 0x10000), (RET, 0, 0, KILL),
             (RET, 0, 0, ALLOW)]                            # CLONE_THREAD: a thread
    for nr in (clone3, uring):
        prog += [(JEQ, 0, 1, nr), (RET, 0, 0, ENOSYS)]
    for nr in killed:
        prog += [(JEQ, 0, 1, nr), (RET, 0, 0, KILL)]
    prog.append((RET, 0, 0, ALLOW))
    try:
        import ctypes
        import struct
        code = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *i) for i in prog))

        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        fprog = Prog(len(prog), ctypes.addressof(code))
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(38, 1, 0, 0, 0) != 0:                 # PR_SET_NO_NEW_PRIVS
            return False, "prctl(PR_SET_NO_NEW_PRIVS): errno %d" % ctypes.get_errno()
        nr_seccomp = {"x86_64": 317, "aarch64": 277}[arch]
        if libc.syscall(nr_seccomp, 2, 0, ctypes.byref(ctypes.c_uint32(KILL))) != 0:  # GET_ACTION_AVAIL
            return False, "the kernel has no SECCOMP_RET_KILL_PROCESS (errno %d)" % ctypes.get_errno()
        # SET_MODE_FILTER, flags TSYNC (every thread) | SPEC_ALLOW: where the kernel mitigates
        # speculative store bypass for seccomp'd tasks (its default on many hosts) it would slow the
        # model's stores; the process had no such mitigation before the filter either (Linux < 4.17
        # knows no SPEC_ALLOW: TSYNC alone)
        if libc.syscall(nr_seccomp, 1, 1 | 4, ctypes.byref(fprog)) != 0 and \
                libc.syscall(nr_seccomp, 1, 1, ctypes.byref(fprog)) != 0:
            return False, "seccomp(SECCOMP_SET_MODE_FILTER): errno %d" % ctypes.get_errno()
        return True, "%d BPF instructions, %s" % (len(prog), arch)
    except Exception as exc:
        return False, "%s: %s" % (type(exc).__name__, str(exc)[:200])


def send(obj, _send=send, _audit=_sys.audit):
    """The prologue's send, after the guard wrote what it still holds (the flush event)."""
    _audit("modchallenge.guard.flush")
    _send(obj)


def ask(obj, _ask=ask, _audit=_sys.audit):
    """The prologue's ask, after the guard wrote what it still holds."""
    _audit("modchallenge.guard.flush")
    return _ask(obj)


class _SourceOnlyLoader(_ilx.SourceFileLoader):
    """The submission's .py files compiled from their source, never from a __pycache__ the
    submission ships (a valid one is what running the model locally leaves behind; its code
    could be anything: the guard fails it).  No source stats: importlib neither reads nor writes
    bytecode for them."""

    def path_stats(self, path):
        raise OSError("bytecode caching is off for the submission")


def _submission_finder(path, _sub=_os.path.join(_os.path.realpath(_REQ["submission_dir"]), "")):
    """sys.path hook: a FileFinder with _SourceOnlyLoader for folders of the submission (the
    model can remove it: then a .pyc it ships is unmarshalled, a guard finding)."""
    full = _os.path.join(_os.path.realpath(_os.path.abspath(path or ".")), "")
    if not full.startswith(_sub) or not _os.path.isdir(full):     # a zip goes to zipimport (judged)
        raise ImportError("not a folder of the submission")
    return _ilx.FileFinder(path, (_ilx.ExtensionFileLoader, _ilx.EXTENSION_SUFFIXES),
                           (_SourceOnlyLoader, _ilx.SOURCE_SUFFIXES),
                           (_ilx.SourcelessFileLoader, _ilx.BYTECODE_SUFFIXES))


def _platform_processor():
    """platform.processor() runs `uname -p` in a process the first time it is asked (h5py's import
    asks: a finding, though honest); asked here, before the guard, its answer is cached for the
    model's process.  None when the answer cannot be had (no uname in the sandbox)."""
    try:
        import platform
        return platform.uname().processor
    except Exception:
        return None


def _uuid_node():
    """uuid.uuid1()/getnode() ask libuuid, whose first call opens an AF_INET socket to read a MAC
    address (an ioctl; the socket is never connected): under the kernel filter an honest model's
    uuid1() was SIGSYS, a FAIL (round 5's red team).  Asked here, before the filter: libuuid and
    uuid keep the node for the process.  Nothing when uuid cannot be had."""
    try:
        __import__("_uuid")   # without libuuid, getnode would run ip/ifconfig: not here
        import uuid
        uuid.getnode()
        uuid.uuid1()
    except Exception:
        pass


if _REQ.get("guard") is not None:
    _platform_processor()
    _uuid_node()
    _os.environ["HDF5_PLUGIN_PATH"] = ""         # no plugin folder for libhdf5 (GUARD_ENV_PINNED)
    _guard_spawners(_guard_fork_exec)
    _ok, _what = _guard_kernel_filter()
    send({"event": "kernel_filter", "installed": _ok, "what": _what})
    _sys.meta_path.insert(0, _GuardTorchFinder)
    _guard_install(_REQ.pop("guard"))
    _sys.path_hooks.insert(0, _submission_finder)
    for _p in list(_sys.path_importer_cache):
        try:
            _submission_finder(_p)
            del _sys.path_importer_cache[_p]
        except ImportError:
            pass


def _short(exc):
    return (type(exc).__name__ + ": " + str(exc))[:300]


def _pack(out):
    if not isinstance(out, list):
        return {"m": "output is " + type(out).__name__ + ", not a list"}
    digits = []
    for i, d in enumerate(out):
        if isinstance(d, bool) or not isinstance(d, int):
            return {"m": "digit %d has type %s" % (i, type(d).__name__)}
        d = int.__index__(d)
        if d.bit_length() > _REQ["max_digit_bits"]:
            return {"m": "digit %d wider than any base" % i}
        digits.append(d)
    k = 0
    while k < len(digits) and digits[k] == 0:
        k += 1
    digits = digits[k:]
    if len(digits) > _REQ["max_digits"]:
        return {"m": "%d significant digits: larger than any answer" % len(digits)}
    return digits


def _run_batch(model, batch):
    """(packed outputs, None) or (None, reason) for a batch-length violation."""
    try:
        enc = [(model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p)) for a, b, p in batch]
        res = model.predict_digits_batch(enc)
        if len(res) != len(batch):
            return None, "predict_digits_batch returned %d results for %d inputs" % (len(res), len(batch))
        return [_pack(r) for r, _ in zip(res, batch)], None
    except Exception as exc:
        return [{"m": "raised " + _short(exc)}] * len(batch), None


def _batch_size(model):
    """max_batch_size() as the harness uses it (any integer, numpy's too); anything else is 1."""
    try:
        n = model.max_batch_size()
        if isinstance(n, bool):
            return 1
        return max(1, min(int.__index__(_op.index(n)), 1 << 20))
    except Exception:
        return 1


def _det_pass(model, label, sample, bs):
    outs = []
    for i in range(0, len(sample), bs):
        got, bad = _run_batch(model, sample[i:i + bs])
        if bad:
            send({"event": "det", "pass": label, "error": bad})
            return
        outs.extend(got)
    send({"event": "det", "pass": label, "outputs": outs})


def _same(x, y):
    """Equal encodings: ==, arrays all equal with one shape, or the same pickled content (custom
    objects without __eq__), or the same repr."""
    try:
        r = x == y
        if isinstance(r, bool) and r:
            return True
        if not isinstance(r, bool) and hasattr(r, "all"):
            return bool(r.all()) and getattr(x, "shape", None) == getattr(y, "shape", None)
    except Exception:
        pass
    try:
        if type(x) is type(y) and _pickle.dumps(x, 4) == _pickle.dumps(y, 4):
            return True
    except Exception:
        pass
    try:
        return type(x) is type(y) and repr(x) == repr(y)
    except Exception:
        return False


def _snap(x):
    """A copy taken when a hook returns: an encoding the model mutates later cannot be made to
    match a later call after the fact."""
    try:
        return _copy.deepcopy(x)
    except Exception:
        return x


def _isolation(model, pairs):
    pa, pb, pp = model.preprocess_a, model.preprocess_b, model.preprocess_p
    for (a, b, p), (a2, b2, p2) in pairs:
        first = (_snap(pa(a)), _snap(pb(b)), _snap(pp(p)))
        pa(a2); pb(b2); pp(p2)
        again = (pa(a), pb(b), pp(p))              # the harness's sequence
        pa(a2)
        eb = pb(b)                                   # after another a
        pb(b2)
        ep = pp(p)                                   # after another a and b
        pp(p2)
        ea = pa(a)                                   # after another p
        names = ("preprocess_a", "preprocess_b", "preprocess_p")
        for k in range(3):
            if not _same(first[k], again[k]):
                return names[k] + " gave a different result for the same input when called again"
        for name, x, y, other in (("preprocess_b", first[1], eb, "preprocess_a"),
                                  ("preprocess_p", first[2], ep, "preprocess_a/_b"),
                                  ("preprocess_a", first[0], ea, "preprocess_p")):
            if not _same(x, y):
                return name + " changed after " + other + " saw another argument (cross-argument state)"
    return ""


t0 = _time.monotonic()
try:
    _mod, _, _cls = _REQ["entry_class"].rpartition(".")
    try:
        _entry = _il.import_module(_mod)
        report_runtime()        # the versions the submission's import loaded (torch, numpy, ...)
        cls = getattr(_entry, _cls)
    except (ImportError, AttributeError) as exc:
        send({"event": "load_failed", "reason": "cannot import entry_class " + _REQ["entry_class"] + ": " + _short(exc)})
        raise SystemExit(0)
    if not (isinstance(cls, type) and issubclass(cls, _Base)):
        send({"event": "load_failed", "reason": _REQ["entry_class"] + " is not a subclass of "
              "modchallenge.interface.base_model.ModularMultiplicationModel"})
        raise SystemExit(0)
    model = cls()
    model.load(_REQ["submission_dir"])
except SystemExit:
    raise
except BaseException as exc:
    send({"event": "load_failed", "reason": "raised while loading: " + _short(exc)})
    raise SystemExit(0)
send({"event": "loaded", "seconds": _time.monotonic() - t0})
bs = _batch_size(model)

def _audit(model, pairs, where, _send=send):
    """Isolation re-checked inside this (the inference) process, after predictions ran, with
    probe problems that look like the stream's: for a pair x, y of problems with one prime, the
    triples (xa, xb, p), (ya, xb, p), (xa, yb, p) go through the hooks and predict_digits_batch
    in batches as usual (answers discarded); each hook must give one encoding of its argument
    whatever the other arguments were."""
    probes = []
    for x, y in pairs:
        probes += [(x[0], x[1], x[2]), (y[0], x[1], y[2]), (x[0], y[1], x[2])]
    snaps = []
    try:
        for i in range(0, len(probes), bs):
            enc = []
            for a, b, p in probes[i:i + bs]:
                e = (model.preprocess_a(a), model.preprocess_b(b), model.preprocess_p(p))
                enc.append(e)
                snaps.append(tuple(_snap(v) for v in e))
            try:
                model.predict_digits_batch(enc)
            except Exception:
                pass
        reason = ""
        for k in range(0, len(snaps), 3):
            t1, t2, t3 = snaps[k:k + 3]
            for name, x, y, other in (("preprocess_b", t1[1], t2[1], "preprocess_a/_p"),
                                      ("preprocess_a", t1[0], t3[0], "the hooks before it"),
                                      ("preprocess_p", t1[2], t3[2], "preprocess_b")):
                if not reason and not _same(x, y):
                    reason = (name + " gave another encoding of the same argument once " + other +
                              " had seen other arguments (cross-argument state)")
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    _send({"event": "audit", "where": where, "reason": reason})


def _after_batch(model, where, _ask=ask):
    """Ask the grader whether to audit now: the decision is the grader's, made when asked."""
    reply = _ask({"event": "batch"})
    if isinstance(reply, dict) and reply.get("audit"):
        _audit(model, reply["audit"], where)


if _REQ["mode"] == "check":
    try:
        reason = _isolation(model, _REQ["iso_pairs"])
    except Exception as exc:
        reason = "a preprocess hook raised: " + _short(exc)
    send({"event": "isolation", "reason": reason})
    for label in ("A", "B"):
        try:
            _det_pass(model, label, _REQ["det_sample"], bs)
        except Exception as exc:
            send({"event": "det", "pass": label, "error": "raised " + _short(exc)})
elif _REQ["mode"] == "recheck":
    _plan = ask({"event": "plan", "batch_size": bs}) or {}
    _cases = _plan.get("cases", [])
    outs, bad = [], None
    for i in range(0, len(_cases), bs):
        got, bad = _run_batch(model, _cases[i:i + bs])
        if bad:
            break
        outs.extend(got)
    send({"event": "recheck", "error": bad} if bad else {"event": "recheck", "outputs": outs})
else:
    try:
        _det_pass(model, "C", _REQ["det_sample"], bs)
    except Exception as exc:
        send({"event": "det", "pass": "C", "error": "raised " + _short(exc)})
    send({"event": "ready", "batch_size": bs})
    _TIERS = ask({"event": "plan", "batch_size": bs})   # the test set arrives only now, clock running
    for tid, cases in (_TIERS or {}).get("tiers", []):
        outs, bad = [], None
        for i in range(0, len(cases), bs):
            got, bad = _run_batch(model, cases[i:i + bs])
            if bad:
                break
            outs.extend(got)
            if i + bs < len(cases):                # after a tier's last batch: once it is reported
                _after_batch(model, "tier %s, after problem %d" % (tid, i + len(got)))
        if bad:
            send({"event": "tier", "tier": tid, "complete": False, "reason": bad})
        else:
            send({"event": "tier", "tier": tid, "complete": True, "outputs": outs})
            if cases:
                _after_batch(model, "tier %s, after problem %d" % (tid, len(outs)))
    _reply = ask({"event": "end"})
    if isinstance(_reply, dict) and _reply.get("audit"):
        _audit(model, _reply["audit"], "after the last tier")
    send({"event": "done"})
