"""Page 1 as a senior reviewer writes it (docs/methods.md#page-1-and-the-next-action), led by the evidence.

1. the goal's verdict at the plan, in the project's dominant metric (time and cost per run for a training job; load
   served within the p99 objective and cost per hour for a service), with margins and intervals;
2. when missed, the gap in the goal's own terms and the cheapest measured way that meets it;
3. the operating point the evidence supports (measured, else the USL fit; the α–β model's p* only as the model's,
   and never when a model-against-measurement warning says the model does not describe the system);
4. one next action (reportgen.analysis.page.prose.actions), and how strong the evidence is (single runs, intervals).

Sentences are written here, once, so that the report and results.json say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from reportgen.analysis.common import first_min
from reportgen.analysis.findings import Finding
from reportgen.analysis.measured.confidence import PlanEstimate
from reportgen.analysis.measured.diagnosis import DiagnosisResult
from reportgen.analysis.measured.model_check import ModelCheckResult
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.ceilings import CEILING, CeilingName
from reportgen.analysis.model.layout import LayoutResult
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.analysis.model.reliability import ReliabilityResult
from reportgen.analysis.money.cost import CostResult
from reportgen.analysis.page.page_one import PageOne
from reportgen.analysis.page.page_one_facts import (
    Candidate,
    CanStart,
    Constraints,
    OptimumFacts,
    PageAction,
)
from reportgen.analysis.page.prose.accuracy import demoted_words, held_words, model_held_words
from reportgen.analysis.page.prose.actions import Evidence
from reportgen.analysis.quotes import Quantity, count_at, quote, recording, unique
from reportgen.analysis.verdict.goal import GoalCheck, GoalResult
from reportgen.analysis.verdict.objectives import OBJECTIVE_NAMES, ROW_FIELDS, ObjectiveName, latency_of, latency_source
from reportgen.analysis.verdict.serving import ServingCheck, ServingResult, ServingRow
from reportgen.analysis.verdict.verdict_state import RegimeState, VerdictState, Why, plan_flag
from reportgen.keys import Key, derived
from reportgen.project.accuracy_table import Calibration, not_graded
from reportgen.project.model import AXIS_DOING, REGIME_NAMES, REGIME_PHRASES, Project
from reportgen.wording import (
    counted,
    duration,
    listed,
    margin,
    money,
    nodes,
    number,
    percent,
    plural,
    requests,
    sentence,
    size,
    spread,
    target_share,
    times,
)

# Findings that say the α–β model does not describe the measured system: page 1 then does not headline its p*.
OptimumSource = Literal["measured", "usl", "model"]
MODEL_REFUTED = ("fit-disagrees", "comm-share-departs", "below-prediction", "bad-fit")


@dataclass(frozen=True)
class Optimum:
    nodes: Annotated[float | None, Key("the node count")]
    source: Annotated[OptimumSource | None, Key("where it comes from")]
    text: Annotated[str, Key("the sentence")]

    @derived(Key("a fitted or modelled optimum is a location, which the corpus does not grade: {predictor: usl or "
                 "model, status: not-graded} (null for a measured one)"))
    def calibration(self) -> Calibration | None:
        return None if self.source in (None, "measured") else not_graded(str(self.source))


@dataclass(frozen=True)
class CheckpointAdvice:
    """The figures page 1's failure-tax sentence quotes: the plan's checkpoint interval against Daly's for the
    failures its regime suffers (on spot, hardware failures and preemptions together)."""

    nodes: Annotated[float, Key("the plan's node count")]
    regime: Annotated[str | None, Key("the price regime of the verdict's headline")]
    overhead_fraction: Annotated[float, Key("the failure tax folded into the verdict's figures")]
    interval_s: Annotated[float | None, Key("the checkpoint interval the design declares (null: Daly's is used)")]
    daly_interval_s: Annotated[float | None, Key("Daly's interval for those failures")]
    saving_s: Annotated[float | None, Key("the time a run would save at Daly's interval (null when the declared "
                                          "interval costs no more)")]


@dataclass(frozen=True)
class SummaryResult:
    # item 1: the goal at the plan
    verdict: Annotated[str, Key("the goal's verdict at the plan, in the project's dominant metric")]
    state: Annotated[VerdictState, Key("how the verdict reads")]
    gap: Annotated[str | None, Key("when the goal is missed: the gap in its own terms and the cheapest way to meet "
                                   "it")]  # item 2
    optimum: Annotated[Optimum, Key("the operating point the evidence supports")]  # item 3
    model: Annotated[str | None, Key("the α–β model's optimum as the model's, or why it does not describe the "
                                     "system")]
    evidence: Annotated[str | None, Key("how strong the measurements are: single runs, intervals, flagged runs")]
    # item 4
    next_action: Annotated[PageAction, Key("the one next action: the first feasible way considered")]
    knee: Annotated[str | None, Key("the measured curve's knee and the largest loss beyond it (no cause without a "
                                    "knee)")] = None
    kappa_ratio: float | None = None  # the measured USL κ over the model's α/T_comp: the model held to account
    blocker: Annotated[str | None, Key("an error that says the design cannot start, with its fix: page 1 opens with "
                                       "it")] = None
    failure_tax: Annotated[str | None, Key("with reliability: the failure tax folded into the verdict's figures, and "
                                           "the time Daly's interval would save")] = None  # said once
    layout: Annotated[str | None, Key("with design.parallelism: the layout, its memory per device against the "
                                      "device, and where each ZeRO stage fits")] = None
    diagnosis: Annotated[str | None, Key("the diagnosis in one line: the binding ceiling, the axis that cures it, "
                                         "and the declared axis held against it")] = None
    checkpoint: Annotated[CheckpointAdvice | None, Key(
        "with reliability: the figures the failure-tax sentence quotes")] = None
    plan_search: Annotated[str | None, Key("with the model's shape: the best layout the model finds against the "
                                           "declared one")] = None
    why: Annotated[Why | None, Key("unless met or missed: why the verdict is not judged (cannot-start, "
                                   "estimate-straddles, model-other-side, few-scales, not-measured, flagged-run, "
                                   "requests-straddle, unpriced, objective-unknown, per-unit-of-work, no-plan, "
                                   "no-runs, model-demoted)")] = None
    headline_regime: Annotated[str | None, Key("the regime page 1 leads with: the cheapest viable that meets, else "
                                               "the cheapest viable, else the fastest")] = None
    regimes: Annotated[tuple[RegimeState, ...], Key("each stated price regime at the plan, as page 1 reads it",
                                                    item="one regime")] = ()
    quantities: Annotated[tuple[Quantity, ...], Key("every figure page 1 quotes, with the results.json path it is "
                                                    "copied from", item="one figure")] = ()
    can_start: Annotated[CanStart | None, Key("whether the design can start as declared, decided once")] = None
    constraints: Annotated[Constraints | None, Key("the constraints applied once to every candidate")] = None
    candidates: Annotated[tuple[Candidate, ...], Key("every way considered to change the verdict, the chosen one "
                                                     "first, then in the order of docs/methods.md#the-order",
                                                     item="one way considered")] = ()


@dataclass(frozen=True)
class _Words:
    currency: str

    def money(self, amount: float | None) -> str:
        return money(amount, self.currency)

    def hourly(self, amount: float | None) -> str:
        return f"{money(amount, self.currency)} an hour"


def summarize(project: Project, page: PageOne, *, scaling: ScalingResult | None, cost: CostResult | None,
              prediction: PredictionResult | None, goal: GoalResult | None, serving: ServingResult | None,
              findings: tuple[Finding, ...], evidence: Evidence,
              model_check: ModelCheckResult | None = None, layout: LayoutResult | None = None) -> SummaryResult:
    """Page 1's sentences, each written from the page's facts (reportgen.analysis.page.page_one): this function decides
    no state, regime, node count or action."""
    sources = page.sources  # indexed once, by the page's facts
    sources.walk(layout, "layout")
    sources.walk(page.constraints, "summary.constraints")
    sources.walk(page.candidates, "summary.candidates")
    with recording(sources) as figures:
        said = _said(project, page, scaling=scaling, cost=cost, prediction=prediction, goal=goal, serving=serving,
                     findings=findings, evidence=evidence, model_check=model_check, layout=layout)
    return replace(said, quantities=unique([*page.quantities, *figures]))


def _said(project: Project, page: PageOne, *, scaling: ScalingResult | None, cost: CostResult | None,
          prediction: PredictionResult | None, goal: GoalResult | None, serving: ServingResult | None,
          findings: tuple[Finding, ...], evidence: Evidence, model_check: ModelCheckResult | None,
          layout: LayoutResult | None) -> SummaryResult:
    words = _Words(project.currency)
    plan = project.design.nodes if project.design else None
    state = page.state.state
    if project.serving:
        verdict, gap = _serving_verdict(serving, plan, state, words)
        optimum = _serving_optimum(serving, page.optimum, words)
    else:
        verdict, gap = _training_verdict(goal, page, plan, scaling, cost, words)
        optimum = _training_optimum(project, goal, scaling, cost, prediction, page.optimum, words,
                                    untaxed=evidence.reliability is not None, ways=page.candidates)
    codes = {f.code for f in findings}
    ratio = model_check.kappa_ratio if model_check else None
    blocker = _blocker(page.can_start)
    model = _model(prediction, scaling, codes, ratio)
    if blocker is not None:  # no predicted p* or speedup of a design that cannot start is shown as a result
        model = None if model is None else "The design's α–β model is not quoted: the design cannot start as declared."
        if optimum.source == "model":
            optimum = Optimum(None, None, "No operating point: the design cannot start as declared, so its model's "
                              "optimum is no guide until the design is fixed.")
    advice = None if project.serving else _checkpoint_advice(goal, page, evidence.reliability, cost)
    return SummaryResult(verdict, state, gap, optimum, model,
                         _evidence(scaling, findings, plan, optimum.nodes, serving), page.next_action,
                         _knee(scaling), ratio, blocker,
                         _failure_tax(goal, page, advice, cost, evidence.reliability) or None,
                         _layout(layout), _diagnosis(evidence.diagnosis), advice,
                         evidence.plan_search.sentence if evidence.plan_search is not None else None,
                         page.state.why, page.state.headline_regime, page.regimes, page.quantities, page.can_start,
                         page.constraints, page.candidates)


WHY_WORDS: dict[str, str] = {
    "cannot-start": "the design cannot start", "estimate-straddles": "the estimate straddles a limit",
    "requests-straddle": "the load tests' requests straddle the target",
    "model-other-side": "the α–β model's figure is on the other side of a limit", "few-scales": "too few scales",
    "not-measured": "the plan is not measured", "flagged-run": "a finding flags the plan's run",
    "unpriced": "no prices", "objective-unknown": "an objective is not known at the plan",
    "per-unit-of-work": "no work per run", "no-plan": "no plan", "no-runs": "nothing measured",
    "model-demoted": "the fit is no guide this far beyond the measurements"}


def state_words(state: VerdictState, page: PageOne | None) -> str:
    """Page 1's state in a few words, for the diff and the history: "the time goal is met at 16 nodes", "not judged
    (the design cannot start)"."""
    plan = page.plan if page is not None else None
    at = f" at {nodes(plan)}" if plan is not None else ""
    why = page.state.why if page is not None else None
    if state == "unjudged":
        return f"not judged ({WHY_WORDS[why]})" if why else "not judged"
    return {"met": f"the goal is met{at}", "missed": f"the goal is missed{at}", "partly": f"the time goal is met{at}",
            "no-goal": "no goal stated"}[state]


