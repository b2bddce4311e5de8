"""Issue 23's red team (second engineer, source in hand): the runtime guard's allowance for "a
library's import" let the model run text, code objects and pickles through a library module's body.
The model puts a C-level callable (functools.partial of eval / marshal.loads / pickle.loads /
CodeType) under a name a library module's body calls -- a builtin (`globals`, `object`) or a global
it pre-sets in a module it executes itself -- and has that library module imported: the event's
first Python frame is the library's module body, run by the import system, so the guard took it
for the library's own import-time code generation.  Each computed a*b mod p with g3.runtime_guard
PASS before the fix.  Now a library import's compile must be a call the library's source spells
`exec(`/`eval(`/`compile(` resolving to the real builtin, and marshal/pickle have no library
allowance; the honest library imports that generate code stay clean."""
import marshal
import sys

import pytest

from test_modchallenge_runtime_guard import det_outputs, guard_run, predict, write_sub

ANSWER = "        return [int(c) for c in str(F[0](int(a), int(b), int(p)))]\n"
EVAL = "vars(sys.modules[int.__module__])['ev' + 'al']"        # no name the static scan reads
EXEC_MODULE = ("import functools, importlib.util\n"
               "_spec = importlib.util.find_spec('email.feedparser')\n"
               "_mod = importlib.util.module_from_spec(_spec)\n"
               "_mod.__dict__['object'] = functools.partial({callable})\n"   # NeedMoreData = object()
               "try:\n    _spec.loader.exec_module(_mod)\nexcept TypeError:\n    pass\n")
DATA = "open(os.path.join(os.path.dirname(__file__), 'w.bin'), 'rb').read()"

CASES = [
    ("builtin-rebound-to-partial-eval-then-library-imported", predict(ANSWER, (
        "import functools\nF = []\n_b = vars(sys.modules[int.__module__])\n_old = _b['globals']\n"
        f"_b['globals'] = functools.partial({EVAL}, 'F.append(lambda x, y, m: x * y % m) or {{}}', {{'F': F}})\n"
        "sys.modules.pop('plistlib', None)\ntry:\n    import plistlib\nexcept NameError:\n    pass\n"
        "_b['globals'] = _old\n")), None, "compiles text"),
    ("module-global-preset-to-partial-eval-exec-module", predict(ANSWER, EXEC_MODULE.format(
        callable=f"{EVAL}, 'lambda x, y, m: x * y % m', {{}}") + "F = [_mod.NeedMoreData]\n"),
     None, "compiles text"),
    ("library-import-unmarshals-data", predict(ANSWER, EXEC_MODULE.format(
        callable=f"sys.modules['mar' + 'shal'].loads, {DATA}")
        + "_ns = {}\ntype(lambda: 0)(_mod.NeedMoreData, _ns)()\nF = [_ns['f']]\n"),
     {"w.bin": marshal.dumps(compile("def f(x, y, m):\n    return x * y % m\n", "w", "exec"))},
     "loads code with marshal"),
    ("library-import-unpickles-operators", predict(
        "        return [int(c) for c in str(F[1](F[0](int(a), int(b)), int(p)))]\n",
        "import pickle\n" + EXEC_MODULE.format(callable=f"pickle.loads, {DATA}") + "F = _mod.NeedMoreData\n"),
     {"w.bin": b"(coperator\nmul\ncoperator\nmod\nt."}, "unpickles the global operator.mul"),
]


@pytest.mark.parametrize("name, source, extra, reason", CASES, ids=[c[0] for c in CASES])
def test_a_library_import_the_model_steers_is_no_cover(tmp_path, name, source, extra, reason):
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source, extra))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]   # it did compute
    assert rec.status.value == "FAIL" and reason in rec.message, rec
    assert "at model.py:" in rec.message, rec.message


