"""CodeCarbon's emissions.csv → a measured run's energy, attached to the run of the project's CSV at a node count.

CodeCarbon appends one row per tracked run (`energy_consumed` in kWh, `duration` in s, `emissions` in kg,
`country_iso_code`, `region`, `run_id`). The run used is the last one in the file, or the one named by --run-id;
rows sharing that run_id are the nodes of one job that each ran a tracker, and are summed. CodeCarbon measures only
the machine it runs on, so when fewer rows than nodes were recorded the energy is scaled by nodes / rows, each
unmeasured node assumed to draw as the measured ones did; the comment written above the run says so.

The emissions the file records were computed with the carbon intensity of its own CodeCarbon release and day: they
are kept beside the energy (the `co2_recorded` column), and the report shows them beside its own CO2e, which uses one
intensity for every row. Every value is validated (finite, not negative) before anything is written, and carried at
full precision.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from dataclasses import dataclass
from pathlib import Path

from reportgen import wording
from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import locked
from reportgen.ingest import measure
from reportgen.json_types import JsonRead
from reportgen.project import measurements, units
from reportgen.project.yaml_source import read_text

REQUIRED = ("run_id", "duration", "energy_consumed", "country_iso_code")
MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class TrackedRun:
    run_id: str
    rows: int  # machines that tracked this run
    energy_kwh: float  # summed over the rows
    duration_s: float  # the longest row's
    country: str
    region: str
    file: str
    sha256: str
    emissions_kg: float | None = None  # CodeCarbon's own CO2e, summed over the rows (None: the file has none)

    def energy_at(self, machines: int) -> float:
        """The job's energy on `machines` machines: the tracked machines' sum, scaled to the machines not tracked
        (never to ranks: a single-host job of many ranks is one machine). More machines tracked than the job had
        is refused: their sum is not this run."""
        if self.rows > machines:
            raise UsageError(f"run {self.run_id} has {self.rows} rows in {self.file} (one per tracked machine), more "
                             f"than the {machines} machine{'s' if machines != 1 else ''} of the run: give the run's "
                             "machines (--machines), or name the run with --run-id")
        return self.energy_kwh * machines / self.rows

    def emissions_at(self, machines: int) -> float | None:
        """CodeCarbon's recorded CO2e, scaled as the energy is."""
        return None if self.emissions_kg is None else self.emissions_kg * self.energy_at(machines) / self.energy_kwh


def json_document(run: TrackedRun, nodes: int, machines: int) -> dict[str, object]:
    """What `ingest codecarbon --format json` prints: the values it writes (the same keys), and whence."""
    return {"run_id": run.run_id, "file": run.file, "sha256": run.sha256, "rows": run.rows, "nodes": nodes,
            "machines": machines, "energy_kwh": run.energy_at(machines), "co2_recorded_kg": run.emissions_at(machines),
            "measured_energy_kwh": run.energy_kwh, "duration_s": run.duration_s, "country": run.country,
            "region": run.region}


def read_emissions(path: Path, *, run_id: str | None = None) -> TrackedRun:
    shown = str(path)
    text, data = read_text(path, shown, limit=MAX_BYTES)
    reader = csv.DictReader(io.StringIO(text))
    twice = sorted({name for name in reader.fieldnames or [] if (reader.fieldnames or []).count(name) > 1})
    if twice:  # DictReader would keep the last of them, silently
        raise InputError([Problem(shown, 1, 1, "", f"column {', '.join(twice)} appears twice")])
    missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
    if missing:
        raise InputError([Problem(shown, 1, 1, "", f"not CodeCarbon's emissions.csv: no column {', '.join(missing)}")])
    rows, ends = [], []  # each row, and the line it ends on (a quoted cell may hold line breaks)
    for row in reader:
        rows.append(row)
        ends.append(reader.line_num)
    if not rows:
        raise InputError([Problem(shown, 1, 1, "", "no tracked run: the file has a header only")])
    chosen = run_id if run_id is not None else rows[-1]["run_id"]
    picked = [(number, row) for number, row in zip(ends, rows, strict=True) if row["run_id"] == chosen]
    if not picked:
        known = ", ".join(dict.fromkeys(row["run_id"] for row in rows))
        raise InputError([Problem(shown, 1, 1, "", f"no run {chosen!r}; the file has {known}")])
    energy = duration = 0.0
    emissions: float | None = 0.0
    columns = list(reader.fieldnames or [])
    lines = text.splitlines()
    for number, row in picked:
        cell = Cell(shown, number, lines[number - 1] if number <= len(lines) else "", columns)
        kwh = _value(row, "energy_consumed", cell, KWH_J, positive=True)  # a run that drew nothing was not tracked
        seconds = _value(row, "duration", cell, 1.0)
        recorded = _value(row, "emissions", cell, 1.0) \
            if (row.get("emissions") or "").strip() else None
        energy += kwh
        duration = max(duration, seconds)
        emissions = None if recorded is None or emissions is None else emissions + recorded
    first = picked[0][1]
    return TrackedRun(chosen, len(picked), energy, duration, first["country_iso_code"], first.get("region") or "",
                      path.name, hashlib.sha256(data).hexdigest(), emissions)


