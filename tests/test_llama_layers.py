"""Llama-style layers and sliding-window attention: the parameters, FLOPs and activations of a described layer, held
to the released checkpoints' counts and hand-worked figures (methods.md#llama-style-layers,
methods.md#sliding-window-attention), and GPT-3's layer left exactly where it was."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.model_shape import parameters_of, shape_of
from reportgen.analysis.model.transformer import (
    RECOMPUTE_POLICIES,
    Shape,
    activations_per_layer,
    attention_sequence,
    effective_sequence,
    expert_parameters,
    layer_parameters,
    model_parameters,
    shape_parameters,
    stored_parameters,
    swiglu_hidden,
    token_flops,
)
from reportgen.errors import InputError
from tests.conftest import make_project
from tests.worked import worked

LLAMA = {"mlp": "swiglu", "norm": "rmsnorm", "dropout": False, "tied_embeddings": False, "position": "rotary",
         "bias": False, "described": True}
LLAMA2_7B = Shape(32, 4096, 32, 128, 4096, 32000, 1, ffn_hidden=11008, **LLAMA)  # type: ignore[arg-type]
LLAMA2_70B = Shape(80, 8192, 64, 128, 4096, 32000, 1, kv_heads=8, ffn_hidden=28672, **LLAMA)  # type: ignore[arg-type]
MISTRAL_7B = Shape(32, 4096, 32, 128, 4096, 32000, 1, flash=True, kv_heads=8, ffn_hidden=14336,
                   **LLAMA)  # type: ignore[arg-type]
SBH = 4096 * 4096  # Mistral's s·b·h at s = 4,096, b = 1: 16,777,216

MISTRAL_FILE = """
project: {title: Mistral 7B}
baseline:
  model: {layers: 32, hidden: 4096, sequence: 4096, heads: 32, vocabulary: 32000, layer: llama, kv_heads: 8,
          ffn_hidden: 14336, flash_attention: true}
