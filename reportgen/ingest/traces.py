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

A file is decoded a few megabytes at a time and each block's events are reduced to interval arrays before the
next is read, so memory is bounded by a rank's GPU intervals, not by its events or its file; ranks are reduced in
parallel processes.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Annotated, BinaryIO, NoReturn, Protocol

import msgspec
import numpy as np

from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import open_regular, why_unreadable
from reportgen.ingest import strict_json
from reportgen.project.records import PROVENANCE
from reportgen.wording import counted

COMMUNICATION = re.compile(r"^nccl.*|^hip|^hccl|.*ncclKernel.*")
MEMORY = re.compile(r"^(hip)?Memcpy|^(hip)?Memset|^dma")
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
WINDOW_TOLERANCE = 0.10  # the window against its steps' spans: beyond this, a warning names both
GPU_STEP_COPY = "gpu_user_annotation"  # the category of a step marker's copy on the GPU timeline (PyTorch 2.4+)
# A CPU profile (DDP over gloo on CPUs): compute is the main thread's CPU ops, communication the
# gloo:* spans (on gloo's own threads) and the c10d::* calls that launch or wait for a collective, on any thread.
COMPUTE, MEMORY_KIND, COMMUNICATION_KIND = 0, 1, 2
TRACE_SUFFIXES = (".json", ".json.gz")


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
    shown: str = ""  # the path as the user gave it, which an error about this rank names (`file` is its name)
    backend: str | None = None  # distributedInfo.backend (nccl, gloo): said in the provenance
    cpu: bool = False  # read as a CPU profile (no GPU work): compute is the main thread's CPU ops
    steps_span_us: float | None = None  # the complete steps' own spans, summed: held against the window

    @property
    def window_departs(self) -> bool:
        """Whether the window and the complete steps it holds are more than 10 % apart (methods.md#profiler-steps):
        the steps' count divides the window, so a window that is not theirs gives a wrong time per step."""
        span = self.steps_span_us
        return span is not None and span > 0 and abs(self.window_us - span) > WINDOW_TOLERANCE * span


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
    # Ranks of the world with no trace (a sampled job: the run is the median rank): counted, never enumerated, since
    # the world size is read from the file; the lowest few are kept for messages.
    missing_count: int = 0
    missing_first: tuple[int, ...] = ()

    @property
    def sampled(self) -> bool:
        return self.missing_count > 0

    def provenance(self, nodes: int, steps_per_run: float) -> tuple[str, ...]:
        """The comment lines recorded above the job's run: what was read, the files' hashes, each rank's times."""
        run, k = self.run, steps_per_run
        wait = "measured across ranks" if run.wait_measured else "unknown (one rank): all exposed communication counted"
        if self.sampled:
            wait += " present (a lower bound: the slowest rank may be one not sampled)"
        ranks = (f"{len(self.ranks)} of {self.world_size} ranks (sampled: the run is the median rank)"
                 if self.sampled else counted(len(self.ranks), "rank"))
        first = self.ranks[0].breakdown
        how = (f"{'CPU' if first.cpu else 'GPU'} profile" + (f", backend {first.backend}" if first.backend else ""))
        return (f"{PROVENANCE}ingest trace: {counted(nodes, 'node')}, {ranks}, {how}, {run.steps} profiler step(s) per "
                f"rank scaled to {k:g} per run; wait for the slowest rank {wait}",
                *(f"{PROVENANCE}trace: {name} sha256 {digest}" for name, digest in self.files),
                *(f"{PROVENANCE}rank {rank}: compute {c * k:.6g} s, communication {m * k:.6g} s, wait {w * k:.6g} s, "
                  f"idle {i * k:.6g} s, io {o * k:.6g} s" for rank, c, m, w, i, o in self.per_rank_s()))

    def warnings(self) -> tuple[str, ...]:
        """A line per rank whose window and complete steps are more than 10 % apart (methods.md#profiler-steps)."""
        return tuple(
            f"warning [trace-window]: rank {b.rank} ({b.file}): the window is {b.window_us / 1e3:.6g} ms but its "
            f"{b.steps} complete profiler step(s) span {(b.steps_span_us or 0.0) / 1e3:.6g} ms; the breakdown keeps "
            "the window (HTA's), so the time per step may be off: check the profiler's schedule and step markers"
            for b in (row.breakdown for row in self.ranks) if b.window_departs)

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
def trace_files(paths: Sequence[Path]) -> list[Path]:
    """The trace files named, a folder standing for the traces inside it (every rank of a job, or a sample of its
    ranks: the job's breakdown says which ranks are missing)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.name.endswith(TRACE_SUFFIXES))
            if not found:
                raise InputError([Problem(str(path), 1, 1, "", "the folder holds no .json or .json.gz trace")])
            files += found  # each is refused when read if it is not a regular file: a rank left out would pass
        elif path.exists():
            files.append(path)
        else:
            raise InputError([Problem(str(path), 1, 1, "", "no such file or folder")])
    return files


# An id (stream, correlation) is kept in a 64-bit array: one past its range is refused by the decoder where it stands
_Id = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class _Args(msgspec.Struct, gc=False):
    stream: _Id | None = None
    correlation: _Id | None = None


# Microseconds, as the profiler writes them. A negative duration, or a time past ±10¹⁸ µs (31,700 years: 1e400 reads
# as infinity), is no measurement: refused by the decoder where it stands, before any breakdown could be negative.
_Timestamp = Annotated[float, msgspec.Meta(ge=-1e18, le=1e18)]
_Duration = Annotated[float, msgspec.Meta(ge=0, le=1e18)]


class _Event(msgspec.Struct, gc=False):
    """The fields of a trace event the breakdown reads; msgspec skips every other field without building it.

    Untracked by the cyclic garbage collector (gc=False: they hold no references back), which otherwise walked the
    hundreds of thousands of events again and again while they were created: half the decoding time."""

    ph: str = ""
    cat: str | None = None
    name: str | int | float | None = None
    ts: _Timestamp | None = None
    dur: _Duration | None = None
    args: _Args | None = None
    tid: int | str | None = None  # the thread (CPU events) or stream lane (GPU events)


class _Distributed(msgspec.Struct, gc=False):
    rank: int = 0
    world_size: int | None = None
    backend: str | None = None  # nccl, gloo, …: said in the provenance


class _Trace(msgspec.Struct):
    traceEvents: list[_Event]
    distributedInfo: _Distributed | None = None


_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_AFTER_EVENT = re.compile(rb"\s*[,\]]")  # what follows an event of the array: the next one, or the array's end
_ARRAY_END = re.compile(rb"\s*\]")
_BYTE = re.compile(r"byte (\d+)")
_INDEX = re.compile(r"\$\[(\d+)\]")
BLOCK_BYTES = 4 << 20  # events are decoded a block at a time: memory is a block's events, not the file's
# Limits, each with its own refusal: a trace that decompresses past MAX_TRACE_BYTES; a compressed trace that expands
# more than MAX_EXPANSION-fold past its first EXPANSION_SLACK (real traces compress about 14-fold: a gzip bomb of
# spaces or of one event repeated expands hundreds-fold); more than MAX_OUTSIDE_BYTES before the traceEvents array or
# after it (a header of a few kB in a real trace); one event longer than MAX_EVENT_BYTES.
MAX_TRACE_BYTES = 8 << 30
MAX_WORLD_SIZE = 1 << 24  # ranks in one job: far past any run today, and a bound on what a 1 kB header can claim
MAX_EXPANSION, EXPANSION_SLACK = 100, 64 << 20
MAX_OUTSIDE_BYTES = 16 << 20
MAX_EVENT_BYTES = 16 << 20


class _TraceFile:
    """One trace file read a block at a time, so that memory holds a few megabytes of decoded events and the
    rank's interval arrays, never the whole file's events (a 50 MB trace holds about 300,000 of them).

    The `traceEvents` array is cut at a closing brace that the next event or the array's end follows, and the cut
    is proved by decoding: a run of the array's events that decodes ends between two events, so a brace inside a
    string or a nested object cannot pass for one. Each run is decoded in place: the separator before it becomes
    `[` and the one after it `]` for the decoder, and are put back (copying every block twice more cost a fifth of
    the ingest). The rest of the document (`distributedInfo` and the like, before or after the events) is decoded
    at the end with the array left empty. The SHA-256 is of the bytes as stored, so that `sha256sum` on the file
    gives the same digest."""

    def __init__(self, path: Path, shown: str) -> None:
        self.path, self.shown = path, shown
        self.sha256 = ""
        self.header = _Trace([])
        self._buffer = bytearray()
        self._start = 0  # buffer index of the separator ('[' or ',') before the next event, or of the array's ']'
        self._offset = 0  # position in the (decompressed) document of the buffer's first byte
        self._lines = 0  # newlines before the buffer
        self._line_start = 0  # document position where the buffer's first line starts
        self._events = 0  # events decoded so far
        self._stored: _Hashing | None = None  # the file as stored, to hold the expansion of a compressed one
        self._searched = 0  # buffer index the search for the traceEvents key has reached

    def event_batches(self) -> Iterator[list[_Event]]:
        digest = hashlib.sha256()
        try:
            with open_regular(self.path) as stored:
                hashed = _Hashing(stored, digest)
                gz = self.path.name.endswith(".gz") or stored.read(2) == b"\x1f\x8b"
                stored.seek(0)
                self._stored = hashed if gz else None
                source: _Readable = gzip.GzipFile(fileobj=hashed, mode="rb") if gz else hashed  # type: ignore[call-overload]
                yield from self._batches(source)
                while hashed.read(BLOCK_BYTES):  # past a gzip member's end: the digest covers every stored byte
                    pass
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            raise self._error(1, 1, f"truncated or corrupt gzip ({error})") from None
        except OSError as error:
            raise self._error(1, 1, why_unreadable(error)) from None
        self.sha256 = digest.hexdigest()

    def _batches(self, source: _Readable) -> Iterator[list[_Event]]:
        found = None
        depth = _Depth()
        while found is None:
            more = self._read(source)
            # only what is new is searched (a key split across two blocks is found from 64 bytes back); the key
            # counts only in the document's own object, not nested in another ({"meta": {"traceEvents": []}})
            found = next((match for match in _EVENTS_KEY.finditer(self._buffer, max(0, self._searched - 64))
                          if match.start() >= depth.at and depth.at_top(self._buffer, match.start())), None)
            self._searched = len(self._buffer)
            if found is None and not more:
                self._decode_header(bytes(self._buffer), len(self._buffer))  # raises when it is not JSON
                raise self._error(1, 1, "not a profiler trace: no traceEvents array")
            if found is None and len(self._buffer) > MAX_OUTSIDE_BYTES:
                raise self._error(1, 1, f"not a profiler trace: no traceEvents array in its first "
                                  f"{MAX_OUTSIDE_BYTES >> 20} MiB")
        prefix = bytes(self._buffer[:found.end() - 1])
        self._start = found.end() - 1
        at_end = False
        while self._buffer[self._start] != ord("]"):
            empty = _ARRAY_END.match(self._buffer, self._start + 1) if self._buffer[self._start] == ord("[") else None
            if empty is not None:
                self._start = empty.end() - 1
                break
            cut = self._cut()
            batch = None if cut is None else self._decode_events(cut)
            if batch is not None:
                yield batch
                following = _AFTER_EVENT.match(self._buffer, cut)  # type: ignore[arg-type]  # cut is set
                assert following is not None  # _cut only returns braces the pattern follows
                self._start = following.end() - 1
            elif at_end:
                self._fail()
            elif len(self._buffer) - self._start > MAX_EVENT_BYTES:
                raise self._error(*self._position(self._start), f"not a profiler trace: no event ends within "
                                  f"{MAX_EVENT_BYTES >> 20} MiB of here")
            else:
                at_end = not self._read(source)
        while self._read(source):  # what follows the array: small
            if len(self._buffer) - self._start > MAX_OUTSIDE_BYTES:
                raise self._error(*self._position(self._start), f"not a profiler trace: more than "
                                  f"{MAX_OUTSIDE_BYTES >> 20} MiB after the traceEvents array")
        self.header = self._decode_header(prefix + b"[]" + self._buffer[self._start + 1:], len(prefix))

    def _read(self, source: _Readable) -> bool:
        """A block more in the buffer, after forgetting what has been decoded; False at the file's end."""
        if self._start:
            newlines = self._buffer.count(b"\n", 0, self._start)
            if newlines:
                self._lines += newlines
                self._line_start = self._offset + self._buffer.rfind(b"\n", 0, self._start) + 1
            del self._buffer[:self._start]
            self._offset += self._start
            self._start = 0
        more = source.read(BLOCK_BYTES)
        self._buffer += more
        self._check_size(self._offset + len(self._buffer))
        return bool(more)

    def _check_size(self, expanded: int) -> None:
        """Refuse a trace past MAX_TRACE_BYTES, and a compressed one that expands like a gzip bomb."""
        if expanded > MAX_TRACE_BYTES:
            raise self._error(1, 1, f"larger than {MAX_TRACE_BYTES >> 30} GiB: reportgen reads traces up to "
                              f"{MAX_TRACE_BYTES >> 30} GiB each (split the profile into fewer steps)")
        stored = self._stored.count if self._stored is not None else 0
        if self._stored is not None and expanded > EXPANSION_SLACK + MAX_EXPANSION * stored:
            raise self._error(1, 1, f"expands more than {MAX_EXPANSION}-fold ({stored:,} compressed bytes have "
                              f"given {expanded:,}): a gzip bomb, not a profiler trace (traces compress about "
                              "14-fold)")

    def _cut(self) -> int | None:
        """Just past the last closing brace in the buffer that an event separator or the array's end follows."""
        end = len(self._buffer)
        for _ in range(64):
            brace = self._buffer.rfind(b"}", self._start, end)
            if brace < 0:
                return None
            if _AFTER_EVENT.match(self._buffer, brace + 1) is not None:
                return brace + 1
            end = brace
        return None

    def _decode_events(self, cut: int) -> list[_Event] | None:
        """The events between the separator at `_start` and the byte at `cut`, decoded in place; None when the cut
        fell inside an event (the decoder stopped at the bracket put at the cut), a located InputError for a fault
        before it."""
        buffer, start = self._buffer, self._start
        before, after = buffer[start], buffer[cut]
        buffer[start], buffer[cut] = ord("["), ord("]")
        try:
            with memoryview(buffer) as view, view[start:cut + 1] as run:
                batch = _EVENTS.decode(run)
        except msgspec.ValidationError as error:
            raise self._invalid(error) from None
        except UnicodeDecodeError as error:  # a name in another encoding: JSON is UTF-8
            raise self._not_utf8(start, error) from None
        except msgspec.DecodeError as error:
            byte = _BYTE.search(str(error))
            if byte is None or start + int(byte.group(1)) >= cut:
                return None
            raise self._error(*self._position(start + int(byte.group(1))), f"not JSON: {error}") from None
        finally:
            buffer[start], buffer[cut] = before, after
        self._events += len(batch)
        return batch

    def _not_utf8(self, start: int, error: UnicodeDecodeError) -> InputError:
        """A byte that is not UTF-8, located in the file (the decoder counts from the string it was in, so the
        buffer is decoded again to find the byte)."""
        try:
            bytes(self._buffer[start:]).decode("utf-8")
            at = start + error.start
        except UnicodeDecodeError as again:
            at = start + again.start
        return self._error(*self._position(at), f"not UTF-8: byte 0x{self._buffer[at]:02x} (JSON text is UTF-8, "
                           "as the profiler writes it)")

    def _fail(self) -> NoReturn:
        """At the file's end with events that never decode: the decoder's own error, where the JSON breaks off."""
        try:
            _EVENTS.decode(b"[" + self._buffer[self._start + 1:])
        except msgspec.ValidationError as error:
            raise self._invalid(error) from None
        except UnicodeDecodeError as error:
            raise self._not_utf8(self._start, error) from None
        except msgspec.DecodeError as error:
            byte = _BYTE.search(str(error))
            at = self._start + int(byte.group(1)) if byte else len(self._buffer)
            raise self._error(*self._position(at), f"not JSON: {error}") from None
        raise self._error(*self._position(len(self._buffer)), "not JSON: the traceEvents array never closes")

    def _decode_header(self, document: bytes, prefix: int) -> _Trace:
        """The document around the events: the file's first `prefix` bytes, an empty array, and what follows the
        array (from the buffer's `_start`)."""
        try:
            header = _HEADER.decode(document)
            # the header (rank, world size, devices) read as every other tool's JSON is: a key twice in one object
            # (two ranks' distributedInfo merged) is refused, not taken last-wins as msgspec takes it. The events,
            # hundreds of MB, are msgspec's alone.
            strict_json.loads(document)
            return header
        except msgspec.ValidationError as error:
            raise self._error(1, 1, f"not a profiler trace: {error}") from None
        except UnicodeDecodeError as error:
            line, column = _line_column(document, error.start)
            raise self._error(line, column, "not UTF-8 (JSON text is UTF-8)") from None
        except msgspec.DecodeError as error:
            byte = _BYTE.search(str(error))
            at = int(byte.group(1)) if byte else len(document)
            line, column = (_line_column(document, at) if at < prefix else
                            self._position(self._start + max(0, at - prefix - 1)))
            raise self._error(line, column, f"not JSON: {error}") from None
        except (ValueError, RecursionError) as error:  # strict_json's refusals (msgspec read the same text)
            raise self._error(1, 1, f"not a profiler trace: {error}") from None

    def _position(self, index: int) -> tuple[int, int]:
        """Line and column in the file of the buffer's byte `index`."""
        index = min(index, len(self._buffer))
        newlines = self._buffer.count(b"\n", 0, index)
        start = self._offset + self._buffer.rfind(b"\n", 0, index) + 1 if newlines else self._line_start
        return self._lines + newlines + 1, self._offset + index - start + 1

    def _invalid(self, error: msgspec.ValidationError) -> InputError:
        """A field of the wrong type, at its index in the whole array (the decoder counts within a run)."""
        where = _INDEX.sub(lambda m: f"$.traceEvents[{int(m.group(1)) + self._events}]", str(error))
        return self._error(1, 1, f"not a profiler trace: {where}")

    def _error(self, line: int, column: int, message: str) -> InputError:
        return InputError([Problem(self.shown, line, column, "", message)])


