"""The goal's levers (docs/methods.md#the-goals-levers): for each input that can change the verdict at the plan, the
value at which it flips, all else held.

The verdict is never recomputed here by a copy of its arithmetic: the registry hands in a `Judge` built from the very
steps that computed it (the cost and the goal, or the serving analysis), run on the project as a lever changes it, or
on the measured and fitted times as a lever changes them. This module only searches: the scales for the node count,
bisection for a continuous lever, golden-section then bisection for the checkpoint interval, a closed form checked on
both sides for the node price and the utilization, the neighbours for the ZeRO stage.

A missed goal's lever is the value at which it would be met; a met goal's is its margin, the value at which it would
be missed. Each lever's flip is bracketed to a relative width of 2e-7, so that flips_at × (1 ± 1e-6) lands on each
side of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from statistics import median
from typing import TYPE_CHECKING

import numpy as np

from reportgen.analysis.common import powers_of_two
from reportgen.analysis.measured.load_point import PointFacts
from reportgen.analysis.measured.requests import ObjectiveName, Objectives, objective_flip
from reportgen.analysis.model.reliability import folded_fraction
from reportgen.analysis.verdict.goodput import nearest_to_need
from reportgen.analysis.verdict.lever_records import Lever, LeverName, Levers, LeverSource, NearMiss
from reportgen.analysis.verdict.objectives import OBJECTIVE_NAMES, latency_of, latency_source
from reportgen.project.model import Project

if TYPE_CHECKING:  # the goal and serving results hold levers: these are types of the evidence only
    from reportgen.analysis.measured.scaling import ScalingResult, TimeChange
    from reportgen.analysis.model.prediction import PredictionResult
    from reportgen.analysis.verdict.serving import ServingResult

WIDTH = 2e-7  # the relative width a flip is bracketed to
REACH = 1e3  # a continuous lever is searched from today / REACH to today × REACH
MAX_EVALUATIONS = 60  # per lever
BANDWIDTH_REACH = 2.0  # a bandwidth beyond 2× today's (or the node's own links) is not feasible


@dataclass(frozen=True)
class Outcome:
    """The verdict at the plan under a what-if, and how far it is from flipping: the plan's largest ratio of a
    value to its limit in its best viable regime (below 1: met)."""

    met: bool | None
    excess: float | None


@dataclass(frozen=True)
class WhatIf:
    """The project as a lever changes it, and the change of every measured and fitted time it makes."""

    project: Project
    times: TimeChange | None = None


Judge = Callable[[WhatIf], Outcome]  # the verdict at the plan under a what-if: the report's own steps


@dataclass(frozen=True)
class LeverEvidence:
    """What the search reads: the project, the judge of its verdict, and the analyses whose figures a lever scales
    (the measured runs and their fits, the α–β model's split of communication, a service's plan)."""

    project: Project
    judge: Judge
    scaling: ScalingResult | None
    prediction: PredictionResult | None
    serving: ServingResult | None
    layout_fits: Callable[[Project], bool | None] | None = None  # memory per device, under a changed layout


def find_levers(evidence: LeverEvidence) -> Levers:
    """Every lever that flips the verdict at the plan, feasible first, then by |log ratio| (a lever that cannot flip
    it within its reach is left out); when none feasible flips a missed goal, how near each brings it."""
    project = evidence.project
    if project.design is None:
        return Levers()
    now = evidence.judge(WhatIf(project))
    today, met_today = now.met, now.met is True
    found: list[Lever | NearMiss | None] = [_nodes(evidence, met_today)]
    for lever in _continuous_levers(evidence):
        found.append(lever.search(evidence.judge, met_today))
    found += [_zero_stage(evidence), *_serving_levers(evidence, met_today)]
    flips = sorted((lever for lever in found if isinstance(lever, Lever)),
                   key=lambda lever: (not lever.feasible, lever.distance))
    # a near miss brings the plan nearer its limits than it is today, or it is no lever at all
    misses = sorted((miss for miss in found if isinstance(miss, NearMiss)
                     if now.excess is None or miss.excess < now.excess), key=lambda miss: miss.excess)
    reached = today is not False or any(lever.feasible for lever in flips)  # near misses: a missed goal's only
    return Levers(tuple(flips), () if reached else tuple(misses), searched=True)


# ----------------------------------------------------------------------------------------------------- continuous
@dataclass(frozen=True)
class _Continuous:
    lever: LeverName
    path: str
    unit: str
    source: LeverSource
    today: float
    apply: Callable[[float], WhatIf]
    feasible: Callable[[float], bool]
    ends: tuple[float, ...] = ()  # the far ends searched (default today / REACH and today × REACH)
    guess: float | None = None  # a closed form, checked on both sides before any search

    def search(self, judge: Judge, met_today: bool) -> Lever | NearMiss | None:
        if not self.today > 0 or not math.isfinite(self.today):
            return None
        budget = [MAX_EVALUATIONS]
        excess: dict[float, float] = {}  # the plan's excess at each feasible value tried

        def flipped(value: float) -> bool:
            budget[0] -= 1
            outcome = judge(self.apply(value))
            if outcome.excess is not None and self.feasible(value):
                excess[value] = outcome.excess
            return _flipped(outcome.met, met_today)

        if self.guess is not None and self.guess > 0 and self.guess != self.today:
            below, above = self.guess * (1 - WIDTH / 2), self.guess * (1 + WIDTH / 2)
            near, far = (below, above) if self.guess > self.today else (above, below)
            if not flipped(near) and flipped(far):
                return self._lever(self.guess, not met_today)
        flips = []
        ends = self.ends or (self.today / REACH, self.today * REACH)
        for sign in (-1.0, 1.0):  # each side of today, its nearest end first
            side = [end for end in ends if end > 0 and (end - self.today) * sign > 0]
            for end in sorted(side, key=lambda end: abs(math.log(end / self.today))):
                if budget[0] > 1 and flipped(end):
                    flips.append(_bisect(flipped, self.today, end, budget))
                    break
        if not flips:
            return None if met_today else self._near_miss(excess)
        return self._lever(min(flips, key=lambda x: abs(math.log(x / self.today))), not met_today)

    def _near_miss(self, excess: dict[float, float]) -> NearMiss | None:
        if not excess:
            return None
        best = min(excess, key=lambda value: (excess[value], abs(math.log(value / self.today))))
        return NearMiss(self.lever, self.path, self.unit, self.today, best, excess[best])

    def _lever(self, flips_at: float, meets: bool) -> Lever:
        return Lever(self.lever, self.path, self.unit, self.today, flips_at, flips_at / self.today,
                     self.feasible(flips_at), self.source, meets)


def _flipped(verdict: bool | None, met_today: bool) -> bool:
    """A met goal flips where it is missed (its margin); a missed or unjudged one where it is met."""
    return verdict is False if met_today else verdict is True


def _bisect(flipped: Callable[[float], bool], inside: float, outside: float, budget: list[int]) -> float:
    """The boundary between `inside` (not flipped) and `outside` (flipped), to a relative width of WIDTH."""
    while max(inside, outside) / min(inside, outside) > 1 + WIDTH and budget[0] > 0:
        middle = math.sqrt(inside * outside)
        if flipped(middle):
            outside = middle
        else:
            inside = middle
    return math.sqrt(inside * outside)


def _continuous_levers(evidence: LeverEvidence) -> list[_Continuous]:
    project = evidence.project
    return [lever for lever in (
        _start_up(evidence), _serial_fraction(evidence), *_network(evidence), _node_price(project),
        *_spot(project), _checkpoint_interval(project), _utilization(project),
    ) if lever is not None]


@dataclass(frozen=True)
class _StartUps:
    """The start-ups the runs measured (a breakdown's wall time less its parts), by node count."""

    nodes: np.ndarray
    seconds: np.ndarray
    today: float  # the plan's, else the median of the measured ones

    @classmethod
    def of(cls, scaling: ScalingResult, plan: int | None) -> _StartUps | None:
        measured = {row.nodes: s for row in scaling.rows if (s := row.run.start_up) is not None and s > 0}
        if not measured:
            return None
        typical = median(measured.values())
        nodes = np.array(sorted(measured), dtype=float)
        return cls(nodes, np.array([measured[n] for n in nodes.tolist()], dtype=float),
                   measured.get(float(plan), typical) if plan else typical)

    def at(self, nodes: np.ndarray, cut: float = math.inf) -> np.ndarray:
        """The start-up at each scale, at most `cut`: a measured scale's own, else today's."""
        index = np.searchsorted(self.nodes, nodes).clip(0, len(self.nodes) - 1)
        return np.where(self.nodes[index] == nodes, np.minimum(cut, self.seconds[index]), min(cut, self.today))


def _start_up(evidence: LeverEvidence) -> _Continuous | None:
    """Every run's time less the cut (runs with a measured start-up only); an unmeasured scale's too."""
    scaling, plan = evidence.scaling, _plan(evidence.project)
    if scaling is None or scaling.axis == "load":
        return None
    start_ups = _StartUps.of(scaling, plan)
    if start_ups is None:
        return None
    today = start_ups.today

    def apply(value: float) -> WhatIf:
        def change(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
            return np.asarray(np.maximum(times - start_ups.at(nodes, today - value), times * 1e-9))

        return WhatIf(evidence.project, change)

    return _Continuous("start-up", "scaling.runs[].time less the breakdown's parts", "s", "measured", today, apply,
                       lambda value: value >= 0)


def _serial_fraction(evidence: LeverEvidence) -> _Continuous | None:
    """The fitted curve with σ (the USL's; Amdahl's f from two scales) changed: every time scaled by the curve's
    change at its scale, the reference's held. A measured start-up is held too: it is a lever of its own, and the
    fit, made on the wall times, counts it as serial work."""
    scaling = evidence.scaling
    if scaling is None or scaling.single_scale or scaling.axis == "load" or scaling.mode == "weak":
        return None
    reference = scaling.reference_nodes
    if scaling.usl is not None:
        usl = scaling.usl

        def per_node(nodes: np.ndarray, sigma: float) -> np.ndarray:  # T ∝ (1 + σ(p − 1) + κp(p − 1)) / p
            return np.asarray((1.0 + sigma * (nodes - 1.0) + usl.kappa * nodes * (nodes - 1.0)) / nodes)

        today, path = usl.sigma, "scaling: the USL's σ"
    elif scaling.amdahl is not None:
        def per_node(nodes: np.ndarray, sigma: float) -> np.ndarray:  # T ∝ f + (1 − f)/q
            return np.asarray(sigma + (1.0 - sigma) * reference / nodes)

        today, path = scaling.amdahl.serial_fraction, "scaling: Amdahl's f"
    else:
        return None

    start_ups = _StartUps.of(scaling, _plan(evidence.project))

    def apply(value: float) -> WhatIf:
        ref = np.array([reference], dtype=float)
        norm = float(per_node(ref, today)[0] / per_node(ref, value)[0])

        def change(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
            held = start_ups.at(nodes) if start_ups is not None else 0.0
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.asarray(held + (times - held) * per_node(nodes, value) / per_node(nodes, today) * norm)

        return WhatIf(evidence.project, change)

    return _Continuous("serial fraction", path, "fraction", "fitted", today, apply, lambda value: value >= 0,
                       ends=(today / REACH, min(today * REACH, 1.0)))


def _network(evidence: LeverEvidence) -> list[_Continuous]:
    """The communication part of each time scaled by the change: the measured communication where a breakdown
    gives it, else the model's share of the time; split into its latency (α) and bandwidth (β) parts by the
    model, all of it bandwidth without one."""
    project, scaling, model = evidence.project, evidence.scaling, evidence.prediction
    hardware = project.hardware
    if hardware is None or scaling is None or scaling.axis == "load":
        return []
    measured = {row.nodes: row.run.communication for row in scaling.rows if row.run.communication is not None}
    if not measured and model is None:
        return []
    plan = _plan(project)
    source: LeverSource = "measured" if plan is not None and float(plan) in measured else "model"
    known = np.array(sorted(measured), dtype=float)
    comm = np.array([measured[n] for n in known.tolist()], dtype=float)

    def parts(nodes: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(latency part, bandwidth part) of each time, in seconds."""
        if model is not None:
            a, b = model.pattern.coefficients(nodes)
            latency, bandwidth = model.alpha_s * a, model.beta_s * b
            step = model.t_comp_s / nodes + latency + bandwidth
        else:
            latency, bandwidth, step = np.zeros_like(nodes), np.ones_like(nodes), np.full_like(nodes, np.inf)
        total = latency + bandwidth
        index = np.searchsorted(known, nodes).clip(0, max(len(known) - 1, 0))
        at_measured = (known[index] == nodes) if len(known) else np.zeros(nodes.shape, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            comm_s = np.where(at_measured, comm[index] if len(known) else 0.0, times * total / step)
            share = np.where(total > 0, latency / total, 0.0)
        comm_s = np.nan_to_num(comm_s)
        return comm_s * share, comm_s * (1.0 - share)

    levers = []
    if hardware.network_bandwidth:
        today_bw = hardware.network_bandwidth
        ceiling = min(BANDWIDTH_REACH * today_bw, hardware.intra_node_bandwidth or math.inf)

        def bandwidth(value: float) -> WhatIf:
            def change(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
                return np.asarray(times - parts(nodes, times)[1] * (1.0 - today_bw / value))
            return WhatIf(project, change)

        levers.append(_Continuous("network bandwidth", "hardware.network_bandwidth", "B/s", source, today_bw,
                                  bandwidth, lambda value: value <= ceiling * (1 + 1e-12),
                                  ends=(today_bw / REACH, ceiling, today_bw * REACH)))
    if hardware.network_latency and model is not None:
        today_lat = hardware.network_latency

        def latency(value: float) -> WhatIf:
            def change(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
                return np.asarray(times - parts(nodes, times)[0] * (1.0 - value / today_lat))
            return WhatIf(project, change)

        levers.append(_Continuous("network latency", "hardware.network_latency", "s", source, today_lat, latency,
                                  lambda value: value >= 0))
    return levers


def _node_price(project: Project) -> _Continuous | None:
    pricing = project.pricing
    goal = project.project.goal
    if pricing is None or not pricing.node_hour or goal is None or \
            (goal.cost_per_run is None and goal.cost_per_hour is None):
        return None

    def apply(value: float) -> WhatIf:
        return WhatIf(replace(project, pricing=replace(pricing, node_hour=value)))

    return _Continuous("node price", "pricing.node_hour", f"{pricing.currency} per node-hour", "measured",
                       pricing.node_hour, apply, lambda value: value >= 0)


def _spot(project: Project) -> list[_Continuous]:
    pricing = project.pricing
    spot = pricing.regimes.spot if pricing and pricing.regimes else None
    if pricing is None or spot is None or pricing.regimes is None:
        return []
    regimes = pricing.regimes

    def with_spot(**change: float) -> WhatIf:
        return WhatIf(replace(project, pricing=replace(pricing, regimes=replace(regimes, spot=replace(spot,
                                                                                                       **change)))))

    return [
        _Continuous("spot fraction", "pricing.regimes.spot.price_fraction", "fraction", "measured",
                    spot.price_fraction, lambda value: with_spot(price_fraction=value),
                    lambda value: 0 <= value <= 1),
        _Continuous("preemption rate", "pricing.regimes.spot.preemptions_per_node_hour", "per node-hour",
                    "measured", spot.preemptions_per_node_hour,
                    lambda value: with_spot(preemptions_per_node_hour=value), lambda value: value >= 0),
    ]


def _checkpoint_interval(project: Project) -> _Continuous | None:
    """Searched from today toward the convex overhead's minimum (found by golden section), and outward."""
    reliability, plan = project.reliability, _plan(project)
    if reliability is None or reliability.checkpoint_interval is None or plan is None:
        return None
    today = reliability.checkpoint_interval

    def overhead(interval: float) -> float:
        return folded_fraction(replace(reliability, checkpoint_interval=interval), plan)

    best = _golden_section(overhead, today / REACH, today * REACH)

    def apply(value: float) -> WhatIf:
        return WhatIf(replace(project, reliability=replace(reliability, checkpoint_interval=value)))

    return _Continuous("checkpoint interval", "reliability.checkpoint_interval", "s", "model", today, apply,
                       lambda value: value > 0, ends=(best, today / REACH, today * REACH))


def _golden_section(f: Callable[[float], float], low: float, high: float, steps: int = 40) -> float:
    """The minimum of a convex f on [low, high], in log space."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = math.log(low), math.log(high)
    for _ in range(steps):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(math.exp(c)) <= f(math.exp(d)):
            b = d
        else:
            a = c
    return math.exp((a + b) / 2)


def _utilization(project: Project) -> _Continuous | None:
    """Owned nodes are viable from their minimum utilization on: that is the flip, when there is one."""
    pricing = project.pricing
    local = pricing.regimes.local if pricing and pricing.regimes else None
    if pricing is None or pricing.regimes is None or local is None or local.utilization is None \
            or local.min_utilization is None:
        return None
    regimes = pricing.regimes

    def apply(value: float) -> WhatIf:
        return WhatIf(replace(project, pricing=replace(pricing, regimes=replace(
            regimes, local=replace(local, utilization=value)))))

    return _Continuous("utilization", "pricing.regimes.local.utilization", "fraction", "measured",
                       local.utilization, apply, lambda value: value <= 1, ends=(local.min_utilization,),
                       guess=local.min_utilization)


# ------------------------------------------------------------------------------------------------------- discrete
def _nodes(evidence: LeverEvidence, met_today: bool) -> Lever | NearMiss | None:
    """The measured scales and the fitted ones the goal names, nearest to today first (ties: fewer nodes)."""
    project, scaling, plan = evidence.project, evidence.scaling, _plan(evidence.project)
    if plan is None or project.design is None or scaling is None:
        return None
    candidates = {int(row.nodes) for row in scaling.rows if float(row.nodes).is_integer()}
    if evidence.serving is not None and evidence.serving.nodes_to_serve is not None:
        candidates.add(int(evidence.serving.nodes_to_serve))
    candidates |= _fitted_candidates(scaling, plan)
    candidates.discard(plan)
    design = project.design
    available = project.hardware.nodes_available if project.hardware else None
    name: LeverName = "replicas" if project.serving else "nodes"
    measured = {row.nodes for row in scaling.rows}
    excess: dict[int, float] = {}
    def judged(p: int) -> Outcome:
        return evidence.judge(WhatIf(replace(project, design=replace(design, nodes=p))))

    for p in sorted((c for c in candidates if c > 0), key=lambda c: (abs(math.log(c / plan)), c))[:MAX_EVALUATIONS]:
        outcome = judged(p)
        if _flipped(outcome.met, met_today):
            # the unmeasured scales between are the fit's: bisected to the neighbour at which it flips
            inside = max((c for c in candidates | {plan} if (c - plan) * (p - c) > 0),
                         key=lambda c: abs(c - plan), default=plan)
            p = _integer_flip(lambda n: _flipped(judged(n).met, met_today), inside, p)
            return Lever(name, "design.nodes", "nodes", float(plan), float(p), p / plan,
                         available is None or p <= available, "measured" if p in measured else "fitted",
                         not met_today)
        if outcome.excess is not None and (available is None or p <= available):
            excess[p] = outcome.excess
    if met_today or not excess:
        return None
    best = min(excess, key=lambda p: (excess[p], p))
    return NearMiss(name, "design.nodes", "nodes", float(plan), float(best), excess[best])


def _integer_flip(flipped: Callable[[int], bool], inside: int, outside: int) -> int:
    """The scale nearest `inside` (not flipped) at which the verdict has flipped, by bisection over the integers up
    to `outside` (flipped)."""
    for _ in range(MAX_EVALUATIONS // 2):
        if abs(outside - inside) <= 1:
            break
        middle = (inside + outside) // 2
        if flipped(middle):
            outside = middle
        else:
            inside = middle
    return outside


def _fitted_candidates(scaling: ScalingResult, plan: int) -> set[int]:
    """Unmeasured scales worth judging by the fit: powers of two up to 4× the plan, and each scale's neighbours."""
    if scaling.usl is None or scaling.axis == "load":
        return set()
    top = max(4 * plan, int(max(row.nodes for row in scaling.rows)))
    return {*powers_of_two(top), plan - 1, plan + 1}


def _zero_stage(evidence: LeverEvidence) -> Lever | None:
    """The neighbouring ZeRO stages, by whether the layout then fits one device's memory."""
    project, fits = evidence.project, evidence.layout_fits
    design = project.design
    if fits is None or design is None or design.parallelism is None:
        return None
    layout = design.parallelism
    today = fits(project)
    if today is None:
        return None
    stages = sorted((s for s in range(4) if s != layout.zero_stage), key=lambda s: abs(s - layout.zero_stage))
    for stage in stages:
        changed = replace(project, design=replace(design, parallelism=replace(layout, zero_stage=stage)))
        if fits(changed) is (not today):
            return Lever("ZeRO stage", "design.parallelism.zero_stage", "stage", float(layout.zero_stage),
                         float(stage), stage / layout.zero_stage if layout.zero_stage else math.inf, True, "model",
                         not today)
    return None


def _serving_levers(evidence: LeverEvidence, met_today: bool) -> Sequence[Lever]:
    """A service's capacity per replica and p99 at the plan: each flips the verdict at its limit when every other
    limit holds there (closed forms on the plan's own ratios)."""
    serving = evidence.serving
    row = serving.plan_row if serving is not None else None
    if serving is None or row is None or not serving.plan_nodes:
        return ()
    source: LeverSource = "measured" if row.measured else "fitted"
    # the plan row is on demand: its regime's cost must hold for the capacity or the p99 alone to flip the verdict
    own = next((c for c in serving.at_plan if c.regime in ("on_demand", None)), None)
    cost_ok = own is None or (own.viable and own.meets_cost is not False)
    out = []
    need = serving.capacity_needed_rps
    # capacity alone decides when the p99 is known and met there; the p99 alone when the load is served
    if row.capacity_rps and need and row.meets_latency is True and not row.unknown and cost_ok \
            and (row.capacity_rps >= need) == met_today:
        today = row.capacity_rps / serving.plan_nodes
        flips = need / serving.plan_nodes
        out.append(Lever("capacity per replica", "baseline.serving.capacity_per_replica",
                         f"{serving.unit} per s", today, flips, flips / today, True, source, not met_today))
    # each latency objective alone, when the load is served, the cost holds and every other objective is met there
    values = {name: latency_of(row, name) for name, _ in serving.objectives}
    limits = dict(serving.objectives)
    for name, limit in serving.objectives:
        value = values[name]
        others_met = all(other is not None and other <= limits[other_name]
                         for other_name, other in values.items() if other_name != name)
        if value and limit and row.meets_load is True and cost_ok and others_met and (value <= limit) == met_today:
            origin: LeverSource = "measured" if latency_source(row, name) == "measured" else "model"
            out.append(Lever(LATENCY_LEVERS[name], f"the {OBJECTIVE_NAMES[name]} at the plan", "s", value, limit,
                             limit / value, True, origin, not met_today))
    return [*out, *_records_levers(evidence, met_today)]


# each per-request objective's lever (docs/methods.md#a-service-judged-from-its-requests)
OBJECTIVE_LEVERS: dict[ObjectiveName, LeverName] = {"ttft": "ttft objective", "tpot": "tpot objective",
                                                    "e2e": "e2e objective"}


def _records_levers(evidence: LeverEvidence, met_today: bool) -> list[Lever]:
    """A service judged from its requests (methods.md#a-service-judged-from-its-requests): the load at the plan
    flips where the need reaches the low end of the plan's max load within the objectives; at the plan's load point
    nearest the need, each objective flips at the ⌈a*·N⌉-th smallest value of its latency among the requests meeting
    every other objective, and the target share at the point's attainment. The objectives and the share are the
    goal's promises: kind objective."""
    serving = evidence.serving
    goodput = serving.goodput if serving is not None else None
    plan = serving.plan_nodes if serving is not None else None
    if serving is None or goodput is None or goodput.at_plan is None or plan is None or not goodput.joint:
        return []
    out = []
    low = goodput.at_plan.max_load_ci[0]
    if low is not None and serving.peak_load and (goodput.at_plan.verdict == "met") == met_today:
        flips = low / (1.0 + serving.headroom)  # the goal's load whose need (with its headroom) is that low end
        out.append(Lever("load", "goal.load", f"{serving.unit} per s", serving.peak_load, flips,
                         flips / serving.peak_load, True, "measured", not met_today))
    point = _nearest_point(serving, plan)
    if point is None or point.attainment is None:
        return out
    objectives = Objectives(**{key: value for key, value in goodput.objectives.items()})
    open_load = point.point.mode == "open"
    for name in objectives.stated():
        today = getattr(objectives, f"{name}_s")
        threshold = objective_flip(point.kept, objectives, name, goodput.target, open_load=open_load)
        if threshold is not None and today and (threshold > today) != met_today:
            out.append(Lever(OBJECTIVE_LEVERS[name], f"goal.latency.{name}", "s", today, threshold,
                             threshold / today, True, "measured", not met_today, kind="objective"))
    share = point.attainment.joint
    if share > 0 and (share >= goodput.target) == met_today:  # met: its margin; missed: where it meets
        out.append(Lever("attainment target", "goal.attainment", "fraction", goodput.target, share,
                         share / goodput.target, True, "measured", not met_today, kind="objective"))
    return out


def _nearest_point(serving: ServingResult, plan: int) -> PointFacts | None:
    """The plan's valid open load point nearest the need (the higher on a tie), as the verdict at the plan reads it."""
    points = [facts for nodes, facts in serving.records_judged
              if nodes == plan and facts.valid and facts.point.mode == "open" and facts.point.offered_per_s]
    return nearest_to_need(points, serving.capacity_needed_rps, lambda facts: facts.point.offered_per_s or 0.0)


# the engineering lever of each latency objective (docs/methods.md#the-goals-levers)
LATENCY_LEVERS: dict[str, LeverName] = {"p99": "p99 latency", "ttft_p99": "ttft p99", "tpot_p99": "tpot p99"}


def _plan(project: Project) -> int | None:
    return project.design.nodes if project.design else None
