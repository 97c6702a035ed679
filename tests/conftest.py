from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# No per-example deadline: hypothesis's default 200 ms fails properties on a busy machine (CI runs beside other
# work). Speed is measured in bench/; the tests that promise "refused fast" keep their own generous bounds.
settings.register_profile("reportgen", deadline=None)
settings.load_profile("reportgen")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
INPUTS = ROOT / "inputs"


@pytest.fixture
def write_project(tmp_path: Path):
    """Write project text to a file in a fresh folder and return its path."""

    def write(text: str, name: str = "project.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def make_project(text: str):
    """A Project from YAML text, validated exactly as a file would be."""
    from reportgen.project.loader import load_project_text

    return load_project_text(text, ROOT / "inline.yaml", "inline.yaml").project
