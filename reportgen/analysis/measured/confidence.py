"""Few runs, stated confidence (docs/methods.md#few-runs-stated-confidence): intervals at an unmeasured plan, the
confidence of each decision, and the next measurement worth its cost.

Every figure comes from one set of resamples of the measured runs: a scale's repeats drawn with replacement (their
median), a scale measured once drawn as T · exp(N(0, σ²)) with σ = `scaling.noise` (a parametric bootstrap).
Each resample is refitted (Amdahl from two scales, the linearised USL from three or more), all resamples at once
with numpy, so 1,000 of them cost milliseconds. The generator is seeded: the same inputs give the same results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import numpy as np

from reportgen.analysis.common import node_hours, powers_of_two
from reportgen.analysis.measured.accuracy import calibration_of, interval_from
from reportgen.analysis.measured.scaling import ScalingResult, kneedles, repeats_by_nodes, run_time
from reportgen.keys import Key, derived, money
from reportgen.project.accuracy_table import AccuracyTable, Calibration, OwnEvidence, not_graded
from reportgen.project.model import Scaling

RESAMPLES = 1000
MIN_RESAMPLES = 50
MAX_DRAWS = 500_000  # resamples × scales at most: past 500 measured scales, fewer resamples (memory is bounded)
PLANNER_FITS = 200  # the bootstrap fits each candidate run's outcome is simulated on
SEED = 20261127
DEFAULT_NOISE = 0.05  # σ of one run's log time when the project states none
LEVEL = 0.90  # the intervals' coverage
Band = tuple[tuple[float, float, float], ...]  # (nodes, low, high) along the node axis
BAND_POINTS = 48  # node counts the scaling figure's band is drawn through
BEST_WITHIN = 0.01  # a point within 1 % of a resample's best counts as best there
ROUNDING = 1e-12  # a chance below this is floating-point rounding of a weighted share, not a chance
Source = Literal["amdahl", "usl"]
Interval = tuple[float, float]


@dataclass(frozen=True)
class PlanEstimate:
    """The time at an unmeasured plan, extrapolated from the measured runs, with its 90 % interval."""

    nodes: Annotated[int, Key("the planned node count")]
    time_s: Annotated[float, Key("the fit's time at the plan")]
    low_s: Annotated[float, Key("the 90 % interval's low end")]
    high_s: Annotated[float, Key("the 90 % interval's high end")]
    source: Annotated[Source, Key("the fit: amdahl (two scales) or usl (three or more)")]
    model_time_s: Annotated[float | None, Key("the α–β model's time at the plan, scaled to the measured reference "
                                              "(null without the model)")]
    # how often this kind of extrapolation held on published curves (methods.md#how-accurate-each-prediction-is)
    calibration: Annotated[Calibration | None, Key(
        "the fit's accuracy on published curves at this extrapolation (null without the calibration table)")] = None
    calibrated_low_s: Annotated[float | None, Key(
        "the calibrated 90 % interval's low end (null: too few published cases, or the class is demoted)")] = None
    calibrated_high_s: Annotated[float | None, Key("the calibrated 90 % interval's high end")] = None
    model_calibration: Annotated[Calibration | None, Key(
        "the α–β model's accuracy on published curves at this extrapolation")] = None
    model_low_s: Annotated[float | None, Key("the α–β time's calibrated low end (null unless its cell is "
                                             "calibrated or provisional)")] = None
    model_high_s: Annotated[float | None, Key("the α–β time's calibrated high end")] = None

    @property
    def demoted(self) -> bool:
        """The fit's class missed on published curves at this extrapolation: the plan is not judged from it."""
        return self.calibration is not None and self.calibration.demoted

    def judged_interval(self) -> tuple[float, float]:
        """The interval a verdict is judged by: the calibrated one where its cell is trusted, else the raw one."""
        if self.calibrated_low_s is not None and self.calibrated_high_s is not None:
            return self.calibrated_low_s, self.calibrated_high_s
        return self.low_s, self.high_s

    def judged_model_s(self) -> float | None:
        """The α–β figure a verdict is held against: none when its class is demoted here."""
        demoted = self.model_calibration is not None and self.model_calibration.demoted
        return None if demoted else self.model_time_s


