"""A parallel layout (data × tensor × pipeline, ZeRO over the data-parallel group): memory per device and the
step time, over the data-parallel degree (docs/methods.md#22-a-parallel-layout-designparallelism).

Memory per device follows the ZeRO paper (Rajbhandari et al. 2020, §5 and Table 1); the step time the Megatron-LM
paper's account of the 1F1B schedule and tensor parallelism (Narayanan et al. 2021, §3). Both are evaluated with
numpy over every data-parallel degree at once, so a sweep to 10⁶ costs what the prediction's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.common import TIE_TOLERANCE
from reportgen.analysis.model.layout_memory import (
    activation_calibration,
    declared_memory,
    fits_usable,
    smallest_fitting_data,
    usable_memory,
)
from reportgen.analysis.model.model_shape import declared_activations, parameters_of
from reportgen.analysis.model.patterns import Pattern, zero_collective
from reportgen.keys import Key, derived
from reportgen.project.accuracy_table import Calibration
from reportgen.project.model import MemorySplit, Parallelism, PatternName, Project, Recompute

STAGES = (0, 1, 2, 3)
STAGE_KEYS = tuple(str(stage) for stage in STAGES)
LAYOUT_DOC = "the parallel layout of design.parallelism: memory per device and the step's terms"
MAX_DATA_DEGREE = 1 << 24  # the sweep's bound: far past any cluster, and a bound on the arrays it allocates


@dataclass(frozen=True)
class StageMemory:
    """One ZeRO stage's bytes per device at the declared layout: the state it keeps whole and the state it shards."""

    stage: Annotated[int, Key("the ZeRO stage")]
    weights_b: Annotated[float, Key("weights per device")]
    gradients_b: Annotated[float, Key("gradients per device")]
    optimizer_b: Annotated[float, Key("optimizer state per device")]
    # activations (modelled from a complete shape, or as given) and other resident memory (not sharded)
    activations_b: Annotated[float, Key("activations (modelled from the model's shape when it is complete, else as "
                                        "given) and other resident memory")]
    runtime_b: Annotated[float, Key("the bytes a run holds beside its tensors: context, communicators, working "
                                    "sets, fragmentation (0 without a complete shape or hardware.runtime_memory)")]
    # within one device's usable memory (None: the device's size is not given)
    fits: Annotated[bool | None, Key("within one device's usable memory (less plan_search.memory_headroom)")] = None

    @derived(Key("their sum: memory per device at this stage"))
    def total_b(self) -> float:
        return self.weights_b + self.gradients_b + self.optimizer_b + self.activations_b + self.runtime_b


@dataclass(frozen=True)
class StepTerms:
    """One step of the layout, each term in seconds."""

    # the layout's share of the single-node compute
    compute_s: Annotated[float, Key("T_comp · g / (d·t·pp)")]
    bubble_s: Annotated[float, Key("compute × (pp − 1)/(v·m), the 1F1B bubble (v: virtual stages)")]
    tensor_s: Annotated[float, Key("tensor parallelism's all-reduces")]  # within the node
    pipeline_s: Annotated[float, Key("pipeline sends")]  # activations sent between stages
    data_s: Annotated[float, Key("(1 − overlap) × the data-parallel collective")]
    expert_s: Annotated[float, Key("the experts' token all-to-all (mixture of experts; 0 without)")] = 0.0
    # filled in as results.json is written (methods.md#how-accurate-each-prediction-is)
    calibration: Annotated[Calibration | None, Key("the step's accuracy on published curves (layout-step) at the "
                                                   "plan over the largest measured scale")] = None

    @derived(Key("the step"))
    def total_s(self) -> float:
        return self.compute_s + self.bubble_s + self.tensor_s + self.pipeline_s + self.data_s + self.expert_s

    @property
    def rows(self) -> tuple[tuple[str, float, float], ...]:
        """(term, seconds, share of the step) in the order methods.md#22-a-parallel-layout-designparallelism writes
        them."""
        total = self.total_s
        terms = (("compute", self.compute_s), ("pipeline bubble", self.bubble_s),
                 ("tensor-parallel all-reduces", self.tensor_s), ("pipeline sends", self.pipeline_s),
                 ("data-parallel collective", self.data_s),
                 *((("expert all-to-all", self.expert_s),) if self.expert_s else ()))
        return tuple((name, seconds, seconds / total if total > 0 else 0.0) for name, seconds in terms)


@dataclass(frozen=True)
class LayoutCurve:
    """The step over every data-parallel degree d = 1…max at the declared t and pp."""

    data: np.ndarray
    nodes: np.ndarray  # d·t·pp / devices_per_node (fractional when one node holds several groups)
    t_step: np.ndarray
    speedup: np.ndarray  # T_comp / T_step


