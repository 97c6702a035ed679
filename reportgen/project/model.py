"""A project, as frozen dataclasses of SI floats (s, B, FLOP, W, J, kg, the project's currency).

Each field's spec (reportgen.project.spec) says how it is written in the project file; the loader, `reportgen schema`
and the documentation all read these. Cross-field rules of one section live in its `check` method, which yields
(field name, message) pairs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from reportgen.project import units as u
from reportgen.project.spec import (
    MAX_NODES,
    Choices,
    Count,
    Flag,
    Fraction,
    Items,
    Names,
    NodeCount,
    Number,
    OneOf,
    Positive,
    Quantity,
    Section,
    Share,
    Text,
    Unit,
    Whole,
    field,
)

# The project file's vocabularies, each a Literal type (so that mypy checks every comparison against a name)
# and the tuple of its names (for reading, the JSON Schema and the reference).
Workload = Literal["training", "inference", "data-processing"]
Topology = Literal["centralized", "decentralized", "hybrid"]
Mode = Literal["batch", "streaming", "online", "interactive"]
Metric = Literal["throughput", "latency", "cost", "reliability"]
Axis = Literal["distribute data", "distribute training", "distribute the model", "distribute inference",
               "coordinate the cluster", "distribute intelligence", "single machine"]
# each axis as a reader says what it does: "cured by distributing the model"
AXIS_DOING: dict[Axis, str] = {"distribute data": "distributing the data", "distribute training": "distributing the "
                               "training", "distribute the model": "distributing the model",
                               "distribute inference": "distributing inference across replicas",
                               "coordinate the cluster": "coordinating the cluster (better collectives, fewer "
                               "exchanges)", "distribute intelligence": "distributing the agents",
                               "single machine": "staying on a single machine"}
Objective = Literal["cost", "time", "carbon"]
RunForm = Literal["breakdown", "total", "throughput"]  # how a measured run is written
ScalingAxis = Literal["nodes", "load"]  # what a run's `nodes` counts
ScalingMode = Literal["strong", "weak"]  # strong: the work per run is fixed; weak: the work per node
RegimeName = Literal["on_demand", "spot", "local"]  # a price regime
PatternName = Literal["ring", "tree", "parameter-server", "scatter-gather", "gossip", "sharded", "all-to-all"]
Recompute = Literal["none", "selective", "full"]  # activation recomputation (Korthikanti et al. 2022 §5)
ContextComm = Literal["p2p", "all_gather"]  # context parallelism's key/value exchange (Megatron cp_comm_type)
# A transformer layer's description (methods.md#llama-style-layers): a preset and the parts it sets
LayerPreset = Literal["gpt3", "llama"]
MlpKind = Literal["gelu", "swiglu"]  # GeLU: two matrices; SwiGLU: three
NormKind = Literal["layernorm", "rmsnorm"]
PositionKind = Literal["learned", "rotary"]
Precision = Literal["bf16", "fp16", "fp8", "tf32", "fp32"]  # the GEMMs' operand type (methods.md#precision)
MAX_DECISIONS = 64  # deployment contexts: a team has a handful; each is held against every measured point
MAX_LAYERS = 100_000  # a model's layers: the largest trained have a few hundred

WORKLOADS: tuple[Workload, ...] = get_args(Workload)
TOPOLOGIES: tuple[Topology, ...] = get_args(Topology)
MODES: tuple[Mode, ...] = get_args(Mode)
METRICS: tuple[Metric, ...] = get_args(Metric)
AXES: tuple[Axis, ...] = get_args(Axis)
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
RUN_FORMS: tuple[RunForm, ...] = get_args(RunForm)
SCALING_AXES: tuple[ScalingAxis, ...] = get_args(ScalingAxis)
SCALING_MODES: tuple[ScalingMode, ...] = get_args(ScalingMode)
REGIMES: tuple[RegimeName, ...] = get_args(RegimeName)
PATTERNS: tuple[PatternName, ...] = get_args(PatternName)
RECOMPUTES: tuple[Recompute, ...] = get_args(Recompute)
CONTEXT_COMMS: tuple[ContextComm, ...] = get_args(ContextComm)
LAYER_PRESETS: tuple[LayerPreset, ...] = get_args(LayerPreset)
MLP_KINDS: tuple[MlpKind, ...] = get_args(MlpKind)
NORM_KINDS: tuple[NormKind, ...] = get_args(NormKind)
POSITION_KINDS: tuple[PositionKind, ...] = get_args(PositionKind)
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
PRESSURE_AXES = ("data", "training", "model", "inference", "coordination", "intelligence")
SERVING_GOAL_FIELDS = ("load", "p99_latency", "headroom", "cost_per_hour", "latency", "attainment")
SLOT_VOCABULARY = {
    "partitioning": ("split data", "shard model", "split work"),
    "communication": ("all-reduce", "parameter server", "gossip", "scatter-gather"),
    "consistency": ("synchronous", "asynchronous", "bounded staleness"),
    "coordination": ("central coordinator", "decentralized"),
    "fault_tolerance": ("checkpoint/restart", "elastic", "replicate/re-execute"),
    "load_balancing": ("even sharding", "straggler mitigation"),
}
REGIME_NAMES = {"on_demand": "on-demand", "spot": "spot", "local": "owned"}  # price regimes as the report names them
REGIME_PHRASES = {"on_demand": "on demand", "spot": "on spot", "local": "on owned nodes"}  # "8 nodes on spot"

Checks = Iterator[tuple[str, str]]


def _at_most_one(obj: object, *names: str) -> Checks:
    given = [n for n in names if getattr(obj, n) is not None]
    for name in given[1:]:
        yield name, f"give only one of {', '.join(names)} (`{given[0]}` is already given)"


# ---------------------------------------------------------------------------------------------------------- project
# each per-request threshold and its p99 twin (a p99 objective of the same latency)
PER_REQUEST_OBJECTIVES = {"ttft": "ttft_p99", "tpot": "tpot_p99", "e2e": "p99"}


@dataclass(frozen=True)
class Latency:
    """A service's latency objectives at p99: any of them."""

    p99: float | None = field(Quantity(u.TIME, "End-to-end p99 latency objective (the same as goal.p99_latency)",
                                       example="25 ms"))
    ttft_p99: float | None = field(Quantity(u.TIME, "p99 time to first token", example="2 s"))
    tpot_p99: float | None = field(Quantity(u.TIME, "p99 time per output token", example="200 ms"))
    # Per-request thresholds, judged from a load test's requests (methods.md#a-service-judged-from-its-requests): a
    # request is good when it meets every one; goal.attainment is the share of requests that must be good.
    ttft: float | None = field(Quantity(u.TIME, "Per-request time to first token objective, judged with "
                                        "goal.attainment from per-request records", example="250 ms"), starter=False)
    tpot: float | None = field(Quantity(u.TIME, "Per-request time per output token objective ((E2E − TTFT)/(n − 1))",
                                        example="25 ms"), starter=False)
    e2e: float | None = field(Quantity(u.TIME, "Per-request end-to-end latency objective", example="6 s"),
                              starter=False)

    @property
    def per_request(self) -> dict[str, float]:
        """The per-request thresholds given, by name (ttft, tpot, e2e), in seconds."""
        return {name: value for name in PER_REQUEST_OBJECTIVES if (value := getattr(self, name)) is not None}

    def check(self) -> Checks:
        for name, twin in PER_REQUEST_OBJECTIVES.items():
            if getattr(self, name) is not None and getattr(self, twin) is not None:
                yield name, (f"goal.latency.{name} is a per-request threshold and goal.latency.{twin} a p99 "
                             f"objective of the same latency: give one")


