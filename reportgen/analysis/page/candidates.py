"""Every way considered to change page 1's verdict, each with its effect and its cost
(docs/methods.md#ways-considered): fix the design, fix a measurement the verdict rests on, plan a measured scale, a
layout or a fitted scale that meets the goal, measure what decides the verdict, move a lever, or say the goal is out
of reach; the rest is advice. Each is held to the constraints once, here (docs/methods.md#constraints-applied-once),
and ordered by reportgen.analysis.page.candidate_order. The texts are written from each candidate's facts by
reportgen.analysis.page.prose.actions; nothing here decides by a sentence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypedDict, Unpack

from reportgen.analysis.common import beyond_noise, first_min, node_hours
from reportgen.analysis.findings import Finding
from reportgen.analysis.measured.confidence import NextRun, PlanEstimate, planner_runs
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.analysis.money.cost import CostResult
from reportgen.analysis.page.page_one_facts import Candidate, CanStart, Constraints, Effect, ExcludedBy, Kind, Rank
from reportgen.analysis.page.prose import actions as words
from reportgen.analysis.plan.plan_search import PlanSearchResult, RankedLayout
from reportgen.analysis.quotes import figures_of
from reportgen.analysis.verdict.goal import GoalCheck, GoalResult
from reportgen.analysis.verdict.lever_records import Lever, Levers
from reportgen.analysis.verdict.peak import FASTER_WITHOUT_REPEATS
from reportgen.analysis.verdict.serving import ServingCheck, ServingResult
from reportgen.analysis.verdict.verdict_state import P_MISS_KEEP, PageState, RegimeState
from reportgen.project.model import Project, RegimeName

# A planner run is proposed on a page judged from an estimate only when the verdict is this likely wrong, and only
# when it at least halves that chance (docs/methods.md#the-order)
P_WRONG_MIN = 0.10
MATERIAL = 0.5
# The codes of errors that stop the design, in the order a tie among them is broken
CANNOT_START = ("wrong-axis", "replica-cannot-fit", "layout-size", "layout-expert", "layout-does-not-fit",
                "replica-exceeds-node", "too-few-nodes", "no-layout-fits", "checkpoint-storm")
# Measurements that cannot be right: a candidate when the verdict, can_start or a rank-3 candidate rests on them
FIX_EVIDENCE = ("implausible-speedup", "implausible-energy", "implausible-collective", "implausible-throughput",
                "outlier", "outlier-repeat", "slower-than-serial", "oversubscribed", "memory-model-refuted",
                "efficiency-above-peak", "mfu-above-one", "above-roof", "failed-requests", "rate-not-reached")
# Codes answered by a kind of their own, never advice
NOT_ADVICE = ("plan-not-measured", "work-per-run-missing", "plan-past-peak", "plan-misses-goal", "goal-unmet",
              "single-scale", "budget-not-judged", "no-goal", "no-plan", "objective-unknown", "plan-straddles",
              "better-layout")
# The α–β model's bounds on the node count, and the findings that say the model does not describe the system
MODEL_BOUNDS = ("past-optimum", "tax-binds", "comm-dominated")
MODEL_REFUTED = ("fit-disagrees", "comm-share-departs", "below-prediction", "bad-fit")
SCALE_LEVERS = ("nodes", "replicas")  # a scale is a candidate of rank 3, not a lever


@dataclass(frozen=True)
class Ground:
    """What the candidates are found in: typed results only, and the findings' codes, severities and paths."""

    project: Project
    plan: int | None
    state: PageState
    can_start: CanStart
    constraints: Constraints
    findings: tuple[Finding, ...]
    evidence: words.Evidence
    cost: CostResult | None = None
    next_runs: tuple[NextRun, ...] = ()
    levers: Levers = field(default_factory=Levers)
    estimate_at: Callable[[int], PlanEstimate | None] | None = None

    @property
    def goal(self) -> GoalResult | None:
        return self.evidence.goal

    @property
    def serving(self) -> ServingResult | None:
        return self.evidence.serving

    @property
    def scaling(self) -> ScalingResult | None:
        return self.evidence.scaling

    @property
    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def headline(self) -> RegimeState | None:
        return next((r for r in self.state.regimes if r.regime == self.state.headline_regime), None)

    def available(self, nodes: float | None) -> bool:
        limit = self.constraints.nodes_available
        return nodes is None or limit is None or nodes <= limit


