"""How numbers read, in plain text: significant digits, units chosen for the reader, infinity as words.

One place for the report's tables (through the template filters of reportgen.render.formatting), the sentences the
analyses write (findings, the page-1 summary, which results.json carries too) and the terminal. Plain text only:
an exponent is written with superscript digits ("2.50 × 10¹⁶"), so a sentence reads the same in HTML, PDF, JSON
and a terminal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

DASH = "—"
# What a formatter is handed: a number, or None for a value not known (written as a dash)
Number = float | None
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def number(value: float | str | None, digits: int = 3) -> str:
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
        return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    decimals = max(digits - 1 - math.floor(math.log10(magnitude)), 0)
    return f"{value:,.{decimals}f}"


def integer(value: Number) -> str:
    """A whole number; a fractional one (a load level on a load axis, 1.53) as the number it is, never cut."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else number(value)


def nodes(value: Number) -> str:
    """A node count with its noun: "1 node", "16 nodes" (a fractional load level: "load 1.53")."""
    if value is None:
        return DASH
    if not float(value).is_integer():
        return f"load {number(value)}"
    return f"{int(value):,} node{'' if int(value) == 1 else 's'}"


def counted(value: float, singular: str, plural: str = "") -> str:
    """A count with its noun agreeing: "1 key result", "3 key results" (plural: singular + "s" unless given)."""
    return f"{int(value):,} {singular if int(value) == 1 else plural or singular + 's'}"


