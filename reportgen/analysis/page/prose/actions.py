"""Page 1's actions in words (docs/methods.md#ways-considered): one text per candidate kind, and the table that maps
each finding code to its kind and its action. Which candidate is chosen is decided by reportgen.analysis.page.page_one,
never here: these functions only write a candidate's facts as a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reportgen.analysis.measured.confidence import NextRun, planner_runs
from reportgen.analysis.measured.diagnosis import DiagnosisResult
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.analysis.model.reliability import ReliabilityResult
from reportgen.analysis.page.prose.levers import lever_action, out_of_reach
from reportgen.analysis.page.prose.plan import layout_shape, layout_words
from reportgen.analysis.plan.plan_search import PlanSearchResult, RankedLayout
from reportgen.analysis.quotes import count_at, quote, quoting
from reportgen.analysis.verdict.goal import GoalCheck, GoalResult
from reportgen.analysis.verdict.lever_records import Lever, Levers
from reportgen.analysis.verdict.peak import PastPeak, past_peak_words
from reportgen.analysis.verdict.serving import ServingCheck, ServingResult
from reportgen.project.model import REGIME_PHRASES
from reportgen.wording import duration, listed, money, nodes, number, percent, requests


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
    past_peak: PastPeak | None = None  # the plan against the smaller measured scales (reportgen.analysis.verdict.peak)
    currency: str = "USD"
    crowded: tuple[float, ...] = ()  # node counts whose runs are oversubscribed
    next_runs: tuple[NextRun, ...] = ()  # the measurement planner's runs, best first
    levers: Levers = field(default_factory=Levers)  # the goal's levers (reportgen.analysis.verdict.levers)
    contended: tuple[float, ...] = ()  # node counts whose ranks_per_node exceeds the cores: measured contention
    plan_search: PlanSearchResult | None = None  # the layouts of the plan's devices, ranked
    load_tests: tuple[tuple[float, str], ...] = ()  # (scale, code) of each load test a finding flags


def _plan(e: Evidence, plan: float | None = None) -> float | None:
    """The planned node count, quoted from the goal section that holds it (`plan`: a count that may be it)."""
    if plan is not None and plan != e.plan:
        return _scale(e, plan)
    owner = e.serving if e.serving is not None else e.goal
    return quote(owner, "plan_nodes", "nodes") if owner is not None and owner.plan_nodes is not None else e.plan


def _rows(e: Evidence) -> Sequence[object]:
    """The rows a node count is quoted from: the measured scales (a service's, with its fitted ones)."""
    if e.serving is not None:
        return e.serving.rows
    return e.scaling.rows if e.scaling is not None else ()


def _scale(e: Evidence, count: float) -> float:
    """A node count, quoted from the row of that scale (the plan's from the goal)."""
    if e.plan is not None and count == e.plan:
        return _plan(e) or count
    return count_at(_rows(e), count)


def _regime(name: str | None) -> str:
    return f" {REGIME_PHRASES[name]}" if name else ""


def _implausible(e: Evidence) -> str:
    rows = e.scaling.implausible if e.scaling else ()
    where = listed([nodes(_scale(e, r.nodes)) for r in rows]) or "the flagged scale"
    return (f"Check the run at {where}: a speedup that far above ideal is more often a unit slip or a smaller "
            "problem than real; correct it, or state the reason in scaling.superlinear.")


def _outlier(e: Evidence) -> str:
    where = listed([nodes(_scale(e, o.nodes)) for o in e.scaling.outliers]) if e.scaling else "the flagged scale"
    return f"Re-measure the run at {where}: it departs more than twice from what the other scales predict."


def _wrong_axis(e: Evidence) -> str:
    d = e.diagnosis
    if d is not None and d.shard_within_node and d.node_axis is not None and d.declared_axis == d.node_axis:
        return (f"Shard the model within each node over at least {quote(d, 'min_devices')} devices (partitioning: "
                "shard model, with FSDP, ZeRO-3 or tensor parallelism): one replica does not fit one device, so the "
                "design cannot start as declared.")
    axis = d.axis if d else "the diagnosed axis"
    return f"Change design.axis to “{axis}”: the declared axis does not lift the binding ceiling."


def _slower_than_serial(e: Evidence) -> str:
    rows = e.scaling.slower_than_serial if e.scaling else ()
    where = listed([nodes(_scale(e, n)) for n in rows]) or "the flagged scales"
    return (f"Check the runs at {where} for contention, a fixed start-up or a different workload: they are slower "
            "than any serial fraction of the reference's work explains.")


def _outlier_repeat(e: Evidence) -> str:
    repeats = e.scaling.outlier_repeats if e.scaling else ()
    where = listed([f"{duration(quote(r, 'value', 's'))} at {nodes(quote(r, 'nodes', 'nodes'))}" for r in repeats]) \
        or "the flagged repeat"
    return f"Re-measure, or explain, the wild repeat ({where}): the median keeps it, the interval widens with it."


def _plan_past_peak(e: Evidence) -> str:
    peak = e.past_peak
    if peak is None:
        return "Plan the faster, smaller measured scale."
    return (f"Plan {nodes(_scale(e, peak.better_nodes))} instead of {nodes(_plan(e))}: "
            f"{past_peak_words(peak, e.currency)}.")



def _without_a_plan(e: Evidence) -> str:
    serving = e.serving
    if serving is not None and serving.limited_by == "latency":
        return ("Cut the p99 latency before adding replicas, which have the capacity already: a lighter load per "
                "replica, fewer fan-out hops, hedged requests, batching or a smaller or quantized model.")
    if serving is not None:
        return ("Add replicas and load-test the scale that reaches "
                f"{requests(quote(serving, 'capacity_needed_rps', 'requests/s'), serving.unit)}.")
    goal = e.goal
    if goal is not None and goal.fitted_meeting is not None:
        fit = goal.fitted_meeting
        return (f"Measure {nodes(quote(fit, 'nodes', 'nodes'))}, where the USL fit says the goal is met "
                f"({duration(quote(fit, 'time_s', 's'))} per run, fitted).")
    remedy = e.scaling.remedy if e.scaling and e.scaling.knee_cause else None
    if remedy and e.scaling is not None:
        return f"Cut the {e.scaling.knee_cause} loss ({remedy}), then measure again: no measured scale meets the goal."
    return "State the planned node count (design.nodes): the levers that would meet the goal are found at the plan."



def _plan_not_measured(e: Evidence) -> str:
    if planned := planner_runs(e.next_runs):
        return planner_words(planned[0], e.currency)
    if e.serving is not None:  # a service's own terms: what it serves and how fast it answers, not a run
        known = listed(["capacity", *(name for name, _ in e.serving.objective_words or (("p99", 0.0),))])
        return f"Measure the plan's scale, {nodes(_plan(e))}, with a load test: its {known} there are fitted, " \
            "not measured."
    return f"Measure the plan's scale, {nodes(_plan(e))}: its time and cost are not evidenced."


def _better_layout(e: Evidence) -> str:
    search = e.plan_search
    if search is None or not search.best or search.declared is None or search.declared.gap is None:
        return "Measure the best layout the model finds at the plan's scale."
    best = search.best[0]
    return (f"Measure the best layout ({layout_shape(best)}, {layout_words(best)}) at the plan's scale: the model "
            f"predicts the declared one's step {round(100 * quote(search.declared, 'gap', 'fraction'))} % longer.")



def _layout_does_not_fit(e: Evidence) -> str:
    stage = next((lever for lever in e.levers.flips if lever.lever == "ZeRO stage" and lever.meets), None)
    if stage is not None:
        return lever_action(stage, e.levers, _plan(e), e.currency)
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


@quoting
def planner_words(run: NextRun, currency: str) -> str:
    """"Measure 16 nodes twice (2.1 node-hours, 115 USD): the chance that the verdict is wrong falls from 38 % to
    6 %" (methods.md#the-measurement-planner)."""
    times = {1: "once", 2: "twice"}.get(run.repeats, f"{quote(run, 'repeats')} times")
    cost = f", {money(quote(run, 'cost', 'currency'), currency)}" if run.cost is not None else ""
    return (f"Measure {nodes(quote(run, 'nodes', 'nodes'))} {times} ({number(quote(run, 'node_hours', 'h'))} "
            f"node-hours{cost}): the chance that the verdict at the plan is wrong falls from "
            f"{percent(quote(run, 'p_wrong_before', 'fraction'))} to "
            f"{percent(quote(run, 'p_wrong_after', 'fraction'))}.")


@quoting
def requests_words(run: NextRun, currency: str) -> str:
    """"Send 5,344 requests at 10 request/s to 8 nodes (5 min 34 s, 1.2 USD): the 2,000 measured straddle the
    target; the chance that the verdict is wrong falls from 31 % to 5 %"
    (methods.md#a-service-judged-from-its-requests)."""
    load = f"{number(quote(run, 'load_per_s'))} request/s" if run.mode == "open" else \
        f"{number(quote(run, 'load_per_s'))} in flight"
    cost = f", {money(quote(run, 'cost', 'currency'), currency)}" if run.cost is not None else ""
    sent = f"{quote(run, 'requests_needed'):,} requests at {load}"
    what = f"Repeat the load test twice ({sent} in all)" if run.repeats == 2 else f"Send {sent}"
    why = ("near capacity one run understates its own spread" if run.repeats == 2 else
           f"the {quote(run, 'requests_have'):,} measured straddle the target")
    chance = (f"the chance that the verdict is wrong falls from {percent(quote(run, 'p_wrong_before', 'fraction'))}"
              f" to {percent(quote(run, 'p_wrong_after', 'fraction'))}" if run.p_wrong_after < run.p_wrong_before
              else f"the {percent(quote(run, 'p_wrong_before', 'fraction'))} chance that the verdict is wrong, read "
                   "from one run, is confirmed only by repeats")
    return (f"{what} to {nodes(quote(run, 'nodes', 'nodes'))} ({duration(quote(run, 'duration_s', 's'))}{cost}): "
            f"{why}; {chance}.")


def _single_scale(e: Evidence) -> str:
    """Another scale: one larger than 1 node, or 1 node and a larger one beside a single larger scale."""
    if e.scaling is None or not e.scaling.rows:
        return "Measure another node count, ideally 1 node: with one scale there is no speedup to judge."
    only = e.scaling.rows[0].nodes
    which = e.scaling.another_scale if only == 1 else \
        f"more node counts (ideally 1 node and one larger than {nodes(quote(e.scaling.rows[0], 'nodes', 'nodes'))})"
    why = "one scale cannot tell which would meet the goal" if e.goal is not None or e.serving is not None else \
        "with one scale there is no speedup to judge"
    return f"Measure {which}: {why}."


OBJECTIVE_UNKNOWN = ("Measure the objective at the plan's scale (a load test that records it): the verdict checks it "
                     "and it is not known there.")


def _objective_unknown(e: Evidence) -> str:
    """A plan load-tested with its requests kept, none of whose load points could be judged: load-tested again,
    below the lowest load that failed its checks, which are named (methods.md#load-points-and-capacity)."""
    serving = e.serving
    row = serving.plan_row if serving is not None else None
    if serving is None or row is None or not row.records_unjudged or serving.records is None:
        return OBJECTIVE_UNKNOWN
    failed = [point for point in serving.records.points if point.nodes == row.nodes and not point.valid
              and point.mode == "open" and point.offered_per_s is not None]
    if not failed:
        return OBJECTIVE_UNKNOWN
    lowest = min(failed, key=lambda point: point.offered_per_s or 0.0)
    codes = sorted({code for point in failed for code in point.findings})
    return (f"Load-test the plan's scale, {nodes(quote(row, 'nodes', 'nodes'))}, again below "
            f"{requests(quote(lowest, 'offered_per_s'))}: none of its load points could be judged from its requests "
            f"({listed(codes)}).")


def _measure_collectives(e: Evidence) -> str:
    where = f" at the planned {nodes(_plan(e))}" if e.plan else ""
    return f"Measure the collectives{where} and refit α and β (prediction.use_fit): the model does not describe " \
           "the measured system."


def _noisy(e: Evidence) -> str:
    rows = [r for r in e.scaling.rows if r.noisy] if e.scaling else []
    where = listed([nodes(quote(r, 'nodes', 'nodes')) for r in rows]) or 'the noisy scales'
    return f"Repeat the runs at {where}: their intervals are too wide to trust a change there."


def _tax_binds(e: Evidence) -> str:
    limit = quote(e.prediction, "p_comm_dominated", "nodes") if e.prediction else None
    workers = f"at most {limit}" if limit else "fewer"
    return f"Go back to the diagnosis with {workers} workers: the communication tax has become the binding ceiling."


def _checkpoint_interval(e: Evidence) -> str:
    """Daly's interval of the regime page 1 leads with (the goal's headline), as the finding quotes it."""
    reliability = e.reliability
    regime = e.goal.headline_regime() if e.goal is not None else None
    row = reliability.at_plan_in(regime) if reliability is not None else None
    if row is None or reliability is None or reliability.spec is None or \
            reliability.spec.checkpoint_interval is None:
        return "Set the checkpoint interval near Daly's optimum."
    where = f" {REGIME_PHRASES[row.regime]}" if row.regime else ""
    return (f"Checkpoint every {duration(quote(row, 'daly_interval_s', 's'))} (Daly's interval{where}) instead of "
            f"{duration(quote(row, 'interval_s', 's'))}: the overhead{where} falls from "
            f"{percent(quote(row, 'overhead_fraction', 'fraction'))} to "
            f"{percent(quote(row, 'daly_overhead_fraction', 'fraction'))}.")


def _past_optimum(e: Evidence) -> str:
    star = quote(e.prediction, "p_star", "nodes") if e.prediction else None
    return f"Plan at most the model's optimum of {nodes(star)}, or measure past it to show the model wrong."


def _text(message: str) -> Callable[[Evidence], str]:
    return lambda _: message



# ---------------------------------------------------------------------------------------------- per candidate kind
def explained(code: str, e: Evidence) -> bool:
    """A slower-than-serial or oversubscribed run that something measured explains (then it is advice)."""
    return _explained(code, e)


def load_test_scales(e: Evidence, code: str) -> list[float]:
    """The scales whose load test a finding of this code flags."""
    return [scale for scale, flagged in e.load_tests if flagged == code]


def _limits(goal: GoalResult | None) -> str:
    if goal is None:
        return "the goal"
    if goal.time_limit_s is not None and goal.cost_limit is not None:
        return "both limits"
    return "the time limit" if goal.time_limit_s is not None else "the budget"


def _figures(check: GoalCheck, currency: str) -> str:
    """"a run takes 1 h 20 min for 150 USD", or what of it is known."""
    time_s, cost = quote(check, "time_s", "s"), quote(check, "cost", "currency")
    if time_s is None:
        return f"{money(cost, currency)} a run" if cost is not None else ""
    return f"a run takes {duration(time_s)}" + (f" for {money(cost, currency)}" if cost is not None else "")


def _goal_work(check: GoalCheck) -> str:
    """Weak scaling: a smaller scale does the goal's work in several runs
    (docs/methods.md#weak-scaling-compares-equal-work)."""
    return f", in {quote(check, 'runs'):.3g} runs one after another for the goal's work" if check.runs > 1.0 else ""


@quoting
def measured_scale_text(check: GoalCheck, plan: int | None, e: Evidence) -> str:
    """"Plan 32 nodes instead of 16: measured, they meet both limits on spot (a run takes 1 h 20 min for 150 USD)."."""
    instead = f" instead of {nodes(_plan(e, plan))}" if plan is not None else " (design.nodes)"
    return (f"Plan {nodes(quote(check, 'nodes', 'nodes'))}{instead}: measured, they meet {_limits(e.goal)}"
            f"{_regime(check.regime)} ({_figures(check, e.currency)}{_goal_work(check)}).")


@quoting
def measured_service_text(point: ServingCheck, plan: int | None, e: Evidence) -> str:
    instead = f" instead of {nodes(_plan(e, plan))}" if plan is not None else " (design.nodes)"
    cost = f", for {money(quote(point, 'cost_per_hour', 'currency'), e.currency)} an hour" \
        if point.cost_per_hour is not None else ""
    return (f"Plan {nodes(quote(point, 'nodes', 'nodes'))}{instead}: measured, they serve the load within every "
            f"objective{_regime(point.regime)}{cost}.")


@quoting
def layout_text(layout: RankedLayout, check: GoalCheck, e: Evidence) -> str:
    """"Run the layout 8 × 16 × 12 (t × p × d, with ZeRO-1 …) at 192 nodes: the model puts a run on spot at … within
    both limits; then measure it."."""
    figures = _figures(check, e.currency)
    return (f"Run the layout {layout_shape(layout)} (t × p × d, with {layout_words(layout)}) at "
            f"{nodes(quote(layout, 'nodes', 'nodes'))}: by the model {figures}{_regime(check.regime)}, "
            f"within {_limits(e.goal)}; then measure it.")


@quoting
def fitted_scale_text(fit: GoalCheck, e: Evidence) -> str:
    return (f"Measure {nodes(quote(fit, 'nodes', 'nodes'))}, where the USL fit says the goal is met"
            f"{_regime(fit.regime)} ({_figures(fit, e.currency)}, fitted, not measured); then plan them.")


@quoting
def fitted_service_text(nodes_to_serve: float, e: Evidence) -> str:
    return (f"Load-test {nodes(_scale(e, nodes_to_serve))}, where the USL fit says the load is served within every "
            "objective (fitted, not measured); then plan them.")


@quoting
def repeat_text(plan: int, more: int, runs: int | None, runs_over: int | None, e: Evidence,
                check: GoalCheck | None = None) -> str:
    """"Measure 16 nodes 5 more times: 2 of 5 runs took longer than the 2 h limit" (the counts quoted from the
    plan's row, `check`, where there is one)."""
    goal = e.goal
    if check is not None and check.repeats is not None:
        runs = quote(check, "repeats")
        runs_over = quote(check, "runs_over") if check.runs_over is not None else runs_over
    times = {1: "once more", 2: "twice more"}.get(more, f"{runs if more == runs else more} more times")
    if runs_over and runs is not None and goal is not None and goal.time_limit_s is not None:
        why = f"{runs_over} of {runs} runs took longer than the {duration(quote(goal, 'time_limit_s', 's'))} limit"
    elif runs is not None and runs > 1:
        why = "the interval of its repeats straddles a limit, or their spread leaves the verdict in doubt"
    else:
        why = "one run leaves the verdict in doubt at the runs' noise"
    return f"Measure {nodes(_plan(e, plan))} {times}: {why}."


@quoting
def unjudged_scale_text(nodes_: float, e: Evidence) -> str:
    return (f"Measure {nodes(_scale(e, nodes_))}: the fit puts a run there within every limit, but its interval "
            "straddles one, so whether the goal is out of reach of this design is not yet known.")


@quoting
def contention_text(scales: Sequence[float], e: Evidence) -> str:
    return (f"Measure {listed([nodes(_scale(e, p)) for p in scales])} again with a core per rank (on more machines): "
            "those runs are oversubscribed, so their loss is contention, not the design's.")


@quoting
def lever_text(lever: Lever, e: Evidence) -> str:
    return lever_action(lever, e.levers, _plan(e) if e.plan else None, e.currency)


@quoting
def out_of_reach_text(e: Evidence, unreached: Sequence[str], beyond: tuple[float, str] | None) -> str:
    """The goal out of reach (docs/methods.md#the-order): the two closest levers, every objective no lever acts on,
    the scale that would meet but lies above the nodes available, and a faster and cheaper measured scale."""
    text = _without_a_plan(e) if e.plan is None else out_of_reach(e.levers, _plan(e), e.currency)
    if unreached:
        objectives = listed(list(unreached))
        text += f" No lever of the design acts on the {objectives} objective{'s' if len(unreached) > 1 else ''}."
    if beyond is not None:
        scale, how = beyond
        text += f" {how.capitalize()} {nodes(_scale(e, scale))} would meet it, beyond the nodes available."
    if e.past_peak is not None:
        text += (f" Meanwhile, {past_peak_words(e.past_peak, e.currency)}: plan "
                 f"{nodes(_scale(e, e.past_peak.better_nodes))}.")
    return text


# ------------------------------------------------------------------------------------------------------ the table
Kinds = Literal["fix-design", "fix-evidence", "measured-scale", "layout", "fitted-scale", "measure", "lever",
                "out-of-reach", "advice"]


@dataclass(frozen=True)
class Action:
    code: str
    kinds: tuple[Kinds, ...]  # the candidate kinds it can answer (docs/methods.md#ways-considered)
    general: str  # the action as the methodology's table states it
    specific: Callable[[Evidence], str]  # the action as page 1 states it, with this project's numbers


def _fixed(code: str, kinds: tuple[Kinds, ...], text: str) -> Action:
    return Action(code, kinds, text, _text(text))


_ENERGY = ("Check the energy meter's scope and the machines it stands for (measure --machines), then measure that "
           "run's energy again: it cannot be right.")
_MISSED = ("A measured or fitted scale that meets it; else the smallest feasible lever; else say the goal is out of "
           "reach of this design, with the two closest levers.")
_DESIGN: tuple[Kinds, ...] = ("fix-design",)
_EVIDENCE: tuple[Kinds, ...] = ("fix-evidence", "advice")
_ADVICE: tuple[Kinds, ...] = ("advice",)
_MEASURE: tuple[Kinds, ...] = ("measure",)

# code → its kinds and its action, in the table's order (the last tie rule of every rank)
ACTIONS: tuple[Action, ...] = (
    Action("wrong-axis", ("fix-design", "advice"), "Change design.axis to the diagnosed axis, or meet the "
           "device-level requirement it names (advice, effect unknown, off the memory-capacity wall).", _wrong_axis),
    _fixed("replica-cannot-fit", _DESIGN, "Shard the model (partitioning: shard model): its state does not fit one "
           "device."),
    _fixed("layout-size", _DESIGN, "Make data × tensor × pipeline equal design.nodes × devices_per_node."),
    _fixed("layout-expert", _DESIGN, "Make the expert-parallel degree divide the data-parallel degree."),
    Action("layout-does-not-fit", _DESIGN, "Raise the ZeRO stage (its lever) or the data-parallel degree until the "
           "memory per device fits.", _layout_does_not_fit),
    _fixed("replica-exceeds-node", _DESIGN, "Quantize the model or shorten the KV cache: one replica needs more "
           "devices than a node has."),
    _fixed("too-few-nodes", _DESIGN, "Request at least the nodes a perfect shard of the state needs."),
    _fixed("no-layout-fits", _DESIGN, "Add devices, or memory per device: no layout of the plan's devices fits."),
    _fixed("checkpoint-storm", ("fix-design", "advice"), "Cut the checkpoint cost or the node count: the system would "
           "spend its life checkpointing (advice when the storm is at other scales only)."),
    Action("implausible-speedup", _EVIDENCE, "Check the run named (a unit slip, or a smaller problem?), or state the "
           "reason in scaling.superlinear.", _implausible),
    Action("implausible-energy", _EVIDENCE, _ENERGY[:-1] + " (only a carbon decision or limit rests on it).",
           _text(_ENERGY)),
    _fixed("implausible-collective", _EVIDENCE, "Check the collective's message size and time, then measure it "
           "again (reportgen ingest nccl-tests): it beats its link."),
    _fixed("implausible-throughput", _EVIDENCE, "Check the load test's unit and its replicas, then run it again: it "
           "serves more than its replicas can."),
    Action("outlier", _EVIDENCE, "Re-measure the run named.", _outlier),
    Action("outlier-repeat", _EVIDENCE, "Re-measure the repeat named, or find what disturbed it.", _outlier_repeat),
    Action("slower-than-serial", _EVIDENCE, "Check the parallel runs for contention, a fixed start-up or a different "
           "workload (advice when a measured start-up or ranks_per_node explains them).", _slower_than_serial),
    _fixed("oversubscribed", _EVIDENCE, "Run at most one rank per core (or device), or on more machines: the runs "
           "share hardware (advice when ranks_per_node above the cores explains it)."),
    _fixed("memory-model-refuted", _EVIDENCE, "Correct the memory model's inputs (the experts, the bytes per "
           "parameter, the activations) so that it agrees with the runs that were measured."),
    _fixed("efficiency-above-peak", _EVIDENCE, "Check the runs' tokens, the FLOP count and the peak: the runs "
           "calibrate a share of the peak above one."),
    _fixed("mfu-above-one", _EVIDENCE, "Check the runs' tokens and the node's peak: a run cannot execute more than "
           "its peak (a unit slip, or tokens that are not the run's)."),
    _fixed("failed-requests", _EVIDENCE, "Find why the load test's requests failed, then run it again: its figures "
           "are those of the requests that succeeded."),
    _fixed("rate-not-reached", _EVIDENCE, "Run the load test again at a rate the client can offer (more clients, a "
           "higher concurrency): it did not reach the rate it asked for."),
    _fixed("above-roof", ("fix-evidence",), "Check the profiled step's flops, bytes and time: it beats the roof, so "
           "the ridge, the ceiling and whether the design can start all rest on a profile that cannot be right."),
    Action("plan-misses-goal", ("measured-scale", "fitted-scale", "lever", "out-of-reach"), _MISSED, _text(_MISSED)),
    Action("goal-unmet", ("fitted-scale", "lever", "out-of-reach"), _MISSED, _text(_MISSED)),
    Action("plan-past-peak", ("measured-scale",), "Plan the faster, cheaper measured scale.", _plan_past_peak),
    Action("better-layout", ("layout", "advice"), "Run the best layout the model finds (advice when it meets no "
           "limit set in any regime).", _better_layout),
    Action("plan-not-measured", ("measured-scale", "measure"), "Measure the plan's scale: the planner's best run, "
           "when it is material.", _plan_not_measured),
    Action("plan-straddles", _MEASURE, "Measure the plan's scale again: its repeats straddle a limit.",
           _text("Measure the plan's scale again: its repeats straddle a limit.")),
    Action("single-scale", _MEASURE, "Measure another node count, ideally 1 node.", _single_scale),
    _fixed("work-per-run-missing", _MEASURE, "State the work of one run (scaling.work_per_run, in the throughput's "
           "unit): the runs are throughputs, so the goal per run cannot be judged without it."),
    _fixed("budget-not-judged", _MEASURE, "Add the node-hour price (pricing.node_hour) so that the goal's budget can "
           "be judged."),
    Action("objective-unknown", _MEASURE, OBJECTIVE_UNKNOWN, _objective_unknown),
    _fixed("no-goal", _MEASURE, "State the goal (project.goal) so that the design can be judged against it."),
    _fixed("model-demoted", _MEASURE, "Measure the planned scale: the fit that would judge it missed on published "
           "curves this far beyond the measurements."),
    _fixed("no-plan", _MEASURE, "State the planned node count (design.nodes) so that the goal can be judged at it."),
    _fixed("bad-fit", _ADVICE, "Re-measure the collectives: the model fitted to them gives a negative α or β."),
    Action("fit-disagrees", _ADVICE, "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action("comm-share-departs", _ADVICE, "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    Action("below-prediction", _ADVICE, "Measure the collectives at the planned scale and refit α and β.",
           _measure_collectives),
    _fixed("calibration-spread", _ADVICE, "Measure the declared layout at another scale: the model misses a measured "
           "step by more than 10 %."),
    _fixed("search-uncalibrated", _ADVICE, "Measure one run at the declared layout, so that the search's times are "
           "calibrated."),
    Action("noisy", _ADVICE, "Repeat the runs at the noisy scales.", _noisy),
    Action("tax-binds", _ADVICE, "Go back to the diagnosis with at most p_dom workers (dropped when the runs pass "
           "that bound).", _tax_binds),
    Action("past-optimum", _ADVICE, "Plan at most the model's p*, or measure past it (dropped when the runs pass "
           "it).", _past_optimum),
    Action("comm-dominated", _ADVICE, "Plan at most the model's p*, or measure past it (dropped when the runs pass "
           "p_dom).", _past_optimum),
    Action("checkpoint-interval", _ADVICE, "Checkpoint at Daly's interval.", _checkpoint_interval),
    _fixed("spot-model-out-of-range", _ADVICE, "Checkpoint more often or run fewer nodes on spot: preemptions take "
           "more than half the run there."),
    _fixed("sync-without-straggler-plan", _ADVICE, "Add straggler mitigation (backup tasks, rebalancing) to the "
           "load_balancing slot: idle time at the barriers is large."),
    _fixed("allreduce-needs-replica", _ADVICE, "Use all-gather and reduce-scatter (scatter-gather) for the sharded "
           "state."),
    _fixed("tensor-across-nodes", _ADVICE, "Keep tensor parallelism within a node (at most devices_per_node); span "
           "nodes with pipeline or data parallelism."),
    _fixed("needless-model-split", _ADVICE, "Keep the model whole: it fits one device and the ceiling is compute."),
    _fixed("layout-layers", _ADVICE, "Give design.parallelism.layers_per_stage where the stages differ from the "
           "split assumed, and virtual stages that divide each stage's layers."),
    _fixed("activation-model-departs", _ADVICE, "Check the model's shape and the measured activations: the layer is "
           "not the one the activation model counts, so other layouts' memory is only scaled from this one."),
    _fixed("unjustified-slot", _ADVICE, "Justify each design slot (its why)."),
)
_BY_CODE = {action.code: (index, action) for index, action in enumerate(ACTIONS)}


def has_action(code: str) -> bool:
    return code in _BY_CODE


def table_index(code: str) -> int:
    """The code's place in the table: the last tie rule of every rank."""
    return _BY_CODE[code][0] if code in _BY_CODE else len(ACTIONS)


@quoting
def finding_text(code: str, e: Evidence) -> str:
    """The action a finding calls for, with this project's numbers."""
    if code not in _BY_CODE:
        return ""
    return _BY_CODE[code][1].specific(e)