def _line_column(data: bytes, at: int) -> tuple[int, int]:
    """Line and column of byte `at` of `data`, which starts a file."""
    return data.count(b"\n", 0, at) + 1, at - (data.rfind(b"\n", 0, at) + 1) + 1


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Hashing:
    """A binary file whose reads feed a digest: the stored bytes are hashed as they are read, once."""

    def __init__(self, file: BinaryIO, digest: hashlib._Hash) -> None:
        self._file, self._digest = file, digest
        self.count = 0  # bytes read so far

    def read(self, size: int = -1, /) -> bytes:
        data = self._file.read(size)
        self._digest.update(data)
        self.count += len(data)
        return data


_EVENTS = msgspec.json.Decoder(list[_Event])
_HEADER = msgspec.json.Decoder(_Trace)


def read_rank(path: Path) -> RankBreakdown:
    """Parse one rank's trace file and reduce it; InputError located at the file for anything that is not one."""
    shown = str(path)
    trace = _TraceFile(path, shown)
    start, end, kind, stream, steps, window_us, steps_span_us = reduce_events(
        chain.from_iterable(trace.event_batches()), shown=shown)
    info = trace.header.distributedInfo or _Distributed()
    breakdown = _breakdown(start, end, kind, stream, steps, window_us, rank=info.rank, world_size=info.world_size,
                           file=path.name, sha256=trace.sha256)
    return replace(breakdown, shown=shown, backend=info.backend, cpu=window_us is not None,
                   steps_span_us=steps_span_us)


