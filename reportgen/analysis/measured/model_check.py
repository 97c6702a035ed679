"""Fits: the design's α–β model held against the measured runs, scale by scale.
(docs/methods.md#the-model-held-against-the-measurements)

The α–β model predicts a speedup and a communication-to-computation ratio R(p) at every node count, and is a
USL curve with σ = 2β/T_comp and κ = α/T_comp. "Show the design's predicted σ, κ beside the measured ones: this is
the check of whether the communication model held." Here that check is one table: at each measured scale the
predicted and measured speedup (both relative to the reference scale) and R(p), with the two verdicts the lint's
findings state (`below-prediction`, `comm-share-departs`) and the measured κ over the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.measured.scaling import ScaleRow, ScalingResult
from reportgen.analysis.model.layout import LayoutResult
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.keys import Key

SPEEDUP_SHORTFALL = 0.25  # a measured speedup this far below the model's says the model is optimistic
COMM_SHARE_FACTOR = 2.0  # a measured R(p) this many times off the model's says the model does not describe it


@dataclass(frozen=True)
class ModelCheckRow:
    nodes: Annotated[float, Key("node count, or load level with scaling.axis: load")]
    # relative to the reference scale as the measured one is
    predicted_speedup: Annotated[float, Key("the model's speedup, relative to the reference scale")]
    measured_speedup: Annotated[float, Key("the measured speedup")]
    speedup_ratio: Annotated[float, Key("measured / predicted speedup")]
    predicted_comm_ratio: Annotated[float, Key("the model's R(p) = T_comm / (T_comp / p)")]
    # p > 1
    measured_comm_ratio: Annotated[float | None, Key("communication / compute (breakdown form)")]

    @property
    def below_prediction(self) -> bool:
        return self.speedup_ratio < 1.0 - SPEEDUP_SHORTFALL

    @property
    def comm_departs(self) -> bool:
        measured, predicted = self.measured_comm_ratio, self.predicted_comm_ratio
        if measured is None:
            return False
        if predicted <= 0:
            return measured > 0
        return not 1 / COMM_SHARE_FACTOR <= measured / predicted <= COMM_SHARE_FACTOR


@dataclass(frozen=True)
class ModelCheckResult:
    rows: Annotated[tuple[ModelCheckRow, ...], Key("each measured scale beyond the reference")]
    # the ring's USL equivalent
    sigma_model: Annotated[float | None, Key("2β / T_comp (the ring's; null for other patterns)")]
    kappa_model: Annotated[float | None, Key("α / T_comp (the ring's; null for other patterns)")]
    sigma_measured: Annotated[float | None, Key("the USL fit's σ")]  # with at least three scales
    kappa_measured: Annotated[float | None, Key("the USL fit's κ")]
    # how far the coherency cost assumed is from the measured
    kappa_ratio: Annotated[float | None, Key("measured κ / the model's")]
    lowest_speedup_ratio: Annotated[float | None, Key("the lowest measured / predicted speedup")]
    # None: nothing to compare
    speedup_held: Annotated[bool | None, Key("no measured speedup more than 25 % below the model's")]
    # None: no breakdown to compare
    comm_held: Annotated[bool | None, Key("every measured R(p) within 2× of the model's")]
    # how far the pattern's curve is from the measurements, for every pattern
    model_departure: Annotated[float | None, Key("the largest |S_pred − S_meas| / S_meas at the measured "
                                                 "scales")] = None


def check_model(prediction: PredictionResult | None, scaling: ScalingResult | None,
                layout: LayoutResult | None = None) -> ModelCheckResult | None:
    """The model against the measurements; None without both. With a layout whose step is known, the layout's step
    is the model at every measured scale it reaches with a whole data-parallel degree, unless the project
    names its pattern (prediction.pattern): that one is then the model, and the layout's step is shown beside it."""
    if prediction is None or scaling is None:
        return None
    explicit = prediction.pattern_source == "prediction.pattern"
    model = _Model(prediction, None if explicit else layout)
    reference = model.at(scaling.reference_nodes)[0]
    breakdown = scaling.form == "breakdown"
    rows = tuple(_row(model, row, reference, breakdown=breakdown) for row in scaling.rows
                 if row.nodes != scaling.reference_nodes)
    compared = [row for row in rows if row.measured_comm_ratio is not None]
    usl = scaling.usl
    return ModelCheckResult(
        rows=rows,
        sigma_model=prediction.usl_sigma,
        kappa_model=prediction.usl_kappa,
        sigma_measured=usl.sigma if usl else None,
        kappa_measured=usl.kappa if usl else None,
        kappa_ratio=usl.kappa / prediction.usl_kappa if usl and prediction.usl_kappa else None,
        lowest_speedup_ratio=min((row.speedup_ratio for row in rows), default=None),
        speedup_held=not any(row.below_prediction for row in rows) if rows else None,
        comm_held=not any(row.comm_departs for row in compared) if compared else None,
        model_departure=max((abs(row.predicted_speedup - row.measured_speedup) / row.measured_speedup
                             for row in rows if row.measured_speedup > 0), default=None),
    )


@dataclass(frozen=True)
class _Model:
    """The speedup and R(p) the design predicts at a node count: the layout's step where it reaches that count,
    else the pattern's curve."""

    prediction: PredictionResult
    layout: LayoutResult | None

    def at(self, nodes: float) -> tuple[float, float]:
        step = self.layout.at_nodes(nodes) if self.layout is not None else None
        if step is not None:
            exchanged = step.tensor_s + step.pipeline_s + step.data_s + step.expert_s
            return self.prediction.t_comp_s / step.total_s, exchanged / step.compute_s
        row = self.prediction.at(int(nodes))
        return row.speedup, row.comm_ratio


def _row(model: _Model, row: ScaleRow, reference: float, *, breakdown: bool) -> ModelCheckRow:
    speedup, comm_ratio = model.at(row.nodes)
    predicted = speedup / reference
    run = row.run
    measured_comm = (run.communication or 0.0) / run.compute if breakdown and row.nodes > 1 and run.compute else None
    return ModelCheckRow(row.nodes, predicted, row.speedup, row.speedup / predicted, comm_ratio, measured_comm)
