"""HOW MODEL QUALITY IS GRADED (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import hashlib
import math
import os
from graders.common.guarded import parse_python
from graders.common.records import Check, Reject, Status
from graders.engiai.design import binarize
from graders.engiai.families import Unscorable, job_completed, submitted_jobs, succeeded, weighted
from graders.engiai.guarded import read_h5_array, safe_member
from graders.engiai.run import RunRefs
from graders.engiai.spec import ALGORITHMS, PROBLEMS, SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# HOW MODEL QUALITY IS GRADED: training-code generation (six terms, MMD, UNSCORABLE)
# =============================================================================
def copy_spaces(a):
    """{space: (n, D) float64}: the arrays flattened, as raw values and binarised (> binarize_at);
    copies are measured in both (a copy plus noise below the threshold is identical binarised,
    a copy with a few flipped cells is close raw)."""
    import numpy as np
    flat = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    return {"raw": flat, "binarised": binarize(flat).astype(np.float64)}


def reference_spacing(refs) -> dict:
    """{space: spacing or None}: the copy_scale_percentile-th percentile of the reference designs'
    nearest-neighbour distances (each design to its nearest other, duplicates left out); None
    when fewer than two distinct designs (no spacing to compare with)."""
    import numpy as np
    from scipy.spatial.distance import cdist
    out = {}
    for space, x in copy_spaces(refs).items():
        d = cdist(x, x)
        d[d == 0] = np.inf                      # itself and exact duplicates
        nn = d.min(axis=1)
        nn = nn[np.isfinite(nn)]
        out[space] = float(np.percentile(nn, SPEC["copy_scale_percentile"])) if nn.size else None
    return out


# rigid moves of a design: the four flips (left-right, up-down, both) times the cyclic shifts by
# up to copy_rigid_shift cells on each axis; the identity is the plain distance
def rigid_moves():
    k = SPEC["copy_rigid_shift"]
    return tuple((f, dy, dx) for f in range(4) for dy in range(-k, k + 1) for dx in range(-k, k + 1)
                 if (f, dy, dx) != (0, 0, 0))


def rigid_move(a, f: int, dy: int, dx: int):
    import numpy as np
    a = a[:, :, ::-1] if f & 1 else a
    a = a[:, ::-1, :] if f & 2 else a
    return np.roll(a, (dy, dx), axis=(1, 2))


def rigid_affordable(rows: int, group: int, size: int) -> bool:
    """Whether comparing `rows` designs with every rigid move of `group` designs of `size` cells
    (both spaces) stays within copy_rigid_max_ops."""
    return len(rigid_moves()) * rows * group * size * 2 <= SPEC["copy_rigid_max_ops"]


def copy_ratios(samples, known, spacing: dict, *, rigid: bool = False, same: bool = False):
    """Per sample: the smallest over spaces of (distance to the nearest known design) / (that
    space's reference spacing); inf where no space has a spacing.  With rigid, the known
    designs' rigid moves (flips, small shifts) count as known designs too (a reference shifted
    by a cell is a copy).  With same, samples are the known designs themselves and row i is
    never compared with row i (nor with its own moves)."""
    import numpy as np
    from scipy.spatial.distance import cdist
    ratio = np.full(len(samples), np.inf)
    xs = copy_spaces(samples)
    known = np.asarray(known)
    for move in ((0, 0, 0),) + (rigid_moves() if rigid else ()):
        ks = copy_spaces(known if move == (0, 0, 0) else rigid_move(known, *move))
        for space, x in xs.items():
            if not spacing.get(space):
                continue
            d = cdist(x, ks[space])     # exact, and no BLAS threads (which crawl on a loaded host)
            if same:
                d[np.arange(len(x)), np.arange(len(x))] = np.inf
            ratio = np.minimum(ratio, d.min(axis=1) / spacing[space])
    return ratio


def reference_near_rate(refs, group, spacing: dict, *, same: bool, rigid: bool = False,
                        frac: float | None = None) -> tuple:
    """(near rate, exact rate) of the reference designs against a group of known designs: the
    fraction of reference designs nearer than frac (default copy_distance_frac) of the spacing (either space;
    with rigid, also to a rigid move of a group design) to some row of the group, and the
    fraction byte-identical to one.  With same=True the group is the references themselves
    (each against the others; duplicates count).  A reference design is a fresh draw of the
    data, as an honest generator's sample is: what the data shows against a group is what an
    honest sample shows against it."""
    import collections
    import numpy as np
    n = len(refs)
    if n < 2:
        return 0.0, 0.0
    ratio = copy_ratios(refs, group, spacing, rigid=rigid, same=same)
    gh = [hashlib.sha256(r.tobytes()).digest() for r in group]
    rh = [hashlib.sha256(r.tobytes()).digest() for r in refs]
    count = collections.Counter(gh)
    exact = sum(count[h] > (1 if same else 0) for h in rh)
    frac = SPEC["copy_distance_frac"] if frac is None else frac
    return float(np.mean(ratio < frac)), exact / n


def baseline_threshold(refs, bsm, spacing: dict, rigid: bool) -> tuple:
    """(threshold, median): the near-copy threshold against the reference designs, as a
    fraction of the spacing: copy_distance_frac, or copy_baseline_frac of the median distance
    of the baseline's own samples to the references when that is smaller (issue 24: a model
    whose samples lie as near the references as the committed baseline's do is not copying;
    the sample run's baseline lies at 0.2 of the spacing, so its threshold is 0.1)."""
    import numpy as np
    med = float(np.median(copy_ratios(bsm, refs, spacing, rigid=rigid)))
    return min(SPEC["copy_distance_frac"], SPEC["copy_baseline_frac"] * med), med