@dataclass(frozen=True)
class LayoutOptimum:
    data: Annotated[int, Key("d*")]
    nodes: Annotated[float | None, Key("the nodes it takes")]
    speedup: Annotated[float, Key("T_comp / T_step there")]


@dataclass(frozen=True)
class LayoutResult:
    # the declared (or derived) data-parallel degree; None when neither given nor derivable
    data: Annotated[int | None, Key("d: the data-parallel degree (declared, or the devices left by tensor and "
                                    "pipeline)")]
    tensor: Annotated[int, Key("t: the tensor-parallel degree")]
    pipeline: Annotated[int, Key("pp: pipeline stages")]
    micro_batches: Annotated[int, Key("m: micro-batches per step")]
    zero_stage: Annotated[int, Key("the ZeRO stage, 0 to 3")]
    overlap: Annotated[float, Key("share of the data-parallel collective hidden behind compute")]
    devices_per_node: int
    planned_nodes: int | None  # design.nodes
    size_matches: bool | None  # d·t·pp = design.nodes × devices_per_node (None: nothing to compare)
    tensor_across_nodes: bool  # t > devices_per_node: tensor all-reduces cross the network
    device_memory_b: Annotated[float | None, Key("one device's memory")]
    # every stage at the declared d (empty without parameters or d)
    memory: Annotated[tuple[StageMemory, ...], Key("every ZeRO stage's bytes per device at the declared d",
                                                   name="memory_by_stage")]
    min_data_for_stage: tuple[int | None, ...]  # the smallest d at which each stage fits one device
    # at the declared layout, when every term's inputs are there
    step: Annotated[StepTerms | None, Key("the step's terms at the declared layout")]
    step_missing: Annotated[tuple[str, ...], Key("the inputs the step time lacks", item="a field")]
    data_pattern: Pattern  # the data-parallel collective: ring (stages 0–2) or sharded (stage 3)
    curve: LayoutCurve | None
    optimum_data: int | None  # d* = argmin T_step over d (ties: the smallest)
    optimum_speedup: float | None
    inputs: StepInputs | None = None  # what the step time is computed from (None while some input is missing)
    expert: Annotated[int, Key("e: the expert-parallel degree (mixture of experts; 1 without)")] = 1
    expert_parameters: Annotated[float | None, Key("the parameters that live in experts (mixture of experts)")] = None
    virtual_stages: Annotated[int, Key("v: model chunks per device (interleaved 1F1B)")] = 1
    recompute: Annotated[Recompute, Key("activation recomputation: none, selective or full")] = "none"
    sequence_parallel: Annotated[bool, Key("Megatron sequence parallelism in the tensor-parallel group")] = False
    # the activations per device came from the model's shape (None: as given, or none)
    activations_source: Literal["model", "given"] | None = None
    context: Annotated[int, Key("cp: the context-parallel degree (each sequence sharded over cp devices)")] = 1
    # filled in as results.json is written (methods.md#how-accurate-each-prediction-is)
    memory_per_device_b_calibration: Annotated[Calibration | None, Key(
        "the memory model's accuracy on published curves that print a measured peak")] = None

    @property
    def model_parallel(self) -> int:
        """t · pp · cp: the devices one data-parallel replica spans."""
        return self.tensor * self.pipeline * self.context

    @property
    def expert_divides(self) -> bool | None:
        """e divides d (layout-expert when not); None without a data-parallel degree."""
        return None if self.data is None else self.data % self.expert == 0

    @derived(Key("d · t · pp · cp"))
    def devices(self) -> int | None:
        return self.data * self.model_parallel if self.data is not None else None

    @derived(Key("devices / devices_per_node"))
    def nodes(self) -> float | None:
        devices = self.devices
        return _nodes(devices, self.devices_per_node) if devices is not None else None

    @property
    def declared_memory(self) -> StageMemory | None:
        return self.memory[self.zero_stage] if self.memory else None

    @derived(Key("bytes per device at the declared stage and d"))
    def memory_per_device_b(self) -> float | None:
        declared = self.declared_memory
        return declared.total_b if declared else None

    @derived(Key("the declared layout's memory per device fits one device"))
    def fits(self) -> bool | None:
        """The declared layout's memory per device fits one device (None: no memory or no device size)."""
        declared = self.declared_memory
        return declared.fits if declared else None

    @property
    def optimum_nodes(self) -> float | None:
        if self.optimum_data is None:
            return None
        return _nodes(self.optimum_data * self.model_parallel, self.devices_per_node)

    @derived(Key("the smallest d at which each stage fits, by stage", name="min_data_for_stage", keys=STAGE_KEYS,
                 item="the smallest d at which ZeRO stage {key} fits one device"))
    def min_data_by_stage(self) -> dict[str, int | None]:
        return {str(stage): d for stage, d in enumerate(self.min_data_for_stage)}

    @derived(Key("the data-parallel group's collective: ring for stages 0–2, sharded for 3", name="data_pattern"))
    def data_pattern_name(self) -> PatternName:
        return self.data_pattern.name

    @derived(Key("the data-parallel degree with the shortest step at the declared t and pp", name="optimum"))
    def optimum_point(self) -> LayoutOptimum | None:
        if self.optimum_data is None or self.optimum_speedup is None:
            return None
        return LayoutOptimum(self.optimum_data, self.optimum_nodes, self.optimum_speedup)

    @property
    def fitting_stages(self) -> tuple[str, ...]:
        """Where each stage fits, in words ("stage 1 from d = 45"), for the stages that fit at some d."""
        return tuple(f"stage {stage} from d = {d:,}" for stage, d in zip(STAGES, self.min_data_for_stage, strict=True)
                     if d is not None)

    @property
    def optimum_capped(self) -> bool:
        """d* is the largest degree evaluated: the step still falls at the end of the range."""
        return self.curve is not None and self.optimum_data == len(self.curve.data) and len(self.curve.data) > 1

    def at_nodes(self, nodes: float) -> StepTerms | None:
        """The step at a node count the layout reaches with a whole data-parallel degree (a measured scale), else
        None: d = nodes × devices_per_node / (t·pp)."""
        if self.inputs is None:
            return None
        degree = nodes * self.devices_per_node / self.model_parallel
        if degree < 1 or degree != int(degree):
            return None
        return self.inputs.terms(int(degree), self.devices_per_node, self.data_pattern)

    @property
    def bubble_fraction(self) -> float:
        """(pp − 1)/(v·m) of the compute."""
        return (self.pipeline - 1) / (self.virtual_stages * self.micro_batches)


