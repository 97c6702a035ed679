"""nccl-tests output (`all_reduce_perf` and the other `*_perf`) → measured collectives with their message sizes.

The tools print a table after `#` comment lines: size (B), count, type, redop, root, then the out-of-place time
(µs), algbw, busbw and #wrong, then the same in place (older releases print no root column). The columns are
found by the table's own header line, and the out-of-place time is the one recorded. A row with #wrong other than
0 is refused: nccl-tests found wrong results, and a timing of a broken collective fits nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from reportgen.errors import InputError, Problem
from reportgen.files import locked
from reportgen.ingest import measure
from reportgen.project import measurements
from reportgen.project.yaml_source import read_text

HEADER = "nodes,bytes [B],time [us]"
MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class Timing:
    bytes: int
    time_us: float  # out of place


@dataclass(frozen=True)
class NcclTable:
    file: str
    sha256: str
    operation: str  # e.g. all_reduce_perf, from the banner when it names one
    timings: tuple[Timing, ...]


def read_nccl_tests(path: Path) -> NcclTable:
    """The out-of-place time per message size; InputError located at the offending line and column."""
    shown = str(path)
    text, data = read_text(path, shown, limit=MAX_BYTES)
    lines = text.splitlines()
    header: list[str] | None = None
    operation = next((word for line in lines for word in line.split() if word.endswith("_perf")), "")
    timings: list[Timing] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            words = stripped.lstrip("#").split()
            if "size" in words and "time" in words and "#wrong" in words:
                header = words
            continue
        words = stripped.split()
        if header is None or not words or not words[0].isdigit():
            continue
        if len(words) < header.index("#wrong") + 1:
            problems.append(Problem(shown, number, 1, "", f"a row of {len(words)} cells under a header of "
                                    f"{len(header)}"))
            continue
        wrong = words[header.index("#wrong")]
        if wrong not in ("0", "N/A"):
            column = _column_of(line, header.index("#wrong"))
            problems.append(Problem(shown, number, column, "", f"#wrong = {wrong}: nccl-tests found wrong results "
                                    f"at {words[0]} bytes; rerun the test before fitting its times"))
            continue
        try:
            timings.append(Timing(int(words[header.index("size")]), float(words[header.index("time")])))
        except ValueError:
            problems.append(Problem(shown, number, _column_of(line, header.index("time")), "",
                                    f"not a time in µs: {words[header.index('time')]!r}"))
    if problems:
        raise InputError(problems)
    if not timings:
        raise InputError([Problem(shown, 1, 1, "", "no nccl-tests table: expected the rows of size, count, type, "
                                  "…, time, algbw, busbw, #wrong that all_reduce_perf prints")])
    return NcclTable(path.name, hashlib.sha256(data).hexdigest(), operation or "nccl-tests", tuple(timings))


def _column_of(line: str, word_index: int) -> int:
    """The 1-based column where the word_index-th word of a line starts."""
    position = 0
    for index, word in enumerate(line.split()):
        position = line.index(word, position)
        if index == word_index:
            return position + 1
        position += len(word)
    return 1


def yaml_entries(table: NcclTable, nodes: int) -> str:
    """The table as prediction.collectives entries, for a project file written by hand."""
    return "\n".join(f"    - {{nodes: {nodes}, bytes: {t.bytes} B, time: {t.time_us:g} us}}" for t in table.timings)


def append_collectives(csv_path: Path, table: NcclTable, nodes: int, *, replace: bool) -> int:
    """Add the table's timings at `nodes` to the collectives CSV (created with a header when absent), with a
    provenance comment, atomically; a node count already there is refused unless replaced. Returns the rows."""
    with locked(csv_path.parent):  # read, check and replace as one step: concurrent writers lose no row
        lines, header = measure.csv_lines(csv_path)
        if header is None:
            lines.append(HEADER)
            header = len(lines) - 1
        elif measure.rows_at(lines, header, nodes) and not replace:
            raise InputError([Problem(csv_path.name, measure.rows_at(lines, header, nodes)[0] + 1, 1, "",
                                      f"collectives at {nodes} nodes are already recorded; use --replace to replace "
                                      "them")])
        columns = [column[0] for cell, _ in measurements.split_cells(lines[header])
                   if (column := measurements.header_column(cell)) is not None]
        if columns != ["nodes", "bytes", "time"] or lines[header] != HEADER:
            raise InputError([Problem(csv_path.name, header + 1, 1, "",
                                      f'the collectives CSV must start "{HEADER}"')])
        kept = measure.without_rows(lines, header, nodes)
        provenance = f"{measure.COMMENT}ingest nccl-tests: {table.operation}, {table.file} sha256 {table.sha256}"
        rows = [f"{nodes},{t.bytes},{measure.number_text(t.time_us)}" for t in table.timings]
        measure.write_lines(csv_path, [*kept, provenance, *rows], collectives=True)
    return len(rows)
