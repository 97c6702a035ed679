"""The MLPerf Training result reader, on hand-worked logs: each expected value is worked out in a comment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.corpus.mlperf_log import (
    MAX_BYTES,
    RULE_EPOCHS,
    RULE_RUNNING,
    RULE_STEPS,
    RULE_STOP_COUNT,
    MlperfRun,
    folder_values,
    main,
    read_result,
)

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


# The four rules (the module docstring), each on a hand-worked log, and the dataset-size trap they avoid.


def test_the_rule_used_is_named() -> None:
    stop_count = log(line("run_start", T0), line("run_stop", T0 + 4_000, samples_count=3_000))
    assert read_result(stop_count).rule == RULE_STOP_COUNT
    running = log(line("run_start", T0), line("epoch_start", T0 + 1, epoch_num=0),
                  line("train_samples", T0 + 4_000, 3_000), line("run_stop", T0 + 4_000))
    assert read_result(running).rule == RULE_RUNNING


def test_a_running_count_after_training_starts() -> None:
    # BERT's shape: the dataset size is not logged; train_samples at run_stop is the samples trained so far
    text = log(line("run_start", T0), line("epoch_start", T0 + 20, epoch_num=0),
               line("block_start", T0 + 21, first_epoch_num=1, epoch_count=1),
               line("block_stop", T0 + 9_000, first_epoch_num=1),
               line("epoch_stop", T0 + 9_000, epoch_num=18_000), line("train_samples", T0 + 9_001, 18_000),
               line("run_stop", T0 + 9_001, status="success"))
    # 18000 samples / 9.001 s = 1999.78 -> 2000 samples/s
    run = read_result(text)
    assert (run.samples, run.value, run.rule) == (18_000, 2000.0, RULE_RUNNING)


def rnnt_like(*tail: str, dataset: int = 1_000) -> str:
    """train_samples = the dataset size, logged once after run_start but before the first epoch starts; three
    1-based epochs of 10 s, each its own block; run_stop right after the third's evaluation."""
    epochs = []
    for n in (1, 2, 3):
        at = T0 + 100 + (n - 1) * 10_000
        epochs += [line("block_start", at, first_epoch_num=n, epoch_count=1), line("epoch_start", at, epoch_num=n),
                   line("epoch_stop", at + 9_900, epoch_num=n), line("block_stop", at + 9_950, first_epoch_num=n)]
    return log(line("global_batch_size", T0 - 9, 100), line("run_start", T0), line("train_samples", T0 + 50, dataset),
               *epochs, *tail)


def test_the_dataset_size_is_not_a_running_count() -> None:
    text = rnnt_like(line("run_stop", T0 + 30_000, status="success"))
    # rule 2 must not read the 1000 logged before the first epoch_start (1000 / 30 s = 33.33 would be dataset/time);
    # rule 3: 3 epochs (1..3, counted from 1) x 1000 = 3000 samples / 30.000 s = 100 samples/s
    run = read_result(text)
    assert (run.samples, run.value, run.global_batch, run.rule) == (3_000, 100.0, 100, RULE_EPOCHS)


def test_the_dataset_size_alone_is_refused() -> None:
    # the dataset size logged before training, and no epoch or block ends: no count, not dataset / time
    text = log(line("run_start", T0), line("train_samples", T0 + 5, 1_281_167),
               line("epoch_start", T0 + 10, epoch_num=1), line("run_stop", T0 + 60_000, status="success"))
    with pytest.raises(ValueError, match=r"no sample count.*no epoch_stop or block_stop"):
        read_result(text)


def test_epochs_counted_from_zero() -> None:
    text = log(line("train_samples", T0 + 1, 500), line("run_start", T0),
               line("epoch_start", T0 + 10, epoch_num=0), line("epoch_stop", T0 + 5_000, epoch_num=0),
               line("epoch_start", T0 + 5_000, epoch_num=1), line("epoch_stop", T0 + 10_000, epoch_num=1),
               line("run_stop", T0 + 10_000))
    # epoch_num 1 counted from 0: 2 epochs x 500 = 1000 samples / 10.000 s = 100 samples/s
    assert (read_result(text).samples, read_result(text).value) == (1_000, 100.0)


def test_epochs_by_blocks() -> None:
    # resnet's shape: blocks of 3, then 4 epochs, counted from 1; epoch events only in the first block
    text = log(line("run_start", T0), line("train_samples", T0, 1_281_167),
               line("block_start", T0 + 100, first_epoch_num=1, epoch_count=3),
               line("epoch_start", T0 + 100, epoch_num=1), line("epoch_stop", T0 + 3_000, epoch_num=1),
               line("block_stop", T0 + 9_000, first_epoch_num=1),
               line("block_start", T0 + 9_000, first_epoch_num=4, epoch_count=4),
               line("block_stop", T0 + 21_000, first_epoch_num=4), line("run_stop", T0 + 21_000, epoch=6))
    # the last block ends epoch 4 + 4 - 1 = 7: 7 x 1281167 = 8968169 samples / 21.000 s = 427055.7 -> 427100
    run = read_result(text)
    assert (run.samples, run.value, run.rule) == (8_968_169, 427_100.0, RULE_EPOCHS)


