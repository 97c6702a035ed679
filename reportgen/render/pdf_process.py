"""WeasyPrint in processes of its own: a renderer started before the build needs it, and a figure painter.

Importing WeasyPrint and setting up its fonts takes about 0.75 s of a cold build, and nothing else can happen on
that core meanwhile. A one-shot build with a PDF forks the renderer first, so that the import runs on the second
core while the project is loaded, analysed and drawn; the HTML then goes over a pipe and the PDF comes back.

Drawing the figures into the PDF does not depend on the report's layout (`reportgen.render.pdf_forms`), so it runs in a
painter process while the report is laid out: the renderer forks one once WeasyPrint is imported, and `watch`
keeps one beside its own warm renderer. And the layout needs only each figure's size, so the renderer lays the
report out while the build draws the figures: the build sends the page with its figures' slots first, then the
drawings straight to the painter over a pipe of their own. Either way the PDF is the one
`reportgen.render.pdf.layout_to_pdf` makes in a single process, byte for byte (batch workers, already one per core, and
single-core machines render that way).
"""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from reportgen.errors import RenderError
from reportgen.interrupts import as_worker

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from reportgen.render.pdf import FigurePainter, PdfRenderer
    from reportgen.render.pdf_forms import Figure, FigureArt, FigureSlot


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
        try:
            self._connection.send(request)
        except (BrokenPipeError, ConnectionResetError):  # it ended before it read this: its last word says why
            self._unread += 1
            self._receive()
            raise AssertionError("unreachable: a process that ended answers with a failure or not at all") from None
        self._unread += 1

    def _receive(self) -> Any:
        ok, payload = self._next_answer()
        if not ok:
            summary, trace = payload
            error = RenderError(f"the {self._process.name} process failed: {summary}")
            error.add_note(trace)  # the process's traceback, for a bug report; the command line prints one line
            raise error
        return payload

    def _next_answer(self) -> tuple[bool, Any]:
        try:
            answer: tuple[bool, Any] = self._connection.recv()
        except (EOFError, ConnectionResetError):  # it died (a crash, or killed by a signal to it alone)
            raise RenderError(f"the {self._process.name} process stopped unexpectedly") from None
        finally:
            self._unread -= 1
        return answer

    def close(self) -> None:
        self._connection.close()  # an idle process sees end-of-file and exits
        self._process.join(timeout=0.1)
        if self._process.is_alive():  # still importing, or working for nobody (a failed or interrupted build):
            self._process.kill()  # it writes nothing: no need to wait for it
            self._process.join()


def _serve(connection: Any, parent_end: Any, serve: Callable[[], Callable[[Any], Any]]) -> None:
    parent_end.close()  # else this process's own copy would keep the pipe open after the parent closes it
    as_worker()  # the pipe alone would not tell of a killed parent: figure workers hold its far end too
    from reportgen.render.pdf import preload

    try:
        preload()
        answer = serve()
    except Exception as error:  # say why, unasked, and end: the parent reads it at its next request
        with contextlib.suppress(OSError):
            connection.send((False, _failure(error)))
        return
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):  # the parent closed the pipe, or was killed (a signal ends this one: as_worker)
            return
        try:
            reply = (True, answer(request))
        except Exception as error:  # a bug or a figure WeasyPrint cannot draw: the parent raises it as a RenderError
            reply = (False, _failure(error))
        try:
            connection.send(reply)
        except OSError:  # the parent is gone (stopped, or it gave up on this answer and closed the pipe)
            return


def _failure(error: Exception) -> tuple[str, str]:
    """What the parent is told of a failure: one line, and the traceback (of the exception being handled)."""
    summary = str(error) if isinstance(error, RenderError) else f"{type(error).__name__}: {error}"
    return (summary.splitlines() or [type(error).__name__])[0], traceback.format_exc()


