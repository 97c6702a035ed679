"""The hostile sweep: every kind of bad file and fault reportgen has been given, by family, and what it does.

Each family lists its attempts: the ones run here (a function that makes the input and asserts the outcome), and
the ones that live in the module that owns their machinery (named by test, counted by their parameters). The
table in docs/testing.md, "Hostile inputs and faults", is generated from FAMILIES and checked by
`test_the_table_in_the_docs_is_this_sweep`: an attempt added here changes the table, and the table cannot claim
an attempt that is not run.

Every refusal is checked the same way (`refused`): exit status 2, one located line per problem, no traceback, the
reason named, and nothing written.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from tests.conftest import DATA, INPUTS, ROOT, group_members, outliving

REPORTGEN = [sys.executable, "-m", "reportgen"]
PROJECT = "project: {title: H}\nscaling: {file: runs.csv, time_unit: s}\n"
RUNS = "nodes,time [s]\n1,100\n2,60\n"
SPLIT_RUNS = "nodes,compute [s],communication [s],idle [s]\n2,4,1,1\n"
TRACE = DATA / "traces" / "sampled-128rank" / "rank-0.json.gz"
NCCL = DATA / "nccl" / "all_reduce_perf-2x8-h100.txt"
EMISSIONS = DATA / "codecarbon" / "emissions.csv"
LOCATED = re.compile(r"^(\S.*:\d+:\d+: error: |reportgen: error: )")
HAS_PROC = Path("/proc/self/stat").exists()


# --------------------------------------------------------------------------------------------------- helpers
def run(*arguments: str) -> tuple[int, str]:
    """reportgen in this process: its exit status and everything it printed."""
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        status = main(list(arguments))
    return status, said.getvalue()


def refused(outcome: tuple[int, str], *reasons: str) -> str:
    """Exit 2, every error line located (FILE:LINE:COLUMN or a usage error), no traceback, each reason named."""
    status, said = outcome
    assert status == 2, said
    assert "Traceback" not in said, said
    errors = [line for line in said.splitlines() if "error:" in line]
    assert errors and all(LOCATED.match(line) for line in errors), said
    for reason in reasons:
        assert reason in said, (reason, said)
    return said


def project(folder: Path, text: str = PROJECT, runs: str | None = RUNS) -> Path:
    path = folder / "p.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    if runs is not None:
        (folder / "runs.csv").write_text(runs)
    return path


def check_text(folder: Path, text: str, *reasons: str) -> str:
    return refused(run("check", str(project(folder, text))), *reasons)


def check_runs(folder: Path, runs: str, *reasons: str) -> str:
    return refused(run("check", str(project(folder, runs=runs))), *reasons)


def trace(folder: Path, edit: Callable[[dict[str, object]], object], name: str = "rank0.json") -> Path:
    """The public sample trace with one edit, as rank 0 of a one-rank job."""
    document = json.loads(gzip.decompress(TRACE.read_bytes()))
    document["distributedInfo"] = {"rank": 0, "world_size": 1}
    edit(document)
    path = folder / name
    path.write_text(json.dumps(document))
    return path


def first_kernel(document: dict[str, object]) -> dict[str, object]:
    events = document["traceEvents"]
    assert isinstance(events, list)
    return next(event for event in events if event.get("cat") == "kernel")


def ingest_trace(folder: Path, path: Path, *reasons: str) -> str:
    """Appending the trace's run is refused and the project's CSV is left as it was."""
    csv = folder / "runs.csv"
    project(folder, runs=SPLIT_RUNS)
    before = csv.read_bytes()
    said = refused(run("ingest", "trace", str(path), "--project", str(folder / "p.yaml"), "--nodes", "1"), *reasons)
    assert csv.read_bytes() == before
    return said


def nccl_log(folder: Path, edit: Callable[[list[str]], None]) -> Path:
    lines = NCCL.read_text().splitlines()
    edit(lines)
    path = folder / "all_reduce.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def table_row(lines: list[str], size: str) -> int:
    """The index of the nccl-tests table row of this message size (bytes)."""
    return next(i for i, line in enumerate(lines) if line.split()[:1] == [size])


def set_cell(lines: list[str], size: str, column: int, value: str) -> None:
    index = table_row(lines, size)
    cells = lines[index].split()
    cells[column] = value
    lines[index] = "  ".join(cells)


def ingest_nccl(folder: Path, path: Path, *reasons: str, options: tuple[str, ...] = ()) -> str:
    text = PROJECT.replace("scaling:", "prediction: {collectives_file: collectives.csv}\nscaling:")
    project(folder, text)
    said = refused(run("ingest", "nccl-tests", str(path), "--project", str(folder / "p.yaml"), *options), *reasons)
    assert not (folder / "collectives.csv").exists()
    return said


def emissions(folder: Path, column: str, value: str) -> Path:
    """The public CodeCarbon file with one value of its last run changed."""
    lines = EMISSIONS.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[-1].split(",")
    cells[header.index(column)] = value
    lines[-1] = ",".join(cells)
    path = folder / "emissions.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def ingest_emissions(folder: Path, path: Path, *reasons: str) -> str:
    csv = folder / "runs.csv"
    project(folder)
    before = csv.read_bytes()
    said = refused(run("ingest", "codecarbon", str(path), "--project", str(folder / "p.yaml"), "--nodes", "2"),
                   *reasons)
    assert csv.read_bytes() == before
    return said


def git_project(folder: Path) -> Path:
    """A repository with one commit of the project and its CSV."""
    project(folder)
    for arguments in (("init", "-q"), ("add", "."), ("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm",
                                                       "r1")):
        subprocess.run(["git", *arguments], cwd=folder, check=True, capture_output=True)
    return folder / "p.yaml"


def start(*arguments: str, wait_for: str) -> tuple[subprocess.Popen[bytes], str]:
    """reportgen in a session of its own, once it has printed a line holding `wait_for`; that line."""
    process = subprocess.Popen([*REPORTGEN, *arguments], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    assert wait_for in line, (line, process.stderr.read().decode() if process.stderr else "")
    return process, line


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# ------------------------------------------------------------------------------------------------ project files
def escape_sequence_in_a_value(tmp: Path) -> None:
    said = check_text(tmp, 'project: {title: H}\nhardware: {peak_compute: "20 \\e[31mTFLOP/s"}\n', "\\x1b[31m")
    assert "\x1b" not in said  # the terminal is never sent the escape itself


def escape_sequence_in_a_file_name(tmp: Path) -> None:
    said = check_text(tmp, 'project: {title: H}\nscaling: {file: "r\\e]0;owned\\auns.csv"}\n', "\\x1b]0;owned\\x07")
    assert "\x1b" not in said and "\x07" not in said


def control_character_deep_in_the_file(tmp: Path) -> None:
    text = "project: {title: H}\n" + "".join(f"# comment {n}\n" for n in range(200)) + "notes: 'a\x01b'\n"
    check_text(tmp, text, "p.yaml:202:10: error: invalid YAML: the character #x0001 is not allowed")


def lone_surrogate_in_the_title(tmp: Path) -> None:
    check_text(tmp, 'project: {title: "a\\ud800b"}\nscaling: {file: runs.csv, time_unit: s}\n', "lone surrogate")


def lone_surrogate_as_raw_bytes(tmp: Path) -> None:
    path = tmp / "p.yaml"
    path.write_bytes(b"project: {title: \"a\xed\xa0\x80b\"}\n")  # UTF-8 of U+D800, which UTF-8 forbids
    refused(run("check", str(path)), "p.yaml:1:")


def quantity_past_1e30(tmp: Path) -> None:
    check_text(tmp, 'project: {title: H}\nhardware: {peak_compute: "1e308 TFLOP/s"}\n', "out of range")


def quantity_below_1e_30(tmp: Path) -> None:
    check_text(tmp, 'project: {title: H}\nhardware: {peak_compute: "1e-320 TFLOP/s"}\n', "out of range")


def unit_exponent_that_overflows(tmp: Path) -> None:
    check_text(tmp, 'project: {title: H}\nhardware: {peak_compute: "5.1 Ys**99/s**98"}\n', "peak_compute")
    check_text(tmp, 'project: {title: H}\nhardware: {peak_compute: "1 TFLOP/s**400"}\n', "peak_compute")


def large_file_without_aliases(tmp: Path) -> None:
    values = ", ".join(str(n) for n in range(120_000))
    said = check_text(tmp, f"project: {{title: H}}\nnotes: [{values}]\n", "holds more than 100,000 values")
    assert "alias" not in said.split("error:", 1)[1].split("values")[0]  # the reason is the size, not aliases


def error_on_line_300(tmp: Path) -> None:
    text = "project: {title: H}\n" + "".join(f"# {n}\n" for n in range(298)) + "hardware: {peak_compute: 20 GB}\n"
    check_text(tmp, text, "p.yaml:300:")


# -------------------------------------------------------------------------------------------- measurement CSVs
def run_of_1e308_seconds(tmp: Path) -> None:
    check_runs(tmp, "nodes,time [s]\n1,1e308\n2,60\n", "runs.csv:2:3:", "out of range")


def run_of_1e_320_seconds(tmp: Path) -> None:
    check_runs(tmp, "nodes,time [s]\n1,100\n2,1e-320\n", "runs.csv:3:3:", "out of range")


def negative_nan_and_infinite_times(tmp: Path) -> None:
    said = check_runs(tmp, "nodes,time [s]\n1,-5\n2,nan\n4,inf\n", "runs.csv:2:3:", "runs.csv:3:3:", "runs.csv:4:3:")
    assert said.count("error:") == 3  # every problem of the file at once


def formula_in_a_cell(tmp: Path) -> None:
    check_runs(tmp, 'nodes,time [s]\n1,"=HYPERLINK(""http://x"")"\n', "runs.csv:2:3:")


def csv_of_16_mib(tmp: Path) -> None:
    started = time.monotonic()
    rows = (16 * 2**20 - 100) // 6  # 6 bytes a row: just under the 16 MiB a CSV may hold
    check_runs(tmp, "nodes,time [s]\n" + "1,100\n" * rows, "250,000")
    assert time.monotonic() - started < 10


def nul_byte_in_a_csv(tmp: Path) -> None:
    check_runs(tmp, "nodes,time [s]\n1,10\x00\n", "runs.csv:2:")


# -------------------------------------------------------------------------------------------- profiler traces
def negative_duration(tmp: Path) -> None:
    path = trace(tmp, lambda d: first_kernel(d).update(dur=-1e12))
    ingest_trace(tmp, path, "rank0.json:1:1:", ".dur")


def infinite_timestamp(tmp: Path) -> None:
    path = trace(tmp, lambda d: first_kernel(d).update(ts=-1e300))
    ingest_trace(tmp, path, "rank0.json:1:1:", ".ts")


def duration_past_1e18_us(tmp: Path) -> None:
    path = trace(tmp, lambda d: first_kernel(d).update(dur=1e300))
    ingest_trace(tmp, path, ".dur")


def nan_in_a_trace(tmp: Path) -> None:
    path = trace(tmp, lambda d: first_kernel(d).update(dur=math.nan))  # json.dumps writes NaN, which JSON is not
    ingest_trace(tmp, path, "rank0.json:1:", "not JSON")


def rank_minus_one(tmp: Path) -> None:
    path = trace(tmp, lambda d: d.update(distributedInfo={"rank": -1, "world_size": 2}))
    refused(run("ingest", "trace", str(path)), "outside its world")


def rank_five_of_two(tmp: Path) -> None:
    path = trace(tmp, lambda d: d.update(distributedInfo={"rank": 5, "world_size": 2}))
    refused(run("ingest", "trace", str(path)), "outside its world")


def byte_that_is_not_utf8(tmp: Path) -> None:
    path = trace(tmp, lambda d: first_kernel(d).update(name="caf\u00e9"))
    path.write_bytes(path.read_bytes().replace(b"caf\\u00e9", b"caf\xe9"))  # json.dumps wrote it as an escape
    refused(run("ingest", "trace", str(path)), "rank0.json:1:", "UTF-8")


def truncated_gzip(tmp: Path) -> None:
    path = tmp / "rank0.json.gz"
    path.write_bytes(TRACE.read_bytes()[:5000])
    refused(run("ingest", "trace", str(path)), "rank0.json.gz:")


def text_that_is_not_a_trace(tmp: Path) -> None:
    path = tmp / "rank0.json"
    path.write_text('{"traceEvents": "no"}')
    refused(run("ingest", "trace", str(path)), "not a profiler trace")


# --------------------------------------------------------------------------------------------- nccl-tests logs
def wrong_results(tmp: Path) -> None:
    ingest_nccl(tmp, nccl_log(tmp, lambda lines: set_cell(lines, "1048576", 8, "3")), "all_reduce.txt:", "#wrong")


def nan_time(tmp: Path) -> None:
    ingest_nccl(tmp, nccl_log(tmp, lambda lines: set_cell(lines, "1048576", 5, "nan")), "all_reduce.txt:")


def negative_time(tmp: Path) -> None:
    ingest_nccl(tmp, nccl_log(tmp, lambda lines: set_cell(lines, "1048576", 5, "-12.5")), "all_reduce.txt:")


def malformed_row(tmp: Path) -> None:
    def cut(lines: list[str]) -> None:
        index = table_row(lines, "1048576")
        lines[index] = " ".join(lines[index].split()[:4])

    ingest_nccl(tmp, nccl_log(tmp, cut), "all_reduce.txt:")


def nodes_that_contradict_the_header(tmp: Path) -> None:
    ingest_nccl(tmp, NCCL, "--nodes", options=("--nodes", "4"))


def log_without_a_table(tmp: Path) -> None:
    path = tmp / "all_reduce.txt"
    path.write_text("# nccl-tests: nothing ran\n")
    ingest_nccl(tmp, path, "all_reduce.txt:", options=("--nodes", "2"))


# ----------------------------------------------------------------------------------------------- CodeCarbon CSVs
def negative_energy(tmp: Path) -> None:
    ingest_emissions(tmp, emissions(tmp, "energy_consumed", "-0.5"), "emissions.csv:", "energy_consumed")


def nan_energy(tmp: Path) -> None:
    ingest_emissions(tmp, emissions(tmp, "energy_consumed", "nan"), "emissions.csv:", "energy_consumed")


def infinite_emissions(tmp: Path) -> None:
    ingest_emissions(tmp, emissions(tmp, "emissions", "inf"), "emissions.csv:", "emissions")


def missing_column(tmp: Path) -> None:
    path = tmp / "emissions.csv"
    path.write_text("timestamp,run_id\n2024-01-01,abc\n")
    ingest_emissions(tmp, path, "emissions.csv:")


# ------------------------------------------------------------------------------------------------ git revisions
def revision_that_is_an_option(tmp: Path) -> None:
    path = git_project(tmp)
    target = tmp / "written-by-git"
    outcome = run("diff", "-o", str(tmp / "out"), "--", f"--output={target}:p.yaml", str(path))
    refused(outcome, "not a revision")
    assert not target.exists()


def revision_without_a_path(tmp: Path) -> None:
    path = git_project(tmp)
    with contextlib.chdir(tmp):
        refused(run("diff", "-o", str(tmp / "out"), "HEAD:", str(path)), "HEAD:")


def revision_that_does_not_exist(tmp: Path) -> None:
    path = git_project(tmp)
    with contextlib.chdir(tmp):
        refused(run("diff", "-o", str(tmp / "out"), "no-such-branch:p.yaml", str(path)), "no-such-branch")


# ------------------------------------------------------------------------------------------------------ outputs
def formula_cells_in_csv_output(tmp: Path) -> None:
    text = (INPUTS / "example.yaml").read_text().replace("name: nightly retrain", 'name: "=HYPERLINK(\\"x\\")"')
    path = tmp / "example.yaml"
    path.write_text(text)
    assert run("build", str(path), "-o", str(tmp / "out"), "--format", "csv")[0] == 0
    decisions = (tmp / "out" / "example" / "decisions.csv").read_text()
    assert "'=HYPERLINK(" in decisions and '"=HYPERLINK' not in decisions


def source_date_epoch_past_9999(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "99999999999999")
    refused(run("build", str(project(tmp)), "-o", str(tmp / "out"), "--format", "html"), "SOURCE_DATE_EPOCH")
    assert not (tmp / "out" / "p").exists()


def watch_of_a_missing_file(tmp: Path) -> None:
    refused(run("watch", str(tmp / "typo.yaml"), "-o", str(tmp / "out")), "no such file to watch")


# ------------------------------------------------------------------------------------------------- processes
def sighup_to_measure(tmp: Path) -> None:
    path = project(tmp)
    before = (tmp / "runs.csv").read_bytes()
    command = "import time; print('running', flush=True); time.sleep(600)"
    process, _ = start("measure", "--project", str(path), "--nodes", "4", "--", sys.executable, "-c", command,
                       wait_for="running")
    process.send_signal(signal.SIGHUP)  # the terminal closed: to reportgen alone
    _, errors = process.communicate(timeout=15)
    assert process.returncode == 129 and "stopped by SIGHUP" in errors.decode(), errors
    assert (tmp / "runs.csv").read_bytes() == before and not outliving(process.pid, wait=2)


def grandchild_that_ignores_sigterm(tmp: Path) -> None:
    path = project(tmp)
    child = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    command = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', {child!r}]); "
               "time.sleep(0.3); print('running', p.pid, flush=True); time.sleep(600)")
    process, line = start("measure", "--project", str(path), "--nodes", "4", "--", sys.executable, "-c", command,
                          wait_for="running")
    grandchild = int(line.split()[1])
    assert alive(grandchild)
    process.send_signal(signal.SIGTERM)  # to reportgen alone, as a supervisor sends it
    _, errors = process.communicate(timeout=15)
    assert process.returncode == 143, errors
    if alive(grandchild):  # the command's own child, in the command's process group: killed with it
        os.kill(grandchild, signal.SIGKILL)
        raise AssertionError("the command's child outlived measure")


def reader_that_closes_the_pipe(tmp: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `reportgen schema | head -c0`: the reader is gone before the first write
    result = subprocess.run([*REPORTGEN, "schema"], cwd=ROOT, stdout=write_end, stderr=subprocess.PIPE, text=True,
                            timeout=60, check=False)
    os.close(write_end)
    assert result.returncode == 141 and result.stderr == "", result.stderr


def workers_gone_when_an_interrupted_build_exits(tmp: Path) -> None:
    """A `-j 2` batch: its two builders (each draws its figures and lays its PDF out itself) and anything they
    started are all gone when the batch process exits, not a moment later."""
    projects = []
    for name in ("one", "two", "three"):
        projects.append(tmp / f"{name}.yaml")
        projects[-1].write_text((INPUTS / "example.yaml").read_text())
    command = [*REPORTGEN, "build", *map(str, projects), "-j", "2", "-o", str(tmp / "out"), "--no-cache"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 30
    while len(group_members(process.pid)) < 3 and process.poll() is None:  # the batch and its two builders
        assert time.monotonic() < deadline, "the build never started its workers"
        time.sleep(0.01)
    time.sleep(0.3)  # into their work
    assert process.poll() is None, "the batch ended before it was interrupted: this attempt tested nothing"
    process.send_signal(signal.SIGTERM)  # to the build alone
    assert process.wait(timeout=15) == 143
    assert not outliving(process.pid, wait=0), "a worker outlived its build"  # at once: not a second later


# ------------------------------------------------------------------------------------------------- the registry
Attempt = Callable[..., None]


@dataclass(frozen=True)
class Family:
    name: str
    happens: str  # what reportgen does with every attempt of the family, as the docs table says it
    attempts: tuple[Attempt, ...]  # run here
    elsewhere: tuple[str, ...] = ()  # "tests/module.py::test_name", counted by their parameters


FAMILIES = (
    Family("Project files", "refused by `check` and `build` alike, one located line per problem, exit 2; text "
           "quoted from the file has its control characters escaped",
           (escape_sequence_in_a_value, escape_sequence_in_a_file_name, control_character_deep_in_the_file,
            lone_surrogate_in_the_title, lone_surrogate_as_raw_bytes, quantity_past_1e30, quantity_below_1e_30,
            unit_exponent_that_overflows, large_file_without_aliases, error_on_line_300),
           ("tests/test_security.py::test_bombs_are_refused_fast",
            "tests/test_security.py::test_oversized_files_are_refused_without_reading_them_whole",
            "tests/test_fuzz.py::test_mutated_projects_load_or_fail_with_located_errors",
            "tests/test_hostile_sweep_two.py::test_block_nesting_too_deep_is_located_where_it_passes_the_limit")),
    Family("Measurement CSVs", "every bad cell located at its row and column, all at once, exit 2; past 250,000 "
           "values refused before parsing",
           (run_of_1e308_seconds, run_of_1e_320_seconds, negative_nan_and_infinite_times, formula_in_a_cell,
            csv_of_16_mib, nul_byte_in_a_csv),
           ("tests/test_security.py::test_scaling_file_cannot_leave_the_project_folder",)),
    Family("Profiler traces", "refused at the event or byte that is wrong, before anything is written; "
           "decompression bounded (8 GiB, 100× past 64 MiB)",
           (negative_duration, infinite_timestamp, duration_past_1e18_us, nan_in_a_trace, rank_minus_one,
            rank_five_of_two, byte_that_is_not_utf8, truncated_gzip, text_that_is_not_a_trace),
           ("tests/test_trace_shapes.py::test_a_gzip_bomb_of_a_gigabyte_is_refused_fast_and_small",
            "tests/test_trace_shapes.py::test_an_event_that_never_ends_is_refused")),
    Family("nccl-tests logs", "refused at the row that is wrong, nothing appended",
           (wrong_results, nan_time, negative_time, malformed_row, nodes_that_contradict_the_header,
            log_without_a_table),
           ("tests/test_nccl.py::test_a_malformed_row_is_refused_where_it_stands",)),
    Family("CodeCarbon CSVs", "refused at the value that is wrong, the project's CSV unchanged",
           (negative_energy, nan_energy, infinite_emissions, missing_column),
           ("tests/test_ingest_codecarbon.py::test_a_value_that_is_not_a_measurement_is_refused_before_anything_is"
            "_written",)),
    Family("Provenance and pasted text (second sweep)", "text from outside (a run id, a file name, a title) is "
           "written escaped: a line break never ends a provenance comment, Markdown and HTML in diff.md stay text",
           (), ("tests/test_hostile_sweep_two.py::test_a_line_break_in_a_run_id_never_forges_a_row",
                "tests/test_hostile_sweep_two.py::test_a_line_break_in_a_trace_file_name_never_forges_a_row",
                "tests/test_hostile_sweep_two.py::test_diff_md_quotes_project_text_as_text_never_as_markup",
                "tests/test_hostile_sweep_two.py::test_bidi_and_zero_width_characters_never_reach_the_terminal",
                "tests/test_hostile_sweep_two.py::test_a_currency_code_is_three_ascii_capitals")),
    Family("Counts and sizes (second sweep)", "bounded before anything is allocated, with located errors (2^24 "
           "ranks, 2^20 nodes, 64 contexts, non-zero unit exponents); per-item rows aggregate past a few hundred",
           (), ("tests/test_traces.py::test_a_claimed_world_is_counted_never_enumerated",
                "tests/test_traces.py::test_a_sampled_world_at_the_limit_is_counted",
                "tests/test_decide.py::test_trade_offs_grow_with_the_points_not_the_pairs_of_contexts",
                "tests/test_decide.py::test_more_than_64_contexts_are_refused_where_the_list_starts",
                "tests/test_hostile_sweep_two.py::test_profiler_steps_within_one_microsecond_are_refused_not_divided_by",
                "tests/test_hostile_sweep_two.py::test_an_id_past_64_bits_is_refused_where_it_stands",
                "tests/test_hostile_sweep_two.py::test_a_trace_key_nested_in_another_object_is_not_the_trace",
                "tests/test_hostile_sweep_two.py::test_collectives_read_from_their_csv_are_never_marked_default",
                "tests/test_hostile_sweep_two.py::test_a_unit_to_the_power_zero_is_refused_where_it_stands",
                "tests/test_hostile_sweep_two.py::test_a_node_count_past_any_cluster_is_refused_by_check_not_by_the_figures",
                "tests/test_hostile_sweep_two.py::test_the_timeline_of_200000_workers_draws_groups_at_their_slowest",
                "tests/test_hostile_sweep_two.py::test_a_long_list_is_shown_by_its_head_and_spread_and_collectives_past_200_are_counted")),
    Family("Identity of a scale (second sweep)", "CSV writers find a node count by the nodes column's name and its "
           "value as the loader reads it (2.0, 02, +2, 2e0); an nccl-tests log of two tables or a row per data type is "
           "refused, not merged", (),
           ("tests/test_hostile_sweep_two.py::test_a_writer_finds_a_scale_by_the_nodes_column_and_its_value",
            "tests/test_hostile_sweep_two.py::test_codecarbon_energy_goes_to_the_run_at_its_node_count_whatever_the_column_order",
            "tests/test_hostile_sweep_two.py::test_an_nccl_log_of_several_tables_or_types_is_refused_not_merged",
            "tests/test_hostile_sweep_two.py::test_codecarbon_cells_and_machines_are_read_strictly")),
    Family("User environment and measure (second sweep)", "the user's matplotlibrc and a long $TMPDIR change "
           "nothing; measure prints what it measured before refusing a split file; a move that fails midway is undone; "
           "a CSV is opened once and must still be inside the project's folder",
           (),
           ("tests/test_hostile_sweep_two.py::test_the_users_matplotlibrc_never_reaches_the_figures",
            "tests/test_hostile_sweep_two.py::test_a_long_tmpdir_still_makes_the_pdf",
            "tests/test_hostile_sweep_two.py::test_an_unusable_split_file_still_prints_the_measured_time_and_energy",
            "tests/test_hostile_sweep_two.py::test_a_move_that_fails_midway_leaves_every_output_as_it_was",
            "tests/test_hostile_sweep_two.py::test_a_link_swapped_in_after_the_check_never_reads_outside_the_project",
            "tests/test_hostile_sweep_two.py::test_a_full_or_closed_standard_output_is_one_line_and_exit_1",
            "tests/test_hostile_sweep_two.py::test_a_watch_interval_that_is_not_a_pause_is_a_usage_error",
            "tests/test_hostile_sweep_two.py::test_a_command_killed_by_a_signal_exits_as_a_shell_would",
            "tests/test_hostile_sweep_two.py::test_odd_paths_are_one_line_never_a_traceback",
            "tests/test_hostile_sweep_two.py::test_watch_notices_a_csv_created_after_it_started")),
    Family("Git revisions", "a revision is never read as an option; a bad one is a usage error; a blob's size "
           "checked before it is read",
           (revision_that_is_an_option, revision_without_a_path, revision_that_does_not_exist),
           ("tests/test_revisions.py::test_a_blob_past_the_limit_is_refused_before_it_is_read",
            "tests/test_hostile_sweep_two.py::test_a_revision_spec_without_a_revision_says_so")),
    Family("Special files", "refused at once, never opened (a pipe with no writer would wait forever)", (),
           ("tests/test_hostile.py::test_check_refuses_every_kind_of_special_file",
            "tests/test_hostile.py::test_every_reading_command_refuses_a_named_pipe_at_once")),
    Family("Outputs and environment", "formula cells neutralised; a bad environment or output path is one line "
           "(exit 1 or 2) with the previous outputs intact",
           (formula_cells_in_csv_output, source_date_epoch_past_9999, watch_of_a_missing_file),
           ("tests/test_hostile.py::test_an_output_folder_that_is_a_file_is_a_usage_error",
            "tests/test_hostile.py::test_an_output_file_that_is_a_folder_or_through_a_file_is_a_usage_error",
            "tests/test_hostile.py::test_a_folder_without_write_permission_is_one_line_and_exit_1",
            "tests/test_hostile.py::test_a_write_that_fails_for_lack_of_room_keeps_the_previous_outputs",
            "tests/test_hostile.py::test_a_full_disk_keeps_the_previous_outputs")),
    Family("Signals and pipes", "stopped within a second with 143 (SIGTERM), 129 (SIGHUP) or 130 (Ctrl-C), "
           "nothing half-written, no process left; a closed pipe is a quiet 141",
           (sighup_to_measure, grandchild_that_ignores_sigterm, reader_that_closes_the_pipe,
            workers_gone_when_an_interrupted_build_exits),
           ("tests/test_hostile.py::test_one_sigterm_stops_a_check_reading_a_standard_input_that_never_ends",
            "tests/test_hostile.py::test_one_sigterm_stops_measure_and_the_command_under_it",
            "tests/test_hostile.py::test_one_sigterm_stops_watch_and_its_workers",
            "tests/test_hostile.py::test_one_sigterm_stops_a_batch_and_its_workers",
            "tests/test_hostile.py::test_one_sigterm_stops_a_build_whose_renderer_hangs",
            "tests/test_nothing_lost.py::test_an_interrupt_at_any_stage_keeps_the_previous_outputs",
            "tests/test_nothing_lost.py::test_a_killed_build_process_never_leaves_a_partial_report",
            "tests/test_nothing_lost.py::test_workers_do_not_outlive_a_killed_build")),
    Family("Concurrent writers", "a lock around every read-modify-write of a CSV: no row lost; builds into one "
           "folder never remove each other's temporaries", (),
           ("tests/test_concurrency.py::test_concurrent_writers_lose_no_row",
            "tests/test_concurrency.py::test_four_builds_into_one_folder_all_succeed",
            "tests/test_concurrency.py::test_a_temporary_of_a_live_writer_is_kept_and_a_dead_ones_removed")),
    Family("Generated ingest files (hypothesis)", "traces, nccl-tests logs and emissions.csv in the tools' shapes, "
           "then damaged: each read into values the project's loader accepts, or refused with located problems", (),
           ("tests/test_fuzz_ingest.py::test_a_trace_is_read_into_numbers_a_project_holds_or_refused_where_it_is_wrong",
            "tests/test_fuzz_ingest.py::test_an_nccl_tests_log_is_read_into_collectives_a_project_holds_or_refused_"
            "where_it_is_wrong",
            "tests/test_fuzz_ingest.py::test_an_emissions_csv_is_read_into_energy_a_project_holds_or_refused_where_it"
            "_is_wrong",
            "tests/test_hostile_sweep_two.py::test_any_text_in_a_provenance_line_stays_one_inert_line",
            "tests/test_hostile_sweep_two.py::test_a_node_count_is_found_however_it_is_spelled",
            "tests/test_hostile_sweep_two.py::test_any_unit_exponent_is_read_or_refused_never_raised",
            "tests/test_hostile_sweep_two.py::test_any_claimed_world_size_is_counted_or_refused")),
)
PROCESS_ATTEMPTS = {sighup_to_measure, grandchild_that_ignores_sigterm, workers_gone_when_an_interrupted_build_exits}
LARGE_ATTEMPTS = {large_file_without_aliases}  # reads 120,000 values: 4 s, the slowest test of the fast tier


def _all_attempts() -> list[object]:
    """Every attempt as a test case; those that start processes and signal them, or read large files, are slow."""
    return [pytest.param(family.name, attempt, id=attempt.__name__,
                         marks=[pytest.mark.slow] if attempt in PROCESS_ATTEMPTS | LARGE_ATTEMPTS else [])
            for family in FAMILIES for attempt in family.attempts]


@pytest.mark.parametrize(("family", "attempt"), _all_attempts())
def test_attempt(family: str, attempt: Attempt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if attempt in PROCESS_ATTEMPTS and not HAS_PROC:
        pytest.skip("reads /proc")
    if "monkeypatch" in attempt.__code__.co_varnames[:attempt.__code__.co_argcount]:
        attempt(tmp_path, monkeypatch)
    else:
        attempt(tmp_path)


def _test_function(reference: str) -> Callable[..., object]:
    path, name = reference.split("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    function = getattr(module, name, None)
    assert callable(function), f"{reference}: no such test"
    return function  # type: ignore[no-any-return]


def _cases(reference: str) -> int:
    """How many cases pytest runs of a test: the product of its parametrize lists' lengths, times the examples
    hypothesis generates for a property."""
    function = _test_function(reference)
    settings = getattr(function, "_hypothesis_internal_use_settings", None)
    count = settings.max_examples if settings is not None and hasattr(function, "hypothesis") else 1
    for mark in getattr(function, "pytestmark", []):
        if mark.name == "parametrize":
            count *= len(mark.args[1])
    return count


def table() -> str:
    """The docs table: each family, how many attempts it makes, and what happens to them."""
    lines = ["| Family | Attempts | What happens |", "|---|---:|---|"]
    for family in FAMILIES:
        count = len(family.attempts) + sum(_cases(reference) for reference in family.elsewhere)
        lines.append(f"| {family.name} | {count} | {family.happens} |")
    total = sum(len(f.attempts) + sum(_cases(r) for r in f.elsewhere) for f in FAMILIES)
    lines.append(f"| **All** | **{total}** | |")
    return "\n".join(lines)


def test_every_test_named_elsewhere_exists() -> None:
    for family in FAMILIES:
        for reference in family.elsewhere:
            assert reference.startswith("tests/test_") and _cases(reference) >= 1, reference


@pytest.mark.slow  # it counts every example hypothesis tries, which the fast tier cuts to a tenth
def test_the_table_in_the_docs_is_this_sweep() -> None:
    docs = (ROOT / "docs" / "testing.md").read_text()
    start, end = "<!-- hostile-sweep: begin -->", "<!-- hostile-sweep: end -->"
    assert start in docs and end in docs, "docs/testing.md lacks the hostile sweep's table"
    shown = docs.split(start, 1)[1].split(end, 1)[0].strip()
    assert shown == table(), "regenerate it: python -c 'from tests.test_hostile_sweep import table; print(table())'"
