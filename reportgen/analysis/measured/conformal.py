"""How far a kind of prediction can be trusted, from how it did on published curves
(docs/methods.md#how-accurate-each-prediction-is): the conformity score of one case, the split-conformal factor of
a cell of cases, and the counts, status and demotion a cell is reported with.

Pure arithmetic on numbers: `reportgen calibrate` computes the shipped table with it, and a build recomputes a
cell's factor with it when the project's own graded predictions are pooled in, so both read one definition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from reportgen.project.accuracy_table import Bucket, Status

LEVEL = 0.90  # the calibrated interval's coverage
RUN_NOISE = 0.05  # σ of one run's log time, reportgen's default scaling.noise
# No 90 % interval is narrower than the noise of the one run it is held against (1.645 σ): a resampled interval of
# repeats that agree to 0.2 % says nothing of the model's error, and divided into it, a 10 % miss would score 50
# and widen every other project's interval fiftyfold (docs/methods.md#how-accurate-each-prediction-is)
SCORE_FLOOR = 1.6449 * RUN_NOISE
MIN_FACTOR = 0.5  # narrowing below half the bootstrap's width would undercut the runs' own noise
MISSED_FROM = 0.25  # a point prediction further than this from the measurement missed (as the history's ledger says)
TOO_FEW = 10  # below this many curves a cell states no accuracy: 9 is the first n with a finite 90 % quantile
CALIBRATED_FROM = 20  # from 19 curves the guarantee's upper end is ≤ 95 %; below 20 a count cannot tell 90 % from 80 %
DEMOTE_MISSED_SHARE = 0.40  # more than 40 % of the cases off by more than 25 %
DEMOTE_SIGN_P = 0.01
DEMOTE_BIAS_LOG = 0.10  # below it a bias is within two runs' noise (5 % each)
TIE = 1e-12  # a cumulative weight within this of the level reaches it (sums of floats)

# Bumped whenever a predictor changes, so that `reportgen calibrate --check` fails exactly when the shipped table no
# longer describes the shipped predictors (the package version says nothing about them)
PREDICTORS_VERSION = 1
Predictor = Literal["amdahl", "usl", "alpha-beta", "layout-step", "memory"]
INTERVAL_PREDICTORS: tuple[Predictor, ...] = ("amdahl", "usl")  # the classes with a raw interval of their own
PREDICTORS: tuple[Predictor, ...] = ("amdahl", "usl", "alpha-beta", "layout-step", "memory")
BUCKETS: tuple[Bucket, ...] = ("<=2", "<=4", "<=8", ">8")
BUCKET_WORDS: dict[Bucket, str] = {"<=2": "up to 2×", "<=4": "2–4×", "<=8": "4–8×", ">8": "beyond 8×"}


def bucket_of(ratio: float) -> Bucket:
    """The extrapolation bucket of r = plan / largest measured scale (an interpolated plan, r < 1, is `<=2`)."""
    if ratio <= 2:
        return "<=2"
    if ratio <= 4:
        return "<=4"
    return "<=8" if ratio <= 8 else ">8"


def cell_key(predictor: str, bucket: Bucket, batch_changes: bool = False) -> str:
    """The calibration table's key of a cell: `amdahl/<=4`, with `/batch-changes` for curves (and projects) whose
    global batch changes between scales, kept in cells of their own."""
    return f"{predictor}/{bucket}" + ("/batch-changes" if batch_changes else "")


def is_interval_class(predictor: str) -> bool:
    return predictor in INTERVAL_PREDICTORS


def interval_score(measured: float, predicted: float, low: float, high: float) -> float:
    """s = |ln(y/ŷ)| / max(h_side, floor), h_side the interval's log half-width on the side of the measurement and
    the floor one run's noise: s ≤ 1 exactly when the measurement lies inside [low, high] widened to the floor."""
    error = math.log(measured / predicted)
    side = math.log(high / predicted) if measured >= predicted else math.log(predicted / low)
    return abs(error) / max(side, SCORE_FLOOR)


def point_score(measured: float, predicted: float) -> float:
    """s = |ln(y/ŷ)|: a point prediction's score is its log error."""
    return abs(math.log(measured / predicted))


def conformal_factor(scores: Sequence[float], weights: Sequence[float] | None = None, level: float = LEVEL) -> float:
    """Weighted split conformal: the smallest score s_j whose cumulative weight reaches level · (Σw + 1), the test
    point weighing 1 (+∞ when none does). With unit weights this is s_(⌈level·(n+1)⌉)."""
    weights = [1.0] * len(scores) if weights is None else list(weights)
    need, total = level * (sum(weights) + 1.0), 0.0
    for score, weight in sorted(zip((float(s) for s in scores), weights, strict=True)):
        total += weight
        if total >= need - TIE:
            return score
    return math.inf


def sign_test_p(log_errors: Sequence[float]) -> float:
    """Two-sided sign test of ln(y/ŷ): m nonzero errors, k the larger same-sign count, p = 2·Σ_{j≥k} C(m, j)/2^m
    (at most 1)."""
    nonzero = [e for e in log_errors if e != 0]
    m = len(nonzero)
    if m == 0:
        return 1.0
    k = max(sum(1 for e in nonzero if e > 0), sum(1 for e in nonzero if e < 0))
    return min(1.0, 2 * sum(math.comb(m, j) for j in range(k, m + 1)) / (1 << m))


