"""A seeded stand-in for a load test (methods.md#a-service-judged-from-its-requests): Poisson (or evenly spaced)
requests into K first-come-first-served slots of a server. A request waits for a slot; its TTFT is that wait plus
a prefill of 80 ms·LogN(0, 0.25); it then decodes 64–256 output tokens at 20 ms·LogN(0, 0.1) each. Capacity is
about K / 3.26 s: 14.7 request/s at 48 slots.

The tests make load tests of known truth from it: the share of requests meeting objectives is known from a long
run of the same server, and the pathologies are planted on purpose (failures, a client that falls short of its
rate, a slow start).
"""

from __future__ import annotations

import heapq

import numpy as np

from reportgen.project.load_tests import Requests


def load_test(count: int, rate_per_s: float, *, slots: int = 48, seed: int = 0, poisson: bool = True,
              slow_first: int = 0, slow_factor: float = 4.0, fail_share: float = 0.0) -> Requests:
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1 / rate_per_s, count) if poisson else np.full(count, 1 / rate_per_s)
    send = np.cumsum(gaps) - gaps[0]
    prefill = 0.08 * rng.lognormal(0.0, 0.25, count)
    tokens = rng.integers(64, 257, count)
    per_token = 0.02 * rng.lognormal(0.0, 0.1, count)
    if slow_first:
        prefill[:slow_first] *= slow_factor
    free = [0.0] * slots
    ttft, e2e = np.empty(count), np.empty(count)
    for i in range(count):
        start = max(send[i], heapq.heappop(free))
        first = start + prefill[i]
        end = first + (tokens[i] - 1) * per_token[i]
        heapq.heappush(free, end)
        ttft[i], e2e[i] = first - send[i], end - send[i]
    ok = rng.random(count) >= fail_share
    return Requests(send, ttft, e2e, tokens.astype(float), ok)
