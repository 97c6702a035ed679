"""Serving projects: the load served within the latency objective, and what an hour of it costs.
(docs/methods.md#4x-serving-projects)

An interactive service optimizes tail latency and treats cost as the constraint (seed 003): it is judged on the
capacity each scale sustains, the p99 latency measured there, and the money, energy and CO2e of an hour of service,
never on the time of a run. Everything here is a pure function of the project and the measured scaling.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.common import JOULES_PER_KWH, Origin, at_least, ceil_ratio, first_min, plan_verdict
from reportgen.analysis.measured.load_curve import Bound
from reportgen.analysis.measured.load_point import PointFacts, judgement_of
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.fits import USLFit, usl_capacity
from reportgen.analysis.model.replica import Replica, replica_of
from reportgen.analysis.money.cost import local_viability
from reportgen.analysis.quotes import quote
from reportgen.analysis.verdict.goal import GoalDocument, GoalPoint, GoalRow, LatencyRatios
from reportgen.analysis.verdict.goodput import (
    Goodput,
    GoodputResult,
    RecordsResult,
    ScaleCurve,
    judge_records,
    meets_need,
)
from reportgen.analysis.verdict.lever_records import Levers
from reportgen.analysis.verdict.objectives import (
    OBJECTIVE_NAMES,
    OBJECTIVES,
    ROW_FIELDS,
    RUN_FIELDS,
    LatencyOrigin,
    ObjectiveName,
    latency_of,
)
from reportgen.keys import DocumentPath, Key, derived, money
from reportgen.project.accuracy_table import Calibration
from reportgen.project.load_tests import RecordedPoint
from reportgen.project.model import Project, RegimeName
from reportgen.wording import counted, duration, listed, requests, target_share

LimitedBy = Literal["capacity", "latency"]  # what keeps every scale from serving
CapacitySource = Literal["measured", "fitted", "records"]

HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12
PER_REQUEST_NAMES = {"ttft_s": "a TTFT", "tpot_s": "a TPOT", "e2e_s": "an E2E"}  # a request's own latencies
MILLION = 1e6


@dataclass(frozen=True)
class ObjectiveLimits:
    p99_s: Annotated[float | None, Key("end-to-end p99 latency")]
    ttft_p99_s: Annotated[float | None, Key("p99 time to first token")]
    tpot_p99_s: Annotated[float | None, Key("p99 time per output token")]


@dataclass(frozen=True)
class ServingRow:
    """One scale: what it serves, how fast, and what an hour of it costs and emits (on-demand prices)."""

    nodes: Annotated[float, Key("node count")]
    capacity_rps: Annotated[float | None, Key("requests per second sustained")]
    capacity_source: Annotated[CapacitySource, Key("measured (the load test's throughput), records (the max load "
                                                   "within every objective, from the load tests' requests), or "
                                                   "from the USL fit")]
    p99_s: Annotated[float | None, Key("p99 latency there")]
    p99_source: Annotated[LatencyOrigin | None, Key("how the p99 is known (null: unknown there)")]
    meets_load: Annotated[bool | None, Key("capacity ≥ capacity needed")]
    # every stated objective met (None: one is not known here, or none is stated)
    meets_latency: Annotated[bool | None, Key("p99 ≤ the objective; null when unknown")]
    # ("not known", never true)
    serves: Annotated[bool | None, Key("meets the load and every stated objective, each known there; null when one "
                                       "is not known (never true with an objective unknown)")]
    cost_per_hour: Annotated[float | None, money("nodes × the on-demand price")]
    # per million of the load's unit (the old key's name)
    cost_per_million_requests: Annotated[float | None, money("cost per hour / (load × 3600) × 10⁶",
                                                           also=("cost_per_million",))]
    energy_kwh_per_hour: Annotated[float | None, Key("kWh per hour of service, PUE included")]
    energy_measured: Annotated[bool, Key("from the run's measured energy")]
    co2_kg_per_hour: Annotated[float | None, Key("kg CO2e per hour")]
    ttft_p99_s: Annotated[float | None, Key("p99 time to first token there")] = None
    ttft_source: Annotated[LatencyOrigin | None, Key("how the p99 TTFT is known (null: unknown there)",
                                                     name="ttft_p99_source")] = None
    tpot_p99_s: Annotated[float | None, Key("p99 time per output token there")] = None
    tpot_source: Annotated[LatencyOrigin | None, Key("how the p99 TPOT is known (null: unknown there)",
                                                     name="tpot_p99_source")] = None
    # the stated objectives not known at this scale
    unknown: Annotated[tuple[ObjectiveName, ...], Key("the stated objectives not known at this scale: the "
                                                      "measurement that would decide it", item="an objective")] = ()
    excluded: Annotated[bool, Key("the measured throughput cannot be right (implausible-throughput): shown, and left "
                                  "out of the serving choices (whether it serves is not known)")] = False
    capacity_ci: Annotated[tuple[float | None, float | None] | None, Key(
        "records: the max load's 90 % interval (an end null where it is a bound); null otherwise",
        item="an end")] = None
    capacity_bound: Annotated[Bound | None, Key("records: above, the largest load measured still meets every "
                                                "objective (a lower bound); below, the smallest already misses")] = None
    records_unjudged: Annotated[bool, Key("load-tested with its requests kept, none of whose load points could be "
                                          "judged (each failed a check that leaves it out): its per-request "
                                          "objectives are not known here, whatever its throughput")] = False
    # filled in as results.json is written (methods.md#how-accurate-each-prediction-is)
    calibration: Annotated[Calibration | None, Key("a fitted capacity's accuracy on published curves (usl) at "
                                                   "its scale over the largest measured one (null: measured)")] = None

    @property
    def measured(self) -> bool:
        """Read from this scale's own load tests: their throughput, or their records."""
        return self.capacity_source in ("measured", "records")

    @derived(Key("the load's unit per second sustained (capacity_rps, named for any unit)"))
    def capacity_per_s(self) -> float | None:
        return self.capacity_rps

    @property
    def cost_per_million(self) -> float | None:
        return self.cost_per_million_requests


