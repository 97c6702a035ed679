"""The Python API for notebooks and `build --format csv`: the same numbers as results.json, as DataFrames and CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

import reportgen
from reportgen.commands.cli import main
from reportgen.errors import InputError
from tests.conftest import INPUTS, loaded_after


@pytest.fixture(scope="module")
def example() -> reportgen.Results:
    return reportgen.analyze(reportgen.load(INPUTS / "example.yaml"))


def test_a_section_is_a_frame_with_the_columns_of_results_json(example: reportgen.Results) -> None:
    from reportgen.api import column_name

    frame = example.scaling.to_frame()
    rows = example.document["scaling"]["rows"]
    plain = [key for key in rows[0] if not key.endswith("_ci")]
    assert [column for column in frame.columns if not column.endswith((" low", " high"))] == \
        [column_name(key, "USD") for key in plain]
    assert "time [s]" in frame.columns and "time_s" not in frame.columns  # one convention: the unit in brackets
    assert list(frame["nodes"]) == [r["nodes"] for r in rows] == [1, 2, 4, 8, 16]
    assert list(frame["speedup"]) == pytest.approx([r["speedup"] for r in rows])
    assert example.scaling.knee_nodes == example.document["scaling"]["knee_nodes"]  # typed fields read through


def test_every_table_by_name(example: reportgen.Results) -> None:
    names = set(example.tables)
    assert {"scaling", "prediction", "prediction.sensitivity", "cost", "cost.regimes.spot", "diagnosis.walls",
            "decisions", "findings"} <= names
    sensitivity = example.prediction.to_frame("sensitivity")
    assert len(sensitivity) == len(example.document["prediction"]["sensitivity"])
    decisions = example.decisions.to_frame()
    assert "limits.max_time [s]" in decisions.columns  # nested objects become dotted columns
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


def test_the_package_offers_its_api_to_tab_completion() -> None:
    assert {"load", "analyze", "Results"} <= set(dir(reportgen))
    assert not {"Any", "TYPE_CHECKING", "annotations"} & set(dir(reportgen))


def test_every_registered_section_is_an_attribute_listed_by_dir(example: reportgen.Results) -> None:
    from reportgen.analysis import RESULTS_SECTIONS

    for section in RESULTS_SECTIONS:
        assert section.key in dir(example), section.key
        value = getattr(example, section.key)
        assert (value is None) == (example.document[section.key] is None), section.key
    with pytest.raises(AttributeError, match="the sections are diagnosis"):
        example.no_such_section  # noqa: B018


def test_reprs_are_short_and_notebooks_get_html(example: reportgen.Results) -> None:
    text = repr(example)
    assert len(text) < 600 and text.startswith("<reportgen results of 'Data-parallel") and "model_check" in text
    assert repr(example.scaling) == "<reportgen section scaling: 5 rows; tables: scaling, scaling.pop>"
    html = example._repr_html_()
    assert "<table>" in html and "<code>results.scaling</code>" in html and len(html) < 5000
    page = example.scaling._repr_html_()
    assert page.count("</tr>") == 1 + 5 and "5 rows" in page  # the header and one row per scale


def test_money_columns_carry_the_currency(example: reportgen.Results) -> None:
    assert list(example.cost.to_frame().columns) == ["nodes", "cost [USD]", "total_with_time_value [USD]"]
    assert "limits.max_cost [USD]" in example.decisions.to_frame().columns
    assert "speedup_per_cost" in example.cost.to_frame("marginal").columns  # a ratio, not money
    assert example.tables["cost"].equals(example.cost.to_frame())


def test_every_money_key_of_the_schema_is_known_as_money() -> None:
    """A key added to results.json that holds money must carry the currency in a DataFrame too."""
    from reportgen.api import MONEY
    from reportgen.render.results import results_schema

    def keys(schema: dict[str, object], name: str = "") -> set[str]:
        found = {name} if name else set()
        for key, sub in schema.get("properties", {}).items():  # type: ignore[union-attr]
            found |= keys(sub, key)
        for sub in (schema.get("items"), *schema.get("anyOf", []), *schema.get("oneOf", [])):  # type: ignore[misc]
            if isinstance(sub, dict):
                found |= keys(sub, name)
        extra = schema.get("additionalProperties")
        return found | (keys(extra, name) if isinstance(extra, dict) else set())

    named = {key for key in keys(results_schema()) if ("cost" in key or "price" in key)
             and not any(part in key for part in ("ratio", "optimal", "per_cost", "meets", "limits_from"))}
    assert named - MONEY == set() and MONEY - named <= {"cost_ci", "total_with_time_value", "money"}


def test_a_notebook_builds_the_report(tmp_path) -> None:
    import reportgen

    written = reportgen.build(reportgen.load(INPUTS / "example.yaml"), tmp_path, ["html", "json"])
    assert sorted(path.name for path in written) == ["report.html", "results.json"]
    assert all(path.parent == tmp_path / "example" for path in written)
    assert "build" in dir(reportgen)
    with pytest.raises(ValueError, match="formats are html, pdf, json, csv"):
        reportgen.build(INPUTS / "example.yaml", tmp_path, ["docx"])
    with pytest.raises(ValueError, match="paper is a4 or letter, got 'a3'"):  # laid out on A4 silently before
        reportgen.build(INPUTS / "example.yaml", tmp_path, ["pdf"], paper="a3")


def test_a_loaded_project_is_built_as_it_was_loaded(tmp_path: Path) -> None:
    """reportgen.build(loaded) read the file again: a file changed since, or text loaded under a name, was not
    what the report showed."""
    import json

    import reportgen

    path = tmp_path / "p.yaml"
    path.write_text((INPUTS / "example.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    loaded = reportgen.load(path)
    path.write_text(path.read_text(encoding="utf-8").replace("\n  nodes: 8\n", "\n  nodes: 4\n", 1), encoding="utf-8")
    (written,) = reportgen.build(loaded, tmp_path / "out", ["json"])
    document = json.loads(written.read_text(encoding="utf-8"))
    assert document["goal"]["plan_nodes"] == loaded.project.design.nodes
    assert reportgen.load(path).project.design.nodes != loaded.project.design.nodes  # the file did change


def test_a_loaded_project_prints_as_one_line() -> None:
    import reportgen

    text = repr(reportgen.load(INPUTS / "example.yaml"))
    assert text.startswith("<reportgen project 'Data-parallel training of a 1.3B-parameter code model' (r4)")
    assert "planned at 8 nodes; 5 runs at 1–16 nodes (5 scales)" in text and len(text) < 400
    assert "7900000000000000.0" not in text  # no SI dump of the dataclasses


def test_the_summary_shows_its_verdict_and_next_action_in_a_notebook() -> None:
    import reportgen

    summary = reportgen.analyze(INPUTS / "example.yaml").summary
    assert summary is not None
    assert repr(summary).startswith("<reportgen section summary: The goal is not met at the planned 8 nodes")
    html = summary._repr_html_()
    assert "<dt>verdict</dt>" in html and "<dt>next_action.text</dt>" in html and "0 rows" not in html


def test_interval_columns_are_floats_with_nan() -> None:
    import math

    import reportgen

    frame = reportgen.analyze(INPUTS / "nightly-repeats.yaml").scaling.to_frame()
    low, high = frame["time [s] low"], frame["time [s] high"]
    assert low.dtype == high.dtype == "float64"
    assert all(lo <= t <= hi for lo, t, hi in zip(low, frame["time [s]"], high, strict=True) if not math.isnan(lo))
    single = reportgen.analyze(INPUTS / "example.yaml").scaling.to_frame()
    assert single["time [s] low"].isna().all()  # one run per scale: no interval, NaN (not None in an object column)


def test_a_build_sets_its_settled_objects_aside_from_the_collector_and_gives_them_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project as read, then its analyses and results document, live as long as the build: the collector's full
    passes skip them meanwhile (1.0 s of a 10,000-scale build), and a notebook's or a watch's next build finds
    the collector as it was."""
    import gc

    from reportgen import pipeline

    frozen_while_writing: list[int] = []
    dumps = pipeline.dumps

    def recording(document: Any) -> bytes:
        frozen_while_writing.append(gc.get_freeze_count())
        return dumps(document)

    monkeypatch.setattr(pipeline, "dumps", recording)
    before = gc.get_freeze_count()
    pipeline.build(INPUTS / "example.yaml", pipeline.BuildOptions(out_root=tmp_path, formats=("json",)))
    assert frozen_while_writing and frozen_while_writing[0] > before + 1000
    assert gc.get_freeze_count() == 0
