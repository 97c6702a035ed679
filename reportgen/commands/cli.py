"""The command line: the only module that parses arguments, prints to the terminal or exits."""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reportgen import interrupts
from reportgen.commands import console
from reportgen.commands.argtree import Subcommands, children, subcommands
from reportgen.commands.option_values import Parser
from reportgen.errors import ExitCode, InputError, OutputError, RenderError, ReportgenError, UsageError, printable
from reportgen.files import here
from reportgen.formats import (
    DEFAULT_FORMATS,
    DIFF_FORMATS,
    FORMATS,
    HISTORY_FORMATS,
    PAPERS,
    SERVING_FILE_FORMATS,
    SERVING_PRINTED,
)
from reportgen.project.stdio import STDIN, output_name, shown_name, stdin_bytes
from reportgen.stack import with_room
from reportgen.version import __version__

DESCRIPTION = """\
Turn the evidence behind a distributed-AI system design (a YAML project file) into a report: diagnosis,
predicted speedup, measured scaling and knee attribution, marginal cost, energy and carbon."""

EPILOG = """\
exit status: 0 success, 1 failure (not the input's fault), 2 input or usage error,
129 stopped by SIGHUP, 130 interrupted (Ctrl-C), 141 its reader closed the pipe,
143 stopped by SIGTERM.
Examples:
  reportgen check inputs/example.yaml
  reportgen build inputs/example.yaml -o build --format html,json
  reportgen build inputs/*.yaml -j 2
  reportgen diff HEAD~1:inputs/example.yaml inputs/example.yaml --exit-code
  reportgen watch inputs/example.yaml
  reportgen measure --project p.yaml --nodes 8 -- ./train.sh
  reportgen ingest trace traces/ --project p.yaml --gpus-per-node 8 --steps-per-run 1000
  reportgen ingest nccl-tests all_reduce.txt --project p.yaml
  reportgen ingest codecarbon emissions.csv --nodes 8 --project p.yaml
  reportgen ingest serving vllm-result.json --nodes 4 --project p.yaml
  reportgen schema > schema.json
  reportgen init my-project.yaml"""


@dataclass(frozen=True)
class FormatList:
    """An option's comma-separated list of formats; `allowed` is also what shell completion offers."""

    allowed: tuple[str, ...]

    def __call__(self, text: str) -> tuple[str, ...]:
        chosen = tuple(part.strip() for part in text.split(",") if part.strip())
        unknown = [part for part in chosen if part not in self.allowed]
        if unknown or not chosen:
            raise argparse.ArgumentTypeError(f"formats are {', '.join(self.allowed)} (comma-separated), got {text!r}")
        return chosen


_formats = FormatList(FORMATS)
_diff_formats = FormatList(DIFF_FORMATS)
_history_formats = FormatList(HISTORY_FORMATS)


def _parser() -> argparse.ArgumentParser:
    # every option's value is checked as it is parsed: empty or `--` is a usage error naming the option
    parser = Parser(prog="reportgen", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"reportgen {__version__}")
    # -q and -v before the command too (`reportgen -q build …`); their own names, since a subcommand's defaults
    # would overwrite the same names set here
    _quiet_or_verbose(parser, suffix="_all")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in COMMANDS:
        entry.parser(commands)
    for _, command in subcommands(parser):
        _quiet_or_verbose(command)
    return parser


def _quiet_or_verbose(parser: argparse.ArgumentParser, *, suffix: str = "") -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest=f"quiet{suffix}", action="store_true",
                       help="print only errors and the data asked for")
    group.add_argument("-v", "--verbose", dest=f"verbose{suffix}", action="store_true",
                       help="also print each build's stage timings")


def _check_parser(commands: Subcommands) -> None:
    check = commands.add_parser("check", help="validate project files; print one ok line per file or every error",
                                description="Validate project files without building anything.")
    check.add_argument("files", nargs="+", metavar="FILE", type=Path, help="project files (YAML; `-`: standard input)")


def _build_parser(commands: Subcommands) -> None:
    build = commands.add_parser("build", help="build the report (HTML, PDF, results.json) of project files",
                                description="Build OUT/<file stem>/report.html, report.pdf and results.json. "
                                "A failed build leaves the previous outputs untouched.")
    build.add_argument("files", nargs="+", metavar="FILE", type=Path,
                       help="project files (YAML; `-`: standard input, built into OUT/stdin)")
    build.add_argument("-o", "--output", type=Path, default=Path("build"), metavar="OUT",
                       help="output folder (default: build)")
    build.add_argument("--format", type=_formats, default=DEFAULT_FORMATS, metavar="LIST",
                       help="comma-separated formats among html, pdf, json, csv (default: html,pdf,json); csv "
                            "writes each table of the report as a CSV file")
    build.add_argument("--paper", choices=PAPERS, default=PAPERS[0], help="PDF paper size (default: a4)")
    build.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                       help="build N projects at a time in worker processes (default: 1)")
    build.add_argument("--no-cache", action="store_true",
                       help="draw every figure anew instead of reusing OUT/.cache (the cache is keyed by a hash of "
                       "exactly what each figure is drawn from)")
    build.add_argument("--history", type=Path, default=None, metavar="FILE",
                       help="a history.json written by `reportgen history`: its graded predictions are pooled with "
                       "the published curves that calibrate each prediction (instead of the project's "
                       "calibration.ledger)")


