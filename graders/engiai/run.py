"""RUN (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import hashlib
import json
import math
import os
import re
import time
from graders.common.guarded_json import read_json_file
from graders.common.records import Check, Reject, Status
from graders.engiai.families import (Trial, Unscorable, evaluation_calls, job_completed,
    parse_trace, submitted_jobs, succeeded, trace_checks)
from graders.engiai.guarded import _h5_get, _h5_open, as_number, read_h5_array, read_h5_attrs, short
from graders.engiai.hpc import score_hpc
from graders.engiai.model_quality import (baseline_threshold, mmd, reference_near_rate,
    reference_spacing, rigid_affordable, score_training_code)
from graders.engiai.prompts import score_design
from graders.engiai.rag import (_RAG_ALIASES, passage_numbers, passage_shingles, passage_text,
    rag_param, retrieval_failure, score_rag, shingle_containment)
from graders.engiai.spec import ALGORITHMS, PROBLEMS, SPEC, list_problems
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# RUN: reference file (ground truth, baselines) and the trial loop
# =============================================================================
class RunBudget:
    """Bytes of trial artefacts read and seconds spent over the whole run (issue 24: one 8 MiB
    STL listed 150 times was parsed 150 times, > 4 minutes; the 64 MiB cap is per file).  A read
    past either limit raises Reject (the term it feeds scores 0, with a FAIL record), never a
    silent skip; `refused` lists what was not read for the run's FAIL run.budget record."""

    def __init__(self, max_bytes: int, max_seconds: float):
        self.max_bytes, self.max_seconds = int(max_bytes), float(max_seconds)
        self.bytes = 0
        self.t0 = time.monotonic()
        self.refused = []

    def exhausted(self):
        """Why the run's budget is spent, or None."""
        spent = time.monotonic() - self.t0
        if spent > self.max_seconds:
            return f"the run's time budget is spent ({spent:.0f} s of {self.max_seconds:g} s)"
        if self.bytes >= self.max_bytes:
            return f"the run's read budget is spent ({self.bytes} of {self.max_bytes} bytes)"
        return None

    def charge(self, n: int, what: str, check_id: str) -> None:
        why = self.exhausted()
        if why is None and self.bytes + n > self.max_bytes:
            why = (f"reading it ({n} bytes) would pass the run's read budget ({self.bytes} of "
                   f"{self.max_bytes} bytes read)")
        if why is not None:
            self.refused.append(f"{check_id}: {what}")
            raise Reject(check_id, f"{what} not read: {why}", self.bytes + n, self.max_bytes)
        self.bytes += n


def manifest_entry_problem(e):
    """Why one entry of the harness manifest is unusable, or None."""
    if not isinstance(e, dict):
        return "not an object"
    p, s = e.get("problem"), e.get("prompt_style")
    if not isinstance(p, str) or p not in PROBLEMS:
        return f"problem {short(p, as_repr=True)} is not registered"
    if not isinstance(s, str) or s not in PROBLEMS[p]["styles"]:
        return f"prompt_style {short(s, as_repr=True)} is not accepted by {p}"
    for f in ("example_id", "seed"):
        v = e.get(f)
        if v is not None and key_int(v) is None:
            return f"{f} {short(v, as_repr=True)} is not an integer"
    fam = PROBLEMS[p]["family"]
    if fam in ("design_optimization", "rag_retrieval") and e.get("example_id") is None:
        return f"a {fam} trial needs an example_id"
    if fam == "training_code" and e.get("seed") is None:
        return "a training-code trial needs a seed (it selects the baseline)"
    if e.get("algorithm") is not None and e.get("algorithm") not in ALGORITHMS:
        return f"algorithm {short(e.get('algorithm'), as_repr=True)} is not one of {', '.join(ALGORITHMS)}"
    if e.get("expected") is not None and not isinstance(e.get("expected"), dict):
        return "expected is not an object"
    return None


