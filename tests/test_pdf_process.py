"""WeasyPrint's helper processes: the renderer a one-shot build starts early and the figure painter. Same PDF as
one process makes, failures and interrupts handled, no process left behind."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from reportgen.errors import RenderError
from reportgen.render.pdf import PaintHere, PdfRenderer, html_to_pdf
from reportgen.render.pdf_forms import figures_as_placeholders
from reportgen.render.pdf_process import PainterProcess, RendererProcess, early_renderer, figure_painter

HTML = "<h1>Title</h1><p>Some text to lay out.</p>"

pytestmark = pytest.mark.slow  # the fast tier (make check) leaves these out: see docs/testing.md


def figure(label: str, width: int = 300, height: int = 120) -> str:
    """An inline figure as reportgen.figures writes them: text, a path, a hatch pattern and transparency."""
    return (f'<figure><svg role="img" aria-labelledby="{label}-caption" class="figure-svg" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" version="1.1">'
            '<defs><pattern id="h" patternUnits="userSpaceOnUse" width="8" height="8">'
            '<path d="M 0 8 L 8 0" style="stroke: #000000; stroke-width: 1"/></pattern></defs>'
            f'<rect x="10" y="10" width="{width // 2}" height="40" style="fill: url(#h); stroke: #000000"/>'
            '<path d="M 10 100 L 200 60" style="fill: none; stroke: #0072b2; stroke-width: 2; opacity: 0.5"/>'
            f'<text x="20" y="90" style="font: 9px \'DejaVu Sans\'; fill: #262626">{label} axis label</text>'
            '</svg><figcaption>A figure.</figcaption></figure>')


FIGURES = f"<h1>Figures</h1>{figure('first')}<p>Between.</p>{figure('second', 200, 200)}"
BROKEN = '<figure><svg role="img" aria-labelledby="a" class="figure-svg" viewBox="0 0 9 9">&undefined;</svg></figure>'


def render_in(renderer: PdfRenderer, html: str, epoch: int = 0) -> bytes:
    """What a build does: the layout first, the drawings when they are drawn."""
    layout, figures = figures_as_placeholders(html)
    return renderer.start(layout, [f.slot for f in figures], epoch).finish([f.svg for f in figures])


def test_figures_are_placed_as_vector_forms() -> None:
    pdf = html_to_pdf(FIGURES)
    assert b"/Subtype /Form" in pdf and b"/Subtype /Image" not in pdf, "placeholders replaced, figures vector"
    text = "".join(PdfReader(io.BytesIO(pdf)).pages[0].extract_text().split())
    assert "firstaxislabel" in text and "secondaxislabel" in text


def test_a_painter_process_paints_the_same_pdf() -> None:
    painter = PainterProcess()
    try:
        here = html_to_pdf(FIGURES, epoch=1_700_000_000, painter=PaintHere())
        assert html_to_pdf(FIGURES, epoch=1_700_000_000, painter=painter) == here
        assert html_to_pdf(FIGURES, epoch=1_700_000_000, painter=painter) == here, "and again, warm"
    finally:
        painter.close()


def test_a_painter_answer_nobody_read_is_not_taken_for_the_next() -> None:
    _, first = figures_as_placeholders(figure("first"))
    _, failing = figures_as_placeholders(BROKEN)
    _, both = figures_as_placeholders(FIGURES)
    painter = PainterProcess()
    try:
        painter.start(first, 0)  # a build that failed before it needed its figures
        painter.start(failing, 0)  # and one whose figure could not be drawn either, unread too
        assert len(painter.start(both, 0)().forms) == 2
    finally:
        painter.close()


def test_a_figure_the_painter_process_cannot_draw_fails_the_pdf() -> None:
    painter = PainterProcess()
    try:
        with pytest.raises(RenderError, match="could not draw a figure"):
            html_to_pdf(BROKEN, painter=painter)
        assert html_to_pdf(FIGURES, painter=painter).startswith(b"%PDF"), "it goes on serving"
    finally:
        painter.close()


def test_a_figure_the_layout_leaves_out_fails_the_pdf() -> None:
    hidden = FIGURES.replace("<figure>", '<figure style="display: none">', 1)
    with pytest.raises(RenderError, match="left no room for 1 figure"):
        html_to_pdf(hidden)


def test_no_painter_without_a_pdf() -> None:
    with figure_painter(False) as painter:
        assert painter is None


def test_renders_the_same_pdf_as_this_process() -> None:
    with early_renderer(True) as renderer:
        if renderer is None:
            pytest.skip("one core: builds render in their own process")
        assert render_in(renderer, FIGURES, 1_700_000_000) == html_to_pdf(FIGURES, epoch=1_700_000_000)
        assert render_in(renderer, HTML + "<p>again</p>").startswith(b"%PDF")  # it serves more than one


def test_a_layout_given_up_before_its_drawings_leaves_the_renderer_serving() -> None:
    """An interrupted build cancels: the painter hears that no drawings will come, and the answer nobody reads
    is not taken for the next page's."""
    layout, figures = figures_as_placeholders(FIGURES)
    renderer = RendererProcess()
    try:
        renderer.start(layout, [f.slot for f in figures], 0).cancel()
        assert render_in(renderer, FIGURES, 1_700_000_000) == html_to_pdf(FIGURES, epoch=1_700_000_000)
    finally:
        renderer.close()