@dataclass(frozen=True)
class Cell:
    """Where a row's values are: the file, the line the row ends on, that line's text and the file's columns."""

    shown: str
    line: int
    text: str
    columns: list[str]

    def column_of(self, name: str) -> int:
        """The 1-based column of the named cell on the row's line (1 when the line holds quoted cells, whose
        commas do not separate)."""
        if name not in self.columns or '"' in self.text:
            return 1
        cells = self.text.split(",")
        return 1 + sum(len(cell) + 1 for cell in cells[:self.columns.index(name)])


KWH_J = 3.6e6


def _value(row: JsonRead, name: str, cell: Cell, si_factor: float, *, positive: bool = False) -> float:
    """A number from a row that the project's CSV can hold (zero or more, more than zero when `positive`, within
    the project's range once in SI units: `si_factor` per unit of the column), else a located error at its cell."""
    text = (row.get(name) or "").strip()
    # as CodeCarbon writes numbers (pandas' repr): float() alone would also take "1_000", "infinity" or "١٢"
    value = float(text) if units.is_ascii_number(text) else math.nan
    if not (units.in_range(value * si_factor) and (value > 0 if positive else value >= 0)):
        wanted = "more than zero" if positive else "zero or more"
        raise InputError([Problem(cell.shown, cell.line, cell.column_of(name), "", f"{name} must be a number, "
                                  f"{wanted}, {units.RANGE_TEXT}, got {text!r}")])
    return value


def attach_energy(csv_path: Path, run: TrackedRun, nodes: int, *, machines: int, replace: bool,
                  time_unit_s: float | None = None) -> float:
    """Write the run's energy (kWh) into the CSV's row at `nodes` (the last one, when the scale has repeats: the run
    just recorded), with a provenance comment above it, atomically. The row must exist; an energy already there is
    kept unless replaced. Returns the energy written."""
    with locked(csv_path.parent):  # read, check and replace as one step: concurrent writers lose no row
        return _attach(csv_path, run, nodes, machines=machines, replace=replace, time_unit_s=time_unit_s)


def _attach(csv_path: Path, run: TrackedRun, nodes: int, *, machines: int, replace: bool,
            time_unit_s: float | None) -> float:
    lines, header = measure.csv_lines(csv_path)
    rows = measurements.rows_at(lines, header, nodes) if header is not None else []
    if header is None or not rows:
        raise InputError([Problem(csv_path.name, 1, 1, "", f"no run at {nodes} nodes to attach the energy to; "
                                  "record the run first (measure, ingest trace, or by hand)")])
    lines, energy_unit = measure.with_column(lines, header, "energy", "kWh")
    recorded = run.emissions_at(machines)
    lines, mass_unit = measure.with_column(lines, header, "co2_recorded", "kg") if recorded is not None \
        else (lines, "kg")
    names = measurements.column_names(lines[header])
    row_index = rows[-1]
    row_cells = [cell for cell, _ in measurements.split_cells(lines[row_index])]
    position = names.index("energy")
    if row_cells[position] and not replace:
        raise InputError([Problem(csv_path.name, row_index + 1, 1, "", f"the run at {wording.nodes(nodes)} already "
                                  "has an energy; use --replace to replace it")])
    energy_kwh = run.energy_at(machines)
    row_cells[position] = measure.number_text(energy_kwh * 3.6e6 / units.parse_unit(energy_unit, units.ENERGY))
    if recorded is not None:
        row_cells[names.index("co2_recorded")] = measure.number_text(recorded / units.parse_unit(mass_unit,
                                                                                                 units.MASS))
    scaled = (f"; {run.rows} machine(s) tracked, scaled to {machines} machines assuming each draws the same"
              if machines > run.rows else "")
    emitted = f", {run.emissions_kg!r} kg CO2e recorded by CodeCarbon" if run.emissions_kg is not None else ""
    comment = (f"{measure.COMMENT}ingest codecarbon: {run.file} sha256 {run.sha256}, run {run.run_id}, "
               f"{run.energy_kwh!r} kWh measured{emitted}{scaled}")
    lines[row_index] = ",".join(row_cells)
    above = row_index - 1
    if replace and above > header and lines[above].startswith(f"{measure.COMMENT}ingest codecarbon:"):
        lines[above] = comment  # the replaced energy's provenance goes with it
    else:
        lines.insert(row_index, comment)
    measure.write_lines(csv_path, lines, time_unit_s=time_unit_s)
    return energy_kwh
