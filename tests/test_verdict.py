"""The verdict a reviewer acts on: the goal at the plan per price regime, the model held against the measurements,
and the memory wall per device. Arithmetic beside each assertion; inputs/finetune-7b.yaml is the worked case."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.verdict.decisions import trade_offs
from reportgen.project.loader import load_project
from tests.conftest import INPUTS, make_project
from tests.worked import worked

SEVEN_B = INPUTS / "finetune-7b.yaml"


@pytest.fixture(scope="module")
def seven_b():
    return analyze(load_project(SEVEN_B).project)


# ------------------------------------------------------------------------------------------------ the goal at the plan
@worked("goal")
def test_the_goal_is_met_at_the_plan_in_each_regime(seven_b) -> None:
    goal = seven_b.goal
    assert goal.plan_nodes == 16 and goal.plan_measured and goal.met_at_plan is True
    on_demand, spot = goal.at_plan
    # The failure tax at 16 nodes: M_p = 6,300 h / 16 = 1,417,500 s, δ = 60 s, R = 300 s;
    # Daly's τ = √(2·60·1,417,500)·(1 + ⅓√(60/2,835,000) + …) − 60 = 13,002.3 s;
    # overhead = 60 / 13,002.3 + (6,501.1 + 300) / 1,417,500 = 0.004615 + 0.004798 = 0.0094126
    tax = 1.0094126
    assert on_demand.failure_tax == pytest.approx(0.0094126, rel=1e-4)
    # 16 nodes: 1,745 + 524 + 140 + 28 = 2,437 s (40.6 min) × 1.0094 = 2,459.9 s;
    # 55.04 × 16 × 2,437 / 3,600 × 1.0094 = 601.76 USD: the tax takes the plan just over the 600 USD budget
    assert on_demand.regime == "on_demand" and on_demand.time_s == pytest.approx(2437.0 * tax, rel=1e-6)
    assert on_demand.cost == pytest.approx(55.04 * 16 * 2437 / 3600 * tax, rel=1e-6)
    assert on_demand.time_ratio == pytest.approx(2437 * tax / 3600, rel=1e-6)
    assert on_demand.cost_ratio == pytest.approx(596.1443555 * tax / 600, rel=1e-6) and not on_demand.met
    # spot: preemptions are failures (docs/methods.md#spot-as-failures): 1/M_p = 16/22,680,000 s + 0.05 × 16/3,600 s
    # = 2.22928e-4/s, M_p = 4,485.7 s; Daly's τ for it = √(2·60·4,485.7)·(1 + ⅓√0.006688 + ⅑·0.006688) − 60 =
    # 694.2 s; overhead = 60/694.2 + 694.2/8,971.4 + 300 × 16/22,680,000 + 600 × 0.05/3,600 × 16 = 0.08643 +
    # 0.07738 + 0.00021 + 0.13333 = 0.29736: 2,437 × 1.29736 = 3,161.6 s (52.7 min), the only tax on spot
    assert spot.failure_tax == pytest.approx(0.297355, rel=1e-4)
    assert spot.time_s == pytest.approx(2437 * (1 + spot.failure_tax), rel=1e-9)
    assert spot.cost == pytest.approx(0.43 * 55.04 * 16 * spot.time_s / 3600)
    assert spot.met
    # the cheapest measured point meeting 1 h and 600 USD: 16 nodes on spot (8 nodes take 67 min)
    best = goal.cheapest_meeting
    assert (best.nodes, best.regime) == (16, "spot")
    assert goal.monthly_cost == pytest.approx(20 * spot.cost)  # 20 runs a month at the cheapest met regime


def test_a_plan_that_misses_the_goal_is_said_so_with_the_scale_that_meets_it() -> None:
    text = SEVEN_B.read_text(encoding="utf-8").replace("  nodes: 16\n", "  nodes: 8\n")
    analysis = analyze(make_project(text))
    goal = analysis.goal
    assert goal.met_at_plan is False  # 8 nodes: 3,420 + 370 + 180 + 55 = 4,025 s > 1 h
    assert all(check.meets_time is False for check in goal.at_plan)
    assert goal.cheapest_meeting.nodes == 16
    assert "plan-misses-goal" in {f.code for f in analysis.findings}


def test_an_unmeasured_plan_is_not_judged() -> None:
    text = SEVEN_B.read_text(encoding="utf-8").replace("  nodes: 16\n", "  nodes: 12\n")
    goal = analyze(make_project(text)).goal
    assert goal.met_at_plan is None and goal.at_plan == ()
    assert "12 nodes were not measured" in goal.note
    assert goal.cheapest_meeting.nodes == 16  # still offered


def test_a_cost_limit_without_prices_cannot_be_judged() -> None:
    project = make_project("""
