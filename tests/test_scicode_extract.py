"""Fence stripping, extraction of the definition a header names, target renaming, context assembly."""
import json

import pytest

from test_scicode_support import gs, syn, synthetic

HEADER = "def f(x):\n    '''doc'''"


def test_fenced_reply_with_prose_and_imports():
    reply = ("I think this works:\n\n```python\nimport numpy as np\nfrom scipy import linalg\n\n"
             "def f(x):\n    return np.sum(x)\n\nprint(f([1]))\n```\nExplanation: it sums.\n")
    code = gs.extract_definition(reply, *gs.header_name(HEADER))
    assert code.startswith("def f(x):") and "return np.sum(x)" in code
    assert "import" not in code and "print" not in code and "```" not in code


def test_unfenced_plain_code():
    assert gs.extract_definition("def f(x):\n    return 1\n", "def", "f").startswith("def f(x)")


def test_unfenced_prose_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        gs.extract_definition("Here it is: def f(x): return x, done.", "def", "f")


def test_several_functions_and_blocks_last_definition_wins():
    reply = ("Draft:\n```python\ndef helper():\n    return 0\n\ndef f(x):\n    return 'draft'\n```\n"
             "Final:\n```\ndef g():\n    pass\n\ndef f(x):\n    return 'final'\n```\nUsage:\n"
             "```python\nf(3)\n```\n")
    code = gs.extract_definition(reply, "def", "f")
    assert "'final'" in code and "helper" not in code and "def g" not in code


def test_unclosed_fence_and_tilde_fence():
    assert "return 2" in gs.extract_definition("```python\ndef f(x):\n    return 2\n", "def", "f")
    assert "return 3" in gs.extract_definition("~~~py\ndef f(x):\n    return 3\n~~~\n", "def", "f")


def test_byte_order_mark_and_indented_fence():
    """A reply saved with a UTF-8 BOM, and a fenced block indented inside a markdown list
    item, are correct replies, not syntax errors."""
    assert "return 4" in gs.extract_definition("\ufeff```python\ndef f(x):\n    return 4\n```", "def", "f")
    assert "return 5" in gs.extract_definition("\ufeffdef f(x):\n    return 5\n", "def", "f")
    reply = "1. Define it:\n\n    ```python\n    def f(x):\n        return 6\n    ```\n"
    assert gs.extract_definition(reply, "def", "f") == "def f(x):\n    return 6"


def test_missing_definition_is_named():
    with pytest.raises(gs.ExtractionError, match="def f"):
        gs.extract_definition("```python\ndef g(x):\n    return 1\n```", "def", "f")


def test_class_header_names_the_class_not_init():
    header = synthetic.HEADER_ACC
    assert gs.header_name(header) == ("class", "Acc")         # upstream would say __init__
    reply = "```python\n" + synthetic.SOLUTIONS["901.2"] + "\ndef add(v):\n    pass\n```"
    code = gs.extract_definition(reply, *gs.header_name(header))
    assert code.startswith("class Acc") and "def __init__" in code and "def add(self, v)" in code
    # a function of the class's name is not the class
    with pytest.raises(gs.ExtractionError):
        gs.extract_definition("def Acc():\n    pass\n", "class", "Acc")


def test_real_class_headers_without_parentheses():
    assert gs.header_name("class Maxwell:\n    def __init__(self, n_grid, x_out):\n        '''x'''") == \
        ("class", "Maxwell")


