"""A parallel layout: ZeRO's memory per device (the paper's Table 1), the smallest data-parallel degree per
stage, the step's terms by hand (the 1F1B bubble, tensor and pipeline exchanges, the data-parallel collective),
and the findings and diagnosis that read it."""

from __future__ import annotations

import json
import re

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.layout import MAX_DATA_DEGREE, analyze_layout
from reportgen.analysis.model.patterns import Pattern
from tests.conftest import make_project
from tests.worked import worked

GB = 1e9


def zero_project(stage: int, data: int = 64, device: str = "32 GB") -> str:
    """ZeRO's Table 1 set-up: 7.5B parameters, mixed-precision Adam (K = 12), devices of 32 GB."""
    return (f"project: {{title: ZeRO}}\nhardware: {{devices_per_node: 8, device_memory: {device}}}\n"
            f"baseline: {{memory: {{parameters: 7.5e9}}}}\n"
            f"design: {{nodes: {data // 8}, parallelism: {{data: {data}, zero_stage: {stage}}}}}\n")


@worked("layout")
def test_zero_table_one_is_reproduced() -> None:
    # Rajbhandari et al. 2020, Table 1, Ψ = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.88 GB
    layout = analyze_layout(make_project(zero_project(0)), t_comp=None, alpha=None, max_nodes=4096)
    assert layout is not None
    totals = [stage.total_b / GB for stage in layout.memory]
    assert totals == pytest.approx([120.0, 31.40625, 16.640625, 1.875])
    assert [round(t, 1) for t in totals[:3]] == [120.0, 31.4, 16.6] and round(totals[3], 2) == 1.88
    # the smallest d at which each fits a 32 GB device: never; 30 + 90/d ≤ 32 → 45; 15 + 105/d ≤ 32 → 7;
    # 120/d ≤ 32 → 4
    assert layout.min_data_for_stage == (None, 45, 7, 4)


@pytest.mark.parametrize(("stage", "fits"), [(0, False), (1, True), (2, True), (3, True)])
def test_the_declared_stage_fits_or_is_an_error(stage: int, fits: bool) -> None:
    analysis = analyze(make_project(zero_project(stage)))
    assert analysis.layout is not None and analysis.layout.fits is fits
    codes = {f.code for f in analysis.findings}
    assert ("layout-does-not-fit" in codes) is not fits
    if not fits:
        message = next(f.message for f in analysis.findings if f.code == "layout-does-not-fit")
        assert "120 GB per device" in message and "stage 1 from d = 45" in message


def test_the_split_is_read_from_the_file() -> None:
    # weights 2 B, gradients 4 B (fp32), optimizer 12 B: stage 2 at d = 10 holds 2Ψ + 16Ψ/10 = 3.6 B per parameter
    text = ("project: {title: T}\nhardware: {device_memory: 80 GB}\nbaseline: {memory: {parameters: 1e9, "
            "split: {weights: 2 B, gradients: 4 B, optimizer: 12 B}, activations: 1 GB}}\n"
            "design: {parallelism: {data: 10, zero_stage: 2}}\n")
    layout = analyze(make_project(text)).layout
    assert layout is not None and layout.memory_per_device_b == pytest.approx(3.6 * GB + 1 * GB)


def layout_project(**overrides: str) -> str:
    """A 3D layout on 8-GPU nodes: d = 4, t = 8, pp = 4 on 16 nodes."""
    values = {"data": "4", "tensor": "8", "pipeline": "4", "micro_batches": "32", "zero_stage": "1",
              "overlap": "0.5", **overrides}
    layout = ", ".join(f"{k}: {v}" for k, v in values.items())
    return ("project: {title: 3D}\n"
            "hardware: {devices_per_node: 8, device_memory: 80 GB, network_bandwidth: 50 GB/s, "
            "network_latency: 10 us, intra_node_bandwidth: 450 GB/s, intra_node_latency: 2 us}\n"
            "baseline: {memory: {parameters: 70e9, activations: 20 GB}, "
            "model: {layers: 80, hidden: 8192, sequence: 4096, micro_batch: 1}}\n"
            f"design: {{nodes: 16, parallelism: {{{layout}}}}}\n"
            "prediction: {t_comp: 2000 s, max_nodes: 1024}\n")


