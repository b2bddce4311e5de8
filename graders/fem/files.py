"""FILES PRESENT (a part of grade_fem.py; see CONTRIBUTING.md)."""
import os
from graders.common.records import Check, Status
from graders.fem.spec import SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# FILES PRESENT
# =============================================================================
def check_files(sub: str) -> list:
    out = []
    for key in ("solver_file", "json_file", "npz_file"):
        name = SPEC[key]
        p = os.path.join(sub, name)
        ok = os.path.isfile(p) and not os.path.islink(p)
        out.append(Check(f"files.{name}", Status.PASS if ok else Status.FAIL,
                         "present" if ok else "missing (or not a regular file)"))
    return out


