"""The design lint: every finding a reviewer would raise about the declared design, with a stable code
(docs/methods.md#findings lists them)."""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from reportgen.analysis.common import JOULES_PER_KWH
from reportgen.analysis.findings import Finding, error, info, warning
from reportgen.analysis.measured.diagnosis import RIDGE_CEILINGS, DiagnosisResult
from reportgen.analysis.measured.load_point import PointFacts
from reportgen.analysis.measured.model_check import COMM_SHARE_FACTOR, SPEEDUP_SHORTFALL, ModelCheckResult
from reportgen.analysis.measured.reconcile import Reconciliation
from reportgen.analysis.measured.requests import Quantile
from reportgen.analysis.measured.scaling import LOOKS_WEAK_SPREAD, ScalingResult
from reportgen.analysis.measured.utilization import plan_precision, run_precision
from reportgen.analysis.model.ceilings import CEILING, cure
from reportgen.analysis.model.layout import LayoutResult
from reportgen.analysis.model.layout_memory import splits_by_rule, stage_split
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.analysis.model.reliability import ReliabilityResult
from reportgen.analysis.money.cost import CostResult
from reportgen.analysis.page.lint_accuracy import accuracy_findings
from reportgen.analysis.page.prose.load_points import check_sentence, load_words, sampled_sentence
from reportgen.analysis.page.prose.plan import layout_words
from reportgen.analysis.plan.plan_search import PlanSearchResult, missing_shape
from reportgen.analysis.verdict.checklist import ChecklistResult
from reportgen.analysis.verdict.goal import GoalResult
from reportgen.analysis.verdict.peak import PastPeak, past_peak_words
from reportgen.analysis.verdict.serving import ServingResult
from reportgen.project.copies import identical_runs
from reportgen.project.model import (
    LAYER_FIELDS,
    REGIME_PHRASES,
    SLOT_VOCABULARY,
    ModelShape,
    Parallelism,
    Project,
    RegimeName,
    Slot,
)
from reportgen.wording import (
    INTERVAL_RUNS,
    counted,
    duration,
    energy,
    listed,
    money,
    nodes,
    number,
    percent,
    rate,
    requests,
    signed_share,
    size,
    spread,
    times,
)

IDLE_SHARE_LIMIT = 0.20

def lint(project: Project, *, diagnosis: DiagnosisResult | None, prediction: PredictionResult | None,
         scaling: ScalingResult | None, checklist: ChecklistResult | None, reliability: ReliabilityResult | None,
         goal: GoalResult | None, serving: ServingResult | None = None,
         model_check: ModelCheckResult | None = None, past_peak: PastPeak | None = None,
         layout: LayoutResult | None = None, reconciliation: Reconciliation | None = None,
         cost: CostResult | None = None, plan_search: PlanSearchResult | None = None,
         accuracy_table: bool = True) -> list[Finding]:
    findings: list[Finding] = []
    findings += reconciled(reconciliation, project.work_unit)
    findings += _spot_model(cost, project.design.nodes if project.design else None)
    findings += _hardware(project)
    findings += _oversubscribed(project)
    findings += _diagnosis(diagnosis, project.design.nodes if project.design else None, project.project.workload)
    findings += _layout(project, layout)
    findings += _shape(project, plan_search)
    findings += _search(plan_search, project.currency)
    findings += _precision(project, plan_search)
    findings += _declared_fit(plan_search, layout)
    findings += _utilization(project, scaling)
    findings += _slots(project, diagnosis, scaling, layout)
    findings += _prediction(project, prediction)
    findings += _tax(checklist, prediction)
    findings += plausibility(scaling)
    findings += _measurements(project, scaling, goal)
    findings += _past_peak(project, past_peak)
    findings += _serving(serving, project.currency)
    findings += _load_points(serving)
    findings += _replica(serving)
    findings += _model_against_measurements(prediction, model_check)
    findings += _reliability(reliability, goal)
    findings += _unstated(project)
    findings += accuracy_findings(goal.plan_estimate if goal is not None else None, table=accuracy_table)
    return refuted_by_runs(findings, project, scaling, layout, diagnosis)


# The memory model's errors that measured runs can refute (methods.md#measurements-outrank-the-memory-model)
MEMORY_ERRORS = ("layout-does-not-fit", "replica-cannot-fit", "too-few-nodes", "wrong-axis")


def refuted_by_runs(findings: list[Finding], project: Project, scaling: ScalingResult | None,
                    layout: LayoutResult | None, diagnosis: DiagnosisResult | None = None) -> list[Finding]:
    """A memory error where runs were measured becomes `memory-model-refuted`, a warning naming the assumption
    that would explain the gap: the design ran, so it can start. A layout or a plan that does not fit is refuted by
    a run at its scale or below (fewer devices hold more each); a replica that does not fit, by any run."""
    if scaling is None or project.serving:
        return findings
    plan = project.design.nodes if project.design else None
    measured = [row.nodes for row in scaling.rows]
    at_or_below = list(scaling.at_or_below(plan))
    # a wrong axis is the memory model's only when the memory wall is the ceiling it is wrong about
    memory_ceiling = diagnosis is not None and diagnosis.binding_ceiling == "memory-capacity"
    out = []
    for finding in findings:
        runs = at_or_below if finding.code in ("layout-does-not-fit", "too-few-nodes") else measured
        memory = finding.code != "wrong-axis" or memory_ceiling
        if finding.severity != "error" or finding.code not in MEMORY_ERRORS or not runs or not memory:
            out.append(finding)
            continue
        count = sum(row.repeats for row in scaling.rows if row.nodes in runs)
        out.append(replace(warning("memory-model-refuted", f"{count} run{'s' if count != 1 else ''} at "
                                   f"{listed([nodes(p) for p in runs])} {'exist' if count != 1 else 'exists'}, yet the "
                                   f"memory model says: {finding.message}; it assumes "
                                   f"{_memory_assumption(project, layout)}: the measurements outrank it, so the "
                                   "design is not called unable to start", finding.path, finding.section),
                           refutes=finding.code))
    return out


def _memory_assumption(project: Project, layout: LayoutResult | None) -> str:
    """The assumption of the memory model most likely to explain a design that ran where the model says it cannot."""
    memory = project.baseline.memory if project.baseline else None
    if memory is None:
        return "the memory stack as given"
    experts = "expert" in " ".join(project.design.slots.partitioning.choice).lower() \
        if project.design and project.design.slots and project.design.slots.partitioning else False
    if memory.expert_parameters is None and (experts or (layout is not None and layout.expert > 1)
                                             or (project.prediction and project.prediction.pattern == "all-to-all")):
        return ("every device holds every expert (a mixture of experts: give baseline.memory.expert_parameters and "
                "design.parallelism.expert, so that each device holds only its experts)")
    held = f"{size(memory.parameters * memory.bytes_per(False))} of state"
    if layout is not None and layout.memory_per_device_b is not None:
        held = f"{size(layout.memory_per_device_b)} per device"
    return (f"{held}, from {number(memory.parameters)} parameters at {number(memory.bytes_per(False))} B each and "
            "the activations as given (recomputation, offload or a smaller micro-batch would hold less)")


