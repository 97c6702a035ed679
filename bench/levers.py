"""What the goal's levers add to the analysis of each example (docs/methods.md#the-goals-levers).

    python bench/levers.py [--repeats 7]

Each example is analysed once to warm the caches, then the levers step alone (the registry's own, on the analysis
the earlier steps filled) and the whole analysis are timed `--repeats` times, alternated so that both see the same
machine; the medians are printed, with the number of levers found. The target: at most 0.5 s added to a build of
inputs/example.yaml.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

from reportgen.analysis import REGISTRY, Analysis, Inputs, analyze
from reportgen.project.loader import load_project

ROOT = Path(__file__).resolve().parent.parent


def _before_levers(inputs: Inputs) -> Analysis:
    analysis = Analysis()
    for step in REGISTRY:
        if step.name == "levers":
            return analysis
        analysis = replace(analysis, **{step.name: step.run(inputs, analysis)})
    return analysis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    step = next(step for step in REGISTRY if step.name == "levers")
    print(f"{'project':28} {'levers':>6} {'levers step':>12} {'analysis':>10}")
    for path in sorted((ROOT / "inputs").glob("*.yaml")):
        project = load_project(path).project
        inputs = Inputs(project)
        ready = _before_levers(inputs)
        found = step.run(inputs, ready)
        lever_times, analysis_times = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            step.run(inputs, ready)
            lever_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            analyze(project)
            analysis_times.append(time.perf_counter() - start)
        print(f"{path.name:28} {len(found.flips) + len(found.near_misses):6} "
              f"{statistics.median(lever_times) * 1000:9.1f} ms {statistics.median(analysis_times) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
