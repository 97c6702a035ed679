"""The MLPerf Training result reader, on hand-worked logs: each expected value is worked out in a comment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.corpus.mlperf_log import MAX_BYTES, MlperfRun, folder_values, main, read_result

T0 = 1_600_000_000_000  # a run_start time, ms


def line(key: str, time_ms: int, value: object = None, **metadata: object) -> str:
    """One `:::MLLOG` line as MLPerf's logger writes it (the rank prefix `0: ` included)."""
    record = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key, "value": value,
              "metadata": metadata}
    return "0: :::MLLOG " + json.dumps(record)


def log(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_samples_over_the_timed_run() -> None:
    text = log("a line of the job's own output",
               line("global_batch_size", T0 - 5_000, 448),
               line("run_start", T0),
               line("train_samples", T0 + 10_000, 123_456),
               line("run_stop", T0 + 10_000, status="success"))
    # 123456 samples / 10.000 s = 12345.6 samples/s -> 4 significant digits: 12350
    assert read_result(text) == MlperfRun(samples=123_456, seconds=10.0, value=12350.0, global_batch=448)


def test_run_stops_samples_count_comes_first() -> None:
    text = log(line("run_start", T0),
               line("train_samples", T0 + 4_000, 999),
               line("run_stop", T0 + 4_000, samples_count=3_000))
    # samples_count 3000 / 4.000 s = 750 samples/s; the train_samples 999 is not read
    run = read_result(text)
    assert (run.samples, run.seconds, run.value, run.global_batch) == (3_000, 4.0, 750.0, None)


def test_the_last_train_samples_after_run_start_counts() -> None:
    text = log(line("train_samples", T0 - 1_000, 50_000_000),  # before run_start: not the run's count
               line("run_start", T0),
               line("train_samples", T0 + 10, 1_281_167),
               line("trained_samples", T0 + 29_000, 7_000),
               line("run_stop", T0 + 30_000))
    # the last of the two after run_start: 7000 samples / 30.000 s = 233.33... -> 233.3
    assert read_result(text).value == 233.3
    assert read_result(text).samples == 7_000


def test_a_samples_event_up_to_one_second_after_run_stop_counts() -> None:
    stop = T0 + 8_000
    on_the_edge = log(line("run_start", T0), line("train_samples", T0 + 100, 1_000),
                      line("run_stop", stop), line("train_samples", stop + 1_000, 2_000))
    # 1000 ms after run_stop is inside the window: 2000 samples / 8.000 s = 250 samples/s
    assert read_result(on_the_edge).value == 250.0
    too_late = log(line("run_start", T0), line("train_samples", T0 + 100, 1_000),
                   line("run_stop", stop), line("train_samples", stop + 1_001, 2_000))
    # 1001 ms after is outside: the earlier 1000 samples / 8.000 s = 125 samples/s
    assert read_result(too_late).value == 125.0
    only_late = log(line("run_start", T0), line("run_stop", stop), line("train_samples", stop + 1_001, 2_000))
    with pytest.raises(ValueError, match="no sample count"):
        read_result(only_late)


def test_fractional_seconds_and_four_significant_digits() -> None:
    text = log(line("run_start", T0), line("run_stop", T0 + 2_340_524), line("train_samples", T0 + 2_340_524, 7))
    # 7 samples / 2340.524 s = 0.0029907... samples/s -> 0.002991
    run = read_result(text)
    assert run.seconds == 2340.524
    assert run.value == 0.002991


@pytest.mark.parametrize(("lines", "message"), [
    ((line("run_stop", T0), line("train_samples", T0, 5)), "no run_start"),
    ((line("run_start", T0), line("train_samples", T0 + 5, 5)), "no run_stop"),
    ((line("run_stop", T0 - 10), line("run_start", T0), line("train_samples", T0 + 5, 5)), "no run_stop"),
    ((line("run_start", T0), line("run_stop", T0 + 5_000)), "no sample count"),
    ((line("train_samples", T0 - 1, 5), line("run_start", T0), line("run_stop", T0 + 5_000)), "no sample count"),
    ((line("run_start", T0), line("run_stop", T0), line("train_samples", T0, 5)), "not after run_start"),
    ((line("run_start", T0), line("run_stop", T0 + 9), line("train_samples", T0, 2.5)), "whole positive"),
    ((line("run_start", T0), line("run_stop", T0 + 9, samples_count="many")), "not a number"),
])
def test_a_log_without_what_the_value_needs_is_refused(lines: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_result(log(*lines))


def test_other_lines_and_broken_marker_lines_are_ignored() -> None:
    text = log("Traceback-free noise :::MLLOG {not json",
               ":::MLLOG [1, 2]",
               line("run_start", T0),
               "0: :::MLLOG " + json.dumps({"key": "train_samples", "value": 10**9}),  # no time: skipped
               line("train_samples", T0 + 1_000, 640),
               line("run_stop", T0 + 2_000))
    # 640 samples / 2.000 s = 320 samples/s
    assert read_result(text).value == 320.0


def test_a_text_over_64_mib_is_refused_unread() -> None:
    with pytest.raises(ValueError, match="64 MiB"):
        read_result("x" * (MAX_BYTES + 1))
    with pytest.raises(ValueError, match="64 MiB"):  # under the limit in characters, over it in UTF-8 bytes
        read_result("é" * (MAX_BYTES // 2 + 1))


def test_a_folders_values_in_file_name_order() -> None:
    def one(samples: int) -> str:
        return log(line("run_start", T0), line("run_stop", T0 + 1_000), line("train_samples", T0 + 1_000, samples))

    # 1 s runs: the value is the sample count; result_10 comes after result_2, not after result_1
    texts = {"result_10.txt": one(10), "result_2.txt": one(2), "result_0.txt": one(0 + 100), "result_1.txt": one(1)}
    assert folder_values(texts) == [100.0, 1.0, 2.0, 10.0]
    with pytest.raises(ValueError, match="result_N"):
        folder_values({"notes.txt": one(1)})
    with pytest.raises(ValueError, match="no result files"):
        folder_values({})


def test_the_command_prints_one_line_per_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "result_0.txt"
    good.write_text(log(line("global_batch_size", T0, 256), line("run_start", T0),
                        line("train_samples", T0 + 4_000, 3_000), line("run_stop", T0 + 4_000)), encoding="utf-8")
    bad = tmp_path / "result_1.txt"
    bad.write_text(log(line("run_start", T0)), encoding="utf-8")
    assert main([str(good)]) == 0
    # 3000 / 4.000 s = 750 samples/s
    assert capsys.readouterr().out == f"{good}\t3000\t4\t750\t256\n"
    assert main([str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1
    assert "no run_stop" in captured.err
    assert main([]) == 2


# Real numbers: mlcommons/training_results_v2.0, Dell/results/XE8545x4A100-SXM-40GB/bert/result_0.txt (the four
# events the value needs, their times and values as logged; the metadata's file names left out).
REAL_EXCERPT = """\
0: :::MLLOG {"namespace": "", "time_ms": 1652407444455, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 256, "metadata": {}}
0: :::MLLOG {"namespace": "", "time_ms": 1652407458415, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {}}
0: :::MLLOG {"namespace": "", "time_ms": 1652409798939, "event_type": "POINT_IN_TIME", "key": "train_samples", "value": 2550016, "metadata": {}}
0: :::MLLOG {"namespace": "", "time_ms": 1652409798939, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "success"}}
"""  # noqa: E501


def test_a_real_excerpt() -> None:
    # 1652409798939 - 1652407458415 = 2340524 ms = 2340.524 s; 2550016 / 2340.524 = 1089.506... -> 1090 samples/s
    assert read_result(REAL_EXCERPT) == MlperfRun(samples=2_550_016, seconds=2340.524, value=1090.0,
                                                  global_batch=256)