def key_int(value):
    """A key field (example_id, seed) as an int, or None when it is not an integer.  JSON does
    not tell 1 from 1.0 (a harness that wrote a float writes 1.0): an integral float is that
    integer (up to 2**53, where floats stop being exact), as `5.0` matches `5` in the HPC config
    (decision 20); a bool, a string ("1"), a fraction or a non-finite value is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value == int(value) and \
            abs(value) <= 2 ** 53:
        return int(value)
    return None


def trial_key(problem: str, style: str, example_id, seed) -> tuple:
    """The harness key; integral floats of example_id and seed read as their integer."""
    return (problem, style, example_id if key_int(example_id) is None else key_int(example_id),
            seed if key_int(seed) is None else key_int(seed))


def show_key(key: tuple) -> str:
    p, s, ex, seed = key
    return f"{p}/{s} example_id={short(ex, 20, as_repr=True)} seed={short(seed, 20, as_repr=True)}"


class RunRefs:
    """RUN_DIR/reference.h5, read on demand: the harness manifest (the key: which trials the
    harness ran and what each prompt expects), ground truth per (problem, example) and MMD
    baselines per (problem, algorithm, seed).  A missing ground truth or baseline of a trial
    the manifest lists is Unscorable (a harness gap with harness-side evidence); a trial the
    manifest does not list is invalid."""

    def __init__(self, run_dir: str, seconds: float | None = None):
        self.path = os.path.join(run_dir, SPEC["reference_file"])
        self._cache = {}
        self._reported = set()   # baseline notes are printed once, not once per trial
        self.designs = {}        # trial id -> the scored design trial's design (copy checks)
        self.content = {}        # trial id -> what was scored (duplicate checks)
        self.duplicate_bytes = 0 # array bytes kept for the near-copy comparison
        self.keys = None         # (problem, style, example_id, seed) -> manifest entry
        self.manifest_error = None
        self.budget = RunBudget(SPEC["run_max_read_bytes"],
                                SPEC["run_max_seconds"] if seconds is None else seconds)

    def load_manifest(self) -> list:
        """Read the harness manifest (SPEC harness_dataset) once; records saying what it holds.
        Unusable entries are left out (a trial claiming one is then unknown: invalid)."""
        import numpy as np
        import h5py
        self.keys = {}
        try:
            with _h5_open(self.path, "run.harness") as fh:
                obj = _h5_get(fh, SPEC["harness_dataset"], "run.harness")
                if not isinstance(obj, h5py.Dataset) or obj.dtype != np.uint8 or obj.ndim != 1:
                    raise Reject("run.harness", f"{SPEC['reference_file']} has no "
                                 f"{SPEC['harness_dataset']} (a uint8 JSON document)")
                if obj.size > SPEC["max_harness_bytes"]:
                    raise Reject("run.harness", f"{SPEC['harness_dataset']} is {obj.size} bytes",
                                 obj.size, SPEC["max_harness_bytes"])
                text = obj[()].tobytes().decode("utf-8")
            doc = json.loads(text, parse_constant=lambda c: float(c))
        except Reject as exc:
            self.manifest_error = exc.check.message
        except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
            self.manifest_error = (f"{SPEC['harness_dataset']} is not a readable JSON document "
                                   f"({type(exc).__name__})")
        except Exception as exc:   # h5py errors reading a harness dataset
            self.manifest_error = f"{SPEC['harness_dataset']} unreadable ({type(exc).__name__})"
        else:
            if not isinstance(doc, dict) or doc.get("format") != SPEC["harness_format"] or \
                    not isinstance(doc.get("trials"), list):
                self.manifest_error = (f"{SPEC['harness_dataset']} is not an "
                                       f"{SPEC['harness_format']!r} document with a trials list")
        if self.manifest_error is not None:
            return [Check("run.harness", Status.FAIL, f"no harness manifest: {self.manifest_error}; "
                          "no trial's key can be checked, so every trial is invalid (counted 0)")]
        bad = []
        for i, e in enumerate(doc["trials"]):
            why = manifest_entry_problem(e)
            key = None if why else trial_key(e["problem"], e["prompt_style"], e.get("example_id"),
                                              e.get("seed"))
            if key is not None and key in self.keys:
                why = f"{show_key(key)} listed twice (the first kept)"
            if why:
                bad.append(f"trials[{i}]: {why}")
                continue
            alg = e.get("algorithm")
            if PROBLEMS[e["problem"]]["family"] == "training_code" and alg is None:
                alg = ALGORITHMS[0]                   # seed: cgan_cnn_2d is the default
            self.keys[key] = {"key": key, "problem": e["problem"], "prompt_style": e["prompt_style"],
                              "example_id": key[2], "seed": key[3],
                              "algorithm": alg, "expected": e.get("expected")}
        out = [Check("run.harness", Status.INFO, f"harness manifest: {len(self.keys)} trial(s) "
                     "keyed by (problem, prompt_style, example_id, seed); expectations, tolerances "
                     "and algorithms are read from it, never from a trial record")]
        if bad:
            out.append(Check("run.harness_entries", Status.FAIL, f"{len(bad)} unusable manifest "
                             f"entr{'y' if len(bad) == 1 else 'ies'} left out: " + "; ".join(bad[:5])
                             + (" ..." if len(bad) > 5 else ""), len(bad), 0))
        return out

    def key_of(self, rec: dict, problem: str, style: str, check_id: str) -> dict:
        """The manifest entry of a record's (problem, prompt_style, example_id, seed); Reject
        (an invalid trial, counted 0) when the harness lists no such trial."""
        if self.keys is None:
            self.load_manifest()
        for f in ("example_id", "seed"):
            v = rec.get(f)
            if v is not None and key_int(v) is None:
                raise Reject(check_id, f"{f} {short(v, as_repr=True)} is not an integer: the trial "
                                       "names no key the harness knows")
        key = trial_key(problem, style, rec.get("example_id"), rec.get("seed"))
        if self.manifest_error is not None:
            raise Reject(check_id, f"{show_key(key)}: no harness manifest to check it against "
                                   f"({self.manifest_error})")
        entry = self.keys.get(key)
        if entry is None:
            raise Reject(check_id, f"{show_key(key)} is not a trial the harness ran (the manifest "
                                   f"{SPEC['reference_file']}:{SPEC['harness_dataset']} does not "
                                   "list it): an unknown key is invalid, never a harness gap")
        return entry

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
                                       shape=PROBLEMS[problem]["design_shape"], density=True)
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
            ref = read_h5_array(self.path, f"{grp}/reference_designs", "run.reference", ndim=3,
                                density=True)
            bsm = read_h5_array(self.path, f"{grp}/baseline_samples", "run.reference", ndim=3,
                                density=True)
            for name, a in (("reference_designs", ref), ("baseline_samples", bsm)):
                if tuple(a.shape[1:]) != tuple(shape) or a.shape[0] < 1:
                    return f"baseline ({algorithm}, seed {seed}): {name} has shape {a.shape}"
        except Reject as exc:
            return f"baseline ({algorithm}, seed {seed}) unusable: {exc.check.message}"
        stats = baseline_stats(ref, bsm, sigma)
        value = stats["mmd"]
        if not value > 0:
            return f"baseline ({algorithm}, seed {seed}): baseline MMD is {value:g}, not positive"
        checks = []
        rec = attrs.get("baseline_mmd")
        if rec is not None and abs(rec - value) > SPEC["claim_tol"] * max(1.0, abs(value)):
            checks.append(Check(f"baseline.{problem}.{algorithm}.seed{seed}", Status.INFO,
                                f"recorded baseline_mmd {rec:.6g} differs from the recomputed "
                                f"{value:.6g}; the recomputed one is used", rec, value))
        return dict(stats, sigma=sigma, reference=ref, baseline_samples=bsm, checks=checks)


# A baseline's statistics are a pure function of its two arrays, sigma and SPEC: kept per
# process by content (sha256 of each array's dtype, shape and bytes, and of SPEC as it is
# then), so a caller grading many runs in one process (the tests: ~0.36 s of a 0.65 s grading
# of the sample run) computes each once; one grading computes each once either way.
_BASELINE_STATS: dict = {}
_BASELINE_STATS_MAX = 16        # entries kept (a few KB each: scalars and small dicts)


def _content_key(*arrays) -> bytes:
    h = hashlib.sha256()
    for a in arrays:
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.digest()


def baseline_stats(ref, bsm, sigma: float) -> dict:
    """MMD, spacing, copy thresholds and near rates of a baseline (ref, bsm: arrays the grader
    read and owns)."""
    key = (_content_key(ref, bsm), float(sigma), repr(sorted(SPEC.items(), key=repr)))
    stats = _BASELINE_STATS.get(key)
    if stats is None:       # kept in a local: another thread may clear the memo meanwhile
        stats = _compute_baseline_stats(ref, bsm, sigma)
        if len(_BASELINE_STATS) >= _BASELINE_STATS_MAX:
            _BASELINE_STATS.clear()
        _BASELINE_STATS[key] = stats
    return stats


def _compute_baseline_stats(ref, bsm, sigma: float) -> dict:
    value = mmd(bsm, ref, sigma)
    spacing = reference_spacing(ref)
    rigid = rigid_affordable(len(ref), len(ref) + len(bsm), int(ref[0].size))

    thr_plain = baseline_threshold(ref, bsm, spacing, False)
    thr_rigid = baseline_threshold(ref, bsm, spacing, True) if rigid else thr_plain

    def rates(rig, thr):
        return {"reference": reference_near_rate(ref, ref, spacing, same=True, rigid=rig,
                                                 frac=thr[0]),
                "baseline_samples": reference_near_rate(ref, bsm, spacing, same=False,
                                                        rigid=rig)}
    plain = rates(False, thr_plain)
    return {"mmd": value, "spacing": spacing, "rigid": rigid, "near_rate_plain": plain,
            "near_rate": rates(True, thr_rigid) if rigid else plain,
            "ref_threshold_plain": thr_plain, "ref_threshold": thr_rigid}


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


_EXACT_NUMBERS = frozenset({"seed", "epochs"})    # compared exactly (the key's identifiers)


def scored_trace(problem: str, calls: list) -> dict:
    """The trace as its family's scoring reads it (issue 24, copies found by what is scored):
    design: which scored objectives the last successful simulate_design gave (their values are
    the design's simulation, compared through the design), the successful exports'
    parameters (STL names as their order of first appearance), whether a render and an
    optimization succeeded; RAG: whether a retrieval succeeded and, per parameter, the answer
    (content_signature keeps those the key scores; what the retrievals state is compared
    apart: rag_evidence); HPC: the four steps' outcomes,
    the successful generate_training_command configs (seed, epochs, algorithm, problem), the
    metrics evaluated; training code: the outcomes of the last validation and dry run, of the
    submission and of the job.  Not the calls' count or names: a copy adding a call is the same
    work (it pays in tool efficiency where that is scored, never gains)."""
    fam = PROBLEMS[problem]["family"]
    ok = [c for c in calls if succeeded(c)]
    if fam == "design_optimization":
        sims = [c for c in ok if c["name"] == "simulate_design"]
        obj = sims[-1]["result"].get("objectives") if sims else None
        names = {}
        exports = []
        for c in ok:
            if c["name"] != "convert_design_to_stl":
                continue
            r = c["result"]
            path = r.get("stl_path")
            exports.append({"stl": names.setdefault(path, len(names)) if isinstance(path, str) else None,
                            **{k: r.get(k) for k in ("scale_xy", "scale_z", "threshold", "mirrored")}})
        # the objectives are the simulation of the design, compared through it (an honest pair
        # with one design has one simulation; a copy's objectives moved by 0.2% were another
        # trial's): whether they were simulated, which of the scored ones are numbers
        return {"objectives": sorted(n for n, _, _ in PROBLEMS[problem]["objectives"]
                                     if as_number(obj.get(n)) is not None)
                if isinstance(obj, dict) else None, "exports": exports,
                "rendered": any(c["name"] == "render_design" for c in ok),
                "optimized": any(c["name"] == "optimize_design" for c in ok)}
    if fam == "rag_retrieval":
        good = [i for i, c in enumerate(calls)
                if c["name"] == "search_documents" and retrieval_failure(c) is None]
        return {"retrieved": bool(good)} | {p: {"answer": rag_param(calls, p)[0]}
                                            for p in _RAG_ALIASES}
    if fam == "hpc_orchestration":
        gens = [c["args"].get("cfg", c["args"]) for c in ok if c["name"] == "generate_training_command"]
        metrics = set()
        for c in evaluation_calls(calls):
            m = c["result"].get("metrics")
            if isinstance(m, dict):
                metrics.update(k for k in SPEC["hpc_eval_metrics"] if as_number(m.get(k)) is not None)
        return {"configs": [{k: g.get(k) for k in ("seed", "epochs", "algorithm", "problem_id")}
                            if isinstance(g, dict) else None for g in gens],
                "submitted": bool(submitted_jobs(calls)), "completed": job_completed(calls),
                "metrics": sorted(metrics)}
    last = {n: [c for c in calls if c["name"] == n] for n in
            ("validate_training_script", "dryrun_training_script")}
    return {n: bool(v) and succeeded(v[-1]) for n, v in last.items()} | {
        "submitted": bool(submitted_jobs(calls)), "completed": job_completed(calls)}


def rag_evidence(problem: str, calls: list, params) -> dict | None:
    """What a RAG trial's scoring reads of its retrievals (issue 24), for the duplicate check:
    per scored parameter (`params`, the key's) the numbers the successful retrievals before its
    answer state (sorted), and the texts of those retrievals' passages (distinct); None for
    another family."""
    if PROBLEMS[problem]["family"] != "rag_retrieval":
        return None
    good = [i for i, c in enumerate(calls)
            if c["name"] == "search_documents" and retrieval_failure(c) is None]
    stated, texts = {}, {}
    for p in params:
        at = rag_param(calls, p)[1]
        nums = set()
        for i in good:
            if at is not None and i < at:
                for q in calls[i]["result"]["results"]:
                    t = passage_text(q)
                    texts.setdefault(t, None)
                    nums.update(v for v in passage_numbers(t[:1 << 20]) if math.isfinite(v))
        stated[p] = sorted(nums)
    return {"stated": stated, "texts": list(texts)}


def _flatten(value, key: str, numbers: list):
    """A JSON value with every finite number replaced by '#' (appended to `numbers` as
    (value, exact)), so that the skeleton is compared exactly and the numbers by tolerance."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            return repr(value)[:60]
        if not math.isfinite(x):
            return repr(value)
        numbers.append((x, key in _EXACT_NUMBERS))
        return "#"
    if isinstance(value, dict):
        return {str(k): _flatten(v, str(k), numbers)
                for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_flatten(v, key, numbers) for v in value]
    return short(value, 60, as_repr=True)


def content_signature(problem: str, calls: list, content, run: "RunRefs", tid: str) -> dict | None:
    """What a trial is scored on (issue 24), for the duplicate check: its problem, the trace
    as its family's scoring reads it (scored_trace), its arrays (design, samples), its STL files (stl_content)
    and its script's outcome (`content`, noted while scoring), and a RAG trial's retrieval
    evidence (rag_evidence: the numbers stated, the passages' pieces).  {skeleton: sha256 of all
    but the numbers, array values and evidence, numbers, exact, arrays, rag, sha256: of
    everything (exact copies)}, or None when the trace cannot be serialised."""
    import numpy as np
    numbers, arrays, shapes, parts = [], [], [], []
    try:
        # a RAG trial's answers and evidence for the parameters its key scores (all three when
        # the key could not be read: the trial is then unscored)
        params = next((v for kind, v in content if kind == "rag_scored"), list(_RAG_ALIASES))
        trace = scored_trace(problem, calls)
        if PROBLEMS[problem]["family"] == "rag_retrieval":
            trace = {k: v for k, v in trace.items() if k == "retrieved" or k in params}
        trace = _flatten(trace, "", numbers)
        ev = rag_evidence(problem, calls, params)
        rag = None if ev is None else {
            "stated": {p: np.array(v, dtype=np.float64) for p, v in ev["stated"].items()},
            "shingles": passage_shingles(ev["texts"])}
        for kind, value in content:
            if kind in ("design", "samples"):
                a = np.asarray(value)
                if kind == "samples" and a.ndim >= 2 and a.shape[0] > 1:
                    # a sample set is scored as a set: compared in a canonical order (its rows
                    # by binarised content, then mean), so a reordered copy is the same set
                    cut = SPEC["binarize_at"]
                    rows = a.reshape(a.shape[0], -1)
                    keys = [(np.packbits(r > cut).tobytes(), float(r.mean())) for r in rows]
                    a = a[sorted(range(a.shape[0]), key=keys.__getitem__)]
                shapes.append([kind, list(a.shape)])
                arrays.append(a)
            else:
                parts.append([kind, _flatten(value, kind, numbers)])
        skeleton = json.dumps([problem, trace, shapes, parts], sort_keys=True)
    except (ValueError, TypeError, RecursionError, MemoryError):
        return None
    h = hashlib.sha256(skeleton.encode())
    sk = h.hexdigest()
    nums = np.array([x for x, _ in numbers], dtype=np.float64)
    h.update(nums.tobytes())
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    if rag is not None:
        for p in sorted(rag["stated"]):
            h.update(p.encode() + rag["stated"][p].tobytes())
        h.update(rag["shingles"].tobytes())
    size = sum(int(a.size) * 8 for a in arrays)
    kept = run.duplicate_bytes + size <= SPEC["duplicate_max_bytes"]
    if kept:
        run.duplicate_bytes += size
    if rag is not None:             # the passages' pieces, kept under the same cap
        if run.duplicate_bytes + rag["shingles"].nbytes <= SPEC["duplicate_max_bytes"]:
            run.duplicate_bytes += rag["shingles"].nbytes
        else:
            rag["shingles"] = None
    return {"skeleton": sk, "numbers": nums, "rag": rag,
            "exact": np.array([e for _, e in numbers], dtype=bool),
            "means": np.array([float(a.mean()) if a.size else 0.0 for a in arrays]),
            "bmeans": np.array([float(np.mean(a > SPEC["binarize_at"])) if a.size else 0.0
                                for a in arrays]),
            "arrays": arrays if kept else None, "sha256": h.hexdigest()}


def content_distance(a: dict, b: dict) -> float:
    """How far apart two trials' scored contents lie (inf for another skeleton): the largest of
    the numbers' differences relative to max(1, |value|) (inf where an exact number differs)
    and, per array (densities), the largest absolute cell difference or, when smaller, the
    larger of the share of cells whose binarised values differ and the difference of the means
    (a copy plus noise below the threshold lies at the noise's mean)."""
    import numpy as np
    if a["skeleton"] != b["skeleton"]:
        return math.inf
    x, y = a["numbers"], b["numbers"]
    d = 0.0
    if x.size:
        if np.any(a["exact"] & (x != y)):
            return math.inf
        d = float(np.max(np.abs(x - y) / np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))))
    if a.get("rag") is not None or b.get("rag") is not None:
        e = rag_distance(a.get("rag"), b.get("rag"))
        if e is None:
            return math.inf
        d = max(d, e)
    if a["arrays"] is None or b["arrays"] is None:
        return d if a["sha256"] == b["sha256"] else math.inf
    for p, q in zip(a["arrays"], b["arrays"]):
        if not p.size:
            continue
        p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
        da = float(np.max(np.abs(p - q)))
        if da > SPEC["duplicate_tol"]:
            # what a design is: its cells binarised (its IoU, STL, objectives).  A copy plus
            # grey noise that leaves the binarisation alone is the same design, even when the
            # noise moves its raw mean (red team round 4: solid cells lowered to 0.6 moved the
            # mean toward the volume fraction and scored 0.9428 over the original's 0.9295)
            cut = SPEC["binarize_at"]
            da = min(da, float(np.mean((p > cut) != (q > cut))))
        d = max(d, da)
    return d