def _watch_parser(commands: Subcommands) -> None:
    watch = commands.add_parser("watch", help="rebuild a project on every save and print what changed",
                                description="Build FILE, then rebuild it whenever it (or the CSV it names) is "
                                "saved, in a warm process that redraws only the figures whose inputs changed. "
                                "HTML and JSON are written first, then the PDF. Stop with Ctrl-C.")
    watch.add_argument("file", type=Path, metavar="FILE", help="the project file")
    watch.add_argument("-o", "--output", type=Path, default=Path("build"), metavar="OUT",
                       help="output folder (default: build)")
    watch.add_argument("--format", type=_formats, default=DEFAULT_FORMATS, metavar="LIST",
                       help="comma-separated formats among html, pdf, json, csv (default: html,pdf,json)")
    watch.add_argument("--paper", choices=PAPERS, default=PAPERS[0], help="PDF paper size (default: a4)")
    watch.add_argument("--interval", type=_interval, default=0.25, metavar="SECONDS",
                       help="how often to look for a save, 0.01 to 3600 (default: 0.25)")
    watch.add_argument("--max-builds", type=_build_count, default=None, metavar="N",
                       help="stop after N builds (for scripts and tests; default: until Ctrl-C)")


def _schema_parser(commands: Subcommands) -> None:
    schema = commands.add_parser("schema", help="print the JSON Schema (draft-07) of the project file",
                                 description="Print the JSON Schema of the project file. Editors that use "
                                 "yaml-language-server pick it up from a `# yaml-language-server: $schema=PATH` "
                                 "line at the top of a project file.")
    schema.add_argument("-o", "--output", type=Path, metavar="FILE",
                        help="write to FILE instead of standard output (`-`: standard output)")
    schema.add_argument("--results", action="store_true",
                        help="the schema of results.json instead of the project file's")


def _diff_parser(commands: Subcommands) -> None:
    diff = commands.add_parser("diff", help="compare two revisions of a project: inputs, design, results, findings",
                               description="Compare two project files, each a path or REV:PATH read from git "
                               "(reportgen diff HEAD~1:inputs/example.yaml inputs/example.yaml). Writes "
                               "OUT/diff-<old>-vs-<new>/diff.html, diff.pdf, diff.json and diff.md.")
    diff.add_argument("old", metavar="OLD", help="the old revision: a project file or REV:PATH")
    diff.add_argument("new", metavar="NEW", help="the new revision: a project file or REV:PATH")
    diff.add_argument("-o", "--output", type=Path, default=Path("build"), metavar="OUT",
                      help="output folder (default: build)")
    diff.add_argument("--format", type=_diff_formats, default=DIFF_FORMATS, metavar="LIST",
                      help="comma-separated formats among html, pdf, json, md (default: all four)")
    diff.add_argument("--paper", choices=PAPERS, default=PAPERS[0], help="PDF paper size (default: a4)")
    diff.add_argument("--exit-code", action="store_true",
                      help="exit 1 when a key result got worse, 0 otherwise (as git diff --exit-code)")


def _history_parser(commands: Subcommands) -> None:
    history = commands.add_parser(
        "history", help="every git revision of a project: its verdict over time, and each prediction graded",
        description="Walk the first-parent git history of PROJECT and the files it names, analyse each revision "
        "(cached by the content hash of its inputs under OUT/.cache/history, so a second call analyses only new "
        "revisions) and write OUT/history-<name>/history.html, history.json and history.md: page 1's verdict "
        "revision by revision, the measured speedups, the model's drift, and the prediction ledger, which grades "
        "each revision's predictions for unmeasured scales once a later revision measures them with the same "
        "design. A revision that cannot be built is listed with its error.")
    history.add_argument("project", type=Path, metavar="PROJECT", help="the project file, in a git working tree")
    history.add_argument("--rev", metavar="A..B", help="the revisions to walk (default: all up to HEAD)")
    history.add_argument("--last", type=int, default=100, metavar="N",
                         help="at most the newest N revisions (default: 100); the history says when "
                         "there are more")
    history.add_argument("-o", "--output", type=Path, default=Path("build"), metavar="OUT",
                         help="output folder (default: build)")
    history.add_argument("--format", type=_history_formats, default=HISTORY_FORMATS, metavar="LIST",
                         help="comma-separated formats among html, json, md (default: all three)")
    history.add_argument("--no-cache", action="store_true", help="analyse every revision again, keeping no cache")
    history.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                         help="analyse N revisions at a time in worker processes (default: one per core, at most 4; "
                              "fewer than 8 revisions to analyse are analysed in this process)")


def _measure_parser(commands: Subcommands) -> None:
    measure = commands.add_parser(
        "measure", help="run a command under CodeCarbon's offline tracker and append its run to the project's CSV",
        description="Run COMMAND, measuring its wall time and energy (CodeCarbon's offline tracker in the "
        "project's country), then append a row to the CSV named by scaling.file (created if absent). The "
        "command's exit status is passed through; a failed run appends nothing. To record the compute / "
        "communication / idle split, the command writes JSON such as {\"compute\": 812.0, \"communication\": "
        "95.5, \"idle\": 40.1} (seconds) to the file named by $REPORTGEN_SPLIT_FILE.")
    measure.add_argument("--project", type=Path, required=True, metavar="FILE", help="the project file")
    measure.add_argument("--nodes", type=int, required=True, metavar="N", help="the node count of this run")
    measure.add_argument("--machines", type=int, default=None, metavar="K",
                         help="the machines the run used, which CodeCarbon's reading on this one stands for (default: "
                         "1 for a single-host launch such as torchrun --standalone or --nnodes 1, else N); the "
                         "energy recorded is this machine's × K, never × ranks")
    _replace_or_repeat(measure)
    measure.add_argument("--split", action=argparse.BooleanOptionalAction, default=None,
                         help="the command writes its compute / communication / idle split to "
                         "$REPORTGEN_SPLIT_FILE (required for a CSV with a split; refused for a CSV of wall times)")
    measure.add_argument("--trace-dir", type=Path, metavar="DIR",
                         help="take the split from the PyTorch profiler traces the command writes in DIR (one per "
                         "rank), as `ingest trace` reads them")
    measure.add_argument("--steps-per-run", type=float, default=1.0, metavar="K",
                         help="with --trace-dir: profiler steps in one run of the project (default 1)")
    measure.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND...",
                         help="the command to run, after --")


