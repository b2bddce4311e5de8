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


def _emit_cmp(kind, target, other):
    try:
        _emit({"kind": kind, "target": _ser(target), "other": _ser(other)})
    except NotPlainData as exc:
        _emit({"kind": kind, "refused": str(exc)[:300]})
    except RecursionError:
        _emit({"kind": kind, "refused": "nested too deeply to record"})


class _Target:
    """The opaque stand-in bound to `target`: no value, only its place (case, path)."""
    __slots__ = ("_case", "_path")
    __array_ufunc__ = None

    def __init__(self, case, path):
        self._case, self._path = case, path

    def __eq__(self, other):
        _emit_cmp("==", self, other)
        return True

    def __ne__(self, other):
        _emit_cmp("!=", self, other)
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
    numpy.lib.format.write_array(buf, arr, allow_pickle=False)     # any layout; 0-d stays 0-d
    return base64.b64encode(buf.getvalue()).decode("ascii")


class NotPlainData(TypeError):
    """A value that cannot cross as plain data: too large or too deep to convert entirely, or
    a generation's object whose class overrides comparison or numpy hooks.  The case fails
    with this reason (a cap fails closed: nothing past it is ever taken on trust)."""


_MAX_ITEMS = int(_INIT["max_plain_items"])      # items converted per value (then: NotPlainData)
_MAX_NEST = int(_INIT["max_plain_depth"])       # nesting levels per value (then: NotPlainData)
_TYPE = type
_TYPE_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, as the type holds it
_TYPE_MRO = type.__dict__["__mro__"].__get__
_FLAGS = type.__dict__["__flags__"].__get__     # (a metaclass cannot answer for these)
_NAME = type.__dict__["__name__"].__get__
_OBJ_GET = object.__getattribute__
_NP_COPY = numpy.ndarray.copy
_NP_VIEW = numpy.ndarray.view
_COPYTO = numpy.copyto
_NDARRAY, _MATRIX = numpy.ndarray, numpy.matrix
import operator as _operator, collections as _collections, dataclasses as _dataclasses, fractions as _fractions, functools as _functools, types as _types
_FRACTION = _fractions.Fraction
_PARTIAL = _functools.partial
_ARRAY = __import__("array").array
_RANDOM_C = __import__("_random").Random     # random.Random's C base: its state by its own getstate/setstate
_VECTORIZE = numpy.vectorize
_FIELD, _FIELD_KIND = _dataclasses.Field, _dataclasses._FIELD
_MAKE_DATACLASS, _NAMEDTUPLE = _dataclasses.make_dataclass, _collections.namedtuple
_NONE_T = type(None)
_SCALARS = frozenset((_NONE_T, bool, int, float, complex, str, bytes, type(Ellipsis), type(NotImplemented),
                      range)) | frozenset(t for t in numpy.sctypeDict.values() if isinstance(t, type))
_CONTAINERS = (list, tuple, dict, set, frozenset)
_FUNCS = frozenset((_types.FunctionType, _types.MethodType, _PARTIAL, _VECTORIZE,
                    _types.BuiltinMethodType, _functools._lru_cache_wrapper))
_GENERATED_FILES = ("<code ", "<context ")


def _walk_classes(_subs=type.__subclasses__):
    """Every class that exists now, by id (a class made later was made after this)."""
    seen, stack = {}, [object]
    while stack:
        k = stack.pop()
        try:
            subs = _subs(k)
        except TypeError:       # (type itself: its __subclasses__ wants an argument)
            subs = _subs(type, k) if k is type else []
        for s in subs:
            if id(s) not in seen:
                seen[id(s)] = s
                stack.append(s)
    return seen


def _class_state(k):
    return dict(_TYPE_DICT(k))


def _class_same(k, state):
    """A class's namespace holds the very keys and values it held."""
    now = _TYPE_DICT(k)
    return len(now) == len(state) and all(map(_is, now.values(), state.values())) and now.keys() == state.keys()


def _class_changed(k, state):
    """A class's namespace against what it was: an entry replaced or removed, or a new one
    that overrides its bases or is a hook (a cache a library adds, e.g. copyreg's
    __slotnames__, is none of these)."""
    if _class_same(k, state):
        return False
    now = _TYPE_DICT(k)
    for key, val in dict.items(state):
        if now.get(key, _MISSING) is not val:
            return True
    mro = _TYPE_MRO(k)[1:]
    return any(key in _HOOKS or any(key in _TYPE_DICT(b) for b in mro) for key in now.keys() - state.keys())


_MISSING = object()


_PRE = {}                       # the library's classes: every class that existed before any
_PRE_STATE = {}                 # generated code ran, and their namespaces then (filled when the
_WATCHED = {}                   # worker is warm, and after a step's dependency lines): not a table
                                # its code can extend, nor a name it can register
def _learn_classes():
    _learn_sympy()
    for i, k in _walk_classes().items():
        if i not in _PRE:
            _PRE[i] = k
            if _FLAGS(k) & (1 << 9):
                _PRE_STATE[i] = _class_state(k)
                _class_words(i, k)
                if _SY and "default_assumptions" in _TYPE_DICT(k):
                    _SY_CLASSES[i] = _sympy_class_state(k)
                    _sympy_words(i)
    _PRE_MODULES[0] = len(_sys.modules)


_PRE_MODULES = [0]
_CLS_SLOW = []
_CLS_WORDS, _CLS_AT = [None], []     # the version tags of the library classes' namespaces (_Words), and
                                    # for each: the class's id, its namespace (kept: its address is read)


def _class_words(i, k):
    """A library class's namespace's version tag, when its namespace is exactly as recorded
    (_library_classes_changed compares only those whose tag moved since)."""
    if _CLS_WORDS[0] is None:
        _CLS_WORDS[0] = _Words()
    if not _CLS_WORDS[0].ok:
        return
    try:
        ns = _REFERENTS(_TYPE_DICT(k))
    except BaseException:
        ns = None
    state = _PRE_STATE[i]
    if _TYPE(ns) is not list or len(ns) != 1 or _TYPE(ns[0]) is not dict or dict.__len__(ns[0]) != len(state) \
            or not all(map(_is, dict.values(ns[0]), state.values())) or not _class_same(k, state):
        _CLS_SLOW.append(i)     # (compared in Python after each case)
        return
    _CLS_WORDS[0].add(id(ns[0]) + _WORDS["tag"], _DICT_TAG(ns[0]))
    _CLS_AT.append((i, ns[0]))


_REFERENTS = __import__("gc").get_referents
_OWN = {}                       # classes this process made for converted values (namedtuple, dataclass)
_OWN_FUNCS = {}                 # this process's wrappers of generated callables, by id


def _library(k):
    return id(k) in _PRE and _PRE[id(k)] is k


def _watch(k):
    """A library (or own) class whose instances crossed: its namespace, as it was before any
    generated code ran, is checked at every return of generated code (a method replaced on
    the class itself would answer the tests' own arithmetic)."""
    for c in _TYPE_MRO(k):
        if c is not object and id(c) not in _WATCHED and _FLAGS(c) & (1 << 9):
            _WATCHED[id(c)] = (c, _PRE_STATE.get(id(c)) or _class_state(c))


_HOOKS = frozenset(("__array_function__", "__array_ufunc__", "__array__", "__array_interface__",
                    "__array_struct__", "__array_priority__", "__array_wrap__", "__float__",
                    "__complex__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                    "__sub__", "__rsub__", "__abs__", "__bool__", "__len__", "__iter__", "__getitem__",
                    "__array_finalize__", "__add__", "__radd__", "__mul__", "__rmul__", "__truediv__",
                    "__rtruediv__", "__pow__", "__mod__", "__matmul__", "__neg__", "__round__", "__int__",
                    "__index__", "__and__", "__or__", "__invert__", "__getattr__", "__getattribute__",
                    "__del__", "__rpow__", "__floordiv__", "__rfloordiv__", "__rmatmul__", "__pos__",
                    "__contains__", "__missing__", "__reversed__", "__setattr__", "__delattr__",
                    # copy.copy/deepcopy and pickle of a returned object would run these unwrapped
                    "__reduce__", "__reduce_ex__", "__copy__", "__deepcopy__", "__getstate__",
                    "__setstate__", "__getnewargs__", "__getnewargs_ex__",
                    # round 8: the rest of the operators (reflected, bitwise, in-place, rounding,
                    # divmod, bytes): the copy of a hookless object keeps its class, so the tests'
                    # `p += 1`, `math.floor(p)`, `3 % p`, `p ^ 1` ran them unwrapped
                    "__rmod__", "__divmod__", "__rdivmod__", "__xor__", "__rxor__", "__rand__", "__ror__",
                    "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__floor__", "__ceil__",
                    "__trunc__", "__bytes__", "__iadd__", "__isub__", "__imul__", "__imatmul__",
                    "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                    "__ixor__", "__ilshift__", "__irshift__",
                    # (a set or dict of the tests ran it unwrapped with their copy as `self`: it
                    # rewrote the copy; `__hash__ = None`, made by `__eq__`, is none)
                    "__hash__"))


def _hooked(k):
    """The classes of k's MRO made by the generation that override a comparison, arithmetic
    or numpy hook, or hold a descriptor of a kind the wrapping does not convert (a class of
    its own with `__get__`: reading the attribute would run unwrapped code), read from the
    classes' own namespaces, no lookup it can steer."""
    out = [_NAME(c) for c in _TYPE_MRO(k) if c is not object and not _library(c) and id(c) not in _OWN
           and (_own_hooks(_TYPE_DICT(c)) or any(map(_odd_descriptor, _TYPE_DICT(c).values())))]
    meta = _TYPE(k)         # (round 8: its own metaclass answers `type(p).x`, `type(p) > 0` in the tests)
    if meta is not type and meta is not k and _FLAGS(meta) & _HEAP and not _library(meta) and id(meta) not in _OWN:
        out += [n for n in _hooked(meta) if n not in out]
    return out


def _own_hooks(ns):
    """A class namespace holds a hook that is not the grader's own (_guard_dataclass) nor a
    wrapped `__missing__` (its result converted: a dict subclass's default, round 7)."""
    if _HOOKS.isdisjoint(ns):
        return False
    return any(id(ns[h]) not in _GRADER_HOOKS and not (h in _WRAPPED_HOOKS and _is_wrapped(ns[h]))
               and not (h == "__hash__" and ns[h] is None) for h in _HOOKS.intersection(ns))


_WRAPPED_HOOKS = frozenset(("__missing__",))


_PLAIN_DESCRIPTORS = frozenset((_types.FunctionType, staticmethod, classmethod, property, _functools.cached_property,
                                _functools.partialmethod,
                                _types.MemberDescriptorType, _types.GetSetDescriptorType)) | _FUNCS


def _odd_descriptor(x):
    t = _TYPE(x)
    if t in _PLAIN_DESCRIPTORS or t in _SCALARS or id(x) in _OWN_FUNCS:
        return False
    if not any("__get__" in _TYPE_DICT(b) for b in _TYPE_MRO(t) if b is not object):
        return False
    return not _wrapped_descriptor(t)


_DESCRIPTOR_HOOKS = ("__get__", "__set__", "__delete__")


def _wrapped_descriptor(t):
    """A descriptor class of the generation's own (round 7: `__set_name__`/`__get__`/`__set__`,
    a typed attribute): its `__get__`, `__set__` and `__delete__` are wrapped (_wrap_class), so
    an attribute read or write of the tests runs them as any wrapped call (the object and the
    descriptor handed as copies, written back; the value converted).  Not when a library class
    of its MRO defines one of them (a `property` subclass's `__get__` would call its getter
    unwrapped), nor when one is not a plain function (it could not be wrapped)."""
    if not _FLAGS(t) & _HEAP or _library(t) or id(t) in _OWN:
        return False
    _wrap_class(t)
    for b in _TYPE_MRO(t):
        if b is object:
            continue
        ns = _TYPE_DICT(b)
        for h in _DESCRIPTOR_HOOKS:
            if h in ns and (_library(b) or id(b) in _OWN or not _is_wrapped(ns[h])):
                return False
    return True


_VOID = numpy.void


def _void_check(v):
    """A structured scalar whose fields hold objects: each field could be anything."""
    if v.dtype.hasobject:
        raise NotPlainData("a structured numpy value with object fields")


def _dataclass_fields(k):
    for c in _TYPE_MRO(k):
        f = _TYPE_DICT(c).get("__dataclass_fields__")
        if _TYPE(f) is dict:
            return [n for n, x in dict.items(f) if _TYPE(x) is _FIELD and x._field_type is _FIELD_KIND
                    and _TYPE(n) is str]
    return None


def _namedtuple_fields(k):
    if tuple not in _TYPE_MRO(k):
        return None
    for c in _TYPE_MRO(k):
        f = _TYPE_DICT(c).get("_fields")
        if _TYPE(f) is tuple and all(_TYPE(n) is str for n in f):
            return f
    return None


def _own_class(kind, name, fields):
    key = (kind, str(name), tuple(fields))
    cls = _OWN.get(key)
    if cls is None:
        safe = str(name) if str(name).isidentifier() else "Record"
        try:
            cls = _NAMEDTUPLE(safe, fields) if kind == "nt" else _MAKE_DATACLASS(safe, list(fields))
        except (TypeError, ValueError):
            cls = _NAMEDTUPLE(safe, fields, rename=True) if kind == "nt" else \
                _MAKE_DATACLASS(safe, ["f%d" % i for i in range(len(fields))])
        _OWN[key] = cls
        _OWN[id(cls)] = cls
        _PRE_STATE[id(cls)] = _class_state(cls)
        _watch(cls)
    return cls


class _Budget:
    __slots__ = ("items",)

    def __init__(self):
        self.items = 0


def _plain(v, budget=None, depth=0, settling=None):
    """What a generated callable hands to the tests (or to a library they called), as plain
    data by exact type, entirely: a copy built from library types (numbers, strings, lists,
    tuples, dicts, sets, numpy arrays and scalars, sparse matrices, Fractions; a dataclass as
    a dataclass of this process with its fields, a namedtuple as a namedtuple of this process;
    0-d stays 0-d).  Callables come back wrapped.  An object of a Python class (the
    generation's own without hooks, or a library's) comes back as a copy made here, of its
    class, its attributes converted (_copy_instance): the tests never hold what the generation
    kept.  An object of the generation's own class with hooks comes back as a record of its
    fields (_fields_record); one that is also a data type's subclass or has numpy hooks is
    NotPlainData, as is anything too large or too deep.  `settling`: the objects copied so far
    in this value (id -> (original, copy))."""
    budget = budget or _Budget()
    budget.items += 1
    if budget.items > _MAX_ITEMS:
        raise NotPlainData(f"more than {_MAX_ITEMS} items to convert to plain data")
    if depth > _MAX_NEST:
        raise NotPlainData(f"nested deeper than {_MAX_NEST} levels")
    t = _TYPE(v)
    if t is _VOID or (t not in _SCALARS and _VOID in _TYPE_MRO(t)):    # (numpy.record too)
        _void_check(v)
    if t in _SCALARS:
        return v
    if t is _Target:
        raise NotPlainData("_Target, the test's target stand-in, handed back to the tests (the target "
                           "is not in this process)")
    d = depth + 1
    if t is list:
        return [_plain(x, budget, d, settling) for x in list.__iter__(v)]
    if t is tuple:
        return tuple([_plain(x, budget, d, settling) for x in tuple.__iter__(v)])
    if t is dict:
        return {_plain(k, budget, d, settling): _plain(x, budget, d, settling) for k, x in dict.items(v)}
    if t is set or t is frozenset:
        return t([_plain(x, budget, d, settling) for x in (set.__iter__(v) if t is set else frozenset.__iter__(v))])
    if t is bytearray:
        return bytearray(v)
    if t is memoryview:             # (a view of a buffer the generation keeps: a copy)
        return _copy_view(v)
    if t is _ARRAY:                 # (likewise a copy: what the generation kept can change it no more)
        return _ARRAY(_ARRAY.typecode.__get__(v), v)
    if t is _NDARRAY or t is _MATRIX:
        if t is _MATRIX:
            _watch(t)
        if not v.dtype.hasobject:
            budget.items += 1
            return _NP_COPY(v)
        out = _NP_COPY(v)
        flat = _NP_VIEW(out, _NDARRAY).reshape(-1)
        for i in range(flat.shape[0]):
            flat[i] = _plain(flat[i], budget, d, settling)
        return out
    if t is _FRACTION:
        _watch(t)
        return _FRACTION(_plain(_OBJ_GET(v, "_numerator"), budget, d), _plain(_OBJ_GET(v, "_denominator"), budget, d))
    if t in _FUNCS or t is staticmethod or t is classmethod:
        if t is _types.MethodType and settling:     # a bound method of an object copied here: of its copy
            s = settling.get(id(v.__self__))
            if s is not None and s[0] is v.__self__ and s[1] is not _MISSING:
                v = _types.MethodType(v.__func__, s[1])
        w = _wrap(v)
        return _expose(v, w) if w is not v and _TYPE(w) is _types.FunctionType else w
    fields = _dataclass_fields(t)
    if fields is not None:
        cls = _own_class("dc", _NAME(t), fields)
        return cls(*[_plain(_OBJ_GET(v, n), budget, d, settling) for n in fields])
    nt = _namedtuple_fields(t)
    if nt is not None:
        cls = _own_class("nt", _NAME(t), nt)
        return cls(*[_plain(x, budget, d, settling) for x in tuple.__iter__(v)])
    if t is _types.SimpleNamespace:
        return _types.SimpleNamespace(**{str(k): _plain(x, budget, d, settling)
                                         for k, x in dict.items(_OBJ_GET(v, "__dict__"))})
    sparse = _sys.modules.get("scipy.sparse")
    if sparse is not None and _library(t) and sparse.issparse(v):
        _watch(t)
        return v.copy()
    if isinstance(t, type) and issubclass(t, type):     # a class: its methods wrapped
        bad = _hooked(t)                                # (its metaclass answers its operators)
        if bad:
            raise NotPlainData(f"the class {_NAME(v)} has a metaclass, made by the generation, that "
                               f"overrides comparison/numpy hooks ({', '.join(bad[:3])})")
        if not _library(v):
            _wrap_class(v)
        return v
    if not _FLAGS(t) & (1 << 9):      # a static (C) type: the library's own
        if t is _collections.OrderedDict or t is _collections.defaultdict:
            items = [(_plain(k, budget, d, settling), _plain(x, budget, d, settling)) for k, x in dict.items(v)]
            return t(items) if t is _collections.OrderedDict else t(_plain(v.default_factory, budget, d), items)
        if t is _collections.deque:
            return t([_plain(x, budget, d, settling) for x in v], v.maxlen)
        if t is io.BytesIO or t is io.StringIO:
            new = t(t.getvalue(v))
            t.seek(new, t.tell(v))
            return new
        for base in _CONTAINERS:        # another container type: its contents, as the base type
            if isinstance(v, base):
                return _plain(base(v), budget, d, settling)
        if t in _PROXIES:               # its referent answers for it
            raise NotPlainData("a weakref proxy (its referent decides what it does)")
        if t is _types.MappingProxyType:
            return _plain(dict(v), budget, d, settling)
        if hasattr(t, "__next__"):      # an iterator: each item converted as it is drawn
            return _plain_iter(v)
        if callable(v):                 # a bound method-wrapper, a weakref.ref ...: its results converted
            return _wrap(v)
        return v
    if settling is None:
        settling = {}
    if _library(t):
        _watch(t)
        if not _keeps_identity(t):      # a copy: what the generation kept of it can change it no more
            c = _copy_instance(v, t, budget, d, settling, True, True)  # (a library's dict or list subclass
            if c is not _MISSING:                                   # keeps its class and attributes:
                return c                                            # sympy's SDM, OptimizeResult)
        for base in _CONTAINERS:
            if isinstance(v, base):     # a library's container class: its contents converted
                try:
                    return t(_plain(base(v), budget, d, settling))
                except Exception:
                    return _plain(base(v), budget, d, settling)
        _scan(v, budget, d, settling)
        if _keeps_identity(t):
            _keep_watch(v)
        return v
    bad = _hooked(t)
    mro = _TYPE_MRO(t)
    data = _data_of(mro)
    if bad and (data is not None or _numpy_hooked(mro)):
        raise NotPlainData(f"{_NAME(t)} is or holds an object whose class, made by the generation, "
                           f"overrides comparison/numpy hooks ({', '.join(bad[:3])})")
    if data is not None:                # its own subclass of a data type: the data itself, read
        return _plain(data(v), budget, d, settling)     # by the base type's own accessors
    if bad:                             # hooks (an ordering for a heap, its own __eq__ ...): a record
        return _fields_record(v, t, budget, d, settling)    # of its fields, no hook of it runs
    _wrap_class(t)
    c = _copy_instance(v, t, budget, d, settling, False)     # (a member of its own Enum too: a copy
    if c is not _MISSING:                                   # with its name and value, not the singleton)
        return c
    _settle(v, budget, d, settling)
    return v


