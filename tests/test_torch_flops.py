"""The FLOP model held against torch's own count of a real training step (methods.md#flops-mfu-and-hfu).

tests/data/torch-cpu-gpt/ was written by bench/torch_flops.py: a 4-layer GPT (h = 256, 8 heads, s = 256, V = 8,192,
micro-batches of 8) trained on this project's CPU machine with torch 2.13, its step's FLOPs counted by
FlopCounterMode without and with full recomputation, and one run of 8 timed steps in reportgen's CSV form."""

from __future__ import annotations

import json

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.transformer import Shape, token_flops
from tests.conftest import ROOT, make_project

DATA = ROOT / "tests" / "data" / "torch-cpu-gpt"
STEP = json.loads((DATA / "step.json").read_text(encoding="utf-8"))
SHAPE = STEP["shape"]
L, H, S, V = SHAPE["layers"], SHAPE["hidden"], SHAPE["sequence"], SHAPE["vocabulary"]


def model_shape() -> Shape:
    return Shape(L, H, SHAPE["heads"], H / SHAPE["heads"], S, V, SHAPE["micro_batch"])


def test_the_model_counts_what_the_counter_counts_but_the_parameters_without_a_matmul() -> None:
    # P = 5,322,240 (torch's count): 12·L·h² = 3,145,728 in the layers' four linears, V·h = 2,097,152 in the tied
    # embedding, and 79,360 in biases, LayerNorms and the position embedding, which multiply nothing. The counter
    # sees 6 FLOP a token for each matmul weight and 12·L·h·s for attention; F_model = 6P + 12·L·h·s counts all
    # of P: 35,079,168 FLOP a token against the counter's 34,602,999, 1.4 % more (this small model's position
    # embedding is 1.2 % of P; in a large one the share is below 0.1 %).
    parameters = STEP["none"]["parameters"]
    assert parameters == 12 * L * H**2 + 13 * L * H + (V + S) * H + 2 * H  # eq. (2)'s terms and the final LayerNorm
    tokens = STEP["tokens_per_step"]
    counted = STEP["none"]["flops_per_step"] / tokens
    flops = token_flops(parameters, model_shape())
    assert flops.model == 6 * parameters + 12 * L * H * S
    without_a_matmul = parameters - (12 * L * H**2 + V * H)
    assert counted == pytest.approx(flops.model - 6 * without_a_matmul, rel=1e-12)  # exactly what it counts
    assert counted / flops.model == pytest.approx(1, abs=0.015)


def test_full_recomputation_adds_one_forward_of_every_layer() -> None:
    # the counter's extra FLOPs under full recomputation are one forward of each layer: 24·h² + 4·h·s a token,
    # 7,340,032 for 4 layers; the model's 2·(P − V·h) + 4·L·h·s = 7,498,752 also counts the 79,360 parameters that
    # multiply nothing, twice: 2.1 % more here, below 0.1 % in a large model
    parameters = STEP["full"]["parameters"]
    tokens = STEP["tokens_per_step"]
    extra = (STEP["full"]["flops_per_step"] - STEP["none"]["flops_per_step"]) / tokens
    assert extra == pytest.approx(L * (24 * H**2 + 4 * H * S), rel=1e-12)
    flops = token_flops(parameters, model_shape())
    modelled = flops.hardware["full"] - flops.model
    assert modelled - extra == pytest.approx(2 * (parameters - 12 * L * H**2 - V * H), rel=1e-12)
    assert extra / modelled == pytest.approx(1, abs=0.025)


def test_the_measured_run_gives_its_mfu_and_its_counted_hfu() -> None:
    # runs.csv: 8 steps' wall time, their 16,384 tokens and their counted FLOPs; the peak is the machine's large-matmul
    # rate measured beside them (a floor under the nominal peak, so these are upper bounds)
    peak = STEP["matmul_flops_per_s"]
    text = f"""
project: {{title: A small GPT on a CPU}}
hardware: {{peak_compute: {peak:.6g} FLOP/s, devices_per_node: 1}}
baseline:
  training: {{parameters: {STEP['none']['parameters']:.0f}, tokens: 1e9 token}}
  model: {{layers: {L}, hidden: {H}, sequence: {S}, heads: {SHAPE['heads']}, vocabulary: {V},
          micro_batch: {SHAPE['micro_batch']}}}
scaling: {{file: tests/data/torch-cpu-gpt/runs.csv}}
"""
    row = analyze(make_project(text)).scaling.rows[0]
    steps = STEP["steps_timed"]
    wall = STEP["none"]["step_s"] * steps
    tokens = STEP["tokens_per_step"] * steps
    flops = token_flops(STEP["none"]["parameters"], model_shape())
    assert row.tokens == tokens and row.hfu_source == "counted"
    assert row.mfu == pytest.approx(tokens * flops.model / (wall * float(f"{peak:.6g}")), rel=1e-5)
    assert row.hfu == pytest.approx(STEP["none"]["flops_per_step"] * steps / (wall * float(f"{peak:.6g}")), rel=1e-5)
    assert 0 < row.hfu < 1 and 0 < row.mfu < 1