@dataclass(frozen=True)
class ServingRegime:
    """A price regime as a service sees it: spot loses the capacity of the nodes down after preemptions."""

    name: Annotated[RegimeName, Key("the regime")]
    price_per_node_hour: Annotated[float, money("the price in this regime")]
    viable: Annotated[bool, Key("whether the regime can be used")]
    reason: Annotated[str, Key("why, in words")]
    # expected share of nodes down at any moment (spot), 0 otherwise
    down_fraction: Annotated[float, Key("spot: expected share of nodes down after preemptions")]


@dataclass(frozen=True)
class ServingCheck:
    """One scale in one price regime held against the serving goal."""

    nodes: float
    regime: RegimeName | None  # None without pricing
    viable: bool
    capacity_rps: float | None  # in this regime: spot's capacity is reduced by the nodes down
    p99_s: float | None
    cost_per_hour: float | None
    meets_load: bool | None
    meets_latency: bool | None
    meets_cost: bool | None
    load_ratio: float | None  # capacity / capacity needed (≥ 1: met, by that margin)
    latency_ratio: float | None  # p99 / objective (≤ 1: met)
    cost_ratio: float | None  # cost per hour / the goal's budget per hour
    monthly_cost: float | None  # 730 hours of it
    met: bool | None  # every stated limit met in a viable regime; None when a stated limit cannot be checked
    source: Origin  # where the capacity comes from
    unknown: tuple[ObjectiveName, ...] = ()  # the stated objectives not known at this scale
    ratios: LatencyRatios | None = None  # each stated objective's value / its limit

    @property
    def serves(self) -> bool:
        """Serves for certain: capacity met and every stated objective known and met."""
        return self.viable and bool(self.meets_load) and self.meets_latency is not False and not self.unknown

    def goal_row(self) -> GoalRow:
        """The point in the goal's row shape: its hourly keys filled, the per-run ones null."""
        return GoalRow(self.nodes, self.regime, self.viable, None, None, None, None, self.meets_cost, self.met, None,
                       self.cost_ratio, self.monthly_cost, self.source, cost_per_hour=self.cost_per_hour,
                       capacity_rps=self.capacity_rps, p99_s=self.p99_s, meets_load=self.meets_load,
                       meets_latency=self.meets_latency, load_ratio=self.load_ratio, latency_ratio=self.latency_ratio,
                       latency_ratios=self.ratios)


