"""The project's own exceptions and the exit codes the command line maps them to.

The library raises these; only `reportgen.commands.cli` turns them into messages and exit statuses, so that a real bug
(anything else) keeps its traceback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

# Controls, and the invisible format characters that reorder or hide text on a terminal: bidi embeddings,
# overrides and isolates (the "Trojan Source" characters), zero-width spaces and joiners, line and paragraph
# separators, the byte-order mark, interlinear annotation marks.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")


def printable(text: str) -> str:
    """Text with its control characters written as escapes (\\x1b): a message quotes what the user wrote, and a
    terminal must never act on an escape sequence inside it."""
    return escaped(text, _CONTROL)


def escaped(text: str, characters: re.Pattern[str]) -> str:
    """Text with each of `characters` written as its Python escape (\\u2028), so that it shows what it held."""
    return characters.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # anything that is not the user's input: a failed render, a worse diff with --exit-code
    INPUT = 2  # bad input or bad usage: the user can fix it


@dataclass(frozen=True)
class Problem:
    """One located problem in an input file: what an editor can jump to."""

    file: str
    line: int  # 1-based
    column: int  # 1-based
    path: str  # the field path, e.g. "hardware.peak_compute"; "" for the document itself
    message: str

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return printable(f"{self.file}:{self.line}:{self.column}: error: {where}{self.message}")


class ReportgenError(Exception):
    """Base of every error the command line reports without a traceback."""

    exit_code: ExitCode = ExitCode.FAILURE


class InputError(ReportgenError):
    """All problems found in one input, reported together."""

    exit_code = ExitCode.INPUT

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column, p.path))
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(ReportgenError):
    """A command line that cannot be carried out as written (a missing file, a bad option value)."""

    exit_code = ExitCode.INPUT


class OutputError(ReportgenError):
    """An output that cannot be written: a folder without permission, a full disk. The environment's fault, not
    the input's (exit 1); the previous outputs are as they were."""

    exit_code = ExitCode.FAILURE


class RenderError(ReportgenError):
    """A report that could not be rendered: a figure the PDF renderer cannot draw or place, a PDF worker that
    died. Not the input's fault as far as reportgen can tell (exit 1); the previous outputs are as they were."""

    exit_code = ExitCode.FAILURE