def _spot_model(cost: CostResult | None, plan: int | None) -> list[Finding]:
    """Spot with reliability: past an overhead of half the run the first-order model no longer holds
    (methods.md#spot-as-failures)."""
    spot = cost.regimes.get("spot") if cost else None
    if spot is None or spot.preemptions is None:
        return []
    beyond = [(row, tax) for row in spot.rows if (tax := spot.spot_tax(row.nodes)) is not None and tax.out_of_range]
    if not beyond:
        return []
    row, tax = next(((r, t) for r, t in beyond if r.nodes == plan), beyond[0])
    rate = spot.preemptions[0]
    every = f", one every {duration(3600.0 / (rate * row.nodes))} across the nodes" if rate > 0 else ""
    return [warning("spot-model-out-of-range", f"on spot at {nodes(row.nodes)}, hardware failures and preemptions "
                    f"({number(rate)} a node-hour{every}) add {percent(tax.overhead_fraction)} to a run of "
                    f"{duration(row.time_s / (1 + tax.overhead_fraction))}: past half the run the first-order "
                    "model no longer holds, so spot's times there are a floor, not an estimate",
                    "pricing.regimes.spot", "cost")]


def reconciled(reconciliation: Reconciliation | None, unit: str) -> list[Finding]:
    """The measurements that cannot be right (methods.md#evidence-reconciled-before-it-is-judged): each names the
    run, the figure and the bound it breaks, and what is left out of the choices because of it."""
    if reconciliation is None:
        return []
    out = []
    for e in reconciliation.energies:
        machines = f"{e.machines} machine{'s' if e.machines != 1 else ''}"
        drawn = f"{rate(e.power_per_machine_w, 'W')} a machine"
        if e.below and e.low_j is not None:
            bound = (f"below {energy(e.low_j / JOULES_PER_KWH)}, half of what {machines} draw waiting over "
                     f"{duration(e.time_s)}")
        else:
            bound = (f"above {energy((e.high_j or 0.0) / JOULES_PER_KWH)}, 1.5 × what {machines} draw flat out "
                     f"over {duration(e.time_s)}, PUE included")
        out.append(warning("implausible-energy", f"the run at {nodes(e.nodes)} measured "
                           f"{energy(e.energy_j / JOULES_PER_KWH)} ({drawn}), {bound}: it cannot be right, so it "
                           "is left out of the energy and carbon choices; check the meter's scope and the machines "
                           "it stands for (measure --machines)", "scaling.runs", "energy"))
    for c in reconciliation.collectives:
        link = ("intra-node link (hardware.intra_node_bandwidth)" if c.within_node
                else "network link (hardware.network_bandwidth)")
        which = " (prediction.message_bytes: either it or the time may be wrong)" if c.bytes_from_message else ""
        out.append(warning("implausible-collective", f"the all-reduce measured at {nodes(c.nodes)} moves "
                           f"{size(c.bytes)}{which} in {duration(c.time_s)}: "
                           f"{rate(c.bandwidth_b_per_s, 'B/s')} through a {rate(c.link_b_per_s, 'B/s')} {link}, "
                           "faster than a node can send and receive its bytes, so it is left out of the α–β fit",
                           "prediction.collectives", "design"))
    for t in reconciliation.throughputs:
        out.append(warning("implausible-throughput", f"the load test at {nodes(t.nodes)} served "
                           f"{requests(t.throughput_per_s, unit)}, above 1.25 × its {number(t.replicas)} replicas × "
                           f"{requests(t.capacity_per_replica_per_s, unit)} a replica "
                           f"({requests(t.limit_per_s, unit)}): it cannot be right, so whether that scale serves is "
                           "left unknown; check the load test's unit and its replicas",
                           "scaling.runs", "serving"))
    for scale, counts in reconciliation.load_tests:
        for code, problem in counts.problems():
            out.append(warning(code, f"the load test at {nodes(scale)}: {problem}", "scaling.runs", "serving"))
    return out


def _unstated(project: Project) -> list[Finding]:
    """What the report cannot judge because the project does not say it: a goal, or a plan to judge it at."""
    goal = project.project.goal
    if goal is None or not (goal.per_run_fields or goal.serving_fields):
        return [info("no-goal", "the project states no goal, so the report cannot say whether the design is good "
                     "enough: add project.goal (time_per_run and cost_per_run; a service: load, p99_latency and "
                     "cost_per_hour)", "project.goal", "problem")]
    scaling = project.scaling
    if goal.per_run_fields and scaling is not None and scaling.runs and scaling.work_per_run is None and \
            scaling.runs[0].form == "throughput":  # a time per run is the work of a run over its throughput
        return [info("work-per-run-missing", "the runs are throughputs and the project does not say how much work "
                     "one run is, so the goal per run is not judged: add scaling.work_per_run (the work of one run, in "
                     "the throughput's unit: tokens, samples or FLOP)", "scaling.work_per_run", "problem")]
    if goal.cost_per_run is not None and (project.pricing is None or project.pricing.node_hour is None):
        return [info("budget-not-judged", "the goal states a budget per run but the project gives no prices, so the "
                     "budget is not judged: add pricing.node_hour", "pricing.node_hour", "problem")]
    if goal.cost_per_hour is not None and (project.pricing is None or project.pricing.node_hour is None):
        return [info("budget-not-judged", "the goal states a budget per hour but the project gives no prices, so "
                     "the budget is not judged: add pricing.node_hour", "pricing.node_hour", "problem")]
    if project.design is None or project.design.nodes is None:
        return [info("no-plan", "the project plans no node count, so the goal is held against the measured scales "
                     "only: add design.nodes", "design.nodes", "problem")]
    return []


_DEVICES_IN_NAME = re.compile(r"(?<![\d.])(\d+)\s*(?:x|×|-?\s*GPUs?\b|-?\s*accelerators?\b)", re.IGNORECASE)


def _hardware(project: Project) -> list[Finding]:
    """A node described as several accelerators whose devices_per_node is not set: the memory wall would hold one
    replica against the node's whole memory, as if it were one device."""
    hardware = project.hardware
    if hardware is None or hardware.name is None or hardware.devices_per_node != 1 or hardware.device_memory:
        return []
    if project.project.workload == "data-processing":  # no model's state to hold: devices per node are not read
        return []
    match = _DEVICES_IN_NAME.search(hardware.name)
    if match is None or int(match.group(1)) < 2:
        return []
    return [info("devices-per-node-unset", f"the node is described as “{hardware.name}” but devices_per_node is not "
                 "set: the memory wall holds one replica against the node's whole memory as if it were one device; "
                 f"set hardware.devices_per_node: {match.group(1)}", "hardware.devices_per_node", "diagnosis")]


def crowded_runs(project: Project) -> tuple[list[tuple[float, int]], list[float]]:
    """Contention: the runs with more ranks per machine than its cores, as (nodes, ranks per node), and the
    node counts past the nodes the cluster has."""
    hardware, scaling = project.hardware, project.scaling
    if hardware is None or scaling is None:
        return [], []
    crowded = sorted({(run.nodes, run.ranks_per_node or 0) for run in scaling.runs
                      if run.oversubscribed(hardware.cores)}, key=lambda pair: pair[0])
    beyond = sorted({run.nodes for run in scaling.runs
                     if hardware.nodes_available is not None and run.nodes > hardware.nodes_available})
    return crowded, beyond


