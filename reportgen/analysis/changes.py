"""Compare two revisions of a project: inputs, design slots, key results, findings. Pure: no I/O, no rendering.

Results are read from the results.json documents (the contract), so a diff means exactly what scripts see.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reportgen.project.flatten import Leaf, flatten
from reportgen.project.model import SLOT_VOCABULARY, Project
from reportgen.wording import quantity

Json = dict[str, Any]


@dataclass(frozen=True)
class InputChange:
    path: str
    old: str | None  # the value as a person writes it, with its unit ("50.0 GB/s"); None: absent in that revision
    new: str | None
    unit: str  # the SI unit of the field ("B/s"), for scripts
    change: float | None  # relative change (new − old) / |old| for numbers


@dataclass(frozen=True)
class SlotChange:
    slot: str
    old_choice: str | None
    new_choice: str | None
    old_why: str | None
    new_why: str | None
    fields: tuple[str, ...]  # what changed: choice, detail, why, rejected (or the whole slot: added, removed)


@dataclass(frozen=True)
class ResultChange:
    name: str  # stable key, e.g. "p_star"
    label: str  # for people
    kind: str  # how to show the values: nodes, number, money, kg, seconds, text, flag, count, regime
    old: Any
    new: Any
    delta: float | None  # new − old, for numbers
    relative: float | None  # delta / |old|
    verdict: str  # better | worse | within noise | changed | same


@dataclass(frozen=True)
class DiffResult:
    old_label: str
    new_label: str
    currency: str
    inputs: tuple[InputChange, ...]  # changed inputs only
    unchanged_inputs: int
    slots: tuple[SlotChange, ...]
    results: tuple[ResultChange, ...]  # every key result, changed or not
    appeared: tuple[Json, ...]  # findings only the new revision has
    resolved: tuple[Json, ...]  # findings only the old revision had

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
def _get(document: Json, *keys: str) -> Any:
    value: Any = document
    for key in keys:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return value


def _row_value(document: Json, section: str, nodes: Any, field: str) -> Any:
    rows = _get(document, section, "rows") or []
    return next((row.get(field) for row in rows if row.get("nodes") == nodes), None)


def _recommended_nodes(document: Json) -> Any:
    decisions = document.get("decisions") or []
    if decisions and decisions[0].get("nodes") is not None:
        return decisions[0]["nodes"]
    return _get(document, "cost", "cost_optimal_nodes")


def _count(document: Json, severity: str) -> int:
    return sum(1 for finding in document.get("findings") or [] if finding.get("severity") == severity)


# (name, label, kind, which direction is better: "higher", "lower", "true" or None, value from a document)
KEY_RESULTS: tuple[tuple[str, str, str, str | None, Callable[[Json], Any]], ...] = (
    ("binding_ceiling", "binding ceiling", "text", None, lambda d: _get(d, "diagnosis", "binding_ceiling")),
    ("axis", "diagnosed axis", "text", None, lambda d: _get(d, "diagnosis", "axis")),
    ("declared_axis", "declared axis", "text", None, lambda d: _get(d, "diagnosis", "declared_axis")),
    ("axis_matches", "declared axis matches the diagnosis", "flag", "true",
     lambda d: _get(d, "diagnosis", "axis_matches")),
    ("p_star", "predicted optimum p*", "nodes", None, lambda d: _get(d, "prediction", "p_star")),
    ("speedup_at_p_star", "predicted speedup S(p*)", "number", "higher",
     lambda d: _get(d, "prediction", "speedup_at_p_star")),
    ("p_comm_dominated", "communication-dominated from p_dom", "nodes", "higher",
     lambda d: _get(d, "prediction", "p_comm_dominated") if d.get("prediction") else None),
    ("knee_nodes", "knee of the measured curve", "nodes", "higher", lambda d: _get(d, "scaling", "knee_nodes")),
    ("knee_cause", "knee cause", "text", None, lambda d: _get(d, "scaling", "knee_cause")),
    ("peak_nodes", "scale of the largest measured speedup", "nodes", None, lambda d: _get(d, "scaling", "peak_nodes")),
    ("peak_speedup", "largest measured speedup", "number", "higher",
     lambda d: _row_value(d, "scaling", _get(d, "scaling", "peak_nodes"), "speedup")),
    ("cost_optimal_nodes", "cost-optimal node count", "nodes", None, lambda d: _get(d, "cost", "cost_optimal_nodes")),
    ("cost_at_cost_optimal", "cost at the cost-optimal point", "money", "lower",
     lambda d: _row_value(d, "cost", _get(d, "cost", "cost_optimal_nodes"), "cost")),
    ("fastest_nodes", "fastest node count", "nodes", None, lambda d: _get(d, "cost", "fastest_nodes")),
    ("cost_at_fastest", "cost at the fastest point", "money", "lower",
     lambda d: _row_value(d, "cost", _get(d, "cost", "fastest_nodes"), "cost")),
    ("time_value_optimal_nodes", "optimum with time valued", "nodes", None,
     lambda d: _get(d, "cost", "time_value_optimal_nodes")),
    ("co2_at_recommended", "CO2e at the recommended point", "kg", "lower",
     lambda d: _row_value(d, "energy", _recommended_nodes(d), "co2_kg")),
    ("errors", "error findings", "count", "lower", lambda d: _count(d, "error")),
    ("warnings", "warning findings", "count", "lower", lambda d: _count(d, "warning")),
)
# A missing p_dom or knee means "none in range": better than any value when higher is better.
NONE_MEANS_INFINITE = {"p_comm_dominated", "knee_nodes"}
# A value at an operating point compares like with like only while the point stays: the cost at the fastest scale
# rises whenever a faster, larger scale is measured, which is news, not a regression.
SAME_POINT = {"cost_at_fastest": "fastest_nodes", "co2_at_recommended": "recommended_nodes"}
POINTS: dict[str, Callable[[Json], Any]] = {"fastest_nodes": lambda d: _get(d, "cost", "fastest_nodes"),
                                            "recommended_nodes": lambda d: _recommended_nodes(d)}


def _scale_interval(document: Json, nodes: Any, value: Any) -> tuple[float, float] | None:
    """A value that scales with a measured scale's time (its time itself, a cost, an energy), bounded by that
    time's interval over the repeats; None when the scale was measured once."""
    rows = _get(document, "scaling", "rows") or []
    row = next((r for r in rows if r.get("nodes") == nodes), None)
    if row is None or not row.get("time_s_ci") or not isinstance(value, int | float) or not row.get("time_s"):
        return None
    low, high = row["time_s_ci"]
    return value * low / row["time_s"], value * high / row["time_s"]


