"""The alpha-beta ring model: formulas by hand, tie rules, fit, sensitivity, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.analysis import analyze
from reportgen.analysis.model.fits import fit_alpha_beta
from reportgen.analysis.model.prediction import comm_dominated, model_curve, optimum, predict
from tests.conftest import make_project
from tests.worked import worked


def project(extra: str = "", **fields: str):
    settings = {"t_comp": "1 s", "alpha": "1 ms", "beta": "10 ms", **fields}
    body = ", ".join(f"{k}: {v}" for k, v in settings.items())
    return make_project(f"project: {{title: T}}\nprediction: {{{body}}}\n{extra}")


@worked("prediction")
def test_model_by_hand() -> None:
    curve = model_curve(1.0, 1e-3, 10e-3, 8)
    assert curve.t_comm[0] == 0.0  # no communication on one node
    # p = 4: T_comm = 1 ms × 3 + 2 × 10 ms × 3/4 = 3 + 15 = 18 ms; T_4 = 250 + 18 = 268 ms
    assert curve.t_comm[3] == pytest.approx(0.018)
    assert curve.t_step[3] == pytest.approx(0.268)
    assert curve.speedup[3] == pytest.approx(1 / 0.268)
    assert curve.comm_ratio[3] == pytest.approx(0.018 / 0.25)


def test_optimum_and_rule_of_thumb() -> None:
    result = predict(project())
    # T_p = (1 − 0.02)/p + 0.001 p + const: continuous optimum √(0.98/0.001) = 31.30; rule of thumb √1000 = 31.62
    assert result.continuous_optimum_nodes == pytest.approx(math.sqrt(980))
    assert result.rule_of_thumb_nodes == pytest.approx(math.sqrt(1000))
    assert result.p_star == 31  # T(31) = 0.98/31 + 0.031 = 0.06261 < T(32) = 0.06263
    assert result.efficiency_at_p_star == pytest.approx(result.speedup_at_p_star / 31)
    assert result.usl_sigma == pytest.approx(0.02) and result.usl_kappa == pytest.approx(0.001)


def test_ties_go_to_the_smaller_p() -> None:
    # With β = 0, T_p = T/p + α(p − 1): T(n) = T(n+1) exactly when T = α n (n + 1). n = 4: T = 20 α.
    curve = model_curve(20.0, 1.0, 0.0, 10)
    assert curve.t_step[3] == curve.t_step[4] == 8.0  # 20/4 + 3 = 20/5 + 4
    assert optimum(curve).p_star == 4


def test_p_dom_is_the_first_p_with_ratio_at_least_one() -> None:
    # α = 0, β = 0.25 s, T = 1 s: R(p) = 0.5 (p − 1)/p / (1/p) = 0.5 (p − 1): R(3) = 1 exactly.
    assert comm_dominated(model_curve(1.0, 0.0, 0.25, 10)) == 3
    assert comm_dominated(model_curve(1.0, 0.0, 0.0, 10)) is None


def test_rows_include_powers_of_two_and_the_marked_points() -> None:
    result = predict(project("design: {nodes: 12}", max_nodes="100"))
    nodes = [row.nodes for row in result.rows]
    assert nodes == sorted(set(nodes))
    assert {1, 2, 4, 8, 16, 32, 64, 12, result.p_star} <= set(nodes)
    assert result.p_comm_dominated is None or result.p_comm_dominated in nodes


def test_planned_nodes_beyond_max_nodes_still_get_a_row() -> None:
    result = predict(project("design: {nodes: 300}", max_nodes="64"))
    row = result.rows[-1]
    assert row.nodes == 300
    assert row.t_comm_s == pytest.approx(1e-3 * 299 + 2 * 10e-3 * 299 / 300)


def test_sensitivity_grid() -> None:
    result = predict(project())
    assert len(result.sensitivity) == 9
    centre = next(s for s in result.sensitivity if s.alpha_scale == 1 and s.beta_scale == 1)
    assert (centre.p_star, centre.speedup) == (result.p_star, pytest.approx(result.speedup_at_p_star))
    # α × 0.1 moves the optimum out by about √10
    faster = next(s for s in result.sensitivity if s.alpha_scale == 0.1 and s.beta_scale == 1)
    assert faster.p_star == pytest.approx(result.p_star * math.sqrt(10), rel=0.05)


def test_beta_from_message_bytes_and_default_alpha() -> None:
    result = predict(make_project("""
