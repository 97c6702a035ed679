"""The one unit registry and the parsing of quantity text against an expected dimension.

Quantities arrive as text ("20 TFLOP/s"). The text is checked against a small grammar before pint sees it, because
pint's expression evaluator accepts `**` and an input like `9**9**9**9 s` would run without bound.
"""

from __future__ import annotations

import functools
import math
import re
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pint

CURRENCY_TOKEN = "currency_unit"
MAX_QUANTITY_LENGTH = 80

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_QUANTITY_RE = re.compile(rf"^\s*(?P<number>{_NUMBER})\s*(?P<unit>.*?)\s*$")
_NUMBER_RE = re.compile(rf"^\s*{_NUMBER}\s*$")
_ASCII_NUMBER_RE = re.compile(_NUMBER, re.ASCII)  # as tools write numbers: ASCII digits only (no "١٢")
# A unit expression: names, * and /, parentheses, and small integer exponents (at most two digits).
_UNIT_TOKEN_RE = re.compile(r"\s*(?:(?P<name>[^\W\d]\w*)|(?P<op>\*\*|\^|[*/()])|(?P<exp>-?\d{1,2}))")
# Spellings seen in papers and dashboards that pint cannot read, with the one that means the same here.
_SPELLINGS = {"qps": "request/s", "rps": "request/s", "tps": "token/s", "sps": "sample/s", "GBps": "GB/s",
              "MBps": "MB/s", "TBps": "TB/s", "KB": "kB", "iter": "it", "iters": "it", "CO2eq": "gCO2eq",
              "kWhr": "kWh"}
_RECIPROCAL_RE = re.compile(r"^\s*(?:1\s*)?/")  # "1/s" and "/s": a rate written as a reciprocal
_CURRENCY_CODE_RE = re.compile(r"^[A-Z]{3}$")


# The units of work (units.txt: counts), by every name they are written with, as the report names them
_WORK_UNITS = {"sample": "sample", "sequence": "sequence", "image": "image", "token": "token", "request": "request",
               "req": "request", "reqs": "request", "step": "step", "it": "step"}


def work_unit(text: str) -> str | None:
    """The unit of work a rate or an amount counts, as the report names it: "token" for "138000 tokens/s" or
    "12 tps", "request" for "40 req/s", read from the text as written; None when it names none (1/s, FLOP/s)."""
    match = _QUANTITY_RE.match(text)
    unit = match.group("unit") if match else text
    unit = _SPELLINGS.get(unit.strip(), unit)
    for found in _UNIT_TOKEN_RE.finditer(unit):
        name = found.group("name")
        if name is None:
            continue
        for candidate in (name, name[:-1] if name.endswith("s") else name):
            if candidate in _WORK_UNITS:
                return _WORK_UNITS[candidate]
    return None


class UnitProblem(ValueError):
    """Quantity text that cannot be read as the expected dimension; the message is for the user."""


@dataclass(frozen=True)
class Dimension:
    """What a field expects: a name for messages, an example, and the SI unit values are stored in."""

    name: str
    example: str  # "USD" in an example stands for the project's currency
    si_unit: str

    def example_in(self, currency: str) -> str:
        return self.example.replace("USD", currency)


TIME = Dimension("time", "90 min", "s")
COMPUTE = Dimension("amount of compute", "2.4e16 FLOP", "FLOP")
COMPUTE_RATE = Dimension("compute rate", "20 TFLOP/s", "FLOP/s")
DATA = Dimension("data size", "120 GB", "B")
BANDWIDTH = Dimension("bandwidth", "800 GB/s", "B/s")
POWER = Dimension("power", "700 W", "W")
ENERGY = Dimension("energy", "78 kWh", "J")
CARBON_INTENSITY = Dimension("carbon intensity", "56 g/kWh", "kg/J")
MASS = Dimension("mass", "120 kg", "kg")
MONEY = Dimension("money", "3.20 USD", CURRENCY_TOKEN)
MONEY_RATE = Dimension("money per time", "50 USD/h", f"{CURRENCY_TOKEN}/s")
RATE = Dimension("rate", "2000 request/s", "1/s")
WORK = Dimension("amount of work", "1.2e8 sequence", "count")

# How a dimension that was given is described back to the user ("got ... (bytes per time)").
_DESCRIPTIONS = {
    "s": "time",
    "FLOP": "FLOP",
    "FLOP/s": "FLOP per time",
    "B": "bytes",
    "B/s": "bytes per time",
    "W": "power",
    "J": "energy",
    "kg/J": "mass per energy",
    "kg": "mass",
    CURRENCY_TOKEN: "money",
    f"{CURRENCY_TOKEN}/s": "money per time",
    "1/s": "per time",
    "count": "a plain count",
}


