"""Rendering: jinja2 templates → one self-contained HTML file, and a PDF from the same HTML with WeasyPrint.

Formats, never computes. The PDF renderer fetches nothing but reportgen's own bundled assets.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from reportgen.assets import templates_dir

if TYPE_CHECKING:
    import jinja2


@cache
def environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=jinja2.select_autoescape(["html", "xml"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def render_pdf(html: str) -> bytes:
    from reportgen.pdf import html_to_pdf

    return html_to_pdf(html)