@dataclass(frozen=True)
class Goal:
    """What the team must achieve."""

    text: str | None = field(Text("The goal in one sentence",
                                   example="One epoch in under 90 minutes for under 200 USD."))
    time_per_run: float | None = field(Quantity(u.TIME, "Deadline for one run (the time wall)", example="90 min"))
    cost_per_run: float | None = field(Quantity(u.MONEY, "Budget for one run", example="200 USD"))
    # A serving project (project.workload: inference) is judged on the load it serves within its latency objective
    # and on its cost per hour, not per run.
    load: float | None = field(Quantity(u.RATE, "Serving: peak request rate to serve (default "
                                        "baseline.serving.requests_per_second)", example="40000 request/s"),
                               starter=False)
    p99_latency: float | None = field(Quantity(u.TIME, "Serving: 99th-percentile latency objective (default "
                                               "baseline.serving.latency_slo)", example="25 ms"), starter=False)
    headroom: float | None = field(Fraction("Serving: spare capacity wanted at the peak, as a fraction of the load "
                                            "(default 0)"), starter=False)
    latency: Latency | None = field(Section(Latency, "Serving: p99 objectives of end-to-end latency, time to first "
                                            "token and time per output token (any of them)"), starter=False)
    attainment: float | None = field(Share("Serving: share of requests that must meet every per-request "
                                           "objective of goal.latency (ttft, tpot, e2e) at once, judged from "
                                           "per-request records (99 % and 0.99 read alike)"), starter=False)
    cost_per_hour: float | None = field(Quantity(u.MONEY_RATE, "Serving: budget per hour of service (the field's "
                                                 "name says the rate: 400 USD is 400 USD per hour)",
                                                 per_name=(u.MONEY, 3600.0),
                                                 example="400 USD/h"), starter=False)

    def check(self) -> Checks:
        if self.p99_latency is not None and self.latency is not None and self.latency.p99 is not None \
                and self.latency.p99 != self.p99_latency:
            yield "latency.p99", "goal.p99_latency already states the p99 objective: give it once"
        if self.attainment is not None and not (self.latency and self.latency.per_request):
            yield "attainment", ("goal.attainment is the share of requests meeting every per-request objective: "
                                 "state them in goal.latency (ttft, tpot, e2e)")

    @property
    def serving_fields(self) -> tuple[str, ...]:
        """The serving goal's fields that are given."""
        return tuple(name for name in SERVING_GOAL_FIELDS if getattr(self, name) is not None)

    @property
    def per_run_fields(self) -> tuple[str, ...]:
        return tuple(name for name in ("time_per_run", "cost_per_run") if getattr(self, name) is not None)


@dataclass(frozen=True)
class ProjectInfo:
    """Title block and problem statement."""

    title: str = field(Text("Report title", example="My distributed training design"), required=True)
    authors: tuple[str, ...] = field(Names("Author or list of authors", example="[Your Name]"), ())
    revision: str | None = field(Text("Design revision shown in the running header, e.g. r4", example="r1"))
    date: str | None = field(Text("Date of this revision (YYYY-MM-DD); also fixes the PDF's creation date",
                                   example="2026-01-01"))
    workload: Workload | None = field(OneOf("Kind of workload", WORKLOADS))
    problem: str | None = field(Text("Why one machine is not enough",
                                      example="One epoch takes 9 hours on one node; the team needs it nightly."))
    goal: Goal | None = field(Section(Goal))


# --------------------------------------------------------------------------------------------------------- hardware
@dataclass(frozen=True)
class RuntimeMemory:
    """The bytes a device holds beside its tensors (methods.md#runtime-memory); each default is a published
    measurement."""

    context: float = field(Quantity(u.DATA, "The CUDA context and library workspaces, per device", allow_zero=True,
                                    example="1 GB"), 1e9)
    per_group: float = field(Quantity(u.DATA, "One communicator's buffers, per device (NCCL)", allow_zero=True,
                                      example="0.7 GB"), 0.7e9)
    all_to_all: float = field(Quantity(u.DATA, "The all-to-all's buffers of a mixture of experts, per device",
                                       allow_zero=True, example="3.3 GB"), 3.3e9)
    fragmentation: float = field(Number(doc="φ: the share of the allocator's memory it cannot reuse (below 0.9)",
                                        minimum=0.0, maximum=0.9, example="0.15"), 0.15)


@dataclass(frozen=True)
class PeakFlops:
    """A node's dense peak at each GEMM precision (methods.md#precision): the datasheets' figures "with sparsity"
    are twice these."""

    bf16: float | None = field(Quantity(u.COMPUTE_RATE, "BF16 dense (default peak_compute)", example="7.9 PFLOP/s"))
    fp16: float | None = field(Quantity(u.COMPUTE_RATE, "FP16 dense (default peak_compute)", example="7.9 PFLOP/s"))
    fp8: float | None = field(Quantity(u.COMPUTE_RATE, "FP8 dense", example="15.8 PFLOP/s"))
    tf32: float | None = field(Quantity(u.COMPUTE_RATE, "TF32 dense", example="3.96 PFLOP/s"))
    fp32: float | None = field(Quantity(u.COMPUTE_RATE, "FP32, without tensor cores", example="0.54 PFLOP/s"))


@dataclass(frozen=True)
class Hardware:
    """One node of the target cluster."""

    name: str | None = field(Text("Node description", example="8-GPU node"))
    peak_compute: float | None = field(Quantity(u.COMPUTE_RATE, "π: peak compute of one node, BF16/FP16 dense "
                                                "(default peak_flops.bf16)", example="7.9 PFLOP/s"))
    peak_flops: PeakFlops | None = field(Section(PeakFlops, "Peak compute of one node per GEMM precision, for runs or "
                                                 "plans at FP8, TF32 or FP32"), starter=False)
    memory_bandwidth: float | None = field(Quantity(u.BANDWIDTH, "β: memory bandwidth of one node",
                                                    example="26.8 TB/s"))
    memory_capacity: float | None = field(Quantity(u.DATA, "Accelerator memory of one node in all", example="640 GB"))
    devices_per_node: int = field(Count("Accelerators per node (each holds its own replica under data "
                                        "parallelism)", "8"), 1)
    device_memory: float | None = field(Quantity(u.DATA, "Memory of one accelerator, the memory wall's capacity "
                                                 "(default memory_capacity / devices_per_node)", example="80 GB"),
                                        starter=False)
    network_bandwidth: float | None = field(Quantity(u.BANDWIDTH, "β_net: network bandwidth per node",
                                                     example="50 GB/s"))
    network_latency: float | None = field(Quantity(u.TIME, "α: network latency per hop", example="8 us"))
    intra_node_bandwidth: float | None = field(Quantity(u.BANDWIDTH, "Bandwidth between a node's devices (NVLink or "
                                                        "PCIe): tensor parallelism's all-reduces",
                                                        example="450 GB/s"), starter=False)
    intra_node_latency: float | None = field(Quantity(u.TIME, "Latency of one message between a node's devices",
                                                      allow_zero=True, example="2 us"), starter=False)
    io_bandwidth: float | None = field(Quantity(u.BANDWIDTH, "Storage read bandwidth, for I/O floors",
                                                example="4 GB/s"))
    storage: float | None = field(Quantity(u.DATA, "Local storage of one node (the data wall)", example="30 TB"),
                                  starter=False)
    cores: int | None = field(Count("CPU cores of one node: a run with more ranks per node is oversubscribed", "2"),
                              starter=False)
    nodes_available: int | None = field(NodeCount("Nodes the cluster has: a run on more shares hardware", "64"),
                                        starter=False)
    runtime_memory: RuntimeMemory | None = field(Section(RuntimeMemory, "Runtime memory beside the tensors "
                                                         "(default: the published figures, with a complete model "
                                                         "shape)"), starter=False)

    @property
    def memory_per_device(self) -> float | None:
        """What one accelerator holds: device_memory, else the node's memory shared among its devices."""
        if self.device_memory is not None:
            return self.device_memory
        return self.memory_capacity / self.devices_per_node if self.memory_capacity is not None else None

    def peak_at(self, precision: Precision) -> float | None:
        """π_node(pr): hardware.peak_flops' entry; BF16's and FP16's default to peak_compute (methods.md#precision)."""
        given: float | None = getattr(self.peak_flops, precision) if self.peak_flops is not None else None
        if given is None and precision in ("bf16", "fp16"):
            return self.peak_compute
        return given

    def __post_init__(self) -> None:
        # peak_compute keeps its meaning, BF16 dense, and every analysis reads it: a node described by its peaks per
        # precision alone gives it through peak_flops.bf16 (methods.md#precision)
        if self.peak_compute is None and self.peak_flops is not None and self.peak_flops.bf16 is not None:
            object.__setattr__(self, "peak_compute", self.peak_flops.bf16)

    def check(self) -> Checks:
        if (self.device_memory is not None and self.memory_capacity is not None
                and self.device_memory * self.devices_per_node > self.memory_capacity * (1 + 1e-9)):
            yield "device_memory", (f"{self.devices_per_node} devices of this memory hold more than "
                                    "memory_capacity, the node's memory in all")
        bf16 = self.peak_flops.bf16 if self.peak_flops is not None else None
        if bf16 is not None and self.peak_compute is not None and abs(bf16 - self.peak_compute) > 1e-9 * bf16:
            yield "peak_flops.bf16", ("peak-flops-conflict: peak_compute is the BF16 dense peak, and peak_flops.bf16 "
                                      "gives another: give one, or make them agree")


# --------------------------------------------------------------------------------------------------------- baseline
@dataclass(frozen=True)
class Step:
    """One profiled step of the single-machine baseline."""

    name: str = field(Text("Step name", example="forward+backward"), required=True)
    time: float = field(Quantity(u.TIME, "Measured time of the step", example="5.1 s"), required=True)
    flops: float | None = field(Quantity(u.COMPUTE, "W: floating-point work of the step", allow_zero=True,
                                         example="2.4e16 FLOP"))
    bytes: float | None = field(Quantity(u.DATA, "Q: memory traffic of the step", allow_zero=True, example="3.1e13 B"))
    io_bytes: float | None = field(Quantity(u.DATA, "Q_io: storage I/O of the step", allow_zero=True,
                                            example="2.0e9 B"))
    net_bytes: float | None = field(Quantity(u.DATA, "Q_net: bytes it would exchange if distributed",
                                             allow_zero=True, example="5.2e9 B"))


