"""Standard input as a project file: "-" names it on the command line (`reportgen check -`, `build -`).

Light on purpose (the command line imports it before anything else): standard input is read once and kept, so that
every reader of "-" in this process, and the workers forked after the first read, get the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

STDIN = Path("-")  # a project file named "-" is read from standard input
MAX_FILE_BYTES = 1 << 20  # a project file's size limit, read from a path or from here (a hand-written one is a few kB)
_stdin: bytes | None = None


def stdin_bytes(limit: int = MAX_FILE_BYTES) -> bytes:
    """Standard input, read once (at most limit + 1 bytes, so that a larger input is seen to be too large)."""
    global _stdin
    if _stdin is None:
        _stdin = sys.stdin.buffer.read(limit + 1)
    return _stdin


def shown_name(path: Path) -> str:
    """How a project file is named in messages: "<stdin>" for standard input. A name that is not UTF-8 keeps its
    bytes (a message escapes them, "\\udcff"); documents write it with files.shown_path."""
    return "<stdin>" if path == STDIN else str(path)


def output_name(project: Path) -> str:
    """The folder name of a project's outputs: the file's stem, "stdin" for a project read from standard input."""
    return "stdin" if project == STDIN else project.stem
