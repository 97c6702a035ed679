"""§5.z plan-past-peak: a plan at which a smaller measured scale is faster beyond noise, or beyond the USL peak.

More nodes that make a run slower cost more twice over: every node-hour is paid for, and for longer. The check is
of measured times (with their intervals when repeats exist); the USL peak adds the case of a plan past the fitted
curve's maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.analysis.common import first_min
from reportgen.analysis.cost import CostResult
from reportgen.analysis.scaling import ScaleRow, ScalingResult

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
    smaller = [r for r in scaling.rows if r.nodes < plan and r.time_s is not None]
    if not smaller:
        return None
    better = first_min(smaller, key=lambda r: r.time_s or 0.0)
    row = next((r for r in scaling.rows if r.nodes == plan), None)
    peak = scaling.usl.peak_nodes if scaling.usl else None
    beyond_usl = peak is not None and plan > peak and better.nodes <= max(peak, scaling.reference_nodes) * 2
    faster = row is not None and _faster_beyond_noise(better, row)
    if not (faster or beyond_usl):
        return None
    if row is not None and not faster and (row.time_s or 0.0) <= (better.time_s or 0.0):
        return None  # past the fitted peak, but the plan measured fastest: the measurement outranks the fit
    costs = {r.nodes: r.cost for r in cost.rows} if cost is not None and not cost.per_unit_of_work else {}
    return PastPeak(plan, row.time_s if row else None, costs.get(int(plan)) if row else None, better.nodes,
                    better.time_s or 0.0, costs.get(int(better.nodes)), peak if beyond_usl else None)


def _faster_beyond_noise(smaller: ScaleRow, plan: ScaleRow) -> bool:
    if smaller.time_s is None or plan.time_s is None or smaller.time_s >= plan.time_s:
        return False
    if smaller.time_ci is not None and plan.time_ci is not None:
        return smaller.time_ci[1] < plan.time_ci[0]  # the intervals do not overlap
    return smaller.time_s < plan.time_s * (1 - FASTER_WITHOUT_REPEATS)
