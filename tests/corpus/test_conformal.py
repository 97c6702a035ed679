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
from tests.worked import worked

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
    # a half-width below one run's noise (1.645 × 0.05 = 0.0822) is held at it: repeats that agree to 0.1 % say
    # nothing of the model's error, and a 5 % miss scores 0.59, not 49
    assert interval_score(105.0, 100.0, 99.9, 100.1) == pytest.approx(math.log(1.05) / (1.6449 * 0.05))
    low, high = calibrated_interval("amdahl", 100.0, 99.9, 100.1, 2.0)
    assert (low, high) == pytest.approx((100 * math.exp(-2 * 0.082245), 100 * math.exp(2 * 0.082245)))
    assert point_score(50.0, 100.0) == pytest.approx(math.log(2))  # a time and its throughput score alike


@pytest.mark.parametrize(("ratio", "bucket"), [(0.5, "<=2"), (2.0, "<=2"), (2.01, "<=4"), (4.0, "<=4"),
                                               (8.0, "<=8"), (8.5, ">8")])
def test_buckets(ratio: float, bucket: str) -> None:
    assert bucket_of(ratio) == bucket


def test_a_class_is_demoted_by_its_errors_not_by_a_too_narrow_raw_interval() -> None:
    # 20 curves each 6 % off, every one outside a raw interval of ±1 % (s = ln 1.06 / ln 1.01 ≈ 5.9), signs mixed:
    # the raw interval is overconfident, which the factor corrects, and the class is not demoted for it
    narrow = [Case(5.9, math.log(1.06) * (1 if index % 2 else -1), 2.0) for index in range(20)]
    cell = summarise("amdahl", narrow)
    assert (cell.covered_raw, cell.missed, cell.off_by_25, cell.status) == (0, 20, 0, "calibrated")
    # 9 of 20 off by 40 % or more (1.4×, or 1/1.4 = −29 %; 45 % > 40 %), signs mixed: demoted by its misses
    far = [Case(0.5, math.log(1.4) * (1 if index % 2 else -1), 2.0) for index in range(9)]
    near = [Case(0.5, 0.01 * (1 if index % 2 else -1), 2.0) for index in range(11)]
    cell = summarise("amdahl", far + near)
    assert (cell.off_by_25, cell.status) == (9, "demoted")


def test_a_cell_of_too_few_cases_is_widened_as_the_nearer_trusted_one() -> None:
    from reportgen.analysis.measured.accuracy import calibration_of, interval_from
    from reportgen.analysis.measured.conformal import PREDICTORS_VERSION
    from reportgen.project.accuracy_table import AccuracyTable, TableCell

    def cell(cases: int, factor: float | None, status: str) -> TableCell:
        return TableCell(cases, cases, cases, 0, 0, 0.05, 0.0, cases // 2, factor, 4.0, status,  # type: ignore[arg-type]
                         (0.5,) * cases)

    table = AccuracyTable(PREDICTORS_VERSION, "0" * 64, 30, {"amdahl/<=2": cell(20, 1.5, "calibrated"),
                                                             "amdahl/<=4": cell(12, 2.5, "provisional"),
                                                             "amdahl/<=8": cell(3, None, "too-few")})
    far = calibration_of(table, "amdahl", 6.0)
    assert far is not None and (far.status, far.factor, far.factor_from) == ("too-few", 2.5, "<=4")
    # ŷ = 100 in [80, 125]: widened by f = 2.5, as the 2–4× cell would widen it
    low, high = interval_from(far, 100.0, 80.0, 125.0) or (0.0, 0.0)
    assert (low, high) == pytest.approx((100 * 0.8 ** 2.5, 100 * 1.25 ** 2.5))
    beyond = calibration_of(table, "amdahl", 20.0)  # no cell at all beyond 8×: still the largest nearer factor
    assert beyond is not None and (beyond.cases, beyond.factor, beyond.factor_from) == (0, 2.5, "<=4")
    assert calibration_of(table, "usl", 3.0) is not None
    assert interval_from(calibration_of(table, "usl", 3.0), 100.0, 80.0, 125.0) is None  # none nearer: raw stands