_HEAP = 1 << 9
_GETSET, _MEMBER = _types.GetSetDescriptorType, _types.MemberDescriptorType
_ENUM = __import__("enum").Enum
_BASE_EXC, _EXC_ARGS = BaseException, BaseException.__dict__["args"]
_NUMPY_HOOKS = frozenset(h for h in _HOOKS if h.startswith("__array"))
_USER_DATA = {_collections.UserList: list, _collections.UserDict: dict, _collections.UserString: str}


def _numpy_hooked(mro):
    return any(not _library(c) and id(c) not in _OWN and not _NUMPY_HOOKS.isdisjoint(_TYPE_DICT(c))
               for c in mro if c is not object)


def _data_of(mro):
    """The conversion of a generated subclass of a data type (or of UserList/UserDict/
    UserString: their `data`, read from the instance's own dict): no method of it runs."""
    for base, data in _DATA_BASES:
        if base in mro:
            return data
    for base, kind in dict.items(_USER_DATA):
        if base in mro:
            return lambda v, base=base, kind=kind: _user_data(v, base, kind)
    return None


def _user_data(v, base, kind):
    state = _instance_dict(v, _TYPE(v))
    data = dict.get(state, "data", kind()) if state is not None else kind()
    out = object.__new__(base)
    dict.__setitem__(_instance_dict(out, base), "data", data)
    return out


def _instance_dict(v, t):
    """An object's own attribute dict, read through the `__dict__` slot its class was given
    (no lookup the generation can steer); None when it has none."""
    for c in _TYPE_MRO(t):
        slot = _TYPE_DICT(c).get("__dict__")
        if slot is None:
            continue
        if _TYPE(slot) is not _GETSET:
            raise NotPlainData(f"{_NAME(t)} defines __dict__ itself")
        try:
            state = slot.__get__(v, t)
        except TypeError:
            raise NotPlainData(f"{_NAME(t)} holds a foreign __dict__ slot")
        if _TYPE(state) is not dict:
            raise NotPlainData(f"{_NAME(t)} has an instance dict that is not a dict")
        return state
    return None


def _slots(t):
    """The member descriptors (`__slots__`) of t's classes, as the classes hold them."""
    return [s for c in _TYPE_MRO(t) if _FLAGS(c) & _HEAP for s in list(_TYPE_DICT(c).values())
            if _TYPE(s) is _MEMBER]


def _keeps_identity(t):
    """Library objects that are singletons or interned by design (sympy's expressions and
    numbers, numpy's masked constant, a library's enum members) cross as they are (checked,
    not copied)."""
    mro = _TYPE_MRO(t)
    sy = _sys.modules.get("sympy")
    ma = _sys.modules.get("numpy.ma")
    return (_ENUM in mro or (sy is not None and getattr(sy, "Basic", None) in mro)
            or (ma is not None and getattr(ma, "MaskedConstant", None) in mro))


_KEPT = {}                      # library objects kept by identity that crossed: id -> (object, what it held,
                                # its sympy nodes' facts objects, keys and values)
_LAZY = frozenset(("_mhash", "_assumptions"))   # caches sympy fills lazily (a hash, the facts it derived)


def _held(x, budget, depth, out, seen, nodes=None, facts=None):
    """What an object kept by identity holds, as the objects themselves (held, so no address
    is reused): its instance dict's names and values and its slots' values (not the caches
    its library fills lazily), through tuples and the other objects kept by identity it holds
    (a sympy expression's args, each symbol's name; a node shared in the tree walked once).
    `nodes`: the sympy nodes met, whose lazily filled facts _facts_ok checks; `facts`: each
    one's facts object, its keys and values (a change there is checked, not refused)."""
    t = _TYPE(x)
    if t is tuple:
        if id(x) in seen:
            return
        seen[id(x)] = x
        for y in tuple.__iter__(x):
            out.append(y)
            if _TYPE(y) not in _SCALARS:
                _held(y, budget, depth + 1, out, seen, nodes, facts)
        return
    if t in _SCALARS:
        return
    known = _LAYOUT.get(id(t))          # (by id: a metaclass's __hash__ would run unwrapped)
    if known is not None and known[0] is t:
        layout = known[1]
    else:
        if not _FLAGS(t) & _HEAP or not _library(t) or not _keeps_identity(t):
            layout = ()
        else:
            slots = tuple(sl for sl in _slots(t) if sl.__name__ not in _LAZY)
            layout = (any(_TYPE_DICT(c).get("__dict__") is not None for c in _TYPE_MRO(t)), slots,
                      bool(_SY) and _SY["basic"] in _TYPE_MRO(t))
        _LAYOUT[id(t)] = (t, layout)
    if not layout or id(x) in seen:
        return
    seen[id(x)] = x
    budget.items += 1
    if budget.items > _MAX_ITEMS or depth > _MAX_NEST:
        raise NotPlainData("a library object kept by identity too large or too deep to watch")
    if layout[2] and nodes is not None:
        nodes.append(x)
        try:
            kb = _SY["slot"].__get__(x, t)
            facts.append(kb)
            facts.extend(dict.keys(kb))
            facts.extend(dict.values(kb))
        except (AttributeError, TypeError):
            facts.append(_MISSING)
    if layout[0]:
        state = _instance_dict(x, t)
        for k, y in list(dict.items(state)) if state is not None else ():
            out.append(k)
            out.append(y)
            _held(y, budget, depth + 1, out, seen, nodes, facts)
    for slot in layout[1]:
        try:
            y = slot.__get__(x, t)
        except AttributeError:
            y = _MISSING
        out.append(y)
        _held(y, budget, depth + 1, out, seen, nodes, facts)


_LAYOUT = {}    # id of a type -> (the type, () or (has an instance dict, its slots but the lazy caches))


def _keep_watch(v):
    """A library object that crossed as it is (a sympy expression, a library's enum member):
    what it holds then is the reference; any later change is tampering (_kept_changed)."""
    seen = _KEPT.get(id(v))
    if seen is None or seen[0] is not v:
        held, nodes, facts = [], [], []
        _held(v, _Budget(), 0, held, {}, nodes, facts)
        if not _facts_ok(nodes):
            raise NotPlainData(f"the sympy object {_NAME(_TYPE(v))} holds a cached assumption that does not "
                               "follow from it (its `_assumptions` forged)")
        _KEPT[id(v)] = (v, held, facts)


def _kept_changed():
    """The kept objects against what they held when they crossed; the facts sympy cached in
    them since (the tests' queries fill them) are derived again (_facts_ok), only when some
    changed (one list compared per object otherwise)."""
    out = []
    for v, held, facts in list(_KEPT.values()):
        now, nodes, fnow = [], [], []
        try:
            _held(v, _Budget(), 0, now, {}, nodes, fnow)
        except NotPlainData:
            now = None
        if now is None or len(now) != len(held) or not all(map(_is, now, held)):
            out.append(f"the library object {_NAME(_TYPE(v))} {id(v):#x} (it crossed as it is, kept by "
                       "identity; what it holds changed since)")
        elif len(fnow) == len(facts) and all(map(_is, fnow, facts)):
            continue
        elif _facts_ok(nodes):
            _KEPT[id(v)] = (v, held, fnow)
        else:
            out.append(f"the sympy object {_NAME(_TYPE(v))} {id(v):#x} (kept by identity: an assumption cached "
                       "in it or in its class does not follow from it)")
    return out


_SY = {}            # sympy's own parts the facts watch uses (its `_ask`, the facts class, the `_assumptions`
                    # and `_mhash` slots), taken when sympy is first seen loaded, before any generated code ran
_SY_CLASSES = {}    # id of a sympy class -> (class, its default facts object, those facts, their generator, its
                    # fact handlers object, those handlers): as they were before any generated code ran
_FACTS = {}         # id of a kept sympy node -> (node, its facts object verified, the facts verified)
_RANDOM_GET, _RANDOM_SET = random.getstate, random.setstate


def _learn_sympy():
    if _SY:
        return
    am, bm = _sys.modules.get("sympy.core.assumptions"), _sys.modules.get("sympy.core.basic")
    if am is None or bm is None:
        return
    try:
        basic = bm.Basic
        _SY.update(ask=am._ask, kb=am.StdFactKB, basic=basic, slot=_TYPE_DICT(basic)["_assumptions"],
                   mhash=_TYPE_DICT(basic)["_mhash"])
    except (AttributeError, KeyError, TypeError):
        _SY.clear()


def _facts_of(d):
    """A facts mapping's items as a plain dict (str -> True/False/None), read by dict's own
    accessors; None when it holds anything else (then it was forged)."""
    if _TYPE(d) is not dict and _TYPE(d) is not _SY["kb"]:
        return None
    out = {}
    for k, v in dict.items(d):
        if _TYPE(k) is not str or not (v is None or v is True or v is False):
            return None
        out[k] = v
    return out


def _kb_generator(kb, raw=False):
    state = _instance_dict(kb, _TYPE(kb)) if _TYPE(kb) is _SY["kb"] else None
    g = None if state is None else dict.get(state, "_generator")
    return g if raw else _facts_of(g)


def _same_items(d, t, items):
    """A dict (of type t exactly) holds the very keys and values `items` held, in order."""
    return (_TYPE(d) is t and dict.__len__(d) == len(items) and all(map(_is, dict.keys(d), items.keys()))
            and all(map(_is, dict.values(d), items.values())))


def _sympy_class_state(k):
    ns = _TYPE_DICT(k)
    kb, handlers = ns.get("default_assumptions"), ns.get("_prop_handler")
    if _TYPE(kb) is not _SY["kb"] or _TYPE(handlers) is not dict:
        return None
    gen = _kb_generator(kb, True)
    rec = (k, (kb, dict(dict.items(kb))), _facts_of(gen), (handlers, dict(dict.items(handlers))),
           (gen, dict(dict.items(gen)) if _TYPE(gen) is dict else None), [None])
    _sympy_class_tags(rec)
    return rec


def _sympy_class_tags(rec):
    """The version tags of a class's facts dicts (its default facts, their instance dict and
    generator, its handlers), when unchanged: the next check skips comparing their items."""
    if _DICT_TAG is not None and rec[4][1] is not None:
        rec[5][0] = (_DICT_TAG(rec[1][0]), _DICT_TAG(_instance_dict(rec[1][0], _TYPE(rec[1][0]))),
                     _DICT_TAG(rec[4][0]), _DICT_TAG(rec[3][0]))


_SY_WORDS, _SY_AT, _SY_SLOW = [None], [], []     # (_Words: a sympy class's namespace tag, its facts'
                                                # and handlers' tags, the facts object's dict pointer and class)


def _sympy_words(i):
    if _SY_WORDS[0] is None:
        _SY_WORDS[0] = _Words()
    rec, words = _SY_CLASSES[i], _SY_WORDS[0]
    if rec is None or not words.ok:
        return
    k, kb, gen, handlers, tags = rec[0], rec[1][0], rec[4][0], rec[3][0], rec[5][0]
    try:
        ns = _REFERENTS(_TYPE_DICT(k))
        own = _instance_dict(kb, _TYPE(kb))
    except BaseException:
        ns = own = None
    if tags is None or _TYPE(own) is not dict or _TYPE(ns) is not list or len(ns) != 1 or _TYPE(ns[0]) is not dict \
            or not _FLAGS(_TYPE(kb)) & _MANAGED_DICT or _read_word(id(kb) - 3 * 8) != id(own):
        _SY_SLOW.append(i)
        return
    for addr, want in ((id(ns[0]) + _WORDS["tag"], _DICT_TAG(ns[0])), (id(kb) - 3 * 8, id(own)),
                       (id(kb) + _WORDS["type"], id(_TYPE(kb))),
                       (id(kb) + _WORDS["tag"], tags[0]), (id(own) + _WORDS["tag"], tags[1]),
                       (id(gen) + _WORDS["tag"], tags[2]), (id(handlers) + _WORDS["tag"], tags[3])):
        words.add(addr, want)
        _SY_AT.append(i)


def _sympy_classes_changed(out):
    """_sympy_class_changed for each recorded sympy class: those whose namespace's, facts'
    or handlers' tags and facts object's dict are as recorded (read in one pass, _Words) are
    not written since, so not changed."""
    words = _SY_WORDS[0].changed() if _SY_WORDS[0] is not None else None
    moved = {}
    if words is None:
        recs = list(_SY_CLASSES.values())
    else:
        for p, w in words:
            moved.setdefault(_SY_AT[p], []).append((p, w))
        recs = [_SY_CLASSES[i] for i in list(moved) + _SY_SLOW]
    for rec in recs:
        if rec is not None and _sympy_class_changed(rec):
            msg = f"the sympy class {_NAME(rec[0])} (its default assumptions or fact handlers changed)"
            if msg not in out:
                out.append(msg)
        elif rec is not None:
            for p, w in moved.get(id(rec[0]), ()):
                _SY_WORDS[0].expect(p, w)       # (read before the comparison)
    return out


def _sympy_class_changed(rec):
    """A sympy class's default facts (every new expression of it starts from them) or its fact
    handlers (what derives a fact) changed in place since before any generated code ran."""
    k, facts, _, handlers, gen, tags = rec
    ns = _TYPE_DICT(k)
    if ns.get("default_assumptions") is not facts[0] or ns.get("_prop_handler") is not handlers[0]:
        return True
    kb = facts[0]
    if tags[0] is not None and _TYPE(kb) is _SY["kb"] and tags[0] == (
            _DICT_TAG(kb), _DICT_TAG(_instance_dict(kb, _TYPE(kb))), _DICT_TAG(gen[0]), _DICT_TAG(handlers[0])) \
            and _kb_generator(kb, True) is gen[0]:
        return False
    changed = not (_same_items(kb, _SY["kb"], facts[1]) and _same_items(handlers[0], dict, handlers[1])
                   and _kb_generator(kb, True) is gen[0] and (gen[1] is None or _same_items(gen[0], dict, gen[1])))
    if not changed:
        _sympy_class_tags(rec)
    return changed


def _facts_ok(nodes):
    """The facts sympy cached in kept nodes (`_assumptions`, filled lazily by the tests'
    queries) must follow from the nodes: each fact new since the last check, or since the
    node crossed, is derived again by sympy's own `_ask` on a clone of the node that starts
    from the facts verified so far (at first sight: the facts the node was made with, from a
    symbol's `_assumptions0` or its class's defaults as they were before generated code ran);
    the classes' default facts and handlers must be as they were (issue 22, round 6: a fact
    forged into the cache answered `s.is_positive`)."""
    if not nodes or not _SY:
        return True
    classes = {}
    for x in nodes:
        t = _TYPE(x)
        if id(t) not in classes:
            rec = _SY_CLASSES.get(id(t))
            classes[id(t)] = rec
            if rec is not None and rec[0] is t and _sympy_class_changed(rec):
                return False
    state = None
    try:
        for x in nodes:
            ok, state = _node_facts_ok(x, _TYPE(x), classes.get(id(_TYPE(x))), state)
            if not ok:
                return False
    finally:
        if state is not None:           # (sympy's derivation shuffles with `random`: the tests' draws stay theirs)
            _RANDOM_SET(state)
    return True


