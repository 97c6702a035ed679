"""Page 1 as a reviewer writes it: the verdict in the goal's terms, the gap, the operating point the evidence
supports, the model only as the model's, one next action from a documented table. Arithmetic beside each assertion."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.page.prose.actions import ACTIONS
from reportgen.analysis.verdict.goal import GoalDocument
from reportgen.project.loader import load_project
from tests.conftest import INPUTS, ROOT, make_project
from tests.worked import worked


@pytest.fixture(scope="module")
def example():  # type: ignore[no-untyped-def]
    return analyze(load_project(INPUTS / "example.yaml").project)


@worked("summary")
def test_a_missed_goal_gives_its_gap_in_the_goals_own_terms(example) -> None:
    summary = example.summary
    assert summary.state == "missed"
    # 8 nodes: 4,150 + 1,500 + 1,300 + 90 = 7,040 s = 1 h 57 min, (7,040 − 5,400)/5,400 = 30 % over the 90 min limit
    # one regime per sentence; the failure tax is in both. On spot, preemptions are failures
    # (docs/methods.md#spot-as-failures): 1/M_p = 8/6,300 h + 0.02 × 8 an hour, M_p = 22,323 s; at the declared
    # 20 min, 45/1,200 + 1,200/44,646 + 240 × 8/22,680,000 + 360 × 0.02/3,600 × 8 = 8.046 %, so spot
    # 7,040 × 1.08046 = 7,606.5 s = 2 h 6.8 min (41 % over), 55.04 × 0.43 × 8 × 7,606.5 / 3,600 = 400 USD (100 %
    # over). On demand, hardware failures only: 45/1,200 + (600 + 240)/2,835,000 = 3.78 %, 7,306 s, 894 USD
    assert summary.verdict.startswith("The goal is not met at the planned 8 nodes: on spot, a run takes 2 h 6.8 min "
                                      "(41 % over the 1 h 30 min limit) and costs 400 USD (100 % over the 200 USD "
                                      "budget); on demand, 2 h 1.8 min and 894 USD")
    # said once: Daly's τ for the combined M_p = √(2·45·22,323)·(1 + ⅓√0.001008 + ⅑·0.001008) − 45 = 1,387.6 s =
    # 23.1 min, overhead 7.960 %; moving to it saves 7,040 × (8.046 − 7.960) % = 6.11 s of the spot run
    assert summary.failure_tax == ("These figures include the failure tax at 8 nodes on spot: hardware failures and "
                                    "preemptions (checkpoints, lost work, restarts) add 8.05 % to the run; "
                                    "checkpointing every 23.1 min (Daly's interval for failures and preemptions "
                                    "together) instead of every 20 min would save 6.11 s a run.")
    assert "failure tax" not in summary.verdict  # said once
    # one node takes 32,400 + 600 = 33,000 s: finishing in 5,400 s needs a speedup of 33,000 / 5,400 = 6.11
    assert "needs a speedup of 6.11 over 1 node; the best measured is 4.95 (16 nodes)" in summary.gap
    peak = example.scaling.usl.peak_capacity
    assert peak < 33000 / 5400 and "no scale of this design meets the deadline" in summary.gap


def test_the_model_refuted_by_the_measurements_is_never_headlined(example) -> None:
    summary = example.summary
    codes = {f.code for f in example.findings}
    assert {"comm-share-departs", "below-prediction"} <= codes
    assert "does not describe this system" in summary.model and "p* = 790 is not a guide" in summary.model
    # the measured κ over the model's α / T_comp
    assert summary.kappa_ratio == pytest.approx(example.scaling.usl.kappa / example.prediction.usl_kappa)
    assert summary.optimum.source == "measured" and summary.optimum.nodes != example.prediction.p_star


def test_with_no_measured_point_meeting_the_goal_the_nearest_is_the_operating_point(example) -> None:
    goal = example.goal
    nearest = goal.nearest
    # the nearest minimises max(time / limit, cost / limit) over every measured (scale, regime). On spot, with its
    # failures and preemptions: 4 nodes take 10,160 × (1 + 45/1,200 + 1,200/89,292 + 960/22,680,000 + 0.008) =
    # 10,759 s, 1.992 × the 5,400 s limit (cost 1.41 × the budget); 8 nodes cost 400.05 USD, 2.0003 × the budget
    assert (nearest.nodes, nearest.regime) == (4, "spot")
    assert max(nearest.time_ratio, nearest.cost_ratio) == pytest.approx(10160 * 1.058981 / 5400, rel=1e-5)
    assert (example.summary.optimum.nodes, example.summary.optimum.source) == (4, "measured")


def test_the_next_action_comes_from_the_most_severe_finding(example) -> None:
    action = example.summary.next_action
    # no measured or fitted scale meets the goal, and no single lever meets both 90 min and 200 USD at 8 nodes: out
    # of reach (rank 6), before the model warnings (rank 7), with the two levers that come closest
    # (docs/methods.md#the-order). Even free nodes leave a run at 7,306 s, 1.353× the 5,400 s limit; spot at any
    # price fraction, 7,606 s: 1.409×
    assert (action.code, action.rank, action.lever, action.kind) == ("goal-unmet", 6, None, "out-of-reach")
    assert action.text.startswith("The goal is out of reach of this design at the planned 8 nodes")
    assert ("The closest: a node price of 0.06 USD per node-hour still leaves the plan 35 % over a limit; "
            "a spot fraction of 0.0430 %, 41 % over.") in action.text


SPEEDUP_SHORT = """
project: {title: T, goal: {time_per_run: 120 s}}
design: {nodes: 8}
scaling: {time_unit: s, runs: [{nodes: 1, time: 1000}, {nodes: 2, time: 520}, {nodes: 4, time: 280},
                                {nodes: 8, time: 160}]}
