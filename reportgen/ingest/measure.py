"""`reportgen measure`: run a command under CodeCarbon's offline tracker and append its run to the project's CSV.

The command's exit status passes through; a failed or interrupted run appends nothing; the CSV is replaced
atomically (written beside, then renamed), so it is either as it was or has exactly one more row. A command
reports its compute / communication / idle [/ io] split, in seconds, by writing JSON such as
{"compute": 812.0, "communication": 95.5, "idle": 40.1} to the file named by $REPORTGEN_SPLIT_FILE.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reportgen import interrupts, wording
from reportgen.errors import InputError, UsageError
from reportgen.files import locked, open_regular, replace_file, why_unreadable
from reportgen.ingest import strict_json
from reportgen.project import measurements, units
from reportgen.project.loader import LoadedProject, check_measurements
from reportgen.project.records import PROVENANCE, inert
from reportgen.project.spec import MAX_NODES
from reportgen.project.yaml_source import read_text

SPLIT_FIELDS = ("compute", "communication", "idle", "io")
# The runs CSV's columns a measured row fills (io left empty when the split has none; co2_recorded, which `ingest
# codecarbon` adds, with CodeCarbon's own CO2e of the run): a CSV with any other column is refused before the command
# runs, not after it (a run is never measured for nothing)
FILLED = frozenset({"nodes", "time", "energy", "co2_recorded", "ranks_per_node", "workers", *SPLIT_FIELDS})
SPLIT_ENV = "REPORTGEN_SPLIT_FILE"
MAX_SPLIT_BYTES = 1 << 20
MAX_SPLIT_SECONDS = units.MAX_MAGNITUDE  # NaN and infinity fail the comparison too
COMMAND_GRACE_SECONDS = 1.0  # a stopped measure waits this long for its command to exit on the signal, then kills it


@dataclass(frozen=True)
class Measurement:
    nodes: int
    wall_s: float
    energy_kwh: float | None  # None when the tracker failed (CodeCarbon's stop() swallows its errors)
    split_s: dict[str, float]  # what the command reported, in seconds
    exit_status: int  # −N: killed by signal N
    workers_s: tuple[float, ...] = ()  # per-worker compute (from profiler traces)
    source: tuple[str, ...] = ()  # provenance lines of an ingested run (file names and hashes); empty: measured
    machines: int = 0  # the machines CodeCarbon's reading on this one stands for (0: one per node, as before)
    wall_measured: bool = True  # False for a run read from traces alone: its "wall" is only the sum of its parts
    tracked: Any = field(default=None, compare=False, repr=False)  # CodeCarbon's EmissionsData of the run

    @property
    def machine_count(self) -> int:
        return self.machines or self.nodes

    @property
    def emissions_kg(self) -> float | None:
        """CodeCarbon's CO2e of the run on this machine, from its record; None without a positive one."""
        emissions = getattr(self.tracked, "emissions", None)
        if not isinstance(emissions, int | float) or isinstance(emissions, bool) or not emissions > 0:
            return None
        return float(emissions)

    def said(self) -> str:
        """What was measured, as the terminal shows it: in units that read ("27.3 s, 0.087 Wh")."""
        measured = f"{wording.energy(self.energy_kwh)} on this machine" if self.energy_kwh is not None else "none"
        return f"measured: wall time {wording.duration(self.wall_s)}, energy {measured}"


@dataclass(frozen=True)
class Appended:
    csv: Path
    cells: dict[str, str]  # column → the text written
    row: int | None = None  # the line index written into, when an existing run was completed


def csv_of(loaded: LoadedProject) -> Path:
    scaling = loaded.project.scaling
    if scaling is not None and scaling.file is None and scaling.runs:
        raise UsageError(f"{loaded.display}: new runs go into the CSV named by scaling.file, and this project's "
                         f"runs are inline: `reportgen runs export {loaded.display}` moves them into runs.csv and "
                         "names it")
    if scaling is None or scaling.file is None:
        raise UsageError(f"{loaded.display}: measure appends to the CSV named by scaling.file; add "
                         "`scaling: {file: runs.csv}` to the project file")
    try:
        return measurements.resolve(loaded.path, loaded.file_named("scaling.file", scaling.file))
    except ValueError as error:
        raise UsageError(f"{loaded.display}: scaling.file {error}") from None


ASSUMED_COUNTRY = "USA"  # what CodeCarbon's offline tracker is given where the project names no country


