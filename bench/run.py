"""reportgen's benchmarks: `python bench/run.py [--quick]`.

Each case runs several times; the table shows the median and the spread (min–max) in milliseconds, and
bench/results.json keeps the raw figures with the machine they came from. Cold cases start a new Python process,
as a user's command does; in-process cases measure one stage with the libraries already imported.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inputs" / "example.yaml"
sys.path.insert(0, str(ROOT))


@dataclasses.dataclass
class Case:
    name: str
    target_ms: float | None
    seconds: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    def row(self) -> str:
        low, high = min(self.seconds) * 1000, max(self.seconds) * 1000
        target = f"{self.target_ms:8.0f}" if self.target_ms else "       -"
        verdict = "" if not self.target_ms else ("ok" if self.median_ms <= self.target_ms else "SLOW")
        return f"{self.name:<44} {self.median_ms:9.1f} {low:9.1f} {high:9.1f} {target}  {verdict}"


def timed(function: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def command(*args: str) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run([sys.executable, "-m", "reportgen", *args], cwd=ROOT, check=True,
                              stdout=subprocess.DEVNULL)
    return run


def cases(repeats: int, out: Path) -> list[Case]:
    from reportgen.analysis import analyze
    from reportgen.analysis.prediction import predict
    from reportgen.carbon import intensity_for
    from reportgen.project import load_project

    project = load_project(EXAMPLE).project
    intensity = intensity_for(project.energy.location if project.energy else None)
    results = [
        Case("cold check example.yaml", 500, timed(command("check", str(EXAMPLE)), repeats)),
        Case("cold build example → json", None, timed(command("build", str(EXAMPLE), "-o", str(out),
                                                              "--format", "json"), repeats)),
        Case("cold build example → html,json", 1500, timed(command("build", str(EXAMPLE), "-o", str(out),
                                                                   "--format", "html,json"), repeats)),
        Case("cold build example → html,pdf,json", 3000, timed(command("build", str(EXAMPLE), "-o", str(out)),
                                                               repeats)),
        Case("analyses of example (in process)", 50, timed(lambda: analyze(project, intensity=intensity),
                                                           repeats * 4)),
    ]
    for max_nodes in (10**3, 10**4, 10**5, 10**6):
        scaled = dataclasses.replace(project, prediction=dataclasses.replace(project.prediction,
                                                                              max_nodes=max_nodes))
        target = 200 if max_nodes == 10**6 else None
        results.append(Case(f"prediction, max_nodes = {max_nodes:,}", target,
                            timed(lambda scaled=scaled: predict(scaled), repeats * 2)))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="runs per case (default 7)")
    parser.add_argument("--quick", action="store_true", help="3 runs per case")
    arguments = parser.parse_args()
    repeats = 3 if arguments.quick else arguments.repeats
    with tempfile.TemporaryDirectory() as folder:
        measured = cases(repeats, Path(folder))
    print(f"{'case':<44} {'median':>9} {'min':>9} {'max':>9} {'target':>8}  (ms)")
    for case in measured:
        print(case.row())
    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine()}
    (ROOT / "bench" / "results.json").write_text(json.dumps(
        {"machine": machine, "repeats": repeats,
         "cases": [{"name": c.name, "median_ms": c.median_ms, "min_ms": min(c.seconds) * 1000,
                    "max_ms": max(c.seconds) * 1000, "target_ms": c.target_ms} for c in measured]},
        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
