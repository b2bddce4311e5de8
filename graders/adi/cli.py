"""PRINTING AND CLI (a part of grade_adi.py; see CONTRIBUTING.md)."""
import json
from graders.adi.grading import grade
from graders.common.records import Report, Status
# -- end of source-tree preamble: the build keeps only what follows --
KEY_FORMATS = {     # typed key -> printed text (the rest: format_value's defaults)
    "errors_submitted": lambda v, keys: ", ".join(f"{e:.4e}" for e in v),
    "errors_regenerated": lambda v, keys: ", ".join("—" if e is None else f"{e:.4e}" for e in v),
    "hidden_errors": lambda v, keys: ", ".join("—" if e is None else f"{e:.3e}" for e in v),
}
LEADERBOARD = (("score", "score", "desc"), ("review_required", "keys.review_required", "asc"))
POSITIVE_OPTIONS = ("budget",)
OUTPUT_OPTIONS = (("json", False), ("table", False), ("out", True))
SUBMISSIONS_HELP = "directory with adi_solver.py, results.json, reference_arrays.npz"


def grade_submission(args, submission: str) -> Report:
    report = grade(submission, budget=args.budget, strict=args.strict, no_exec=args.no_exec)
    report.keys["review_required"] = sum(c.status is Status.REVIEW for c in report.checks)
    return report


def leaderboard_keys_of(checks: list, args) -> dict:
    """The ranking keys re-derived from a report's records (a merged report's keys must agree)."""
    return {"review_required": sum(c.status is Status.REVIEW for c in checks)}


# --out DIR: what this grader keeps there besides the reports (the shared help says the rest)
OUT_HELP = ""
REPORT_SCHEMA = json.loads(    # schemas/grade_adi.report.schema.json, the same document
    r'{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"grade_adi.report.schema.jso'
    r'n","title":"grade_adi report (--json)","description":"One submission graded by grade_adi.py:'
    r' every record, typed keys, the run block. With several submissions --json holds one such doc'
    r'ument per line.","type":"object","required":["grader","version","grader_sha256","submission"'
    r',"submission_sha256","submission_files","submission_bytes","checks","review","phases","keys"'
    r',"result","score","run","sandbox"],"properties":{"grader":{"const":"grade_adi"},"version":{"'
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
    r'ect","properties":{"errors_submitted":{"type":"array","items":{"type":"number"}},"fitted_ord'
    r'er":{"type":"number"},"errors_regenerated":{"type":"array","items":{"type":["number","null"]'
    r'}},"hidden_errors":{"type":"array","items":{"type":["number","null"]}},"observed_solves":{"t'
    r'ype":"array","items":{"type":"object","properties":{"run":{"type":"string"},"solves":{"type"'
    r':"integer","minimum":0}},"required":["run","solves"],"additionalProperties":false}},"review_'
    r'required":{"type":"integer","minimum":0},"adi_operator_solves":{"type":"array","items":{"typ'
    r'e":"object","properties":{"run":{"type":"string"},"solves":{"type":"integer","minimum":0}},"'
    r'required":["run","solves"],"additionalProperties":false}}},"additionalProperties":{"type":["'
    r'number","integer","boolean","string","array","object","null"]}},"result":{"enum":["PASS","PA'
    r'RTIAL","FAIL","UNGRADED"]},"score":{"type":["number","null"],"minimum":0,"maximum":1},"run":'
    r'{"type":"object","properties":{"options":{"type":"object"},"exit_code":{"enum":[0,1,2,3,130]'
    r'},"started":{"type":"string","pattern":"^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$"},"wall'
    r'_s":{"type":"number","minimum":0},"python":{"type":"string"},"numpy":{"type":["string","null'
    r'"]},"scipy":{"type":["string","null"]},"h5py":{"type":["string","null"]},"platform":{"type":'
    r'"string"},"sandbox":{"type":"object"}},"required":["options","exit_code","started","wall_s",'
    r'"python","numpy","scipy","h5py","platform","sandbox"],"additionalProperties":false},"sandbox'
    r'":{"type":"object","description":"sandbox_level() of the runner (the same as run.sandbox); {'
    r'\"available\": false} where no code runs or the runner does not report it"},"signature":{"ty'
    r'pe":"string","pattern":"^hmac-sha256:[0-9a-f]{64}$","description":"with --sign KEYFILE: HMAC'
    r'-SHA256 keyed by the bytes of KEYFILE over this document without its signature, as JSON with'
    r' sorted keys, no spaces, ASCII only; --merge --sign refuses a report without a matching one"'
    r'}},"additionalProperties":false,"allOf":[{"if":{"properties":{"result":{"const":"UNGRADED"}}'
    r'},"then":{"properties":{"score":{"type":"null"}}},"else":{"properties":{"score":{"type":"num'
    r'ber"}}}}]}')
