"""One load point judged from its requests (methods.md#a-service-judged-from-its-requests): the checks first, then
what is left of the requests judged against the objectives, with every interval the verdict rests on.

The same function serves `ingest serving` (the row it writes) and `build` (results.json's serving.records): a
point's attainment has one owner. A check that fires removes what its row of the method says: the whole point
(its load was not the one claimed, or the file disagrees with itself), the first tenth of its sends (warm-up), or
the latencies a tool wrote as placeholders.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reportgen.analysis.measured.confidence import SEED
from reportgen.analysis.measured.request_checks import (
    BINS,
    PLACEHOLDER_SHARE,
    WARM_UP_SHARE,
    Check,
    LittlesLaw,
    achieved_send_rate,
    binned_trends,
    littles_law,
    littles_terms,
    mann_kendall,
    placeholder_check,
    placeholders,
    queueing_check,
    rate_checks,
    saturation_check,
    sen_slope,
    summary_check,
    token_check,
    warm_up_check,
)
from reportgen.analysis.measured.requests import (
    OBJECTIVES,
    Attainment,
    ObjectiveName,
    Objectives,
    Quantile,
    Verdict,
    attainment,
    good_requests,
    judged_latency,
    lag_one,
    mean_in_flight,
    point_verdict,
    quantile,
)
from reportgen.project.load_tests import LoadPoint, Requests
from reportgen.project.model import Goal

MARGINAL_SHARE = 0.99  # objectives written as p99s (no goal.attainment) are each judged at 99 % of requests
QUANTILES = (0.5, 0.9, 0.99)
# Mann–Kendall's S has variance n(n − 1)(2n + 5)/18 without ties: 125 at n = 10 bins
MANN_KENDALL_SD = math.sqrt(BINS * (BINS - 1) * (2 * BINS + 5) / 18)


@dataclass(frozen=True)
class Judgement:
    """What the project asks of each request: its thresholds and the share that must meet them (a*). Joint: every
    objective at once (goal.attainment); else each p99 objective alone at 99 % of requests."""

    objectives: Objectives
    target: float
    joint: bool


def judgement_of(goal: Goal | None) -> Judgement | None:
    """The project's objectives for each request: goal.latency's per-request thresholds, judged jointly at
    goal.attainment (99 % when only the thresholds are given); else its p99 objectives, each judged alone at 99 %
    of requests; None without either."""
    latency = goal.latency if goal else None
    if latency is not None and latency.per_request:
        objectives = Objectives(**{f"{name}_s": value for name, value in latency.per_request.items()})
        target = goal.attainment if goal and goal.attainment is not None else MARGINAL_SHARE
        return Judgement(objectives, target, True)
    p99s = {"ttft_s": latency.ttft_p99 if latency else None, "tpot_s": latency.tpot_p99 if latency else None,
            "e2e_s": (latency.p99 if latency else None) or (goal.p99_latency if goal else None)}
    if any(value is not None for value in p99s.values()):
        return Judgement(Objectives(**p99s), MARGINAL_SHARE, False)
    return None


@dataclass(frozen=True)
class Trend:
    """The window in ten bins of sends: how far the median latency and the requests in flight rise over it (Sen's
    slope × 9 bins), and Mann–Kendall's Z for each."""

    latency_rise_s: float
    in_flight_rise: float
    z_latency: float
    z_in_flight: float


@dataclass(frozen=True)
class PointFacts:
    point: LoadPoint
    kept: Requests  # the requests the verdict rests on, after what the checks removed
    checks: tuple[Check, ...]  # every check run, fired or not
    skipped_why: str | None  # why the checks that read the send times were not run
    valid: bool  # no check removed the whole point
    unmeasured: tuple[ObjectiveName, ...]  # objectives whose latency the tool wrote as placeholders
    attainment: Attainment | None  # None: no objective, or one the point did not measure
    verdict: Verdict
    quantiles: dict[ObjectiveName, tuple[Quantile, ...]]  # p50, p90, p99 of each latency
    littles: LittlesLaw | None
    trend: Trend | None
    client_queue_p90_s: float | None
    achieved_send_per_s: float | None
    in_flight: float  # L̄ over the window
    good_autocorrelation: float  # ρ of good_i in send order, clipped to [0, 0.9]
    warm_up_left_out: int  # the first sends the warm-up check removed

    @property
    def fired(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if check.fired)

    @property
    def completed(self) -> int:
        return int(self.point.requests.ok.astype(bool).sum())

    @property
    def failed(self) -> int:
        return self.point.requests.count - self.completed


