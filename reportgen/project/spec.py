# A failed read returns INVALID (typed Any, its problem already recorded) where the spec's own type is declared:
# INVALID never reaches a model, because read_struct refuses a section holding one, so the declared type holds.
# mypy: disable-error-code="no-any-return"
"""Declarative field specifications: each kind reads a YAML node into a value and describes itself in JSON Schema.

The model's dataclasses carry one of these per field (`dataclasses.field(metadata=...)`), so the loader, the JSON
Schema and the starter project are all derived from one description of the project file.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, overload

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reportgen.errors import Problem
from reportgen.json_types import JsonObject
from reportgen.project import units
from reportgen.project.yaml_source import problem_at

_YAML = "tag:yaml.org,2002:"
MAX_PROBLEMS = 200


class _Invalid:
    """Marks a value that failed to read; its problem is already recorded."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()


class Reader:
    """Collects every problem of one input while the specs read it."""

    def __init__(self, display: str, *, currency: str = "USD") -> None:
        self.display = display
        self.currency = currency
        self.problems: list[Problem] = []
        self.bare_time_unit: float | None = None  # seconds per bare number, inside `scaling` with time_unit set

    def error(self, node: Node | None, path: str, message: str) -> Any:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem_at(node.start_mark if node else None, self.display, path, message))
        return INVALID

    @contextmanager
    def time_unit(self, seconds: float | None) -> Iterator[None]:
        previous, self.bare_time_unit = self.bare_time_unit, seconds
        try:
            yield
        finally:
            self.bare_time_unit = previous