def _oversubscribed(project: Project) -> list[Finding]:
    """Oversubscribed runs share hardware: their times measure contention, not distribution."""
    crowded, beyond = crowded_runs(project)
    hardware = project.hardware
    out: list[Finding] = []
    if hardware is None:
        return out
    if crowded:
        runs = listed([f"{ranks} ranks per node at {nodes(p)}" for p, ranks in crowded])
        out.append(warning("oversubscribed", f"{runs} exceed the node's {hardware.cores} cores: the ranks share cores, "
                           "so those runs measure contention, not distribution", "scaling.runs", "measure"))
    if beyond:
        out.append(warning("oversubscribed", f"runs at {listed([nodes(p) for p in beyond])} exceed the "
                           f"{hardware.nodes_available} nodes available: they share hardware as ranks of one machine "
                           "do", "scaling.runs", "measure"))
    return out


def _reliability(reliability: ReliabilityResult | None, goal: GoalResult | None = None) -> list[Finding]:
    out: list[Finding] = []
    if reliability and reliability.first_storm_nodes is not None:
        # at the plan the design starts but cannot finish: it cannot start as declared (an error, rank 1); at larger
        # scales only, advice (docs/methods.md#can-the-design-start)
        plan = reliability.planned_nodes
        at_plan = plan is not None and plan >= reliability.first_storm_nodes
        out.append((error if at_plan else warning)(
            "checkpoint-storm", f"at {nodes(reliability.first_storm_nodes)} writing a checkpoint takes at least "
            "twice the system MTBF: the system would spend its life checkpointing"
            + (f", and the plan of {nodes(plan)} is there" if at_plan and plan is not None else ""),
            "reliability.checkpoint_cost", "reliability"))
    declared = reliability.declared if reliability else None
    if reliability is None or declared is None:
        return out
    # one regime, the one page 1 leads with (on demand without a goal), its figures from its reliability.at_plan
    # row (docs/methods.md#spot-as-failures); without a plan, the declared interval at the largest scale
    row = reliability.at_plan_in(goal.headline_regime() if goal else "on_demand")
    if row is not None and reliability.planned_nodes is not None:
        how = _checkpoint_words(row.regime, row.interval_s, row.overhead_fraction, reliability.planned_nodes,
                                row.daly_overhead_fraction, row.daly_interval_s)
        excess = row.excess
    else:
        how = _checkpoint_words(None, declared.interval_s, declared.overhead_fraction, declared.nodes,
                                declared.optimal_overhead_fraction, declared.optimal_interval_s)
        excess = declared.excess
    if excess > DECLARED_INTERVAL_TOLERANCE:
        out.append(warning("checkpoint-interval", f"{how}: set it near Daly's interval",
                           "reliability.checkpoint_interval", "reliability"))
    else:
        out.append(info("checkpoint-interval", f"{how}: close to the optimum",
                        "reliability.checkpoint_interval", "reliability"))
    return out


def _checkpoint_words(regime: RegimeName | None, interval_s: float, overhead: float, at: float, daly_overhead: float,
                      daly_s: float) -> str:
    """"on spot, checkpointing every 20 min costs 8.05 % of the run at 8 nodes against 7.96 % at Daly's interval of
    23.1 min for failures and preemptions together": the regime named, and the failures its Daly's interval is for."""
    where = f"{REGIME_PHRASES[regime]}, " if regime else ""
    failures = "failures and preemptions together" if regime == "spot" else "hardware failures"
    return (f"{where}checkpointing every {duration(interval_s)} costs {percent(overhead)} of the run at {nodes(at)} "
            f"against {percent(daly_overhead)} at Daly's interval of {duration(daly_s)} for {failures}")


DECLARED_INTERVAL_TOLERANCE = 0.10  # a declared interval whose overhead exceeds Daly's by more than this is flagged


def plausibility(scaling: ScalingResult | None) -> list[Finding]:
    """Plausibility: one measured scale, speedups far above ideal, and scales far from the fit to the others
    (methods.md#4y-plausibility)."""
    out: list[Finding] = []
    if scaling is None:
        return out
    if scaling.single_scale:
        only = scaling.rows[0].nodes
        out.append(info("single-scale", f"only {nodes(only)} {'was' if only == 1 else 'were'} measured: speedup, "
                        f"Karp–Flatt, the knee and the fits need a run at {scaling.another_scale}",
                        "scaling.runs", "measure"))
    for row in scaling.implausible:
        what = (f"the run at {nodes(row.nodes)} reaches {percent(row.efficiency)} of ideal (speedup "
                f"{number(row.speedup)} over {nodes(scaling.reference_nodes)})")
        if scaling.superlinear_reason:
            out.append(info("superlinear", f"{what}, accepted as superlinear: “{scaling.superlinear_reason}” "
                            "(scaling.superlinear)", "scaling.superlinear", "measure"))
        else:
            out.append(warning("implausible-speedup", f"{what}: above 125 % of ideal a run is far more often a unit "
                               "slip or a run of a smaller problem than real superlinear scaling; check it, or state "
                               "the reason in scaling.superlinear", "scaling.runs", "measure"))
    slower = scaling.slower_than_serial
    if slower:
        why = (f"Amdahl's fit gives a serial fraction f = {number(scaling.amdahl.serial_fraction)} ≥ 1"
               if scaling.amdahl is not None and scaling.amdahl.serial_fraction >= 1 else
               "the Karp–Flatt serial fraction exceeds 1 at " + _listed([
                   f"{nodes(r.nodes)} (e = {number(r.karp_flatt)})" for r in scaling.rows
                   if r.karp_flatt is not None and r.karp_flatt > 1]))
        out.append(warning("slower-than-serial", f"{why}: the parallel runs at {_listed([nodes(n) for n in slower])} "
                           "are slower than any serial fraction of the reference's work can explain (contention, a "
                           "fixed start-up, or a different workload at that scale); Amdahl's asymptote is no bound "
                           "here", "scaling.runs", "measure"))
    for repeat in scaling.outlier_repeats:
        value = number(repeat.value) if scaling.form == "throughput" else duration(repeat.value)
        centre = number(repeat.centre) if scaling.form == "throughput" else duration(repeat.centre)
        against = "the middle of the other two" if repeat.repeats == 3 else "the quartiles of the repeats"
        out.append(warning("outlier-repeat", f"repeat #{repeat.position} of {repeat.repeats} at "
                           f"{nodes(repeat.nodes)} measured {value} against {centre} ({against}): the median keeps "
                           "it, but find what disturbed it before trusting that scale's interval",
                           "scaling.runs", "measure"))
    if scaling.looks_weak:
        out.append(info("looks-weakly-scaled", f"the time per run stays within {percent(LOOKS_WEAK_SPREAD)} of the "
                        f"reference's while the node count grows {number(scaling.rows[-1].ideal)}-fold: the work "
                        "probably grew with the nodes; if so, set scaling.mode: weak", "scaling.mode", "measure"))
    for outlier in scaling.outliers:
        faster = outlier.factor > 1
        factor = outlier.factor if faster else 1 / outlier.factor
        out.append(warning("outlier", f"the run at {nodes(outlier.nodes)} is {times(factor)} "
                           f"{'faster' if faster else 'slower'} than the USL fitted to the other scales predicts: "
                           "re-measure it before trusting the fits", "scaling.runs", "measure"))
    return out


