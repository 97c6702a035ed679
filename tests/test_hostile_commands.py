"""Hostile command lines, files and environments, each refused in one line or survived (docs/commands.md): an option
given no value, a loadgen summary built to be slow or to pass as capacity, a limit of 16 open files, a command that
replaces its split folder or writes a line break into the banner, and warnings turned into errors while drawing.

Every test here failed before its fix; each builds its hostile input for real in tmp_path.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reportgen.commands.argtree import subcommands
from reportgen.commands.cli import _parser, main
from reportgen.errors import InputError
from reportgen.ingest.serving_bench import read_serving
from tests.conftest import DATA, INPUTS, ROOT

SERVING = DATA / "serving"
LOADGEN = (SERVING / "mlperf_log_summary.txt").read_text(encoding="utf-8")
INVALID = (SERVING / "mlperf_log_summary_invalid.txt").read_text(encoding="utf-8")
VLLM = (SERVING / "vllm-summary.txt").read_text(encoding="utf-8")
REPORTGEN = [sys.executable, "-m", "reportgen"]
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): error: ")


def _run_reportgen(*arguments: str, cwd: Path, env: dict[str, str] | None = None,
                   open_files: tuple[int, int] | None = None) -> subprocess.CompletedProcess[str]:
    """reportgen in a process of its own (with at most `open_files` (soft, hard) descriptors)."""
    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, open_files)

    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([*REPORTGEN, *arguments], cwd=cwd, env=environment, capture_output=True, text=True,
                          preexec_fn=limit, timeout=300)


# ------------------------------------------------------------------------- 1. an option given no value
def _value_options() -> list[tuple[tuple[str, ...], str]]:
    """(the words naming a command, an option string) for every option of every command, nested ones (`ingest
    trace`) included, that takes a value: read from the parser, so that an option added later is covered too."""
    found = []
    for words, parser in subcommands(_parser()):
        for action in parser._actions:
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction):
                found += [(words, option) for option in action.option_strings]
    return found


OPTIONS = _value_options()
# Each way of writing an option with no value: `--name=--`, `--name=`, `--name= ` (and `-o=--` …), and a short
# option with `--` glued to it (`-o--`), which argparse reads as the value `--`: (command, option, written, value)
SPELLINGS = [(words, option, f"{option}={value}", value) for words, option in OPTIONS for value in ("--", "", " ")] \
    + [(words, option, f"{option}--", "--") for words, option in OPTIONS if not option.startswith("--")]


def test_every_command_has_its_value_options_listed() -> None:
    commands = {words for words, _ in OPTIONS}
    assert {("build",), ("measure",), ("ingest", "serving"), ("runs", "export")} <= commands
    assert (("build",), "-o") in OPTIONS and (("history",), "--rev") in OPTIONS


@pytest.mark.parametrize(("words", "option", "written", "value"), SPELLINGS,
                         ids=[f"{' '.join(w)} {written!r}" for w, _, written, _ in SPELLINGS])
def test_an_option_given_no_value_is_one_usage_line(words: tuple[str, ...], option: str, written: str, value: str,
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """3.11's argparse stored an empty list for `--`, a traceback in about eleven commands; an empty value became
    the current folder (`-o=` built into it)."""
    monkeypatch.chdir(tmp_path)  # whatever a command would make of it lands here, never in the repository
    with pytest.raises(SystemExit) as stopped:
        main([*words, written, "p.yaml"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"reportgen {' '.join(words)}: error: {_long(words, option)} needs a value " \
        f"(got {value!r})"
    assert list(tmp_path.iterdir()) == []


def _long(words: tuple[str, ...], option: str) -> str:
    """The name errors give an option: its long spelling."""
    parser = dict(subcommands(_parser()))[words]
    action = parser._option_string_actions[option]
    return next((name for name in action.option_strings if name.startswith("--")), option)


@pytest.mark.parametrize("formats", ["--", ",", " , "])
def test_a_build_of_no_format_is_refused_and_writes_nothing(formats: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`build --format=--` printed "wrote 0 files" and exited 0."""
    with pytest.raises(SystemExit) as stopped:
        main(["build", str(INPUTS / "example.yaml"), f"--format={formats}", "-o", str(tmp_path / "out")])
    assert stopped.value.code == 2 and "--format" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_checked_types_keep_what_completion_and_argparse_read_from_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert "html pdf json csv" in capsys.readouterr().out  # --format's allowed values, read from its type
    with pytest.raises(SystemExit):
        main(["ingest", "serving", "f.txt", "--nodes", "four"])
    assert "invalid int value: 'four'" in capsys.readouterr().err  # argparse's words, from the type's name


def test_the_measured_command_keeps_its_own_empty_options() -> None:
    """The command after `measure`'s options is the command's: its `--lr=` is not reportgen's to refuse."""
    arguments = _parser().parse_args(["measure", "--project", "p.yaml", "--nodes", "1", "train", "--lr=", "--"])
    assert arguments.argv == ["train", "--lr=", "--"]


