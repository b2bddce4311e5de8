"""Shared helpers for the --plot tests (no tests here): the graders loaded from this
checkout as modules, and small readers of what a matplotlib Figure draws."""
import functools
import importlib.util
import sys
from pathlib import Path

from conftest import REPO

sys.dont_write_bytecode = True
GRADERS = ("fem", "adi", "modchallenge", "engiai", "scicode")


@functools.lru_cache(maxsize=None)
def grader(name: str):
    """grade_<name>.py of this checkout, imported once under a private module name."""
    path = REPO / f"grade_{name}.py"
    spec = importlib.util.spec_from_file_location(f"grade_{name}_plots_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def script(name: str) -> Path:
    return REPO / f"grade_{name}.py"


def title(fig) -> str:
    return fig._suptitle.get_text() if fig._suptitle is not None else ""


def legend_labels(ax) -> list:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg is not None else []


def data_lines(ax) -> dict:
    """{label: Line2D} of the labelled lines (matplotlib's own helper lines excluded)."""
    return {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def texts(fig) -> str:
    """Every text drawn anywhere in the figure, joined (titles, annotations, labels)."""
    return "\n".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")
                                                         and callable(a.get_text)))


def figure_records(checks) -> dict:
    """{figure id: Check} of the figure.* records."""
    return {c.id: c for c in checks if c.id.startswith("figure.")}


def assert_titled(fig, submission: str, result: str):
    t = title(fig)
    assert submission in t and f"RESULT: {result}" in t, t


def assert_labelled(ax):
    assert ax.get_xlabel() and ax.get_ylabel(), (ax.get_xlabel(), ax.get_ylabel())
