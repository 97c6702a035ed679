"""What reading the calibration table costs a build, and what regenerating it costs
(docs/methods.md#how-accurate-each-prediction-is).

    python bench/calibration.py [--repeats 20] [--corpus]

The table is read once per process (functools.cache): each repeat clears the cache, reads
reportgen/corpus/calibration.json and looks 100 cells up, as a build's estimates and what-ifs do. The target: the
median under 10 ms. `--corpus` also times `reportgen calibrate --check` (what `make corpus` computes) in a fresh
process, once, on the shipped corpus and on 200 synthetic curves of five scales and three repeats each (the target:
under 120 s on two cores, with --jobs 2).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reportgen.analysis.measured.accuracy import calibration_of
from reportgen.project.accuracy_table import shipped_table

ROOT = Path(__file__).resolve().parent.parent
RATIOS = [0.8 + 0.25 * index for index in range(50)]  # r from 0.8 to 13: every bucket


def read_and_look_up() -> float:
    shipped_table.cache_clear()
    started = time.perf_counter()
    table = shipped_table()
    for ratio in RATIOS:
        calibration_of(table, "amdahl", ratio)
        calibration_of(table, "usl", ratio, batch_changes=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--corpus", action="store_true", help="also time reportgen calibrate --check once")
    args = parser.parse_args()
    times = [read_and_look_up() for _ in range(args.repeats)]
    size = (ROOT / "reportgen" / "corpus" / "calibration.json").stat().st_size
    print(f"read the table ({size:,} bytes) and look up 100 cells: median {statistics.median(times) * 1e3:.2f} ms, "
          f"min {min(times) * 1e3:.2f}, max {max(times) * 1e3:.2f} (target < 10 ms; {args.repeats} repeats)")
    if args.corpus:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reportgen", "calibrate", "--check", "-q"], cwd=ROOT, check=True)
        print(f"reportgen calibrate --check (the shipped corpus, in a fresh process): "
              f"{time.perf_counter() - started:.1f} s")
        with tempfile.TemporaryDirectory() as folder:
            curves = Path(folder) / "curves"
            curves.mkdir()
            for index in range(200):
                (curves / f"synthetic-{index:03d}.yaml").write_text(synthetic_curve(index), encoding="utf-8")
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "reportgen", "calibrate", "-q", "--jobs", "2", "--corpus",
                            str(curves), "--out", str(Path(folder) / "out"), "--report",
                            str(Path(folder) / "calibration.md")], cwd=ROOT, check=True)
            print(f"reportgen calibrate --jobs 2 on 200 synthetic curves: {time.perf_counter() - started:.1f} s "
                  "(target < 120 s)")


def synthetic_curve(index: int) -> str:
    """A USL curve at 1–16 nodes, three repeats each with 5 % log-normal noise, as a curve file."""
    rng = random.Random(index)
    sigma, kappa = rng.uniform(0, 0.05), 10 ** rng.uniform(-5, -3)
    points = []
    for nodes in (1, 2, 4, 8, 16):
        time_s = 1000 * (1 + sigma * (nodes - 1) + kappa * nodes * (nodes - 1)) / nodes
        values = ", ".join(f"{time_s * math.exp(rng.gauss(0, 0.05)):.6g}" for _ in range(3))
        points.append(f"  - {{nodes: {nodes}, values: [{values}]}}")
    return (f"id: synthetic-{index:03d}\nsource: {{repo: bench/synthetic, commit: {'0' * 40}, paths: [-], "
            "licence: none-stated, read: table}\ncurated: {by: bench, date: 2026-11-29, tool: random}\n"
            f"hardware: {{name: synthetic system {index}}}\nworkload: {{kind: hpc, name: a USL curve, batch: fixed}}\n"
            "unit: {node: node, value: time, printed: s}\nproject: {scaling: {noise: 0.05}}\npoints:\n"
            + "\n".join(points) + "\n")


if __name__ == "__main__":
    main()