project: {title: T, goal: {time_per_run: 1 h, cost_per_run: 100 USD}}
design: {nodes: 2}
scaling: {time_unit: min, runs: [{nodes: 1, time: 90}, {nodes: 2, time: 50}]}
""")
    analysis = analyze(project)
    assert analysis.goal.met_at_plan is None and analysis.goal.none_meets is False
    assert "goal-unmet" not in {f.code for f in analysis.findings}


# ---------------------------------------------------------------------------------------------------------- decisions
def test_decisions_apply_the_goal_and_name_their_price_regime(seven_b) -> None:
    by_name = {d.name: d for d in seven_b.decisions.decisions}
    # time alone would pick 32 nodes (38.3 min) at 55.04 × 32 × 2,296 / 3,600 = 1,123 USD, over the 600 USD goal;
    # 16 on demand is 601.76 USD with its failure tax (see above), so 16 on spot (46.5 min, 293 USD) is the fastest
    # point within the goal's limits
    urgent = by_name["urgent fix"]
    assert (urgent.nodes, urgent.regime, urgent.within_limits) == (16, "spot", True)
    assert urgent.limits_from_goal == ("time", "cost") and urgent.max_cost == 600.0
    monthly = by_name["monthly retrain"]
    assert (monthly.nodes, monthly.regime) == (16, "spot")  # 1 to 8 nodes miss the hour
    green = by_name["green default"]
    assert green.max_time_s == 7200.0 and green.limits_from_goal == ("cost",)  # its own time limit wins


def test_trade_offs_have_no_mirror_pairs_and_no_identical_points(seven_b) -> None:
    pairs = [(t.context, t.instead_of) for t in seven_b.decisions.trade_offs]
    assert len(pairs) == len({frozenset(p) for p in pairs})
    decisions = seven_b.decisions.decisions
    same = tuple(d for d in decisions if d.name == "urgent fix") * 2
    assert trade_offs(same) == ()  # one point against itself says nothing


# ------------------------------------------------------------------------------------- the model against measurements
def test_the_fit_the_communication_share_and_the_speedups_are_held_against_the_model(seven_b) -> None:
    findings = {f.code: f.message for f in seven_b.findings}
    fit = seven_b.prediction.fit
    assert fit.alpha_s / 5e-6 > 10  # 33.5 ms against the given 5 µs
    assert "fit-disagrees" in findings and "6,695×" in findings["fit-disagrees"]
    assert f"p* = {seven_b.prediction.fit_p_star} instead of 64" in findings["fit-disagrees"]
    # R(16) = (5e-6 × 15 + 2 × 0.035 × 15/16) / (26.6 / 16) = 0.0395; measured 524 / 1,745 = 0.300
    assert "16 nodes: measured 0.3, predicted 0.0395" in findings["comm-share-departs"]
    # S(16) = 26.6 / (26.6/16 + 0.0657) = 15.4; measured 27,000 / 2,437 = 11.1 < 0.75 × 15.4
    assert "16 nodes: 11.1 against 15.4" in findings["below-prediction"]


def test_a_model_that_holds_raises_no_model_warning() -> None:
    # T_comp 100 s, α 1 ms, β 0.5 s; runs built from the model itself: communication = α(p − 1) + 2β(p − 1)/p
    def comm(p: int) -> float:
        return 0.001 * (p - 1) + 2 * 0.5 * (p - 1) / p

    runs = ", ".join(f"{{nodes: {p}, compute: {100 / p}, communication: {comm(p)}, idle: 0}}" for p in (1, 2, 4, 8))
    project = make_project(f"""
project: {{title: T}}
prediction:
  t_comp: 100 s
  alpha: 1 ms
  beta: 0.5 s
  collectives: [{{nodes: 2, time: {comm(2) * 1.2} s}}, {{nodes: 8, time: {comm(8) * 1.2} s}}]
