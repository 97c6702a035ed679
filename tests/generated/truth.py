"""Projects nobody wrote: each drawn from a hidden truth, and written as a project file a person can build.

A `Truth` is the physics of one job: its single-node work, its serial fraction, a start-up paid by every run, a
link-bound communication that grows with the nodes, the power a node draws; and what the team states: the measured
scales (the reference not always 1 node), their repeats and noise, prices and regimes, reliability, the plan (at a
measured scale, between them or beyond them) and a goal placed at least 3 % from the truth at the plan, met or missed.
A truth may plant one measurement that cannot be right (an energy below what the machines draw waiting, a run far
above ideal); the properties in test_invariants.py hold the report against it (docs/methods.md#the-goals-levers).

Everything is seeded through hypothesis: a failing example is printed as the project text it builds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

NOISE = 0.01  # the runs' relative noise: the goal's 3 % margin stays clear of it
Plant = str  # "", "energy" (below the machines' idle draw), "superlinear" (a run far above ideal)


@dataclass(frozen=True)
class Truth:
    single_node_s: float  # the work on one node, without start-up or communication
    serial: float  # the fraction of it no node count divides
    start_up_s: float  # paid by every run (0: none measured)
    comm_bandwidth_s: float  # the ring's bandwidth term at large p: 2(p − 1)/p × this
    comm_latency_s: float  # per hop: (p − 1) × this
    reference: int  # the smallest measured scale
    scales: int  # how many scales are measured: reference × 2^k
    repeats: int
    wall_time: bool  # runs give their wall `time` beside the breakdown (the start-up shows)
    noise: tuple[float, ...]  # one multiplicative factor per run, within ± NOISE
    price: float | None  # per node-hour
    spot: tuple[float, float] | None  # (price fraction, preemptions per node-hour)
    plan_at: str  # "measured", "between" or "beyond"
    time_factor: float  # the goal's time limit / the truth's time at the plan
    cost_factor: float | None  # the goal's budget / the truth's cost at the plan on demand (None: no budget)
    power_w: float | None  # one node's draw computing; waiting draws 60 % of it
    plant: Plant = ""
    weak: bool = False
    notes: list[str] = field(default_factory=list, compare=False)
    workload: str = "training"  # or "data-processing"
    link: tuple[float, float] | None = None  # (bandwidth B/s, latency s): the model and measured collectives
    reliability: tuple[float, float] | None = None  # (node MTBF h, checkpoint cost s)
    owned: tuple[float, float] | None = None  # (utilization, the minimum at which owning pays)
    layout: tuple[int, int, float] | None = None  # (tensor, ZeRO stage, parameters): memory per device
    layout_more: tuple[int, int, float] = (1, 1, 0.0)  # (pipeline stages, expert degree, share of parameters in
    # experts): a 3D layout, a mixture of experts
    available: float | None = None  # hardware.nodes_available as a multiple of the plan (page 1's constraint)
    wide: bool = False  # the plan's repeats spread ±10 %: their interval may straddle a limit

    # ------------------------------------------------------------------------------------------ the physics
    def measured_nodes(self) -> list[int]:
        return [self.reference * 2 ** k for k in range(self.scales)]

    def compute_s(self, p: float) -> float:
        work = self.single_node_s * (p if self.weak else 1.0)  # weak scaling: the work per node is fixed
        return work * (self.serial + (1.0 - self.serial) / p)

    def comm_s(self, p: float) -> float:
        return 0.0 if p <= 1 else self.comm_bandwidth_s * 2.0 * (p - 1.0) / p + self.comm_latency_s * (p - 1.0)

    def time_s(self, p: float) -> float:
        """The true wall time of a run at p nodes."""
        return self.compute_s(p) + self.comm_s(p) + self.start_up_s

    @property
    def plan(self) -> int:
        measured = self.measured_nodes()
        if self.plan_at == "measured" or len(measured) < 2:
            return measured[-1] if self.plan_at == "measured" else measured[-1] * 4
        if self.plan_at == "between":
            return (measured[-2] + measured[-1]) // 2 if measured[-1] - measured[-2] > 1 else measured[-1]
        return measured[-1] * 4

    @property
    def plan_measured(self) -> bool:
        return self.plan in self.measured_nodes()

    @property
    def nodes_available(self) -> int | None:
        return None if self.available is None else max(1, round(self.plan * self.available))

    def cost(self, p: float) -> float | None:
        return None if self.price is None else self.price * p * self.time_s(p) / 3600.0

    @property
    def time_limit_s(self) -> float:
        return self.time_s(self.plan) * self.time_factor

    @property
    def cost_limit(self) -> float | None:
        cost = self.cost(self.plan)
        return None if cost is None or self.cost_factor is None else cost * self.cost_factor

    @property
    def met_on_demand(self) -> bool:
        """The truth's verdict at the plan on demand: every stated limit met."""
        return self.time_factor > 1.0 and (self.cost_factor is None or self.price is None or self.cost_factor > 1.0)

    # ------------------------------------------------------------------------------------------ the project file
    def project_text(self) -> str:
        goal = [f"time_per_run: {self.time_limit_s:.10g} s"]
        if self.cost_limit is not None:
            goal.append(f"cost_per_run: {self.cost_limit:.10g} USD")
        lines = ["project:", "  title: Generated", f"  workload: {self.workload}", f"  goal: {{{', '.join(goal)}}}"]
        lines += self._hardware() + self._design()
        if self.price is not None:
            lines += _pricing(self.price, self.spot, self.owned)
        if self.reliability is not None:
            mtbf_h, checkpoint_s = self.reliability
            lines += [f"reliability: {{node_mtbf: {mtbf_h:.6g} h, checkpoint_cost: {checkpoint_s:.6g} s}}"]
        if self.link is not None:
            lines += self._prediction()
        if self.power_w is not None:
            lines += [f"energy: {{node_power: {self.power_w:.10g} W, wait_power: {0.6 * self.power_w:.10g} W}}"]
        lines += ["scaling:", "  time_unit: s"] + (["  mode: weak"] if self.weak else []) + ["  runs:"]
        noise = iter(self.noise)
        spread = iter([0.0, 1.0, 0.5, 0.2, 0.8])
        for index, p in enumerate(self.measured_nodes()):
            for _ in range(self.repeats):
                factor = next(noise)
                start_up = self.start_up_s
                if self.plant == "superlinear" and index == len(self.measured_nodes()) - 1 and index > 0:
                    # twice the speedup of perfect scaling over the reference: a unit slip, or a smaller problem
                    ideal = self.time_s(self.reference) * self.reference / p
                    factor *= ideal / 2.0 / self.time_s(p)
                    start_up *= ideal / 2.0 / self.time_s(p)
                if self.wide and p == self.plan and self.repeats > 1:  # repeats far apart at the plan
                    factor *= 1.0 + 0.1 * (2.0 * next(spread) - 1.0)
                compute = self.compute_s(p) * factor
                comm, idle = self.comm_s(p) * factor, 0.02 * compute * (p > 1)
                cells = [f"nodes: {p}", f"compute: {compute:.10g}", f"communication: {comm:.10g}", f"idle: {idle:.10g}"]
                wall = compute + comm + idle + start_up
                if self.wall_time:
                    cells.append(f"time: {wall:.10g}")
                if self.power_w is not None:
                    joules = self.power_w * p * wall
                    if self.plant == "energy" and index == 0:
                        joules *= 0.1  # a tenth of the machines' draw: a meter of one device, not the node
                    cells.append(f"energy: {joules / 3.6e6:.10g} kWh")
                lines.append(f"    - {{{', '.join(cells)}}}")
        return "\n".join(lines) + "\n"

    MESSAGE_BYTES = 1e9  # the gradient an all-reduce carries

    def _hardware(self) -> list[str]:
        cells = []
        if self.link is not None:
            cells += [f"network_bandwidth: {self.link[0]:.6g} B/s", f"network_latency: {self.link[1]:.6g} s"]
        if self.layout is not None:
            cells += ["devices_per_node: 8", "device_memory: 80 GB", "memory_capacity: 640 GB"]
        if self.nodes_available is not None:
            cells.append(f"nodes_available: {self.nodes_available}")
        return [f"hardware: {{{', '.join(cells)}}}"] if cells else []

    def _design(self) -> list[str]:
        if self.layout is None:
            return [f"design: {{nodes: {self.plan}}}"]
        tensor, stage, parameters = self.layout
        pipeline, expert, expert_share = self.layout_more
        devices = self.plan * 8
        if devices % (tensor * pipeline):  # the stages and shards the plan's devices can hold
            pipeline = 1
        data = devices // (tensor * pipeline)
        expert = expert if data % expert == 0 else 1
        experts = f"expert_parameters: {parameters * expert_share:.6g}, " if expert > 1 and expert_share > 0 else ""
        return [f"design: {{nodes: {self.plan}, parallelism: {{data: {data}, tensor: {tensor}, pipeline: {pipeline}, "
                f"micro_batches: 16, expert: {expert}, zero_stage: {stage}}}}}",
                "baseline:", f"  memory: {{parameters: {parameters:.6g}, {experts}split: {{weights: 2 B, gradients: "
                "2 B, optimizer: 12 B}, activations: 4 GB}"]

    def _prediction(self) -> list[str]:
        """The α–β model and the all-reduces measured on the link: a ring's 2(p − 1)/p of the message over the
        bandwidth, plus (p − 1) hops; a planted one at a fifth of that, faster than the link can carry."""
        assert self.link is not None
        bandwidth, latency = self.link
        lines = ["prediction:", f"  t_comp: {self.single_node_s / 1000:.6g} s",
                 f"  message_bytes: {self.MESSAGE_BYTES:g} B", "  collectives:"]
        for index, p in enumerate(p for p in self.measured_nodes() if p > 1):
            seconds = 2.0 * (p - 1) / p * self.MESSAGE_BYTES / bandwidth + (p - 1) * latency
            if self.plant == "collective" and index == 0:
                seconds /= 5.0
            lines.append(f"    - {{nodes: {p}, time: {seconds:.6g} s}}")
        return lines


