"""Issue 23, round 4's red team (second engineer, source in hand): what the guard of round 4
(`_guard_shape` for text a library's import compiles, `_guard_spawners` for fork_exec) still lets
through.  Each attack computed a*b mod p (or started a process) with g3.runtime_guard PASS; a
test asserts the verdict a correct grader gives (strict xfail with the reason when not fixed).
The honest twins (numpy, scipy, torch used normally) must PASS."""
import pytest

from test_modchallenge_runtime_guard import det_outputs, guard_run, load, predict, write_sub

ANSWER = "        return [int(c) for c in str(F[0](int(a), int(b), int(p)))]\n"
MOD = "importlib.import_module('{}' + '{}')"


# ---- a sub-interpreter: the audit hook is per interpreter; the new one has none ------------------
SUBINTERP = {
    "xxsubinterpreters": (
        "import importlib\n_x = " + MOD.format("_xxsub", "interpreters") + "\n"
        "def _mm(a, b, p):\n"
        "    r, w = os.pipe()\n"
        "    i = _x.create()\n"
        "    _x.run_string(i, 'import os\\nos.write(%d, str(%d * %d %% %d).encode())\\n' % (w, a, b, p))\n"
        "    _x.destroy(i)\n"
        "    os.close(w)\n"
        "    out = os.read(r, 64)\n"
        "    os.close(r)\n"
        "    return int(out)\n"
        "F = [_mm]\n"),
    "testcapi-run-in-subinterp": (
        "import importlib\n_t = " + MOD.format("_test", "capi") + "\n"
        "def _mm(a, b, p):\n"
        "    r, w = os.pipe()\n"
        "    _t.run_in_subinterp('import os\\nos.write(%d, str(%d * %d %% %d).encode())\\n' % (w, a, b, p))\n"
        "    os.close(w)\n"
        "    out = os.read(r, 64)\n"
        "    os.close(r)\n"
        "    return int(out)\n"
        "F = [_mm]\n"),
}


@pytest.mark.parametrize("name", sorted(SUBINTERP))
def test_a_sub_interpreter_is_refused(tmp_path, name):
    """A sub-interpreter runs text of the model's with none of the main interpreter's audit hooks
    (sys.addaudithook is per interpreter): _xxsubinterpreters.run_string / _testcapi's
    run_in_subinterp computed a*b mod p, PASS.  Creating one raises
    cpython.PyInterpreterState_New in the creating interpreter: a refused finding now."""
    pytest.importorskip("_xxsubinterpreters" if name.startswith("xx") else "_testcapi")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, SUBINTERP[name])))
    assert rec.status.value == "FAIL" and "interpreter" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message
    assert det_outputs(outcome) != [[[2], [4]], [[2], [4]]]          # refused: it never computed


# ---- text of an accepted shape, chosen by the model, compiled by an installation function -------
# cProfile.Profile.runctx spells `exec(cmd, ...)` (the real builtin) on its argument: a partial of
# it put under a builtin a library module's body calls (plistlib's `globals()`) compiles the
# model's text in a frame of the installation, a library module body next on the stack.  A def
# forwarding to a parameter's methods is one of the accepted shapes.
DEF_TEXT = "def mm(o, a, b, p):\n    x = o.mul(a, b)\n    return o.mod(x, p)\n"
STEERED_DEF = (
    "import functools, importlib\n_cp = " + MOD.format("cPro", "file") + "\n"
    "_ns = {}\n_b = vars(sys.modules[int.__module__])\n_old = _b['globals']\n"
    f"_b['globals'] = functools.partial(_cp.Profile().runctx, {DEF_TEXT!r}, _ns, _ns)\n"
    "sys.modules.pop('plistlib', None)\n"
    "try:\n    import plistlib\nexcept Exception:\n    pass\n"
    "_b['globals'] = _old\n_op = sys.modules['oper' + 'ator']\n"
    "F = [lambda a, b, p: _ns['mm'](_op, a, b, p)]\n")

