"""The pure analysis core: Project → Analysis. No I/O, no plotting, no templates.

The carbon intensity is the one outside fact an analysis needs; the pipeline looks it up (reportgen.project.carbon) and
passes it in, so that everything here stays a pure function of its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial

from reportgen.analysis.actions import Evidence
from reportgen.analysis.checklist import ChecklistResult, build_checklist
from reportgen.analysis.cost import CostResult, analyze_cost
from reportgen.analysis.decisions import DecisionsResult, decide
from reportgen.analysis.diagnosis import DiagnosisResult, diagnose
from reportgen.analysis.energy import EnergyResult, analyze_energy
from reportgen.analysis.findings import Finding, ordered
from reportgen.analysis.goal import GoalResult, check_goal
from reportgen.analysis.layout import LayoutResult, analyze_layout
from reportgen.analysis.lint import crowded_runs, lint
from reportgen.analysis.model_check import ModelCheckResult, check_model
from reportgen.analysis.patterns import resolve_pattern
from reportgen.analysis.peak import plan_past_peak
from reportgen.analysis.prediction import PredictionResult, predict
from reportgen.analysis.provenance import ProvenanceResult, trace_provenance
from reportgen.analysis.reliability import ReliabilityResult, analyze_reliability, default_scales, folded_fraction
from reportgen.analysis.scaling import ScalingResult, analyze_scaling
from reportgen.analysis.serving import ServingResult, analyze_serving
from reportgen.analysis.summary import SummaryResult, summarize
from reportgen.project.carbon import Intensity
from reportgen.project.model import Project
from reportgen.project.records import RowSource


@dataclass(frozen=True)
class Analysis:
    """Every analysis of one project; a section whose inputs are absent is None."""

    diagnosis: DiagnosisResult | None
    checklist: ChecklistResult | None
    prediction: PredictionResult | None
    scaling: ScalingResult | None
    cost: CostResult | None
    energy: EnergyResult | None
    reliability: ReliabilityResult | None
    decisions: DecisionsResult | None
    goal: GoalResult | None
    provenance: ProvenanceResult | None
    findings: tuple[Finding, ...]
    serving: ServingResult | None = None  # a serving project's load, latency and hourly cost (§5.x)
    summary: SummaryResult | None = None  # page 1 (§7.1)
    model_check: ModelCheckResult | None = None  # the α–β model against the measured runs, scale by scale (§4)
    layout: LayoutResult | None = None  # design.parallelism: memory per device and the step's terms (§3.2)


def _crowded(project: Project) -> tuple[float, ...]:
    crowded, beyond = crowded_runs(project)
    return tuple(sorted({p for p, _ in crowded} | set(beyond)))


def analyze(project: Project, *, intensity: Intensity | None = None,
            sources: Mapping[float, RowSource] | None = None) -> Analysis:
    """Every analysis; `sources` are the measured runs' provenance comments (by node count) from their CSV."""
    max_nodes = project.prediction.max_nodes if project.prediction else 4096
    scaling = analyze_scaling(project.scaling, max_nodes=max_nodes, serving=project.serving,
                              cores=project.hardware.cores if project.hardware else None,
                              workload=project.project.workload, pattern=resolve_pattern(project).pattern)
    single_node = next((r.time_s for r in scaling.rows if r.nodes == 1 and not scaling.per_unit_of_work), None) \
        if scaling else None
    prediction = predict(project)
    layout = analyze_layout(project, t_comp=project.prediction.t_comp if project.prediction else None,
                            alpha=_latency(project, prediction), max_nodes=max_nodes)
    diagnosis = diagnose(project, reference_time_s=single_node, layout_fits=layout.fits if layout else None)
    planned = project.design.nodes if project.design else None
    measured_times = {r.nodes: r.time_s for r in scaling.rows if r.time_s is not None} if scaling else {}
    reliability = analyze_reliability(project.reliability,
                                      [r.nodes for r in scaling.rows] if scaling else default_scales(planned),
                                      planned_nodes=planned, measured_times=measured_times)
    checklist = build_checklist(project, diagnosis, prediction, reliability)
    cost = analyze_cost(scaling, project.pricing)
    energy = analyze_energy(scaling, project.energy,
                            intensity_g_per_kwh=intensity.g_per_kwh if intensity else None,
                            source=intensity.source if intensity else None,
                            runs_per_month=project.pricing.runs_per_month if project.pricing else None)
    goal_spec = project.project.goal
    serving = analyze_serving(project, scaling, intensity_g_per_kwh=intensity.g_per_kwh if intensity else None,
                              max_nodes=max_nodes)
    # §5.z: the failure tax is in the time the goal, the decisions and page 1 quote (not in the measured tables)
    tax = partial(folded_fraction, project.reliability) if project.reliability else None
    decisions = decide(project.decisions, scaling, cost, energy, goal=goal_spec, serving=serving, tax=tax)
    goal = None if project.serving else check_goal(
        goal_spec, plan_nodes=planned, scaling=scaling, cost=cost, energy=energy,
        runs_per_month=project.pricing.runs_per_month if project.pricing else None, max_nodes=max_nodes, tax=tax)
    model_check = check_model(prediction, scaling, layout)
    if prediction is not None:
        prediction = replace(prediction, layout=layout,
                             model_departure=model_check.model_departure if model_check else None)
    past_peak = plan_past_peak(scaling, cost, planned)
    findings = ordered(lint(project, diagnosis=diagnosis, prediction=prediction, scaling=scaling,
                            checklist=checklist, reliability=reliability, goal=goal, serving=serving,
                            model_check=model_check, past_peak=past_peak, layout=layout))
    summary = summarize(project, scaling=scaling, cost=cost, prediction=prediction, goal=goal, serving=serving,
                        findings=findings, evidence=Evidence(diagnosis, prediction, scaling, goal, serving,
                                                             reliability, planned, past_peak, project.currency,
                                                             _crowded(project)),
                        model_check=model_check, layout=layout)
    return Analysis(diagnosis, checklist, prediction, scaling, cost, energy, reliability, decisions, goal,
                    trace_provenance(scaling, sources or {}), findings, serving, summary, model_check, layout)


def _latency(project: Project, prediction: PredictionResult | None) -> float | None:
    """α per message: the prediction's (given or fitted), else the hardware's."""
    if prediction is not None:
        return prediction.alpha_s
    spec, hardware = project.prediction, project.hardware
    if spec is not None and spec.alpha is not None:
        return spec.alpha
    return hardware.network_latency if hardware else None
