"""PyTorch profiler (Kineto) traces → each rank's temporal breakdown, and the job's breakdown run.

The per-rank definitions are Holistic Trace Analysis's (HTA 0.5.0, Meta's trace analyser), so that a user can check
one tool against the other; the public sample traces reproduce its figures exactly:
- GPU activity is the complete events (`ph: X`) of category kernel, gpu_memcpy or gpu_memset;
- timestamps are rounded as HTA rounds them: a start up to the next microsecond, an end down to the previous one;
- the last profiler step is left out: a GPU event counts when the runtime call that launched it (matched by its
  `correlation` id) started before the last `ProfilerStep#N` began; the window runs from the first kept event's
  start to the last one's end;
- kernels are communication (`^nccl.*|^hip|^hccl|.*ncclKernel.*`), memory (`^(hip)?Memcpy|^(hip)?Memset|^dma`) or
  compute (every other); compute = the union of compute intervals; idle = window − the union of all;
  non-compute = window − compute − idle, of which the communication not under compute is exposed communication
  and the rest memory-only time; overlap = the share of communication time that runs under compute.

Across ranks (what HTA does not do): the k-th collective of each communication stream is matched across ranks; the
fastest rank's duration is the transfer and every other rank's excess is waiting for the slowest, which needs no
clock alignment between nodes. A rank's wait is capped at its exposed communication (a wait hidden under compute
costs no time).

Each rank is reduced to interval arrays as soon as its file is parsed, so memory is bounded by one file's events;
ranks are reduced in parallel processes.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from reportgen.errors import InputError, Problem, UsageError
from reportgen.records import PROVENANCE

COMMUNICATION = re.compile(r"^nccl.*|^hip|^hccl|.*ncclKernel.*")
MEMORY = re.compile(r"^(hip)?Memcpy|^(hip)?Memset|^dma")
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
COMPUTE, MEMORY_KIND, COMMUNICATION_KIND = 0, 1, 2
TRACE_SUFFIXES = (".json", ".json.gz")
MAX_TRACE_BYTES = 4 << 30  # 4 GiB: a guard against a wrong path, far above any one rank's trace


@dataclass(frozen=True)
class RankBreakdown:
    """One rank's temporal breakdown over its window, in microseconds (HTA's definitions)."""

    rank: int
    world_size: int | None
    file: str
    sha256: str
    window_us: float
    idle_us: float
    compute_us: float
    non_compute_us: float
    communication_us: float  # exposed: communication not under compute
    memory_us: float  # memory-only: the rest of non-compute
    overlap_pct: float  # share of communication time under compute
    steps: int  # complete profiler steps in the window
    collectives: tuple[tuple[float, ...], ...]  # per communication stream (by stream id), durations in order


@dataclass(frozen=True)
class RankRow:
    """A rank's breakdown with its wait for the slowest rank (None with one rank: unknown)."""

    breakdown: RankBreakdown
    wait_us: float | None


@dataclass(frozen=True)
class JobRun:
    """The job's breakdown run, per step, in seconds."""

    compute_s: float  # mean per-rank compute
    communication_s: float  # mean exposed transfer (exposed communication less the wait)
    idle_s: float  # mean idle plus mean wait for the slowest rank
    io_s: float  # mean memory-only time
    workers_s: tuple[float, ...]  # per-rank compute, in rank order
    steps: int  # profiler steps the means are taken over (the fewest of any rank)
    wait_measured: bool  # False with one rank: all exposed communication counted as communication


