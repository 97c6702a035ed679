"""Diagnosis: roofline, walls, ceiling precedence, axis check. Arithmetic is written beside each assertion."""

from __future__ import annotations

import math

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.common import ceil_ratio
from reportgen.analysis.measured.diagnosis import diagnose
from reportgen.analysis.verdict.checklist import interactive_tax
from tests.conftest import make_project
from tests.worked import worked

HW = """
hardware:
  peak_compute: 100 TFLOP/s      # π = 1e14
  memory_bandwidth: 1 TB/s       # β = 1e12 → ridge 100 FLOP/B
  memory_capacity: 80 GB
  network_bandwidth: 10 GB/s
  network_latency: 10 us
  io_bandwidth: 1 GB/s
  storage: 1 TB
"""


@worked("diagnosis")
def test_roofline_of_a_step() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline:
  steps:
    - {name: matmul, time: 2 s, flops: 1.0e14 FLOP, bytes: 2.0e11 B}
    - {name: stream, time: 3 s, flops: 1.0e12 FLOP, bytes: 1.0e12 B}
""")
    d = diagnose(project)
    assert d.ridge_intensity == 100.0  # 1e14 / 1e12
    matmul, stream = d.steps
    assert matmul.intensity == 500.0  # 1e14 / 2e11
    assert matmul.floors_s["compute"] == 1.0 and matmul.floors_s["memory"] == 0.2
    assert matmul.bound == "compute"
    assert matmul.roof_efficiency == pytest.approx(0.5)  # (1e14 / 2 s) / min(1e14, 1e12 × 500)
    assert stream.intensity == 1.0 and stream.bound == "memory-bandwidth"  # I = 1 < I* = 100
    assert stream.roof_efficiency == pytest.approx((1e12 / 3) / 1e12)  # roof at I = 1 is β·I = 1e12
    assert stream.dominant and not matmul.dominant  # the longest measured time
    assert d.binding_ceiling == "memory-bandwidth"  # no deadline: time wall assumed, dominant step's bound
    assert d.axis == "distribute the model"


def test_bound_ties_follow_the_listed_order() -> None:
    # W/π = 1e14/1e14 = 1 s and Q/β = 1e12/1e12 = 1 s: a tie goes to compute (listed first).
    project = make_project("project: {title: T}" + HW + """
baseline: {steps: [{name: s, time: 2 s, flops: 1.0e14 FLOP, bytes: 1.0e12 B}]}
""")
    assert diagnose(project).steps[0].bound == "compute"


def test_intensity_edge_cases_and_network_floor() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline:
  steps:
    - {name: no-traffic, time: 1 s, flops: 1.0e9 FLOP, bytes: 0 B}
    - {name: nothing, time: 1 s, flops: 0 FLOP, bytes: 0 B}
    - {name: exchange, time: 1 s, net_bytes: 1.0e9 B, flops: 1.0e12 FLOP}
""")
    steps = diagnose(project).steps
    assert steps[0].intensity == math.inf
    assert steps[1].intensity is None
    # t_network = α + Q_net/β_net = 10e-6 + 1e9/1e10 = 0.10001 s > W/π = 0.01 s
    assert steps[2].floors_s["network"] == pytest.approx(0.10001)
    assert steps[2].bound == "communication"
    assert steps[0].dominant and not steps[1].dominant  # equal times: the first listed dominates


def test_memory_wall_binds_first_and_the_axis_check_fails() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline:
  memory: {parameters: 7.0e9, activations: 20 GB}     # 7e9 × 16 B + 20 GB = 132 GB > 80 GB
  training: {parameters: 7.0e9, tokens: 1.0e6, mfu: 0.5, deadline: 1 h}
design: {axis: distribute training}
""")
    d = diagnose(project)
    memory = d.walls[0]
    assert (memory.wall, memory.fill, memory.binds) == ("memory", pytest.approx(132e9 / 80e9), True)
    assert d.min_devices == 2  # ceil(132 / 80)
    assert d.binding_ceiling == "memory-capacity" and d.axis == "distribute the model"
    # time = 6 × 7e9 × 1e6 / (0.5 × 1e14) = 840 s < 3600 s: the time wall does not bind
    assert d.training_time_s == pytest.approx(840.0)
    assert d.workers_for_deadline == 1
    assert d.secondary_ceilings == ()
    assert d.declared_axis == "distribute training" and d.axis_matches is False
    codes = {f.code: f for f in analyze(project).findings}
    assert codes["wrong-axis"].severity == "error"
    assert "never capacity" in codes["wrong-axis"].message


def test_secondary_ceiling_is_the_next_binding_wall() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline:
  memory: {parameters: 7.0e9}
  training: {parameters: 7.0e9, tokens: 1.0e8, mfu: 0.5, deadline: 1 h}   # 6×7e9×1e8/5e13 = 84,000 s
design: {axis: distribute the model}
""")
    d = diagnose(project)
    assert d.binding_ceiling == "memory-capacity"
    assert [(c.ceiling, c.axis) for c in d.secondary_ceilings] == [("compute", "distribute training")]
    assert d.workers_for_deadline == 24  # ceil(84000 / 3600) = ceil(23.33)
    assert d.axis_matches is True


