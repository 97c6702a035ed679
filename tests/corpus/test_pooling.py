"""The project's own graded predictions pooled with the published curves
(docs/methods.md#how-accurate-each-prediction-is): the worked example's pooled factor, and own_weight 0 giving the
public one."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.measured.conformal import PREDICTORS_VERSION
from reportgen.errors import InputError
from reportgen.pipeline import own_evidence
from reportgen.project.accuracy_table import AccuracyTable, TableCell
from reportgen.project.loader import load_project
from tests.corpus.test_conformal import SCORES

# the worked example's 2–4× cell: 15 published curves, f = 0.85
TABLE = AccuracyTable(PREDICTORS_VERSION, "0" * 64, 15, {"amdahl/<=4": TableCell(
    15, 14, 15, 0, 0, 0.058, -0.006, 8, 0.85, 4.0, "provisional", tuple(SCORES))})


HALF = math.log(1.2)  # the predictions' log half-width: [100/1.2, 120] around 100 s


def ledger_row(score: float, nodes: int, measured_in: str) -> dict[str, object]:
    """A graded Amdahl prediction of 100 s in [100/1.2, 120] measured at 100·1.2^score: its score (the one of
    1.30 is off by 27 %, past 25 %: one miss, weighing 4 of 27, does not demote the cell)."""
    measured = 100.0 * math.exp(score * HALF)
    return {"nodes": nodes, "model": "amdahl", "predicted_in": "r1", "measured_in": measured_in,
            "predicted_s": 100.0, "measured_s": measured, "rel_error": measured / 100 - 1, "inside": score <= 1,
            "status": "graded", "ratio": 3.0, "bucket": "<=4", "score": score, "low_s": 100.0 / 1.2,
            "high_s": 120.0, "inside_calibrated": None}


PROJECT = """
project: {title: P, goal: {time_per_run: 200 s}}
design: {nodes: 12}
scaling: {time_unit: s, runs: [{nodes: 1, time: 1000}, {nodes: 4, time: 325}]}
calibration: {ledger: history.json, own_weight: WEIGHT}
"""


def pooled(tmp_path: Path, weight: str) -> object:
    history = {"ledger": [ledger_row(0.40, 12, "r2"), ledger_row(1.30, 24, "r3"), ledger_row(0.70, 48, "r4"),
                          {**ledger_row(0.2, 96, "r5"), "status": "pending", "measured_s": None}]}
    (tmp_path / "history.json").write_text(json.dumps(history), encoding="utf-8")
    (tmp_path / "p.yaml").write_text(PROJECT.replace("WEIGHT", weight), encoding="utf-8")
    loaded = load_project(tmp_path / "p.yaml")
    own = own_evidence(loaded)
    assert own is not None and len(own.cases) == 3  # the pending prediction is no case
    analysis = analyze(loaded.project, accuracy=TABLE, own=own)
    return analysis


def test_three_graded_predictions_weighing_four_each_set_the_factor(tmp_path: Path) -> None:
    analysis = pooled(tmp_path, "4")
    calibration = analysis.goal.plan_estimate.calibration  # type: ignore[attr-defined]
    # need 0.9 × (15 + 12 + 1) = 25.2, first reached at s = 1.30 (tests/corpus/test_conformal.py works it)
    assert calibration.factor == 1.30 and calibration.status == "provisional"
    assert (calibration.cases, calibration.own_cases, calibration.own_covered) == (15, 3, 3)
    pooling = analysis.calibration.pooled  # type: ignore[attr-defined]
    assert (pooling.own_cases, pooling.own_weight, pooling.ledger) == (3, 4, "history.json")
    assert "and 3 of 3 of this project's graded predictions" in analysis.summary.verdict  # type: ignore[attr-defined]


def test_own_weight_zero_gives_the_public_factor(tmp_path: Path) -> None:
    analysis = pooled(tmp_path, "0")
    calibration = analysis.goal.plan_estimate.calibration  # type: ignore[attr-defined]
    assert calibration.factor == 0.85 and calibration.own_cases == 0
    assert analysis.calibration.pooled is None  # type: ignore[attr-defined]


def test_a_ledger_that_is_not_a_history_is_one_located_error(tmp_path: Path) -> None:
    (tmp_path / "history.json").write_text('{"ledger": [{"nodes": -1}]}', encoding="utf-8")
    (tmp_path / "p.yaml").write_text(PROJECT.replace("WEIGHT", "4"), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        own_evidence(load_project(tmp_path / "p.yaml"))
    (problem,) = raised.value.problems
    assert str(problem).endswith("p.yaml:5:23: error: calibration.ledger: history.json: ledger[0]: status None is not "
                                 "graded, superseded or pending")


def test_without_a_table_the_build_goes_on_raw_and_says_so(tmp_path: Path) -> None:
    from reportgen.project.accuracy_table import read_table

    for text in ("not json", '{"format": 2, "cells": {}}', '{"format": 1}', ""):
        (tmp_path / "calibration.json").write_text(text, encoding="utf-8")
        assert read_table(tmp_path / "calibration.json") is None, text
    (tmp_path / "p.yaml").write_text(PROJECT.replace("calibration: {ledger: history.json, own_weight: WEIGHT}\n", ""),
                                     encoding="utf-8")
    analysis = analyze(load_project(tmp_path / "p.yaml").project, uncalibrated=True)
    estimate = analysis.goal.plan_estimate  # type: ignore[attr-defined]
    assert estimate.calibration is None and estimate.calibrated_low_s is None
    assert analysis.calibration is None
    assert "calibration-table-missing" in {finding.code for finding in analysis.findings}
    (row,) = analysis.goal.fitted_at_plan  # type: ignore[attr-defined]
    assert row.ci_basis == "raw" and row.time_ci == pytest.approx((estimate.low_s, estimate.high_s))