def test_the_step_terms_by_hand() -> None:
    layout = analyze(make_project(layout_project())).layout
    assert layout is not None and layout.step is not None
    step = layout.step
    compute = 2000.0 * 8 / (4 * 8 * 4)  # T_comp · g / (d·t·pp) = T_comp / nodes = 125 s
    assert step.compute_s == pytest.approx(compute)
    # the bubble of pp = 4, m = 32 is 3/32 of the compute, a term of its own
    assert step.bubble_s == pytest.approx(compute * 3 / 32)
    activation = 1 * 4096 * 8192 * 2  # A = micro_batch · sequence · hidden · 2 B
    tensor = 4 * (80 / 4) * 32 * (2 * 7 / 8 * activation / 450e9 + 2 * 7 * 2e-6)
    assert step.tensor_s == pytest.approx(tensor)
    assert step.pipeline_s == pytest.approx(2 * 32 * (10e-6 + activation / 50e9))
    # the data-parallel ring over d = 4 of M_dp = w·Ψ = 2 B × 70e9 / 32, half of it hidden
    message = 2.0 * 70e9 / 32
    ring = Pattern("ring").t_comm(4, 10e-6, message / 50e9)
    assert step.data_s == pytest.approx(0.5 * ring)
    assert step.total_s == pytest.approx(compute * (1 + 3 / 32) + tensor + step.pipeline_s + 0.5 * ring)
    # the curve over d at t = 8, pp = 4: the declared d = 4 is a point of it
    assert layout.curve is not None
    assert float(layout.curve.t_step[3]) == pytest.approx(step.total_s)
    assert float(layout.curve.nodes[3]) == 16.0


def test_stage_three_uses_the_sharded_collective() -> None:
    layout = analyze(make_project(layout_project(zero_stage="3", tensor="1", pipeline="1", data="128"))).layout
    assert layout is not None and layout.data_pattern.name == "sharded" and layout.step is not None
    message = 2.0 * 70e9
    assert layout.step.data_s == pytest.approx(0.5 * Pattern("sharded").t_comm(128, 10e-6, message / 50e9))
    assert layout.step.tensor_s == 0.0 and layout.step.pipeline_s == 0.0 and layout.step.bubble_s == 0.0


def test_the_optimum_is_over_the_data_parallel_degree() -> None:
    layout = analyze(make_project(layout_project())).layout
    assert layout is not None and layout.curve is not None and layout.optimum_data is not None
    best = int(layout.curve.t_step.argmin()) + 1
    assert layout.optimum_data == best
    assert layout.optimum_nodes == pytest.approx(best * 32 / 8)
    assert len(layout.curve.data) == 1024 * 8 // 32  # d up to max_nodes × g / (t·pp)


def test_the_layout_size_is_checked_against_the_plan() -> None:
    analysis = analyze(make_project(layout_project(data="8")))
    finding = next(f for f in analysis.findings if f.code == "layout-size")
    assert finding.severity == "error" and "8 × 8 × 4 = 256" in finding.message and "16 × 8 = 128" in finding.message
    # without data the devices left are taken: 128 / 32 = 4
    text = layout_project().replace("data: 4, ", "")
    assert analyze(make_project(text)).layout.data == 4  # type: ignore[union-attr]


def test_tensor_parallelism_across_nodes_warns() -> None:
    analysis = analyze(make_project(layout_project(tensor="16", pipeline="2")))
    assert any(f.code == "tensor-across-nodes" and f.severity == "warning" for f in analysis.findings)
    # and its all-reduces are costed at the network's bandwidth and latency, as the warning says: t = 16 over
    # 8-device nodes, pp = 2, m = 32: 4 · (80/2) · 32 · (2 · 15/16 · A / 50 GB/s + 2 · 15 · 10 µs)
    activation = 1 * 4096 * 8192 * 2
    step = analysis.layout.step
    assert step is not None
    assert step.tensor_s == pytest.approx(4 * 40 * 32 * (2 * 15 / 16 * activation / 50e9 + 2 * 15 * 10e-6))


def test_a_fitting_layout_satisfies_the_device_level_memory_requirement() -> None:
    # 70B × 16 B = 1.12 TB: the memory wall binds per device. A data-parallel design declaring `distribute
    # training` with a layout that fits is a sharded design: no replica-cannot-fit, no all-reduce warning
    text = layout_project().replace(
        "design: {nodes: 16, ", "design: {axis: distribute training, slots: {partitioning: {choice: split data}, "
        "communication: {choice: all-reduce}}, nodes: 16, ")
    analysis = analyze(make_project(text))
    assert analysis.layout is not None and analysis.layout.fits
    codes = {f.code for f in analysis.findings}
    assert "replica-cannot-fit" not in codes and "allreduce-needs-replica" not in codes
    assert analysis.diagnosis is not None and analysis.diagnosis.design_shards_model


def test_a_model_split_without_need_warns() -> None:
    text = ("project: {title: small}\nhardware: {devices_per_node: 8, device_memory: 80 GB, "
            "peak_compute: 1 PFLOP/s, memory_bandwidth: 3 TB/s}\n"
            "baseline: {memory: {parameters: 1e9}, steps: [{name: s, time: 1 s, flops: 9e14 FLOP, bytes: 1e11 B}]}\n"
            "design:\n  nodes: 2\n  parallelism: {tensor: 2}\n"
            "  slots: {partitioning: {choice: split data}}\n")
    codes = {f.code for f in analyze(make_project(text)).findings}
    assert "needless-model-split" in codes