def _node_facts_ok(x, t, crec, state):
    try:
        kb = _SY["slot"].__get__(x, t)
    except AttributeError:
        return True, state
    rec = _FACTS.get(id(x))
    if rec is not None and rec[0] is x and rec[1] is kb and _same_items(kb, _SY["kb"], rec[2]):
        return True, state
    facts = _facts_of(kb) if _TYPE(kb) is _SY["kb"] else None
    if facts is None:
        return False, state
    known = rec[2] if rec is not None and rec[0] is x else _node_base(x, t, kb, crec)
    if known is None:
        return False, state
    clone = None
    try:
        for k, v in facts.items():
            w = known.get(k, _MISSING)
            if w is v:
                continue
            if w is True or w is False:         # a fact derived before, changed
                return False, state
            if clone is None:
                if state is None:
                    state = _RANDOM_GET()
                clone = _sympy_clone(x, t, known)
            if _SY["ask"](k, clone) is not v:
                return False, state
    except Exception:
        return False, state
    _FACTS[id(x)] = (x, kb, facts)
    return True, state


def _node_base(x, t, kb, crec):
    """The facts a node was made with: a symbol's `_assumptions0` (part of what it is: its
    equality and hash), or its class's default facts as they were before any generated code
    ran when its facts grew from them; otherwise (a node made with facts of its own, an
    `IndexedBase(..., real=True)`) its facts when it first crossed."""
    for sl in _slots(t):
        if sl.__name__ == "_assumptions0":
            try:
                a0 = sl.__get__(x, t)
            except AttributeError:
                return None
            if _TYPE(a0) is not tuple or not all(_TYPE(p) is tuple and len(p) == 2 and _TYPE(p[0]) is str
                                                 for p in tuple.__iter__(a0)):
                return None
            return _facts_of(dict(a0))
    if crec is not None and crec[0] is t and crec[2] is not None and _kb_generator(kb) == crec[2]:
        return dict(crec[1][1])
    return _facts_of(kb)


def _sympy_clone(x, t, known):
    """A node of x's class holding what x holds, its facts only those in `known` (no cache):
    what sympy derives for it is what x's facts must be."""
    c = object.__new__(t)
    for sl in _slots(t):
        if sl.__name__ not in _LAZY:
            try:
                sl.__set__(c, sl.__get__(x, t))
            except AttributeError:
                pass
    state = _instance_dict(x, t)
    if state is not None:
        dict.update(_instance_dict(c, t), state)
    _SY["mhash"].__set__(c, None)
    kb = _SY["kb"]()
    dict.update(kb, {k: v for k, v in known.items() if v is not None})
    _SY["slot"].__set__(c, kb)
    return c


def _copy_instance(v, t, budget, d, memo, library, data_base=False):
    """A copy of an object of a Python class (the generation's own without hooks, or a
    library's), made without calling any method of it: a new instance of its class, its
    instance dict and slots filled with their converted values (each object copied once:
    shared and cyclic references stay so, within the copy).  The test holds the copy; what
    the generation kept is the original, and nothing it does to that later reaches the copy.
    _MISSING when the object's layout is not a plain Python object (a C base other than
    `object`, or an array): then it is checked in place and keeps its identity.  `data_base`:
    a library's object, or the copy generated code is handed for its caller's object
    (_copy_in): an object on a data type (list, dict, float, tuple ..., an own class not
    hooked) is copied too, made by the base type's own __new__ and filled with its data
    converted (read by the base type's own accessors), written back after a call by the base
    type's own methods (_write_back)."""
    seen = memo.get(id(v))
    if seen is not None and seen[0] is v:
        return seen[1]
    solid = _solid(t)
    if solid is _NDARRAY and (library or data_base):
        new = _NP_COPY(v)               # a library array subclass: its data, its items converted
        if v.dtype.hasobject:
            flat = _NP_VIEW(new, _NDARRAY).reshape(-1)
            for i in range(flat.shape[0]):
                flat[i] = _plain(flat[i], budget, d, memo)
    elif data_base and solid in _HANDED_DATA:
        new = _HANDED_DATA[solid](v, t, lambda x: _plain(x, budget, d, memo))
    elif solid is _RANDOM_C:            # (a random.Random, the library's or an own subclass: a copy of its state)
        new = _RANDOM_C.__new__(t)
        _RANDOM_C.setstate(new, _RANDOM_C.getstate(v))
    elif solid is object:
        try:
            new = object.__new__(t)
        except TypeError:
            return _MISSING
    elif _BASE_EXC in _TYPE_MRO(solid):     # an exception: its args, then its attributes
        args = _plain(_EXC_ARGS.__get__(v), budget, d, memo)
        try:
            new = solid.__new__(t, *args)
        except Exception:
            return _MISSING
        _EXC_ARGS.__set__(new, args)
    else:
        return _MISSING
    memo[id(v)] = (v, new)
    state = _instance_dict(v, t)
    if state is not None:
        out = _instance_dict(new, t)
        if solid is _NDARRAY:
            dict.clear(out)
        for k, x in list(dict.items(state)):
            dict.__setitem__(out, _attr_key(k, t), _state_value(x, budget, d, memo, library))
    for slot in _slots(t):
        try:
            x = slot.__get__(v, t)
        except (AttributeError, TypeError):
            continue
        slot.__set__(new, _state_value(x, budget, d, memo, library))
    if not library:                     # its class's data, as the object reads it now
        out = _instance_dict(new, t)
        for k, x in _class_data(t):
            if out is not None:
                if k not in out:
                    dict.__setitem__(out, k, _plain(x, budget, d, memo))
            elif _TYPE(x) not in _SCALARS:
                raise NotPlainData(f"{_NAME(t)} has no instance dict and a class attribute {k!r} "
                                   "that is not a number or string")
    return new


def _solid(t):
    """The first base of t that is not a Python class (its layout: object, a data type, a C type)."""
    return [c for c in _TYPE_MRO(t) if not _FLAGS(c) & _HEAP or c is _ARRAY or c is _RANDOM_C][0]   # (heap types of C modules)


def _new_filled(base, fill):
    def make(v, t, conv):
        new = base.__new__(t)
        fill(new, [conv(x) for x in base.__iter__(v)])
        return new
    return make


def _new_of(base, data):
    return lambda v, t, conv: base.__new__(t, data(v, conv))


# a data type's subclass copied (a library's, or one handed to generated code): a new object of it, made by the
# base type's own __new__ (no method of the subclass runs), filled with the converted data
_HANDED_DATA = {
    list: _new_filled(list, list.extend), set: _new_filled(set, set.update),
    dict: lambda v, t, conv: _dict_filled(dict.__new__(t), [(conv(k), conv(x)) for k, x in dict.items(v)]),
    bytearray: lambda v, t, conv: _dict_filled(bytearray.__new__(t), bytearray.__getitem__(v, slice(None))),
    int: _new_of(int, lambda v, conv: int.__int__(v)), float: _new_of(float, lambda v, conv: float.__float__(v)),
    complex: _new_of(complex, lambda v, conv: complex(complex.real.__get__(v), complex.imag.__get__(v))),
    str: _new_of(str, lambda v, conv: str.__str__(v)), bytes: _new_of(bytes, lambda v, conv: bytes.__add__(b"", v)),
    tuple: _new_of(tuple, lambda v, conv: [conv(x) for x in tuple.__iter__(v)]),
    frozenset: _new_of(frozenset, lambda v, conv: [conv(x) for x in frozenset.__iter__(v)]),
    _collections.deque: lambda v, t, conv: _deque_filled(v, t, conv),
    _ARRAY: lambda v, t, conv: _ARRAY.__new__(t, _ARRAY.typecode.__get__(v), v)}


def _deque_filled(v, t, conv):
    new = _collections.deque.__new__(t)
    _collections.deque.__init__(new, [conv(x) for x in _collections.deque.__iter__(v)],
                                _collections.deque.maxlen.__get__(v))
    return new


def _dict_filled(new, items):
    (dict.update if _TYPE(items) is list else bytearray.extend)(new, items)
    return new


def _class_data(t, private=False):
    """The data attributes of the generation's own classes of t (not methods, descriptors,
    classes or private names), first in t's MRO: read through an object they would be read
    live from the class, which the generation can rewrite after the object crossed; the copy
    holds them converted in its own dict.  `private`: the private names too (not dunders),
    for the check of what the tests can read through the class (round 8: `type(h)._ZERO`)."""
    if _ENUM in _TYPE_MRO(t):
        return []
    out, seen = [], set()
    for c in _TYPE_MRO(t):
        if c is object or _library(c) or id(c) in _OWN:
            continue
        for k, x in list(dict.items(_class_state(c))):
            if _TYPE(k) is not str or k in seen or (k.startswith("__") and k.endswith("__") if private
                                                    else k.startswith("_")):
                continue
            seen.add(k)
            xt = _TYPE(x)
            if xt in _SCALARS or not (isinstance(x, type) or xt in _FUNCS or
                                      any("__get__" in _TYPE_DICT(b) for b in _TYPE_MRO(xt) if b is not object)):
                out.append((k, x))
    return out


def _attr_key(k, t):
    """A name in an instance dict, as an exact str (a str subclass's __eq__/__hash__ would run
    at every attribute lookup the tests make on the copy)."""
    if _TYPE(k) is str:
        return k
    if isinstance(k, str):
        return str.__str__(k)
    raise NotPlainData(f"{_NAME(t)} has an attribute name that is not a string")


def _state_value(x, budget, d, memo, library):
    """An attribute of a copied object, converted; in a library object a generated callable
    is wrapped, the library's own functions stay (a bound method of a copied object is
    bound to its copy).  A library callable that holds state of its own — a method bound to
    an object not copied here, a builtin method of an object, a partial, a vectorized or
    cached function, a closure — is wrapped (its results converted at each call from the
    tests or a library): the object it reads may be one the generation keeps and rewrites."""
    if library:
        t = _TYPE(x)
        if t is _types.MethodType:
            s = memo.get(id(x.__self__))
            if s is not None and s[0] is x.__self__:
                x = _types.MethodType(x.__func__, s[1])
                if not _generated_callable(x):
                    return x
        if _generated_callable(x):
            return _wrap(x)
        if t is staticmethod or t is classmethod:
            return x
        if t in _FUNCS:
            return x if _stateless(x) else _wrap(x)
    return _plain(x, budget, d, memo)


_MODULE = _types.ModuleType


def _stateless(x):
    """A library callable that reads no object but its arguments, a module or a class."""
    t = _TYPE(x)
    if id(x) in _OWN_FUNCS:
        return True
    if t is _types.FunctionType:
        return x.__closure__ is None
    if t is _types.BuiltinMethodType or t is _types.MethodType:
        own = x.__self__
        return own is None or _TYPE(own) is _MODULE or isinstance(own, type)
    return False


def _fields_record(v, t, budget, d, memo):
    """An object of the generation's own class with hooks (an ordering for heapq/sorted, its
    own __eq__ ...): a dataclass of this process with its instance fields (its dict, then its
    slots), converted entirely; read by attribute, `==` field by field, recorded as such."""
    seen = memo.get(id(v))
    if seen is not None and seen[0] is v:
        if seen[1] is _MISSING:
            raise NotPlainData(f"{_NAME(t)} refers to itself through its fields")
        return seen[1]
    memo[id(v)] = (v, _MISSING)
    names, values = [], []
    state = _instance_dict(v, t)
    for k, x in list(dict.items(state)) if state is not None else ():
        if _TYPE(k) is str and k not in names:
            names.append(k)
            values.append(_plain(x, budget, d, memo))
    for slot in _slots(t):
        try:
            x = slot.__get__(v, t)
        except (AttributeError, TypeError):
            continue
        if slot.__name__ not in names:
            names.append(slot.__name__)
            values.append(_plain(x, budget, d, memo))
    out = _own_class("dc", _NAME(t), names)(*values)
    memo[id(v)] = (v, out)
    return out


