"""The Python API, for notebooks: load a project, analyse it, and read every table of the report as a pandas
DataFrame to explore and plot further, without parsing results.json.

    import reportgen
    results = reportgen.analyze(reportgen.load("inputs/example.yaml"))
    results                             # one line: the project, its verdict, its sections (a table in Jupyter)
    results.scaling.to_frame()          # one row per measured node count, the columns of results.json
    results.scaling.knee_nodes          # every field of the typed analysis result
    results.tables                      # every table, by name ("prediction.sensitivity", "cost.regimes.spot")
    reportgen.build("inputs/example.yaml", "build", ["html", "json"])   # the report itself, as `reportgen build`

The sections are those of reportgen.analysis.RESULTS_SECTIONS, by the same names as in results.json. Money columns
carry the project's currency in their name in a DataFrame (`cost [EUR]`), and every other unit in brackets the same way
(`time [s]`, `energy [kWh]`); an interval is two float columns (`time [s] low`, `time [s] high`, NaN without one).
pandas is imported here only: `reportgen check` and a build never pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen.analysis import BY_KEY, Analysis
from reportgen.formats import FORMATS, PAPERS
from reportgen.json_types import JsonObject, JsonRead
from reportgen.keys import CURRENCY, with_unit
from reportgen.project.loader import LoadedProject, load_project
from reportgen.project.model import Project
from reportgen.render import tables as document_tables
from reportgen.render.results_schema import keys_in

if TYPE_CHECKING:
    import pandas as pd

SECTION_NAMES = tuple(BY_KEY)
# Keys of results.json that hold money, in the project's currency (declared so: reportgen.keys.money); a DataFrame
# names the currency beside them.
MONEY = frozenset(name for section in BY_KEY.values() for name, key in keys_in(section.type) if key.unit == CURRENCY)
HTML_ROWS = 20  # rows a section shows in a notebook before it says how many more there are


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


def build(project: LoadedProject | str | Path, out: str | Path = "build",
          formats: tuple[str, ...] | list[str] = ("html", "pdf", "json"), *, paper: str = "a4") -> list[Path]:
    """Build the report of a project (a loaded one, or the file at a path) into OUT/<file stem>/, as
    `reportgen build` does, and return the files written; a failed build leaves the previous report intact."""
    from reportgen.pipeline import BuildOptions
    from reportgen.pipeline import build as build_project

    unknown = [name for name in formats if name not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats are {', '.join(FORMATS)}, got {list(formats)}")
    if paper not in PAPERS:  # the command line's choices: an unknown size laid the PDF out on A4 silently
        raise ValueError(f"paper is {' or '.join(PAPERS)}, got {paper!r}")
    source = project if isinstance(project, LoadedProject) else Path(project)  # a loaded project as it was loaded
    return build_project(source, BuildOptions(out_root=Path(out), formats=tuple(formats), paper=paper))


@dataclass(frozen=True, repr=False)
class Section:
    """One analysis: its typed result (whose fields read through, `section.knee_nodes`) and its tables."""

    name: str
    result: Any  # the analysis's dataclass, for example reportgen.analysis.measured.scaling.ScalingResult
    data: Any  # the section of results.json
    currency: str | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result, name)

    def __dir__(self) -> list[str]:
        own = ["name", "result", "data", "tables", "to_frame"]
        fields = getattr(self.result, "__dataclass_fields__", {})
        return sorted({*own, *fields})

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The section's tables by name; the first is the one `to_frame()` returns."""
        found = document_tables.tables({self.name: self.data})
        return {name: _frame(rows, self.currency) for name, rows in found.items()}

    def to_frame(self, table: str | None = None) -> pd.DataFrame:
        """The section's main table (its rows), or the named one ("sensitivity" or "prediction.sensitivity")."""
        import pandas as pd

        found = self.tables
        if table is None:
            return found.get(self.name, next(iter(found.values()), pd.DataFrame()))
        name = table if table.startswith(f"{self.name}.") else f"{self.name}.{table}"
        if name not in found:
            raise KeyError(f"{self.name} has no table {table!r}; it has {', '.join(sorted(found)) or 'none'}")
        return found[name]

    @property
    def sentences(self) -> dict[str, str]:
        """The section's text values by key (page 1's verdict, gap, next action): what a section without rows says."""
        if not isinstance(self.data, dict):
            return {}
        found = {key: value for key, value in self.data.items() if isinstance(value, str) and value}
        found |= {f"{key}.text": value["text"] for key, value in self.data.items()
                  if isinstance(value, dict) and isinstance(value.get("text"), str) and value["text"]}
        return found

    def __repr__(self) -> str:
        if self.sentences and (not self.tables or self.name == "summary"):  # page 1: its verdict, then its tables
            first = next(iter(self.sentences.values()))
            tables = f"; tables: {', '.join(self.tables)}" if self.tables else ""
            return f"<reportgen section {self.name}: {_clipped(first)}{tables}>"
        names = ", ".join(self.tables) or "none"
        return f"<reportgen section {self.name}: {len(self.to_frame())} rows; tables: {names}>"

    def _repr_html_(self) -> str:
        if not self.tables or (self.sentences and self.name == "summary"):  # page 1's sentences, then its tables
            lines = "".join(f"<dt>{escape(key)}</dt><dd>{escape(text)}</dd>" for key, text in self.sentences.items())
            tables = f"<p>Tables: <code>{escape(', '.join(self.tables))}</code></p>" if self.tables else ""
            return f"<p><b>{escape(self.name)}</b></p><dl>{lines}</dl>{tables}"
        frame = self.to_frame()
        more = len(frame) - HTML_ROWS
        tail = f"<p>… and {more} more rows: <code>.to_frame()</code> has them all.</p>" if more > 0 else ""
        return (f"<p><b>{escape(self.name)}</b> ({len(frame)} rows; tables: {escape(', '.join(self.tables))})</p>"
                f"{frame.head(HTML_ROWS).to_html(index=False)}{tail}")


