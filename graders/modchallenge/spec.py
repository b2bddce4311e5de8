"""SPEC (a part of grade_modchallenge.py; see CONTRIBUTING.md)."""
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SPEC: every threshold, size and table (seed line / harness fact in comments)
# =============================================================================
SPEC = {
    "total": 1100,                      # seed §1 gate 4: "1100 problems = 100 x 11 tiers (0-10)"
    "budget_s": 300.0,                  # seed §1 gate 8: "<= 300 s wall (timeout_seconds)"
    "load_timeout_s": 300.0,            # harness: load "bounded separately" (value not given; ours)
    "max_artifact_bytes": 20 * 1024 ** 3,   # seed §1 gate 2: "<= 20 GB (EvalConfig.max_artifact_bytes)"
    "primes_per_tier": 5,               # seed §2: "draws 5 distinct primes per tier"
    "edge_cases_per_tier": 4,           # seed §2: "4 edge cases (a=0, b=0, a=1, b=1)"
    "rank_threshold": 0.90,             # seed §1 ranking keys: "accuracy >= 0.90"
    "determinism_checks": 10,           # seed §1 gate 7 / harness: 10 problems, Random(42)
    "determinism_rng": 42,
    "isolation_checks": 5,              # harness check_preprocess_isolation: 5 problems, Random(123)
    "isolation_rng": 123,
    "public_seed": b"modchallenge-public-benchmark-v1",   # seed §3
    "max_output_base": 2 ** 32,         # spec: output_base int in [2, 2^32] or "p"
    "entry_class_re": r"[a-zA-Z_]\w*(\.[a-zA-Z_]\w*)+",  # spec: manifest entry_class
    "max_manifest_bytes": 1 << 20,      # guarded input cap (ours)
    "max_source_bytes": 64 << 20,       # static analysis: larger .py files are a finding (ours)
    "max_digits": 8200,                 # significant output digits beyond this are wrong everywhere:
                                        # every answer < 2^8192 (tier-0 products of 4096-bit operands)
    "max_digit_bits": 9689,             # a digit wider than any base (2^32, or p <= 2^9689 - 1, the
                                        # largest tier-0 prime) is malformed; also keeps every digit
                                        # sent under Python's 4300-decimal-digit int/str limit
    "test_set_max_bytes": 64 << 20,     # --test-set file cap (ours)
    # issue 13: checks where the model really runs (ours; the harness checks before inference only)
    "inference_audits": 2,              # isolation audits at random batches of the inference stream,
                                        # plus one early (first 5% of batches) and one after the last
    "audit_credit_fraction": 0.20,      # the audits' own time is added to the deadline (and left
                                        # out of the tiers' wall times), up to this share of the
                                        # budget (the seed's GPU timing: <= 53 s of audit batches):
                                        # a model stalling on probes gains no more
    "audits_per_tier": 1,               # plus one at a random batch of every tier (a leak confined
                                        # to one tier, or to the later part of each, is audited)
    "audit_early_fraction": 0.05,
    "audit_pairs": 1,                   # problem pairs per audit: 3 probe problems each, answered
                                        # as usual (about 4% of the stream's problems in all)
    "stream_det_per_tier": 2,           # determinism re-run: problems drawn per completed tier from
                                        # the real inference stream, answered again (shuffled) by a
                                        # fresh process
    "memory_gb_max": 1024,              # --memory GB upper bound (usage error beyond; ours)
    # issue 23: the runtime guard (a PEP 578 audit hook in the model's process; ours)
    "guard_max_reports": 20,            # guard findings written per child run; the first decides the
                                        # verdict, the cap keeps a model flooding the hook from
                                        # flooding the result pipe (the rest are counted, not sent)
    # -- subprocess runner (the same names in every grader; read at call time) ----
    "runner_mem_bytes": 8 << 30,           # child address-space limit: a CPU model's weights and torch's arenas fit; GPU mode uses memory='resident'
    "runner_fsize_bytes": 256 << 20,  # largest file the child may write: a runaway writer cannot fill the disk
    "runner_cpu_slack_s": 30,         # RLIMIT_CPU = wall budget + this: a spinning child dies even unwatched
    "runner_term_grace_s": 2.0,       # SIGTERM -> SIGKILL: time to exit cleanly once the run is over
    "runner_output_cap_bytes": 64 << 10,   # stdout/stderr kept per stream: enough to show a traceback
    "runner_reply_cap_bytes": 256 << 20,   # reply channel: the largest honest study is ~10 MB of base64
    "runner_copy_cap_bytes": 20 * 1024 ** 3, # private submission copy: = max_artifact_bytes (gate 2): the model folder as the harness allows it
}

