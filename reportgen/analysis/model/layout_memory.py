"""Memory per device of any layout: the one function the declared layout, its ZeRO stages, its activation modes and
every searched layout read (methods.md#memory-per-device-one-function).

Per pipeline stage j (methods.md#uneven-pipeline-stages): the stage's share of the model states, with the embedding
on the first stage and the output layer on the last; the activations of the micro-batches it holds; and the runtime
bytes a run holds beside its tensors (methods.md#runtime-memory). The most loaded stage is the device's memory.
Evaluated with numpy over many layouts at once: a one-layout call runs the same code, so that the declared layout's
figure and the search's row for the same layout are the same float.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, overload

import numpy as np

from reportgen.analysis.model.columns import LAYOUT_FIELDS, Layouts, each_distinct
from reportgen.analysis.model.model_shape import shape_of
from reportgen.analysis.model.transformer import RECOMPUTE_POLICIES, RecomputePolicy, Shape, activations_per_layer
from reportgen.project.model import Parallelism, Project

RuntimeSource = Literal["default", "given", "none"]


@dataclass(frozen=True)
class RuntimeMemory:
    """The bytes a device holds beside its tensors: the CUDA context and library workspaces, each communicator's
    buffers, the all-to-all's (mixture of experts), and the share the caching allocator cannot reuse."""

    context_b: float
    per_group_b: float
    all_to_all_b: float
    fragmentation: float
    source: RuntimeSource

    @property
    def counted(self) -> bool:
        """Whether any runtime is counted: none without it, or with every term given as zero (the tensors alone,
        as the papers' memory tables count them); the working sets go with it."""
        return any((self.context_b, self.per_group_b, self.all_to_all_b, self.fragmentation))


# pytorch/pytorch#107667 and #120925 (context and workspaces); NVIDIA/nccl#964 (688 MB per communicator of more than
# two A100); NVIDIA/nccl#1685 (1.06 → 4.34 GB after the first all-to-all on 8 × H100); GMLake (Guo et al. 2024):
# 15 % fragmentation on average over eight LLMs
DEFAULT_RUNTIME = RuntimeMemory(1e9, 0.7e9, 3.3e9, 0.15, "default")
NO_RUNTIME = RuntimeMemory(0.0, 0.0, 0.0, 0.0, "none")