scaling: {{time_unit: s, runs: [{runs}]}}
""")
    codes = {f.code for f in analyze(project).findings}
    assert not codes & {"fit-disagrees", "comm-share-departs", "below-prediction"}


def test_p_star_at_max_nodes_is_capped_with_the_continuous_optimum(seven_b) -> None:
    prediction = seven_b.prediction
    assert prediction.p_star == 64 and prediction.capped
    # √((26.6 − 2 × 0.035) / 5e-6) = 2,303.5
    assert prediction.continuous_optimum_nodes == pytest.approx(((26.6 - 0.07) / 5e-6) ** 0.5)
    assert prediction.sensitivity_uniform  # p* = 64 whatever α and β within 0.1–10×


# ------------------------------------------------------------------------------------------ the memory wall per device
def test_the_memory_wall_is_per_device_and_the_shard_fits_in_one_node(seven_b) -> None:
    diagnosis = seven_b.diagnosis
    memory = next(w for w in diagnosis.walls if w.wall == "memory")
    # 7e9 × 16 B + 120 GB = 232 GB against one 80 GB device, not the node's 640 GB
    assert (memory.demand, memory.capacity, memory.binds) == (232e9, 80e9, True)
    assert memory.fill == pytest.approx(2.9)
    assert diagnosis.min_devices == 3 and diagnosis.min_nodes == 1 and diagnosis.shard_within_node
    # the wall binds per device: the ceiling is memory-capacity however much the node holds; the
    # axis across nodes answers the next wall that binds, and the declared one matches because the design shards
    assert diagnosis.binding_ceiling == "memory-capacity" and diagnosis.axis == "distribute the model"
    assert (diagnosis.node_ceiling, diagnosis.node_axis) == ("compute", "distribute training")
    assert diagnosis.axis_matches and diagnosis.design_shards_model
    assert "shard-within-node" in {f.code for f in seven_b.findings}


HARDWARE = "hardware: {memory_capacity: 640 GB, devices_per_node: 8%s}\n"
MEMORY = "baseline: {memory: {parameters: %s}}\n"


def test_a_shard_that_needs_more_than_one_node_binds_memory_capacity() -> None:
    # 5e10 × 16 B = 800 GB over 80 GB devices: 10 devices, more than the 8 of a node → 2 nodes
    project = make_project("project: {title: T}\n" + HARDWARE % "" + MEMORY % "5.0e10"
                           + "design: {nodes: 1}\n")
    analysis = analyze(project)
    d = analysis.diagnosis
    assert d.device_memory == 80e9 and d.min_devices == 10 and d.min_nodes == 2
    assert d.binding_ceiling == "memory-capacity" and not d.shard_within_node
    assert "too-few-nodes" in {f.code for f in analysis.findings}


def test_a_file_without_devices_reads_as_before() -> None:
    d = analyze(make_project("project: {title: T}\nhardware: {memory_capacity: 640 GB}\n" + MEMORY % "1.45e10")
                ).diagnosis
    assert d.device_memory == 640e9 and d.devices_per_node == 1  # 232 GB fits the node, as before
    assert next(w for w in d.walls if w.wall == "memory").fill == pytest.approx(232 / 640)


def test_plain_data_parallelism_of_a_replica_larger_than_a_device_is_an_error() -> None:
    project = make_project("project: {title: T}\n" + HARDWARE % "" + MEMORY % "1.45e10" + """
