"""The types of JSON values, for the documents reportgen writes (results.json, the JSON Schemas, the API's tables).

Read-only containers (Mapping, Sequence) are covariant, so a `list[str]` or a `dict[str, float]` is a JSON value as
it is; `JsonObject` is the mutable object a writer builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]
