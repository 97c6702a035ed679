"""What the operating system lends a command, and its refusals said in one line.

A build holds open files for its figure workers, the PDF workers and their fork server, the pipes between them and
the modules it imports as it goes. Under a small limit (`ulimit -n 16`) one of them fails midway: in a worker
process, whose traceback reached the terminal, or in the fork server, which printed its own. So the limit is looked
at before any work, and raised where the system allows it; an OSError a build meets later is said in one line.
"""

from __future__ import annotations

import errno
import os

from reportgen.errors import OutputError

# What a build needs at least: measured, a one-project build with a PDF needs about 20 descriptors, and a batch
# (-j) a few more per worker; the margin keeps a limit that passes this from failing midway
MIN_OPEN_FILES = 64


def ensure_open_files(needed: int = MIN_OPEN_FILES) -> None:
    """Raise the soft limit on open files to `needed` where it is lower and the hard limit allows it (what the
    shell's `ulimit -S -n` set, a process may raise up to `ulimit -H -n`); else refuse with an OutputError, exit 1,
    before anything is read or written, so the previous outputs stay as they were."""
    try:
        import resource
    except ImportError:  # not a Unix: no such limit to read
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if _at_least(soft, needed, resource.RLIM_INFINITY):
        return
    if _at_least(hard, needed, resource.RLIM_INFINITY):
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
        return
    raise OutputError(f"this process may open only {hard} files at a time (ulimit -n), and a build needs at least "
                      f"{needed}: raise the limit (ulimit -n {needed}) and run it again")


def _at_least(limit: int, needed: int, infinite: int) -> bool:
    return limit == infinite or limit >= needed


def os_failure(error: OSError) -> str:
    """An operating-system error in words, for one line: the file it names (and the second of a rename), else the
    system's reason with its code (EMFILE), which names the resource that ran out."""
    reason = error.strerror or str(error)
    if error.filename is not None:
        second = f" to {os.fsdecode(error.filename2)}" if error.filename2 is not None else ""
        return f"cannot use {os.fsdecode(error.filename)}{second}: {reason}"
    code = errno.errorcode.get(error.errno or 0)
    return f"{reason}{f' ({code})' if code else ''}"
