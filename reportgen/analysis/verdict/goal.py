"""The team's question: is the goal met at the planned node count, in which price regime, and at what cheapest scale.

The plan is judged on its measured run in every price regime the project states; the cheapest measured (scale,
regime) that meets the goal is the alternative the summary offers. An unmeasured plan is not judged, but the value
the USL fit gives there is shown, labelled fitted; when no measured scale meets the goal, the smallest scale the fit
says would meet it is the one to measure next.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.common import TIE_TOLERANCE, Origin, first_min, headline_of, plan_verdict
from reportgen.analysis.measured.confidence import PlanEstimate
from reportgen.analysis.measured.scaling import ScalingResult, run_time
from reportgen.analysis.money.cost import CostResult, priced_points
from reportgen.analysis.money.energy import EnergyResult
from reportgen.analysis.verdict.lever_records import Lever, Levers, NearMiss
from reportgen.keys import CURRENCY, DocumentPath, Key, interval, money
from reportgen.project.model import Goal, RegimeName, Scaling

UnjudgedWhy = Literal["estimate-straddles", "model-other-side", "few-scales", "model-demoted"]


IntervalBasis = Literal["calibrated", "raw"]


@dataclass(frozen=True)
class GoalCheck:
    """One point (a scale in a price regime) held against the goal's limits."""

    nodes: float
    regime: RegimeName | None  # None without pricing
    viable: bool
    time_s: float
    cost: float | None
    co2_kg: float | None
    meets_time: bool | None  # None: the goal sets no time limit, or an estimate cannot judge it (it straddles)
    meets_cost: bool | None  # None: the goal sets no cost limit, the cost is unknown, or an estimate straddles it
    time_ratio: float | None  # time / the goal's time (below 1: met, by that margin)
    cost_ratio: float | None  # cost / the goal's cost
    monthly_cost: float | None
    met: bool | None  # every stated limit met in a viable regime; None when a stated limit cannot be checked
    source: Origin = "measured"  # fitted: the USL fit at a scale nobody measured
    time_ci: tuple[float, float] | None = None  # the measured time's 95 % interval, with repeats
    cost_ci: tuple[float, float] | None = None  # the cost over that interval (cost is proportional to time)
    failure_tax: float | None = None  # the failure tax's overhead folded into time, cost and CO2e (with reliability)
    runs: float = 1.0  # weak scaling: the runs one after another that do the goal's work
    # what the plan's spread says beside its verdict (methods.md#few-runs-stated-confidence): its interval holds a
    # limit; its repeats beyond a limit (null with one run); its runs (null: not measured); the share of the
    # resamples of its figure beyond a limit (null without the resamples)
    straddles: bool = False
    runs_over: int | None = None
    repeats: int | None = None
    p_miss: float | None = None
    ci_basis: IntervalBasis | None = None  # an unmeasured plan's interval: raw (the resampled fits) or calibrated


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
    fitted_at_plan: tuple[GoalCheck, ...] = ()  # an unmeasured plan as the USL fit has it, per regime
    fitted_meeting: GoalCheck | None = None  # no measured point meets: the smallest unmeasured scale the fit says does
    cost_unknown: bool = False  # a cost limit is stated but the project gives no prices
    nearest: GoalCheck | None = None  # no measured point meets: the one whose largest excess over a limit is least
    # A budget without prices cannot be judged: the measured scale meeting the time limit with the fewest node-hours
    # (the price-free measure of cost) is what the summary offers then.
    time_met_fewest_node_hours: GoalCheck | None = None
    cheapest_run: GoalCheck | None = None  # the cheapest measured point in any viable regime, met or not
    plan_estimate: PlanEstimate | None = None  # an unmeasured plan's time by the resampled fits, with its interval
    levers: Levers = field(default_factory=Levers)  # where the verdict at the plan flips (analysis.levers)
    speedup_needed: float | None = None  # the reference's time over the time limit (above 1: the deadline needs it)
    # every measured (scale, regime) held against the goal: page 1's measured-scale candidates read them
    checks: tuple[GoalCheck, ...] = ()
    # a scale nobody measured, of a given undisturbed time, held in every regime as the plan would be (a layout's
    # figures on page 1: docs/methods.md#ways-considered)
    hold: Callable[[int, float], tuple[GoalCheck, ...]] | None = None
    # why an unmeasured plan's viable row is left unjudged, as a code page 1's facts read (the note words it)
    unjudged: UnjudgedWhy | None = None

    @property
    def priced(self) -> bool:
        return any(check.cost is not None for check in self.at_plan)

    def headline_regime(self) -> RegimeName | None:
        """The regime page 1 leads with (docs/methods.md#page-1-from-one-set-of-facts): among the plan's rows
        (measured, else fitted), the cheapest viable that meets, else the cheapest viable, else the fastest; rows
        without a cost compare by time. None without rows, or when the rows are unpriced."""
        lead = headline_of(self.at_plan or self.fitted_at_plan, viable=lambda row: row.viable,
                           met=lambda row: row.met is True, cost=lambda row: row.cost, time=lambda row: row.time_s)
        return lead.regime if lead is not None else None

    def plan_excess(self) -> float | None:
        """How far the plan is from its limits: in its best viable regime, its largest ratio of a value to a limit
        (below 1: within every limit; methods.md#the-goals-levers)."""
        ratios = [excess(check) for check in self.at_plan or self.fitted_at_plan if check.viable]
        return min(ratios) if ratios else None

    def document_paths(self) -> Iterator[DocumentPath]:
        """Where `GoalDocument.of` writes this result and its checks in results.json, and as what: page 1's
        figures find their source by it (docs/methods.md#every-figure-has-one-source)."""
        yield self, "goal", GoalDocument, {"time_limit_s": "time_per_run_s", "cost_limit": "cost_per_run"}
        for index, check in enumerate(self.at_plan or self.fitted_at_plan):
            yield check, f"goal.at_plan[{index}]", GoalRow, {}
        yield self.cheapest_meeting, "goal.cheapest_meeting", GoalPoint, {}
        yield self.fitted_meeting, "goal.fitted_meeting", GoalPoint, {}
        yield self.cheapest_run, "goal.cheapest_run", GoalRow, {}
        yield self.nearest, "goal.nearest", GoalRow, {}
        yield from self.levers.document_paths()


