"""AGGREGATION (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import os
from graders.common.records import Check, Status
from graders.engiai.spec import SPEC
from graders.common.stats import mean_estimate
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# AGGREGATION: per (problem, style) cell, never averaging a None
# =============================================================================
def aggregate(trials: list, expected=None) -> list:
    """One dict per (problem, style) cell that holds a trial: mean and count when every trial
    is scored; otherwise INVALID (some trial record of the cell is malformed or names a key the
    harness does not know, or a trial the harness ran is missing), UNSCORABLE or UNSUPPORTED
    (every None is an unsupported trial), with the reasons, never averaged.  A malformed record
    whose problem and style are readable stays in its cell as a None; a duplicate claimant of a
    key is not counted (key_accounting).  `expected`: {(problem, style): trials the harness
    manifest lists}, reported beside the count."""
    cells = {}
    for t in trials:
        if t.status in ("scored", "unscorable", "unsupported", "missing") or \
                (t.status == "invalid" and t.problem is not None and t.style is not None):
            cells.setdefault((t.problem, t.style), []).append(t)
    out = []
    for (p, s), ts in sorted(cells.items()):
        nones = [t for t in ts if t.score is None]
        cell = {"problem": p, "style": s, "n": len(ts), "n_none": len(nones),
                "n_artefact_none": sum(t.artefact_none for t in nones),
                "n_expected": (expected or {}).get((p, s), 0)}
        if not nones:
            se, ci = mean_estimate([t.score for t in ts])      # n = 1: None (no spread seen)
            cell.update(status="scored", mean=sum(t.score for t in ts) / len(ts), stderr=se,
                        ci95=ci, reasons=[])
        else:
            kind = "INVALID" if any(t.status in ("invalid", "missing") for t in nones) else \
                "UNSUPPORTED" if all(t.status == "unsupported" for t in nones) else "UNSCORABLE"
            reasons = sorted({(f"invalid record {t.trial_id}: " if t.status == "invalid" else
                               "missing trial: " if t.status == "missing" else "") + r
                              for t in nones for r in t.reasons})
            cell.update(status=kind.lower(), mean=None, stderr=None, ci95=None, reasons=reasons)
        out.append(cell)
    return out


def cell_checks(cells: list) -> list:
    out = []
    for c in cells:
        cid = f"cell.{c['problem']}/{c['style']}"
        if c["status"] == "scored":
            out.append(Check(cid, Status.INFO, f"mean {c['mean']:.4f} over n={c['n']} (the harness "
                             f"ran {c.get('n_expected', 0)})", c, None))
        else:
            zero = (f"; {c['n_artefact_none']} None from the agent's own artefact: the cell counts "
                    "0.0 in the SCORE" if c.get("n_artefact_none") else "")
            out.append(Check(cid, Status.REVIEW,
                             f"{c['status'].upper()} n={c['n']} ({c['n_none']} None, not averaged"
                             f"{zero}): " + "; ".join(c["reasons"]), c, None))
    return out


def reference_file_check(run_dir: str) -> list:
    if os.path.isfile(os.path.join(run_dir, SPEC["reference_file"])):
        return []
    # INFO, not FAIL: a RAG/HPC-only run needs no reference file; a trial that does need
    # it is UNSCORABLE with this reason, which already keeps the run from PASS
    return [Check("run.reference", Status.INFO, f"{SPEC['reference_file']} missing: "
                  "no ground truth or baselines (design and training-code trials unscorable)")]


def filter_checks(trials: list) -> list:
    out = []
    filtered = sum(t.status == "filtered" for t in trials)
    if filtered:
        out.append(Check("run.filter", Status.SKIP, f"{filtered} trial(s) outside --problem/--style"))
    if not any(t.status != "filtered" for t in trials):
        out.append(Check("run.trials", Status.INFO, "no trial to grade"))
    return out


def key_lines(trials: list, cells: list, checks: list) -> dict:
    graded = [t for t in trials if t.status not in ("filtered", "missing")]
    scored = [t for t in graded if t.status == "scored"]
    return {
        "trials": len(graded),
        "trials_scored": len(scored),
        "trials_unscorable": sum(t.status == "unscorable" for t in graded),
        "trials_unsupported": sum(t.status == "unsupported" for t in graded),
        "trials_invalid": sum(t.status == "invalid" for t in graded),
        "trials_missing": sum(t.status == "missing" for t in trials),
        "trials_duplicate": sum(t.status == "duplicate" for t in graded),
        "cells": len(cells),
        "cells_scored": sum(c["status"] == "scored" for c in cells),
        "claims_disagreeing": sum(1 for t in graded for v in t.claims.values() if not v["agree"]),
        "trial_mean": sum(t.score for t in scored) / len(scored) if scored else None,
        **dict(zip(("trial_mean_stderr", "trial_mean_ci95"), mean_estimate([t.score for t in scored]))),
    }


