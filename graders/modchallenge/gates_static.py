"""1. WHAT THE HARNESS SCORES (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
import os
import re
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Status, guarded
from graders.modchallenge.guarded import _plain_int
from graders.modchallenge.spec import SPEC, UNSCANNED_CODE_SUFFIXES
from graders.modchallenge.static import static_scan, submission_files
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# 1. WHAT THE HARNESS SCORES: gates 1-3 (manifest, artifact size, static analysis)
# =============================================================================
@guarded
def check_manifest(sub: str):
    """Gate 1: a well-formed manifest.json (spec: the manifest)."""
    cid = "g1.manifest"
    m = read_json_file(os.path.join(sub, "manifest.json"), cid, SPEC["max_manifest_bytes"])
    if not isinstance(m, dict):
        raise Reject(cid, f"manifest.json must be a JSON object, got {type(m).__name__}")
    ec = m.get("entry_class")
    if not isinstance(ec, str) or not re.fullmatch(SPEC["entry_class_re"], ec):
        raise Reject(cid, f"entry_class must be a dotted path 'module.Class', got {ec!r}"[:200])
    base = m.get("output_base")
    if isinstance(base, str):
        if base != "p":
            raise Reject(cid, f"output_base string must be \"p\", got {base!r}"[:200])
    elif not _plain_int(base) or not 2 <= base <= SPEC["max_output_base"]:
        raise Reject(cid, f"output_base must be an integer in [2, 2^32] or \"p\", got {base!r}"[:200],
                     base, [2, SPEC["max_output_base"]])
    for key in ("model_description", "training_description"):
        if not isinstance(m.get(key), str) or not m[key]:
            raise Reject(cid, f"{key} must be a non-empty string")
    if "framework" in m and not isinstance(m["framework"], str):
        raise Reject(cid, "framework must be a string when present")
    return Check(cid, Status.PASS, f"entry_class={ec}, output_base={base}",
                 {"entry_class": ec, "output_base": base})


def check_artifact_size(sub: str) -> list:
    """Gate 2: total size of the submission's regular files <= 20 GiB."""
    total = sum(os.path.getsize(p) for p in submission_files(sub))
    msg = f"{total / 1024 ** 3:.2f} GiB ({total} bytes)"
    if total > SPEC["max_artifact_bytes"]:
        return [Check("g2.artifact_size", Status.FAIL, msg + " exceeds 20 GiB", total,
                      SPEC["max_artifact_bytes"])]
    return [Check("g2.artifact_size", Status.PASS, msg + " <= 20 GiB", total, SPEC["max_artifact_bytes"])]


def check_static(sub: str, skip: bool, digests: dict | None = None) -> list:
    """Gate 3: zero static-analysis findings (`digests`: see static_scan)."""
    if skip:
        return [Check("g3.static_check", Status.SKIP, "skipped by --skip-static-check (trusted use)")]
    found, reviews, encodings = static_scan(sub, digests)
    if found:
        shown = "; ".join(f"{f}:{ln} [{rule}] {msg}" for f, ln, rule, msg in found[:6])
        more = f" (+{len(found) - 6} more)" if len(found) > 6 else ""
        out = [Check("g3.static_check", Status.FAIL, f"{len(found)} finding(s): {shown}{more}",
                     [list(f) for f in found], 0)]
    else:
        out = [Check("g3.static_check", Status.PASS, "0 findings", 0, 0)]
    if encodings:
        out.append(Check("g3.source_encoding", Status.REVIEW,
                         f"{len(encodings)} file(s) declare a source encoding other than UTF-8 "
                         f"(scanned as Python decodes them; the harness's UTF-8 reading sees other "
                         f"text): " + ", ".join(f"{f} ({e})" for f, e in encodings[:5]),
                         [list(e) for e in encodings]))
    if reviews:
        shown = "; ".join(f"{f}:{ln} {msg}" for f, ln, _, msg in reviews[:6])
        more = f" (+{len(reviews) - 6} more)" if len(reviews) > 6 else ""
        out.append(Check("g3.escape_hatch", Status.REVIEW,
                         f"{len(reviews)} use(s) of an escape hatch outside the harness's rules "
                         f"(no finding; review by hand): {shown}{more}", [list(r) for r in reviews]))
    hidden = [os.path.relpath(p, sub) for p in submission_files(sub)
              if p.lower().endswith(UNSCANNED_CODE_SUFFIXES)]
    if hidden:
        out.append(Check("g3.unscanned_code", Status.REVIEW,
                         f"{len(hidden)} compiled code file(s) the static scan cannot read "
                         f"(importable; review them by hand): {', '.join(hidden[:5])}"
                         f"{' ...' if len(hidden) > 5 else ''}", hidden))
    return out


