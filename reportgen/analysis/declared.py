"""How an analysis declares itself: the step that computes it, the results.json section that holds it, and the
figures it asks for, all as data that the layers above read (docs/architecture.md#adding-an-analysis-the-recipe).

An analysis module that ends with `ANALYSIS = Declared(...)`, listed in the registry's DECLARED (reportgen.analysis;
tests/test_registry.py fails on one it lacks): its result is `analysis.declared[<key>]` (typed through
`Declared.of`), results.json holds it under its key with the schema its result's `Key` annotations give, the report
includes its template (its own, or the generic one that shows its rows and values) in its chapter, and its plots
are drawn by reportgen.figures.declared. Nothing here imports matplotlib or a template: a figure is a `Plot`, plain
numbers and words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Literal, Protocol, TypeVar

from reportgen.analysis.model.reliability import folded_fraction
from reportgen.project.accuracy_table import AccuracyTable, OwnEvidence, shipped_table
from reportgen.project.carbon import Intensity
from reportgen.project.load_tests import RecordedPoint
from reportgen.project.model import Project
from reportgen.project.records import RowSource

R = TypeVar("R")
# The registry's Analysis, which holds every result: the types here are generic in it, so that this layer, below
# every analysis, never names the registry above it (docs/architecture.md#the-analysis-layers)
A = TypeVar("A", contravariant=True)


class HoldsDeclared(Protocol):
    """What a declared analysis reads of the registry's Analysis: the declared analyses' results, by key."""

    @property
    def declared(self) -> Mapping[str, object]: ...

# The template that shows a declared analysis without one of its own: its title, plots, rows and values
GENERIC_TEMPLATE = "analyses/generic.html"
# The report's chapters a declared analysis's template can be included in (templates/chapters/<chapter>.html)
Chapter = Literal["diagnosis", "design", "measure"]


@dataclass(frozen=True)
class Inputs:
    """What the analyses are a function of: the project, the carbon intensity looked up for it, and the measured
    runs' provenance comments (by node count) from their CSV."""

    project: Project
    intensity: Intensity | None = None
    sources: Mapping[float, RowSource] = field(default_factory=dict)
    # the load points whose per-request records `ingest serving` kept (methods.md#a-service-judged-from-its-requests)
    recorded: tuple[RecordedPoint, ...] = ()
    # weak scaling: the plan whose shares are the goal's work when a what-if moves the plan (a lever judges the goal
    # this project states: methods.md#weak-scaling-compares-equal-work); None: the plan's own
    goal_shares: int | None = None
    # the calibration table every predicted number's accuracy is read from (methods.md#how-accurate-each-prediction-is):
    # the shipped one unless the caller gives another (None: no table, the predictors' raw intervals stand)
    accuracy: AccuracyTable | None = field(default_factory=shipped_table)
    own: OwnEvidence | None = None  # the project's own graded predictions, pooled into the table's cells

    @property
    def max_nodes(self) -> int:
        return self.project.prediction.max_nodes if self.project.prediction else 4096

    @property
    def planned(self) -> int | None:
        return self.project.design.nodes if self.project.design else None

    @property
    def work_plan(self) -> int | None:
        """The plan whose shares are the goal's work (weak scaling)."""
        return self.goal_shares if self.goal_shares is not None else self.planned

    @property
    def g_per_kwh(self) -> float | None:
        return self.intensity.g_per_kwh if self.intensity else None

    @property
    def tax(self) -> Callable[[float], float] | None:
        """The failure tax (methods.md#failures-at-scale) is in the time the goal, the decisions and page 1 quote (not
        in measured tables)."""
        reliability = self.project.reliability
        return partial(folded_fraction, reliability) if reliability else None


@dataclass(frozen=True)
class Step(Generic[A]):
    """One analysis of the registry: the Analysis field it fills, the fields it reads, and how it is computed."""

    name: str
    needs: tuple[str, ...]
    run: Callable[[Inputs, A], Any]  # returns the type of Analysis.<name>: one field of many types


