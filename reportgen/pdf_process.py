"""WeasyPrint in processes of its own: a renderer started before the build needs it, and a figure painter.

Importing WeasyPrint and setting up its fonts takes about 0.75 s of a cold build, and nothing else can happen on
that core meanwhile. A one-shot build with a PDF forks the renderer first, so that the import runs on the second
core while the project is loaded, analysed and drawn; the HTML then goes over a pipe and the PDF comes back.

Drawing the figures into the PDF does not depend on the report's layout (`reportgen.pdf_forms`), so it runs in a
painter process while the report is laid out: the renderer forks one once WeasyPrint is imported, and `watch`
keeps one beside its own warm renderer. Either way the PDF is the one `reportgen.pdf.html_to_pdf` makes in a
single process, byte for byte (batch workers, already one per core, and single-core machines render that way).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from reportgen.interrupts import exit_with_parent

if TYPE_CHECKING:
    from reportgen.pdf import FigurePainter
    from reportgen.pdf_forms import Figure, FigureArt


class PdfRenderer(Protocol):
    def render(self, html: str, epoch: int) -> bytes: ...


def helpers_worthwhile() -> bool:
    """Whether work can go to forked helper processes that run beside this one: a second core, and fork."""
    return (os.cpu_count() or 1) >= 2 and hasattr(os, "fork")


class _WeasyPrintProcess:
    """A forked process that imports WeasyPrint at once, then answers each request it is sent, in order."""

    def __init__(self, name: str, serve: Callable[[], Callable[[Any], Any]], *, daemon: bool = True) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_end, self._connection, serve), daemon=daemon,
                                        name=name)
        self._process.start()
        child_end.close()
        self._unread = 0  # answers sent for requests whose caller stopped waiting

    def _send(self, request: Any) -> None:
        while self._unread:  # an earlier caller gave up (its build failed): its answer, even a failure, is stale
            self._next_answer()
        self._connection.send(request)
        self._unread += 1

    def _receive(self) -> Any:
        ok, payload = self._next_answer()
        if not ok:
            raise RuntimeError(f"the {self._process.name} process failed:\n{payload}")
        return payload

    def _next_answer(self) -> tuple[bool, Any]:
        try:
            answer: tuple[bool, Any] = self._connection.recv()
        except EOFError:
            raise RuntimeError(f"the {self._process.name} process stopped unexpectedly") from None
        finally:
            self._unread -= 1
        return answer

    def close(self) -> None:
        self._connection.close()  # an idle process sees end-of-file and exits
        self._process.join(timeout=0.1)
        if self._process.is_alive():  # still importing, or working for nobody (a failed or interrupted build):
            self._process.kill()  # it writes nothing, and it defers SIGTERM as the build does
            self._process.join()


def _serve(connection: Any, parent_end: Any, serve: Callable[[], Callable[[Any], Any]]) -> None:
    parent_end.close()  # else this process's own copy would keep the pipe open after the parent closes it
    exit_with_parent()  # the pipe alone would not tell of a killed parent: figure workers hold its far end too
    from reportgen.pdf import preload

    preload()
    answer = serve()
    while True:
        try:
            request = connection.recv()
        except (EOFError, KeyboardInterrupt):  # the parent closed the pipe, or a second Ctrl-C: it is stopping
            return
        try:
            connection.send((True, answer(request)))
        except KeyboardInterrupt:
            return
        except Exception:  # a bug or a figure WeasyPrint cannot draw: the parent raises it with this traceback
            connection.send((False, traceback.format_exc()))


class PainterProcess(_WeasyPrintProcess):
    """Paints a report's figures into PDF form XObjects while the report itself is laid out."""

    def __init__(self) -> None:
        super().__init__("reportgen-figure-painter", _painting)

    def start(self, figures: Sequence[Figure], epoch: int) -> Callable[[], FigureArt]:
        self._send((list(figures), epoch))
        return self._receive


def _painting() -> Callable[[Any], Any]:
    from reportgen import pdf

    return lambda request: pdf.paint_figures(request[0], epoch=request[1])


class RendererProcess(_WeasyPrintProcess):
    """Renders each HTML it is sent to PDF, with a painter process of its own for the figures."""

    def __init__(self) -> None:
        # not a daemon: multiprocessing forbids a daemon children, and this one has a painter. Its owner closes it
        # (early_renderer), and it exits on its own when that owner dies (exit_with_parent).
        super().__init__("reportgen-pdf", _rendering, daemon=False)

    def render(self, html: str, epoch: int) -> bytes:
        self._send((html, epoch))
        pdf = self._receive()
        assert isinstance(pdf, bytes)
        return pdf


def _rendering() -> Callable[[Any], Any]:
    from reportgen import pdf

    painter = PainterProcess()  # forked now that WeasyPrint is imported: ready at once; ends with this process
    return lambda request: pdf.html_to_pdf(request[0], epoch=request[1], painter=painter)


Helper = TypeVar("Helper", bound=_WeasyPrintProcess)


@contextmanager
def _helper(start: Callable[[], Helper], wanted: bool) -> Iterator[Helper | None]:
    """A helper process while the block runs, if it is wanted and there is a second core for it; else None."""
    if not wanted or not helpers_worthwhile():
        yield None
        return
    helper = start()
    try:
        yield helper
    finally:
        helper.close()


def early_renderer(wanted: bool) -> AbstractContextManager[PdfRenderer | None]:
    """A RendererProcess when a PDF is wanted and a second core can import WeasyPrint meanwhile, else None."""
    return _helper(RendererProcess, wanted)


def figure_painter(wanted: bool) -> AbstractContextManager[FigurePainter | None]:
    """A PainterProcess for a warm builder that renders PDFs itself (watch), or None where it would not help."""
    return _helper(PainterProcess, wanted)