@dataclass(frozen=True)
class LatencyRatios:
    """A service's every stated latency objective at one point: its value over its limit (null: not stated, or
    not known there)."""

    p99: Annotated[float | None, Key("the end-to-end p99 / its objective")] = None
    ttft_p99: Annotated[float | None, Key("the p99 time to first token / its objective")] = None
    tpot_p99: Annotated[float | None, Key("the p99 time per output token / its objective")] = None


@dataclass(frozen=True)
class GoalRow:
    """One point against the goal as results.json has it: a run's figures, or a service's hourly ones, each null for
    the other."""

    nodes: Annotated[float, Key("node count")]
    regime: Annotated[RegimeName | None, Key("the price regime")]
    viable: Annotated[bool, Key("the regime is viable")]
    time_s: Annotated[float | None, Key("seconds per run")]
    cost: Annotated[float | None, money("money per run")]
    co2_kg: Annotated[float | None, Key("kg CO2e per run")]
    meets_time: Annotated[bool | None, Key("within the time limit; null without one, or when an unmeasured plan's "
                                           "estimate straddles it (methods.md#judging-an-unmeasured-plan)")]
    meets_cost: Annotated[bool | None, Key("within the cost limit (per run, or per hour when serving); null without "
                                           "one, without prices, or when an unmeasured plan's estimate straddles it")]
    met: Annotated[bool | None, Key("every stated limit met: false when one is missed or the regime is not viable, "
                                    "null when one cannot be judged")]
    time_ratio: Annotated[float | None, Key("time / the limit")]
    cost_ratio: Annotated[float | None, Key("cost / the limit")]
    monthly_cost: Annotated[float | None, money("cost × runs per month (serving: × 730 hours)")]
    source: Annotated[Origin, Key("where the values come from")]
    time_ci: Annotated[tuple[float, float] | None, interval("time_s", name="time_s_ci")] = None
    cost_ci: Annotated[tuple[float, float] | None, interval("cost (proportional to the time)", unit=CURRENCY)] = None
    # failure_overhead_fraction is RESULTS' turn-4 name for it; both keys hold the one value, which equals
    # reliability.at_plan[].overhead_fraction of the same regime at the plan (docs/methods.md#spot-as-failures)
    failure_tax: Annotated[float | None, Key("the failure tax's overhead fraction folded into time, cost and CO2e "
                                             "(with reliability)", also=("failure_overhead_fraction",))] = None
    cost_per_hour: Annotated[float | None, money("serving: money per hour in this regime")] = None
    capacity_rps: Annotated[float | None, Key("serving: requests per second served (spot: less the nodes "
                                              "down)")] = None
    p99_s: Annotated[float | None, Key("serving: the p99 latency there")] = None
    meets_load: Annotated[bool | None, Key("serving: capacity reaches the load with its headroom")] = None
    meets_latency: Annotated[bool | None, Key("serving: the p99 is within the objective; null when unknown")] = None
    load_ratio: Annotated[float | None, Key("serving: capacity / capacity needed")] = None
    latency_ratio: Annotated[float | None, Key("serving: p99 / the objective")] = None
    latency_ratios: Annotated[LatencyRatios | None, Key("serving: each stated objective's value / its limit (page 1 "
                                                        "quotes each)")] = None
    runs: Annotated[float, Key("the runs one after another that do the goal's work: 1, but in weak scaling the "
                               "plan's shares over this scale's (methods.md#weak-scaling-compares-equal-work)")] = 1.0
    straddles: Annotated[bool, Key(
        "the row's interval holds a limit: a measured plan's 95 % interval from its repeats (judged by its median), "
        "an unmeasured plan's 90 % interval from the resamples (methods.md#few-runs-stated-confidence)")] = False
    runs_over: Annotated[int | None, Key(
        "a measured plan's repeats beyond a limit, each taken through the regime and the failure tax as the median "
        "is (null with one run, or not measured)")] = None
    repeats: Annotated[int | None, Key("the runs measured at the plan (null: not measured)")] = None
    p_miss: Annotated[float | None, Key(
        "the share of the resamples of the row's figure beyond a limit: a measured plan's resampled median, an "
        "unmeasured plan's resampled estimate (null without them: weak scaling, one scale, the USL fit alone; "
        "methods.md#few-runs-stated-confidence)")] = None
    time_s_ci_basis: Annotated[IntervalBasis | None, Key(
        "what an unmeasured plan's time_s_ci is: raw, the resampled fits' 90 % interval (calibrated: widened by the "
        "recorded accuracy of this kind of extrapolation); null for a measured plan's repeats")] = None

    @classmethod
    def of(cls, check: GoalCheck) -> GoalRow:
        return cls(check.nodes, check.regime, check.viable, check.time_s, check.cost, check.co2_kg, check.meets_time,
                   check.meets_cost, check.met, check.time_ratio, check.cost_ratio, check.monthly_cost, check.source,
                   check.time_ci, check.cost_ci, check.failure_tax, runs=check.runs, straddles=check.straddles,
                   runs_over=check.runs_over, repeats=check.repeats, p_miss=check.p_miss,
                   time_s_ci_basis=check.ci_basis)

    def point(self) -> GoalPoint:
        """The row as the goal names a point (its cheapest meeting one)."""
        return GoalPoint(self.nodes, self.regime, self.cost, self.time_s, self.cost_per_hour, self.source, self.runs)


