"""`reportgen ingest serving`: vLLM's bench serve (its JSON and its printed summary) and MLPerf loadgen's summary,
each into one load-test run with throughput, p99 TTFT and p99 TPOT in the right units."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reportgen.errors import InputError, UsageError
from reportgen.ingest.serving_bench import append_load_test, read_serving

DATA = Path(__file__).resolve().parent / "data" / "serving"
INPUTS = Path(__file__).resolve().parent.parent / "inputs"


@pytest.mark.parametrize("name", ["vllm-result.json", "vllm-summary.txt"])
def test_vllm_files_give_the_load_test_in_seconds(name: str) -> None:
    bench = read_serving(DATA / name)
    assert bench.tokens_per_s == pytest.approx(2123.35)  # Output token throughput (tok/s)
    assert bench.requests_per_s == pytest.approx(10.705 if name.endswith("json") else 10.71)
    assert bench.ttft_p99_s == pytest.approx(1.1504)  # P99 TTFT (ms): 1150.40
    assert bench.tpot_p99_s == pytest.approx(0.0882)  # P99 TPOT (ms): 88.20
    assert bench.p99_s is None  # e2el was not among the percentile metrics
    assert bench.throughput("token") == bench.tokens_per_s and bench.throughput("request") == bench.requests_per_s


def test_mlperf_loadgen_summary_in_nanoseconds() -> None:
    bench = read_serving(DATA / "mlperf_log_summary.txt")
    assert bench.scenario == "Server" and bench.scheduled_per_s == pytest.approx(102.71)
    assert bench.requests_per_s == pytest.approx(101.87)  # Completed samples per second
    assert bench.tokens_per_s == pytest.approx(29715.28)  # Completed tokens per second
    assert bench.ttft_p99_s == pytest.approx(1.760966679)  # 99.00 percentile first token latency (ns)
    assert bench.tpot_p99_s == pytest.approx(0.15803211)  # 99.00 percentile time to output token (ns)
    assert bench.p99_s == pytest.approx(121.801757289)  # 99.00 percentile latency (ns)


def test_an_invalid_loadgen_run_is_refused_with_loadgens_reason() -> None:
    with pytest.raises(InputError) as caught:
        read_serving(DATA / "mlperf_log_summary_invalid.txt")
    message = str(caught.value.problems[0])
    assert message.startswith(f"{DATA / 'mlperf_log_summary_invalid.txt'}:9:1: error:")
    assert "INVALID" in message and "Performance constraints satisfied: NO" in message
    assert "Reduce target QPS" in message


@pytest.mark.parametrize(("text", "expected"), [
    ('{"output_throughput": NaN}', "not a number JSON allows"),
    ('{"output_throughput": "fast"}', "expected a number"),
    ('{"output_throughput": -3}', "finite number ≥ 0"),
    ('{"duration": 3}', "no request_throughput or output_throughput"),
    ("============ Serving Benchmark Result ============\nOutput token throughput (tok/s):  ١٢\n",
     "expected a number"),
    ("============ Serving Benchmark Result ============\nOutput token throughput (tok/s): 5\n"
     "Output token throughput (tok/s): 7\n", "appears twice"),
    ("hello", "not a serving benchmark"),
])
def test_hostile_files_get_one_located_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bench.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_serving(path)
    assert any(expected in str(problem) for problem in caught.value.problems)


def test_a_file_past_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen.ingest import serving_bench

    monkeypatch.setattr(serving_bench, "MAX_BYTES", 64)
    path = tmp_path / "big.json"
    path.write_text('{"output_throughput": 1' + " " * 100 + "}", encoding="utf-8")
    with pytest.raises(InputError, match="larger than"):
        read_serving(path)


def test_load_tests_append_as_throughput_runs_the_project_reads(tmp_path: Path) -> None:
    from reportgen.analysis import analyze
    from reportgen.project.loader import load_project

    text = (INPUTS / "llm-service.yaml").read_text(encoding="utf-8")
    start, end = text.index("scaling:"), text.index("pricing:")
    project = tmp_path / "p.yaml"
    project.write_text(text[:start] + "scaling:\n  file: runs.csv\n\n" + text[end:], encoding="utf-8")
    runs = tmp_path / "runs.csv"
    for nodes, name in ((8, "vllm-result.json"), (16, "vllm-summary.txt"), (24, "mlperf_log_summary.txt")):
        shutil.copy(DATA / name, tmp_path / name)
        append_load_test(runs, read_serving(tmp_path / name), nodes, "token", replace=False, repeat=False)
    written = runs.read_text(encoding="utf-8").splitlines()
    assert written[0] == "nodes,throughput [token/s],ttft_p99 [s],tpot_p99 [s],p99_latency [s]"
    assert written[-1] == "24,29715.28,1.760966679,0.15803211,121.801757289"
    assert sum(line.startswith("# ingested:") for line in written) == 3
    serving = analyze(load_project(project).project).serving
    assert serving is not None and serving.unit == "token"
    row = next(r for r in serving.rows if r.nodes == 24)
    assert row.capacity_per_s == pytest.approx(29715.28) and row.ttft_p99_s == pytest.approx(1.760966679)
    assert row.serves is False  # 29,715 tokens/s is far short of the 138,000 needed, and TTFT is over 1.5 s
    with pytest.raises(UsageError, match="already has a run at 24 nodes"):
        append_load_test(runs, read_serving(tmp_path / "mlperf_log_summary.txt"), 24, "token", replace=False,
                         repeat=False)
    with pytest.raises(UsageError, match="project's load counts requests"):
        append_load_test(runs, read_serving(tmp_path / "vllm-result.json"), 32, "request", replace=False,
                         repeat=False)


def test_the_command_prints_and_appends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from reportgen.commands.cli import main

    assert main(["ingest", "serving", str(DATA / "vllm-result.json"), "--nodes", "4", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["tokens_per_s"] == pytest.approx(2123.35) and document["nodes"] == 4
    assert main(["ingest", "serving", str(DATA / "mlperf_log_summary_invalid.txt"), "--nodes", "4"]) == 2


def test_a_load_test_lands_only_where_its_unit_and_workload_belong(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM counts requests and tokens: a service counted in images is refused, not written as 'throughput
    [image/s]' of requests; a training project is refused, not given latency columns its check refuses."""
    from reportgen.commands.cli import main

    for name, text in (("images.yaml", "project: {title: S, workload: inference, goal: {load: 400 image/s}}\n"),
                       ("training.yaml", "project: {title: T, goal: {time_per_run: 1 h}}\n")):
        (tmp_path / name).write_text(text + "design: {nodes: 4}\nscaling: {file: runs.csv}\n", encoding="utf-8")
        assert main(["ingest", "serving", str(DATA / "vllm-result.json"), "--nodes", "2", "--project",
                     str(tmp_path / name)]) == 2
        assert not (tmp_path / "runs.csv").exists()
    errors = capsys.readouterr().err
    assert "counts requests and tokens, and the project's load counts images" in errors
    assert "training.yaml is not a service" in errors
    # loadgen's samples are the items its benchmark feeds: a service counted in images takes them
    images = tmp_path / "images.yaml"
    assert main(["ingest", "serving", str(DATA / "mlperf_log_summary.txt"), "--nodes", "2", "--project",
                 str(images)]) == 0
    assert (tmp_path / "runs.csv").read_text(encoding="utf-8").startswith("nodes,throughput [image/s]")


