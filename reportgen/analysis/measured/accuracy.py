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
    Bucket,
    Status,
    bucket_of,
    calibrated_interval,
    conformal_factor,
    is_interval_class,
    status_of,
)
from reportgen.keys import Key
from reportgen.project.accuracy_table import AccuracyTable, OwnCase, OwnEvidence, TableCell

TRUSTED: tuple[Status, ...] = ("calibrated", "provisional")  # a cell whose factor the report uses


@dataclass(frozen=True)
class Calibration:
    """How often this kind of prediction held on published curves, at this extrapolation."""

    predictor: Annotated[str, Key("the class of prediction: amdahl, usl, alpha-beta, layout-step or memory")]
    status: Annotated[Status, Key("calibrated (20 curves or more), provisional (10–19), too-few (the raw interval "
                                  "is used), demoted (it missed or leaned one way: not used on page 1), not-graded "
                                  "(the corpus grades values at scales, not this)")]
    bucket: Annotated[Bucket | None, Key("the extrapolation bucket of ratio: <=2, <=4, <=8 or >8")] = None
    ratio: Annotated[float | None, Key("the predicted scale over the largest measured one")] = None
    cases: Annotated[int | None, Key("published curves in the cell (the status counts own_cases with them)")] = None
    covered: Annotated[int | None, Key("cases inside the calibrated interval computed without them")] = None
    coverage_90: Annotated[float | None, Key("covered / cases")] = None
    coverage_90_raw: Annotated[float | None, Key("cases inside the predictor's own interval (a point prediction: "
                                                 "within 25 %) / cases")] = None
    missed: Annotated[int | None, Key("cases outside the raw interval (a point prediction: off by more than "
                                      "25 %)")] = None
    median_abs_rel_error: Annotated[float | None, Key("median |measured / predicted − 1|")] = None
    bias: Annotated[float | None, Key("median(measured / predicted) − 1")] = None
    factor: Annotated[float | None, Key("an interval class's conformal factor f: the calibrated interval is "
                                        "[ŷ·(L/ŷ)^f, ŷ·(H/ŷ)^f] (f at least 0.5); null for a point class or "
                                        "too few cases")] = None
    half_width_log: Annotated[float | None, Key("a point class's calibrated log half-width f: [ŷ·e^−f, "
                                                "ŷ·e^f]")] = None
    beyond_corpus: Annotated[bool | None, Key("ratio is beyond every published case of the cell")] = None
    own_cases: Annotated[int, Key("this project's graded predictions pooled into the cell")] = 0
    own_covered: Annotated[int, Key("of them, inside the calibrated interval")] = 0
    max_ratio: Annotated[float | None, Key("the cell's largest published ratio")] = None
    off_by_25: Annotated[int | None, Key("cases off by more than 25 % (more than 40 % of them demote the "
                                         "class)")] = None
    factor_from: Annotated[Bucket | None, Key("too few cases here: the bucket nearer the measurements whose "
                                              "factor widens this interval (an extrapolation farther out is never "
                                              "surer than a nearer one)")] = None
    same_sign: Annotated[int | None, Key("cases whose error has the cell's more common sign (the sign test's "
                                         "count)")] = None

    @property
    def trusted(self) -> bool:
        """The cell's factor is used: its interval replaces the raw one."""
        return self.status in TRUSTED

    @property
    def demoted(self) -> bool:
        return self.status == "demoted"


def not_graded(predictor: str) -> Calibration:
    """The mark of a predicted location or what-if: the corpus grades values at scales, not where a curve peaks."""
    return Calibration(predictor, "not-graded")


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
    family = "/batch-changes" if batch_changes else ""
    cell = table.cell(f"{predictor}/{bucket}{family}")
    mine = [case for case in (own.cases if own is not None and own.weight > 0 else ())
            if case.predictor == predictor and bucket_of(case.ratio) == bucket]
    if mine and own is not None:
        calibration = _pooled(predictor, bucket, ratio, cell, mine, own.weight)
    elif cell is None:
        calibration = Calibration(predictor, "too-few", bucket, ratio, 0, 0, None, None, 0, None, None, None, None,
                                  False)
    else:
        calibration = _from_cell(predictor, bucket, ratio, cell)
    if calibration.status != "too-few":
        return calibration
    nearer = [(table.cell(f"{predictor}/{lower}{family}"), lower) for lower in BUCKETS[:BUCKETS.index(bucket)]]
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
        Calibration(predictor, status, bucket, ratio, 0, 0, None, None, 0, None, None)
    return replace(base, status=status,
                   factor=factor if trusted and interval else None,
                   half_width_log=factor if trusted and not interval else None,
                   own_cases=len(mine), own_covered=sum(1 for case in mine if case.score <= factor))


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
    return TableFacts(1, table.predictors_version, table.corpus_sha256, table.curves, pooled)
