"""The checks a load point's requests pass before any verdict rests on them
(methods.md#a-service-judged-from-its-requests): was the load offered as claimed, did the client wait, does the
file agree with itself (Little's law), did latency run away (over-saturation) or start slow (warm-up), are the
latencies real numbers. Each returns its measured figure beside its limit and what leaves the verdict when it fires;
the lint words them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from reportgen.analysis.measured.requests import Objectives, mean_in_flight
from reportgen.project.load_tests import Requests
from reportgen.project.records import RATE_REACHED

CheckCode = Literal["rate-not-reached", "rate-exceeded", "client-queueing", "littles-law", "over-saturated",
                    "latency-drift", "warm-up-in-window", "placeholder-latency", "token-count-mismatch",
                    "records-disagree"]
LeftOut = Literal["the point", "the first tenth", "nothing", "the field"]  # what leaves the verdict when it fires

RATE_SHORT, RATE_OVER = RATE_REACHED, 1.1  # the achieved send rate against the offered one (a load test's counts
# line is held to the same RATE_REACHED)
BURST_S, BURST_SHARE = 0.001, 0.05  # sends within 1 ms of another, past 5 % of them, where the schedule has none
QUEUE_SHARE = 0.1  # p90 of the client's wait against the tightest latency objective
LITTLE_GAP = 0.10
BINS, MIN_PER_BIN = 10, 5
TREND_S, TREND_RISE = 20, 0.25  # Mann–Kendall S at n = 10 (one-sided p < 0.05), and Sen's rise over the bins
WARM_UP_SHARE, WARM_UP_RATIO, WARM_UP_P = 0.1, 1.5, 0.01
PLACEHOLDER_SHARE = 0.01
PLACEHOLDER_SLACK_S = 0.001
TOKEN_TOTAL_GAP = 0.01  # the records' output tokens against the file's own total
SUMMARY_GAP = 0.01  # the records' count and mean E2E against the file's own summary


@dataclass(frozen=True)
class Check:
    code: CheckCode
    fired: bool
    value: float  # what was measured, in the check's own unit (a share, a ratio, seconds)
    limit: float  # the threshold it is held to
    left_out: LeftOut


def achieved_send_rate(requests: Requests) -> float | None:
    """λ_s = (N − 1)/(s_N − s_1): the rate the client sent at (never completions per second: a saturated server
    completes fewer, the client still sent them)."""
    first, last = requests.sends
    span = last - first
    return (requests.count - 1) / span if requests.count > 1 and span > 0 else None


def rate_checks(requests: Requests, offered_per_s: float, *, constant_schedule: bool) -> list[Check]:
    """At an open load: the offered rate not reached (λ_s < 0.9 λ_o) or exceeded (λ_s > 1.1 λ_o, or, where the
    schedule spaces every send, more than 5 % of sends within 1 ms of another: a client that bursts)."""
    achieved = achieved_send_rate(requests)
    if achieved is None:
        return []
    ratio = achieved / offered_per_s
    found = [Check("rate-not-reached", ratio < RATE_SHORT, ratio, RATE_SHORT, "the point")]
    burst = 0.0
    if constant_schedule:
        gaps = np.diff(np.sort(requests.send_s))
        close = np.zeros(requests.count, dtype=bool)
        close[1:] |= gaps < BURST_S
        close[:-1] |= gaps < BURST_S
        burst = float(close.mean())
    if burst > BURST_SHARE and ratio <= RATE_OVER:  # on time on average, but in bursts: the share is the figure
        found.append(Check("rate-exceeded", True, burst, BURST_SHARE, "the point"))
    else:
        found.append(Check("rate-exceeded", ratio > RATE_OVER, ratio, RATE_OVER, "the point"))
    return found


def queueing_check(requests: Requests, objectives: Objectives) -> Check | None:
    """At an open load: p90 of the client's wait before sending against a tenth of the tightest of the TTFT and E2E
    objectives (none stated: of the median TTFT). Leaves nothing out: TTFT' and E2E' include the wait."""
    if requests.client_queue_s is None:
        return None
    limits = [limit for limit in (objectives.ttft_s, objectives.e2e_s) if limit is not None]
    base = min(limits) if limits else float(np.nanmedian(requests.ttft_s))
    waited = float(np.nanpercentile(requests.client_queue_s, 90))
    return Check("client-queueing", waited > QUEUE_SHARE * base, waited, QUEUE_SHARE * base, "nothing")


@dataclass(frozen=True)
class LittlesLaw:
    """Little's law over the window from the first send to the last (Little 1961)."""

    in_flight: float  # L̄: the requests in flight on average (failed ones to their end)
    rate_times_latency: float  # λ W̄: the sends per second times their mean E2E

    @property
    def gap(self) -> float:
        """(λ W̄ − L̄)/(λ W̄)."""
        product = self.rate_times_latency
        return (product - self.in_flight) / product if product > 0 else 0.0


