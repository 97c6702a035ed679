"""How numbers read in the report: significant digits, units chosen for the reader, infinity as words.

These are the jinja2 filters; they format, never compute (a ratio of two results is computed in the analyses).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from markupsafe import Markup, escape

from reportgen.project.model import REGIME_NAMES

DASH = "—"


def number(value: Any, digits: int = 3) -> str:
    """A number to `digits` significant digits, with thousands separators and no scientific notation below 1e7."""
    if value is None:
        return DASH
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e7 or magnitude < 1e-4:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa} × 10<sup>{int(exponent)}</sup>"
    decimals = max(digits - 1 - math.floor(math.log10(magnitude)), 0)
    return f"{value:,.{decimals}f}"


def integer(value: Any) -> str:
    """A whole number; a fractional one (a load level on a load axis, 1.53) as the number it is, never cut."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else number(value)


def nodes(value: Any) -> str:
    """A node count with its noun: "1 node", "16 nodes" (a fractional load level: "load 1.53")."""
    if value is None:
        return DASH
    if not float(value).is_integer():
        return f"load {number(value)}"
    return f"{int(value):,} node{'' if int(value) == 1 else 's'}"


def counted(value: Any, singular: str, plural: str = "") -> str:
    """A count with its noun agreeing: "1 key result", "3 key results" (plural: singular + "s" unless given)."""
    return f"{int(value):,} {singular if int(value) == 1 else plural or singular + 's'}"


def count(value: Any) -> str:
    """A count that may be fractional: 30 rather than 30.0, 2.5 as it is."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else number(value)


def percent(value: Any, digits: int = 3) -> str:
    return DASH if value is None else f"{number(value * 100, digits)} %"


def times(value: Any, digits: int = 3) -> str:
    """A ratio as "2.5×"."""
    return DASH if value is None else f"{number(value, digits)}×"


def duration(seconds: Any) -> str:
    """Seconds in the unit a reader would use: 90 µs, 12.5 ms, 42 s, 1 h 51 min, 3.2 days."""
    if seconds is None:
        return DASH
    if isinstance(seconds, str) or math.isinf(seconds):
        return number(seconds)
    magnitude = abs(seconds)
    if magnitude == 0:
        return "0 s"
    if magnitude < 1e-3:
        return f"{number(seconds * 1e6)} µs"
    if magnitude < 1:
        return f"{number(seconds * 1e3)} ms"
    if magnitude < 120:
        return f"{number(seconds)} s"
    if magnitude < 3 * 3600:
        minutes = seconds / 60
        if minutes >= 60:
            hours, rest = int(minutes // 60), minutes % 60
            shown = f"{rest:.0f}" if rest >= 9.95 else f"{rest:.1f}"  # 1 h 7.1 min, 2 h 0.6 min, 1 h 12 min
            return f"{hours} h" if shown in ("0", "0.0") else f"{hours} h {shown} min"
        return f"{number(minutes)} min"
    if magnitude < 3 * 86400:
        return f"{number(seconds / 3600)} h"
    return f"{number(seconds / 86400)} days"


def _in_units(value: Any, ladder: tuple[tuple[float, str], ...]) -> str:
    """The value in the largest unit of the ladder (scale, name; largest first) it reaches, else the smallest."""
    if value is None:
        return DASH
    for scale, unit in ladder:
        if abs(value) >= scale:
            return f"{number(value / scale)} {unit}"
    scale, unit = ladder[-1]
    return f"{number(value / scale)} {unit}"


_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def size(value: Any) -> str:
    """Bytes in decimal units, as the project file writes them (GB = 10^9 B)."""
    return _in_units(value, tuple((scale, f"{prefix}B") for scale, prefix in _PREFIXES[1:]))


def rate(value: Any, unit: str) -> str:
    """FLOP/s or B/s with SI prefixes."""
    return _in_units(value, tuple((scale, f"{prefix}{unit}") for scale, prefix in _PREFIXES))


def money(value: Any, currency: str, column: Any = None, digits: int = 4) -> str:
    """Money: whole units from 100 up, cents from 0.01, significant digits below.

    `column` is every value of the table column the amount stands in: one precision serves them all (the one the
    smallest amount needs), so that 53.05 USD and 1,123.00 USD line up instead of 53.05 and 1,123.
    """
    if value is None:
        return DASH
    if isinstance(value, str) or math.isinf(value):
        return number(value)
    amounts = [abs(v) for v in (column or ()) if isinstance(v, int | float) and math.isfinite(v) and v != 0]
    smallest = min(amounts, default=abs(value))
    if smallest >= 100:
        return f"{value:,.0f} {currency}"
    if smallest >= 0.01:
        return f"{value:,.2f} {currency}"
    return f"{number(value, digits)} {currency}"


def mass(kg: Any) -> str:
    return _in_units(kg, ((1000.0, "t"), (1.0, "kg"), (1e-3, "g")))


def energy(kwh: Any) -> str:
    return _in_units(kwh, ((1000.0, "MWh"), (1.0, "kWh"), (1e-3, "Wh")))


def regime(name: Any) -> str:
    """A price regime as the report names it: on-demand, spot, owned."""
    return DASH if name is None else REGIME_NAMES.get(name, str(name))


def key_value(value: Any, kind: str, currency: str) -> str:
    """One key result of a diff or a watch, shown according to its kind (money with its currency)."""
    if value is None:
        return DASH
    shown: dict[str, Callable[[Any], str]] = {
        "nodes": integer, "count": integer, "number": number, "money": lambda v: money(v, currency), "kg": mass,
        "seconds": duration, "flag": lambda v: "yes" if v else "no", "regime": regime}
    return shown.get(kind, str)(value)


def plain_text(markup: str) -> str:
    """A formatted value for a terminal: exponents written with ^ instead of HTML superscript."""
    return markup.replace("<sup>", "^").replace("</sup>", "")


def _markup(function: Callable[..., str]) -> Callable[..., Markup]:
    """Filters build their text from numbers only (strings are escaped first), so the result is safe HTML."""
    @functools.wraps(function)
    def wrapped(value: Any, *args: Any) -> Markup:
        if isinstance(value, str):
            value = str(escape(value))
        return Markup(function(value, *args).replace("-", "−") if not isinstance(value, str)
                      else function(value, *args))
    return wrapped


_FORMATTERS: dict[str, Callable[..., str]] = {
    "num": number, "int": integer, "nodes": nodes, "count": count, "pct": percent, "times": times,
    "duration": duration, "size": size, "rate": rate, "money": money, "mass": mass, "energy": energy,
    "regime": regime, "keyvalue": key_value, "counted": counted,
}
FILTERS = {name: _markup(function) for name, function in _FORMATTERS.items()}
