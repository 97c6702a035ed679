"""How numbers read in the report: the jinja2 filters, which format and never compute.

The formatting itself is reportgen.wording's (the analyses' sentences use it too); this module makes each one a
filter whose result is safe HTML, and adds the report's own names (price regimes) and the diff's key values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import cast

from markupsafe import Markup, escape

from reportgen.analysis.model.ceilings import CEILING, CeilingKind
from reportgen.analysis.page.prose.levers import change, lever_value
from reportgen.analysis.page.prose.ways import why_not
from reportgen.project.model import AXIS_DOING, REGIME_NAMES
from reportgen.wording import (
    DASH,
    count,
    counted,
    duration,
    energy,
    headroom,
    integer,
    margin,
    mass,
    money,
    nodes,
    number,
    percent,
    plural,
    rate,
    requests,
    size,
    target_share,
    times,
)


def regime(name: str | None) -> str:
    """A price regime as the report names it: on-demand, spot, owned."""
    return DASH if name is None else REGIME_NAMES.get(name, str(name))


def key_value(value: object, kind: str, currency: str) -> str:
    """One key result of a diff or a watch, shown according to its kind (money with its currency)."""
    if value is None:
        return DASH
    shown: dict[str, Callable[..., str]] = {
        "nodes": integer, "count": integer, "number": number, "money": lambda v: money(v, currency), "kg": mass,
        "seconds": duration, "bytes": size, "flag": lambda v: "yes" if v else "no", "regime": regime}
    return shown.get(kind, str)(value)


def _markup(function: Callable[..., str]) -> Callable[..., Markup]:
    """Filters build their text from numbers only (strings are escaped first), so the result is safe HTML."""
    @functools.wraps(function)
    def wrapped(value: object, *args: object) -> Markup:
        if isinstance(value, str):
            value = str(escape(value))
        return Markup(function(value, *args).replace("-", "−") if not isinstance(value, str)
                      else function(value, *args))
    return wrapped


def ticked(text: str) -> Markup:
    """A sentence whose `backticked` names (fields, choices) are shown as code; the rest escaped."""
    parts = str(escape(text)).split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: the text as it is
        return Markup("`".join(parts))
    return Markup("".join(f"<code>{part}</code>" if index % 2 else part for index, part in enumerate(parts)))


def doing(axis: str) -> str:
    """A slot's axis as a sentence says it: "cured by distributing the model"."""
    return cast(dict[str, str], AXIS_DOING).get(axis, axis)


def ceiling_words(name: str) -> str:
    """A ceiling as a sentence names it: "the memory capacity"."""
    kind = cast(dict[str, CeilingKind], CEILING).get(name)
    return kind.words if kind is not None else name


_FORMATTERS: dict[str, Callable[..., str]] = {
    "num": number, "int": integer, "nodes": nodes, "count": count, "pct": percent, "times": times,
    "duration": duration, "size": size, "rate": rate, "money": money, "mass": mass, "energy": energy,
    "regime": regime, "keyvalue": key_value, "counted": counted, "margin": margin, "headroom": headroom,
    "requests": requests, "target_share": target_share,
    "plural": plural, "change": change,
    "doing": doing, "ceiling": ceiling_words,
}
FILTERS: dict[str, Callable[..., Markup]] = {name: _markup(function) for name, function in _FORMATTERS.items()}
FILTERS["ticked"] = ticked
# a lever's value: "55.04 USD per node-hour" keeps its hyphen (the values are never negative)
FILTERS["lever"] = lambda lever, which, currency: Markup(escape(lever_value(lever, which, currency)))
# why a way considered on page 2 was not the one chosen (words from page 1's facts)
FILTERS["why_not"] = lambda candidate, chosen: Markup(escape(why_not(candidate, chosen)))


# Markdown written for a pull-request comment quotes project text (titles, names, slot choices, changed inputs):
# it must stay text. Every character Markdown or an autolinker gives a meaning to is escaped: emphasis, code, links
# and images, tables, headings and lists, and the dots, colons and at-signs of a URL, a domain or an address; HTML's
# three specials become entities, so no tag (<img>, <a>, </details>) is ever written.
_MARKDOWN_SPECIAL = frozenset("\\`*_{}[]()#+-.!|~:@$")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(text: object) -> str:
    """Project text as inert Markdown on one line: whitespace (every line break) collapsed, specials escaped."""
    out = []
    line = " ".join(str(text).split())
    for index, char in enumerate(line):
        if char in _HTML_ENTITIES:
            out.append(_HTML_ENTITIES[char])
        elif char in _MARKDOWN_SPECIAL and not _between_digits(line, index):
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _between_digits(line: str, index: int) -> bool:
    """A point or a hyphen inside a number or a date ("1.02 s", "2026-11-29"): no list, link or markup can start
    there, and escaping it only shows the backslash where Markdown is read as text."""
    return line[index] in ".-" and 0 < index < len(line) - 1 and line[index - 1].isdigit() and \
        line[index + 1].isdigit()
