"""Figures as the page needs them before they are drawn (frames) and as workers draw them (jobs).

Apart from the drawing machinery in reportgen.figures so that the figure cache (reportgen.figures.cache) can name a
job without importing the package that uses the cache: no import circle.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from reportgen.stack import with_room

# Where each drawing goes in a rendered page: an image of this URL scheme, replaced by the inline SVG in the HTML
# and by the painted figure in the PDF. Project text is escaped, so it cannot forge one.
FIGURE_SCHEME = "reportgen-figure:"
WIDTH = 6.4  # inches: the text width of an A4 page with 2 cm margins is about 6.7 in
HEIGHT = 3.3


def slot(url: str, alt: str = "a figure") -> str:
    """A figure's place in a rendered page, until its drawing is put there; in a PDF, the image the drawing replaces,
    whose text alternative is the figure's in the PDF's tags."""
    return f'<img class="figure-svg" alt="{html.escape(alt)}" src="{url}">'


@dataclass(frozen=True)
class FigureFrame:
    """A figure as the page needs it, before it is drawn."""

    key: str  # the anchor, unique in a report
    caption: str
    alt: str
    width: float = WIDTH  # inches
    height: float = HEIGHT

    @property
    def url(self) -> str:
        return f"{FIGURE_SCHEME}{self.key}"

    @property
    def slot(self) -> str:
        return slot(self.url, self.alt)

    @property
    def points(self) -> tuple[Fraction, Fraction]:
        """Width and height in points, as the SVG's viewBox gives them (matplotlib writes them with "%f")."""
        return Fraction(f"{self.width * 72:f}"), Fraction(f"{self.height * 72:f}")


@dataclass(frozen=True)
class FigureJob:
    """One figure to draw: `draw(frame, *args)` returns its SVG."""

    frame: FigureFrame
    draw: Callable[..., str]
    args: tuple[Any, ...]

    def run(self) -> str:
        # matplotlib's drawing recurses through nested artists: room on the frame stack (reportgen.stack)
        with drawing_quietly():
            return with_room(self.draw, self.frame, *self.args)


# What matplotlib says while it draws that is about its drawing, not about the project, and that would otherwise
# reach the terminal (a traceback under PYTHONWARNINGS=error). A character the figure's font lacks, an emoji in a
# title: matplotlib measures the text with DejaVu Sans and warns, yet the SVG keeps the text as text (svg.fonttype
# none) and the reader's fonts draw it. A layout it cannot fit (an axis of extreme values): the figure is drawn as
# placed, without the layout.
_DRAWING_NOTICES = (r"Glyph \d+ .*missing from", r"constrained_layout not applied")


@contextmanager
def drawing_quietly() -> Iterator[None]:
    """Draw with matplotlib's drawing notices dropped and numpy's floating-point conditions unsaid: a curve through
    a pole or a ratio of zeros gives points that are not finite, which matplotlib leaves undrawn (a gap)."""
    import numpy as np

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for notice in _DRAWING_NOTICES:
            warnings.filterwarnings("ignore", message=notice, category=UserWarning)
        yield


def present(*jobs: FigureJob | None) -> list[FigureJob]:
    """The jobs of the figures whose inputs are present (a figure's describing function returns None otherwise)."""
    return [job for job in jobs if job is not None]