def test_a_code_object_built_by_a_steered_library_import_is_a_finding(tmp_path):
    """CodeType under a rebound name, called by a library module's body: code.__new__ is allowed
    to a library's import only as the installation spells it (`co.replace(...)`)."""
    source = predict("        return [0]\n", EXEC_MODULE.format(
        callable="(lambda: 0).__code__.replace, co_name='g'"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "code.__new__" in rec.message, rec


@pytest.mark.parametrize("module", ["numpy.f2py.crackfortran", "dataclasses", "typing"])
def test_libraries_generating_code_at_import_stay_clean(tmp_path, module):
    """The honest twin: a library whose import evaluates text it builds itself (numpy.f2py's
    auxfuncs `eval(...)`, re-imported fresh) is still a library's import."""
    pytest.importorskip(module.split(".")[0])
    source = predict("        return [0]\n", (
        f"for _k in [k for k in sys.modules if k == {module!r} or k.startswith({module!r} + '.')"
        f" or k.startswith('numpy.f2py')]:\n    del sys.modules[_k]\n"
        f"import {module}\n"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]]


def test_an_import_statement_in_text_is_not_inert(tmp_path):
    """Text of names and whitespace only -- `from decimal import Decimal as D` -- was taken for an
    inert annotation: a forbidden import (decimal) the scan never read, with g3.runtime_guard PASS.
    Inert text holds no statement keyword now."""
    source = predict("        return [int(c) for c in str(NS['D'](a) * NS['D'](b) % NS['D'](p))]\n",
                     "NS = {}\nvars(sys.modules[int.__module__])['ex' + 'ec']('from dec' + 'imal import Decimal as D', NS)\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]
    assert rec.status.value == "FAIL" and "compiles text" in rec.message and "model.py:" in rec.message, rec


def test_string_annotations_with_keyword_like_names_stay_inert(tmp_path):
    """The honest twin: annotations naming things like `imports` or a Literal of the word "from"."""
    source = predict("        return [len(typing.get_type_hints(A)) - 3]\n", (
        "import typing\n\n\nclass imports:\n    pass\n\n\n"
        "class A:\n    a: 'imports'\n    b: 'typing.Literal[\"from\", \"as\"] | None'\n    c: 'typing.Optional[important]'\n\n\n"
        "important = int\n"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]]


def test_a_steered_library_import_cannot_walk_the_object_graph(tmp_path):
    """gc.get_objects under a rebound name, called by a library module's body, was allowed as a
    library's import (and not refused): the model found the hook in the list and set its report
    cap cell to 0 -- every later eval went unreported, PASS.  The walks are refused always now."""
    source = predict(ANSWER, EXEC_MODULE.format(callable="gc.get_objects").replace(
        "import functools,", "import gc, functools,").replace("except TypeError:", "except (TypeError, RuntimeError):") + (
        "for _o in (_mod.__dict__.get('NeedMoreData') or ()):\n"
        "    if type(_o) is type(_spec.loader.exec_module.__func__) and _o.__name__ == 'hook' and _o.__closure__:\n"
        "        for _c in _o.__closure__:\n"
        "            if type(_c.cell_contents) is int and _c.cell_contents == 20:\n"
        "                _c.cell_contents = 0\n"
        f"F = [{EVAL}('lambda x, y, m: x * y % m')]\n"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "gc.get_objects" in rec.message and "refused" in rec.message, rec
    assert "compiles text" in str(outcome.messages), outcome.messages      # the eval is still reported


MOVE_PIPE = ("import __main__\nF = []\n"
             "_fd = __main__._CH['out']\n_ino = os.fstat(_fd).st_ino\n_keep = os.dup(_fd)\n"
             "__main__._CH['out'] = _keep\n_null = os.open(os.devnull, os.O_WRONLY)\n")
BLIND_ALL = ("for _n in [int(x) for x in os.listdir('/proc/self/fd')]:\n"
             "    try:\n        if _n != _keep and os.fstat(_n).st_ino == _ino:\n            os.dup2(_null, _n)\n"
             "    except OSError:\n        pass\n")
EVAL_LAMBDA = f"F.append({EVAL}('lambda x, y, m: x * y % m'))\n"


def test_a_result_pipe_moved_away_for_good_still_gets_the_report(tmp_path):
    """The driver's messages sent through a copy of the pipe (_CH["out"] rebound), /dev/null in the
    original's place, never put back: the hook held its report for a descriptor that never came
    back and the run ended clean (g3.runtime_guard PASS).  The hook writes through its own copy of
    the pipe now."""
    source = predict(ANSWER, MOVE_PIPE + "os.dup2(_null, _fd)\n" + EVAL_LAMBDA)
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]
    assert rec.status.value == "FAIL" and "compiles text" in rec.message, rec


def test_a_finding_that_cannot_be_delivered_ends_the_run_cleanly(tmp_path):
    """Every descriptor on the pipe blinded (the hook's copy too): the hook kills its process before
    the eval runs; the grader gives a clean record, the model is not ranked, never exit 3."""
    from conftest import verdict_lines
    from test_modchallenge_support import grade, make_submission
    source = predict(ANSWER, MOVE_PIPE + BLIND_ALL + EVAL_LAMBDA)
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert outcome.status == "crashed" and det_outputs(outcome) == [], outcome
    rc, out, err, doc, checks = grade(make_submission(tmp_path / "e2e", source), tmp_path)
    keys = verdict_lines(out)
    assert (rc, keys["RESULT"], keys["ranked"]) == (1, "FAIL", "false"), (rc, out[-2000:], err[-2000:])
    assert "Traceback" not in err


def test_numpy_arrays_pickled_with_the_highest_protocol_stay_clean(tmp_path):
    """The honest twin of the pickle doors: ndarrays pickled with pickle.HIGHEST_PROTOCOL (5) are
    rebuilt by numpy's _frombuffer (data only), which was outside the allowlist: FAIL, not ranked."""
    np = pytest.importorskip("numpy")
    import pickle
    source = predict("        return [0]\n", "import pickle\n").replace(
        "    def predict_digits", "    def load(self, d):\n"
        "        self.t = pickle.load(open(os.path.join(d, 'w.pkl'), 'rb'))\n    def predict_digits")
    data = pickle.dumps({"w": np.arange(5.0), "s": np.float32(2)}, protocol=pickle.HIGHEST_PROTOCOL)
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source, {"w.pkl": data}))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]]


