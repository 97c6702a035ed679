"""Cost, regimes, energy and carbon, failure tax, decisions. Arithmetic beside each assertion."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.analysis import analyze
from reportgen.analysis.model.reliability import daly_interval, failure_tax
from reportgen.project.carbon import Intensity
from reportgen.project.model import Reliability
from tests.conftest import make_project
from tests.worked import worked

RUNS = """
scaling:
  time_unit: h
  runs: [{nodes: 1, time: 8}, {nodes: 2, time: 4.2}, {nodes: 4, time: 2.4}, {nodes: 8, time: 1.6}]
"""


def analysis_of(extra: str, runs: str = RUNS, intensity: Intensity | None = None):
    return analyze(make_project("project: {title: T}\n" + runs + extra), intensity=intensity)


@worked("cost")
def test_cost_and_marginal_by_hand() -> None:
    cost = analysis_of("pricing: {node_hour: 10 USD}").cost
    # Cost = c · p · T_p / 3600: 10 × 1 × 8 h = 80; 10 × 2 × 4.2 = 84; 10 × 4 × 2.4 = 96; 10 × 8 × 1.6 = 128
    assert [r.cost for r in cost.rows] == pytest.approx([80, 84, 96, 128])
    first = cost.marginal[0]
    assert (first.d_speedup, first.d_cost) == (pytest.approx(8 / 4.2 - 1), pytest.approx(4))
    assert first.speedup_per_cost == pytest.approx((8 / 4.2 - 1) / 4)
    assert cost.cost_optimal_nodes == 1 and cost.fastest_nodes == 8
    assert cost.cost_ratio == pytest.approx(128 / 80) and cost.speedup_ratio == pytest.approx(5)


def test_free_speedup_is_infinite_per_money() -> None:
    runs = "scaling: {time_unit: h, runs: [{nodes: 1, time: 8}, {nodes: 2, time: 3}]}\n"  # 80 → 60
    cost = analysis_of("pricing: {node_hour: 10 USD}", runs).cost
    assert cost.marginal[0].speedup_per_cost == math.inf
    assert cost.cost_optimal_nodes == 2


def test_cost_ties_go_to_the_smaller_p() -> None:
    runs = "scaling: {time_unit: h, runs: [{nodes: 1, time: 8}, {nodes: 2, time: 4}, {nodes: 4, time: 2.5}]}\n"
    cost = analysis_of("pricing: {node_hour: 10 USD}", runs).cost
    assert cost.cost_optimal_nodes == 1  # 80 = 80


def test_value_of_time_moves_the_optimum_outward() -> None:
    cost = analysis_of("pricing: {node_hour: 10 USD, value_of_time: 30 USD/h}").cost
    # Total = Cost + v·T: 80 + 240 = 320; 84 + 126 = 210; 96 + 72 = 168; 128 + 48 = 176
    assert [r.total_with_time_value for r in cost.rows] == pytest.approx([320, 210, 168, 176])
    assert cost.time_value_optimal_nodes == 4


@given(st.floats(0.01, 1.0))
def test_uniform_discount_leaves_the_cost_optimum(fraction: float) -> None:
    cost = analysis_of(f"pricing: {{node_hour: 10 USD, regimes: {{local: {{price_fraction: {fraction}}}}}}}").cost
    assert cost.regimes["local"].cost_optimal_nodes == cost.cost_optimal_nodes


def test_spot_preemptions_add_restart_time() -> None:
    cost = analysis_of("pricing: {node_hour: 10 USD, regimes: {spot: {price_fraction: 0.4, "
                       "preemptions_per_node_hour: 0.05, restart_overhead: 30 min}}}").cost
    row = cost.regimes["spot"].rows[3]  # p = 8, T = 1.6 h
    # n = λ p T = 0.05 × 8 × 1.6 = 0.64; T' = 1.6 h + 0.64 × 0.5 h = 1.92 h; cost = 4 × 8 × 1.92 = 61.44
    assert row.preemptions == pytest.approx(0.64)
    assert row.time_s == pytest.approx(1.92 * 3600)
    assert row.cost == pytest.approx(61.44)


def test_local_regime_not_viable_below_utilization() -> None:
    cost = analysis_of("pricing: {node_hour: 10 USD, regimes: {local: {price_fraction: 0.6, utilization: 0.45, "
                       "min_utilization: 0.5}}}").cost
    local = cost.regimes["local"]
    assert not local.viable and "below" in local.reason and local.cost_optimal_nodes is None


@worked("energy")
def test_energy_by_hand_with_breakdown_and_measured_energy() -> None:
    runs = """
