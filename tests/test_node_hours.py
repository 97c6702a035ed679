"""Node-hours and device-hours per measured scale (methods.md#node-hours-and-device-hours), by hand: the analysis
docs/architecture.md's recipe was followed for last (its module, one line of the registry, this test)."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.money.node_hours import ANALYSIS as NODE_HOURS
from tests.conftest import INPUTS, make_project
from tests.worked import worked

RUNS = """
project: {title: T}
hardware: {devices_per_node: 8}
pricing: {node_hour: 40 USD}
scaling:
  runs: [{nodes: 1, time: 7200 s}, {nodes: 2, time: 4500 s}, {nodes: 4, time: 2700 s}]
"""


@worked("node_hours")
def test_node_hours_device_hours_and_cost_by_hand() -> None:
    # node-hours p · T / 3600: 1 × 7,200 / 3,600 = 2; 2 × 4,500 / 3,600 = 2.5; 4 × 2,700 / 3,600 = 3.
    # device-hours × 8 devices: 16, 20, 24. Cost at 40 USD a node-hour: 80, 100, 120 USD (the cost section's).
    analysis = analyze(make_project(RUNS))
    result = NODE_HOURS.of(analysis)
    assert result is not None and not result.per_unit_of_work
    assert [row.nodes for row in result.rows] == [1, 2, 4]
    assert [row.node_hours for row in result.rows] == pytest.approx([2.0, 2.5, 3.0], rel=1e-12)
    assert [row.device_hours for row in result.rows] == pytest.approx([16.0, 20.0, 24.0], rel=1e-12)
    assert [row.cost for row in result.rows] == pytest.approx([80.0, 100.0, 120.0], rel=1e-12)
    assert analysis.cost is not None and [row.cost for row in result.rows] == [row.cost for row in analysis.cost.rows]


def test_without_hardware_or_prices_the_hours_stand_alone_and_a_service_has_none() -> None:
    bare = NODE_HOURS.of(analyze(make_project(RUNS.replace("hardware: {devices_per_node: 8}\n", "")
                                             .replace("pricing: {node_hour: 40 USD}\n", ""))))
    assert bare is not None and [row.node_hours for row in bare.rows] == pytest.approx([2.0, 2.5, 3.0])
    assert {row.device_hours for row in bare.rows} == {None} and {row.cost for row in bare.rows} == {None}
    service = analyze(make_project((INPUTS / "inference-service.yaml").read_text(encoding="utf-8")))
    assert NODE_HOURS.of(service) is None