def _ingest_parser(commands: Subcommands) -> None:
    ingest = commands.add_parser("ingest", help="read what profilers leave behind into the project's measurements",
                                 description="Read measurements from the files tools write.")
    sources = ingest.add_subparsers(dest="source", metavar="SOURCE", required=True)
    trace = sources.add_parser(
        "trace", help="PyTorch profiler traces, one per rank: the breakdown run of the job",
        description="Read PyTorch profiler (Kineto) Chrome traces, one file per rank (.json or .json.gz) or a "
        "folder of them, and compute each rank's temporal breakdown as Holistic Trace Analysis defines it "
        "(window, compute, idle, exposed communication, memory-only time, overlap, steps), then split exposed "
        "communication into transfer and waiting for the slowest rank by matching collectives across ranks. "
        "Without --project it writes nothing and prints the table (or JSON); with --project it appends the job's "
        "breakdown run to the project's CSV, with the trace files and their SHA-256 in a comment above it.")
    trace.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="trace files, or a folder of one job's")
    trace.add_argument("--format", choices=("table", "json"), default="table", help="what to print (default table)")
    trace.add_argument("--project", type=Path, metavar="FILE", help="append the run to this project's CSV")
    trace.add_argument("--nodes", type=int, metavar="N", help="the node count of the job (with --project)")
    trace.add_argument("--run", type=int, metavar="K",
                       help="with --project: add the breakdown to the K-th run at that node count that records a wall "
                       "time only (default: the latest such run, as `measure` recorded it)")
    trace.add_argument("--gpus-per-node", type=int, metavar="G",
                       help="derive the node count from the traces' world size (world size / G)")
    trace.add_argument("--steps-per-run", type=float, default=1.0, metavar="K",
                       help="profiler steps in one run of the project (default 1: a run is one step)")
    trace.add_argument("--sampled", action="store_true",
                       help="with --project, append a job whose traces hold only some of its ranks (a folder that "
                       "keeps a sample of a large job's): the run is the median rank, its wait a lower bound")
    _replace_or_repeat(trace)
    trace.add_argument("--scheduler", metavar="ADDRESS",
                       help="reduce the ranks on a Dask distributed cluster (e.g. tcp://host:8786) whose workers "
                       "see the same paths; needs the optional extra reportgen[dask]")

    nccl = sources.add_parser(
        "nccl-tests", help="nccl-tests output (all_reduce_perf …): measured collectives with message sizes",
        description="Read the table nccl-tests prints (size, count, type, …, out-of-place time, algbw, busbw, "
        "#wrong, …) into prediction.collectives entries with message bytes, from which α and the link bandwidth "
        "are fitted; the node count is the number of hosts the log's header names, and the rank count is kept "
        "beside each entry. Without --project it prints the entries to paste into the project file; with "
        "--project it appends them to the CSV named by prediction.collectives_file. A row with #wrong other than "
        "0, or a row that is not one of the table's, is refused where it stands.")
    nccl.add_argument("file", type=Path, metavar="FILE", help="the saved output of an nccl-tests *_perf run")
    nccl.add_argument("--nodes", type=int, metavar="P",
                      help="the node count the test ran on, only where the log has no header naming its hosts "
                      "(a count that contradicts the header is an error)")
    nccl.add_argument("--format", choices=("table", "json"), default="table",
                      help="what to print: the entries to paste, or JSON with the keys appended (default table)")
    nccl.add_argument("--project", type=Path, metavar="FILE", help="append to this project's collectives CSV")
    nccl.add_argument("--replace", action="store_true", help="replace the collectives recorded at this node count")

    carbon = sources.add_parser(
        "codecarbon", help="CodeCarbon's emissions.csv: a run's measured energy",
        description="Read a tracked run from CodeCarbon's emissions.csv (the last one, or --run-id; rows sharing "
        "a run_id are summed as the job's machines) and write its energy into the run at --nodes of the CSV named "
        "by scaling.file, with the file's SHA-256 in a comment. When fewer machines were tracked than the job used "
        "(--machines, default the node count), the energy is scaled by machines / tracked. The tracked country is "
        "checked against energy.location.")
    carbon.add_argument("file", type=Path, metavar="FILE", help="CodeCarbon's emissions.csv")
    carbon.add_argument("--nodes", type=int, required=True, metavar="N", help="the node count of the run")
    carbon.add_argument("--machines", type=int, default=None, metavar="K",
                        help="the machines the run used (default: N); the energy is scaled from the machines tracked "
                        "to K, never to ranks")
    carbon.add_argument("--format", choices=("table", "json"), default="table",
                        help="what to print: one line, or JSON with the values written (default table)")
    carbon.add_argument("--project", type=Path, metavar="FILE", help="write the energy into this project's CSV")
    carbon.add_argument("--run-id", metavar="ID", help="the tracked run to read (default: the file's last)")
    carbon.add_argument("--replace", action="store_true", help="replace an energy the run already has")

    serve = sources.add_parser(
        "serving", help="a load test: per-request records of any load tester, or a summary (vLLM, MLPerf loadgen)",
        description="Read a load test. Per-request files (methods.md#a-service-judged-from-its-requests) are "
        "recognised by their structure: vLLM bench serve --save-detailed (vllm-detailed), GuideLLM's benchmarks "
        "JSON or YAML (guidellm), AIPerf's profile_export.jsonl or its artifact folder (aiperf-records), "
        "inference-perf's per_request_lifecycle_metrics.json (inference-perf-records); each load point in them is "
        "checked (rate, "
        "client queueing, Little's law, over-saturation, warm-up, placeholder latencies) and judged against the "
        "project's per-request objectives: attainment and goodput with 90 %% intervals, percentiles where enough "
        "requests carry them. Summaries are read as before: vLLM's --save-result JSON or its printed \"Serving "
        "Benchmark Result\", AIPerf's profile_export_aiperf.json, MLPerf loadgen's mlperf_log_summary.txt (an "
        "INVALID run is refused with loadgen's reasons). Without --project it prints what it read; with --project "
        "it appends a row per load point at --nodes to the CSV named by scaling.file, with the file's SHA-256 in a "
        "comment above it and, for per-request files, the records kept in a store beside the CSV that `build` "
        "reads.")
    serve.add_argument("file", type=Path, metavar="FILE", help="the load tester's file, or its artifact folder")
    serve.add_argument("--nodes", type=int, required=True, metavar="N", help="the node count the load test ran on")
    serve.add_argument("--format", action="append", metavar="FORMAT", type=_serving_format,
                       help="what to print: table (one line a point, the default) or json (the points, their "
                       "findings and the definitions used); or the file's format, which detection then only "
                       f"confirms: {', '.join(SERVING_FILE_FORMATS)}. May be given twice (one of each)")
    serve.add_argument("--point", type=int, metavar="K", help="keep only the K-th load point of the file (1-based)")
    serve.add_argument("--project", type=Path, metavar="FILE", help="append the run to this project's CSV")
    _replace_or_repeat(serve)