def rag_text_match(ra: dict, rb: dict) -> tuple | None:
    """(share, shared) of the two RAG trials' passage pieces (shingle_containment), None when
    a work cap left either uncompared."""
    if ra["shingles"] is None or rb["shingles"] is None:
        return None
    return shingle_containment(ra["shingles"], rb["shingles"])


def stated_distance(ra: dict, rb: dict) -> float | None:
    """The largest difference of the numbers two RAG trials' retrievals state before each
    answer, relative to max(1, |value|); None when some parameter's retrievals state another
    count of numbers."""
    import numpy as np
    d = 0.0
    for p in ra["stated"]:
        x, y = ra["stated"][p], rb["stated"].get(p)
        if y is None or x.size != y.size:
            return None
        if x.size:
            d = max(d, float(np.max(np.abs(x - y) / np.maximum(1.0, np.maximum(np.abs(x), np.abs(y))))))
    return d


def _rag_text_uncompared(a: dict, b: dict) -> bool:
    """Two RAG trials with the same answers whose retrievals state other numbers, and whose
    passages a work cap left uncompared (duplicate_max_bytes): a possible copy (fail closed)."""
    ra, rb = a.get("rag"), b.get("rag")
    if ra is None or rb is None or rag_text_match(ra, rb) is not None:
        return False
    sd = stated_distance(ra, rb)
    return (sd is None or sd > SPEC["duplicate_tol"]) and content_distance(
        dict(a, rag=None), dict(b, rag=None)) <= SPEC["duplicate_tol"]


