"""The design lint: each rule fires on the design it describes, and only there."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from tests.conftest import make_project
from tests.worked import worked

MEMORY_BOUND = """
project: {title: T}
hardware: {peak_compute: 100 TFLOP/s, memory_capacity: 80 GB}
baseline: {memory: {parameters: 1.0e10}}
"""


def codes(text: str) -> dict[str, str]:
    return {f.code: f.severity for f in analyze(make_project(text)).findings}


def slots(**choices: str) -> str:
    lines = "".join(f"    {name}: {{choice: {value}, why: reasons}}\n" for name, value in choices.items())
    return "design:\n  slots:\n" + lines


@worked("findings")
def test_replica_cannot_fit_and_wrong_axis() -> None:
    found = codes(MEMORY_BOUND + "design: {axis: distribute data, slots: {partitioning: "
                  "{choice: split data, why: x}}}\n")
    assert found["replica-cannot-fit"] == "error" and found["wrong-axis"] == "error"
    assert "replica-cannot-fit" not in codes(MEMORY_BOUND + slots(partitioning="[shard model, split data]"))


def test_allreduce_needs_replica() -> None:
    assert codes(MEMORY_BOUND + slots(partitioning="shard model", communication="all-reduce"))[
        "allreduce-needs-replica"] == "warning"
    assert "allreduce-needs-replica" not in codes(
        MEMORY_BOUND + slots(partitioning="shard model", communication="[all-reduce, scatter-gather]"))


def test_needless_model_split() -> None:
    fits = """
project: {title: T}
hardware: {peak_compute: 100 TFLOP/s, memory_capacity: 80 GB}
baseline: {memory: {parameters: 1.0e9}, steps: [{name: s, time: 1 s, flops: 1.0e14 FLOP, bytes: 1 GB}]}
"""
    assert codes(fits + slots(partitioning="shard model"))["needless-model-split"] == "warning"


def test_sync_without_straggler_plan() -> None:
    runs = "scaling: {time_unit: s, runs: [{nodes: 1, compute: 100, communication: 0, idle: 0}, " \
           "{nodes: 4, compute: 25, communication: 2, idle: 8}]}\n"  # idle 8/35 = 23 %
    design = slots(consistency="synchronous", load_balancing="even sharding")
    assert codes("project: {title: T}\n" + runs + design)["sync-without-straggler-plan"] == "warning"
    planned = slots(consistency="synchronous", load_balancing="[even sharding, straggler mitigation]")
    assert "sync-without-straggler-plan" not in codes("project: {title: T}\n" + runs + planned)


def test_unjustified_empty_and_free_text_slots() -> None:
    found = analyze(make_project("project: {title: T}\ndesign:\n  slots:\n    partitioning: {choice: split date}\n"))
    by_code = {f.code: f for f in found.findings}
    assert by_code["unjustified-slot"].severity == "warning"
    assert "did you mean `split data`" in by_code["free-text-choice"].message
    assert by_code["empty-slot"].severity == "info"


@pytest.mark.parametrize(("nodes", "expected"), [(20, set()), (28, {"comm-dominated"}),
                                                 (40, {"past-optimum", "comm-dominated"})])
def test_past_optimum_and_comm_dominated(nodes: int, expected: set[str]) -> None:
    # α = 1 ms, β = 10 ms, T = 1 s: T_p = 0.98/p + 0.001 p + const, so p* = 31;
    # R(p) = 0.001 p (p − 1) + 0.02 (p − 1): R(23) = 0.946, R(24) = 1.012, so p_dom = 24.
    found = codes(f"project: {{title: T}}\nprediction: {{t_comp: 1 s, alpha: 1 ms, beta: 10 ms}}\n"
                  f"design: {{nodes: {nodes}}}\n")
    assert expected <= set(found) and not ({"past-optimum", "comm-dominated"} - expected) & set(found)


def test_a_step_above_the_roof_is_impossible() -> None:
    # 1e14 FLOP in 0.5 s is 200 TFLOP/s on a 100 TFLOP/s node: 200 % of the roof
    found = codes("project: {title: T}\nhardware: {peak_compute: 100 TFLOP/s, memory_bandwidth: 1 TB/s}\n"
                  "baseline: {steps: [{name: s, time: 0.5 s, flops: 1e14 FLOP, bytes: 1e10 B}]}\n")
    assert found["above-roof"] == "warning"
    fine = codes("project: {title: T}\nhardware: {peak_compute: 100 TFLOP/s, memory_bandwidth: 1 TB/s}\n"
                 "baseline: {steps: [{name: s, time: 2 s, flops: 1e14 FLOP, bytes: 1e10 B}]}\n")
    assert "above-roof" not in fine


def test_too_few_nodes_for_the_state() -> None:
    assert codes(MEMORY_BOUND + "design: {nodes: 1}\n")["too-few-nodes"] == "error"  # 160 GB needs 2
