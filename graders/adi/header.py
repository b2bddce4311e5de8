"""grade_adi.py's opening: its docstring, the hoisted imports, its identity."""
from __future__ import annotations

import os
# -- end of source-tree preamble: the build keeps only what follows --
#!/usr/bin/env python3
"""Grader for the mixed-derivative ADI benchmark (u_t = a u_xx + b u_xy + c u_yy + f).

Run:
    python grade_adi.py SUBMISSION              # full grading
    python grade_adi.py SUBMISSION --budget 900 # allow a slower solver
    python grade_adi.py SUBMISSION --strict     # anything needing review scores 0.0
    python grade_adi.py SUBMISSION --no-exec    # diagnostics only: RESULT: UNGRADED, exit 2

SUBMISSION is a directory holding adi_solver.py, results.json and
reference_arrays.npz (see reference/adi/problem_spec.md).  The grader trusts
none of them: it recomputes every order and the exact solution, re-runs
`solve(h, T=1.0, problem=None)` in an isolated interpreter with every
NumPy/SciPy/LAPACK linear-solve entry point instrumented, runs it on a hidden
problem against its own MCS reference, and NaN-poisons (then slightly scales)
the observed solves on one hidden and one benchmark mesh to prove they produce
the returned field.

Score: 1.0 = Tier 1, 2 and 3 pass (all five meshes regenerated); 0.5 = Tier 1,
2 and the coarse-mesh provenance pass but Tier 3 is missing, fails or is
unverified; 0.0 = anything else.  Exit codes: 0 full score, 1 graded below
full score, 2 UNGRADED or usage error, 3 grader failure.

Self-contained: needs only the standard library, numpy and scipy.
"""
# (imports: tools/build_graders.py writes here every standard-library import the parts declare)

# The grader's own numerics on one BLAS thread (set before numpy is first imported): its
# results do not depend on the machine's core count, and idle OpenBLAS workers, which spin,
# do not take the core the isolated child needs (measured on the FEM gold: 0.15 s of CPU).
os.environ.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})

GRADER_NAME = "grade_adi"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

