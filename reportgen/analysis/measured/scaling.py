"""Measure and attribute: speedup, efficiency, lost folds by cause, knee, POP metrics and the fits
(docs/methods.md#3-measured-scaling-and-where-the-speedup-went; the plausibility checks: methods.md#4y-plausibility)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from statistics import median
from typing import Annotated, Literal, get_args

import numpy as np

from reportgen.analysis.common import first_max, overlaps
from reportgen.analysis.model.fits import (
    AlphaBetaFit,
    AmdahlFit,
    USLFit,
    fit_alpha_beta,
    fit_amdahl,
    fit_usl,
    slope,
    usl_capacity,
)
from reportgen.analysis.model.patterns import RING, Pattern
from reportgen.analysis.model.prediction import model_curve, optimum
from reportgen.keys import Key, derived, interval
from reportgen.project.accuracy_table import Calibration, not_graded
from reportgen.project.model import BREAKDOWN_FIELDS, Precision, Run, RunForm, Scaling, ScalingMode, common_form
from reportgen.wording import listed

KNEE_THRESHOLD = 0.05
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261123  # fixed: two builds of one input give the same intervals, byte for byte
CONFIDENCE = 0.95
NOISY_HALF_WIDTH = 0.10  # an interval half-width above this share of the median makes a scale `noisy`
COMPONENTS = ("compute", "communication", "idle", "io", "time", "throughput", "energy", "co2_recorded",
              "p99_latency", "tokens", "flops")
Interval = tuple[float, float]
# (node counts, times per run) → the times under a what-if change of the inputs (methods.md#the-goals-levers)
TimeChange = Callable[[np.ndarray, np.ndarray], np.ndarray]
ScaleAxis = Literal["nodes", "load"]
SCALE_DOC = "node count, or load level with scaling.axis: load"
# Where lost speedup went; the order is the knee cause's tie order.
Cause = Literal["communication", "load-imbalance", "serial-fraction", "io", "pipeline-bubble", "start-up",
                "contention"]
CAUSES: tuple[Cause, ...] = get_args(Cause)
# The lost-time components of a breakdown (keys of ScaleRow.lost_time_s), each with the cause it names.
CAUSE_OF: dict[str, Cause] = {"serial": "serial-fraction", "io": "io", "communication": "communication",
                              "imbalance": "load-imbalance", "bubble": "pipeline-bubble", "startup": "start-up",
                              "contention": "contention"}
Trend = Literal["rising", "flat", "falling"]  # of the Karp-Flatt serial fraction with p
TREND_TOLERANCE = 0.10  # a trend must move e by more than 10 % of its mean over the measured range
# Without a breakdown the Karp–Flatt trend names the likely cause: an e that rises with p is an overhead that grows
# with the node count (communication or coordination); a flat one is a fixed serial fraction, as in Amdahl; a
# falling one is a loss that does not grow with p either (the serial part is amortised, or the caches help).
LIKELY_CAUSE: dict[Trend, Cause] = {"rising": "communication", "flat": "serial-fraction", "falling": "serial-fraction"}
TREND_READING = {
    "rising": "an overhead that grows with the node count (communication or coordination)",
    "flat": "a fixed serial fraction, as in Amdahl's law",
    "falling": "a loss that does not grow with the node count (a serial part amortised, or caches that help)",
}
# What the knee cause calls for, one sentence each, in the project's own workload.
STORAGE_REMEDY = "the storage path: more parallel readers, locality, a smaller shuffle, or compression"
REMEDIES: dict[Cause, str] = {
    "communication": "a better collective schedule, overlap of communication with compute, or gradient compression",
    "load-imbalance": "rebalancing the shards or speculative backup tasks for stragglers",
    "serial-fraction": "shrinking the serial stage (the optimizer step on one rank, work every rank repeats)",
    "io": STORAGE_REMEDY,
    "pipeline-bubble": "more micro-batches per step, or interleaved pipeline stages",
    "start-up": "a shorter start-up (launch, rendezvous, loading), paid once for more steps per run",
    "contention": "at most one rank per core (or device): measure the oversubscribed scales on more machines",
}
# A data-processing job's remedies speak of storage, shuffles and partitions, never of gradients.
DATA_REMEDIES: dict[Cause, str] = {
    **REMEDIES,
    "communication": "a smaller shuffle: partition so that fewer records cross nodes, combine before the shuffle, or "
                     "compress it",
    "load-imbalance": "repartitioning skewed keys, or speculative execution of straggling tasks",
    "serial-fraction": "parallelising the driver's stages (planning, the final merge or write)",
}
# A service's remedies speak of requests, never of gradients or checkpoints (methods.md#4x-serving-projects).
SERVING_REMEDIES: dict[Cause, str] = {
    **REMEDIES,
    "communication": "fewer fan-out hops per request, hedged requests against slow shards, or caching repeated work",
    "load-imbalance": "least-loaded routing across the replicas and hedged requests against stragglers",
    "serial-fraction": "batching requests, a smaller or quantized model, or caching what every request recomputes",
    "io": "caching hot data beside the replicas, or faster model loading",
    "pipeline-bubble": "larger batches through the pipeline stages",
    "start-up": "warm replicas kept loaded, so that scaling out does not pay the start-up",
}

IMPLAUSIBLE_EFFICIENCY = 1.25  # above this share of ideal, a run is more likely a slip than real
OUTLIER_FACTOR = 2.0  # a scale more than this factor from the USL fitted to the other scales is an outlier
OUTLIER_MIN_SCALES = 4
OUTLIER_LEAVE_ONE_OUT = 40  # up to this many scales each is held against a fit to the others; beyond, against all
REPEAT_IQR_FENCE = 3.0  # with four or more repeats, a run beyond 3 IQR outside the quartiles is named
REPEAT_FACTOR = 2.0  # with three, a run more than 2× from the middle of the other two
LOOKS_WEAK_SPREAD = 0.15  # strong scaling whose time per run stays within this share of the reference looks weak
# The losses beyond serial, communication and imbalance: (ScaleRow field, its name, the name in a sentence).
# A table column, a figure layer and a results key each appear when some run gives that part.
EXTRA_LOSSES = (("lost_io", "I/O", "I/O"), ("lost_bubble", "pipeline bubble", "the pipeline bubble"),
                ("lost_startup", "start-up", "start-up"), ("lost_contention", "contention", "contention"))


# A communication loss is cured differently by pattern: a parameter server's links grow with the workers, gossip's
# consistency, an all-to-all's exchanges (methods.md#21-the-pattern-of-the-designs-communication)
PATTERN_COMMUNICATION_REMEDIES = {
    "parameter-server": "more parameter servers, since each carries 2pM/S; sparse or compressed updates",
    "gossip": "fewer or cheaper exchanges per step (fewer peers, compressed messages)",
    "all-to-all": "fewer all-to-all exchanges per step (fewer MoE layers, expert placement within the node)",
    "sharded": "a hybrid shard (shard within the node, replicate across nodes), or the all-gathers overlapped with "
               "compute",
}


def remedies_for(workload: str | None, serving: bool, pattern: Pattern | None = None) -> dict[Cause, str]:
    if serving:
        return SERVING_REMEDIES
    remedies = DATA_REMEDIES if workload == "data-processing" else REMEDIES
    special = PATTERN_COMMUNICATION_REMEDIES.get(pattern.name) if pattern is not None else None
    return {**remedies, "communication": special} if special else remedies


@dataclass(frozen=True)
class Gain:
    """A cause that lost less time than ideal scaling allows at a scale: the folds it gained (negative lost folds),
    and its time at the reference and at the scale (methods.md#superlinear-attribution)."""

    cause: str  # a key of ScaleRow.lost_time_s: serial, io, communication, ...
    folds: float  # < 0
    reference_s: float
    at_scale_s: float
    ideal_fall: float  # how far ideal scaling shrinks it: q (strong), 1 (weak: the work per node is fixed)

    @property
    def gained(self) -> float:
        return -self.folds

    @property
    def fall(self) -> float | None:
        """How many times smaller the cause's time is at the scale than at the reference (None: it vanished)."""
        return self.reference_s / self.at_scale_s if self.at_scale_s > 0 else None

    @property
    def name(self) -> str:
        """The time that fell, as a reader knows it."""
        return GAIN_NAMES.get(self.cause, self.cause)


GAIN_NAMES = {"serial": "compute", "imbalance": "idle time", "startup": "start-up", "bubble": "the pipeline bubble",
              "contention": "compute", "io": "I/O"}


@dataclass(frozen=True)
class ScaleRow:
    # a whole node count; on a load axis (scaling.axis: load), a load level that may be fractional
    nodes: Annotated[float, Key(SCALE_DOC)]
    # per unit of work in throughput form without work_per_run
    time_s: Annotated[float | None, Key("T_p: the measured time per run")]
    speedup: Annotated[float, Key("S_p = T_ref · ref / T_p")]
    efficiency: Annotated[float, Key("E_p = S_p / p")]
    comm_share: Annotated[float | None, Key("communication / T_p (breakdown form)")]
    idle_share: Annotated[float | None, Key("idle / T_p (breakdown form)")]
    karp_flatt: Annotated[float | None, Key("the experimentally determined serial fraction e_p")]
    lost_folds: Annotated[float, Key("p − S_p: folds of speedup lost")]
    # folds of speedup lost to each cause (breakdown form)
    lost_serial: Annotated[float | None, Key("the folds lost to the serial fraction")]
    lost_communication: Annotated[float | None, Key("the folds lost to communication")]
    lost_imbalance: Annotated[float | None, Key("the folds lost to load imbalance")]
    lost_time_s: dict[str, float] | None  # seconds lost to each cause before apportioning
    imbalance: Annotated[float | None, Key("max / mean − 1 of the per-worker compute times")]
    superlinear_compute: bool
    measured_energy_j: float | None
    run: Run  # the median run of the scale's repeats (each component's median)
    repeats: Annotated[int, Key("runs measured at this node count; the row holds their medians")] = 1
    ideal: float = 1.0  # p / p_ref: the speedup of perfect scaling
    time_ci: Annotated[Interval | None, interval("time_s", also=("time_s_ci",))] = None  # None with one run
    speedup_ci: Annotated[Interval | None, interval("speedup")] = None
    efficiency_ci: Annotated[Interval | None, interval("efficiency")] = None
    lost_io: Annotated[float | None, Key("the folds lost to I/O that did not shrink (runs that give io)")] = None
    lost_bubble: Annotated[float | None, Key("the folds lost to the pipeline bubble (runs that give bubble)")] = None
    lost_startup: Annotated[float | None, Key("the folds lost to start-up: the wall time less the breakdown's parts "
                                              "(runs that give both)")] = None
    # an oversubscribed run's compute that did not shrink, not serial
    lost_contention: Annotated[float | None, Key(
        "the folds lost to contention: an oversubscribed run's compute that did not shrink (runs whose "
        "ranks_per_node exceed hardware.cores)")] = None
    gustafson: Annotated[float | None, Key("weak mode: Gustafson's serial fraction s_p = (q − S_p)/(q − 1)")] = None
    gains: tuple[Gain, ...] = ()  # the causes that gained folds here (superlinear), each named in the report
    # the share of the peak the run reached (methods.md#flops-mfu-and-hfu), filled by
    # reportgen.analysis.measured.utilization
    tokens: Annotated[float | None, Key("tokens the run processed (its own, or the default it was read with)")] = None
    mfu: Annotated[float | None, Key("model FLOP utilization: the model's FLOPs (attention counted when the shape "
                                     "has its heads) over the run's time at the nodes' peak at the run's "
                                     "precision")] = None
    mfu_6p: Annotated[float | None, Key("MFU counting 6·P FLOPs a token (attention left out), against BF16 dense, as "
                                        "the time wall reads it")] = None
    hfu: Annotated[float | None, Key("hardware FLOP utilization: what was executed, recomputation included")] = None
    hfu_source: Annotated[Literal["counted", "given", "model"] | None, Key(
        "where the hardware FLOPs come from: the run's counted flops, baseline.model.hardware_flops_per_token, or "
        "the model's count for the declared recomputation")] = None
    achieved_flops_per_device: Annotated[float | None, Key("HFU × the peak of one device: achieved FLOP/s per "
                                                           "device")] = None
    precision: Annotated[Precision | None, Key(
        "the GEMMs' precision of the run (baseline.training.precision): mfu and hfu are against its peak")] = None
    mfu_bf16: Annotated[float | None, Key("MFU against the nodes' BF16 dense peak (mfu's for a BF16 run)")] = None
    hfu_bf16: Annotated[float | None, Key("HFU against the nodes' BF16 dense peak (hfu's for a BF16 run)")] = None
    excluded: Annotated[tuple[str, ...], Key(
        "the quantities of this scale no choice rests on, because they cannot be right (energy, collective, "
        "throughput): shown, marked, and left out of the energy and carbon choices, the α–β fit and the serving "
        "choices", item="quantity")] = ()

    @property
    def noisy(self) -> bool:
        """The time interval's half-width exceeds 10 % of the median time."""
        if self.time_ci is None or not self.time_s:
            return False
        return (self.time_ci[1] - self.time_ci[0]) / 2 > NOISY_HALF_WIDTH * self.time_s


@dataclass(frozen=True)
class PopRow:
    nodes: Annotated[float, Key(SCALE_DOC)]
    load_balance: Annotated[float, Key("mean / max worker compute")]
    comm_efficiency: Annotated[float | None, Key("max compute / runtime")]
    parallel_efficiency: Annotated[float | None, Key("load balance × communication efficiency")]
    imbalance: Annotated[float, Key("max / mean − 1")]
    workers_s: tuple[float, ...]
    collective_s: float | None


@dataclass(frozen=True)
class CommFit:
    """a + b·p fitted to the measured communication times, and the optimum it implies."""

    a_s: Annotated[float, Key("intercept")]
    b_s: Annotated[float, Key("slope per node")]
    residual_s: Annotated[float, Key("RMS residual")]
    implied_p_star: Annotated[int | None, Key("the optimum it implies")]


@dataclass(frozen=True)
class ScalingResult:
    form: Annotated[RunForm, Key("how the runs were written")]
    reference_nodes: Annotated[float, Key("the smallest measured scale, the reference of speedup")]
    # throughput form without work_per_run: times, costs and energy are per unit of work
    per_unit_of_work: Annotated[bool, Key("times are per unit of work (throughput form without "
                                          "scaling.work_per_run)")]
    rows: Annotated[tuple[ScaleRow, ...], Key("one row per measured node count")]
    pop: Annotated[tuple[PopRow, ...], Key("POP efficiency metrics per scale (breakdown form)")]
    knee_nodes: Annotated[float | None, Key("the knee: the first scale whose efficiency falls below the "
                                            "threshold")]
    knee_score: float  # max(y − x) of Kneedle
    knee_cause: Annotated[Cause | None, Key("the cause with the most lost time beyond the knee (at the largest "
                                            "scale without one)")]
    knee_cause_inferred: Annotated[bool, Key("the cause was inferred (no breakdown), not measured")]
    knee_cause_at: float | None  # the scale whose lost time named the cause
    remedy: str | None
    peak_nodes: Annotated[float, Key("the measured scale of the largest speedup")]
    first_below_half_efficiency: Annotated[float | None, Key("the first scale with efficiency below 0.5",
                                                             name="first_below_half_efficiency_nodes")]
    amdahl: Annotated[AmdahlFit | None, Key("Amdahl's law fitted to the speedups")]
    usl: Annotated[USLFit | None, Key("the Universal Scalability Law fitted to the speedups")]
    karp_flatt_slope: Annotated[float | None, Key("the Karp-Flatt serial fraction's slope per node")]
    # None below two scales beyond p_ref
    karp_flatt_trend: Annotated[Trend | None, Key(
        "rising (falling) when the slope moves e by more than 10 % of its mean over the measured range, else flat; "
        "drives the inferred knee cause")]
    comm_fit: AlphaBetaFit | None
    comm_fit_implied_p_star: int | None
    knee_uncertain: Annotated[bool, Key("the knee scale's speedup interval overlaps a neighbouring scale's")] = False
    # what `nodes` counts: whole nodes, or a load level (possibly fractional) for the fits
    axis: Annotated[ScaleAxis, Key("scaling.axis: what a scale counts, whole nodes or a load level (concurrency) "
                                   "that may be fractional")] = "nodes"
    outliers: tuple[Outlier, ...] = ()  # scales far from the USL fitted to the others
    superlinear_reason: str | None = None  # scaling.superlinear: the team's reason that a superlinear run is real
    # weak: the work per node is fixed, speedups are scaled (Gustafson)
    mode: Annotated[ScalingMode, Key("scaling.mode: strong (fixed work per run) or weak (fixed work per node: scaled "
                                     "speedups q·T_ref/T_p, Gustafson in place of Amdahl and Karp–Flatt)")] = "strong"
    gustafson: Annotated[GustafsonFit | None, Key("weak mode: Gustafson's law S = q − s(q − 1) fitted to the scaled "
                                                  "speedups")] = None
    outlier_repeats: Annotated[tuple[OutlierRepeat, ...], Key(
        "single repeats far from their scale's others (three repeats: more than 2× from the middle of the other two; "
        "four or more: beyond 3 IQR outside the quartiles)")] = ()
    looks_weak: bool = False  # strong mode, but the time per run stays flat as q grows: weak scaling, likely
    peak_nodes_ci: Annotated[Interval | None, Key(
        "90 % interval of the peak scale over the resamples of the runs (methods.md#few-runs-stated-confidence)")] \
        = None
    knee_nodes_ci: Annotated[Interval | None, Key("90 % interval of the knee over the resamples (null without a "
                                                  "knee)")] = None
    # A lever's what-if (methods.md#the-goals-levers): the change the rows' times carry, applied to the fit's times
    # too, and the reference time the fit was made with
    what_if: TimeChange | None = None
    fit_reference_s: float | None = None

    def narrowed(self, nodes: float | None) -> ScalingResult:
        """Only the rows a verdict at a plan of `nodes` reads: the plan's, and the first three (the reference, and
        the count that says a fit may judge an unmeasured plan); the fits as they are. A lever's what-if judges
        thousands of scales' projects in milliseconds with it."""
        rows = tuple(row for index, row in enumerate(self.rows) if index < 3 or row.nodes == nodes)
        return self if len(rows) == len(self.rows) else replace(self, rows=rows)

    def with_times(self, change: TimeChange) -> ScalingResult:
        """The measured times, and the fitted ones, as `change` makes them (every other figure as measured)."""
        nodes = np.array([row.nodes for row in self.rows], dtype=float)
        times = np.array([row.time_s or 0.0 for row in self.rows], dtype=float)
        changed = change(nodes, times)
        rows = tuple(replace(row, time_s=float(t)) if row.time_s is not None else row
                     for row, t in zip(self.rows, changed, strict=True))
        return replace(self, rows=rows, what_if=change, fit_reference_s=self.rows[0].time_s)

    @derived(Key("a + b·p fitted to the measured communication times", name="comm_fit"))
    def comm_fit_line(self) -> CommFit | None:
        fit = self.comm_fit
        return None if fit is None else CommFit(fit.alpha_s, fit.beta_s, fit.residual_s, self.comm_fit_implied_p_star)

    def at_or_below(self, plan: float | None) -> tuple[float, ...]:
        """The measured node counts at the plan or below (every one without a plan): where a layout or plan that
        the memory model says does not fit ran all the same (fewer devices hold more each)."""
        return tuple(row.nodes for row in self.rows if plan is None or row.nodes <= plan)

    @derived(Key("scales whose time interval's half-width exceeds 10 % of the median", item=SCALE_DOC))
    def noisy_nodes(self) -> tuple[float, ...]:
        return tuple(r.nodes for r in self.rows if r.noisy)

    @property
    def another_scale(self) -> str:
        """What to measure beside the first scale: ideally 1 node, unless that is the one measured."""
        return "a larger node count" if self.rows[0].nodes == 1 else "another node count, ideally 1 node"

    @property
    def lost_to(self) -> str:
        """The causes lost folds are apportioned to, as a caption lists them."""
        return listed(["the serial fraction", "communication", "load imbalance",
                       *(phrase for _, _, phrase in self.extra_losses)])

    @property
    def extra_losses(self) -> tuple[tuple[str, str, str], ...]:
        """The EXTRA_LOSSES some scale has (I/O, the pipeline bubble, start-up), in that order."""
        return tuple(loss for loss in EXTRA_LOSSES if any(getattr(r, loss[0]) is not None for r in self.rows))

    @derived(Key("scales slower than any serial fraction explains (Karp–Flatt e > 1, or every scale when Amdahl's "
                 "f ≥ 1)", name="slower_than_serial_nodes", item=SCALE_DOC))
    def slower_than_serial(self) -> tuple[float, ...]:
        """Scales whose Karp–Flatt fraction exceeds 1, or every scale beyond the reference when Amdahl's f ≥ 1:
        slower than any serial fraction of the reference's work explains."""
        if self.amdahl is not None and self.amdahl.serial_fraction >= 1:
            return tuple(r.nodes for r in self.rows if r.nodes > self.reference_nodes)
        return tuple(r.nodes for r in self.rows if r.karp_flatt is not None and r.karp_flatt > 1)

    @property
    def repeated(self) -> bool:
        return any(row.repeats > 1 for row in self.rows)

    @property
    def utilized(self) -> bool:
        """Some scale's MFU is known (methods.md#flops-mfu-and-hfu)."""
        return any(row.mfu is not None for row in self.rows)

    @property
    def hfu_differs(self) -> bool:
        """Some scale executed more than the model's FLOPs (recomputation): HFU is shown beside MFU."""
        return any(row.hfu is not None and row.mfu is not None and row.hfu > row.mfu * (1 + 1e-9) for row in self.rows)

    @property
    def below_bf16(self) -> bool:
        """Some run used a precision other than BF16 or FP16: its MFU against BF16 is shown beside it
        (methods.md#precision)."""
        return any(row.mfu_bf16 is not None and row.mfu is not None and row.mfu_bf16 != row.mfu for row in self.rows)

    @property
    def single_scale(self) -> bool:
        """One node count measured: speedup, Karp–Flatt, knee and fits need another (ideally p = 1)."""
        return len(self.rows) < 2

    def fitted_times(self, nodes: np.ndarray) -> np.ndarray | None:
        """T_p the USL fit predicts at each node count (None without a fit): T_ref × X_ref / X(p), the fit being of
        the speedups (X_ref = 1) or, in throughput form, of the throughputs; in weak scaling, of the scaled speedups,
        so T_ref × q / X(p)."""
        reference = self.rows[0]
        reference_s = self.fit_reference_s if self.fit_reference_s is not None else reference.time_s
        if self.usl is None or reference_s is None:
            return None
        nodes = np.asarray(nodes, dtype=float)
        capacity = usl_capacity(nodes, self.usl.gamma, self.usl.sigma, self.usl.kappa)
        scale = float(reference.run.throughput or 0.0) if self.form == "throughput" else 1.0
        # weak scaling's speedups are scaled (q · T_ref / T_p): a run's time is T_ref · q / S(q)
        grown = nodes / self.reference_nodes if self.mode == "weak" and self.form != "throughput" else 1.0
        with np.errstate(divide="ignore"):
            times = np.where(capacity > 0, reference_s * scale * grown / np.maximum(capacity, 1e-300), np.inf)
        return self.what_if(nodes, times) if self.what_if is not None else times

    def goal_work(self, nodes: float, plan: float | None) -> float:
        """How many of a run at `nodes` do the goal's work (methods.md#weak-scaling-compares-equal-work): one in
        strong scaling; in weak scaling a run at p nodes does p shares and the goal's work is the plan's shares
        (the largest measured scale's without a plan), so plan / p of them, one after another."""
        if self.mode != "weak":
            return 1.0
        shares = plan if plan else max(row.nodes for row in self.rows)
        return shares / nodes

    @property
    def gains(self) -> tuple[tuple[ScaleRow, Gain], ...]:
        """Every cause that gained folds, with its scale (superlinear attribution)."""
        return tuple((row, gain) for row in self.rows for gain in row.gains)

    @property
    def implausible(self) -> tuple[ScaleRow, ...]:
        """Scales whose efficiency exceeds 1.25: far more often a unit slip or a smaller problem than real."""
        return tuple(row for row in self.rows if row.efficiency > IMPLAUSIBLE_EFFICIENCY)

    @derived(Key("the peak's interval is a location, which the corpus does not grade (it grades values at scales): "
                 "{predictor: resampled-fits, status: not-graded}"))
    def peak_nodes_ci_calibration(self) -> Calibration:
        return not_graded("resampled-fits")

    @derived(Key("the knee's interval is a location: not graded"))
    def knee_nodes_ci_calibration(self) -> Calibration:
        return not_graded("resampled-fits")


@dataclass(frozen=True)
class Outlier:
    """A scale whose capacity departs by more than a factor 2 from the USL fitted to the other scales."""

    nodes: float
    measured: float  # its capacity: X_p in throughput form, else 1 / T_p (runs per second)
    expected: float  # the fit's capacity there

    @property
    def factor(self) -> float:
        """How many times faster (above 1) or slower (below 1) than the fit the scale measured."""
        return self.measured / self.expected if self.expected > 0 else float("inf")


@dataclass(frozen=True)
class GustafsonFit:
    """Gustafson's law S = q − s(q − 1), least squares of (q − S) = s(q − 1) over q > 1 (weak scaling)."""

    serial_fraction: Annotated[float, Key("s")]


@dataclass(frozen=True)
class OutlierRepeat:
    """One repeat far from its scale's others: named, and kept in the median."""

    nodes: Annotated[float, Key(SCALE_DOC)]
    # 1-based, in the order the repeats were written
    position: Annotated[int, Key("the repeat's place among its scale's rows, from 1")]
    value: Annotated[float, Key("its time per run (s), or its throughput in throughput form")]
    # the scale's median (the other two's middle with three repeats)
    centre: Annotated[float, Key("what it was held against")]
    repeats: Annotated[int, Key("the scale's repeats")]


def run_time(run: Run, work_per_run: float | None) -> float | None:
    if run.form == "breakdown":
        return run.time if run.time is not None else run.parts  # the wall, start-up included, when given
    if run.form == "total":
        return run.time
    assert run.throughput is not None
    return (work_per_run if work_per_run is not None else 1.0) / run.throughput


def analyze_scaling(scaling: Scaling | None, *, max_nodes: int = 4096, serving: bool = False, cores: int | None = None,
                    workload: str | None = None, pattern: Pattern | None = None,
                    excluded: Mapping[float, tuple[str, ...]] | None = None) -> ScalingResult | None:
    """Measured scaling; `pattern` is the design's communication pattern the measured column is fitted with;
    `excluded` the quantities of each scale that cannot be right (reportgen.analysis.measured.reconcile), marked on
    its row."""
    if scaling is None or not scaling.runs:
        return None
    weak = scaling.mode == "weak"
    groups = repeats_by_nodes(scaling.runs)
    runs = [median_run(group) for group in groups]  # every analysis runs on the medians of the repeats
    form = common_form(runs)
    assert form is not None
    reference = runs[0]  # p = 1 when measured, else the smallest p (speedups relative to it)
    p_ref = reference.nodes
    times = [run_time(run, scaling.work_per_run) for run in runs]
    t_ref = times[0]
    assert t_ref is not None
    intervals = bootstrap_intervals(groups, form, scaling.work_per_run, weak=weak)
    rows = []
    for run, t_p, group, ci in zip(runs, times, groups, intervals, strict=True):
        assert t_p is not None
        q = run.nodes / p_ref
        # Weak scaling: the work grows with p, so the scaled speedup of a time is q·T_ref/T_p (Gustafson 1988).
        if form == "throughput":
            speedup = float(run.throughput or 0.0) / float(reference.throughput or 1.0)
        else:
            speedup = (q if weak else 1.0) * t_ref / t_p
        row = _row(run, reference, t_p, t_ref, q, speedup, form, weak=weak, cores=cores)
        rows.append(replace(row, repeats=len(group), ideal=q, time_ci=ci[0], speedup_ci=ci[1], efficiency_ci=ci[2],
                            excluded=(excluded or {}).get(run.nodes, ())))
    speedups = [row.speedup for row in rows]
    qs = [row.nodes / p_ref for row in rows]
    # a throughput that cannot be right is no point of the knee, the peak or the fit the choices rest on
    # (methods.md#implausible-throughput, methods.md#constraints-applied-once)
    fitted = [r for r in rows if "throughput" not in r.excluded]
    knee, score = kneedle([row.nodes for row in fitted], [row.speedup for row in fitted]) if fitted else (None, 0.0)
    cause, inferred, cause_at = _knee_cause(rows, knee, form)
    two_scales = len(rows) >= 2  # Amdahl's and Gustafson's one parameter: exact with two scales
    usl = fit_usl([float(r.nodes) for r in fitted],
                  [r.run.throughput if form == "throughput" else r.speedup for r in fitted]  # type: ignore[misc]
                  ) if len(fitted) >= 3 else None  # the USL from three scales
    kf = [(r.nodes, r.karp_flatt) for r in rows if r.karp_flatt is not None]
    kf_slope = slope([float(p) for p, _ in kf], [e for _, e in kf]) if len(kf) >= 2 else None
    trend = karp_flatt_trend(kf, kf_slope)
    if form != "breakdown" and trend is not None:
        cause, inferred = LIKELY_CAUSE[trend], True
    comm_fit, implied = _comm_fit(runs, form, p_ref, max_nodes, pattern or RING)
    return ScalingResult(
        form=form,
        reference_nodes=p_ref,
        per_unit_of_work=form == "throughput" and scaling.work_per_run is None,
        rows=tuple(rows),
        pop=tuple(_pop(row) for row in rows if row.run.workers),
        knee_nodes=knee,
        knee_score=score,
        knee_cause=cause,
        knee_cause_inferred=inferred,
        knee_cause_at=cause_at,
        remedy=remedies_for(workload, serving, pattern)[cause] if cause else None,
        peak_nodes=first_max(fitted or rows, key=lambda r: r.speedup).nodes,
        first_below_half_efficiency=next((r.nodes for r in rows if r.efficiency < 0.5), None),
        amdahl=fit_amdahl(qs, speedups) if two_scales and not weak else None,
        usl=usl,
        karp_flatt_slope=kf_slope,
        karp_flatt_trend=trend,
        comm_fit=comm_fit,
        comm_fit_implied_p_star=implied,
        knee_uncertain=knee_uncertain(rows, knee),
        axis=scaling.axis,
        outliers=find_outliers(rows, form),
        superlinear_reason=scaling.superlinear,
        mode=scaling.mode,
        gustafson=fit_gustafson(qs, speedups) if two_scales and weak else None,
        outlier_repeats=find_outlier_repeats(groups, scaling.work_per_run),
        looks_weak=not weak and looks_weakly_scaled(rows, form),
    )


def fit_gustafson(q: list[float], speedup: list[float]) -> GustafsonFit | None:
    """Least squares of q − S = s(q − 1) over q > 1 (a line through the origin; exact with one such scale)."""
    points = [(qi, si) for qi, si in zip(q, speedup, strict=True) if qi > 1]
    if not points:
        return None
    lost = np.array([qi - si for qi, si in points])
    span = np.array([qi - 1.0 for qi, _ in points])
    return GustafsonFit(float(lost @ span / (span @ span)))


def looks_weakly_scaled(rows: list[ScaleRow], form: RunForm) -> bool:
    """Strong scaling in a time form whose time per run stays flat while the node count grows fourfold or more:
    the work most likely grew with p, and scaling.mode: weak would read it right."""
    if form == "throughput" or len(rows) < 3 or rows[-1].ideal < 4:
        return False
    reference = rows[0].time_s or 0.0
    return reference > 0 and all(abs((r.time_s or 0.0) / reference - 1) <= LOOKS_WEAK_SPREAD for r in rows)


def find_outlier_repeats(groups: list[list[Run]], work_per_run: float | None) -> tuple[OutlierRepeat, ...]:
    """Repeats far from the others of their scale: with four or more, beyond 3 IQR outside the quartiles;
    with three, more than 2× from the middle of the other two (the median of three moves with the suspect, so
    it is held against the two it is not)."""
    found: list[OutlierRepeat] = []
    for group in groups:
        if len(group) < 3:
            continue
        values = [_repeat_value(run, work_per_run) for run in group]
        if len(group) == 3:
            # only the repeat farthest from the other two can be the outlier: with one wild run, the two good ones
            # are each far from the middle of the wild one and the other, and were named too
            centres = [(values[(index + 1) % 3] + values[(index + 2) % 3]) / 2 for index in range(3)]
            departures = [abs(math.log(value / centre)) if value > 0 and centre > 0 else 0.0
                          for value, centre in zip(values, centres, strict=True)]
            index = departures.index(max(departures))
            if departures[index] > math.log(REPEAT_FACTOR):
                found.append(OutlierRepeat(group[0].nodes, index + 1, values[index], centres[index], 3))
            continue
        low, high = np.percentile(values, [25, 75])
        fence = REPEAT_IQR_FENCE * (high - low)
        centre = float(np.median(values))
        found += [OutlierRepeat(group[0].nodes, index + 1, value, centre, len(group))
                  for index, value in enumerate(values) if value < low - fence or value > high + fence]
    return tuple(found)


def _repeat_value(run: Run, work_per_run: float | None) -> float:
    """A repeat's time per run, or its throughput in throughput form (what the scale's median is taken of)."""
    if run.form == "throughput":
        return float(run.throughput or 0.0)
    return float(run_time(run, work_per_run) or 0.0)


def _capacity(row: ScaleRow, form: RunForm) -> float:
    """What a scale delivers per second: X_p in throughput form, else runs per second (1 / T_p)."""
    if form == "throughput":
        return float(row.run.throughput or 0.0)
    return 1.0 / row.time_s if row.time_s else 0.0


def find_outliers(rows: list[ScaleRow], form: RunForm) -> tuple[Outlier, ...]:
    """Scales departing by more than OUTLIER_FACTOR from the USL fitted to the other scales.

    One bad run bends every fit that includes it, so that the good scales would seem to depart too: the scale that
    departs most is flagged and set aside, and the others are held again against fits without it, while at least
    OUTLIER_MIN_SCALES remain. With many scales one point barely moves a fit: past OUTLIER_LEAVE_ONE_OUT scales each
    is held against one fit to all (one fit instead of thousands)."""
    points = [(r.nodes, float(r.nodes), _capacity(r, form)) for r in rows]
    if len(points) > OUTLIER_LEAVE_ONE_OUT:
        fit = fit_usl([x for _, x, _ in points], [c for _, _, c in points])
        departures = [_departure(node, x, c, fit) for node, x, c in points] if fit else []
        return tuple(d for d in departures if d is not None)
    found: list[Outlier] = []
    while len(points) >= OUTLIER_MIN_SCALES:
        worst: tuple[float, int, Outlier] | None = None
        near = fit_usl([x for _, x, _ in points], [c for _, _, c in points])
        for index, (node, x, c) in enumerate(points):
            others = points[:index] + points[index + 1:]
            departure = _departure(node, x, c, fit_usl([o[1] for o in others], [o[2] for o in others], near=near))
            if departure is not None:
                size = max(departure.factor, 1 / departure.factor)
                if worst is None or size > worst[0]:
                    worst = (size, index, departure)
        if worst is None:
            break
        found.append(worst[2])
        del points[worst[1]]
    return tuple(sorted(found, key=lambda o: o.nodes))


def _departure(nodes: float, x: float, capacity: float, fit: USLFit | None) -> Outlier | None:
    """The scale as an outlier of `fit`, or None when it lies within OUTLIER_FACTOR of it."""
    if fit is None:
        return None
    expected = float(usl_capacity(np.array([x]), fit.gamma, fit.sigma, fit.kappa)[0])
    if expected <= 0 or 1 / OUTLIER_FACTOR <= capacity / expected <= OUTLIER_FACTOR:
        return None
    return Outlier(nodes, capacity, expected)


# ------------------------------------------------------------------------------------------------------ repeats
def repeats_by_nodes(runs: tuple[Run, ...] | list[Run]) -> list[list[Run]]:
    """The runs grouped by node count (rows with the same `nodes` are repeats), in node order."""
    groups: dict[float, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.nodes, []).append(run)
    return [groups[nodes] for nodes in sorted(groups)]


def median_run(group: list[Run]) -> Run:
    """One run whose every component is the median over the repeats (a component some repeats lack: over those
    that give it); per-worker times worker by worker when every repeat lists the same number of workers."""
    if len(group) == 1:
        return group[0]
    values: dict[str, float | None] = {}
    for name in COMPONENTS:
        given = [getattr(run, name) for run in group if getattr(run, name) is not None]
        values[name] = median(given) if given else None
    counts = {len(run.workers) for run in group}
    workers = tuple(median(times) for times in zip(*(run.workers for run in group), strict=True)) \
        if len(counts) == 1 else group[0].workers
    return replace(group[0], workers=workers, **values)  # type: ignore[arg-type]  # COMPONENTS are float fields


def bootstrap_intervals(groups: list[list[Run]], form: RunForm, work_per_run: float | None, *,
                        weak: bool = False) -> list[tuple[Interval | None, Interval | None, Interval | None]]:
    """95 % percentile-bootstrap intervals of T_p, S_p and E_p per scale (None for a scale with one run).

    Each resample draws the scale's repeats with replacement and takes the medians, as the analysis does; the
    reference's repeats are resampled too (and for the reference itself the same draw is used on both sides, so
    its speedup stays 1). Seeded, so two builds of one input agree."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    t_ref = _resampled_times(groups[0], form, work_per_run, rng)
    p_ref = groups[0][0].nodes
    tail = (1 - CONFIDENCE) / 2 * 100
    out: list[tuple[Interval | None, Interval | None, Interval | None]] = []
    for index, group in enumerate(groups):
        if len(group) < 2:  # no interval, and no draws: a project of 10,000 single runs allocates none
            out.append((None, None, None))
            continue
        times = t_ref if index == 0 else _resampled_times(group, form, work_per_run, rng)
        q = group[0].nodes / p_ref
        scaled = q if weak and form != "throughput" else 1.0  # weak scaling's scaled speedup q·T_ref/T_p
        speedups = scaled * t_ref / times if index else np.ones_like(times)
        out.append((_percentiles(times, tail), _percentiles(speedups, tail), _percentiles(speedups / q, tail)))
    return out


def _resampled_times(group: list[Run], form: RunForm, work_per_run: float | None,
                     rng: np.random.Generator) -> np.ndarray:
    """T_p of BOOTSTRAP_RESAMPLES resamples of the group's repeats (all equal to the one run when it is alone)."""
    if form == "total" or (form == "breakdown" and all(run.time is not None for run in group)):
        table = np.array([[run.time] for run in group], dtype=float)  # the wall (a breakdown's: start-up included)
    elif form == "breakdown":
        table = np.array([[getattr(run, name) or 0.0 for name in BREAKDOWN_FIELDS] for run in group])
    else:
        table = np.array([[run.throughput] for run in group], dtype=float)
    # the repeats in one order whatever the file's: the draws, and so the interval, do not depend on it
    table = table[np.lexsort(table.T[::-1])]
    if len(group) == 1:
        medians = np.repeat(table, BOOTSTRAP_RESAMPLES, axis=0)
    else:
        picks = rng.integers(0, len(group), size=(BOOTSTRAP_RESAMPLES, len(group)))
        medians = np.median(table[picks], axis=1)  # (resamples, components)
    totals: np.ndarray = ((work_per_run if work_per_run is not None else 1.0) / medians[:, 0] if form == "throughput"
                          else medians.sum(axis=1))
    return totals


def _percentiles(values: np.ndarray, tail: float) -> tuple[float, float]:
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def knee_uncertain(rows: list[ScaleRow], knee: float | None) -> bool:
    """The knee's speedup interval overlaps a neighbouring scale's: another run could move the knee."""
    index = next((i for i, row in enumerate(rows) if row.nodes == knee), None)
    if index is None or rows[index].speedup_ci is None:
        return False
    interval = rows[index].speedup_ci
    assert interval is not None
    return any(neighbour.speedup_ci is not None and overlaps(interval, neighbour.speedup_ci)
               for neighbour in (rows[i] for i in (index - 1, index + 1) if 0 <= i < len(rows)))


def _row(run: Run, reference: Run, t_p: float, t_ref: float, q: float, speedup: float, form: RunForm, *,
         weak: bool = False, cores: int | None = None) -> ScaleRow:
    lost_folds = q - speedup
    karp_flatt = (1.0 / speedup - 1.0 / q) / (1.0 - 1.0 / q) if q > 1 and not weak else None
    gustafson = (q - speedup) / (q - 1.0) if q > 1 and weak else None
    comm_share = idle_share = None
    lost: dict[str, float | None] = dict.fromkeys(CAUSE_OF)
    lost_time = None
    superlinear = False
    gains: tuple[Gain, ...] = ()
    if form == "breakdown":
        assert run.compute is not None and reference.compute is not None
        comm_share = (run.communication or 0.0) / t_p
        idle_share = (run.idle or 0.0) / t_p
        shrink = 1.0 if weak else 1.0 / q  # p_ref / p; weak scaling's ideal time stays T_ref
        # each cause's (time at p, time at the reference); I/O, the pipeline bubble and start-up are causes of
        # their own when the runs give them
        parts = {"serial": (run.compute, reference.compute),
                 "communication": (run.communication or 0.0, reference.communication or 0.0),
                 "imbalance": (run.idle or 0.0, reference.idle or 0.0)}
        for key, mine, theirs in (("io", run.io, reference.io), ("bubble", run.bubble, reference.bubble),
                                  ("startup", run.start_up, reference.start_up)):
            if mine is not None or theirs is not None:
                parts[key] = (mine or 0.0, theirs or 0.0)
        if run.oversubscribed(cores):
            # oversubscribed: the ranks share cores, so the compute that did not shrink is contention
            parts["contention"] = parts.pop("serial")
            parts["serial"] = (0.0, 0.0)
        # signed: a cause that lost less than nothing gained (methods.md#superlinear-attribution); a remainder
        # within the tolerance of the run's time is rounding, not a gain (10010 / 100 is not superlinear)
        lost_time = {cause: _rounded(mine - theirs * shrink, t_p) for cause, (mine, theirs) in parts.items()}
        superlinear = lost_time.get("serial", 0.0) < 0 or lost_time.get("contention", 0.0) < 0
        lost = {**lost, **_apportion(lost_folds, lost_time, q, t_p)}
        gains = tuple(Gain(cause, lost[cause] or 0.0, parts[cause][1], parts[cause][0], 1.0 / shrink)
                      for cause in lost_time if (lost[cause] or 0.0) < 0)
    workers = run.workers
    imbalance = max(workers) / (sum(workers) / len(workers)) - 1.0 if workers else None
    return ScaleRow(run.nodes, t_p, speedup, speedup / q, comm_share, idle_share, karp_flatt, lost_folds,
                    lost["serial"], lost["communication"], lost["imbalance"], lost_time, imbalance, superlinear,
                    run.energy, run, lost_io=lost["io"], lost_bubble=lost["bubble"], lost_startup=lost["startup"],
                    gustafson=gustafson, lost_contention=lost["contention"], gains=gains)


MEASURED_TOLERANCE = 1e-9  # relative: measured quantities that differ by less are equal (methods.md#tolerance)


def _rounded(seconds: float, t_p: float) -> float:
    return 0.0 if abs(seconds) <= MEASURED_TOLERANCE * t_p else seconds


def _apportion(lost_folds: float, lost_time: dict[str, float], q: float, t_p: float) -> dict[str, float | None]:
    """Lost folds shared among the causes by their signed lost time (methods.md#superlinear-attribution): a cause
    that lost time keeps a non-negative share, a cause that gained time a negative one (a gain, never credited to
    another cause), and the parts sum to lost_folds as results.json promises.

    The lost folds are q·(T_p − T_ideal)/T_p and the signed lost times sum to T_p − T_ideal, so a cause's folds
    are q·t_c/T_p: used directly when the sum is within rounding of zero (no fold lost overall, some gained by
    one cause and lost by another), where the proportion would divide by nothing."""
    total = sum(lost_time.values())
    if abs(total) <= MEASURED_TOLERANCE * t_p:
        return {cause: q * seconds / t_p for cause, seconds in lost_time.items()}
    # The share first: a subnormal lost time times the folds would underflow to zero before the division.
    return {cause: lost_folds * (seconds / total) for cause, seconds in lost_time.items()}


def kneedle(nodes: list[float], speedups: list[float]) -> tuple[float | None, float]:
    """Kneedle with x = log2 p and y = S, min–max normalised: the p maximising y − x, if that is ≥ 0.05."""
    if len(nodes) < 3:
        return None, 0.0
    index, score = kneedles(np.asarray(nodes, dtype=float), np.asarray([speedups], dtype=float))
    return (nodes[int(index[0])] if index[0] >= 0 else None), float(score[0])


def kneedles(nodes: np.ndarray, speedups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kneedle on each row of `speedups` (resamples × scales) at once: each row's knee as an index into `nodes`
    (−1 where there is none) and its score, element by element the arithmetic of one row."""
    x = np.log2(nodes)
    y = speedups
    x_span = x.max() - x.min()
    y_min = y.min(axis=1, keepdims=True)
    y_span = y.max(axis=1, keepdims=True) - y_min
    flat = (y_span[:, 0] == 0) | (x_span == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = (y - y_min) / y_span - (x - x.min()) / x_span
    index = np.argmax(np.where(np.isnan(difference), -np.inf, difference), axis=1)  # first maximum: the smaller p
    score = np.where(flat, 0.0, difference[np.arange(len(y)), index])
    return np.where(~flat & (score >= KNEE_THRESHOLD), index, -1), score


def _knee_cause(rows: list[ScaleRow], knee: float | None, form: RunForm) -> tuple[Cause | None, bool, float | None]:
    """At the first scale beyond the knee (the largest without one), the cause that lost the most time."""
    if form != "breakdown" or len(rows) < 2:
        return None, False, None
    beyond = next((r for r in rows if knee is not None and r.nodes > knee), rows[-1])
    assert beyond.lost_time_s is not None
    seconds = {CAUSE_OF[key]: value for key, value in beyond.lost_time_s.items()}
    largest = max(seconds.values())
    if largest <= 0:
        return None, False, beyond.nodes
    return next(c for c in CAUSES if seconds.get(c) == largest), False, beyond.nodes


def karp_flatt_trend(points: list[tuple[float, float]], per_node: float | None) -> Trend | None:
    """rising, falling or flat: rising (falling) only when the least-squares slope changes e over the measured range
    by more than TREND_TOLERANCE of its mean magnitude; None without two points. Quinn's Example 1 (e between 0.0989
    and 0.1001) is flat, his Example 2 (e from 0.07 to 0.10) rising. The magnitude of the mean, because a superlinear
    series has a negative mean e, against which any rise at all would count."""
    if per_node is None or len(points) < 2:
        return None
    nodes = [p for p, _ in points]
    change = per_node * (max(nodes) - min(nodes))
    threshold = TREND_TOLERANCE * abs(sum(e for _, e in points) / len(points))
    if change > threshold:
        return "rising"
    if change < -threshold:
        return "falling"
    return "flat"


def _pop(row: ScaleRow) -> PopRow:
    workers = row.run.workers
    mean, worst = sum(workers) / len(workers), max(workers)
    load_balance = mean / worst
    comm_efficiency = worst / row.time_s if row.time_s else None
    collective = row.run.communication if row.run.form == "breakdown" else None
    return PopRow(row.nodes, load_balance, comm_efficiency,
                  load_balance * comm_efficiency if comm_efficiency is not None else None,
                  worst / mean - 1.0, workers, collective)


def _comm_fit(runs: list[Run], form: RunForm, p_ref: float, max_nodes: int,
              pattern: Pattern) -> tuple[AlphaBetaFit | None, int | None]:
    """Fit the design's communication model to the measured communication column; the node count it implies
    for this workload."""
    if form != "breakdown":
        return None, None
    fit = fit_alpha_beta([r.nodes for r in runs], [r.communication or 0.0 for r in runs],
                         coefficients=pattern.coefficients)
    if fit is None or fit.alpha_s < 0 or fit.beta_s < 0:
        return fit, None
    t_comp = (runs[0].compute or 0.0) * p_ref  # single-node compute of the whole run
    return fit, optimum(model_curve(t_comp, fit.alpha_s, fit.beta_s, max_nodes, pattern=pattern)).p_star
