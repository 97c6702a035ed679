"""The types of page 1's facts (docs/methods.md#page-1-from-one-set-of-facts): every figure page 1 quotes with its
one source, whether the design can start, the constraints applied once, the ways considered to change the verdict,
and the one chosen. Frozen, typed, and free of words but the candidates' texts, which are written from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from reportgen.analysis.findings import Severity
from reportgen.analysis.quotes import Quantity
from reportgen.analysis.verdict.lever_records import Lever
from reportgen.analysis.verdict.verdict_state import RegimeVerdict
from reportgen.keys import Key, money
from reportgen.project.model import RegimeName

Kind = Literal["fix-design", "fix-evidence", "measured-scale", "layout", "fitted-scale", "measure", "lever",
               "out-of-reach", "advice", "keep"]
Effect = Literal["starts", "rests-on", "meets", "meets-modelled", "decides", "none", "unknown"]
ExcludedBy = Literal["nodes_available", "measured", "model-refuted", "immaterial", "beyond-reach", "excluded",
                     "demoted"]
Rank = Literal[1, 2, 3, 4, 5, 6, 7]
# the kinds in the order a rank-3 tie is broken by
KIND_ORDER: tuple[Kind, ...] = ("measured-scale", "layout", "fitted-scale")
REGIME_ORDER: tuple[RegimeName | None, ...] = ("on_demand", "spot", "local", None)


@dataclass(frozen=True)
class CanStart:
    """Whether the design can start as declared, decided once (docs/methods.md#can-the-design-start)."""

    value: Annotated[bool, Key("false when an error says the design cannot start and no measured run refutes it")]
    code: Annotated[str | None, Key("the blocking finding's code (null when it can start)")]
    reason: Annotated[str | None, Key("why it cannot start, from the finding")]
    fix: Annotated[str | None, Key("the fix, as the next action states it")]
    refuted: Annotated[tuple[str, ...], Key("the memory codes measured runs refute (they ran)", item="a code")]


@dataclass(frozen=True)
class ExcludedQuantity:
    nodes: Annotated[float, Key("the measured scale")]
    quantity: Annotated[str, Key("energy, collective or throughput")]
    code: Annotated[str, Key("the finding that excludes it")]


@dataclass(frozen=True)
class Objective:
    name: Annotated[str, Key("time per run, cost per run, load, p99, ttft p99, tpot p99, cost per hour")]
    limit: Annotated[float, Key("its limit, in SI units (money in the project's currency)")]
    lever: Annotated[str | None, Key("the goal.levers entry that acts on it (null: none does)")]


@dataclass(frozen=True)
class Constraints:
    nodes_available: Annotated[int | None, Key("hardware.nodes_available: no candidate, operating point or fitted "
                                               "scale above it is chosen")]
    goal_work_shares: Annotated[float | None, Key(
        "weak scaling: the shares the goal's work is, fixed for every candidate (the plan's nodes, else the largest "
        "measured); null in strong scaling")]
    excluded: Annotated[tuple[ExcludedQuantity, ...], Key("the measured quantities no candidate, knee, peak or "
                                                          "operating point reads", item="one excluded quantity")]
    objectives: Annotated[tuple[Objective, ...], Key("every limit the verdict checks, with the lever that acts on "
                                                     "it", item="one objective")]


@dataclass(frozen=True)
class Candidate:
    """One way considered to change the verdict (docs/methods.md#ways-considered)."""

    kind: Annotated[Kind, Key("fix-design, fix-evidence, measured-scale, layout, fitted-scale, measure, lever, "
                              "out-of-reach, advice or keep")]
    code: Annotated[str, Key("the finding code it answers (none for keep)")]
    rank: Annotated[Rank | None, Key("1–7, the order of docs/methods.md#the-order (null for keep)")]
    nodes: Annotated[float | None, Key("the node count it names")]
    regime: Annotated[RegimeName | None, Key("the price regime its figures are in")]
    layout: Annotated[str | None, Key("a layout candidate's t × p × d")]
    lever: Annotated[str | None, Key("a lever candidate's goal.levers name")]
    effect: Annotated[Effect, Key("starts, rests-on, meets, meets-modelled, decides, none or unknown")]
    state_after: Annotated[RegimeVerdict | None, Key("the verdict with the candidate applied, by the report's own "
                                                     "judge (null where no change is computable)")]
    p_wrong_before: Annotated[float | None, Key("a measurement's chance that the verdict is wrong now")]
    p_wrong_after: Annotated[float | None, Key("after it")]
    money: Annotated[float | None, money("its money per run (a service: per hour) in its regime less the plan's in "
                                         "the headline regime, or a measurement's price")]
    node_hours: Annotated[float | None, Key("node-hours per run at the candidate, or the measurement's")]
    change: Annotated[float | None, Key("|ln(flips_at / today)| for a lever, |ln(p / plan)| for a scale")]
    feasible: Annotated[bool, Key("it can be chosen")]
    excluded_by: Annotated[ExcludedBy | None, Key("why it cannot: nodes_available, measured (a model bound the runs "
                                                  "pass), model-refuted, immaterial, beyond-reach, excluded, demoted")]
    text: Annotated[str, Key("the action in words")]
    time_s: Annotated[float | None, Key("its time per run (failure tax and the goal's work folded in)")] = None
    cost: Annotated[float | None, money("its money per run (a service: per hour), in its regime")] = None
    severity: Severity | None = None  # the finding's, for the ties of ranks 2 and 7
    table_index: int = 0  # the code's place in the next action table, the last tie rule
    source: str | None = None  # a lever's evidence: measured, fitted or model
    taken: Lever | None = None  # the goal.levers entry it comes from
    # the figures its text quotes, each with its source (docs/methods.md#every-figure-has-one-source)
    figures: tuple[Quantity, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class PageAction:
    """The one next action: the first feasible candidate."""

    code: Annotated[str, Key("the finding code it comes from; none when no finding calls for one")]
    text: Annotated[str, Key("the action")]
    rank: Annotated[Rank | None, Key(
        "1 the design cannot start, 2 a measurement the verdict rests on cannot be right, 3 a way that meets the goal "
        "without changing the world, 4 a measurement or input that decides the verdict, 5 the smallest feasible "
        "lever, 6 out of reach, 7 model, noise and advice; null for keep the plan "
        "(docs/methods.md#the-order)")] = None
    lever: Annotated[Lever | None, Key("the goal.levers entry the action comes from, or null")] = None
    kind: Annotated[Kind, Key("the candidate's kind")] = "keep"
    effect: Annotated[Effect, Key("the candidate's effect on the verdict")] = "none"
    candidate: Annotated[int | None, Key("its index in summary.candidates (0: the first)")] = None


OptimumSource = Literal["measured", "usl", "model"]


@dataclass(frozen=True)
class OptimumFacts:
    """The operating point the evidence supports, chosen among the constrained scales only."""

    nodes: float | None
    source: OptimumSource | None
    basis: Literal["cheapest-meeting", "fitted-meeting", "fewest-node-hours", "nearest", "cost-optimal", "fastest",
                   "single-scale", "model", "none"]
    regime: RegimeName | None = None
    beyond: float | None = None  # the smallest scale that would meet, above nodes_available
    beyond_source: OptimumSource | None = None  # measured, or the USL fit's, or the model's (a layout)
    # the fit's scale is the one the report's judge holds met (its 90 % interval clear of every limit), which may lie
    # above the smallest whose fitted time alone meets (goal.fitted_meeting)
    beyond_judged: bool = False
