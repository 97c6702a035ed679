"""Invariants every analysis declared in its own module is held to, besides its author's worked test
(docs/architecture.md#adding-an-analysis-the-recipe): read from its per-scale rows' keys alone, so a new analysis is
checked the day it is listed, and a wrong formula fails more than its own test. The registry's analyses are checked,
and the node-hours probe of tests/probe_analysis.py, whose rows hold node-hours and money; its twin with a factor of
16 planted is shown to fail.

- Units: every numeric column says its unit, by its name's suffix, a money key, or its meaning ("in J·s").
- Time: with every run twice as long, a column in seconds, hours, energy or money per run doubles.
- Nodes: two projects that differ only in node count (every run on twice the nodes, the same times): seconds stay,
  node-hours, energy and money per run double.
- The units' definitions: node-hours are p · T / 3600 of the row's run, device-hours d times as many, and money per
  run the on-demand price of its node-hours."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from reportgen.analysis import DECLARED, analyze
from reportgen.analysis.declared import Declared, Inputs
from reportgen.keys import CURRENCY, UNIT_SUFFIXES, Key, declared
from tests.conftest import make_project
from tests.probe_analysis import PLANTED, PROBE

PRICE, DEVICES = 36.0, 8
PROJECT = """
project: {title: T}
hardware: {devices_per_node: 8}
pricing: {node_hour: 36 USD}
energy: {node_power: 500 W, pue: 1.2}
scaling:
  runs: [RUNS]
"""
SCALES = ((1, 7200.0), (2, 4500.0), (4, 2700.0))
HOURS = "_hours"  # node-hours, device-hours: a time times a count of machines
EXTENSIVE = ("_j", "_kwh", HOURS)  # units that grow with the nodes a run uses, as money per run does


def project(scales: tuple[tuple[float, float], ...]) -> str:
    return PROJECT.replace("RUNS", ", ".join(f"{{nodes: {n:g}, time: {t!r} s}}" for n, t in scales))


def result_of(analysis_declared: Declared[object], scales: tuple[tuple[float, float], ...]) -> object:
    """The analysis's result for a project of these runs, computed from what its `needs` name, as the registry
    runs it (so that an analysis the registry does not list is checked the same way)."""
    loaded = make_project(project(scales))
    analysis = analyze(loaded)
    needed = [analysis.declared[need] if need in analysis.declared else getattr(analysis, need)
              for need in analysis_declared.needs]
    result = analysis_declared.run(Inputs(loaded), *needed)
    assert result is not None, f"{analysis_declared.key} gave nothing for a project with every input"
    return result


def rows_of(analysis_declared: Declared[object], scales: tuple[tuple[float, float], ...]) -> list[dict[str, object]]:
    """The analysis's per-scale rows as results.json names their keys."""
    rows = getattr(result_of(analysis_declared, scales), "rows", ())
    return [{item.names[0]: getattr(row, item.attribute) for item in declared(type(row))} for row in rows]


@functools.cache  # one analysis per declared analysis, not one per check
def keys_of_rows(analysis_declared: Declared[object]) -> dict[str, Key]:
    row_type = type(result_of(analysis_declared, SCALES).rows[0])  # type: ignore[attr-defined]
    return {item.names[0]: item.key for item in declared(row_type)}


def unit_of(name: str, key: Key) -> str | None:
    if key.unit == CURRENCY:
        return "money"
    if name == "nodes":
        return "nodes"
    for suffix in (*(suffix for suffix, _ in UNIT_SUFFIXES), "_j", HOURS):
        if name.endswith(suffix):
            return suffix
    return None


WITH_ROWS = [analysis for analysis in (*DECLARED, PROBE)
             if "rows" in {f.name for f in dataclasses.fields(analysis.result)}]  # type: ignore[arg-type]


@pytest.mark.parametrize("analysis_declared", WITH_ROWS, ids=[analysis.key for analysis in WITH_ROWS])
def test_every_numeric_column_says_its_unit(analysis_declared: Declared[object]) -> None:
    rows = rows_of(analysis_declared, SCALES)
    for name, key in keys_of_rows(analysis_declared).items():
        if any(isinstance(row[name], bool) for row in rows):
            continue
        assert unit_of(name, key) or " in " in key.doc, f"{analysis_declared.key}.{name} says no unit"


def assert_scaled(analysis_declared: Declared[object], changed: tuple[tuple[float, float], ...],
                  doubled: tuple[str | None, ...], kept: tuple[str | None, ...]) -> None:
    """The rows of the project of `changed` runs against those of SCALES: a column in a unit of `doubled` twice as
    large, one in a unit of `kept` the same."""
    base, after = rows_of(analysis_declared, SCALES), rows_of(analysis_declared, changed)
    for name, key in keys_of_rows(analysis_declared).items():
        unit = unit_of(name, key)
        factor = 2.0 if unit in doubled else 1.0 if unit in kept else None
        for before, now in zip(base, after, strict=True):
            if factor is not None and before[name] is not None:
                assert now[name] == pytest.approx(factor * before[name], rel=1e-9), (analysis_declared.key, name)


@pytest.mark.parametrize("analysis_declared", WITH_ROWS, ids=[analysis.key for analysis in WITH_ROWS])
def test_twice_the_time_doubles_every_time_energy_and_money(analysis_declared: Declared[object]) -> None:
    assert_scaled(analysis_declared, tuple((n, 2 * t) for n, t in SCALES), ("_s", "money", *EXTENSIVE), ("nodes",))


@pytest.mark.parametrize("analysis_declared", WITH_ROWS, ids=[analysis.key for analysis in WITH_ROWS])
def test_twice_the_nodes_at_the_same_times_doubles_what_grows_with_them(analysis_declared: Declared[object]) -> None:
    assert_scaled(analysis_declared, tuple((2 * n, t) for n, t in SCALES), ("nodes", "money", *EXTENSIVE), ("_s",))


def units_defined(analysis_declared: Declared[object]) -> int:
    """Holds a row's node-hours to p · T / 3600 of its run, its device-hours to d times as many, its money per run to
    the on-demand price of its node-hours; returns how many values it checked."""
    checked = 0
    keys = keys_of_rows(analysis_declared)
    for row in rows_of(analysis_declared, SCALES):
        nodes, time_s = row["nodes"], dict(SCALES)[row["nodes"]]  # type: ignore[index]
        run_hours = nodes * time_s / 3600  # type: ignore[operator]
        for name, key in keys.items():
            expected = {"node_hours": run_hours, "device_hours": run_hours * DEVICES}.get(name)
            if key.unit == CURRENCY:
                expected = run_hours * PRICE
            if expected is not None and row[name] is not None:
                assert row[name] == pytest.approx(expected, rel=1e-12), (analysis_declared.key, name)
                checked += 1
    return checked


def test_node_hours_device_hours_and_money_mean_what_their_units_say() -> None:
    """Every analysis with such columns is held to their definitions (the probe's 3 rows × 3 columns at least), and a
    16× slip in node-hours fails, whatever the analysis."""
    assert sum(units_defined(analysis) for analysis in WITH_ROWS) >= 9
    with pytest.raises(AssertionError, match="node_hours"):
        units_defined(PLANTED)
