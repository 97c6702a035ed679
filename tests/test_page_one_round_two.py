"""Page 1 a reviewer signs for, round two: each rule with the
arithmetic beside its assertion, on small projects of the shapes that broke it."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from tests.conftest import INPUTS, make_project, without_word_spans

HARDWARE = "hardware: {memory_capacity: 640 GB, devices_per_node: 8, peak_compute: 1 PFLOP/s}\n"


def _codes(analysis) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.code: f.message for f in analysis.findings}


# --------------------------------------------------------------------------------------- the device's memory
def _replica_three_devices(partitioning: str, axis: str = "distribute training", *, runs: bool = True) -> str:
    # 1.45e10 × 16 B = 232 GB against one 80 GB device: fill 2.9, a perfect shard needs 3 of the node's 8 devices
    return ("project: {title: T, goal: {time_per_run: 1 h}}\n" + HARDWARE
            + "baseline: {memory: {parameters: 1.45e10}, steps: [{name: s, time: 1 s, flops: 1e14 FLOP}]}\n"
            + f"design: {{axis: {axis}, nodes: 4, slots: {{partitioning: {{choice: {partitioning}, why: w}}}}}}\n"
            + ("scaling: {runs: [{nodes: 1, time: 4 h}, {nodes: 2, time: 2.2 h}, {nodes: 4, time: 1.3 h}]}\n"
               if runs else ""))


def test_a_data_parallel_replica_three_times_a_device_is_the_memory_ceiling_not_compute() -> None:
    analysis = analyze(make_project(_replica_three_devices("split data")))
    d = analysis.diagnosis
    assert d.binding_ceiling == "memory-capacity" and d.axis == "distribute the model"
    assert d.shard_within_node and d.min_devices == 3
    # the node-level ceiling is the next wall that binds: the measured 4 h against the 1 h goal (fill 4)
    assert (d.node_ceiling, d.node_axis) == ("compute", "distribute training")
    assert d.axis_matches is False  # the node-level axis, but the design does not shard the model
    # runs were measured at 1, 2 and 4 nodes: they outrank the memory model, so its errors become one warning that
    # names the assumption, and the design is not blocked (docs/methods.md#measurements-outrank-the-memory-model)
    codes = _codes(analysis)
    assert "wrong-axis" not in codes and "replica-cannot-fit" not in codes
    assert codes["memory-model-refuted"].startswith("3 runs at 1 node, 2 nodes and 4 nodes exist")
    assert analysis.summary.blocker is None
    # without runs, the model stands: the design cannot start as declared
    analysis = analyze(make_project(_replica_three_devices("split data", runs=False)))
    codes = _codes(analysis)
    assert "wrong-axis" in codes and "at least 3 devices" in codes["wrong-axis"]
    assert "replica-cannot-fit" in codes
    summary = analysis.summary
    assert summary.blocker is not None and summary.blocker.startswith("The design cannot start as declared")
    assert "Fix: Shard the model" in summary.blocker
    assert summary.next_action.rank == 1 and summary.next_action.code == "wrong-axis"
    assert summary.model is None or "p* =" not in summary.model  # no p* of a design that cannot start


def test_the_node_level_axis_matches_once_the_design_shards_the_model() -> None:
    analysis = analyze(make_project(_replica_three_devices("[shard model, split data]")))
    d = analysis.diagnosis
    assert d.binding_ceiling == "memory-capacity" and d.axis_matches and d.design_shards_model
    assert "wrong-axis" not in _codes(analysis) and analysis.summary.blocker is None


def test_distribute_the_model_always_matches_the_memory_ceiling() -> None:
    d = analyze(make_project(_replica_three_devices("shard model", "distribute the model"))).diagnosis
    assert d.axis_matches


# ----------------------------------------------------------------------- measurements outrank the model
def test_a_measured_single_run_that_misses_its_deadline_binds_the_time_wall() -> None:
    # the model says 6 × 1e9 × 1e9 / (0.5 × 1 PFLOP/s) = 12,000 s against a 10 h deadline (fill 0.33: one machine
    # suffices), but the measured 1-node run takes 2 h against a 1 h time_per_run: it binds, from the measurement
    project = make_project("project: {title: T, goal: {time_per_run: 1 h}}\n"
                           "hardware: {peak_compute: 1 PFLOP/s}\n"
                           "baseline: {training: {parameters: 1e9, tokens: 1e9, mfu: 0.5, deadline: 10 h}}\n"
                           "scaling: {runs: [{nodes: 1, time: 2 h}]}\n")
    analysis = analyze(project)
    d = analysis.diagnosis
    time = next(w for w in d.walls if w.wall == "time")
    assert time.fill == pytest.approx(2.0) and time.binds and d.time_source == "measured"
    assert d.binding_ceiling == "compute" and d.workers_for_deadline == 2
    assert "no-deadline" not in _codes(analysis)  # a deadline that is stated is never asked for


# ---------------------------------------------------------------------------------------------- attribution
def test_io_start_up_and_the_bubble_are_causes_of_their_own() -> None:
    # reference 1 node: compute 800, comm 0, idle 0, io 100, bubble 0, wall 1,000 → start-up 100
    # 4 nodes: compute 200, comm 20, idle 10, io 90, bubble 30, wall 450 → start-up 100
    # lost time: serial 200 − 800/4 = 0; io 90 − 25 = 65; comm 20; idle 10; bubble 30; start-up 100 − 25 = 75
    # T_4 = 450, ideal 1,000/4 = 250: L = 200 = 0 + 65 + 20 + 10 + 30 + 75
    project = make_project("project: {title: T}\nscaling: {runs: [\n"
                           "  {nodes: 1, compute: 800 s, communication: 0 s, idle: 0 s, io: 100 s, time: 1000 s},\n"
                           "  {nodes: 4, compute: 200 s, communication: 20 s, idle: 10 s, io: 90 s, bubble: 30 s,"
                           " time: 450 s}]}\n")
    scaling = analyze(project).scaling
    row = scaling.rows[1]
    assert row.time_s == 450 and row.speedup == pytest.approx(1000 / 450)
    assert row.lost_time_s == {"serial": 0.0, "communication": 20.0, "imbalance": 10.0, "io": pytest.approx(65),
                               "bubble": 30.0, "startup": pytest.approx(75)}
    lost = 4 - 1000 / 450
    assert row.lost_startup == pytest.approx(lost * 75 / 200) and row.lost_io == pytest.approx(lost * 65 / 200)
    assert row.lost_bubble == pytest.approx(lost * 30 / 200)
    parts = (row.lost_serial, row.lost_io, row.lost_communication, row.lost_imbalance, row.lost_bubble,
             row.lost_startup)
    assert sum(parts) == pytest.approx(lost)
    assert scaling.knee_cause == "start-up"  # the largest lost time at the largest scale (no knee with two)
    assert "start-up" in scaling.remedy


def test_a_data_processing_job_gets_storage_remedies_not_gradients() -> None:
    project = make_project("project: {title: T, workload: data-processing}\nscaling: {runs: [\n"
                           "  {nodes: 1, compute: 100 s, communication: 0 s, idle: 0 s, io: 900 s},\n"
                           "  {nodes: 8, compute: 13 s, communication: 5 s, idle: 2 s, io: 600 s}]}\n")
    scaling = analyze(project).scaling
    assert scaling.knee_cause == "io"  # 600 − 900/8 = 487.5 s lost to I/O, the largest
    assert "storage path" in scaling.remedy and "gradient" not in scaling.remedy


def test_a_wall_shorter_than_its_parts_is_refused() -> None:
    from reportgen.errors import InputError

    with pytest.raises(InputError, match="shorter than the breakdown"):
        make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, compute: 10 s, communication: 0 s, "
                     "idle: 0 s, time: 9 s}]}\n")


def test_slower_than_serial_is_said_and_no_asymptote_is_printed() -> None:
    # 1 node 100 s, 2 nodes 150 s: S = 0.667, e = (1.5 − 0.5)/(0.5) = 2 > 1; Amdahl from two scales f = 2
    analysis = analyze(make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, time: 100 s}, "
                                    "{nodes: 2, time: 150 s}]}\n"))
    scaling = analysis.scaling
    assert scaling.rows[1].karp_flatt == pytest.approx(2.0)
    assert scaling.amdahl is not None and scaling.amdahl.serial_fraction == pytest.approx(2.0)
    assert scaling.slower_than_serial == (2,)
    assert "slower-than-serial" in _codes(analysis)


def test_amdahl_from_two_scales_reproduces_the_textbook_case() -> None:
    # Hennessy & Patterson: a speedup of 80 on 100 processors: 1/80 − 1/100 = f(1 − 1/100), f = 0.0025/0.99
    scaling = analyze(make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, time: 8000 s}, "
                                   "{nodes: 100, time: 100 s}]}\n")).scaling
    assert scaling.amdahl.serial_fraction == pytest.approx((1 / 80 - 1 / 100) / (1 - 1 / 100))
    assert scaling.amdahl.max_speedup == pytest.approx(1 / ((1 / 80 - 1 / 100) / (1 - 1 / 100)))


def test_weak_scaling_uses_gustafson() -> None:
    # Gustafson 1988: a scaled speedup of 1,016 on 1,024 processors: s = (1,024 − 1,016)/1,023 = 0.78 %
    # time form: T_1024 = 1,024 × T_ref / 1,016
    analysis = analyze(make_project("project: {title: T}\nscaling: {mode: weak, runs: [{nodes: 1, time: 1016 s}, "
                                    "{nodes: 1024, time: 1024 s}]}\n"))
    scaling = analysis.scaling
    row = scaling.rows[1]
    assert row.speedup == pytest.approx(1016) and row.efficiency == pytest.approx(1016 / 1024)
    assert row.gustafson == pytest.approx(8 / 1023) and row.karp_flatt is None
    assert scaling.gustafson.serial_fraction == pytest.approx(8 / 1023) and scaling.amdahl is None
    assert "slower-than-serial" not in _codes(analysis)


def test_a_flat_time_per_run_looks_weakly_scaled() -> None:
    analysis = analyze(make_project("project: {title: T}\nscaling: {runs: [{nodes: 1, time: 100 s}, "
                                    "{nodes: 4, time: 104 s}, {nodes: 16, time: 110 s}]}\n"))
    assert "looks-weakly-scaled" in _codes(analysis)


def test_a_wild_repeat_among_three_is_named_with_its_interval_as_low_high() -> None:
    # 112, 118 and 231 min at 4 nodes: 231 against the middle of the other two, (112 + 118)/2 = 115: 2.01× > 2
    runs = ", ".join(f"{{nodes: {n}, time: {t} min}}" for n, t in ((1, 400), (1, 404), (1, 398), (4, 112), (4, 118),
                                                                    (4, 231)))
    analysis = analyze(make_project(f"project: {{title: T}}\nscaling: {{runs: [{runs}]}}\n"))
    (repeat,) = analysis.scaling.outlier_repeats
    assert (repeat.nodes, repeat.position, repeat.value, repeat.centre) == (4, 3, 231 * 60, 115 * 60)
    codes = _codes(analysis)
    assert "outlier-repeat" in codes and "repeat #3 of 3 at 4 nodes" in codes["outlier-repeat"]
    assert "noisy" in codes and "±" not in codes["noisy"] and "[" in codes["noisy"]  # never a symmetric ±


def test_four_or_more_repeats_use_the_iqr_fence() -> None:
    # 100, 101, 102, 103, 200: quartiles 101 and 103, IQR 2, fence 103 + 6 = 109: 200 is named, 100 is not
    runs = ", ".join(f"{{nodes: 2, time: {t} s}}" for t in (100, 101, 102, 103, 200))
    scaling = analyze(make_project(f"project: {{title: T}}\nscaling: {{runs: [{{nodes: 1, time: 180 s}}, {runs}]}}\n"
                                   )).scaling
    assert [(r.position, r.value) for r in scaling.outlier_repeats] == [(5, 200.0)]


# ------------------------------------------------------------------------------------------ the decision
PAST_PEAK = ("project: {title: T, goal: {time_per_run: 200 s}}\npricing: {node_hour: 1 USD}\n"
             "design: {nodes: 16}\nscaling: {runs: [{nodes: 1, time: 1000 s}, {nodes: 4, time: 300 s}, "
             "{nodes: 8, time: 206 s}, {nodes: 16, time: 235 s}]}\n")


def test_a_plan_slower_and_dearer_than_a_smaller_measured_scale_is_past_the_peak() -> None:
    # 16 nodes: 235 s for 16 × 235 / 3,600 = 1.04 USD; 8 nodes: 206 s (12 % faster) for 0.46 USD
    analysis = analyze(make_project(PAST_PEAK))
    codes = _codes(analysis)
    assert "plan-past-peak" in codes
    assert "16 nodes take 3.92 min for 1.04 USD; 8 nodes take 3.43 min for 0.46 USD" in codes["plan-past-peak"]
    action = analysis.summary.next_action
    # no scale or lever meets the 200 s goal (8 nodes come within 3 %): out of reach, and the sentence names the
    # faster, cheaper scale (docs/methods.md#the-order)
    assert (action.code, action.rank, action.kind) == ("goal-unmet", 6, "out-of-reach")
    assert "Meanwhile, 16 nodes take 3.92 min for 1.04 USD; 8 nodes take 3.43 min for 0.46 USD: plan 8 nodes." \
        in action.text


def test_the_next_action_ranks_the_plan_above_noise_and_the_model() -> None:
    analysis = analyze(make_project(PAST_PEAK.replace("{nodes: 8, time: 206 s}",
                                                      "{nodes: 8, time: 206 s}, {nodes: 8, time: 207 s}")))
    assert analysis.summary.next_action.rank == 6  # out of reach, before noise and the model (rank 7)


def test_a_fitted_plan_that_misses_the_goal_is_named() -> None:
    # the plan (32 nodes) was not measured; the USL fit of 1/4/8/16 puts it past 235 s, missing 200 s
    # with a 250 s goal, which 8 nodes meet (206 s)
    analysis = analyze(make_project(PAST_PEAK.replace("nodes: 16}\n", "nodes: 32}\n", 1).replace("200 s", "250 s")))
    codes = _codes(analysis)
    assert "plan-misses-goal" in codes and "were not measured, and the USL fit puts a run there" in \
        codes["plan-misses-goal"] and "while 8 nodes meet it (measured)" in codes["plan-misses-goal"]


def test_one_regime_per_sentence_in_the_verdict() -> None:
    project = make_project("project: {title: T, goal: {time_per_run: 1 h, cost_per_run: 100 USD}}\n"
                           "pricing: {node_hour: 10 USD, regimes: {spot: {price_fraction: 0.4, "
                           "preemptions_per_node_hour: 0.1, restart_overhead: 10 min}}}\ndesign: {nodes: 4}\n"
                           "scaling: {runs: [{nodes: 1, time: 3 h}, {nodes: 4, time: 50 min}]}\n")
    verdict = analyze(project).summary.verdict
    # spot: n = 0.1 × 4 × 50/60 = 0.333 preemptions × 10 min = 3.33 min more: 53.3 min, 0.4 × 10 × 4 × 53.3/60
    # = 14.2 USD; on demand: 50 min and 33.3 USD
    assert "on spot, a run takes 53.3 min" in verdict and "costs 14.22 USD" in verdict
    assert "on demand, 50 min and 33.33 USD" in verdict


@pytest.mark.parametrize("written", ["400 USD", "400 USD/h", "0.11111111111111 USD/s"])
def test_a_money_field_says_its_rate_in_its_name(written: str) -> None:
    # goal.cost_per_hour: 400 USD means 400 USD per hour, as INPUT.md writes it (stored per second: 400/3,600)
    project = make_project(f"project: {{title: T, workload: inference, goal: {{load: 10 request/s, "
                           f"cost_per_hour: {written}}}}}\n")
    assert project.project.goal.cost_per_hour == pytest.approx(400 / 3600, rel=1e-9)


def test_an_amount_per_run_is_not_a_rate() -> None:
    from reportgen.errors import InputError

    with pytest.raises(InputError, match="cost_per_hour"):
        make_project("project: {title: T, workload: inference, goal: {load: 10 request/s, cost_per_hour: 4 h}}\n")


# ------------------------------------------------------------------------- shapes read as a reviewer would
SERVICE = """project:
  title: S
  workload: inference
  goal: {load: 120000 token/s, p99_latency: 1.5 s, headroom: 0.2}
