"""The one next action of page 1 (ANALYSES §7.1 item 4): the step that most changes the verdict, through a table
that maps each finding code to its action and rank.

The ranks are §7.1's: (1) an error that stops the design; (2) a plan past the measured peak, or a missed goal with a
measured or fitted way to meet it; (3) a measurement that cannot be right; (4) the model against the measurements;
(5) noise, and every other finding that calls for an action. The lowest rank wins; within one rank the more severe
finding, then the code listed earlier. The methodology appendix and docs/methods.md print this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

from reportgen.analysis.confidence import NextRun
from reportgen.analysis.diagnosis import DiagnosisResult
from reportgen.analysis.findings import SEVERITIES, Finding
from reportgen.analysis.goal import GoalResult
from reportgen.analysis.peak import PastPeak, past_peak_words
from reportgen.analysis.prediction import PredictionResult
from reportgen.analysis.reliability import ReliabilityResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.analysis.serving import ServingResult
from reportgen.keys import Key
from reportgen.project.model import REGIME_PHRASES
from reportgen.wording import duration, listed, money, nodes, number, percent, requests

Rank = Literal[1, 2, 3, 4, 5]


@dataclass(frozen=True)
class NextAction:
    code: Annotated[str, Key("the finding code it comes from; none when no finding calls for one")]
    text: Annotated[str, Key("the action")]
    rank: Annotated[Rank | None, Key(
        "ANALYSES §7.1's order: 1 an error that stops the design, 2 the plan against the evidence, 3 a measurement "
        "that cannot be right, 4 the model against the measurements, 5 noise and the rest; null without an "
        "action")] = None


@dataclass(frozen=True)
class Evidence:
    """What the action texts may quote."""

    diagnosis: DiagnosisResult | None
    prediction: PredictionResult | None
    scaling: ScalingResult | None
    goal: GoalResult | None
    serving: ServingResult | None
    reliability: ReliabilityResult | None
    plan: int | None
    past_peak: PastPeak | None = None  # the plan against the smaller measured scales (reportgen.analysis.peak)
    currency: str = "USD"
    crowded: tuple[float, ...] = ()  # node counts whose runs are oversubscribed (§4.z contention)
    next_runs: tuple[NextRun, ...] = ()  # the measurement planner's runs, best first


def _regime(name: str | None) -> str:
    return f" {REGIME_PHRASES[name]}" if name else ""


def _implausible(e: Evidence) -> str:
    rows = e.scaling.implausible if e.scaling else ()
    where = listed([nodes(r.nodes) for r in rows]) or "the flagged scale"
    return (f"Check the run at {where}: a speedup that far above ideal is more often a unit slip or a smaller "
            "problem than real; correct it, or state the reason in scaling.superlinear.")


def _outlier(e: Evidence) -> str:
    where = listed([nodes(o.nodes) for o in e.scaling.outliers]) if e.scaling else "the flagged scale"
    return f"Re-measure the run at {where}: it departs more than twice from what the other scales predict."


def _wrong_axis(e: Evidence) -> str:
    d = e.diagnosis
    if d is not None and d.shard_within_node and d.node_axis is not None and d.declared_axis == d.node_axis:
        return (f"Shard the model within each node over at least {d.min_devices} devices (partitioning: shard model, "
                "with FSDP, ZeRO-3 or tensor parallelism): one replica does not fit one device, so the design "
                "cannot start as declared.")
    axis = d.axis if d else "the diagnosed axis"
    return f"Change design.axis to “{axis}”: the declared axis does not lift the binding ceiling."


def _slower_than_serial(e: Evidence) -> str:
    rows = e.scaling.slower_than_serial if e.scaling else ()
    where = listed([nodes(n) for n in rows]) or "the flagged scales"
    return (f"Check the runs at {where} for contention, a fixed start-up or a different workload: they are slower "
            "than any serial fraction of the reference's work explains.")


def _outlier_repeat(e: Evidence) -> str:
    repeats = e.scaling.outlier_repeats if e.scaling else ()
    where = listed([f"{duration(r.value)} at {nodes(r.nodes)}" for r in repeats]) or "the flagged repeat"
    return f"Re-measure, or explain, the wild repeat ({where}): the median keeps it, the interval widens with it."


def _plan_past_peak(e: Evidence) -> str:
    peak = e.past_peak
    if peak is None:
        return "Plan the faster, smaller measured scale."
    return f"Plan {nodes(peak.better_nodes)} instead of {nodes(peak.plan_nodes)}: {past_peak_words(peak, e.currency)}."


def _plan_misses(e: Evidence) -> str:
    if e.serving is not None and e.serving.cheapest_meeting is not None:
        point = e.serving.cheapest_meeting
        return (f"Plan {nodes(point.nodes)}{_regime(point.regime)} instead of {nodes(e.plan)}: the cheapest measured "
                "point that meets the goal.")
    best = (e.goal.cheapest_meeting or e.goal.fitted_meeting) if e.goal else None
    if best is None:
        return "Move the plan to a measured scale that meets the goal."
    if best.source != "measured":
        return (f"Measure {nodes(best.nodes)}{_regime(best.regime)}, where the USL fit says the goal is met "
                f"({duration(best.time_s)} per run, fitted), instead of planning {nodes(e.plan)}.")
    return (f"Plan {nodes(best.nodes)}{_regime(best.regime)} instead of {nodes(e.plan)}: the cheapest measured point "
            f"that meets the goal ({duration(best.time_s)} per run).")


def _goal_unmet(e: Evidence) -> str:
    if e.next_runs:  # the plan is not measured and its verdict is in doubt: the run that best settles it
        return planner_words(e.next_runs[0], e.currency)
    if _fitted_plan_meets(e):
        return (f"Measure the planned {nodes(e.plan)}: the USL fit says the goal is met there, but no measured scale "
                "meets it yet.")
    if e.serving is not None:
        serving = e.serving
        if serving.nodes_to_serve is not None and serving.nodes_to_serve_source == "fitted":
            return (f"Load-test {nodes(serving.nodes_to_serve)}, where the USL fit says the need of "
                    f"{requests(serving.capacity_needed_rps, serving.unit)} is met.")
        if serving.limited_by == "latency":
            row, objective = serving.plan_row, serving.p99_objective_s
            where = (f"Cut the p99 at the planned {nodes(row.nodes)} from {duration(row.p99_s)} to the "
                     f"{duration(objective)} objective" if row is not None and row.p99_s is not None and objective
                     else "Cut the p99 latency")
            return (f"{where} before adding replicas, which have the capacity already: a lighter load per replica, "
                    "fewer fan-out hops, hedged requests, batching or a smaller or quantized model.")
        bound = f" (at least {nodes(serving.nodes_lower_bound)} at the best capacity per node measured)" \
            if serving.nodes_lower_bound else ""
        return (f"Add replicas{bound} and load-test the scale that reaches "
                f"{requests(serving.capacity_needed_rps, serving.unit)}.")
    if e.scaling is not None and e.scaling.single_scale:
        only = e.scaling.rows[0].nodes
        which = e.scaling.another_scale if only == 1 else \
            f"more node counts (ideally 1 node and one larger than {nodes(only)})"
        return (f"Measure {which}: "
                "one scale misses the goal and cannot tell which would meet it.")
    goal = e.goal
    if goal is not None and goal.fitted_meeting is not None:
        return (f"Measure {nodes(goal.fitted_meeting.nodes)}, where the USL fit says the goal is met "
                f"({duration(goal.fitted_meeting.time_s)} per run, fitted).")
    remedy = e.scaling.remedy if e.scaling and e.scaling.knee_cause else None
    cause = e.scaling.knee_cause if e.scaling else None
    if e.crowded:  # the slowdown there is contention for cores: no remedy of the design applies to it
        return (f"Measure {listed([nodes(p) for p in e.crowded])} again with a core per rank (on more machines): "
                "those runs are oversubscribed, so their loss is contention, not the design's; no measured scale "
                "meets the goal.")
    if remedy:
        return f"Cut the {cause} loss before adding nodes ({remedy}), then measure again: no measured scale meets " \
               "the goal."
    return "Reduce the time lost at scale before adding nodes, then measure again: no measured scale meets the goal."


def _fitted_plan_meets(e: Evidence) -> bool:
    """The plan was not measured, and the USL fit says it meets the goal."""
    if e.serving is not None:
        return bool(e.serving.plan_row and e.serving.plan_row.capacity_source == "fitted" and e.serving.met_at_plan)
    return e.goal is not None and any(check.met for check in e.goal.fitted_at_plan)


def _plan_not_measured(e: Evidence) -> str:
    if e.next_runs:
        return planner_words(e.next_runs[0], e.currency)
    return f"Measure the plan's scale, {nodes(e.plan)}: its time and cost are not evidenced."


def planner_words(run: NextRun, currency: str) -> str:
    """"Measure 16 nodes twice (2.1 node-hours, 115 USD): the chance that the verdict is wrong falls from 38 % to
    6 %" (methods.md#the-measurement-planner)."""
    times = {1: "once", 2: "twice"}.get(run.repeats, f"{run.repeats} times")
    cost = f", {money(run.cost, currency)}" if run.cost is not None else ""
    return (f"Measure {nodes(run.nodes)} {times} ({number(run.node_hours)} node-hours{cost}): the chance that the "
            f"verdict at the plan is wrong falls from {percent(run.p_wrong_before)} to "
            f"{percent(run.p_wrong_after)}.")


