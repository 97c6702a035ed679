"""Measured runs kept in a CSV file beside the project file (`scaling: {file: runs.csv}`).

Each cell becomes a YAML-like node carrying its CSV position, so the runs go through exactly the validation of
runs written inline, and errors point at `runs.csv:LINE:COL`. A header may carry units: `compute [s]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from yaml.error import Mark
from yaml.nodes import Node, ScalarNode, SequenceNode

from reportgen.errors import InputError, Problem
from reportgen.files import why_unreadable
from reportgen.project.records import PROVENANCE, RowSource
from reportgen.project.spec import did_you_mean, number_of
from reportgen.project.yaml_source import mapping_node, mark_at, read_text, scalar_node

MAX_CSV_BYTES = 16 << 20
# Values a CSV may hold: about 50,000 runs of five columns, read and checked in a few seconds and a few hundred MB.
# Past it the file is refused at once, at the line where it crosses the limit, before any value is read.
MAX_CSV_VALUES = 250_000
COLUMNS = ("nodes", "compute", "communication", "idle", "io", "bubble", "time", "throughput", "energy",
           "co2_recorded", "p99_latency", "ttft_p99", "tpot_p99", "workers", "ranks_per_node", "tokens", "flops",
           "micro_batch", "offered", "concurrency", "attainment", "goodput")
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # what str.splitlines splits at
_HEADER_RE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(?P<unit>[^\]]*)\])?\s*$")


def resolve(project_path: Path, relative: str) -> Path:
    """The CSV's path; refuses anything outside the project file's folder (reading only what the user named)."""
    candidate = Path(relative)
    if candidate.is_absolute():
        raise ValueError("must be a path relative to the project file, not an absolute path")
    try:
        base = project_path.parent.resolve()
        resolved = (base / candidate).resolve()
    except RuntimeError:  # Python 3.11 and 3.12 raise it for a loop of symbolic links on the way
        raise ValueError("is a loop of symbolic links") from None
    except OSError as error:  # a name past the system's limit, a folder that cannot be searched
        raise ValueError(why_unreadable(error)) from None
    if not resolved.is_relative_to(base):
        raise ValueError("must name a file inside the project file's folder")
    return resolved


def split_cells(line: str) -> list[tuple[str, int]]:
    """Cells of one CSV line with their 1-based start columns; double quotes may enclose commas."""
    if '"' not in line:  # the common line, split at once (a 16 MiB CSV has half a million of them)
        cells, start = [], 1
        for raw in line.split(","):
            cells.append((raw.strip(), start))
            start += len(raw) + 1
        return cells
    cells = []
    text, start, quoted, index = [], 1, False, 0
    while index < len(line):
        char = line[index]
        if quoted:
            if char == '"' and line[index + 1: index + 2] == '"':
                text.append('"')
                index += 1
            elif char == '"':
                quoted = False
            else:
                text.append(char)
        elif char == '"':
            quoted = True
        elif char == ",":
            cells.append(("".join(text).strip(), start))
            text, start = [], index + 2
        else:
            text.append(char)
        index += 1
    cells.append(("".join(text).strip(), start))
    return cells


def lines_of(text: str) -> Iterator[str]:
    """The text's lines as str.splitlines gives them, one at a time: a reader that stops early (past a limit) never
    builds the list of a 16 MiB file's three million lines."""
    start = 0
    for match in _LINE_BREAK.finditer(text):
        yield text[start:match.start()]
        start = match.end()
    if start < len(text):
        yield text[start:]


