"""Ctrl-C and SIGTERM, acted on between stages, never in the middle of one.

Python raises KeyboardInterrupt wherever the main thread happens to be. Inside a C callback (WeasyPrint's Pango and
fontconfig calls go through cffi) such an exception is printed and swallowed, and the renderer carries on with part
of its work skipped: a complete-looking but wrong PDF that would then be written. So the handlers only record the
request; builds check it at each stage boundary and before writing anything. A second signal stops at once.

Worker processes (figure drawing, the PDF renderer, batch builders) also stop when their parent is gone: killed
with SIGKILL, say, it cannot tell them, and they would otherwise wait forever for work that never comes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal a process receives when its parent exits

_requested: list[int] = []
last_signal: int | None = None  # the first signal recorded by the last deferred() block: the exit status is 128 + it


def _record(signum: int, _frame: FrameType | None) -> None:
    _requested.append(signum)
    if len(_requested) > 1:  # asked twice: the user wants out now
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are recorded instead of raised at once; the previous handlers come
    back afterwards. Only the main thread can set handlers: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global last_signal
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    _requested.clear()
    last_signal = None
    for number in previous:
        signal.signal(number, _record)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        last_signal = _requested[0] if _requested else None
        _requested.clear()


def requested() -> bool:
    return bool(_requested)


def check() -> None:
    """Raise KeyboardInterrupt if an interrupt was asked for: called where stopping loses nothing."""
    if _requested:
        raise KeyboardInterrupt


def exit_with_parent(poll_seconds: float = 0.5) -> None:
    """Called first in a worker process (figure drawing, the PDF renderer, batch builders): exit as soon as the
    parent is gone. Workers keep the deferred handlers they inherit: a Ctrl-C or SIGTERM sent to the whole process
    group is the parent's to act on at its next stage boundary, after which it shuts its workers down.

    On Linux the kernel kills the worker when its parent exits (PR_SET_PDEATHSIG): no thread, so a worker that
    forks a helper of its own (the PDF renderer forks its figure painter) forks a single-threaded process, as fork
    requires (Python 3.12 and later warn about forking a process with threads). Elsewhere a thread polls the parent's
    id, so that the worker's own work is never interrupted."""
    parent = os.getppid()
    if _killed_with_parent():
        if os.getppid() != parent:  # the parent was gone before the kernel was asked
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os._exit(1)

    threading.Thread(target=watch, name="reportgen-parent-watch", daemon=True).start()


def _killed_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
