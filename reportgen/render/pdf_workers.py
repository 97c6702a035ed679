"""Two WeasyPrint processes that make a PDF's two documents at once: one lays the report out while its figures are
drawn, the other paints the figures once they are; this process then puts them in place (reportgen.render.pdf).

Importing WeasyPrint and setting up its fonts takes about 0.75 s, and nothing else can happen on that core
meanwhile. So the workers are forked from multiprocessing's fork server with WeasyPrint already loaded in it
(reportgen.render.pdf_server): a one-shot build starts the server first thing, the import runs on the second core
while the project is loaded, analysed and drawn, and each worker forked from the server is ready at once. Requests
and answers are the futures of a ProcessPoolExecutor; the PDF is the one `reportgen.render.pdf.layout_to_pdf`
makes in a single process, byte for byte (batch workers, already one per core, and single-core machines render
that way).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from reportgen import collector
from reportgen.errors import RenderError
from reportgen.interrupts import as_worker

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from reportgen.render.pdf import PdfRenderer
    from reportgen.render.pdf_forms import Figure, FigureSlot

SERVER_MODULE = "reportgen.render.pdf_server"
Answer = TypeVar("Answer")
_SUBMITTING = threading.Lock()  # one submission at a time in this process, so that each pool knows its workers


def helpers_worthwhile() -> bool:
    """Whether work can go to helper processes that run beside this one: a second core, and fork."""
    return (os.cpu_count() or 1) >= 2 and hasattr(os, "fork")


SOCKET_FOLDER_LIMIT = 64  # bytes of the folder the fork server's socket goes in: AF_UNIX paths end at 108


def _short_socket_folder() -> None:
    """multiprocessing keeps the fork server's socket in a folder under $TMPDIR: past about 75 characters there the
    socket's path is longer than AF_UNIX allows and every PDF build would fail. The folder is then made under /tmp
    (Python 3.13 does the same); it is created once per process and removed at exit by multiprocessing."""
    import multiprocessing.util
    import tempfile

    if len(tempfile.gettempdir()) <= SOCKET_FOLDER_LIMIT or not os.access("/tmp", os.W_OK):
        return
    saved = tempfile.tempdir
    tempfile.tempdir = "/tmp"
    try:
        multiprocessing.util.get_temp_dir()  # made now, under /tmp, and kept for this process
    finally:
        tempfile.tempdir = saved


class PdfWorkers:
    """Two processes, forked from a fork server that loaded WeasyPrint, each making one document of a PDF.

    `one_shot` workers serve a single build and end with it: their cyclic garbage is never collected
    (`_one_shot_worker`), and the one that paints asks for less CPU than the layout (`_paint_behind_the_layout`).
    Workers kept for many builds (watch, a batch) collect after each document and paint at the layout's priority."""

    def __init__(self, *, one_shot: bool = False) -> None:
        import multiprocessing
        import multiprocessing.forkserver
        import multiprocessing.popen_forkserver  # (see below)
        import multiprocessing.util
        from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

        # how a worker paints: behind the layout beside it, in one build's workers (`_paint_behind_the_layout`)
        self._painting: Callable[..., bytes] = _paint_behind_the_layout if one_shot else _paint
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload([SERVER_MODULE])
        _short_socket_folder()
        multiprocessing.forkserver.ensure_running()  # at once: the server loads WeasyPrint while this one works on
        self._pool = ProcessPoolExecutor(max_workers=2, mp_context=self._context,
                                         initializer=_one_shot_worker if one_shot else as_worker)
        # A request that needs a new worker waits until the server has loaded WeasyPrint: a thread makes it. That
        # thread imports nothing (the module that starts a worker was imported just above): a stop raises
        # KeyboardInterrupt in this thread wherever it is, and one raised inside an import can leave the module's
        # lock held, so that a thread importing too would wait for it forever, and the command with it.
        self._requests = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reportgen-pdf-requests")
        self._unfinished: set[Future[Any]] = set()
        self._workers: set[BaseProcess] = set()  # this pool's processes, as they are started
        # where the workers leave their PDFs: in multiprocessing's folder of this process (beside the fork server's
        # socket), which it removes at exit
        self._answers = tempfile.mkdtemp(prefix="answers-", dir=multiprocessing.util.get_temp_dir())
        # The layout is requested once the page is rendered. Forking a worker and preparing it takes 0.02 s: one is
        # started now (its request waits for the server like any), so that it is there, idle, by then.
        self._requests.submit(self._start, _ready)

    def start(self, layout: str, slots: Sequence[FigureSlot], epoch: int) -> _PendingPdf:
        """Begin the layout at once, without waiting for the server."""
        from reportgen.render.pdf import layout_pdf

        slots = tuple(slots)
        request = self._requests.submit(self._submit, layout_pdf, layout, slots, epoch=epoch)
        return _PendingPdf(self._submit, request, slots, epoch, painting=self._painting)

    def _submit(self, work: Callable[..., bytes], *args: object, **kwargs: object) -> Future[str]:
        """`work` in a worker, answered by the path of the file holding its PDF (`_in_file`, `_read_answer`)."""
        return self._start(_in_file, self._answers, work, *args, **kwargs)

    def _start(self, task: Callable[..., Answer], *args: object, **kwargs: object) -> Future[Answer]:
        """`task` in a worker, each worker started for it remembered (for `close`)."""
        # ProcessPoolExecutor names its processes nowhere public, but it starts them within submit(), and
        # multiprocessing lists every live child of this process: the fork server's children that appear across a
        # submission are this pool's. (Another pool's submissions wait on the lock; the figures' workers are
        # forked, not the fork server's.)
        with _SUBMITTING:
            before = self._fork_server_children()
            future = self._pool.submit(task, *args, **kwargs)
            self._workers |= self._fork_server_children() - before
        self._unfinished.add(future)
        future.add_done_callback(self._unfinished.discard)
        return future

    def _fork_server_children(self) -> set[BaseProcess]:
        import multiprocessing

        return {child for child in multiprocessing.active_children() if isinstance(child, self._context.Process)}

    def close(self) -> None:
        """Shut the workers down and wait until they and the pool's threads are gone, killing a worker still at
        work first: its build failed or gave its PDF up, so it works for nobody.

        Waiting matters: the pool's last thread frees its queues as it ends, and a queue's finalizer unlinks its
        semaphores before telling multiprocessing's resource tracker. A command that left (os._exit) in between
        made the tracker warn on stderr about a "leaked semaphore" it then could not find.
        """
        self._requests.shutdown(cancel_futures=True)  # waits for a request being made
        if self._unfinished:
            # (Workers that said their pid through a SimpleQueue were tried: one stopped while it held the queue's
            # lock made a SIGTERM test fail half the time.)
            for worker in self._workers:
                if worker.is_alive():
                    worker.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._answers, ignore_errors=True)  # PDFs of work given up, or of workers killed