def is_data_line(line: str) -> bool:
    """A line that carries the header or a run: not blank, not a `#` comment."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def header_column(cell: str) -> tuple[str, str | None] | None:
    """A header cell read as (column name, unit or None): `compute [s]` → ("compute", "s")."""
    match = _HEADER_RE.match(cell)
    if not match:
        return None
    return match["name"], (match["unit"] or "").strip() or None


COLLECTIVE_COLUMNS = ("nodes", "bytes", "time", "ranks")


def read_runs(path: Path, display: str, columns_known: tuple[str, ...] = COLUMNS,
              *, within: Path | None = None) -> tuple[SequenceNode, bytes, list[RowSource]]:
    """The rows of a CSV (measured runs, or collectives) as a sequence of mapping nodes, the file's bytes, and
    each row's provenance (the `# reportgen` comments right above it). With `within` (the project's folder, as
    resolve() checked it), the file opened must still be inside it."""
    text, data = read_text(path, display, limit=MAX_CSV_BYTES, within=within)
    node, sources = parse_rows(text, display, columns_known)
    return node, data, sources


def parse_rows(text: str, display: str,
               columns_known: tuple[str, ...] = COLUMNS) -> tuple[SequenceNode, list[RowSource]]:
    """CSV text as a sequence of mapping nodes, one per row, each cell at its line and column; and each row's
    provenance."""
    problems: list[Problem] = []
    lines: list[tuple[int, str]] = []
    sources: list[RowSource] = []
    pending: list[str] = []
    values = 0  # after the header, counted as the lines are read: a file past the limit is refused where it is met
    for number, line in enumerate(lines_of(text), start=1):
        if is_data_line(line):
            if lines:
                values += line.count(",") + 1 + line.count(" ")  # a cell of per-worker times holds several
                if values > MAX_CSV_VALUES:
                    raise InputError([Problem(display, number, 1, "", f"more than {MAX_CSV_VALUES:,} values: "
                                              f"reportgen reads at most {MAX_CSV_VALUES:,} measured values from a CSV "
                                              f"(about {MAX_CSV_VALUES // 5:,} runs); keep a sample of the repeats, or "
                                              "their medians")])
            lines.append((number, line))
            sources.append(RowSource(tuple(pending)))
            pending = []
        elif line.startswith(PROVENANCE):
            pending.append(line)
    sources = sources[1:]  # the header's are not a row's
    if not lines:
        raise InputError([Problem(display, 1, 1, "", "the CSV file has no header line")])
    header_number, header_line = lines[0]
    columns: list[tuple[str, str | None]] = []
    for cell, column in split_cells(header_line):
        read = header_column(cell)
        if read is None or read[0] not in columns_known:
            name = read[0] if read is not None else cell.strip()
            # as a misspelt field of the project file gets: "did you mean `throughput`?"
            hint = did_you_mean(name, columns_known, fields=True).removeprefix("; ")
            problems.append(Problem(display, header_number, column, "",
                                    f"unknown column \"{cell}\"{': ' + hint + ' The' if hint else '; the'} columns "
                                    f"are {', '.join(columns_known)}, each with an optional unit as in `compute [s]`"))
            columns.append(("", None))
            continue
        if read[0] in [name for name, _ in columns]:
            problems.append(Problem(display, header_number, column, "", f"column \"{read[0]}\" appears twice"))
        columns.append(read)
    if problems:
        raise InputError(problems)
    runs: list[Node] = []
    # one key node per column, at the header (a key is never wrong: the header was checked above)
    keys = [scalar_node(name, mark_at(display, header_number, column))
            for (name, _), (_, column) in zip(columns, split_cells(header_line), strict=True)]
    for number, line in lines[1:]:
        cells = split_cells(line)
        if len(cells) != len(columns):
            problems.append(Problem(display, number, 1, "",
                                    f"expected {len(columns)} cells as in the header, got {len(cells)}"))
            continue
        pairs: list[tuple[ScalarNode, Node]] = []
        for key, (name, unit), (cell, column) in zip(keys, columns, cells, strict=True):
            if not cell:
                continue  # an empty cell is an absent value (io, energy)
            mark = mark_at(display, number, column)
            if name == "workers":  # per-worker compute times, separated by spaces within the cell
                items: list[Node] = [_typed(f"{v} {unit}" if unit and is_bare_number(v) else v, mark)
                                     for v in cell.split()]
                pairs.append((key, SequenceNode("tag:yaml.org,2002:seq", items, start_mark=mark, end_mark=mark)))
                continue
            value = f"{cell} {unit}" if unit and is_bare_number(cell) else cell
            pairs.append((key, _typed(value, mark)))
        runs.append(mapping_node(pairs, mark_at(display, number, 1)))
    if problems:
        raise InputError(problems)
    first = mark_at(display, header_number, 1)
    return SequenceNode("tag:yaml.org,2002:seq", runs, start_mark=first, end_mark=first), sources


def node_count(cell: str) -> float | None:
    """A `nodes` cell's value as the loader reads it ("2", "2.0", "02", "+2" and "2e0" are all 2), or None: a writer
    that finds a scale's rows by this never misses or mistakes one the report would read."""
    return number_of(_typed(cell.strip(), mark_at("", 0, 0)))


def column_names(header_line: str) -> list[str]:
    """A CSV header's column names, without their units ("" for a cell that is not a column name)."""
    return [read[0] if (read := header_column(cell)) else "" for cell, _ in split_cells(header_line)]


def rows_at(lines: Sequence[str], header: int | None, nodes: float) -> list[int]:
    """The indexes of the rows at a node count, the `nodes` column found by its name in the header line."""
    if header is None:
        return []
    names = column_names(lines[header])
    if "nodes" not in names:
        return []
    column = names.index("nodes")
    found = []
    for index in range(header + 1, len(lines)):
        if is_data_line(lines[index]):
            cells = split_cells(lines[index])
            if column < len(cells) and node_count(cells[column][0]) == nodes:
                found.append(index)
    return found


def is_bare_number(cell: str) -> bool:
    """A cell that is a number alone, without a unit."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _typed(value: str, mark: Mark) -> ScalarNode:
    node = scalar_node(value, mark)
    if (value.lstrip("+-").isdigit() and value.isascii() and value[1:].isdigit()) or value.isdigit():
        node.tag = "tag:yaml.org,2002:int"  # node counts are whole numbers, as YAML would read them
    return node