_COPY_GROUPS = (("reference", "reference designs"), ("baseline_samples", "baseline's samples"))


def sample_copy_checks(samples, base: dict, tid: str) -> tuple:
    """(held, credited, checks): are the samples copies of the reference designs or of the
    baseline's samples, exactly (bytes) or by distance (copy_ratios below copy_distance_frac)?
    Each group is judged against what the data itself shows: the reference designs' near rate
    p against that group (reference_near_rate: each reference against the other references, or
    against the baseline's samples) is what an honest generator's samples show.  The set is held
    for review (REVIEW sample_copies) when its near share against a group exceeds p by more than
    copy_max_share plus copy_share_z standard errors of the two proportions, or when a sample
    is an exact copy of a row no reference design duplicates.  `credited` masks the samples the
    MMD is computed on: near-copies within the allowed share but beyond the count p predicts
    (p m + copy_share_z standard deviations, per group; the nearest ones first) are left out,
    so they buy nothing; a set left with nothing is held.  An INFO record gives the nearest
    ratio either way."""
    import numpy as np
    m, frac = samples.shape[0], SPEC["copy_distance_frac"]
    n_ref = len(base["reference"])
    rows = [hashlib.sha256(row.tobytes()).digest() for row in samples]
    size = int(np.prod(samples.shape[1:]))
    rigid = bool(base.get("rigid")) and rigid_affordable(
        m, n_ref + len(base["baseline_samples"]), size)
    ratios, near_any, held_by = np.full(m, np.inf), np.zeros(m, dtype=bool), []
    excess = np.zeros(m, dtype=bool)
    exact_total = 0
    # against the references the threshold is the baseline's (baseline_threshold), against the
    # baseline's samples copy_distance_frac
    ref_thr, ref_med = base.get("ref_threshold" if rigid else "ref_threshold_plain") or (frac, None)
    for key, label in _COPY_GROUPS:
        thr = ref_thr if key == "reference" else frac
        group = base[key]
        gset = {hashlib.sha256(r.tobytes()).digest() for r in group}
        exact = sum(h in gset for h in rows)
        r = copy_ratios(samples, group, base["spacing"], rigid=rigid)
        ratios = np.minimum(ratios, r)
        near_any |= r < thr
        near = int(np.sum(r < thr))
        p, p_exact = base["near_rate" if rigid else "near_rate_plain"][key]
        # beyond the count the data's own rate predicts (plus copy_share_z of its noise), the
        # nearest near-copies are excess; with p = 0 every near-copy is
        expect = p * m + SPEC["copy_share_z"] * math.sqrt(p * (1.0 - p) * m * (1.0 + m / n_ref))
        n_excess = max(0, near - int(math.floor(expect + 0.5)))
        excess[np.argsort(r, kind="stable")[:n_excess]] = True
        pt = (p * n_ref + 0.5) / (n_ref + 1.0)     # the rate's uncertainty, also at 0 of n
        allowed = p + SPEC["copy_max_share"] + SPEC["copy_share_z"] * math.sqrt(
            pt * (1.0 - pt) * (1.0 / m + 1.0 / n_ref))
        exact_total += exact
        if (exact > 0 and p_exact == 0.0) or near / m > allowed:
            held_by.append(f"{near} of {m} nearer than {thr:.3g} of the reference spacing to the "
                           f"{label} ({exact} exact; the reference designs' own rate against "
                           f"them is {p:.3g}, at most {allowed:.1%} allowed)")
    near = int(near_any.sum())
    spaced = {k: v for k, v in base["spacing"].items() if v}
    checks = []
    if not spaced:
        checks.append(Check(f"trial.{tid}.sample_distance", Status.INFO,
                            "the reference designs hold fewer than two distinct designs: no "
                            "spacing, so only exact copies were checked"))
    else:
        checks.append(Check(f"trial.{tid}.sample_distance", Status.INFO,
                            f"nearest sample at {float(ratios.min()):.3g} of the reference spacing "
                            f"(median {float(np.median(ratios)):.3g}; spacing "
                            + ", ".join(f"{k} {v:.4g}" for k, v in spaced.items())
                            + f"); near-copy below {frac:g} ({ref_thr:.3g} against the references"
                            + (f", half the baseline's own samples' median {ref_med:.3g}"
                               if ref_thr < frac else "")
                            + f"): {near} of {m}; the reference designs' own near rate "
                            + ", ".join(f"{base['near_rate' if rigid else 'near_rate_plain'][k][0]:.3g}"
                                        f" ({lab})" for k, lab in _COPY_GROUPS)
                            + ("; flips and shifts by up to "
                               f"{SPEC['copy_rigid_shift']} cells count as copies" if rigid else
                               "; rigid moves NOT checked (beyond copy_rigid_max_ops: held "
                               "for review)"),
                            float(ratios.min()), frac))
    if not rigid:
        # the cap stopped the shifted/flipped-copy check: fail closed (a reference shifted by a
        # cell sits where honest new designs sit in the plain distance, so an unchecked set
        # could be one); the reviewer sees why
        work = len(rigid_moves()) * m * (n_ref + len(base["baseline_samples"])) * size * 2
        held_by.append(f"flipped and shifted copies were not checked: the check needs {work:.3g} "
                       f"pair-cells against copy_rigid_max_ops = {SPEC['copy_rigid_max_ops']:.3g}"
                       " (fewer samples or references fit)")
    if excess.all() and not held_by:        # nothing would be left to score: a copied set
        held_by.append(f"every one of the {m} sample(s) is a near-copy")
    held = bool(held_by)
    credited = np.ones(m, dtype=bool)
    if held:
        n = max(exact_total, near)
        what = (f"{n} of {m} samples are copies of the reference designs or of the baseline's "
                "samples" if n or rigid else f"the {m} samples could not be cleared of copies")
        checks.append(Check(f"trial.{tid}.sample_copies", Status.REVIEW,
                            f"{what} ({'; '.join(held_by)}): the MMD would measure "
                            "copied data, not the agent's model; model_quality is not credited "
                            "until a reviewer clears it", n, 0))
    elif excess.any():
        credited = ~excess
        k = int(excess.sum())
        checks.append(Check(f"trial.{tid}.sample_copies_excluded", Status.INFO,
                            f"{k} of {m} samples are near-copies beyond what the reference designs' "
                            f"own rate predicts (nearer than {ref_thr:.3g}/{frac:g} of the reference spacing to a "
                            "known design, within the allowed share): left out of the MMD", k, 0))
    return held, credited, checks


