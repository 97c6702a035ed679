"""Every figure page 1 quotes, with the results.json path it is copied from
(docs/methods.md#every-figure-has-one-source).

A sentence takes each figure it writes through `quote(owner, attribute)`: the value of one key of a result, which is
recorded, with its path (`goal.at_plan[1].time_s`), in the figures of the text being written. `Sources` finds the
path by the object, never by the value: it indexes the results page 1 reads once, so a figure is the very value
results.json holds, and a figure a sentence recomputes beside it has no path and is caught by the invariant that
every figure on page 1 is one of `summary.quantities`.

A text function marked `@quoting` returns its text as a `Quoted` string that carries the figures it quoted (a
candidate keeps those of its text, so the chosen one's reach page 1); `recording` gathers the figures of a whole
page. Outside both, `quote` only reads the value: the words of a diff or a table quote nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, is_dataclass
from typing import Annotated, Any, ParamSpec, TypeVar, cast

from reportgen.keys import DocumentPath, Key, declared
from reportgen.project.model import RegimeName

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Quantity:
    """One figure page 1 quotes, copied from the one analysis that owns it."""

    name: Annotated[str, Key("what it is")]
    value: Annotated[float, Key("the value, in SI units (money in the project's currency)")]
    unit: Annotated[str, Key("s, currency, fraction, nodes, B, ...")]
    regime: Annotated[RegimeName | None, Key("the price regime it belongs to (null: none)")]
    source: Annotated[str, Key("the results.json path it is copied from")]


@functools.cache
def _key_names(kind: type) -> dict[str, str]:
    """A result type's attributes and the results.json key each is written as."""
    return {item.attribute: item.names[0] for item in declared(kind)}


Renamed = Mapping[str, str]


@dataclass
class Sources:
    """Where each result object page 1 reads lies in results.json. An object the document writes through another
    type (the goal's checks as its rows) is added with that type (`written_as`) and the attributes it names
    otherwise (`renamed`); an object written in two places (a service's plan node count) has both."""

    _at: dict[int, list[tuple[str, type | None, Renamed]]] = field(default_factory=dict)
    _held: list[object] = field(default_factory=list)  # keeps each indexed object alive, so no id is reused
    _walked: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, sections: Mapping[str, object], written: Iterable[DocumentPath] = ()) -> Sources:
        """The sections as results.json holds them, after the objects written as another type."""
        sources = cls()
        for owner, path, written_as, renamed in written:
            sources.write_as(owner, path, written_as, renamed)
        for key, value in sections.items():
            sources.walk(value, key)
        return sources

    def add(self, owner: object, path: str, written_as: type | None = None, renamed: Renamed | None = None) -> bool:
        """Index the object at this path; false when it already was (nothing to walk again)."""
        if owner is None:
            return False
        entries = self._at.setdefault(id(owner), [])
        if not entries:
            self._held.append(owner)
        if any(entry[0] == path for entry in entries):
            return False
        entries.append((path, written_as, renamed or {}))
        return True

    def write_as(self, owner: object, path: str, written_as: type, renamed: Renamed) -> None:
        """An object results.json writes as `written_as`, and the results it holds under that type's keys."""
        if not self.add(owner, path, written_as, renamed):
            return
        inverse = {name: attribute for attribute, name in renamed.items()}
        for attribute, name in _key_names(written_as).items():
            self.walk(getattr(owner, inverse.get(attribute, attribute), None), f"{path}.{name}")

    def walk(self, value: object, path: str) -> None:
        """A result as results.json writes it: each dataclass by its declared keys, rows by index, mappings by
        key. An object met again (one row shown in two places) keeps its first path."""
        if value is None or isinstance(value, str | bytes | int | float | bool) or id(value) in self._walked:
            return
        if is_dataclass(value) and not isinstance(value, type):
            names = _key_names(type(value))
            if names:
                self._walked.add(id(value))
                self.add(value, path)
                for attribute, name in names.items():
                    self.walk(getattr(value, attribute), f"{path}.{name}")
        elif isinstance(value, list | tuple | Mapping):
            self._walked.add(id(value))
            self.add(value, path)
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for key, item in items:
                self.walk(item, f"{path}.{key}" if isinstance(value, Mapping) else f"{path}[{key}]")

    def path(self, owner: object, attribute: str | int) -> str | None:
        for path, written_as, renamed in self._at.get(id(owner), ()):
            if isinstance(owner, Mapping):
                return f"{path}.{attribute}"
            if isinstance(owner, list | tuple):
                return f"{path}[{attribute}]"
            name = renamed.get(str(attribute), str(attribute))
            names = _key_names(written_as or type(owner))
            if name in names:
                return f"{path}.{names[name]}"
        return None


