"""A plan search with nothing to rank never fails (methods.md#a-search-with-nothing-to-rank): enumerate → fitting by
memory → stepped → ranked, each stage counted, each empty stage said by its own finding, never by an exception."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.columns import each_distinct
from reportgen.analysis.model.layout_search import SearchSpace, enumerate_layouts, why_none_enumerated
from reportgen.analysis.model.transformer import Shape
from tests.conftest import make_project
from tests.worked import worked

ROOT = Path(__file__).resolve().parent.parent
LLM_70B = (ROOT / "inputs" / "llm-70b-3d.yaml").read_text(encoding="utf-8")
ONE_POLICY = SearchSpace(("none",), (0,), False, 8, (1,), False, 10**6)


def _codes(analysis) -> set[str]:
    return {finding.code for finding in analysis.findings}


def test_a_term_of_no_layout_is_an_empty_column() -> None:
    # numpy's min() of an empty column raised "zero-size array to reduction operation minimum"
    empty = np.zeros(0, dtype=np.int64)
    assert each_distinct(lambda t, p: t * p, empty, empty).shape == (0,)


def test_the_rule_after_which_no_layout_was_left_is_named_in_order() -> None:
    # the tensor degree: max_tensor 0 leaves no t (t = 1 otherwise divides every node and every head count)
    shape = Shape(4, 1024, 7, 128, 1000, 10000, 1)
    no_tensor = SearchSpace(("none",), (0,), False, 0, (1,), False, 10**6)
    assert len(enumerate_layouts(8, shape, 4, 64, no_tensor)) == 0
    assert why_none_enumerated(8, shape, 4, 64, no_tensor) == (
        "no tensor degree t ≤ 0 divides both the 4 devices of a node and the 7 heads")
    # the batch: 384 devices, t | 8 and p ≤ 80 dividing 384/t, split evenly or by Megatron's first/last rule: the
    # widest t·p is 8 × 16 = 128 (p = 48 and 24 leave the end stages fewer than 2 layers), so d ≥ 3, and no d that
    # is left divides a global batch of 7
    seventy = Shape(80, 8192, 64, 128, 4096, 32000, 1)
    assert len(enumerate_layouts(384, seventy, 8, 7, ONE_POLICY)) == 0
    assert why_none_enumerated(384, seventy, 8, 7, ONE_POLICY) == (
        "t·p is at most 8 × 16 = 128 (t ≤ g, p ≤ L = 80), so d ≥ 3, and no b·d (b = 1) divides the global batch "
        "of 7")
    # 1,024 sequences: d = 4 under t × p = 8 × 12 (12 stages of 7 layers but the end ones of 5) divides them
    assert len(enumerate_layouts(384, seventy, 8, 1024, ONE_POLICY)) > 0


def _seventy(replacements: dict[str, str], extra: str = "") -> str:
    text = LLM_70B
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    return text + extra


@pytest.mark.parametrize("replacements, extra", [
    ({"  nodes: 64\n": "  nodes: 48\n"}, ""),  # 48 nodes: only uneven pipelines leave a d dividing the batch
    ({"  nodes: 64\n": "  nodes: 1\n", "{data: 16, tensor: 8, pipeline: 4,": "{data: 1, tensor: 8, pipeline: 1,"},
     ""),  # one node at t = 8: nothing fits
    ({}, "\nplan_search:\n  scales: [1048576]\n"),  # 2²⁰ nodes priced for the cheapest
], ids=["48-nodes", "one-node-t8", "scales-2^20"])
def test_the_published_inputs_that_crashed_the_search_build_and_check(tmp_path: Path, replacements: dict[str, str],
                                                                      extra: str) -> None:
    project = tmp_path / "p.yaml"
    project.write_text(_seventy(replacements, extra), encoding="utf-8")
    command = [sys.executable, "-m", "reportgen"]
    check = subprocess.run([*command, "check", str(project)], capture_output=True, text=True, timeout=120)
    build = subprocess.run([*command, "build", str(project), "--out", str(tmp_path / "out"), "--format", "json"],
                           capture_output=True, text=True, timeout=300)
    assert "Traceback" not in check.stderr + build.stderr and check.returncode == 0 and build.returncode == 0
    search = json.loads((tmp_path / "out" / "p" / "results.json").read_text(encoding="utf-8"))["plan_search"]
    assert search["enumerated"] >= search["fitting"] >= search["stepped"] >= len(search["best"])


def test_forty_eight_nodes_are_searched_over_uneven_pipelines() -> None:
    # 384 devices: no p dividing 80 layers leaves a d that divides 1,024 sequences; 12 stages of Megatron's
    # first/last split (5, 7 × 10, 5) do
    analysis = analyze(make_project(_seventy({"  nodes: 64\n": "  nodes: 48\n"})))
    search = analysis.plan_search
    assert search.enumerated > 0 and search.best
    assert all(row.tensor * row.pipeline * row.data == 384 for row in search.best)
    assert any(len(set(row.layers_per_stage)) > 1 for row in search.best)


def test_a_batch_no_layout_divides_says_which_rule_left_none() -> None:
    analysis = analyze(make_project(_seventy({
        "  nodes: 64\n": "  nodes: 48\n",
        "{data: 16, tensor: 8, pipeline: 4, micro_batches: 64,": "{data: 7, tensor: 1, pipeline: 1, micro_batches: 1,",
        "micro_batch: 1, heads: 64": "micro_batch: 1, global_batch: 7, heads: 64"})))
    search = analysis.plan_search
    assert (search.enumerated, search.fitting, search.stepped, search.best) == (0, 0, 0, ())
    enumerated = next(f for f in analysis.findings if f.code == "no-layout-enumerated")
    assert enumerated.severity == "warning" and "no b·d (b = 1) divides the global batch of 7" in enumerated.message
    assert "no-layout-fits" not in _codes(analysis)


def test_layouts_that_fit_but_cannot_be_timed_are_not_a_failure_to_fit() -> None:
    analysis = analyze(make_project(_seventy({"  network_bandwidth: 400 GB/s": "  # no network bandwidth"})))
    search = analysis.plan_search
    assert search.fitting > 0 and search.stepped == 0 and search.best == ()
    assert "no-layout-fits" not in _codes(analysis)  # the turn-5 error with a negative "GB too many"
    said = next(f for f in analysis.findings if f.code == "plan-search-inputs" and "could be timed" in f.message)
    assert said.severity == "info" and said.message.startswith(f"{search.fitting:,} layouts fit in memory but none")
    assert "hardware.network_bandwidth is missing (pipeline sends" in said.message
    memories = [row.memory_per_device_b for row in search.fitting_by_memory]
    assert 0 < len(memories) <= 5 and memories == sorted(memories)
    assert analysis.summary.plan_search == (f"{search.fitting:,} layouts of the plan's devices fit; none could be "
                                            "timed without hardware.network_bandwidth.")
    assert analysis.summary.next_action.code != "plan-search-inputs"


def test_no_layout_fits_by_memory_names_a_positive_excess() -> None:
    one_node = {"  nodes: 64\n": "  nodes: 1\n",
                "{data: 16, tensor: 8, pipeline: 4,": "{data: 1, tensor: 8, pipeline: 1,"}
    analysis = analyze(make_project(_seventy(one_node)))
    search = analysis.plan_search
    assert search.enumerated > 0 and search.fitting == 0
    least, excess = search.least_memory
    # the excess is over the usable memory (80 GB, no headroom by default), positive by construction
    assert excess > 0 and least.memory_per_device_b - excess == pytest.approx(search.inputs.device_memory_b)
    fits = next(f for f in analysis.findings if f.code == "no-layout-fits")
    assert f"{least.layout} (t × p × d) with ZeRO-0" in fits.message and "more than the" in fits.message


def test_no_fit_is_in_results_with_the_excess_the_finding_states(tmp_path: Path) -> None:
    from reportgen.pipeline import BuildOptions, build

    project = tmp_path / "one.yaml"
    project.write_text(_seventy({"  nodes: 64\n": "  nodes: 1\n",
                                 "{data: 16, tensor: 8, pipeline: 4,": "{data: 1, tensor: 8, pipeline: 1,"}),
                       encoding="utf-8")
    build(project, BuildOptions(out_root=tmp_path / "out", formats=("json",)))
    document = json.loads((tmp_path / "out" / "one" / "results.json").read_text(encoding="utf-8"))
    no_fit = document["plan_search"]["no_fit"]
    assert no_fit["excess_b"] == pytest.approx(no_fit["memory_per_device_b"] - 80e9) and no_fit["excess_b"] > 0
    assert no_fit["layout"] == "8 × 1 × 1"


WORKED = """
project: {title: T}
hardware: {peak_compute: 1.248 PFLOP/s, devices_per_node: 4, device_memory: 16 GB, intra_node_bandwidth: 300 GB/s,
           intra_node_latency: 2 us, network_latency: 5 us,
           runtime_memory: {context: 0 GB, per_group: 0 GB, all_to_all: 0 GB, fragmentation: 0}}
