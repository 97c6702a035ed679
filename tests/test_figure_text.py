"""Every label, title, legend entry and note of every example's figures lies inside its figure: a renderer clips an
SVG at its viewBox, and the speedup figure's efficiency axis read "parallel efficiency E = S / (p / p_re" in the PDF
of four examples, the rest of its label past the figure's top edge. Tick labels are left out: matplotlib keeps
those outside the axes' limits as objects, and draws none of them."""

from __future__ import annotations

import pytest

from reportgen.figures import _import_drawing
from reportgen.pipeline import analyses_of
from reportgen.project.loader import load_project
from reportgen.render.figure_families import figure_jobs
from tests.conftest import INPUTS, example_projects

SLACK = 1.0  # points: an extent rounded to the pixel


def _outside(fig) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of a figure drawn past its edges."""
    renderer = fig._get_renderer()
    edges = fig.bbox
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.xaxis.label, ax.yaxis.label, ax.title, *ax.texts]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    found = []
    for text in texts:
        if text.get_visible() and text.get_text().strip():
            box = text.get_window_extent(renderer)
            if box.x0 < edges.x0 - SLACK or box.x1 > edges.x1 + SLACK or box.y0 < edges.y0 - SLACK \
                    or box.y1 > edges.y1 + SLACK:
                found.append(text.get_text())
    return found


@pytest.mark.parametrize("name", example_projects())
def test_no_text_of_a_figure_runs_past_its_edges(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _import_drawing()
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    drawing = FigureCanvasSVG.print_svg
    outside: list[tuple[str, str]] = []
    key = [""]

    def checked(canvas, *arguments, **options):  # type: ignore[no-untyped-def]
        written = drawing(canvas, *arguments, **options)
        outside.extend((key[0], text) for text in _outside(canvas.figure))
        return written

    monkeypatch.setattr(FigureCanvasSVG, "print_svg", checked)
    loaded = load_project(INPUTS / name)
    jobs = figure_jobs(analyses_of(loaded), loaded.project)
    assert jobs  # every example draws figures: the test can fail
    for job in jobs:
        key[0] = job.frame.key
        job.run()
    assert outside == []


def test_the_check_sees_a_label_past_the_edge() -> None:
    """A y label longer than its axes are tall is found."""
    from reportgen.figures.jobs import FigureFrame
    from reportgen.figures.style import figure

    with figure(FigureFrame("long-label", "", "")) as fig:
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_ylabel("a label far longer than the height of the axes it names, which it runs past")
        fig.draw_without_rendering()
        assert _outside(fig) == ["a label far longer than the height of the axes it names, which it runs past"]