def _serving_format(text: str) -> str:
    if text not in SERVING_PRINTED + SERVING_FILE_FORMATS:
        raise argparse.ArgumentTypeError(f"{text!r} is neither what to print ({', '.join(SERVING_PRINTED)}) nor a "
                                         f"file format ({', '.join(SERVING_FILE_FORMATS)})")
    return text


def _init_parser(commands: Subcommands) -> None:
    from reportgen.project.examples import example_names

    init = commands.add_parser("init", help="write a fully commented starter project, or a shipped example",
                               description="Write a commented starter project file that passes check, or with "
                               "--example one of the example projects reportgen ships (with the measurement CSV it "
                               "names, beside it). Refuses to overwrite a file.")
    init.add_argument("path", nargs="?", type=Path, default=None, metavar="PATH",
                      help="where to write it (default: project.yaml, or NAME.yaml with --example; `-`: standard "
                      "output)")
    init.add_argument("--example", choices=example_names(), metavar="NAME",
                      help=f"write this shipped example instead: {', '.join(example_names())}")


def _runs_parser(commands: Subcommands) -> None:
    runs = commands.add_parser("runs", help="manage a project's measured runs",
                               description="Manage the measured runs of a project.")
    actions = runs.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export", help="move inline scaling.runs into a CSV that scaling.file then names",
        description="Move the runs written inline under scaling.runs into a CSV beside the project file, each value "
        "as it was written and each repeat a row of its own, and replace scaling.runs with scaling.file naming it, "
        "keeping the file's comments and layout. `measure` and `ingest` then append to that CSV. Nothing is changed "
        "unless the project read back with the CSV holds the same runs; an existing CSV is never overwritten.")
    export.add_argument("project", type=Path, metavar="PROJECT", help="the project file")
    export.add_argument("--csv", default="runs.csv", metavar="NAME",
                        help="the CSV to create beside the project file (default runs.csv)")


def _calibrate_parser(commands: Subcommands) -> None:
    from reportgen.commands import calibrate

    calibrate.add_parser(commands)


def _calibrate(arguments: argparse.Namespace) -> int:
    from reportgen.commands import calibrate

    return calibrate.run(arguments)


def _completion_parser(commands: Subcommands) -> None:
    completion = commands.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                                     description="Print a completion script for the shell. Load it with, for "
                                     "example, `eval \"$(reportgen completion bash)\"` in ~/.bashrc, or write the "
                                     "fish one to ~/.config/fish/completions/reportgen.fish.")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell")


def _replace_or_repeat(command: argparse.ArgumentParser) -> None:
    """What a command that records a run does at a node count already measured: replace, or add a repeat."""
    group = command.add_mutually_exclusive_group()
    group.add_argument("--replace", action="store_true", help="replace the runs already at this node count")
    group.add_argument("--repeat", action="store_true",
                       help="add one more run at a node count already measured (the report takes the median)")


def run() -> None:
    """The command's entry point (console script and `python -m reportgen`): main(), then exit with its status.

    Interpreter shutdown would walk every object the libraries leave behind (matplotlib, pint, numpy, WeasyPrint)
    with the cyclic garbage collector and free them one by one: measured 0.25 s of a 1.4 s HTML build for the
    collector, and 0.15 s more of a PDF build for the freeing, memory the operating system takes back at once
    anyway. Everything is written and closed by the time main() returns, so the command leaves once the exit
    handlers have run (worker shutdown, logging, temporary folders), without the teardown: `_Leave`, registered
    before anything else, is the last exit handler to run. (Not in main(), which tests call in process.)
    """
    import atexit
    import os

    # numpy's OpenBLAS starts a thread per core as numpy is imported, and they spin a while waiting for work that
    # reportgen's small arrays never give them: 0.1 s of CPU on the machine's other core, which the PDF's renderer
    # is loading at that moment (measured: `import numpy, pint` takes 0.28 CPU-s with them, 0.18 without). A
    # setting of the user's own is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    leave = _Leave()
    # atexit runs its handlers last registered, first run: this one, registered before main() imports anything
    # that registers its own (logging, multiprocessing, concurrent.futures, weakref finalizers), runs after them
    # all. Importing this module registers none (tests/test_cli.py checks it).
    atexit.register(leave)
    try:
        leave.status = with_room(main)  # (reportgen.stack: CPython's frame stack, mapped once, not chunk by chunk)
    except SystemExit as stop:  # argparse's usage errors, --help and --version end main() this way
        leave.status = _exit_status(stop.code)
        raise
    leave.stop_on_signal()
    sys.exit(leave.status)


