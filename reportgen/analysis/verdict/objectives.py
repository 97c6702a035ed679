"""A service's latency objectives as the report names them: the end-to-end p99, the p99 time to first token and per
output token; where each is read on a serving row, and what a run writes it as (methods.md#4x-serving-projects).
The serving analysis and the goal's levers both read them (one vocabulary, below both)."""

from __future__ import annotations

from typing import Literal, Protocol, get_args

LatencyOrigin = Literal["measured", "interpolated", "modelled"]
ObjectiveName = Literal["p99", "ttft_p99", "tpot_p99"]  # end-to-end latency, time to first token, per output token
OBJECTIVES: tuple[ObjectiveName, ...] = get_args(ObjectiveName)
RUN_FIELDS: dict[ObjectiveName, str] = {"p99": "p99_latency", "ttft_p99": "ttft_p99", "tpot_p99": "tpot_p99"}
# Each objective's value and its origin on a ServingRow, and its column heading in the serving table
ROW_FIELDS: dict[ObjectiveName, tuple[str, str, str]] = {"p99": ("p99_s", "p99_source", "p99"),
                                                        "ttft_p99": ("ttft_p99_s", "ttft_source", "p99 TTFT"),
                                                        "tpot_p99": ("tpot_p99_s", "tpot_source", "p99 TPOT")}
OBJECTIVE_NAMES: dict[ObjectiveName, str] = {"p99": "p99", "ttft_p99": "p99 time to first token",
                                             "tpot_p99": "p99 time per output token"}


class LatencyRow(Protocol):
    """What a row of the serving analysis holds of each objective: its value and how it is known there."""

    @property
    def p99_s(self) -> float | None: ...
    @property
    def ttft_p99_s(self) -> float | None: ...
    @property
    def tpot_p99_s(self) -> float | None: ...
    @property
    def p99_source(self) -> LatencyOrigin | None: ...
    @property
    def ttft_source(self) -> LatencyOrigin | None: ...
    @property
    def tpot_source(self) -> LatencyOrigin | None: ...


def latency_of(row: LatencyRow, name: ObjectiveName) -> float | None:
    value: float | None = getattr(row, ROW_FIELDS[name][0])
    return value


def latency_source(row: LatencyRow, name: ObjectiveName) -> LatencyOrigin | None:
    source: LatencyOrigin | None = getattr(row, ROW_FIELDS[name][1])
    return source