@dataclass(frozen=True)
class MemorySplit:
    """The bytes per parameter as weights, gradients and optimizer state (ZeRO shards each from its stage on)."""

    weights: float = field(Quantity(u.DATA, "Weights per parameter (bf16)", example="2 B"), 2.0)
    gradients: float = field(Quantity(u.DATA, "Gradients per parameter (bf16)", allow_zero=True, example="2 B"), 2.0)
    optimizer: float = field(Quantity(u.DATA, "Optimizer state per parameter (fp32 master, Adam m and v)",
                                      allow_zero=True, example="12 B"), 12.0)

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


@dataclass(frozen=True)
class Memory:
    """What one replica must hold (the memory wall)."""

    parameters: float = field(Positive("Number of model parameters"), required=True)
    bytes_per_parameter: float | None = field(
        Quantity(u.DATA, "Bytes of state per parameter (default 16 B, mixed-precision Adam; 2 B, bf16 weights, in a "
                 "serving project)", example="16 B"))
    activations: float | None = field(Quantity(u.DATA, "Activation memory", allow_zero=True, example="18 GB"))
    other: float | None = field(Quantity(u.DATA, "Other resident memory (buffers, KV cache)", allow_zero=True,
                                         example="4 GB"), starter=False)
    split: MemorySplit | None = field(Section(MemorySplit), starter=False)
    expert_parameters: float | None = field(Positive("Mixture of experts: the parameters that live in experts (part "
                                                     "of parameters), sharded by design.parallelism.expert"),
                                            starter=False)

    def bytes_per(self, serving: bool) -> float:
        """Bytes per parameter: the split's sum, else as given, else 16 B for training and 2 B for a service
        (the 16 B Adam stack is a training default)."""
        if self.split is not None:
            return self.split.total
        if self.bytes_per_parameter is not None:
            return self.bytes_per_parameter
        return 2.0 if serving else 16.0

    @property
    def per_parameter(self) -> MemorySplit:
        """The split as given, else 2 + 2 + 12 B scaled to bytes_per_parameter (16 B: mixed-precision Adam)."""
        if self.split is not None:
            return self.split
        scale = (self.bytes_per_parameter or 16.0) / 16.0
        return MemorySplit(2.0 * scale, 2.0 * scale, 12.0 * scale)

    def check(self) -> Checks:
        if self.split is not None and self.bytes_per_parameter is not None \
                and abs(self.split.total - self.bytes_per_parameter) > 1e-9 * self.split.total:
            yield "split", (f"weights + gradients + optimizer make {self.split.total:g} B per parameter but "
                            f"bytes_per_parameter says {self.bytes_per_parameter:g} B: give one, or make them agree")
        if self.expert_parameters is not None and self.expert_parameters > self.parameters:
            yield "expert_parameters", (f"{self.expert_parameters:g} expert parameters are more than the "
                                        f"{self.parameters:g} parameters they are part of")


@dataclass(frozen=True)
class Training:
    """Training volume and deadline (the time wall)."""

    parameters: float = field(Positive("Number of model parameters"), required=True)
    tokens: float = field(Quantity(u.WORK, "Training tokens", example="1.3e10 token"), required=True)
    mfu: float | None = field(Number("Model FLOP utilisation, in (0, 1] (without it, the time wall uses the MFU "
                                     "measured at the reference scale, from the model's shape)", minimum=0.0,
                                     maximum=1.0, exclusive_minimum=True, example="0.4"))
    deadline: float | None = field(Quantity(u.TIME, "Time allowed for the training run", example="90 min"))
    precision: Precision | None = field(OneOf("The GEMMs' precision of the runs: MFU and HFU are against its peak "
                                              "(hardware.peak_flops; default bf16)", PRECISIONS), starter=False)


@dataclass(frozen=True)
class Dataset:
    """The data set (the data wall, with hardware.storage)."""

    size: float = field(Quantity(u.DATA, "Size of the data set", example="120 GB"), required=True)


@dataclass(frozen=True)
class Serving:
    """Inference load (the serving wall)."""

    requests_per_second: float | None = field(Quantity(u.RATE, "Offered load", example="50000 request/s"))
    capacity_per_replica: float | None = field(Quantity(u.RATE, "Load one replica sustains", example="2000 request/s"))
    p99_latency: float | None = field(Quantity(u.TIME, "Measured 99th-percentile latency", example="35 ms"))
    latency_slo: float | None = field(Quantity(u.TIME, "Latency objective", example="20 ms"))
    kv_bytes_per_token: float | None = field(Quantity(u.DATA, "KV cache per token in flight: layers × KV heads × "
                                                      "head dim × 2 (K and V) × bytes", example="327680 B"),
                                             starter=False)
    tokens_in_flight: float | None = field(Positive("Tokens held in one replica's KV cache at the peak: concurrent "
                                                    "sequences × their context"), starter=False)
    input_tokens_per_output: float | None = field(Positive("Input (prompt) tokens per output token, when the load "
                                                           "counts output tokens: says which tokens a price is per"),
                                                  starter=False)

    @property
    def kv_cache_bytes(self) -> float | None:
        """One replica's KV cache at the peak: kv_bytes_per_token × tokens_in_flight, when both are given."""
        if self.kv_bytes_per_token is None or self.tokens_in_flight is None:
            return None
        return self.kv_bytes_per_token * self.tokens_in_flight

    def check(self) -> Checks:
        if (self.requests_per_second is None) != (self.capacity_per_replica is None):
            name = "capacity_per_replica" if self.capacity_per_replica is None else "requests_per_second"
            yield name, "requests_per_second and capacity_per_replica go together"
        if (self.p99_latency is None) != (self.latency_slo is None):
            name = "latency_slo" if self.latency_slo is None else "p99_latency"
            yield name, "p99_latency and latency_slo go together"


