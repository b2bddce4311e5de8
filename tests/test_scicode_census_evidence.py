"""Issue 22 items 2, 5, 6: a run where the harness could not execute is UNGRADED whatever the
number of steps; an exception raised by the generation's code, of any type or message, in any
number of steps, is the model's failure and never voids the run; extraction never raises."""
import json
import subprocess
import sys

from conftest import REPO, verdict_lines
from test_scicode_support import gs, one_step_set, run_one_step_set, syn

HEX = "0x" + "f" * 4000          # a valid literal: ast.unparse wrote 4,817 decimal digits and raised


# ---- item 5: the census counts only what the grader's evidence puts on the harness --------
def raising(label, exc):
    return f"def f(x):\n    raise {exc}\n"


def test_ten_steps_raising_one_exception_are_the_models_not_ungraded():
    """Before: 10 x `RuntimeError: worker failed to start` (or any one exception) shared one
    signature and the census declared a harness fault: UNGRADED, exit 3."""
    bodies = {f"s{i}": raising(f"s{i}", 'RuntimeError("WorkerFault: worker failed to start")') for i in range(10)}
    probs, h5, gen, steps = one_step_set("raise10", bodies)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0"), out
    assert "10x [model] RuntimeError: WorkerFault: worker failed to start" in out
    assert "harness indicted" not in out


def test_other_generation_raised_shapes_are_the_models_too():
    """Any type, any message: an exit of the step's process, a ModuleNotFoundError of a
    module the generation imports itself, a KeyError, ten times each."""
    kinds = {"exit": "def f(x):\n    import os\n    os._exit(3)\n",
             "modnf": "def f(x):\n    import i22_not_a_module\n    return x + 1\n",
             "keyerror": "def f(x):\n    return {}['target']\n"}
    for label, body in kinds.items():
        probs, h5, gen, steps = one_step_set(f"ten-{label}", {f"s{i}": body for i in range(10)})
        rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
        assert (rc, keys["RESULT"], keys["SCORE"]) == (1, "FAIL", "0.0"), (label, out)
        assert "harness indicted" not in out, (label, out)


def test_honest_twin_ten_correct_and_ten_wrong_answers():
    bodies = {f"ok{i}": "def f(x):\n    return x + 1\n" for i in range(5)}
    bodies.update({f"bad{i}": "def f(x):\n    return x + 2\n" for i in range(10)})
    probs, h5, gen, steps = one_step_set("mixed15", bodies)
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"], keys["steps_passed"]) == (1, "PARTIAL", "5/15"), out


def test_harness_twin_ten_steps_whose_dependency_line_fails_are_indicted():
    """The seed's rule stays for failures no generation raised: the problem's own import
    line fails before any generated code, in every step."""
    bodies = {f"s{i}": "def f(x):\n    return x + 1\n" for i in range(10)}
    probs, h5, gen, steps = one_step_set("deps10", bodies)
    lines = [json.loads(x) for x in probs.read_text().splitlines()]
    for p in lines:
        p["required_dependencies"] = "import numpy as np\nimport i22_absent_dependency"
    probs.write_text("".join(json.dumps(p) + "\n" for p in lines))
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"]) == (3, "UNGRADED"), out
    assert "100% of 10 failures share one signature" in out


def test_census_pure_function_evidence():
    ev = {"targets": True, "shim": True}
    raised = [dict(type="TypeError", message="bad", origin=o, phase="case 1", step=f"{i}.1", evidence=ev)
              for i, o in enumerate(["test", "library", "submission"] * 4)]
    same = [dict(f, origin="library") for f in raised]
    assert not gs.census(same, strict=False)[1]                 # 12 alike, raised after its code ran
    ext = [{k: v for k, v in f.items() if k != "evidence"} for f in same]
    assert gs.census(ext, strict=False)[1]                      # no evidence: the seed's rule
    ctx = [dict(f, phase="context", reference_context=True) for f in same]
    assert gs.census(ctx, strict=False)[1]                      # the reference code failing
    assert not gs.census([dict(f, reference_context=False) for f in ctx], strict=False)[1]
    # MissingGeneration: a model omitting 10 of its answers keeps its low score ...
    miss = [dict(type="MissingGeneration", message="no generation for step N", phase="extract",
                 step=f"{i}.1") for i in range(10)]
    assert not gs.census(miss, strict=False, n_steps=15)[1]
    # ... an empty folder (every step lacks one) is audited first
    assert gs.census(miss, strict=False, n_steps=10)[1]


def test_model_omitting_ten_answers_is_graded_not_voided():
    bodies = {f"ok{i}": "def f(x):\n    return x + 1\n" for i in range(3)}
    bodies.update({f"gone{i}": "def f(x):\n    return x + 1\n" for i in range(10)})
    probs, h5, gen, steps = one_step_set("omit10", bodies)
    for label, step in steps.items():
        if label.startswith("gone"):
            (gen / f"{step}.txt").unlink()
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"], keys["steps_passed"]) == (1, "PARTIAL", "3/13"), out


