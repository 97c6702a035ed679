"""The hostile shapes a reader must take in linear time (issue 50): each file is written to a temporary folder and
read once by the reader a command uses, timed; the target is under 1 s each.

`python bench/hostile_readers.py` prints one line per case: seconds, and what the reader said (a result or its
one-line refusal). The cases: (a) a 64 KB MLPerf loadgen summary of blank lines after its result, (b) 3.3 MB of one
label repeated, (c) a CPU trace of 80,000 ProfilerStep spans, each on a thread of its own.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reportgen.errors import ReportgenError  # noqa: E402
from reportgen.ingest.serving_bench import read_serving  # noqa: E402
from reportgen.ingest.traces import read_rank  # noqa: E402

SUMMARY = (ROOT / "tests" / "data" / "serving" / "mlperf_log_summary.txt").read_text(encoding="utf-8")


def blank_lines(folder: Path) -> Path:
    path = folder / "blank" / "mlperf_log_summary.txt"
    path.parent.mkdir()
    path.write_text(SUMMARY + "\n" * 64_000, encoding="utf-8")
    return path


def repeated_label(folder: Path) -> Path:
    path = folder / "label" / "mlperf_log_summary.txt"
    path.parent.mkdir()
    path.write_text(SUMMARY + "Completed samples per second    : 101.87\n" * 80_000, encoding="utf-8")
    return path


def threads(folder: Path) -> Path:
    events = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1000 + i,
               "ts": i * 10.0, "dur": 5.0} for i in range(80_000)]
    events += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1000 + i, "ts": i * 10.0 + 1,
                "dur": 3.0} for i in range(0, 80_000, 100)]
    path = folder / "threads.json"
    path.write_text(json.dumps({"traceEvents": events}), encoding="utf-8")
    return path


def timed(read: Callable[[Path], object], path: Path) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        said = type(read(path)).__name__
    except ReportgenError as error:
        said = str(error).splitlines()[0][:100]
    return time.perf_counter() - started, said


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for case, make, read in (("64 KB of blank lines", blank_lines, read_serving),
                                 ("3.3 MB of one label", repeated_label, read_serving),
                                 ("80,000 threads' steps", threads, read_rank)):
            path = make(folder)
            seconds, said = timed(read, path)  # type: ignore[arg-type]
            print(f"{case:24} {path.stat().st_size / 1e6:6.2f} MB  {seconds:6.3f} s  {said}")


if __name__ == "__main__":
    main()
