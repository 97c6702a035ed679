"""Evidence reconciled before it is judged (docs/methods.md#evidence-reconciled-before-it-is-judged): each rule with
hand-worked numbers, what it leaves out of the choices, and what still counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.common import plan_verdict
from reportgen.analysis.measured.reconcile import reconcile
from reportgen.commands.cli import main
from reportgen.project.carbon import Intensity
from reportgen.project.loader import load_project
from reportgen.render.results import dumps, results_document
from tests.conftest import make_project
from tests.worked import worked

TRAINING = """
project: {title: T, goal: {time_per_run: 90 min}}
hardware: {network_bandwidth: 400 GB/s, intra_node_bandwidth: 900 GB/s, devices_per_node: 8}
design: {nodes: 8}
energy: {node_power: 6 kW, wait_power: 5 kW, pue: 1.2, location: {carbon_intensity: 400 g/kWh}}
decisions: [{name: green, optimize: carbon}]
scaling:
  time_unit: s
  runs:
    - {nodes: 1, time: 20000, energy: 33 kWh}
    - {nodes: 2, time: 10400, energy: 34 kWh}
    - {nodes: 4, time: 5400, energy: 36 kWh}
    - {nodes: 8, time: 2748, energy: 6.5 kWh}
"""


@worked("reconciliation")
def test_an_energy_below_what_the_machines_draw_waiting_is_named_and_left_out() -> None:
    # 6.5 kWh for 8 nodes × 2,748 s (45.8 min) is 1.06 kW a machine; the bound is 0.5 × 8 × 5 kW × 2,748 s =
    # 54.96 MJ = 15.27 kWh. The other runs: 1 node 20,000 s draws 5.94 kW (bounds 13.9 and 40 kWh), plausible
    project = make_project(TRAINING)
    found = reconcile(project, {}).energies
    assert [(e.nodes, e.machines) for e in found] == [(8, 8)]
    assert found[0].low_j == pytest.approx(0.5 * 8 * 5000 * 2748)
    assert found[0].power_per_machine_w == pytest.approx(6.5 * 3.6e6 / 2748 / 8)
    analysis = analyze(project, intensity=Intensity(400.0, "given"))
    finding = next(f for f in analysis.findings if f.code == "implausible-energy")
    assert "the run at 8 nodes measured 6.50 kWh (1.06 kW a machine), below 15.3 kWh, half of" in finding.message
    assert finding.severity == "warning"
    # marked, kept in its table, and no choice rests on it: 8 nodes had the least energy, 1 node is next
    row8 = next(r for r in analysis.scaling.rows if r.nodes == 8)
    assert row8.excluded == ("energy",) and row8.time_s == 2748
    energy8 = next(r for r in analysis.energy.rows if r.nodes == 8)
    assert energy8.excluded and energy8.energy_kwh == pytest.approx(6.5 * 1.2)
    assert analysis.energy.carbon_optimal_nodes == 1
    # the carbon decision within the goal's 90 min: 4 nodes (5,400 s, 36 kWh), not 8 with its impossible 6.5 kWh
    assert analysis.decisions.decisions[0].nodes == 4
    # its time still counts: the goal at the plan is judged from it (2,748 s ≤ 90 min)
    assert analysis.goal.met_at_plan is True


def test_a_goal_verdict_that_does_not_read_energy_is_not_led_by_the_meter() -> None:
    """A time goal's verdict never reads energy; a carbon decision does (docs/methods.md#implausible-energy): with
    one, the meter that cannot be right is what page 1 rests on (rank 2); without one, it is advice (rank 7)."""
    judged = analyze(make_project(TRAINING), intensity=Intensity(400.0, "given"))
    assert judged.goal is not None
    assert next(f for f in judged.findings if f.code == "implausible-energy")
    assert (judged.summary.next_action.code, judged.summary.next_action.rank) == ("implausible-energy", 2)
    without = analyze(make_project(TRAINING.replace("decisions: [{name: green, optimize: carbon}]",
                                                    "decisions: [{name: fast, optimize: time}]")),
                      intensity=Intensity(400.0, "given"))
    energy = next(c for c in without.summary.candidates if c.code == "implausible-energy")
    assert (energy.kind, energy.rank, energy.effect) == ("advice", 7, "none")
    goalless = analyze(make_project(TRAINING.replace("goal: {time_per_run: 90 min}", "goal: {text: fast}")),
                       intensity=Intensity(400.0, "given"))
    assert goalless.goal is None
    assert (goalless.summary.next_action.code, goalless.summary.next_action.rank) == ("implausible-energy", 2)


def test_an_energy_above_what_the_machines_can_draw_is_named() -> None:
    # 2 nodes × 10,400 s flat out with the PUE: 1.5 × 1.2 × 2 × 6 kW × 10,400 s = 62.4 kWh; 70 kWh is above it
    project = make_project(TRAINING.replace("energy: 34 kWh", "energy: 70 kWh"))
    found = reconcile(project, {}).energies
    assert [e.nodes for e in found] == [2, 8]
    assert found[0].high_j == pytest.approx(1.5 * 1.2 * 2 * 6000 * 10400) and not found[0].below


def test_without_powers_no_energy_is_judged() -> None:
    project = make_project(TRAINING.replace("node_power: 6 kW, wait_power: 5 kW, ", ""))
    assert reconcile(project, {}).energies == ()


def test_the_machines_measure_recorded_are_the_machines_held_against(tmp_path: Path) -> None:
    # measure --machines 1 of a 4-rank run: one machine drew the energy, so the bound is one machine's
    (tmp_path / "runs.csv").write_text(
        "nodes,time [s],energy [kWh]\n1,20000,33\n"
        "# reportgen measure: 4 nodes; energy is CodeCarbon's estimate for this machine, all 4 ranks on this one "
        "machine\n4,5400,8\n", encoding="utf-8")
    text = TRAINING.split("scaling:")[0] + "scaling: {file: runs.csv}\n"
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    loaded = load_project(tmp_path / "p.yaml")
    assert loaded.sources[4].machines == 1
    # one machine × 5,400 s: bounds 0.5 × 5 kW × 5,400 s = 3.75 kWh and 1.5 × 1.2 × 6 kW × 5,400 s = 16.2 kWh:
    # 8 kWh is plausible for one machine (and would be implausible for four: below 15 kWh)
    assert reconcile(loaded.project, loaded.sources).energies == ()
    assert [e.nodes for e in reconcile(loaded.project, {}).energies] == [4]


COLLECTIVES = """
project: {title: T}
hardware: {network_bandwidth: 400 GB/s, intra_node_bandwidth: 900 GB/s, network_latency: 8 us}
prediction:
  t_comp: 5 s
  message_bytes: 2.6 GB
  use_fit: true
  collectives:
    - {nodes: 2, time: 13.1 ms}
    - {nodes: 4, time: 19.6 ms}
    - {nodes: 8, time: 5.66 ms}
    - {nodes: 16, time: 24.5 ms}
