"""The report's figures as PDF form XObjects: painted in a document of their own, then put where the report left
room for them.

Drawing the figures' vectors is a third of WeasyPrint's work on a report, and it does not depend on the layout. So
the report is laid out with a placeholder image of each figure's exact aspect ratio, while a second document with
one figure per page (same SVG, same fonts, same WeasyPrint) is painted elsewhere, in another process when there is
a second core. Each of its pages becomes a form XObject, and the objects it needs (fonts, patterns, transparency
states) are copied into the report's PDF with new numbers, in place of the placeholder. A form XObject is drawn in
the unit square exactly like the image it replaces, so nothing else in the report's content changes.

Everything here works on pydyf objects through WeasyPrint's public `finisher` hook and on what the PDF itself says:
each placeholder is a blank image of a pixel size no other placeholder of the report has (its figure's aspect
ratio, scaled by a whole number where two figures share a shape), so it is found by the /Width and /Height of its
image XObject. If a placeholder is not found, the build fails rather than leave a figure out.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import pydyf

from reportgen.errors import RenderError
from reportgen.figures.jobs import FIGURE_SCHEME, slot

# The figures' inline SVG as style.to_svg writes it; project text is escaped, so it cannot produce this.
_INLINE_FIGURE = re.compile(r'<svg role="img" [^>]*class="figure-svg"[^>]*>.*?</svg>', re.DOTALL)
_VIEWBOX = re.compile(rb'viewBox="0 0 ([0-9.]+) ([0-9.]+)"')
# An indirect reference in a serialised PDF dictionary ("12 0 R"); pydyf writes generation 0 only.
_REFERENCE = re.compile(rb"(?<![\w.])(\d+) 0 R(?!\w)")
_MAX_PLACEHOLDER_PIXELS = 1000  # per side: aspect ratios are matched to 1 part in a million or better


@dataclass(frozen=True)
class FigureSlot:
    """Where the layout leaves room for a figure: the URL of its placeholder image, and the figure's size."""

    url: str
    width: Fraction  # SVG user units (matplotlib writes points)
    height: Fraction

    @property
    def shape(self) -> Fraction:
        """The figure's aspect ratio (width / height), in whole pixels of at most a thousand a side."""
        return (self.width / self.height).limit_denominator(_MAX_PLACEHOLDER_PIXELS)


def placeholder_sizes(slots: Sequence[FigureSlot]) -> list[tuple[int, int]]:
    """The pixel size of each slot's placeholder: its shape, times the number of earlier slots of the same shape
    plus one, so that no two placeholders of a report have the same size and each is found by it."""
    seen: dict[Fraction, int] = {}
    sizes = []
    for each in slots:
        times = seen[each.shape] = seen.get(each.shape, 0) + 1
        sizes.append((each.shape.numerator * times, each.shape.denominator * times))
    return sizes


def placeholders(slots: Sequence[FigureSlot]) -> dict[str, bytes]:
    """The blank PNG of each slot, by its URL: the report is laid out around them."""
    return {each.url: _blank_png(*size) for each, size in zip(slots, placeholder_sizes(slots), strict=True)}


@dataclass(frozen=True)
class Figure:
    slot: FigureSlot
    svg: bytes


@cache
def _blank_png(width: int, height: int) -> bytes:
    from PIL import Image

    output = io.BytesIO()
    Image.new("L", (width, height), 255).save(output, format="PNG")
    return output.getvalue()


def figures_as_placeholders(html: str) -> tuple[str, list[Figure]]:
    """`html` with each inline figure replaced by a placeholder image, and the figures in document order (the
    report's own pages come with their slots already; this serves any page with inline figures)."""
    figures: list[Figure] = []

    def to_image(match: re.Match[str]) -> str:
        svg = match.group(0).encode("utf-8")
        size = _VIEWBOX.search(svg)
        if size is None:
            raise RenderError("a figure's SVG has no viewBox, so its size is unknown")
        width, height = (Fraction(number.decode()) for number in size.groups())
        figure = Figure(FigureSlot(f"{FIGURE_SCHEME}{len(figures)}", width, height), svg)
        figures.append(figure)
        return slot(figure.slot.url)

    return _INLINE_FIGURE.sub(to_image, html), figures


def figure_pages(slots: Sequence[FigureSlot]) -> str:
    """HTML with each figure alone on a page of its own size, in order."""
    rules = "".join(f"@page f{index} {{ size: {float(slot.width)}pt {float(slot.height)}pt; margin: 0 }} "
                    f".f{index} {{ page: f{index} }} " for index, slot in enumerate(slots))
    images = "".join(f'<img class="f{index}" alt="" src="{slot.url}">' for index, slot in enumerate(slots))
    return f"<style>body {{ margin: 0 }} img {{ display: block; width: 100% }} {rules}</style>{images}"