def _diagnosis(d: DiagnosisResult | None) -> str | None:
    """The diagnosis on page 1: the binding ceiling and its axis, a within-node shard when one is needed, the
    declared axis against it, and what binds next."""
    if d is None:
        return None
    measured_from = d.time_reference_nodes
    if d.binding_ceiling != "none":
        words = [f"The binding ceiling is {_ceiling(d.binding_ceiling)}, cured by {AXIS_DOING[d.axis]}."]
    elif measured_from is not None and measured_from > 1:  # only its own scale is shown to suffice
        words = [f"No ceiling binds at the smallest measured scale: {nodes(measured_from)} suffice; whether a "
                 "single machine would is not measured."]
    else:
        words = ["No ceiling binds: a single machine suffices."]
    if d.shard_within_node:
        words.append(f"One replica does not fit one device: the model must be sharded within each node "
                     f"({d.min_devices} of its {d.devices_per_node} devices); across nodes the ceiling is then "
                     + (f"{_ceiling(d.node_ceiling)}, cured by {AXIS_DOING[d.node_axis]}." if d.node_ceiling
                        and d.node_axis else "none."))
    if d.declared_axis and d.axis_matches and d.declared_axis == d.axis and len(words) == 1:
        words[0] = words[0].removesuffix(".") + ", as the design declares."
    elif d.declared_axis:
        words.append(f"The design declares “{d.declared_axis}”: "
                     + ("it matches." if d.axis_matches else "it does not match (see the Diagnosis section)."))
    else:
        words.append("The design declares no axis.")
    if d.secondary_ceilings and not d.shard_within_node:
        words.append("Next, once it is lifted: " + "; ".join(f"{_ceiling(c.ceiling)}, cured by {AXIS_DOING[c.axis]}"
                                                             for c in d.secondary_ceilings) + ".")
    return " ".join(words)


def _ceiling(name: CeilingName) -> str:
    return CEILING[name].words


def _layout(layout: LayoutResult | None) -> str | None:
    """The layout on page 1: the declared layout, its memory per device against the device, and where each stage
    fits."""
    if layout is None:
        return None
    if layout.data is None:
        shape = f"tensor {layout.tensor} × pipeline {layout.pipeline} with no whole data-parallel degree for the plan"
    else:
        shape = (f"data {layout.data:,} × tensor {layout.tensor} × pipeline {layout.pipeline} = "
                 f"{layout.devices:,} devices")
    parts = [f"{shape}, ZeRO stage {layout.zero_stage}"]
    if layout.memory_per_device_b is not None and layout.device_memory_b is not None:
        verdict = "fits" if layout.fits else "does not fit"
        parts.append(f"{size(layout.memory_per_device_b)} per device against {size(layout.device_memory_b)}: it "
                     f"{verdict}")
    if layout.fits is False:
        fitting = layout.fitting_stages
        parts.append(f"the state fits with {listed(fitting)}" if fitting else "no ZeRO stage fits at any d")
    if layout.step is not None and layout.step.bubble_s > 0:
        parts.append(f"the pipeline bubble is {percent(layout.bubble_fraction)} of the compute")
    return sentence("; ".join(parts))


def _blocker(can_start: CanStart) -> str | None:
    """The error that stops the design, with its fix: page 1 opens with it (docs/methods.md#can-the-design-start)."""
    if can_start.value:
        return None
    return sentence(f"The design cannot start as declared: {can_start.reason}. Fix: {can_start.fix}")


