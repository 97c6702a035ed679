"""Small numeric rules shared by the analyses: tie-safe choices and rounding-safe ceilings."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

T = TypeVar("T")
Origin = Literal["measured", "fitted"]  # a number read from a measured scale, or from the USL fit between them

# Values equal to within this relative tolerance are ties (the spec's tie rules then pick the smaller p);
# without it, two mathematically equal costs computed along different float paths could break a tie at random.
TIE_TOLERANCE = 1e-12
JOULES_PER_KWH = 3.6e6


def ceil_ratio(numerator: float, denominator: float) -> int:
    """ceil(numerator / denominator), immune to representation error: 20 ms / 0.4 ms is exactly 50, not 51."""
    ratio = numerator / denominator
    nearest = round(ratio)
    if math.isclose(ratio, nearest, rel_tol=1e-9, abs_tol=1e-12):
        return int(nearest)
    return math.ceil(ratio)


def node_hours(nodes: float, time_s: float) -> float:
    """Node-hours of a run of `time_s` on `nodes`: p · T / 3600."""
    return nodes * time_s / 3600.0


def whole_nodes(nodes: float) -> int:
    """A measured scale as a node count, for the analyses that price or power whole nodes (cost, energy,
    decisions): the project check refuses them beside a load axis, so their scales are whole numbers."""
    if nodes != int(nodes):
        raise ValueError(f"{nodes} is a load level, not a whole node count")
    return int(nodes)


def at_least(value: float, threshold: float) -> bool:
    """value ≥ threshold, counting values within rounding of the threshold as reaching it."""
    return value >= threshold or math.isclose(value, threshold, rel_tol=1e-9)


def first_min(items: Sequence[T], key: Callable[[T], float]) -> T:
    """The first item with the smallest key (items come sorted by p, so ties go to the smaller p)."""
    best = min(key(item) for item in items)
    return next(item for item in items if key(item) <= best + abs(best) * TIE_TOLERANCE)


def first_max(items: Sequence[T], key: Callable[[T], float]) -> T:
    best = max(key(item) for item in items)
    return next(item for item in items if key(item) >= best - abs(best) * TIE_TOLERANCE)


def plan_verdict(rows: Sequence[tuple[bool, bool | None]]) -> bool | None:
    """The goal at the plan from its rows, (viable, met) per price regime (methods.md#plan-verdict): true when a
    viable regime meets it, false when every viable one misses (or none is viable), null when no row holds the
    plan or a viable regime's verdict is not known and none meets."""
    if not rows:
        return None
    viable = [met for is_viable, met in rows if is_viable]
    if True in viable:
        return True
    if all(met is False for met in viable):
        return False
    return None


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Two [low, high] intervals share a point."""
    return a[0] <= b[1] and b[0] <= a[1]


def beyond_noise(value: float, other: float, value_ci: tuple[float, float] | None,
                 other_ci: tuple[float, float] | None, tolerance: float) -> bool:
    """Two measured values differ beyond noise: their intervals do not overlap when both have one (repeats),
    else `value` departs from `other` by more than `tolerance` of `other` (methods.md#tolerance)."""
    if value_ci is not None and other_ci is not None:
        return not overlaps(value_ci, other_ci)
    return abs(value / other - 1) > tolerance


def powers_of_two(top: int) -> list[int]:
    """1, 2, 4, … up to `top` (none below 1): the scales a table or a search steps through."""
    return [1 << k for k in range(max(top, 0).bit_length())]


def power_of_two(level: float) -> bool:
    """1, 2, 4, 8, …: a node count, or a load level (which may be fractional: 1.53 is none)."""
    return float(level).is_integer() and level >= 1 and int(level) & (int(level) - 1) == 0


def log_spread(values: Sequence[float], count: int) -> list[float]:
    """At most `count` of the sorted `values`, spread evenly on a log axis, both ends kept: the value nearest each of
    `count` points evenly spaced between the logarithms of the first and the last."""
    if len(values) <= count:
        return list(values)
    low, high = math.log(values[0]), math.log(values[-1])
    logs = [math.log(value) for value in values]
    chosen = {min(range(len(values)), key=lambda i: abs(logs[i] - (low + (high - low) * k / (count - 1))))
              for k in range(count)}
    return [values[i] for i in sorted(chosen)]


def headline_of(rows: Sequence[T], *, viable: Callable[[T], bool], met: Callable[[T], bool],
                cost: Callable[[T], float | None], time: Callable[[T], float]) -> T | None:
    """The plan's row page 1 leads with (methods.md#page-1-from-one-set-of-facts): the cheapest viable row that
    meets, else the cheapest viable, else the fastest; rows without a cost compare by time. The one rule the goal,
    page 1's facts and the findings that name a regime all read."""
    if not rows:
        return None

    def order(row: T) -> float:
        value = cost(row)
        return time(row) if value is None else value

    usable = [row for row in rows if viable(row)]
    meeting = [row for row in usable if met(row)]
    if meeting or usable:
        return first_min(meeting or usable, key=order)
    return first_min(list(rows), key=time)
