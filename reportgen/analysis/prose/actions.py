"""The one next action of page 1 (docs/methods.md#page-1-and-the-next-action): the step that most changes the
verdict, through a table that maps each finding code to its action and rank.

The ranks: (1) an error that stops the design; (2) a measurement the verdict rests on that cannot be right (a
slower-than-serial or oversubscribed run only when nothing measured explains it); (3) measuring the scale the
verdict rests on, when the plan is not judged or is judged from an extrapolation; (4) the goal's lever with the
smallest relative change (methods.md#the-goals-levers), or "out of reach of this design"; (5) the model against the
measurements; (6) noise, and every other finding that calls for an action. The lowest rank wins; within one rank the
more severe finding, then the code listed earlier. The methodology appendix and docs/methods.md print this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from reportgen.analysis.confidence import NextRun
from reportgen.analysis.diagnosis import DiagnosisResult
from reportgen.analysis.findings import SEVERITIES, Finding
from reportgen.analysis.goal import GoalResult
from reportgen.analysis.levers import Lever, Levers
from reportgen.analysis.peak import PastPeak, past_peak_words
from reportgen.analysis.plan_search import PlanSearchResult
from reportgen.analysis.prediction import PredictionResult
from reportgen.analysis.prose.levers import lever_action, out_of_reach
from reportgen.analysis.prose.plan import layout_words
from reportgen.analysis.reliability import ReliabilityResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.analysis.serving import ServingResult
from reportgen.keys import Key
from reportgen.project.model import REGIME_PHRASES
from reportgen.wording import duration, listed, money, nodes, number, percent, requests

Rank = Literal[1, 2, 3, 4, 5, 6]


@dataclass(frozen=True)
class NextAction:
    code: Annotated[str, Key("the finding code it comes from; none when no finding calls for one")]
    text: Annotated[str, Key("the action")]
    rank: Annotated[Rank | None, Key(
        "the order of methods.md#page-1-and-the-next-action: 1 an error that stops the design, 2 a measurement that "
        "cannot be right, 3 measuring the scale an unjudged or extrapolated plan rests on, 4 the goal's lever, 5 the "
        "model against the measurements, 6 noise and the rest; null without an action")] = None
    lever: Annotated[Lever | None, Key("the goal.levers entry the action comes from, or null")] = None


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
    crowded: tuple[float, ...] = ()  # node counts whose runs are oversubscribed
    next_runs: tuple[NextRun, ...] = ()  # the measurement planner's runs, best first
    levers: Levers = field(default_factory=Levers)  # the goal's levers (reportgen.analysis.levers)
    contended: tuple[float, ...] = ()  # node counts whose ranks_per_node exceeds the cores: measured contention
    plan_search: PlanSearchResult | None = None  # the layouts of the plan's devices, ranked

    @property
    def lever(self) -> Lever | None:
        """The feasible lever that meets a missed goal with the smallest relative change."""
        return next((lever for lever in self.levers.flips if lever.feasible and lever.meets), None)

    @property
    def plan_rests_on_extrapolation(self) -> bool:
        """The verdict at the plan is not judged, or rests on a fit beyond the measured scales (or one scale)."""
        if self.next_runs or (self.scaling is not None and self.scaling.single_scale):
            return True
        goal = self.goal
        return goal is not None and not goal.plan_measured and goal.plan_nodes is not None


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


def _goal_missed(e: Evidence) -> str:
    """A missed goal: the run that settles an unjudged or extrapolated plan (rank 3), else its lever (rank 4)."""
    if e.plan_rests_on_extrapolation:
        return _measure_the_plan(e)
    lever = e.lever
    if lever is not None:
        return lever_action(lever, e.levers, e.plan, e.currency)
    if e.crowded:  # the slowdown there is contention for cores: no lever of the design applies to it
        return (f"Measure {listed([nodes(p) for p in e.crowded])} again with a core per rank (on more machines): "
                "those runs are oversubscribed, so their loss is contention, not the design's.")
    if e.plan is None:  # no plan, no levers: what the evidence says limits every scale
        return _without_a_plan(e)
    return out_of_reach(e.levers, e.plan, e.currency)


def _without_a_plan(e: Evidence) -> str:
    serving = e.serving
    if serving is not None and serving.limited_by == "latency":
        return ("Cut the p99 latency before adding replicas, which have the capacity already: a lighter load per "
                "replica, fewer fan-out hops, hedged requests, batching or a smaller or quantized model.")
    if serving is not None:
        return ("Add replicas and load-test the scale that reaches "
                f"{requests(serving.capacity_needed_rps, serving.unit)}.")
    goal = e.goal
    if goal is not None and goal.fitted_meeting is not None:
        return (f"Measure {nodes(goal.fitted_meeting.nodes)}, where the USL fit says the goal is met "
                f"({duration(goal.fitted_meeting.time_s)} per run, fitted).")
    remedy = e.scaling.remedy if e.scaling and e.scaling.knee_cause else None
    if remedy and e.scaling is not None:
        return f"Cut the {e.scaling.knee_cause} loss ({remedy}), then measure again: no measured scale meets the goal."
    return "State the planned node count (design.nodes): the levers that would meet the goal are found at the plan."


def _measure_the_plan(e: Evidence) -> str:
    if e.next_runs:  # the plan is not measured and its verdict is in doubt: the run that best settles it
        return planner_words(e.next_runs[0], e.currency)
    if e.scaling is not None and e.scaling.single_scale:
        only = e.scaling.rows[0].nodes
        which = e.scaling.another_scale if only == 1 else \
            f"more node counts (ideally 1 node and one larger than {nodes(only)})"
        return f"Measure {which}: one scale cannot tell which would meet the goal."
    if _fitted_plan_meets(e):
        return (f"Measure the planned {nodes(e.plan)}: the USL fit says the goal is met there, but no measured scale "
                "meets it yet.")
    return f"Measure the planned {nodes(e.plan)}: its verdict rests on an extrapolation."


def _goal_missed_rank(e: Evidence) -> Rank:
    return 3 if e.plan_rests_on_extrapolation else 4


def _energy_rank(e: Evidence) -> Rank:
    """A time or cost goal's verdict never reads a run's energy (the goal states no CO2e limit): a meter that cannot
    be right comes after what that verdict rests on. Without a goal, the carbon-optimal choice does read it."""
    return 6 if e.goal is not None or e.serving is not None else 2


def _past_peak_rank(e: Evidence) -> Rank:
    """A faster and cheaper smaller scale comes before "out of reach", after a lever that meets the goal."""
    return 6 if e.lever is not None else 4


def _fitted_plan_meets(e: Evidence) -> bool:
    """The plan was not measured, and the USL fit says it meets the goal."""
    if e.serving is not None:
        return bool(e.serving.plan_row and e.serving.plan_row.capacity_source == "fitted" and e.serving.met_at_plan)
    return e.goal is not None and any(check.met for check in e.goal.fitted_at_plan)


def _plan_not_measured(e: Evidence) -> str:
    if e.next_runs:
        return planner_words(e.next_runs[0], e.currency)
    if e.serving is not None:  # a service's own terms: what it serves and how fast it answers, not a run
        return (f"Measure the plan's scale, {nodes(e.plan)}, with a load test: its capacity and p99 there are "
                "fitted, not measured.")
    return f"Measure the plan's scale, {nodes(e.plan)}: its time and cost are not evidenced."


def _better_layout(e: Evidence) -> str:
    search = e.plan_search
    if search is None or not search.best or search.declared is None or search.declared.gap is None:
        return "Measure the best layout the model finds at the plan's scale."
    best = search.best[0]
    return (f"Measure the best layout ({best.layout}, {layout_words(best)}) at the plan's scale: the model predicts "
            f"it {round(100 * search.declared.gap)} % faster.")


def _better_layout_rank(e: Evidence) -> Rank:
    """The layout lever: rank 4 when the best layout's time and cost per run would meet a goal the plan misses."""
    search, goal = e.plan_search, e.goal
    if search is None or not search.best or goal is None or goal.met_at_plan is not False:
        return 6
    best = search.best[0]
    time_ok = goal.time_limit_s is None or (best.time_per_run_s is not None
                                            and best.time_per_run_s <= goal.time_limit_s)
    cost_ok = goal.cost_limit is None or (best.cost_per_run is not None and best.cost_per_run <= goal.cost_limit)
    return 4 if time_ok and cost_ok else 6


