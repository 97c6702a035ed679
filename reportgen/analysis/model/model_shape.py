"""The model's shape as the analyses read it (methods.md#activation-memory-from-the-models-shape): complete when its
heads and vocabulary are given, the parameters a token passes through, and the activations per device of a layout,
calibrated by a measured value where the project gives one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeVar

from reportgen.analysis.model.transformer import (
    RecomputePolicy,
    Shape,
    activations_per_layer,
    extra_bytes,
    in_flight,
    layers_bytes,
    model_parameters,
    shape_parameters,
    swiglu_hidden,
)
from reportgen.project.model import MlpKind, ModelShape, Project

ParametersSource = Literal["training", "memory", "shape"]
Part = TypeVar("Part")


def shape_of(project: Project) -> Shape | None:
    """The model's shape when it is complete (heads and vocabulary given), else None; its layer as described, each
    part not given the preset's (methods.md#llama-style-layers)."""
    model = project.baseline.model if project.baseline else None
    if model is None or model.heads is None or model.vocabulary is None:
        return None
    llama = model.layer == "llama"

    def preset(given: Part | None, as_llama: Part, as_gpt3: Part) -> Part:
        return given if given is not None else (as_llama if llama else as_gpt3)

    mlp: MlpKind = preset(model.mlp, "swiglu", "gelu")
    return Shape(model.layers, model.hidden, model.heads, model.dimension_per_head, model.sequence, model.vocabulary,
                 model.micro_batch, model.flash_attention, kv_heads=model.kv_heads,
                 ffn_hidden=_ffn_hidden(model, swiglu=mlp == "swiglu"), mlp=mlp,
                 norm=preset(model.norm, "rmsnorm", "layernorm"), dropout=preset(model.dropout, False, True),
                 tied_embeddings=preset(model.tied_embeddings, False, True),
                 position=preset(model.position, "rotary", "learned"), bias=preset(model.bias, False, True),
                 fused_swiglu=model.fused_swiglu is not False, experts=model.experts, moe_layers=model.moe_layers,
                 top_k=model.top_k, attention_window=model.attention_window, window_layers=model.window_layers,
                 described=model.layer_described)


def _ffn_hidden(model: ModelShape, *, swiglu: bool) -> int:
    """f: as given, else 4h for GeLU and ⌊8h/3⌋ rounded up to a multiple of 256 for SwiGLU."""
    if model.ffn_hidden is not None:
        return model.ffn_hidden
    return swiglu_hidden(model.hidden) if swiglu else 4 * model.hidden


def parameters_of(project: Project) -> tuple[float, ParametersSource] | None:
    """P, the parameters a token passes through: baseline.training.parameters, else baseline.memory.parameters for a
    dense model, else from a complete shape: its described layer's count, or Narayanan's eq. (2) for a shape that
    describes none (so that its P does not move)."""
    baseline = project.baseline
    if baseline is not None and baseline.training is not None:
        return baseline.training.parameters, "training"
    if baseline is not None and baseline.memory is not None and baseline.memory.expert_parameters is None:
        return baseline.memory.parameters, "memory"
    shape = shape_of(project)
    if shape is not None and shape.described:
        return model_parameters(shape), "shape"
    if shape is not None:
        return shape_parameters(shape.layers, shape.hidden, shape.vocabulary, shape.sequence), "shape"
    return None


@dataclass(frozen=True)
class Activations:
    """One layout's activations on its most loaded (first) pipeline stage, per device."""

    per_layer_b: float
    layers_b: float  # per layer × ⌈L/p⌉ × the micro-batches in flight
    extra_b: float  # the embedding's mask, and without a pipeline the output layer and the loss
    in_flight: float

    @property
    def total_b(self) -> float:
        return self.layers_b + self.extra_b


def activations(shape: Shape, *, tensor: int, pipeline: int, micro_batches: int, virtual_stages: int,
                recompute: RecomputePolicy, sequence_parallel: bool) -> Activations:
    held = in_flight(pipeline, micro_batches, virtual_stages)
    per_layer = activations_per_layer(shape, tensor, sequence_parallel, recompute)
    return Activations(per_layer, layers_bytes(per_layer, shape.layers, pipeline, held),
                       extra_bytes(shape, tensor, sequence_parallel, pipeline, held), held)


def declared_activations(project: Project) -> Activations | None:
    """The declared layout's modelled activations, or None without a complete shape and a layout."""
    shape = shape_of(project)
    layout = project.design.parallelism if project.design else None
    if shape is None or layout is None:
        return None
    return activations(shape, tensor=layout.tensor, pipeline=layout.pipeline, micro_batches=layout.micro_batches,
                       virtual_stages=layout.virtual_stages, recompute=layout.recompute,
                       sequence_parallel=layout.sequence_parallel)