def tracker_place(loaded: LoadedProject) -> dict[str, str]:
    """The tracker's location: the project's country or cloud region (energy does not depend on it)."""
    location = loaded.project.energy.location if loaded.project.energy else None
    if location and location.country:
        return {"country_iso_code": location.country}
    if location and location.cloud and location.region:
        return {"cloud_provider": location.cloud, "cloud_region": location.region,
                "country_iso_code": ASSUMED_COUNTRY}
    return {"country_iso_code": ASSUMED_COUNTRY}


def assumed_place_note(loaded: LoadedProject) -> str | None:
    """What measure says before a run whose project names no energy.location: the country CodeCarbon's record of
    the run's emissions then assumes, and how to name the real one (never a silent default,
    methods.md#5-energy-and-carbon)."""
    location = loaded.project.energy.location if loaded.project.energy else None
    if location is not None and (location.country or (location.cloud and location.region)):
        return None
    return (f"note: energy.location is not set, so CodeCarbon's record of this run's emissions assumes its country "
            f"is {ASSUMED_COUNTRY}; the energy measured does not depend on it. Set the real one in the project file "
            "(energy: {location: {country: DEU}}, or {cloud: aws, region: eu-central-1}) for the report's CO2e")


@contextmanager
def _tracked(place: dict[str, str]) -> Iterator[list[Any]]:
    """CodeCarbon's offline tracker around a block; yields a one-element list that receives the energy in kWh.
    An interrupted block gets no energy: the tracker is not stopped (its last reading can take a second), the
    process is leaving and the run is not recorded. A block that fails otherwise (a command that cannot start)
    stops the tracker before the error goes on: its scheduler would otherwise start a thread every second for as
    long as the process lives (a test suite, a program calling `main`)."""
    os.environ["CODECARBON_LOG_LEVEL"] = "error"
    from codecarbon import OfflineEmissionsTracker

    tracker = OfflineEmissionsTracker(**place, output_methods=[], log_level="error", tracking_mode="process",
                                      allow_multiple_runs=True, measure_power_secs=1)
    energy: list[Any] = [None, None]  # the energy in kWh, and CodeCarbon's own record of the run
    tracker.start()
    try:
        yield energy
    except KeyboardInterrupt:
        raise
    except BaseException:
        tracker.stop()
        raise
    tracker.stop()
    data = getattr(tracker, "final_emissions_data", None)
    value = getattr(data, "energy_consumed", None)
    energy[0] = float(value) if isinstance(value, int | float) and value > 0 else None
    energy[1] = data if energy[0] is not None else None


def banner(command: Sequence[str], nodes: int, place: dict[str, str]) -> str:
    """The line measure prints before it runs the command: the command as a shell would quote it and the tracker's
    location, each control character, line break and format character in them written as its escape (\\n, \\x1b),
    so that the line stays one line and shows what the command holds, and a terminal never obeys it."""
    shown_nodes = f"{nodes} node{'' if nodes == 1 else 's'}"
    return inert(f"measuring `{shlex.join(command)}` at {shown_nodes} (tracker location: {', '.join(place.values())})")


def run_measured(command: Sequence[str], nodes: int, place: dict[str, str]) -> Measurement:
    """Run the command (its output goes straight to the terminal) and measure wall time and energy. The folder of
    $REPORTGEN_SPLIT_FILE is the command's to use: one it removed, or replaced by a file, costs the run nothing (no
    split is read, and cleaning up leaves what the command put there); the run was once lost to the clean-up."""
    with tempfile.TemporaryDirectory(prefix="reportgen-measure-", ignore_cleanup_errors=True) as folder:
        split_file = Path(folder) / "split.json"
        environment = {**os.environ, SPLIT_ENV: str(split_file)}
        with _tracked(place) as energy:
            started = time.perf_counter()
            status = _run_to_the_end(command, environment)
            wall = time.perf_counter() - started
        measured = Measurement(nodes, wall, energy[0], {}, status, tracked=energy[1])
        try:
            return replace(measured, split_s=_read_split(split_file))
        except UsageError as error:  # the measurement is said before the refusal: a long run is never lost
            raise UsageError(f"{measured.said()}; not recorded: {error}") from None


