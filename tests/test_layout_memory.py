"""Memory per device, one function for every layout (methods.md#memory-per-device-one-function): uneven pipeline
stages (methods.md#uneven-pipeline-stages), the runtime beside the tensors (methods.md#runtime-memory) and the
experts' share, each worked by hand; and the one figure results.json states wherever a layout's memory appears."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.columns import Layouts
from reportgen.analysis.model.layout_memory import (
    DEFAULT_RUNTIME,
    NO_RUNTIME,
    MemoryInputs,
    every_stage,
    held,
    most_loaded,
    stage_split,
)
from reportgen.analysis.model.layout_search import StepModel
from reportgen.analysis.model.transformer import Shape, shape_parameters
from tests.conftest import make_project
from tests.worked import worked

ROOT = Path(__file__).resolve().parent.parent
LLM_70B = (ROOT / "inputs" / "llm-70b-3d.yaml").read_text(encoding="utf-8")
GB = 1e9


@pytest.mark.parametrize(("layers", "pipeline", "split"), [
    (10, 4, (2, 3, 3, 2)), (80, 6, (12, 14, 14, 14, 14, 12)), (11, 6, (2, 2, 2, 2, 2, 1)), (9, 2, (5, 4)),
    (7, 6, (2, 1, 1, 1, 1, 1)), (96, 8, (12,) * 8)])
def test_megatrons_first_last_split_and_deepspeeds_uniform_one(layers: int, pipeline: int,
                                                               split: tuple[int, ...]) -> None:
    # c = ⌈L/p⌉ in the middle, r = L − (p − 2)·c split ⌈r/2⌉, ⌊r/2⌋ between the ends when r ≥ 2 (10 on 4: c = 3,
    # r = 4); else the first L mod p stages hold ⌈L/p⌉ (7 on 6: r = −1)
    assert stage_split(layers, pipeline) == split and sum(split) == layers


def test_micro_batches_held_per_stage() -> None:
    stages, p = np.arange(4), np.full(4, 4)
    assert held(stages, p, np.full(4, 8), np.full(4, 1)).tolist() == [4, 3, 2, 1]  # 1F1B: min(m, p − j)
    assert held(stages, p, np.full(4, 2), np.full(4, 1)).tolist() == [2, 2, 2, 1]  # fewer micro-batches than stages
    # interleaved, v = 2, m = 8: (2(p − j − 1) + (v − 1)·p + 1)/v = (6 + 4 + 1)/2 = 5.5 on the first stage, which is
    # p·(1 + (p − 1)/(p·v)); at m = p = 4 the warm-up covers every micro-batch: min(8, 11)/2 = 4 = m
    assert held(np.array([0]), np.array([4]), np.array([8]), np.array([2]))[0] == pytest.approx(4 * (1 + 3 / 8))
    assert held(np.array([0]), np.array([4]), np.array([4]), np.array([2]))[0] == 4.0
    assert held(np.array([0]), np.array([1]), np.array([8]), np.array([1]))[0] == 1.0  # no pipeline


SMALL = Shape(10, 4096, 32, 128, 2048, 32000, 1)  # GPT-3 layers of h = 4,096, s = 2,048, V = 32,000, b = 1


def _small(runtime=NO_RUNTIME, experts: float = 0.0, parameters: float | None = None) -> MemoryInputs:
    stored = shape_parameters(10, 4096, 32000, 2048) if parameters is None else parameters
    return MemoryInputs(stored, experts, 2.0, 2.0, 12.0, 0.0, SMALL, None, 1.0, runtime)


@worked("plan_search", "layout")
def test_uneven_stages_memory_by_hand() -> None:
    # L = 10 on p = 4 (2, 3, 3, 2), t = d = 1, m = 8, v = 1, no recompute, ZeRO-0, runtime zeroed. P (eq. (2)) =
    # 2,153,259,008; P_body/L = (P − V·h)/L = 202,218,700.8. Per layer sbh·(34 + 5as/h) = 0.9563 GB.
    assert shape_parameters(10, 4096, 32000, 2048) == 2_153_259_008
    stages = every_stage(_small(), Layouts.one(1, 4, 1, 1, 1, 8, 0, 0, 0, 1, 1), (2, 3, 3, 2))
    # states: 16 B × (L_j·P_body/L + V·h on the ends): 16 × (404,437,401.6 + 131,072,000) = 8.568 GB; 16 ×
    # 606,656,102.4 = 9.706 GB in the middle
    assert stages.states_b / GB == pytest.approx([8.568, 9.706, 9.706, 8.568], abs=5e-4)
    assert stages.in_flight.tolist() == [4, 3, 2, 1]
    # activations: per layer × L_j × held_j, the embedding's mask sbh × 4 on the first, the output layer's 4·sbh +
    # 4·s·b·V (0.262 GB of fp32 logits) on the last
    assert stages.activations_b / GB == pytest.approx([7.684, 8.607, 5.738, 2.208], abs=5e-4)
    assert stages.memory_b / GB == pytest.approx([16.252, 18.313, 15.444, 10.776], abs=5e-4)
    found = most_loaded(_small(), Layouts.one(1, 4, 1, 1, 1, 8, 0, 0, 0, 1, 1))
    assert int(found.stage[0]) == 1 and found.memory_b[0] / GB == pytest.approx(18.313, abs=5e-4)


@worked("plan_search", "layout")
def test_uneven_stages_step_by_hand() -> None:
    # the same model, 312 TFLOP/s a device at η = 0.5: a layer is f = 72h² + 12hs = 1,308,622,848 FLOP a token, the
    # logit layer 6·V·h = 786,432,000 (0.601 of a layer); one layer-micro-batch 2,048 × f / 156e12 = 17.18 ms.
    # τ ∝ 2, 3, 3, 2.601: compute m·τ̄ = 8 × 10.601/4 = 21.202 units = 0.3643 s; imbalance 8·(3 − 2.6502) = 2.798
    # units = 0.0481 s; bubble p·τ̄ − τ★ = 10.601 − 3 = 7.601 units = 0.1306 s; 0.5429 s in all
    layer = 72 * 4096**2 + 12 * 4096 * 2048
    flops = 10 * layer + 6 * 32000 * 4096
    model = StepModel(SMALL, 8, _small(), flops, np.array([flops] * 3), 312e12, 4, 1e12, 0.0, 1e12, 0.0, 0.0)
    terms = {name: float(value[0]) for name, value in
             model.terms(Layouts.one(1, 4, 1, 1, 1, 8, 0, 0, 0, 1, 1), 0.5).items()}
    unit = 2048 * layer / 156e12
    assert unit == pytest.approx(0.01718, abs=1e-5)
    assert terms["compute"] == pytest.approx(21.202 * unit, rel=1e-4)
    assert terms["imbalance"] == pytest.approx(2.798 * unit, rel=1e-3)
    assert terms["bubble"] == pytest.approx(7.601 * unit, rel=1e-4)
    phases = terms["compute"] + terms["recompute"] + terms["imbalance"] + terms["bubble"]
    assert phases == pytest.approx(0.5429, abs=1e-4)  # equal stages' bubble, (p − 1)/m of the compute, gave 0.5009 s
    assert int(model.slowest_stage(Layouts.one(1, 4, 1, 1, 1, 8, 0, 0, 0, 1, 1))[0]) == 1


@worked("plan_search", "layout")
def test_korthikantis_1t_layout_with_its_runtime() -> None:
    # 1T (L 128, h 25,600, a 160, s 2,048, V 51,200), t = 8, p = 64, d = 1, m = 512, selective recompute with
    # sequence parallelism, stage 0: states 34.08 GB, activations 28.94 GB; the recomputed scores of one layer and
    # micro-batch W = 5·a·s²·b/t = 419,430,400 B; three communicators (tensor, pipeline, embedding):
    # (63.02 + 0.42)/0.85 + 1 + 3 × 0.7 = 77.73 GB ≤ 80 GB, 14.71 GB of it runtime (23 % above the tensors)
    shape = Shape(128, 25600, 160, 160, 2048, 51200, 1)
    inputs = MemoryInputs(shape_parameters(128, 25600, 51200, 2048), 0.0, 2.0, 2.0, 12.0, 0.0, shape, None, 1.0,
                          DEFAULT_RUNTIME)
    found = most_loaded(inputs, Layouts.one(8, 64, 1, 1, 1, 512, 0, 1, 1, 1, 1))
    assert int(found.stage[0]) == 0
    assert found.states_b[0] / GB == pytest.approx(34.079, rel=2e-4)
    assert found.activations_b[0] / GB == pytest.approx(28.941, rel=1e-4)
    working = 5 * 160 * 2048**2 * 1 / 8
    assert working == 419_430_400
    tensors = found.states_b[0] + found.activations_b[0]
    assert found.memory_b[0] == pytest.approx((tensors + working) / 0.85 + 1e9 + 3 * 0.7e9, rel=1e-12)
    assert found.memory_b[0] / GB == pytest.approx(77.734, rel=1e-4)
    assert found.runtime_b[0] / GB == pytest.approx(14.71, abs=0.01)


@worked("plan_search", "layout")
def test_experts_memory_by_hand() -> None:
    # P_mem = 10e9 of which E = 8e9, L = 16, h = 4,096, V = 32,000, tied, t = p = 1, d = 64, e = 8, ZeRO-1, 2 + 2 +
    # 12 B: Ψ_dense = 1,868,928,000 + 131,072,000 = 2e9, Ψ_exp = 8e9/8 = 1e9 over 64/8 = 8 replicas:
    # 4 × 3e9 + 12 × (2e9/64 + 1e9/8) = 13.875 GB (every expert on every device would be 41.875 GB)
    shape = Shape(16, 4096, 32, 128, 2048, 32000, 1)
    inputs = MemoryInputs(10e9, 8e9, 2.0, 2.0, 12.0, 0.0, shape, None, 1.0, NO_RUNTIME)
    found = most_loaded(inputs, Layouts.one(1, 1, 64, 1, 1, 1, 1, 0, 0, 1, 8))
    assert found.states_b[0] == pytest.approx(13.875e9, rel=1e-12)
    everywhere = most_loaded(inputs, Layouts.one(1, 1, 64, 1, 1, 1, 1, 0, 0, 1, 1))
    assert everywhere.states_b[0] == pytest.approx(4 * 10e9 + 12 * 10e9 / 64, rel=1e-12)


def _project(text: str):
    return make_project(text)


def test_one_memory_figure_wherever_a_layout_appears(tmp_path: Path) -> None:
    from reportgen.pipeline import BuildOptions, build

    (tmp_path / "p.yaml").write_text(LLM_70B, encoding="utf-8")
    build(tmp_path / "p.yaml", BuildOptions(out_root=tmp_path / "out", formats=("json",)))
    document = json.loads((tmp_path / "out" / "p" / "results.json").read_text(encoding="utf-8"))
    layout, declared = document["layout"], document["plan_search"]["declared"]
    stage = layout["memory_by_stage"][layout["zero_stage"]]
    assert layout["memory_per_device_b"] == declared["memory_per_device_b"] == stage["total_b"]
    assert layout["fits"] == declared["fits"] == stage["fits"]
    analysis = analyze(make_project(LLM_70B))
    same = [row for row in analysis.plan_search.best if (row.tensor, row.pipeline, row.data, row.zero_stage,
                                                           row.recompute, row.sequence_parallel, row.virtual_stages)
            == (8, 4, 16, 1, "selective", True, 1)]
    if same:  # the search's row of the declared layout: the same function, the same float
        assert same[0].memory_per_device_b == declared["memory_per_device_b"]


def test_given_runtime_memory_replaces_the_defaults_and_is_counted_once() -> None:
    zero = LLM_70B.replace("  intra_node_latency: 2 us\n", "  intra_node_latency: 2 us\n  runtime_memory: {context: "
                           "0 GB, per_group: 0 GB, all_to_all: 0 GB, fragmentation: 0}\n")
    assert zero != LLM_70B
    bare = analyze(make_project(zero)).plan_search.declared
    defaults = analyze(make_project(LLM_70B)).plan_search.declared
    # with the four terms zeroed only the working sets remain: the last stage's 16-bit logits and the recomputed
    # layer's intermediates; the defaults add the context, four communicators (tensor, pipeline, data, embedding)
    # and 15 % fragmentation over the tensors and working sets
    tensors = bare.states_b + bare.activations_b
    working = bare.memory_per_device_b - tensors
    assert working >= 0 and defaults.memory_per_device_b == pytest.approx(
        (tensors + working) / 0.85 + 1e9 + 4 * 0.7e9, rel=1e-9)
    given = LLM_70B.replace("  intra_node_latency: 2 us\n", "  intra_node_latency: 2 us\n  runtime_memory: {context: "
                            "2 GB, per_group: 1 GB, all_to_all: 4 GB, fragmentation: 0.2}\n")
    more = analyze(make_project(given)).plan_search.declared
    assert more.memory_per_device_b == pytest.approx((tensors + working) / 0.8 + 2e9 + 4 * 1e9, rel=1e-9)


def test_declared_stages_are_read_and_checked() -> None:
    uneven = LLM_70B.replace("recompute: selective, sequence_parallel: true}",
                             "recompute: selective, sequence_parallel: true, layers_per_stage: [26, 18, 18, 18]}")
    assert uneven != LLM_70B
    declared = analyze(make_project(uneven)).plan_search.declared
    assert declared.layers_per_stage == (26, 18, 18, 18) and declared.most_loaded_stage == 0
    even = analyze(make_project(LLM_70B)).plan_search.declared
    assert declared.memory_per_device_b > even.memory_per_device_b  # 6 more layers of 4 micro-batches on stage 0
    from reportgen.errors import InputError

    with pytest.raises(InputError) as refused:
        make_project(LLM_70B.replace("sequence_parallel: true}", "sequence_parallel: true, layers_per_stage: [20, 20, "
                                     "20]}"))
    assert "layout-layers-per-stage: 3 stages holding 60 layers, for 4 pipeline stages and 80 layers" in \
        str(refused.value.problems[0])


TINY = Shape(4, 1024, 8, 128, 1000, 10000, 1, True)  # L 4, h 1,024, 8 heads of 128, s 1,000, flash attention


def _tiny_model(**options) -> StepModel:
    memory = MemoryInputs(60e6, 20e6, 2.0, 2.0, 12.0, 0.0, TINY, None, 1.0, NO_RUNTIME)
    return StepModel(TINY, 64, memory, 400e6, np.array([400e6] * 3), 100e12, 4, 100e9, 1e-6, 10e9, 5e-6, 0.0,
                     expert_layers=4, top_k=2, **options)


@worked("plan_search")
def test_the_experts_all_to_all_by_hand() -> None:
    # t = cp = p = 1, d = 4, e = 4 within one node of 4 (t·cp·e ≤ g: 100 GB/s, 1 µs), m = 16, b = 1, 4 MoE layers,
    # top-2: A = 2·b·s·h = 2,048,000 B; one exchange (e − 1)·α + (e − 1)/e·A·top_k/B = 3 µs + 30.72 µs; four a layer
    # and micro-batch: 16 × 4 × 4 × 33.72 µs = 8.632 ms
    terms = _tiny_model().terms(Layouts.one(1, 1, 4, 1, 1, 16, 0, 0, 0, 1, 4), 0.5)
    assert float(terms["expert"][0]) == pytest.approx(16 * 4 * 4 * (3e-6 + 0.75 * 2_048_000 * 2 / 100e9))
    # the experts' gradients go over d/e = 1 replica: only the dense ones are all-reduced
    dense_only = _tiny_model().terms(Layouts.one(1, 1, 4, 1, 1, 16, 0, 0, 0, 1, 1), 0.5)
    assert float(terms["data"][0]) < float(dense_only["data"][0])


@worked("plan_search")
def test_context_parallelisms_exchange_by_hand() -> None:
    # t = 1, cp = 2 within a node (t·cp ≤ g), d = 2, m = 32, b = 1, p = 1 (L★ = 4): KV = 4·b·s·d_h·a_kv/t =
    # 4 × 1,000 × 128 × 8 = 4,096,000 B; the exchange 3·(cp − 1)·α + 3·(cp − 1)/cp·KV/B = 3 µs + 61.44 µs; the
    # layer's attention on a device (b·s/cp)·12·a·d_h·s/(t·π·η) = 500 × 12,288,000 / 50e12 = 122.88 µs hides it
    layouts = Layouts.one(1, 1, 2, 1, 1, 32, 0, 0, 0, 2, 1)
    exchange = 3e-6 + 1.5 * 4_096_000 / 100e9
    assert float(_tiny_model().terms(layouts, 0.5)["context"][0]) == 0.0  # p2p: overlapped with attention
    gathered = _tiny_model(context_comm="all_gather").terms(layouts, 0.5)
    assert float(gathered["context"][0]) == pytest.approx(32 * 4 * exchange)  # all_gather: not overlapped
    # at a link of 1 GB/s the exchange outlasts the attention: the excess is exposed
    slow = replace(_tiny_model(), intra_bandwidth=1e9)
    exposed = 3e-6 + 1.5 * 4_096_000 / 1e9 - 500 * 12 * 8 * 128 * 1000 / 50e12
    assert float(slow.terms(layouts, 0.5)["context"][0]) == pytest.approx(32 * 4 * exposed)


def test_context_and_expert_degrees_are_searched_where_they_may_run() -> None:
    from reportgen.analysis.model.layout_search import SearchSpace, enumerate_layouts

    space = SearchSpace(("none",), (0,), False, 4, (1,), False, 10**6, contexts=(1, 2, 4), experts=(), expert_count=8,
                        declared_expert=1)
    layouts = enumerate_layouts(8, TINY, 4, 64, space)
    assert set(layouts.context.tolist()) == {1, 2, 4}
    assert all(int(d) % int(e) == 0 and 8 % int(e) == 0 for d, e in zip(layouts.data, layouts.expert, strict=True))
    assert set(layouts.expert.tolist()) == {1, 2, 4, 8}
    # without flash attention, or with 2·cp not dividing the sequence, only cp = 1
    assert set(enumerate_layouts(8, replace(TINY, flash=False), 4, 64, space).context.tolist()) == {1}
    assert set(enumerate_layouts(8, replace(TINY, sequence=1004), 4, 64, space).context.tolist()) == {1, 2}


def test_a_context_parallel_layout_is_checked_at_load_and_searched() -> None:
    from reportgen.errors import InputError

    with pytest.raises(InputError) as refused:
        make_project(LLM_70B.replace("{data: 16, tensor: 8, pipeline: 4,", "{data: 16, tensor: 8, pipeline: 4, "
                                     "context: 3,"))
    assert "context-sequence: 2·cp = 6 does not divide the sequence of 4,096 tokens" in str(refused.value)
    with pytest.raises(InputError) as refused:
        make_project(LLM_70B.replace("{data: 16, tensor: 8, pipeline: 4,", "{data: 8, tensor: 8, pipeline: 4, "
                                     "context: 2,").replace("flash_attention: true", "flash_attention: false"))
    assert "context-needs-flash" in str(refused.value)
    text = LLM_70B.replace("{data: 16, tensor: 8, pipeline: 4,", "{data: 8, tensor: 8, pipeline: 4, context: 2, "
                           "context_comm: all_gather,") + "\nplan_search: {context_parallel: [1, 2], top: 50}\n"
    analysis = analyze(make_project(text))
    assert analysis.layout.devices == 512 and analysis.layout.context == 2
    declared = analysis.plan_search.declared
    assert declared.step is not None and declared.step.context_s > 0  # all_gather: never hidden
    assert {row.context_parallel for row in analysis.plan_search.best} <= {1, 2}


def test_the_expert_degree_is_searched_for_a_mixture_of_experts() -> None:
    moe = LLM_70B.replace("    parameters: 70e9             # × 16 B = 1.12 TB\n",
                          "    parameters: 70e9             # × 16 B = 1.12 TB\n    expert_parameters: 56e9\n")
    assert moe != LLM_70B
    analysis = analyze(make_project(moe + "\nplan_search: {expert_parallel: [1, 2, 4, 8], top: 20}\n"))
    rows = analysis.plan_search.best
    assert rows and {row.expert_parallel for row in rows} - {1}  # e > 1 shards the experts' state, so it ranks
    assert all(row.data % row.expert_parallel == 0 for row in rows)
    sharded = [row for row in rows if row.expert_parallel > 1]
    assert all(row.step.expert_s > 0 for row in sharded)


def test_the_micro_batch_saturation_is_an_option() -> None:
    text = LLM_70B + "\nplan_search: {micro_batch_saturation: 1e6}\n"
    assert analyze(make_project(text)).plan_search is not None


@worked("plan_search")
def test_micro_batch_efficiency_fitted_from_two_sizes_by_hand() -> None:
    from reportgen.analysis.model.micro_batch import fit_saturation, relative

    # GPT-3 2.7B's shape (L 32, h 2,560, s 2,048, V 51,200) on 8 A100 of 312 TFLOP/s, t = p = 1, d = 8, Y = 0: runs
    # of 60,000 and 69,000 tokens/s at b = 1 and 4; F_model = 17,937,039,360 FLOP a token, so C_n/step_n is the MFU,
    # 43.12 % and 49.59 %. 1.15 = (1 + u)/(1 + u/4) gives x₀/x₁ = 0.2105 with x₁ = 2,048 × 2,560 = 5,242,880
    flops = 6 * shape_parameters(32, 2560, 51200, 2048) + 12 * 32 * 2560 * 2048
    assert flops == 17_937_039_360
    mfu = np.array([60_000, 69_000]) * flops / (8 * 312e12)
    x1 = 2048 * 2560
    fit = fit_saturation(mfu, np.zeros(2), np.ones(2), np.array([x1, 4 * x1]))
    assert fit.saturation == pytest.approx(1_103_764, rel=1e-4)
    assert fit.saturation / x1 == pytest.approx(0.2105, abs=1e-4)
    assert 1 / fit.inverse_peak_share == pytest.approx(0.5220, abs=1e-4)  # η_∞
    assert fit.eta(x1) == pytest.approx(0.4312, abs=1e-4)  # η at b = 1
    rho = float(relative(2 * x1, x1, fit.saturation))  # b = 2: 0.9048/0.8261
    assert rho == pytest.approx(1.0952, abs=1e-4) and 60_000 * rho == pytest.approx(65_714, abs=2)


def test_runs_at_two_micro_batch_sizes_calibrate_the_search() -> None:
    text = """
