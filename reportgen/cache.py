"""A content-addressed cache of figures: the key is a hash of exactly what a figure is drawn from.

A figure's key covers its drawing function, its arguments (pickled) and the source of the figure modules, so that
changing one measurement re-draws only the figures that read it, and changing the drawing code re-draws them all.
Entries live in memory (a warm `watch` process) and on disk under OUT/.cache/figures (repeated `build` calls).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reportgen.figures import FigureJob, FigureSVG

MAX_DISK_ENTRIES = 400  # about 10 MB of SVG; the oldest entries go first


@cache
def code_fingerprint() -> str:
    """A hash of the figure modules' source: a change to how figures are drawn invalidates every entry."""
    from reportgen import __version__

    digest = hashlib.sha256(__version__.encode())
    for path in sorted((Path(__file__).parent / "figures").glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def job_key(job: FigureJob) -> str:
    payload = (code_fingerprint(), job.key, job.draw.__module__, job.draw.__qualname__, job.args)
    return hashlib.sha256(pickle.dumps(payload, protocol=5)).hexdigest()


class FigureCache:
    """Figures by job hash; `folder` None keeps them in memory only."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._memory: dict[str, FigureSVG | None] = {}

    def get(self, key: str) -> tuple[bool, FigureSVG | None]:
        if key in self._memory:
            return True, self._memory[key]
        if self.folder is not None:
            path = self.folder / f"{key}.pickle"
            try:
                with path.open("rb") as handle:
                    value = pickle.load(handle)
            except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
                pass
            else:
                self._memory[key] = value
                return True, value
        return False, None

    def put(self, key: str, value: FigureSVG | None) -> None:
        self._memory[key] = value
        if self.folder is None:
            return
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(handle, "wb") as stream:
                pickle.dump(value, stream, protocol=5)
            os.replace(temporary, self.folder / f"{key}.pickle")
            self._prune()

    def _prune(self) -> None:
        assert self.folder is not None
        entries = sorted(self.folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime)
        for stale in entries[:-MAX_DISK_ENTRIES]:
            with contextlib.suppress(OSError):
                stale.unlink()
