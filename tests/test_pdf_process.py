"""The PDF renderer process that a one-shot build starts early: same PDF, failures and interrupts handled."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reportgen.pdf import html_to_pdf
from reportgen.pdf_process import RendererProcess, early_renderer

HTML = "<h1>Title</h1><p>Some text to lay out.</p>"


def test_renders_the_same_pdf_as_this_process() -> None:
    with early_renderer(True) as renderer:
        if renderer is None:
            pytest.skip("one core: builds render in their own process")
        assert renderer.render(HTML, 1_700_000_000) == html_to_pdf(HTML, epoch=1_700_000_000)
        assert renderer.render(HTML + "<p>again</p>", 0).startswith(b"%PDF")  # it serves more than one


def test_not_started_when_no_pdf_is_wanted() -> None:
    with early_renderer(False) as renderer:
        assert renderer is None


def test_a_failure_in_the_process_is_raised_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen import pdf

    def broken(*_: object, **__: object) -> bytes:
        raise ValueError("no fonts today")

    monkeypatch.setattr(pdf, "html_to_pdf", broken)  # inherited by the fork
    renderer = RendererProcess()
    try:
        with pytest.raises(RuntimeError, match="ValueError: no fonts today"):
            renderer.render(HTML, 0)
    finally:
        renderer.close()


def test_close_stops_a_render_nobody_will_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from reportgen import pdf

    started = tmp_path / "started"

    def slow(*_: object, **__: object) -> bytes:
        started.write_text(str(os.getpid()))
        time.sleep(60)
        return b""

    monkeypatch.setattr(pdf, "html_to_pdf", slow)
    renderer = RendererProcess()
    renderer._connection.send((HTML, 0))  # what render() does first; an interrupted build never reads the answer
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
