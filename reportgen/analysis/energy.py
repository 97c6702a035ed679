"""§5 Energy and carbon per run: power × time × PUE, or the run's measured energy; CO2e from the intensity."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.analysis.common import first_min, whole_nodes
from reportgen.analysis.scaling import ScalingResult
from reportgen.project.model import Energy

JOULES_PER_KWH = 3.6e6


@dataclass(frozen=True)
class EnergyRow:
    nodes: int
    energy_kwh: float
    co2_kg: float | None
    measured: bool
    monthly_energy_kwh: float | None
    monthly_co2_kg: float | None
    co2_recorded_kg: float | None = None  # what an ingested CodeCarbon file recorded for the run (its own intensity)
    recorded_intensity_g_per_kwh: float | None = None  # that record's intensity: its CO2e over the measured energy


@dataclass(frozen=True)
class EnergyResult:
    carbon_intensity_g_per_kwh: float | None
    carbon_source: str | None
    per_unit_of_work: bool
    split_by_activity: bool  # breakdown form: waiting time drawn at wait power
    rows: tuple[EnergyRow, ...]
    carbon_optimal_nodes: int  # argmin CO2e; with no intensity, argmin energy (the same ranking)
    runs_per_month: float | None
    modelled: bool = True  # energy.node_power is given: scales without a measured energy are modelled
    unknown_nodes: tuple[int, ...] = ()  # scales with no energy (no measurement and no node_power to model it)

    @property
    def recorded(self) -> bool:
        """Some run carries the CO2e CodeCarbon recorded for it."""
        return any(row.co2_recorded_kg is not None for row in self.rows)


def analyze_energy(scaling: ScalingResult | None, energy: Energy | None, *,
                   intensity_g_per_kwh: float | None, source: str | None,
                   runs_per_month: float | None) -> EnergyResult | None:
    """Energy and CO2e per run at each scale whose energy is known: measured, or modelled from energy.node_power.
    Without node_power the measured runs alone have rows (§7.2: every number whose inputs are present)."""
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
                              recorded, recorded * 1000.0 / it_kwh if recorded is not None and it_kwh else None))
    if not rows:
        return None
    known = {row.nodes for row in rows}  # once: in the expression below it was built again for every scale
    return EnergyResult(
        carbon_intensity_g_per_kwh=intensity_g_per_kwh,
        carbon_source=source,
        per_unit_of_work=scaling.per_unit_of_work,
        split_by_activity=scaling.form == "breakdown",
        rows=tuple(rows),
        carbon_optimal_nodes=first_min(rows, key=lambda r: r.energy_kwh).nodes,
        runs_per_month=runs_per_month,
        modelled=active is not None,
        unknown_nodes=tuple(whole_nodes(r.nodes) for r in scaling.rows if r.nodes not in known),
    )
