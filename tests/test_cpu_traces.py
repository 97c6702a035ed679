"""CPU profiles: DDP over gloo on CPUs, as torch.profiler writes it, read into compute, exposed communication and
idle per step; checked against an independent computation of the definitions in docs/measurements.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.ingest import traces

MAIN, RUNLOOP = 4242, 4300  # thread ids: the training loop's, and gloo's pt_gloo_runloop
STEP = 1000.0  # µs


def gloo_rank(rank: int, compute: float) -> dict:
    """One rank of a 2-rank gloo job, in the shape torch.profiler writes: per step, the forward/backward ops on the
    main thread (with a nested op), a c10d::allreduce_ call, the gloo:all_reduce span on gloo's own thread, which
    lasts until the slower rank joins, then the optimizer's op."""
    joined = 470.0  # the slower rank's op ends at 420 µs, its c10d call at 422, and the transfer takes 48 µs more
    events: list[dict] = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": RUNLOOP,
                           "args": {"name": "pt_gloo_runloop"}}]
    for step in range(4):  # the last step is left out, as HTA leaves it
        t = step * STEP
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": MAIN, "ts": t,
             "dur": STEP},
            {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": MAIN, "ts": t, "dur": compute},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": MAIN, "ts": t + 50, "dur": 50},
            {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": MAIN, "ts": t + compute,
             "dur": 2},
            {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1, "tid": RUNLOOP,
             "ts": t + compute + 2, "dur": joined - compute},
            {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": MAIN, "ts": t + 480, "dur": 20},
            {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 1, "tid": MAIN, "ts": t,
             "dur": 600},  # Python frames are not ops: never compute
        ]
    return {"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": rank, "world_size": 2},
            "traceEvents": events}


def covered(intervals: list[tuple[float, float]]) -> float:
    """The length of a union of intervals, computed here apart from reportgen's own union."""
    total, reach = 0.0, -float("inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def expected(document: dict) -> tuple[float, float, float]:
    """By hand over the complete steps: compute = the main thread's CPU ops; communication = gloo and c10d spans;
    exposed = communication not under compute; idle = window − both."""
    steps = sorted(e["ts"] for e in document["traceEvents"] if e.get("name", "").startswith("ProfilerStep"))
    first, last = steps[0], steps[-1]
    clip = [(max(e["ts"], first), min(e["ts"] + e["dur"], last)) for e in document["traceEvents"]
            if e["ph"] == "X" and e["ts"] < last and e["ts"] + e["dur"] > first]
    events = [e for e in document["traceEvents"] if e["ph"] == "X" and e["ts"] < last and e["ts"] + e["dur"] > first]
    compute = [c for e, c in zip(events, clip, strict=True) if e["cat"] == "cpu_op" and e["tid"] == MAIN
               and not e["name"].startswith(("c10d::", "gloo:"))]
    communication = [c for e, c in zip(events, clip, strict=True) if e["name"].startswith(("c10d::", "gloo:"))]
    both = covered(compute + communication)
    return covered(compute), both - covered(compute), (last - first) - both


@pytest.fixture
def job(tmp_path: Path) -> tuple[traces.JobBreakdown, list[dict]]:
    documents = [gloo_rank(0, 420.0 - 20.0), gloo_rank(1, 440.0 - 20.0)]  # + the optimizer's 20 µs each
    for rank, document in enumerate(documents):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(document))
    return traces.combine(traces.reduce_files(traces.trace_files([tmp_path]), processes=1)), documents


def test_a_gloo_rank_splits_as_the_definitions_say(job: tuple[traces.JobBreakdown, list[dict]]) -> None:
    breakdown, documents = job
    for row, document in zip(breakdown.ranks, documents, strict=True):
        compute, exposed, idle = expected(document)
        b = row.breakdown
        assert (b.compute_us, b.communication_us + b.memory_us, b.idle_us) == pytest.approx((compute, exposed, idle))
        assert b.steps == 3 and b.window_us == 3 * STEP and b.cpu and b.backend == "gloo"
    # by hand, per step: rank 0 computes 400 + 20 = 420 µs (the nested aten::mm adds nothing), its c10d call and
    # gloo span take 2 + 70 = 72 µs (it waits 20 µs for rank 1), idle 1000 − 492 = 508; rank 1: 440, 2 + 50, 508
    assert [r.breakdown.compute_us / 3 for r in breakdown.ranks] == pytest.approx([420.0, 440.0])
    assert [r.breakdown.communication_us / 3 for r in breakdown.ranks] == pytest.approx([72.0, 52.0])


def test_the_gloo_job_run_moves_the_wait_to_idle(job: tuple[traces.JobBreakdown, list[dict]]) -> None:
    breakdown, _ = job
    run = breakdown.run
    # rank 0's gloo span is 20 µs longer than rank 1's each step: that is waiting for rank 1, not transfer
    assert [row.wait_us for row in breakdown.ranks] == pytest.approx([60.0, 0.0])
    assert run.compute_s == pytest.approx(430e-6) and run.communication_s == pytest.approx(52e-6)
    assert run.idle_s == pytest.approx(518e-6)  # (508 + 20 + 508) / 2
    assert run.compute_s + run.communication_s + run.idle_s == pytest.approx(STEP * 1e-6)
    line = breakdown.provenance(1, 1.0)[0]
    assert "2 ranks, CPU profile, backend gloo, 3 profiler step(s)" in line


