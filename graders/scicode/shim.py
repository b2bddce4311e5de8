"""SHIM (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import os
import sys
from graders._embed import embed
from graders.common.records import Check, Status
from graders.scicode.guarded import sha256_file
from graders.scicode.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SHIM: the scicode import paths inside the sandbox, and the h5 reader
# =============================================================================
# Written as a package `scicode` (parse/parse.py, compare/cmp.py) into every
# worker's import path, and exec'd by the grader itself for its own use.
SHIM_PARSE = embed("scicode/child_shim_parse.py")

SHIM_CMP = embed("scicode/child_shim_cmp.py")

SHIM_FILES = {"scicode/__init__.py": '"""grade_scicode shim of the scicode package."""\n',
              "scicode/parse/__init__.py": "", "scicode/parse/parse.py": SHIM_PARSE,
              "scicode/compare/__init__.py": "", "scicode/compare/cmp.py": SHIM_CMP}


def write_shim(root: str) -> str:
    for rel, text in SHIM_FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
    return root


def shim_module(which: str):
    """The shim's parse or cmp module loaded in this process (tests and the grader use it)."""
    import types
    key = f"_grade_scicode_shim_{which}"
    if key not in sys.modules:
        mod = types.ModuleType(key)
        exec(compile(SHIM_PARSE if which == "parse" else SHIM_CMP, f"<shim {which}>", "exec"),
             mod.__dict__)
        sys.modules[key] = mod
    return sys.modules[key]


def check_h5(path: str) -> list:
    """The targets file opens, and its sha256 against the official one."""
    if not os.path.isfile(path):
        return [Check("input.usage", Status.FAIL, f"targets file {path} missing (usage error)")]
    try:
        import h5py
        with h5py.File(path, "r") as h5:
            n = len(h5.keys())
    except Exception as exc:
        return [Check("input.fatal", Status.FAIL,
                      f"targets file unreadable: {type(exc).__name__}: {str(exc)[:120]}")]
    digest = sha256_file(path)
    official = SPEC["official_sha256"]["test_data.h5"]
    if digest == official:
        return [Check("input.h5", Status.PASS, f"{n} step groups; sha256 matches the official test_data.h5")]
    return [Check("input.h5", Status.INFO, f"{n} step groups; sha256 {digest[:12]} DIFFERS from the "
                  f"official test_data.h5 {official[:12]} (a locally built targets file?)", digest, official)]