# ------------------------------------------------------------------------- 2. a loadgen summary built to be slow
@pytest.mark.parametrize("blank", ["\n", " \n", "\t\n", "  \r\n"], ids=["empty", "space", "tab", "crlf"])
def test_blank_lines_inside_an_invalid_summary_read_in_linear_time(blank: str, tmp_path: Path) -> None:
    """`^\\s+(.+?satisfied)` under re.M ran through every blank line from each one: 64k of them took 18 s."""
    at = INVALID.index("  Performance constraints")
    (tmp_path / "blank.txt").write_text(INVALID[:at] + blank * 65_536 + INVALID[at:], encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "blank.txt")
    assert time.perf_counter() - started < 2.0  # linear: milliseconds; quadratic: seconds to minutes
    assert "Performance constraints satisfied: NO" in str(refused.value)


def test_a_value_followed_by_a_long_run_of_spaces_reads_in_linear_time(tmp_path: Path) -> None:
    """A lazy value before `[ \\t]*$` tried every space run once per character: 20,000 spaces took 2.7 s."""
    text = VLLM.replace("P99 TTFT (ms):                           1150.40", "P99 TTFT (ms): 1" + " " * 400_000 + "x")
    (tmp_path / "spaces.txt").write_text(text, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "spaces.txt")
    assert time.perf_counter() - started < 2.0
    problem = refused.value.problems[0]
    assert (problem.line, problem.column) == (13, 16) and "expected a number" in problem.message


# ------------------------------------------------------------------------- 3. serving files read or refused
def test_a_value_that_repeats_its_unit_is_read_whatever_the_spaces(tmp_path: Path) -> None:
    text = LOADGEN.replace("99.00 percentile latency (ns)   : 121801757289",
                           "99.00 percentile latency (ns)   :   121801757289 ns \r")
    (tmp_path / "unit.txt").write_text(text, encoding="utf-8")
    assert read_serving(tmp_path / "unit.txt").p99_s == pytest.approx(121.801757289)


