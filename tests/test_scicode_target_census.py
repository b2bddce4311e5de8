"""Coverage census of the tests' uses of `target` (issue 12 item 2), over the real problem
files (skipped without ../shared): every one of the 338 in-scope steps' 1082 test cases is
planned from its text alone -- which comparisons it makes with the target, in which order,
with which constants -- and every form is one the stand-in + grader-side evaluation
supports.  The only form that needs a fallback is a test-defined comparator called with the
target (10.6's `are_equivalent`, 3 cases): the step's process records the call and the
grader runs the helper (test text, with the problem's imports) on the recorded data."""
import ast
import collections

import pytest

from conftest import shared_path
from test_scicode_support import gs


@pytest.fixture(scope="module")
def steps():
    probs, _ = gs.load_problems([str(shared_path("data", "scicode", "problems_all.jsonl")),
                                 str(shared_path("data", "scicode", "problems_dev.jsonl"))])
    return [s for p in probs.values() for s in p.steps if s.step not in gs.SPEC["special_steps"]]


@pytest.fixture(scope="module")
def plans(steps):
    return {s.step: gs.plan_step(s.cases) for s in steps}


def test_every_case_of_the_338_steps_has_a_plan(steps, plans):
    assert len(steps) == 338 and sum(len(s.cases) for s in steps) == 1082
    unsupported = [(st, i + 1, p.error) for st, ps in plans.items() for i, p in enumerate(ps) if p.error]
    assert unsupported == []


def test_census_of_forms(plans):
    forms = collections.Counter(p.form for ps in plans.values() for p in ps)
    sites = collections.Counter(s.kind for ps in plans.values() for p in ps for s in p.sites)
    assert forms == {"numpy.allclose": 891, "cmp.cmp_tuple_or_list": 90, "==": 62,
                     "==+and-chain+numpy.allclose+unpack": 18, "no target": 8,
                     "and-chain+numpy.allclose": 4, "and-chain+cmp.are_dicts_close+numpy.allclose+unpack": 3,
                     "cmp.are_dicts_close": 3, "helper": 3}
    assert sites == {"numpy.allclose": 942, "cmp.cmp_tuple_or_list": 90, "==": 86,
                     "cmp.are_dicts_close": 6, "helper.are_equivalent": 3}
    # the fallback: a test-defined comparator, evaluated by the grader on the recorded data
    assert sorted(st for st, ps in plans.items() if any(p.helpers for p in ps)) == ["10.6"]
    # `a, b = target`: the stand-in unpacks to the arity the text names; the grader checks
    # the real target unpacks to the same
    assert sorted(st for st, ps in plans.items() if any(p.unpacks for p in ps)) == \
        ["31.2", "50.4", "53.1", "53.2", "53.4", "55.3", "62.2", "62.4", "62.5"]
    # target parts the plan reads: subscripts (10.3) and a whitelisted method (52.4)
    paths = {tuple(map(tuple, slot[1][2])) for ps in plans.values() for p in ps for s in p.sites
             for slot in s.slots if slot[0] == "target" and slot[1][0] == "path"}
    assert ((("i", 0),) in paths) and ((("m", "any"),) in paths)


def test_tolerances_come_from_the_test_text(plans):
    """Every keyword of a comparison with the target is a literal of the test (atol/rtol):
    the grader takes it from the text, never from a record a generation could edit."""
    kws = [slot for ps in plans.values() for p in ps for s in p.sites for slot in s.kwargs.values()]
    assert len(kws) == 12 and all(k[0] == "const" for k in kws)


def test_every_comparison_sits_directly_in_an_assert(steps):
    """Straight-line: no target use inside a loop, branch, comprehension or function (the
    record count of a case is then fixed by its text), and no `or`/`not` around a site."""
    for s in steps:
        for case in s.cases:
            tree = ast.parse(case)
            for node in ast.walk(tree):
                if isinstance(node, (ast.For, ast.While, ast.If, ast.Try, ast.With, ast.Lambda,
                                     ast.GeneratorExp, ast.ListComp, ast.FunctionDef)):
                    assert not any(isinstance(n, ast.Name) and n.id == "target" for n in ast.walk(node)), s.step
                if isinstance(node, (ast.UnaryOp, ast.BoolOp)) and not isinstance(getattr(node, "op", None), ast.And):
                    assert not any(isinstance(n, ast.Name) and n.id == "target" for n in ast.walk(node)), s.step


def test_unsupported_forms_fail_closed_as_the_harness_limit():
    """A form the plan cannot express (none in the real files) is not run with a real target:
    the case fails as harness:target_form_unsupported (REVIEW; --strict indicts)."""
    for text in ("print(target)", "assert np.allclose(f(1) - target, 0)", "assert not np.allclose(f(1), target)",
                 "for t in target:\n    assert t == 1", "assert all(x == target for x in [1])",
                 "def g():\n    return target\nassert g() == 1"):
        plan = gs.plan_step([text])[0]
        assert plan.error, text
        fail = gs.evaluate_case(plan, [], {0: 1.0}, dict)
        assert fail["type"] == "UnsupportedTargetUse"
        assert gs.classify(dict(fail, evidence={"targets": True, "shim": True})) == "harness:target_form_unsupported"
    # a parameter named `target` inside a test helper is not the target
    assert gs.plan_step(["def h(target):\n    return target - 1\nassert np.allclose(f(h(2.0)), target)"])[0].error is None


def test_guessable_boolean_sites_are_the_documented_limit(steps):
    """problem_spec "Known limits": `(<boolean expression>) == target` (a True/False target a
    generation could guess by rewriting the test's own computation) -- 52 cases in 42 steps."""
    def boolish(n):
        if isinstance(n, (ast.Compare, ast.BoolOp)):
            return True
        if isinstance(n, ast.Tuple):
            return all(boolish(e) for e in n.elts)
        if isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            return name in ("isclose", "allclose", "all", "any", "array_equal", "equal") or \
                name.startswith(("is_", "test_", "check_"))
        return False
    hits = [s.step for s in steps for case in s.cases for n in ast.walk(ast.parse(case))
            if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq)
            and isinstance(n.comparators[0], ast.Name) and n.comparators[0].id == "target" and boolish(n.left)]
    assert (len(hits), len(set(hits))) == (52, 42)
