"""Building many projects: in parallel worker processes that each pay the library imports once.

Each worker keeps one warm Builder (imports, template cache, figure cache) for all the projects it builds, and
draws figures itself (the parallelism is across projects). One project's errors never stop the others.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen import interrupts
from reportgen.commands.resources import os_failure
from reportgen.errors import ExitCode, InputError, ReportgenError
from reportgen.pipeline import Builder, BuildOptions, warm_builder

if TYPE_CHECKING:
    from reportgen.render.pdf import PdfRenderer


@dataclass(frozen=True)
class Outcome:
    path: Path
    status: int  # an ExitCode
    summary: str  # one line
    details: str = ""  # the located input errors, or a traceback
    seconds: float = 0.0
    stages: tuple[tuple[str, float], ...] = ()  # seconds by build stage (load, analyze, ...), for -v


_WORKER_BUILDER: Builder | None = None


def _start_worker(options: BuildOptions) -> None:
    global _WORKER_BUILDER
    from reportgen.figures import FigurePool

    interrupts.as_worker()

    _WORKER_BUILDER = Builder(options, pool=FigurePool(None))


def _build_one(path: Path, builder: Builder | None = None) -> Outcome:
    builder = builder or _WORKER_BUILDER
    assert builder is not None
    started = time.perf_counter()
    try:
        result = builder.build(path)
    except InputError as error:
        count = len(error.problems)
        return Outcome(path, ExitCode.INPUT, f"{count} input error{'s' if count != 1 else ''}", str(error),
                       time.perf_counter() - started)
    except ReportgenError as error:
        return Outcome(path, int(error.exit_code), f"error: {error}", "", time.perf_counter() - started)
    except OSError as error:  # the system's refusal (no file descriptor left, no process for a worker), not a bug:
        interrupts.check()  # one line without a traceback, as main() says one met outside a build
        return Outcome(path, ExitCode.FAILURE, f"error: {os_failure(error)}", "", time.perf_counter() - started)
    except Exception as error:  # a bug: this project fails with its traceback, the others go on
        interrupts.check()  # unless a stop came first: a library stopped midway can fail oddly afterwards
        return Outcome(path, ExitCode.FAILURE, f"failed: {type(error).__name__}: {error}", traceback.format_exc(),
                       time.perf_counter() - started)
    seconds = time.perf_counter() - started
    drawn = len(result.figures_drawn)
    written = len(result.written)
    return Outcome(path, ExitCode.OK, f"wrote {written} file{'' if written == 1 else 's'} in {seconds:.1f} s "
                   f"({drawn} figure{'s' if drawn != 1 else ''} drawn)", "", seconds, tuple(result.seconds.items()))


def build_many(paths: list[Path], options: BuildOptions, *, jobs: int, renderer: PdfRenderer | None = None,
               stages: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Outcomes as projects finish (in order of completion when jobs > 1). A single project's PDF goes to
    `renderer` when the caller started one (reportgen.render.pdf_workers.pdf_workers), and its stages to `stages`."""
    if len(paths) == 1:  # figures get a drawing pool only if enough of them miss the cache (draw_figures)
        yield _build_one(paths[0], Builder(options, renderer=renderer, stages=stages))
        return
    if jobs <= 1:
        with warm_builder(options) as builder:
            for path in paths:
                interrupts.check()
                yield _build_one(path, builder)
        return
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=context, initializer=_start_worker,
                               initargs=(options,))
    with interrupts.shut_down_after(pool):  # stopped: projects not started are cancelled
        futures = [pool.submit(_build_one, path) for path in paths]
        for future in as_completed(futures):
            interrupts.check()
            yield future.result()


def worst(outcomes: list[Outcome]) -> int:
    """The exit status of a batch: 2 if any input was bad, else 1 if anything failed, else 0."""
    statuses = {outcome.status for outcome in outcomes}
    if ExitCode.INPUT in statuses:
        return ExitCode.INPUT
    return ExitCode.FAILURE if statuses - {ExitCode.OK} else ExitCode.OK

