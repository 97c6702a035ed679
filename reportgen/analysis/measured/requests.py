"""A service judged from its requests, one by one (methods.md#a-service-judged-from-its-requests): the share of
requests that meet every objective (attainment), goodput in requests and good tokens per second, each with a 90 %
interval from a circular block bootstrap over the requests in send order, and percentiles with distribution-free
binomial intervals, stated only where enough requests carry them.

Pure numpy on the canonical per-request columns of one load point (`Requests`); the readers of each load tester's
files fill them. Requests in flight together share the server's batch, so their fates are not independent: the
bootstrap resamples blocks of them, and the percentiles' intervals shrink their count to an effective one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from reportgen.analysis.measured.confidence import SEED
from reportgen.project.load_tests import Requests

RESAMPLES = 2000  # bootstrap resamples of one load point
LEVEL = 0.90  # every interval here is a 90 % one
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)  # 1.6449: the normal quantile of a 90 % two-sided interval
GATHERED_VALUES = 4_000_000  # block sums gathered at once by the bootstrap (32 MB)
THREADED_REQUESTS = 100_000  # a point this large is resampled on two threads; a smaller one takes milliseconds
EXACT_BINOMIAL_UP_TO = 100_000  # effective requests past which the binomial is its normal approximation
# Student's t at 0.95 (one-sided; the ends of a 90 % two-sided interval) for 1–30 degrees of freedom
T_95 = (6.3138, 2.9200, 2.3534, 2.1318, 2.0150, 1.9432, 1.8946, 1.8595, 1.8331, 1.8125, 1.7959, 1.7823, 1.7709,
        1.7613, 1.7531, 1.7459, 1.7396, 1.7341, 1.7291, 1.7247, 1.7207, 1.7171, 1.7139, 1.7109, 1.7081, 1.7056,
        1.7033, 1.7011, 1.6991, 1.6973)
ObjectiveName = Literal["ttft", "tpot", "e2e"]
OBJECTIVES: tuple[ObjectiveName, ...] = ("ttft", "tpot", "e2e")


@dataclass(frozen=True)
class Objectives:
    """Per-request thresholds in seconds (None: not an objective)."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None

    def stated(self) -> tuple[ObjectiveName, ...]:
        return tuple(name for name in OBJECTIVES if getattr(self, f"{name}_s") is not None)


def judged_latency(requests: Requests, name: ObjectiveName, *, open_load: bool) -> np.ndarray:
    """Each request's latency as objective `name` judges it. At an open load the client's queueing counts against
    TTFT and E2E (a request's latency starts when it should have been sent). A request without decode (n ≤ 1) has
    a TPOT of 0: the objective does not apply, and it passes. NaN: the tool did not measure it."""
    if name == "tpot":
        undecoded: np.ndarray = np.where(requests.output_tokens <= 1, 0.0, requests.tpot_s)
        return undecoded
    queued = requests.client_queue_s if open_load and requests.client_queue_s is not None else 0.0
    latency: np.ndarray = (requests.ttft_s if name == "ttft" else requests.e2e_s) + queued
    return latency


def meets(requests: Requests, objectives: Objectives, *, open_load: bool) -> dict[ObjectiveName, np.ndarray]:
    """Per stated objective, whether each request meets it (judged_latency); a latency the tool did not measure
    (NaN) does not meet its objective."""
    found = {}
    for name in objectives.stated():
        with np.errstate(invalid="ignore"):
            found[name] = judged_latency(requests, name, open_load=open_load) <= getattr(objectives, f"{name}_s")
    return found


def good_requests(requests: Requests, objectives: Objectives, *, open_load: bool) -> np.ndarray:
    """good_i: the request succeeded and met every stated objective (a failed request is never good: it was offered
    and not served)."""
    good: np.ndarray = requests.ok.astype(bool).copy()
    for within in meets(requests, objectives, open_load=open_load).values():
        good &= within
    return good


def mean_in_flight(send_s: np.ndarray, end_s: np.ndarray, start: float, stop: float) -> float:
    """L̄ = Σ_i |[s_i, e_i) ∩ [start, stop]| / (stop − start): the requests in flight on average over the window."""
    if stop <= start:
        return 0.0
    overlap = np.clip(np.minimum(end_s, stop) - np.maximum(send_s, start), 0.0, None)
    return float(np.nansum(overlap) / (stop - start))