def _replica(serving: ServingResult | None) -> list[Finding]:
    """A replica is tensor-parallel within a node; one larger than a node cannot be served as declared."""
    replica = serving.replica if serving else None
    if replica is None or not replica.exceeds_node:
        return []
    kv = f" and {size(replica.kv_b)} of KV cache" if replica.kv_b else ""
    return [error("replica-exceeds-node", f"one replica holds {size(replica.weights_b)} of weights{kv}: "
                  f"{size(replica.memory_b)} needs {replica.devices} devices of {size(replica.device_memory_b)}, more "
                  f"than a node's {replica.devices_per_node}", "baseline.serving", "diagnosis")]


def _serving(serving: ServingResult | None, currency: str) -> list[Finding]:
    """The serving goal: a plan that misses it while another scale meets it; no scale that meets it
    (methods.md#4x-serving-projects)."""
    if serving is None or not serving.points:
        return []
    need = serving.need_words
    budget = f" for at most {money(serving.cost_limit_per_hour, currency)} an hour" \
        if serving.cost_limit_per_hour is not None else ""
    if all(point.met is False for point in serving.points):
        limit = {"capacity": "capacity", "latency": "p99 latency"}.get(serving.limited_by or "", "")
        why = f" ({limit} limits every scale)" if limit else ""
        return [warning("goal-unmet", f"no measured scale serves {need}{budget} in any viable price regime{why}",
                        "project.goal", "serving")]
    best = serving.cheapest_meeting
    if serving.met_at_plan is False and best is not None:
        regime = f" {REGIME_PHRASES[best.regime]}" if best.regime else ""
        return [warning("plan-misses-goal", f"the planned {nodes(serving.plan_nodes)} miss the goal ({need}{budget}) "
                        f"in every price regime, while {nodes(best.nodes)}{regime} meet it", "design.nodes",
                        "serving")]
    return []



# Said from the load test's counts line already (reconciled): the records' own check would say it twice
COUNTED = frozenset({"rate-not-reached"})


def _load_points(serving: ServingResult | None) -> list[Finding]:
    """Each recorded load point's checks that fired, with what they removed from the verdict
    (methods.md#a-service-judged-from-its-requests), and the records a row names that are gone."""
    if serving is None:
        return []
    out = []
    records = serving.records.points if serving.records else ()
    loads = Counter((record.nodes, record.mode, record.offered_per_s, record.concurrency) for record in records)
    for (scale, facts), record in zip(serving.records_judged, records, strict=True):
        where = f"the load test at {nodes(scale)}, {load_words(facts.point)}"
        single = loads[(record.nodes, record.mode, record.offered_per_s, record.concurrency)] == 1
        if record.near_capacity and single and record.valid:
            out.append(warning("single-run-near-capacity", f"{where}: one run at or past the knee, where failures "
                               "come in bursts and one run understates its own spread; it is decided only by an "
                               "interval that clears the target by its own width: repeat the load test twice",
                               "scaling.runs", "serving"))
        for check in facts.fired:
            if check.code not in COUNTED:
                out.append(warning(check.code, f"{where}: {check_sentence(check, facts)}", "scaling.runs",
                                   "serving"))
        out.extend(info("too-few-for-quantile", f"{where}: too few requests for a p99 of {name.upper()}: "
                        f"{p99.n:,} of the {p99.needed:,} needed; the share of requests within the objective still "
                        "judges the point", "scaling.runs", "serving")
                   for name, p99 in _guarded_p99s(serving, facts))
        if facts.point.sampled_from is not None:
            out.append(info("records-sampled", f"{where}: {sampled_sentence(facts.point)}", "scaling.runs",
                            "serving"))
    if serving.records_missing:
        scales = ", ".join(nodes(scale) for scale in sorted(set(serving.records_missing)))
        out.append(info("records-missing", f"{counted(len(serving.records_missing), 'load point')} at {scales} "
                        "name a records store that is not beside the runs CSV: their rows' summary columns stand; "
                        "ingest the load tester's files again to judge them from their requests", "scaling.file",
                        "serving"))
    return out


def _guarded_p99s(serving: ServingResult, facts: PointFacts) -> list[tuple[str, Quantile]]:
    """The p99 objectives a project states (judged one by one) whose p99 the point's requests are too few to
    state."""
    goodput = serving.goodput
    if goodput is None or goodput.joint:
        return []
    stated = [key.removesuffix("_s") for key, value in goodput.objectives.items() if value is not None]
    return [(name, found[-1]) for name in stated if (found := facts.quantiles.get(name))  # type: ignore[call-overload]
            and found[-1].value is None]


def _diagnosis(diagnosis: DiagnosisResult | None, planned: int | None, workload: str | None) -> list[Finding]:
    """Steps above their roof, too few nodes for the state, the wrong axis, an unstated deadline."""
    out = []
    for index, step in enumerate(diagnosis.steps if diagnosis else ()):
        if step.roof_efficiency is not None and step.roof_efficiency > 1.0 + 1e-9:
            out.append(warning("above-roof", f"step `{step.name}` attains {step.roof_efficiency:.0%} of the roof "
                               "min(π, β·I): no step can beat the roof, so its flops, bytes or time (or the hardware "
                               "figures) are wrong", f"baseline.steps[{index}]", "diagnosis"))
    if diagnosis and diagnosis.binding_ceiling == "memory-capacity" and planned and diagnosis.min_nodes \
            and planned < diagnosis.min_nodes:
        out.append(error("too-few-nodes", f"the plan requests {planned} nodes but the state needs at least "
                         f"{diagnosis.min_nodes} even when perfectly sharded ({diagnosis.min_devices} devices)",
                         "design.nodes", "diagnosis"))
    if diagnosis and diagnosis.shard_within_node:
        out.append(info("shard-within-node", f"one replica does not fit one device; a perfect shard needs "
                        f"{diagnosis.min_devices} of the node's {diagnosis.devices_per_node} devices, so the design "
                        "must shard the model within each node (FSDP or tensor parallelism there); the axis across "
                        "nodes answers the next ceiling", "baseline.memory", "diagnosis"))
    if diagnosis and diagnosis.balanced and {diagnosis.binding_ceiling, diagnosis.node_ceiling} & set(RIDGE_CEILINGS):
        out += _ridge_balanced(diagnosis)  # only where the step's bound is the ceiling the axis is held against
    if diagnosis and diagnosis.declared_axis and not diagnosis.axis_matches:
        out.append(error("wrong-axis", _wrong_axis(diagnosis, workload), "design.axis", "diagnosis"))
    if diagnosis and not diagnosis.deadline_stated and any(w.wall == "time" and w.binds for w in diagnosis.walls):
        out.append(info("no-deadline", "the project states no deadline, so the time wall is taken to bind; add "
                        "baseline.training.deadline or project.goal.time_per_run to test it",
                        "project.goal.time_per_run", "diagnosis"))
    return out


