"""Each published curve held out: its largest one or two scales hidden, predicted from the rest by the functions a
build calls, and scored against what was measured (docs/methods.md#how-accurate-each-prediction-is).

An evaluation project is an ordinary project file (the curve's `project` fields, the visible scales' runs, the
hidden scale as the plan, that scale's overrides), loaded by the project loader and analysed by the registry's own
steps, so the corpus grades exactly what a build prints.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import median

import yaml

from reportgen.analysis import REGISTRY, analyze
from reportgen.analysis.measured.confidence import DEFAULT_NOISE, PlanEstimate
from reportgen.analysis.measured.conformal import (
    PREDICTORS,
    bucket_of,
    cell_key,
    interval_score,
    is_interval_class,
    point_score,
)
from reportgen.corpus.curve import Curve, Data
from reportgen.errors import InputError
from reportgen.project.loader import load_project_text

HIDDEN = (1, 2)  # the largest k scales hidden, while at least two stay visible
# The registry's steps an estimate at the plan reads; every other step is skipped (it reads nothing here)
STEPS = frozenset({"reconciliation", "scaling", "prediction", "confidence"})
PER = {"s": "s", "sec": "s", "second": "s", "min": "min", "minute": "min", "h": "h", "hour": "h"}


@dataclass(frozen=True)
class CaseRow:
    """One hidden scale of one curve, predicted by one class (or why the class did not run)."""

    curve: str
    kind: str
    batch_changes: bool
    k: int
    hidden: float
    largest_visible: float
    predictor: str
    predicted: float | None = None  # seconds
    low: float | None = None
    high: float | None = None
    measured: float | None = None
    score: float | None = None
    assumed: bool = False
    note: str = ""  # why the class did not run
    used: bool = False  # the case its cell counts for this curve

    @property
    def ratio(self) -> float:
        return self.hidden / self.largest_visible

    @property
    def log_error(self) -> float | None:
        if self.predicted is None or self.measured is None:
            return None
        return math.log(self.measured / self.predicted)

    @property
    def rel_error(self) -> float | None:
        """measured / predicted − 1."""
        return None if self.log_error is None else math.expm1(self.log_error)

    @property
    def inside(self) -> bool | None:
        """Within the raw interval (None: a point prediction has none)."""
        if self.low is None or self.high is None or self.measured is None:
            return None
        return self.low <= self.measured <= self.high

    @property
    def family(self) -> str:
        """The cell this case belongs to: class, bucket and whether the curve's batch changed between scales."""
        return cell_key(self.predictor, bucket_of(self.ratio), self.batch_changes)


def curve_cases(curve: Curve, assumed: bool) -> list[CaseRow]:
    """Every case of a curve: for k = 1, 2 (two scales kept visible), each hidden scale, each predictor class."""
    scales = sorted(set(curve.scales()))
    rows: list[CaseRow] = []
    for k in HIDDEN:
        if len(scales) - k < 2:
            continue
        visible, hidden = scales[:-k], scales[-k:]
        for nodes in hidden:
            rows.extend(_predict(curve, assumed, k, visible, nodes))
    return rows


def choose_used(rows: list[CaseRow]) -> list[CaseRow]:
    """One case per (curve, cell): the smallest k, then the largest hidden scale (a curve's cases are correlated)."""
    chosen: dict[tuple[str, str], CaseRow] = {}
    for row in rows:
        if row.score is None:
            continue
        key = (row.curve, row.family)
        best = chosen.get(key)
        if best is None or (row.k, -row.hidden) < (best.k, -best.hidden):
            chosen[key] = row
    picked = {id(row) for row in chosen.values()}
    return [replace(row, used=id(row) in picked) for row in rows]