@dataclass(frozen=True)
class JobBreakdown:
    ranks: tuple[RankRow, ...]
    run: JobRun
    world_size: int | None
    files: tuple[tuple[str, str], ...]  # (file name, SHA-256) of every trace read

    def provenance(self, nodes: int, steps_per_run: float) -> tuple[str, ...]:
        """The comment lines recorded above the job's run: what was read, the files' hashes, each rank's times."""
        run, k = self.run, steps_per_run
        wait = "measured across ranks" if run.wait_measured else "unknown (one rank): all exposed communication counted"
        return (f"{PROVENANCE}ingest trace: {nodes} nodes, {len(self.ranks)} ranks, {run.steps} profiler step(s) per "
                f"rank scaled to {k:g} per run; wait for the slowest rank {wait}",
                *(f"{PROVENANCE}trace: {name} sha256 {digest}" for name, digest in self.files),
                *(f"{PROVENANCE}rank {rank}: compute {c * k:.6g} s, communication {m * k:.6g} s, wait {w * k:.6g} s, "
                  f"idle {i * k:.6g} s, io {o * k:.6g} s" for rank, c, m, w, i, o in self.per_rank_s()))

    def split_s(self, steps_per_run: float) -> dict[str, float]:
        """The run's compute / communication / idle / io, in seconds per run of `steps_per_run` steps."""
        run, k = self.run, steps_per_run
        return {"compute": run.compute_s * k, "communication": run.communication_s * k, "idle": run.idle_s * k,
                "io": run.io_s * k}

    def per_rank_s(self) -> list[tuple[int, float, float, float, float, float]]:
        """Each rank's (rank, compute, exposed transfer, wait, idle, io) per profiler step, in seconds."""
        out = []
        for row in self.ranks:
            b, scale = row.breakdown, 1e-6 / row.breakdown.steps
            wait = min(row.wait_us, b.communication_us) if row.wait_us is not None else 0.0
            out.append((b.rank, b.compute_us * scale, (b.communication_us - wait) * scale, wait * scale,
                        b.idle_us * scale, b.memory_us * scale))
        return out


# ------------------------------------------------------------------------------------------------------ reading
def trace_files(paths: Sequence[Path]) -> tuple[list[Path], bool]:
    """The trace files named, a folder standing for the traces inside it; True when a folder was given (then
    every rank of the world must be there)."""
    files: list[Path] = []
    folder = False
    for path in paths:
        if path.is_dir():
            folder = True
            found = sorted(p for p in path.iterdir() if p.name.endswith(TRACE_SUFFIXES) and p.is_file())
            if not found:
                raise InputError([Problem(str(path), 1, 1, "", "the folder holds no .json or .json.gz trace")])
            files += found
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise InputError([Problem(str(path), 1, 1, "", "not a regular file or folder")])
        else:
            raise InputError([Problem(str(path), 1, 1, "", "no such file or folder")])
    return files, folder


class _Args(msgspec.Struct, gc=False):
    stream: int | None = None
    correlation: int | None = None


class _Event(msgspec.Struct, gc=False):
    """The fields of a trace event the breakdown reads; msgspec skips every other field without building it.

    Untracked by the cyclic garbage collector (gc=False: they hold no references back), which otherwise walked the
    hundreds of thousands of events again and again while they were created: half the decoding time."""

    ph: str = ""
    cat: str | None = None
    name: str | int | float | None = None
    ts: float | None = None
    dur: float | None = None
    args: _Args | None = None


class _Distributed(msgspec.Struct, gc=False):
    rank: int = 0
    world_size: int | None = None


class _Trace(msgspec.Struct):
    traceEvents: list[_Event]
    distributedInfo: _Distributed | None = None


def read_rank(path: Path) -> RankBreakdown:
    """Parse one rank's trace file and reduce it; InputError located at the file for anything that is not one."""
    shown = str(path)
    raw = _read_bytes(path, shown)
    try:
        document = msgspec.json.decode(raw, type=_Trace)
    except msgspec.ValidationError as error:
        raise InputError([Problem(shown, 1, 1, "", f"not a profiler trace: {error}")]) from None
    except msgspec.DecodeError as error:
        line, column = _position(raw, str(error))
        raise InputError([Problem(shown, line, column, "", f"not JSON: {error}")]) from None
    info = document.distributedInfo or _Distributed()
    return reduce_events(document.traceEvents, rank=info.rank, world_size=info.world_size, file=path.name,
                         sha256=hashlib.sha256(raw).hexdigest(), shown=shown)


