"""Traces the current PyTorch writes (2.4 and later copy each `ProfilerStep#N` onto the GPU timeline): the steps are
the marking thread's outermost spans, one per step number, and the window is HTA's (docs/methods.md#profiler-steps).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.ingest import traces
from tests.conftest import DATA
from tests.test_traces import job_trace

CURRENT = DATA / "traces" / "torch-2.11-h200"  # written by PyTorch 2.11 on one H200: see NOTICE.md beside it

# HTA 0.5.0's temporal breakdown of them (µs): window, idle, compute, non-compute; and the complete steps its window
# holds (ddp1: 5 active steps, the first 4 kept; plain: 3 and 2)
HTA = {
    "ddp1-gpt17m-rank0.json.gz": (56353, 46287, 9915, 151, 4),
    "plain-mlp-rank0.json.gz": (4799, 4518, 281, 0, 2),
}


@pytest.mark.parametrize("name", sorted(HTA))
def test_the_current_torch_reproduces_hta_and_counts_its_steps(name: str) -> None:
    window, idle, compute, non_compute, steps = HTA[name]
    b = traces.read_rank(CURRENT / name)
    assert b.steps == steps  # the GPU timeline's copies are not steps (they made 9 of ddp1's 4 and 5 of plain's 2)
    assert b.window_us == window
    # HTA counts a kernel shorter than its rounding (start up, end down) as negative time; we count it as none,
    # so busy time is a few µs per such kernel above HTA's (42 of them in ddp1): within 0.1 % of the window
    for ours, theirs in ((b.idle_us, idle), (b.compute_us, compute), (b.non_compute_us, non_compute)):
        assert abs(ours - theirs) <= 1e-3 * window
    assert b.window_us == b.idle_us + b.compute_us + b.non_compute_us
    assert not b.window_departs  # the window holds its complete steps, within 10 %


def test_a_trace_without_distributed_info_is_rank_zero_of_an_unknown_world() -> None:
    b = traces.read_rank(CURRENT / "plain-mlp-rank0.json.gz")  # record_shapes and profile_memory on, no c10d
    assert (b.rank, b.world_size, b.backend) == (0, None, None)


def test_the_time_per_step_is_the_window_over_its_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "trace", str(CURRENT / "ddp1-gpt17m-rank0.json.gz"), "--format", "json"]) == 0
    out = capsys.readouterr()
    document = json.loads(out.out)
    run = document["run"]
    assert run["profiler_steps"] == 4
    # one rank: its compute per step is 9,924 µs over 4 steps (not 9 steps: 1.10 ms)
    assert run["compute_s"] == pytest.approx(9924e-6 / 4)
    assert document["ranks"][0]["steps_span_us"] == pytest.approx(13352.578 + 13264.053 + 14240.647 + 15417.51)
    assert "trace-window" not in out.err


def _with_markers(extra: list[dict]) -> dict:
    trace = job_trace(0, 1, [1000.0], steps=3)  # steps 0…3 every 10 ms; the last is left out: 3 complete
    trace["traceEvents"].extend(extra)
    return trace


def _steps(tmp_path: Path, trace: dict) -> traces.RankBreakdown:
    path = tmp_path / "rank-0.json"
    path.write_text(json.dumps(trace))
    return traces.read_rank(path)


@pytest.mark.parametrize("extra", [
    # the GPU timeline's copy of each step, a little later than the CPU's
    [{"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{n}", "ts": n * 10_000.0 + 120, "dur": 900.0,
      "tid": 7} for n in range(4)],
    # a marker nested inside its step (a second profiler, a wrapper that records the step again)
    [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": n * 10_000.0 + 5, "dur": 100.0}
     for n in range(4)],
    # a number repeated after its step
    [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 35_000.0, "dur": 10.0}],
    # another thread's markers, fewer than the main thread's
    [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": n * 10_000.0 + 3_000, "dur": 10.0,
      "tid": 99} for n in range(2)],
], ids=["gpu-copies", "nested", "repeated", "other-thread"])
def test_markers_that_are_not_more_steps(tmp_path: Path, extra: list[dict]) -> None:
    plain = _steps(tmp_path, _with_markers([]))
    marked = _steps(tmp_path, _with_markers(extra))
    assert plain.steps == marked.steps == 3
    if extra[0]["cat"] == "gpu_user_annotation":
        # HTA's window ends at the last marker of either timeline: the last step's first kernel (launched 1 µs
        # into it, before its GPU copy begins) is in the window, as HTA has it
        assert marked.compute_us == plain.compute_us + 1000.0
    else:
        assert replace(marked, sha256="") == replace(plain, sha256="")


def test_the_steps_are_the_outermost_of_the_marking_thread() -> None:
    markers = [(0.0, 100.0, 1, "ProfilerStep#0"), (10.0, 20.0, 1, "ProfilerStep#0"),  # nested, same number
               (100.0, 100.0, 1, "ProfilerStep#1"), (120.0, 10.0, 1, "ProfilerStep#7"),  # nested, other number
               (200.0, 100.0, 1, "ProfilerStep#2"), (250.0, 5.0, 2, "ProfilerStep#3"),  # another thread
               (300.0, 100.0, 1, "ProfilerStep#1")]  # a number already counted
    steps = traces.profiler_steps(markers)
    assert steps.thread == 1
    assert steps.starts == (0.0, 100.0, 200.0)
    assert steps.spans == (100.0, 100.0, 100.0)


def test_a_step_that_overlaps_the_one_before_is_still_a_step() -> None:
    # adjacent steps can overlap by a rounding's worth; only a span wholly inside another is nested
    steps = traces.profiler_steps([(0.0, 100.5, 1, "ProfilerStep#0"), (100.0, 100.0, 1, "ProfilerStep#1")])
    assert steps.starts == (0.0, 100.0)


def test_many_threads_of_markers_are_read_in_one_pass() -> None:
    markers = [(float(i), 1.0, i, f"ProfilerStep#{i}") for i in range(80_000)]  # each thread marks one step
    steps = traces.profiler_steps(markers)
    assert (steps.thread, steps.starts) == (0, (0.0,))  # a tie goes to the lowest thread id


def test_a_tie_between_threads_goes_to_the_lowest_id_whatever_the_order() -> None:
    # two threads mark two steps each; the one with the higher id marks first: the choice is the lowest id, so it
    # never depends on the file's order (nor on hashing)
    markers = [(0.0, 10.0, 9, "ProfilerStep#0"), (10.0, 10.0, 9, "ProfilerStep#1"),
               (100.0, 10.0, 3, "ProfilerStep#0"), (110.0, 10.0, 3, "ProfilerStep#1")]
    assert traces.profiler_steps(markers).thread == 3
    assert traces.profiler_steps(markers[::-1]).thread == 3
    # the count is of outermost steps: a thread whose markers nest counts its outermost ones only
    nested = [(0.0, 100.0, 1, "ProfilerStep#0"), (1.0, 5.0, 1, "ProfilerStep#1"), (2.0, 1.0, 1, "ProfilerStep#2"),
              (0.0, 10.0, 2, "ProfilerStep#0"), (20.0, 10.0, 2, "ProfilerStep#1")]
    assert traces.profiler_steps(nested).thread == 2


def test_a_window_far_from_its_steps_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = job_trace(0, 1, [1000.0], steps=3)
    for event in trace["traceEvents"]:
        if event["name"].startswith("ProfilerStep#"):
            event["dur"] = 2_000.0  # the steps say 2 ms each, but the GPU work spans 10 ms periods
    path = tmp_path / "rank-0.json"
    path.write_text(json.dumps(trace))
    b = traces.read_rank(path)
    assert b.steps_span_us == 6_000.0 and b.window_departs
    assert main(["ingest", "trace", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning [trace-window]" in err and f"{b.window_us / 1e3:.6g} ms" in err and "6 ms" in err