def _layout_does_not_fit(e: Evidence) -> str:
    stage = next((lever for lever in e.levers.flips if lever.lever == "ZeRO stage" and lever.meets), None)
    if stage is not None:
        return lever_action(stage, e.levers, e.plan, e.currency)
    return "Raise the ZeRO stage or the data-parallel degree until the memory per device fits."


def _explained(code: str, e: Evidence) -> bool:
    """A slower-than-serial or oversubscribed run that something measured explains: a start-up measured at every
    slow scale, or more ranks per machine than cores (measured contention)."""
    if e.scaling is None:
        return False
    if code == "slower-than-serial":
        slow = e.scaling.slower_than_serial
        start_ups = {row.nodes for row in e.scaling.rows if (row.run.start_up or 0.0) > 0}
        return bool(slow) and all(p in start_ups or p in e.contended for p in slow)
    if code == "oversubscribed":
        return bool(e.contended) and set(e.crowded) <= set(e.contended)
    return False


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
    rank_of: Callable[[Evidence], Rank] | None = None  # where the rank depends on the evidence (a missed goal)

    def ranked(self, evidence: Evidence) -> Rank:
        if _explained(self.code, evidence):
            return 6
        return self.rank_of(evidence) if self.rank_of else self.rank


def _fixed(rank: Rank, code: str, text: str) -> Action:
    return Action(rank, code, text, _text(text))


