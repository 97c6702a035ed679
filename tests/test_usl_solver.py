"""The USL fit's own bounded least-squares solver against scipy.optimize.least_squares (a test-only dependency)."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.analysis.model.fits import fit_usl, usl_capacity

pytestmark = pytest.mark.slow  # the fast tier (make check) leaves these out: see docs/testing.md

least_squares = pytest.importorskip("scipy.optimize").least_squares


def _normalised_cost(p: np.ndarray, x: np.ndarray, gamma: float, sigma: float, kappa: float) -> float:
    scale = float(np.max(np.abs(x)))
    return 0.5 * float(np.sum((usl_capacity(p, gamma / scale, sigma, kappa) - x / scale) ** 2))


def _scipy_cost(p: np.ndarray, x: np.ndarray) -> float:
    """The previous implementation: scipy's trust-region reflective solver with bounds, from four starts."""
    y = x / float(np.max(np.abs(x)))
    costs = []
    for sigma0, kappa0 in ((0.01, 1e-4), (0.1, 1e-3), (1e-3, 1e-6), (0.5, 0.0)):
        result = least_squares(lambda v: usl_capacity(p, v[0], v[1], v[2]) - y, [y[0] / p[0], sigma0, kappa0],
                               bounds=([-np.inf, 0.0, 0.0], np.inf), x_scale="jac", xtol=1e-15, ftol=1e-15,
                               gtol=1e-15, max_nfev=5000)
        costs.append(float(result.cost))
    return min(costs)


def _datasets(count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """USL curves of every shape (linear, Amdahl-like, retrograde) on node sets from dense to sparse, with and
    without the single-node point, with 0–30 % noise."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        kind = rng.integers(0, 3)
        if kind == 0:
            nodes = 2.0 ** np.arange(rng.integers(3, 9))
        else:
            high = 64 if kind == 1 else 2000
            nodes = np.unique(rng.integers(1, high, size=rng.integers(3, 9))).astype(float)
            if rng.random() < 0.7:
                nodes = np.unique(np.concatenate(([1.0], nodes)))
        if len(nodes) < 3:
            continue
        gamma = rng.uniform(0.1, 100)
        sigma = 0.0 if rng.random() < 0.3 else rng.uniform(0, 0.3)
        kappa = 0.0 if rng.random() < 0.3 else 10 ** rng.uniform(-7, -1)
        noise = rng.choice([0.0, 0.01, 0.1, 0.3])
        capacity = usl_capacity(nodes, gamma, sigma, kappa) * (1 + noise * rng.standard_normal(len(nodes)))
        found.append((nodes, np.abs(capacity) + 1e-9))
    return found


@pytest.mark.parametrize("seed", [1, 2])
def test_reaches_scipys_minimum_or_better(seed: int) -> None:
    for nodes, capacity in _datasets(120, seed):
        fit = fit_usl(list(nodes), list(capacity))
        assert fit is not None and fit.sigma >= 0 and fit.kappa >= 0
        ours = _normalised_cost(nodes, capacity, fit.gamma, fit.sigma, fit.kappa)
        theirs = _scipy_cost(nodes, capacity)
        assert ours <= theirs * (1 + 1e-9) + 1e-15, (nodes.tolist(), capacity.tolist(), ours, theirs)


def test_an_optimum_on_a_bound_is_exactly_on_it() -> None:
    nodes = [1.0, 2.0, 4.0, 8.0, 16.0]
    amdahl = [n / (1 + 0.05 * (n - 1)) for n in nodes]  # κ = 0: no peak
    fit = fit_usl(nodes, amdahl)
    assert fit is not None and fit.kappa == 0.0 and fit.peak_nodes is None
    assert fit.sigma == pytest.approx(0.05)
    linear = [3.0 * n for n in nodes]
    fit = fit_usl(nodes, linear)
    assert fit is not None and (fit.sigma, fit.kappa) == (0.0, 0.0) and fit.gamma == pytest.approx(3.0)
