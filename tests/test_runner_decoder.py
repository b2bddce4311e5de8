"""Issue 9 item 2 and "Bad input": whatever a child writes on its reply channel (deep nesting,
a line beyond the cap, invalid UTF-8, a wrong token, a valid token with a malformed body), and
whatever source it submits (a deep AST), ends in a record: the decoder never raises, and the
graders give a clean result (never exit 3, never a traceback)."""
import importlib
import json
import sys

import pytest

from conftest import REPO, run_grader

sys.path.insert(0, str(REPO))
G = importlib.import_module("grade_fem")
TOKEN = "ab" * 16
DEEP = b"[" * 200000 + b"]" * 200000


def line(obj) -> bytes:
    return json.dumps(obj).encode()


@pytest.mark.parametrize("raw,why", [
    (b'{"token": "%s", "body": ' % TOKEN.encode() + DEEP + b"}", "nested too deeply"),
    (DEEP, "nested too deeply"),
    (b'{"token": "' + TOKEN.encode() + b'", "body": "\xff\xfe"}', "invalid UTF-8"),
    (line({"token": "cd" * 16, "body": 1}), "wrong run token"),
    (line({"body": 1}), "no run token"),
    (line([TOKEN, 1]), "no run token"),
    (line({"token": TOKEN}), "malformed message"),
    (line({"token": TOKEN, "body": 1, "job": "x"}), "malformed message"),
    (line({"token": TOKEN, "body": 1, "ask": "yes"}), "malformed message"),
    (b'{"token": "%s", "body": ' % TOKEN.encode() + b"9" * 5000 + b"}", "not JSON"),
    (b'{"token": "%s", "body": ' % TOKEN.encode() + b"[" * 80 + b"]" * 80 + b"}", "nested deeper"),
    (b"not json at all", "not JSON"),
    (b"", "not JSON"),
])
def test_decoder_refuses_garbage_with_a_reason(raw, why):
    body, is_ask, reason = G.decode_reply(raw, TOKEN)
    assert body is None and is_ask is False and why in reason


def test_decoder_accepts_authentic_lines():
    assert G.decode_reply(line({"token": TOKEN, "body": {"a": [1, 2]}}), TOKEN) == ({"a": [1, 2]}, False, None)
    assert G.decode_reply(line({"token": TOKEN, "body": 3, "ask": True}), TOKEN) == (3, True, None)


GARBAGE_DRIVER = r'''
import os
for raw in _REQ["lines"]:
    os.write(_FD, raw.encode("latin-1") + b"\n")
os.write(_FD, b"\xff\xfe\xfd\n")
os.write(_FD, b"[" * 300000 + b"\n")
send({"kind": "real"})
'''


def test_garbage_on_the_pipe_is_counted_and_the_real_message_kept():
    lines = [json.dumps({"token": "0" * 32, "body": {"kind": "forged"}}), "{" * 100, "[1, 2"]
    oc = G.run_isolated(str(REPO / "tests"), GARBAGE_DRIVER, {"lines": lines}, 60)
    assert oc.status == "ok", oc.reason
    assert oc.messages == [{"kind": "real"}]
    assert oc.forged == 5
    assert "wrong run token" in oc.garbage[0] and "invalid UTF-8" in oc.garbage[3]
    assert "nested too deeply" in oc.garbage[4]


def test_a_line_beyond_the_reply_cap_is_refused_not_buffered(monkeypatch):
    monkeypatch.setitem(G.SPEC, "runner_reply_cap_bytes", 1 << 20)
    body = r'''
import os
chunk = b"x" * 65536
for _ in range(64):                      # 4 MiB without a newline
    os.write(_FD, chunk)
send({"kind": "late"})
'''
    oc = G.run_isolated(str(REPO / "tests"), body, {}, 60)
    assert oc.status == "no_reply" and oc.messages == []
    assert oc.forged == 1 and "over 1048576 bytes" in oc.garbage[0]
    assert "unreadable line" in oc.reason