def judge_point(point: LoadPoint, judgement: Judgement | None, *, near_capacity: bool = False,
                seed: int = SEED) -> PointFacts:
    """The checks, then the attainment and verdict of what they leave, and each latency's percentiles."""
    requests = point.requests
    open_load = point.mode == "open"
    objectives = judgement.objectives if judgement else Objectives()
    skipped_why = _why_unordered(point)
    checks: list[Check] = [placeholder_check(requests)]
    if point.file_output_tokens is not None:
        checks.append(token_check(requests, point.file_output_tokens))
    if point.file_requests is not None or point.file_mean_e2e_s is not None:
        checks.append(summary_check(requests, point.file_requests, point.file_mean_e2e_s))
    if open_load and (queued := queueing_check(requests, objectives)) is not None:
        checks.append(queued)
    if skipped_why is None:
        if open_load and point.offered_per_s:
            checks.extend(rate_checks(requests, point.offered_per_s, constant_schedule=point.constant_schedule))
        checks.extend(check for check in (littles_law(requests), saturation_check(requests, open_load=open_load),
                                          warm_up_check(requests)) if check is not None)
    valid = not any(check.fired and check.left_out == "the point" for check in checks)
    kept, unmeasured, warm_up = _left(requests, checks)
    start, stop = requests.sends
    judged = _judged(kept, judgement, unmeasured, open_load, near_capacity, seed)
    measured, verdict = judged if judged is not None else (None, None)
    good = good_requests(kept, objectives, open_load=open_load) if judgement else np.zeros(0)
    queued_p90 = float(np.nanpercentile(requests.client_queue_s, 90)) \
        if requests.client_queue_s is not None and requests.count else None
    return PointFacts(
        point, kept, tuple(checks), skipped_why, valid, unmeasured, measured, verdict,
        _quantiles(kept, open_load), littles_terms(requests) if skipped_why is None else None,
        _trend(requests) if skipped_why is None else None, queued_p90,
        achieved_send_rate(requests) if point.send_times_known else None,
        mean_in_flight(requests.send_s, requests.end_s, start, stop) if point.send_times_known else 0.0,
        min(max(lag_one(good.astype(float)), 0.0), 0.9) if len(good) > 1 else 0.0, warm_up)


def rejudged(facts: PointFacts, judgement: Judgement, *, near_capacity: bool) -> PointFacts:
    """The point's verdict again, knowing whether it was measured near capacity (the scale's curve says)."""
    if facts.attainment is None or not near_capacity:
        return facts
    verdict = _verdict(facts.attainment, judgement, near_capacity=True)
    return PointFacts(**{**facts.__dict__, "verdict": verdict})


def _why_unordered(point: LoadPoint) -> str | None:
    if not point.send_times_known:
        return "the file gives no send times (vLLM before its start_times): the array order is all it keeps"
    if point.sampled_from is not None:
        return (f"the file keeps a sample of {point.requests.count:,} of {point.sampled_from:,} requests, not "
                "their order")
    return None


