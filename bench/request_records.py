"""Per-request records ingested at scale, on the machine's cores as they are.

    python bench/request_records.py [--records 1000000] [--keep FILE] [--small]
    python bench/request_records.py --vllm [--records 1000000] [--keep FILE]
    python bench/request_records.py --build [--repeats 7]

AIPerf (the default): a profile_export.jsonl of N records, each a copy of a record AIPerf 0.13.0 wrote
(tests/data/serving/aiperf-0.13.0: 33 metrics, 8 chunk gaps, about 2.9 KB a line) with its times and counts varied.
With --small, each record keeps only its metadata's first nine fields and the metrics older AIPerf releases wrote
(no `http_req_*`, no `*_diff_pct`: about 1.7 KB a line; the serving-records targets assumed 1.2 KB). Prints the
file's size; the reading alone (`read_records` in a fresh process: wall time, peak RSS of the reading process and
of the second one) and the judging of its point; the reading by one process; then the whole command, `reportgen
ingest serving FILE --nodes 2 --project P` into a copy of inputs/chat-records.yaml: wall time and the peak RSS of
its largest process.

With --vllm: a `vllm bench serve --save-detailed` result of N requests (TTFT, two chunk gaps, E2E, send times and
the client's wait each; about 145 bytes a request), and the whole command as above.

With --build: what the records add to a build, `build --format json --no-cache` of inputs/chat-records.yaml (copied
to a temporary folder) with its records stores and without them (each row then stands on its summary columns),
alternated, the median of each and their difference.

Each file is written once to a temporary folder (or --keep FILE, reused when it is there) and removed after.
"""

from __future__ import annotations

import argparse
import json
import os
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


SMALL_METADATA = 9  # the metadata's first fields: session, ids, the credit, start, acknowledgement and end times
NEWER_METRICS = ("http_req_", "_diff_pct")  # what AIPerf 0.13 added to each record


def write_records(path: Path, count: int, *, small: bool = False) -> None:
    """`count` profiling records, one a line, sent every 10 ms with varied latencies and token counts."""
    template = json.loads(next(line for line in TEMPLATE.read_text().splitlines()
                               if '"profiling"' in line))
    if small:
        template["metadata"] = dict(list(template["metadata"].items())[:SMALL_METADATA])
        template["metadata"]["benchmark_phase"] = "profiling"
        template["metrics"] = {name: value for name, value in template["metrics"].items()
                               if not any(part in name for part in NEWER_METRICS)}
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


def write_vllm(path: Path, count: int) -> None:
    """A --save-detailed result of `count` requests sent every 10 ms, each with two chunk gaps."""
    import random

    document = json.loads((ROOT / "tests" / "data" / "serving" / "vllm-0.33.0" / "vllm.json").read_text()
                          .splitlines()[0])
    draw = random.Random(1)
    ttfts = [0.04 + draw.random() * 0.01 for _ in range(count)]
    itls = [[0.01 + draw.random() * 0.002 for _ in range(2)] for _ in range(count)]
    document.update(num_prompts=count, completed=count, failed=0, request_rate=100.0, input_lens=[64] * count,
                    output_lens=[3] * count, ttfts=ttfts, itls=itls,
                    latencies=[ttft + sum(gaps) for ttft, gaps in zip(ttfts, itls, strict=True)],
                    start_times=[1000.0 + index * 0.01 + draw.random() * 0.001 for index in range(count)],
                    queue_times=[draw.random() * 1e-4 for _ in range(count)], generated_texts=[""] * count,
                    errors=[""] * count, total_output_tokens=3 * count, duration=count * 0.01)
    document["mean_e2el_ms"] = sum(document["latencies"]) / count * 1e3
    path.write_text(json.dumps(document), encoding="utf-8")


def copy_example(folder: Path) -> None:
    """inputs/chat-records.yaml with its runs CSV and records stores, into `folder`."""
    import shutil

    for item in (ROOT / "inputs").glob("chat-records.*"):
        (shutil.copytree if item.is_dir() else shutil.copy)(item, folder / item.name)


def ingest_time(path: Path) -> str:
    """`reportgen ingest serving` of the file into a copy of the records example: wall time and the peak RSS of its
    largest process (the reading processes are its children, and smaller)."""
    with tempfile.TemporaryDirectory() as folder:
        copy_example(Path(folder))
        command = [sys.executable, "-m", "reportgen", "ingest", "serving", str(path), "--nodes", "2", "--project",
                   str(Path(folder) / "chat-records.yaml"), "--replace", "-q"]
        # started by a small process: a child's peak RSS counts the pages it shared with its parent when forked,
        # and this one holds the million requests it wrote
        done = subprocess.run([sys.executable, "-c", TIMED, *command], cwd=ROOT, capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        wall, peak_kb = done.stdout.split()[-2:]  # after what the command printed
    return f"ingest serving --project in {float(wall):.2f} s, peak RSS {int(peak_kb) / 1024:.0f} MiB"


ONE_PROCESS = """
import resource, sys, time
from pathlib import Path
start = time.perf_counter()
from reportgen.ingest import aiperf_stream
aiperf_stream.read_columns(Path(sys.argv[1]), sys.argv[1], processes=1)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
TIMED = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def build_times(repeats: int) -> None:
    """The example with records built with and without its stores, alternated so that both see the same machine."""
    import statistics

    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        copy_example(project)
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
    parser.add_argument("--small", action="store_true", help="AIPerf records of about 1.2 KB (older releases')")
    parser.add_argument("--vllm", action="store_true", help="a vLLM --save-detailed result instead")
    parser.add_argument("--build", action="store_true", help="time what the records add to a build")
    parser.add_argument("--repeats", type=int, default=7)
    arguments = parser.parse_args()
    if arguments.build:
        build_times(arguments.repeats)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = arguments.keep or Path(folder) / ("vllm.json" if arguments.vllm else "profile_export.jsonl")
        if not path.exists():
            start = time.perf_counter()
            if arguments.vllm:
                write_vllm(path, arguments.records)
            else:
                write_records(path, arguments.records, small=arguments.small)
            print(f"wrote {arguments.records:,} {'requests' if arguments.vllm else 'records'} "
                  f"({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        size = path.stat().st_size
        whole = ingest_time(path)
        if not arguments.vllm:
            done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True,
                                  text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            count, read, judged, share, read_kb, child_kb, rss_kb = done.stdout.split()
            print(f"{int(count):,} AIPerf records, {size / 1e9:.2f} GB: read in {float(read):.2f} s "
                  f"({size / 1e9 / float(read):.2f} GB/s), peak RSS {int(read_kb) / 1024:.0f} MiB (the second "
                  f"process {int(child_kb) / 1024:.0f} MiB); judged in {float(judged):.2f} s, peak RSS then "
                  f"{int(rss_kb) / 1024:.0f} MiB (attainment {float(share):.4f})")
            one = subprocess.run([sys.executable, "-c", ONE_PROCESS, str(path)], cwd=ROOT, capture_output=True,
                                 text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            seconds, one_kb = one.stdout.split()
            print(f"read by one process (and the hash on a thread): {float(seconds):.2f} s, peak RSS "
                  f"{int(one_kb) / 1024:.0f} MiB")
        print(f"{arguments.records:,} {'vLLM requests' if arguments.vllm else 'AIPerf records'}, "
              f"{size / 1e9:.2f} GB: {whole}")


if __name__ == "__main__":
    main()
