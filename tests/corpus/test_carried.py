"""Every predicted number of every example carries its grade (docs/methods.md#how-accurate-each-prediction-is): the
plan's estimate and the α–β model's times and speedups their cell on published curves, every predicted location
and what-if `not-graded`; page 1's counts are results.json's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.pipeline import analyze_loaded
from reportgen.project.accuracy_table import Calibration
from reportgen.project.loader import load_project
from reportgen.render.results import dumps

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "inputs").glob("*.yaml"))
FIELDS = {name for name in Calibration.__dataclass_fields__}


def grade(value: object, where: str, *, status: str | None = None) -> None:
    assert isinstance(value, dict), (where, value)
    assert set(value) == FIELDS, (where, sorted(set(value) ^ FIELDS))
    if status is not None:
        assert value["status"] == status, (where, value)
    else:
        assert value["status"] in ("calibrated", "provisional", "too-few", "demoted"), (where, value)
        assert value["ratio"] is not None and value["bucket"] is not None, where


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_every_predicted_number_carries_its_grade(path: Path) -> None:
    _, document = analyze_loaded(load_project(path))
    results = json.loads(dumps(document))
    assert results["calibration"]["curves"] >= 25 and len(results["calibration"]["corpus_sha256"]) == 64
    estimate = (results.get("goal") or {}).get("plan_estimate")
    if estimate is not None:
        grade(estimate["calibration"], "goal.plan_estimate")
        if estimate["model_time_s"] is not None:
            grade(estimate["model_calibration"], "goal.plan_estimate.model")
    prediction = results.get("prediction")
    if prediction is not None:
        for index, row in enumerate(prediction["rows"]):
            grade(row["calibration"], f"prediction.rows[{index}]")
        grade(prediction["speedup_at_p_star_calibration"], "prediction.speedup_at_p_star")
        grade(prediction["p_star_calibration"], "prediction.p_star", status="not-graded")
    layout = results.get("layout")
    if layout is not None and layout["step"] is not None:
        grade(layout["step"]["calibration"], "layout.step")
        grade(layout["memory_per_device_b_calibration"], "layout.memory_per_device_b")
        grade(prediction["layout"]["step"]["calibration"], "prediction.layout.step")
    for index, row in enumerate((results.get("plan_search") or {}).get("best") or ()):
        grade(row["calibration"], f"plan_search.best[{index}]")
    for index, row in enumerate((results.get("serving") or {}).get("rows") or ()):
        if row["capacity_source"] == "fitted":
            grade(row["calibration"], f"serving.rows[{index}]")
        else:
            assert row["calibration"] is None
    scaling = results.get("scaling")
    if scaling is not None:
        grade(scaling["peak_nodes_ci_calibration"], "scaling.peak_nodes_ci", status="not-graded")
        if scaling.get("usl"):
            grade(scaling["usl"]["peak_nodes_calibration"], "scaling.usl.peak_nodes", status="not-graded")
    if results.get("cost"):
        grade(results["cost"]["cost_optimal_nodes_ci_calibration"], "cost.cost_optimal_nodes_ci",
              status="not-graded")
    for index, lever in enumerate((results.get("goal") or {}).get("levers") or ()):
        grade(lever["flips_at_calibration"], f"goal.levers[{index}].flips_at", status="not-graded")
    for index, run in enumerate(results.get("next_runs") or ()):
        grade(run["p_wrong_before_calibration"], f"next_runs[{index}]", status="not-graded")
    optimum = results["summary"]["optimum"]
    if optimum["source"] in ("usl", "model"):
        grade(optimum["calibration"], "summary.optimum", status="not-graded")


def test_page_one_quotes_the_counts_results_json_holds() -> None:
    _, document = analyze_loaded(load_project(ROOT / "inputs" / "bert-extrapolated.yaml"))
    results = json.loads(dumps(document))
    calibration = results["goal"]["plan_estimate"]["calibration"]
    quoted = {quantity["source"]: quantity["value"] for quantity in results["summary"]["quantities"]}
    for key in ("covered", "cases", "median_abs_rel_error"):
        assert quoted[f"goal.plan_estimate.calibration.{key}"] == calibration[key]
    verdict = results["summary"]["verdict"]
    assert f"held its 90 % interval in {calibration['covered']} of {calibration['cases']} published cases" in verdict
    assert f"(median error {calibration['median_abs_rel_error'] * 100:.0f} %" in verdict