"""


def test_a_collective_faster_than_its_link_is_named_and_left_out_of_the_fit() -> None:
    # 2.6 GB in 5.66 ms is 459 GB/s, above 1.05 × 400 GB/s = 420 GB/s; 2.6 GB in 13.1 ms is 198 GB/s, plausible
    project = make_project(COLLECTIVES)
    found = reconcile(project, {}).collectives
    assert [(c.index, c.nodes) for c in found] == [(2, 8)]
    assert found[0].bandwidth_b_per_s == pytest.approx(2.6e9 / 5.66e-3) and found[0].bytes_from_message
    analysis = analyze(project)
    message = next(f.message for f in analysis.findings if f.code == "implausible-collective")
    assert "459 GB/s through a 400 GB/s network link" in message and "either it or the time" in message
    # the fit is the one of the three others: t = α(p − 1) + 2β(p − 1)/p, exact on none of them, least squares
    without = make_project(COLLECTIVES.replace("    - {nodes: 8, time: 5.66 ms}\n", ""))
    assert analysis.prediction.fit == analyze(without).prediction.fit
    assert analysis.scaling is None  # nothing measured: the collective's scale has no row to mark


def test_within_one_node_the_link_is_the_intra_node_one() -> None:
    # 2.6 GB in 3 ms within one node: 867 GB/s, within 1.05 × 900 GB/s; in 2.5 ms, 1,040 GB/s: above it
    fine = make_project(COLLECTIVES.replace("- {nodes: 2, time: 13.1 ms}", "- {nodes: 1, time: 3 ms}"))
    assert [c.nodes for c in reconcile(fine, {}).collectives] == [8]
    fast = make_project(COLLECTIVES.replace("- {nodes: 2, time: 13.1 ms}", "- {nodes: 1, time: 2.5 ms}"))
    assert [(c.nodes, c.within_node) for c in reconcile(fast, {}).collectives] == [(1, True), (8, False)]


SERVICE = """
project: {title: S, workload: inference, goal: {load: 2000 request/s, p99_latency: 50 ms}}
hardware: {devices_per_node: 8}
baseline: {serving: {requests_per_second: 2000 request/s, capacity_per_replica: 100 request/s}}
design: {nodes: 4}
scaling:
  runs:
    - {nodes: 1, throughput: 700 request/s, p99_latency: 30 ms}
    - {nodes: 2, throughput: 1400 request/s, p99_latency: 31 ms}
    - {nodes: 4, throughput: 5000 request/s, p99_latency: 33 ms}
