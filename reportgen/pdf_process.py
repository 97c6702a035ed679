"""A PDF renderer in a process of its own, started before the build needs it.

Importing WeasyPrint and setting up its fonts takes about 0.75 s of a cold build, and nothing else can happen on
that core meanwhile. A one-shot build with a PDF forks this process first, so that the import runs on the second
core while the project is loaded, analysed and drawn; the HTML then goes over a pipe and the PDF comes back. The
process renders exactly as `reportgen.pdf.html_to_pdf` does in the builder's own process (watch and batch workers,
which are warm already, and single-core machines use that directly).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from reportgen.interrupts import exit_with_parent


class PdfRenderer(Protocol):
    def render(self, html: str, epoch: int) -> bytes: ...


class RendererProcess:
    """A forked process that imports WeasyPrint at once, then renders each HTML it is sent."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_end, self._connection), daemon=True,
                                        name="reportgen-pdf")
        self._process.start()
        child_end.close()

    def render(self, html: str, epoch: int) -> bytes:
        self._connection.send((html, epoch))
        try:
            ok, payload = self._connection.recv()
        except EOFError:
            raise RuntimeError("the PDF renderer process stopped unexpectedly") from None
        if not ok:
            raise RuntimeError(f"the PDF renderer process failed:\n{payload}")
        assert isinstance(payload, bytes)
        return payload

    def close(self) -> None:
        self._connection.close()  # an idle process sees end-of-file and exits
        self._process.join(timeout=0.1)
        if self._process.is_alive():  # still importing, or rendering a PDF nobody will read (a failed or
            self._process.kill()  # interrupted build): it writes nothing, and it defers SIGTERM as the build does
            self._process.join()


def _serve(connection: Any, parent_end: Any) -> None:
    parent_end.close()  # else this process's own copy would keep the pipe open after the parent closes it
    exit_with_parent()  # the pipe alone would not tell of a killed parent: figure workers hold its far end too
    from reportgen.pdf import html_to_pdf, preload

    preload()
    while True:
        try:
            html, epoch = connection.recv()
        except (EOFError, KeyboardInterrupt):  # the parent closed the pipe, or a second Ctrl-C: it is stopping
            return
        try:
            connection.send((True, html_to_pdf(html, epoch=epoch)))
        except KeyboardInterrupt:
            return
        except Exception:  # a bug: the parent raises it with this traceback
            connection.send((False, traceback.format_exc()))


@contextmanager
def early_renderer(wanted: bool) -> Iterator[PdfRenderer | None]:
    """A RendererProcess when a PDF is wanted and a second core can import WeasyPrint meanwhile, else None."""
    if not wanted or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        yield None
        return
    renderer = RendererProcess()
    try:
        yield renderer
    finally:
        renderer.close()
