"""reportgen: the evidence behind a distributed-AI system design, turned into a report a reviewer would accept.

The Python API (`reportgen.load`, `reportgen.analyze`, `reportgen.build`, `reportgen.history`) lives in
reportgen.api and is imported on first use, so that the command line does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reportgen.version import __version__

__all__ = ["History", "Results", "__version__", "analyze", "build", "history", "load"]

if TYPE_CHECKING:
    from reportgen.api import History, Results, analyze, build, history, load


def __dir__() -> list[str]:
    """What tab completion offers: the API, not this module's imports."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    if name in ("load", "analyze", "build", "history", "History", "Results"):
        from reportgen import api

        return getattr(api, name)
    raise AttributeError(f"module 'reportgen' has no attribute {name!r}")