@dataclass(frozen=True)
class ModelShape:
    """The model's shape, for the layout's exchanges (methods.md#22-a-parallel-layout-designparallelism)."""

    # past any model trained (the largest have a few hundred): a bound on the arrays the layout evaluates per layer
    layers: int = field(Whole(doc="Transformer layers", minimum=1, maximum=MAX_LAYERS, example="80"), required=True)
    hidden: int = field(Count("Hidden size", "8192"), required=True)
    sequence: int = field(Count("Sequence length in tokens", "4096"), required=True)
    micro_batch: int = field(Count("Sequences per micro-batch", "1"), 1)
    moe_layers: int | None = field(Count("Mixture of experts: the layers with experts (default: layers)", "32"),
                                   starter=False)
    top_k: int = field(Count("Mixture of experts: the experts each token is routed to", "2"), 2, starter=False)
    heads: int | None = field(Count("a: attention heads (with vocabulary, the shape is complete: activations, FLOPs "
                                    "and MFU are modelled from it)", "64"), starter=False)
    vocabulary: int | None = field(Count("V: vocabulary size", "51200"), starter=False)
    head_dim: float | None = field(Positive("d_h: the dimension of one head (default hidden / heads)", "128"),
                                   starter=False)
    global_batch: int | None = field(Count("B: sequences per optimizer step (default b·d·m of the declared layout)",
                                           "1536"), starter=False)
    flash_attention: bool = field(Flag("The attention kernel never stores the s×s scores and its backward "
                                       "recomputes them (FlashAttention; PyTorch's SDPA kernels)"), False,
                                  starter=False)
    hardware_flops_per_token: float | None = field(Quantity(u.COMPUTE, "Hardware FLOPs per token, as published or "
                                                            "counted (replaces the model's for HFU)",
                                                            example="4.1 TFLOP"), starter=False)
    # The layer's description (methods.md#llama-style-layers): a preset, and each part it sets given apart
    layer: LayerPreset | None = field(OneOf("The layer's preset: gpt3 (GeLU, LayerNorm, dropout, tied embeddings, "
                                            "learned positions, biases) or llama (SwiGLU, RMSNorm, none of the "
                                            "rest; default gpt3)", LAYER_PRESETS), starter=False)
    mlp: MlpKind | None = field(OneOf("The MLP: gelu (two matrices) or swiglu (three; default the preset's)",
                                      MLP_KINDS), starter=False)
    ffn_hidden: int | None = field(Count("f: the MLP's hidden size (default 4h for gelu; for swiglu 8h/3 rounded up "
                                         "to a multiple of 256)", "14336"), starter=False)
    kv_heads: int | None = field(Count("a_kv: key/value heads, grouped-query attention (default heads)", "8"),
                                 starter=False)
    norm: NormKind | None = field(OneOf("The normalization (default the preset's)", NORM_KINDS), starter=False)
    dropout: bool | None = field(Flag("Dropout layers are present and their masks stored (default the preset's)"),
                                 starter=False)
    tied_embeddings: bool | None = field(Flag("The output layer shares the input embedding (default the "
                                              "preset's)"), starter=False)
    position: PositionKind | None = field(OneOf("Position embeddings: learned (s·h parameters) or rotary (default "
                                                "the preset's)", POSITION_KINDS), starter=False)
    bias: bool | None = field(Flag("Linear layers carry biases (default the preset's)"), starter=False)
    fused_swiglu: bool | None = field(Flag("SwiGLU keeps only its input (Megatron's fused kernel) rather than every "
                                           "operand (eager PyTorch; default true)"), starter=False)
    experts: int | None = field(Count("E_n: the experts of one mixture-of-experts layer", "8"), starter=False)
    attention_window: int | None = field(Count("w: tokens of sliding-window attention (default full attention)",
                                               "4096"), starter=False)
    window_layers: int | None = field(Whole(doc="The layers that use the window (default every layer)", minimum=1,
                                            maximum=MAX_LAYERS, example="32"), starter=False)

    @property
    def layer_described(self) -> bool:
        """Some field of the layer's description is given: parameters and FLOPs count its layer, where without
        one they keep Narayanan's eq. (2) and GPT-3's terms (methods.md#llama-style-layers)."""
        return any(getattr(self, name) is not None for name in LAYER_FIELDS)

    @property
    def complete(self) -> bool:
        """Heads and vocabulary given: activations, FLOPs and MFU are modelled from the shape."""
        return self.heads is not None and self.vocabulary is not None

    @property
    def dimension_per_head(self) -> float:
        """d_h: as given, else hidden / heads."""
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden / self.heads if self.heads else float(self.hidden)

    @property
    def expert_layers(self) -> int:
        return self.moe_layers if self.moe_layers is not None else self.layers

    @property
    def activation_bytes(self) -> float:
        """A = micro_batch × sequence × hidden × 2 B: one bf16 activation tensor of a micro-batch."""
        return float(self.micro_batch * self.sequence * self.hidden * 2)

    def check(self) -> Checks:
        if self.moe_layers is not None and self.moe_layers > self.layers:
            yield "moe_layers", f"{self.moe_layers} layers with experts, of {self.layers} layers in all"
        if not self.complete or self.heads is None:  # the layer's rules hold a shape the analyses read
            return
        if self.kv_heads is not None and self.heads % self.kv_heads:
            yield "kv_heads", (f"kv-heads: {self.kv_heads} key/value heads do not divide the {self.heads} attention "
                               "heads (each group of query heads shares one)")
        if self.window_layers is not None and self.window_layers > self.layers:
            yield "window_layers", (f"window-layers: {self.window_layers} layers with a window, of {self.layers} "
                                    "layers in all")


# The fields of ModelShape that describe its layer: any one given switches the counts to the described layer
LAYER_FIELDS = ("layer", "mlp", "ffn_hidden", "kv_heads", "norm", "dropout", "tied_embeddings", "position", "bias",
                "fused_swiglu", "experts", "attention_window", "window_layers")


@dataclass(frozen=True)
class Baseline:
    """Single-machine evidence."""

    steps: tuple[Step, ...] = field(Items(Section(Step), "Profiled steps (where each number comes from: "
                                          "docs/profiling.md)"), ())
    memory: Memory | None = field(Section(Memory))
    training: Training | None = field(Section(Training), starter=False)
    dataset: Dataset | None = field(Section(Dataset), starter=False)
    serving: Serving | None = field(Section(Serving), starter=False)
    model: ModelShape | None = field(Section(ModelShape), starter=False)

    def check(self) -> Checks:
        names = [step.name for step in self.steps]
        for index, name in enumerate(names):
            if name in names[:index]:
                yield "steps", f"step names must be unique: `{name}` appears twice"


# -------------------------------------------------------------------------------------------------------- checklist
@dataclass(frozen=True)
class Pressures:
    """How hard each axis is pushed, each in [0, 1] (drawn as a radar)."""

    data: float | None = field(Fraction("Pressure to distribute data"))
    training: float | None = field(Fraction("Pressure to distribute training"))
    model: float | None = field(Fraction("Pressure to distribute the model"))
    inference: float | None = field(Fraction("Pressure to distribute inference"))
    coordination: float | None = field(Fraction("Pressure to coordinate the cluster"))
    intelligence: float | None = field(Fraction("Pressure to distribute intelligence"))


@dataclass(frozen=True)
class Tax:
    """The interactive communication tax: fanout × hop latency against the latency objective."""

    fanout: int = field(Count("Services or shards one request touches", "6"), required=True)
    hop_latency: float = field(Quantity(u.TIME, "Latency of one hop", example="0.4 ms"), required=True)
    latency_slo: float = field(Quantity(u.TIME, "Latency objective of a request", example="20 ms"), required=True)


@dataclass(frozen=True)
class Checklist:
    """Stages 3 to 6 of the design checklist."""

    topology: Topology | None = field(OneOf("Topology", TOPOLOGIES))
    mode: Mode | None = field(OneOf("Processing mode", MODES))
    metric: Metric | None = field(OneOf("Dominant metric", METRICS))
    pressures: Pressures | None = field(Section(Pressures, examples=(
        ("data", "0.2"), ("training", "0.9"), ("model", "0.3"), ("inference", "0"), ("coordination", "0.4"),
        ("intelligence", "0"))), starter=False)
    tax: Tax | None = field(Section(Tax), starter=False)


# ----------------------------------------------------------------------------------------------------------- design
@dataclass(frozen=True)
class Rejected:
    """An alternative the team considered and rejected."""

    choice: str = field(Text("The rejected choice", example="another choice"), required=True)
    why: str | None = field(Text("Why it was rejected", example="Why it would not do here."))


# The starter's answer for each slot (a compute-bound training job, data parallel): how, and why.
_SLOT_EXAMPLES = {
    "partitioning": ("8 shards by example; the model replicated", "The model fits one device; the ceiling is compute "
                     "time."),
    "communication": ("ring all-reduce of bf16 gradients", "Every node holds a full replica, so one symmetric "
                      "collective suffices."),
    "consistency": ("every step waits for all gradients", "Results must match the single-node baseline."),
    "coordination": ("one rank-zero driver", "One driver launches and monitors the workers."),
    "fault_tolerance": ("a checkpoint every 20 min", "A lost node costs one checkpoint interval."),
    "load_balancing": ("equal shards", "Examples are of similar length."),
}


def _slot_spec(name: str) -> Section[Slot]:
    detail, why = _SLOT_EXAMPLES[name]
    return Section(Slot, f"Design slot `{name}`; vocabulary: {', '.join(SLOT_VOCABULARY[name])}",
                   examples=(("choice", SLOT_VOCABULARY[name][0]), ("detail", detail), ("why", why)))


@dataclass(frozen=True)
class Slot:
    """One design slot: a choice (or several, a hybrid), its justification and rejected alternatives."""

    choice: tuple[str, ...] = field(Choices(doc="Choice, or a list of choices for a hybrid"), required=True)
    detail: str | None = field(Text("How the choice is carried out"), starter=False)
    why: str | None = field(Text("Justification"))
    rejected: tuple[Rejected, ...] = field(Items(Section(Rejected), "Alternatives considered"), (), starter=False)


@dataclass(frozen=True)
class Slots:
    """The six slots of the distributed design."""

    partitioning: Slot | None = field(_slot_spec("partitioning"))
    communication: Slot | None = field(_slot_spec("communication"))
    consistency: Slot | None = field(_slot_spec("consistency"))
    coordination: Slot | None = field(_slot_spec("coordination"))
    fault_tolerance: Slot | None = field(_slot_spec("fault_tolerance"))
    load_balancing: Slot | None = field(_slot_spec("load_balancing"))