# ---- item 2: a harness that could not execute: UNGRADED, any number of steps --------------
PATCHED = r'''
import sys
sys.path.insert(0, sys.argv[1])
import grade_scicode as g
what = sys.argv[2]
if what == "worker":
    g.WORKER_BODY = "raise SystemExit(1)\n"
elif what == "shim":
    g.WORKER_BODY = g.WORKER_BODY.replace("_SHIM_OK = all(", "_SHIM_OK = False and all(", 1)
sys.exit(g.main(sys.argv[3:]))
'''


def run_patched(what, gen, probs, h5):
    proc = subprocess.run([sys.executable, "-c", PATCHED, str(REPO), what, str(gen), "--problems", str(probs),
                           "--h5", str(h5)], capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, verdict_lines(proc.stdout)


def test_worker_that_never_starts_is_ungraded_with_two_steps():
    bodies = {f"s{i}": "def f(x):\n    return x + 1\n" for i in range(2)}
    probs, h5, gen, steps = one_step_set("noworker", bodies)
    rc, out, keys = run_patched("worker", gen, probs, h5)
    assert (rc, keys["RESULT"]) == (3, "UNGRADED"), out
    assert "SCORE" not in keys and "worker_fault" in out
    rc, out, keys = run_patched("none", gen, probs, h5)         # the same run, unpatched
    assert (rc, keys["RESULT"], keys["SCORE"]) == (0, "PASS", "1.0"), out


def test_shim_that_failed_is_ungraded_with_one_step():
    probs, h5, gen, steps = one_step_set("noshim", {"s0": "def f(x):\n    return x + 1\n"})
    rc, out, keys = run_patched("shim", gen, probs, h5)
    assert (rc, keys["RESULT"]) == (3, "UNGRADED"), out
    assert "ShimFault" in out and "shim_failed" in out


def test_missing_target_group_is_ungraded_with_one_step():
    probs, h5, gen, steps = one_step_set("nogroup", {"s0": "def f(x):\n    return x + 1\n"})
    import h5py
    with h5py.File(h5, "a") as fh:
        del fh["800.1"]
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"]) == (3, "UNGRADED"), out


# ---- item 6: extraction never raises -------------------------------------------------------
def test_long_integer_literal_is_graded_not_a_crash():
    body = f"def f(x):\n    k = {HEX}\n    return x + 1 + (k - k)\n"
    probs, h5, gen, steps = one_step_set("longint", {"big": body, "ok": "def f(x):\n    return x + 1\n"})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen)
    assert (rc, keys["RESULT"], keys["SCORE"]) == (0, "PASS", "1.0"), out + err[-2000:]


def test_any_unparse_failure_is_a_clean_step_record(monkeypatch):
    for exc in (ValueError("Exceeds the limit"), TypeError("odd node"), MemoryError(), OverflowError("x")):
        def boom(node, _exc=exc):
            raise _exc
        monkeypatch.setattr(gs.ast, "unparse", boom)
        try:
            gs.extract_definition("def f(x):\n    return x\n", "def", "f")
        except gs.ExtractionError as e:
            assert type(exc).__name__ in str(e)
        else:
            raise AssertionError("expected an ExtractionError")


def test_generation_code_never_raises(monkeypatch):
    s = syn()
    problems, _ = gs.load_problems([str(s["problems_test.jsonl"])])
    st = next(iter(problems.values())).steps[0]
    gens = gs.load_generations(str(s["correct"]), {st.step})

    def boom(*args):
        raise RuntimeError("boom")
    monkeypatch.setattr(gs, "extract_definition", boom)
    code, err = gs.generation_code(st, gens)
    assert code is None and err["type"] == "ExtractionError" and "RuntimeError: boom" in err["message"]
    monkeypatch.setattr(gs, "_audit_generation", boom)
    assert gs.audit_generation("def f(x):\n    return x\n") == ["could not be audited (RuntimeError)"]


def test_forged_dependency_phase_reports_cannot_void_the_run():
    """Found attacking the census with the source in hand: a generation that reaches the
    step's channel (audit-flagged names) could report a *deps* failure after its own code ran;
    deps failures are the harness's, so ten alike would indict.  Phases report in order, each
    once, before any case: one out of order is the generation's."""
    from test_scicode_support import gs
    import types
    prog = types.SimpleNamespace(step="1.1", cases=["assert True"], deps="import numpy as np",
                                 reference=False)
    forged = {"phase": "deps", "ok": False, "error": {"type": "ImportError", "message": "no module x",
                                                       "origin": "library"}}
    reply = {"status": "ok", "shim": True, "messages": [
        {"phase": "deps", "ok": True}, {"phase": "code", "ok": True}, forged,
        {"case": 0, "ok": True}, {"done": True, "tamper": []}]}
    plans = gs.plan_step(prog.cases)
    res = gs.judge(prog, reply, dry=False, plans=plans)
    assert res.failure["type"] == "RecordMismatch" and gs.generation_raised(dict(res.failure, evidence={}))
    honest = dict(reply, messages=[forged, {"done": True, "tamper": []}])     # the first report: genuine
    res = gs.judge(prog, honest, dry=False, plans=plans)
    assert res.failure["phase"] == "deps" and gs.classify(res.failure) == "harness:dependency_missing"
