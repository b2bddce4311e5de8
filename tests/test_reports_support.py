"""Shared helpers for the report tests (no tests here): the five graders as modules, an
in-process main() that captures the streams and the exit code, schema validation."""
import functools
import importlib
import json
import sys

import pytest

from conftest import REPO

NAMES = ("fem", "adi", "modchallenge", "scicode", "engiai")
SCHEMAS = REPO / "schemas"


@functools.lru_cache(None)
def grader(name: str):
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module(f"grade_{name}")


def call_main(G, argv, capsys) -> tuple:
    """(exit code, stdout, stderr) of G.main(argv) run in this process."""
    try:
        rc = G.main([str(a) for a in argv])
    except SystemExit as exc:     # argparse's own errors (one line, exit 2) and --version
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def validate(doc: dict, name: str) -> None:
    """The document against schemas/grade_<name>.report.schema.json (every error listed)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / f"grade_{name}.report.schema.json").read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [(list(e.path), e.message[:200]) for e in errors]


def read_docs(path) -> list:
    """The documents of a --json file: one indented document, or one per line."""
    text = open(path).read()
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
