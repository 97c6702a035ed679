"""The failure tax at the plan, one row per price regime (docs/methods.md#failures-at-scale,
docs/methods.md#spot-as-failures): reliability.at_plan, the goal's failure tax that equals it, the regime page 1 leads
with, and the `checkpoint-interval` finding that quotes that regime's row. Arithmetic beside each assertion."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.reliability import reliability_at_plan
from reportgen.analysis.verdict.goal import GoalCheck, GoalDocument, GoalResult
from reportgen.render.results import keys_of
from tests.conftest import make_project

# 8 nodes, M = 6,300 h = 22,680,000 s, δ = 45 s, R = 4 min, a declared 20 min; spot: λ = 0.02 a node-hour, R_spot =
# 6 min; owned nodes at 60 % of the list price, not viable (45 % used, 50 % needed): a row all the same;
# the plan's run takes 7,040 s
SPOT = """
project: {title: S, goal: {time_per_run: 3 h}}
design: {nodes: 8}
scaling: {time_unit: s, runs: [{nodes: 4, time: 14000}, {nodes: 8, time: 7040}]}
pricing:
  node_hour: 55 USD
  regimes:
    spot: {price_fraction: 0.43, preemptions_per_node_hour: 0.02, restart_overhead: 6 min}
    local: {price_fraction: 0.6, utilization: 0.45, min_utilization: 0.5}
reliability: {node_mtbf: 6300 h, checkpoint_cost: 45 s, restart_cost: 4 min, checkpoint_interval: 20 min}
"""
UNPRICED = SPOT.replace("""pricing:
  node_hour: 55 USD
  regimes:
    spot: {price_fraction: 0.43, preemptions_per_node_hour: 0.02, restart_overhead: 6 min}
    local: {price_fraction: 0.6, utilization: 0.45, min_utilization: 0.5}
