"""Fuzzing the readers of what profilers leave behind: PyTorch profiler traces, nccl-tests logs and CodeCarbon's
emissions.csv, generated in the shapes the tools write and then damaged (cells of every kind, ranks anywhere,
bytes inserted, files cut short, gzip or not).

Each reader must either return values the project's CSV can hold (finite, non-negative, in range: exactly what the
loader accepts, checked by the loader itself) or raise its own InputError with every problem located in the file
it read: never another exception, never a hang.
"""

from __future__ import annotations

import gzip
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from reportgen.errors import InputError
from reportgen.ingest import emissions, nccltests, traces
from reportgen.ingest.measure import number_text
from reportgen.project.loader import check_measurements
from tests.conftest import examples

FUZZ = settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)
T = TypeVar("T")

numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**20, 10**20),
                    st.floats(min_value=0, max_value=1e7))
cells = st.one_of(numbers.map(str), st.sampled_from(["", "nan", "-0", "1e400", "N/A", "0x10", "１２", "∞"]),
                  st.text(max_size=6))


def mostly(valid: st.SearchStrategy[T], invalid: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """Valid nine times in ten: a file with one bad value among good ones, not only files of garbage."""
    return st.integers(0, 9).flatmap(lambda draw: invalid if draw == 0 else valid)


def read_in_a_file(data: bytes, name: str, reader: Callable[[Path], T]) -> T | None:
    """The reader's result for a file holding `data`; None when it refused the file with located problems."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        started = time.perf_counter()
        try:
            result = reader(path)
        except InputError as error:
            event("refused")
            assert error.problems
            for problem in error.problems:
                assert problem.file == str(path), problem
                assert problem.line >= 1 and problem.column >= 1, problem
            return None
        finally:
            assert time.perf_counter() - started < 5, "a file must be read or refused fast"
        event("read")  # --hypothesis-show-statistics: how many of the files were read, how many refused
        return result


@st.composite
def damaged(draw: st.DrawFn, text: str) -> bytes:
    """The file's bytes, maybe with a few bytes inserted (any bytes: not UTF-8, NUL, control) and maybe cut."""
    data = text.encode("utf-8")
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    if draw(st.integers(0, 4)) == 0:
        data = data[:draw(st.integers(0, len(data)))]
    return data


# ------------------------------------------------------------------------------------------------------- traces
@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {"ph": draw(st.sampled_from(["X", "X", "X", "i", "B", "E", ""])),
                             "cat": draw(st.sampled_from(["kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime",
                                                          "cpu_op", "user_annotation", None])),
                             "name": draw(st.one_of(st.sampled_from(["ncclDevKernel_AllReduce", "ProfilerStep#1",
                                                                     "gemm", "nccl:all_reduce"]),
                                                    st.text(max_size=8), st.integers())),
                             "ts": draw(mostly(st.floats(0, 1e7), numbers)),
                             "dur": draw(mostly(st.floats(0, 1e5), st.one_of(numbers, st.none())))}
    if draw(st.booleans()):
        record["args"] = {"stream": draw(st.integers(-3, 40)), "correlation": draw(st.integers(0, 10**6))}
    return record


@st.composite
def launched_kernel(draw: st.DrawFn, correlation: int, steps: int, clean: bool) -> list[dict[str, Any]]:
    """A kernel (compute, NCCL or a copy) and the runtime call that launched it, within the profiled steps; its
    start and duration valid when `clean`, else mostly."""
    maybe: Callable[[st.SearchStrategy[Any], st.SearchStrategy[Any]], st.SearchStrategy[Any]] = (
        (lambda valid, invalid: valid) if clean else mostly)
    launched = draw(st.floats(0, steps * 1000.0))
    kernel = {"ph": "X", "cat": draw(st.sampled_from(["kernel", "kernel", "gpu_memcpy", "gpu_memset"])),
              "name": draw(st.sampled_from(["ampere_sgemm_128x64_nn", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                            "Memcpy HtoD (Pageable -> Device)", "elementwise_kernel"])),
              "ts": launched + draw(maybe(st.floats(0, 200), numbers)),
              "dur": draw(maybe(st.floats(0, 400), st.one_of(numbers, st.none()))),
              "args": {"stream": draw(st.sampled_from([7, 7, 13, 20])), "correlation": correlation}}
    return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": launched, "dur": 5.0,
             "args": {"correlation": correlation}}, kernel]


@st.composite
def trace_files(draw: st.DrawFn) -> tuple[bytes, str]:
    """A rank's trace as the profiler writes it (profiler steps, launches and their kernels), with some events of
    any kind mixed in."""
    steps = draw(st.integers(1, 4))
    recorded = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": step * 1000.0,
                 "dur": 1000.0} for step in range(steps)]
    clean = draw(st.booleans())  # half the files: every kernel valid
    for correlation in range(draw(st.integers(0, 12))):
        recorded += draw(launched_kernel(correlation + 1, steps, clean))
    recorded += draw(st.lists(events(), max_size=0 if clean else 6))
    document: dict[str, Any] = {"traceEvents": draw(st.permutations(recorded))}
    if draw(st.booleans()):
        world = draw(mostly(st.integers(1, 9), st.integers(-1, 0)))
        document["distributedInfo"] = {"rank": draw(mostly(st.integers(0, max(world - 1, 0)), st.integers(-2, 12))),
                                       "world_size": world}
    # NaN and infinity as Python writes them (not JSON) half the time; else a value out of JSON's range as text
    text = json.dumps(document, allow_nan=True) if _dumpable(document) else json.dumps({"traceEvents": []})
    if draw(st.booleans()):
        text = text.replace("NaN", "1e400").replace("-Infinity", "-1e400").replace("Infinity", "1e400")
    data = text.encode() if clean else draw(damaged(text))
    if draw(st.booleans()):
        return gzip.compress(data), "rank0.json.gz"
    return data, "rank0.json"


