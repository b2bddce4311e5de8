"""STATIC CHECKS (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import ast
import hashlib
import os
import re
from graders.common.guarded import parse_python
from graders.common.records import Reject
from graders.modchallenge.guarded import python_source_encoding
from graders.modchallenge.spec import (DYNAMIC_EXEC, FORBIDDEN_IMPORTS, GUARD_NATIVE_CODECS,
    IMPORTLIB_DATA, INTROSPECTION_ATTRS, INTROSPECTION_CALLS, MODULAR_ATTRS, MODULAR_DUNDERS,
    NAMED_MODULE_WORDS, OS_PROCESS_CALLS, OS_PROCESS_PREFIXES, OS_REVIEW_PREFIXES,
    PROCESS_POOL_NAMES, REVIEW_IMPORTS, REVIEW_LOAD_CALLS, SOURCE_ENCODINGS_SEEN_AS_UTF8, SPEC)
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# STATIC CHECKS (the public harness's finding list)
# =============================================================================
def _is_int_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int"


def _scan(source, name: str) -> tuple:
    """(findings, reviews) for one Python source (str, or the file's bytes, parsed as the
    interpreter parses them: PEP 263 cookie and BOM honoured).  Each item is (name, line, rule,
    message).  Findings are the harness's rules: forbidden-import, dynamic-exec, subprocess
    (os.system/popen/exec*/spawn*/fork*), modmul-shortcut (int(_)*int(_)%int(_),
    pow(int(_),int(_),int(_))), syntax-error.  Reviews are the escape hatches outside its lists
    (REVIEW_IMPORTS, REVIEW_LOAD_CALLS, os.posix_spawn*, os's process calls reached through an
    alias, `from os import`, getattr by name, unpickling torch/numpy loads)."""
    try:
        tree = parse_python(source, name, "g3.static_check")
    except Reject as exc:
        return [(name, 0, "syntax-error", exc.check.message)], []
    out, review = [], []
    os_aliases = {"os"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            os_aliases.update(a.asname for a in node.names if a.name == "os" and a.asname)
    os_banned = tuple(OS_PROCESS_CALLS) + OS_PROCESS_PREFIXES
    called = set()                                  # Name nodes in a call's function position
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func)

    def os_process(attr):
        return attr in OS_PROCESS_CALLS or attr.startswith(OS_PROCESS_PREFIXES)

    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in FORBIDDEN_IMPORTS:
                    out.append((name, line, "forbidden-import", f"import of '{alias.name}'"))
                elif root == "importlib" and alias.name.split(".")[1:2] and \
                        alias.name.split(".")[1] in IMPORTLIB_DATA:
                    continue                        # its other attributes are flagged where used
                elif root in REVIEW_IMPORTS:
                    review.append((name, line, "escape-hatch", f"import of '{alias.name}': "
                                   f"{REVIEW_IMPORTS[root]}"))
                elif alias.name.startswith("concurrent.futures.process"):
                    review.append((name, line, "escape-hatch", f"import of '{alias.name}': "
                                   "ProcessPoolExecutor starts processes"))
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if root in FORBIDDEN_IMPORTS:
                out.append((name, line, "forbidden-import", f"import from '{node.module}'"))
            elif (node.module or "").startswith("concurrent.futures") and (
                    node.module.startswith("concurrent.futures.process")
                    or any(a.name in PROCESS_POOL_NAMES or a.name == "*" for a in node.names)):
                review.append((name, line, "escape-hatch", f"import from '{node.module}': "
                               "ProcessPoolExecutor starts processes"))
            elif root == "importlib" and (node.module.split(".")[1:2] and node.module.split(".")[1]
                                          in IMPORTLIB_DATA or node.module == "importlib" and
                                          all(a.name in IMPORTLIB_DATA for a in node.names)):
                pass                                # reads package data (weights), imports no code
            elif root in REVIEW_IMPORTS:
                review.append((name, line, "escape-hatch", f"import from '{node.module}': "
                               f"{REVIEW_IMPORTS[root]}"))
            elif node.module == "os":
                hit = [a.name for a in node.names if a.name == "*" or os_process(a.name)
                       or a.name.startswith(OS_REVIEW_PREFIXES)]
                if hit:
                    review.append((name, line, "escape-hatch", f"from os import {', '.join(hit)}: "
                                   "process calls without the name os"))
            elif root in REVIEW_LOAD_CALLS:
                hit = [a.name for a in node.names if a.name in REVIEW_LOAD_CALLS[root] or a.name == "*"]
                if hit:
                    review.append((name, line, "escape-hatch", f"from {node.module} import "
                                   f"{', '.join(hit)}: loading can run code"))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in DYNAMIC_EXEC:
                out.append((name, line, "dynamic-exec", f"call to '{f.id}'"))
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                mod, attr = f.value.id, f.attr
                if mod == "os" and os_process(attr):
                    out.append((name, line, "subprocess", f"call to 'os.{attr}'"))
                elif mod in os_aliases and (os_process(attr) or attr.startswith(OS_REVIEW_PREFIXES)):
                    review.append((name, line, "escape-hatch",
                                   f"call to '{mod}.{attr}': starts a process"
                                   + (f" (os imported as '{mod}')" if mod != "os" else "")))
                elif attr in REVIEW_LOAD_CALLS.get(mod, ()):
                    review.append((name, line, "escape-hatch", f"call to '{mod}.{attr}': loading "
                                   "can run code"))
                elif mod == "torch" and attr == "load" and not _keyword_is(node, "weights_only", True):
                    review.append((name, line, "escape-hatch", "torch.load without weights_only=True: "
                                   "unpickling can run code (torch < 2.6 defaults to False)"))
                elif mod in ("np", "numpy") and attr == "load" \
                        and not _keyword_is(node, "allow_pickle", False, absent_ok=True):
                    review.append((name, line, "escape-hatch", f"{mod}.load with allow_pickle: "
                                   "unpickling can run code"))
            if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                    and (node.args[1].value in DYNAMIC_EXEC
                         or isinstance(node.args[0], ast.Name) and node.args[0].id in os_aliases | {"posix"}
                         and node.args[1].value.startswith(os_banned + OS_REVIEW_PREFIXES)):
                review.append((name, line, "escape-hatch", f"getattr(_, {node.args[1].value!r}): "
                               "a banned call reached by name"))
            if isinstance(f, ast.Name) and f.id == "pow" and len(node.args) == 3 \
                    and all(_is_int_call(a) for a in node.args):
                out.append((name, line, "modmul-shortcut", "pow(int(_), int(_), int(_))"))
            elif isinstance(f, ast.Name) and f.id == "pow" and (len(node.args) == 3 or any(
                    k.arg == "mod" for k in node.keywords)):
                review.append((name, line, "modmul-shape", "pow(_, _, m): modular exponentiation "
                               "on values (the harness matches only pow(int(_), int(_), int(_)))"))
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) \
                    and f.value.attr in ("os", "posix") and (os_process(f.attr)
                                                             or f.attr.startswith(OS_REVIEW_PREFIXES)):
                review.append((name, line, "escape-hatch", f"call to '.{f.value.attr}.{f.attr}': "
                               "os's process calls reached through another module"))
            for arg in node.args:
                if _names_module(arg):
                    review.append((name, line, "escape-hatch", f"{arg.value!r} passed as an argument: "
                                   "a banned or escape-hatch module named in a string (imported or "
                                   "looked up by name)"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_int_call(node.right) \
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult) \
                and _is_int_call(node.left.left) and _is_int_call(node.left.right):
            out.append((name, line, "modmul-shortcut", "int(_) * int(_) % int(_)"))
        elif isinstance(node, ast.Attribute) and (node.attr in MODULAR_DUNDERS or isinstance(
                node.value, ast.Name) and node.attr in MODULAR_ATTRS.get(node.value.id, ())):
            review.append((name, line, "modmul-shape", f"'.{node.attr}': the modular product's "
                           "operators without the % / pow syntax"))
        elif isinstance(node, ast.Attribute) and node.attr == "ProcessPoolExecutor":
            review.append((name, line, "escape-hatch", "'.ProcessPoolExecutor': starts processes"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr in INTROSPECTION_CALLS.get(node.value.id, ()):
            review.append((name, line, "escape-hatch", f"'{node.value.id}.{node.attr}': reaches other "
                           "frames (the grader's driver), the object graph or the tracing hooks"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "sys" and node.attr == "modules":
            review.append((name, line, "escape-hatch", "sys.modules: modules reached by name (banned "
                           "ones already loaded, builtins, the grader's driver)"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "importlib" and node.attr not in IMPORTLIB_DATA:
            review.append((name, line, "escape-hatch", f"'importlib.{node.attr}': imports modules "
                           "by computed name (reaches any banned module)"))
        elif isinstance(node, ast.Attribute) and node.attr in INTROSPECTION_ATTRS:
            review.append((name, line, "escape-hatch", f"'.{node.attr}': introspection reaching code, "
                           "frames (the grader's driver) or the object graph"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value == "__main__":
            review.append((name, line, "escape-hatch", "['__main__']: the grader's driver module "
                           "(it shares the model's interpreter)"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and (node.slice.value in DYNAMIC_EXEC or _names_module(node.slice)):
            review.append((name, line, "escape-hatch", f"[{node.slice.value!r}]: a banned call or "
                           "module looked up by name"))
        elif isinstance(node, ast.Name) and node.id == "__builtins__" or \
                isinstance(node, ast.Constant) and node.value == "__builtins__" or \
                isinstance(node, ast.Attribute) and node.attr in ("__builtins__", "__self__"):
            review.append((name, line, "escape-hatch", "__builtins__ (or a builtin's __self__, the "
                           "builtins module) reaches eval/exec/compile/__import__ by name"))
        elif isinstance(node, ast.Name) and node.id in DYNAMIC_EXEC and node not in called \
                and isinstance(node.ctx, ast.Load):
            review.append((name, line, "escape-hatch", f"'{node.id}' referenced, not called: an alias "
                           "of a banned call (the harness flags calls only)"))
    return out, review


def _names_module(node) -> bool:
    """A string constant naming a banned or escape-hatch module (its top-level package)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or len(node.value) > 100:
        return False
    root = node.value.split(".")[0]
    return root not in NAMED_MODULE_WORDS and (root in FORBIDDEN_IMPORTS or root in REVIEW_IMPORTS) \
        and re.fullmatch(r"[A-Za-z_][\w.]*", node.value) is not None