def _exit_status(code: object) -> int:
    """The status Python gives a SystemExit of this code: None is 0, a number itself, anything else (a message,
    printed) 1."""
    return 0 if code is None else code if isinstance(code, int) else 1


class _Leave:
    """The last exit handler: flush the standard streams, then leave with the command's status and no teardown."""

    status = 1  # main() did not return: an exception is on its way out, and Python has printed it

    def __call__(self) -> None:
        import os

        if isinstance(getattr(sys, "last_value", None), KeyboardInterrupt):  # (Ctrl-C before main() took it)
            self.status = 128 + 2  # the shell's status for SIGINT, where Python would kill itself with it
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing left to say
                stream.flush()
        os._exit(self.status)

    def stop_on_signal(self) -> None:
        """From here on a stopping signal ends the command at once with the shell's status for it: everything is
        written, so there is nothing to clean up, and a KeyboardInterrupt raised in an exit handler would print a
        traceback (or, escaping, make Python kill itself with SIGINT)."""
        import os
        import signal

        def stop(number: int, _frame: object) -> None:
            os._exit(128 + number)

        with contextlib.suppress(ValueError):  # not the main thread: the handlers stay
            for number in interrupts.STOPPING:
                signal.signal(number, stop)


class _ClosedStream(io.TextIOBase):
    """Standard output or error closed by the caller (`reportgen … >&-`): writing fails as the shell's would."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")


def _suggest_command(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A misspelt command gets the nearest one (`reportgen buidl` → did you mean `build`?), at every level of
    commands (`ingest traec`), as a one-line usage error with argparse's exit status."""
    words = [word for word in argv if not word.startswith("-")]
    path: tuple[str, ...] = ()
    names = children(parser)
    for word in words:
        if not names:
            return
        if word not in names:
            import difflib  # only for a word that names no command: `check` starts without it

            near = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
            hint = f"; did you mean `{' '.join((*path, near[0]))}`?" if near else f" (commands: {', '.join(names)})"
            print(printable(f"reportgen: error: unknown command `{' '.join((*path, word))}`{hint}"), file=sys.stderr)
            raise SystemExit(ExitCode.INPUT)
        path = (*path, word)
        names = children(dict(subcommands(parser))[path])


def _interval(text: str) -> float:
    """A polling interval in seconds: finite, from 0.01 (a busy loop below) to an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0.01 <= value <= 3600:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be from 0.01 to 3600 seconds, got {text!r}")
    return value


def _build_count(text: str) -> int:
    """--max-builds: a whole number of builds, at least one (0 watched nothing and said nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of builds: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 build, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    if sys.stdout is None:  # closed before the interpreter started: Python leaves None, and print() says nothing
        sys.stdout = _ClosedStream()
    for stream in (sys.stdout, sys.stderr):  # a file name that is not text (b"\xff") on an ASCII terminal: escaped
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    parser = _parser()
    _suggest_command(parser, sys.argv[1:] if argv is None else list(argv))
    arguments = parser.parse_args(argv)  # exits 2 on a usage error, as argparse does
    quiet = getattr(arguments, "quiet", False) or arguments.quiet_all
    verbose = getattr(arguments, "verbose", False) or arguments.verbose_all
    arguments.quiet, arguments.verbose = quiet, verbose
    console.configure(quiet=quiet, verbose=verbose and not quiet)
    try:
        with interrupts.stoppable():  # Ctrl-C and SIGTERM stop any command at once, a write once it is finished
            try:
                return int(_run(arguments))
            except KeyboardInterrupt:
                interrupts.stop_children()  # figure workers, renderer: stopped now, not waited for
                raise
    except BrokenPipeError:  # `reportgen … | head`: the reader has gone, so nothing is left to say
        _silence_stdout()
        return PIPE_CLOSED
    except (UsageError, OutputError, RenderError) as error:  # one line, not located in a file
        print(printable(f"reportgen: error: {error}"), file=sys.stderr)
        return int(error.exit_code)
    except ReportgenError as error:
        print(printable(str(error)), file=sys.stderr)
        return int(error.exit_code)
    except KeyboardInterrupt:
        status = interrupts.exit_status()  # the shell's convention: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
        cause = {143: "stopped by SIGTERM", 129: "stopped by SIGHUP (the terminal closed)"}.get(status, "interrupted")
        print(f"reportgen: {cause}; no output is half-written", file=sys.stderr)
        return status
    except OSError as error:  # what no reader or writer reported as its own: said with the path it belongs to
        with contextlib.suppress(OSError, ValueError, AttributeError):
            print(printable(f"reportgen: error: {_stray_os_error(error)}"), file=sys.stderr)
        return 1


def _stray_os_error(error: OSError) -> str:
    """An OSError no command turned into its own message, in words: the file it names (and the second one of a
    rename), else standard output when that is what failed (> /dev/full, >&-), else the system's reason alone."""
    import errno
    import os

    reason = error.strerror or str(error)
    if error.filename is not None:
        second = f" to {os.fsdecode(error.filename2)}" if error.filename2 is not None else ""
        return f"cannot use {os.fsdecode(error.filename)}{second}: {reason}"
    if _stdout_failed():
        _silence_stdout()  # its unflushed text would fail again at exit
        return f"cannot write to standard output: {reason}"
    code = errno.errorcode.get(error.errno or 0)
    return f"{reason}{f' ({code})' if code else ''}: an operating-system error outside any file reportgen names"


def _stdout_failed() -> bool:
    """Whether standard output refuses writes: an empty write to its descriptor fails as a real one does on
    /dev/full or a closed descriptor, and writes nothing where it works."""
    import os

    try:
        os.write(sys.stdout.fileno(), b"")
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError: no descriptor at all
        return True
    return False


PIPE_CLOSED = 128 + 13  # the status of a command stopped by SIGPIPE, as the shell expects when a reader left early


def _silence_stdout() -> None:
    """Standard output sent to /dev/null: the interpreter's last flush of a closed pipe would print a traceback."""
    import os

    with contextlib.suppress(OSError, ValueError):
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, sys.stdout.fileno())


