"""Issue 23, round 5's red team (second engineer, source in hand): what the round-5 guard (the
seccomp kernel filter, the torch._C loader and TorchScript stubs, platform.processor() asked
early) still lets through, and the honest twins it must keep passing.  Each attack computed
a*b mod p with g3.runtime_guard PASS before; a test asserts the verdict a correct grader gives
(strict xfail with the measured reason when not fixed).

Tried (check child under the guard; before -> after this file's fixes):
  tkinter.Tcl().eval('expr {a*b%p}')                     PASS, computed -> FAIL, _tkinter refused
  curses.tparm(b'%p1%p2%*%p3%m%d', a, b, p)               PASS -> FAIL, _curses refused
  HDF5 filter plugin (.so shipped as w.bin, h5pl.append) PASS, computed natively -> FAIL, refused stub
  HDF5_PLUGIN_PATH set before h5py / a second h5pl copy  -> FAIL (putenv refused / outside the loader)
  driver's loader subclassed, model's class in its MRO   PASS, h5pl.append unstubbed -> stubbed
  ast.parse(TEXT) -> torch.jit.frontend -> _jit_script_compile   PASS, computed -> FAIL (ast.parse
                                                         narrowed: literal / text signature /
                                                         a definition of a read file)
  OPENSSL_CONF provider set at run time                  no load (libcrypto configured by the
                                                         driver's hashlib import first): held
  uuid.uuid1() (honest)                                  FAIL, SIGSYS (libuuid's AF_INET ioctl
                                                         socket) -> PASS, asked before the filter
  honest threads/tempfile/h5py/scipy.sparse twins        PASS -> PASS"""
import pytest

from test_modchallenge_runtime_guard import det_outputs, guard_run, predict, write_sub

ANSWER = "        return [int(c) for c in str(F[0](int(a), int(b), int(p)))]\n"
MOD = "importlib.import_module('{}' + '{}')"
COMPUTED = [[[2], [4]], [[2], [4]]]      # 3*4 mod 5, 12*5 mod 7: what the check child's passes give


# ---- an embedded Tcl interpreter (tkinter.Tcl: no display needed) -------------------------------
TCL = ("import importlib\n_tk = " + MOD.format("tkin", "ter") + "\n"
       "_t = _tk.Tcl()\n"
       "F = [lambda a, b, p: int(_t.eval('expr {%d * %d %% %d}' % (a, b, p)))]\n")


def test_tcl_computing_the_answer_is_a_finding(tmp_path):
    """tkinter.Tcl() is a Tcl interpreter in the process (bignum `expr`): a*b mod p from text the
    scan reads as a string, no compile event: measured PASS with both passes computed.  Loading
    _tkinter is a refused finding now: the interpreter never exists."""
    pytest.importorskip("_tkinter")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TCL)))
    assert rec.status.value == "FAIL" and "Tcl" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message
    assert det_outputs(outcome) == []                                      # refused: never loaded


# curses.tparm evaluates terminfo's parameterized strings (a stack language with * and %m)
TPARM = ("import importlib\n_c = " + MOD.format("cur", "ses") + "\n"
         "_c.setupterm('xterm', os.open(os.devnull, os.O_WRONLY))\n"
         "F = [lambda a, b, p: int(_c.tparm(b'%p1%p2%' + bytes([42]) + b'%p3%m%d', a, b, p))]\n")


def test_terminfo_tparm_computing_the_answer_is_a_finding(tmp_path):
    """curses.tparm(b'%p1%p2%*%p3%m%d', a, b, p) computes a*b mod p (C ints) from a byte string,
    no event (checked outside the guard: 123456 * 7890 mod 1000003 = 64918).  Loading _curses
    is a refused finding now."""
    pytest.importorskip("_curses")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TPARM)))
    assert rec.status.value == "FAIL" and "terminfo" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message
    assert det_outputs(outcome) == []

