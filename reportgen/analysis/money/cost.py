"""Cost per run, marginal speedup per unit of money, operating points and price regimes.
(docs/methods.md#4-marginal-cost)"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import first_max, first_min, whole_nodes
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.reliability import SpotTax, spot_tax
from reportgen.keys import Key, derived, money
from reportgen.project.accuracy_table import Calibration, not_graded
from reportgen.project.model import Pricing, RegimeName, Reliability
from reportgen.wording import percent


@dataclass(frozen=True)
class CostRow:
    nodes: Annotated[int, Key("node count")]
    time_s: float
    speedup: float
    cost: Annotated[float, money("money per run")]
    total_with_time_value: Annotated[float | None, money("cost plus the value of the run's time")]


@dataclass(frozen=True)
class Marginal:
    from_nodes: Annotated[int, Key("node count")]
    to_nodes: Annotated[int, Key("node count")]
    d_speedup: Annotated[float, Key("speedup gained")]
    d_cost: Annotated[float, money("money added per run")]
    speedup_per_cost: Annotated[float, Key("d_speedup / d_cost")]  # inf when the cost did not rise ("free")


@dataclass(frozen=True)
class RegimeRow:
    nodes: Annotated[int, Key("node count")]
    time_s: Annotated[float, Key("seconds per run, with the expected preemption restarts added (spot)")]
    cost: Annotated[float, money("money per run")]
    preemptions: Annotated[float | None, Key("expected preemptions per run (spot only)", name="expected_preemptions")]
    failure_overhead_fraction: Annotated[float | None, Key(
        "spot with reliability: the share hardware failures and preemptions together add to the run, folded into "
        "time_s (checkpoints, lost work, restarts)")] = None


@dataclass(frozen=True)
class Regime:
    name: RegimeName
    price_per_node_hour: Annotated[float, money("the node-hour price in this regime")]
    viable: Annotated[bool, Key("whether the regime can be used at all (owned nodes below their minimum utilisation "
                                "cannot)")]
    reason: Annotated[str, Key("why the regime is or is not viable, in words")]
    rows: Annotated[tuple[RegimeRow, ...], Key("cost per measured scale in this regime")]
    cost_optimal_nodes: Annotated[int | None, Key("the cheapest measured scale in this regime (ties: fewer nodes)")]
    time_value_optimal_nodes: Annotated[int | None, Key("the scale with the lowest cost plus value of time")]
    preemptions: tuple[float, float] | None = None  # spot: (λ per node-hour, restart overhead in s)
    reliability: Reliability | None = None  # with spot: preemptions are failures (methods.md#spot-as-failures)

    def at(self, nodes: int, time_s: float) -> RegimeRow:
        """A run of `time_s` on `nodes` in this regime. Spot adds the restart time of the expected preemptions,
        n = λ · p · T_p / 3600, each costing the restart overhead (first order: on the undisturbed time); with
        `reliability`, preemptions are failures like the hardware's: T_p × (1 + the combined overhead)."""
        expected = None
        overhead = None
        if self.preemptions is not None:
            rate, restart = self.preemptions
            expected = rate * nodes * time_s / 3600.0
            if self.reliability is not None:
                overhead = spot_tax(self.reliability, nodes, rate, restart).overhead_fraction
                time_s *= 1.0 + overhead
            else:
                time_s += expected * restart
        return RegimeRow(nodes, time_s, run_cost(self.price_per_node_hour, nodes, time_s), expected, overhead)

    def spot_tax(self, nodes: float) -> SpotTax | None:
        """The combined failure tax at a scale, on spot with reliability; None otherwise."""
        if self.preemptions is None or self.reliability is None:
            return None
        return spot_tax(self.reliability, nodes, *self.preemptions)


@dataclass(frozen=True)
class CostResult:
    currency: Annotated[str, Key("pricing.currency")]
    per_unit_of_work: Annotated[bool, Key("costs are per unit of work")]
    node_hour: float
    rows: Annotated[tuple[CostRow, ...], Key("on-demand cost per measured scale")]
    marginal: Annotated[tuple[Marginal, ...], Key("what each step up in scale buys")]
    cost_optimal_nodes: Annotated[int, Key("the cheapest measured scale on demand (ties: fewer nodes)")]
    fastest_nodes: Annotated[int, Key("the fastest measured scale")]
    cost_ratio: Annotated[float, Key("cost at the fastest / cost at the cheapest")]
    speedup_ratio: Annotated[float, Key("speedup at the fastest / speedup at the cheapest")]
    value_of_time_per_hour: float | None
    time_value_optimal_nodes: Annotated[int | None, Key("the lowest cost plus value of time")]
    regimes: Annotated[dict[RegimeName, Regime], Key("each price regime the project states, by name (on_demand, "
                                                     "spot, local)", item="one price regime")]
    cost_optimal_nodes_ci: Annotated[tuple[float, float] | None, Key(
        "90 % interval of the cost-optimal scale over the resamples of the runs")] = None

    @derived(Key("the cost-optimal scale's interval is a location, which the corpus does not grade: "
                 "{predictor: resampled-fits, status: not-graded}"))
    def cost_optimal_nodes_ci_calibration(self) -> Calibration:
        return not_graded("resampled-fits")


