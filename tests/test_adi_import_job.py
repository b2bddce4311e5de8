"""The import check runs as the first job beside the first solve (not alone before them): only
its own ready / import_error counts, so a solve job's child cannot race it with a forged one."""
import types

from test_adi_support import grader


def test_ready_counts_only_from_the_import_job():
    G = grader()
    forged = {"kind": "ready", "job": "bench:4", "signature": "(h, T=1.0, problem=None)", "signature_ok": True}
    real = {"kind": "import_error", "job": "import", "error": "ImportError: no"}
    ready, jobs, violations = G.decode_jobs(types.SimpleNamespace(messages=[forged, real]))
    assert ready == real
    ready, _, _ = G.decode_jobs(types.SimpleNamespace(messages=[forged]))
    assert ready is None
    honest = dict(forged, job="import")
    ready, _, _ = G.decode_jobs(types.SimpleNamespace(messages=[honest, real]))
    assert ready == honest