# ------------------------------------------------------------------------------------------------------- training
def _training_verdict(goal: GoalResult | None, page: PageOne, plan: int | None, scaling: ScalingResult | None,
                      cost: CostResult | None, words: _Words) -> tuple[str, str | None]:
    """The verdict and the gap, in words, for the state the page's facts hold."""
    state = page.state.state
    if goal is None:
        at = _plan_values(plan, scaling, cost, words)
        return sentence("No goal is stated (add project.goal with time_per_run or cost_per_run)" +
                        (f"; {at}" if at else "")), None
    missed_gap = _training_gap(goal, scaling, words, page.constraints) if state == "missed" or goal.none_meets \
        else None
    if page.state.why == "cannot-start":
        where = f" at the planned {_plan(goal)}" if goal.plan_nodes is not None else ""
        return sentence(f"The goal is not judged{where}: the design cannot start as declared"), None
    if not goal.at_plan:
        if goal.plan_nodes is None and scaling is not None and not scaling.per_unit_of_work:
            return _measured_scales(goal, words), missed_gap
        if state in ("met", "missed"):  # judged from its estimate (methods.md#judging-an-unmeasured-plan)
            return _estimated_plan(goal, page, state == "met", words, scaling), missed_gap
        return _unjudged_plan(goal, page, words, scaling), missed_gap
    values = _plan_clause(goal, page, words)
    where = f"at the planned {_plan(goal)}"
    if page.state.why == "flagged-run":
        return sentence(f"The goal would be met {where}, but {_flagged(scaling, goal.plan_nodes)} (see the findings): "
                        f"{values}"), None
    if state == "met":
        regimes = [r.regime for r in page.regimes if r.state == "met"]
        priced = f" in {listed([REGIME_NAMES[r] for r in regimes if r])} pricing" \
            if goal.priced and len(regimes) < len(page.regimes) else ""
        return sentence(f"The goal is met {where}{priced}: {values}"), None
    # a stated limit that cannot be checked: the cost without prices
    why = (f"the {words.money(quote(goal, 'cost_limit', 'currency'))} budget is not judged: the project gives no "
           "prices (add pricing.node_hour)") if goal.cost_unknown else ""
    if state == "missed":
        return sentence(f"The goal is not met {where}: {values}" + (f"; {why}" if why else "")), missed_gap
    if state == "partly":
        return sentence(f"The time goal is met {where}: {values}; {why}"), None
    if goal.cost_unknown:
        return sentence(f"The goal is not judged {where}: {why}"), None
    return sentence(f"The goal cannot be judged {where}: {values}"), None


FLAG_WORDS = {"implausible": "the run there is implausibly fast", "outlier": "the run there is an outlier",
              "wild-repeat": "a repeat there is far from the others"}


def _flagged(scaling: ScalingResult | None, plan: int | None) -> str:
    """What a finding says of the plan's run, when one flags it (verdict_state.plan_flag decides which)."""
    flag = plan_flag(scaling, plan)
    return FLAG_WORDS[flag] if flag else ""


def _measured_scales(goal: GoalResult, words: _Words) -> str:
    """No node count is planned: the goal held against the measured scales."""
    text = "The project plans no node count (add design.nodes), so the goal is held against the measured scales: "
    if goal.cheapest_meeting is not None:
        best = goal.cheapest_meeting
        cost = f" for {words.money(quote(best, 'cost', 'currency'))}" if best.cost is not None else ""
        return sentence(f"{text}{nodes(quote(best, 'nodes', 'nodes'))}{_on(best.regime)} meet it most cheaply, in "
                        f"{duration(quote(best, 'time_s', 's'))}{cost} per run")
    if goal.time_met_fewest_node_hours is not None:
        best = goal.time_met_fewest_node_hours
        return sentence(f"{text}{nodes(quote(best, 'nodes', 'nodes'))} meet the {_limit(goal)} limit with the "
                        f"fewest node-hours ({duration(quote(best, 'time_s', 's'))} per run); the "
                        f"{words.money(quote(goal, 'cost_limit', 'currency'))} budget is not judged: the project "
                        "gives no prices (add pricing.node_hour)")
    if goal.none_meets:
        return sentence(f"{text}none meets it")
    return sentence(f"{text}none can be judged whole")


def _unjudged_plan(goal: GoalResult, page: PageOne, words: _Words, scaling: ScalingResult | None = None) -> str:
    text = f"The goal is not judged at the plan: {goal.note}"
    fitted = _cheapest_check(list(goal.fitted_at_plan))
    estimate = goal.plan_estimate
    if estimate is not None and scaling is not None:
        text += f"; {_estimate_words(estimate, scaling, goal)}"
    elif fitted is not None:
        verdict = "meet" if fitted.met else "miss" if fitted.met is False else "be judged against"
        cost = f" and {words.money(quote(fitted, 'cost', 'currency'))}{_on(fitted.regime)}" \
            if fitted.cost is not None else ""
        text += (f"; the USL fit puts a run there at {duration(quote(fitted, 'time_s', 's'))}{cost}, which would "
                 f"{verdict} the goal (fitted, not measured)")
    return sentence(text)


def _estimated_plan(goal: GoalResult, page: PageOne, met: bool, words: _Words,
                    scaling: ScalingResult | None) -> str:
    """"The goal would be met at the planned 16 nodes, judged from an estimate (not measured): by Amdahl …"."""
    verdict = "met" if met else "missed"
    text = (f"The goal would be {verdict} at the planned {_plan(goal)}, judged from an estimate (not "
            "measured)")
    fitted = _cheapest_check([c for c in goal.fitted_at_plan if c.met is met and c.viable])
    estimate = goal.plan_estimate
    if estimate is not None and scaling is not None:
        text += f": {_estimate_words(estimate, scaling, goal)}"
        if fitted is not None and fitted.cost is not None:  # the regime's own time beside its cost: one pair
            text += (f";{_on(fitted.regime)} a run takes {duration(quote(fitted, 'time_s', 's'))}, for "
                     f"{words.money(quote(fitted, 'cost', 'currency'))}{_budget(goal, fitted, words)}")
    elif fitted is not None:
        text += f": the USL fit puts a run there at {duration(quote(fitted, 'time_s', 's'))}"
        if goal.time_limit_s is not None and fitted.time_ratio is not None:  # the margin the verdict is judged by
            text += f" ({margin(quote(fitted, 'time_ratio'))} the {_limit(goal)} limit)"
        if fitted.cost is not None:
            text += (f", for {words.money(quote(fitted, 'cost', 'currency'))}{_on(fitted.regime)}"
                     f"{_budget(goal, fitted, words)}")
    return sentence(text)


