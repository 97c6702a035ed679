"""A service judged from its load tests' requests (methods.md#a-service-judged-from-its-requests): every recorded
load point checked and judged, each scale's load curve fitted and its max load under the objectives found with an
interval, and the verdict at the plan read from it.

results.json's `serving.records` (the points) and `serving.goodput` (the curves and the plan) are made here and only
here; `ingest serving` judges a point with the same `judge_point`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Annotated, Literal, TypeVar

import numpy as np

from reportgen.analysis.common import JOULES_PER_KWH
from reportgen.analysis.measured.confidence import SEED, NextRun
from reportgen.analysis.measured.load_curve import Bound, decreasing_fit, latency_knee, max_load
from reportgen.analysis.measured.load_point import (
    Judgement,
    PointFacts,
    judge_point,
    latency_values,
    rejudged,
)
from reportgen.analysis.measured.pareto import ParetoPoint, chosen, frontier, joules_per_token, tokens_per_device
from reportgen.analysis.measured.requests import (
    LEVEL,
    OBJECTIVES,
    RESAMPLES,
    Interval,
    ObjectiveName,
    Verdict,
    Z,
    point_verdict,
    repeats_interval,
    requests_needed,
)
from reportgen.keys import Key
from reportgen.project.load_tests import Mode, RecordedPoint

T = TypeVar("T")
NEAR_CAPACITY_TTFT = 1.5  # a point whose p90 TTFT is past 1.5× that at the scale's lowest load is near capacity
LEFT_RANGE = 0.05  # past this share of resamples beyond a measured end, that end of the interval is a bound


# ------------------------------------------------------------------------------------------------ results.json
@dataclass(frozen=True)
class ShareRecord:
    share: Annotated[float, Key("the share of requests meeting this objective alone")]
    share_ci: Annotated[Interval, Key("its 90 % block-bootstrap interval")]


@dataclass(frozen=True)
class QuantileRecord:
    value_s: Annotated[float | None, Key("the percentile, linearly interpolated; null below the tail guard")]
    ci: Annotated[Interval | None, Key("its 90 % distribution-free binomial interval")]
    n: Annotated[int, Key("requests carrying the latency")]
    n_needed: Annotated[int, Key("requests the tail guard asks for: 10/(1 − p)")]


@dataclass(frozen=True)
class LittlesRecord:
    l_mean: Annotated[float, Key("L̄: the requests in flight on average over the window")]
    lambda_w: Annotated[float, Key("λ·W̄: the sends per second times their mean E2E")]
    gap: Annotated[float, Key("(λW̄ − L̄)/(λW̄); past ±10 % the point fails littles-law")]


@dataclass(frozen=True)
class TrendRecord:
    ttft_s: Annotated[float, Key("the rise of the median latency (TTFT, else E2E) over the window's ten bins, by "
                                 "Sen's slope")]
    inflight_s: Annotated[float, Key("the rise of the mean requests in flight over the ten bins, by Sen's slope "
                                     "(requests; the name keeps the contract's)")]
    z_ttft: Annotated[float, Key("Mann–Kendall Z of the latency series")]
    z_inflight: Annotated[float, Key("Mann–Kendall Z of the in-flight series")]


@dataclass(frozen=True)
class ParetoRecord:
    tokens_per_s_per_device: Annotated[float, Key("output tokens of completed requests over the window, per "
                                                  "device")]
    tokens_per_s_per_user: Annotated[float | None, Key("1 / the median TPOT")]
    energy_j_per_token: Annotated[float | None, Key("measured energy over the window over its output tokens "
                                                    "(vLLM's gpu_energy_j: the GPUs only); null where not "
                                                    "measured")] = None
    energy_source: Annotated[Literal["measured", "estimated"] | None, Key("how the energy is known")] = None


@dataclass(frozen=True)
class DroppedRecord:
    warmup: Annotated[int, Key("records outside the tool's measured phase, and sends the warm-up check removed")]
    cooldown: Annotated[int, Key("records after the measured phase (none read yet: 0)")]
    sampled_out: Annotated[int, Key("requests the tool did not keep (a sampled file)")]


@dataclass(frozen=True)
class RecordsPointResult:
    nodes: Annotated[float, Key("the node count the load test ran on")]
    tool: Annotated[str, Key("the load tester's format")]
    tool_version: Annotated[str | None, Key("its version, where the file says it")]
    file: Annotated[str, Key("the file the records came from")]
    sha256: Annotated[str, Key("its SHA-256")]
    mode: Annotated[Mode | None, Key("open (a rate), closed (a concurrency), or null (unbounded)")]
    offered_per_s: Annotated[float | None, Key("λ_o: the offered rate of an open load")]
    concurrency: Annotated[int | None, Key("the requests in flight of a closed load")]
    achieved_send_per_s: Annotated[float | None, Key("λ_s = (N − 1)/(s_N − s_1): the rate the client sent at")]
    sent: Annotated[int, Key("N: requests sent in the window")]
    completed: Annotated[int, Key("requests that succeeded")]
    failed: Annotated[int, Key("requests failed, cancelled or incomplete")]
    window_s: Annotated[float, Key("W: from the first send to the last byte")]
    dropped: Annotated[DroppedRecord, Key("requests left out, by why")]
    tokens_source: Annotated[str, Key("where the output-token counts came from: server, client, chunks, mixed, "
                                      "unknown")]
    valid: Annotated[bool, Key("no check removed the point from the verdict")]
    findings: Annotated[tuple[str, ...], Key("the codes of the checks that fired", item="a finding code")]
    block_length: Annotated[int | None, Key("b of the block bootstrap at this point")]
    attainment: Annotated[float | None, Key("A: the share of requests meeting every objective (failures count as "
                                            "not good)")]
    attainment_ci: Annotated[Interval | None, Key("its 90 % interval (with three or more repeats, the union with "
                                                  "the runs' t-interval)")]
    objectives: Annotated[dict[str, ShareRecord], Key("A_j: each objective's share alone", item="one objective")]
    goodput_per_s: Annotated[float | None, Key("G: good requests per second of the window")]
    goodput_ci: Annotated[Interval | None, Key("its 90 % interval")]
    good_tokens_per_s: Annotated[float | None, Key("output tokens of good requests per second of the window")]
    good_tokens_ci: Annotated[Interval | None, Key("its 90 % interval")]
    quantiles: Annotated[dict[str, dict[str, QuantileRecord]], Key("p50, p90 and p99 of TTFT, TPOT and E2E",
                                                                   item="one latency's percentiles")]
    littles_law: Annotated[LittlesRecord | None, Key("Little's law over the window (null without send times)")]
    trend: Annotated[TrendRecord | None, Key("the window's latency and in-flight trends")]
    client_queue_p90_s: Annotated[float | None, Key("p90 of the client's wait past each scheduled send")]
    pareto: Annotated[ParetoRecord, Key("the point on the users-devices frontier")]
    verdict: Annotated[Verdict, Key("met, missed, or null (not decided, or not judged)")]
    near_capacity: Annotated[bool, Key("measured at or past the knee, or with TTFT past 1.5× the scale's lowest "
                                       "load: a single run there decides only by its interval's width")]


@dataclass(frozen=True)
class RecordsResult:
    block_length: Annotated[str, Key("the block-length rule; each point's b is in its entry")]
    resamples: Annotated[int, Key("bootstrap resamples of each point")]
    seed: Annotated[int, Key("the resamples' seed")]
    points: Annotated[tuple[RecordsPointResult, ...], Key("every recorded load point", item="one load point")]
    frontier: Annotated[tuple[int, ...], Key("the valid points no other beats on both output tokens/s per user and "
                                             "per device (indexes into points, most per user first)",
                                             item="an index")] = ()
    chosen: Annotated[int | None, Key("the operating point: at the plan's scale, of the points meeting the target, "
                                      "the most output tokens/s per device (an index into points)")] = None


@dataclass(frozen=True)
class Definition:
    quantity: Annotated[str, Key("the canonical quantity")]
    tool: Annotated[str, Key("the tool whose own quantity differs")]
    own_name: Annotated[str, Key("the tool's name for its quantity")]
    converted: Annotated[bool, Key("recomputed from the records to the canonical one")]
    note: Annotated[str, Key("how the two differ")]


@dataclass(frozen=True)
class ScaleCurve:
    nodes: Annotated[float, Key("the node count")]
    mode: Annotated[Mode, Key("open or closed: never mixed on one axis")]
    max_load_per_s: Annotated[float | None, Key("x*: where the non-increasing fit of attainment crosses the target "
                                                "(open: request/s; closed: requests in flight); with a bound, the "
                                                "measured end it lies beyond")]
    max_load_ci: Annotated[tuple[float | None, float | None], Key(
        "its 90 % interval from refitting the resamples; an end null where more than 5 % of resamples leave the "
        "measured range", item="an end")]
    bound: Annotated[Bound | None, Key("above: the largest load measured still meets the target; below: the "
                                       "smallest already misses")]
    knee_per_s: Annotated[float | None, Key("where the binding objective's median latency departs (Kneedle)")]
    points_used: Annotated[int, Key("valid loads fitted (repeats pooled)")]
    over_saturated_per_s: Annotated[float | None, Key("the lowest load that over-saturated the scale: x* lies "
                                                      "below it")] = None


@dataclass(frozen=True)
class PlanGoodput:
    nodes: Annotated[int | None, Key("the plan")]
    need_per_s: Annotated[float, Key("goal.load × (1 + headroom)")]
    max_load_per_s: Annotated[float | None, Key("x*(plan): measured, or interpolated between measured scales")]
    max_load_ci: Annotated[tuple[float | None, float | None], Key("its interval", item="an end")]
    interpolated: Annotated[bool, Key("the plan lies between measured scales")]
    verdict: Annotated[Verdict, Key("met when the need ≤ the low end, missed when it exceeds the high end, else "
                                    "null")]
    attainment: Annotated[float | None, Key("A at the plan's load point nearest the need")]
    attainment_ci: Annotated[Interval | None, Key("its interval")]
    binding: Annotated[str | None, Key("the objective with the lowest share there")]
    why_unjudged: Annotated[str | None, Key("why there is no verdict, when there is none")]


@dataclass(frozen=True)
class GoodputResult:
    target: Annotated[float, Key("a*: the share of requests that must meet the objectives")]
    joint: Annotated[bool, Key("every objective at once (goal.attainment), else each p99 objective alone at 99 %")]
    objectives: Annotated[dict[str, float | None], Key("the per-request thresholds", keys=("ttft_s", "tpot_s",
                                                                                           "e2e_s"),
                                                       item="the {key} threshold")]
    definitions: Annotated[tuple[Definition, ...], Key("where a tool's own quantity differs from the canonical one",
                                                       item="one difference")]
    by_scale: Annotated[tuple[ScaleCurve, ...], Key("each scale's load curve", item="one scale and mode")]
    at_plan: Annotated[PlanGoodput | None, Key("the verdict at the plan from the curves")]


@dataclass(frozen=True)
class Goodput:
    """The two results, and the judged points the page and the levers read."""

    records: RecordsResult
    goodput: GoodputResult | None
    judged: tuple[tuple[float, PointFacts], ...]


# ------------------------------------------------------------------------------------------------ the analysis
@dataclass(frozen=True)
class _Group:
    """The runs of one load at one scale: repeats pooled."""

    nodes: float
    mode: Mode
    load: float
    runs: tuple[PointFacts, ...]

    @property
    def judged(self) -> tuple[PointFacts, ...]:
        return tuple(run for run in self.runs if run.valid and run.attainment is not None)

    @property
    def weight(self) -> int:
        return sum(run.attainment.requests for run in self.judged if run.attainment)

    @property
    def share(self) -> float:
        return sum(run.attainment.joint * run.attainment.requests for run in self.judged if run.attainment) \
            / self.weight

    @property
    def resampled(self) -> np.ndarray:
        """The pooled attainment in each resample: each run resampled on its own, averaged with weights N_r."""
        return sum((run.attainment.joint_resampled * run.attainment.requests for run in self.judged
                    if run.attainment), np.zeros(RESAMPLES)) / self.weight

    @property
    def interval(self) -> Interval:
        judged = [run.attainment for run in self.judged if run.attainment]
        if len(judged) == 1:  # one run: its own interval (few exceptions widened as the point's is)
            return judged[0].joint_ci
        low, high = np.percentile(self.resampled, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
        found = (float(low), float(high))
        shares = [run.attainment.joint for run in self.judged if run.attainment]
        return repeats_interval(shares, found) if len(shares) >= 3 else found


def judge_records(recorded: tuple[RecordedPoint, ...], judgement: Judgement | None, *, plan: int | None,
                  need_per_s: float | None, unit: str, devices_per_node: int) -> Goodput:
    """Every recorded point judged; with objectives, each scale's curve and the verdict at the plan."""
    scales = _judged_scales(recorded, judgement, devices_per_node)
    frontier_of, chosen_of = _pareto(scales.points, plan)
    records = RecordsResult("min(max(⌈N^(1/3)⌉, ⌈L̄⌉), ⌊N/10⌋), at least 1", RESAMPLES, SEED, scales.points,
                            frontier_of, chosen_of)
    if judgement is None:
        return Goodput(records, None, scales.judged)
    at_plan = _at_plan(scales.curves, scales.groups, judgement, plan, need_per_s, unit) \
        if need_per_s is not None else None
    goodput = GoodputResult(judgement.target, judgement.joint,
                            {f"{name}_s": getattr(judgement.objectives, f"{name}_s") for name in OBJECTIVES},
                            scales.definitions, tuple(curve for curve in scales.curves if curve is not None),
                            at_plan)
    return Goodput(records, goodput, scales.judged)


