"""A content-addressed cache of figures' SVG: the key is a hash of exactly what a figure is drawn from.

A figure's key covers its frame, its drawing function, its arguments (pickled) and the source of the figure modules,
so that changing one measurement re-draws only the figures that read it, and changing the drawing code re-draws them
all. Entries live in memory (a warm `watch` process) and on disk under OUT/.cache/figures (repeated `build` calls).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen.errors import OutputError
from reportgen.files import TEMP_PREFIX, open_regular, replace_file

if TYPE_CHECKING:
    from reportgen.figures.jobs import FigureJob

MAX_DISK_ENTRIES = 400  # about 10 MB of SVG; the oldest entries go first


@cache
def code_fingerprint() -> str:
    """A hash of the figure modules' source: a change to how figures are drawn invalidates every entry."""
    from reportgen.version import __version__

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def job_key(job: FigureJob) -> str:
    payload = (code_fingerprint(), job.frame, job.draw.__module__, job.draw.__qualname__, job.args)
    return hashlib.sha256(pickle.dumps(payload, protocol=5)).hexdigest()


class FigureCache:
    """SVG by job hash; `folder` None keeps them in memory only. On disk each entry is a plain SVG file: reading
    one back runs no code (a pickle would)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._memory: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        """The SVG cached under `key`, or None."""
        if key in self._memory:
            return self._memory[key]
        if self.folder is None:
            return None
        try:
            with open_regular(self.folder / f"{key}.svg") as stream:
                svg = stream.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        self._memory[key] = svg
        return svg

    def put(self, key: str, svg: str) -> None:
        self._memory[key] = svg
        if self.folder is None:
            return
        with contextlib.suppress(OSError, OutputError):  # a cache that cannot be written only costs time
            self.folder.mkdir(parents=True, exist_ok=True)
            replace_file(self.folder / f"{key}.svg", svg.encode("utf-8"), sync=False)
            self._prune()

    def _prune(self) -> None:
        assert self.folder is not None
        entries = sorted((p for p in self.folder.glob("*.svg") if not p.name.startswith(TEMP_PREFIX)),
                         key=lambda p: p.stat().st_mtime)
        for stale in [*entries[:-MAX_DISK_ENTRIES], *self.folder.glob("*.pickle")]:  # .pickle: older reportgens
            with contextlib.suppress(OSError):
                stale.unlink()
