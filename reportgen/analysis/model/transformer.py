"""A transformer's activation memory and FLOPs from its shape (methods.md#activation-memory-from-the-models-shape,
methods.md#flops-mfu-and-hfu): the formulas the plan search and the measured utilization share, each a plain
function of numbers so that the published tables can be reproduced one cell at a time.

Activations per layer are Korthikanti et al. 2022's Table 2 (16-bit activations, 1-byte masks); the layers the most
loaded pipeline stage holds follow its §4.2.3 (1F1B, interleaving) and its §4.3 (embedding, output layer and loss);
the model states on that stage follow Megatron-LM's "most loaded shard". FLOPs per token are PaLM's App. B
(6N + 12LHQT), with recomputation's extra forward by Korthikanti's eq. (8) and Narayanan et al. 2021's eq. (3); the
parameters from the shape are Narayanan's eq. (2). A described layer (methods.md#llama-style-layers: SwiGLU,
grouped-query attention, RMSNorm, no dropout or biases, untied embeddings, experts, a sliding window) counts its own
parameters, FLOPs and activations by the same methods; the defaults are GPT-3's layer, whose counts they reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reportgen.project.model import MlpKind, NormKind, PositionKind

RecomputePolicy = Literal["none", "selective", "full"]
ModeName = Literal["none", "seq", "sel", "seqsel", "full", "seqfull"]
RECOMPUTE_POLICIES: tuple[RecomputePolicy, ...] = ("none", "selective", "full")
# Calculon's validation modes (calculon/llm/validation.py): (name, recomputation, sequence parallelism)
MODES: tuple[tuple[ModeName, RecomputePolicy, bool], ...] = (
    ("none", "none", False), ("seq", "none", True), ("sel", "selective", False), ("seqsel", "selective", True),
    ("full", "full", False), ("seqfull", "full", True))


SWIGLU_MULTIPLE = 256  # meta-llama/llama llama/model.py `FeedForward`: the SwiGLU width rounds up to a multiple of it


@dataclass(frozen=True)
class Shape:
    """A transformer's shape: L layers of hidden size h with a heads of d_h, sequences of s tokens in micro-batches
    of b, a vocabulary of V; `flash` when the attention kernel never stores the s×s scores. The rest describes the
    layer (methods.md#llama-style-layers), GPT-3's by default; `described` when the project gave any of it."""

    layers: int
    hidden: int
    heads: int
    head_dim: float
    sequence: int
    vocabulary: int
    micro_batch: int
    flash: bool = False
    kv_heads: int | None = None  # a_kv (grouped-query attention); None: a
    ffn_hidden: int | None = None  # f; None: 4h
    mlp: MlpKind = "gelu"
    norm: NormKind = "layernorm"
    dropout: bool = True
    tied_embeddings: bool = True
    position: PositionKind = "learned"
    bias: bool = True
    fused_swiglu: bool = True
    experts: int | None = None  # E_n; None: a dense model
    moe_layers: int | None = None  # the layers with experts; None: every layer (with experts)
    top_k: int = 2  # the experts a token passes through
    attention_window: int | None = None  # w; None: full attention
    window_layers: int | None = None  # L_w; None: every layer (with a window)
    # a field of the layer was given: P and full recomputation count P_layer, and q̂ = q/h in the activations; else
    # Narayanan's eq. (2), 2·(P − V·h) and Table 2's q̂ = 1, so that an undescribed shape's counts never move
    described: bool = False

    @property
    def sbh(self) -> float:
        return float(self.sequence) * self.micro_batch * self.hidden

    @property
    def query(self) -> float:
        """q = a·d_h: the width of the queries (and of the attention's output)."""
        return self.heads * self.head_dim

    @property
    def key_value_heads(self) -> int:
        """a_kv: the key/value heads (grouped-query attention), else every head."""
        return self.kv_heads if self.kv_heads is not None else self.heads

    @property
    def key_value(self) -> float:
        """k = a_kv·d_h: the width of the keys, and of the values."""
        return self.key_value_heads * self.head_dim

    @property
    def mlp_hidden(self) -> int:
        """f: as given, else 4h (GeLU's)."""
        return self.ffn_hidden if self.ffn_hidden is not None else 4 * self.hidden

    @property
    def mlp_matrices(self) -> int:
        """n: GeLU's MLP has two weight matrices, SwiGLU's three (the gate beside fc1)."""
        return 3 if self.mlp == "swiglu" else 2

    @property
    def norm_vectors(self) -> int:
        """ν: LayerNorm has a scale and a shift, RMSNorm a scale."""
        return 2 if self.norm == "layernorm" else 1

    @property
    def expert_layers(self) -> int:
        """The layers with experts: 0 in a dense model."""
        if self.experts is None:
            return 0
        return self.moe_layers if self.moe_layers is not None else self.layers

    @property
    def windowed_layers(self) -> int:
        """L_w: the layers whose attention keeps a window shorter than the sequence (0 without one)."""
        if self.attention_window is None or self.attention_window >= self.sequence:
            return 0
        return min(self.window_layers if self.window_layers is not None else self.layers, self.layers)


def swiglu_hidden(hidden: int) -> int:
    """SwiGLU's default f: ⌊8h/3⌋ rounded up to a multiple of 256 (Llama 2 7B: 10,922 → 11,008), so that its three
    matrices hold about the parameters of GeLU's two at 4h."""
    return SWIGLU_MULTIPLE * -(-(8 * hidden // 3) // SWIGLU_MULTIPLE)


def activations_per_layer(shape: Shape, tensor: int, sequence_parallel: bool, policy: RecomputePolicy,
                          context: int = 1) -> float:
    """Bytes of one transformer layer's activations per device, by Korthikanti Table 2's method (16-bit values,
    1-byte masks; methods.md#activation-memory-from-the-models-shape):

        none:       sbh · [(8 + 2δ)/t_sp + ((4 + 4g)·q̂ + M_mlp + [no flash]·(2 + 3δ)·a·s/h)/t] / cp
        selective:  the same without the scores' term
        full:       2·sbh / (t_sp·cp), the layer's input alone

    t_sp = t with sequence parallelism, else 1; δ = 1 with dropout (its masks); g = a_kv/a with flash, 1 without
    (Megatron repeats K and V to every head before an unfused kernel); q̂ = q/h; M_mlp = 4f/h for GeLU, 6f/h for a
    fused SwiGLU, 8f/h for an eager one, top_k times in MoE layers. GPT-3's layer: 10/t_sp + 24/t + 5as/(ht).
    """
    t_sp = tensor if sequence_parallel else 1
    if policy == "full":
        return 2.0 * shape.sbh / (t_sp * context)
    dropout = 1.0 if shape.dropout else 0.0
    outside = 8.0 + 2.0 * dropout  # the norms' and projections' inputs and the residual masks, sharded by SP
    inside = (4.0 + 4.0 * _kv_stored_share(shape)) * _query_ratio(shape) + mlp_activations(shape)
    stores_scores = policy == "none" and not shape.flash
    scores = (2.0 + 3.0 * dropout) * shape.heads * shape.sequence / (shape.hidden * tensor) if stores_scores else 0.0
    return shape.sbh * (outside / t_sp + inside / tensor + scores) / context


def _kv_stored_share(shape: Shape) -> float:
    """g: the keys' and values' stored width over the queries'. A flash kernel reads the grouped K and V as they
    are; without it Megatron repeat_interleaves them to every query head first, and that copy is what is kept."""
    return shape.key_value / shape.query if shape.flash else 1.0


def _query_ratio(shape: Shape) -> float:
    """q̂ = a·d_h/h for a described layer; Table 2's 1 for GPT-3's, which counts the attention's width as h."""
    return shape.query / shape.hidden if shape.described else 1.0


def mlp_activations(shape: Shape) -> float:
    """M_mlp, bytes per s·b·h the MLP keeps for its backward: GeLU its input and output, 4f/h; SwiGLU fused
    (Megatron's SwiGLUFunction saves its input: fc1's 2f outputs, and fc2's input) 6f/h, eager (w1, w3, silu and
    their product) 8f/h. In MoE layers a token passes through top_k experts (capacity factor 1, the router's and the
    permutation's buffers left out): averaged over the layers, as every stage holds its share of them."""
    kept = 4.0 if shape.mlp == "gelu" else 6.0 if shape.fused_swiglu else 8.0  # bytes per token per unit of f
    per_expert = kept * shape.mlp_hidden / shape.hidden
    moe_share = shape.expert_layers / shape.layers
    return per_expert * (1.0 + (shape.top_k - 1) * moe_share)


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
    """The embedding's dropout mask of one micro-batch: sbh/t_sp (none without dropout)."""
    return shape.sbh / (tensor if sequence_parallel else 1) if shape.dropout else 0.0


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


def attention_parameters(shape: Shape) -> float:
    """The attention's weights and biases: 2·h·q + 2·h·k + β·(q + 2k + h) (Q and the output projection are h × q,
    K and V h × k; the biases of Q, K, V and the output)."""
    h, q, k = float(shape.hidden), shape.query, shape.key_value
    return 2.0 * h * q + 2.0 * h * k + (q + 2.0 * k + h if shape.bias else 0.0)


def mlp_parameters(shape: Shape) -> float:
    """One MLP's (one expert's) weights and biases: n·h·f + β·((n − 1)·f + h)."""
    h, f, n = float(shape.hidden), float(shape.mlp_hidden), shape.mlp_matrices
    return n * h * f + ((n - 1) * f + h if shape.bias else 0.0)


def layer_parameters(shape: Shape) -> float:
    """P_layer = 2·h·q + 2·h·k + n·h·f + β·(q + 2k + h + (n − 1)·f + h) + 2·ν·h, a dense layer (its two norms
    beside the matrices). GPT-3's: 12h² + 13h."""
    return attention_parameters(shape) + mlp_parameters(shape) + 2.0 * shape.norm_vectors * shape.hidden


def token_layer_parameters(shape: Shape) -> float:
    """The layers' parameters a token passes through: L·P_layer, an MoE layer counting top_k experts and its router
    (h·E_n) where the dense layer counts one MLP."""
    moe = shape.expert_layers
    routed = (shape.top_k - 1) * mlp_parameters(shape) + float(shape.hidden) * (shape.experts or 0)
    return shape.layers * layer_parameters(shape) + moe * routed


def model_parameters(shape: Shape) -> float:
    """P = Σ layers + V·h·(1 + [untied]) + [learned]·s·h + ν·h (the final norm): the parameters a token passes
    through. Llama 2 7B: 6,738,415,616, the released checkpoint's count."""
    h = float(shape.hidden)
    embeddings = shape.vocabulary * h * (1.0 if shape.tied_embeddings else 2.0)
    positions = shape.sequence * h if shape.position == "learned" else 0.0
    return token_layer_parameters(shape) + embeddings + positions + shape.norm_vectors * h


def stored_parameters(shape: Shape) -> float:
    """P_mem: every parameter stored, each MoE layer's E_n experts included (Mixtral 8x7B: 46.7e9)."""
    idle = shape.expert_layers * ((shape.experts or 0) - shape.top_k) * mlp_parameters(shape)
    return model_parameters(shape) + max(idle, 0.0)


def expert_parameters(shape: Shape) -> float:
    """E: the parameters that live in experts, L_moe·E_n·(one MLP's); 0 in a dense model."""
    return shape.expert_layers * (shape.experts or 0) * mlp_parameters(shape)


def effective_sequence(sequence: int, window: int | None) -> float:
    """s_eff: the keys a query attends to, in PaLM's convention that full causal attention counts s. A causal
    window of w keeps Σ min(i, w) of the s(s + 1)/2 pairs: s_eff = w·(2s − w + 1)/(s + 1) when w < s, else s."""
    if window is None or window >= sequence:
        return float(sequence)
    return window * (2.0 * sequence - window + 1.0) / (sequence + 1.0)


def attention_term(shape: Shape) -> float:
    """L·(a·d_h)·s, the attention's count per token that 12 × makes its training FLOPs, with s_eff in the L_w
    windowed layers: a·d_h·(L_w·s_eff + (L − L_w)·s)."""
    windowed = shape.windowed_layers
    if windowed == 0:
        return float(shape.layers) * shape.heads * shape.head_dim * shape.sequence
    spans = windowed * effective_sequence(shape.sequence, shape.attention_window) \
        + (shape.layers - windowed) * float(shape.sequence)
    return shape.heads * shape.head_dim * spans


def attention_sequence(shape: Shape) -> float:
    """s_eff averaged over the layers: the keys a query attends to in the mean layer (s without a window)."""
    return attention_term(shape) / (float(shape.layers) * shape.heads * shape.head_dim)


@dataclass(frozen=True)
class TokenFlops:
    """FLOPs per token of a training step (forward and backward; a multiply-add is 2 FLOP)."""

    model: float  # F_model = 6·(P − [untied]·V·h) + 12·L·(a·d_h)·s_eff (PaLM App. B)
    six_p: float  # 6·P, the count without attention
    hardware: dict[RecomputePolicy, float]  # F_hw: the model's FLOPs plus what each policy recomputes
    attention_included: bool
    # F_lin per policy: the layers' weight GEMMs, 6·L·P_layer (8·L·P_layer under full recomputation); what an FP8
    # recipe runs at FP8 while attention and the logit layer stay in BF16 (methods.md#precision)
    linear: dict[RecomputePolicy, float]

    def overhead(self, policy: RecomputePolicy) -> float:
        """The share recomputation adds: F_hw / F_model − 1."""
        return self.hardware[policy] / self.model - 1.0


def token_flops(parameters: float, shape: Shape | None) -> TokenFlops:
    """F_model and F_hw per policy. Without the shape's heads, attention is not counted (F_model = 6P) and nothing
    is recomputed but the layers' forward.

        F_model     = 6·(P − [untied]·V·h) + 12·L·(a·d_h)·s_eff   (the untied input embedding is a gather)
        selective:  + 12·L·(a·d_h)·s_eff                         (Korthikanti eq. (8))
        full:       + 2·L·P_layer + 4·L·(a·d_h)·s_eff            (one more forward of every layer; Narayanan eq. (3))
        flash:      + 2·L·(a·d_h)·s_eff under every policy (its backward recomputes Q·Kᵀ); selective then adds nothing

    An undescribed (GPT-3) layer keeps the full policy's term as it was, 2·(P − V·h), so that its counts do not move.
    """
    six_p = 6.0 * parameters
    if shape is None:
        weights: dict[RecomputePolicy, float] = {"none": six_p, "selective": six_p, "full": six_p + 2.0 * parameters}
        return TokenFlops(six_p, six_p, dict(weights), False, dict(weights))
    embedding = float(shape.vocabulary) * shape.hidden
    attention = attention_term(shape)
    untied_input = 6.0 * embedding if shape.described and not shape.tied_embeddings else 0.0
    model = six_p - untied_input + 12.0 * attention
    flash = 2.0 * attention if shape.flash else 0.0
    layers = token_layer_parameters(shape)
    forward_again = 2.0 * layers if shape.described else 2.0 * (parameters - embedding)
    hardware: dict[RecomputePolicy, float] = {
        "none": model + flash,
        "selective": model + (flash if shape.flash else 12.0 * attention),
        "full": model + flash + (forward_again + 4.0 * attention),
    }
    # the given P may disagree with the shape's layers: the weight GEMMs never exceed the whole count
    linear: dict[RecomputePolicy, float] = {
        policy: min((8.0 if policy == "full" else 6.0) * layers, total) for policy, total in hardware.items()}
    return TokenFlops(model, six_p, hardware, True, linear)