@dataclass(frozen=True)
class GoalPoint:
    nodes: Annotated[float, Key("node count")]
    regime: Annotated[RegimeName | None, Key("its price regime")]
    cost: Annotated[float | None, money("money per run")]
    time_s: Annotated[float | None, Key("seconds per run")]
    cost_per_hour: Annotated[float | None, money("serving: money per hour")]
    source: Annotated[Origin, Key("measured, or from the USL fit")]
    runs: Annotated[float, Key("the runs one after another that do the goal's work (weak scaling; else 1)")] = 1.0


@dataclass(frozen=True)
class GoalDocument:
    """The goal section of results.json: a training job's goal, or a serving project's (held in its serving
    analysis), in one shape."""

    text: Annotated[str | None, Key("project.goal.text")]
    time_per_run_s: Annotated[float | None, Key("the goal's time limit")]
    cost_per_run: Annotated[float | None, money("the goal's cost limit")]
    plan_nodes: Annotated[int | None, Key("design.nodes")]
    plan_measured: Annotated[bool, Key("whether the plan's node count was measured")]
    met_at_plan: Annotated[bool | None, Key("a viable regime meets the goal at the plan; null when it cannot be "
                                            "judged")]
    at_plan: Annotated[tuple[GoalRow, ...], Key(
        "the plan in each price regime (an unmeasured plan: as the USL fit has it, source fitted); a serving "
        "project's rows carry the hourly keys, with the per-run ones null")]
    cheapest_meeting: Annotated[GoalPoint | None, Key("the cheapest measured point that meets the goal")]
    fitted_meeting: Annotated[GoalPoint | None, Key("no measured point meets the goal: the smallest unmeasured scale "
                                                    "the USL fit says would (training)")]
    none_meets: Annotated[bool, Key("no measured point meets the goal")]
    runs_per_month: Annotated[float | None, Key("pricing.runs_per_month")]
    monthly_cost: Annotated[float | None, money("the plan's monthly spend in its cheapest regime that meets the "
                                              "goal")]
    note: Annotated[str | None, Key("what could not be checked, in words")]
    plan_estimate: Annotated[PlanEstimate | None, Key(
        "null when the plan is measured; else the time there by Amdahl (two scales) or the USL (three or more) with "
        "its 90 % interval from the resamples, beside the α–β model's (methods.md#few-runs-stated-confidence)")] \
        = None
    levers: Annotated[tuple[Lever, ...], Key(
        "each input's value at which the verdict at the plan flips, all else held (a met goal: its margin), "
        "feasible first, then by |log ratio| (methods.md#the-goals-levers)", item="one lever")] = ()
    speedup_needed: Annotated[float | None, Key(
        "the smallest measured scale's time over the time limit: the speedup over it the deadline needs (null "
        "without a time limit or two measured scales)")] = None
    cheapest_run: Annotated[GoalRow | None, Key(
        "the cheapest measured point in any viable regime, met or not (what a budget no run fits is held "
        "against)")] = None
    nearest: Annotated[GoalRow | None, Key(
        "no measured point meets the goal: the one whose largest excess over a limit is the least (ties: the smaller "
        "scale, then the cheaper)")] = None
    closest_levers: Annotated[tuple[NearMiss, ...], Key(
        "a missed goal no feasible lever flips (out of reach of this design): each lever at its feasible value "
        "nearest the goal, nearest first", item="one lever near the goal")] = ()

    @classmethod
    def of(cls, goal: GoalResult) -> GoalDocument:
        def point(check: GoalCheck | None) -> GoalPoint | None:
            return None if check is None else GoalRow.of(check).point()

        shown = goal.at_plan or goal.fitted_at_plan  # the verdict agrees with the rows shown, fitted or measured
        return cls(
            text=goal.text, time_per_run_s=goal.time_limit_s, cost_per_run=goal.cost_limit,
            plan_nodes=goal.plan_nodes, plan_measured=goal.plan_measured,
            met_at_plan=plan_verdict([(c.viable, c.met) for c in shown]), at_plan=tuple(GoalRow.of(c) for c in shown),
            cheapest_meeting=point(goal.cheapest_meeting), fitted_meeting=point(goal.fitted_meeting),
            none_meets=goal.none_meets, runs_per_month=goal.runs_per_month, monthly_cost=goal.monthly_cost,
            note=goal.note or None, plan_estimate=goal.plan_estimate, levers=goal.levers.flips,
            speedup_needed=goal.speedup_needed,
            cheapest_run=None if goal.cheapest_run is None else GoalRow.of(goal.cheapest_run),
            nearest=None if goal.nearest is None else GoalRow.of(goal.nearest), closest_levers=goal.levers.near_misses)


