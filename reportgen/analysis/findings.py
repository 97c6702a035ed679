"""Findings: what a reviewer would raise, each with a stable code, a severity, one sentence and a field path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from reportgen.keys import Key

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)


@dataclass(frozen=True)
class Finding:
    severity: Annotated[Severity, Key("how serious")]
    # stable: scripts and `reportgen diff` match on it
    code: Annotated[str, Key("a stable identifier, for example wrong-axis")]
    message: Annotated[str, Key("the finding, with its numbers")]
    # the project-file field it concerns, e.g. "design.axis"; "" for the project as a whole
    path: Annotated[str, Key("the project-file field it is about")]
    section: str = "summary"  # the report section that explains it (an anchor id)
    refutes: str = ""  # memory-model-refuted: the memory error the measured runs refute (page 1's can_start reads it)


def error(code: str, message: str, path: str, section: str) -> Finding:
    return Finding("error", code, message, path, section)


def warning(code: str, message: str, path: str, section: str) -> Finding:
    return Finding("warning", code, message, path, section)


def info(code: str, message: str, path: str, section: str) -> Finding:
    return Finding("info", code, message, path, section)


def ordered(findings: list[Finding]) -> tuple[Finding, ...]:
    """Errors first, then warnings, then notes; stable within a severity."""
    return tuple(sorted(findings, key=lambda f: SEVERITIES.index(f.severity)))
