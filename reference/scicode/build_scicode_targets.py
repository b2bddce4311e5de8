"""Build a targets file in the official encoding from the dev split's ground_truth_code.

Test/bench code, not the grader.  For each dev step the dependencies, every prior step's
ground_truth_code and the step's own run in one namespace; the test cases run in order in
that namespace, except that the first `assert` naming `target` is replaced by evaluating
the expression the test compares with `target` (the other argument of the comparing call,
or the other side of `==`; `f(x)[k]` against `target[k]` gives `f(x)`).  That value is
written as the test's target.  Tests without `target` (78.1, 78.2) get the string "None",
which is how the official writer stores None.

    python reference/scicode/build_scicode_targets.py problems_dev.jsonl OUT.h5 [--steps 1.1 ...]
        [--exclude 51.4 ...] [--generations DIR] [--jobs N]

--generations DIR also writes each step's ground_truth_code as DIR/<step>.py (the
reference code as a submission).
"""
import argparse
import ast
import json
import os
import sys
import time
from multiprocessing import get_context

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from scicode_h5_encoding import write_targets  # noqa: E402
import grade_scicode  # noqa: E402  (only for its `scicode` shim: the tests import scicode.compare.cmp)


def _is_target(node):
    if isinstance(node, ast.Name) and node.id == "target":
        return True, None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "target":
        return True, ast.dump(node.slice)
    return False, None


def _pair(other, slice_dump):
    if slice_dump is None:
        return other
    if isinstance(other, ast.Subscript) and ast.dump(other.slice) == slice_dump:
        return other.value
    raise ValueError("target[k] compared with something that is not X[k]")


def expected_expression(test):
    """The expression a test compares with `target`."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and len(node.args) >= 2:
            for j in (0, 1):
                hit, sl = _is_target(node.args[j])
                if hit:
                    return _pair(node.args[1 - j], sl)
        if isinstance(node, ast.Compare) and len(node.comparators) == 1 and isinstance(node.ops[0], ast.Eq):
            for a, b in ((node.comparators[0], node.left), (node.left, node.comparators[0])):
                hit, sl = _is_target(a)
                if hit:
                    return _pair(b, sl)
    raise ValueError("no comparison with target")


def _mentions_target(node):
    return any(isinstance(n, ast.Name) and n.id == "target" for n in ast.walk(node))


def step_targets(item):
    """(step, [expected output per test], seconds) for one dev step."""
    step, deps, context, code, cases = item
    t0 = time.monotonic()
    ns = {"__name__": "__main__"}
    exec(compile(deps + "\n" + context + "\n" + code, f"<ref {step}>", "exec"), ns)
    outputs = []
    for i, case in enumerate(cases):
        tree = ast.parse(case)
        value, found = "None", False
        for stmt in tree.body:
            if not found and isinstance(stmt, ast.Assert) and _mentions_target(stmt):
                expr = ast.Expression(body=expected_expression(stmt.test))
                ast.fix_missing_locations(expr)
                value, found = eval(compile(expr, f"<expected {step} {i + 1}>", "eval"), ns), True
                continue
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), f"<test {step} {i + 1}>", "exec"), ns)
        outputs.append(value)
    return step, outputs, time.monotonic() - t0


def dev_items(problems_path, steps=None, exclude=()):
    items = []
    with open(problems_path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            prob = json.loads(line)
            for k, s in enumerate(prob["sub_steps"]):
                if not s.get("ground_truth_code"):
                    continue
                if (steps and s["step_number"] not in steps) or s["step_number"] in exclude:
                    continue
                context = "\n\n".join(p["ground_truth_code"] for p in prob["sub_steps"][:k])
                items.append((s["step_number"], prob["required_dependencies"], context,
                              s["ground_truth_code"], s["test_cases"]))
    return items


def build(problems_path, out_path, steps=None, exclude=(), jobs=2, generations=None):
    """Write the targets file; returns {step: seconds}."""
    for key in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(key, "1")
    import tempfile
    shim = grade_scicode.write_shim(tempfile.mkdtemp(prefix="scicode-shim-"))
    if shim not in sys.path:
        sys.path.insert(0, shim)
    items = dev_items(problems_path, steps, exclude)
    # longest first keeps the pool busy
    order = {"51.4": 0, "47.4": 1, "10.11": 2}
    items.sort(key=lambda it: order.get(it[0], 3))
    with get_context("fork").Pool(max(1, jobs)) as pool:
        done = pool.map(step_targets, items, chunksize=1)
    write_targets(out_path, {step: outs for step, outs, _ in done})
    if generations:
        os.makedirs(generations, exist_ok=True)
        for step, _, _, code, _ in items:
            with open(os.path.join(generations, f"{step}.py"), "w", encoding="utf-8") as fh:
                fh.write(code)
    return {step: secs for step, _, secs in done}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("problems")
    p.add_argument("out")
    p.add_argument("--steps", nargs="*")
    p.add_argument("--exclude", nargs="*", default=())
    p.add_argument("--generations")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args(argv)
    times = build(a.problems, a.out, a.steps, a.exclude, a.jobs, a.generations)
    for step, secs in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"{step:>6}  {secs:7.2f} s")


if __name__ == "__main__":
    main()