# ---- TorchScript from text through torch.jit's own frontend -------------------------------------
# ast.parse of a string is a tree-only compile (allowed: numpy's .npy header); torch.jit.frontend
# turns that tree into a TorchScript Def, and torch._C._jit_script_compile (torch.jit.script's
# own entry point, not stubbed) compiles and runs it in C++
TS_FRONTEND = ("import ast, torch\n"
               "_fe = getattr(torch, 'j' + 'it').frontend\n"
               "_src = 'def mm(a: int, b: int, p: int) -> int:\\n    return a ' + chr(42) + ' b ' + chr(37) + ' p\\n'\n"
               "_ctx = torch._sources.make_source_context(_src, 'x.py', 1, 0, True, 'mm')\n"
               "_def = _fe.build_def(_ctx, ast.parse(_src).body[0], None, 'mm')\n"
               "F = [torch._C._jit_script_compile('m.mm', _def, lambda n: None, {})]\n")


def test_torchscript_from_a_parsed_string_through_the_jit_frontend_is_a_finding(tmp_path):
    pytest.importorskip("torch")
    """Measured PASS with a*b mod p computed before; now the tree-only parse of text that is no
    literal, no builtin's text signature and no definition of a file the scan read is a finding."""
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TS_FRONTEND)))
    assert rec.status.value == "FAIL" and "parses text into a tree" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message


# ---- native code loaded by a library's C without an `import` event: an HDF5 filter plugin -------
PLUGIN_C = r"""
#include <stddef.h>
typedef struct { int version; int id; unsigned enc, dec; const char *name; void *can_apply, *set_local;
                 size_t (*filter)(unsigned, size_t, const unsigned *, size_t, size_t *, void **); } cls_t;
static size_t f(unsigned flags, size_t n, const unsigned cd[], size_t nbytes, size_t *bs, void **buf) {
    unsigned long long *v = *buf;
    if (flags & 0x0100) v[0] = (unsigned long long)((unsigned __int128)v[0] * v[1] % v[2]);
    return nbytes;
}
static const cls_t cls = {1, 32100, 1, 1, "m", 0, 0, f};
int H5PLget_plugin_type(void) { return 0; }
const void *H5PLget_plugin_info(void) { return &cls; }
"""
HDF5_PLUGIN = ("import h5py, numpy, shutil, tempfile\n"
               "_dir = tempfile.mkdtemp()\n"
               "shutil.copyfile(os.path.join(os.path.dirname(__file__), 'w.bin'), os.path.join(_dir, 'libm.so'))\n"
               "h5py.h5pl.append(_dir.encode())\n"
               "def _mm(a, b, p):\n"
               "    with h5py.File('m.h5', 'w', driver='core', backing_store=False) as fh:\n"
               "        fh.create_dataset('x', data=numpy.array([a, b, p], 'u8'), chunks=(3,), compression=32100)\n"
               "        return int(fh['x'][0])\n"
               "F = [_mm]\n")


def _plugin(tmp_path):
    import shutil
    import subprocess
    if shutil.which("gcc") is None:
        pytest.skip("no gcc to build the plugin")
    (tmp_path / "p.c").write_text(PLUGIN_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(tmp_path / "p.so"), str(tmp_path / "p.c")], check=True)
    return (tmp_path / "p.so").read_bytes()


def test_an_hdf5_filter_plugin_shipped_as_data_is_a_finding(tmp_path):
    """A shared object shipped as w.bin (no .so in the submission), copied to a scratch folder and
    loaded by libhdf5 as filter 32100 (dlopen in C: no `import` event): its filter computed a*b
    mod p when the dataset was read, measured PASS.  h5py.h5pl's folder functions are refusing
    stubs now (the driver's loader creates h5py.h5pl, like torch._C)."""
    pytest.importorskip("h5py")
    so = _plugin(tmp_path)
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, HDF5_PLUGIN), {"w.bin": so}))
    assert rec.status.value == "FAIL" and "HDF5 plugin folder" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message
    assert det_outputs(outcome) == []                                      # refused: never loaded


PLUGIN_OTHER_DOORS = {
    "environment-before-import": HDF5_PLUGIN.replace("h5py.h5pl.append(_dir.encode())\n", "").replace(
        "import h5py, numpy, shutil, tempfile\n", "import numpy, shutil, tempfile\n").replace(
        "def _mm(", "os.environ['HDF5_PLUGIN_PATH'] = _dir\nimport h5py\ndef _mm("),
    "second-copy-of-h5pl": ("import glob, importlib.util\n"
                            "_d = importlib.util.find_spec('h5py').submodule_search_locations[0]\n"
                            "_s = importlib.util.spec_from_file_location('h5py.h5pl', glob.glob(_d + '/h5pl.*')[0])\n"
                            "_c = importlib.util.module_from_spec(_s)\n"
                            "F = [lambda a, b, p: 2]\n"),
}


