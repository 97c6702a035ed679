"""Mixture of experts (docs/methods.md#mixture-of-experts): dense and expert states apart, the all-to-all term, the
expert degree against the data-parallel one; and measurements outranking the memory model
(docs/methods.md#measurements-outrank-the-memory-model)."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.layout import analyze_layout
from tests.conftest import make_project

GB = 1e9


def moe(stage: int = 1, *, data: int = 64, expert: int = 8, experts: str = "expert_parameters: 8e9, ",
        runs: str = "") -> str:
    """8 experts of 1B parameters beside 2B dense, 16 B each (mixed-precision Adam), on 80 GB devices."""
    return (f"project: {{title: MoE}}\n"
            f"hardware: {{devices_per_node: 8, device_memory: 80 GB, network_bandwidth: 50 GB/s,\n"
            f"           intra_node_bandwidth: 450 GB/s, network_latency: 10 us, intra_node_latency: 2 us}}\n"
            f"baseline:\n  memory: {{parameters: 1e10, {experts}activations: 0 GB}}\n"
            f"  model: {{layers: 24, hidden: 4096, sequence: 2048, micro_batch: 1, moe_layers: 12, top_k: 2}}\n"
            f"design: {{nodes: {data // 8}, parallelism: {{data: {data}, expert: {expert}, zero_stage: {stage}, "
            f"micro_batches: 4}}}}\n"
            f"prediction: {{t_comp: 10 s}}\n{runs}")


def test_each_device_holds_the_dense_state_and_its_own_experts() -> None:
    # Ψ_dense = 2e9, Ψ_exp = 8e9 / 8 = 1e9, r = 64 / 8 = 8. Stage 1: (2 + 2)·(2e9 + 1e9) + 12·(2e9/64 + 1e9/8)
    # = 12e9 + 1.875e9 = 13.875 GB. Stage 3: 16·(2e9/64 + 1e9/8) = 2.5 GB. Stage 0: 16·3e9 = 48 GB
    layout = analyze_layout(make_project(moe()), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    assert layout is not None and layout.expert == 8 and layout.expert_divides
    totals = [stage.total_b / GB for stage in layout.memory]
    assert totals == pytest.approx([48.0, 13.875, 2 * 3 + 14 * (2 / 64 + 1 / 8), 16 * (2 / 64 + 1 / 8)])
    # every expert on every device, as a model without experts has it: (2 + 2)·10e9 + 12·10e9/64 = 41.875 GB
    dense = analyze_layout(make_project(moe(experts="")), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    assert dense is not None and dense.memory[1].total_b / GB == pytest.approx(41.875)


def test_the_smallest_degree_is_a_multiple_of_the_experts() -> None:
    # stage 0 keeps everything: 48 GB ≤ 80 GB at any d, so d = e = 8. Stage 3 on 80 GB: 16·(Ψ_dense + 8·Ψ_exp)/d =
    # 16·1e10/d ≤ 80e9 → d ≥ 2, rounded up to a multiple of 8: 8
    layout = analyze_layout(make_project(moe()), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    assert layout is not None and layout.min_data_for_stage[0] == 8 and layout.min_data_for_stage[3] == 8
    small = analyze_layout(make_project(moe().replace("80 GB", "2 GB")), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    # on 2 GB: stage 3 needs 16e10 / d ≤ 2e9 → d ≥ 80, a multiple of 8: 80
    assert small is not None and small.min_data_for_stage[3] == 80


def test_the_all_to_all_term_by_hand() -> None:
    # e = 8 ≤ 8 devices per node: the intra-node link. A = 1 · 2048 · 4096 · 2 B = 16,777,216 B; per exchange
    # (e − 1)·α_intra + (e − 1)/e · A · top_k / B_intra = 7 · 2e-6 + 7/8 · 16,777,216 · 2 / 450e9 = 14e-6 +
    # 65.2488e-6 s; × 4 · (12 moe layers / 1 stage) × 4 micro-batches = 192 exchanges
    layout = analyze_layout(make_project(moe()), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    assert layout is not None and layout.step is not None
    per_exchange = 7 * 2e-6 + 7 / 8 * 16_777_216 * 2 / 450e9
    assert layout.step.expert_s == pytest.approx(192 * per_exchange)
    assert layout.step.total_s == pytest.approx(layout.step.compute_s + layout.step.bubble_s + layout.step.tensor_s
                                                + layout.step.pipeline_s + layout.step.data_s + layout.step.expert_s)
    across = analyze_layout(make_project(moe(expert=16)), t_comp=10.0, alpha=1e-5, max_nodes=4096)
    # e = 16 spans two nodes: the network's α and B
    assert across is not None and across.step is not None
    assert across.step.expert_s == pytest.approx(192 * (15 * 1e-5 + 15 / 16 * 16_777_216 * 2 / 50e9))


def test_an_expert_degree_that_does_not_divide_the_data_degree_is_an_error() -> None:
    analysis = analyze(make_project(moe(data=64, expert=24)))
    finding = next(f for f in analysis.findings if f.code == "layout-expert")
    assert finding.severity == "error" and "e = 24" in finding.message and "d = 64" in finding.message
    assert analysis.summary.blocker is not None and "cannot start" in analysis.summary.blocker


RUNS = """scaling:
  time_unit: s
  runs: [{nodes: 8, time: 1000}, {nodes: 16, time: 520}, {nodes: 32, time: 280}, {nodes: 64, time: 160}]
"""


def test_runs_refute_a_memory_model_that_puts_every_expert_on_every_device() -> None:
    # without expert_parameters the model puts 10e9 parameters on every device: 16·10e9 = 160 GB at stage 0 over
    # 80 GB; four runs up to the plan's 8 nodes and beyond exist, so the design ran: a warning, never "cannot start"
    text = moe(0, experts="", runs=RUNS).replace("design: {", "design: {slots: {partitioning: {choice: [shard "
                                                                "model], detail: experts over 8 ranks}}, ")
    analysis = analyze(make_project(text))
    codes = [f.code for f in analysis.findings]
    assert "layout-does-not-fit" not in codes and "memory-model-refuted" in codes
    refuted = next(f for f in analysis.findings if f.code == "memory-model-refuted")
    assert refuted.severity == "warning"
    assert refuted.message.startswith("1 run at 8 nodes exists, yet the memory model says")
    assert "every device holds every expert" in refuted.message and "160 GB per device" in refuted.message
    assert analysis.summary.blocker is None


def test_without_runs_the_memory_error_stands() -> None:
    analysis = analyze(make_project(moe(0, experts="")))
    assert any(f.code == "layout-does-not-fit" and f.severity == "error" for f in analysis.findings)
    assert analysis.summary.blocker is not None


def test_an_explicit_pattern_is_the_model_beside_a_layout() -> None:
    # prediction.pattern: all-to-all names the model; the layout's step is shown beside it, not instead of it
    text = moe(runs=RUNS).replace("prediction: {t_comp: 10 s}", "prediction: {t_comp: 10 s, pattern: all-to-all, "
                                  "exchanges: 48, message_bytes: 16 MB}")
    analysis = analyze(make_project(text))
    assert analysis.prediction.pattern.name == "all-to-all"
    check = analysis.model_check
    assert check is not None
    row = next(r for r in check.rows if r.nodes == 64)
    reference = analysis.prediction.at(8).speedup
    assert row.predicted_speedup == pytest.approx(analysis.prediction.at(64).speedup / reference)
    assert analysis.layout is not None and analysis.layout.step is not None  # still computed and shown
