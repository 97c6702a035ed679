"""Which measured node counts a report's tables and bar charts show when there are too many to read.

Past a few dozen node counts a table stops being read and a bar chart stops being drawn in any useful time: a
project of 10,000 measured scales made a 200 s, 1 GB HTML build. The report then shows a selection that keeps
every point a reader looks for (every power of two, the reference and the largest scale, the knee, the peak, the
cost-, time- and carbon-optimal points, the plan, each deployment context's choice, the noisy scales); results.json
and `build --format csv` keep every row. Line plots draw all points, as one artist each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from reportgen.analysis.common import log_spread, power_of_two

if TYPE_CHECKING:
    from reportgen.analysis import Analysis
    from reportgen.analysis.measured.scaling import ScalingResult
    from reportgen.analysis.money.cost import CostResult

_Rows = TypeVar("_Rows", bound=Any)  # a frozen dataclass with `rows`, each with `nodes`

MAX_SHOWN = 40  # node counts a table lists in full; past it, the selection
SPREAD = 12  # levels a selection spreads over a load axis, which has too few powers of two to read by


def shown_nodes(analysis: Analysis, planned: int | None) -> frozenset[float] | None:
    """The node counts to show, or None when every measured one fits."""
    scaling = analysis.scaling
    if scaling is None or len(scaling.rows) <= MAX_SHOWN:
        return None
    measured = [row.nodes for row in scaling.rows]
    keep: set[float] = {nodes for nodes in measured if power_of_two(nodes)}
    if len(keep) < SPREAD:  # a load axis (fractional levels) has few powers of two: levels spread evenly instead
        keep |= set(log_spread(measured, SPREAD))
    keep |= {measured[0], measured[-1], scaling.peak_nodes}
    keep |= {row.nodes for row in scaling.rows if row.noisy}
    marked = [scaling.knee_nodes, scaling.first_below_half_efficiency, planned]
    cost = analysis.cost
    if cost is not None:
        marked += [cost.cost_optimal_nodes, cost.fastest_nodes, cost.time_value_optimal_nodes]
        marked += [regime.cost_optimal_nodes for regime in cost.regimes.values()]
    if analysis.energy is not None:
        marked.append(analysis.energy.carbon_optimal_nodes)
    if analysis.decisions is not None:
        marked += [decision.nodes for decision in analysis.decisions.decisions]
    if analysis.goal is not None and analysis.goal.cheapest_meeting is not None:
        marked.append(analysis.goal.cheapest_meeting.nodes)
    keep |= {nodes for nodes in marked if nodes is not None}
    return frozenset(keep & set(measured))


def for_tables(analysis: Analysis, shown: frozenset[float] | None) -> Analysis:
    """The analysis with every per-scale table cut to the shown node counts (the same object when all are shown):
    each section of results.json whose result has rows with node counts (reportgen.analysis.RESULTS_SECTIONS), but
    those whose rows are not measured scales (a section's `uncut`)."""
    if shown is None:
        return analysis
    from reportgen.analysis import RESULTS_SECTIONS

    changes: dict[str, Any] = {}
    declared = dict(analysis.declared)
    for section in RESULTS_SECTIONS:
        result = section.result(analysis)
        if section.uncut or not _per_scale(result):
            continue
        cut = CUTS.get(section.key, rows_at)(result, shown)
        if section.field == "declared":
            declared[section.key] = cut
        else:
            changes[section.field] = cut
    return replace(analysis, **changes, declared=declared)


def _per_scale(result: object) -> bool:
    rows = getattr(result, "rows", None)
    return rows is not None and len(rows) > 0 and hasattr(rows[0], "nodes")


# Each per-scale result with only the shown node counts: the tables' selection. A result whose only per-scale table
# is `rows` takes rows_at; these have more.
def scaling_rows(scaling: ScalingResult, shown: frozenset[float]) -> ScalingResult:
    return replace(scaling, rows=tuple(r for r in scaling.rows if r.nodes in shown),
                   pop=tuple(p for p in scaling.pop if p.nodes in shown))


def cost_rows(cost: CostResult, shown: frozenset[float]) -> CostResult:
    return replace(cost, rows=tuple(r for r in cost.rows if r.nodes in shown),
                   marginal=tuple(m for m in cost.marginal if m.to_nodes in shown),
                   regimes={name: replace(regime, rows=tuple(r for r in regime.rows if r.nodes in shown))
                            for name, regime in cost.regimes.items()})


def rows_at(result: _Rows, shown: frozenset[float]) -> _Rows:
    """A result whose only per-scale table is `rows` (energy, reliability, provenance, the model check)."""
    return replace(result, rows=tuple(r for r in result.rows if r.nodes in shown))


CUTS: dict[str, Callable[[Any, frozenset[float]], Any]] = {"scaling": scaling_rows, "cost": cost_rows}


def model_within_evidence(analysis: Analysis) -> Analysis:
    """The α–β model's table over the measured range and the plan (docs/methods.md#a-report-a-reviewer-reads-through):
    its rows up to the larger of the largest measured scale and the planned node count, and the plan's own row. The
    figure draws the model to max_nodes and the text names p* and p_dom wherever they fall; a table run to thousands
    of nodes for a project measured at a few dozen is read as evidence it is not. Without a measured scale or a plan
    the table is whole."""
    prediction = analysis.prediction
    if prediction is None:
        return analysis
    measured = [row.nodes for row in analysis.scaling.rows] if analysis.scaling is not None else []
    bounds = [*measured, *([prediction.planned_nodes] if prediction.planned_nodes is not None else [])]
    if not bounds:
        return analysis
    reach = max(bounds)
    rows = tuple(row for row in prediction.rows if row.nodes <= reach or row.nodes == prediction.planned_nodes)
    if len(rows) == len(prediction.rows):
        return analysis
    return replace(analysis, prediction=replace(prediction, rows=rows))
