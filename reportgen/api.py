"""The Python API, for notebooks: load a project, analyse it, and read every table of the report as a pandas
DataFrame to explore and plot further, without parsing results.json.

    import reportgen
    results = reportgen.analyze(reportgen.load("inputs/example.yaml"))
    results.scaling.to_frame()          # one row per measured node count, the columns of results.json
    results.scaling.knee_nodes          # every field of the typed analysis result
    results.tables()                    # every table, by name ("prediction.sensitivity", "cost.regimes.spot")

pandas is imported here only: `reportgen check` and a build never pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen.analysis import Analysis
from reportgen.project.loader import LoadedProject, load_project
from reportgen.project.model import Project
from reportgen.render import tables

if TYPE_CHECKING:
    import pandas as pd

SECTIONS = ("diagnosis", "checklist", "prediction", "scaling", "cost", "energy", "reliability", "goal",
            "provenance", "decisions", "trade_offs", "findings")


def load(path: str | Path) -> LoadedProject:
    """Read and check a project file (its CSV of runs too); raises reportgen.errors.InputError with every
    located problem, as `reportgen check` prints them."""
    return load_project(Path(path))


def analyze(project: LoadedProject | str | Path) -> Results:
    """Every analysis of a loaded project (or of the project file at a path), as the report computes them."""
    from reportgen.pipeline import analyze_loaded

    loaded = project if isinstance(project, LoadedProject) else load(project)
    analysis, document = analyze_loaded(loaded)
    return Results(loaded, analysis, document)


@dataclass(frozen=True)
class Section:
    """One analysis: its typed result (whose fields read through, `section.knee_nodes`) and its tables."""

    name: str
    result: Any  # the analysis's dataclass, for example reportgen.analysis.scaling.ScalingResult
    data: Any  # the section of results.json

    def __getattr__(self, field: str) -> Any:
        if field.startswith("__"):
            raise AttributeError(field)
        return getattr(self.result, field)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The section's tables by name; the first is the one `to_frame()` returns."""
        return {name: _frame(rows) for name, rows in tables.tables({self.name: self.data}).items()}

    def to_frame(self, table: str | None = None) -> pd.DataFrame:
        """The section's main table (its rows), or the named one ("sensitivity" or "prediction.sensitivity")."""
        import pandas as pd

        found = tables.tables({self.name: self.data})
        if table is None:
            rows = found.get(self.name, next(iter(found.values()), []))
        else:
            name = table if table.startswith(f"{self.name}.") else f"{self.name}.{table}"
            if name not in found:
                raise KeyError(f"{self.name} has no table {table!r}; it has {', '.join(sorted(found)) or 'none'}")
            rows = found[name]
        return _frame(rows) if rows else pd.DataFrame()


class _SectionOf:
    """`results.scaling` and the like: the section named by the attribute."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, results: Results, owner: type | None = None) -> Section | None:
        return results.section(self.name)


@dataclass(frozen=True)
class Results:
    """A project's analyses: one attribute per section (None when the project gives it no input)."""

    loaded: LoadedProject
    analysis: Analysis
    document: dict[str, Any]  # the results.json document, before infinity is written as "inf"

    @property
    def project(self) -> Project:
        return self.loaded.project

    def section(self, name: str) -> Section | None:
        if name not in SECTIONS:
            raise KeyError(f"no section {name!r}; the sections are {', '.join(SECTIONS)}")
        data = self.document[name]
        if data is None:
            return None
        result = self.analysis.decisions if name == "trade_offs" else getattr(self.analysis, name)
        return Section(name, result, data)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report by name, as `build --format csv` writes them."""
        return {name: _frame(rows) for name, rows in tables.tables(self.document).items()}

    diagnosis = _SectionOf()
    checklist = _SectionOf()
    prediction = _SectionOf()
    scaling = _SectionOf()
    cost = _SectionOf()
    energy = _SectionOf()
    reliability = _SectionOf()
    goal = _SectionOf()
    provenance = _SectionOf()
    decisions = _SectionOf()
    trade_offs = _SectionOf()
    findings = _SectionOf()


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_records(rows)