def rag_distance(ra, rb) -> float | None:
    """How far apart two RAG trials' retrieval evidence lies (issue 24, red team round 4): the
    numbers stated before each answer compared as the other numbers are (relative to
    max(1, |value|)) when every parameter's retrievals state as many; else 0.0 when their
    passages' texts are near-identical (of the smaller set of pieces at least
    rag_copy_containment, and at least rag_copy_min_shared pieces, lie in the other's: a copy
    with a number appended, a passage added, dropped, reordered or repeated, whitespace,
    punctuation or case changed), None otherwise (another trial)."""
    if ra is None or rb is None:
        return None
    d = stated_distance(ra, rb)
    if d is not None and d <= SPEC["duplicate_tol"]:
        return d
    m = rag_text_match(ra, rb)
    if m is not None and m[0] >= SPEC["rag_copy_containment"] and m[1] >= SPEC["rag_copy_min_shared"]:
        return 0.0
    return d


def _cell_weights(trials: list) -> dict:
    """(problem, style) -> (trials in the cell, whether some trial of it has no score: the cell
    then is not averaged and its trials add nothing to the SCORE as scored trials)."""
    cells = {}
    for t in trials:
        if t.problem is None or t.status in ("filtered", "duplicate"):
            continue
        n, broken = cells.get((t.problem, t.style), (0, False))
        cells[(t.problem, t.style)] = (n + 1, broken or t.score is None)
    return cells


