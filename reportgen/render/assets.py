"""Where the bundled templates live, in a source checkout and in an installed wheel alike."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def templates_dir() -> Path:
    """The wheel ships templates/ inside the package; a source checkout keeps it at the top level."""
    package = Path(__file__).resolve().parent.parent  # reportgen/
    packaged = package / "templates"
    if packaged.is_dir():
        return packaged
    checkout = package.parent / "templates"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("reportgen's templates are missing from this installation")