@dataclass(frozen=True)
class PricedPoint:
    """One measured scale in one viable price regime: what a run there takes and costs."""

    nodes: int
    regime: RegimeName
    time_s: float  # spot: with the expected preemption overhead
    cost: float
    folded: float | None = None  # spot with reliability: the failure overhead time_s already holds


def priced_points(cost: CostResult) -> list[PricedPoint]:
    """Every measured scale in every viable regime, by node count and, within one, from the cheapest regime.

    The order makes the tie rules of the decisions read "smaller p first, then the lower cost".
    """
    points = [PricedPoint(row.nodes, name, row.time_s, row.cost, row.failure_overhead_fraction)
              for name, regime in cost.regimes.items() if regime.viable for row in regime.rows]
    return sorted(points, key=lambda point: (point.nodes, point.cost))


def run_cost(price_per_node_hour: float, nodes: float, time_s: float) -> float:
    """Cost(p) = c · p · T_p / 3600: the price of the run's node-hours (reportgen.analysis.common.node_hours). Every
    cost per run of the report, the plan search's too, is this one."""
    return price_per_node_hour * nodes * time_s / 3600.0


def analyze_cost(scaling: ScalingResult | None, pricing: Pricing | None,
                 reliability: Reliability | None = None) -> CostResult | None:
    if scaling is None or pricing is None or pricing.node_hour is None:
        return None
    price = pricing.node_hour
    value = pricing.value_of_time  # currency per second of wall-clock time
    rows = []
    for scale in scaling.rows:
        assert scale.time_s is not None
        nodes = whole_nodes(scale.nodes)
        cost = run_cost(price, nodes, scale.time_s)
        total = cost + value * scale.time_s if value is not None else None
        rows.append(CostRow(nodes, scale.time_s, scale.speedup, cost, total))
    marginal = [_marginal(a, b) for a, b in itertools.pairwise(rows)]
    cheapest = first_min(rows, key=lambda r: r.cost)
    fastest = first_max(rows, key=lambda r: r.speedup)
    time_value = first_min(rows, key=lambda r: r.total_with_time_value or 0.0).nodes if value is not None else None
    regimes: dict[RegimeName, Regime] = {"on_demand": _regime("on_demand", price, True, "list price", scaling, value)}
    regime_spec = pricing.regimes
    if regime_spec and regime_spec.spot:
        spot = regime_spec.spot
        why = "preemptions are failures: checkpoints, lost work and restarts" if reliability else \
            "preemptions add restart time"
        regimes["spot"] = _regime("spot", price * spot.price_fraction, True,
                                  f"{spot.price_fraction:.0%} of on-demand; {why}",
                                  scaling, value, preemptions=(spot.preemptions_per_node_hour,
                                                               spot.restart_overhead), reliability=reliability)
    if regime_spec and regime_spec.local:
        local = regime_spec.local
        viable, reason = local_viability(local.utilization, local.min_utilization)
        regimes["local"] = _regime("local", price * local.price_fraction, viable, reason, scaling, value)
    return CostResult(
        currency=pricing.currency,
        per_unit_of_work=scaling.per_unit_of_work,
        node_hour=price,
        rows=tuple(rows),
        marginal=tuple(marginal),
        cost_optimal_nodes=cheapest.nodes,
        fastest_nodes=fastest.nodes,
        cost_ratio=fastest.cost / cheapest.cost,
        speedup_ratio=fastest.speedup / cheapest.speedup,
        value_of_time_per_hour=value * 3600.0 if value is not None else None,
        time_value_optimal_nodes=time_value,
        regimes=regimes,
    )


def _marginal(a: CostRow, b: CostRow) -> Marginal:
    d_speedup, d_cost = b.speedup - a.speedup, b.cost - a.cost
    return Marginal(a.nodes, b.nodes, d_speedup, d_cost, d_speedup / d_cost if d_cost > 0 else math.inf)


def local_viability(utilization: float | None, minimum: float | None) -> tuple[bool, str]:
    if utilization is None or minimum is None:
        return True, "viable: no utilization threshold given"
    if utilization >= minimum:
        return True, f"viable: utilization {percent(utilization, 2)} meets the {percent(minimum, 2)} needed"
    return False, (f"not viable: utilization {percent(utilization, 2)} is below the {percent(minimum, 2)} at which "
                   "owning pays")


def _regime(name: RegimeName, price: float, viable: bool, reason: str, scaling: ScalingResult, value: float | None,
            preemptions: tuple[float, float] | None = None, reliability: Reliability | None = None) -> Regime:
    priced = Regime(name, price, viable, reason, (), None, None, preemptions, reliability)
    rows = [priced.at(whole_nodes(scale.nodes), scale.time_s) for scale in scaling.rows if scale.time_s is not None]
    cheapest = first_min(rows, key=lambda r: r.cost).nodes if viable else None
    with_time = (first_min(rows, key=lambda r: r.cost + value * r.time_s).nodes
                 if viable and value is not None else None)
    return Regime(name, price, viable, reason, tuple(rows), cheapest, with_time, preemptions, reliability)
