"""Ctrl-C and SIGTERM: stop at once, except in the middle of a write, which is finished first.

Supervisors (`timeout`, systemd, Kubernetes, CI runners) send one SIGTERM and, a few seconds later, SIGKILL; a
terminal sends SIGINT. Either must stop any command promptly, wherever it is: reading a pipe that never ends,
waiting for a renderer that hangs, running a command under `measure`. So a signal raises KeyboardInterrupt where
the main thread is, as Python's own Ctrl-C does, and every stage cleans up on the way out (its `finally` blocks,
the pools' shutdown). The exception is a write: `held()` marks one (a few milliseconds of moving finished files
into place) and a signal that arrives inside is acted on when it ends, so that no output is ever half-written.

Everything that must be right is also checked, not assumed: a signal is recorded before it is raised, and builds
call `check()` before writing, so that an interrupt swallowed somewhere (an exception raised inside a finaliser is
printed and dropped by Python) still stops the build before it writes.

Worker processes (figure drawing, the PDF workers and their fork server, batch builders) call `as_worker()` first:
they exit at once on a signal (after a write under way) and when their parent is gone: killed with SIGKILL, say,
it cannot tell them, and they would otherwise wait forever for work that never comes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Executor

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>: the signal a process receives when its parent exits
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # Ctrl-C, a supervisor, a terminal that closed
WORKER_GRACE_SECONDS = 1.0  # how long a stopping command waits for its workers to finish a write before SIGKILL

_requested: list[int] = []
_held = 0  # depth of held() blocks: writes under way
_in_worker = False
_owner = os.getpid()  # the process that installed the handlers: a process forked from it is a worker from birth
last_signal: int | None = None  # the first signal recorded by the last stoppable() block: the exit status is 128 + it
_forked_by: int | None = None  # in a process made by os.fork(): its parent's id, as the parent knew it then
_forking: int | None = None


def _remember_the_forker() -> None:  # in the parent, just before each fork
    global _forking
    _forking = os.getpid()


def _remember_the_parent() -> None:  # in the child, just after
    global _forked_by
    _forked_by = _forking


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_remember_the_forker, after_in_child=_remember_the_parent)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    _requested.append(signum)
    if not _held:
        _stop()


def _stop() -> None:
    # A worker has nothing to clean up that its parent does not: the pools see the process gone.
    # One forked a moment ago, before it could call as_worker(), is a worker too: it must not print a traceback.
    if _in_worker or os.getpid() != _owner:
        os._exit(128 + _requested[0])
    raise KeyboardInterrupt


@contextmanager
def stoppable() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are recorded and raise KeyboardInterrupt (after a write under way);
    the previous handlers come back afterwards. Only the main thread can set handlers: elsewhere this does
    nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global last_signal, _owner
    _owner = os.getpid()
    previous = {number: signal.getsignal(number) for number in STOPPING}
    _requested.clear()
    last_signal = None
    for number in previous:
        signal.signal(number, _on_signal)
    unraisable = sys.unraisablehook
    sys.unraisablehook = _quiet_about_stops(unraisable)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        sys.unraisablehook = unraisable
        last_signal = _requested[0] if _requested else None
        _requested.clear()


def _quiet_about_stops(hook: Callable[[sys.UnraisableHookArgs], object]) -> Callable[[sys.UnraisableHookArgs], object]:
    """`hook`, except for the KeyboardInterrupt a stop raises inside a callback Python cannot raise it from (a
    weak reference's, a finaliser's): Python prints those as "Exception ignored", but the stop is recorded and
    acted on at the next check, so there is nothing to say."""

    def quiet(unraisable: sys.UnraisableHookArgs) -> object:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _requested:
            return None
        return hook(unraisable)

    return quiet


@contextmanager
def held() -> Iterator[None]:
    """A write under way: a signal that arrives inside the block is acted on when it ends. Keep such blocks to
    the writing itself (milliseconds): everything that can be prepared first is."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
    if _requested and not _held:
        _stop()