hardware: {memory_capacity: 640 GB, devices_per_node: 8}
baseline: {memory: {parameters: 7e10, bytes_per_parameter: 2 B, other: 60 GB}}
design: {axis: %s, nodes: 24, slots: {partitioning: {choice: [split work, shard model], why: TP 8 in a node}}}
scaling: {runs: [{nodes: 4, throughput: 28000 token/s}, {nodes: 8, throughput: 54000 token/s}]}
"""


def test_a_service_that_shards_its_replica_within_the_node_is_cured_by_distributing_inference() -> None:
    # 7e10 × 2 B + 60 GB = 200 GB per replica on 80 GB devices: 3 of a node's 8. The goal's load with no replica
    # capacity stated: the serving wall is taken to bind, so the axis across nodes is distribute inference.
    analysis = analyze(make_project(SERVICE % "distribute inference"))
    d = analysis.diagnosis
    assert d.binding_ceiling == "memory-capacity" and (d.node_ceiling, d.node_axis) == ("serving",
                                                                                      "distribute inference")
    serving = next(w for w in d.walls if w.wall == "serving")
    assert serving.binds and serving.fill is None and "assumed to bind" in serving.note
    assert d.axis_matches and "wrong-axis" not in _codes(analysis) and analysis.summary.blocker is None


def test_a_wrong_axis_across_nodes_does_not_stop_a_design_that_shards_its_model() -> None:
    # the model is sharded within the node (it starts); only the axis across nodes is wrong: an error, not a blocker
    analysis = analyze(make_project(SERVICE % "distribute data"))
    assert "wrong-axis" in _codes(analysis) and analysis.summary.blocker is None


def test_one_run_at_one_node_asks_for_a_larger_scale_not_for_one_node() -> None:
    analysis = analyze(make_project("project: {title: T, goal: {time_per_run: 20 s}}\ndesign: {nodes: 1}\n"
                                    "scaling: {runs: [{nodes: 1, time: 28.8 s}]}\n"))
    assert analysis.summary.next_action.text.startswith("Measure a larger node count")
    assert "ideally 1 node" not in _codes(analysis)["single-scale"]


def test_a_missed_goal_without_prices_still_says_the_budget_is_not_judged() -> None:
    verdict = analyze(make_project("project: {title: T, goal: {time_per_run: 1 h, cost_per_run: 100 USD}}\n"
                                   "design: {nodes: 2}\nscaling: {runs: [{nodes: 1, time: 3 h}, {nodes: 2, "
                                   "time: 1.6 h}]}\n")).summary.verdict
    assert verdict.startswith("The goal is not met at the planned 2 nodes")
    assert "the 100 USD budget is not judged: the project gives no prices" in verdict


def test_an_interval_is_written_in_one_unit() -> None:
    runs = ", ".join(f"{{nodes: {n}, time: {t} min}}" for n, t in ((1, 400), (1, 404), (1, 398), (4, 112), (4, 118),
                                                                    (4, 231)))
    summary = analyze(make_project("project: {title: T, goal: {time_per_run: 2 h}}\ndesign: {nodes: 4}\n"
                                   f"scaling: {{runs: [{runs}]}}\n")).summary
    assert "95 % interval [1.87 h, 3.85 h]" in summary.verdict
    # the median meets the 2 h goal, but one of the plan's three repeats took 3.85 h: not a clean "met"
    assert summary.verdict.startswith("The goal would be met at the planned 4 nodes, but a repeat there is far from "
                                      "the others") and summary.state == "unjudged"
    assert "the verdict rests on the run at 4 nodes, which a finding below flags" in summary.evidence.lower()


def test_the_lost_fold_captions_name_every_cause_drawn(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from reportgen.commands.cli import main

    project = tmp_path / "pipeline.yaml"
    project.write_text("project: {title: P}\nscaling: {runs: [\n"
                       "  {nodes: 1, compute: 2400 s, communication: 0 s, idle: 0 s, time: 2600 s},\n"
                       "  {nodes: 2, compute: 1210 s, communication: 60 s, idle: 20 s, bubble: 90 s, time: 1580 s},\n"
                       "  {nodes: 4, compute: 610 s, communication: 90 s, idle: 40 s, bubble: 120 s, time: 1060 s}]}\n",
                       encoding="utf-8")
    assert main(["build", str(project), "-o", str(tmp_path / "out"), "--format", "html", "-q"]) == 0
    page = (tmp_path / "out" / "pipeline" / "report.html").read_text(encoding="utf-8")
    html = " ".join(without_word_spans(page).split())
    causes = "the serial fraction, communication, load imbalance, the pipeline bubble and start-up"
    assert f"apportioned to {causes} in proportion" in html  # the table
    assert f"the folds lost to {causes}, shared in proportion" in html  # the figure
    assert "<th class=\"n\">pipeline bubble</th><th class=\"n\">start-up</th>" in html


def test_the_results_reference_lists_every_value_of_each_vocabulary_key() -> None:
    """The enums come from the code's Literal types, so the reference cannot drift from the code."""
    from typing import get_args

    from reportgen.analysis.measured.scaling import Cause
    from reportgen.analysis.model.ceilings import Bound, CeilingName, WallName
    from reportgen.project.model import Axis, Objective, RegimeName, RunForm
    from tests.conftest import ROOT

    reference = (ROOT / "docs" / "reference" / "results.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line.split("|")[2] for line in reference.splitlines()
            if line.startswith("| `")}
    for key, vocabulary in (("diagnosis.binding_ceiling", CeilingName), ("diagnosis.steps[].bound", Bound),
                            ("diagnosis.walls[].wall", WallName), ("diagnosis.axis", Axis),
                            ("scaling.knee_cause", Cause), ("scaling.form", RunForm),
                            ("goal.at_plan[].regime", RegimeName), ("decisions[].optimize", Objective)):
        assert key in rows, key
        for value in get_args(vocabulary):
            assert f'`"{value}"`' in rows[key], (key, value)
    # the diagnosis's bound is what the code writes (compute, memory-bandwidth, io, communication), not the
    # "memory or network" the hand-written text once claimed
    assert "network" not in rows["diagnosis.steps[].bound"]