@dataclass(frozen=True)
class ServingResult:
    goal_text: str | None
    # in the load's own unit per second (`unit` says what it counts); results.json keeps the first name it had
    peak_load: Annotated[float, Key("the peak request rate to serve", name="load_rps")]
    p99_objective_s: Annotated[float | None, Key("the p99 latency objective")]
    headroom: Annotated[float, Key("spare capacity wanted at the peak, as a fraction of the load")]
    capacity_needed_rps: Annotated[float, Key("load × (1 + headroom)")]
    cost_limit_per_hour: Annotated[float | None, money("the goal's budget per hour", name="cost_per_hour_limit")]
    # measured scales, plus the plan and the fitted scale to serve when unmeasured
    rows: Annotated[tuple[ServingRow, ...], Key("each measured scale, plus the plan and the fitted scale to serve "
                                                "when unmeasured")]
    nodes_to_serve: Annotated[float | None, Key("the smallest measured scale that serves, else the smallest the USL "
                                                "fit says does")]
    nodes_to_serve_source: Annotated[Origin | None, Key("where nodes_to_serve comes from")]
    limited_by: Annotated[LimitedBy | None, Key("what keeps every scale from serving")]
    # no fewer nodes can serve at the best capacity per node measured
    nodes_lower_bound: Annotated[int | None, Key("no fewer nodes can serve at the best capacity per node "
                                                 "measured")]
    best_per_node_rps: Annotated[float | None, Key("the best capacity per node measured, in serving.unit per "
                                                   "second")]
    best_per_node_at: Annotated[float | None, Key("the scale it was measured at")]
    plan_nodes: int | None
    plan_row: ServingRow | None
    at_plan: tuple[ServingCheck, ...]  # one per price regime the project states
    met_at_plan: bool | None
    cheapest_meeting: ServingCheck | None  # cheapest measured (scale, regime) meeting every limit
    cheapest_serving: ServingCheck | None  # cheapest measured (scale, regime) serving load and latency
    regimes: Annotated[tuple[ServingRegime, ...], Key("each price regime as a service sees it")]
    points: tuple[ServingCheck, ...]  # every measured scale in every regime (the decisions choose among them)
    # how the p99 is known: measured at each scale, or modelled
    latency_model: Annotated[str, Key("how the p99 is known: measured, interpolated, or modelled")]
    usl: USLFit | None
    runs_per_month_hours: Annotated[float, Key("the hours a month counts (730)", name="hours_per_month")]
    runs_form: str | None  # the form the runs are in (None: no runs), which the note reads
    left_out: Annotated[int, Key("the measured scales whose throughput cannot be right: left out of the fit",
                                 name="left_out_scales")]
    usable_scales: Annotated[int, Key("the measured scales whose throughput can be right: the points a USL fit may "
                                      "use (three are needed)")]
    # the unit of work the load counts: "request", "token", ...
    unit: Annotated[str, Key("the unit of work the load counts: request, token, sample, ... (every label says "
                             "it)")] = "request"
    objectives: tuple[tuple[ObjectiveName, float], ...] = ()  # every stated latency objective, in OBJECTIVES order
    # nodes_to_serve is a fitted scale whose capacity suffices while some objective is not known there
    capacity_only: Annotated[bool, Key("nodes_to_serve is a fitted scale whose capacity suffices but some objective "
                                       "is not known there (capacity only, latency unmeasured)")] = False
    replica: Annotated[Replica | None, Key("one replica's memory: weights at 2 B per parameter unless stated, "
                                           "and the KV cache")] = None
    # the load counts output tokens; this many input tokens go with each
    input_tokens_per_output: Annotated[float | None, Key("input tokens per output token, when the load counts output "
                                                         "tokens")] = None
    levers: Levers = field(default_factory=Levers)  # the goal section holds them (reportgen.analysis.verdict.levers)
    records: Annotated[RecordsResult | None, Key("every load point whose per-request records were kept, checked and "
                                                 "judged; null without records")] = None
    # every recorded point as judged (nodes, facts), and the rows whose records store is gone: the lint words them
    records_judged: tuple[tuple[float, PointFacts], ...] = ()
    records_missing: tuple[float, ...] = ()
    goodput: Annotated[GoodputResult | None, Key("the attainment target, each scale's max load under the objectives "
                                                 "from its load curve, and the verdict at the plan; null without "
                                                 "records or objectives")] = None

    @derived(Key("the peak load, in serving.unit per second (load_rps, named for any unit)"))
    def load_per_s(self) -> float:
        return self.peak_load

    @derived(Key("load × (1 + headroom), in serving.unit per second"))
    def capacity_needed_per_s(self) -> float:
        return self.capacity_needed_rps

    @derived(Key("every measured scale in every regime, against the goal (the decisions choose among those that "
                 "serve)", name="points"))
    def goal_rows(self) -> tuple[GoalRow, ...]:
        return tuple(point.goal_row() for point in self.points)

    @derived(Key("every latency objective, null when not stated", name="objectives"))
    def objective_limits(self) -> ObjectiveLimits:
        return self.limits

    @property
    def note(self) -> str:
        """What the analysis lacks, when it lacks something ("" otherwise)."""
        return _note(self)

    @functools.cached_property
    def limits(self) -> ObjectiveLimits:
        """Every latency objective, one object for the service (so a sentence quoting a limit finds its key)."""
        return ObjectiveLimits(*(self.objective(name) for name in OBJECTIVES))

    def plan_excess(self) -> float | None:
        """How far the plan is from its objectives: in its best viable regime, its largest ratio of a need to what is
        served (a p99 not known there is no p99 within its objective; methods.md#the-goals-levers)."""
        ratios = [max(1.0 / c.load_ratio if c.load_ratio else math.inf, c.latency_ratio or 0.0, c.cost_ratio or 0.0)
                  for c in self.at_plan if c.viable and (c.latency_ratio is not None or self.p99_objective_s is None)]
        return min(ratios) if ratios else None

    def goal_document(self) -> GoalDocument:
        """The goal of a serving project, in the goal section's shape (results.json `goal`)."""
        # the plan's monthly spend in its cheapest regime that meets the goal, else in the first regime stated
        meeting = [c.monthly_cost for c in self.at_plan if c.met and c.monthly_cost is not None]
        monthly = min(meeting) if meeting else (self.at_plan[0].monthly_cost if self.at_plan else None)
        cheapest = self.cheapest_meeting
        return GoalDocument(
            text=self.goal_text, time_per_run_s=None, cost_per_run=None, plan_nodes=self.plan_nodes,
            plan_measured=self.plan_measured, met_at_plan=self.met_at_plan,
            at_plan=tuple(c.goal_row() for c in self.at_plan),
            cheapest_meeting=None if cheapest is None else cheapest.goal_row().point(), fitted_meeting=None,
            none_meets=bool(self.points) and all(p.met is False for p in self.points), runs_per_month=None,
            monthly_cost=monthly, note=self.note or None, levers=self.levers.flips,
            closest_levers=self.levers.near_misses)

    def document_paths(self) -> Iterator[DocumentPath]:
        """Where results.json writes this service's checks, and as what (`goal_document`, `goal_rows`): page 1's
        figures find their source by it (docs/methods.md#every-figure-has-one-source)."""
        yield self, "goal", GoalDocument, {"goal_text": "text"}
        for index, check in enumerate(self.at_plan):
            yield check, f"goal.at_plan[{index}]", GoalRow, {"ratios": "latency_ratios"}
        yield self.cheapest_meeting, "goal.cheapest_meeting", GoalPoint, {}
        for index, point in enumerate(self.points):
            yield point, f"serving.points[{index}]", GoalRow, {"ratios": "latency_ratios"}
        yield from self.levers.document_paths()

    def objective(self, name: ObjectiveName) -> float | None:
        return dict(self.objectives).get(name)

    @property
    def objective_words(self) -> tuple[tuple[str, float], ...]:
        """Each stated objective as the report names it, with its limit in seconds."""
        return tuple((OBJECTIVE_NAMES[name], limit) for name, limit in self.objectives)

    @property
    def latency_columns(self) -> tuple[tuple[str, str, str], ...]:
        """The serving table's latency columns as (heading, row attribute, its source attribute): the end-to-end p99
        always, the time to first token and per output token when the goal states them."""
        stated = {name for name, _ in self.objectives}
        return tuple((heading, value, source) for name, (value, source, heading) in ROW_FIELDS.items()
                     if name == "p99" or name in stated)

    @property
    def within_words(self) -> str:
        """The objectives in words, " within a p99 time to first token of 1.5 s and …" ("" without one); judged from
        the requests, " with 99 % of requests within a TTFT of 250 ms, …"."""
        if self.goodput is not None and self.goodput.joint:
            thresholds = self.goodput.objectives
            limits = [f"{PER_REQUEST_NAMES[name]} of {duration(quote(thresholds, name, 's'))}"
                      for name in thresholds if thresholds[name] is not None]
            share = target_share(quote(self.goodput, "target", "fraction"))
            return f" with {share} of requests within {listed(limits)}" if limits else ""
        limits = [f"a {OBJECTIVE_NAMES[name]} of {duration(quote(self.limits, ROW_FIELDS[name][0], 's'))}"
                  for name, _ in self.objectives]
        return f" within {listed(limits)}" if limits else ""

    @property
    def need_words(self) -> str:
        """The need in words: "138,000 tokens/s within a p99 time to first token of 1.5 s and ..."."""
        return requests(quote(self, "capacity_needed_rps"), self.unit) + self.within_words

    @property
    def plan_measured(self) -> bool:
        return self.plan_row is not None and self.plan_row.measured


