"""HTML → PDF with WeasyPrint, fetching nothing: no network, no local files, no redirects.

With WeasyPrint's default fetcher a report built from someone else's project file could embed a local file
(`<link rel="attachment" href="file:///etc/passwd">`) or call out to the network; every URL is refused here
except `data:` URLs that reportgen itself wrote into its own HTML.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any


class RefusedFetch(Exception):
    pass


@cache
def _fetcher() -> Any:
    from weasyprint.urls import URLFetcher

    class NothingFetcher(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: Any = None) -> Any:
            raise RefusedFetch(f"reportgen fetches no external resource: {url[:80]}")

    return NothingFetcher()


@cache
def _fonts() -> Any:
    from weasyprint.text.fonts import FontConfiguration

    return FontConfiguration()


def preload() -> None:
    """Import WeasyPrint and set up fonts ahead of time (the pipeline does it while figures are drawn)."""
    _fetcher()
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


def html_to_pdf(html: str, *, epoch: int = 0) -> bytes:
    """The PDF of `html`; byte-identical for the same html and epoch (the creation time it records)."""
    import weasyprint

    document = weasyprint.HTML(string=html, base_url="about:blank", url_fetcher=_fetcher())
    with _source_date(epoch):
        return bytes(document.write_pdf(font_config=_fonts()))
