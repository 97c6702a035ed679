"""Serving benchmarks → one load-test run.

Each summary as its tool writes it (AIPerf's aggregate, an inference-perf stage's lifecycle metrics and llm-d's
benchmark report v0.2 are described at their readers below):
- vLLM `bench serve --save-result`: a JSON object with `request_throughput`, `output_throughput` (tokens/s),
  `total_token_throughput`, and `p99_ttft_ms`, `p99_tpot_ms`, `p99_e2el_ms` (the last when e2el is among the
  `--percentile-metrics`), all in milliseconds;
- vLLM's printed summary ("============ Serving Benchmark Result ============"): `Request throughput (req/s):`,
  `Output token throughput (tok/s):`, `P99 TTFT (ms):`, `P99 TPOT (ms):`, `P99 E2EL (ms):`;
- MLPerf loadgen's `mlperf_log_summary.txt`: `Completed samples per second` (Server) or `Samples per second`
  (Offline), `Completed tokens per second`, `Result is : VALID|INVALID` with the constraints that failed,
  `Scheduled samples per second`, and in nanoseconds `99.00 percentile latency (ns)`, `99.00 percentile first token
  latency (ns)`, `99.00 percentile time to output token (ns)`.

A file is bounded in size, every value must be a finite, non-negative ASCII number, and an INVALID loadgen run is
refused with loadgen's own reasons: a run the benchmark itself rejects is not a measurement of capacity.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import locked
from reportgen.ingest import strict_json
from reportgen.ingest.aiperf_stream import TIME_UNITS
from reportgen.json_types import JsonRead, at_path
from reportgen.project import measurements, units
from reportgen.project.records import LoadTestCounts, inert
from reportgen.project.yaml_source import read_text

MAX_BYTES = 64 << 20  # --save-detailed keeps every request's latencies: a long run's JSON reaches tens of MB
Tool = Literal["vllm-json", "vllm-summary", "mlperf-loadgen", "aiperf-aggregate", "inference-perf-summary", "br-0.2"]
# Where a problem of the file as a whole is located: its first line and column, a place an editor can jump to (every
# location is 1-based; 0:0 is none)
WHOLE_FILE = (1, 1)
TOOL_NAMES: dict[Tool, str] = {"vllm-json": "vLLM bench serve (--save-result JSON)",
                               "vllm-summary": "vLLM bench serve (printed summary)",
                               "mlperf-loadgen": "MLPerf loadgen (mlperf_log_summary.txt)",
                               "aiperf-aggregate": "AIPerf (profile_export_aiperf.json)",
                               "inference-perf-summary": "inference-perf (a stage's lifecycle metrics)",
                               "br-0.2": "llm-d benchmark report v0.2"}


@dataclass(frozen=True)
class ServingBenchmark:
    """One load test, in SI units: rates per second, latencies in seconds."""

    tool: Tool
    file: str
    sha256: str
    requests_per_s: float | None  # requests (loadgen: samples) completed per second
    tokens_per_s: float | None  # output tokens per second
    p99_s: float | None  # end-to-end
    ttft_p99_s: float | None
    tpot_p99_s: float | None
    scheduled_per_s: float | None = None  # loadgen: the rate it offered
    scenario: str | None = None  # loadgen: Server, Offline, ...
    requested_per_s: float | None = None  # vLLM: --request-rate (None: as fast as possible, "inf")
    completed: int | None = None  # requests that completed
    failed: int | None = None  # requests that failed
    prompts: int | None = None  # requests sent (vLLM's num_prompts)
    placeholders: tuple[str, ...] = ()  # the values the tool wrote as 0 for "not measured": read as absent

    @property
    def counts(self) -> LoadTestCounts:
        """What the file says of the requests it sent, as the row's provenance keeps it."""
        offered = self.requested_per_s if self.requested_per_s is not None else self.scheduled_per_s
        return LoadTestCounts(offered, self.requests_per_s, self.completed, self.failed, self.prompts)

    def throughput(self, unit: str) -> float:
        """The capacity in the project's unit of work: tokens for a service counted in tokens, requests for one
        counted in requests; loadgen's samples for any other unit (a sample is the item the benchmark feeds: an
        image, a query). vLLM counts requests and tokens only: a project counting images is refused, not written
        as requests in images' name."""
        if unit not in ("token", "request") and self.tool != "mlperf-loadgen":
            raise InputError([Problem(self.file, *WHOLE_FILE, "", f"the {TOOL_NAMES[self.tool]} file counts "
                                      f"requests and tokens, and the project's load counts {unit}s: state the "
                                      "project's load in request/s or token/s")])
        value = self.tokens_per_s if unit == "token" else self.requests_per_s
        if value is None:
            counted = "tokens" if unit == "token" else "requests or samples"
            raise InputError([Problem(self.file, *WHOLE_FILE, "", f"the {TOOL_NAMES[self.tool]} file gives no "
                                      f"{counted} per second, the unit the project's load counts ({unit})")])
        return value

    def provenance(self, nodes: int) -> tuple[str, ...]:
        return (f"# ingested: {TOOL_NAMES[self.tool]} at {nodes} nodes from {inert(Path(self.file).name)} "
                f"(sha256 {self.sha256})", self.counts.line())


