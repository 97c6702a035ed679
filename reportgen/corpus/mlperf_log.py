"""One MLPerf Training result file (`result_N.txt`) read as a throughput: samples trained over the timed run.

The reader behind the corpus's MLPerf curves (docs/methods.md#the-calibration-corpus). A result file is text whose
`:::MLLOG {json}` lines are events (`key`, `value`, `time_ms`, `metadata`); every other line is ignored. The run is
timed from `run_start` to the first `run_stop` after it. The samples are `run_stop`'s `metadata.samples_count` when
the log gives one, else the value of the last `train_samples` (or `trained_samples`) event logged after `run_start`
and at most one second after `run_stop`. The value is samples per second, to 4 significant digits.

Run as `python -m reportgen.corpus.mlperf_log FILE...`: one line per file (name, samples, seconds, value, global
batch).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MARKER = ":::MLLOG"
MAX_BYTES = 64 * 1024 * 1024  # a result file is at most a few MiB; a larger text is refused unread
SAMPLE_KEYS = ("train_samples", "trained_samples")
AFTER_STOP_MS = 1000  # a samples event logged up to one second after run_stop still counts
RESULT_NAME = re.compile(r"result_(\d+)\.txt")


@dataclass(frozen=True)
class MlperfRun:
    """One result file's timed run: `value` = `samples` / `seconds` (samples/s, 4 significant digits)."""

    samples: int
    seconds: float
    value: float
    global_batch: int | None


@dataclass(frozen=True)
class _Event:
    key: str
    value: object
    time_ms: float
    metadata: Mapping[str, object]


def _events(text: str) -> list[_Event]:
    """The text's `:::MLLOG` events in file order; a marker line whose JSON is not an event is skipped."""
    found = []
    for line in text.splitlines():
        at = line.find(MARKER)
        if at < 0:
            continue
        try:
            record = json.loads(line[at + len(MARKER):])
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        key, time_ms, metadata = record.get("key"), record.get("time_ms"), record.get("metadata")
        if not isinstance(key, str) or not _is_number(time_ms):
            continue
        assert isinstance(time_ms, int | float)
        found.append(_Event(key, record.get("value"), float(time_ms),
                            metadata if isinstance(metadata, dict) else {}))
    return found


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: object, what: str) -> int:
    """A logged count as an int: a whole, positive number (3000256 or 3000256.0)."""
    if not _is_number(value):
        raise ValueError(f"{what} is not a number: {value!r}")
    assert isinstance(value, int | float)
    if value != value or value in (float("inf"), float("-inf")) or value != int(value) or value <= 0:
        raise ValueError(f"{what} is not a whole positive number: {value!r}")
    return int(value)


def _four_digits(value: float) -> float:
    return float(f"{value:.4g}")


def read_result(text: str) -> MlperfRun:
    """One result file's text as its timed run. Raises ValueError when the text is over 64 MiB or lacks
    `run_start`, a `run_stop` after it, or a sample count."""
    if len(text) > MAX_BYTES or (len(text) * 4 > MAX_BYTES and len(text.encode("utf-8", "replace")) > MAX_BYTES):
        raise ValueError(f"the result text is over {MAX_BYTES // (1024 * 1024)} MiB; refused unread")
    events = _events(text)
    start_at = next((i for i, event in enumerate(events) if event.key == "run_start"), None)
    if start_at is None:
        raise ValueError("no run_start event: not an MLPerf result log, or a truncated one")
    stop_at = next((i for i in range(start_at + 1, len(events)) if events[i].key == "run_stop"), None)
    if stop_at is None:
        raise ValueError("no run_stop event after run_start: the run did not finish, or the log is truncated")
    start, stop = events[start_at], events[stop_at]
    seconds = (stop.time_ms - start.time_ms) / 1000
    if seconds <= 0:
        raise ValueError(f"run_stop ({stop.time_ms:.0f} ms) is not after run_start ({start.time_ms:.0f} ms)")
    if "samples_count" in stop.metadata:
        samples = _count(stop.metadata["samples_count"], "run_stop's samples_count")
    else:
        logged = [event for event in events[start_at + 1:]
                  if event.key in SAMPLE_KEYS and start.time_ms <= event.time_ms <= stop.time_ms + AFTER_STOP_MS]
        if not logged:
            raise ValueError("no sample count: run_stop has no samples_count and no train_samples or "
                             "trained_samples event is logged between run_start and 1 s after run_stop")
        samples = _count(logged[-1].value, f"{logged[-1].key}")
    batch = next((event.value for event in events if event.key == "global_batch_size"), None)
    return MlperfRun(samples=samples, seconds=seconds, value=_four_digits(samples / seconds),
                     global_batch=_count(batch, "global_batch_size") if batch is not None else None)


def _result_index(name: str) -> int:
    matched = RESULT_NAME.fullmatch(Path(name).name)
    if matched is None:
        raise ValueError(f"{name!r} is not a result file name (result_N.txt)")
    return int(matched.group(1))


def folder_values(texts: Mapping[str, str]) -> list[float]:
    """The values of one folder's result files (file name → text), in file-name order: result_0.txt, result_1.txt,
    ..., result_10.txt. Every result file is a repeat, those MLPerf's scoring would drop included."""
    if not texts:
        raise ValueError("no result files")
    return [read_result(texts[name]).value for name in sorted(texts, key=_result_index)]


def _plain(number: float) -> str:
    """A number as written in a table: 27540 rather than 27540.0 or 2.754e+04."""
    return str(int(number)) if number == int(number) else repr(number)


def main(argv: Sequence[str] | None = None) -> int:
    """Print one tab-separated line per file: name, samples, seconds, value (samples/s), global batch (- when the
    log gives none). A file that cannot be read is named on stderr and makes the exit status 1."""
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m reportgen.corpus.mlperf_log FILE...", file=sys.stderr)
        return 2
    status = 0
    for name in paths:
        path = Path(name)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise ValueError(f"over {MAX_BYTES // (1024 * 1024)} MiB; refused unread")
            run = read_result(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError) as error:
            print(f"{name}: {error}", file=sys.stderr)
            status = 1
            continue
        batch = "-" if run.global_batch is None else str(run.global_batch)
        print(f"{name}\t{run.samples}\t{_plain(run.seconds)}\t{_plain(run.value)}\t{batch}")
    return status


if __name__ == "__main__":
    sys.exit(main())