def test_four_ranks_on_two_cores_are_oversubscribed_and_page_one_says_what_to_do() -> None:
    """Contention: a 2-core machine running 4 ranks measures contention, not distribution."""
    project = make_project("""
project: {title: T, goal: {time_per_run: 10 s}}
hardware: {cores: 2}
design: {nodes: 4}
scaling:
  time_unit: s
  runs:
    - {nodes: 1, time: 34, ranks_per_node: 1}
    - {nodes: 2, time: 20, ranks_per_node: 2}
    - {nodes: 4, time: 17, ranks_per_node: 4}
""")
    analysis = analyze(project)
    found = [f for f in analysis.findings if f.code == "oversubscribed"]
    assert len(found) == 1 and found[0].severity == "warning"
    assert "4 ranks per node at 4 nodes exceed the node's 2 cores" in found[0].message
    assert "2 ranks per node" not in found[0].message  # 2 ranks on 2 cores are not oversubscribed
    # the goal is missed; the knee's loss is contention, so no design remedy ("cut the communication loss") is offered
    action = analysis.summary.next_action
    assert action.code == "goal-unmet" and action.text.startswith("Measure 4 nodes again with a core per rank")
    assert "communication" not in action.text


def test_a_run_past_the_nodes_available_is_oversubscribed() -> None:
    project = make_project("""
project: {title: T}
hardware: {nodes_available: 8}
scaling: {time_unit: s, runs: [{nodes: 1, time: 100}, {nodes: 8, time: 15}, {nodes: 16, time: 12}]}
""")
    (found,) = [f for f in analyze(project).findings if f.code == "oversubscribed"]
    assert "runs at 16 nodes exceed the 8 nodes available" in found.message