def test_a_label_repeated_past_its_bound_is_refused_without_reading_on(tmp_path: Path) -> None:
    """3.3 MB of one label repeated was read to its end (83 s before the line index; every copy parsed): a summary
    says each label once, a pasted copy twice; past 16 the file is refused at the 17th."""
    summary = (DATA / "mlperf_log_summary.txt").read_text(encoding="utf-8")
    (tmp_path / "twice.txt").write_text(summary + summary, encoding="utf-8")  # a pasted copy: equal values, read
    assert read_serving(tmp_path / "twice.txt").requests_per_s == pytest.approx(101.87)
    (tmp_path / "many.txt").write_text(summary + "Completed samples per second    : 101.87\n" * 80_000,
                                       encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "many.txt")
    problem = refused.value.problems[0]
    first = summary.count("\n") + 1
    assert (problem.line, problem.message) == (first + 15, "appears more than 16 times: one load test per file")


def test_aiperfs_aggregate_is_a_summary_in_the_units_it_states(tmp_path: Path) -> None:
    """AIPerf 0.13.0's profile_export_aiperf.json (tests/data/serving/aiperf-0.13.0/rate8): the throughputs and the
    p99s as its metric blocks give them, each in its own unit (ms here), its inter-token latency as the TPOT."""
    import json

    path = Path(__file__).parent / "data" / "serving" / "aiperf-0.13.0" / "rate8" / "profile_export_aiperf.json"
    found = read_serving(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert found.tool == "aiperf-aggregate"
    assert found.requests_per_s == pytest.approx(document["request_throughput"]["avg"])
    assert found.tokens_per_s == pytest.approx(document["output_token_throughput"]["avg"])
    assert found.p99_s == pytest.approx(document["request_latency"]["p99"] / 1e3)
    assert found.ttft_p99_s == pytest.approx(document["time_to_first_token"]["p99"] / 1e3)
    assert found.tpot_p99_s == pytest.approx(document["inter_token_latency"]["p99"] / 1e3)
    assert (found.completed, found.failed, found.requested_per_s) == (60, 0, 8.0)
    newer = {**document, "schema_version": "2.0"}
    (tmp_path / "v2.json").write_text(json.dumps(newer), encoding="utf-8")
    with pytest.raises(InputError, match=r"schema '2\.0': 1\.x is read"):
        read_serving(tmp_path / "v2.json")


RECORDED = Path(__file__).parent / "data" / "serving"


def test_an_inference_perf_stage_is_a_summary_and_the_runs_summary_of_stages_is_refused() -> None:
    """inference-perf 0.7.0's stage_1_lifecycle_metrics.json (4 request/s): its throughputs and p99s in seconds;
    the run's summary_lifecycle_metrics.json mixes three stages' loads and is refused, naming the stage files."""
    import json

    path = RECORDED / "inference-perf-0.7.0" / "stage_1_lifecycle_metrics.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    found = read_serving(path)
    latency, throughput = document["successes"]["latency"], document["successes"]["throughput"]
    assert found.tool == "inference-perf-summary" and found.requested_per_s == 4.0
    assert (found.requests_per_s, found.tokens_per_s) == (throughput["requests_per_sec"],
                                                          throughput["output_tokens_per_sec"])
    assert (found.p99_s, found.ttft_p99_s, found.tpot_p99_s) == (
        latency["request_latency"]["p99"], latency["time_to_first_token"]["p99"],
        latency["time_per_output_token"]["p99"])
    assert (found.completed, found.failed, found.prompts) == (120, 0, 120)
    with pytest.raises(InputError, match="spans its 3 stages"):
        read_serving(RECORDED / "inference-perf-0.7.0" / "summary_lifecycle_metrics.json")


def _vllm_closed_point(tmp_path: Path) -> Path:
    """The closed point (8 in flight) of vLLM 0.33.0's appended results, alone in a file, as the report was
    converted from."""
    lines = (RECORDED / "vllm-0.33.0" / "vllm.json").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "vllm-c8.json"
    path.write_text([line for line in lines if line.strip()][3], encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "offered"), [("inference-perf-stage1.yaml", 4.0), ("aiperf-rate8.yaml", None),
                                               ("vllm-c8.yaml", None)])
