"""Compare two revisions of a project: inputs, design slots, key results, findings. Pure: no I/O, no rendering.

Results are compared as the analyses' typed results (the `Analysis` of each revision), each key result read by a
typed accessor: a renamed or retyped result field fails the type check here, not a diff at run time.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol, TypeVar, get_args

from reportgen.analysis import Analysis, headline
from reportgen.analysis.common import beyond_noise, overlaps
from reportgen.analysis.findings import Finding, Severity
from reportgen.analysis.measured.scaling import ScaleRow, ScalingResult
from reportgen.analysis.page.prose.summary import state_words
from reportgen.analysis.verdict.decisions import DecisionResult
from reportgen.project.flatten import Leaf, Scalar, flatten
from reportgen.project.model import (
    OBJECTIVES,
    REGIME_PHRASES,
    SLOT_VOCABULARY,
    Objective,
    Project,
    RegimeName,
    Slot,
)
from reportgen.wording import counted, duration, nodes, quantity, signed_share, spread

Value = float | str | bool | None  # a key result: a number, a name, a flag, or None (absent, or none in range)
Verdict = Literal["better", "worse", "within noise", "changed", "same"]
Better = Literal["higher", "lower", "true"]  # which way a key result improves ("true": a flag becoming true)
# how a key result is shown
Kind = Literal["nodes", "number", "money", "kg", "seconds", "bytes", "text", "flag", "count", "regime"]
Interval = tuple[float, float]


@dataclass(frozen=True)
class InputChange:
    path: str
    old: str | None  # the value as a person writes it, with its unit ("50.0 GB/s"); None: absent in that revision
    new: str | None
    unit: str  # the SI unit of the field ("B/s"), for scripts
    change: float | None  # relative change (new − old) / |old| for numbers
    within_noise: bool | None = None  # repeated runs: their 95 % intervals overlap (None: not a distribution)


@dataclass(frozen=True)
class SlotChange:
    slot: str
    old_choice: str | None
    new_choice: str | None
    old_why: str | None
    new_why: str | None
    fields: tuple[str, ...]  # what changed: choice, detail, why, rejected (or the whole slot: added, removed)
    old_changed: str = ""  # the changed fields' old values ("detail: FSDP within the node"), so the change shows
    new_changed: str = ""


@dataclass(frozen=True)
class ResultChange:
    name: str  # stable key, e.g. "p_star"
    label: str  # for people
    kind: Kind
    old: Value
    new: Value
    delta: float | None  # new − old, for numbers
    relative: float | None  # delta / |old|
    verdict: Verdict


@dataclass(frozen=True)
class DiffResult:
    old_label: str
    new_label: str
    currency: str
    inputs: tuple[InputChange, ...]  # changed inputs only
    unchanged_inputs: int
    slots: tuple[SlotChange, ...]
    results: tuple[ResultChange, ...]  # every key result, changed or not
    appeared: tuple[Finding, ...]  # findings only the new revision has
    resolved: tuple[Finding, ...]  # findings only the old revision had
    findings: tuple[Finding, ...] = ()  # the comparison's own findings (reference-moved)
    # page 1's change from both revisions' facts: "page 1: not judged → the time goal is met at 16 nodes" (null when
    # page 1's state and next action are the same)
    page_one: str | None = None

    @property
    def changed_results(self) -> tuple[ResultChange, ...]:
        return tuple(r for r in self.results if r.verdict != "same")

    @property
    def unchanged_results(self) -> tuple[ResultChange, ...]:
        return tuple(r for r in self.results if r.verdict == "same")

    @property
    def worse(self) -> tuple[ResultChange, ...]:
        return tuple(r for r in self.results if r.verdict == "worse")

    @property
    def identical(self) -> bool:
        return not (self.inputs or self.slots or self.changed_results or self.appeared or self.resolved)


# ------------------------------------------------------------------------------------------------- key results
class _AtScale(Protocol):
    @property
    def nodes(self) -> float: ...


Row = TypeVar("Row", bound=_AtScale)


def _row_at(rows: Sequence[Row], nodes: Value) -> Row | None:
    """The row of a per-scale table at `nodes` (the scaling, cost and energy tables each have one per scale)."""
    return next((row for row in rows if row.nodes == nodes), None)


def _scale(analysis: Analysis, nodes: Value) -> ScaleRow | None:
    return _row_at(analysis.scaling.rows if analysis.scaling else (), nodes)


def _cost_at(analysis: Analysis, nodes: Value) -> float | None:
    row = _row_at(analysis.cost.rows if analysis.cost else (), nodes)
    return row.cost if row else None


def _co2_at(analysis: Analysis, nodes: Value) -> float | None:
    row = _row_at(analysis.energy.rows if analysis.energy else (), nodes)
    return row.co2_kg if row else None


def _peak(analysis: Analysis) -> ScaleRow | None:
    """The measured scale of the largest speedup."""
    return _scale(analysis, analysis.scaling.peak_nodes) if analysis.scaling else None


def _peak_speedup(analysis: Analysis) -> float | None:
    row = _peak(analysis)
    return row.speedup if row else None


def _cost_optimal(analysis: Analysis) -> int | None:
    return analysis.cost.cost_optimal_nodes if analysis.cost else None


def _fastest(analysis: Analysis) -> int | None:
    return analysis.cost.fastest_nodes if analysis.cost else None


def _recommended_nodes(analysis: Analysis) -> float | None:
    """The first deployment context's recommendation, else the cost-optimal scale."""
    decisions = analysis.decisions.decisions if analysis.decisions else ()
    if decisions and decisions[0].nodes is not None:
        return decisions[0].nodes
    return _cost_optimal(analysis)