def find_candidates(ground: Ground) -> list[Candidate]:
    """Every candidate of every kind, unordered."""
    rank_three = _rank_three(ground)  # what a flagged run may rest under, and the ways themselves
    found = [*_fix_design(ground), *_fix_evidence(ground, rank_three), *rank_three]
    found += [*_measure(ground), *_lever_candidates(ground)]
    found += _out_of_reach(ground, found)
    found += _advice(ground, found)
    return found


class Facts(TypedDict, total=False):
    """A candidate's facts beyond its kind, code, effect and text (each defaults to null, feasible to true)."""

    rank: Rank | None
    nodes: float | None
    regime: RegimeName | None
    layout: str | None
    lever: str | None
    p_wrong_before: float | None
    p_wrong_after: float | None
    money: float | None
    node_hours: float | None
    change: float | None
    feasible: bool
    excluded_by: ExcludedBy | None
    time_s: float | None
    cost: float | None
    source: str | None
    taken: Lever | None


def _candidate(kind: Kind, code: str, effect: Effect, text: str, *, finding: Finding | None = None,
               **facts: Unpack[Facts]) -> Candidate:
    return Candidate(kind, code, facts.get("rank"), facts.get("nodes"), facts.get("regime"), facts.get("layout"),
                     facts.get("lever"), effect, "met" if effect in ("meets", "meets-modelled") else None,
                     facts.get("p_wrong_before"), facts.get("p_wrong_after"), facts.get("money"),
                     facts.get("node_hours"), facts.get("change"), facts.get("feasible", True),
                     facts.get("excluded_by"), text, facts.get("time_s"), facts.get("cost"),
                     finding.severity if finding else None, words.table_index(code), facts.get("source"),
                     facts.get("taken"), figures_of(text))


def _finding(ground: Ground, code: str) -> Finding | None:
    return next((f for f in ground.findings if f.code == code), None)


# --------------------------------------------------------------------------------------------------- rank 1 and 2
def _fix_design(ground: Ground) -> list[Candidate]:
    if ground.can_start.value:
        return []
    blocking = [f for f in ground.findings if f.code == ground.can_start.code]
    stage = next((lever for lever in ground.levers.flips if lever.lever == "ZeRO stage" and lever.meets), None) \
        if ground.can_start.code == "layout-does-not-fit" else None
    return [_candidate("fix-design", f.code, "starts", ground.can_start.fix or "", finding=f, rank=1, taken=stage,
                       lever=stage.lever if stage else None) for f in blocking[:1]]


def _fix_evidence(ground: Ground, rank_three: list[Candidate]) -> list[Candidate]:
    out: list[Candidate] = []
    for finding in ground.findings:
        if finding.code not in FIX_EVIDENCE or words.explained(finding.code, ground.evidence) \
                or any(c.code == finding.code for c in out):  # one way per code: its text names every scale
            continue
        if _rests_on(ground, finding.code, rank_three):
            out.append(_candidate("fix-evidence", finding.code, "rests-on", words.finding_text(finding.code,
                                                                                               ground.evidence),
                                  finding=finding, rank=2))
    return out


def _rests_on(ground: Ground, code: str, rank_three: list[Candidate]) -> bool:
    """Whether the verdict, can_start or a rank-3 candidate reads the quantity the finding says cannot be right."""
    if code == "above-roof":  # π, β or the profile is wrong: the ridge, the ceiling and can_start read them
        return True
    if code == "implausible-energy":
        return _energy_read(ground.project)
    if code == "memory-model-refuted":
        return any(c.kind == "layout" for c in rank_three) or \
            any(lever.lever == "ZeRO stage" for lever in ground.levers.flips)
    if code in ("efficiency-above-peak", "mfu-above-one"):
        return any(c.kind == "layout" for c in rank_three)
    if code == "implausible-collective":  # the α–β fit judges an estimate that straddles
        return any(r.source != "measured" for r in ground.state.regimes)
    scales = _flagged_scales(ground, code)
    return bool(scales & _read_scales(ground, rank_three))


