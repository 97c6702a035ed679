"""The section registry (reportgen.analysis.RESULTS_SECTIONS): each section declared once, completely. A declaration
that forgets a piece (a template the report never includes or that never names it, a field Analysis lacks) fails
here, before a report is missing it; so does a figure family the report does not draw."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from pathlib import Path

import jinja2
import pytest
from jinja2 import meta

import reportgen
from reportgen.analysis import DECLARED, RESULTS_SECTIONS, Analysis
from reportgen.analysis.declared import Declared, ResultsSection
from reportgen.render.figure_families import FAMILIES
from reportgen.render.results import results_schema, section_schema
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


def declared_includes() -> set[str]:
    """The templates of the analyses declared in their own modules: each chapter includes its own by a loop over
    `declared_views.<chapter>`, which a parse cannot follow, so they are added here when the loop is there."""
    found = set()
    for declared in DECLARED:
        chapter = (TEMPLATES / "chapters" / f"{declared.chapter}.html").read_text(encoding="utf-8")
        if f"declared_views.{declared.chapter}" in chapter:
            found |= {declared.template} | included_from(declared.template)
    return found


REPORT = included_from("report.html") | declared_includes()


@pytest.fixture(scope="module")
def examples() -> list[reportgen.Results]:
    return [reportgen.analyze(INPUTS / name) for name in ("example.yaml", "inference-service.yaml")]


def problems(section: ResultsSection, analyses: list[Analysis]) -> list[str]:
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
    properties = results_schema()["properties"]
    declared = section.field in {f.name for f in dataclasses.fields(Analysis)}
    if section.key not in properties or (declared and not section_schema(section).get("description")):
        found.append("no described schema")
    return sorted(set(found))


def test_the_registry_lists_the_sections_of_results_json(examples: list[reportgen.Results]) -> None:
    keys = [section.key for section in RESULTS_SECTIONS]
    assert len(set(keys)) == len(keys)
    assert list(examples[0].document)[2:] == keys  # after schema_version and project, in the registry's order
    assert results_schema()["required"][2:] == keys


@pytest.mark.parametrize("section", RESULTS_SECTIONS, ids=lambda section: section.key)
def test_each_section_is_declared_completely(section: ResultsSection, examples: list[reportgen.Results]) -> None:
    assert problems(section, [results.analysis for results in examples]) == []


def test_an_incomplete_declaration_is_caught(examples: list[reportgen.Results]) -> None:
    scaling = next(section for section in RESULTS_SECTIONS if section.key == "scaling")
    analyses = [results.analysis for results in examples]
    assert problems(replace(scaling, template="measure/nowhere.html"), analyses) == ["no template measure/nowhere.html"]
    assert problems(replace(scaling, template="measure/levers.html"), analyses) == [
        "measure/levers.html never names scaling or scaling"]
    assert problems(replace(scaling, field="scalings"), analyses) == ["Analysis has no field 'scalings'"]
    orphan = TEMPLATES / "measure" / "orphan.html"
    orphan.write_text("{{ analysis.scaling }}", encoding="utf-8")
    try:
        assert problems(replace(scaling, template="measure/orphan.html"), analyses) == [
            "measure/orphan.html is not included by report.html"]
    finally:
        orphan.unlink()


def test_every_figure_module_of_the_report_is_a_family_it_draws() -> None:
    """The report draws the figure families of render/figure_families.py (figure_jobs walks FAMILIES); every other
    module with jobs() is the diff's (overlay)."""
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
    from reportgen.render.figure_families import figure_jobs

    placed = {key for name in REPORT | {"report.html"}
              for key in re.findall(r'figure\("([^"]+)"', (TEMPLATES / name).read_text(encoding="utf-8"))}
    drawn = set()
    for path in sorted(INPUTS.glob("*.yaml")):
        loaded = load_project(path)
        drawn |= {job.frame.key for job in figure_jobs(analyze_loaded(loaded)[0], loaded.project)}
    assert drawn and drawn <= placed, f"drawn but placed by no template: {sorted(drawn - placed)}"


def test_the_tables_special_cuts_name_sections() -> None:
    """Every other section with per-scale rows is cut by rows_at (reportgen.render.selection.for_tables)."""
    from reportgen.render.selection import CUTS

    assert set(CUTS) <= {section.key for section in RESULTS_SECTIONS if not section.uncut}


@pytest.mark.parametrize("declared", DECLARED, ids=lambda declared: declared.key)
def test_a_declared_analysis_places_its_plots(declared: Declared[object], examples: list[reportgen.Results]) -> None:
    """Each plot a declared analysis asks for is placed by its own template, in a chapter that includes it."""
    source = (TEMPLATES / declared.template).read_text(encoding="utf-8")
    assert declared.template in REPORT
    for results in examples:
        result = declared.of(results.analysis)
        for plot in declared.plots(result) if result is not None else ():
            assert f'figure("{plot.key}")' in source


def test_the_models_table_runs_over_the_measured_range_and_the_plan() -> None:
    """docs/methods.md#a-report-a-reviewer-reads-through: rows up to max(largest measured scale, plan), and the
    plan's."""
    from dataclasses import replace

    from reportgen.analysis import analyze
    from reportgen.project.loader import load_project
    from reportgen.render.selection import model_within_evidence
    from tests.conftest import INPUTS

    analysis = analyze(load_project(INPUTS / "example.yaml").project)  # measured at 1–16 nodes, planned at 8
    assert max(row.nodes for row in analysis.prediction.rows) == 4096
    shown = model_within_evidence(analysis).prediction
    assert [row.nodes for row in shown.rows] == [1, 2, 4, 8, 16]
    planned_far = replace(analysis, prediction=replace(analysis.prediction, planned_nodes=64))
    assert [row.nodes for row in model_within_evidence(planned_far).prediction.rows][-1] == 64
    unmeasured = replace(planned_far, scaling=None)
    assert max(row.nodes for row in model_within_evidence(unmeasured).prediction.rows) == 64
    nothing = replace(unmeasured, prediction=replace(unmeasured.prediction, planned_nodes=None))
    assert model_within_evidence(nothing).prediction.rows == analysis.prediction.rows  # no evidence: the whole table