@dataclass(frozen=True)
class NextRun:
    """A run that would settle the verdict at the plan, and what it costs."""

    nodes: Annotated[int, Key("node count")]
    repeats: Annotated[int, Key("runs at that node count")]
    node_hours: Annotated[float, Key("nodes × repeats × the expected time, in hours")]
    cost: Annotated[float | None, money("node_hours × the on-demand price (null without prices)")]
    p_wrong_before: Annotated[float, Key("the probability that the verdict at the plan is wrong now")]
    p_wrong_after: Annotated[float, Key("the expected probability once the run is measured")]
    # a load test's requests that would decide a load point (methods.md#a-service-judged-from-its-requests)
    kind: Annotated[Literal["runs", "requests"], Key("runs: whole runs at a scale (the planner's); requests: more "
                                                     "requests of a load point whose verdict is not decided")] = "runs"
    load_per_s: Annotated[float | None, Key("requests: the point's load (open: request/s; closed: in flight)")] = None
    mode: Annotated[Literal["open", "closed"] | None, Key("requests: the point's load mode")] = None
    objective: Annotated[str | None, Key("requests: the share decided: every (joint), or one objective's "
                                         "name")] = None
    requests_have: Annotated[int | None, Key("requests: the point's requests now")] = None
    requests_needed: Annotated[int | None, Key("requests: the requests that would decide it: max(10/(1 − p), "
                                               "z²·Â(1 − Â)/(Â − a*)² · (1 + ρ)/(1 − ρ))")] = None
    duration_s: Annotated[float | None, Key("requests: requests_needed over the point's rate")] = None

    @property
    def gain_per_node_hour(self) -> float:
        return (self.p_wrong_before - self.p_wrong_after) / self.node_hours if self.node_hours > 0 else 0.0

    @derived(Key("a chance of a wrong verdict is a what-if, which the corpus does not grade: {predictor: planner, "
                 "status: not-graded}"))
    def p_wrong_before_calibration(self) -> Calibration:
        return not_graded("planner")

    @derived(Key("not graded, as p_wrong_before"))
    def p_wrong_after_calibration(self) -> Calibration:
        return not_graded("planner")


def planner_runs(runs: tuple[NextRun, ...]) -> tuple[NextRun, ...]:
    """The planner's whole runs, without the requests load points need."""
    return tuple(run for run in runs if run.kind == "runs")


@dataclass(frozen=True)
class DecisionConfidence:
    """How sure one decision's recommendation is, under the resamples."""

    p_best: float  # the share of resamples in which it stays best (within 1 %)
    regret_95: float  # the 95th percentile of its objective over the resample's best
    runner_up: int | None  # the scale most often best when it is not
    p_miss: float = 0.0  # the share of resamples in which it breaks a limit of its context


@dataclass(frozen=True)
class ConfidenceResult:
    noise: float  # σ of one run's log time used for single runs
    stated: bool  # repeats exist or scaling.noise is given: a confidence can be stated
    plan_estimate: PlanEstimate | None
    peak_nodes_ci: Interval | None
    knee_nodes_ci: Interval | None
    cost_optimal_nodes_ci: Interval | None
    next_runs: tuple[NextRun, ...]
    band: Band  # (nodes, low, high): the resampled fits' 90 % band of the speedup
    resampled_ratio: np.ndarray  # (scales, resamples): T*_p / T_p, the draws a point's time, money, CO2e scale with
    column: dict[float, int]  # a measured scale's row in resampled_ratio
    estimator: _Estimator | None = None  # the plan's estimate at another plan (the node-count lever's what-if)

    def estimate_at(self, plan: int | None) -> PlanEstimate | None:
        """The estimate an unmeasured plan of `plan` nodes would have, from the same resamples (None when measured)."""
        return self.estimator.at(plan) if self.estimator is not None and plan is not None else None

    def ratio_at(self, nodes: float) -> np.ndarray | None:
        """How each resample scales the time (and so the money and CO2e) of a measured scale."""
        index = self.column.get(nodes)
        return None if index is None else self.resampled_ratio[index]

    def resampled_at(self, nodes: float) -> np.ndarray | None:
        """Each resample's time at a scale over the figure it is judged by: a measured scale's T*_p / T_p, an
        unmeasured plan's resampled estimate over its estimate (a row's p_miss, methods.md#few-runs-stated-confidence).
        """
        ratio = self.ratio_at(nodes)
        if ratio is not None or self.estimator is None or nodes != int(nodes) or nodes <= 0:
            return ratio
        found = self.estimator.with_draws(int(nodes))
        if found is None or found[0].time_s <= 0:
            return None
        estimate, draws = found
        return draws / estimate.time_s