@dataclass(frozen=True)
class Parallelism:
    """A parallel layout: data × tensor × pipeline devices, with ZeRO sharding over the data-parallel group."""

    data: int | None = field(Whole(doc="d: data-parallel degree (default: the devices left by tensor and pipeline)",
                                   minimum=1, maximum=MAX_NODES * 1024, example="16"))
    tensor: int = field(Whole(doc="t: tensor-parallel degree (Megatron)", minimum=1, maximum=4096, example="8"), 1)
    pipeline: int = field(Whole(doc="pp: pipeline stages", minimum=1, maximum=4096, example="4"), 1)
    micro_batches: int = field(Whole(doc="m: micro-batches per step (the 1F1B bubble is (pp − 1)/m)", minimum=1,
                                     maximum=1 << 20, example="32"), 1)
    zero_stage: int = field(Whole(doc="ZeRO stage: 0 none, 1 optimizer state, 2 and gradients, 3 and weights "
                                      "sharded over the data-parallel group", minimum=0, maximum=3, example="1"), 0)
    overlap: float = field(Fraction("Share of the data-parallel collective hidden behind compute"), 0.0)
    expert: int = field(Whole(doc="e: expert-parallel degree (mixture of experts): each expert lives on d / e of the "
                                  "data-parallel ranks; e divides d", minimum=1, maximum=MAX_NODES * 1024,
                              example="8"), 1, starter=False)
    virtual_stages: int = field(Whole(doc="v: model chunks per device (the interleaved 1F1B schedule): the bubble "
                                          "divides by v, the pipeline sends multiply by v", minimum=1, maximum=4096,
                                      example="4"), 1, starter=False)
    recompute: Recompute = field(OneOf("Activation recomputation: none, selective (the attention scores) or full "
                                       "(each layer's forward again)", RECOMPUTES), "none", starter=False)
    sequence_parallel: bool = field(Flag("Megatron sequence parallelism in the tensor-parallel group: the "
                                         "activations outside attention are sharded over t too"), False,
                                    starter=False)
    context: int = field(Whole(doc="cp: context-parallel degree (Megatron context_parallel_size): each sequence "
                                   "sharded over cp devices", minimum=1, maximum=4096, example="2"), 1, starter=False)
    context_comm: ContextComm = field(OneOf("How context parallelism exchanges keys and values (Megatron "
                                            "cp_comm_type): p2p overlaps attention, all_gather does not",
                                            CONTEXT_COMMS), "p2p", starter=False)
    layers_per_stage: tuple[int, ...] | None = field(Items(Whole(doc="A stage's layers", minimum=1,
                                                                 maximum=MAX_LAYERS, example="20"),
                                                           "Each pipeline stage's layers, first first (default: "
                                                           "equal, else Megatron's first/last split)",
                                                           max_items=4096), starter=False)

    @property
    def model_parallel(self) -> int:
        """t·p·cp: the devices one replica of the model spans."""
        return self.tensor * self.pipeline * self.context


MAX_SEARCHED_LAYOUTS = 10_000_000  # a bound on the arrays the plan search allocates per scale


@dataclass(frozen=True)
class Calibration:
    """The project's own graded predictions, pooled with the published curves that grade each prediction."""

    ledger: str | None = field(Text("A history.json written by `reportgen history` beside the project file: its "
                                    "graded predictions join the published cases of their cell", example=
                                    "build/history-project/history.json"))
    own_weight: float = field(Number("What each of the project's graded predictions counts for against one published "
                                     "curve (0: not pooled)", minimum=0.0, maximum=100.0, example="4"), 4.0)


@dataclass(frozen=True)
class PlanSearch:
    """The plan search's options: which layouts of the planned devices it enumerates and how it ranks them."""

    efficiency: float | None = field(Number("η: the share of the peak the compute phases reach, when no measured run "
                                            "calibrates it", minimum=0.0, maximum=1.0, exclusive_minimum=True,
                                            example="0.5"))
    recompute: tuple[Recompute, ...] = field(Items(OneOf("A recomputation policy searched", RECOMPUTES),
                                                   "Recomputation policies searched (default all three)"),
                                             RECOMPUTES)
    zero_stages: tuple[int, ...] = field(Items(Whole(doc="A ZeRO stage searched", minimum=0, maximum=3, example="1"),
                                               "ZeRO stages searched (default 0 to 3)"), (0, 1, 2, 3))
    sequence_parallel: bool = field(Flag("Sequence parallelism on wherever t > 1 (it adds no communication)"), True)
    max_tensor: int | None = field(Count("Largest tensor-parallel degree searched (default devices_per_node)", "8"))
    micro_batch: tuple[int, ...] = field(Items(Count("A micro-batch size searched", "1"),
                                               "Micro-batch sizes searched (default baseline.model.micro_batch)",
                                               max_items=16), ())
    zero_with_pipeline: bool = field(Flag("Search ZeRO stages 2 and 3 with pipelines (DeepSpeed refuses them; "
                                          "Llama 3 ran gradient sharding with pipelines)"), False)
    scales: tuple[int, ...] = field(Items(NodeCount("A node count", "128"), "Further node counts for the cheapest "
                                          "scale and layout per price regime", max_items=64), ())
    top: int = field(Whole(doc="K: layouts listed, the best first", minimum=1, maximum=100, example="5"), 5)
    margin: float = field(Fraction("Relative gap within which the declared layout is as good as the best"), 0.05)
    memory_headroom: float = field(Fraction("Share of device memory kept free beyond the runtime memory modelled"),
                                   0.0)
    expert_parallel: tuple[int, ...] = field(Items(Count("An expert-parallel degree searched", "8"),
                                                   "Expert-parallel degrees searched (default: the divisors of d that "
                                                   "divide baseline.model.experts; without it, the declared e)",
                                                   max_items=64), ())
    context_parallel: tuple[int, ...] = field(Items(Count("A context-parallel degree searched", "2"),
                                                    "Context-parallel degrees searched (default: the declared cp)",
                                                    max_items=64), ())
    micro_batch_saturation: float | None = field(Positive("x₀: the GEMM size per micro-batch (b·s/cp·h) at which a "
                                                          "device reaches half its asymptotic efficiency, when the "
                                                          "runs hold one micro-batch size (default 2.74e6, "
                                                          "Narayanan et al. 2021 Fig. 7)", "2.74e6"))
    max_layouts: int = field(Whole(doc="Layouts evaluated per scale at most", minimum=1,
                                   maximum=MAX_SEARCHED_LAYOUTS, example="1000000"), 1_000_000)
    precision: Precision | None = field(OneOf("The GEMM precision layouts are timed at (default "
                                              "baseline.training.precision)", PRECISIONS))


@dataclass(frozen=True)
class Design:
    """The declared distributed design."""

    axis: Axis | None = field(OneOf("Axis of distribution the team declares", AXES,
                                   example="distribute training"))
    nodes: int | None = field(NodeCount("Node count the team plans to request"))
    slots: Slots | None = field(Section(Slots))
    parallelism: Parallelism | None = field(Section(Parallelism), starter=False)


# ------------------------------------------------------------------------------------------------------- prediction
@dataclass(frozen=True)
class Collective:
    """One measured collective time."""

    nodes: int = field(NodeCount("Node count"), required=True)
    time: float = field(Quantity(u.TIME, "Measured time of one all-reduce", example="52 ms"), required=True)
    bytes: float | None = field(Quantity(u.DATA, "Message size (nccl-tests' size column): fits the link bandwidth",
                                         example="256 MiB"), starter=False)
    ranks: int | None = field(Count("Ranks (GPUs) the collective ran over, from nccl-tests' header: the fitted "
                                    "bandwidth is also shown as nccl-tests' bus bandwidth", "16"), starter=False)


@dataclass(frozen=True)
class Prediction:
    """Inputs of the alpha-beta communication model (ring all-reduce unless the design names another pattern)."""

    t_comp: float | None = field(Quantity(u.TIME, "T_comp: single-machine compute time of one step", example="5.1 s"))
    alpha: float | None = field(Quantity(u.TIME, "α: latency per hop (default: hardware.network_latency)",
                                         allow_zero=True, example="8 us"), starter=False)
    beta: float | None = field(Quantity(u.TIME, "β: time to move the model once over one link (or message_bytes)",
                                        allow_zero=True, example="52 ms"), starter=False)
    message_bytes: float | None = field(Quantity(u.DATA, "Bytes all-reduced per step (β = bytes / bandwidth)",
                                                 example="2.6 GB"))
    max_nodes: int = field(NodeCount("Largest node count considered", "4096"), 4096, starter=False)
    collectives: tuple[Collective, ...] = field(Items(Section(Collective), "Measured all-reduce times"), (),
                                                starter=False)
    collectives_file: str | None = field(Text("CSV of measured collectives beside the project file (nodes, bytes, "
                                              "time); `reportgen ingest nccl-tests` appends to it",
                                              example="collectives.csv"), starter=False)
    fit_min_bytes: float | None = field(Quantity(u.DATA, "Smallest message the size-aware fit uses (default: the "
                                                 "measured size nearest message_bytes, and larger ones)",
                                                 example="256 MiB"), starter=False)
    use_fit: bool = field(Flag("Predict with the α and β fitted from `collectives`"), False, starter=False)
    pattern: PatternName | None = field(OneOf("Communication pattern of T_comm(p) (default: from "
                                              "design.slots.communication, else ring)", PATTERNS,
                                              example="parameter-server"), starter=False)
    servers: int = field(Count("Parameter servers S (pattern parameter-server)", "4"), 1, starter=False)
    peers: int = field(Count("Peers k each node exchanges with per step (pattern gossip)", "2"), 2, starter=False)
    exchanges: int | None = field(Count("All-to-all exchanges E per step (pattern all-to-all: four per MoE layer)",
                                        "4"), starter=False)

    def check(self) -> Checks:
        yield from _at_most_one(self, "beta", "message_bytes")
        if self.pattern == "all-to-all" and self.exchanges is None:
            yield "exchanges", "the all-to-all pattern needs exchanges, the all-to-alls per step (four per MoE layer)"
        sized = {c.bytes is not None for c in self.collectives}
        if len(sized) > 1:
            yield "collectives", "give every collective its message bytes, or none"
        if sized == {True} and self.message_bytes is None:
            yield "message_bytes", ("collectives with message bytes fit a link bandwidth: give message_bytes, the "
                                    "bytes all-reduced per step, so that β = message_bytes / bandwidth")
        if self.max_nodes > 10**7:
            yield "max_nodes", "must be at most 10000000"
        points = {(c.nodes, c.bytes) for c in self.collectives if c.nodes > 1}
        too_few = len({c.nodes for c in self.collectives if c.nodes > 1}) < 2 if sized != {True} else len(points) < 2
        # With collectives_file the collectives are read after this section: checked again once they are in.
        if self.use_fit and (self.collectives or self.collectives_file is None) and too_few:
            yield "use_fit", ("needs measured collectives at two or more distinct node counts above 1 (or, with "
                              "message bytes, two or more sizes)")