design: {slots: {partitioning: {choice: split data, why: w}}}
""")
    codes = {f.code: f for f in analyze(project).findings}
    assert "replica-cannot-fit" in codes and "one device" in codes["replica-cannot-fit"].message


def test_device_memory_beyond_the_node_is_refused() -> None:
    from reportgen.errors import InputError

    with pytest.raises(InputError, match=r"hardware\.device_memory"):
        make_project("project: {title: T}\n" + HARDWARE % ", device_memory: 100 GB")


# ------------------------------------------------------------------------------------------------------- the report
@pytest.fixture(scope="module")
def seven_b_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    from reportgen.pipeline import BuildOptions, build

    out = tmp_path_factory.mktemp("7b")
    build(SEVEN_B, BuildOptions(out_root=out, formats=("html",)))
    return " ".join((out / "finetune-7b" / "report.html").read_text(encoding="utf-8").split())


def _section(html: str, anchor: str) -> str:
    start = html.index(f'<section id="{anchor}"')
    return html[start:html.index("</section>", start)]


def test_the_summary_opens_with_the_plan_verdict_per_regime(seven_b_html: str) -> None:
    summary = " ".join(_section(seven_b_html, "summary").split())
    verdict = summary[summary.index('id="goal-verdict"'):]
    # 16 nodes on spot, its failures and preemptions folded in (29.74 %, test above): 2,437 × 1.29736 = 3,161.6 s =
    # 52.7 min (12 % under 1 h), 0.43 × 55.04 × 16 × 3,161.6 / 3,600 = 332.6 USD, 45 % under 600. On demand
    # 596 × 1.0094 = 602 USD, over the budget, so the goal is met in spot pricing only. One regime per sentence:
    # the spot run's time beside the spot cost
    assert ("The goal is met at the planned 16 nodes in spot pricing: on spot, a run takes 52.7 min (12 % under the "
            "1 h limit) and costs 333 USD (45 % under the 600 USD budget); on demand, 41 min and 602 USD.") in verdict
    assert ("These figures include the failure tax at 16 nodes on spot: hardware failures and preemptions "
            "(checkpoints, lost work, restarts) add 29.7 % to the run.") in verdict
    for text in ("on-demand", "41 min", "602 USD", "spot", "52.7 min", "333 USD"):
        assert text in verdict, text
    order = [summary.index(marker) for marker in ('id="goal-verdict"', 'id="next-action"', "Operating point",
                                                   "Findings")]
    assert order == sorted(order)
    assert "The evidence supports 16 nodes on spot, the cheapest measured point that meets the goal" in summary
    for code in ("fit-disagrees", "comm-share-departs", "below-prediction"):
        assert code in summary, code
    # a model-against-measurement warning fires: page 1 says the model does not describe the system, never p* alone
    assert "does not describe this system" in summary and "p* ≥ 64 (capped)" not in summary
    assert "the model must be sharded within each node (3 of its 8 devices)" in summary


def test_the_design_section_says_capped_uniform_sensitivity_and_the_fitted_optimum(seven_b_html: str) -> None:
    design = _section(seven_b_html, "design")
    assert "p* ≥ 64 (capped at max_nodes)" in design
    assert "leaves p* = 64 (the cap) in all nine cases" in design
    assert 'id="fig-sensitivity"' not in design  # nine equal cells are not drawn
    assert "the optimum would be <strong>p* = 28</strong>" in design


def test_the_measured_peak_is_told_from_the_usl_peak(seven_b_html: str) -> None:
    measure = _section(seven_b_html, "measure")
    assert "The largest measured speedup is 11.8, at 32 nodes (the largest scale measured); the USL fit peaks at " \
        "25.3 nodes" in measure


def test_sortable_tables_sort_by_value_not_by_text(seven_b_html: str) -> None:
    import re

    tables = re.findall(r'<table class="numbered sortable">.*?</table>', seven_b_html)
    assert len(tables) >= 5
    for table in tables:
        for cell in re.findall(r'<td class="n"[^>]*>', table):
            assert "data-value=" in cell, cell  # every number carries its raw value
    measured = next(t for t in tables if "Karp–Flatt" in t)
    shown = re.findall(r'<td class="n" data-value="([^"]+)">([^<]+)', measured)
    times = {text.strip(): float(value) for value, text in shown if text.strip().endswith(" h")}
    # one unit per column (7.50 h at 1 node): 2,437 s is 0.677 h, never "40.6 min" beside "7.50 h"
    assert times["0.677 h"] == 2437.0 and times["7.50 h"] == 27000.0


# ---------------------------------------------------------------------------------------- help that finds the meaning
def test_schema_and_errors_give_each_field_its_own_example() -> None:
    from reportgen.errors import InputError
    from reportgen.project.schema import project_schema

    document = project_schema()
    hardware = document["properties"]["hardware"]["properties"]
    memory = document["properties"]["baseline"]["properties"]["memory"]["properties"]
    assert hardware["network_latency"]["examples"] == ["8 us"]  # a latency, not "90 min"
    assert memory["bytes_per_parameter"]["examples"] == ["16 B"]
    with pytest.raises(InputError, match='expected time like "8 us", got "8 GB"'):
        make_project("project: {title: T}\nhardware: {network_latency: 8 GB}\n")


def test_money_has_one_precision_per_column() -> None:
    from reportgen.render.formatting import money

    column = [53.05, 1123.4]  # a cost table whose cheapest point needs cents
    assert [money(v, "USD", column) for v in column] == ["53.05 USD", "1,123.40 USD"]
    assert money(1123.4, "USD") == "1,123 USD"  # alone, an amount takes its own precision
    assert [money(v, "USD", [150.0, 0.0]) for v in (150.0, 0.0)] == ["150 USD", "0 USD"]


def test_the_appendix_shows_inputs_as_written(seven_b_html: str) -> None:
    appendix = _section(seven_b_html, "appendix")
    assert "hardware.network_latency: 5 us (= 5e-06 s)" in appendix  # whitespace collapsed by the fixture
    assert "scaling.runs[4].compute: 1745 (= 1745 s)" in appendix  # a bare number in scaling.time_unit
    assert "baseline.steps[0].time: 26.6 s baseline.steps[0].flops" in appendix  # already SI: not repeated


def test_highlighted_rows_are_keyed_in_their_captions(seven_b_html: str) -> None:
    import re

    for table in re.findall(r"<table[^>]*>.*?</table>", seven_b_html):
        if 'class="highlight"' in table and "<caption>" in table:
            caption = table[table.index("<caption>"):table.index("</caption>")]
            assert "highlight" in caption, caption


def test_stacked_bars_list_only_present_categories_and_show_shares_on_wide_ranges() -> None:
    from reportgen.figures.scaling import breakdown

    wide = analyze(make_project("""