@dataclass(frozen=True, repr=False)
class Results:
    """A project's analyses: one attribute per section (None when the project gives it no input), named as in
    results.json (`results.scaling`, `results.cost`, ...)."""

    loaded: LoadedProject
    analysis: Analysis
    document: JsonObject  # the results.json document, before infinity is written as "inf"

    @property
    def project(self) -> Project:
        return self.loaded.project

    def section(self, name: str) -> Section | None:
        if name not in BY_KEY:
            raise KeyError(f"no section {name!r}; the sections are {', '.join(SECTION_NAMES)}")
        data = self.document[name]
        if data is None:
            return None
        return Section(name, BY_KEY[name].result(self.analysis), data, self.project.currency)

    def __getattr__(self, name: str) -> Section | None:
        if name in BY_KEY:
            return self.section(name)
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}; the sections are "
                             f"{', '.join(SECTION_NAMES)}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *SECTION_NAMES})

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report by name, as `build --format csv` writes them."""
        currency = self.project.currency
        return {name: _frame(rows, currency) for name, rows in document_tables.tables(self.document).items()}

    @property
    def present(self) -> tuple[str, ...]:
        """The sections the project gives input to."""
        return tuple(name for name in SECTION_NAMES if self.document[name] is not None)

    def __repr__(self) -> str:
        verdict = self.analysis.summary.verdict if self.analysis.summary else "no verdict"
        return (f"<reportgen results of {self.project.project.title!r}: {_clipped(verdict)} "
                f"Sections: {', '.join(self.present)}>")

    def _repr_html_(self) -> str:
        summary = self.analysis.summary
        lines = [f"<h4>{escape(self.project.project.title)}</h4>"]
        if summary:
            lines.append(f"<p>{escape(summary.verdict)}</p><p><i>Next:</i> {escape(summary.next_action.text)}</p>")
        rows = "".join(f"<tr><td><code>results.{name}</code></td><td>{escape(_shape(self.document[name]))}</td></tr>"
                       for name in self.present)
        return "\n".join([*lines, f"<table><tr><th>section</th><th>holds</th></tr>{rows}</table>"])


def _clipped(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _shape(data: Any) -> str:
    """What a section of results.json holds, in a few words."""
    if isinstance(data, list):
        return f"{len(data)} rows"
    rows = data.get("rows") if isinstance(data, dict) else None
    return f"{len(rows)} rows and {len(data) - 1} values" if isinstance(rows, list) else f"{len(data)} values"


def column_name(key: str, currency: str | None) -> str:
    """A DataFrame's name for a results.json column, in one convention: the unit in brackets after the quantity
    (`time [s]`, `energy [kWh]`, `co2 [kg]`), money with the project's currency (`cost [EUR]`); a nested key keeps its
    path (`limits.max_time [s]`)."""
    path, _, last = key.rpartition(".")
    prefix = f"{path}." if path else ""
    if currency and last in MONEY:
        return f"{prefix}{with_unit(last.removesuffix('_ci'), currency)}"
    return f"{prefix}{with_unit(last)}"


def _frame(rows: list[JsonRead], currency: str | None) -> pd.DataFrame:
    """The rows as a DataFrame in the column convention above; an interval ([low, high] or null) becomes two float
    columns, `… low` and `… high`, NaN where a scale has none."""
    import pandas as pd

    frame = pd.DataFrame.from_records(rows)
    columns: JsonRead = {}
    for key in frame.columns:
        if key.endswith("_ci"):
            name = column_name(key.removesuffix("_ci"), currency) if key.rsplit(".", 1)[-1] not in MONEY \
                else column_name(key, currency)
            bounds = [value if isinstance(value, list | tuple) and len(value) == 2 else (None, None)
                      for value in frame[key]]
            columns[f"{name} low"] = pd.to_numeric(pd.Series([b[0] for b in bounds]), errors="coerce")
            columns[f"{name} high"] = pd.to_numeric(pd.Series([b[1] for b in bounds]), errors="coerce")
        else:
            columns[column_name(key, currency)] = frame[key]
    return pd.DataFrame(columns, index=frame.index) if columns else frame


@dataclass(frozen=True)
class History:
    """`reportgen.history(path)`: every git revision of a project, as history.json holds it, with its timeline and
    its prediction ledger as DataFrames (methods.md#a-projects-history)."""

    document: JsonRead

    @property
    def timeline(self) -> pd.DataFrame:
        """One row per revision and price regime: page 1's verdict and its time and cost per run at the plan."""
        import pandas as pd

        rows = []
        for revision in self.document["revisions"]:
            base = {"revision": revision["label"], "date": revision["date"], "built": revision["built"],
                    "met_at_plan": revision["met_at_plan"], "state": revision["state"]}
            plan = revision["at_plan"] or [{"regime": None, "time_s": None, "cost": None, "met": None}]
            rows += [{**base, "regime": row["regime"], "time [s]": row["time_s"], "cost": row["cost"],
                      "met": row["met"]} for row in plan]
        return pd.DataFrame(rows)

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per prediction: the scale, the model, when predicted and measured, its error and status."""
        import pandas as pd

        return pd.DataFrame(self.document["ledger"], columns=["nodes", "model", "predicted_in", "measured_in",
                                                              "predicted_s", "measured_s", "rel_error", "inside",
                                                              "status"])


def history(path: str | Path, *, rev: str | None = None, last: int = 100,
            cache: str | Path | None = None, jobs: int | None = None) -> History:
    """The history of a project file in a git working tree: `rev` a range A..B, `last` the newest revisions kept,
    `cache` a folder where each revision's analysis is kept (None: none), `jobs` the revisions analysed at a time in
    worker processes (None: one per core, at most 4)."""
    from reportgen.project_history import HistoryOptions
    from reportgen.project_history import history as walk

    return History(walk(Path(path), HistoryOptions(rev=rev, last=last, cache=Path(cache) if cache else None,
                                                   jobs=jobs)))