_DATA_BASES = ((_NDARRAY, lambda v: _NP_COPY(_NP_VIEW(v, _NDARRAY))), (bool, bool.__bool__),
               (int, int.__int__), (float, float.__float__),
               (complex, lambda v: complex(complex.real.__get__(v), complex.imag.__get__(v))),
               (str, str.__str__), (bytes, lambda v: bytes.__add__(b"", v)),
               (list, lambda v: list(list.__iter__(v))), (tuple, lambda v: tuple(tuple.__iter__(v))),
               (dict, lambda v: dict(dict.items(v))), (set, lambda v: set(set.__iter__(v))),
               (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
               (_ARRAY, lambda v: _ARRAY(_ARRAY.typecode.__get__(v), v)),
               (_collections.deque, lambda v: _collections.deque(_collections.deque.__iter__(v),
                                                                 _collections.deque.maxlen.__get__(v))),
               (_FRACTION, lambda v: _FRACTION(_OBJ_GET(v, "_numerator"), _OBJ_GET(v, "_denominator"))))


def _settle_args(args, kwargs, budget):
    """What a generated callable may have written into the tests' own containers (an
    in-place result): converted in place, as its return value is."""
    for a in list(args) + list(kwargs.values()):
        t = _TYPE(a)
        if t is list:
            list.__setitem__(a, slice(None), [_plain(x, budget) for x in list.__iter__(a)])
        elif t is dict:
            for k, x in list(dict.items(a)):
                dict.__setitem__(a, k, _plain(x, budget))
        elif t is set:
            items = [_plain(x, budget) for x in set.__iter__(a)]
            set.clear(a)
            set.update(a, items)
        elif t is _NDARRAY and a.dtype.hasobject:
            flat = a.reshape(-1)
            for i in range(flat.shape[0]):
                flat[i] = _plain(flat[i], budget)
        elif t is tuple:
            _settle_args(list(tuple.__iter__(a)), {}, budget)
        elif _FLAGS(t) & _HEAP and _library(t) and id(t) not in _OWN and not isinstance(a, type):
            _scan(a, budget, 0, {})     # a library object (UserDict, masked array ...): what it holds checked
            if _keeps_identity(t):
                _keep_watch(a)
        elif _FLAGS(t) & (1 << 9) and not _library(t) and not isinstance(a, type):
            bad = _hooked(t)            # an object of the generation's own class: settled in place
            if bad:
                raise NotPlainData(f"{_NAME(t)} is or holds an object whose class, made by the generation, "
                                   f"overrides comparison/numpy hooks ({', '.join(bad[:3])})")
            _settle(a, budget)


def _copy_in(a, budget, memo):
    """What generated code is handed for a mutable object of its caller (the tests, or a
    library they called): a copy (a list, dict, set, bytearray, numpy array, an object of the
    generation's own hookless class or of this process's record classes), converted; what it
    keeps of it is the copy, never the caller's object.  _MISSING: the object itself (an
    immutable value, a library object, anything else: settled in place after the call)."""
    t = _TYPE(a)
    seen = memo.get(("in", id(a)))
    if seen is not None and seen[0] is a:       # the same object handed twice: one copy (aliasing kept)
        return seen[1]
    c = _copy_in_new(a, t, budget, memo)
    if c is not _MISSING:
        memo[("in", id(a))] = (a, c)
    return c


_COPIED_IN = (list, dict, set, bytearray, _NDARRAY, _collections.deque, _collections.OrderedDict,
              _collections.defaultdict)


def _copy_in_new(a, t, budget, memo):
    if t is _Exposed:                   # (a new one: what the generated code does to it stays there)
        entry = _EXPOSED.get(id(a))
        return _expose(entry[1], entry[2]) if entry is not None and entry[0] is a else _MISSING
    if t in _COPIED_IN:
        return _plain(a, budget, 1, memo)
    if t is tuple:                      # immutable, but its items may be the caller's mutable objects
        items = [_copy_in(x, budget, memo) for x in tuple.__iter__(a)]
        if all(c is _MISSING for c in items):
            return _MISSING
        return tuple([x if c is _MISSING else c for x, c in zip(tuple.__iter__(a), items)])
    if t is memoryview:
        try:
            return _copy_view(a)
        except NotPlainData:
            return _MISSING
    if t is _types.SimpleNamespace:     # (C types the tests hand in: copied, written back after the call)
        return _types.SimpleNamespace(**{_attr_key(k, t): _plain(x, budget, 1, memo)
                                         for k, x in list(dict.items(_OBJ_GET(a, "__dict__")))})
    if t is _ARRAY:
        return _ARRAY(_ARRAY.typecode.__get__(a), a)
    if t is _PARTIAL:                   # (its __setstate__ would rewrite the tests' own partial later)
        return _PARTIAL(_PARTIAL.func.__get__(a), *_PARTIAL.args.__get__(a), **_PARTIAL.keywords.__get__(a))
    if not _FLAGS(t) & _HEAP or type in _TYPE_MRO(t) or _keeps_identity(t):
        return _MISSING                 # (a C type's state, a class, a singleton by design: settled in place)
    library = _library(t) and id(t) not in _OWN
    if not library and _hooked(t):
        return _MISSING
    try:                                # a library's object (UserDict, Namespace, a masked array), an
        return _copy_instance(a, t, budget, 1, memo, library, True)    # own one on any base: a copy
    except NotPlainData:
        if library:                     # (a layout the copy cannot read: checked in place, as before)
            return _MISSING
        raise


def _write_back(a, c, budget, memo):
    """The caller's object after the call: what the generated code left in its copy,
    converted (an in-place result, as upstream's tests read it); nested objects as copies."""
    t = _TYPE(a)
    if t is tuple:                      # its items written back (copied) or settled (handed as they were)
        for x, y in zip(tuple.__iter__(a), tuple.__iter__(c)):
            if x is y:
                _settle_args([x], {}, budget)
            else:
                _write_back(x, y, budget, memo)
    elif t is _collections.deque:
        items = [_plain(x, budget, 1, memo) for x in _collections.deque.__iter__(c)]
        _collections.deque.clear(a)
        _collections.deque.extend(a, items)
    elif t is _collections.OrderedDict:
        items = [(_plain(k, budget, 1, memo), _plain(x, budget, 1, memo))
                 for k, x in _collections.OrderedDict.items(c)]
        _collections.OrderedDict.clear(a)
        _collections.OrderedDict.update(a, items)
    elif t is list:
        list.__setitem__(a, slice(None), [_plain(x, budget, 1, memo) for x in list.__iter__(c)])
    elif t is dict or t is _collections.defaultdict:
        items = [(_plain(k, budget, 1, memo), _plain(x, budget, 1, memo)) for k, x in dict.items(c)]
        dict.clear(a)
        dict.update(a, items)
    elif t is set:
        items = [_plain(x, budget, 1, memo) for x in set.__iter__(c)]
        set.clear(a)
        set.update(a, items)
    elif t is bytearray:
        bytearray.__setitem__(a, slice(None), bytes(c))
    elif t is _NDARRAY:
        _write_array(a, c, budget, memo)
    elif t is memoryview:
        _write_view(a, c)
    elif t is _types.SimpleNamespace:
        items = [(_attr_key(k, t), _plain(x, budget, 1, memo)) for k, x in list(dict.items(_OBJ_GET(c, "__dict__")))]
        state = _OBJ_GET(a, "__dict__")
        dict.clear(state)
        dict.update(state, items)
    elif t is _PARTIAL:                 # (a partial's contents change only by __setstate__: not an in-place result)
        pass
    elif t is _ARRAY:
        if _ARRAY.typecode.__get__(c) == _ARRAY.typecode.__get__(a):
            _ARRAY.__setitem__(a, slice(None), c)
    else:
        if _TYPE(c) is not t:
            raise NotPlainData(f"the generation changed the class of the {_NAME(t)} it was handed")
        solid = _solid(t)               # its data (a library's or an own subclass of a data type)
        if solid is _NDARRAY:
            _write_array(a, c, budget, memo)
        elif solid is list:
            list.__setitem__(a, slice(None), [_plain(x, budget, 1, memo) for x in list.__iter__(c)])
        elif solid is dict:
            items = [(_plain(k, budget, 1, memo), _plain(x, budget, 1, memo)) for k, x in dict.items(c)]
            dict.clear(a)
            dict.update(a, items)
        elif solid is set:
            items = [_plain(x, budget, 1, memo) for x in set.__iter__(c)]
            set.clear(a)
            set.update(a, items)
        elif solid is bytearray:
            bytearray.__setitem__(a, slice(None), bytearray.__getitem__(c, slice(None)))
        elif solid is _ARRAY:
            _ARRAY.__setitem__(a, slice(None), _ARRAY(_ARRAY.typecode.__get__(c), c))
        elif solid is _RANDOM_C:
            _RANDOM_C.setstate(a, _RANDOM_C.getstate(c))
        elif solid is _collections.deque:
            items = [_plain(x, budget, 1, memo) for x in _collections.deque.__iter__(c)]
            _collections.deque.clear(a)
            _collections.deque.extend(a, items)
        lib = _library(t) and id(t) not in _OWN     # (a library object's own callables stay as they are)
        src, dst = _instance_dict(c, t), _instance_dict(a, t)
        if src is not None:
            items = [(_attr_key(k, t), _state_value(x, budget, 1, memo, lib)) for k, x in list(dict.items(src))]
            dict.clear(dst)
            dict.update(dst, items)
        for slot in _slots(t):
            try:
                x = slot.__get__(c, t)
            except AttributeError:
                try:
                    slot.__delete__(a)
                except AttributeError:
                    pass
                continue
            slot.__set__(a, _state_value(x, budget, 1, memo, lib))


def _write_array(a, c, budget, memo):
    """An array's data written back, read and written through exact-ndarray views (no
    attribute of a subclass runs).  A copy the generation reshaped in place (`x.shape = ...`,
    the same size) reshapes the caller's array as it would have been, where its layout allows
    that, and fills it in that shape; a resized one (another size) is not written back."""
    av, cv = _NP_VIEW(a, _NDARRAY), _NP_VIEW(c, _NDARRAY)
    if cv.dtype.hasobject:
        cv = _plain(cv, budget, 1, memo)
    if not av.flags.writeable:
        return
    if cv.shape != av.shape:
        if cv.size != av.size:
            return
        try:
            _SHAPE.__set__(a, cv.shape)
        except (AttributeError, ValueError, TypeError):
            pass
        av = _NP_VIEW(a, _NDARRAY)
        if av.shape != cv.shape:
            cv = cv.reshape(av.shape)
    _COPYTO(av, cv, casting="unsafe")


_SHAPE = _NDARRAY.__dict__["shape"]


def _copy_view(m):
    """A memoryview's copy: a view of a new buffer of this process holding its bytes, with its
    format, shape and writability (what the generation kept of the original buffer can change
    it no more); NotPlainData for a layout it cannot rebuild."""
    try:
        data = memoryview.tobytes(m)
        fmt, shape = memoryview.format.__get__(m), memoryview.shape.__get__(m)
        out = memoryview(bytes(data) if memoryview.readonly.__get__(m) else bytearray(data))
        return out if (fmt, shape) == ("B", (len(data),)) else memoryview.cast(out, "B").cast(fmt, shape)
    except (TypeError, ValueError) as exc:
        raise NotPlainData(f"a memoryview that cannot be copied ({exc})")


def _write_view(a, c):
    """A memoryview handed as a copy: its bytes written back into the caller's buffer."""
    if not memoryview.readonly.__get__(a) and memoryview.nbytes.__get__(a) == memoryview.nbytes.__get__(c) \
            and memoryview.c_contiguous.__get__(a):
        memoryview.cast(a, "B")[:] = memoryview.tobytes(c)


def _settle(obj, budget=None, depth=0, settling=None):
    """An object of the generation's own class (no hooks): its attributes converted in place."""
    settling = settling if settling is not None else {}
    if id(obj) in settling:
        return
    settling[id(obj)] = (obj, obj)
    state = _instance_dict(obj, _TYPE(obj))
    if state is not None:
        for k, x in list(dict.items(state)):
            dict.__setitem__(state, k, _plain(x, budget, depth, settling))
    for c in _TYPE_MRO(_TYPE(obj)):
        if _library(c):
            continue
        for name, slot in list(_TYPE_DICT(c).items()):
            if _TYPE(slot) is _types.MemberDescriptorType:
                try:
                    slot.__set__(obj, _plain(slot.__get__(obj, _TYPE(obj)), budget, depth, settling))
                except AttributeError:
                    pass


_PROXIES = frozenset((__import__("weakref").ProxyType, __import__("weakref").CallableProxyType))


def _scan(x, budget, depth, seen, settle=True):
    """A library object that keeps its identity (a singleton by design, or a layout that is not
    a plain Python object) passes as it is: what it holds is checked, not copied (a library's
    UserDict, ChainMap or Namespace holding a generation's rigged object is refused; an
    object of the generation's own plain class inside has its attributes converted; with
    `settle` false, checked the same way and left as it is)."""
    budget.items += 1
    if budget.items > _MAX_ITEMS:
        raise NotPlainData(f"more than {_MAX_ITEMS} items to check")
    if depth > _MAX_NEST:
        raise NotPlainData(f"nested deeper than {_MAX_NEST} levels")
    t = _TYPE(x)
    if t is _VOID or (t not in _SCALARS and _VOID in _TYPE_MRO(t)):
        _void_check(x)
    if t in _SCALARS or (t is _NDARRAY and not x.dtype.hasobject) or id(x) in seen:
        return
    seen[id(x)] = (x, x)
    d = depth + 1
    if t is list or t is tuple or t is set or t is frozenset or t is _collections.deque:
        for y in list(x):
            ty = _TYPE(y)
            if ty in _SCALARS and ty is not _VOID:      # (a number or a string: counted, not visited)
                budget.items += 1
            else:
                _scan(y, budget, d, seen, settle)
        if budget.items > _MAX_ITEMS:
            raise NotPlainData(f"more than {_MAX_ITEMS} items to check")
    elif t is dict or t is _collections.OrderedDict or t is _collections.defaultdict:
        for k, y in list(dict.items(x)):
            _scan(k, budget, d, seen, settle)
            _scan(y, budget, d, seen, settle)
    elif t is _NDARRAY or t is _MATRIX:
        for y in _NP_VIEW(x, _NDARRAY).reshape(-1):
            _scan(y, budget, d, seen, settle)
    elif t in _PROXIES:
        raise NotPlainData("a weakref proxy (its referent decides what it does)")
    elif _generated_callable(x):
        raise NotPlainData("a generated callable held inside a library object (it would be called unwrapped)")
    elif not _FLAGS(t) & (1 << 9):
        return
    elif _library(t):
        if _NDARRAY in _TYPE_MRO(t):    # a library's array subclass (masked, record ...): its items
            for y in _NP_VIEW(x, _NDARRAY).reshape(-1):
                _scan(y, budget, d, seen, settle)
        try:
            state = _OBJ_GET(x, "__dict__")
        except AttributeError:
            state = None
        if _TYPE(state) is dict:
            for k, y in list(dict.items(state)):
                if _generated_callable(y):      # called by the library's methods: wrapped in place
                    dict.__setitem__(state, k, _wrap(y))
                else:
                    _scan(y, budget, d, seen, settle)
    else:
        bad = _hooked(t)
        if bad:
            raise NotPlainData(f"{_NAME(t)} is or holds an object whose class, made by the generation, "
                               f"overrides comparison/numpy hooks ({', '.join(bad[:3])})")
        if not settle:                  # (checked only: its attributes and slots, as they are)
            state = _instance_dict(x, t)
            for y in list(dict.values(state)) if state is not None else ():
                _scan(y, budget, d, seen, settle)
            for slot in _slots(t):
                try:
                    _scan(slot.__get__(x, t), budget, d, seen, settle)
                except AttributeError:
                    pass
            return
        seen.pop(id(x), None)           # (_settle marks it itself)
        _settle(x, budget, d, seen)


def _generated_callable(y, _code=_types.FunctionType.__code__.__get__):
    """A callable of generated code not wrapped (a function, a bound method, a partial or a
    vectorized function around one)."""
    for _ in range(_MAX_NEST):
        t = _TYPE(y)
        if t is _types.MethodType:
            y = y.__func__
        elif t is _PARTIAL:
            y = y.func
        elif t is _VECTORIZE:
            y = _OBJ_GET(y, "pyfunc")
        else:
            break
    return _TYPE(y) is _types.FunctionType and id(y) not in _OWN_FUNCS and \
        _code(y).co_filename.startswith(_GENERATED_FILES)


def _plain_iter(it):
    """An iterator the generation returned: each item converted as it is drawn.  A generator
    keeps its protocol: what the tests `send` (converted) and `throw` reach it, `close` closes
    it, its return value is converted (before round 6 a sent value was dropped: `x = yield`
    saw None)."""
    if _TYPE(it) is not _types.GeneratorType:
        for x in it:
            yield _plain(x)
        return
    value, exc = None, None
    while True:
        try:
            x = _GEN_SEND(it, value) if exc is None else _GEN_THROW(it, exc)
        except StopIteration as stop:
            return _plain(stop.value)
        exc = None
        try:
            value = yield _plain(x)
        except GeneratorExit:
            _GEN_CLOSE(it)
            raise
        except BaseException as e:
            value, exc = None, e
        else:
            value = None if value is None else _plain(value)


_GEN_SEND, _GEN_THROW, _GEN_CLOSE = _types.GeneratorType.send, _types.GeneratorType.throw, _types.GeneratorType.close


def _ser(v, budget=None, depth=0):
    """What the test passed to a comparison, as JSON data by exact type, entirely (the same
    rules as _plain; a value it cannot express whole raises NotPlainData: the case fails)."""
    budget = budget or _Budget()
    budget.items += 1
    if budget.items > _MAX_ITEMS:
        raise NotPlainData(f"more than {_MAX_ITEMS} items to record")
    if depth > 2 * _MAX_NEST:           # JSON levels (the reply decoder refuses more than 64)
        raise NotPlainData(f"nested deeper than {2 * _MAX_NEST} JSON levels to record")
    t = _TYPE(v)
    d, d2, d3 = depth + 1, depth + 2, depth + 3
    if t is _Target:
        return {"__target__": [v._case, v._path]}
    if v is None or t is bool or t is str:
        return v
    if t is int:
        return v
    if t is float:
        return v if v == v and v not in (float("inf"), float("-inf")) else {"__float__": repr(v)}
    if t is complex:
        return {"__complex__": [_ser(v.real, budget, d2), _ser(v.imag, budget, d2)]}
    if t is bytes or t is bytearray:
        return {"__bytes__": base64.b64encode(bytes(v)).decode("ascii")}
    if t is list:
        return [_ser(x, budget, d) for x in list.__iter__(v)]
    if t is tuple:
        return {"__tuple__": [_ser(x, budget, d2) for x in tuple.__iter__(v)]}
    if t is dict:
        return {"__dict__": [[_ser(k, budget, d3), _ser(x, budget, d3)] for k, x in dict.items(v)]}
    if t is set or t is frozenset:
        return {"__set__" if t is set else "__frozenset__":
                [_ser(x, budget, d2) for x in (set.__iter__(v) if t is set else frozenset.__iter__(v))]}
    if t is _NDARRAY or t is _MATRIX:
        arr = _NP_VIEW(v, _NDARRAY)
        if arr.dtype.hasobject:
            return {"__objarray__": [list(arr.shape), [_ser(x, budget, d3) for x in arr.reshape(-1)]]}
        return {"__array__": _b64npy(arr)}
    if t in _SCALARS:                   # a numpy scalar (exact type): its 0-d array
        arr = numpy.asarray(v)
        if arr.dtype.hasobject:
            return {"__opaque__": _NAME(t)}
        return {"__npscalar__": _b64npy(arr)}
    if t is _FRACTION:
        return {"__fraction__": [_ser(_OBJ_GET(v, "_numerator"), budget, d2),
                                 _ser(_OBJ_GET(v, "_denominator"), budget, d2)]}
    fields = _dataclass_fields(t)
    if fields is not None:
        return {"__record__": [_NAME(t), [[n, _ser(_OBJ_GET(v, n), budget, depth + 4)] for n in fields]]}
    nt = _namedtuple_fields(t)
    if nt is not None:
        return {"__namedtuple__": [_NAME(t), list(nt), [_ser(x, budget, d3) for x in tuple.__iter__(v)]]}
    sp = _sys.modules.get("scipy.sparse")
    if sp is not None and _library(t) and sp.issparse(v):
        c = v.tocoo()
        return {"__sparse__": {"format": v.format, "shape": [int(n) for n in v.shape],
                               "array": not isinstance(v, sp.spmatrix), "data": _b64npy(numpy.asarray(c.data)),
                               "row": _b64npy(numpy.asarray(c.row)), "col": _b64npy(numpy.asarray(c.col))}}
    sy = _sys.modules.get("sympy")
    if sy is not None and _library(t) and isinstance(v, sy.Basic):
        if getattr(v, "is_Number", False):
            try:
                z = complex(v)
                return _ser(z.real if z.imag == 0 else z, budget, d)
            except BaseException:
                pass
        return str(v)
    if _library(t) or not _FLAGS(t) & (1 << 9):   # an array-like of a library (a matrix type,
        for dtype in (None, float, complex):        # a memoryview, a sympy matrix of numbers)
            try:
                arr = numpy.asarray(v, dtype=dtype)
                if not arr.dtype.hasobject:
                    return {"__array__": _b64npy(arr)}
            except BaseException:
                pass
    return {"__opaque__": _NAME(t)}


def _has_target(values, budget=None, depth=0):
    """A target stand-in anywhere in the values (entirely: lists, tuples, dicts, sets)."""
    budget = budget or _Budget()
    for x in values:
        budget.items += 1
        if budget.items > _MAX_ITEMS or depth > _MAX_NEST:
            return True         # (then recorded: the recorder refuses it with its reason)
        t = _TYPE(x)
        if t is _Target:
            return True
        if (t is tuple or t is list or t is set or t is frozenset) and _has_target(x, budget, depth + 1):
            return True
        if t is dict and (_has_target(dict.keys(x), budget, depth + 1) or
                          _has_target(dict.values(x), budget, depth + 1)):
            return True
    return False


def _recorder(kind, fn):
    """A comparator as the tests see it: with a target stand-in among its arguments it
    records what it was passed and returns True; otherwise it is the library's own."""
    def comparator(*args, **kwargs):
        if _has_target(args) or _has_target(kwargs.values()):
            try:
                budget = _Budget()
                rec = {"kind": kind, "args": [_ser(a, budget) for a in args],
                       "kwargs": {str(k): _ser(x, budget) for k, x in kwargs.items()}}
            except NotPlainData as exc:
                rec = {"kind": kind, "refused": str(exc)[:300]}
            except RecursionError:
                rec = {"kind": kind, "refused": "nested too deeply to record"}
            _emit(rec)
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


class Tampering(Exception):
    """Generated code replaced a comparator or builtin the tests rely on."""


def _tampered(before, now=None):
    now, out = now or _snapshot(whole=False), []
    for (m, n), v in before.items():
        if n == "**":       # a module the tests reach (_watch_modules): the same module, no name rebound
            mod, vals, tag = v
            d = _MODULE_DICT(mod)
            if _module_class_odd(mod):
                if f"the module {m} (its class replaced by the generation's)" not in out:
                    out.append(f"the module {m} (its class replaced by the generation's)")
                continue
            if _sys.modules.get(m) is mod and tag is not None and _DICT_TAG(d) == tag:
                continue        # (its dict not written since it was last found unchanged)
            if _sys.modules.get(m) is not mod or dict.__len__(d) < len(vals) or not all(map(_is, dict.values(d), vals)):
                out += [f"{m}.{k}" for k, x in zip(list(d), vals) if dict.get(d, k, _MISSING) is not x][:3] or [f"{m}.*"]
            elif _shadowing(d, len(vals)):
                out.append(f"the module {m} (a new name in it shadows a builtin its functions call: "
                           f"{', '.join(_shadowing(d, len(vals))[:3])})")
            elif tag is not None:
                before[(m, n)] = (mod, vals, _DICT_TAG(d))
            continue
        if n == "*":        # a whole module's names, live: new ones may appear (lazy imports), none change
            if m in _sys.modules and _module_class_odd(_sys.modules[m]):
                if f"the module {m} (its class replaced by the generation's)" not in out:
                    out.append(f"the module {m} (its class replaced by the generation's)")
                continue
            d = vars(_sys.modules[m]) if m in _sys.modules else {}
            if len(d) < len(v) or not all(map(_is, d.values(), v)):
                out += [f"{m}.{k}" for k, x in zip(d, v) if d[k] is not x][:3] or [f"{m}.*"]
            continue
        w = now[(m, n)]
        if w != v:
            out.append("threading (a thread left running; shut pools down)" if m == "threading" else f"{m}.{n}")
    for k, state in list(_WATCHED.values()):     # the library classes whose objects crossed
        if _class_changed(k, state):
            out.append(f"the class {_NAME(k)} (a method replaced on the class itself)")
    return out + _classes_rigged() + _kept_changed()




def _library_classes_changed(out):
    """Every library class's namespace against what it was before any generated code ran,
    after each test case and when the step ends (round 6: `csr_matrix.toarray` replaced by a
    call, no csr object ever crossing, answered the tests' `sp.csr_matrix(f(x)).toarray()`;
    only classes whose objects crossed were watched).  About 20 ms for the 3,161 classes of
    numpy, scipy's usual subpackages and sympy read in Python, so not at every return (a change
    undone by a later call in the same case is not seen).  The namespaces' version tags are
    read in one pass (_Words, well under 1 ms): one whose tag has not moved since it was found
    exactly as recorded is not written since, so not changed; every other is compared."""
    words = _CLS_WORDS[0].changed() if _CLS_WORDS[0] is not None else None
    if words is None:
        todo = list(_PRE_STATE.items())
    else:
        todo = [(i, _PRE_STATE[i]) for i in _CLS_SLOW]
        for p, tag in words:
            i = _CLS_AT[p][0]
            k = _PRE.get(i)
            if k is not None and _class_same(k, _PRE_STATE[i]):
                _CLS_WORDS[0].expect(p, tag)    # (read before the comparison: a later write moves it again)
            else:
                todo.append((i, _PRE_STATE[i]))
    for i, state in todo:
        k = _PRE.get(i)
        if k is None or not _class_changed(k, state):
            continue
        now = _TYPE_DICT(k)         # a method, descriptor or hook replaced, removed or added (a library's own
        keys = [key for key, val in dict.items(state) if now.get(key, _MISSING) is not val     # counters and
                and not _rewrapped(val, now.get(key, _MISSING))]
        keys += [key for key in now.keys() - state.keys() if key in _HOOKS or _method_like(now[key])]  # caches,
        if any(key in _HOOKS or _method_like(state.get(key)) or _method_like(now.get(key)) for key in keys):  # data
            msg = f"the library class {_NAME(k)} (a method replaced on the class itself)"      # it rebinds, pass:
            if msg not in out:                                                                  # sympy's Dummy._count)
                out.append(msg)
    _modules_changed(out)
    _held_changed(out)
    _slot_held_changed(out)
    _functions_changed(out)
    _sympy_classes_changed(out)     # sympy's default facts and fact handlers, changed in place
    return out


_MODS = {}          # every module loaded before any generated code ran (at the step's context point): name ->
                    # (module, its names then, their values then), compared after each case and at the step's end
_MODULE_DICT = _MODULE.__dict__["__dict__"].__get__


def _dict_tag():
    """CPython's version tag of a dict (PEP 509: a new value from a global counter at every
    write; an unwritten dict keeps its tag), read in place: a module's namespace not written
    since it was last found unchanged is skipped without comparing its names.  Used only
    where a self-test shows it behaves so (a value replaced changes it, a read does not);
    otherwise None (every comparison in full)."""
    try:
        import ctypes
        at, off = ctypes.c_uint64.from_address, object.__basicsize__ + ctypes.sizeof(ctypes.c_ssize_t)

        def tag(d):
            return at(id(d) + off).value
        d = {"a": 1, "b": 2}
        t0 = tag(d)
        x = d["a"]
        t1 = tag(d)
        d["a"] = x + 1
        t2 = tag(d)
        d["b"] = 3
        t3 = tag(d)
        return tag if t0 == t1 and len({t1, t2, t3}) == 3 and tag({}) != t3 else None
    except BaseException:
        return None


_DICT_TAG = _dict_tag()


def _word_reader():
    """The machine words at many addresses, read in one pass: a read-only numpy view of the
    address space indexed by an array of word positions.  What the checks after each case
    compare for thousands of objects (a library function's code, defaults and keyword-defaults
    pointers: the very objects `f.__code__` answers; a dict's version tag; an object's class)
    is read so in well under a millisecond, not by one Python call per object (26,790
    functions: about 10 ms).  Only the addresses of objects the checks hold are read.  Used only
    where a self-test shows each field sits where it is read (a field set is read back changed);
    otherwise None, and every check reads each object in Python as before."""
    try:
        import ctypes
        base, n = 4096, ((1 << 47) - 4096) >> 3
        space, frombuffer, u64, intp = ctypes.c_uint64 * n, numpy.frombuffer, numpy.uint64, numpy.intp

        def take(at):
            """The words at positions `at` (a buffer of int64 word indices).  The view exists only
            here, never while generated code runs: no object that spans unmapped memory is
            left for code that walks frames or gc to print (its repr reads the view's ends)."""
            mem = frombuffer(space.from_address(base), dtype=u64)
            mem.flags.writeable = False
            return mem[frombuffer(at, dtype=intp)]

        def read(addrs):
            return take(numpy.array([(a - base) >> 3 for a in addrs], dtype=intp)).tolist()

        def probe(a=_MISSING, *, b=_MISSING):
            pass

        def other(c=None, *, d=None):
            pass
        found = {}
        for want in (_FN_CODE(probe), _FN_DEFAULTS(probe), _FN_KWDEFAULTS(probe)):
            offs = [o for o, w in zip(range(8, 256, 8), read(range(id(probe) + 8, id(probe) + 256, 8))) if w == id(want)]
            if len(offs) != 1:
                return None
            found[len(found)] = offs[0]
        fn = (found[0], found[1], found[2])
        probe.__code__, probe.__defaults__, probe.__kwdefaults__ = \
            _FN_CODE(other), _FN_DEFAULTS(other), _FN_KWDEFAULTS(other)
        if read([id(probe) + o for o in fn]) != [id(_FN_CODE(other)), id(_FN_DEFAULTS(other)),
                                                 id(_FN_KWDEFAULTS(other))]:
            return None
        tag_off = object.__basicsize__ + ctypes.sizeof(ctypes.c_ssize_t)
        d = {"a": 1}
        t0 = read([id(d) + tag_off])[0]
        d["a"] = 2
        t1 = read([id(d) + tag_off])[0]
        type_off = object.__basicsize__ - ctypes.sizeof(ctypes.c_void_p)
        if _DICT_TAG is None or [t0, t1] != [t0, _DICT_TAG(d)] or t0 == t1 or \
                read([id(d) + type_off, id(probe) + type_off]) != [id(dict), id(_types.FunctionType)]:
            return None
        return {"take": take, "base": base, "limit": base + 8 * n, "fn": fn, "tag": tag_off, "type": type_off}
    except BaseException:
        return None


class _Words:
    """Machine words the checks expect at given addresses (a position each, in the order
    added); `changed()` reads them all in one pass and returns the (position, word now) of each
    that differs, or None when they cannot be read so (the caller then checks in Python)."""
    __slots__ = ("at", "want", "ok", "_want")

    def __init__(self):
        self.at, self.want, self.ok, self._want = _ARRAY("q"), _ARRAY("Q"), _WORDS is not None, None

    def expect(self, pos, want):
        self.want[pos], self._want = want, None

    def add(self, addr, want):
        self.at.append(0)
        self.want.append(0)
        self.put(len(self.at) - 1, addr, want)
        return len(self.at) - 1

    def extend(self, addrs, wants):
        """add() for many at once (the functions a module holds: one call, not one per word)."""
        if not addrs or not self.ok:
            return
        base = _WORDS["base"] if _WORDS is not None else 0
        if _WORDS is None or min(addrs) < base or max(addrs) >= _WORDS["limit"] or any(a & 7 for a in addrs):
            self.ok = False
            return
        self.at.extend([(a - base) >> 3 for a in addrs])
        self.want.extend(wants)
        self._want = None

    def put(self, pos, addr, want):
        if _WORDS is None or not _WORDS["base"] <= addr < _WORDS["limit"] or addr & 7:
            self.ok = False
            return
        self.at[pos], self.want[pos], self._want = (addr - _WORDS["base"]) >> 3, want, None

    def changed(self):
        if not self.ok:
            return None
        if not self.at:
            return []
        now = _WORDS["take"](self.at)
        if self._want is None:
            self._want = self.want.tobytes()
        got = now.tobytes()
        if got == self._want:
            return []
        out, step = [], 8 * 512         # (the differing blocks of 512 words, then their words)
        for s in range(0, len(got), step):
            if got[s:s + step] != self._want[s:s + step]:
                p0 = s >> 3
                out += [(p0 + j, a) for j, (a, b) in enumerate(zip(now[p0:p0 + 512].tolist(), self.want[p0:p0 + 512]))
                        if a != b]
        return out
_IMPORT_MODULE = __import__("importlib").import_module
_AST = __import__("ast")


def _tests_modules(sources):
    """The modules the tests and the problem's dependency lines reach by name: those they
    import (with their parent packages), the names they import from a module (a submodule
    when it is one), and the dotted names they reach by attribute through an import alias
    (`scipy.special.gamma` after `import scipy`, `np.fft.fft`); the cases share one
    namespace, so aliases carry across them.  Returns (the modules imported, the names reached)."""
    imported, reached, alias, trees = {}, {}, {}, []
    for src in sources:
        try:
            trees.append(_AST.parse(src))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    for tree in trees:
        for node in _AST.walk(tree):
            if _TYPE(node) is _AST.Import:
                for a in node.names:
                    imported[a.name] = True
                    top = a.name.split(".")[0]
                    alias[a.asname or top] = a.name if a.asname else top
            elif _TYPE(node) is _AST.ImportFrom and node.module and not node.level:
                imported[node.module] = True
                for a in node.names:
                    if a.name != "*":
                        reached[node.module + "." + a.name] = True
                        alias[a.asname or a.name] = node.module + "." + a.name
    for tree in trees:
        for node in _AST.walk(tree):
            if _TYPE(node) is _AST.Attribute and _TYPE(node.ctx) is _AST.Load:
                chain, x = [], node
                while _TYPE(x) is _AST.Attribute:
                    chain.append(x.attr)
                    x = x.value
                if _TYPE(x) is _AST.Name and x.id in alias:
                    name = alias[x.id]
                    for a in reversed(chain):
                        name += "." + a
                        reached[name] = True
    return list(imported), list(reached)


def _watch_modules(sources, before):
    """Before any generated code runs (after the dependency lines): the modules the tests
    import are imported (as their own import would, only earlier: generated code finds them
    loaded and cannot stand in for one), a submodule they reach by attribute too when its
    package has not loaded it; the namespace of each module they reach (and its packages)
    is recorded in `before` and checked at every return of generated code, as numpy's is
    (`Tampering`: `scipy.integrate.simpson` rebound by a later call answered the tests'
    `(simpson(y) > 100) == target`, issue 22 round 5).  Every other loaded module is
    recorded in _MODS, checked after each case and when the step ends (_modules_changed)."""
    imported, reached = _tests_modules(sources)
    for name in imported:
        if name not in _sys.modules:
            try:
                _IMPORT_MODULE(name)
            except BaseException:
                pass
    for name in reached:
        parent, _, last = name.rpartition(".")
        pmod = _sys.modules.get(parent)
        if name in _sys.modules or not isinstance(pmod, _MODULE):
            continue
        pd = _MODULE_DICT(pmod)
        if "__path__" in pd and last not in pd:     # (a package's submodule not loaded yet, a lazy one)
            try:
                _IMPORT_MODULE(name)
            except BaseException:
                pass
    names = {}
    for name in imported + reached:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            names[".".join(parts[:i])] = True
    for name in names:
        mod = _sys.modules.get(name)
        if name not in ("sys", "__main__") and isinstance(mod, _MODULE):
            d = _MODULE_DICT(mod)
            before[(name, "**")] = (mod, tuple(dict.values(d)), _DICT_TAG(d) if _DICT_TAG else None)
    _record_modules()


def _record_modules():
    """Every loaded module's names and values into _MODS: when the worker is warm (the step's
    process inherits them), then at the step's context point those new or written since
    (the dependency lines, the tests' imports loaded ahead).  Those recorded before whose class
    and dict's tag are as recorded (read in one pass, _Words) are not written since."""
    tag = _DICT_TAG(_sys.modules) if _DICT_TAG is not None else None
    words = _MOD_WORDS[0].changed() if _MOD_WORDS[0] is not None else None
    moved = None if words is None else {_MOD_AT[p] for p, _ in words}
    if moved is not None and tag is not None and tag == _SYSMOD["rec"]:
        todo = [(name, _MODS[name][0]) for name in moved]   # (sys.modules not written since they were recorded)
    else:
        todo = list(_sys.modules.items())
    for name, mod in todo:
        rec = _MODS.get(name)
        if moved is not None and rec is not None and rec[0] is mod and rec[3] is not None and name not in moved:
            continue
        if name != "__main__" and isinstance(mod, _MODULE):
            d = _MODULE_DICT(mod)
            if rec is None or rec[0] is not mod or rec[3] is None or _DICT_TAG(d) != rec[3]:
                _MODS[name] = (mod, tuple(d), tuple(dict.values(d)), _DICT_TAG(d) if _DICT_TAG else None)
                _module_words(name, mod, d)
                if _DICT_TAG is not None:
                    _record_held(d)
                _record_functions(d)
    _SYSMOD["rec"] = _SYSMOD["same"] = tag


_SYSMOD = {"rec": None, "same": None}   # sys.modules's version tag when every module in it was last recorded
                                        # ("rec"), when every recorded one was last found still in it ("same")


_FN_RECS = {}   # id of a library function -> (it, its code, defaults, kwdefaults) before any generated code ran
_DISPATCHER = _TYPE(numpy.sum)      # (numpy's array-function dispatcher: its Python implementation)


def _record_functions(md):
    """The functions a module holds, its dispatchers' implementations and its classes' methods,
    with their code and defaults (round 8: `scipy.integrate.simpson.__code__ = ...` or
    `np.sum._implementation.__code__` set by a later call rigged the tests' own computation; the
    function object, its module's names and every dict stayed as they were)."""
    fns = []
    for x in list(dict.values(md)):
        t = _TYPE(x)
        if t is _LRU:           # (round 9: `igcd.__wrapped__.__code__ = ...`, the function an lru_cache calls)
            try:
                x, t = dict.get(_OBJ_GET(x, "__dict__"), "__wrapped__"), None
            except Exception:
                continue
            if _TYPE(x) is not _types.FunctionType:
                continue
            t = _types.FunctionType
        if t is _types.FunctionType:
            fns.append(x)
            cells = _FN_CLOSURE(x)
            if cells is not None:       # (a decorator's wrapper: the function it calls, in its closure)
                for c in cells:
                    try:
                        y = _CELL(c)
                    except ValueError:
                        continue
                    if _TYPE(y) is _types.FunctionType:
                        fns.append(y)
        elif t is _DISPATCHER:
            try:
                fns.append(_DISPATCHER._implementation.__get__(x, t))
            except Exception:
                pass
        elif issubclass(t, type) and _FLAGS(x) & _HEAP:
            for y in list(_TYPE_DICT(x).values()):
                if _TYPE(y) is staticmethod or _TYPE(y) is classmethod:
                    y = y.__func__
                if _TYPE(y) is _types.FunctionType:
                    fns.append(y)
    addrs, wants, ats = [], [], []
    for f in fns:
        if _TYPE(f) is _types.FunctionType and id(f) not in _FN_RECS:
            rec = _FN_RECS[id(f)] = (f, _FN_CODE(f), _FN_DEFAULTS(f), _FN_KWDEFAULTS(f))
            i, kw = id(f), rec[3]
            for x in (rec[2] or ()) + (tuple(dict.values(kw)) if _TYPE(kw) is dict else ()):
                if _TYPE(x) is list:    # (a mutable default: its content, not its pointer, is what a call reads)
                    _FN_MUT.append((f, x, tuple(x)))
                elif _TYPE(x) is dict:
                    _FN_MUT.append((f, x, _DICT_TAG(x) if _DICT_TAG is not None else None))
            if kw is not None:      # (the keyword defaults are a dict: written in place, its pointer stays)
                tag = _DICT_TAG(kw) if _DICT_TAG is not None and _TYPE(kw) is dict else None
                _FN_KW[i] = [kw, tuple(kw), tuple(dict.values(kw)), tag, None]
                if tag is None or not _FN_WORDS.ok:
                    _FN_KW_SLOW.append(i)
            if _FN_WORDS.ok:
                for o, x in zip(_WORDS["fn"], rec[1:]):
                    addrs.append(i + o)
                    wants.append(0 if x is None else id(x))     # (None: NULL in the field)
                    ats.append(i)
                if kw is not None and _FN_KW[i][3] is not None:
                    _FN_KW[i][4] = len(_FN_WORDS.at) + len(addrs)
                    addrs.append(id(kw) + _WORDS["tag"])
                    wants.append(_FN_KW[i][3])
                    ats.append(i)
    if addrs and _FN_WORDS.ok:
        _FN_WORDS.extend(addrs, wants)
        _FN_AT.extend(ats)


_LRU = _functools._lru_cache_wrapper
_FN_MUT = []     # (a recorded function, a list or dict among its defaults, the list's items or the dict's tag) (round 9:
                # `chebint.__defaults__[1].append(5.0)` set the integration constant every `chebint(c)` adds; a dict
                # default is often a library's memo (mpmath's `ifac(n, memo={...})`): only a generation's object in it counts)


def _mutable_defaults_changed():
    bad = []
    for f, x, was in _FN_MUT:
        if _TYPE(was) is tuple:
            if list.__len__(x) != len(was) or not all(map(_is, x, was)):
                bad.append(f)
        elif was is None or _DICT_TAG(x) != was:
            if any(map(_generated_held, list(dict.values(x)))):
                bad.append(f)
    return bad


_FN_KW, _FN_KW_SLOW = {}, []    # id of a recorded function with keyword defaults -> [that dict, its keys, its values,
                                # its version tag when last found as recorded, its tag's position in _FN_WORDS]
                                # (round 9: `simpson.__kwdefaults__['dx'] = ...` wrote the very dict the pointer
                                # still named); those without a tag or a word are compared after each case


def _kwdefaults_changed(i):
    """A recorded function's keyword-defaults dict written since: its tag moved and it no
    longer holds the very keys and values recorded (found so, it is expected at its new tag)."""
    kw, keys, vals, tag, pos = _FN_KW[i]
    now = _DICT_TAG(kw) if tag is not None else None
    if now is not None and now == tag:
        return False
    if dict.__len__(kw) != len(keys) or tuple(kw) != keys or not all(map(_is, dict.values(kw), vals)):
        return True
    if now is not None:
        _FN_KW[i][3] = now
        if pos is not None:
            _FN_WORDS.expect(pos, now)      # (read before the comparison)
    return False


def _functions_changed(out):
    """The recorded library functions whose code or defaults were set since (after each case and
    at the step's end: about 10 ms for the 26,790 functions with numpy, scipy's usual
    subpackages and sympy loaded, read in Python; about 0.3 ms read in one pass by _Words; a
    change undone within the case is not seen)."""
    words = _FN_WORDS.changed()
    if words is None:
        recs, kws = list(_FN_RECS.values()), list(_FN_KW)
    else:
        ids = list(dict.fromkeys(_FN_AT[p] for p, _ in words))
        recs, kws = [_FN_RECS[i] for i in ids], [i for i in ids if i in _FN_KW] + _FN_KW_SLOW
    bad = [f for f, c, d, k in recs
           if _FN_CODE(f) is not c or _FN_DEFAULTS(f) is not d or _FN_KWDEFAULTS(f) is not k]
    bad += [_FN_RECS[i][0] for i in dict.fromkeys(kws) if _kwdefaults_changed(i)] + _mutable_defaults_changed()
    for f in bad[:3]:
        msg = f"the library function {str(_FN_QUALNAME(f))[:80]} (its code or defaults set)"
        if msg not in out:
            out.append(msg)
    return out


_HELD = {}      # id of a dict a module holds, or of the instance dict of an object a module holds (before any
                # generated code ran) -> (the object or None, the dict, its version tag when last found clean)


def _record_held(md):
    for x in list(dict.values(md)):
        t = _TYPE(x)
        owner = None
        if t is _PARTIAL:       # (a partial's keywords: the dict each call merges, written in place)
            kw = _PARTIAL_KW(x, t)
            if _TYPE(kw) is dict and id(kw) not in _SLOT_IDS:
                _SLOT_IDS.add(id(kw))
                _SLOT_HELD.append([x, None, kw, _DICT_TAG(kw) if _DICT_TAG is not None else None])
            continue
        if t is not dict:
            if not _FLAGS(t) & _HEAP or isinstance(x, type) or t is _MODULE or t in _FUNCS:
                continue
            slots = _SLOTS_OF.get(t)
            if slots is None:
                slots = _SLOTS_OF[t] = _slots(t)
            for sl in slots:    # (a dict in a slot: sympy's dispatchers' `funcs`, without an instance dict)
                try:
                    v = sl.__get__(x, t)
                except Exception:
                    continue
                if _TYPE(v) is dict and id(v) not in _SLOT_IDS:
                    _SLOT_IDS.add(id(v))
                    _SLOT_HELD.append([x, sl, v, _DICT_TAG(v) if _DICT_TAG is not None else None])
            owner = x
            try:
                x = _instance_dict(x, t)
            except NotPlainData:
                continue
            if x is None:
                continue
        if id(x) not in _HELD:
            _HELD[id(x)] = (owner, x, _DICT_TAG(x))
            if owner is not None:
                _HELD_CLASS[id(x)] = t
            _held_words(id(x), owner, x)


_SLOT_HELD, _SLOT_IDS, _SLOTS_OF = [], set(), {}  # [an object a module holds, its slot (None: a partial's keywords),
# the dict in it, the dict's tag] (round 9: `_eval_is_eq.add((Symbol, Symbol), g)` put a generation's function in a
# sympy Dispatcher's `funcs`, a slot: `Eq(a, b)` answered True; `_default_array_repr.keywords[...]` numpy's repr)
_PARTIAL_KW = _PARTIAL.__dict__["keywords"].__get__


def _slot_held_changed(out):
    """The dicts in the slots of objects modules hold, and partials' keywords: written since
    (their tags) or put in place of the recorded one (a library's own reset: `_cache = {}`),
    they must not hold a callable or object of the generation's.  Compared in Python (a few
    hundred dicts)."""
    for rec in _SLOT_HELD:
        x, sl, d, tag = rec
        try:
            now = _PARTIAL_KW(x, _PARTIAL) if sl is None else sl.__get__(x, _TYPE(x))
        except Exception:
            now = None
        if now is d and tag is not None and _DICT_TAG(d) == tag:
            continue
        if _TYPE(now) is not dict:
            continue
        bad = [k for k, v in list(dict.items(now)) if _generated_held(v)]
        if bad:
            msg = f"a library registry or object's dict ({', '.join(map(str, bad[:3]))[:120]}: a callable or object " \
                  "of the generation's put where a library calls it)"
            if msg not in out:
                out.append(msg)
        else:
            rec[2], rec[3] = now, _DICT_TAG(now) if _DICT_TAG is not None else None
    return out


_HELD_CLASS = {}    # the key of a held object's dict -> the object's class when recorded (round 9: `norm.__class__ =
                    # S`, a subclass of the generation's with its own `_ppf`, left the object, its dict and tag as they were)


_HELD_WORDS, _HELD_AT, _HELD_SLOW = [None], [], []     # (_Words: each recorded dict's version tag, and where
                                                        # an object holds it, the object's pointer to it and class)
_MANAGED_DICT = 1 << 4      # (CPython 3.11: the instance dict's pointer sits 3 words before the object)
_TYPE_SIZE, _TYPE_ITEMSIZE = type.__dict__["__basicsize__"].__get__, type.__dict__["__itemsize__"].__get__


def _held_words(key, owner, d):
    if _HELD_WORDS[0] is None:
        _HELD_WORDS[0] = _Words()
    words = _HELD_WORDS[0]
    if not words.ok:
        return
    if owner is not None:
        t = _TYPE(owner)
        off, addr = type.__dict__["__dictoffset__"].__get__(t), None
        if _FLAGS(t) & _MANAGED_DICT:
            addr = id(owner) - 3 * 8
        elif off > 0:
            addr = id(owner) + off
        elif off < 0:           # (a variable-size object, an int subclass's: after its items, as CPython finds it)
            size = _read_word(id(owner) + 2 * 8)
            if size is not None:
                size = size - (1 << 64) if size >= 1 << 63 else size
                addr = id(owner) + ((_TYPE_SIZE(t) + abs(size) * _TYPE_ITEMSIZE(t) + 7) & ~7) + off
        if addr is None or _read_word(addr) != id(d):
            _HELD_SLOW.append(key)      # (checked in Python after each case)
            return
        words.add(addr, id(d))
        words.add(id(owner) + _WORDS["type"], id(t))
        _HELD_AT.extend((key, key))
    _HELD_TAG_POS[key] = words.add(id(d) + _WORDS["tag"], _HELD[key][2])
    _HELD_AT.append(key)


_HELD_TAG_POS = {}


def _read_word(addr):
    if _WORDS is None or not _WORDS["base"] <= addr < _WORDS["limit"] or addr & 7:
        return None
    return _WORDS["take"](_ARRAY("q", [(addr - _WORDS["base"]) >> 3])).tolist()[0]


def _held_changed(out):
    """The dicts library modules hold (registries: `copy._deepcopy_dispatch`) and the instance
    dicts of the objects they hold (`scipy.stats.norm`), written since before any generated
    code ran (their version tags), must not hold a callable or an object of the generation's
    (round 8: a function put in `copy._deepcopy_dispatch` was called unwrapped by the tests'
    `copy.deepcopy`, `norm._ppf` set to one answered `norm.ppf`): a library calls what they
    hold on the tests' behalf, unwrapped.  After each case and at the step's end; about 1 ms
    for the ~4,900 dicts with numpy, scipy's usual subpackages and sympy loaded, read in Python;
    about 0.05 ms with their tags and owners' dict pointers and classes read in one pass (_Words:
    only the dicts that moved are looked into)."""
    if _DICT_TAG is None:
        return out
    words = _HELD_WORDS[0].changed() if _HELD_WORDS[0] is not None else None
    keys = list(_HELD) if words is None else list(dict.fromkeys([_HELD_AT[p] for p, _ in words] + _HELD_SLOW))
    for key in keys:
        owner, d, tag = _HELD[key]
        now = d
        if owner is not None and _TYPE(owner) is not _HELD_CLASS.get(key, _TYPE(owner)) and not _library(_TYPE(owner)):
            msg = f"a library object's class ({str(_NAME(_HELD_CLASS[key]))[:60]} replaced by the generation's)"
            if msg not in out:
                out.append(msg)
        if owner is not None:           # (an object's __dict__ can be replaced whole)
            try:
                now = _instance_dict(owner, _TYPE(owner))
            except NotPlainData:
                now = None
        if now is d and _DICT_TAG(d) == tag:
            continue
        bad = [k for k, v in list(dict.items(now))
               if _generated_held(v)] if _TYPE(now) is dict else ["its __dict__ replaced"]
        if bad:
            msg = f"a library registry or object's dict ({', '.join(map(str, bad[:3]))[:120]}: a callable or object " \
                  "of the generation's put where a library calls it)"
            if msg not in out:
                out.append(msg)
        elif now is d:
            _HELD[key] = (owner, d, _DICT_TAG(d))
            if words is not None and key not in _HELD_SLOW:
                _HELD_WORDS[0].expect(_HELD_TAG_POS[key], _HELD[key][2])
    return out


def _generated_held(v):
    t = _TYPE(v)
    if t in _SCALARS:
        return False
    for _ in range(_MAX_NEST):          # (a library's callable around it: a static or class method, what
        if t is staticmethod or t is classmethod:       # functools wrapped and said so in `__wrapped__`:
            v = v.__func__                              # singledispatch, lru_cache; read from its dict)
        elif t is _types.FunctionType or t is _functools._lru_cache_wrapper:
            w = dict.get(_OBJ_GET(v, "__dict__"), "__wrapped__", _MISSING)
            if w is _MISSING or _generated_callable(v):
                break
            v = w
        else:
            break
        t = _TYPE(v)
    if _generated_callable(v):
        return True
    return bool(_FLAGS(t) & _HEAP) and not _library(t) and id(t) not in _OWN and not isinstance(v, type) \
        and t is not _Exposed and t is not _ClassConst


_BUILTIN_NAMES = {k: x for k, x in vars(builtins).items() if not k.startswith("__")}


def _shadowing(d, n):
    """The names added to a module's dict since it held n (a dict keeps insertion order: they
    follow the first n) that shadow a builtin (round 8: `statistics.len = ...`, a new name,
    answered `len` in `statistics.fmean`: new names pass as lazy imports do)."""
    return [k for k in list(d)[n:] if _TYPE(k) is str and k in _BUILTIN_NAMES
            and dict.get(d, k) is not _BUILTIN_NAMES[k]]


def _module_class_odd(mod):
    """A module whose class is the generation's (round 8: `si.__class__ = M`, a ModuleType
    subclass with a `simpson` property, answered `si.simpson` with its own function while the
    module, its dict and the dict's version tag stayed the same).  A library's own module class
    (importlib's lazy module turning itself into a plain one) is not."""
    t = _TYPE(mod)
    return t is not _MODULE and not _library(t)


_MOD_WORDS, _MOD_AT, _MOD_POS = [None], [], {}     # (_Words: each recorded module's class and its dict's tag)


def _module_words(name, mod, d):
    if _MOD_WORDS[0] is None:
        _MOD_WORDS[0] = _Words()
    words = _MOD_WORDS[0]
    if not words.ok:
        return
    pos = _MOD_POS.get(name)
    if pos is None:
        pos = _MOD_POS[name] = words.add(id(mod) + _WORDS["type"], id(_TYPE(mod)))
        words.add(id(d) + _WORDS["tag"], _MODS[name][3])
        _MOD_AT.extend((name, name))
    else:
        words.put(pos, id(mod) + _WORDS["type"], id(_TYPE(mod)))
        words.put(pos + 1, id(d) + _WORDS["tag"], _MODS[name][3])


def _modules_changed(out):
    """The loaded library modules against what they were before any generated code ran:
    a function, class, module or other callable or descriptor rebound in one is `Tampering`
    (a helper of `scipy.integrate._quadrature` rebound rigs `simpson`); a data value rebound
    (a module's own counters and caches) passes, as new names do.  About 3 ms for 1,400
    modules read in Python, so after each case and at the step's end, not at every return;
    about 0.2 ms with the modules' classes and their dicts' tags read in one pass (_Words: a
    module whose class and tag are as recorded is compared no further)."""
    words = _MOD_WORDS[0].changed() if _MOD_WORDS[0] is not None else None
    if words is None:
        names = list(_MODS)
    else:
        names = [_MOD_AT[p] for p, _ in words]
        tag = _DICT_TAG(_sys.modules)
        if tag != _SYSMOD["same"]:      # (sys.modules written since: each recorded module looked up)
            recs = list(_MODS.items())
            mods = [r[0] for _, r in recs]
            if all(map(_is, map(_sys.modules.get, [n for n, _ in recs], mods), mods)):
                _SYSMOD["same"] = tag
            else:
                names += [n for n, r in recs if _sys.modules.get(n, r[0]) is not r[0]]
    for name in dict.fromkeys(names):
        mod, keys, vals, tag = _MODS[name]
        d = _MODULE_DICT(mod)
        if _module_class_odd(mod):
            msg = f"the module {name} (its class replaced by the generation's)"
            if msg not in out:
                out.append(msg)
            continue
        if _sys.modules.get(name, mod) is not mod:      # (round 8: a library's `from scipy.special import
            msg = f"the module {name} (another object stands for it in sys.modules)"   # comb` found a stand-in)
            if msg not in out:
                out.append(msg)
            continue
        if tag is not None and _DICT_TAG(d) == tag:
            continue
        if dict.__len__(d) >= len(vals) and all(map(_is, dict.values(d), vals)):
            bad = _shadowing(d, len(vals))
            if bad:
                msg = f"the library module {name} (a new name in it shadows a builtin its functions call: " \
                      f"{', '.join(bad[:3])})"
                if msg not in out:
                    out.append(msg)
            elif tag is not None:
                _MODS[name] = (mod, keys, vals, _DICT_TAG(d))
                if words is not None:
                    _MOD_WORDS[0].expect(_MOD_POS[name] + 1, _MODS[name][3])
            continue
        bad = [k for k, x in zip(keys, vals) if dict.get(d, k, _MISSING) is not x
               and (_method_like(x) or _method_like(dict.get(d, k))) and not _rewrapped(x, dict.get(d, k, _MISSING))]
        msg = f"the library module {name} ({', '.join(map(str, bad[:3]))} rebound)"
        if bad and msg not in out:
            out.append(msg)
    return out


_FN_CODE, _FN_GLOBALS = _types.FunctionType.__code__.__get__, _types.FunctionType.__globals__.__get__
_FN_KWDEFAULTS, _FN_QUALNAME = _types.FunctionType.__kwdefaults__.__get__, _types.FunctionType.__dict__["__qualname__"].__get__
_FN_CLOSURE, _FN_DEFAULTS = _types.FunctionType.__closure__.__get__, _types.FunctionType.__defaults__.__get__
_CELL = _types.CellType.cell_contents.__get__
_WORDS = _word_reader()
_FN_WORDS, _FN_AT = _Words(), []     # the recorded functions' code, defaults, keyword defaults (their ids)


def _rewrapped(a, b, depth=0):
    """b is a new closure of a's very code over the same objects (mpmath's `_wrap_specfun`
    sets fresh wrappers of its own functions on `MPContext` whenever a context is made: a
    sympy `solve` then failed as `Tampering`); a wrapper of other code or over another
    function (a library's wrapper around a generated function) is not."""
    if a is b:
        return True
    if _TYPE(a) is not _types.FunctionType or _TYPE(b) is not _types.FunctionType or depth > 4:
        return False
    if _FN_CODE(a) is not _FN_CODE(b) or _FN_GLOBALS(a) is not _FN_GLOBALS(b) or _FN_DEFAULTS(a) is not _FN_DEFAULTS(b):
        return False
    ca, cb = _FN_CLOSURE(a) or (), _FN_CLOSURE(b) or ()
    if len(ca) != len(cb):
        return False
    for x, y in zip(ca, cb):
        try:
            vx, vy = _CELL(x), _CELL(y)
        except ValueError:
            return False
        if not _rewrapped(vx, vy, depth + 1):
            return False
    return True


def _method_like(x):
    t = _TYPE(x)
    return x is not None and t not in _SCALARS and (callable(x) or any(
        "__get__" in _TYPE_DICT(b) for b in _TYPE_MRO(t) if b is not object))


def _from_generated(_get=_sys._getframe, _files=_GENERATED_FILES):
    """Is the caller of the wrapper generated code (its own internal call)?"""
    try:
        return _get(2).f_code.co_filename.startswith(_files)
    except ValueError:
        return False


def _crossing_exception(exc):
    """An exception a generated callable raises to the tests crosses as plain data too (a copy
    of its class with its args and attributes converted, its traceback kept): a test that
    catches it and compares `e.args[0]` or `e.v` holds no object of the generation's."""
    t = _TYPE(exc)
    if t is NotPlainData or t is Tampering or not isinstance(exc, BaseException):
        return exc
    try:                                # (a built-in exception type is copied as a library object)
        c = _plain(exc, _Budget(), 0, {}) if _FLAGS(t) & _HEAP else _copy_instance(exc, t, _Budget(), 0, {}, True)
    except NotPlainData as bad:
        return bad.with_traceback(exc.__traceback__)
    except RecursionError:
        return NotPlainData("an exception nested too deeply to convert").with_traceback(exc.__traceback__)
    if c is exc or c is _MISSING:
        return exc
    if not isinstance(c, BaseException):    # (its class has hooks: it would cross as a record)
        return NotPlainData(f"an exception of {_NAME(t)}, a class with hooks made by the generation"
                            ).with_traceback(exc.__traceback__)
    return c.with_traceback(exc.__traceback__)


def _checked(fn, before):
    """Every callable the generation defines, as the tests (and the libraries they call)
    see it: its result comes back as plain data (_plain); an object of the generation's own
    class it was called on has its attributes converted; the comparators, builtins and the
    recorder must still be the objects they were.  A call from generated code itself (an
    internal call) returns as it is."""
    def checked(*args, **kwargs):
        return _checked_call(fn, before, _from_generated(), args, kwargs)
    try:
        checked.__name__, checked.__qualname__, checked.__doc__ = \
            str(getattr(fn, "__name__", "f")), str(getattr(fn, "__qualname__", "f")), None
    except BaseException:
        pass
    checked.__wrapped__ = fn
    _OWN_FUNCS[id(checked)] = checked
    return checked


class _Exposed:
    """A generated callable as the tests hold it (issue 22, round 7).  A call runs as any
    wrapped call (_checked_call; as generated code's own call when its caller is generated
    code).  An attribute — what the generation set on its function, an lru_cache's
    `cache_info`/`cache_clear`, a partial's `func`/`args` — is read from the callable at each
    access (a generic attribute read: no code of the generation runs) and comes back
    converted as a returned value does (a callable comes back wrapped and exposed, its calls
    wrapped); dunder names other than the few a function is described by are not read.  No
    state of its own to rewrite: what it stands for is in the grader's table (_EXPOSED)."""
    __slots__ = ()

    def __call__(self, *args, **kwargs):
        _, fn, _, before = _EXPOSED[id(self)]
        return _checked_call(fn, before, _from_generated(), args, kwargs)

    def __getattr__(self, name):
        entry = _EXPOSED.get(id(self))
        if entry is None or entry[0] is not self:
            raise AttributeError(name)
        if name == "__wrapped__":       # (inspect.signature: the wrapped function's parameters)
            return entry[2]
        if name.startswith("__") and name.endswith("__") and name not in _EXPOSED_DUNDERS:
            raise AttributeError(f"the wrapped callable's {name!r} is not read in this process")
        return _plain(getattr(entry[1], name))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        entry = _EXPOSED.get(id(self))
        return "<function %s>" % (str(getattr(entry[2], "__name__", "f")) if entry else "f")


_EXPOSED = {}       # id of an _Exposed -> (it, the generated callable, its wrapper, the tamper snapshot)
_EXPOSED_DUNDERS = frozenset(("__name__", "__qualname__", "__doc__", "__defaults__", "__kwdefaults__",
                              "__annotations__", "__dict__"))
_FUNCS = _FUNCS | frozenset((_Exposed,))


def _expose(fn, checked):
    """A wrapped callable as the tests receive it (_plain): its attributes readable."""
    out = _Exposed()
    _EXPOSED[id(out)] = (out, fn, checked, _CUR["before"])
    _OWN_FUNCS[id(out)] = out
    return out


def _checked_call(fn, before, internal, args, kwargs):
    """One call of a wrapped callable (`internal`: its caller is generated code itself)."""
    if internal:
        out = fn(*args, **kwargs)
    else:
        budget, memo, back = _Budget(), {}, {}
        ins = [_copy_in(a, budget, memo) for a in args]
        kins = {k: _copy_in(x, budget, memo) for k, x in kwargs.items()}
        try:
            out = fn(*[a if c is _MISSING else c for a, c in zip(args, ins)],
                     **{k: kwargs[k] if c is _MISSING else c for k, c in kins.items()})
        except BaseException as exc:
            _recheck_classes()
            raise _crossing_exception(exc)
        pairs = [(a, c) for a, c in zip(args, ins) if c is not _MISSING] + \
            [(kwargs[k], c) for k, c in kins.items() if c is not _MISSING]
        for a, c in pairs:          # a copy handed in stands for the caller's object
            if _FLAGS(_TYPE(a)) & _HEAP:
                back[id(c)] = (c, a)
        done = set()
        for a, c in pairs:
            if id(c) not in done:   # (an object handed twice: one copy, written back once)
                done.add(id(c))
                _write_back(a, c, budget, back)
        out = _plain(out, budget, 0, back)
        _settle_args([a for a, c in zip(args, ins) if c is _MISSING],
                     {k: kwargs[k] for k, c in kins.items() if c is _MISSING}, budget)
        _recheck_classes()
    bad = _tampered(before)
    if bad:
        raise Tampering("replaced " + ", ".join(bad))
    return out


_CHECKED_CALL_CODE, _PLAIN_ITER_CODE = _checked_call.__code__, _plain_iter.__code__
_WRAPPED_CLASSES = {}
# the dunders wrapped besides the named methods (the hooks are refused when an object
# crosses; wrapping __eq__/__lt__/__hash__ would tax every internal sort and dict lookup)
_WRAPPED_DUNDERS = ("__init__", "__call__", "__str__", "__repr__", "__format__", "__new__", "__enter__",
                    "__exit__", "__next__",     # (__new__: the generation's own only, not Enum's)
                    "__get__", "__set__", "__delete__",     # (a descriptor class of its own: round 7)
                    "__missing__",      # (round 7: a dict subclass's default, its result converted)
                    "__setitem__", "__delitem__", "__class_getitem__")  # (round 8: the tests' `p[k] = v`
                                        # handed the tests' own object, `P[k]` returned unconverted)


def _wrap(v):
    """A generated callable of any kind, wrapped (plain functions, static and class methods,
    callable objects, partials, numpy-vectorized functions, decorated functions)."""
    if id(v) in _OWN_FUNCS:
        return v
    t = _TYPE(v)
    if t is staticmethod:
        return staticmethod(_wrap(v.__func__))
    if t is classmethod:
        return classmethod(_checked(v.__func__, _CUR["before"]))
    return _checked(v, _CUR["before"])


def _wrap_class(cls):
    """The methods of a class the generation made, wrapped in place (its __init__ and
    __call__ too; its own comparison/numpy hooks are refused when an object crosses)."""
    if _library(cls) or id(cls) in _OWN:
        return
    for base in _TYPE_MRO(cls)[1:]:     # its own base classes' methods too (inherited, called the same way)
        if not _library(base) and id(base) not in _OWN:
            _wrap_class(base)
    meta = _TYPE(cls)                   # its own metaclass (its __call__ answers `cls(...)`)
    if meta is not cls and not _library(meta) and id(meta) not in _OWN:
        _wrap_class(meta)
    seen = _WRAPPED_CLASSES.get(id(cls))
    if seen is not None and seen[0] is cls and (seen[1] is None or _same_namespace(cls, seen[1])):
        return          # (wrapped or being wrapped, nothing added or replaced since: a method set later is wrapped)
    first = (seen is None or seen[0] is not cls) and bool(_FLAGS(cls) & _HEAP)    # (round 7's guards: a Python class)
    _WRAPPED_CLASSES[id(cls)] = (cls, None)
    if first:
        _guard_dataclass(cls)
        _guard_constants(cls)
    record = id(_CLASS_HOOKS.get(id(cls), (None,))[0]) != id(cls)  # its hooks as they were when first
    for attr, member in list(_TYPE_DICT(cls).items()):                # wrapped (a wrapped __missing__ as such)
        if attr.startswith("__") and attr not in _WRAPPED_DUNDERS or _is_wrapped(member):
            continue
        if attr == "__new__" and not _generated_callable(getattr(member, "__func__", member)):
            continue
        t = _TYPE(member)
        try:        # a class that refuses new attributes keeps its methods as they are
            if t is _types.FunctionType:
                setattr(cls, attr, _checked(member, _CUR["before"]))
            elif t is staticmethod or t is classmethod:
                setattr(cls, attr, _wrap(member))
            elif t is property:
                setattr(cls, attr, property(*(None if f is None else _checked(f, _CUR["before"])
                                              for f in (member.fget, member.fset, member.fdel)), member.__doc__))
            elif t is _functools._lru_cache_wrapper:     # binds as a method: kept a function
                setattr(cls, attr, _checked(member, _CUR["before"]))
            elif t is _functools.partialmethod and _TYPE(member.func) is _types.FunctionType:
                setattr(cls, attr, _functools.partialmethod(_checked(member.func, _CUR["before"]),
                                                            *member.args, **member.keywords))
            elif t is _functools.cached_property:
                cp = _functools.cached_property(_checked(member.func, _CUR["before"]))
                setattr(cls, attr, cp)
                cp.__set_name__(cls, attr)
            elif t in _FUNCS:           # a partial, a vectorized function ... on the class: not bound
                setattr(cls, attr, staticmethod(_checked(member, _CUR["before"])))
            elif isinstance(member, type) and not _library(member):
                _wrap_class(member)
            elif _FLAGS(t) & _HEAP and not _library(t) and id(t) not in _OWN and any(
                    h in _TYPE_DICT(b) for b in _TYPE_MRO(t) if b is not object for h in _DESCRIPTOR_HOOKS):
                _wrap_class(t)          # (a descriptor of its own class: its __get__/__set__ wrapped)
        except Exception:
            pass
    if first:                           # (after its methods are wrapped: a wrapped __missing__ is no hook)
        _guard_construction(cls)
    if record:
        _CLASS_HOOKS[id(cls)] = (cls, {k: x for k, x in _TYPE_DICT(cls).items() if k in _HOOKS})
    _WRAPPED_CLASSES[id(cls)] = (cls, dict(_TYPE_DICT(cls)))


_CLASS_HOOKS = {}


def _guard_dataclass(cls):
    """A dataclass of the generation's, when first wrapped (round 7: before, its objects made by
    the tests were refused, its generated `__eq__` being a hook): the comparison and frozen
    hooks its parameters call for (`__eq__`; `__lt__` ... with order; `__setattr__`/
    `__delattr__` when frozen) are replaced by the grader's own, with the dataclass semantics
    (its fields as a tuple, compared when the other object is of exactly its class; an
    assignment to a frozen field raises FrozenInstanceError): whatever the generation wrote
    there no longer answers, in the tests or in its own code.  Another hook keeps it refused."""
    ns = _TYPE_DICT(cls)
    params = ns.get("__dataclass_params__")
    if _TYPE(ns.get("__dataclass_fields__")) is not dict or _TYPE(params) is not _DC_PARAMS:
        return
    flags = {k: _DC_PARAMS.__dict__[k].__get__(params) for k in ("eq", "order", "frozen")}
    if any(_TYPE(v) is not bool for v in flags.values()):
        return
    allowed = (("__eq__",) if flags["eq"] else ()) + (_DC_ORDER if flags["order"] else ()) + \
        (("__setattr__", "__delattr__") if flags["frozen"] else ()) + ("__hash__",)
    hooks = [k for k in list(ns) if k in _HOOKS and not (k == "__hash__" and ns[k] is None)]
    if not hooks or any(k not in allowed for k in hooks):
        return
    names = _dataclass_fields(cls) or []
    made = {}
    for k in hooks:
        if k in _DC_OPS:
            made[k] = _dc_compare(_DC_OPS[k])
        elif k == "__hash__":           # (round 8: its fields' hash, as the dataclass's own)
            made[k] = _dc_hash
        else:
            made[k] = _dc_frozen(cls, frozenset(names), k == "__setattr__")
    for k, fn in made.items():
        _GRADER_HOOKS[id(fn)] = fn
        try:
            type.__setattr__(cls, k, fn)
        except Exception:
            return


_DC_PARAMS = _dataclasses._DataclassParams
_DC_ORDER = ("__lt__", "__le__", "__gt__", "__ge__")
_DC_OPS = {"__eq__": _operator.eq, "__lt__": _operator.lt, "__le__": _operator.le, "__gt__": _operator.gt,
           "__ge__": _operator.ge}
_GRADER_HOOKS = {}      # id -> the grader's own hook functions installed on a generation's dataclass


def _dc_compare(op):
    def compare(self, other):
        t = _TYPE(self)
        if _TYPE(other) is not t:
            return NotImplemented
        names = _dataclass_compared(t)
        return op(tuple([_OBJ_GET(self, n) for n in names]), tuple([_OBJ_GET(other, n) for n in names]))
    return compare


def _dc_hash(self):
    t = _TYPE(self)
    for c in _TYPE_MRO(t):
        f = _TYPE_DICT(c).get("__dataclass_fields__")
        if _TYPE(f) is dict:
            return hash(tuple([_OBJ_GET(self, n) for n, x in dict.items(f) if _TYPE(x) is _FIELD
                               and x._field_type is _FIELD_KIND and _TYPE(n) is str
                               and (x.compare if x.hash is None else x.hash)]))
    return hash(())


def _dataclass_compared(k):
    """The fields a dataclass compares (round 8: not those with `compare=False`, as the
    dataclass's own `__eq__`/order do; before, `P(1.0, 1) == P(1.0, 2)` was False)."""
    for c in _TYPE_MRO(k):
        f = _TYPE_DICT(c).get("__dataclass_fields__")
        if _TYPE(f) is dict:
            return [n for n, x in dict.items(f) if _TYPE(x) is _FIELD and x._field_type is _FIELD_KIND
                    and _TYPE(n) is str and _TYPE(x.compare) is bool and x.compare]
    return []


def _dc_frozen(cls, names, setting):
    def frozen(self, name, *value):
        if _TYPE(self) is cls or name in names:
            raise _dataclasses.FrozenInstanceError(f"cannot {'assign to' if setting else 'delete'} field {name!r}")
        return (object.__setattr__ if setting else object.__delattr__)(self, name, *value)
    return frozen


def _guard_construction(cls):
    """A class of the generation's with hooks of its own (not the grader's) whose objects no
    generated code makes (no `__new__` or `__init__` of the generation's in its MRO: a wrapped
    one refuses or converts them), when first wrapped (round 7): its `__new__` is the grader's,
    which refuses an object the tests construct themselves (the nearest frame that is not a
    library's is the tests'): `P() > 100` would run its hook unwrapped.  Generated code (also
    through a library: copy.deepcopy) constructs as before."""
    if _ENUM in _TYPE_MRO(cls):
        return
    mro = [c for c in _TYPE_MRO(cls) if c is not object and not _library(c) and id(c) not in _OWN]
    if not any(_own_hooks(_TYPE_DICT(c)) for c in mro) or \
            any(_is_wrapped(_TYPE_DICT(c).get(k)) for c in mro for k in ("__new__", "__init__")):
        return      # (round 8: a wrapped one only; `__init__ = object.__init__` skipped the guard)
    solid = _solid(cls)

    def __new__(k, *args, **kwargs):
        if _constructed_by_tests():
            raise NotPlainData(f"an object of {_NAME(k)}, a class made by the generation that overrides "
                               "comparison/numpy hooks, constructed by the tests")
        return object.__new__(k) if solid is object else solid.__new__(k, *args, **kwargs)
    _OWN_FUNCS[id(__new__)] = __new__
    try:
        type.__setattr__(cls, "__new__", staticmethod(__new__))
    except Exception:
        pass


def _constructed_by_tests(_get=_sys._getframe):
    """The tests are above the constructor with no wrapped call in between (whose result is
    converted).  Round 8: before, the nearest frame that was not a library's decided, so
    generated code a library called unwrapped for the tests (a function the generation put in
    `copy._deepcopy_dispatch`) constructed for them."""
    f = _get(2)
    while f is not None:
        code = f.f_code
        if code is _CHECKED_CALL_CODE or code is _PLAIN_ITER_CODE:    # (a returned generator the
            return False                                            # tests draw from: its items converted)
        if code.co_filename.startswith("<test "):
            return True
        f = f.f_back
    return False


class _ClassConst:
    """A class constant of the generation's that is an object of its own class with hooks (a
    `Vector.ZERO`), as its class holds it once the class is wrapped (round 7; before, the
    class was refused: read through the class, `type(h).ZERO > 0` would have run its hooks in
    the tests).  Read by generated code (its caller's frame is the generation's), it is the
    object itself, as the generation made it; read by anyone else (the tests, a library they
    called), it is converted as a returned value is, at each read (a record of its fields: no
    hook of it runs).  No state of its own to rewrite: the object is in the grader's table."""
    __slots__ = ()

    def __get__(self, obj, typ=None):
        entry = _CONSTS.get(id(self))
        if entry is None or entry[0] is not self:
            raise AttributeError("a class constant the grader no longer knows")
        if _from_generated():
            return entry[1]
        return _plain(entry[1])


_CONSTS = {}        # id of a _ClassConst -> (it, the generation's object)
_PLAIN_DESCRIPTORS = _PLAIN_DESCRIPTORS | frozenset((_ClassConst,))


def _guard_constants(cls):
    """When a class of the generation's is first wrapped: its public class constants that are
    objects of its own classes with hooks stand behind a _ClassConst (one set later, by a call
    or a finalizer, is refused as before: _class_data_checked)."""
    if _ENUM in _TYPE_MRO(cls):
        return
    for k, x in list(dict.items(_class_state(cls))):
        if _TYPE(k) is not str or k.startswith("__") and k.endswith("__"):     # (round 8: `_ZERO` too)
            continue
        t = _TYPE(x)
        if not _FLAGS(t) & _HEAP or _library(t) or id(t) in _OWN or isinstance(x, type) or \
                any("__get__" in _TYPE_DICT(b) for b in _TYPE_MRO(t) if b is not object) or not _hooked(t):
            continue
        const = _ClassConst()
        _CONSTS[id(const)] = (const, x)
        try:
            type.__setattr__(cls, k, const)
        except Exception:
            _CONSTS.pop(id(const), None)


def _recheck_classes():
    """The generation's classes changed since they were wrapped (a method or property added
    by a later call, its objects already with the tests): wrapped again, at the return of
    every wrapped call."""
    for cls, state in list(_WRAPPED_CLASSES.values()):
        if state is not None and not _same_namespace(cls, state):
            _wrap_class(cls)


def _class_data_checked():
    """The data attributes of the generation's wrapped classes, read live through the class
    itself (`type(h).v`, `H.v`: no copy stands between the tests and them), must be plain
    data at every return of a wrapped call and when the step ends (_classes_rigged, in the
    tamper check): what they hold is checked
    as a library object's contents are (_scan: an object of the generation's class with
    hooks, a rigged subclass of a number, a generated callable in a library object, a weakref
    proxy are NotPlainData; a hookless object of its own is checked the same way, left as
    it is)."""
    budget, seen = _Budget(), {}
    for cls, state in list(_WRAPPED_CLASSES.values()):
        for k, x in _class_data(cls, True):
            try:
                if _TYPE(x) is tuple and any(map(_generated_callable, tuple.__iter__(x))):
                    x = tuple([_wrap(y) if _generated_callable(y) else y for y in tuple.__iter__(x)])
                    type.__setattr__(cls, k, x)
                _wrap_held(x, budget, 0)
                _scan(x, budget, 0, seen, False)
            except NotPlainData as exc:
                raise NotPlainData(f"the class attribute {_NAME(cls)}.{k} (read live through the class) "
                                   f"is not plain data: {exc}")


def _wrap_held(x, budget, depth):
    """The generation's callables held in a class's lists and dicts (a dispatch table),
    wrapped in place (its own calls through them run as before: an internal call)."""
    budget.items += 1
    if budget.items > _MAX_ITEMS or depth > _MAX_NEST:
        return                          # (_scan then refuses it with its reason)
    t = _TYPE(x)
    if t is list:
        for i, y in enumerate(list(list.__iter__(x))):
            if _generated_callable(y):
                list.__setitem__(x, i, _wrap(y))
            else:
                _wrap_held(y, budget, depth + 1)
    elif t is dict:
        for k, y in list(dict.items(x)):
            if _generated_callable(y):
                dict.__setitem__(x, k, _wrap(y))
            else:
                _wrap_held(y, budget, depth + 1)


def _classes_rigged():
    """The generation's wrapped classes with a hook added or replaced since they were first
    wrapped, or a callable member not wrapped (set by code that ran outside any wrapped call:
    a finalizer, a gc pass): objects of theirs the tests hold would answer with them."""
    out = []
    try:
        _class_data_checked()
    except NotPlainData as exc:
        out.append(str(exc))
    for cls, hooks in list(_CLASS_HOOKS.values()):
        ns = _TYPE_DICT(cls)
        if _ENUM in _TYPE_MRO(cls) and _FLAGS(cls) & _HEAP and _hooked(cls):
            out.append(f"the class {_NAME(cls)} (an Enum of the generation's with comparison/numpy hooks: its "
                       "members, singletons, reach the tests through the class as they are, E.A or E(value))")
            continue
        if any(ns.get(k, _MISSING) is not x for k, x in hooks.items()) or \
                any(k in _HOOKS and k not in hooks for k in list(ns)):
            out.append(f"the class {_NAME(cls)} (a comparison/numpy hook added or replaced after it was wrapped)")
            continue
        if _FLAGS(cls) & _HEAP and any(map(_unwrapped_descriptor, [         # (`object` is wrapped too: not
                x for x in list(ns.values()) if _TYPE(x) not in _PLAIN_DESCRIPTORS and _TYPE(x) not in _SCALARS])):  # its slots)
            out.append(f"the class {_NAME(cls)} (it holds a descriptor whose __get__ would run generated code "
                       "unwrapped)")
            continue
        seen = _WRAPPED_CLASSES.get(id(cls))
        if seen is not None and seen[1] is not None and not _same_namespace(cls, seen[1]) and any(
                not _is_wrapped(m) and (_TYPE(m) in _FUNCS or _TYPE(m) in (staticmethod, classmethod, property,
                                                                            _functools.cached_property))
                and (not k.startswith("__") or k in _WRAPPED_DUNDERS) for k, m in list(ns.items())):
            out.append(f"the class {_NAME(cls)} (a method set on it outside any wrapped call)")
    return out


def _unwrapped_descriptor(x):
    """A descriptor in a wrapped class's namespace that reading an attribute through it would
    run generated code unwrapped with (round 7; before, a class on `property` set by a later
    call answered `h.v` with its getter's rigged value): of the generation's own class whose
    `__get__`/`__set__`/`__delete__` cannot be wrapped (_wrapped_descriptor: a subclass of
    `property` ...), or of a library class holding a generated callable (a `property`
    subclass's getter, `DynamicClassAttribute`'s `fget`)."""
    if not _odd_descriptor(x):
        return False
    t = _TYPE(x)
    if not _library(t) or id(t) in _OWN:
        return True
    held = []
    if property in _TYPE_MRO(t):
        held += [_PROP_FGET(x), _PROP_FSET(x), _PROP_FDEL(x)]
    try:
        state = _instance_dict(x, t)
    except NotPlainData:
        return True
    held += list(dict.values(state)) if state is not None else []
    return any(map(_generated_callable, held))


_PROP_FGET, _PROP_FSET, _PROP_FDEL = (property.__dict__[k].__get__ for k in ("fget", "fset", "fdel"))


def _same_namespace(cls, state):
    now = _TYPE_DICT(cls)
    return len(now) == len(state) and all(map(_is, now.values(), state.values())) and now.keys() == state.keys()


def _is_wrapped(m, _own=_OWN_FUNCS):
    t = _TYPE(m)
    if t is _Exposed:
        return id(m) in _own
    if t is _types.FunctionType:
        return id(m) in _own
    if t is staticmethod or t is classmethod:
        return id(m.__func__) in _own
    if t is property:
        return all(f is None or id(f) in _own for f in (m.fget, m.fset, m.fdel))
    if t is _functools.cached_property or t is _functools.partialmethod:
        return id(m.func) in _own
    return False


def _check_generated(tns, before, defined):
    """Wrap, in the tests' namespace, everything the generated code defined (names new or
    rebound since the dependency lines): callables wrapped, classes' methods wrapped in
    place, anything else converted to plain data."""
    _CUR["before"] = before
    for key in defined:
        value = tns.get(key)
        if isinstance(value, type) and not _library(value):
            _wrap_class(value)
        else:
            tns[key] = _plain(value)


_GUARDED = [("numpy", n) for n in ("allclose", "isclose", "array_equal", "all", "any", "abs", "asarray",
                                    "ascontiguousarray", "ndarray", "generic", "integer")] + \
           [("builtins", n) for n in ("isinstance", "len", "all", "any", "abs", "__import__", "exec",
                                      "compile", "AssertionError", "bool", "float", "int", "zip", "print",
                                      "type", "str", "repr", "dict", "list", "tuple", "iter", "map", "vars")] + \
           [("scicode.compare.cmp", n) for n in ("cmp_tuple_or_list", "are_dicts_close",
                                                 "are_csc_matrix_close")]


_TARGET_SLOTS = ("__init__", "__eq__", "__ne__", "__hash__", "__getitem__", "__iter__", "__getattr__",
                 "__bool__", "__len__", "__array__", "__array_ufunc__", "_case", "_path")


_EXPOSED_SLOTS = ("__call__", "__getattr__", "__copy__", "__deepcopy__", "__repr__", "__slots__")
_CONST_SLOTS = ("__get__", "__slots__")


def _fn_state(f):
    return (id(f), id(getattr(f, "__code__", None)), id(getattr(f, "__defaults__", None)))


def _recorder_state():
    """The recorder's own parts (functions with their code and defaults, the modules it
    uses), the interpreter's trace hooks and its threads (a hook could rewrite what the tests
    pass in before it is recorded)."""
    g = globals()
    fns = [vars(_Target).get(k) for k in _TARGET_SLOTS] + [vars(_Exposed).get(k) for k in _EXPOSED_SLOTS] + [
        vars(_ClassConst).get(k) for k in _CONST_SLOTS] + [
        g.get(k) for k in ("_checked_call", "_expose")] + [g.get(k) for k in (
        "_emit", "_emit_cmp", "_ser", "_has_target", "_b64npy", "_recorder", "_plain", "_settle",
        "_checked", "_wrap", "_wrap_class", "_tampered", "_from_generated", "_library", "_hooked",
        "_dataclass_fields", "_namedtuple_fields", "_own_class", "_class_changed", "_settle_args", "_scan",
        "_odd_descriptor", "_wrapped_descriptor", "_unwrapped_descriptor", "_guard_constants", "_guard_dataclass", "_guard_construction",
        "_constructed_by_tests",
        "_own_hooks", "_dc_compare", "_dc_hash", "_dataclass_compared", "_dc_frozen", "_void_check", "_generated_callable", "_same_namespace", "_is_wrapped",
        "_copy_instance", "_state_value", "_fields_record", "_instance_dict", "_slots", "_data_of", "_user_data",
        "_keeps_identity", "_numpy_hooked", "_copy_in", "_copy_in_new", "_write_back", "_class_data",
        "_recheck_classes", "_classes_rigged", "_crossing_exception",
        "_attr_key", "_held", "_keep_watch", "_kept_changed", "_facts_ok", "_node_facts_ok", "_node_base",
        "_sympy_clone", "_facts_of", "_kb_generator", "_same_items", "_sympy_class_changed", "_stateless", "_solid", "_class_data_checked", "_wrap_held", "_write_array", "_copy_view", "_write_view", "_dict_filled",
        "_deque_filled", "_plain_iter", "_library_classes_changed", "_modules_changed", "_watch_modules",
        "_tests_modules", "_module_class_odd", "_shadowing", "_record_held", "_held_changed", "_generated_held", "_record_functions", "_functions_changed", "_kwdefaults_changed", "_slot_held_changed", "_mutable_defaults_changed", "_rewrapped", "_record_modules", "_sympy_class_tags",
        "_method_like")] + [_CUR.get("send")] + \
        [getattr(_sys.modules.get(m), n, None) for m, n in _GUARDED[:3] + _GUARDED[-3:]]
    return (tuple(_fn_state(f) for f in fns), id(type(_CUR)), id(g.get("_CUR")),
            tuple(id(g.get(k)) for k in ("numpy", "base64", "io", "_json", "_os", "_sys", "_PRE", "_PRE_STATE",
                                         "_WATCHED", "_OWN", "_OWN_FUNCS", "_TYPE", "_TYPE_DICT", "_TYPE_MRO",
                                         "_OBJ_GET", "_NP_COPY", "_COPYTO", "_SCALARS", "_FUNCS", "_HOOKS", "_FLAGS",
                                         "_NAME", "_DATA_BASES", "_USER_DATA", "_NUMPY_HOOKS",
                                         "_ENUM", "_GETSET", "_MEMBER", "_BASE_EXC", "_EXC_ARGS",
                                         "_COPIED_IN", "_WRAPPED_DUNDERS", "_CLASS_HOOKS",
                                         "_WRAPPED_CLASSES", "_HANDED_DATA", "_SHAPE", "_KEPT", "_LAZY", "_LAYOUT", "_SY", "_SY_CLASSES", "_FACTS", "_MODS", "_DICT_TAG",
                                         "_MODULE_DICT",
                                         "_GEN_SEND", "_GEN_THROW", "_GEN_CLOSE", "_ARRAY", "_RANDOM_C",
                                         "_EXPOSED", "_EXPOSED_DUNDERS", "_Exposed", "_CONSTS", "_ClassConst",
                                         "_PLAIN_DESCRIPTORS", "_WRAPPED_HOOKS", "_GRADER_HOOKS", "_DC_OPS", "_DC_PARAMS", "_CHECKED_CALL_CODE", "_PLAIN_ITER_CODE", "_FN_RECS", "_FN_KW", "_FN_KW_SLOW", "_HELD_CLASS", "_FN_MUT", "_SLOT_HELD", "_PARTIAL_KW", "_LRU")),
            id(_json.dumps), id(_os.write), id(base64.b64encode), id(numpy.lib.format.write_array),
            id(_sys.gettrace()), id(_sys.getprofile()), _sys.getswitchinterval())


def _snapshot(whole=True):
    out = {(m, n): id(getattr(_sys.modules.get(m), n, None)) for m, n in _GUARDED}
    out[("recorder", "state")] = _recorder_state()
    out[("threading", "threads")] = _thread._count()   # one left running could rewrite a record first
    # code that runs outside any wrapped call (a signal handler, a timer, a gc callback) could
    # rewrite an object of the generation's own class after it was converted
    out[("signal", "handlers")] = tuple(map(id, map(_GETSIGNAL, _SIGNALS)))
    out[("signal", "timers")] = tuple(_GETITIMER(w)[0] > 0 for w in _ITIMERS)
    out[("gc", "callbacks")] = tuple(map(id, _GC_CALLBACKS))
    for m in _WHOLE_MODULES if whole else ():   # np.__dict__["sum"] = ... would rig `(np.sum(a) > b) == target`
        out[(m, "*")] = tuple(vars(_sys.modules[m]).values()) if m in _sys.modules else ()
    return out


_WHOLE_MODULES = ("numpy", "numpy.linalg", "numpy.random", "math", "cmath", "builtins")
_GETSIGNAL, _GETITIMER = signal.getsignal, signal.getitimer
_SIGNALS = tuple(signal.valid_signals())
_ITIMERS = (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)
_GC_CALLBACKS = __import__("gc").callbacks
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


def _compile_unlimited(src, name, _get=getattr(_sys, "get_int_max_str_digits", None),
                       _set=getattr(_sys, "set_int_max_str_digits", None)):
    """The extracted source, compiled with no integer-string digit limit (the grader wrote a
    long literal of the reply in decimal); the generation then runs under the usual limit."""
    if _set is None:
        return compile(src, name, "exec")
    old = _get()
    _set(0)
    try:
        return compile(src, name, "exec")
    finally:
        _set(old)


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
    tag = _DICT_TAG(_sys.modules) if _DICT_TAG is not None else None
    _sys.modules["__main__"] = main
    if tag is not None and tag == _SYSMOD["rec"]:   # (the one name no record holds: sys.modules as recorded)
        _SYSMOD["rec"] = _SYSMOD["same"] = _DICT_TAG(_sys.modules)
    rec = _HELD.get(id(_sys.modules))       # (sys.modules as a dict the sys module holds: found clean before, it
    if tag is not None and rec is not None and rec[1] is _sys.modules and rec[2] == tag:   # holds no more
        _HELD[id(_sys.modules)] = (rec[0], rec[1], _DICT_TAG(_sys.modules))               # than `main` now)
        if id(_sys.modules) in _HELD_TAG_POS:
            _HELD_WORDS[0].expect(_HELD_TAG_POS[id(_sys.modules)], _HELD[id(_sys.modules)][2])
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
    library_ns = {}
    late = []
    for phase in ("deps", "context", "code"):
        src = job[phase]
        if phase == "context":      # what the dependency lines bound; their new classes are the library's
            library_ns = dict(ns)
            if not job["dry"]:
                _watch_modules([job["deps"] or ""] + [c for c in job["cases"] if _TYPE(c) is str], before)
            if len(_sys.modules) != _PRE_MODULES[0]:
                _learn_classes()
        if not src or not src.strip() or (job["dry"] and phase != "deps"):
            continue
        try:
            exec(_compile_unlimited(src, f"<{phase} {step}>"), ns)
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
        defined = [k for k, v in ns.items() if not (k.startswith("__") and k.endswith("__"))
                   and (k not in library_ns or library_ns[k] is not v)]
        try:
            _check_generated(tns, before, defined)
        except BaseException as exc:
            csend({"phase": "code", "ok": False, "error": _err(exc)})
            job["cases"] = []
        for i, case in enumerate(job["cases"]):
            _CUR["case"], _CUR["arity"] = i, dict(job["arity"][i])
            tns["target"] = _Target(i, [])
            try:
                exec(compile(case, f"<test {step} case {i + 1}>", "exec"), tns)
                csend({"case": i, "ok": True})
            except BaseException as exc:
                csend({"case": i, "ok": False, "error": _err(exc)})
            _library_classes_changed(late)
    after = _snapshot()
    tamper = _tampered(before, after) + _library_classes_changed(late)
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


_learn_classes()            # warm: every class that exists now is the library's
_record_modules()           # (the step's process adds what its dependency lines load)
send({"ready": True, "shim": _SHIM_OK, "runtime": {
    "python": _sys.version.split()[0], "executable": _sys.executable, "prefix": _sys.prefix,
    "modules": {_n: getattr(_sys.modules.get(_n), "__version__", None) for _n in ("numpy", "scipy", "h5py")}}})
_SPARE = _spawn()
for _line in _sys.stdin:
    if not _line.strip():
        continue
    _run(_json.loads(_line), _line, _SPARE)
    _SPARE = _spawn()
_discard(_SPARE)
