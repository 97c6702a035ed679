"""The one next action of page 1 (ANALYSES §7.1 item 4): taken from the most severe finding, through a table that
maps each finding code to the step that most changes the verdict.

The table is ordered: within one severity, a code listed earlier wins. Measurements that cannot be right come
first (every other number rests on them), then what makes the design fail, then the goal, then what is unmeasured,
then the model. The methodology appendix and docs/methods.md print this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reportgen.analysis.diagnosis import DiagnosisResult
from reportgen.analysis.findings import SEVERITIES, Finding
from reportgen.analysis.goal import GoalResult
from reportgen.analysis.prediction import PredictionResult
from reportgen.analysis.reliability import ReliabilityResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.analysis.serving import ServingResult
from reportgen.project.model import REGIME_PHRASES
from reportgen.wording import duration, listed, nodes, percent, requests


@dataclass(frozen=True)
class NextAction:
    code: str  # the finding code the action comes from; "none" when no finding calls for one
    text: str


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
    axis = e.diagnosis.axis if e.diagnosis else "the diagnosed axis"
    return f"Change design.axis to “{axis}”: the declared axis does not lift the binding ceiling."


def _plan_misses(e: Evidence) -> str:
    if e.serving is not None and e.serving.cheapest_meeting is not None:
        point = e.serving.cheapest_meeting
        return (f"Plan {nodes(point.nodes)}{_regime(point.regime)} instead of {nodes(e.plan)}: the cheapest measured "
                "point that meets the goal.")
    best = e.goal.cheapest_meeting if e.goal else None
    if best is None:
        return "Move the plan to a measured scale that meets the goal."
    return (f"Plan {nodes(best.nodes)}{_regime(best.regime)} instead of {nodes(e.plan)}: the cheapest measured point "
            f"that meets the goal ({duration(best.time_s)} per run).")


def _goal_unmet(e: Evidence) -> str:
    if _fitted_plan_meets(e):
        return (f"Measure the planned {nodes(e.plan)}: the USL fit says the goal is met there, but no measured scale "
                "meets it yet.")
    if e.serving is not None:
        serving = e.serving
        if serving.nodes_to_serve is not None and serving.nodes_to_serve_source == "fitted":
            return (f"Load-test {nodes(serving.nodes_to_serve)}, where the USL fit says the need of "
                    f"{requests(serving.capacity_needed_rps)} is met.")
        if serving.limited_by == "latency":
            return ("Cut the p99 latency before adding replicas: fewer fan-out hops, hedged requests, batching or "
                    "a smaller or quantized model.")
        bound = f" (at least {nodes(serving.nodes_lower_bound)} at the best capacity per node measured)" \
            if serving.nodes_lower_bound else ""
        return f"Add replicas{bound} and load-test the scale that reaches {requests(serving.capacity_needed_rps)}."
    if e.scaling is not None and e.scaling.single_scale:
        return (f"Measure more node counts (ideally 1 node and one larger than {nodes(e.scaling.rows[0].nodes)}): "
                "one scale misses the goal and cannot tell which would meet it.")
    goal = e.goal
    if goal is not None and goal.fitted_meeting is not None:
        return (f"Measure {nodes(goal.fitted_meeting.nodes)}, where the USL fit says the goal is met "
                f"({duration(goal.fitted_meeting.time_s)} per run, fitted).")
    remedy = e.scaling.remedy if e.scaling and e.scaling.knee_cause else None
    cause = e.scaling.knee_cause if e.scaling else None
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
    return f"Measure the plan's scale, {nodes(e.plan)}: its time and cost are not evidenced."


def _single_scale(e: Evidence) -> str:
    return "Measure another node count, ideally 1 node: with one scale there is no speedup to judge."


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
    code: str
    general: str  # the action as the methodology's table states it
    specific: Callable[[Evidence], str]  # the action as page 1 states it, with this project's numbers


def _fixed(code: str, text: str) -> Action:
    return Action(code, text, _text(text))


# code → the action it calls for, in priority order within a severity
ACTIONS: tuple[Action, ...] = (
    Action("implausible-speedup", "Check the run named (a unit slip, or a smaller problem?), or state the reason in "
           "scaling.superlinear.", _implausible),
    Action("outlier", "Re-measure the run named.", _outlier),
    Action("wrong-axis", "Change design.axis to the diagnosed axis.", _wrong_axis),
    _fixed("replica-cannot-fit", "Shard the model (partitioning: shard model): its state does not fit one device."),
    _fixed("too-few-nodes", "Request at least the nodes a perfect shard of the state needs."),
    _fixed("bad-fit", "Re-measure the collectives: the ring model fitted to them gives a negative α or β."),
    Action("plan-misses-goal", "Plan the cheapest measured point that meets the goal.", _plan_misses),
    Action("goal-unmet", "Measure the scale the USL fit says meets the goal; else cut the loss the knee cause "
           "names (a service: cut the p99, or add replicas).", _goal_unmet),
    _fixed("checkpoint-storm", "Cut the checkpoint cost or the node count: the system would spend its life "
           "checkpointing."),
    Action("tax-binds", "Go back to the diagnosis with at most p_dom workers.", _tax_binds),
    Action("fit-disagrees", "Measure the collectives at the planned scale and refit α and β.", _measure_collectives),
    Action("comm-share-departs", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action("below-prediction", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action("noisy", "Repeat the runs at the noisy scales.", _noisy),
    Action("past-optimum", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action("comm-dominated", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action("checkpoint-interval", "Checkpoint at Daly's interval.", _checkpoint_interval),
    _fixed("sync-without-straggler-plan", "Add straggler mitigation (backup tasks, rebalancing) to the "
           "load_balancing slot: idle time at the barriers is large."),
    _fixed("allreduce-needs-replica", "Use all-gather and reduce-scatter (scatter-gather) for the sharded state."),
    _fixed("needless-model-split", "Keep the model whole: it fits one device and the ceiling is compute."),
    _fixed("above-roof", "Check the profiled step's flops, bytes and time: it beats the roof."),
    _fixed("unjustified-slot", "Justify each design slot (its why)."),
    Action("plan-not-measured", "Measure the plan's scale.", _plan_not_measured),
    Action("single-scale", "Measure another node count, ideally 1 node.", _single_scale),
    _fixed("budget-not-judged", "Add the node-hour price (pricing.node_hour) so that the goal's budget can be "
           "judged."),
    _fixed("no-goal", "State the goal (project.goal) so that the design can be judged against it."),
    _fixed("no-plan", "State the planned node count (design.nodes) so that the goal can be judged at it."),
)
_BY_CODE = {action.code: (index, action) for index, action in enumerate(ACTIONS)}
NO_ACTION = "Keep the plan, and rebuild this report after the next measurements."


def next_action(findings: tuple[Finding, ...], evidence: Evidence) -> NextAction:
    """The action of the most severe finding that calls for one (ties: the earlier code in ACTIONS)."""
    called = [f for f in findings if f.code in _BY_CODE]
    if not called:
        return NextAction("none", NO_ACTION)
    first = min(called, key=lambda f: (SEVERITIES.index(f.severity), _BY_CODE[f.code][0]))
    return NextAction(first.code, _BY_CODE[first.code][1].specific(evidence))
