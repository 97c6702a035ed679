"""Every layout of a number of devices, and each one's memory and step, as numpy arrays
(methods.md#the-plan-search): the enumeration of tensor, pipeline and data-parallel degrees, virtual stages, ZeRO
stages and recomputation policies (as Calculon's helpers enumerate them), and the step of each
(Narayanan et al. 2021 §3 with Korthikanti et al. 2022's FLOPs), so that 10⁵ layouts cost a few array operations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from reportgen.analysis.model.columns import LAYOUT_FIELDS, Layouts
from reportgen.analysis.model.layout_memory import (
    MemoryInputs,
    StageColumns,
    candidate_stages,
    declared_split,
    most_loaded,
    splits_by_rule,
    stage_split,
)
from reportgen.analysis.model.micro_batch import gemm_size, relative
from reportgen.analysis.model.transformer import RECOMPUTE_POLICIES, RecomputePolicy, Shape
from reportgen.project.model import ContextComm, Project

# recomputation policies as array codes, in RECOMPUTE_POLICIES' order (none < selective < full: the ties' order)
POLICY_CODE = {policy: code for code, policy in enumerate(RECOMPUTE_POLICIES)}
Term = Literal["recompute", "bubble", "imbalance", "tensor", "pipeline", "data", "context", "expert"]
TERMS: tuple[Term, ...] = ("recompute", "bubble", "imbalance", "tensor", "pipeline", "data", "context", "expert")


def divisors(n: int) -> list[int]:
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    return sorted({*small, *(n // k for k in small)})


@dataclass(frozen=True)
class SearchSpace:
    """What may be searched (plan_search's options, with their defaults resolved)."""

    recompute: tuple[RecomputePolicy, ...]
    zero_stages: tuple[int, ...]
    sequence_parallel: bool
    max_tensor: int
    micro_batch: tuple[int, ...]
    zero_with_pipeline: bool
    max_layouts: int
    contexts: tuple[int, ...] = (1,)  # cp searched
    experts: tuple[int, ...] = ()  # e searched as listed (empty: by the rule of expert_degrees)
    expert_count: int | None = None  # E_n, experts per MoE layer
    declared_expert: int = 1  # e of the declared layout: searched alone without E_n or a list

    def expert_degrees(self, data: int) -> list[int]:
        """e for a data-parallel degree (methods.md#mixture-of-experts): as listed, else the divisors of d that
        divide E_n, else the declared e; each dividing d (and E_n where known)."""
        count = self.expert_count
        if self.experts:
            wanted = list(self.experts)
        elif count is not None:
            wanted = divisors(data)
        else:
            wanted = [self.declared_expert]
        return [e for e in wanted if data % e == 0 and (count is None or count % e == 0)]


def enumerate_layouts(devices: int, shape: Shape, devices_per_node: int, global_batch: int,
                      space: SearchSpace) -> Layouts:
    """Every layout of `devices` (methods.md#the-enumeration): t divides g and the heads (t ≤ max_tensor); cp as
    searched where 2·cp divides the sequence and a flash kernel runs; p ≤ L divides the devices left by t·cp, kept
    when it divides L or Megatron's first/last split applies
    (methods.md#uneven-pipeline-stages); b·d divides the global batch (m = B/(b·d)); e as expert_degrees gives; v
    divides every stage's layers,
    above 1 only when m is a multiple of p; ZeRO 0 alone when d = 1, at most 1 with a pipeline unless allowed; the
    recomputation policies searched; sequence parallelism wherever t > 1 when searched. Past `max_layouts` the
    enumeration stops in that order and counts what it left out."""
    rows: list[tuple[int, ...]] = []
    left_out = 0
    cap = space.max_layouts
    tensors = _tensors(shape, devices_per_node, space)
    for t, cp in ((tensor, cp) for tensor in tensors for cp in _contexts(devices, shape, tensor, space)):
        for p in divisors(devices // (t * cp)):
            if p > shape.layers or not splits_by_rule(shape.layers, p):
                continue
            d = devices // (t * cp * p)
            layers_gcd = math.gcd(*stage_split(shape.layers, p))
            for b, e in ((b, e) for b in space.micro_batch for e in space.expert_degrees(d)):
                if global_batch % (b * d):
                    continue
                m = global_batch // (b * d)
                virtuals = [1] if p == 1 else [v for v in divisors(layers_gcd) if v == 1 or m % p == 0]
                zeros = [0] if d * cp == 1 else [z for z in space.zero_stages
                                                 if p == 1 or z <= 1 or space.zero_with_pipeline]
                sp = 1 if space.sequence_parallel and t > 1 else 0
                for v in virtuals:
                    for z in zeros:
                        for policy in space.recompute:
                            if len(rows) < cap:
                                rows.append((t, p, d, v, b, m, z, POLICY_CODE[policy], sp, cp, e))
                            else:
                                left_out += 1
    columns = np.array(rows, dtype=np.int64).reshape(-1, len(LAYOUT_FIELDS)).T
    return Layouts.of(list(columns), left_out)


def _tensors(shape: Shape, devices_per_node: int, space: SearchSpace) -> list[int]:
    """t searched: it divides a node's devices and the heads, up to max_tensor."""
    return [t for t in divisors(devices_per_node) if t <= space.max_tensor and shape.heads % t == 0]


def _contexts(devices: int, shape: Shape, tensor: int, space: SearchSpace) -> list[int]:
    """cp searched at a tensor degree (methods.md#context-parallelism): 2·cp divides the sequence, t·cp the devices,
    and above 1 only with a flash attention kernel."""
    return [cp for cp in space.contexts if devices % (tensor * cp) == 0
            and (cp == 1 or (shape.sequence % (2 * cp) == 0 and shape.flash))]


def why_none_enumerated(devices: int, shape: Shape, devices_per_node: int, global_batch: int,
                        space: SearchSpace) -> str:
    """The rule after which no layout of `devices` was left, in enumerate_layouts' order: the tensor degree, else
    the batch (methods.md#a-search-with-nothing-to-rank)."""
    tensors = _tensors(shape, devices_per_node, space)
    if not tensors:
        return (f"no tensor degree t ≤ {min(space.max_tensor, devices_per_node)} divides both the "
                f"{devices_per_node} devices of a node and the {shape.heads} heads")
    # t = p = 1 divides any device count, so with a tensor degree left the pipeline rule always leaves a pair
    pairs = [(t, p) for t in tensors if devices % t == 0 for p in divisors(devices // t)
             if p <= shape.layers and splits_by_rule(shape.layers, p)]
    widest = max(pairs, key=lambda pair: (pair[0] * pair[1], pair[0]))
    least_data = devices // (widest[0] * widest[1])
    batches = " or ".join(map(str, space.micro_batch))
    return (f"t·p is at most {widest[0]} × {widest[1]} = {widest[0] * widest[1]} (t ≤ g, p ≤ L = {shape.layers}), "
            f"so d ≥ {least_data:,}, and no b·d (b = {batches}) divides the global batch of {global_batch:,}")


@dataclass(frozen=True)
class StepModel:
    """What every layout's memory and step read: the shape, the batch, the memory's inputs, the FLOPs a token by
    policy, the hardware."""

    shape: Shape
    global_batch: int
    memory_inputs: MemoryInputs
    flops_model: float  # F_model a token
    flops_hardware: np.ndarray  # F_hw a token, by POLICY_CODE
    peak_per_device: float
    devices_per_node: int
    intra_bandwidth: float | None
    intra_latency: float
    network_bandwidth: float | None
    network_latency: float
    overlap: float
    split: tuple[int, ...] | None = None  # the declared layers per stage, for the declared layout's rows
    context_comm: ContextComm = "p2p"
    expert_layers: int = 0  # the layers with experts (mixture of experts)
    top_k: int = 2  # experts a token is routed to
    saturation: float = 0.0  # x₀ of the micro-batch efficiency (0: every micro-batch as efficient)
    reference_size: float = 1.0  # x_ref: the declared layout's b·(s/cp)·h, where ρ = 1
    # a device's seconds for one token's F_model and, by POLICY_CODE, F_hw at η = ρ = 1, where a precision splits
    # the GEMMs from the rest (methods.md#precision); None: the FLOPs over peak_per_device
    model_seconds: float | None = None
    hardware_seconds: np.ndarray | None = None

    def rho(self, layouts: Layouts) -> np.ndarray:
        """ρ: each layout's micro-batch efficiency against the declared one's (methods.md#micro-batch-efficiency)."""
        size = gemm_size(layouts.micro_batch, self.shape.sequence, layouts.context, self.shape.hidden)
        return relative(size, self.reference_size, self.saturation)

    def at_declared(self, project: Project, global_batch: int) -> StepModel:
        """The step model of the declared layout's rows: its declared stages, at a run's global batch."""
        return replace(self, global_batch=global_batch, split=declared_split(project))

    def memory(self, layouts: Layouts) -> StageColumns:
        """Each layout's most loaded stage and its bytes per device (methods.md#memory-per-device-one-function)."""
        return most_loaded(self.memory_inputs, layouts, self.split)

    def missing(self, layouts: Layouts) -> dict[str, np.ndarray]:
        """The layouts whose step needs an input the project does not give, by the input."""
        lacks = {}
        if self.intra_bandwidth is None:
            lacks["hardware.intra_node_bandwidth"] = (layouts.tensor > 1) | (
                (layouts.data > 1) & (self._devices(layouts) <= self.devices_per_node))
        if self.network_bandwidth is None:
            lacks["hardware.network_bandwidth"] = (layouts.pipeline > 1) | (
                (layouts.data > 1) & (self._devices(layouts) > self.devices_per_node))
        return lacks

    def _devices(self, layouts: Layouts) -> np.ndarray:
        return np.asarray(layouts.tensor * layouts.pipeline * layouts.data * layouts.context)

    def slowest_stage(self, layouts: Layouts) -> np.ndarray:
        """★: each layout's slowest pipeline stage (the lowest j on ties)."""
        return self._stage_work(layouts)[2]

    def _stage_work(self, layouts: Layouts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(W★/F_hw, L★, ★): the slowest stage's share of a token's work, its layers and its index. Each stage's work is
        L_j·f_layer + [last]·6·V·h with f_layer = (F_hw − 6·V·h)/L (methods.md#uneven-pipeline-stages), so τ★ =
        p·τ̄·W★/F_hw. Under the split rule only stages 0, 1 and p − 1 can be the slowest (the lowest j on ties)."""
        shape = self.shape
        logits = 6.0 * shape.vocabulary * shape.hidden
        hardware = self.flops_hardware[layouts.recompute]
        per_layer = (hardware - logits) / shape.layers
        p = layouts.pipeline
        slowest_work = np.zeros(len(p))
        slowest_layers = np.zeros(len(p))
        slowest_stage = np.zeros(len(p), dtype=np.int64)
        for position, layers in candidate_stages(shape, p, self.split):
            work = stage_work(layers, position == p - 1, per_layer, logits)
            slower = work > slowest_work * (1 + 1e-12)
            slowest_work = np.where(slower, work, slowest_work)
            slowest_layers = np.where(slower, layers, slowest_layers)
            slowest_stage = np.where(slower, position, slowest_stage)
        return slowest_work / hardware, slowest_layers, slowest_stage

    def stage_times(self, layouts: Layouts, split: tuple[int, ...], efficiency: float) -> tuple[np.ndarray, np.ndarray]:
        """One layout's every stage: its work a token (FLOP) and its time for one micro-batch, τ_j = p·τ̄·W_j/F_hw =
        b·s·(W_j/F_hw)·T_hw/(t·cp·η·ρ), T_hw a token's hardware work in seconds at the peak, in the precision the step
        is timed at (W_j/F_hw·T_hw = W_j/π_dev at BF16; methods.md#uneven-pipeline-stages)."""
        shape = self.shape
        policy = int(layouts.recompute[0])
        hardware = float(self.flops_hardware[policy])
        logits = 6.0 * shape.vocabulary * shape.hidden
        stages = np.arange(len(split))
        work = stage_work(np.array(split, dtype=float), stages == len(split) - 1, (hardware - logits) / shape.layers,
                          logits)
        seconds = float(self.hardware_seconds[policy]) if self.hardware_seconds is not None \
            else hardware / self.peak_per_device
        rate = float(layouts.tensor[0] * layouts.context[0]) * efficiency * float(self.rho(layouts)[0])
        return work, float(layouts.micro_batch[0]) * shape.sequence * work / hardware * seconds / rate

    def terms(self, layouts: Layouts, efficiency: float,
              stage: StageColumns | None = None) -> dict[str, np.ndarray]:
        """Each step term of every layout, in seconds (methods.md#the-step-of-a-layout): compute and recompute at
        η of the peak; the slowest stage's excess over the mean, which paces every micro-batch
        (methods.md#uneven-pipeline-stages); the bubble (p·τ̄ − τ★)/v; k tensor all-reduces a layer of the slowest
        stage and micro-batch (6 under full recomputation); 2·v·m pipeline sends; the data-parallel collective of
        the ZeRO stage less the overlap; context parallelism's key/value exchange (methods.md#context-parallelism)
        and the experts' all-to-all (methods.md#mixture-of-experts)."""
        shape = self.shape
        devices = self._devices(layouts).astype(float)
        t, p, d = (layouts.tensor.astype(float), layouts.pipeline.astype(float), layouts.data.astype(float))
        cp, e = layouts.context.astype(float), layouts.expert.astype(float)
        m, v = layouts.micro_batches.astype(float), layouts.virtual.astype(float)
        tokens = float(self.global_batch) * shape.sequence
        rate = devices * efficiency * self.rho(layouts)
        model_s = self.model_seconds if self.model_seconds is not None else self.flops_model / self.peak_per_device
        hardware_s = self.hardware_seconds if self.hardware_seconds is not None \
            else self.flops_hardware / self.peak_per_device
        compute = tokens * model_s / rate
        recompute = tokens * (hardware_s[layouts.recompute] - model_s) / rate
        share, slowest_layers, _ = self._stage_work(layouts)
        mean = (compute + recompute) / m  # τ̄: one micro-batch on one stage, on average
        slowest = mean * p * share  # τ★
        imbalance = m * (slowest - mean)
        bubble = (p * mean - slowest) / v
        activation = 2.0 * layouts.micro_batch * shape.sequence / cp * shape.hidden  # A = 2·b·(s/cp)·h bytes
        intra = self.intra_bandwidth or math.inf
        network = self.network_bandwidth or math.inf
        k = np.where(layouts.recompute == POLICY_CODE["full"], 6.0, 4.0)
        tensor = np.where(t > 1, k * slowest_layers * m * (2 * (t - 1) / t * activation / intra
                                                           + 2 * (t - 1) * self.intra_latency), 0.0)
        pipeline = np.where(p > 1, 2 * v * m * (self.network_latency + activation / network), 0.0)
        stage = stage if stage is not None else self.memory(layouts)  # the search hands in the one it computed
        data = self._data(layouts, stage.dense_parameters, d * cp, devices) \
            + self._data(layouts, stage.expert_parameters, np.maximum(d * cp / e, 1.0), devices)
        return {"compute": compute, "recompute": recompute, "bubble": bubble, "imbalance": imbalance,
                "tensor": tensor, "pipeline": pipeline, "data": data,
                "context": self._context(layouts, slowest_layers, efficiency),
                "expert": self._experts(layouts, slowest_layers, activation)}

    def _data(self, layouts: Layouts, psi: np.ndarray, replicas: np.ndarray, devices: np.ndarray) -> np.ndarray:
        """The ZeRO stage's collective of Ψ over its replicas, less the overlap: M_z = 2·g·Ψ at ZeRO-0 (an
        all-reduce), (g + w)·Ψ at 1 and 2, (2m·w + g)·Ψ in 2m + 1 collectives at 3; at the intra-node link when the
        layout fits in a node, else S = min(g, t·p) rings share a node's network link."""
        t, p = layouts.tensor.astype(float), layouts.pipeline.astype(float)
        m, z = layouts.micro_batches.astype(float), layouts.zero
        w, g_b = self.memory_inputs.weights_b, self.memory_inputs.gradients_b
        message = np.where(z == 0, 2 * g_b * psi, np.where(z < 3, (g_b + w) * psi, (2 * m * w + g_b) * psi))
        collectives = np.where(z == 3, 2 * m + 1, 1.0)
        within = devices <= self.devices_per_node
        bandwidth = np.where(within, self.intra_bandwidth or math.inf, self.network_bandwidth or math.inf)
        latency = np.where(within, self.intra_latency, self.network_latency)
        links = np.where(within, 1.0, np.minimum(self.devices_per_node, t * p))
        found: np.ndarray = np.where((replicas > 1) & (psi > 0), (1 - self.overlap) * (
            collectives * (replicas - 1) * latency + (replicas - 1) / replicas * links * message / bandwidth), 0.0)
        return found

    def _context(self, layouts: Layouts, layers: np.ndarray, efficiency: float) -> np.ndarray:
        """m·L★ key/value exchanges of 3·(cp − 1)/cp·KV bytes (KV = 4·b·s·d_h·max(a_kv/t, 1)): an all-gather of K
        and V forward, another backward and a reduce-scatter of their gradients, within a node when t·cp ≤ g; under
        p2p hidden behind the layer's attention, T_att = (b·s/cp)·12·a·d_h·s/(t·π_dev·η)."""
        shape = self.shape
        t, cp = layouts.tensor.astype(float), layouts.context.astype(float)
        m, b = layouts.micro_batches.astype(float), layouts.micro_batch.astype(float)
        heads_per_device = np.maximum(shape.key_value_heads / t, 1.0)
        kv = 4.0 * b * shape.sequence * shape.head_dim * heads_per_device
        within = t * cp <= self.devices_per_node
        bandwidth = np.where(within, self.intra_bandwidth or math.inf,
                             (self.network_bandwidth or math.inf) / np.minimum(self.devices_per_node, t))
        latency = np.where(within, self.intra_latency, self.network_latency)
        exchange = 3 * (cp - 1) * latency + 3 * (cp - 1) / cp * kv / bandwidth
        attention = b * shape.sequence / cp * 12 * shape.heads * shape.head_dim * shape.sequence / (
            t * self.peak_per_device * efficiency * self.rho(layouts))
        exposed = exchange if self.context_comm == "all_gather" else np.maximum(0.0, exchange - attention)
        found: np.ndarray = np.where(cp > 1, m * layers * exposed, 0.0)
        return found

    def _experts(self, layouts: Layouts, layers: np.ndarray, activation: np.ndarray) -> np.ndarray:
        """m·4·L_moe★ token all-to-alls of the slowest stage, (e − 1)·α + (e − 1)/e·A·top_k/B each (two forward, two
        backward), within a node when t·cp·e ≤ g (Megatron orders TP, CP, EP within a node)."""
        t, cp, e = (layouts.tensor.astype(float), layouts.context.astype(float), layouts.expert.astype(float))
        m = layouts.micro_batches.astype(float)
        within = t * cp * e <= self.devices_per_node
        bandwidth = np.where(within, self.intra_bandwidth or math.inf, self.network_bandwidth or math.inf)
        latency = np.where(within, self.intra_latency, self.network_latency)
        moe_layers = layers * self.expert_layers / self.shape.layers
        exchange = (e - 1) * latency + (e - 1) / e * activation * self.top_k / bandwidth
        found: np.ndarray = np.where(e > 1, m * 4 * moe_layers * exchange, 0.0)
        return found


def stage_work(layers: np.ndarray, last: np.ndarray, per_layer: np.ndarray | float, logits: float) -> np.ndarray:
    """W_j: a stage's FLOPs a token, L_j·f + [last]·6·V·h (the logit layer on the last stage)."""
    found: np.ndarray = layers * per_layer + np.where(last, logits, 0.0)
    return found


STEP_TERMS = ("compute", *TERMS)


def step_total(terms: dict[str, np.ndarray]) -> np.ndarray:
    total: np.ndarray = sum((terms[name] for name in STEP_TERMS), np.zeros_like(terms["compute"]))
    return total