@dataclass(frozen=True)
class _Limits:
    goal: Goal
    co2: dict[float, float | None]
    runs_per_month: float | None
    tax: Callable[[float], float] | None = None  # the failure tax's overhead fraction at a node count
    work: Callable[[float], float] | None = None  # runs at a node count that do the goal's work (weak scaling)

    def hold(self, nodes: float, regime: RegimeName | None, viable: bool, time_s: float, cost: float | None, *,
             source: Origin = "measured", time_ci: tuple[float, float] | None = None,
             folded: float | None = None) -> GoalCheck:
        """The point against every stated limit, with the failure tax folded into its time, cost and CO2e: a run
        that checkpoints and restarts takes that much longer on every node it holds. `folded`: the tax the time
        and cost already hold (spot with reliability, where preemptions are failures too)."""
        time_limit, cost_limit = self.goal.time_per_run, self.goal.cost_per_run
        tax = folded if folded is not None else self.tax(nodes) if self.tax else None
        # the goal's work: weak scaling's smaller scales do it in several runs, one after another
        runs = self.work(nodes) if self.work else 1.0
        grow = (1.0 + (tax or 0.0) if folded is None else 1.0) * runs
        time_s, cost = time_s * grow, None if cost is None else cost * grow
        co2 = self.co2.get(nodes)
        co2 = None if co2 is None else co2 * grow
        time_ci = None if time_ci is None else (time_ci[0] * grow, time_ci[1] * grow)
        time_ratio = time_s / time_limit if time_limit else None
        cost_ratio = cost / cost_limit if cost_limit and cost is not None else None
        meets_time = None if time_ratio is None else time_ratio <= 1.0
        meets_cost = None if cost_ratio is None else cost_ratio <= 1.0
        return GoalCheck(nodes, regime, viable, time_s, cost, co2, meets_time, meets_cost,
                         time_ratio, cost_ratio,
                         cost * self.runs_per_month if self.runs_per_month and cost is not None else None,
                         self.met(viable, meets_time, meets_cost), source, time_ci, scaled(cost, time_ci, time_s),
                         tax, runs)

    def met(self, viable: bool, meets_time: bool | None, meets_cost: bool | None) -> bool | None:
        """A row's verdict from its limits (methods.md#judging-an-unmeasured-plan): false when a stated limit is
        missed or the regime is not viable, null when a stated limit cannot be judged (a budget without prices, an
        estimate that straddles it), else true."""
        stated = [meets for meets, limit in ((meets_time, self.goal.time_per_run), (meets_cost, self.goal.cost_per_run))
                  if limit]
        if not viable or any(meets is False for meets in stated):
            return False
        return None if any(meets is None for meets in stated) else True

    def beyond(self, check: GoalCheck, ratios: np.ndarray) -> np.ndarray:
        """Which of the check's figures scaled by `ratios` (a repeat's or a resample's time over the figure the
        check holds) break a limit: its time, money and CO2e are all proportional to its time, in every regime."""
        over = np.zeros(ratios.shape, dtype=bool)
        for value, limit in ((check.time_s, self.goal.time_per_run), (check.cost, self.goal.cost_per_run)):
            if value is not None and limit:
                over |= value * ratios > limit * (1.0 + TIE_TOLERANCE)  # at the limit: within it
        return over

    def straddled(self, check: GoalCheck) -> bool:
        """The check's interval (its time's and the cost over it) holds a limit."""
        pairs = ((check.time_ci, self.goal.time_per_run), (check.cost_ci, self.goal.cost_per_run))
        return any(ci is not None and limit is not None and ci[0] <= limit <= ci[1] for ci, limit in pairs)