def _run_to_the_end(command: Sequence[str], environment: dict[str, str]) -> int:
    """The command's exit status (−N for a command killed by signal N, as subprocess reports it). The command runs
    in a process group of its own, so that what it starts (a launcher's workers, a shell script's programs) can be
    stopped with it. Stopped (Ctrl-C, SIGTERM, SIGHUP), this passes the signal on to that whole group, gives it
    COMMAND_GRACE_SECONDS to exit, then kills what is left of the group and reaps the command: a supervisor's signal
    reaches every process of the command even when sent to this one alone, nothing it started outlives it, and a
    command that ignores the signal never holds this one up. (In its own group the command is in the terminal's
    background: it should not read from the terminal.)"""
    try:
        process = subprocess.Popen(list(command), env=environment, process_group=0)
    except FileNotFoundError:
        raise UsageError(f"no such command: {command[0]}") from None
    except PermissionError:
        raise UsageError(f"cannot run {command[0]}: permission denied") from None
    try:
        return process.wait()
    except KeyboardInterrupt:
        _signal_group(process.pid, interrupts.exit_status() - 128)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=COMMAND_GRACE_SECONDS)
        _signal_group(process.pid, signal.SIGKILL)  # whatever is left of the group: the command's own children too
        process.wait()
        raise


def _signal_group(group: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, number)


def _read_split(path: Path) -> dict[str, float]:
    """The split the command wrote; none when it wrote none, or when its folder is no longer there to hold one
    (removed, or replaced by a file)."""
    try:
        with open_regular(path) as stream:  # the command may have made it a pipe: never wait on one
            text = stream.read(MAX_SPLIT_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as error:
        raise UsageError(f"${SPLIT_ENV}: {why_unreadable(error)}") from None
    if len(text) > MAX_SPLIT_BYTES:
        raise UsageError(f"${SPLIT_ENV}: past {MAX_SPLIT_BYTES >> 20} MiB; a split is a few numbers")
    try:
        data: Any = strict_json.loads(text)
    except (ValueError, RecursionError) as error:
        raise UsageError(f"${SPLIT_ENV}: not JSON ({error})") from None
    if not isinstance(data, dict):
        raise UsageError(f"${SPLIT_ENV}: expected an object like {{\"compute\": 812.0, \"communication\": 95.5, "
                         "\"idle\": 40.1}")
    split = {}
    for name in SPLIT_FIELDS:
        value = data.get(name)
        if value is not None:
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= MAX_SPLIT_SECONDS:
                raise UsageError(f"${SPLIT_ENV}: {name} must be a number of seconds from 0 to 10^30, got {value!r}")
            split[name] = float(value)
    return split


def csv_lines(csv_path: Path) -> tuple[list[str], int | None]:
    """The CSV's lines and the index of its header line (None for a new or empty file)."""
    text = read_text(csv_path, csv_path.name, limit=measurements.MAX_CSV_BYTES)[0] if csv_path.exists() else ""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if measurements.is_data_line(line)), None)
    return lines, header


def csv_form(csv_path: Path) -> str | None:
    """The run form the CSV records: "breakdown" (a compute column), "total" (time), or None while it has no
    header (the first run decides)."""
    lines, header = csv_lines(csv_path)
    if header is None:
        return None
    columns = set(measurements.column_names(lines[header]))
    return "breakdown" if "compute" in columns else "total" if "time" in columns else "throughput"


def without_rows(lines: list[str], header: int, nodes: int) -> list[str]:
    """The CSV's lines less the rows at a node count and the provenance comments reportgen wrote above them."""
    rows = set(measurements.rows_at(lines, header, nodes))
    for row_index in list(rows):
        above = row_index - 1
        while above > header and lines[above].startswith(COMMENT):
            rows.add(above)
            above -= 1
    return [line for i, line in enumerate(lines) if i not in rows]