def test_text_a_library_import_builds_from_planted_state_is_a_finding(tmp_path):
    """scipy's array_api_compat clone_module runs exec(f"from {mod.__name__} import *") while its
    numpy.fft wrapper is imported; with a fake module planted as sys.modules['numpy.fft'], the
    text is the model's (a*b mod p as a lambda bound into builtins) and the guard takes it for the
    library's own import-time code: PASS."""
    pytest.importorskip("scipy")
    source = predict(ANSWER, (
        "import types\nimport numpy.fft\nimport scipy._lib.array_api_compat.numpy\nF = []\n"
        "_real = sys.modules['numpy.fft']\n_fake = types.ModuleType('x')\n"
        "_fake.__name__ = 'math import *\\nimport builtins as _b\\n_b.mm = lambda x, y, m: x * y % m\\nfrom math'\n"
        "sys.modules['numpy.fft'] = _fake\nsys.modules.pop('scipy._lib.array_api_compat.numpy.fft', None)\n"
        "try:\n    import scipy._lib.array_api_compat.numpy.fft\nexcept Exception:\n    pass\n"
        "sys.modules['numpy.fft'] = _real\nF.append(vars(sys.modules[int.__module__])['mm'])\n"))
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert det_outputs(outcome) == [[[2], [4]], [[2], [4]]], outcome.stderr[-2000:]
    assert rec.status.value == "FAIL", rec


def test_a_pycache_the_submission_ships_is_ignored(tmp_path):
    """A valid __pycache__ next to model.py (what running the model locally leaves; archives keep
    the mtimes) was unmarshalled from the submission: an honest model FAILed g3.runtime_guard.
    The driver's finder compiles the submission's .py from source and never reads its
    __pycache__ -- so an unchecked hash-based .pyc shadowing model.py does not run either (it was
    a guard finding; now the source runs)."""
    import py_compile
    from test_modchallenge_runtime_guard import PYC, _unchecked_pyc
    honest = write_sub(tmp_path / "honest", predict("        return [0]\n"), {"helper.py": "X = 1\n"})
    py_compile.compile(str(honest / "model.py"), doraise=True)        # timestamp-based, valid
    assert (honest / PYC).exists()
    rec, outcome = guard_run(honest)
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]]
    shadow = write_sub(tmp_path / "shadow", predict("        return [0]\n"), {PYC: _unchecked_pyc()})
    rec, outcome = guard_run(shadow)
    assert rec.status.value == "PASS", rec
    assert det_outputs(outcome) == [[[], []], [[], []]]                 # the source ran, not the .pyc


