"""The harness decoder's rules, the ranking keys on hand-built tier results, and the verdict."""
import pytest

from test_modchallenge_support import grader

P = 1000003


def dec(digits, base=10, p=P, tier_zero=False):
    return grader().decode_answer(digits, base, p, tier_zero)


def test_decoder_reads_msb_first_and_allows_leading_zeros():
    assert dec([1, 2, 3]) == 123
    assert dec([0, 0, 4, 2]) == 42
    assert dec([1, 0, 1], base=2) == 5
    assert dec([]) == 0                                   # [] decodes to 0


@pytest.mark.parametrize("digits", [[True], [1, False], [1.0], ["1"], [None], [[1]]])
def test_decoder_refuses_digits_of_the_wrong_type(digits):
    with pytest.raises(grader().Malformed):
        dec(digits)


@pytest.mark.parametrize("out", [(1, 2), "12", 12, None, {"0": 1}])
def test_decoder_refuses_non_lists(out):
    with pytest.raises(grader().Malformed):
        dec(out)


def test_decoder_refuses_numpy_integers_when_numpy_is_present():
    np = pytest.importorskip("numpy")
    with pytest.raises(grader().Malformed):
        dec([np.int64(1)])
    with pytest.raises(grader().Malformed):
        dec(np.array([1, 2]))


def test_decoder_digit_range_is_the_base():
    with pytest.raises(grader().Malformed):
        dec([10])
    with pytest.raises(grader().Malformed):
        dec([-1])
    assert dec([2 ** 32 - 1], base=2 ** 32, p=2 ** 61 - 1) == 2 ** 32 - 1


def test_base_p_uses_the_prime():
    assert dec([1, 5], base="p", p=17, tier_zero=True) == 22
    assert dec([0, 16], base="p", p=17) == 16
    assert dec([P - 1], base="p") == P - 1
    with pytest.raises(grader().Malformed):
        dec([P], base="p")


def test_value_at_or_above_p_is_wrong_on_scored_tiers_only():
    with pytest.raises(grader().Malformed):
        dec([int(c) for c in str(P)])
    assert dec([int(c) for c in str(P)], tier_zero=True) == P
    assert dec([int(c) for c in str(P - 1)]) == P - 1


def test_packed_outputs_from_the_child():
    g = grader()
    assert g.decode_packed({"m": "digit 0 has type bool"}, 10, P, False) is None
    assert g.decode_packed([4, 2], 10, P, False) == 42
    assert g.decode_packed([True], 10, P, False) is None      # a forged JSON bool
    assert g.decode_packed("42", 10, P, False) is None


def T(tid, acc, completed=True, total=100):
    return grader().TierResult(tid, total, round(acc * total), completed)


def test_ranking_keys_all_perfect():
    assert grader().ranking_keys([T(k, 1.0) for k in range(11)]) == (1.0, 10)


def test_ranking_keys_none_above_90_is_minus_one():
    assert grader().ranking_keys([T(k, 0.5) for k in range(11)]) == (0.5, -1)
    assert grader().ranking_keys([T(0, 1.0)] + [T(k, 0.2) for k in range(1, 11)]) == (0.2, -1)


def test_ranking_keys_highest_tier_is_not_a_contiguous_run():
    tiers = [T(0, 0.0), T(1, 0.5), T(2, 0.95), T(3, 0.1)] + [T(k, 0.0) for k in range(4, 7)] + \
            [T(7, 0.90), T(8, 0.89), T(9, 0.0), T(10, 0.2)]
    overall, htop = grader().ranking_keys(tiers)
    assert htop == 7
    assert overall == round((0.5 + 0.95 + 0.1 + 0.90 + 0.89 + 0.2) / 10, 4)


def test_ranking_keys_incomplete_tiers_count_zero_and_tier0_never_counts():
    tiers = [T(0, 1.0)] + [T(k, 1.0) for k in range(1, 10)] + [T(10, 1.0, completed=False)]
    assert grader().ranking_keys(tiers) == (0.9, 9)
    tiers = [T(0, 0.0, completed=False)] + [T(k, 1.0) for k in range(1, 11)]
    assert grader().ranking_keys(tiers) == (1.0, 10)


def test_ranking_keys_round_to_four_places():
    tiers = [T(0, 0)] + [T(k, 1 / 3, total=3) for k in range(1, 11)]
    assert grader().ranking_keys(tiers)[0] == 0.3333


def C(cid, status, measured=None):
    g = grader()
    return g.Check(cid, g.Status[status], "m", measured)


GATES_OK = [C(f"g{k}.x", "PASS") for k in range(1, 8)]