def _run(arguments: argparse.Namespace) -> int:
    command = BY_NAME[arguments.command]
    if command.writes_outputs:
        from reportgen.commands.resources import ensure_open_files
        from reportgen.files import check_output_folder
        from reportgen.reproducible import source_date_epoch

        check_output_folder(arguments.output)  # before any work: a build should not fail only at its last step
        source_date_epoch()  # likewise
        ensure_open_files()  # likewise: `ulimit -n 16` failed midway, in a worker or the PDF workers' fork server
    return command.run(arguments)


def _ingest(arguments: argparse.Namespace) -> int:
    from reportgen.commands import ingest_command

    return ingest_command.run(arguments)


def _completion(arguments: argparse.Namespace) -> int:
    from reportgen.commands.completion import script

    sys.stdout.write(script(arguments.shell, _parser()))
    return ExitCode.OK


def _check(files: list[Path]) -> ExitCode:
    from reportgen.project.copies import identical_runs
    from reportgen.project.loader import load_project

    status = ExitCode.OK
    for path in files:
        try:
            loaded = load_project(path)
        except InputError as error:
            print(str(error), file=sys.stderr)
            status = ExitCode.INPUT
        else:
            copies = identical_runs(loaded.project)  # valid, and yet most likely a row pasted twice
            if copies:  # the analyses' wording, imported only then: check stays light
                from reportgen.analysis.page.lint import identical_runs_message

                print(f"{shown_name(path)}: warning [identical-runs]: {identical_runs_message(copies)}",
                      file=sys.stderr)
            console.say(f"{shown_name(path)}: ok")
    return status


def _pdf_possible(formats: tuple[str, ...]) -> None:
    """Before any work: a PDF asked for on a machine without Pango or a font is one line (exit 1)."""
    if "pdf" in formats:
        from reportgen.render.system_libraries import missing_for_pdf

        missing = missing_for_pdf()
        if missing is not None:
            raise RenderError(missing)


def _build(arguments: argparse.Namespace) -> int:
    from reportgen.render.pdf_workers import pdf_workers

    _pdf_possible(arguments.format)

    stems = [output_name(path) for path in arguments.files]
    duplicates = sorted({stem for stem in stems if stems.count(stem) > 1})
    if duplicates:
        raise UsageError(f"two project files share the name {duplicates[0]!r}: their outputs would collide")
    if arguments.jobs < 1:
        raise UsageError(f"-j must be a positive whole number, got {arguments.jobs}")
    if STDIN in arguments.files:
        stdin_bytes()  # read now: workers forked later see the same bytes
    # One project with a PDF: its PDF workers' server starts before this process imports the analyses (numpy,
    # pint: 0.25 s), so that WeasyPrint loads on the other core from the start. Batches render in their workers.
    with pdf_workers(len(arguments.files) == 1 and "pdf" in arguments.format, one_shot=True) as renderer:
        from reportgen.commands.batch import build_many, worst
        from reportgen.pipeline import BuildOptions

        options = BuildOptions(out_root=arguments.output, formats=arguments.format, paper=arguments.paper,
                               use_disk_cache=not arguments.no_cache, history=arguments.history)
        total = len(arguments.files)
        progress = total > 1 and sys.stderr.isatty() and not arguments.quiet
        outcomes = []
        if progress:
            print(f"building {total} projects with {min(arguments.jobs, total)} worker(s)…", end="",
                  file=sys.stderr, flush=True)
        stages = console.StageLine(shown_name(arguments.files[0])) \
            if total == 1 and sys.stderr.isatty() and not arguments.quiet else None
        builds = build_many(arguments.files, options, jobs=arguments.jobs, renderer=renderer, stages=stages)
        for done, outcome in enumerate(builds, start=1):
            outcomes.append(outcome)
            if stages is not None:
                stages.clear()
            if progress:
                print("\r\033[K", end="", file=sys.stderr)
            if outcome.status == ExitCode.OK:
                console.say(f"{shown_name(outcome.path)}: {outcome.summary}", flush=True)
            else:
                print(f"{shown_name(outcome.path)}: {outcome.summary}", file=sys.stderr, flush=True)
            if outcome.stages:
                console.detail("  " + ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in outcome.stages))
            if outcome.details:
                print(outcome.details.rstrip(), file=sys.stderr)
            if progress and done < total:
                print(f"[{done}/{total}] built…", end="", file=sys.stderr, flush=True)
    if total > 1:
        failed = sum(1 for o in outcomes if o.status != ExitCode.OK)
        console.say(f"{total - failed} of {total} projects built" + (f", {failed} failed" if failed else ""))
    return worst(outcomes)


def _watch(arguments: argparse.Namespace) -> int:
    from reportgen.commands.watch import WatchEvent, watch
    from reportgen.pipeline import BuildOptions

    def show(event: WatchEvent) -> None:
        if not event.ok:
            print(event.errors, file=sys.stderr)
            print("(the last good outputs are kept; waiting for the next save)", file=sys.stderr, flush=True)
            return
        timing = f"HTML and JSON in {event.html_seconds:.2f} s"
        if event.pdf_seconds is not None:
            timing += f", PDF in {event.pdf_seconds:.2f} s"
        drawn = ", ".join(event.figures_drawn) or "none"
        print(f"{'built' if event.first else 'rebuilt'} {arguments.file}: {timing}; figures drawn: {drawn}")
        if not event.first:
            for change in event.changes:
                print(f"  {change.label}: {_shown(change.old, change.kind, event.currency)} -> "
                      f"{_shown(change.new, change.kind, event.currency)} ({change.verdict})")
            if not event.changes:
                print("  no key result changed")
        if event.first:
            print("watching for saves (Ctrl-C to stop)")
        sys.stdout.flush()

    if not arguments.file.exists():  # a typo'd name would be watched forever for a save that never comes
        raise UsageError(f"{arguments.file}: no such file to watch")
    _pdf_possible(arguments.format)
    options = BuildOptions(out_root=arguments.output, formats=arguments.format, paper=arguments.paper)
    try:
        watch(arguments.file, options, on_event=show, interval=arguments.interval, max_builds=arguments.max_builds)
    except KeyboardInterrupt:  # how watching ends: Ctrl-C, or SIGTERM from a supervisor
        interrupts.stop_children()
        print("stopped watching; the last outputs are complete")
        return interrupts.exit_status()
    return ExitCode.OK