"""


def test_a_throughput_above_what_the_replicas_serve_is_named_and_left_out() -> None:
    # 4 nodes × 8 replicas × 100 request/s = 3,200 request/s; × 1.25 = 4,000: 5,000 cannot be right
    project = make_project(SERVICE)
    found = reconcile(project, {}).throughputs
    assert [(t.nodes, t.replicas, t.limit_per_s) for t in found] == [(4, 32, 4000.0)]
    analysis = analyze(project)
    assert any(f.code == "implausible-throughput" and "5,000 requests/s" in f.message for f in analysis.findings)
    row = next(r for r in analysis.serving.rows if r.nodes == 4)
    assert row.excluded and row.capacity_rps == 5000 and row.serves is None  # shown, but not a choice
    assert analysis.serving.nodes_to_serve != 4
    # nor a point of the USL fit the serving choices rest on: two plausible scales are too few for one
    assert analysis.scaling.usl is None and analysis.serving.nodes_to_serve is None
    assert all(p.nodes != 4 or not p.met for p in analysis.serving.points)
    # planned at 8 nodes, unmeasured: the 1 and 2 nodes are the usable scales, the 4 nodes is not counted toward a fit
    beyond = analyze(make_project(SERVICE.replace("design: {nodes: 4}", "design: {nodes: 8}")))
    assert beyond.serving.usable_scales == 2
    assert beyond.serving.note == ("the planned 8 nodes were not measured and 2 measured scales (1 more cannot be "
                                   "right) do not support a fit (three are needed)")


def test_the_plan_verdict_agrees_with_its_rows() -> None:
    # docs/methods.md#plan-verdict, each case by hand: (viable, met) per regime
    assert plan_verdict([]) is None
    assert plan_verdict([(True, False), (False, False), (True, True)]) is True
    assert plan_verdict([(True, False), (False, None)]) is False  # the non-viable one does not hold it open
    assert plan_verdict([(False, False)]) is False  # no viable regime: the plan cannot meet the goal
    assert plan_verdict([(True, False), (True, None)]) is None


# ----------------------------------------------------------------------------------------- serving files
VLLM = {"date": "20261120-101500", "backend": "openai", "num_prompts": 1000, "request_rate": 12.0,
        "completed": 300, "failed": 700, "duration": 83.3, "request_throughput": 3.6, "output_throughput": 720.0,
        "p99_ttft_ms": 0, "p99_tpot_ms": 0, "p99_e2el_ms": 4100.0}


def test_vllm_placeholders_are_not_measurements_and_failures_are_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "result.json").write_text(json.dumps(VLLM), encoding="utf-8")
    (tmp_path / "s.yaml").write_text(
        "project: {title: S, workload: inference, goal: {load: 3 request/s, latency: {ttft_p99: 2 s, p99: 5 s}}}\n"
        "design: {nodes: 2}\nscaling: {file: runs.csv}\n", encoding="utf-8")
    assert main(["ingest", "serving", str(tmp_path / "result.json"), "--nodes", "2", "--project",
                 str(tmp_path / "s.yaml")]) == 0
    err = capsys.readouterr().err
    assert "note [placeholder]: the file gives p99_ttft_ms as 0" in err
    assert "warning [failed-requests]: 700 of 1,000 requests failed, 300 completed" in err
    # 3.6 of the 12 requests/s asked for is 30 %, below 90 %
    assert "warning [rate-not-reached]: the load test asked for 12 requests/s and reached 3.6 (30%)" in err
    csv = (tmp_path / "runs.csv").read_text(encoding="utf-8")
    assert "ttft_p99" not in csv  # not measured: no column, never a 0
    assert "# reportgen load test: requested=12 achieved=3.6 completed=300 failed=700 sent=1000" in csv
    loaded = load_project(tmp_path / "s.yaml")
    analysis = analyze(loaded.project, sources=loaded.sources)
    codes = [f.code for f in analysis.findings]
    assert "failed-requests" in codes and "rate-not-reached" in codes  # build raises what ingest printed
    row = analysis.serving.rows[0]
    assert row.ttft_p99_s is None and row.serves is None  # the TTFT objective is not known, never "met"
    document = json.loads(dumps(results_document(loaded, analysis)))
    assert document["goal"]["met_at_plan"] is None


def test_a_streaming_run_with_every_request_done_raises_nothing(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    clean = {**VLLM, "completed": 1000, "failed": 0, "request_rate": "inf", "request_throughput": 10.7,
             "p99_ttft_ms": 1150.4, "p99_tpot_ms": 88.2}
    (tmp_path / "result.json").write_text(json.dumps(clean), encoding="utf-8")
    assert main(["ingest", "serving", str(tmp_path / "result.json"), "--nodes", "2", "--format", "json"]) == 0
    out = capsys.readouterr()
    document = json.loads(out.out)
    assert document["findings"] == [] and document["ttft_p99_s"] == pytest.approx(1.1504)
    assert document["requested_per_s"] is None  # "inf": as fast as it can, no rate to reach
    assert "warning" not in out.err


SUMMARY = """============ Serving Benchmark Result ============
Successful requests:                     300
Failed requests:                         700
Request rate configured (RPS):           12.00
Benchmark duration (s):                  83.30
Request throughput (req/s):              3.60
Output token throughput (tok/s):         720.00
---------------Time to First Token----------------
P99 TTFT (ms):                           0.00
-----Time per Output Token (excl. 1st token)------
P99 TPOT (ms):                           0.00
==================================================
"""


def test_the_printed_summary_says_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "summary.txt").write_text(SUMMARY, encoding="utf-8")
    assert main(["ingest", "serving", str(tmp_path / "summary.txt"), "--nodes", "1", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["completed"], document["failed"], document["sent"]) == (300, 700, 1000)
    assert document["ttft_p99_s"] is None and document["tpot_p99_s"] is None
    assert [f["code"] for f in document["findings"]] == ["failed-requests", "rate-not-reached"]


def test_a_summary_of_blank_lines_reads_in_linear_time(tmp_path: Path) -> None:
    # a \\s* at a line's start ran on through every blank line after it: 64 KB of them took a minute
    from reportgen.ingest import serving_bench

    text = "============ Serving Benchmark Result ============\n" + "\n" * 2_000_000 + \
        "Request throughput (req/s): 3.6\n"
    (tmp_path / "blank.txt").write_text(text, encoding="utf-8")
    import time

    started = time.process_time()
    benchmark = serving_bench.read_serving(tmp_path / "blank.txt")
    assert benchmark.requests_per_s == 3.6
    assert time.process_time() - started < 5  # a bound on the algorithm, far above its 0.2 s here


# ------------------------------------------------------------------ the time wall, weak scaling (by hand)
FROM_FOUR = """
project: {title: J, goal: {time_per_run: 4 h}}
design: {nodes: 16}
baseline: {steps: [{name: step, time: 1 s, flops: 1e15 FLOP, bytes: 1e12 B}]}
hardware: {peak_compute: 1 PFLOP/s, memory_bandwidth: 2 TB/s}
scaling: {time_unit: h, runs: [{nodes: 4, time: 9.4}, {nodes: 8, time: 4.9}, {nodes: 16, time: 2.7}]}
"""


def test_the_smallest_measured_scale_decides_the_time_wall() -> None:
    # docs/methods.md#the-time-wall-from-the-smallest-measured-scale: 4 nodes take 9.4 h, so one machine takes at
    # least 4 × 9.4 = 37.6 h against 4 h: fill 9.4, the wall binds; never "a single machine suffices"
    analysis = analyze(make_project(FROM_FOUR))
    wall = next(w for w in analysis.diagnosis.walls if w.wall == "time")
    assert wall.binds and wall.fill == pytest.approx(4 * 9.4 / 4)
    assert analysis.diagnosis.time_reference_nodes == 4 and analysis.diagnosis.binding_ceiling != "none"
    assert "single machine suffices" not in (analysis.summary.diagnosis or "")


def test_a_reference_above_one_node_that_meets_the_goal_says_only_its_scale_suffices() -> None:
    # 4 nodes in 0.9 h: one machine at least 3.6 h, under the 4 h limit: only the 4 nodes are shown to suffice
    analysis = analyze(make_project(FROM_FOUR.replace("time: 9.4}", "time: 0.9}").replace("time: 4.9}", "time: 0.5}")
                                    .replace("time: 2.7}", "time: 0.3}")))
    text = analysis.summary.diagnosis or ""
    assert "single machine suffices" not in text
    assert "No ceiling binds at the smallest measured scale: 4 nodes suffice" in text


WEAK = """
project: {title: W, goal: {time_per_run: 4 h, cost_per_run: 2000 USD}}
design: {nodes: 16}
pricing: {node_hour: 30 USD}
decisions: [{name: cheap, optimize: cost}]
scaling:
  mode: weak
  time_unit: s
  runs: [{nodes: 1, time: 3000}, {nodes: 2, time: 3100}, {nodes: 4, time: 3250}, {nodes: 8, time: 3400},
         {nodes: 16, time: 3700}]
