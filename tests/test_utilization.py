"""The share of the peak each measured run reached, and the layout checks the model's shape allows
(methods.md#flops-mfu-and-hfu, methods.md#the-models-shape-and-the-layout)."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.errors import InputError
from tests.conftest import make_project
from tests.worked import worked

# Korthikanti et al. 2022's GPT-3 (Table 3): 64 A100s of 312 TFLOP/s as 8 nodes of 8, selective recomputation with
# sequence parallelism, a step of 64 sequences of 2,048 tokens in 13.75 s (Table 5)
GPT3 = """
project: {title: GPT-3 175B}
hardware: {peak_compute: 2.496 PFLOP/s, devices_per_node: 8, device_memory: 80 GiB}
baseline:
  training: {parameters: 174575321088, tokens: 131072 token}
  model: {layers: 96, hidden: 12288, sequence: 2048, heads: 96, vocabulary: 51200}
design:
  nodes: 8
  parallelism: {tensor: 8, pipeline: 8, micro_batches: 64, recompute: selective, sequence_parallel: true}
scaling:
  runs: [{nodes: 8, time: 13.75 s}]
"""


@worked("scaling")
def test_a_runs_mfu_and_hfu_reproduce_korthikantis_table_5() -> None:
    # P = 12·96·12,288² + 51,200·12,288 = 174,575,321,088; F_model = 6P + 12·96·12,288·2,048 = 1.07644e12 FLOP a
    # token; 131,072 tokens in 13.75 s on 8 × 2.496 PFLOP/s: MFU = 1.41091e17 / 2.7456e17 = 51.4 %. Selective adds
    # 12·L·h·s = 2.8991e10 a token: HFU 52.8 %. 6·P alone: 50.0 %. Per device: 52.8 % × 312 TFLOP/s = 164.6 TFLOP/s.
    row = analyze(make_project(GPT3)).scaling.rows[0]
    f_model = 6 * 174575321088 + 12 * 96 * 12288 * 2048
    assert row.tokens == 131072 and row.mfu == pytest.approx(131072 * f_model / (13.75 * 8 * 2.496e15), rel=1e-12)
    assert round(100 * row.mfu, 1) == 51.4 and round(100 * row.hfu, 1) == 52.8 and row.hfu_source == "model"
    assert row.mfu_6p == pytest.approx(row.mfu * 6 * 174575321088 / f_model, rel=1e-12)
    assert row.achieved_flops_per_device == pytest.approx(row.hfu * 312e12, rel=1e-12)


def test_palms_throughput_in_tokens_a_second() -> None:
    # PaLM 540B on 6,144 TPU v4 chips of 275 TFLOP/s (1,536 hosts of 4): 238.3K tokens/s; MFU 46.2 %, 45.7 % at 6P;
    # Table 22's 4.10 TFLOP of hardware FLOPs a token: HFU 57.8 %, its source "given"
    text = """
project: {title: PaLM}
hardware: {peak_compute: 1.1 PFLOP/s, devices_per_node: 4}
baseline:
  training: {parameters: 540.35e9, tokens: 780e9 token}
  model: {layers: 118, hidden: 18432, sequence: 2048, heads: 48, head_dim: 256, vocabulary: 256000,
          hardware_flops_per_token: 4.10 TFLOP}
scaling:
  runs: [{nodes: 1536, throughput: 238300 token/s}]
"""
    row = analyze(make_project(text)).scaling.rows[0]
    assert round(100 * row.mfu, 1) == 46.2 and round(100 * row.mfu_6p, 1) == 45.7
    assert round(100 * row.hfu, 1) == 57.8 and row.hfu_source == "given"


def test_a_throughput_in_flops_is_the_hardwares() -> None:
    # Narayanan et al. 2021 publish hardware FLOP/s: 1,536 GPUs at 163 TFLOP/s each is HFU 163/312 = 52.2 %; MFU
    # scales it by F_model/F_hw: with full recomputation F_hw = F_model + 2(P − Vh) + 4·L·h·s
    text = """
