"""`reportgen watch`: rebuild on every save in a warm process and tell what changed in the key results.

The process keeps its imports, its figure cache and two figure workers, so a rebuild redraws only the figures whose
inputs changed, and two PDF workers that lay the report out and paint its figures at once. Fresh HTML and
JSON are written first; the PDF follows. A save with an input error leaves the last good outputs in place and
waits for the next save.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reportgen import interrupts
from reportgen.analysis import Analysis
from reportgen.analysis.revisions.changes import ResultChange, compare_results
from reportgen.errors import InputError
from reportgen.pipeline import Builder, BuildOptions, warm_builder
from reportgen.project import measurements

Stamp = tuple[str, int, int, int, int]  # a watched file: path, mtime (ns), size, ctime (ns), inode


@dataclass(frozen=True)
class WatchEvent:
    ok: bool
    html_seconds: float | None = None  # from the save seen to fresh HTML and JSON
    pdf_seconds: float | None = None  # from the save seen to a fresh PDF
    written: tuple[Path, ...] = ()
    figures_drawn: tuple[str, ...] = ()
    changes: tuple[ResultChange, ...] = ()  # key results that changed since the last good build
    first: bool = False
    errors: str = ""
    currency: str = "USD"  # of the money among the changes


@dataclass
class _State:
    stamp: tuple[Stamp, ...] = ()
    analysis: Analysis | None = None  # of the last good build
    watched: tuple[Path, ...] = field(default_factory=tuple)


def _stamp(paths: tuple[Path, ...]) -> tuple[Stamp, ...]:
    """What tells a save: the modification time and size, and the change time and inode, since a save can keep the
    first two (an editor that restores the modification time, two saves of one length within the file system's
    clock tick) but not the last two (any write sets the change time; a save by replacing gives a new inode)."""
    stamps = []
    for path in paths:
        try:
            status = path.stat()
        except OSError:
            stamps.append((str(path), -1, -1, -1, -1))
        else:
            stamps.append((str(path), status.st_mtime_ns, status.st_size, status.st_ctime_ns, status.st_ino))
    return tuple(stamps)


def _watched(project: Path) -> tuple[Path, ...]:
    """The project file and the CSVs it names (scaling.file, prediction.collectives_file), read from its text
    again after each build, a failed one too: a CSV that does not exist yet is watched until it appears."""
    from reportgen.project.spec import locate, scalar_text
    from reportgen.project.yaml_source import compose, read_text

    paths = [project]
    try:
        root = compose(read_text(project, str(project))[0], str(project))
    except InputError:
        return tuple(paths)
    for key in ("scaling.file", "prediction.collectives_file"):
        named = scalar_text(locate(root, key))
        if named:
            try:
                paths.append(measurements.resolve(project, named))
            except ValueError:  # outside the folder: the build says so
                continue
    return tuple(paths)


def watch(path: Path, options: BuildOptions, *, on_event: Callable[[WatchEvent], None], interval: float = 0.25,
          max_builds: int | None = None, should_stop: Callable[[], bool] = lambda: False) -> None:
    with warm_builder(options) as builder:
        state = _State(watched=(path,))
        builds = 0
        while not should_stop() and not interrupts.requested() and (max_builds is None or builds < max_builds):
            stamp = _stamp(state.watched)
            if stamp == state.stamp:
                time.sleep(interval)
                continue
            time.sleep(0.05)  # editors save in steps: let the file settle, then read it once
            state.stamp = _stamp(state.watched)
            on_event(_rebuild(builder, path, options, state))
            builds += 1


def first_pass(formats: tuple[str, ...]) -> tuple[str, ...]:
    """What is written at once: everything but the PDF, and the HTML the PDF is made from when one is asked for."""
    early = tuple(f for f in formats if f != "pdf")
    return (*early, "html") if "pdf" in formats and "html" not in early else early


def _rebuild(builder: Builder, path: Path, options: BuildOptions, state: _State) -> WatchEvent:
    started = time.perf_counter()
    try:
        result = builder.build(path, formats=first_pass(options.formats))
    except InputError as error:
        state.watched = _watched(path)
        state.stamp = _stamp(state.watched)
        return WatchEvent(ok=False, errors=str(error))
    html_seconds = time.perf_counter() - started
    written = list(result.written)
    pdf_seconds = None
    if "pdf" in options.formats:
        written.append(builder.write_pdf(result))
        pdf_seconds = time.perf_counter() - started
    changes = () if state.analysis is None else tuple(
        change for change in compare_results(state.analysis, result.analysis) if change.verdict != "same")
    first = state.analysis is None
    state.analysis = result.analysis
    state.watched = _watched(path)
    state.stamp = _stamp(state.watched)
    return WatchEvent(True, html_seconds, pdf_seconds, tuple(written), result.figures_drawn, changes, first,
                      currency=result.loaded.project.currency)

