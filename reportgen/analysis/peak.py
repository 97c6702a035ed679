"""plan-past-peak: a plan at which a smaller measured scale is faster beyond noise, or beyond the USL peak.

More nodes that make a run slower cost more twice over: every node-hour is paid for, and for longer. The check is
of measured times (with their intervals when repeats exist); the USL peak adds the case of a plan past the fitted
curve's maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reportgen.analysis.common import beyond_noise, first_min
from reportgen.analysis.cost import CostResult
from reportgen.analysis.scaling import ScaleRow, ScalingResult
from reportgen.wording import duration, money, nodes, number

FASTER_WITHOUT_REPEATS = 0.05  # without intervals, a smaller scale must be more than 5 % faster to count


@dataclass(frozen=True)
class PastPeak:
    plan_nodes: float
    plan_time_s: float | None  # None: the plan was not measured (it lies past the USL peak)
    plan_cost: float | None  # on demand
    better_nodes: float  # the fastest smaller measured scale
    better_time_s: float
    better_cost: float | None
    usl_peak_nodes: float | None  # set when the plan lies beyond the USL fit's peak


def plan_past_peak(scaling: ScalingResult | None, cost: CostResult | None, plan: float | None) -> PastPeak | None:
    """The plan against the smaller measured scales and the USL peak (None when it is not past the peak)."""
    if scaling is None or plan is None or scaling.single_scale or scaling.per_unit_of_work:
        return None
    # the goal's work at each scale (weak scaling: a smaller scale does the plan's shares in several runs)
    rows = [_for_goal_work(r, scaling.goal_work(r.nodes, plan)) for r in scaling.rows]
    smaller = [r for r in rows if r.nodes < plan and r.time_s is not None]
    if not smaller:
        return None
    better = first_min(smaller, key=lambda r: r.time_s or 0.0)
    row = next((r for r in rows if r.nodes == plan), None)
    peak = scaling.usl.peak_nodes if scaling.usl and scaling.mode != "weak" else None
    beyond_usl = peak is not None and plan > peak and better.nodes <= max(peak, scaling.reference_nodes) * 2
    faster = row is not None and _faster_beyond_noise(better, row)
    if not (faster or beyond_usl):
        return None
    if row is not None and not faster and (row.time_s or 0.0) <= (better.time_s or 0.0):
        return None  # past the fitted peak, but the plan measured fastest: the measurement outranks the fit
    costs = {r.nodes: r.cost * scaling.goal_work(r.nodes, plan) for r in cost.rows} \
        if cost is not None and not cost.per_unit_of_work else {}
    return PastPeak(plan, row.time_s if row else None, costs.get(int(plan)) if row else None, better.nodes,
                    better.time_s or 0.0, costs.get(int(better.nodes)), peak if beyond_usl else None)


def _for_goal_work(row: ScaleRow, runs: float) -> ScaleRow:
    """The row's time (and interval) for `runs` of it, one after another."""
    if runs == 1.0 or row.time_s is None:
        return row
    interval = None if row.time_ci is None else (row.time_ci[0] * runs, row.time_ci[1] * runs)
    return replace(row, time_s=row.time_s * runs, time_ci=interval)


def _faster_beyond_noise(smaller: ScaleRow, plan: ScaleRow) -> bool:
    if smaller.time_s is None or plan.time_s is None or smaller.time_s >= plan.time_s:
        return False
    return beyond_noise(smaller.time_s, plan.time_s, smaller.time_ci, plan.time_ci, FASTER_WITHOUT_REPEATS)


def past_peak_words(peak: PastPeak, currency: str) -> str:
    """"16 nodes take 235 s for 3.34 USD; 8 take 206 s for 1.47 USD" (on demand), or the USL peak it lies past."""
    def priced(amount: float | None) -> str:
        return f" for {money(amount, currency)}" if amount is not None else ""
    better = f"{nodes(peak.better_nodes)} take {duration(peak.better_time_s)}{priced(peak.better_cost)}"
    if peak.plan_time_s is None:
        return f"the plan lies past the USL fit's peak near {number(peak.usl_peak_nodes)} nodes, and {better}"
    return f"{nodes(peak.plan_nodes)} take {duration(peak.plan_time_s)}{priced(peak.plan_cost)}; {better}"