class PainterProcess(_WeasyPrintProcess):
    """Paints a report's figures into PDF form XObjects while the report itself is laid out. The drawings come
    with each request, or, from a build that lays its report out before drawing, over `arrivals`."""

    def __init__(self, arrivals: Connection | None = None) -> None:
        super().__init__("reportgen-figure-painter", partial(_painting, arrivals))

    def start(self, figures: Sequence[Figure], epoch: int) -> Callable[[], FigureArt]:
        self._send(([f.slot for f in figures], [f.svg for f in figures], epoch, 0))
        return self._receive

    def start_arriving(self, slots: Sequence[FigureSlot], epoch: int, request: int) -> Callable[[], FigureArt]:
        """Paint the drawings that the build sends over `arrivals` for `request`, once they arrive."""
        self._send((list(slots), None, epoch, request))
        return self._receive


def _painting(arrivals: Connection | None) -> Callable[[Any], Any]:
    from reportgen.render import pdf
    from reportgen.render.pdf_forms import Figure

    def paint(request: tuple[list[FigureSlot], list[bytes] | None, int, int]) -> FigureArt:
        slots, svgs, epoch, number = request
        if svgs is None:
            assert arrivals is not None
            svgs = _arrived(arrivals, number)
        return pdf.paint_figures([Figure(slot, svg) for slot, svg in zip(slots, svgs, strict=True)], epoch=epoch)

    return paint


def _arrived(arrivals: Connection, request: int) -> list[bytes]:
    """The drawings the build sent for `request`. Drawings of earlier requests are stale: their renderer gave up
    before it asked for them."""
    while True:
        number, svgs = arrivals.recv()
        if number < request:
            continue
        if svgs is None:
            raise RenderError("the build stopped before its figures were drawn")
        assert number == request
        return list(svgs)


class RendererProcess(_WeasyPrintProcess):
    """Lays out each page it is sent while the build draws its figures, with a painter process of its own that
    receives the drawings straight from the build."""

    def __init__(self) -> None:
        import multiprocessing

        arrivals, self._drawings = multiprocessing.get_context("fork").Pipe(duplex=False)
        # not a daemon: multiprocessing forbids a daemon children, and this one has a painter. Its owner closes it
        # (early_renderer), and it exits on its own when that owner dies (as_worker).
        super().__init__("reportgen-pdf", partial(_rendering, arrivals, self._drawings), daemon=False)
        arrivals.close()
        self._requests = 0

    def start(self, layout: str, slots: Sequence[FigureSlot], epoch: int) -> _PendingInRenderer:
        self._requests += 1
        self._send((layout, list(slots), epoch, self._requests))
        return _PendingInRenderer(self, self._requests, expects_drawings=bool(slots))

    def close(self) -> None:
        self._drawings.close()
        super().close()


class _PendingInRenderer:
    def __init__(self, renderer: RendererProcess, request: int, *, expects_drawings: bool) -> None:
        self._renderer, self._request, self._expects_drawings = renderer, request, expects_drawings

    def finish(self, svgs: Sequence[bytes]) -> bytes:
        self._deliver(list(svgs))
        pdf = self._renderer._receive()
        assert isinstance(pdf, bytes)
        return pdf

    def cancel(self) -> None:
        self._deliver(None)  # the painter is waiting for them; its renderer's answer is left unread, then drained

    def _deliver(self, svgs: list[bytes] | None) -> None:
        if self._expects_drawings:
            self._expects_drawings = False
            with contextlib.suppress(BrokenPipeError):  # no painter: the renderer's answer, or its end, says why
                self._renderer._drawings.send((self._request, svgs))


def _rendering(arrivals: Connection, drawings: Connection) -> Callable[[Any], Any]:
    from reportgen.render import pdf

    drawings.close()  # the build's end: only the build writes drawings
    painter = PainterProcess(arrivals)  # forked now that WeasyPrint is imported: ready at once; ends with this one
    arrivals.close()  # the painter's end

    def render(request: tuple[str, list[FigureSlot], int, int]) -> bytes:
        layout, slots, epoch, number = request
        art = painter.start_arriving(slots, epoch, number) if slots else None  # first: it must hear of every one
        return pdf.render_layout(layout, slots, art, epoch=epoch)

    return render


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
