"""Micro-batch efficiency (methods.md#micro-batch-efficiency): a device runs larger GEMMs closer to its peak, so a
layout's compute phases divide by ρ, its micro-batch's efficiency against the declared layout's. The saturation x₀
is fitted from runs at two or more micro-batch sizes, else given, else Narayanan et al. 2021's Fig. 7.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np

from reportgen.keys import Key

# Narayanan et al. 2021 §3.4, Fig. 7 (one A100, h = 4,096, s = 2,048): up to 1.3× per-GPU throughput from b = 1 to
# 16, so (1 + x₀/x₁)/(1 + x₀/(16·x₁)) = 1.3 with x₁ = 8,388,608
DEFAULT_SATURATION = 2_739_137.0
SaturationSource = Literal["fitted", "given", "default"]


def gemm_size(micro_batch: np.ndarray | float, sequence: float, context: np.ndarray | float,
              hidden: float) -> np.ndarray:
    """x = b·(s/cp)·h: the tokens of a micro-batch on a device times the hidden size (t is left out: η, calibrated
    at the declared t, carries the tensor split's effect)."""
    return np.asarray(micro_batch, dtype=float) * (sequence / np.asarray(context, dtype=float)) * hidden


def efficiency(size: np.ndarray | float, saturation: float) -> np.ndarray:
    """eff(x) = 1/(1 + x₀/x)."""
    return 1.0 / (1.0 + saturation / np.asarray(size, dtype=float))


def relative(size: np.ndarray | float, reference: float, saturation: float) -> np.ndarray:
    """ρ = eff(x)/eff(x_ref): 1 at the declared layout's micro-batch."""
    found: np.ndarray = efficiency(size, saturation) / efficiency(reference, saturation)
    return found


@dataclass(frozen=True)
class SaturationFit:
    """u = 1/η_∞ and w = x₀/η_∞ of step − Y = C·(u + w/x), fitted by least squares of the relative residual."""

    inverse_peak_share: float  # u
    weight: float  # w

    @property
    def saturation(self) -> float:
        return self.weight / self.inverse_peak_share

    def eta(self, reference: float) -> float:
        """η at the declared micro-batch: eff(x_ref)/u."""
        return float(efficiency(reference, self.saturation)) / self.inverse_peak_share


def fit_saturation(scaled: np.ndarray, fixed: np.ndarray, steps: np.ndarray, sizes: np.ndarray) -> SaturationFit:
    """The 2 × 2 normal equations of Σ_n ((C_n·u + C_n·w/x_n − (step_n − Y_n))/step_n)², C_n at η = 1 and eff = 1."""
    a = scaled / steps
    c = scaled / (sizes * steps)
    y = (steps - fixed) / steps
    matrix = np.array([[np.sum(a * a), np.sum(a * c)], [np.sum(a * c), np.sum(c * c)]])
    right = np.array([np.sum(a * y), np.sum(c * y)])
    u, w = np.linalg.solve(matrix, right)
    return SaturationFit(float(u), float(w))


@dataclass(frozen=True)
class MicroBatchRun:
    nodes: Annotated[float, Key("the run's node count")]
    micro_batch: Annotated[int, Key("b: its micro-batch size")]
    x: Annotated[float, Key("b·(s/cp)·h")]


@dataclass(frozen=True)
class MicroBatchEfficiency:
    saturation: Annotated[float, Key("x₀: the GEMM size at which a device reaches half its asymptotic share of the "
                                     "peak")]
    source: Annotated[SaturationSource, Key("fitted (runs at two or more micro-batch sizes), given "
                                            "(plan_search.micro_batch_saturation) or default (Narayanan et al. "
                                            "2021, Fig. 7)")]
    reference: Annotated[float, Key("x_ref: the declared layout's b·(s/cp)·h, where ρ = 1")]
    runs: Annotated[tuple[MicroBatchRun, ...], Key("each calibration run's micro-batch")]
    inverted: tuple[float, ...] = ()  # with larger micro-batches slower per token: the runs' node counts
