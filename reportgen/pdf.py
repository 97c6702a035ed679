"""HTML → PDF with WeasyPrint, fetching nothing but the report's own figures: no network, no local files.

With WeasyPrint's default fetcher a report built from someone else's project file could embed a local file
(`<link rel="attachment" href="file:///etc/passwd">`) or call out to the network. Here every URL is refused except
the figures that reportgen itself drew, which are served from memory.

Why the figures are handed over as images: the HTML inlines each figure's SVG, and WeasyPrint would run its HTML
style cascade over every one of those thousands of SVG elements (parsing each `style` attribute as CSS for HTML and
logging each SVG property it does not know) before drawing them as SVG anyway. Giving WeasyPrint the same SVG as an
image of the same size draws the same vector figure and skips that work: about a quarter of the PDF's time.
"""

from __future__ import annotations

import gc
import logging
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

FIGURE_SCHEME = "reportgen-figure:"
# The figures' inline SVG, as style.to_svg writes it; project text is escaped, so it cannot produce this.
_INLINE_FIGURE = re.compile(r'<svg role="img" [^>]*class="figure-svg"[^>]*>.*?</svg>', re.DOTALL)


class RefusedFetch(Exception):
    pass


def _fetcher(figures: Mapping[str, bytes]) -> Any:
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class FiguresOnlyFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            if url in figures:
                return URLFetcherResponse(url, figures[url], {"Content-Type": "image/svg+xml"})
            raise RefusedFetch(f"reportgen fetches no external resource: {url[:80]}")

    return FiguresOnlyFetcher()


def figures_as_images(html: str) -> tuple[str, dict[str, bytes]]:
    """`html` with each inline figure replaced by an image of the same SVG, and those images by URL."""
    figures: dict[str, bytes] = {}

    def to_image(match: re.Match[str]) -> str:
        url = f"{FIGURE_SCHEME}{len(figures)}"
        figures[url] = match.group(0).encode("utf-8")
        return f'<img class="figure-svg" alt="" src="{url}">'

    return _INLINE_FIGURE.sub(to_image, html), figures


@cache
def _fonts() -> Any:
    from weasyprint.text.fonts import FontConfiguration

    return FontConfiguration()


def preload() -> None:
    """Import WeasyPrint and set up fonts ahead of time (the pipeline does it while figures are drawn)."""
    import weasyprint  # noqa: F401

    _fonts()


@contextmanager
def _source_date(epoch: int) -> Iterator[None]:
    """fontTools stamps the current time into every embedded font subset unless SOURCE_DATE_EPOCH is set."""
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """WeasyPrint allocates some 400,000 objects that live until the PDF is written; the cyclic garbage collector
    would walk them again and again for nothing (a fifth of the PDF's time). They are freed when it resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def html_to_pdf(html: str, *, epoch: int = 0) -> bytes:
    """The PDF of `html`; byte-identical for the same html and epoch (the creation time it records)."""
    import weasyprint

    html, figures = figures_as_images(html)
    with _source_date(epoch), _collector_paused(), _figure_failures() as failures:
        document = weasyprint.HTML(string=html, base_url="about:blank", url_fetcher=_fetcher(figures))
        pdf = bytes(document.write_pdf(font_config=_fonts()))
    if failures:  # WeasyPrint logs a figure it cannot load and leaves a hole; a report must not
        raise RuntimeError(f"the PDF renderer could not draw a figure: {failures[0]}")
    return pdf