"""


def test_weak_scaling_compares_the_goals_work() -> None:
    # docs/methods.md#weak-scaling-compares-equal-work: a run at p nodes does p of the plan's 16 shares, so the
    # goal's work takes 16/p runs: 1 node 16 × 3,000 s = 13.3 h (misses 4 h), 2 nodes 8 × 3,100 = 6.9 h (misses),
    # 4 nodes 4 × 3,250 s = 3.61 h for 4 × 30 × 13,000 / 3,600 = 433.33 USD (meets, the cheapest), 16 nodes
    # 3,700 s for 493.33 USD
    analysis = analyze(make_project(WEAK))
    goal = analysis.goal
    assert goal.met_at_plan is True
    assert goal.cheapest_meeting.nodes == 4
    assert goal.cheapest_meeting.time_s == pytest.approx(4 * 3250)
    assert goal.cheapest_meeting.cost == pytest.approx(433.3333333)
    assert analysis.decisions.decisions[0].nodes == 4  # never "1 node": a run that does 1/16 of the work
    # one machine for the goal's work: 16 × 3,000 s against 4 h, fill 3.33: the time wall binds
    wall = next(w for w in analysis.diagnosis.walls if w.wall == "time")
    assert wall.fill == pytest.approx(16 * 3000 / 14400) and wall.binds
    assert "single machine" not in (analysis.summary.diagnosis or "")
    assert "in 4 runs one after another" in analysis.summary.optimum.text
    assert "cost-optimal 1 node" not in analysis.summary.optimum.text
    assert analysis.past_peak is None  # 8 nodes do the goal's work in 2 × 3,400 s: slower than 16's 3,700 s


@worked("past_peak")
def test_a_weak_plan_past_a_faster_scale_compares_equal_work() -> None:
    # 8 nodes take 1,400 s for 8 shares; the plan's 16 shares take 2 × 1,400 = 2,800 s there, against 16 nodes'
    # 3,700 s: 8 nodes do the goal's work faster beyond 5 %, so the plan is past the peak
    analysis = analyze(make_project(WEAK.replace("{nodes: 8, time: 3400}", "{nodes: 8, time: 1400}")))
    assert analysis.past_peak is not None and analysis.past_peak.better_nodes == 8
    assert analysis.past_peak.better_time_s == pytest.approx(2800)


# ------------------------------------------------------------------------------- spot as failures (by hand)
SPOT = """
project: {title: S, goal: {time_per_run: 3 h}}
design: {nodes: 8}
scaling: {time_unit: s, runs: [{nodes: 4, time: 14000}, {nodes: 8, time: 7040}]}
pricing:
  node_hour: 55 USD
  regimes: {spot: {price_fraction: 0.43, preemptions_per_node_hour: 0.02, restart_overhead: 6 min}}