def read_serving(path: Path) -> ServingBenchmark:
    """The load test in the file, whichever of the summaries' shapes it has."""
    shown = str(path)
    text, raw = read_text(path, shown, limit=MAX_BYTES)
    sha = hashlib.sha256(raw).hexdigest()
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _json_summary(text, shown, sha, path)
    if "MLPerf Results Summary" in text:
        return _loadgen(text, shown, sha)
    if "Serving Benchmark Result" in text:
        return _vllm_summary(text, shown, sha)
    document = _yaml_mapping(text, shown)
    if document is not None and _is_benchmark_report(document):
        return _benchmark_report(document, shown, sha)
    raise InputError([Problem(shown, 1, 1, "", "not a serving benchmark: expected vLLM's --save-result JSON or its "
                              "printed \"Serving Benchmark Result\", MLPerf loadgen's mlperf_log_summary.txt, AIPerf's "
                              "profile_export_aiperf.json, an inference-perf stage_N_lifecycle_metrics.json, or an "
                              "llm-d benchmark report v0.2")])


def _yaml_mapping(text: str, shown: str) -> JsonRead | None:
    """The text as a YAML mapping (an llm-d benchmark report), or None for any other text: a file that is no
    YAML is refused as no summary, not as bad YAML."""
    from reportgen.project.yaml_source import mapping_data

    document = mapping_data(text, shown, quiet=True)
    return document if isinstance(document, dict) else None


def _json_summary(text: str, file: str, sha: str, path: Path) -> ServingBenchmark:
    try:
        document = strict_json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InputError([Problem(file, 1, 1, "", f"invalid JSON: {error}")]) from None
    if not isinstance(document, dict):
        raise InputError([Problem(file, 1, 1, "", "expected a load tester's summary object")])
    if isinstance(document.get("input_config"), dict) and isinstance(document.get("request_throughput"), dict):
        return _aiperf_aggregate(document, file, sha)
    if all(isinstance(document.get(key), dict) for key in ("load_summary", "successes", "failures")):
        return _inference_perf_summary(document, file, sha, path)
    if _is_benchmark_report(document):
        return _benchmark_report(document, file, sha)
    return _vllm_json(document, file, sha)