def _single_scale(e: Evidence) -> str:
    which = e.scaling.another_scale if e.scaling else "another node count, ideally 1 node"
    return f"Measure {which}: with one scale there is no speedup to judge."


def _measure_collectives(e: Evidence) -> str:
    where = f" at the planned {nodes(e.plan)}" if e.plan else ""
    return f"Measure the collectives{where} and refit α and β (prediction.use_fit): the model does not describe " \
           "the measured system."


def _noisy(e: Evidence) -> str:
    rows = [r for r in e.scaling.rows if r.noisy] if e.scaling else []
    return f"Repeat the runs at {listed([nodes(r.nodes) for r in rows]) or 'the noisy scales'}: their intervals are " \
           "too wide to trust a change there."


def _tax_binds(e: Evidence) -> str:
    limit = e.prediction.p_comm_dominated if e.prediction else None
    workers = f"at most {limit}" if limit else "fewer"
    return f"Go back to the diagnosis with {workers} workers: the communication tax has become the binding ceiling."


def _checkpoint_interval(e: Evidence) -> str:
    declared = e.reliability.declared if e.reliability else None
    if declared is None:
        return "Set the checkpoint interval near Daly's optimum."
    return (f"Checkpoint every {duration(declared.optimal_interval_s)} (Daly's interval) instead of "
            f"{duration(declared.interval_s)}: the overhead falls from {percent(declared.overhead_fraction)} to "
            f"{percent(declared.optimal_overhead_fraction)}.")


