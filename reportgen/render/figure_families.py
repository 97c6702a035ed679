"""The report's figure families: every figure it draws, in reading order.

A figure is a job of one of the families below (`figures/<family>.py`, whose `jobs(analysis, project, full)` lists its
figures): adding one to a family needs no other declaration. An analysis declared in its own module asks for its
figures as data (`Declared.plots`), which the `declared` family draws.
"""

from __future__ import annotations

from reportgen.analysis import Analysis
from reportgen.figures import FigureFamily, FigureJob, decide, declared, design, diagnosis, scaling, serving
from reportgen.project.model import Project
from reportgen.render.selection import for_tables, shown_nodes

# Every figure family of the report, in reading order (tests/test_sections.py: every module of reportgen.figures
# with jobs() is here, but the diff's overlay)
FAMILIES: tuple[FigureFamily, ...] = (diagnosis.jobs, design.jobs, scaling.jobs, decide.jobs, serving.jobs,
                                      declared.jobs)


def figure_jobs(analysis: Analysis, project: Project) -> list[FigureJob]:
    """Every figure of a report whose inputs are present, in reading order. Past a few dozen measured scales, bar
    charts and labelled points show the tables' selection of node counts (reportgen.render.selection); line plots
    keep every point, drawn as one artist."""
    planned = project.design.nodes if project.design else None
    shown = for_tables(analysis, shown_nodes(analysis, planned))
    # a serving project's money is per hour of service (serving's figures), not per run (decide's)
    left_out = decide.jobs if project.serving else serving.jobs
    return [job for family in FAMILIES if family is not left_out for job in family(shown, project, analysis)]