def _keyword_is(call, key: str, value, absent_ok: bool = False) -> bool:
    """True when `call` passes key=<the literal value> (or omits it, with absent_ok)."""
    for kw in call.keywords:
        if kw.arg == key:
            return isinstance(kw.value, ast.Constant) and kw.value.value is value
        if kw.arg is None:                         # **kwargs: cannot tell
            return False
    return absent_ok


def scan_source(source, name: str) -> list:
    """The harness's findings (name, line, rule, message) for one source (see _scan)."""
    return _scan(source, name)[0]


def submission_files(root: str):
    """Regular files under root (symlinks are neither followed nor copied), sorted."""
    found = []
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(dirpath, d)))
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            if not os.path.islink(p) and os.path.isfile(p):
                found.append(p)
    return found


def static_scan(root: str, digests: dict | None = None) -> tuple:
    """(findings, reviews, encodings) over every .py file under root.  Each file is read as the
    interpreter reads it (python_source_encoding, then the bytes parsed as compile() parses them);
    a file the interpreter would refuse is an unreadable-source finding; `encodings` lists
    (file, codec) for files declaring a codec other than UTF-8 (review: the harness reads UTF-8).
    `digests`, when given, receives {relative path: sha256 hex} of the bytes scanned: the runtime
    guard lets the model's process compile exactly these (issue 23); a file declaring a codec the
    interpreter does not decode natively gets "codec:<name>" instead (its run-time decoding goes
    through a registry the model can change: not taken for what the scan read)."""
    findings, reviews, encodings = [], [], []
    for path in submission_files(root):
        if not path.endswith(".py"):
            continue
        rel = os.path.relpath(path, root)
        size = os.path.getsize(path)
        if size > SPEC["max_source_bytes"]:
            findings.append((rel, 0, "unreadable-source", f"{size} bytes, over the analysis cap "
                             f"of {SPEC['max_source_bytes']}"))
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(SPEC["max_source_bytes"] + 1)
            enc = python_source_encoding(data)
        except (OSError, ValueError) as exc:
            findings.append((rel, 0, "unreadable-source", f"not readable as Python source: {exc}"))
            continue
        if enc not in SOURCE_ENCODINGS_SEEN_AS_UTF8:
            encodings.append((rel, enc))
        if digests is not None:
            digests[rel.replace(os.sep, "/")] = hashlib.sha256(data).hexdigest() \
                if enc.lower() in GUARD_NATIVE_CODECS else f"codec:{enc}"
        f, r = _scan(data, rel)
        findings.extend(f)
        reviews.extend(r)
    return findings, reviews, encodings


def static_findings(root: str) -> list:
    return static_scan(root)[0]