def check_goal(goal: Goal | None, *, plan_nodes: int | None, scaling: ScalingResult | None,
               work_plan: int | None = None,
               cost: CostResult | None, energy: EnergyResult | None,
               runs_per_month: float | None, max_nodes: int = 4096,
               tax: Callable[[float], float] | None = None,
               estimate: PlanEstimate | None = None, runs: Scaling | None = None,
               resampled: Callable[[float], np.ndarray | None] | None = None) -> GoalResult | None:
    """The goal at the plan and across the measured points. `runs`: the project's scaling section, whose runs at
    the plan are its repeats; `resampled`: each resample's time at a scale over the figure it is judged by
    (ConfidenceResult.resampled_at), whose share beyond a limit is a row's p_miss
    (methods.md#few-runs-stated-confidence). `work_plan`: in weak scaling, the plan whose shares are the goal's work
    (the plan's own unless a what-if moved it)."""
    if goal is None or (goal.time_per_run is None and goal.cost_per_run is None):
        return None
    cost_unknown = goal.cost_per_run is not None and cost is None
    if scaling is None or scaling.per_unit_of_work:
        why = ("the runs are measured per unit of work (add scaling.work_per_run)" if scaling
               else "nothing is measured (add scaling.runs)")
        return GoalResult(goal.text, goal.time_per_run, goal.cost_per_run, plan_nodes, False, (), None, None,
                          False, runs_per_month, None, why, cost_unknown=cost_unknown)
    # an energy that cannot be right gives no CO2e to judge the goal by (methods.md#implausible-energy)
    limits = _Limits(goal, {row.nodes: row.co2_kg for row in energy.rows if not row.excluded} if energy else {},
                     runs_per_month, tax,
                     partial(scaling.goal_work, plan=work_plan or plan_nodes) if scaling.mode == "weak" else None)
    intervals = {row.nodes: row.time_ci for row in scaling.rows}
    if cost is not None:
        checks = [limits.hold(point.nodes, point.regime, True, point.time_s, point.cost, folded=point.folded)
                  for point in priced_points(cost)]
    else:
        checks = [limits.hold(row.nodes, None, True, row.time_s or 0.0, None) for row in scaling.rows]
    meeting = [check for check in checks if check.met]
    cheapest = first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s) if meeting else None
    plan_measured = plan_nodes is not None and any(row.nodes == plan_nodes for row in scaling.rows)
    at_plan: tuple[GoalCheck, ...] = ()
    fitted_plan: list[GoalCheck] = []
    note = ""
    unjudged_why: UnjudgedWhy | None = None
    if plan_nodes is None:
        note = "the project plans no node count (add design.nodes)"
    elif not plan_measured:
        note = f"the planned {plan_nodes} nodes were not measured"
        fitted_plan, unjudged = _fitted_plan(limits, scaling, cost, plan_nodes, estimate,
                                             resampled(plan_nodes) if resampled and estimate else None)
        note += f" and {unjudged}" if unjudged else ""
        unjudged_why = UNJUDGED_WHY.get(unjudged)
    elif cost is not None:  # every regime the project states, a non-viable one marked so
        measured_time = next(r.time_s for r in scaling.rows if r.nodes == plan_nodes) or 0.0
        at_plan = tuple(limits.hold(plan_nodes, name, regime.viable, row.time_s, row.cost,
                                    time_ci=scaled(row.time_s, intervals.get(plan_nodes), measured_time),
                                    folded=row.failure_overhead_fraction)
                        for name, regime in cost.regimes.items()
                        for row in regime.rows if row.nodes == plan_nodes)
    else:  # held from the measured row, as every check is: a check's time already carries the failure tax
        at_plan = tuple(limits.hold(row.nodes, None, True, row.time_s or 0.0, None, time_ci=intervals.get(row.nodes))
                        for row in scaling.rows if row.nodes == plan_nodes)
    if at_plan and plan_nodes is not None:
        at_plan = _with_spread(limits, at_plan, scaling, plan_nodes, plan_repeats(runs, plan_nodes),
                               resampled(plan_nodes) if resampled else None)
    met = plan_verdict([(check.viable, check.met) for check in at_plan])
    priced_and_met = [c for c in at_plan if c.met and c.cost is not None]
    best = first_min(priced_and_met, key=lambda c: c.cost or 0.0) if priced_and_met else \
        at_plan[0] if at_plan else None
    measured_nodes = {row.nodes for row in scaling.rows}
    return GoalResult(goal.text, goal.time_per_run, goal.cost_per_run, plan_nodes, plan_measured, at_plan, met,
                      cheapest, all(check.met is False for check in checks), runs_per_month,
                      best.monthly_cost if best else None, note, tuple(fitted_plan),
                      None if meeting else _fitted_meeting(limits, scaling, cost, measured_nodes, max_nodes),
                      cost_unknown, None if meeting else nearest(checks),
                      _fewest_node_hours([c for c in checks if c.meets_time]) if cost_unknown else None,
                      _cheapest_run(checks), estimate, speedup_needed=_speedup_needed(scaling, goal.time_per_run),
                      checks=tuple(checks), hold=partial(_held_all, limits, cost), unjudged=unjudged_why)


