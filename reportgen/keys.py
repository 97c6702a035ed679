"""Result fields that are results.json keys, each declared once, on the result's own dataclass.

A field is a key when its annotation carries a `Key`: `nodes: Annotated[int, Key("the node count")]`. The key's
JSON type comes from the annotation (float → number, `X | None` → nullable, a Literal → its values, a tuple of rows →
an array of objects, a dataclass → an object), its description from the `Key`, so results.json
(`reportgen.render.results`) and its JSON Schema (`reportgen.render.results_schema`) are both derived from here and
cannot drift apart. A value the document shapes differently from the field (two fields as one object, a row
seen per hour) is a property marked `@derived(Key(...))`: its return annotation is its type. Fields without a `Key`
are the analyses' own working values and stay out of results.json.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar, get_type_hints, overload

T = TypeVar("T")
Owner = TypeVar("Owner")


@dataclass(frozen=True)
class Key:
    doc: str  # what the value means: the schema's description and the results reference's text
    name: str | None = None  # its results.json key, when not the field's own name
    also: tuple[str, ...] = ()  # further keys holding the same value (an earlier name, kept for old readers)
    item: str = "one row"  # an array's or a mapping's values: what one of them is ("{key}": its key)
    keys: tuple[str, ...] = ()  # a mapping's fixed keys: an object with exactly these, each an item
    # The value's unit where the key's name does not say it (a name ending _s, _b, _kwh, _kg does): "currency" for
    # money, which the Python API's DataFrames label with the project's currency
    unit: str | None = None


class Derived(Generic[Owner, T]):
    """A read-only property whose value is a results.json key (made by `derived`)."""

    def __init__(self, read: Callable[[Owner], T], key: Key) -> None:
        self.read = read
        self.key = key
        self.__doc__ = key.doc

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Derived[Owner, T]: ...

    @overload
    def __get__(self, instance: Owner, owner: type | None = None) -> T: ...

    def __get__(self, instance: Owner | None, owner: type | None = None) -> T | Derived[Owner, T]:
        return self if instance is None else self.read(instance)


def derived(key: Key) -> Callable[[Callable[[Owner], T]], Derived[Owner, T]]:
    """Mark a method as a results.json key computed from the result's fields."""
    return lambda read: Derived(read, key)


# An object, its path in results.json, the result type it is written as there, and its attributes that type names
# otherwise: where a result the document reshapes lies (page 1's figures find their source by it).
DocumentPath = tuple[object, str, type, Mapping[str, str]]


@dataclass(frozen=True)
class Declared:
    """One key of a result type: where its value is read, what type it has and what it means."""

    attribute: str
    type: object  # its annotation, without the Key: float, int | None, tuple[Row, ...]
    key: Key

    @functools.cached_property  # (read for every row results.json writes: 100,000 at 10,000 scales)
    def names(self) -> tuple[str, ...]:
        return (self.key.name or self.attribute, *self.key.also)


@functools.cache
def declared(cls: type) -> tuple[Declared, ...]:
    """The results.json keys of a result dataclass: its keyed fields, then its derived keys, in class order."""
    hints = get_type_hints(cls, include_extras=True)
    keys = [Declared(field.name, hints[field.name].__origin__, key) for field in dataclasses.fields(cls)
            if (key := _key_of(hints[field.name])) is not None]
    for name, value in vars(cls).items():
        if isinstance(value, Derived):
            keys.append(Declared(name, get_type_hints(value.read)["return"], value.key))
    return tuple(keys)


def _key_of(hint: object) -> Key | None:
    return next((extra for extra in getattr(hint, "__metadata__", ()) if isinstance(extra, Key)), None)


def interval(of: str, *, name: str | None = None, also: tuple[str, ...] = (), unit: str | None = None) -> Key:
    """The key of a 95 % interval [low, high] from repeated runs."""
    return Key(f"95 % percentile-bootstrap interval [low, high] of {of} over the repeats (2,000 seeded resamples); "
               "null with one run", name=name, also=also, unit=unit)


def money(doc: str, *, name: str | None = None, also: tuple[str, ...] = ()) -> Key:
    """The key of an amount of money, in the project's currency."""
    return Key(doc, name=name, also=also, unit=CURRENCY)


CURRENCY = "currency"  # the unit of money: the project's currency


# A results.json key's unit, said by its name's suffix (longest first): `time_s` is seconds, `energy_kwh` kWh
UNIT_SUFFIXES = (("_g_per_kwh", "g/kWh"), ("_bytes_per_s", "B/s"), ("_per_s", "1/s"), ("_kwh", "kWh"),
                 ("_kg", "kg"), ("_s", "s"), ("_b", "B"))


def with_unit(name: str, unit: str | None = None) -> str:
    """A key as a column's heading, in one convention: the unit in brackets after the quantity (`time [s]`); `unit`
    where the name does not say it (money: the project's currency)."""
    if unit is not None:
        return f"{name} [{unit}]"
    for suffix, said in UNIT_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return f"{name.removesuffix(suffix)} [{said}]"
    return name
