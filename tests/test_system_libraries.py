"""A machine without Pango or a font: one line before any work, what to install, exit 1; HTML and JSON still build
(docs/methods.md#system-libraries)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.render import system_libraries
from tests.conftest import INPUTS


def _without(monkeypatch: pytest.MonkeyPatch, soname_part: str) -> None:
    opened = system_libraries._open

    def failing(name: str) -> ctypes.CDLL:
        if soname_part in name:
            raise OSError(f"{name}: cannot open shared object file: No such file or directory")
        return opened(name)

    monkeypatch.setattr(system_libraries, "_open", failing)


def test_this_machine_can_make_the_pdf() -> None:
    assert system_libraries.missing_for_pdf() is None


def test_a_missing_pango_is_one_line_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _without(monkeypatch, "libpango-1.0")
    status = main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and err.startswith("reportgen: error: the PDF needs Pango (")
    assert "apt install libpango-1.0-0" in err and "dnf install pango" in err and "brew install pango" in err
    assert "--format html,json" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing was started, nothing written


def test_without_a_font_the_pdf_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system_libraries, "_font_count", lambda fontconfig: 0)
    message = system_libraries.missing_for_pdf()
    assert message is not None and message.startswith("the PDF needs at least one font")


def test_html_and_json_need_no_pango(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "libpango")
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "html,json"]) == 0
    assert (tmp_path / "example" / "report.html").is_file()


def test_every_library_missing_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "lib")
    message = system_libraries.missing_for_pdf()
    assert message is not None
    for library in system_libraries.LIBRARIES:
        assert f"{library.name} ({library.linux})" in message