project: {title: T}
hardware: {peak_compute: 2.496 PFLOP/s, devices_per_node: 8, device_memory: 80 GB, intra_node_bandwidth: 300 GB/s,
           intra_node_latency: 2 us, network_bandwidth: 200 GB/s, network_latency: 5 us}
baseline:
  model: {layers: 32, hidden: 2560, sequence: 2048, heads: 32, vocabulary: 51200, micro_batch: 1, global_batch: 512}
design:
  nodes: 1
  parallelism: {data: 8, micro_batches: 64, overlap: 1}
scaling:
  work_per_run: 1e9 token
  runs: [{nodes: 1, throughput: 60000 token/s}, {nodes: 2, throughput: 138000 token/s, micro_batch: 4}]
plan_search: {micro_batch: [1, 2], zero_stages: [0]}
"""
    search = analyze(make_project(text)).plan_search
    micro = search.micro_batch_efficiency
    assert micro.source == "fitted" and micro.saturation == pytest.approx(1_103_764, rel=2e-3)
    assert search.efficiency.value == pytest.approx(0.4312, abs=1e-3)
    assert {row.micro_batch: row.micro_batch_efficiency for row in search.best}.get(2) == pytest.approx(1.0952,
                                                                                                        abs=1e-3)
    inverted = text.replace("throughput: 138000 token/s", "throughput: 100000 token/s")
    analysis = analyze(make_project(inverted))
    assert analysis.plan_search.micro_batch_efficiency.inverted == (1.0, 2.0)
    assert "microbatch-efficiency-inverted" in {f.code for f in analysis.findings}
    default = analyze(make_project(text.replace(", micro_batch: 4}", "}"))).plan_search.micro_batch_efficiency
    assert default.source == "default" and default.saturation == 2_739_137


def test_the_declared_layouts_stages_and_runtime_are_reported(tmp_path: Path) -> None:
    from reportgen.pipeline import BuildOptions, build

    declared = analyze(make_project(LLM_70B)).plan_search.declared
    assert [stage.layers for stage in declared.stages] == [20, 20, 20, 20]
    assert [stage.in_flight for stage in declared.stages] == [4, 3, 2, 1]  # 1F1B: min(m, p − j)
    first = declared.stages[0]
    assert first.memory_per_device_b == declared.memory_per_device_b  # stage 0 is the most loaded
    assert first.states_b + first.activations_b + first.runtime_b == pytest.approx(first.memory_per_device_b)
    # the logit layer makes the last stage the slowest: its work is the first's and 6·V·h = 1,572,864,000 more
    assert declared.slowest_stage == 3
    assert declared.stages[3].work_per_token - declared.stages[0].work_per_token == pytest.approx(6 * 32000 * 8192)
    parts = declared.runtime_parts
    # four communicators: tensor, pipeline, data and the embedding's
    assert (parts.context_b, parts.communicators, parts.per_group_b) == (1e9, 4, 0.7e9)
    assert parts.total_b == pytest.approx(declared.runtime_b)
    # fragmentation is φ/(1 − φ) of the tensors and working sets
    tensors = first.states_b + first.activations_b + parts.working_b
    assert parts.fragmentation_b == pytest.approx(tensors * 0.15 / 0.85)
    (tmp_path / "p.yaml").write_text(LLM_70B, encoding="utf-8")
    build(tmp_path / "p.yaml", BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    page = (tmp_path / "out" / "p" / "report.html").read_text(encoding="utf-8")
    assert "most loaded" in page and "slowest" in page and "4 communicators" in page


def test_an_fp8_plan_times_its_weight_gemms_at_the_fp8_peak() -> None:
    from reportgen.analysis.measured.utilization import precision_split
    from reportgen.analysis.model.model_shape import shape_of
    from reportgen.analysis.model.transformer import token_flops

    text = LLM_70B.replace("  peak_compute:", "  peak_flops: {fp8: 15.8 PFLOP/s}\n  peak_compute:")
    assert text != LLM_70B
    bf16 = analyze(make_project(text)).plan_search
    fp8_project = make_project(text + "\nplan_search: {precision: fp8}\n")
    fp8 = analyze(fp8_project).plan_search
    assert fp8.inputs.precision == "fp8" and fp8.inputs.peaks_per_device["fp8"] == pytest.approx(15.8e15 / 8)
    # the declared layout's compute at η = 1 scales as the split's seconds a token over F_model at BF16's peak
    split = precision_split(fp8_project.hardware, "fp8")
    flops = token_flops(fp8.inputs.parameters, shape_of(fp8_project))
    expected = split.model_seconds(flops) / (flops.model / split.other_flops_per_s)
    fp8_work = fp8.declared.step.compute_s * fp8.efficiency.value
    ratio = fp8_work / (bf16.declared.step.compute_s * bf16.efficiency.value)
    assert ratio == pytest.approx(expected, rel=1e-9) and ratio < 0.7
    assert "precision-extrapolated" in {f.code for f in analyze(fp8_project).findings}
    assert ", timed at FP8" in analyze(fp8_project).summary.plan_search


@worked("plan_search")
def test_context_parallelism_worked_on_mistral() -> None:
    from reportgen.analysis.model.transformer import activations_per_layer

    # Mistral 7B at s = 32,768, b = 1, t = 2 with SP, cp = 4, one node of 8 H100 (450 GB/s, 2 µs, 989.4 TFLOP/s,
    # η = 0.5): KV = 4·b·s·d_h·a_kv/t = 67,108,864 B, the exchange 3·(cp − 1)/cp·KV = 150,994,944 B, T_cp = 18 µs +
    # 335.5 µs = 353.5 µs against T_att = 13.34 ms of attention: hidden, context_s = 0
    mistral = Shape(32, 4096, 32, 128, 32768, 32000, 1, True, kv_heads=8, ffn_hidden=14336, mlp="swiglu",
                    norm="rmsnorm", dropout=False, tied_embeddings=False, position="rotary", bias=False,
                    described=True)
    assert 4 * 32768 * 128 * 8 / 2 == 67_108_864 and 3 * 3 / 4 * 67_108_864 == 150_994_944
    memory = MemoryInputs(7.24e9, 0.0, 2.0, 2.0, 12.0, 0.0, mistral, None, 1.0, NO_RUNTIME, tied_embeddings=False,
                          dropout=False)
    model = StepModel(mistral, 8, memory, 1e9, np.array([1e9] * 3), 989.4e12, 8, 450e9, 2e-6, 50e9, 5e-6, 0.0)
    layouts = Layouts.one(2, 1, 1, 1, 1, 8, 0, 0, 1, 4, 1)
    exchange = 3 * 3 * 2e-6 + 150_994_944 / 450e9
    attention = (32768 / 4) * 12 * 32 * 128 * 32768 / (2 * 989.4e12 * 0.5)
    assert exchange == pytest.approx(353.5e-6, rel=1e-3) and attention == pytest.approx(13.34e-3, rel=1e-3)
    assert float(model.terms(layouts, 0.5)["context"][0]) == 0.0
    # activations: 17·sbh a layer at t = 2 with SP, 2,281,701,376 B at cp = 1 and a quarter at cp = 4
    per_layer = activations_per_layer(mistral, 2, True, "none")
    assert per_layer == pytest.approx(2_281_701_376) and per_layer / 4 == pytest.approx(570_425_344)
