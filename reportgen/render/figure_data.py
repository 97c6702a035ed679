"""The data behind the report's figures: a table whose numbers a figure already draws is set in the appendix, and
its section keeps the figure and a link to it (docs/methods.md#a-report-a-reviewer-reads-through).

A reviewer reads a number once: a table beside the figure that draws it doubles the length of a section without
adding a fact. The table stays in the report, whole and sortable, for the reader who wants the digits, and
results.json and `build --format csv` hold every row.

The sections render before the appendix, so the tables are collected as they render (the `figure_data` macro of
templates/partials/macros.html) and the appendix sets them in that order. One collector serves one rendering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup, escape


@dataclass(frozen=True)
class DataTable:
    anchor: str  # the HTML id of the appendix's copy, "data-<figure key>"
    title: str  # what the table holds, as the appendix's heading names it
    html: Markup  # the table, as its section rendered it


@dataclass
class FigureData:
    """The tables moved to the appendix, in the order their sections rendered them."""

    tables: list[DataTable] = field(default_factory=list)

    def defer(self, key: str, title: str, table: str) -> Markup:
        """Keep `table` (the data of figure `key`) for the appendix; what the section shows in its place: a line
        that links to it."""
        anchor = f"data-{key}"
        if any(kept.anchor == anchor for kept in self.tables):
            raise ValueError(f"the data of figure {key!r} are set in the appendix twice")
        self.tables.append(DataTable(anchor, title, Markup(table)))
        return Markup('<p class="figure-data meta">The numbers of this figure: <a href="#{}">{}</a> in the '
                      "appendix.</p>").format(anchor, escape(title))