def test_plan_reads_how_a_case_uses_the_target():
    """The plan of a case (the grader's, from the text): comparison sites in order, the
    target parts they read, literal tolerances; names of the text that merely contain
    `target` are not the target."""
    plan = gs.plan_step(["t = obj.target\ntarget_value = 3\n"
                         "assert np.allclose(f(target=1), target[0], atol=1e-6) and g(x) == target[1]"])[0]
    assert plan.error is None and [s.kind for s in plan.sites] == ["numpy.allclose", "=="]
    assert plan.sites[0].slots == [["computed", None], ["target", ["path", 0, [["i", 0]]]]]
    assert plan.sites[0].kwargs == {"atol": ["const", 1e-6]}
    # names unpacked from a target stay target parts in later cases of the step
    plans = gs.plan_step(["a, b = target\nassert a == x", "assert np.allclose(y, b)"])
    assert plans[0].unpacks == [(0, [], 2)] and plans[0].arity == {"[0, []]": 2}
    assert plans[1].sites[0].slots[1] == ["target", ["path", 0, [["u", 1]]]]
    # a helper of the test called with the target is decorated: recorded, run by the grader
    text = "def eq(a, b):\n    return np.allclose(a, b)\nassert eq(f(1), target)"
    plan = gs.plan_step([text])[0]
    assert plan.helpers == ["eq"] and gs.decorate_helpers(text, plan.helpers).startswith(
        "@__scicode_helper__\ndef eq(a, b):")
    job = gs.make_job(gs.StepProgram("1.1", "1", "", "", "def f(): pass", None, [text], None, []),
                      [plan], 5.0, 1.0, False)
    assert "h5" not in job and "targets" not in job and job["cases"][0].count("@__scicode_helper__") == 1


def _gens(texts):
    return gs.Generations(texts, {}, [], [])


def _problems():
    test, dev = synthetic.problems()
    probs = {}
    for raw in test + dev:
        split = "dev" if any(s.get("ground_truth_code") for s in raw["sub_steps"]) else "test"
        steps = [gs.Step(s["step_number"], raw["problem_id"], k, s["function_header"], s["test_cases"],
                         split, s.get("ground_truth_code")) for k, s in enumerate(raw["sub_steps"])]
        probs[raw["problem_id"]] = gs.Problem(raw["problem_id"], raw["required_dependencies"], steps, split)
    return probs


def test_self_context_uses_own_fence_stripped_prior_steps():
    p = _problems()["901"]
    gens = _gens({"901.1": "```python\ndef scale(x, k):\n    return 'MINE'\n```",
                  "901.2": synthetic.reply("901.2"), "901.3": synthetic.reply("901.3")})
    prog = gs.assemble(p, p.steps[2], "self", gens, None)
    assert "'MINE'" in prog.context and "class Acc" in prog.context and "```" not in prog.context
    assert prog.code.startswith("def scaled_stats") and prog.deps == "import numpy as np"


def test_reference_context_uses_ground_truth():
    p = _problems()["902"]
    gens = _gens({"902.1": "def square(x):\n    return 'MINE'\n", "902.2": synthetic.reply("902.2")})
    prog = gs.assemble(p, p.steps[1], "reference", gens, None)
    assert prog.context == synthetic.SOLUTIONS["902.1"] and "MINE" not in prog.context
    prog_self = gs.assemble(p, p.steps[1], "self", gens, None)
    assert "'MINE'" in prog_self.context


def test_special_step_from_dir_or_lost(tmp_path):
    p = _problems()["62"]
    gens = _gens({"62.2": synthetic.reply("62.2"), "62.1": "def base():\n    return 'MODEL'\n"})
    lost = gs.assemble(p, p.steps[1], "self", gens, None)
    assert lost.lost_context == "62.1" and "base" not in lost.context   # generation for 62.1 not used
    (tmp_path / "62.1.txt").write_text("```python\ndef base():\n    return 7\n```\n")
    ok = gs.assemble(p, p.steps[1], "self", gens, str(tmp_path))
    assert ok.lost_context is None and "return 7" in ok.context


def test_missing_and_bad_generations_are_model_errors():
    p = _problems()["901"]
    prog = gs.assemble(p, p.steps[0], "self", _gens({}), None)
    assert prog.code is None and prog.error["type"] == "MissingGeneration"
    prog = gs.assemble(p, p.steps[0], "self", _gens({"901.1": "```python\ndef scale(x, k) return\n```"}), None)
    assert prog.error["type"] == "SyntaxError"
    res = gs.pre_failed(prog)
    assert not res.passed and gs.classify(dict(res.failure, step="901.1")) == "model"