def test_no_wall_binds_means_single_machine() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline:
  memory: {parameters: 1.0e9}                        # 16 GB of 80 GB
  training: {parameters: 1.0e9, tokens: 1.0e6, mfu: 0.5, deadline: 1 h}   # 6e15/5e13 = 120 s
""")
    d = diagnose(project)
    assert d.binding_ceiling == "none" and d.axis == "single machine"


def test_no_walls_and_no_steps_means_no_diagnosis() -> None:
    assert diagnose(make_project("project: {title: T}" + HW)) is None


def test_serving_wall_and_inference_axis() -> None:
    project = make_project("""
project: {title: T, workload: inference}
baseline:
  serving: {requests_per_second: 50000 request/s, capacity_per_replica: 2000 request/s,
            p99_latency: 35 ms, latency_slo: 20 ms}
""")
    d = diagnose(project)
    serving = next(w for w in d.walls if w.wall == "serving")
    assert serving.fill == pytest.approx(25.0)  # max(50000/2000, 35/20)
    assert d.replicas_needed == 25
    assert d.binding_ceiling == "serving" and d.axis == "distribute inference"


def test_compute_ceiling_of_an_inference_workload_distributes_inference() -> None:
    project = make_project("project: {title: T, workload: inference}" + HW + """
baseline: {steps: [{name: s, time: 2 s, flops: 1.0e14 FLOP, bytes: 1.0e10 B}]}
""")
    assert diagnose(project).axis == "distribute inference"


def test_time_wall_from_goal_and_the_single_node_run() -> None:
    project = make_project("""
project: {title: T, goal: {time_per_run: 10 min}}
scaling: {runs: [{nodes: 1, time: 30 min}, {nodes: 4, time: 9 min}]}
""")
    d = analyze(project).diagnosis
    time_wall = next(w for w in d.walls if w.wall == "time")
    assert time_wall.fill == pytest.approx(3.0) and time_wall.binds
    assert d.binding_ceiling == "compute"


def test_missing_deadline_assumes_the_time_wall_binds() -> None:
    project = make_project("project: {title: T}" + HW + """
baseline: {steps: [{name: s, time: 2 s, flops: 1.0e14 FLOP, bytes: 1.0e10 B}]}
""")
    d = diagnose(project)
    assert [(w.wall, w.fill, w.binds) for w in d.walls] == [("time", None, True)]
    assert "no-deadline" in {f.code for f in analyze(project).findings}


@pytest.mark.parametrize(("numerator", "denominator", "expected"), [
    (0.020, 0.0004, 50),  # 20 ms over 0.4 ms is exactly 50 (0.02/0.0004 = 50.00000000000001 in floats)
    (0.0201, 0.0004, 51),
    (132e9, 80e9, 2),
    (160e9, 80e9, 2),
])
def test_ceil_ratio_is_immune_to_rounding(numerator: float, denominator: float, expected: int) -> None:
    assert ceil_ratio(numerator, denominator) == expected


@worked("checklist")
def test_interactive_tax() -> None:
    tax = interactive_tax(6, 0.4e-3, 20e-3)
    assert tax.tax_s == pytest.approx(2.4e-3)  # 6 × 0.4 ms
    assert tax.budget_left_s == pytest.approx(17.6e-3)
    assert tax.exhausting_fanout == 50  # ceil(20 / 0.4), not 51
    assert not tax.binds
    assert len(tax.budget_curve) == 80 and tax.budget_curve[49][1] == pytest.approx(0.0, abs=1e-15)
    assert interactive_tax(50, 0.4e-3, 20e-3).binds  # budget exactly spent


def test_tax_binds_raises_loop_back_warning() -> None:
    project = make_project("""
project: {title: T}
checklist: {mode: interactive, tax: {fanout: 60, hop_latency: 0.4 ms, latency_slo: 20 ms}}
""")
    analysis = analyze(project)
    assert analysis.checklist.tax.binds
    assert "tax-binds" in {f.code for f in analysis.findings}


def test_pressures_top_two() -> None:
    project = make_project("""
