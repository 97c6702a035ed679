"""`reportgen runs export`: a project's inline `scaling.runs` moved into the CSV that `scaling.file` then names
(docs/measurements.md#moving-inline-runs-to-a-csv).

Runs typed into the project file are where a project starts; `measure` and `ingest` append to a CSV. The move keeps
every value as it was written: a cell holds the run's field as the YAML wrote it ("78 kWh", a bare number in
scaling.time_unit), per-worker times go into one cell separated by spaces, repeats stay rows of their own. The
project file is edited as text, so its comments and layout survive: the `runs:` key and its list become
`file: runs.csv` at the same place.

Nothing is written until the move is proved: the new project is read back with the new CSV and its runs must equal
the old ones, value by value; the CSV is created (never over an existing file) and the project file replaced
atomically; a failure removes the CSV again and leaves the project file as it was.

The project file is the user's: it is edited as the bytes it holds (its byte-order mark and line ends, CR LF or any
other, stay as they are), replaced only if nothing saved it since it was read (an editor's save is never lost), and
written through a symbolic link to the link's target, the link kept.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import math
from dataclasses import dataclass, fields
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reportgen.errors import InputError, OutputError, UsageError
from reportgen.files import ReadCopy, check_replaceable, create_file, read_copy, replace_unchanged, why_unreadable
from reportgen.project.loader import LoadedProject, load_project_text
from reportgen.project.measurements import COLUMNS, is_bare_number, resolve
from reportgen.project.model import Run
from reportgen.project.yaml_hints import LINE_BREAK, yaml_lines

HEADER_NOTE = "# reportgen runs export: moved from {name}'s scaling.runs"


@dataclass(frozen=True)
class Exported:
    csv: Path
    project: Path
    runs: int  # rows written
    columns: tuple[str, ...]


def export_runs(loaded: LoadedProject, csv_name: str = "runs.csv") -> Exported:
    """Move `loaded`'s inline runs into `csv_name` beside it and name that file in scaling.file."""
    scaling = loaded.project.scaling
    if scaling is None or not scaling.runs:
        raise UsageError(f"{loaded.display}: no scaling.runs to export")
    if scaling.file is not None:
        raise UsageError(f"{loaded.display}: the runs already come from scaling.file ({scaling.file})")
    try:
        csv_path = resolve(loaded.path, csv_name)
    except ValueError as error:
        raise UsageError(f"--csv {csv_name}: {error}") from None
    if csv_path.exists():
        raise UsageError(f"{csv_name} exists beside {loaded.display}: name a new file with --csv, or add its rows "
                         "by hand")
    read = _read_as_loaded(loaded)
    bom, text = _decoded(read.data)
    key, value = _runs_entry(loaded)
    columns, rows = _table(value, scaling.time_unit or 1.0, scaling.runs)
    csv_text = "\n".join([HEADER_NOTE.format(name=loaded.path.name), ",".join(columns),
                          *(",".join(_cell(row.get(column, "")) for column in columns) for row in rows)]) + "\n"
    edited = _with_file(text, key, value, csv_name)
    check_replaceable(loaded.path)  # before the CSV is created: it could not be removed from an append-only folder
    create_file(csv_path, csv_text.encode("utf-8"))
    try:
        _prove(loaded, edited, csv_name)
        replace_unchanged(loaded.path, bom + edited.encode("utf-8"), read)
    except BaseException:
        with contextlib.suppress(OSError):
            csv_path.unlink()
        raise
    return Exported(csv_path, loaded.path, len(rows), columns)


def _read_as_loaded(loaded: LoadedProject) -> ReadCopy:
    """The project file's bytes, which must be the ones loaded: the positions the edit uses are theirs."""
    try:
        read = read_copy(loaded.path)
    except OSError as error:
        raise UsageError(f"{loaded.display}: {why_unreadable(error)}") from None
    if hashlib.sha256(read.data).hexdigest() != loaded.input_sha256:
        raise OutputError(f"{loaded.display} changed on disk since reportgen read it (saved by an editor or another "
                          "command?): nothing was written; run the command again")
    return read


def _decoded(data: bytes) -> tuple[bytes, str]:
    """The byte-order mark the file starts with (b"" for none) and its text after it, as the loader decoded it:
    the YAML positions count from the text's first character, and the mark is written back as it was."""
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    return bom, data[len(bom):].decode("utf-8")


