"""What the report shows of each analysis declared in its own module (docs/architecture.md#adding-an-analysis-the-
recipe): its chapter's template, and for an analysis without a template of its own the generic one's view of it, its
title, its plots, its per-scale rows and its other values, each column named with its unit by the key's name
(`time_s` → "time [s]") and shown by its kind. Display decisions only: every number is the analysis's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import get_args

from reportgen.analysis import DECLARED, Analysis
from reportgen.analysis.declared import GENERIC_TEMPLATE, Chapter, Declared
from reportgen.keys import CURRENCY, Key, declared, with_unit


@dataclass(frozen=True)
class Column:
    heading: str  # the key with its unit: "node hours", "time [s]", "cost [EUR]"; a value: what it means
    kind: str  # how its values are shown (reportgen.render.formatting.key_value's kinds)
    values: tuple[object, ...] = ()  # a table's column: its values, so that durations and money read in one unit


@dataclass(frozen=True)
class DeclaredView:
    """One declared analysis as its chapter includes it."""

    key: str  # its results.json key
    template: str  # its own template, or the generic one
    title: str  # its method's title (the generic template's heading)
    anchor: str  # the heading's anchor, its methods.md anchor too
    doc: str  # what its results.json section holds
    plots: tuple[str, ...]  # the keys of its figures
    columns: tuple[Column, ...] = ()  # its rows' columns (the generic template's table)
    rows: tuple[tuple[object, ...], ...] = ()
    values: tuple[tuple[Column, object], ...] = ()  # its own keys besides the rows, each headed by its meaning


def declared_views(analysis: Analysis, currency: str) -> dict[str, tuple[DeclaredView, ...]]:
    """Each chapter's declared analyses whose result is present, in the registry's order."""
    chapters: dict[str, tuple[DeclaredView, ...]] = {chapter: () for chapter in get_args(Chapter)}
    for analysis_declared in DECLARED:
        result = analysis_declared.of(analysis)
        if result is not None:
            view = _view(analysis_declared, result, currency)
            chapters[analysis_declared.chapter] += (view,)
    return chapters


def _view(analysis_declared: Declared[object], result: object, currency: str) -> DeclaredView:
    method = analysis_declared.method
    plots = tuple(plot.key for plot in analysis_declared.plots(result))
    view = DeclaredView(analysis_declared.key, analysis_declared.template, method.title, method.anchor,
                        analysis_declared.doc, plots)
    if analysis_declared.template != GENERIC_TEMPLATE:
        return view
    columns: tuple[Column, ...] = ()
    rows: tuple[tuple[object, ...], ...] = ()
    values: list[tuple[Column, object]] = []
    kind: type = type(result)  # (as reportgen.render.results reads a result's keys)
    for item in declared(kind):
        value = getattr(result, item.attribute)
        first = value[0] if item.attribute == "rows" and value else None
        if first is not None and dataclasses.is_dataclass(first) and not isinstance(first, type):
            row_kind: type = type(first)
            keys = declared(row_kind)
            rows = tuple(tuple(getattr(row, key.attribute) for key in keys) for row in value)
            columns = tuple(dataclasses.replace(_column(key.names[0], key.key, currency),
                                                values=tuple(row[index] for row in rows))
                            for index, key in enumerate(keys))
        elif isinstance(value, bool):  # a flag is said when it holds
            values += [(Column(item.key.doc, "flag"), value)] if value else []
        elif isinstance(value, int | float | str) or value is None:  # said by what it means
            values.append((Column(item.key.doc, _column(item.names[0], item.key, currency).kind), value))
    return dataclasses.replace(view, columns=columns, rows=rows, values=tuple(values))


# How a column's values are shown, by its name's suffix (reportgen.render.formatting.key_value's kinds): a duration,
# a size or a mass is shown with its unit, so its heading is the quantity alone ("time", not "time [s]")
KINDS = (("nodes", "nodes"), ("_s", "seconds"), ("_b", "bytes"), ("_kg", "kg"))


def _column(name: str, key: Key, currency: str) -> Column:
    if key.unit == CURRENCY:  # shown with its currency
        return Column(name.replace("_", " "), "money")
    found = next(((suffix, kind) for suffix, kind in KINDS if name.endswith(suffix)), None)
    if found is None:
        return Column(with_unit(name).replace("_", " "), "number")
    suffix, kind = found
    return Column((name.removesuffix(suffix) if suffix.startswith("_") else name).replace("_", " "), kind)