def _estimate_words(estimate: PlanEstimate, scaling: ScalingResult, goal: GoalResult) -> str:
    """An unmeasured plan's estimate with its interval and source, beside the α–β model's
    (methods.md#few-runs-stated-confidence)."""
    measured = listed([number(quote(row, "nodes", "nodes")) for row in scaling.rows])
    how = f"Amdahl from {measured} nodes" if estimate.source == "amdahl" else f"the USL fitted to {measured} nodes"
    # the fit's time is the measured runs' (before any failure tax); the rows the verdict reads carry the tax, so a
    # reader holding the two against each other is told which is which
    taxed = any((row.failure_tax or 0.0) > 0 for row in goal.fitted_at_plan)
    untaxed = " (before the failure tax)" if taxed else ""
    if estimate.demoted and estimate.calibration is not None:  # no figure of a class that missed here
        return demoted_words(estimate.calibration)
    # the interval the verdict is judged by: calibrated on published curves where its cell is trusted
    calibrated = estimate.calibrated_low_s is not None
    low, high = ("calibrated_low_s", "calibrated_high_s") if calibrated else ("low_s", "high_s")
    text = (f"by {how}{untaxed} a run at {nodes(quote(estimate, 'nodes', 'nodes'))} takes "
            f"{duration(quote(estimate, 'time_s', 's'))} (90 % interval [{duration(quote(estimate, low, 's'))}, "
            f"{duration(quote(estimate, high, 's'))}])")
    limit_s = goal.time_limit_s
    if limit_s is not None:
        side = "within" if estimate.time_s <= limit_s else "over"
        low_s, high_s = estimate.judged_interval()
        straddles = low_s <= limit_s <= high_s
        text += f", {side} the {_limit(goal)} limit" + (" though the interval straddles it" if straddles else "")
    if estimate.calibration is not None:
        text += held_words(estimate.calibration)
    model = estimate.model_calibration
    if model is not None and model.demoted:
        text += f"; {demoted_words(model)}"
    elif estimate.model_time_s is not None:
        text += f"; the α–β model says {duration(quote(estimate, 'model_time_s', 's'))}{model_held_words(model)}"
    return text


def _plan_clause(goal: GoalResult, page: PageOne, words: _Words) -> str:
    """The plan's time and cost, each pair taken from one price regime: spot's time carries its preemptions,
    so the spot cost is never quoted beside the on-demand time. The headline is the cheapest viable regime (the
    fastest without prices); on-demand follows it, with its own time and cost, when the headline is another."""
    headline = _lead(goal, page)
    priced = [c for c in goal.at_plan if c.cost is not None and c.viable]
    several = len({c.regime for c in goal.at_plan if c.regime}) > 1
    clauses = [part for part in (_time_clause(goal, headline), _cost_clause(goal, headline, words)) if part]
    text = " and ".join(clauses)
    if several and headline.regime and clauses:
        text = f"{REGIME_PHRASES[headline.regime]}, {text}"
    on_demand = next((c for c in priced if c.regime == "on_demand"), None)
    if on_demand is not None and on_demand is not headline:
        text += (f"; on demand, {duration(quote(on_demand, 'time_s', 's'))} and "
                 f"{words.money(quote(on_demand, 'cost', 'currency'))}")
    return text


def _lead(goal: GoalResult, page: PageOne) -> GoalCheck:
    """The plan's row in the regime page 1 leads with (the page's facts choose it)."""
    rows = goal.at_plan or goal.fitted_at_plan
    return next((c for c in rows if c.regime == page.state.headline_regime), rows[0])


def _checkpoint_advice(goal: GoalResult | None, page: PageOne, reliability: ReliabilityResult | None,
                       cost: CostResult | None) -> CheckpointAdvice | None:
    """The failure tax at the plan in the regime page 1 leads with, and Daly's interval for the failures that
    regime suffers, copied from its row of reliability.at_plan (methods.md#spot-as-failures)."""
    if goal is None or not goal.at_plan or reliability is None:
        return None
    check = _lead(goal, page)
    row = reliability.at_plan_in(page.state.headline_regime)
    if row is None or check.failure_tax is None:
        return None
    declared = reliability.spec is not None and reliability.spec.checkpoint_interval is not None
    return CheckpointAdvice(check.nodes, row.regime, row.overhead_fraction, row.interval_s if declared else None,
                            row.daly_interval_s if declared else None, row.saving_s)


def _failure_tax(goal: GoalResult | None, page: PageOne, advice: CheckpointAdvice | None,
                 cost: CostResult | None = None, reliability: ReliabilityResult | None = None) -> str:
    """The failure tax folded into the plan's figures, said once and of its regime (methods.md#spot-as-failures),
    with the time Daly's interval would save when the declared checkpoint interval costs more."""
    if goal is None or advice is None:
        return ""
    on_spot = advice.regime == "spot" and cost is not None and cost.regimes.get("spot") is not None and \
        cost.regimes["spot"].preemptions is not None
    what = "hardware failures and preemptions (checkpoints, lost work, restarts)" if on_spot else \
        "checkpoints and restarts"
    row = reliability.at_plan_in(page.state.headline_regime) if reliability is not None else None  # the advice's
    tax = quote(row, "overhead_fraction", "fraction") if row is not None else advice.overhead_fraction
    text = f"These figures include the failure tax at {nodes(quote(_lead(goal, page), 'nodes', 'nodes'))}" \
        f"{_on(advice.regime)}: {what} add {percent(tax)} to the run"
    if row is not None and advice.saving_s is not None and advice.daly_interval_s is not None and \
            advice.interval_s is not None:
        text += (f"; checkpointing every {duration(quote(row, 'daly_interval_s', 's'))} (Daly's interval"
                 f"{' for failures and preemptions together' if on_spot else ''}) instead of every "
                 f"{duration(quote(row, 'interval_s', 's'))} would save {duration(quote(row, 'saving_s', 's'))} a run")
    return sentence(text)


def _time_clause(goal: GoalResult, check: GoalCheck) -> str:
    if goal.time_limit_s is None:
        return ""
    repeats = quote(check, 'repeats') if check.repeats is not None else None
    interval = f"; {spread(repeats)} [{duration(quote(check.time_ci, 0, 's'), check.time_ci)}, " \
        f"{duration(quote(check.time_ci, 1, 's'), check.time_ci)}]" if check.time_ci else ""  # both ends in one unit
    straddles = ", which straddles the limit: more runs would settle it" if check.time_ci and \
        check.time_ci[0] <= goal.time_limit_s <= check.time_ci[1] else ""
    return (f"a run takes {duration(quote(check, 'time_s', 's'))} ({margin(quote(check, 'time_ratio'))} the "
            f"{_limit(goal)} limit{interval}{straddles})")


def _cost_clause(goal: GoalResult, check: GoalCheck, words: _Words) -> str:
    if check.cost is None or not check.viable:
        return ""
    return f"{'' if goal.time_limit_s is not None else 'a run '}costs {words.money(quote(check, 'cost', 'currency'))}" \
        f"{_budget(goal, check, words)}"


def _budget(goal: GoalResult, check: GoalCheck, words: _Words) -> str:
    """" (100 % over the 200 USD budget)" beside a check's cost, when the goal states a budget."""
    if goal.cost_limit is None or check.cost_ratio is None:
        return ""
    return f" ({margin(quote(check, 'cost_ratio'))} the {words.money(quote(goal, 'cost_limit', 'currency'))} budget)"


def _plan(goal: GoalResult) -> str:
    """"16 nodes": the planned node count, quoted from the goal section."""
    return nodes(quote(goal, "plan_nodes", "nodes"))


def _limit(goal: GoalResult) -> str:
    """The goal's time limit, quoted from the goal section."""
    return duration(quote(goal, "time_limit_s", "s"))


def _on(regime: str | None) -> str:
    return f" {REGIME_PHRASES[regime]}" if regime else ""


def _plan_values(plan: int | None, scaling: ScalingResult | None, cost: CostResult | None, words: _Words) -> str:
    row = next((r for r in scaling.rows if r.nodes == plan), None) if scaling and plan else None
    if row is None or row.time_s is None or scaling is None or scaling.per_unit_of_work:
        return ""
    priced = next((r for r in cost.rows if r.nodes == plan), None) if cost else None
    money_part = f" and costs {words.money(quote(priced, 'cost', 'currency'))} on demand" if priced else ""
    return f"at the planned {nodes(quote(row, 'nodes', 'nodes'))} a run takes {duration(quote(row, 'time_s', 's'))}" \
        f"{money_part}"


