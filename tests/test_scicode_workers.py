"""The warm workers' import set (issue 12, throughput): what the problems' dependency lines and
the shim name, plus those of the usual scipy subpackages a program text imports -- and never
a module a generation names beyond that fixed list (a worker imports before any step, so an
import of the generation's choosing could stall or kill it: a voided run)."""
from test_scicode_support import gs

BASE = {"numpy", "scipy", "scipy.sparse", "h5py"}


def problem(deps: str):
    return gs.Problem("1", deps, [], "dev")


def test_the_dependency_lines_and_the_shim_are_warm_and_unasked_subpackages_are_not():
    warm = set(gs.warm_modules([problem("import numpy as np\nfrom scipy.integrate import simpson\nimport math")]))
    assert warm == BASE | {"scipy.integrate", "math"}
    assert not warm & {"scipy.signal", "scipy.optimize", "scipy.interpolate"}


def test_a_usual_subpackage_a_program_imports_is_warm():
    texts = ["```python\nfrom scipy import optimize, signal as sg\n```",
             "def f(x):\n    from scipy.interpolate import interp1d\n    return x",
             "import scipy.spatial.distance as dist, os"]
    warm = set(gs.warm_modules([problem("import numpy as np")], texts))
    assert {"scipy.optimize", "scipy.signal", "scipy.interpolate", "scipy.spatial"} <= warm


def test_a_generation_cannot_choose_what_a_worker_imports():
    texts = ["import antigravity, this\nfrom idlelib import idle\nimport scipy.stats\nimport sympy"]
    assert set(gs.warm_modules([problem("import numpy as np")], texts)) == BASE


def test_imported_modules_reads_text_only():
    assert gs.imported_modules("x = 'import scipy.signal'\n# from scipy import optimize\n") == set()
    assert gs.imported_modules("  from a.b import (c,\n    d)\nimport e as f, g.h\n") >= {"a.b", "a.b.c", "e", "g.h"}