# ----------------------------------------------------------------------------------------------------- reducing
class _Depth:
    """How deep a position of a JSON text is, scanned once from the start as candidates come (strings skipped)."""

    def __init__(self) -> None:
        self.at, self.depth, self.in_string, self.escaped = 0, 0, False, False

    def at_top(self, text: bytearray, position: int) -> bool:
        """Whether `position` lies directly in the outermost object (depth 1), outside any string."""
        for byte in memoryview(text)[self.at:position]:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif byte == 0x5C:  # backslash
                    self.escaped = True
                elif byte == 0x22:  # quote
                    self.in_string = False
            elif byte == 0x22:
                self.in_string = True
            elif byte in (0x7B, 0x5B):  # { [
                self.depth += 1
            elif byte in (0x7D, 0x5D):  # } ]
                self.depth -= 1
        self.at = position
        return self.depth == 1 and not self.in_string


def reduce_events(events: Iterable[_Event], *, shown: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                     int, float | None, float]:
    """A rank's events → the start, end, kind and stream of each GPU event kept, the complete steps, the window
    (None: the GPU events' own span, as HTA takes it) and the sum of the complete steps' spans. A profile without
    GPU work is read as a CPU one: the main thread's CPU ops and the gloo / c10d communication spans, over the
    complete steps.

    The loop only appends raw fields to typed arrays (8 bytes an entry, where a list holds a 32-byte object); the
    rounding and the matching of kernels to their launches run on whole arrays in numpy afterwards, a third of the
    loop's time when it did them event by event."""
    gpu_ts, gpu_dur, launch_ts = array("d"), array("d"), array("d")
    gpu_stream, gpu_correlation, launch_correlation = array("q"), array("q"), array("q")
    gpu_kind = array("b")
    kinds: dict[str, int] = {}  # kernel name → class: a job launches a few hundred distinct kernels, many times
    add_ts, add_dur, add_kind = gpu_ts.append, gpu_dur.append, gpu_kind.append
    add_stream, add_correlation = gpu_stream.append, gpu_correlation.append
    add_launch_ts, add_launch_correlation = launch_ts.append, launch_correlation.append
    cpu = _CpuEvents()
    markers: list[tuple[float, float, int | str | None, str]] = []  # every CPU-side ProfilerStep#N: ts, dur, tid, name
    last_copy = -math.inf  # the last step marker's copy on the GPU timeline
    for event in events:  # the one loop over every event: kept lean (locals, the common cases tested first)
        if event.cat in GPU_CATEGORIES:
            ts = event.ts
            if ts is None or event.ph != "X":
                continue
            name = event.name if isinstance(event.name, str) else str(event.name or "")
            kind = kinds.get(name)
            if kind is None:
                kind = kinds[name] = (COMMUNICATION_KIND if COMMUNICATION.match(name) else
                                      MEMORY_KIND if MEMORY.match(name) else COMPUTE)
            add_ts(ts)
            add_dur(event.dur or 0.0)
            add_kind(kind)
            args = event.args
            if args is None:
                add_stream(-1)
                add_correlation(-1)
            else:
                add_stream(-1 if args.stream is None else args.stream)
                add_correlation(-1 if args.correlation is None else args.correlation)
            continue
        args = event.args
        if args is not None and args.correlation is not None:  # a runtime call that launched GPU work
            ts = event.ts
            if ts is not None and event.ph == "X":
                add_launch_ts(ts)
                add_launch_correlation(args.correlation)
        elif (isinstance(event.name, str) and event.name.startswith("ProfilerStep#") and event.ts is not None
              and event.ph == "X"):
            if event.cat != GPU_STEP_COPY:
                markers.append((event.ts, event.dur or 0.0, event.tid, event.name))
            else:  # PyTorch 2.4+ copies each step onto the GPU timeline: not a step, but HTA's window ends at it
                last_copy = max(last_copy, event.ts)
        elif not gpu_ts and event.ph == "X" and event.ts is not None:  # kept only while no GPU work is seen
            cpu.add(event)
    if not gpu_ts and not cpu.ts:
        raise InputError([Problem(shown, 1, 1, "", "neither GPU kernels, copies or sets nor CPU ops: nothing to "
                                  "split")])
    steps = profiler_steps(markers)
    if len(steps.starts) < 2:
        raise InputError([Problem(shown, 1, 1, "", f"{len(steps.starts)} profiler step(s): the last step is left "
                                  "out as HTA does, so a trace needs two or more (profile with a schedule of "
                                  "active steps ≥ 2)")])
    # HTA's rounding of fractional microseconds: a start up to the next one, an end down to the previous one; an
    # event shorter than the gap this opens (1.5 µs long 0 rounds to 2…1) covers nothing, never negative time
    last_step = math.ceil(steps.starts[-1])
    complete = sum(1 for s in steps.starts if math.ceil(s) < last_step)
    # HTA reads the GPU copies as steps too, so its window takes the GPU work launched before the last marker of
    # either kind (the copy of the last step starts a little after it): kept, so that its figures are reproduced
    window_end = max(last_step, math.ceil(last_copy)) if last_copy > -math.inf else last_step
    if complete == 0:  # every step starts within the last one's microsecond: no step has a length to divide by
        raise InputError([Problem(shown, 1, 1, "", f"the {len(steps.starts)} profiler steps start within one "
                                  "microsecond: no complete step to measure")])
    spans_us = math.fsum(d for s, d in zip(steps.starts, steps.spans, strict=True) if math.ceil(s) < last_step)
    if not gpu_ts:
        return (*cpu.intervals(steps.starts[0], float(last_step), steps.thread, complete, shown), spans_us)
    starts = np.frombuffer(gpu_ts, dtype=np.float64)
    launches = np.frombuffer(launch_correlation, dtype=np.int64)
    early = launches[np.ceil(np.frombuffer(launch_ts, dtype=np.float64)) < window_end]
    kept = np.isin(np.frombuffer(gpu_correlation, dtype=np.int64), early)  # launched before the last step began
    if not kept.any():
        raise InputError([Problem(shown, 1, 1, "", "no GPU event was launched within a complete profiler step")])
    rounded_starts = np.ceil(starts[kept])
    rounded_ends = np.maximum(np.floor(starts[kept] + np.frombuffer(gpu_dur, dtype=np.float64)[kept]), rounded_starts)
    return (rounded_starts, rounded_ends,
            np.frombuffer(gpu_kind, dtype=np.int8)[kept], np.frombuffer(gpu_stream, dtype=np.int64)[kept], complete,
            None, spans_us)