baseline:
  model: {layers: 10, hidden: 4096, sequence: 2048, heads: 32, vocabulary: 32000, micro_batch: 1, global_batch: 64}
design:
  nodes: 2
"""


@worked("plan_search")
def test_the_stages_of_a_search_by_hand() -> None:
    # L = 10 (GPT-3 layers, h 4,096, 32 heads, s 2,048, V 32,000) on 2 nodes of 4, B = 64, b = 1, every option,
    # runtime zeroed: t ∈ {1, 2, 4}; p ∈ {1, 2, 4} (8 stages of 10 layers leave the ends fewer than 2); 75 layouts:
    # 12 + 12 + 6 (t = 1), 12 + 12 + 3 (t = 2), 12 + 6 (t = 4), counting v ∈ {1, 5} where p = 2 and ZeRO ≤ 1 with a
    # pipeline. With 16 GB devices 58 fit; without network_bandwidth none is timed (every layout's data-parallel
    # group or pipeline crosses the two nodes)
    analysis = analyze(make_project(WORKED))
    search = analysis.plan_search
    assert (search.enumerated, search.fitting, search.stepped, search.best) == (75, 58, 0, ())
    assert len(search.fitting_by_memory) == 5 and "no-layout-fits" not in _codes(analysis)
    # with 4 GB none fits: the least, t × p × d = 4 × 1 × 2 with ZeRO-3, full recomputation and sequence
    # parallelism, needs 4.42 GB, 0.42 GB more than the 4.00 GB usable
    small = analyze(make_project(WORKED.replace("device_memory: 16 GB", "device_memory: 4 GB")))
    assert small.plan_search.fitting == 0 and small.plan_search.no_fit.layout == "4 × 1 × 2"
    assert small.plan_search.no_fit.memory_per_device_b == pytest.approx(4.42e9, abs=5e6)
    message = next(f.message for f in small.findings if f.code == "no-layout-fits")
    assert message == ("no layout of 2 nodes fits: the one of least memory, 4 × 1 × 2 (t × p × d) with ZeRO-3, full "
                       "recompute and sequence parallelism, needs 4.42 GB per device, 424 MB more than the 4.00 GB "
                       "usable")
