"""Rendering: jinja2 templates → a page with a slot for each figure → one self-contained HTML file with the
drawings inline, and a PDF of the same page with WeasyPrint.

Formats, never computes. The PDF renderer fetches nothing at all (reportgen.render.pdf).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen.figures.jobs import FigureFrame
from reportgen.render.assets import templates_dir
from reportgen.render.typography import keep_words_whole

if TYPE_CHECKING:
    import jinja2
    from _typeshed import DataclassInstance

    from reportgen.render.pdf import PdfRenderer, PendingPdf
    from reportgen.render.pdf_forms import FigureSlot


def _bytecode_cache(options: str) -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (a tenth of a second per cold build); jinja2 keys each entry by
    the template's source checksum, so an edited template is compiled again, but not by the environment's options,
    which change the compiled code too: a folder per version and options. None where nothing can be written."""
    import jinja2

    from reportgen.version import __version__

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "reportgen" / f"templates-{__version__}-{options}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder)) if os.access(folder, os.W_OK) else None


def _environment(*, autoescape: bool) -> jinja2.Environment:
    import jinja2

    from reportgen.analysis.measured.scaling import TREND_READING
    from reportgen.render.formatting import FILTERS

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        bytecode_cache=_bytecode_cache("html" if autoescape else "text"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        # A block tag keeps the line break after it: HTML collapses it to the one space between two sentences that
        # trim_blocks would remove ("R(p*) = 17.1.With the α and β …" was the result).
        trim_blocks=not autoescape,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.globals["inf"] = math.inf
    env.globals["trend_reading"] = TREND_READING
    return env


@cache
def environment() -> jinja2.Environment:
    """HTML: every template, including the included report.css, escapes what it is given."""
    return _environment(autoescape=True)


def template_vars(context: DataclassInstance) -> dict[str, object]:
    """A context dataclass as template variables: its fields, not copied (dataclasses.asdict would deep-copy
    every result and turn nested dataclasses into dicts)."""
    return {field.name: getattr(context, field.name) for field in dataclasses.fields(context)}


def render_html(template: str, context: dict[str, object]) -> str:
    return environment().get_template(template).render(**context)


@cache
def markdown_environment() -> jinja2.Environment:
    """Markdown for pull-request comments: no HTML escaping; every quoted text goes through `cell`, which makes it
    inert Markdown (no link, image, markup or raw HTML can come from a project file)."""
    from reportgen.render.formatting import markdown_text

    env = _environment(autoescape=False)
    env.filters["cell"] = markdown_text
    return env


def render_markdown(template: str, context: dict[str, object]) -> str:
    return markdown_environment().get_template(template).render(**context)


@dataclass(frozen=True)
class Page:
    """A rendered page before its figures are drawn: HTML with a slot for each figure, and the frames of the
    figures it holds, in document order. The PDF can be laid out from it while the figures are drawn."""

    html: str
    frames: tuple[FigureFrame, ...]

    def slots(self) -> list[FigureSlot]:
        from reportgen.render.pdf_forms import FigureSlot

        return [FigureSlot(frame.url, *frame.points) for frame in self.frames]

    def painting(self, pdf: PendingPdf) -> Callable[[str, str], None]:
        """What tells `pdf` each figure of this page as it is drawn (by figure key; one the page does not hold is
        passed over)."""
        slots = {frame.key: index for index, frame in enumerate(self.frames)}

        def drawn(key: str, svg: str) -> None:
            if key in slots:
                pdf.drawn(slots[key], svg.encode("utf-8"))

        return drawn

    def svgs(self, drawings: Mapping[str, str]) -> list[bytes]:
        """The SVG of each slot, in the order of the slots, from the drawings by figure key."""
        return [drawings[frame.key].encode("utf-8") for frame in self.frames]

    def with_drawings(self, drawings: Mapping[str, str]) -> str:
        """The self-contained HTML: each figure's SVG inline in its slot."""
        html = self.html
        for frame in self.frames:
            html = html.replace(frame.slot, drawings[frame.key], 1)
        return html


_HEADING = re.compile(r"<h([2-4])>(.*?)</h\1>", re.S)
_ID = re.compile(r'\sid="([^"]+)"')


def with_heading_ids(html: str) -> str:
    """Every heading without an id gets one from its text ("the-six-slots"), unique in the page, so that a reader
    can link to any subsection."""
    taken = set(_ID.findall(html))

    def named(match: re.Match[str]) -> str:
        text = re.sub(r"<[^>]+>", "", match.group(2))
        base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"
        slug, number = base, 2
        while slug in taken:
            slug, number = f"{base}-{number}", number + 1
        taken.add(slug)
        return f'<h{match.group(1)} id="{slug}">{match.group(2)}</h{match.group(1)}>'

    return _HEADING.sub(named, html)


def render_page(template: str, context: dict[str, object], frames: Sequence[FigureFrame]) -> Page:
    """The page of `template`; `frames` are the figures the context offers, of which the page holds some."""
    html = keep_words_whole(with_heading_ids(render_html(template, context)))
    held = sorted((position, index) for index, frame in enumerate(frames) if (position := html.find(frame.slot)) >= 0)
    return Page(html, tuple(frames[index] for _, index in held))


def start_pdf(page: Page, epoch: int, renderer: PdfRenderer | None = None) -> PendingPdf:
    """Begin the PDF of `page`, laid out by `renderer` (reportgen.render.pdf_workers, laying it out at once), or
    by this process once the drawings are there."""
    from reportgen.render.pdf import RenderHere

    return (renderer or RenderHere()).start(page.html, page.slots(), epoch)


@dataclass(frozen=True)
class Report:
    """A rendered page with its figures drawn: each figure's SVG by key, and its creation time (for the PDF)."""

    page: Page
    drawings: dict[str, str]
    epoch: int

    def html(self) -> bytes:
        return self.page.with_drawings(self.drawings).encode("utf-8")

    def pdf(self, renderer: PdfRenderer | None = None) -> bytes:
        return start_pdf(self.page, self.epoch, renderer).finish(self.page.svgs(self.drawings))