project: {title: T}
checklist: {pressures: {data: 0.2, training: 0.9, model: 0.9, inference: 0.1}}
""")
    assert analyze(project).checklist.top_pressures == ("training", "model")  # tie keeps the listed order


def test_a_data_job_bound_by_time_is_cured_by_distributing_its_data() -> None:
    """A data-processing job whose time wall binds splits its data, not a training job: `distribute data` matches,
    and no wrong-axis tells it to distribute training."""
    from reportgen.analysis import analyze
    from tests.conftest import make_project

    text = ("project: {title: Logs, workload: data-processing, goal: {time_per_run: 20 min}}\n"
            "design: {axis: distribute data, nodes: 16}\n"
            "scaling: {runs: [{nodes: 1, time: 5400 s}, {nodes: 16, time: 900 s}]}\n")
    analysis = analyze(make_project(text))
    assert analysis.diagnosis is not None and analysis.diagnosis.axis == "distribute data"
    assert analysis.diagnosis.axis_matches and "wrong-axis" not in {f.code for f in analysis.findings}


# The ridge band (docs/methods.md#1-diagnosis-which-resource-runs-out-first): π = 201.3 TFLOP/s over β = 1 TB/s puts
# the ridge at I* = 2.013e14 / 1e12 = 201.3 FLOP/B, and the band at [0.9 × 201.3, 1.1 × 201.3] = [181.17, 221.43].
RIDGE_HW = "hardware: {peak_compute: 201.3 TFLOP/s, memory_bandwidth: 1 TB/s}\n"


def _one_step(flops: str, axis: str) -> str:
    return ("project: {title: T}\n" + RIDGE_HW + f"baseline: {{steps: [{{name: attention, time: 2 s, flops: {flops}, "
            "bytes: 1.0e12 B}]}\n" + f"design: {{axis: {axis}}}\n")


@pytest.mark.parametrize(("intensity", "ridge", "inside"), [
    (90.0, 100.0, True),  # 0.9 × 100: the band's lower edge is in it
    (110.0, 100.0, True),  # 1.1 × 100 (110.00000000000001 in floats): the upper edge is in it
    (89.9, 100.0, False), (110.2, 100.0, False),
    (math.inf, 100.0, False), (None, 100.0, False), (100.0, None, False),
])
def test_the_ridge_band_is_ten_percent_either_side_of_the_ridge(intensity: float | None, ridge: float | None,
                                                                inside: bool) -> None:
    from reportgen.analysis.measured.diagnosis import in_ridge_band

    assert in_ridge_band(intensity, ridge) is inside


@worked("diagnosis")
def test_a_step_in_the_ridge_band_matches_either_axis() -> None:
    # W = 2e14, Q = 1e12: I = 200 FLOP/B, 0.6 % below I* = 201.3, inside [181.17, 221.43]. Its floors:
    # compute 2e14 / 2.013e14 = 0.9935 s, memory 1e12 / 1e12 = 1 s: memory-bandwidth is the larger, as today.
    project = make_project(_one_step("2.0e14 FLOP", "distribute training"))
    d = diagnose(project)
    assert d.ridge_intensity == pytest.approx(201.3)
    (step,) = d.steps
    assert step.intensity == pytest.approx(200.0) and step.balanced and d.balanced
    assert step.floors_s["compute"] == pytest.approx(2e14 / 2.013e14) and step.floors_s["memory"] == 1.0
    assert d.binding_ceiling == "memory-bandwidth" and d.axis == "distribute the model"
    assert d.axis_matches is True  # distribute training lifts the compute floor, which binds with it
    assert diagnose(make_project(_one_step("2.0e14 FLOP", "distribute the model"))).axis_matches is True
    # an axis that lifts neither floor is still wrong
    assert diagnose(make_project(_one_step("2.0e14 FLOP", "distribute data"))).axis_matches is False


def test_a_step_outside_the_ridge_band_keeps_one_axis() -> None:
    # W = 1.5e14: I = 150 < 0.9 × 201.3 = 181.17; floors 1.5e14 / 2.013e14 = 0.745 s against 1 s: memory-bandwidth
    d = diagnose(make_project(_one_step("1.5e14 FLOP", "distribute training")))
    assert not d.steps[0].balanced and not d.balanced
    assert d.binding_ceiling == "memory-bandwidth" and d.axis_matches is False


def test_only_the_dominant_step_makes_the_diagnosis_balanced() -> None:
    # `short` (1 s) sits on the ridge, I = 201.3; the dominant `long` (3 s) has I = 1e12 / 1e12 = 1, far below it
    project = make_project("project: {title: T}\n" + RIDGE_HW + """
baseline:
  steps:
    - {name: short, time: 1 s, flops: 2.013e14 FLOP, bytes: 1.0e12 B}
    - {name: long, time: 3 s, flops: 1.0e12 FLOP, bytes: 1.0e12 B}