"""


@worked("plan_search")
def test_the_released_checkpoints_parameter_counts() -> None:
    # Llama 2 7B: 2·h·q + 2·h·k = 2 × 4,096 × 4,096 × 2 = 67,108,864; SwiGLU 3·h·f = 3 × 4,096 × 11,008 =
    # 135,266,304; two RMSNorms 2 × 4,096: P_layer = 202,383,360. P = 32 × P_layer + 2·V·h (untied) 262,144,000 + the
    # final norm 4,096 = 6,738,415,616.
    assert layer_parameters(LLAMA2_7B) == 202_383_360
    assert model_parameters(LLAMA2_7B) == 6_738_415_616
    # Llama 2 70B: 2 × 8,192 × 8,192 + 2 × 8,192 × 1,024 (8 KV heads of 128) = 150,994,944; 3 × 8,192 × 28,672 =
    # 704,643,072; norms 16,384: P_layer 855,654,400; × 80 + 524,288,000 + 8,192 = 68,976,648,192
    assert model_parameters(LLAMA2_70B) == 68_976_648_192
    # Mistral 7B: 33,554,432 + 8,388,608 + 3 × 4,096 × 14,336 = 176,160,768 + 8,192: P_layer 218,112,000;
    # × 32 + 262,144,000 + 4,096 = 7,241,732,096
    assert layer_parameters(MISTRAL_7B) == 218_112_000
    assert model_parameters(MISTRAL_7B) == 7_241_732_096


def test_swiglus_default_width_is_llamas() -> None:
    # ⌊8 × 4,096/3⌋ = 10,922, up to a multiple of 256: 11,008 (Llama 2 7B); 5,120: 13,653 → 13,824 (13B)
    assert swiglu_hidden(4096) == 11008 and swiglu_hidden(5120) == 13824
    project = make_project(MISTRAL_FILE.replace("          ffn_hidden: 14336, ", "          "))
    shape = shape_of(project)
    assert shape is not None and shape.mlp_hidden == 11008 and shape.mlp == "swiglu" and not shape.tied_embeddings


@worked("plan_search")
def test_gpt3s_layer_described_counts_eq_2_and_the_final_norm() -> None:
    # GPT-3's layer: 2h² + 2h² + 2·h·4h + (h + 2h + h + 4h + h) + 2·2·h = 12h² + 13h; P adds V·h, s·h and the final
    # LayerNorm's 2h: eq. (2) + 2h
    gpt3 = Shape(96, 12288, 96, 128, 2048, 51200, 1, described=True)
    assert layer_parameters(gpt3) == 12 * 12288 ** 2 + 13 * 12288
    assert model_parameters(gpt3) == pytest.approx(shape_parameters(96, 12288, 51200, 2048) + 2 * 12288, rel=1e-15)


def test_an_undescribed_layer_keeps_every_count() -> None:
    # no field of the layer given: P is eq. (2), full recomputation's term 2·(P − V·h), activations Table 2's
    text = MISTRAL_FILE.replace(", layer: llama, kv_heads: 8,\n          ffn_hidden: 14336, flash_attention: true",
                                ", flash_attention: true")
    project = make_project(text)
    shape = shape_of(project)
    assert shape is not None and not shape.described
    assert parameters_of(project) == (shape_parameters(32, 4096, 32000, 4096), "shape")
    plain = Shape(32, 4096, 32, 128, 4096, 32000, 1, flash=True, ffn_hidden=4 * 4096)
    assert shape == plain
    parameters = shape_parameters(32, 4096, 32000, 4096)
    flops = token_flops(parameters, shape)
    attention = 32 * 32 * 128 * 4096
    assert flops.hardware["full"] == 6 * parameters + 12 * attention + 2 * attention + (
        2 * (parameters - 32000 * 4096) + 4 * attention)
    assert activations_per_layer(shape, 1, False, "none") == SBH * 34  # flash: 10 + 24


def test_the_file_reads_the_llama_preset_and_its_count() -> None:
    project = make_project(MISTRAL_FILE)
    assert parameters_of(project) == (7_241_732_096, "shape")
    assert shape_of(project) == MISTRAL_7B
    # each part given overrides the preset's; a window with no window_layers is in every layer
    text = MISTRAL_FILE.replace("flash_attention: true", "flash_attention: true, fused_swiglu: false,\n"
                                "          attention_window: 4096, window_layers: 16, norm: layernorm, bias: true")
    shape = shape_of(make_project(text))
    assert shape == replace(MISTRAL_7B, fused_swiglu=False, attention_window=4096, window_layers=16,
                            norm="layernorm", bias=True)


@worked("scaling")
def test_mistrals_flops_a_token() -> None:
    # P − V·h = 7,241,732,096 − 131,072,000 = 7,110,660,096 (the untied input embedding is a gather): × 6 =
    # 42,663,960,576; attention 12 × 32 × 4,096 × 4,096 = 6,442,450,944: F_model = 49,106,411,520.
    # Full recomputation with flash: + 2·L·P_layer = 13,959,168,000 + (4 + 2) × 536,870,912 = 3,221,225,472:
    # F_hw = 66,286,804,992
    flops = token_flops(7_241_732_096, MISTRAL_7B)
    assert flops.model == 49_106_411_520
    assert flops.hardware["full"] == 66_286_804_992
    # selective with flash adds nothing beyond flash's 2·L·a·d_h·s
    assert flops.hardware["selective"] == flops.hardware["none"] == 49_106_411_520 + 1_073_741_824
    # the layers' weight GEMMs: 6·L·P_layer = 41,877,504,000; 8·L·P_layer under full recomputation
    assert flops.linear["none"] == 41_877_504_000 and flops.linear["full"] == 8 * 32 * 218_112_000


@worked("plan_search")
def test_mistrals_activations_a_layer() -> None:
    # flash, t = 1: 8 (four 16-bit inputs) + (4 + 4·8/32)·1 (Q, the output, K and V at a_kv/a) + 6·14,336/4,096 = 21
    # (fused SwiGLU) = 34·sbh = 570,425,344 B; t = 2 with SP: 17·sbh; without flash K and V are repeated to every head
    # (g = 1) and the softmax output stays, 2·a·s/h = 64: 8 + 8 + 21 + 64 = 101·sbh; full: 2·sbh
    assert activations_per_layer(MISTRAL_7B, 1, False, "none") == 570_425_344 == 34 * SBH
    assert activations_per_layer(MISTRAL_7B, 2, True, "none") == 285_212_672
    unfused = replace(MISTRAL_7B, flash=False)
    assert activations_per_layer(unfused, 1, False, "none") == 1_694_498_816 == 101 * SBH
    assert activations_per_layer(unfused, 1, False, "selective") == 37 * SBH
    assert activations_per_layer(MISTRAL_7B, 1, False, "full") == 33_554_432
    # context parallelism shards all of it: cp = 4 at s = 32,768 is the cp = 1 layer over 4
    long = replace(MISTRAL_7B, sequence=32768)
    assert activations_per_layer(long, 2, True, "none", context=4) == activations_per_layer(long, 2, True, "none") / 4


def test_gpt3s_layer_described_keeps_table_2() -> None:
    # δ = 1, g = 1, q̂ = 1, f = 4h, GeLU: 10/t_sp + 24/t + 5as/(ht), whether the layer is described or not
    gpt3 = Shape(96, 12288, 96, 128, 2048, 51200, 1)
    for policy in RECOMPUTE_POLICIES:
        for tensor, parallel in ((1, False), (8, False), (8, True)):
            assert activations_per_layer(replace(gpt3, described=True), tensor, parallel, policy) == pytest.approx(
                activations_per_layer(gpt3, tensor, parallel, policy), rel=1e-15)
    assert activations_per_layer(gpt3, 1, False, "none") == gpt3.sbh * (34 + 5 * 96 * 2048 / 12288)


def test_an_eager_swiglu_keeps_every_operand_and_experts_count_top_k_times() -> None:
    # eager: w1, w3, silu and their product, 8f/h = 28: 8 + 5 + 28 = 41·sbh
    assert activations_per_layer(replace(MISTRAL_7B, fused_swiglu=False), 1, False, "none") == 41 * SBH
    # Mixtral-style: 8 experts, top 2 in every layer: M_mlp = 2 × 21: 8 + 5 + 42 = 55·sbh; in half the layers, the
    # mean layer's 21 × 1.5: 8 + 5 + 31.5 = 44.5·sbh
    mixtral = replace(MISTRAL_7B, experts=8, top_k=2)
    assert activations_per_layer(mixtral, 1, False, "none") == 55 * SBH
    assert activations_per_layer(replace(mixtral, moe_layers=16), 1, False, "none") == 44.5 * SBH


def test_mixtrals_parameters_active_and_stored() -> None:
    # Mixtral 8x7B (Mistral's layer, 8 experts, top 2): a token passes 41,943,040 (attention) + 2 × 176,160,768 +
    # the router 4,096 × 8 + 8,192 = 394,305,536 a layer; × 32 + 262,148,096 = 12,879,925,248 (the "12.9B active");
    # every expert stored: + 32 × 6 × 176,160,768 = 46,702,792,704 (the checkpoint's 46.7B)
    mixtral = replace(MISTRAL_7B, experts=8, top_k=2)
    assert model_parameters(mixtral) == 12_879_925_248
    assert stored_parameters(mixtral) == 46_702_792_704
    assert expert_parameters(mixtral) == 32 * 8 * 176_160_768


@worked("scaling")
def test_a_sliding_window_at_twice_its_length() -> None:
    # w = 4,096 in all 32 layers at s = 8,192: s_eff = 4,096 × 12,289/8,193 = 6,143.75 (0.75·s); attention 12 × 32 ×
    # 4,096 × s_eff = 9,663,283,248 FLOP a token against 12,884,901,888; F_model 42,663,960,576 + that =
    # 52,327,243,824 against 55,548,862,464
    assert effective_sequence(8192, 4096) == pytest.approx(6143.75, abs=1e-4)
    windowed = replace(MISTRAL_7B, sequence=8192, attention_window=4096)
    assert round(token_flops(7_241_732_096, windowed).model) == 52_327_243_824
    assert token_flops(7_241_732_096, replace(windowed, attention_window=None)).model == 55_548_862_464
    assert attention_sequence(windowed) == pytest.approx(4096 * 12289 / 8193, rel=1e-15)
    # a window no shorter than the sequence is full attention; a window in half the layers counts half of them
    assert effective_sequence(4096, 4096) == 4096 and token_flops(7_241_732_096, replace(
        MISTRAL_7B, attention_window=4096)).model == 49_106_411_520
    half = replace(windowed, window_layers=16)
    assert attention_sequence(half) == pytest.approx((4096 * 12289 / 8193 + 8192) / 2, rel=1e-15)
    # memory is unchanged: flash stores no scores, a masked kernel without it still stores s × s
    assert activations_per_layer(windowed, 1, False, "none") == activations_per_layer(
        replace(windowed, attention_window=None), 1, False, "none")


def _load_error(text: str) -> str:
    with pytest.raises(InputError) as raised:
        make_project(text)
    return str(raised.value)


def test_the_layers_load_errors_name_the_field() -> None:
    text = MISTRAL_FILE.replace("kv_heads: 8", "kv_heads: 5")
    error = _load_error(text)
    assert "inline.yaml:4:" in error and "baseline.model.kv_heads: kv-heads: 5 key/value heads" in error
    assert "window-layers: 40 layers" in _load_error(MISTRAL_FILE.replace("layer: llama", "layer: llama, "
                                                                          "window_layers: 40"))
    layout = MISTRAL_FILE.replace("heads: 32", "heads: 48").replace("kv_heads: 8", "kv_heads: 12") + (
        "design:\n  parallelism: {tensor: 8, data: 3, expert: 3}\n")
    error = _load_error(layout.replace("layer: llama", "layer: llama, experts: 8"))
    assert "design.parallelism.tensor: layout-kv-heads: tensor parallelism of 8 neither divides the 12" in error
    assert "design.parallelism.expert: layout-expert-count: expert parallelism of 3 does not divide the 8" in error
    # an incomplete shape (no vocabulary) is not held to the layer's rules
    make_project(text.replace(", vocabulary: 32000", ""))
    # t = 16 is a multiple of 8 KV heads (each group copied), t = 4 divides them
    for tensor in (4, 16):
        make_project(MISTRAL_FILE + f"design:\n  parallelism: {{tensor: {tensor}}}\n")


def test_a_departing_activation_model_names_the_layer_described() -> None:
    # Mistral at t = p = 1: 32 layers × 34·sbh = 18,253,611,008 B and the output layer's 4·sbh + 4·s·V =
    # 591,396,864 B: a measured 100 GB is κ ≈ 5.3, outside 0.5–2
    text = MISTRAL_FILE.replace("project: {title: Mistral 7B}", """project: {title: Mistral 7B}
hardware: {peak_compute: 7.9152 PFLOP/s, devices_per_node: 8, device_memory: 80 GB}""").replace(
        "baseline:\n", "baseline:\n  memory: {parameters: 7241732096, activations: 100 GB}\n") + (
        "design:\n  nodes: 1\n  parallelism: {tensor: 1, pipeline: 1, micro_batches: 1, data: 8}\n")
    analysis = analyze(make_project(text))
    assert analysis.plan_search is not None
    assert analysis.plan_search.activation_calibration == pytest.approx(100e9 / (
        32 * 34 * SBH + 4 * SBH + 4 * 4096 * 32000), rel=0.01)
    found = next(f for f in analysis.findings if f.code == "activation-model-departs")
    assert "Table 2's method gives for the layer described (layer: llama, ffn_hidden: 14336, kv_heads: 8) and this " \
           "layout: a part of it is not as described" in found.message