scaling:
  time_unit: s
  runs:
    - {nodes: 1, compute: 3600, communication: 0, idle: 0}
    - {nodes: 2, compute: 1800, communication: 360, idle: 180, io: 0, energy: 2 kWh}
    - {nodes: 4, compute: 900, communication: 360, idle: 180}
"""
    energy = analysis_of("energy: {node_power: 1 kW, wait_power: 0.5 kW, pue: 1.2}", runs,
                         Intensity(400.0, "given")).energy
    # p = 1: 1.2 × 1 × 1 kW × 1 h = 1.2 kWh; CO2 = 1.2 × 0.4 kg
    assert energy.rows[0].energy_kwh == pytest.approx(1.2) and energy.rows[0].co2_kg == pytest.approx(0.48)
    # the measured (IT) energy replaces the model, and the facility's PUE applies to it: 1.2 × 2 kWh
    assert energy.rows[1].energy_kwh == pytest.approx(2.4) and energy.rows[1].measured
    # p = 4: 1.2 × 4 × (1000 × 900 + 500 × 540) J = 5,616,000 J = 1.56 kWh
    assert energy.rows[2].energy_kwh == pytest.approx(1.56)
    assert energy.carbon_optimal_nodes == 1


def test_wait_power_defaults_to_active_power_and_monthly_totals() -> None:
    energy = analysis_of("energy: {node_power: 2 kW}\npricing: {runs_per_month: 30}",
                         intensity=Intensity(100.0, "given")).energy
    # total form: PUE 1 × 1 × 2 kW × 8 h = 16 kWh per run; 480 kWh and 48 kg a month
    assert energy.rows[0].energy_kwh == pytest.approx(16)
    assert energy.rows[0].monthly_energy_kwh == pytest.approx(480)
    assert energy.rows[0].monthly_co2_kg == pytest.approx(48)


def test_explicit_carbon_intensity_is_converted() -> None:
    project = make_project("project: {title: T}\nenergy: {location: {carbon_intensity: 56 g/kWh}}\n")
    from reportgen.project.carbon import intensity_for

    intensity = intensity_for(project.energy.location)
    assert intensity.g_per_kwh == pytest.approx(56) and intensity.source == "given"


@pytest.mark.parametrize(("mtbf_h", "minutes"), [(24, 116.7), (6, 56.7)])
def test_daly_interval_against_the_spec(mtbf_h: float, minutes: float) -> None:
    assert daly_interval(300.0, mtbf_h * 3600) / 60 == pytest.approx(minutes, abs=0.05)


@worked("reliability")
def test_failure_tax_and_checkpoint_storm() -> None:
    reliability = Reliability(node_mtbf=1000 * 3600.0, checkpoint_cost=300.0, restart_cost=600.0)
    row = failure_tax(reliability, 1000)  # M_p = 1 h
    tau = daly_interval(300.0, 3600.0)
    assert row.overhead_fraction == pytest.approx(300 / tau + (tau / 2 + 600) / 3600)
    assert not row.storm
    assert not failure_tax(reliability, 8000).storm  # M_p = 450 s: δ = 300 s < 2 M_p = 900 s
    storm = failure_tax(reliability, 24000)  # M_p = 150 s: δ = 300 s ≥ 2 M_p, so τ = M_p
    assert storm.storm and storm.interval_s == 150.0


def test_checkpoint_storm_finding() -> None:
    analysis = analysis_of("reliability: {node_mtbf: 1 h, checkpoint_cost: 40 min}")
    # M_p = 60/p min: p = 2 gives 2 M_p = 60 > 40; p = 4 gives 2 M_p = 30 ≤ 40, the first storm
    assert analysis.reliability.first_storm_nodes == 4
    storm = next(f for f in analysis.findings if f.code == "checkpoint-storm")
    assert storm.severity == "warning" and analysis.summary.can_start.value  # no plan: advice
    # planned at 8 nodes, past the first storm: the design cannot finish, so it cannot start as declared (rank 1,
    # docs/methods.md#can-the-design-start); planned at 2, the storm at larger scales stays advice
    at_plan = analysis_of("design: {nodes: 8}\nreliability: {node_mtbf: 1 h, checkpoint_cost: 40 min}")
    storm = next(f for f in at_plan.findings if f.code == "checkpoint-storm")
    assert storm.severity == "error" and at_plan.summary.can_start.code == "checkpoint-storm"
    assert (at_plan.summary.next_action.rank == 1 and at_plan.summary.state == "unjudged") or \
        at_plan.summary.state == "no-goal"
    below = analysis_of("design: {nodes: 2}\nreliability: {node_mtbf: 1 h, checkpoint_cost: 40 min}")
    assert next(f for f in below.findings if f.code == "checkpoint-storm").severity == "warning"
    assert below.summary.can_start.value


DECISIONS = """
pricing: {node_hour: 10 USD}
energy: {node_power: 1 kW}
decisions:
  - {name: cheap, optimize: cost}
  - {name: fast, optimize: time}
  - {name: deadline, optimize: cost, max_time: 3 h}
  - {name: impossible, optimize: cost, max_time: 1 h, max_cost: 50 USD}
  - {name: green, optimize: carbon, max_time: 5 h}
