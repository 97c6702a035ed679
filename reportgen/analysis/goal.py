"""The team's question: is the goal met at the planned node count, in which price regime, and at what cheapest scale.

The plan is judged on its measured run (a prediction is not evidence), in every price regime the project states;
the cheapest measured (scale, regime) that meets the goal is the alternative the summary offers.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.analysis.common import first_min
from reportgen.analysis.cost import CostResult, priced_points
from reportgen.analysis.energy import EnergyResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.project.model import Goal


@dataclass(frozen=True)
class GoalCheck:
    """One point (a scale in a price regime) held against the goal's limits."""

    nodes: int
    regime: str | None  # on_demand | spot | local; None without pricing
    viable: bool
    time_s: float
    cost: float | None
    co2_kg: float | None
    meets_time: bool | None  # None: the goal sets no time limit
    meets_cost: bool | None  # None: the goal sets no cost limit, or the cost is unknown
    time_ratio: float | None  # time / the goal's time (below 1: met, by that margin)
    cost_ratio: float | None  # cost / the goal's cost
    monthly_cost: float | None
    met: bool | None  # every stated limit met in a viable regime; None when a stated limit cannot be checked


@dataclass(frozen=True)
class GoalResult:
    text: str | None
    time_limit_s: float | None
    cost_limit: float | None
    plan_nodes: int | None
    plan_measured: bool
    at_plan: tuple[GoalCheck, ...]  # one per price regime the project states (on-demand alone without regimes)
    met_at_plan: bool | None  # some viable regime meets the goal at the plan; None when it cannot be judged
    cheapest_meeting: GoalCheck | None  # the cheapest measured point that meets the goal (ties: smaller p)
    none_meets: bool  # every measured point in every viable regime misses the goal (a judgement, not a gap)
    runs_per_month: float | None
    monthly_cost: float | None  # runs_per_month × the plan's cost in its cheapest regime that meets the goal,
    # else in the first regime stated (on-demand)
    note: str  # why the goal cannot be judged, when it cannot


@dataclass(frozen=True)
class _Limits:
    goal: Goal
    co2: dict[int, float | None]
    runs_per_month: float | None

    def hold(self, nodes: int, regime: str | None, viable: bool, time_s: float, cost: float | None) -> GoalCheck:
        time_limit, cost_limit = self.goal.time_per_run, self.goal.cost_per_run
        time_ratio = time_s / time_limit if time_limit else None
        cost_ratio = cost / cost_limit if cost_limit and cost is not None else None
        meets_time = None if time_ratio is None else time_ratio <= 1.0
        meets_cost = None if cost_ratio is None else cost_ratio <= 1.0
        met: bool | None = True
        if not viable or meets_time is False or meets_cost is False:
            met = False
        elif cost_limit and cost is None:
            met = None  # a cost limit without prices cannot be checked
        return GoalCheck(nodes, regime, viable, time_s, cost, self.co2.get(nodes), meets_time, meets_cost,
                         time_ratio, cost_ratio,
                         cost * self.runs_per_month if self.runs_per_month and cost is not None else None, met)


def check_goal(goal: Goal | None, *, plan_nodes: int | None, scaling: ScalingResult | None,
               cost: CostResult | None, energy: EnergyResult | None,
               runs_per_month: float | None) -> GoalResult | None:
    if goal is None or (goal.time_per_run is None and goal.cost_per_run is None):
        return None
    if scaling is None or scaling.per_unit_of_work:
        why = ("the runs are measured per unit of work (add scaling.work_per_run)" if scaling
               else "nothing is measured (add scaling.runs)")
        return GoalResult(goal.text, goal.time_per_run, goal.cost_per_run, plan_nodes, False, (), None, None,
                          False, runs_per_month, None, why)
    limits = _Limits(goal, {row.nodes: row.co2_kg for row in energy.rows} if energy else {}, runs_per_month)
    if cost is not None:
        checks = [limits.hold(point.nodes, point.regime, True, point.time_s, point.cost)
                  for point in priced_points(cost)]
    else:
        checks = [limits.hold(row.nodes, None, True, row.time_s or 0.0, None) for row in scaling.rows]
    meeting = [check for check in checks if check.met]
    cheapest = first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s) if meeting else None
    plan_measured = plan_nodes is not None and any(row.nodes == plan_nodes for row in scaling.rows)
    at_plan: tuple[GoalCheck, ...] = ()
    note = ""
    if plan_nodes is None:
        note = "the project plans no node count (add design.nodes)"
    elif not plan_measured:
        note = f"the planned {plan_nodes} nodes were not measured: the goal cannot be judged there"
    elif cost is not None:  # every regime the project states, a non-viable one marked so
        at_plan = tuple(limits.hold(plan_nodes, name, regime.viable, row.time_s, row.cost)
                        for name, regime in cost.regimes.items()
                        for row in regime.rows if row.nodes == plan_nodes)
    else:
        at_plan = tuple(check for check in checks if check.nodes == plan_nodes)
    verdicts = [check.met for check in at_plan]
    met = None if not at_plan else True if True in verdicts else False if all(v is False for v in verdicts) else None
    priced_and_met = [c for c in at_plan if c.met and c.cost is not None]
    best = first_min(priced_and_met, key=lambda c: c.cost or 0.0) if priced_and_met else \
        at_plan[0] if at_plan else None
    return GoalResult(goal.text, goal.time_per_run, goal.cost_per_run, plan_nodes, plan_measured, at_plan, met,
                      cheapest, all(check.met is False for check in checks), runs_per_month,
                      best.monthly_cost if best else None, note)