def _nodes(devices: int, per_node: int) -> float:
    """Devices as nodes: a whole number when they fill whole nodes (an int, so it reads "64", not "64.0")."""
    return devices // per_node if devices % per_node == 0 else devices / per_node


@dataclass(frozen=True)
class Experts:
    """A mixture of experts' share of the parameters a device holds (methods.md#mixture-of-experts): Ψ_exp =
    expert_parameters / (e·pp), whose gradients the step all-reduces over the d / e replicas of each expert. None of
    it without a mixture of experts."""

    psi: float = 0.0
    degree: int = 1  # e


NO_EXPERTS = Experts()


def _stage_rows(project: Project, parameters: float | None, data: int | None,
                kappa: float) -> tuple[StageMemory, ...]:
    """Every ZeRO stage's bytes per device at the declared layout, from the one memory function: empty without
    the parameters or d."""
    if parameters is None or data is None:
        return ()
    usable = usable_memory(project)
    rows = []
    for stage in STAGES:
        found = declared_memory(project, parameters, data, kappa=kappa, zero_stage=stage)
        if found is None:
            return ()
        memory = float(found.memory_b[0])
        rows.append(StageMemory(stage, float(found.weights_b[0]), float(found.gradients_b[0]),
                                float(found.optimizer_b[0]), float(found.activations_b[0]) + found_other(project),
                                float(found.runtime_b[0]),
                                None if usable is None else fits_usable(memory, usable)))
    return tuple(rows)


def found_other(project: Project) -> float:
    """baseline.memory.other: resident, shown with the activations."""
    memory = project.baseline.memory if project.baseline else None
    return (memory.other or 0.0) if memory else 0.0