""", "")

M = 6300 * 3600.0  # node MTBF in s
# on demand and owned: M_p = 22,680,000 / 8 = 2,835,000 s; at 20 min: 45/1,200 + (600 + 240)/2,835,000 = 3.780 %
DEMAND_MTBF = M / 8
DEMAND_TAX = 45 / 1200 + (600 + 240) / DEMAND_MTBF
# Daly: √(2·45·2,835,000)·(1 + ⅓√(45/5,670,000) + ⅑(45/5,670,000)) − 45 = 15,973.4 × 1.000940 − 45 = 15,943.4 s
DEMAND_DALY = math.sqrt(2 * 45 * DEMAND_MTBF) * (1 + math.sqrt(45 / (2 * DEMAND_MTBF)) / 3
                                                 + 45 / (2 * DEMAND_MTBF) / 9) - 45
# 45/15,943.4 + (7,971.7 + 240)/2,835,000 = 0.2822 % + 0.2897 % = 0.572 %
DEMAND_DALY_TAX = 45 / DEMAND_DALY + (DEMAND_DALY / 2 + 240) / DEMAND_MTBF
# on spot: 1/M_p = 8/22,680,000 + 0.02 × 8/3,600 = 4.4797e-5 /s, M_p = 22,322.8 s
SPOT_MTBF = 1 / (8 / M + 0.02 * 8 / 3600)
# 45/1,200 + 1,200/44,645.7 + 240 × 8/22,680,000 + 360 × 0.02 × 8/3,600 = 3.75 + 2.688 + 0.0085 + 1.6 = 8.046 %
SPOT_TAX = 45 / 1200 + 1200 / (2 * SPOT_MTBF) + 240 * 8 / M + 360 * 0.02 * 8 / 3600
# Daly for the combined M_p: √(2·45·22,322.8)·(1 + ⅓√0.001008 + ⅑·0.001008) − 45 = 1,417.4 × 1.010695 − 45 = 1,387.6 s
SPOT_DALY = math.sqrt(2 * 45 * SPOT_MTBF) * (1 + math.sqrt(45 / (2 * SPOT_MTBF)) / 3 + 45 / (2 * SPOT_MTBF) / 9) - 45
# 45/1,387.6 + 1,387.6/44,645.7 + 0.0085 % + 1.6 % = 3.243 + 3.108 + 0.0085 + 1.6 = 7.960 %
SPOT_DALY_TAX = 45 / SPOT_DALY + SPOT_DALY / (2 * SPOT_MTBF) + 240 * 8 / M + 360 * 0.02 * 8 / 3600


def test_each_stated_regime_has_its_row_at_the_plan() -> None:
    project = make_project(SPOT)
    rows = {row.regime: row for row in reliability_at_plan(project.reliability, 8, project.pricing, 7040.0)}
    assert list(rows) == ["on_demand", "spot", "local"]
    demand, spot, owned = rows["on_demand"], rows["spot"], rows["local"]
    assert pytest.approx(0.037796, abs=1e-6) == DEMAND_TAX and pytest.approx(15943.4, abs=0.1) == DEMAND_DALY
    assert (demand.system_mtbf_s, demand.interval_s) == (pytest.approx(2_835_000), 1200)
    assert demand.overhead_fraction == pytest.approx(DEMAND_TAX)
    assert demand.daly_interval_s == pytest.approx(DEMAND_DALY)
    assert demand.daly_overhead_fraction == pytest.approx(DEMAND_DALY_TAX) and pytest.approx(
        0.005719, abs=1e-6) == DEMAND_DALY_TAX
    # 7,040 × (3.7796 − 0.5719) % = 225.8 s a run
    assert demand.saving_s == pytest.approx(7040 * (DEMAND_TAX - DEMAND_DALY_TAX)) and demand.saving_s == \
        pytest.approx(225.8, abs=0.1)
    assert owned == replace(demand, regime="local")  # owned nodes fail as on demand: M/p
    # spot: preemptions are failures
    assert pytest.approx(22322.8, abs=0.1) == SPOT_MTBF and pytest.approx(1387.6, abs=0.1) == SPOT_DALY
    assert spot.system_mtbf_s == pytest.approx(SPOT_MTBF) and spot.interval_s == 1200
    assert spot.overhead_fraction == pytest.approx(SPOT_TAX) and pytest.approx(0.080463, abs=1e-6) == SPOT_TAX
    assert spot.daly_interval_s == pytest.approx(SPOT_DALY)
    assert spot.daly_overhead_fraction == pytest.approx(SPOT_DALY_TAX) and pytest.approx(
        0.079595, abs=1e-6) == SPOT_DALY_TAX
    # 7,040 × (8.0463 − 7.9595) % = 6.11 s a run
    assert spot.saving_s == pytest.approx(7040 * (SPOT_TAX - SPOT_DALY_TAX)) and spot.saving_s == pytest.approx(
        6.11, abs=0.01)


def test_without_prices_one_row_without_a_regime_and_without_a_plan_none() -> None:
    project = make_project(UNPRICED)
    (row,) = reliability_at_plan(project.reliability, 8, project.pricing, None)
    # on demand's figures; the plan's time unknown: no saving
    assert row.regime is None and row.overhead_fraction == pytest.approx(DEMAND_TAX) and row.saving_s is None
    assert reliability_at_plan(project.reliability, None, project.pricing, 7040.0) == ()


def test_without_a_declared_interval_dalys_is_used_and_nothing_is_saved() -> None:
    project = make_project(SPOT.replace(", checkpoint_interval: 20 min", ""))
    for row in reliability_at_plan(project.reliability, 8, project.pricing, 7040.0):
        assert row.interval_s == row.daly_interval_s and row.overhead_fraction == row.daly_overhead_fraction
        assert row.saving_s is None
    spot = reliability_at_plan(project.reliability, 8, project.pricing, 7040.0)[1]
    assert spot.interval_s == pytest.approx(SPOT_DALY) and spot.overhead_fraction == pytest.approx(SPOT_DALY_TAX)


@pytest.mark.parametrize("text", [SPOT, UNPRICED], ids=["spot", "unpriced"])
def test_the_goals_failure_tax_is_reliabilitys_row_for_the_same_regime(text: str) -> None:
    analysis = analyze(make_project(text))
    rows = {row.regime: row for row in analysis.reliability.at_plan}
    goal = analysis.goal
    assert goal.at_plan and {check.regime for check in goal.at_plan} == set(rows)
    for check in goal.at_plan:
        assert check.failure_tax == rows[check.regime].overhead_fraction
    # results.json holds both names of the one value
    for row in keys_of(GoalDocument.of(goal))["at_plan"]:
        assert row["failure_overhead_fraction"] == row["failure_tax"] == rows[row["regime"]].overhead_fraction
    json_rows = keys_of(analysis.reliability)["at_plan"]
    assert [row["regime"] for row in json_rows] == list(rows) and set(json_rows[0]) == {
        "regime", "system_mtbf_s", "interval_s", "daly_interval_s", "overhead_fraction", "daly_overhead_fraction",
        "saving_s"}


def test_a_decisions_row_carries_its_regimes_tax_at_its_scale() -> None:
    reliability = analyze(make_project(SPOT)).reliability
    # 4 nodes on spot: M_p = 1/(4/22,680,000 + 0.08/3,600) = 44,645.7 s; 45/1,200 + 1,200/89,291 + 960/22,680,000
    # + 360 × 0.08/3,600 = 3.75 + 1.344 + 0.0042 + 0.8 = 5.898 %
    four = 1 / (4 / M + 0.02 * 4 / 3600)
    assert reliability.tax_at(4, "spot") == pytest.approx(45 / 1200 + 1200 / (2 * four) + 240 * 4 / M + 0.008)
    assert reliability.tax_at(4, "spot") == pytest.approx(0.05898, abs=1e-5)
    # on demand and owned: 45/1,200 + (600 + 240)/(22,680,000 / 4) = 3.765 %
    assert reliability.tax_at(4, "on_demand") == reliability.tax_at(4, "local") == pytest.approx(
        45 / 1200 + 840 / (M / 4))


# ------------------------------------------------------------------------------------- the headline regime
def _check(regime: str | None, *, cost: float | None, time_s: float, met: bool | None = False,
           viable: bool = True) -> GoalCheck:
    return GoalCheck(8, regime, viable, time_s, cost, None, None, None, None, None, None, met)  # type: ignore[arg-type]


def _goal(*rows: GoalCheck, fitted: bool = False) -> GoalResult:
    return GoalResult(None, 5400.0, None, 8, not fitted, () if fitted else rows, None, None, False, None, None, "",
                      fitted_at_plan=rows if fitted else ())


def test_the_headline_is_the_cheapest_viable_that_meets_else_the_cheapest_viable_else_the_fastest() -> None:
    demand = _check("on_demand", cost=894.0, time_s=7306.0, met=True)
    spot = _check("spot", cost=400.0, time_s=7606.0, met=False)
    owned = _check("local", cost=536.0, time_s=7306.0, met=True, viable=False)
    # spot is cheapest but misses; owned meets but is not viable: on demand meets
    assert _goal(demand, spot, owned).headline_regime() == "on_demand"
    # none meets: the cheapest viable (400 < 894)
    assert _goal(replace(demand, met=False), spot, owned).headline_regime() == "spot"
    # none viable: the fastest (7,306 s < 7,606 s)
    assert _goal(_check("spot", cost=400.0, time_s=7606.0, viable=False),
                 _check("local", cost=536.0, time_s=7306.0, viable=False)).headline_regime() == "local"
    # an unmeasured plan's fitted rows; rows without cost compare by time
    assert _goal(spot, demand, fitted=True).headline_regime() == "on_demand"
    assert _goal(_check(None, cost=None, time_s=7306.0, met=None)).headline_regime() is None
    assert _goal(_check("spot", cost=None, time_s=7000.0), _check("on_demand", cost=None, time_s=6000.0)) \
        .headline_regime() == "on_demand"
    assert _goal().headline_regime() is None


# ------------------------------------------------------------------------------ checkpoint-interval, by regime
def _finding(text: str):  # type: ignore[no-untyped-def]
    return next(f for f in analyze(make_project(text)).findings if f.code == "checkpoint-interval")


def test_the_finding_speaks_of_spot_when_page_1_leads_with_it() -> None:
    # a 3 h limit: on demand 7,040 × 1.0378 = 7,306 s and spot 7,040 × 1.0805 = 7,606 s both meet; spot is cheaper.
    # 8.046 % against Daly's 7.960 %: 1.09 % more, within 10 %: a note
    finding = _finding(SPOT)
    assert pytest.approx(0.0109, abs=1e-4) == SPOT_TAX / SPOT_DALY_TAX - 1
    assert finding.severity == "info"
    assert finding.message == ("on spot, checkpointing every 20 min costs 8.05 % of the run at 8 nodes against 7.96 % "
                               "at Daly's interval of 23.1 min for failures and preemptions together: close to the "
                               "optimum")


def test_the_finding_speaks_of_on_demand_when_page_1_leads_with_it() -> None:
    # a 2 h 5 min (7,500 s) limit: on demand's 7,306 s meets, spot's 7,606 s misses: page 1 leads with on demand.
    # 3.780 % against Daly's 0.572 %: 5.6× more, past 10 %: a warning
    finding = _finding(SPOT.replace("time_per_run: 3 h", "time_per_run: 125 min"))
    assert pytest.approx(5.61, abs=0.01) == DEMAND_TAX / DEMAND_DALY_TAX - 1
    assert finding.severity == "warning"
    assert finding.message == ("on demand, checkpointing every 20 min costs 3.78 % of the run at 8 nodes against "
                               "0.572 % at Daly's interval of 4.43 h for hardware failures: set it near Daly's "
                               "interval")


def test_without_prices_or_goal_the_finding_names_no_regime() -> None:
    finding = _finding(UNPRICED.replace(", goal: {time_per_run: 3 h}", ""))
    assert finding.severity == "warning" and finding.message.startswith(
        "checkpointing every 20 min costs 3.78 % of the run at 8 nodes against 0.572 % at Daly's interval of 4.43 h")


def test_a_spot_interval_far_from_its_daly_is_warned_about_on_spot() -> None:
    # a declared 2 h on spot: 45/7,200 + 7,200/44,645.7 + 0.0085 % + 1.6 % = 0.625 + 16.13 + 1.61 = 18.36 %, 2.3×
    # Daly's 7.96 %: a warning, quoted for spot
    finding = _finding(SPOT.replace("checkpoint_interval: 20 min", "checkpoint_interval: 2 h")
                       .replace("time_per_run: 3 h", "time_per_run: 4 h"))
    assert finding.severity == "warning" and finding.message.startswith(
        "on spot, checkpointing every 2 h costs 18.4 % of the run at 8 nodes against 7.96 %")


@pytest.mark.parametrize("limit", ["3 h", "125 min", "1 h"])
def test_the_lints_headline_is_page_1s(limit: str) -> None:
    # 3 h: both meet, spot cheaper; 125 min: on demand alone meets; 1 h: none meets, spot cheaper
    analysis = analyze(make_project(SPOT.replace("time_per_run: 3 h", f"time_per_run: {limit}")))
    assert analysis.goal.headline_regime() == analysis.summary.headline_regime == \
        {"3 h": "spot", "125 min": "on_demand", "1 h": "spot"}[limit]


def test_the_checklists_tax_answer_names_each_regimes_tax() -> None:
    from pathlib import Path

    from reportgen.analysis import analyze
    from reportgen.project.loader import load_project
    from reportgen.project.model import REGIME_PHRASES
    from reportgen.wording import percent

    analysis = analyze(load_project(Path(__file__).resolve().parent.parent / "inputs" / "example.yaml").project)
    answer = next(row.answer for row in analysis.checklist.rows if row.stage == 6)
    rows = analysis.reliability.at_plan
    assert len(rows) > 1  # on demand, spot, owned: one figure would have been one of them quoted as all
    for row in rows:
        assert f"{percent(row.overhead_fraction)} {REGIME_PHRASES[row.regime]}" in answer
