"""Every figure page 1 quotes is one of `summary.quantities` (docs/methods.md#every-figure-has-one-source): each
number in page 1's sentences, with its unit as written, must be how the report writes one of the quantities, each of
which check_page_one holds equal to the value at its source in results.json."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from reportgen import wording as w
from reportgen.analysis.page.prose.summary import SummaryResult

# a figure as page 1 writes it: a number, with a duration's units, a rate's, a currency, or a share's wording
FIGURE = re.compile(r"(?<![\w.])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"
                    r"(?: h \d+(?:\.\d+)? min| h| min| s| ms| µs| days?| d| [kMGT]?B/s| requests/s| tokens/s)?"
                    r"(?: [A-Z]{3}(?= |$|[.,;:)]))?(?: % (?:over|under|short|to spare)| %|×)?)")
# a coverage named, or an extrapolation bucket of the calibration table
# (docs/methods.md#how-accurate-each-prediction-is): labels, not figures
LABELS = ("95 % interval", "90 % interval", "90 % bootstrap", "in 90 % of", "up to 2×", "2–4×", "4–8×", "beyond 8×",
          "more than 8×")
ADVICE = ("ideally 1 node",)  # what to measure next, the same for every project: advice, not a figure


# What a form multiplies a value by before it writes the leading number of a figure in this unit (a bare number may
# be a mass or an energy written a thousand times up or down; a share is v or 1 − v in %)
_UNIT_SCALES = {"µs": (1e6,), "ms": (1e3,), "s": (1.0,), "min": (1 / 60,), "h": (1 / 3600,), "d": (1 / 86400,),
                "day": (1 / 86400,), "days": (1 / 86400,), "B/s": (1.0,), "kB/s": (1e-3,), "MB/s": (1e-6,),
                "GB/s": (1e-9,), "TB/s": (1e-12,), "requests/s": (1.0,), "tokens/s": (1.0,), "%": (100.0,),
                "×": (1.0,), "money": (1.0, 3600.0), "t": (1e-3,), "kg": (1.0,), "g": (1e3,), "MWh": (1e-3,),
                "kWh": (1.0,), "Wh": (1e3,), "": (1.0, 100.0)}


def _leading(figure: str, after: str = "") -> tuple[float, float, tuple[float, ...]]:
    """A figure's leading number ("1 h 3.3 min": 1.055 h), how far the value it was rounded from may lie (half its
    last digit), and what a form multiplies a value by to write it in the figure's unit (`after`: the text after a
    bare figure, whose first word may be a mass's or an energy's unit)."""
    first = re.match(r"([\d,]+)(?:\.(\d+))?(?: h (\d+)(?:\.(\d+))? min)?", figure)
    if first is None:
        return math.nan, 0.0, ()
    power = re.match(r" × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", figure[first.end():])
    if power is not None:  # "3.13 × 10⁻⁵": scientific notation, as wording.number writes the very small and large
        exponent = int(power[1].translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        mantissa = float(first[0].replace(",", ""))
        scale = 10.0 ** exponent
        return mantissa * scale, 0.5 * 10.0 ** -len(first[2] or "") * scale, _UNIT_SCALES[""]
    if first[3] is not None:  # hours and minutes: the minutes carry the rounding
        minutes = float(first[0].split(" h ")[1].split(" ")[0])
        return float(first[1]) + minutes / 60, 0.5 * 10.0 ** -len(first[4] or "") / 60 + 1e-9, _UNIT_SCALES["h"]
    value = float(first[0].replace(",", ""))
    rest = figure[first.end():].strip() or after.strip()
    unit = re.split(r"[ .,;:)]", rest)[0] if rest else ""
    if re.fullmatch(r"[A-Z]{3}", unit):
        unit = "money"
    return value, 0.5 * 10.0 ** -len(first[2] or "") + 1e-9 * value, _UNIT_SCALES.get(unit, _UNIT_SCALES[""])


def _near(values: list[float], figures: list[tuple[str, str]]) -> list[float]:
    """The values some form could write as one of the figures: its leading number within the figure's rounding of
    the value scaled to the figure's unit (a share: of v or 1 − v). Only a filter: a figure still counts as quoted
    only when a form writes it exactly; a page-1 sentence quotes a few figures, results.json holds hundreds of
    values."""
    v = np.asarray(values, dtype=float)
    written = [np.abs(v), np.abs(1.0 - v)]
    near = np.zeros(len(values), dtype=bool)
    for figure, after in figures:
        leading, slack, scales = _leading(figure, after)
        for scale in scales:
            for value in written if "%" in figure else written[:1]:
                with np.errstate(over="ignore", invalid="ignore"):
                    near |= np.abs(value * scale - leading) <= slack * 1.000001 + 1e-12
    return [value for value, is_near in zip(values, near, strict=True) if is_near]


def written_forms(values: list[float], currency: str, figures: list[tuple[str, str]] | None = None) -> set[str]:
    """Every way the report writes one of the values (of those near one of `figures`, each with the text after it,
    when given)."""
    forms: list[Callable[[float], str]] = [
        w.duration, w.percent, w.number, w.times, w.count, w.margin, w.mass, w.energy,
        # an interval's two ends share one unit: a duration as a column beside a smaller or larger one writes it
        *(lambda v, k=k: w.duration(v, (v, v * k)) for k in (1 / 3600, 1 / 60, 0.5, 2.0, 60.0, 3600.0)),
        lambda v: w.money(v, currency), lambda v: w.money(v * 3600, currency), lambda v: w.percent(abs(v - 1)),
        lambda v: w.headroom(v, True), lambda v: w.headroom(v, False), lambda v: w.rate(v, "B/s"),
        lambda v: w.requests(v), lambda v: w.requests(v, "token"), lambda v: w.number(v * 100),
        lambda v: f"{round(100 * v)} %",  # the plan search's "Z % faster" (a whole percentage, as published)
    ]
    out = set()
    for value in values if figures is None else _near(values, figures):
        for form in forms:
            try:
                out.add(form(value))
            except (ValueError, OverflowError, ZeroDivisionError):
                continue
    return out


def _plain(figure: str) -> str:
    """A figure without the zeros a column's shared precision adds: "5.10 min" is "5.1 min", "1 h 0 min" is
    "1 h"."""
    figure = re.sub(r"(\d)\.(\d*?)0+(?!\d)", lambda m: f"{m[1]}.{m[2]}" if m[2] else m[1], figure)
    return re.sub(r" h 0 min$", " h", figure)


def page_one_texts(summary: SummaryResult) -> list[str]:
    return [text for text in (summary.verdict, summary.gap, summary.next_action.text, summary.failure_tax,
                              summary.optimum.text) if text]


def unquoted_figures(summary: SummaryResult, currency: str) -> list[str]:
    """The figures of page 1's verdict, gap, next action, failure tax and operating point that none of page 1's
    quantities is written as."""
    texts = [_without_advice(text) for text in page_one_texts(summary)]
    quoted = [(text, found[1], text[found.end():found.end() + 8]) for text in texts
              for found in FIGURE.finditer(text) if found[1]]
    values = sorted({quantity.value for quantity in summary.quantities})
    forms = {_plain(form) for form in written_forms(values, currency, [(f, after) for _, f, after in quoted])}
    return [figure for text, figure, _ in quoted
            if _plain(figure) not in forms and not any(label in text and figure in label for label in LABELS)]


def _without_advice(text: str) -> str:
    for advice in ADVICE:
        text = text.replace(advice, "")
    return text
