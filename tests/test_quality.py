"""The code stays as the documentation promises: ruff and mypy (strict) clean, every command documented."""

from __future__ import annotations

import subprocess
import sys

from reportgen.cli import _parser
from tests.conftest import ROOT


def tool(name: str) -> list[str]:
    return [sys.executable, "-m", name]


def test_ruff_is_clean() -> None:
    result = subprocess.run([*tool("ruff"), "check", "reportgen", "tests", "bench"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_mypy_strict_is_clean() -> None:
    result = subprocess.run([*tool("mypy"), "reportgen"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_every_command_is_on_the_commands_page() -> None:
    page = (ROOT / "docs" / "commands.md").read_text()
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in commands:
        assert f"reportgen {name}" in page, f"docs/commands.md lacks `reportgen {name}`"
