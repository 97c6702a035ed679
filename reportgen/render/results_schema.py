"""The JSON Schema of results.json, derived from the result dataclasses' declared keys (reportgen.keys).

Each key's type comes from its annotation, its description from its `Key`; nothing here names a result field, so
a key cannot be written without its description nor described without being written. Units follow the document's
rule: seconds, bytes, FLOP, watts; kWh for energy, kg for CO2, the project's currency for money; infinity is the
string "inf". Every object lists all its keys (`required`) and no others (`additionalProperties: false`).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator
from typing import Literal, Union, get_args, get_origin

from reportgen.json_types import JsonObject
from reportgen.keys import Key, declared

Schema = JsonObject

_NUMBER: Schema = {"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf"]}]}  # JSON has no infinity
_SCALARS: dict[object, Schema] = {float: _NUMBER, int: {"type": "integer"}, bool: {"type": "boolean"},
                               str: {"type": "string"}}
_BOUND = Key("a bound")


def value_schema(of: object, key: Key) -> Schema:
    """The schema of one value of type `of`, described by `key` (its doc; for an array, what one item is)."""
    kinds = get_args(of) if get_origin(of) in (Union, types.UnionType) else (of,)
    present = tuple(kind for kind in kinds if kind is not type(None))
    if len(present) != 1:
        raise TypeError(f"{key.doc!r}: a results key has one type (or that type or None), not {of!r}")
    schema = _shape(present[0], key)
    return _nullable(schema) if len(kinds) > len(present) else schema


def object_schema(cls: type, doc: str) -> Schema:
    """A result dataclass as an object: every declared key, required, and no other."""
    properties = object_properties(cls)
    return {"type": "object", "description": doc, "properties": properties, "required": list(properties),
            "additionalProperties": False}


def object_properties(cls: type) -> dict[str, Schema]:
    """Each declared key of a result dataclass and its schema."""
    keys = declared(cls)
    if not keys:
        raise TypeError(f"{cls.__name__} is in results.json but declares no key (annotate its fields with Key)")
    return {name: value_schema(item.type, item.key) for item in keys for name in item.names}


def keys_in(of: object) -> Iterator[tuple[str, Key]]:
    """Every key declared in a type and the types inside it (rows, nested results), with its declaration."""
    for inner in get_args(of):
        yield from keys_in(inner)
    if dataclasses.is_dataclass(of) and isinstance(of, type):
        for item in declared(of):
            yield from ((name, item.key) for name in item.names)
            yield from keys_in(item.type)


def _shape(of: object, key: Key) -> Schema:
    origin, args = get_origin(of), get_args(of)
    if origin is Literal:
        return {"enum": list(args), "description": key.doc}
    if of in _SCALARS:
        return {**_SCALARS[of], "description": key.doc}
    if dataclasses.is_dataclass(of) and isinstance(of, type):
        return object_schema(of, key.doc)
    if origin is tuple and args == (float, float):
        return {"type": "array", "items": value_schema(float, _BOUND), "minItems": 2, "maxItems": 2,
                "description": key.doc}
    if origin in (tuple, list, frozenset) and args:
        return {"type": "array", "description": key.doc, "items": value_schema(args[0], Key(key.item))}
    if origin is dict and key.keys:
        properties = {name: value_schema(args[1], Key(key.item.format(key=name))) for name in key.keys}
        return {"type": "object", "description": key.doc, "properties": properties, "required": list(key.keys),
                "additionalProperties": False}
    if origin is dict:
        return {"type": "object", "description": key.doc, "additionalProperties": value_schema(args[1],
                                                                                             Key(key.item))}
    raise TypeError(f"{key.doc!r}: no JSON shape for {of!r}")


def _nullable(schema: Schema) -> Schema:
    """The same schema admitting null: a null branch, a null value or a null type, as the schema's form allows."""
    branches, values = schema.get("anyOf"), schema.get("enum")
    if isinstance(branches, list):
        return {**schema, "anyOf": [*branches, {"type": "null"}]}
    if isinstance(values, list):
        return {**schema, "enum": [*values, None]}
    return {**schema, "type": [schema["type"], "null"]}
