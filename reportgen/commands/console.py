"""What the commands tell the user besides their data, at the verbosity asked for (-q, -v).

Status lines ("wrote ...", "FILE: ok") go through say() and are dropped by -q; detail() lines (stage timings) are
shown only with -v, on standard error. Data a command exists to print (a schema, a trace table, JSON) and every
error are printed regardless.
"""

from __future__ import annotations

import sys
from typing import Any

_quiet = False
_verbose = False


def configure(*, quiet: bool, verbose: bool) -> None:
    global _quiet, _verbose
    _quiet, _verbose = quiet, verbose and not quiet


def say(*values: Any, **options: Any) -> None:
    """A status line (standard output unless `file` says otherwise); nothing under -q."""
    if not _quiet:
        print(*values, **options)


def detail(text: str) -> None:
    """A line for -v only, on standard error."""
    if _verbose:
        print(text, file=sys.stderr, flush=True)