def block_length(count: int, in_flight: float) -> int:
    """b = min(max(⌈N^{1/3}⌉, ⌈L̄⌉), ⌊N/10⌋), at least 1: a block spans at least one generation of the requests in
    flight together, and N^{1/3} is the optimal order for distribution estimates (Hall, Horowitz & Jing 1995)."""
    cube_root = math.ceil(round(count ** (1 / 3), 9))
    return int(max(1, min(max(cube_root, math.ceil(round(in_flight, 9))), count // 10)))


def block_resample_means(columns: Sequence[np.ndarray], block: int, *, resamples: int = RESAMPLES,
                         seed: int = SEED) -> np.ndarray:
    """The circular block bootstrap of each column's mean (Politis & Romano 1992): (resamples, columns). A resample
    adds k = ⌈N/b⌉ blocks of b consecutive requests, each starting anywhere (wrapping past the end), from the block
    sums of one cumulative sum: O(N + resamples · k)."""
    count, width = len(columns[0]), len(columns)
    blocks = math.ceil(count / block)
    generator = np.random.default_rng(seed)
    means = np.empty((resamples, width))
    # Two threads take the columns, as numpy's sums and gathers let go of the GIL. A column at a time, from its own
    # contiguous array: a million requests' block sums of one column (8 MB) stay in the cache that all of them
    # (48 MB) overflow, which halves the time of the random reads. A few resamples at a time, their block starts
    # drawn as they are needed (the generator yields the same starts in pieces as at once): all 2,000 × ⌈N/b⌉
    # starts at once were 160 MB for a million requests.
    step = max(1, GATHERED_VALUES // max(blocks, 1))
    with ThreadPoolExecutor(max_workers=2 if count >= THREADED_REQUESTS else 1) as pool:
        sums = list(pool.map(lambda column: _block_sums(column, block), columns))
        for first in range(0, resamples, step):
            starts = generator.integers(0, count, size=(min(step, resamples - first), blocks))

            def gather(index: int, starts: np.ndarray = starts, first: int = first) -> None:
                means[first:first + len(starts), index] = sums[index][starts].sum(axis=1) / (blocks * block)

            list(pool.map(gather, range(width)))
    return means


def _block_sums(column: np.ndarray, block: int) -> np.ndarray:
    """The sum of the b requests from each request on, wrapping past the last: differences of one cumulative sum."""
    count = len(column)
    totals = np.zeros(count + block + 1)
    np.cumsum(np.concatenate([column, column[:block]]), out=totals[1:])
    sums: np.ndarray = totals[block:block + count] - totals[:count]
    return sums


Interval = tuple[float, float]


@dataclass(frozen=True)
class Attainment:
    """One load point's shares and rates, each with its 90 % interval."""

    requests: int  # N
    good: int
    joint: float  # A = Σ good_i / N
    joint_ci: Interval
    objectives: dict[ObjectiveName, tuple[float, Interval]]  # A_j and its interval
    goodput_per_s: float  # G = Σ good_i / W
    goodput_ci: Interval
    good_tokens_per_s: float  # Σ good_i · n_i / W
    good_tokens_ci: Interval
    block: int  # b
    joint_resampled: np.ndarray  # A in each bootstrap resample: a load curve's interval refits them


def attainment(requests: Requests, objectives: Objectives, *, open_load: bool, in_flight: float,
               seed: int = SEED) -> Attainment:
    """A, each A_j, G and G_tok from one block bootstrap (the four share its resamples). A failed request is never
    good: it was offered and not served, so it stays in the denominator."""
    met = meets(requests, objectives, open_load=open_load)
    good = good_requests(requests, objectives, open_load=open_load)
    tokens = np.where(good, np.nan_to_num(requests.output_tokens.astype(float)), 0.0)
    ok = requests.ok.astype(bool)  # a failed request meets no objective either: it was offered and not served
    columns = [good.astype(float), tokens, *((within & ok).astype(float) for within in met.values())]
    block = block_length(requests.count, in_flight)
    means = block_resample_means(columns, block, seed=seed)
    low, high = np.percentile(means, [50 * (1 - LEVEL), 50 * (1 + LEVEL)], axis=0)
    point = [float(column.mean()) for column in columns]
    per_second = requests.count / requests.window_s

    def ci(index: int, scale: float = 1.0) -> Interval:
        found = float(low[index]), float(high[index])
        if index != 1:  # a share (good, or one objective met): not the good tokens
            found = with_few_exceptions(columns[index], found)
        return found[0] * scale, found[1] * scale

    return Attainment(
        requests=requests.count, good=int(good.sum()), joint=float(point[0]), joint_ci=ci(0),
        objectives={name: (float(point[2 + index]), ci(2 + index)) for index, name in enumerate(met)},
        goodput_per_s=float(point[0] * per_second), goodput_ci=ci(0, per_second),
        good_tokens_per_s=float(point[1] * per_second), good_tokens_ci=ci(1, per_second), block=block,
        joint_resampled=_resampled_share(columns[0], means[:, 0], seed))


FEW = 10  # fewer requests than this on one side of a share, and the bootstrap cannot show its spread


def _few_exceptions(outcomes: np.ndarray) -> tuple[float, float] | None:
    """A share's estimate and effective count n(1 − ρ)/(1 + ρ) (ρ the lag-1 autocorrelation of the outcomes in send
    order, clipped to [0, 0.9]) where fewer than ten requests fall on one side of it; None where the bootstrap can
    show its spread."""
    count = len(outcomes)
    hits = float(outcomes.sum())
    if count == 0 or min(hits, count - hits) >= FEW:
        return None
    rho = min(max(lag_one(outcomes), 0.0), 0.9)
    return hits / count, count * (1 - rho) / (1 + rho)


def with_few_exceptions(outcomes: np.ndarray, resampled: Interval) -> Interval:
    """A share's interval where fewer than ten requests fall on one side (say 60 requests, all good): the bootstrap
    resamples only what was seen, and 60 of 60 resample to [100 %, 100 %], a certainty 60 requests cannot give. Then
    the interval is the union with the Wilson score interval at the effective count: 60 of 60 good reads
    [95.7 %, 100 %]."""
    few = _few_exceptions(outcomes)
    if few is None:
        return resampled
    share, effective = few
    centre = share + Z * Z / (2 * effective)
    spread = Z * math.sqrt(share * (1 - share) / effective + Z * Z / (4 * effective * effective))
    scale = 1 + Z * Z / effective
    return min(resampled[0], (centre - spread) / scale), max(resampled[1], (centre + spread) / scale)


def _resampled_share(outcomes: np.ndarray, resampled: np.ndarray, seed: int) -> np.ndarray:
    """A share's resamples as a load curve refits them: the bootstrap's, except where fewer than ten requests fall
    on one side (with_few_exceptions), whose resamples would all be the share seen: there they are drawn from the
    Jeffreys posterior Beta(good + ½, others + ½) at the effective count, which spreads as Wilson's interval does."""
    few = _few_exceptions(outcomes)
    if few is None:
        return resampled
    share, effective = few
    drawn: np.ndarray = np.random.default_rng(seed).beta(share * effective + 0.5, (1 - share) * effective + 0.5,
                                                         len(resampled))
    return drawn


def t_quantile_95(degrees: int) -> float:
    """Student's t quantile at 0.95: from the table to 30 degrees of freedom, then the Cornish–Fisher expansion
    about the normal's (within 10⁻⁴ there)."""
    if degrees < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if degrees <= len(T_95):
        return T_95[degrees - 1]
    z = Z
    return z + (z ** 3 + z) / (4 * degrees) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * degrees ** 2)


def repeats_interval(shares: list[float], resampled: Interval) -> Interval:
    """The interval of a load point measured three or more times: the union of the pooled resamples' interval and
    the 90 % t-interval of the runs' shares (m − 1 degrees of freedom). Near capacity failures come in bursts, and
    one run does not show its own spread; the runs do."""
    m = len(shares)
    mean = sum(shares) / m
    spread = math.sqrt(sum((share - mean) ** 2 for share in shares) / (m - 1)) * t_quantile_95(m - 1) / math.sqrt(m)
    return min(resampled[0], mean - spread), max(resampled[1], mean + spread)


Verdict = Literal["met", "missed"] | None


def point_verdict(ci: Interval, target: float, *, near_capacity: bool = False) -> Verdict:
    """Met when the interval's low end reaches the target, missed when its high end falls short, else not decided
    (None). A single run near capacity understates its own spread: it is decided only when its interval clears the
    target by the interval's own width."""
    low, high = ci
    width = high - low if near_capacity else 0.0
    if low >= target and low - target >= width:
        return "met"
    if high < target and target - high >= width:
        return "missed"
    return None


def requests_for_quantile(p: float) -> int:
    """The tail guard: a p-quantile is stated only with n ≥ 10/(1 − p) requests (p99: 1,000; p99.9: 10,000)."""
    return math.ceil(round(10 / (1 - p), 6))


@dataclass(frozen=True)
class Quantile:
    p: float
    n: int  # requests carrying the quantity
    needed: int  # requests the tail guard asks for
    value: float | None  # None: too few requests
    ci: Interval | None
    rank_ci: tuple[int, int] | None  # the order statistics (1-based) bounding the interval
    effective: float | None  # n_eff the ranks were found at


def quantile(values: np.ndarray, p: float) -> Quantile:
    """q̂_p by linear interpolation (numpy's default, as vLLM and AIPerf), with its 90 % interval between two order
    statistics: l = F⁻¹(0.05), u = F⁻¹(0.95) + 1, F the Binomial(n_eff, p) CDF (Hahn & Meeker 1991), n_eff =
    n(1 − ρ)/(1 + ρ) with ρ the lag-1 autocorrelation of 1[x_i > q̂_p] in send order, clipped to [0, 0.9] (Geyer
    1992); ranks found at n_eff are scaled by n/n_eff away from the estimate's rank."""
    carried = values[~np.isnan(values)]
    count, needed = len(carried), requests_for_quantile(p)
    if count < needed:
        return Quantile(p, count, needed, None, None, None, None)
    estimate = float(np.percentile(carried, 100 * p))
    above = (carried > estimate).astype(float)
    rho = min(max(lag_one(above), 0.0), 0.9)
    effective = round(count * (1 - rho) / (1 + rho))
    low = binomial_quantile(0.5 - LEVEL / 2, effective, p)
    high = binomial_quantile(0.5 + LEVEL / 2, effective, p) + 1
    if effective < count:  # outward: the low rank down, the high rank up
        scale = count / effective
        low, high = math.floor(low * scale), math.ceil(high * scale)
    low, high = max(low, 1), min(high, count)
    ordered = np.partition(carried, [low - 1, high - 1])  # the two order statistics, exactly, without a sort
    return Quantile(p, count, needed, estimate, (float(ordered[low - 1]), float(ordered[high - 1])), (low, high),
                    float(effective))


def lag_one(series: np.ndarray) -> float:
    """The lag-1 autocorrelation of a series in send order (0 for a constant one)."""
    centred = series - series.mean()
    spread = float(centred @ centred)
    return float(centred[:-1] @ centred[1:]) / spread if spread > 0 else 0.0


def binomial_quantile(q: float, n: int, p: float) -> int:
    """F⁻¹(q): the least k with P(X ≤ k) ≥ q for X ~ Binomial(n, p). Exactly, by the log-pmf recurrence, up to
    EXACT_BINOMIAL_UP_TO trials; beyond, the normal approximation with a continuity correction."""
    if n > EXACT_BINOMIAL_UP_TO:
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        return max(0, min(n, math.ceil(mean + NormalDist().inv_cdf(q) * sd - 0.5)))
    k = np.arange(n + 1)
    ratios = np.log(n - k[:-1]) - np.log(k[:-1] + 1) + math.log(p) - math.log1p(-p)
    log_pmf = np.concatenate([[n * math.log1p(-p)], n * math.log1p(-p) + np.cumsum(ratios)])
    pmf = np.exp(log_pmf - log_pmf.max())
    cdf = np.cumsum(pmf) / pmf.sum()
    return int(np.searchsorted(cdf, q - 1e-12))


def requests_needed(share: float, target: float, rho: float = 0.0, *, p: float | None = None) -> int | None:
    """The requests a load point needs before its verdict is decided: ⌈z²·Â(1 − Â)/(Â − a*)²⌉, then × (1 + ρ)/(1 − ρ)
    for requests whose fates run together (ρ the lag-1 autocorrelation of good_i in send order, clipped to [0, 0.9]),
    and no fewer than the tail guard's for a quantile objective, nor than the count at which all good would reach
    a* (with_few_exceptions: 268 at 99 %). None when Â = a*: no number of requests decides."""
    if share == target:
        return None
    rho = min(max(rho, 0.0), 0.9)
    independent = math.ceil(Z * Z * share * (1 - share) / (share - target) ** 2)
    if share > target:  # all good (Â = 1) needs some requests too: those whose Wilson low end reaches the target
        independent = max(independent, math.ceil(round(Z * Z * target / (1 - target), 9)))
    needed = math.ceil(round(independent * (1 + rho) / (1 - rho), 9))
    return max(needed, requests_for_quantile(p)) if p is not None else needed


def objective_flip(requests: Requests, objectives: Objectives, name: ObjectiveName, target: float, *,
                   open_load: bool) -> float | None:
    """The threshold of objective `name` at which the point's attainment reaches `target`, the others held: the
    ⌈target · N⌉-th smallest value of that latency among the successful requests meeting every other objective.
    None when fewer than that many meet the others: the other objectives bind, and no value of this one flips it."""
    met = meets(requests, objectives, open_load=open_load)
    others = requests.ok.astype(bool).copy()
    for other, within in met.items():
        if other != name:
            others &= within
    values = judged_latency(requests, name, open_load=open_load)[others]
    needed = math.ceil(round(target * requests.count, 9))
    values = np.sort(values[~np.isnan(values)])
    return float(values[needed - 1]) if 0 < needed <= len(values) else None