project: {title: T}
scaling:
  time_unit: s
  runs: [{nodes: 1, compute: 1000, communication: 0, idle: 0}, {nodes: 2, compute: 500, communication: 10, idle: 0},
         {nodes: 64, compute: 16, communication: 40, idle: 0}]
""")).scaling
    job = breakdown(wide)
    # 1,000 s against 56 s: the short bars are slivers, so the shares are drawn beside; no io and no idle measured
    assert "as shares of it (right)" in job.frame.caption
    assert "compute blue" in job.frame.caption and "communication orange" in job.frame.caption
    assert "idle" not in job.frame.caption and "I/O" not in job.frame.caption
    svg = job.run()
    assert "share of wall time" in svg and ">idle<" not in svg and ">I/O<" not in svg


def test_captions_name_the_colours_their_figures_use() -> None:
    from reportgen.pipeline import analyze_loaded
    from reportgen.render.figure_families import figure_jobs

    loaded = load_project(SEVEN_B)
    analysis, _ = analyze_loaded(loaded)
    captions = {job.frame.key: job.frame.caption for job in figure_jobs(analysis, loaded.project)}
    for key in ("breakdown", "lost-folds", "speedup", "predicted-speedup", "regimes", "energy", "cost-speedup"):
        assert any(colour in captions[key] for colour in ("blue", "orange", "green", "vermilion")), key


@pytest.mark.slow
def test_sections_follow_without_forced_pages(tmp_path) -> None:
    """A forced page before every section left pages mostly empty: the problem follows the summary, its ways
    considered (which open page 2) and the contents, the diagnosis follows the problem, and only the ways considered
    and the appendix start a page of their own."""
    from pypdf import PdfReader

    from reportgen.pipeline import BuildOptions, build

    build(SEVEN_B, BuildOptions(out_root=tmp_path, formats=("pdf",)))
    pages = [page.extract_text() or "" for page in PdfReader(tmp_path / "finetune-7b" / "report.pdf").pages]
    problem = next(i for i, text in enumerate(pages) if i > 0 and "One fine-tuning pass over" in text)
    assert "Contents" in pages[problem]
    diagnosis = next(i for i, text in enumerate(pages) if i >= problem and "Diagnosis: which ceiling binds" in
                     text.split("One fine-tuning pass over", 1)[-1])
    # the hardware table ends on the problem's page or above the diagnosis on the next: nothing forced between
    before = pages[problem].rsplit("Diagnosis: which ceiling binds", 1)[0] if diagnosis == problem else \
        pages[problem] + pages[diagnosis].split("Diagnosis: which ceiling binds", 1)[0]
    assert diagnosis in (problem, problem + 1) and "network latency" in before
    appendix = [i for i, text in enumerate(pages) if "Appendix: methodology and inputs" in text and i > diagnosis]
    assert len(appendix) == 1 and pages[appendix[0]].startswith("Appendix: methodology and inputs")  # a page's top
