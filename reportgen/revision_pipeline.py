"""The revisions pipeline (methods.md#a-projects-history): a revision (a path, or git's REV:PATH) opened, loaded and
analysed, as the build pipeline does for one project, and two of them compared, rendered and written atomically
(`reportgen diff`). `reportgen history` analyses each revision of a file through `analyse_source` too. Below the
commands, which only parse and print."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen import interrupts
from reportgen.analysis import Analysis
from reportgen.analysis.revisions.changes import DiffResult, compare
from reportgen.files import output_dir, shown_path, write_files
from reportgen.formats import DIFF_FORMATS
from reportgen.json_types import JsonObject
from reportgen.pipeline import analyses_of
from reportgen.project.loader import LoadedProject, load_project
from reportgen.project.revisions import Source, open_source
from reportgen.render.results import dumps, results_document

if TYPE_CHECKING:
    from reportgen.figures import FigureFrame
    from reportgen.project.model import Project
    from reportgen.render.report import Report



@dataclass(frozen=True)
class DiffOptions:
    out_root: Path = Path("build")
    formats: tuple[str, ...] = DIFF_FORMATS
    paper: str = "a4"


@dataclass(frozen=True)
class DiffContext:
    """What diff.html and diff.md render. A test checks that the templates use nothing else."""

    diff: DiffResult
    figures: dict[str, FigureFrame]  # overlaid figures by key
    paper: str
    date: str
    created: str | None
    version: str
    old_title: str
    new_title: str
    currency: str
    old_revision: str
    new_revision: str


@dataclass(frozen=True)
class DiffOutcome:
    result: DiffResult
    written: list[Path]


def analyse_source(source: Source, *, skip: frozenset[str] = frozenset()) -> tuple[LoadedProject, Analysis]:
    """One revision, opened: loaded with every rule and analysed, as a build analyses it (less `skip`)."""
    loaded = load_project(source.path, display=source.display)
    return loaded, analyses_of(loaded, skip)


def _load(spec: str) -> tuple[LoadedProject, Analysis, JsonObject, str]:
    with open_source(spec) as source:
        loaded, analysis = analyse_source(source)
        return loaded, analysis, results_document(loaded, analysis), source.stem


def run_diff(old_spec: str, new_spec: str, options: DiffOptions) -> DiffOutcome:
    old, old_analysis, old_document, old_stem = _load(old_spec)
    new, new_analysis, new_document, new_stem = _load(new_spec)
    result = compare(old.project, old_analysis, new.project, new_analysis, old_label=shown_path(old.display),
                     new_label=shown_path(new.display))
    files: dict[str, bytes] = {}
    if "json" in options.formats:
        files["diff.json"] = dumps(diff_document(result))
    if "md" in options.formats:
        from reportgen.render.report import render_markdown

        files["diff.md"] = render_markdown("diff.md", {"diff": result, "currency": result.currency}).encode("utf-8")
    if "html" in options.formats or "pdf" in options.formats:
        report = _report(result, old_document, new_document, old.project.project.title, new.project, options)
        if "html" in options.formats:
            files["diff.html"] = report.html()
        if "pdf" in options.formats:
            files["diff.pdf"] = report.pdf()
    folder = output_dir(options.out_root, f"diff-{old_stem}-vs-{new_stem}")
    interrupts.check()
    return DiffOutcome(result, write_files(folder, files))


def diff_document(result: DiffResult) -> JsonObject:
    """The diff as JSON: every field of DiffResult, plus the verdict counts scripts check first."""
    document = dataclasses.asdict(result)
    for key in ("appeared", "resolved", "findings"):  # a finding as results.json has it: no working fields
        for finding in document[key]:
            finding.pop("refutes", None)
    document["identical"] = result.identical
    document["worse"] = [change.name for change in result.worse]
    document["schema_version"] = 1
    return document


def _report(result: DiffResult, old: JsonObject, new: JsonObject, old_title: str, project: Project,
            options: DiffOptions) -> Report:
    """The diff's page with its overlaid figures drawn (in this process: there are four at most)."""
    from reportgen.figures import FigurePool, draw_figures
    from reportgen.figures.overlay import jobs
    from reportgen.render.context import epoch_of, report_date
    from reportgen.render.report import Report, render_page, template_vars
    from reportgen.version import __version__

    overlays = jobs(old, new, result.old_label, result.new_label)
    drawings = draw_figures(overlays, pool=FigurePool(None)).svgs
    date, created = report_date(project)
    context = DiffContext(diff=result, figures={job.frame.key: job.frame for job in overlays}, paper=options.paper,
                          date=date, created=created,
                          version=__version__, old_title=old_title, new_title=project.project.title,
                          currency=result.currency,
                          old_revision=_revision(old) or "old", new_revision=_revision(new) or "new")
    page = render_page("diff.html", template_vars(context), [job.frame for job in overlays])
    return Report(page, drawings, epoch_of(created))


def _revision(document: JsonObject) -> str | None:
    """project.revision as the results document has it."""
    project = document.get("project")
    revision = project.get("revision") if isinstance(project, Mapping) else None
    return revision if isinstance(revision, str) else None