def _wrong_axis(diagnosis: DiagnosisResult, workload: str | None) -> str:
    """The declared axis against the diagnosis; with a within-node shard required, the device-level requirement."""
    if diagnosis.shard_within_node and diagnosis.declared_axis == diagnosis.node_axis:
        return (f"the design declares `{diagnosis.declared_axis}` across nodes, but one replica does not fit one "
                f"device: the binding ceiling is {diagnosis.binding_ceiling}, and the design must shard the model "
                f"within each node over at least {diagnosis.min_devices} devices (partitioning: shard model) before "
                f"`{diagnosis.declared_axis}` can answer the node-level ceiling ({diagnosis.node_ceiling}): "
                f"{CEILING['memory-capacity'].failure}")
    return (f"the design declares `{diagnosis.declared_axis}` but the binding ceiling is {diagnosis.binding_ceiling}, "
            f"which calls for `{diagnosis.axis}`: {cure(diagnosis.binding_ceiling, workload).failure}")


def _ridge_balanced(diagnosis: DiagnosisResult) -> list[Finding]:
    """The dominant step in the ridge band, 0.9·I* ≤ I ≤ 1.1·I*: both floors bind, so either axis lifts it and
    no wrong-axis is raised between them (methods.md#1-diagnosis-which-resource-runs-out-first)."""
    ridge = diagnosis.ridge_intensity
    index, step = next(((i, s) for i, s in enumerate(diagnosis.steps) if s.dominant), (0, None))
    intensity = step.intensity if step is not None and step.balanced else None
    if step is None or intensity is None or ridge is None:
        return []
    share = abs(intensity - ridge) / ridge
    tied = math.isclose(intensity, ridge, rel_tol=1e-12)  # methods.md#units-and-ties
    side = "at the ridge, " if tied else \
        f"{percent(share, 1)} {'below' if intensity < ridge else 'above'} the ridge at "
    return [info("ridge-balanced", f"step `{step.name}` has I = {_flop_per_byte(intensity)} FLOP/B, {side}"
                 f"{_flop_per_byte(ridge)}: compute and memory bandwidth bind together, and splitting the work or "
                 "the model lifts both", f"baseline.steps[{index}]", "diagnosis")]


def _flop_per_byte(value: float) -> str:
    """An intensity to four significant digits without trailing zeros ("200", "201.3"): I and I* side by side
    differ in their last digits."""
    text = number(value, 4)
    return text.rstrip("0").rstrip(".") if "." in text and "×" not in text else text


def _choices(slot: Slot | None) -> set[str]:
    return set(slot.choice) if slot else set()


def _stage_layers(layers: int, layout: Parallelism) -> list[Finding]:
    """Uneven pipeline stages said (methods.md#uneven-pipeline-stages): info with the split used, or a warning when
    the virtual stages do not divide a stage's layers (Megatron refuses it; each chunk is then charged L_j/v)."""
    split = layout.layers_per_stage or stage_split(layers, layout.pipeline)
    shown = ", ".join(map(str, split))
    if layout.virtual_stages > 1 and any(count % layout.virtual_stages for count in split):
        return [warning("layout-layers", f"{layout.virtual_stages} virtual stages do not divide every pipeline "
                        f"stage's layers ({shown}): Megatron refuses it, and each chunk is charged its stage's "
                        f"layers over {layout.virtual_stages}", "design.parallelism.virtual_stages", "design")]
    if len(set(split)) == 1 or layout.layers_per_stage is not None:
        return []
    rule = "Megatron's first/last rule" if splits_by_rule(layers, layout.pipeline) else "DeepSpeed's uniform rule"
    return [info("layout-layers", f"{layers} layers over {layout.pipeline} stages: {shown} ({rule}); give "
                 "design.parallelism.layers_per_stage if yours differ", "design.parallelism.pipeline", "design")]


def _shape(project: Project, plan_search: PlanSearchResult | None) -> list[Finding]:
    """The model's shape against the layout, and the activation model against a measured value
    (methods.md#activation-memory-from-the-models-shape)."""
    model = project.baseline.model if project.baseline else None
    layout = project.design.parallelism if project.design else None
    out = []
    if model is not None and layout is not None and model.complete:
        out += _stage_layers(model.layers, layout)
    if model is not None and plan_search is None:
        missing = missing_shape(project)
        out.append(info("plan-search-inputs", f"the model's shape lacks {listed([f'`{m}`' for m in missing])}: "
                        "activations, FLOPs and MFU are not modelled from it", missing[0], "design"))
    if plan_search is not None and plan_search.kappa_departs and plan_search.declared is not None:
        declared = plan_search.declared
        kappa = plan_search.activation_calibration or 0.0
        modelled = declared.activations_b / kappa if kappa else 0.0
        described = _described_layer(model)
        against = (f"Table 2's method gives for the layer described ({described}) and this layout: a part of it is "
                   "not as described") if described else ("Korthikanti's Table 2 gives for this shape and layout: the "
                                                           "architecture is not the GPT-3 layer it counts (SwiGLU, "
                                                           "grouped-query attention, no dropout?)")
        out.append(warning("activation-model-departs", f"the measured activations, {size(declared.activations_b)} "
                           f"per device, are {times(kappa)} the {size(modelled)} {against}; the other layouts are "
                           "scaled by the same factor", "baseline.memory.activations", "design"))
    return out


def _described_layer(model: ModelShape | None) -> str:
    """The layer's fields the project gives, as written ("layer: llama, kv_heads: 8"); "" where none is."""
    if model is None:
        return ""
    given = [(name, getattr(model, name)) for name in LAYER_FIELDS if getattr(model, name) is not None]
    return ", ".join(f"{name}: {str(value).lower() if isinstance(value, bool) else value}" for name, value in given)


# why an input leaves layouts untimed, in the words of the step's terms (methods.md#a-search-with-nothing-to-rank)
_STEP_NEEDS = {"hardware.network_bandwidth": "pipeline sends and data-parallel groups beyond one node",
               "hardware.intra_node_bandwidth": "tensor-parallel all-reduces and data-parallel groups within a node"}


def _unsearched(plan_search: PlanSearchResult) -> list[Finding]:
    """What the search could not do for want of an input or a rule: no layout enumerated (a warning naming the
    rule), fitting layouts none of which could be timed, or some layouts left untimed (info: never an action)."""
    if plan_search.emptied_by is not None and plan_search.nodes is not None:
        return [warning("no-layout-enumerated", f"no layout of {nodes(plan_search.nodes)}: {plan_search.emptied_by}",
                        "design.nodes", "design")]
    if plan_search.stepped == 0 and plan_search.fitting and plan_search.lacks:
        names = [name for name, _ in plan_search.lacks]
        needs = "; ".join(f"{name} is missing ({_STEP_NEEDS.get(name, 'the step reads it')})" for name in names)
        return [info("plan-search-inputs", f"{plan_search.fitting:,} layouts fit in memory but none could be timed: "
                     f"{needs}", names[0], "design")]
    return [info("plan-search-inputs", f"{count:,} layouts were not searched: {name} is missing", name, "design")
            for name, count in plan_search.lacks]


