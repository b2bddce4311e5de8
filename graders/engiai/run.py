"""RUN (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import hashlib
import json
import math
import os
import re
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Status
from graders.engiai.families import Trial, Unscorable, parse_trace, succeeded, trace_checks
from graders.engiai.guarded import _h5_get, _h5_open, as_number, read_h5_array, read_h5_attrs, short
from graders.engiai.hpc import score_hpc
from graders.engiai.model_quality import (mmd, reference_near_rate, reference_spacing,
    rigid_affordable, score_training_code)
from graders.engiai.prompts import score_design
from graders.engiai.rag import score_rag
from graders.engiai.spec import ALGORITHMS, PROBLEMS, SPEC, list_problems
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# RUN: reference file (ground truth, baselines) and the trial loop
# =============================================================================
class RunRefs:
    """RUN_DIR/reference.h5, read on demand: ground truth per (problem, example) and MMD
    baselines per (problem, algorithm, seed).  A missing entry is Unscorable."""

    def __init__(self, run_dir: str):
        self.path = os.path.join(run_dir, SPEC["reference_file"])
        self._cache = {}
        self._reported = set()   # baseline notes are printed once, not once per trial
        self.designs = {}        # trial id -> the scored design trial's design (copy checks)

    def all_ground_truths(self, problem: str, wanted: set) -> tuple:
        """({example: design} of the readable ground truths of a problem, all compared): every
        one, or only the `wanted` examples when there are more than copy_max_ground_truths."""
        import h5py
        out = {}
        try:
            with _h5_open(self.path, "run.reference") as fh:
                grp = _h5_get(fh, f"ground_truth/{problem}", "run.reference")
                names = list(grp.keys()) if isinstance(grp, h5py.Group) else []
        except Reject:
            return out, False
        exs = [int(n) for n in names if re.fullmatch(r"-?[0-9]{1,18}", n)]
        every = len(exs) <= SPEC["copy_max_ground_truths"]
        for ex in exs if every else sorted(wanted & set(exs)):
            try:
                out[ex] = self.ground_truth(problem, ex)[0]
            except Unscorable:
                continue
        return out, every

    def ground_truth(self, problem: str, example: int) -> tuple:
        key = ("gt", problem, example)
        if key not in self._cache:
            grp = f"ground_truth/{problem}/{example}"
            try:
                attrs = read_h5_attrs(self.path, grp, "run.reference")
                if attrs is None:
                    raise Unscorable(f"no ground truth for {problem} example {example} in reference.h5")
                design = read_h5_array(self.path, f"{grp}/optimal_design", "run.reference",
                                       shape=PROBLEMS[problem]["design_shape"])
                self._cache[key] = (design, attrs)
            except Reject as exc:
                raise Unscorable(f"ground truth unusable: {exc.check.message}")
        return self._cache[key]

    def baseline(self, problem: str, algorithm: str, seed: int) -> dict:
        key = ("bl", problem, algorithm, seed)
        if key not in self._cache:
            self._cache[key] = self._load_baseline(problem, algorithm, seed)
        val = self._cache[key]
        if isinstance(val, str):
            raise Unscorable(val)
        if key in self._reported:
            return dict(val, checks=[])
        self._reported.add(key)
        return val

    def _load_baseline(self, problem: str, algorithm: str, seed: int):
        grp = f"baselines/{problem}/{algorithm}/seed{seed}"
        shape = PROBLEMS[problem]["design_shape"]
        try:
            attrs = read_h5_attrs(self.path, grp, "run.reference")
            if attrs is None:
                return f"no baseline for ({algorithm}, seed {seed}) of {problem}"
            sigma = attrs.get("sigma")
            # the kernel's 1/(2 sigma^2) must be a positive finite number
            if sigma is None or sigma <= 0 or sigma * sigma == 0.0 or \
                    not 0.0 < 0.5 / (sigma * sigma) < math.inf:
                return f"baseline ({algorithm}, seed {seed}) records no usable positive sigma " \
                       f"({sigma!r})"
            ref = read_h5_array(self.path, f"{grp}/reference_designs", "run.reference", ndim=3)
            bsm = read_h5_array(self.path, f"{grp}/baseline_samples", "run.reference", ndim=3)
            for name, a in (("reference_designs", ref), ("baseline_samples", bsm)):
                if tuple(a.shape[1:]) != tuple(shape) or a.shape[0] < 1:
                    return f"baseline ({algorithm}, seed {seed}): {name} has shape {a.shape}"
        except Reject as exc:
            return f"baseline ({algorithm}, seed {seed}) unusable: {exc.check.message}"
        value = mmd(bsm, ref, sigma)
        if not value > 0:
            return f"baseline ({algorithm}, seed {seed}): baseline MMD is {value:g}, not positive"
        checks = []
        rec = attrs.get("baseline_mmd")
        if rec is not None and abs(rec - value) > SPEC["claim_tol"] * max(1.0, abs(value)):
            checks.append(Check(f"baseline.{problem}.{algorithm}.seed{seed}", Status.INFO,
                                f"recorded baseline_mmd {rec:.6g} differs from the recomputed "
                                f"{value:.6g}; the recomputed one is used", rec, value))
        spacing = reference_spacing(ref)
        rigid = rigid_affordable(len(ref), len(ref) + len(bsm), int(ref[0].size))

        def rates(rig):
            return {"reference": reference_near_rate(ref, ref, spacing, same=True, rigid=rig),
                    "baseline_samples": reference_near_rate(ref, bsm, spacing, same=False,
                                                            rigid=rig)}
        plain = rates(False)
        return {"mmd": value, "sigma": sigma, "reference": ref, "baseline_samples": bsm,
                "spacing": spacing, "checks": checks, "rigid": rigid, "near_rate_plain": plain,
                "near_rate": rates(True) if rigid else plain}


TERM_NAMES = ("overall", "design_quality", "iou", "pixel_accuracy", "objective_match",
              "constraint_match", "connectivity", "watertightness", "tool_efficiency",
              "task_completion", "rag_accuracy", "workflow_completion", "model_quality",
              "code_quality", "job_completion", "dryrun", "syntax", "slurm_accepted")


def compare_claims(rec: dict, terms: dict, tid: str) -> tuple:
    """Claimed scores against recomputed ones: reported, never used."""
    claimed = rec.get("claimed_scores")
    if claimed is None:
        return {}, []
    if not isinstance(claimed, dict):
        return {}, [Check(f"trial.{tid}.claims", Status.INFO, "claimed_scores is not an object: ignored")]
    out, diffs = {}, []
    for key in sorted(claimed):
        if key not in TERM_NAMES:
            diffs.append(f"{short(key, 30)}: not a term this grader computes")
            continue
        c, r = claimed[key], terms.get(key)
        cn = None if c is None else as_number(c)
        agree = (c is None and r is None) or (cn is not None and r is not None and
                                              abs(cn - r) <= SPEC["claim_tol"])
        out[key] = {"claimed": c if (c is None or cn is not None) else short(c),
                    "recomputed": r, "agree": agree}
        if not agree:
            rs = "None" if r is None else f"{r:.4f}"
            diffs.append(f"{key} claimed {short(c, 20)}, recomputed {rs}")
    if not diffs:
        return out, [Check(f"trial.{tid}.claims", Status.INFO,
                           f"{len(out)} claimed score(s) agree with the recomputed ones")]
    return out, [Check(f"trial.{tid}.claims", Status.INFO, "claims disagree (reported, not used): "
                       + "; ".join(diffs[:6]) + (" ..." if len(diffs) > 6 else ""), len(diffs))]


def record_fingerprint(rec: dict):
    """sha256 of the record with its trial_id left out: two folders holding the same record
    (a copied trial, renamed or not) have the same fingerprint."""
    try:
        text = json.dumps({k: v for k, v in rec.items() if k != "trial_id"}, sort_keys=True)
    except (ValueError, TypeError, RecursionError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def duplicate_checks(trials: list) -> list:
    """A trial whose record repeats an earlier one's would count twice in its cell: flagged for
    review (a deterministic agent can repeat itself; a copied folder is the other reading)."""
    first, out = {}, []
    for t in trials:
        if t.record_sha256 is None or t.status == "filtered":
            continue
        if t.record_sha256 in first:
            out.append(Check(f"trial.{t.trial_id}.duplicate", Status.REVIEW,
                             f"record identical (apart from trial_id) to trial "
                             f"{first[t.record_sha256]}: counted in its cell, but a copied trial "
                             "would weigh twice", first[t.record_sha256]))
        else:
            first[t.record_sha256] = t.trial_id
    return out


def cell_from_folder(name: str):
    """(problem, style) that a trial folder named `<problem>-<prompt_style>[-<suffix>]` names
    (TRIAL_FORMAT.md, "Layout"), or None.  Problem names hold no '-'; the longest style of that
    problem that the rest starts with wins (t4-func-terse before t4-terse)."""
    problem, sep, rest = name.partition("-")
    if not sep or problem not in PROBLEMS:
        return None
    for style in sorted(PROBLEMS[problem]["styles"], key=len, reverse=True):
        if rest == style or rest.startswith(style + "-"):
            return problem, style
    return None


def invalid_trial(trial: Trial, check: Check, folder: str, problems: set, styles: set) -> tuple:
    """(Trial, checks) for a trial whose record is malformed.  It keeps the cell its record
    names; a record that names none (unreadable, not an object, unregistered problem or style)
    takes the cell its folder name gives, as INVALID; with neither it has no cell and the run
    reports it (unplaced_checks)."""
    msg = check.message
    if trial.problem is None:
        cell = cell_from_folder(folder)
        if cell is not None:
            trial.problem, trial.style = cell
            msg += f" (kept as INVALID in the cell {cell[0]}/{cell[1]} its folder name gives)"
        else:
            msg += (" (its folder name gives no registered <problem>-<prompt_style>: the trial "
                    "has no cell)")
    if trial.problem is not None and (trial.problem not in problems or trial.style not in styles):
        trial.status = "filtered"
        return trial, []
    trial.reasons.append(msg)
    return trial, [Check(check.id, Status.FAIL, msg, check.measured, check.limit)]


def unplaced_checks(trials: list) -> list:
    """A malformed trial whose record and folder name both fail to name a cell cannot be
    averaged anywhere: the run reports it and cannot PASS."""
    lost = [t.trial_id for t in trials if t.status == "invalid" and t.problem is None]
    if not lost:
        return []
    return [Check("run.unplaced_trials", Status.FAIL,
                  f"{len(lost)} malformed trial(s) with no cell (neither the record nor the folder "
                  f"name gives a registered problem and style): {', '.join(lost[:10])}"
                  + (" ..." if len(lost) > 10 else "") + "; the run cannot PASS", len(lost), 0)]


def grade_trial(tdir: str, run: RunRefs, problems: set, styles: set) -> tuple:
    """(Trial, checks) for one trial folder.  Never raises for bad input."""
    tid = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(tdir.rstrip(os.sep)))[:100]
    trial, checks = Trial(tid), []
    cid = f"trial.{tid}.record"
    try:
        if os.path.islink(tdir):
            raise Reject(cid, "trial folder is a symlink (refused)")
        if os.path.islink(os.path.join(tdir, SPEC["trial_file"])):
            raise Reject(cid, f"{SPEC['trial_file']} is a symlink (refused)")
        rec = read_json_file(os.path.join(tdir, SPEC["trial_file"]), cid, SPEC["max_json_bytes"])
        if not isinstance(rec, dict):
            raise Reject(cid, "trial.json is not a JSON object")
        trial.record_sha256 = record_fingerprint(rec)
        problem, style = rec.get("problem"), rec.get("prompt_style")
        problem_ok = isinstance(problem, str) and problem in PROBLEMS
        if problem_ok and isinstance(style, str) and style in PROBLEMS[problem]["styles"]:
            # the cell is known from here on: a trial invalid past this point still counts in
            # its cell (as None), so dropping a bad trial can never raise a cell's mean
            trial.problem, trial.style = problem, style
        if rec.get("format") != SPEC["trial_format"]:
            raise Reject(cid, f"format {short(rec.get('format'))!r}, expected {SPEC['trial_format']!r}")
        if not problem_ok:
            raise Reject(cid, f"problem {short(problem)!r} is not registered "
                              f"(valid: {', '.join(list_problems())})")
        if trial.style is None:
            raise Reject(cid, f"prompt_style {short(style)!r} is not accepted by {problem} "
                              f"(valid: {', '.join(PROBLEMS[problem]['styles'])})")
        if problem not in problems or style not in styles:
            trial.status = "filtered"
            return trial, []
        if not isinstance(rec.get("artefacts", {}), dict):
            raise Reject(cid, "trial.json: artefacts must be an object")
        if PROBLEMS[problem]["family"] == "training_code":
            if rec.get("algorithm", ALGORITHMS[0]) not in ALGORITHMS:
                raise Reject(cid, f"algorithm {short(rec.get('algorithm'))!r} is not one of "
                                  f"{', '.join(ALGORITHMS)}")
            if isinstance(rec.get("seed"), bool) or not isinstance(rec.get("seed"), int):
                raise Reject(cid, "seed missing or not an integer (it selects the baseline)")
        calls = parse_trace(rec, tid)
    except Reject as exc:
        return invalid_trial(trial, exc.check, os.path.basename(tdir.rstrip(os.sep)), problems,
                             styles)
    cfg = PROBLEMS[problem]
    checks.append(Check(cid, Status.PASS, f"{problem} / {style}, {len(calls)} tool call(s)"))
    checks += trace_checks(calls, problem, tid)
    if not cfg["agent_tools_support"]:
        # seed warning: the agent's EngiBench tools support only beams2d and photonics2d
        fail = [c for c in calls if c["name"] == "create_problem" and not succeeded(c)]
        trial.status = "unsupported"
        trial.reasons.append(f"{problem} is registered but the agent's tools do not support it "
                             "(evaluations fail at create_problem)"
                             + ("; the trace shows create_problem failing" if fail else ""))
        checks.append(Check(f"trial.{tid}.unsupported", Status.REVIEW, trial.reasons[-1]))
        trial.claims, cl = compare_claims(rec, {"overall": None}, tid)
        return trial, checks + cl
    try:
        fam = cfg["family"]
        if fam == "design_optimization":
            terms, more = score_design(rec, calls, problem, style, tdir, run, tid)
        elif fam == "rag_retrieval":
            terms, more = score_rag(rec, calls, tid)
        elif fam == "hpc_orchestration":
            terms, more = score_hpc(rec, calls, problem, style, tid)
        else:
            terms, more = score_training_code(rec, calls, problem, tdir, run, tid)
    except Unscorable as exc:
        terms, more = {"overall": None}, []
        trial.reasons.append(str(exc))
    except Reject as exc:
        trial.reasons.append(exc.check.message)
        return trial, checks + [exc.check]
    except (RecursionError, MemoryError) as exc:   # a value nested too deeply for some walk
        msg = f"trial.json cannot be graded ({type(exc).__name__}: a value nested too deeply or too large)"
        trial.reasons.append(msg)
        return trial, checks + [Check(cid, Status.FAIL, msg)]
    checks += more
    trial.terms, trial.score = terms, terms.get("overall")
    if trial.score is None:
        trial.status = "unscorable"
        trial.artefact_none = terms.get("model_quality_unscorable_artefact") is True
        if terms.get("model_quality_unscorable_reason"):
            trial.reasons.append(terms["model_quality_unscorable_reason"])
        checks.append(Check(f"trial.{tid}.unscorable", Status.REVIEW,
                            "score None: " + "; ".join(trial.reasons)))
    else:
        trial.status = "scored"
        shown = " ".join(f"{k}={v:.4f}" for k, v in terms.items()
                         if k != "overall" and k in TERM_NAMES and v is not None)
        checks.append(Check(f"trial.{tid}.score", Status.INFO, f"{trial.score:.4f} ({shown})",
                            trial.score))
    trial.claims, cl = compare_claims(rec, terms, tid)
    return trial, checks + cl