"""


def test_when_no_measured_scale_meets_the_goal_the_fit_names_the_scale_to_measure() -> None:
    analysis = analyze(make_project(SPEEDUP_SHORT))
    goal, scaling = analysis.goal, analysis.scaling
    fitted = goal.fitted_meeting
    times = scaling.fitted_times(np.array([fitted.nodes - 1.0, float(fitted.nodes)]))
    assert times[0] > 120 >= times[1]  # the smallest scale whose fitted time meets 2 min
    assert fitted.source == "fitted" and fitted.nodes not in {1, 2, 4, 8}
    summary = analysis.summary
    assert (summary.optimum.nodes, summary.optimum.source) == (fitted.nodes, "usl")
    # the next action is the nearest scale the fit judges met: its estimate's 90 % interval clear of the 2 min limit,
    # which takes a few nodes more than the point fit's 12 (docs/methods.md#judging-an-unmeasured-plan)
    lever = summary.next_action.lever
    assert lever.lever == "nodes" and lever.source == "fitted" and lever.flips_at >= fitted.nodes
    assert summary.next_action.text.startswith(f"Measure {int(lever.flips_at)} nodes, the nearest scale where the "
                                               "fit judges the goal met")
    assert f"the USL fit says {fitted.nodes} nodes would" in summary.gap


def test_an_unmeasured_plan_is_judged_from_its_estimate_when_clear_of_the_limit() -> None:
    # docs/methods.md#judging-an-unmeasured-plan: 6 nodes, between measured scales; the estimate's whole 90 %
    # interval lies over the 2 min limit, so the plan is judged (missed) from it, and says so
    analysis = analyze(make_project(SPEEDUP_SHORT.replace("nodes: 8}", "nodes: 6}", 1)))
    goal = analysis.goal
    assert goal.at_plan == () and goal.fitted_at_plan and GoalDocument.of(goal).met_at_plan is False
    fitted = goal.fitted_at_plan[0]
    assert fitted.time_s == pytest.approx(goal.plan_estimate.time_s) and goal.plan_estimate.low_s > 120
    assert analysis.summary.state == "missed"
    assert analysis.summary.verdict.startswith("The goal would be missed at the planned 6 nodes, judged from an "
                                               "estimate (not measured)")
    # page 1 quotes the resampled fits' estimate with its interval and source: four near-linear scales, so Amdahl
    # (the USL's κ is not needed by these runs; docs/methods.md#few-runs-stated-confidence)
    estimate = goal.plan_estimate
    assert estimate is not None and estimate.low_s <= estimate.time_s <= estimate.high_s
    assert "by Amdahl from 1, 2, 4 and 8 nodes a run at 6 nodes takes" in analysis.summary.verdict


def test_without_prices_the_time_verdict_stands_and_the_budget_is_not_judged() -> None:
    analysis = analyze(make_project("""