def _vllm_json(document: JsonRead, file: str, sha: str) -> ServingBenchmark:
    reader = _Values(file)
    value = {key: reader.json_number(document, key) for key in (
        "request_throughput", "output_throughput", "p99_ttft_ms", "p99_tpot_ms", "p99_e2el_ms")}
    count = {key: reader.json_count(document, key) for key in ("completed", "failed", "num_prompts")}
    rate = reader.json_rate(document, "request_rate")
    reader.done()
    if value["request_throughput"] is None and value["output_throughput"] is None:
        raise InputError([Problem(file, 1, 1, "", "no request_throughput or output_throughput: not the result of "
                                  "vLLM bench serve")])
    latency, placeholders = _measured_latencies(value, ("p99_e2el_ms", "p99_ttft_ms", "p99_tpot_ms"))
    return ServingBenchmark("vllm-json", file, sha, value["request_throughput"], value["output_throughput"],
                            _ms(latency["p99_e2el_ms"]), _ms(latency["p99_ttft_ms"]), _ms(latency["p99_tpot_ms"]),
                            requested_per_s=rate, completed=count["completed"], failed=count["failed"],
                            prompts=count["num_prompts"], placeholders=placeholders)


def _inference_perf_summary(document: JsonRead, file: str, sha: str, path: Path) -> ServingBenchmark:
    """inference-perf's lifecycle metrics (`stage_N_lifecycle_metrics.json`, or `summary_lifecycle_metrics.json` of
    a run of one stage): seconds throughout. Its `time_per_output_token` ends at the last token, not the last byte,
    and is read as the TPOT (methods.md#one-set-of-definitions names the difference). The run's summary of several
    stages mixes their loads: refused, naming the stage files."""
    reader = _Values(file)
    rate = reader.nested_number(document, "load_summary.requested_rate")
    stages = sorted(path.parent.glob("stage_*_lifecycle_metrics.json"))
    if rate is None and len(stages) > 1:
        raise InputError([Problem(file, 1, 1, "load_summary", f"the run's summary spans its {len(stages)} stages, "
                                  "each at its own load: pass one of its stage_N_lifecycle_metrics.json")])
    latency = {name: reader.nested_number(document, f"successes.latency.{name}.p99") for name in (
        "request_latency", "time_to_first_token", "time_per_output_token")}
    requests = reader.nested_number(document, "successes.throughput.requests_per_sec")
    tokens = reader.nested_number(document, "successes.throughput.output_tokens_per_sec")
    completed = reader.nested_count(document, "successes.count")
    failed = reader.nested_count(document, "failures.count")
    sent = reader.nested_count(document, "load_summary.count")
    reader.done()
    if requests is None and tokens is None:
        raise InputError([Problem(file, 1, 1, "successes.throughput", "no requests_per_sec or output_tokens_per_sec: "
                                  "not inference-perf's lifecycle metrics")])
    return ServingBenchmark("inference-perf-summary", file, sha, requests, tokens, latency["request_latency"],
                            latency["time_to_first_token"], latency["time_per_output_token"],
                            requested_per_s=rate or None, completed=completed, failed=failed, prompts=sent)


BENCHMARK_REPORT_VERSIONS = ("0.2", "0.2.1")
_PER_TOKEN_UNITS = {"s/token": 1.0, "ms/token": 1e-3}
_BR_TIME_UNITS = {"s": 1.0, "ms": 1e-3}


def _is_benchmark_report(document: JsonRead) -> bool:
    results = document.get("results")
    performance = results.get("request_performance") if isinstance(results, dict) else None
    return "version" in document and isinstance(performance, dict) and isinstance(performance.get("aggregate"), dict)