@dataclass(frozen=True)
class _JudgedScales:
    """What the requests say whatever the plan and the load: each point judged, the loads pooled, each scale's
    curve."""

    judged: tuple[tuple[float, PointFacts], ...]
    groups: tuple[_Group, ...]
    points: tuple[RecordsPointResult, ...]
    curves: tuple[ScaleCurve | None, ...]
    definitions: tuple[Definition, ...]


@functools.lru_cache(maxsize=16)
def _judged_scales(recorded: tuple[RecordedPoint, ...], judgement: Judgement | None,
                   devices_per_node: int) -> _JudgedScales:
    """Once per build: the levers' what-ifs move the plan and the load, never the requests nor the objectives, and
    each scale's curve refits 2,000 resamples (a build refitted them 34 times, 1.9 s of a 2.5 s build)."""
    judged: list[tuple[float, PointFacts, RecordedPoint]] = []
    seeds: dict[tuple[float, str, float | None], int] = defaultdict(int)
    for entry in recorded:
        if entry.point is None:
            continue
        key = (entry.nodes, entry.point.mode or "-", entry.point.load)
        seeds[key] += 1  # repeats of one load draw their own resamples: the same draw would tie them together
        judged.append((entry.nodes, _judged_point(entry, judgement, SEED + seeds[key] - 1), entry))
    groups = _groups([(nodes, facts) for nodes, facts, _ in judged])
    near_ids = _near_capacity(groups, judgement)
    near = [id(facts) in near_ids for _, facts, _ in judged]  # by position: a point judged again is a new object
    if judgement is not None:
        judged = [(nodes, rejudged(facts, judgement, near_capacity=close and _single(facts, groups)), entry)
                  for (nodes, facts, entry), close in zip(judged, near, strict=True)]
        groups = _groups([(nodes, facts) for nodes, facts, _ in judged])
    points = tuple(_point_record(nodes, facts, entry, devices_per_node, close)
                   for (nodes, facts, entry), close in zip(judged, near, strict=True))
    curves = () if judgement is None else \
        tuple(_curve(nodes, mode, scale_groups, judgement) for (nodes, mode), scale_groups in
              sorted(_by_scale(groups).items()))
    return _JudgedScales(tuple((nodes, facts) for nodes, facts, _ in judged), tuple(groups), points, curves,
                         _definitions(judged) if judgement is not None else ())