def _training_gap(goal: GoalResult, scaling: ScalingResult | None, words: _Words,
                  constraints: Constraints | None = None) -> str | None:
    """The goal in its own terms: the speedup the deadline needs against the best measured (and the fit's peak),
    the budget against the cheapest run, then the cheapest way to meet it, measured or fitted, said to lie beyond the
    nodes available where it does (docs/methods.md#constraints-applied-once)."""
    parts = []
    if goal.time_limit_s is not None and scaling is not None and not scaling.per_unit_of_work and \
            any(c.meets_time is False for c in goal.at_plan or goal.fitted_at_plan) and _speedup_gap(goal, scaling):
        parts.append(_speedup_gap(goal, scaling))
    cheapest_run = goal.cheapest_run  # with the failure tax, as every figure of the verdict
    if goal.cost_limit is not None and cheapest_run is not None and (cheapest_run.cost or 0.0) > goal.cost_limit:
        parts.append(f"no measured run fits the {words.money(quote(goal, 'cost_limit', 'currency'))} budget: the "
                     f"cheapest, {nodes(quote(cheapest_run, 'nodes', 'nodes'))}{_on(cheapest_run.regime)}, costs "
                     f"{words.money(quote(cheapest_run, 'cost', 'currency'))}")
    best = goal.cheapest_meeting
    if best is not None:
        price = f" for {words.money(quote(best, 'cost', 'currency'))}" if best.cost is not None else ""
        beyond = _beyond_available(constraints, best.nodes)
        parts.append(f"the cheapest measured way to meet it is {nodes(quote(best, 'nodes', 'nodes'))}"
                     f"{_on(best.regime)}{beyond}: {duration(quote(best, 'time_s', 's'))}{price} per run")
    elif goal.fitted_meeting is not None:
        fit = goal.fitted_meeting
        price = f" for {words.money(quote(fit, 'cost', 'currency'))}" if fit.cost is not None else ""
        beyond = _beyond_available(constraints, fit.nodes)
        parts.append(f"no measured scale meets it; the USL fit says {nodes(quote(fit, 'nodes', 'nodes'))}"
                     f"{_on(fit.regime)} would{beyond}: {duration(quote(fit, 'time_s', 's'))}{price} per run (fitted, "
                     "not measured)")
    elif goal.nearest is not None and not parts:
        near = goal.nearest
        values = [f"takes {duration(quote(near, 'time_s', 's'))}"
                  + (f" ({margin(quote(near, 'time_ratio'))} the {_limit(goal)} limit)" if near.time_ratio else "")]
        if near.cost is not None:
            values.append(f"costs {words.money(quote(near, 'cost', 'currency'))}"
                          + (f" ({margin(quote(near, 'cost_ratio'))} the budget)" if near.cost_ratio else ""))
        parts.append(f"the measured point nearest the goal, {nodes(quote(near, 'nodes', 'nodes'))}{_on(near.regime)}, "
                     f"{' and '.join(values)}")
    return _sentences(parts)


def _beyond_available(constraints: Constraints | None, at: float) -> str:
    """", beyond the 32 nodes available" after a scale above them (docs/methods.md#constraints-applied-once)."""
    available = constraints.nodes_available if constraints is not None else None
    if available is None or at <= available:
        return ""
    return f", beyond the {nodes(quote(constraints, 'nodes_available', 'nodes'))} available"


def _sentences(parts: list[str]) -> str | None:
    """Clauses as sentences of their own, each capitalised and ended."""
    kept = [part for part in parts if part]
    return " ".join(sentence(part[:1].upper() + part[1:]) for part in kept) if kept else None


def _speedup_gap(goal: GoalResult, scaling: ScalingResult) -> str:
    """The time goal as a speedup: what it needs over the reference, the best measured, and what the fit allows."""
    needed, limit_s = goal.speedup_needed, goal.time_limit_s
    if needed is None or limit_s is None or needed <= 1:
        return ""
    best = max(scaling.rows, key=lambda r: r.speedup)
    text = (f"finishing in {_limit(goal)} needs a speedup of {number(quote(goal, 'speedup_needed'))} over "
            f"{nodes(quote(scaling, 'reference_nodes', 'nodes'))}; the best measured is "
            f"{number(quote(best, 'speedup'))} ({nodes(quote(best, 'nodes', 'nodes'))})")
    peak = _usl_peak_speedup(scaling)
    if peak is not None and scaling.usl and scaling.usl.peak_nodes and peak < needed:
        text += (f" and the USL fit peaks at {number(peak)} near {number(quote(scaling.usl, 'peak_nodes', 'nodes'))} "
                 "nodes: no scale of this design meets the deadline")
    return text


def _usl_peak_speedup(scaling: ScalingResult) -> float | None:
    usl = scaling.usl
    if usl is None or usl.peak_capacity is None:
        return None
    if scaling.form == "throughput":
        reference = scaling.rows[0].run.throughput
        return usl.peak_capacity / reference if reference else None
    peak: float = quote(usl, "peak_capacity")
    return peak


def _cheapest_check(checks: list[GoalCheck]) -> GoalCheck | None:
    viable = [c for c in checks if c.viable]
    if not viable:
        return None
    return first_min(viable, key=lambda c: c.cost if c.cost is not None else c.time_s)


def _training_optimum(project: Project, goal: GoalResult | None, scaling: ScalingResult | None,
                      cost: CostResult | None, prediction: PredictionResult | None, facts: OptimumFacts,
                      words: _Words, *, untaxed: bool = False, ways: Sequence[Candidate] = ()) -> Optimum:
    """The operating point the page's facts chose, in words."""
    basis, at = facts.basis, facts.nodes
    if basis == "model" and prediction is not None:
        return Optimum(prediction.p_star, "model", "Nothing is measured yet, so no operating point is evidenced; "
                       "the design's model gives one (Model).")
    if basis == "single-scale" and at is not None:
        return Optimum(at, "measured", f"Only {nodes(at)} {'was' if at == 1 else 'were'} measured: no optimum can "
                       "be told from one scale.")
    if scaling is None or at is None:
        return Optimum(None, None, "Nothing is measured yet: add scaling.runs to find the operating point.")
    measured = _measured_facts(scaling, cost, words, untaxed=untaxed)
    how = {"measured": "as measured", "usl": "by the USL fit", "model": "by the model"}.get(facts.beyond_source or "",
                                                                                          "")
    if facts.beyond_judged:  # not the smallest scale whose fitted time alone meets, which the gap may name
        how += " with its 90 % interval clear of every limit"
    beyond = f" within the nodes available ({nodes(_scale(facts.beyond, scaling, goal, ways))} meet it {how}, " \
        "beyond them)" if facts.beyond is not None else ""
    at = _scale(at, scaling, goal, ways)
    texts = {
        "cheapest-meeting": f"The evidence supports {nodes(at)}{_on(facts.regime)}, the cheapest measured point that "
                            f"meets the goal{_weak_runs(scaling, goal, at)}",
        "fitted-meeting": f"The evidence points to {nodes(at)}, the smallest scale the USL fit says meets the goal "
                          "(fitted, not measured)",
        "fewest-node-hours": f"The evidence supports {nodes(at)}, the measured scale that meets the time limit with "
                             "the fewest node-hours (the budget cannot be judged without prices)",
        "nearest": f"No measured point meets the goal{beyond}; the nearest is {nodes(at)}{_on(facts.regime)} (the "
                   "point whose largest excess over a limit is the smallest)",
        "cost-optimal": f"The evidence supports {nodes(at)}, the cost-optimal measured scale (the dominant metric is "
                        "cost)",
        "fastest": f"The evidence supports {nodes(at)}, the fastest measured scale",
    }
    source: OptimumSource = "usl" if basis == "fitted-meeting" else "measured"
    return Optimum(at, source, f"{texts.get(basis, texts['fastest'])}. {measured}")