# ---------------------------------------------------------------------------------------------------------- scaling
def _run_time(doc: str, example: str, *, zero: bool = True) -> Quantity:
    return Quantity(u.TIME, doc, allow_zero=zero, bare_in_time_unit=True, example=example)


BREAKDOWN_FIELDS = ("compute", "communication", "idle", "io", "bubble")
WALL_TOLERANCE = 1e-6  # relative: a wall time this little below the sum of its parts is rounding, not a contradiction


@dataclass(frozen=True)
class Run:
    """One measured run, in one of three forms: breakdown, total or throughput."""

    # A whole node count; with scaling.axis: load, a load level (concurrency, active sessions) that may be fractional.
    nodes: float = field(Number("Node count; a load level, possibly fractional, with scaling.axis: load", minimum=0.0,
                                exclusive_minimum=True, maximum=MAX_NODES, whole_as_int=True, example="8"),
                         required=True)
    compute: float | None = field(_run_time("Compute time (breakdown form)", "4150 s", zero=False))
    communication: float | None = field(_run_time("Communication time (breakdown form)", "1500 s"))
    idle: float | None = field(_run_time("Idle time at barriers (breakdown form)", "1300 s"))
    io: float | None = field(_run_time("I/O time (breakdown form, optional)", "90 s"), starter=False)
    bubble: float | None = field(_run_time("Pipeline bubble time (breakdown form, optional): attributed as its own "
                                           "cause", "50 s"), starter=False)
    time: float | None = field(_run_time("Wall time (total form; beside a breakdown, the whole command's wall, whose "
                                         "rest is start-up)", "7040 s", zero=False), starter=False)
    throughput: float | None = field(Quantity(u.RATE, "Work per unit time (throughput form): items per second, or "
                                              "FLOP/s as weak-scaling papers publish it", bare_in_time_unit=True,
                                              example="2000 sequence/s", also=(u.COMPUTE_RATE,)), starter=False)
    energy: float | None = field(Quantity(u.ENERGY, "Measured energy of the run (replaces the model)",
                                          example="78 kWh"), starter=False)
    co2_recorded: float | None = field(Quantity(u.MASS, "CO2e CodeCarbon recorded for the run, with its own "
                                                "carbon intensity of the day (`ingest codecarbon` writes it): shown "
                                                "beside the report's", allow_zero=True, example="0.8 kg"),
                                       starter=False)
    p99_latency: float | None = field(_run_time("Serving: 99th-percentile latency measured at this scale's "
                                                "throughput (a load test)", "18 ms", zero=False), starter=False)
    ttft_p99: float | None = field(_run_time("Serving: 99th-percentile time to first token measured at this scale's "
                                             "throughput", "1.2 s", zero=False), starter=False)
    tpot_p99: float | None = field(_run_time("Serving: 99th-percentile time per output token measured at this "
                                             "scale's throughput", "95 ms", zero=False), starter=False)
    # A load point of a service (methods.md#a-service-judged-from-its-requests): rows at one node count with
    # different offered loads are points of its load curve; with the same load, repeats.
    offered: float | None = field(Quantity(u.RATE, "Serving: the rate the load test offered (an open load)",
                                           example="12 request/s"), starter=False)
    concurrency: int | None = field(Count("Serving: the requests kept in flight (a closed load)", "8"),
                                    starter=False)
    attainment: float | None = field(Share("Serving: share of the load test's requests meeting every per-request "
                                           "objective (`ingest serving` writes it from the records)"), starter=False)
    goodput: float | None = field(Quantity(u.RATE, "Serving: requests meeting every objective, per second of the "
                                           "load test's window", allow_zero=True, example="9.6 request/s"),
                                  starter=False)
    workers: tuple[float, ...] = field(Items(_run_time("Compute time of one worker", "4100 s", zero=False),
                                             "Per-worker compute times"), (), starter=False)
    tokens: float | None = field(Quantity(u.WORK, "Tokens the run processed (for its MFU): default "
                                          "scaling.work_per_run in tokens, else baseline.training.tokens",
                                          example="3.1e9 token"), starter=False)
    flops: float | None = field(Quantity(u.COMPUTE, "Hardware FLOPs the run executed, as a FLOP counter counted them "
                                         "(torch's FlopCounterMode): its HFU", example="1.2e19 FLOP"), starter=False)
    ranks_per_node: int | None = field(Count("Ranks on each machine of this run, for the oversubscription check "
                                             "(measure records it)", "8"), starter=False)
    micro_batch: int | None = field(Count("b: sequences per micro-batch in this run (default "
                                          "baseline.model.micro_batch): runs at two sizes fit the micro-batch "
                                          "efficiency", "4"), starter=False)

    @property
    def form(self) -> RunForm | None:
        """The run's form, or None when its fields mix forms or miss one. A breakdown may carry its wall `time`
        beside it (one row holds both: the rest is start-up)."""
        breakdown = any(getattr(self, name) is not None for name in BREAKDOWN_FIELDS)
        given = [breakdown, self.time is not None and not breakdown, self.throughput is not None]
        if sum(given) != 1:
            return None
        if breakdown and None in (self.compute, self.communication, self.idle):
            return None
        return RUN_FORMS[given.index(True)]

    def oversubscribed(self, cores: int | None) -> bool:
        """More ranks on each machine than it has cores: the ranks shared cores."""
        return cores is not None and self.ranks_per_node is not None and self.ranks_per_node > cores

    @property
    def parts(self) -> float:
        """The breakdown's parts summed: compute, communication, idle, io and bubble."""
        return sum(getattr(self, name) or 0.0 for name in BREAKDOWN_FIELDS)

    @property
    def start_up(self) -> float | None:
        """A breakdown's wall time less its parts: launch, rendezvous, loading and teardown (None without a wall)."""
        if self.time is None or self.form != "breakdown":
            return None
        return max(self.time - self.parts, 0.0)

    def check(self) -> Checks:
        if self.offered is not None and self.concurrency is not None:
            yield "concurrency", ("a load test is open (an offered rate) or closed (a concurrency): give offered or "
                                  "concurrency, not both")
        if self.form is None:
            yield "", ("a run is written in one form: {nodes, compute, communication, idle[, io, bubble][, time]}, "
                            "{nodes, time} or {nodes, throughput}")
        elif self.form == "breakdown" and self.time is not None \
                and self.time < self.parts * (1 - WALL_TOLERANCE):
            yield "time", (f"the wall time ({self.time:.6g} s) is shorter than the breakdown's parts "
                           f"({self.parts:.6g} s): the wall holds every part")


