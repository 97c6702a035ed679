"""Serving summaries that an earlier sweep found misread (docs/measurements.md#read-serving-benchmarks): a unit
repeated after its value, a VALID run and an INVALID one in one file, a loadgen accuracy run, and 64k blank lines
under an INVALID result (18 s once)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reportgen.errors import InputError
from reportgen.ingest.serving_bench import read_serving

DATA = Path(__file__).resolve().parent / "data" / "serving"
LOADGEN = (DATA / "mlperf_log_summary.txt").read_text(encoding="utf-8")
INVALID = (DATA / "mlperf_log_summary_invalid.txt").read_text(encoding="utf-8")
VLLM = (DATA / "vllm-summary.txt").read_text(encoding="utf-8")


def test_a_value_that_repeats_its_labels_unit_is_read(tmp_path: Path) -> None:
    text = VLLM.replace("P99 TTFT (ms):                           1150.40", "P99 TTFT (ms): 1150.40 ms")
    (tmp_path / "s.txt").write_text(text, encoding="utf-8")
    assert read_serving(tmp_path / "s.txt").ttft_p99_s == pytest.approx(1.1504)


def test_a_value_with_other_text_after_it_is_refused_where_it_stands(tmp_path: Path) -> None:
    text = VLLM.replace("P99 TTFT (ms):                           1150.40", "P99 TTFT (ms): 1150.40 s")
    (tmp_path / "s.txt").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "s.txt")
    problem = refused.value.problems[0]
    assert problem.line == 13 and problem.line > 0 and problem.column > 0 and "expected a number" in problem.message


def test_a_valid_and_an_invalid_summary_in_one_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text(LOADGEN + INVALID, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "two.txt")
    problem = refused.value.problems[0]
    assert problem.line == LOADGEN.count("\n") + 9 and "a second loadgen summary, INVALID" in problem.message


def test_an_accuracy_run_is_not_capacity(tmp_path: Path) -> None:
    (tmp_path / "acc.txt").write_text(LOADGEN.replace("Mode     : PerformanceOnly", "Mode     : AccuracyOnly"),
                                      encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "acc.txt")
    assert refused.value.problems[0].line == 6 and "only a PerformanceOnly run" in refused.value.problems[0].message


def test_blank_lines_under_an_invalid_result_read_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / "blank.txt").write_text(INVALID + "\n" * 65_536, encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(InputError):
        read_serving(tmp_path / "blank.txt")
    assert time.perf_counter() - start < 2.0  # a guard against the quadratic pattern, not a benchmark