def _scale(at: float, scaling: ScalingResult | None, goal: GoalResult | None,
           ways: Sequence[Candidate] = ()) -> float:
    """A node count the operating point names, quoted from its measured row (or the fit's meeting scale, or the way
    considered that names it)."""
    fit = goal.fitted_meeting if goal is not None else None
    if fit is not None and fit.nodes == at and not any(row.nodes == at for row in (scaling.rows if scaling else ())):
        quoted: float = quote(fit, "nodes", "nodes")
        return quoted
    return count_at([*(scaling.rows if scaling is not None else ()), *ways], at)


def _weak_runs(scaling: ScalingResult, goal: GoalResult | None, at: float) -> str:
    """Weak scaling: how a smaller scale does the goal's work (methods.md#weak-scaling-compares-equal-work), quoted
    from the goal's check of that scale (the number of runs is one of results.json's figures, as every figure on
    page 1 is)."""
    check = goal.cheapest_meeting if goal is not None else None
    if scaling.mode != "weak" or check is None or check.nodes != at or check.runs <= 1.0:
        return ""
    return (f" for the goal's work, in {quote(check, 'runs'):.3g} runs one after another (each does the shares of "
            f"{nodes(at)})")


def _measured_facts(scaling: ScalingResult, cost: CostResult | None, words: _Words, *, untaxed: bool) -> str:
    """The measured optima as the tables have them; with a failure tax (which the verdict's figures include),
    said to be before it, so that a reader does not hold the two against each other."""
    fastest = first_min(list(scaling.rows), key=lambda r: -r.speedup)
    parts = []
    if cost is not None and not cost.per_unit_of_work and scaling.mode != "weak":  # weak: each run's own work
        cheap = next(r for r in cost.rows if r.nodes == cost.cost_optimal_nodes)
        parts.append(f"cost-optimal {nodes(quote(cheap, 'nodes', 'nodes'))} "
                     f"({words.money(quote(cheap, 'cost', 'currency'))} per run on demand)")
    time = f", {duration(quote(fastest, 'time_s', 's'))}" if fastest.time_s and not scaling.per_unit_of_work else ""
    parts.append(f"fastest {nodes(quote(fastest, 'nodes', 'nodes'))} (speedup {number(quote(fastest, 'speedup'))}"
                 f"{time})")
    text = f"Measured{' (before the failure tax)' if untaxed else ''}: {listed(parts)}"
    usl = scaling.usl
    if usl is not None and usl.peak_nodes is not None:
        text += f"; the USL fit peaks at {number(quote(usl, 'peak_nodes', 'nodes'))} nodes"
        if usl.peak_nodes < fastest.nodes:
            text += ", below the fastest measured scale"
    elif usl is not None:
        text += f"; the USL fit has no peak (κ = {number(quote(usl, 'kappa'))})"
    return sentence(text)


# -------------------------------------------------------------------------------------------------------- serving
def _serving_verdict(serving: ServingResult | None, plan: int | None, state: VerdictState,
                     words: _Words) -> tuple[str, str | None]:
    """A service's verdict and gap, in words, for the state the page's facts hold."""
    if serving is None:
        return ("The serving goal is not judged: no load is stated (add project.goal.load, or "
                "baseline.serving.requests_per_second)."), None
    need = _need(serving)
    if not serving.at_plan or serving.plan_row is None:
        why = serving.note or ("the project plans no node count (add design.nodes)" if plan is None else
                               f"the planned {nodes(quote(serving, 'plan_nodes', 'nodes'))} were not measured")
        return sentence(f"The goal, {need}, is not judged at the plan: {why}"), \
            _serving_gap(serving, words) if serving.points else None
    fitted = " by the USL fit (fitted, not measured)" if serving.plan_row.capacity_source == "fitted" else ""
    check = _plan_check(serving)
    values = _serving_values(check, serving, words)
    where = f"at the planned {nodes(quote(serving, 'plan_nodes', 'nodes'))}{fitted}"
    if state == "met":
        return sentence(f"The goal is met {where}: {values}"), None
    if state == "missed":
        return sentence(f"The goal is not met {where}: {values}"), _serving_gap(serving, words)
    if serving.met_at_plan and fitted:
        return sentence(f"The goal would be met {where}: {values}"), None
    return sentence(f"The goal cannot be fully judged {where}: {values}"), None


def _need(serving: ServingResult) -> str:
    headroom = f" ({number(quote(serving, 'peak_load'))} at the peak plus " \
        f"{percent(quote(serving, 'headroom', 'fraction'), 2)} headroom)" if serving.headroom else ""
    return requests(quote(serving, "capacity_needed_rps"), serving.unit) + headroom + serving.within_words


def _plan_check(serving: ServingResult) -> ServingCheck:
    """The plan's check in its best regime: the cheapest that meets the goal, else the first stated (on-demand)."""
    meeting = [c for c in serving.at_plan if c.met]
    return first_min(meeting, key=lambda c: c.cost_per_hour or 0.0) if meeting else serving.at_plan[0]


def _serving_values(check: ServingCheck, serving: ServingResult, words: _Words) -> str:
    """What the plan serves, how fast and at what cost, each with its margin against the goal."""
    parts = []
    need = number(quote(serving, "capacity_needed_rps"))
    per_second = f"{plural(serving.unit)}/s"
    row = _row(serving, check.nodes)
    if check.capacity_rps is None:
        parts.append("their capacity is not known")
    elif row is not None and row.capacity_source == "records":
        parts.append(_within_objectives(check, row, serving, need, per_second))
    elif row is not None and row.records_unjudged:
        parts.append(f"their load tests completed {number(quote(check, 'capacity_rps'))} {per_second} against the "
                     f"{need} needed, yet none of their load points could be judged against the objectives from their "
                     "requests")
    elif check.meets_load is False:
        parts.append(f"they serve {number(quote(check, 'capacity_rps'))} of the {need} {per_second} needed "
                     f"({percent(1 - (quote(check, 'load_ratio') or 0.0), 2)} short)")
    else:
        parts.append(f"they serve {number(quote(check, 'capacity_rps'))} {per_second} against the {need} needed "
                     f"({percent((quote(check, 'load_ratio') or 1.0) - 1, 2)} to spare)")
    unknown = []
    for name, limit in serving.objectives:
        value, source = (latency_of(row, name), latency_source(row, name)) if row else (None, None)
        if value is None or row is None:
            unknown.append((OBJECTIVE_NAMES[name], _objective(serving, name)))
            continue
        how = "an interpolated" if source == "interpolated" else "a modelled" if source == "modelled" else "a"
        parts.append(f"at {how} {OBJECTIVE_NAMES[name]} of {_latency(row, name)} "
                     f"({margin(_ratio(check, name, value / limit))} the {_objective(serving, name)} objective)")
    if unknown:  # named, with the measurement that would decide it, never taken as met
        objectives = "the objective is" if len(unknown) == 1 else "the objectives are"
        parts.append(f"no {' or '.join(what for what, _ in unknown)} is known there ({objectives} "
                     f"{listed([limit for _, limit in unknown])}): a load test at "
                     f"{nodes(quote(check, 'nodes', 'nodes'))} that measures it would decide")
    if check.cost_per_hour is not None:
        budget = f" ({margin(quote(check, 'cost_ratio'))} the " \
            f"{words.money(quote(serving, 'cost_limit_per_hour', 'currency'))} budget)" \
            if serving.cost_limit_per_hour is not None else ""
        parts.append(f"for {words.hourly(quote(check, 'cost_per_hour', 'currency'))}{_on(check.regime)}{budget}")
    elif serving.cost_limit_per_hour is not None:
        parts.append(f"the {words.hourly(quote(serving, 'cost_limit_per_hour', 'currency'))} budget is not judged: "
                     "the project gives no prices (add pricing.node_hour)")
    return ", ".join(parts)