def _one_shot_worker() -> None:
    """A worker of one build: its collector stays off (reportgen.collector.off) once the WeasyPrint run that
    pauses it is over."""
    as_worker()
    collector.off()


# How much less CPU a painting worker of one build asks for than the layout beside it (a nice value): the layout is
# the build's longest task, and the painting ends 0.1 s before it; with three processes on two cores (the layout,
# the painting, the figures being drawn), the layout is given more of one. Paired: 25-47 ms sooner per build.
PAINTER_NICENESS = 5
_behind = False  # this worker has lowered its priority


def _paint(figures: Sequence[Figure], *, epoch: int) -> bytes:
    from reportgen.render.pdf import figures_pdf

    return figures_pdf(figures, epoch=epoch)


def _paint_behind_the_layout(figures: Sequence[Figure], *, epoch: int) -> bytes:
    """`_paint` in a worker of one build, which asks for less CPU than its layout from then on (PAINTER_NICENESS):
    for the rest of its life, as a process can lower its priority but not raise it again."""
    global _behind
    if not _behind and hasattr(os, "nice"):
        os.nice(PAINTER_NICENESS)
        _behind = True
    return _paint(figures, epoch=epoch)


def _ready() -> None:
    """A worker's first task, before there is work for it (PdfWorkers): it is then forked and prepared."""


