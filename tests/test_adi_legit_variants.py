"""Honest variants of the gold stay at 1.0 with no review line: line solves
spread over threads (every one of them recorded, in whichever thread), and a
factor-once LAPACK gttrf/gttrs solver (the factor's class -- an ADI operator --
carries over to every gttrs).  Also at 1.0 elsewhere: solve_banded (the gold,
test_adi_gold.py), direct LAPACK dgtsv (test_adi_exploit_lapack.py), splu and
lu_factor/lu_solve (test_adi_instrumentation.py); a hand-written Thomas solver
is REVIEW (test_adi_exploit_thomas.py)."""
import pytest

from test_adi_support import grade, gold_variant_source, reviews, status, submission_from_solver


def threaded_source() -> str:
    src = gold_variant_source("from scipy.linalg import solve_banded",
                              "import concurrent.futures as cf\nfrom scipy.linalg import solve_banded")
    src = src.replace("    def implicit(rhs, t, axis):", '''    pool = cf.ThreadPoolExecutor(4)

    def lines(ab, R):
        """The columns of R (independent grid lines) in four batches, one per thread."""
        parts = np.array_split(np.arange(R.shape[1]), 4)
        return np.concatenate(list(pool.map(lambda i: solve_banded((1, 1), ab, R[:, i]), parts)), axis=1)

    def implicit(rhs, t, axis):''')
    src = src.replace('solve_banded((1, 1), bands["x"], rhs)', 'lines(bands["x"], rhs)')
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T', 'lines(bands["y"], rhs.T).T')
    return src.replace("    return X, Y, U", "    pool.shutdown()\n    return X, Y, U")


def gttrf_source() -> str:
    src = gold_variant_source("from scipy.linalg import solve_banded",
                              "from scipy.linalg.lapack import dgttrf, dgttrs")
    src = src.replace("    def implicit(rhs, t, axis):", '''    fac = {key: dgttrf(ab[2, :-1], ab[1], ab[0, 1:])[:5] for key, ab in bands.items()}

    def implicit(rhs, t, axis):''')
    src = src.replace('solve_banded((1, 1), bands["x"], rhs)', 'dgttrs(*fac["x"], rhs)[0]')
    src = src.replace('solve_banded((1, 1), bands["y"], rhs.T).T', 'dgttrs(*fac["y"], rhs.T)[0].T')
    return src


def _counts(doc, key):
    return {row["run"]: row["solves"] for row in doc["keys"][key]}


@pytest.mark.parametrize("variant,per_step,factors", [("threaded", 16, 0), ("gttrf_gttrs", 4, 2)])
def test_honest_variant_scores_one_without_review(tmp_path, variant, per_step, factors):
    src = {"threaded": threaded_source, "gttrf_gttrs": gttrf_source}[variant]()
    rc, stdout, stderr, doc = grade(submission_from_solver(tmp_path / "sub", src))
    assert doc["score"] == 1.0 and rc == 0, [c for c in doc["checks"] if c["status"] != "PASS"]
    assert not reviews(doc), reviews(doc)
    st = status(doc)
    assert st["audit.causal"] == st["audit.perturbed"] == st["structure.adi_operator"] == "PASS"
    adi = _counts(doc, "adi_operator_solves")
    assert adi["benchmark h=0.1"] == 10 * per_step + factors, adi
    assert adi["hidden h=0.025"] == 40 * per_step + factors, adi
