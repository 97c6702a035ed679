"""The report's figures in its PDF: the report is laid out around a placeholder image of each, the figures are
painted in a document of their own, one per page, and each page is then put in place of its placeholder.

Drawing the figures' vectors is a third of WeasyPrint's work on a report, and it does not depend on the layout: so
the two documents can be made at the same time, in two processes (reportgen.render.pdf_workers). Each placeholder
is a blank image of the figure's exact aspect ratio and of a pixel size no other placeholder of the report has
(scaled by a whole number where two figures share a shape), so it is found in the laid-out PDF by the /Width and
/Height of its image. pikepdf (qpdf) then turns each figure's page into a form XObject, which is drawn in the unit
square exactly like the image it replaces, and copies it with the fonts and patterns it uses into the report. A
placeholder that is not found fails the build rather than leave a figure out.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING

from reportgen.errors import RenderError
from reportgen.figures.jobs import FIGURE_SCHEME, slot

if TYPE_CHECKING:
    import pikepdf

# The figures' inline SVG as style.to_svg writes it; project text is escaped, so it cannot produce this.
_INLINE_FIGURE = re.compile(r'<svg role="img" [^>]*class="figure-svg"[^>]*>.*?</svg>', re.DOTALL)
_VIEWBOX = re.compile(rb'viewBox="0 0 ([0-9.]+) ([0-9.]+)"')
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


# Figures are painted in two documents, the first half (in document order) and the rest, once a report has this
# many: the first half is painted while the rest are drawn (reportgen.render.pdf_workers). Fixed by the count alone,
# so that the PDF is the same bytes whichever process paints and however fast the figures come.
PAINTED_IN_HALVES_FROM = 6


def paint_chunks(count: int) -> list[range]:
    """The slots painted together, in order: each range one WeasyPrint document of the figures' pages."""
    if count < PAINTED_IN_HALVES_FROM:
        return [range(count)] if count else []
    half = (count + 1) // 2
    return [range(half), range(half, count)]


def place_figures(report: bytes, painted: Iterable[bytes], slots: Sequence[FigureSlot]) -> bytes:
    """`report`, a PDF laid out around the placeholder of each of `slots`, with each placeholder replaced by the
    matching page of the `painted` PDFs (together one figure per page, in the order of the slots, as
    `paint_chunks` groups them) drawn as a form XObject.

    `painted` is read once the report is: the PDF workers pass the paintings as they finish, so that the report's
    PDF is read meanwhile. qpdf reads every object of a PDF before it adds one to it (the figures' forms); for the
    example's report, 4,300 objects, most of them its tags, that is 0.03 s, done here before the last painting is
    awaited rather than after it."""
    import pikepdf

    with contextlib.ExitStack() as stack:
        laid_out = stack.enter_context(pikepdf.open(io.BytesIO(report)))
        len(laid_out.objects)  # every object read now (see above)
        pages = [page for pdf in painted for page in stack.enter_context(pikepdf.open(io.BytesIO(pdf))).pages]
        if len(pages) != len(slots):
            raise RenderError(f"{len(slots)} figures but {len(pages)} were painted")
        forms = {size: laid_out.copy_foreign(_as_image(page))
                 for size, page in zip(placeholder_sizes(slots), pages, strict=True)}
        placed = 0
        for images, name, size in _images(laid_out):
            if size in forms:
                images[name] = forms[size]
                placed += 1
        if placed != len(slots):
            raise RenderError(f"the PDF renderer left room for {placed} of {len(slots)} figures")
        output = io.BytesIO()
        # the same bytes for the same input: an /ID from the content, not from the clock
        laid_out.save(output, deterministic_id=True, object_stream_mode=pikepdf.ObjectStreamMode.generate)
    return output.getvalue()


def _images(pdf: pikepdf.Pdf) -> Iterator[tuple[pikepdf.Object, str, tuple[int, int]]]:
    """Each image a page of `pdf` draws: the page's dictionary of XObjects, its name there, and its pixel size."""
    from pikepdf import Name

    for page in pdf.pages:
        resources = page.obj.get(Name.Resources)
        xobjects = resources.get(Name.XObject) if resources is not None else None
        if xobjects is None:
            continue
        for name, xobject in xobjects.items():
            if xobject.get(Name.Subtype) == Name.Image:
                yield xobjects, name, (int(xobject.Width), int(xobject.Height))


def _as_image(page: pikepdf.Page) -> pikepdf.Object:
    """A page as a form XObject drawn in the unit square, exactly where and how the image it replaces was."""
    import pikepdf

    form = page.as_form_xobject()
    left, bottom, right, top = (float(value) for value in page.mediabox)
    width, height = right - left, top - bottom
    form.Matrix = pikepdf.Array([1 / width, 0, 0, 1 / height, -left / width, -bottom / height])
    return form