@contextmanager
def shut_down_after(pool: Executor) -> Iterator[None]:
    """Shut a worker pool down when the block ends: after the work under way, or at once when the block is
    stopped (Ctrl-C, SIGTERM), cancelling what has not started; the command then stops the workers themselves
    (stop_children) rather than wait for work nobody wants."""
    stopping = False
    try:
        yield
    except KeyboardInterrupt:
        stopping = True
        raise
    finally:
        pool.shutdown(wait=not stopping, cancel_futures=True)


def requested() -> bool:
    return bool(_requested)


def check() -> None:
    """Raise KeyboardInterrupt if an interrupt was asked for: called before writing anything."""
    if _requested:
        raise KeyboardInterrupt


def exit_status() -> int:
    """The shell's convention for a command stopped by a signal: 128 + its number (130 Ctrl-C, 143 SIGTERM)."""
    return 128 + int(_requested[0] if _requested else last_signal or signal.SIGINT)


def stop_children(grace: float = WORKER_GRACE_SECONDS) -> None:
    """Stop this process's worker processes: SIGTERM (each exits at once, or after the write it is in), then
    SIGKILL for any still there after `grace` seconds (a PDF worker hung inside a C library). The pools would
    otherwise wait for work under way to finish."""
    import multiprocessing

    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    deadline = time.monotonic() + grace
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive():
            child.kill()
            child.join()
    for pid in descendants(os.getpid()):  # helpers not started by multiprocessing (the fork server) and theirs
        if _is_resource_tracker(pid):
            # works for nobody either, but ends by itself once this process has gone; killed, it is started again
            # when the pools' queues are freed, with a warning on stderr ("process died unexpectedly")
            continue
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _is_resource_tracker(pid: int) -> bool:
    """Whether `pid` is multiprocessing's resource tracker (from its command line in /proc)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            return b"multiprocessing.resource_tracker" in stream.read()
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (its children, theirs, …), read from /proc; empty where there is none."""
    parents: dict[int, int] = {}
    for entry in _proc_entries():
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":  # a zombie is already dead: its parent reaps it
                parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        frontier += children
    return found


def _proc_entries() -> list[Any]:
    from pathlib import Path

    proc = Path("/proc")
    return [entry for entry in proc.iterdir() if entry.name.isdigit()] if proc.is_dir() else []


def as_worker(poll_seconds: float = 0.5) -> None:
    """Called first in a worker process: exit on SIGINT or SIGTERM (once a write under way is finished), and as
    soon as the parent is gone.

    On Linux the kernel kills the worker when its parent exits (PR_SET_PDEATHSIG): no thread, so a worker that
    forks a helper of its own (a batch's builder forks figure workers) forks a single-threaded process, as fork
    requires (Python 3.12 and later warn about forking a process with threads). Elsewhere a thread polls the parent's
    id, so that the worker's own work is never interrupted. A parent that was gone before this was called (a busy
    machine can start a worker that late) is noticed: a forked worker knows its parent's id from before the fork,
    and one that was not forked is told by multiprocessing's own sentinel of the process that started it.

    (A PDF worker is forked by the fork server, not by the build: a build stopped with its whole process group
    stops the server too, which could be stopped between forking a worker and telling the build about it. The
    worker then found itself adopted by init before it asked for the kernel's signal, with the build still alive,
    and outlived it, holding the build's standard error open: once in 300 builds stopped at random.)"""
    global _in_worker
    _in_worker = True
    _requested.clear()  # a signal the parent had recorded before forking is the parent's
    for number in STOPPING:
        signal.signal(number, _on_signal)
    parent = os.getppid() if _forked_by is None else _forked_by
    if _killed_with_parent():
        if os.getppid() != parent or _parent_gone():  # the parent was gone before the kernel was asked
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_seconds)
        os._exit(1)

    threading.Thread(target=watch, name="reportgen-parent-watch", daemon=True).start()


def _parent_gone() -> bool:
    """Whether the process that started this one through multiprocessing has exited (False for any other)."""
    import multiprocessing

    started_by = multiprocessing.parent_process()
    return started_by is not None and not started_by.is_alive()


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
