"""The runner's limits are SPEC entries read at call time.  That the runner is one text, and that
the graders and their child programs are pyflakes-clean, is tests/test_build.py's: the runner
stands once in the source tree (graders/common/runner.py), linted as the module it is."""
import ast
import importlib
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
RUNNER_GRADERS = ["grade_fem", "grade_adi", "grade_modchallenge"]
RUNNER_KEYS = {"runner_mem_bytes", "runner_fsize_bytes", "runner_cpu_slack_s", "runner_term_grace_s",
               "runner_output_cap_bytes", "runner_reply_cap_bytes", "runner_copy_cap_bytes"}


def section(name: str, title: str) -> str:
    text = (REPO / f"{name}.py").read_text()
    rule = "# " + "=" * 77 + "\n"
    start = text.index(rule + f"# {title}\n")
    end = text.index(rule, start + len(rule) * 2 + len(title))
    return text[start:end]


@pytest.mark.parametrize("name", RUNNER_GRADERS)
def test_runner_limits_are_spec_entries_read_at_call_time(name):
    mod = importlib.import_module(name)
    assert RUNNER_KEYS <= set(mod.SPEC), RUNNER_KEYS - set(mod.SPEC)
    keys = list(mod.SPEC)
    assert keys[-len(RUNNER_KEYS):] == [k for k in keys if k.startswith("runner_")], \
        "runner entries are grouped at the end of SPEC"
    tree = ast.parse(section(name, "SUBPROCESS RUNNER"))
    for fn in ast.walk(tree):            # no limit bound as a default argument at import time
        if isinstance(fn, ast.FunctionDef):
            for d in fn.args.defaults + fn.args.kw_defaults:
                assert not (d is not None and "SPEC" in ast.unparse(d)), (fn.name, ast.unparse(d))