@worked("calibration", "goal")
def test_a_build_quotes_the_interval_its_cell_calibrates_and_judges_by_it() -> None:
    """1 node in 1,000 s and 4 in 325 s (Amdahl, f = 0.1), 16 nodes planned (r = 4, the 2–4× bucket), a cell of the
    global batch changing between scales with f = 1.5: the interval [L, H] becomes [ŷ·(L/ŷ)^1.5, ŷ·(H/ŷ)^1.5]
    (both half-widths past the floor), and the verdict is held against it."""
    from reportgen.analysis import analyze
    from reportgen.analysis.measured.conformal import PREDICTORS_VERSION
    from reportgen.project.accuracy_table import AccuracyTable, TableCell
    from tests.conftest import make_project

    cell = TableCell(12, 11, 12, 0, 0, 0.06, -0.01, 7, 1.5, 4.0, "provisional", (0.5,) * 12)
    table = AccuracyTable(PREDICTORS_VERSION, "f" * 64, 40, {"amdahl/<=4/batch-changes": cell})
    project = make_project("""
project: {title: E, goal: {time_per_run: 200 s}}
design: {nodes: 16}
scaling: {time_unit: s, batch_changes: true, runs: [{nodes: 1, time: 1000}, {nodes: 4, time: 325}]}
""")
    analysis = analyze(project, accuracy=table)
    estimate = analysis.goal.plan_estimate
    assert estimate.time_s == pytest.approx(1000 * (0.1 + 0.9 / 16))  # 156.25 s
    calibration = estimate.calibration
    assert (calibration.predictor, calibration.bucket, calibration.ratio, calibration.status) == \
        ("amdahl", "<=4", 4.0, "provisional")
    assert (calibration.cases, calibration.covered, calibration.factor) == (12, 11, 1.5)
    assert math.log(estimate.time_s / estimate.low_s) > 0.0823 and math.log(estimate.high_s / estimate.time_s) > 0.0823
    assert estimate.calibrated_low_s == pytest.approx(156.25 * (estimate.low_s / 156.25) ** 1.5)
    assert estimate.calibrated_high_s == pytest.approx(156.25 * (estimate.high_s / 156.25) ** 1.5)
    (row,) = analysis.goal.fitted_at_plan
    assert row.time_ci == pytest.approx((estimate.calibrated_low_s, estimate.calibrated_high_s))
    assert row.ci_basis == "calibrated"
    # 200 s lies within the calibrated interval, beyond the raw one: the plan is left unjudged by the wider one
    assert estimate.high_s < 200 < estimate.calibrated_high_s and row.met is None
    assert analysis.calibration is not None and (analysis.calibration.curves, analysis.calibration.predictors_version) \
        == (40, PREDICTORS_VERSION)
    # without the flag the project is graded in the fixed-batch cells, none of which the table has: too few
    plain = analyze(make_project("""
project: {title: E, goal: {time_per_run: 200 s}}
design: {nodes: 16}
scaling: {time_unit: s, runs: [{nodes: 1, time: 1000}, {nodes: 4, time: 325}]}
"""), accuracy=table)
    assert plain.goal.plan_estimate.calibration.status == "too-few" and plain.goal.plan_estimate.calibration.cases == 0
    assert plain.goal.plan_estimate.calibrated_low_s is None


@worked("grades")
def test_the_models_rows_are_graded_at_their_scale_over_the_largest_measured() -> None:
    """Measured up to 8 nodes: the α–β row at 32 is r = 4 (2–4×), at 16 r = 2 (up to 2×), at 4 r = 0.5 (an
    interpolation, up to 2×); a trusted point cell of f = ln 1.5 gives [ŷ/1.5, 1.5·ŷ]. Nothing measured: r = p / 1."""
    from reportgen.analysis.measured.accuracy import Predicted, grade, interval_from
    from reportgen.analysis.measured.conformal import PREDICTORS_VERSION
    from reportgen.project.accuracy_table import AccuracyTable, TableCell

    point = TableCell(20, 18, 17, 3, 2, 0.12, 0.02, 11, math.log(1.5), 4.0, "calibrated", (0.2,) * 20)
    table = AccuracyTable(PREDICTORS_VERSION, "0" * 64, 40, {"alpha-beta/<=4": point})
    grades = grade(table, Predicted(model_nodes=(4, 16, 32), p_star=32, plan=32), 8.0)
    assert grades is not None
    assert [(grades.rows[p].ratio, grades.rows[p].bucket) for p in (4, 16, 32)] == [(0.5, "<=2"), (2.0, "<=2"),
                                                                                    (4.0, "<=4")]
    at_32 = grades.rows[32]
    assert (at_32.status, at_32.half_width_log, at_32.factor) == ("calibrated", math.log(1.5), None)
    assert interval_from(at_32, 100.0, None, None) == pytest.approx((100 / 1.5, 150.0))
    assert grades.at_p_star == at_32  # the speedup at p* shares the row's cell
    assert grades.rows[16].status == "too-few" and grades.rows[16].cases == 0
    assert grades.layout_step is not None and grades.layout_step.predictor == "layout-step"
    unmeasured = grade(table, Predicted(model_nodes=(4,)), None)
    assert unmeasured is not None and unmeasured.rows[4].ratio == 4.0


def test_the_resamples_are_stretched_as_the_calibrated_interval_stretches_the_raw_one() -> None:
    """ŷ = 100 s with raw [80, 125] and calibrated [64, 156.25] (f = 2 on both sides: 0.8² and 1.25²): a resample
    of 125 s becomes 156.25 s, one of 90 s 100·0.9² = 81 s, one of 100 s stays; without a calibrated interval the
    resamples are left as they are. A chance of missing read from them is then read from the calibrated interval."""
    import numpy as np

    from reportgen.analysis.measured.confidence import PlanEstimate, calibrated_draws

    estimate = PlanEstimate(16, 100.0, 80.0, 125.0, "amdahl", None, calibrated_low_s=64.0, calibrated_high_s=156.25)
    stretched = calibrated_draws(np.array([125.0, 90.0, 100.0, 110.0]), estimate)
    assert stretched == pytest.approx([156.25, 81.0, 100.0, 121.0])
    raw = PlanEstimate(16, 100.0, 80.0, 125.0, "amdahl", None)
    assert list(calibrated_draws(np.array([125.0, 90.0]), raw)) == [125.0, 90.0]