@dataclass(frozen=True)
class ProfilerSteps:
    """The profiler steps of one rank: one per step number, in time order (methods.md#profiler-steps)."""

    starts: tuple[float, ...]  # µs, as written
    spans: tuple[float, ...]  # µs: each step's duration on the thread that marks it
    thread: int | str | None  # that thread: the one marking the most steps


def profiler_steps(markers: Sequence[tuple[float, float, int | str | None, str]]) -> ProfilerSteps:
    """The steps among CPU-side `ProfilerStep#N` markers (ts, dur, thread, name): the outermost spans, one per step
    number (the first), of the thread with the most of them (ties: the lowest thread id, so that the choice never
    depends on the file's order nor on hashing). A marker nested in another, a second marker of a number already
    seen and another thread's markers are not more steps. One sort per thread: a hostile trace of 80,000 markers on
    as many threads costs a pass."""
    by_thread: dict[int | str | None, list[tuple[float, float, str]]] = {}
    for ts, dur, tid, name in markers:
        by_thread.setdefault(tid, []).append((ts, -dur, name))
    best: ProfilerSteps = ProfilerSteps((), (), None)
    best_key: tuple[int, tuple[int, int, str]] | None = None
    for tid, spans in by_thread.items():
        steps = _outermost(spans, tid)
        key = (-len(steps.starts), _thread_order(tid))
        if best_key is None or key < best_key:
            best, best_key = steps, key
    return best


