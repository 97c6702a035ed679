"""The trade a service makes between its users and its devices (methods.md#a-service-judged-from-its-requests): each
load point as output tokens a second per user (1 / its median TPOT) against output tokens a second per device, the
points no other beats on both, and the energy each output token took where energy was measured."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.analysis.common import JOULES_PER_KWH


@dataclass(frozen=True)
class ParetoPoint:
    nodes: float
    load: float  # the point's offered load (or concurrency)
    per_device: float  # output tokens/s per device: Σ n_i (completed, in the window) / W / devices
    per_user: float  # output tokens/s per user: 1 / median TPOT
    meets: bool | None  # the point's verdict against the target share (None: not decided)


def tokens_per_device(output_tokens: float, window_s: float, devices: int) -> float:
    return output_tokens / window_s / devices


def frontier(points: list[ParetoPoint]) -> list[ParetoPoint]:
    """The points no other point beats on both axes (at least as good on both and better on one), by tokens per
    user, largest first."""
    kept = [point for point in points
            if not any(other.per_device >= point.per_device and other.per_user >= point.per_user
                       and (other.per_device > point.per_device or other.per_user > point.per_user)
                       for other in points)]
    return sorted(kept, key=lambda point: -point.per_user)


def chosen(points: list[ParetoPoint], plan_nodes: float) -> ParetoPoint | None:
    """The operating point: at the plan's scale, of the points that meet the target, the most tokens per device."""
    meeting = [point for point in points if point.nodes == plan_nodes and point.meets]
    return max(meeting, key=lambda point: point.per_device, default=None)


def joules_per_token(energy_kwh: float, output_tokens: float) -> float:
    """The energy the window took over the output tokens it produced."""
    return energy_kwh * JOULES_PER_KWH / output_tokens
