"""The report's sections, each declared once: the analysis result it reads, its results.json key and what it means,
its rows cut to the tables' node counts, the template that shows it and the figures drawn from it.

results.json (`render/results.py`), its JSON Schema (`render/results_schema.py`), the Python API's attributes
(`reportgen.api`), the tables' selection of node counts and the CSV tables all walk `SECTIONS`, in this order, which
is the order of results.json. A section's keys are its result's declared fields (reportgen.keys): the document and
its schema are both derived from them. `tests/test_sections.py` walks it too: a section whose template is missing
or not included in the report, whose figure module does not exist, or whose output its schema does not describe,
fails there. docs/architecture.md has the recipe for adding one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, get_type_hints

from reportgen.analysis import Analysis
from reportgen.analysis import selection as cut
from reportgen.analysis.decisions import DecisionResult, DecisionsResult, TradeOff
from reportgen.analysis.goal import GoalDocument, GoalResult
from reportgen.analysis.layout import LAYOUT_DOC
from reportgen.analysis.serving import ServingResult
from reportgen.figures import FigureFamily, FigureJob, decide, design, diagnosis, scaling, serving
from reportgen.keys import Key
from reportgen.project.model import Project
from reportgen.render.results_schema import Schema, value_schema

_RESULTS = get_type_hints(Analysis)


@dataclass(frozen=True)
class Section:
    key: str  # results.json key, API attribute (`results.scaling`) and prefix of its tables' names
    field: str  # the attribute of reportgen.analysis.Analysis holding its typed result
    doc: str  # what the section is: its schema's description
    template: str  # the template under templates/ that shows it (included by the report)
    figures: FigureFamily | None = None  # the figure family drawing from it (a module of reportgen.figures), if any
    cut: Callable[[Any, frozenset[float]], Any] | None = None  # its result with only the tables' node counts
    read: Callable[[Analysis], Any] | None = None  # how to read its result, where that is not simply `field`
    uncut: str | None = None  # why rows with node counts are not cut (they are a model's curve, not measured)
    # Where results.json holds the result in another shape (a part of it, one shape for two kinds): that shape's
    # type and how to make it from the result
    shape: tuple[Any, Callable[[Any], Any]] | None = None

    def result(self, analysis: Analysis) -> object:
        """The section's typed analysis result (None when the project gives it no input)."""
        return self.read(analysis) if self.read else getattr(analysis, self.field)

    def value(self, analysis: Analysis) -> object:
        """What results.json holds under the key: the result, or its shape there."""
        result = self.result(analysis)
        return self.shape[1](result) if self.shape and result is not None else result

    @property
    def type(self) -> object:
        """The type of what results.json holds under the key."""
        return self.shape[0] if self.shape else _RESULTS[self.field]

    @property
    def schema(self) -> Schema:
        """Its JSON Schema, derived from its result's declared keys."""
        return value_schema(self.type, Key(self.doc))


def _goal(analysis: Analysis) -> GoalResult | ServingResult | None:
    """A serving project's goal is held against its load and latency, in the serving analysis (§5.x)."""
    return analysis.serving if analysis.serving is not None else analysis.goal


def _goal_document(result: GoalResult | ServingResult) -> GoalDocument:
    return result.goal_document() if isinstance(result, ServingResult) else GoalDocument.of(result)


def _decisions(result: DecisionsResult) -> tuple[DecisionResult, ...]:
    return result.decisions


def _trade_offs(result: DecisionsResult) -> tuple[TradeOff, ...]:
    return result.trade_offs


SECTIONS: tuple[Section, ...] = (
    Section("diagnosis", "diagnosis", "§1: which resource runs out first, and the axis of distribution that cures it",
            "sections/diagnosis.html", figures=diagnosis.jobs),
    Section("checklist", "checklist", "the six-stage design checklist and the communication tax",
            "sections/design.html", figures=design.jobs),
    Section("prediction", "prediction", "§2: predicted speedup from the alpha-beta communication model",
            "sections/design.html", figures=design.jobs,
            uncut="the model's curve at chosen node counts, not the measured scales"),
    Section("layout", "layout", LAYOUT_DOC, "sections/design.html", figures=design.jobs),
    Section("scaling", "scaling", "§3: measured scaling and where every lost fold of speedup went",
            "measure/runs.html", figures=scaling.jobs, cut=cut.scaling_rows),
    Section("cost", "cost", "§4: cost per run and the marginal speedup money buys", "measure/cost.html",
            figures=decide.jobs, cut=cut.cost_rows),
    Section("energy", "energy", "§5: energy and carbon per run", "measure/energy.html", figures=decide.jobs,
            cut=cut.rows_at),
    Section("reliability", "reliability", "failures at scale: checkpoint interval and its overhead",
            "sections/design.html", cut=cut.rows_at),
    Section("goal", "goal", "the goal checked at the plan, in each price regime", "sections/summary.html",
            read=_goal, shape=(GoalDocument | None, _goal_document),
            uncut="a service's goal reads the serving analysis, whose rows the serving section shows"),
    Section("serving", "serving", "§5.x: a serving project's load served within its p99 objective, and its hourly "
            "cost", "measure/serve.html", figures=serving.jobs,
            uncut="every load level is shown: its table has no selection yet"),
    Section("summary", "summary", "§7.1: page 1, as a reviewer writes it", "sections/summary.html"),
    Section("provenance", "provenance", "where each measured number came from", "measure/runs.html",
            cut=cut.rows_at),
    Section("model_check", "model_check", "§4: the design's α–β model held against the measured runs, scale by "
            "scale", "measure/model_check.html", cut=cut.rows_at),
    Section("decisions", "decisions", "one recommendation per deployment context (a serving project: among the "
            "scales that serve, with the hourly keys filled and the per-run ones null)",
            "partials/decisions_table.html", shape=(tuple[DecisionResult, ...] | None, _decisions)),
    Section("trade_offs", "decisions", "what each context gives up against another's choice",
            "measure/trade_offs.html", shape=(tuple[TradeOff, ...] | None, _trade_offs)),
    Section("findings", "findings", "every warning and error the analyses raise, most severe first",
            "partials/macros.html"),
)
BY_KEY = {section.key: section for section in SECTIONS}


def sections_values(analysis: Analysis) -> dict[str, object]:
    """What every section holds in results.json, by key, in order (reportgen.render.results makes it JSON)."""
    return {section.key: section.value(analysis) for section in SECTIONS}


def figure_jobs(analysis: Analysis, project: Project) -> list[FigureJob]:
    """Every figure of a report whose inputs are present, in reading order: each family its sections declare, once.
    Past a few dozen measured scales, bar charts and labelled points show the tables' selection of node counts
    (reportgen.analysis.selection); line plots keep every point, drawn as one artist."""
    planned = project.design.nodes if project.design else None
    shown = for_tables(analysis, cut.shown_nodes(analysis, planned))
    # a serving project's money is per hour of service (serving's figures), not per run (decide's)
    left_out = decide.jobs if project.serving else serving.jobs
    families = dict.fromkeys(section.figures for section in SECTIONS if section.figures)
    return [job for family in families if family is not left_out for job in family(shown, project, analysis)]


def for_tables(analysis: Analysis, shown: frozenset[float] | None) -> Analysis:
    """The analysis with every per-scale table cut to the shown node counts (the same object when all are shown)."""
    if shown is None:
        return analysis
    changes: dict[str, Any] = {section.field: section.cut(getattr(analysis, section.field), shown)
                               for section in SECTIONS
                               if section.cut is not None and getattr(analysis, section.field) is not None}
    return replace(analysis, **changes)
