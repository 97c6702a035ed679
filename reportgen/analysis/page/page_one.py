"""Page 1 from one set of facts (docs/methods.md#page-1-from-one-set-of-facts): computed once, after every analysis
and before the sentences, so that everything page 1, the findings' page-1 texts, `reportgen diff` and `reportgen
history` say is written from one typed object.

`PageOne` holds the state of the page and of each price regime, every figure page 1 quotes with its one source,
whether the design can start, the constraints (applied once, to every candidate), every way considered to change
the verdict in its order, the one chosen, and the operating point. It reads typed results and the findings' codes,
never a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from reportgen.analysis.common import first_min
from reportgen.analysis.findings import Finding, Severity, info
from reportgen.analysis.measured.confidence import NextRun, PlanEstimate, planner_runs
from reportgen.analysis.measured.reconcile import Reconciliation
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.money.cost import CostResult
from reportgen.analysis.page.candidate_order import first_feasible, ordered
from reportgen.analysis.page.candidates import CANNOT_START, Ground, find_candidates
from reportgen.analysis.page.page_one_facts import (
    Candidate,
    CanStart,
    Constraints,
    ExcludedQuantity,
    Objective,
    OptimumFacts,
    OptimumSource,
    PageAction,
)
from reportgen.analysis.page.prose import actions as words
from reportgen.analysis.quotes import Quantity, Sources, figures_of, recording, unique
from reportgen.analysis.verdict.goal import GoalResult, nearest
from reportgen.analysis.verdict.lever_records import Levers
from reportgen.analysis.verdict.objectives import OBJECTIVE_NAMES
from reportgen.analysis.verdict.serving import ServingResult
from reportgen.analysis.verdict.verdict_state import (
    P_MISS_KEEP,
    PageState,
    RegimeState,
    page_state,
    plan_flag,
    serving_lacking,
    serving_regimes,
    training_lacking,
    training_regimes,
)
from reportgen.project.model import PlanSearch, Project
from reportgen.wording import INTERVAL_RUNS, nodes

KEEP = "Keep the plan, and rebuild this report after the next measurements."
# the excluded quantities' findings, by quantity
EXCLUDED_BY = {"energy": "implausible-energy", "collective": "implausible-collective",
               "throughput": "implausible-throughput"}
# the levers that act on a service's objectives, by objective (docs/methods.md#constraints-applied-once)
OBJECTIVE_LEVERS = {"p99": "p99 latency", "ttft_p99": "ttft p99", "tpot_p99": "tpot p99"}
COST_ONLY_LEVERS = ("node price", "spot fraction", "utilization")


@dataclass(frozen=True)
class PageOne:
    state: PageState
    quantities: tuple[Quantity, ...]
    can_start: CanStart
    constraints: Constraints
    candidates: tuple[Candidate, ...]
    next_action: PageAction
    optimum: OptimumFacts
    # where each result page 1 quotes lies in results.json, indexed once: the sentences quote from it too
    sources: Sources = field(default_factory=Sources, compare=False, repr=False)

    @property
    def why(self) -> str | None:
        return self.state.why

    @property
    def regimes(self) -> tuple[RegimeState, ...]:
        return self.state.regimes

    @property
    def plan(self) -> float | None:
        return self.state.plan

    @property
    def chosen(self) -> Candidate | None:
        index = self.next_action.candidate
        return self.candidates[index] if index is not None else None


@dataclass(frozen=True)
class PageInputs:
    """What page 1 is computed from: the project and every analysis's typed result."""

    project: Project
    evidence: words.Evidence
    findings: tuple[Finding, ...]
    cost: CostResult | None = None
    reconciliation: Reconciliation = field(default_factory=Reconciliation)
    next_runs: tuple[NextRun, ...] = ()
    # an unmeasured scale's time as the plan's estimate would be there (the goal's judge of a moved plan reads it)
    estimate_at: Callable[[int], PlanEstimate | None] | None = None

    @property
    def plan(self) -> int | None:
        return self.project.design.nodes if self.project.design else None

    @property
    def levers(self) -> Levers:
        return self.evidence.levers


def build_page_one(inputs: PageInputs) -> PageOne:
    """The facts of page 1, in the order they depend on each other: whether the design can start, the state, the
    constraints, the candidates and their order, the next action, the operating point, the quantities quoted."""
    sources = page_sources(inputs.evidence, inputs.cost)
    with recording(sources):  # each candidate's text quotes from them
        return replace(_page_one(inputs), sources=sources)


