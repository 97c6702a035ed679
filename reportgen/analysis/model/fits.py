"""Least-squares fits shared by the prediction and the measured-scaling analyses."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from reportgen.keys import Key, derived
from reportgen.project.accuracy_table import Calibration, not_graded


@dataclass(frozen=True)
class AlphaBetaFit:
    alpha_s: Annotated[float, Key("fitted α")]
    beta_s: Annotated[float, Key("fitted β")]
    residual_s: Annotated[float, Key("root-mean-square residual of the fit")]
    # the link bandwidth B of the size-aware fit (β = message bytes / B)
    bandwidth_bytes_per_s: Annotated[float | None, Key("link bandwidth of the size-aware fit")] = None
    min_bytes: Annotated[float | None, Key("the smallest message size the size-aware fit used")] = None
    points: Annotated[int, Key("measurements the fit used (0: the two-point exact solution)")] = 0


@dataclass(frozen=True)
class AmdahlFit:
    serial_fraction: Annotated[float, Key("s")]
    max_speedup: Annotated[float, Key("1 / s")]  # inf when f ≤ 0


@dataclass(frozen=True)
class USLFit:
    sigma: Annotated[float, Key("σ, contention")]
    kappa: Annotated[float, Key("κ, coherency")]
    gamma: Annotated[float, Key("γ, single-node scale")]
    # √((1 − σ)/κ) when κ > 0 and σ < 1
    peak_nodes: Annotated[float | None, Key("√((1 − σ)/κ), the continuous peak")]
    peak_whole_nodes: Annotated[int | None, Key("the whole concurrency beside the peak with the larger predicted "
                                                "capacity (ties: the smaller)")] = None
    peak_capacity: Annotated[float | None, Key("X at the continuous peak: the predicted peak throughput "
                                               "(throughput form, in its work per second) or speedup")] = None

    @derived(Key("the peak is a location, which the corpus does not grade: {predictor: usl, status: not-graded}"))
    def peak_nodes_calibration(self) -> Calibration:
        return not_graded("usl")


# T_comm(p) = α·a(p) + β·b(p): a pattern's two coefficient columns at the given node counts
Coefficients = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def ring_coefficients(nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p − 1, 2(p − 1)/p): the ring all-reduce's."""
    return nodes - 1.0, 2.0 * (nodes - 1.0) / nodes


def _separable(basis: np.ndarray) -> bool:
    """The two columns can be told apart: gossip's k(α + β), or a tree's points all at one ⌈log2 p⌉, cannot."""
    return bool(np.linalg.matrix_rank(basis / np.maximum(np.abs(basis).max(axis=0), 1e-300)) == 2)


def fit_alpha_beta(nodes: list[float], times: list[float],
                   coefficients: Coefficients = ring_coefficients) -> AlphaBetaFit | None:
    """Least squares of t = α·a(p) + β·b(p) (the ring's α(p − 1) + 2β(p − 1)/p by default) over points with
    p > 1; None without two distinct p > 1 or when the pattern's columns cannot be told apart there.

    Exact with two points. Negative values are returned as they are: the caller reports them (bad-fit).
    """
    pairs = [(p, t) for p, t in zip(nodes, times, strict=True) if p > 1]
    if len({p for p, _ in pairs}) < 2:
        return None
    p = np.array([p for p, _ in pairs], dtype=float)
    t = np.array([t for _, t in pairs], dtype=float)
    basis = np.column_stack(coefficients(p))
    if not _separable(basis):
        return None
    (alpha, beta), *_ = np.linalg.lstsq(basis, t, rcond=None)
    alpha, beta = _without_noise(float(alpha), t), _without_noise(float(beta), t)
    residual = _rms(basis @ np.array([alpha, beta]) - t, t)
    return AlphaBetaFit(alpha, beta, residual)


def _without_noise(coefficient: float, values: np.ndarray) -> float:
    """A coefficient within rounding noise of zero is zero: an exact fit of a purely bandwidth-bound column gave
    α = −4.7 × 10⁻¹⁵ s, printed as a negative latency and read as a bad fit."""
    return 0.0 if abs(coefficient) <= 1e-9 * float(np.max(np.abs(values))) else coefficient


def _rms(errors: np.ndarray, values: np.ndarray) -> float:
    """Root-mean-square residual; rounding noise of an exact fit (two points) is reported as exactly 0."""
    rms = float(np.sqrt(np.mean(errors**2)))
    return 0.0 if rms <= 1e-9 * float(np.max(np.abs(values))) else rms


