"""A PyTorch submission graded end to end (the seed's flagship kind): weights loaded with
torch.load(weights_only=True), CPU, every gate, the child's 8 GiB address-space limit.  Skips
cleanly where torch is not installed (CI installs the CPU build: .ci/run)."""
import io
import shutil
import subprocess
import sys

import pytest

from conftest import verdict_lines
from test_modchallenge_support import SUBS, grade, tier_accuracy

torch = pytest.importorskip("torch")


def test_small_pytorch_model_grades_end_to_end(tmp_path):
    sub = tmp_path / "torch_tier1"
    shutil.copytree(SUBS / "torch_tier1", sub)
    subprocess.run([sys.executable, str(sub / "make_weights.py"), str(sub)], check=True, timeout=120)
    assert (sub / "weights.pt").is_file()
    rc, out, err, doc, checks = grade(sub, tmp_path)
    for cid in ("g1.manifest", "g2.artifact_size", "g3.static_check", "g3.runtime_guard", "g4.testgen", "g5.model_load",
                "g6.preprocess_isolation", "g6.isolation_in_inference", "g7.determinism",
                "g7.determinism_stream", "g8.inference"):
        assert checks[cid]["status"] == "PASS", checks[cid]
    assert not [c for c in doc["checks"] if c["status"] == "REVIEW"]     # weights_only=True: no hatch
    acc = tier_accuracy(checks)
    assert acc[1] == 1.0 and all(acc[k] < 1.0 for k in range(2, 11))
    keys = verdict_lines(out)
    assert (keys["ranked"], keys["deterministic"], keys["RESULT"], rc) == ("true", "true", "PARTIAL", 1)
    assert float(keys["overall_accuracy"]) >= 0.1


def test_torch_load_is_judged_by_what_it_unpickles(tmp_path):
    """The runtime guard (issue 23) judges unpickling by its globals: torch.load without
    weights_only of a plain state dict unpickles only the weights-only allowlist (a static review,
    no runtime finding); the same call on a pickle naming another global is a finding."""
    from test_modchallenge_runtime_guard import guard_run, load, write_sub
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0), "n": torch.Size([2])}, buf)
    state = buf.getvalue()
    source = load("        self.w = torch.load(os.path.join(d, 'w.pt'), weights_only=False)\n", "import torch\n")
    rec, outcome = guard_run(write_sub(tmp_path / "ok", source, {"w.pt": state}))
    assert rec.status.value == "PASS", (rec, outcome.stderr[-2000:])
    evil = io.BytesIO()
    torch.save({"f": len}, evil)                       # a builtin function, pickled by reference
    rec, outcome = guard_run(write_sub(tmp_path / "bad", source, {"w.pt": evil.getvalue()}))
    assert rec.status.value == "FAIL" and "builtin__.len, outside" in rec.message, rec     # protocol 2
