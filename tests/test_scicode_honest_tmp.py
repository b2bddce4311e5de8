"""A generation that hard-codes /tmp (the official harness runs it on the host, where that
works) passes: each step's sandbox has an empty, writable /tmp of its own, which shows nothing
of the host's /tmp (the targets file, other runs)."""
import pytest

from test_scicode_support import gs, one_step_set, run_one_step_set, step_line, with_reply

WRITES_TMP = '''
def f(x):
    with open("/tmp/scratch_value.txt", "w") as fh:
        fh.write(repr(x + 1))
    with open("/tmp/scratch_value.txt") as fh:
        return float(fh.read())
'''
SEES_HOST_TMP = '''
def f(x):
    import os
    leftovers = [n for n in os.listdir("/tmp") if n != "scratch_value.txt"
                 and not n.startswith("grade_scicode-")]          # its own run's folder only
    return x + 1 if not leftovers else -1.0
'''


def test_generation_writing_tmp_passes_and_sees_no_host_file():
    if not gs.sandbox_level()["file_isolation"]:
        pytest.skip("no mount/pid namespaces here")
    probs, h5, gen, steps = one_step_set("honest-tmp", {"writes": with_reply(WRITES_TMP),
                                                        "host": with_reply(SEES_HOST_TMP)})
    rc, out, err, doc, keys = run_one_step_set(probs, h5, gen, "--timeout", "30")
    for label in ("writes", "host"):
        assert step_line(out, steps[label]).startswith("PASS"), (label, out, err)
