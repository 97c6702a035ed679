"""Every layout of a number of devices, and each one's memory and step, as numpy arrays
(methods.md#the-plan-search): the enumeration of tensor, pipeline and data-parallel degrees, virtual stages, ZeRO
stages and recomputation policies (as Calculon's helpers enumerate them), and the step of each
(Narayanan et al. 2021 §3 with Korthikanti et al. 2022's FLOPs), so that 10⁵ layouts cost a few array operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from reportgen.analysis.transformer import (
    RECOMPUTE_POLICIES,
    RecomputePolicy,
    Shape,
    activations_per_layer,
    dropout_bytes,
    in_flight,
    most_loaded_parameters,
    output_bytes,
    stage_layers,
)

# recomputation policies as array codes, in RECOMPUTE_POLICIES' order (none < selective < full: the ties' order)
POLICY_CODE = {policy: code for code, policy in enumerate(RECOMPUTE_POLICIES)}
Term = Literal["recompute", "bubble", "tensor", "pipeline", "data"]
TERMS: tuple[Term, ...] = ("recompute", "bubble", "tensor", "pipeline", "data")


def divisors(n: int) -> list[int]:
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    return sorted({*small, *(n // k for k in small)})


@dataclass(frozen=True)
class Layouts:
    """Candidate layouts as parallel integer arrays, one element per layout."""

    tensor: np.ndarray
    pipeline: np.ndarray
    data: np.ndarray
    virtual: np.ndarray
    micro_batch: np.ndarray
    micro_batches: np.ndarray
    zero: np.ndarray
    recompute: np.ndarray  # POLICY_CODE
    sequence_parallel: np.ndarray  # 0 or 1
    left_out: int = 0  # layouts past the cap, counted but not evaluated

    def __len__(self) -> int:
        return len(self.tensor)

    @classmethod
    def of(cls, columns: Sequence[np.ndarray], left_out: int = 0) -> Layouts:
        """From one array per field, in LAYOUT_FIELDS' order."""
        t, p, d, v, b, m, z, r, sp = columns
        return cls(t, p, d, v, b, m, z, r, sp, left_out)

    def subset(self, index: np.ndarray) -> Layouts:
        return Layouts.of([getattr(self, name)[index] for name in LAYOUT_FIELDS])

    def row(self, index: int) -> tuple[int, ...]:
        return tuple(int(getattr(self, name)[index]) for name in LAYOUT_FIELDS)


LAYOUT_FIELDS = ("tensor", "pipeline", "data", "virtual", "micro_batch", "micro_batches", "zero", "recompute",
                 "sequence_parallel")


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