def plan_repeats(spec: Scaling | None, plan: int | None) -> tuple[float, ...]:
    """The time of each run measured at the plan (its repeats), as the scaling's median reads them."""
    if spec is None or plan is None:
        return ()
    times = (run_time(run, spec.work_per_run) for run in spec.runs if run.nodes == plan)
    return tuple(time_s for time_s in times if time_s is not None)


def _with_spread(limits: _Limits, at_plan: tuple[GoalCheck, ...], scaling: ScalingResult, plan: int,
                 repeats: Sequence[float], draws: np.ndarray | None) -> tuple[GoalCheck, ...]:
    """A measured plan's rows, judged by their median, with what its spread says
    (methods.md#few-runs-stated-confidence): whether a row's 95 % interval holds a limit, how many of its repeats
    break one, and the share of the resamples of its median that do. A row's time, money and CO2e are all
    proportional to the measured time (a regime's price, spot's preemptions λ·p·T, the failure tax), so a repeat or
    a resample is the row's figures times its time over the median."""
    row = next(r for r in scaling.rows if r.nodes == plan)
    ratios = np.asarray(repeats, dtype=float) / row.time_s if row.time_s else np.zeros(0)
    counted = len(ratios) > 1 and len(ratios) == row.repeats  # one run has no repeats to count

    def spread(check: GoalCheck) -> GoalCheck:
        return replace(check, straddles=limits.straddled(check),
                       runs_over=int(limits.beyond(check, ratios).sum()) if counted else None,
                       repeats=row.repeats, p_miss=_p_miss(limits, check, draws))

    return tuple(spread(check) for check in at_plan)