@dataclass(frozen=True)
class ResultsSection(Generic[A]):
    """A section of results.json: the analysis result it holds, and what it means.

    `template` names the template under templates/ that shows it (tests/test_sections.py checks that the report
    includes it and that it names the section); the core only names it, it renders nothing. Which of its rows the
    report's tables show is a display decision, made in reportgen.render.selection."""

    key: str  # results.json key, API attribute (`results.scaling`) and prefix of its tables' names
    field: str  # the attribute of Analysis holding its typed result
    doc: str  # what the section is: its schema's description
    template: str
    read: Callable[[A], object] | None = None  # how to read its result, where that is not simply `field`
    uncut: str | None = None  # why rows with node counts are not cut (they are a model's curve, not measured)
    # Where results.json holds the result in another shape (a part of it, one shape for two kinds): that shape's
    # type and how to make it from the result
    shape: tuple[Any, Callable[[Any], Any]] | None = None
    kind: Any = None  # the type of its result (the registry fills it from the Analysis field's annotation)

    def result(self, analysis: A) -> object:
        """The section's typed analysis result (None when the project gives it no input)."""
        return self.read(analysis) if self.read else getattr(analysis, self.field)

    def value(self, analysis: A) -> object:
        """What results.json holds under the key: the result, or its shape there."""
        result = self.result(analysis)
        return self.shape[1](result) if self.shape and result is not None else result

    @property
    def type(self) -> object:
        """The type of what results.json holds under the key."""
        return self.shape[0] if self.shape else self.kind


@dataclass(frozen=True)
class Series:
    """One line of a plot: its label and its points."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True)
class Plot:
    """A figure as an analysis asks for it: lines over a shared x axis, one point marked. reportgen.figures.declared
    draws it in the report's style; the template places it with `{{ figure(key) }}`."""

    key: str  # the figure's anchor, unique in a report
    caption: str
    alt: str  # the text alternative a screen reader reads
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    marked: tuple[float, float, str] | None = None  # (x, y, label): the point the reader looks for
    log_x: bool = True  # node counts double: a log axis shows each doubling alike
    log_y: bool = True


@dataclass(frozen=True)
class Method:
    """An analysis's method as docs/methods.md and every report's methodology appendix state it: its title (the
    methods.md heading, whose anchor the code cites) and its text in Markdown (formulas in ```text fences, then the
    rules: ties, what is left out). `make reference` writes it into both, so it is written once, here."""

    title: str
    text: str

    @property
    def anchor(self) -> str:
        """The heading's anchor as the documentation site makes it (mkdocs' toc): word characters, spaces and
        hyphens kept, lower case, runs of spaces and hyphens one hyphen."""
        kept = re.sub(r"[^\w\s-]", "", self.title).strip().lower()
        return re.sub(r"[-\s]+", "-", kept)


@dataclass(frozen=True)
class Declared(Generic[R]):
    """An analysis declared in its own module: everything the registry, results.json, the report and its figures
    need, in one place. `run(inputs, *needed)` is given the results its `needs` name, in that order, and nothing
    else: the core's fields (reportgen.analysis.Analysis) or the keys of declared analyses that run before it."""

    key: str  # results.json key, `analysis.declared[key]`
    doc: str  # what its results.json section holds
    chapter: Chapter  # the report chapter whose template includes it
    result: type[R]
    needs: tuple[str, ...]
    run: Callable[..., R | None]  # (inputs, *the results `needs` names) → the result
    method: Method  # its formulas and rules, for methods.md and the report's appendix
    # the project file's fields its `run` reads itself, as dotted paths (`energy.pue`, `scaling.runs`): every one a
    # field of the project file (tests/test_worked_cases.py), used by an example or a test
    reads: tuple[str, ...] = ()
    plots: Callable[[R], tuple[Plot, ...]] = field(default=lambda _: ())
    # its own template under templates/ (`analyses/<key>.html`); None: the generic one shows its title, its plots, its
    # per-scale rows and its other keys, each with its unit (docs/architecture.md#adding-an-analysis-the-recipe)
    own_template: str | None = None

    @property
    def template(self) -> str:
        return self.own_template or GENERIC_TEMPLATE

    def of(self, analysis: HoldsDeclared) -> R | None:
        """This analysis's typed result in `analysis` (None when the project gives it no input)."""
        found = analysis.declared.get(self.key)
        return found if found is None or isinstance(found, self.result) else None

    def section(self) -> ResultsSection[HoldsDeclared]:
        return ResultsSection(self.key, "declared", self.doc, self.template, read=self.of,
                              kind=self.result | None)

    def step(self) -> Step[HoldsDeclared]:
        def run(inputs: Inputs, analysis: HoldsDeclared) -> Mapping[str, object]:
            needed = [analysis.declared[need] if need in analysis.declared else getattr(analysis, need)
                      for need in self.needs]
            return {**analysis.declared, self.key: self.run(inputs, *needed)}

        return Step("declared", self.needs, run)