def _benchmark_report(document: JsonRead, file: str, sha: str) -> ServingBenchmark:
    """An llm-d benchmark report v0.2 (YAML or JSON): one load point's aggregate, each statistic with its `units`,
    which are authoritative. Its TPOT is `time_per_output_token`; a report converted from AIPerf carries only
    `inter_token_latency`, AIPerf's (E2E − TTFT)/(n − 1), the same quantity; any other tool's inter-token latency is
    its chunk gaps, not the TPOT (methods.md#one-set-of-definitions)."""
    version = str(document.get("version"))
    if version not in BENCHMARK_REPORT_VERSIONS:
        raise InputError([Problem(file, 1, 1, "version", f"benchmark report version {version!r}: "
                                  f"{' and '.join(BENCHMARK_REPORT_VERSIONS)} are read")])
    reader = _Values(file)
    aggregate = "results.request_performance.aggregate"
    load = "scenario.load.standardized"
    tool = at_path(document, f"{load}.tool")

    def statistic(path: str, statistic: str, units: dict[str, float]) -> float | None:
        unit = at_path(document, f"{path}.units")
        value = reader.nested_number(document, f"{path}.{statistic}")
        if value is None:
            return None
        if unit not in units:
            reader.problems.append(Problem(file, 1, 1, f"{path}.units", f"unit {unit!r} is not one of "
                                           f"{', '.join(units)}"))
            return None
        return value * units[unit]

    ttft = statistic(f"{aggregate}.latency.time_to_first_token", "p99", _BR_TIME_UNITS)
    e2e = statistic(f"{aggregate}.latency.request_latency", "p99", _BR_TIME_UNITS)
    tpot = statistic(f"{aggregate}.latency.time_per_output_token", "p99", _PER_TOKEN_UNITS)
    if tpot is None and tool == "aiperf":
        tpot = statistic(f"{aggregate}.latency.inter_token_latency", "p99", _PER_TOKEN_UNITS)
    requests = statistic(f"{aggregate}.throughput.request_rate", "mean", {"queries/s": 1.0})
    tokens = statistic(f"{aggregate}.throughput.output_token_rate", "mean", {"tokens/s": 1.0})
    total = reader.nested_count(document, f"{aggregate}.requests.total")
    failed = reader.nested_count(document, f"{aggregate}.requests.failures")
    offered = at_path(document, f"{load}.rate_qps")  # .inf: as fast as it could, at a concurrency: no rate asked
    rate = None if isinstance(offered, float) and math.isinf(offered) else reader.nested_number(document,
                                                                                                f"{load}.rate_qps")
    reader.done()
    if requests is None and tokens is None:
        raise InputError([Problem(file, 1, 1, f"{aggregate}.throughput", "no request_rate or output_token_rate")])
    completed = total - failed if total is not None and failed is not None and failed <= total else None
    return ServingBenchmark("br-0.2", file, sha, requests, tokens, e2e, ttft, tpot, requested_per_s=rate or None,
                            completed=completed, failed=failed, prompts=total)


def _aiperf_aggregate(document: JsonRead, file: str, sha: str) -> ServingBenchmark:
    """AIPerf's aggregate (`profile_export_aiperf.json`): metric blocks {unit, avg, p99, …} whose unit is
    authoritative; `schema_version` 1.x (absent in 2025 files: read as 1.0). Its inter-token latency is
    (E2E − TTFT)/(n − 1) per request: the TPOT (methods.md#one-set-of-definitions)."""
    version = document.get("schema_version", "1.0")
    if not (isinstance(version, str) and version.split(".")[0] == "1"):
        raise InputError([Problem(file, 1, 1, "schema_version", f"AIPerf aggregate schema {version!r}: 1.x is "
                                  "read")])
    reader = _Values(file)

    def block(name: str, statistic: str, units: dict[str, float]) -> float | None:
        metric = document.get(name)
        if not isinstance(metric, dict):
            return None
        unit = metric.get("unit")
        if unit not in units:
            reader.problems.append(Problem(file, 1, 1, f"{name}.unit", f"unit {unit!r} is not one of "
                                           f"{', '.join(units)}"))
            return None
        value = reader.json_number(metric, statistic)
        return value * units[unit] if value is not None else None

    requests = block("request_throughput", "avg", {"requests/sec": 1.0})
    tokens = block("output_token_throughput", "avg", {"tokens/sec": 1.0})
    ttft, tpot, e2e = (block(name, "p99", TIME_UNITS) for name in ("time_to_first_token",
                                                                            "inter_token_latency", "request_latency"))
    count = block("request_count", "avg", {"requests": 1.0})
    errors = document.get("error_summary")
    failed = sum(int(entry.get("count", 0)) for entry in errors if isinstance(entry, dict)
                 and isinstance(entry.get("count"), int)) if isinstance(errors, list) else None
    phases = document["input_config"].get("phases")
    profiling = next((phase for phase in phases if isinstance(phase, dict) and phase.get("kind") == "profiling"),
                     {}) if isinstance(phases, list) else {}
    rate = reader.json_number(profiling, "rate") if isinstance(profiling, dict) else None
    reader.done()
    if requests is None and tokens is None:
        raise InputError([Problem(file, 1, 1, "", "no request_throughput or output_token_throughput: not an AIPerf "
                                  "aggregate")])
    completed = int(count) if count is not None and count == int(count) else None
    return ServingBenchmark("aiperf-aggregate", file, sha, requests, tokens, e2e, ttft, tpot,
                            requested_per_s=rate or None, completed=completed, failed=failed,
                            prompts=completed + failed if completed is not None and failed is not None else None)