def count(value: Number) -> str:
    """A count that may be fractional: 30 rather than 30.0, 2.5 as it is."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else number(value)


INTERVAL_RUNS = 3  # a 95 % interval needs three runs; two bound nothing, and give their range


def spread(repeats: int | None) -> str:
    """What repeated runs' spread is called: a "95 % interval" from three runs on, "the range of 2 runs" from two
    (methods.md#3-measured-scaling-and-where-the-speedup-went)."""
    return "95 % interval" if repeats is None or repeats >= INTERVAL_RUNS else f"the range of {repeats} runs"


def percent(value: Number, digits: int = 3) -> str:
    return DASH if value is None else f"{number(value * 100, digits)} %"


def whole_percent(value: float) -> str:
    """A share rounded to a whole percentage, as page 1 states an error: "6 %"."""
    return f"{value * 100:.0f} %"


def target_share(value: float) -> str:
    """A share a goal states, as written: "99 %", "99.5 %", "99.95 %" (no digit it does not have)."""
    return f"{value * 100:.6g} %"


def signed_share(share: float) -> str:
    """A change as a signed whole percentage: "+95%", "−48%" (a skewed interval's ends against its median)."""
    return f"{'+' if share >= 0 else '−'}{abs(share):.0%}"


def times(value: Number, digits: int = 3) -> str:
    """A ratio as "2.5×"."""
    return DASH if value is None else f"{number(value, digits)}×"


def margin(ratio: float | None) -> str:
    """A value held against its limit, as the share it is under or over: "12.5 % under", "30.0 % over"."""
    if ratio is None:
        return DASH
    if math.isclose(ratio, 1.0, rel_tol=1e-9):  # 30 ms interpolated as 0.030000000000000002 s is at the limit
        return "at the limit of"
    return f"{percent(1 - ratio, 2)} under" if ratio <= 1 else f"{percent(ratio - 1, 2)} over"


def headroom(ratio: float | None, meets: bool | None) -> str:
    """Capacity held against what is needed (`ratio` = capacity / need, `meets` as the analysis decided it, with
    its tolerance): "25.0 % to spare", "12.5 % short"."""
    if ratio is None:
        return DASH
    return f"{percent(max(0.0, ratio - 1), 2)} to spare" if meets else f"{percent(max(0.0, 1 - ratio), 2)} short"


# The units a column of durations is written in, chosen by its largest value: (below this many seconds, unit, scale)
_COLUMN_UNITS = ((1e-3, "µs", 1e-6), (1.0, "ms", 1e-3), (120.0, "s", 1.0), (2 * 3600.0, "min", 60.0),
                 (3 * 86400.0, "h", 3600.0), (math.inf, "days", 86400.0))


def duration(seconds: Number, column: Iterable[Number] | None = None) -> str:
    """Seconds in the unit a reader would use: 90 µs, 12.5 ms, 42 s, 1 h 51 min, 3.2 days.

    `column` is every value of the table column the duration stands in: all of them are then written in the one
    unit the column's largest value needs ("1.95 h" beside "9.17 h", never "1 h 57 min" beside "9.17 h")."""
    if seconds is None:
        return DASH
    if isinstance(seconds, str) or math.isinf(seconds):
        return number(seconds)
    finite = [abs(v) for v in (column or ()) if isinstance(v, int | float) and math.isfinite(v) and v != 0]
    if finite and (len({_bucket(v) for v in finite}) > 1 or seconds == 0):  # one unit: the one the largest needs
        _, unit, scale = next(entry for entry in _COLUMN_UNITS if max(finite) < entry[0])
        return f"0 {unit}" if seconds == 0 else f"{number(seconds / scale)} {unit}"
    return _duration(seconds, whole_hours=column is None) if column is not None \
        else _trimmed(_duration(seconds, whole_hours=True))


_BUCKETS = (1e-3, 1.0, 120.0, 3600.0, 3 * 3600.0, 3 * 86400.0)  # where the single-value format changes its unit


def _bucket(seconds: float) -> int:
    return sum(1 for edge in _BUCKETS if seconds >= edge)


def _trimmed(text: str) -> str:
    """A duration in a sentence without trailing zeros: "20 ms", "1.5 h" (a table keeps them to align)."""
    number_part, _, unit = text.rpartition(" ")
    if "." in number_part and " " not in number_part:
        number_part = number_part.rstrip("0").rstrip(".")
    return f"{number_part} {unit}"


def _duration(seconds: float, *, whole_hours: bool = True) -> str:
    """The one-value format; between 1 h and 3 h hours and minutes, "2 h" for whole hours in prose (`whole_hours`),
    "2 h 0 min" in a column whose other cells have minutes."""
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
            # rounded before it is split, so that 119.99 min reads "2 h", never "1 h 60 min"
            rest = minutes % 60
            tenths = round(minutes * 10) if rest < 9.95 else round(minutes) * 10
            hours, rest = divmod(tenths, 600)
            shown = f"{rest / 10:.1f}" if rest < 99.5 and rest % 10 else f"{rest // 10:.0f}"
            return f"{hours} h" if rest == 0 and whole_hours else f"{hours} h {shown} min"
        return f"{number(minutes)} min"
    if magnitude < 3 * 86400:
        return f"{number(seconds / 3600)} h"
    return f"{number(seconds / 86400)} days"


def _in_units(value: Number, ladder: tuple[tuple[float, str], ...]) -> str:
    """The value in the largest unit of the ladder (scale, name; largest first) it reaches, else the smallest."""
    if value is None:
        return DASH
    for scale, unit in ladder:
        if abs(value) >= scale:
            return f"{number(value / scale)} {unit}"
    scale, unit = ladder[-1]
    return f"{number(value / scale)} {unit}"


_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def size(value: Number) -> str:
    """Bytes in decimal units, as the project file writes them (GB = 10^9 B)."""
    return _in_units(value, tuple((scale, f"{prefix}B") for scale, prefix in _PREFIXES[1:]))


def limit(byte_count: int) -> str:
    """A limit on a file's size in the binary units it is set in ("16 MiB", "8 GiB", "512 KiB")."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if byte_count >= 1 << shift:
            return _trimmed(f"{number(byte_count / (1 << shift))} {unit}")
    return f"{byte_count} bytes"


def rate(value: Number, unit: str) -> str:
    """FLOP/s or B/s with SI prefixes."""
    return _in_units(value, tuple((scale, f"{prefix}{unit}") for scale, prefix in _PREFIXES))


def requests(value: Number, unit: str = "request") -> str:
    """A service's load in its own unit, as a serving team writes it: "50,000 requests/s", "138,000 tokens/s"."""
    return DASH if value is None else f"{number(value)} {plural(unit)}/s"


def plural(unit: str) -> str:
    """A unit of work counted in the plural: request → requests (every unit of work is a regular noun)."""
    return unit if unit.endswith("s") else f"{unit}s"


def money(value: Number, currency: str, column: Iterable[Number] | None = None, digits: int = 4) -> str:
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
    if smallest >= 100 or (column is None and abs(value) >= 1 and float(value).is_integer()):  # "50 EUR" in prose
        return f"{value:,.0f} {currency}"
    if smallest >= 0.01:
        return f"{value:,.2f} {currency}"
    return f"{number(value, digits)} {currency}"


def mass(kg: Number) -> str:
    return _in_units(kg, ((1000.0, "t"), (1.0, "kg"), (1e-3, "g")))


def energy(kwh: Number) -> str:
    return _in_units(kwh, ((1000.0, "MWh"), (1.0, "kWh"), (1e-3, "Wh")))


def listed(items: Iterable[str], conjunction: str = "and") -> str:
    """Items joined as a sentence writes them: "a", "a and b", "a, b and c"."""
    words = list(items)
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def sentence(text: str) -> str:
    """Text ending in exactly one full stop (a clause built from parts never ends in ".." or in nothing)."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def quantity(value: float, si_unit: str) -> str:
    """A value in a project's SI unit as a person writes it: 5e10 B/s is "50.0 GB/s", 0.02 s "20 ms", 3.3e-8 USD/s
    "0.12 USD/h" (a currency is the unit's three capital letters)."""
    shown: dict[str, Callable[[float], str]] = {"s": duration, "B": size, "kg": mass, "count": number,
             "B/s": lambda v: rate(v, "B/s"), "FLOP": lambda v: rate(v, "FLOP"), "FLOP/s": lambda v: rate(v, "FLOP/s"),
             "W": lambda v: rate(v, "W"), "J": lambda v: energy(v / 3.6e6), "1/s": lambda v: f"{number(v)}/s",
             "kg/J": lambda v: f"{number(v * 3.6e9)} g/kWh"}
    if si_unit in shown:
        return shown[si_unit](value)
    code, _, per = si_unit.partition("/")
    if len(code) == 3 and code.isalpha() and code.isupper():
        return money(value, code) if not per else f"{money(value * 3600, code)}/h"
    return f"{number(value)} {si_unit}".strip()