def _p_miss(limits: _Limits, check: GoalCheck, draws: np.ndarray | None) -> float | None:
    """The share of the resamples (each a time over the row's) in which the row breaks a limit."""
    return None if draws is None or not draws.size else float(limits.beyond(check, draws).mean())


def _speedup_needed(scaling: ScalingResult, limit_s: float | None) -> float | None:
    """T_ref / the time limit: the speedup over the smallest measured scale a run needs to meet the deadline."""
    reference = scaling.rows[0].time_s if scaling.rows else None
    # weak scaling: a run's work grows with its nodes, so no speedup over the reference meets a deadline
    if limit_s is None or reference is None or scaling.single_scale or scaling.mode == "weak":
        return None
    return reference / limit_s


def _cheapest_run(checks: list[GoalCheck]) -> GoalCheck | None:
    priced = [c for c in checks if c.viable and c.cost is not None]
    return first_min(priced, key=lambda c: c.cost or 0.0) if priced else None


def _fewest_node_hours(checks: list[GoalCheck]) -> GoalCheck | None:
    return first_min(checks, key=lambda c: c.nodes * c.time_s) if checks else None


def scaled(value: float | None, interval: tuple[float, float] | None,
           time_s: float) -> tuple[float, float] | None:
    """A value proportional to the time (a cost, a spot run's time) over the time's interval."""
    if value is None or interval is None or not time_s:
        return None
    return value * interval[0] / time_s, value * interval[1] / time_s


def excess(check: GoalCheck) -> float:
    """The largest ratio of a value to its limit: below 1 the point is within every limit."""
    return max(check.time_ratio or 0.0, check.cost_ratio or 0.0)


def nearest(checks: list[GoalCheck]) -> GoalCheck | None:
    """The point whose largest excess over a limit is the smallest (ties: the smaller scale, then the cheaper)."""
    return first_min(checks, key=excess) if checks else None


STRADDLES = "the estimate straddles the limit"  # goal.note's reasons, each with its code (UNJUDGED_WHY)
MODEL_OTHER_SIDE = "the α–β model's figure is on the other side of the limit"
FEW_SCALES = "a fit of fewer than three measured scales"
DEMOTED = "no fit is trusted that far"
UNJUDGED_WHY: dict[str, UnjudgedWhy] = {STRADDLES: "estimate-straddles", MODEL_OTHER_SIDE: "model-other-side",
                                       FEW_SCALES: "few-scales", DEMOTED: "model-demoted"}


def _fitted_plan(limits: _Limits, scaling: ScalingResult, cost: CostResult | None, plan: int,
                 estimate: PlanEstimate | None, draws: np.ndarray | None) -> tuple[list[GoalCheck], str]:
    """An unmeasured plan in every regime, and why a viable regime of it is not judged
    (methods.md#judging-an-unmeasured-plan): by the resampled estimate, each limit of each regime judged only when
    the estimate's 90 % interval and the α–β model's figure lie on the estimate's side of it; without an estimate,
    by the USL fit of three or more scales. `draws`: each resample's estimate over the estimate (its p_miss)."""
    if estimate is None:
        checks = _fitted(limits, scaling, cost, [plan])
        if checks and len(scaling.rows) < 3:  # a fit of two scales judges no limit
            return [_judged(limits, check, time=False, cost=False) for check in checks], FEW_SCALES
        return checks, ""
    if estimate.demoted:  # a class that missed on published curves here judges nothing
        checks = _held(limits, cost, plan, estimate.time_s)
        return [_judged(limits, check, time=False, cost=False) for check in checks], DEMOTED
    # the estimate, its interval's ends (calibrated where its cell is trusted) and the model's figure (unless its
    # class is demoted), each through every regime as a time is (methods.md#how-accurate-each-prediction-is)
    model_s = estimate.judged_model_s()
    low_s, high_s = estimate.judged_interval()
    basis: IntervalBasis = "calibrated" if estimate.calibrated_low_s is not None else "raw"
    figures = [estimate.time_s, low_s, high_s, estimate.time_s if model_s is None else model_s]
    held = [_held(limits, cost, plan, time_s) for time_s in figures]
    rows = [_straddling(limits, check, low, high, model, draws, basis)
            for check, low, high, model in zip(*held, strict=True)]
    reasons = {why for check, why in rows if why and check.viable and check.met is None}
    return [check for check, _ in rows], STRADDLES if STRADDLES in reasons else next(iter(reasons), "")


