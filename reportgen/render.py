"""Rendering: jinja2 templates → one self-contained HTML file, and a PDF from the same HTML with WeasyPrint.

Formats, never computes. The PDF renderer fetches nothing at all (reportgen.pdf).
"""

from __future__ import annotations

import dataclasses
import math
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen.assets import templates_dir

if TYPE_CHECKING:
    import jinja2

    from reportgen.pdf import FigurePainter


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (a tenth of a second per cold build); jinja2 keys each entry by
    the template's source checksum, so an edited template is compiled again. None where nothing can be written."""
    import jinja2

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "reportgen" / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder)) if os.access(folder, os.W_OK) else None


def _environment(*, autoescape: bool) -> jinja2.Environment:
    import jinja2

    from reportgen.formatting import FILTERS

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        bytecode_cache=_bytecode_cache(),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.globals["inf"] = math.inf
    return env


@cache
def environment() -> jinja2.Environment:
    """HTML: every template, including the included report.css, escapes what it is given."""
    return _environment(autoescape=True)


def template_vars(context: Any) -> dict[str, Any]:
    """A context dataclass as template variables: its fields, not copied (dataclasses.asdict would deep-copy
    every result and turn nested dataclasses into dicts)."""
    return {field.name: getattr(context, field.name) for field in dataclasses.fields(context)}


def render_html(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


@cache
def markdown_environment() -> jinja2.Environment:
    """Markdown for pull-request comments: no HTML escaping, but table cells keep their pipes escaped."""
    env = _environment(autoescape=False)
    env.filters["cell"] = lambda text: " ".join(str(text).split()).replace("|", "\\|")
    return env


def render_markdown(template: str, context: dict[str, Any]) -> str:
    return markdown_environment().get_template(template).render(**context)


def render_pdf(html: str, *, epoch: int = 0, painter: FigurePainter | None = None) -> bytes:
    """The PDF of `html`; `painter` paints its figures (reportgen.pdf_process), or this process does."""
    from reportgen.pdf import html_to_pdf

    return html_to_pdf(html, epoch=epoch, painter=painter)
