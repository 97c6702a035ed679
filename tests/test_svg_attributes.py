"""The figures' CSS as presentation attributes for the PDF's painter: exactly WeasyPrint's cascade, the same PDF
byte for byte, and anything else left as it was."""

from __future__ import annotations

import re

import pytest

from reportgen.pipeline import analyze_loaded, load_project
from reportgen.render import pdf
from reportgen.render.figure_families import figure_jobs
from reportgen.render.pdf_forms import Figure, FigureSlot
from reportgen.render.svg_attributes import as_presentation_attributes
from tests.conftest import INPUTS

SHEET = b'<defs><style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style></defs>'


def svg(body: bytes, sheet: bytes = SHEET) -> bytes:
    return b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">' + sheet + body + b"</svg>"


def attributes_of(svg: bytes, tag: bytes) -> dict[bytes, bytes]:
    start = re.search(rb"<" + tag + rb"\b[^>]*>", svg)
    assert start is not None
    return dict(re.findall(rb'([\w:.-]+)="([^"]*)"', start.group(0)))


def test_the_sheet_goes_on_every_element_and_the_style_attribute_over_it() -> None:
    rewritten = as_presentation_attributes(svg(
        b'<g stroke-linecap="square"><path d="M 0 0" style="stroke: #000000; stroke-linejoin: miter"/></g>'
        b'<text x="1" style="font-size: 7px; font-family: \'DejaVu Sans\'">a &amp; b</text>'))
    assert b"<style" not in rewritten and b"style=" not in rewritten
    # WeasyPrint's order: the element's attributes, the style sheet over them, the style attribute over both
    assert attributes_of(rewritten, b"g") == {b"stroke-linecap": b"butt", b"stroke-linejoin": b"round"}
    assert attributes_of(rewritten, b"path") == {b"d": b"M 0 0", b"stroke-linejoin": b"miter",
                                                  b"stroke-linecap": b"butt", b"stroke": b"#000000"}
    assert attributes_of(rewritten, b"text")[b"font-family"] == b"'DejaVu Sans'"
    assert b">a &amp; b</text>" in rewritten  # text untouched
    assert rewritten.count(b"/>") == 1  # an empty element stays empty


def test_without_a_sheet_only_style_attributes_change() -> None:
    source = svg(b'<path d="M 0 0" style="FILL: none"/><path d="M 1 1"/>', sheet=b"")
    rewritten = as_presentation_attributes(source)
    assert rewritten == source.replace(b'style="FILL: none"/>', b'fill="none" />')


@pytest.mark.parametrize("body, sheet", [
    (b'<path style="fill: red !important"/>', SHEET),  # !important ranks otherwise
    (b'<path style="fill: red"/>', b'<style type="text/css">path{fill: blue}</style>'),  # another selector
    (b'<path style="fill: red"/>', SHEET + SHEET),  # two sheets
    (b"<path style='fill: red'/>", SHEET),  # an attribute in single quotes: a tag not read
    (b'<!-- <path style="fill: red"/> --><path/>', SHEET),  # a comment
    (b'<path style="fill: r&#101;d"/>', SHEET),  # an escaped character
    (b'<path style="fill: red; /* a comment */"/>', SHEET),
    (b'<text style="font-family: &quot;DejaVu Sans&quot;"/>', SHEET),
])
def test_css_it_cannot_rewrite_exactly_is_left_as_it_was(body: bytes, sheet: bytes) -> None:
    assert as_presentation_attributes(svg(body, sheet)) == svg(body, sheet)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["example.yaml", "llm-service.yaml"])
def test_the_painted_pdf_is_the_same_bytes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_project(INPUTS / name)
    analysis, _ = analyze_loaded(loaded)
    figures = []
    for job in figure_jobs(analysis, loaded.project):
        drawn = job.run().encode()
        # the rewrite happened: no CSS is left for the painter (else this test would compare a figure with itself)
        assert b"style=" not in as_presentation_attributes(drawn), job.frame.key
        figures.append(Figure(FigureSlot(job.frame.url, *job.frame.points), drawn))
    rewritten = pdf.figures_pdf(figures)
    monkeypatch.setattr(pdf, "as_presentation_attributes", lambda svg: svg)
    assert rewritten == pdf.figures_pdf(figures)