@dataclass(frozen=True)
class Scaling:
    """Measured runs at several node counts, inline or from a CSV file beside the project file."""

    time_unit: float | None = field(Unit(u.TIME, "Unit of bare numbers in the runs, e.g. s"))
    runs: tuple[Run, ...] = field(Items(Section(Run), "One measured run per node count"), ())
    file: str | None = field(Text("CSV of runs beside the project file; `reportgen measure` appends to it",
                                   example="runs.csv"), starter=False)
    axis: ScalingAxis = field(OneOf("What the runs' `nodes` count: whole nodes, or a load level (concurrency, "
                                    "active sessions) that may be fractional, for the scaling fits alone: pricing, "
                                    "energy and decisions need whole nodes", SCALING_AXES), "nodes", starter=False)
    work_per_run: float | None = field(Quantity(u.WORK, "Work in one run (throughput form), e.g. 1.2e8 sequence; "
                                                "in FLOP when the throughput is in FLOP/s",
                                                example="1.2e8 sequence", also=(u.COMPUTE,)), starter=False)
    mode: ScalingMode = field(OneOf("strong: the work per run is fixed (the default); weak: the work per node is "
                                    "fixed and the total grows with p (scaled speedup, Gustafson's serial fraction)",
                                    SCALING_MODES), "strong", starter=False)
    superlinear: str | None = field(Text("Why a speedup above 1.25× ideal is real (the shard starts to fit a cache or "
                                         "the device memory): turns the implausible-speedup warning into a note",
                                         example="the 4-node shard fits in HBM"), starter=False)
    noise: float | None = field(Number("Relative noise of one run (the spread of its log time), for intervals from "
                                       "single runs (default 0.05) and a stated confidence without repeats",
                                       minimum=0.0, exclusive_minimum=True, maximum=1.0, example="0.05"),
                                starter=False)
    batch_changes: bool = field(Flag("The global batch changes between the measured scales (the per-device batch "
                                     "kept as nodes are added): an extrapolation's accuracy is then read from "
                                     "published curves that scaled the same way"), False, starter=False)

    @property
    def form(self) -> RunForm | None:
        return common_form(self.runs)


def capacity_runs(runs: tuple[Run, ...]) -> tuple[Run, ...]:
    """The runs the scaling analyses read as each scale's capacity (methods.md#load-points-and-capacity): at a
    scale measured at several loads (load points of a service), the runs at its highest load, of the mode with the
    more rows (open on a tie), since a lower load measures what was offered, not what the scale can serve; every
    other run as it is. The load curve itself is read from the records."""
    loads: dict[float, dict[str, list[float]]] = {}
    for run in runs:
        if run.offered is not None:
            loads.setdefault(run.nodes, {}).setdefault("open", []).append(run.offered)
        elif run.concurrency is not None:
            loads.setdefault(run.nodes, {}).setdefault("closed", []).append(float(run.concurrency))
    if not loads:
        return runs
    highest: dict[float, tuple[str, float]] = {}
    for nodes, by_mode in loads.items():
        mode = max(by_mode, key=lambda name: (len(by_mode[name]), name == "open"))
        highest[nodes] = (mode, max(by_mode[mode]))

    def kept(run: Run) -> bool:
        if run.nodes not in highest:
            return True
        mode, load = highest[run.nodes]
        return (run.offered if mode == "open" else run.concurrency) == load

    return tuple(run for run in runs if kept(run))


def common_form(runs: Sequence[Run]) -> RunForm | None:
    """The form the runs are analysed in: their one form, or total when wall-time rows sit beside breakdown rows
    that give their wall time too (measure recorded the runs, `ingest trace` completed some);
    None when they cannot be read in one form."""
    forms = {run.form for run in runs}
    if len(forms) == 1:
        return next(iter(forms))
    if forms == {"total", "breakdown"} and all(run.time is not None for run in runs):
        return "total"
    return None


# ---------------------------------------------------------------------------------------------------------- pricing
@dataclass(frozen=True)
class Spot:
    """Spot capacity: a discount, with preemptions."""

    price_fraction: float = field(Fraction("Spot price as a fraction of on-demand"), required=True)
    preemptions_per_node_hour: float = field(Number("λ: preemptions per node-hour", minimum=0.0, example="0.02"),
                                             0.0)
    restart_overhead: float = field(Quantity(u.TIME, "Wall time lost per preemption", allow_zero=True,
                                             example="6 min"), 0.0)


@dataclass(frozen=True)
class Local:
    """Owned hardware: a price fraction, viable only above a utilization."""

    price_fraction: float = field(Fraction("Owned cost per node-hour as a fraction of on-demand"), required=True)
    utilization: float | None = field(Fraction("Expected utilization of the owned nodes"))
    min_utilization: float | None = field(Fraction("Utilization below which owning does not pay"))


@dataclass(frozen=True)
class Regimes:
    """Alternative price regimes."""

    spot: Spot | None = field(Section(Spot, examples=(("price_fraction", "0.43"),)))
    local: Local | None = field(Section(Local, examples=(("price_fraction", "0.6"), ("utilization", "0.45"),
                                                         ("min_utilization", "0.5"))))


@dataclass(frozen=True)
class Pricing:
    """Prices, in the project's currency."""

    currency: str = field(Text("Currency code of every money amount (default USD)", example="USD"), "USD")
    node_hour: float | None = field(Quantity(u.MONEY, "On-demand price of one node-hour", example="55.04 USD"))
    value_of_time: float | None = field(Quantity(u.MONEY_RATE, "Value of one hour of wall-clock time",
                                                 allow_zero=True, example="50 USD/h"))
    runs_per_month: float | None = field(Number("Runs per month, for monthly totals", minimum=0.0,
                                                exclusive_minimum=True, example="30"))
    regimes: Regimes | None = field(Section(Regimes))

    def check(self) -> Checks:
        if not u.is_currency_code(self.currency):  # ASCII A-Z only: "ÉUR" or "ＵＳＤ" once relabelled USD amounts
            yield "currency", f'expected a three-letter currency code like "USD", got "{self.currency}"'


# ----------------------------------------------------------------------------------------------------------- energy
@dataclass(frozen=True)
class Location:
    """Where the nodes run, for the carbon intensity: a country, a cloud region, or an explicit value."""

    country: str | None = field(Text("ISO 3166 alpha-3 country code, e.g. FRA", example="USA"))
    region: str | None = field(Text("Region within the country (USA, CAN: e.g. virginia) or the cloud region",
                                    example="virginia"))
    cloud: str | None = field(Text("Cloud provider (gcp), with region", example="gcp"), starter=False)
    carbon_intensity: float | None = field(Quantity(u.CARBON_INTENSITY, "Explicit carbon intensity",
                                                    allow_zero=True, example="380 g/kWh"), starter=False)

    def check(self) -> Checks:
        yield from _at_most_one(self, "country", "cloud", "carbon_intensity")
        if self.country is None and self.cloud is None and self.carbon_intensity is None:
            yield "country", "give a country, a cloud with a region, or a carbon_intensity"
        if self.cloud is not None and self.region is None:
            yield "region", "a cloud location needs a region, e.g. europe-west9"
        if self.region is not None and self.carbon_intensity is not None:
            yield "region", "a region goes with a country or a cloud, not with an explicit carbon_intensity"


@dataclass(frozen=True)
class Energy:
    """Power draw and location of the nodes."""

    node_power: float | None = field(Quantity(u.POWER, "Average draw of one node while computing", example="5.6 kW"))
    wait_power: float | None = field(Quantity(u.POWER, "Draw while communicating or idle (default node_power)",
                                              example="2.8 kW"))
    pue: float = field(Number("Power usage effectiveness, at least 1", minimum=1.0, example="1.15"), 1.0)
    location: Location | None = field(Section(Location))


# ------------------------------------------------------------------------------------------------------ reliability
@dataclass(frozen=True)
class Reliability:
    """The failure tax."""

    node_mtbf: float = field(Quantity(u.TIME, "Mean time between failures of one node",
                                      example="6300 h"), required=True)
    checkpoint_cost: float = field(Quantity(u.TIME, "δ: time to write one checkpoint", example="45 s"), required=True)
    restart_cost: float = field(Quantity(u.TIME, "R: time to restart after a failure", allow_zero=True,
                                         example="4 min"), 0.0)
    checkpoint_interval: float | None = field(Quantity(u.TIME, "The checkpoint interval the design declares: "
                                                       "compared with Daly's optimum", example="20 min"),
                                              starter=False)


# -------------------------------------------------------------------------------------------------------- decisions
@dataclass(frozen=True)
class Decision:
    """A deployment context: what it optimizes and its limits."""

    name: str = field(Text("Name of the context", example="nightly retrain"), required=True)
    optimize: Objective = field(OneOf("Objective", OBJECTIVES), required=True)
    max_time: float | None = field(Quantity(u.TIME, "Longest acceptable run", example="90 min"))
    max_cost: float | None = field(Quantity(u.MONEY, "Largest acceptable cost per run", example="200 USD"),
                                     starter=False)
    max_co2: float | None = field(Quantity(u.MASS, "Largest acceptable CO2e per run", example="50 kg"), starter=False)
    max_p99_latency: float | None = field(Quantity(u.TIME, "Serving: largest acceptable p99 latency",
                                                   example="15 ms"), starter=False)
    max_cost_per_hour: float | None = field(Quantity(u.MONEY_RATE, "Serving: largest acceptable cost per hour "
                                                     "(3000 USD is per hour, by the field's name)",
                                                     per_name=(u.MONEY, 3600.0), example="3000 USD/h"),
                                            starter=False)

    @property
    def per_run_limits(self) -> tuple[str, ...]:
        return tuple(name for name in ("max_time", "max_cost", "max_co2") if getattr(self, name) is not None)

    @property
    def serving_limits(self) -> tuple[str, ...]:
        return tuple(name for name in ("max_p99_latency", "max_cost_per_hour") if getattr(self, name) is not None)