def _energy_read(project: Project) -> bool:
    """A run's energy is read by a carbon decision or a CO2 limit only: a time or cost goal never reads it."""
    return any(d.optimize == "carbon" or d.max_co2 is not None for d in project.decisions or ())


def _flagged_scales(ground: Ground, code: str) -> set[float]:
    scaling, reconciliation = ground.scaling, ground.evidence
    if scaling is None:
        return set()
    by_code: dict[str, Iterable[float]] = {
        "implausible-speedup": (r.nodes for r in scaling.implausible),
        "outlier": (o.nodes for o in scaling.outliers),
        "outlier-repeat": (r.nodes for r in scaling.outlier_repeats),
        "slower-than-serial": scaling.slower_than_serial,
        "oversubscribed": reconciliation.crowded,
        "implausible-throughput": (r.nodes for r in scaling.rows if "throughput" in r.excluded),
    }
    if code in ("failed-requests", "rate-not-reached"):
        return set(words.load_test_scales(ground.evidence, code))
    return set(by_code.get(code, ()))


def _read_scales(ground: Ground, rank_three: list[Candidate]) -> set[float]:
    """The scales the verdict reads: the plan, the scales an unmeasured plan's estimate is fitted from, the
    reference, and every rank-3 candidate's scale."""
    scaling = ground.scaling
    read: set[float] = {float(ground.plan)} if ground.plan is not None else set()
    if scaling is not None and scaling.rows:
        read.add(scaling.reference_nodes)
        if any(r.source != "measured" for r in ground.state.regimes) or not ground.state.regimes:
            read |= {row.nodes for row in scaling.rows}
    read |= {c.nodes for c in rank_three if c.nodes is not None and c.feasible}
    return read


# ---------------------------------------------------------------------------------------------------------- rank 3
def _rank_three(ground: Ground) -> list[Candidate]:
    """A way that meets the goal without changing the world: a measured scale, a layout, a fitted scale."""
    state = ground.state.state
    if state not in ("missed", "unjudged", "met") or not ground.can_start.value:
        return []
    return [*_measured_scales(ground), *_layouts(ground), *_fitted_scales(ground)]


def _straddles(ground: Ground) -> bool:
    return any(r.viable and r.straddles for r in ground.state.regimes)


def _scale_code(ground: Ground) -> str:
    return {"missed": "plan-misses-goal", "unjudged": "plan-not-measured"}.get(ground.state.state, "plan-past-peak")


def _plan_money(ground: Ground) -> float | None:
    lead = ground.headline()
    return lead.cost if lead is not None else None


def _money(ground: Ground, cost: float | None) -> float | None:
    plan = _plan_money(ground)
    return None if cost is None or plan is None else cost - plan


def _change(ground: Ground, nodes: float) -> float | None:
    return abs(math.log(nodes / ground.plan)) if ground.plan and nodes > 0 else None


def _scale_facts(ground: Ground, nodes: float, regime: RegimeName | None, time_s: float | None,
                 cost: float | None) -> Facts:
    feasible = ground.available(nodes)
    return Facts(rank=3, nodes=nodes, regime=regime, time_s=time_s, cost=cost, money=_money(ground, cost),
                 node_hours=node_hours(nodes, time_s) if time_s is not None else None, change=_change(ground, nodes),
                 feasible=feasible, excluded_by=None if feasible else "nodes_available")


def _measured_scales(ground: Ground) -> list[Candidate]:
    if ground.serving is not None:
        return _measured_services(ground)
    goal = ground.goal
    if goal is None:
        return []
    plan_row = _plan_check(goal, ground)
    out = []
    by_scale: dict[float, list[GoalCheck]] = {}
    for check in goal.checks:
        if check.nodes != ground.plan and check.viable and check.met:
            by_scale.setdefault(check.nodes, []).append(check)
    for nodes, checks in sorted(by_scale.items()):
        best = first_min(checks, key=lambda c: c.cost if c.cost is not None else c.time_s)
        if not _meets_on_this_page(ground, best, plan_row):
            continue
        facts = _scale_facts(ground, nodes, best.regime, best.time_s, best.cost)
        facts["taken"] = _nodes_lever(ground, nodes)
        out.append(_candidate("measured-scale", _scale_code(ground), "meets", words.measured_scale_text(
            best, ground.plan, ground.evidence), **facts))
    return out


