"""A service judged from its requests (methods.md#a-service-judged-from-its-requests): attainment, goodput, their
block-bootstrap intervals, percentiles with binomial intervals, the tail guard, the requests a verdict needs and the
max load under the objectives, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from reportgen.analysis.measured.load_curve import decreasing_fit, latency_knee, max_load
from reportgen.analysis.measured.pareto import ParetoPoint, chosen, frontier, joules_per_token, tokens_per_device
from reportgen.analysis.measured.requests import (
    Objectives,
    attainment,
    binomial_quantile,
    block_length,
    block_resample_means,
    mean_in_flight,
    meets,
    objective_flip,
    point_verdict,
    quantile,
    requests_for_quantile,
    requests_needed,
)
from reportgen.project.load_tests import Requests


def four_requests() -> Requests:
    # send 0, 1, 2, 3 s; TTFT 0.1, 0.3, 0.1, NaN (not streamed); E2E 2.1, 2.3, 0.5, 1.0; tokens 101, 51, 1, 11
    return Requests(send_s=np.array([0.0, 1.0, 2.0, 3.0]), ttft_s=np.array([0.1, 0.3, 0.1, np.nan]),
                    e2e_s=np.array([2.1, 2.3, 0.5, 1.0]), output_tokens=np.array([101, 51, 1, 11]),
                    ok=np.array([True, True, True, True]), client_queue_s=np.array([0.0, 0.0, 0.15, 0.0]))


def test_tpot_and_what_each_request_meets_by_hand() -> None:
    # TPOT = (E2E − TTFT)/(n − 1): 2.0/100 = 20 ms, 2.0/50 = 40 ms; one token: no decode (NaN); NaN TTFT: NaN
    requests = four_requests()
    assert requests.tpot_s[:2] == pytest.approx([0.020, 0.040]) and np.isnan(requests.tpot_s[2:]).all()
    assert requests.window_s == pytest.approx(4.0)  # first send 0 s, last byte 3 + 1.0 = 4 s
    objectives = Objectives(ttft_s=0.2, tpot_s=0.025)
    closed = meets(requests, objectives, open_load=False)
    # TTFT ≤ 0.2: yes, no, yes, unmeasured (no); TPOT ≤ 25 ms: yes, no, no decode (yes), unmeasured (no)
    assert closed["ttft"].tolist() == [True, False, True, False]
    assert closed["tpot"].tolist() == [True, False, True, False]
    # at an open load the third request waited 0.15 s in the client: TTFT' = 0.25 > 0.2
    assert meets(requests, objectives, open_load=True)["ttft"].tolist() == [True, False, False, False]


def test_requests_in_flight_over_a_window_by_hand() -> None:
    # [0, 2.1), [1, 3.3), [2, 2.5), [3, 4) over [0, 3]: 2.1 + 2.0 + 0.5 + 0 = 4.6 request-seconds over 3 s
    requests = four_requests()
    assert mean_in_flight(requests.send_s, requests.end_s, 0.0, 3.0) == pytest.approx(4.6 / 3)


def test_block_length_by_hand() -> None:
    # N = 2,000: ⌈2,000^{1/3}⌉ = ⌈12.6⌉ = 13; L̄ = 32.4 → 33 > 13; ⌊N/10⌋ = 200: b = 33 (the stand-in's)
    assert block_length(2000, 32.4) == 33
    assert block_length(2000, 3.0) == 13  # a light load: the cube root
    assert block_length(1000, 0.5) == 10  # 1,000^{1/3} is 10 exactly, not 11
    assert block_length(50, 40.0) == 5  # ⌊50/10⌋ caps it
    assert block_length(5, 1.0) == 1


def test_block_sums_wrap_around_and_each_resample_is_a_mean_of_whole_blocks() -> None:
    # five values, blocks of 2: the block at the last request wraps to the first (5 + 1); k = ⌈5/2⌉ = 3 blocks
    column = np.arange(1.0, 6.0)
    means = block_resample_means([column], 2, resamples=400, seed=1)
    possible = {(a + b + c) / 6 for a in (3, 5, 7, 9, 6) for b in (3, 5, 7, 9, 6) for c in (3, 5, 7, 9, 6)}
    assert set(np.round(means[:, 0], 12)) <= {round(value, 12) for value in possible}
    assert means[:, 0].mean() == pytest.approx(3.0, abs=0.1)  # each request is in as many blocks as any other


def test_attainment_and_goodput_by_hand() -> None:
    # 10 requests in 10 s, one a second, each 1 s long (W = 10 s), 100 tokens, TTFT 0.1 s except the 4th (0.5 s),
    # the 8th failed. Objective TTFT ≤ 0.2 s: good are 8 of 10 (the slow and the failed are not):
    # A = 0.8, A_ttft = 0.8 (a failed request meets no objective: offered, not served; its TTFT was fast), G = 8/10 s
    # = 0.8 request/s, G_tok = 800/10 = 80 token/s
    count = 10
    ttft = np.full(count, 0.1)
    ttft[3] = 0.5
    ok = np.ones(count, dtype=bool)
    ok[7] = False
    requests = Requests(np.arange(count, dtype=float), ttft, np.ones(count), np.full(count, 100), ok)
    found = attainment(requests, Objectives(ttft_s=0.2), open_load=False, in_flight=1.0)
    assert (found.requests, found.good, found.joint, found.block) == (10, 8, 0.8, 1)
    assert found.objectives["ttft"][0] == pytest.approx(0.8)
    assert found.goodput_per_s == pytest.approx(0.8) and found.good_tokens_per_s == pytest.approx(80.0)
    low, high = found.joint_ci
    assert 0.5 <= low <= 0.8 <= high <= 1.0
    assert found.goodput_ci == pytest.approx((low, high))  # G = A × N / W: the same resamples, scaled


def test_the_attainment_interval_covers_the_truth_nine_times_in_ten() -> None:
    """200 simulated load tests of 1,000 independent requests, each good with probability 0.98: the 90 % interval
    covers 0.98 in 85–95 % of them (90 % ± 2.2 standard errors of 200 trials)."""
    rng = np.random.default_rng(7)
    covered = 0
    trials = 200
    for trial in range(trials):
        ttft = np.where(rng.random(1000) < 0.98, 0.1, 0.5)
        requests = Requests(np.arange(1000.0), ttft, np.ones(1000), np.full(1000, 10), np.ones(1000, dtype=bool))
        low, high = attainment(requests, Objectives(ttft_s=0.2), open_load=False, in_flight=1.0,
                               seed=trial).joint_ci
        covered += low <= 0.98 <= high
    assert 0.85 <= covered / trials <= 0.95, covered


def test_a_point_is_decided_only_by_its_interval() -> None:
    assert point_verdict((0.991, 0.995), 0.99) == "met"
    assert point_verdict((0.980, 0.988), 0.99) == "missed"
    assert point_verdict((0.983, 0.992), 0.99) is None  # straddles 99 %
    # near capacity a single run must clear the target by its own width: 0.991 − 0.99 < 0.995 − 0.991
    assert point_verdict((0.991, 0.995), 0.99, near_capacity=True) is None
    assert point_verdict((0.970, 0.975), 0.99, near_capacity=True) == "missed"  # 0.015 short, 0.005 wide


def test_the_binomial_quantile_is_scipys() -> None:
    for n, p in ((2000, 0.99), (1000, 0.99), (1077, 0.99), (500, 0.5), (30, 0.9), (200_000, 0.99)):
        for q in (0.05, 0.95):
            assert abs(binomial_quantile(q, n, p) - binom.ppf(q, n, p)) <= (1 if n > 100_000 else 0), (n, p, q)


def test_the_p99_and_its_ranks_by_hand() -> None:
    # n = 2,000, p = 0.99: F⁻¹(0.05) = 1,972 and F⁻¹(0.95) + 1 = 1,988 of Binomial(2,000, 0.99) (exact coverage
    # 92.8 %); n = 1,000: [985, 996]. The values are the order statistics there: with x_i = i ms, 1,972 and 1,988 ms.
    values = np.random.default_rng(3).permutation(np.arange(1.0, 2001.0))  # no order in send order: ρ ≈ 0
    found = quantile(values, 0.99)
    assert found.rank_ci == (1972, 1988) and found.ci == (1972.0, 1988.0) and found.effective == 2000
    assert found.value == pytest.approx(np.percentile(values, 99))
    assert binom.cdf(1987, 2000, 0.99) - binom.cdf(1971, 2000, 0.99) == pytest.approx(0.928, abs=5e-4)
    assert quantile(np.random.default_rng(4).permutation(np.arange(1.0, 1001.0)), 0.99).rank_ci == (985, 996)


def test_requests_whose_tail_runs_together_widen_the_interval() -> None:
    # the 20 largest of 2,000 values sent one after another: 1[x > q̂] is one run, ρ ≈ 0.99 → 0.9 (clipped),
    # n_eff = 2,000 × 0.1/1.9 = 105: ranks at 105 scaled by 2,000/105 outward, a wider interval than ρ = 0's
    values = np.concatenate([np.arange(1.0, 1981.0), np.arange(3000.0, 3020.0)])
    found = quantile(values, 0.99)
    assert found.effective == 105
    low, high = found.rank_ci  # type: ignore[misc]
    assert low == math.floor(binom.ppf(0.05, 105, 0.99) * 2000 / 105) and high == 2000
    assert low < 1972


def test_the_tail_guard_by_hand() -> None:
    # p99 needs 10/(1 − 0.99) = 1,000 requests (not 1,001 from 1000.0000000000009), p99.9 10,000, p90 100
    assert (requests_for_quantile(0.99), requests_for_quantile(0.999), requests_for_quantile(0.9)) == (1000, 10000, 100)
    guarded = quantile(np.arange(1.0, 641.0), 0.99)
    assert guarded.value is None and guarded.ci is None and (guarded.n, guarded.needed) == (640, 1000)
    assert quantile(np.arange(1.0, 501.0), 0.99).value is None  # n = 500: no p99


def test_the_requests_a_verdict_needs_by_hand() -> None:
    # z = 1.644854 (the normal's 95th percentile), z² = 2.705543. 0.6 % above a p99 objective (share above 0.006
    # against 0.01): 2.705543 × 0.006 × 0.994 / 0.004² = 1,008.5 → 1,009; with ρ = 0.3, 1,009 × 1.3/0.7 = 1,873.9
    # → 1,874
    assert requests_needed(0.006, 0.01, p=0.99) == 1009
    assert requests_needed(0.006, 0.01, 0.3, p=0.99) == 1874
    # Â = 98.75 % against 99 %: 2.705543 × 0.9875 × 0.0125 / 0.0025² = 5,343.6 → 5,344; 98.9 %: 2.705543 × 0.989
    # × 0.011 / 0.001² = 29,433.6 → 29,434 (the spec's 29,436 rounds z to 1.6449 first)
    assert requests_needed(0.9875, 0.99) == 5344
    assert requests_needed(0.989, 0.99) == 29434
    assert requests_needed(0.99, 0.99) is None  # the margin is zero: no number of requests decides
    assert requests_needed(0.5, 0.99, p=0.99) == 1000  # far from the target, the tail guard's count


def test_the_max_load_under_the_objectives_by_hand() -> None:
    # loads 2, 4, 6, 8, 10 request/s with N = 1,200, 1,200, 1,800, 2,400, 3,000 and A = 99.92, 99.58, 99.67, 98.13,
    # 90.20 %: 4 and 6 rise, so they pool to (0.9958 × 1,200 + 0.9967 × 1,800)/3,000 = 0.99634; at a* = 99 % the
    # crossing lies between 6 (0.99634) and 8 (0.9813): 6 + 2 × 0.00634/0.01504 = 6.843 request/s
    loads = np.array([2.0, 4.0, 6.0, 8.0, 10.0])
    fitted = decreasing_fit(loads, np.array([0.9992, 0.9958, 0.9967, 0.9813, 0.9020]),
                            np.array([1200.0, 1200.0, 1800.0, 2400.0, 3000.0]))
    assert fitted == pytest.approx([0.9992, 0.99634, 0.99634, 0.9813, 0.9020])
    found = max_load(loads, fitted, 0.99)
    assert found.bound is None and found.value == pytest.approx(6 + 2 * 0.00634 / 0.01504)
    assert round(found.value, 2) == 6.84
    # never extrapolated: every load meets 90 % (a lower bound at 10), none meets 99.95 % (below 2)
    assert (max_load(loads, fitted, 0.90).value, max_load(loads, fitted, 0.90).bound) == (10.0, "above")
    assert (max_load(loads, fitted, 0.9995).value, max_load(loads, fitted, 0.9995).bound) == (2.0, "below")


def test_the_fit_pools_a_long_rise_and_keeps_the_loads_order() -> None:
    # given out of order; 0.90, 0.95, 0.97 rise over three loads of equal weight: one pool at 0.94
    fitted = decreasing_fit(np.array([3.0, 1.0, 2.0]), np.array([0.97, 0.90, 0.95]), np.ones(3))
    assert fitted == pytest.approx([0.94, 0.94, 0.94])
    already = np.array([0.99, 0.98, 0.5])
    assert decreasing_fit(np.arange(3.0), already, np.ones(3)) == pytest.approx(already)


def test_an_objectives_flip_by_hand() -> None:
    # 10 requests, TPOT 10, 11, … 19 ms (E2E − TTFT over 100 tokens after the first), TTFT 0.1 s except the last's
    # 0.5 s. At a TTFT ≤ 0.2 s objective, 9 meet it; for 80 % (⌈8⌉ requests) TPOT flips at the 8th smallest TPOT
    # among those 9: 17 ms. For 95 % (⌈9.5⌉ = 10), fewer meet the others: TTFT binds, no TPOT flips it.
    tpot = 0.010 + 0.001 * np.arange(10)
    ttft = np.full(10, 0.1)
    ttft[9] = 0.5
    requests = Requests(np.arange(10.0), ttft, ttft + 100 * tpot, np.full(10, 101), np.ones(10, dtype=bool))
    objectives = Objectives(ttft_s=0.2, tpot_s=0.012)
    assert objective_flip(requests, objectives, "tpot", 0.8, open_load=False) == pytest.approx(0.017)
    assert objective_flip(requests, objectives, "tpot", 0.95, open_load=False) is None
    # the TTFT objective flips at the 8th smallest TTFT among the 3 meeting TPOT ≤ 12 ms: there are not 8
    assert objective_flip(requests, objectives, "ttft", 0.8, open_load=False) is None
    assert objective_flip(requests, objectives, "ttft", 0.3, open_load=False) == pytest.approx(0.1)


def test_the_pareto_frontier_and_the_chosen_point_by_hand() -> None:
    # 4 nodes at 2, 6, 8 request/s and 8 nodes at 12, 16 (tokens/s per device, per user): 4n@6 (168.8, 41.7) is
    # beaten by 8n@12 (168.8, 45.5); 4n@8 (221.9, 32.3) by 8n@16 (223.4, 38.5). The frontier: 4n@2, 8n@12, 8n@16.
    points = [ParetoPoint(4, 2, 56.2, 47.6, True), ParetoPoint(4, 6, 168.8, 41.7, True),
              ParetoPoint(4, 8, 221.9, 32.3, False), ParetoPoint(8, 12, 168.8, 45.5, True),
              ParetoPoint(8, 16, 223.4, 38.5, False)]
    assert [(p.nodes, p.load) for p in frontier(points)] == [(4, 2), (8, 12), (8, 16)]
    chosen_point = chosen(points, 8)
    assert chosen_point is not None and (chosen_point.nodes, chosen_point.load) == (8, 12)  # 8n@16 misses
    assert chosen(points, 2) is None
    # 1.2 kWh over 2.4 million output tokens: 4.32 MJ / 2.4e6 = 1.8 J a token; 2.4e6 tokens in 1,000 s on 32 devices
    assert joules_per_token(1.2, 2.4e6) == pytest.approx(1.8)
    assert tokens_per_device(2.4e6, 1000.0, 32) == pytest.approx(75.0)


def test_the_knee_where_latency_departs_by_hand() -> None:
    # median TTFT 210, 220, 240, 450, 1,300 ms at 2 … 10 request/s: x = 0, 0.25, 0.5, 0.75, 1; y = (TTFT − 210)/1,090
    # = 0, 0.009, 0.028, 0.220, 1; x − y = 0, 0.241, 0.472, 0.530, 0: the knee at 8 request/s
    loads = np.array([2.0, 4.0, 6.0, 8.0, 10.0])
    assert latency_knee(loads, np.array([0.210, 0.220, 0.240, 0.450, 1.300])) == 8.0
    assert latency_knee(loads[::-1], np.array([1.300, 0.450, 0.240, 0.220, 0.210])) == 8.0  # any order
    assert latency_knee(loads, loads / 10) is None  # a straight line: x − y is 0 everywhere
    assert latency_knee(loads[:3], np.array([0.2, 0.3, 1.0])) is None  # three points are too few