def _count(analysis: Analysis, severity: Severity) -> int:
    return sum(1 for finding in analysis.findings if finding.severity == severity)


def _scale_interval(analysis: Analysis, nodes: Value, value: Value) -> Interval | None:
    """A value that scales with a measured scale's time (its time itself, a cost, an energy), bounded by that
    time's interval over the repeats; None when the scale was measured once."""
    row = _scale(analysis, nodes)
    if row is None or row.time_ci is None or not row.time_s or isinstance(value, bool) or \
            not isinstance(value, int | float):
        return None
    low, high = row.time_ci
    return value * low / row.time_s, value * high / row.time_s


def _peak_speedup_interval(analysis: Analysis, _value: Value) -> Interval | None:
    row = _peak(analysis)
    return row.speedup_ci if row else None


@dataclass(frozen=True)
class KeyResult:
    """One result a diff reports, and how to judge its change."""

    name: str  # stable key, e.g. "p_star"
    label: str
    kind: Kind
    better: Better | None  # None: a change is news, neither better nor worse
    read: Callable[[Analysis], Value]
    # measured over repeats: the value's interval (methods.md#tolerance), so that a change inside the noise is called so
    interval: Callable[[Analysis, Value], Interval | None] | None = None
    # a value at an operating point compares like with like only while the point stays: the cost at the fastest
    # scale rises whenever a faster, larger scale is measured, which is news, not a regression
    point: Callable[[Analysis], Value] | None = None
    none_is_infinite: bool = False  # a missing p_dom or knee means "none in range": better than any value


def _at_plan(regime: RegimeName, name: str) -> Callable[[Analysis], Value]:
    """A figure of page 1's verdict at the plan in one price regime (None where the regime is not stated)."""
    def read(analysis: Analysis) -> Value:
        document = headline(analysis)
        row = next((row for row in document.at_plan if row.regime == regime), None) if document else None
        value: Value = getattr(row, name) if row is not None else None
        return value

    return read


_REGIMES: tuple[tuple[RegimeName, str], ...] = tuple((name, REGIME_PHRASES[name]) for name in get_args(RegimeName))
def _regime_state(regime: RegimeName) -> Callable[[Analysis], Value]:
    """Page 1's state of one price regime at the plan (None where the regime is not stated)."""
    def read(analysis: Analysis) -> Value:
        regimes = analysis.summary.regimes if analysis.summary else ()
        return next((row.state for row in regimes if row.regime == regime), None)

    return read


def _next_action(analysis: Analysis) -> Value:
    action = analysis.summary.next_action if analysis.summary else None
    return f"{action.code}: {action.text}" if action is not None else None