def calibrated_draws(draws: np.ndarray, estimate: PlanEstimate) -> np.ndarray:
    """Each resample's time at the plan with its log deviation from the estimate stretched, on each side, as the
    calibrated interval stretches the raw one: their 5th and 95th percentiles are then the calibrated interval's
    ends, so that a row's chance of missing and the planner's chance of a wrong verdict are read from the interval
    the verdict is judged by (methods.md#how-accurate-each-prediction-is). The draws as they are without one."""
    low, high = estimate.calibrated_low_s, estimate.calibrated_high_s
    centre = estimate.time_s
    if low is None or high is None or centre <= 0:
        return draws
    above = math.log(high / centre) / math.log(estimate.high_s / centre) if estimate.high_s > centre else 1.0
    below = math.log(centre / low) / math.log(centre / estimate.low_s) if estimate.low_s < centre else 1.0
    deviation = np.log(draws / centre)
    return np.asarray(centre * np.exp(np.where(deviation > 0, deviation * above, deviation * below)))


@dataclass(frozen=True)
class _Draws:
    nodes: np.ndarray  # (scales,)
    times: np.ndarray  # (resamples, scales): each scale's resampled median time
    centre: np.ndarray  # (scales,): the rows' times


def analyze_confidence(spec: Scaling | None, scaling: ScalingResult | None, *, plan: int | None,
                       price_per_node_hour: float | None, time_limit_s: float | None, cost_limit: float | None,
                       model_speedup: Callable[[float], float] | None = None,
                       max_nodes: int = 4096, accuracy: AccuracyTable | None = None,
                       own: OwnEvidence | None = None) -> ConfidenceResult | None:
    """The intervals, the plan's estimate and the planner; None without whole runs at two scales or more (a
    throughput without work_per_run, a load axis, or weak scaling: extrapolated by other means)."""
    if spec is None or scaling is None or scaling.single_scale or scaling.per_unit_of_work \
            or scaling.axis == "load" or scaling.mode == "weak":
        return None
    noise = spec.noise if spec.noise is not None else DEFAULT_NOISE
    draws = _draw(spec, scaling, noise)
    stated = spec.noise is not None or any(row.repeats > 1 for row in scaling.rows)
    p_ref = float(draws.nodes[0])
    q = draws.nodes / p_ref
    speedups = draws.times[:, :1] / draws.times  # (resamples, scales)
    fits = _fit(q, speedups, noise)
    centre_fit = _fit(q, (draws.centre[0] / draws.centre)[None, :], noise)
    estimator = _Estimator(draws, fits, centre_fit, model_speedup, accuracy, spec.batch_changes, own)
    at_plan = estimator.with_draws(plan)
    estimate, plan_draws = at_plan if at_plan is not None else (None, None)
    peaks = draws.nodes[np.argmax(speedups >= speedups.max(axis=1, keepdims=True) * (1 - 1e-12), axis=1)]
    costs = draws.nodes * draws.times  # ∝ the on-demand cost per run
    cheapest = draws.nodes[np.argmax(costs <= costs.min(axis=1, keepdims=True) * (1 + 1e-12), axis=1)]
    knees = kneedles(draws.nodes, speedups)[0] if len(draws.nodes) >= 3 else np.array([], dtype=int)
    found = draws.nodes[knees[knees >= 0]]
    next_runs: tuple[NextRun, ...] = ()
    threshold = _threshold(plan, price_per_node_hour, time_limit_s, cost_limit)
    if estimate is not None and plan is not None and plan_draws is not None and threshold is not None:
        next_runs = _planner(draws, fits, q, p_ref, plan, plan_draws, estimate.time_s, threshold, noise,
                             price_per_node_hour, max_nodes)
    top = max(float(plan or 0), float(draws.nodes[-1]))  # the measured range, and out to a plan beyond it
    grid = np.geomspace(p_ref, top, BAND_POINTS)
    band_draws = fits.speedup(np.broadcast_to(grid / p_ref, (len(fits.a), BAND_POINTS)))
    tail = (1 - LEVEL) / 2 * 100
    lows, highs = np.percentile(band_draws, [tail, 100 - tail], axis=0)
    band = tuple((float(n), float(lo), float(hi)) for n, lo, hi in zip(grid, lows, highs, strict=True))
    return ConfidenceResult(
        noise, stated, estimate, _interval(peaks) if len(draws.nodes) >= 2 else None,
        _interval(found) if scaling.knee_nodes is not None and found.size else None,
        _interval(cheapest) if price_per_node_hour is not None else None,
        next_runs, band, np.ascontiguousarray((draws.times / draws.centre).T),
        {float(n): index for index, n in enumerate(draws.nodes)}, estimator)


