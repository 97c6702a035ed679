"""HTML → PDF with WeasyPrint, fetching nothing but the report's own figures: no network, no local files.

With WeasyPrint's default fetcher a report built from someone else's project file could embed a local file
(`<link rel="attachment" href="file:///etc/passwd">`) or call out to the network. Here every URL is refused except
the figures that reportgen itself drew, which are served from memory.

A PDF is made in three plain steps (reportgen.render.pdf_forms): `layout_pdf` lays the report out around a
placeholder image of each figure, which needs only the figures' sizes, so it can start before they are drawn;
`figures_pdf` paints the figures, one per page; `place_figures` puts each in place. The figures never reach
WeasyPrint as the inline SVG of the HTML: its HTML style cascade would parse every `style` attribute of thousands
of SVG elements as CSS for HTML, a quarter of the PDF's time. `RenderHere` takes the three steps in this process;
reportgen.render.pdf_workers takes the first two in two processes at once, with the same bytes as the result.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, Literal, Protocol

from reportgen import collector
from reportgen.errors import RenderError
from reportgen.figures.jobs import FIGURE_SCHEME
from reportgen.render.pdf_forms import (
    Figure,
    FigureSlot,
    figure_pages,
    figures_as_placeholders,
    paint_chunks,
    place_figures,
    placeholders,
)
from reportgen.render.svg_attributes import as_presentation_attributes
from reportgen.render.weasyprint_import import import_weasyprint
from reportgen.stack import with_room


class RefusedFetch(Exception):
    pass


def _fetcher(resources: Mapping[str, tuple[bytes, str]]) -> Any:
    """A URL fetcher that serves `resources` (URL → content and its type) and refuses every other URL."""
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class FiguresOnlyFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            if url in resources:
                content, content_type = resources[url]
                return URLFetcherResponse(url, content, {"Content-Type": content_type})
            raise RefusedFetch(f"reportgen fetches no external resource: {url[:80]}")

    return FiguresOnlyFetcher()


@cache
def _fonts() -> Any:
    from weasyprint.text.fonts import FontConfiguration

    return FontConfiguration()


# Every font face, table and figure feature of the report, in miniature: the first PDF a process renders pays for
# loading fonts, the PNG and SVG code and the font subsetter (measured: 0.25 s more than the next one).
_WARM_UP = (
    '<h1 style="font-family: DejaVu Sans">Warm <b>up</b> <i>run</i></h1>'
    '<p style="font-family: DejaVu Serif">Text <b>bold</b> <i>italic</i> <code style="font-family: '
    'DejaVu Sans Mono">code</code></p><table><tr><th>a</th><td>1.0</td></tr></table>'
    '<figure><svg role="img" aria-labelledby="w" class="figure-svg" viewBox="0 0 20 10"><path d="M 0 0 L 9 9" '
    'style="stroke: #000000"/><text x="1" y="8" style="font: 6px \'DejaVu Sans\'">w</text></svg></figure>')


@cache
def _warm_up(step: Literal["layout", "painting"]) -> None:
    # One of the two WeasyPrint runs of a PDF, not the merge: the PDF workers, forked warm, never merge (pikepdf is
    # imported where the merging happens, reportgen.render.pdf_workers)
    layout, figures = figures_as_placeholders(_WARM_UP)
    if step == "layout":
        layout_pdf(layout, [figure.slot for figure in figures])
    else:
        figures_pdf(figures)


def preload(*, painting: bool = True) -> None:
    """Import WeasyPrint, set up fonts and lay out a first, small PDF ahead of time, and paint its figure unless
    told otherwise (the pipeline does it while figures are drawn; the PDF workers' fork server does it once for
    all of them)."""
    import_weasyprint()
    _fonts()
    _warm_up("layout")
    if painting:
        _warm_up("painting")


@contextmanager
def _source_date(epoch: int) -> Iterator[None]:
    """The PDF's font subsets would carry the current time unless SOURCE_DATE_EPOCH is set."""
    previous = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = previous


@contextmanager
def _figure_failures() -> Iterator[list[str]]:
    """The errors WeasyPrint logs about reportgen's own figures while the block runs."""
    failures: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            message = record.getMessage()
            if record.levelno >= logging.ERROR and FIGURE_SCHEME in message:
                failures.append(message)

    handler = Collect()
    logger = logging.getLogger("weasyprint")
    logger.addHandler(handler)
    try:
        yield failures
    finally:
        logger.removeHandler(handler)


class PendingPdf(Protocol):
    """A PDF whose layout has begun; it is finished with its figures' drawings."""

    # Processes it keeps at work until it is finished (a PDF worker laying the report out), whose cores the drawing
    # of the figures leaves them (reportgen.figures.drawing_processes)
    processes_at_work: int

    def drawn(self, index: int, svg: bytes) -> None:
        """The SVG of slot `index`, as soon as it is drawn (or found in the cache): a renderer may begin painting
        the figures that are there."""
        ...

    def finish(self, svgs: Sequence[bytes]) -> bytes:
        """The PDF, given the SVG of each slot, in the order of the slots."""
        ...

    def cancel(self) -> None:
        """Give up on this PDF (the build failed before its figures were drawn)."""
        ...


