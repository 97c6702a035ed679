"""Energy and carbon per run: power × time × PUE, or the run's measured energy; CO2e from the intensity.
(docs/methods.md#5-energy-and-carbon)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import JOULES_PER_KWH, first_min, whole_nodes
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.keys import Key
from reportgen.project.model import Energy


@dataclass(frozen=True)
class EnergyRow:
    nodes: Annotated[int, Key("node count")]
    energy_kwh: Annotated[float, Key("kWh per run, PUE included")]
    co2_kg: Annotated[float | None, Key("kg CO2e per run (null without a carbon intensity)")]
    measured: Annotated[bool, Key("the energy was measured, not modelled")]
    monthly_energy_kwh: Annotated[float | None, Key("kWh per month at pricing.runs_per_month")]
    monthly_co2_kg: Annotated[float | None, Key("kg CO2e per month")]
    co2_recorded_kg: Annotated[float | None, Key(
        "the CO2e an ingested CodeCarbon file recorded for the run, with its own intensity of the day (co2_kg always "
        "uses this report's one intensity)")] = None
    recorded_intensity_g_per_kwh: Annotated[float | None, Key(
        "that record's intensity: its CO2e over the measured energy (without PUE)")] = None
    excluded: Annotated[bool, Key("the measured energy cannot be right (implausible-energy): shown, and left out of "
                                  "the carbon-optimal scale and the decisions on carbon")] = False


@dataclass(frozen=True)
class EnergyResult:
    carbon_intensity_g_per_kwh: Annotated[float | None, Key("grid carbon intensity used")]
    carbon_source: Annotated[str | None, Key("where the intensity came from")]
    per_unit_of_work: Annotated[bool, Key("energy and CO2 are per unit of work")]
    split_by_activity: bool  # breakdown form: waiting time drawn at wait power
    rows: Annotated[tuple[EnergyRow, ...], Key("energy and CO2e per measured scale")]
    # argmin CO2e; with no intensity, argmin energy (the same ranking); among the scales whose energy is plausible
    carbon_optimal_nodes: Annotated[int | None, Key("the scale with the least CO2e per run, among those whose energy "
                                                    "can be right (null when none can)")]
    runs_per_month: float | None
    modelled: Annotated[bool, Key("energy.node_power is given, so scales without a measured energy are "
                                  "modelled")] = True
    unknown_nodes: Annotated[tuple[int, ...], Key("measured scales with no energy: neither measured nor modelled "
                                                  "(no energy.node_power)", item="node count")] = ()

    @property
    def recorded(self) -> bool:
        """Some run carries the CO2e CodeCarbon recorded for it."""
        return any(row.co2_recorded_kg is not None for row in self.rows)


def analyze_energy(scaling: ScalingResult | None, energy: Energy | None, *,
                   intensity_g_per_kwh: float | None, source: str | None,
                   runs_per_month: float | None) -> EnergyResult | None:
    """Energy and CO2e per run at each scale whose energy is known: measured, or modelled from energy.node_power.
    Without node_power the measured runs alone have rows (every number whose inputs are present). A scale
    whose measured energy cannot be right (its row's `excluded` holds "energy") keeps its row, marked, and no
    choice rests on it (methods.md#implausible-energy)."""
    if scaling is None:
        return None
    active = energy.node_power if energy else None
    waiting = energy.wait_power if energy and energy.wait_power is not None else active
    pue = energy.pue if energy else 1.0
    rows = []
    for scale in scaling.rows:
        run = scale.run
        if scale.measured_energy_j is not None:
            # What meters and CodeCarbon measure is the IT equipment's energy: the facility's overhead (PUE)
            # applies to it as to the modelled energy.
            joules, measured = pue * scale.measured_energy_j, True
        elif active is None or waiting is None:
            continue
        elif run.form == "breakdown":
            busy = (run.compute or 0.0) + (run.io or 0.0) + (run.start_up or 0.0)  # start-up loads and launches
            waits = (run.communication or 0.0) + (run.idle or 0.0) + (run.bubble or 0.0)
            joules, measured = pue * scale.nodes * (active * busy + waiting * waits), False
        else:
            assert scale.time_s is not None
            joules, measured = pue * scale.nodes * active * scale.time_s, False
        kwh = joules / JOULES_PER_KWH
        co2 = kwh * intensity_g_per_kwh / 1000.0 if intensity_g_per_kwh is not None else None
        recorded = run.co2_recorded
        it_kwh = scale.measured_energy_j / JOULES_PER_KWH if scale.measured_energy_j else None
        rows.append(EnergyRow(whole_nodes(scale.nodes), kwh, co2, measured,
                              kwh * runs_per_month if runs_per_month else None,
                              co2 * runs_per_month if runs_per_month and co2 is not None else None,
                              recorded, recorded * 1000.0 / it_kwh if recorded is not None and it_kwh else None,
                              excluded=measured and "energy" in scale.excluded))
    if not rows:
        return None
    known = {row.nodes for row in rows}  # once: in the expression below it was built again for every scale
    plausible = [row for row in rows if not row.excluded]
    return EnergyResult(
        carbon_intensity_g_per_kwh=intensity_g_per_kwh,
        carbon_source=source,
        per_unit_of_work=scaling.per_unit_of_work,
        split_by_activity=scaling.form == "breakdown",
        rows=tuple(rows),
        carbon_optimal_nodes=first_min(plausible, key=lambda r: r.energy_kwh).nodes if plausible else None,
        runs_per_month=runs_per_month,
        modelled=active is not None,
        unknown_nodes=tuple(whole_nodes(r.nodes) for r in scaling.rows if r.nodes not in known),
    )