def _search(plan_search: PlanSearchResult | None, currency: str) -> list[Finding]:
    """The plan search's findings (methods.md#the-plan-search)."""
    if plan_search is None:
        return []
    out = []
    efficiency = plan_search.efficiency
    out += _unsearched(plan_search)
    if efficiency is not None and efficiency.above_peak:
        out.append(error("efficiency-above-peak", f"the runs calibrate η = {number(efficiency.value)}: above the peak, "
                         "or a run shorter than its modelled communication; the FLOP count, the peak or the runs' "
                         "tokens are wrong", "scaling.runs", "design"))
    elif efficiency is not None and efficiency.source == "none":
        out.append(warning("search-uncalibrated", "no measured run at the declared layout and no "
                           "plan_search.efficiency: every layout's time is a floor at the peak; measure one run at "
                           "the declared layout", "plan_search.efficiency", "design"))
    if efficiency is not None and efficiency.spread and efficiency.max_abs_residual is not None:
        out.append(warning("calibration-spread", f"the model misses a measured step by "
                           f"{percent(efficiency.max_abs_residual)}: it does not describe the scaling of this system, "
                           "and the ranking rests on it", "scaling.runs", "design"))
    micro = plan_search.micro_batch_efficiency
    if micro is not None and micro.inverted:
        out.append(warning("microbatch-efficiency-inverted", "the runs at larger micro-batches are not faster per "
                           f"token (runs at {listed([nodes(n) for n in micro.inverted])}): no micro-batch efficiency "
                           "is fitted, and η comes from the runs alone; check each run's micro_batch",
                           "scaling.runs", "design"))
    if plan_search.capped:
        out.append(warning("search-capped", f"{plan_search.left_out:,} layouts past plan_search.max_layouts were not "
                           "evaluated", "plan_search.max_layouts", "design"))
    if plan_search.nodes is not None and plan_search.fitting == 0 and plan_search.least_memory is not None:
        least, excess = plan_search.least_memory
        usable = least.memory_per_device_b - excess
        out.append(error("no-layout-fits", f"no layout of {nodes(plan_search.nodes)} fits: the one of least memory, "
                         f"{least.layout} (t × p × d) with {layout_words(least)}, needs "
                         f"{size(least.memory_per_device_b)} per device, {size(excess)} more than the {size(usable)} "
                         "usable", "design.nodes", "design"))
    declared = plan_search.declared
    if declared is not None and declared.gap is not None and declared.within_margin is False \
            and declared.fits is not False and plan_search.best:
        out.append(warning("better-layout", f"the declared layout {declared.layout} is {percent(declared.gap)} slower "
                           f"than the best the model finds, {plan_search.best[0].layout}", "design.parallelism",
                           "design"))
    return out


def _declared_fit(plan_search: PlanSearchResult | None, layout: LayoutResult | None) -> list[Finding]:
    """The declared layout's memory from the model's shape beyond one device, where the layout's own memory could not
    judge it (no baseline.memory): the same `layout-does-not-fit`, which measured runs can refute like any other."""
    declared = plan_search.declared if plan_search is not None else None
    if declared is None or declared.fits is not False or declared.memory_per_device_b is None \
            or (layout is not None and layout.fits is not None):
        return []
    assert plan_search is not None
    device = plan_search.inputs.device_memory_b or 0.0
    return [error("layout-does-not-fit", f"the declared layout {declared.layout} at ZeRO stage {declared.zero_stage} "
                  f"needs {size(declared.memory_per_device_b)} per device on its first pipeline stage, more than its "
                  f"{size(device)} (the model's activations and states from its shape)", "design.parallelism",
                  "design")]


def _precision(project: Project, plan_search: PlanSearchResult | None) -> list[Finding]:
    """Layouts timed at another precision than the runs that calibrate η carry η across (methods.md#precision): the
    share of its peak a precision reaches is its own."""
    planned, measured = plan_precision(project), run_precision(project)
    if plan_search is None or planned == measured:
        return []
    planned_name, measured_name = planned.upper(), measured.upper()
    why = f"{planned_name} seldom reaches {measured_name}'s share of its peak" if planned == "fp8" \
        else "each precision reaches its own share of its peak"
    return [info("precision-extrapolated", f"layouts timed at {planned_name} with η measured at {measured_name}: "
                 f"{why}", "plan_search.precision", "design")]


def _utilization(project: Project, scaling: ScalingResult | None) -> list[Finding]:
    """A share of the peak above one is a unit slip, or tokens that are not the run's
    (methods.md#flops-mfu-and-hfu)."""
    if scaling is None:
        return []
    over = [row for row in scaling.rows if (row.mfu or 0.0) > 1.0 or (row.hfu or 0.0) > 1.0]
    if not over:
        return []
    row = max(over, key=lambda r: max(r.mfu or 0.0, r.hfu or 0.0))
    own = row.run.tokens is not None
    source = "the run's own" if own else ("scaling.work_per_run" if project.scaling and project.scaling.work_per_run
                                          and project.work_per_run_counts == "token" else "baseline.training.tokens")
    tokens = f"{row.tokens:,.0f} tokens ({source})" if row.tokens is not None else "its throughput"
    share = max(row.mfu or 0.0, row.hfu or 0.0)
    return [error("mfu-above-one", f"at {nodes(row.nodes)} the run reaches {percent(share)} of the peak, reading "
                  f"{tokens}: a unit slip, or tokens that are not the run's", "scaling.runs", "measure")]


def _layout(project: Project, layout: LayoutResult | None) -> list[Finding]:
    """The layout's size against the plan, its memory per device, tensor parallelism across nodes
    (methods.md#22-a-parallel-layout-designparallelism)."""
    if layout is None:
        return []
    out = []
    if layout.expert_divides is False and layout.data is not None:
        out.append(error("layout-expert", f"the expert-parallel degree e = {layout.expert} does not divide the "
                         f"data-parallel degree d = {layout.data:,}: each expert must live on d / e whole replicas",
                         "design.parallelism.expert", "design"))
    g, planned = layout.devices_per_node, layout.planned_nodes
    model_parallel = layout.model_parallel
    context = f" × {layout.context}" if layout.context > 1 else ""
    named = " × context" if layout.context > 1 else ""
    if layout.size_matches is False and layout.devices is not None and planned is not None:
        out.append(error("layout-size", f"the layout's data × tensor × pipeline{named} = {layout.data} × "
                         f"{layout.tensor} × {layout.pipeline}{context} = {number(layout.devices)} devices, but "
                         f"design.nodes × devices_per_node = {planned} × {g} = {number(planned * g)}",
                         "design.parallelism", "design"))
    elif layout.data is None and planned is not None:
        out.append(error("layout-size", f"tensor × pipeline{named} = {model_parallel} does not divide the "
                         f"{number(planned * g)} devices of design.nodes × devices_per_node = {planned} × {g}: give "
                         "design.parallelism.data, or a layout that divides them", "design.parallelism", "design"))
    if layout.fits is False and layout.memory_per_device_b is not None and layout.device_memory_b is not None:
        fitting = layout.fitting_stages
        out.append(error("layout-does-not-fit", f"ZeRO stage {layout.zero_stage} at d = {layout.data} leaves "
                         f"{size(layout.memory_per_device_b)} per device, more than its "
                         f"{size(layout.device_memory_b)}; "
                         + (f"the state fits with {listed(fitting)}" if fitting else
                            "no ZeRO stage fits at any data-parallel degree: raise tensor or pipeline parallelism"),
                         "design.parallelism", "design"))
    if layout.tensor_across_nodes:
        out.append(warning("tensor-across-nodes", f"tensor parallelism of {layout.tensor} spans more than a node's "
                           f"{g} devices: its all-reduces, four per layer per micro-batch, cross the network at "
                           "network, not NVLink, bandwidth", "design.parallelism.tensor", "design"))
    return out


