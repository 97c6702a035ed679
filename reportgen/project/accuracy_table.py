"""The calibration table `reportgen calibrate` ships (reportgen/corpus/calibration.json), read once per process
(docs/methods.md#how-accurate-each-prediction-is).

A build reads only this file: never the curves, never the corpus's readers. A table that is missing, unreadable or
of another format is no table: the build goes on with the predictors' raw intervals and says so.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reportgen.json_types import JsonRead

TABLE_PATH = Path(__file__).resolve().parents[1] / "corpus" / "calibration.json"
FORMAT = 1
MAX_TABLE_BYTES = 64 * 1024
CellStatus = Literal["calibrated", "provisional", "too-few", "demoted"]
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
