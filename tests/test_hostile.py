"""Hostile environments: special files where a file is expected, one SIGTERM at any moment, output paths that are
not folders, folders that cannot be written, a full disk.

Commands that could block run in a process of their own with a timeout, so that a regression fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.files import TEMP_PREFIX
from tests.conftest import DATA, INPUTS, ROOT, outliving

pytestmark = pytest.mark.slow  # the fast tier (make check) leaves these out: see docs/testing.md

REPORTGEN = [sys.executable, "-m", "reportgen"]
EXAMPLE = INPUTS / "example.yaml"
PROJECT = "project: {title: H}\nscaling: {file: runs.csv, time_unit: s}\n"


def reportgen(*arguments: str, timeout: float = 60, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REPORTGEN, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False, **options)  # type: ignore[call-overload]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


@pytest.fixture
def listening_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "socket.yaml"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    yield path
    server.close()


# ------------------------------------------------------------------------------------------ only regular files
def test_timeout_5_check_of_a_named_pipe_returns_at_once_with_a_located_error(fifo: Path) -> None:
    started = time.monotonic()
    result = subprocess.run(["timeout", "5", *REPORTGEN, "check", str(fifo)], cwd=ROOT, capture_output=True,
                            text=True, timeout=30, check=False)
    assert time.monotonic() - started < 6
    assert result.returncode == 2
    assert result.stderr.strip() == (f"{fifo}:1:1: error: is a named pipe (FIFO), not a regular file: reportgen "
                                      "reads only regular files")


@pytest.mark.parametrize("kind", ["socket", "character device", "folder"])
def test_check_refuses_every_kind_of_special_file(kind: str, listening_socket: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = {"socket": listening_socket, "character device": Path("/dev/null"), "folder": tmp_path}[kind]
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (f"{path}:1:1: error: is a {kind}, not a regular file: reportgen "
                                               "reads only regular files")


def _reading_commands(tmp_path: Path, fifo: Path) -> dict[str, list[str]]:
    """Every command that reads a file, each given the named pipe where it reads one."""
    project = tmp_path / "project.yaml"
    project.write_text(PROJECT)
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,10\n")
    with_pipe_csv = tmp_path / "pipe-csv" / "project.yaml"
    with_pipe_csv.parent.mkdir()
    with_pipe_csv.write_text(PROJECT)
    os.mkfifo(with_pipe_csv.parent / "runs.csv")
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(DATA / "traces" / "nccl-2rank-rank0.json.gz", traces / "rank0.json.gz")
    os.mkfifo(traces / "rank1.json")  # the other rank: a pipe
    out = str(tmp_path / "out")
    return {
        "check": ["check", str(fifo)],
        "build": ["build", str(fifo), "-o", out],
        "build (its CSV)": ["build", str(with_pipe_csv), "-o", out],
        "diff": ["diff", str(project), str(fifo), "-o", out],
        "watch": ["watch", str(fifo), "-o", out, "--max-builds", "1"],
        "measure": ["measure", "--project", str(fifo), "--nodes", "1", "--", "true"],
        "measure (its CSV)": ["measure", "--project", str(with_pipe_csv), "--nodes", "2", "--", "true"],
        "ingest trace": ["ingest", "trace", str(fifo)],
        "ingest trace (a folder)": ["ingest", "trace", str(traces)],
        "ingest nccl-tests": ["ingest", "nccl-tests", "--nodes", "2", str(fifo)],
        "ingest codecarbon": ["ingest", "codecarbon", "--nodes", "1", "--project", str(project), str(fifo)],
    }


@pytest.mark.parametrize("command", ["check", "build", "build (its CSV)", "diff", "watch", "measure",
                                     "measure (its CSV)", "ingest trace", "ingest trace (a folder)",
                                     "ingest nccl-tests", "ingest codecarbon"])
def test_every_reading_command_refuses_a_named_pipe_at_once(command: str, tmp_path: Path, fifo: Path) -> None:
    arguments = _reading_commands(tmp_path, fifo)[command]
    result = reportgen(*arguments, timeout=30)  # a command that opened the pipe would wait for a writer forever
    said = result.stdout + result.stderr
    assert result.returncode == (0 if command == "watch" else 2), said  # watch reports it and waits for a save
    assert "is a named pipe (FIFO), not a regular file" in said, said
    assert ":1:1: error:" in said and "Traceback" not in said, said


# --------------------------------------------------------------------------------------------- one SIGTERM
def _terminate(process: subprocess.Popen[bytes], *, group: bool = False, timeout: float = 15) -> str:
    """Send one SIGTERM; the process must then exit (within `timeout`: it would hang forever if it were held
    hostage) with 143, leave no process of its group behind and print no traceback. Its stderr."""
    if group:
        os.killpg(process.pid, signal.SIGTERM)
    else:
        process.send_signal(signal.SIGTERM)
    try:
        _, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError("one SIGTERM did not stop the command") from None
    said = errors.decode()
    assert process.returncode == 143, said
    assert "Traceback" not in said, said
    left = outliving(process.pid, wait=5)
    assert not left, f"processes left behind: {left}"
    return said


def _start(*arguments: str, stdin: int | None = None, wait_for: str | None = None) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([*REPORTGEN, *arguments], cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    if wait_for is None:
        time.sleep(1.0)
    else:  # until the command has printed this line
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert wait_for in line, line
    return process


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_one_sigterm_stops_a_check_reading_a_standard_input_that_never_ends() -> None:
    process = _start("check", "-", stdin=subprocess.PIPE)  # the pipe stays open, and nothing comes
    assert "stopped by SIGTERM" in _terminate(process)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("ignores_sigterm", [False, True])
def test_one_sigterm_stops_measure_and_the_command_under_it(tmp_path: Path, ignores_sigterm: bool) -> None:
    project = tmp_path / "project.yaml"
    project.write_text(PROJECT)
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,10\n")
    before = (tmp_path / "runs.csv").read_bytes()
    ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN); " if ignores_sigterm else ""
    command = f"import signal, time; {ignore}print('running', flush=True); time.sleep(600)"
    process = _start("measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c", command,
                     wait_for="running")
    _terminate(process)  # to reportgen alone: it passes the signal on, and kills a command that ignores it
    assert (tmp_path / "runs.csv").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_one_sigterm_stops_watch_and_its_workers(tmp_path: Path) -> None:
    project = tmp_path / "example.yaml"
    shutil.copy(EXAMPLE, project)
    process = _start("watch", str(project), "-o", str(tmp_path / "out"), "--format", "html,json",
                     wait_for="built")
    said = _terminate(process, group=True)
    assert (tmp_path / "out" / "example" / "report.html").exists()
    assert not said.strip() or "Traceback" not in said


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("group", [False, True])
def test_one_sigterm_stops_a_batch_and_its_workers(tmp_path: Path, group: bool) -> None:
    projects = []
    for name in ("one", "two", "three"):
        projects.append(tmp_path / f"{name}.yaml")
        shutil.copy(EXAMPLE, projects[-1])
    out = tmp_path / "out"
    process = _start("build", *map(str, projects), "-o", str(out), "-j", "2")
    _terminate(process, group=group)
    assert not list(out.rglob(f"{TEMP_PREFIX}*")) if out.exists() else True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_one_sigterm_stops_a_build_whose_renderer_hangs(tmp_path: Path) -> None:
    """The PDF workers never answer (a C library stuck, say: here they are stopped with SIGSTOP): a SIGTERM to
    the build alone still stops it, and every helper with it."""
    from reportgen.interrupts import descendants

    out = tmp_path / "out"
    process = _start("build", str(EXAMPLE), "-o", str(out), "--no-cache")
    deadline, workers = time.monotonic() + 30, []
    while len(workers) < 2 and time.monotonic() < deadline:  # the two PDF workers, forked by the fork server
        workers = [pid for pid in descendants(process.pid) if _is_pdf_worker(pid)]
        time.sleep(0.05)
    assert len(workers) == 2, process.communicate()
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(3)  # the figures are drawn by now, and the build waits for its PDF
    assert process.poll() is None, process.communicate()
    _terminate(process)
    assert not (out / "example").exists()


def _is_pdf_worker(pid: int) -> bool:
    """A process forked by multiprocessing's fork server (whose command line it shares), not the server itself."""
    try:
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        return all(b"forkserver" in Path(f"/proc/{each}/cmdline").read_bytes() for each in (pid, parent))
    except (OSError, ValueError, IndexError):
        return False


