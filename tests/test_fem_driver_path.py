"""The FEM driver's warm parent never has the submission's folder on its import path (hardening
after ADI red team round 7, where a submitted base64.py/inspect.py ran in the ADI driver before the
run's go): files named like the standard modules the driver imports, beside the gold, never run;
each job child puts the folder on its path (FEM allows no sibling module: one file).
Measured: these pass on the driver before the change too (numpy and scipy load every one of these
modules first today); they guard the property should that import graph change."""
from test_fem_support import GOLD_SOURCE, gold_copy, grade

# the standard modules the FEM driver imports after numpy/scipy, and fork_jobs's lazy ones
SHADOWED = ("binascii", "hashlib", "inspect", "operator", "types", "functools", "select", "signal",
            "stat", "ctypes", "gc", "base64", "selectors", "struct")


def test_files_named_like_standard_modules_never_run_in_the_driver():
    sub = gold_copy("shadow-std")
    for name in SHADOWED:
        (sub / f"{name}.py").write_text(f"raise SystemExit('shadowing {name}.py ran')\n")
    rc, out, err, doc, keys = grade(sub)
    assert keys["SCORE"] == "1.0", [(c["id"], c["message"][:160]) for c in doc["checks"]
                                    if c["status"] not in ("PASS", "INFO")]


def test_honest_twin_a_solver_importing_inside_solve_scores_one():
    """The job child imports with the folder on its path: a solver that imports its libraries
    inside solve() (after the driver's set-up), beside the same shadowing files, still scores 1.0."""
    sub = gold_copy("import-inside-solve")
    for name in SHADOWED:
        (sub / f"{name}.py").write_text(f"raise SystemExit('shadowing {name}.py ran')\n")
    src = GOLD_SOURCE.replace("def solve(n):\n", "def solve(n):\n    import scipy.sparse.linalg\n", 1)
    assert src != GOLD_SOURCE
    (sub / "fem_solver.py").write_text(src)
    rc, out, err, doc, keys = grade(sub)
    assert keys["SCORE"] == "1.0", [(c["id"], c["message"][:160]) for c in doc["checks"]
                                    if c["status"] not in ("PASS", "INFO")]