def page_sources(evidence: words.Evidence, cost: CostResult | None) -> Sources:
    """The results page 1's sentences quote, as results.json holds them (docs/methods.md#every-figure-has-one-source):
    the goal section (a service's is its serving analysis), then the sections by their keys (the layout and page 1's
    constraints are added by the sentences, which alone quote them)."""
    held = evidence.serving if evidence.serving is not None else evidence.goal
    written = [*(held.document_paths() if held is not None else ()), *evidence.levers.document_paths()]
    return Sources.of({"diagnosis": evidence.diagnosis, "prediction": evidence.prediction,
                       "plan_search": evidence.plan_search, "scaling": evidence.scaling, "cost": cost,
                       "reliability": evidence.reliability, "serving": evidence.serving,
                       "next_runs": evidence.next_runs or None}, written)


def _page_one(inputs: PageInputs) -> PageOne:
    can_start = decide_can_start(inputs.findings, inputs.evidence)
    state = _state(inputs, can_start)
    constraints = _constraints(inputs)
    ground = Ground(inputs.project, inputs.plan, state, can_start, constraints, inputs.findings, inputs.evidence,
                    inputs.cost, inputs.next_runs, inputs.levers, inputs.estimate_at)
    margin = inputs.project.plan_search.margin if inputs.project.plan_search else PlanSearch().margin
    candidates = ordered(find_candidates(ground), margin=margin)
    candidates, action = _next_action(ground, candidates)
    optimum = _optimum(inputs, constraints, candidates)
    return PageOne(state, _quantities(inputs, state, candidates, action), can_start, constraints,
                   tuple(candidates), action, optimum)


# ---------------------------------------------------------------------------------------------------- can it start
def decide_can_start(findings: Sequence[Finding], evidence: words.Evidence) -> CanStart:
    """The design cannot start when an error says so and no measured run refutes it (the lint has already turned a
    refuted memory error into `memory-model-refuted`). A wrong axis stops it only on the memory-capacity wall that
    the design neither shards nor fits a layout for (docs/methods.md#can-the-design-start)."""
    d = evidence.diagnosis
    memory_unmet = d is not None and d.binding_ceiling == "memory-capacity" and \
        not (d.shard_within_node and d.design_shards_model)
    refuted = tuple(sorted({f.refutes for f in findings if f.code == "memory-model-refuted" and f.refutes}))
    stops = [f for f in findings if f.severity == "error" and f.code in CANNOT_START
             and (f.code != "wrong-axis" or memory_unmet)]
    if not stops:
        return CanStart(True, None, None, None, refuted)
    first = min(stops, key=lambda f: CANNOT_START.index(f.code))
    return CanStart(False, first.code, first.message, words.finding_text(first.code, evidence), refuted)


# ---------------------------------------------------------------------------------------------------------- state
def _state(inputs: PageInputs, can_start: CanStart) -> PageState:
    e = inputs.evidence
    project = inputs.project
    if project.serving:
        serving = e.serving
        regimes = serving_regimes(serving) if serving is not None else ()
        return page_state(regimes, has_goal=serving is not None or _has_goal(project), can_start=can_start.value,
                          plan=inputs.plan,
                          none_meets=serving is not None and bool(serving.points)
                          and all(p.met is False for p in serving.points),
                          flagged=False, lacking=None if regimes else serving_lacking(serving, inputs.plan))
    goal = e.goal
    if goal is None:
        return page_state((), has_goal=False, can_start=can_start.value, plan=inputs.plan, none_meets=False,
                          flagged=False, lacking=None)
    regimes = training_regimes(goal)
    return page_state(regimes, has_goal=True, can_start=can_start.value, plan=inputs.plan,
                      none_meets=goal.none_meets and e.scaling is not None and not e.scaling.per_unit_of_work,
                      flagged=goal.plan_measured and plan_flag(e.scaling, inputs.plan) is not None,
                      lacking=training_lacking(goal, e.scaling))


def _has_goal(project: Project) -> bool:
    goal = project.project.goal
    return goal is not None and bool(goal.per_run_fields or goal.serving_fields)


# ---------------------------------------------------------------------------------------------------- constraints
def _constraints(inputs: PageInputs) -> Constraints:
    project, e = inputs.project, inputs.evidence
    hardware = project.hardware
    excluded = tuple(ExcludedQuantity(nodes, quantity, EXCLUDED_BY[quantity])
                     for nodes, quantities in sorted(inputs.reconciliation.excluded().items())
                     for quantity in quantities)
    scaling = e.scaling
    shares = None
    if scaling is not None and scaling.mode == "weak" and scaling.rows:
        shares = float(inputs.plan) if inputs.plan is not None else max(row.nodes for row in scaling.rows)
    return Constraints(hardware.nodes_available if hardware else None, shares, excluded, _objectives(inputs))