reliability: {node_mtbf: 6300 h, checkpoint_cost: 45 s, restart_cost: 4 min, checkpoint_interval: 20 min}
"""


def test_on_spot_preemptions_are_failures() -> None:
    # docs/methods.md#spot-as-failures: 1/M_p = 8/6,300 h + 0.02 × 8 per hour; at the declared 20 min:
    # 45/1,200 + 1,200/(2 M_p) + 240 × 8/(6,300 × 3,600) + 360 × (0.02/3,600) × 8 = 8.05 %
    from reportgen.analysis.model.reliability import spot_tax

    analysis = analyze(make_project(SPOT))
    m_p = 1 / (8 / (6300 * 3600) + 0.02 / 3600 * 8)
    expected = 45 / 1200 + 1200 / (2 * m_p) + 240 * 8 / (6300 * 3600) + 360 * 0.02 / 3600 * 8
    assert expected == pytest.approx(0.08046, abs=1e-5)
    spot = analysis.cost.regimes["spot"]
    row = next(r for r in spot.rows if r.nodes == 8)
    assert row.failure_overhead_fraction == pytest.approx(expected)
    assert row.time_s == pytest.approx(7040 * (1 + expected))  # the whole tax, once
    check = next(c for c in analysis.goal.at_plan if c.regime == "spot")
    assert check.time_s == pytest.approx(7040 * (1 + expected)) and check.failure_tax == pytest.approx(expected)
    # on demand: hardware failures only, at the declared interval: 45/1,200 + (600 + 240)/(6,300 h / 8)
    demand = next(c for c in analysis.goal.at_plan if c.regime == "on_demand")
    assert demand.failure_tax == pytest.approx(45 / 1200 + (600 + 240) / (6300 * 3600 / 8))
    # Daly's interval for spot is for the combined M_p
    tax = spot_tax(make_project(SPOT).reliability, 8, 0.02, 360)
    assert tax.system_mtbf_s == pytest.approx(m_p) and tax.optimal_interval_s < 3600
    assert not any(f.code == "spot-model-out-of-range" for f in analysis.findings)


def test_a_spot_model_past_half_the_run_says_so() -> None:
    # 2 preemptions a node-hour on 8 nodes: M_p ≈ 225 s; the overhead is far past 0.5
    analysis = analyze(make_project(SPOT.replace("preemptions_per_node_hour: 0.02", "preemptions_per_node_hour: 2")))
    finding = next(f for f in analysis.findings if f.code == "spot-model-out-of-range")
    assert "2.00 a node-hour" in finding.message and "1 h 57 min" in finding.message


def test_without_reliability_spot_keeps_the_first_order_time() -> None:
    analysis = analyze(make_project(SPOT.split("reliability:")[0]))
    row = next(r for r in analysis.cost.regimes["spot"].rows if r.nodes == 8)
    # n = 0.02 × 8 × 7,040 / 3,600 = 0.3129 preemptions, each 6 min
    assert row.time_s == pytest.approx(7040 + 0.02 * 8 * 7040 / 3600 * 360)
    assert row.failure_overhead_fraction is None


def test_a_spot_model_past_half_the_run_without_preemptions_says_so() -> None:
    # found by the fuzzer: no preemptions, but a node MTBF of 1 s: the hardware failures alone take the run
    analysis = analyze(make_project(SPOT.replace("preemptions_per_node_hour: 0.02", "preemptions_per_node_hour: 0")
                                    .replace("node_mtbf: 6300 h", "node_mtbf: 1 s")))
    finding = next(f for f in analysis.findings if f.code == "spot-model-out-of-range")
    assert "(0 a node-hour)" in finding.message


@pytest.mark.parametrize(("text", "said"), [
    ('{"request_throughput": 3.6, "request_throughput": 9.9}', 'the key "request_throughput" appears twice'),
    ('{"request_throughput": 1' + "0" * 400 + "}", "past any float's range"),
])
def test_a_hostile_vllm_result_is_one_located_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                   said: str) -> None:
    # duplicate keys (the last would win silently) and a 400-digit integer (a traceback before)
    (tmp_path / "result.json").write_text(text, encoding="utf-8")
    assert main(["ingest", "serving", str(tmp_path / "result.json"), "--nodes", "1"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and err.count("\n") == 1
