"""The failure tax: Daly's checkpoint interval and the overhead it leaves, per scale.
(docs/methods.md#failures-at-scale)"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import powers_of_two
from reportgen.keys import Key
from reportgen.project.model import Reliability


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
class ReliabilityResult:
    rows: Annotated[tuple[ReliabilityRow, ...], Key("per scale")]
    planned_nodes: Annotated[int | None, Key("design.nodes")]
    planned_overhead_fraction: Annotated[float | None, Key("the overhead at the plan: at the declared checkpoint "
                                                           "interval when one is declared, else at Daly's")]
    planned_time_s: Annotated[float | None, Key("the measured time at the plan with the overhead folded in")]
    first_storm_nodes: float | None
    declared: Annotated[DeclaredInterval | None, Key("reliability.checkpoint_interval held against Daly's interval",
                                                     name="declared_interval")] = None


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


def analyze_reliability(reliability: Reliability | None, nodes: Sequence[float], *, planned_nodes: int | None,
                        measured_times: dict[float, float]) -> ReliabilityResult | None:
    """Per scale (the measured node counts, or powers of two up to the plan), folded into the planned scale."""
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
    )


def default_scales(planned_nodes: int | None) -> list[int]:
    return powers_of_two(max(planned_nodes or 1, 1))