def _objectives(inputs: PageInputs) -> tuple[Objective, ...]:
    """Every limit the verdict checks, with the lever that acts on it: one that flips the verdict, else one that
    comes closest (null: no lever of the search acts on it)."""
    levers = [lever.lever for lever in inputs.levers.flips] + [miss.lever for miss in inputs.levers.near_misses]
    serving, goal = inputs.evidence.serving, inputs.evidence.goal
    if serving is not None:
        out = [Objective("load", serving.capacity_needed_rps,
                         next((name for name in ("capacity per replica", "replicas") if name in levers), None))]
        for name, limit in serving.objectives:
            lever = OBJECTIVE_LEVERS.get(name)
            out.append(Objective(OBJECTIVE_NAMES[name], limit, lever if lever in levers else None))
        if serving.cost_limit_per_hour is not None:
            out.append(Objective("cost per hour", serving.cost_limit_per_hour,
                                 "node price" if "node price" in levers else None))
        return tuple(out)
    if goal is None:
        return ()
    out = []
    if goal.time_limit_s is not None:
        out.append(Objective("time per run", goal.time_limit_s,
                             next((name for name in levers if name not in COST_ONLY_LEVERS), None)))
    if goal.cost_limit is not None:
        out.append(Objective("cost per run", goal.cost_limit, levers[0] if levers else None))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------- next action
def _next_action(ground: Ground, candidates: list[Candidate]) -> tuple[list[Candidate], PageAction]:
    """The first feasible candidate; "keep the plan" only when earned; else the plan's scale measured."""
    index = first_feasible(candidates)
    if index is None and not _keep_earned(ground, candidates) and ground.plan is not None:
        text = words.finding_text("plan-not-measured", ground.evidence)
        fallback = Candidate("measure", "plan-not-measured", 4, float(ground.plan), None, None, None, "decides", None,
                             None, None, None, None, None, True, None, text,
                             table_index=words.table_index("plan-not-measured"), figures=figures_of(text))
        candidates = [*candidates, fallback]
        index = len(candidates) - 1
    if index is None:
        return candidates, PageAction("none", KEEP)
    chosen = candidates[index]
    # the chosen one leads the list, so that next_action.candidate is 0 and page 2 opens with it
    candidates = [chosen, *candidates[:index], *candidates[index + 1:]]
    return candidates, PageAction(chosen.code, chosen.text, chosen.rank, chosen.taken, chosen.kind, chosen.effect, 0)


def _keep_earned(ground: Ground, candidates: list[Candidate]) -> bool:
    """Keep the plan only when the page is met, the design can start, no viable regime straddles, every chance of
    missing is below 10 %, the verdict is measured or unlikely wrong, and no candidate of rank 1–7 exists."""
    state = ground.state
    if state.state == "no-goal":
        return not any(c.feasible for c in candidates)
    if state.state != "met" or not ground.can_start.value:
        return False
    viable = [r for r in state.regimes if r.viable]
    # the chance of missing is that of the regimes the page is met by (a missed regime misses by definition)
    if any(r.straddles for r in viable) or any((r.p_miss or 0.0) >= P_MISS_KEEP for r in viable if r.state == "met"):
        return False
    measured = all(r.source == "measured" for r in viable)
    p_wrong = max((run.p_wrong_before for run in planner_runs(ground.next_runs)), default=0.0)
    return (measured or p_wrong < P_MISS_KEEP) and not any(c.feasible for c in candidates)


