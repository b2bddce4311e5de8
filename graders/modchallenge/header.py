"""grade_modchallenge.py's opening: its docstring, the hoisted imports, its identity."""
from __future__ import annotations

# -- end of source-tree preamble: the build keeps only what follows --
#!/usr/bin/env python3
"""Grader for the modular-multiplication challenge (modchallenge): a learned model computes a*b mod p.

Run:
    python grade_modchallenge.py SUBMISSION --public        # the reproducible public score
    python grade_modchallenge.py SUBMISSION                 # a fresh random seed (private-eval simulation)
    python grade_modchallenge.py SUBMISSION --seed HEX      # one given seed (bytes.fromhex)
    python grade_modchallenge.py SUBMISSION --seeds 5       # five random seeds + the robustness table
    python grade_modchallenge.py SUBMISSION --seeds public,1111,deadbeef
    python grade_modchallenge.py --write-tests DIR --public # write tier_<k>.jsonl, no submission needed
    python grade_modchallenge.py SUBMISSION --public --gpu --memory 32   # a GPU model (resident-memory watchdog)

SUBMISSION is a directory: manifest.json, Python code, weights (see
reference/modchallenge/problem_spec.md).  The grader runs the challenge's eight
gates in order (manifest, artifact size, static analysis, test-set generation,
model load, preprocess isolation, determinism, inference within budget),
running the model only in a fresh child interpreter on a private copy, with the
inference budget enforced from outside, under an audit hook (PEP 578) that fails
anything compiled, unmarshalled or unpickled there which the static scan did not
read (g3.runtime_guard).  It reproduces the challenge's test
sets byte for byte without sympy (own BPSW nextprime).

Score: SCORE = overall_accuracy (mean accuracy over the completed scored tiers
1-10, incomplete tiers 0; the mean over seeds with --seeds) when the model is
ranked; 0.0 when a gate fails (gates 1-5 abort; a failed preprocess-isolation,
determinism or runtime-guard check reports the accuracies with ranked: false).  RESULT: PASS =
all gates pass and SCORE 1.0; PARTIAL = ranked, 0 < SCORE < 1 (including tiers
that ran out of budget); FAIL = a gate 1-7 failed or SCORE 0.  Exit codes: 0
full score, 1 graded below full score, 2 UNGRADED (--no-exec) or usage error,
3 grader failure.

Self-contained: the standard library only (numpy is not needed).
"""
# (imports: tools/build_graders.py writes here every standard-library import the parts declare)

GRADER_NAME = "grade_modchallenge"
GRADER_VERSION = "0.1.0"   # the package version (pyproject.toml); --version prints it

