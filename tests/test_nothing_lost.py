"""A build that is interrupted, killed or fails leaves the previous report as it was and no temporary files."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reportgen import pipeline
from reportgen.files import TEMP_PREFIX
from reportgen.pipeline import Builder, BuildOptions
from tests.conftest import INPUTS, ROOT, group_members, outliving

pytestmark = pytest.mark.slow  # the fast tier (make check) leaves these out: see docs/testing.md

EXAMPLE = (INPUTS / "example.yaml").read_text()
FILES = ("report.html", "report.pdf", "results.json")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def no_temporaries(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.startswith(TEMP_PREFIX) or p.name.startswith(".tmp-")]


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    project = tmp_path / "example.yaml"
    project.write_text(EXAMPLE)
    out = tmp_path / "out"
    Builder(BuildOptions(out_root=out)).build(project)
    project.write_text(EXAMPLE.replace("compute: 4150", "compute: 4000"))  # the next build would differ
    return project, out, snapshot(out / "example")


@pytest.mark.parametrize("stage", ["draw_figures", "render_page", "layout_to_pdf", "write_files"])
def test_an_interrupt_at_any_stage_keeps_the_previous_outputs(built: tuple[Path, Path, dict[str, bytes]],
                                                              monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    project, out, before = built

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    if stage == "draw_figures":
        monkeypatch.setattr("reportgen.figures.draw_figures", interrupted)
    elif stage == "write_files":
        real_replace = os.replace
        calls = []

        def replace_then_die(source: object, target: object) -> None:
            calls.append(target)
            if len(calls) == 2:  # between two files: the first is new, the rest old, none partial
                raise KeyboardInterrupt
            real_replace(source, target)  # type: ignore[arg-type]

        monkeypatch.setattr("reportgen.files.os.replace", replace_then_die)
    elif stage == "layout_to_pdf":
        monkeypatch.setattr("reportgen.render.pdf.layout_to_pdf", interrupted)
    else:
        monkeypatch.setattr(pipeline, stage, interrupted)
    with pytest.raises(KeyboardInterrupt):
        Builder(BuildOptions(out_root=out, use_disk_cache=False)).build(project)
    after = snapshot(out / "example")
    assert no_temporaries(out)
    if stage == "write_files":
        assert sum(after[name] != before[name] for name in FILES) <= 1  # at most the one already replaced
        assert after["report.pdf"] == before["report.pdf"]
    else:
        assert after == before


def test_a_failing_pdf_renderer_keeps_everything(built: tuple[Path, Path, dict[str, bytes]],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project, out, before = built

    def broken(*_: object, **__: object) -> bytes:
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr("reportgen.render.pdf.layout_to_pdf", broken)
    with pytest.raises(RuntimeError):
        Builder(BuildOptions(out_root=out)).build(project)
    assert snapshot(out / "example") == before and no_temporaries(out)


def test_a_build_interrupted_while_its_pdf_is_laid_out_elsewhere_keeps_everything(
        built: tuple[Path, Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The PDF workers lay the PDF out while the figures are drawn; an interrupt then gives the PDF up, and the
    workers serve the next build as if nothing happened."""
    from reportgen.figures import draw_figures
    from reportgen.render.pdf_workers import PdfWorkers

    project, out, before = built
    renderer = PdfWorkers()
    try:
        def interrupted(*_: object, **__: object) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr("reportgen.figures.draw_figures", interrupted)
        with pytest.raises(KeyboardInterrupt):
            Builder(BuildOptions(out_root=out, use_disk_cache=False), renderer=renderer).build(project)
        assert snapshot(out / "example") == before and no_temporaries(out)
        monkeypatch.setattr("reportgen.figures.draw_figures", draw_figures)
        Builder(BuildOptions(out_root=out, use_disk_cache=False), renderer=renderer).build(project)
        reference = out.parent / "reference"
        Builder(BuildOptions(out_root=reference, use_disk_cache=False)).build(project)
        assert snapshot(out / "example") == snapshot(reference / "example") != before
    finally:
        renderer.close()


def kill_during_build(project: Path, out: Path, delay: float, how: int) -> int:
    process = subprocess.Popen([sys.executable, "-m", "reportgen", "build", str(project), "-o", str(out),
                                "--no-cache"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, how) if how == signal.SIGKILL else process.send_signal(how)
    return process.wait(timeout=60)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_build_process_never_leaves_a_partial_report(built: tuple[Path, Path, dict[str, bytes]],
                                                              tmp_path: Path, how: int) -> None:
    project, out, before = built
    reference = tmp_path / "reference"
    Builder(BuildOptions(out_root=reference)).build(project)
    after_build = snapshot(reference / "example")
    for delay in (0.4, 1.2, 2.0, 3.0, 4.5):  # loading, analysing, drawing, rendering the PDF, writing
        status = kill_during_build(project, out, delay, how)
        now = snapshot(out / "example")
        for name in FILES:  # each file is the previous one or the finished new one: never partial
            assert now[name] in (before[name], after_build[name]), (delay, name)
        if how == signal.SIGTERM:
            assert no_temporaries(out / "example"), delay
            assert status in (0, 128 + signal.SIGTERM), (delay, status)  # finished first, or stopped: 143
    subprocess.run([sys.executable, "-m", "reportgen", "build", str(project), "-o", str(out)], cwd=ROOT,
                   check=True, capture_output=True)
    assert snapshot(out / "example") == after_build and no_temporaries(out / "example")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("helpers", [3, 4])  # the PDF's layout under way (multiprocessing's resource tracker and
# fork server, the layout worker) while the build draws the figures; then the figures' painting worker too
def test_workers_do_not_outlive_a_killed_build(built: tuple[Path, Path, dict[str, bytes]], helpers: int) -> None:
    """SIGKILL of the build process alone (as the OOM killer does): its PDF workers, their fork server and
    multiprocessing's resource tracker exit instead of waiting forever for work."""
    project, out, _ = built
    process = subprocess.Popen([sys.executable, "-m", "reportgen", "build", str(project), "-o", str(out),
                                "--no-cache"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:  # until the wanted helpers run
        if len(group_members(process.pid) - {process.pid}) >= helpers:
            break
        time.sleep(0.02)
    else:
        process.kill()
        pytest.skip("the build finished before its workers could be caught running")
    time.sleep(0.3)  # into their work: workers killed while still starting up happen to exit anyway
    process.kill()
    process.wait(timeout=60)
    left = outliving(process.pid, wait=10)
    assert not left, "worker processes outlived their build"
