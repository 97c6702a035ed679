"""A predicted number's measured accuracy (docs/methods.md#how-accurate-each-prediction-is): the cell of the
calibration table its class and extrapolation fall in, the interval calibrated by that cell's factor, and whether
the class is trusted at all there.

The table is computed by `reportgen calibrate` from published curves and read here as data; the arithmetic is
conformal.py's, shared with the command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Annotated

from reportgen.analysis.measured.conformal import (
    BUCKETS,
    MISSED_FROM,
    PREDICTORS_VERSION,
    bucket_of,
    calibrated_interval,
    cell_key,
    conformal_factor,
    is_interval_class,
    status_of,
)
from reportgen.keys import Key
from reportgen.project.accuracy_table import (
    FORMAT,
    TRUSTED,
    AccuracyTable,
    Bucket,
    Calibration,
    OwnCase,
    OwnEvidence,
    Status,
    TableCell,
)


def usable(table: AccuracyTable | None) -> bool:
    """A table of these predictors (one computed for other predictors describes them no longer)."""
    return table is not None and table.predictors_version == PREDICTORS_VERSION


def calibration_of(table: AccuracyTable | None, predictor: str, ratio: float, *, batch_changes: bool = False,
                   own: OwnEvidence | None = None) -> Calibration | None:
    """The cell of a prediction of `predictor` at r = `ratio`, pooled with the project's own graded predictions of
    that class and bucket; None without a table (or one of other predictors). A cell of too few cases takes the
    largest factor of the trusted cells nearer the measurements: farther out is never surer."""
    if table is None or not usable(table):
        return None
    bucket = bucket_of(ratio)
    cell = table.cell(cell_key(predictor, bucket, batch_changes))
    mine = [case for case in (own.cases if own is not None and own.weight > 0 else ())
            if case.predictor == predictor and bucket_of(case.ratio) == bucket]
    if mine and own is not None:
        calibration = _pooled(predictor, bucket, ratio, cell, mine, own.weight)
    elif cell is None:
        calibration = _no_case(predictor, "too-few", bucket, ratio)
    else:
        calibration = _from_cell(predictor, bucket, ratio, cell)
    if calibration.status != "too-few":
        return calibration
    nearer = [(table.cell(cell_key(predictor, lower, batch_changes)), lower)
              for lower in BUCKETS[:BUCKETS.index(bucket)]]
    trusted = [(cell.factor, lower) for cell, lower in nearer
               if cell is not None and cell.status in TRUSTED and cell.factor is not None]
    if not trusted:
        return calibration
    factor, lower = max(trusted)
    interval = is_interval_class(predictor)
    return replace(calibration, factor=factor if interval else None, half_width_log=None if interval else factor,
                   factor_from=lower)


def _pooled(predictor: str, bucket: Bucket, ratio: float, cell: TableCell | None, mine: list[OwnCase],
            weight: float) -> Calibration:
    """The public cell with the project's own cases, each weighing λ: the factor a weighted quantile, the status
    counted on n_public + n_own, the share of misses past 25 % weighted (the public lean, by the sign test, kept)."""
    public = cell.scores if cell is not None else ()
    scores = [*public, *(case.score for case in mine)]
    factor = conformal_factor(scores, [1.0] * len(public) + [weight] * len(mine))
    far = sum(1 for case in mine if abs(math.expm1(case.log_error)) > MISSED_FROM)
    public_far = cell.off_by_25 if cell is not None else 0
    share = (public_far + weight * far) / (len(public) + weight * len(mine))
    status = status_of(len(scores), missed_share=share, sign_p=1.0, median_log_error=0.0)
    if cell is not None and cell.status == "demoted":
        status = "demoted"
    trusted = status in TRUSTED and math.isfinite(factor)
    interval = is_interval_class(predictor)
    base = _from_cell(predictor, bucket, ratio, cell) if cell is not None else \
        _no_case(predictor, status, bucket, ratio)
    return replace(base, status=status,
                   factor=factor if trusted and interval else None,
                   half_width_log=factor if trusted and not interval else None,
                   own_cases=len(mine), own_covered=sum(1 for case in mine if case.score <= factor))


def _no_case(predictor: str, status: Status, bucket: Bucket, ratio: float) -> Calibration:
    """A cell no published curve has reached."""
    return Calibration(predictor, status, bucket, ratio, cases=0, covered=0, missed=0, beyond_corpus=False)


def _from_cell(predictor: str, bucket: Bucket, ratio: float, cell: TableCell) -> Calibration:
    interval = is_interval_class(predictor)
    factor = cell.factor if cell.status in TRUSTED else None
    return Calibration(
        predictor, cell.status, bucket, ratio, cell.cases, cell.covered,
        cell.covered / cell.cases if cell.cases else None, cell.covered_raw / cell.cases if cell.cases else None,
        cell.missed, cell.median_abs_rel_error, cell.bias, factor if interval else None,
        None if interval else factor, ratio > cell.max_ratio, max_ratio=cell.max_ratio, same_sign=cell.same_sign,
        off_by_25=cell.off_by_25)


def interval_from(calibration: Calibration | None, predicted: float, low: float | None,
                  high: float | None) -> tuple[float, float] | None:
    """The calibrated interval of a trusted cell, or of one of too few cases widened as a nearer trusted one is;
    None otherwise (too few cases and none nearer: the raw one stands; demoted: none)."""
    if calibration is None or not (calibration.trusted or calibration.factor_from is not None):
        return None
    factor = calibration.factor if calibration.factor is not None else calibration.half_width_log
    if factor is None or not math.isfinite(factor):
        return None
    return calibrated_interval(calibration.predictor, predicted, low, high, factor)


@dataclass(frozen=True)
class TableFacts:
    """The calibration table a build read: which corpus and predictors it describes."""

    format: Annotated[int, Key("the table's format")]
    predictors_version: Annotated[int, Key("the predictors the table grades (bumped whenever one changes)")]
    corpus_sha256: Annotated[str, Key("SHA-256 of the corpus's curve files, in id order")]
    curves: Annotated[int, Key("published curves in the corpus")]
    pooled: Annotated[Pooled | None, Key("the project's own graded predictions pooled in (null: not pooled, no "
                                         "ledger given)")] = None


@dataclass(frozen=True)
class Pooled:
    ledger: Annotated[str, Key("the history the graded predictions were read from")]
    own_cases: Annotated[int, Key("graded predictions pooled in")]
    own_weight: Annotated[float, Key("what each counts for, against one published curve")]


def table_facts(table: AccuracyTable | None, own: OwnEvidence | None = None) -> TableFacts | None:
    """What results.json says of the table read and of the pooling; None without a usable table (the finding says
    so)."""
    if table is None or not usable(table):
        return None
    pooled = None if own is None or own.ledger is None or own.weight <= 0 else \
        Pooled(own.ledger, len(own.cases), own.weight)
    return TableFacts(FORMAT, table.predictors_version, table.corpus_sha256, table.curves, pooled)


@dataclass(frozen=True)
class Grades:
    """The predicted numbers of the other analyses graded at their extrapolation, r = the scale over the largest
    measured one (the baseline's single machine, 1 node, when nothing is): the α–β model's rows and speedups, the
    declared layout's step and memory, the plan search's ranked layouts, a service's fitted capacities."""

    rows: dict[int, Calibration]
    at_p_star: Calibration | None = None
    at_p_comm_dominated: Calibration | None = None
    layout_step: Calibration | None = None
    memory: Calibration | None = None
    plan_search: Calibration | None = None
    serving: dict[float, Calibration] | None = None


@dataclass(frozen=True)
class Predicted:
    """Where the other analyses predict: the scales each predicted number stands at."""

    model_nodes: tuple[int, ...] = ()  # the α–β model's rows
    p_star: int | None = None
    p_comm_dominated: int | None = None
    plan: int | None = None  # the declared layout's step and memory
    ranked: int | None = None  # the plan search's scale
    fitted_capacity: tuple[float, ...] = ()  # a service's scales whose capacity is fitted


def grade(table: AccuracyTable | None, predicted: Predicted, largest_measured: float | None, *,
          batch_changes: bool = False, own: OwnEvidence | None = None) -> Grades | None:
    if table is None or not usable(table):
        return None
    reference = largest_measured if largest_measured else 1.0

    def at(predictor: str, p: float | None) -> Calibration | None:
        if p is None:
            return None
        return calibration_of(table, predictor, p / reference, batch_changes=batch_changes, own=own)

    return Grades({p: found for p in predicted.model_nodes if (found := at("alpha-beta", p)) is not None},
                  at("alpha-beta", predicted.p_star), at("alpha-beta", predicted.p_comm_dominated),
                  at("layout-step", predicted.plan), at("memory", predicted.plan),
                  at("layout-step", predicted.ranked),
                  {p: found for p in predicted.fitted_capacity if (found := at("usl", p)) is not None})
