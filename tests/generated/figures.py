"""Every figure page 1 quotes is a value of results.json (docs/methods.md#page-1-and-the-next-action): each number
in page 1's sentences, with its unit as written, must be how the report writes some number of results.json."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from reportgen import wording as w
from reportgen.analysis.summary import SummaryResult

# a figure as page 1 writes it: a number, with a duration's units, a rate's, a currency, or a share's wording
FIGURE = re.compile(r"(?<![\w.])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
                    r"(?: h \d+(?:\.\d+)? min| h| min| s| ms| µs| days?| d| [kMGT]?B/s| requests/s| tokens/s)?"
                    r"(?: [A-Z]{3}(?= |$|[.,;:)]))?(?: % (?:over|under|short|to spare)| %|×)?)")
LABELS = ("95 % interval", "90 % interval", "90 % bootstrap")  # a coverage named, not a figure


def numbers(value: object) -> Iterable[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from numbers(item)


# the sections page 1's verdict, gap, next action, failure tax and operating point draw on: a figure must be one of
# theirs (the checklist, energy and provenance are not quoted there)
QUOTED_SECTIONS = ("goal", "summary", "scaling", "cost", "serving", "next_runs", "reliability", "prediction",
                   "diagnosis", "layout")


def written_forms(document: dict[str, object], currency: str) -> set[str]:
    """Every way the report writes a number of the sections page 1 draws on."""
    forms: list[Callable[[float], str]] = [
        w.duration, w.percent, w.number, w.times, w.count, w.margin, w.mass, w.energy,
        # an interval's two ends share one unit: a duration as a column beside a smaller or larger one writes it
        *(lambda v, k=k: w.duration(v, (v, v * k)) for k in (1 / 3600, 1 / 60, 0.5, 2.0, 60.0, 3600.0)),
        lambda v: w.money(v, currency), lambda v: w.money(v * 3600, currency), lambda v: w.percent(abs(v - 1)),
        lambda v: w.headroom(v, True), lambda v: w.headroom(v, False), lambda v: w.rate(v, "B/s"),
        lambda v: w.requests(v), lambda v: w.requests(v, "token"), lambda v: w.number(v * 100),
    ]
    out = set()
    for value in set(numbers({key: document.get(key) for key in QUOTED_SECTIONS})):
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


def unquoted_figures(summary: SummaryResult, document: dict[str, object], currency: str) -> list[str]:
    """The figures of page 1's verdict, gap, next action, failure tax and operating point that no results.json value
    is written as."""
    forms = {_plain(form) for form in written_forms(document, currency)}
    missing = []
    for text in page_one_texts(summary):
        for figure in FIGURE.findall(text):
            if figure and _plain(figure) not in forms and not any(label in text and label.startswith(figure)
                                                          for label in LABELS):
                missing.append(figure)
    return missing
