"""--memory GB and the GPU mode.  The default limit is the child's address space (8 GiB), which a
CUDA runtime cannot live with: it reserves far more virtual memory than it uses.  --gpu replaces it
by a resident-memory watchdog enforced from outside: the process group is killed, a clean FAIL,
when its resident memory exceeds --memory.  Simulated here without a GPU: a 12 GiB reservation that
is never touched (what CUDA initialisation does), and real resident use."""
import mmap

import pytest

from conftest import run_grader, verdict_lines
from test_modchallenge_support import GRADER, grade, make_submission, model_source

RESERVE = ("    def load(self, d):\n        import mmap\n"
           "        self.reserved = mmap.mmap(-1, 12 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)\n")
RESIDENT = "    def load(self, d):\n        self.block = b'\\x01' * (400 << 20)\n"
WATCHED = RESIDENT + "        time.sleep(0.5)\n"                 # the watchdog polls every 0.1 s


def _can_reserve_12_gib() -> bool:
    try:
        m = mmap.mmap(-1, 12 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError, OverflowError):
        return False
    m.close()
    return True


def test_a_cuda_like_reservation_needs_the_gpu_mode(tmp_path):
    if not _can_reserve_12_gib():
        pytest.skip("this machine refuses a 12 GiB reservation outright")
    sub = make_submission(tmp_path / "sub", model_source(RESERVE))
    rc, out, err, doc, checks = grade(sub, tmp_path, name="as.json")
    assert checks["g5.model_load"]["status"] == "FAIL"                  # 12 GiB > the 8 GiB address space
    assert "raised while loading" in checks["g5.model_load"]["message"]
    rc, out, err, doc, checks = grade(sub, tmp_path, "--gpu", name="gpu.json")
    assert checks["g5.model_load"]["status"] == "PASS", checks["g5.model_load"]
    assert verdict_lines(out)["ranked"] == "true"


def test_gpu_mode_kills_resident_memory_over_the_limit(tmp_path):
    sub = make_submission(tmp_path / "sub", model_source(WATCHED))
    rc, out, err, doc, checks = grade(sub, tmp_path, "--gpu", "--memory", "0.25")
    load = checks["g5.model_load"]
    assert load["status"] == "FAIL" and f"exceeded {1 << 28} bytes resident" in load["message"], load
    assert "Traceback" not in out and verdict_lines(out)["RESULT"] == "FAIL"


def test_memory_sets_the_address_space_limit(tmp_path):
    sub = make_submission(tmp_path / "sub", model_source(RESIDENT))
    rc, out, err, doc, checks = grade(sub, tmp_path, "--memory", "0.25", name="small.json")
    assert checks["g5.model_load"]["status"] == "FAIL" and "MemoryError" in checks["g5.model_load"]["message"]
    rc, out, err, doc, checks = grade(sub, tmp_path, "--memory", "1.5", name="big.json")
    assert checks["g5.model_load"]["status"] == "PASS", checks["g5.model_load"]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e9"])
def test_memory_out_of_range_is_a_usage_error(tmp_path, value):
    sub = make_submission(tmp_path / "sub", model_source(""))
    rc, out, err, _ = run_grader(GRADER, sub, "--memory", value)
    assert rc == 2 and "--memory" in err and out == ""


def test_memory_options_are_the_runner_keywords():
    from test_modchallenge_support import grader
    g = grader()
    assert g.memory_options(None, False) == {"mem_bytes": g.SPEC["runner_mem_bytes"], "memory": "address"}
    gpu = g.memory_options(16, True)
    assert (gpu["mem_bytes"], gpu["memory"]) == (16 << 30, "resident") and "CUDA_VISIBLE_DEVICES" in gpu["env_pass"]