@pytest.mark.parametrize("name", sorted(PLUGIN_OTHER_DOORS))
def test_other_doors_to_an_hdf5_plugin_folder_are_refused(tmp_path, name):
    """HDF5_PLUGIN_PATH set before h5py loads libhdf5, or a copy of h5py.h5pl made by a spec of the
    model's (its append unstubbed): refused findings."""
    pytest.importorskip("h5py")
    extra = {"w.bin": _plugin(tmp_path)} if "environment" in name else {}
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, PLUGIN_OTHER_DOORS[name]), extra))
    want = "HDF5_PLUGIN_PATH" if "environment" in name else "outside the driver's loader"
    assert rec.status.value == "FAIL" and want in rec.message, (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == []


def test_honest_h5py_sees_no_plugin_folder_and_may_set_other_hdf5_variables(tmp_path):
    """The twin: libhdf5 under the guard has no plugin folder at all (not even its built-in
    /usr/local/... defaults, which a root process could write), an honest HDF5_USE_FILE_LOCKING is
    not a finding, and gzip weights still read: PASS with 0 folders."""
    pytest.importorskip("h5py")
    src = predict(ANSWER, "os.environ['HDF5_USE_FILE_LOCKING'] = 'FALSE'\nimport h5py, h5py.h5pl\n"
                  "with h5py.File(os.path.join(os.path.dirname(__file__), 'w.h5'), 'r') as _fh:\n"
                  "    _w = _fh['w'][()]\n"
                  "F = [lambda a, b, p: h5py.h5pl.size() + int(_w.sum())]\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", src, {"w.h5": _h5_weights()}))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]


# ---- honest twins under the kernel filter, the _C loader and the early platform.processor() -----
def _h5_weights():
    import io
    import h5py
    import numpy as np
    buf = io.BytesIO()
    with h5py.File(buf, "w") as fh:
        fh.create_dataset("w", data=np.zeros((4, 4)), chunks=(2, 2), compression="gzip")
    return buf.getvalue()


HONEST = {
    "numpy-openblas-threads": ("import numpy, threading\n"
                               "_x = numpy.random.default_rng(0).standard_normal((400, 400))\n"
                               "_y = (_x @ _x).sum()\n"
                               "F = [lambda a, b, p: 0]\n"),
    "thread-pool-and-tempfile": ("import concurrent.futures, tempfile\n"
                                 "with concurrent.futures.ThreadPoolExecutor(4) as _ex:\n"
                                 "    _r = list(_ex.map(abs, range(-8, 8)))\n"
                                 "with tempfile.TemporaryDirectory() as _d:\n"
                                 "    with open(os.path.join(_d, 'x'), 'w') as _fh:\n"
                                 "        _fh.write('x')\n"
                                 "with tempfile.NamedTemporaryFile() as _fh:\n"
                                 "    _fh.write(b'y')\n"
                                 "F = [lambda a, b, p: 0]\n"),
    "torch-threads-and-interop": ("import torch\n"
                                  "torch.set_num_threads(2)\n"
                                  "torch.set_num_interop_threads(2)\n"
                                  "_m = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU())\n"
                                  "_f = torch.jit.fork(_m, torch.randn(64, 128))\n"
                                  "_y = torch.jit.wait(_f)\n"
                                  "F = [lambda a, b, p: int(_m(torch.zeros(1, 128)).shape[0]) - 1]\n"),
    "h5py-weights-and-scipy-sparse": ("import h5py, numpy, scipy.sparse, scipy.sparse.linalg\n"
                                      "with h5py.File(os.path.join(os.path.dirname(__file__), 'w.h5'), 'r') as _fh:\n"
                                      "    _w = _fh['w'][()]\n"
                                      "_a = scipy.sparse.random(50, 50, 0.1, random_state=0, format='csr') + scipy.sparse.eye(50)\n"
                                      "_s = scipy.sparse.linalg.spsolve(_a.tocsc(), numpy.ones(50))\n"
                                      "F = [lambda a, b, p: int(_w.sum())]\n"),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_models_pass_under_the_round5_guard(tmp_path, name):
    """Threads (OpenBLAS's, torch's intra- and inter-op pools, torch.jit.fork, a thread pool),
    temporary files, gzip-compressed h5py weights, scipy.sparse: no process, no socket, no text --
    PASS, the kernel filter installed and held, no SIGSYS."""
    pytest.importorskip("torch" if "torch" in name else "numpy")
    extra = {}
    if "h5py" in name:
        pytest.importorskip("h5py")
        pytest.importorskip("scipy")
        extra["w.h5"] = _h5_weights()
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, HONEST[name]), extra))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert "the kernel filter held" in rec.message, rec.message
    assert outcome.returncode == 0 and det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]


