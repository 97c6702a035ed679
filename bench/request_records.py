"""Per-request records ingested at scale: AIPerf's profile_export.jsonl of N records, each a copy of a record AIPerf
0.13.0 wrote (tests/data/serving/aiperf-0.13.0: 33 metrics, 8 chunk gaps, about 3.1 KB a line) with its times and
counts varied, read by `reportgen.ingest.request_records.read_records` in a fresh process, then judged.

    python bench/request_records.py [--records 1000000] [--keep FILE]
    python bench/request_records.py --build [--repeats 7]

Prints the file's size, the wall time and peak resident memory of reading it (the child's ru_maxrss), and the time
to judge the point (checks, the block bootstrap, the percentiles). The file is written once to a temporary folder
(or --keep FILE) and removed after.

With --build: what the records add to a build, `build --format json --no-cache` of inputs/chat-records.yaml (copied
to a temporary folder) with its records stores and without them (each row then stands on its summary columns),
alternated, the median of each and their difference.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tests" / "data" / "serving" / "aiperf-0.13.0" / "rate4" / "profile_export.jsonl"
CHILD = """
import sys, time, resource
from pathlib import Path
start = time.perf_counter()
from reportgen.ingest.request_records import read_records
found = read_records(Path(sys.argv[1]))
read = time.perf_counter() - start
read_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from reportgen.analysis.measured.load_point import Judgement, judge_point
from reportgen.analysis.measured.requests import Objectives
start = time.perf_counter()
facts = judge_point(found.points[0], Judgement(Objectives(0.25, 0.03, 8.0), 0.99, True))
judged = time.perf_counter() - start
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(found.points[0].requests.count, read, judged, facts.attainment.joint, read_rss, children,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def write_records(path: Path, count: int) -> None:
    """`count` profiling records, one a line, sent every 10 ms with varied latencies and token counts."""
    template = json.loads(next(line for line in TEMPLATE.read_text().splitlines()
                               if '"profiling"' in line))
    metadata, metrics = template["metadata"], template["metrics"]
    origin = metadata["request_start_ns"]
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            start = origin + index * 10_000_000
            metadata["credit_issued_ns"] = start - 1_000
            metadata["request_start_ns"] = start
            metadata["request_end_ns"] = start + 2_000_000_000 + (index % 97) * 1_000_000
            metrics["time_to_first_token"]["value"] = 100.0 + index % 53
            metrics["request_latency"]["value"] = 2000.0 + index % 97
            metrics["usage_completion_tokens"]["value"] = 64 + index % 64
            out.write(json.dumps(template, separators=(",", ":")) + "\n")


def build_times(repeats: int) -> None:
    """The example with records built with and without its stores, alternated so that both see the same machine."""
    import shutil
    import statistics

    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        for item in (ROOT / "inputs").glob("chat-records*"):
            (shutil.copytree if item.is_dir() else shutil.copy)(item, project / item.name)
        store, aside = project / "chat-records.records", project / "aside.records"

        def once() -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "reportgen", "build", str(project / "chat-records.yaml"), "-q",
                            "--format", "json", "--no-cache", "-o", str(project / "out")], cwd=ROOT, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            return time.perf_counter() - start

        with_records, without = [], []
        once()  # the byte-compiled modules and the fonts warmed for both
        for _ in range(repeats):
            with_records.append(once())
            store.rename(aside)
            without.append(once())
            aside.rename(store)
        requests = sum(int(line.split(" sent=")[1].split()[0]) for line in
                       (project / "chat-records.csv").read_text().splitlines() if " sent=" in line)
        print(f"build --format json of inputs/chat-records.yaml ({requests:,} requests in its stores), median of "
              f"{repeats}: {statistics.median(with_records):.2f} s with its records, "
              f"{statistics.median(without):.2f} s without; the records add "
              f"{statistics.median(with_records) - statistics.median(without):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--build", action="store_true", help="time what the records add to a build")
    parser.add_argument("--repeats", type=int, default=7)
    arguments = parser.parse_args()
    if arguments.build:
        build_times(arguments.repeats)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = arguments.keep or Path(folder) / "profile_export.jsonl"
        if not path.exists():
            start = time.perf_counter()
            write_records(path, arguments.records)
            print(f"wrote {arguments.records:,} records ({path.stat().st_size / 1e9:.2f} GB) in "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        count, read, judged, share, read_kb, child_kb, rss_kb = done.stdout.split()
        del before
        size = path.stat().st_size
        print(f"{int(count):,} AIPerf records, {size / 1e9:.2f} GB: read in {float(read):.2f} s "
              f"({size / 1e9 / float(read):.2f} GB/s), peak RSS {int(read_kb) / 1024:.0f} MiB (the second "
              f"process {int(child_kb) / 1024:.0f} MiB); judged in {float(judged):.2f} s, peak RSS then "
              f"{int(rss_kb) / 1024:.0f} MiB (attainment {float(share):.4f})")


if __name__ == "__main__":
    main()
