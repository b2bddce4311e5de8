"""The merge of issue 12 (targets judged in the grader) with issue 14 (resume, exit codes):
--out's resume files keep each step's judged result -- not the step process's comparison
records -- and a kept file is reused only for the same job and only when every field has
its type; --strict without file isolation is UNGRADED with exit 3, as an indicted run."""
import json

from test_scicode_support import gs


def job(step="5.1", code="def f():\n    return 1\n"):
    return {"step": step, "deps": "import numpy as np", "context": "", "code": code,
            "cases": ["assert f() == target"], "arity": [{}], "definition": ["def", "f"],
            "timeout": 10.0, "mem_bytes": 1 << 30, "dry": False}


def result(step="5.1"):
    return gs.StepResult(step, False, [{"i": 1, "ok": False, "error": "AssertionError: "}],
                         {"type": "AssertionError", "message": "", "phase": "case 1",
                          "origin": "test", "evidence": {"targets": True, "shim": True}}, 0.25,
                         "out", "", False)


def test_judged_result_kept_and_reused_only_for_the_same_job(tmp_path):
    h5 = tmp_path / "t.h5"
    h5.write_bytes(b"x")
    store = gs.ResumeStore(str(tmp_path / "o"), str(h5), [job()])
    assert store.results == {}
    store.save(job(), result())
    doc = json.loads((tmp_path / "o" / "resume" / "5.1.json").read_text())
    assert set(doc) == {"key", "result"} and "messages" not in json.dumps(doc)   # no records kept
    again = gs.ResumeStore(str(tmp_path / "o"), str(h5), [job()])
    assert again.results == {"5.1": result()}
    other = gs.ResumeStore(str(tmp_path / "o"), str(h5), [job(code="def f():\n    return 2\n")])
    assert other.results == {}                                      # another program: rerun
    h5.write_bytes(b"xy")                                           # another targets file: rerun
    assert gs.ResumeStore(str(tmp_path / "o"), str(h5), [job()]).results == {}


def test_a_kept_file_with_a_wrong_field_is_not_reused(tmp_path):
    h5 = tmp_path / "t.h5"
    h5.write_bytes(b"x")
    store = gs.ResumeStore(str(tmp_path / "o"), str(h5), [job()])
    store.save(job(), result())
    path = tmp_path / "o" / "resume" / "5.1.json"
    good = json.loads(path.read_text())
    for field, bad in (("passed", "true"), ("cases", {}), ("wall", True), ("step", "5.2"),
                       ("failure", "x"), ("extra", 1)):
        doc = json.loads(json.dumps(good))
        doc["result"][field] = bad
        path.write_text(json.dumps(doc))
        assert gs.ResumeStore(str(tmp_path / "o"), str(h5), [job()]).results == {}, field


def test_strict_without_file_isolation_exits_3(monkeypatch):
    monkeypatch.setattr(gs, "_SANDBOX", dict(user_namespace=True, net_namespace=True, mount_namespace=False,
                                             pid_namespace=False, file_isolation=False, prefix=[], root=False,
                                             job_user_namespace=False, rlimits=["RLIMIT_AS"],
                                             note="mount/pid namespaces unavailable: test"))
    step = gs.Check("step.1.1", gs.Status.PASS, "1/1")
    for strict, want in ((True, ("UNGRADED", None, 3)), (False, ("PASS", 1.0, 0))):
        report = gs.Report("sub", checks=gs.isolation_checks(strict=strict) + [step])
        res, score = gs.verdict(report.checks, strict=strict, no_exec=False)
        assert (res, score, gs.exit_code_of(report, res, score)) == want, strict
