"""The Python API for notebooks and `build --format csv`: the same numbers as results.json, as DataFrames and CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import reportgen
from reportgen.commands.cli import main
from reportgen.errors import InputError
from tests.conftest import INPUTS, loaded_after


@pytest.fixture(scope="module")
def example() -> reportgen.Results:
    return reportgen.analyze(reportgen.load(INPUTS / "example.yaml"))


def test_a_section_is_a_frame_with_the_columns_of_results_json(example: reportgen.Results) -> None:
    frame = example.scaling.to_frame()
    rows = example.document["scaling"]["rows"]
    assert list(frame.columns) == list(rows[0])
    assert list(frame["nodes"]) == [r["nodes"] for r in rows] == [1, 2, 4, 8, 16]
    assert list(frame["speedup"]) == pytest.approx([r["speedup"] for r in rows])
    assert example.scaling.knee_nodes == example.document["scaling"]["knee_nodes"]  # typed fields read through


def test_every_table_by_name(example: reportgen.Results) -> None:
    names = set(example.tables())
    assert {"scaling", "prediction", "prediction.sensitivity", "cost", "cost.regimes.spot", "diagnosis.walls",
            "decisions", "findings"} <= names
    sensitivity = example.prediction.to_frame("sensitivity")
    assert len(sensitivity) == len(example.document["prediction"]["sensitivity"])
    decisions = example.decisions.to_frame()
    assert "limits.max_time_s" in decisions.columns  # nested objects become dotted columns
    with pytest.raises(KeyError, match="has no table 'nothing'"):
        example.prediction.to_frame("nothing")


def test_a_section_without_input_is_none(tmp_path: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling:\n  runs:\n    - {nodes: 1, time: 100 s}\n"
                       "    - {nodes: 2, time: 60 s}\n")
    results = reportgen.analyze(project)  # a path is loaded first
    assert results.cost is None and results.scaling is not None
    assert list(results.scaling.to_frame()["speedup"]) == pytest.approx([1.0, 100 / 60])


def test_load_raises_the_located_problems(tmp_path: Path) -> None:
    project = tmp_path / "bad.yaml"
    project.write_text("project: {title: T}\nhardware: {peak_compute: 5 GB}\n")
    with pytest.raises(InputError, match=r"bad.yaml:2:\d+: error: hardware.peak_compute"):
        reportgen.load(project)


def test_build_writes_each_table_as_csv(tmp_path: Path) -> None:
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json,csv"]) == 0
    folder = tmp_path / "example"
    document = json.loads((folder / "results.json").read_text())
    with (folder / "scaling.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [int(r["nodes"]) for r in rows] == [r["nodes"] for r in document["scaling"]["rows"]]
    # full precision: the CSV reads back to the very floats of results.json
    assert [float(r["efficiency"]) for r in rows] == [r["efficiency"] for r in document["scaling"]["rows"]]
    with (folder / "decisions.csv").open(newline="") as stream:
        decision = next(csv.DictReader(stream))
    assert json.loads(decision["limits.from_goal"]) == document["decisions"][0]["limits"]["from_goal"]
    assert {p.name for p in folder.glob("cost-regimes-*.csv")} == {
        f"cost-regimes-{name}.csv" for name in document["cost"]["regimes"]}


def test_pandas_stays_off_the_paths_that_do_not_ask_for_it(tmp_path: Path) -> None:
    assert loaded_after(["build", "inputs/example.yaml", "-o", str(tmp_path), "--format", "json"], ("pandas",)) == []