def _dumpable(document: dict[str, Any]) -> bool:
    try:
        json.dumps(document, allow_nan=True)
    except (ValueError, OverflowError):
        return False
    return True


def _check_breakdown(path: Path) -> traces.JobBreakdown:
    return traces.combine([traces.read_rank(path)])


@FUZZ
@given(trace_files())
def test_a_trace_is_read_into_numbers_a_project_holds_or_refused_where_it_is_wrong(file: tuple[bytes, str]) -> None:
    data, name = file
    job = read_in_a_file(data, name, _check_breakdown)
    if job is None:
        return
    split = job.split_s(1)
    for value in (*split.values(), *job.run.workers_s):
        assert math.isfinite(value) and value >= 0, split
    # What `ingest trace --project` would append, read back as the project's loader reads it (zero compute
    # is refused there, with its own located error: the point is that no other error can happen).
    row = "1," + ",".join(number_text(split[name]) for name in ("compute", "communication", "idle", "io"))
    try:
        check_measurements(f"nodes,compute [s],communication [s],idle [s],io [s]\n{row}\n", "runs.csv")
    except InputError as error:
        assert all("must be more than zero" in problem.message for problem in error.problems), error


# ----------------------------------------------------------------------------------------------- nccl-tests logs
@st.composite
def nccl_logs(draw: st.DrawFn) -> bytes:
    hosts = draw(st.integers(0, 3))
    ranks = draw(st.integers(1, 4)) if hosts else 0
    lines = ["# nThread 1 nGpus 1 minBytes 8 maxBytes 128M step: 2(factor) warmup iters: 5 iters: 20"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {1000 + r} on host{r % hosts} device  0 [0x07] NVIDIA H100"
              for r in range(ranks * hosts)]
    lines += ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
              "algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
              "(GB/s)"]
    for _ in range(draw(st.integers(0, 6))):
        size = draw(mostly(st.integers(1, 1 << 30).map(str), cells))
        time_us = draw(mostly(st.floats(0.1, 1e5).map(lambda v: f"{v:.2f}"), cells))
        wrong = draw(mostly(st.sampled_from(["0", "N/A"]), st.sampled_from(["1", "x", ""])))
        lines.append(f"   {size}   2   float   sum   -1   {time_us}   1.0   1.9   {wrong}   {time_us}   1.0   1.9   0")
    lines.append("# Avg bus bandwidth    : 12.5")
    return draw(damaged("\n".join(lines) + "\n"))


@FUZZ
@given(nccl_logs())
def test_an_nccl_tests_log_is_read_into_collectives_a_project_holds_or_refused_where_it_is_wrong(data: bytes) -> None:
    table = read_in_a_file(data, "all_reduce.txt", nccltests.read_nccl_tests)
    if table is None:
        return
    assert table.timings
    rows = "".join(f"2,{timing.bytes},{number_text(timing.time_us)},{table.ranks or ''}\n"
                   for timing in table.timings)
    check_measurements(nccltests.HEADER + "\n" + rows, "collectives.csv", collectives=True)  # raises if it cannot


# ------------------------------------------------------------------------------------------------ CodeCarbon CSVs
@st.composite
def emissions_files(draw: st.DrawFn) -> bytes:
    columns = ["timestamp", "project_name", "run_id", "duration", "emissions", "energy_consumed",
               "country_iso_code", "region"]
    if draw(st.integers(0, 5)) == 0:
        columns.remove(draw(st.sampled_from(columns)))
    lines = [",".join(columns)]
    for _ in range(draw(st.integers(0, 4))):
        values = {"timestamp": "2026-11-23T00:31:00", "project_name": "p", "run_id": draw(st.sampled_from("ab")),
                  "duration": draw(mostly(st.floats(0, 1e5).map(repr), cells)),
                  "emissions": draw(mostly(st.floats(0, 10).map(repr), cells)),
                  "energy_consumed": draw(mostly(st.floats(0, 1e3).map(repr), cells)),
                  "country_iso_code": "FRA", "region": ""}
        lines.append(",".join(values[column].replace(",", ";").replace('"', "") for column in columns))
    return draw(damaged("\n".join(lines) + "\n"))


@FUZZ
@given(emissions_files())
def test_an_emissions_csv_is_read_into_energy_a_project_holds_or_refused_where_it_is_wrong(data: bytes) -> None:
    run = read_in_a_file(data, "emissions.csv", emissions.read_emissions)
    if run is None:
        return
    nodes = max(2, run.rows)  # more machine rows than nodes is refused (tests/test_hostile_sweep_two.py)
    energy, recorded = run.energy_at(nodes), run.emissions_at(nodes)
    assert math.isfinite(energy) and energy >= 0
    assert recorded is None or (math.isfinite(recorded) and recorded >= 0)
    check_measurements(f"nodes,time [s],energy [kWh],co2_recorded [kg]\n{nodes},10,{number_text(energy)},"
                       f"{'' if recorded is None else number_text(recorded)}\n", "runs.csv")
