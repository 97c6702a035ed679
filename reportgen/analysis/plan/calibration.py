"""η, the share of the peak the compute phases reach, fitted to the measured runs before any layout is ranked
(methods.md#calibration-from-the-measured-runs): each run is taken to be of the declared layout at its node count,
and the model's step C/η + Y (C: compute, recomputation and bubble at the peak; Y: the communication) is fitted to
the measured steps by least squares of the relative residual."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.measured.scaling import ScaleRow, ScalingResult
from reportgen.analysis.model.columns import Layouts
from reportgen.analysis.model.layout_memory import declared_columns
from reportgen.analysis.model.layout_search import POLICY_CODE, STEP_TERMS, StepModel
from reportgen.analysis.model.micro_batch import (
    DEFAULT_SATURATION,
    MicroBatchEfficiency,
    MicroBatchRun,
    SaturationSource,
    fit_saturation,
    gemm_size,
    relative,
)
from reportgen.keys import Key, derived
from reportgen.project.model import Project

EfficiencySource = Literal["measured", "given", "none"]
SPREAD = 0.10  # a residual beyond this: the model does not describe the scaling of this system


@dataclass(frozen=True)
class CalibrationRun:
    nodes: Annotated[float, Key("the run's node count")]
    data: Annotated[int, Key("d at that scale: nodes × g / (t·p)")]
    micro_batches: Annotated[int, Key("m there: B / (b·d)")]
    measured_step_s: Annotated[float, Key("the run's step: its time × B·s / its tokens")]
    predicted_step_s: Annotated[float, Key("the model's step at the fitted η")]

    @derived(Key("predicted / measured − 1"))
    def residual(self) -> float:
        return self.predicted_step_s / self.measured_step_s - 1.0


@dataclass(frozen=True)
class Efficiency:
    value: Annotated[float, Key("η")]
    source: Annotated[EfficiencySource, Key("measured (fitted to the runs), given (plan_search.efficiency) or none "
                                            "(η = 1: every time a floor at the peak)")]
    runs: Annotated[tuple[CalibrationRun, ...], Key("each run the fit used, with its residual")]
    left_out: tuple[tuple[float, str], ...] = ()  # (nodes, why) of the runs the fit could not use
    above_peak: bool = False  # η > 1, or a run shorter than its modelled communication

    @derived(Key("the largest |residual| (null without a measured run)"))
    def max_abs_residual(self) -> float | None:
        return max((abs(run.residual) for run in self.runs), default=None)

    @property
    def spread(self) -> bool:
        found = self.max_abs_residual
        return found is not None and found > SPREAD


def measured_step(row: ScaleRow, form: str | None, project: Project, batch_tokens: float,
                  flops_hardware: float) -> float | None:
    """A run's step in seconds: its time × B·s / its tokens (total or breakdown form), B·s / X (tokens a second),
    B·s·F_hw / X (FLOP a second)."""
    if form in ("total", "breakdown"):
        return row.time_s * batch_tokens / row.tokens if row.time_s and row.tokens else None
    throughput = row.run.throughput
    if form != "throughput" or not throughput:
        return None
    if project.throughput_counts == "token":
        return batch_tokens / throughput
    if project.throughput_counts == "FLOP":
        return batch_tokens * flops_hardware / throughput
    return None


SCALED_TERMS = ("compute", "recompute", "bubble", "imbalance")  # C: the terms that scale with 1/η
ETA_ROUNDS = 20  # context parallelism's exposed exchange depends on η: the fit is repeated until η settles
ETA_SETTLED = 1e-9


@dataclass(frozen=True)
class _Point:
    nodes: float
    data: int
    micro_batches: int
    micro_batch: int
    step: float  # measured
    model: StepModel  # at the run's global batch, with the declared stages
    layouts: Layouts

    def scaled(self) -> float:
        """C: the compute phases at the peak and at full micro-batch efficiency (η = 1, ρ = 1)."""
        terms = replace(self.model, saturation=0.0).terms(self.layouts, 1.0)
        return sum(float(terms[name][0]) for name in SCALED_TERMS)

    def fixed(self, eta: float, saturation: float) -> float:
        """Y: the communication at this η and x₀ (context parallelism's exchange hides behind attention, whose
        time depends on both)."""
        terms = replace(self.model, saturation=saturation).terms(self.layouts, eta)
        return sum(float(terms[name][0]) for name in STEP_TERMS if name not in SCALED_TERMS)


@dataclass(frozen=True)
class Calibrated:
    efficiency: Efficiency
    micro_batch: MicroBatchEfficiency


def calibrate(project: Project, scaling: ScalingResult | None, model: StepModel, *,
              given: float | None) -> Calibrated:
    """η (and the micro-batch saturation x₀) from the runs at the declared layout; else the given ones; else η = 1
    and Narayanan's x₀ (methods.md#micro-batch-efficiency)."""
    points, left_out = _points(project, scaling, model)
    options = project.plan_search
    stated = options.micro_batch_saturation if options else None
    saturation = stated if stated is not None else DEFAULT_SATURATION
    source: SaturationSource = "given" if stated is not None else "default"
    shape = model.shape
    if not points:
        micro = MicroBatchEfficiency(saturation, source, model.reference_size, ())
        efficiency = Efficiency(given, "given", (), tuple(left_out)) if given is not None \
            else Efficiency(1.0, "none", (), tuple(left_out))
        return Calibrated(efficiency, micro)
    steps = np.array([point.step for point in points])
    sizes = gemm_size(np.array([point.micro_batch for point in points]), shape.sequence,
                      np.array([int(point.layouts.context[0]) for point in points]), shape.hidden)
    scaled = np.array([point.scaled() for point in points])
    several = len(set(sizes.tolist())) >= 2
    eta, inverted = 1.0, False
    for _ in range(ETA_ROUNDS):
        fixed = np.array([point.fixed(eta, saturation) for point in points])
        if several:
            fit = fit_saturation(scaled, fixed, steps, sizes)
            inverted = fit.weight <= 0  # larger micro-batches slower per token: no saturation is fitted
            saturation, source = (0.0, "fitted") if inverted else (fit.saturation, "fitted")
            fitted = _eta(scaled, fixed, steps) if inverted else fit.eta(model.reference_size)
        else:
            fitted = _eta(scaled / relative(sizes, model.reference_size, saturation), fixed, steps)
        settled = not np.isfinite(fitted) or abs(fitted - eta) < ETA_SETTLED
        eta = fitted
        if settled:
            break
    rho = relative(sizes, model.reference_size, saturation)
    runs = tuple(CalibrationRun(point.nodes, point.data, point.micro_batches, point.step, c / (eta * r) + y)
                 for point, c, r, y in zip(points, scaled, rho, fixed, strict=True))
    above = not 0 < eta <= 1.0 or bool(np.any(steps <= fixed))
    micro = MicroBatchEfficiency(saturation, source, model.reference_size,
                                 tuple(MicroBatchRun(point.nodes, point.micro_batch, float(x))
                                       for point, x in zip(points, sizes, strict=True)),
                                 tuple(point.nodes for point in points) if inverted else ())
    return Calibrated(Efficiency(eta, "measured", runs, tuple(left_out), above), micro)


