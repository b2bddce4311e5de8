"""grade_scicode.py's opening: its docstring, the hoisted imports, its identity."""
from __future__ import annotations

# -- end of source-tree preamble: the build keeps only what follows --
#!/usr/bin/env python3
"""Grader for SciCode: the official protocol run locally, with a harness-fault census.

Run:
    python grade_scicode.py GENERATIONS --problems problems_all.jsonl problems_dev.jsonl \\
        --h5 test_data.h5 [--split test|dev|all] [--context self|reference] [--special-steps DIR]
        [--budget SECONDS] [--memory GB] [--jobs N] [--dry-run] [--strict] [--no-exec]
        [--json PATH] [--out DIR] [--quiet]

GENERATIONS is the model's raw replies, one per step: either a folder of
`<step>.txt` / `<step>.py` files (e.g. `10.1.py`), or a JSONL file with one
`{"step_number": "10.1", "completion": "<raw reply>"}` object per line.
Markdown fences are stripped and the function/class named by the step's
header is extracted (reference/scicode/problem_spec.md has the details).

Every in-scope step runs in its own forked process (fresh temp dir, wall-clock
timeout, address-space/CPU/file-size limits) from a warm worker that has
already imported numpy/scipy/h5py.  Targets come from the official
`test_data.h5` through this grader's own reader; `target` is bound before each
test case; `scicode.compare.cmp` / `scicode.parse.parse` are provided by a
shim package.  Results travel only over a token-tagged pipe.

Score: steps passed / in-scope steps of the split (288 test, 50 dev, 338 all),
printed as `step_accuracy`; `problem_accuracy` = problems with every step
passed / problems (65, 15, 80).  A run whose failures indict the harness
(`target` NameError, missing `scicode` module, missing h5 groups, >= 10
failures all sharing one non-assertion signature; under --strict any
harness-fault signature) is not certified: RESULT: UNGRADED, exit 3.
Exit codes: 0 every step passed, 1 graded below full score, 2 UNGRADED
(--no-exec) or usage error (a GENERATIONS/--problems/--h5 path that does not exist),
3 harness indicted, unreadable targets file, or grader failure.

Self-contained: needs only the standard library, numpy, scipy and h5py.
"""
# (imports: tools/build_graders.py writes here every standard-library import the parts declare)

GRADER_NAME = "grade_scicode"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