project: {title: T, goal: {text: Cheap., time_per_run: 2 h, cost_per_run: 50 EUR}}
design: {nodes: 4}
scaling: {time_unit: s, runs: [{nodes: 1, time: 9000}, {nodes: 2, time: 4700}, {nodes: 4, time: 2600}]}
"""))
    summary = analysis.summary
    # 4 nodes: 2,600 s against 7,200: 64 % under; the EUR budget is read in EUR although there is no pricing section
    assert summary.state == "partly"
    assert summary.verdict == ("The time goal is met at the planned 4 nodes: a run takes 43.3 min (64 % under the 2 h "
                               "limit); the 50 EUR budget is not judged: the project gives no prices (add "
                               "pricing.node_hour).")
    # without prices the fewest node-hours meeting 2 h: 2 × 4,700 = 9,400 node-s against 4 × 2,600 = 10,400
    assert analysis.goal.time_met_fewest_node_hours.nodes == 2
    assert "No error or warning" not in summary.verdict and summary.gap is None


def test_a_project_without_a_plan_is_held_against_its_measured_scales() -> None:
    analysis = analyze(make_project("""
project: {title: T, goal: {time_per_run: 1 h}}
scaling: {time_unit: s, runs: [{nodes: 4, time: 5200}]}
"""))
    summary = analysis.summary
    assert summary.verdict == ("The project plans no node count (add design.nodes), so the goal is held against the "
                               "measured scales: none meets it.")
    # 5,200 s against 3,600: 44 % over
    assert "The measured point nearest the goal, 4 nodes, takes 1 h 27 min (44 % over the 1 h limit)" in summary.gap
    assert summary.next_action.text.startswith("Measure more node counts")


def test_no_goal_gives_the_plans_numbers_and_no_verdict() -> None:
    analysis = analyze(make_project("""
project: {title: T}
design: {nodes: 2}
scaling: {time_unit: s, runs: [{nodes: 1, time: 100}, {nodes: 2, time: 60}]}
pricing: {node_hour: 36 USD}
"""))
    # 2 nodes × 60 s × 36 USD / 3,600 s = 1.20 USD
    assert analysis.summary.verdict == ("No goal is stated (add project.goal with time_per_run or cost_per_run); at "
                                        "the planned 2 nodes a run takes 60 s and costs 1.20 USD on demand.")
    assert analysis.summary.state == "no-goal"


def test_no_cause_is_named_without_a_knee() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling: {time_unit: s, runs: [{nodes: 1, time: 100}, {nodes: 2, time: 50.5}, {nodes: 4, time: 25.6},
                                {nodes: 8, time: 13.0}]}
"""))
    assert analysis.scaling.knee_nodes is None
    knee = analysis.summary.knee
    assert knee.startswith("No knee in the measured range") and "cause" not in knee and "remedy" not in knee


def test_every_finding_code_with_an_action_is_documented_in_the_same_order() -> None:
    page = (ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    table = page.split("## Page 1 and the next action", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"`([a-z-]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()
                                                    if line.startswith("| `")))
    assert documented == [action.code for action in ACTIONS]


