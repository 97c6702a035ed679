"""A run's GEMM precision: MFU and HFU against its own peak and against BF16's, the FP8 step's split between the
layers' weight GEMMs and the rest, and the load rules on the peaks (methods.md#precision)."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.measured.utilization import peaks_per_device, plan_precision, precision_split, run_precision
from reportgen.analysis.model.transformer import Shape, token_flops
from reportgen.errors import InputError
from tests.conftest import INPUTS, make_project
from tests.worked import worked

# Mistral 7B at s = 4,096 on one node of 8 H100 SXM: the datasheet's 1,979 and 3,958 TFLOP/s "with sparsity" halved,
# × 8 devices; an FP8 run of 80,000 tokens/s
MISTRAL_FP8 = """
project: {title: Mistral 7B at FP8}
hardware: {devices_per_node: 8, peak_flops: {bf16: 7.9152 PFLOP/s, fp8: 15.8312 PFLOP/s}}
baseline:
  training: {parameters: 7241732096, tokens: 1e12 token, precision: fp8}
  model: {layers: 32, hidden: 4096, sequence: 4096, heads: 32, vocabulary: 32000, layer: llama, kv_heads: 8,
          ffn_hidden: 14336}
scaling:
  runs: [{nodes: 1, throughput: 80000 token/s}]