def _within_objectives(check: ServingCheck, row: ServingRow, serving: ServingResult, need: str,
                       per_second: str) -> str:
    """The most a scale serves within every objective, read from its load tests' requests: a value with its 90 %
    interval, or a bound at the load measured (methods.md#a-service-judged-from-its-requests)."""
    value = number(quote(check, "capacity_rps"))
    if row.capacity_bound == "above":
        served = f"above {value} {per_second} (the largest load measured)"
    elif row.capacity_bound == "below":
        served = f"below {value} {per_second} (the smallest load measured)"
    else:
        ends = row.capacity_ci or (None, None)
        bounds = f" [{number(quote(ends, 0))}, {number(quote(ends, 1))}]" if None not in ends else ""
        served = f"{value} {per_second}{bounds}"
    share = f" for {target_share(quote(serving.goodput, 'target', 'fraction'))} of requests" if serving.goodput \
        else ""
    if check.meets_load is True:
        return f"they serve {served} within every objective{share}, against the {need} needed"
    if check.meets_load is False:
        return f"they serve {served} within every objective{share}, short of the {need} needed{_binding(serving)}"
    return (f"their most within every objective{share} reads {served}, too uncertain from the requests measured to "
            f"hold against the {need} needed{_binding(serving)}")


def _binding(serving: ServingResult) -> str:
    """Where the load is nearest the need at the plan, the share that met every objective and the one that binds
    (the objective met by the fewest requests alone)."""
    at_plan = serving.goodput.at_plan if serving.goodput else None
    if at_plan is None or at_plan.attainment is None or at_plan.attainment_ci is None or at_plan.binding is None:
        return ""
    ends = at_plan.attainment_ci
    return (f"; where the load is nearest the need, {percent(quote(at_plan, 'attainment', 'fraction'))} "
            f"[{percent(quote(ends, 0, 'fraction'))}, {percent(quote(ends, 1, 'fraction'))}] of requests met every "
            f"objective, {at_plan.binding.upper()} the one that binds")


def _latency(row: ServingRow, name: ObjectiveName) -> str:
    """An objective's latency at a scale, quoted from its row."""
    return duration(quote(row, ROW_FIELDS[name][0], "s"))


def _objective(serving: ServingResult, name: ObjectiveName) -> str:
    """An objective's limit, quoted from the serving section."""
    return duration(quote(serving.limits, f"{ROW_FIELDS[name][0]}", "s"))


def _ratio(check: ServingCheck | None, name: ObjectiveName, value: float) -> float:
    """A latency over its objective, quoted from the check's ratios (`value` where none holds it)."""
    ratios = check.ratios if check is not None else None
    return quote(ratios, name) if ratios is not None and getattr(ratios, name) is not None else value


def _row(serving: ServingResult, nodes_: float) -> ServingRow | None:
    return next((r for r in serving.rows if r.nodes == nodes_), None)


def _serving_gap(serving: ServingResult, words: _Words) -> str | None:
    parts = []
    best = serving.cheapest_meeting
    if best is not None:
        p99 = f" at a p99 of {duration(quote(best, 'p99_s', 's'))}" if best.p99_s is not None else ""
        cost = f" for {words.hourly(quote(best, 'cost_per_hour', 'currency'))}" if best.cost_per_hour is not None \
            else ""
        parts.append(f"the cheapest measured way to meet it is {nodes(quote(best, 'nodes', 'nodes'))}"
                     f"{_on(best.regime)}: {requests(quote(best, 'capacity_rps'), serving.unit)}{p99}{cost}")
    elif serving.nodes_to_serve is not None and serving.nodes_to_serve_source == "fitted":
        row = _row(serving, serving.nodes_to_serve)
        capacity = f" ({requests(quote(row, 'capacity_rps'), serving.unit)}, fitted)" if row and row.capacity_rps \
            else ""
        unmeasured = "; capacity only: its latency is not measured there" if serving.capacity_only else ""
        parts.append(f"no measured scale serves it; the USL fit puts the capacity needed at "
                     f"{nodes(quote(serving, 'nodes_to_serve', 'nodes'))}{capacity}{unmeasured}")
    elif serving.cheapest_serving is not None:
        serve = serving.cheapest_serving
        parts.append(f"{nodes(quote(serve, 'nodes', 'nodes'))}{_on(serve.regime)} serve the load within the latency "
                     f"objective but cost {words.hourly(quote(serve, 'cost_per_hour', 'currency'))}, "
                     f"{margin(quote(serve, 'cost_ratio'))} the budget")
    elif serving.limited_by == "latency":
        missed = _objectives_missed(serving)
        if missed:
            parts.append("no measured scale serves the load within every latency objective: " + "; ".join(missed))
    elif serving.limited_by == "capacity":
        largest = max((r for r in serving.rows if r.capacity_rps), key=lambda r: r.capacity_rps or 0.0,
                      default=None)
        if largest is not None:
            parts.append(f"no scale serves the load: the most measured is "
                         f"{requests(quote(largest, 'capacity_rps'), serving.unit)} at "
                         f"{nodes(quote(largest, 'nodes', 'nodes'))}")
        if serving.nodes_lower_bound:
            parts.append(f"even at the best capacity per node measured "
                         f"({number(quote(serving, 'best_per_node_rps'))} {plural(serving.unit)}/s per node at "
                         f"{nodes(quote(serving, 'best_per_node_at', 'nodes'))}) it needs at least "
                         f"{nodes(quote(serving, 'nodes_lower_bound', 'nodes'))}")
    return _sentences(parts)


def _objectives_missed(serving: ServingResult) -> list[str]:
    """Each stated objective no measured scale meets, with the lowest value measured and where: "the lowest p99
    time per output token measured is 100 ms at 2 nodes (the 80 ms objective)"."""
    out = []
    for name, limit in serving.objectives:
        known = [(value, row.nodes) for row in serving.rows if row.measured
                 and (value := latency_of(row, name)) is not None]
        if known and min(value for value, _ in known) > limit:
            value, at = min(known)
            lowest = next(row for row in serving.rows if row.nodes == at)
            out.append(f"the lowest {OBJECTIVE_NAMES[name]} measured is {_latency(lowest, name)} at "
                       f"{nodes(quote(lowest, 'nodes', 'nodes'))} (the {_objective(serving, name)} objective)")
    serving_rows = [row for row in serving.rows if row.meets_load and row.meets_latency is False
                    and row.measured]
    if not out and serving_rows:  # each objective is met somewhere, never with the load: say where the load is served
        row = serving_rows[0]
        point = next((p for p in serving.points if p.nodes == row.nodes), None)
        over = [f"a {OBJECTIVE_NAMES[name]} of {_latency(row, name)} ({margin(_ratio(point, name, value / limit))} "
                f"the {_objective(serving, name)} objective)" for name, limit in serving.objectives
                if (value := latency_of(row, name)) is not None and value > limit]
        out.append(f"{nodes(quote(row, 'nodes', 'nodes'))} serve the load at {listed(over)}")
    return out