def check_can_append(csv_path: Path, nodes: int, *, replace: bool, split: bool | None = None,
                     repeat: bool = False) -> str | None:
    """Refuse, before anything runs, what could not be recorded: a node count the CSV already has (unless it is to
    be replaced, or the run is a repeat of that scale), a split the CSV has no columns for, a split-form CSV whose
    command is not said to write one.

    `split` is whether the command writes its split (--split / --no-split); None leaves it to the command.
    Returns the CSV's form.
    """
    if not 1 <= nodes <= MAX_NODES:
        raise UsageError(f"--nodes must be from 1 to {MAX_NODES:,}, got {nodes}")
    lines, header = csv_lines(csv_path)
    unfilled = [name for name in measurements.column_names(lines[header]) if name and name not in FILLED] \
        if header is not None else []
    if unfilled:
        raise UsageError(f"{csv_path.name} has {'columns' if len(unfilled) > 1 else 'a column'} measure cannot "
                         f"fill ({', '.join(unfilled)}): record this run in a CSV without "
                         f"{'them' if len(unfilled) > 1 else 'it'}, or with `reportgen ingest`")
    rows = measurements.rows_at(lines, header, nodes)
    if rows and not (replace or repeat):
        raise UsageError(f"{csv_path.name} already has a run at {nodes} nodes (line {rows[0] + 1}); use --repeat "
                         "to add another run of that scale (the report takes the median), or --replace to replace it")
    form = csv_form(csv_path)
    if form == "throughput":
        raise UsageError(f"{csv_path.name} records throughput; measure records wall time or a compute / "
                         "communication / idle split")
    if form == "breakdown" and not split and header is not None and \
            "time" not in measurements.column_names(lines[header]):
        raise UsageError(f"{csv_path.name} records a compute / communication / idle split: pass --split and have "
                         f"the command write it to ${SPLIT_ENV}, so that a run is never measured for nothing")
    return form


CODECARBON_FILE = "emissions.csv"  # CodeCarbon's own log, kept beside the runs CSV


def keep_codecarbon_log(csv_path: Path, measurement: Measurement) -> Path | None:
    """CodeCarbon's record of the run appended to its own emissions.csv beside the runs CSV, written by CodeCarbon's
    file output, so that `ingest codecarbon` and CodeCarbon's tools find it. A failure here costs the run nothing
    (the row is already recorded): it returns None."""
    if measurement.tracked is None:
        return None
    from codecarbon.output_methods.file import FileOutput

    try:
        with locked(csv_path.parent):
            FileOutput(CODECARBON_FILE, str(csv_path.parent), on_csv_write="append").out(measurement.tracked, None)
    except Exception:  # CodeCarbon's writer (pandas) may fail in many ways; the run is safe
        return None
    return csv_path.parent / CODECARBON_FILE


def with_column(lines: list[str], header: int, name: str, unit: str) -> tuple[list[str], str]:
    """The CSV's lines with the column (added empty for every run when absent), and the column's unit."""
    names = measurements.column_names(lines[header])
    if name in names:
        read = measurements.header_column([cell for cell, _ in measurements.split_cells(lines[header])][
            names.index(name)])
        return lines, (read[1] if read else None) or unit
    title = f"{name} [{unit}]" if unit else name  # a share or a count has no unit
    return [line + f",{title}" if i == header else
            line + "," if i > header and measurements.is_data_line(line) else line
            for i, line in enumerate(lines)], unit


def _wall_time_row(lines: list[str], header: int | None, nodes: int, run: int | None, name: str) -> int | None:
    """The row at `nodes` (the run-th of its repeats, 1-based; else the latest) that records a wall time and no
    breakdown yet: the run `measure` recorded, which `ingest trace` of the same run completes."""
    rows = measurements.rows_at(lines, header, nodes)
    if header is None or not rows:
        return None
    if run is not None and not 1 <= run <= len(rows):
        raise UsageError(f"--run {run}: {name} has {len(rows)} run(s) at {nodes} nodes")
    row = rows[run - 1] if run is not None else rows[-1]
    cells = [cell for cell, _ in measurements.split_cells(lines[row])]
    filled = {column for column, cell in zip(measurements.column_names(lines[header]), cells, strict=False) if cell}
    return row if "time" in filled and "compute" not in filled else None


def add_breakdown(csv_path: Path, measurement: Measurement, *, run: int | None,
                  time_unit_s: float | None) -> Appended | None:
    """The measurement's split written into the run `measure` recorded at its node count (see _wall_time_row),
    with its provenance above it, atomically; columns the CSV lacks are added, empty for the other runs. The wall
    time minus the traced parts is the run's start-up. None when there is no such run. The row is
    found under the lock, in the lines written back: a concurrent writer cannot move it."""
    with locked(csv_path.parent):
        lines, header = csv_lines(csv_path)
        row = _wall_time_row(lines, header, measurement.nodes, run, csv_path.name)
        if row is None or header is None:
            return None
        for name in ("compute", "communication", "idle", *(("io",) if "io" in measurement.split_s else ())):
            lines, _ = with_column(lines, header, name, "s")
        units_of = {column[0]: column[1] for cell, _ in measurements.split_cells(lines[header])
                    if (column := measurements.header_column(cell)) is not None}
        names = measurements.column_names(lines[header])
        cells = [cell for cell, _ in measurements.split_cells(lines[row])]
        written = {}
        for name in measurement.split_s:
            if name in names:
                cells[names.index(name)] = written[name] = _cell(name, units_of.get(name), measurement, time_unit_s)
        lines[row] = ",".join(cells)
        write_lines(csv_path, [*lines[:row], *provenance(measurement), *lines[row:]], time_unit_s=time_unit_s)
    return Appended(csv_path, written, row)