@functools.lru_cache(maxsize=64)
def _judged_point(entry: RecordedPoint, judgement: Judgement | None, seed: int) -> PointFacts:
    """One recorded point judged, once: the levers' what-ifs move the plan and the load, never the requests or the
    objectives, and a build judged each point 34 times (a RecordedPoint is hashed as itself)."""
    assert entry.point is not None
    return judge_point(entry.point, judgement, seed=seed)


def nearest_to_need(items: Iterable[T], need: float, load: Callable[[T], float]) -> T | None:
    """The item whose load is nearest the need, the higher on a tie: the plan's load point the verdict and the
    levers read."""
    return min(items, key=lambda item: (abs(load(item) - need), -load(item)), default=None)


def _groups(judged: list[tuple[float, PointFacts]]) -> list[_Group]:
    found: dict[tuple[float, Mode, float], list[PointFacts]] = defaultdict(list)
    for nodes, facts in judged:
        point = facts.point
        if point.mode is not None and point.load is not None:
            found[(nodes, point.mode, point.load)].append(facts)
    return [_Group(nodes, mode, load, tuple(runs)) for (nodes, mode, load), runs in sorted(found.items())]


def _by_scale(groups: list[_Group]) -> dict[tuple[float, Mode], list[_Group]]:
    found: dict[tuple[float, Mode], list[_Group]] = defaultdict(list)
    for group in groups:
        found[(group.nodes, group.mode)].append(group)
    return found