# Page 1's headline: its state, per regime too, its next action, the verdict at the plan and its figures in each
# regime, failure tax included (a change of state or action is news, neither better nor worse)
HEADLINE: tuple[KeyResult, ...] = (
    KeyResult("summary_state", "page 1: the verdict's state", "text", None,
              lambda a: a.summary.state if a.summary else None),
    *(KeyResult(f"summary_state_{regime}", f"page 1: the verdict's state {words}", "text", None,
                _regime_state(regime)) for regime, words in _REGIMES),
    KeyResult("next_action", "page 1: the next action", "text", None, _next_action),
    KeyResult("goal_met_at_plan", "page 1: the goal met at the plan", "flag", "true",
              lambda a: document.met_at_plan if (document := headline(a)) else None),
    *(KeyResult(f"plan_time_{regime}", f"page 1: time per run at the plan {words}", "seconds", "lower",
                _at_plan(regime, "time_s")) for regime, words in _REGIMES),
    *(KeyResult(f"plan_cost_{regime}", f"page 1: cost per run at the plan {words}", "money", "lower",
                _at_plan(regime, "cost")) for regime, words in _REGIMES),
    *(KeyResult(f"plan_cost_per_hour_{regime}", f"page 1: cost per hour at the plan {words} (a service)", "money",
                "lower", _at_plan(regime, "cost_per_hour")) for regime, words in _REGIMES),
)

# a measured cost differs from page 1's where the failure tax is folded into page 1's: the label says why
AS_MEASURED = ", as measured (page 1's figures include any failure tax)"

KEY_RESULTS: tuple[KeyResult, ...] = (
    *HEADLINE,
    KeyResult("binding_ceiling", "binding ceiling", "text", None,
              lambda a: a.diagnosis.binding_ceiling if a.diagnosis else None),
    KeyResult("axis", "diagnosed axis", "text", None, lambda a: a.diagnosis.axis if a.diagnosis else None),
    KeyResult("declared_axis", "declared axis", "text", None,
              lambda a: a.diagnosis.declared_axis if a.diagnosis else None),
    KeyResult("axis_matches", "declared axis matches the diagnosis", "flag", "true",
              lambda a: a.diagnosis.axis_matches if a.diagnosis else None),
    KeyResult("p_star", "predicted optimum p*", "nodes", None, lambda a: a.prediction.p_star if a.prediction else None),
    KeyResult("speedup_at_p_star", "predicted speedup S(p*)", "number", "higher",
              lambda a: a.prediction.speedup_at_p_star if a.prediction else None),
    KeyResult("p_comm_dominated", "communication-dominated from p_dom", "nodes", "higher",
              lambda a: a.prediction.p_comm_dominated if a.prediction else None, none_is_infinite=True),
    KeyResult("knee_nodes", "knee of the measured curve", "nodes", "higher",
              lambda a: a.scaling.knee_nodes if a.scaling else None, none_is_infinite=True),
    KeyResult("knee_cause", "knee cause", "text", None, lambda a: a.scaling.knee_cause if a.scaling else None),
    KeyResult("peak_nodes", "scale of the largest measured speedup", "nodes", None,
              lambda a: a.scaling.peak_nodes if a.scaling else None),
    KeyResult("peak_speedup", "largest measured speedup", "number", "higher", _peak_speedup,
              interval=_peak_speedup_interval),
    KeyResult("cost_optimal_nodes", "cost-optimal node count", "nodes", None, _cost_optimal),
    KeyResult("cost_at_cost_optimal", f"cost at the cost-optimal point{AS_MEASURED}", "money", "lower",
              lambda a: _cost_at(a, _cost_optimal(a)),
              interval=lambda a, v: _scale_interval(a, _cost_optimal(a), v)),
    KeyResult("fastest_nodes", "fastest node count", "nodes", None, _fastest),
    KeyResult("cost_at_fastest", f"cost at the fastest point{AS_MEASURED}", "money", "lower",
              lambda a: _cost_at(a, _fastest(a)),
              interval=lambda a, v: _scale_interval(a, _fastest(a), v), point=_fastest),
    KeyResult("time_value_optimal_nodes", "optimum with time valued", "nodes", None,
              lambda a: a.cost.time_value_optimal_nodes if a.cost else None),
    KeyResult("co2_at_recommended", "CO2e at the recommended point", "kg", "lower",
              lambda a: _co2_at(a, _recommended_nodes(a)),
              interval=lambda a, v: _scale_interval(a, _recommended_nodes(a), v), point=_recommended_nodes),
    KeyResult("layout_fits", "declared layout fits one device", "flag", "true",
              lambda a: a.layout.fits if a.layout else None),
    KeyResult("layout_memory_per_device", "memory per device at the declared layout", "bytes", "lower",
              lambda a: a.layout.memory_per_device_b if a.layout else None),
    KeyResult("layout_step", "step time at the declared layout", "seconds", "lower",
              lambda a: a.layout.step.total_s if a.layout and a.layout.step else None),
    KeyResult("errors", "error findings", "count", "lower", lambda a: _count(a, "error")),
    KeyResult("warnings", "warning findings", "count", "lower", lambda a: _count(a, "warning")),
)


