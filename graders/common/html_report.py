"""REPORTS: --html PATH, one self-contained HTML file (a part of every grader; see
CONTRIBUTING.md).  Written with the standard library from the JSON report documents, so a single
grading, several and --merge give the same page.  Everything shown is escaped text; the page
carries a Content-Security-Policy that allows no script, no network and only inline images, so
a check message or a submission name that holds markup stays text, and opens from disk."""
import base64
import html
import os
from graders.common.bench import GRADER_NAME, GRADER_VERSION, LEADERBOARD
from graders.common.reports import (_cell, format_value, leaderboard, leaderboard_columns,
    row_labels)
# -- end of source-tree preamble: the build keeps only what follows --
HTML_STATUS_ORDER = {"FAIL": 0, "REVIEW": 1, "PASS": 2, "SKIP": 3, "INFO": 4}
HTML_FIGURE_MAX_BYTES = 8 << 20     # a figure larger than this is listed, not inlined
HTML_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em} h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0} td,th{border:1px solid #ddd;padding:2px 8px;
text-align:left;vertical-align:top} th{background:#f3f3f3} .num{text-align:right}
.FAIL{color:#b71c1c;font-weight:600} .REVIEW{color:#e65100;font-weight:600} .PASS{color:#2e7d32}
.SKIP,.INFO{color:#555} .res-PASS{background:#e8f5e9} .res-PARTIAL{background:#fff3e0}
.res-FAIL{background:#ffebee} .res-UNGRADED,.res-SUBSET{background:#eeeeee}
.overlap{color:#6a1b9a} details{margin:.3em 0} summary{cursor:pointer;font-weight:600}
.msg{white-space:pre-wrap;word-break:break-word} img{max-width:min(100%,640px);border:1px solid #ddd}
.note{color:#555;font-size:.9em}
"""


def _h(value) -> str:
    """Any value as escaped text (quotes too: safe inside attributes)."""
    return html.escape(str(value), quote=True)


def _html_value(key: str, value, keys: dict) -> str:
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        columns = list(dict.fromkeys(k for row in value for k in row))
        head = "".join(f"<th>{_h(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{_h(_cell(r.get(c)))}</td>" for c in columns) + "</tr>"
                       for r in value)
        return f"<table><tr>{head}</tr>{body}</table>"
    try:
        return _h(format_value(key, value, keys))
    except Exception:           # a merged report's value of an unexpected type: shown as stored
        return _h(value)


def _html_phase(check_id: str) -> str:
    return str(check_id).split(".", 1)[0] or "?"


def _html_check(c: dict) -> dict:
    """A record of a report document (possibly merged from elsewhere) as plain strings."""
    return {"id": str(c.get("id", "")), "status": str(c.get("status", "")),
            "message": str(c.get("message", "")), "measured": c.get("measured")}


def _html_figure(check: dict) -> str:
    """A figure record's PNG inlined (base64), or a line saying why not: only a `figure.<name>`
    record whose file is named <name>.png (as write_figures names it), a PNG, at most
    HTML_FIGURE_MAX_BYTES (a merged report cannot have other files of this disk inlined)."""
    path = check.get("measured")
    name = _h(check["id"])
    if not isinstance(path, str):
        return ""
    if os.path.basename(path) != check["id"][len("figure."):] + ".png":
        return f"<p class='note'>{name}: {_h(path)} is not this figure's file</p>"
    try:
        with open(path, "rb") as fh:
            data = fh.read(HTML_FIGURE_MAX_BYTES + 1)
    except OSError:
        return f"<p class='note'>{name}: {_h(path)} not found (figures are files beside the report)</p>"
    if len(data) > HTML_FIGURE_MAX_BYTES or not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return f"<p class='note'>{name}: {_h(path)} is not a PNG of at most {HTML_FIGURE_MAX_BYTES >> 20} MB</p>"
    return (f"<figure><img alt='{name}' src='data:image/png;base64,"
            f"{base64.b64encode(data).decode('ascii')}'><figcaption>{name}: "
            f"{_h(check.get('message', ''))}</figcaption></figure>")


def _html_submission(i: int, doc: dict, name: str) -> str:
    checks = doc.get("checks") if isinstance(doc.get("checks"), list) else []
    checks = [_html_check(c) for c in checks if isinstance(c, dict)]
    result, score = doc.get("result"), doc.get("score")
    counts = {s: sum(c.get("status") == s for c in checks) for s in HTML_STATUS_ORDER}
    out = [f"<h2 id='sub-{i}'>{_h(name)} <span class='res-{_h(result)}'>RESULT: {_h(result)}"
           + (f", SCORE: {_h(score)}" if score is not None else "") + "</span></h2>",
           f"<p class='note'>{_h(doc.get('submission'))} · sha256 {_h(doc.get('submission_sha256'))} · "
           + ", ".join(f"{s.lower()}={n}" for s, n in counts.items()) + "</p>"]
    keys = doc.get("keys") if isinstance(doc.get("keys"), dict) else {}
    if keys:
        out.append("<details open><summary>keys</summary><table>" + "".join(
            f"<tr><th>{_h(k)}</th><td>{_html_value(k, v, keys)}</td></tr>" for k, v in keys.items())
            + "</table></details>")
    phases = {}
    for c in checks:
        if not c["id"].startswith("figure."):
            phases.setdefault(_html_phase(c["id"]), []).append(c)
    def worst(cs):
        return min(HTML_STATUS_ORDER.get(c.get("status"), 9) for c in cs)
    for phase, cs in sorted(phases.items(), key=lambda kv: worst(kv[1])):
        cs = sorted(cs, key=lambda c: HTML_STATUS_ORDER.get(c.get("status"), 9))
        bad = sum(c.get("status") in ("FAIL", "REVIEW") for c in cs)
        rows = "".join(f"<tr class='rec'><td class='{_h(c.get('status'))}'>{_h(c.get('status'))}</td>"
                       f"<td>{_h(c.get('id'))}</td><td class='msg'>{_h(c.get('message'))}</td></tr>"
                       for c in cs)
        out.append(f"<details{' open' if bad else ''}><summary>{_h(phase)} ({len(cs)} record"
                   f"{'s' if len(cs) != 1 else ''}{f', {bad} FAIL/REVIEW' if bad else ''})</summary>"
                   f"<table><tr><th>status</th><th>id</th><th>message</th></tr>{rows}</table></details>")
    figures = [_html_figure(c) for c in checks if c["id"].startswith("figure.")]
    if figures:
        out.append("<details open><summary>figures</summary>" + "".join(figures) + "</details>")
    return "\n".join(out)


def write_html(path: str, docs: list) -> None:
    """--html PATH: the leaderboard, then each submission's keys, records by phase (phases with
    FAIL / REVIEW first and open, FAIL then REVIEW first within a phase) and figures."""
    rows = leaderboard(docs) if docs else []
    columns = leaderboard_columns(rows)
    labels = row_labels(docs)                  # the leaderboard's own row names
    names = {}
    for i, label in enumerate(labels):
        names.setdefault(label, i)
    lead = ["<table id='leaderboard'><tr>" + "".join(f"<th>{_h(c)}</th>" for c in columns) + "</tr>"]
    for r in rows:
        cells = []
        for c in columns:
            text = _h(_cell(r.get(c)))
            if c == "submission" and r.get(c) in names:
                text = f"<a href='#sub-{names[r[c]]}'>{text}</a>"
            cls = f" class='res-{_h(r.get(c))}'" if c == "result" else \
                " class='overlap'" if c == "overlaps_above" and r.get(c) else ""
            cells.append(f"<td{cls}>{text}</td>")
        lead.append("<tr>" + "".join(cells) + "</tr>")
    lead.append("</table>")
    if any(r.get("overlaps_above") for r in rows):
        lead.append("<p class='note'>overlaps_above true: the row's 95 % interval overlaps the row "
                    "above's; their order is not resolved by the units graded.</p>")
    title = f"{GRADER_NAME} report: {len(docs)} submission{'s' if len(docs) != 1 else ''}"
    page = ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            "img-src data:; style-src 'unsafe-inline'\">"
            f"<title>{_h(title)}</title><style>{HTML_CSS}</style></head><body>"
            f"<h1>{_h(title)}</h1><p class='note'>{_h(GRADER_NAME)} {_h(GRADER_VERSION)}; "
            "ranked by " + _h(", then ".join(c for c, _, _ in LEADERBOARD)) + "</p>"
            "<h2>leaderboard</h2>" + "\n".join(lead)
            + "".join(_html_submission(i, d, label) for i, (d, label) in enumerate(zip(docs, labels)))
            + ("" if docs else "<p>no report (nothing was graded)</p>") + "</body></html>\n")
    with open(path, "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(page)
