"""One MLPerf Training result file (`result_N.txt`) read as a throughput: samples trained over the timed run.

The reader behind the corpus's MLPerf curves (docs/methods.md#the-calibration-corpus). A result file is text whose
`:::MLLOG {json}` lines are events (`key`, `value`, `time_ms`, `metadata`); every other line is ignored. The run is
timed from `run_start` to the first `run_stop` after it; the value is the samples trained in that time per second,
to 4 significant digits. Training starts at the first `epoch_start` or `block_start` after `run_start`.

The samples are found by the first of four rules that the log allows (`MlperfRun.rule` names it):

1. `run_stop`'s `metadata.samples_count`.
2. A running count: the last `train_samples` (or `trained_samples`) logged after training starts (after `run_start`
   when the log has no epoch or block events) and at most one second after `run_stop` (BERT, v1.0 DLRM).
3. Epochs × dataset size: the dataset size is the `train_samples` logged before training starts (before `run_start`
   too); the epochs are those completed at `run_stop`, read from the last `epoch_stop` or `block_stop` logged after
   `run_start` and at most one second after `run_stop`. An `epoch_stop` whose `epoch_num` is also an `epoch_start`'s
   numbers an epoch, counted from the first `epoch_start`'s (0 or 1, the numbers consecutive); a fractional
   `epoch_num` is the epochs trained so far (dlrm_dcnv2 and gnn stop within an epoch; gnn rounds it to 0.01 epoch,
   so its counts are good to about half a percent). Blocks (`block_start` with `first_epoch_num` and `epoch_count`,
   each ended by a `block_stop`) add up their `epoch_count`, each block starting where the one before ended, the
   first at epoch 0 or 1. A log that gives `samples_per_epoch` (NVIDIA's unet3d) numbers its epochs in samples,
   epoch × samples_per_epoch (and its first block from epoch 1, the next from epoch 20): its blocks' `epoch_count`
   add up to samples. Where the evaluation runs beside training (unet3d on dedicated evaluation nodes) the block
   trained meanwhile is counted; `run_stop`'s own `epoch` is the evaluated model's, a block behind.
4. Steps × global batch: `run_stop`'s `metadata.step_num` × `global_batch_size`, only for a benchmark that counts its
   training in optimizer steps of one global batch (stable_diffusion).

Why rule 2 does not read every `train_samples`: many benchmarks (resnet, rnnt, unet3d, gnn, dlrm_dcnv2,
stable_diffusion) log the dataset size under that key once, before training; taken as the run's count it would give
dataset ÷ time. In NVIDIA's ssd and maskrcnn `train_samples` is `len(data_loader)`, a count of batches per rank, so
neither rule 2 nor rule 3 reads it there (nor is the dataset size logged), and those logs are refused unless rule 1
applies. Every other log is refused with a ValueError rather than given a guessed count.

Run as `python -m reportgen.corpus.mlperf_log FILE...`: one line per file (name, samples, seconds, value, global
batch).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from reportgen.ingest import strict_json

MARKER = ":::MLLOG"
MAX_BYTES = 64 * 1024 * 1024  # a result file is at most a few MiB; a larger text is refused unread
SAMPLE_KEYS = ("train_samples", "trained_samples")
TRAINING_STARTS = ("epoch_start", "block_start")
AFTER_STOP_MS = 1000  # a samples, epoch_stop or block_stop event logged up to one second after run_stop still counts
RESULT_NAME = re.compile(r"result_(\d+)\.txt")
# The benchmarks whose `train_samples` is len(data_loader), batches per rank, not samples (NVIDIA's ssd train.py and
# maskrcnn train_mlperf.py): rules 2 and 3 never read it there
BATCH_COUNT_BENCHMARKS = frozenset({"ssd", "maskrcnn"})
# The benchmarks that count training in optimizer steps of one global batch (run_stop's step_num): rule 4
STEP_BENCHMARKS = frozenset({"stable_diffusion"})

RULE_STOP_COUNT = "run_stop samples_count"
RULE_RUNNING = "running train_samples count"
RULE_EPOCHS = "epochs × dataset size"
RULE_STEPS = "steps × global batch size"


@dataclass(frozen=True)
class MlperfRun:
    """One result file's timed run: `value` = `samples` / `seconds` (samples/s, 4 significant digits); `samples`
    rounded to a whole sample when rule 3 gives a fraction."""

    samples: int
    seconds: float
    value: float
    global_batch: int | None
    rule: str = RULE_RUNNING  # which rule gave `samples` (RULE_STOP_COUNT, RULE_RUNNING, RULE_EPOCHS, RULE_STEPS)


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
            record = strict_json.loads(line[at + len(MARKER):])
        except (ValueError, RecursionError):
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


def _number(value: object) -> float:
    assert isinstance(value, int | float)
    return float(value)


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
    `run_start`, a `run_stop` after it, or a sample count by one of the module's four rules."""
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
    batches = [event.value for event in events if event.key == "global_batch_size"]
    batch = _count(batches[0], "global_batch_size") if batches else None
    samples, rule = _samples(events, start_at, stop_at, batches)
    return MlperfRun(samples=round(samples), seconds=seconds, value=_four_digits(samples / seconds),
                     global_batch=batch, rule=rule)