project: {title: 1T}
hardware: {peak_compute: 2.496 PFLOP/s, devices_per_node: 8}
baseline:
  training: {parameters: 1.008e12, tokens: 450e9 token}
  model: {layers: 128, hidden: 25600, sequence: 2048, heads: 160, vocabulary: 51200}
design:
  parallelism: {tensor: 8, pipeline: 64, micro_batches: 512, recompute: full}
scaling:
  runs: [{nodes: 192, throughput: 250.368 PFLOP/s}]
"""
    row = analyze(make_project(text)).scaling.rows[0]
    assert row.hfu == pytest.approx(163 / 312, rel=1e-9) and row.hfu_source == "counted"
    attention = 128 * 25600 * 2048
    f_model = 6 * 1.008e12 + 12 * attention
    f_hw = f_model + 2 * (1.008e12 - 51200 * 25600) + 4 * attention
    assert row.mfu == pytest.approx(163 / 312 * f_model / f_hw, rel=1e-9)


def test_counted_flops_give_the_hfu_and_a_ratio_above_one_is_an_error() -> None:
    counted = GPT3.replace("{nodes: 8, time: 13.75 s}", "{nodes: 8, time: 13.75 s, flops: 1.5e17 FLOP}")
    row = analyze(make_project(counted)).scaling.rows[0]
    assert row.hfu == pytest.approx(1.5e17 / (13.75 * 8 * 2.496e15)) and row.hfu_source == "counted"
    # 100× the tokens in the same time: MFU 5,139 %, a unit slip
    slip = GPT3.replace("tokens: 131072 token", "tokens: 13107200 token")
    analysis = analyze(make_project(slip))
    found = [f for f in analysis.findings if f.code == "mfu-above-one"]
    assert found and found[0].severity == "error" and "13,107,200 tokens (baseline.training.tokens)" in found[0].message


def test_the_time_wall_reads_the_measured_mfu_without_one_given() -> None:
    # no baseline.training.mfu: the reference scale's mfu_6p (50.0 %) gives 6·P·T / (MFU·π) on one node
    analysis = analyze(make_project(GPT3))
    mfu_6p = analysis.scaling.rows[0].mfu_6p
    assert analysis.diagnosis is not None
    assert analysis.diagnosis.training_time_s == pytest.approx(6 * 174575321088 * 131072 / (mfu_6p * 2.496e15))


def test_parameters_from_the_shape_when_none_are_given() -> None:
    text = GPT3.replace("  training: {parameters: 174575321088, tokens: 131072 token}\n", "")
    search = analyze(make_project(text)).plan_search
    assert search is not None and search.inputs.parameters_source == "shape"
    # eq. (2): 12·96·12,288²·(1 + 13/147,456 + 53,248/(12·96·12,288)) = 174.59e9
    assert search.inputs.parameters == pytest.approx(12 * 96 * 12288 ** 2 * (1 + 13 / (12 * 12288)
                                                                             + 53248 / (12 * 96 * 12288)))


def test_a_layout_the_shape_forbids_is_refused_at_load() -> None:
    with pytest.raises(InputError) as raised:
        make_project(GPT3.replace("tensor: 8, pipeline: 8, micro_batches: 64",
                                  "tensor: 5, pipeline: 8, micro_batches: 60, virtual_stages: 3, data: 1")
                     .replace("heads: 96", "heads: 96, global_batch: 64"))
    text = str(raised.value)
    assert "layout-heads" in text and "interleave-needs-multiple" in text and "layout-batch" in text


def test_uneven_stages_and_a_departing_activation_model_are_warned() -> None:
    # 96 layers over 7 stages: c = ⌈96/7⌉ = 14 in the middle, r = 96 − 5 × 14 = 26 split 13, 13 between the ends
    uneven = GPT3.replace("pipeline: 8, micro_batches: 64", "pipeline: 7, micro_batches: 63").replace(
        "nodes: 8\n", "nodes: 7\n").replace("devices_per_node: 8", "devices_per_node: 8")
    codes = {f.code: f for f in analyze(make_project(uneven)).findings}
    assert codes["layout-layers"].severity == "info" and codes["layout-layers"].message.startswith(
        "96 layers over 7 stages: 13, 14, 14, 14, 14, 14, 13 (Megatron's first/last rule)")
    interleaved = uneven.replace("micro_batches: 63", "micro_batches: 63, virtual_stages: 7")
    codes = {f.code: f for f in analyze(make_project(interleaved)).findings}
    assert codes["layout-layers"].severity == "warning" and "7 virtual stages do not divide" in \
        codes["layout-layers"].message
    # a measured 1 GB against the model's: selective with sequence parallelism, 34/8 × sbh = 106,954,752 B a layer,
    # × 12 layers × 8 micro-batches in flight (1F1B, v = 1) = 10,267,656,192 B, plus the embedding's mask
    # sbh/8 × 8 = 25,165,824 B: 10,292,822,016 B; κ = 1e9 / that = 0.0972, outside 0.5–2
    measured = GPT3.replace("  training:", "  memory: {parameters: 174575321088, activations: 1 GB}\n  training:")
    analysis = analyze(make_project(measured))
    assert analysis.plan_search.activation_calibration == pytest.approx(1e9 / 10_292_822_016, rel=1e-12)
    assert "activation-model-departs" in {f.code for f in analysis.findings}


def test_an_incomplete_shape_says_what_it_lacks() -> None:
    partial = GPT3.replace(", heads: 96, vocabulary: 51200", "")
    analysis = analyze(make_project(partial))
    assert analysis.plan_search is None
    found = next(f for f in analysis.findings if f.code == "plan-search-inputs")
    assert "`baseline.model.heads` and `baseline.model.vocabulary`" in found.message


def test_interleaving_and_full_recomputation_in_the_layouts_step() -> None:
    # v = 4 divides the bubble (pp − 1)/m by 4 and multiplies the pipeline sends 2·m·(α + A/B) by 4; full
    # recomputation makes k = 6 tensor all-reduces a layer and micro-batch instead of 4
    base = """