def _single(facts: PointFacts, groups: list[_Group]) -> bool:
    return any(len(group.runs) == 1 and group.runs[0] is facts for group in groups)


def _binding(groups: list[_Group]) -> ObjectiveName | None:
    """The objective with the lowest share alone at the scale's largest judged load."""
    judged = [group for group in groups if group.judged]
    if not judged:
        return None
    last = max(judged, key=lambda group: group.load).judged[0].attainment
    if last is None or not last.objectives:
        return None
    return min(last.objectives, key=lambda name: last.objectives[name][0])


def _medians(groups: list[_Group], name: ObjectiveName) -> np.ndarray:
    """The median of a latency over each group's requests (its runs pooled)."""
    values = []
    for group in groups:
        pooled = np.concatenate([latency_values(run.kept, name, open_load=group.mode == "open")
                                 for run in group.runs])
        values.append(float(np.nanmedian(pooled)) if not np.isnan(pooled).all() else np.nan)
    return np.array(values)


def _knee(groups: list[_Group]) -> float | None:
    valid = [group for group in groups if all(run.valid for run in group.runs)]
    name = _binding(valid)
    if name is None:
        return None
    medians = _medians(valid, name)
    keep = ~np.isnan(medians)
    return latency_knee(np.array([group.load for group in valid])[keep], medians[keep])