def analyze_serving(project: Project, scaling: ScalingResult | None, *, intensity_g_per_kwh: float | None,
                    max_nodes: int = 4096, recorded: tuple[RecordedPoint, ...] = ()) -> ServingResult | None:
    """The serving analysis of an inference project whose load is known; None otherwise."""
    if not project.serving:
        return None
    goal = project.project.goal
    serving = project.baseline.serving if project.baseline else None
    load = goal.load if goal and goal.load is not None else (serving.requests_per_second if serving else None)
    if load is None:
        return None
    objectives = _objectives(project)
    objective = dict(objectives).get("p99")
    headroom = goal.headroom if goal and goal.headroom is not None else 0.0
    need = load * (1.0 + headroom)
    cost_limit = goal.cost_per_hour * 3600.0 if goal and goal.cost_per_hour is not None else None
    measured = _measured(scaling)
    latencies = {name: _LatencyModel.of(project, measured, name) for name in OBJECTIVES}
    plan = project.design.nodes if project.design else None
    usl = scaling.usl if scaling is not None and measured else None
    money = _Money.of(project, intensity_g_per_kwh, load)

    implausible = {r.nodes for r in scaling.rows if "throughput" in r.excluded} if scaling else set()

    def row(nodes: float, capacity: float | None, source: Origin, energy_j_per_s: float | None = None) -> ServingRow:
        known = {name: latencies[name].at(nodes) for name in OBJECTIVES}
        # a throughput that cannot be right: no choice rests on it (methods.md#implausible-throughput)
        excluded = source == "measured" and nodes in implausible
        meets_load = None if capacity is None or excluded else at_least(capacity, need)
        verdicts = [value <= limit * (1 + 1e-12) for name, limit in objectives
                    if (value := known[name][0]) is not None]
        unknown = tuple(name for name, _ in objectives if known[name][0] is None)
        meets_latency = False if False in verdicts else None if unknown or not objectives else True
        serves = False if meets_load is False or meets_latency is False else \
            None if meets_load is None or unknown else True
        cost, per_million, kwh, energy_measured, co2 = money.hourly(nodes, energy_j_per_s)
        (p99, p99_source), (ttft, ttft_source), (tpot, tpot_source) = (known[name] for name in OBJECTIVES)
        return ServingRow(nodes, capacity, source, p99, p99_source, meets_load, meets_latency, serves, cost,
                          per_million, kwh, energy_measured, co2, ttft, ttft_source, tpot, tpot_source, unknown,
                          excluded)

    devices = project.hardware.devices_per_node if project.hardware and project.hardware.devices_per_node else 1
    judged = judge_records(recorded, judgement_of(goal), plan=plan, need_per_s=need, unit=project.work_unit,
                           devices_per_node=devices) if recorded else None
    within_objectives = _within_objectives(judged, project.work_unit)
    unjudged = _records_unjudged(judged, within_objectives)
    rows = {nodes: _from_records(row(nodes, within_objectives[nodes].max_load_per_s, "measured", energy),
                                 within_objectives[nodes], need) if nodes in within_objectives else
            _not_judged(row(nodes, capacity, "measured", energy)) if nodes in unjudged else
            row(nodes, capacity, "measured", energy)
            for nodes, (capacity, energy) in measured.items()}
    fitted = _fitted_to_serve(usl, need, objectives, latencies, set(rows), max_nodes)
    to_serve = next((r for r in sorted(rows.values(), key=lambda r: r.nodes) if r.serves), None)
    # Latency limits before capacity (methods.md#latency-limits-before-capacity): a measured scale with the capacity
    # that misses a latency objective says more nodes will not help; a fitted scale whose latency is not known is
    # then no scale to serve
    latency_bound = to_serve is None and any(r.meets_load and r.meets_latency is False for r in rows.values())
    if latency_bound and fitted.capacity_only:
        fitted = _Fitted(None, fitted.capacity_reached, False)
    source: Origin | None = "measured" if to_serve else ("fitted" if fitted.nodes is not None else None)
    nodes_to_serve = to_serve.nodes if to_serve else fitted.nodes
    for extra in (plan, nodes_to_serve):
        if extra is not None and extra not in rows and usl is not None:
            rows[extra] = row(extra, float(usl_capacity(np.array([float(extra)]), usl.gamma, usl.sigma, usl.kappa)[0]),
                              "fitted")
    ordered = tuple(rows[nodes] for nodes in sorted(rows))
    regimes = _regimes(project)
    priced: tuple[ServingRegime | None, ...] = regimes or (None,)  # without prices: one unpriced check per scale
    points = tuple(_check(r, regime, need, objectives, cost_limit) for r in ordered
                   if r.measured for regime in priced)
    plan_row = rows.get(plan) if plan is not None else None
    at_plan = tuple(_check(plan_row, regime, need, objectives, cost_limit) for regime in priced) if plan_row else ()
    met = plan_verdict([(check.viable, check.met) for check in at_plan])
    meeting = [p for p in points if p.met]
    serving_points = [p for p in points if p.serves]
    # the best capacity per node of the measured rows (a scale judged from its requests: its max load within them)
    best = max(((row.capacity_rps / nodes, nodes) for nodes, row in rows.items() if row.measured
                and row.capacity_rps and nodes not in implausible), default=None)
    usable = len([p for p in measured if p not in implausible])  # left out of the fit, not counted toward it
    return ServingResult(
        goal_text=goal.text if goal else None,
        peak_load=load,
        p99_objective_s=objective,
        headroom=headroom,
        capacity_needed_rps=need,
        cost_limit_per_hour=cost_limit,
        rows=ordered,
        nodes_to_serve=nodes_to_serve,
        nodes_to_serve_source=source,
        limited_by="latency" if latency_bound else None if nodes_to_serve is not None else _limit(ordered, fitted),
        nodes_lower_bound=ceil_ratio(need, best[0]) if best else None,
        best_per_node_rps=best[0] if best else None,
        best_per_node_at=best[1] if best else None,
        plan_nodes=plan,
        plan_row=plan_row,
        at_plan=at_plan,
        met_at_plan=met,
        cheapest_meeting=_cheapest(meeting),
        cheapest_serving=_cheapest(serving_points),
        regimes=regimes,
        points=points,
        latency_model=latencies["p99"].description,
        usl=usl,
        runs_per_month_hours=HOURS_PER_MONTH,
        runs_form=scaling.form if scaling is not None else None,
        left_out=len(measured) - usable,
        usable_scales=usable,
        unit=project.work_unit,
        objectives=objectives,
        capacity_only=to_serve is None and fitted.capacity_only,
        replica=replica_of(project),
        input_tokens_per_output=serving.input_tokens_per_output if serving else None,
        records=judged.records if judged else None,
        goodput=judged.goodput if judged else None,
        records_judged=judged.judged if judged else (),
        records_missing=tuple(entry.nodes for entry in recorded if entry.point is None),
    )