def test_a_fraction_of_an_epoch() -> None:
    # dlrm_dcnv2's shape: dataset size before run_start, epoch_num the epochs trained so far, epoch_stop after
    # run_stop in the same millisecond
    text = log(line("train_samples", T0, 4_000_000, epoch_num=0.0), line("run_start", T0),
               line("epoch_start", T0 + 1, epoch_num=0), line("run_stop", T0 + 200_000, epoch_num=0.75),
               line("epoch_stop", T0 + 200_000, epoch_num=0.75))
    # 0.75 x 4000000 = 3000000 samples / 200.000 s = 15000 samples/s
    assert (read_result(text).samples, read_result(text).value) == (3_000_000, 15_000.0)
    # gnn's shape: epoch_start numbered from 1, epoch_stop the (rounded) epochs trained: 1.0, then 1.3
    gnn = log(line("run_start", T0), line("train_samples", T0 + 10, 10_000),
              line("epoch_start", T0 + 20, epoch_num=1), line("epoch_stop", T0 + 10_000, epoch_num=1.0),
              line("epoch_start", T0 + 10_000, epoch_num=2), line("epoch_stop", T0 + 13_000, epoch_num=1.3),
              line("run_stop", T0 + 13_000, status="success", epoch_num=1.3))
    # 1.3 x 10000 = 13000 samples / 13.000 s = 1000 samples/s
    assert read_result(gnn).value == 1_000.0


def test_epochs_numbered_in_samples() -> None:
    # unet3d's shape: epoch numbers are epoch x samples_per_epoch (168); blocks of 20 epochs (epoch_count 3360), the
    # first numbered from epoch 1, the next from epoch 20; a block trains on while the evaluation before run_stop runs
    blocks = [line("block_start", T0 + 10, first_epoch_num=168, epoch_count=3_360),
              line("block_stop", T0 + 4_000, first_epoch_num=168, epoch_count=3_360),
              line("block_start", T0 + 4_000, first_epoch_num=3_360, epoch_count=3_360),
              line("eval_start", T0 + 4_001, 3_360, epoch_num=3_360),
              line("block_stop", T0 + 8_000, first_epoch_num=3_360, epoch_count=3_360),
              line("run_stop", T0 + 8_400, status="success", epoch=3_360),
              line("block_start", T0 + 8_400, first_epoch_num=6_720, epoch_count=3_360),
              line("block_stop", T0 + 12_000, first_epoch_num=6_720, epoch_count=3_360)]
    text = log(line("run_start", T0), line("train_samples", T0 + 1, 168), line("samples_per_epoch", T0 + 2, 168),
               *blocks)
    # two blocks end by run_stop (the third 3.6 s after it): 2 x 3360 / 168 = 40 epochs x 168 = 6720 samples
    # / 8.400 s = 800 samples/s (run_stop's epoch 3360 is the evaluated model, one block behind the training)
    run = read_result(text)
    assert (run.samples, run.value, run.rule) == (6_720, 800.0, RULE_EPOCHS)


def test_an_epoch_end_up_to_one_second_after_run_stop_counts() -> None:
    # the third epoch_stop is at T0 + 30000, its block_stop at T0 + 30050
    on_the_edge = rnnt_like(line("run_stop", T0 + 29_000))
    # the epoch_stop 1000 ms after run_stop is inside the window (the block_stop 1050 ms after is not): 3 epochs
    assert read_result(on_the_edge).samples == 3_000
    too_late = rnnt_like(line("run_stop", T0 + 28_999))
    # 1001 ms after is outside: the last end inside is block 2's, 2 epochs x 1000 = 2000 samples / 28.999 s
    # = 68.967 -> 68.97 samples/s
    assert (read_result(too_late).samples, read_result(too_late).value) == (2_000, 68.97)


