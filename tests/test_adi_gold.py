"""The gold submission scores 1.0 end to end (grader copied alone, as users run
it); the submission is never modified; --no-exec is UNGRADED; --help works."""
import hashlib
import shutil
import subprocess
import sys

import numpy as np

from conftest import verdict_lines
from test_adi_support import GOLD, GRADER, gold_grade, grader, make_gold, read_arrays, status


def _tree_hash(path):
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def test_gold_scores_full_and_is_untouched(tmp_path_factory):
    before = _tree_hash(GOLD)
    rc, stdout, stderr, doc = gold_grade(str(tmp_path_factory.mktemp("adi_gold")))
    assert "Traceback" not in stderr
    v = verdict_lines(stdout)
    assert rc == 0 and v["RESULT"] == "PASS" and v["SCORE"] == "1.0", stdout
    assert doc["score"] == 1.0 and doc["result"] == "PASS"
    assert all(c["status"] == "PASS" for c in doc["checks"] if c["id"] not in ("sandbox.isolation",
                                                                            "hidden.instance")), \
        [c for c in doc["checks"] if c["status"] != "PASS"]
    st = status(doc)
    for cid in ("schema.eoc", "sidecar.convergence_table", "tier2.fitted_order", "tier3.U_pointwise",
                "provenance.regen[h=0.1]", "provenance.regen[h=0.00625]", "hidden.error[h=0.1]",
                "hidden.drop", "audit.causal", "structure.dimension", "structure.bandwidth"):
        assert st[cid] == "PASS", cid
    assert st["hidden.instance"] == "INFO"      # the drawn instance, reported for reproduction
    assert _tree_hash(GOLD) == before


def test_gold_outputs_regenerate_from_the_gold_solver():
    mg = make_gold()
    errs, finest = mg.study(mg.load_solver(str(GOLD)))
    arrays = read_arrays(GOLD)
    np.testing.assert_allclose(errs, arrays["max_norm_errors"], rtol=1e-12)
    np.testing.assert_allclose(finest[2], arrays["U_finest"], rtol=1e-12, atol=1e-15)


def test_no_exec_is_ungraded_without_score():
    proc = subprocess.run([sys.executable, str(GRADER), str(GOLD), "--no-exec"], capture_output=True,
                          text=True, timeout=120)
    v = verdict_lines(proc.stdout)
    assert proc.returncode == 2 and v["RESULT"] == "UNGRADED" and "SCORE" not in v
    assert "SKIP  provenance.exec" in proc.stdout


def test_help_from_a_lone_copy(tmp_path):
    shutil.copyfile(GRADER, tmp_path / "grade.py")
    proc = subprocess.run([sys.executable, "grade.py", "--help"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    for opt in ("--budget", "--strict", "--no-exec", "--json", "--quiet", "exit codes"):
        assert opt in proc.stdout


def test_verdict_is_a_pure_function_of_records():
    G = grader()
    P, F, R = G.Status.PASS, G.Status.FAIL, G.Status.REVIEW
    ok = [G.Check("tier2.reduction", P, ""), G.Check("tier3.grid", P, "")]
    assert G.verdict(ok, strict=False, no_exec=False) == ("PASS", 1.0)
    assert G.verdict(ok, strict=False, no_exec=True) == ("UNGRADED", None)
    assert G.verdict(ok + [G.Check("tier3.U_pointwise", F, "")], strict=False, no_exec=False) == \
        ("PARTIAL", 0.5)
    assert G.verdict(ok + [G.Check("provenance.regen[h=0.1]", F, "")], strict=False,
                     no_exec=False) == ("FAIL", 0.0)
    rev = ok + [G.Check("structure.unobserved[x]", R, "")]
    assert G.verdict(rev, strict=False, no_exec=False) == ("PASS", 1.0)
    assert G.verdict(rev, strict=True, no_exec=False) == ("FAIL", 0.0)