@dataclass(frozen=True)
class Case:
    """One prediction held against its measurement: the score and the errors a cell is summarised with."""

    score: float
    log_error: float  # ln(y/ŷ)
    ratio: float  # r = the predicted scale over the largest measured one
    weight: float = 1.0  # a public curve 1; the project's own case λ
    inside: bool | None = None  # within the raw interval (None: use s ≤ 1, as a point class does not)


@dataclass(frozen=True)
class Cell:
    """A cell's counts, factor and status (docs/methods.md#how-accurate-each-prediction-is)."""

    cases: int
    covered: int  # leave one curve out: s_c ≤ f from the cell without c
    covered_raw: int  # s ≤ 1 (interval classes; point classes: within 25 %)
    missed: int  # the rest: outside the raw interval (a point class: off by more than 25 %)
    off_by_25: int  # off by more than 25 %, whatever the interval: what demotes a class
    median_abs_rel_error: float
    bias: float  # median(y/ŷ) − 1
    sign_p: float
    same_sign: int  # the larger count of errors of one sign (what the sign test reads)
    factor: float | None  # None: too few cases for a finite quantile
    max_ratio: float
    status: Status
    scores: tuple[float, ...]

    @property
    def coverage_90(self) -> float | None:
        return self.covered / self.cases if self.cases else None

    @property
    def coverage_90_raw(self) -> float | None:
        return self.covered_raw / self.cases if self.cases else None


def summarise(predictor: str, cases: Sequence[Case]) -> Cell:
    """A cell of one class and bucket from its cases (one per curve; own cases carry their weight)."""
    n = len(cases)
    scores = [case.score for case in cases]
    weights = [case.weight for case in cases]
    factor = conformal_factor(scores, weights) if n else math.inf
    covered = sum(1 for index, case in enumerate(cases)
                  if case.score <= conformal_factor(_without(scores, index), _without(weights, index)))
    rel_errors = [math.exp(case.log_error) - 1 for case in cases]
    far = [abs(e) > MISSED_FROM for e in rel_errors]  # off by more than 25 %: what demotes a class
    covered_raw = sum(1 for case in cases if (case.score <= 1 if case.inside is None else case.inside)) \
        if is_interval_class(predictor) else far.count(False)
    missed = n - covered_raw
    far_weight = sum(case.weight for case, off in zip(cases, far, strict=True) if off)
    log_errors = [case.log_error for case in cases]
    sign_p = sign_test_p(log_errors)
    median_log = median(log_errors) if n else 0.0
    status = status_of(n, missed_share=far_weight / sum(weights) if n else 0.0, sign_p=sign_p,
                       median_log_error=median_log)
    same_sign = max(sum(1 for e in log_errors if e > 0), sum(1 for e in log_errors if e < 0))
    return Cell(n, covered, covered_raw, missed, far.count(True), median(abs(e) for e in rel_errors) if n else 0.0,
                median(math.exp(e) for e in log_errors) - 1 if n else 0.0, sign_p, same_sign,
                None if status == "too-few" or not math.isfinite(factor) else factor,
                max((case.ratio for case in cases), default=0.0), status, tuple(sorted(scores)))


def status_of(cases: int, *, missed_share: float, sign_p: float, median_log_error: float) -> Status:
    """too-few below 10 curves; demoted (from 10) when more than 40 % missed by more than 25 % or the errors lean
    one way (sign test p < 0.01 and a median log error of at least 0.10); provisional below 20; calibrated from 20.

    A miss is an error past 25 %, not a measurement outside the raw interval: on the published curves the
    resampled fits' intervals are too narrow (Amdahl up to 2× held 15 of 25, with a median error of 4.6 %), which
    the factor corrects (23 of 25 inside the calibrated interval); demoting the class for it would call a good
    predictor no guide (docs/methods.md#how-accurate-each-prediction-is)."""
    if cases < TOO_FEW:
        return "too-few"
    if missed_share > DEMOTE_MISSED_SHARE or (sign_p < DEMOTE_SIGN_P and abs(median_log_error) >= DEMOTE_BIAS_LOG):
        return "demoted"
    return "provisional" if cases < CALIBRATED_FROM else "calibrated"


def calibrated_interval(predictor: str, predicted: float, low: float | None, high: float | None,
                        factor: float) -> tuple[float, float]:
    """An interval class's [ŷ·e^(−f·h_low), ŷ·e^(f·h_high)], each log half-width at least the score's floor and f
    at least 0.5 (where the half-widths pass the floor, [ŷ·(L/ŷ)^f, ŷ·(H/ŷ)^f]); a point class's
    [ŷ·e^(−f), ŷ·e^f]. A measurement inside it is exactly one whose score is at most f."""
    if is_interval_class(predictor) and low is not None and high is not None:
        f = max(factor, MIN_FACTOR)
        below = max(math.log(predicted / low), SCORE_FLOOR)
        above = max(math.log(high / predicted), SCORE_FLOOR)
        return predicted * math.exp(-f * below), predicted * math.exp(f * above)
    return predicted * math.exp(-factor), predicted * math.exp(factor)


def _without(values: Sequence[float], index: int) -> list[float]:
    return [value for position, value in enumerate(values) if position != index]
