"""The types of JSON values, for the documents reportgen writes (results.json, the JSON Schemas, the API's tables).

Read-only containers (Mapping, Sequence) are covariant, so a `list[str]` or a `dict[str, float]` is a JSON value as
it is; `JsonObject` is the mutable object a writer builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]
# A JSON object another writer made (a history document, a load tester's summary, a schema), read back by key: its
# shape is its writer's, checked where each value is read, so its values are typed Any here, in this one place
JsonRead: TypeAlias = "dict[str, Any]"


def at_path(document: object, path: str) -> Any:
    """The value at a dotted path of objects ("successes.latency.request_latency.mean") of a JSON document another
    writer made, or None where a step is missing or not an object."""
    value: object = document
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