# Inputs whose numbers name a kind, not an amount: a change of them has no relative size
_NAMED_BY_NUMBER = frozenset({"design.parallelism.zero_stage"})


def _unless_noise(verdict: Verdict, old_interval: Interval | None, new_interval: Interval | None) -> Verdict:
    """A better or worse verdict becomes "within noise" when both values have intervals and they overlap."""
    if verdict not in ("better", "worse") or old_interval is None or new_interval is None:
        return verdict
    return "within noise" if overlaps(old_interval, new_interval) else verdict


def _verdict(better: Better | None, old: Value, new: Value, *, none_is_infinite: bool = False) -> Verdict:
    if old == new:
        return "same"
    if better is None or ((old is None or new is None) and not none_is_infinite):
        return "changed"
    if better == "true":
        return "better" if new is True else "worse"
    a = math.inf if old is None else old
    b = math.inf if new is None else new
    if isinstance(a, str) or isinstance(b, str):
        return "changed"
    improved = b > a if better == "higher" else b < a
    return "better" if improved else "worse"


def _numeric_change(old: object, new: object) -> tuple[float | None, float | None]:
    if isinstance(old, bool) or isinstance(new, bool) or not isinstance(old, int | float) or \
            not isinstance(new, int | float):
        return None, None
    delta = float(new) - float(old)
    return delta, (delta / abs(old) if old else None)


def compare_results(old: Analysis, new: Analysis) -> tuple[ResultChange, ...]:
    rows = []
    for key in KEY_RESULTS:
        a, b = key.read(old), key.read(new)
        moved = key.point is not None and key.point(old) != key.point(new)
        verdict = _verdict(None if moved else key.better, a, b, none_is_infinite=key.none_is_infinite)
        if key.interval is not None:
            verdict = _unless_noise(verdict, key.interval(old, a), key.interval(new, b))
        rows.append(ResultChange(key.name, key.label, key.kind, a, b, *_numeric_change(a, b), verdict))
    rows += _decision_changes(old, new)
    return tuple(rows)


# What each objective's value is called in a diff, and how it is shown: per run, or per hour of a service.
OBJECTIVE_VALUES: dict[Objective, tuple[str, Kind, str, str]] = {  # (key, kind, per run, per hour of service)
    "cost": ("cost", "money", "cost", "cost per hour"),
    "time": ("time_s", "seconds", "time", "p99 latency"),
    "carbon": ("co2_kg", "kg", "CO2e", "CO2e per hour"),
}
assert set(OBJECTIVE_VALUES) == set(OBJECTIVES)


