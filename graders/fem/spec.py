"""SPEC (a part of grade_fem.py; see CONTRIBUTING.md)."""
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SPEC: every threshold, tolerance, mesh and file name (seed line in comments)
# =============================================================================
SPEC = {
    # -- run / sandbox --------------------------------------------------------
    "budget_s": 600.0,          # seed: "--budget, default 600 s per phase"
    "max_json_bytes": 1 << 20,  # guarded input size caps (not in seed)
    "max_npz_bytes": 64 << 20,
    "max_npz_elements": 1 << 22,  # decompressed size cap (the nine arrays hold 10,279 elements)
    "max_source_bytes": 1 << 20,
    # -- files ----------------------------------------------------------------
    "solver_file": "fem_solver.py",     # seed: "fem_solver.py present ... exposing solve(n)"
    "json_file": "results.json",        # seed: "Sidecar consistency -- results.json"
    "npz_file": "reference_arrays.npz",  # seed: "does not trust reference_arrays.npz either"
    # -- the problem (specs/fem.md "The problem") -------------------------------
    "meshes": (32, 64, 128, 256, 512, 1024, 2048),  # seed: "n_values exactly 2^p, p = 5..11"
    "artifact_n": 256,          # seed: "Tier 3 (the n = 256 artifact)"
    "artifact_points": 2561,    # seed: "(7,) / (2561,)"; x_i = i/2560
    "dense_factor": 10,         # seed: "the prescribed grids j/n and i/(10n)"
    "grader_gauss_points": 5,   # seed: "its own cubic-Hermite implementation (5-point Gauss)"
    # -- Tier 1 (seed: "dense error e*_n at n = 32, 64, 128 within +-25 %") ------
    "tier1_gold": {32: 5.402330e-07, 64: 3.459441e-08, 128: 2.188513e-09},
    "tier1_band": 0.25,         # seed: "within +-25 % of the gold reference"
    "order_band": (3.8, 4.2),   # seed: "the two coarse dense orders in [3.8, 4.2]"
    # -- Tier 2 ----------------------------------------------------------------
    "clean_orders_needed": 2,   # seed: "at least two of the three clean-regime dense orders (n = 32 -> 256)"
    "nodal_abs_max": 1e-8,      # seed: "e_n(32) < 1e-8"
    "nodal_ratio": 100.0,       # seed: "and < e*_n(32)/100"
    "roundoff_factor": 10.0,    # seed: "e*_n(2048) > 10 * e*_n(256)"
    # -- Tier 3 (the n = 256 artifact) -------------------------------------------
    "grid_atol": 1e-15,         # seed: "equal to i/2560 to 1e-15 absolute"; also the j/n, i/(10n) grids
    "uexact_atol": 1e-14,       # seed: "uexact_dense equal to the analytic e^x x^2(1-x)^2" (decision: a few ulp of 0.1)
    "error_field_atol": 1e-15,  # seed: "error_dense == uh_dense - uexact_dense" (decision: 1e-15 abs)
    "artifact_max_error": 1e-9,  # seed: "max-norm error recomputed from uh_dense below 1e-9"
    "artifact_rel": 1e-6,       # seed: "that recomputed max-norm error equal to dense_errors[3]" (decision: 1e-6 rel)
    # -- artifact provenance (seed: "Known limits ... Pointwise artifact reproduction")
    "artifact_tier3_atol": 1e-11,  # seed: "Any deviation above 1e-11 ... Tier 3 fails (0.5)"
    "artifact_fail_atol": 1e-9,    # seed: "above ... (1e-9) the run fails outright (0.0)"
    # -- array schema / sidecar ---------------------------------------------------
    "eoc_atol": 1e-6,           # seed: "both tails recomputed from the submitted errors" (decision: 1e-6 abs)
    "json_error_rel": 1e-6,     # seed: "nodal_study.table and dense_study.table ... against the arrays" (decision)
    "json_beta_atol": 1e-4,     # seed: "every beta recomputed" (decision: 1e-4 abs, allows 4-decimal rounding)
    "h_rel": 1e-12,             # seed: "h == 1/n"
    "lsq_order_tol": 0.25,      # seed: "least-squares fit over n = 32...256, tolerance 0.25"
    "asymptotic_order": 4,      # seed: "asymptotic_order == 4"
    "dofs_per_node": ["value", "slope"],  # seed: 'dofs_per_node == ["value", "slope"]'
    # -- provenance -------------------------------------------------------------
    "regen_rel": 1e-6,          # seed: "regenerating both error measures to within 1e-6 relative"
    # ... with an absolute floor: the errors are differences from u(x) evaluated in floating
    # point, and an exact solution written in another (exact) order of operations moves an
    # error by its own round-off, which is no tiny fraction of an error that is itself
    # round-off (e_n from n = 64).  Floor = regen_abs_floor_eps * eps * max|u| (1.5e-15): over
    # ten spellings of u on every mesh's nodes and dense points (reference/fem/
    # exact_order_spread.py) the largest change was 1.2-2.9 eps max|u| for factored forms
    # (np.e**x, exp(x/2)**2, math.exp among them: they move the gold's e_n(32) by 3.1e-6
    # relative, e_n(128) by 1.4e-6, beyond the seed's 1e-6) and
    # 23 for the expanded polynomial e^x (x^2 - 2x^3 + x^4) (cancellation; Horner 19): 2.8x
    # headroom above the worst, 22x above the factored forms; 2.5 % of e_n(64) = 6e-14.  Tiers are re-evaluated on the regenerated errors, so a
    # difference this small buys a fabricated table nothing.
    "regen_abs_floor_eps": 64.0,
    # Decision (problem_spec.md, "Reproduction"): a submitted error off by more than 1e-6 relative
    # but by at most 4e-9 * (n/256)^4 absolute (linear-solve round-off, growing like n^4; the same
    # code under 1/2/4 BLAS threads and 4 CPU kernels moved its errors 6.4x less than this at worst)
    # is REVIEW_REQUIRED (environment mismatch), beyond it FAIL.
    "regen_env_band_256": 4e-9,
    # seed: "compares the returned dense field pointwise at every mesh n = 32 ... 2048 to 1e-9".
    # Clean regime (n <= 256): 1e-9 flat.  Round-off regime (n >= 512): legitimate
    # solvers disagree (specs/fem.md); the tolerance is 1e-9 * (n/256)^4, the n^4
    # growth of the fourth-order operator's condition number, continuous with the
    # 1e-9 at n = 256.  Derivation (reference/fem/problem_spec.md, "Pointwise
    # tolerance"): the largest deviation of 16 legitimate solver/ordering variants
    # x 3 load quadratures from this grader's banded-LU 5-point solution, divided
    # by (n/256)^4, is 9.6e-11 (256), 2.4e-10 (512), 1.8e-10 (1024), 1.1e-10
    # (2048): headroom >= 4x at every mesh.  Wrong fields sit at method level
    # (slope-dropped: 7e-5 at n = 512 against a 1.6e-8 tolerance).
    "fidelity_atol": 1e-9,
    "fidelity_clean_max_n": 256,
    "fidelity_growth": 4,
    # -- provenance: the stiffness solve, its map and the reconstruction ---------------
    # seed: "observes a library linear solve of dimension 2(n-1), exactly the free value/slope
    # DOF count".  Decision (problem_spec.md, "What the audit proves"): the solve's matrix must be
    # the statement's K under a DOF permutation P, a symmetric diagonal scaling D and a common
    # factor: normalised by its diagonal, its off-diagonal entries are K's (+-1/2, +-1/4,
    # +-sqrt(3)/4) to this absolute tolerance, entries below it count as zero.  Honest
    # assemblies (also equilibrated, scaled slopes) sit at ~1e-16.
    "stiffness_entry_tol": 1e-9,
    # Its right-hand side must be the load vector under the same map, to a relative tolerance
    # rhs_rel_32 * (32/n)^rhs_rel_power (max norm in the statement's unknowns, over max |F|).
    # Measured against the grader's 5-point load at n = 32: 3-point Gauss 1.8e-9 (falling like
    # h^4), 4-point 1.8e-14; 2-point 3.4e-5 and midpoint 1.8e-4 (falling like h^2).  2.5e-7
    # (32/n)^3 is 137x above the 3-point load and 137x below the 2-point one at n = 32, and
    # wider apart at every finer mesh (>= 540x both ways from n = 256).
    "rhs_rel_32": 2.5e-7,
    "rhs_rel_power": 3,
    # The scale of the unknowns is read from that right-hand side, so the reconstruction allows
    # a common factor within lam_factor * rhs tolerance of 1 (measured 2.3x at n = 32).
    "lam_factor": 10.0,
    # The field must be the cubic-Hermite reconstruction of a 0/1 combination of the observed
    # stiffness-solve outputs to reconstruction_rel of its scale (max |field|, at least
    # reconstruction_floor).  Measured over 19 honest solver variants: at most 0.078 of the
    # tolerance (8.3e-17 at a scale of 0.106; 13x inside); the closest cheat (the exact
    # interpolant beside a real solve) is off by >= 1.8e-14 (n = 64, against a 5-point solve;
    # 4.3e-14 against the 3-point gold; 4.5e-12 at n = 32): 17x outside.
    "reconstruction_rel": 1e-14,
    "reconstruction_floor": 1e-2,
    # and its unknowns must solve K u = F: max |K u - F| (extended precision) <= the load
    # tolerance * max |F| + residual_roundoff * eps * max(|K| |u|) (a backward-stable solve;
    # the 19 honest variants reach at most 0.058 of it, 17x inside; fake n^4 round-off noise
    # on an interpolant exceeds it by > 1e6).
    "residual_roundoff": 16.0,
    "fit_enumerate_max": 8,     # up to 8 candidate outputs: every 0/1 combination is tried
    "max_candidates": 16,       # solve-output columns considered per call
    "max_calls": 64,            # library calls recorded per call of solve(n)
    # seed: "reruns n = 32 after replacing the results ... with non-finite values".  Decision:
    # every mesh has clean_runs clean calls and one audited call whose stiffness-solve outputs
    # are replaced by the grader's random vectors (z (1 + U(-1/2, 1/2)) + audit_additive max|z|
    # N(0, 1), per entry; drawn after the child showed z); at audit_nan_meshes another with NaN
    # at audit_nan_entries chosen entries.  Each call is a fresh fork, in a shuffled order.
    # One clean call is enough: the audited call is the second regeneration (determinism is
    # judged on what its solve returned before the substitute; see check_deterministic).
    "clean_runs": 1,
    # Jobs forked at once by the run's one warm parent (one numpy/scipy import, both cores busy;
    # each job its own child, process group and user namespace, its asks answered by job id).
    "job_concurrency": 2,
    # Not a threshold: how long the grader's own work waits for the child's launch (~20 ms on
    # a quiet machine) before it starts anyway (it only gives the launch the interpreter lock).
    "launch_wait_s": 0.5,
    "audit_additive": 0.05,
    "audit_nan_meshes": (32,),
    "audit_nan_entries": 2,
    # seed: "solve(n) must be deterministic".  Two calls of a mesh compute the same field
    # pointwise up to the grader's first substitute: bitwise is expected (same code and inputs,
    # BLAS pinned to one thread); this is the tolerance (the reconstruction round-off, far below
    # any jitter that matters).  After the substitute each field is held to its own solve
    # outputs by the reconstruction tolerance (1.1e-15 absolute here), so jitter added after
    # the solve fails there, jitter before or in it fails here.
    "determinism_atol": 1e-15,
    # An explicit inverse Z = inv(K) is substituted by Z + u v^T: the field must move by
    # exactly beta = v^T b / gamma times the reconstruction of u (beta predicted from the load
    # vector within lam_tol), to this fraction of its scale.  Measured (numpy.linalg.inv, every
    # mesh): at most 1.1e-15 relative, 93x inside; a field that does not follow is off by O(1).
    "inverse_audit_rel": 1e-13,
    # grader self-check: its own 5-point solution must reproduce the method error
    "self_check_rel": 1e-3,     # specs/fem.md: e*(32) = 5.402333e-07 measured independently
    # -- subprocess runner (the same names in every grader; read at call time) ----
    "runner_mem_bytes": 16 << 30,          # child address-space limit: BLAS threads reserve address space per thread, so this is generous
    "runner_fsize_bytes": 256 << 20,  # largest file the child may write: a runaway writer cannot fill the disk
    "runner_cpu_slack_s": 30,         # RLIMIT_CPU = wall budget + this: a spinning child dies even unwatched
    "runner_term_grace_s": 2.0,       # SIGTERM -> SIGKILL: time to exit cleanly once the run is over
    "runner_output_cap_bytes": 64 << 10,   # stdout/stderr kept per stream: enough to show a traceback
    "runner_reply_cap_bytes": 256 << 20,   # reply channel: the largest honest study is ~10 MB of base64
    "runner_copy_cap_bytes": 512 << 20,      # private submission copy: a solver file and its folder; far above any honest submission
}