# ---------------------------------------------------------------------------------------------------------- project
@dataclass(frozen=True)
class Project:
    """A reportgen project file: one revision of one design."""

    project: ProjectInfo = field(Section(ProjectInfo), required=True)
    hardware: Hardware | None = field(Section(Hardware))
    baseline: Baseline | None = field(Section(Baseline))
    checklist: Checklist | None = field(Section(Checklist))
    design: Design | None = field(Section(Design))
    prediction: Prediction | None = field(Section(Prediction))
    scaling: Scaling | None = field(Section(Scaling), starter=False)
    pricing: Pricing | None = field(Section(Pricing), starter=False)
    energy: Energy | None = field(Section(Energy), starter=False)
    reliability: Reliability | None = field(Section(Reliability), starter=False)
    decisions: tuple[Decision, ...] = field(Items(Section(Decision), "Deployment contexts (at most 64)",
                                                  max_items=MAX_DECISIONS), (), starter=False)
    plan_search: PlanSearch | None = field(Section(PlanSearch, examples=(
        ("recompute", "[selective, full]"), ("zero_stages", "[0, 1]"), ("micro_batch", "[1, 2]"),
        ("scales", "[64, 128]"), ("margin", "0.05"))), starter=False)
    calibration: Calibration | None = field(Section(Calibration), starter=False)
    # Not a field of the file: the currency of every amount, pricing.currency or else the first amount's code.
    money_currency: str = "USD"
    # Not a field of the file: the unit of work a service's load counts ("token", "request"), as its load is written
    work_unit: str = "request"
    # Not fields of the file: what the runs' throughput counts, as written (FLOP/s, as weak-scaling papers publish
    # it, or a unit of work: "token"), and what scaling.work_per_run counts; None where not written
    throughput_counts: str | None = None
    work_per_run_counts: str | None = None

    def check(self) -> Checks:
        if self.scaling is not None and self.scaling.axis == "load":
            for name in ("pricing", "energy", "decisions"):
                if getattr(self, name):
                    yield "scaling.axis", (f"a load axis counts no nodes, and {name} needs whole numbers of nodes: "
                                           f"leave {name} out, or measure at node counts (axis: nodes)")
        names = [d.name for d in self.decisions]
        for index, name in enumerate(names):
            if name in names[:index]:
                yield "decisions", f"decision names must be unique: `{name}` appears twice"
        yield from self._serving_terms()
        yield from self._stages_within_layers()
        yield from self._layout_of_the_shape()
        yield from self._peaks_of_the_precisions()

    def _peaks_of_the_precisions(self) -> Checks:
        """A run or a plan at FP8, TF32 or FP32 needs that precision's peak (methods.md#precision): BF16's and
        FP16's default to peak_compute, the others have none to fall back on."""
        hardware = self.hardware
        if hardware is None or hardware.peak_compute is None:  # no peak at all: nothing is measured against one
            return
        training = self.baseline.training if self.baseline else None
        named = (("baseline.training.precision", training.precision if training else None),
                 ("plan_search.precision", self.plan_search.precision if self.plan_search else None))
        for path, precision in named:
            if precision is not None and hardware.peak_at(precision) is None:
                yield path, (f"peak-flops-missing: {path} is {precision}, and hardware.peak_flops gives no "
                             f"{precision} peak")

    def _stages_within_layers(self) -> Checks:
        """A pipeline stage holds at least one layer (methods.md#22-a-parallel-layout-designparallelism): more
        stages than layers is a layout no framework can build."""
        layout = self.design.parallelism if self.design else None
        shape = self.baseline.model if self.baseline else None
        if layout is not None and shape is not None and layout.pipeline > shape.layers:
            yield "design.parallelism.pipeline", (f"{layout.pipeline} pipeline stages for {shape.layers} layers: a "
                                                  "stage holds at least one layer")

    def _layout_of_the_shape(self) -> Checks:
        """With the model's shape complete (heads and vocabulary), a layout no framework could run is refused
        (methods.md#the-models-shape-and-the-layout): t must divide the heads, an interleaved schedule needs a
        pipeline and micro-batches in multiples of its stages, and a global batch must be b·d·m."""
        layout = self.design.parallelism if self.design else None
        shape = self.baseline.model if self.baseline else None
        if layout is None or shape is None or not shape.complete or shape.heads is None:
            return
        at = "design.parallelism"
        if layout.context > 1 and shape.sequence % (2 * layout.context):
            yield f"{at}.context", (f"context-sequence: 2·cp = {2 * layout.context} does not divide the sequence of "
                                    f"{shape.sequence:,} tokens (each device holds two chunks of it)")
        if layout.context > 1 and not shape.flash_attention:
            yield f"{at}.context", ("context-needs-flash: context parallelism runs in fused and flash attention "
                                    "kernels; set baseline.model.flash_attention")
        split = layout.layers_per_stage
        if split is not None and (len(split) != layout.pipeline or sum(split) != shape.layers):
            yield f"{at}.layers_per_stage", (
                f"layout-layers-per-stage: {len(split)} stages holding {sum(split)} layers, for {layout.pipeline} "
                f"pipeline stages and {shape.layers} layers")
        if shape.heads % layout.tensor:
            yield f"{at}.tensor", (f"layout-heads: tensor parallelism of {layout.tensor} does not divide the "
                                   f"{shape.heads} attention heads (each device holds whole heads)")
        kv_heads = shape.kv_heads
        if kv_heads is not None and kv_heads % layout.tensor and layout.tensor % kv_heads:
            yield f"{at}.tensor", (f"layout-kv-heads: tensor parallelism of {layout.tensor} neither divides the "
                                   f"{kv_heads} key/value heads nor is a multiple of them (each device holds whole "
                                   "groups, or one group copied)")
        if shape.experts is not None and shape.experts % layout.expert:
            yield f"{at}.expert", (f"layout-expert-count: expert parallelism of {layout.expert} does not divide the "
                                   f"{shape.experts} experts of a layer (each device holds whole experts)")
        if layout.virtual_stages > 1 and (layout.pipeline == 1 or layout.micro_batches % layout.pipeline):
            yield f"{at}.virtual_stages", (
                f"interleave-needs-multiple: {layout.virtual_stages} virtual stages need a pipeline and micro-batches "
                f"in a multiple of its stages ({layout.micro_batches} micro-batches, {layout.pipeline} "
                f"stage{'s' if layout.pipeline > 1 else ''})")
        data = self.layout_data_degree
        if shape.global_batch is not None and data is not None \
                and shape.global_batch != shape.micro_batch * data * layout.micro_batches:
            yield "baseline.model.global_batch", (
                f"layout-batch: a global batch of {shape.global_batch:,} sequences is not b·d·m = "
                f"{shape.micro_batch} × {data:,} × {layout.micro_batches} = "
                f"{shape.micro_batch * data * layout.micro_batches:,} (micro_batch × data × micro_batches)")

    @property
    def layout_data_degree(self) -> int | None:
        """d of design.parallelism as declared, else the devices the plan leaves after tensor and pipeline (when
        they divide evenly), else None."""
        layout = self.design.parallelism if self.design else None
        if layout is None:
            return None
        if layout.data is not None:
            return layout.data
        nodes = self.design.nodes if self.design else None
        if nodes is None:
            return None
        devices = nodes * (self.hardware.devices_per_node if self.hardware else 1)
        return devices // layout.model_parallel if devices % layout.model_parallel == 0 else None

    def _serving_terms(self) -> Checks:
        """A serving project is judged per hour on load, latency and cost; a run-based project per run: a limit of
        the other kind would be silently ignored, so it is refused where it is written."""
        goal = self.project.goal
        if self.serving:
            wrong = [f"project.goal.{name}" for name in (goal.per_run_fields if goal else ())]
            wrong += [f"decisions[{index}].{name}" for index, decision in enumerate(self.decisions)
                      for name in decision.per_run_limits]
            for path in wrong:
                yield path, ("a serving project (project.workload: inference) is judged per hour, not per run: give "
                             "the goal's load, p99_latency and cost_per_hour, and a decision's max_p99_latency and "
                             "max_cost_per_hour")
        else:
            wrong = [f"project.goal.{name}" for name in (goal.serving_fields if goal else ())]
            wrong += [f"decisions[{index}].{name}" for index, decision in enumerate(self.decisions)
                      for name in decision.serving_limits]
            for path in wrong:
                yield path, "applies to serving projects only: set project.workload: inference"

    @property
    def currency(self) -> str:
        return self.pricing.currency if self.pricing else self.money_currency

    @property
    def serving(self) -> bool:
        """A serving project: judged on the load it serves within its latency objective, per hour."""
        return self.project.workload == "inference"

