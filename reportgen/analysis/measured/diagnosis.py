"""Diagnosis: which ceiling binds first, the axis that cures it, and whether the declared axis is that one
(docs/methods.md#1-diagnosis-which-resource-runs-out-first)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal, TypedDict, get_args

from reportgen.analysis.common import at_least, ceil_ratio
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.ceilings import (
    BOUND_ORDER,
    CEILING,
    Bound,
    CeilingName,
    WallName,
    cure,
    named_by_bound,
    named_by_wall,
)
from reportgen.analysis.model.model_shape import shape_of
from reportgen.analysis.model.transformer import token_flops
from reportgen.keys import Key, derived
from reportgen.project.model import Axis, Hardware, Project, Serving, Step
from reportgen.wording import nodes as nodes_words
from reportgen.wording import percent

TimeSource = Literal["measured", "modelled"]
# Which FLOP count the time wall reads: 6·P a token (the seed formula), or F_model from a complete shape
TrainingFlopsSource = Literal["6PT", "model-shape"]
WALL_ORDER: tuple[WallName, ...] = get_args(WallName)  # capacity walls come first
ADAM_STACK = (("bf16 weight", 2.0), ("bf16 gradient", 2.0), ("fp32 master weight", 4.0), ("fp32 Adam m and v", 8.0))

FLOORS = ("compute", "memory", "io", "network")  # a step's floors, one per resource
# The ridge band: within ±10 % of I* a step's compute and memory floors lie within about 10 % of each other, so
# both bind and either axis lifts the step (methods.md#1-diagnosis-which-resource-runs-out-first)
RIDGE_BAND = (0.9, 1.1)
RIDGE_CEILINGS: tuple[CeilingName, ...] = ("compute", "memory-bandwidth")  # the two ceilings the band joins


@dataclass(frozen=True)
class StepResult:
    name: Annotated[str, Key("the step's name")]
    time_s: Annotated[float, Key("the measured time of the step")]
    intensity: Annotated[float | None, Key("arithmetic intensity W/Q (FLOP per byte); inf when Q = 0 < W")]
    floors_s: Annotated[dict[str, float | None], Key("each resource's lower bound on the step's time",
                                                     keys=FLOORS, item="the {key} floor in seconds")]
    bound: Annotated[Bound | None, Key("the largest floor (ties: the earlier in this list)")]
    attained_flops_per_s: Annotated[float | None, Key("W / measured time")]
    attained_bytes_per_s: Annotated[float | None, Key("Q / measured time")]
    roof_efficiency: Annotated[float | None, Key("the attained rate over the roofline's rate at this intensity")]
    dominant: Annotated[bool, Key("the longest step, whose floors decide the bound")]
    balanced: Annotated[bool, Key("the step lies in the ridge band, 0.9·I* ≤ I ≤ 1.1·I*: compute and memory "
                                  "bandwidth bind together")] = False


@dataclass(frozen=True)
class Wall:
    wall: Annotated[WallName, Key("the wall")]
    fill: Annotated[float | None, Key("demand / capacity; above 1 the wall binds (null: a time wall assumed to bind)")]
    binds: Annotated[bool, Key("whether the wall binds")]
    demand: Annotated[float | None, Key("what the workload needs (bytes, requests per second or seconds)")]
    capacity: Annotated[float | None, Key("what one device or node offers, in the same unit")]
    unit: str  # what demand and capacity are measured in, for the report
    note: str


@dataclass(frozen=True)
class Ceiling:
    ceiling: Annotated[CeilingName, Key("the ceiling")]
    axis: Annotated[Axis, Key("the axis that cures it")]


@dataclass(frozen=True)
class DiagnosisResult:
    ridge_intensity: Annotated[float | None, Key("peak compute / memory bandwidth (FLOP per byte): the roofline's "
                                                 "ridge")]
    steps: Annotated[tuple[StepResult, ...], Key("the roofline of each profiled baseline step")]
    walls: Annotated[tuple[Wall, ...], Key("each wall: what is demanded of one node against what it has")]
    binding_ceiling: Annotated[CeilingName, Key("the ceiling that runs out first")]
    axis: Annotated[Axis, Key("the axis of distribution that cures the binding ceiling")]
    declared_axis: Annotated[Axis | None, Key("design.axis")]
    axis_matches: Annotated[bool | None, Key("whether the declared axis is the one the diagnosis names")]
    secondary_ceilings: Annotated[tuple[Ceiling, ...], Key("ceilings that also bind, with the axis each needs")]
    min_devices: Annotated[int | None, Key("the fewest devices that hold one shard of the memory demand")]
    workers_for_deadline: Annotated[int | None, Key("workers needed to meet the training deadline at the stated "
                                                    "MFU")]
    replicas_needed: Annotated[int | None, Key("serving replicas needed for the request rate")]
    training_time_s: Annotated[float | None, Key("single-machine training time from baseline.training: "
                                                 "training_flops / (MFU × π), the time wall's modelled demand")]
    memory_stack: tuple[tuple[str, float], ...]  # (component, bytes) of the memory demand
    bytes_per_parameter: float | None
    device_memory: Annotated[float | None, Key("the memory of one device: the memory wall's capacity",
                                               name="device_memory_bytes")]
    devices_per_node: Annotated[int, Key("hardware.devices_per_node (1 when not given)")]
    shard_within_node: Annotated[bool, Key("the memory wall binds per device and a perfect shard fits within one "
                                           "node: the design must shard the model within each node")]
    min_nodes: Annotated[int | None, Key("min_devices over devices_per_node, rounded up")]
    deadline_stated: bool
    # With a within-node shard required: the ceiling the axis across nodes must cure (the next wall that binds,
    # `none` when one node holding the shard suffices) and its axis; None otherwise.
    node_ceiling: Annotated[CeilingName | None, Key(
        "with a within-node shard required: the ceiling the axis across nodes must cure (the next that binds; none "
        "when one node holding the shard suffices)")] = None
    node_axis: Annotated[Axis | None, Key("the axis that cures node_ceiling")] = None
    design_shards_model: bool = False  # partitioning includes `shard model`
    time_source: Annotated[TimeSource | None, Key(
        "where the time wall's single-machine time comes from: the measured 1-node run (it outranks the model) or "
        "training_flops / (MFU·π)")] = None
    time_reference_nodes: Annotated[float | None, Key(
        "the measured scale the time wall is judged from (the smallest measured; 1: a single machine); null when "
        "the wall is modelled")] = None
    balanced: Annotated[bool, Key("the dominant step lies in the ridge band (0.9·I* ≤ I ≤ 1.1·I*): compute and "
                                  "memory bandwidth bind together, and either axis matches")] = False
    training_flops: Annotated[float | None, Key("the FLOPs of the training run the time wall reads: 6·P·T, or "
                                                "F_model·T with a complete model shape")] = None
    training_flops_source: Annotated[TrainingFlopsSource | None, Key(
        "which count training_flops is: 6PT (6 × parameters × tokens) or model-shape (F_model × tokens, "
        "F_model = 6·P + 12·L·(a·d_h)·s)")] = None

    @derived(Key("the memory stack's total: parameters × bytes each, activations, other", name="memory_demand_bytes"))
    def memory_demand(self) -> float | None:
        """What one replica asks of one device: the memory stack summed (None without baseline.memory)."""
        return sum(size for _, size in self.memory_stack) if self.memory_stack else None


@dataclass(frozen=True)
class MeasuredReference:
    """What the measured runs say one machine would take for the goal's work: the smallest measured scale's run,
    scaled to one machine (methods.md#the-time-wall-from-the-smallest-measured-scale)."""

    nodes: float  # the smallest measured scale, p_ref
    time_s: float  # its time, T_ref
    one_machine_s: float  # strong: p_ref × T_ref (at least: perfect scaling below it); weak: goal shares × T_ref
    weak_shares: float | None = None  # weak scaling: the goal's work in shares (the plan's nodes)


def measured_reference(scaling: ScalingResult | None, plan: int | None) -> MeasuredReference | None:
    """One machine's time for the goal's work from the smallest measured scale: p_ref × T_ref (strong scaling,
    T_1 itself at one node), or the goal's shares × T_ref (weak scaling: the plan's nodes each do a share, and
    one node does them one after another). None without whole runs (times per unit of work)."""
    if scaling is None or scaling.per_unit_of_work or not scaling.rows:
        return None
    first = scaling.rows[0]
    if first.time_s is None:
        return None
    if scaling.mode == "weak":
        shares = float(plan) if plan else max(row.nodes for row in scaling.rows)
        return MeasuredReference(first.nodes, first.time_s, shares * first.time_s, shares)
    return MeasuredReference(first.nodes, first.time_s, first.nodes * first.time_s)


def diagnose(project: Project, *, reference: MeasuredReference | None = None,
             layout_fits: bool | None = None,
             measured_mfu: tuple[float, float] | None = None) -> DiagnosisResult | None:
    """The diagnosis, or None when the project gives neither walls nor baseline steps.

    `reference` is what the smallest measured scale says one machine would take for the goal's work, which
    goal.time_per_run is checked against (measurements outrank the model); `layout_fits` says whether
    design.parallelism's memory per device fits: such a layout shards the model as `shard model` does
    (methods.md#22-a-parallel-layout-designparallelism); `measured_mfu` is the reference scale's (nodes, MFU at 6·P
    FLOPs a token), which the time wall reads when baseline.training gives no MFU (methods.md#flops-mfu-and-hfu).
    """
    hardware = project.hardware or Hardware()
    baseline = project.baseline
    ridge = _ratio(hardware.peak_compute, hardware.memory_bandwidth)
    steps = _steps(baseline.steps if baseline else (), hardware, ridge)
    walls, details = _walls(project, hardware, reference, measured_mfu)
    if not walls and not steps:
        return None
    # A service whose goal states a load distributes because one replica cannot serve it: with no baseline.serving
    # to measure the wall's fill, the serving wall is taken to bind, as the time wall is for a training job.
    goal = project.project.goal
    if project.serving and goal is not None and goal.load is not None and not any(w.wall == "serving" for w in walls):
        walls.append(Wall("serving", None, True, goal.load, None, "", "assumed to bind: the goal states a load but "
                          "not one replica's capacity (add baseline.serving.capacity_per_replica to test it)"))
    # A service never finishes: where the serving wall speaks for it, no deadline is assumed beside it.
    if not any(w.wall in ("time", "serving") for w in walls) and steps:
        why = ("the deadline is stated but no single-machine time is known (add a 1-node run or baseline.training)"
               if _deadline_stated(project) else "the project states no deadline")
        walls.append(Wall("time", None, True, None, None, "s", f"assumed to bind: {why}; the team distributes "
                          "because one machine is too slow"))
    walls.sort(key=lambda w: WALL_ORDER.index(w.wall))
    min_devices = details.get("min_devices")
    # The memory wall binds per device whatever the node holds in all: plain data parallelism puts a replica on
    # every device and fails on each, so the ceiling is memory-capacity. When a perfect shard fits the
    # devices of one node the cure is two-level: shard within the node, then distribute across nodes along the
    # axis of the next wall that binds (the node-level ceiling).
    shard_within_node = any(w.wall == "memory" and w.binds for w in walls) and min_devices is not None \
        and min_devices <= hardware.devices_per_node
    binding = [w for w in walls if w.binds]
    workload = project.project.workload
    ceilings = [_ceiling_of(w, steps, workload) for w in binding]
    primary = ceilings[0] if ceilings else Ceiling("none", CEILING["none"].axis)
    node = (ceilings[1] if len(ceilings) > 1 else Ceiling("none", CEILING["none"].axis)) if shard_within_node \
        else None
    declared = project.design.axis if project.design else None
    slots = project.design.slots if project.design else None
    shards = bool(slots and slots.partitioning and "shard model" in slots.partitioning.choice) or bool(layout_fits)
    balanced = any(step.dominant and step.balanced for step in steps)
    band = frozenset(axis_for(ceiling, workload) for ceiling in RIDGE_CEILINGS) if balanced else frozenset()
    flops = details.get("training_flops")
    return DiagnosisResult(
        ridge_intensity=ridge,
        steps=steps,
        walls=tuple(walls),
        binding_ceiling=primary.ceiling,
        axis=primary.axis,
        declared_axis=declared,
        axis_matches=None if declared is None else _axis_matches(declared, primary, node, shards, band),
        secondary_ceilings=_secondary(ceilings),
        min_devices=min_devices,
        workers_for_deadline=details.get("workers_for_deadline"),
        replicas_needed=details.get("replicas_needed"),
        training_time_s=details.get("training_time_s"),
        memory_stack=details.get("memory_stack", ()),
        bytes_per_parameter=baseline.memory.bytes_per(project.serving) if baseline and baseline.memory else None,
        device_memory=hardware.memory_per_device,
        devices_per_node=hardware.devices_per_node,
        shard_within_node=shard_within_node,
        min_nodes=ceil_ratio(min_devices, hardware.devices_per_node) if min_devices is not None else None,
        deadline_stated=_deadline_stated(project),
        node_ceiling=node.ceiling if node else None,
        node_axis=node.axis if node else None,
        design_shards_model=shards,
        time_source=details.get("time_source"),
        time_reference_nodes=details.get("time_reference_nodes"),
        balanced=balanced,
        training_flops=flops.total if flops else None,
        training_flops_source=flops.source if flops else None,
    )


def _measured_words(reference: MeasuredReference) -> str:
    """Where the single machine's time comes from, in words."""
    shares = reference.weak_shares
    if shares is not None:
        return (f"one node doing the goal's {shares:g} shares of work one after another ({shares:g} × the "
                f"{reference.time_s:.4g} s a share takes, weak scaling)")
    if reference.nodes == 1:
        return "the measured single-node run"
    return (f"the smallest measured scale, {reference.nodes:g} nodes in {reference.time_s:.4g} s, as one machine "
            f"would at best take it ({reference.nodes:g} × that: a single machine was not measured)")


def _secondary(ceilings: list[Ceiling]) -> tuple[Ceiling, ...]:
    """The ceilings met once the first is lifted, each once and never the one being lifted: a data wall and a
    time wall whose dominant step is I/O-bound are one ceiling, data-io."""
    out: list[Ceiling] = []
    for ceiling in ceilings[1:]:
        if ceiling.ceiling != ceilings[0].ceiling and ceiling not in out:
            out.append(ceiling)
    return tuple(out)


def _axis_matches(declared: str, primary: Ceiling, node: Ceiling | None, shards: bool,
                  band: frozenset[Axis] = frozenset()) -> bool:
    """The declared axis cures the binding ceiling; with a within-node shard required, the node-level axis matches
    only when the design shards the model. `band` holds the axes of compute and memory bandwidth when the dominant
    step lies in the ridge band: either lifts a ceiling the step's bound names."""
    if _cures(declared, primary, band):
        return True
    return node is not None and _cures(declared, node, band) and shards


def _cures(declared: str, ceiling: Ceiling, band: frozenset[Axis]) -> bool:
    """The declared axis is the ceiling's, or the ceiling is one of the two the ridge band joins and the axis is
    either's (methods.md#1-diagnosis-which-resource-runs-out-first)."""
    return declared == ceiling.axis or (ceiling.ceiling in RIDGE_CEILINGS and declared in band)


def _deadline_stated(project: Project) -> bool:
    """A deadline is stated by baseline.training.deadline or project.goal.time_per_run (never asked for
    when either is set)."""
    training = project.baseline.training if project.baseline else None
    goal = project.project.goal
    return bool((training and training.deadline) or (goal and goal.time_per_run))


def _largest(floors: dict[Bound, float]) -> Bound | None:
    """The bound of the largest positive floor; ties go to the earlier bound (max() keeps the first maximum)."""
    if not floors:
        return None
    largest: Bound = max(floors, key=floors.__getitem__)
    return largest if floors[largest] > 0 else None


def axis_for(ceiling: CeilingName, workload: str | None) -> Axis:
    """The axis that cures `ceiling`: a compute ceiling of a service adds replicas, of a data job splits its data."""
    return cure(ceiling, workload).axis


def _ceiling_of(wall: Wall, steps: tuple[StepResult, ...], workload: str | None) -> Ceiling:
    ceiling = named_by_wall(wall.wall)
    if ceiling is None:  # the time wall: named by its dominant step's largest floor
        dominant = next((s for s in steps if s.dominant), None)
        ceiling = named_by_bound(dominant.bound) if dominant and dominant.bound else "compute"
    return Ceiling(ceiling, axis_for(ceiling, workload))


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


# ------------------------------------------------------------------------------------------------------ roofline
def _steps(steps: tuple[Step, ...], hardware: Hardware, ridge: float | None) -> tuple[StepResult, ...]:
    if not steps:
        return ()
    longest = max(step.time for step in steps)
    dominant_index = next(i for i, step in enumerate(steps) if step.time == longest)  # ties: first listed
    return tuple(_step(step, hardware, index == dominant_index, ridge) for index, step in enumerate(steps))


def in_ridge_band(intensity: float | None, ridge: float | None) -> bool:
    """0.9·I* ≤ I ≤ 1.1·I*: the step's compute floor W/π and memory floor Q/β = W/(β·I) differ by at most about
    10 %, so neither alone is the bound (an infinite or unknown I never is)."""
    if intensity is None or ridge is None or not math.isfinite(intensity):
        return False
    return RIDGE_BAND[0] * ridge <= intensity <= RIDGE_BAND[1] * ridge


def _step(step: Step, hardware: Hardware, dominant: bool, ridge: float | None = None) -> StepResult:
    work, traffic = step.flops, step.bytes
    floors: dict[str, float | None] = {
        "compute": _ratio(work, hardware.peak_compute),
        "memory": _ratio(traffic, hardware.memory_bandwidth),
        "io": _ratio(step.io_bytes, hardware.io_bandwidth),
        "network": None,
    }
    if step.net_bytes is not None and hardware.network_bandwidth:
        floors["network"] = (hardware.network_latency or 0.0) + step.net_bytes / hardware.network_bandwidth
    named = dict(zip(BOUND_ORDER, (floors["compute"], floors["memory"], floors["io"], floors["network"]),
                     strict=True))
    present = {bound: floor for bound, floor in named.items() if floor is not None}
    bound = _largest(present)  # in BOUND_ORDER, so ties go to the earlier bound
    return StepResult(
        name=step.name,
        time_s=step.time,
        intensity=_intensity(work, traffic),
        floors_s=floors,
        bound=bound,
        attained_flops_per_s=_ratio(work, step.time),
        attained_bytes_per_s=_ratio(traffic, step.time),
        roof_efficiency=_roof_efficiency(step, hardware),
        dominant=dominant,
        balanced=in_ridge_band(_intensity(work, traffic), ridge),
    )


def _intensity(work: float | None, traffic: float | None) -> float | None:
    if work is None or traffic is None or (work == 0 and traffic == 0):
        return None
    return math.inf if traffic == 0 else work / traffic


def _roof_efficiency(step: Step, hardware: Hardware) -> float | None:
    """Attained FLOP/s over the roof at the step's intensity, min(π, β·I)."""
    intensity = _intensity(step.flops, step.bytes)
    if intensity is None or step.flops is None or not hardware.peak_compute or not hardware.memory_bandwidth:
        return None
    roof = min(hardware.peak_compute, hardware.memory_bandwidth * intensity)
    return (step.flops / step.time) / roof if roof > 0 else None


# --------------------------------------------------------------------------------------------------------- walls
@dataclass(frozen=True)
class TrainingFlops:
    """The FLOPs of one training run, counted once for the time wall and diagnosis.training_time_s
    (methods.md#1-diagnosis-which-resource-runs-out-first)."""

    per_token: float  # 6·P, or F_model = 6·P + 12·L·(a·d_h)·s with a complete shape
    six_p: float  # 6·P: what a measured mfu_6p is counted against
    tokens: float  # T, baseline.training.tokens
    source: TrainingFlopsSource

    @property
    def total(self) -> float:
        return self.per_token * self.tokens

    @property
    def formula(self) -> str:
        """The count in words, for the time wall's basis."""
        if self.source == "model-shape":
            return "F_model × tokens (F_model = 6·P + 12·L·(a·d_h)·s, from the model's shape)"
        return "6 × parameters × tokens"


def training_flops(project: Project) -> TrainingFlops | None:
    """6·P·T, the seed formula; F_model·T when the model's shape is complete, the plan search's count a token
    (methods.md#flops-mfu-and-hfu), so that the diagnosis and the search never price one run two ways. None
    without baseline.training."""
    training = project.baseline.training if project.baseline else None
    if training is None:
        return None
    counted = token_flops(training.parameters, shape_of(project))  # F_model = 6·P without a complete shape
    source: TrainingFlopsSource = "model-shape" if counted.attention_included else "6PT"
    return TrainingFlops(counted.model, counted.six_p, training.tokens, source)


class _Details(TypedDict, total=False):
    """What measuring the walls finds beside them, for the diagnosis's fields."""

    memory_stack: tuple[tuple[str, float], ...]
    min_devices: int
    replicas_needed: int | None
    training_time_s: float
    training_flops: TrainingFlops
    time_source: TimeSource
    workers_for_deadline: int
    time_reference_nodes: float


def _walls(project: Project, hardware: Hardware, reference: MeasuredReference | None,
           measured_mfu: tuple[float, float] | None = None) -> tuple[list[Wall], _Details]:
    baseline = project.baseline
    walls: list[Wall] = []
    details: _Details = {}
    if baseline and baseline.memory:
        memory = baseline.memory
        stack = [("parameters × bytes per parameter", memory.parameters * memory.bytes_per(project.serving))]
        kv = baseline.serving.kv_cache_bytes if project.serving and baseline.serving else None
        if kv:
            stack.append(("KV cache", kv))
        if memory.activations:
            stack.append(("activations", memory.activations))
        if memory.other:
            stack.append(("other", memory.other))
        details["memory_stack"] = tuple(stack)
        demand = sum(size for _, size in stack)
        device = hardware.memory_per_device
        if device:
            fill = demand / device
            per = "one device's memory" if hardware.devices_per_node > 1 else "one node's memory"
            walls.append(Wall("memory", fill, at_least(fill, 1.0), demand, device, "B",
                              f"state of one replica against {per}"))
            details["min_devices"] = ceil_ratio(demand, device)
    if baseline and baseline.dataset and hardware.storage:
        fill = baseline.dataset.size / hardware.storage
        walls.append(Wall("data", fill, at_least(fill, 1.0), baseline.dataset.size, hardware.storage, "B",
                          "data set against one node's storage"))
    if baseline and baseline.serving:
        goal = project.project.goal
        wall, replicas = _serving_wall(baseline.serving, goal.headroom if goal and goal.headroom else 0.0)
        if wall:
            walls.append(wall)
            details["replicas_needed"] = replicas
    time_wall = _time_wall(project, hardware, reference, details, measured_mfu)
    if time_wall:
        walls.append(time_wall)
    return walls, details


def _serving_wall(serving: Serving, headroom: float) -> tuple[Wall | None, int | None]:
    """The load against one replica's capacity (the replicas it takes include the goal's headroom) and the p99
    against its objective."""
    fills: list[float] = []
    replicas = None
    notes = []
    if serving.requests_per_second is not None and serving.capacity_per_replica is not None:
        fills.append(serving.requests_per_second / serving.capacity_per_replica)
        replicas = ceil_ratio(serving.requests_per_second * (1.0 + headroom), serving.capacity_per_replica)
        notes.append("load against one replica's capacity")
    if serving.p99_latency is not None and serving.latency_slo is not None:
        fills.append(serving.p99_latency / serving.latency_slo)
        notes.append("p99 latency against the objective")
    if not fills:
        return None, None
    fill = max(fills)
    return Wall("serving", fill, at_least(fill, 1.0), None, None, "", "; ".join(notes)), replicas


def _time_wall(project: Project, hardware: Hardware, reference: MeasuredReference | None,
               details: _Details, measured_mfu: tuple[float, float] | None = None) -> Wall | None:
    """Single-machine time to finish against the deadline (training.deadline, else goal.time_per_run)."""
    reference_time_s = reference.one_machine_s if reference else None
    training = project.baseline.training if project.baseline else None
    goal = project.project.goal
    deadline = (training.deadline if training else None) or (goal.time_per_run if goal else None)
    time = None
    source = ""
    flops = training_flops(project)
    mfu = training.mfu if training else None
    if flops is not None and mfu is None and measured_mfu is not None:
        # The measured MFU counts 6·P a token; against F_model it is scaled by F_model / 6·P, so that the time
        # it implies, flops / (MFU·π), is the measured one whichever count the wall reads
        mfu = measured_mfu[1] * flops.per_token / flops.six_p
        source = f", with the MFU measured at {nodes_words(measured_mfu[0])} ({percent(mfu)})"
    if flops is not None and mfu and hardware.peak_compute:
        time = flops.total / (mfu * hardware.peak_compute)
        details["training_time_s"] = time
        details["training_flops"] = flops
        details["time_source"] = "modelled"
        source = f"{flops.formula} / (MFU × π)" + source
    per_run = goal.time_per_run if goal else None
    # A scale above one node that meets the deadline bounds one machine's time from below only: then the model,
    # where there is one, says whether one machine would (methods.md#the-time-wall-from-the-smallest-measured-scale)
    bound_only = reference is not None and reference.nodes > 1 and reference.weak_shares is None
    if bound_only and time is not None and reference_time_s is not None and per_run is not None \
            and reference_time_s <= per_run:
        reference = reference_time_s = None
    if reference is not None and reference_time_s is not None and per_run is not None:
        # Measurements outrank the model: the smallest measured scale, held as one machine's time for the
        # goal's work, against the goal's time per run decides whether one machine suffices, whatever the modelled
        # estimate says (methods.md#the-time-wall-from-the-smallest-measured-scale)
        modelled = f"; the model's {source} gives {time:.4g} s" if time is not None else ""
        details["time_source"] = "measured"
        details["time_reference_nodes"] = reference.nodes
        details["workers_for_deadline"] = ceil_ratio(reference_time_s, per_run)
        fill = reference_time_s / per_run
        return Wall("time", fill, at_least(fill, 1.0), reference_time_s, per_run, "s",
                    f"{_measured_words(reference)} against the goal's time per run{modelled}")
    if time is None and reference is not None and reference_time_s is not None:
        time = reference_time_s
        details["time_source"] = "measured"
        details["time_reference_nodes"] = reference.nodes
        source = _measured_words(reference)
    if time is None or (deadline is None and training is None):
        return None
    if deadline is None:  # the training time is known, the fill is not: taken to bind, as with steps
        return Wall("time", None, True, time, None, "s", f"{source}; no deadline is stated, so the wall is taken "
                    "to bind (the team distributes because one machine is too slow)")
    details["workers_for_deadline"] = ceil_ratio(time, deadline)
    fill = time / deadline
    return Wall("time", fill, at_least(fill, 1.0), time, deadline, "s", f"{source} against the deadline")
