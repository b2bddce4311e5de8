"""The programs the grader ships as strings (the child's driver, the interface shim) compile and
are pyflakes-clean, like the grader file itself."""
import pytest

from test_modchallenge_support import grader


@pytest.mark.parametrize("name", ["driver", "shim"])
def test_embedded_programs_compile_and_lint_clean(name):
    api = pytest.importorskip("pyflakes.api")
    from pyflakes.reporter import Reporter
    import io
    g = grader()
    text = g.DRIVER_PROLOGUE + g.DRIVER_BODY if name == "driver" else g.SHIM_BASE_MODEL
    compile(text, name, "exec")
    out, err = io.StringIO(), io.StringIO()
    assert api.check(text, name, Reporter(out, err)) == 0, out.getvalue() + err.getvalue()
