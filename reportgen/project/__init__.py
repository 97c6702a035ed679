"""The project file: YAML read with positions, field specs, the dataclasses, units, CSV runs, carbon data, schemas.

Light on purpose: the command line imports reportgen.project.stdio before anything else. `load_project` and its
companions are found here on first use (they live in reportgen.project.loader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reportgen.project.loader import LoadedProject, load_project, load_project_text

__all__ = ["LoadedProject", "load_project", "load_project_text"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from reportgen.project import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'reportgen.project' has no attribute {name!r}")