# -------------------------------------------------------------------------------------------------------- optimum
def _optimum(inputs: PageInputs, constraints: Constraints, candidates: Sequence[Candidate]) -> OptimumFacts:
    """The operating point, chosen among the scales within nodes_available only: the cheapest measured point that
    meets the goal, else the smallest scale the USL fit says meets it, else the nearest; a scale that would meet
    beyond the nodes available is named, never chosen."""
    e = inputs.evidence
    limit = constraints.nodes_available

    def within(nodes: float) -> bool:
        return limit is None or nodes <= limit

    if inputs.project.serving:
        return _serving_optimum(e.serving, within)
    scaling, goal = e.scaling, e.goal
    if scaling is None or scaling.single_scale:
        if e.prediction is not None and scaling is None:
            return OptimumFacts(float(e.prediction.p_star), "model", "model")
        if scaling is not None:
            return OptimumFacts(scaling.rows[0].nodes, "measured", "single-scale")
        return OptimumFacts(None, None, "none")
    if goal is not None:
        meeting = [c for c in goal.checks if c.met and within(c.nodes)]
        if meeting:
            best = first_min(meeting, key=lambda c: c.cost if c.cost is not None else c.time_s)
            return OptimumFacts(best.nodes, "measured", "cheapest-meeting", best.regime)
        fit = goal.fitted_meeting
        if fit is not None and within(fit.nodes):
            return OptimumFacts(fit.nodes, "usl", "fitted-meeting", fit.regime)
        # the scale the report's judge holds met from the fit, within the nodes available (its fitted-scale way)
        judged = next((c for c in candidates if c.kind == "fitted-scale" and c.feasible and c.nodes is not None), None)
        if judged is not None and judged.nodes is not None:
            return OptimumFacts(judged.nodes, "usl", "fitted-meeting", judged.regime)
        above = [c for c in candidates if c.rank == 3 and c.excluded_by == "nodes_available" and c.nodes is not None]
        first = min(above, key=lambda c: c.nodes or 0.0, default=None)
        beyond = first.nodes if first is not None else None
        beyond_source: OptimumSource | None = None if first is None else \
            "measured" if first.kind == "measured-scale" else "usl" if first.kind == "fitted-scale" else "model"
        judged_beyond = first is not None and first.kind == "fitted-scale" and first.taken is not None
        timely = [c for c in goal.checks if c.meets_time and within(c.nodes)] if goal.cost_unknown else []
        if timely:
            best = first_min(timely, key=lambda c: c.nodes * c.time_s)
            return OptimumFacts(best.nodes, "measured", "fewest-node-hours", best.regime, beyond, beyond_source,
                                judged_beyond)
        near = [c for c in goal.checks if within(c.nodes)]
        if near:
            point = nearest(near)
            if point is not None:
                return OptimumFacts(point.nodes, "measured", "nearest", point.regime, beyond, beyond_source,
                                    judged_beyond)
    return _measured_optimum(inputs, scaling, within)


def _measured_optimum(inputs: PageInputs, scaling: ScalingResult,
                      within: Callable[[float], bool]) -> OptimumFacts:
    rows = [r for r in scaling.rows if within(r.nodes)] or list(scaling.rows)
    project, cost = inputs.project, inputs.cost
    by_cost = project.checklist is not None and project.checklist.metric == "cost" and cost is not None \
        and scaling.mode != "weak"
    if by_cost and cost is not None:
        priced = [r for r in cost.rows if any(s.nodes == r.nodes for s in rows)] or list(cost.rows)
        cheapest = first_min(priced, key=lambda r: r.cost)
        return OptimumFacts(float(cheapest.nodes), "measured", "cost-optimal")
    fastest = first_min(rows, key=lambda r: -r.speedup)
    return OptimumFacts(fastest.nodes, "measured", "fastest")


def _serving_optimum(serving: ServingResult | None, within: Callable[[float], bool]) -> OptimumFacts:
    if serving is None or not serving.rows:
        return OptimumFacts(None, None, "none")
    meeting = [p for p in serving.points if p.met and p.source == "measured" and within(p.nodes)]
    if meeting:
        best = first_min(meeting, key=lambda c: c.cost_per_hour or 0.0)
        return OptimumFacts(best.nodes, "measured", "cheapest-meeting", best.regime)
    if serving.nodes_to_serve is not None and within(serving.nodes_to_serve):
        if serving.nodes_to_serve_source == "measured":
            return OptimumFacts(serving.nodes_to_serve, "measured", "fastest")
        return OptimumFacts(serving.nodes_to_serve, "usl", "fitted-meeting")
    return OptimumFacts(None, None, "none", beyond=serving.nodes_to_serve)