def test_the_step_names_what_it_lacks() -> None:
    text = layout_project().replace(", intra_node_bandwidth: 450 GB/s", "")
    layout = analyze(make_project(text)).layout
    assert layout is not None and layout.step is None
    assert layout.step_missing == ("hardware.intra_node_bandwidth",)
    assert layout.memory_per_device_b is not None  # the memory is computed all the same


def test_the_sweep_is_bounded() -> None:
    text = layout_project(tensor="1", pipeline="1", data="128").replace("max_nodes: 1024", "max_nodes: 1048576")
    layout = analyze(make_project(text)).layout
    assert layout is not None and layout.curve is not None
    assert len(layout.curve.data) == min(MAX_DATA_DEGREE, 1048576 * 8)


def test_the_report_shows_the_layout_its_memory_verdict_and_the_step(tmp_path) -> None:
    import html as html_module
    from pathlib import Path

    from reportgen.pipeline import BuildOptions, build

    inputs = Path(__file__).resolve().parent.parent / "inputs"
    build(inputs / "llm-70b-3d.yaml", BuildOptions(out_root=tmp_path, formats=("html", "json")))
    raw = (tmp_path / "llm-70b-3d" / "report.html").read_text(encoding="utf-8")
    assert 'id="layout"' in raw and 'id="fig-layout-step"' in raw
    page = " ".join(html_module.unescape(re.sub(r"<[^>]+>", "", raw)).split())  # the text as a reader sees it
    assert "16 × 8 × 4 = 512 devices (64 nodes of 8 devices)" in page
    # the one memory figure: the most loaded stage's tensors and the runtime beside them (methods.md#runtime-memory)
    memory = json.loads((tmp_path / "llm-70b-3d" / "results.json").read_text(encoding="utf-8"))
    declared = memory["plan_search"]["declared"]["memory_per_device_b"]
    assert memory["layout"]["memory_per_device_b"] == declared
    assert f"{declared / 1e9:.1f} GB against its 80.0 GB: it fits" in page
    # page 1 names the layout and its memory verdict
    summary = raw.split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert "Layout." in summary and "ZeRO stage 1" in summary and "it fits" in summary
    # the step terms' table holds the bubble as its own row: 64 micro-batches, pp = 4 → 3/64 of the compute
    assert "pipeline bubble" in page and "3.84 %" in page  # 0.408 s of a 10.6 s step


@worked("model_check")
def test_the_model_check_uses_the_layouts_step_at_the_measured_scales() -> None:
    from pathlib import Path

    from reportgen.project.loader import load_project

    inputs = Path(__file__).resolve().parent.parent / "inputs"
    analysis = analyze(load_project(inputs / "llm-70b-3d.yaml").project)
    layout, check = analysis.layout, analysis.model_check
    assert layout is not None and check is not None
    reference = 557.0 / layout.at_nodes(16).total_s  # type: ignore[union-attr]
    row = next(r for r in check.rows if r.nodes == 64)
    assert row.predicted_speedup == pytest.approx(557.0 / layout.at_nodes(64).total_s / reference)  # type: ignore
    assert layout.at_nodes(12) is not None  # 12 × 8 / 32 = 3: a whole data-parallel degree
    assert layout.at_nodes(10) is None  # 10 × 8 / 32 = 2.5 is not: the pattern's curve answers there


def test_a_layout_that_does_not_fit_opens_page_one_with_its_fix() -> None:
    summary = analyze(make_project(zero_project(0))).summary
    assert summary is not None and summary.blocker is not None
    assert "layout-does-not-fit" not in summary.blocker and "120 GB per device" in summary.blocker
    assert "Raise the ZeRO stage" in summary.blocker
    assert summary.layout is not None
    assert "it does not fit" in summary.layout and "stage 1 from d = 45" in summary.layout


def test_tensor_and_pipeline_that_do_not_divide_the_devices_are_an_error() -> None:
    text = layout_project().replace("data: 4, ", "").replace("pipeline: 4", "pipeline: 3")
    analysis = analyze(make_project(text))
    assert analysis.layout is not None and analysis.layout.data is None
    finding = next(f for f in analysis.findings if f.code == "layout-size")
    assert "tensor × pipeline = 24 does not divide the 128 devices" in finding.message
    assert analysis.layout.memory == () and analysis.layout.step is None  # nothing is computed at an unknown d
    assert analysis.layout.min_data_for_stage != (None, None, None, None)  # what does not need d still is