def _nodes_lever(ground: Ground, nodes: float) -> Lever | None:
    """The node-count lever when it names this scale (goal.levers holds it: page 1's action then quotes it)."""
    return next((lever for lever in ground.levers.flips if lever.lever in SCALE_LEVERS and lever.meets
                 and lever.flips_at == nodes), None)


def _plan_check(goal: GoalResult, ground: Ground) -> GoalCheck | None:
    rows = goal.at_plan or goal.fitted_at_plan
    return next((c for c in rows if c.regime == ground.state.headline_regime), rows[0] if rows else None)


def _meets_on_this_page(ground: Ground, check: GoalCheck, plan: GoalCheck | None) -> bool:
    """A missed or unjudged page takes every scale that meets; a met page whose plan straddles, those whose
    interval's high end meets; any other met page, a scale that meets for less money and faster beyond noise."""
    state = ground.state.state
    if state in ("missed", "unjudged"):
        return True
    if _straddles(ground):
        return _high_end_meets(ground.goal, check)
    if plan is None or check.time_s >= plan.time_s:
        return False
    cheaper = (check.cost is not None and plan.cost is not None and check.cost < plan.cost) or \
        (check.cost is None and check.nodes * check.time_s < plan.nodes * plan.time_s)
    return cheaper and beyond_noise(check.time_s, plan.time_s, check.time_ci, plan.time_ci, FASTER_WITHOUT_REPEATS)


def _high_end_meets(goal: GoalResult | None, check: GoalCheck) -> bool:
    if goal is None:
        return False
    time_high = check.time_ci[1] if check.time_ci else check.time_s
    cost_high = check.cost_ci[1] if check.cost_ci else check.cost
    time_ok = goal.time_limit_s is None or time_high <= goal.time_limit_s
    cost_ok = goal.cost_limit is None or (cost_high is not None and cost_high <= goal.cost_limit)
    return time_ok and cost_ok


def _measured_services(ground: Ground) -> list[Candidate]:
    serving = ground.serving
    assert serving is not None
    if ground.state.state not in ("missed", "unjudged"):
        return []
    by_scale: dict[float, list[ServingCheck]] = {}
    for point in serving.points:
        if point.nodes != ground.plan and point.viable and point.met and point.source == "measured":
            by_scale.setdefault(point.nodes, []).append(point)
    out = []
    for nodes, points in sorted(by_scale.items()):
        best = first_min(points, key=lambda c: c.cost_per_hour or 0.0)
        facts = _scale_facts(ground, nodes, best.regime, None, best.cost_per_hour)
        facts["node_hours"] = nodes  # a service: node-hours per hour of service
        out.append(_candidate("measured-scale", _scale_code(ground), "meets",
                              words.measured_service_text(best, ground.plan, ground.evidence), **facts))
    return out


def _layouts(ground: Ground) -> list[Candidate]:
    """The search's best layout at the plan's scale and its cheapest on demand, each in every regime the goal holds
    a scale in; a layout that meets no limit set is advice (better-layout)."""
    search, goal = ground.evidence.plan_search, ground.goal
    if search is None or not search.best or goal is None or goal.hold is None or "search-uncalibrated" in ground.codes:
        return []
    if ground.state.state == "met" and not _straddles(ground):
        return []
    out = []
    seen: set[tuple[float, str]] = set()
    for layout, time_s in _layout_times(ground, search):
        key = (layout.nodes, _shape(layout))
        if time_s is None or key in seen or not float(layout.nodes).is_integer():
            continue
        seen.add(key)
        meeting = [c for c in goal.hold(int(layout.nodes), time_s) if c.viable and c.met]
        if not meeting:
            continue
        best = first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s)
        facts = _scale_facts(ground, layout.nodes, best.regime, best.time_s, best.cost)
        facts["layout"] = _shape(layout)
        out.append(_candidate("layout", "better-layout", "meets-modelled",
                              words.layout_text(layout, best, ground.evidence), **facts))
    return out


def _shape(layout: RankedLayout) -> str:
    return f"{layout.tensor} × {layout.pipeline} × {layout.data}"