def _peak_speedup_interval(document: Json, _value: Any) -> tuple[float, float] | None:
    interval = _row_value(document, "scaling", _get(document, "scaling", "peak_nodes"), "speedup_ci")
    return (interval[0], interval[1]) if interval else None


# Key results measured over repeats: the interval of each (§4.x), so that a change inside the noise is called so.
INTERVALS: dict[str, Callable[[Json, Any], tuple[float, float] | None]] = {
    "peak_speedup": _peak_speedup_interval,
    "cost_at_cost_optimal": lambda d, v: _scale_interval(d, _get(d, "cost", "cost_optimal_nodes"), v),
    "cost_at_fastest": lambda d, v: _scale_interval(d, _get(d, "cost", "fastest_nodes"), v),
    "co2_at_recommended": lambda d, v: _scale_interval(d, _recommended_nodes(d), v),
}


def _unless_noise(verdict: str, old_interval: tuple[float, float] | None,
                  new_interval: tuple[float, float] | None) -> str:
    """A better or worse verdict becomes "within noise" when both values have intervals and they overlap."""
    if verdict not in ("better", "worse") or old_interval is None or new_interval is None:
        return verdict
    overlap = old_interval[0] <= new_interval[1] and new_interval[0] <= old_interval[1]
    return "within noise" if overlap else verdict


def _verdict(name: str, better: str | None, old: Any, new: Any) -> str:
    if old == new:
        return "same"
    if better is None or (old is None and name not in NONE_MEANS_INFINITE) or (new is None and \
            name not in NONE_MEANS_INFINITE):
        return "changed"
    if better == "true":
        return "better" if new is True else "worse"
    a = math.inf if old is None else old
    b = math.inf if new is None else new
    if isinstance(a, str) or isinstance(b, str):
        return "changed"
    improved = b > a if better == "higher" else b < a
    return "better" if improved else "worse"


def _numeric_change(old: Any, new: Any) -> tuple[float | None, float | None]:
    if isinstance(old, bool) or isinstance(new, bool) or not isinstance(old, int | float) or \
            not isinstance(new, int | float):
        return None, None
    delta = float(new) - float(old)
    return delta, (delta / abs(old) if old else None)


