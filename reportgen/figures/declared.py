"""The figures that analyses declared in their own modules ask for (reportgen.analysis.declared.Plot): lines over a
node axis, one point marked, in the report's style. An analysis says what to draw; this module alone draws it, so a
new analysis needs no figure code."""

from __future__ import annotations

from reportgen.analysis import DECLARED, Analysis
from reportgen.analysis.declared import Plot
from reportgen.figures.jobs import FigureFrame, FigureJob
from reportgen.figures.style import BLUE, GREEN, INK, ORANGE, PURPLE, VERMILION, figure, log2_axis, log_axes, to_svg
from reportgen.project.model import Project

# Okabe–Ito colours, each with its own marker and dash, so that lines still part in greyscale
LINE_STYLES = ((BLUE, "o", "-"), (ORANGE, "s", "--"), (GREEN, "^", "-."), (PURPLE, "D", ":"))


def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    """Every plot of every declared analysis whose result is present, in the registry's order."""
    found = []
    for declared in DECLARED:
        result = declared.of(analysis)
        if result is not None:
            found += [FigureJob(FigureFrame(plot.key, plot.caption, plot.alt, height=2.9), draw, (plot,))
                      for plot in declared.plots(result)]
    return found


def draw(frame: FigureFrame, plot: Plot) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        for (colour, marker, dash), series in zip(LINE_STYLES * len(plot.series), plot.series, strict=False):
            ax.plot(series.x, series.y, marker=marker, linestyle=dash, color=colour, markeredgecolor=INK,
                    label=series.label)
        if plot.marked is not None:
            x, y, label = plot.marked
            ax.plot([x], [y], marker="*", markersize=13, linestyle="none", color=VERMILION, markeredgecolor=INK,
                    label=label)
        if plot.log_x:
            log2_axis(ax, [x for series in plot.series for x in series.x])
        log_axes(ax, y=plot.log_y)
        ax.set_xlabel(plot.x_label)
        ax.set_ylabel(plot.y_label)
        ax.legend(loc="best")
        return to_svg(fig, frame.key)