_SOURCES: ContextVar[Sources | None] = ContextVar("sources", default=None)
_FIGURES: ContextVar[list[Quantity] | None] = ContextVar("figures", default=None)


def quote(owner: Any, attribute: str | int, unit: str = "", name: str | None = None) -> Any:
    """The value of `owner`'s key `attribute` (a row's index, a mapping's key), recorded as a figure of the text
    being written when its path in results.json is known."""
    if isinstance(owner, Mapping):
        value = owner[attribute]
    elif isinstance(owner, list | tuple):
        value = owner[int(attribute)]
    else:
        value = getattr(owner, str(attribute))
    figures, sources = _FIGURES.get(), _SOURCES.get()
    if figures is not None and sources is not None and isinstance(value, int | float) and \
            not isinstance(value, bool):
        path = sources.path(owner, attribute)
        if path is not None:
            regime = cast(RegimeName | None, getattr(owner, "regime", None))  # a row's price regime, or none
            figures.append(Quantity(name or str(attribute).replace("_", " "), float(value), unit,
                                    regime if isinstance(regime, str) else None, path))
    return value


def count_at(rows: Sequence[object], count: float) -> float:
    """A node count, quoted from the row of that scale when one holds it."""
    row = next((row for row in rows if getattr(row, "nodes", None) == count), None)
    return quote(row, "nodes", "nodes") if row is not None else count


class Quoted(str):
    """A text with the figures it quotes."""

    figures: tuple[Quantity, ...] = ()


def quoted(text: str, figures: list[Quantity]) -> Quoted:
    out = Quoted(text)
    out.figures = unique(figures)
    return out


def unique(figures: list[Quantity] | tuple[Quantity, ...]) -> tuple[Quantity, ...]:
    """Each source once, in the order first quoted."""
    seen: dict[str, Quantity] = {}
    for figure in figures:
        seen.setdefault(figure.source, figure)
    return tuple(seen.values())


def quoting(text_of: Callable[P, str]) -> Callable[P, Quoted]:
    """A text function whose text carries the figures it quoted (and passes them to a text that quotes it)."""
    @functools.wraps(text_of)
    def written(*args: P.args, **kwargs: P.kwargs) -> Quoted:
        figures: list[Quantity] = []
        token = _FIGURES.set(figures)
        try:
            text = text_of(*args, **kwargs)
        finally:
            _FIGURES.reset(token)
        outer = _FIGURES.get()
        if outer is not None:
            outer.extend(figures)
        return quoted(text, figures)
    return written


@contextmanager
def recording(sources: Sources) -> Iterator[list[Quantity]]:
    """Quote from these sources: the figures every text written inside quotes, in order."""
    figures: list[Quantity] = []
    source_token, figures_token = _SOURCES.set(sources), _FIGURES.set(figures)
    try:
        yield figures
    finally:
        _FIGURES.reset(figures_token)
        _SOURCES.reset(source_token)


def figures_of(text: str) -> tuple[Quantity, ...]:
    """The figures a text quoted (none for a plain string)."""
    return text.figures if isinstance(text, Quoted) else ()