def _outermost(spans: list[tuple[float, float, str]], tid: int | str | None) -> ProfilerSteps:
    """One thread's steps: its outermost spans in time order, the first of each step number."""
    starts: list[float] = []
    lengths: list[float] = []
    seen: set[str] = set()
    reach = -math.inf
    for ts, negative_dur, name in sorted(spans):  # by start, the longer first at one start
        end = ts - negative_dur
        if (ts < reach and end <= reach) or name in seen:  # inside a step kept before it, or a number counted
            continue
        seen.add(name)
        starts.append(ts)
        lengths.append(-negative_dur)
        reach = max(reach, end)
    return ProfilerSteps(tuple(starts), tuple(lengths), tid)


def _thread_order(tid: int | str | None) -> tuple[int, int, str]:
    """Thread ids in a total order: numbers by value, then names, then none."""
    if isinstance(tid, int):
        return 0, tid, ""
    return (1, 0, tid) if isinstance(tid, str) else (2, 0, "")


class _CpuEvents:
    """The CPU ops and communication spans of a CPU profile, kept as typed arrays while the events stream past."""

    def __init__(self) -> None:
        self.ts, self.dur, self.thread, self.kind = array("d"), array("d"), array("q"), array("b")
        self.lane = array("q")  # a communication span's lane, for the waits across ranks: 0 gloo, 1 c10d
        self._threads: dict[int | str | None, int] = {}  # a thread id (an int, or a name) → a small number

    def add(self, event: _Event) -> None:
        """One event, kept when it is a CPU op or a communication span (a GPU trace passes its CPU ops through here
        until its first kernel: the tests are ordered for them)."""
        name = event.name
        if not isinstance(name, str):
            return
        if name.startswith(("gloo:", "c10d::")):
            kind, lane = COMMUNICATION_KIND, 0 if name[0] == "g" else 1
        elif event.cat == "cpu_op":
            kind, lane = COMPUTE, -1
        else:
            return
        self.ts.append(event.ts or 0.0)
        self.dur.append(event.dur or 0.0)
        tid = event.tid
        thread = self._threads.get(tid)
        if thread is None:
            thread = self._threads[tid] = len(self._threads)
        self.thread.append(thread)
        self.kind.append(kind)
        self.lane.append(lane)

    def intervals(self, first: float, last: float, main: int | str | None, steps: int,
                  shown: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, float]:
        """Compute: the main thread's CPU ops; communication: every thread's; both clipped to the complete steps
        [first step's start, last step's start). Thread ids differ from rank to rank, so the spans are matched
        across ranks by lane (gloo's own spans, the c10d calls), in time order."""
        starts = np.frombuffer(self.ts, dtype=np.float64)
        ends = starts + np.frombuffer(self.dur, dtype=np.float64)
        kind = np.frombuffer(self.kind, dtype=np.int8)
        thread = np.frombuffer(self.thread, dtype=np.int64)
        main_thread = self._threads.get(main, -1)
        kept = ((kind == COMMUNICATION_KIND) | (thread == main_thread)) & (ends > first) & (starts < last)
        if not (kept & (kind == COMPUTE)).any():
            raise InputError([Problem(shown, 1, 1, "", "no CPU op of the main thread (the one marking the profiler "
                                      "steps) within a complete step: nothing to split")])
        return (np.maximum(starts[kept], first), np.minimum(ends[kept], last), kind[kept],
                np.frombuffer(self.lane, dtype=np.int64)[kept], steps, last - first)


