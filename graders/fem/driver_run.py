"""5-8. PROVENANCE (a part of grade_fem.py; see CONTRIBUTING.md)."""
from graders._embed import embed
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 5-8. PROVENANCE: the instrumented driver run inside the isolated child
# =============================================================================
# One run: the warm parent (numpy/scipy imported, BLAS pinned, instrumentation
# installed by identity over every attribute of every loaded numpy/scipy module,
# the submission NOT imported) forks one fresh child per job (fork_jobs); each
# child imports fem_solver afresh, calls solve(n) once and reports the field.
# Every outermost library call is shown to the grader as it happens: factorisations
# and solves with their matrix, right-hand side and output (ask), the solve's
# output replaced by whatever the grader answers (unchanged in a clean job, the
# grader's substitute in an audited one: decided in the grader, after the child
# has shown the real output).  Process creation is refused in a job.
FEM_DRIVER = embed("fem/child_driver.py")