def test_verdict_full_score_pass():
    assert grader().verdict(GATES_OK + [C("g8.inference", "PASS"), C("rank.overall_accuracy", "INFO", 1.0)],
                            strict=False, no_exec=False) == ("PASS", 1.0)


def test_verdict_partial_is_the_overall_accuracy():
    assert grader().verdict(GATES_OK + [C("g8.inference", "PASS"), C("rank.overall_accuracy", "INFO", 0.997)],
                            strict=False, no_exec=False) == ("PARTIAL", 0.997)


def test_verdict_budget_overrun_keeps_finished_tiers():
    assert grader().verdict(GATES_OK + [C("g8.inference", "FAIL"), C("rank.overall_accuracy", "INFO", 0.6)],
                            strict=False, no_exec=False) == ("PARTIAL", 0.6)


@pytest.mark.parametrize("gate", ["g1.manifest", "g3.static_check", "g5.model_load",
                                  "g6.preprocess_isolation", "g7.determinism", "s2.g7.determinism"])
def test_verdict_failed_gate_1_to_7_is_fail_zero_even_with_accuracies(gate):
    checks = GATES_OK + [C(gate, "FAIL"), C("rank.overall_accuracy", "INFO", 1.0)]
    assert grader().verdict(checks, strict=False, no_exec=False) == ("FAIL", 0.0)


def test_verdict_zero_accuracy_is_fail_and_strict_review_is_fail():
    g = grader()
    assert g.verdict(GATES_OK + [C("rank.overall_accuracy", "INFO", 0.0)], strict=False,
                     no_exec=False) == ("FAIL", 0.0)
    checks = GATES_OK + [C("g8.reply_channel", "REVIEW"), C("rank.overall_accuracy", "INFO", 0.5)]
    assert g.verdict(checks, strict=False, no_exec=False) == ("PARTIAL", 0.5)
    assert g.verdict(checks, strict=True, no_exec=False) == ("FAIL", 0.0)
    assert g.verdict(checks, strict=False, no_exec=True) == ("UNGRADED", None)


def test_verdict_with_several_seeds_is_the_mean():
    checks = GATES_OK + [C("s1.rank.overall_accuracy", "INFO", 1.0), C("s2.rank.overall_accuracy", "INFO", 0.99)]
    assert grader().verdict(checks, strict=False, no_exec=False) == ("PARTIAL", 0.995)


def test_robustness_row_format():
    g = grader()
    r = {"seed": g.SPEC["public_seed"], "tiers": [T(k, 1.0) for k in range(11)], "overall": 1.0,
         "htop": 10, "deterministic": True}
    assert g.robustness_row(r) == "public  1.00  1.00  1.00  1.00  1.0000  10  yes"
    r = {"seed": b"\x11" * 2, "tiers": [T(k, 1.0) for k in range(8)] + [T(8, 0.99), T(9, 1.0), T(10, 0.98)],
         "overall": 0.997, "htop": 10, "deterministic": False}
    assert g.robustness_row(r) == "1111  1.00  0.99  1.00  0.98  0.9970  10  NO"


# The seed's own rows (§3 public result, §5 robustness table): per-tier accuracies -> keys.
SEED_ROWS = [   # (label, tier accuracies 0..10, overall, htop)
    ("§3 public", [0.70] + [1.00] * 10, 1.0, 10),
    ("§5 1111", [1.0] * 8 + [0.99, 1.00, 0.98], 0.9970, 10),
    ("§5 2222", [1.0] * 8 + [0.99, 1.00, 1.00], 0.9990, 10),
    ("§5 deadbeef", [1.0] * 8 + [0.97, 1.00, 1.00], 0.9970, 10),
    ("§5 cafef00d", [1.0] * 8 + [1.00, 0.99, 0.99], 0.9980, 10),
    ("§5 a5a5", [1.0] * 11, 1.0, 10),
]


@pytest.mark.parametrize("label, accs, overall, htop", SEED_ROWS, ids=[r[0] for r in SEED_ROWS])
def test_seed_rows_give_the_seeds_ranking_keys(label, accs, overall, htop):
    tiers = [T(k, a) for k, a in enumerate(accs)]
    assert grader().ranking_keys(tiers) == (overall, htop)


def test_seed_section6_risk_tier10_timeout_drops_the_primary_key():
    """§6: if tier 10 times out on a CPU runner it is zeroed and the primary key drops to 9."""
    tiers = [T(k, 1.0) for k in range(10)] + [T(10, 1.0, completed=False)]
    assert grader().ranking_keys(tiers) == (0.9, 9)
