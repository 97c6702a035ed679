"""Rebuilding: the figure cache, watch mode, and batch builds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.commands.watch import WatchEvent, first_pass, watch
from reportgen.pipeline import Builder, BuildOptions
from tests.conftest import INPUTS

EXAMPLE = (INPUTS / "example.yaml").read_text()


def figure_count(path: Path) -> int:
    """How many figures a build of the project draws, from the figure families themselves: a count written here
    would go stale with every figure added."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    loaded = load_project(path)
    return len(figure_jobs(analyze_loaded(loaded)[0], loaded.project))


def test_changing_one_run_redraws_only_the_figures_that_read_it(tmp_path: Path) -> None:
    project = tmp_path / "example.yaml"
    project.write_text(EXAMPLE)
    builder = Builder(BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    first = builder.build(project)
    assert len(first.figures_drawn) == figure_count(project) > 10
    assert builder.build(project).figures_drawn == ()  # nothing changed: everything from the cache
    project.write_text(EXAMPLE.replace("compute: 4150", "compute: 4000"))
    redrawn = set(builder.build(project).figures_drawn)
    assert {"speedup", "breakdown", "lost-folds"} <= redrawn
    assert not redrawn & {"roofline", "walls", "memory-stack", "pressures", "sensitivity"}


def test_the_disk_cache_serves_a_new_process_and_no_cache_bypasses_it(tmp_path: Path) -> None:
    options = BuildOptions(out_root=tmp_path / "out", formats=("html",))
    Builder(options).build(INPUTS / "mlperf-ssd.yaml")
    assert Builder(options).build(INPUTS / "mlperf-ssd.yaml").figures_drawn == ()  # a fresh builder, warm disk
    fresh = Builder(BuildOptions(out_root=tmp_path / "out", formats=("html",), use_disk_cache=False))
    assert len(fresh.build(INPUTS / "mlperf-ssd.yaml").figures_drawn) == figure_count(INPUTS / "mlperf-ssd.yaml") > 1


def test_the_disk_cache_holds_plain_svg_and_drops_older_formats(tmp_path: Path) -> None:
    """Reading the cache back runs no code: entries are SVG text (a pickle, as older versions wrote, is removed)."""
    folder = tmp_path / "out" / ".cache" / "figures"
    folder.mkdir(parents=True)
    (folder / "old-entry.pickle").write_bytes(b"\x80\x05N.")
    Builder(BuildOptions(out_root=tmp_path / "out", formats=("html",))).build(INPUTS / "mlperf-ssd.yaml")
    entries = sorted(folder.iterdir())
    assert len(entries) == figure_count(INPUTS / "mlperf-ssd.yaml")
    assert all(e.suffix == ".svg" and e.read_text().startswith("<svg ") for e in entries)


def test_cached_and_fresh_reports_are_identical(tmp_path: Path) -> None:
    cached = Builder(BuildOptions(out_root=tmp_path / "a", formats=("html",)))
    cached.build(INPUTS / "bert-dgx-a100.yaml")
    cached.build(INPUTS / "bert-dgx-a100.yaml")
    Builder(BuildOptions(out_root=tmp_path / "b", formats=("html",), use_disk_cache=False)).build(
        INPUTS / "bert-dgx-a100.yaml")
    name = "bert-dgx-a100/report.html"
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_watch_rebuilds_on_save_and_survives_a_bad_save(tmp_path: Path) -> None:
    project = tmp_path / "w.yaml"
    project.write_text(EXAMPLE)
    events: list[WatchEvent] = []
    thread = threading.Thread(target=watch, args=(project, BuildOptions(out_root=tmp_path / "out",
                                                                        formats=("html", "json"))),
                              kwargs={"on_event": events.append, "interval": 0.05, "max_builds": 3}, daemon=True)
    thread.start()

    def wait_for(count: int) -> None:
        deadline = time.time() + 120
        while len(events) < count and time.time() < deadline:
            time.sleep(0.05)
        assert len(events) >= count

    wait_for(1)
    html = (tmp_path / "out" / "w" / "report.html").read_bytes()
    project.write_text(EXAMPLE.replace("peak_compute: 7.9 PFLOP/s", "peak_compute: 7.9 GB/s"))
    wait_for(2)
    assert not events[1].ok and "hardware.peak_compute" in events[1].errors
    assert (tmp_path / "out" / "w" / "report.html").read_bytes() == html  # the last good report is kept
    project.write_text(EXAMPLE.replace("value_of_time: 50 USD/h", "value_of_time: 500 USD/h"))
    wait_for(3)
    thread.join(timeout=60)
    assert events[2].ok and not events[2].first
    changed = {change.name: change for change in events[2].changes}
    # cost + 500 USD/h × T: 4 nodes 621 + 1411 = 2032; 8 nodes 861 + 978 = 1839; 16 nodes 1629 + 925 = 2554
    assert (changed["time_value_optimal_nodes"].old, changed["time_value_optimal_nodes"].new) == (4, 8)


def test_watch_writes_html_first_when_a_pdf_is_asked_for() -> None:
    assert first_pass(("html", "pdf", "json")) == ("html", "json")
    assert first_pass(("pdf",)) == ("html",)
    assert first_pass(("json",)) == ("json",)


def test_batch_builds_every_project_and_reports_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for index in range(3):
        path = tmp_path / f"p{index}.yaml"
        path.write_text(EXAMPLE.replace("compute: 4150", f"compute: {4100 + index}"))
        paths.append(str(path))
    bad = tmp_path / "bad.yaml"
    bad.write_text("project: {title: T}\nhardware: {peak_compute: 1 GB/s}\n")
    status = main(["build", *paths, str(bad), "-o", str(tmp_path / "out"), "-j", "2", "--format", "json"])
    captured = capsys.readouterr()
    assert status == 2  # one project's input errors: reported, and the others still built
    for path in paths:
        assert f"{path}: wrote 1 file " in captured.out
        assert (tmp_path / "out" / Path(path).stem / "results.json").exists()
    assert f"{bad}: 1 input error" in captured.err and "hardware.peak_compute" in captured.err
    assert "3 of 4 projects built, 1 failed" in captured.out


def test_watch_sees_a_save_that_keeps_the_size_and_the_modification_time(tmp_path: Path) -> None:
    """An editor that restores the modification time, or two saves of one length within the file system's clock
    tick: the size and mtime alone missed the save."""
    import os

    from reportgen.commands.watch import _stamp

    path = tmp_path / "p.yaml"
    path.write_text("design: {nodes: 4}\n")
    before = path.stat()
    stamp = _stamp((path,))
    path.write_text("design: {nodes: 8}\n")  # the same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert _stamp((path,)) != stamp