def _noise(count: int) -> st.SearchStrategy[tuple[float, ...]]:
    return st.lists(st.floats(1.0 - NOISE, 1.0 + NOISE), min_size=count, max_size=count).map(tuple)


def _rate() -> st.SearchStrategy[float]:
    """Spot's preemptions per node-hour: none, or a rate a provider publishes."""
    return st.one_of(st.just(0.0), st.floats(1e-4, 0.05))


def _factor(low: float, high: float) -> st.SearchStrategy[float]:
    """A goal's limit over the truth: missed (at most 0.97) or met (at least 1.03), never within 3 %."""
    return st.one_of(st.floats(low, 0.97), st.floats(1.03, high))


@st.composite
def truths(draw: st.DrawFn, *, plants: bool = True) -> Truth:
    """A training job's hidden truth and what its team states."""
    scales = draw(st.integers(2, 5))
    wide = draw(st.integers(0, 5)) == 0
    repeats = draw(st.integers(3, 5)) if wide else draw(st.integers(1, 3))
    start_up = draw(st.one_of(st.just(0.0), st.floats(5.0, 300.0)))
    price = draw(st.one_of(st.none(), st.floats(1.0, 100.0)))
    plant = draw(st.sampled_from(["", "", "", "energy", "superlinear", "collective"])) if plants else ""
    link = draw(st.one_of(st.none(), st.tuples(st.floats(1e9, 1e11), st.floats(1e-6, 1e-4))))
    if plant == "collective" and link is None:  # a collective is planted on a link that carries the others
        plant = ""
    power = draw(st.one_of(st.none(), st.floats(300.0, 10_000.0)))
    if plant == "energy" and power is None:
        plant = ""
    weak = draw(st.booleans()) if draw(st.integers(0, 5)) == 0 else False
    return Truth(
        single_node_s=draw(st.floats(600.0, 200_000.0)),
        serial=draw(st.floats(0.0, 0.1)),
        start_up_s=start_up,
        comm_bandwidth_s=draw(st.one_of(st.just(0.0), st.floats(0.01, 500.0))),
        comm_latency_s=draw(st.one_of(st.just(0.0), st.floats(0.001, 5.0))),
        reference=draw(st.sampled_from([1, 1, 2, 4])),
        scales=scales,
        repeats=repeats,
        wall_time=start_up > 0 or draw(st.booleans()),
        noise=draw(_noise(scales * repeats)),
        price=price,
        spot=draw(st.one_of(st.none(), st.tuples(st.floats(0.2, 0.9), _rate()))) if price else None,
        plan_at=draw(st.sampled_from(["measured", "measured", "between", "beyond"])),
        time_factor=draw(_factor(0.3, 3.0)),
        cost_factor=draw(st.one_of(st.none(), _factor(0.3, 3.0))) if price else None,
        power_w=power,
        plant=plant,
        weak=weak,
        workload=draw(st.sampled_from(["training", "training", "data-processing"])),
        link=link,
        reliability=draw(st.one_of(st.none(), st.tuples(st.floats(1000.0, 50_000.0), st.floats(10.0, 300.0)))),
        owned=draw(st.one_of(st.none(), st.tuples(st.floats(0.2, 1.0), st.floats(0.2, 1.0)))) if price else None,
        layout=draw(st.one_of(st.none(), st.tuples(st.sampled_from([1, 2, 4, 8]), st.integers(0, 3),
                                                   st.floats(1e8, 2e11)))),
        layout_more=draw(st.tuples(st.sampled_from([1, 1, 2, 4]), st.sampled_from([1, 1, 2, 4, 8]),
                                   st.one_of(st.just(0.0), st.floats(0.05, 0.9)))),
        available=draw(st.one_of(st.none(), st.none(), st.floats(0.5, 3.0))),
        wide=wide,
    )


