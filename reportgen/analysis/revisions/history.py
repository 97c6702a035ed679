"""A project's history (methods.md#a-projects-history): each revision's verdict and figures as a plain record, and
the prediction ledger, which grades each revision's predictions for scales it had not measured once a later revision
measures them with the same design.

A record is one typed structure (`Record`), written to the history's cache as JSON and read back from it as strictly
as a project file (every field of its type, times and node counts positive where the ledger divides by them), so a
second history reads it without analysing the revision again; the ledger is a function of the records alone.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from statistics import median
from typing import Annotated, Literal

import msgspec

from reportgen.analysis import Analysis, headline
from reportgen.analysis.common import powers_of_two
from reportgen.analysis.measured.accuracy import calibration_of, interval_from
from reportgen.analysis.measured.conformal import bucket_of, interval_score, point_score
from reportgen.analysis.page.page_one_facts import PageAction
from reportgen.project.accuracy_table import AccuracyTable, OwnCase
from reportgen.project.flatten import flatten
from reportgen.project.model import Project

MISSED_FROM = 0.25  # a graded prediction further than this from the measurement is named, even without an interval
Status = Literal["graded", "superseded", "pending"]
Positive = Annotated[float, msgspec.Meta(gt=0)]


class Action(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Page 1's next action: {code, text, rank, kind}."""

    code: str
    text: str
    rank: int | None
    kind: str | None


