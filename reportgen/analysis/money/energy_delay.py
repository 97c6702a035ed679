"""The energy-delay product per measured scale: E·T and E·T², and the scale that minimizes each
(methods.md#energy-delay-product; its text is METHOD, below).

The least energy and the least time are rarely the same scale; E·Tⁿ weighs them in one number (Gonzalez and
Horowitz 1996): n = 1 values a fold of time as much as a fold of energy, n = 2 (E·T², which does not change when a
voltage-and-frequency setting trades one for the other) values time more. The energy is the energy analysis's,
PUE included; the time is the measured one, without the failure tax, as in the energy table beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import JOULES_PER_KWH, first_min
from reportgen.analysis.declared import Declared, Inputs, Method, Plot, Series
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.money.energy import EnergyResult
from reportgen.keys import Key
from reportgen.wording import nodes as nodes_words


@dataclass(frozen=True)
class EnergyDelayRow:
    nodes: Annotated[int, Key("node count")]
    energy_j: Annotated[float, Key("E: energy per run in joules, PUE included (the energy section's)")]
    time_s: Annotated[float, Key("T: the measured time per run")]
    edp: Annotated[float, Key("E·T, the energy-delay product, in J·s")]
    ed2p: Annotated[float, Key("E·T², the energy-delay-squared product, in J·s²")]
    excluded: Annotated[bool, Key("the measured energy cannot be right (implausible-energy): shown, and left out of "
                                  "the optima")] = False


@dataclass(frozen=True)
class EnergyDelayResult:
    rows: Annotated[tuple[EnergyDelayRow, ...], Key("E, T, E·T and E·T² per measured scale with a known energy")]
    edp_optimal_nodes: Annotated[int | None, Key("the scale with the least E·T among those whose energy can be "
                                                 "right (null when none can)")]
    ed2p_optimal_nodes: Annotated[int | None, Key("the scale with the least E·T² among those whose energy can be "
                                                  "right (null when none can)")]
    per_unit_of_work: Annotated[bool, Key("E and T are per unit of work")]


def energy_delay(scaling: ScalingResult | None, energy: EnergyResult | None) -> EnergyDelayResult | None:
    """E·T and E·T² at each measured scale whose energy and time are both known; ties go to the fewer nodes."""
    if scaling is None or energy is None:
        return None
    times = {round(row.nodes): row.time_s for row in scaling.rows if row.time_s is not None}
    rows = tuple(EnergyDelayRow(row.nodes, joules, times[row.nodes], joules * times[row.nodes],
                                joules * times[row.nodes] ** 2, row.excluded)
                 for row in energy.rows if row.nodes in times
                 for joules in (row.energy_kwh * JOULES_PER_KWH,))
    if not rows:
        return None
    plausible = [row for row in rows if not row.excluded]
    return EnergyDelayResult(
        rows=rows,
        edp_optimal_nodes=first_min(plausible, key=lambda row: row.edp).nodes if plausible else None,
        ed2p_optimal_nodes=first_min(plausible, key=lambda row: row.ed2p).nodes if plausible else None,
        per_unit_of_work=energy.per_unit_of_work,
    )


def plots(result: EnergyDelayResult) -> tuple[Plot, ...]:
    """E·T and E·T² relative to the smallest scale's, so that two units share one axis."""
    if len(result.rows) < 2:
        return ()
    first = result.rows[0]
    nodes = tuple(float(row.nodes) for row in result.rows)
    marked = None
    if result.edp_optimal_nodes is not None:
        best = next(row for row in result.rows if row.nodes == result.edp_optimal_nodes)
        marked = (float(best.nodes), best.edp / first.edp, f"least E·T ({nodes_words(best.nodes)})")
    reference = nodes_words(first.nodes)
    return (Plot("energy-delay", f"The energy-delay products at each measured scale, relative to those at {reference} "
                 "(E·T solid blue, E·T² dashed orange); the star marks the least E·T.",
                 "Energy-delay products per scale, relative to the smallest scale.", "nodes",
                 f"relative to {reference} (×)",
                 (Series("E·T", nodes, tuple(row.edp / first.edp for row in result.rows)),
                  Series("E·T²", nodes, tuple(row.ed2p / first.ed2p for row in result.rows))),
                 marked=marked),)


def _run(i: Inputs, scaling: ScalingResult | None, energy: EnergyResult | None) -> EnergyDelayResult | None:
    if i.project.serving:  # project.workload: a service's energy is per hour, its time a latency: no product of them
        return None
    return energy_delay(scaling, energy)


METHOD = Method("Energy-delay product", """\
The least energy and the least time are rarely at one scale; the energy-delay product weighs them in one number
(Gonzalez and Horowitz 1996), at each measured scale whose energy E (the energy and carbon section's, PUE included)
and measured time T are both known:

```text
EDP_p = E_p · T_p        (J·s)
ED2P_p = E_p · T_p²      (J·s²)
```

E·T values a fold of time as much as a fold of energy; E·T² values time more (it is the product a change of clock
frequency leaves unchanged, to first order). Each has its optimum, the argmin among the scales whose energy can be
right (a measured energy flagged `implausible-energy` is shown and left out); ties go to the fewer nodes. T is the
measured time, without the failure tax, as in the energy table. A service has none: its energy is per hour of
service and its time a latency.""")


ANALYSIS = Declared(
    key="energy_delay", doc="the energy-delay products E·T and E·T² per measured scale, and the scale that "
    "minimizes each", chapter="measure", result=EnergyDelayResult, needs=("scaling", "energy"), run=_run,
    plots=plots, method=METHOD, reads=("project.workload",), own_template="analyses/energy_delay.html")
