"""CodeCarbon's emissions.csv → a measured run's energy, attached to the run of the project's CSV at a node count.

CodeCarbon appends one row per tracked run (`energy_consumed` in kWh, `duration` in s, `country_iso_code`,
`region`, `run_id`). The run used is the last one in the file, or the one named by --run-id; rows sharing that
run_id are the nodes of one job that each ran a tracker, and are summed. CodeCarbon measures only the machine it
runs on, so when fewer rows than nodes were recorded the energy is scaled by nodes / rows, each unmeasured node
assumed to draw as the measured ones did; the comment written above the run says so.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from reportgen.errors import InputError, Problem
from reportgen.files import locked
from reportgen.ingest import measure
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

    def energy_at(self, nodes: int) -> float:
        """The job's energy at `nodes`: the measured machines' sum, scaled to the nodes not measured."""
        return self.energy_kwh * max(nodes, self.rows) / self.rows


def read_emissions(path: Path, *, run_id: str | None = None) -> TrackedRun:
    shown = str(path)
    text, data = read_text(path, shown, limit=MAX_BYTES)
    reader = csv.DictReader(io.StringIO(text))
    missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
    if missing:
        raise InputError([Problem(shown, 1, 1, "", f"not CodeCarbon's emissions.csv: no column {', '.join(missing)}")])
    rows = list(reader)
    if not rows:
        raise InputError([Problem(shown, 1, 1, "", "no tracked run: the file has a header only")])
    chosen = run_id if run_id is not None else rows[-1]["run_id"]
    picked = [(number, row) for number, row in enumerate(rows, start=2) if row["run_id"] == chosen]
    if not picked:
        known = ", ".join(dict.fromkeys(row["run_id"] for row in rows))
        raise InputError([Problem(shown, 1, 1, "", f"no run {chosen!r}; the file has {known}")])
    energy = duration = 0.0
    for number, row in picked:
        try:
            kwh, seconds = float(row["energy_consumed"]), float(row["duration"])
        except ValueError:
            raise InputError([Problem(shown, number, 1, "", "energy_consumed and duration must be numbers, got "
                                      f"{row['energy_consumed']!r} and {row['duration']!r}")]) from None
        if kwh < 0 or seconds < 0:
            raise InputError([Problem(shown, number, 1, "", "a negative energy or duration")])
        energy += kwh
        duration = max(duration, seconds)
    first = picked[0][1]
    return TrackedRun(chosen, len(picked), energy, duration, first["country_iso_code"], first.get("region") or "",
                      path.name, hashlib.sha256(data).hexdigest())


def attach_energy(csv_path: Path, run: TrackedRun, nodes: int, *, replace: bool,
                  time_unit_s: float | None = None) -> float:
    """Write the run's energy (kWh) into the CSV's row at `nodes` (the last one, when the scale has repeats: the run
    just recorded), with a provenance comment above it, atomically. The row must exist; an energy already there is
    kept unless replaced. Returns the energy written."""
    with locked(csv_path.parent):  # read, check and replace as one step: concurrent writers lose no row
        return _attach(csv_path, run, nodes, replace=replace, time_unit_s=time_unit_s)


def _attach(csv_path: Path, run: TrackedRun, nodes: int, *, replace: bool, time_unit_s: float | None) -> float:
    lines, header = measure.csv_lines(csv_path)
    rows = measure.rows_at(lines, header, nodes) if header is not None else []
    if header is None or not rows:
        raise InputError([Problem(csv_path.name, 1, 1, "", f"no run at {nodes} nodes to attach the energy to; "
                                  "record the run first (measure, ingest trace, or by hand)")])
    cells = [cell for cell, _ in measurements.split_cells(lines[header])]
    names = [column[0] if (column := measurements.header_column(cell)) else "" for cell in cells]
    if "energy" not in names:  # a CSV of runs without energy gains the column, empty for the other runs
        lines = [line + ",energy [kWh]" if i == header else
                 line + "," if i > header and measurements.is_data_line(line) else line
                 for i, line in enumerate(lines)]
        names.append("energy")
        unit = "kWh"
    else:
        read = measurements.header_column(cells[names.index("energy")])
        unit = (read[1] if read else None) or "kWh"
    row_index = rows[-1]
    row_cells = [cell for cell, _ in measurements.split_cells(lines[row_index])]
    position = names.index("energy")
    if row_cells[position] and not replace:
        raise InputError([Problem(csv_path.name, row_index + 1, 1, "", f"the run at {nodes} nodes already has an "
                                  "energy; use --replace to replace it")])
    energy_kwh = run.energy_at(nodes)
    row_cells[position] = measure.number_text(energy_kwh * 3.6e6 / units.parse_unit(unit, units.ENERGY))
    scaled = (f"; {run.rows} machine(s) tracked, scaled to {nodes} nodes assuming each draws the same"
              if nodes > run.rows else "")
    comment = (f"{measure.COMMENT}ingest codecarbon: {run.file} sha256 {run.sha256}, run {run.run_id}, "
               f"{run.energy_kwh:.6g} kWh measured{scaled}")
    lines[row_index] = ",".join(row_cells)
    above = row_index - 1
    if replace and above > header and lines[above].startswith(f"{measure.COMMENT}ingest codecarbon:"):
        lines[above] = comment  # the replaced energy's provenance goes with it
    else:
        lines.insert(row_index, comment)
    measure.write_lines(csv_path, lines, time_unit_s=time_unit_s)
    return energy_kwh
