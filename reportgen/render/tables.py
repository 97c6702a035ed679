"""The tables of a results.json document: every list of rows in it, named by where it sits, with nested values
flattened into columns. One source for the Python API's DataFrames and for `build --format csv` (csv_files), so
that a column is called what results.json calls it.

Names: a section's `rows` is the section itself (`scaling`, `prediction`, `cost`); any other list of rows is the
path to it, dotted (`prediction.sensitivity`, `cost.regimes.spot`, `diagnosis.walls`); a section that is a list of
rows is its own name (`decisions`, `findings`). Nested objects become dotted columns (`limits.max_time_s`);
lists of plain values stay lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from reportgen.json_types import JsonObject, JsonValue

Row = JsonObject


def tables(document: Mapping[str, JsonValue]) -> dict[str, list[Row]]:
    """Every table of the document, by name, in the document's order of sections."""
    found: dict[str, list[Row]] = {}
    for section, value in document.items():
        _collect(section, value, found)
    return found


def _collect(name: str, value: JsonValue, found: dict[str, list[Row]]) -> None:
    if _is_rows(value):
        found[name] = [_flat(row) for row in value]
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _collect(name if key == "rows" else f"{name}.{key}", item, found)


def _is_rows(value: JsonValue) -> TypeGuard[list[Mapping[str, JsonValue]]]:
    return isinstance(value, list) and bool(value) and all(isinstance(item, Mapping) for item in value)


def _flat(row: Mapping[str, JsonValue], prefix: str = "") -> Row:
    flat: Row = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def file_name(table: str) -> str:
    """The CSV file of a table: `cost.regimes.spot` → `cost-regimes-spot.csv`."""
    return table.replace(".", "-") + ".csv"


# A text cell a spreadsheet would run as a formula starts with one of these (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralised(value: JsonValue) -> JsonValue:
    """A text cell that a spreadsheet would run as a formula ("=HYPERLINK(…)", "@SUM(…)"), prefixed with an
    apostrophe so that it shows as the text it is; numbers and every other value as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_files(document: Mapping[str, JsonValue]) -> dict[str, bytes]:
    """`build --format csv`: each table of the document as a CSV file (full precision, `inf` for infinity,
    lists as JSON text, text that a spreadsheet would take for a formula neutralised)."""
    import json

    import pandas as pd  # only for a build that asks for CSV

    files = {}
    for name, rows in tables(document).items():
        frame = pd.DataFrame.from_records([{key: neutralised(json.dumps(value) if isinstance(value, list) else value)
                                            for key, value in row.items()} for row in rows])
        files[file_name(name)] = frame.to_csv(index=False, lineterminator="\n").encode("utf-8")
    return files
