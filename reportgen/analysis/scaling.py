"""§4 Measure and attribute: speedup, efficiency, lost folds by cause, knee, POP metrics and the fits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reportgen.analysis.common import first_max
from reportgen.analysis.fits import AlphaBetaFit, AmdahlFit, USLFit, fit_alpha_beta, fit_amdahl, fit_usl, slope
from reportgen.analysis.prediction import model_curve, optimum
from reportgen.project.model import Run, Scaling

KNEE_THRESHOLD = 0.05
CAUSES = ("communication", "load-imbalance", "serial-fraction")  # tie order for the knee cause
REMEDIES = {
    "communication": "a better collective schedule, overlap of communication with compute, or gradient compression",
    "load-imbalance": "rebalancing the shards or speculative backup tasks for stragglers",
    "serial-fraction": "shrinking the serial stage (data loading, start-up, the optimizer step on one rank)",
}


@dataclass(frozen=True)
class ScaleRow:
    nodes: int
    time_s: float | None  # T_p; per unit of work in throughput form without work_per_run
    speedup: float
    efficiency: float
    comm_share: float | None
    idle_share: float | None
    karp_flatt: float | None
    lost_folds: float
    lost_serial: float | None  # folds of speedup lost to each cause (breakdown form)
    lost_communication: float | None
    lost_imbalance: float | None
    lost_time_s: dict[str, float] | None  # seconds lost to each cause before apportioning
    imbalance: float | None  # max/mean − 1 of worker compute
    superlinear_compute: bool
    measured_energy_j: float | None
    run: Run


@dataclass(frozen=True)
class PopRow:
    nodes: int
    load_balance: float
    comm_efficiency: float | None
    parallel_efficiency: float | None
    imbalance: float
    workers_s: tuple[float, ...]
    collective_s: float | None


@dataclass(frozen=True)
class ScalingResult:
    form: str
    reference_nodes: int
    per_unit_of_work: bool  # throughput form without work_per_run: times, costs and energy are per unit of work
    rows: tuple[ScaleRow, ...]
    pop: tuple[PopRow, ...]
    knee_nodes: int | None
    knee_score: float  # max(y − x) of Kneedle
    knee_cause: str | None
    knee_cause_inferred: bool  # named from the fits, not from a breakdown
    knee_cause_at: int | None  # the scale whose lost time named the cause
    remedy: str | None
    peak_nodes: int
    first_below_half_efficiency: int | None
    amdahl: AmdahlFit | None
    usl: USLFit | None
    karp_flatt_slope: float | None  # per node; rising: overhead grows with p
    comm_fit: AlphaBetaFit | None
    comm_fit_implied_p_star: int | None


def run_time(run: Run, work_per_run: float | None) -> float | None:
    if run.form == "breakdown":
        return (run.compute or 0.0) + (run.communication or 0.0) + (run.idle or 0.0) + (run.io or 0.0)
    if run.form == "total":
        return run.time
    assert run.throughput is not None
    return (work_per_run if work_per_run is not None else 1.0) / run.throughput


def analyze_scaling(scaling: Scaling | None, *, max_nodes: int = 4096) -> ScalingResult | None:
    if scaling is None or not scaling.runs:
        return None
    runs = sorted(scaling.runs, key=lambda r: r.nodes)
    form = runs[0].form
    assert form is not None
    reference = runs[0]  # p = 1 when measured, else the smallest p (speedups relative to it)
    p_ref = reference.nodes
    times = [run_time(run, scaling.work_per_run) for run in runs]
    t_ref = times[0]
    assert t_ref is not None
    rows = []
    for run, t_p in zip(runs, times, strict=True):
        assert t_p is not None
        q = run.nodes / p_ref
        speedup = run.throughput / reference.throughput if form == "throughput" else t_ref / t_p  # type: ignore[operator]
        rows.append(_row(run, reference, t_p, t_ref, q, speedup, form))
    speedups = [row.speedup for row in rows]
    qs = [row.nodes / p_ref for row in rows]
    knee, score = kneedle([row.nodes for row in rows], speedups)
    cause, inferred, cause_at = _knee_cause(rows, knee, form)
    fits_ok = len(rows) >= 3
    usl = fit_usl([float(r.nodes) for r in rows],
                  [r.run.throughput for r in rows] if form == "throughput" else speedups) if fits_ok else None  # type: ignore[misc]
    kf = [(r.nodes, r.karp_flatt) for r in rows if r.karp_flatt is not None]
    kf_slope = slope([float(p) for p, _ in kf], [e for _, e in kf]) if len(kf) >= 2 else None
    if form != "breakdown" and usl is not None:
        cause, inferred = _likely_cause(usl, rows[-1].nodes), True
    comm_fit, implied = _comm_fit(runs, form, t_ref, p_ref, max_nodes)
    return ScalingResult(
        form=form,
        reference_nodes=p_ref,
        per_unit_of_work=form == "throughput" and scaling.work_per_run is None,
        rows=tuple(rows),
        pop=tuple(_pop(row) for row in rows if row.run.workers),
        knee_nodes=knee,
        knee_score=score,
        knee_cause=cause,
        knee_cause_inferred=inferred,
        knee_cause_at=cause_at,
        remedy=REMEDIES[cause] if cause else None,
        peak_nodes=first_max(rows, key=lambda r: r.speedup).nodes,
        first_below_half_efficiency=next((r.nodes for r in rows if r.efficiency < 0.5), None),
        amdahl=fit_amdahl(qs, speedups) if fits_ok else None,
        usl=usl,
        karp_flatt_slope=kf_slope,
        comm_fit=comm_fit,
        comm_fit_implied_p_star=implied,
    )


def _row(run: Run, reference: Run, t_p: float, t_ref: float, q: float, speedup: float, form: str) -> ScaleRow:
    lost_folds = q - speedup
    karp_flatt = (1.0 / speedup - 1.0 / q) / (1.0 - 1.0 / q) if q > 1 else None
    comm_share = idle_share = None
    lost: dict[str, float | None] = {"serial": None, "communication": None, "imbalance": None}
    lost_time = None
    superlinear = False
    if form == "breakdown":
        assert run.compute is not None and reference.compute is not None
        comm_share = (run.communication or 0.0) / t_p
        idle_share = (run.idle or 0.0) / t_p
        shrink = 1.0 / q  # p_ref / p
        serial = (run.compute + (run.io or 0.0)) - (reference.compute + (reference.io or 0.0)) * shrink
        superlinear = serial < 0
        lost_time = {
            "serial": max(serial, 0.0),  # negative means superlinear compute: clamped, and noted
            "communication": (run.communication or 0.0) - (reference.communication or 0.0) * shrink,
            "imbalance": (run.idle or 0.0) - (reference.idle or 0.0) * shrink,
        }
        lost = _apportion(lost_folds, lost_time)
    workers = run.workers
    imbalance = max(workers) / (sum(workers) / len(workers)) - 1.0 if workers else None
    return ScaleRow(run.nodes, t_p, speedup, speedup / q, comm_share, idle_share, karp_flatt, lost_folds,
                    lost["serial"], lost["communication"], lost["imbalance"], lost_time, imbalance, superlinear,
                    run.energy, run)


def _apportion(lost_folds: float, lost_time: dict[str, float]) -> dict[str, float | None]:
    """Lost folds shared among the causes in proportion to their non-negative lost time.

    When no cause lost time (every scale did at least as well as ideal), the folds (zero or a gain) are put
    on the serial fraction, whose superlinear compute is the only way to beat ideal: the parts still sum to
    lost_folds as results.json promises.
    """
    positive = {cause: max(seconds, 0.0) for cause, seconds in lost_time.items()}
    total = sum(positive.values())
    if total <= 0:
        return {"serial": lost_folds, "communication": 0.0, "imbalance": 0.0}
    # The share first: a subnormal lost time times the folds would underflow to zero before the division.
    return {cause: lost_folds * (seconds / total) for cause, seconds in positive.items()}


def kneedle(nodes: list[int], speedups: list[float]) -> tuple[int | None, float]:
    """Kneedle with x = log2 p and y = S, min–max normalised: the p maximising y − x, if that is ≥ 0.05."""
    if len(nodes) < 3:
        return None, 0.0
    x = np.log2(np.asarray(nodes, dtype=float))
    y = np.asarray(speedups, dtype=float)
    x_span, y_span = x.max() - x.min(), y.max() - y.min()
    if x_span == 0 or y_span == 0:
        return None, 0.0
    difference = (y - y.min()) / y_span - (x - x.min()) / x_span
    index = int(np.argmax(difference))  # first maximum: ties go to the smaller p
    score = float(difference[index])
    return (nodes[index] if score >= KNEE_THRESHOLD else None), score


def _knee_cause(rows: list[ScaleRow], knee: int | None, form: str) -> tuple[str | None, bool, int | None]:
    """At the first scale beyond the knee (the largest without one), the cause that lost the most time."""
    if form != "breakdown" or len(rows) < 2:
        return None, False, None
    beyond = next((r for r in rows if knee is not None and r.nodes > knee), rows[-1])
    assert beyond.lost_time_s is not None
    seconds = {"communication": beyond.lost_time_s["communication"],
               "load-imbalance": beyond.lost_time_s["imbalance"],
               "serial-fraction": beyond.lost_time_s["serial"]}
    largest = max(seconds.values())
    if largest <= 0:
        return None, False, beyond.nodes
    return next(c for c in CAUSES if seconds[c] == largest), False, beyond.nodes


def _likely_cause(usl: USLFit, largest_nodes: int) -> str:
    """Without a breakdown, from the USL fit: Karp–Flatt under USL is e(p) = σ + κp, so at the largest measured
    scale compare the part that grows with p (κp: coherency, i.e. communication) with the flat part (σ: a serial
    fraction, as in Amdahl)."""
    return "communication" if usl.kappa * largest_nodes > usl.sigma else "serial-fraction"


def _pop(row: ScaleRow) -> PopRow:
    workers = row.run.workers
    mean, worst = sum(workers) / len(workers), max(workers)
    load_balance = mean / worst
    comm_efficiency = worst / row.time_s if row.time_s else None
    collective = row.run.communication if row.run.form == "breakdown" else None
    return PopRow(row.nodes, load_balance, comm_efficiency,
                  load_balance * comm_efficiency if comm_efficiency is not None else None,
                  worst / mean - 1.0, workers, collective)


def _comm_fit(runs: list[Run], form: str, t_ref: float, p_ref: int,
              max_nodes: int) -> tuple[AlphaBetaFit | None, int | None]:
    """Fit the ring model to the measured communication column; the node count it implies for this workload."""
    if form != "breakdown":
        return None, None
    fit = fit_alpha_beta([r.nodes for r in runs], [r.communication or 0.0 for r in runs])
    if fit is None or fit.alpha_s < 0 or fit.beta_s < 0:
        return fit, None
    t_comp = (runs[0].compute or 0.0) * p_ref  # single-node compute of the whole run
    return fit, optimum(model_curve(t_comp, fit.alpha_s, fit.beta_s, max_nodes)).p_star