def test_audit_flags_reaching_for_grader_state():
    assert gs.audit_generation("def f(x):\n    return target\n") == ["reads the test's `target`"]
    assert gs.audit_generation("def f(target):\n    return target\n") == []
    assert "uses globals()" in gs.audit_generation("def f(x):\n    return globals()['t']\n")
    assert "rebinds np.allclose" in gs.audit_generation("def f(x):\n    np.allclose = len\n")
    assert gs.audit_generation(synthetic.SOLUTIONS["901.2"]) == []
    # frames and namespaces reached through attributes, strings and computed getattr
    assert "uses function.__globals__" in gs.audit_generation("def f(x):\n    return f.__globals__\n")
    assert "uses traceback.tb_frame" in gs.audit_generation(
        "def f(x):\n    try:\n        1/0\n    except Exception as e:\n        return e.__traceback__.tb_frame\n")
    flagged = gs.audit_generation("def f(x):\n    import sys\n    return getattr(sys, '_getframe')(1)\n")
    assert "names '_getframe'" in flagged
    flagged = gs.audit_generation("def f(x):\n    import sys\n    return getattr(sys, '_get' + 'frame')(1)\n")
    assert "getattr with a computed attribute name" in flagged
    # ordinary scientific code is not flagged
    assert gs.audit_generation("def f(x):\n    y = getattr(x, 'shape', None)\n    return np.sum(x) if y else 0\n") == []


def test_all_synthetic_problem_files_load():
    probs, checks = gs.load_problems([str(syn()["problems_test.jsonl"]), str(syn()["problems_dev.jsonl"])])
    assert sorted(probs) == ["62", "901", "902"] and probs["902"].split == "dev"
    assert all(c.status.value == "INFO" for c in checks)            # not the official files: said so
    assert all("DIFFERS" in c.message for c in checks)


def test_jsonl_generations_malformed_unknown_duplicate(tmp_path):
    path = tmp_path / "gens.jsonl"
    lines = [json.dumps({"step_number": "901.1", "completion": "def scale(x, k):\n    return x\n"}),
             "{not json",
             json.dumps({"step_number": 901.2, "completion": "x"}),
             json.dumps({"step_number": "901.3"}),
             json.dumps({"step_number": "999.1", "completion": "x"}),
             json.dumps({"step_number": "902.1", "completion": "a"}),
             json.dumps({"step_number": "902.1", "completion": "b"})]
    path.write_text("\n".join(lines) + "\n")
    g = gs.load_generations(str(path), {"901.1", "901.2", "901.3", "902.1"})
    assert set(g.texts) == {"901.1", "902.1"} and "902.1" in g.errors
    assert g.unknown == ["999.1"]
    bad = [c for c in g.checks if c.id == "input.generations.jsonl"][0]
    assert bad.status.value == "FAIL" and bad.measured == 3 and "line 2" in bad.message


def test_folder_generations_non_utf8(tmp_path):
    (tmp_path / "901.1.py").write_bytes(b"def scale(x, k):\n    return '\xff'\n")
    (tmp_path / "notes.md").write_text("hi")
    g = gs.load_generations(str(tmp_path), {"901.1"})
    assert "not UTF-8" in g.errors["901.1"] and "notes.md" in g.unknown


def test_malformed_problem_lines_are_named(tmp_path):
    p = tmp_path / "p.jsonl"
    good = {"problem_id": "7", "required_dependencies": "import numpy as np",
            "sub_steps": [{"step_number": "7.1", "function_header": "def f(x):\n    '''d'''",
                           "test_cases": ["assert f(1) == target"]}]}
    bad_header = dict(good, problem_id="8", sub_steps=[dict(good["sub_steps"][0], step_number="8.1",
                                                            function_header="x = 1")])
    p.write_text("\n".join([json.dumps(good), "[1, 2]", "{oops", json.dumps(bad_header), json.dumps(good)]) + "\n")
    probs, checks = gs.load_problems([str(p)])
    assert list(probs) == ["7"]
    msgs = [c.message for c in checks if c.status is gs.Status.FAIL]
    assert any(m.startswith("line 2: malformed") for m in msgs)
    assert any(m.startswith("line 3: malformed") for m in msgs)
    assert any("line 4" in m and "no def/class" in m for m in msgs)
    assert any("line 5: problem 7 given twice" in m for m in msgs)
