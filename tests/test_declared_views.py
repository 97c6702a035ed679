"""The generic template of a declared analysis without one of its own (docs/architecture.md#adding-an-analysis-the-
recipe): the method's title, the rows with each column's unit said once in its heading or in its values, durations
and money in one unit per column, and the result's other keys said by their meaning. Rendered for the node-hours
probe of tests/probe_analysis.py."""

from __future__ import annotations

import re

from reportgen.analysis import analyze
from reportgen.analysis.declared import Inputs
from reportgen.render.declared_views import GENERIC_TEMPLATE, _view
from reportgen.render.figure_data import FigureData
from reportgen.render.report import render_html
from tests.conftest import make_project
from tests.probe_analysis import PROBE

RUNS = """
project: {title: T}
hardware: {devices_per_node: 8}
pricing: {node_hour: 40 USD}
scaling:
  runs: [{nodes: 1, time: 7200 s}, {nodes: 2, time: 4500 s}, {nodes: 4, time: 2700 s}]
"""


def test_the_generic_template_shows_the_rows_with_their_units() -> None:
    # node-hours 2, 2.5, 3 (p · T / 3600), device-hours × 8: 16, 20, 24, cost at 40 USD: 80, 100, 120
    project = make_project(RUNS)
    analysis = analyze(project)
    result = PROBE.run(Inputs(project), analysis.scaling, analysis.cost)
    view = _view(PROBE, result, "USD")
    assert view.template == GENERIC_TEMPLATE and view.anchor == "node-hours-and-device-hours"
    assert [(column.heading, column.kind) for column in view.columns] == [
        ("nodes", "nodes"), ("time", "seconds"), ("node hours", "number"), ("device hours", "number"),
        ("cost", "money")]
    html = render_html(GENERIC_TEMPLATE, {"view": view, "currency": "USD", "figures": {}, "figure_data": FigureData()})
    cells = [re.sub(r"\s+", " ", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", html, flags=re.S)]
    # to three significant figures; a column's durations in one unit (hours) and its money with one precision
    assert cells == ["1", "2.00 h", "2.00", "16.0", "80.00 USD", "2", "1.25 h", "2.50", "20.0", "100.00 USD",
                     "4", "0.750 h", "3.00", "24.0", "120.00 USD"]
    assert '<h3 id="node-hours-and-device-hours">Node-hours and device-hours</h3>' in html
    assert "per unit of work" not in html  # a flag that does not hold is not said


def test_a_flag_that_holds_is_said_by_its_meaning() -> None:
    throughput = RUNS.replace("runs: [{nodes: 1, time: 7200 s}, {nodes: 2, time: 4500 s}, {nodes: 4, time: 2700 s}]",
                              "runs: [{nodes: 1, throughput: 10/s}, {nodes: 2, throughput: 18/s}]")
    project = make_project(throughput)
    analysis = analyze(project)
    result = PROBE.run(Inputs(project), analysis.scaling, analysis.cost)
    assert result is not None and result.per_unit_of_work
    html = render_html(GENERIC_TEMPLATE, {"view": _view(PROBE, result, "USD"), "currency": "USD", "figures": {},
                                          "figure_data": FigureData()})
    assert "<p>The hours and costs are per unit of work.</p>" in html
