"""The templates format and never compute: every number the report shows is computed by the analyses or the render
context, where a test can reach it, and each template stays readable."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from tests.conftest import ROOT

TEMPLATES = sorted(path for path in (ROOT / "templates").rglob("*") if path.suffix in (".html", ".md"))
ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow, nodes.Neg)
# Filters that aggregate numbers: a total, an extreme or an average is a number of the report, computed where a test
# reaches it (`map(attribute=…) | list` only hands a column to a formatting filter, and stays allowed)
AGGREGATES = {"sum", "min", "max", "average"}
LONGEST_LINE = 160


def test_there_are_templates_to_check() -> None:
    assert len(TEMPLATES) >= 20 and any(path.name == "report.html" for path in TEMPLATES)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: str(path.relative_to(ROOT / "templates")))
def test_a_template_does_no_arithmetic(path: Path) -> None:
    tree = jinja2.Environment().parse(path.read_text(encoding="utf-8"))
    found = [f"line {node.lineno}: {type(node).__name__}" for node in tree.find_all(ARITHMETIC)]
    found += [f"line {node.lineno}: | {node.name}" for node in tree.find_all(nodes.Filter) if node.name in AGGREGATES]
    assert not found, f"{path.name} computes; compute in the analysis or render/context.py: {found}"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: str(path.relative_to(ROOT / "templates")))
def test_a_template_line_fits_on_a_screen(path: Path) -> None:
    long = [number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if len(line) > LONGEST_LINE]
    assert not long, f"{path.name}: lines over {LONGEST_LINE} characters: {long}"


def test_the_arithmetic_check_finds_arithmetic() -> None:
    tree = jinja2.Environment().parse("{{ (a - 1) | pct }} {{ b * 2 }} {{ -c }} {{ 'x' ~ d }}")
    assert sorted(type(node).__name__ for node in tree.find_all(ARITHMETIC)) == ["Mul", "Neg", "Sub"]
    summed = jinja2.Environment().parse("{{ rows | map(attribute=1) | sum | size }} {{ xs | min }} {{ xs | list }}")
    assert sorted(node.name for node in summed.find_all(nodes.Filter) if node.name in AGGREGATES) == ["min", "sum"]


def test_a_small_screen_gets_the_contents_above_the_text_and_boxes_that_scroll() -> None:
    """Below 800 px the sidebar is not beside the text (it kept ~40 % of a 390 px phone) and tables and figures
    scroll inside their own boxes. (A check in a real browser needs Chromium, which this suite does not install.)"""
    import re

    css = (ROOT / "templates" / "report.css").read_text(encoding="utf-8")
    small = re.search(r"@media screen and \(max-width: 800px\) \{(.*?)\n\}", css, flags=re.S)
    assert small is not None
    rules = small.group(1)
    assert re.search(r"body \{ display: block; \}", rules) and "position: static" in rules
    assert re.search(r"table \{ display: block; overflow-x: auto; \}", rules)
    assert re.search(r"figure[^{]*\{ overflow-x: auto; \}", rules)
