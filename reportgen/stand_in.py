"""One attribute of another library's module replaced while a block runs, and put back however it ends: how
reportgen imports WeasyPrint without a compiler run per missing library (render/weasyprint_import.py) and matplotlib
without its docstrings' property tables (figures/__init__.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType


@contextmanager
def standing_in(module: ModuleType, name: str, stand_in: object) -> Iterator[None]:
    """`module.name` is `stand_in` while the block runs."""
    original = getattr(module, name)
    setattr(module, name, stand_in)
    try:
        yield
    finally:
        setattr(module, name, original)