PRESET_DEF = (
    "import functools, importlib, importlib.util\n_cp = " + MOD.format("cPro", "file") + "\n"
    "_ns = {}\n_spec = importlib.util.find_spec('email.feedparser')\n"
    "_mod = importlib.util.module_from_spec(_spec)\n"
    f"_mod.__dict__['object'] = functools.partial(_cp.Profile().runctx, {DEF_TEXT!r}, _ns, _ns)\n"
    "try:\n    _spec.loader.exec_module(_mod)\nexcept Exception:\n    pass\n"
    "_op = sys.modules['oper' + 'ator']\n"
    "F = [lambda a, b, p: _ns['mm'](_op, a, b, p)]\n")


@pytest.mark.parametrize("source", [STEERED_DEF, PRESET_DEF], ids=["builtin-rebound", "module-global-preset"])
def test_a_def_of_the_models_text_compiled_through_a_steered_library_call_is_a_finding(tmp_path, source):
    """A def calling methods of its parameters (o.mul, o.mod: a*b mod p with operator passed in)
    is an accepted shape; the model had cProfile's runctx compile it as plistlib's `globals()`
    (or as `object()` in email.feedparser, executed by the model with that global preset): PASS.  Now every frame from the compiling one out to the library's body must be called as
    its caller's source spells (the name resolves to that very function): the partial is not."""
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, source)))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]   # it did compute
    assert rec.status.value == "FAIL" and "no frame's source spells" in rec.message, rec
    assert "at model.py:" in rec.message, rec.message



# ---- interpreters of text inside the process that raise no compile event ------------------------
SQL = ("import importlib\n_sq = " + MOD.format("sqli", "te3") + "\n"
       "F = [lambda a, b, p: _sq.connect(':memory:').execute('select ? * ? % ?', (a, b, p)).fetchone()[0]]\n")


def test_sql_computing_the_answer_is_a_finding(tmp_path):
    """sqlite3 evaluates `select ? * ? % ?`: a*b mod p from text the scan reads as a string, no
    compile event: PASS.  Opening a database (sqlite3.connect) is a finding now."""
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, SQL)))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]   # it did compute
    assert rec.status.value == "FAIL" and "sqlite3.connect" in rec.message, rec
    assert "at model.py:" in rec.message, rec.message


# ---- TorchScript: text compiled and run by C++ (no compile event) -------------------------------
TS_DEF = "'def mm(a: int, b: int, p: int) -> int:\\n    return a * b % p\\n'"
TS_IR = ("'graph(%a : int, %b : int, %p : int):\\n  %x : int = aten::mul(%a, %b)\\n"
         "  %y : int = aten::remainder(%x, %p)\\n  return (%y)\\n'")
TORCHSCRIPT = {
    "compilation-unit-text": ("import torch\n"
                              "_cu = getattr(torch, 'j' + 'it').CompilationUnit(" + TS_DEF + ")\n"
                              "F = [_cu.mm]\n"),
    "compilation-unit-define": ("import torch\n"
                                "_cu = torch._C.CompilationUnit()\n_cu.define(" + TS_DEF + ", lambda n: None)\n"
                                "F = [_cu.mm]\n"),
    "parse-ir-and-graph-function": ("import torch\n"
                                    "_g = torch._C.parse_ir(" + TS_IR + ")\n"
                                    "F = [torch._C._create_function_from_graph('mm', _g)]\n"),
    "script-module-define": ("import torch\n"
                             "_m = torch.jit.ScriptModule()\n"
                             "_m.define('def mm(self, a: int, b: int, p: int) -> int:\\n"
                             "    return a * b % p\\n')\n"
                             "F = [_m.mm]\n"),
    # the container __len__ text the hook allows, with a method smuggled after its number
    "script-module-define-after-len": ("import torch\n"
                                       "_m = torch.jit.ScriptModule()\n"
                                       "_m.define('def __len__(self):\\n   return 1\\n"
                                       "def mm(self, a: int, b: int, p: int) -> int:\\n"
                                       "    return a * b % p\\n')\n"
                                       "F = [_m.mm]\n"),
    "parse-source-def": ("import torch\n"
                         "_d = torch._C._parse_source_def(" + TS_DEF + ")\n"
                         "F = [lambda a, b, p: 2]\n"),
}


