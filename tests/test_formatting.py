"""How numbers read in the report."""

from __future__ import annotations

import math

import pytest

from reportgen.render import formatting as f


@pytest.mark.parametrize(("function", "value", "text"), [
    (f.number, 43.72576, "43.7"), (f.number, 1234567.8, "1,234,568"), (f.number, 0.0204, "0.0204"),
    (f.number, 2.5e16, "2.50 × 10¹⁶"), (f.number, math.inf, "∞"), (f.number, None, "—"),
    (f.duration, 6660, "1 h 51 min"), (f.duration, 32088, "8.91 h"), (f.duration, 5e-6, "5 µs"),
    (f.duration, 0.0523, "52.3 ms"), (f.duration, 86400 * 30, "30 days"),
    (f.size, 2.6e9, "2.60 GB"), (f.size, 512, "512 B"), (lambda v: f.rate(v, "FLOP/s"), 7.9e15, "7.90 PFLOP/s"),
    (lambda v: f.rate(v, "B/s"), 12, "12.0 B/s"),
    (f.mass, 30.9, "30.9 kg"), (f.mass, 46_700, "46.7 t"), (f.mass, 0.00016, "0.160 g"),
    (f.energy, 78, "78.0 kWh"), (f.energy, 85_700, "85.7 MWh"), (f.energy, 0.5, "500 Wh"),
    (f.percent, 0.1428, "14.3 %"), (f.nodes, 1, "1 node"), (f.nodes, 16, "16 nodes"), (f.count, 30.0, "30"),
    (f.count, 2.5, "2.50"), (f.times, 3.23, "3.23×"),
])
def test_formats(function, value, text) -> None:  # type: ignore[no-untyped-def]
    assert function(value) == text


def test_money_and_filters_escape_text() -> None:
    assert f.money(1629.18, "USD") == "1,629 USD"
    assert f.money(0.0000018, "USD") == "1.800 × 10⁻⁶ USD"
    assert str(f.FILTERS["num"]("<script>")) == "&lt;script&gt;"
    assert str(f.FILTERS["num"](-0.5)) == "−0.500"  # a true minus sign


def test_backticked_names_in_a_finding_become_code_and_everything_is_escaped() -> None:
    assert str(f.ticked("the `load_balancing` slot")) == "the <code>load_balancing</code> slot"
    assert str(f.ticked("`<script>` & `x`")) == "<code>&lt;script&gt;</code> &amp; <code>x</code>"
    assert str(f.ticked("an odd ` tick <b>")) == "an odd ` tick &lt;b&gt;"
