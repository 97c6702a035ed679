"""The report's sections, each declared once: the analysis result it reads, its results.json key, serializer and
schema, its rows cut to the tables' node counts, the template that shows it and the figures drawn from it.

results.json (`render/results.py`), its JSON Schema (`render/results_schema.py`), the Python API's attributes
(`reportgen.api`), the tables' selection of node counts and the CSV tables all walk `SECTIONS`, in this order, which
is the order of results.json. `tests/test_sections.py` walks it too: a section whose template is missing or not
included in the report, whose figure module does not exist, or whose output its schema does not describe, fails
there. docs/architecture.md has the recipe for adding one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from reportgen.analysis import Analysis
from reportgen.analysis import selection as cut
from reportgen.render import results_schema as schemas
from reportgen.render import serializers as to_json

Json = Any  # a JSON value: an object, a list of row objects, or null
Schema = dict[str, Any]


@dataclass(frozen=True)
class Section:
    key: str  # results.json key, API attribute (`results.scaling`) and prefix of its tables' names
    field: str  # the attribute of reportgen.analysis.Analysis holding its typed result
    serialize: Callable[[Any], Json]  # its typed result → its part of results.json (null for None)
    schema: Schema  # its JSON Schema, every key described
    template: str  # the template under templates/ that shows it (included by the report)
    figures: str | None = None  # the module of reportgen.figures drawing from it, if any
    cut: Callable[[Any, frozenset[float]], Any] | None = None  # its result with only the tables' node counts
    read: Callable[[Analysis], Any] | None = None  # how to read its result, where that is not simply `field`
    uncut: str | None = None  # why rows with node counts are not cut (they are a model's curve, not measured)

    def result(self, analysis: Analysis) -> Any:
        """The section's typed analysis result (None when the project gives it no input)."""
        return self.read(analysis) if self.read else getattr(analysis, self.field)

    def document(self, analysis: Analysis) -> Json:
        return self.serialize(self.result(analysis))


def _goal(analysis: Analysis) -> Any:
    """A serving project's goal is held against its load and latency, in the serving analysis (§5.x)."""
    return analysis.serving if analysis.serving is not None else analysis.goal


SECTIONS: tuple[Section, ...] = (
    Section("diagnosis", "diagnosis", to_json.diagnosis, schemas.DIAGNOSIS, "sections/diagnosis.html",
            figures="diagnosis"),
    Section("checklist", "checklist", to_json.checklist, schemas.CHECKLIST, "sections/design.html",
            figures="design"),
    Section("prediction", "prediction", to_json.prediction, schemas.PREDICTION, "sections/design.html",
            figures="design", uncut="the model's curve at chosen node counts, not the measured scales"),
    Section("layout", "layout", to_json.layout, schemas.LAYOUT, "sections/design.html", figures="design"),
    Section("scaling", "scaling", to_json.scaling, schemas.SCALING, "measure/runs.html", figures="scaling",
            cut=cut.scaling_rows),
    Section("cost", "cost", to_json.cost, schemas.COST, "measure/cost.html", figures="decide", cut=cut.cost_rows),
    Section("energy", "energy", to_json.energy, schemas.ENERGY, "measure/energy.html", figures="decide",
            cut=cut.rows_at),
    Section("reliability", "reliability", to_json.reliability, schemas.RELIABILITY, "sections/design.html",
            cut=cut.rows_at),
    Section("goal", "goal", to_json.goal_of, schemas.GOAL, "sections/summary.html", read=_goal,
            uncut="a service's goal reads the serving analysis, whose rows the serving section shows"),
    Section("serving", "serving", to_json.serving, schemas.SERVING, "measure/serve.html", figures="serving",
            uncut="every load level is shown: its table has no selection yet"),
    Section("summary", "summary", to_json.summary, schemas.SUMMARY, "sections/summary.html"),
    Section("provenance", "provenance", to_json.provenance, schemas.PROVENANCE, "measure/runs.html",
            cut=cut.rows_at),
    Section("model_check", "model_check", to_json.fields, schemas.obj(
        "§4: the design's α–β model held against the measured runs, scale by scale", {
            "rows": schemas.rows("each measured scale beyond the reference", {
                "nodes": schemas.SCALE,
                "predicted_speedup": schemas.num("the model's speedup, relative to the reference scale"),
                "measured_speedup": schemas.num("the measured speedup"),
                "speedup_ratio": schemas.num("measured / predicted speedup"),
                "predicted_comm_ratio": schemas.num("the model's R(p) = T_comm / (T_comp / p)"),
                "measured_comm_ratio": schemas.num("communication / compute (breakdown form)", null=True)}),
            "sigma_model": schemas.num("2β / T_comp (the ring's; null for other patterns)", null=True),
            "kappa_model": schemas.num("α / T_comp (the ring's; null for other patterns)", null=True),
            "sigma_measured": schemas.num("the USL fit's σ", null=True),
            "kappa_measured": schemas.num("the USL fit's κ", null=True),
            "kappa_ratio": schemas.num("measured κ / the model's", null=True),
            "lowest_speedup_ratio": schemas.num("the lowest measured / predicted speedup", null=True),
            "speedup_held": schemas.bool_("no measured speedup more than 25 % below the model's", null=True),
            "comm_held": schemas.bool_("every measured R(p) within 2× of the model's", null=True),
            "model_departure": schemas.num("the largest |S_pred − S_meas| / S_meas at the measured scales (§3.1)",
                                           null=True)}, null=True),
        "measure/model_check.html", cut=cut.rows_at),
    Section("decisions", "decisions", to_json.decisions, schemas.DECISIONS, "partials/decisions_table.html"),
    Section("trade_offs", "decisions", to_json.trade_offs, schemas.TRADE_OFFS, "measure/trade_offs.html"),
    Section("findings", "findings", to_json.findings, schemas.FINDINGS, "partials/macros.html"),
)
BY_KEY = {section.key: section for section in SECTIONS}


def sections_document(analysis: Analysis) -> dict[str, Json]:
    """Every section's part of results.json, by key, in order."""
    return {section.key: section.document(analysis) for section in SECTIONS}


def for_tables(analysis: Analysis, shown: frozenset[float] | None) -> Analysis:
    """The analysis with every per-scale table cut to the shown node counts (the same object when all are shown)."""
    if shown is None:
        return analysis
    changes: dict[str, Any] = {section.field: section.cut(getattr(analysis, section.field), shown)
                               for section in SECTIONS
                               if section.cut is not None and getattr(analysis, section.field) is not None}
    return replace(analysis, **changes)
