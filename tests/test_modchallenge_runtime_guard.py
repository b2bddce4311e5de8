"""The runtime guard (issue 23): a PEP 578 audit hook in the model's process, installed by the
driver before the submission is imported.  Every door below computed a*b mod p (or could) with
nothing the static scan names, or reached the hook itself; each is now a g3.runtime_guard FAIL
naming the event and the first frame of the submission.  Beside them, the honest twins that must
stay clean: relative imports in a package, .npy tables read without pickles, dataclasses,
namedtuples, typing helpers on plain string annotations, thread pools, a chatty model.

Most cases run the driver's "check" child alone (load, isolation, two determinism passes: about
0.4 s each) through the grader's own runner and record builder; a few grade end to end."""
import io
import json
import marshal
import os
import sys

import pytest

from conftest import verdict_lines
from test_modchallenge_support import grade, grader, make_submission, model_source

MANIFEST = {"entry_class": "model.M", "output_base": 10, "model_description": "test model",
            "training_description": "none"}


def write_sub(root, model_py, extra=None, entry="model.M"):
    """A submission folder; `extra` maps relative paths to text or bytes."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "model.py").write_text(model_py)
    (root / "manifest.json").write_text(json.dumps(dict(MANIFEST, entry_class=entry)))
    for rel, data in (extra or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def guard_run(root):
    """The check child of one submission under the guard: (g3.runtime_guard record, outcome)."""
    g = grader()
    digests = {}
    found, _, _ = g.static_scan(str(root), digests)
    assert found == [], found                     # every case passes the harness's static rules
    guard = g.guard_request(digests)
    request = {"entry_class": json.loads((root / "manifest.json").read_text())["entry_class"],
               "max_digits": g.SPEC["max_digits"], "max_digit_bits": g.SPEC["max_digit_bits"],
               "det_sample": [["3", "4", "5"], ["12", "5", "7"]],
               "iso_pairs": [[["3", "4", "5"], ["6", "7", "11"]]], "guard": guard, "mode": "check"}
    outcome = g.run_isolated(str(root), g.DRIVER_BODY, request, 60, lib_files=g.SHIM_FILES)
    return g.runtime_guard_check({"check": outcome}, guard), outcome


def det_outputs(outcome):
    return [m.get("outputs") for m in outcome.messages if m.get("event") == "det"]


def predict(body, imports=""):
    """model.py whose predict_digits(self, a, b, p) is `body` (indented 8), after `imports`."""
    return model_source("    def predict_digits(self, a, b, p):\n" + body).replace(
        "import os, sys, time\n", "import os, sys, time\n" + imports, 1)


def load(body, imports=""):
    return model_source("    def load(self, d):\n" + body).replace(
        "import os, sys, time\n", "import os, sys, time\n" + imports, 1)


EVAL = "        ev = pkgutil.resolve_name('builtins:eval')\n"
PRODUCT = "{'x': int(a), 'y': int(b), 'm': int(p)}"


def _npy_object_array():
    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.array([len, 1], dtype=object), allow_pickle=True)     # a pickled builtin
    return buf.getvalue()


def _unchecked_pyc():
    """A hash-based, unchecked .pyc for model.py: Python runs it without looking at the source."""
    import importlib.util
    evil = predict("        return [int(d) for d in str(int(a) * int(b) % int(p))]\n")
    code = compile(evil, "model.py", "exec")
    flags = 0b01                                     # hash-based, check_source = 0
    return (importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + b"\0" * 8
            + marshal.dumps(code))


def _zip_module():
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("evilmod.py", "def f(a, b, p):\n    return int(a) * int(b) % int(p)\n")
    return buf.getvalue()


PYC = f"__pycache__/model.{sys.implementation.cache_tag}.pyc"

# (id, model.py, extra files, what the finding says)
DOORS = [
    ("timeit-setup-string", predict(
        "        ns = {}\n        timeit.Timer('pass', setup='ns[\"f\"] = lambda x, y, m: x * y % m',"
        " globals={'ns': ns})\n        return [0]\n", "import timeit\n"), None, "<timeit-src>"),
    ("typing-string-annotation", predict(
        "        A = type('A', (), {'__annotations__': {'r': '(lambda: 1)()'}})\n"
        "        typing.get_type_hints(A)\n        return [0]\n", "import typing\n"), None, "compiles text"),
    ("resolve-name-eval", predict(EVAL + f"        return [ev('x * y % m', {PRODUCT}) % 10]\n",
                                  "import pkgutil\n"), None, "compiles text"),
    ("compile-under-a-scanned-name", predict(
        "        c = pkgutil.resolve_name('builtins:compile')\n"
        "        c('r = 1', os.path.join(os.getcwd(), 'model.py'), 'exec')\n        return [0]\n",
        "import pkgutil\n"), None, "under the name model.py that is not the file"),
    ("loader-runs-a-txt", load(
        "        ldr = importlib.machinery.SourceFileLoader('w', os.path.join(d, 'w.txt'))\n"
        "        self.f = ldr.load_module().f\n", "import importlib.machinery\n"),
     {"w.txt": "def f(a, b, p):\n    return int(a) * int(b) % int(p)\n"}, "w.txt, a file the static scan did not read"),
    ("zip-on-sys-path", load(
        "        sys.path.insert(0, os.path.join(d, 'lib.zip'))\n"
        "        self.f = importlib.import_module('evilmod').f\n", "import importlib\n"),
     {"lib.zip": _zip_module()}, "lib.zip/evilmod.py, a file the static scan did not read"),
    ("pickle-under-an-alias", load(
        "        import pickle as serial\n"
        "        self.f = serial.loads(open(os.path.join(d, 'w.bin'), 'rb').read())\n"),
     {"w.bin": b"cbuiltins\neval\n."}, "unpickles the global builtins.eval"),
    ("numpy-reader-with-pickles", load(
        "        with open(os.path.join(d, 'w.npy'), 'rb') as fh:\n"
        "            self.t = np.lib.format.read_array(fh, allow_pickle=True)\n", "import numpy as np\n"),
     {"w.npy": _npy_object_array()}, "unpickles the global builtins.len"),
    ("marshal-from-a-data-file", load(
        "        self.c = pkgutil.resolve_name('marshal').loads(open(os.path.join(d, 'w.bin'), 'rb').read())\n",
        "import pkgutil\n"), {"w.bin": marshal.dumps(compile("r = 1", "w", "exec"))},
     "marshal that is no .pyc"),
    ("dataclass-field-name-injection", predict("        return [D().b]\n", (
        "import dataclasses\n\n\nclass D:\n    __annotations__ = {'a': int, 'b=len(\"xyz\"), c': int}\n"
        "\n\nD = dataclasses.dataclass(D)\n")), None, "compiles text"),
    ("module-command-line-run-as-main", predict(
        "        sys.argv = ['timeit', '-n', '1', '-s', 'r = (lambda x, y, m: x * y % m)(3, 4, 5)', 'pass']\n"
        "        try:\n            pkgutil.resolve_name('runpy:run_module')('timeit', run_name='__main__')\n"
        "        except SystemExit:\n            pass\n        return [0]\n", "import pkgutil\n"),
     None, "<timeit-src>"),
    ("dataclass-generator-called-by-the-model", predict("        return [D().a]\n", (
        "import dataclasses\n\n\nclass Meta(type):\n    def __setattr__(cls, name, value):\n"
        "        if name == '__init__' and 'f' not in vars(Meta):\n"
        "            Meta.f = dataclasses._create_fn('f', ['x', 'y', 'm'], ['return x * y % m'])\n"
        "        super().__setattr__(name, value)\n\n\n"
        "@dataclasses.dataclass\nclass D(metaclass=Meta):\n    a: int = 0\n")), None, "compiles text"),
    ("ctypes-by-name", predict("        pkgutil.resolve_name('ctypes:CDLL')(None)\n        return [0]\n",
                               "import pkgutil\n"), None, "native code through ctypes"),
    ("os-system-by-name", predict("        pkgutil.resolve_name('os:system')('true')\n        return [0]\n",
                                  "import pkgutil\n"), None, "starts a process (os.system)"),
    ("os-fork-by-name", predict(
        "        pid = pkgutil.resolve_name('os:fork')()\n        if pid == 0:\n            os._exit(0)\n"
        "        os.waitpid(pid, 0)\n        return [0]\n", "import pkgutil\n"), None, "starts a process (os.fork)"),
    ("process-pool", predict(
        "        with concurrent.futures.ProcessPoolExecutor(1) as ex:\n"
        "            return [ex.submit(abs, 0).result()]\n", "import concurrent.futures\n"), None, "starts a process"),
    ("posix-spawn-by-name", predict(
        "        pkgutil.resolve_name('os:posix_spawn')('/bin/true', ['true'], {})\n        return [0]\n",
        "import pkgutil\n"), None, "starts a process (os.posix_spawn)"),
    ("socket-by-name", predict("        pkgutil.resolve_name('socket:socket')().close()\n        return [0]\n",
                               "import pkgutil\n"), None, "uses a socket"),
    ("code-object-rebuilt", predict(
        "        def f():\n            return 1\n        f.__code__.replace(co_consts=(None, 2))\n        return [0]\n"),
     None, "builds a code object"),
    ("write-into-the-installation", predict(
        "        try:\n            open(os.path.join(os.path.dirname(os.__file__), 'planted.py'), 'w').close()\n"
        "        except OSError:\n            pass\n        return [0]\n"), None, "writes into the Python installation"),
    ("eval-in-a-thread-pool-worker", predict(
        EVAL + "        with concurrent.futures.ThreadPoolExecutor(2) as ex:\n"
        f"            return [ex.submit(ev, 'x * y % m', {PRODUCT}).result() % 10]\n",
        "import pkgutil, concurrent.futures\n"), None, "no frame of the submission on the stack"),
]


@pytest.mark.parametrize("name, source, extra, reason", DOORS, ids=[d[0] for d in DOORS])
def test_each_door_is_a_runtime_finding(tmp_path, name, source, extra, reason):
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source, extra))
    assert rec.status.value == "FAIL" and reason in rec.message, (rec, outcome.stderr[-2000:])
    assert "(not ranked)" in rec.message
    if name != "eval-in-a-thread-pool-worker":                  # no frame of its own
        assert "at model.py:" in rec.message, rec.message      # the first frame of the submission


HONEST = [
    ("plain", predict("        return [0]\n"), None, "model.M"),
    ("package-with-relative-imports", None, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": "TABLE = {'2': 0}\n",
        "pkg/model.py": (model_source("    def predict_digits(self, a, b, p):\n"
                                      "        return [TABLE.get(p, 0) + inner.ZERO]\n")
                         .replace("import os, sys, time\n", "from .helpers import TABLE\nfrom . import inner\n")),
        "pkg/inner.py": "ZERO = 0\n"}, "pkg.model.M"),
    ("npy-table-without-pickles", load(
        "        self.t = np.load(os.path.join(d, 'w.npy'))\n        self.u = np.load(os.path.join(d, 'w.npy'), "
        "allow_pickle=False)\n", "import numpy as np\n"), {"w.npy": "NPY"}, "model.M"),
    ("dataclasses-namedtuples-typing-enum", predict(
        "        return [Pair(1).x - 1, NT(3, 4).a - 3, T(1).v - 1, len(HINTS) - 2, E.A.value - 1]\n",
        "import collections, dataclasses, enum, functools, typing\n\n\n"
        "@dataclasses.dataclass(frozen=True, order=True)\nclass Pair:\n    x: int\n    y: int = 0\n"
        "    z: list = dataclasses.field(default_factory=list)\n\n\n"
        "NT = collections.namedtuple('NT', 'a b', defaults=(0,))\n\n\n"
        "class T(typing.NamedTuple):\n    v: 'int'\n    w: 'typing.Optional[int]' = None\n\n\n"
        "class E(enum.Enum):\n    A = 1\n\n\n"
        "class H:\n    r: 'typing.Optional[int]'\n    s: 'list[int] | None'\n\n\n"
        "HINTS = typing.get_type_hints(H)\n"), None, "model.M"),
    ("thread-pool-and-threads", predict(
        "        return self.predict_digits_batch([(a, b, p)])[0]\n"
        "    def predict_digits_batch(self, inputs):\n"
        "        t = threading.Thread(target=lambda: None)\n        t.start()\n        t.join()\n"
        "        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:\n"
        "            return list(ex.map(lambda triple: [0], inputs))\n"
        "    def max_batch_size(self):\n        return 4\n", "import concurrent.futures, threading\n"), None, "model.M"),
    ("chatty", predict("        print('predicting', a, b, p, 'x' * 500)\n        sys.stderr.write('chatter\\n' * 50)\n"
                       "        return [0]\n"), None, "model.M"),
    ("decorators-annotations-scratch-files", predict(
        "        fh, path = tempfile.mkstemp()\n        os.write(fh, b'cache')\n        os.close(fh)\n"
        "        logging.getLogger('m').debug('x %s', a)\n"
        "        return [int(VEC(0)) + cached(0) + len(typing.get_type_hints(Ann)) - 3]\n",
        "import functools, logging, tempfile, typing\nimport numpy as np\n\n\n"
        "@functools.lru_cache(None)\ndef cached(x):\n    return x\n\n\n"
        "VEC = np.vectorize(functools.wraps(abs)(lambda x: x))\n\n\n"
        "class Ann:\n    a: 'dict[str, typing.Callable[[int], int]]'\n    b: \"typing.Literal['x', 'y'] | None\"\n"
        "    c: 'tuple[int, ...]'\n"), None, "model.M"),
    ("plain-data-pickle", load("        self.t = pickle.loads(pickle.dumps({'a': [1, 2.0, 'x', (3,)]}))\n",
                               "import pickle\n"), None, "model.M"),
]


@pytest.mark.parametrize("name, source, extra, entry", HONEST, ids=[h[0] for h in HONEST])
def test_honest_models_stay_clean(tmp_path, name, source, extra, entry):
    extra = dict(extra or {})
    if extra.get("w.npy") == "NPY":
        np = pytest.importorskip("numpy")
        buf = io.BytesIO()
        np.save(buf, np.arange(5))
        extra["w.npy"] = buf.getvalue()
    root = write_sub(tmp_path / "sub", source or "", extra, entry)
    if source is None:
        (root / "model.py").unlink()
    rec, outcome = guard_run(root)
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    assert all(o == [[], []] for o in det_outputs(outcome)), det_outputs(outcome)   # it ran: answers 0


def test_a_model_searching_gc_for_the_hook_finds_nothing_and_fails(tmp_path):
    """The hook's state is in its closure; the only ways to it are the object-graph walks, which
    the hook refuses (after writing the finding) -- the model's search gets a RuntimeError."""
    source = load(
        "        import gc\n        self.got = 'none'\n        try:\n"
        "            for o in gc.get_objects():\n"
        "                if getattr(o, '__closure__', None) and 'event' in getattr(o, '__code__').co_varnames:\n"
        "                    for cell in o.__closure__:\n                        cell.cell_contents = None\n"
        "                    self.got = 'hook'\n"
        "        except RuntimeError:\n            self.got = 'refused'\n"
        "    def predict_digits(self, a, b, p):\n        return [1 if self.got == 'refused' else 2]\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "gc.get_objects" in rec.message and "refused" in rec.message, rec
    assert det_outputs(outcome) == [[[1], [1]], [[1], [1]]]          # the search was refused


def test_tampering_with_the_driver_does_not_disarm_the_guard(tmp_path):
    """Rebinding the driver's guard names changes nothing (the hook holds its own references);
    replacing a guard helper's defaults is itself a finding; redirecting the result pipe around an
    eval delays the report to the driver's next message, it does not lose it."""
    source = predict(
        "        import __main__\n"
        "        for k in list(vars(__main__)):\n"
        "            if k.startswith(('_guard', 'GUARD')):\n"
        "                setattr(__main__, k, None)\n"
        "        fd = __main__._CH['out']\n        keep = os.dup(fd)\n"
        "        null = os.open(os.devnull, os.O_WRONLY)\n        os.dup2(null, fd)\n"
        + EVAL + f"        r = ev('x * y % m', {PRODUCT})\n"
        "        os.dup2(keep, fd)\n        return [r % 10]\n", "import pkgutil\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert rec.status.value == "FAIL" and "compiles text" in rec.message, rec
    helper = load("        import __main__\n        f = __main__._guard_compile\n"
                  "        f.__defaults__ = f.__defaults__\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub2", helper))
    assert rec.status.value == "FAIL" and "__defaults__ of a function of the grader's driver" in rec.message, rec


def test_a_flood_of_findings_is_a_clean_capped_record(tmp_path):
    g = grader()
    source = load(EVAL + "        for i in range(20000):\n            ev('x * %d' % i, {'x': 1})\n",
                  "import pkgutil\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert outcome.status == "ok" and outcome.forged == 0
    assert rec.status.value == "FAIL" and rec.measured == g.SPEC["guard_max_reports"], rec


def test_an_unreadable_line_on_the_result_pipe_fails_the_guard_closed(tmp_path):
    source = load("        import __main__\n        os.write(__main__._CH['out'], b'{garbage\\n')\n")
    rec, outcome = guard_run(write_sub(tmp_path / "sub", source))
    assert outcome.forged == 1
    assert rec.status.value == "FAIL" and "a guard report may be lost" in rec.message, rec


def test_a_runtime_finding_unranks_the_model_end_to_end(tmp_path):
    """The eval model answers every tier 1 problem right and grades clean under the static rules;
    the guard's record fails gate 3: RESULT FAIL, SCORE 0.0, ranked false, exit 1, accuracies
    still reported."""
    source = predict(EVAL + f"        r = ev('x * y % m', {PRODUCT})\n"
                     "        return [int(c) for c in str(r)]\n", "import pkgutil\n")
    sub = make_submission(tmp_path / "sub", source)
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert checks["g3.static_check"]["status"] == "PASS"
    assert checks["g3.runtime_guard"]["status"] == "FAIL" and "model.py:" in checks["g3.runtime_guard"]["message"]
    keys = verdict_lines(out)
    assert (keys["RESULT"], keys["SCORE"], keys["ranked"], rc) == ("FAIL", "0.0", "false", 1)
    assert checks["tier.1"]["measured"] == 1.0                       # reported, not ranked


def test_an_honest_thread_pool_model_is_ranked_without_review(tmp_path):
    """Issue 23, item 3: a thread pool in a `with` block is no escape hatch (it was REVIEW)."""
    source = predict(
        "        return self.predict_digits_batch([(a, b, p)])[0]\n"
        "    def predict_digits_batch(self, inputs):\n"
        "        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:\n"
        "            return list(ex.map(lambda t: [0], inputs))\n"
        "    def max_batch_size(self):\n        return 8\n", "import concurrent.futures\n")
    sub = make_submission(tmp_path / "sub", source)
    rc, out, err, doc, checks = grade(sub, tmp_path)
    assert not [c for c in doc["checks"] if c["status"] == "REVIEW"], out
    assert checks["g3.runtime_guard"]["status"] == "PASS"
    assert verdict_lines(out)["ranked"] == "true"


def test_skip_static_check_skips_the_guard(tmp_path):
    sub = make_submission(tmp_path / "sub", predict("        return [0]\n"))
    rc, out, err, doc, checks = grade(sub, tmp_path, "--skip-static-check")
    assert checks["g3.runtime_guard"]["status"] == "SKIP"


def test_the_static_scan_records_the_digests_of_what_it_read(tmp_path):
    import hashlib
    root = write_sub(tmp_path / "sub", predict("        return [0]\n"), {"pkg/a.py": "X = 1\n", "notes.txt": "x"})
    digests = {}
    grader().static_scan(str(root), digests)
    assert digests == {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest()
                       for rel in ("model.py", "pkg/a.py")}


def _driver_function(name, **namespace):
    """One function of the driver's text, defined alone (for a unit test of a guard helper)."""
    import ast
    body = grader().DRIVER_BODY
    node = next(n for n in ast.parse(body).body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module(body=[node], type_ignores=[]), "driver", "exec"), namespace)
    return namespace[name]


def test_an_installation_file_changed_after_the_hook_started_is_not_the_installations(tmp_path):
    """A module planted in the installation (where a weaker sandbox lets the model write, even
    through a descriptor the write watch cannot name) has a status-change time after the hook's
    start: its text is not trusted as the installation's.  Older files are read as they are."""
    clock = _driver_function("_guard_clock", _os=os, _time=__import__("time"))
    read = _driver_function("_guard_read", _os=os)
    old = tmp_path / "old.py"
    old.write_text("X = 1\n")
    __import__("time").sleep(0.05)               # past the file system clock's tick
    before = clock(str(tmp_path))
    assert read(str(old), 100, before) == b"X = 1\n"
    planted = tmp_path / "planted.py"
    planted.write_text("X = 2\n")
    assert read(str(planted), 100, before) is None
    link = tmp_path / "link.py"
    link.symlink_to(old)                         # a new link to an old file
    assert read(str(link), 100, before) is None
    os.utime(planted, (0, 0))                    # times set back: the status change time is not
    assert read(str(planted), 100, before) is None


def test_the_guards_judging_code_loads_no_global_name():
    """Everything the hook and its helpers use is bound before the submission is imported (default
    arguments, the hook's closure): rebinding a name in the driver's module, or a builtin, cannot
    change a verdict.  Only the install-time functions read globals."""
    import ast
    import dis
    import types

    def loads(code):
        names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names |= {f"{const.co_name}.{n}" for n in loads(const)}
        return names

    found = {}
    for node in ast.parse(grader().DRIVER_BODY).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_guard"):
            module = compile(ast.Module(body=[node], type_ignores=[]), "driver", "exec")
            found[node.name] = loads(next(c for c in module.co_consts if isinstance(c, types.CodeType)))
    assert len(found) >= 10
    install_time = {"_guard_install", "_guard_clock", "_guard_spawners",    # run before the submission
                    "_guard_kernel_filter"}
    assert {name: names for name, names in found.items() if names and name not in install_time} == {}
    assert not [n for n in found["_guard_install"] if n.startswith("hook.")]     # the hook itself



def test_a_file_in_a_replaceable_codec_is_not_taken_for_what_the_scan_read(tmp_path):
    """The scan decodes a utf-7 file with the real codec; at run time the codec comes from a
    registry the model can change before importing the file (patching encodings.utf_7 makes the
    same bytes decode to other code, under the same digest).  So a compiled file declaring a codec
    the interpreter does not decode natively is a finding; latin-1 (decoded natively) is not."""
    helper = "import helper\n"
    utf7 = b"# -*- coding: utf-7 -*-\nH = 0\n"
    rec, _ = guard_run(write_sub(tmp_path / "utf7", load("        self.h = helper.H\n", helper), {"helper.py": utf7}))
    assert rec.status.value == "FAIL" and "declares the utf-7 codec" in rec.message, rec
    latin1 = b"# coding: latin-1\n# caf\xe9\nH = 0\n"
    rec, outcome = guard_run(write_sub(tmp_path / "latin1", load("        self.h = helper.H\n", helper),
                                       {"helper.py": latin1}))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])


def test_tampering_and_flooding_end_in_a_clean_record_end_to_end(tmp_path):
    """A model that rebinds the driver's guard names, adds its own audit hook and floods the
    guard with findings: a clean FAIL record, exit 1, no traceback from the grader."""
    source = load(
        "        import __main__\n"
        "        for k in list(vars(__main__)):\n"
        "            if k.startswith(('_guard', 'GUARD')):\n"
        "                setattr(__main__, k, None)\n"
        "        sys.addaudithook(lambda event, args: None)\n"
        + EVAL + "        for i in range(5000):\n            ev('x * %d' % i, {'x': 1})\n", "import pkgutil\n")
    rc, out, err, doc, checks = grade(make_submission(tmp_path / "sub", source), tmp_path)
    assert rc == 1 and doc["result"] == "FAIL" and "Traceback" not in err
    guard = checks["g3.runtime_guard"]
    assert guard["status"] == "FAIL" and guard["measured"] >= grader().SPEC["guard_max_reports"], guard
