"""The plan search's inputs and the declared layout's memory from the model's shape
(methods.md#activation-memory-from-the-models-shape): the six activation modes of Korthikanti et al. 2022 at the
declared layout, the model states on the most loaded pipeline stage, a measured `activations` read as the
calibration κ of the model, and the FLOPs per token every layout and every measured run is held to.

It belongs to the core (a field of `Analysis`): the findings read it (`activation-model-departs`).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from typing import Annotated

from reportgen.analysis.measured.utilization import default_tokens, model_flops, peaks_per_device, plan_precision
from reportgen.analysis.model.layout_memory import (
    StageColumns,
    activation_calibration,
    declared_memory,
    declared_split,
    declared_stages,
    first_stage_held,
    fits_usable,
    runtime_of,
    stage_split,
    usable_memory,
)
from reportgen.analysis.model.layout_search import Term
from reportgen.analysis.model.micro_batch import MicroBatchEfficiency
from reportgen.analysis.model.model_shape import Activations, ParametersSource, activations, parameters_of, shape_of
from reportgen.analysis.model.transformer import (
    MODES,
    ModeName,
    RecomputePolicy,
    attention_sequence,
    interleave_factor,
    token_flops,
)
from reportgen.analysis.plan.calibration import Efficiency
from reportgen.keys import Key, derived, money
from reportgen.project.accuracy_table import Calibration
from reportgen.project.model import Project, RegimeName

PLAN_SEARCH_DOC = ("the plan search from the model's shape: its inputs, the FLOPs per token, and the declared "
                   "layout's memory in each of the six activation modes (null without a complete shape: layers, "
                   "hidden, sequence, heads and vocabulary)")
# κ outside this range: the shape's architecture is not the GPT-3 layer Table 2 counts
KAPPA_RANGE = (0.5, 2.0)
SHAPE_FIELDS = ("layers", "hidden", "sequence", "heads", "vocabulary")


@dataclass(frozen=True)
class SearchInputs:
    parameters: Annotated[float, Key("P: the parameters a token passes through")]
    parameters_source: Annotated[ParametersSource, Key("where P comes from: baseline.training, baseline.memory or "
                                                       "the shape (Narayanan et al. 2021, eq. (2))")]
    layers: Annotated[int, Key("L: transformer layers")]
    hidden: Annotated[int, Key("h: hidden size")]
    heads: Annotated[int, Key("a: attention heads")]
    head_dim: Annotated[float, Key("d_h: the dimension of one head")]
    sequence: Annotated[int, Key("s: tokens per sequence")]
    vocabulary: Annotated[int, Key("V: vocabulary size")]
    micro_batch: Annotated[int, Key("b: sequences per micro-batch")]
    global_batch: Annotated[int | None, Key("B: sequences per optimizer step (given, or b·d·m of the declared "
                                            "layout)")]
    tokens_per_run: Annotated[float | None, Key("T: tokens per run")]
    devices_per_node: Annotated[int, Key("g: devices per node")]
    device_memory_b: Annotated[float | None, Key("one device's memory")]
    peak_flops_per_device: Annotated[float | None, Key("π_dev: hardware.peak_compute / g")]
    flash_attention: Annotated[bool, Key("the attention kernel never stores the s×s scores")]
    precision: Annotated[str, Key("the precision the layouts are timed at: plan_search.precision, else the runs' "
                                  "(methods.md#precision)")] = "bf16"
    peaks_per_device: Annotated[dict[str, float], Key("each precision's dense peak per device the hardware gives",
                                                      item="FLOP/s")] = field(default_factory=dict)


@dataclass(frozen=True)
class HardwareFlops:
    none: Annotated[float, Key("without recomputation")]
    selective: Annotated[float, Key("selective recomputation (Korthikanti eq. (8))")]
    full: Annotated[float, Key("full recomputation: one more forward of every layer")]


@dataclass(frozen=True)
class SearchFlops:
    model_per_token: Annotated[float, Key("F_model = 6·P + 12·L·(a·d_h)·s FLOP a token (PaLM App. B)")]
    model_per_token_6p: Annotated[float, Key("6·P FLOP a token: the count without attention")]
    attention_included: Annotated[bool, Key("the shape's heads are known, so attention is counted")]
    hardware_per_token: Annotated[HardwareFlops, Key("F_hw, per recomputation policy")]
    hardware_given_per_token: Annotated[float | None, Key(
        "baseline.model.hardware_flops_per_token, else the median of the runs' counted flops / tokens: HFU reads "
        "it")]
    linear_per_token: Annotated[float | None, Key(
        "F_lin: the layers' weight GEMMs a token, at the declared recomputation (what FP8 speeds up)")] = None
    attention_sequence: Annotated[float | None, Key("s_eff: the keys a query attends to, averaged over the layers "
                                                    "(s without a sliding window)")] = None


@dataclass(frozen=True)
class ModeRow:
    mode: Annotated[ModeName, Key("none, seq, sel, seqsel, full or seqfull (Calculon's validation modes)")]
    recompute: Annotated[RecomputePolicy, Key("the recomputation policy")]
    sequence_parallel: Annotated[bool, Key("sequence parallelism on")]
    per_layer_b: Annotated[float, Key("one layer's activations per device (Korthikanti Table 2), after the context "
                                      "split")]
    layers_b: Annotated[float, Key("the most loaded stage's layers: per layer × L_j × the micro-batches it holds "
                                   "(the first stage's ⌈L/p⌉ × held_0 without a whole d)")]
    extra_b: Annotated[float, Key("that stage's embedding mask (first stage), output layer and loss (last stage)")]
    activations_b: Annotated[float, Key("the activations per device, × κ when a measured value calibrates them")]
    relative_to_none: Annotated[float, Key("per_layer_b over the `none` mode's (Korthikanti Figure 7)")]
    memory_per_device_b: Annotated[float | None, Key("memory per device in this mode: the most loaded stage's "
                                                     "states, activations, other and runtime (null without d)")]
    fits: Annotated[bool | None, Key("within one device's usable memory (null without its size)")]
    step_s: Annotated[float | None, Key("the step in this mode (null without the step's inputs)")] = None
    faster_by: Annotated[float | None, Key("the declared step over this mode's − 1: how much faster this mode "
                                           "is")] = None


@dataclass(frozen=True)
class StepBreakdown:
    compute_s: Annotated[float, Key("B·s·F_model / (N·π_dev·η)")]
    recompute_s: Annotated[float, Key("B·s·(F_hw − F_model) / (N·π_dev·η)")]
    bubble_s: Annotated[float, Key("(p·τ̄ − τ★)/v: the fill and drain (equal stages: (compute + recompute) × "
                                   "(p − 1)/(v·m))")]
    imbalance_s: Annotated[float, Key("m·(τ★ − τ̄): the slowest stage paces every micro-batch")]
    tensor_s: Annotated[float, Key("the tensor-parallel all-reduces")]
    pipeline_s: Annotated[float, Key("the pipeline sends")]
    data_s: Annotated[float, Key("the data-parallel collective, less the overlap")]
    context_s: Annotated[float, Key("context parallelism's key/value exchange not hidden behind attention")] = 0.0
    expert_s: Annotated[float, Key("the experts' token all-to-all")] = 0.0

    @derived(Key("the step"))
    def total_s(self) -> float:
        return (self.compute_s + self.recompute_s + self.bubble_s + self.imbalance_s + self.tensor_s + self.pipeline_s
                + self.data_s + self.context_s + self.expert_s)


@dataclass(frozen=True)
class LayoutMemory:
    """A searched layout and its memory per device: what every layout has, stepped or not
    (methods.md#a-search-with-nothing-to-rank)."""

    tensor: Annotated[int, Key("t")]
    pipeline: Annotated[int, Key("p")]
    data: Annotated[int, Key("d")]
    virtual_stages: Annotated[int, Key("v")]
    micro_batches: Annotated[int, Key("m")]
    micro_batch: Annotated[int, Key("b")]
    zero_stage: Annotated[int, Key("z")]
    recompute: Annotated[RecomputePolicy, Key("the recomputation policy")]
    sequence_parallel: Annotated[bool, Key("sequence parallelism")]
    nodes: Annotated[float, Key("devices / g")]
    states_b: Annotated[float, Key("model states per device on the most loaded stage")]
    activations_b: Annotated[float, Key("activations per device on the most loaded stage")]
    memory_per_device_b: Annotated[float, Key("the most loaded stage's states + activations + other + runtime")]
    runtime_b: Annotated[float, Key("the bytes the run holds beside its tensors there: context, communicators, "
                                    "working sets, fragmentation")]
    most_loaded_stage: Annotated[int, Key("j of the most loaded pipeline stage (the lowest on ties)")]
    layers_per_stage: Annotated[tuple[int, ...], Key("each pipeline stage's layers, first first",
                                                     item="a stage's layers")]
    _: KW_ONLY
    context_parallel: Annotated[int, Key("cp: the context-parallel degree")] = 1
    expert_parallel: Annotated[int, Key("e: the expert-parallel degree")] = 1

    @derived(Key("t × p × d"))
    def layout(self) -> str:
        return f"{self.tensor} × {self.pipeline} × {self.data}"


@dataclass(frozen=True)
class NoFit:
    layout: Annotated[str, Key("the layout of least memory, t × p × d")]
    memory_per_device_b: Annotated[float, Key("its memory per device")]
    excess_b: Annotated[float, Key("its memory over the usable memory, device × (1 − headroom): positive")]


@dataclass(frozen=True)
class RankedLayout(LayoutMemory):
    rank: Annotated[int, Key("1 for the fastest")]
    step: Annotated[StepBreakdown, Key("the step by term")]
    time_per_run_s: Annotated[float | None, Key("step × T/(B·s) (null without the tokens per run)")]
    cost_per_run: Annotated[float | None, money("on demand (null without a price or T)")]
    loses_by: Annotated[float, Key("its step over the first's − 1")]
    why: Annotated[Term | None, Key("the step term that grew most against the first (null: tied with #1)")]
    why_text: Annotated[str | None, Key("why it loses, in one sentence with the numbers")] = None
    slowest_stage: Annotated[int, Key("★: the pipeline stage whose work paces the micro-batches (the lowest j on "
                                      "ties)")] = 0
    micro_batch_efficiency: Annotated[float, Key("ρ: its micro-batch's efficiency against the declared layout's "
                                                 "(its compute phases divide by it)")] = 1.0
    # filled in as results.json is written (methods.md#how-accurate-each-prediction-is)
    calibration: Annotated[Calibration | None, Key("its step's accuracy on published curves (layout-step) at the "
                                                   "ranked scale over the largest measured one; MFU, HFU and the "
                                                   "time per run are 1/step and share it")] = None

    @derived(Key("the step"))
    def step_s(self) -> float:
        return self.step.total_s


@dataclass(frozen=True)
class ShapeBest:
    virtual_stages: Annotated[int, Key("v")]
    zero_stage: Annotated[int, Key("z")]
    recompute: Annotated[RecomputePolicy, Key("the recomputation policy")]
    sequence_parallel: Annotated[bool, Key("sequence parallelism")]
    step_s: Annotated[float, Key("its step")]
    gap: Annotated[float, Key("its step over the best's − 1")]
    rank: Annotated[int, Key("its rank among the fitting layouts")]


@dataclass(frozen=True)
class Cheapest(RankedLayout):
    """The fastest fitting layout of one scale, priced in one regime: its time and cost per run are the regime's."""

    regime: Annotated[RegimeName | None, Key("the price regime")] = None
    viable: Annotated[bool, Key("the regime can be used there (owned: above its utilization)")] = True

    @classmethod
    def of(cls, row: RankedLayout, *, regime: RegimeName, time_s: float, cost: float, viable: bool) -> Cheapest:
        values = {name.name: getattr(row, name.name) for name in fields(row)}
        return cls(**{**values, "time_per_run_s": time_s, "cost_per_run": cost}, regime=regime, viable=viable)


@dataclass(frozen=True)
class CheapestByRegime:
    on_demand: Annotated[Cheapest | None, Key("on demand")] = None
    spot: Annotated[Cheapest | None, Key("on spot (its first-order preemption time added)")] = None
    local: Annotated[Cheapest | None, Key("on owned nodes, where viable")] = None

    def items(self) -> list[tuple[RegimeName, Cheapest]]:
        found: list[tuple[RegimeName, Cheapest | None]] = [("on_demand", self.on_demand), ("spot", self.spot),
                                                           ("local", self.local)]
        return [(name, value) for name, value in found if value is not None]


@dataclass(frozen=True)
class DeclaredStage:
    stage: Annotated[int, Key("j: 0 is the first pipeline stage")]
    layers: Annotated[int, Key("L_j: the layers it holds")]
    in_flight: Annotated[float, Key("held_j: the micro-batches' activations it holds at the peak")]
    states_b: Annotated[float, Key("its model states per device")]
    activations_b: Annotated[float, Key("its activations per device")]
    runtime_b: Annotated[float, Key("its runtime memory per device")]
    memory_per_device_b: Annotated[float, Key("its memory per device")]
    work_per_token: Annotated[float | None, Key("W_j: its FLOPs a token (null without the step's inputs)")] = None
    time_per_micro_batch_s: Annotated[float | None, Key("τ_j: its time for one micro-batch at the calibrated η")] \
        = None


@dataclass(frozen=True)
class RuntimeParts:
    """The most loaded stage's runtime memory, term by term (methods.md#runtime-memory)."""

    context_b: Annotated[float, Key("the CUDA context and workspaces")]
    communicators: Annotated[int, Key("n_g: the communicators the device belongs to")]
    per_group_b: Annotated[float, Key("one communicator's buffers")]
    all_to_all_b: Annotated[float, Key("the all-to-all's buffers (a mixture of experts with e > 1; else 0)")]
    working_b: Annotated[float, Key("the working sets: the recomputed layer's intermediates, the 16-bit logits")]
    fragmentation_b: Annotated[float, Key("what the allocator cannot reuse: φ/(1 − φ) of the tensors and working sets")]

    @derived(Key("their sum: the runtime per device"))
    def total_b(self) -> float:
        return (self.context_b + self.communicators * self.per_group_b + self.all_to_all_b + self.working_b
                + self.fragmentation_b)


@dataclass(frozen=True)
class RuntimeMemoryUsed:
    context_b: Annotated[float, Key("C_ctx per device")]
    per_group_b: Annotated[float, Key("C_grp per communicator")]
    all_to_all_b: Annotated[float, Key("C_a2a with expert parallelism")]
    fragmentation: Annotated[float, Key("φ")]
    headroom: Annotated[float, Key("plan_search.memory_headroom: the share of a device kept free beyond it")]
    source: Annotated[str, Key("default (published figures), given (hardware.runtime_memory) or none (without a "
                               "complete shape)")]


@dataclass(frozen=True)
class DeclaredLayout:
    tensor: Annotated[int, Key("t")]
    pipeline: Annotated[int, Key("p")]
    data: Annotated[int | None, Key("d (declared, or the devices the plan leaves)")]
    virtual_stages: Annotated[int, Key("v")]
    micro_batches: Annotated[int, Key("m: micro-batches per step per pipeline")]
    micro_batch: Annotated[int, Key("b")]
    zero_stage: Annotated[int, Key("z")]
    recompute: Annotated[RecomputePolicy, Key("the declared recomputation")]
    sequence_parallel: Annotated[bool, Key("the declared sequence parallelism")]
    nodes: Annotated[float | None, Key("devices / g")]
    interleave_factor: Annotated[float, Key("1 + (p − 1)/(p·v)")]
    in_flight: Annotated[float, Key("micro-batches' activations the first stage holds")]
    bubble_fraction: Annotated[float, Key("(p − 1)/(v·m)")]
    states_b: Annotated[float | None, Key("weights, gradients and optimizer state on the most loaded stage, per "
                                          "device, at the ZeRO stage")]
    activations_b: Annotated[float, Key("the activations per device at the declared layout")]
    activations_source: Annotated[str, Key("model, or given (a measured baseline.memory.activations)")]
    memory_per_device_b: Annotated[float | None, Key("states + activations + other")]
    fits: Annotated[bool | None, Key("within one device's memory")]
    modes: Annotated[tuple[ModeRow, ...], Key("the six activation modes at the declared t, p, d, v, m and ZeRO "
                                              "stage (three when t = 1)")]
    step: Annotated[StepBreakdown | None, Key("the declared layout's step by term (null without its inputs)")] = None
    time_per_run_s: Annotated[float | None, Key("step × T/(B·s)")] = None
    cost_per_run: Annotated[float | None, money("on demand: nodes × price × time")] = None
    rank: Annotated[int | None, Key("1 + the fitting layouts searched that are strictly faster (null when the "
                                    "declared layout does not fit)")] = None
    gap: Annotated[float | None, Key("its step over the best's − 1")] = None
    within_margin: Annotated[bool | None, Key("gap ≤ plan_search.margin: as good as the best")] = None
    runtime_b: Annotated[float | None, Key("the bytes the run holds beside its tensors on the most loaded stage")] \
        = None
    most_loaded_stage: Annotated[int | None, Key("j of the most loaded pipeline stage (the lowest on ties)")] = None
    layers_per_stage: Annotated[tuple[int, ...], Key("each pipeline stage's layers, first first",
                                                     item="a stage's layers")] = ()
    context_parallel: Annotated[int, Key("cp: the context-parallel degree")] = 1
    expert_parallel: Annotated[int, Key("e: the expert-parallel degree")] = 1
    stages: Annotated[tuple[DeclaredStage, ...], Key("every pipeline stage's layers, memory and time")] = ()
    runtime_parts: Annotated[RuntimeParts | None, Key("the most loaded stage's runtime memory by term")] = None
    slowest_stage: Annotated[int | None, Key("★: the stage whose work paces the micro-batches (lowest j on ties)")] \
        = None

    @derived(Key("the layout as t × p × d"))
    def layout(self) -> str:
        return f"{self.tensor} × {self.pipeline} × {self.data if self.data is not None else '?'}"

    @derived(Key("t · p · cp · d"))
    def devices(self) -> int | None:
        return self.tensor * self.pipeline * self.context_parallel * self.data if self.data is not None else None


@dataclass(frozen=True)
class PlanSearchResult:
    missing: Annotated[tuple[str, ...], Key("the fields whose absence left parts of the search out",
                                            item="a field path")]
    inputs: Annotated[SearchInputs, Key("what the search reads")]
    flops: Annotated[SearchFlops, Key("FLOPs per token")]
    activation_calibration: Annotated[float | None, Key(
        "κ: the given activations over the modelled ones at the declared layout (null without a measured value)")]
    declared: Annotated[DeclaredLayout | None, Key("the declared layout's memory from the shape (null without "
                                                   "design.parallelism)")]
    efficiency: Annotated[Efficiency | None, Key("η, the share of the peak the compute phases reach, and where it "
                                                 "comes from (null without the step's inputs)")] = None
    nodes: Annotated[int | None, Key("the scale ranked: design.nodes, else the largest measured")] = None
    enumerated: Annotated[int | None, Key("layouts of that scale's devices, those left past the cap included")] = None
    fitting: Annotated[int | None, Key("the layouts whose memory fits one device (no bandwidth needed)")] = None
    stepped: Annotated[int | None, Key("the fitting layouts that could be timed: the step's inputs are given")] = None
    capped: Annotated[bool, Key("more layouts than plan_search.max_layouts: the rest were not evaluated")] = False
    best: Annotated[tuple[RankedLayout, ...], Key("the K fastest fitting layouts, the best first")] = ()
    declared_shape_best: Annotated[ShapeBest | None, Key(
        "the fastest layout with the declared t, p and d, the other knobs free")] = None
    cheapest: Annotated[CheapestByRegime | None, Key(
        "the (scale, layout) of least cost per run in each price regime the project states (null without prices or "
        "tokens per run)")] = None
    runtime_memory: Annotated[RuntimeMemoryUsed | None, Key("the runtime memory's terms every layout's memory "
                                                            "counts")] = None
    micro_batch_efficiency: Annotated[MicroBatchEfficiency | None, Key(
        "x₀, where it comes from, the declared layout's GEMM size and each calibration run's (null without the "
        "step's inputs)")] = None
    fitting_by_memory: Annotated[tuple[LayoutMemory, ...], Key(
        "with none timed: the K fitting layouts of least memory, least first (empty when any is timed)")] = ()
    sentence: Annotated[str | None, Key("the page-1 sentence")] = None
    left_out: int = 0  # layouts past the cap
    lacks: tuple[tuple[str, int], ...] = ()  # (input, layouts not evaluated for want of it)
    least_memory: tuple[LayoutMemory, float] | None = None  # none fits: the layout of least memory, its excess
    emptied_by: str | None = None  # none enumerated: the rule after which no candidate was left

    @derived(Key("when no enumerated layout fits by memory: the one of least memory and its excess (else null)"))
    def no_fit(self) -> NoFit | None:
        if self.least_memory is None:
            return None
        least, excess = self.least_memory
        return NoFit(least.layout, least.memory_per_device_b, excess)

    @property
    def kappa_departs(self) -> bool:
        kappa = self.activation_calibration
        return kappa is not None and not KAPPA_RANGE[0] <= kappa <= KAPPA_RANGE[1]


def missing_shape(project: Project) -> tuple[str, ...]:
    """The fields of a complete shape the project does not give."""
    model = project.baseline.model if project.baseline else None
    if model is None:
        return tuple(f"baseline.model.{name}" for name in SHAPE_FIELDS)
    return tuple(f"baseline.model.{name}" for name in SHAPE_FIELDS if getattr(model, name, None) is None)


def search_plan(project: Project) -> PlanSearchResult | None:
    """The search's inputs, FLOPs and declared layout, or None without a complete shape."""
    shape = shape_of(project)
    found = parameters_of(project)
    if shape is None or found is None:
        return None
    parameters, source = found
    model = project.baseline.model if project.baseline else None
    assert model is not None
    hardware = project.hardware
    g = hardware.devices_per_node if hardware else 1
    device = hardware.memory_per_device if hardware else None
    peak = hardware.peak_compute / g if hardware and hardware.peak_compute else None
    layout = project.design.parallelism if project.design else None
    data = project.layout_data_degree
    global_batch = model.global_batch
    if global_batch is None and layout is not None and data is not None:
        global_batch = model.micro_batch * data * layout.micro_batches
    missing = [*(["hardware.device_memory"] if device is None else []),
               *(["hardware.peak_compute"] if peak is None else []),
               *(["design.parallelism"] if layout is None else []),
               *(["baseline.model.global_batch"] if global_batch is None else [])]
    counts = model_flops(project)
    flops = token_flops(parameters, shape)
    given = counts.hardware_per_token if counts is not None and counts.hardware_source != "model" else None
    declared, kappa = _declared(project, parameters, data) if layout is not None else (None, None)
    return PlanSearchResult(
        missing=tuple(missing),
        inputs=SearchInputs(parameters, source, shape.layers, shape.hidden, shape.heads, shape.head_dim,
                            shape.sequence, shape.vocabulary, shape.micro_batch, global_batch,
                            _tokens_per_run(project), g, device, peak, shape.flash, plan_precision(project),
                            {str(k): v for k, v in peaks_per_device(hardware).items()} if hardware else {}),
        flops=SearchFlops(flops.model, flops.six_p, flops.attention_included,
                          HardwareFlops(flops.hardware["none"], flops.hardware["selective"], flops.hardware["full"]),
                          given, flops.linear[layout.recompute if layout else "none"], attention_sequence(shape)),
        activation_calibration=kappa, declared=declared, runtime_memory=runtime_used(project))


def _tokens_per_run(project: Project) -> float | None:
    """T: baseline.training.tokens, else scaling.work_per_run counted in tokens."""
    training = project.baseline.training if project.baseline else None
    return training.tokens if training else default_tokens(project)


def _declared(project: Project, parameters: float, data: int | None) -> tuple[DeclaredLayout, float | None]:
    shape = shape_of(project)
    layout = project.design.parallelism if project.design else None
    assert shape is not None and layout is not None
    memory = project.baseline.memory if project.baseline else None
    given = memory.activations if memory else None
    kappa = activation_calibration(project, parameters, data) if data is not None else None
    usable = usable_memory(project)

    def of(recompute: RecomputePolicy, sequence_parallel: bool) -> Activations:
        return activations(shape, tensor=layout.tensor, pipeline=layout.pipeline, micro_batches=layout.micro_batches,
                           virtual_stages=layout.virtual_stages, recompute=recompute,
                           sequence_parallel=sequence_parallel)

    def fits(total: float | None) -> bool | None:
        return None if usable is None or total is None else fits_usable(total, usable)

    def stage(recompute: RecomputePolicy | None = None, sequence_parallel: bool | None = None) -> StageColumns | None:
        if data is None:
            return None
        return declared_memory(project, parameters, data, kappa=kappa or 1.0, recompute=recompute,
                               sequence_parallel=sequence_parallel)

    declared = of(layout.recompute, layout.sequence_parallel)
    none = of("none", False)
    none_at = stage("none", False)
    rows = []
    for name, recompute, sequence_parallel in MODES:
        if sequence_parallel and layout.tensor == 1:
            continue  # without tensor parallelism sequence parallelism changes nothing
        at = stage(recompute=recompute, sequence_parallel=sequence_parallel)
        if at is None:  # no whole d: the first stage's activations alone, by Korthikanti's model
            mode = of(recompute, sequence_parallel)
            rows.append(ModeRow(name, recompute, sequence_parallel, mode.per_layer_b, mode.layers_b, mode.extra_b,
                                mode.total_b * (kappa or 1.0), mode.per_layer_b / none.per_layer_b, None, None))
            continue
        # the most loaded stage's parts, from the one memory function that sums them (activations_b = κ·(layers +
        # extra)), so that no figure of the row is another model's
        per_layer, layers_b = float(at.per_layer_b[0]), float(at.per_layer_b[0] * at.layers[0] * at.in_flight[0])
        memory_b = float(at.memory_b[0])
        rows.append(ModeRow(name, recompute, sequence_parallel, per_layer, layers_b, float(at.extra_b[0]),
                            float(at.activations_b[0]), per_layer / float(none_at.per_layer_b[0]) if none_at else 1.0,
                            memory_b, fits(memory_b)))
    most = stage()
    every = declared_stages(project, parameters, data, kappa=kappa or 1.0) if data is not None else None
    stages = () if every is None else tuple(
        DeclaredStage(int(every.stage[j]), int(every.layers[j]), float(every.in_flight[j]), float(every.states_b[j]),
                      float(every.activations_b[j]), float(every.runtime_b[j]), float(every.memory_b[j]))
        for j in range(len(every.stage)))
    g = project.hardware.devices_per_node if project.hardware else 1
    devices = layout.model_parallel * data if data is not None else None
    total = float(most.memory_b[0]) if most is not None else None
    return DeclaredLayout(
        layout.tensor, layout.pipeline, data, layout.virtual_stages, layout.micro_batches, shape.micro_batch,
        layout.zero_stage, layout.recompute, layout.sequence_parallel,
        devices / g if devices is not None else None, interleave_factor(layout.pipeline, layout.virtual_stages),
        first_stage_held(layout), (layout.pipeline - 1) / (layout.virtual_stages * layout.micro_batches),
        float(most.states_b[0]) if most is not None else None,
        float(most.activations_b[0]) if most is not None else declared.total_b * (kappa or 1.0),
        "given" if given is not None else "model", total, fits(total), tuple(rows),
        runtime_b=float(most.runtime_b[0]) if most is not None else None,
        most_loaded_stage=int(most.stage[0]) if most is not None else None,
        layers_per_stage=declared_split(project) or stage_split(shape.layers, layout.pipeline),
        context_parallel=layout.context, expert_parallel=layout.expert, stages=stages,
        runtime_parts=_runtime_parts(project, most)), kappa


def _runtime_parts(project: Project, most: StageColumns | None) -> RuntimeParts | None:
    """The most loaded stage's runtime by term; the fragmentation is what is left of it."""
    runtime = runtime_of(project, shape_of(project))
    if most is None or not runtime.counted:
        return None
    groups = int(most.groups[0])
    all_to_all = runtime.all_to_all_b if int(project.design.parallelism.expert if project.design and
                                             project.design.parallelism else 1) > 1 else 0.0
    working = float(most.working_b[0])
    fragmentation = float(most.runtime_b[0]) - runtime.context_b - groups * runtime.per_group_b - all_to_all - working
    return RuntimeParts(runtime.context_b, groups, runtime.per_group_b, all_to_all, working, fragmentation)


def runtime_used(project: Project) -> RuntimeMemoryUsed:
    """The runtime memory's terms every layout counts (methods.md#runtime-memory)."""
    runtime = runtime_of(project, shape_of(project))
    headroom = project.plan_search.memory_headroom if project.plan_search else 0.0
    return RuntimeMemoryUsed(runtime.context_b, runtime.per_group_b, runtime.all_to_all_b, runtime.fragmentation,
                             headroom, runtime.source)
