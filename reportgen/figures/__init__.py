"""Analysis → inline SVG figures. The only package that imports matplotlib.

Each figure family lives in its own module, which lists its figures as jobs: a frame (the figure's anchor, caption,
text alternative and size, all the page needs), a drawing function and the exact arguments it draws from. Frames
are known before anything is drawn, so the report can be laid out while the figures are drawn. Jobs are independent,
so they can be drawn in worker processes and cached by a hash of their arguments. Numbering is the template's job
(CSS counters).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reportgen import collector
from reportgen.figures.jobs import FIGURE_SCHEME, HEIGHT, WIDTH, FigureFrame, FigureJob, present, slot
from reportgen.stand_in import standing_in

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from reportgen.analysis import Analysis
    from reportgen.figures.cache import FigureCache
    from reportgen.project.model import Project

__all__ = ["FIGURE_SCHEME", "HEIGHT", "WIDTH", "FigureFamily", "FigureFrame", "FigureJob", "present", "slot"]


class FigureFamily(Protocol):
    """A module of figures: its `jobs`, every figure it draws from an analysis (and the uncut analysis, `full`)."""

    def __call__(self, analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]: ...


def _import_drawing() -> None:
    """The slow imports of drawing, done before forking so that the workers inherit them (with no collector pass
    over what they define, which lives on: reportgen.collector)."""
    with _no_backend_from_environment(), collector.loading(), _no_property_tables():
        import matplotlib.backends.backend_svg
        import matplotlib.figure  # noqa: F401


@contextmanager
def _no_backend_from_environment() -> Iterator[None]:
    """matplotlib sets its backend from $MPLBACKEND as it is imported, and refuses one it cannot find: Jupyter
    exports `module://matplotlib_inline.backend_inline`, which made every build fail outside the notebook's
    interpreter. reportgen draws through the SVG canvas and never uses a backend, so the variable is set aside while
    matplotlib is imported (a notebook's own matplotlib, imported before, keeps its backend), like the user's
    matplotlibrc (reportgen.figures.style)."""
    backend = os.environ.pop("MPLBACKEND", None)
    try:
        yield
    finally:
        if backend is not None:
            os.environ["MPLBACKEND"] = backend


@contextmanager
def _no_property_tables() -> Iterator[None]:
    """matplotlib writes into the docstring of each Artist class's `set`, as the class is defined, a table of every
    property it can set, found by inspecting every method of the class (`matplotlib.artist.kwdoc`): 0.05 s of the
    0.2 s its drawing modules take to import, at every build, for `help()` text a build never shows. Only the
    classes defined while the block runs go without: what is imported later, or was before (a notebook's own
    matplotlib), keeps its tables, and `kwdoc` is matplotlib's again afterwards."""
    import matplotlib.artist

    with standing_in(matplotlib.artist, "kwdoc", _no_table):
        yield


def _no_table(artist: object) -> str:
    return ""


def _run(job: FigureJob) -> str:
    return job.run()


class FigurePool:
    """Where figures are drawn: two forked worker processes where two cores are free for them, else this process."""

    def __init__(self, executor: Executor | None) -> None:
        self._executor = executor

    def draw(self, jobs: Sequence[FigureJob], drawn: Callable[[int, str], None] | None = None) -> list[str]:
        """Draw every job, in order; `drawn(index, svg)` is told each drawing as soon as it is there, in order."""
        if self._executor is None:
            runs = (job.run() for job in jobs)
        else:
            futures = [self._executor.submit(_run, job) for job in jobs]
            runs = (future.result() for future in futures)
        svgs = []
        for index, svg in enumerate(runs):
            svgs.append(svg)
            if drawn is not None:
                drawn(index, svg)
        return svgs


# Below this many figures one process draws faster than two (forking and sending results cost ~50 ms).
PARALLEL_FROM = 6


def drawing_processes(beside: int = 0) -> int:
    """How many processes should draw: the cores left free by `beside` processes at work meanwhile (a PDF worker
    laying the report out), at most two, at least this one. On two cores a third process only competes with the
    layout, the build's longest task (measured, byte-compiled: a cold build 3.44 s and 6.42 CPU-s drawing here
    beside it, 3.61 s and 6.61 CPU-s with two drawing workers; medians of 10 alternated builds)."""
    return max(1, min(2, (os.cpu_count() or 1) - beside))


@contextmanager
def figure_pool(*, workers: int | None = None) -> Iterator[FigurePool]:
    """`workers` drawing processes (default: `drawing_processes()`), forked after the drawing imports (measured:
    14 figures in 0.6 s instead of 1.2 s on 2 cores, when nothing else runs); this process alone for one, or where
    there is no fork. Workers that import on their own, started earlier to overlap the analyses, were slower: on
    two cores they only compete with the analyses."""
    count = drawing_processes() if workers is None else workers
    _import_drawing()
    # Everything alive now (the libraries, the project, its analyses) lives on: the collector need not walk it
    # again for every figure (measured: 14 figures drawn 15 % faster), and forked workers keep sharing its pages.
    collector.set_aside()
    if count < 2 or not hasattr(os, "fork"):
        yield FigurePool(None)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from reportgen.interrupts import as_worker, shut_down_after

    executor = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork"),
                                   initializer=as_worker)
    with shut_down_after(executor):
        yield FigurePool(executor)


@dataclass(frozen=True)
class Drawn:
    svgs: dict[str, str]  # each figure's SVG by key, in reading order
    drawn: tuple[str, ...]  # keys drawn now (the rest came from the cache)


def draw_figures(jobs: Sequence[FigureJob], *, pool: FigurePool | None = None, cache: FigureCache | None = None,
                 beside: int = 0, drawn: Callable[[str, str], None] | None = None) -> Drawn:
    """The drawing of every job. Cached figures are reused; without a pool, a temporary one is used when enough
    figures must be drawn for two processes to pay and the cores not taken by `beside` processes at work meanwhile
    allow them. `drawn(key, svg)` is told each figure as soon as it is there: the cached ones first, then the
    others as they are drawn (a PDF's renderer paints them meanwhile)."""
    from reportgen.figures.cache import job_key

    keys = [job_key(job) for job in jobs] if cache is not None else [""] * len(jobs)
    found: dict[int, str] = {}
    for index, key in enumerate(keys):
        if cache is not None:
            svg = cache.get(key)
            if svg is not None:
                found[index] = svg
    missing = [index for index in range(len(jobs)) if index not in found]
    todo = [jobs[index] for index in missing]
    if drawn is not None:
        for index, svg in sorted(found.items()):
            drawn(jobs[index].frame.key, svg)
    tell = None if drawn is None else lambda index, svg: drawn(todo[index].frame.key, svg)
    if pool is None and not todo:  # every figure cached: no pool, so matplotlib is not even imported
        pool = FigurePool(None)
    if pool is not None:
        fresh = pool.draw(todo, tell)
    else:
        with figure_pool(workers=drawing_processes(beside) if len(todo) >= PARALLEL_FROM else 1) as temporary:
            fresh = temporary.draw(todo, tell)
    for index, svg in zip(missing, fresh, strict=True):
        found[index] = svg
        if cache is not None:
            cache.put(keys[index], svg)
    return Drawn({job.frame.key: found[index] for index, job in enumerate(jobs)},
                 tuple(jobs[index].frame.key for index in missing))
