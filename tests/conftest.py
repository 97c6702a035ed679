from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import settings

# The fast tier (`make check`, REPORTGEN_TIER=fast) leaves out the tests marked slow and tries each property on a
# tenth of its examples; `make test` runs everything at full strength.
FAST = os.environ.get("REPORTGEN_TIER") == "fast"


def examples(full: int) -> int:
    """How many examples a property is tried on: `full` in the whole suite, a tenth (at least 5) in the fast tier."""
    return max(5, full // 10) if FAST else full


# No per-example deadline: hypothesis's default 200 ms fails properties on a busy machine (CI runs beside other
# work). Speed is measured in bench/; the tests that promise "refused fast" keep their own generous bounds.
settings.register_profile("reportgen", deadline=None, max_examples=examples(100))
settings.load_profile("reportgen")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
INPUTS = ROOT / "inputs"

# Where a test reads every example project, the fast tier reads one of each kind: a training job and a service.
REPRESENTATIVE = ("example.yaml", "inference-service.yaml")


def example_projects(names: tuple[str, ...] | None = None) -> list[str]:
    """The example projects a per-project test runs on (file names, sorted): `names` (else every example) in the
    whole suite, only the representative ones among them in the fast tier."""
    every = sorted(names or (path.name for path in INPUTS.glob("*.yaml")))
    return [name for name in every if name in REPRESENTATIVE] if FAST else every


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


def without_word_spans(html: str) -> str:
    """A report's HTML without the spans that keep hyphenated words of table cells whole
    (reportgen.render.typography): for tests that look for a cell's text as written."""
    import re

    return re.sub(r'<span class="word">([^<]*)</span>', r"\1", html)