def _near_capacity(groups: list[_Group], judgement: Judgement | None) -> set[int]:
    """The points measured near capacity: at or past the scale's knee, or with a p90 TTFT past 1.5× that at the
    scale's lowest load (ids of their facts)."""
    near: set[int] = set()
    if judgement is None:
        return near
    for scale_groups in _by_scale(groups).values():
        knee = _knee(scale_groups)
        ordered = sorted(scale_groups, key=lambda group: group.load)
        p90s = [float(np.nanpercentile(np.concatenate([run.point.requests.ttft_s for run in group.runs]), 90))
                if not all(np.isnan(run.point.requests.ttft_s).all() for run in group.runs) else np.nan
                for group in ordered]
        for group, p90 in zip(ordered, p90s, strict=True):
            past_knee = knee is not None and group.load >= knee
            slower = bool(np.isfinite(p90) and np.isfinite(p90s[0]) and p90 > NEAR_CAPACITY_TTFT * p90s[0])
            if past_knee or slower:
                near.update(id(run) for run in group.runs)
    return near


def _curve(nodes: float, mode: Mode, groups: list[_Group], judgement: Judgement) -> ScaleCurve | None:
    judged = sorted((group for group in groups if group.judged and group.weight), key=lambda group: group.load)
    saturated = [group.load for group in groups for run in group.runs
                 if any(check.fired and check.code == "over-saturated" for check in run.checks)]
    lowest_saturated = min(saturated, default=None)
    if not judged:
        return None
    loads = np.array([group.load for group in judged])
    weights = np.array([group.weight for group in judged], dtype=float)
    found = max_load(loads, decreasing_fit(loads, np.array([group.share for group in judged]), weights),
                     judgement.target)
    resampled = np.stack([group.resampled for group in judged], axis=1)  # (resamples, loads)
    values, bounds = [], []
    for row in resampled:
        crossing = max_load(loads, decreasing_fit(loads, row, weights), judgement.target)
        values.append(crossing.value)
        bounds.append(crossing.bound)
    low, high = np.percentile(values, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
    interval = (None if bounds.count("below") > LEFT_RANGE * len(bounds) else float(low),
                None if bounds.count("above") > LEFT_RANGE * len(bounds) else float(high))
    return ScaleCurve(nodes, mode, found.value, interval, found.bound, _knee(groups), len(judged), lowest_saturated)


def _at_plan(curves: tuple[ScaleCurve | None, ...], groups: tuple[_Group, ...], judgement: Judgement, plan: int | None,
             need: float, unit: str) -> PlanGoodput:
    def unjudged(why: str, **found: object) -> PlanGoodput:
        values: dict[str, object] = {"max_load_per_s": None, "max_load_ci": (None, None), "interpolated": False,
                                     "attainment": None, "attainment_ci": None, "binding": None}
        values.update(found)
        return PlanGoodput(plan, need, verdict=None, why_unjudged=why, **values)  # type: ignore[arg-type]

    if plan is None:
        return unjudged("no plan: design.nodes is not given")
    at_plan = [group for group in groups if group.nodes == plan and group.mode == "open" and group.judged]
    nearest = nearest_to_need(at_plan, need, lambda group: group.load)
    shares: dict[str, object] = {}
    if nearest is not None:
        measured = nearest.judged[0].attainment
        assert measured is not None
        shares = {"attainment": nearest.share, "attainment_ci": nearest.interval,
                  "binding": min(measured.objectives, key=lambda name: measured.objectives[name][0])
                  if measured.objectives else None}
    if unit != "request":
        return unjudged(f"the load counts {unit}s and the load tests' curves count requests", **shares)
    if nearest is not None and abs(nearest.load - need) <= 1e-9 * need:  # a point at the need decides by itself
        # one run: its own verdict (held to its interval's width near capacity); repeats: their pooled interval
        verdict = nearest.judged[0].verdict if len(nearest.judged) == 1 else \
            point_verdict(nearest.interval, judgement.target)
        curve = next((curve for curve in curves if curve is not None and curve.mode == "open"
                      and curve.nodes == plan), None)
        return _at_point(plan, need, verdict, shares, curve)
    open_curves = sorted((curve for curve in curves if curve is not None and curve.mode == "open"),
                         key=lambda curve: curve.nodes)
    exact = next((curve for curve in open_curves if curve.nodes == plan), None)
    if exact is not None:
        return _judged_at(plan, need, exact.max_load_per_s, exact.max_load_ci, exact.bound, False, shares)
    below = [curve for curve in open_curves if curve.nodes < plan]
    above = [curve for curve in open_curves if curve.nodes > plan]
    if not below or not above:
        if any(curve is not None and curve.nodes == plan for curve in curves):  # closed loads alone
            return unjudged("the plan's load tests kept a concurrency, not a rate: the need in request/s is not "
                            "held against requests in flight", **shares)
        return unjudged("no load curve at the plan, nor at scales on both sides of it", **shares)
    left, right = below[-1], above[0]
    if left.bound or right.bound or None in (*left.max_load_ci, *right.max_load_ci):
        return unjudged("a neighbouring scale's max load is a bound, which cannot be interpolated", **shares)
    share = (plan - left.nodes) / (right.nodes - left.nodes)

    def between(a: float | None, b: float | None) -> float:
        assert a is not None and b is not None
        return a + (b - a) * share

    value = between(left.max_load_per_s, right.max_load_per_s)
    interval = (between(left.max_load_ci[0], right.max_load_ci[0]), between(left.max_load_ci[1],
                                                                             right.max_load_ci[1]))
    return _judged_at(plan, need, value, interval, None, True, shares)


def _at_point(plan: int, need: float, verdict: Verdict, shares: dict[str, object],
              curve: ScaleCurve | None) -> PlanGoodput:
    """The verdict of the plan's point at the need, beside the plan's max load (its curve's, for the levers)."""
    why = None if verdict else "the attainment's interval at the needed load straddles the target"
    return PlanGoodput(plan, need, curve.max_load_per_s if curve else None,
                       curve.max_load_ci if curve else (None, None), False, verdict,
                       shares.get("attainment"), shares.get("attainment_ci"),  # type: ignore[arg-type]
                       shares.get("binding"), why)  # type: ignore[arg-type]


def meets_need(need: float, value: float | None, interval: tuple[float | None, float | None],
               bound: Bound | None) -> bool | None:
    """Whether a max load under the objectives serves a need: True when the need ≤ its interval's low end, False
    when the need exceeds its high end, else None (not decided). A bound's interval says how far to believe it: "above
    8" whose resamples all stay above 8 has the low end 8 and serves a need ≤ 8; one whose resamples often fall below
    the loads measured has no low end, and serves nothing for certain. The verdict at the plan and the serving rows
    both read it."""
    low, high = interval
    if low is not None and need <= low * (1 + 1e-12):
        return True
    if high is not None and need > high:
        return False
    if bound == "below" and value is not None and high is not None and need >= value:
        return False  # at the smallest load measured, which already misses
    return None


def _judged_at(plan: int, need: float, value: float | None, interval: tuple[float | None, float | None],
               bound: Bound | None, interpolated: bool, shares: dict[str, object]) -> PlanGoodput:
    met = meets_need(need, value, interval, bound)
    verdict: Verdict = "met" if met else "missed" if met is False else None
    why = None if verdict else "the need lies within the max load's interval, or beyond a bound"
    return PlanGoodput(plan, need, value, interval, interpolated, verdict,
                       shares.get("attainment"), shares.get("attainment_ci"),  # type: ignore[arg-type]
                       shares.get("binding"), why)  # type: ignore[arg-type]


def _point_record(nodes: float, facts: PointFacts, entry: RecordedPoint, devices_per_node: int,
                  near: bool) -> RecordsPointResult:
    point, measured = facts.point, facts.attainment
    requests = point.requests
    ok = requests.ok.astype(bool)
    decoded = requests.tpot_s[ok & ~np.isnan(requests.tpot_s)]
    per_user = 1 / float(np.median(decoded)) if len(decoded) and np.median(decoded) > 0 else None
    produced = float(np.nansum(requests.output_tokens[ok]))
    per_device = tokens_per_device(produced, requests.window_s, max(int(nodes * devices_per_node), 1))
    energy = joules_per_token(point.energy_j / JOULES_PER_KWH, produced) if point.energy_j and produced else None
    quantiles: dict[str, dict[str, QuantileRecord]] = {
        name: {f"p{round(q.p * 100)}": QuantileRecord(q.value, q.ci, q.n, q.needed) for q in found}
                 for name, found in facts.quantiles.items()}
    trend = facts.trend
    return RecordsPointResult(
        nodes, point.tool, None if entry.line.version == "-" else entry.line.version, entry.line.file,
        entry.line.sha256, point.mode, point.offered_per_s, point.concurrency, facts.achieved_send_per_s,
        requests.count, facts.completed, facts.failed, requests.window_s,
        DroppedRecord(point.dropped_warmup + facts.warm_up_left_out, 0,
                      (point.sampled_from - requests.count) if point.sampled_from else 0),
        point.tokens_source, facts.valid, tuple(check.code for check in facts.fired),
        measured.block if measured else None, measured.joint if measured else None,
        measured.joint_ci if measured else None,
        {name: ShareRecord(share, ci) for name, (share, ci) in measured.objectives.items()} if measured else {},
        measured.goodput_per_s if measured else None, measured.goodput_ci if measured else None,
        measured.good_tokens_per_s if measured else None, measured.good_tokens_ci if measured else None,
        quantiles,
        LittlesRecord(facts.littles.in_flight, facts.littles.rate_times_latency, facts.littles.gap)
        if facts.littles else None,
        TrendRecord(trend.latency_rise_s, trend.in_flight_rise, trend.z_latency, trend.z_in_flight) if trend else None,
        facts.client_queue_p90_s, ParetoRecord(per_device, per_user, energy, "measured" if energy else None),
        facts.verdict, near)


def _pareto(points: tuple[RecordsPointResult, ...], plan: int | None) -> tuple[tuple[int, ...], int | None]:
    """The frontier of the valid points and the chosen operating point, as indexes into the points."""
    index_of: dict[int, int] = {}
    candidates = []
    for index, point in enumerate(points):
        if point.valid and point.pareto.tokens_per_s_per_user is not None:
            load = point.offered_per_s if point.offered_per_s is not None else float(point.concurrency or 0)
            candidate = ParetoPoint(point.nodes, load, point.pareto.tokens_per_s_per_device,
                                    point.pareto.tokens_per_s_per_user,
                                    point.verdict == "met" if point.verdict else None)
            index_of[id(candidate)] = index
            candidates.append(candidate)
    best = chosen(candidates, plan) if plan is not None else None
    return tuple(index_of[id(point)] for point in frontier(candidates)), index_of[id(best)] if best else None


# Where a tool's own quantity is not the canonical one (methods.md#one-set-of-definitions)
TOOL_DEFINITIONS: dict[str, tuple[Definition, ...]] = {
    "vllm-detailed": (Definition("TPOT", "vllm-detailed", "itl", False, "vLLM's itl pools chunk gaps over "
                                 "requests: not TPOT, which is recomputed per request"),),
    "guidellm": (Definition("TPOT", "guidellm", "time_per_output_token_ms", True, "(last token − start)/n includes "
                            "the TTFT: TPOT is recomputed from the timings"),
                 Definition("TPOT", "guidellm", "inter_token_latency_ms", True, "(last token − first token)/(n − 1) "
                            "ends at the last token, not the last byte: TPOT is recomputed with request_end")),
    "aiperf-records": (Definition("TPOT", "aiperf-records", "inter_token_latency", True, "AIPerf counts n with its "
                                  "client tokenizer (reasoning included): recomputed with the server's count where "
                                  "present"),),
    "inference-perf-records": (Definition("TPOT", "inference-perf-records", "time_per_output_token", True,
                                          "(last token − first token)/(n − 1): TPOT is recomputed with end_time"),
                               Definition("TPOT", "inference-perf-records", "normalized_time_per_output_token",
                                          False, "E2E/n: not TPOT")),
}


def _definitions(judged: list[tuple[float, PointFacts, RecordedPoint]]) -> tuple[Definition, ...]:
    tools = sorted({facts.point.tool for _, facts, _ in judged})
    return tuple(definition for tool in tools for definition in TOOL_DEFINITIONS.get(tool, ()))



# After the requests a point needs, its 90 % interval clears the target: the verdict is then wrong with the one-sided
# 5 % of that interval, the chance the planner's runs are weighed by too
WRONG_AFTER_DECIDED = 0.05


def requests_runs(judged: tuple[tuple[float, PointFacts], ...], judgement: Judgement | None, plan: int | None,
                  price_per_node_hour: float | None) -> tuple[NextRun, ...]:
    """The requests that would decide each load point whose verdict is not (at the plan's scale where it has
    points, else at every scale): n = max(10/(1 − p), z²·Â(1 − Â)/(Â − a*)² · (1 + ρ)/(1 − ρ)), over the point's
    rate for how long that takes (methods.md#a-service-judged-from-its-requests)."""
    if judgement is None:
        return ()
    at_plan = [(nodes, facts) for nodes, facts in judged if nodes == plan]
    runs = []
    for nodes, facts in at_plan or judged:
        measured = facts.attainment
        if measured is None or not facts.valid or facts.verdict is not None:
            continue
        shares = [("every", measured.joint, measured.joint_ci, None)] if judgement.joint else \
            [(name, share, ci, 0.99) for name, (share, ci) in measured.objectives.items()
             if point_verdict(ci, judgement.target) is None]
        rate = facts.point.offered_per_s if facts.point.mode == "open" else facts.achieved_send_per_s
        for objective, share, interval, quantile_p in shares:
            needed = requests_needed(share, judgement.target, facts.good_autocorrelation, p=quantile_p)
            if needed is None or not rate:
                continue
            repeats = 1
            if needed <= measured.requests:  # enough requests, yet not decided: a single run near capacity, whose
                repeats, needed = 2, 2 * measured.requests  # spread one run does not show: two repeats of it
                width = interval[1] - interval[0]  # its chance of a wrong verdict, read as the rule reads its
                interval = (interval[0] - width, interval[1] + width)  # interval: widened by its own width
            duration = needed / rate
            hours = nodes * duration / 3600
            cost = hours * price_per_node_hour if price_per_node_hour else None
            wrong = _wrong_now(share, interval, judgement.target)
            runs.append(NextRun(int(nodes), repeats, hours, cost, wrong, min(WRONG_AFTER_DECIDED, wrong),
                                kind="requests", load_per_s=facts.point.load,
                                mode=facts.point.mode, objective=objective, requests_have=measured.requests,
                                requests_needed=needed, duration_s=duration))
    return tuple(runs)


def _wrong_now(share: float, interval: Interval, target: float) -> float:
    """The chance the point's share lies on the other side of the target from its estimate: its 90 % interval read
    as a normal one (σ = width / 2z)."""
    sigma = (interval[1] - interval[0]) / (2 * Z)
    if sigma <= 0:
        return 0.0
    return NormalDist().cdf(-abs(share - target) / sigma)
