"""Analysis → inline SVG figures. The only package that imports matplotlib.

Each figure family lives in its own module; `draw_figures` returns the figures of one report in reading order,
each with a stable key (its anchor), a caption and a short text alternative. Numbering is the template's job.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FigureSVG:
    key: str
    svg: str
    caption: str
    alt: str


def draw_figures(analysis, project) -> dict[str, FigureSVG]:  # type: ignore[no-untyped-def]
    from reportgen.figures import decide, design, diagnosis, scaling

    figures: list[FigureSVG | None] = []
    figures += diagnosis.draw(analysis, project)
    figures += design.draw(analysis, project)
    figures += scaling.draw(analysis, project)
    figures += decide.draw(analysis, project)
    return {figure.key: figure for figure in figures if figure is not None}
