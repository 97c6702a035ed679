"""The pure analysis core: Project → Analysis. No I/O, no plotting, no templates.

The carbon intensity is the one outside fact an analysis needs; the pipeline looks it up (reportgen.project.carbon) and
passes it in, so that everything here stays a pure function of its arguments.

This module is the registry of the analyses. The core's are declared here: each a field of `Analysis`, the `Step`
that fills it (CORE_STEPS, in the order they run) and the section of results.json that holds it (CORE_SECTIONS, in
the order of the document). Every other analysis declares itself in its own module (`ANALYSIS = Declared(...)`,
reportgen.analysis.declared), and is listed here by name (DECLARED): its result is `Analysis.declared[<key>]`, its
steps run after the core's, its section comes before the findings. REGISTRY and RESULTS_SECTIONS are the two
together. The analyses live in subpackages, one per layer, each importing only those below it
(docs/architecture.md#the-analysis-layers); docs/architecture.md has the recipe for adding one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, get_type_hints

import numpy as np

from reportgen.analysis.declared import Declared, Inputs, ResultsSection, Step
from reportgen.analysis.findings import Finding, ordered
from reportgen.analysis.measured.accuracy import Grades, Predicted, TableFacts, grade, table_facts, usable
from reportgen.analysis.measured.confidence import ConfidenceResult, NextRun, analyze_confidence
from reportgen.analysis.measured.diagnosis import DiagnosisResult, diagnose, measured_reference
from reportgen.analysis.measured.load_point import judgement_of
from reportgen.analysis.measured.model_check import ModelCheckResult, check_model
from reportgen.analysis.measured.provenance import ProvenanceResult, trace_provenance
from reportgen.analysis.measured.reconcile import Reconciliation, reconcile
from reportgen.analysis.measured.scaling import ScalingResult, TimeChange, analyze_scaling
from reportgen.analysis.measured.utilization import with_utilization
from reportgen.analysis.model.layout import LAYOUT_DOC, LayoutResult, analyze_layout
from reportgen.analysis.model.patterns import resolve_pattern
from reportgen.analysis.model.prediction import PredictionResult, given_alpha, predict
from reportgen.analysis.model.reliability import ReliabilityResult, analyze_reliability, default_scales
from reportgen.analysis.money.cost import CostResult, analyze_cost
from reportgen.analysis.money.energy import EnergyResult, analyze_energy
from reportgen.analysis.money.energy_delay import ANALYSIS as ENERGY_DELAY
from reportgen.analysis.page.lint import crowded_runs, lint
from reportgen.analysis.page.page_one import PageInputs, PageOne, build_page_one, needs_levers, page_one_findings
from reportgen.analysis.page.prose.actions import Evidence
from reportgen.analysis.page.prose.plan import plan_sentence, why_text
from reportgen.analysis.page.prose.summary import SummaryResult, summarize
from reportgen.analysis.plan.plan_ranking import rank_plan
from reportgen.analysis.plan.plan_search import PLAN_SEARCH_DOC, PlanSearchResult, search_plan
from reportgen.analysis.verdict.checklist import ChecklistResult, build_checklist
from reportgen.analysis.verdict.decisions import DecisionResult, DecisionsResult, TradeOff, decide
from reportgen.analysis.verdict.goal import GoalDocument, GoalResult, check_goal
from reportgen.analysis.verdict.goodput import requests_runs
from reportgen.analysis.verdict.lever_records import Levers
from reportgen.analysis.verdict.levers import Judge, LeverEvidence, Outcome, WhatIf, find_levers
from reportgen.analysis.verdict.peak import PastPeak, plan_past_peak
from reportgen.analysis.verdict.serving import ServingResult, analyze_serving
from reportgen.project.accuracy_table import AccuracyTable, OwnEvidence, shipped_table
from reportgen.project.carbon import Intensity
from reportgen.project.load_tests import RecordedPoint
from reportgen.project.model import PlanSearch, Project, capacity_runs
from reportgen.project.records import RowSource


@dataclass(frozen=True)
class Analysis:
    """Every analysis of one project; a section whose inputs are absent is None."""

    diagnosis: DiagnosisResult | None = None
    checklist: ChecklistResult | None = None
    prediction: PredictionResult | None = None
    scaling: ScalingResult | None = None
    cost: CostResult | None = None
    energy: EnergyResult | None = None
    reliability: ReliabilityResult | None = None
    decisions: DecisionsResult | None = None
    goal: GoalResult | None = None
    provenance: ProvenanceResult | None = None
    lint: tuple[Finding, ...] = ()  # the lint's findings, which page 1 reads (methods.md#findings)
    findings: tuple[Finding, ...] = ()  # the lint's and page 1's: every finding the report lists
    # a serving project's load, latency and hourly cost (methods.md#4x-serving-projects)
    serving: ServingResult | None = None
    summary: SummaryResult | None = None  # page 1 (methods.md#page-1-and-the-next-action)
    # page 1's facts, computed once after every analysis: the summary, the diff and the history write from them
    # (methods.md#page-1-from-one-set-of-facts)
    page_one: PageOne | None = None
    model_check: ModelCheckResult | None = None  # the α–β model against the measured runs, scale by scale
    layout: LayoutResult | None = None  # design.parallelism: memory per device and the step's terms
    past_peak: PastPeak | None = None  # the plan past the measured peak, for the lint and page 1
    # the measurements that cannot be right, before anything is judged, with their findings and the quantities the
    # choices leave out (methods.md#evidence-reconciled-before-it-is-judged)
    reconciliation: Reconciliation = field(default_factory=Reconciliation)
    # the calibration table every predicted number's accuracy was read from
    # (methods.md#how-accurate-each-prediction-is)
    calibration: TableFacts | None = None
    # the other analyses' predicted numbers graded on published curves (written beside each as its section is)
    grades: Grades | None = None
    # few runs, stated confidence (methods.md#few-runs-stated-confidence): intervals, the plan's estimate, the planner
    confidence: ConfidenceResult | None = None
    next_runs: tuple[NextRun, ...] | None = None  # the measurement planner's ranked runs (results.json next_runs)
    # the values at which the verdict at the plan flips (methods.md#the-goals-levers), held in the goal section
    levers: Levers = field(default_factory=Levers)
    # the model's shape: its FLOPs and the declared layout's memory by activation mode
    # (methods.md#activation-memory-from-the-models-shape)
    plan_search: PlanSearchResult | None = None
    # the results of the analyses declared in their own modules, by key (read one typed: `Declared.of`)
    declared: Mapping[str, object] = field(default_factory=dict)


def _reconciliation(i: Inputs, _: Analysis) -> Reconciliation:
    return reconcile(i.project, i.sources)


def _scaling(i: Inputs, a: Analysis) -> ScalingResult | None:
    """The measured scaling, each scale with its MFU, HFU and achieved FLOP/s per device
    (methods.md#flops-mfu-and-hfu)."""
    project = i.project
    measured = analyze_scaling(project.scaling, max_nodes=i.max_nodes, serving=project.serving,
                               cores=project.hardware.cores if project.hardware else None,
                               workload=project.project.workload, pattern=resolve_pattern(project).pattern,
                               excluded=a.reconciliation.excluded())
    return with_utilization(project, measured)


def _plan_search(i: Inputs, a: Analysis) -> PlanSearchResult | None:
    """Every layout of the plan's devices, ranked at the η the runs calibrate (methods.md#the-plan-search)."""
    searched = search_plan(i.project)
    if searched is None:
        return None
    ranked = rank_plan(i.project, a.scaling, searched)
    margin = i.project.plan_search.margin if i.project.plan_search else PlanSearch().margin
    best = tuple(replace(row, why_text=why_text(row, ranked.best[0])) for row in ranked.best)
    ran = a.scaling.at_or_below(i.planned) if a.scaling else ()  # as memory-model-refuted counts them
    return replace(ranked, best=best, sentence=plan_sentence(ranked, i.project.currency, margin, ran))


def _layout(i: Inputs, a: Analysis) -> LayoutResult | None:
    spec = i.project.prediction
    return analyze_layout(i.project, t_comp=spec.t_comp if spec else None, alpha=_latency(i.project, a.prediction),
                          max_nodes=i.max_nodes)


def _diagnosis(i: Inputs, a: Analysis) -> DiagnosisResult | None:
    first = a.scaling.rows[0] if a.scaling is not None and a.scaling.rows else None
    measured_mfu = (first.nodes, first.mfu_6p) if first is not None and first.mfu_6p is not None else None
    return diagnose(i.project, reference=measured_reference(a.scaling, i.planned),
                    layout_fits=a.layout.fits if a.layout else None, measured_mfu=measured_mfu)


def _reliability(i: Inputs, a: Analysis) -> ReliabilityResult | None:
    """Per scale, and at the plan in each price regime the project states (read from its pricing here: the cost
    step runs later), with the plan's measured time per run for the saving at Daly's interval
    (methods.md#spot-as-failures)."""
    scaling = a.scaling
    measured_times = {r.nodes: r.time_s for r in scaling.rows if r.time_s is not None} if scaling else {}
    per_run = scaling is not None and not scaling.per_unit_of_work  # a time per unit of work is no run's time
    return analyze_reliability(i.project.reliability,
                               [r.nodes for r in scaling.rows] if scaling else default_scales(i.planned),
                               planned_nodes=i.planned, measured_times=measured_times, pricing=i.project.pricing,
                               plan_time_s=measured_times.get(i.planned) if per_run and i.planned else None)


def _energy(i: Inputs, a: Analysis) -> EnergyResult | None:
    pricing = i.project.pricing
    return analyze_energy(a.scaling, i.project.energy, intensity_g_per_kwh=i.g_per_kwh,
                          source=i.intensity.source if i.intensity else None,
                          runs_per_month=pricing.runs_per_month if pricing else None)


def _goal(i: Inputs, a: Analysis) -> GoalResult | None:
    project = i.project
    if project.serving:  # a service's goal is held in the serving analysis
        return None
    return check_goal(project.project.goal, plan_nodes=i.planned, work_plan=i.work_plan, scaling=a.scaling,
                      cost=a.cost, energy=a.energy,
                      runs_per_month=project.pricing.runs_per_month if project.pricing else None,
                      max_nodes=i.max_nodes, tax=i.tax,
                      estimate=a.confidence.plan_estimate if a.confidence is not None else None,
                      # the plan's repeats and the resamples: a row's runs_over and p_miss
                      # (methods.md#few-runs-stated-confidence)
                      runs=project.scaling, resampled=a.confidence.resampled_at if a.confidence is not None else None)


def _lint(i: Inputs, a: Analysis) -> tuple[Finding, ...]:
    return ordered(lint(i.project, diagnosis=a.diagnosis, prediction=a.prediction, scaling=a.scaling,
                        checklist=a.checklist, reliability=a.reliability, goal=a.goal, serving=a.serving,
                        model_check=a.model_check, past_peak=a.past_peak, layout=a.layout,
                        reconciliation=a.reconciliation, cost=a.cost, plan_search=a.plan_search,
                        accuracy_table=usable(i.accuracy)))


def _evidence(i: Inputs, a: Analysis) -> Evidence:
    """What page 1's facts and their words read of the analyses."""
    project = i.project
    load_tests = tuple((scale, code) for scale, counts in a.reconciliation.load_tests
                       for code, _ in counts.problems())
    return Evidence(a.diagnosis, a.prediction, a.scaling, a.goal, a.serving, a.reliability, i.planned,
                    a.past_peak, project.currency, _crowded(project), a.next_runs or (), a.levers,
                    _contended(project), a.plan_search, load_tests)


def _page_one(i: Inputs, a: Analysis) -> PageOne:
    """Page 1's facts. Where the levers step was skipped (a history's revision), the lever search runs here when,
    and only when, page 1 needs it, so that a revision shows the action its build shows
    (methods.md#a-projects-history)."""
    def page(analysis: Analysis) -> PageOne:
        return build_page_one(PageInputs(i.project, _evidence(i, analysis), analysis.lint, analysis.cost,
                                         analysis.reconciliation, analysis.next_runs or (),
                                         analysis.confidence.estimate_at if analysis.confidence else None))

    facts = page(a)
    if not a.levers.searched and needs_levers(facts, a.lint):
        facts = page(replace(a, levers=_levers(i, a)))
    return facts


def _findings(i: Inputs, a: Analysis) -> tuple[Finding, ...]:
    """The lint's findings and page 1's: the next action's code is always a finding's (one the lint's rules did not
    raise is raised here, from the facts that chose it)."""
    return ordered([*a.lint, *page_one_findings(a.page_one, a.lint)]) if a.page_one else a.lint


def _summary(i: Inputs, a: Analysis) -> SummaryResult | None:
    if a.page_one is None:
        return None
    return summarize(i.project, a.page_one, scaling=a.scaling, cost=a.cost, prediction=a.prediction, goal=a.goal,
                     serving=a.serving, findings=a.findings, evidence=_evidence(i, a), model_check=a.model_check,
                     layout=a.layout)


def _checklist(i: Inputs, a: Analysis) -> ChecklistResult | None:
    return build_checklist(i.project, a.diagnosis, a.prediction, a.reliability)


def _serving(i: Inputs, a: Analysis) -> ServingResult | None:
    return analyze_serving(i.project, a.scaling, intensity_g_per_kwh=i.g_per_kwh, max_nodes=i.max_nodes,
                           recorded=i.recorded)


def _decisions(i: Inputs, a: Analysis) -> DecisionsResult | None:
    sure = a.confidence
    return decide(i.project.decisions, a.scaling, a.cost, a.energy, goal=i.project.project.goal, serving=a.serving,
                  tax=i.tax, plan=i.planned, ratio_at=sure.ratio_at if sure is not None and sure.stated else None)


def _confidence(i: Inputs, a: Analysis) -> ConfidenceResult | None:
    project, prediction = i.project, a.prediction
    goal = project.project.goal
    pricing = project.pricing
    return analyze_confidence(project.scaling, a.scaling, plan=i.planned,
                              price_per_node_hour=pricing.node_hour if pricing else None,
                              time_limit_s=goal.time_per_run if goal else None,
                              cost_limit=goal.cost_per_run if goal else None,
                              model_speedup=(lambda p: prediction.at(int(p)).speedup) if prediction else None,
                              max_nodes=i.max_nodes, accuracy=i.accuracy, own=i.own)


def _grades(i: Inputs, a: Analysis) -> Grades | None:
    """The other analyses' predicted numbers graded at their extrapolation
    (methods.md#how-accurate-each-prediction-is)."""
    prediction, scaling, layout, search, serving = a.prediction, a.scaling, a.layout, a.plan_search, a.serving
    largest = max((row.nodes for row in scaling.rows), default=None) if scaling is not None else None
    predicted = Predicted(
        tuple(row.nodes for row in prediction.rows) if prediction else (),
        prediction.p_star if prediction else None, prediction.p_comm_dominated if prediction else None,
        i.planned if layout is not None and layout.step is not None else None,
        search.nodes if search is not None and search.best else None,
        tuple(row.nodes for row in serving.rows if row.capacity_source == "fitted") if serving else ())
    return grade(i.accuracy, predicted, largest, own=i.own,
                 batch_changes=bool(i.project.scaling and i.project.scaling.batch_changes))


def _next_runs(i: Inputs, a: Analysis) -> tuple[NextRun, ...] | None:
    """The planner's runs, then the requests that would decide a service's load points."""
    serving = a.serving
    pricing = i.project.pricing
    requests = requests_runs(serving.records_judged, judgement_of(i.project.project.goal), i.planned,
                             pricing.node_hour if pricing else None) if serving is not None else ()
    planned = a.confidence.next_runs if a.confidence is not None else None
    return (*(planned or ()), *requests) if planned or requests else planned


def judge_of(i: Inputs, a: Analysis) -> Judge:
    """The verdict at the plan under a lever's what-if, as the cost, goal and serving steps themselves recompute it
    (methods.md#the-goals-levers)."""
    serving = i.project.serving

    def judge(what: WhatIf) -> Outcome:
        # the plan moved is judged on the goal this project states: in weak scaling, the declared plan's shares stay
        # the goal's work, so a smaller scale does it in several runs (methods.md#weak-scaling-compares-equal-work)
        inputs = replace(i, project=what.project, goal_shares=i.work_plan)
        changed = a
        if a.scaling is not None and not serving:  # the verdict at the plan reads its own row, and the fits
            changed = replace(a, scaling=a.scaling.narrowed(inputs.planned))
        if inputs.planned != i.planned and a.confidence is not None:  # another plan: its own estimate
            changed = replace(changed, confidence=replace(a.confidence, plan_estimate=a.confidence.estimate_at(
                inputs.planned)))
        if what.times is not None and changed.scaling is not None:
            changed = replace(changed, scaling=changed.scaling.with_times(what.times),
                              confidence=_estimate_with(changed.confidence, what.times))
        if serving:
            changed = replace(changed, serving=_serving(inputs, changed))
        else:
            changed = replace(changed, cost=_cost(inputs, changed))
            changed = replace(changed, goal=_goal(inputs, changed))
        result = changed.serving if changed.serving is not None else changed.goal  # its levers are not read here
        if result is None:
            return Outcome(None, None)
        return Outcome(_goal_document(result).met_at_plan, result.plan_excess())

    return judge


def _levers(i: Inputs, a: Analysis) -> Levers:
    """Each lever searched on the verdict as the report's own steps recompute it."""
    if (a.goal is None and a.serving is None) or i.planned is None:
        return Levers(searched=True)
    project = i.project
    spec = project.prediction
    alpha = _latency(project, a.prediction)

    def layout_fits(changed: Project) -> bool | None:
        layout = analyze_layout(changed, t_comp=spec.t_comp if spec else None, alpha=alpha, max_nodes=i.max_nodes)
        return layout.fits if layout is not None else None

    return find_levers(LeverEvidence(project, judge_of(i, a), a.scaling, a.prediction, a.serving,
                                     layout_fits if a.layout is not None else None))


def _estimate_with(confidence: ConfidenceResult | None, change: TimeChange) -> ConfidenceResult | None:
    """The plan's estimate, its interval and the model's figure under a lever's change of the times."""
    estimate = confidence.plan_estimate if confidence is not None else None
    if confidence is None or estimate is None:
        return confidence
    figures = [estimate.time_s, estimate.low_s, estimate.high_s, estimate.model_time_s or estimate.time_s]
    time_s, low, high, model = change(np.full(4, float(estimate.nodes)), np.array(figures)).tolist()
    return replace(confidence, plan_estimate=replace(
        estimate, time_s=time_s, low_s=low, high_s=high,
        model_time_s=None if estimate.model_time_s is None else model))


def _model_check(_: Inputs, a: Analysis) -> ModelCheckResult | None:
    return check_model(a.prediction, a.scaling, a.layout)


def _past_peak(i: Inputs, a: Analysis) -> PastPeak | None:
    return plan_past_peak(a.scaling, a.cost, i.planned)


def _cost(i: Inputs, a: Analysis) -> CostResult | None:
    return analyze_cost(a.scaling, i.project.pricing, i.project.reliability)


def _prediction(i: Inputs, a: Analysis) -> PredictionResult | None:
    return predict(i.project, implausible=a.reconciliation.implausible_collectives)


def _provenance(i: Inputs, a: Analysis) -> ProvenanceResult | None:
    return trace_provenance(a.scaling, i.sources)


# The core's analyses in the order they run; each reads only what an earlier one filled (tests/test_registry.py)
CORE_STEPS: tuple[Step[Analysis], ...] = (
    Step("reconciliation", (), _reconciliation),
    Step("calibration", (), lambda i, _: table_facts(i.accuracy, i.own)),
    Step("scaling", ("reconciliation",), _scaling),
    Step("plan_search", ("scaling",), _plan_search),
    Step("prediction", ("reconciliation",), _prediction),
    Step("layout", ("prediction",), _layout),
    Step("diagnosis", ("scaling", "layout"), _diagnosis),
    Step("reliability", ("scaling",), _reliability),
    Step("checklist", ("diagnosis", "prediction", "reliability"), _checklist),
    Step("cost", ("scaling",), _cost),
    Step("energy", ("scaling",), _energy),
    Step("serving", ("scaling",), _serving),
    Step("confidence", ("scaling", "prediction"), _confidence),
    Step("next_runs", ("confidence", "serving"), _next_runs),
    Step("grades", ("scaling", "prediction", "layout", "plan_search", "serving"), _grades),
    Step("decisions", ("scaling", "cost", "energy", "serving", "confidence"), _decisions),
    Step("goal", ("scaling", "cost", "energy", "confidence"), _goal),
    Step("levers", ("goal", "serving", "scaling", "prediction", "cost", "confidence", "layout"), _levers),
    Step("model_check", ("prediction", "scaling", "layout"), _model_check),
    Step("past_peak", ("scaling", "cost"), _past_peak),
    Step("lint", ("diagnosis", "prediction", "scaling", "checklist", "reliability", "goal", "serving",
                  "model_check", "past_peak", "layout", "reconciliation", "cost", "plan_search"), _lint),
    Step("page_one", ("scaling", "cost", "prediction", "goal", "serving", "lint", "diagnosis", "reliability",
                      "past_peak", "model_check", "layout", "next_runs", "levers", "plan_search", "reconciliation"),
         _page_one),
    Step("findings", ("lint", "page_one"), _findings),
    Step("summary", ("page_one", "scaling", "cost", "prediction", "goal", "serving", "findings", "diagnosis",
                     "reliability", "past_peak", "model_check", "layout", "next_runs", "levers", "plan_search",
                     "reconciliation"), _summary),
    Step("provenance", ("scaling",), _provenance),
)


def _goal_of(analysis: Analysis) -> GoalResult | ServingResult | None:
    """A serving project's goal is held against its load and latency, in the serving analysis
    (methods.md#4x-serving-projects); results.json's goal section holds it with the goal's levers."""
    serving = _serving_as_written(analysis)
    return serving if serving is not None else _goal_as_written(analysis)


# What results.json holds under a section whose result carries another analysis's values under its own keys: the
# values are copied in as the document is written, never written into the result by a second step, so that each
# field of Analysis has one writer (tests/test_registry.py)
def _scaling_as_written(analysis: Analysis) -> ScalingResult | None:
    """The measured scaling with the resamples' intervals of its peak and knee
    (methods.md#few-runs-stated-confidence)."""
    scaling, sure = analysis.scaling, analysis.confidence
    if scaling is None or sure is None:
        return scaling
    return replace(scaling, peak_nodes_ci=sure.peak_nodes_ci, knee_nodes_ci=sure.knee_nodes_ci)


def _cost_as_written(analysis: Analysis) -> CostResult | None:
    cost, sure = analysis.cost, analysis.confidence
    if cost is None or sure is None:
        return cost
    return replace(cost, cost_optimal_nodes_ci=sure.cost_optimal_nodes_ci)


def _goal_as_written(analysis: Analysis) -> GoalResult | None:
    """The goal with its levers (methods.md#the-goals-levers)."""
    return replace(analysis.goal, levers=analysis.levers) if analysis.goal is not None else None


def _serving_as_written(analysis: Analysis) -> ServingResult | None:
    serving, grades = analysis.serving, analysis.grades
    if serving is None:
        return None
    fitted = grades.serving or {} if grades is not None else {}
    return replace(serving, levers=analysis.levers,
                   rows=tuple(replace(row, calibration=fitted.get(row.nodes)) for row in serving.rows))


def _prediction_as_written(analysis: Analysis) -> PredictionResult | None:
    """The prediction with the layout and the model check's departure under its results key
    (docs/reference/results.md: `prediction.layout`, `prediction.model_departure`)."""
    if analysis.prediction is None:
        return None
    check = analysis.model_check
    written = replace(analysis.prediction, layout=_layout_as_written(analysis),
                      model_departure=check.model_departure if check else None)
    grades = analysis.grades
    if grades is None:
        return written
    return replace(written, rows=tuple(replace(row, calibration=grades.rows.get(row.nodes)) for row in written.rows),
                   speedup_at_p_star_calibration=grades.at_p_star, efficiency_at_p_star_calibration=grades.at_p_star,
                   speedup_at_p_comm_dominated_calibration=grades.at_p_comm_dominated)


def _layout_as_written(analysis: Analysis) -> LayoutResult | None:
    """The declared layout with its step's and its memory's grades (methods.md#how-accurate-each-prediction-is)."""
    layout, grades = analysis.layout, analysis.grades
    if layout is None or grades is None:
        return layout
    step = replace(layout.step, calibration=grades.layout_step) if layout.step is not None else None
    return replace(layout, step=step, memory_per_device_b_calibration=grades.memory)


def _plan_search_as_written(analysis: Analysis) -> PlanSearchResult | None:
    search, grades = analysis.plan_search, analysis.grades
    if search is None or grades is None:
        return search
    return replace(search, best=tuple(replace(row, calibration=grades.plan_search) for row in search.best))


def headline(analysis: Analysis) -> GoalDocument | None:
    """Page 1's verdict at the plan as results.json's goal section holds it (a service's included): what the diff
    and the history read of a revision."""
    result = _goal_of(analysis)
    return _goal_document(result) if result is not None else None


def _goal_document(result: GoalResult | ServingResult) -> GoalDocument:
    return result.goal_document() if isinstance(result, ServingResult) else GoalDocument.of(result)


def _decisions_of(result: DecisionsResult) -> tuple[DecisionResult, ...]:
    return result.decisions


def _trade_offs_of(result: DecisionsResult) -> tuple[TradeOff, ...]:
    return result.trade_offs


# The core's sections of results.json in the document's order (after schema_version and project)
_CORE_SECTIONS: tuple[ResultsSection[Analysis], ...] = (
    ResultsSection("diagnosis", "diagnosis", "which resource runs out first, and the axis of distribution that "
                   "cures it", "chapters/diagnosis.html"),
    ResultsSection("checklist", "checklist", "the six-stage design checklist and the communication tax",
                   "chapters/design.html"),
    ResultsSection("prediction", "prediction", "predicted speedup from the alpha-beta communication model",
                   "chapters/design.html", read=_prediction_as_written,
                   uncut="the model's curve at chosen node counts, not the measured scales"),
    ResultsSection("layout", "layout", LAYOUT_DOC, "chapters/design.html", read=_layout_as_written),
    ResultsSection("plan_search", "plan_search", PLAN_SEARCH_DOC, "design/plan_search.html",
                   read=_plan_search_as_written),
    ResultsSection("scaling", "scaling", "measured scaling and where every lost fold of speedup went",
                   "measure/runs.html", read=_scaling_as_written),
    ResultsSection("cost", "cost", "cost per run and the marginal speedup money buys", "measure/cost.html",
                   read=_cost_as_written),
    ResultsSection("energy", "energy", "energy and carbon per run", "measure/energy.html"),
    ResultsSection("reliability", "reliability", "failures at scale: checkpoint interval and its overhead",
                   "chapters/design.html"),
    ResultsSection("goal", "goal", "the goal checked at the plan, in each price regime", "chapters/summary.html",
                   read=_goal_of, shape=(GoalDocument | None, _goal_document),
                   uncut="a service's goal reads the serving analysis, whose rows the serving section shows"),
    ResultsSection("serving", "serving", "a serving project's load served within its p99 objective, and its hourly "
                   "cost", "measure/serve.html", read=_serving_as_written,
                   uncut="every load level is shown: its table has no selection yet"),
    ResultsSection("summary", "summary", "page 1, as a reviewer writes it", "chapters/summary.html"),
    ResultsSection("provenance", "provenance", "where each measured number came from", "measure/runs.html"),
    ResultsSection("model_check", "model_check", "the design's α–β model held against the measured runs, scale by "
                   "scale", "measure/model_check.html"),
    ResultsSection("decisions", "decisions", "one recommendation per deployment context (a serving project: among the "
                   "scales that serve, with the hourly keys filled and the per-run ones null)",
                   "partials/decisions_table.html", shape=(tuple[DecisionResult, ...] | None, _decisions_of)),
    ResultsSection("trade_offs", "decisions", "what each context gives up against another's choice",
                   "measure/trade_offs.html", shape=(tuple[TradeOff, ...] | None, _trade_offs_of)),
    ResultsSection("calibration", "calibration", "the calibration table each predicted number's accuracy was read "
                   "from: the corpus of published curves and the predictors it grades (null without one)",
                   "measure/accuracy.html"),
    ResultsSection("next_runs", "next_runs", "the measurement planner: the runs that would best settle the verdict "
                   "at an unmeasured plan, by the fall in the chance it is wrong per node-hour (null when the plan is "
                   "measured or the verdict is not in doubt)", "measure/next_runs.html",
                   uncut="candidate runs, not the measured scales"),
    ResultsSection("findings", "findings", "every warning and error the analyses raise, most severe first",
                   "partials/macros.html"),
)
_FIELD_TYPES = get_type_hints(Analysis)
CORE_SECTIONS = tuple(replace(section, kind=_FIELD_TYPES[section.field]) for section in _CORE_SECTIONS)


def _in_dependency_order(declared: tuple[Declared[Any], ...]) -> tuple[Declared[Any], ...]:
    """The declared analyses, each after the declared analyses it needs, else in the order listed."""
    found = {analysis.key: analysis for analysis in declared}
    if len(found) != len(declared):
        raise RuntimeError("two declared analyses share a key")
    ordered_keys: list[str] = []

    def place(key: str, path: tuple[str, ...]) -> None:
        if key in ordered_keys:
            return
        if key in path:
            raise RuntimeError(f"declared analyses need each other: {' → '.join((*path, key))}")
        for need in found[key].needs:
            if need in found:
                place(need, (*path, key))
        ordered_keys.append(key)

    for analysis in declared:
        place(analysis.key, ())
    return tuple(found[key] for key in ordered_keys)


# The analyses declared in their own modules, listed here by hand and run each after those it needs. A module that
# declares an analysis this list does not hold fails tests/test_registry.py (a typed spelling or a rename cannot drop
# one silently).
DECLARED: tuple[Declared[Any], ...] = _in_dependency_order((ENERGY_DELAY,))
# Every analysis in the order it runs: the core's, then the declared ones
REGISTRY: tuple[Step[Analysis], ...] = (*CORE_STEPS, *(declared.step() for declared in DECLARED))
# results.json's sections in the document's order (after schema_version and project): the core's, the declared
# ones before the findings. results.json, its JSON Schema (reportgen.render.results), the Python API's attributes
# (reportgen.api), the tables' selection of node counts (reportgen.render.selection) and the CSV tables all walk it;
# tests/test_sections.py fails on a section whose template is missing or not included or whose field Analysis lacks.
RESULTS_SECTIONS: tuple[ResultsSection[Analysis], ...] = (
    *CORE_SECTIONS[:-1], *(declared.section() for declared in DECLARED), CORE_SECTIONS[-1])
BY_KEY = {section.key: section for section in RESULTS_SECTIONS}


def sections_values(analysis: Analysis) -> dict[str, object]:
    """What every section holds in results.json, by key, in order (reportgen.render.results makes it JSON)."""
    return {section.key: section.value(analysis) for section in RESULTS_SECTIONS}


def _crowded(project: Project) -> tuple[float, ...]:
    crowded, beyond = crowded_runs(project)
    return tuple(sorted({p for p, _ in crowded} | set(beyond)))


def _contended(project: Project) -> tuple[float, ...]:
    """Node counts whose runs measured more ranks per machine than it has cores."""
    crowded, _ = crowded_runs(project)
    return tuple(sorted({p for p, _ in crowded}))


# What a history leaves out of its revisions' analyses: the lever search, the most costly analysis, which page 1 runs
# itself where its next action needs it (methods.md#a-projects-history)
WITHOUT_LEVERS = frozenset({"levers"})


def analyze(project: Project, *, intensity: Intensity | None = None,
            sources: Mapping[float, RowSource] | None = None, skip: frozenset[str] = frozenset(),
            recorded: tuple[RecordedPoint, ...] = (), accuracy: AccuracyTable | None = None,
            uncalibrated: bool = False, own: OwnEvidence | None = None) -> Analysis:
    """Every analysis, in the registry's order; `sources` are the measured runs' provenance comments (by node count)
    from their CSV, `recorded` the load points whose per-request records `ingest serving` kept; the steps filling a
    field in `skip` are left out (the field keeps its default). The analyses read each scale's capacity runs
    (methods.md#load-points-and-capacity): a service's lower load points are read from their records. Predicted
    numbers are graded by `accuracy`, the shipped calibration table when not given, none when `uncalibrated` (the
    corpus's own evaluation: methods.md#how-accurate-each-prediction-is), pooled with `own`, the project's graded
    predictions."""
    scaling = project.scaling
    if scaling is not None and (kept := capacity_runs(scaling.runs)) != scaling.runs:
        project = replace(project, scaling=replace(scaling, runs=kept))
    table = None if uncalibrated else accuracy or shipped_table()
    inputs = Inputs(project, intensity, sources or {}, recorded, accuracy=table, own=own)
    analysis = Analysis()
    for step in REGISTRY:
        if step.name not in skip:
            analysis = replace(analysis, **{step.name: step.run(inputs, analysis)})
    return analysis


def _latency(project: Project, prediction: PredictionResult | None) -> float | None:
    """α per message: the prediction's (given or fitted), else as the project gives it."""
    return prediction.alpha_s if prediction is not None else given_alpha(project)
