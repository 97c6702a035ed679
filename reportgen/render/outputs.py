"""Writing a build's files so that a failure never leaves a half-written or missing report.

Everything is rendered in memory first; only then is each file written to a temporary name beside its target and
moved over it with os.replace, which is atomic on POSIX. A crash before the moves leaves the previous report; a
crash between two moves leaves each file either old or new, never partial.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from reportgen.errors import UsageError

TEMP_PREFIX = ".reportgen-"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_FILE_MODE = 0o666 & ~_umask()


def output_dir(out_root: Path, stem: str) -> Path:
    """OUT/<stem>, refusing any name that would land elsewhere (a file named "..yaml" has the stem ".")."""
    folder = (out_root / stem).resolve()
    if not stem or stem.startswith(".") or folder.parent != out_root.resolve():
        raise UsageError(f"refusing to write outside {out_root}/: a project file named {stem!r}.yaml has no "
                         "usable output name; rename it")
    return folder


def write_atomically(folder: Path, files: dict[str, bytes]) -> list[Path]:
    """Write every file of `files` (name → bytes) into `folder`; all temporaries are gone afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder)
    # No interrupt check inside: once moving starts, every file is moved (each move takes microseconds).
    staged: list[tuple[Path, Path]] = []
    try:
        for name, data in files.items():
            handle, temporary_name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=f".{name}", dir=folder)
            temporary = Path(temporary_name)
            os.fchmod(handle, _FILE_MODE)  # mkstemp creates 0600; a report is an ordinary file
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            staged.append((temporary, folder / name))
        for temporary, target in staged:
            os.replace(temporary, target)
    finally:
        for temporary, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
    return [target for _, target in staged]


def remove_stale_temporaries(folder: Path) -> None:
    """Temporaries left by a process killed between staging and moving."""
    for stale in folder.glob(f"{TEMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            stale.unlink()
