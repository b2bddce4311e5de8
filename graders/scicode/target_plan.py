"""TARGET PLAN (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import ast
import dataclasses
import json
from graders.common.guarded import parse_python
from graders.common.records import Reject
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# TARGET PLAN: how each test case uses `target`, read from the test text alone
# =============================================================================
# The step's process never holds a target: `target` is bound to an opaque stand-in, every
# comparison that involves it records what the test passed in (as data) and returns True,
# and the grader evaluates those records against the real targets in its own process.
# What the grader trusts is this plan, made from the (trusted) test text: which
# comparisons a case makes with the target, in which order, with which constants.  A
# record that does not match the plan (missing, extra, another kind, a target stand-in on
# the computed side) fails its case: a generation that forges records can only lose.
NUMPY_COMPARATORS = ("allclose", "isclose", "array_equal")
SHIM_COMPARATORS = ("cmp_tuple_or_list", "are_dicts_close", "are_csc_matrix_close")
TARGET_METHODS = ("any", "all", "item", "tolist", "sum", "min", "max", "mean", "copy", "ravel",
                  "flatten", "conj", "toarray", "todense")
HELPER_DECORATOR = "__scicode_helper__"


class Unsupported(Exception):
    """A use of `target` the plan cannot express (the census lists them; none in the 338 steps)."""


@dataclasses.dataclass
class Site:
    kind: str           # "numpy.allclose" | "cmp.cmp_tuple_or_list" | "helper.NAME" | "==" | "!="
    slots: list         # per operand: ["target", tse] | ["const", value] | ["computed", None]
    kwargs: dict        # name -> ["const", value] | ["computed", None]
    text: str


@dataclasses.dataclass
class CasePlan:
    sites: list
    arity: dict                 # json(path) of a stand-in the case unpacks -> number of names
    unpacks: list               # [(case, path, n)]: the grader checks the real target unpacks so
    helpers: list               # test-defined functions a site calls with the target
    form: str                   # census class of the case
    error: str | None = None    # Unsupported: why


def _const(node):
    """The value of a literal expression of the test text (numbers, strings, tuples, +-*/**),
    or raise ValueError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, str, bool,
                                                                   type(None))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const(node.operand)
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _const(node.left), _const(node.right)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            raise ValueError("non-numeric operands")
        if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 1e6):
            raise ValueError("power too large")
        try:
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            return a / b if isinstance(node.op, ast.Div) else a ** b
        except (ArithmeticError, ValueError) as exc:
            raise ValueError(str(exc))
    if isinstance(node, ast.Tuple):
        return tuple(_const(e) for e in node.elts)
    raise ValueError("not a literal")


class _Planner:
    """Plans the cases of one step in order (names unpacked from a target stay bound to it
    in later cases, as in the shared namespace)."""

    def __init__(self):
        self.names = {}         # name -> (case, path) of a target part
        self.helpers = set()    # functions defined by the step's test text

    def _mentions(self, node, names) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    def _tse(self, node, case):
        """Target-side expression: ["path", case, path] | ["tuple"/"list", [tse...]] | None."""
        if isinstance(node, ast.Name):
            if node.id == "target":
                return ["path", case, []]
            if node.id in self.names:
                c, p = self.names[node.id]
                return ["path", c, list(p)]
            return None
        if isinstance(node, ast.Subscript):
            base = self._tse(node.value, case)
            if base is None or base[0] != "path":
                return None
            try:
                k = _const(node.slice)
            except ValueError:
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: the target indexed by a computed key")
            if not isinstance(k, (int, str)) or isinstance(k, bool):
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: the target indexed by {type(k).__name__}")
            return ["path", base[1], base[2] + [["i", k]]]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords:
            base = self._tse(node.func.value, case)
            if base is None:
                return None
            if base[0] != "path" or node.func.attr not in TARGET_METHODS:
                raise Unsupported(f"`{ast.unparse(node)[:60]}`: a method of the target outside "
                                  f"{', '.join(TARGET_METHODS[:4])}, ...")
            return ["path", base[1], base[2] + [["m", node.func.attr]]]
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
            parts = [self._tse(e, case) for e in node.elts]
            if all(p is not None for p in parts):
                return ["tuple" if isinstance(node, ast.Tuple) else "list", parts]
        return None

    def _slot(self, node, case, names):
        tse = self._tse(node, case)
        if tse is not None:
            return ["target", tse]
        if self._mentions(node, names):
            raise Unsupported(f"`{ast.unparse(node)[:60]}` computes with the target")
        try:
            return ["const", _const(node)]
        except ValueError:
            return ["computed", None]

    def _site(self, node, case, names) -> Site:
        text = ast.unparse(node)[:160]
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in NUMPY_COMPARATORS and \
                    isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy"):
                kind = f"numpy.{f.attr}"
            elif isinstance(f, ast.Name) and f.id in SHIM_COMPARATORS or \
                    isinstance(f, ast.Attribute) and f.attr in SHIM_COMPARATORS:
                kind = f"cmp.{f.id if isinstance(f, ast.Name) else f.attr}"
            elif isinstance(f, ast.Name) and f.id in self.helpers:
                kind = f"helper.{f.id}"
            else:
                raise Unsupported(f"`{text[:60]}`: the target passed to {ast.unparse(f)[:40]}")
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                raise Unsupported(f"`{text[:60]}`: starred arguments")
            slots = [self._slot(a, case, names) for a in node.args]
            kwargs = {k.arg: self._slot(k.value, case, names) for k in node.keywords}
            if any(s[0] == "target" for s in kwargs.values()):
                raise Unsupported(f"`{text[:60]}`: the target as a keyword argument")
            if not any(s[0] == "target" for s in slots):
                raise Unsupported(f"`{text[:60]}` uses the target inside an argument")
            return Site(kind, slots, kwargs, text)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            left, right = self._slot(node.left, case, names), self._slot(node.comparators[0], case, names)
            sides = [s for s in (left, right) if s[0] == "target"]
            if len(sides) != 1 or sides[0][1][0] != "path":
                raise Unsupported(f"`{text[:60]}`: not one target (part) against a computed value")
            return Site("==" if isinstance(node.ops[0], ast.Eq) else "!=", [left, right], {}, text)
        raise Unsupported(f"`{text[:60]}`: the target outside a comparison call or ==")

    def plan(self, case_text: str, case: int) -> CasePlan:
        try:
            tree = parse_python(case_text, f"<test case {case + 1}>", "plan")
        except Reject as exc:
            return CasePlan([], {}, [], [], "unsupported", exc.check.message)
        sites, arity, unpacks, forms = [], {}, [], set()
        names = {"target"} | set(self.names)
        try:
            for stmt in tree.body:
                names = {"target"} | set(self.names)
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    params = {a.arg for a in ast.walk(stmt.args) if isinstance(a, ast.arg)}
                    if any(self._mentions(n, names - params) for n in stmt.body + stmt.decorator_list):
                        raise Unsupported(f"function {stmt.name} reads the target")
                    self.helpers.add(stmt.name)
                    self.names.pop(stmt.name, None)
                    continue
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                        self._tse(stmt.value, case) is not None:
                    src, dst = self._tse(stmt.value, case), stmt.targets[0]
                    if src[0] != "path":
                        raise Unsupported("a tuple of target parts assigned")
                    if isinstance(dst, ast.Name):
                        self.names[dst.id] = (src[1], src[2])
                    elif isinstance(dst, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in dst.elts):
                        arity[json.dumps([src[1], src[2]])] = len(dst.elts)
                        unpacks.append((src[1], src[2], len(dst.elts)))
                        for k, e in enumerate(dst.elts):
                            self.names[e.id] = (src[1], src[2] + [["u", k]])
                        forms.add("unpack")
                    else:
                        raise Unsupported("the target assigned to a pattern")
                    continue
                if not self._mentions(stmt, names):
                    for n in ast.walk(stmt):        # a name rebound by the test is no longer a target part
                        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                            self.names.pop(n.id, None)
                        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                            self.names.pop(n.name, None)
                    continue
                if not isinstance(stmt, ast.Assert) or (stmt.msg is not None and self._mentions(stmt.msg, names)):
                    raise Unsupported(f"line {stmt.lineno}: `{ast.unparse(stmt)[:60]}` uses the target "
                                      "outside an assert")
                stack, operands = [stmt.test], []
                while stack:                      # the operands of an `and` chain, left to right
                    node = stack.pop(0)
                    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                        stack[:0] = node.values
                    else:
                        operands.append(node)
                for node in operands:
                    if self._mentions(node, names):
                        site = self._site(node, case, names)
                        sites.append(site)
                        forms.add(site.kind.split(".")[0] if site.kind in ("==", "!=") or
                                  site.kind.startswith("helper.") else site.kind)
                        if len(operands) > 1:
                            forms.add("and-chain")
        except Unsupported as exc:
            return CasePlan([], {}, [], [], "unsupported", str(exc))
        except RecursionError:
            return CasePlan([], {}, [], [], "unsupported", "test text nested too deeply")
        helpers = sorted({s.kind[7:] for s in sites if s.kind.startswith("helper.")})
        form = "no target" if not sites else "+".join(sorted(forms))
        return CasePlan(sites, arity, unpacks, helpers, form)


def plan_step(cases: list) -> list:
    planner = _Planner()
    return [planner.plan(c, i) for i, c in enumerate(cases)]


def decorate_helpers(case_text: str, helpers: list) -> str:
    """The case with `@__scicode_helper__` above each top-level def a site calls with the
    target (10.6's are_equivalent): the step's process records the call, the grader runs the
    helper (test text) on the recorded data.  Nothing else of the text changes."""
    if not helpers:
        return case_text
    tree = ast.parse(case_text)
    lines = case_text.splitlines(keepends=True)
    for node in sorted((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in helpers),
                       key=lambda n: -n.lineno):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        lines.insert(first, " " * node.col_offset + "@" + HELPER_DECORATOR + "\n")
    return "".join(lines)


