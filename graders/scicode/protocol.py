"""PROTOCOL LAW (a part of grade_scicode.py; see CONTRIBUTING.md)."""
import ast
import dataclasses
import os
import re
import textwrap
from graders.common.guarded import parse_python
from graders.common.records import Reject
from graders.scicode.guarded import Generations, Problem, Step, read_text_file
from graders.scicode.spec import SPEC
from graders.scicode.static import audit_generation
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# PROTOCOL LAW: fences, extraction, context
# =============================================================================
FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^\n]*$", re.MULTILINE)


def strip_fences(text: str) -> list:
    """Code blocks of a markdown reply, in order.  No fence: the whole text is
    one block.  An unclosed fence runs to the end (a truncated reply).  A leading
    byte-order mark is dropped; a block indented as a whole (a fence inside a
    markdown list item) is dedented."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    fences = list(FENCE_RE.finditer(text))
    if not fences:
        return [text]
    blocks, i = [], 0
    while i < len(fences):
        opening = fences[i]
        closing = next((f for f in fences[i + 1:] if f.group(1)[0] == opening.group(1)[0]
                        and len(f.group(1)) >= len(opening.group(1)) and not f.group(2)), None)
        end = closing.start() if closing else len(text)
        blocks.append(textwrap.dedent(text[opening.end() + 1:end]) if opening.end() < len(text) else "")
        if closing is None:
            break
        i = fences.index(closing) + 1
    return blocks


HEADER_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


def header_name(header: str) -> tuple:
    """(kind, name) of the definition a step's function_header declares: its FIRST
    def/class line.  (Upstream tries `def` first and so returns `__init__` for a
    class header -- SciCode issues #49/#59; a class header names the class.)"""
    m = HEADER_RE.search(header)
    if not m:
        raise ValueError("no def/class in the function header")
    return m.group(1), m.group(2)


class ExtractionError(Exception):
    pass


def extract_definition(text: str, kind: str, name: str) -> str:
    """Source of the `kind` definition named `name` in a raw reply, fences
    stripped.  The last code block that defines it wins, and within it the last
    top-level definition (what running the reply would bind), else a nested
    one; all blocks joined is the last resort.  Anything outside the definition
    (imports, helpers, prints) is dropped, as the seed's extraction does."""
    blocks = strip_fences(text)
    candidates = list(reversed(blocks)) + (["\n".join(blocks)] if len(blocks) > 1 else [])
    types = (ast.ClassDef,) if kind == "class" else (ast.FunctionDef, ast.AsyncFunctionDef)
    first_error, parsed_any = None, False
    for block in candidates:
        try:
            tree = parse_python(block, "generation", "extract")
        except Reject as exc:
            first_error = first_error or exc.check.message
            continue
        parsed_any = True
        top = [n for n in tree.body if isinstance(n, types) and n.name == name]
        nested = [n for n in ast.walk(tree) if isinstance(n, types) and n.name == name]
        if top or nested:
            try:
                return ast.unparse((top or nested)[-1])
            except RecursionError:
                raise ExtractionError(f"`{kind} {name}` is nested too deeply to be extracted")
    if not parsed_any and first_error is not None:
        raise SyntaxError(first_error.replace("generation: ", "", 1))
    raise ExtractionError(f"no `{kind} {name}` in the generation")


@dataclasses.dataclass
class StepProgram:
    """What one step runs: dependencies, prior-step context, the step's code, its tests."""
    step: str
    problem: str
    deps: str
    context: str
    code: str | None            # None: the step cannot run (reason in `error`)
    error: dict | None          # {"type","message"} model fault found before execution
    cases: list
    lost_context: str | None    # special step whose code is absent (harness fault)
    audit: list
    definition: tuple = ("def", "")     # (kind, name) the step's header declares


def special_code(step: Step, special_dir: str | None) -> str | None:
    """Reference code of a no-test step from --special-steps DIR/<step>.txt|.py."""
    if not special_dir:
        return None
    kind, name = header_name(step.header)
    for ext in (".txt", ".py"):
        p = os.path.join(special_dir, step.step + ext)
        if os.path.isfile(p):
            try:
                return extract_definition(read_text_file(p, "special", SPEC["max_generation_bytes"]),
                                          kind, name)
            except (Reject, SyntaxError, ExtractionError):
                return None
    return None


def generation_code(step: Step, gens: Generations) -> tuple:
    """(code, error) for a step from its generation; error is a model-fault dict."""
    if step.step in gens.errors:
        return None, {"type": "BadGeneration", "message": gens.errors[step.step]}
    if step.step not in gens.texts:
        return None, {"type": "MissingGeneration", "message": f"no generation for step {step.step}"}
    kind, name = header_name(step.header)
    try:
        return extract_definition(gens.texts[step.step], kind, name), None
    except SyntaxError as exc:
        return None, {"type": "SyntaxError", "message": str(exc)}
    except ExtractionError as exc:
        return None, {"type": "ExtractionError", "message": str(exc)}


def assemble(problem: Problem, step: Step, context_mode: str, gens: Generations,
             special_dir: str | None) -> StepProgram:
    """The program of one in-scope step.  self: prior steps' own generations
    (fence-stripped, definition extracted); reference: prior ground_truth_code.
    The no-test steps contribute --special-steps code, or nothing (lost context)."""
    parts, lost = [], None
    for prior in problem.steps[:step.index]:
        if prior.step in SPEC["special_steps"]:
            code = special_code(prior, special_dir)
            if code is None:
                lost = prior.step
            else:
                parts.append(code)
        elif context_mode == "reference":
            parts.append(prior.gold or "")
        else:
            code, _ = generation_code(prior, gens)
            if code is not None:
                parts.append(code)
    code, error = generation_code(step, gens)
    return StepProgram(step.step, problem.pid, problem.deps, "\n\n".join(parts), code, error,
                       step.cases, lost, audit_generation(code) if code else [], header_name(step.header))