def test_a_cpu_profile_without_ops_in_its_steps_is_still_refused(tmp_path: Path) -> None:
    from reportgen.errors import InputError

    document = gloo_rank(0, 400.0)
    document["traceEvents"] = [e for e in document["traceEvents"] if e.get("cat") != "cpu_op"]
    (tmp_path / "rank0.json").write_text(json.dumps(document))
    with pytest.raises(InputError, match="no CPU op of the main thread"):
        traces.reduce_files([tmp_path / "rank0.json"], processes=1)


def test_ingest_trace_completes_the_run_measure_recorded(tmp_path: Path) -> None:
    """One row holds the run: measure's wall time, then the trace's breakdown beside it; the
    difference is start-up."""
    from reportgen.commands.cli import main
    from reportgen.project.loader import load_project

    folder = tmp_path / "traces"
    folder.mkdir()
    for rank, compute in enumerate((400.0, 420.0)):
        (folder / f"rank{rank}.json").write_text(json.dumps(gloo_rank(rank, compute)))
    (tmp_path / "p.yaml").write_text("project: {title: T}\nscaling: {file: runs.csv, time_unit: s}\n")
    (tmp_path / "runs.csv").write_text("nodes,time [s],energy [kWh]\n1,30,0.0001\n2,20,0.0001\n")
    assert main(["ingest", "trace", str(folder), "--project", str(tmp_path / "p.yaml"), "--nodes", "2",
                 "--steps-per-run", "10000"]) == 0
    runs = {r.nodes: r for r in load_project(tmp_path / "p.yaml").project.scaling.runs}
    two = runs[2]
    # per step 430 + 52 + 518 µs = 1 ms; × 10,000 steps = 10 s of the 20 s wall: 10 s of start-up
    assert (two.time, two.compute, two.communication, two.idle) == pytest.approx((20.0, 4.3, 0.52, 5.18))
    assert two.start_up == pytest.approx(10.0) and two.energy is not None  # measure's energy kept
    assert runs[1].compute is None and runs[1].time == 30.0  # the other run untouched
    text = (tmp_path / "runs.csv").read_text()
    assert "# reportgen ingest trace: 2 nodes, 2 ranks, CPU profile, backend gloo" in text
    assert len([line for line in text.splitlines() if line[:1].isdigit()]) == 2  # no row added


def test_wall_time_rows_beside_completed_rows_build_in_total_form(tmp_path: Path) -> None:
    """Partial evidence: a run completed by its trace sits beside runs with their wall time only; the project reads
    in total form (every run has its wall time) instead of being refused for mixing forms."""
    from reportgen.analysis import analyze
    from tests.conftest import make_project

    project = make_project("""
project: {title: T}
scaling:
  time_unit: s
  runs:
    - {nodes: 1, time: 30}
    - {nodes: 2, time: 20, compute: 4.3, communication: 0.52, idle: 5.18}
""")
    scaling = analyze(project).scaling
    assert scaling.form == "total" and [row.time_s for row in scaling.rows] == [30.0, 20.0]
    assert scaling.rows[1].speedup == pytest.approx(1.5)
    with pytest.raises(Exception, match="every run must be in one form"):  # a breakdown without its wall time
        make_project("project: {title: T}\nscaling: {time_unit: s, runs: [{nodes: 1, time: 30}, "
                     "{nodes: 2, compute: 4, communication: 1, idle: 1}]}\n")


def test_cpu_and_gpu_ranks_of_one_world_are_refused_together(tmp_path: Path) -> None:
    """A rank read as a CPU profile beside ranks with GPU kernels summed CPU ops with kernel time into one
    compute: one job's ranks are profiled alike."""
    import gzip

    with gzip.open(Path(__file__).parent / "data" / "traces" / "torch-2.11-h200" / "ddp1-gpt17m-rank0.json.gz") as f:
        gpu = json.loads(f.read())
    gpu["distributedInfo"] = {**gpu["distributedInfo"], "rank": 0, "world_size": 2}
    (tmp_path / "rank0.json").write_text(json.dumps(gpu))
    (tmp_path / "rank1.json").write_text(json.dumps(gloo_rank(1, 420.0)))
    from reportgen.errors import InputError

    with pytest.raises(InputError) as refused:
        traces.combine(traces.reduce_files(traces.trace_files([tmp_path]), processes=1))
    (problem,) = refused.value.problems
    assert problem.file.endswith("rank1.json") and "has no GPU work (read as a CPU profile)" in problem.message


def test_a_trace_header_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    """Two ranks' distributedInfo merged into one object: msgspec took the last rank silently."""
    from reportgen.errors import InputError

    text = json.dumps(gloo_rank(0, 420.0)).replace('"rank": 0,', '"rank": 0, "rank": 1,', 1)
    (tmp_path / "rank0.json").write_text(text)
    with pytest.raises(InputError) as refused:
        traces.read_rank(tmp_path / "rank0.json")
    assert 'the key "rank" appears twice in one object' in refused.value.problems[0].message
