"""Analysis → inline SVG figures. The only package that imports matplotlib.

Each figure family lives in its own module, which lists its figures as jobs: a key (the figure's anchor), a drawing
function and the exact arguments it draws from. Jobs are independent, so they can be drawn in worker processes and
cached by a hash of their arguments. Numbering is the template's job (CSS counters).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reportgen.cache import FigureCache


@dataclass(frozen=True)
class FigureSVG:
    key: str
    svg: str
    caption: str
    alt: str


@dataclass(frozen=True)
class FigureJob:
    """One figure to draw: `draw(*args)` returns the figure, or None when its inputs are absent."""

    key: str
    draw: Callable[..., FigureSVG | None]
    args: tuple[Any, ...]

    def run(self) -> FigureSVG | None:
        return self.draw(*self.args)


def figure_jobs(analysis: Any, project: Any) -> list[FigureJob]:
    """Every figure of a report, in reading order."""
    from reportgen.figures import decide, design, diagnosis, scaling

    return [job for module in (diagnosis, design, scaling, decide) for job in module.jobs(analysis, project)]


def _import_drawing() -> None:
    """The slow imports of drawing, done before forking so that the workers inherit them."""
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401

    from reportgen.figures import decide, design, diagnosis, scaling  # noqa: F401


def _run(job: FigureJob) -> FigureSVG | None:
    return job.run()


class FigurePool:
    """Where figures are drawn: two forked worker processes on a multi-core machine, else this process."""

    def __init__(self, executor: Any | None) -> None:
        self._executor = executor

    def draw(self, jobs: list[FigureJob], *,
             while_waiting: Callable[[], object] | None = None) -> list[FigureSVG | None]:
        """Draw every job; `while_waiting` runs in this process meanwhile (the pipeline loads the PDF renderer)."""
        if self._executor is None:
            drawn = [job.run() for job in jobs]
            if while_waiting:
                while_waiting()
            return drawn
        futures = [self._executor.submit(_run, job) for job in jobs]
        if while_waiting:
            while_waiting()
        return [future.result() for future in futures]


# Below this many figures one process draws faster than two (forking and sending results cost ~50 ms).
PARALLEL_FROM = 6


@contextmanager
def figure_pool(*, workers: int | None = None) -> Iterator[FigurePool]:
    """Two drawing processes forked after the drawing imports (measured: 14 figures in 0.6 s instead of 1.2 s
    on 2 cores); one process where there is a single core or no fork. Workers that import on their own, started
    earlier to overlap the analyses, were slower: on two cores they only compete with the analyses."""
    count = min(2, os.cpu_count() or 1) if workers is None else workers
    _import_drawing()
    if count < 2 or not hasattr(os, "fork"):
        yield FigurePool(None)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from reportgen.interrupts import exit_with_parent

    executor = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork"),
                                   initializer=exit_with_parent)
    try:
        yield FigurePool(executor)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class Drawn:
    figures: dict[str, FigureSVG]  # by key, in reading order
    drawn: tuple[str, ...]  # keys drawn now (the rest came from the cache)


def draw_figures(analysis: Any, project: Any, *, pool: FigurePool | None = None, cache: FigureCache | None = None,
                 while_waiting: Callable[[], object] | None = None) -> Drawn:
    """Every figure of the report. Cached figures are reused; without a pool, a temporary one is used when
    enough figures must be drawn for two processes to pay."""
    from reportgen.cache import job_key

    jobs = figure_jobs(analysis, project)
    keys = [job_key(job) for job in jobs] if cache is not None else [""] * len(jobs)
    found: dict[int, FigureSVG | None] = {}
    for index, key in enumerate(keys):
        if cache is not None:
            hit, value = cache.get(key)
            if hit:
                found[index] = value
    missing = [index for index in range(len(jobs)) if index not in found]
    todo = [jobs[index] for index in missing]
    if pool is None and not todo:  # every figure cached: no pool, so matplotlib is not even imported
        pool = FigurePool(None)
    if pool is not None:
        fresh = pool.draw(todo, while_waiting=while_waiting)
    else:
        with figure_pool(workers=None if len(todo) >= PARALLEL_FROM else 1) as temporary:
            fresh = temporary.draw(todo, while_waiting=while_waiting)
    for index, value in zip(missing, fresh, strict=True):
        found[index] = value
        if cache is not None:
            cache.put(keys[index], value)
    ordered = [found[index] for index in range(len(jobs))]
    return Drawn({figure.key: figure for figure in ordered if figure is not None},
                 tuple(jobs[index].key for index in missing if found[index] is not None))