_ENERGY = ("Check the energy meter's scope and the machines it stands for (measure --machines), then measure that "
           "run's energy again: it cannot be right.")
_MISSED = ("Measure the scale an unjudged or extrapolated plan rests on (rank 3); else take the feasible lever with "
           "the smallest relative change; else say the goal is out of reach of this design, with the two closest "
           "levers.")

# code → the action it calls for, by rank, then in priority order within a rank
ACTIONS: tuple[Action, ...] = (
    # 1: the design cannot start
    Action(1, "wrong-axis", "Change design.axis to the diagnosed axis, or meet the device-level requirement it "
           "names.", _wrong_axis),
    _fixed(1, "replica-cannot-fit", "Shard the model (partitioning: shard model): its state does not fit one "
           "device."),
    _fixed(1, "layout-size", "Make data × tensor × pipeline equal design.nodes × devices_per_node."),
    _fixed(1, "layout-expert", "Make the expert-parallel degree divide the data-parallel degree."),
    Action(1, "layout-does-not-fit", "Raise the ZeRO stage (its lever) or the data-parallel degree until the memory "
           "per device fits.", _layout_does_not_fit),
    _fixed(1, "replica-exceeds-node", "Quantize the model or shorten the KV cache: one replica needs more devices "
           "than a node has."),
    _fixed(1, "too-few-nodes", "Request at least the nodes a perfect shard of the state needs."),
    _fixed(1, "no-layout-fits", "Add devices, or memory per device: no layout of the plan's devices fits."),
    _fixed(1, "checkpoint-storm", "Cut the checkpoint cost or the node count: the system would spend its life "
           "checkpointing."),
    # 2: a measurement the verdict rests on that cannot be right
    Action(2, "implausible-speedup", "Check the run named (a unit slip, or a smaller problem?), or state the reason "
           "in scaling.superlinear.", _implausible),
    Action(2, "implausible-energy", _ENERGY[:-1] + " (6 when a time or cost goal is judged: its verdict does not "
           "read energy).", _text(_ENERGY), _energy_rank),
    _fixed(2, "implausible-collective", "Check the collective's message size and time, then measure it again "
           "(reportgen ingest nccl-tests): it beats its link."),
    _fixed(2, "implausible-throughput", "Check the load test's unit and its replicas, then run it again: it serves "
           "more than its replicas can."),
    Action(2, "outlier", "Re-measure the run named.", _outlier),
    Action(2, "outlier-repeat", "Re-measure the repeat named, or find what disturbed it.", _outlier_repeat),
    Action(2, "slower-than-serial", "Check the parallel runs for contention, a fixed start-up or a different "
           "workload (rank 6 when a measured start-up or ranks_per_node explains them).", _slower_than_serial),
    _fixed(2, "oversubscribed", "Run at most one rank per core (or device), or on more machines: the runs share "
           "hardware (rank 6 when ranks_per_node above the cores explains it)."),
    _fixed(2, "memory-model-refuted", "Correct the memory model's inputs (the experts, the bytes per parameter, the "
           "activations) so that it agrees with the runs that were measured."),
    _fixed(2, "efficiency-above-peak", "Check the runs' tokens, the FLOP count and the peak: the runs calibrate a "
           "share of the peak above one."),
    _fixed(2, "mfu-above-one", "Check the runs' tokens and the node's peak: a run cannot execute more than its "
           "peak (a unit slip, or tokens that are not the run's)."),
    _fixed(2, "failed-requests", "Find why the load test's requests failed, then run it again: its figures are "
           "those of the requests that succeeded."),
    _fixed(2, "rate-not-reached", "Run the load test again at a rate the client can offer (more clients, a higher "
           "concurrency): it did not reach the rate it asked for."),
    # 3: the scale the verdict rests on
    Action(3, "plan-not-measured", "Measure the plan's scale: the planner's best run.", _plan_not_measured),
    _fixed(3, "work-per-run-missing", "State the work of one run (scaling.work_per_run, in the throughput's unit): "
           "the runs are throughputs, so the goal per run cannot be judged without it."),
    # 4: the goal's levers
    Action(4, "plan-past-peak", "Plan the faster, smaller measured scale (6 when a lever meets a missed goal).",
           _plan_past_peak, _past_peak_rank),
    Action(4, "plan-misses-goal", _MISSED, _goal_missed, _goal_missed_rank),
    Action(4, "goal-unmet", _MISSED, _goal_missed, _goal_missed_rank),
    Action(4, "better-layout", "Measure the best layout the model finds at the plan's scale (6 when it would not "
           "meet a missed goal).", _better_layout, _better_layout_rank),
    # 5: the model against the measurements
    _fixed(5, "bad-fit", "Re-measure the collectives: the model fitted to them gives a negative α or β."),
    Action(5, "fit-disagrees", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action(5, "comm-share-departs", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action(5, "below-prediction", "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    # 6: noise, then the rest
    _fixed(5, "calibration-spread", "Measure the declared layout at another scale: the model misses a measured step "
           "by more than 10 %."),
    _fixed(5, "search-uncalibrated", "Measure one run at the declared layout, so that the search's times are "
           "calibrated."),
    Action(6, "noisy", "Repeat the runs at the noisy scales.", _noisy),
    Action(6, "tax-binds", "Go back to the diagnosis with at most p_dom workers.", _tax_binds),
    Action(6, "past-optimum", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action(6, "comm-dominated", "Plan at most the model's p*, or measure past it.", _past_optimum),
    Action(6, "checkpoint-interval", "Checkpoint at Daly's interval.", _checkpoint_interval),
    _fixed(6, "spot-model-out-of-range", "Checkpoint more often or run fewer nodes on spot: preemptions take more "
           "than half the run there."),
    _fixed(6, "sync-without-straggler-plan", "Add straggler mitigation (backup tasks, rebalancing) to the "
           "load_balancing slot: idle time at the barriers is large."),
    _fixed(6, "allreduce-needs-replica", "Use all-gather and reduce-scatter (scatter-gather) for the sharded state."),
    _fixed(6, "tensor-across-nodes", "Keep tensor parallelism within a node (at most devices_per_node); span nodes "
           "with pipeline or data parallelism."),
    _fixed(6, "needless-model-split", "Keep the model whole: it fits one device and the ceiling is compute."),
    _fixed(6, "layout-layers", "Give each pipeline stage (and virtual stage) the same number of layers, or accept "
           "the first stage's extra layers."),
    _fixed(6, "activation-model-departs", "Check the model's shape and the measured activations: the layer is not the "
           "one the activation model counts, so other layouts' memory is only scaled from this one."),
    _fixed(6, "above-roof", "Check the profiled step's flops, bytes and time: it beats the roof."),
    _fixed(6, "unjustified-slot", "Justify each design slot (its why)."),
    Action(6, "single-scale", "Measure another node count, ideally 1 node.", _single_scale),
    _fixed(6, "budget-not-judged", "Add the node-hour price (pricing.node_hour) so that the goal's budget can be "
           "judged."),
    _fixed(6, "no-goal", "State the goal (project.goal) so that the design can be judged against it."),
    _fixed(6, "no-plan", "State the planned node count (design.nodes) so that the goal can be judged at it."),
)
_BY_CODE = {action.code: (index, action) for index, action in enumerate(ACTIONS)}
NO_ACTION = "Keep the plan, and rebuild this report after the next measurements."


def next_action(findings: tuple[Finding, ...], evidence: Evidence) -> NextAction:
    """The action of the lowest-ranked finding that calls for one (ties: the more severe, then the earlier code in
    ACTIONS)."""
    called = [f for f in findings if f.code in _BY_CODE]
    if not called:
        return NextAction("none", NO_ACTION)
    first = min(called, key=lambda f: (_BY_CODE[f.code][1].ranked(evidence), SEVERITIES.index(f.severity),
                                       _BY_CODE[f.code][0]))
    action = _BY_CODE[first.code][1]
    return NextAction(first.code, action.specific(evidence), action.ranked(evidence), _lever_taken(action, evidence))


def _lever_taken(action: Action, e: Evidence) -> Lever | None:
    """The lever the action states, where it states one."""
    if action.code in ("plan-misses-goal", "goal-unmet") and not e.plan_rests_on_extrapolation:
        return e.lever
    if action.code == "layout-does-not-fit":
        return next((lever for lever in e.levers.flips if lever.lever == "ZeRO stage" and lever.meets), None)
    return None
