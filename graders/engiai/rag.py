"""SCORING (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import math
import re
from graders.common.records import Check, Status
from graders.engiai.families import Unscorable, weighted
from graders.engiai.guarded import as_number, short
from graders.engiai.spec import PROBLEMS, SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SCORING: RAG retrieval (accuracy credited only when the RAG tool was called)
# =============================================================================
_RAG_ALIASES = {"volfrac": ("volfrac", "volume_fraction", "vol_frac", "volume"),
                "forcedist": ("forcedist", "force_distribution", "force_dist", "forcedistribution"),
                "rmin": ("rmin", "filter_radius", "r_min")}


def rag_param(calls: list, param: str) -> tuple:
    """(value, call index): the first value of a parameter in optimize_design args (flat, then
    problem_config), the agent's answer for it; (None, None) when no call carries one."""
    for i, c in enumerate(calls):
        if c["name"] != "optimize_design":
            continue
        for scope in (c["args"], c["args"].get("problem_config")):
            if not isinstance(scope, dict):
                continue
            for alias in _RAG_ALIASES[param]:
                v = as_number(scope.get(alias))
                if v is not None:
                    return v, i
    return None, None


_PASSAGE_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(\s*%)?")


def passage_text(p):
    """The text of one returned passage (a string, or an object's `content` or `text`)."""
    return p if isinstance(p, str) else (p.get("content") or p.get("text")) \
        if isinstance(p, dict) else None


def passages_state(call: dict, value: float, tol: float) -> bool:
    """Does a successful retrieval's text state `value` (some number in its passages within
    tol of it; `35%` reads as 0.35 as well as 35)?  A retrieval that carries no such number
    could not have informed that answer (TRIAL_FORMAT.md decision 10)."""
    for p in call["result"].get("results") or ():
        text = passage_text(p)
        if not isinstance(text, str):
            continue
        for m in _PASSAGE_NUMBER.finditer(text[:1 << 20]):
            try:
                x = float(m.group(0).rstrip("% \t\r\n"))
            except ValueError:
                continue
            if any(math.isfinite(v) and abs(v - value) <= tol
                   for v in ((x, x / 100.0) if m.group(1) else (x,))):
                return True
    return False


def retrieval_failure(call: dict):
    """None when a search_documents call is a successful retrieval, else why not.  Successful
    (TRIAL_FORMAT.md): result.success is exactly JSON true, result.error is absent, null, false
    or "", and result.results is a non-empty list of passages, each a non-empty string or an
    object whose `content` or `text` is a non-empty string."""
    res = call["result"]
    if res.get("success") is not True:
        return f"success is {short(res.get('success'), as_repr=True)}, not true"
    if res.get("error") not in (None, False, ""):
        return f"it reports an error ({short(res.get('error'), 60)!r})"
    passages = res.get("results")
    if not isinstance(passages, list) or not passages:
        return "it returned no passages (results missing or empty)"
    text = passage_text
    if not all(isinstance(text(p), str) and text(p).strip() for p in passages):
        return "a returned passage is empty or not text"
    return None


def score_rag(rec: dict, calls: list, tid: str) -> tuple:
    """rag_accuracy: mode-weighted parameter accuracy plus the weight for using the RAG tool.
    `rag_tool_called` needs a successful retrieval (retrieval_failure); a parameter's accuracy
    counts only when a successful retrieval precedes the optimize_design call that gave the
    answer and states the answered value (passages_state): a failed or empty retrieval, one
    after the answer, or one whose passages carry no such number, is a lucky guess (seed:
    "a lucky guess scores nothing")."""
    cond = (rec.get("expected") or {}).get("conditions") if isinstance(rec.get("expected"), dict) else None
    if not isinstance(cond, dict) or as_number(cond.get("expected_volfrac")) is None:
        raise Unscorable("expected.conditions.expected_volfrac missing from the trial record")
    tested = tuple(p for p in ("forcedist", "rmin") if cond.get(f"expected_{p}") is not None)
    weights = SPEC["rag_modes"][tested]
    searches = [(i, retrieval_failure(c)) for i, c in enumerate(calls) if c["name"] == "search_documents"]
    good = [i for i, why in searches if why is None]
    terms, detail = {"rag_tool_called": 1.0 if good else 0.0}, []
    rag = weights["rag_tool_called"] * terms["rag_tool_called"]
    for p in ("volfrac",) + tested:
        exp = as_number(cond.get(f"expected_{p}"))
        if exp is None:
            raise Unscorable(f"expected.conditions.expected_{p} is not a number")
        tol = as_number(cond.get(f"expected_{p}_tolerance"))
        tol = SPEC["rag_default_tol"] if tol is None else tol
        got, at = rag_param(calls, p)
        acc = 1.0 if got is not None and abs(got - exp) <= tol else 0.0
        before = [i for i in good if at is not None and i < at]
        informed = any(passages_state(calls[i], got, tol) for i in before)
        terms[f"{p}_accuracy"] = acc
        rag += weights[p] * acc * informed
        why = ("no successful retrieval before the answer" if not before else
               f"no retrieval before the answer states {got:g} (within {tol:g})")
        detail.append(f"{p} {got!r} vs {exp:g}+-{tol:g}: {'ok' if acc else 'off'}"
                      + ("" if informed or not acc else f" (not credited: {why})"))
    terms["rag_accuracy"] = rag
    terms["overall"] = weighted(PROBLEMS[rec["problem"]]["weights"], terms)
    if not searches:
        head = "search_documents NOT called: parameter accuracy not credited; "
    else:
        bad = [f"call {i + 1}: {why}" for i, why in searches if why is not None]
        head = (f"{len(good)} successful retrieval(s) of {len(searches)} search_documents call(s)"
                + (f" ({'; '.join(bad[:3])})" if bad else "") + "; ")
    return terms, [Check(f"trial.{tid}.rag", Status.INFO, head + "; ".join(detail))]