"""


@worked("decisions")
def test_decisions_within_limits_and_nearest() -> None:
    result = analysis_of(DECISIONS, intensity=Intensity(100.0, "given")).decisions
    by_name = {d.name: d for d in result.decisions}
    assert by_name["cheap"].nodes == 1 and by_name["fast"].nodes == 8
    assert by_name["deadline"].nodes == 4 and by_name["deadline"].within_limits  # 2.4 h ≤ 3 h, cost 96 < 128
    impossible = by_name["impossible"]
    assert not impossible.within_limits and "nearest" in impossible.note
    # No point is within the limits: the objective's best (the cheapest, 1 node at 80) is still the choice, and the
    # nearest is named. Excess: p=8: max(1.6/1, 128/50) = 2.56; p=4: max(2.4, 1.92) = 2.4; p=2: max(4.2, 1.68) → 4
    assert impossible.nodes == 1 and impossible.nearest is not None and impossible.nearest.nodes == 4
    # energy p·T·1 kW: 8, 8.4, 9.6, 12.8 kWh; p = 1 takes 8 h > 5 h, so the least within limits is p = 2
    assert by_name["green"].nodes == 2
    # contexts that chose one point are named together: cheap and impossible both chose 1 node
    trade = next(t for t in result.trade_offs if t.context == "cheap and impossible" and t.instead_of == "fast")
    assert trade.time_ratio == pytest.approx(8 / 1.6) and trade.cost_ratio == pytest.approx(80 / 128)
    assert len(result.trade_offs) == 6  # four distinct points (1, 2, 4, 8 nodes): 4·3/2 rows


def test_trade_offs_grow_with_the_points_not_the_pairs_of_contexts() -> None:
    """8,000 contexts once made 32 million trade-off rows (4 GiB); now 64 at most, and rows per distinct point."""
    many = "decisions:\n" + "".join(f"  - {{name: c{i}, optimize: {('cost', 'time')[i % 2]}}}\n" for i in range(64))
    result = analysis_of(DECISIONS.split("decisions:")[0] + many).decisions
    assert len(result.decisions) == 64 and len(result.trade_offs) == 1  # two points: 1 node and 8 nodes
    assert result.trade_offs[0].context.startswith("c0, c2, c4")


def test_more_than_64_contexts_are_refused_where_the_list_starts(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from reportgen.commands.cli import main

    many = "".join(f"  - {{name: c{i}, optimize: cost}}\n" for i in range(65))
    (tmp_path / "p.yaml").write_text(f"project: {{title: T}}\ndecisions:\n{many}")
    assert main(["check", str(tmp_path / "p.yaml")]) == 2
    assert "p.yaml:3:3: error: decisions: expected at most 64 entries, got 65" in capsys.readouterr().err


def test_carbon_decision_without_intensity_ranks_by_energy() -> None:
    result = analysis_of(DECISIONS).decisions
    green = next(d for d in result.decisions if d.name == "green")
    assert green.nodes == 2 and "ranked by energy" in green.note


def test_the_carbon_limit_of_a_decision_by_hand() -> None:
    # energy p·T·1 kW: 8, 8.4, 9.6, 12.8 kWh at 1, 2, 4, 8 nodes; at 100 g/kWh 0.8, 0.84, 0.96, 1.28 kg CO2e.
    # The fastest within 0.9 kg: 2 nodes (4.2 h); 4 nodes (0.96 kg) is over the limit.
    text = """
project: {title: T}
scaling:
  time_unit: h
  runs: [{nodes: 1, time: 8}, {nodes: 2, time: 4.2}, {nodes: 4, time: 2.4}, {nodes: 8, time: 1.6}]
energy: {node_power: 1 kW}
decisions:
  - {name: capped, optimize: time, max_co2: 0.9 kg}
"""
    decision = analyze(make_project(text), intensity=Intensity(100.0, "given")).decisions.decisions[0]
    assert decision.nodes == 2 and decision.within_limits
    assert decision.limits.max_co2_kg == pytest.approx(0.9)
