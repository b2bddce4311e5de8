"""grade_engiai.py's opening: its docstring, the hoisted imports, its identity."""
from __future__ import annotations

# -- end of source-tree preamble: the build keeps only what follows --
#!/usr/bin/env python3
"""Grader for EngiAI evaluation runs: recorded agent trials rescored from their artefacts.

Run:
    python grade_engiai.py RUN_DIR                          # rescore every trial, print the table
    python grade_engiai.py RUN_DIR --problem beams2d        # only some problems (registry choices)
    python grade_engiai.py RUN_DIR --style workflow-distractor
    python grade_engiai.py RUN_DIR --json report.json --out rescored/
    python grade_engiai.py RUN_DIR --strict                 # anything inconclusive: FAIL, 0.0

RUN_DIR holds reference.h5 (ground-truth designs and objectives, MMD baselines) and
trials/<trial_id>/ (trial.json, arrays.h5, exported STL files, training_script.py);
reference/engiai/TRIAL_FORMAT.md describes every field.  Nothing submitted is executed:
scores are recomputed from the arrays, the STL geometry, the parsed training script and the
recorded tool trace; scores the trial claims are compared and reported, never used.

Per trial: design optimization = 0.65 design quality + 0.20 tool efficiency + 0.15 task
completion; RAG = rag_accuracy; HPC = 0.80 workflow completion + 0.20 tool efficiency;
training code = six weighted terms, model_quality = clip(baseline_mmd / agent_mmd, 0, 1).
A trial the harness could not make scorable (no baseline, no usable MMD, no ground truth,
thermoelastic2d unsupported by the agent's tools) has score None, and its (problem, style)
cell is printed UNSCORABLE / UNSUPPORTED with its reasons, never averaged; so is a cell holding
a trial whose record is malformed (INVALID): a bad trial is never silently dropped.  The
answer key is the harness's: reference.h5 lists every trial the harness ran, keyed by
(problem, style, example id, seed), with its expectations; a trial under a key it does not
list is INVALID, each key counts once, a missing one counts 0.

Score: the mean over fully scorable (problem, style) cells of the cell means, every INVALID
cell counting 0.0.  RESULT: PASS
when every trial was scorable and every artefact valid; PARTIAL when some cell is not
scorable, some artefact invalid or some trace needs review (the score covers the scorable
cells); UNGRADED when no cell is scorable or counts 0.0; FAIL (score 0.0) only under --strict, which makes
anything short of PASS fail (a gate on the run: trials and cells keep their None).  Exit codes: 0 PASS with score 1.0, 1 graded below that,
2 UNGRADED or usage error, 3 grader failure.  --no-exec changes nothing here: this grader
never executes what it grades (training scripts are only parsed), so it is accepted for
uniformity with the other graders and grading is identical.

Self-contained: needs only the standard library, numpy, scipy and h5py.
"""
# (imports: tools/build_graders.py writes here every standard-library import the parts declare)

GRADER_NAME = "grade_engiai"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