def test_p_star_is_capped_at_the_nodes_available() -> None:
    """p* and the plan are capped at what the hardware holds."""
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    free = analyze(make_project(text)).prediction
    assert free.p_star > 16  # the example's model optimum, uncapped
    capped = analyze(make_project(text.replace("hardware:\n", "hardware:\n  nodes_available: 16\n", 1))).prediction
    assert capped.max_nodes == 16 and capped.p_star <= 16 and capped.capped


def test_an_oversubscribed_runs_unshrunk_compute_is_contention_not_serial_fraction() -> None:
    """4 ranks on 2 cores: compute per run 16 s at 4 ranks where 1 rank took 40 s (ideal 10 s); the 6 s that did
    not shrink is contention there, while at 2 ranks (on 2 cores) it stays serial fraction."""
    project = make_project("""
project: {title: T}
hardware: {cores: 2}
scaling:
  time_unit: s
  runs:
    - {nodes: 1, compute: 40, communication: 0, idle: 0, ranks_per_node: 1}
    - {nodes: 2, compute: 21, communication: 1, idle: 0, ranks_per_node: 2}
    - {nodes: 4, compute: 16, communication: 1, idle: 0, ranks_per_node: 4}
""")
    scaling = analyze(project).scaling
    two, four = scaling.rows[1], scaling.rows[2]
    assert two.lost_contention is None or two.lost_contention == 0.0
    assert two.lost_serial > 0  # 21 − 40/2 = 1 s serial, 1 s communication
    # at 4: serial 16 − 10 = 6 s → contention; communication 1 s; lost folds 4 − 40/17 = 1.647 shared 6 : 1
    assert four.lost_serial == 0.0
    assert four.lost_contention == pytest.approx((4 - 40 / 17) * 6 / 7)
    assert scaling.knee_cause == "contention" or scaling.knee_nodes is None
    assert "contention" in scaling.lost_to