def _pricing(price: float, spot: tuple[float, float] | None, owned: tuple[float, float] | None) -> list[str]:
    """The pricing section: the node-hour, and spot (price fraction, preemptions per node-hour) and owned nodes
    (utilization, the minimum at which owning pays) where drawn."""
    regimes = []
    if spot is not None:
        fraction, rate = spot
        regimes.append(f"spot: {{price_fraction: {fraction:.4g}, preemptions_per_node_hour: {rate:.4g}, "
                       "restart_overhead: 5 min}")
    if owned is not None:
        regimes.append(f"local: {{price_fraction: 0.6, utilization: {owned[0]:.4g}, min_utilization: "
                       f"{owned[1]:.4g}}}")
    return ["pricing:", f"  node_hour: {price:.10g} USD"] + ([f"  regimes: {{{', '.join(regimes)}}}"] if regimes
                                                             else [])


def relative_gap(a: float, b: float) -> float:
    return abs(math.log(a / b)) if a > 0 and b > 0 else math.inf


@dataclass(frozen=True)
class ServiceTruth:
    """A service's hidden truth: one node's capacity, its contention and coherency (the USL), a p99 that grows with
    the nodes, and a goal placed at least 3 % from the truth at the plan in each of its limits."""

    per_node: float  # the load one node serves alone, in its unit per second
    sigma: float
    kappa: float
    p99_base_s: float
    p99_growth: float  # the p99 grows by this share per node
    reference: int
    scales: int
    unit: str  # "request" or "token"
    noise: tuple[float, ...]
    price: float | None
    plan_at: str  # "measured" or "beyond"
    load_factor: float  # the capacity the goal needs / the truth's capacity at the plan
    latency_factor: float  # the p99 objective / the truth's p99 at the plan
    cost_factor: float | None
    plant: Plant = ""  # "throughput": a run serving twice what its replicas can
    spot: tuple[float, float] | None = None  # (price fraction, preemptions per node-hour)
    owned: tuple[float, float] | None = None  # (utilization, the minimum at which owning pays)
    tpot_factor: float | None = None  # a TPOT objective / the truth's TPOT at the plan (a token service's)

    def measured_nodes(self) -> list[int]:
        return [self.reference * 2 ** k for k in range(self.scales)]

    def tpot_s(self, p: float) -> float:
        return self.p99_s(p) / 50.0  # a p99 per output token: the end-to-end p99 over 50 tokens

    def capacity(self, p: float) -> float:
        return self.per_node * p / (1.0 + self.sigma * (p - 1.0) + self.kappa * p * (p - 1.0))

    def p99_s(self, p: float) -> float:
        return self.p99_base_s * (1.0 + self.p99_growth * p)

    @property
    def plan(self) -> int:
        return self.measured_nodes()[-1] * (1 if self.plan_at == "measured" else 2)

    @property
    def plan_measured(self) -> bool:
        return self.plan in self.measured_nodes()

    @property
    def met_on_demand(self) -> bool:
        cost_met = self.cost_factor is None or self.price is None or self.cost_factor > 1.0
        tpot_met = self.tpot_factor is None or self.tpot_factor > 1.0
        return self.load_factor < 1.0 and self.latency_factor > 1.0 and cost_met and tpot_met

    def project_text(self) -> str:
        plural = f"{self.unit}/s"
        headroom = 0.1
        load = self.capacity(self.plan) * self.load_factor / (1.0 + headroom)
        goal = [f"load: {load:.10g} {plural}", f"p99_latency: {self.p99_s(self.plan) * self.latency_factor:.10g} s",
                f"headroom: {headroom}"]
        if self.price is not None and self.cost_factor is not None:
            goal.append(f"cost_per_hour: {self.price * self.plan * self.cost_factor:.10g} USD/h")
        if self.tpot_factor is not None:
            goal.append(f"latency: {{tpot_p99: {self.tpot_s(self.plan) * self.tpot_factor:.10g} s}}")
        lines = ["project:", "  title: Generated service", "  workload: inference", f"  goal: {{{', '.join(goal)}}}",
                 "baseline:", "  serving:", f"    requests_per_second: {load:.10g} {plural}",
                 f"    capacity_per_replica: {self.per_node:.10g} {plural}",
                 f"design: {{nodes: {self.plan}}}"]
        if self.price is not None:
            lines += _pricing(self.price, self.spot, self.owned)
        lines += ["scaling:", "  runs:"]
        for index, (p, factor) in enumerate(zip(self.measured_nodes(), self.noise, strict=True)):
            served = self.capacity(p) * factor
            if self.plant == "throughput" and index == 0:
                served = 2.0 * p * self.per_node  # twice what its replicas can serve: a unit slip
            tpot = f", tpot_p99: {self.tpot_s(p) * factor:.10g} s" if self.tpot_factor is not None else ""
            lines.append(f"    - {{nodes: {p}, throughput: {served:.10g} {plural}, p99_latency: "
                         f"{self.p99_s(p) * factor:.10g} s{tpot}}}")
        return "\n".join(lines) + "\n"


