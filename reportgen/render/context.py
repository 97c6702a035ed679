"""The report's template context: everything a template may use, documented in one dataclass.

Templates format; they never compute. Numbers come from the analyses (the same objects results.json is written
from); this module only gathers them with the figures, the provenance and the normalized inputs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from reportgen.analysis import Analysis
from reportgen.analysis.model.ceilings import CEILING, CEILINGS, WORKLOAD_COMPUTE_CEILING
from reportgen.analysis.page.prose.actions import ACTIONS
from reportgen.figures.jobs import FigureFrame
from reportgen.json_types import JsonObject
from reportgen.project.flatten import flatten
from reportgen.project.model import SLOT_VOCABULARY, Project
from reportgen.render.declared_views import DeclaredView, declared_views
from reportgen.render.figure_data import FigureData
from reportgen.render.selection import for_tables, model_within_evidence, shown_nodes
from reportgen.reproducible import source_date_epoch
from reportgen.version import __version__

# The report's chapters in reading order: (anchor, title), for the navigation and the contents
CHAPTERS = (
    ("summary", "Summary"),
    ("problem", "Problem and goal"),
    ("diagnosis", "Diagnosis: which ceiling binds"),
    ("design", "Design"),
    ("measure", "Measure, attribute, decide"),
    ("appendix", "Appendix: methodology and inputs"),
)


@dataclass(frozen=True)
class InputRow:
    """One leaf of the normalized project file: its path, its value in SI units, and what the user wrote."""

    path: str
    value: str
    unit: str
    written: str | None  # the quantity's text in the project file or CSV; None for defaults and plain values
    source: str = "default"  # what a value without its text is: a default, or read from a file (collectives)

    @property
    def written_in_si(self) -> bool:
        """The text as written already says the SI value ("26.6 s", "8.4e16 FLOP"): no need to repeat it."""
        if self.written is None:
            return False
        number, _, unit = self.written.strip().partition(" ")
        try:
            return unit.strip() == self.unit and float(number) == float(self.value)
        except ValueError:
            return False


@dataclass(frozen=True)
class ReportContext:
    """What report.html renders. A test checks that the templates use nothing else."""

    project: Project  # the loaded project (SI floats)
    analysis: Analysis  # every analysis result; per-scale rows cut to `table_nodes` when there are many
    results: JsonObject  # the results.json document (provenance, and the numbers scripts see)
    figures: dict[str, FigureFrame]  # by key; absent when its inputs are absent (drawn into their slots later)
    chapters: tuple[tuple[str, str], ...]  # (anchor, title) in reading order, for the navigation and contents
    inputs: tuple[InputRow, ...]  # the normalized inputs of the appendix
    currency: str
    paper: str  # "a4" or "letter"
    date: str  # the report's date: the project's date, else SOURCE_DATE_EPOCH, else undated
    created: str | None  # ISO 8601 creation time for the PDF metadata (reproducible: never "now")
    epoch: int  # the same moment in seconds since 1970 (0 when undated), for the PDF writer
    version: str  # reportgen's version
    input_name: str  # the project file's name
    vocabulary: dict[str, tuple[str, ...]]  # known choices per design slot (others are shown as free text)
    ceiling_axes: tuple[tuple[str, str, str], ...]  # (ceiling, axis that cures it, typical tools)
    measured_scales: int = 0  # node counts measured
    table_nodes: tuple[float, ...] | None = None  # the node counts tables show, when not all (analysis.selection)
    actions: tuple[tuple[str, str, str], ...] = ()  # (finding code, its kinds, the action it calls for), in order
    lost_extra: dict[str, str] | None = None  # the further causes some run gives (column name → scaling row field)
    # the tables whose numbers a figure draws, collected as the sections render and set in the appendix
    figure_data: FigureData = field(default_factory=FigureData)
    # the analyses declared in their own modules whose result is present, by the chapter that includes them
    declared_views: dict[str, tuple[DeclaredView, ...]] = field(default_factory=dict)


def epoch_of(created: str | None) -> int:
    if created is None:
        return 0
    return int(dt.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC).timestamp())


def report_date(project: Project) -> tuple[str, str | None]:
    """The shown date and the PDF creation time: SOURCE_DATE_EPOCH when set, else the project's date."""
    epoch = source_date_epoch()
    if epoch is not None:
        moment = dt.datetime.fromtimestamp(epoch, tz=dt.UTC)
        return project.project.date or moment.date().isoformat(), moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    date = project.project.date
    if date:
        try:
            return date, dt.date.fromisoformat(date).strftime("%Y-%m-%dT00:00:00Z")
        except ValueError:
            return date, None
    return "undated", None