def _import_pint_without_dask() -> None:
    """Import pint without its Dask support: where Dask is installed (the `dask` extra), pint imports `dask.base`
    at once, 0.6 s and jinja2 on the path of every `check`. reportgen passes pint no Dask arrays, so pint is
    shown no Dask while it loads (a None in sys.modules makes find_spec report the module absent), and Dask is
    importable again afterwards."""
    import sys

    if "pint" in sys.modules or "dask" in sys.modules:
        return
    sys.modules["dask"] = None  # type: ignore[assignment]
    try:
        import pint  # noqa: F401
    finally:
        del sys.modules["dask"]


@cache
def registry() -> pint.UnitRegistry[float]:
    """The process's one registry (building one is the slow part of pint)."""
    _import_pint_without_dask()
    import pint

    return pint.UnitRegistry(str(Path(__file__).with_name("units.txt")), cache_folder=None)


# Every quantity, in SI units, lies within these magnitudes (or is zero): well beyond any machine's or any run's
# (10²⁵ FLOP is a frontier model's training; 10⁻⁹ s a nanosecond), and far enough from float's limits that no
# product or quotient of a few of them overflows to infinity or underflows to zero (a run of 10³⁰⁸ s did).
MIN_MAGNITUDE, MAX_MAGNITUDE = 1e-30, 1e30
RANGE_TEXT = "from 10⁻³⁰ to 10³⁰ in SI units"


def in_range(si_value: float) -> bool:
    """A value (in SI units) a project can hold: finite, and zero or within MIN_MAGNITUDE…MAX_MAGNITUDE."""
    return math.isfinite(si_value) and (si_value == 0 or MIN_MAGNITUDE <= abs(si_value) <= MAX_MAGNITUDE)


def is_number_text(text: str) -> bool:
    return bool(_NUMBER_RE.match(text))


def is_ascii_number(text: str) -> bool:
    """A number as a tool writes it (CodeCarbon's pandas repr): the project grammar's, in ASCII digits only."""
    return bool(_ASCII_NUMBER_RE.fullmatch(text))


def is_currency_code(text: str) -> bool:
    """Three ASCII capitals (ISO 4217's shape): str.isupper() would take "ÉUR" and fullwidth "ＵＳＤ"."""
    return bool(_CURRENCY_CODE_RE.fullmatch(text))


def _unit_tokens(unit_text: str) -> list[str]:
    """Split a unit expression into tokens, or raise UnitProblem if it is outside the safe grammar:

        expression := factor ((* | / | nothing) factor)*      factor := (name | "(" expression ")") [power]
        power := (** | ^) non-zero integer of at most two digits (a unit to the power 0 is no unit, and pint's
                 dimension bookkeeping fails on one)
    """
    problem = UnitProblem(f"cannot read the unit {unit_text.strip()!r}")
    tokens: list[str] = []
    position = 0
    while position < len(unit_text):
        match = _UNIT_TOKEN_RE.match(unit_text, position)
        if not match or match.end() == position:
            raise problem
        tokens.append(match.group().strip())
        position = match.end()
    depth, want_operand, index = 0, True, 0
    while index < len(tokens):
        token = tokens[index]
        if token in ("*", "/"):
            if want_operand:
                raise problem
            want_operand = True
        elif token in ("**", "^"):
            if want_operand or index + 1 >= len(tokens) or not tokens[index + 1].lstrip("-").isdigit() \
                    or int(tokens[index + 1]) == 0:
                raise problem
            index += 1  # the exponent
        elif token == "(":
            depth, want_operand = depth + 1, True
        elif token == ")":
            if want_operand or depth == 0:
                raise problem
            depth -= 1
        elif token.lstrip("-").isdigit():
            raise problem  # a number that is not an exponent
        else:
            want_operand = False  # a name; two names in a row multiply, as pint reads them
        index += 1
    if tokens and (want_operand or depth):
        raise problem
    return tokens


def _unit_expression(unit_text: str, currency: str) -> str:
    """The unit text as pint should read it, with the project currency written as the currency unit and a bare
    reciprocal ("1/s", "/s") read as a count per unit."""
    tokens = _unit_tokens(_RECIPROCAL_RE.sub("count /", unit_text, count=1))
    return " ".join(CURRENCY_TOKEN if token == currency else token for token in tokens)


def describe(quantity: pint.Quantity[float]) -> str:
    for si_unit, description in _DESCRIPTIONS.items():
        if quantity.dimensionality == registry().Unit(si_unit).dimensionality:
            return description
    return str(quantity.dimensionality)


def parse_unit(text: str, dimension: Dimension, *, currency: str = "USD") -> float:
    """The size of a unit (for example "ms" for a time) in the dimension's SI unit."""
    return parse_quantity(f"1 {text}", dimension, currency=currency)