def _diff(arguments: argparse.Namespace) -> ExitCode:
    from reportgen.revision_pipeline import DiffOptions, run_diff
    from reportgen.wording import counted

    _pdf_possible(arguments.format)
    outcome = run_diff(arguments.old, arguments.new,
                       DiffOptions(out_root=arguments.output, formats=arguments.format, paper=arguments.paper))
    result = outcome.result
    if result.identical:
        print(f"no difference: {result.old_label} and {result.new_label} give the same inputs, design, results "
              "and findings")
    else:
        better = sum(1 for r in result.results if r.verdict == "better")
        print(f"{counted(len(result.changed_results), 'key result')} changed ({better} better, "
              f"{len(result.worse)} worse); {counted(len(result.inputs), 'input')} and "
              f"{counted(len(result.slots), 'design slot')} changed; findings +{len(result.appeared)} "
              f"-{len(result.resolved)}")
        for change in result.worse:
            print(f"  worse: {change.label}: {_shown(change.old, change.kind, result.currency)} -> "
                  f"{_shown(change.new, change.kind, result.currency)}")
    console.say(f"wrote {', '.join(here(p) for p in outcome.written)}")
    return ExitCode.FAILURE if arguments.exit_code and result.worse else ExitCode.OK


def _history(arguments: argparse.Namespace) -> ExitCode:
    from reportgen.project_history import UNSETTLED_WORDS, HistoryOptions, history, write_history
    from reportgen.wording import counted

    cache = None if arguments.no_cache else arguments.output / ".cache" / "history"
    document = history(arguments.project, HistoryOptions(rev=arguments.rev, last=arguments.last, cache=cache,
                                                         say=lambda text: console.say(text, file=sys.stderr),
                                                         jobs=arguments.jobs))
    revisions = document["revisions"]
    unbuilt = sum(1 for revision in revisions if not revision["built"])
    shown = f"the newest {len(revisions):,} of {document['total_revisions']:,}" if document["capped"] \
        else counted(len(revisions), "revision")
    shallow = document["shallow_start"]
    # a status line: -q leaves it out (it prints only errors and the data asked for, which history writes to files)
    console.say(f"{shown}: {document['built_now']:,} analysed now, {len(revisions) - document['built_now']:,} from "
                f"the cache" + (f"; {counted(unbuilt, 'revision')} could not be built" if unbuilt else "")
                + f"; {counted(len(document['ledger']), 'prediction')} in the ledger"
                + (f"; a shallow clone: its history starts at {shallow[:7]} (git fetch --unshallow gives the "
                   "revisions before it)" if shallow else "")
                + (f"; {UNSETTLED_WORDS}" if document["names_unsettled"] else ""))
    written = write_history(document, arguments.output, arguments.format)
    console.say(f"wrote {', '.join(here(p) for p in written)}")
    return ExitCode.OK


