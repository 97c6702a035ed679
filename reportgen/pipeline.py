"""Building a report: load → analyze → results.json, figures, HTML, PDF → written atomically into OUT/<stem>/.

A `Builder` is a warm build process: it keeps its figure cache and figure pool between builds, which is what
`watch` and batch builds reuse. `build()` is the one-shot form.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen import collector, interrupts
from reportgen.analysis import Analysis, analyze
from reportgen.errors import InputError, Problem
from reportgen.figures.cache import FigureCache
from reportgen.files import output_dir, shown_path, write_files
from reportgen.formats import DEFAULT_FORMATS
from reportgen.json_types import JsonObject
from reportgen.project import carbon, measurements
from reportgen.project.accuracy_table import DEFAULT_OWN_WEIGHT, OwnEvidence
from reportgen.project.loader import LoadedProject, load_project
from reportgen.project.spec import locate
from reportgen.project.stdio import output_name
from reportgen.project.yaml_source import read_text
from reportgen.render.report import Page, Report, render_page, start_pdf
from reportgen.render.results import dumps, results_document

if TYPE_CHECKING:
    from reportgen.figures import FigurePool
    from reportgen.figures.jobs import FigureJob
    from reportgen.render.pdf import PdfRenderer

CACHE_FOLDER = ".cache"


@dataclass(frozen=True)
class BuildOptions:
    out_root: Path = Path("build")
    formats: tuple[str, ...] = DEFAULT_FORMATS
    paper: str = "a4"
    use_disk_cache: bool = True  # figures cached under OUT/.cache between runs
    history: Path | None = None  # build --history: the graded predictions pooled into the calibration


@dataclass(frozen=True)
class BuildResult:
    path: Path
    loaded: LoadedProject
    written: list[Path]
    document: JsonObject  # the results.json document
    analysis: Analysis  # the typed results it was written from (what `watch` compares build to build)
    figures_drawn: tuple[str, ...]  # figures drawn by this build; the others came from the cache
    seconds: dict[str, float] = field(default_factory=dict)  # by stage
    report: Report | None = None  # for a PDF rendered later (watch writes the HTML first)


@dataclass
class Builder:
    options: BuildOptions
    pool: FigurePool | None = None  # drawing workers kept between builds, or None for a temporary one
    cache: FigureCache | None = None
    renderer: PdfRenderer | None = None  # PDF workers started early (reportgen.render.pdf_workers), or None: here
    # Told each stage as it begins ("analysing", "drawing the figures", …): the command line's progress line
    stages: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if self.cache is None:
            folder = self.options.out_root / CACHE_FOLDER / "figures" if self.options.use_disk_cache else None
            self.cache = FigureCache(folder)

    def build(self, project: Path | LoadedProject, *, formats: tuple[str, ...] | None = None) -> BuildResult:
        """Build one project's outputs (the file at a path, or a project already loaded: built as it was loaded,
        not read again); nothing is written unless every requested format rendered."""
        try:
            return self._build(project, self.options.formats if formats is None else formats)
        finally:
            collector.given_back()  # a watch or a notebook builds on

    def _build(self, project: Path | LoadedProject, formats: tuple[str, ...]) -> BuildResult:
        clock = _Clock(self.stages)
        # The project as read, then its analyses and results document, live as long as the build: no collector
        # pass over them (a project of 10,000 scales spent 1.0 s of its 5.2 CPU-s in eight: reportgen.collector)
        loaded = project if isinstance(project, LoadedProject) else load_project(project)
        path = loaded.path
        collector.set_aside()
        clock.lap("load")
        analysis, document = analyze_loaded(loaded, ledger=self.options.history)
        collector.set_aside()
        clock.lap("analyze", None if "html" in formats or "pdf" in formats else "writing")
        interrupts.check()
        files: dict[str, bytes] = {}
        if "json" in formats:
            files["results.json"] = dumps(document)
        if "csv" in formats:
            from reportgen.render.tables import csv_files  # pandas: only for a build that asks for CSV

            files.update(csv_files(document))
        report: Report | None = None
        drawn: tuple[str, ...] = ()
        if "html" in formats or "pdf" in formats:
            report, drawn = self._report(path, loaded, analysis, document, formats, files, clock)
        interrupts.check()  # the last moment to stop: nothing has been written yet
        written = write_files(output_dir(self.options.out_root, output_name(path)), files)
        clock.lap("write")
        return BuildResult(path, loaded, written, document, analysis, drawn, clock.laps, report)

    def write_pdf(self, result: BuildResult) -> Path:
        """The PDF of a build that rendered HTML (watch writes the HTML first, then this)."""
        assert result.report is not None
        pdf = result.report.pdf(self._renderer())
        interrupts.check()
        return write_files(output_dir(self.options.out_root, output_name(result.path)), {"report.pdf": pdf})[0]

    def _report(self, path: Path, loaded: LoadedProject, analysis: Analysis, document: JsonObject,
                formats: tuple[str, ...], files: dict[str, bytes], clock: _Clock) -> tuple[Report, tuple[str, ...]]:
        """Render the report into `files` as HTML, PDF or both; also the keys of the figures drawn now. The PDF is
        begun once the figures are being drawn: PDF workers lay the report out meanwhile."""
        from reportgen.render.figure_families import figure_jobs

        jobs = figure_jobs(analysis, loaded.project)
        page, epoch = self._page(path, loaded, analysis, document, jobs)
        clock.lap("page")
        pending = start_pdf(page, epoch, self._renderer()) if "pdf" in formats else None
        try:
            drawings, drawn = self._draw(jobs, beside=pending.processes_at_work if pending else 0,
                                         painting=page.painting(pending) if pending else None)
            clock.lap("figures", None if pending is not None else "writing")
            interrupts.check()
            report = Report(page, drawings, epoch)
            if "html" in formats:
                files["report.html"] = report.html()
            if pending is not None:
                files["report.pdf"], pending = pending.finish(page.svgs(drawings)), None
                clock.lap("pdf")
        finally:
            if pending is not None:  # the figures failed or the build was interrupted: the PDF is given up
                pending.cancel()
        return report, drawn

    def _renderer(self) -> PdfRenderer:
        from reportgen.render.pdf import RenderHere

        return self.renderer or RenderHere()

    def _page(self, path: Path, loaded: LoadedProject, analysis: Analysis, document: JsonObject,
              jobs: list[FigureJob]) -> tuple[Page, int]:
        from reportgen.render.context import build_context
        from reportgen.render.report import template_vars

        frames = [job.frame for job in jobs]
        context = build_context(loaded.project, analysis, document, {frame.key: frame for frame in frames},
                                paper=self.options.paper, input_name=shown_path(path.name),
                                written=loaded.written)
        return render_page("report.html", template_vars(context), frames), context.epoch

    def _draw(self, jobs: list[FigureJob], *, beside: int, painting: Callable[[str, str], None] | None = None,
              ) -> tuple[dict[str, str], tuple[str, ...]]:
        """Each figure's SVG by key, and the keys drawn now (the others came from the cache); `beside` processes
        are at work meanwhile (the PDF's layout), and `painting` is told each figure as it is there."""
        from reportgen.figures import draw_figures

        figures = draw_figures(jobs, pool=self.pool, cache=self.cache, beside=beside, drawn=painting)
        return figures.svgs, figures.drawn


@contextmanager
def warm_builder(options: BuildOptions) -> Iterator[Builder]:
    """A Builder for many builds in this process (watch, a batch with -j 1): it keeps two figure workers and,
    when PDFs are wanted, two PDF workers (reportgen.render.pdf_workers). Its drawing pool is sized for `watch`,
    which draws before it begins a PDF; a one-shot build draws beside its PDF's layout (`Builder._draw`)."""
    from reportgen.figures import figure_pool
    from reportgen.render.pdf_workers import pdf_workers

    with figure_pool() as pool, pdf_workers("pdf" in options.formats) as renderer:
        yield Builder(options, pool=pool, renderer=renderer)


def build(project: Path | LoadedProject, options: BuildOptions) -> list[Path]:
    """Build one project (a one-shot Builder)."""
    return Builder(options).build(project).written


# What a build does after each stage, as a progress line names it
_NEXT = {"load": "analysing", "analyze": "rendering the page", "page": "drawing the figures",
         "figures": "finishing the PDF", "pdf": "writing", "write": ""}


class _Clock:
    """Each stage's seconds; a stage's end is the next one's start, told to `stages` when given."""

    def __init__(self, stages: Callable[[str], None] | None = None) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()
        self._stages = stages
        if stages is not None:
            stages("loading")

    def lap(self, stage: str, then: str | None = None) -> None:
        """The end of `stage`; `then` names what follows when it is not the usual next stage."""
        now = time.perf_counter()
        self.laps[stage] = now - self._last
        self._last = now
        if self._stages is not None:
            self._stages(_NEXT.get(stage, "") if then is None else then)


def analyze_loaded(loaded: LoadedProject, *, ledger: Path | None = None) -> tuple[Analysis, JsonObject]:
    """The analyses of a loaded project and its results.json document; `ledger`: a history.json whose graded
    predictions are pooled into the calibration (else the project's calibration.ledger)."""
    analysis = analyses_of(loaded, ledger=ledger)
    return analysis, results_document(loaded, analysis)


def analyses_of(loaded: LoadedProject, skip: frozenset[str] = frozenset(), *, ledger: Path | None = None) -> Analysis:
    """The analyses of a loaded project, with the carbon intensity of its location, its runs' provenance and its own
    graded predictions, as a build has them (without the results document, which a history's record does not
    need); `skip` as analyze's."""
    from reportgen.ingest.records_store import recorded_points

    return analyze(loaded.project, intensity=_intensity(loaded), sources=loaded.sources, skip=skip,
                   recorded=recorded_points(loaded), own=own_evidence(loaded, ledger))


MAX_LEDGER_BYTES = 64 * 1024 * 1024  # a history of 10,000 revisions' predictions; past it, not a history.json


def own_evidence(loaded: LoadedProject, override: Path | None = None) -> OwnEvidence | None:
    """The project's graded predictions from a history.json (methods.md#how-accurate-each-prediction-is): `override`
    (build --history), else calibration.ledger beside the project file; None when neither is given."""
    from reportgen.analysis.revisions.history import ledger_rows, own_cases
    from reportgen.ingest import strict_json

    settings = loaded.project.calibration
    weight = settings.own_weight if settings is not None else DEFAULT_OWN_WEIGHT
    if override is not None:
        path, shown, field = override, str(override), "--history"
    elif settings is not None and settings.ledger is not None:
        shown, field = settings.ledger, "calibration.ledger"
        try:  # as a CSV the project names: inside the project file's folder, never through a link out of it
            path = measurements.resolve(loaded.path, settings.ledger)
        except ValueError as error:
            raise InputError([_ledger_problem(loaded, field, f'"{shown}" {error}')]) from None
    else:
        return None
    # read as a CSV the project names is: bounded, and still inside the project's folder when it is opened
    text, _ = read_text(path, shown, limit=MAX_LEDGER_BYTES,
                        within=loaded.path.parent.resolve() if override is None else None)
    try:
        rows = ledger_rows(strict_json.loads(text))
    except (ValueError, RecursionError) as error:
        raise InputError([_ledger_problem(loaded, field, f"{shown}: {error}")]) from None
    return OwnEvidence(own_cases(rows), weight, shown)


def _ledger_problem(loaded: LoadedProject, field: str, message: str) -> Problem:
    """A problem of the ledger, located at calibration.ledger in the project file (--history: the file itself)."""
    if field == "calibration.ledger" and loaded.nodes is not None:
        with contextlib.suppress(KeyError, AttributeError, IndexError):
            mark = locate(loaded.nodes[0], field).start_mark
            return Problem(loaded.display, mark.line + 1, mark.column + 1, field, message)
    return Problem(loaded.display, 1, 1, field, message)


def _intensity(loaded: LoadedProject) -> carbon.Intensity | None:
    energy = loaded.project.energy
    try:
        return carbon.intensity_for(energy.location if energy else None)
    except carbon.UnknownLocation as error:  # validated at load time; kept for a data file that changed since
        raise InputError([Problem(loaded.display, 1, 1, f"energy.location.{error.field}", str(error))]) from None