@dataclass(frozen=True)
class _Estimator:
    """An unmeasured plan's time from the resampled fits: the point fit's, with the resamples' 90 % interval."""

    draws: _Draws
    fits: _Fits
    centre_fit: _Fits
    model_speedup: Callable[[float], float] | None
    accuracy: AccuracyTable | None = None  # the calibration table the estimate's accuracy is read from
    batch_changes: bool = False  # the runs' global batch changed between scales (its own cells of the table)
    own: OwnEvidence | None = None  # the project's graded predictions, pooled into the cells

    def draws_at(self, plan: int) -> np.ndarray:
        return np.asarray(self.draws.times[:, 0] / self.fits.speedup(plan / float(self.draws.nodes[0])))

    def point_at(self, plan: int) -> float:
        """The point fit's time at the plan: T_ref / S(plan / p_ref)."""
        return float(self.draws.centre[0] / self.centre_fit.speedup(plan / float(self.draws.nodes[0]))[0])

    def at(self, plan: int | None) -> PlanEstimate | None:
        found = self.with_draws(plan)
        return None if found is None else found[0]

    def with_draws(self, plan: int | None) -> tuple[PlanEstimate, np.ndarray] | None:
        """The estimate at an unmeasured plan and each resample's time there, stretched as its calibrated interval
        is (calibrated_draws): one computation for the interval, a row's chance of missing and the planner."""
        draws = self.draws
        if plan is None or plan <= 0 or plan in draws.nodes:
            return None
        p_ref = float(draws.nodes[0])
        point = self.point_at(plan)
        resampled = self.draws_at(plan)
        low, high = _interval(resampled)
        model = None
        if self.model_speedup is not None:
            model = float(draws.centre[0] * self.model_speedup(p_ref) / self.model_speedup(float(plan)))
        estimate = self._calibrated(PlanEstimate(plan, point, low, high, self.centre_fit.source, model))
        return estimate, calibrated_draws(resampled, estimate)

    def _calibrated(self, estimate: PlanEstimate) -> PlanEstimate:
        """The estimate with its accuracy on published curves, at r = the plan over the largest measured scale."""
        ratio = estimate.nodes / float(self.draws.nodes[-1])
        fit = calibration_of(self.accuracy, estimate.source, ratio, batch_changes=self.batch_changes, own=self.own)
        if fit is None:
            return estimate
        interval = interval_from(fit, estimate.time_s, estimate.low_s, estimate.high_s)
        model = None if estimate.model_time_s is None else \
            calibration_of(self.accuracy, "alpha-beta", ratio, batch_changes=self.batch_changes, own=self.own)
        model_interval = None if model is None or estimate.model_time_s is None else \
            interval_from(model, estimate.model_time_s, None, None)
        return replace(estimate, calibration=fit, calibrated_low_s=interval[0] if interval else None,
                       calibrated_high_s=interval[1] if interval else None, model_calibration=model,
                       model_low_s=model_interval[0] if model_interval else None,
                       model_high_s=model_interval[1] if model_interval else None)