def _decision_changes(old: Analysis, new: Analysis) -> list[ResultChange]:
    """Each deployment context's recommendation (matched by name) and the value of its objective."""
    before = {d.name: d for d in old.decisions.decisions} if old.decisions else {}
    after = {d.name: d for d in new.decisions.decisions} if new.decisions else {}
    serving = bool(new.decisions.serving) if new.decisions else False
    rows = []
    for name in [*before, *(n for n in after if n not in before)]:
        a, b = before.get(name), after.get(name)
        a_nodes, b_nodes = a.nodes if a else None, b.nodes if b else None
        rows.append(ResultChange(f"decision:{name}:nodes", f"{name}: recommended nodes", "nodes", a_nodes, b_nodes,
                                 *_numeric_change(a_nodes, b_nodes), "same" if a_nodes == b_nodes else "changed"))
        a_regime, b_regime = a.regime if a else None, b.regime if b else None
        if a_regime != b_regime:
            rows.append(ResultChange(f"decision:{name}:regime", f"{name}: price regime", "regime", a_regime, b_regime,
                                     None, None, "changed"))
        either = b or a
        objective: Objective = either.optimize if either else "cost"
        key, kind, per_run, per_hour = OBJECTIVE_VALUES[objective]
        x = _objective_value(a, objective)
        y = _objective_value(b, objective)
        verdict = _unless_noise(_verdict("lower", x, y), _scale_interval(old, a_nodes, x),
                                _scale_interval(new, b_nodes, y))
        rows.append(ResultChange(f"decision:{name}:{key}", f"{name}: {per_hour if serving else per_run}", kind, x, y,
                                 *_numeric_change(x, y), verdict))
    return rows


def _objective_value(decision: DecisionResult | None, objective: Objective) -> float | None:
    if decision is None:
        return None
    return {"cost": decision.cost, "time": decision.time_s, "carbon": decision.co2_kg}[objective]


# ----------------------------------------------------------------------------------------------------- inputs
# Lists whose items are measurements at a node count: matched by it, not by position, so that adding a run is one
# added run and not a shift of every run after it.
BY_NODES = ("scaling.runs", "prediction.collectives")


def _keyed_leaves(project: Project) -> dict[str, Leaf]:
    """The project's leaves by path, a measurement's index replaced by its node count: scaling.runs[nodes=8]."""
    names: dict[str, str] = {}
    for prefix in BY_NODES:
        section, field = prefix.split(".")
        items = getattr(getattr(project, section), field, ()) if getattr(project, section) else ()
        seen: dict[int, int] = {}
        for index, item in enumerate(items):  # the k-th repeat at a node count is its own measurement
            seen[item.nodes] = seen.get(item.nodes, 0) + 1
            repeat = f" #{seen[item.nodes]}" if seen[item.nodes] > 1 else ""
            names[f"{prefix}[{index}]"] = f"{prefix}[nodes={item.nodes}{repeat}]"
    keyed = {}
    for leaf in flatten(project, currency=project.currency):
        head, bracket, rest = leaf.path.partition("]")
        path = names.get(head + bracket, head + bracket) + rest if bracket else leaf.path
        keyed[path] = Leaf(path, leaf.value, leaf.unit)
    return keyed


def _measurement(path: str) -> str | None:
    """The measurement a leaf belongs to (scaling.runs[nodes=8]), or None for any other field."""
    head, bracket, _ = path.partition("]")
    return head + bracket if bracket and head.startswith(BY_NODES) and "[nodes=" in head else None


def _summary(leaves: list[Leaf]) -> str:
    return ", ".join(f"{leaf.path.rsplit('.', 1)[-1]} {leaf.written}" for leaf in leaves
                     if not leaf.path.endswith(".nodes"))


def compare_inputs(old: Project, new: Project, old_scaling: ScalingResult | None = None,
                   new_scaling: ScalingResult | None = None) -> tuple[tuple[InputChange, ...], int]:
    """Changed inputs, a measurement matched by its node count. Runs repeated at a node count (in either revision)
    are one distribution each: compared by their medians and intervals, never repeat #k against repeat #k."""
    repeated = _repeated_scales(old) | _repeated_scales(new)
    before = {p: leaf for p, leaf in _keyed_leaves(old).items() if _run_scale(p) not in repeated}
    after = {p: leaf for p, leaf in _keyed_leaves(new).items() if _run_scale(p) not in repeated}
    groups_before = {_measurement(p) for p in before} - {None}
    groups_after = {_measurement(p) for p in after} - {None}
    changes, same = [], 0
    reported: set[str] = set()
    for path in [*before, *(p for p in after if p not in before)]:
        group = _measurement(path)
        if group is not None and (group in groups_before) != (group in groups_after):
            if group not in reported:  # a measurement only one revision has: one change, all its values
                reported.add(group)
                side = before if group in groups_before else after
                shown = _summary([leaf for key, leaf in side.items() if _measurement(key) == group])
                changes.append(InputChange(group, shown if side is before else None,
                                           shown if side is after else None, "", None))
            continue
        a, b = before.get(path), after.get(path)
        if a is not None and b is not None and a.value == b.value:
            same += 1
            continue
        _, relative = _numeric_change(a.value if a else None, b.value if b else None)
        if path in _NAMED_BY_NUMBER:  # stage 1 → 3 is another stage, not "200 %" more of one
            relative = None
        unit = b.unit if b is not None else a.unit if a is not None else ""
        changes.append(InputChange(path, a.written if a else None, b.written if b else None, unit, relative))
    for scale in sorted(repeated):
        change = _distribution_change(scale, old, new, old_scaling, new_scaling)
        if change is None:
            same += 1
        else:
            changes.append(change)
    return tuple(changes), same


