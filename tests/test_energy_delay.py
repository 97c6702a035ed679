"""The energy-delay product (methods.md#energy-delay-product), by hand: the analysis docs/architecture.md's recipe
was followed for (its module, its template, this test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.analysis import DECLARED, analyze
from reportgen.analysis.money.energy_delay import ANALYSIS as ENERGY_DELAY
from reportgen.analysis.money.energy_delay import plots
from tests.conftest import INPUTS, make_project
from tests.worked import worked

TIMES = """
project: {title: T}
scaling:
  runs: [{nodes: 1, time: 1000 s}, {nodes: 2, time: 600 s}, {nodes: 4, time: 450 s}]
energy: {node_power: 500 W, pue: 1.2}
"""


@worked("energy_delay")
def test_the_energy_delay_products_by_hand() -> None:
    # E(p) = PUE · p · 500 W · T(p): 1.2 × 500 × 1,000 = 600,000 J; 1.2 × 2 × 500 × 600 = 720,000 J;
    # 1.2 × 4 × 500 × 450 = 1,080,000 J.
    # E·T: 6.0e8, 4.32e8, 4.86e8 J·s: the least at 2 nodes. E·T²: 6.0e11, 2.592e11, 2.187e11 J·s²: at 4 nodes.
    result = ENERGY_DELAY.of(analyze(make_project(TIMES)))
    assert result is not None and not result.per_unit_of_work
    assert [row.nodes for row in result.rows] == [1, 2, 4]
    assert [row.energy_j for row in result.rows] == pytest.approx([600_000, 720_000, 1_080_000], rel=1e-12)
    assert [row.time_s for row in result.rows] == [1000, 600, 450]
    assert [row.edp for row in result.rows] == pytest.approx([6.0e8, 4.32e8, 4.86e8], rel=1e-12)
    assert [row.ed2p for row in result.rows] == pytest.approx([6.0e11, 2.592e11, 2.187e11], rel=1e-12)
    assert (result.edp_optimal_nodes, result.ed2p_optimal_nodes) == (2, 4)
    # the figure: both products relative to 1 node's, the least E·T starred at 2 nodes (4.32e8 / 6.0e8 = 0.72)
    (plot,) = plots(result)
    assert plot.series[0].y == pytest.approx((1.0, 0.72, 0.81)) and plot.series[1].y == pytest.approx(
        (1.0, 0.432, 0.3645))
    assert plot.marked is not None and plot.marked[:2] == pytest.approx((2.0, 0.72))


def test_energy_delay_ties_go_to_the_fewer_nodes_and_a_wrong_energy_is_left_out() -> None:
    # 2 nodes: 4.32e8 J·s; 4 nodes at √180,000 = 424.2641 s: 1.2 × 4 × 500 × 180,000 = 4.32e8 J·s, a tie
    tied = ENERGY_DELAY.of(analyze(make_project(TIMES.replace("450 s", "424.26406871192853 s"))))
    assert tied is not None and tied.rows[2].edp == pytest.approx(tied.rows[1].edp, rel=1e-12)
    assert tied.edp_optimal_nodes == 2
    # 2 nodes measured at 0.001 kWh over 600 s: below what two nodes draw waiting, so it cannot be right
    wrong = TIMES.replace("{nodes: 2, time: 600 s}", "{nodes: 2, time: 600 s, energy: 0.001 kWh}").replace(
        "node_power: 500 W", "node_power: 500 W, wait_power: 300 W")
    result = ENERGY_DELAY.of(analyze(make_project(wrong)))
    assert result is not None and [row.excluded for row in result.rows] == [False, True, False]
    assert result.edp_optimal_nodes == 4  # 4.86e8 against 1 node's 6.0e8, the 2-node row left out


def test_no_energy_or_a_service_has_no_energy_delay_product() -> None:
    assert ENERGY_DELAY.of(analyze(make_project(TIMES.replace("energy: {node_power: 500 W, pue: 1.2}", "")))) is None
    service = analyze(make_project((INPUTS / "inference-service.yaml").read_text(encoding="utf-8")))
    assert ENERGY_DELAY.of(service) is None


def test_the_recipe_analysis_is_listed_in_the_registry() -> None:
    """energy_delay is declared in its own module and listed once, by hand, in the registry's DECLARED."""
    assert ENERGY_DELAY in DECLARED
    assert Path(ENERGY_DELAY.run.__code__.co_filename).name == "energy_delay.py"
