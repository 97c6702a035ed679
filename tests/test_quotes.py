"""Every figure page 1 quotes has one source (docs/methods.md#every-figure-has-one-source): the path of a quoted value
is found from the object that owns it, a text keeps the figures it quoted, and a figure computed beside its owner is
caught."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated

from reportgen.analysis import analyze
from reportgen.analysis.quotes import Sources, figures_of, quote, quoting, recording
from reportgen.analysis.verdict.goal import GoalCheck, GoalRow
from reportgen.keys import Key
from reportgen.project.loader import load_project
from reportgen.wording import duration, percent
from tests.conftest import INPUTS
from tests.generated.figures import unquoted_figures


@dataclass(frozen=True)
class _Row:
    nodes: Annotated[float, Key("node count")]
    time: Annotated[float, Key("seconds", name="time_s")]
    scratch: float = 0.0  # a working value, not a key


@dataclass(frozen=True)
class _Section:
    rows: Annotated[tuple[_Row, ...], Key("rows")]
    limit: Annotated[float, Key("the limit", name="limit_s")]


def _check(time_s: float) -> GoalCheck:
    return GoalCheck(8, "spot", True, time_s, 10.0, None, True, True, time_s / 100, 0.5, None, True)


def test_a_path_is_found_from_the_object_under_its_key_names() -> None:
    section = _Section((_Row(1, 50.0), _Row(2, 30.0)), 40.0)
    sources = Sources.of({"part": section})
    assert sources.path(section.rows[1], "time") == "part.rows[1].time_s"  # the key's name, not the attribute's
    assert sources.path(section, "limit") == "part.limit_s"
    assert sources.path(section.rows[0], "scratch") is None  # not a key: no path
    assert sources.path(_Row(2, 30.0), "time") is None  # an equal copy is not the object: no path


def test_an_object_written_as_another_type_takes_that_types_keys() -> None:
    """A goal's check is written as a GoalRow: its time_ci is the row's `time_s_ci`, and its interval's ends are rows
    of that list."""
    check = replace(_check(80.0), time_ci=(70.0, 90.0))
    sources = Sources.of({}, [(check, "goal.at_plan[1]", GoalRow, {})])
    assert sources.path(check, "time_s") == "goal.at_plan[1].time_s"
    assert sources.path(check.time_ci, 1) == "goal.at_plan[1].time_s_ci[1]"
    assert sources.path(check, "hold") is None


def test_a_text_keeps_the_figures_it_quoted_and_passes_them_up() -> None:
    section = _Section((_Row(1, 50.0), _Row(2, 30.0)), 40.0)

    @quoting
    def inner(row: _Row) -> str:
        return duration(quote(row, "time", "s"))

    @quoting
    def outer(s: _Section) -> str:
        return f"{inner(s.rows[1])} against {duration(quote(s, 'limit', 's'))} ({percent(len(s.rows) / 4)})"

    with recording(Sources.of({"part": section})) as page:
        text = outer(section)
    assert text == "30 s against 40 s (50.0 %)"
    assert [(q.source, q.value, q.unit) for q in figures_of(text)] == [("part.rows[1].time_s", 30.0, "s"),
                                                                       ("part.limit_s", 40.0, "s")]
    assert [q.source for q in page] == ["part.rows[1].time_s", "part.limit_s"]  # the 50 % has no source
    assert figures_of(outer(section)) == ()  # outside a recording nothing is quoted
    assert figures_of("plain") == ()


def test_a_figure_page_one_writes_beside_its_quantities_is_caught() -> None:
    """The example's page 1 quotes only its quantities; a figure added to its verdict that none of them is written
    as (a recomputed margin) is named."""
    loaded = load_project(INPUTS / "example.yaml")
    summary = analyze(loaded.project).summary
    assert summary is not None and summary.quantities
    assert unquoted_figures(summary, "USD") == []
    changed = replace(summary, verdict=summary.verdict + " A run is 37.7 % over.")
    assert unquoted_figures(changed, "USD") == ["37.7 % over"]
    bare = unquoted_figures(replace(summary, quantities=()), "USD")  # without its quantities, every figure is named
    assert "41 % over" in bare and len(bare) >= 10