def _planted_name(name):
    """The model of the test above with another forged module __name__ (the text clone_module
    compiles is `from {name} import *`)."""
    return predict("        return [0]\n", (
        "import types\nimport numpy.fft\nimport scipy._lib.array_api_compat.numpy\n"
        "_real = sys.modules['numpy.fft']\n_fake = types.ModuleType('x')\n"
        f"_fake.__name__ = {name!r}\n"
        "sys.modules['numpy.fft'] = _fake\nsys.modules.pop('scipy._lib.array_api_compat.numpy.fft', None)\n"
        "try:\n    import scipy._lib.array_api_compat.numpy.fft\nexcept Exception:\n    pass\n"
        "sys.modules['numpy.fft'] = _real\n"))


@pytest.mark.parametrize("name", ["model", "math import *; from math", "numpy.fft as q, math"])
def test_a_planted_name_that_is_no_module_of_the_installation_is_a_finding(tmp_path, name):
    """One statement, but the name is the submission's own module (`from model import *`: not a
    module of the installation), or the text is more than one import: none of the declared shapes."""
    pytest.importorskip("scipy")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", _planted_name(name)))
    assert rec.status.value == "FAIL" and "none of the shapes" in rec.message, (rec, outcome.stderr[-2000:])
    assert "at model.py:" in rec.message, rec.message


HONEST_SCIPY = (
    "import numpy as np\nimport scipy.stats, scipy.optimize, scipy.fft, scipy.linalg\n"
    "import scipy._lib.array_api_compat.numpy.fft as xfft, scipy._lib.array_api_compat.numpy.linalg as xla\n"
    "import numpy.f2py.crackfortran\n"
    "ZERO = int(round(2 * scipy.stats.norm.cdf(0.0))) - 1 + int(abs(xfft.fft(np.zeros(4))).sum())\n"
    "ZERO += int(round(scipy.optimize.broyden1(lambda x: x, [0.5], f_tol=1e-12)[0]))\n"
    "ZERO += int(scipy.stats.linregress([0, 1, 2], [0, 1, 2]).intercept ** 2 > 1e-9)\n"
    "ZERO += int(round(xla.det(np.eye(2)))) - 1\n")


def test_honest_scipy_numpy_imports_generating_code_stay_clean(tmp_path):
    """The honest twin: a model importing scipy.stats (argument parsers built as text, `del`s,
    tuple bunches), scipy.optimize (nonlin wrappers), array_api_compat's numpy clones (`from
    numpy.fft import *`) and numpy.f2py (combinator lambdas), and using them, passes the guard."""
    pytest.importorskip("scipy")
    source = predict("        return [ZERO]\n", HONEST_SCIPY)
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert det_outputs(outcome) == [[[], []], [[], []]], outcome.stderr[-2000:]


FORK_EXEC = ("_r, _w = os.pipe()\n"
             "_pid = {get}.fork_exec([b'/bin/true'], [b'/bin/true'], True, (_w,), None, None, -1, -1, -1, -1,"
             " -1, -1, _r, _w, False, False, -1, None, None, None, -1, None, False)\n"
             "os.waitpid(_pid, 0)\n")


@pytest.mark.parametrize("get", ["sys.modules['_posix' + 'subprocess']",
                                 "importlib.import_module('_posix' + 'subprocess')",
                                 "importlib.util.module_from_spec(importlib.util.find_spec('_posix' + 'subprocess'))"])
def test_a_process_started_through_posixsubprocess_is_a_finding(tmp_path, get):
    """_posixsubprocess.fork_exec (what subprocess.Popen calls after its audit event) raises no
    audit event of its own: a model calling it directly started a process with the guard PASS.
    The driver loads the module before the hook and puts a refusing stub in place of fork_exec;
    a fresh copy of the module (import after deleting it, module_from_spec) raises `import`."""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("fork_exec's argument list is 3.11's")
    pre = "import importlib, importlib.util\n" + (
        "sys.modules.pop('_posix' + 'subprocess', None)\n" if "import_module" in get else "")
    source = predict("        return [0]\n", pre + "try:\n" + "".join(
        "    " + line + "\n" for line in FORK_EXEC.format(get=get).splitlines()) + "except RuntimeError:\n    pass\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "process" in rec.message, (rec, outcome.stderr[-2000:])