@pytest.mark.parametrize("name", sorted(TORCHSCRIPT))
def test_torchscript_text_computing_the_answer_is_a_finding(tmp_path, name):
    """torch.jit.CompilationUnit(TEXT) (or .define, or IR text through parse_ir and a graph
    function) compiled and ran a*b mod p with no compile event: PASS.  torch._C is created by the
    driver's loader now, and its text entry points are stubs raising a guard event: a refused
    finding, and the text never compiled."""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TORCHSCRIPT[name])))
    assert rec.status.value == "FAIL" and "compiles TorchScript" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message
    assert det_outputs(outcome) == []                             # refused: the model never loaded


def _scripted_archive():
    """torch.jit.save of a TorchScript a*b mod p (compiled from text here, in the test: scripting
    a nested function reads its source through inspect, unreliable under pytest's workers)."""
    import ast
    import io
    import torch
    buf = io.BytesIO()
    torch.jit.save(torch.jit.CompilationUnit(ast.literal_eval(TS_DEF)).mm, buf)
    return buf.getvalue()


@pytest.mark.parametrize("call", ["torch.jit.load(os.path.join(d, 'f.pt'))",
                                  "torch.load(os.path.join(d, 'f.pt'), weights_only=False)"])
def test_a_torchscript_archive_loaded_from_a_data_file_is_a_finding(tmp_path, call):
    """A TorchScript archive (torch.jit.save of a scripted a*b mod p) is code in a data file: its
    code/ text is compiled by C++ at torch.jit.load (torch.load hands such a zip to it).  The
    loader (torch._C.import_ir_module) is a stub now: a refused finding."""
    pytest.importorskip("torch")
    source = load(f"        self.f = {call}\n"
                  "    def predict_digits(self, a, b, p):\n" + ANSWER.replace("F[0]", "self.f"),
                  "import torch\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source, {"f.pt": _scripted_archive()}))
    assert rec.status.value == "FAIL" and "import_ir_module" in rec.message, (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == []


TORCH_C_ELSEWHERE = {
    "spec-built-by-the-model": (
        "import glob, importlib.util\n"
        "_d = importlib.util.find_spec('torch').submodule_search_locations[0]\n"
        "_s = importlib.util.spec_from_file_location('torch._C', glob.glob(_d + '/_C.*')[0])\n"
        "_c = importlib.util.module_from_spec(_s)\n"
        "F = [lambda a, b, p: 2]\n"),
    "driver-finder-removed": (
        "sys.meta_path[:] = [f for f in sys.meta_path if 'Guard' not in getattr(f, '__name__', '')]\n"
        "import torch\n"
        "F = [lambda a, b, p: 2]\n"),
}


@pytest.mark.parametrize("name", sorted(TORCH_C_ELSEWHERE))
def test_torch_c_created_outside_the_drivers_loader_is_refused(tmp_path, name):
    """torch._C made by a loader the model chose (a spec of its own, or the driver's finder taken
    off sys.meta_path before `import torch`) would have its text entry points unstubbed: its
    creation (the extension's `import` event) is a refused finding."""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TORCH_C_ELSEWHERE[name])))
    assert rec.status.value == "FAIL" and "outside the driver's loader" in rec.message, (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == []


def test_an_extension_module_copied_out_of_the_installation_is_refused(tmp_path):
    """A native extension loaded from a file outside the installation (here a copy of the
    standard library's _bisect in the scratch folder; as well a .so the model wrote or shipped)
    is native code the scan never read: a refused finding at its `import` event."""
    source = predict(ANSWER, (
        "import importlib.util, shutil, tempfile, _bisect\n"
        "_p = os.path.join(tempfile.mkdtemp(), os.path.basename(_bisect.__file__))\n"
        "shutil.copyfile(_bisect.__file__, _p)\n"
        "_m = importlib.util.module_from_spec(importlib.util.spec_from_file_location('_bisect', _p))\n"
        "F = [lambda a, b, p: 2]\n"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "native code from outside the Python installation" in rec.message, \
        (rec, outcome.stderr[-2000:])


# torch.jit.script compiles the source inspect returns for the function -- through linecache,
# which the model can fill with other lines for its own file (no event: a dict write)
LINECACHE = ("import linecache, torch\n"
             "def _mm(a: int, b: int, p: int) -> int:\n"
             "    return 0\n"
             "_lines = open(__file__).read().splitlines(True)\n"
             "_lines[_mm.__code__.co_firstlineno] = '    return a ' + chr(42) + ' b ' + chr(37) + ' p\\n'\n"
             "linecache.cache[__file__] = (1, None, _lines, __file__)\n"
             "F = [torch.jit.script(_mm)]\n")


def test_torch_jit_script_of_lines_planted_in_linecache_is_a_finding(tmp_path):
    """The function in model.py returns 0; the lines torch.jit.script compiles say a*b mod p."""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, LINECACHE)))
    assert rec.status.value == "FAIL" and "parses text into a tree (ast.parse in parse_def)" in rec.message, \
        (rec, outcome.stderr[-2000:])


