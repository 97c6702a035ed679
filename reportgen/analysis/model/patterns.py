"""The communication pattern of a design: T_comm(p) = α·a(p) + β·b(p), with p-dependent coefficients.
(docs/methods.md#21-the-pattern-of-the-designs-communication)

Every pattern the spec names is linear in α (latency per message) and β (time to move the message M once over one
link), so one representation serves the curve, its optimum, the sensitivity table and the least-squares fit: the two
coefficient columns a(p) and b(p), both 0 at p = 1 (one node communicates with no one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from reportgen.project.model import PatternName, Project

PatternSource = Literal["prediction.pattern", "design.slots.communication", "design.parallelism", "default"]

# The communication slot's vocabulary, as the pattern each choice is modelled by
SLOT_PATTERNS: dict[str, PatternName] = {"all-reduce": "ring", "parameter server": "parameter-server",
                                         "gossip": "gossip", "scatter-gather": "scatter-gather"}


@dataclass(frozen=True)
class Pattern:
    """One pattern with its parameters: S servers, k gossip peers, E all-to-all exchanges per step."""

    name: PatternName = "ring"
    servers: int = 1
    peers: int = 2
    exchanges: int = 1

    def coefficients(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a(p), b(p)) with T_comm(p) = α·a(p) + β·b(p); both exactly 0 where p = 1."""
        many = (p > 1).astype(float)
        hops = p - 1.0
        inverse = 1.0 / p
        if self.name == "ring":  # the products in this order keep the seeds' ring numbers to the last bit
            return hops, 2.0 * hops * inverse
        share = hops * inverse  # (p − 1)/p: the share of M each node sends in a reduce-scatter or all-gather
        if self.name == "tree":
            return 2.0 * np.ceil(np.log2(p)), 2.0 * many
        if self.name == "parameter-server":
            return 2.0 * many, 2.0 * p / self.servers * many
        if self.name == "gossip":  # a node has at most p − 1 peers (docs/methods.md, the pattern table)
            peers = np.minimum(float(self.peers), hops) * many
            return peers, peers
        return self.rounds * hops, self.rounds * share  # scatter-gather, sharded, all-to-all: rounds of the ring's

    @property
    def rounds(self) -> float:
        """How many ring-like passes (p − 1 messages, (p − 1)/p of M each) the pattern makes per step."""
        return {"scatter-gather": 2.0, "sharded": 3.0, "all-to-all": float(self.exchanges)}.get(self.name, 1.0)

    def t_comm(self, nodes: int, alpha: float, beta: float) -> float:
        """T_comm at one node count (a planned p beyond the evaluated range)."""
        a, b = self.coefficients(np.array([float(nodes)]))
        return float(alpha * a[0] + beta * b[0])

    def continuous_optimum(self, t_comp: float, alpha: float, beta: float) -> float | None:
        """Where dT_p/dp = 0 for p > 1, treating p as continuous: inf when T_p keeps falling, None when it never
        falls below T_comp/p's start (the bandwidth term alone outweighs the compute)."""
        if self.name == "gossip":
            return math.inf  # T_comm is flat in p: T_p falls for ever
        if self.name == "tree":  # T_comp/p + 2α·log2 p + 2β
            return t_comp * math.log(2.0) / (2.0 * alpha) if alpha > 0 else math.inf
        if self.name == "parameter-server":  # T_comp/p + 2α + 2βp/S
            return math.sqrt(self.servers * t_comp / (2.0 * beta)) if beta > 0 else math.inf
        # (T_comp − c_b·β)/p + c_a·α·p + constant, with c_a = rounds, c_b = 2 (ring) or rounds
        c_a, c_b = self.rounds, 2.0 if self.name == "ring" else self.rounds
        if t_comp <= c_b * beta:
            return None
        return math.sqrt((t_comp - c_b * beta) / (c_a * alpha)) if alpha > 0 else math.inf

    @property
    def generic_formula(self) -> str:
        """T_comm(p) for p > 1 in the spec's symbols (S servers, k peers, E exchanges)."""
        return {
            "ring": "α(p − 1) + 2β(p − 1)/p",
            "tree": "2α⌈log2 p⌉ + 2β",
            "parameter-server": "2α + 2βp/S",
            "scatter-gather": "2[(p − 1)α + β(p − 1)/p]",
            "gossip": "min(k, p − 1)(α + β)",
            "sharded": "3[(p − 1)α + β(p − 1)/p]",
            "all-to-all": "E[(p − 1)α + β(p − 1)/p]",
        }[self.name]

    @property
    def formula(self) -> str:
        """T_comm(p) for p > 1 as the methodology prints it, with the pattern's parameter given."""
        parameter = {"parameter-server": f"S = {self.servers}", "gossip": f"k = {self.peers}",
                     "all-to-all": f"E = {self.exchanges}"}.get(self.name)
        return self.generic_formula + (f", {parameter}" if parameter else "")

    @property
    def label(self) -> str:
        """The pattern as the report names it."""
        return {
            "ring": "ring all-reduce",
            "tree": "tree all-reduce",
            "parameter-server": f"parameter server, {self.servers} server{'s' if self.servers != 1 else ''}",
            "scatter-gather": "scatter-gather through a coordinator",
            "gossip": f"gossip, {self.peers} peer{'s' if self.peers != 1 else ''}",
            "sharded": "sharded state: FSDP full shard or ZeRO-3",
            "all-to-all": f"all-to-all, {self.exchanges} per step",
        }[self.name]

    @property
    def optimum_formula(self) -> str:
        return {
            "ring": "√((T_comp − 2β)/α)",
            "tree": "T_comp·ln 2/(2α)",
            "parameter-server": "√(S·T_comp/(2β))",
            "scatter-gather": "√((T_comp − 2β)/(2α))",
            "gossip": "none: T_comm does not grow with p",
            "sharded": "√((T_comp − 3β)/(3α))",
            "all-to-all": "√((T_comp − Eβ)/(Eα))",
        }[self.name]

    @property
    def source(self) -> str:
        """Where the formula comes from, and what it leaves out."""
        return {
            "ring": "the ring all-reduce's bandwidth term (nccl-tests' PERFORMANCE.md; Thakur et al. 2005) with the "
                    "seeds' latency term α(p − 1)",
            "tree": "latency-optimal all-reduce over a binary tree (Thakur et al. 2005; NCCL's tree algorithm)",
            "parameter-server": "every worker pushes M and pulls M; the S servers' links carry 2pM in all, so the "
                                "cost grows with p (Li et al. 2014)",
            "scatter-gather": "a coordinator sends each worker its 1/p share and gathers it back over its own link",
            "gossip": "each node exchanges M with min(k, p − 1) peers per step; the extra steps its weaker "
                      "consistency needs to converge are not modelled (Lian et al. 2017)",
            "sharded": "FSDP full shard and ZeRO-3: an all-gather in the forward pass, another in the backward and a "
                       "reduce-scatter, 1.5× the ring's volume (Rajbhandari et al. 2020, §7)",
            "all-to-all": "expert parallelism: E all-to-all exchanges per step, two per MoE layer forward and two "
                          "backward (Lepikhin et al. 2021)",
        }[self.name]

    @property
    def ring_like(self) -> bool:
        """The seeds' ring: the USL equivalence σ = 2β/T_comp, κ = α/T_comp and the rule of thumb hold only here."""
        return self.name == "ring"