def missing_split(csv_path: Path, measurement: Measurement) -> bool:
    """The CSV (or the run it is about to start with) needs a split the command did not write: a CSV of splits
    without a `time` column, where a run of wall time alone has no place."""
    if csv_form(csv_path) != "breakdown" or {"compute", "communication", "idle"} <= measurement.split_s.keys():
        return False
    lines, header = csv_lines(csv_path)
    return header is None or "time" not in measurements.column_names(lines[header])


MEASURED = f"{PROVENANCE}measure:"
COMMENT = PROVENANCE  # every provenance line reportgen writes starts so: replacing a row removes its lines


# Launchers that run every rank on this machine: CodeCarbon's reading is then the whole run's
_SINGLE_HOST = ("--standalone", "--nnodes=1", "--nnodes 1", "--nnodes=1:1")


def checked_machines(machines: int | None, nodes: int, default: int) -> int:
    """--machines as given (else `default`), from 1 to the run's nodes."""
    count = default if machines is None else machines
    if not 1 <= count <= nodes:
        raise UsageError(f"--machines must be from 1 to the run's {wording.nodes(nodes)}, got {count}")
    return count


def machines_of(command: Sequence[str], nodes: int) -> int:
    """The machines a run used, as its launch says: 1 for a single-host launch (torchrun --standalone,
    --nnodes 1), else one per node."""
    line = " ".join(command)
    return 1 if any(flag in line for flag in _SINGLE_HOST) else nodes


def provenance(measurement: Measurement) -> tuple[str, ...]:
    """The comment lines written above a measured row: what was measured, and the assumption behind its energy."""
    if measurement.source:
        return measurement.source
    if measurement.energy_kwh is None:
        return (f"{MEASURED} {measurement.nodes} nodes; no energy (the tracker failed)",)
    machines = measurement.machine_count
    if machines == 1:
        ranks = f", all {measurement.nodes} ranks on this one machine" if measurement.nodes > 1 else ""
        return (f"{MEASURED} {measurement.nodes} node{'s' if measurement.nodes > 1 else ''}; energy is CodeCarbon's "
                f"estimate for this machine{ranks}",)
    return (f"{MEASURED} {measurement.nodes} nodes; energy is CodeCarbon's estimate for this machine "
            f"({number_text(measurement.energy_kwh)} kWh) × {machines} machines, assuming every machine draws the "
            "same",)


def append_run(csv_path: Path, measurement: Measurement, *, time_unit_s: float | None, replace: bool,
               repeat: bool = False) -> Appended:
    """Add the measurement as a row of the CSV (created with a header when absent), with a provenance comment
    above it, atomically: replacing the runs at its node count, or beside them as one more repeat. CodeCarbon
    measures this machine only: a run at N nodes records N times its energy."""
    with locked(csv_path.parent):  # read, check and replace as one step: concurrent writers lose no row
        check_can_append(csv_path, measurement.nodes, replace=replace, repeat=repeat,
                         split={"compute", "communication", "idle"} <= measurement.split_s.keys())
        lines, header_index = csv_lines(csv_path)
        if header_index is None:
            lines.append(_header(measurement))
            header_index = len(lines) - 1
        elif {"compute", "communication", "idle"} <= measurement.split_s.keys():  # a CSV of wall times gains the
            for name in ("compute", "communication", "idle"):                      # split's columns
                lines, _ = with_column(lines, header_index, name, "s")
        if measurement.energy_kwh is not None:  # the energy always lands: a CSV without the column gains it
            lines, _ = with_column(lines, header_index, "energy", "kWh")
        columns = [column for cell, _ in measurements.split_cells(lines[header_index])
                   if (column := measurements.header_column(cell)) is not None]
        cells = {name: _cell(name, unit, measurement, time_unit_s) for name, unit in columns}
        row = ",".join(cells[name] for name, _ in columns)
        kept = lines if repeat else without_rows(lines, header_index, measurement.nodes)
        write_lines(csv_path, [*kept, *provenance(measurement), row], time_unit_s=time_unit_s)
    return Appended(csv_path, cells)