def _past_optimum(e: Evidence) -> str:
    star = e.prediction.p_star if e.prediction else None
    return f"Plan at most the model's optimum of {nodes(star)}, or measure past it to show the model wrong."


def _text(message: str) -> Callable[[Evidence], str]:
    return lambda _: message


@dataclass(frozen=True)
class Action:
    rank: Rank
    code: str
    general: str  # the action as the methodology's table states it
    specific: Callable[[Evidence], str]  # the action as page 1 states it, with this project's numbers


def _fixed(rank: Rank, code: str, text: str) -> Action:
    return Action(rank, code, text, _text(text))


# code → the action it calls for, by rank, then in priority order within a rank
ACTIONS: tuple[Action, ...] = (
    # 1: the design cannot start
    Action(1, "wrong-axis", "Change design.axis to the diagnosed axis, or meet the device-level requirement it "
           "names.", _wrong_axis),
    _fixed(1, "replica-cannot-fit", "Shard the model (partitioning: shard model): its state does not fit one "
           "device."),
    _fixed(1, "layout-size", "Make data × tensor × pipeline equal design.nodes × devices_per_node."),
    _fixed(1, "layout-expert", "Make the expert-parallel degree divide the data-parallel degree."),
    _fixed(1, "layout-does-not-fit", "Raise the ZeRO stage or the data-parallel degree until the memory per device "
           "fits."),
    _fixed(1, "replica-exceeds-node", "Quantize the model or shorten the KV cache: one replica needs more devices "
           "than a node has."),
    _fixed(1, "too-few-nodes", "Request at least the nodes a perfect shard of the state needs."),
    _fixed(1, "checkpoint-storm", "Cut the checkpoint cost or the node count: the system would spend its life "
           "checkpointing."),
    # 2: the plan against the evidence
    Action(2, "plan-past-peak", "Plan the faster, smaller measured scale.", _plan_past_peak),
    Action(2, "plan-misses-goal", "Plan the cheapest measured point that meets the goal.", _plan_misses),
    Action(2, "goal-unmet", "Measure the scale the USL fit says meets the goal; else cut the loss the knee cause "
           "names (a service: cut the p99, or add replicas).", _goal_unmet),
    Action(2, "plan-not-measured", "Measure the plan's scale.", _plan_not_measured),
    Action(2, "tax-binds", "Go back to the diagnosis with at most p_dom workers.", _tax_binds),
    # 3: measurements that cannot be right
    Action(3, "implausible-speedup", "Check the run named (a unit slip, or a smaller problem?), or state the reason "
           "in scaling.superlinear.", _implausible),
    Action(3, "slower-than-serial", "Check the parallel runs for contention, a fixed start-up or a different "
           "workload: they are slower than any serial fraction explains.", _slower_than_serial),
    Action(3, "outlier", "Re-measure the run named.", _outlier),
    Action(3, "outlier-repeat", "Re-measure the repeat named, or find what disturbed it.", _outlier_repeat),
    _fixed(3, "memory-model-refuted", "Correct the memory model's inputs (the experts, the bytes per parameter, the "
           "activations) so that it agrees with the runs that were measured."),
    _fixed(3, "implausible-energy", "Check the energy meter's scope and the machines it stands for (measure "
           "--machines), then measure that run's energy again: it cannot be right."),
    _fixed(3, "implausible-collective", "Check the collective's message size and time, then measure it again "
           "(reportgen ingest nccl-tests): it beats its link."),
    _fixed(3, "implausible-throughput", "Check the load test's unit and its replicas, then run it again: it serves "
           "more than its replicas can."),
    _fixed(3, "failed-requests", "Find why the load test's requests failed, then run it again: its figures are "
           "those of the requests that succeeded."),
    _fixed(3, "rate-not-reached", "Run the load test again at a rate the client can offer (more clients, a higher "
           "concurrency): it did not reach the rate it asked for."),
    _fixed(3, "oversubscribed", "Run at most one rank per core (or device), or on more machines: the runs share "
           "hardware."),
    # 4: the model against the measurements
    _fixed(4, "bad-fit", "Re-measure the collectives: the model fitted to them gives a negative α or β."),
    Action(4, "fit-disagrees", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action(4, "comm-share-departs", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action(4, "below-prediction", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    # 5: noise, then the rest
    Action(5, "noisy", "Repeat the runs at the noisy scales.", _noisy),
    Action(5, "past-optimum", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action(5, "comm-dominated", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action(5, "checkpoint-interval", "Checkpoint at Daly's interval.", _checkpoint_interval),
    _fixed(5, "spot-model-out-of-range", "Checkpoint more often or run fewer nodes on spot: preemptions take more "
           "than half the run there."),
    _fixed(5, "sync-without-straggler-plan", "Add straggler mitigation (backup tasks, rebalancing) to the "
           "load_balancing slot: idle time at the barriers is large."),
    _fixed(5, "allreduce-needs-replica", "Use all-gather and reduce-scatter (scatter-gather) for the sharded state."),
    _fixed(5, "tensor-across-nodes", "Keep tensor parallelism within a node (at most devices_per_node); span nodes "
           "with pipeline or data parallelism."),
    _fixed(5, "needless-model-split", "Keep the model whole: it fits one device and the ceiling is compute."),
    _fixed(5, "above-roof", "Check the profiled step's flops, bytes and time: it beats the roof."),
    _fixed(5, "unjustified-slot", "Justify each design slot (its why)."),
    Action(5, "single-scale", "Measure another node count, ideally 1 node.", _single_scale),
    _fixed(5, "budget-not-judged", "Add the node-hour price (pricing.node_hour) so that the goal's budget can be "
           "judged."),
    _fixed(5, "no-goal", "State the goal (project.goal) so that the design can be judged against it."),
    _fixed(5, "no-plan", "State the planned node count (design.nodes) so that the goal can be judged at it."),
)
_BY_CODE = {action.code: (index, action) for index, action in enumerate(ACTIONS)}
NO_ACTION = "Keep the plan, and rebuild this report after the next measurements."


def next_action(findings: tuple[Finding, ...], evidence: Evidence) -> NextAction:
    """The action of the lowest-ranked finding that calls for one (ties: the more severe, then the earlier code in
    ACTIONS). An info never outranks a warning or an error: it states what the project leaves unsaid."""
    called = [f for f in findings if f.code in _BY_CODE]
    if not called:
        return NextAction("none", NO_ACTION)
    first = min(called, key=lambda f: (f.severity == "info", _BY_CODE[f.code][1].rank,
                                       SEVERITIES.index(f.severity), _BY_CODE[f.code][0]))
    action = _BY_CODE[first.code][1]
    return NextAction(first.code, action.specific(evidence), action.rank)