def _slots(project: Project, diagnosis: DiagnosisResult | None, scaling: ScalingResult | None,
           layout: LayoutResult | None = None) -> list[Finding]:
    slots = project.design.slots if project.design else None
    if slots is None:
        return []
    out = []
    ceiling = diagnosis.binding_ceiling if diagnosis else None
    partitioning, communication = _choices(slots.partitioning), _choices(slots.communication)
    memory = next((w for w in diagnosis.walls if w.wall == "memory"), None) if diagnosis else None
    layout_fits = bool(layout and layout.fits)
    # A layout splits the model when it has tensor or pipeline parallelism or shards the weights (ZeRO-3)
    layout_splits = bool(layout and (layout.tensor * layout.pipeline > 1 or layout.zero_stage == 3))
    if memory is not None and memory.binds and partitioning == {"split data"} and not layout_fits:
        where = "one device" if diagnosis and diagnosis.devices_per_node > 1 else "one node"
        out.append(error("replica-cannot-fit", f"the model's state does not fit {where}, yet partitioning only "
                         "splits data: every replica would need the whole state (data parallelism multiplies "
                         "throughput, never capacity)", "design.slots.partitioning", "design"))
    # Under a layout with ZeRO stages 0–2 the all-reduce runs over the data-parallel group of model shards
    # (Megatron's): it is the right collective. Sharded weights (stage 3) need the all-gathers.
    sharded_state = ("shard model" in partitioning and (layout is None or layout.zero_stage == 3)) \
        or bool(layout and layout.zero_stage == 3)
    if sharded_state and communication == {"all-reduce"}:
        out.append(warning("allreduce-needs-replica", "all-reduce averages full replicas, but the model is sharded: "
                           "sharded state needs all-gather and reduce-scatter (scatter-gather)",
                           "design.slots.communication", "design"))
    if ceiling == "compute" and memory is not None and not memory.binds \
            and ("shard model" in partitioning or layout_splits):
        out.append(warning("needless-model-split", "the model fits one device and the ceiling is compute: "
                           "sharding it adds communication without lifting the ceiling",
                           "design.slots.partitioning", "design"))
    if (_choices(slots.consistency) == {"synchronous"} and "straggler mitigation" not in _choices(slots.load_balancing)
            and scaling and any((r.idle_share or 0) >= IDLE_SHARE_LIMIT for r in scaling.rows)):
        worst = max(scaling.rows, key=lambda r: r.idle_share or 0)
        out.append(warning("sync-without-straggler-plan", f"synchronous steps with no straggler mitigation, and at "
                           f"{worst.nodes} nodes {worst.idle_share:.0%} of the wall time is idle at barriers",
                           "design.slots.load_balancing", "measure"))
    for name, vocabulary in SLOT_VOCABULARY.items():
        slot = getattr(slots, name)
        if slot is None:
            out.append(info("empty-slot", f"the `{name}` slot is not filled in", f"design.slots.{name}", "design"))
            continue
        if not slot.why:
            out.append(warning("unjustified-slot", f"the `{name}` slot ({', '.join(slot.choice)}) has no `why`",
                               f"design.slots.{name}", "design"))
        for choice in slot.choice:
            if choice not in vocabulary:
                close = difflib.get_close_matches(choice, vocabulary, n=1)
                hint = f"; did you mean `{close[0]}`?" if close else f"; known: {', '.join(vocabulary)}"
                out.append(info("free-text-choice", f"`{choice}` is free text, not one of the `{name}` vocabulary"
                                f"{hint}", f"design.slots.{name}.choice", "design"))
    return out


def _prediction(project: Project, prediction: PredictionResult | None) -> list[Finding]:
    out: list[Finding] = []
    if prediction is None:
        return out
    fit = prediction.fit
    if fit and (fit.alpha_s < 0 or fit.beta_s < 0):
        used = "the given α and β are used instead" if not prediction.uses_fit else ""
        out.append(error("bad-fit", f"the measured collectives fit α = {fit.alpha_s:.3g} s and β = "
                         f"{fit.beta_s:.3g} s: a negative value means the {prediction.pattern.name} model does not "
                         "describe these "
                         f"measurements (protocol changes, contention); {used or 'check the measurements'}",
                         "prediction.collectives", "design"))
    planned = project.design.nodes if project.design else None
    if planned and planned > prediction.p_star:
        out.append(warning("past-optimum", f"the plan of {planned} nodes is past the predicted optimum p* = "
                           f"{prediction.p_star}: more nodes make each step slower", "design.nodes", "design"))
    if planned and prediction.p_comm_dominated and planned >= prediction.p_comm_dominated:
        out.append(warning("comm-dominated", f"at the planned {planned} nodes communication takes at least as "
                           f"long as computation (p_dom = {prediction.p_comm_dominated})", "design.nodes", "design"))
    return out


def _tax(checklist: ChecklistResult | None, prediction: PredictionResult | None) -> list[Finding]:
    if checklist is None or not checklist.tax.binds:
        return []
    limit = f"at most p_dom = {prediction.p_comm_dominated}" if prediction and prediction.p_comm_dominated else \
        "fewer"
    what = (f"fan-out {checklist.tax.fanout} spends the whole latency budget" if checklist.tax.kind == "interactive"
            else f"R({checklist.tax.planned_nodes}) = {checklist.tax.ratio:.3g} ≥ 1")
    return [warning("tax-binds", f"the communication tax binds ({what}): it has become the binding ceiling; go back "
                    f"to stage 1 with {limit} workers", "checklist.tax" if checklist.tax.kind == "interactive"
                    else "design.nodes", "design")]