def test_an_llm_d_benchmark_report_reads_as_the_summary_it_was_converted_from(name: str, offered: float | None,
                                                                              tmp_path: Path) -> None:
    """llm-d's benchmark report v0.2.1, converted by `benchmark-report` 0.2.1 from inference-perf's stage 1, from
    AIPerf's rate-8 aggregate and from vLLM's closed point: the same rates and p99s as the file it came from
    (AIPerf's inter-token latency, its TPOT, where the report has no time_per_output_token); the offered rate where
    the report states one (vLLM's `.inf` at a concurrency asks for none)."""
    report = read_serving(RECORDED / "br-0.2.1" / name)
    source = read_serving({"inference": RECORDED / "inference-perf-0.7.0" / "stage_1_lifecycle_metrics.json",
                           "aiperf": RECORDED / "aiperf-0.13.0" / "rate8" / "profile_export_aiperf.json",
                           "vllm": _vllm_closed_point(tmp_path)}[name.split("-")[0]])
    assert report.tool == "br-0.2"
    for field in ("requests_per_s", "tokens_per_s", "p99_s", "ttft_p99_s", "tpot_p99_s", "completed", "failed"):
        assert getattr(report, field) == pytest.approx(getattr(source, field), rel=1e-12), field
    assert report.requested_per_s == offered


def test_a_benchmark_reports_version_and_units_are_checked(tmp_path: Path) -> None:
    """A report of another version is refused naming it; a latency in a unit the schema does not allow is refused
    naming its field; the same report as JSON reads as the YAML does."""
    import json

    import yaml

    document = yaml.safe_load((RECORDED / "br-0.2.1" / "inference-perf-stage1.yaml").read_text(encoding="utf-8"))
    (tmp_path / "report.json").write_text(json.dumps(document), encoding="utf-8")
    as_json = read_serving(tmp_path / "report.json")
    assert as_json.ttft_p99_s == pytest.approx(document["results"]["request_performance"]["aggregate"]["latency"][
        "time_to_first_token"]["p99"])
    (tmp_path / "v3.yaml").write_text(yaml.safe_dump({**document, "version": "0.3"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"version '0\.3': 0\.2 and 0\.2\.1 are read"):
        read_serving(tmp_path / "v3.yaml")
    document["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["units"] = "min"
    (tmp_path / "minutes.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "minutes.yaml")
    (problem,) = refused.value.problems
    assert problem.path == "results.request_performance.aggregate.latency.time_to_first_token.units"
    (tmp_path / "notes.yaml").write_text("just: [a, note]\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a serving benchmark"):
        read_serving(tmp_path / "notes.yaml")


def test_the_command_lines_file_formats_are_the_readers_own() -> None:
    from typing import get_args

    from reportgen.formats import SERVING_FILE_FORMATS
    from reportgen.ingest.request_records import FORMATS
    from reportgen.ingest.serving_bench import Tool

    assert set(SERVING_FILE_FORMATS) == set(FORMATS) | set(get_args(Tool))