def littles_terms(requests: Requests) -> LittlesLaw | None:
    start, stop = requests.sends
    if stop <= start:
        return None
    rate = requests.count / (stop - start)
    return LittlesLaw(mean_in_flight(requests.send_s, requests.end_s, start, stop),
                      rate * float(np.nanmean(requests.e2e_s)))


def littles_law(requests: Requests) -> Check | None:
    """λ W̄ against L̄ (littles_terms). A gap past 10 % means the file's latencies and its request times disagree, or
    the point was not in a steady state."""
    terms = littles_terms(requests)
    if terms is None:
        return None
    return Check("littles-law", abs(terms.gap) > LITTLE_GAP, terms.gap, LITTLE_GAP, "the point")


def mann_kendall(series: np.ndarray) -> int:
    """S = Σ_{i<j} sign(x_j − x_i) (Mann 1945, Kendall 1975)."""
    differences = series[None, :] - series[:, None]
    return int(np.sign(np.triu(differences, 1)).sum())


def sen_slope(series: np.ndarray) -> float:
    """The median of (x_j − x_i)/(j − i) over every i < j (Sen 1968)."""
    i, j = np.triu_indices(len(series), 1)
    return float(np.median((series[j] - series[i]) / (j - i)))


def rises(series: np.ndarray) -> bool:
    """A series of BINS trends up: S ≥ 20 and Sen's slope over the nine steps at least a quarter of the first bin."""
    return mann_kendall(series) >= TREND_S and sen_slope(series) * (len(series) - 1) >= TREND_RISE * series[0]


def binned_trends(requests: Requests) -> tuple[np.ndarray, np.ndarray] | None:
    """Per tenth of the window from the first send to the last: the median TTFT (E2E where no TTFT was measured) of
    its sends and the mean requests in flight; None with fewer than five sends a bin."""
    edges = np.linspace(*requests.sends, BINS + 1)
    which = np.clip(np.searchsorted(edges, requests.send_s, side="right") - 1, 0, BINS - 1)
    latency = requests.latency_s
    medians, flights = [], []
    for index in range(BINS):
        chosen = latency[which == index]
        if np.count_nonzero(~np.isnan(chosen)) < MIN_PER_BIN:
            return None
        medians.append(float(np.nanmedian(chosen)))
        flights.append(mean_in_flight(requests.send_s, requests.end_s, float(edges[index]), float(edges[index + 1])))
    return np.array(medians), np.array(flights)


def saturation_check(requests: Requests, *, open_load: bool) -> Check | None:
    """Open load: latency and the requests in flight both trend up over the window (`over-saturated`: the point
    leaves the verdict, and the max load lies below it). Closed load: latency alone (`latency-drift`: in flight is
    fixed by design; nothing leaves)."""
    trends = binned_trends(requests)
    if trends is None:
        return None
    latency, in_flight = trends
    if open_load:
        return Check("over-saturated", rises(latency) and rises(in_flight), float(mann_kendall(latency)), TREND_S,
                     "the point")
    return Check("latency-drift", rises(latency), float(mann_kendall(latency)), TREND_S, "nothing")


