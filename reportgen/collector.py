"""When reportgen keeps Python's cyclic garbage collector off its objects, and why: one place for the rules.

The collector walks every object it tracks, generation by generation; a full pass walks all of them. Three kinds of
work make objects that the collector can only waste time on:
- imports (WeasyPrint's, matplotlib's): classes, functions and tables that live as long as the process;
- a WeasyPrint run: some 400,000 objects that live until its PDF is written;
- a build's project, analyses and results document, which live until the build ends.
The first two run with the collector `paused`; what lives on is then `set_aside` (gc.freeze), so that later passes
skip it (`loading` does both), and `given_back` (gc.unfreeze) where a process goes on to other work (a watch, a
notebook). A process that ends with its one job turns the collector `off`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No collector pass while the block runs (it resumes after, if it was on): for work that allocates objects
    that all live past it. Measured: 0.03 s of WeasyPrint's 0.31 s import, 0.03 s of matplotlib's 0.17 s, and a
    fifth of a PDF's layout."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def loading() -> Iterator[None]:
    """`paused` for loading what lives on (imports), which is `set_aside` before the collector resumes: resumed
    first, its very first pass would walk all of it."""
    with paused():
        yield
        set_aside()


def set_aside() -> None:
    """Everything alive now lives on (the libraries, or a build's project and analyses): no collector pass walks it
    again until it is `given_back`. Before a fork, this also keeps the child from writing to the pages it shares
    with its parent (the collector's bookkeeping is written into each object it walks)."""
    gc.freeze()


def given_back() -> None:
    """What `set_aside` kept from the collector is the collector's again (a process that goes on building)."""
    gc.unfreeze()


def off() -> None:
    """No collector pass for the rest of this process, which ends with its one job (a PDF worker of a single build):
    its exit gives its garbage back. Resumed after a WeasyPrint run, the collector's first pass walked the 400,000
    objects the run had left in its youngest generation: 0.05 s at the very end of the report's layout."""
    gc.disable()