MAX_LISTED_RUNS = 200  # runs (or collectives) the appendix lists one field per line; past it, one per shown scale


def normalized_inputs(project: Project, written: dict[str, str],
                      shown: frozenset[float] | None = None) -> tuple[InputRow, ...]:
    """Every input as read. Past MAX_LISTED_RUNS runs (thousands of repeats, or of scales) or collectives, the
    appendix lists the first of each scale the tables show and counts the others (the CSV and its SHA-256 in the
    title block identify them): 10,000 runs made a thousand-page appendix, 60,000 collectives a 12 MB page."""
    runs = project.scaling.runs if project.scaling is not None else ()
    collectives = project.prediction.collectives if project.prediction is not None else ()
    left_runs = _left_out("scaling.runs", [run.nodes for run in runs], shown)
    left_collectives = _left_out("prediction.collectives", [c.nodes for c in collectives], None)
    left_out = left_runs | left_collectives
    from_file = project.prediction.collectives_file if project.prediction is not None else None

    def source(path: str) -> str:  # a value without its written text: a default, or a collective from its CSV
        return f"from {from_file}" if from_file and path.startswith("prediction.collectives[") else "default"

    rows = [InputRow(leaf.path, leaf.shown, leaf.unit, written.get(leaf.path), source(leaf.path))
            for leaf in flatten(project, currency=project.currency)
            if not left_out or leaf.path.partition("]")[0] + "]" not in left_out]
    if left_runs:
        rows.append(InputRow("scaling.runs", f"… and {len(left_runs):,} more runs (repeats, and the node counts the "
                             "tables leave out)", "", None))
    if left_collectives:
        rows.append(InputRow("prediction.collectives", f"… and {len(left_collectives):,} more collectives (one of "
                             "each node count is listed)", "", None))
    return tuple(rows)


def _left_out(prefix: str, scales: list[float], shown: frozenset[float] | None) -> set[str]:
    """Past MAX_LISTED_RUNS items, the paths of all but the first item of each (shown) scale."""
    if len(scales) <= MAX_LISTED_RUNS:
        return set()
    listed: set[float] = set()
    out = set()
    for index, scale in enumerate(scales):
        if scale in listed or (shown is not None and scale not in shown):
            out.add(f"{prefix}[{index}]")
        else:
            listed.add(scale)
    return out


def build_context(project: Project, analysis: Analysis, results: JsonObject, figures: dict[str, FigureFrame],
                  *, paper: str, input_name: str, written: dict[str, str] | None = None) -> ReportContext:
    date, created = report_date(project)
    shown = shown_nodes(analysis, project.design.nodes if project.design else None)
    measured = len(analysis.scaling.rows) if analysis.scaling else 0
    tables = model_within_evidence(for_tables(analysis, shown))
    return ReportContext(project=project, analysis=tables, results=results, figures=figures,
                         chapters=CHAPTERS, inputs=normalized_inputs(project, written or {}, shown),
                         currency=project.currency, paper=paper, date=date, created=created,
                         epoch=epoch_of(created), version=__version__, input_name=input_name,
                         vocabulary=SLOT_VOCABULARY,
                         ceiling_axes=_ceiling_axes(),
                         measured_scales=measured, table_nodes=tuple(sorted(shown)) if shown else None,
                         actions=tuple((action.code, ", ".join(action.kinds), action.general) for action in ACTIONS),
                         lost_extra={name: field for field, name, _ in analysis.scaling.extra_losses}
                         if analysis.scaling else {}, declared_views=declared_views(tables, project.currency))


def _ceiling_axes() -> tuple[tuple[str, str, str], ...]:
    """Each ceiling, the axis that cures it (a compute ceiling's by workload, as the diagnosis chooses it) and the
    typical tools, for the methodology's table."""
    by_workload = "; ".join(f"{workload.replace('-', ' ')}: {CEILING[cured].axis}"
                            for workload, cured in WORKLOAD_COMPUTE_CEILING.items())
    return tuple((kind.name, kind.axis if kind.name != "compute" else f"{kind.axis} ({by_workload})", kind.tools)
                 for kind in CEILINGS)
