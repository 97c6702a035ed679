"""nccl-tests output (`all_reduce_perf` and the other `*_perf`) → measured collectives with their message sizes.

The tools print a table after `#` comment lines: size (B), count, type, redop, root, then the out-of-place time
(µs), algbw, busbw and #wrong, then the same in place (older releases print no root column). The columns are
found by the table's own header line, and the out-of-place time is the one recorded. A row with #wrong other than
0 is refused: nccl-tests found wrong results, and a timing of a broken collective fits nothing; so are a second table
(two tests in one log) and a message size seen twice (a row per data type or reduction: -d all, -o all), which
would be fitted as one operation; and so is a row that is not a row of the table (a number, then too few cells, or
cells that are not numbers), where it stands.

The header names every rank and its host (`#  Rank  0 Group  0 Pid 41234 on node-a device  0 [0x18] ...`): the
node count is the number of distinct hosts, and the rank count is recorded beside each collective, so that the
fitted bandwidth can be shown as nccl-tests' own bus bandwidth.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import locked
from reportgen.ingest import measure
from reportgen.project import measurements, units
from reportgen.project.yaml_source import read_text

HEADER = "nodes,bytes [B],time [us],ranks"
OLD_HEADER = "nodes,bytes [B],time [us]"  # written before ranks were recorded: still appended to, without them
MAX_BYTES = 16 << 20
_RANK_LINE = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\b")


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
    ranks: int | None = None  # the ranks the header names (None without the header's rank lines)
    hosts: tuple[str, ...] = ()  # their distinct hosts, in order: the node count

    def nodes(self, given: int | None) -> int:
        """The node count: the hosts the header names, or --nodes where the log has no header (a given count
        that contradicts the header is an error naming both)."""
        if self.hosts:
            if given is not None and given != len(self.hosts):
                raise UsageError(f"--nodes {given} contradicts {self.file}, whose header names {len(self.hosts)} "
                                 f"host{'s' if len(self.hosts) != 1 else ''} ({', '.join(self.hosts[:4])}"
                                 f"{', …' if len(self.hosts) > 4 else ''}) for {self.ranks} ranks")
            nodes = len(self.hosts)
        elif given is None:
            raise UsageError(f"{self.file} has no header naming its ranks and hosts (the \"# Rank N ... on HOST\" "
                             "lines nccl-tests prints first): give the node count with --nodes")
        else:
            nodes = given
        if nodes < 2:
            raise UsageError(f"the collectives ran on {nodes} node: a collective on one node crosses no network; "
                             "measure it across two nodes or more")
        return nodes


def read_nccl_tests(path: Path) -> NcclTable:
    """The out-of-place time per message size; InputError located at the offending line and column."""
    shown = str(path)
    text, data = read_text(path, shown, limit=MAX_BYTES)
    lines = text.splitlines()
    header: list[str] | None = None
    operation = next((word for line in lines for word in line.split() if word.endswith("_perf")), "")
    timings: list[Timing] = []
    problems: list[Problem] = []
    ranks: dict[int, str] = {}
    header_line = 0
    sizes: dict[int, int] = {}  # message size → the line of its row: one row per size in one table
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            rank = _RANK_LINE.match(stripped)
            if rank is not None:
                ranks[int(rank.group(1))] = rank.group(2)
            words = stripped.lstrip("#").split()
            if "size" in words and "time" in words and "#wrong" in words:
                if timings:
                    problems.append(Problem(shown, number, 1, "", f"a second table (the first is headed on line "
                                            f"{header_line}): one log holds one test's table; split the log, and "
                                            "ingest each operation on its own"))
                    break
                header, header_line = words, number
            continue
        words = stripped.split()
        if header is None or not words or not words[0][:1].isdigit():
            continue  # text around the table (warnings, the summary lines) is not a row
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
        size_text, time_text = words[header.index("size")], words[header.index("time")]
        if not size_text.isdigit() or not 1 <= int(size_text) <= units.MAX_MAGNITUDE:
            problems.append(Problem(shown, number, _column_of(line, header.index("size")), "",
                                    f"not a message size in bytes: {size_text!r}"))
            continue
        try:
            time_us = float(time_text)
        except ValueError:
            time_us = math.nan
        if not (time_us > 0 and units.in_range(time_us * 1e-6)):
            problems.append(Problem(shown, number, _column_of(line, header.index("time")), "",
                                    f"not a time in µs (a positive number): {time_text!r}"))
            continue
        size = int(size_text)
        if size in sizes:
            problems.append(Problem(shown, number, 1, "", f"{size} bytes again (first on line {sizes[size]}): a row "
                                    "per data type or reduction (-d all, -o all) is not one collective; run the test "
                                    "with one type and one operation"))
            continue
        sizes[size] = number
        timings.append(Timing(size, time_us))
    if problems:
        raise InputError(problems)
    if not timings:
        raise InputError([Problem(shown, 1, 1, "", "no nccl-tests table: expected the rows of size, count, type, "
                                  "…, time, algbw, busbw, #wrong that all_reduce_perf prints")])
    hosts = tuple(dict.fromkeys(ranks[rank] for rank in sorted(ranks)))
    return NcclTable(path.name, hashlib.sha256(data).hexdigest(), operation or "nccl-tests", tuple(timings),
                     len(ranks) or None, hosts)


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
    ranks = f", ranks: {table.ranks}" if table.ranks else ""
    return "\n".join(f"    - {{nodes: {nodes}, bytes: {t.bytes} B, time: {measure.number_text(t.time_us)} us{ranks}}}"
                     for t in table.timings)


def json_document(table: NcclTable, nodes: int) -> dict[str, object]:
    """What `ingest nccl-tests --format json` prints: the collectives it appends (the same keys), and whence."""
    return {"operation": table.operation, "file": table.file, "sha256": table.sha256, "nodes": nodes,
            "ranks": table.ranks, "hosts": list(table.hosts),
            "collectives": [{"nodes": nodes, "bytes": t.bytes, "time_s": t.time_us * 1e-6, "ranks": table.ranks}
                            for t in table.timings]}


def append_collectives(csv_path: Path, table: NcclTable, nodes: int, *, replace: bool) -> int:
    """Add the table's timings at `nodes` to the collectives CSV (created with a header when absent), with a
    provenance comment, atomically; a node count already there is refused unless replaced. Returns the rows."""
    with locked(csv_path.parent):  # read, check and replace as one step: concurrent writers lose no row
        lines, header = measure.csv_lines(csv_path)
        if header is None:
            lines.append(HEADER)
            header = len(lines) - 1
        elif measurements.rows_at(lines, header, nodes) and not replace:
            raise InputError([Problem(csv_path.name, measurements.rows_at(lines, header, nodes)[0] + 1, 1, "",
                                      f"collectives at {nodes} nodes are already recorded; use --replace to replace "
                                      "them")])
        if lines[header] not in (HEADER, OLD_HEADER):
            raise InputError([Problem(csv_path.name, header + 1, 1, "",
                                      f'the collectives CSV must start "{HEADER}"')])
        with_ranks = lines[header] == HEADER
        kept = measure.without_rows(lines, header, nodes)
        provenance = f"{measure.COMMENT}ingest nccl-tests: {table.operation}, {table.file} sha256 {table.sha256}"
        ranks = f",{table.ranks or ''}" if with_ranks else ""
        rows = [f"{nodes},{t.bytes},{measure.number_text(t.time_us)}{ranks}" for t in table.timings]
        measure.write_lines(csv_path, [*kept, provenance, *rows], collectives=True)
    return len(rows)