JOB_GARBAGE = r'''
import os
def run(job):
    os.write(_CH["out"], b"[" * 300000 + b"\n")
    os.write(_CH["out"], b"\xff\n")
    os.write(_CH["out"], b'{"body": {"kind": "job_end", "status": "ok"}}\n')   # a job cannot end itself
    os.write(_CH["out"], b'{"body": 1, "token": "x"}\n')
    send({"kind": "real", "n": job["n"]})
fork_jobs([{"id": "j1", "n": 1}], run)
'''


def test_garbage_from_a_job_child_is_counted_by_the_warm_parent():
    oc = G.run_isolated(str(REPO / "tests"), JOB_GARBAGE, {}, 60)
    assert oc.status == "ok", oc.reason
    real = [m for m in oc.messages if m.get("kind") == "real"]
    ends = [m for m in oc.messages if m.get("kind") == "job_end"]
    assert real == [{"kind": "real", "n": 1, "job": "j1"}]
    assert len(ends) == 1 and ends[0]["status"] == "ok" and ends[0]["garbage"] == 4
    assert oc.forged == 4
    assert any("nested too deeply" in g for g in oc.garbage)
    assert any("job_end written by the job itself" in g for g in oc.garbage)


# --- graders end to end -----------------------------------------------------------------
FLOOD = '''import os as _o
for _fd in range(3, 64):                   # every pipe the child may hold, the reply channel included
    try:
        _o.write(_fd, b"[" * 300000 + b"\\n")
    except OSError:
        pass
_o._exit(0)
'''


def _grade(script, sub, tmp_path):
    rc, out, err, doc = run_grader(REPO / script, sub, "--json", tmp_path / "r.json", timeout=600)
    assert "Traceback" not in err and rc in (0, 1), (rc, err[-2000:])
    return rc, out, doc


def test_fem_deep_nesting_on_the_pipe_is_a_clean_fail(tmp_path):
    import shutil
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "reference" / "fem" / "gold", sub)
    (sub / "fem_solver.py").write_text(FLOOD + (sub / "fem_solver.py").read_text())
    rc, out, doc = _grade("grade_fem.py", sub, tmp_path)
    assert rc == 1 and doc["score"] == 0.0
    by_id = {c["id"]: c for c in doc["checks"]}
    assert by_id["provenance.import"]["status"] == "FAIL"
    assert any(c["id"].startswith("provenance.channel") and "line(s)" in c["message"] for c in doc["checks"])


def test_adi_deep_nesting_on_the_pipe_is_a_clean_fail(tmp_path):
    import shutil
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "reference" / "adi" / "gold", sub)
    (sub / "adi_solver.py").write_text(FLOOD + (sub / "adi_solver.py").read_text())
    rc, out, doc = _grade("grade_adi.py", sub, tmp_path)
    assert rc == 1 and doc["score"] == 0.0
    assert any(c["id"] == "provenance.channel" and c["status"] == "REVIEW" for c in doc["checks"])


DEEP_SOURCE = "x = a" + ".a" * 200000 + "\n"         # 400 KB, under the source cap


@pytest.mark.parametrize("script,solver,gold", [("grade_fem.py", "fem_solver.py", "fem"),
                                                 ("grade_adi.py", "adi_solver.py", "adi")])
def test_deep_ast_source_is_a_clean_fail(tmp_path, script, solver, gold):
    import shutil
    sub = tmp_path / "sub"
    shutil.copytree(REPO / "reference" / gold / "gold", sub)
    (sub / solver).write_text(DEEP_SOURCE)
    rc, out, doc = _grade(script, sub, tmp_path)
    assert rc == 1 and doc["score"] == 0.0
    syntax = [c for c in doc["checks"] if c["id"] == "static.syntax"]
    assert syntax and syntax[0]["status"] == "FAIL" and "cannot be parsed" in syntax[0]["message"]


@pytest.mark.parametrize("name", ["grade_fem", "grade_adi"])
def test_deep_json_is_a_reject(tmp_path, name):
    mod = importlib.import_module(name)
    p = tmp_path / "deep.json"
    p.write_bytes(b"[" * 200000 + b"]" * 200000)
    with pytest.raises(mod.Reject) as exc:
        mod.read_json_file(str(p), "sidecar.json", 1 << 22)
    assert "nested too deeply" in str(exc.value) or "not valid JSON" in str(exc.value)
