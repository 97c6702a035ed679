from __future__ import annotations

import contextlib
import os
import signal
import time
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


def loaded_after(arguments: list[str], modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh process has imported after running `reportgen ARGUMENTS` in process."""
    import ast
    import subprocess
    import sys

    code = (f"import sys; from reportgen.commands.cli import main; main({arguments!r}); "
            f"print([m for m in {modules!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return list(ast.literal_eval(result.stdout.strip().splitlines()[-1]))


def group_members(group: int) -> set[int]:
    """Live processes of a process group, read from /proc (field 5 of /proc/PID/stat; zombies left out)."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == group and fields[0] != "Z":
                    members.add(int(entry.name))
    return members


def outliving(group: int, wait: float) -> set[int]:
    """The processes of a group still there after `wait` seconds, killed so that they do not outlive the test."""
    deadline = time.monotonic() + wait
    while group_members(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = group_members(group)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left