def _layout_times(ground: Ground, search: PlanSearchResult) -> list[tuple[RankedLayout, float | None]]:
    """Each layout's undisturbed time per run: the plan's measured time × the model's ratio of its step to the
    declared one, when the plan is measured at the declared layout; else the calibrated search's."""
    best = search.best[0]
    declared = search.declared
    measured = _measured_plan_time(ground)
    times: list[tuple[RankedLayout, float | None]]
    if measured is not None and declared is not None and declared.gap is not None and best.nodes == ground.plan:
        times = [(best, measured / (1.0 + declared.gap))]
    else:
        times = [(best, best.time_per_run_s)]
    cheapest = search.cheapest.on_demand if search.cheapest is not None else None
    if cheapest is not None:
        times.append((cheapest, cheapest.time_per_run_s))
    return times


def _measured_plan_time(ground: Ground) -> float | None:
    scaling = ground.scaling
    if scaling is None or ground.plan is None:
        return None
    return next((row.time_s for row in scaling.rows if row.nodes == ground.plan), None)


def _fitted_scales(ground: Ground) -> list[Candidate]:
    """The scale the fit says meets the goal: the node-count lever's fitted flip (the report's judge holds it met,
    its estimate's interval clear of every limit), else the USL fit's smallest meeting scale. None when the fit
    already says the plan itself meets: another fitted scale would settle nothing a measurement of the plan does
    not."""
    if ground.state.state not in ("missed", "unjudged") or ground.state.why == "model-demoted":
        return []  # a fit no guide at the plan's extrapolation proposes no scale of its own
    if any(r.viable and r.source != "measured" and r.met for r in ground.state.regimes):
        return []
    goal, serving = ground.goal, ground.serving
    judged = next((lever for lever in ground.levers.flips if lever.lever in SCALE_LEVERS and lever.meets
                   and lever.source == "fitted"), None)
    if judged is not None:
        check = _fitted_check(ground, judged.flips_at)
        facts = _scale_facts(ground, judged.flips_at, check.regime if check else None,
                             check.time_s if check else None, check.cost if check else None) \
            if serving is None else _service_facts(ground, serving, judged.flips_at)
        facts["taken"], facts["lever"] = judged, judged.lever
        return [_candidate("fitted-scale", _missed_code(ground), "meets-modelled", words.lever_text(
            judged, ground.evidence), **facts)]
    # the point fit's smallest meeting scale, where no estimate with an interval judges scales: with one, the
    # node-count lever above has already looked for a scale its interval clears, and found none
    if goal is not None and goal.fitted_meeting is not None and goal.plan_estimate is None:
        fit = goal.fitted_meeting
        return [_candidate(
            "fitted-scale", _missed_code(ground), "meets-modelled", words.fitted_scale_text(fit, ground.evidence),
            **_scale_facts(ground, fit.nodes, fit.regime, fit.time_s, fit.cost))]
    if serving is not None and serving.nodes_to_serve is not None and serving.nodes_to_serve_source == "fitted" \
            and not serving.capacity_only:
        nodes = serving.nodes_to_serve
        return [_candidate("fitted-scale", _missed_code(ground), "meets-modelled",
                           words.fitted_service_text(nodes, ground.evidence), **_service_facts(ground, serving, nodes))]
    return []


def _service_facts(ground: Ground, serving: ServingResult, nodes: float) -> Facts:
    """A fitted scale of a service: an hour of it at on-demand prices, from its row of the serving analysis (which
    holds the fitted scale to serve), and its node-hours per hour."""
    row = next((r for r in serving.rows if r.nodes == nodes), None)
    cost = row.cost_per_hour if row is not None else None
    facts = _scale_facts(ground, nodes, "on_demand" if cost is not None else None, None, cost)
    facts["node_hours"] = nodes
    return facts


def _fitted_check(ground: Ground, nodes: float) -> GoalCheck | None:
    """A fitted scale in its cheapest regime that meets, from the estimate the plan would have there, held as the
    plan's row would be (failure tax and the goal's work folded in)."""
    goal = ground.goal
    if goal is None or goal.hold is None or ground.estimate_at is None or not float(nodes).is_integer():
        return None
    estimate = ground.estimate_at(int(nodes))
    if estimate is None:
        return None
    meeting = [c for c in goal.hold(int(nodes), estimate.time_s) if c.viable and c.met]
    return first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s) if meeting else None