def _objectives(project: Project) -> tuple[tuple[ObjectiveName, float], ...]:
    """Every latency objective the project states: goal.latency's, with goal.p99_latency (else the baseline's
    latency_slo) as the end-to-end p99."""
    goal = project.project.goal
    serving = project.baseline.serving if project.baseline else None
    latency = goal.latency if goal else None
    stated: dict[ObjectiveName, float | None] = {
        "p99": goal.p99_latency if goal and goal.p99_latency is not None
        else latency.p99 if latency and latency.p99 is not None else serving.latency_slo if serving else None,
        "ttft_p99": latency.ttft_p99 if latency else None,
        "tpot_p99": latency.tpot_p99 if latency else None,
    }
    return tuple((name, value) for name, value in stated.items() if value is not None)


def _measured(scaling: ScalingResult | None) -> dict[float, tuple[float | None, float | None]]:
    """Each measured scale's capacity (work per second) and, where measured, its energy per second of service."""
    if scaling is None or scaling.form != "throughput":
        return {}
    out: dict[float, tuple[float | None, float | None]] = {}
    for r in scaling.rows:
        # A measured energy is of one run; its length is known only when the runs state their work.
        per_second = r.measured_energy_j / r.time_s if r.measured_energy_j is not None and r.time_s \
            and not scaling.per_unit_of_work else None
        out[r.nodes] = (r.run.throughput, per_second)
    return out


