"""The checks a load point's requests pass before a verdict rests on them
(methods.md#a-service-judged-from-its-requests), each on requests made here with its figure worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.analysis.measured.request_checks import (
    achieved_send_rate,
    littles_law,
    mann_kendall,
    mann_whitney_greater,
    placeholder_check,
    queueing_check,
    rate_checks,
    rises,
    saturation_check,
    sen_slope,
    warm_up_check,
)
from reportgen.analysis.measured.requests import Objectives
from reportgen.project.load_tests import Requests


def steady(count: int, *, every_s: float = 1.0, e2e_s: float | np.ndarray = 3.0, ttft_s: float | np.ndarray = 0.1,
           queue_s: np.ndarray | None = None) -> Requests:
    send = np.arange(count) * every_s
    return Requests(send, np.broadcast_to(ttft_s, (count,)).astype(float),
                    np.broadcast_to(e2e_s, (count,)).astype(float), np.full(count, 64), np.ones(count, dtype=bool),
                    queue_s)


def test_the_offered_rate_not_reached_or_exceeded_by_hand() -> None:
    # 11 sends over 1 s: λ_s = 10/1 = 10 request/s. Offered 12: 10/12 = 0.833 < 0.9: not reached
    requests = steady(11, every_s=0.1)
    assert achieved_send_rate(requests) == pytest.approx(10.0)
    short, over = rate_checks(requests, 12.0, constant_schedule=False)
    assert short.code == "rate-not-reached" and short.fired and short.value == pytest.approx(10 / 12)
    assert not over.fired
    # offered 8: 10/8 = 1.25 > 1.1: exceeded; offered 10: neither
    assert [check.fired for check in rate_checks(requests, 8.0, constant_schedule=False)] == [False, True]
    assert [check.fired for check in rate_checks(requests, 10.0, constant_schedule=False)] == [False, False]


def test_a_client_that_bursts_exceeds_its_schedule() -> None:
    # 100 sends a second apart, but sends 1, 11, 21, … 91 go 0.5 ms after the one before: 10 pairs, 20 sends of 100
    # within 1 ms of another (20 % > 5 %) while the rate itself is on time
    send = np.arange(100.0)
    send[1::10] = send[0::10] + 0.0005
    requests = Requests(send, np.full(100, 0.1), np.full(100, 1.0), np.full(100, 64), np.ones(100, dtype=bool))
    _, over = rate_checks(requests, 1.0, constant_schedule=True)
    assert over.fired and over.value == pytest.approx(0.20)
    _, poisson = rate_checks(requests, 1.0, constant_schedule=False)  # a Poisson schedule allows bursts
    assert not poisson.fired


def test_client_queueing_by_hand() -> None:
    # waits of 0 … 44.4 ms: p90 = 40 ms against a tenth of the 250 ms TTFT objective (25 ms): fired
    waits = np.linspace(0.0, 0.0444, 1000)
    check = queueing_check(steady(1000, queue_s=waits), Objectives(ttft_s=0.25, e2e_s=6.0))
    assert check is not None and check.fired and check.value == pytest.approx(0.04, rel=1e-3)
    assert check.limit == pytest.approx(0.025) and check.left_out == "nothing"
    assert queueing_check(steady(10), Objectives(ttft_s=0.25)) is None  # a closed load: no wait recorded


def test_littles_law_holds_at_a_steady_point_and_breaks_where_latency_runs_away() -> None:
    # one send a second for 1,000 s, each 3 s long: λ = 1,000/999, W̄ = 3, λW̄ = 3.003; in flight over [0, 999]:
    # 997 × 3 s + 2 + 1 + 0 = 2,994 request-seconds / 999 s = 2.997: a gap of 0.2 %
    check = littles_law(steady(1000))
    assert check is not None and not check.fired and check.value == pytest.approx((3000 / 999 - 2994 / 999) /
                                                                                  (3000 / 999))
    # E2E_i = 0.2 i s: W̄ = 99.9, λW̄ = 100.0; requests 833 on end after the last send and count only to 999 s:
    # Σ_{i≤832} 0.2 i + Σ_{k≤166} k = 69,305.6 + 13,861 = 83,166.6 → L̄ = 83.25: a gap of 16.7 % > 10 %
    runaway = littles_law(steady(1000, e2e_s=0.2 * np.arange(1000)))
    assert runaway is not None and runaway.fired
    assert runaway.value == pytest.approx((100.0 - 83166.6 / 999) / 100.0)


def test_mann_kendall_and_sens_slope_by_hand() -> None:
    rising = np.arange(1.0, 11.0)
    assert mann_kendall(rising) == 45 and sen_slope(rising) == 1.0 and rises(rising)  # 9 ≥ 0.25 × 1
    assert mann_kendall(rising[::-1]) == -45 and not rises(rising[::-1])
    # S = 45 − 2 × 3 = 39 with three pairs swapped, still a trend; a rise of 9 × 0.02 on a first bin of 10 is not
    assert mann_kendall(np.array([2.0, 1, 4, 3, 6, 5, 7, 8, 9, 10])) == 39
    assert not rises(10 + 0.02 * rising)


def test_over_saturation_and_drift() -> None:
    # 200 sends a second apart; latency grows by 1 % a send and the requests pile up: both series trend
    growing = steady(200, e2e_s=1 + 0.05 * np.arange(200), ttft_s=0.1 * (1 + 0.01 * np.arange(200)))
    check = saturation_check(growing, open_load=True)
    assert check is not None and check.code == "over-saturated" and check.fired and check.value == 45
    flat = saturation_check(steady(200), open_load=True)
    assert flat is not None and not flat.fired
    drift = saturation_check(growing, open_load=False)  # a closed load: latency alone, and nothing left out
    assert drift is not None and drift.code == "latency-drift" and drift.fired and drift.left_out == "nothing"
    assert saturation_check(steady(30), open_load=True) is None  # 3 sends a bin: too few to say


def test_warm_up_in_the_window() -> None:
    # the first 100 of 1,000 requests take 200 ms to the first token, the rest 80 ms (with jitter): ratio 2.5
    jitter = np.random.default_rng(5).uniform(0.99, 1.01, 1000)
    ttft = np.where(np.arange(1000) < 100, 0.2, 0.08) * jitter
    check = warm_up_check(steady(1000, ttft_s=ttft))
    assert check is not None and check.fired and check.value == pytest.approx(2.5, rel=0.02)
    assert check.left_out == "the first tenth"
    calm = warm_up_check(steady(1000, ttft_s=0.08 * jitter))
    assert calm is not None and not calm.fired


def test_mann_whitney_by_hand() -> None:
    # every value of the first group above every one of the rest: U = n1·n2 = 6; z = (6 − 3)/√(2·3·6/12) = 1.732,
    # one-sided p = 1 − Φ(1.732) = 0.0416
    assert mann_whitney_greater(np.array([5.0, 6.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(0.04163, abs=1e-4)


def test_placeholder_latency_by_hand() -> None:
    # 1 of 50 successful requests has a TTFT of 0 (2 %), one failed request's 0 does not count: the field of 2 %
    ttft = np.full(50, 0.1)
    ttft[[3, 7]] = 0.0
    ok = np.ones(50, dtype=bool)
    ok[7] = False
    check = placeholder_check(Requests(np.arange(50.0), ttft, np.ones(50), np.full(50, 64), ok))
    assert check.fired and check.value == pytest.approx(1 / 49) and check.value > check.limit
    assert not placeholder_check(steady(50)).fired