def sample_domain_checks(samples, tid: str) -> list:
    """Samples are designs: densities in [0, 1] (within density_tol).  Values outside are a
    finding (REVIEW, model_quality not credited until cleared), never clipped or binarised
    silently (issue 24); an unclamped generator's overshoot is for a reviewer to clear."""
    lo, hi = SPEC["density_range"]
    bad = (samples < lo - SPEC["density_tol"]) | (samples > hi + SPEC["density_tol"])
    if not bad.any():
        return []
    return [Check(f"trial.{tid}.sample_domain", Status.REVIEW,
                  f"{int(bad.sum())} sample value(s) outside the density domain [{lo:g}, {hi:g}] "
                  f"(min {float(samples.min()):.6g}, max {float(samples.max()):.6g}): the MMD of "
                  "out-of-domain designs is not credited until a reviewer clears it",
                  int(bad.sum()), 0)]


def mmd(x, y, sigma: float) -> float:
    """Biased Gaussian-kernel MMD on flattened samples: mean Kxx + mean Kyy - 2 mean Kxy,
    K = exp(-|a - b|^2 / (2 sigma^2)); clamped at 0 against round-off."""
    import numpy as np
    from scipy.spatial.distance import cdist
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    g = 1.0 / (2.0 * sigma * sigma)

    def k(a, b):
        return np.exp(-g * cdist(a, b, "sqeuclidean")).mean()
    return max(0.0, float(k(x, x) + k(y, y) - 2.0 * k(x, y)))


def model_quality(baseline_mmd: float, agent_mmd: float) -> float:
    """seed: clip(baseline_mmd / agent_mmd, 0, 1); an agent MMD of 0 matches the reference: 1."""
    if agent_mmd <= 0.0:
        return 1.0
    return min(1.0, max(0.0, baseline_mmd / agent_mmd))


def last_result(calls: list, name: str):
    hits = [c for c in calls if c["name"] == name]
    return hits[-1] if hits else None