class PdfRenderer(Protocol):
    def start(self, layout: str, slots: Sequence[FigureSlot], epoch: int) -> PendingPdf:
        """Begin the PDF of `layout`, an HTML page with a placeholder image at each of `slots`, in their order."""
        ...


class RenderHere:
    """Renders in this process once the drawings are there (one core, or a worker of a batch)."""

    def start(self, layout: str, slots: Sequence[FigureSlot], epoch: int) -> PendingPdf:
        preload()  # a build begins its PDF while its figures are drawn in worker processes: WeasyPrint loads now
        return _RenderLater(layout, tuple(slots), epoch)


class _RenderLater:
    processes_at_work = 0  # all of it happens in `finish`

    def __init__(self, layout: str, slots: tuple[FigureSlot, ...], epoch: int) -> None:
        self._layout, self._slots, self._epoch = layout, slots, epoch

    def drawn(self, index: int, svg: bytes) -> None:
        pass

    def finish(self, svgs: Sequence[bytes]) -> bytes:
        figures = [Figure(slot, svg) for slot, svg in zip(self._slots, svgs, strict=True)]
        return layout_to_pdf(self._layout, figures, epoch=self._epoch)

    def cancel(self) -> None:
        pass


@contextmanager
def _weasyprint_run(epoch: int) -> Iterator[list[str]]:
    """Around each WeasyPrint run: the creation time, the collector paused, and its errors about our figures."""
    # (WeasyPrint's 400,000 objects live until the PDF is written: reportgen.collector)
    with _source_date(epoch), collector.paused(), _figure_failures() as failures:
        yield failures


def figures_pdf(figures: Sequence[Figure], *, epoch: int = 0) -> bytes:
    """A PDF with each figure drawn by WeasyPrint on a page of its own size, in order; uncompressed (`place_figures`
    compresses what it keeps). The painter is given the figures' CSS as attributes (reportgen.render.svg_attributes:
    the same PDF, sooner)."""
    resources = {f.slot.url: (as_presentation_attributes(f.svg), "image/svg+xml") for f in figures}
    return _weasyprint_pdf(figure_pages([f.slot for f in figures]), resources, epoch, failing="draw", tagged=False,
                           compressed=False)


def layout_pdf(layout: str, slots: Sequence[FigureSlot], *, epoch: int = 0) -> bytes:
    """The PDF of `layout`, an HTML page with a placeholder image for each of `slots`, laid out around them:
    uncompressed when there are slots (`place_figures` compresses it as it saves it again)."""
    resources = {url: (png, "image/png") for url, png in placeholders(slots).items()}
    return _weasyprint_pdf(layout, resources, epoch, failing="place", tagged=True, compressed=not slots)


def _weasyprint_pdf(html: str, resources: Mapping[str, tuple[bytes, str]], epoch: int, *, failing: str,
                    tagged: bool, compressed: bool) -> bytes:
    """One WeasyPrint run of `html`, fetching only `resources`. WeasyPrint logs a figure it cannot draw or place
    and leaves a hole; a report must not.

    The report's layout is `tagged` (WeasyPrint's PDF/UA structure: headings, paragraphs, tables, lists and each
    figure with its text alternative, in reading order, and the document's language), so that screen readers and
    reflow can read it; placing the figures keeps the tags, since it only swaps the image each figure tag marks
    for the drawing. The figures' own pages are not tagged: they become parts of the report's pages.

    A PDF that `place_figures` saves again is not `compressed` here: qpdf compresses its streams and packs its
    objects as it saves, in C, and WeasyPrint doing it first in Python cost the layout 0.08-0.12 s of 1.2."""
    weasyprint = import_weasyprint()
    with _weasyprint_run(epoch) as failures:
        document = weasyprint.HTML(string=html, base_url="about:blank", url_fetcher=_fetcher(resources))
        # the layout recurses through nested boxes: room on the frame stack (reportgen.stack)
        pdf = bytes(with_room(document.write_pdf, font_config=_fonts(), pdf_tags=tagged,
                              uncompressed_pdf=not compressed))
    if failures:
        raise RenderError(f"the PDF renderer could not {failing} a figure: {failures[0]}")
    return pdf


def layout_to_pdf(layout: str, figures: Sequence[Figure], *, epoch: int = 0) -> bytes:
    """The PDF of `layout`, an HTML page with a placeholder image for each of `figures` (in document order), made
    in this process; byte-identical for the same input and epoch (the creation time it records)."""
    report = layout_pdf(layout, [figure.slot for figure in figures], epoch=epoch)
    if not figures:
        return report
    painted = [figures_pdf([figures[index] for index in chunk], epoch=epoch) for chunk in paint_chunks(len(figures))]
    return place_figures(report, painted, [figure.slot for figure in figures])


def html_to_pdf(html: str, *, epoch: int = 0) -> bytes:
    """The PDF of `html`, a page whose figures are inline SVG as reportgen draws them."""
    layout, figures = figures_as_placeholders(html)
    return layout_to_pdf(layout, figures, epoch=epoch)
