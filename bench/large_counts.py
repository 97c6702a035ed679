"""Large counts from small files (issue 33): each is refused or built within 10 s and 300 MB.

`python bench/large_counts.py` writes, in a temporary folder, (a) one run of 200,000 workers (a 1.5 MB CSV), (b)
60,000 measured collectives and (c) a 1.4 kB trace claiming 10^10 ranks, then times a cold
`reportgen build --no-cache` (HTML, PDF, JSON) of (a) and (b) and `reportgen ingest trace` of (c), reading each
command's peak memory with wait4. Prints one line per case: wall seconds, peak MB, exit status, HTML size.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LIMIT_S, LIMIT_MB = 10.0, 300.0


def workers(folder: Path) -> list[str]:
    rng = random.Random(1)
    cells = " ".join(f"{rng.uniform(90, 110):.3f}" for _ in range(200_000))
    (folder / "w.csv").write_text(f"nodes,compute [s],communication [s],idle [s],workers [s]\n1,100,0,0,\n"
                                  f"8,14,2,1,{cells}\n")
    (folder / "w.yaml").write_text("project: {title: Workers}\nscaling: {file: w.csv}\n")
    return ["build", str(folder / "w.yaml"), "-o", str(folder / "out"), "--no-cache", "-q"]


def collectives(folder: Path) -> list[str]:
    rng = random.Random(1)
    rows = ["nodes,bytes [B],time [us]"]
    for _ in range(60_000):
        size = 2 ** rng.randrange(10, 30)
        rows.append(f"{rng.choice((2, 4, 8, 16))},{size},{10 + size / 1e4 * (1 + rng.random() * 0.1):.3f}")
    (folder / "c.csv").write_text("\n".join(rows) + "\n")
    (folder / "c.yaml").write_text("project: {title: Collectives}\nprediction: {t_comp: 1 s, alpha: 8 us, "
                                   "message_bytes: 1 GB, collectives_file: c.csv}\nscaling: {time_unit: s, runs: "
                                   "[{nodes: 1, time: 100}, {nodes: 8, time: 20}]}\n")
    return ["build", str(folder / "c.yaml"), "-o", str(folder / "out"), "--no-cache", "-q"]


def world(folder: Path) -> list[str]:
    from tests.test_traces import job_trace

    trace = job_trace(0, 1, [1000.0], steps=2)
    trace["distributedInfo"]["world_size"] = 10 ** 10
    (folder / "rank0.json").write_text(json.dumps(trace))
    return ["ingest", "trace", str(folder / "rank0.json")]


def timed(arguments: list[str]) -> tuple[float, float, int]:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "reportgen", *arguments], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> int:
    failed = False
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for case, make in (("200,000 workers", workers), ("60,000 collectives", collectives),
                           ("trace claiming 10^10 ranks", world)):
            seconds, megabytes, status = timed(make(folder))
            html = next(iter((folder / "out").glob("*/report.html")), None) if (folder / "out").exists() else None
            size = f", report.html {html.stat().st_size / 1e3:,.0f} kB" if html else ""
            ok = seconds <= LIMIT_S and megabytes <= LIMIT_MB
            failed |= not ok
            print(f"{case}: {seconds:.2f} s, {megabytes:.0f} MB peak, exit {status}{size}"
                  f"{'' if ok else '  OVER THE 10 s / 300 MB TARGET'}")
            if html:
                html.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