RING = Pattern()  # the default: the seeds' ring all-reduce
EVERY_PATTERN = tuple(Pattern(name) for name in get_args(PatternName))  # for the methodology's table


@dataclass(frozen=True)
class ResolvedPattern:
    pattern: Pattern
    source: PatternSource
    note: str | None  # why the default was taken (a hybrid, a free-text choice), for the methodology


def zero_collective(stage: int) -> PatternName:
    """The data-parallel group's collective under a ZeRO stage: the ring's all-reduce for stages 0–2, the sharded
    state's all-gathers and reduce-scatter for stage 3."""
    return "sharded" if stage == 3 else "ring"


def slot_pattern(choices: tuple[str, ...]) -> PatternName | None:
    """The pattern a communication slot names: one choice from its vocabulary (case and spacing aside)."""
    if len(choices) != 1:
        return None
    return SLOT_PATTERNS.get(" ".join(choices[0].lower().split()))


def resolve_pattern(project: Project) -> ResolvedPattern:
    """The pattern T_comm follows: prediction.pattern, else the layout's data-parallel collective (ring for ZeRO
    stages 0–2, sharded for stage 3), else the communication slot's one choice, else the ring."""
    spec, design = project.prediction, project.design
    servers, peers = (spec.servers, spec.peers) if spec else (1, 2)
    exchanges = spec.exchanges if spec and spec.exchanges else 1

    def made(name: PatternName, source: PatternSource, note: str | None = None) -> ResolvedPattern:
        return ResolvedPattern(Pattern(name, servers, peers, exchanges), source, note)

    if spec is not None and spec.pattern is not None:
        return made(spec.pattern, "prediction.pattern")
    if design is not None and design.parallelism is not None:
        stage = design.parallelism.zero_stage
        return made(zero_collective(stage), "design.parallelism",
                    f"the data-parallel group's collective under ZeRO stage {stage}")
    slot = design.slots.communication if design and design.slots else None
    if slot is None:
        return made("ring", "default")
    named = slot_pattern(slot.choice)
    if named is not None:
        return made(named, "design.slots.communication")
    what = "a hybrid" if len(slot.choice) > 1 else f"“{slot.choice[0]}”, not a pattern the model names"
    return made("ring", "default", f"the communication slot is {what}: the ring is assumed (set prediction.pattern)")