def _repeated_scales(project: Project) -> set[float]:
    counts = Counter(run.nodes for run in project.scaling.runs) if project.scaling else Counter()
    return {scale for scale, count in counts.items() if count > 1}


def _run_scale(path: str) -> float | None:
    """The node count of a scaling.runs leaf (scaling.runs[nodes=4 #2].time → 4), else None."""
    head, bracket, _ = path.partition("]")
    if not bracket or not head.startswith("scaling.runs[nodes="):
        return None
    return float(head.removeprefix("scaling.runs[nodes=").split()[0])


def _runs_at(project: Project, scale: float) -> list[tuple[tuple[str, Scalar | tuple[Scalar, ...]], ...]]:
    """The runs at one node count as an order-free multiset: each run's fields, the runs sorted."""
    runs = [run for run in project.scaling.runs if run.nodes == scale] if project.scaling else []
    return sorted(tuple((leaf.path, leaf.value) for leaf in flatten(run, currency=project.currency))
                  for run in runs)


def _distribution_change(scale: float, old: Project, new: Project, old_scaling: ScalingResult | None,
                         new_scaling: ScalingResult | None) -> InputChange | None:
    if _runs_at(old, scale) == _runs_at(new, scale):
        return None  # the same runs, in whatever order
    a = _row_at(old_scaling.rows, scale) if old_scaling else None
    b = _row_at(new_scaling.rows, scale) if new_scaling else None
    a_time, b_time = (a.time_s if a else None), (b.time_s if b else None)
    _, relative = _numeric_change(a_time, b_time)
    noise = overlaps(a.time_ci, b.time_ci) if a and b and a.time_ci and b.time_ci else None
    path = f"scaling.runs[nodes={scale:g}]"
    return InputChange(path, _distribution(a, old, scale), _distribution(b, new, scale), "s" if relative else "",
                       relative, noise)


def _distribution(row: ScaleRow | None, project: Project, scale: float) -> str | None:
    """Repeated runs as one distribution: "3 runs: median 1 h 55 min, 95 % interval [1 h 52 min, 2 h 31 min]"."""
    count = sum(1 for run in project.scaling.runs if run.nodes == scale) if project.scaling else 0
    if count == 0:
        return None
    runs = counted(count, "run")
    if row is None or row.time_s is None:
        return runs
    interval = f", {spread(count)} [{duration(row.time_ci[0], row.time_ci)}, {duration(row.time_ci[1], row.time_ci)}]" \
        if row.time_ci else ""
    return f"{runs}: median {duration(row.time_s)}{interval}"


SLOT_FIELDS = ("choice", "detail", "why", "rejected")


def compare_slots(old: Project, new: Project) -> tuple[SlotChange, ...]:
    changes = []
    for slot in SLOT_VOCABULARY:
        a = getattr(old.design.slots, slot) if old.design and old.design.slots else None
        b = getattr(new.design.slots, slot) if new.design and new.design.slots else None
        if a == b:
            continue
        fields = (("added",) if a is None else ("removed",) if b is None else
                  tuple(name for name in SLOT_FIELDS if getattr(a, name) != getattr(b, name)))
        changes.append(SlotChange(slot, " + ".join(a.choice) if a else None, " + ".join(b.choice) if b else None,
                                  a.why if a else None, b.why if b else None, fields,
                                  _slot_fields(a, fields), _slot_fields(b, fields)))
    return tuple(changes)