def _samples(events: Sequence[_Event], start_at: int, stop_at: int, batches: Sequence[object]) -> tuple[float, str]:
    """The samples trained from run_start to run_stop and the rule that gave them (the module's rules 1 to 4)."""
    start, stop = events[start_at], events[stop_at]
    if "samples_count" in stop.metadata:
        return _count(stop.metadata["samples_count"], "run_stop's samples_count"), RULE_STOP_COUNT
    benchmark = next((event.value for event in events if event.key == "submission_benchmark"), None)
    trains_at = next((i for i in range(start_at + 1, len(events)) if events[i].key in TRAINING_STARTS), None)
    last_ms = stop.time_ms + AFTER_STOP_MS
    # the events after run_start (in file order) logged by one second after run_stop
    timed = [i for i in range(start_at + 1, len(events)) if start.time_ms <= events[i].time_ms <= last_ms]
    why = []
    if benchmark in BATCH_COUNT_BENCHMARKS:
        why.append(f"{benchmark}'s train_samples is a count of batches (len(data_loader)), not of samples")
    else:
        after = start_at if trains_at is None else trains_at  # not the dataset size logged before training
        running = [events[i] for i in timed if events[i].key in SAMPLE_KEYS and i > after]
        if running:
            return _count(running[-1].value, running[-1].key), RULE_RUNNING
        why.append("no train_samples or trained_samples event is logged after training starts and by 1 s after "
                   "run_stop")
        if trains_at is None:
            why.append("no epoch_start or block_start after run_start")
        else:
            dataset = [events[i] for i in range(trains_at) if events[i].key in SAMPLE_KEYS]
            if not dataset:
                why.append("no dataset size (train_samples) is logged before training starts")
            elif len({_count(event.value, event.key) for event in dataset}) > 1:
                why.append("the train_samples logged before training starts disagree")
            else:
                epochs = _epochs(events, start_at, trains_at, timed)
                if not isinstance(epochs, str):
                    return _count(dataset[-1].value, dataset[-1].key) * epochs, RULE_EPOCHS
                why.append(epochs)
    if benchmark in STEP_BENCHMARKS and "step_num" in stop.metadata:
        if len(set(map(repr, batches))) != 1:
            raise ValueError(f"{benchmark}: run_stop gives a step_num, but global_batch_size is logged "
                             f"{len(batches)} times with {len(set(map(repr, batches)))} values")
        return (_count(stop.metadata["step_num"], "run_stop's step_num") * _count(batches[0], "global_batch_size"),
                RULE_STEPS)
    raise ValueError("no sample count: run_stop has no samples_count; " + "; ".join(why))


def _epochs(events: Sequence[_Event], start_at: int, trains_at: int, timed: Sequence[int]) -> float | str:
    """The epochs completed at run_stop (rule 3), or why the log does not tell them."""
    ends = [i for i in timed if (events[i].key == "epoch_stop" and _is_number(events[i].metadata.get("epoch_num")))
            or (events[i].key == "block_stop" and _is_number(events[i].metadata.get("first_epoch_num")))]
    if not ends:
        return "no epoch_stop or block_stop with an epoch number is logged by 1 s after run_stop"
    last = events[ends[-1]]
    before = events[start_at + 1:ends[-1]]  # from run_start to the last end
    per_epoch = {repr(event.value) for event in events[:trains_at] if event.key == "samples_per_epoch"}
    if last.key == "epoch_stop":
        if per_epoch:
            return "the log numbers its epochs in samples (samples_per_epoch) and its last epoch event is no block"
        number = _number(last.metadata["epoch_num"])
        starts = [_number(event.metadata["epoch_num"]) for event in before
                  if event.key == "epoch_start" and _is_number(event.metadata.get("epoch_num"))]
        if number in starts:  # an epoch's number: consecutive from the first epoch_start's, 0 or 1
            if starts[0] not in (0, 1) or starts != list(range(int(starts[0]), int(number) + 1)):
                return f"the epoch_start numbers are not consecutive from 0 or 1 up to epoch_stop's {number:g}"
            return number - starts[0] + 1
        if number != int(number) and number > 0:  # a fraction: the epochs trained so far
            return number
        return f"the last epoch_stop's epoch_num {number:g} is no epoch_start's and not a fraction of epochs trained"
    # blocks: every block_start after run_start, and the block_stops by 1 s after run_stop, in step
    starts_ = [(_number(event.metadata["first_epoch_num"]), event.metadata.get("epoch_count")) for event in before
               if event.key == "block_start" and _is_number(event.metadata.get("first_epoch_num"))]
    stops = [_number(events[i].metadata["first_epoch_num"]) for i in ends if events[i].key == "block_stop"]
    if [first for first, _ in starts_] != stops or not all(_is_number(count) for _, count in starts_):
        return "the block_stops do not each end the block_start before them, with an epoch_count"
    blocks = [(first, _number(count)) for first, count in starts_]
    if any(count <= 0 or count != int(count) for _, count in blocks):
        return "a block's epoch_count is not a whole positive number"
    done = sum(count for _, count in blocks)
    if per_epoch:  # epochs numbered in samples (NVIDIA's unet3d logs epoch × samples_per_epoch)
        dataset = [repr(event.value) for event in events[:trains_at] if event.key in SAMPLE_KEYS]
        if per_epoch != {dataset[-1]}:
            return "samples_per_epoch is not the dataset size logged as train_samples"
        size = _count(events[next(i for i in range(trains_at) if events[i].key == "samples_per_epoch")].value,
                      "samples_per_epoch")
        if done % size:
            return f"the blocks' epoch_count ({done:g} in all) is not a whole number of samples_per_epoch ({size})"
        return done / size
    if blocks[0][0] not in (0, 1) or any(after[0] != first + count for (first, count), after in pairwise(blocks)):
        return "the blocks' first_epoch_num do not start at 0 or 1 and follow on from each other"
    return done


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
