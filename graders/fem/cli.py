"""PRINTING AND CLI (a part of grade_fem.py; see CONTRIBUTING.md)."""
import json
from graders.common.records import Report, Status
from graders.fem.grading import grade
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "e_star_n(32)": lambda v, keys: f"{v:.6e}",
    "dense_orders_clean": lambda v, keys: " ".join(f"{b:.3f}" for b in v),
    "nodal_error(32)": lambda v, keys: f"{v:.3e}",
    "solve_entry_points": lambda v, keys: ", ".join(v) or "none observed",
    "artifact_deviation": lambda v, keys: f"{v:.3e}",
}
LEADERBOARD = (("score", "score", "desc"), ("review_required", "keys.review_required", "asc"))
POSITIVE_OPTIONS = ("budget",)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))
SUBMISSIONS_HELP = "directory with fem_solver.py, results.json, reference_arrays.npz"


def grade_submission(args, submission: str) -> Report:
    return grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    return {"review_required": sum(c.status is Status.REVIEW for c in checks)}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ""
REPORT_SCHEMA = json.loads(    # schemas/grade_fem.report.schema.json, the same document
    r'{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"grade_fem.report.schema.jso'
    r'n","title":"grade_fem report (--json)","description":"One submission graded by grade_fem.py:'
    r' every record, typed keys, the run block. With several submissions --json holds one such doc'
    r'ument per line.","type":"object","required":["grader","version","grader_sha256","submission"'
    r',"submission_sha256","submission_files","submission_bytes","checks","review","phases","keys"'
    r',"result","score","run","sandbox"],"properties":{"grader":{"const":"grade_fem"},"version":{"'
    r'type":"string","pattern":"^\\d+\\.\\d+\\.\\d+"},"grader_sha256":{"type":"string","pattern":"'
    r'^[0-9a-f]{64}$"},"submission":{"type":"string"},"label":{"type":"string","minLength":1,"patt'
    r'ern":"^[^\\u0000-\\u001f\\u007f]+$","description":"the row name given with --label (else the'
    r' leaderboard names the row by the shortest path suffix that tells it apart)"},"submission_sh'
    r'a256":{"type":["string","null"],"pattern":"^[0-9a-f]{64}$"},"submission_files":{"type":"inte'
    r'ger","minimum":0},"submission_bytes":{"type":"integer","minimum":0},"checks":{"type":"array"'
    r',"items":{"type":"object","required":["id","status","message","measured","limit"],"additiona'
    r'lProperties":false,"properties":{"id":{"type":"string","minLength":1},"status":{"enum":["PAS'
    r'S","FAIL","REVIEW","SKIP","INFO"]},"message":{"type":"string"},"measured":{},"limit":{}}}},"'
    r'review":{"type":"array","items":{"type":"object","required":["id","status","message","measur'
    r'ed","limit"],"additionalProperties":false,"properties":{"id":{"type":"string","minLength":1}'
    r',"status":{"const":"REVIEW"},"message":{"type":"string"},"measured":{},"limit":{}}}},"phases'
    r'":{"type":"object","additionalProperties":{"type":"number","minimum":0}},"keys":{"type":"obj'
    r'ect","properties":{"e_star_n(32)":{"type":"number"},"dense_orders_clean":{"type":"array","it'
    r'ems":{"type":"number"}},"nodal_error(32)":{"type":"number"},"solve_entry_points":{"type":"ar'
    r'ray","items":{"type":"string"}},"artifact_deviation":{"type":"number"},"review_required":{"t'
    r'ype":"integer","minimum":0}},"additionalProperties":{"type":["number","integer","boolean","s'
    r'tring","array","object","null"]}},"result":{"enum":["PASS","PARTIAL","FAIL","UNGRADED"]},"sc'
    r'ore":{"type":["number","null"],"minimum":0,"maximum":1},"run":{"type":"object","properties":'
    r'{"options":{"type":"object"},"exit_code":{"enum":[0,1,2,3,130]},"started":{"type":"string","'
    r'pattern":"^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$"},"wall_s":{"type":"number","minimum"'
    r':0},"python":{"type":"string"},"numpy":{"type":["string","null"]},"scipy":{"type":["string",'
    r'"null"]},"h5py":{"type":["string","null"]},"platform":{"type":"string"},"sandbox":{"type":"o'
    r'bject"}},"required":["options","exit_code","started","wall_s","python","numpy","scipy","h5py'
    r'","platform","sandbox"],"additionalProperties":false},"sandbox":{"type":"object","descriptio'
    r'n":"sandbox_level() of the runner (the same as run.sandbox); {\"available\": false} where no'
    r' code runs or the runner does not report it"},"signature":{"type":"string","pattern":"^hmac-'
    r'sha256:[0-9a-f]{64}$","description":"with --sign KEYFILE: HMAC-SHA256 keyed by the bytes of '
    r'KEYFILE over this document without its signature, as JSON with sorted keys, no spaces, ASCII'
    r' only; --merge --sign refuses a report without a matching one"}},"additionalProperties":fals'
    r'e,"allOf":[{"if":{"properties":{"result":{"const":"UNGRADED"}}},"then":{"properties":{"score'
    r'":{"type":"null"}}},"else":{"properties":{"score":{"type":"number"}}}}]}')