def _runs_entry(loaded: LoadedProject) -> tuple[ScalarNode, SequenceNode]:
    """The `runs` key of the scaling section and its list, as the file's YAML composed them."""
    root = loaded.nodes[0] if loaded.nodes else None
    scaling = _value_of(root, "scaling")
    for key, value in scaling.value if isinstance(scaling, MappingNode) else ():
        if isinstance(key, ScalarNode) and key.value == "runs" and isinstance(value, SequenceNode):
            return key, value
    raise UsageError(f"{loaded.display}: scaling.runs is not a list written in the file (an alias or a merge?): "
                     "move the runs by hand")


def _value_of(node: Node | None, name: str) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == name and isinstance(value, Node):
                return value
    return None


def _table(runs: SequenceNode, time_unit: float,
           loaded_runs: tuple[Run, ...]) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """The CSV's columns (in the order the CSV reader documents them) and each run's cells as written."""
    rows: list[dict[str, str]] = []
    for node, run in zip(runs.value, loaded_runs, strict=True):
        row: dict[str, str] = {}
        for key, value in node.value if isinstance(node, MappingNode) else ():
            if isinstance(value, ScalarNode):
                row[key.value] = value.value
            elif key.value == "workers" and isinstance(value, SequenceNode):  # one cell, separated by spaces
                row[key.value] = " ".join(_worker_cell(item, seconds, time_unit)
                                          for item, seconds in zip(value.value, run.workers, strict=True))
        rows.append(row)
    used = {name for row in rows for name in row}
    return tuple(name for name in COLUMNS if name in used), rows


def _worker_cell(item: Node, seconds: float, time_unit: float) -> str:
    """One worker's time in the workers cell: a bare number as it was written ("0.00001" stays, never "1e-05"); a
    time with its unit ("30 min"), whose space would split the cell, as a bare number in time_unit."""
    written = str(item.value).strip() if isinstance(item, ScalarNode) else ""
    if is_bare_number(written):
        return written
    return _number(seconds / time_unit)


def _number(value: float) -> str:
    """A converted time at the 15 digits a double holds reliably, without the noise of its last binary digit that
    the conversion leaves ("0.3", never "0.30000000000000004")."""
    return f"{value:.15g}"


def _cell(text: str) -> str:
    """A CSV cell: quoted where it holds a comma or a quote (the reader takes "" as one quote)."""
    return '"' + text.replace('"', '""') + '"' if ("," in text or '"' in text) else text


def _with_file(text: str, key: ScalarNode, value: SequenceNode, csv_name: str) -> str:
    """The project text with the `runs:` entry replaced by `file: <csv_name>`. A flow list (`runs: [...]`) is
    replaced where it stands; a block list by its lines, up to the last line of its own (comments and blank lines
    after it stay, since they may be the next key's)."""
    entry = f"file: {csv_name}"
    if value.flow_style:
        return text[:key.start_mark.index] + entry + text[value.end_mark.index:]
    lines = yaml_lines(text)  # numbered as the YAML marks number them, whatever the file's line ends
    end = value.end_mark.line if value.end_mark.index < len(text) else len(lines)
    while end > key.start_mark.line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    indent = " " * key.start_mark.column
    break_after_key = LINE_BREAK.search(lines[key.start_mark.line])
    line_end = break_after_key.group() if break_after_key else "\n"  # the file's own line end
    return "".join([*lines[:key.start_mark.line], indent + entry + line_end, *lines[end:]])


def _prove(loaded: LoadedProject, edited: str, csv_name: str) -> None:
    """The edited project, read with the new CSV, holds the very runs the old one did. A read-back that fails
    is said of the project file, in one line: its problems are located in text that was never written."""
    try:
        moved = load_project_text(edited, loaded.path, loaded.display).project.scaling
    except InputError as error:
        first = error.problems[0]
        more = f" (and {len(error.problems) - 1} more)" if len(error.problems) > 1 else ""
        raise UsageError(f"{loaded.display}: its runs cannot move to {csv_name}: read back from it, "
                         f"{first.path or 'a run'}: {first.message}{more}; nothing was changed: move the runs by "
                         "hand") from None
    before = loaded.project.scaling.runs if loaded.project.scaling else ()
    after = moved.runs if moved else ()
    if len(after) != len(before) or not all(_same(old, new) for old, new in zip(before, after, strict=True)):
        raise UsageError(f"{loaded.display}: the runs read back from the CSV differ from the inline ones; nothing "
                         "was changed (please report this)")


def _same(old: Run, new: Run) -> bool:
    """Field by field, each value (each per-worker time) equal; floats to 12 digits, since a time written in minutes
    goes through seconds and back."""
    for field in fields(Run):
        before, after = _items(getattr(old, field.name)), _items(getattr(new, field.name))
        if len(before) != len(after) or not all(map(_equal, before, after)):
            return False
    return True


def _items(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


def _equal(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return a == b