_NUMBERS_PREFIX = 64


def _numbers_apart(a: dict, b: dict) -> bool:
    """Whether two contents of one structure differ past duplicate_tol in one of their first
    _NUMBERS_PREFIX scored numbers (an exact one differing at all): then they are not copies,
    whatever their arrays or passages, and a pair a work cap leaves uncompared need not be
    held.  A bounded look (the prefix), so it costs no more than the cap saves."""
    import numpy as np
    x, y = a["numbers"][:_NUMBERS_PREFIX], b["numbers"][:_NUMBERS_PREFIX]
    if not x.size or x.size != y.size:
        return False
    if np.any(a["exact"][:_NUMBERS_PREFIX] & (x != y)):
        return True
    return float(np.max(np.abs(x - y) / np.maximum(1.0, np.maximum(np.abs(x), np.abs(y))))) > \
        SPEC["duplicate_tol"]


def duplicate_checks(trials: list, run: "RunRefs", checks: list) -> list:
    """Copies under other harness keys (issue 24, TRIAL_FORMAT.md decision 19): trials whose
    scored content (content_signature) lies within duplicate_tol of each other (content_distance;
    exact copies at 0) form a group, and **a group counts once**: of its scored members the one
    adding least to the SCORE (score over its cell's trials; 0 in a cell that is not averaged)
    keeps its score and every other one counts 0.0 until a reviewer clears it (its score kept
    as `overall_if_cleared`), with a REVIEW record naming the kept one.  A copy can then never
    raise the SCORE: what the group adds is at most what the original trial added.  Trials
    claiming the same key are counted once already (key_accounting).  A comparison the work
    cap stops is a REVIEW (fail closed), never a silent pass."""
    import numpy as np
    tol = SPEC["duplicate_tol"]
    live = [t for t in trials if getattr(t, "content", None) is not None
            and t.status not in ("filtered", "duplicate", "missing", "invalid")]
    buckets = {}
    for t in live:
        buckets.setdefault(t.content["skeleton"], []).append(t)
    parent = {t.trial_id: t.trial_id for t in live}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    ops, unchecked, closest, link = 0, set(), None, {}
    for ts in buckets.values():
        for i, a in enumerate(ts):
            for b in ts[i + 1:]:
                ca, cb = a.content, b.content
                if ca["sha256"] == cb["sha256"]:      # identical: no work, past any cap
                    link[(a.trial_id, b.trial_id)] = 0.0
                    parent[find(b.trial_id)] = find(a.trial_id)
                    continue
                # an array pair lies at least min(|raw mean difference|, |binarised mean
                # difference|) apart: past the tolerance on both, never near, no work
                if ca["means"].size and min(
                        float(np.max(np.abs(ca["means"] - cb["means"]))),
                        float(np.max(np.abs(ca["bmeans"] - cb["bmeans"])))) > tol:
                    if closest is None:
                        closest = (math.inf, a.trial_id, b.trial_id)
                    continue
                ra, rb = ca.get("rag"), cb.get("rag")
                work = int(ca["numbers"].size) + sum(int(x.size) for x in (ca["arrays"] or ())) + (
                    0 if ra is None or rb is None or ra["shingles"] is None or rb["shingles"] is None
                    else int(ra["shingles"].size + rb["shingles"].size))
                if ops + work > SPEC["duplicate_max_ops"] or (
                        ca["means"].size and (ca["arrays"] is None or cb["arrays"] is None)) or (
                        _rag_text_uncompared(ca, cb)):
                    if _numbers_apart(ca, cb):
                        # some scored number (an answer, an export parameter) of its first
                        # _NUMBERS_PREFIX already lies past the tolerance: never a copy, at a
                        # bounded cost (red team round 5: past duplicate_max_ops an honest RAG
                        # trial answering 0.5 beside one answering 0.35 was held, 0.8111 -> 0.7071)
                        continue
                    # not compared (a work cap) but maybe near: fails closed, the pair is
                    # grouped as a possible copy (counted once until a reviewer clears it)
                    unchecked.update((a.trial_id, b.trial_id))
                    link[(a.trial_id, b.trial_id)] = None
                    parent[find(b.trial_id)] = find(a.trial_id)
                    continue
                ops += work
                d = content_distance(ca, cb)
                if d <= tol:
                    link[(a.trial_id, b.trial_id)] = d
                    parent[find(b.trial_id)] = find(a.trial_id)
                elif closest is None or d < closest[0]:
                    closest = (d, a.trial_id, b.trial_id)
    out = []
    n_unkept = sum(t.content["arrays"] is None or (t.content.get("rag") is not None and
                   t.content["rag"]["shingles"] is None) for t in live)
    out.append(Check("run.duplicates", Status.INFO,
                     f"{len(live)} trial(s) compared by scored content in {len(buckets)} group(s) of "
                     f"equal structure; tolerance {tol:g}; "
                     + (f"the closest distinct pair lies {closest[0]:.3g} apart ({closest[1]}, "
                        f"{closest[2]}: {closest[0] / tol:.3g}x the tolerance)"
                        if closest and math.isfinite(closest[0]) else
                        "no two distinct trials share a structure and array means"),
                     None if closest is None or not math.isfinite(closest[0]) else closest[0], tol))
    if unchecked or n_unkept:
        out.append(Check("run.duplicates_unchecked", Status.REVIEW,
                         f"near-copies not checked past the work caps (duplicate_max_ops "
                         f"{SPEC['duplicate_max_ops']:g} numbers: {len(unchecked)} trial(s) "
                         f"{', '.join(sorted(unchecked)[:5])}{' ...' if len(unchecked) > 5 else ''}; "
                         f"duplicate_max_bytes {SPEC['duplicate_max_bytes']:g}: {n_unkept} trial(s) "
                         "compared by exact content only, RAG trials by the numbers their "
                         "retrievals state); a pair not compared whose structure and array "
                         "means agree, or RAG answers with other numbers stated, is held as a possible copy "
                         "(counted once until a reviewer clears it)",
                         len(unchecked) + n_unkept, 0))
    groups = {}
    for t in live:
        groups.setdefault(find(t.trial_id), []).append(t)
    cells = _cell_weights(trials)

    def adds(t):
        n, broken = cells.get((t.problem, t.style), (1, True))
        return (0.0 if broken or t.score is None else t.score / n, t.trial_id)
    for members in groups.values():
        if len(members) < 2:
            continue
        scored = [t for t in members if t.status == "scored"]
        keep = min(scored, key=adds) if scored else None
        for t in sorted(members, key=lambda t: t.trial_id):
            if t is keep:
                continue
            other = keep if keep is not None else min(members, key=lambda t: t.trial_id)
            if other is t:
                other = next(m for m in members if m is not t)
            d = content_distance(t.content, other.content)
            how = ("identical to" if t.content["sha256"] == other.content["sha256"]
                   else f"within {d:.3g} (tolerance {tol:g}) of" if d <= tol else
                   "grouped (through near copies, or pairs the work caps left uncompared: "
                   "run.duplicates_unchecked; same structure, array means within the "
                   "tolerance) with")
            msg = (f"scored content (trace, arrays, STL files, script) {how} trial {other.trial_id}'s, "
                   "under another harness key: a copied trial, or a deterministic agent repeating "
                   "itself; the copies count once")
            ra, rb = t.content.get("rag"), other.content.get("rag")
            m = None if ra is None or rb is None else rag_text_match(ra, rb)
            sd = None if m is None else stated_distance(ra, rb)
            if m is not None and d <= tol and (sd is None or sd > tol):
                msg += (f" (its retrievals state other numbers, but {m[1]} pieces of passage "
                        f"text, {m[0]:.3g} of the smaller set, are the other's: at least "
                        f"rag_copy_containment {SPEC['rag_copy_containment']:g} and "
                        f"rag_copy_min_shared {SPEC['rag_copy_min_shared']:g})")
            if t.status == "scored":
                before = t.score
                t.terms["overall_if_cleared"] = before
                t.terms["overall"] = t.score = 0.0
                for i, c in enumerate(checks):
                    if c.id == f"trial.{t.trial_id}.score":
                        checks[i] = Check(c.id, c.status, f"0.0000 (a duplicate of trial "
                                          f"{other.trial_id}: not counted until reviewed; "
                                          f"{before:.4f} if cleared)", 0.0)
                msg += (f" (trial {other.trial_id} keeps its score, the one adding least to the "
                        f"SCORE): counted 0.0 until a reviewer clears it ({before:.4f} if cleared)")
            out.append(Check(f"trial.{t.trial_id}.duplicate", Status.REVIEW, msg, other.trial_id))
    return out


