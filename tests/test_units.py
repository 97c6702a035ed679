"""Quantity parsing: dimensions, SI values, refusals, and unit invariance as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reportgen.project import units
from reportgen.project.units import UnitProblem, parse_quantity


@pytest.mark.parametrize(("text", "dimension", "si"), [
    ("20 TFLOP/s", units.COMPUTE_RATE, 20e12),
    ("1.2 PFLOPS", units.COMPUTE_RATE, 1.2e15),
    ("800 GB/s", units.BANDWIDTH, 800e9),
    ("2.6 GiB", units.DATA, 2.6 * 2**30),  # GiB is 2^30 bytes, GB 10^9
    ("8 b", units.DATA, 1.0),  # eight bits are one byte
    ("10 us", units.TIME, 10e-6),
    ("10 µs", units.TIME, 10e-6),
    ("90 min", units.TIME, 5400.0),
    ("700 W", units.POWER, 700.0),
    ("78 kWh", units.ENERGY, 78 * 3.6e6),
    ("56 g/kWh", units.CARBON_INTENSITY, 0.056 / 3.6e6),
    ("46.7 t", units.MASS, 46_700.0),
    ("3.20 USD", units.MONEY, 3.2),
    ("50 USD/h", units.MONEY_RATE, 50 / 3600),
    ("21298 sequences/s", units.RATE, 21298.0),
    ("1.2e8 sequence", units.WORK, 1.2e8),
    ("1.3e10", units.WORK, 1.3e10),  # counts may be bare
    # the spellings people write: a reciprocal, hertz, bits per second, short names of work
    ("2000 1/s", units.RATE, 2000.0),
    ("2000 /s", units.RATE, 2000.0),
    ("2000/s", units.RATE, 2000.0),
    ("3 kHz", units.RATE, 3000.0),
    ("2000 Hz", units.RATE, 2000.0),
    ("400 Gbps", units.BANDWIDTH, 50e9),
    ("400 Gb/s", units.BANDWIDTH, 50e9),
    ("120 req/s", units.RATE, 120.0),
    ("120 reqs/s", units.RATE, 120.0),
    ("4.5 it/s", units.RATE, 4.5),
    ("1e6 it", units.WORK, 1e6),
    # carbon as papers write it: BLOOM's gCO2eq, Strubell 2019's pounds
    ("57 gCO2eq/kWh", units.CARBON_INTENSITY, 0.057 / 3.6e6),
    ("57 gCO2/kWh", units.CARBON_INTENSITY, 0.057 / 3.6e6),
    ("0.954 lb/kWh", units.CARBON_INTENSITY, 0.954 * 0.45359237 / 3.6e6),
    ("24.7 tCO2eq", units.MASS, 24_700.0),
])
def test_parses_to_si(text: str, dimension: units.Dimension, si: float) -> None:
    assert parse_quantity(text, dimension) == pytest.approx(si, rel=1e-12)


@pytest.mark.parametrize(("text", "dimension", "message"), [
    ("800 GB/s", units.COMPUTE_RATE, '(bytes per time)'),
    ("21298 sequence/s", units.BANDWIDTH, "(per time)"),  # bytes are not counts: pint alone would accept it
    ("5", units.TIME, "a number without a unit"),
    ("5 parsecs", units.TIME, "unknown unit parsecs"),
    ("9**9**9**9 s", units.TIME, "cannot read the unit"),
    ("2 ** 3 s", units.TIME, "cannot read the unit"),
    ("1e400 s", units.TIME, "not a finite number"),
    ("fast", units.TIME, "not a number followed by a unit"),
    ("3 EUR", units.MONEY, "this project's currency is USD"),
    ("1 s" + " " * 100, units.TIME, "a text of"),
    ("2000 1/s", units.TIME, "(per time)"),  # a reciprocal is a rate, not a time
    ("2000 qps", units.RATE, 'did you mean "request/s"'),
    ("5 GBps", units.BANDWIDTH, 'did you mean "GB/s"'),
    ("3 KB", units.DATA, 'did you mean "kB"'),
])
def test_refuses(text: str, dimension: units.Dimension, message: str) -> None:
    with pytest.raises(UnitProblem, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse_quantity(text, dimension)


def test_project_currency_is_used() -> None:
    assert parse_quantity("12 EUR", units.MONEY, currency="EUR") == 12.0
    with pytest.raises(UnitProblem, match="currency is EUR"):
        parse_quantity("12 USD", units.MONEY, currency="EUR")


SCALES = {  # unit → size in the SI unit of its dimension
    units.TIME: {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0, "h": 3600.0, "ns": 1e-9},
    units.DATA: {"B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1024.0, "GiB": 2.0**30, "b": 0.125},
    units.BANDWIDTH: {"B/s": 1.0, "GB/s": 1e9, "MB/ms": 1e9, "Gb/s": 1.25e8, "TB/h": 1e12 / 3600},
    units.COMPUTE_RATE: {"FLOP/s": 1.0, "TFLOP/s": 1e12, "PFLOPS": 1e15, "GFLOP/ms": 1e12},
    units.POWER: {"W": 1.0, "kW": 1e3, "MW": 1e6, "J/s": 1.0},
    units.ENERGY: {"J": 1.0, "kWh": 3.6e6, "Wh": 3600.0, "MJ": 1e6},
}


@given(st.sampled_from(sorted(SCALES, key=lambda d: d.name)).flatmap(
    lambda dimension: st.tuples(st.just(dimension), st.sampled_from(sorted(SCALES[dimension])),
                                st.sampled_from(sorted(SCALES[dimension])))),
       st.floats(min_value=1e-6, max_value=1e9, allow_nan=False))
def test_unit_invariance(choice: tuple[units.Dimension, str, str], value: float) -> None:
    """The same quantity written in two units loads to the same SI value."""
    dimension, unit_a, unit_b = choice
    in_b = value * SCALES[dimension][unit_a] / SCALES[dimension][unit_b]
    a = parse_quantity(f"{value!r} {unit_a}", dimension)
    b = parse_quantity(f"{in_b!r} {unit_b}", dimension)
    assert a == pytest.approx(b, rel=1e-9)


@given(st.text(max_size=40))
def test_arbitrary_text_parses_or_raises_unit_problem(text: str) -> None:
    try:
        value = parse_quantity(text, units.TIME)
    except UnitProblem:
        return
    assert value == value  # a parsed value is a number, never NaN