def _missed_code(ground: Ground) -> str:
    codes = ground.codes
    return next((code for code in ("goal-unmet", "plan-misses-goal", "plan-not-measured") if code in codes),
                "goal-unmet")


# ---------------------------------------------------------------------------------------------------------- rank 4
def _measure(ground: Ground) -> list[Candidate]:
    """The inputs and runs that decide the verdict."""
    state = ground.state
    demoted = state.why == "model-demoted"  # the planner's chances are the demoted fit's: not quoted
    out = [*_inputs(ground), *([] if demoted else _planner_runs(ground)), *_requests(ground), *_repeats(ground),
           *_another_scale(ground), *_contention(ground), *_unjudged_scales(ground)]
    if demoted and ground.plan is not None:  # only a measurement of the plan judges it now
        return [*out, _candidate("measure", "model-demoted", "decides", words.finding_text("model-demoted",
                                                                                           ground.evidence),
                                 rank=4, nodes=float(ground.plan), finding=_finding(ground, "model-demoted"),
                                 feasible=ground.available(ground.plan),
                                 excluded_by=None if ground.available(ground.plan) else "nodes_available")]
    plan_unmeasured = ground.plan is not None and state.state == "unjudged" and \
        all(r.source != "measured" for r in state.regimes) and state.why not in ("cannot-start", "per-unit-of-work",
                                                                                 "flagged-run")
    if (plan_unmeasured and not planner_runs(ground.next_runs) and ground.serving is None) or \
            (ground.serving is not None and plan_unmeasured and state.why == "not-measured"):
        scaling = ground.scaling
        single = scaling is not None and scaling.single_scale
        code = "single-scale" if single and "single-scale" in ground.codes else "plan-not-measured"
        if code == "single-scale" and any(c.code == code for c in out):
            return out
        out.append(_candidate("measure", code, "decides", words.finding_text(code, ground.evidence), rank=4,
                              nodes=None if single else float(ground.plan or 0), feasible=ground.available(ground.plan),
                              excluded_by=None if ground.available(ground.plan) else "nodes_available"))
    return out


def _inputs(ground: Ground) -> list[Candidate]:
    """An input whose absence leaves the verdict unjudged (it costs nothing: before any run)."""
    state = ground.state
    wanted: list[str] = []
    if state.state == "no-goal":
        wanted.append("no-goal")
    if state.why == "per-unit-of-work":
        wanted.append("work-per-run-missing")
    if state.state == "partly" or state.why == "unpriced":
        wanted.append("budget-not-judged")
    if state.why == "no-plan":
        wanted.append("no-plan")
    if state.why == "objective-unknown" or any(r.why == "objective-unknown" for r in state.regimes):
        wanted.append("objective-unknown")
    return [_candidate("measure", code, "decides", words.finding_text(code, ground.evidence), rank=4,
                       finding=_finding(ground, code), money=0.0, node_hours=0.0) for code in wanted]


def _unjudged_scales(ground: Ground) -> list[Candidate]:
    """A scale the fit puts within every limit but does not judge met (its interval straddles a limit): measuring it
    decides whether a missed goal is out of reach (docs/methods.md#ways-considered)."""
    if ground.state.state != "missed":
        return []
    out = []
    for miss in ground.levers.near_misses:
        if miss.lever in SCALE_LEVERS and miss.excess <= 1.0:
            out.append(_candidate("measure", _missed_code(ground), "decides", words.unjudged_scale_text(
                miss.best, ground.evidence), rank=4, nodes=miss.best, change=_change(ground, miss.best),
                feasible=ground.available(miss.best),
                excluded_by=None if ground.available(miss.best) else "nodes_available"))
    return out


def _another_scale(ground: Ground) -> list[Candidate]:
    """One measured scale cannot tell which scale would meet a missed goal: another scale decides it (no lever of
    the node count, and no "out of reach", rests on one point)."""
    scaling = ground.scaling
    if ground.state.state != "missed" or scaling is None or not scaling.single_scale \
            or "single-scale" not in ground.codes:
        return []
    return [_candidate("measure", "single-scale", "decides", words.finding_text("single-scale", ground.evidence),
                       finding=_finding(ground, "single-scale"), rank=4, nodes=None)]