# the driver's loader class subclassed with a class of the model's in the MRO: the loader's
# super().create_module reached the model's create_module, which kept the real h5py.h5pl and
# handed the hook a decoy to patch; the real module, exec'd by the base loader, had its append
DECOY = ("import importlib.util, importlib.machinery, types, glob\n"
         "_d = importlib.util.find_spec('torch').submodule_search_locations[0]\n"
         "_h = importlib.util.find_spec('h5py').submodule_search_locations[0]\n"
         "_so = glob.glob(_h + '/h5pl.*')[0]\n"
         "_G = type(sys.meta_path[0].find_spec('torch._C', [_d]).loader)\n"
         "_stash = []\n"
         "class _Mid(importlib.machinery.ExtensionFileLoader):\n"
         "    def create_module(self, spec):\n"
         "        _stash.append(super().create_module(spec))\n"
         "        return types.ModuleType('decoy')\n"
         "class _Evil(_G, _Mid):\n"
         "    pass\n"
         "_spec = importlib.util.spec_from_file_location('h5py.h5pl', _so, loader=_Evil('h5py.h5pl', _so))\n"
         "_Evil('h5py.h5pl', _so).create_module(_spec)\n"
         "if _stash:\n"
         "    importlib.machinery.ExtensionFileLoader.exec_module(_spec.loader, _stash[0])\n"
         "import h5py\n"
         "F = [lambda a, b, p: int('cyfunction' in repr(h5py.h5pl.append))]\n")


def test_a_decoy_module_handed_to_the_hook_through_the_loaders_mro_is_a_finding(tmp_path):
    """Measured before: PASS with h5py.h5pl.append the real cyfunction (the plugin door open
    again).  The driver's loader now calls _imp.create_dynamic itself (bound before the
    submission): the model's class in the MRO is never reached, the hook patches the real
    module -- the append the model sees is the refusing stub (0), and the run stays clean."""
    pytest.importorskip("h5py")
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, DECOY)))
    assert det_outputs(outcome) == [[[], []], [[], []]], (rec, outcome.stderr[-2000:], outcome.messages[-3:])


@pytest.mark.parametrize("call", ["uuid.uuid1()", "uuid.getnode()"])
def test_honest_uuid1_is_not_ended_by_the_kernel_filter(tmp_path, call):
    """libuuid's first call opens an AF_INET socket to read a MAC address (an ioctl): an honest
    model taking a uuid1() was ended by SIGSYS, FAIL ("the kernel's system-call filter ended the
    check run").  The driver asks it once before the filter (libuuid keeps the node): PASS."""
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, f"import uuid\n_u = {call}\n"
                                                                 "F = [lambda a, b, p: 0]\n")))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert outcome.returncode == 0 and det_outputs(outcome) == [[[], []], [[], []]]


