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
from typing import Any


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

    executor = ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("fork"))
    try:
        yield FigurePool(executor)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def draw_figures(analysis: Any, project: Any, *, pool: FigurePool | None = None,
                 while_waiting: Callable[[], object] | None = None) -> dict[str, FigureSVG]:
    """Every figure of the report by key. Without a pool, a temporary one is used when there are enough jobs."""
    jobs = figure_jobs(analysis, project)
    if pool is not None:
        drawn = pool.draw(jobs, while_waiting=while_waiting)
    else:
        with figure_pool(workers=None if len(jobs) >= PARALLEL_FROM else 1) as temporary:
            drawn = temporary.draw(jobs, while_waiting=while_waiting)
    return {figure.key: figure for figure in drawn if figure is not None}
