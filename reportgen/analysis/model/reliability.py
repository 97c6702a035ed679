"""The failure tax: Daly's checkpoint interval and the overhead it leaves, per scale.
(docs/methods.md#failures-at-scale)"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import powers_of_two
from reportgen.keys import Key
from reportgen.project.model import Pricing, RegimeName, Reliability


@dataclass(frozen=True)
class ReliabilityRow:
    nodes: Annotated[float, Key("node count")]
    system_mtbf_s: Annotated[float, Key("node MTBF / nodes")]
    interval_s: Annotated[float, Key("Young-Daly checkpoint interval")]
    overhead_fraction: Annotated[float, Key("time lost to checkpoints and restarts, as a share")]
    storm: bool  # δ ≥ 2 M_p: the system would spend its life checkpointing


@dataclass(frozen=True)
class DeclaredInterval:
    """The checkpoint interval the design declares, held against Daly's at one scale."""

    nodes: Annotated[float, Key("node count")]
    interval_s: Annotated[float, Key("the declared interval")]
    # δ/τ + (τ/2 + R)/M_p at the declared τ
    overhead_fraction: Annotated[float, Key("the overhead at the declared interval")]
    optimal_interval_s: Annotated[float, Key("Daly's interval there")]
    optimal_overhead_fraction: Annotated[float, Key("the overhead at Daly's interval")]

    @property
    def excess(self) -> float:
        """How much more the declared interval costs than Daly's, relatively (0: as good)."""
        return self.overhead_fraction / self.optimal_overhead_fraction - 1.0 if self.optimal_overhead_fraction \
            else 0.0


@dataclass(frozen=True)
class RegimeReliability:
    """The failure tax at the plan in one stated price regime (docs/methods.md#spot-as-failures): the one row page 1,
    `checkpoint-interval` and goal.at_plan[r].failure_tax read for that regime."""

    regime: Annotated[RegimeName | None, Key("the price regime (null when the project has no prices)")]
    system_mtbf_s: Annotated[float, Key("M_p: node MTBF / p on demand and on owned nodes; on spot 1/(p/M + λp), "
                                        "hardware failures and preemptions together")]
    interval_s: Annotated[float, Key("the checkpoint interval a run uses: the declared one, else Daly's")]
    daly_interval_s: Annotated[float, Key("Daly's interval for this regime's M_p")]
    overhead_fraction: Annotated[float, Key("the overhead at interval_s: the failure tax goal.at_plan[].failure_tax "
                                            "folds into this regime's time, cost and CO2e")]
    daly_overhead_fraction: Annotated[float, Key("the overhead at Daly's interval")]
    saving_s: Annotated[float | None, Key(
        "the time a run at the plan would save at Daly's interval: the measured time × (overhead_fraction − "
        "daly_overhead_fraction); null when the declared interval costs no more, or the plan was not measured")]

    @property
    def excess(self) -> float:
        """How much more the interval used costs than Daly's, relatively (0: as good): `checkpoint-interval`
        warns above DECLARED_INTERVAL_TOLERANCE."""
        return self.overhead_fraction / self.daly_overhead_fraction - 1.0 if self.daly_overhead_fraction else 0.0


@dataclass(frozen=True)
class ReliabilityResult:
    rows: Annotated[tuple[ReliabilityRow, ...], Key("per scale")]
    planned_nodes: Annotated[int | None, Key("design.nodes")]
    planned_overhead_fraction: Annotated[float | None, Key("the overhead at the plan: at the declared checkpoint "
                                                           "interval when one is declared, else at Daly's")]
    planned_time_s: Annotated[float | None, Key("the measured time at the plan with the overhead folded in")]
    first_storm_nodes: float | None
    declared: Annotated[DeclaredInterval | None, Key("reliability.checkpoint_interval held against Daly's interval",
                                                     name="declared_interval")] = None
    at_plan: Annotated[tuple[RegimeReliability, ...], Key(
        "the failure tax at the plan in each stated price regime (on demand always; spot and owned nodes when "
        "pricing.regimes states them; one row, regime null, without prices); empty without a plan "
        "(docs/methods.md#spot-as-failures)", item="one price regime")] = ()
    spec: Reliability | None = None  # the project's reliability section, for tax_at
    spot: tuple[float, float] | None = None  # pricing.regimes.spot: λ per node-hour and R_spot in s

    def tax_at(self, nodes: float, regime: RegimeName | None) -> float | None:
        """The failure tax a run at `nodes` in `regime` carries, as the goal and the decisions fold it: on spot,
        hardware failures and preemptions together (spot_tax), else folded_fraction (a table over several regimes
        shows each row's own)."""
        if self.spec is None:
            return None
        if regime == "spot" and self.spot is not None:
            return spot_tax(self.spec, nodes, *self.spot).overhead_fraction
        return folded_fraction(self.spec, nodes)

    def at_plan_in(self, regime: RegimeName | None) -> RegimeReliability | None:
        """The plan's row in `regime`, else the on-demand (or unpriced) row: the regime page 1 leads with, when
        there is one, else the list price's."""
        return next((row for row in self.at_plan if row.regime == regime), None) or \
            next((row for row in self.at_plan if row.regime in ("on_demand", None)), None)


