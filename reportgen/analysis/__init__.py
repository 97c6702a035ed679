"""The pure analysis core: Project → Analysis. No I/O, no plotting, no templates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reportgen.model import Project


@dataclass(frozen=True)
class Analysis:
    """Every analysis of one project; a section whose inputs are absent is None."""

    diagnosis: Any = None
    checklist: Any = None
    prediction: Any = None
    scaling: Any = None
    cost: Any = None
    energy: Any = None
    reliability: Any = None
    decisions: Any = None
    findings: tuple[Any, ...] = field(default_factory=tuple)


def analyze(project: Project) -> Analysis:
    return Analysis()
