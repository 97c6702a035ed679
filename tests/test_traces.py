"""Profiler traces: HTA's figures on its own public traces, the wait split on generated jobs, bad traces refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.errors import InputError
from reportgen.ingest import traces
from reportgen.project.loader import load_project
from tests.conftest import DATA, without_word_spans
from tests.worked import worked

SAMPLES = DATA / "traces"  # HTA's test data, MIT licence: see NOTICE.md there

# HTA 0.5.0's temporal breakdown of its sample traces (µs): window, idle, compute, non-compute, overlap %
HTA = {
    "nccl-2rank-rank0.json.gz": (0, 2, 435586, 338781, 75169, 21636, 14.31),
    "sampled-128rank/rank-0.json.gz": (0, 128, 600058, 321378, 106252, 172428, 11.81),
    "sampled-128rank/rank-1.json.gz": (1, 128, 600674, 328671, 135548, 136455, 20.05),
}


@pytest.mark.parametrize("name", sorted(HTA))
def test_the_breakdown_reproduces_hta(name: str) -> None:
    rank, world, window, idle, compute, non_compute, overlap = HTA[name]
    b = traces.read_rank(SAMPLES / name)
    assert (b.rank, b.world_size) == (rank, world)
    for ours, theirs in ((b.window_us, window), (b.idle_us, idle), (b.compute_us, compute),
                         (b.non_compute_us, non_compute)):
        assert ours == pytest.approx(theirs, rel=1e-3)
    assert b.overlap_pct == pytest.approx(overlap, abs=0.01)
    assert b.window_us == b.idle_us + b.compute_us + b.non_compute_us


def test_exposed_communication_and_memory_follow_hta_classes() -> None:
    # HTA's exclusive classes: communication only 20621 + communication over memory 184 = exposed 20805;
    # memory only 831; the last of the three profiler steps is left out, so two are complete.
    b = traces.read_rank(SAMPLES / "nccl-2rank-rank0.json.gz")
    assert (b.communication_us, b.memory_us, b.steps) == (20805.0, 831.0, 2)


# -------------------------------------------------------------------------------------- reading in blocks
def test_small_blocks_give_the_same_breakdown(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 200-byte block cuts almost every event, the nested args and the strings: each cut must be found wrong by
    # the decoder and moved, never taken, and the result must not depend on where the blocks fall
    whole = [traces.read_rank(SAMPLES / name) for name in sorted(HTA)]
    monkeypatch.setattr(traces, "BLOCK_BYTES", 200)
    assert [traces.read_rank(SAMPLES / name) for name in sorted(HTA)] == whole


def test_braces_in_names_and_the_header_after_the_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = job_trace(0, 2, [1000.0, 1200.0])
    for event in trace["traceEvents"]:
        if event["cat"] == "cuda_runtime":
            event["name"] = 'cudaLaunchKernel}, {"ph": "X"}]'  # a separator and the array's end, inside a string
            event["args"]["nested"] = {"deeper": {"x": [1, {"y": 2}]}}
    events_first = {"traceEvents": trace["traceEvents"], "distributedInfo": trace["distributedInfo"]}
    (tmp_path / "a.json").write_text(json.dumps(trace, indent=1))
    (tmp_path / "b.json").write_text(json.dumps(events_first, separators=(",", ":")))
    expected = traces.read_rank(tmp_path / "a.json")
    assert (expected.rank, expected.world_size, expected.steps) == (0, 2, 3)
    for block in (7, 64, 1000):
        monkeypatch.setattr(traces, "BLOCK_BYTES", block)
        for name in ("a.json", "b.json"):
            got = traces.read_rank(tmp_path / name)
            assert (got.rank, got.world_size, got.compute_us, got.collectives) == (
                0, 2, expected.compute_us, expected.collectives)


def test_the_digest_is_of_the_file_as_stored() -> None:
    # `sha256sum rank-0.json.gz` must give the digest the provenance records, not that of the decompressed JSON
    import hashlib

    path = SAMPLES / "sampled-128rank" / "rank-0.json.gz"
    assert traces.read_rank(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_fault_deep_in_a_file_is_located_as_json_would_locate_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lines = json.dumps(job_trace(0, 1, [1000.0], steps=40), indent=1).splitlines()
    broken = next(i for i, line in enumerate(lines) if '"dur"' in line and i > len(lines) * 2 // 3)
    lines[broken] = lines[broken].replace('"dur":', '"dur";')
    text = "\n".join(lines)
    (tmp_path / "deep.json").write_text(text)
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text)
    monkeypatch.setattr(traces, "BLOCK_BYTES", 512)
    message = refused([tmp_path / "deep.json"])
    assert f"deep.json:{reference.value.lineno}:{reference.value.colno}: error: not JSON" in message
    (tmp_path / "cut.json").write_text(text[: len(text) // 2].replace('"dur";', '"dur":'))
    assert "cut.json:" in refused([tmp_path / "cut.json"]) and "not JSON" in refused([tmp_path / "cut.json"])
    wrong = job_trace(0, 1, [1000.0], steps=40)
    wrong["traceEvents"][150]["ts"] = "soon"
    (tmp_path / "typed.json").write_text(json.dumps(wrong))
    assert "$.traceEvents[150].ts" in refused([tmp_path / "typed.json"])  # counted across blocks


# ---------------------------------------------------------------------------------------------- generated jobs
def job_trace(rank: int, world: int, compute: list[float], *, transfer: float = 100.0, steps: int = 3,
              offset: float = 0.0, collectives: bool = True) -> dict:
    """A rank of a synchronous job: per step, a compute kernel, then an all-reduce that ends when the slowest rank
    has computed and the transfer is done (so this rank's all-reduce lasts its wait plus the transfer)."""
    events, correlation, period = [], 1, 10_000.0
    slowest = max(compute)
    for step in range(steps + 1):  # the last step is left out, as HTA does
        t = offset + step * period
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": t, "dur": period})
        launches = [("kernel", "volta_sgemm_128x64", t + 10, compute[rank])]
        if collectives:
            launches.append(("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", t + 10 + compute[rank],
                             slowest - compute[rank] + transfer))
        for category, name, start, duration in launches:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 1,
                           "dur": 2, "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": category, "name": name, "ts": start, "dur": duration,
                           "args": {"stream": 7 if "nccl" not in name else 20, "correlation": correlation}})
            correlation += 1
    return {"distributedInfo": {"rank": rank, "world_size": world}, "traceEvents": events}