def _breakdown(start: np.ndarray, end: np.ndarray, kind: np.ndarray, stream: np.ndarray, steps: int,
               window_us: float | None, *, rank: int, world_size: int | None, file: str, sha256: str) -> RankBreakdown:
    window = float(end.max() - start.min()) if window_us is None else window_us
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
        np.argsort(start[comm & (stream == s)], kind="stable")]) for s in sorted(set(stream[comm].tolist())))
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
def combine(breakdowns: Sequence[RankBreakdown]) -> JobBreakdown:
    """Check the ranks against each other, split exposed communication into transfer and wait, build the run."""
    _check_ranks(breakdowns)
    ranks = sorted(breakdowns, key=lambda b: b.rank)
    waits = _waits(ranks) if len(ranks) > 1 else [None] * len(ranks)
    steps = min(b.steps for b in ranks)
    per_step = [1e-6 / b.steps for b in ranks]  # µs over the window → s per step
    wait_s = [min(w, b.communication_us) * k if w is not None else 0.0 for b, w, k in zip(ranks, waits, per_step,
                                                                                        strict=True)]
    world = next((b.world_size for b in ranks if b.world_size is not None), None)
    present = {b.rank for b in ranks}
    missing = world - len(present) if world else 0
    # Every rank of the job: their mean. A sample of its ranks (a folder that keeps a few of a large job, as HTA
    # reads it): the median rank, which one odd rank does not move.
    middle = _median if missing else _mean
    run = JobRun(
        compute_s=middle([b.compute_us * k for b, k in zip(ranks, per_step, strict=True)]),
        communication_s=middle([b.communication_us * k - w for b, k, w in zip(ranks, per_step, wait_s,
                                                                               strict=True)]),
        idle_s=middle([b.idle_us * k + w for b, k, w in zip(ranks, per_step, wait_s, strict=True)]),
        io_s=middle([b.memory_us * k for b, k in zip(ranks, per_step, strict=True)]),
        workers_s=tuple(b.compute_us * k for b, k in zip(ranks, per_step, strict=True)),
        steps=steps,
        wait_measured=len(ranks) > 1,
    )
    return JobBreakdown(tuple(RankRow(b, w) for b, w in zip(ranks, waits, strict=True)), run, world,
                        tuple((b.file, b.sha256) for b in ranks), missing,
                        _lowest_absent(present, min(missing, MISSING_SHOWN)))


