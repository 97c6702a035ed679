"""Analysis → the results.json document (its keys are a contract: added to, never renamed).

Raw floats in SI base units (seconds, bytes, FLOP, watts; kWh for energy, kg for CO2, the project's currency for
money), unrounded; infinity as the string "inf"; null where a value does not apply; per-scale rows sorted by nodes.
Keys beyond the contract are additions, never renames.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis import RESULTS_SECTIONS, Analysis, sections_values
from reportgen.analysis.declared import ResultsSection
from reportgen.json_types import JsonObject, JsonValue
from reportgen.keys import Key, declared
from reportgen.project.loader import LoadedProject
from reportgen.render.results_schema import Schema, object_properties, value_schema
from reportgen.version import __version__

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class ProjectInfo:
    title: Annotated[str, Key("project.title")]
    revision: Annotated[str | None, Key("project.revision")]
    input_sha256: Annotated[str, Key("SHA-256 of the project file's bytes")]
    measurements_sha256: Annotated[str | None, Key("SHA-256 of the CSV named by scaling.file, when there is one")]
    generator_version: Annotated[str, Key("the reportgen version that wrote the document")]


@dataclass(frozen=True)
class Header:
    """The document's own keys, before its sections."""

    schema_version: Annotated[int, Key("the version of this document's layout: keys are added, never renamed")]
    project: Annotated[ProjectInfo, Key("the project the results are of")]


def results_document(loaded: LoadedProject, analysis: Analysis) -> JsonObject:
    """The results.json document: its version, the project it is of, then every section
    (reportgen.analysis.RESULTS_SECTIONS); numbers as the analyses computed them (infinity a float until `dumps`
    writes it)."""
    info = loaded.project.project
    header = Header(SCHEMA_VERSION, ProjectInfo(info.title, info.revision, loaded.input_sha256,
                                                loaded.measurements_sha256, __version__))
    return {**keys_of(header), **{key: json_of(value) for key, value in sections_values(analysis).items()}}


def keys_of(result: object, *, as_text: bool = False) -> JsonObject:
    """A result dataclass as JSON holds it: its declared keys (reportgen.keys), each value as `json_of` makes it."""
    document: JsonObject = {}
    kind: type = type(result)
    for item in declared(kind):
        value = json_of(getattr(result, item.attribute), as_text=as_text)
        for name in item.names:
            document[name] = value
    return document


def json_of(value: object, *, as_text: bool = False) -> JsonValue:
    """A value in JSON's shapes: a result as its declared keys, rows as lists. `as_text`, as `dumps` writes it:
    infinity as the string "inf" (JSON has no infinity), and NaN, which must never leave the analyses, refused."""
    if isinstance(value, float):
        if as_text and math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if as_text and math.isnan(value):
            raise ValueError("NaN in results")
        return value
    if value is None or isinstance(value, bool | int | str):
        return value
    # rows and objects before the rarer kinds: `dumps` walks every list and object of the document again
    if isinstance(value, list | tuple):
        return [json_of(item, as_text=as_text) for item in value]
    if isinstance(value, dict):
        return {str(key): json_of(item, as_text=as_text) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return keys_of(value, as_text=as_text)
    if isinstance(value, frozenset):
        return [json_of(item, as_text=as_text) for item in sorted(value)]
    if isinstance(value, Mapping):
        return {str(key): json_of(item, as_text=as_text) for key, item in value.items()}
    raise TypeError(f"{type(value).__name__} has no JSON form (declare it as a result with reportgen.keys)")


def dumps(document: JsonObject) -> bytes:
    """Stable UTF-8 text: sorted keys, so two builds of one input are byte-identical.

    The standard library's encoder writes the numbers (Python's shortest repr, as always) in one compact line, with
    its C accelerator; msgspec only re-indents it, copying every literal as written. json.dumps(indent=2) alone
    falls back to the pure-Python encoder: 2.3 s and a list of millions of fragments for 10,000 scales, against
    1.0 s here, for the same bytes. The indented text stays bytes, as it is written: decoded and encoded again it
    was two more copies of a 23 MB document at 10,000 scales, the build's peak of memory."""
    import msgspec

    text = json.dumps(json_of(document, as_text=True), sort_keys=True, ensure_ascii=False, allow_nan=False)
    compact = text.encode("utf-8")
    return msgspec.json.format(compact, indent=2) + b"\n"


def results_schema() -> Schema:
    """The JSON Schema of results.json: its own keys, then each section's (`reportgen schema --results`)."""
    header = object_properties(Header)
    properties = {**header, **{section.key: section_schema(section) for section in RESULTS_SECTIONS}}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": f"https://reportgen.invalid/schema/results-{__version__}.json",
        "title": "reportgen results.json",
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def section_schema(section: ResultsSection[Analysis]) -> Schema:
    """A section's JSON Schema, derived from its result's declared keys."""
    return value_schema(section.type, Key(section.doc))


def results_schema_text() -> str:
    """`reportgen schema --results`."""
    return json.dumps(results_schema(), indent=2, ensure_ascii=False) + "\n"
