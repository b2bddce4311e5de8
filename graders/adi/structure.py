"""ADI STRUCTURE AT RUN TIME (a part of grade_adi.py; see CONTRIBUTING.md)."""
from graders._embed import embed
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# ADI STRUCTURE AT RUN TIME (seed: "What the evaluator checks" 8): the driver
# the isolated interpreter runs.  It wraps every linear-solve entry point of
# numpy.linalg, scipy.linalg, scipy.linalg.lapack/blas and scipy.sparse.linalg,
# and every route that can do a 2-D implicit solve without a banded system
# (numpy.fft / scipy.fft / scipy.fftpack transforms including DST/DCT,
# eigen-decompositions, QR, matrix functions, sparse eigensolvers and
# expm_multiply), BEFORE the submission is imported, replacing each original by
# identity in every loaded module (so `from scipy.linalg.lapack import dgtsv`
# gets the wrapper).  Every call is recorded, in every thread (per-thread
# nesting depth, one lock for the log): a call made while another wrapped call
# of the same thread runs is recorded as NESTED when only NumPy/SciPy frames lie
# between the two (solve_banded calling LAPACK: counted once, dimension rule still
# applied), and as a solve of its own when submitted code is in between (a
# callback of an iterative solver, a LinearOperator's matvec, a trampoline).
# What is solved is what was recorded (issue 21): each operand is first copied by
# exact type into an object the recorder owns (a sparse matrix read from its own
# storage, a LinearOperator materialised), arguments are bound with the routine's
# own signature, the recorded matrix is the effective one the routine reads, and
# the library is handed the owned objects; its result is then checked against the
# recorded system (a residual to round-off); factors are fingerprinted by content;
# in-place results are written back (spoiled, under the audits) into the caller's
# buffers.  The recorder uses only references taken at driver start and its own
# copy of the builtins.  Each solve's matrix is classified: a direct sum of 1-D
# operators I - r D2 on grid lines of m - 1 nodes (any scalar factor, r > 0) is an
# ADI operator, reported with the theta it implies for the x and y coefficients;
# factor-consuming calls inherit the class of the factorisation whose fingerprint
# matches their factor.  Violations stream as they happen; in poison mode the
# result of every ADI-operator solve (never a factorisation, never another system)
# is replaced by NaNs or scaled by 1 + O(perturb_rel) (the causal audits); after
# each job the driver checks that no wrapper was removed and that no NumPy/SciPy
# module function or class attribute changed since driver start.
# =============================================================================
DRIVER_BODY = embed("adi/child_driver.py")