def test_the_appendix_lists_the_action_of_each_finding_raised_and_no_other(tmp_path: Path) -> None:
    """docs/methods.md#a-report-a-reviewer-reads-through: the table of next actions holds this report's findings."""
    from reportgen.pipeline import BuildOptions, build

    build(INPUTS / "example.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    html = (tmp_path / "example" / "report.html").read_text(encoding="utf-8")
    appendix = html.split('<section id="appendix">', 1)[1]
    table = appendix.split("next action it calls for</dt>", 1)[1].split("</table>", 1)[0]
    raised = {finding.code for finding in analyze(load_project(INPUTS / "example.yaml").project).findings}
    cells = set(re.findall(r"<code>(.*?)</code>", re.sub(r"</?span[^>]*>", "", table)))
    listed = {action.code for action in ACTIONS if action.code in cells}
    assert listed == raised & {action.code for action in ACTIONS} and len(listed) >= 3
    summary = " ".join(html.split('<section id="summary">', 1)[1].split("</section>", 1)[0].split())
    assert summary.index('id="goal-verdict"') < summary.index('id="next-action"') < summary.index("Findings")


def test_the_gap_quotes_the_cheapest_run_with_its_failure_tax(example) -> None:
    # 1 node on spot, where preemptions are failures (docs/methods.md#spot-as-failures): M_p = 1/(1/22,680,000 s +
    # 0.02/3,600 s) = 178,578 s; 45/1,200 + 1,200/357,156 + 240/22,680,000 + 360 × 0.02/3,600 = 4.287 %; the cost
    # table's spot row holds it once: 55.04 × 0.43 × 33,000 × 1.04287 / 3,600 = 226.25 USD
    cheapest = example.goal.cheapest_run
    spot = next(r for r in example.cost.regimes["spot"].rows if r.nodes == 1)
    assert (cheapest.nodes, cheapest.regime) == (1, "spot")
    assert spot.failure_overhead_fraction == pytest.approx(0.0428704, rel=1e-5)
    assert cheapest.cost == pytest.approx(spot.cost) == pytest.approx(55.04 * 0.43 * 33000 * 1.0428704 / 3600)
    assert f"the cheapest, 1 node on spot, costs {round(cheapest.cost)} USD" in example.summary.gap


def test_page_one_says_the_diagnosis_in_one_line_written_by_the_summary(example) -> None:
    """The diagnosis line of page 1 is a sentence of the summary (results.json carries it), not of a template."""
    assert example.summary.diagnosis == ("The binding ceiling is compute, cured by distributing the training, as the "
                                         "design declares.")
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    assert "axis: distribute training" in text
    wrong = analyze(make_project(text.replace("axis: distribute training", "axis: distribute data")))
    assert wrong.summary.diagnosis == ("The binding ceiling is compute, cured by distributing the training. The "
                                       "design declares “distribute data”: it does not match (see the Diagnosis "
                                       "section).")


def test_the_operating_point_says_its_measured_figures_are_before_the_failure_tax(example) -> None:
    """The verdict's times and costs include the failure tax; the operating point quotes the measured tables,
    and says so when a tax applies, so that page 1's figures are not held against each other."""
    assert "Measured (before the failure tax): cost-optimal 1 node (505 USD per run on demand)" in \
        example.summary.optimum.text
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\nreliability:")
    assert rest, "the example states reliability"
    untaxed = head + "\n" + rest.split("\n\n", 1)[1] if "\n\n" in rest else head
    without = analyze(make_project(untaxed))
    assert without.summary.failure_tax is None
    assert "Measured: cost-optimal 1 node" in without.summary.optimum.text


def test_a_goal_without_prices_carries_the_failure_tax_once() -> None:
    """The time at the plan is T_p × (1 + the overhead fraction), priced or not (it was folded in twice
    without prices: 7,040 s × 1.0378² = 7,582 s, beside a failure-tax sentence of 3.78 %)."""
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    start = text.index("\npricing:")
    unpriced = analyze(make_project(text[:start] + text[text.index("\n\n", start + 1):]))
    [check] = unpriced.goal.at_plan
    tax = check.failure_tax
    assert tax == pytest.approx(45 / 1200 + (600 + 240) / 2_835_000)  # δ/τ + (τ/2 + R)/M_p, M_p = 6,300 h / 8
    assert check.time_s == pytest.approx(7_040 * (1 + tax))  # 7,306 s = 2 h 1.8 min
    assert "2 h 1.8 min" in unpriced.summary.verdict
