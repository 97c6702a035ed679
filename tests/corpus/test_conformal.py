"""The conformal arithmetic of a prediction's accuracy, worked by hand
(docs/methods.md#how-accurate-each-prediction-is)."""

from __future__ import annotations

import math

import pytest

from reportgen.analysis.measured.conformal import (
    Case,
    bucket_of,
    calibrated_interval,
    conformal_factor,
    interval_score,
    point_score,
    sign_test_p,
    status_of,
    summarise,
)

# The worked example's cell: 15 curves, one case each
SCORES = [0.00, 0.04, 0.07, 0.08, 0.10, 0.13, 0.18, 0.35, 0.45, 0.47, 0.49, 0.54, 0.60, 0.65, 0.85]


def test_the_factor_is_the_ceil_of_0_9_n_plus_1_th_score() -> None:
    # n = 15: rank ⌈0.9 × 16⌉ = 15, the largest score
    assert conformal_factor(SCORES) == 0.85
    # n = 14 (the largest left out): rank ⌈0.9 × 15⌉ = 14, again the largest of what is left
    assert conformal_factor(SCORES[:-1]) == 0.65
    # n = 8: rank ⌈0.9 × 9⌉ = 9 > 8, so no score qualifies
    assert conformal_factor(SCORES[:8]) == math.inf
    # n = 9 is the first finite one: rank ⌈0.9 × 10⌉ = 9, the 9th smallest
    assert conformal_factor(SCORES[:9]) == 0.45
    # n = 19: rank ⌈0.9 × 20⌉ = 18
    assert conformal_factor([float(i) for i in range(19)]) == 17.0


def test_pooled_own_cases_weigh_four_each() -> None:
    # need 0.9 × (15 + 3·4 + 1) = 25.2; cumulative weight: the eight public scores up to 0.35 → 8, own 0.40 → 12,
    # the six public 0.45 … 0.65 → 18, own 0.70 → 22, public 0.85 → 23, own 1.30 → 27 ≥ 25.2: f = 1.30 (the team's
    # one miss widens its intervals)
    scores = [*SCORES, 0.40, 1.30, 0.70]
    weights = [1.0] * 15 + [4.0] * 3
    assert conformal_factor(scores, weights) == 1.30
    assert conformal_factor(scores, [1.0] * 15 + [0.0] * 3) == 0.85  # own_weight 0: the public factor


def test_a_cell_of_the_worked_example() -> None:
    cell = summarise("amdahl", [Case(score, 0.0, 3.0) for score in SCORES])
    assert (cell.cases, cell.covered_raw, cell.covered, cell.factor) == (15, 15, 14, 0.85)
    assert cell.status == "provisional"  # 10 ≤ n < 20


def test_the_calibrated_interval_of_the_worked_estimate() -> None:
    # 5.271 h raw [4.228, 7.176], f = 0.85: [5.271·(4.228/5.271)^0.85, 5.271·(7.176/5.271)^0.85]
    low, high = calibrated_interval("amdahl", 5.271, 4.228, 7.176, 0.85)
    assert (round(low, 3), round(high, 3)) == (4.370, 6.851)
    # f below 0.5 is held at 0.5: half the bootstrap's log width
    low, high = calibrated_interval("amdahl", 5.0, 4.0, 6.0, 0.2)
    assert low == pytest.approx(5.0 * (4.0 / 5.0) ** 0.5) and high == pytest.approx(5.0 * (6.0 / 5.0) ** 0.5)
    # a point class: [ŷ·e^−f, ŷ·e^f]
    assert calibrated_interval("alpha-beta", 2.0, None, None, math.log(2)) == pytest.approx((1.0, 4.0))


def test_a_bias_that_wide_intervals_hide_is_demoted_by_the_sign_test() -> None:
    # ×0.8 in the cell: 14 of 15 log errors positive: p = 2 × (C(15,14) + C(15,15)) / 2^15 = 2 × 16 / 32768
    assert sign_test_p([0.2] * 14 + [-0.1]) == pytest.approx(32 / 32768)
    assert round(sign_test_p([0.2] * 14 + [-0.1]), 5) == 0.00098
    # raw coverage 13 of 15 (2 missed, 13 %) would not demote; the lean does
    assert status_of(15, missed_share=2 / 15, sign_p=0.00098, median_log_error=0.217) == "demoted"
    assert status_of(15, missed_share=2 / 15, sign_p=0.00098, median_log_error=0.027) == "provisional"  # harmless
    assert status_of(20, missed_share=9 / 20, sign_p=0.5, median_log_error=0.0) == "demoted"  # 45 % missed
    assert status_of(20, missed_share=8 / 20, sign_p=0.5, median_log_error=0.0) == "calibrated"  # 40 %: not more
    assert status_of(9, missed_share=1.0, sign_p=0.0, median_log_error=1.0) == "too-few"
    assert sign_test_p([]) == 1.0 and sign_test_p([0.0, 0.0]) == 1.0


def test_scores_are_log_errors_over_the_half_width_on_the_measurements_side() -> None:
    # ŷ = 100 in [80, 150]: a measurement of 150 is on the high edge (s = 1), of 80 on the low edge
    assert interval_score(150.0, 100.0, 80.0, 150.0) == pytest.approx(1.0)
    assert interval_score(80.0, 100.0, 80.0, 150.0) == pytest.approx(1.0)
    assert interval_score(120.0, 100.0, 80.0, 150.0) == pytest.approx(math.log(1.2) / math.log(1.5))
    assert interval_score(101.0, 100.0, 100.0, 100.0) == pytest.approx(math.log(1.01) / 0.01)  # floor 0.01
    assert point_score(50.0, 100.0) == pytest.approx(math.log(2))  # a time and its throughput score alike


@pytest.mark.parametrize(("ratio", "bucket"), [(0.5, "<=2"), (2.0, "<=2"), (2.01, "<=4"), (4.0, "<=4"),
                                               (8.0, "<=8"), (8.5, ">8")])
def test_buckets(ratio: float, bucket: str) -> None:
    assert bucket_of(ratio) == bucket
