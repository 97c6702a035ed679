"""The design lint: each rule fires on the design it describes, and only there."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.findings import Finding
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


@worked("lint", "findings")
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


# π = 201.3 TFLOP/s over β = 1 TB/s: the ridge I* = 201.3 FLOP/B
# (docs/methods.md#1-diagnosis-which-resource-runs-out-first)
RIDGE = "project: {title: T}\nhardware: {peak_compute: 201.3 TFLOP/s, memory_bandwidth: 1 TB/s}\n"


def _findings(flops: str, axis: str) -> dict[str, Finding]:
    text = RIDGE + (f"baseline: {{steps: [{{name: attention, time: 2 s, flops: {flops}, bytes: 1.0e12 B}}]}}\n"
                    f"design: {{axis: {axis}}}\n")
    return {f.code: f for f in analyze(make_project(text)).findings}


@worked("lint", "findings")
@pytest.mark.parametrize(("flops", "axis", "where"), [
    # I = 2e14 / 1e12 = 200; (201.3 − 200) / 201.3 = 0.646 %: memory-bandwidth binds, distribute training declared
    ("2.0e14 FLOP", "distribute training", "0.6 % below the ridge at 201.3"),
    # I = 220; (220 − 201.3) / 201.3 = 9.29 %: compute binds, distribute the model declared
    ("2.2e14 FLOP", "distribute the model", "9 % above the ridge at 201.3"),
    # I = 201.3 exactly
    ("2.013e14 FLOP", "distribute the model", "at the ridge, 201.3"),
])
def test_a_balanced_step_raises_ridge_balanced_and_no_wrong_axis(flops: str, axis: str, where: str) -> None:
    found = _findings(flops, axis)
    assert "wrong-axis" not in found
    balanced = found["ridge-balanced"]
    intensity = {"2.0e14 FLOP": "200", "2.2e14 FLOP": "220", "2.013e14 FLOP": "201.3"}[flops]
    assert balanced.severity == "info" and balanced.path == "baseline.steps[0]"
    assert balanced.message == (f"step `attention` has I = {intensity} FLOP/B, {where}: compute and memory "
                                "bandwidth bind together, and splitting the work or the model lifts both")


def test_a_step_off_the_ridge_raises_no_ridge_balanced() -> None:
    # I = 150 < 0.9 × 201.3 = 181.17: memory-bandwidth alone binds
    found = _findings("1.5e14 FLOP", "distribute training")
    assert "ridge-balanced" not in found and "wrong-axis" in found


def test_a_balanced_step_under_a_deadline_it_meets_raises_no_ridge_balanced() -> None:
    # The step's I = 200 is in the band, but one machine meets the deadline: 6 × 1e9 × 1e6 / (0.5 × 2.013e14)
    # = 59.6 s < 10 min, so no ceiling binds and neither axis is called for
    text = RIDGE + ("baseline:\n  steps: [{name: attention, time: 2 s, flops: 2.0e14 FLOP, bytes: 1.0e12 B}]\n"
                    "  training: {parameters: 1.0e9, tokens: 1.0e6, mfu: 0.5, deadline: 10 min}\n")
    analysis = analyze(make_project(text))
    assert analysis.diagnosis.balanced and analysis.diagnosis.binding_ceiling == "none"
    assert "ridge-balanced" not in {f.code for f in analysis.findings}


def test_a_bandwidth_ceiling_gives_the_bandwidth_reason() -> None:
    # I = 150: memory-bandwidth binds (floors 0.745 s against 1 s), which calls for distribute the model
    message = _findings("1.5e14 FLOP", "distribute training")["wrong-axis"].message
    assert "the binding ceiling is memory-bandwidth" in message
    assert message.endswith("every replica streams the whole model's bytes through one device's memory each step: "
                            "replicas multiply throughput, not the bandwidth a step gets; sharding the model (tensor "
                            "parallelism) divides the bytes each device reads")
    assert "never capacity" not in message


def test_a_capacity_ceiling_gives_the_capacity_reason() -> None:
    message = {f.code: f for f in analyze(make_project(MEMORY_BOUND + "design: {axis: distribute data}\n")).findings}[
        "wrong-axis"].message
    assert "the binding ceiling is memory-capacity" in message
    assert message.endswith("replicating a model whose state does not fit one device fails on every replica: data "
                            "parallelism multiplies throughput, never capacity")


def test_every_ceiling_has_a_reason() -> None:
    from typing import get_args

    from reportgen.analysis.model.ceilings import CEILING, CEILINGS, CeilingName, cure

    assert [kind.name for kind in CEILINGS] == list(CEILING) and set(CEILING) == set(get_args(CeilingName))
    assert all(kind.failure and kind.tools and kind.axis for kind in CEILINGS)
    # capacity and bandwidth share an axis but not a reason (the bandwidth ceiling once read the capacity reason)
    assert CEILING["memory-bandwidth"].axis == CEILING["memory-capacity"].axis
    assert CEILING["memory-bandwidth"].failure != CEILING["memory-capacity"].failure
    # a service's compute ceiling is cured by replicas: the serving axis and reason; a data job's by splitting data
    assert cure("compute", "inference") == CEILING["serving"]
    assert cure("compute", "data-processing") == CEILING["data-io"]
    assert cure("compute", "training") == CEILING["compute"]
    assert cure("memory-bandwidth", "inference") == CEILING["memory-bandwidth"]