@st.composite
def services(draw: st.DrawFn) -> ServiceTruth:
    scales = draw(st.integers(2, 5))
    price = draw(st.one_of(st.none(), st.floats(1.0, 100.0)))
    return ServiceTruth(
        per_node=draw(st.floats(50.0, 20_000.0)),
        sigma=draw(st.one_of(st.just(0.0), st.floats(1e-4, 0.05))),
        kappa=draw(st.one_of(st.just(0.0), st.floats(1e-6, 1e-4))),
        p99_base_s=draw(st.floats(0.005, 0.5)),
        p99_growth=draw(st.one_of(st.just(0.0), st.floats(1e-4, 0.02))),
        reference=draw(st.sampled_from([1, 2, 4])),
        scales=scales,
        unit=draw(st.sampled_from(["request", "token"])),
        noise=draw(_noise(scales)),
        price=price,
        plan_at=draw(st.sampled_from(["measured", "measured", "beyond"])),
        load_factor=draw(_factor(0.3, 3.0)),
        latency_factor=draw(_factor(0.3, 3.0)),
        cost_factor=draw(st.one_of(st.none(), _factor(0.3, 3.0))) if price else None,
        plant=draw(st.sampled_from(["", "", "", "throughput"])),
        spot=draw(st.one_of(st.none(), st.tuples(st.floats(0.2, 0.9), _rate()))) if price else None,
        owned=draw(st.one_of(st.none(), st.tuples(st.floats(0.2, 1.0), st.floats(0.2, 1.0)))) if price else None,
        tpot_factor=draw(st.one_of(st.none(), st.none(), _factor(0.3, 3.0))),
    )
