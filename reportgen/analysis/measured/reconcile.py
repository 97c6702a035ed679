"""Evidence reconciled before it is judged (docs/methods.md#evidence-reconciled-before-it-is-judged).

Every measurement is held against physics and the other evidence before any verdict: an energy below what the
machines draw waiting or above what they draw flat out, an all-reduce faster than its link can carry its bytes, a
service's throughput above what its replicas can serve, and a load test whose requests failed or whose rate was not
reached. A quantity that cannot be right stays in its table, marked, and no choice rests on it: the scales whose
energy is implausible leave the energy and carbon choices, implausible collectives leave the α–β fit, implausible
throughputs leave the serving choices. The run's other quantities (its time) still count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from reportgen.analysis.measured.scaling import MEASURED_TOLERANCE as TOLERANCE
from reportgen.analysis.measured.scaling import run_time
from reportgen.analysis.model.replica import replica_of
from reportgen.project.model import Project, Run
from reportgen.project.records import LoadTestCounts, RowSource

Quantity = Literal["energy", "collective", "throughput"]

# The bounds of each check (methods.md#implausible-energy and the sections after it)
ENERGY_LOW = 0.5  # × machines × wait power × time: a meter such as CodeCarbon's leaves out supplies, fans, switches
ENERGY_HIGH = 1.5  # × PUE × machines × active power × time
LINK_SLACK = 1.05  # an all-reduce's algorithm bandwidth n / t above this × its link cannot be right
CAPACITY_SLACK = 1.25  # a service's throughput above this × replicas × capacity per replica cannot be right


@dataclass(frozen=True)
class ImplausibleEnergy:
    """A run's measured energy outside what its machines can draw over its time."""

    nodes: float
    energy_j: float  # as measured (before PUE)
    machines: int
    time_s: float
    low_j: float | None  # ENERGY_LOW × machines × wait power × time (with energy.wait_power)
    high_j: float | None  # ENERGY_HIGH × PUE × machines × active power × time (with energy.node_power)

    @property
    def below(self) -> bool:
        return self.low_j is not None and self.energy_j < self.low_j

    @property
    def power_per_machine_w(self) -> float:
        return self.energy_j / self.time_s / self.machines


@dataclass(frozen=True)
class ImplausibleCollective:
    """A measured all-reduce faster than its link can carry its bytes."""

    index: int  # its place among prediction.collectives
    nodes: int
    bytes: float
    time_s: float
    link_b_per_s: float
    within_node: bool  # one node: the link is the intra-node one
    bytes_from_message: bool  # n is prediction.message_bytes: either it or the time may be wrong

    @property
    def bandwidth_b_per_s(self) -> float:
        return self.bytes / self.time_s


@dataclass(frozen=True)
class ImplausibleThroughput:
    """A service's measured throughput above what its replicas can serve."""

    nodes: float
    throughput_per_s: float
    replicas: float
    capacity_per_replica_per_s: float

    @property
    def limit_per_s(self) -> float:
        return CAPACITY_SLACK * self.replicas * self.capacity_per_replica_per_s


@dataclass(frozen=True)
class Reconciliation:
    energies: tuple[ImplausibleEnergy, ...] = ()
    collectives: tuple[ImplausibleCollective, ...] = ()
    throughputs: tuple[ImplausibleThroughput, ...] = ()
    load_tests: tuple[tuple[float, LoadTestCounts], ...] = ()  # (nodes, counts) of each load test with a problem

    def excluded(self) -> dict[float, tuple[Quantity, ...]]:
        """The quantities left out of the choices, by measured scale (a scale's collectives are its own)."""
        out: dict[float, list[Quantity]] = {}
        found: list[tuple[float, Quantity]] = [(e.nodes, "energy") for e in self.energies]
        found += [(float(c.nodes), "collective") for c in self.collectives]
        found += [(t.nodes, "throughput") for t in self.throughputs]
        for nodes, quantity in found:
            kept = out.setdefault(nodes, [])
            if quantity not in kept:
                kept.append(quantity)
        return {nodes: tuple(quantities) for nodes, quantities in out.items()}

    @property
    def implausible_collectives(self) -> frozenset[int]:
        """The places among prediction.collectives of those the α–β fit leaves out."""
        return frozenset(c.index for c in self.collectives)


def reconcile(project: Project, sources: Mapping[float, RowSource]) -> Reconciliation:
    return Reconciliation(_energies(project, sources), _collectives(project), _throughputs(project),
                          tuple((nodes, counts) for nodes in sorted(sources)
                                for counts in sources[nodes].load_tests if counts.problems()))


def _energies(project: Project, sources: Mapping[float, RowSource]) -> tuple[ImplausibleEnergy, ...]:
    energy, scaling = project.energy, project.scaling
    if energy is None or scaling is None or (energy.node_power is None and energy.wait_power is None):
        return ()
    out = []
    for run in scaling.runs:
        time_s = _wall(run, scaling.work_per_run)
        if run.energy is None or time_s is None or time_s <= 0:
            continue
        source = sources.get(run.nodes)
        machines = (source.machines if source is not None else None) or max(1, round(run.nodes))
        low = ENERGY_LOW * machines * energy.wait_power * time_s if energy.wait_power is not None else None
        high = (ENERGY_HIGH * energy.pue * machines * energy.node_power * time_s
                if energy.node_power is not None else None)
        if (low is not None and run.energy < low * (1 - TOLERANCE)) or \
                (high is not None and run.energy > high * (1 + TOLERANCE)):
            out.append(ImplausibleEnergy(run.nodes, run.energy, machines, time_s, low, high))
    return tuple(out)


def _wall(run: Run, work_per_run: float | None) -> float | None:
    """The run's wall time when given, else T_p (a throughput run without work_per_run has no time)."""
    if run.time is not None:
        return run.time
    if run.form == "throughput" and work_per_run is None:
        return None
    return run_time(run, work_per_run)


def _collectives(project: Project) -> tuple[ImplausibleCollective, ...]:
    spec, hardware = project.prediction, project.hardware
    if spec is None or hardware is None:
        return ()
    out = []
    for index, collective in enumerate(spec.collectives):
        within = collective.nodes == 1
        link = hardware.intra_node_bandwidth if within else hardware.network_bandwidth
        size = collective.bytes if collective.bytes is not None else spec.message_bytes
        if link is None or size is None or collective.time <= 0:
            continue
        if size / collective.time > LINK_SLACK * link * (1 + TOLERANCE):
            out.append(ImplausibleCollective(index, collective.nodes, size, collective.time, link, within,
                                             collective.bytes is None))
    return tuple(out)


def _throughputs(project: Project) -> tuple[ImplausibleThroughput, ...]:
    scaling = project.scaling
    serving = project.baseline.serving if project.baseline else None
    if not project.serving or scaling is None or serving is None or serving.capacity_per_replica is None:
        return ()
    replica = replica_of(project)
    hardware = project.hardware
    per_node = replica.replicas_per_node if replica is not None and replica.replicas_per_node > 0 else \
        (hardware.devices_per_node if hardware else 1)
    out = []
    for run in scaling.runs:
        if run.throughput is None:
            continue
        found = ImplausibleThroughput(run.nodes, run.throughput, run.nodes * per_node, serving.capacity_per_replica)
        if run.throughput > found.limit_per_s * (1 + TOLERANCE):
            out.append(found)
    return tuple(out)
