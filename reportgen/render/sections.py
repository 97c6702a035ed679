"""The report's figure families, and the analysis as its tables show it.

The sections themselves (results.json's keys, what each means, its template and its rows' cut to the tables' node
counts) are declared with the analyses, in their registry (reportgen.analysis.SECTIONS). A figure is a job of one of
the families below (`figures/<family>.py`, whose `jobs(analysis, project, full)` lists its figures): adding one to a
family needs no other declaration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reportgen.analysis import SECTIONS, Analysis
from reportgen.analysis import selection as cut
from reportgen.figures import FigureFamily, FigureJob, decide, design, diagnosis, scaling, serving
from reportgen.project.model import Project

# Every figure family of the report, in reading order (tests/test_sections.py: every module of reportgen.figures
# with jobs() is here, but the diff's overlay)
FAMILIES: tuple[FigureFamily, ...] = (diagnosis.jobs, design.jobs, scaling.jobs, decide.jobs, serving.jobs)


def figure_jobs(analysis: Analysis, project: Project) -> list[FigureJob]:
    """Every figure of a report whose inputs are present, in reading order. Past a few dozen measured scales, bar
    charts and labelled points show the tables' selection of node counts (reportgen.analysis.selection); line plots
    keep every point, drawn as one artist."""
    planned = project.design.nodes if project.design else None
    shown = for_tables(analysis, cut.shown_nodes(analysis, planned))
    # a serving project's money is per hour of service (serving's figures), not per run (decide's)
    left_out = decide.jobs if project.serving else serving.jobs
    return [job for family in FAMILIES if family is not left_out for job in family(shown, project, analysis)]


def for_tables(analysis: Analysis, shown: frozenset[float] | None) -> Analysis:
    """The analysis with every per-scale table cut to the shown node counts (the same object when all are shown)."""
    if shown is None:
        return analysis
    changes: dict[str, Any] = {section.field: section.cut(getattr(analysis, section.field), shown)
                               for section in SECTIONS
                               if section.cut is not None and getattr(analysis, section.field) is not None}
    return replace(analysis, **changes)
