"""A transformer's activation memory and FLOPs from its shape (methods.md#activation-memory-from-the-models-shape,
methods.md#flops-mfu-and-hfu): the formulas the plan search and the measured utilization share, each a plain
function of numbers so that the published tables can be reproduced one cell at a time.

Activations per layer are Korthikanti et al. 2022's Table 2 (16-bit activations, 1-byte masks); the layers the most
loaded pipeline stage holds follow its §4.2.3 (1F1B, interleaving) and its §4.3 (embedding, output layer and loss);
the model states on that stage follow Megatron-LM's "most loaded shard". FLOPs per token are PaLM's App. B
(6N + 12LHQT), with recomputation's extra forward by Korthikanti's eq. (8) and Narayanan et al. 2021's eq. (3); the
parameters from the shape are Narayanan's eq. (2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RecomputePolicy = Literal["none", "selective", "full"]
ModeName = Literal["none", "seq", "sel", "seqsel", "full", "seqfull"]
RECOMPUTE_POLICIES: tuple[RecomputePolicy, ...] = ("none", "selective", "full")
# Calculon's validation modes (calculon/llm/validation.py): (name, recomputation, sequence parallelism)
MODES: tuple[tuple[ModeName, RecomputePolicy, bool], ...] = (
    ("none", "none", False), ("seq", "none", True), ("sel", "selective", False), ("seqsel", "selective", True),
    ("full", "full", False), ("seqfull", "full", True))


@dataclass(frozen=True)
class Shape:
    """A transformer's shape: L layers of hidden size h with a heads of d_h, sequences of s tokens in micro-batches
    of b, a vocabulary of V; `flash` when the attention kernel never stores the s×s scores."""

    layers: int
    hidden: int
    heads: int
    head_dim: float
    sequence: int
    vocabulary: int
    micro_batch: int
    flash: bool = False

    @property
    def sbh(self) -> float:
        return float(self.sequence) * self.micro_batch * self.hidden


def activations_per_layer(shape: Shape, tensor: int, sequence_parallel: bool, policy: RecomputePolicy) -> float:
    """Bytes of one transformer layer's activations per device (Korthikanti Table 2):

        none:       sbh · (10/t_sp + 24/t + 5·a·s/(h·t))
        selective:  sbh · (10/t_sp + 24/t)
        full:       2·sbh / t_sp

    t_sp = t with sequence parallelism, else 1; a flash-attention kernel drops the 5as/(ht) term under every policy.
    """
    t_sp = tensor if sequence_parallel else 1
    if policy == "full":
        return 2.0 * shape.sbh / t_sp
    stores_scores = policy == "none" and not shape.flash
    scores = 5.0 * shape.heads * shape.sequence / (shape.hidden * tensor) if stores_scores else 0.0
    return shape.sbh * (10.0 / t_sp + 24.0 / tensor + scores)


def in_flight(pipeline: int, micro_batches: int, virtual_stages: int) -> float:
    """The micro-batches' worth of activations the first (most loaded) pipeline stage holds: one without a pipeline,
    min(m, p) under 1F1B, p·(1 + (p − 1)/(p·v)) interleaved (Korthikanti §4.2.3)."""
    if pipeline == 1:
        return 1.0
    if virtual_stages > 1:
        return pipeline * interleave_factor(pipeline, virtual_stages)
    return float(min(micro_batches, pipeline))


def interleave_factor(pipeline: int, virtual_stages: int) -> float:
    """1 + (p − 1)/(p·v): the interleaved schedule's extra activations on the first stage (1 when v = 1)."""
    return 1.0 + (pipeline - 1) / (pipeline * virtual_stages) if virtual_stages > 1 else 1.0