def parse_quantity(text: str, dimension: Dimension, *, currency: str = "USD", example: str | None = None,
                   also: tuple[Dimension, ...] = ()) -> float:
    """The quantity's value in the dimension's SI unit; UnitProblem with a user message otherwise.

    `example` is the field's own example ("8 us" for a latency), shown instead of the dimension's. `also` names
    other dimensions the field accepts (a throughput in FLOP/s as well as in sequence/s): a value of one of them
    is returned in that dimension's SI unit, and `dimension_of` tells which it was.
    """
    def refused(why: str) -> UnitProblem:  # the message is built only for a refusal: a CSV reads 10⁶ good values
        shown = text if len(text) <= MAX_QUANTITY_LENGTH else text[:MAX_QUANTITY_LENGTH] + "…"
        examples = [(example or dimension.example)] + [other.example for other in also]
        expected = f'expected {dimension.name} like ' + " or ".join(f'"{e.replace("USD", currency)}"'
                                                                    for e in examples)
        return UnitProblem(f"{expected}, got a text of {len(text)} characters" if not why
                           else f'{expected}, got "{shown}" ({why})')

    if len(text) > MAX_QUANTITY_LENGTH:
        raise refused("")
    match = _QUANTITY_RE.match(text)
    if not match:
        raise refused("not a number followed by a unit")
    if not match["unit"] and dimension.si_unit != "count":
        raise refused("a number without a unit")
    number = float(match["number"])
    if not math.isfinite(number):
        raise refused("not a finite number")
    factor, _, problem = _first_factor(match["unit"], (dimension, *also), currency)
    if problem:
        raise refused(problem)
    value = number * factor
    if not in_range(value):
        raise refused(f"out of range: quantities are read {RANGE_TEXT}, and this is "
                      f"{value:.3g} {dimension.si_unit.replace(CURRENCY_TOKEN, currency)}")
    return value


def dimension_of(text: str, dimensions: tuple[Dimension, ...], *, currency: str = "USD") -> Dimension | None:
    """Which of the dimensions a quantity's text is in (a bare number counts as the first), or None."""
    match = _QUANTITY_RE.match(text)
    if not match:
        return None
    if not match["unit"]:
        return dimensions[0]
    return _first_factor(match["unit"], dimensions, currency)[1]


def _first_factor(unit_text: str, dimensions: tuple[Dimension, ...],
                  currency: str) -> tuple[float, Dimension | None, str]:
    """The unit's size in the first of the dimensions it is in, and that dimension; else the problem with the first
    (the one a message names)."""
    first_problem = ""
    for dimension in dimensions:
        factor, problem = _factor(unit_text, dimension.si_unit, currency)
        if not problem:
            return factor, dimension, ""
        first_problem = first_problem or problem
    return 0.0, None, first_problem


def _rate_hint(unit_text: str, unit: Any, target: Any) -> str:
    """An amount written where a rate is expected ("7900 TFLOPs", "20 TFLOP"): name the rate's spelling."""
    ureg = registry()
    if (unit / ureg.Unit("s")).dimensionality != target.dimensionality:
        return ""
    base = unit_text[:-1] if unit_text.endswith("s") and len(unit_text) > 1 else unit_text
    return f'; a rate is written per second: "{base}/s"'


@functools.lru_cache(maxsize=1024)
def _factor(unit_text: str, si_unit: str, currency: str) -> tuple[float, str]:
    """The size of one `unit_text` in the dimension's SI unit, or a problem to report. Cached: a file of 1,000
    runs writes the same few units thousands of times, and asking pint each time dominated loading it."""
    ureg = registry()  # imports pint (without Dask) first
    import pint

    try:
        unit = ureg.Unit(_unit_expression(unit_text, currency)) if unit_text else ureg.Unit("count")
    except UnitProblem:
        return 0.0, "cannot read the unit"
    except pint.UndefinedUnitError as error:
        names = error.unit_names
        name = names if isinstance(names, str) else ", ".join(names)
        if name in _SPELLINGS:
            hint = f'; did you mean "{_SPELLINGS[name]}"?'
        else:
            hint = f"; this project's currency is {currency} (pricing.currency)" if is_currency_code(name) else ""
        return 0.0, f"unknown unit {name}{hint}"
    except (pint.PintError, ValueError, TypeError, SyntaxError, AttributeError, AssertionError,
            tokenize.TokenError):  # pint's expression parser, behind the grammar check above
        return 0.0, "cannot read the unit"
    target = ureg.Unit(si_unit)
    if unit.dimensionality != target.dimensionality:
        return 0.0, describe(ureg.Quantity(1.0, unit)) + _rate_hint(unit_text, unit, target)
    try:
        factor = float(ureg.Quantity(1.0, unit).to(target).magnitude)
    except (OverflowError, ZeroDivisionError):  # "Ys**99/s**98": prefixes raised to a power past float's range
        return 0.0, "a unit too large or too small to compute"
    if not math.isfinite(factor) or factor == 0:
        return 0.0, "a unit too large or too small to compute"
    return factor, ""
