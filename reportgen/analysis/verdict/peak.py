"""plan-past-peak: a plan at which a smaller measured scale is faster beyond noise, or beyond the USL peak.

More nodes that make a run slower cost more twice over: every node-hour is paid for, and for longer. The check is
of measured times (with their intervals when repeats exist); the USL peak adds the case of a plan past the fitted
curve's maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reportgen.analysis.common import beyond_noise, first_min
from reportgen.analysis.measured.scaling import ScaleRow, ScalingResult
from reportgen.analysis.money.cost import CostResult, CostRow
from reportgen.analysis.quotes import quote
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
    # the rows the figures are read from (scaling.rows, cost.rows), for the words to quote where a figure is a row's
    # own (one run does the goal's work: not weak scaling's several)
    quoted: tuple[object, ...] = ()


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
    held: list[ScaleRow | CostRow] = [*scaling.rows, *(cost.rows if cost is not None else ())]
    own = [r for r in held if scaling.goal_work(r.nodes, plan) == 1.0]
    return PastPeak(plan, row.time_s if row else None, costs.get(int(plan)) if row else None, better.nodes,
                    better.time_s or 0.0, costs.get(int(better.nodes)), peak if beyond_usl else None, tuple(own))


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
    def own(at: float, attribute: str, value: float | None, unit: str) -> float | None:
        """The figure quoted from its row when it is the row's own value."""
        row = next((r for r in peak.quoted if getattr(r, "nodes", None) == at and hasattr(r, attribute)
                    and getattr(r, attribute) == value), None)
        return quote(row, attribute, unit) if row is not None and value is not None else value

    def priced(at: float, amount: float | None) -> str:
        return f" for {money(own(at, 'cost', amount, 'currency'), currency)}" if amount is not None else ""
    at = peak.better_nodes
    better = f"{nodes(own(at, 'nodes', at, 'nodes'))} take {duration(own(at, 'time_s', peak.better_time_s, 's'))}" \
        f"{priced(at, peak.better_cost)}"
    if peak.plan_time_s is None:
        return f"the plan lies past the USL fit's peak near {number(peak.usl_peak_nodes)} nodes, and {better}"
    plan = peak.plan_nodes
    return f"{nodes(own(plan, 'nodes', plan, 'nodes'))} take {duration(own(plan, 'time_s', peak.plan_time_s, 's'))}" \
        f"{priced(plan, peak.plan_cost)}; {better}"