def stage_split(layers: int, pipeline: int, given: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The layers of each pipeline stage, first first (methods.md#uneven-pipeline-stages): as given; L/p each when p
    divides L; else Megatron's first/last rule, c = ⌈L/p⌉ in the middle stages and the rest r = L − (p − 2)·c split
    between the two end stages (⌈r/2⌉ first), when r ≥ 2; else DeepSpeed's partition_uniform (the first L mod p
    stages hold ⌈L/p⌉)."""
    if given is not None:
        return given
    if layers % pipeline == 0:
        return (layers // pipeline,) * pipeline
    middle = -(-layers // pipeline)
    rest = layers - (pipeline - 2) * middle
    if rest >= 2:
        return (-(-rest // 2), *((middle,) * (pipeline - 2)), rest // 2)
    fuller = layers % pipeline
    return (middle,) * fuller + (layers // pipeline,) * (pipeline - fuller)


def splits_by_rule(layers: int, pipeline: int) -> bool:
    """p divides L, or Megatron's first/last rule applies (r ≥ 2): the searched pipelines."""
    return layers % pipeline == 0 or layers - (pipeline - 2) * -(-layers // pipeline) >= 2


def held(stage: np.ndarray, pipeline: np.ndarray, micro_batches: np.ndarray, virtual: np.ndarray) -> np.ndarray:
    """Micro-batches' worth of activations stage j holds at the peak: 1 without a pipeline; min(m, p − j) under 1F1B
    (p − j − 1 warm-up forwards, then one at a time); min(m·v, 2(p − j − 1) + (v − 1)·p + 1)/v interleaved
    (Megatron's get_pp_rank_microbatches caps the warm-up at m·v)."""
    j, p, m, v = (np.asarray(x, dtype=float) for x in (stage, pipeline, micro_batches, virtual))
    interleaved = np.minimum(m * v, 2 * (p - j - 1) + (v - 1) * p + 1) / v
    return np.where(p == 1, 1.0, np.where(v > 1, interleaved, np.minimum(m, p - j)))


def first_stage_held(layout: Parallelism) -> float:
    """held_0 of a declared layout: the micro-batches' activations its first stage holds."""
    return float(held(np.zeros(1), np.array([layout.pipeline]), np.array([layout.micro_batches]),
                      np.array([layout.virtual_stages]))[0])


@dataclass(frozen=True)
class MemoryInputs:
    """What memory per device reads from the project. Without a complete shape (`shape` None) the states are the
    ZeRO paper's (Ψ = (P − E)/(t·p), no embedding apart) and the activations are `given_activations_b`."""

    parameters: float  # P_mem: every parameter stored, the experts' included
    expert_parameters: float  # E: the parameters that live in experts (0 without)
    weights_b: float  # w, g and K: bytes per parameter
    gradients_b: float
    optimizer_b: float
    other_b: float  # baseline.memory.other: resident, not sharded
    shape: Shape | None
    given_activations_b: float | None  # without a shape: the activations per device as given
    kappa: float  # the activation model's calibration (1 without a measured value)
    runtime: RuntimeMemory
    tied_embeddings: bool = True
    dropout: bool = True


@dataclass(frozen=True)
class StageColumns:
    """Each layout's bytes per device on one of its stages (or on its most loaded one)."""

    stage: np.ndarray  # j
    layers: np.ndarray  # L_j
    in_flight: np.ndarray  # held_j
    weights_b: np.ndarray
    gradients_b: np.ndarray
    optimizer_b: np.ndarray
    activations_b: np.ndarray  # A_j (κ applied), with other resident memory apart
    runtime_b: np.ndarray  # memory − (states + activations + other)
    memory_b: np.ndarray
    dense_parameters: np.ndarray  # Ψ_dense,j: the stage's dense parameters per device, before any ZeRO sharding
    expert_parameters: np.ndarray  # Ψ_exp,j: its experts' parameters per device, likewise
    working_b: np.ndarray  # W_j: the recomputed layer's intermediates and the 16-bit logits (runtime only)
    groups: np.ndarray  # n_g: the communicators the device belongs to
    # the activations' parts, per device after the context split and before κ: A_j = κ·(per layer·L_j·held_j + extra)
    per_layer_b: np.ndarray  # one layer's (Korthikanti Table 2)
    extra_b: np.ndarray  # the embedding's mask on the first stage, the output layer and the loss on the last

    @property
    def states_b(self) -> np.ndarray:
        states: np.ndarray = self.weights_b + self.gradients_b + self.optimizer_b
        return states


_STAGE_FIELDS = ("stage", "layers", "in_flight", "weights_b", "gradients_b", "optimizer_b", "activations_b",
                 "runtime_b", "memory_b", "dense_parameters", "expert_parameters", "working_b", "groups",
                 "per_layer_b", "extra_b")


def _per_layer(shape: Shape, layouts: Layouts, policy: np.ndarray) -> np.ndarray:
    """One layer's activations per device for every layout (Korthikanti Table 2), before the context split: one
    evaluation per distinct (t, sp, policy, b)."""

    def one(t: int, sp: int, code: int, b: int) -> float:
        return activations_per_layer(replace(shape, micro_batch=b), t, bool(sp), RECOMPUTE_POLICIES[code])

    return each_distinct(one, layouts.tensor, layouts.sequence_parallel, policy, layouts.micro_batch)


def stage_memory(inputs: MemoryInputs, layouts: Layouts, stage: np.ndarray,
                 layers: np.ndarray) -> StageColumns:
    """Bytes per device on stage j (an array, one per layout) holding L_j layers."""
    t, p, d, cp, e, z = (np.asarray(x, dtype=float) for x in (layouts.tensor, layouts.pipeline, layouts.data,
                                                             layouts.context, layouts.expert, layouts.zero))
    j = np.asarray(stage, dtype=float)
    first, last = j == 0, j == p - 1
    shape = inputs.shape
    experts = inputs.expert_parameters
    untied = not inputs.tied_embeddings
    if shape is None:  # the ZeRO paper's states: equal stages, the embedding not apart
        share = 1.0 / p
        embedding = 0.0
        total_layers = 1.0
    else:
        total_layers = float(shape.layers)
        share = np.asarray(layers, dtype=float) / total_layers
        embedding = float(shape.vocabulary) * shape.hidden
    body = inputs.parameters - experts - embedding * (1.0 + untied)
    dense = (body * share + np.where(first, embedding, 0.0)
             + np.where(last & ((p > 1) | untied), embedding, 0.0)) / t
    expert = experts * share / e
    replicas_dense = d * cp
    replicas_expert = np.maximum(d * cp / e, 1.0)

    def state(bytes_each: float, sharded: np.ndarray) -> np.ndarray:
        result: np.ndarray = bytes_each * (dense / np.where(sharded, replicas_dense, 1.0)
                                           + expert / np.where(sharded, replicas_expert, 1.0))
        return result

    weights = state(inputs.weights_b, z >= 3)
    gradients = state(inputs.gradients_b, z >= 2)
    optimizer = state(inputs.optimizer_b, z >= 1)
    in_flight = held(j, p, layouts.micro_batches, layouts.virtual)
    working = np.zeros(len(t))  # the working sets: part of the runtime, absent where no runtime is counted
    if shape is None:
        activations = np.full(len(t), inputs.given_activations_b or 0.0)
        per_layer_b, extra_b = np.zeros(len(t)), activations
    else:
        b = np.asarray(layouts.micro_batch, dtype=float)
        sbh = float(shape.sequence) * b * shape.hidden
        t_sp = np.where(layouts.sequence_parallel == 1, t, 1.0)
        per_layer = _per_layer(shape, layouts, layouts.recompute)
        logits = float(shape.sequence) * b * shape.vocabulary
        mask = np.where(first, sbh / t_sp * in_flight, 0.0) if inputs.dropout else 0.0
        output = np.where(last, 4.0 * sbh / t_sp + 4.0 * logits / t, 0.0)
        per_layer_b, extra_b = per_layer / cp, (mask + output) / cp
        activations = inputs.kappa * (per_layer_b * layers * in_flight + extra_b)
        # the recomputed layer's intermediates of one micro-batch, and the 16-bit logits beside the fp32 ones
        if inputs.runtime.counted:
            without = _per_layer(shape, layouts, np.zeros(len(t), dtype=np.int64))
            working = (np.where(layouts.recompute > 0, without - per_layer, 0.0)
                       + np.where(last, 2.0 * logits / t, 0.0)) / cp
    tensors = weights + gradients + optimizer + activations + inputs.other_b
    runtime = inputs.runtime
    # communicators: tensor, context, pipeline, data (with context) and the embedding's (a tied pipeline)
    embedding_group = (p > 1) & (inputs.tied_embeddings and shape is not None)
    groups = (t > 1).astype(float) + (cp > 1) + (p > 1) + (d * cp > 1) + embedding_group
    memory = ((tensors + working) / (1.0 - runtime.fragmentation) + runtime.context_b
              + groups * runtime.per_group_b + np.where(e > 1, runtime.all_to_all_b, 0.0))
    return StageColumns(np.asarray(stage, dtype=np.int64), np.asarray(layers, dtype=np.int64), in_flight, weights,
                        gradients, optimizer, activations, memory - tensors, memory, dense, expert, working,
                        groups + np.zeros(len(t)), per_layer_b + np.zeros(len(t)), extra_b + np.zeros(len(t)))


def candidate_stages(shape: Shape | None, pipeline: np.ndarray,
                     split: tuple[int, ...] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """(j, L_j) for the stages that can bind (the most loaded, or the slowest): under the split rule 0, 1 and p − 1
    (the middle stages hold equal layers, and hold fewer micro-batches the later they come); with a declared `split`
    (one layout), every stage. Without a shape, one stage stands for all (the states are L/p's, the activations as
    given)."""
    p = np.asarray(pipeline, dtype=np.int64)
    if shape is None:
        return [(np.zeros(len(p), dtype=np.int64), np.ones(len(p), dtype=np.int64))]
    if split is not None:
        return [(np.full(len(p), j, dtype=np.int64), np.full(len(p), layers, dtype=np.int64))
                for j, layers in enumerate(split)]
    return [(stage, each_distinct(lambda q, j: stage_split(shape.layers, int(q))[int(j)], p, stage).astype(np.int64))
            for stage in (np.zeros(len(p), dtype=np.int64), np.minimum(1, p - 1), p - 1)]


def most_loaded(inputs: MemoryInputs, layouts: Layouts, split: tuple[int, ...] | None = None) -> StageColumns:
    """Each layout's most loaded stage (the lowest j on ties) and its bytes per device: memory_per_device. `split`:
    one layout's declared layers per stage, every stage then evaluated."""
    found: StageColumns | None = None
    for stage, layers in candidate_stages(inputs.shape, layouts.pipeline, split):
        here = stage_memory(inputs, layouts, stage, layers)
        if found is None:
            found = here
            continue
        more = here.memory_b > found.memory_b
        found = StageColumns(*(np.where(more, getattr(here, name), getattr(found, name)) for name in _STAGE_FIELDS))
    assert found is not None
    return found


def every_stage(inputs: MemoryInputs, layouts: Layouts, split: tuple[int, ...]) -> StageColumns:
    """One layout's every stage (the declared layout's table): `layouts` holds one layout, `split` its layers."""
    stages = np.arange(len(split), dtype=np.int64)
    repeated = Layouts.of([np.repeat(getattr(layouts, name), len(split)) for name in LAYOUT_FIELDS])
    return stage_memory(inputs, repeated, stages, np.array(split, dtype=np.int64))



def runtime_of(project: Project, shape: Shape | None) -> RuntimeMemory:
    """hardware.runtime_memory when given; else the published defaults with a complete shape; else none (the ZeRO
    paper's check counts the states alone)."""
    given = project.hardware.runtime_memory if project.hardware else None
    if given is not None:
        return RuntimeMemory(given.context, given.per_group, given.all_to_all, given.fragmentation, "given")
    return DEFAULT_RUNTIME if shape is not None else NO_RUNTIME


def memory_inputs(project: Project, parameters: float | None = None, *, kappa: float = 1.0) -> MemoryInputs | None:
    """What memory per device reads, from the project: baseline.memory's parameters and bytes per parameter (else
    `parameters`, with mixed-precision Adam's 2 + 2 + 12 bytes), the shape when complete; None without parameters."""
    memory = project.baseline.memory if project.baseline else None
    stored = memory.parameters if memory else parameters
    if stored is None:
        return None
    shape = shape_of(project)
    split = memory.per_parameter if memory else None
    weights, gradients, optimizer = (split.weights, split.gradients, split.optimizer) if split else (2.0, 2.0, 12.0)
    return MemoryInputs(stored, (memory.expert_parameters or 0.0) if memory else 0.0, weights, gradients, optimizer,
                        (memory.other or 0.0) if memory else 0.0, shape,
                        memory.activations if memory else None, kappa, runtime_of(project, shape),
                        tied_embeddings=shape.tied_embeddings if shape else True,
                        dropout=shape.dropout if shape else True)


def declared_split(project: Project) -> tuple[int, ...] | None:
    """design.parallelism.layers_per_stage, when the project gives it."""
    layout = project.design.parallelism if project.design else None
    return layout.layers_per_stage if layout is not None else None


MEMORY_TOLERANCE = 1e-12  # relative: a layout at its usable memory to the last bit of rounding fits


@overload
def fits_usable(memory: float, usable: float) -> bool: ...


@overload
def fits_usable(memory: np.ndarray, usable: float) -> np.ndarray: ...


def fits_usable(memory: float | np.ndarray, usable: float) -> bool | np.ndarray:
    """Whether memory (one figure, or an array of them) fits what a device may hold: one tolerance for every fit."""
    return memory <= usable * (1.0 + MEMORY_TOLERANCE)


def usable_memory(project: Project) -> float | None:
    """What a layout may take of one device: its memory less plan_search.memory_headroom (None without the size).
    Every fit is judged against it: the declared layout, its ZeRO stages and modes, and each searched layout."""
    device = project.hardware.memory_per_device if project.hardware else None
    if device is None:
        return None
    headroom = project.plan_search.memory_headroom if project.plan_search else 0.0
    return device * (1.0 - headroom)


def declared_columns(layout: Parallelism, data: int, micro_batch: int, *, micro_batches: int | None = None,
                     recompute: RecomputePolicy | None = None, sequence_parallel: bool | None = None,
                     zero_stage: int | None = None) -> Layouts:
    """The declared layout as one row of layout columns, with a knob replaced where given (a run's d and m, an
    activation mode, a ZeRO stage)."""
    policy = layout.recompute if recompute is None else recompute
    parallel = layout.sequence_parallel if sequence_parallel is None else sequence_parallel
    return Layouts.one(layout.tensor, layout.pipeline, data, layout.virtual_stages, micro_batch,
                       layout.micro_batches if micro_batches is None else micro_batches,
                       layout.zero_stage if zero_stage is None else zero_stage, RECOMPUTE_POLICIES.index(policy),
                       1 if parallel and layout.tensor > 1 else 0, layout.context, layout.expert)


def declared_memory(project: Project, parameters: float, data: int, *, kappa: float = 1.0,
                    recompute: RecomputePolicy | None = None, sequence_parallel: bool | None = None,
                    zero_stage: int | None = None) -> StageColumns | None:
    """The declared layout's most loaded stage (methods.md#memory-per-device-one-function), or None without the
    layout or the parameters."""
    layout = project.design.parallelism if project.design else None
    inputs = memory_inputs(project, parameters, kappa=kappa)
    if layout is None or inputs is None:
        return None
    micro_batch = project.baseline.model.micro_batch if project.baseline and project.baseline.model else 1
    row = declared_columns(layout, data, micro_batch, recompute=recompute, sequence_parallel=sequence_parallel,
                           zero_stage=zero_stage)
    return most_loaded(inputs, row, declared_split(project))


def activation_calibration(project: Project, parameters: float, data: int) -> float | None:
    """κ: baseline.memory.activations, a measured figure, over the model's activations on the declared layout's
    stage of most activations (null without a measured figure or a complete shape)."""
    layout = project.design.parallelism if project.design else None
    inputs = memory_inputs(project, parameters)
    given = project.baseline.memory.activations if project.baseline and project.baseline.memory else None
    if given is None or layout is None or inputs is None or inputs.shape is None:
        return None
    micro_batch = inputs.shape.micro_batch
    stages = every_stage(inputs, declared_columns(layout, data, micro_batch),
                         declared_split(project) or stage_split(inputs.shape.layers, layout.pipeline))
    modelled = float(np.max(stages.activations_b))
    return given / modelled if modelled > 0 else None


MAX_DATA_SCANNED = 1 << 16  # multiples of e searched for the smallest fitting d: far past any data-parallel group
DATA_SCANNED_WHOLE = 64  # the multiples tried one by one before a bracketing search


def smallest_fitting_data(project: Project, parameters: float, zero_stage: int, *,
                          kappa: float = 1.0) -> int | None:
    """The smallest d (a multiple of e) at which the declared layout fits at a ZeRO stage, with m = B/(b·d) where
    the global batch is known (at least 1), else the declared m; None when none up to MAX_DATA_SCANNED·e does.
    Memory never grows with d (the states shard, fewer micro-batches are held), so past the first multiples a
    bracket of powers of two and a bisection find it."""
    layout = project.design.parallelism if project.design else None
    inputs = memory_inputs(project, parameters, kappa=kappa)
    usable = usable_memory(project)
    if layout is None or inputs is None or usable is None:
        return None
    model = project.baseline.model if project.baseline else None
    micro_batch = model.micro_batch if model else 1
    batch = model.global_batch if model else None
    one = declared_columns(layout, 1, micro_batch, zero_stage=zero_stage)
    split = declared_split(project)

    def fits(multiples: np.ndarray) -> np.ndarray:
        data = layout.expert * multiples
        columns = [np.repeat(getattr(one, name), len(data)) for name in LAYOUT_FIELDS]
        columns[LAYOUT_FIELDS.index("data")] = data
        if batch is not None:
            columns[LAYOUT_FIELDS.index("micro_batches")] = np.maximum(1, batch // (micro_batch * data))
        memory = most_loaded(inputs, Layouts.of(columns), split).memory_b
        found: np.ndarray = fits_usable(memory, usable)
        return found

    first = np.arange(1, DATA_SCANNED_WHOLE + 1, dtype=np.int64)
    fitting = np.flatnonzero(fits(first))
    if len(fitting):
        return int(layout.expert * first[fitting[0]])
    powers = DATA_SCANNED_WHOLE * 2 ** np.arange(1, int(np.log2(MAX_DATA_SCANNED // DATA_SCANNED_WHOLE)) + 1)
    bracket = np.flatnonzero(fits(powers.astype(np.int64)))
    if not len(bracket):
        return None
    low, high = int(powers[bracket[0]] // 2), int(powers[bracket[0]])  # low does not fit, high does
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(np.array([middle]))[0] else (middle, high)
    return layout.expert * high


def declared_stages(project: Project, parameters: float, data: int, *, kappa: float = 1.0) -> StageColumns | None:
    """Every pipeline stage of the declared layout (the report's per-stage table), or None without the layout."""
    layout = project.design.parallelism if project.design else None
    inputs = memory_inputs(project, parameters, kappa=kappa)
    if layout is None or inputs is None or inputs.shape is None:
        return None
    row = declared_columns(layout, data, inputs.shape.micro_batch)
    return every_stage(inputs, row, declared_split(project) or stage_split(inputs.shape.layers, layout.pipeline))