MISSING_SHOWN = 1000  # absent ranks listed by number (messages show six; the JSON output up to this many)


def _lowest_absent(present: set[int], count: int) -> tuple[int, ...]:
    """The `count` lowest ranks not in `present`, without enumerating the world: O(len(present) + count)."""
    out: list[int] = []
    rank = 0
    while len(out) < count:
        if rank not in present:
            out.append(rank)
        rank += 1
    return tuple(out)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _median(values: list[float]) -> float:
    return float(np.median(values))


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


def _check_ranks(breakdowns: Sequence[RankBreakdown]) -> None:
    """Ranks that can be one job's: each within its world (0 … world − 1), none twice, one world size."""
    problems = []

    def refuse(b: RankBreakdown, message: str) -> None:
        problems.append(Problem(b.shown or b.file, 1, 1, "", message))

    seen: dict[int, str] = {}
    for b in breakdowns:
        if b.world_size is not None and b.world_size < 1:
            refuse(b, f"distributedInfo.world_size {b.world_size}: a job has one rank or more")
        elif b.world_size is not None and b.world_size > MAX_WORLD_SIZE:
            refuse(b, f"distributedInfo.world_size {b.world_size:,} is past the {MAX_WORLD_SIZE:,} ranks reportgen "
                   "reads (the largest jobs run about 10^5 ranks)")
        elif b.rank < 0 or (b.world_size is not None and b.rank >= b.world_size):
            world = b.world_size if b.world_size is not None else "unknown size"
            refuse(b, f"distributedInfo.rank {b.rank} is outside its world of {world} (ranks 0 to "
                   f"{(b.world_size or 1) - 1})")
        if b.rank in seen:
            refuse(b, f"rank {b.rank} again: {seen[b.rank]} is rank {b.rank} too")
        seen.setdefault(b.rank, b.file)
    worlds = {b.world_size for b in breakdowns if b.world_size is not None}
    if len(worlds) > 1:
        first = breakdowns[0]
        for b in breakdowns:
            if b.world_size != first.world_size:
                refuse(b, f"world size {b.world_size}, but {first.file} says {first.world_size}: traces of "
                       "different jobs")
    on_device = next((b for b in breakdowns if not b.cpu), None)
    if on_device is not None:  # compute is GPU kernels on one rank, CPU ops on another: no breakdown adds them up
        for b in breakdowns:
            if b.cpu:
                refuse(b, f"has no GPU work (read as a CPU profile) while {on_device.file} has: one job's ranks "
                       "are profiled alike; ingest the CPU and the GPU traces separately")
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

        from reportgen.interrupts import as_worker, shut_down_after

        # as_worker: a worker exits with its parent and on Ctrl-C, so that an interrupted ingest leaves none behind
        pool = ProcessPoolExecutor(max_workers=workers, initializer=as_worker)
        with shut_down_after(pool):
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
    except (OSError, ValueError, TypeError) as error:  # ValueError, TypeError: an address Dask cannot parse
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None


def _reduce_or_problems(path: Path | str) -> RankBreakdown | list[Problem]:
    try:
        return read_rank(Path(path))
    except InputError as error:
        return error.problems