def fit_alpha_bandwidth(nodes: list[int], sizes: list[float], times: list[float], *, message_bytes: float,
                        min_bytes: float | None = None,
                        coefficients: Coefficients = ring_coefficients) -> AlphaBetaFit | None:
    """Least squares of t = α·a(p) + b(p) · n / B (the ring's α(p − 1) + 2(p − 1)/p · n / B) over the collectives
    of at least `min_bytes`.

    The default floor is the measured size nearest the model's message (on a log scale) and every larger one: a
    straight line fits badly across the protocol changes between small and large messages. With fewer than two
    distinct points above the floor, the two largest sizes are used. β = message_bytes / B; a negative α or 1/B
    is returned as it is (the caller reports it).
    """
    points = sorted({(p, n): t for p, n, t in zip(nodes, sizes, times, strict=True) if p > 1}.items())
    if len(points) < 2:
        return None
    measured = sorted({n for (_, n), _ in points})
    floor = min_bytes if min_bytes is not None else min(
        measured, key=lambda n: (abs(math.log(n / message_bytes)) if n > 0 else math.inf, -n))
    used = [(p, n, t) for (p, n), t in points if n >= floor]
    if len({(p, n) for p, n, _ in used}) < 2:
        largest = sorted(measured)[-2:]
        used = [(p, n, t) for (p, n), t in points if n in largest]
        floor = min(largest)
    if len(used) < 2:
        return None
    p = np.array([u[0] for u in used], dtype=float)
    n = np.array([u[1] for u in used], dtype=float)
    t = np.array([u[2] for u in used], dtype=float)
    latency, per_byte = coefficients(p)
    columns = np.column_stack((latency, per_byte * n))
    if not _separable(columns):
        return None
    (alpha, inverse_bandwidth), *_ = np.linalg.lstsq(columns, t, rcond=None)
    residual = _rms(columns @ np.array([alpha, inverse_bandwidth]) - t, t)
    bandwidth = 1.0 / inverse_bandwidth if inverse_bandwidth > 0 else math.inf
    return AlphaBetaFit(float(alpha), float(message_bytes * inverse_bandwidth), residual, float(bandwidth),
                        float(floor), len(used))


def fit_amdahl(q: list[float], speedup: list[float]) -> AmdahlFit | None:
    """Least squares of 1/S − 1/q = f(1 − 1/q) over q > 1 (a line through the origin)."""
    points = [(qi, si) for qi, si in zip(q, speedup, strict=True) if qi > 1]
    if not points:
        return None
    a = np.array([1.0 / s - 1.0 / qi for qi, s in points])
    b = np.array([1.0 - 1.0 / qi for qi, _ in points])
    f = float(a @ b / (b @ b))
    return AmdahlFit(f, 1.0 / f if f > 0 else math.inf)


def usl_capacity(p: np.ndarray, gamma: float, sigma: float, kappa: float) -> np.ndarray:
    capacity: np.ndarray = gamma * p / _usl_denominator(p, sigma, kappa)
    return capacity


def _usl_denominator(p: np.ndarray, sigma: float, kappa: float) -> np.ndarray:
    denominator: np.ndarray = 1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0)
    return denominator


GRID_POINTS = 400


def fit_usl(nodes: list[float], capacity: list[float], *, near: USLFit | None = None) -> USLFit | None:
    """X(p) = γp / (1 + σ(p − 1) + κp(p − 1)) by bounded nonlinear least squares (σ, κ ≥ 0, γ free).

    Projected Levenberg–Marquardt from several starts (`_bounded_least_squares`). Written with numpy rather than
    scipy.optimize.least_squares, whose import alone took 0.28 s of every cold build; tests check that both
    solvers reach the same minimum. `near`: a fit to nearly the same points (the outlier screen's fit to all the
    scales, for its fits without one): started from it and from the grid only, a third of the work.
    """
    if len(nodes) < 3:
        return None
    p = np.asarray(nodes, dtype=float)
    x = np.asarray(capacity, dtype=float)
    scale = float(np.max(np.abs(x)))  # fit on normalised capacity so the tolerances mean the same at any scale
    y = x / scale
    gamma0 = float(y[0] / p[0])
    starts = [np.array([near.gamma / scale, near.sigma, near.kappa])] if near is not None else [
        np.array([gamma0, sigma0, kappa0])
        for sigma0, kappa0 in ((0.01, 1e-4), (0.1, 1e-3), (1e-3, 1e-6), (0.5, 0.0), (0.0, 1e-4))]
    # The grid only places a start, so it is searched on at most GRID_POINTS evenly spread points: over all 10,000
    # points of a large project its σ × κ × points arrays held 380 MB. The fit itself uses every point.
    spread = np.unique(np.linspace(0, len(p) - 1, min(len(p), GRID_POINTS)).round().astype(int))
    starts.append(_usl_grid_start(p[spread], y[spread]))
    lower = np.array([-np.inf, 0.0, 0.0])
    fits = [_bounded_least_squares(lambda v: _usl_residuals(p, y, v), lambda v: _usl_jacobian(p, v), start,
                                   lower) for start in starts]
    least = min(cost for _, cost in fits)
    # Of the fits as good as the best, the one with most parameters on a bound: exact Amdahl data would otherwise
    # give a κ of 10⁻¹⁹ and report a peak at 10⁹ nodes.
    tied = [v for v, cost in fits if cost <= least * (1 + 1e-9) + 1e-24]
    best = max(tied, key=lambda v: int(v[1] == 0.0) + int(v[2] == 0.0))
    gamma, sigma, kappa = (float(value) for value in best)
    return usl_fit_with_peak(sigma, kappa, gamma * scale)