# every field name the grader reads from a style's expected metadata (TRIAL_FORMAT.md, the
# `expected` table): a record's copy holding one of these where the harness's expectation has
# none claims something about what is scored (a declared RAG tolerance, where the harness's
# default applies) and disagrees with the key; any other extra field is read by nothing
_EXPECTED_FIELDS = frozenset({
    "stl_expected_params", "scale_xy", "scale_z", "threshold", "mirror_y", "distractor", "param",
    "export_value", "preview_value", "conditional", "compliance_threshold", "branch_high",
    "branch_low", "common", "multi_export", "exports", "conditions", "training_config", "seed",
    "epochs", "algorithm", "problem_id"} | {f"expected_{p}{t}" for p in ("volfrac", "forcedist", "rmin")
                                            for t in ("", "_tolerance")})


def first_difference(a, b, path: str = "", extras: list | None = None):
    """The first path at which two JSON values differ (numbers by value, booleans only equal to
    booleans), or None when they agree.  With `extras` (a list), a field that `a` holds and `b`
    lacks whose name the grader never reads (_EXPECTED_FIELDS) is no difference: its path is
    appended to `extras` instead."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is type(b) and a == b else (path or "(value)")
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            return None if float(a) == float(b) else (path or "(value)")
        except OverflowError:
            return None if a == b else (path or "(value)")
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if extras is not None and k not in b and k not in _EXPECTED_FIELDS:
                extras.append(f"{path}.{short(k, 40)}".lstrip("."))
                continue
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip(".")
            d = first_difference(a[k], b[k], f"{path}.{k}", extras)
            if d is not None:
                return d.lstrip(".")
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})".lstrip(".")
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]", extras)
            if d is not None:
                return d.lstrip(".")
        return None
    return None if a == b else (path or "(value)").lstrip(".")


def key_checks(rec: dict, key: dict, tid: str) -> list:
    """A record's own copy of the key (its `expected` metadata, a training-code `algorithm`)
    against the harness manifest: the manifest's is used; a disagreement is a FAIL finding
    (issue 24: a rewritten `expected` turned a wrong export into task completion 1.0).  A field
    the record's copy adds that no style's expectation has (_EXPECTED_FIELDS: a harness note, a
    prompt text) is read by nothing and disagrees with nothing: an INFO `key_extra` record; an
    added field the grader does read (a tolerance the manifest leaves at its default) is a
    disagreement."""
    diffs, extras = [], []
    try:
        if rec.get("expected") is not None:
            d = first_difference(rec["expected"], key.get("expected") or {}, extras=extras)
            if d is not None:
                diffs.append(f"expected.{d}")
        if PROBLEMS[key["problem"]]["family"] == "training_code" and "algorithm" in rec and \
                rec["algorithm"] != key["algorithm"]:
            diffs.append(f"algorithm {short(rec['algorithm'], as_repr=True)} (harness "
                         f"{key['algorithm']!r})")
    except (RecursionError, MemoryError):
        diffs.append("expected (nested too deeply to compare)")
    out = []
    if extras:
        out.append(Check(f"trial.{tid}.key_extra", Status.INFO,
                         f"the record's copy of its expectation holds {len(extras)} field(s) no "
                         "style's expectation has (read by nothing, never used): "
                         + ", ".join(f"expected.{short(e, 60)}" for e in extras[:5])
                         + (" ..." if len(extras) > 5 else ""), len(extras)))
    if not diffs:
        return out
    return out + [Check(f"trial.{tid}.key", Status.FAIL,
                        "the record's own copy of its key disagrees with the harness manifest at "
                        + "; ".join(short(d, 120) for d in diffs) + ": the harness's is used", diffs)]


def key_accounting(trials: list, run: "RunRefs", problems: set, styles: set) -> tuple:
    """Each harness key counts once in its cell (issue 24).  (placeholders, checks):
    several trial folders claiming one key keep the worst of them in the cell (invalid, then a
    None of the agent's own artefact, then a None, then the lowest score) and the others are
    `duplicate` (REVIEW, not counted); a key the manifest lists with no trial claiming it is a
    `missing` trial in its cell (its cell INVALID, counted 0: dropping a weak trial can never
    raise a mean)."""
    by_key, checks = {}, []
    for t in trials:
        if t.key is not None and t.status != "filtered":
            by_key.setdefault(t.key, []).append(t)

    def rank(t):
        if t.status == "invalid":
            return (0, 0.0, t.trial_id)
        if t.score is None:
            return (1 if t.artefact_none else 2, 0.0, t.trial_id)
        return (3, t.score, t.trial_id)
    for key, ts in by_key.items():
        if len(ts) < 2:
            continue
        keep = min(ts, key=rank)
        for t in ts:
            if t is keep:
                continue
            t.status = "duplicate"
            checks.append(Check(f"trial.{t.trial_id}.duplicate_key", Status.REVIEW,
                                f"claims the harness key {show_key(key)} that trial {keep.trial_id} "
                                f"also claims: the key counts once, with {keep.trial_id}'s "
                                "outcome (the worse of the claimants); this one is not counted",
                                keep.trial_id))
    missing = []
    for key, e in sorted((run.keys or {}).items(), key=lambda kv: repr(kv[0])):
        if key in by_key or e["problem"] not in problems or e["prompt_style"] not in styles:
            continue
        # ':' and '/' never occur in a folder's trial id (sanitised), so no folder shares it
        name = f"missing:{e['problem']}/{e['prompt_style']}/ex{short(e['example_id'], 20)}" \
               f"/seed{short(e['seed'], 20)}"
        t = Trial(name, problem=e["problem"], style=e["prompt_style"], status="missing", key=key)
        t.reasons.append(f"{show_key(key)}: the harness ran it but no trial folder claims it")
        missing.append(t)
    if missing:
        checks.append(Check("run.missing_trials", Status.FAIL,
                            f"{len(missing)} trial(s) the harness manifest lists have no trial "
                            "folder (each counted 0 in its cell, whose mean is then not taken): "
                            + ", ".join(show_key(t.key) for t in missing[:5])
                            + (" ..." if len(missing) > 5 else ""), len(missing), 0))
    return missing, checks


def budget_checks(run: "RunRefs") -> list:
    """What the run's budget (RunBudget) read and refused."""
    b = run.budget
    spent = time.monotonic() - b.t0
    out = [Check("run.budget", Status.INFO if not b.refused else Status.FAIL,
                 f"{b.bytes} bytes of trial files read in {spent:.1f} s (budget {b.max_bytes} bytes, "
                 f"{b.max_seconds:g} s)" + (f"; {len(b.refused)} read(s) refused past it, each "
                 "scoring 0 on what it feeds: " + "; ".join(b.refused[:5]) +
                 (" ..." if len(b.refused) > 5 else "") + " (--budget raises the time budget)"
                 if b.refused else ""), b.bytes, b.max_bytes)]
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


def trial_id_of(name: str) -> str:
    """The id a trial folder is printed and keyed by: its name when that is plain (letters,
    digits, '.', '_', '-'; at most 100 characters); otherwise the name sanitised and cut, plus
    '~' and 12 hex digits of its sha256, so no two folders share an id (second attack pass of
    issue 24: folders "x " and "x_" were one id, and the second one's design hid the first's
    from the design copy check; a plain name never holds '~')."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if safe == name and len(name) <= 100:
        return name
    return f"{safe[:87]}~{hashlib.sha256(os.fsencode(name)).hexdigest()[:12]}"


def grade_trial(tdir: str, run: RunRefs, problems: set, styles: set) -> tuple:
    """(Trial, checks) for one trial folder.  Never raises for bad input."""
    tid = trial_id_of(os.path.basename(tdir.rstrip(os.sep)))
    trial, checks = Trial(tid), []
    cid = f"trial.{tid}.record"
    try:
        if os.path.islink(tdir):
            raise Reject(cid, "trial folder is a symlink (refused)")
        if os.path.islink(os.path.join(tdir, SPEC["trial_file"])):
            raise Reject(cid, f"{SPEC['trial_file']} is a symlink (refused)")
        path = os.path.join(tdir, SPEC["trial_file"])
        if os.path.isfile(path):        # charged to the run's budget (refused past it)
            run.budget.charge(min(os.path.getsize(path), SPEC["max_json_bytes"]),
                              SPEC["trial_file"], cid)
        rec = read_json_file(path, cid, SPEC["max_json_bytes"])
        if not isinstance(rec, dict):
            raise Reject(cid, "trial.json is not a JSON object")
        problem, style = rec.get("problem"), rec.get("prompt_style")
        problem_ok = isinstance(problem, str) and problem in PROBLEMS
        key, unknown = None, None
        if problem_ok and isinstance(style, str) and style in PROBLEMS[problem]["styles"]:
            # the cell is known from here on: a trial invalid past this point still counts in
            # its cell (as None), so dropping a bad trial can never raise a cell's mean
            trial.problem, trial.style = problem, style
            try:        # the harness's key: claimed even when the record is otherwise malformed
                key = run.key_of(rec, problem, style, cid)
                trial.key = key["key"]
            except Reject as exc:
                unknown = exc
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
        if unknown is not None:
            raise unknown
        if not isinstance(rec.get("artefacts", {}), dict):
            raise Reject(cid, "trial.json: artefacts must be an object")
        calls = parse_trace(rec, tid)
    except Reject as exc:
        return invalid_trial(trial, exc.check, os.path.basename(tdir.rstrip(os.sep)), problems,
                             styles)
    cfg = PROBLEMS[problem]
    checks.append(Check(cid, Status.PASS, f"{problem} / {style}, {len(calls)} tool call(s); "
                        f"harness key {show_key(trial.key)}"))
    checks += key_checks(rec, key, tid) + trace_checks(calls, problem, tid)
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
            terms, more = score_design(rec, calls, problem, style, tdir, run, tid, key)
        elif fam == "rag_retrieval":
            terms, more = score_rag(key, calls, tid)
            # the parameters the key scores: a copy adding an answer it does not test is the
            # same trial (red team round 4: forcedist added, SCORE 0.8111 -> 0.8528)
            cond = key["expected"]["conditions"]
            run.content.setdefault(tid, []).append(("rag_scored", ["volfrac"] + [
                p for p in ("forcedist", "rmin") if cond.get(f"expected_{p}") is not None]))
        elif fam == "hpc_orchestration":
            terms, more = score_hpc(key, calls, problem, style, tid, rec)
        else:
            terms, more = score_training_code(rec, calls, problem, tdir, run, tid, key)
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
    trial.content = content_signature(problem, calls, run.content.get(tid, ()), run, tid)
    trial.content_sha256 = None if trial.content is None else trial.content["sha256"]
    return trial, checks + cl


