"""Node-hours and device-hours per measured scale, with what a run there costs on demand
(methods.md#node-hours-and-device-hours; its text is METHOD, below).

What a cluster's budget is counted in: a run of T seconds on p nodes uses p · T / 3600 node-hours, and a node of d
accelerators d times as many device-hours (GPU-hours). The cost beside them is the cost analysis's, read from its
rows, never priced again here.
"""

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
    device_hours: Annotated[float | None, Key("node_hours × hardware.devices_per_node: accelerator-hours per run "
                                              "(null without hardware)")]
    cost: Annotated[float | None, money("money per run on demand: the cost section's (null without pricing)")]


@dataclass(frozen=True)
class NodeHoursResult:
    rows: Annotated[tuple[NodeHoursRow, ...], Key("node-hours, device-hours and cost per measured scale with a time")]
    per_unit_of_work: Annotated[bool, Key("the hours and costs are per unit of work")]


def count_hours(scaling: ScalingResult | None, cost: CostResult | None,
                devices_per_node: int | None) -> NodeHoursResult | None:
    """p · T / 3600 node-hours at each measured scale with a time, and d times as many device-hours."""
    if scaling is None:
        return None
    costs = {row.nodes: row.cost for row in cost.rows} if cost is not None else {}
    rows = []
    for row in scaling.rows:
        if row.time_s is None:
            continue
        hours = node_hours(row.nodes, row.time_s)
        rows.append(NodeHoursRow(int(row.nodes), row.time_s, hours,
                                 hours * devices_per_node if devices_per_node is not None else None,
                                 costs.get(int(row.nodes))))
    return NodeHoursResult(tuple(rows), scaling.per_unit_of_work) if rows else None


def _run(i: Inputs, scaling: ScalingResult | None, cost: CostResult | None) -> NodeHoursResult | None:
    project = i.project
    if project.serving or (project.scaling is not None and project.scaling.axis == "load"):
        return None  # a service is counted per hour of service, and a load level is no node count
    return count_hours(scaling, cost, project.hardware.devices_per_node if project.hardware else None)


METHOD = Method("Node-hours and device-hours", """\
What a cluster's budget is counted in, at each measured scale p with a measured time T (per run, or per unit of
work when the runs are throughputs):

```text
node_hours_p   = p · T_p / 3600
device_hours_p = node_hours_p · hardware.devices_per_node
```

The cost beside them is the cost section's on-demand cost per run, c · node_hours_p, read from it. A service has
none (it is counted per hour of service), nor has a load axis, whose levels are no node counts. T is the measured
time, without the failure tax, as in the cost table.""")


ANALYSIS = Declared(
    key="node_hours", doc="node-hours, device-hours and on-demand cost per measured scale", chapter="measure",
    result=NodeHoursResult, needs=("scaling", "cost"), run=_run, method=METHOD,
    reads=("project.workload", "hardware.devices_per_node", "scaling.axis"))
