"""The section registry (reportgen.analysis.SECTIONS): each section declared once, completely. A declaration that
forgets a piece (a template the report never includes, per-scale rows without a cut to the tables' selection, a
field Analysis lacks) fails here, before a report is missing it; so does a figure family the report does not draw."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from pathlib import Path

import jinja2
import pytest
from jinja2 import meta

import reportgen
from reportgen.analysis import SECTIONS, Analysis, Section
from reportgen.render.results import results_schema, section_schema
from reportgen.render.sections import FAMILIES
from tests.conftest import INPUTS, ROOT

TEMPLATES = ROOT / "templates"


def included_from(name: str, seen: set[str] | None = None) -> set[str]:
    """Every template `name` includes, imports or extends, transitively."""
    seen = set() if seen is None else seen
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    for found in meta.find_referenced_templates(jinja2.Environment().parse(source)):
        if found and found not in seen:
            seen.add(found)
            included_from(found, seen)
    return seen


REPORT = included_from("report.html")


@pytest.fixture(scope="module")
def examples() -> list[reportgen.Results]:
    return [reportgen.analyze(INPUTS / name) for name in ("example.yaml", "inference-service.yaml")]


def problems(section: Section, analyses: list[Analysis]) -> list[str]:
    """What is missing from a section's declaration."""
    found = []
    if section.field not in {f.name for f in dataclasses.fields(Analysis)}:
        found.append(f"Analysis has no field {section.field!r}")
    template = TEMPLATES / section.template
    if not template.is_file():
        found.append(f"no template {section.template}")
    elif section.template not in REPORT:
        found.append(f"{section.template} is not included by report.html")
    elif section.field not in template.read_text(encoding="utf-8") and section.key not in template.read_text(
            encoding="utf-8"):
        found.append(f"{section.template} never names {section.field} or {section.key}")
    for analysis in analyses:
        result = section.result(analysis) if section.field in {f.name for f in dataclasses.fields(Analysis)} else None
        rows = getattr(result, "rows", None)
        if rows and hasattr(rows[0], "nodes") and section.cut is None and not section.uncut:
            found.append("per-scale rows but no cut to the tables' node counts")
            break
    properties = results_schema()["properties"]
    declared = section.field in {f.name for f in dataclasses.fields(Analysis)}
    if section.key not in properties or (declared and not section_schema(section).get("description")):
        found.append("no described schema")
    return sorted(set(found))


def test_the_registry_lists_the_sections_of_results_json(examples: list[reportgen.Results]) -> None:
    keys = [section.key for section in SECTIONS]
    assert len(set(keys)) == len(keys)
    assert list(examples[0].document)[2:] == keys  # after schema_version and project, in the registry's order
    assert results_schema()["required"][2:] == keys


@pytest.mark.parametrize("section", SECTIONS, ids=lambda section: section.key)
def test_each_section_is_declared_completely(section: Section, examples: list[reportgen.Results]) -> None:
    assert problems(section, [results.analysis for results in examples]) == []


def test_an_incomplete_declaration_is_caught(examples: list[reportgen.Results]) -> None:
    scaling = next(section for section in SECTIONS if section.key == "scaling")
    analyses = [results.analysis for results in examples]
    assert problems(replace(scaling, template="measure/nowhere.html"), analyses) == ["no template measure/nowhere.html"]
    assert problems(replace(scaling, template="measure/fits.html", cut=None), analyses) == [
        "per-scale rows but no cut to the tables' node counts"]
    assert problems(replace(scaling, field="scalings"), analyses) == ["Analysis has no field 'scalings'"]
    orphan = TEMPLATES / "measure" / "orphan.html"
    orphan.write_text("{{ analysis.scaling }}", encoding="utf-8")
    try:
        assert problems(replace(scaling, template="measure/orphan.html"), analyses) == [
            "measure/orphan.html is not included by report.html"]
    finally:
        orphan.unlink()


def test_every_figure_module_of_the_report_is_a_family_it_draws() -> None:
    """The report draws the figure families of render/sections.py (figure_jobs walks FAMILIES); every other module
    with jobs() is the diff's (overlay)."""
    declared = {family.__module__.rsplit(".", 1)[-1] for family in FAMILIES}
    modules = {path.stem for path in (ROOT / "reportgen" / "figures").glob("*.py")
               if "def jobs(" in path.read_text(encoding="utf-8")}
    assert declared == modules - {"overlay"}


def test_the_model_check_follows_the_recipe(examples: list[reportgen.Results], tmp_path: Path) -> None:
    """The section added by the recipe of docs/architecture.md: in results.json, the API, the CSV tables and the
    report, from one declaration."""
    example = examples[0]
    check = example.model_check
    assert check is not None and check.speedup_held is False  # the example's 8-node run is a third below the model
    rows = example.document["model_check"]["rows"]
    assert [row["nodes"] for row in rows] == [2, 4, 8, 16]
    frame = check.to_frame()
    assert list(frame["speedup_ratio"]) == pytest.approx([r["measured_speedup"] / r["predicted_speedup"] for r in rows])
    assert "model_check" in example.tables
    assert examples[1].model_check is None  # a service without an α–β model has nothing to check
    from reportgen.pipeline import BuildOptions, build

    build(INPUTS / "example.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    caption = "The design's α–β model against the measurements"
    assert caption in (tmp_path / "example" / "report.html").read_text(encoding="utf-8")
    golden = (ROOT / "tests" / "golden" / "mlperf-ssd.html").read_text(encoding="utf-8")
    assert caption not in golden  # a project without a model shows no such table


def test_every_figure_a_family_draws_is_placed_by_a_template() -> None:
    """A figure job whose key no template places (`{{ figure("key") }}`) would be drawn for nobody and missing from
    the report without a word: every figure of every example is placed by a template the report includes."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.sections import figure_jobs

    placed = {key for name in REPORT | {"report.html"}
              for key in re.findall(r'figure\("([^"]+)"', (TEMPLATES / name).read_text(encoding="utf-8"))}
    drawn = set()
    for path in sorted(INPUTS.glob("*.yaml")):
        loaded = load_project(path)
        drawn |= {job.frame.key for job in figure_jobs(analyze_loaded(loaded)[0], loaded.project)}
    assert drawn and drawn <= placed, f"drawn but placed by no template: {sorted(drawn - placed)}"