def daly_interval(checkpoint_s: float, system_mtbf_s: float) -> float:
    """τ = √(2δM)·[1 + ⅓√(δ/2M) + ⅑(δ/2M)] − δ for δ < 2M, else τ = M (Daly 2006)."""
    if checkpoint_s >= 2.0 * system_mtbf_s:
        return system_mtbf_s
    ratio = checkpoint_s / (2.0 * system_mtbf_s)
    return math.sqrt(2.0 * checkpoint_s * system_mtbf_s) * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_s


def overhead_fraction(reliability: Reliability, interval_s: float, system_mtbf_s: float) -> float:
    """δ/τ + (τ/2 + R)/M_p: checkpoint writes, plus half an interval of lost work and a restart per failure."""
    return reliability.checkpoint_cost / interval_s + (interval_s / 2.0 + reliability.restart_cost) / system_mtbf_s


def failure_tax(reliability: Reliability, nodes: float) -> ReliabilityRow:
    mtbf = reliability.node_mtbf / nodes
    interval = daly_interval(reliability.checkpoint_cost, mtbf)
    return ReliabilityRow(nodes, mtbf, interval, overhead_fraction(reliability, interval, mtbf),
                          reliability.checkpoint_cost >= 2.0 * mtbf)


def declared_interval(reliability: Reliability, row: ReliabilityRow) -> DeclaredInterval | None:
    if reliability.checkpoint_interval is None:
        return None
    declared = reliability.checkpoint_interval
    return DeclaredInterval(row.nodes, declared, overhead_fraction(reliability, declared, row.system_mtbf_s),
                            row.interval_s, row.overhead_fraction)


def folded_fraction(reliability: Reliability, nodes: float) -> float:
    """The overhead a run at `nodes` pays: at the declared checkpoint interval when the design declares one (that is
    the run the team will launch), else at Daly's. The goal, the decisions and page 1 fold it into their times."""
    row = failure_tax(reliability, nodes)
    declared = declared_interval(reliability, row)
    return declared.overhead_fraction if declared else row.overhead_fraction


@dataclass(frozen=True)
class SpotTax:
    """On spot, preemptions are failures (methods.md#spot-as-failures): the combined failure rate 1/M_p = p/M + λp,
    and the overhead at the declared checkpoint interval (else Daly's for that M_p) and at Daly's."""

    nodes: float
    system_mtbf_s: float  # 1 / (p/M + λp)
    interval_s: float  # the declared interval, else Daly's
    overhead_fraction: float  # δ/τ + τ/(2M_p) + R·p/M + R_spot·λ·p
    optimal_interval_s: float  # Daly's for the combined M_p
    optimal_overhead_fraction: float

    @property
    def out_of_range(self) -> bool:
        """Above half the run, the first-order model no longer holds (`spot-model-out-of-range`)."""
        return self.overhead_fraction > SPOT_MODEL_LIMIT


SPOT_MODEL_LIMIT = 0.5


def spot_tax(reliability: Reliability, nodes: float, preemptions_per_node_hour: float,
             restart_overhead_s: float) -> SpotTax:
    """The failure tax on spot: hardware failures and preemptions together; the work since the last checkpoint (τ/2
    on average) is lost either way, then the restart after a hardware failure (R) or after a preemption (R_spot)."""
    per_node_s = preemptions_per_node_hour / 3600.0
    mtbf = 1.0 / (nodes / reliability.node_mtbf + per_node_s * nodes)
    optimal = daly_interval(reliability.checkpoint_cost, mtbf)

    def fraction(interval_s: float) -> float:
        return (reliability.checkpoint_cost / interval_s + interval_s / (2.0 * mtbf)
                + reliability.restart_cost * nodes / reliability.node_mtbf
                + restart_overhead_s * per_node_s * nodes)

    interval = reliability.checkpoint_interval or optimal
    return SpotTax(nodes, mtbf, interval, fraction(interval), optimal, fraction(optimal))


