"""One replica of a service (methods.md#4x-serving-projects): its weights, KV cache and other resident memory, the
devices it takes and how many fit a node. A model of the design, read by the serving analysis and by the
reconciliation that holds a load test's replicas against it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.common import ceil_ratio
from reportgen.keys import Key, derived
from reportgen.project.model import Project


@dataclass(frozen=True)
class Replica:
    """What one replica holds: its weights and KV cache, the devices it takes and how many fit a node."""

    # parameters × bytes per parameter (2 B for a service by default)
    weights_b: Annotated[float, Key("the weights")]
    kv_b: Annotated[float | None, Key("kv_bytes_per_token × tokens_in_flight")]
    other_b: float  # activations and other resident memory, as given
    device_memory_b: float
    devices_per_node: int

    @derived(Key("weights + KV cache + activations and other memory"))
    def memory_b(self) -> float:
        return self.weights_b + (self.kv_b or 0.0) + self.other_b

    @derived(Key("ceil(memory / device memory): tensor-parallel within a node"))
    def devices(self) -> int:
        return max(1, ceil_ratio(self.memory_b, self.device_memory_b))

    @derived(Key("floor(devices_per_node / devices); 0 when a replica exceeds a node"))
    def replicas_per_node(self) -> int:
        return self.devices_per_node // self.devices

    @property
    def exceeds_node(self) -> bool:
        return self.devices > self.devices_per_node


def replica_of(project: Project) -> Replica | None:
    """One replica's memory and devices, when the model's size and the device's memory are known."""
    memory = project.baseline.memory if project.baseline else None
    hardware = project.hardware
    device = hardware.memory_per_device if hardware else None
    if memory is None or device is None or hardware is None:
        return None
    serving = project.baseline.serving if project.baseline else None
    kv = serving.kv_cache_bytes if serving else None
    return Replica(memory.parameters * memory.bytes_per(True), kv, (memory.activations or 0.0) + (memory.other or 0.0),
                   device, hardware.devices_per_node)