# seed §2 table / harness config.py: (tier, min_bits, max_bits, operand_bits, fixed primes)
TIERS = (
    (0, 1, 4096, 0, ()),                # tier 0: pure-multiplication diagnostic, unscored
    (1, 1, 3, 32, (2, 3, 5, 7)),
    (2, 4, 8, 48, ()),
    (3, 9, 16, 64, ()),
    (4, 17, 32, 96, ()),
    (5, 33, 64, 128, ()),
    (6, 65, 128, 256, ()),
    (7, 129, 256, 512, ()),
    (8, 257, 512, 1024, ()),
    (9, 513, 1024, 2048, ()),
    (10, 1025, 2048, 4096, ()),
)
SCORED_TIERS = tuple(t[0] for t in TIERS if t[0] > 0)
# seed §2 "Tier 0 ... no reduction": harness config.MULT_SUB_TIERS, 10 sub-tiers of operand bits
MULT_SUB_TIERS = ((1, 4), (5, 16), (17, 32), (33, 64), (65, 128), (129, 256), (257, 512),
                  (513, 1024), (1025, 2048), (2049, 4096))
# tier-0 p for sub-tiers whose max_bits > 128: the smallest listed Mersenne prime 2^e-1 with
# e >= 2*max_bits+1 (harness generator); sub-tiers <= 128 bits use nextprime((2^max_bits-1)^2).
TIER0_NEXTPRIME_MAX_BITS = 128
MERSENNE_EXPONENTS = (521, 607, 1279, 2203, 2281, 3217, 4253, 4423, 9689, 9941)
MERSENNE_FALLBACK = 19937

# spec "Static-analysis findings in the public harness"
FORBIDDEN_IMPORTS = frozenset({
    "sympy", "gmpy2", "mpmath", "flint", "decimal",
    "socket", "ssl", "urllib", "urllib2", "urllib3", "requests", "httpx", "http", "ftplib",
    "telnetlib", "smtplib", "poplib", "imaplib", "xmlrpc", "asyncio", "aiohttp",
    "subprocess", "multiprocessing", "ctypes", "cffi"})
DYNAMIC_EXEC = frozenset({"eval", "exec", "compile", "__import__"})
OS_PROCESS_CALLS = ("system", "popen")          # exact names
OS_PROCESS_PREFIXES = ("exec", "spawn", "fork")  # os.exec*, os.spawn*, os.fork*
# code the scan cannot read (the harness scans *.py only): flagged for review, never a finding
UNSCANNED_CODE_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")
# Escape hatches outside the harness's lists (issue 13): the harness's literal rules pass them, so
# failing them would disagree with its score; they are REVIEW_REQUIRED with the reason (--strict: 0).
REVIEW_IMPORTS = {
    "_ctypes": "the C module behind ctypes (a banned family)",
    "_cffi_backend": "the C module behind cffi (a banned family)",
    "_socket": "the C module behind socket (networking, a banned family)",
    "_ssl": "the C module behind ssl (networking, a banned family)",
    "_asyncio": "the C module behind asyncio (a banned family)",
    "_posixsubprocess": "the C module behind subprocess: starts processes (a banned family)",
    "_multiprocessing": "the C module behind multiprocessing (a banned family)",
    "_posixshmem": "multiprocessing's shared memory (a banned family)",
    "_decimal": "the C implementation of decimal (a banned family)",
    "_pydecimal": "the pure-Python implementation of decimal (a banned family)",
    "posix": "the C module behind os: system/fork/exec*/posix_spawn without the name os",
    "pty": "pty.spawn/pty.fork start processes",
    "importlib": "imports modules by computed name (reaches any banned module)",
    "imp": "imports modules by computed name (reaches any banned module)",
    "zipimport": "imports code from archives the scan does not read",
    "runpy": "runs modules and files as code",
    "code": "an interactive interpreter: runs source strings",
    "codeop": "compiles source strings",
    "builtins": "getattr(builtins, ...) reaches eval/exec/compile/__import__ by name",
    "marshal": "marshal.loads builds code objects",
    "dill": "unpickling serialised functions runs code",
    "cloudpickle": "unpickling serialised functions runs code",
    "symengine": "exact big-number arithmetic (like the banned sympy/gmpy2/flint)",
    "cypari2": "exact big-number arithmetic (like the banned sympy/gmpy2/flint)",
    "gmpy": "exact big-number arithmetic (like the banned gmpy2)",
    "__main__": "the grader's driver module (it shares the model's interpreter)",
}
# concurrent.futures' process pool starts processes (issue 23: its thread pool and `threading` are
# no escape hatch; the runtime guard fails any process the model starts, this is the early warning)
PROCESS_POOL_NAMES = frozenset({"ProcessPoolExecutor", "process"})   # concurrent.futures.<name>
# Unpickling globals the runtime guard allows (issue 23): the weights-only allowlist the task
# statement names for torch.load(weights_only=True) -- torch's own _get_allowed_globals (2.x):
# containers, tensor/parameter/storage classes, dtypes, quantisation schemes, the _rebuild_*
# functions -- plus numpy's array reconstruction (pickled ndarrays hold data only; every global
# inside an object array is checked on its own).  Regular expressions over "module.name" as the
# pickle names it (protocols < 3 write Python 2's __builtin__).
GUARD_PICKLE_GLOBALS = (
    r"collections\.(OrderedDict|Counter)", r"(builtins|__builtin__)\.(bytearray|set|frozenset|complex|slice)",
    r"_codecs\.encode", r"torch\.(Size|Tensor|device|nn\.parameter\.Parameter)",
    r"torch\.serialization\._get_layout", r"torch\._utils\._rebuild_\w+",
    r"torch\._tensor\._rebuild_from_type_v2", r"torch\.(storage\.)?\w*(Tensor|Storage)",
    r"torch\.(u?int\d+|q?u?int\d+(x\d+)?|float\d+(_\w+)?|bfloat16|bool|complex\d+|bits\w+|"
    r"half|double|cfloat|cdouble|chalf|short|long)",
    r"torch\.per_(tensor|channel)_\w+",
    r"numpy\.(core|_core)\.multiarray\.(_reconstruct|scalar)", r"numpy\.(ndarray|dtype)",
    r"numpy\.dtypes\.\w+DType",
)
# module.function calls that load code (pickle and friends), flagged wherever called
REVIEW_LOAD_CALLS = {
    "pickle": ("load", "loads", "Unpickler"), "_pickle": ("load", "loads", "Unpickler"),
    "cPickle": ("load", "loads", "Unpickler"), "shelve": ("open",), "joblib": ("load",),
    "marshal": ("load", "loads"), "dill": ("load", "loads"), "cloudpickle": ("load", "loads"),
}
OS_REVIEW_PREFIXES = ("posix_spawn",)            # os.posix_spawn, os.posix_spawnp
# introspection that reaches code objects, other frames (the grader's driver shares the process)
# or the interpreter's object graph: review (an honest model has no use for them)
INTROSPECTION_ATTRS = frozenset({"_getframe", "currentframe", "f_back", "f_locals", "f_globals",
                                 "gi_frame", "tb_frame", "__subclasses__", "__globals__", "__code__",
                                 "CodeType", "FunctionType"})   # types.CodeType(...): bytecode built as data