HONEST_TORCH = ("import torch, threading\n"
                "def _zero(a: int, b: int, p: int) -> int:\n"
                "    return 0\n"
                "class _Lin(torch.nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.l = torch.nn.Linear(64, 64)\n"
                "    def forward(self, x):\n"
                "        return self.l(x)\n"
                "torch.set_num_threads(2)\n"
                "_s = torch.jit.script(_zero)\n"
                "_t = _Lin()\n"
                "_w = threading.Thread(target=lambda: (torch.randn(256, 256) @ torch.randn(256, 256)).sum())\n"
                "_w.start()\n_w.join()\n"
                "F = [lambda a, b, p: _s(0, 0, 1) + int(_t(torch.zeros(2, 64)).shape[0]) - 2]\n")


def test_honest_torch_script_and_threads_stay_clean(tmp_path):
    """The twin: torch.jit.script of a function in a scanned file (an empty CompilationUnit made
    at torch.jit's import, through the hook), an nn.Linear, intra-op threads and a Python thread
    doing a matmul -- under the stubs and the kernel filter (threads are clone with CLONE_THREAD;
    clone3 gets ENOSYS and glibc falls back): PASS, and the record says the kernel filter held.
    (torch.jit.trace is not here: it imports sympy, whose mpmath builds arithmetic dunders from
    templates with exec while imported -- 7 findings, before this round too.)"""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, HONEST_TORCH)))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert "the kernel filter held" in rec.message, rec.message
    assert det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]      # 0: no digits


# ---- a socket opened by a library's native code ------------------------------------------------
TCPSTORE = ("import datetime, torch\n"
            "_d = getattr(torch, 'distrib' + 'uted')\n"
            "try:\n"
            "    _s = _d.TCPStore('127.0.0.1', 0, 1, True, timeout=datetime.timedelta(seconds=1))\n"
            "except Exception:\n"                 # the isolated child has no network: the sockets
            "    pass\n"                          # are made, the connect fails
            "F = [lambda a, b, p: 2]\n")


def test_a_socket_opened_by_torch_distributed_is_a_finding(tmp_path):
    """TCPStore made its server and client sockets (a client could connect anywhere the sandbox
    routes) with no audit event: g3.runtime_guard PASS though the statement says no socket was
    made.  The kernel filter (seccomp, installed by the driver before the submission) ends the
    process at socket(AF_INET): the socket never existed, the model never ran on, and the grader
    reads the SIGSYS as a finding."""
    pytest.importorskip("torch")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict(ANSWER, TCPSTORE)))
    assert rec.status.value == "FAIL" and "SIGSYS" in rec.message and "socket" in rec.message, rec
    assert outcome.returncode == -31 and det_outputs(outcome) == [], outcome.stderr[-2000:]



def test_h5py_import_stays_clean(tmp_path):
    """h5py's import asks platform.processor(), which runs `uname -p` in a process the first time:
    an honest model importing h5py was a finding ("starts a process (subprocess.Popen)").  The
    driver asks it once before the guard (cached for the process): PASS."""
    pytest.importorskip("h5py")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", predict("        return [0]\n", "import h5py\n")))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]
