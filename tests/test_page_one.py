"""Page 1 from one set of facts (docs/methods.md#page-1-from-one-set-of-facts): the state, whether the design can
start, the constraints applied once, the ways considered and their order, each worked by hand."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.measured.confidence import NextRun
from reportgen.analysis.page.candidate_order import first_feasible, ordered
from reportgen.analysis.page.candidates import MATERIAL, P_WRONG_MIN, planner_exclusion
from reportgen.analysis.page.page_one_facts import Candidate
from tests.conftest import INPUTS, make_project
from tests.worked import worked

# The plan (16 nodes) misses the 30 min limit: 1,950 s; 32 measured nodes meet both limits: 1,500 s for
# 32 × 1,500 / 3,600 × 10 = 133.33 USD against the 150 USD budget
SCALES = """project: {title: T, goal: {time_per_run: 30 min, cost_per_run: 150 USD}}
pricing: {node_hour: 10 USD}
hardware: {nodes_available: AVAILABLE}
design: {nodes: 16}
scaling:
  time_unit: s
  runs: [{nodes: 1, time: 14400}, {nodes: 4, time: 3800}, {nodes: 8, time: 2100}, {nodes: 16, time: 1950},
         {nodes: 32, time: 1500}]
"""


def _way(kind: str, rank: int, *, cost: float | None = None, node_hours: float | None = None,
         effect: str = "meets", nodes: float | None = None, change: float | None = None, severity: str | None = None,
         table_index: int = 0, p_before: float | None = None, p_after: float | None = None,
         source: str | None = None, regime: str | None = None, feasible: bool = True) -> Candidate:
    return Candidate(kind, "code", rank, nodes, regime, None, None, effect, None, p_before, p_after,  # type: ignore[arg-type]
                     None, node_hours, change, feasible, None, f"{kind} {cost}", cost=cost, severity=severity,  # type: ignore[arg-type]
                     table_index=table_index, source=source)


@worked("page_one")
def test_a_measured_scale_that_meets_goes_before_a_lever_and_a_cheaper_fitted_scale_before_it() -> None:
    """Rank 3 before rank 5; within rank 3 the cheapest first, a modelled way before a measured one only when cheaper
    by more than the 5 % margin (docs/methods.md#the-order)."""
    summary = analyze(make_project(SCALES.replace("AVAILABLE", "64"))).summary
    assert summary.state == "missed"
    measured = next(c for c in summary.candidates if c.kind == "measured-scale")
    # 32 nodes on demand: 133.33 USD a run, 133.33 − 86.67 (16 × 1,950 / 3,600 × 10) = 46.67 USD more than the plan;
    # |ln(32 / 16)| = 0.693; 32 × 1,500 / 3,600 = 13.33 node-hours
    assert (measured.nodes, measured.regime, measured.time_s) == (32, "on_demand", 1500.0)
    assert measured.cost == pytest.approx(133.333333) and measured.money == pytest.approx(46.666667)
    assert measured.change == pytest.approx(math.log(2)) and measured.node_hours == pytest.approx(13.333333)
    assert measured.effect == "meets" and measured.state_after == "met" and measured.feasible
    assert measured.text == ("Plan 32 nodes instead of 16 nodes: measured, they meet both limits on demand (a run "
                             "takes 25 min for 133 USD).")
    fitted = next(c for c in summary.candidates if c.kind == "fitted-scale")
    # the fitted scale the report's judge holds met is cheaper than 133.33 × (1 − 0.05) = 126.67 USD: it goes first
    assert fitted.cost is not None and fitted.cost < 133.333333 * 0.95 and fitted.effect == "meets-modelled"
    kinds = [c.kind for c in summary.candidates]
    assert kinds.index("fitted-scale") < kinds.index("measured-scale") < kinds.index("lever")
    assert (summary.next_action.kind, summary.next_action.rank, summary.next_action.candidate) == \
        ("fitted-scale", 3, 0)


@worked("page_one")
def test_a_scale_above_the_nodes_available_is_kept_and_never_chosen() -> None:
    """nodes_available is applied once: the 32 measured nodes stay a way considered, infeasible, and neither the
    next action nor the operating point names them (docs/methods.md#constraints-applied-once)."""
    analysis = analyze(make_project(SCALES.replace("AVAILABLE", "24")))
    summary = analysis.summary
    above = next(c for c in summary.candidates if c.nodes == 32)
    assert (above.feasible, above.excluded_by) == (False, "nodes_available")
    assert summary.constraints.nodes_available == 24
    assert summary.next_action.candidate == 0 and summary.candidates[0].nodes != 32
    # the operating point is the fitted scale the judge holds met within 24 nodes, never the 32 beyond them
    assert summary.optimum.nodes is not None and summary.optimum.nodes <= 24 and summary.optimum.source == "usl"
    # every sentence that names the 32 nodes says they lie beyond the nodes available
    assert "32 nodes on demand, beyond the 24 nodes available" in summary.gap
    finding = next(f for f in analysis.findings if f.code == "plan-misses-goal")
    assert finding.message.endswith("while 32 nodes meet it, beyond the 24 nodes available")


def test_the_ties_of_rank_three_by_hand() -> None:
    """100 USD measured against 95.1 USD modelled: not cheaper by more than 5 % (95.1 > 95), the measured one first;
    94.9 USD modelled: first. Equal money: fewer nodes, then the regime order, then the kind order."""
    measured = _way("measured-scale", 3, cost=100.0, nodes=8)
    close = _way("fitted-scale", 3, cost=95.1, effect="meets-modelled", nodes=6)
    cheaper = _way("fitted-scale", 3, cost=94.9, effect="meets-modelled", nodes=6)
    assert ordered([close, measured], margin=0.05) == [measured, close]
    assert ordered([measured, cheaper], margin=0.05) == [cheaper, measured]
    small, large = _way("measured-scale", 3, cost=50.0, nodes=4), _way("measured-scale", 3, cost=50.0, nodes=8)
    assert ordered([large, small], margin=0.05) == [small, large]
    spot = _way("measured-scale", 3, cost=50.0, nodes=4, regime="spot")
    on_demand = _way("measured-scale", 3, cost=50.0, nodes=4, regime="on_demand")
    assert ordered([spot, on_demand], margin=0.05) == [on_demand, spot]
    # without prices: node-hours per run
    assert ordered([_way("measured-scale", 3, node_hours=9.0, nodes=2), _way("measured-scale", 3, node_hours=8.0,
                                                                                nodes=4)], margin=0.05)[0].nodes == 4


def test_the_ties_of_ranks_two_four_five_and_seven_by_hand() -> None:
    # rank 4: an input (no run, 0 node-hours) first; then the fall in p_wrong per node-hour: (0.4 − 0.1) / 3 = 0.1
    # before (0.4 − 0.05) / 5 = 0.07
    run_a = _way("measure", 4, nodes=8, node_hours=3.0, p_before=0.4, p_after=0.1, effect="decides")
    run_b = _way("measure", 4, nodes=16, node_hours=5.0, p_before=0.4, p_after=0.05, effect="decides")
    given = _way("measure", 4, node_hours=0.0, effect="decides")
    assert ordered([run_b, run_a, given], margin=0.05) == [given, run_a, run_b]
    # rank 5: the smaller |ln ratio|, then measured before fitted before the model
    far = _way("lever", 5, change=0.5, source="measured")
    near_model = _way("lever", 5, change=0.1, source="model")
    near_measured = _way("lever", 5, change=0.1, source="measured")
    assert ordered([far, near_model, near_measured], margin=0.05) == [near_measured, near_model, far]
    # ranks 2 and 7: errors, warnings, notes, then the table's order
    error = _way("advice", 7, severity="error", table_index=40)
    warning_early, warning_late = _way("advice", 7, severity="warning", table_index=5), \
        _way("advice", 7, severity="warning", table_index=30)
    note = _way("advice", 7, severity="info", table_index=1)
    assert ordered([note, warning_late, error, warning_early], margin=0.05) == [error, warning_early, warning_late,
                                                                                 note]
    # the first feasible is the next action, whatever its rank
    blocked = _way("measured-scale", 3, cost=1.0, nodes=64, feasible=False)
    assert first_feasible(ordered([note, blocked], margin=0.05)) == 1


def test_a_planner_run_must_be_wanted_and_material() -> None:
    """P_WRONG_MIN = 10 % on a page judged from an estimate; a run must at least halve the chance it is wrong."""
    assert (P_WRONG_MIN, MATERIAL) == (0.10, 0.5)

    def run(before: float, after: float) -> NextRun:
        return NextRun(8, 1, 1.0, None, before, after)

    assert planner_exclusion(run(0.009, 0.007), decides=False) == "immaterial"  # 0.9 % → 0.7 %: neither
    assert planner_exclusion(run(0.40, 0.25), decides=False) == "immaterial"  # 0.25 > 0.40 / 2
    assert planner_exclusion(run(0.40, 0.19), decides=False) is None  # 0.19 ≤ 0.20
    assert planner_exclusion(run(0.05, 0.02), decides=True) is None  # an unjudged page: any that halves it
    assert planner_exclusion(run(0.05, 0.04), decides=True) == "immaterial"


KEEP = """project: {title: T, goal: {time_per_run: 2 h}}
design: {nodes: 8}
scaling:
  time_unit: s
  runs: RUNS
"""


def test_keep_the_plan_only_when_earned() -> None:
    # every run at 8 nodes well within 2 h: keep
    clear = analyze(make_project(KEEP.replace("RUNS", "[{nodes: 1, time: 20000}, {nodes: 8, time: 3000}, "
                                                      "{nodes: 8, time: 3100}, {nodes: 8, time: 3050}]")))
    assert clear.summary.state == "met" and clear.summary.next_action.code == "none"
    assert clear.summary.next_action.rank is None and clear.summary.next_action.kind == "keep"
    # 5 repeats at 8 nodes, 2 of them over 7,200 s: the median (7,100 s) meets, the interval straddles the limit,
    # so the plan is measured again as often as it was (rank 4), never kept
    straddling = analyze(make_project(KEEP.replace("RUNS", "[{nodes: 1, time: 40000}, {nodes: 8, time: 6800}, "
                                                           "{nodes: 8, time: 7000}, {nodes: 8, time: 7100}, "
                                                           "{nodes: 8, time: 7300}, {nodes: 8, time: 7500}]")))
    summary = straddling.summary
    row = summary.regimes[0]
    assert summary.state == "met" and row.straddles and (row.runs_over, row.runs) == (2, 5)
    action = summary.next_action
    assert (action.code, action.kind, action.rank) == ("plan-straddles", "measure", 4)
    assert action.text == "Measure 8 nodes 5 more times: 2 of 5 runs took longer than the 2 h limit."
    assert "plan-straddles" in {f.code for f in straddling.findings}


WEAK = """project: {title: W, goal: {time_per_run: 4 h, cost_per_run: 450 USD}}
design: {nodes: 16}
pricing: {node_hour: 30 USD}
scaling:
  mode: weak
  time_unit: s
  runs: [{nodes: 1, time: 3000}, {nodes: 2, time: 3100}, {nodes: 4, time: 3250}, {nodes: 8, time: 3400},
         {nodes: 16, time: 3700}]
"""


@worked("page_one")
def test_weak_scaling_holds_the_goals_work_for_every_candidate() -> None:
    """The plan's 16 shares for every candidate: 4 nodes do them in 16 / 4 = 4 runs, 4 × 3,250 s = 13,000 s (within
    4 h) for 4 × 30 × 13,000 / 3,600 = 433.33 USD (within 450); the plan: 3,700 s for 16 × 30 × 3,700 / 3,600 =
    493.33 USD, over the budget."""
    summary = analyze(make_project(WEAK)).summary
    assert summary.state == "missed" and summary.constraints.goal_work_shares == 16
    four = next(c for c in summary.candidates if c.kind == "measured-scale" and c.nodes == 4)
    assert four.time_s == pytest.approx(4 * 3250) and four.cost == pytest.approx(433.333333)
    assert four.money == pytest.approx(433.333333 - 493.333333)
    assert "in 4 runs one after another for the goal's work" in four.text


@worked("page_one")
def test_weak_scaling_judges_the_node_count_lever_on_the_goals_work() -> None:
    """The node count lever keeps the plan's 16 shares: 8 nodes do them in 2 runs, 2 × 3,400 s = 6,800 s for
    8 × 30 × 6,800 / 3,600 = 453.33 USD, over the 450 USD budget, so 8 nodes do not meet it (moving the shares with
    the plan, one 8-node run of 226.67 USD would have, on half the work); the lever flips below 8."""
    analysis = analyze(make_project(WEAK))
    lever = next(lever for lever in analysis.levers.flips if lever.lever == "nodes")
    assert lever.flips_at < 8 and lever.meets
    eight = next(c for c in analysis.goal.checks if c.nodes == 8)
    assert eight.time_s == pytest.approx(6800) and eight.cost == pytest.approx(453.333333) and eight.met is False


def test_a_wrong_axis_off_the_memory_wall_is_advice_of_unknown_effect() -> None:
    """The design starts, and the runs judge it (docs/methods.md#can-the-design-start)."""
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    project = make_project(text.replace("axis: distribute training", "axis: distribute data"))
    assert analyze(project).diagnosis.binding_ceiling == "compute"
    summary = analyze(project).summary
    assert summary.can_start.value and summary.blocker is None
    axis = next(c for c in summary.candidates if c.code == "wrong-axis")
    assert (axis.kind, axis.effect, axis.rank) == ("advice", "unknown", 7)


@worked("page_one")
def test_the_state_of_each_regime_and_of_the_page() -> None:
    """On demand 8 × 2,000 s / 3,600 × 10 = 44.44 USD, over 40 USD: missed; spot at 40 %, 17.78 USD: met; the page
    is met (a viable regime meets), led by spot, the cheapest viable regime that meets."""
    project = make_project("""
project: {title: T, goal: {time_per_run: 1 h, cost_per_run: 40 USD}}
pricing: {node_hour: 10 USD, regimes: {spot: {price_fraction: 0.4, preemptions_per_node_hour: 0}}}
design: {nodes: 8}
scaling: {time_unit: s, runs: [{nodes: 1, time: 14000}, {nodes: 8, time: 2000}]}
""")
    summary = analyze(project).summary
    states = {r.regime: (r.state, r.source) for r in summary.regimes}
    assert states == {"on_demand": ("missed", "measured"), "spot": ("met", "measured")}
    assert (summary.state, summary.why, summary.headline_regime) == ("met", None, "spot")
    cost = next(q for q in summary.quantities if q.name == "cost per run" and q.regime == "spot")
    assert cost.value == pytest.approx(8 * 2000 / 3600 * 4.0) and cost.source.startswith("goal.at_plan[")


def test_a_changed_design_that_cannot_start_leaves_the_page_unjudged() -> None:
    summary = analyze(make_project(SCALES.replace("AVAILABLE", "64").replace(
        "design: {nodes: 16}", "design: {nodes: 16, parallelism: {data: 3, tensor: 1, pipeline: 1}}"))).summary
    assert (summary.state, summary.why) == ("unjudged", "cannot-start")
    assert not summary.can_start.value and summary.can_start.code == "layout-size"
    assert summary.next_action.rank == 1 and summary.next_action.kind == "fix-design" and summary.blocker
    assert replace(summary.can_start, value=True).value  # a frozen record


PEAK = ("project: {title: T, goal: {time_per_run: 290 s}}\npricing: {node_hour: 1 USD}\n"
        "design: {nodes: PLAN}\nscaling: {runs: [{nodes: 1, time: 1000 s}, {nodes: 4, time: 300 s}, "
        "{nodes: 8, time: 206 s}, {nodes: 16, time: 235 s}]}\n")


@worked("page_one")
def test_a_met_page_takes_only_a_scale_cheaper_and_faster_beyond_noise() -> None:
    """Met at 16 nodes (235 s, 16 × 235 / 3,600 = 1.04 USD): 8 nodes meet too, 12 % faster (beyond the 5 % of single
    runs) for 8 × 206 / 3,600 = 0.46 USD: a way considered (rank 3, plan-past-peak). Planned at 8, the 16 nodes that
    also meet cost more and are slower: no way; the plan is kept."""
    past = analyze(make_project(PEAK.replace("PLAN", "16"))).summary
    assert past.state == "met"
    eight = past.candidates[0]
    assert (eight.kind, eight.code, eight.rank, eight.nodes) == ("measured-scale", "plan-past-peak", 3, 8)
    assert eight.money == pytest.approx(8 * 206 / 3600 - 16 * 235 / 3600)
    kept = analyze(make_project(PEAK.replace("PLAN", "8"))).summary
    assert kept.state == "met" and not any(c.kind == "measured-scale" for c in kept.candidates)


TPOT = """project:
  title: T
  workload: inference
  goal: {load: 1000 token/s, latency: {tpot_p99: 80 ms}}
baseline:
  serving: {requests_per_second: 1000 token/s, capacity_per_replica: 600 token/s}
design: {nodes: 2}
scaling:
  runs:
    - {nodes: 1, throughput: 600 token/s, p99_latency: 2 s, tpot_p99: 70 ms}
    - {nodes: 2, throughput: 1200 token/s, p99_latency: 2 s, tpot_p99: 100 ms}
"""


@worked("page_one")
def test_a_tpot_objective_has_its_own_lever() -> None:
    """2 nodes serve 1,200 of the 1,000 tokens/s needed but at a p99 TPOT of 100 ms against 80 ms: the TPOT lever
    flips it at 80 ms, 80 / 100 = 0.8 of today's (−20 %); 1 node serves 600 tokens/s, short of the load, so no scale
    meets it (docs/methods.md#constraints-applied-once)."""
    analysis = analyze(make_project(TPOT))
    summary = analysis.summary
    assert summary.state == "missed"
    lever = next(lever for lever in analysis.levers.flips if lever.lever == "tpot p99")
    assert (lever.today, lever.flips_at, lever.ratio, lever.source) == (0.1, 0.08, pytest.approx(0.8), "measured")
    objectives = {o.name: o.lever for o in summary.constraints.objectives}
    assert objectives["p99 time per output token"] == "tpot p99"
    action = summary.next_action
    assert (action.kind, action.rank, action.lever) == ("lever", 5, lever)
    assert action.text.startswith("Cut the p99 time per output token at the planned 2 nodes from 100 ms to the 80 ms "
                                  "objective (−20.0 %)")
    # the gap names the objective the goal states, never an end-to-end p99 it does not
    assert summary.gap == ("No measured scale serves the load within every latency objective: 2 nodes serve the "
                           "load at a p99 time per output token of 100 ms (25 % over the 80 ms objective).")


@worked("page_one")
def test_a_throughput_that_cannot_be_right_sets_no_peak_knee_or_way() -> None:
    """8 nodes serve 2,000 requests/s, above 1.25 × 8 replicas × 100 = 1,000: left out, so the peak is 4 nodes
    (360 requests/s, speedup 3.6), not the 8 nodes of speedup 20, and no way considered stands on them
    (docs/methods.md#constraints-applied-once)."""
    analysis = analyze(make_project("""project:
  title: T
  workload: inference
  goal: {load: 300 request/s, p99_latency: 50 ms}
baseline:
  serving: {requests_per_second: 300 request/s, capacity_per_replica: 100 request/s}
design: {nodes: 4}
scaling:
  runs:
    - {nodes: 1, throughput: 100 request/s, p99_latency: 20 ms}
    - {nodes: 2, throughput: 190 request/s, p99_latency: 21 ms}
    - {nodes: 4, throughput: 360 request/s, p99_latency: 22 ms}
    - {nodes: 8, throughput: 2000 request/s, p99_latency: 23 ms}
"""))
    assert "implausible-throughput" in {f.code for f in analysis.findings}
    assert analysis.scaling.peak_nodes == 4
    summary = analysis.summary
    assert [(e.nodes, e.quantity) for e in summary.constraints.excluded] == [(8, "throughput")]
    assert not any(c.nodes == 8 and c.kind in ("measured-scale", "fitted-scale") for c in summary.candidates)


@worked("page_one")
def test_a_services_fitted_scale_carries_its_hour_at_on_demand_prices() -> None:
    """The need is 700 × 1.1 = 770 requests/s; 1, 2 and 4 nodes serve 100, 198 and 390, and the USL fit first serves
    it at 9 nodes, where the modelled p99 (100 ms) is within 250 ms. An hour there costs 9 × 2 = 18 USD on demand,
    10 USD more than the plan's 4 × 2 = 8, and holds 9 node-hours (docs/methods.md#ways-considered)."""
    analysis = analyze(make_project("""project:
  title: T
  workload: inference
  goal: {load: 700 request/s, p99_latency: 250 ms, headroom: 0.1, cost_per_hour: 100 USD}
baseline:
  serving: {requests_per_second: 700 request/s, capacity_per_replica: 100 request/s, p99_latency: 100 ms,
            latency_slo: 250 ms}
design: {nodes: 4}
pricing: {node_hour: 2 USD}
scaling:
  runs:
    - {nodes: 1, throughput: 100 request/s}
    - {nodes: 2, throughput: 198 request/s}
    - {nodes: 4, throughput: 390 request/s}
"""))
    way = analysis.summary.candidates[0]
    assert (way.kind, way.nodes, way.regime) == ("fitted-scale", 9.0, "on_demand")
    assert way.cost == pytest.approx(18.0) and way.money == pytest.approx(10.0) and way.node_hours == 9.0


BOUND = """project: {title: T, goal: {time_per_run: 30 min}}
hardware: {network_bandwidth: 10 GB/s, network_latency: 10 us}
design: {nodes: 8}
prediction: {t_comp: 10 s, alpha: 10 us, beta: 2 s}
scaling:
  time_unit: s
  runs: [{nodes: 1, time: 3600}, {nodes: 2, time: 1850}, {nodes: 4, time: 960}, {nodes: 8, time: 510}]
"""


@worked("page_one")
def test_a_model_bound_the_runs_pass_is_never_the_next_action() -> None:
    """The α–β model says communication dominates from p_dom = 4 (10 s / p ≤ 2 s × 2(p − 1)/p from p = 3.5); the
    runs at 8 nodes take 510 s, within 30 min: the model's "at most 4 workers" is dropped (excluded_by measured),
    its findings stay, and the plan is kept (docs/methods.md#constraints-applied-once)."""
    analysis = analyze(make_project(BOUND))
    assert analysis.prediction.p_comm_dominated == 4
    summary = analysis.summary
    bounds = {c.code: c for c in summary.candidates if c.code in ("tax-binds", "comm-dominated")}
    assert {code: (c.feasible, c.excluded_by) for code, c in bounds.items()} == {
        "tax-binds": (False, "measured"), "comm-dominated": (False, "measured")}
    assert {"tax-binds", "comm-dominated"} <= {f.code for f in analysis.findings}
    assert (summary.state, summary.next_action.code) == ("met", "none")
    # the runs at 8 nodes three times slower: they no longer meet 30 min, and no scale above 4 is faster than 4
    slow = analyze(make_project(BOUND.replace("{nodes: 8, time: 510}", "{nodes: 8, time: 2000}"))).summary
    assert next(c for c in slow.candidates if c.code == "comm-dominated").feasible
