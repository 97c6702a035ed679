"""A declared analysis made for the tests, never listed in the registry: node-hours and device-hours per measured
scale, with the cost section's cost beside them. docs/architecture.md's recipe was followed for it (its module, one
line of the registry, its worked test: three files), a factor of 16 planted in it failed its own test, the units'
invariants and the golden report, and it was then taken out of the report, whose cost table already holds a run's
price of its node-hours. It stays here as the declared analysis with rows of every unit the invariants of
tests/test_declared_invariants.py read, and as the generic template's subject (tests/test_declared_views.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import node_hours
from reportgen.analysis.declared import Declared, Inputs, Method
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.money.cost import CostResult
from reportgen.keys import Key, money


@dataclass(frozen=True)
class NodeHoursRow:
    nodes: Annotated[int, Key("node count")]
    time_s: Annotated[float, Key("T: the measured time per run")]
    node_hours: Annotated[float, Key("p · T / 3600: node-hours per run")]
    device_hours: Annotated[float | None, Key("node_hours × hardware.devices_per_node (null without hardware)")]
    cost: Annotated[float | None, money("money per run on demand: the cost section's (null without pricing)")]


@dataclass(frozen=True)
class NodeHoursResult:
    rows: Annotated[tuple[NodeHoursRow, ...], Key("node-hours, device-hours and cost per measured scale")]
    per_unit_of_work: Annotated[bool, Key("the hours and costs are per unit of work")]


def count_hours(scaling: ScalingResult | None, cost: CostResult | None, devices_per_node: int | None,
                factor: float = 1.0) -> NodeHoursResult | None:
    """p · T / 3600 node-hours at each measured scale with a time (times `factor`: 16 plants the slip the
    invariants must catch), and d times as many device-hours."""
    if scaling is None:
        return None
    costs = {row.nodes: row.cost for row in cost.rows} if cost is not None else {}
    rows = []
    for row in scaling.rows:
        if row.time_s is not None:
            hours = node_hours(row.nodes, row.time_s) * factor
            rows.append(NodeHoursRow(int(row.nodes), row.time_s, hours,
                                     hours * devices_per_node if devices_per_node is not None else None,
                                     costs.get(int(row.nodes))))
    return NodeHoursResult(tuple(rows), scaling.per_unit_of_work) if rows else None


def _run(i: Inputs, scaling: ScalingResult | None, cost: CostResult | None) -> NodeHoursResult | None:
    project = i.project
    if project.serving or (project.scaling is not None and project.scaling.axis == "load"):
        return None
    return count_hours(scaling, cost, project.hardware.devices_per_node if project.hardware else None)


def _planted(i: Inputs, scaling: ScalingResult | None, cost: CostResult | None) -> NodeHoursResult | None:
    return count_hours(scaling, cost, i.project.hardware.devices_per_node if i.project.hardware else None, 16.0)


METHOD = Method("Node-hours and device-hours", """\
```text
node_hours_p   = p · T_p / 3600
device_hours_p = node_hours_p · hardware.devices_per_node
```""")
PROBE = Declared(key="node_hours", doc="node-hours, device-hours and on-demand cost per measured scale",
                 chapter="measure", result=NodeHoursResult, needs=("scaling", "cost"), run=_run, method=METHOD,
                 reads=("project.workload", "hardware.devices_per_node", "scaling.axis"))
PLANTED = Declared(key="node_hours_16", doc="node-hours, sixteen times too many", chapter="measure",
                   result=NodeHoursResult, needs=("scaling", "cost"), run=_planted, method=METHOD,
                   reads=("hardware.devices_per_node",))