@dataclass(frozen=True)
class FigureArt:
    """Painted figures, ready to copy into another PDF: each object as its serialised dictionary and stream (empty
    for an object without one), by its number in the painted document."""

    forms: tuple[int, ...]  # the form XObject of each figure, in order
    objects: dict[int, tuple[bytes, bytes]]


def collect_art(pdf: pydyf.PDF) -> FigureArt:
    """The pages of the figure document `pdf` (a pydyf.PDF about to be written) as form XObjects, with every
    object they reach."""
    forms = []
    for number in pdf.pages["Kids"][::3]:
        page = pdf.objects[number]
        left, top, right, bottom = (float(value) for value in page["MediaBox"])
        width, height = right - left, bottom - top
        contents = pdf.objects[_number(page["Contents"])]
        form = pydyf.Stream(contents.stream, pydyf.Dictionary({
            "Type": "/XObject",
            "Subtype": "/Form",
            "BBox": page["MediaBox"],
            # the unit square, where an image is drawn, onto the page
            "Matrix": pydyf.Array((1 / width, 0, 0, 1 / height, -left / width, -top / height)),
            "Resources": page["Resources"],
        }), compress=contents.compress)
        pdf.add_object(form)
        forms.append(form.number)

    objects: dict[int, tuple[bytes, bytes]] = {}
    waiting = list(forms)
    while waiting:
        number = waiting.pop()
        if number in objects:
            continue
        obj = pdf.objects[number]
        data: bytes = obj.data
        # a stream's dictionary comes before its data, which may hold any bytes and is copied as it is
        head, _, stream = data.partition(b"\nstream\n") if isinstance(obj, pydyf.Stream) else (data, b"", b"")
        objects[number] = (head, b"\nstream\n" + stream if stream else b"")
        waiting.extend(int(found) for found in _REFERENCE.findall(head))
    return FigureArt(tuple(forms), objects)


def place_art(pdf: pydyf.PDF, slots: Sequence[FigureSlot], art: FigureArt) -> None:
    """Put each figure's form XObject in place of its placeholder image in `pdf` (a pydyf.PDF about to be
    written), and copy the objects the forms use."""
    if len(art.forms) != len(slots):
        raise RenderError(f"{len(slots)} figures but {len(art.forms)} were painted")
    placeholders = _placeholder_objects(pdf, slots)
    renumbered = dict(zip(art.forms, placeholders, strict=True))
    copies = [number for number in sorted(art.objects) if number not in renumbered]
    renumbered.update((number, len(pdf.objects) + index) for index, number in enumerate(copies))

    def copy(number: int) -> _Copied:
        head, stream = art.objects[number]
        return _Copied(_REFERENCE.sub(lambda match: b"%d 0 R" % renumbered[int(match.group(1))], head) + stream,
                       is_stream=bool(stream))

    for number in copies:
        pdf.add_object(copy(number))
    for form, placeholder in zip(art.forms, placeholders, strict=True):
        pdf.objects[placeholder] = copy(form)
        pdf.objects[placeholder].number = placeholder


def _placeholder_objects(pdf: pydyf.PDF, slots: Sequence[FigureSlot]) -> list[int]:
    """The object number of each figure's placeholder image, in figure order: the image XObject of its size."""
    by_size: dict[tuple[int, int], int] = {}
    for obj in pdf.objects:
        if isinstance(obj, pydyf.Stream) and obj.extra.get("Subtype") == "/Image":
            by_size[int(obj.extra["Width"]), int(obj.extra["Height"])] = obj.number
    sizes = placeholder_sizes(slots)
    missing = [each.url for each, size in zip(slots, sizes, strict=True) if size not in by_size]
    if missing:
        raise RenderError(f"the PDF renderer left no room for {len(missing)} figure(s), first {missing[0]}")
    return [by_size[size] for size in sizes]


def _number(reference: Any) -> int:
    return int(bytes(reference).split()[0])


class _Copied(pydyf.Object):  # type: ignore[misc]
    """An object copied from the figure document, already serialised with this document's numbers."""

    def __init__(self, data: bytes, *, is_stream: bool) -> None:
        super().__init__()
        self._data = data
        self._is_stream = is_stream

    @property
    def data(self) -> bytes:
        return self._data

    @property
    def compressible(self) -> bool:
        return not self._is_stream  # a stream may not go into an object stream