def _in_file(folder: str, work: Callable[..., bytes], *args: object, **kwargs: object) -> str:
    """In a worker: `work`, its PDF left in a new file of `folder`, and that file's path as the answer.

    A worker killed while it answers (its build was stopped) must not leave half an answer in the pool's result
    pipe: the pool's reader would wait for the rest of it forever, and the stopped command with it (seen once in 80
    builds stopped at random, when the answer was the PDF itself, 1.4 MB). A path is one write of a few dozen
    bytes, which a pipe delivers whole or not at all."""
    pdf = work(*args, **kwargs)
    try:
        handle, path = tempfile.mkstemp(prefix="answer-", suffix=".pdf", dir=folder)
        with os.fdopen(handle, "wb") as stream:
            stream.write(pdf)
    except OSError as error:  # a full disk, a file-size limit
        raise RenderError(f"cannot write the PDF's parts to {folder}: {error.strerror or error}; the outputs are as "
                          "they were") from None
    return path


def _read_answer(future: Future[str]) -> bytes:
    """The PDF a worker left in a file (`_in_file`), which is removed once read."""
    path = _answer(future)
    try:
        with open(path, "rb") as stream:
            return stream.read()
    finally:
        os.unlink(path)


class _PendingPdf:
    processes_at_work = 1  # the layout, requested at once

    def __init__(self, submit: Callable[..., Future[str]], layout: Future[Future[str]],
                 slots: tuple[FigureSlot, ...], epoch: int, *, painting: Callable[..., bytes]) -> None:
        from reportgen.render.pdf_forms import paint_chunks

        self._submit, self._layout, self._slots, self._epoch = submit, layout, slots, epoch
        self._painting = painting
        self._chunks = paint_chunks(len(slots))
        self._svgs: dict[int, bytes] = {}
        self._painted: dict[int, Future[str]] = {}  # by chunk, each requested once all its figures are drawn

    def drawn(self, index: int, svg: bytes) -> None:
        self._svgs[index] = svg
        for number, chunk in enumerate(self._chunks):
            if number not in self._painted and all(each in self._svgs for each in chunk):
                self._paint(number)

    def finish(self, svgs: Sequence[bytes]) -> bytes:
        from reportgen.render.pdf_forms import place_figures

        self._svgs.update(enumerate(svgs))
        for number in range(len(self._chunks)):
            if number not in self._painted:
                self._paint(number)
        if self._chunks:  # this process merges the documents: pikepdf loads while it waits for the last of them
            import pikepdf  # noqa: F401
        report = _read_answer(_answer(self._layout))
        if not self._chunks:
            return report
        # each painting awaited only as it is placed: the report's PDF is read while the last one is painted
        painted = (_read_answer(self._painted[number]) for number in range(len(self._chunks)))
        return place_figures(report, painted, self._slots)

    def _paint(self, number: int) -> None:
        from reportgen.render.pdf_forms import Figure

        figures = [Figure(self._slots[index], self._svgs[index]) for index in self._chunks[number]]
        self._painted[number] = self._submit(self._painting, figures, epoch=self._epoch)

    def cancel(self) -> None:
        for painting in self._painted.values():
            painting.cancel()  # not started: never runs; started: finishes for nobody (or killed with the workers)
        if self._layout.cancel():  # not even requested yet
            return
        try:
            layout = self._layout.result()
        except Exception:  # the request itself failed (the pool is broken): nothing runs
            return
        layout.cancel()  # once started, it finishes for nobody (or is killed when the workers close)



def _answer(future: Future[Answer]) -> Answer:
    """A worker's answer (or a request's: the worker's future), or its failure as a RenderError (one line; the
    worker's traceback kept as a note)."""
    try:
        return future.result()
    except RenderError:
        raise
    except BrokenProcessPool:  # a worker died: a crash, or killed by a signal to it alone
        raise RenderError("a PDF worker process stopped unexpectedly") from None
    except Exception as error:  # a bug, in a worker: the command line prints one line
        failure = RenderError(f"the PDF worker failed: {type(error).__name__}: {error}".splitlines()[0])
        if error.__cause__ is not None:  # the worker's traceback, as concurrent.futures passes it on
            failure.add_note(str(error.__cause__))
        raise failure from None


@contextmanager
def pdf_workers(wanted: bool, *, one_shot: bool = False) -> Iterator[PdfRenderer | None]:
    """PdfWorkers while the block runs, when a PDF is wanted and a second core can serve them; else None (the PDF
    is then made in this process). `one_shot`: for a single build (PdfWorkers)."""
    if not wanted or not helpers_worthwhile():
        yield None
        return
    workers = PdfWorkers(one_shot=one_shot)
    try:
        yield workers
    finally:
        workers.close()