def _position(raw: bytes, message: str) -> tuple[int, int]:
    """Line and column of msgspec's "(byte N)" in a decoding error; the file's start when it names none."""
    found = re.search(r"byte (\d+)", message)
    if not found:
        return 1, 1
    offset = min(int(found.group(1)), len(raw))
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return raw.count(b"\n", 0, offset) + 1, offset - line_start + 1


def _read_bytes(path: Path, shown: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise InputError([Problem(shown, 1, 1, "", f"the file is {size:,} bytes, over the 4 GiB limit")])
        data = path.read_bytes()
        if path.name.endswith(".gz") or data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        return data
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise InputError([Problem(shown, 1, 1, "", f"truncated or corrupt gzip ({error})")]) from None
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", f"cannot read the file ({error.strerror})")]) from None


# ----------------------------------------------------------------------------------------------------- reducing
def reduce_events(events: Iterable[_Event], *, rank: int, world_size: int | None, file: str, sha256: str,
                  shown: str) -> RankBreakdown:
    """A rank's events → its breakdown. Only intervals are kept: GPU start, end, kind, stream and correlation."""
    gpu_start: list[int] = []
    gpu_end: list[int] = []
    gpu_kind: list[int] = []
    gpu_stream: list[int] = []
    gpu_correlation: list[int] = []
    launched: dict[int, int] = {}  # correlation id → start of the runtime call that launched it
    step_starts: list[int] = []
    kinds: dict[str, int] = {}  # kernel name → class: a job launches a few hundred distinct kernels, many times
    ceil, floor = math.ceil, math.floor
    add_start, add_end, add_kind = gpu_start.append, gpu_end.append, gpu_kind.append
    add_stream, add_correlation = gpu_stream.append, gpu_correlation.append
    for event in events:  # the one loop over every event: kept lean (locals, no calls that can be avoided)
        ts = event.ts
        if ts is None or event.ph != "X":
            continue
        start = ceil(ts)  # HTA's rounding of fractional microseconds: the start up, the end down
        args = event.args
        if event.cat in GPU_CATEGORIES:
            name = event.name if isinstance(event.name, str) else str(event.name or "")
            kind = kinds.get(name)
            if kind is None:
                kind = kinds[name] = (COMMUNICATION_KIND if COMMUNICATION.match(name) else
                                      MEMORY_KIND if MEMORY.match(name) else COMPUTE)
            add_start(start)
            add_end(floor(ts + (event.dur or 0.0)))
            add_kind(kind)
            if args is None:
                add_stream(-1)
                add_correlation(-1)
            else:
                add_stream(-1 if args.stream is None else args.stream)
                add_correlation(-1 if args.correlation is None else args.correlation)
        elif args is not None and args.correlation is not None:
            correlation = args.correlation
            previous = launched.get(correlation)
            if previous is None or start < previous:
                launched[correlation] = start
        elif isinstance(event.name, str) and event.name.startswith("ProfilerStep#"):
            step_starts.append(start)
    if not gpu_start:
        raise InputError([Problem(shown, 1, 1, "", "no GPU kernels, copies or sets: a CPU-only profile cannot "
                                  "split GPU time")])
    if len(step_starts) < 2:
        raise InputError([Problem(shown, 1, 1, "", f"{len(step_starts)} profiler step(s): the last step is left "
                                  "out as HTA does, so a trace needs two or more (profile with a schedule of "
                                  "active steps ≥ 2)")])
    last_step = max(step_starts)
    kept = np.array([launched.get(c, last_step) < last_step for c in gpu_correlation], dtype=bool)
    if not kept.any():
        raise InputError([Problem(shown, 1, 1, "", "no GPU event was launched within a complete profiler step")])
    start_us = np.asarray(gpu_start, dtype=np.float64)[kept]
    end_us = np.asarray(gpu_end, dtype=np.float64)[kept]
    kind = np.asarray(gpu_kind, dtype=np.int8)[kept]
    stream = np.asarray(gpu_stream, dtype=np.int64)[kept]
    return _breakdown(start_us, end_us, kind, stream, rank=rank, world_size=world_size, file=file,
                      sha256=sha256, steps=sum(1 for s in step_starts if s < last_step))


def _breakdown(start: np.ndarray, end: np.ndarray, kind: np.ndarray, stream: np.ndarray, *, rank: int,
               world_size: int | None, file: str, sha256: str, steps: int) -> RankBreakdown:
    window = float(end.max() - start.min())
    everything = union(start, end)
    compute = union(start[kind == COMPUTE], end[kind == COMPUTE])
    communication = union(start[kind == COMMUNICATION_KIND], end[kind == COMMUNICATION_KIND])
    compute_us = covered(compute)
    idle_us = window - covered(everything)
    non_compute_us = window - compute_us - idle_us
    with_compute = union(np.concatenate((compute[0], communication[0])), np.concatenate((compute[1], communication[1])))
    exposed_us = covered(with_compute) - compute_us
    communication_total = covered(communication)
    under_compute = compute_us + communication_total - covered(with_compute)
    comm = kind == COMMUNICATION_KIND
    collectives = tuple(tuple(float(d) for d in (end[comm & (stream == s)] - start[comm & (stream == s)])[
        np.argsort(start[comm & (stream == s)], kind="stable")]) for s in np.unique(stream[comm]))
    return RankBreakdown(rank, world_size, file, sha256, window, idle_us, compute_us, non_compute_us, exposed_us,
                         non_compute_us - exposed_us,
                         100.0 * under_compute / communication_total if communication_total > 0 else 0.0,
                         steps, collectives)


def union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals as HTA does: sorted by start, a new interval begins past the furthest end so far."""
    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    starts, ends = start[order], end[order]
    reach = np.maximum.accumulate(ends)
    begins = np.empty(len(starts), dtype=bool)
    begins[0] = True
    begins[1:] = starts[1:] > reach[:-1]
    index = np.flatnonzero(begins)
    return starts[index], np.maximum.reduceat(ends, index)


def covered(intervals: tuple[np.ndarray, np.ndarray]) -> float:
    return float((intervals[1] - intervals[0]).sum())


# ------------------------------------------------------------------------------------------------ the whole job
def combine(breakdowns: Sequence[RankBreakdown], *, folder: bool = False, shown: str = "") -> JobBreakdown:
    """Check the ranks against each other, split exposed communication into transfer and wait, build the run."""
    _check_ranks(breakdowns, folder=folder, shown=shown)
    ranks = sorted(breakdowns, key=lambda b: b.rank)
    waits = _waits(ranks) if len(ranks) > 1 else [None] * len(ranks)
    steps = min(b.steps for b in ranks)
    per_step = [1e-6 / b.steps for b in ranks]  # µs over the window → s per step
    n = len(ranks)
    wait_s = [min(w, b.communication_us) * k if w is not None else 0.0 for b, w, k in zip(ranks, waits, per_step,
                                                                                        strict=True)]
    run = JobRun(
        compute_s=sum(b.compute_us * k for b, k in zip(ranks, per_step, strict=True)) / n,
        communication_s=sum(b.communication_us * k - w for b, k, w in zip(ranks, per_step, wait_s, strict=True)) / n,
        idle_s=sum(b.idle_us * k + w for b, k, w in zip(ranks, per_step, wait_s, strict=True)) / n,
        io_s=sum(b.memory_us * k for b, k in zip(ranks, per_step, strict=True)) / n,
        workers_s=tuple(b.compute_us * k for b, k in zip(ranks, per_step, strict=True)),
        steps=steps,
        wait_measured=n > 1,
    )
    world = next((b.world_size for b in ranks if b.world_size is not None), None)
    return JobBreakdown(tuple(RankRow(b, w) for b, w in zip(ranks, waits, strict=True)), run, world,
                        tuple((b.file, b.sha256) for b in ranks))


def _waits(ranks: Sequence[RankBreakdown]) -> list[float | None]:
    """Each rank's summed excess over the fastest rank, collective by collective (k-th of the j-th stream)."""
    waits = [0.0] * len(ranks)
    streams = max(len(b.collectives) for b in ranks)
    for j in range(streams):
        lanes = [b.collectives[j] if j < len(b.collectives) else () for b in ranks]
        for k in range(max(len(lane) for lane in lanes)):
            present = [(i, lane[k]) for i, lane in enumerate(lanes) if k < len(lane)]
            if len(present) < 2:
                continue  # a collective only one rank ran has nobody to wait for
            fastest = min(duration for _, duration in present)
            for i, duration in present:
                waits[i] += duration - fastest
    return list(waits)


def _check_ranks(breakdowns: Sequence[RankBreakdown], *, folder: bool, shown: str) -> None:
    problems = []
    seen: dict[int, str] = {}
    for b in breakdowns:
        if b.rank in seen:
            problems.append(Problem(b.file, 1, 1, "", f"rank {b.rank} again: {seen[b.rank]} is rank {b.rank} too"))
        seen.setdefault(b.rank, b.file)
    worlds = {b.world_size for b in breakdowns if b.world_size is not None}
    if len(worlds) > 1:
        first = breakdowns[0]
        for b in breakdowns:
            if b.world_size != first.world_size:
                problems.append(Problem(b.file, 1, 1, "", f"world size {b.world_size}, but {first.file} says "
                                        f"{first.world_size}: traces of different jobs"))
    elif folder and worlds:
        (world,) = worlds
        missing = sorted(set(range(world)) - set(seen))
        if missing:
            listed = ", ".join(str(r) for r in missing[:8]) + (" …" if len(missing) > 8 else "")
            problems.append(Problem(shown or breakdowns[0].file, 1, 1, "",
                                    f"ranks missing from the folder of a world of {world}: {listed}"))
    if problems:
        raise InputError(problems)


def reduce_files(files: Sequence[Path], *, processes: int | None = None,
                 scheduler: str | None = None) -> list[RankBreakdown]:
    """Every file reduced, in parallel processes when there are several files and cores, or on a Dask cluster
    when `scheduler` names one (its workers must see the same paths); all errors reported together."""
    import os

    workers = min(len(files), processes or os.cpu_count() or 1)
    if scheduler is not None:
        outcomes = _on_dask(files, scheduler)
    elif workers <= 1:
        outcomes = [_reduce_or_problems(path) for path in files]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(_reduce_or_problems, files, chunksize=max(1, len(files) // (4 * workers))))
    problems = [p for outcome in outcomes if isinstance(outcome, list) for p in outcome]
    if problems:
        raise InputError(problems)
    return [outcome for outcome in outcomes if isinstance(outcome, RankBreakdown)]


def _on_dask(files: Sequence[Path], scheduler: str) -> list[RankBreakdown | list[Problem]]:
    """The per-file reduction on a Dask distributed cluster: past one machine, a 1,024-rank job's traces are
    hundreds of GB, and each reduction returns a few numbers. An optional extra: `pip install 'reportgen[dask]'`."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask distributed: pip install 'reportgen[dask]'") from None
    try:
        with Client(scheduler, timeout=30) as client:  # type: ignore[no-untyped-call]
            futures = client.map(_reduce_or_problems, [str(path) for path in files], pure=False)
            return list(client.gather(futures))
    except OSError as error:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None


def _reduce_or_problems(path: Path | str) -> RankBreakdown | list[Problem]:
    try:
        return read_rank(Path(path))
    except InputError as error:
        return error.problems