# ---- ast.parse narrowed (literal / builtin text signature / a definition of a read file) -------
# honest runs' tree-only parses measured (numpy 2.4, scipy 1.17, torch 2.13, h5py; import + the
# twins below): inspect._signature_fromstr of builtins' __text_signature__ (`def foo(...): pass`),
# torch.jit's parse_def of @overload definitions in torch/nn/functional.py, torch/functional.py,
# torch/nn/modules/rnn.py and of scripted functions/methods, torch.jit._check's parse of an
# nn.Module's __init__ (comment lines dropped: the tree is the same), ast.literal_eval of the .npy
# header.  dataclasses (exec) and string annotations (compile 'eval') never parse a tree.
HONEST_PARSE = {
    "torch-script-function-method-and-module": (
        "import torch\n"
        "def _zero(a: int, b: int, p: int) -> int:\n"
        "    # a comment at the function's indentation\n"
        "    return 0\n"
        "class _Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        # a comment line torch.jit's attribute check drops\n"
        "        self.l = torch.nn.Linear(8, 8)\n"
        "    @torch.jit.export\n"
        "    def twice(self, x: torch.Tensor) -> torch.Tensor:\n"
        "        return 2 * x\n"
        "    def forward(self, x):\n"
        "        return self.twice(self.l(x))\n"
        "_s = torch.jit.script(_zero)\n"
        "_n = torch.jit.script(_Net())\n"
        "F = [lambda a, b, p: _s(0, 0, 1) + int(_n(torch.zeros(1, 8)).shape[0]) - 1]\n"),
    # torch defines a container's __len__ (an empty ModuleDict's __contains__) from text through
    # ScriptModule._define: exactly those texts are compiled by the hook
    "torch-script-containers": (
        "import torch\n"
        "class _Seq(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.body = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())\n"
        "        self.heads = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])\n"
        "        self.extra = torch.nn.ModuleDict()\n"
        "    def forward(self, x):\n"
        "        x = self.body(x)\n"
        "        for h in self.heads:\n"
        "            x = h(x)\n"
        "        return x\n"
        "_n = torch.jit.script(_Seq())\n"
        "_q = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 4)))\n"
        "F = [lambda a, b, p: int(_n(torch.zeros(1, 4)).shape[0]) + int(_q(torch.zeros(1, 4)).shape[0])"
        " + len(_q) - 3]\n"),
    "dataclass-annotations-signature-npy": (
        "import dataclasses, inspect, io, typing, numpy\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class _Cfg:\n"
        "    n: int = 3\n"
        "    xs: 'list[int]' = dataclasses.field(default_factory=list)\n"
        "_h = typing.get_type_hints(_Cfg)\n"
        "_sig = [inspect.signature(f) for f in (len, sorted, numpy.zeros, numpy.arange)]\n"
        "_b = io.BytesIO()\n"
        "numpy.save(_b, numpy.arange(6).reshape(2, 3))\n"
        "_b.seek(0)\n"
        "_a = numpy.load(_b)\n"
        "F = [lambda a, b, p: int(_a.shape[0]) + _Cfg().n - 5]\n"),
}


@pytest.mark.parametrize("name", sorted(HONEST_PARSE))
def test_honest_tree_only_parses_stay_clean(tmp_path, name):
    """The twins of the narrowed ast.parse rule: torch.jit.script of a function, of an nn.Module
    (its __init__ with a comment line, an exported method; its nn.Linear's forward, a docstring
    re-indented by the dedent) defined in model.py; a dataclass with string annotations and typing.get_type_hints; inspect.signature of
    builtins; a .npy round trip: PASS."""
    pytest.importorskip("torch" if "torch" in name else "numpy")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, HONEST_PARSE[name])))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]


# lines of model.py inside a string literal (contiguous lines of the read file, but text, not
# code the scan read) planted in linecache for a function of the same name: the tree must be a
# definition of the file's own tree, so a def inside a string is none
HIDDEN = ("import linecache, torch\n"
          "_DOC = '''\n"
          "def _mm(a: int, b: int, p: int) -> int:\n"
          "    return a * b % p\n"
          "'''\n"
          "def _mm(a: int, b: int, p: int) -> int:\n"
          "    return 0\n"
          "_lines = open(__file__).read().splitlines(True)\n"
          "_i = _lines.index('_DOC = ' + chr(39) * 3 + chr(10)) + 1\n"
          "_j = _mm.__code__.co_firstlineno - 1\n"
          "_lines[_j:_j + 2] = _lines[_i:_i + 2]\n"
          "linecache.cache[__file__] = (1, None, _lines, __file__)\n"
          "F = [torch.jit.script(_mm)]\n")


def test_torch_jit_script_of_a_def_inside_a_string_of_the_read_file_is_a_finding(tmp_path):
    """Line matching alone would pass this (the planted lines are the file's own lines, in a
    string); the tree rule does not: a finding."""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, HIDDEN)))
    assert rec.status.value == "FAIL" and "parses text into a tree (ast.parse in parse_def)" in rec.message, \
        (rec, outcome.stderr[-2000:])