def usl_fit_with_peak(sigma: float, kappa: float, gamma: float) -> USLFit:
    """The fit with its peak as the USL literature reports it (R's `usl`: peak.scalability): the continuous
    concurrency √((1 − σ)/κ), the best whole concurrency beside it, and the capacity X predicted there."""
    if not (kappa > 0 and sigma < 1):
        return USLFit(sigma, kappa, gamma, None)
    peak = math.sqrt((1.0 - sigma) / kappa)
    below, above = max(1, math.floor(peak)), max(1, math.ceil(peak))
    capacity = usl_capacity(np.array([peak, below, above], dtype=float), gamma, sigma, kappa)
    whole = below if capacity[1] >= capacity[2] else above
    return USLFit(sigma, kappa, gamma, peak, whole, float(capacity[0]))


def _usl_grid_start(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The best (γ, σ, κ) on a log grid of σ and κ (zero included), γ solved exactly for each: the model is
    linear in γ. Noisy, sparse data can have several local minima; this start lands in the right basin."""
    sigma = np.concatenate(([0.0], np.logspace(-6, 1, 36)))[:, None, None]
    kappa = np.concatenate(([0.0], np.logspace(-10, 0, 41)))[None, :, None]
    shape = p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))  # σ × κ × points
    gamma = (shape @ y) / np.maximum(np.einsum("ijk,ijk->ij", shape, shape), 1e-300)
    cost = np.sum((gamma[..., None] * shape - y) ** 2, axis=-1)
    i, j = np.unravel_index(int(np.argmin(cost)), cost.shape)
    return np.array([gamma[i, j], sigma[i, 0, 0], kappa[0, j, 0]])


def _usl_residuals(p: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Residuals of the USL at (γ, σ, κ)."""
    gamma, sigma, kappa = v
    residuals: np.ndarray = usl_capacity(p, gamma, sigma, kappa) - y
    return residuals


def _usl_jacobian(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The residuals' Jacobian at (γ, σ, κ)."""
    gamma, sigma, kappa = v
    denominator = _usl_denominator(p, sigma, kappa)
    slope_in_denominator = -(gamma * p / denominator) / denominator
    jacobian = np.empty((len(p), 3))
    jacobian[:, 0] = p / denominator
    jacobian[:, 1] = slope_in_denominator * (p - 1.0)
    jacobian[:, 2] = slope_in_denominator * p * (p - 1.0)
    return jacobian


Vector = Callable[[np.ndarray], np.ndarray]


def _bounded_least_squares(residuals: Vector, jacobian_at: Vector, start: np.ndarray, lower: np.ndarray, *,
                           iterations: int = 500) -> tuple[np.ndarray, float]:
    """Minimise ½‖r(v)‖² subject to v ≥ lower: Levenberg–Marquardt with Marquardt's scaling (the parameters differ
    by orders of magnitude), steps projected onto the bounds, and a parameter held at its bound while the gradient
    pushes it outwards (so that an optimum on a bound comes out exactly on it). Returns the parameters and cost.

    Run dozens of times per analysis (the outlier screen fits the USL without each scale, from six starts), on
    three parameters, so numpy's per-call overhead is most of its time: the Jacobian is computed only for a step
    taken, and array methods stand in for the module functions (the same arithmetic, the same results)."""
    v = np.maximum(start.astype(float), lower)
    r = residuals(v)
    jacobian = jacobian_at(v)
    cost = 0.5 * float(r @ r)
    damping = 1e-3
    for _ in range(iterations):
        gradient = jacobian.T @ r
        free = ~((v <= lower) & (gradient > 0))
        projected_gradient = np.where(free, gradient, 0.0)
        if np.abs(projected_gradient).max() <= 1e-15 * max(cost, 1e-300) ** 0.5 or cost == 0.0:
            break
        every = bool(free.all())  # the usual case: no copy of the free columns (the same values, the same products)
        held = jacobian if every else jacobian[:, free]
        normal = held.T @ held
        scaling = np.maximum(normal.diagonal(), 1e-300)
        try:
            step_free = np.linalg.solve(normal + damping * np.diag(scaling), -(gradient if every else gradient[free]))
        except np.linalg.LinAlgError:
            damping *= 10.0
            continue
        if every:
            step = step_free
        else:
            step = np.zeros(len(v))
            step[free] = step_free
        trial = np.maximum(v + step, lower)
        r_trial = residuals(trial)
        trial_cost = 0.5 * float(r_trial @ r_trial)
        if np.isfinite(trial_cost) and trial_cost < cost:
            small_step = (np.abs(trial - v) <= 1e-12 * (np.abs(v) + 1e-12)).all()
            v, r, jacobian, cost = trial, r_trial, jacobian_at(trial), trial_cost
            damping = max(damping / 3.0, 1e-12)
            if small_step:
                break
        else:
            damping *= 4.0
            if damping > 1e12:
                break
    return v, cost


def slope(x: list[float], y: list[float]) -> float | None:
    """Least-squares slope of y on x (None for fewer than two distinct x)."""
    if len(set(x)) < 2:
        return None
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])