def _straddling(limits: _Limits, check: GoalCheck, low: GoalCheck, high: GoalCheck, model: GoalCheck,
                draws: np.ndarray | None, basis: IntervalBasis) -> tuple[GoalCheck, str]:
    """One regime's row of an unmeasured plan, each limit judged on its own: the time limit is not judged (null)
    when it lies within the row's [low, high] or the model's figure is on its other side, the budget likewise with
    the cost over them; a limit wholly on one side keeps its verdict. With why a limit was left unjudged."""
    time_in = len({c.meets_time for c in (low, check, high)}) > 1
    cost_in = len({c.meets_cost for c in (low, check, high)}) > 1
    time_model, cost_model = model.meets_time != check.meets_time, model.meets_cost != check.meets_cost
    # the interval that judges it is carried into the row, as a measured plan's is
    # (methods.md#judging-an-unmeasured-plan)
    costs = (low.cost, high.cost)
    row = replace(_judged(limits, check, time=not (time_in or time_model), cost=not (cost_in or cost_model)),
                  straddles=time_in or cost_in, p_miss=_p_miss(limits, check, draws),
                  time_ci=(low.time_s, high.time_s), ci_basis=basis,
                  cost_ci=None if costs[0] is None or costs[1] is None else (costs[0], costs[1]))
    why = STRADDLES if time_in or cost_in else MODEL_OTHER_SIDE if time_model or cost_model else ""
    return row, why


def _judged(limits: _Limits, check: GoalCheck, *, time: bool, cost: bool) -> GoalCheck:
    """The row with the limits its figures cannot judge left null, and its verdict derived from the rest."""
    meets_time = check.meets_time if time else None
    meets_cost = check.meets_cost if cost else None
    return replace(check, meets_time=meets_time, meets_cost=meets_cost,
                   met=limits.met(check.viable, meets_time, meets_cost))


def _fitted(limits: _Limits, scaling: ScalingResult, cost: CostResult | None, nodes: list[int]) -> list[GoalCheck]:
    """Unmeasured scales as the USL fit has them, in every regime the project states."""
    times = scaling.fitted_times(np.asarray(nodes, dtype=float))
    if times is None:
        return []
    return [check for p, time_s in zip(nodes, times, strict=True) for check in _held(limits, cost, p, float(time_s))]


def _held(limits: _Limits, cost: CostResult | None, p: int, time_s: float) -> list[GoalCheck]:
    """One unmeasured scale of the given time, in every regime the project states."""
    if cost is None:
        return [limits.hold(p, None, True, time_s, None, source="fitted")]
    out = []
    for name, regime in cost.regimes.items():
        row = regime.at(p, time_s)
        out.append(limits.hold(p, name, regime.viable, row.time_s, row.cost, source="fitted",
                               folded=row.failure_overhead_fraction))
    return out


def _held_all(limits: _Limits, cost: CostResult | None, p: int, time_s: float) -> tuple[GoalCheck, ...]:
    return tuple(_held(limits, cost, p, time_s))


def _fitted_meeting(limits: _Limits, scaling: ScalingResult, cost: CostResult | None, measured: set[float],
                    max_nodes: int) -> GoalCheck | None:
    """The smallest unmeasured scale in 1…max_nodes at which the USL fit meets the goal (its cheapest regime)."""
    nodes = np.arange(1, max_nodes + 1, dtype=float)
    times = scaling.fitted_times(nodes)
    if times is None:
        return None
    candidates = ~np.isin(nodes, list(measured))
    if limits.goal.time_per_run is not None:
        candidates &= times <= limits.goal.time_per_run
    for p in nodes[candidates][:64].astype(int):  # the cost test per regime on the few smallest candidates
        meeting = [check for check in _fitted(limits, scaling, cost, [int(p)]) if check.met]
        if meeting:
            return first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s)
    return None
