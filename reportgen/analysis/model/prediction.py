"""Predicted speedup from the alpha-beta communication model of the design's pattern, evaluated with numpy
over 1…max_nodes.
(docs/methods.md#2-predicted-speedup-the-alpha-beta-model)"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Annotated

import numpy as np

from reportgen.analysis.common import TIE_TOLERANCE, powers_of_two
from reportgen.analysis.model.fits import AlphaBetaFit, fit_alpha_bandwidth, fit_alpha_beta
from reportgen.analysis.model.layout import LAYOUT_DOC, LayoutResult
from reportgen.analysis.model.patterns import RING, Pattern, PatternSource, resolve_pattern
from reportgen.keys import Key, derived
from reportgen.project.accuracy_table import Calibration, not_graded
from reportgen.project.model import PatternName, Prediction, Project

SENSITIVITY_SCALES = (0.1, 1.0, 10.0)


@dataclass(frozen=True)
class Curve:
    """The model over every integer p in 1…max_nodes."""

    nodes: np.ndarray
    t_comm: np.ndarray
    t_step: np.ndarray
    speedup: np.ndarray
    comm_ratio: np.ndarray


@dataclass(frozen=True)
class PredictionRow:
    nodes: Annotated[int, Key("node count")]
    t_comp_s: Annotated[float, Key("T_comp / p")]
    t_comm_s: Annotated[float, Key("T_comm(p)")]
    t_step_s: Annotated[float, Key("the predicted step time")]
    speedup: Annotated[float, Key("T_comp / t_step")]
    comm_ratio: Annotated[float, Key("T_comm / (T_comp / p)")]
    # filled in as results.json is written (reportgen.analysis: the α–β time's accuracy on published curves)
    calibration: Annotated[Calibration | None, Key(
        "the α–β time's accuracy on published curves at r = nodes / the largest measured scale (the baseline's "
        "single machine counting as 1 node when nothing is measured): methods.md#how-accurate-each-prediction-is")] \
        = None


@dataclass(frozen=True)
class Sensitivity:
    alpha_scale: Annotated[float, Key("factor applied to α")]
    beta_scale: Annotated[float, Key("factor applied to β")]
    p_star: Annotated[int, Key("the optimum under the scaled model")]
    speedup: Annotated[float, Key("the speedup there")]


@dataclass(frozen=True)
class BusBandwidth:
    """The size-aware fit's bandwidth per node as nccl-tests' bus bandwidth over one (nodes, ranks) it used:
    busbw = algbw × 2(r − 1)/r and B = algbw × 2(p − 1)/p, so busbw = B × ((r − 1)/r) / ((p − 1)/p)."""

    nodes: Annotated[int, Key("node count")]
    ranks: Annotated[int, Key("ranks (GPUs) the collectives ran over")]
    bytes_per_s: Annotated[float, Key("the bus bandwidth")]


@dataclass(frozen=True)
class UslEquivalent:
    sigma: Annotated[float | None, Key("σ = 2β / T_comp, contention")]
    kappa: Annotated[float | None, Key("κ = α / T_comp, coherency")]


@dataclass(frozen=True)
class PredictionResult:
    t_comp_s: Annotated[float, Key("single-node compute time per step, T_comp")]
    alpha_s: Annotated[float, Key("α, the latency term per node, as used")]
    beta_s: Annotated[float, Key("β, the bandwidth term (message bytes / bandwidth), as used")]
    alpha_given_s: float | None
    beta_given_s: float | None
    uses_fit: Annotated[bool, Key("whether α and β are the fit to the measured collectives")]
    max_nodes: Annotated[int, Key("the largest node count evaluated")]
    p_star: Annotated[int, Key("the whole node count of the highest predicted speedup (ties: fewer nodes)")]
    speedup_at_p_star: Annotated[float, Key("the predicted speedup there")]
    efficiency_at_p_star: Annotated[float, Key("speedup / p* there")]
    comm_ratio_at_p_star: Annotated[float, Key("R(p*) = T_comm / T_comp there")]
    p_comm_dominated: Annotated[int | None, Key("the first node count where communication exceeds computation")]
    speedup_at_p_comm_dominated: Annotated[float | None, Key("the predicted speedup there")]
    # √(T_comp / α), the seeds' rule for the ring; None for other patterns
    rule_of_thumb_nodes: Annotated[float | None, Key("√(T_comp / α): the textbook estimate of the ring's optimum "
                                                     "(null for other patterns)")]
    continuous_optimum_nodes: Annotated[float | None, Key(
        "where dT_p/dp = 0 (the ring: √((T_comp − 2β)/α), when T_comp > 2β); \"inf\" when T_p keeps falling")]
    rows: Annotated[tuple[PredictionRow, ...], Key("the predicted curve at the report's node counts")]
    sensitivity: Annotated[tuple[Sensitivity, ...], Key("p* and its speedup with α and β scaled")]
    fit: Annotated[AlphaBetaFit | None, Key("α and β fitted to the measured collectives")]
    usl_sigma: float | None  # 2β / T_comp: the ring's USL equivalent (None for other patterns)
    usl_kappa: float | None  # α / T_comp
    planned_nodes: int | None
    curve: Curve
    capped: Annotated[bool, Key("p* is max_nodes: the optimum lies beyond the range evaluated")]
    # the p* the fitted α and β imply (same T_comp and range), when the fit is usable
    fit_p_star: Annotated[int | None, Key("the p* the fitted α and β imply")]
    fit_speedup_at_p_star: float | None
    fit_continuous_optimum_nodes: Annotated[float | None, Key("the continuous optimum of the fitted model")]
    fit_stands_in: bool = False  # α or β was not given: the prediction uses the fitted values instead
    bus_bandwidths: Annotated[tuple[BusBandwidth, ...], Key(
        "the size-aware fit's bandwidth per node as nccl-tests' bus bandwidth, at each node and rank count the fit "
        "used (B × ((r − 1)/r) / ((p − 1)/p)): compare with the log's busbw column")] = ()
    pattern: Pattern = RING
    pattern_source: Annotated[PatternSource, Key(
        "where the pattern was read: prediction.pattern, the layout's data-parallel group, the communication slot, "
        "or the ring by default")] = "default"
    pattern_note: str | None = None  # why the ring was assumed (a hybrid or a free-text slot)
    # Filled in by analyze() once the layout and the measurements are known, so results.json keeps them under
    # prediction (docs/reference/results.md): design.parallelism's layout, and the model check's largest departure
    layout: Annotated[LayoutResult | None, Key(LAYOUT_DOC)] = None
    model_departure: Annotated[float | None, Key("the largest |S_pred − S_meas| / S_meas at the measured "
                                                 "scales")] = None
    # the α–β speedup's accuracy on published curves at p* and p_dom over the largest measured scale (filled in as
    # results.json is written; methods.md#how-accurate-each-prediction-is)
    speedup_at_p_star_calibration: Annotated[Calibration | None, Key(
        "the α–β speedup's accuracy at r = p* / the largest measured scale")] = None
    efficiency_at_p_star_calibration: Annotated[Calibration | None, Key("as speedup_at_p_star_calibration")] = None
    speedup_at_p_comm_dominated_calibration: Annotated[Calibration | None, Key(
        "the α–β speedup's accuracy at r = p_dom / the largest measured scale")] = None

    @derived(Key("p* is a location, which the corpus does not grade: {predictor: alpha-beta, status: not-graded}"))
    def p_star_calibration(self) -> Calibration:
        return not_graded("alpha-beta")

    @derived(Key("p_dom is a location: not graded"))
    def p_comm_dominated_calibration(self) -> Calibration:
        return not_graded("alpha-beta")

    @derived(Key("R(p*) describes a location: not graded"))
    def comm_ratio_at_p_star_calibration(self) -> Calibration:
        return not_graded("alpha-beta")

    @derived(Key("the USL coefficients the alpha-beta model corresponds to (the ring's only: null for other "
                 "patterns)"))
    def usl_equivalent(self) -> UslEquivalent:
        return UslEquivalent(self.usl_sigma, self.usl_kappa)

    @derived(Key("the communication pattern T_comm(p) follows", name="pattern"))
    def pattern_name(self) -> PatternName:
        return self.pattern.name

    @derived(Key("where the formula comes from, and what it leaves out"))
    def formula_source(self) -> str:
        return self.pattern.source

    @property
    def sensitivity_speedups(self) -> tuple[float, float]:
        """The lowest and highest speedup at p* over the nine α × β cells."""
        speedups = [cell.speedup for cell in self.sensitivity]
        return min(speedups), max(speedups)

    @property
    def sensitivity_uniform(self) -> bool:
        """Every α × β cell has the same p*: the table says nothing a sentence would not."""
        return len({cell.p_star for cell in self.sensitivity}) == 1

    def at(self, nodes: int) -> PredictionRow:
        """The model at any node count, inside the evaluated range or beyond it."""
        return _row(self.curve, nodes, self.t_comp_s, self.alpha_s, self.beta_s, self.pattern)

    @derived(Key("the T_comm(p) formula used, as the methodology prints it"))
    def formula(self) -> str:
        return self.pattern.formula


@dataclass(frozen=True)
class Optimum:
    p_star: int
    speedup: float


@dataclass(frozen=True)
class Grid:
    """The p-dependent terms of the model over 1…max_nodes, computed once and reused for every α and β."""

    nodes: np.ndarray  # p
    inverse: np.ndarray  # 1/p
    latency: np.ndarray  # a(p): T_comm's coefficient of α (the ring's p − 1)
    bandwidth: np.ndarray  # b(p): its coefficient of β (the ring's 2(p − 1)/p)

    @classmethod
    def of(cls, max_nodes: int, pattern: Pattern | None = None) -> Grid:
        p = np.arange(1, max_nodes + 1, dtype=float)
        latency, bandwidth = (pattern or Pattern()).coefficients(p)
        return cls(p, 1.0 / p, latency, bandwidth)

    def t_step(self, t_comp: float, alpha: float, beta: float) -> np.ndarray:
        return t_comp * self.inverse + alpha * self.latency + beta * self.bandwidth


def model_curve(t_comp: float, alpha: float, beta: float, max_nodes: int, grid: Grid | None = None,
                pattern: Pattern | None = None) -> Curve:
    """T_comm(p) = α·a(p) + β·b(p) (the ring: α(p − 1) + 2β(p − 1)/p; 0 at p = 1); T_p = T_comp/p + T_comm(p);
    S = T_comp/T_p."""
    grid = grid or Grid.of(max_nodes, pattern)
    t_comm = alpha * grid.latency + beta * grid.bandwidth  # exactly 0 at p = 1
    per_node = t_comp * grid.inverse
    t_step = per_node + t_comm
    return Curve(grid.nodes, t_comm, t_step, t_comp / t_step, t_comm / per_node)


def optimum_of(t_step: np.ndarray, t_comp: float) -> Optimum:
    """p* = argmin T_p; values within TIE_TOLERANCE of the minimum are ties, resolved to the smallest p."""
    best = t_step.min()
    index = int(np.argmax(t_step <= best * (1.0 + TIE_TOLERANCE)))
    return Optimum(index + 1, t_comp / float(t_step[index]))


def optimum(curve: Curve) -> Optimum:
    return optimum_of(curve.t_step, float(curve.t_step[0]))  # T_1 = T_comp: no communication on one node


def comm_dominated(curve: Curve) -> int | None:
    """p_dom: the smallest p with R(p) ≥ 1, or None in the range."""
    reached = curve.comm_ratio >= 1.0 - TIE_TOLERANCE
    return int(np.argmax(reached)) + 1 if reached.any() else None


def _row(curve: Curve, nodes: int, t_comp: float, alpha: float, beta: float, pattern: Pattern) -> PredictionRow:
    if nodes <= len(curve.nodes):
        i = nodes - 1
        return PredictionRow(nodes, t_comp / nodes, float(curve.t_comm[i]), float(curve.t_step[i]),
                             float(curve.speedup[i]), float(curve.comm_ratio[i]))
    t_comm = pattern.t_comm(nodes, alpha, beta)  # beyond the range (a planned p): same formula
    t_step = t_comp / nodes + t_comm
    return PredictionRow(nodes, t_comp / nodes, t_comm, t_step, t_comp / t_step, t_comm / (t_comp / nodes))


def given_alpha(project: Project) -> float | None:
    """α as the project gives it: prediction.alpha, else the hardware's network latency."""
    spec, hardware = project.prediction, project.hardware
    if spec is not None and spec.alpha is not None:
        return spec.alpha
    return hardware.network_latency if hardware else None