design: {axis: distribute training}
""")
    d = diagnose(project)
    assert [s.balanced for s in d.steps] == [True, False]
    assert not d.balanced and d.axis_matches is False


# 6·P·T once (docs/methods.md#1-diagnosis-which-resource-runs-out-first): P = 7e9, T = 1e6 tokens, MFU 0.5 and
# π = 1e14 FLOP/s, so MFU·π = 5e13 FLOP/s.
SEVEN_B = """
project: {title: T}
hardware: {peak_compute: 100 TFLOP/s}
baseline:
  training: {parameters: 7.0e9, tokens: 1.0e6, mfu: 0.5, deadline: 10 min}
"""
# L = 32, h = 4096, a = 32 (d_h = 128), s = 2048, V = 32000: 12·L·(a·d_h)·s = 12 × 32 × 4096 × 2048 = 3,221,225,472
SHAPE = "  model: {layers: 32, hidden: 4096, heads: 32, sequence: 2048, vocabulary: 32000}\n"


@worked("diagnosis")
def test_six_p_t_without_a_complete_shape() -> None:
    analysis = analyze(make_project(SEVEN_B))
    d = analysis.diagnosis
    # 6 × 7e9 × 1e6 = 4.2e16 FLOP; / 5e13 = 840 s, read by the time wall and the diagnosis alike
    assert d.training_flops_source == "6PT" and d.training_flops == pytest.approx(4.2e16)
    time_wall = next(w for w in d.walls if w.wall == "time")
    assert d.training_time_s == pytest.approx(840.0) and time_wall.demand == d.training_time_s
    assert time_wall.fill == pytest.approx(840.0 / 600.0)  # against the 10 min deadline
    assert time_wall.note.startswith("6 × parameters × tokens / (MFU × π)")


@worked("diagnosis")
def test_f_model_t_with_a_complete_shape_as_the_plan_search_counts_it() -> None:
    analysis = analyze(make_project(SEVEN_B + SHAPE))
    d = analysis.diagnosis
    # F_model = 6P + 12·L·(a·d_h)·s = 4.2e10 + 3,221,225,472 = 45,221,225,472 FLOP a token;
    # × 1e6 tokens = 4.5221225472e16 FLOP; / 5e13 = 904.42450944 s
    assert d.training_flops_source == "model-shape"
    assert d.training_flops == pytest.approx(4.5221225472e16, rel=1e-12)
    time_wall = next(w for w in d.walls if w.wall == "time")
    assert d.training_time_s == pytest.approx(904.42450944, rel=1e-12) and time_wall.demand == d.training_time_s
    assert time_wall.fill == pytest.approx(904.42450944 / 600.0, rel=1e-12)
    assert d.workers_for_deadline == 2  # ⌈904.4 / 600⌉
    # one figure: the plan search's F_model a token, times the run's tokens
    assert analysis.plan_search is not None
    assert analysis.plan_search.flops.model_per_token * 1.0e6 == pytest.approx(d.training_flops, rel=1e-12)
    assert time_wall.note.startswith("F_model × tokens")


def test_a_measured_mfu_gives_the_same_time_whichever_count_the_wall_reads() -> None:
    # The 1-node run: 1e6 tokens in 1,000 s. mfu_6p = 1e6 × 4.2e10 / (1,000 × 1e14) = 0.42; against F_model it is
    # 0.42 × 45,221,225,472 / 4.2e10 = 0.45221225472, so F_model·T / (MFU·π) = 4.5221225472e16 / 4.5221225472e13
    # = 1,000 s, as 6·P·T / (mfu_6p·π) = 4.2e16 / 4.2e13 = 1,000 s without the shape.
    measured = SEVEN_B.replace(", mfu: 0.5", "") + \
        "scaling: {runs: [{nodes: 1, time: 1000 s, tokens: 1.0e6 token}]}\n"
    for text, source in ((measured, "6PT"), (measured.replace("baseline:\n", "baseline:\n" + SHAPE), "model-shape")):
        d = analyze(make_project(text)).diagnosis
        assert d.training_flops_source == source and d.training_time_s == pytest.approx(1000.0, rel=1e-12)


def test_the_roofline_figure_shades_the_ridge_band_the_diagnosis_uses() -> None:
    from pathlib import Path

    from reportgen.analysis import analyze
    from reportgen.analysis.measured.diagnosis import RIDGE_BAND
    from reportgen.figures.diagnosis import roofline
    from reportgen.project.loader import load_project

    project = load_project(Path(__file__).resolve().parent.parent / "inputs" / "example.yaml").project
    diagnosis = analyze(project).diagnosis
    job = roofline(diagnosis, project.hardware)
    assert job is not None and "the grey band, 0.9–1.1·I*, is where both floors bind together" in job.frame.caption
    # the band is drawn around the diagnosis's own ridge, not one the figure computes again
    assert job.args[-1] == diagnosis.ridge_intensity and RIDGE_BAND == (0.9, 1.1)
