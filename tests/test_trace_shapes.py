"""Traces as they really come (a folder that keeps a sample of a large job's ranks) and as a hostile file makes
them (gzip bombs, a byte that is not UTF-8, a rank outside its world): read, or refused at once with a located
reason."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.ingest import traces
from tests.conftest import DATA

SAMPLED = DATA / "traces" / "sampled-128rank"  # HTA's: ranks 0 and 1 of a 128-rank job (MIT, see NOTICE.md)


def test_a_sampled_folder_prints_each_present_rank_and_the_missing_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "trace", str(SAMPLED)]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[0] for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert rows == ["0", "1"]
    assert "2 ranks of a world of 128, the median rank" in out
    assert "126 of the 128 ranks have no trace here" in out and "a lower bound" in out


def test_appending_a_sampled_job_needs_sampled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n")
    base = ["ingest", "trace", str(SAMPLED), "--project", str(project), "--nodes", "16"]
    assert main(base) == 2
    assert "pass --sampled" in capsys.readouterr().err and not (tmp_path / "runs.csv").exists()
    assert main([*base, "--sampled"]) == 0
    text = (tmp_path / "runs.csv").read_text()
    assert "2 of 128 ranks (sampled: the run is the median rank)" in text and "a lower bound" in text
    json_run = _json_run(capsys, ["ingest", "trace", str(SAMPLED), "--format", "json"])
    assert json_run["sampled"] is True and json_run["missing_rank_count"] == 126
    assert json_run["missing_ranks"] == list(range(2, 128))


def _json_run(capsys: pytest.CaptureFixture[str], arguments: list[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(arguments) == 0
    return json.loads(capsys.readouterr().out)["run"]  # type: ignore[no-any-return]


def _rank_file(folder: Path, rank: int, world: int) -> Path:
    trace = json.loads(gzip.decompress((SAMPLED / "rank-0.json.gz").read_bytes()))
    trace["distributedInfo"]["rank"], trace["distributedInfo"]["world_size"] = rank, world
    path = folder / f"rank{rank}.json"
    path.write_text(json.dumps(trace))
    return path


@pytest.mark.parametrize(("rank", "world"), [(-1, 2), (5, 2), (0, 0)])
def test_a_rank_outside_its_world_is_refused(tmp_path: Path, rank: int, world: int) -> None:
    path = _rank_file(tmp_path, rank, world)
    with pytest.raises(traces.InputError) as caught:
        traces.combine(traces.reduce_files([path], processes=1))
    assert "outside its world" in str(caught.value) or "a job has one rank or more" in str(caught.value)


def test_a_byte_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"traceEvents":[{"ph":"X","name":"caf\xe9","ts":1,"dur":1}]}')
    with pytest.raises(traces.InputError, match=r"latin\.json:1:38: error: not UTF-8: byte 0xe9"):
        traces.read_rank(path)


def _gzip_member(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip member
    return compressor.compress(data) + compressor.flush()


def _bomb(path: Path, head: bytes, block: bytes, expanded: int) -> Path:
    """A gzip file that expands to `expanded` bytes: one member of the head, then one compressed member of
    `block` repeated (gzip readers decompress the members one after the other)."""
    member = _gzip_member(block)
    with path.open("wb") as out:
        out.write(_gzip_member(head))
        for _ in range(expanded // len(block)):
            out.write(member)
    return path


# reportgen, then its own peak resident memory (VmHWM, kB) on standard error as it exits. Not the rusage of the child:
# Linux carries a process's peak across fork and exec, so a child of a large test process reports the parent's.
# The handler is registered once the command runs, as a library's is: run() leaves after the handlers registered
# since it began (reportgen.commands.cli.run).
PEAK_REPORTED = ("import atexit, sys\n"
                 "def peak():\n"
                 "    line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
                 "    sys.stderr.write('VmHWM ' + line.split()[1] + '\\n')\n"
                 "sys.argv[0] = 'reportgen'\n"
                 "from reportgen.commands import cli\n"
                 "main = cli.main\n"
                 "def measured(*arguments):\n"
                 "    atexit.register(peak)\n"
                 "    return main(*arguments)\n"
                 "cli.main = measured\n"
                 "cli.run()\n")
EVENT = b'{"ph":"X","cat":"kernel","name":"k","ts":1.0,"dur":1.0,"args":{"stream":7,"correlation":1}},'


@pytest.mark.parametrize(("name", "head", "block", "reason"), [
    ("spaces", b"", b" " * (1 << 20), "no traceEvents array in its first 16 MiB"),
    ("events", b'{"traceEvents":[', EVENT * 10_000, "expands more than 100-fold"),
    ("one-endless-event", b'{"traceEvents":[{"name":"', b"x" * (1 << 20), "no event ends within 16 MiB"),
])
def test_a_gzip_bomb_of_a_gigabyte_is_refused_fast_and_small(tmp_path: Path, name: str, head: bytes, block: bytes,
                                                             reason: str) -> None:
    path = _bomb(tmp_path / f"{name}.json.gz", head, block, 1 << 30)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", PEAK_REPORTED, "ingest", "trace", str(path)], capture_output=True,
                            text=True, timeout=60, check=False)
    elapsed = time.monotonic() - started
    said, _, peak = result.stderr.rpartition("VmHWM ")
    peak_mb = int(peak.split()[0]) / 1024
    assert result.returncode == 2 and reason in said and "Traceback" not in said, said
    assert elapsed < 10 and peak_mb < 300, (elapsed, peak_mb)


def test_an_event_that_never_ends_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    path.write_bytes(b'{"traceEvents":[{"name":"' + b"x" * (20 << 20))
    with pytest.raises(traces.InputError, match="no event ends within 16 MiB"):
        traces.read_rank(path)


def test_a_kernel_shorter_than_its_rounding_covers_nothing(tmp_path: Path) -> None:
    """HTA rounds a start up and an end down to whole microseconds: a kernel at 1.5 µs lasting 0 becomes 2…1. It
    covers no time (found by the ingest fuzzer as a compute time of −1 µs)."""
    events = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": n * 1000.0, "dur": 1000.0}
              for n in range(2)]
    events += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0.0, "dur": 5.0,
                "args": {"correlation": 1}},
               {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1.5, "dur": 0.0,
                "args": {"stream": 7, "correlation": 1}}]
    path = tmp_path / "rank0.json"
    path.write_text(json.dumps({"traceEvents": events}))
    rank = traces.read_rank(path)
    assert rank.compute_us == 0 and rank.window_us == 0 and rank.idle_us == 0
