"""A seeded synthetic corpus of known noise: USL curves at 1, 2, 4, 8 and 16 nodes, three repeats each with
log-normal noise of 0.05 (declared as scaling.noise), for the tests of the calibration's coverage and its demotion
(docs/methods.md#how-accurate-each-prediction-is)."""

from __future__ import annotations

import math

import numpy as np

from reportgen.corpus.curve import Curated, Curve, CurveUnit, Hardware, Point, Source, Workload

SCALES = (1, 2, 4, 8, 16)
NOISE = 0.05
REPEATS = 3


def synthetic_curves(count: int, seed: int = 7) -> list[Curve]:
    rng = np.random.default_rng(seed)
    return [_curve(index, rng) for index in range(count)]


def _curve(index: int, rng: np.random.Generator) -> Curve:
    sigma = float(rng.uniform(0.0, 0.05))
    kappa = float(10 ** rng.uniform(-5, -3))
    points = []
    for p in SCALES:
        speedup = p / (1 + sigma * (p - 1) + kappa * p * (p - 1))
        values = tuple(1000.0 / speedup * math.exp(float(rng.normal(0.0, NOISE))) for _ in range(REPEATS))
        points.append(Point(nodes=float(p), values=values))
    return Curve(
        id=f"synthetic-{index:04d}",
        source=Source(licence="none-stated", read="table", repo="tests/synthetic", commit="0" * 40, paths=("-",)),
        curated=Curated(by="the tests", date="2026-11-29", tool="numpy"),
        hardware=Hardware(name=f"synthetic system {index}"),
        workload=Workload(kind="hpc", name="a USL curve", batch="fixed"),
        unit=CurveUnit(node="node", value="time", printed="s"),
        points=tuple(points), project={"scaling": {"noise": NOISE}})