def _sigterm_bench() -> object:
    spec = importlib.util.spec_from_file_location("sigterm_bench", ROOT / "bench" / "sigterm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_random_sigterm_loop_passes_a_few_builds() -> None:
    """bench/sigterm.py runs 50; here a few JSON builds keep it working and keep the promise checked."""
    bench = _sigterm_bench()
    outcomes = bench.run_loop(4, seed=3, formats=("json",))  # type: ignore[attr-defined]
    assert [outcome.problems for outcome in outcomes] == [()] * 4


# ------------------------------------------------------------------------------------------------ output paths
def test_an_output_folder_that_is_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for command in (["build", str(EXAMPLE)], ["diff", str(EXAMPLE), str(EXAMPLE)], ["watch", str(EXAMPLE)]):
        assert main([*command, "-o", str(a_file)]) == 2
        assert capsys.readouterr().err.strip() == (f"reportgen: error: -o {a_file}: is a file, not a folder; name a "
                                                   "folder for the outputs")
        assert main([*command, "-o", str(a_file / "sub" / "folder")]) == 2
        assert capsys.readouterr().err.strip() == (f"reportgen: error: -o {a_file}/sub/folder: goes through "
                                                   f"{a_file}, which is a file, not a folder")
    assert a_file.read_text() == "x"


def test_an_output_file_that_is_a_folder_or_through_a_file_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert main(["schema", "-o", str(tmp_path)]) == 2
    assert "is a folder; name the file to write" in capsys.readouterr().err
    assert main(["schema", "-o", str(a_file / "schema.json")]) == 2
    assert main(["init", str(a_file / "new.yaml")]) == 2
    assert capsys.readouterr().err.count("which is a file, not a folder") == 2


def _unprivileged() -> list[str]:
    """A command prefix that runs as an unprivileged user: permissions mean nothing to root. Here the suite runs as
    root and Python lives under root's home, so the user (nobody) keeps the right to read and search every folder
    (CAP_DAC_READ_SEARCH), never to write where permissions forbid it."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root, without setpriv to become another user")
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search"]


@pytest.fixture
def read_only(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    folder = tmp_path / "read-only"
    folder.mkdir()
    (folder / "example").mkdir()
    (folder / "example" / "results.json").write_text("{}")
    folder.chmod(0o555)
    (folder / "example").chmod(0o555)
    return folder


@pytest.mark.parametrize("arguments", [
    ["build", "{example}", "-o", "{folder}"],
    ["build", "{example}", "-o", "{folder}/new/deeper"],
    ["diff", "{example}", "{example}", "-o", "{folder}"],
    ["watch", "{example}", "-o", "{folder}"],
    ["schema", "-o", "{folder}/schema.json"],
    ["init", "{folder}/new.yaml"],
])
def test_a_folder_without_write_permission_is_one_line_and_exit_1(arguments: list[str], read_only: Path) -> None:
    shown = [a.format(example=EXAMPLE, folder=read_only) for a in arguments]
    result = subprocess.run([*_unprivileged(), *REPORTGEN, *shown], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reportgen: error: ") and "no permission to write" in lines[0]
    assert (read_only / "example" / "results.json").read_text() == "{}"


def _with_file_size_limit(limit: int) -> None:
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_write_that_fails_for_lack_of_room_keeps_the_previous_outputs(tmp_path: Path) -> None:
    """A full disk, as a file-size limit makes it (the same failing write, ENOSPC or EFBIG, without root). The first
    write to fail is an output's, or, where the PDF's parts are made by workers, the temporary file of a part:
    either is named on one line."""
    out = tmp_path / "out"
    assert reportgen("build", str(EXAMPLE), "-o", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "example").iterdir()}
    project = tmp_path / "example.yaml"
    project.write_text(EXAMPLE.read_text().replace("compute: 4150", "compute: 4000"))
    result = reportgen("build", str(project), "-o", str(out), preexec_fn=lambda: _with_file_size_limit(64 * 1024))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # a build names its project first, as with every error of a build
    assert lines[0].startswith((f"{project}: error: cannot write {out.resolve()}/example/report.",
                                f"{project}: error: cannot write the PDF's parts to "))
    assert lines[0].endswith(("File too large; the files there are as they were",
                              "File too large; the outputs are as they were"))
    assert {p.name: p.read_bytes() for p in (out / "example").iterdir()} == before
    assert not list(out.rglob(f"{TEMP_PREFIX}*"))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a small disk needs root")
def test_a_full_disk_keeps_the_previous_outputs(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(disk)], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = disk / "out"
        (out / "example").mkdir(parents=True)
        (out / "example" / "results.json").write_text("{}")
        filler = disk / "filler"
        filler.write_bytes(b"\0" * (500 * 1024))  # about 100 kB left: results.json fits, the PDF does not
        result = reportgen("build", str(EXAMPLE), "-o", str(out), "--no-cache")
        assert result.returncode == 1, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "No space left on device; the files there are as they were" in lines[0], lines
        assert (out / "example" / "results.json").read_text() == "{}"
        assert sorted(p.name for p in (out / "example").iterdir()) == ["results.json"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)