def describe_node(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if node.tag == _YAML + "null":
        return "nothing"
    text = str(node.value)
    return f'"{text[:60]}…"' if len(text) > 60 else f'"{text}"'


def scalar_text(node: Node) -> str | None:
    return str(node.value) if isinstance(node, ScalarNode) and node.tag != _YAML + "null" else None


def file_name_text(node: Node) -> str | None:
    """A file name as the project file writes it (its surrounding blanks dropped), to open the file by: the
    loader and a revision's names pass read one name alike (None: not a scalar, or null)."""
    text = scalar_text(node)
    return text.strip() if text is not None else None


def is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _YAML + "null"


Value = TypeVar("Value")
Read = TypeVar("Read", covariant=True)
Choice = TypeVar("Choice", bound=str)
Struct = TypeVar("Struct")


class Reads(Protocol[Read]):
    """A spec as `field` and `Items` see it: by the type its `read` returns, which the field's annotation must hold."""

    def read(self, node: Node, path: str, reader: Reader) -> Read: ...

    def json_schema(self) -> JsonObject: ...

    def kind(self) -> str: ...

    def example_text(self) -> str: ...


class Spec:
    """One kind of field. Each subclass's `read` names the type it returns, so that mypy checks every field's
    annotation against its spec (see `field`); a failed read returns INVALID, typed Any, after recording why."""

    doc: str = ""

    def read(self, node: Node, path: str, reader: Reader) -> Any:
        raise NotImplementedError

    def json_schema(self) -> JsonObject:
        raise NotImplementedError

    def kind(self) -> str:
        """What the value is, for the project-file reference ("time", "one of a, b")."""
        raise NotImplementedError

    def example_text(self) -> str:
        """A value as it is written in a project file, for the reference and the starter; "" when none fits."""
        return ""


_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ISOLATE_OPENERS = "\u2066\u2067\u2068"  # LRI, RLI, FSI
_FSI, _PDI = "\u2068", "\u2069"


# Where the bidi algorithm starts a new paragraph (class B: line feed, carriage return, the information separators,
# NEL, U+2029) and U+2028, which renderers break a line at: an isolate opened before one of them does not reach
# past it (rule X8 ends every isolate at a paragraph's end), so an override after it would run on unisolated.
_BIDI_BREAKS = re.compile("([\n\r\x1c-\x1e\x85\u2028\u2029])")


def bidi_isolated(text: str) -> str:
    """Project text that carries bidirectional controls, isolated so that they act inside it only: an override
    (U+202E) left open in a title reversed the report's own sentences after it, in the HTML and the PDF. Each line
    of the text (split at every paragraph and line separator) is wrapped in FSI … PDI (an isolate's closing PDI ends
    every embedding and override opened inside it, Unicode's bidi algorithm, rule X6a); a PDI with no isolate of the
    line's own to close is dropped (it would close the wrapper), and isolates the line leaves open are closed. Text
    without such controls is returned as it is."""
    if not _BIDI_CONTROLS.search(text):
        return text
    pieces = _BIDI_BREAKS.split(text)  # lines at even positions, the separators between them at odd ones
    return "".join(piece if position % 2 else _isolated_line(piece) for position, piece in enumerate(pieces))


def _isolated_line(text: str) -> str:
    """One line with no paragraph or line separator, wrapped in FSI … PDI when it carries bidi controls."""
    if not _BIDI_CONTROLS.search(text):
        return text
    kept, depth = [], 0
    for character in text:
        if character in _ISOLATE_OPENERS:
            depth += 1
        elif character == _PDI:
            if depth == 0:
                continue
            depth -= 1
        kept.append(character)
    return _FSI + "".join(kept) + _PDI * depth + _PDI


@dataclass(frozen=True)
class Text(Spec):
    doc: str = ""
    max_length: int = 20_000
    example: str = ""  # for the reference and the starter

    def read(self, node: Node, path: str, reader: Reader) -> str:
        text = scalar_text(node)
        if text is None or node.tag in (_YAML + "bool",):
            return reader.error(node, path, f"expected text, got {describe_node(node)}")
        text = text.strip()
        if len(text) > self.max_length:
            return reader.error(node, path, f"text longer than {self.max_length} characters")
        return bidi_isolated(text)

    def json_schema(self) -> JsonObject:
        return {"type": "string", "description": self.doc}

    def kind(self) -> str:
        return "text"

    def example_text(self) -> str:
        return self.example


@dataclass(frozen=True)
class OneOf(Spec, Generic[Choice]):
    """Text from a fixed vocabulary, read as the vocabulary's own type (a Literal), so comparisons type-check."""

    doc: str = ""
    choices: tuple[Choice, ...] = ()
    example: str = ""  # for the reference and the starter; the first choice when empty

    def read(self, node: Node, path: str, reader: Reader) -> Choice:
        text = Text().read(node, path, reader)
        if isinstance(text, _Invalid):
            return INVALID
        by_name: dict[str, Choice] = {name: name for name in self.choices}
        choice = by_name.get(text)
        if choice is not None:
            return choice
        return reader.error(node, path, f"expected one of {_or_list(self.choices)}, got \"{text}\""
                            + did_you_mean(text, self.choices))

    def json_schema(self) -> JsonObject:
        return {"type": "string", "description": self.doc, "enum": list(self.choices)}

    def kind(self) -> str:
        return f"one of: {', '.join(self.choices)}"

    def example_text(self) -> str:
        return self.example or self.choices[0]


@dataclass(frozen=True)
class Names(Spec):
    """One name or a list of names, always read as a tuple."""

    doc: str = ""
    example: str = ""

    def read(self, node: Node, path: str, reader: Reader) -> tuple[str, ...]:
        nodes = node.value if isinstance(node, SequenceNode) else [node]
        values = [Text().read(item, path, reader) for item in nodes]
        return INVALID if INVALID in values else tuple(values)

    def json_schema(self) -> JsonObject:
        return {"description": self.doc,
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}

    def kind(self) -> str:
        return "text, or a list of texts"

    def example_text(self) -> str:
        return self.example


@dataclass(frozen=True)
class Choices(Spec):
    """A slot choice: one or several entries, from a known vocabulary or free text (kept, and shown as such)."""

    vocabulary: tuple[str, ...] = ()
    doc: str = ""

    def read(self, node: Node, path: str, reader: Reader) -> tuple[str, ...]:
        choices = Names().read(node, path, reader)
        if choices is INVALID:
            return INVALID
        if not choices or not all(choice.strip() for choice in choices):  # the report names the choice it judges
            return reader.error(node, path, "names no choice: give one, or a list of them for a hybrid")
        return choices

    def json_schema(self) -> JsonObject:
        one: JsonObject = {"type": "string", "minLength": 1, "examples": list(self.vocabulary)}
        return {"description": self.doc, "anyOf": [one, {"type": "array", "items": one, "minItems": 1}]}

    def kind(self) -> str:
        return "text, or a list of texts for a hybrid"

    def example_text(self) -> str:
        return self.vocabulary[0] if self.vocabulary else ""


@dataclass(frozen=True)
class Flag(Spec):
    doc: str = ""

    def read(self, node: Node, path: str, reader: Reader) -> bool:
        if isinstance(node, ScalarNode) and node.tag == _YAML + "bool":
            return node.value.lower() in ("true", "yes", "on", "y")
        return reader.error(node, path, f"expected true or false, got {describe_node(node)}")

    def json_schema(self) -> JsonObject:
        return {"type": "boolean", "description": self.doc}

    def kind(self) -> str:
        return "true or false"

    def example_text(self) -> str:
        return "false"


def number_of(node: Node) -> float | None:
    """A YAML number, or a string that is one (PyYAML reads 1.3e9 as a string: YAML 1.1 wants 1.3e+9)."""
    if not isinstance(node, ScalarNode) or node.tag == _YAML + "bool":
        return None
    text = str(node.value).replace("_", "")
    if node.tag == _YAML + "float" and text.lower().lstrip("+-") in (".inf", ".nan"):
        return float(text.lower().replace(".", ""))  # YAML's .inf and .nan: read, then refused as not finite
    if node.tag in (_YAML + "int", _YAML + "float") or (node.tag == _YAML + "str" and units.is_number_text(text)):
        try:
            return float(text)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class Number(Spec):
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    integer: bool = False
    example: str = "1"
    whole_as_int: bool = False  # a whole value is returned as an int (a load level that is often a node count)

    def read(self, node: Node, path: str, reader: Reader) -> float:
        value = number_of(node)
        kind = "a whole number" if self.integer else "a number"
        if value is None:
            return reader.error(node, path, f"expected {kind} like {self.example}, got {describe_node(node)}")
        if not math.isfinite(value):
            return reader.error(node, path, f"expected a finite number, got {describe_node(node)}")
        if value != 0 and not units.MIN_MAGNITUDE <= abs(value) <= units.MAX_MAGNITUDE:
            return reader.error(node, path, f"out of range: numbers are read from 10⁻³⁰ to 10³⁰, got "
                                f"{describe_node(node)}")
        if self.integer and value != int(value):
            return reader.error(node, path, f"expected a whole number, got {describe_node(node)}")
        if self.minimum is not None and (value < self.minimum or (self.exclusive_minimum and value == self.minimum)):
            return reader.error(node, path, f"must be {self._range()}, got {describe_node(node)}")
        if self.maximum is not None and value > self.maximum:
            return reader.error(node, path, f"must be {self._range()}, got {describe_node(node)}")
        return int(value) if self.integer or (self.whole_as_int and value == int(value)) else value

    def _range(self) -> str:
        def shown(bound: float) -> str:  # a whole bound with its thousands (1,048,576), else as %g
            return f"{int(bound):,}" if bound == int(bound) else f"{bound:g}"
        if self.integer and self.minimum == 1:
            return "a positive whole number" + (f" up to {shown(self.maximum)}" if self.maximum is not None else "")
        if self.minimum is not None and self.maximum is not None and not self.exclusive_minimum:
            return f"between {shown(self.minimum)} and {shown(self.maximum)}"
        low = f"{'greater than' if self.exclusive_minimum else 'at least'} {shown(self.minimum)}" \
            if self.minimum is not None else ""
        high = f"at most {shown(self.maximum)}" if self.maximum is not None else ""
        return " and ".join(part for part in (low, high) if part)

    def json_schema(self) -> JsonObject:
        schema: JsonObject = {"type": "integer" if self.integer else "number", "description": self.doc}
        if self.minimum is not None:
            schema["exclusiveMinimum" if self.exclusive_minimum else "minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema

    def kind(self) -> str:
        if self.minimum is None and self.maximum is None:
            return "a whole number" if self.integer else "a number"
        return self._range()

    def example_text(self) -> str:
        return self.example


@dataclass(frozen=True)
class Whole(Number):
    """A whole number, read as an int."""

    integer: bool = True

    def read(self, node: Node, path: str, reader: Reader) -> int:
        value = super().read(node, path, reader)
        return INVALID if isinstance(value, _Invalid) else int(value)


def Count(doc: str = "", example: str = "8") -> Whole:
    return Whole(doc=doc, minimum=1, example=example)


MAX_NODES = 1 << 20  # node counts: past any cluster built, and a bound on what one number makes the model evaluate


def NodeCount(doc: str = "", example: str = "8") -> Whole:
    return Whole(doc=doc, minimum=1, maximum=MAX_NODES, example=example)


def Fraction(doc: str = "") -> Number:
    return Number(doc=doc, minimum=0.0, maximum=1.0, example="0.4")


@dataclass(frozen=True)
class Share(Number):
    """A share between 0 and 1, also written as a percentage ("99 %", "99.5%"), which reads alike."""

    minimum: float | None = 0.0
    maximum: float | None = 1.0
    example: str = "99 %"

    def read(self, node: Node, path: str, reader: Reader) -> float:
        text = str(node.value).strip() if isinstance(node, ScalarNode) and node.tag == _YAML + "str" else ""
        if text.endswith("%") and units.is_number_text(number := text[:-1].strip()):
            value = float(number) / 100
            if math.isfinite(value) and 0.0 <= value <= 1.0:
                return value
            return reader.error(node, path, f"must be between 0 % and 100 %, got {describe_node(node)}")
        return super().read(node, path, reader)

    def json_schema(self) -> JsonObject:
        return {"description": self.doc, "oneOf": [{"type": "number", "minimum": 0.0, "maximum": 1.0},
                                                   {"type": "string", "pattern": r"^\s*\d+(\.\d*)?\s*%\s*$"}]}

    def kind(self) -> str:
        return "a share between 0 and 1, or a percentage"


def Positive(doc: str = "", example: str = "1.3e9") -> Number:
    return Number(doc=doc, minimum=0.0, exclusive_minimum=True, example=example)


QUANTITY_PATTERN = r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*\S.*$"


@dataclass(frozen=True)
class Quantity(Spec):
    """A number with a unit of the given dimension, stored in that dimension's SI unit."""

    dimension: units.Dimension = units.TIME
    doc: str = ""
    allow_zero: bool = False  # times and sizes are positive unless a zero means something (no communication)
    bare_in_time_unit: bool = False  # inside scaling: a bare number is in scaling.time_unit
    example: str | None = None  # the field's own example ("8 us" for a latency); else the dimension's
    also: tuple[units.Dimension, ...] = ()  # other dimensions accepted, each stored in its own SI unit
    # A rate whose field name says its period: "400 USD" in `cost_per_hour` is 400 USD per hour.
    # (the amount's dimension, the period in seconds)
    per_name: tuple[units.Dimension, float] | None = None

    @property
    def shown_example(self) -> str:
        return self.example or self.dimension.example

    def read(self, node: Node, path: str, reader: Reader) -> float:
        text = scalar_text(node)
        if text is None or node.tag == _YAML + "bool":
            return reader.error(node, path, f'expected {self.dimension.name} like '
                                f'"{self.shown_example.replace("USD", reader.currency)}", got {describe_node(node)}')
        try:
            if number_of(node) is not None and self.bare_in_time_unit and reader.bare_time_unit is not None:
                value = self._from_bare(float(text), reader.bare_time_unit)
            else:
                value = self._parse(text, reader.currency)
        except units.UnitProblem as problem:
            message = str(problem)
            if self.bare_in_time_unit and "without a unit" in message:
                message += "; or set scaling.time_unit to write bare numbers"
            return reader.error(node, path, message)
        if value < 0 or (value == 0 and not self.allow_zero):
            return reader.error(node, path, f"must be {'zero or more' if self.allow_zero else 'more than zero'}, "
                                f"got {describe_node(node)}")
        return value

    def _parse(self, text: str, currency: str) -> float:
        """The quantity in the field's dimension; else, for a rate named by its period, an amount over it. A text
        that is neither is refused with the field's own dimension in the message."""
        try:
            return units.parse_quantity(text, self.dimension, currency=currency, example=self.example, also=self.also)
        except units.UnitProblem as problem:
            if self.per_name is None:
                raise
            refusal = problem
        amount, seconds = self.per_name
        try:
            return units.parse_quantity(text, amount, currency=currency) / seconds
        except units.UnitProblem:
            raise refusal from None

    def _from_bare(self, number: float, seconds_per_unit: float) -> float:
        if self.dimension in (units.TIME, units.RATE):
            value = number * seconds_per_unit if self.dimension == units.TIME else number / seconds_per_unit
            if not math.isfinite(value) or (value != 0 and not units.MIN_MAGNITUDE <= abs(value)
                                            <= units.MAX_MAGNITUDE):
                raise units.UnitProblem(f"out of range: quantities are read from 10⁻³⁰ to 10³⁰ in SI units, and "
                                        f"this is {value:.3g} {self.dimension.si_unit}")
            return value
        raise units.UnitProblem(f'expected {self.dimension.name} like "{self.dimension.example}": '
                                "scaling.time_unit applies to times and rates only")

    def json_schema(self) -> JsonObject:
        text = {"type": "string", "pattern": QUANTITY_PATTERN}
        examples = [self.shown_example, *(other.example for other in self.also)]
        schema: JsonObject = {"description": f"{self.doc} ({self.dimension.name}, e.g. "
                                  + " or ".join(f'"{e}"' for e in examples) + ")", "examples": examples}
        if self.bare_in_time_unit or self.dimension == units.WORK:
            schema["anyOf"] = [text, {"type": "number"}]
        else:
            schema.update(text)
        return schema

    def kind(self) -> str:
        return self.dimension.name + "".join(f" or {other.name}" for other in self.also) + (
            ", zero allowed" if self.allow_zero else "") + (
            "; a bare number is in scaling.time_unit" if self.bare_in_time_unit else "")

    def example_text(self) -> str:
        return self.shown_example


@dataclass(frozen=True)
class Unit(Spec):
    """A unit on its own (scaling.time_unit: s), stored as the size of one unit in SI."""

    dimension: units.Dimension = units.TIME
    doc: str = ""

    def read(self, node: Node, path: str, reader: Reader) -> float:
        text = scalar_text(node)
        if text is None:
            return reader.error(node, path, f"expected a unit of {self.dimension.name} like \"s\", "
                                f"got {describe_node(node)}")
        try:
            return units.parse_unit(text, self.dimension, currency=reader.currency)
        except units.UnitProblem:
            return reader.error(node, path, f'expected a unit of {self.dimension.name} like "s" or "min", '
                                f'got "{text}"')

    def json_schema(self) -> JsonObject:
        return {"type": "string", "description": self.doc, "examples": ["s", "min", "h"]}

    def kind(self) -> str:
        return f"a unit of {self.dimension.name}"

    def example_text(self) -> str:
        return "s"


@dataclass(frozen=True)
class Items(Spec, Generic[Value]):
    item: Reads[Value]
    doc: str = ""
    min_items: int = 1
    max_items: int | None = None  # a bound on what a small file can make every analysis do (decisions pair up)

    def read(self, node: Node, path: str, reader: Reader) -> tuple[Value, ...]:
        if not isinstance(node, SequenceNode):
            return reader.error(node, path, f"expected a list, got {describe_node(node)}")
        if len(node.value) < self.min_items:
            return reader.error(node, path, f"expected at least {self.min_items} entries, got {len(node.value)}")
        if self.max_items is not None and len(node.value) > self.max_items:
            return reader.error(node, path, f"expected at most {self.max_items:,} entries, got {len(node.value):,}")
        values = [self.item.read(child, f"{path}[{index}]", reader) for index, child in enumerate(node.value)]
        return INVALID if any(v is INVALID for v in values) else tuple(values)

    def json_schema(self) -> JsonObject:
        schema: JsonObject = {"type": "array", "description": self.doc, "items": self.item.json_schema(),
                  "minItems": self.min_items}
        return schema if self.max_items is None else {**schema, "maxItems": self.max_items}

    def kind(self) -> str:
        return "a list of mappings" if isinstance(self.item, Section) else f"a list, each {self.item.kind()}"

    def example_text(self) -> str:
        one = self.item.example_text()
        return f"[{one}, {one}]" if one else ""


@dataclass(frozen=True)
class Section(Spec, Generic[Struct]):
    """A mapping read into a dataclass whose fields carry their own specs."""

    cls: type[Struct]
    doc: str = ""
    examples: tuple[tuple[str, str], ...] = ()  # (field, example) where this use of cls has its own (a slot's choice)

    def read(self, node: Node, path: str, reader: Reader) -> Struct:
        return read_struct(self.cls, node, path, reader)

    def json_schema(self) -> JsonObject:
        return struct_schema(self.cls, self.doc)

    def kind(self) -> str:
        return "a mapping"


@overload
def field(spec: Reads[Value], default: Value, *, starter: bool = True) -> Value: ...
@overload
def field(spec: Reads[Value], *, required: Literal[True], starter: bool = True) -> Value: ...
@overload
def field(spec: Reads[Value], *, starter: bool = True) -> Value | None: ...


def field(spec: Reads[Value], default: Value | None = None, *, required: bool = False, starter: bool = True) -> Any:
    """A dataclass field described by `spec`, typed as what the spec reads: mypy checks the field's annotation
    against it (a required field or one with a default holds the spec's type; an optional one may also be None,
    absent). `starter`: whether the starter file (`reportgen init`) writes the field live, or commented out."""
    return dataclasses.field(default=default, metadata={"spec": spec, "required": required, "starter": starter})


def starter_fields(cls: type) -> set[str]:
    """The fields of `cls` the starter file writes live (the others it writes commented out)."""
    return {f.name for f in dataclasses.fields(cls) if f.metadata.get("starter", False)}


def spec_fields(cls: type) -> tuple[tuple[str, Spec, bool], ...]:
    """Each field of a project's section with its spec: name, spec, whether it is required."""
    return _spec_fields(cls)


@functools.cache  # once per class: reading and listing 10,000 runs asked 20,000 times
def _spec_fields(cls: type) -> tuple[tuple[str, Spec, bool], ...]:
    return tuple((f.name, f.metadata["spec"], f.metadata["required"])
                 for f in dataclasses.fields(cls) if "spec" in f.metadata)


def read_struct(cls: type[Struct], node: Node, path: str, reader: Reader) -> Struct:
    """Read a mapping into `cls`: unknown keys get a suggestion, every field is read even after a failure."""
    values, complete = read_fields(cls, node, path, reader)
    if not complete or INVALID in values.values():
        return INVALID
    instance = cls(**values)
    check = getattr(instance, "check", None)
    failed = False
    if check is not None:  # cross-field rules of one section, each reported at the value it names
        for relative, message in check():
            reader.error(locate(node, relative), join_path(path, relative), message)
            failed = True
    return INVALID if failed else instance


def read_fields(cls: type, node: Node, path: str, reader: Reader) -> tuple[dict[str, Any], bool]:
    """The given fields of a mapping, each read (INVALID where it failed), and whether the keys were all sound."""
    where = path or "the document"
    if not isinstance(node, MappingNode):
        reader.error(node, path, f"expected a mapping of fields, got {describe_node(node)}")
        return {}, False
    fields = spec_fields(cls)
    names = [name for name, _, _ in fields]
    given: dict[str, tuple[Node, Node]] = {}
    values: dict[str, Any] = {}  # each field as its spec reads it: a value of its own type
    keys_sound = True
    for key_node, value_node in node.value:
        key = scalar_text(key_node)
        key_path = f"{path}.{key}" if path else str(key)
        if key is None or not isinstance(key_node, ScalarNode):
            keys_sound = reader.error(key_node, path, "keys must be plain names") is not INVALID
        elif key in given:
            first = given[key][0].start_mark.line + 1
            keys_sound = reader.error(key_node, key_path, f"duplicate key (first given on line {first})") is not INVALID
        elif key not in names:
            keys_sound = reader.error(key_node, key_path,
                                      f"unknown field{did_you_mean(key, names, fields=True)}") is not INVALID
        else:
            given[key] = (key_node, value_node)
    with reader.time_unit(reader.bare_time_unit):
        for name, spec, required in fields:
            field_path = f"{path}.{name}" if path else name
            if name not in given or is_null(given[name][1]):
                if required:
                    values[name] = reader.error(node, field_path, f"missing required field `{name}` in {where}")
                continue
            values[name] = spec.read(given[name][1], field_path, reader)
            if isinstance(spec, Unit) and values[name] is not INVALID and spec.dimension == units.TIME:
                reader.bare_time_unit = values[name]  # lets the following sibling fields use bare numbers
    return values, keys_sound


def join_path(path: str, relative: str) -> str:
    if not relative:
        return path
    return f"{path}{relative}" if relative.startswith("[") or not path else f"{path}.{relative}"


def locate(node: Node, relative: str) -> Node:
    """The node at a relative field path ("runs[2].nodes"), or the deepest one that exists on the way."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", relative):
        if part.startswith("[") and isinstance(node, SequenceNode):
            index = int(part[1:-1])
            if index >= len(node.value):
                break
            node = node.value[index]
        elif isinstance(node, MappingNode):
            matches = [value for key, value in node.value if scalar_text(key) == part]
            if not matches:
                break
            node = matches[0]
        else:
            break
    return node


def struct_schema(cls: type, doc: str = "") -> JsonObject:
    properties = {name: spec.json_schema() for name, spec, _ in spec_fields(cls)}
    schema: JsonObject = {"type": "object", "additionalProperties": False, "properties": properties}
    description = doc or (cls.__doc__ or "").strip()
    if description:
        schema["description"] = description
    required = [name for name, _, is_required in spec_fields(cls) if is_required]
    if required:
        schema["required"] = required
    return schema


# Names people write for a field that is spelled otherwise here: a suggestion by meaning, where spelling is no help.
SAME_MEANING = {
    "idle_power": "wait_power", "waiting_power": "wait_power", "communication_power": "wait_power",
    "power": "node_power", "active_power": "node_power", "tdp": "node_power",
    "gpus_per_node": "devices_per_node", "accelerators_per_node": "devices_per_node", "gpus": "devices_per_node",
    "gpu_memory": "device_memory", "hbm": "device_memory", "vram": "device_memory",
    "latency": "network_latency", "bandwidth": "network_bandwidth", "flops": "peak_compute",
    "price": "node_hour", "price_per_hour": "node_hour", "hourly_price": "node_hour", "cost_per_hour": "node_hour",
    "budget": "cost_per_run", "deadline": "time_per_run", "mtbf": "node_mtbf", "nodes_count": "nodes",
    "preemption_rate": "preemptions_per_node_hour", "carbon": "carbon_intensity", "intensity": "carbon_intensity",
    # a runs CSV's columns (reportgen.project.measurements)
    "duration": "time", "wall_time": "time", "step_time": "time", "elapsed": "time", "runtime": "time",
    "rps": "throughput", "qps": "throughput", "requests_per_second": "throughput", "node": "nodes",
    "p99": "p99_latency", "ttft": "ttft_p99", "tpot": "tpot_p99", "energy_kwh": "energy",
}


# Abbreviations people write for a word of a field's name: `comm` finds `communication`, `mem_bw` `memory_bandwidth`
ABBREVIATIONS = {"comm": "communication", "comp": "compute", "mem": "memory", "bw": "bandwidth", "lat": "latency",
                 "params": "parameters", "param": "parameters", "seq": "sequence", "tp": "tensor", "pp": "pipeline",
                 "dp": "data", "mb": "micro_batch", "ckpt": "checkpoint", "util": "utilization",
                 "num": "", "n": ""}  # "num_layers": the count's own name, `layers`
MAX_SUGGESTIONS = 3


def did_you_mean(text: str, options: tuple[str, ...] | list[str], *, fields: bool = False) -> str:
    """What the text may have meant: a name of the same meaning alone; else, for a field's name, up to three fields
    by an abbreviation or a prefix of their words, then by spelling (the closest first); for a value, the closest."""
    names = list(options)
    written = text.lower().replace("-", "_")
    meant = SAME_MEANING.get(written)
    if meant in names:
        return f"; did you mean `{meant}`?"
    if not fields:
        close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
        return f"; did you mean `{close[0]}`?" if close else ""
    found: list[str] = []
    words = [ABBREVIATIONS.get(word, word) for word in written.split("_") if ABBREVIATIONS.get(word, word)]
    if words and len(written) >= 2:
        found += [name for name in names if all(any(part.startswith(word) for part in name.split("_"))
                                                 for word in words)]
    found += difflib.get_close_matches(text, names, n=MAX_SUGGESTIONS, cutoff=0.6)
    unique = list(dict.fromkeys(name for name in found if name != text))[:MAX_SUGGESTIONS]
    if not unique:
        return ""
    quoted = [f"`{name}`" for name in unique]
    return f"; did you mean {quoted[0]}?" if len(quoted) == 1 else \
        f"; did you mean {', '.join(quoted[:-1])} or {quoted[-1]}?"


def _or_list(options: tuple[str, ...]) -> str:
    return ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