def _contention(ground: Ground) -> list[Candidate]:
    """Runs with more ranks per machine than cores measure contention, not the design: on a missed page whose
    verdict reads them, measuring them again with a core per rank decides it."""
    contended = [p for p in ground.evidence.contended if p in _read_scales(ground, [])]
    if ground.state.state != "missed" or not contended:
        return []
    return [_candidate("measure", _missed_code(ground), "decides", words.contention_text(contended, ground.evidence),
                       finding=_finding(ground, "oversubscribed"), rank=4, nodes=max(contended))]


def planner_exclusion(run: NextRun, *, decides: bool) -> ExcludedBy | None:
    """A planner's run is proposed when it decides an unjudged page, or the verdict is at least P_WRONG_MIN likely
    wrong, and only when material: it at least halves the chance that the verdict is wrong."""
    wanted = decides or run.p_wrong_before >= P_WRONG_MIN
    material = run.p_wrong_after <= run.p_wrong_before * MATERIAL
    return None if wanted and material else "immaterial"


def _planner_runs(ground: Ground) -> list[Candidate]:
    state = ground.state.state
    decides = state in ("unjudged", "partly", "no-goal")
    out = []
    for run in planner_runs(ground.next_runs):
        excluded = "nodes_available" if not ground.available(run.nodes) else planner_exclusion(run, decides=decides)
        feasible = excluded is None
        out.append(_candidate("measure", "plan-not-measured", "decides", words.planner_words(
            run, ground.project.currency), rank=4, nodes=float(run.nodes), p_wrong_before=run.p_wrong_before,
            p_wrong_after=run.p_wrong_after, money=run.cost, node_hours=run.node_hours, feasible=feasible,
            excluded_by=excluded))
    return out


def _requests(ground: Ground) -> list[Candidate]:
    """More requests of a load point at the plan whose share straddles the target: they decide the verdict, at the
    cost of a load test's minutes (methods.md#a-service-judged-from-its-requests)."""
    if ground.state.why != "requests-straddle":
        return []
    return [_candidate("measure", "requests-straddle", "decides", words.requests_words(run, ground.project.currency),
                       rank=4, nodes=float(run.nodes), p_wrong_before=run.p_wrong_before,
                       p_wrong_after=run.p_wrong_after, money=run.cost, node_hours=run.node_hours,
                       feasible=ground.available(run.nodes))
            for run in ground.next_runs if run.kind == "requests" and run.nodes == ground.plan]


def _repeats(ground: Ground) -> list[Candidate]:
    """A measured plan whose repeats straddle a limit, or whose met verdict misses in at least 10 % of the resamples:
    the plan's scale measured again, as often as it was (at least twice)."""
    if ground.plan is None or ground.state.state not in ("met", "missed"):
        return []
    met = ground.state.state == "met"
    straddling = [r for r in ground.state.regimes if r.viable and r.source == "measured" and
                  (r.straddles or (met and r.state == "met" and (r.p_miss or 0.0) >= P_MISS_KEEP))]
    if not straddling:
        return []
    row = straddling[0]
    runs = row.runs or 1
    more = max(runs, 2)
    time_s = _measured_plan_time(ground)
    check = next((c for c in ground.goal.at_plan if c.regime == row.regime), None) if ground.goal else None
    text = words.repeat_text(ground.plan, more, row.runs, row.runs_over, ground.evidence, check)
    hours = ground.plan * more * time_s / 3600.0 if time_s else None
    return [_candidate("measure", "plan-straddles", "decides", text, rank=4, nodes=float(ground.plan),
                       regime=row.regime, p_wrong_before=row.p_miss, node_hours=hours,
                       feasible=ground.available(ground.plan))]


# ---------------------------------------------------------------------------------------------------------- rank 5
def _lever_candidates(ground: Ground) -> list[Candidate]:
    if ground.state.state not in ("missed", "unjudged") or not ground.can_start.value:
        return []
    out = []
    # a promise (an objective, the share of requests) is the next action only when no engineering lever flips it
    engineering = any(lever.meets and lever.feasible and lever.kind == "engineering" for lever in ground.levers.flips)
    for lever in ground.levers.flips:
        if not lever.meets or lever.lever in SCALE_LEVERS or lever.lever == "ZeRO stage" or \
                (lever.kind == "objective" and engineering):
            continue
        out.append(_candidate(
            "lever", _missed_code(ground), "meets" if lever.source == "measured" else "meets-modelled",
            words.lever_text(lever, ground.evidence), rank=5, lever=lever.lever, change=lever.distance,
            feasible=lever.feasible, excluded_by=None if lever.feasible else "beyond-reach", source=lever.source,
            taken=lever))
    return out