@pytest.mark.parametrize(("lines", "message"), [
    # an epoch_stop whose whole epoch_num is no epoch_start's: an index or a count? refused
    ((line("train_samples", T0, 9), line("run_start", T0), line("epoch_start", T0 + 1, epoch_num=0),
      line("epoch_stop", T0 + 9, epoch_num=1.0), line("run_stop", T0 + 9)), "no epoch_start's and not a fraction"),
    # epochs counted from 2
    ((line("train_samples", T0, 9), line("run_start", T0), line("epoch_start", T0 + 1, epoch_num=2),
      line("epoch_stop", T0 + 9, epoch_num=2), line("run_stop", T0 + 9)), "not consecutive from 0 or 1"),
    # a block that does not start where the one before it ended
    ((line("train_samples", T0, 9), line("run_start", T0),
      line("block_start", T0 + 1, first_epoch_num=1, epoch_count=2), line("block_stop", T0 + 5, first_epoch_num=1),
      line("block_start", T0 + 5, first_epoch_num=4, epoch_count=2),
      line("block_stop", T0 + 9, first_epoch_num=4), line("run_stop", T0 + 9)), "follow on from each other"),
    # a block without an epoch_count
    ((line("train_samples", T0, 9), line("run_start", T0), line("block_start", T0 + 1, first_epoch_num=1),
      line("block_stop", T0 + 9, first_epoch_num=1), line("run_stop", T0 + 9)), "with an epoch_count"),
    # two dataset sizes
    ((line("train_samples", T0, 9), line("run_start", T0), line("train_samples", T0 + 1, 8),
      line("epoch_start", T0 + 2, epoch_num=1), line("epoch_stop", T0 + 9, epoch_num=1), line("run_stop", T0 + 9)),
     "disagree"),
])
def test_epochs_the_log_does_not_tell_are_refused(lines: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_result(log(*lines))


@pytest.mark.parametrize("benchmark", ["ssd", "maskrcnn"])
def test_a_count_of_batches_is_never_read_as_samples(benchmark: str) -> None:
    # NVIDIA's ssd and maskrcnn log len(data_loader), batches per rank, as train_samples: neither rule 2 nor 3
    def text(**stop: object) -> str:
        return log(line("submission_benchmark", T0 - 9, benchmark), line("run_start", T0),
                   line("train_samples", T0 + 1, 4_572), line("epoch_start", T0 + 2, epoch_num=0),
                   line("epoch_stop", T0 + 500, epoch_num=0), line("train_samples", T0 + 1_000, 4_572),
                   line("run_stop", T0 + 1_000, **stop))

    with pytest.raises(ValueError, match=f"{benchmark}'s train_samples is a count of batches"):
        read_result(text(status="success"))
    # run_stop's own samples_count still counts (rule 1): 9000 samples / 1.000 s
    assert (read_result(text(samples_count=9_000)).value, read_result(text(samples_count=9_000)).rule) == \
        (9_000.0, RULE_STOP_COUNT)


def sd_like(benchmark: str = "stable_diffusion", *batches: int) -> str:
    """stable_diffusion's shape: the dataset size before run_start, blocks of optimizer steps, run_stop's step_num."""
    return log(*(line("global_batch_size", T0 - 20, batch) for batch in (batches or (512,))),
               line("train_samples", T0 - 10, 6_513_144), line("submission_benchmark", T0 - 10, benchmark),
               line("run_start", T0), line("block_start", T0 + 2, "training_step", samples_count=0),
               line("block_stop", T0 + 45_000, "training_step", samples_count=51_200),
               line("run_stop", T0 + 2_500_000, status="success", step_num=5_000))


def test_steps_times_the_global_batch() -> None:
    # 5000 steps x 512 = 2560000 samples / 2500.000 s = 1024 samples/s
    run = read_result(sd_like())
    assert (run.samples, run.value, run.global_batch, run.rule) == (2_560_000, 1024.0, 512, RULE_STEPS)
    with pytest.raises(ValueError, match="no sample count"):  # a benchmark not known to count steps of one batch
        read_result(sd_like("gpt3"))
    with pytest.raises(ValueError, match="2 times with 2 values"):
        read_result(sd_like("stable_diffusion", 512, 1024))


# Real numbers: mlcommons/training_results_v3.1, NVIDIA/results/eos_ngc23.09_merlin_hugectr/dlrm_dcnv2/result_0.txt
# (the events the value needs, their times and values as logged; the metadata's file names left out).
REAL_DLRM = """\
:::MLLOG {"namespace": "", "time_ms": 1695517213882, "event_type": "POINT_IN_TIME", "key": "submission_benchmark", "value": "dlrm_dcnv2", "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1695517213882, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 55296, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1695517301553, "event_type": "POINT_IN_TIME", "key": "train_samples", "value": 4195197692, "metadata": {"epoch_num": 0.0}}
:::MLLOG {"namespace": "", "time_ms": 1695517301553, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1695517301554, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"epoch_num": 0}}
:::MLLOG {"namespace": "", "time_ms": 1695517534192, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "success", "epoch_num": 0.7498978502418643}}
:::MLLOG {"namespace": "", "time_ms": 1695517534192, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 0.7498978502418643}}
"""  # noqa: E501


def test_a_real_fraction_of_an_epoch() -> None:
    # 1695517534192 - 1695517301553 = 232639 ms; 4195197692 x 0.7498978502418643 = 3145969730.57 -> 3145969731
    # samples; 3145969730.57 / 232.639 s = 13522967.9 -> 13520000 samples/s
    assert read_result(REAL_DLRM) == MlperfRun(samples=3_145_969_731, seconds=232.639, value=13_520_000.0,
                                               global_batch=55_296, rule=RULE_EPOCHS)