def score_training_code(rec: dict, calls: list, problem: str, tdir: str, run: "RunRefs",
                        tid: str, key: dict) -> tuple:
    """(terms, checks): syntax (the script parses), code_quality (validate_training_script, the
    local one-epoch gate, succeeded), dryrun (dryrun_training_script, the one-epoch SLURM job,
    succeeded), slurm_accepted (submit_slurm_job returned a job id), job_completion (the
    monitored job ended COMPLETED), model_quality (MMD against the recorded baseline)."""
    cfg, checks, terms = PROBLEMS[problem], [], {}
    arts = rec.get("artefacts") if isinstance(rec.get("artefacts"), dict) else {}
    algorithm, seed = key["algorithm"] or ALGORITHMS[0], key["seed"]    # the harness's, not the record's
    # syntax: parsed, never executed
    syntax = 0.0
    if arts.get("training_script") is None:
        checks.append(Check(f"trial.{tid}.script", Status.INFO, "no training script written: syntax 0"))
    else:
        cid = f"trial.{tid}.script"
        try:
            path = safe_member(tdir, arts["training_script"], cid)
            if not os.path.isfile(path):
                raise Reject(cid, f"{arts['training_script']} missing")
            if os.path.getsize(path) > SPEC["max_script_bytes"]:
                raise Reject(cid, f"{arts['training_script']} larger than {SPEC['max_script_bytes']} bytes")
            run.budget.charge(os.path.getsize(path), arts["training_script"], cid)
            with open(path, "rb") as fh:
                src = fh.read()
            try:
                parse_python(src, arts["training_script"], cid)
                syntax = 1.0
                checks.append(Check(cid, Status.INFO, f"{arts['training_script']} parses"))
            except Reject as exc:
                # the agent's syntax error is its score (syntax 0, an INFO line); a script the
                # parser cannot take (nested too deeply, too large) is a FAIL record
                status = Status.INFO if isinstance(exc.__context__, SyntaxError) else Status.FAIL
                checks.append(Check(cid, status, f"{exc.check.message[:160]}: syntax 0"))
        except Reject as exc:
            checks.append(Check(exc.check.id, Status.FAIL, exc.check.message + ": syntax 0"))
    terms["syntax"] = syntax
    run.content.setdefault(tid, []).append(("syntax", syntax))   # what is scored of the script
    v = last_result(calls, "validate_training_script")
    terms["code_quality"] = 1.0 if v is not None and succeeded(v) else 0.0
    d = last_result(calls, "dryrun_training_script")
    terms["dryrun"] = 1.0 if d is not None and succeeded(d) else 0.0
    terms["slurm_accepted"] = 1.0 if submitted_jobs(calls) else 0.0
    terms["job_completion"] = 1.0 if job_completed(calls) else 0.0
    # model quality: the grader's own MMD, or None with the reason
    try:
        base = run.baseline(problem, algorithm, seed)
        if arts.get("samples") is None:
            raise Unscorable("no usable MMD: the evaluation produced no samples "
                             "(artefacts.samples is null)", artefact=True)
        cid = f"trial.{tid}.samples"
        try:
            samples = read_h5_array(safe_member(tdir, SPEC["arrays_file"], cid), "samples", cid, ndim=3,
                                    budget=run.budget)
            if tuple(samples.shape[1:]) != tuple(cfg["design_shape"]) or samples.shape[0] < 1:
                raise Reject(cid, f"array samples has shape {samples.shape}, expected "
                                  f"(n, {cfg['design_shape'][0]}, {cfg['design_shape'][1]})")
        except Reject as exc:
            checks.append(exc.check)
            raise Unscorable(f"no usable MMD: {exc.check.message}", artefact=True)
        run.content.setdefault(tid, []).append(("samples", samples))
        held, credited, more = sample_copy_checks(samples, base, tid)
        checks += more + sample_domain_checks(samples, tid)
        held = held or any(c.id.endswith(".sample_domain") for c in checks)
        agent = mmd(samples[credited], base["reference"], base["sigma"])
        terms["agent_mmd"], terms["baseline_mmd"], terms["sigma"] = agent, base["mmd"], base["sigma"]
        terms["model_quality"] = model_quality(base["mmd"], agent)
        if held:        # copied samples: not credited until reviewed; the value kept for the reviewer
            terms["model_quality_if_cleared"] = terms["model_quality"]
            terms["model_quality"] = 0.0
        checks.append(Check(f"trial.{tid}.mmd", Status.INFO,
                            f"agent MMD {agent:.6g} vs baseline {base['mmd']:.6g} (sigma {base['sigma']:g}, "
                            f"{samples.shape[0]} samples vs {base['reference'].shape[0]} reference)"))
        checks += base["checks"]
    except Unscorable as exc:
        terms["model_quality"] = None
        terms["model_quality_unscorable_reason"] = str(exc)
        terms["model_quality_unscorable_artefact"] = exc.artefact
        terms["overall"] = None
        return terms, checks
    terms["overall"] = weighted(cfg["weights"], terms)
    return terms, checks