def _measurements(project: Project, scaling: ScalingResult | None, goal: GoalResult | None) -> list[Finding]:
    out: list[Finding] = []
    if scaling is None:
        return out
    superlinear = [r.nodes for r in scaling.rows if r.superlinear_compute]
    if superlinear:
        out.append(info("superlinear-compute", f"compute shrank faster than 1/p at {_listed(superlinear, ', ')} "
                        "nodes (caches, "
                        "smaller per-node working sets); the serial fraction there is clamped to 0",
                        "scaling.runs", "measure"))
    if scaling.reference_nodes != 1:
        out.append(info("relative-reference", "no single-node measurement: speedups are relative to "
                        f"{scaling.reference_nodes} nodes and ideal is p / {scaling.reference_nodes}", "scaling.runs",
                        "measure"))
    noisy = [r for r in scaling.rows if r.noisy]
    if noisy:  # an interval is [low, high]: a skewed one is never printed as a symmetric ±
        spreads = _listed([
            f"{nodes(r.nodes)} [{duration(r.time_ci[0], r.time_ci)}, {duration(r.time_ci[1], r.time_ci)}] around "
            f"{duration(r.time_s)} ({signed_share(r.time_ci[0] / r.time_s - 1)}/"
            f"{signed_share(r.time_ci[1] / r.time_s - 1)}), {_spread_of(r.repeats)}"
            for r in noisy if r.time_ci and r.time_s])
        out.append(warning("noisy", f"the measured time's spread is wider than 20 % of its median at {spreads}: "
                           "measure these scales again before trusting a change there", "scaling.runs", "measure"))
    copies = identical_runs(project)
    if copies:
        out.append(warning("identical-runs", identical_runs_message(copies), "scaling.runs", "measure"))
    if scaling.knee_uncertain:
        out.append(info("uncertain-knee", f"the knee at {scaling.knee_nodes} nodes is uncertain: its speedup "
                        "interval overlaps a neighbouring scale's", "scaling.runs", "measure"))
    planned = project.design.nodes if project.design else None
    if planned and planned not in {r.nodes for r in scaling.rows}:
        out.append(info("plan-not-measured", f"the planned {planned} nodes were not measured; its time and cost are "
                        "not evidenced", "design.nodes", "measure"))
    if goal and goal.none_meets:
        stated = f" (“{goal.text.rstrip('.')}”)" if goal.text else ""
        out.append(warning("goal-unmet", f"no measured scale meets the goal{stated} in both time and cost in any "
                           "viable price regime", "project.goal", "measure"))
    elif goal and goal.met_at_plan is False and goal.cheapest_meeting is not None:
        best = goal.cheapest_meeting
        available = project.hardware.nodes_available if project.hardware else None
        beyond = f", beyond the {nodes(available)} available" if available is not None and best.nodes > available \
            else ""
        out.append(warning("plan-misses-goal", f"the planned {goal.plan_nodes} nodes miss the goal in every price "
                           f"regime, while {best.nodes} nodes meet it{beyond}", "design.nodes", "summary"))
    if goal and goal.fitted_at_plan and all(c.met is False for c in goal.fitted_at_plan):
        # the rule holds at a fitted or interpolated plan as at a measured one
        way = goal.cheapest_meeting or goal.fitted_meeting
        fitted = min(goal.fitted_at_plan, key=lambda c: c.time_s)
        alternative = (f", while {nodes(way.nodes)} meet it ({way.source})" if way is not None else "")
        out.append(warning("plan-misses-goal", f"the planned {nodes(goal.plan_nodes)} were not measured, and the USL "
                           f"fit puts a run there at {duration(fitted.time_s)}, which misses the goal in every price "
                           f"regime{alternative}", "design.nodes", "summary"))
    return out


def _past_peak(project: Project, peak: PastPeak | None) -> list[Finding]:
    """A plan at which a smaller measured scale is faster beyond noise, or past the USL peak."""
    if peak is None:
        return []
    return [warning("plan-past-peak", f"the plan is past the measured peak: {past_peak_words(peak, project.currency)}"
                    f"; plan {nodes(peak.better_nodes)}", "design.nodes", "summary")]


FIT_RANGE = (0.1, 10.0)  # the prediction's sensitivity range: a fit outside it is a model the table never considered


def _model_against_measurements(prediction: PredictionResult | None,
                                check: ModelCheckResult | None) -> list[Finding]:
    """The alpha-beta model held against what was measured: the fit, the communication share, the speedups
    (reportgen.analysis.measured.model_check compares them scale by scale)."""
    out: list[Finding] = []
    if prediction is None:
        return out
    fit = prediction.fit
    if fit and fit.alpha_s >= 0 and fit.beta_s >= 0:
        for name, fitted, given in (("α", fit.alpha_s, prediction.alpha_given_s),
                                    ("β", fit.beta_s, prediction.beta_given_s)):
            if given is None or (given == 0 and fitted == 0):
                continue
            ratio = fitted / given if given > 0 else math.inf
            if not FIT_RANGE[0] <= ratio <= FIT_RANGE[1]:
                implied = (f"; the fitted values imply p* = {prediction.fit_p_star} instead of {prediction.p_star}"
                           if prediction.fit_p_star is not None else "")
                out.append(warning("fit-disagrees", f"the measured collectives fit {name} = {_seconds(fitted)}, "
                                   f"{_times(ratio)} the given {_seconds(given)}: outside the 0.1–10× range the "
                                   f"sensitivity table covers{implied}", "prediction.collectives", "design"))
    if check is None:
        return out
    departures = [f"{nodes(row.nodes)}: measured {row.measured_comm_ratio:.3g}, predicted "
                  f"{row.predicted_comm_ratio:.3g}" for row in check.rows if row.comm_departs]
    if departures:
        out.append(warning("comm-share-departs", "the measured communication-to-computation ratio "
                           "(communication / compute) departs from the predicted R(p) by more than "
                           f"{COMM_SHARE_FACTOR:g}× at {_listed(departures)}: the communication model does not "
                           "describe this system", "prediction", "measure"))
    shortfalls = [f"{nodes(row.nodes)}: {row.measured_speedup:.3g} against {row.predicted_speedup:.3g}"
                  for row in check.rows if row.below_prediction]
    if shortfalls:
        out.append(warning("below-prediction", f"measured speedups fall more than {SPEEDUP_SHORTFALL * 100:g} % below "
                           f"the predicted curve at {_listed(shortfalls)}: the prediction is optimistic for this "
                           "system", "scaling.runs", "measure"))
    return out


LISTED = 8  # items a finding names before it counts the rest


def _spread_of(repeats: int) -> str:
    """How a noisy row's spread was found: "95 % interval of 5 runs", "the range of 2 runs"."""
    return f"95 % interval of {repeats} runs" if repeats >= INTERVAL_RUNS else spread(repeats)


def identical_runs_message(copies: list[str]) -> str:
    """`identical-runs`, as the report and `check` both say it."""
    return (f"{_listed(copies)}: a run recorded twice counts as a repeat, and the scale's spread then rests on a "
            "copy; delete it, or measure the scale again")


def _listed(items: Sequence[object], separator: str = "; ") -> str:
    """The first LISTED items, then how many more: a finding is one sentence even over 10,000 scales."""
    shown = separator.join(str(item) for item in items[:LISTED])
    return shown if len(items) <= LISTED else f"{shown}{separator}and {len(items) - LISTED:,} more (results.json)"


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} s"


def _times(ratio: float) -> str:
    if math.isinf(ratio):
        return "∞×"
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.3g}×"