def _measured_latencies(values: dict[str, float | None], names: tuple[str, ...]
                        ) -> tuple[dict[str, float | None], tuple[str, ...]]:
    """The latency percentiles with vLLM's placeholders taken out: it writes 0 for a percentile it did not measure
    (TTFT and TPOT when the backend did not stream), and no request is served in no time
    (methods.md#placeholders)."""
    placeholders = tuple(name for name in names if values.get(name) == 0)
    return {name: None if name in placeholders else values.get(name) for name in names}, placeholders


_VLLM_LINES = {"request": "Request throughput (req/s)", "tokens": "Output token throughput (tok/s)",
               "ttft": "P99 TTFT (ms)", "tpot": "P99 TPOT (ms)", "e2el": "P99 E2EL (ms)",
               "completed": "Successful requests", "failed": "Failed requests",
               "rate": "Request rate configured (RPS)"}


def _vllm_summary(text: str, file: str, sha: str) -> ServingBenchmark:
    reader = _Values(file)
    fields = reader.labelled(text, _VLLM_LINES, unbounded=frozenset({"rate"}))
    completed, failed = reader.whole(fields, "completed", _VLLM_LINES), reader.whole(fields, "failed", _VLLM_LINES)
    reader.done()
    if fields["request"] is None and fields["tokens"] is None:
        raise InputError([Problem(file, 1, 1, "", "no \"Request throughput\" or \"Output token throughput\" line in "
                                  "the Serving Benchmark Result")])
    latency, placeholders = _measured_latencies(fields, ("e2el", "ttft", "tpot"))
    rate = fields["rate"]
    return ServingBenchmark("vllm-summary", file, sha, fields["request"], fields["tokens"], _ms(latency["e2el"]),
                            _ms(latency["ttft"]), _ms(latency["tpot"]),
                            requested_per_s=rate if rate is not None and math.isfinite(rate) else None,
                            completed=completed, failed=failed,
                            prompts=completed + failed if completed is not None and failed is not None else None,
                            placeholders=tuple(_VLLM_LINES[name] for name in placeholders))


_LOADGEN_LINES = {"samples": "Completed samples per second", "offline": "Samples per second",
                  "tokens": "Completed tokens per second", "offline_tokens": "Tokens per second",
                  "scheduled": "Scheduled samples per second", "p99": "99.00 percentile latency (ns)",
                  "ttft": "99.00 percentile first token latency (ns)",
                  "tpot": "99.00 percentile time to output token (ns)"}