def analyze_layout(project: Project, *, t_comp: float | None, alpha: float | None,
                   max_nodes: int) -> LayoutResult | None:
    """The layout of design.parallelism, or None without one. `t_comp` and `alpha` are the prediction's."""
    design = project.design
    if design is None or design.parallelism is None:
        return None
    layout = design.parallelism
    hardware = project.hardware
    g = hardware.devices_per_node if hardware else 1
    model_parallel = layout.model_parallel
    data = project.layout_data_degree
    memory = project.baseline.memory if project.baseline else None
    device = hardware.memory_per_device if hardware else None
    split = memory.per_parameter if memory else None
    expert_parameters = memory.expert_parameters if memory else None
    # a mixture of experts: the dense state over t·pp, each expert's over e·pp (methods.md#mixture-of-experts)
    experts = Experts(expert_parameters / (layout.expert * layout.pipeline), layout.expert) \
        if memory and expert_parameters else Experts(0.0, layout.expert)
    # the dense parameters per device: split over t·pp, replicated over cp
    psi = (memory.parameters - (expert_parameters or 0.0)) / (layout.tensor * layout.pipeline) if memory else None
    modelled = declared_activations(project)
    given = memory.activations if memory else None
    # a complete shape models the activations; a measured value given beside it calibrates them (κ)
    # (methods.md#activation-memory-from-the-models-shape)
    activations_source: Literal["model", "given"] | None = "model" if given is None and modelled is not None \
        else "given" if given is not None else None
    found = parameters_of(project)
    parameters = memory.parameters if memory else (found[0] if found else None)
    kappa = (activation_calibration(project, parameters, data) if parameters is not None and data is not None
             else None) or 1.0
    stages = _stage_rows(project, parameters, data, kappa)
    min_data: tuple[int | None, ...] = (None,) * len(STAGES)
    if parameters is not None:
        min_data = tuple(smallest_fitting_data(project, parameters, s, kappa=kappa) for s in STAGES)
    data_pattern = Pattern(zero_collective(layout.zero_stage))
    inputs = StepInputs.of(project, layout, t_comp, alpha, psi, split, experts)
    step, curve, best = None, None, None
    if inputs.missing == ():
        top = max(1, min(MAX_DATA_DEGREE, max_nodes * g // model_parallel))
        degrees = np.arange(1, top + 1, dtype=float)
        t_step = inputs.t_step(degrees, g, data_pattern)
        curve = LayoutCurve(degrees, degrees * model_parallel / g, t_step, inputs.t_comp / t_step)
        lowest = t_step.min()
        best = int(np.argmax(t_step <= lowest * (1.0 + TIE_TOLERANCE))) + 1
        if data is not None:
            step = inputs.terms(data, g, data_pattern)
    size_matches = None
    if data is not None and design.nodes is not None and layout.data is not None:
        size_matches = data * model_parallel == design.nodes * g
    return LayoutResult(
        data=data, tensor=layout.tensor, pipeline=layout.pipeline, micro_batches=layout.micro_batches,
        zero_stage=layout.zero_stage, overlap=layout.overlap, devices_per_node=g, planned_nodes=design.nodes,
        size_matches=size_matches, tensor_across_nodes=layout.tensor > g, device_memory_b=device, memory=stages,
        min_data_for_stage=min_data, step=step, step_missing=inputs.missing, data_pattern=data_pattern, curve=curve,
        optimum_data=best, optimum_speedup=float(curve.speedup[best - 1]) if curve is not None and best else None,
        inputs=inputs if inputs.missing == () else None, expert=layout.expert, expert_parameters=expert_parameters,
        virtual_stages=layout.virtual_stages, recompute=layout.recompute, sequence_parallel=layout.sequence_parallel,
        activations_source=activations_source, context=layout.context)


@dataclass(frozen=True)
class StepInputs:
    """What the step time needs, each None when the project does not give it, and the names of those missing."""

    t_comp: float
    alpha: float
    bandwidth: float  # B: the network, per node
    intra_bandwidth: float
    intra_alpha: float
    activation_b: float  # A = micro_batch · sequence · hidden · 2 B
    layers: int
    data_message_b: float  # M_dp = w·Ψ
    tensor: int
    pipeline: int
    micro_batches: int
    overlap: float
    missing: tuple[str, ...]
    experts: Experts = NO_EXPERTS
    expert_layers: int = 0  # the layers with experts (baseline.model.moe_layers, default layers)
    top_k: int = 2  # experts per token
    weight_bytes: float = 0.0  # w: bytes of weights per parameter (an expert's gradients are all-reduced too)
    devices_per_node: int = 1
    virtual_stages: int = 1  # v: the bubble divides by v, the pipeline sends multiply by it
    tensor_all_reduces: int = 4  # per layer and micro-batch: 6 under full recomputation (its forward repeats two)
    context: int = 1  # cp: the compute of a replica is shared by cp devices more

    @classmethod
    def of(cls, project: Project, layout: Parallelism, t_comp: float | None, alpha: float | None, psi: float | None,
           split: MemorySplit | None, experts: Experts = NO_EXPERTS) -> StepInputs:
        hardware = project.hardware
        shape = project.baseline.model if project.baseline else None
        bandwidth = hardware.network_bandwidth if hardware else None
        intra = hardware.intra_node_bandwidth if hardware else None
        g = hardware.devices_per_node if hardware else 1
        needs: dict[str, object] = {"prediction.t_comp": t_comp, "hardware.network_latency or prediction.alpha": alpha,
                                    "hardware.network_bandwidth": bandwidth, "baseline.memory": psi}
        if layout.tensor > 1 or layout.pipeline > 1 or layout.expert > 1:
            needs["baseline.model"] = shape
        if layout.tensor > 1 or 1 < layout.expert <= g:
            needs["hardware.intra_node_bandwidth"] = intra
        missing = tuple(name for name, value in needs.items() if value is None)
        return cls(t_comp or 0.0, alpha or 0.0, bandwidth or 1.0, intra or 1.0,
                   (hardware.intra_node_latency or 0.0) if hardware else 0.0,
                   shape.activation_bytes if shape else 0.0, shape.layers if shape else 0,
                   (split.weights * psi) if split and psi else 0.0, layout.tensor, layout.pipeline,
                   layout.micro_batches, layout.overlap, missing, experts,
                   shape.expert_layers if shape else 0, shape.top_k if shape else 2,
                   split.weights if split else 0.0, g, layout.virtual_stages, 6 if layout.recompute == "full" else 4,
                   layout.context)

    def _expert_term(self) -> float:
        """The token all-to-all per step: m micro-batches × 4 · (moe_layers/pp) · [(e − 1)·α + (e − 1)/e · A·top_k /
        B], at the intra-node link when e ≤ devices_per_node, else the network's (two forward, two backward)."""
        e = self.experts.degree
        if e <= 1:
            return 0.0
        within = e <= self.devices_per_node
        alpha, bandwidth = (self.intra_alpha, self.intra_bandwidth) if within else (self.alpha, self.bandwidth)
        per_exchange = (e - 1) * alpha + (e - 1) / e * self.activation_b * self.top_k / bandwidth
        return self.micro_batches * 4.0 * (self.expert_layers / self.pipeline) * per_exchange

    def _fixed_terms(self) -> tuple[float, float]:
        """T_tp and T_pp, which do not depend on d."""
        t, pp, m = self.tensor, self.pipeline, self.micro_batches
        # tensor parallelism beyond a node crosses the network: its all-reduces at the network's bandwidth and
        # latency (methods.md#22-a-parallel-layout-designparallelism)
        across = t > self.devices_per_node
        bandwidth, alpha = (self.bandwidth, self.alpha) if across else (self.intra_bandwidth, self.intra_alpha)
        tensor = self.tensor_all_reduces * (self.layers / pp) * m * (
            2.0 * (t - 1) / t * self.activation_b / bandwidth + 2.0 * (t - 1) * alpha) if t > 1 else 0.0
        pipeline = 2.0 * self.virtual_stages * m * (self.alpha + self.activation_b / self.bandwidth) if pp > 1 else 0.0
        return tensor, pipeline

    def _varying_terms(self, degrees: np.ndarray, g: int, data_pattern: Pattern) -> tuple[np.ndarray, np.ndarray]:
        """The compute share and the data-parallel collective (less its overlap) at each data-parallel degree."""
        compute = self.t_comp * g / (degrees * self.tensor * self.pipeline * self.context)
        latency, bandwidth = data_pattern.coefficients(degrees)
        collective = self.alpha * latency + self.data_message_b / self.bandwidth * bandwidth
        if self.experts.psi:  # each expert's gradients, over its d / e replicas
            replicas = np.maximum(degrees / self.experts.degree, 1.0)
            latency, bandwidth = data_pattern.coefficients(replicas)
            expert_bytes = self.weight_bytes * self.experts.psi
            collective = collective + self.alpha * latency + expert_bytes / self.bandwidth * bandwidth
        return compute, (1.0 - self.overlap) * collective

    def t_step(self, degrees: np.ndarray, g: int, data_pattern: Pattern) -> np.ndarray:
        compute, data = self._varying_terms(degrees, g, data_pattern)
        tensor, pipeline = self._fixed_terms()
        step: np.ndarray = compute * (1.0 + self.bubble) + tensor + pipeline + data + self._expert_term()
        return step

    def terms(self, data: int, g: int, data_pattern: Pattern) -> StepTerms:
        compute, collective = (float(term[0]) for term in self._varying_terms(np.array([float(data)]), g,
                                                                                data_pattern))
        tensor, pipeline = self._fixed_terms()
        return StepTerms(compute, compute * self.bubble, tensor, pipeline, collective, self._expert_term())

    @property
    def bubble(self) -> float:
        """(pp − 1)/(v·m): the 1F1B bubble's share of the compute, interleaving dividing it by v."""
        return (self.pipeline - 1) / (self.virtual_stages * self.micro_batches)
