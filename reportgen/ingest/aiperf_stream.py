"""AIPerf's `profile_export.jsonl` read as a stream (methods.md#the-records-store): a million records with their
chunk gaps are gigabytes, so the file is read in 32 MiB pieces cut at newlines, each decoded by msgspec into structs
that name only the fields read (every other field is skipped unparsed), and the columns kept as numpy arrays. No
size limit: the memory held is the columns, not the file.

A file past 64 MiB is read by two processes, each over half of it (cut at a newline), while a third hashes it
whole: on two cores the decoding and the hash, not the disk, are what take the time.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
from collections.abc import Collection, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import msgspec
import numpy as np

from reportgen.errors import InputError, Problem
from reportgen.files import open_regular, why_unreadable
from reportgen.ingest import strict_json

PIECE_BYTES = 32 << 20
SPLIT_BYTES = 64 << 20  # a file this large is read by two processes
MAX_LINE_BYTES = 64 << 20  # one record: AIPerf's are a few kilobytes
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
NO_CREDIT = -1  # credit_issued_ns not written (a Unix time in nanoseconds is never negative)


# The structs are not tracked by the garbage collector (gc=False): they hold numbers, strings and the raw error,
# never a cycle, and a million records made 7 million tracked objects that every collection walked (a quarter of
# the reading)
class _Metric(msgspec.Struct, gc=False):
    value: float
    unit: str | None = None


class _Metrics(msgspec.Struct, gc=False):
    time_to_first_token: _Metric | None = None
    request_latency: _Metric | None = None
    usage_completion_tokens: _Metric | None = None
    output_sequence_length: _Metric | None = None


class _Metadata(msgspec.Struct, gc=False):
    request_start_ns: int
    credit_issued_ns: int | None = None
    benchmark_phase: str | None = None
    was_cancelled: bool = False


class _Record(msgspec.Struct, gc=False):
    metadata: _Metadata
    metrics: _Metrics | None = None
    error: object = None  # null, or the error: only whether there is one is read


_DECODER = msgspec.json.Decoder(_Record)
_NO_METRICS = _Metrics()
_METADATA, _PHASE = attrgetter("metadata"), attrgetter("benchmark_phase")
_START, _CREDIT = attrgetter("request_start_ns"), attrgetter("credit_issued_ns")
_CANCELLED, _ERROR = attrgetter("was_cancelled"), attrgetter("error")
_TTFT, _E2E = attrgetter("time_to_first_token"), attrgetter("request_latency")
_USAGE, _VALUE, _UNIT = attrgetter("usage_completion_tokens"), attrgetter("value"), attrgetter("unit")


class _BadRecord(Exception):
    """A record whose value cannot be right: its index among the records decoded together, and why."""

    def __init__(self, index: int, field: str, message: str) -> None:
        super().__init__(message)
        self.index, self.field, self.message = index, field, message


@dataclass
class Columns:
    """The profiling phase's requests, a column each, a numpy array per piece: integer nanoseconds kept as integers
    until they are subtracted (a Unix time in nanoseconds has more digits than a float64 holds)."""

    start_ns: list[np.ndarray] = field(default_factory=list)
    credit_ns: list[np.ndarray] = field(default_factory=list)  # NO_CREDIT where not written
    ttft_s: list[np.ndarray] = field(default_factory=list)
    e2e_s: list[np.ndarray] = field(default_factory=list)
    tokens: list[np.ndarray] = field(default_factory=list)
    ok: list[np.ndarray] = field(default_factory=list)
    from_server: int = 0
    from_client: int = 0
    warmup: int = 0

    def add(self, records: list[_Record]) -> None:
        """Records decoded together, a column at a time. A million records go through map and attrgetter, which
        iterate in C, not through Python statements a record. _BadRecord for a value that cannot be right."""
        metadata = list(map(_METADATA, records))
        indexes: Sequence[int] = range(len(records))  # each kept record's index among those decoded
        if "warmup" in map(_PHASE, metadata):
            indexes = [index for index, entry in enumerate(metadata) if entry.benchmark_phase != "warmup"]
            self.warmup += len(records) - len(indexes)
            records, metadata = [records[index] for index in indexes], [metadata[index] for index in indexes]
        count = len(records)
        metrics = [record.metrics or _NO_METRICS for record in records]
        self.start_ns.append(np.fromiter(map(_START, metadata), np.int64, count))
        credits = list(map(_CREDIT, metadata))
        self.credit_ns.append(np.fromiter(credits if None not in credits else
                                          (NO_CREDIT if credit is None else credit for credit in credits),
                                          np.int64, count))
        ok = ~np.fromiter(map(_CANCELLED, metadata), bool, count)
        errors = list(map(_ERROR, records))
        if errors.count(None) < count:
            ok &= np.fromiter((error is None for error in errors), bool, count)
        self.ok.append(ok)
        self.ttft_s.append(_seconds(list(map(_TTFT, metrics)), "metrics.time_to_first_token", indexes))
        self.e2e_s.append(_seconds(list(map(_E2E, metrics)), "metrics.request_latency", indexes))
        usage = list(map(_USAGE, metrics))
        server = count - usage.count(None)
        self.from_server += server
        self.from_client += count - server
        if server < count:  # the client's count where the server gave none
            usage = [given if given is not None else m.output_sequence_length
                     for given, m in zip(usage, metrics, strict=True)]
        self.tokens.append(_counts(usage, indexes))

    def extend(self, other: Columns) -> None:
        for name in ("start_ns", "credit_ns", "ttft_s", "e2e_s", "tokens", "ok"):
            getattr(self, name).extend(getattr(other, name))
        self.from_server += other.from_server
        self.from_client += other.from_client
        self.warmup += other.warmup

    def column(self, name: str) -> np.ndarray:
        parts: list[np.ndarray] = getattr(self, name)
        joined: np.ndarray = np.concatenate(parts) if parts else np.zeros(0)
        return joined


def read_columns(path: Path, shown: str, *, processes: int = 2) -> tuple[Columns, str]:
    """Every record of the file and the SHA-256 of its bytes; InputError at the line of a record that is not one."""
    try:
        size = os.stat(path).st_size
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None
    split = processes >= 2 and size >= SPLIT_BYTES and hasattr(os, "fork") and (os.cpu_count() or 1) >= 2
    middle = _line_start_after(path, shown, size // 2) if split else size
    if middle >= size:
        with ThreadPoolExecutor(max_workers=1) as hasher:  # hashlib lets go of the GIL: it runs beside the decoding
            digest = hasher.submit(_sha256, path, shown)
            columns = _read_range(path, shown, 0, size)
            return columns, digest.result()
    # The hash has a process of its own: on a thread beside this one's decoding it waited for the GIL between
    # its reads and its updates, got a third of its share of the cores, and finished 1.4 s after the decoding.
    # The processes are forked before any thread of this one starts (forking a process with threads is unsafe).
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
        later = pool.submit(_read_range, path, shown, middle, size)
        digest = pool.submit(_sha256, path, shown)
        columns = _read_range(path, shown, 0, middle)
        columns.extend(later.result())
        return columns, digest.result()


HASH_BYTES = 8 << 20  # the hash's buffer, reused: a new 32 MiB bytes object a read cost more than the hashing


def _sha256(path: Path, shown: str) -> str:
    found = hashlib.sha256()
    buffer = bytearray(HASH_BYTES)
    view = memoryview(buffer)
    try:
        with open_regular(path) as handle:
            while got := handle.readinto(buffer):
                found.update(view[:got])
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None
    return found.hexdigest()


def _line_start_after(path: Path, shown: str, offset: int) -> int:
    """The offset of the first line that starts after `offset` (the file's size when none does)."""
    try:
        with open_regular(path) as handle:
            handle.seek(offset)
            while piece := handle.read(1 << 20):
                found = piece.find(b"\n")
                if found >= 0:
                    return offset + found + 1
                offset += len(piece)
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None
    return offset


def _read_range(path: Path, shown: str, start: int, stop: int) -> Columns:
    """The records of the bytes [start, stop) (whole lines), a piece at a time into one buffer: the partial line a
    piece ends in is moved to the buffer's start and the next piece read in after it, so a byte is copied once
    from the file and never again (slicing and joining 32 MiB pieces cost a fifth of the reading)."""
    columns = Columns()
    buffer = bytearray(PIECE_BYTES)
    view = memoryview(buffer)
    held = 0  # bytes at the buffer's start not yet decoded: the line the last piece cut
    offset = start  # the file offset of the buffer's first byte
    try:
        with open_regular(path) as handle:
            handle.seek(start)
            while (wanted := min(len(buffer), stop - offset) - held) > 0 \
                    and (got := handle.readinto(view[held:held + wanted])):
                filled = held + got
                cut = buffer.rfind(b"\n", 0, filled) + 1
                if cut == 0:  # no line ends in the buffer: all of it continues one line
                    if filled > MAX_LINE_BYTES:
                        raise InputError([Problem(shown, _line_of(path, offset, b"", None), 1, "",
                                                  f"a line longer than {MAX_LINE_BYTES >> 20} MiB: not an AIPerf "
                                                  "record")])
                    if filled == len(buffer):  # room for more of the line
                        view.release()
                        buffer.extend(bytes(PIECE_BYTES))
                        view = memoryview(buffer)
                    held = filled
                    continue
                _decoded(view[:cut], columns, path, shown, offset)
                buffer[:filled - cut] = buffer[cut:filled]  # the cut line, to the start (no resize)
                offset += cut
                held = filled - cut
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None
    _decoded(view[:held], columns, path, shown, offset)
    return columns


def _decoded(data: memoryview, columns: Columns, path: Path, shown: str, offset: int) -> None:
    """The records of whole lines starting at byte `offset` of the file, added to the columns."""
    try:
        columns.add(_DECODER.decode_lines(data))
    except msgspec.DecodeError as error:
        index = _index_in(str(error))
        raise InputError([Problem(shown, _line_of(path, offset, bytes(data), index), 1, "",
                                  f"not an AIPerf record: {error}")]) from None
    except _BadRecord as bad:
        raise InputError([Problem(shown, _line_of(path, offset, bytes(data), bad.index), 1, bad.field,
                                  bad.message)]) from None


def _index_in(message: str) -> int | None:
    """The record msgspec's message points at: `… - at $[12].metadata` is the 13th."""
    if "$[" not in message:
        return None
    try:
        return int(message.split("$[", 1)[1].split("]", 1)[0])
    except ValueError:
        return None


def _line_of(path: Path, offset: int, data: bytes, index: int | None) -> int:
    """The file's line of the index-th record of `data` (blank lines are skipped by the decoder, counted here),
    counting the lines before `offset` again: a problem is rare, and the happy path counts nothing."""
    before = 0
    with open_regular(path) as handle:
        remaining = offset
        while remaining > 0 and (piece := handle.read(min(PIECE_BYTES, remaining))):
            before += piece.count(b"\n")
            remaining -= len(piece)
    found = strict_json.record_line(data, index) if index is not None else None
    return before + (found or 1)


def _seconds(metrics: list[_Metric | None], field: str, indexes: Sequence[int]) -> np.ndarray:
    """A time metric in seconds (NaN where a record has none), each record's unit checked."""
    values = _values(metrics)
    units = set(map(_UNIT, filter(None, metrics)))
    if not units <= TIME_UNITS.keys():
        index, unit = _first_unit_not_in(metrics, TIME_UNITS.keys())
        raise _BadRecord(indexes[index], field, f"unit {unit!r} is not a time unit (ns, us, ms, s)")
    _all_finite(values, metrics, field, indexes)
    scale = TIME_UNITS[units.pop() if units else "s"] if len(units) <= 1 else \
        np.array([TIME_UNITS[metric.unit or "s"] if metric is not None else 1.0 for metric in metrics])
    seconds: np.ndarray = values * scale
    return seconds


def _counts(metrics: list[_Metric | None], indexes: Sequence[int]) -> np.ndarray:
    field = "metrics.usage_completion_tokens"
    if not set(map(_UNIT, filter(None, metrics))) <= {"tokens", None}:
        index, unit = _first_unit_not_in(metrics, {"tokens", None})
        raise _BadRecord(indexes[index], field, f"unit {unit!r} is not tokens")
    values = _values(metrics)
    _all_finite(values, metrics, field, indexes)
    return values


def _first_unit_not_in(metrics: list[_Metric | None], allowed: Collection[str | None]) -> tuple[int, str | None]:
    """The first written metric whose unit is not one allowed (there is one), and its unit."""
    return next((index, metric.unit) for index, metric in enumerate(metrics)
                if metric is not None and metric.unit not in allowed)


def _values(metrics: list[_Metric | None]) -> np.ndarray:
    """Each metric's value, NaN where a record has none."""
    if None not in metrics:
        return np.fromiter(map(_VALUE, metrics), float, len(metrics))
    return np.fromiter((math.nan if metric is None else metric.value for metric in metrics), float, len(metrics))


def _all_finite(values: np.ndarray, metrics: list[_Metric | None], field: str, indexes: Sequence[int]) -> None:
    """_BadRecord at the first written value that is not finite (a missing one is NaN, and allowed)."""
    wrong = ~np.isfinite(values)
    if wrong.any():
        wrong &= np.fromiter((metric is not None for metric in metrics), bool, len(metrics))
    if wrong.any():
        index = int(np.flatnonzero(wrong)[0])
        raise _BadRecord(indexes[index], field, f"{values[index]!r} is not a finite number")
