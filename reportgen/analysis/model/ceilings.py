"""The resource ceilings a design can hit, one record each (methods.md#1-diagnosis-which-resource-runs-out-first):
the axis of distribution that cures it, the tools that typically do, the step floor or the wall that names it, and
why a design on another axis leaves it binding. The diagnosis, the lint, the report's ceiling table and page 1 all
read this one table, so a ceiling's axis and its reason cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from reportgen.project.model import Axis

CeilingName = Literal["compute", "memory-bandwidth", "memory-capacity", "data-io", "serving", "communication", "none"]
Bound = Literal["compute", "memory-bandwidth", "io", "communication"]  # a step's largest floor
WallName = Literal["memory", "data", "serving", "time"]


@dataclass(frozen=True)
class CeilingKind:
    name: CeilingName
    axis: Axis  # the axis of distribution that cures it
    tools: str  # the tools that typically do
    failure: str  # why a design on another axis leaves it binding
    bound: Bound | None = None  # the step floor that names it, when the time wall binds and that floor is largest
    wall: WallName | None = None  # the capacity wall that names it
    words: str = ""  # the ceiling as a sentence names it: "the memory capacity"


CEILINGS: tuple[CeilingKind, ...] = (
    CeilingKind("data-io", "distribute data", "Spark, Ray Data, sharded loaders",
                "every node still holds or reads the whole data set: only partitioning the data lifts that wall",
                bound="io", wall="data", words="the data's I/O"),
    CeilingKind("compute", "distribute training", "PyTorch DDP, Horovod",
                "the single-machine time stays where it is unless the training work itself is split",
                bound="compute", words="compute"),
    CeilingKind("memory-capacity", "distribute the model", "FSDP, DeepSpeed ZeRO, Megatron",
                "replicating a model whose state does not fit one device fails on every replica: data parallelism "
                "multiplies throughput, never capacity", wall="memory", words="the memory capacity"),
    # memory capacity and bandwidth share an axis but fail a replicated design for different reasons
    CeilingKind("memory-bandwidth", "distribute the model", "FSDP, tensor parallelism",
                "every replica streams the whole model's bytes through one device's memory each step: replicas "
                "multiply throughput, not the bandwidth a step gets; sharding the model (tensor parallelism) divides "
                "the bytes each device reads", bound="memory-bandwidth", words="the memory bandwidth"),
    CeilingKind("serving", "distribute inference", "vLLM, Triton, Ray Serve",
                "the request load still exceeds what one serving path sustains: only more replicas raise serving "
                "capacity", wall="serving", words="serving capacity"),
    CeilingKind("communication", "coordinate the cluster", "Ray, Kubernetes, better collectives",
                "communication already dominates the step: adding workers on any axis adds more of it",
                bound="communication", words="communication"),
    CeilingKind("none", "single machine", "—",
                "no ceiling binds: distribution adds communication, cost and failure modes for no gain",
                words="nothing"),
)
CEILING: dict[CeilingName, CeilingKind] = {kind.name: kind for kind in CEILINGS}
# A compute ceiling of a service or a data job is cured as a serving or a data ceiling is: by that ceiling's axis,
# and for that ceiling's reason
WORKLOAD_COMPUTE_CEILING: dict[str, CeilingName] = {"inference": "serving", "data-processing": "data-io"}
BOUND_ORDER: tuple[Bound, ...] = get_args(Bound)  # the tie order among a step's floors


def cure(ceiling: CeilingName, workload: str | None) -> CeilingKind:
    """The record whose axis and reason apply to `ceiling` in a project of `workload`."""
    if ceiling == "compute" and workload in WORKLOAD_COMPUTE_CEILING:
        return CEILING[WORKLOAD_COMPUTE_CEILING[workload]]
    return CEILING[ceiling]


def named_by_bound(bound: Bound) -> CeilingName:
    """The ceiling a step's largest floor names."""
    return next(kind.name for kind in CEILINGS if kind.bound == bound)


def named_by_wall(wall: WallName) -> CeilingName | None:
    """The ceiling a capacity wall names (None for the time wall, which its step's largest floor names)."""
    return next((kind.name for kind in CEILINGS if kind.wall == wall), None)