# calls reaching other frames, the interpreter's object graph or its tracing hooks (module.function)
INTROSPECTION_CALLS = {
    "gc": ("get_objects", "get_referrers", "get_referents"),
    "inspect": ("stack", "trace", "getouterframes", "getinnerframes"),
    "sys": ("settrace", "setprofile", "_current_frames", "monitoring"),
    "threading": ("settrace", "setprofile", "settrace_all_threads", "setprofile_all_threads"),
    "traceback": ("walk_stack", "extract_stack", "print_stack", "format_stack"),
}
# importlib's submodules that read package data, not code (`importlib.resources.files(__package__)`
# to find weights): not an escape hatch by themselves; other importlib attributes are
IMPORTLIB_DATA = ("resources", "metadata")
# a module named in a string constant (a call argument or a subscript) reaches it without an import
# statement (importlib.import_module('decimal'), sys.modules['os'], resources.files('decimal')):
# the banned families and the escape-hatch modules above, except names common as plain words
NAMED_MODULE_WORDS = frozenset({"http", "code", "imp"})
# operators that are the modular product's own pieces, reached without the % / pow syntax
MODULAR_ATTRS = {"operator": ("mod", "imod", "pow", "ipow", "__mod__", "__pow__")}
MODULAR_DUNDERS = frozenset({"__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__divmod__",
                             "__rdivmod__"})          # int.__mod__, x.__pow__(y, m), on any receiver
SOURCE_ENCODINGS_SEEN_AS_UTF8 = ("utf-8", "utf-8-sig")   # tokenize.detect_encoding's names
# codecs the interpreter decodes source with natively (PyUnicode_Decode's fast paths): any other
# declared codec is looked up through the codec registry, which the model's process can change
# before importing the file -- the runtime guard does not take such a file for what the scan read
GUARD_NATIVE_CODECS = frozenset({"utf-8", "utf-8-sig", "iso-8859-1", "latin-1", "latin1", "ascii",
                                 "us-ascii"})
# --gpu: what a CUDA runtime reads besides the Python installation (the runner already passes
# /dev/nvidia*): device selection variables, and a system CUDA toolkit where one is installed
GPU_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
           "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "LD_LIBRARY_PATH")
GPU_PATHS = ("/usr/local/cuda", "/usr/lib/wsl")

# exact primality: below this bound Miller-Rabin with the first 13 prime bases is proven
# deterministic (Sorenson & Webster 2015); above it, strong BPSW -- sympy.isprime's own split.
MR_DETERMINISTIC_BELOW = 3317044064679887385961981
MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


