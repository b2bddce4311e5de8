"""--html PATH (issue 26 item 5): one self-contained page (no script, no network: a CSP forbids
both), the leaderboard, each submission's records by phase with FAIL / REVIEW first, its keys
and its figures inlined.  Rendered in headless Chromium (skipped cleanly where it is not
installed): no console message from the page, the leaderboard and a FAIL record visible; the
screenshot is kept in tmp_path."""
import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REFERENCE, REPO
from test_reports_support import grader

INJECT = "<img src=x onerror=console.error(1)>"      # a submission's name (no slash: a file name)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("headless Chromium is not installed (apt-get install chromium)")


def fake_doc(name, status, message, figure=None):
    checks = [{"id": "tier1.band", "status": "PASS", "message": "fine", "measured": None, "limit": None},
              {"id": "tier2.order", "status": status, "message": message, "measured": None, "limit": None}]
    if figure:
        checks.append({"id": "figure.x", "status": "INFO", "message": "fig", "measured": str(figure), "limit": None})
    return {"grader": "grade_fem", "submission": f"/s/{name}", "submission_sha256": "ab" * 32,
            "result": "FAIL", "score": 0.0, "checks": checks, "keys": {"note": message, "review_required": 0}}


def test_every_text_is_escaped_and_nothing_but_pngs_is_inlined(tmp_path):
    G = grader("fem")
    attack = "</td></table><script>alert(1)</script><a href='http://evil/'>x</a>\"'&"
    secret = tmp_path / "x.png"                     # the right name, not a PNG
    secret.write_text("TOP SECRET")
    docs = [fake_doc(attack, "FAIL", attack, figure=secret), fake_doc("b", "REVIEW", "m")]
    G.write_html(str(tmp_path / "r.html"), docs)
    page = (tmp_path / "r.html").read_text()
    assert "<script" not in page and "<a href='http" not in page and attack not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "TOP SECRET" not in page and "VE9QIFNFQ1JFVA" not in page       # nor its base64
    assert "is not a PNG" in page
    assert "default-src 'none'" in page                 # no script, no fetch: the CSP
    assert not re.search(r"(src|href)=['\"](?!data:image/png;base64,|#sub-)", page)


def test_a_crafted_merged_report_is_shown_not_obeyed(tmp_path):
    """--merge reads reports written elsewhere: odd types stay text, and a figure record cannot
    have another PNG of this disk inlined (only <name>.png for figure.<name>)."""
    G = grader("fem")
    png = tmp_path / "holiday.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"private" * 10)
    doc = fake_doc("m", "FAIL", "x")
    doc["checks"] += [{"id": "figure.x", "status": ["FAIL"], "message": {"a": 1}, "measured": str(png)},
                      {"id": 7, "status": None, "message": None}, "not a record"]
    doc["keys"] = {"note": ["<b>", 1], "review_required": "<i>"}
    G.write_html(str(tmp_path / "r.html"), [doc])
    page = (tmp_path / "r.html").read_text()
    assert "holiday.png is not this figure's file" in page and "data:image/png" not in page
    assert "<b>" not in page and "<i>" not in page


def test_records_are_grouped_by_phase_with_failures_first(tmp_path):
    G = grader("fem")
    G.write_html(str(tmp_path / "r.html"), [fake_doc("a", "FAIL", "broken")])
    page = (tmp_path / "r.html").read_text()
    assert page.index("<summary>tier2") < page.index("<summary>tier1")     # the phase with a FAIL first
    assert "<details open><summary>tier2" in page and "<details><summary>tier1" in page


def render(html_path, tmp_path):
    """(console lines from the page, the wrapper's CHECK result, screenshot path)."""
    wrapper = tmp_path / "wrapper.html"
    wrapper.write_text(
        "<!doctype html><html><body><iframe id='r' src='" + html_path.as_uri() + "' "
        "style='width:1260px;height:2000px;border:0'></iframe><script>"
        "document.getElementById('r').onload = function () { var d = this.contentDocument;"
        "var vis = function (e) { return !!e && e.checkVisibility() && e.getBoundingClientRect().height > 0; };"
        "var fail = d.querySelector('tr.rec td.FAIL');"
        "console.log('CHECK ' + JSON.stringify({leaderboard: vis(d.getElementById('leaderboard')),"
        " fail: vis(fail), failtext: fail ? fail.parentNode.textContent : null,"
        " scripts: d.scripts.length})); };</script></body></html>")
    common = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
              "--virtual-time-budget=4000"]
    proc = subprocess.run(common + ["--allow-file-access-from-files", wrapper.as_uri()],
                          capture_output=True, text=True, timeout=120)
    shot = tmp_path / "report.png"
    subprocess.run(common + [f"--screenshot={shot}", "--window-size=1280,2000", html_path.as_uri()],
                   capture_output=True, text=True, timeout=120)
    console = [l for l in proc.stderr.splitlines() if "CONSOLE" in l]
    check = [json.loads(l.split("CHECK ", 1)[1].rsplit('", source', 1)[0].replace('\\"', '"'))
             for l in console if "CHECK " in l]
    from_page = [l for l in console if f"source: {html_path.as_uri()}" in l]
    return from_page, check, shot


def test_three_fem_submissions_render_in_chromium(tmp_path):
    chromium()
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copytree(REFERENCE / "fem" / "gold", subs / "gold")
    shutil.copytree(REFERENCE / "fem" / "variants" / "midpoint", subs / "midpoint")
    shutil.copytree(REFERENCE / "fem" / "variants" / "slopes_dropped", subs / INJECT)
    out = tmp_path / "report.html"
    import importlib.util
    plot = ["--plot", str(tmp_path / "figs")] if importlib.util.find_spec("matplotlib") else []
    proc = subprocess.run([sys.executable, str(REPO / "grade_fem.py"), *sorted(map(str, subs.iterdir())),
                           "--jobs", "2", "--quiet", "--html", str(out), *plot],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr[-2000:]
    page = out.read_text()
    assert INJECT not in page and "&lt;img src=x onerror=console.error(1)&gt;" in page
    assert "<script" not in page and not re.search(r"https?://", page)       # nothing fetched
    if plot:
        assert page.count("data:image/png;base64,") >= 6        # two figures each
    from_page, check, shot = render(out, tmp_path)
    assert from_page == [], from_page                    # no console message, no CSP violation
    assert check and check[0]["leaderboard"] and check[0]["fail"] and check[0]["scripts"] == 0, check
    assert "FAIL" in check[0]["failtext"]
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_the_render_check_can_fail(tmp_path):
    """The harness sees a page's console messages and a hidden FAIL record (so the test above
    can fail)."""
    chromium()
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><html><body><table id='leaderboard'><tr><td>x</td></tr></table>"
                    "<details><summary>p</summary><table><tr class='rec'><td class='FAIL'>FAIL</td></tr>"
                    "</table></details><script>console.error('boom')</script></body></html>")
    from_page, check, shot = render(page, tmp_path)
    assert any("boom" in l for l in from_page)
    assert check and check[0]["leaderboard"] and not check[0]["fail"]
