"""What the lever search finds (docs/methods.md#the-goals-levers): a lever, the value at which the verdict at the
plan flips, and a near miss; records only, below the goal and serving analyses that hold them and the search
(reportgen.analysis.verdict.levers) that makes them, so that none of the three imports another back."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Literal

from reportgen.keys import DocumentPath, Key, derived
from reportgen.project.accuracy_table import Calibration, not_graded

LeverName = Literal["nodes", "start-up", "serial fraction", "network bandwidth", "network latency", "node price",
                    "spot fraction", "preemption rate", "checkpoint interval", "utilization", "ZeRO stage",
                    "replicas", "capacity per replica", "p99 latency", "ttft p99", "tpot p99", "load",
                    "ttft objective", "tpot objective", "e2e objective", "attainment target"]
LeverKind = Literal["engineering", "objective"]
LeverSource = Literal["measured", "fitted", "model"]


@dataclass(frozen=True)
class Lever:
    """One lever: today's value, the value at which the verdict at the plan flips, and whether it can be reached."""

    lever: Annotated[LeverName, Key("what is varied")]
    path: Annotated[str, Key("where it is in the project file, or what it acts on")]
    unit: Annotated[str, Key("the unit of today and flips_at")]
    today: Annotated[float, Key("its value today")]
    flips_at: Annotated[float, Key("the value at which the verdict at the plan flips, all else held (the flip "
                                   "nearest to today)")]
    ratio: Annotated[float, Key("flips_at / today")]
    feasible: Annotated[bool, Key("the value can be reached: a bandwidth at most 2× today's and the node's own "
                                  "links, a fraction within 0–1, at most nodes_available, no negative time, price "
                                  "or rate")]
    source: Annotated[LeverSource, Key("the evidence it rests on: measured, fitted, or the model")]
    meets: bool  # the verdict beyond flips_at: True when the lever meets a missed goal, False for a met goal's margin
    kind: Annotated[LeverKind, Key("engineering: a change to the system or its load; objective: a promise the goal "
                                   "makes (an objective or the share of requests), listed but the next action only "
                                   "when no engineering lever flips the verdict")] = "engineering"

    @property
    def distance(self) -> float:
        return abs(math.log(self.ratio)) if self.ratio > 0 else math.inf

    @derived(Key("where the verdict flips is a what-if, which the corpus does not grade: {predictor: the evidence "
                 "it rests on, status: not-graded}"))
    def flips_at_calibration(self) -> Calibration:
        return not_graded(self.source)


@dataclass(frozen=True)
class NearMiss:
    """A lever that cannot flip a missed goal within its reach: how near its best feasible value brings the plan."""

    lever: Annotated[LeverName, Key("what is varied")]
    path: Annotated[str, Key("where it is in the project file, or what it acts on")]
    unit: Annotated[str, Key("the unit of today and best")]
    today: Annotated[float, Key("its value today")]
    best: Annotated[float, Key("its feasible value that brings the plan nearest to the goal")]
    excess: Annotated[float, Key("the plan's largest ratio of a value to its limit there (1 would meet it)")]


@dataclass(frozen=True)
class Levers:
    flips: tuple[Lever, ...] = ()  # feasible first, then by |log ratio|
    near_misses: tuple[NearMiss, ...] = ()  # a missed goal no feasible lever flips: the nearest, by excess
    searched: bool = False  # the search ran (a history skips it where page 1's next action does not need it)

    def document_paths(self) -> Iterator[DocumentPath]:
        """Where the goal section writes the levers (page 1's figures find their source by it)."""
        for index, lever in enumerate(self.flips):
            yield lever, f"goal.levers[{index}]", Lever, {}
        for index, miss in enumerate(self.near_misses):
            yield miss, f"goal.closest_levers[{index}]", NearMiss, {}
