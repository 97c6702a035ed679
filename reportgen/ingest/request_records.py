"""Per-request records of a load test, as each load generator writes them, read into one canonical table
(methods.md#a-service-judged-from-its-requests): for every request its send time, TTFT, E2E, output tokens and
whether it succeeded, in seconds from the load point's first send, with where each came from.

Formats (each recognised by its document's structure, never its name; exactly one must match):
- `vllm-detailed`: `vllm bench serve --save-detailed`: an object with lists `ttfts` and `itls` (several objects, one
  a line, with `--append-result`);
- `guidellm`: GuideLLM's benchmarks JSON (`metadata.version` 2, `benchmarks[]` of `generative_benchmark`);
- `aiperf-records`: AIPerf's `profile_export.jsonl`, one record a line with `metadata.request_start_ns` and `metrics`;
- `inference-perf-records`: inference-perf's `per_request_lifecycle_metrics.json`, a list of requests with
  `start_time`, `end_time` and `info.response_metrics`.

Everything is checked before it is believed: arrays of equal length, finite times and counts, known units.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import msgspec
import numpy as np

from reportgen import wording
from reportgen.errors import InputError, Problem
from reportgen.files import open_regular, why_unreadable
from reportgen.ingest import aiperf_stream, strict_json, vllm_results
from reportgen.json_types import JsonRead, at_path
from reportgen.project.load_tests import LoadPoint, Mode, Requests, TokenSource
from reportgen.project.yaml_source import mapping_data, read_text, read_utf8_bytes

MAX_DOCUMENT_BYTES = 256 << 20  # one JSON document; JSON Lines are read a line at a time
# A vLLM result read typed alone (no Python object a value): a million requests with vLLM 0.33's 31 chunk gaps each
# are about 1 GB
MAX_VLLM_BYTES = 2 << 30
Format = Literal["vllm-detailed", "guidellm", "aiperf-records", "inference-perf-records"]
FORMATS: tuple[Format, ...] = ("vllm-detailed", "guidellm", "aiperf-records", "inference-perf-records")
LINE_FORMATS: tuple[Format, ...] = ("vllm-detailed", "aiperf-records")


def detect(document: object) -> list[Format]:
    """Every format whose structure the parsed document has (a JSON Lines file is its first record)."""
    found: list[Format] = []
    if isinstance(document, dict):
        if isinstance(document.get("ttfts"), list) and isinstance(document.get("itls"), list):
            found.append("vllm-detailed")
        metadata = document.get("metadata")
        if isinstance(metadata, dict) and metadata.get("version") is not None \
                and isinstance(document.get("benchmarks"), list):
            found.append("guidellm")
        if isinstance(metadata, dict) and "request_start_ns" in metadata and isinstance(document.get("metrics"), dict):
            found.append("aiperf-records")
    if isinstance(document, list) and document and isinstance(document[0], dict) \
            and {"start_time", "end_time"} <= set(document[0]) and isinstance(document[0].get("info"), dict):
        found.append("inference-perf-records")
    return found


@dataclass(frozen=True)
class RecordsFile:
    """A load tester's per-request file: what wrote it, its bytes' SHA-256, and its load points."""

    tool: Format
    version: str | None  # the tool's version, where the file (or its folder) says it
    file: Path  # the file read (in a folder: the records file in it)
    sha256: str
    points: list[LoadPoint]


AIPERF_RECORDS, AIPERF_AGGREGATE = "profile_export.jsonl", "profile_export_aiperf.json"
INFERENCE_PERF_RECORDS = "per_request_lifecycle_metrics.json"


def records_path(path: Path) -> Path:
    """The per-request file of a path: itself, or in a folder as its tool leaves it (AIPerf's artifact folder,
    inference-perf's report folder)."""
    if not path.is_dir():
        return path
    for name in (AIPERF_RECORDS, INFERENCE_PERF_RECORDS):
        if (path / name).is_file():
            return path / name
    listed = itertools.islice(path.iterdir(), 10_000)  # a folder as a tool leaves it holds a dozen files
    summaries = sorted(item.name for item in listed if item.name == AIPERF_AGGREGATE
                       or (item.name.startswith("stage_") and item.name.endswith("_lifecycle_metrics.json")))[:4]
    instead = f": pass one of its summaries ({', '.join(summaries)})" if summaries else ""
    raise _refused(str(path), f"the folder holds no per-request file ({AIPERF_RECORDS} of AIPerf, "
                              f"{INFERENCE_PERF_RECORDS} of inference-perf, written with "
                              f"report.request_lifecycle.per_request: true){instead}")


def read_records(path: Path, *, display: str | None = None, format: Format | None = None,
                 none_unless_records: bool = False) -> RecordsFile | None:
    """The load points of a per-request file (or folder); InputError naming the file for one no format (or
    several) describes, or whose values cannot be right. With `none_unless_records`, None where no per-request
    format describes the file (a summary, read elsewhere)."""
    file = records_path(path)
    shown = display or str(file)
    if format in (None, "aiperf-records") and _first_record_is_aiperf(file, shown):
        return _aiperf_file(file, shown)
    if format in (None, "vllm-detailed") and _size(file, shown) > MAX_DOCUMENT_BYTES:
        return _large_vllm(file, shown)
    text, raw = read_text(file, shown, limit=MAX_DOCUMENT_BYTES)  # the text: checked UTF-8
    if format in (None, "vllm-detailed"):
        del text  # a hundred megabytes for a million requests, which vLLM's typed reading does not need
        if (results := vllm_results.plain(raw)) is not None:
            return RecordsFile("vllm-detailed", None, file, hashlib.sha256(raw).hexdigest(), _vllm(results, shown))
        text = raw.decode("utf-8-sig")
    documents = _documents(text, shown, quiet=none_unless_records)
    if documents is None:
        return None
    found = detect(documents[0])
    if len(documents) > 1:  # JSON Lines: only the formats written a record (or a result) a line
        found = [name for name in found if name in LINE_FORMATS]
    if format is not None:
        if format not in found:
            raise _refused(shown, f"the file is not a {format} file (its structure is "
                                  f"{'that of ' + ', '.join(found) if found else 'none of the formats read'})")
        found = [format]
    if not found and none_unless_records:
        return None
    if len(found) != 1:
        raise _refused(shown, "no per-request format describes the file (read: " + ", ".join(FORMATS) + ")"
                       if not found else "the file could be any of " + ", ".join(found) + ": name one with --format")
    tool = found[0]
    if tool == "aiperf-records":  # one record that is not a line of its own: still AIPerf's, read as a stream
        return _aiperf_file(file, shown)
    if tool == "vllm-detailed":  # read again from the bytes, typed: the parse above only recognised it
        documents.clear()
        return RecordsFile(tool, None, file, hashlib.sha256(raw).hexdigest(),
                           _vllm(vllm_results.decode(raw, shown), shown))
    points = READERS[tool](documents, shown)
    if tool == "inference-perf-records":
        points = _inference_perf_stages(points, file.parent, shown)
    return RecordsFile(tool, _version(tool, documents[0]), file, hashlib.sha256(raw).hexdigest(), points)


def _size(file: Path, shown: str) -> int:
    try:
        return file.stat().st_size
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None


def _large_vllm(file: Path, shown: str) -> RecordsFile:
    """A file past MAX_DOCUMENT_BYTES, read only if it is plainly a vLLM result: typed, its lists become arrays one
    at a time, where the strict full parse it would otherwise need holds gigabytes of Python objects."""
    too_large = f"the file is larger than {wording.limit(MAX_DOCUMENT_BYTES)}"
    raw = read_utf8_bytes(file, shown, limit=MAX_VLLM_BYTES)
    results = vllm_results.plain(raw)
    if results is None:
        if not vllm_results.shaped(raw):
            raise _refused(shown, f"{too_large}: only a vLLM result may be, read typed, and this is none")
        vllm_results.decode(raw, shown)  # a value that cannot be right: refused naming it
        raise _refused(shown, f"{too_large}: a vLLM result this large is read typed, which cannot check a key "
                              "given twice, and a key it reads appears twice in a result, or another format's key "
                              "appears")
    return RecordsFile("vllm-detailed", None, file, hashlib.sha256(raw).hexdigest(), _vllm(results, shown))


STAGE_RATE_GAP = 0.02  # a stage's cut of the records against the rate its own file says it reached


def _inference_perf_stages(points: list[LoadPoint], folder: Path, shown: str) -> list[LoadPoint]:
    """inference-perf's per-request file carries no stage: with its report folder, the records in send order are
    cut in stage order by each `stage_N_lifecycle_metrics.json`'s `load_summary.count`, each cut an open point at
    the stage's requested rate, and each cut's send rate must be within 2 % of the rate the stage says it reached,
    else the requests cannot be assigned to stages and the file is refused."""
    stages = sorted(folder.glob("stage_*_lifecycle_metrics.json"),
                    key=lambda path: int(digits) if (digits := path.stem.split("_")[1]).isdigit() else 0)
    if not stages or len(points) != 1:
        return points
    (whole,) = points
    summaries = []
    for path in stages:
        text, _ = read_text(path, str(path), limit=MAX_DOCUMENT_BYTES)
        try:
            summary = _object(strict_json.loads(text))
        except (ValueError, RecursionError):
            raise _refused(str(path), "not a stage's lifecycle metrics") from None
        load = _object(summary.get("load_summary"))
        count, requested, achieved = load.get("count"), _finite(load.get("requested_rate")), \
            _finite(load.get("achieved_rate"))
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise _refused(str(path), f"{count!r} is not a count of requests", "load_summary.count")
        # the stage's own mean E2E of its successes, which its records are held to
        # (records-disagree, methods.md#a-service-judged-from-its-requests)
        mean = _finite(at_path(summary, "successes.latency.request_latency.mean"))
        summaries.append((count, requested, achieved, mean))
    if sum(count for count, *_ in summaries) != whole.requests.count:
        raise _refused(shown, f"the stages count {sum(c for c, *_ in summaries):,} requests and the file holds "
                              f"{whole.requests.count:,}: cannot assign requests to stages: pass --point, or keep one "
                              "stage per run")
    cut = []
    start = 0
    for count, requested, achieved, mean in summaries:
        keep = np.zeros(whole.requests.count, dtype=bool)
        keep[start:start + count] = True  # the requests are in send order (read_records sorted them)
        start += count
        stage = whole.requests.where(keep)
        first, last = stage.sends
        sent = (stage.count - 1) / (last - first) if stage.count > 1 and last > first else None
        if achieved and sent is not None and abs(sent - achieved) > STAGE_RATE_GAP * achieved:
            raise _refused(shown, f"a stage's {stage.count:,} requests were sent at {sent:.4g}/s and the stage says "
                                  f"{achieved:.4g}/s: cannot assign requests to stages: pass --point, or keep one "
                                  "stage per run")
        times = stage.send_s - first
        cut.append(replace(whole, requests=replace(stage, send_s=times), mode="open" if requested else None,
                           offered_per_s=requested, file_requests=count, file_mean_e2e_s=mean))
    return cut


FIRST_LINE_BYTES = 16 << 20  # a JSON Lines file's first record, read to recognise it


def _first_record_is_aiperf(file: Path, shown: str) -> bool:
    """Whether the file's first line is an AIPerf record: JSON Lines are recognised by their first record, and
    AIPerf's files are read as a stream, whatever their size."""
    try:
        with open_regular(file) as handle:
            first = handle.readline(FIRST_LINE_BYTES)
    except OSError as error:
        raise InputError([Problem(shown, 1, 1, "", why_unreadable(error))]) from None
    try:  # typed, every other field skipped: a vLLM result's first line is its whole file, 16 MiB of it read
        record = _FIRST_RECORD.decode(first)
    except msgspec.DecodeError:
        return False
    return "request_start_ns" in record.metadata


class _FirstRecord(msgspec.Struct):
    """What makes a line an AIPerf record (as `detect` says): `metadata` with `request_start_ns`, and `metrics`."""

    metadata: dict[str, msgspec.Raw]
    metrics: dict[str, msgspec.Raw]


_FIRST_RECORD = msgspec.json.Decoder(_FirstRecord)


def _aiperf_file(file: Path, shown: str) -> RecordsFile:
    """AIPerf's records, with its version and offered rate from the aggregate beside them where it is there."""
    columns, sha256 = aiperf_stream.read_columns(file, shown)
    points = [_aiperf(columns, shown)]
    version = None
    if (file.parent / AIPERF_AGGREGATE).is_file():
        version, points = _with_aiperf_aggregate(file.parent / AIPERF_AGGREGATE, points)
    return RecordsFile("aiperf-records", version, file, sha256, points)


def _guidellm_summary(metrics: JsonRead) -> dict[str, object]:
    """The requests GuideLLM's own metrics count and their mean E2E (seconds), where the file gives them."""
    total = _object(metrics.get("request_totals")).get("total")
    mean = _object(_object(metrics.get("request_latency")).get("successful")).get("mean")
    return {"file_requests": total if isinstance(total, int) and not isinstance(total, bool) else None,
            "file_mean_e2e_s": _finite(mean)}


def _version(tool: Format, document: object) -> str | None:
    if tool == "guidellm" and isinstance(document, dict):
        version = _object(document.get("metadata")).get("guidellm_version")
        return version if isinstance(version, str) else None
    return None


def _with_aiperf_aggregate(path: Path, points: list[LoadPoint]) -> tuple[str | None, list[LoadPoint]]:
    """AIPerf's version and the rate its profiling phase was asked for, from the aggregate beside the records (the
    offered rate, where the credits' span only estimates it)."""
    text, _ = read_text(path, str(path), limit=MAX_DOCUMENT_BYTES)
    try:
        aggregate = _object(strict_json.loads(text))
    except (ValueError, RecursionError):
        return None, points  # the records stand alone; the aggregate is only a better source of two facts
    version = aggregate.get("aiperf_version")
    phases = _object(aggregate.get("input_config")).get("phases")
    profiling = next((_object(phase) for phase in phases if _object(phase).get("kind") == "profiling"), {}) \
        if isinstance(phases, list) else {}
    rate, kind = profiling.get("rate"), profiling.get("type")
    if isinstance(rate, int | float) and not isinstance(rate, bool) and math.isfinite(rate) and rate > 0:
        points = [replace(point, mode="open", offered_per_s=float(rate), constant_schedule=kind == "constant")
                  for point in points]
    count = _finite(_object(aggregate.get("request_count")).get("avg"))
    latency = _object(aggregate.get("request_latency"))
    mean, unit = _finite(latency.get("avg")), latency.get("unit")  # its `unit` is authoritative
    points = [replace(point, file_requests=int(count) if count is not None and count == int(count) else None,
                      file_mean_e2e_s=mean * aiperf_stream.TIME_UNITS[unit]
                      if mean is not None and isinstance(unit, str) and unit in aiperf_stream.TIME_UNITS else None)
              for point in points]
    return version if isinstance(version, str) else None, points


def _documents(text: str, shown: str, *, quiet: bool = False) -> list[object] | None:
    """The file as one JSON document, else as JSON Lines (vLLM's appended results, AIPerf's records), else as one
    YAML mapping (GuideLLM's `--output kind=yaml`); with `quiet`, None for a file that is none of them (a tool's
    printed summary)."""
    try:
        return [strict_json.loads(text)]
    except (ValueError, RecursionError):
        pass
    if not text.lstrip().startswith(("{", "[")):
        return _yaml_document(text, shown, quiet=quiet)
    documents = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                documents.append(strict_json.loads(line))
            except (ValueError, RecursionError) as error:
                if quiet:
                    return None
                raise InputError([Problem(shown, number, 1, "", f"not JSON, nor JSON Lines: {error}")]) from None
    if not documents:
        raise _refused(shown, "the file is empty")
    return documents


def _yaml_document(text: str, shown: str, *, quiet: bool) -> list[object] | None:
    """A YAML file as the one mapping it holds (GuideLLM's `--output kind=yaml`); None, with `quiet`, for text that
    is no YAML mapping (a printed summary)."""
    document = mapping_data(text, shown, quiet=quiet)
    if document is None:
        if quiet:
            return None
        raise _refused(shown, "not JSON, JSON Lines or a YAML mapping")
    return [document]


def _refused(shown: str, message: str, field: str = "") -> InputError:
    return InputError([Problem(shown, 1, 1, field, message)])


class _Columns:
    """Values gathered a request at a time, each checked finite where a number is required."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def number(self, value: object, field: str, *, optional: bool = False) -> float:
        if value is None and optional:
            return math.nan
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
            raise _refused(self.shown, f"{value!r} is not a finite number", field)
        return float(value)

    def equal_lengths(self, lengths: Mapping[str, int]) -> int:
        """The one length of the lists, by name; InputError naming each list's where they differ."""
        if len(set(lengths.values())) > 1:
            raise _refused(self.shown, "arrays of unequal length: " + ", ".join(f"{k} {v}" for k, v in
                                                                                 lengths.items()))
        return next(iter(lengths.values()), 0)


def _relative(times: np.ndarray) -> np.ndarray:
    """Seconds from the first send (NaN where unknown)."""
    return times - np.nanmin(times) if np.isfinite(times).any() else times


def _point(tool: Format, send: np.ndarray, ttft: np.ndarray, e2e: np.ndarray, tokens: np.ndarray, ok: np.ndarray,
           queue: np.ndarray | None, **fields: object) -> LoadPoint:
    """The point with its requests in send order (by time where known, else as the file lists them)."""
    order = np.argsort(send, kind="stable") if np.isfinite(send).all() else np.arange(len(send))
    requests = Requests(_relative(send)[order], ttft[order], e2e[order], tokens[order], ok[order],
                        queue[order] if queue is not None else None)
    return LoadPoint(tool, requests, **fields)  # type: ignore[arg-type]


def _vllm(results: list[vllm_results.Result], shown: str) -> list[LoadPoint]:
    """One point per result: open at a finite `request_rate`, closed at `max_concurrency` when the rate is "inf"."""
    check = _Columns(shown)
    points = []
    for result in results:
        count = check.equal_lengths(result.lengths)
        if result.output_tokens is None:
            raise _refused(shown, "no output_lens: the file does not say how many tokens each request gave",
                           "output_lens")
        assert result.e2e_s is not None  # lists of equal length: E2E is there, or reconstructed
        ok = (result.ok if result.ok is not None else np.ones(count, dtype=bool)) & (result.output_tokens > 0)
        send = result.send_s if result.send_s is not None else np.full(count, math.nan)
        summary = result.summary
        finite_rate = _finite(summary.request_rate)
        concurrency = summary.max_concurrency
        mode: Mode | None = "open" if finite_rate is not None else "closed" if isinstance(concurrency, int) else None
        total = summary.total_output_tokens
        points.append(_point("vllm-detailed", send, result.ttft_s, result.e2e_s, result.output_tokens, ok,
                             result.queue_s, mode=mode, offered_per_s=finite_rate,
                             concurrency=concurrency if mode == "closed" else None,
                             send_times_known=result.send_s is not None,
                             e2e_reconstructed=result.e2e_reconstructed, tokens_source="unknown",
                             file_output_tokens=total if isinstance(total, int) else None, **_vllm_summary(summary)))
    return points


def _vllm_summary(result: vllm_results.Summary) -> dict[str, object]:
    """The requests vLLM's summary counts (completed and failed), its mean E2E and the GPUs' energy, where the file
    gives them."""
    completed, failed = result.completed, result.failed
    counted = completed + failed if isinstance(completed, int) and isinstance(failed, int) else None
    mean_ms = _finite(result.mean_e2el_ms)
    energy = _finite(result.gpu_energy_j)  # NVML's counter over the run, the GPUs only
    return {"file_requests": counted, "file_mean_e2e_s": mean_ms * 1e-3 if mean_ms is not None else None,
            "energy_j": energy if energy is not None and energy > 0 else None}


def _finite(value: object) -> float | None:
    """A number the file gives, when it is a finite one."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value) else None


def _object(value: object) -> JsonRead:
    """A JSON object where one is expected; an empty one where the file has none."""
    return value if isinstance(value, dict) else {}


def _guidellm(documents: list[object], shown: str) -> list[LoadPoint]:
    """One point per benchmark: constant or Poisson → open at its rate; concurrent → closed at its streams;
    synchronous → closed at 1; throughput → unbounded, not a point of the load curve."""
    document = _object(documents[0])
    version = _object(document.get("metadata")).get("version")
    if version != 2:
        raise _refused(shown, f"GuideLLM benchmarks file version {version!r}: version 2 is read", "metadata.version")
    check = _Columns(shown)
    points = []
    for index, benchmark in enumerate(document["benchmarks"]):
        if _object(benchmark).get("type_") != "generative_benchmark":
            raise _refused(shown, "not a generative benchmark", f"benchmarks[{index}].type_")
        config = _object(benchmark.get("config"))
        strategy = _object(config.get("strategy"))
        kind = strategy.get("type_")
        window = _object(benchmark.get("scheduler_metrics"))
        start, stop = window.get("measure_start_time"), window.get("measure_end_time")
        server_counts = config.get("prefer_response_metrics", True) is not False
        columns: dict[str, list[float]] = {name: [] for name in ("send", "first", "end", "tokens", "intended")}
        ok: list[bool] = []
        dropped = 0
        requests = _object(benchmark.get("requests"))
        sources = set()
        for status in ("successful", "incomplete", "errored"):
            for record in requests.get(status) or []:
                timings = _object(_object(_object(record).get("info")).get("timings"))
                sent = check.number(timings.get("request_start"), f"benchmarks[{index}].info.timings.request_start")
                if isinstance(start, int | float) and isinstance(stop, int | float) and not start <= sent <= stop:
                    dropped += 1
                    continue
                total = _object(record.get("output_metrics")).get("total_tokens")
                if total is not None:
                    columns["tokens"].append(check.number(total, "output_metrics.total_tokens"))
                    sources.add("server" if server_counts else "client")
                else:
                    columns["tokens"].append(check.number(timings.get("token_iterations"), "token_iterations"))
                    sources.add("chunks")
                columns["send"].append(sent)
                columns["first"].append(check.number(timings.get("first_token_iteration"), "first_token_iteration",
                                                     optional=True))
                columns["end"].append(check.number(timings.get("request_end"), "request_end", optional=True))
                columns["intended"].append(check.number(timings.get("targeted_start"), "targeted_start",
                                                        optional=True))
                ok.append(status == "successful")
        if not ok:
            raise _refused(shown, "no request in the measured window", f"benchmarks[{index}].requests")
        send, first, end, tokens, intended = (np.array(columns[name]) for name in
                                              ("send", "first", "end", "tokens", "intended"))
        mode: Mode | None = "open" if kind in ("constant", "poisson") else "closed" if kind in (
            "concurrent", "synchronous") else None
        rate, streams = strategy.get("rate"), strategy.get("streams")
        sample, made = config.get("sample_size"), _object(window.get("requests_made")).get("total")
        points.append(_point(
            "guidellm", send, first - send, end - send, tokens, np.array(ok),
            send - intended if np.isfinite(intended).all() else None, mode=mode,
            offered_per_s=float(rate) if mode == "open" and isinstance(rate, int | float) else None,
            concurrency=1 if kind == "synchronous" else streams if kind == "concurrent" else None,
            send_times_known=True, e2e_reconstructed=False,
            tokens_source=sources.pop() if len(sources) == 1 else "mixed", dropped_warmup=dropped,
            constant_schedule=kind == "constant", **_guidellm_summary(_object(benchmark.get("metrics"))),
            sampled_from=made if isinstance(sample, int) and sample >= 1 and isinstance(made, int) else None))
    return points


def _aiperf(columns: aiperf_stream.Columns, shown: str) -> LoadPoint:
    """The profiling phase's records as one point (warm-up records left out and counted); nanosecond clocks
    subtracted as integers before they become seconds."""
    starts = columns.column("start_ns").astype(np.int64)
    if not len(starts):
        raise _refused(shown, "no record of the profiling phase")
    send = (starts - starts.min()).astype(float) * 1e-9
    credits = columns.column("credit_ns").astype(np.int64)
    queue = None
    span = 0.0
    if (credits != aiperf_stream.NO_CREDIT).all():  # the client's wait, and the rate it was asked for
        queue = (starts - credits).astype(float) * 1e-9
        span = float(credits.max() - credits.min()) * 1e-9
    source: TokenSource = "server" if columns.from_client == 0 else "client" if columns.from_server == 0 \
        else "mixed"
    return _point("aiperf-records", send, columns.column("ttft_s"), columns.column("e2e_s"),
                  columns.column("tokens"), columns.column("ok").astype(bool), queue,
                  mode="open" if span > 0 else None, offered_per_s=(len(starts) - 1) / span if span > 0 else None,
                  concurrency=None, send_times_known=True, e2e_reconstructed=False, tokens_source=source,
                  dropped_warmup=columns.warmup)


def _inference_perf(documents: list[object], shown: str) -> list[LoadPoint]:
    """One point (its report folder's stages are cut by _inference_perf_stages): perf-counter seconds, TTFT from the
    first output token's time (else the first chunk's)."""
    (records,) = documents
    assert isinstance(records, list)
    check = _Columns(shown)
    send, ttft, e2e, tokens, ok = [], [], [], [], []
    server, client = 0, 0
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise _refused(shown, "not a request record", f"[{index}]")
        start = check.number(record.get("start_time"), f"[{index}].start_time")
        end = check.number(record.get("end_time"), f"[{index}].end_time", optional=True)
        metrics = ((record.get("info") or {}).get("response_metrics")) or {}
        times = metrics.get("output_token_times") or metrics.get("chunk_times") or []
        first = check.number(times[0], f"[{index}].info.response_metrics.output_token_times") if times else math.nan
        usage = (metrics.get("server_usage") or {}).get("completion_tokens")
        if usage is not None:
            count = check.number(usage, f"[{index}].info.response_metrics.server_usage.completion_tokens")
            server += 1
        else:
            count = check.number(metrics.get("output_tokens"), f"[{index}].info.response_metrics.output_tokens",
                                 optional=True)
            client += 1
        send.append(start)
        ttft.append(first - start)
        e2e.append(end - start)
        tokens.append(count)
        ok.append(record.get("error") is None)
    source: TokenSource = "server" if client == 0 else "client" if server == 0 else "mixed"
    return [_point("inference-perf-records", np.array(send), np.array(ttft), np.array(e2e), np.array(tokens),
                   np.array(ok), None, mode=None, offered_per_s=None, concurrency=None, send_times_known=True,
                   e2e_reconstructed=False, tokens_source=source)]


READERS: dict[Format, Callable[[list[object], str], list[LoadPoint]]] = {
    "guidellm": _guidellm, "inference-perf-records": _inference_perf}  # vLLM's is read from the bytes, typed