def _header(measurement: Measurement) -> str:
    if {"compute", "communication", "idle"} <= measurement.split_s.keys():
        # the command's wall time beside its split: one row holds the run, the difference is start-up
        columns = ["nodes", *(["time [s]"] if measurement.wall_measured else []), "compute [s]", "communication [s]",
                   "idle [s]"]
        if "io" in measurement.split_s:
            columns.append("io [s]")
        if measurement.workers_s:
            columns.append("workers [s]")
    else:
        columns = ["nodes", "time [s]"]
    ranks = ["ranks_per_node"] if measurement.machine_count < measurement.nodes else []  # for the contention check
    return ",".join([*columns, "energy [kWh]", *ranks])


def _all_machines(per_machine: float | None, measurement: Measurement, unit: str | None, dimension: units.Dimension,
                  si_per_default: float, default_unit: str) -> str:
    """A reading of this machine for the whole run (× the machines it stands for), in the column's unit, else in
    `default_unit` (worth `si_per_default` SI units); empty without a reading."""
    if per_machine is None:
        return ""
    value = per_machine * measurement.machine_count
    if unit:
        return number_text(value * si_per_default / units.parse_unit(unit, dimension))
    return f"{number_text(value)} {default_unit}"


def _cell(name: str, unit: str | None, measurement: Measurement, time_unit_s: float | None) -> str:
    if name == "nodes":
        return str(measurement.nodes)
    if name == "ranks_per_node":  # ranks on each machine: the nodes counted are ranks, on this many machines
        return str(-(-measurement.nodes // measurement.machine_count))
    if name == "energy":  # × machines, never × ranks
        return _all_machines(measurement.energy_kwh, measurement, unit, units.ENERGY, 3.6e6, "kWh")
    if name == "co2_recorded":  # CodeCarbon's CO2e for this machine, × machines as the energy is
        return _all_machines(measurement.emissions_kg, measurement, unit, units.MASS, 1.0, "kg")
    if name == "workers":
        scale = units.parse_unit(unit, units.TIME) if unit else (time_unit_s or 1.0)
        return " ".join(number_text(seconds / scale) for seconds in measurement.workers_s)
    if name == "time":
        if not measurement.wall_measured or (measurement.split_s and
                                             sum(measurement.split_s.values()) > measurement.wall_s):
            return ""  # parts scaled past the wall (--steps-per-run too large?): the split alone, no start-up
        seconds = measurement.wall_s
    elif name in SPLIT_FIELDS:
        if name not in measurement.split_s:
            if name == "io" or not measurement.split_s:  # a run of wall time alone beside split runs
                return ""
            raise UsageError(f"the CSV records {name} time per run, but the command reported no split: write "
                             f'{{"compute": …, "communication": …, "idle": …}} in seconds to ${SPLIT_ENV}')
        seconds = measurement.split_s[name]
    else:
        raise UsageError(f"measure cannot fill the CSV column {name!r}")
    if unit:
        return number_text(seconds / units.parse_unit(unit, units.TIME))
    if time_unit_s:
        return number_text(seconds / time_unit_s)
    return f"{number_text(seconds)} s"


def write_lines(csv_path: Path, lines: list[str], *, collectives: bool = False,
                time_unit_s: float | None = None) -> None:
    """Replace the CSV with these lines, atomically (a stopped or failed write leaves it as it was), once every
    row reads as the project's loader reads it: no tool writes a value the project would refuse. Callers hold
    `locked(csv_path.parent)` from their read of the file to this write. A provenance line is written inert:
    text it quotes from outside (a file name, a run id) cannot end it and start a row."""
    text = "\n".join(inert(line) if line.startswith(COMMENT) else line for line in lines) + "\n"
    try:
        check_measurements(text, csv_path.name, collectives=collectives, time_unit_s=time_unit_s)
    except InputError as error:  # located in the rows as they would have been: say that they were not written
        raise InputError([replace(problem, message=f"{problem.message} (in the row this command would write; "
                                  f"nothing was written, {csv_path.name} is as it was)")
                          for problem in error.problems]) from None
    replace_file(csv_path, text.encode("utf-8"))


def number_text(value: float) -> str:
    """A measured value at full precision: 15 significant digits, every digit a double holds reliably ("47535", not
    "47535.0"; "0.1234567890123" where six digits would have dropped half of it), without the noise of its last
    binary digit that arithmetic leaves ("1.72259", not "1.7225899999999998")."""
    return f"{float(value):.15g}"
