"""Scale benchmark (issue 15): full cold builds of 10,000 raw runs against the default example, alternated.

`python bench/scale.py [--rounds 2]` writes two projects in a temporary folder, the default example's with its runs
replaced by (a) 20 node counts × 500 repeats, (b) 10,000 distinct node counts and (c) 5,000 distinct node counts
beside 500 repeats at each of ten scales (issue 38: its speedup figure once drew 20,000 caps), and times cold
`reportgen build --no-cache` of each (HTML, PDF, JSON) beside the example's own, alternated because this machine's
speed drifts. Targets: within 3× the example's time, peak memory under 300 MB (read per command with wait4), and
report.html under 1 MB (issue 25: past a few hundred points the figures aggregate).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inputs" / "example.yaml"
REPEATED = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]


def write_project(folder: Path, name: str, nodes: list[int]) -> Path:
    rng = random.Random(1)
    lines = ["nodes,compute [s],communication [s],idle [s],io [s]"]
    for p in nodes:
        cells = (32400 / p, 700 * p ** 0.5 if p > 1 else 0, 300 * p ** 0.4 if p > 1 else 0, 600 / p)
        lines.append(",".join([str(p), *(f"{c * (1 + rng.uniform(-0.03, 0.03)):.2f}" for c in cells)]))
    (folder / f"{name}.csv").write_text("\n".join(lines) + "\n")
    text = re.sub(r"scaling:.*?\n\npricing:", f"scaling:\n  file: {name}.csv\n\npricing:", EXAMPLE.read_text(),
                  flags=re.S)
    (folder / f"{name}.yaml").write_text(text.replace("# yaml-language-server: $schema=../build/schema.json\n", ""))
    return folder / f"{name}.yaml"


def cold_build(project: Path, out: Path) -> tuple[float, float]:
    started = time.perf_counter()
    command = subprocess.Popen([sys.executable, "-m", "reportgen", "build", str(project), "-o", str(out),
                                "--no-cache", "-q"], cwd=ROOT)
    _, status, usage = os.wait4(command.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"building {project.name} failed")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reportgen-bench-scale-") as name:
        folder = Path(name)
        cases = {"default example": EXAMPLE,
                 "20 node counts x 500 repeats": write_project(folder, "repeats", [p for p in REPEATED
                                                                                  for _ in range(500)]),
                 "10,000 distinct node counts": write_project(folder, "distinct", list(range(1, 10_001))),
                 "5,000 distinct + 10 x 500 repeats": write_project(
                     folder, "mix", list(range(1, 5001)) + [1 << k for k in range(1, 11) for _ in range(500)])}
        times: dict[str, list[float]] = {case: [] for case in cases}
        memory: dict[str, float] = dict.fromkeys(cases, 0.0)
        html: dict[str, int] = {}
        for round_ in range(options.rounds):
            for case, project in cases.items():
                seconds, peak = cold_build(project, folder / f"out-{round_}")
                times[case].append(seconds)
                memory[case] = max(memory[case], peak)
                html[case] = (folder / f"out-{round_}" / project.stem / "report.html").stat().st_size
        base = statistics.median(times["default example"])
        for case in cases:
            median = statistics.median(times[case])
            print(f"{case:30s} median {median:6.1f} s ({median / base:4.2f}x the example; target 3x), "
                  f"peak memory {memory[case]:5.0f} MB (target 300 MB), report.html {html[case] / 1e6:.2f} MB "
                  f"(target 1 MB)")


if __name__ == "__main__":
    main()