def _draw(spec: Scaling, scaling: ScalingResult, noise: float) -> _Draws:
    """Each scale's resampled median time: its repeats with replacement, or one run's parametric draw."""
    rng = np.random.default_rng(SEED)
    groups = repeats_by_nodes(spec.runs)
    resamples = max(MIN_RESAMPLES, min(RESAMPLES, MAX_DRAWS // len(groups)))
    columns, centre = [], []
    for group, row in zip(groups, scaling.rows, strict=True):
        assert row.time_s is not None
        # sorted: the draws do not depend on the order the file lists the repeats in
        times = np.sort(np.array([run_time(run, spec.work_per_run) or row.time_s for run in group], dtype=float))
        if len(times) == 1:
            drawn = row.time_s * np.exp(rng.normal(0.0, noise, resamples))
        else:
            picks = rng.integers(0, len(times), size=(resamples, len(times)))
            # the rows hold each component's median: the draws are scaled to be centred on the row's time
            drawn = np.median(times[picks], axis=1) * (row.time_s / float(np.median(times)))
        columns.append(drawn)
        centre.append(row.time_s)
    return _Draws(np.array([row.nodes for row in scaling.rows], dtype=float), np.column_stack(columns),
                  np.array(centre, dtype=float))


@dataclass(frozen=True)
class _Fits:
    """One fit per resample: Amdahl's f (two scales) or the linearised USL's q/S = a + b(q − 1) + c·q(q − 1)."""

    source: Source
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray

    def speedup(self, q: float | np.ndarray) -> np.ndarray:
        """S at q (relative to the reference), per resample; q may be an array of scales (resamples × scales)."""
        q = np.asarray(q, dtype=float)
        a, b, c = (x if q.ndim == 0 else x[:, None] for x in (self.a, self.b, self.c))
        denominator = a + b * (q - 1.0) + c * q * (q - 1.0)
        return np.asarray(q / np.maximum(denominator, 1e-300))


def _fit(q: np.ndarray, speedups: np.ndarray, noise: float) -> _Fits:
    """Amdahl from two scales (exact). From three or more, the linearised USL q/S = a + b(q − 1) + c·q(q − 1) with
    b, c ≥ 0, but its κ term only where the data need it: where Amdahl's (c = 0) residuals are more than the runs'
    noise explains (a χ² test at 90 % with the known σ, per resample), since a curvature fitted to noise alone
    extrapolates far (methods.md#few-runs-stated-confidence)."""
    if len(q) == 2:
        # 1/S = f + (1 − f)/q: q/S = q·f + 1 − f = 1 + f(q − 1): a = 1, b = f, c = 0
        f = (1.0 / speedups[:, 1] - 1.0 / q[1]) / (1.0 - 1.0 / q[1])
        # a draw faster than ideal has no serial fraction, not a negative one: extrapolated, a negative f runs the
        # time at a large plan through zero
        f = np.maximum(f, 0.0)
        return _Fits("amdahl", np.ones_like(f), f, np.zeros_like(f))
    y = q[None, :] / speedups  # (resamples, scales)
    columns = np.stack([np.ones_like(q), q - 1.0, q * (q - 1.0)], axis=1)  # (scales, 3)
    amdahl = _least_squares(columns, y, ((0, 1), (0,)))
    usl = _least_squares(columns, y, ((0, 1, 2), (0, 1), (0, 2), (0,)))
    # each point's y carries the noise of two runs (T_ref and T_p): a relative variance of 2σ²
    fitted = np.maximum((columns @ amdahl).T, 1e-12)
    with np.errstate(over="ignore", invalid="ignore"):
        chi2 = np.nan_to_num((((y - fitted) / fitted) ** 2).sum(axis=1) / (2.0 * noise ** 2), nan=np.inf)
    curved = chi2 > _chi2_90(len(q) - 2)
    chosen = np.where(curved[None, :], usl, amdahl)
    point_curved = bool(curved[0]) if chosen.shape[1] == 1 else bool(np.mean(curved) > 0.5)
    return _Fits("usl" if point_curved else "amdahl", chosen[0], chosen[1], chosen[2])


def _least_squares(columns: np.ndarray, y: np.ndarray, active_sets: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """Non-negative least squares in b and c by enumerating the active sets: (3, resamples) coefficients."""
    best: np.ndarray | None = None
    chosen = np.zeros((3, y.shape[0]))
    for used in active_sets:
        solution, *_ = np.linalg.lstsq(columns[:, list(used)], y.T, rcond=None)
        full = np.zeros((3, y.shape[0]))
        full[list(used)] = solution
        feasible = (full[1:] >= 0).all(axis=0)
        residual = np.where(feasible, ((columns @ full - y.T) ** 2).sum(axis=0), np.inf)
        if best is None:
            best, chosen = residual, full
        else:
            better = residual < best * (1 - 1e-12)
            best = np.where(better, residual, best)
            chosen = np.where(better[None, :], full, chosen)
    return chosen


# χ² at 90 % for 1 … 10 degrees of freedom; beyond, the Wilson–Hilferty approximation
_CHI2_90 = (2.706, 4.605, 6.251, 7.779, 9.236, 10.645, 12.017, 13.362, 14.684, 15.987)


def _chi2_90(dof: int) -> float:
    if dof <= len(_CHI2_90):
        return _CHI2_90[max(dof, 1) - 1]
    return dof * (1 - 2 / (9 * dof) + 1.2816 * math.sqrt(2 / (9 * dof))) ** 3


def _interval(values: np.ndarray) -> Interval:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _threshold(plan: int | None, price: float | None, time_limit_s: float | None,
               cost_limit: float | None) -> float | None:
    """The longest time at the plan that meets the goal: its time limit, and its budget at the on-demand price."""
    limits = [time_limit_s] if time_limit_s is not None else []
    if cost_limit is not None and price and plan:
        limits.append(cost_limit * 3600.0 / (price * plan))
    return min(limits) if limits else None


def _planner(draws: _Draws, fits: _Fits, q: np.ndarray, p_ref: float, plan: int, plan_draws: np.ndarray,
             estimate_s: float, threshold: float, noise: float, price: float | None,
             max_nodes: int) -> tuple[NextRun, ...]:
    """Candidate runs (powers of two up to the plan, and the plan; 1–3 repeats) ranked by the drop in p_wrong per
    node-hour. A candidate's outcome is simulated on each of PLANNER_FITS bootstrap fits taken as the truth, and
    the fits are weighted by how well they predict it: the verdict's chance of being wrong after the run is the
    weighted share on the minority side, averaged over the outcomes (methods.md#the-measurement-planner)."""
    meets_now = estimate_s <= threshold
    wrong_before = float(np.mean((plan_draws <= threshold) != meets_now))
    if wrong_before == 0.0:
        return ()
    fits_used = slice(0, min(PLANNER_FITS, len(plan_draws)))
    plan_meets = (plan_draws[fits_used] <= threshold).astype(float)  # (k,)
    rng = np.random.default_rng(SEED + 1)
    top = min(plan, max_nodes)
    candidates = sorted({*powers_of_two(top), plan})
    out = []
    for nodes in candidates:
        # each fit's time at the candidate: T_ref × (S at the reference = 1) / S(q)
        predicted = (draws.times[fits_used, 0] / _sliced(fits, fits_used).speedup(nodes / p_ref))  # (k,)
        expected = float(np.median(predicted))
        for repeats in (1, 2, 3):
            spread = noise / math.sqrt(repeats)
            outcome = np.log(predicted) + rng.normal(0.0, spread, predicted.shape)  # (j,): a truth's measured mean
            weight = np.exp(-0.5 * ((outcome[:, None] - np.log(predicted)[None, :]) / spread) ** 2)  # (j, k)
            p_meets = (weight @ plan_meets) / np.maximum(weight.sum(axis=1), 1e-300)
            wrong_after = float(np.mean(np.minimum(p_meets, 1.0 - p_meets)))
            hours = node_hours(nodes * repeats, expected)
            # a share of weights: rounding leaves a hair either side of zero where the chance is none
            wrong_after = 0.0 if wrong_after < ROUNDING else wrong_after
            out.append(NextRun(nodes, repeats, hours, hours * price if price else None, wrong_before,
                               min(wrong_after, wrong_before)))
    ranked = sorted(out, key=lambda run: (-run.gain_per_node_hour, run.node_hours))
    return tuple(run for run in ranked if run.p_wrong_after < run.p_wrong_before)[:5]


def _sliced(fits: _Fits, part: slice) -> _Fits:
    return _Fits(fits.source, fits.a[part], fits.b[part], fits.c[part])


def decision_confidence(values: Sequence[tuple[int, np.ndarray, np.ndarray]], chosen: int,
                        ) -> DecisionConfidence | None:
    """p_best, regret_95 and p_miss of a recommendation: `values` holds, per candidate point (its node count), the
    objective over the resamples and whether the point is within the limits in each; `chosen` indexes the one
    recommended."""
    if not values:
        return None
    objective = np.stack([v for _, v, _ in values], axis=1)  # (resamples, points)
    within = np.stack([w for _, _, w in values], axis=1)
    # over every resample, not only those where some point is within the limits: the chance the point misses
    p_miss = float(np.mean(~within[:, chosen]))
    allowed = np.where(within, objective, np.inf)
    best = allowed.min(axis=1)
    usable = np.isfinite(best)
    if not usable.any():
        return None
    mine = objective[usable, chosen]
    best = best[usable]
    is_best = within[usable, chosen] & (mine <= best + np.abs(best) * BEST_WITHIN)
    regret = np.where(within[usable, chosen], mine - best, np.inf)
    finite = regret[np.isfinite(regret)]
    winners = np.argmin(allowed[usable], axis=1)
    others = winners[(winners != chosen) & ~is_best]
    runner = int(np.bincount(others).argmax()) if others.size else None
    return DecisionConfidence(float(is_best.mean()),
                              float(np.percentile(finite, 95)) if finite.size else math.inf,
                              values[runner][0] if runner is not None else None, p_miss)