def _loadgen(text: str, file: str, sha: str) -> ServingBenchmark:
    # [ \t], never \s, at a line's start: \s runs on through every blank line after it (a file of 64k blank lines
    # took 18 s)
    results = list(itertools.islice(re.finditer(r"^Result is[ \t]*:[ \t]*(\S+)", text, re.M),
                                    MAX_LABEL_REPEATS))
    if not results:
        raise InputError([Problem(file, 1, 1, "", "no \"Result is :\" line: not a complete loadgen summary")])
    result = results[0]
    line = text[:result.start()].count("\n") + 1
    other = next((r for r in results[1:] if r.group(1) != result.group(1)), None)
    if other is not None:  # a pasted copy says the same; a VALID run and an INVALID one are two load tests
        second = text[:other.start()].count("\n") + 1
        raise InputError([Problem(file, second, 1, "", f"a second loadgen summary, {other.group(1)}, after the "
                                  f"{result.group(1)} one at line {line}: one load test per file")])
    # every Mode line: a pasted accuracy run below a performance one is no capacity either
    modes = itertools.islice(re.finditer(r"^Mode[ \t]*:[ \t]*(\S+)", text, re.M), MAX_LABEL_REPEATS)
    mode = next((m for m in modes if m.group(1) != "PerformanceOnly"), None)
    if mode is not None:
        raise InputError([Problem(file, text[:mode.start()].count("\n") + 1, 1, "Mode",
                                  f"loadgen ran in {mode.group(1)} mode: only a PerformanceOnly run measures "
                                  "capacity")])
    if result.group(1) != "VALID":
        failed = [f"{m.group(1).strip()}: {m.group(2)}" for m in
                  re.finditer(r"^[ \t]+(\S.*?satisfied)[ \t]*:[ \t]*(NO|No)[ \t]*\r?$", text, re.M)]
        advice = [m.group(1).strip() for m in re.finditer(r"^[ \t]*\*[ \t]*(\S.*)$", text[result.end():], re.M)
                  if not m.group(1).startswith("Run successful")]
        why = "; ".join(failed + advice[:3]) or "no reason given"
        raise InputError([Problem(file, line, 1, "", f"loadgen marked this run {result.group(1)} ({why}): an invalid "
                                  "run is not a measurement of capacity; lower the target rate and run it again")])
    scenario = re.search(r"^Scenario[ \t]*:[ \t]*(\S+)", text, re.M)
    reader = _Values(file)
    fields = reader.labelled(text, _LOADGEN_LINES)
    reader.done()
    samples = fields["samples"] if fields["samples"] is not None else fields["offline"]
    tokens = fields["tokens"] if fields["tokens"] is not None else fields["offline_tokens"]
    if samples is None and tokens is None:
        raise InputError([Problem(file, 1, 1, "", "no samples or tokens per second in the loadgen summary")])
    return ServingBenchmark("mlperf-loadgen", file, sha, samples, tokens, _ns(fields["p99"]), _ns(fields["ttft"]),
                            _ns(fields["tpot"]), fields["scheduled"], scenario.group(1) if scenario else None)


def _without_label_unit(cell: str, label: str) -> str:
    """The number of a cell that repeats its label's unit after it ("P99 TTFT (ms): 89.77 ms"): the unit stated
    twice is one unit; any other text stays, and is refused as not a number."""
    unit = re.search(r"\(([^()]+)\)\s*$", label)
    parts = cell.rsplit(None, 1)
    if unit is not None and len(parts) == 2 and parts[1] == unit.group(1):
        return parts[0]
    return cell


MAX_LABEL_REPEATS = 16  # a label's lines read at most: a summary says each once (a pasted copy, twice)


def _line_of(newlines: list[int], offset: int) -> int:
    """The 1-based line of `offset`, from the newlines' offsets (a search, not a count from the start per match)."""
    return bisect.bisect_right(newlines, offset - 1) + 1


def _ms(value: float | None) -> float | None:
    return None if value is None else value / 1e3


def _ns(value: float | None) -> float | None:
    return None if value is None else value / 1e9


