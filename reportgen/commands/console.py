"""What the commands tell the user besides their data, at the verbosity asked for (-q, -v).

Status lines ("wrote ...", "FILE: ok") go through say() and are dropped by -q; detail() lines (stage timings) are
shown only with -v, on standard error. Data a command exists to print (a schema, a trace table, JSON) and every
error are printed regardless.
"""

from __future__ import annotations

import sys
from typing import Any

from reportgen.project.records import inert

_quiet = False
_verbose = False


def configure(*, quiet: bool, verbose: bool) -> None:
    global _quiet, _verbose
    _quiet, _verbose = quiet, verbose and not quiet


def say(*values: Any, **options: Any) -> None:
    """A status line (standard output unless `file` says otherwise); nothing under -q. Shown inert, one line: a
    name it quotes (a CSV named with U+202E, or with a line break in it) cannot reorder, rewrite or add a line of
    the terminal's."""
    if not _quiet:
        print(*(inert(str(value)) for value in values), **options)


def detail(text: str) -> None:
    """A line for -v only, on standard error."""
    if _verbose:
        print(text, file=sys.stderr, flush=True)


class StageLine:
    """A single build's stage on one line of standard error ("p.yaml: finishing the PDF…"), for a stage that begins
    once the build has run for `after` seconds (a quick build stays silent), cleared when the build ends. No thread
    keeps time (the build forks its figure workers): a stage is shown as it begins. For a terminal only: the caller
    leaves it out under -q and when standard error is a pipe."""

    def __init__(self, name: str, *, after: float = 1.0) -> None:
        import time

        self._name, self._after, self._shown = name, after, False
        self._started = time.monotonic()

    def __call__(self, stage: str) -> None:
        import time

        if stage and time.monotonic() - self._started >= self._after:
            print(f"\r\033[K{self._name}: {stage}…", end="", file=sys.stderr, flush=True)
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
            self._shown = False