class AtPlan(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The verdict at the plan in one price regime, with the time's interval where repeats give one."""

    regime: str | None
    time_s: float | None
    cost: float | None
    met: bool | None
    time_low: float | None
    time_high: float | None


class Measured(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    nodes: Positive
    time_s: Positive | None
    speedup: float | None


class Prediction(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A scale the revision had not measured, as a fit or the α–β model predicts it (low, high: its interval)."""

    nodes: Positive
    model: str
    time_s: Positive
    low: float | None
    high: float | None


class Record(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One revision as the history keeps it (history.json's revisions, less the commit's own fields)."""

    built: bool
    error: str | None  # a revision that could not be built: its one-line error
    title: str | None
    verdict: str | None
    state: str | None
    why: str | None
    next_action: Action | None
    met_at_plan: bool | None
    at_plan: list[AtPlan]
    time_limit_s: float | None
    optimum: str | None
    p_star: float | None
    alpha_s: float | None
    beta_s: float | None
    sigma: float | None
    kappa: float | None
    measured: list[Measured]
    predictions: list[Prediction]
    design: str  # the design's fingerprint (design_fingerprint)
    design_inputs: dict[str, str]
    slots: dict[str, list[str]]


# The inputs a prediction is of: the design (slots, layout, pattern), the baseline, the hardware, and what a run's
# time means (its work and whether the work grows with the nodes)
DESIGN_INPUTS = ("design.", "baseline.", "prediction.pattern", "hardware.", "scaling.work_per_run", "scaling.mode")


def design_inputs(project: Project) -> dict[str, str]:
    """Each design input as the project file gives it, by path: what the history's design-change column names."""
    return {leaf.path: leaf.written for leaf in flatten(project, currency=project.currency)
            if leaf.path.startswith(DESIGN_INPUTS)}


def design_fingerprint(project: Project) -> str:
    """What a prediction is of (DESIGN_INPUTS). A later measurement grades an earlier prediction only when this is
    unchanged."""
    leaves = sorted(design_inputs(project).items())
    return hashlib.sha256(json.dumps(leaves, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def candidate_scales(project: Project, analysis: Analysis) -> list[int]:
    """The unmeasured scales a revision predicts: the powers of two up to twice its largest measured scale or the
    plan, and the plan."""
    scaling = analysis.scaling
    measured = {row.nodes for row in scaling.rows} if scaling else set()
    plan = project.design.nodes if project.design else None
    top = max([*(int(n) for n in measured), *([plan] if plan else [])], default=0) * 2
    scales = set(powers_of_two(top)) | ({plan} if plan else set())
    return sorted(n for n in scales if n not in measured)


def record_of(project: Project, analysis: Analysis) -> Record:
    """One built revision as the history keeps it."""
    goal = headline(analysis)
    summary, scaling, prediction = analysis.summary, analysis.scaling, analysis.prediction
    usl = scaling.usl if scaling else None
    predictions: list[Prediction] = []
    confidence = analysis.confidence
    for nodes in candidate_scales(project, analysis):
        estimate = confidence.estimate_at(nodes) if confidence is not None else None
        if estimate is None:
            continue
        predictions.append(Prediction(nodes, estimate.source, estimate.time_s, estimate.low_s, estimate.high_s))
        if estimate.model_time_s is not None:
            predictions.append(Prediction(nodes, "alpha-beta", estimate.model_time_s, None, None))
    return Record(
        built=True, error=None, title=project.project.title,
        verdict=_plain(summary.verdict) if summary else None,
        state=summary.state if summary else None,
        why=_plain(summary.why) if summary else None,
        next_action=_action(summary.next_action) if summary else None,
        met_at_plan=goal.met_at_plan if goal else None,
        at_plan=[AtPlan(row.regime, row.time_s, row.cost, row.met, row.time_ci[0] if row.time_ci else None,
                        row.time_ci[1] if row.time_ci else None) for row in (goal.at_plan if goal else ())],
        time_limit_s=goal.time_per_run_s if goal else None,
        optimum=_plain(summary.optimum.text) if summary else None,
        p_star=prediction.p_star if prediction else None,
        alpha_s=prediction.alpha_s if prediction else None,
        beta_s=prediction.beta_s if prediction else None,
        sigma=usl.sigma if usl else None,
        kappa=usl.kappa if usl else None,
        measured=[Measured(row.nodes, row.time_s, row.speedup) for row in (scaling.rows if scaling else ())],
        predictions=predictions,
        design=design_fingerprint(project),
        design_inputs=design_inputs(project),
        slots=_slots(project),
    )


def unbuilt(error: str) -> Record:
    """A revision that could not be built: its one-line error, and every other field empty."""
    return Record(built=False, error=error, title=None, verdict=None, state=None, why=None, next_action=None,
                  met_at_plan=None, at_plan=[], time_limit_s=None, optimum=None, p_star=None, alpha_s=None,
                  beta_s=None, sigma=None, kappa=None, measured=[], predictions=[], design="", design_inputs={},
                  slots={})


def _action(action: PageAction) -> Action:
    """Page 1's next action as the history keeps it."""
    return Action(action.code, str(action.text), action.rank, action.kind)


def _plain(text: str | None) -> str | None:
    """Page 1's text as plain str: its sentences are `Quoted` strings that carry their figures, which JSON need not."""
    return None if text is None else str(text)


def _slots(project: Project) -> dict[str, list[str]]:
    """Each design slot's choices, for what changed between two revisions."""
    slots = project.design.slots if project.design else None
    if slots is None:
        return {}
    return {name: list(slot.choice) for name in ("partitioning", "communication", "consistency", "coordination",
                                                 "fault_tolerance", "load_balancing")
            if (slot := getattr(slots, name)) is not None}


@dataclass(frozen=True)
class LedgerRow:
    nodes: float
    model: str
    predicted_in: str  # the revision that predicted
    measured_in: str | None  # the first later revision that measured the scale (with the same design when graded)
    predicted_s: float
    measured_s: float | None
    rel_error: float | None  # measured / predicted − 1
    inside: bool | None  # within the prediction's interval (None: it has none)
    status: Status
    # the predicting revision's plan over its largest measured scale (methods.md#how-accurate-each-prediction-is)
    ratio: float | None = None
    low_s: float | None = None  # the prediction's raw interval
    high_s: float | None = None
    inside_calibrated: bool | None = None  # within the interval calibrated on published curves (None: none)

    @property
    def score(self) -> float | None:
        """The graded prediction's conformity score, as a published curve's case is scored."""
        if self.status != "graded" or self.measured_s is None:
            return None
        if self.low_s is not None and self.high_s is not None:
            return interval_score(self.measured_s, self.predicted_s, self.low_s, self.high_s)
        return point_score(self.measured_s, self.predicted_s)

    def as_json(self) -> dict[str, float | str | bool | None]:
        return {"nodes": self.nodes, "model": self.model, "predicted_in": self.predicted_in,
                "measured_in": self.measured_in, "predicted_s": self.predicted_s, "measured_s": self.measured_s,
                "rel_error": self.rel_error, "inside": self.inside, "status": self.status, "ratio": self.ratio,
                "bucket": None if self.ratio is None else bucket_of(self.ratio), "score": self.score,
                "low_s": self.low_s, "high_s": self.high_s, "inside_calibrated": self.inside_calibrated}


def ledger(revisions: list[tuple[str, Record]], table: AccuracyTable | None = None) -> list[LedgerRow]:
    """Every prediction of every built revision (oldest first), graded by the first later revision that measured its
    scale: with the same design, measured / predicted − 1 and whether the measurement lies in its interval (and in
    the interval `table` calibrates, methods.md#how-accurate-each-prediction-is); after a design change,
    superseded; not yet measured, pending."""
    built = [(label, record) for label, record in revisions if record.built]
    # each scale's measurements in revision order, and the design changes counted up to each revision, so that a
    # prediction finds the first later measurement of its scale by bisection (3,000 revisions: not 3,000² scans)
    measured_at: dict[float, list[tuple[int, float]]] = {}
    for index, (_, record) in enumerate(built):
        for m in record.measured:
            if m.time_s is not None and (not measured_at.get(m.nodes) or measured_at[m.nodes][-1][0] != index):
                measured_at.setdefault(m.nodes, []).append((index, m.time_s))
    changes = [0]
    for (_, before), (_, after) in itertools.pairwise(built):
        changes.append(changes[-1] + (after.design != before.design))
    rows = []
    for index, (label, record) in enumerate(built):
        for prediction in record.predictions:
            nodes = prediction.nodes
            status: Status = "pending"
            measured_in, measured = None, None
            later = measured_at.get(nodes, [])
            position = bisect.bisect_right(later, index, key=lambda item: item[0])
            if position < len(later):
                at, time_s = later[position]
                changed = changes[at] != changes[index]
                measured_in = built[at][0]
                status = "superseded" if changed else "graded"
                measured = time_s if not changed else None
            elif changes[-1] != changes[index]:
                status = "superseded"
            low, high = prediction.low, prediction.high
            error = measured / prediction.time_s - 1.0 if measured is not None else None
            inside = (low <= measured <= high) if measured is not None and low is not None and high is not None \
                else None
            largest = max((m.nodes for m in record.measured), default=0.0)
            ratio = nodes / largest if largest > 0 else None
            rows.append(LedgerRow(nodes, prediction.model, label, measured_in, prediction.time_s, measured,
                                  error, inside, status, ratio, low, high,
                                  _inside_calibrated(table, prediction, ratio, measured)))
    return rows


def _inside_calibrated(table: AccuracyTable | None, prediction: Prediction, ratio: float | None,
                       measured: float | None) -> bool | None:
    if measured is None or ratio is None:
        return None
    calibration = calibration_of(table, prediction.model, ratio)
    interval = interval_from(calibration, prediction.time_s, prediction.low, prediction.high)
    return None if interval is None else interval[0] <= measured <= interval[1]


def ledger_rows(document: object) -> list[LedgerRow]:
    """The ledger of a history.json read back (ValueError naming the first row that is not one): the rows a build
    pools as the project's own graded predictions."""
    if not isinstance(document, dict) or not isinstance(document.get("ledger"), list):
        raise ValueError("no `ledger` list: not a history.json written by `reportgen history`")
    rows = []
    for index, item in enumerate(document["ledger"]):
        try:
            rows.append(_ledger_row(item))
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"ledger[{index}]: {error}") from None
    return rows


def _ledger_row(item: object) -> LedgerRow:
    if not isinstance(item, dict):
        raise TypeError("not an object")

    def number(key: str, *, optional: bool = True) -> float | None:
        value = item.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{key} is not a positive number")
        return float(value)

    status = item.get("status")
    if status not in ("graded", "superseded", "pending"):
        raise ValueError(f"status {status!r} is not graded, superseded or pending")
    measured = number("measured_s")
    predicted = number("predicted_s", optional=False) or 0.0
    return LedgerRow(number("nodes", optional=False) or 0.0, str(item["model"]), str(item["predicted_in"]),
                     None if item.get("measured_in") is None else str(item["measured_in"]), predicted, measured,
                     None if measured is None else measured / predicted - 1, None, status, number("ratio"),
                     number("low_s"), number("high_s"))


def own_cases(rows: list[LedgerRow]) -> tuple[OwnCase, ...]:
    """The project's graded predictions as cases of the calibration: one per measured (scale, revision) and model,
    the latest prediction made before that measurement (rows are oldest first)."""
    latest: dict[tuple[float, str | None, str], LedgerRow] = {}
    for row in rows:
        if row.score is not None and row.ratio is not None:
            latest[(row.nodes, row.measured_in, row.model)] = row
    return tuple(OwnCase(row.model, row.ratio or 0.0, row.score or 0.0, math.log((row.measured_s or 1.0)
                                                                              / row.predicted_s))
                 for row in latest.values())


def coverage(rows: list[LedgerRow]) -> dict[str, dict[str, object]]:
    """Per model: the graded predictions, the share inside their interval (None without intervals), the median
    |error|, and per extrapolation bucket the graded ones, those inside their raw and their calibrated interval."""
    found: dict[str, dict[str, object]] = {}
    for model in sorted({row.model for row in rows}):
        graded = [row for row in rows if row.model == model and row.status == "graded" and row.rel_error is not None]
        with_interval = [row for row in graded if row.inside is not None]
        buckets: dict[str, dict[str, int]] = {}
        for row in graded:
            if row.ratio is not None:
                counts = buckets.setdefault(bucket_of(row.ratio), {"graded": 0, "covered": 0,
                                                                    "covered_calibrated": 0})
                counts["graded"] += 1
                counts["covered"] += row.inside is True
                counts["covered_calibrated"] += row.inside_calibrated is True
        found[model] = {
            "graded": len(graded),
            "coverage": sum(1 for row in with_interval if row.inside) / len(with_interval) if with_interval else None,
            "median_abs_error": median(abs(row.rel_error or 0.0) for row in graded) if graded else None,
            "buckets": dict(sorted(buckets.items())),
        }
    return found


def missed(rows: list[LedgerRow]) -> list[LedgerRow]:
    """The graded predictions a measurement fell outside of (its interval, or 25 % without one): prediction-missed."""
    return [row for row in rows if row.status == "graded" and (
        row.inside is False or (row.inside is None and row.rel_error is not None and abs(row.rel_error) > MISSED_FROM))]
