"""Measured scaling: hand-worked attribution, knee, fits (SPEC SDM91 for USL), POP, and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reportgen.analysis.measured.scaling import analyze_scaling, kneedle
from reportgen.analysis.model.fits import fit_amdahl, fit_usl, usl_capacity, usl_fit_with_peak
from reportgen.project.model import Run, Scaling
from tests.conftest import make_project
from tests.worked import worked


def breakdown(*rows: tuple[int, float, float, float, float], workers: dict[int, tuple[float, ...]] | None = None):
    runs = tuple(Run(nodes=p, compute=c, communication=m, idle=i, io=o, workers=(workers or {}).get(p, ()))
                 for p, c, m, i, o in rows)
    return Scaling(runs=runs)


EXAMPLE = breakdown((1, 32400, 0, 0, 600), (2, 16300, 700, 300, 310), (4, 8200, 1100, 700, 160),
                    (8, 4150, 1500, 1300, 90), (16, 2100, 2300, 2200, 60))


@worked("scaling")
def test_speedup_efficiency_and_lost_time_by_hand() -> None:
    result = analyze_scaling(EXAMPLE)
    row = result.rows[2]  # p = 4
    assert row.time_s == 10160  # 8200 + 1100 + 700 + 160
    assert row.speedup == pytest.approx(33000 / 10160)
    assert row.efficiency == pytest.approx(33000 / 10160 / 4)
    assert row.comm_share == pytest.approx(1100 / 10160) and row.idle_share == pytest.approx(700 / 10160)
    # lost time (I/O apart from compute): serial 8200 − 32400/4 = 100; io 160 − 600/4 = 10;
    # communication 1100; idle 700
    assert row.lost_time_s == {"serial": pytest.approx(100), "io": pytest.approx(10), "communication": 1100,
                               "imbalance": 700}
    lost = 4 - 33000 / 10160
    assert row.lost_folds == pytest.approx(lost)
    assert row.lost_communication == pytest.approx(lost * 1100 / 1910)
    assert row.lost_io == pytest.approx(lost * 10 / 1910) and row.lost_serial == pytest.approx(lost * 100 / 1910)
    assert row.lost_serial + row.lost_io + row.lost_communication + row.lost_imbalance == pytest.approx(lost)
    assert row.lost_bubble is None and row.lost_startup is None  # not given: no column
    s = 33000 / 10160
    assert row.karp_flatt == pytest.approx((1 / s - 1 / 4) / (1 - 1 / 4))


def test_knee_peak_and_cause() -> None:
    result = analyze_scaling(EXAMPLE)
    assert result.knee_nodes == 8 and result.knee_score >= 0.05
    # first scale beyond the knee is 16: lost communication 2300 > idle 2200 > serial 2160 − 2062.5 = 97.5
    assert (result.knee_cause, result.knee_cause_at, result.knee_cause_inferred) == ("communication", 16, False)
    assert "collective" in result.remedy
    assert result.peak_nodes == 16
    assert result.first_below_half_efficiency == 16  # E(8) = 0.586, E(16) = 0.310


def test_near_linear_scaling_has_no_knee() -> None:
    assert kneedle([1, 2, 4, 8, 16], [1, 2, 4, 8, 16]) == (None, pytest.approx(0.0, abs=1e-12))


def test_kneedle_by_hand() -> None:
    # x = log2 p = 0, 1, 2 → 0, 0.5, 1; y = 1, 3, 3.2 → 0, 0.909, 1; y − x = 0, 0.409, 0 → knee at p = 2
    knee, score = kneedle([1, 2, 4], [1.0, 3.0, 3.2])
    assert knee == 2 and score == pytest.approx(2 / 2.2 - 0.5)


def test_reference_is_the_smallest_measured_p() -> None:
    scaling = make_project("project: {title: T}\nscaling: {runs: [{nodes: 64, time: 100 s}, "
                           "{nodes: 128, time: 60 s}, {nodes: 256, time: 40 s}]}\n").scaling
    result = analyze_scaling(scaling)
    assert result.reference_nodes == 64
    assert result.rows[2].speedup == pytest.approx(2.5) and result.rows[2].efficiency == pytest.approx(2.5 / 4)
    assert result.rows[0].karp_flatt is None


def test_throughput_form_is_per_unit_of_work_without_work_per_run() -> None:
    scaling = make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, throughput: 100 sample/s}, "
                           "{nodes: 2, throughput: 190 sample/s}]}\n").scaling
    result = analyze_scaling(scaling)
    assert result.per_unit_of_work and result.rows[1].speedup == pytest.approx(1.9)
    assert result.rows[1].time_s == pytest.approx(1 / 190)


def test_superlinear_compute_is_a_gain_of_its_own() -> None:
    # docs/methods.md#superlinear-attribution: 2 nodes compute 45 s where ideal is 50 (−5 s, a gain), communicate
    # 4 s and idle 1 s: T_2 = 50 s, speedup 2, no fold lost overall. By signed time, q·t/T_p: serial 2·(−5)/50 =
    # −0.2 folds (gained), communication 2·4/50 = 0.16, imbalance 2·1/50 = 0.04; never the gain credited elsewhere
    result = analyze_scaling(breakdown((1, 100, 0, 0, 0), (2, 45, 4, 1, 0)))
    row = result.rows[1]
    assert row.superlinear_compute and row.lost_time_s["serial"] == -5.0
    assert (row.lost_serial, row.lost_communication, row.lost_imbalance) == pytest.approx((-0.2, 0.16, 0.04))
    assert row.lost_serial + row.lost_communication + row.lost_imbalance == pytest.approx(row.lost_folds, abs=1e-12)
    assert [(g.cause, g.reference_s, g.at_scale_s, g.ideal_fall) for g in row.gains] == [("serial", 100, 45, 2)]


def test_a_gain_beside_a_loss_keeps_each_its_sign() -> None:
    # io fell 400 → 25 s at 8 nodes (ideal 50): −25 s; communication 0 → 60 s: +60 s; compute 800 → 100 exactly.
    # T_8 = 100 + 60 + 25 = 185 s against T_1 = 1200 s: speedup 6.486, lost folds 1.514 = 8·35/185. Signed shares:
    # communication 1.514·60/35 = 2.595, io 1.514·(−25)/35 = −1.081 (a gain named, not credited to communication)
    result = analyze_scaling(breakdown((1, 800, 0, 0, 400), (8, 100, 60, 0, 25)))
    row = result.rows[1]
    assert row.lost_folds == pytest.approx(8 - 1200 / 185)
    assert row.lost_communication == pytest.approx(8 * 60 / 185)
    assert row.lost_io == pytest.approx(8 * -25 / 185)
    assert row.lost_serial == 0.0 and not row.superlinear_compute
    assert [g.cause for g in row.gains] == ["io"]


def test_compute_that_shrank_exactly_is_not_superlinear() -> None:
    # 10010 / 100 is 100.10000000000001 in floating point: a remainder of −1.4e-14 s is rounding, not a gain
    result = analyze_scaling(breakdown((1, 10010, 0, 0, 0), (100, 100.1, 5, 0, 0)))
    row = result.rows[1]
    assert not row.superlinear_compute and row.lost_time_s["serial"] == 0.0 and row.gains == ()


def test_one_run_and_zero_communication() -> None:
    result = analyze_scaling(breakdown((1, 100, 0, 0, 0)))
    assert result.knee_nodes is None and result.amdahl is None and result.usl is None
    result = analyze_scaling(breakdown((1, 100, 0, 0, 0), (2, 50, 0, 0, 0), (4, 25, 0, 0, 0)))
    assert [r.lost_folds for r in result.rows] == [0, 0, 0]
    assert result.knee_cause is None and result.comm_fit.alpha_s == pytest.approx(0, abs=1e-12)


def test_pop_metrics_by_hand() -> None:
    result = analyze_scaling(breakdown((1, 100, 0, 0, 0), (4, 30, 5, 3, 0),
                                       workers={4: (24.0, 26.0, 30.0, 20.0)}))
    pop = result.pop[0]
    # mean 25, max 30: LB = 25/30; CommE = max compute / T_p = 30 / 38; PE = LB × CommE; imbalance = 30/25 − 1
    assert pop.load_balance == pytest.approx(25 / 30)
    assert pop.comm_efficiency == pytest.approx(30 / 38)
    assert pop.parallel_efficiency == pytest.approx(25 / 30 * 30 / 38)
    assert pop.imbalance == pytest.approx(0.2)


def test_amdahl_recovers_its_serial_fraction() -> None:
    f = 0.05
    qs = [2.0, 4.0, 8.0, 16.0]
    fit = fit_amdahl(qs, [1 / (f + (1 - f) / q) for q in qs])
    assert fit.serial_fraction == pytest.approx(f) and fit.max_speedup == pytest.approx(20)


def test_usl_on_gunthers_spec_sdm91_data() -> None:
    # SPEC SDM91, Sun SPARCcenter 2000 (Gunther, Guerrilla Capacity Planning, 2007): users → scripts per hour.
    users = [1, 18, 36, 72, 108, 144, 216]
    throughput = [64.9, 995.9, 1652.4, 1853.2, 1828.9, 1775.0, 1702.2]
    fit = fit_usl(users, throughput)
    assert fit.sigma == pytest.approx(0.0277, abs=5e-4)
    assert fit.kappa == pytest.approx(1.04e-4, rel=0.02)
    assert fit.gamma == pytest.approx(90, rel=0.01)
    assert fit.peak_nodes == pytest.approx(96.5, abs=0.5)
    # As the USL literature reports a peak: the best whole concurrency, and the throughput predicted there
    # (Gunther: about 1,884 scripts per hour at 96 users).
    assert fit.peak_capacity == pytest.approx(1884, rel=5e-3)
    whole = usl_capacity(np.array([96.0, 97.0]), fit.gamma, fit.sigma, fit.kappa)
    assert fit.peak_whole_nodes == (96 if whole[0] >= whole[1] else 97)


@pytest.mark.parametrize(("sigma", "kappa", "whole"),
                         [(0.0, 1 / 12, 3), (0.0, 1 / 13, 4), (0.0, 1 / 11, 3), (0.5, 2.0, 1)])
def test_usl_best_whole_concurrency_is_the_better_neighbour(sigma: float, kappa: float, whole: int) -> None:
    # With σ = 0, X(p) = p / (1 + κp(p − 1)): κ = 1/12 gives X(3) = X(4) = 2 exactly (a tie: the smaller), 1/13
    # favours 4 (2.08 > 2.05), 1/11 favours 3 (1.94 > 1.91); a peak below one node is one node.
    fit = usl_fit_with_peak(sigma, kappa, 1.0)
    assert fit.peak_whole_nodes == whole
    assert fit.peak_capacity == pytest.approx(float(usl_capacity(np.array([fit.peak_nodes]), 1.0, sigma, kappa)[0]))
    assert usl_fit_with_peak(0.1, 0.0, 1.0).peak_whole_nodes is None


def test_usl_recovers_synthetic_parameters() -> None:
    p = [1, 2, 4, 8, 16, 32, 64]
    fit = fit_usl(p, [3 * n / (1 + 0.03 * (n - 1) + 0.0005 * n * (n - 1)) for n in p])
    assert (fit.gamma, fit.sigma, fit.kappa) == (pytest.approx(3), pytest.approx(0.03), pytest.approx(0.0005))


def test_likely_cause_without_breakdown() -> None:
    total = make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, time: 100 s}, {nodes: 2, time: 52 s}, "
                         "{nodes: 4, time: 30 s}, {nodes: 8, time: 24 s}, {nodes: 16, time: 30 s}]}\n").scaling
    result = analyze_scaling(total)
    assert result.knee_cause == "communication" and result.knee_cause_inferred  # the curve turns down: κ
    assert result.usl.kappa > 0


def test_comm_fit_and_implied_nodes() -> None:
    a, b = 2.0, 50.0  # seconds over the whole run
    rows = [(p, 1000 / p, a * (p - 1) + 2 * b * (p - 1) / p, 0, 0) for p in (1, 2, 4, 8)]
    result = analyze_scaling(breakdown(*rows))
    assert result.comm_fit.alpha_s == pytest.approx(a) and result.comm_fit.beta_s == pytest.approx(b)
    # T_comp = 1000 s: continuous optimum √((1000 − 100)/2) = 21.2 → 21
    assert result.comm_fit_implied_p_star == 21


def seconds(most: float) -> st.SearchStrategy[float]:
    """A time a project can hold: zero, or within the project's range (10⁻³⁰ s and up; a subnormal such as 5e-324
    is refused by the loader, and halving it underflows to zero)."""
    return st.one_of(st.just(0.0), st.floats(1e-30, most))


runs_strategy = st.lists(
    st.tuples(st.floats(10, 1e4), seconds(1e3), seconds(1e3), seconds(1e2)),
    min_size=2, max_size=6)


@given(runs_strategy)
@example([(10.0, 0.0, 0.0, 11.0), (10.0, 0.0, 5e-324, 0.0)])  # a subnormal lost time once lost the folds
def test_lost_folds_sum_up(values: list[tuple[float, float, float, float]]) -> None:
    scaling = breakdown(*[(1 << i, c, m if i else 0, d if i else 0, o) for i, (c, m, d, o) in enumerate(values)])
    for row in analyze_scaling(scaling).rows:
        assert row.lost_serial + row.lost_communication + row.lost_imbalance + (row.lost_io or 0.0) == \
            pytest.approx(row.lost_folds, abs=1e-9 * max(1.0, abs(row.lost_folds)))


@given(runs_strategy, st.floats(1e-3, 1e3))
def test_scaling_all_times_changes_no_node_count(values: list[tuple[float, float, float, float]],
                                                 factor: float) -> None:
    rows = [(1 << i, c, m if i else 0, d if i else 0, o) for i, (c, m, d, o) in enumerate(values)]
    a = analyze_scaling(breakdown(*rows))
    b = analyze_scaling(breakdown(*[(p, c * factor, m * factor, d * factor, o * factor) for p, c, m, d, o in rows]))
    assert (a.knee_nodes, a.peak_nodes, a.first_below_half_efficiency, a.knee_cause) == \
        (b.knee_nodes, b.peak_nodes, b.first_below_half_efficiency, b.knee_cause)


def test_a_load_axis_takes_fractional_levels_into_the_fits() -> None:
    # Load is not always a node count (R usl's oracledb: average active sessions): on a load axis the levels may be
    # fractional, the USL fit uses them as they are, and the report shows them uncut.
    from reportgen.render.formatting import integer, nodes

    levels = [1, 1.53, 2.4, 3.9, 5.2, 7.7, 10.5, 14.2]
    runs = ", ".join(f"{{nodes: {n}, throughput: {420 * n / (1 + 0.06 * (n - 1) + 0.004 * n * (n - 1))!r} request/s}}"
                     for n in levels)
    scaling = make_project(f"project: {{title: T}}\nscaling: {{axis: load, runs: [{runs}]}}\n").scaling
    assert [run.nodes for run in scaling.runs] == levels and isinstance(scaling.runs[0].nodes, int)
    result = analyze_scaling(scaling)
    assert result.axis == "load"
    assert (result.usl.sigma, result.usl.kappa) == (pytest.approx(0.06, rel=1e-6), pytest.approx(0.004, rel=1e-6))
    assert result.usl.peak_nodes == pytest.approx((0.94 / 0.004) ** 0.5)
    assert result.rows[1].karp_flatt is not None
    assert (integer(1.53), nodes(1.53), integer(8), nodes(8)) == ("1.53", "load 1.53", "8", "8 nodes")


def test_a_coefficient_within_rounding_noise_of_zero_is_zero() -> None:
    """An exact ring fit of a purely bandwidth-bound column once printed α = −4.71 × 10⁻⁹ µs."""
    from reportgen.analysis.model.fits import fit_alpha_beta

    beta = 0.7
    nodes = [2, 4, 8, 16]
    fit = fit_alpha_beta(nodes, [2 * beta * (p - 1) / p for p in nodes])
    assert fit is not None and fit.alpha_s == 0.0 and fit.beta_s == pytest.approx(beta)
