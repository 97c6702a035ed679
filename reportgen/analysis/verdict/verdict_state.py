"""How page 1's verdict reads, decided once (docs/methods.md#page-1-from-one-set-of-facts): the state of each price
regime at the plan, the regime page 1 leads with, and the state of the page.

A regime is `met` when its row at the plan meets every stated limit, `missed` when it misses one, `partly` when the
time is met and the budget cannot be judged for want of prices, else `unjudged` with why. The page follows from its
regimes: `met` when a viable one is met, `missed` when every viable one is, `partly` when one is partly, else
`unjudged` with the headline regime's why; a design that cannot start, no plan, or a flagged run at the plan come
first. Nothing here writes a word: the sentences are written from these states (reportgen.analysis.page.prose.summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from reportgen.analysis.common import headline_of
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.verdict.goal import GoalCheck, GoalResult
from reportgen.analysis.verdict.serving import ServingCheck, ServingResult
from reportgen.keys import Key
from reportgen.project.model import RegimeName

VerdictState = Literal["met", "missed", "partly", "unjudged", "no-goal"]
RegimeVerdict = Literal["met", "missed", "partly", "unjudged"]
Why = Literal["cannot-start", "estimate-straddles", "model-other-side", "few-scales", "not-measured", "flagged-run",
              "unpriced", "objective-unknown", "per-unit-of-work", "no-plan", "no-runs", "requests-straddle",
              "model-demoted"]
RowSource = Literal["measured", "estimate", "fitted"]
# A regime's chance of missing from which "keep the plan" is no longer earned (docs/methods.md#keep-the-plan)
P_MISS_KEEP = 0.10


@dataclass(frozen=True)
class RegimeState:
    """One stated price regime at the plan, as page 1 reads it."""

    regime: Annotated[RegimeName | None, Key("the price regime (null without pricing)")]
    viable: Annotated[bool, Key("the regime can be used at all")]
    state: Annotated[RegimeVerdict, Key("met, missed, partly or unjudged")]
    why: Annotated[Why | None, Key("unless met or missed: why not")]
    source: Annotated[RowSource, Key("measured (the plan's own run), estimate (the resampled fits' estimate of an "
                                     "unmeasured plan) or fitted (the USL fit)")]
    straddles: Annotated[bool, Key("the row's interval holds a limit")]
    runs_over: Annotated[int | None, Key("the plan's repeats beyond a limit (null without repeats)")]
    runs: Annotated[int | None, Key("the plan's repeats (null: not measured)")]
    p_miss: Annotated[float | None, Key("the share of the resamples of the plan's figure beyond a limit (null where "
                                        "not computed)")]
    cost: float | None = None  # the row's cost per run (a service: per hour): the headline's order
    time_s: float | None = None  # the row's time per run: the headline's order without prices
    met: bool | None = None


@dataclass(frozen=True)
class PageState:
    state: VerdictState
    why: Why | None
    regimes: tuple[RegimeState, ...]
    headline_regime: RegimeName | None
    plan: int | None = None


def headline(regimes: Sequence[RegimeState]) -> RegimeState | None:
    """The regime page 1 leads with: the cheapest viable that meets, else the cheapest viable, else the fastest
    (the goal's own rule, reportgen.analysis.common.headline_of)."""
    return headline_of(regimes, viable=lambda r: r.viable, met=lambda r: r.state == "met", cost=lambda r: r.cost,
                       time=lambda r: r.time_s or 0.0)


def page_state(regimes: tuple[RegimeState, ...], *, has_goal: bool, can_start: bool, plan: int | None,
               none_meets: bool, flagged: bool, lacking: Why | None) -> PageState:
    """The page's state from its regimes (docs/methods.md#page-1-from-one-set-of-facts). `lacking`: why, when no row
    holds the plan; `flagged`: a finding flags the plan's own run."""
    state = _page_state(regimes, has_goal=has_goal, can_start=can_start, plan=plan, none_meets=none_meets,
                        flagged=flagged, lacking=lacking)
    return PageState(state.state, state.why, state.regimes, state.headline_regime, plan)


def _page_state(regimes: tuple[RegimeState, ...], *, has_goal: bool, can_start: bool, plan: int | None,
                none_meets: bool, flagged: bool, lacking: Why | None) -> PageState:
    lead = headline(regimes)
    regime = lead.regime if lead is not None else None
    if not has_goal:
        return PageState("no-goal", None, regimes, regime)
    if not can_start:
        return PageState("unjudged", "cannot-start", regimes, regime)
    if plan is None:
        return PageState("missed", None, regimes, regime) if none_meets else \
            PageState("unjudged", lacking or "no-plan", regimes, regime)
    if not regimes:
        return PageState("unjudged", lacking or "not-measured", regimes, regime)
    viable = [r for r in regimes if r.viable]
    if flagged and not any(r.state == "missed" for r in viable):
        return PageState("unjudged", "flagged-run", regimes, regime)
    if any(r.state == "met" for r in viable):
        return PageState("met", None, regimes, regime)
    if all(r.state == "missed" for r in viable):
        return PageState("missed", None, regimes, regime)
    if any(r.state == "partly" for r in viable):
        return PageState("partly", "unpriced", regimes, regime)
    why = lead.why if lead is not None and lead.state == "unjudged" else None
    return PageState("unjudged", why or next((r.why for r in viable if r.why), "not-measured"), regimes, regime)


# ------------------------------------------------------------------------------------------------------- training
def training_regimes(goal: GoalResult) -> tuple[RegimeState, ...]:
    """Each stated regime at the plan: the measured plan's rows, else the unmeasured plan's estimate or fit."""
    measured = bool(goal.at_plan)
    rows = goal.at_plan or goal.fitted_at_plan
    source: RowSource = "measured" if measured else "estimate" if goal.plan_estimate is not None else "fitted"
    return tuple(_training_row(goal, check, source) for check in rows)


def _training_row(goal: GoalResult, check: GoalCheck, source: RowSource) -> RegimeState:
    state: RegimeVerdict
    why: Why | None = None
    if check.met is True:
        state = "met"
    elif check.met is False:
        state = "missed"
    elif goal.cost_unknown and check.meets_time is True and check.viable:
        state, why = "partly", "unpriced"
    else:
        state, why = "unjudged", _unjudged_why(goal, check, source)
    return RegimeState(check.regime, check.viable, state, why, source, check.straddles, check.runs_over,
                       check.repeats, check.p_miss, check.cost, check.time_s, check.met)


def _unjudged_why(goal: GoalResult, check: GoalCheck, source: RowSource) -> Why:
    if goal.cost_unknown and check.meets_time is not False:
        return "unpriced"
    if goal.unjudged is not None:
        return goal.unjudged
    return "not-measured" if source != "measured" else "unpriced"


def training_lacking(goal: GoalResult, scaling: ScalingResult | None) -> Why | None:
    """Why no row holds the plan: nothing measured, runs per unit of work, no plan, or an unmeasured plan no fit
    reaches."""
    if scaling is None:
        return "no-runs"
    if scaling.per_unit_of_work:
        return "per-unit-of-work"
    if goal.plan_nodes is None:
        return "no-plan"
    if not goal.plan_measured and not goal.fitted_at_plan:
        return "few-scales" if scaling.single_scale else "not-measured"
    return None


PlanFlag = Literal["implausible", "outlier", "wild-repeat"]


def plan_flag(scaling: ScalingResult | None, plan: int | None) -> PlanFlag | None:
    """What a finding flags of the plan's own run: implausibly fast (and not accepted as superlinear), an outlier, or
    a wild repeat there; None when none does."""
    if scaling is None or plan is None:
        return None
    if any(r.nodes == plan for r in scaling.implausible) and not scaling.superlinear_reason:
        return "implausible"
    if any(o.nodes == plan for o in scaling.outliers):
        return "outlier"
    if any(r.nodes == plan for r in scaling.outlier_repeats):
        return "wild-repeat"
    return None


# -------------------------------------------------------------------------------------------------------- serving
def serving_regimes(serving: ServingResult) -> tuple[RegimeState, ...]:
    """A service's regimes at the plan: a capacity the USL fit gives there is not judged (not measured)."""
    row = serving.plan_row
    if row is None:
        return ()
    fitted = row.capacity_source == "fitted"
    return tuple(_serving_row(serving, check, fitted) for check in serving.at_plan)


def _serving_row(serving: ServingResult, check: ServingCheck, fitted: bool) -> RegimeState:
    state: RegimeVerdict
    why: Why | None = None
    if fitted:
        state, why = ("missed", None) if check.met is False else ("unjudged", "not-measured")
    elif check.met is True:
        state = "met"
    elif check.met is False:
        state = "missed"
    elif check.unknown or (serving.plan_row is not None and serving.plan_row.records_unjudged):
        state, why = "unjudged", "objective-unknown"  # stated and not known there (no load point judged)
    elif serving.cost_limit_per_hour is not None and check.cost_per_hour is None and check.meets_load \
            and check.meets_latency is not False:
        state, why = "partly", "unpriced"
    elif serving.plan_row is not None and serving.plan_row.capacity_source == "records" and check.meets_load is None:
        state, why = "unjudged", "requests-straddle"  # measured, from too few requests to tell
    else:
        state, why = "unjudged", "not-measured"
    return RegimeState(check.regime, check.viable, state, why, "fitted" if fitted else "measured", False, None, None,
                       None, check.cost_per_hour, None, check.met)


def serving_lacking(serving: ServingResult | None, plan: int | None) -> Why:
    if serving is None:
        return "objective-unknown"
    if plan is None:
        return "no-plan"
    return "not-measured" if serving.rows else "no-runs"
