"""Least-squares fits shared by the prediction and the measured-scaling analyses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AlphaBetaFit:
    alpha_s: float
    beta_s: float
    residual_s: float  # root-mean-square residual


@dataclass(frozen=True)
class AmdahlFit:
    serial_fraction: float
    max_speedup: float  # 1/f; inf when f ≤ 0


@dataclass(frozen=True)
class USLFit:
    sigma: float
    kappa: float
    gamma: float
    peak_nodes: float | None  # √((1 − σ)/κ) when κ > 0 and σ < 1


def ring_comm_basis(nodes: np.ndarray) -> np.ndarray:
    """Columns (p − 1) and 2(p − 1)/p: T_comm(p) = α·col0 + β·col1 for the ring all-reduce."""
    return np.column_stack((nodes - 1.0, 2.0 * (nodes - 1.0) / nodes))


def fit_alpha_beta(nodes: list[int], times: list[float]) -> AlphaBetaFit | None:
    """Least squares of t = α(p − 1) + 2β(p − 1)/p over points with p > 1; None without two distinct p > 1.

    Exact with two points. Negative values are returned as they are: the caller reports them (bad-fit).
    """
    pairs = [(p, t) for p, t in zip(nodes, times, strict=True) if p > 1]
    if len({p for p, _ in pairs}) < 2:
        return None
    p = np.array([p for p, _ in pairs], dtype=float)
    t = np.array([t for _, t in pairs], dtype=float)
    basis = ring_comm_basis(p)
    (alpha, beta), *_ = np.linalg.lstsq(basis, t, rcond=None)
    residual = float(np.sqrt(np.mean((basis @ np.array([alpha, beta]) - t) ** 2)))
    return AlphaBetaFit(float(alpha), float(beta), residual)


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
    return gamma * p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0))


def fit_usl(nodes: list[float], capacity: list[float]) -> USLFit | None:
    """X(p) = γp / (1 + σ(p − 1) + κp(p − 1)) by bounded nonlinear least squares (σ, κ ≥ 0, γ free)."""
    if len(nodes) < 3:
        return None
    from scipy.optimize import least_squares

    p = np.asarray(nodes, dtype=float)
    x = np.asarray(capacity, dtype=float)
    scale = float(np.max(np.abs(x)))  # fit on normalised capacity so the tolerances mean the same at any scale
    y = x / scale

    def residuals(v: np.ndarray) -> np.ndarray:
        return usl_capacity(p, v[0], v[1], v[2]) - y

    best = None
    gamma0 = float(y[0] / p[0])
    for sigma0, kappa0 in ((0.01, 1e-4), (0.1, 1e-3), (1e-3, 1e-6), (0.5, 0.0)):
        result = least_squares(residuals, [gamma0, sigma0, kappa0], bounds=([-np.inf, 0.0, 0.0], np.inf),
                               x_scale="jac", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=5000)
        if best is None or result.cost < best.cost:
            best = result
    assert best is not None
    gamma, sigma, kappa = (float(v) for v in best.x)
    peak = math.sqrt((1.0 - sigma) / kappa) if kappa > 0 and sigma < 1 else None
    return USLFit(sigma, kappa, gamma * scale, peak)


def slope(x: list[float], y: list[float]) -> float | None:
    """Least-squares slope of y on x (None for fewer than two distinct x)."""
    if len(set(x)) < 2:
        return None
    return float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0])