@dataclass
class _Values:
    """Values read from one file, each checked; every problem is collected and raised together."""

    file: str

    def __post_init__(self) -> None:
        self.problems: list[Problem] = []

    def json_number(self, document: JsonRead, key: str) -> float | None:
        """The number under `key` (a problem named by `key` where it is not one), or None."""
        value = document.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problems.append(Problem(self.file, 1, 1, key, f"expected a number, got {json.dumps(value)[:40]}"))
            return None
        return self._checked(float(value), key, 1)  # strict_json refused integers past float range

    def nested_number(self, document: JsonRead, path: str) -> float | None:
        """The number at a dotted path of mappings (named by the whole path where it is wrong), or None."""
        return self.json_number({path: at_path(document, path)}, path)

    def nested_count(self, document: JsonRead, path: str) -> int | None:
        """The whole number at a dotted path, or None."""
        return self.json_count({path: at_path(document, path)}, path)

    def json_count(self, document: JsonRead, key: str) -> int | None:
        """A count of requests: a whole number ≥ 0, or absent."""
        value = self.json_number(document, key)
        if value is not None and value != int(value):
            self.problems.append(Problem(self.file, 1, 1, key, f"expected a whole number, got {value:g}"))
            return None
        return None if value is None else int(value)

    def json_rate(self, document: JsonRead, key: str) -> float | None:
        """vLLM's --request-rate: a number, or "inf" (as fast as it can: no rate to reach), read as None."""
        value = document.get(key)
        if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
            return None
        rate = self.json_number(document, key)
        return rate if rate else None  # a rate of 0 is no rate vLLM runs at

    def whole(self, fields: dict[str, float | None], name: str, labels: dict[str, str]) -> int | None:
        value = fields[name]
        if value is not None and value != int(value):
            self.problems.append(Problem(self.file, 1, 1, labels[name], f"expected a whole number, got {value:g}"))
            return None
        return None if value is None else int(value)

    def labelled(self, text: str, labels: dict[str, str], *,
                 unbounded: frozenset[str] = frozenset()) -> dict[str, float | None]:
        """The number after each label ("Label : 12.5"), the first line that carries it; a label seen twice with
        different values is refused (two runs in one file). A label in `unbounded` may read "inf"."""
        found: dict[str, float | None] = {}
        newlines = [m.start() for m in re.finditer("\n", text)]
        for name, label in labels.items():
            # [ \t]*, not \s*: a \s* at a line's start runs on through every blank line after it, and a file of
            # blank lines then costs the square of its length
            # the whole rest of the line: a value with more after it ("89.77 ms") is read or refused, never skipped.
            # Taken whole and stripped here: a lazy group before `[ \t]*$` tries every space run once per character
            # of the line (a value followed by 20,000 spaces and a letter took 2.7 s)
            pattern = re.compile(rf"^[ \t]*{re.escape(label)}[ \t]*:([^\n]*)", re.M)
            values = []
            matches = pattern.finditer(text)
            for match in itertools.islice(matches, MAX_LABEL_REPEATS):
                line = _line_of(newlines, match.start())
                rest = match.group(1).rstrip("\r")
                cell = _without_label_unit(rest.strip(" \t"), label)
                if name in unbounded and cell.lower() in ("inf", "infinity"):
                    values.append((line, math.inf))
                    continue
                if not units.is_ascii_number(cell):
                    column = match.start(1) - match.start() + len(rest) - len(rest.lstrip(" \t")) + 1
                    self.problems.append(Problem(self.file, line, column, label,
                                                 f"expected a number, got \"{cell[:40]}\""))
                    continue
                checked = self._checked(float(cell), label, line)
                if checked is not None:
                    values.append((line, checked))
            extra = next(matches, None)  # a label past its bound: read no further, whatever the file's length
            if extra is not None:
                self.problems.append(Problem(self.file, _line_of(newlines, extra.start()), 1, label,
                                             f"appears more than {MAX_LABEL_REPEATS} times: one load test per file"))
            elif len({value for _, value in values}) > 1:
                self.problems.append(Problem(self.file, values[1][0], 1, label, "appears twice with different values: "
                                             "one load test per file"))
            found[name] = values[0][1] if values else None
        return found

    def _checked(self, value: float, label: str, line: int) -> float | None:
        if not math.isfinite(value) or value < 0 or value > units.MAX_MAGNITUDE:
            self.problems.append(Problem(self.file, line, 1, label, f"must be a finite number ≥ 0, got {value:g}"))
            return None
        return value

    def done(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def json_document(benchmark: ServingBenchmark, nodes: int, unit: str | None) -> dict[str, object]:
    return {"tool": benchmark.tool, "file": benchmark.file, "sha256": benchmark.sha256, "nodes": nodes,
            "requests_per_s": benchmark.requests_per_s, "tokens_per_s": benchmark.tokens_per_s,
            "p99_s": benchmark.p99_s, "ttft_p99_s": benchmark.ttft_p99_s, "tpot_p99_s": benchmark.tpot_p99_s,
            "scheduled_per_s": benchmark.scheduled_per_s, "scenario": benchmark.scenario, "unit": unit,
            "requested_per_s": benchmark.requested_per_s, "completed": benchmark.completed,
            "failed": benchmark.failed, "sent": benchmark.prompts, "not_measured": list(benchmark.placeholders),
            "findings": [{"code": code, "message": message} for code, message in benchmark.counts.problems()]}


# The runs CSV's columns a load test fills, with the unit a new header gives them
LATENCY_COLUMNS = (("p99_latency", "p99_s"), ("ttft_p99", "ttft_p99_s"), ("tpot_p99", "tpot_p99_s"))


def append_load_test(csv_path: Path, benchmark: ServingBenchmark, nodes: int, unit: str, *, replace: bool,
                     repeat: bool) -> dict[str, str]:
    """Add the load test as a throughput-form run of the runs CSV (created when absent), with its file and SHA-256
    in a comment above it, under the CSV lock; the latency columns it measured are added when the CSV lacks them.
    Returns the cells written."""
    from reportgen.ingest.measure import csv_form, csv_lines, with_column, without_rows, write_lines

    capacity = benchmark.throughput(unit)
    latencies = {column: getattr(benchmark, key) for column, key in LATENCY_COLUMNS}
    with locked(csv_path.parent):
        lines, header = csv_lines(csv_path)
        if header is None:
            given = [column for column, value in latencies.items() if value is not None]
            lines.append(",".join(["nodes", f"throughput [{unit}/s]", *(f"{column} [s]" for column in given)]))
            header = len(lines) - 1
        else:
            form = csv_form(csv_path)
            if form not in (None, "throughput"):
                raise UsageError(f"{csv_path.name} records runs in {form} form; a load test is a throughput run: "
                                 "keep a service's runs in a CSV of their own")
            rows = measurements.rows_at(lines, header, nodes)
            if rows and not (replace or repeat):
                raise UsageError(f"{csv_path.name} already has a run at {nodes} nodes (line {rows[0] + 1}); use "
                                 "--repeat to add another load test of that scale, or --replace to replace it")
            for name, value in latencies.items():
                if value is not None:
                    lines, _ = with_column(lines, header, name, "s")
        columns = [column for cell, _ in measurements.split_cells(lines[header])
                   if (column := measurements.header_column(cell)) is not None]
        cells = {name: _cell(name, column_unit, nodes, capacity, unit, latencies, csv_path)
                 for name, column_unit in columns}
        kept = lines if repeat else without_rows(lines, header, nodes)
        write_lines(csv_path, [*kept, *benchmark.provenance(nodes), ",".join(cells[name] for name, _ in columns)])
    return cells


def _cell(name: str, column_unit: str | None, nodes: int, capacity: float, unit: str,
          latencies: dict[str, float | None], csv_path: Path) -> str:
    from reportgen.ingest.measure import number_text

    if name == "nodes":
        return str(nodes)
    if name == "throughput":
        named = units.work_unit(column_unit) if column_unit else None
        if named is not None and named != unit:
            raise UsageError(f"{csv_path.name} records throughput in {column_unit}, but the project's load counts "
                             f"{unit}s")
        if not column_unit:
            return f"{number_text(capacity)} {unit}/s"
        return number_text(capacity / units.parse_unit(column_unit, units.RATE))
    if name in latencies:
        seconds = latencies[name]
        if seconds is None:
            return ""
        if not column_unit:
            return f"{number_text(seconds)} s"
        return number_text(seconds / units.parse_unit(column_unit, units.TIME))
    return ""
