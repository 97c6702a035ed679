"""The per-request records of a load test, kept beside the runs CSV (methods.md#the-records-store): `ingest serving`
writes them once, `build` reads them instead of the tool's file (which may be gone, or hundreds of megabytes).

One compressed numpy archive per tool file, `<csv stem>.records/<sha256[:16]>.npz`, holding for its k-th load point
the columns `p<k>_send_s`, `p<k>_intended_s` (float64 seconds from the point's first send; NaN where unknown),
`p<k>_ttft_s`, `p<k>_e2e_s` (float64 s; NaN where not measured), `p<k>_output_tokens` (int32; −1 where not
counted) and `p<k>_ok` (uint8). The archive is read without pickles, its columns held to their types and one
length, its size bounded before a byte is decompressed: the store is a file from outside like any other.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, get_args

import numpy as np

from reportgen.errors import InputError, Problem
from reportgen.files import replace_file
from reportgen.project import measurements
from reportgen.project.load_tests import LoadPoint, Mode, RecordedPoint, Requests, TokenSource
from reportgen.project.loader import LoadedProject
from reportgen.project.records import MAX_STORE_BYTES, RecordsLine

COLUMNS = {"send_s": np.float64, "intended_s": np.float64, "ttft_s": np.float64, "e2e_s": np.float64,
           "output_tokens": np.int32, "ok": np.uint8}
UNCOUNTED = -1


def store_name(csv_path: Path, sha256: str) -> str:
    """The store's path relative to the CSV's folder."""
    return f"{csv_path.stem}.records/{sha256[:16]}.npz"


def archive(points: list[LoadPoint]) -> bytes:
    """Every point's columns in one archive's bytes, a column at a time. Deflating lets go of the GIL: `ingest
    serving` makes them on a thread while it judges the points."""
    buffer = io.BytesIO()
    # np.savez_compressed's archive, written at deflate's level 1: level 6 took 1.3 s for the bench's million requests,
    # ten times as long, and its archive was 4 % larger, not smaller (float columns barely compress at any level)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as written:
        for index, point in enumerate(points, start=1):
            for name, kind in COLUMNS.items():
                with written.open(f"p{index}_{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, _column(point.requests, name).astype(kind),
                                              allow_pickle=False)
    return buffer.getvalue()


def _column(requests: Requests, name: str) -> np.ndarray:
    """A column as the store keeps it: the intended send time NaN where unknown, an uncounted output −1."""
    if name == "intended_s":
        queue = requests.client_queue_s
        return requests.send_s - queue if queue is not None else np.full(requests.count, np.nan)
    if name == "output_tokens":
        counts: np.ndarray = np.nan_to_num(requests.output_tokens.astype(float), nan=UNCOUNTED)
        return counts
    column: np.ndarray = getattr(requests, name)
    return column


def write_store(path: Path, data: bytes) -> None:
    """An archive's bytes (`archive`), replaced atomically: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, data)


def read_store(path: Path, point: int, shown: str) -> Requests:
    """The requests of the `point`-th load point (1-based) of an archive; InputError naming the store for one that
    reportgen did not write as it is now."""
    def refused(why: str) -> InputError:
        return InputError([Problem(shown, 1, 1, "", f"the records store cannot be read: {why}")])

    try:
        with zipfile.ZipFile(path) as archive:
            wanted = {f"p{point}_{name}.npy": name for name in COLUMNS}
            sizes = {info.filename: info.file_size for info in archive.infolist()}
            if not set(wanted) <= set(sizes):
                raise refused(f"it holds no load point {point}")
            if sum(sizes[name] for name in wanted) > MAX_STORE_BYTES:
                raise refused(f"load point {point} is larger than {MAX_STORE_BYTES >> 20:,} MiB")
            columns = {}
            for member, name in wanted.items():
                with archive.open(member) as handle:
                    _check_header(handle, sizes[member], name, refused)
                with archive.open(member) as handle:
                    values = np.lib.format.read_array(handle, allow_pickle=False)
                if values.dtype != COLUMNS[name] or values.ndim != 1:
                    raise refused(f"{name} is {values.dtype} of {values.ndim} dimensions, not "
                                  f"{np.dtype(COLUMNS[name])}")
                columns[name] = values
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as error:
        raise refused(str(error)) from None
    if len({len(values) for values in columns.values()}) != 1:
        raise refused("its columns are of unequal length")
    times = [columns[name] for name in ("send_s", "intended_s", "ttft_s", "e2e_s")]
    if any(np.isinf(values).any() for values in times) or (columns["output_tokens"] < UNCOUNTED).any() \
            or (columns["ok"] > 1).any():
        raise refused("a value is infinite, negative where it counts, or not a yes or no")
    tokens = columns["output_tokens"].astype(float)
    tokens[tokens == UNCOUNTED] = np.nan
    intended = columns["intended_s"]
    queue = None if np.isnan(intended).all() else columns["send_s"] - intended
    return Requests(columns["send_s"], columns["ttft_s"], columns["e2e_s"], tokens, columns["ok"].astype(bool),
                    queue)


def _check_header(handle: IO[bytes], stored: int, name: str, refused: Callable[[str], InputError]) -> None:
    """The array's declared shape and type held to what the archive holds, before numpy allocates it: a header can
    declare a trillion values in a member of a few bytes."""
    version = np.lib.format.read_magic(handle)
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = reader(handle)
    declared = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize if dtype.itemsize else 0
    if dtype.hasobject or declared > stored:
        raise refused(f"{name} declares {declared:,} bytes in {stored:,}")


def recorded_points(loaded: LoadedProject) -> tuple[RecordedPoint, ...]:
    """Every CSV row's load point whose records `ingest serving` kept, read from its store (None where the store is
    gone: the row's summary columns then stand, and the report says the records are missing)."""
    scaling = loaded.project.scaling
    if scaling is None or scaling.file is None or not loaded.rows:
        return ()
    csv_path = measurements.resolve(loaded.path, loaded.file_named("scaling.file", scaling.file))
    found = []
    for nodes, source in loaded.rows:
        line = source.records
        if line is None:
            continue
        store = csv_path.parent / line.store
        shown = str(Path(loaded.display).parent / Path(scaling.file).parent / line.store)
        requests = _read_within(store, line.point, shown, loaded.path.parent)
        found.append(RecordedPoint(nodes, line, _load_point(line, requests) if requests is not None else None))
    return tuple(found)


def _read_within(store: Path, point: int, shown: str, folder: Path) -> Requests | None:
    """The point's requests from a store inside the project's folder; None where there is no store."""
    try:
        resolved = store.resolve()
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(folder.resolve()):
        raise InputError([Problem(shown, 1, 1, "", "the records store lies outside the project's folder")])
    if not resolved.is_file():
        return None
    return read_store(resolved, point, shown)


_MODES: dict[str, Mode] = {"open": "open", "closed": "closed"}
_TOKENS: dict[str, TokenSource] = {name: name for name in get_args(TokenSource)}


def _load_point(line: RecordsLine, requests: Requests) -> LoadPoint:
    """The point as its records line describes it (a line edited past reading describes an unbounded load whose
    token counts are of unknown source)."""
    return LoadPoint(line.tool, requests, _MODES.get(line.mode), line.offered_per_s, line.concurrency,
                     line.sends_known, line.e2e_reconstructed, _TOKENS.get(line.tokens, "unknown"),
                     line.dropped_warmup, line.sampled_from, line.file_output_tokens, line.constant_schedule,
                     line.file_requests, line.file_mean_e2e_s, line.energy_j)
