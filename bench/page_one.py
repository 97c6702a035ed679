"""The `page_one` step's cost on each example (methods.md#page-1-from-one-set-of-facts): the facts of page 1
computed from the analyses, in process, against the 50 ms the step may add to an analysis; and the `summary` step's
beside it, whose sentences quote every figure with its source (methods.md#every-figure-has-one-source).

    python bench/page_one.py
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reportgen.analysis import REGISTRY, Analysis, analyze  # noqa: E402
from reportgen.analysis.declared import Inputs  # noqa: E402
from reportgen.project.loader import load_project  # noqa: E402

TARGET_MS = 50.0
REPEATS = 20


def step_ms(path: Path, name: str = "page_one") -> tuple[float, float]:
    """A step's median time, and the whole analysis's, in milliseconds."""
    project = load_project(path).project
    inputs = Inputs(project)
    whole: list[float] = []
    for _ in range(5):
        start = time.perf_counter()
        analysis = analyze(project)
        whole.append(time.perf_counter() - start)
    step = next(step for step in REGISTRY if step.name == name)
    before: Analysis = replace(analysis, **{name: None})
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        step.run(inputs, before)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, statistics.median(whole) * 1000


def main() -> None:
    worst = 0.0
    for path in sorted((ROOT / "inputs").glob("*.yaml")):
        page, whole = step_ms(path)
        words, _ = step_ms(path, "summary")
        worst = max(worst, page)
        print(f"{path.name:<28} page_one {page:7.2f} ms, summary {words:6.2f} ms, of an analysis of {whole:8.1f} ms")
    print(f"slowest: {worst:.2f} ms (target {TARGET_MS:.0f} ms): {'ok' if worst <= TARGET_MS else 'over'}")


if __name__ == "__main__":
    main()