def write_job(folder: Path, compute: list[float], per_rank: dict[int, dict] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rank in range(len(compute)):
        trace = job_trace(rank, len(compute), compute, **(per_rank or {}).get(rank, {}))
        with gzip.open(folder / f"rank-{rank}.json.gz", "wt") as stream:
            json.dump(trace, stream)
    return folder


def test_a_straggler_shows_as_waiting_not_communication(tmp_path: Path) -> None:
    compute = [1000.0, 1000.0, 1000.0, 1600.0]  # rank 3 computes 600 µs longer each step
    files = traces.trace_files([write_job(tmp_path / "job", compute)])
    job = traces.combine(traces.reduce_files(files))
    # three complete steps: the others wait 600 µs a step for rank 3, the transfer is 100 µs for everyone
    assert [row.wait_us for row in job.ranks] == [1800.0, 1800.0, 1800.0, 0.0]
    run = job.run
    assert run.wait_measured and run.steps == 3
    assert run.communication_s == pytest.approx(100e-6)  # the transfer, per step
    assert run.compute_s == pytest.approx(sum(compute) / 4 * 1e-6)
    assert run.workers_s == pytest.approx(tuple(c * 1e-6 for c in compute))
    # idle: the gaps of each rank's window plus the mean wait of 450 µs a step
    idle_per_step = sum(row.breakdown.idle_us for row in job.ranks) / 4 / 3 * 1e-6
    assert run.idle_s == pytest.approx(idle_per_step + 450e-6)


def test_skewed_clocks_change_nothing(tmp_path: Path) -> None:
    compute = [900.0, 1300.0]
    plain = traces.combine(traces.reduce_files(traces.trace_files([write_job(tmp_path / "a", compute)])))
    skewed = traces.combine(traces.reduce_files(traces.trace_files(
        [write_job(tmp_path / "b", compute, {1: {"offset": 123_456.0}})])))
    assert [r.wait_us for r in skewed.ranks] == [r.wait_us for r in plain.ranks] == [1200.0, 0.0]


def test_a_rank_without_collectives_waits_for_nobody(tmp_path: Path) -> None:
    compute = [1000.0, 1200.0, 1500.0]
    folder = write_job(tmp_path / "job", compute, {2: {"collectives": False}})
    job = traces.combine(traces.reduce_files(traces.trace_files([folder])))
    # ranks 0 and 1 still match each other: 1,500 − 1,000 + 100 against 1,500 − 1,200 + 100 → 200 µs a step
    assert [row.wait_us for row in job.ranks] == [600.0, 0.0, 0.0]
    assert job.ranks[2].breakdown.communication_us == 0.0


def test_one_rank_says_its_wait_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "trace", str(SAMPLES / "nccl-2rank-rank0.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "one rank only: waiting for the slowest rank is unknown" in out
    assert main(["ingest", "trace", str(SAMPLES / "nccl-2rank-rank0.json.gz"), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (rank,) = document["ranks"]
    assert set(rank) >= {"rank", "window_us", "idle_us", "compute_us", "non_compute_us", "communication_us",
                         "memory_us", "overlap_pct", "steps", "wait_us"}
    assert rank["wait_us"] is None and document["run"]["wait_measured"] is False
    # per step: 75,169 µs of compute over 2 steps
    assert document["run"]["compute_s"] == pytest.approx(75169e-6 / 2)


def test_the_job_run_lands_in_the_csv_with_its_provenance(tmp_path: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n")
    folder = write_job(tmp_path / "job", [1000.0, 1600.0])
    assert main(["ingest", "trace", str(folder), "--project", str(project), "--gpus-per-node", "1",
                 "--steps-per-run", "1000"]) == 0
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0] == "nodes,compute [s],communication [s],idle [s],io [s],workers [s],energy [kWh]"
    assert lines[1].startswith("# reportgen ingest trace: 2 nodes, 2 ranks, GPU profile, 3 profiler step(s)")
    assert lines[2].startswith("# reportgen trace: rank-0.json.gz sha256 ")
    run = load_project(project).project.scaling.runs[0]
    assert run.nodes == 2 and run.workers == pytest.approx((1.0, 1.6))  # 1,000 steps of 1,000 and 1,600 µs
    assert run.communication == pytest.approx(0.1)  # 100 µs of transfer a step
    # a second ingest at 2 nodes is refused, then replaces the row and its provenance
    assert main(["ingest", "trace", str(folder), "--project", str(project), "--nodes", "2"]) == 2
    assert main(["ingest", "trace", str(folder), "--project", str(project), "--nodes", "2", "--replace"]) == 0
    text = (tmp_path / "runs.csv").read_text()
    assert text.count("# reportgen ingest trace") == 1 and text.count("\n2,") == 1


# ------------------------------------------------------------------------------------------------ bad traces
def refused(paths: list[Path], *args: str) -> str:
    with pytest.raises(InputError) as caught:
        traces.combine(traces.reduce_files(traces.trace_files(paths), processes=1))
    return str(caught.value)


def test_bad_traces_are_located_errors(tmp_path: Path) -> None:
    (tmp_path / "not.json").write_text('{"traceEvents": [{"ph": "X", "ts": 1},\n  oops]}')
    message = refused([tmp_path / "not.json"])
    assert "not.json:2:3: error: not JSON" in message  # located where the text stops being JSON
    (tmp_path / "odd.json").write_text('{"traceEvents": [1, 2]}')
    assert "not a profiler trace" in refused([tmp_path / "odd.json"]) and "$.traceEvents[0]" in refused(
        [tmp_path / "odd.json"])
    whole = (SAMPLES / "sampled-128rank" / "rank-0.json.gz").read_bytes()
    (tmp_path / "cut.json.gz").write_bytes(whole[: len(whole) // 2])
    assert "truncated or corrupt gzip" in refused([tmp_path / "cut.json.gz"])
    cpu = job_trace(0, 1, [1000.0])
    cpu["traceEvents"] = [e for e in cpu["traceEvents"] if e["cat"] != "kernel"]
    (tmp_path / "cpu.json").write_text(json.dumps(cpu))
    # no kernels and no CPU ops (only launches and steps): nothing to split, GPU or CPU
    assert "neither GPU kernels, copies or sets nor CPU ops" in refused([tmp_path / "cpu.json"])
    (tmp_path / "one-step.json").write_text(json.dumps(job_trace(0, 1, [1000.0], steps=0)))
    assert "1 profiler step(s)" in refused([tmp_path / "one-step.json"])


def test_ranks_must_fit_together(tmp_path: Path) -> None:
    write_job(tmp_path / "a", [1000.0, 1100.0])
    twice = refused([tmp_path / "a" / "rank-0.json.gz", tmp_path / "a" / "rank-0.json.gz"])
    assert "rank 0 again" in twice
    (tmp_path / "a" / "rank-1.json.gz").unlink()
    sampled = traces.combine(traces.reduce_files(traces.trace_files([tmp_path / "a"]), processes=1))
    # a sample of the job's ranks, as HTA reads a folder
    assert (sampled.missing_count, sampled.missing_first) == (1, (1,)) and sampled.sampled
    write_job(tmp_path / "b", [1000.0, 1100.0, 1200.0])
    assert "world size 3" in refused([tmp_path / "a" / "rank-0.json.gz", tmp_path / "b" / "rank-1.json.gz"])


def test_node_counts_must_divide_the_world(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_job(tmp_path / "job", [1000.0, 1100.0, 1200.0])
    assert main(["ingest", "trace", str(folder), "--nodes", "2"]) == 2
    assert "does not divide the traces' world size 3" in capsys.readouterr().err
    assert main(["ingest", "trace", str(folder), "--gpus-per-node", "2"]) == 2


@worked("provenance")
def test_the_report_says_where_measurements_came_from_and_shows_each_rank(tmp_path: Path) -> None:
    from reportgen.pipeline import BuildOptions, build

    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n")
    for nodes, compute in ((1, [4000.0]), (4, [1000.0] * 3 + [1600.0]), (8, [500.0] * 7 + [1100.0])):
        folder = write_job(tmp_path / f"job{nodes}", compute)
        assert main(["ingest", "trace", str(folder), "--project", str(project), "--gpus-per-node", "1",
                     "--steps-per-run", "1000"]) == 0
    build(project, BuildOptions(out_root=tmp_path / "out", formats=("html", "json")))
    document = json.loads((tmp_path / "out" / "p" / "results.json").read_text())
    provenance = document["provenance"]
    assert [r["origin"] for r in provenance["rows"]] == ["profiler traces (1 file)", "profiler traces (4 files)",
                                                         "profiler traces (8 files)"]
    assert provenance["ranks_nodes"] == 8 and len(provenance["ranks"]) == 8
    assert provenance["ranks"][7]["wait_s"] == 0.0 and provenance["ranks"][0]["wait_s"] == pytest.approx(0.6)
    assert provenance["wait_measured_nodes"] == [4, 8]
    html = " ".join(without_word_spans((tmp_path / "out" / "p" / "report.html").read_text()).split())
    assert 'id="fig-ranks"' in html and "(here rank 7)" in html
    assert "the wait for the slowest rank was measured from the profiler traces" in html
    assert "trace: rank-0.json.gz sha256 " in html


def test_typed_in_runs_say_so_and_the_wait_is_not_measured() -> None:
    from reportgen.analysis import analyze
    from tests.conftest import INPUTS, make_project

    analysis = analyze(make_project((INPUTS / "finetune-7b.yaml").read_text()))
    assert {r.origin for r in analysis.provenance.rows} == {"typed in"}
    assert not analysis.provenance.wait_measured(analysis.scaling.knee_cause_at) and not analysis.provenance.ranks


def test_measure_takes_its_split_from_the_traces_the_command_writes(tmp_path: Path) -> None:
    import sys

    from tests.conftest import ROOT

    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\nenergy: {node_power: 1 kW, "
                       "location: {country: FRA}}\n")
    traces_dir = tmp_path / "traces"
    write = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from pathlib import Path; "
             f"from tests.test_traces import write_job; write_job(Path({str(traces_dir)!r}), [1000.0, 1600.0])")
    assert main(["measure", "--project", str(project), "--nodes", "2", "--trace-dir", str(traces_dir),
                 "--steps-per-run", "1000", "--", sys.executable, "-c", write]) == 0
    text = (tmp_path / "runs.csv").read_text()
    assert "# reportgen measure: 2 nodes; energy is CodeCarbon's estimate" in text
    assert "# reportgen ingest trace: 2 nodes, 2 ranks" in text and "# reportgen rank 1: compute 1.6 s" in text
    run = load_project(project).project.scaling.runs[0]
    assert run.compute == pytest.approx(1.3) and run.communication == pytest.approx(0.1) and run.energy > 0
    # a folder without traces: the measured time and energy are printed, nothing is appended
    empty = tmp_path / "none"
    empty.mkdir()
    assert main(["measure", "--project", str(project), "--nodes", "4", "--trace-dir", str(empty), "--",
                 sys.executable, "-c", "pass"]) == 2
    assert "\n4," not in (tmp_path / "runs.csv").read_text()


def test_ranks_reduce_on_a_dask_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    distributed = pytest.importorskip("distributed")  # a test extra; optional for users (reportgen[dask])
    folder = write_job(tmp_path / "job", [1000.0, 1000.0, 1600.0])
    local = traces.combine(traces.reduce_files(traces.trace_files([folder]), processes=1))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        files = traces.trace_files([folder])
        remote = traces.combine(traces.reduce_files(files, scheduler=cluster.scheduler_address))
        assert main(["ingest", "trace", str(folder), "--scheduler", cluster.scheduler_address]) == 0
    assert remote == local  # the same ranks, waits and run, whoever reduced them
    assert "run (3 ranks of a world of 3" in capsys.readouterr().out


def test_a_project_typed_in_says_so_in_one_sentence(tmp_path: Path) -> None:
    from reportgen.pipeline import BuildOptions, build
    from tests.conftest import INPUTS

    build(INPUTS / "finetune-7b.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    html = (tmp_path / "finetune-7b" / "report.html").read_text()
    assert "Every measured number was typed into the project" in html and "times from</th>" not in html


@pytest.mark.parametrize("world", [10**8, 2**62])
def test_a_claimed_world_is_counted_never_enumerated(tmp_path: Path, world: int) -> None:
    """A 1.4 kB trace claiming 10^8 … 2^62 ranks once built a set of every rank (MemoryError past 2 GiB)."""
    trace = job_trace(0, 1, [1000.0])
    trace["distributedInfo"]["world_size"] = world
    (tmp_path / "rank-0.json").write_text(json.dumps(trace))
    assert f"distributedInfo.world_size {world:,} is past the 16,777,216 ranks" in refused([tmp_path / "rank-0.json"])


def test_a_sampled_world_at_the_limit_is_counted(tmp_path: Path) -> None:
    trace = job_trace(0, 1, [1000.0])
    trace["distributedInfo"]["world_size"] = traces.MAX_WORLD_SIZE
    (tmp_path / "rank-0.json").write_text(json.dumps(trace))
    job = traces.combine(traces.reduce_files([tmp_path / "rank-0.json"], processes=1))
    assert job.missing_count == traces.MAX_WORLD_SIZE - 1
    assert job.missing_first == tuple(range(1, traces.MISSING_SHOWN + 1))  # the lowest absent, for messages