def _predict(curve: Curve, assumed: bool, k: int, visible: list[float], hidden: float) -> Iterator[CaseRow]:
    base = CaseRow(curve.id, curve.workload.kind, curve.batch_changes, k, hidden, visible[-1], "", assumed=assumed)
    work = _work(curve)
    truth = median(time for point in curve.points if point.nodes == hidden for time in curve.times(point, work))
    try:
        estimate = _estimate(curve, visible, hidden)
    except InputError as error:
        note = "; ".join(problem.message for problem in error.problems)[:300]
        yield from (_with(base, predictor, note=f"the evaluation project is invalid: {note}")
                    for predictor in PREDICTORS)
        return
    skipped = curve.predictors or {}
    for predictor in PREDICTORS:
        if predictor in skipped:
            yield _with(base, predictor, note=str(skipped[predictor]))
        elif estimate is None:
            yield _with(base, predictor, note="no estimate at the plan")
        elif is_interval_class(predictor):
            if estimate.source != predictor:
                yield _with(base, predictor, note=f"the runs chose {estimate.source}")
            else:
                score = interval_score(truth, estimate.time_s, estimate.low_s, estimate.high_s)
                yield _with(base, predictor, predicted=estimate.time_s, low=estimate.low_s, high=estimate.high_s,
                            measured=truth, score=score)
        elif predictor == "alpha-beta":
            if estimate.model_time_s is None:
                yield _with(base, predictor, note="no α–β model: the curve gives no `prediction`")
            else:
                yield _with(base, predictor, predicted=estimate.model_time_s, measured=truth,
                            score=point_score(truth, estimate.model_time_s))
        else:
            yield _with(base, predictor, note="the curve gives no layout or model shape")


def _with(base: CaseRow, predictor: str, *, predicted: float | None = None, low: float | None = None,
          high: float | None = None, measured: float | None = None, score: float | None = None,
          note: str = "") -> CaseRow:
    return replace(base, predictor=predictor, predicted=predicted, low=low, high=high, measured=measured,
                   score=score, note=note)


def _estimate(curve: Curve, visible: list[float], hidden: float) -> PlanEstimate | None:
    text = yaml.safe_dump(evaluation_project(curve, visible, hidden), sort_keys=True)
    loaded = load_project_text(text, Path(f"{curve.id}.yaml"), f"{curve.id} (evaluation project)")
    skip = frozenset(step.name for step in REGISTRY) - STEPS
    confidence = analyze(loaded.project, skip=skip, uncalibrated=True).confidence
    return confidence.plan_estimate if confidence is not None else None


def evaluation_project(curve: Curve, visible: list[float], hidden: float) -> Data:
    """The project a build would be given: the curve's fields ⊕ the visible scales' runs ⊕ the hidden scale as the
    plan ⊕ that scale's overrides."""
    project: Data = {"project": {"title": curve.id}}
    _merge(project, copy.deepcopy(curve.project or {}))
    scaling = _section(project, "scaling")
    runs: list[Data] = []
    for point in curve.points:
        if point.nodes not in visible:
            continue
        for value in point.values:
            runs.append({"nodes": _number(point.nodes), **_run_value(curve, value)})
    scaling["runs"] = runs
    if curve.unit.value == "throughput" and "work_per_run" not in scaling:
        scaling["work_per_run"] = f"{curve.nominal_work()!r} sample"
    errors = [point.reading_error for point in curve.points if point.reading_error is not None]
    if errors and "noise" not in scaling:
        scaling["noise"] = math.sqrt(DEFAULT_NOISE ** 2 + max(errors) ** 2)
    _section(project, "design")["nodes"] = _number(hidden)
    for point in curve.points:
        if point.nodes == hidden and point.overrides:
            _merge(project, copy.deepcopy(point.overrides))
    return project


def _work(curve: Curve) -> float:
    """The work per run the throughputs are divided into (its unit is a count: only ratios matter)."""
    scaling = (curve.project or {}).get("scaling")
    given = scaling.get("work_per_run") if isinstance(scaling, dict) else None
    if given is None:
        return curve.nominal_work()
    return float(str(given).split()[0])


def _section(project: Data, name: str) -> Data:
    """A section of the evaluation project, made where absent."""
    section = project.setdefault(name, {})
    assert isinstance(section, dict)  # the curve's project fields were read as mappings of mappings
    return section


def _run_value(curve: Curve, value: float) -> dict[str, str]:
    if curve.unit.value == "time":
        return {"time": f"{value!r} {curve.unit.printed}"}
    per = curve.unit.printed.rsplit("/", 1)[-1].strip() if "/" in curve.unit.printed else "s"
    return {"throughput": f"{value!r} sample/{PER.get(per, 's')}"}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _merge(into: Data, more: Mapping[str, object]) -> None:
    for key, value in more.items():
        inner = into.get(key)
        if isinstance(value, Mapping) and isinstance(inner, dict):
            _merge(inner, value)
        else:
            into[key] = value