def compare_results(old: Json, new: Json) -> tuple[ResultChange, ...]:
    rows = []
    for name, label, kind, better, extract in KEY_RESULTS:
        a, b = extract(old), extract(new)
        delta, relative = _numeric_change(a, b)
        point = POINTS[SAME_POINT[name]] if name in SAME_POINT else None
        moved = point is not None and point(old) != point(new)
        verdict = _verdict(name, None if moved else better, a, b)
        if name in INTERVALS:
            verdict = _unless_noise(verdict, INTERVALS[name](old, a), INTERVALS[name](new, b))
        rows.append(ResultChange(name, label, kind, a, b, delta, relative, verdict))
    rows += _decision_changes(old, new)
    return tuple(rows)


def _decision_changes(old: Json, new: Json) -> list[ResultChange]:
    """Each deployment context's recommendation (matched by name) and the value of its objective."""
    objective = {"cost": ("cost", "money"), "time": ("time_s", "seconds"), "carbon": ("co2_kg", "kg")}
    shown = {"cost": "cost", "time_s": "time", "co2_kg": "CO2e"}
    before = {d["name"]: d for d in old.get("decisions") or []}
    after = {d["name"]: d for d in new.get("decisions") or []}
    rows = []
    for name in [*before, *(n for n in after if n not in before)]:
        a, b = before.get(name, {}), after.get(name, {})
        rows.append(ResultChange(f"decision:{name}:nodes", f"{name}: recommended nodes", "nodes", a.get("nodes"),
                                 b.get("nodes"), *_numeric_change(a.get("nodes"), b.get("nodes")),
                                 "same" if a.get("nodes") == b.get("nodes") else "changed"))
        if a.get("regime") != b.get("regime") and (a.get("regime") or b.get("regime")):
            rows.append(ResultChange(f"decision:{name}:regime", f"{name}: price regime", "regime", a.get("regime"),
                                     b.get("regime"), None, None, "changed"))
        field, kind = objective.get(b.get("optimize") or a.get("optimize") or "", ("cost", "money"))
        x, y = a.get(field), b.get(field)
        verdict = _unless_noise(_verdict(field, "lower", x, y), _scale_interval(old, a.get("nodes"), x),
                                _scale_interval(new, b.get("nodes"), y))
        rows.append(ResultChange(f"decision:{name}:{field}", f"{name}: {shown[field]}",
                                 kind, x, y, *_numeric_change(x, y), verdict))
    return rows


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


def _shown(leaf: Leaf) -> str:
    """A leaf's value as a person writes it, with its unit: "50.0 GB/s", not "5e+10 B/s"."""
    return quantity(leaf.value, leaf.unit) if leaf.unit and isinstance(leaf.value, int | float) else leaf.shown


def _summary(leaves: list[Leaf]) -> str:
    return ", ".join(f"{leaf.path.rsplit('.', 1)[-1]} {_shown(leaf)}" for leaf in leaves
                     if not leaf.path.endswith(".nodes"))


def compare_inputs(old: Project, new: Project) -> tuple[tuple[InputChange, ...], int]:
    before, after = _keyed_leaves(old), _keyed_leaves(new)
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
        unit = b.unit if b is not None else a.unit if a is not None else ""
        changes.append(InputChange(path, _shown(a) if a else None, _shown(b) if b else None, unit, relative))
    return tuple(changes), same


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
                                  a.why if a else None, b.why if b else None, fields))
    return tuple(changes)


def compare_findings(old: Json, new: Json) -> tuple[tuple[Json, ...], tuple[Json, ...]]:
    def key(finding: Json) -> tuple[str, str]:
        return finding["code"], finding["path"]

    before = {key(f): f for f in old.get("findings") or []}
    after = {key(f): f for f in new.get("findings") or []}
    return (tuple(f for k, f in after.items() if k not in before),
            tuple(f for k, f in before.items() if k not in after))


def compare(old_project: Project, old: Json, new_project: Project, new: Json, *, old_label: str,
            new_label: str) -> DiffResult:
    inputs, same = compare_inputs(old_project, new_project)
    appeared, resolved = compare_findings(old, new)
    return DiffResult(old_label, new_label, new_project.currency, inputs, same, compare_slots(old_project, new_project),
                      compare_results(old, new), appeared, resolved)
