"""THE FOUR FAMILIES (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import dataclasses
from graders.common.records import Check, Reject, Status, _jsonable
from graders.engiai.guarded import as_number, get_path, short
from graders.engiai.spec import PROBLEMS, SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# THE FOUR FAMILIES: trial record and trace
# =============================================================================
@dataclasses.dataclass
class Trial:
    """One graded trial: where it sits in the table and what came out of it."""
    trial_id: str
    problem: str | None = None
    style: str | None = None
    status: str = "invalid"       # scored | unscorable | unsupported | invalid | filtered
    score: float | None = None
    terms: dict = dataclasses.field(default_factory=dict)
    reasons: list = dataclasses.field(default_factory=list)
    claims: dict = dataclasses.field(default_factory=dict)
    content_sha256: str | None = None  # of what is scored: trace, arrays, STL (duplicate detection)
    # (grade_trial also sets `content`, the scored content itself for the near-copy comparison,
    # as a plain attribute: it holds arrays and is no part of the report)
    artefact_none: bool = False        # score None because of the agent's own artefact (SCORE 0.0)
    key: tuple | None = None           # (problem, style, example_id, seed): its harness manifest entry

    def as_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))


class Unscorable(Exception):
    """A harness-side gap (no ground truth, no baseline, no usable MMD, missing expectation):
    the term is None with this reason, never 0 and never 1.  `artefact=True` when the None
    comes from the agent's own artefact (samples absent, unreadable, non-finite, misshapen: the
    seed's "no usable MMD"): the trial stays None, but its cell counts 0.0 in the SCORE, or
    breaking one's own samples would lift the SCORE (TRIAL_FORMAT.md decision 16)."""

    def __init__(self, message: str, *, artefact: bool = False):
        super().__init__(message)
        self.artefact = artefact


def parse_trace(rec: dict, tid: str) -> tuple:
    """(calls, checks): the tool trace as a list of {name, args, result} dicts."""
    cid = f"trial.{tid}.trace"
    calls = get_path(rec, ("tool_calls",), cid)
    if not isinstance(calls, list):
        raise Reject(cid, "trial.json: tool_calls must be a list")
    if len(calls) > SPEC["max_tool_calls"]:
        raise Reject(cid, f"trial.json: {len(calls)} tool calls", len(calls), SPEC["max_tool_calls"])
    out = []
    for i, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise Reject(cid, f"trial.json: tool_calls[{i}] is not an object with a string name")
        args = c.get("args", {})
        result = c.get("result")
        if not isinstance(args, dict):
            raise Reject(cid, f"trial.json: tool_calls[{i}].args must be an object")
        if result is not None and not isinstance(result, dict):
            raise Reject(cid, f"trial.json: tool_calls[{i}].result must be an object or null")
        out.append({"name": c["name"], "args": args, "result": result or {}})
    return out


def trace_checks(calls: list, problem: str, tid: str) -> list:
    """Unknown tool names: counted as calls, flagged for review."""
    known = set(PROBLEMS[problem]["tools"])
    unknown = sorted({c["name"] for c in calls if c["name"] not in known})
    if unknown:
        return [Check(f"trial.{tid}.unknown_tools", Status.REVIEW,
                      f"tool(s) outside the {PROBLEMS[problem]['family']} tool set: "
                      f"{', '.join(repr(u[:40]) for u in unknown)} (counted as calls)", unknown)]
    return []


def weighted(weights: dict, terms: dict) -> float:
    """sum of weight * term over a registry weight table."""
    return sum(w * terms[k] for k, w in weights.items())


def succeeded(call: dict) -> bool:
    """A tool call whose recorded result says success: true (exactly the JSON true)."""
    return call["result"].get("success") is True


# Outcomes, not calls (issue 24): a workflow step counts only when its tool call succeeded and,
# for a SLURM job, when the job reached a completed state; read the same way in the HPC and the
# training-code families.  A recovered failure (diagnose_job_failure, resubmit, complete) completes.
def job_id_of(value):
    """A job id as text ('81234' and 81234 are one id), or None when empty or not a scalar."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()[:200]
    return text or None


def submitted_jobs(calls: list) -> list:
    """(call index, job id) of every successful submit_slurm_job that returned a job id."""
    return [(i, job_id_of(c["result"].get("job_id"))) for i, c in enumerate(calls)
            if c["name"] == "submit_slurm_job" and succeeded(c)
            and job_id_of(c["result"].get("job_id")) is not None]


def job_completed(calls: list) -> bool:
    """Some successful monitor_job_until_complete reported state COMPLETED for a job submitted
    before it (the job it names, or any when it names none)."""
    jobs = submitted_jobs(calls)
    for i, c in enumerate(calls):
        state = c["result"].get("state")
        if c["name"] != "monitor_job_until_complete" or not succeeded(c) or \
                not isinstance(state, str) or state.strip().upper() != "COMPLETED":
            continue    # SLURM writes COMPLETED; a tool echoing "Completed" means the same state
        named = c["args"].get("job_id", c["result"].get("job_id"))
        before = {j for k, j in jobs if k < i}
        if before and (named is None or job_id_of(named) in before):
            return True
    return False


def evaluation_calls(calls: list) -> list:
    """Successful model evaluations: evaluate_model, or execute_cli_command running
    engiopt.*.evaluate_* (public HPC scorer)."""
    return [c for c in calls if succeeded(c) and (
        c["name"] == "evaluate_model" or
        (c["name"] == "execute_cli_command" and isinstance(c["args"].get("command"), str)
         and "engiopt." in c["args"]["command"] and ".evaluate_" in c["args"]["command"]))]


def tool_efficiency(calls: list, optimal: tuple) -> float:
    """spec: min(1, optimal / actual), 0 with no calls."""
    return min(1.0, len(optimal) / len(calls)) if calls else 0.0


def optimal_count_check(rec: dict, optimal: tuple, tid: str) -> list:
    """A trial's own optimal_call_count is reported against the registry's, never used."""
    claimed = rec.get("optimal_call_count")
    if claimed is None or as_number(claimed) == len(optimal):
        return []
    shown = short(claimed, as_repr=True)
    return [Check(f"trial.{tid}.optimal_calls", Status.INFO,
                  f"trial records optimal_call_count={shown}; the registry's is {len(optimal)} "
                  f"({' > '.join(optimal)}), which is used",
                  as_number(claimed) if as_number(claimed) is not None else shown, len(optimal))]