@dataclass(frozen=True)
class _LatencyModel:
    """The p99 at any scale: measured, interpolated between measured neighbours (never beyond them), or modelled as
    the baseline's p99 plus the interactive communication tax when no run measured one."""

    measured: dict[float, float]
    modelled_s: float | None
    description: str

    @classmethod
    def of(cls, project: Project, measured: dict[float, tuple[float | None, float | None]],
           objective: ObjectiveName = "p99") -> _LatencyModel:
        runs = {r.nodes: getattr(r, RUN_FIELDS[objective]) for r in (project.scaling.runs if project.scaling else ())}
        p99 = {nodes: value for nodes, value in sorted(runs.items()) if value is not None and nodes in measured}
        if p99:
            return cls(p99, None, "measured at each load test; interpolated between measured scales")
        if objective != "p99":  # a time to first token or per output token is known only where it was measured
            return cls({}, None, "unknown: no run measured it")
        serving = project.baseline.serving if project.baseline else None
        tax = project.checklist.tax if project.checklist else None
        if serving is None or serving.p99_latency is None:
            return cls({}, None, "unknown: no run measured a p99 and the baseline states none")
        added = tax.fanout * tax.hop_latency if tax else 0.0
        how = "the baseline's p99" + (" plus the communication tax (fan-out × hop latency)" if tax else "")
        return cls({}, serving.p99_latency + added, f"modelled: {how}, the same at every scale")

    def at(self, nodes: float) -> tuple[float | None, LatencyOrigin | None]:
        if self.modelled_s is not None:
            return self.modelled_s, "modelled"
        if nodes in self.measured:
            return self.measured[nodes], "measured"
        known = sorted(self.measured)
        if len(known) < 2 or not known[0] < nodes < known[-1]:
            return None, None
        return float(np.interp(nodes, known, [self.measured[p] for p in known])), "interpolated"

    def array(self, nodes: np.ndarray) -> np.ndarray:
        """The p99 over many scales at once; NaN where it is unknown."""
        if self.modelled_s is not None:
            return np.full(nodes.shape, self.modelled_s)
        known = sorted(self.measured)
        if len(known) < 2:  # nothing to interpolate between (a measured scale is never searched)
            return np.full(nodes.shape, np.nan)
        values = np.interp(nodes, known, [self.measured[p] for p in known])
        return np.where((nodes >= known[0]) & (nodes <= known[-1]), values, np.nan)


