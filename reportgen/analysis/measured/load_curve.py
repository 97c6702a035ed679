"""The max load a scale serves within the objectives (methods.md#a-service-judged-from-its-requests): the load
points' attainments fitted by a non-increasing curve (pool-adjacent-violators, Barlow et al. 1972), and the load
where that curve crosses the target share, found between measured loads and never beyond them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from reportgen.analysis.measured.scaling import KNEE_THRESHOLD

Bound = Literal["above", "below"]


def decreasing_fit(loads: np.ndarray, shares: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted least-squares non-increasing fit of `shares` over increasing `loads`: each run of points that
    rises is pooled into its weighted mean until none rises (pool-adjacent-violators)."""
    order = np.argsort(loads, kind="stable")
    pools: list[list[float]] = []  # [weighted sum, weight, points]
    for share, weight in zip(shares[order], weights[order], strict=True):
        pools.append([float(share) * float(weight), float(weight), 1.0])
        while len(pools) > 1 and pools[-1][0] / pools[-1][1] > pools[-2][0] / pools[-2][1]:
            total, mass, points = pools.pop()
            pools[-1] = [pools[-1][0] + total, pools[-1][1] + mass, pools[-1][2] + points]
    fitted = np.repeat([total / mass for total, mass, _ in pools], [int(points) for _, _, points in pools])
    out = np.empty_like(fitted)
    out[order] = fitted
    return out


@dataclass(frozen=True)
class MaxLoad:
    value: float  # the load where the fit crosses the target; with a bound, the measured end it lies beyond
    bound: Bound | None  # "above": the largest load measured still meets it; "below": the smallest already misses


def max_load(loads: np.ndarray, fitted: np.ndarray, target: float) -> MaxLoad:
    """Where the fitted curve crosses `target`: between the last fitted value at or above it and the next, linearly
    in the load. Never extrapolated: beyond the measured loads it is a bound at the end measured."""
    order = np.argsort(loads, kind="stable")
    x, y = loads[order].astype(float), fitted[order].astype(float)
    if y[-1] >= target:
        return MaxLoad(float(x[-1]), "above")
    if y[0] < target:
        return MaxLoad(float(x[0]), "below")
    last = int(np.flatnonzero(y >= target)[-1])
    step = (y[last] - target) / (y[last] - y[last + 1])
    return MaxLoad(float(x[last] + (x[last + 1] - x[last]) * step), None)


MIN_KNEE_POINTS = 4


def latency_knee(loads: np.ndarray, latencies: np.ndarray) -> float | None:
    """Where latency departs as the load grows (Kneedle, Satopää et al. 2011): with the loads and the binding
    objective's median latency each min–max normalised, the load maximising x − y on this convex, rising curve (the
    first of equal maxima), reported with at least four points and a maximum of at least KNEE_THRESHOLD, as the
    scaling knee is; None otherwise. Linear in the load: offered loads are spaced evenly, not in doublings."""
    order = np.argsort(loads, kind="stable")
    x, y = loads[order].astype(float), latencies[order].astype(float)
    if len(x) < MIN_KNEE_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    difference = (x - x.min()) / np.ptp(x) - (y - y.min()) / np.ptp(y)
    index = int(np.argmax(difference))
    return float(x[index]) if difference[index] >= KNEE_THRESHOLD else None
