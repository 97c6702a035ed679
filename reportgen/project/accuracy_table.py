"""The calibration table `reportgen calibrate` ships (reportgen/corpus/calibration.json), read once per process
(docs/methods.md#how-accurate-each-prediction-is).

A build reads only this file: never the curves, never the corpus's readers. A table that is missing, unreadable or
of another format is no table: the build goes on with the predictors' raw intervals and says so. Beside the table:
the project's own graded predictions that join its cells, and the grade a predicted number carries in results.json
(`Calibration`), which every layer of the analyses writes, so it lives below them.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from reportgen.json_types import JsonRead
from reportgen.keys import Key

TABLE_PATH = Path(__file__).resolve().parents[1] / "corpus" / "calibration.json"
FORMAT = 1
MAX_TABLE_BYTES = 64 * 1024
CellStatus = Literal["calibrated", "provisional", "too-few", "demoted"]
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

STATUSES: tuple[CellStatus, ...] = ("calibrated", "provisional", "too-few", "demoted")


@dataclass(frozen=True)
class TableCell:
    """One cell of the table: how one class of prediction did in one extrapolation bucket."""

    cases: int
    covered: int
    covered_raw: int
    missed: int
    off_by_25: int
    median_abs_rel_error: float
    bias: float
    same_sign: int
    factor: float | None
    max_ratio: float
    status: CellStatus
    scores: tuple[float, ...]


@dataclass(frozen=True)
class AccuracyTable:
    predictors_version: int
    corpus_sha256: str
    curves: int
    cells: dict[str, TableCell]

    def cell(self, key: str) -> TableCell | None:
        return self.cells.get(key)


# What one of the project's own graded predictions counts for against one published curve: the team's own system is
# the distribution its next prediction comes from, and with 4, five graded cases weigh as much as 20 public curves
DEFAULT_OWN_WEIGHT = 4.0


@dataclass(frozen=True)
class OwnCase:
    """One of the project's own graded predictions (its history's ledger), pooled into the cell it falls in."""

    predictor: str
    ratio: float
    score: float
    log_error: float  # ln(measured / predicted)


@dataclass(frozen=True)
class OwnEvidence:
    """The project's graded predictions and what each counts for against one published curve (λ; 0: not pooled)."""

    cases: tuple[OwnCase, ...] = ()
    weight: float = DEFAULT_OWN_WEIGHT
    ledger: str | None = None  # where they were read from, as the user named it


@functools.cache
def shipped_table() -> AccuracyTable | None:
    """The shipped table, or None when it cannot be read as one."""
    return read_table(TABLE_PATH)


def read_table(path: Path) -> AccuracyTable | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > MAX_TABLE_BYTES:
        return None
    try:
        return _parse(json.loads(data))
    except (ValueError, KeyError, TypeError):
        return None


def _parse(document: object) -> AccuracyTable | None:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return None
    cells = {str(key): _cell(value) for key, value in document["cells"].items()}
    return AccuracyTable(int(document["predictors_version"]), str(document["corpus_sha256"]),
                         int(document["curves"]), cells)


def _cell(value: JsonRead) -> TableCell:
    status = value["status"]
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    factor = value["factor"]
    return TableCell(int(value["cases"]), int(value["covered"]), int(value["covered_raw"]), int(value["missed"]),
                     int(value["off_by_25"]),
                     float(value["median_abs_rel_error"]), float(value["bias"]), int(value["same_sign"]),
                     None if factor is None else float(factor), float(value["max_ratio"]), status,
                     tuple(float(score) for score in value["scores"]))