def test_not_started_when_no_pdf_is_wanted() -> None:
    with early_renderer(False) as renderer:
        assert renderer is None


def test_a_failure_in_the_process_is_raised_with_its_traceback() -> None:
    """A figure WeasyPrint cannot draw fails in the renderer's painter; the build sees it with the traceback."""
    renderer = RendererProcess()
    try:
        failure = r"^the reportgen-pdf process failed: .*could not draw a figure"
        with pytest.raises(RenderError, match=failure) as raised:
            render_in(renderer, BROKEN)
        assert "\n" not in str(raised.value) and "Traceback" in raised.value.__notes__[0], \
            "one line for the command line, the traceback kept as a note"
        assert render_in(renderer, HTML).startswith(b"%PDF"), "and it goes on serving"
    finally:
        renderer.close()


def test_close_stops_a_render_nobody_will_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from reportgen.render import pdf

    started = tmp_path / "started"
    real = pdf.render_layout

    def slow(layout: str, *arguments: Any, **options: Any) -> bytes:
        if layout != HTML:  # the renderer's warm-up
            return real(layout, *arguments, **options)
        started.write_text(str(os.getpid()))
        time.sleep(60)
        return b""

    monkeypatch.setattr(pdf, "render_layout", slow)
    renderer = RendererProcess()
    renderer.start(HTML, [], 0)  # an interrupted build never reads the answer
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(started.read_text())
    begun = time.monotonic()
    renderer.close()
    assert time.monotonic() - begun < 10
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_the_process_exits_when_its_builder_goes_away() -> None:
    renderer = RendererProcess()
    process = renderer._process
    renderer._connection.close()  # as when the parent dies: the pipe closes
    process.join(timeout=20)
    assert not process.is_alive() and process.exitcode == 0


def _children(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def _gone(pid: int) -> bool:
    """Exited: no longer in the process table, or a zombie waiting for init (its parent is dead) to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_the_renderers_painter_exits_when_the_renderer_is_killed() -> None:
    renderer = RendererProcess()
    try:
        assert render_in(renderer, FIGURES).startswith(b"%PDF")  # its painter is forked by now
        painters = _children(renderer._process.pid)
        assert len(painters) == 1
        renderer._process.kill()
        renderer._process.join()
        deadline = time.monotonic() + 10
        while not _gone(painters[0]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(painters[0])
    finally:
        renderer.close()


def _threads_after_watching(queue: Any) -> None:
    from reportgen.interrupts import as_worker

    as_worker()
    import threading

    queue.put(threading.active_count())


def _watch_then_sleep() -> None:
    from reportgen.interrupts import as_worker

    as_worker()
    time.sleep(60)


def _fork_a_sleeper_and_leave(pid_file: str) -> None:
    import multiprocessing

    sleeper = multiprocessing.get_context("fork").Process(target=_watch_then_sleep)
    sleeper.start()
    Path(pid_file).write_text(str(sleeper.pid))
    os._exit(0)


def test_a_worker_forks_without_threads_and_dies_with_its_parent(tmp_path: Path) -> None:
    # the renderer forks its figure painter: a worker must have no thread by then (fork copies only the calling
    # thread; Python 3.12+ warns), yet still go when its parent is killed
    import multiprocessing
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the kernel's parent-death signal is Linux's")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    worker = context.Process(target=_threads_after_watching, args=(queue,))
    worker.start()
    assert queue.get(timeout=10) == 1
    worker.join()
    middle = context.Process(target=_fork_a_sleeper_and_leave, args=(str(tmp_path / "pid"),))
    middle.start()
    middle.join()
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except FileNotFoundError:
            return  # gone and reaped
        if state in ("Z", "X"):
            return  # killed; waiting for whoever adopted it to reap it
        time.sleep(0.05)
    os.kill(pid, 9)
    raise AssertionError("a worker outlived its parent")
