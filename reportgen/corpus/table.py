"""The calibration table from the corpus: every curve checked, every case computed, each cell's counts, factor and
status, written byte for byte the same on any machine (docs/methods.md#the-calibration-corpus).

`reportgen calibrate` runs this; a build never does (it reads the table the command wrote).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reportgen.analysis.measured.conformal import LEVEL, PREDICTORS_VERSION, Case, Cell, summarise
from reportgen.corpus.cases import CaseRow, choose_used, curve_cases
from reportgen.corpus.curve import Curve, read_curve_file
from reportgen.errors import InputError, Problem
from reportgen.json_types import JsonObject
from reportgen.project.accuracy_table import FORMAT

MAX_PER_SYSTEM = 8  # curves per (source, system): one submitter cannot set the calibration
MAX_CORPUS_BYTES = 2 * 1024 * 1024
SIGNIFICANT = 6


@dataclass(frozen=True)
class LoadedCurve:
    curve: Curve
    assumed: bool  # a value the source does not print is marked `# assumed:` in the file
    data: bytes


@dataclass(frozen=True)
class Corpus:
    curves: tuple[LoadedCurve, ...]  # in id order
    sha256: str  # of the curve files' bytes, in id order

    @property
    def by_id(self) -> dict[str, Curve]:
        return {loaded.curve.id: loaded.curve for loaded in self.curves}


def load_corpus(folder: Path, *, display_root: Path | None = None) -> Corpus:
    """Every curve of the folder, checked all at once (InputError naming each problem)."""
    problems: list[Problem] = []
    loaded: list[LoadedCurve] = []
    files = sorted(folder.glob("*.yaml"))
    total = sum(path.stat().st_size for path in files)
    if total > MAX_CORPUS_BYTES:
        problems.append(Problem(str(folder), 1, 1, "", f"the curves hold {total:,} bytes; the corpus stays under "
                                f"{MAX_CORPUS_BYTES:,}"))
    for path in files:
        display = str(path.relative_to(display_root)) if display_root and path.is_relative_to(display_root) \
            else str(path)
        try:
            curve, data = read_curve_file(path, display)
        except InputError as error:
            problems.extend(error.problems)
            continue
        loaded.append(LoadedCurve(curve, b"# assumed:" in data, data))
    loaded.sort(key=lambda item: item.curve.id)
    problems.extend(_balance(loaded, folder))
    if problems:
        raise InputError(problems)
    digest = hashlib.sha256()
    for item in loaded:
        digest.update(item.data)
    return Corpus(tuple(loaded), digest.hexdigest())


def _balance(loaded: Sequence[LoadedCurve], folder: Path) -> list[Problem]:
    counts = Counter((item.curve.source.name, item.curve.hardware.name) for item in loaded)
    return [Problem(str(folder), 1, 1, "", f"{count} curves of {source} on {system}: at most {MAX_PER_SYSTEM} per "
                    "source and system, so that one submitter cannot set the calibration")
            for (source, system), count in sorted(counts.items()) if count > MAX_PER_SYSTEM]


def compute_cases(corpus: Corpus, jobs: int = 1) -> list[CaseRow]:
    """Every case of every curve, in id order (the same with any number of jobs)."""
    work = [(item.curve, item.assumed) for item in corpus.curves]
    if jobs <= 1 or len(work) <= 1:
        per_curve = [curve_cases(curve, assumed) for curve, assumed in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            per_curve = list(pool.map(_cases_of, work, chunksize=max(1, len(work) // (4 * jobs))))
    return choose_used([row for rows in per_curve for row in rows])


def _cases_of(item: tuple[Curve, bool]) -> list[CaseRow]:
    return curve_cases(*item)


def cells_of(rows: Sequence[CaseRow]) -> dict[str, Cell]:
    """Each cell from its used cases (one per curve)."""
    grouped: dict[str, list[Case]] = defaultdict(list)
    for row in rows:
        if row.used and row.score is not None and row.log_error is not None:
            grouped[row.family].append(Case(row.score, row.log_error, row.ratio, inside=row.inside))
    return {key: summarise(key.split("/")[0], cases) for key, cases in sorted(grouped.items())}


def table_document(corpus: Corpus, cells: dict[str, Cell]) -> JsonObject:
    """calibration.json: the format, the predictors' version, the corpus it was computed from, every cell."""
    return {"format": FORMAT, "predictors_version": PREDICTORS_VERSION, "corpus_sha256": corpus.sha256,
            "curves": len(corpus.curves), "level": LEVEL,
            "cells": {key: _cell_json(cell) for key, cell in cells.items()}}


def _cell_json(cell: Cell) -> JsonObject:
    return {"cases": cell.cases, "covered": cell.covered, "covered_raw": cell.covered_raw, "missed": cell.missed,
            "off_by_25": cell.off_by_25,
            "median_abs_rel_error": rounded(cell.median_abs_rel_error), "bias": rounded(cell.bias),
            "sign_p": rounded(cell.sign_p), "same_sign": cell.same_sign,
            "factor": None if cell.factor is None else rounded(cell.factor),
            "max_ratio": rounded(cell.max_ratio), "status": cell.status,
            "scores": [rounded(score) for score in cell.scores]}


def rounded(value: float) -> float | None:
    """Six significant digits: the table's bytes do not depend on the last bits of a platform's arithmetic."""
    if not math.isfinite(value):
        return None
    return float(f"{value:.{SIGNIFICANT}g}")


def dumps(document: object) -> str:
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


CASE_COLUMNS = ("curve", "kind", "batch_changes", "k", "hidden_nodes", "largest_visible", "ratio", "cell",
                "predictor", "predicted_s", "low_s", "high_s", "measured_s", "rel_error", "score", "inside", "used",
                "assumed", "note")


def cases_csv(rows: Sequence[CaseRow]) -> str:
    """cases.csv: every case, used or not, and why a class did not run."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CASE_COLUMNS)
    for row in rows:
        inside = "" if row.inside is None else str(row.inside).lower()
        writer.writerow([row.curve, row.kind, str(row.batch_changes).lower(), row.k, _text(row.hidden),
                         _text(row.largest_visible), _text(row.ratio), row.family if row.score is not None else "",
                         row.predictor, _text(row.predicted), _text(row.low), _text(row.high), _text(row.measured),
                         _text(row.rel_error), _text(row.score), inside,
                         str(row.used).lower(), str(row.assumed).lower(), row.note])
    return out.getvalue()


def _text(value: float | None) -> str:
    if value is None:
        return ""
    shown = rounded(value)
    return "" if shown is None else f"{shown:g}"