def _measure(arguments: argparse.Namespace) -> int:
    from dataclasses import replace

    from reportgen.ingest.measure import (
        append_run,
        assumed_place_note,
        banner,
        check_can_append,
        checked_machines,
        csv_of,
        keep_codecarbon_log,
        machines_of,
        missing_split,
        run_measured,
        tracker_place,
    )
    from reportgen.project.loader import load_project
    from reportgen.project.records import inert

    command = arguments.argv[1:] if arguments.argv[:1] == ["--"] else arguments.argv
    if not command:
        raise UsageError("measure needs a command after --, e.g. reportgen measure --project p.yaml --nodes 4 "
                         "-- ./train.sh")
    if arguments.nodes < 1:
        raise UsageError(f"--nodes must be a positive whole number, got {arguments.nodes}")
    machines = checked_machines(arguments.machines, arguments.nodes, default=machines_of(command, arguments.nodes))
    loaded = load_project(arguments.project, csv_files_may_be_missing=True)
    csv_path = csv_of(loaded)
    from_traces = arguments.trace_dir is not None
    if arguments.steps_per_run <= 0:
        raise UsageError(f"--steps-per-run must be more than zero, got {arguments.steps_per_run:g}")
    check_can_append(csv_path, arguments.nodes, replace=arguments.replace, split=arguments.split or from_traces,
                     repeat=arguments.repeat)
    place = tracker_place(loaded)
    # one inert line: a command's own line breaks and control characters (an escape sequence) are shown, not obeyed
    print(banner(command, arguments.nodes, place), file=sys.stderr)
    assumed = assumed_place_note(loaded)
    if assumed is not None:
        print(assumed, file=sys.stderr)
    measurement = replace(run_measured(command, arguments.nodes, place), machines=machines)
    interrupts.check()  # an interrupted run appends nothing, whatever the command's status
    if measurement.exit_status != 0:
        status = measurement.exit_status
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        print(inert(f"the command {how}: nothing appended to {csv_path.name}"), file=sys.stderr)
        return 128 - status if status < 0 else status  # killed by signal N: 128 + N, as a shell reports it
    refused: ReportgenError | None = None
    if from_traces:  # the split from the profiler traces the command wrote, each rank's times kept beside it
        from reportgen.commands.ingest_command import with_trace_split

        try:
            measurement = with_trace_split(measurement, arguments.trace_dir, arguments.steps_per_run)
        except (InputError, UsageError) as error:  # the run is kept where the CSV can hold its wall time
            refused = error
            if missing_split(csv_path, measurement):
                raise
            arguments.split = False
    if missing_split(csv_path, measurement) or (arguments.split and not measurement.split_s):
        said = measurement.said()
        print(inert(f"the command wrote no compute / communication / idle split to $REPORTGEN_SPLIT_FILE: nothing "
                    f"appended to {csv_path.name}. {said[:1].upper()}{said[1:]}"), file=sys.stderr)
        return ExitCode.FAILURE
    scaling = loaded.project.scaling
    try:
        appended = append_run(csv_path, measurement, time_unit_s=scaling.time_unit if scaling else None,
                              replace=arguments.replace, repeat=arguments.repeat)
    except ReportgenError as error:  # known only now (a concurrent writer, the CSV changed underneath): the
        kept = keep_codecarbon_log(csv_path, measurement)  # measurement is said, and CodeCarbon's record kept
        record = f"; CodeCarbon's record of the run is in {kept}" if kept is not None else ""
        print(printable(f"reportgen: error: {measurement.said()}{record}; not recorded in {csv_path.name}: "
                        f"{error}"), file=sys.stderr)
        return ExitCode.INPUT
    cells = ", ".join(f"{name} {value}" for name, value in appended.cells.items() if value)
    console.say(f"appended to {here(csv_path)}: {cells}")
    kept = keep_codecarbon_log(csv_path, measurement)
    if kept is not None:
        console.say(f"CodeCarbon's record of the run appended to {here(kept)}")
    if refused is not None:  # said after the run it did not cost
        print(printable(f"the traces were not read, so the run has its wall time and energy only: {refused}"),
              file=sys.stderr)
        return int(refused.exit_code)
    if measurement.energy_kwh is not None:
        scaled = f", multiplied by the {machines} machines (each assumed to draw the same)" if machines > 1 else \
            f" (one machine ran all {arguments.nodes} ranks)" if arguments.nodes > 1 else ""
        print("energy is CodeCarbon's estimate for this machine's processes (from the CPU's TDP and load where "
              f"it has no power counters){scaled}; the report applies the PUE to it")
    return 0


def _shown(value: object, kind: str, currency: str) -> str:
    from reportgen.render.formatting import key_value

    return key_value(value, kind, currency)


def _schema(output: Path | None, *, results: bool) -> ExitCode:
    from reportgen.project.schema import schema_text
    from reportgen.render.results import results_schema_text

    text = results_schema_text() if results else schema_text()
    if output is None or str(output) == "-":
        sys.stdout.write(text)
    else:
        _write_new(output, text, option="-o")
        console.say(f"wrote {output}")
    return ExitCode.OK


def _init(path: Path | None, example_name: str | None) -> ExitCode:
    from reportgen.project.examples import as_written_by_init, create_all, example
    from reportgen.project.starter import starter_project

    shipped = example(example_name) if example_name else None
    text = as_written_by_init(shipped.text) if shipped else starter_project()
    path = path or Path(f"{example_name}.yaml" if example_name else "project.yaml")
    if path == STDIN:
        sys.stdout.write(text)
        return ExitCode.OK
    companions = {path.parent / name: data for name, data in (shipped.companions if shipped else {}).items()}
    create_all({path: text.encode("utf-8"), **companions})  # all or none, every target checked first
    also = f" and {', '.join(str(companion) for companion in companions)}" if companions else ""
    console.say(f"wrote {path}{also}; build it with: reportgen build {path}" if shipped else
                f"wrote {path}; check it with: reportgen check {path}")
    return ExitCode.OK


def _runs(arguments: argparse.Namespace) -> ExitCode:
    from reportgen.project.loader import load_project
    from reportgen.project.runs_export import export_runs

    loaded = load_project(arguments.project)
    done = export_runs(loaded, arguments.csv)
    console.say(f"moved {done.runs} run{'s' if done.runs != 1 else ''} ({', '.join(done.columns)}) into "
                f"{arguments.csv}; scaling.file in {loaded.display} now names it")
    return ExitCode.OK


def _write_new(path: Path, text: str, *, option: str) -> None:
    """Write one file a command makes (schema -o) atomically, creating its folder."""
    from reportgen.files import check_output_file, make_folder, replace_file

    check_output_file(path, option)
    make_folder(path.parent)
    replace_file(path, text.encode("utf-8"))


if __name__ == "__main__":
    raise SystemExit(main())


@dataclass(frozen=True)
class Command:
    """One command of the command line: how its arguments are declared, and the function that runs it."""

    name: str
    parser: Callable[[Subcommands], None]
    run: Callable[[argparse.Namespace], int]
    writes_outputs: bool = False  # writes under --output: the folder is checked before any work


# Every command, in the order `reportgen --help` lists them
COMMANDS = (
    Command("check", _check_parser, lambda arguments: _check(arguments.files)),
    Command("build", _build_parser, _build, writes_outputs=True),
    Command("watch", _watch_parser, _watch, writes_outputs=True),
    Command("schema", _schema_parser, lambda arguments: _schema(arguments.output, results=arguments.results)),
    Command("diff", _diff_parser, _diff, writes_outputs=True),
    Command("history", _history_parser, _history, writes_outputs=True),
    Command("measure", _measure_parser, _measure),
    Command("ingest", _ingest_parser, _ingest),
    Command("runs", _runs_parser, _runs),
    Command("init", _init_parser, lambda arguments: _init(arguments.path, arguments.example)),
    Command("calibrate", _calibrate_parser, lambda arguments: _calibrate(arguments)),
    Command("completion", _completion_parser, _completion),
)
BY_NAME = {command.name: command for command in COMMANDS}
