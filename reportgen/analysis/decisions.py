"""§5 Decisions: per deployment context, the measured p that best serves its objective within its limits."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.analysis.common import first_min
from reportgen.analysis.cost import CostResult
from reportgen.analysis.energy import EnergyResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.model import Decision


@dataclass(frozen=True)
class Candidate:
    nodes: int
    time_s: float
    cost: float | None
    co2_kg: float | None
    energy_kwh: float | None


@dataclass(frozen=True)
class DecisionResult:
    name: str
    optimize: str
    nodes: int | None
    time_s: float | None
    cost: float | None
    co2_kg: float | None
    within_limits: bool
    note: str  # why no point is within limits, or what stood in for a missing measure


@dataclass(frozen=True)
class TradeOff:
    context: str  # what this context gives up …
    instead_of: str  # … by not taking that context's point
    time_ratio: float | None  # × slower (this / other)
    cost_ratio: float | None  # × more money
    co2_ratio: float | None  # × more CO2


@dataclass(frozen=True)
class DecisionsResult:
    decisions: tuple[DecisionResult, ...]
    trade_offs: tuple[TradeOff, ...]


def candidates(scaling: ScalingResult, cost: CostResult | None, energy: EnergyResult | None) -> list[Candidate]:
    costs = {r.nodes: r.cost for r in cost.rows} if cost else {}
    co2 = {r.nodes: r.co2_kg for r in energy.rows} if energy else {}
    kwh = {r.nodes: r.energy_kwh for r in energy.rows} if energy else {}
    return [Candidate(r.nodes, r.time_s or 0.0, costs.get(r.nodes), co2.get(r.nodes), kwh.get(r.nodes))
            for r in scaling.rows]


def decide(contexts: tuple[Decision, ...], scaling: ScalingResult | None, cost: CostResult | None,
           energy: EnergyResult | None) -> DecisionsResult | None:
    if not contexts or scaling is None:
        return None
    points = candidates(scaling, cost, energy)
    results = tuple(_decide(context, points) for context in contexts)
    trade_offs = tuple(_trade_off(a, b) for a in results for b in results
                       if a is not b and a.nodes is not None and b.nodes is not None)
    return DecisionsResult(results, trade_offs)


def _objective(context: Decision, point: Candidate) -> float | None:
    if context.optimize == "time":
        return point.time_s
    if context.optimize == "cost":
        return point.cost
    return point.co2_kg if point.co2_kg is not None else point.energy_kwh  # same ranking without an intensity


def _excess(context: Decision, point: Candidate) -> float:
    """The largest ratio of a value to its limit (≤ 1 within every limit); a missing value cannot be checked."""
    ratios = [1.0]
    for limit, value in ((context.max_time, point.time_s), (context.max_cost, point.cost),
                         (context.max_co2, point.co2_kg)):
        if limit is not None:
            ratios.append(value / limit if value is not None else float("inf"))
    return max(ratios)


def _decide(context: Decision, points: list[Candidate]) -> DecisionResult:
    scored = [p for p in points if _objective(context, p) is not None]
    if not scored:
        missing = {"cost": "pricing.node_hour", "carbon": "energy.node_power"}.get(context.optimize, "scaling")
        return DecisionResult(context.name, context.optimize, None, None, None, None, False,
                              f"nothing to optimize: add {missing}")
    within = [p for p in scored if _excess(context, p) <= 1.0]
    note = ""
    if within:
        chosen = first_min(within, key=lambda p: _objective(context, p) or 0.0)
    else:
        chosen = first_min(scored, key=lambda p: _excess(context, p))
        note = f"no measured scale meets the limits; the nearest is {chosen.nodes} nodes"
    if context.optimize == "carbon" and chosen.co2_kg is None:
        note = (note + "; " if note else "") + "ranked by energy: no carbon intensity is known"
    return DecisionResult(context.name, context.optimize, chosen.nodes, chosen.time_s, chosen.cost, chosen.co2_kg,
                          bool(within), note)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b not in (None, 0) else None


def _trade_off(a: DecisionResult, b: DecisionResult) -> TradeOff:
    return TradeOff(a.name, b.name, _ratio(a.time_s, b.time_s), _ratio(a.cost, b.cost), _ratio(a.co2_kg, b.co2_kg))