def stage_layers(layers: int, pipeline: int) -> int:
    """Layers the first stage holds: ⌈L/p⌉ (uneven stages charge the first with the remainder)."""
    return -(-layers // pipeline)


def layers_bytes(per_layer: float, layers: int, pipeline: int, held: float) -> float:
    """The first stage's layer activations: per layer × ⌈L/p⌉ × the micro-batches in flight."""
    return per_layer * stage_layers(layers, pipeline) * held


def extra_bytes(shape: Shape, tensor: int, sequence_parallel: bool, pipeline: int, held: float) -> float:
    """The embedding's dropout mask on the first stage, sbh/t_sp per micro-batch in flight, and without a pipeline
    also the last LayerNorm's and the output layer's inputs and the fp32 logits: 4·sbh/t_sp + 4·s·b·V/t
    (Korthikanti §4.3)."""
    return (dropout_bytes(shape, tensor, sequence_parallel) * held
            + output_bytes(shape, tensor, sequence_parallel, pipeline))


def dropout_bytes(shape: Shape, tensor: int, sequence_parallel: bool) -> float:
    """The embedding's dropout mask of one micro-batch: sbh/t_sp."""
    return shape.sbh / (tensor if sequence_parallel else 1)


def output_bytes(shape: Shape, tensor: int, sequence_parallel: bool, pipeline: int) -> float:
    """Without a pipeline, the first stage is also the last: its last LayerNorm's and output layer's inputs and the
    fp32 logits, 4·sbh/t_sp + 4·s·b·V/t; 0 with one."""
    if pipeline != 1:
        return 0.0
    t_sp = tensor if sequence_parallel else 1
    return 4.0 * shape.sbh / t_sp + 4.0 * shape.sequence * shape.micro_batch * shape.vocabulary / tensor


def most_loaded_parameters(parameters: float, vocabulary: int, hidden: int, tensor: int, pipeline: int) -> float:
    """Ψ of the first stage per device: its L/p layers' share of the non-embedding parameters and the whole
    embedding, over t: ((P − V·h)/p + V·h)/t (Megatron-LM's most loaded shard)."""
    embedding = float(vocabulary) * hidden
    return ((parameters - embedding) / pipeline + embedding) / tensor


def shape_parameters(layers: int, hidden: int, vocabulary: int, sequence: int) -> float:
    """P = 12·L·h²·(1 + 13/(12h) + (V + s)/(12·L·h)) (Narayanan et al. 2021, eq. (2))."""
    return 12.0 * layers * hidden ** 2 * (1.0 + 13.0 / (12.0 * hidden)
                                          + (vocabulary + sequence) / (12.0 * layers * hidden))


@dataclass(frozen=True)
class TokenFlops:
    """FLOPs per token of a training step (forward and backward; a multiply-add is 2 FLOP)."""

    model: float  # F_model = 6·P + 12·L·(a·d_h)·s (PaLM App. B)
    six_p: float  # 6·P, the count without attention
    hardware: dict[RecomputePolicy, float]  # F_hw: the model's FLOPs plus what each policy recomputes
    attention_included: bool

    def overhead(self, policy: RecomputePolicy) -> float:
        """The share recomputation adds: F_hw / F_model − 1."""
        return self.hardware[policy] / self.model - 1.0


def token_flops(parameters: float, shape: Shape | None) -> TokenFlops:
    """F_model and F_hw per policy. Without the shape's heads, attention is not counted (F_model = 6P) and nothing
    is recomputed but the layers' forward.

        selective:  + 12·L·(a·d_h)·s              (Korthikanti eq. (8))
        full:       + 2·(P − V·h) + 4·L·(a·d_h)·s  (one more forward of every layer; Narayanan eq. (3))
        flash:      + 2·L·(a·d_h)·s under every policy (its backward recomputes Q·Kᵀ); selective then adds nothing
    """
    six_p = 6.0 * parameters
    if shape is None:
        return TokenFlops(six_p, six_p, {"none": six_p, "selective": six_p, "full": six_p + 2.0 * parameters}, False)
    attention = float(shape.layers) * shape.heads * shape.head_dim * shape.sequence  # L·(a·d_h)·s
    model = six_p + 12.0 * attention
    flash = 2.0 * attention if shape.flash else 0.0
    layers_forward = 2.0 * (parameters - float(shape.vocabulary) * shape.hidden) + 4.0 * attention
    return TokenFlops(model, six_p, {
        "none": model + flash,
        "selective": model + (flash if shape.flash else 12.0 * attention),
        "full": model + flash + layers_forward,
    }, True)
