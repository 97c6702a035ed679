"""Trace ingestion benchmark: `python bench/traces.py [--ranks 256] [--rank-mb 10] [--big-mb 50]`.

Generates PyTorch-profiler-shaped traces (CPU operators, runtime launches, compute, memory and NCCL kernels with
their correlation ids, profiler steps) in a temporary folder, then times cold `reportgen ingest trace` commands:
one large trace (the issue's 50 MB case; HTA 0.5.0 takes 4-6 s on such a file here) and a job of many ranks (the
issue's 256 ranks of 10 MB within a minute on 2 cores). Peak memory is the largest resident set of the
command's processes (a worker's, when ranks are reduced in parallel).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTGEN = [sys.executable, "-m", "reportgen"]
KERNELS = ("volta_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>",
           "Memcpy DtoD (Device -> Device)",
           "ncclKernel_AllReduce_RING_LL_Sum_float")


def write_trace(path: Path, *, rank: int, world: int, megabytes: float, seed: int) -> None:
    """A trace of about `megabytes` of JSON: steps of launches, kernels and CPU operators."""
    rng = random.Random(seed)
    events: list[str] = []
    size, t, correlation, step = 0, 1_000_000.0, 1, 0
    target = megabytes * 1e6
    while size < target or step < 3:
        events.append(json.dumps({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": t,
                                  "dur": 50_000.0, "pid": 1, "tid": 1}))
        cursor = t + 5.0
        for _ in range(400):
            name = KERNELS[rng.randrange(len(KERNELS))]
            duration = rng.uniform(2.0, 120.0)
            events.append(json.dumps({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": cursor, "dur": 8.5,
                                      "pid": 1, "tid": 1, "args": {"External id": correlation}}))
            events.append(json.dumps({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": cursor + 1,
                                      "dur": 4.2, "pid": 1, "tid": 1, "args": {"correlation": correlation}}))
            category = "gpu_memcpy" if name.startswith("Memcpy") else "kernel"
            events.append(json.dumps({"ph": "X", "cat": category, "name": name, "ts": cursor + 20, "dur": duration,
                                      "pid": 0, "tid": 7, "args": {"stream": 20 if "nccl" in name else 7,
                                                                   "correlation": correlation, "device": 0}}))
            correlation += 1
            cursor += duration + rng.uniform(0.5, 30.0)
            size += 505  # bytes of JSON the three events take
        t += 50_000.0
        step += 1
    document = (f'{{"schemaVersion": 1, "distributedInfo": {{"rank": {rank}, "world_size": {world}}}, '
                f'"traceEvents": [{", ".join(events)}]}}')
    path.write_text(document, encoding="utf-8")


def generate(jobs: list[tuple[Path, int, int, float, int]]) -> None:
    """Write traces in worker processes (2 cores: half the time)."""
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.starmap(_write, jobs, chunksize=8)


def _write(path: Path, rank: int, world: int, megabytes: float, seed: int) -> None:
    write_trace(path, rank=rank, world=world, megabytes=megabytes, seed=seed)


def timed(arguments: list[str]) -> tuple[float, float]:
    """Wall seconds of a cold command and its peak resident memory (MB): of the command's own process tree, read
    with wait4, so that neither the generating processes nor this one count."""
    started = time.perf_counter()
    command = subprocess.Popen([*REPORTGEN, *arguments], stdout=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(command.pid, 0)
    command.returncode = os.waitstatus_to_exitcode(status)
    if command.returncode:
        raise SystemExit(f"reportgen {' '.join(arguments)} failed ({command.returncode})")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--rank-mb", type=float, default=10.0)
    parser.add_argument("--big-mb", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=5, help="cold runs of the large trace (the machine drifts)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reportgen-bench-traces-") as folder:
        root = Path(folder)
        big = root / "big.json"
        generate([(big, 0, 1, options.big_mb, 1)])
        runs = [timed(["ingest", "trace", str(big)]) for _ in range(options.repeat)]
        seconds = sorted(s for s, _ in runs)
        print(f"one trace of {big.stat().st_size / 1e6:.0f} MB: median {statistics.median(seconds):.2f} s cold, "
              f"{seconds[0]:.2f}-{seconds[-1]:.2f} s over {len(seconds)} runs (target: 5x faster than HTA's 4-6 s), "
              f"peak memory {max(p for _, p in runs):.0f} MB")
        job = root / "job"
        job.mkdir()
        started = time.perf_counter()
        generate([(job / f"rank-{rank}.json", rank, options.ranks, options.rank_mb, rank)
                  for rank in range(options.ranks)])
        generated = time.perf_counter() - started
        total = sum(p.stat().st_size for p in job.iterdir()) / 1e6
        wall, peak = timed(["ingest", "trace", str(job)])
        print(f"{options.ranks} ranks, {total:.0f} MB in all (generated in {generated:.0f} s): {wall:.1f} s cold "
              f"(target under 60 s on 2 cores), peak memory {peak:.0f} MB")


if __name__ == "__main__":
    main()