# ------------------------------------------------------------------------------------------------------ quantities
def _quantities(inputs: PageInputs, state: PageState, candidates: Sequence[Candidate],
                action: PageAction) -> tuple[Quantity, ...]:
    """Every figure page 1 quotes, each with the results.json path it is copied from."""
    out: list[Quantity] = []
    goal: GoalResult | None = inputs.evidence.goal
    if goal is not None:
        if goal.time_limit_s is not None:
            out.append(Quantity("time limit", goal.time_limit_s, "s", None, "goal.time_per_run_s"))
        if goal.cost_limit is not None:
            out.append(Quantity("budget", goal.cost_limit, "currency", None, "goal.cost_per_run"))
        for index, check in enumerate(goal.at_plan or goal.fitted_at_plan):
            at = f"goal.at_plan[{index}]"
            out.append(Quantity("time per run", check.time_s, "s", check.regime, f"{at}.time_s"))
            if check.cost is not None:
                out.append(Quantity("cost per run", check.cost, "currency", check.regime, f"{at}.cost"))
            if check.failure_tax is not None:
                out.append(Quantity("failure tax", check.failure_tax, "fraction", check.regime, f"{at}.failure_tax"))
    if action.candidate is not None:
        chosen = candidates[action.candidate]
        at = f"summary.candidates[{action.candidate}]"
        for name, unit in (("time_s", "s"), ("cost", "currency"), ("money", "currency"), ("node_hours", "h"),
                           ("p_wrong_before", "fraction"), ("p_wrong_after", "fraction"), ("nodes", "nodes")):
            value = getattr(chosen, name)
            if value is not None:
                out.append(Quantity(f"next action {name}", float(value), unit, chosen.regime, f"{at}.{name}"))
        out.extend(chosen.figures)  # those its text quotes
    return unique(out)


def needs_levers(page: PageOne, findings: Sequence[Finding]) -> bool:
    """Whether page 1 reads the goal's levers: a missed or unjudged page whose next action is not a fix of rank 1 or
    2 (its fitted scale, its lever, or its out-of-reach sentence read them), a ZeRO stage that fixes a layout, or a
    refuted memory model (it rests on the ZeRO lever) (methods.md#a-projects-history)."""
    chosen = page.chosen
    if page.can_start.code == "layout-does-not-fit" or any(f.code == "memory-model-refuted" for f in findings):
        return True
    return page.state.state in ("missed", "unjudged") and page.can_start.value and \
        (chosen is None or (chosen.rank or 8) >= 3)


# --------------------------------------------------------------------------------------------------------- findings
def page_one_findings(page: PageOne, findings: Sequence[Finding]) -> list[Finding]:
    """The findings page 1's facts raise: a stated objective not known at the plan, a plan whose repeats straddle a
    limit, and the next action's code where no rule of the lint raised it (so that every next action is a
    finding's)."""
    codes = {f.code for f in findings}
    out: list[Finding] = []
    unknown = [r for r in page.regimes if r.why == "objective-unknown"]
    if (unknown or page.why == "objective-unknown") and "objective-unknown" not in codes:
        out.append(info("objective-unknown", "a stated objective is not known at the plan's scale: the verdict checks "
                        "every objective the goal states, so it is not judged there until a load test measures it",
                        "project.goal", "serving"))
    straddling = next((r for r in page.regimes if r.viable and r.straddles and r.source == "measured"), None)
    if straddling is not None and "plan-straddles" not in codes:
        over = f": {straddling.runs_over} of {straddling.runs} runs beyond a limit" \
            if straddling.runs_over is not None and straddling.runs is not None else ""
        interval = "95 % interval of the plan's repeats" if straddling.runs is None or \
            straddling.runs >= INTERVAL_RUNS else f"range of the plan's {straddling.runs} runs"
        out.append(info("plan-straddles", f"the {interval} holds a limit{over}, so the verdict, judged by their "
                        "median, could go either way", "scaling.runs", "measure"))
    raised = codes | {f.code for f in out}
    action = page.next_action
    if action.code != "none" and action.code not in raised:
        severity, message = _RAISED.get(action.code, ("info", "page 1's next action: {action}"))
        text = message.format(plan=nodes(page.plan) if page.plan is not None else "plan",
                              action=f"{action.text[:1].lower()}{action.text[1:].rstrip('.')}")
        out.append(Finding(severity, action.code, text, _PATHS.get(action.code, ""), "summary"))
    return out


# what page 1 raises when its next action's code was not raised by a rule of the lint
_RAISED: dict[str, tuple[Severity, str]] = {
    "plan-not-measured": ("info", "the planned {plan} were not measured; its time and cost are not evidenced"),
    "goal-unmet": ("warning", "no measured scale meets the goal in any viable price regime: {action}"),
    "plan-misses-goal": ("warning", "the planned {plan} miss the goal: {action}"),
}
_PATHS = {"plan-not-measured": "design.nodes", "plan-misses-goal": "design.nodes", "plan-past-peak": "design.nodes",
          "goal-unmet": "project.goal", "better-layout": "design.parallelism", "single-scale": "scaling.runs"}