def _serving_optimum(serving: ServingResult | None, facts: OptimumFacts, words: _Words) -> Optimum:
    if serving is None or not serving.rows:
        unit = serving.unit if serving else "request"
        return Optimum(None, None, f"No load test is measured: add runs in throughput form ({plural(unit)}/s at each "
                       "node count, with the latencies the goal states).")
    best = next((p for p in serving.points if p.nodes == facts.nodes and p.regime == facts.regime and p.met), None) \
        if facts.basis == "cheapest-meeting" else None
    if best is not None:
        at = nodes(quote(best, "nodes", "nodes"))
        return Optimum(best.nodes, "measured", f"The evidence supports {at}{_on(best.regime)}, the cheapest "
                       f"measured scale that meets the goal ({words.hourly(quote(best, 'cost_per_hour', 'currency'))})."
                       if best.cost_per_hour is not None else
                       f"The evidence supports {at}, the smallest measured scale that meets the goal.")
    if serving.nodes_to_serve is not None and facts.nodes == serving.nodes_to_serve:
        source: OptimumSource = "measured" if serving.nodes_to_serve_source == "measured" else "usl"
        if serving.capacity_only:
            return Optimum(serving.nodes_to_serve, source, f"The USL fit puts the capacity needed at "
                           f"{nodes(quote(serving, 'nodes_to_serve', 'nodes'))} (capacity only, latency unmeasured "
                           "there): no measured scale serves the load yet.")
        what = "the smallest measured scale that serves the load" if source == "measured" else \
            "the smallest scale the USL fit says serves the load (fitted, not measured)"
        return Optimum(serving.nodes_to_serve, source, f"The evidence supports "
                       f"{nodes(quote(serving, 'nodes_to_serve', 'nodes'))}, "
                       f"{what}.")
    limit = {"capacity": "no scale reaches the capacity needed",
             "latency": "no scale that serves the load meets every latency objective"}
    return Optimum(None, None, sentence(f"No scale the evidence covers serves the goal: "
                                        f"{limit.get(serving.limited_by or '', 'nothing serves it')}"))


# ---------------------------------------------------------------------------------------------- model, evidence
def _knee(scaling: ScalingResult | None) -> str | None:
    """Where the measured curve bends and what lost the most beyond it; without a knee, no cause is named."""
    if scaling is None or scaling.single_scale:
        return None
    peak = next(r for r in scaling.rows if r.nodes == scaling.peak_nodes)
    if scaling.knee_nodes is None:
        over = f" over {nodes(scaling.reference_nodes)}" if scaling.reference_nodes != 1 else ""
        return sentence(f"No knee in the measured range: the speedup{over} reaches {number(peak.speedup)} at "
                        f"{nodes(peak.nodes)}")
    uncertain = " (uncertain: its interval overlaps a neighbour's)" if scaling.knee_uncertain else ""
    text = f"The measured speedup bends at {nodes(scaling.knee_nodes)}{uncertain}"
    if scaling.knee_cause:
        how = f", inferred from the {scaling.karp_flatt_trend} Karp–Flatt trend" if scaling.knee_cause_inferred \
            else ""
        text += f"; the largest loss beyond it is {scaling.knee_cause}{how} (remedy: {scaling.remedy})"
    return sentence(text)


def _model(prediction: PredictionResult | None, scaling: ScalingResult | None, codes: set[str],
           ratio: float | None) -> str | None:
    if prediction is None:
        return None
    refuted = [code for code in MODEL_REFUTED if code in codes]
    if refuted:
        why = []
        if ratio is not None:
            # κ, the coordination cost that grows with p(p − 1), said as what it is
            why.append(f"communication grows {times(ratio)} faster than it predicts")
        if scaling is not None and scaling.comm_fit_implied_p_star is not None:
            model = "ring" if prediction.pattern.ring_like else prediction.pattern.label
            why.append(f"a {model} model fitted to the measurements puts p* at {scaling.comm_fit_implied_p_star:,}")
        reason = f" ({'; '.join(why)})" if why else f" (see {listed(refuted)})"
        return sentence(f"The design's α–β model does not describe this system{reason}: its optimum p* = "
                        f"{prediction.p_star:,} is not a guide")
    tail = "" if scaling is not None else "; nothing is measured to check it against"
    capped = " or more (the range ends there)" if prediction.capped else ""
    pattern = "" if prediction.pattern.ring_like else f" ({prediction.pattern.label})"
    return sentence(f"The design's α–β model{pattern} puts the optimum at p* = {prediction.p_star:,}{capped}, with a "
                    f"speedup of {number(prediction.speedup_at_p_star)}: the model's, not a measurement{tail}"
                    f"{_one_count(prediction)}")


WORTH_A_NODE = 0.5  # folds of speedup per extra node past p_dom that make p* the count recommended (half of ideal)


def _one_count(prediction: PredictionResult) -> str:
    """With both p* and p_dom in range, one count is recommended, and why."""
    dom, star = prediction.p_comm_dominated, prediction.p_star
    if dom is None or dom >= star or prediction.speedup_at_p_comm_dominated is None:
        return ""
    gain = prediction.speedup_at_p_star - prediction.speedup_at_p_comm_dominated
    extra = star - dom
    pick = star if gain / extra >= WORTH_A_NODE else dom
    why = "each extra node still buys at least half a fold" if pick == star else \
        "the extra folds do not pay for the nodes"
    return (f"; communication dominates from {dom:,} nodes, and p* = {star:,} buys {number(gain)} more folds for "
            f"{extra:,} more nodes: the model recommends {nodes(pick)} ({why})")


def _evidence(scaling: ScalingResult | None, findings: tuple[Finding, ...], plan: int | None,
              optimum: float | None, serving: ServingResult | None = None) -> str | None:
    if scaling is None:
        return None
    parts = []  # one measured scale is said by the operating point
    records = serving.records if serving is not None else None
    if records is not None and records.points:
        judged = sum(1 for point in records.points if point.attainment is not None)
        valid = sum(1 for point in records.points if point.valid)
        requests_sent = sum(point.sent for point in records.points)
        parts.append(f"the service is judged from the {requests_sent:,} requests of "
                     f"{counted(len(records.points), 'load point')} ({valid} valid, {judged} judged against the "
                     "objectives): each share carries a 90 % "
                     "block-bootstrap interval, and each scale's max load within the objectives one from refitting "
                     "its resamples")
    elif scaling.repeated:
        repeated = sum(1 for r in scaling.rows if r.repeats > 1)
        parts.append(f"{repeated} of {len(scaling.rows)} scales were measured more than once; their numbers are "
                     "medians with 95 % bootstrap intervals")
    else:
        parts.append("each scale was measured once, so no number carries an interval (repeated measurements, with "
                     "reportgen measure --repeat, give them one)")
    flagged = {r.nodes for r in scaling.implausible} | {o.nodes for o in scaling.outliers} | \
        {r.nodes for r in scaling.outlier_repeats}
    leaning_on = sorted(n for n in {plan, optimum} & flagged if n is not None)
    if leaning_on:
        leaning = listed([nodes(n) for n in leaning_on])
        parts.append(f"the verdict rests on the run at {leaning}, which a finding below flags")
    if any(f.code == "noisy" for f in findings):
        parts.append("some scales are noisy (see the findings)")
    return _sentences(parts)