def _eta(scaled: np.ndarray, fixed: np.ndarray, steps: np.ndarray) -> float:
    """1/η = Σ C_n(step_n − Y_n)/step_n² / Σ C_n²/step_n² (least squares of the relative residual)."""
    inverse = float(np.sum(scaled * (steps - fixed) / steps**2) / np.sum(scaled**2 / steps**2))
    return 1.0 / inverse if inverse > 0 else float("inf")


def _points(project: Project, scaling: ScalingResult | None,
            model: StepModel) -> tuple[list[_Point], list[tuple[float, str]]]:
    """Each run taken to be of the declared layout at its node count and its micro-batch size, with its measured
    step; the runs left out and why."""
    layout = project.design.parallelism if project.design else None
    points: list[_Point] = []
    left_out: list[tuple[float, str]] = []
    if layout is None or scaling is None or project.serving:
        return points, left_out
    g, shape = model.devices_per_node, model.shape
    planned = project.design.nodes if project.design else None
    for row in scaling.rows:
        micro_batch = row.run.micro_batch or shape.micro_batch
        d = row.nodes * g / layout.model_parallel
        batch = model.global_batch * (row.nodes / planned if scaling.mode == "weak" and planned else 1.0)
        m = batch / (micro_batch * d) if d else 0.0
        if d < 1 or d != int(d) or m < 1 or m != int(m) or batch != int(batch):
            left_out.append((row.nodes, f"d = {d:g} and m = {m:g} there are not whole numbers"))
            continue
        step = measured_step(row, scaling.form, project, batch * shape.sequence,
                             float(model.flops_hardware[POLICY_CODE[layout.recompute]]))
        if step is None:
            left_out.append((row.nodes, "neither its tokens nor a throughput in tokens or FLOP per second"))
            continue
        at = model.at_declared(project, int(batch))
        points.append(_Point(row.nodes, int(d), int(m), micro_batch, step, at,
                             declared_columns(layout, int(d), micro_batch, micro_batches=int(m))))
    return points, left_out