@dataclass(frozen=True)
class _Fitted:
    nodes: int | None  # the smallest unmeasured scale the USL fit says serves
    capacity_reached: bool  # some scale in the range reaches the capacity needed, whatever its latency
    capacity_only: bool = False  # no scale's every objective is known: `nodes` is the capacity's alone


def _fitted_to_serve(usl: USLFit | None, need: float, objectives: tuple[tuple[ObjectiveName, float], ...],
                     latencies: dict[ObjectiveName, _LatencyModel], measured: set[float], max_nodes: int) -> _Fitted:
    """The smallest unmeasured scale in 1…max_nodes the USL fit says serves: its capacity reaches the need and every
    objective is known there (measured neighbours on both sides, or the model) and met; else the smallest whose
    capacity suffices and whose known objectives are met, marked capacity-only (its latency is not measured)."""
    if usl is None:
        return _Fitted(None, False)
    nodes = np.arange(1, max_nodes + 1, dtype=float)
    enough = usl_capacity(nodes, usl.gamma, usl.sigma, usl.kappa) >= need * (1 - 1e-12)
    known = enough & ~np.isin(nodes, list(measured))
    possible = known.copy()
    for name, limit in objectives:
        values = latencies[name].array(nodes)
        within = values <= limit * (1 + 1e-12)
        known &= ~np.isnan(values) & within
        possible &= np.isnan(values) | within
    if known.any():
        return _Fitted(int(nodes[np.argmax(known)]), True)
    return _Fitted(int(nodes[np.argmax(possible)]) if possible.any() else None, bool(enough.any()),
                   capacity_only=bool(possible.any()) and bool(objectives))


def _limit(rows: tuple[ServingRow, ...], fitted: _Fitted) -> LimitedBy | None:
    """What keeps every scale from serving: capacity when none reaches the need (measured, nor fitted in the
    range), else latency."""
    if not rows:
        return None
    return "latency" if fitted.capacity_reached or any(r.meets_load for r in rows) else "capacity"


@dataclass(frozen=True)
class _Money:
    price: float | None  # on-demand per node-hour
    node_power_w: float | None
    pue: float
    intensity_g_per_kwh: float | None
    load: float

    @classmethod
    def of(cls, project: Project, intensity: float | None, load: float) -> _Money:
        pricing, energy = project.pricing, project.energy
        return cls(pricing.node_hour if pricing else None, energy.node_power if energy else None,
                   energy.pue if energy else 1.0, intensity, load)

    def hourly(self, nodes: float, measured_j_per_s: float | None) -> tuple[float | None, float | None,
                                                                        float | None, bool, float | None]:
        """Cost per hour, cost per million of the load's unit at the goal's load, energy and CO2e per hour."""
        cost = nodes * self.price if self.price is not None else None
        per_million = cost / (self.load * 3600.0) * MILLION if cost is not None else None
        if measured_j_per_s is not None:
            kwh, measured = self.pue * measured_j_per_s * 3600.0 / JOULES_PER_KWH, True
        elif self.node_power_w is not None:
            kwh, measured = self.pue * nodes * self.node_power_w * 3600.0 / JOULES_PER_KWH, False
        else:
            kwh, measured = None, False
        co2 = kwh * self.intensity_g_per_kwh / 1000.0 if kwh is not None and self.intensity_g_per_kwh is not None \
            else None
        return cost, per_million, kwh, measured, co2


def _regimes(project: Project) -> tuple[ServingRegime, ...]:
    """On-demand and every regime the project states; none without prices."""
    pricing = project.pricing
    if pricing is None or pricing.node_hour is None:
        return ()
    price = pricing.node_hour
    out: list[ServingRegime] = [ServingRegime("on_demand", price, True, "list price", 0.0)]
    spec = pricing.regimes
    if spec and spec.spot:
        spot = spec.spot
        down = spot.preemptions_per_node_hour * spot.restart_overhead / 3600.0  # λ × restart (h), per node
        out.append(ServingRegime("spot", price * spot.price_fraction, True,
                                 f"{spot.price_fraction:.0%} of on-demand; preemptions keep {down:.2%} of the nodes "
                                 "down at any moment", min(down, 1.0)))
    if spec and spec.local:
        viable, reason = local_viability(spec.local.utilization, spec.local.min_utilization)
        out.append(ServingRegime("local", price * spec.local.price_fraction, viable, reason, 0.0))
    return tuple(out)


