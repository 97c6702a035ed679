"""No line, band or bar crosses a legend (reportgen.figures.style.clear_legends): matplotlib's "best" counts only a
line's vertices inside a place, so a goal line drawn across the axes (two vertices, at its ends) went through the
legend of the speedup figure; such a legend moves to a place nothing crosses, else below its axes."""

from __future__ import annotations

import re

from reportgen.figures.jobs import FigureFrame
from reportgen.figures.style import _crossed, clear_legends, draw_goal_line, figure, to_svg


def _legend_boxes(ax):  # type: ignore[no-untyped-def]
    legend = ax.get_legend()
    assert legend is not None
    return legend


def test_a_goal_line_across_a_legend_moves_the_legend() -> None:
    """A legend in the upper left, where a goal line near the top crosses it: the legend moves, and nothing crosses
    it then."""
    with figure(FigureFrame("legend-test", "", "")) as fig:
        ax = fig.subplots()
        ax.plot([1, 2, 3, 4, 5, 6, 7, 8], [0.5, 0.6, 0.7, 0.8, 1, 2, 5, 9.5], marker="o", label="measured")
        ax.set_ylim(0, 10)
        draw_goal_line(ax, 9.4, "the goal")
        ax.legend(loc="upper left")
        fig.draw_without_rendering()
        assert _crossed(ax, _legend_boxes(ax))  # as matplotlib places it: the test can fail
        clear_legends(fig)
        assert not _crossed(ax, _legend_boxes(ax))
        svg = to_svg(fig, "legend-test")
    assert re.search(r"the goal", svg)


def test_a_band_across_every_place_puts_the_legend_below_the_axes() -> None:
    """A band that covers the whole axes leaves no place inside: the legend goes below them."""
    with figure(FigureFrame("legend-band", "", "")) as fig:
        ax = fig.subplots()
        ax.fill_between([0, 10], [0, 0], [10, 10], alpha=0.2, label="band")
        ax.plot([0, 10], [5, 5], label="line")
        ax.set_xlim(0, 10)
        ax.set_ylim(0, 10)
        ax.legend(loc="best")
        clear_legends(fig)
        legend = _legend_boxes(ax)
        assert legend.get_window_extent().y1 <= ax.get_window_extent().y0 + 1e-6


def test_a_legend_nothing_crosses_stays_where_it_was() -> None:
    with figure(FigureFrame("legend-clear", "", "")) as fig:
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1], label="rising")
        ax.legend(loc="upper left")
        fig.draw_without_rendering()
        before = _legend_boxes(ax).get_window_extent().bounds
        clear_legends(fig)
        assert _legend_boxes(ax).get_window_extent().bounds == before
