"""The grade a predicted number carries in results.json (docs/methods.md#how-accurate-each-prediction-is): how
often its kind of prediction held on published curves at its extrapolation, or that the corpus does not grade it.

A foundation of the analyses: the model's predictions, the measured fits and the plan search each carry one, and
reportgen.analysis.measured.accuracy fills it from the calibration table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from reportgen.keys import Key

Status = Literal["calibrated", "provisional", "too-few", "demoted", "not-graded"]
Bucket = Literal["<=2", "<=4", "<=8", ">8"]
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
    """The grade of a predicted location or what-if (where a curve peaks, a lever's flip, a chance): the corpus
    grades values at scales, not these."""
    return Calibration(predictor, "not-graded")