def mann_whitney_greater(first: np.ndarray, rest: np.ndarray) -> float:
    """One-sided p that `first` tends to exceed `rest` (Mann & Whitney 1947), by the normal approximation."""
    n1, n2 = len(first), len(rest)
    ranks = np.empty(n1 + n2)
    order = np.argsort(np.concatenate([first, rest]), kind="stable")
    ranks[order] = np.arange(1, n1 + n2 + 1)
    u = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2
    z = (u - n1 * n2 / 2) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return 1 - NormalDist().cdf(z)


def warm_up_check(requests: Requests) -> Check | None:
    """The first tenth of the sends against the rest: their median TTFT (E2E where none) more than 1.5 times the
    rest's, and significantly so (one-sided Mann–Whitney p < 0.01). The first tenth then leaves the verdict."""
    latency = requests.latency_s
    order = np.argsort(requests.send_s, kind="stable")
    ordered = latency[order]
    ordered = ordered[~np.isnan(ordered)]
    head = max(1, int(len(ordered) * WARM_UP_SHARE))
    if len(ordered) - head < 1:
        return None
    first, rest = ordered[:head], ordered[head:]
    ratio = float(np.median(first) / np.median(rest)) if np.median(rest) > 0 else math.inf
    fired = ratio > WARM_UP_RATIO and mann_whitney_greater(first, rest) < WARM_UP_P
    return Check("warm-up-in-window", fired, ratio, WARM_UP_RATIO, "the first tenth")


def placeholders(requests: Requests) -> tuple[np.ndarray, np.ndarray]:
    """The successful requests whose TTFT, and those whose E2E, cannot be a measurement: a zero (a tool's placeholder
    where it did not measure), or a TTFT past the E2E by more than 1 ms (the TTFT is the wrong one)."""
    ok = requests.ok.astype(bool)
    with np.errstate(invalid="ignore"):
        ttft = ok & ((requests.ttft_s == 0) | (requests.ttft_s > requests.e2e_s + PLACEHOLDER_SLACK_S))
        e2e = ok & (requests.e2e_s == 0)
    return ttft, e2e


def placeholder_check(requests: Requests) -> Check:
    """Successful requests with a placeholder latency (placeholders): past 1 % of them, that latency is not measured
    at the point; below, those requests leave it."""
    ttft, e2e = placeholders(requests)
    share = float((ttft | e2e).sum() / max(int(requests.ok.astype(bool).sum()), 1))
    return Check("placeholder-latency", share > 0, share, PLACEHOLDER_SHARE, "the field")


def token_check(requests: Requests, file_total: int) -> Check:
    """The successful requests' output tokens against the total the file states (vLLM's total_output_tokens): more
    than 1 % apart, the counts are not what the tool summed (a tokenizer's count beside the server's, or records
    lost). Nothing leaves the verdict: good tokens use the counts the records give."""
    counted = float(np.nansum(requests.output_tokens[requests.ok.astype(bool)]))
    gap = (counted - file_total) / file_total if file_total else 0.0
    return Check("token-count-mismatch", abs(gap) > TOKEN_TOTAL_GAP, gap, TOKEN_TOTAL_GAP, "nothing")


def summary_check(requests: Requests, file_requests: int | None, file_mean_e2e_s: float | None) -> Check:
    """The records against the file's own summary: their count, and the mean E2E of the successful ones. More than
    1 % apart on either, the records are not the requests the tool summarised (a window cut differently, records
    lost): the point leaves the verdict. The figure is the larger relative gap."""
    gaps = []
    if file_requests:
        gaps.append((requests.count - file_requests) / file_requests)
    ok = requests.ok.astype(bool)
    if file_mean_e2e_s and ok.any():
        gaps.append((float(np.nanmean(requests.e2e_s[ok])) - file_mean_e2e_s) / file_mean_e2e_s)
    gap = max(gaps, key=abs, default=0.0)
    return Check("records-disagree", abs(gap) > SUMMARY_GAP, gap, SUMMARY_GAP, "the point")