def test_an_accuracy_run_pasted_below_a_performance_run_is_refused(tmp_path: Path) -> None:
    accuracy = LOADGEN.replace("Mode     : PerformanceOnly", "Mode     : AccuracyOnly")
    (tmp_path / "both.txt").write_text(LOADGEN + accuracy, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_serving(tmp_path / "both.txt")
    problem = refused.value.problems[0]
    assert problem.line == LOADGEN.count("\n") + 6 and "AccuracyOnly" in problem.message


def _service(folder: Path, load: str) -> Path:
    path = folder / f"{load.split()[-1].split('/')[0]}.yaml"
    path.write_text(f"project: {{title: S, workload: inference, goal: {{load: {load}}}}}\ndesign: {{nodes: 4}}\n"
                    "scaling: {file: runs.csv}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("bench", "load"), [
    ("vllm-result.json", "400 image/s"),  # vLLM counts requests and tokens, not images
    ("valid-then-invalid.txt", "100 sample/s"),  # two load tests in one file
    ("accuracy.txt", "100 sample/s"),  # an accuracy run measures no capacity
    ("tokens-unit.txt", "100 token/s"),  # a vLLM summary without tokens per second, for a load in tokens
])
def test_every_serving_error_is_located_at_a_line_and_column_from_1(bench: str, load: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The project's unit against the file's was said at 0:0, which no editor can jump to."""
    (tmp_path / "valid-then-invalid.txt").write_text(LOADGEN + INVALID, encoding="utf-8")
    (tmp_path / "accuracy.txt").write_text(LOADGEN.replace("PerformanceOnly", "AccuracyOnly"), encoding="utf-8")
    (tmp_path / "tokens-unit.txt").write_text(VLLM.replace("Output token throughput (tok/s):         2123.35\n", ""),
                                              encoding="utf-8")
    (tmp_path / "vllm-result.json").write_bytes((SERVING / "vllm-result.json").read_bytes())
    project = _service(tmp_path, load)
    status = main(["ingest", "serving", str(tmp_path / bench), "--nodes", "2", "--project", str(project)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    located = [LOCATED.match(line) for line in err.splitlines()]
    assert located and all(m is not None and int(m["line"]) >= 1 and int(m["column"]) >= 1 for m in located), err
    assert not (tmp_path / "runs.csv").exists()


# ------------------------------------------------------------------------- 4. the environment and measure
def _previous_report(out: Path) -> dict[Path, bytes]:
    """Outputs a previous build left, which a failed build must leave as they are."""
    folder = out / "example"
    folder.mkdir(parents=True)
    files = {folder / "report.html": b"<p>the previous report</p>", folder / "results.json": b"{\"previous\": 1}"}
    for path, data in files.items():
        path.write_bytes(data)
    return files


def test_a_limit_of_16_open_files_is_one_line_and_the_previous_report_stays(tmp_path: Path) -> None:
    """`ulimit -n 16`: a worker, or the PDF workers' fork server, ran out midway and printed its traceback."""
    previous = _previous_report(tmp_path / "out")
    done = _run_reportgen("build", str(INPUTS / "example.yaml"), "-o", str(tmp_path / "out"), cwd=tmp_path,
                          open_files=(16, 16))
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "ulimit -n" in done.stderr
    assert all(path.read_bytes() == data for path, data in previous.items())


@pytest.mark.slow  # a build in a process of its own, figures drawn
def test_a_low_soft_limit_is_raised_to_what_a_build_needs(tmp_path: Path) -> None:
    """A soft limit the hard one allows raising (`ulimit -S -n 16`) is raised: the build, figures drawn in
    workers, goes on."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    done = _run_reportgen("build", str(INPUTS / "example.yaml"), "-o", str(tmp_path / "out"), "--format", "html",
                          "--no-cache", cwd=tmp_path, open_files=(16, hard))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "example" / "report.html").exists()


def test_an_os_error_met_in_a_build_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    from reportgen.commands.batch import _build_one

    class Exhausted:
        def build(self, path: Path) -> None:
            raise OSError(errno.EMFILE, "Too many open files")

    outcome = _build_one(tmp_path / "p.yaml", Exhausted())  # type: ignore[arg-type]
    assert (outcome.status, outcome.details) == (1, "")
    assert outcome.summary == "error: Too many open files (EMFILE)"


REPLACE_SPLIT_FOLDER = ("import os, shutil; folder = os.path.dirname(os.environ['REPORTGEN_SPLIT_FILE']); "
                        "shutil.rmtree(folder); open(folder, 'w').close()")


def test_a_command_that_replaces_its_split_folder_keeps_its_run(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The folder of $REPORTGEN_SPLIT_FILE replaced by a file: cleaning it up failed, and the run was lost."""
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: M}\nscaling: {file: runs.csv, time_unit: s}\n", encoding="utf-8")
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,100\n", encoding="utf-8")
    status = main(["measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c",
                   REPLACE_SPLIT_FOLDER])
    said = capsys.readouterr()
    assert status == 0, said.err
    assert "appended to" in said.out and "Traceback" not in said.err
    rows = [line for line in (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines() if line[:2] == "2,"]
    assert len(rows) == 1 and float(rows[0].split(",")[1]) > 0  # the run at 2 nodes, with its wall time


def test_the_banner_shows_a_line_break_in_the_command_inert(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: \"M\\nforged\"}\nscaling: {file: \"r\\nx.csv\", time_unit: s}\n",
                       encoding="utf-8")
    status = main(["measure", "--project", str(project), "--nodes", "1", "--", sys.executable, "-c",
                   "pass\n# \x1b[2J"])
    said = capsys.readouterr()
    assert status == 0, said.err
    banner = said.err.splitlines()[0]
    assert banner.startswith("measuring `") and banner.endswith("(tracker location: USA)")
    assert "pass\\n# \\x1b[2J" in banner and "\x1b" not in said.err
    assert said.out.splitlines()[0].startswith("appended to ") and "r\\nx.csv" in said.out.splitlines()[0]


# ------------------------------------------------------------------------- 5. warnings turned into errors
def _emoji_and_extremes(folder: Path) -> Path:
    """The example with an emoji in every name a figure draws (the fonts matplotlib measures with lack it) and a
    breakdown whose speedup curve has a pole (a negative serial fraction): each made a warning, a traceback under
    PYTHONWARNINGS=error."""
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    for name in ("title: Data-parallel", "name: 8x H100", "name: forward+backward", "name: nightly retrain"):
        key, value = name.split(": ", 1)
        assert f"{name}" in text
        text = text.replace(name, f"{key}: \U0001F680 {value}")
    runs = text[text.index("  runs:\n"):text.index("\npricing:")]
    text = text.replace(runs, "  runs:\n    - {nodes: 1, compute: 32400, communication: 0, idle: 0, io: 600}\n"
                        "    - {nodes: 2, compute: 16300, communication: 1e25, idle: 0, io: 0}\n"
                        "    - {nodes: 4, compute: 1e-25, communication: 1e-25, idle: 1e25, io: 0}")
    path = folder / "example.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow  # a build in a process of its own, figures drawn
def test_a_build_under_warnings_as_errors_says_no_warning(tmp_path: Path) -> None:
    project = _emoji_and_extremes(tmp_path)
    done = _run_reportgen("build", str(project), "-o", str(tmp_path / "out"), "--format", "html,json", "--no-cache",
                          cwd=tmp_path, env={"PYTHONWARNINGS": "error"})
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "\U0001F680" in (tmp_path / "out" / "example" / "report.html").read_text(encoding="utf-8")