def _from_records(row: ServingRow, curve: ScaleCurve, need: float) -> ServingRow:
    """A measured scale whose capacity is its max load within every objective, from its load tests' requests: it
    serves as that load's interval decides (the objectives are inside it)."""
    met = meets_need(need, curve.max_load_per_s, curve.max_load_ci, curve.bound)
    return replace(row, capacity_source="records", capacity_ci=curve.max_load_ci, capacity_bound=curve.bound,
                   meets_load=met, serves=met, excluded=False)


def _records_unjudged(judged: Goodput | None, curves: dict[float, ScaleCurve]) -> set[float]:
    """The scales whose requests were kept and judged against per-request objectives, yet have no curve: every load
    point there failed a check that leaves it out (over-saturated, the rate not reached, ...). Their throughput says
    nothing of the objectives."""
    if judged is None or judged.goodput is None or not judged.goodput.joint:
        return set()
    return {nodes for nodes, _ in judged.judged} - set(curves)


def _not_judged(row: ServingRow) -> ServingRow:
    """A scale whose per-request objectives are not known: it serves only as far as its throughput misses."""
    return replace(row, records_unjudged=True, meets_latency=None, serves=False if row.serves is False else None)


def _within_objectives(judged: Goodput | None, unit: str) -> dict[float, ScaleCurve]:
    """Each scale's open-load curve of max load within the objectives, where the load counts requests (a curve's
    axis): those scales' capacity is read from their requests (methods.md#a-service-judged-from-its-requests)."""
    if judged is None or judged.goodput is None or unit != "request":
        return {}
    return {curve.nodes: curve for curve in judged.goodput.by_scale if curve.mode == "open"}


def _check(row: ServingRow, regime: ServingRegime | None, need: float,
           objectives: tuple[tuple[ObjectiveName, float], ...], cost_limit: float | None) -> ServingCheck:
    capacity = None if row.excluded else row.capacity_rps * (1.0 - regime.down_fraction) \
        if row.capacity_rps is not None and regime else row.capacity_rps
    cost = row.nodes * regime.price_per_node_hour if regime else None
    viable = regime.viable if regime else True
    load_ratio = capacity / need if capacity is not None else None
    # the objective nearest its limit speaks for them all: the largest value / objective of those known
    each = {name: value / limit for name, limit in objectives if (value := latency_of(row, name)) is not None
            and limit}
    ratios = list(each.values())
    latency_ratio = max(ratios) if ratios else None
    cost_ratio = cost / cost_limit if cost is not None and cost_limit else None
    meets_load = None if capacity is None else at_least(capacity, need)
    if row.capacity_source == "records" and capacity is not None and row.capacity_rps:
        share = capacity / row.capacity_rps  # spot's nodes down take their share of the interval too
        low, high = row.capacity_ci or (None, None)
        meets_load = meets_need(need, capacity, (low * share if low is not None else None,
                                                 high * share if high is not None else None), row.capacity_bound)
    meets_latency = row.meets_latency
    meets_cost = None if cost_ratio is None else cost_ratio <= 1 + 1e-12
    met: bool | None = True
    if not viable or meets_load is False or meets_latency is False or meets_cost is False:
        met = False
    elif meets_load is None or row.unknown or row.records_unjudged or (cost_limit is not None and meets_cost is None):
        met = None
    return ServingCheck(row.nodes, regime.name if regime else None, viable, capacity, row.p99_s, cost, meets_load,
                        meets_latency, meets_cost, load_ratio, latency_ratio, cost_ratio,
                        cost * HOURS_PER_MONTH if cost is not None else None, met,
                        "measured" if row.measured else "fitted", row.unknown,
                        LatencyRatios(**each) if each else None)


def _cheapest(points: list[ServingCheck]) -> ServingCheck | None:
    """The cheapest point (ties: the smaller scale, points come by scale); by scale alone without prices."""
    if not points:
        return None
    return first_min(points, key=lambda p: p.cost_per_hour if p.cost_per_hour is not None else float(p.nodes))


def _note(serving: ServingResult) -> str:
    """What the analysis lacks, in words (its figures quoted from the result, so that page 1 can name their
    source)."""
    unit = serving.unit
    if serving.runs_form is None:
        return f"no load test is measured: add scaling.runs in throughput form ({unit}s/s at each node count)"
    if serving.runs_form != "throughput":
        return (f"the runs are in {serving.runs_form} form: a service's capacity is measured as throughput "
                f"({unit}s/s at each node count, with its p99_latency)")
    if serving.plan_nodes is not None and serving.plan_row is None:
        usable = quote(serving, "usable_scales")
        but = f" ({quote(serving, 'left_out')} more cannot be right)" if serving.left_out else ""
        return (f"the planned {quote(serving, 'plan_nodes')} nodes were not measured and "
                f"{counted(usable, 'measured scale')}{but} {'does' if usable == 1 else 'do'} not support a fit "
                "(three are needed)")
    return ""