def predict(project: Project, *, implausible: frozenset[int] = frozenset()) -> PredictionResult | None:
    """The prediction, or None when T_comp, α or β cannot be determined; `implausible` the places among
    prediction.collectives of the ones that cannot be right (faster than their link), which the fit leaves out."""
    spec = project.prediction
    if spec is None or spec.t_comp is None:
        return None
    measured = replace(spec, collectives=tuple(c for i, c in enumerate(spec.collectives) if i not in implausible)) \
        if implausible else spec  # what the fit reads: the collectives that can be right
    hardware = project.hardware
    alpha_given = given_alpha(project)
    beta_given = spec.beta
    if beta_given is None and spec.message_bytes is not None and hardware and hardware.network_bandwidth:
        beta_given = spec.message_bytes / hardware.network_bandwidth
    resolved = resolve_pattern(project)
    pattern = resolved.pattern
    fit = _fit(measured, pattern)
    fit_usable = fit is not None and fit.alpha_s >= 0 and fit.beta_s >= 0
    # Without a given α or β the measured collectives are the only evidence of the network: the fit predicts
    # (every number whose inputs are present), and the report says so.
    fit_stands_in = fit_usable and (alpha_given is None or beta_given is None)
    uses_fit = (spec.use_fit or fit_stands_in) and fit_usable
    alpha = fit.alpha_s if uses_fit and fit else alpha_given
    beta = fit.beta_s if uses_fit and fit else beta_given
    if alpha is None or beta is None:
        return None
    available = project.hardware.nodes_available if project.hardware else None
    # p* and the plan are capped at what the hardware holds: the model is evaluated up to the nodes available
    t_comp, max_nodes = spec.t_comp, min(spec.max_nodes, available or spec.max_nodes)
    grid = Grid.of(max_nodes, pattern)
    curve = model_curve(t_comp, alpha, beta, max_nodes, grid)
    best = optimum(curve)
    p_dom = comm_dominated(curve)
    planned = project.design.nodes if project.design else None
    wanted = set(powers_of_two(max_nodes))
    wanted |= {best.p_star} | ({p_dom} if p_dom else set()) | ({planned} if planned else set())
    rows = tuple(_row(curve, p, t_comp, alpha, beta, pattern) for p in sorted(wanted))
    star = rows[[r.nodes for r in rows].index(best.p_star)]
    fit_best = optimum_of(grid.t_step(t_comp, fit.alpha_s, fit.beta_s), t_comp) if fit and fit_usable else None
    return PredictionResult(
        t_comp_s=t_comp,
        alpha_s=alpha,
        beta_s=beta,
        alpha_given_s=alpha_given,
        beta_given_s=beta_given,
        uses_fit=uses_fit,
        max_nodes=max_nodes,
        p_star=best.p_star,
        speedup_at_p_star=best.speedup,
        efficiency_at_p_star=best.speedup / best.p_star,
        comm_ratio_at_p_star=star.comm_ratio,
        p_comm_dominated=p_dom,
        speedup_at_p_comm_dominated=float(curve.speedup[p_dom - 1]) if p_dom else None,
        rule_of_thumb_nodes=(math.sqrt(t_comp / alpha) if alpha > 0 else math.inf) if pattern.ring_like else None,
        continuous_optimum_nodes=pattern.continuous_optimum(t_comp, alpha, beta),
        rows=rows,
        sensitivity=_sensitivity(t_comp, alpha, beta, grid),
        fit=fit,
        usl_sigma=2 * beta / t_comp if pattern.ring_like else None,
        usl_kappa=alpha / t_comp if pattern.ring_like else None,
        planned_nodes=planned,
        curve=curve,
        capped=best.p_star == max_nodes and max_nodes > 1,
        fit_p_star=fit_best.p_star if fit_best else None,
        fit_speedup_at_p_star=fit_best.speedup if fit_best else None,
        fit_continuous_optimum_nodes=pattern.continuous_optimum(t_comp, fit.alpha_s, fit.beta_s)
        if fit and fit_usable else None,
        fit_stands_in=fit_stands_in,
        bus_bandwidths=bus_bandwidths(measured, fit) if pattern.ring_like else (),
        pattern=pattern,
        pattern_source=resolved.source,
        pattern_note=resolved.note,
    )