# ---------------------------------------------------------------------------------------------------------- rank 6
def _out_of_reach(ground: Ground, found: list[Candidate]) -> list[Candidate]:
    if ground.state.state != "missed":
        return []
    meets = [c for c in found if c.feasible and c.rank in (3, 5)]
    if meets:
        return []
    unreached = [o.name for o in ground.constraints.objectives if o.lever is None]
    return [_candidate("out-of-reach", _missed_code(ground), "none",
                       words.out_of_reach_text(ground.evidence, unreached, _beyond(ground, found)), rank=6)]


def _beyond(ground: Ground, found: list[Candidate]) -> tuple[float, str] | None:
    """The scale that would meet the goal but lies above the nodes available: the out-of-reach sentence names it."""
    above = next((c for c in found if c.rank == 3 and c.excluded_by == "nodes_available" and c.nodes is not None),
                 None)
    if above is None or above.nodes is None:
        return None
    return above.nodes, {"measured-scale": "measured,", "layout": "by the model, a layout of",
                         "fitted-scale": "by the USL fit,"}[above.kind]


# ---------------------------------------------------------------------------------------------------------- rank 7
def _advice(ground: Ground, found: list[Candidate]) -> list[Candidate]:
    taken = {c.code for c in found if c.kind in ("fix-design", "fix-evidence")}
    out = []
    for finding in ground.findings:
        code = finding.code
        if code in taken or code in NOT_ADVICE or not words.has_action(code):
            continue
        if code == "checkpoint-interval" and finding.severity == "info":  # the note says it is close to Daly's
            continue
        if code in CANNOT_START and not ground.can_start.value and code == ground.can_start.code:
            continue
        excluded = _model_bound_dropped(ground, code)
        effect: Effect = "unknown" if code == "wrong-axis" else "none"
        out.append(_candidate("advice", code, effect, words.finding_text(code, ground.evidence), finding=finding,
                              rank=7, feasible=excluded is None, excluded_by=excluded))
        taken.add(code)
    out += _layout_advice(ground, found, taken)
    return out


def _layout_advice(ground: Ground, found: list[Candidate], taken: set[str]) -> list[Candidate]:
    """`better-layout` that meets no limit set in any regime is advice."""
    finding = _finding(ground, "better-layout")
    if finding is None or any(c.kind == "layout" for c in found) or "better-layout" in taken:
        return []
    return [_candidate("advice", "better-layout", "none", words.finding_text("better-layout", ground.evidence),
                       finding=finding, rank=7)]


def _model_bound_dropped(ground: Ground, code: str) -> ExcludedBy | None:
    """A bound of the α–β model (p* or p_dom) the runs pass is dropped: a measured scale above it meets the goal, or
    is faster beyond noise than every measured scale at or below it; so is every bound under a model-refuted code."""
    if code not in MODEL_BOUNDS:
        return None
    if ground.codes & set(MODEL_REFUTED):
        return "model-refuted"
    bound = _bound(ground.evidence.prediction, code)
    scaling = ground.scaling
    if bound is None or scaling is None:
        return None
    above = [r for r in scaling.rows if r.nodes > bound and r.time_s is not None]
    within = [r for r in scaling.rows if r.nodes <= bound and r.time_s is not None]
    goal = ground.goal
    meeting = {c.nodes for c in goal.checks if c.met} if goal is not None else set()
    for row in above:
        if row.nodes in meeting:
            return "measured"
        assert row.time_s is not None
        if within and all(row.time_s < (r.time_s or 0.0) and beyond_noise(
                row.time_s, r.time_s or 0.0, row.time_ci, r.time_ci, FASTER_WITHOUT_REPEATS) for r in within):
            return "measured"
    return None


def _bound(prediction: PredictionResult | None, code: str) -> float | None:
    if prediction is None:
        return None
    return float(prediction.p_star) if code == "past-optimum" else \
        float(prediction.p_comm_dominated) if prediction.p_comm_dominated else None