def enumerate_layouts(devices: int, shape: Shape, devices_per_node: int, global_batch: int,
                      space: SearchSpace) -> Layouts:
    """Every layout of `devices` (methods.md#the-enumeration): t divides g and the heads (t ≤ max_tensor); p
    divides the layers with t·p dividing the devices; b·d divides the global batch (m = B/(b·d)); v divides L/p,
    above 1 only when m is a multiple of p; ZeRO 0 alone when d = 1, at most 1 with a pipeline unless allowed; the
    recomputation policies searched; sequence parallelism wherever t > 1 when searched. Past `max_layouts` the
    enumeration stops in that order and counts what it left out."""
    rows: list[tuple[int, ...]] = []
    left_out = 0
    cap = space.max_layouts
    tensors = [t for t in divisors(devices_per_node) if t <= space.max_tensor and shape.heads % t == 0]
    for t in tensors:
        for p in divisors(shape.layers):
            if devices % (t * p):
                continue
            d = devices // (t * p)
            for b in space.micro_batch:
                if global_batch % (b * d):
                    continue
                m = global_batch // (b * d)
                virtuals = [1] if p == 1 else [v for v in divisors(shape.layers // p) if v == 1 or m % p == 0]
                zeros = [0] if d == 1 else [z for z in space.zero_stages
                                            if p == 1 or z <= 1 or space.zero_with_pipeline]
                sp = 1 if space.sequence_parallel and t > 1 else 0
                for v in virtuals:
                    for z in zeros:
                        for policy in space.recompute:
                            if len(rows) < cap:
                                rows.append((t, p, d, v, b, m, z, POLICY_CODE[policy], sp))
                            else:
                                left_out += 1
    columns = np.array(rows, dtype=np.int64).reshape(-1, len(LAYOUT_FIELDS)).T
    return Layouts.of(list(columns), left_out)


def why_none_enumerated(devices: int, shape: Shape, devices_per_node: int, global_batch: int,
                        space: SearchSpace) -> str:
    """The rule after which no layout of `devices` was left, in enumerate_layouts' order: the tensor degree, else
    the batch (methods.md#a-search-with-nothing-to-rank)."""
    tensors = [t for t in divisors(devices_per_node) if t <= space.max_tensor and shape.heads % t == 0]
    if not tensors:
        return (f"no tensor degree t ≤ {min(space.max_tensor, devices_per_node)} divides both the "
                f"{devices_per_node} devices of a node and the {shape.heads} heads")
    # t = p = 1 divides any device count, so with a tensor degree left the pipeline rule always leaves a pair
    pairs = [(t, p) for t in tensors for p in divisors(shape.layers) if devices % (t * p) == 0]
    widest = max(pairs, key=lambda pair: (pair[0] * pair[1], pair[0]))
    least_data = devices // (widest[0] * widest[1])
    batches = " or ".join(map(str, space.micro_batch))
    return (f"t·p is at most {widest[0]} × {widest[1]} = {widest[0] * widest[1]} (t ≤ g, p a divisor of L = {shape.layers}), "
            f"so d ≥ {least_data:,}, and no b·d (b = {batches}) divides the global batch of {global_batch:,}")


@dataclass(frozen=True)
class StepModel:
    """What every layout's memory and step read: the shape, the batch, the FLOPs a token by policy, the hardware."""

    shape: Shape
    global_batch: int
    parameters: float  # P, for the most loaded stage's states
    flops_model: float  # F_model a token
    flops_hardware: np.ndarray  # F_hw a token, by POLICY_CODE
    peak_per_device: float
    devices_per_node: int
    intra_bandwidth: float | None
    intra_latency: float
    network_bandwidth: float | None
    network_latency: float
    overlap: float
    weights_b: float = 2.0  # w, g and K bytes per parameter
    gradients_b: float = 2.0
    optimizer_b: float = 12.0
    other_b: float = 0.0  # baseline.memory.other, not sharded
    kappa: float = 1.0  # the activation model's calibration

    def psi(self, layouts: Layouts) -> np.ndarray:
        """Ψ of the most loaded stage per device: ((P − V·h)/p + V·h)/t."""
        shape = self.shape
        return _each(lambda t, p: most_loaded_parameters(self.parameters, shape.vocabulary, shape.hidden, t, p),
                     layouts.tensor, layouts.pipeline)

    def memory(self, layouts: Layouts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states, activations, total) per device on the first stage, in bytes: Table 2's terms as
        reportgen.analysis.transformer states them for one layout, each evaluated once per distinct combination of
        the parameters it reads (a few hundred among 100,000 layouts) and spread back over the layouts."""
        psi = self.psi(layouts)
        d, z = layouts.data.astype(float), layouts.zero

        def over(stage: int) -> np.ndarray:
            return np.where(z >= stage, d, 1.0)

        states = self.weights_b * psi / over(3) + self.gradients_b * psi / over(2) + self.optimizer_b * psi / over(1)
        t, p, sp, b = layouts.tensor, layouts.pipeline, layouts.sequence_parallel, layouts.micro_batch

        def shaped(micro_batch: int) -> Shape:
            return replace(self.shape, micro_batch=micro_batch)

        per_layer = _each(lambda t_, sp_, code, b_: activations_per_layer(
            shaped(b_), t_, bool(sp_), RECOMPUTE_POLICIES[code]), t, sp, layouts.recompute, b)
        held = _each(in_flight, p, layouts.micro_batches, layouts.virtual)
        # transformer.extra_bytes, its two terms apart: the dropout mask scales with the micro-batches in flight
        dropout = _each(lambda t_, sp_, b_: dropout_bytes(shaped(b_), t_, bool(sp_)), t, sp, b)
        output = _each(lambda t_, sp_, single, b_: output_bytes(shaped(b_), t_, bool(sp_), 1 if single else 2),
                       t, sp, p == 1, b)
        extra = dropout * held + output
        layers = _each(lambda p_: stage_layers(self.shape.layers, p_), p)
        activations = (per_layer * layers * held + extra) * self.kappa
        return states, activations, states + activations + self.other_b

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
        return np.asarray(layouts.tensor * layouts.pipeline * layouts.data)

    def terms(self, layouts: Layouts, efficiency: float) -> dict[str, np.ndarray]:
        """Each step term of every layout, in seconds (methods.md#the-step-of-a-layout): compute and recompute at
        η of the peak, the bubble (p − 1)/(v·m) of both, k tensor all-reduces a layer and micro-batch (6 under full
        recomputation), 2·v·m pipeline sends, and the data-parallel collective of the ZeRO stage less the overlap."""
        shape = self.shape
        devices = self._devices(layouts).astype(float)
        t, p, d = (layouts.tensor.astype(float), layouts.pipeline.astype(float), layouts.data.astype(float))
        m, v = layouts.micro_batches.astype(float), layouts.virtual.astype(float)
        tokens = float(self.global_batch) * shape.sequence
        rate = devices * self.peak_per_device * efficiency
        compute = tokens * self.flops_model / rate
        recompute = tokens * (self.flops_hardware[layouts.recompute] - self.flops_model) / rate
        bubble = (compute + recompute) * (p - 1) / (v * m)
        activation = 2.0 * layouts.micro_batch * shape.sequence * shape.hidden  # A = 2·b·s·h bytes
        intra = self.intra_bandwidth or math.inf
        network = self.network_bandwidth or math.inf
        k = np.where(layouts.recompute == POLICY_CODE["full"], 6.0, 4.0)
        tensor = np.where(t > 1, k * (shape.layers / p) * m * (2 * (t - 1) / t * activation / intra
                                                             + 2 * (t - 1) * self.intra_latency), 0.0)
        pipeline = np.where(p > 1, 2 * v * m * (self.network_latency + activation / network), 0.0)
        psi = self.psi(layouts)
        w, g_b, z = self.weights_b, self.gradients_b, layouts.zero
        message = np.where(z == 0, 2 * g_b * psi, np.where(z < 3, (g_b + w) * psi, (2 * m * w + g_b) * psi))
        collectives = np.where(z == 3, 2 * m + 1, 1.0)
        within = devices <= self.devices_per_node
        bandwidth = np.where(within, intra, network)
        latency = np.where(within, self.intra_latency, self.network_latency)
        links = np.where(within, 1.0, np.minimum(self.devices_per_node, t * p))
        data = np.where(d > 1, (1 - self.overlap) * (collectives * (d - 1) * latency
                                                     + (d - 1) / d * links * message / bandwidth), 0.0)
        return {"compute": compute, "recompute": recompute, "bubble": bubble, "tensor": tensor,
                "pipeline": pipeline, "data": data}


def step_total(terms: dict[str, np.ndarray]) -> np.ndarray:
    total: np.ndarray = terms["compute"] + terms["recompute"] + terms["bubble"] + terms["tensor"] \
        + terms["pipeline"] + terms["data"]
    return total


def _each(term: Callable[..., float], *columns: np.ndarray) -> np.ndarray:
    """`term` of every layout, from the columns it reads: evaluated once per distinct row of them. The columns are
    folded in one at a time into an integer index of the combinations met so far, renumbered after each so that it
    never overflows (numpy's unique over rows of several columns takes a second for 100,000 rows; over integers,
    milliseconds)."""
    if not len(columns[0]):  # no layout: nothing to evaluate (min and max of an empty column would raise)
        return np.zeros(0, dtype=float)
    index = np.zeros(len(columns[0]), dtype=np.int64)  # the row's combination of the columns so far
    rows: list[tuple[object, ...]] = [()]  # each combination's values
    for column in map(np.asarray, columns):
        if column.dtype.kind in "bui" and column.min() >= 0 and column.max() < 4096:  # counts, flags: their own index
            values, position = np.arange(int(column.max()) + 1), column.astype(np.int64)
        else:
            values, position = np.unique(column, return_inverse=True)
        combined, index = np.unique(index * len(values) + position.reshape(-1), return_inverse=True)
        rows = [(*rows[code // len(values)], values[code % len(values)].item()) for code in combined.tolist()]
    return np.asarray([term(*row) for row in rows], dtype=float)[index.reshape(-1)]