"""
F_MODEL = 49_106_411_520  # 6·(P − V·h) + 12·L·a·d_h·s (methods.md#llama-style-layers)
MISTRAL_7B = Shape(32, 4096, 32, 128, 4096, 32000, 1, kv_heads=8, ffn_hidden=14336, mlp="swiglu", norm="rmsnorm",
                   dropout=False, tied_embeddings=False, position="rotary", bias=False, described=True)


@worked("scaling")
def test_an_fp8_runs_mfu_against_fp8_and_against_bf16() -> None:
    # X·F_model = 80,000 × 49,106,411,520 = 3.929e15 FLOP/s: against FP8's 15.8312 PFLOP/s 24.8 %, against BF16's
    # 7.9152 PFLOP/s 49.6 %; no recomputation, no flash: HFU = MFU. mfu_6p stays against BF16, as the time wall reads
    # it: 6·P = 43,450,392,576 over 7.9152e15 × 80,000 = 43.9 %
    row = analyze(make_project(MISTRAL_FP8)).scaling.rows[0]
    assert row.precision == "fp8"
    assert row.mfu == pytest.approx(80000 * F_MODEL / 15.8312e15, rel=1e-12) and round(100 * row.mfu, 1) == 24.8
    assert row.mfu_bf16 == pytest.approx(80000 * F_MODEL / 7.9152e15, rel=1e-12)
    assert round(100 * row.mfu_bf16, 1) == 49.6
    assert row.hfu == pytest.approx(row.mfu, rel=1e-12) and row.hfu_bf16 == pytest.approx(row.mfu_bf16, rel=1e-12)
    assert row.mfu_6p == pytest.approx(80000 * 6 * 7_241_732_096 / 7.9152e15, rel=1e-12)
    # achieved FLOP/s per device do not depend on the peak they are read against: X·F_hw / 8
    assert row.achieved_flops_per_device == pytest.approx(80000 * F_MODEL / 8, rel=1e-12)


def test_a_bf16_run_has_one_figure() -> None:
    bf16 = MISTRAL_FP8.replace(", precision: fp8", "")
    row = analyze(make_project(bf16)).scaling.rows[0]
    assert row.precision == "bf16" and row.mfu_bf16 == row.mfu and row.hfu_bf16 == row.hfu
    assert row.mfu == 80000 * F_MODEL / 7.9152e15


def test_above_one_against_bf16_is_no_slip_at_fp8() -> None:
    # 170,000 tokens/s: 105 % of BF16's peak but 52.7 % of FP8's, the precision the run used
    fast = MISTRAL_FP8.replace("throughput: 80000", "throughput: 170000")
    analysis = analyze(make_project(fast))
    row = analysis.scaling.rows[0]
    assert row.mfu_bf16 > 1 > row.mfu
    assert "mfu-above-one" not in {f.code for f in analysis.findings}


@worked("plan_search")
def test_the_fp8_step_runs_the_weight_gemms_at_fp8() -> None:
    # F_lin = 6·L·P_layer = 6 × 32 × 218,112,000 = 41,877,504,000; F_bf = F_hw − F_lin = 7,228,907,520 (attention and
    # the logit layer). A node at η = 1: 41,877,504,000/15.8312e15 + 7,228,907,520/7.9152e15 = 2.6453 + 0.9133 =
    # 3.559 µs a token at FP8, against 49,106,411,520/7.9152e15 = 6.204 µs at BF16: 1.74× faster
    hardware = make_project(MISTRAL_FP8).hardware
    assert hardware is not None
    flops = token_flops(7_241_732_096, MISTRAL_7B)
    assert flops.linear["none"] == 41_877_504_000 and flops.hardware["none"] - flops.linear["none"] == 7_228_907_520
    fp8, bf16 = precision_split(hardware, "fp8"), precision_split(hardware, "bf16")
    assert fp8 is not None and bf16 is not None
    node_fp8 = fp8.hardware_seconds(flops, "none") / 8  # a device's seconds over the node's 8 devices
    node_bf16 = bf16.hardware_seconds(flops, "none") / 8
    assert node_fp8 == pytest.approx(41_877_504_000 / 15.8312e15 + 7_228_907_520 / 7.9152e15, rel=1e-12)
    assert round(node_fp8 * 1e6, 3) == 3.559 and round(node_bf16 * 1e6, 3) == 6.204
    assert round(node_bf16 / node_fp8, 2) == 1.74
    assert fp8.model_seconds(flops) == fp8.hardware_seconds(flops, "none")  # no flash: F_hw(none) = F_model
    # the one peak that times the whole count as the split does lies between the two
    assert 7.9152e15 / 8 < fp8.effective_flops_per_s(F_MODEL, 41_877_504_000) < 15.8312e15 / 8


def test_tf32_and_fp32_run_everything_at_their_peak() -> None:
    project = make_project(MISTRAL_FP8.replace("fp8: 15.8312 PFLOP/s", "fp8: 15.8312 PFLOP/s, tf32: 3.96 PFLOP/s"))
    assert project.hardware is not None
    split = precision_split(project.hardware, "tf32")
    assert split is not None and split.linear_flops_per_s == split.other_flops_per_s == 3.96e15 / 8
    assert precision_split(project.hardware, "fp32") is None  # no FP32 peak given
    assert set(peaks_per_device(project.hardware)) == {"bf16", "fp16", "fp8", "tf32"}
    # FP16's own peak, where given, is FP16's; FP32 runs without tensor cores at its own
    every = make_project(MISTRAL_FP8.replace("fp8: 15.8312 PFLOP/s", "fp8: 15.8312 PFLOP/s, fp16: 7.2 PFLOP/s, "
                                             "fp32: 0.536 PFLOP/s"))
    assert every.hardware is not None and every.hardware.peak_at("fp16") == 7.2e15
    fp32 = precision_split(every.hardware, "fp32")
    assert fp32 is not None and fp32.other_flops_per_s == pytest.approx(0.536e15 / 8, rel=1e-12)


def test_peak_compute_and_peak_flops_bf16_are_one_figure() -> None:
    project = make_project(MISTRAL_FP8)
    assert project.hardware is not None and project.hardware.peak_compute == 7.9152e15  # defaults to bf16's
    assert project.hardware.peak_at("fp16") == 7.9152e15
    make_project(MISTRAL_FP8.replace("{devices_per_node: 8,", "{devices_per_node: 8, peak_compute: 7.9152 PFLOP/s,"))
    with pytest.raises(InputError) as raised:
        make_project(MISTRAL_FP8.replace("{devices_per_node: 8,", "{devices_per_node: 8, peak_compute: 7.9 PFLOP/s,"))
    error = str(raised.value)
    assert "inline.yaml:3:" in error and "hardware.peak_flops.bf16: peak-flops-conflict" in error


def test_a_precision_without_its_peak_is_refused() -> None:
    with pytest.raises(InputError) as raised:
        make_project(MISTRAL_FP8.replace(", fp8: 15.8312 PFLOP/s", ""))
    assert "baseline.training.precision: peak-flops-missing: baseline.training.precision is fp8" in str(raised.value)
    with pytest.raises(InputError) as raised:
        make_project(MISTRAL_FP8 + "plan_search: {precision: tf32}\n")
    assert "plan_search.precision: peak-flops-missing" in str(raised.value)


def test_a_plan_at_another_precision_than_the_runs_is_said() -> None:
    bf16_runs = MISTRAL_FP8.replace(", precision: fp8", "")
    project = make_project(bf16_runs + "plan_search: {precision: fp8}\n")
    assert run_precision(project) == "bf16" and plan_precision(project) == "fp8"
    assert plan_precision(make_project(MISTRAL_FP8)) == "fp8"  # the runs' by default
    found = [f for f in analyze(project).findings if f.code == "precision-extrapolated"]
    assert found and found[0].severity == "info" and found[0].message == (
        "layouts timed at FP8 with η measured at BF16: FP8 seldom reaches BF16's share of its peak")
    assert "precision-extrapolated" not in {f.code for f in analyze(make_project(MISTRAL_FP8)).findings}


def test_an_fp8_runs_table_shows_both_mfus(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from reportgen.pipeline import BuildOptions, build

    text = (Path(__file__).resolve().parent.parent / "inputs" / "llm-70b-3d.yaml").read_text(encoding="utf-8")
    fp8 = text.replace("  peak_compute:", "  peak_flops: {fp8: 15.8 PFLOP/s}\n  peak_compute:").replace(
        "    mfu: 0.4\n", "    mfu: 0.4\n    precision: fp8\n")
    assert fp8.count("precision: fp8") == 1
    (tmp_path / "p.yaml").write_text(fp8, encoding="utf-8")
    build(tmp_path / "p.yaml", BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    page = (tmp_path / "out" / "p" / "report.html").read_text(encoding="utf-8")
    assert "MFU (BF16)" in page and "over their dense BF16 peak" in page
    (tmp_path / "q.yaml").write_text(text, encoding="utf-8")
    build(tmp_path / "q.yaml", BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    assert "MFU (BF16)" not in (tmp_path / "out" / "q" / "report.html").read_text(encoding="utf-8")


def test_a_layouts_stages_are_timed_at_the_precision_its_step_is() -> None:
    """Σ_j τ_j = p·τ̄ (each τ_j = p·τ̄·W_j/F_hw, ΣW_j = F_hw): the declared stages of an FP8 project, split unevenly
    26/18/18/18, add up to the step's p·(compute + recompute)/m; they were timed at the BF16 rate while the step was
    not, and summed to 0.67 s against 0.39 s (docs/methods.md#uneven-pipeline-stages)."""
    text = (INPUTS / "llm-70b-3d.yaml").read_text(encoding="utf-8")
    text = text.replace("peak_compute: 7.9 PFLOP/s", "peak_flops: {bf16: 7.9 PFLOP/s, fp8: 15.8 PFLOP/s}")
    text = text.replace("    mfu: 0.4\n", "    mfu: 0.4\n    precision: fp8\n")
    text = text.replace("sequence_parallel: true}", "sequence_parallel: true, layers_per_stage: [26, 18, 18, 18]}")
    declared = analyze(make_project(text)).plan_search.declared
    layout = declared.step
    assert sum(stage.time_per_micro_batch_s for stage in declared.stages) == \
        pytest.approx(4 * (layout.compute_s + layout.recompute_s) / 64, rel=1e-12)