project: {title: T}
hardware: {peak_compute: 8 PFLOP/s, devices_per_node: 8, network_bandwidth: 400 GB/s, network_latency: 5 us,
           intra_node_bandwidth: 450 GB/s, intra_node_latency: 2 us, device_memory: 80 GB}
baseline:
  memory: {parameters: 70e9}
  model: {layers: 80, hidden: 8192, sequence: 4096, heads: 64, vocabulary: 32000}
design:
  nodes: 64
  parallelism: {tensor: 8, pipeline: 4, micro_batches: 64, data: 16}
prediction: {t_comp: 557 s, message_bytes: 4.4 GB}
"""
    plain = analyze(make_project(base)).layout.step
    changed = analyze(make_project(base.replace("data: 16}", "data: 16, virtual_stages: 4, recompute: full}"))).layout
    step = changed.step
    assert step.bubble_s == pytest.approx(plain.bubble_s / 4, rel=1e-12)
    assert step.pipeline_s == pytest.approx(plain.pipeline_s * 4, rel=1e-12)
    assert step.tensor_s == pytest.approx(plain.tensor_s * 6 / 4, rel=1e-12)
    assert changed.bubble_fraction == pytest.approx(3 / (4 * 64))
    # A = 1 × 4,096 × 8,192 × 2 B = 67,108,864 B; pipeline sends 2·v·m·(α + A/B) = 2 × 4 × 64 × (5 µs + 167.77 µs)
    assert step.pipeline_s == pytest.approx(2 * 4 * 64 * (5e-6 + 67108864 / 400e9), rel=1e-12)