def _slot_fields(slot: Slot | None, fields: tuple[str, ...]) -> str:
    """The changed fields' values in one revision, so that a change shows what changed."""
    if slot is None:
        return "—"
    shown = []
    for name in fields if fields[0] not in ("added", "removed") else ("choice",):
        value = getattr(slot, name)
        if name == "choice":
            text = " + ".join(value)
        elif name == "rejected":
            text = "; ".join(f"{' + '.join(r.choice)}" + (f" ({r.why})" if r.why else "") for r in value) or "none"
        else:
            text = value or "none"
        shown.append(f"{name}: {text}")
    return "; ".join(shown)


REFERENCE_MOVED = 0.05  # without repeats, a reference time that moved by more than this is beyond noise


def reference_moved(old: Analysis, new: Analysis, inputs: tuple[InputChange, ...]) -> tuple[Finding, ...]:
    """reference-moved: the reference scale's time (or throughput) changed beyond noise between the revisions:
    the machine or the workload changed under the comparison, so speedups compare and times do not."""
    a, b = old.scaling, new.scaling
    if a is None or b is None or a.reference_nodes != b.reference_nodes:
        return ()
    x, y = a.rows[0], b.rows[0]
    throughput = a.form == "throughput" or b.form == "throughput"
    # the time's interval speaks for the time alone; a throughput is held to the tolerance
    before, after, intervals = (x.run.throughput, y.run.throughput, (None, None)) if throughput else \
        (x.time_s, y.time_s, (y.time_ci, x.time_ci))
    if not before or not after or not beyond_noise(after, before, *intervals, REFERENCE_MOVED):
        return ()
    shown = (f"{before:.4g}", f"{after:.4g}") if throughput else (quantity(before, "s"), quantity(after, "s"))
    explained = [c.path for c in inputs if c.path.startswith(("baseline.", "hardware.", "scaling.work_per_run"))]
    why = (f"; the project files differ at {', '.join(explained[:4])}, which may explain it" if explained else
           "; the project files do not differ where that would explain it, so the machine's load or the workload "
           "changed between the sessions")
    return (Finding("warning", "reference-moved", f"the reference run at {nodes(a.reference_nodes)} moved from "
                    f"{shown[0]} to {shown[1]} ({signed_share(after / before - 1)}) beyond noise{why}: compare "
                    "speedups and efficiencies, not times, and measure both revisions in one session, interleaved",
                    "scaling.runs", "measure"),)


def compare_findings(old: tuple[Finding, ...], new: tuple[Finding, ...]) -> tuple[tuple[Finding, ...],
                                                                            tuple[Finding, ...]]:
    """Findings only the new revision has, and those only the old one had, matched by code and field path."""
    before = {(f.code, f.path) for f in old}
    after = {(f.code, f.path) for f in new}
    return (tuple(f for f in new if (f.code, f.path) not in before),
            tuple(f for f in old if (f.code, f.path) not in after))


def compare(old_project: Project, old: Analysis, new_project: Project, new: Analysis, *, old_label: str,
            new_label: str) -> DiffResult:
    inputs, same = compare_inputs(old_project, new_project, old.scaling, new.scaling)
    appeared, resolved = compare_findings(old.findings, new.findings)
    moved = reference_moved(old, new, inputs)
    results = compare_results(old, new)
    if moved:  # times, and what is priced or powered by them, compare machines, not revisions
        results = tuple(replace(r, verdict="changed") if r.kind in ("seconds", "money", "kg") and
                        r.verdict in ("better", "worse") else r for r in results)
    return DiffResult(old_label, new_label, new_project.currency, inputs, same, compare_slots(old_project, new_project),
                      results, appeared, resolved, moved, page_change(old, new))


def page_change(old: Analysis, new: Analysis) -> str | None:
    """"page 1: not judged → the time goal is met at 16 nodes", from both revisions' page-1 facts; the next action
    too when it changed (None when neither did)."""
    before, after = old.summary, new.summary
    if before is None or after is None:
        return None
    parts = []
    if (before.state, before.why) != (after.state, after.why):
        parts.append(f"page 1: {state_words(before.state, old.page_one)} → {state_words(after.state, new.page_one)}")
    if (before.next_action.code, before.next_action.text) != (after.next_action.code, after.next_action.text):
        parts.append(f"next action: {after.next_action.text}")
    return "; ".join(parts) or None