def _left(requests: Requests, checks: list[Check]) -> tuple[Requests, tuple[ObjectiveName, ...], int]:
    """The requests that stay after the checks: without the first tenth of the sends when warm-up shows in the
    window, and without the placeholders' requests when they are few (past 1 % their latency is not measured)."""
    keep = np.ones(requests.count, dtype=bool)
    warm_up = 0
    if any(check.fired and check.code == "warm-up-in-window" for check in checks):
        order = np.argsort(requests.send_s, kind="stable")
        warm_up = max(1, int(requests.count * WARM_UP_SHARE))
        keep[order[:warm_up]] = False
    ttft_wrong, e2e_wrong = placeholders(requests)
    ok_count = max(int(requests.ok.astype(bool).sum()), 1)
    unmeasured: list[ObjectiveName] = []
    # a TTFT that is not measured takes the TPOT with it ((E2E − TTFT)/(n − 1)); so does an E2E
    affected: tuple[tuple[np.ndarray, tuple[ObjectiveName, ...]], ...] = (
        (ttft_wrong, ("ttft", "tpot")), (e2e_wrong, ("e2e", "tpot")))
    for wrong, names in affected:
        if wrong.sum() / ok_count > PLACEHOLDER_SHARE:
            unmeasured.extend(name for name in names if name not in unmeasured)
        else:
            keep &= ~wrong
    return requests.where(keep), tuple(name for name in OBJECTIVES if name in unmeasured), warm_up


def _judged(kept: Requests, judgement: Judgement | None, unmeasured: tuple[ObjectiveName, ...], open_load: bool,
            near_capacity: bool, seed: int) -> tuple[Attainment, Verdict] | None:
    if judgement is None or not judgement.objectives.stated() or kept.count < 2:
        return None
    if set(judgement.objectives.stated()) & set(unmeasured):
        return None  # an objective the point did not measure: it is not judged there
    start, stop = kept.sends
    measured = attainment(kept, judgement.objectives, open_load=open_load,
                          in_flight=mean_in_flight(kept.send_s, kept.end_s, start, stop), seed=seed)
    return measured, _verdict(measured, judgement, near_capacity=near_capacity)


def _verdict(measured: Attainment, judgement: Judgement, *, near_capacity: bool) -> Verdict:
    """Joint: the share meeting every objective against a*. Marginal: each objective's share at 99 %; missed when
    one misses, met when all meet, else not decided."""
    if judgement.joint:
        return point_verdict(measured.joint_ci, judgement.target, near_capacity=near_capacity)
    verdicts = [point_verdict(ci, judgement.target, near_capacity=near_capacity)
                for _, ci in measured.objectives.values()]
    if "missed" in verdicts:
        return "missed"
    return "met" if verdicts and all(verdict == "met" for verdict in verdicts) else None


def latency_values(requests: Requests, name: ObjectiveName, *, open_load: bool) -> np.ndarray:
    """Each request's latency as its percentiles read it: TTFT and E2E with the client's wait at an open load (as
    the objectives judge them), TPOT where the request decoded (NaN where it did not: it has no TPOT)."""
    ok = requests.ok.astype(bool)
    values = requests.tpot_s if name == "tpot" else judged_latency(requests, name, open_load=open_load)
    chosen: np.ndarray = np.where(ok, values, np.nan)
    return chosen


def _quantiles(requests: Requests, open_load: bool) -> dict[ObjectiveName, tuple[Quantile, ...]]:
    found = {}
    for name in OBJECTIVES:
        values = latency_values(requests, name, open_load=open_load)
        if not np.isnan(values).all():
            found[name] = tuple(quantile(values, p) for p in QUANTILES)
    return found


def _trend(requests: Requests) -> Trend | None:
    binned = binned_trends(requests)
    if binned is None:
        return None
    latency, in_flight = binned
    return Trend(sen_slope(latency) * (BINS - 1), sen_slope(in_flight) * (BINS - 1),
                 _mann_kendall_z(mann_kendall(latency)), _mann_kendall_z(mann_kendall(in_flight)))


def _mann_kendall_z(statistic: int) -> float:
    """Z = (S − sign(S))/σ (the continuity correction), 0 at S = 0."""
    if statistic == 0:
        return 0.0
    return (statistic - math.copysign(1, statistic)) / MANN_KENDALL_SD