def bus_bandwidths(spec: Prediction, fit: AlphaBetaFit | None) -> tuple[BusBandwidth, ...]:
    """The size-aware fit's bandwidth per node as nccl-tests' busbw, for the (nodes, ranks) of the collectives it
    used, so that it can be checked against the log's busbw column."""
    if fit is None or fit.bandwidth_bytes_per_s is None or not math.isfinite(fit.bandwidth_bytes_per_s):
        return ()
    floor = fit.min_bytes or 0.0
    pairs = sorted({(c.nodes, c.ranks) for c in spec.collectives
                    if c.ranks and c.nodes > 1 and c.ranks > 1 and (c.bytes or 0.0) >= floor})
    return tuple(BusBandwidth(p, r, fit.bandwidth_bytes_per_s * ((r - 1) / r) / ((p - 1) / p)) for p, r in pairs if r)


def _fit(spec: Prediction, pattern: Pattern) -> AlphaBetaFit | None:
    """α and β from the measured collectives, by least squares of the pattern's own T_comm: size-aware when they
    carry message bytes (nccl-tests), else over node counts."""
    collectives = spec.collectives
    if collectives and all(c.bytes is not None for c in collectives) and spec.message_bytes is not None:
        return fit_alpha_bandwidth([c.nodes for c in collectives], [c.bytes or 0.0 for c in collectives],
                                   [c.time for c in collectives], message_bytes=spec.message_bytes,
                                   min_bytes=spec.fit_min_bytes, coefficients=pattern.coefficients)
    return fit_alpha_beta([c.nodes for c in collectives], [c.time for c in collectives],
                          coefficients=pattern.coefficients)


def _sensitivity(t_comp: float, alpha: float, beta: float, grid: Grid) -> tuple[Sensitivity, ...]:
    cells = []
    for alpha_scale in SENSITIVITY_SCALES:
        for beta_scale in SENSITIVITY_SCALES:
            best = optimum_of(grid.t_step(t_comp, alpha * alpha_scale, beta * beta_scale), t_comp)
            cells.append(Sensitivity(alpha_scale, beta_scale, best.p_star, best.speedup))
    return tuple(cells)

