"""The report read as its reader reads it: captions name the colours drawn, sentences never run together, one
duration format per table column."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from reportgen.figures.style import BLUE, GREEN, GREY, INK, ORANGE, PURPLE, SKY, VERMILION
from reportgen.pipeline import BuildOptions, analyze_loaded, build
from reportgen.project.loader import load_project
from reportgen.render.figure_families import figure_jobs
from tests.conftest import INPUTS, example_projects

# How captions name colours, and the colour each name must find drawn; a name outside the palette (red, purple) is
# always wrong.
COLOURS = {"sky blue": SKY, "blue": BLUE, "orange": ORANGE, "grey": GREY, "pink": PURPLE, "green": GREEN,
           "vermilion": VERMILION, "black": INK}
FOREIGN = ("red", "purple", "yellow", "brown", "cyan")
OWNED_NOT_VIABLE = INPUTS / "example.yaml"  # its owned regime is below its minimum utilization: drawn grey
PROJECTS = example_projects(("example.yaml", "inference-service.yaml", "finetune-7b.yaml", "finetune-r1.yaml",
                             "nightly-repeats.yaml", "bert-dgx-a100.yaml"))


def colour_names(caption: str) -> list[str]:
    text = caption.lower()
    found = []
    for name in COLOURS:  # "sky blue" before "blue"
        if re.search(rf"\b{name}\b", text):
            found.append(name)
            text = re.sub(rf"\b{name}\b", " ", text)
    return found


@pytest.mark.parametrize("name", PROJECTS)
def test_captions_name_only_the_colours_the_figure_draws(name: str) -> None:
    loaded = load_project(INPUTS / name)
    analysis, _ = analyze_loaded(loaded)
    for job in figure_jobs(analysis, loaded.project):
        caption = job.frame.caption
        for word in FOREIGN:
            assert not re.search(rf"\b{word}\b", caption.lower()), f"{job.frame.key}: “{word}” is not drawn"
        svg = job.run().lower()
        for colour in colour_names(caption):
            assert COLOURS[colour] in svg, f"{name} {job.frame.key}: the caption says {colour}, the figure has none"


def test_a_regime_drawn_grey_is_called_grey() -> None:
    loaded = load_project(OWNED_NOT_VIABLE)
    analysis, _ = analyze_loaded(loaded)
    assert not analysis.cost.regimes["local"].viable
    regimes = next(job for job in figure_jobs(analysis, loaded.project) if job.frame.key == "regimes")
    assert "owned grey dash-dot, not viable" in regimes.frame.caption and "green" not in regimes.frame.caption


def visible_text(markup: str) -> str:
    markup = re.sub(r"<style.*?</style>|<script.*?</script>|<svg.*?</svg>|<pre.*?</pre>", "", markup, flags=re.S)
    markup = re.sub(r"</(p|dd|dt|li|td|th|h\d|caption|div|figcaption|summary|span)>", " ", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("reading")
    pages = {}
    for name in PROJECTS:
        build(INPUTS / name, BuildOptions(out_root=folder, formats=("html",), use_disk_cache=False))
        pages[name] = (folder / Path(name).stem / "report.html").read_text(encoding="utf-8")
    return pages


@pytest.mark.parametrize("name", PROJECTS)
def test_sentences_never_run_together(built: dict[str, str], name: str) -> None:
    text = visible_text(built[name])
    joined = re.findall(r".{20}[a-z0-9)%][.;:][A-Z][a-z].{10}", text)  # "R(p*) = 17.1.With the", "p_dom = 50.The"
    assert not joined, joined
    spaced = re.findall(r".{20}\w[ \t\n]+[.,;:](?:\s|$)", text)  # "the budget ." from a block tag's line break
    assert not spaced, spaced


@pytest.mark.parametrize("name", PROJECTS)
def test_one_duration_format_per_column(built: dict[str, str], name: str) -> None:
    """A column of durations never mixes "1 h 57 min" with "55.4 min" or "9.17 h"."""
    for table in re.findall(r"<table.*?</table>", built[name], flags=re.S):
        if "per-row-units" in table.split(">", 1)[0]:  # the levers: each row in its own lever's unit
            continue
        rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S) for row in re.findall(r"<tr.*?</tr>", table,
                                                                                           flags=re.S)]
        for column in zip(*[row for row in rows if len(row) == max(map(len, rows), default=0)], strict=False):
            forms = {_form(visible_text(cell).strip()) for cell in column} - {None}
            assert len(forms) <= 1, (name, column)


def _form(cell: str) -> str | None:
    """The duration format a cell is written in ("h min", "h", "min", "s", …), or None for any other cell."""
    cell = cell.split("[")[0].strip()  # an interval in brackets follows the value
    if re.fullmatch(r"\d+ h \d+(\.\d)? min", cell):
        return "h min"
    match = re.fullmatch(r"[\d,.]+ (µs|ms|s|min|h|days)", cell)
    return match.group(1) if match else None


@pytest.mark.parametrize("name", PROJECTS)
def test_every_finding_is_shown_where_its_link_points(built: dict[str, str], name: str) -> None:
    """Errors and warnings on page 1, each linked to the section that explains it; notes in that section."""
    from reportgen.analysis import analyze

    page = built[name]
    for finding in analyze(load_project(INPUTS / name).project).findings:
        assert f'id="{finding.section}"' in page, (finding.code, finding.section)
        section = page.split(f'id="{finding.section}"', 1)[1]
        assert f"<code>{finding.code}</code>" in section, (name, finding.code, finding.section)
