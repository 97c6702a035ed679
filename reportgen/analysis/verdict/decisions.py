"""Decisions: per deployment context, the measured p that best serves its objective within its limits.

A serving project's contexts choose among the scales that serve: "time" is then the p99 latency, and money
and CO2e are per hour of service.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.common import first_min, whole_nodes
from reportgen.analysis.measured.confidence import DecisionConfidence, decision_confidence
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.money.cost import CostResult, priced_points
from reportgen.analysis.money.energy import EnergyResult
from reportgen.analysis.verdict.goal import scaled
from reportgen.analysis.verdict.serving import ServingResult
from reportgen.keys import CURRENCY, Key, derived, interval, money
from reportgen.project.model import REGIME_PHRASES, Decision, Goal, Objective, RegimeName
from reportgen.wording import listed, nodes

GoalLimit = Literal["time", "cost"]  # a limit a context takes from the project's goal


@dataclass(frozen=True)
class Candidate:
    nodes: Annotated[int, Key("node count")]
    regime: Annotated[RegimeName | None, Key("its price regime")]  # None without pricing
    time_s: float | None  # per run; a serving project's p99 latency
    cost: float | None  # per run; per hour of service
    co2_kg: float | None  # per run; per hour of service
    energy_kwh: float | None


@dataclass(frozen=True)
class AppliedLimits:
    """The limits a recommendation was held to, per run (or, serving, the p99 and per hour)."""

    max_time_s: Annotated[float | None, Key("time limit")]
    max_cost: Annotated[float | None, money("cost limit")]
    max_co2_kg: Annotated[float | None, Key("carbon limit")]
    max_p99_s: Annotated[float | None, Key("serving: p99 limit")]
    max_cost_per_hour: Annotated[float | None, money("serving: hourly cost limit")]
    from_goal: Annotated[tuple[GoalLimit, ...], Key("limits taken from the project's goal", item="a limit")]


@dataclass(frozen=True)
class DecisionResult:
    name: Annotated[str, Key("the context's name")]
    optimize: Annotated[Objective, Key("the objective")]
    nodes: Annotated[int | None, Key("the recommended scale")]
    # the price regime the recommendation is priced in
    regime: Annotated[RegimeName | None, Key("the price regime it is priced in")]
    time_s: float | None
    cost: float | None
    co2_kg: float | None
    within_limits: Annotated[bool, Key("the recommendation meets the context's limits")]
    # why no point is within limits, or what stood in for a missing measure
    note: Annotated[str, Key("why, in words")]
    max_time_s: float | None  # the limits applied: the context's own, else the goal's (serving: p99, per hour)
    max_cost: float | None
    max_co2_kg: float | None
    limits_from_goal: tuple[GoalLimit, ...]  # which limits came from project.goal
    # no point within limits: the one whose largest excess over a limit is least
    nearest: Annotated[Candidate | None, Key("no point is within the limits: the one whose largest excess over a "
                                             "limit is the smallest")] = None
    time_ci: tuple[float, float] | None = None  # 95 % intervals from repeated runs at the chosen scale
    cost_ci: tuple[float, float] | None = None
    per_hour: bool = False  # a serving project's: time is the p99, money and CO2e per hour
    p_best: Annotated[float | None, Key(
        "the share of resamples in which the recommendation stays best, within 1 % (null without repeats or "
        "scaling.noise, or with no point within the limits)")] = None
    regret_95: Annotated[float | None, Key(
        "the 95th percentile of what choosing it costs over each resample's best, in the objective's unit (s, the "
        "currency, kg CO2e)")] = None
    runner_up: int | None = None  # the scale most often best when the recommendation is not (for page 1)
    p_miss: Annotated[float | None, Key(
        "the share of resamples in which the recommendation breaks a limit of its context (its own, else the "
        "goal's); null with p_best (methods.md#confidence-of-the-decision)")] = None

    # results.json keeps a run's figures and a service's hourly ones under their own keys, each null for the other
    @derived(Key("seconds per run", name="time_s"))
    def time_per_run_s(self) -> float | None:
        return None if self.per_hour else self.time_s

    @derived(money("money per run", name="cost"))
    def cost_per_run(self) -> float | None:
        return None if self.per_hour else self.cost

    @derived(Key("kg CO2e per run", name="co2_kg"))
    def co2_kg_per_run(self) -> float | None:
        return None if self.per_hour else self.co2_kg

    @derived(Key("serving: the p99 there"))
    def p99_s(self) -> float | None:
        return self.time_s if self.per_hour else None

    @derived(money("serving: money per hour"))
    def cost_per_hour(self) -> float | None:
        return self.cost if self.per_hour else None

    @derived(Key("serving: kg CO2e per hour"))
    def co2_kg_per_hour(self) -> float | None:
        return self.co2_kg if self.per_hour else None

    @derived(interval("time_s", name="time_s_ci"))
    def time_per_run_ci(self) -> tuple[float, float] | None:
        return None if self.per_hour else self.time_ci

    @derived(interval("cost (proportional to the time)", name="cost_ci", unit=CURRENCY))
    def cost_per_run_ci(self) -> tuple[float, float] | None:
        return None if self.per_hour else self.cost_ci

    @derived(Key("the limits applied"))
    def limits(self) -> AppliedLimits:
        run, hour = (None, self.max_time_s) if self.per_hour else (self.max_time_s, None)
        run_cost, hour_cost = (None, self.max_cost) if self.per_hour else (self.max_cost, None)
        return AppliedLimits(run, run_cost, self.max_co2_kg, hour, hour_cost, self.limits_from_goal)


@dataclass(frozen=True)
class TradeOff:
    context: Annotated[str, Key("the context")]  # what this context gives up …
    instead_of: Annotated[str, Key("the other context")]  # … by not taking that context's point
    time_ratio: Annotated[float | None, Key("× slower")]  # this / other
    cost_ratio: Annotated[float | None, Key("× more money")]
    co2_ratio: Annotated[float | None, Key("× more CO2e")]


@dataclass(frozen=True)
class DecisionsResult:
    decisions: tuple[DecisionResult, ...]
    trade_offs: tuple[TradeOff, ...]
    serving: bool = False  # chosen among the scales that serve: time is the p99, money and CO2e per hour

    @property
    def unanimous(self) -> bool:
        """Every context chose one and the same point: there is no trade-off between them."""
        points = {(d.nodes, d.regime) for d in self.decisions}
        return len(self.decisions) > 1 and len(points) == 1 and (None, None) not in points


def candidates(scaling: ScalingResult, cost: CostResult | None, energy: EnergyResult | None,
               tax: Callable[[float], float] | None = None, plan: float | None = None) -> list[Candidate]:
    """Every measured scale in every viable price regime (one point per scale without pricing), by node count
    and, within one, from the cheapest regime: ties of an objective go to the smaller p, then the lower cost.
    With a failure tax, each point's time, money, energy and CO2e grow by its overhead at that scale
    (methods.md#failures-at-scale); in weak scaling, by the runs it takes to do the goal's work (the plan's shares)."""
    # an energy that cannot be right is no point's energy: carbon choices and limits pass it by
    co2 = {r.nodes: r.co2_kg for r in energy.rows if not r.excluded} if energy else {}
    kwh = {r.nodes: r.energy_kwh for r in energy.rows if not r.excluded} if energy else {}
    if cost is not None:
        priced = priced_points(cost)
        folded = {(p.nodes, p.regime) for p in priced if p.folded is not None}  # spot: its tax is in its time
        points = [Candidate(p.nodes, p.regime, p.time_s, p.cost, co2.get(p.nodes), kwh.get(p.nodes))
                  for p in priced]
    else:
        folded = set()
        whole = [(whole_nodes(r.nodes), r.time_s or 0.0) for r in scaling.rows]
        points = [Candidate(nodes, None, time_s, None, co2.get(nodes), kwh.get(nodes)) for nodes, time_s in whole]
    if tax is None and scaling.mode != "weak":
        return points

    def overhead(point: Candidate) -> float:
        return tax(point.nodes) if tax and (point.nodes, point.regime) not in folded else 0.0

    return [_taxed(point, (1.0 + overhead(point)) * scaling.goal_work(point.nodes, plan)) for point in points]


def _taxed(point: Candidate, grow: float) -> Candidate:
    def times(value: float | None) -> float | None:
        return None if value is None else value * grow
    return replace(point, time_s=times(point.time_s), cost=times(point.cost), co2_kg=times(point.co2_kg),
                   energy_kwh=times(point.energy_kwh))


@dataclass(frozen=True)
class Limits:
    max_time_s: float | None
    max_cost: float | None
    max_co2_kg: float | None
    from_goal: tuple[GoalLimit, ...]


def limits_of(context: Decision, goal: Goal | None) -> Limits:
    """The context's own limits; a limit it does not state is the project goal's (time and cost per run)."""
    from_goal: list[GoalLimit] = []
    max_time, max_cost = context.max_time, context.max_cost
    if max_time is None and goal and goal.time_per_run is not None:
        max_time = goal.time_per_run
        from_goal.append("time")
    if max_cost is None and goal and goal.cost_per_run is not None:
        max_cost = goal.cost_per_run
        from_goal.append("cost")
    return Limits(max_time, max_cost, context.max_co2, tuple(from_goal))


def serving_candidates(serving: ServingResult) -> list[Candidate]:
    """Every measured scale in every viable regime that serves the load within the latency objective."""
    hourly = {row.nodes: row for row in serving.rows}
    points = sorted((p for p in serving.points if p.serves),  # ties: fewer nodes, then the cheaper regime
                    key=lambda p: (p.nodes, p.cost_per_hour if p.cost_per_hour is not None else 0.0))
    return [Candidate(whole_nodes(p.nodes), p.regime, p.p99_s, p.cost_per_hour, hourly[p.nodes].co2_kg_per_hour,
                      hourly[p.nodes].energy_kwh_per_hour) for p in points]


def serving_limits(context: Decision, serving: ServingResult) -> Limits:
    """A serving context's limits: its own p99 and hourly budget, else the goal's budget per hour (the goal's load
    and p99 objective already decide which scales serve)."""
    max_cost = context.max_cost_per_hour
    from_goal: tuple[GoalLimit, ...] = ()
    if max_cost is not None:
        max_cost *= 3600.0  # given per second (SI), compared per hour
    elif serving.cost_limit_per_hour is not None:
        max_cost, from_goal = serving.cost_limit_per_hour, ("cost",)
    return Limits(context.max_p99_latency, max_cost, None, from_goal)


def decide(contexts: tuple[Decision, ...], scaling: ScalingResult | None, cost: CostResult | None,
           energy: EnergyResult | None, *, goal: Goal | None = None,
           serving: ServingResult | None = None,
           tax: Callable[[float], float] | None = None, plan: float | None = None,
           ratio_at: Callable[[float], np.ndarray | None] | None = None) -> DecisionsResult | None:
    """One recommendation per context; `ratio_at` (the resamples' time at each measured scale over its time) gives
    each training recommendation its p_best, regret_95 and p_miss."""
    if not contexts or (scaling is None and serving is None):
        return None
    if serving is not None:
        points = serving_candidates(serving)
        results = tuple(replace(_decide(context, serving_limits(context, serving), points, serving=True),
                                per_hour=True) for context in contexts)
        return DecisionsResult(results, trade_offs(results), serving=True)
    assert scaling is not None
    points = candidates(scaling, cost, energy, tax, plan)
    # A goal per run means nothing against times per unit of work: its limits apply to whole runs only.
    applied_goal = None if scaling.per_unit_of_work else goal
    results = tuple(_with_intervals(_decide(context, limits_of(context, applied_goal), points, ratio_at=ratio_at),
                                    scaling) for context in contexts)
    return DecisionsResult(results, trade_offs(results))


def _with_intervals(result: DecisionResult, scaling: ScalingResult) -> DecisionResult:
    """The chosen scale's interval from its repeated runs, carried to its time and cost (both proportional)."""
    row = next((r for r in scaling.rows if r.nodes == result.nodes), None)
    if row is None or row.time_ci is None or not row.time_s or result.time_s is None:
        return result
    return replace(result, time_ci=scaled(result.time_s, row.time_ci, row.time_s),
                   cost_ci=scaled(result.cost, row.time_ci, row.time_s))


def trade_offs(results: tuple[DecisionResult, ...]) -> tuple[TradeOff, ...]:
    """One row per pair of distinct points the contexts chose, in the order first chosen (the mirror row is its
    reciprocal); contexts that chose one point are named together, so the rows grow with the points, not with the
    pairs of contexts."""
    chosen: dict[tuple[int, RegimeName | None], list[DecisionResult]] = {}
    for result in results:
        if result.nodes is not None:
            chosen.setdefault((result.nodes, result.regime), []).append(result)
    points = list(chosen.values())
    return tuple(_trade_off(a, b) for index, a in enumerate(points) for b in points[index + 1:])


def _objective(context: Decision, point: Candidate) -> float | None:
    if context.optimize == "time":
        return point.time_s
    if context.optimize == "cost":
        return point.cost
    return point.co2_kg if point.co2_kg is not None else point.energy_kwh  # same ranking without an intensity


def _excess(limits: Limits, point: Candidate) -> float:
    """The largest ratio of a value to its limit (≤ 1 within every limit); a missing value cannot be checked."""
    ratios = [1.0]
    for limit, value in ((limits.max_time_s, point.time_s), (limits.max_cost, point.cost),
                         (limits.max_co2_kg, point.co2_kg)):
        if limit is not None:
            ratios.append(value / limit if value is not None else float("inf"))
    return max(ratios)


def _confidence(context: Decision, limits: Limits, points: list[Candidate], chosen: Candidate,
                ratio_at: Callable[[float], np.ndarray | None]) -> DecisionConfidence | None:
    """p_best, regret_95 and p_miss (methods.md#confidence-of-the-decision): every point's objective and limits
    scaled by each resample's time at its scale (a point's time, money and CO2e are all proportional to it)."""
    values: list[tuple[int, np.ndarray, np.ndarray]] = []
    index = None
    # a project of thousands of scales in several regimes: fewer resamples each, a million values at most
    resamples = max(MIN_RESAMPLES, MAX_VALUES // max(len(points), 1))
    for point in points:
        nominal, ratio = _objective(context, point), ratio_at(point.nodes)
        if nominal is None or ratio is None:
            continue
        ratio = ratio[:resamples]
        within = np.ones_like(ratio, dtype=bool)
        for limit, value in ((limits.max_time_s, point.time_s), (limits.max_cost, point.cost),
                             (limits.max_co2_kg, point.co2_kg)):
            if limit is not None:
                within &= (value * ratio <= limit * (1 + 1e-12)) if value is not None else False
        if point == chosen:
            index = len(values)
        values.append((point.nodes, nominal * ratio, within))
    return decision_confidence(values, index) if index is not None else None


MAX_VALUES = 500_000  # points × resamples a decision's confidence holds at most
MIN_RESAMPLES = 50


def _decide(context: Decision, limits: Limits, points: list[Candidate], *, serving: bool = False,
            ratio_at: Callable[[float], np.ndarray | None] | None = None) -> DecisionResult:
    """The point that best serves the objective within the limits. When none is within them, the objective's best
    point all the same (a context that optimizes time gets the fastest), said to be outside the limits, and the
    nearest point named: the one whose largest excess over a limit is the smallest."""
    shown = (limits.max_time_s, limits.max_cost, limits.max_co2_kg, limits.from_goal)
    scored = [p for p in points if _objective(context, p) is not None]
    if not scored:
        if serving:
            why = "no measured scale serves the load within the latency objective" if not points else \
                f"nothing to optimize: add {_MISSING_SERVING[context.optimize]}"
        else:
            why = f"nothing to optimize: add {_MISSING[context.optimize]}"
        return DecisionResult(context.name, context.optimize, None, None, None, None, None, False, why, *shown)
    within = [p for p in scored if _excess(limits, p) <= 1.0]
    note, nearest = "", None
    chosen = first_min(within or scored, key=lambda p: _objective(context, p) or 0.0)
    if not within:
        nearest = first_min(scored, key=lambda p: _excess(limits, p))
        note = "no measured scale meets the limits" + ("" if nearest == chosen else
                                                       f"; the nearest to them is {_point(nearest)}")
    if context.optimize == "carbon" and chosen.co2_kg is None:
        note = (note + "; " if note else "") + "ranked by energy: no carbon intensity is known"
    sure = _confidence(context, limits, points, chosen, ratio_at) if ratio_at is not None and within else None
    return DecisionResult(context.name, context.optimize, chosen.nodes, chosen.regime, chosen.time_s, chosen.cost,
                          chosen.co2_kg, bool(within), note, *shown, nearest=nearest,
                          p_best=sure.p_best if sure else None,
                          regret_95=sure.regret_95 if sure and math.isfinite(sure.regret_95) else None,
                          runner_up=sure.runner_up if sure else None, p_miss=sure.p_miss if sure else None)


_MISSING = {"cost": "pricing.node_hour", "carbon": "energy.node_power or measured energy", "time": "scaling"}
_MISSING_SERVING = {"cost": "pricing.node_hour", "carbon": "energy.node_power or measured energy",
                    "time": "p99_latency to the runs"}


def _point(candidate: Candidate) -> str:
    """A candidate as a note names it: "8 nodes on spot"."""
    regime = f" {REGIME_PHRASES[candidate.regime]}" if candidate.regime else ""
    return f"{nodes(candidate.nodes)}{regime}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b not in (None, 0) else None


def _trade_off(a: list[DecisionResult], b: list[DecisionResult]) -> TradeOff:
    x, y = a[0], b[0]  # one point each: every context in a group chose it
    return TradeOff(listed([d.name for d in a]), listed([d.name for d in b]), _ratio(x.time_s, y.time_s),
                    _ratio(x.cost, y.cost), _ratio(x.co2_kg, y.co2_kg))
