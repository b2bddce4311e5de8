"""grade_fem.py's opening: its docstring, the hoisted imports, its identity."""
from __future__ import annotations

import os
# -- end of source-tree preamble: the build keeps only what follows --
#!/usr/bin/env python3
"""Grader for the cubic-Hermite FEM (Euler-Bernoulli beam) benchmark.

Run:
    python grade_fem.py SUBMISSION              # full grading
    python grade_fem.py SUBMISSION --budget 900 # allow a slower solver
    python grade_fem.py SUBMISSION --strict     # anything inconclusive scores 0.0
    python grade_fem.py SUBMISSION --no-exec    # diagnostics only: RESULT: UNGRADED, exit 2

SUBMISSION is a directory holding fem_solver.py, results.json and
reference_arrays.npz (see reference/fem/problem_spec.md).

The grader trusts nothing it is given: it recomputes the exact solution and
every order of convergence from the submitted arrays, checks results.json
against the arrays, re-runs fem_solver.solve(n) for all seven meshes in an
isolated, instrumented subprocess (observing the library linear solve and
tampering with its output to prove it feeds the field), and compares every
returned field pointwise with its own 5-point-Gauss cubic-Hermite solution.

Score: 1.0 = Tier 1, 2 and 3 pass; 0.5 = Tier 1, 2 and provenance pass but
Tier 3 is missing or fails; 0.0 = anything else.  REVIEW_REQUIRED lines mark
what automation cannot decide; --strict scores them 0.0.  Exit codes: 0 full
score, 1 graded below full score, 2 UNGRADED or usage error, 3 grader failure.

Self-contained: needs only the standard library, numpy and scipy.
"""
# (imports: tools/build_graders.py writes here every standard-library import the parts declare)

# The grader's own numerics on one BLAS thread (set before numpy is first imported): its
# results do not depend on the machine's core count, and idle OpenBLAS workers, which spin,
# do not take the core the isolated child needs (measured on the FEM gold: 0.15 s of CPU).
os.environ.update({k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})

GRADER_NAME = "grade_fem"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