project: {title: T}
hardware: {network_bandwidth: 50 GB/s, network_latency: 8 us}
prediction: {t_comp: 5.1 s, message_bytes: 2.6 GB}
"""))
    assert result.beta_s == pytest.approx(2.6e9 / 50e9)  # 52 ms
    assert result.alpha_s == 8e-6


def test_no_prediction_without_alpha_or_beta() -> None:
    assert predict(make_project("project: {title: T}\nprediction: {t_comp: 1 s, alpha: 1 ms}\n")) is None


def test_fit_is_exact_with_two_points() -> None:
    alpha, beta = 2e-3, 30e-3
    times = [alpha * (p - 1) + 2 * beta * (p - 1) / p for p in (2, 16)]
    fit = fit_alpha_beta([2, 16], times)
    assert fit.alpha_s == pytest.approx(alpha) and fit.beta_s == pytest.approx(beta)
    assert fit.residual_s == pytest.approx(0.0, abs=1e-12)
    assert fit_alpha_beta([2, 2], times) is None  # one distinct p cannot separate α from β


def test_prediction_uses_given_values_unless_use_fit() -> None:
    # exact α = 2 ms, β = 30 ms: p=2: 2 + 30 = 32 ms; p=16: 30 + 56.25 = 86.25 ms
    collectives = "[{nodes: 2, time: 32 ms}, {nodes: 16, time: 86.25 ms}]"
    given_only = predict(project(collectives=collectives))
    assert given_only.fit.alpha_s == pytest.approx(2e-3) and given_only.alpha_s == 1e-3
    used = predict(project(collectives=collectives, use_fit="true"))
    assert used.uses_fit and used.alpha_s == pytest.approx(2e-3) and used.beta_s == pytest.approx(30e-3)


def test_negative_fit_is_an_error_finding_not_a_clamp() -> None:
    analysis = analyze(project(collectives="[{nodes: 2, time: 55 ms}, {nodes: 16, time: 98 ms}]"))
    assert analysis.prediction.fit.alpha_s < 0  # reported as fitted
    bad = [f for f in analysis.findings if f.code == "bad-fit"]
    assert bad and bad[0].severity == "error"


def test_a_million_nodes_is_evaluated() -> None:
    result = predict(project(max_nodes="1000000", alpha="1 ns", beta="1 us"))
    assert len(result.curve.nodes) == 10**6
    assert result.p_star == pytest.approx(math.sqrt((1 - 2e-6) / 1e-9), abs=1)


@given(t_comp=st.floats(1e-3, 1e3), alpha=st.floats(1e-9, 1.0), beta=st.floats(0.0, 1.0))
def test_comm_ratio_increases_with_p(t_comp: float, alpha: float, beta: float) -> None:
    ratio = model_curve(t_comp, alpha, beta, 256).comm_ratio
    assert np.all(np.diff(ratio) > 0)


@given(t_comp=st.floats(1e-3, 1e3), alpha=st.floats(1e-9, 1.0), beta=st.floats(0.0, 1.0),
       scale=st.floats(1e-3, 1e3))
def test_scaling_all_times_keeps_the_optimum(t_comp: float, alpha: float, beta: float, scale: float) -> None:
    a = optimum(model_curve(t_comp, alpha, beta, 512))
    b = optimum(model_curve(t_comp * scale, alpha * scale, beta * scale, 512))
    assert a.p_star == b.p_star or abs(a.speedup - b.speedup) < 1e-9 * a.speedup


def test_the_size_aware_fit_starts_at_the_floor_it_is_given() -> None:
    # A ring of α = 10 µs and B = 10 GB/s: t = α(p − 1) + 2(p − 1)/p · n / B. At 1 and 2 GB the times are exact
    # (2 nodes: 0.10001 s and 0.20001 s; 4 nodes: 0.15003 s and 0.30003 s); the 1 MB messages take 1 and 2 ms, not
    # the line's 0.11 and 0.18 ms (another protocol). The default floor is the size nearest the 1 MB message, so
    # every point is used and the line bends; fit_min_bytes: 1 GB leaves the small ones out and finds α and B.
    collectives = ("[{nodes: 2, bytes: 1 MB, time: 1 ms}, {nodes: 4, bytes: 1 MB, time: 2 ms}, "
                   "{nodes: 2, bytes: 1 GB, time: 0.10001 s}, {nodes: 2, bytes: 2 GB, time: 0.20001 s}, "
                   "{nodes: 4, bytes: 1 GB, time: 0.15003 s}, {nodes: 4, bytes: 2 GB, time: 0.30003 s}]")
    text = f"project: {{title: T}}\nprediction: {{t_comp: 10 s, message_bytes: 1 MB, collectives: {collectives}}}\n"
    default = analyze(make_project(text)).prediction
    floored = analyze(make_project(text.replace("message_bytes: 1 MB", "message_bytes: 1 MB, fit_min_bytes: 1 GB")))
    fit = floored.prediction.fit
    assert fit is not None and fit.min_bytes == pytest.approx(1e9) and fit.points == 4
    assert fit.alpha_s == pytest.approx(10e-6, rel=1e-6) and fit.bandwidth_bytes_per_s == pytest.approx(1e10, rel=1e-9)
    assert fit.beta_s == pytest.approx(1e6 / 1e10, rel=1e-9)  # β = message bytes / B
    assert default.fit is not None and default.fit.points == 6 and abs(default.fit.alpha_s - 10e-6) > 1e-6


def test_powers_of_two_step_up_to_the_top() -> None:
    from reportgen.analysis.common import powers_of_two

    assert (powers_of_two(0), powers_of_two(1), powers_of_two(8), powers_of_two(9)) == ([], [1], [1, 2, 4, 8],
                                                                                        [1, 2, 4, 8])