def regime_row(reliability: Reliability, nodes: int, regime: RegimeName | None,
               preemptions: tuple[float, float] | None, measured_time_s: float | None) -> RegimeReliability:
    """One regime at `nodes`: with `preemptions` (spot: λ per node-hour, R_spot in s) spot_tax's combined M_p, else
    M_p = M/p; the overhead at the interval a run uses (the declared one, else Daly's), as the goal folds it."""
    if preemptions is not None:
        spot = spot_tax(reliability, nodes, *preemptions)
        mtbf, interval, overhead = spot.system_mtbf_s, spot.interval_s, spot.overhead_fraction
        daly, daly_overhead = spot.optimal_interval_s, spot.optimal_overhead_fraction
    else:
        row = failure_tax(reliability, nodes)
        mtbf, daly, daly_overhead = row.system_mtbf_s, row.interval_s, row.overhead_fraction
        declared = reliability.checkpoint_interval  # as folded_fraction reads it, so the goal's tax is this one
        interval = daly if declared is None else declared
        overhead = daly_overhead if declared is None else overhead_fraction(reliability, declared, mtbf)
    # the undisturbed run loses (overhead − Daly's overhead) of its time to the declared interval
    saving = measured_time_s * (overhead - daly_overhead) if measured_time_s and overhead > daly_overhead else None
    return RegimeReliability(regime, mtbf, interval, daly, overhead, daly_overhead, saving)


def reliability_at_plan(reliability: Reliability, plan: int | None, pricing: Pricing | None,
                        measured_time_s: float | None) -> tuple[RegimeReliability, ...]:
    """The plan in each price regime the project states, as the cost analysis prices them: on demand always, spot
    and owned nodes when pricing.regimes states them (an owned regime below its utilisation too, as goal.at_plan
    keeps it), one unpriced row without prices. `measured_time_s`: the plan's measured time per run, if any."""
    if plan is None:
        return ()
    if pricing is None or pricing.node_hour is None:  # the cost analysis prices nothing: the goal's rows are unpriced
        return (regime_row(reliability, plan, None, None, measured_time_s),)
    rows = [regime_row(reliability, plan, "on_demand", None, measured_time_s)]
    preemptions = _preemptions(pricing)
    if preemptions is not None:
        rows.append(regime_row(reliability, plan, "spot", preemptions, measured_time_s))
    if pricing.regimes is not None and pricing.regimes.local is not None:
        rows.append(regime_row(reliability, plan, "local", None, measured_time_s))
    return tuple(rows)


def _preemptions(pricing: Pricing | None) -> tuple[float, float] | None:
    """A priced spot regime's (λ per node-hour, R_spot in s), as the cost analysis reads them; None without."""
    if pricing is None or pricing.node_hour is None or pricing.regimes is None or pricing.regimes.spot is None:
        return None
    spot = pricing.regimes.spot
    return spot.preemptions_per_node_hour, spot.restart_overhead


def analyze_reliability(reliability: Reliability | None, nodes: Sequence[float], *, planned_nodes: int | None,
                        measured_times: dict[float, float], pricing: Pricing | None = None,
                        plan_time_s: float | None = None) -> ReliabilityResult | None:
    """Per scale (the measured node counts, or powers of two up to the plan), folded into the planned scale, and at
    the plan per price regime (`pricing`; `plan_time_s`: the plan's measured time per run, if any)."""
    if reliability is None:
        return None
    scales = sorted(set(nodes) | ({planned_nodes} if planned_nodes else set()))
    rows = tuple(failure_tax(reliability, p) for p in scales)
    planned = folded_fraction(reliability, planned_nodes) if planned_nodes else None
    planned_time = measured_times.get(planned_nodes) if planned_nodes else None
    return ReliabilityResult(
        rows=rows,
        planned_nodes=planned_nodes,
        planned_overhead_fraction=planned,
        planned_time_s=planned_time * (1.0 + planned) if planned is not None and planned_time else None,
        first_storm_nodes=next((r.nodes for r in rows if r.storm), None),
        declared=declared_interval(reliability, next((r for r in rows if r.nodes == planned_nodes), rows[-1]))
        if rows else None,
        at_plan=reliability_at_plan(reliability, planned_nodes, pricing, plan_time_s),
        spec=reliability,
        spot=_preemptions(pricing),
    )


def default_scales(planned_nodes: int | None) -> list[int]:
    return powers_of_two(max(planned_nodes or 1, 1))
