"""A load test's requests as `ingest serving` keeps them (methods.md#a-service-judged-from-its-requests): the
canonical per-request table of one load point, what its file says of how they were sent, and the CSV row it
belongs to. Inputs of the analyses, like the runs: the load testers' readers fill them, the analyses judge them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from reportgen.project.records import RecordsLine

Mode = Literal["open", "closed"]
TokenSource = Literal["server", "client", "chunks", "mixed", "unknown"]


@dataclass(frozen=True)
class Requests:
    """One load point's requests in send order, each column one value a request (seconds from the point's first
    send; NaN where the tool did not measure it)."""

    send_s: np.ndarray  # s_i
    ttft_s: np.ndarray  # first content chunk − s_i; NaN when not streamed
    e2e_s: np.ndarray  # last byte − s_i
    output_tokens: np.ndarray  # n_i
    ok: np.ndarray  # not failed, cancelled or incomplete
    client_queue_s: np.ndarray | None = None  # q_i = s_i − s*_i: the wait in the client before sending

    @property
    def count(self) -> int:
        return len(self.send_s)

    @property
    def end_s(self) -> np.ndarray:
        ends: np.ndarray = self.send_s + self.e2e_s
        return ends

    @property
    def sends(self) -> tuple[float, float]:
        """The first and the last send."""
        return float(np.min(self.send_s)), float(np.max(self.send_s))

    @property
    def latency_s(self) -> np.ndarray:
        """The latency the load-point checks follow: TTFT, or E2E where the tool measured no TTFT (not streamed)."""
        return self.ttft_s if not np.isnan(self.ttft_s).all() else self.e2e_s

    @property
    def window_s(self) -> float:
        """W: from the first send to the last byte."""
        return float(np.nanmax(self.end_s) - np.min(self.send_s))

    def where(self, keep: np.ndarray) -> Requests:
        """The requests `keep` selects, in the same order."""
        queue = self.client_queue_s[keep] if self.client_queue_s is not None else None
        return Requests(self.send_s[keep], self.ttft_s[keep], self.e2e_s[keep], self.output_tokens[keep],
                        self.ok[keep], queue)

    @property
    def tpot_s(self) -> np.ndarray:
        """TPOT_i = (E2E_i − TTFT_i)/(n_i − 1) where n_i ≥ 2; NaN where there is no decode (n_i ≤ 1)."""
        decoded = self.output_tokens >= 2
        with np.errstate(invalid="ignore", divide="ignore"):
            found: np.ndarray = np.where(decoded, (self.e2e_s - self.ttft_s) / np.maximum(self.output_tokens - 1, 1),
                                         np.nan)
        return found


@dataclass(frozen=True)
class LoadPoint:
    """One load test at one offered load, its requests in the canonical table, and what its file says of how they
    were sent."""

    tool: str
    requests: Requests
    mode: Mode | None  # None: unbounded (a throughput sweep) or not said: not a point of the load curve
    offered_per_s: float | None  # an open load's rate
    concurrency: int | None  # a closed load's requests in flight
    send_times_known: bool  # False: older vLLM files, whose array order is the send order but whose times are not
    e2e_reconstructed: bool  # E2E summed from TTFT and the chunk gaps (the file has no latencies)
    tokens_source: TokenSource
    dropped_warmup: int = 0  # records outside the tool's measured phase, left out
    sampled_from: int | None = None  # a sample of this many requests (GuideLLM's reservoir), else None
    file_output_tokens: int | None = None  # the file's own total, to hold the records to
    constant_schedule: bool = False  # the client spaced its sends evenly (no two due within a millisecond)
    file_requests: int | None = None  # the requests the file's own summary counts
    file_mean_e2e_s: float | None = None  # the mean E2E of the successful requests, as the file's summary gives it
    energy_j: float | None = None  # energy measured over the window (vLLM's gpu_energy_j: NVML, the GPUs only)

    @property
    def load(self) -> float | None:
        """Its place on the load curve's axis: the offered rate (open) or the concurrency (closed)."""
        return self.offered_per_s if self.mode == "open" else float(self.concurrency) \
            if self.mode == "closed" and self.concurrency is not None else None


@dataclass(frozen=True, eq=False)  # one row's records, compared (and hashed) as themselves
class RecordedPoint:
    """A row of the runs CSV whose load test's requests `ingest serving` kept: where they came from, and the
    requests (None: the store is gone; the row's summary columns then stand)."""

    nodes: float
    line: RecordsLine
    point: LoadPoint | None
