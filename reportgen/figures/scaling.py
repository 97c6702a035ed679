"""Measured-scaling figures: breakdown, per-worker timeline, speedup and efficiency with fits, lost folds,
Karp–Flatt."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from reportgen.analysis import Analysis
from reportgen.analysis.measured.confidence import Band, ConfidenceResult
from reportgen.analysis.measured.provenance import ProvenanceResult
from reportgen.analysis.measured.scaling import TREND_READING, PopRow, ScalingResult
from reportgen.analysis.model.fits import usl_capacity
from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import (
    ACTIVITY,
    BLUE,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    TIME_UNITS,
    VERMILION,
    Layer,
    colour_key,
    draw_goal_line,
    figure,
    log2_axis,
    node_categories,
    present_layers,
    stacked_bars,
    to_svg,
    unit_for,
)
from reportgen.project.model import Project
from reportgen.project.records import RankTimes

if TYPE_CHECKING:
    from matplotlib.axes import Axes


MAX_MARKERS = 200  # points of a curve drawn with a marker each


def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    """`analysis` has the tables' selection of scales (for bars), `full` every scale (for the curves)."""
    scaling: ScalingResult | None = analysis.scaling
    every: ScalingResult | None = (full or analysis).scaling
    if scaling is None or every is None:
        return []
    limit = time_limit(project, scaling)
    return present(breakdown(scaling, limit), timeline(scaling), ranks(analysis.provenance),
                   speedup(every, limit, band=_band((full or analysis).confidence)), lost_folds(scaling),
                   karp_flatt(every))


def time_limit(project: Project, scaling: ScalingResult) -> float | None:
    """The goal's time per run, drawn on the time figures (never against times per unit of work, nor a service)."""
    goal = project.project.goal
    if goal is None or project.serving or scaling.per_unit_of_work:
        return None
    return goal.time_per_run


def _needed_speedup(scaling: ScalingResult, limit: float | None) -> float | None:
    """The speedup over the reference that finishing within the goal's time needs."""
    reference = scaling.rows[0].time_s
    return reference / limit if limit and reference else None


def reference_note(scaling: ScalingResult) -> str:
    if scaling.reference_nodes == 1:
        return ""
    return (f" Speedups are relative to the smallest measured scale, {scaling.reference_nodes} nodes "
            f"(no single-node measurement): ideal is p / {scaling.reference_nodes}.")


ACTIVITIES = ("compute", "io", "communication", "idle")
ACTIVITY_LABELS = {"compute": "compute", "io": "I/O", "communication": "communication", "idle": "idle"}
# Beyond this ratio of the longest wall time to the shortest, the short bars are slivers: the shares are drawn too.
SHARES_PANEL_RATIO = 8.0


def _activity_layers(scaling: ScalingResult) -> list[Layer]:
    return present_layers([(name, ACTIVITY_LABELS[name], [getattr(r.run, name) or 0.0 for r in scaling.rows])
                           for name in ACTIVITIES])


def breakdown(scaling: ScalingResult, limit: float | None = None) -> FigureJob | None:
    if scaling.form != "breakdown":
        return None
    layers = _activity_layers(scaling)
    totals = [r.time_s or 0.0 for r in scaling.rows]
    shares = min(totals) > 0 and max(totals) / min(totals) > SHARES_PANEL_RATIO
    panels = " (left) and as shares of it (right), since the longest run is many times the shortest" if shares else ""
    goal = " The black dash-dot line is the goal's time per run." if limit else ""
    frame = FigureFrame("breakdown", "Where the time goes at each measured scale, stacked to the wall time of one run"
                        f"{panels}: {colour_key([(a, label) for a, label, _ in layers])}.{goal}",
                        "Stacked bars of time per scale.", height=3.0)
    return FigureJob(frame, _draw_breakdown, (scaling, shares, limit))


def _draw_breakdown(frame: FigureFrame, scaling: ScalingResult, shares: bool, limit: float | None) -> str:
    import numpy as np

    labels = [f"{r.nodes:,}" for r in scaling.rows]
    layers = _activity_layers(scaling)
    totals = np.array([r.time_s or 0.0 for r in scaling.rows])
    unit, factor = unit_for(list(totals), TIME_UNITS)
    with figure(frame) as fig:
        axes = fig.subplots(1, 2, width_ratios=(3, 2)) if shares else [fig.subplots()]
        ax = axes[0]
        stacked_bars(ax, labels, [(name, label, [v * factor for v in values]) for name, label, values in layers])
        draw_goal_line(ax, limit * factor if limit else None, "the goal's time per run")
        node_categories(ax, len(labels))
        ax.set_ylabel(f"wall time per run ({unit})")
        ax.grid(axis="x", visible=False)
        if shares:
            right = axes[1]
            stacked_bars(right, labels, [(name, label, list(100.0 * np.asarray(values) / totals))
                                         for name, label, values in layers])
            node_categories(right, len(labels))
            right.set_ylabel("share of wall time (%)")
            right.set_ylim(0, 100)
            right.grid(axis="x", visible=False)
            fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=len(layers))
        else:
            ax.legend(loc="upper right")
        return to_svg(fig, frame.key)


def timeline(scaling: ScalingResult) -> FigureJob | None:
    pop = next((row for row in reversed(scaling.pop)), None)  # the largest scale with per-worker times
    if pop is None:
        return None
    group = _worker_group(len(pop.workers_s))
    grouped = (f" Each bar is {group:,} consecutive workers (of {len(pop.workers_s):,}), drawn at the slowest of "
               "them." if group > 1 else "")
    frame = FigureFrame("timeline", f"Per-worker timeline at {pop.nodes:,} nodes: each worker computes, waits at the "
                        "barrier until the slowest finishes, then joins the collective. Load balance "
                        f"{pop.load_balance:.3f}, imbalance (max/mean − 1) {pop.imbalance:.1%}.{grouped}",
                        "Gantt-style bars, one per worker." if group == 1 else "Gantt-style bars, one per group of "
                        "workers.", height=min(0.9 + 0.16 * len(pop.workers_s), 4.6))
    return FigureJob(frame, _draw_timeline, (pop,))


RANK_LAYERS = (("compute", "compute"), ("communication", "exposed communication (transfer)"),
               ("wait", "waiting for the slowest rank"), ("idle", "idle"))


def ranks(provenance: ProvenanceResult | None) -> FigureJob | None:
    """Per rank of the largest scale read from profiler traces: a straggler is the rank that never waits."""
    if provenance is None or not provenance.ranks:
        return None
    slowest = max(provenance.ranks, key=lambda r: r.compute)
    frame = FigureFrame("ranks", f"Each rank's run at {provenance.ranks_nodes:,} nodes, from its profiler trace: "
                        f"{colour_key(list(RANK_LAYERS))}. A straggler computes longest and waits least (here rank "
                        f"{slowest.rank}); the others' wait is time lost to it, not to the network.",
                        "Horizontal stacked bars per rank.", height=min(1.1 + 0.16 * len(provenance.ranks), 4.6))
    return FigureJob(frame, _draw_ranks, (provenance.ranks,))


def _draw_ranks(frame: FigureFrame, times: tuple[RankTimes, ...]) -> str:
    few = len(times) <= MAX_WORKER_LABELS
    with figure(frame) as fig:
        ax = fig.subplots()
        rows = np.arange(len(times))
        left = np.zeros(len(times))
        unit, factor = unit_for([t.compute + t.communication + t.wait + t.idle for t in times], TIME_UNITS)
        for activity, label in RANK_LAYERS:
            values = np.array([getattr(t, activity) for t in times]) * factor
            if not values.any():
                continue
            color, hatch = ACTIVITY[activity]
            ax.barh(rows, values, left=left, color=color, hatch=hatch if few else None, label=label,
                    edgecolor=INK, linewidth=0.4 if few else 0.0, height=0.8 if few else 1.0)
            left += values
        labelled = rows[::-(-len(times) // MAX_WORKER_LABELS)]
        ax.set_yticks(labelled, [f"rank {times[i].rank}" for i in labelled], fontsize=6.5)
        ax.invert_yaxis()
        ax.set_xlabel(f"time per run ({unit})")
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside lower center", ncol=2)
        return to_svg(fig, frame.key)


# Beyond this many workers a row is too thin for a label each (6.5 pt text), for outlines or for hatches: every k-th
# worker is labelled, and the bars lose their outlines, which painted them black with 128 workers, and their hatches,
# which became a staircase of dashes (the colours differ in lightness, so the activities still read in greyscale).
MAX_WORKER_LABELS = 24


# Past this many workers the timeline draws groups of consecutive workers, each at its slowest: a bar is then still
# wider than a pixel, and 200,000 workers draw in the time of 400 (they once took minutes and gigabytes).
MAX_DRAWN_WORKERS = 400


def _worker_group(count: int) -> int:
    """Workers per bar: 1 up to MAX_DRAWN_WORKERS, else the fewest that keep the bars within it."""
    return -(-count // MAX_DRAWN_WORKERS)


def _draw_timeline(frame: FigureFrame, pop: PopRow) -> str:
    every = np.array(pop.workers_s)
    group = _worker_group(len(every))
    padded = np.pad(every, (0, -len(every) % group), constant_values=-np.inf)  # the last group may be short
    workers = padded.reshape(-1, group).max(axis=1)  # each group at its slowest: the barrier's view of it
    slowest = workers.max()
    collective = pop.collective_s or 0.0
    few = len(workers) <= MAX_WORKER_LABELS
    edge, height = (0.4, 0.8) if few else (0.0, 1.0)
    with figure(frame) as fig:
        ax = fig.subplots()
        rows = np.arange(len(workers))
        color, _ = ACTIVITY["compute"]
        ax.barh(rows, workers, color=color, label="compute", edgecolor=INK, linewidth=edge, height=height)
        color, hatch = ACTIVITY["idle"]
        ax.barh(rows, slowest - workers, left=workers, color=color, hatch=hatch if few else None,
                label="wait at the barrier for the slowest", edgecolor=INK, linewidth=edge, height=height)
        if collective:
            color, hatch = ACTIVITY["communication"]
            ax.barh(rows, [collective] * len(workers), left=slowest, color=color, hatch=hatch if few else None,
                    label="collective", edgecolor=INK, linewidth=edge, height=height)
        labelled = rows[::-(-len(workers) // MAX_WORKER_LABELS)]
        names = [f"w{i}" if group == 1 else f"w{i * group}–{min((i + 1) * group, len(every)) - 1}" for i in labelled]
        ax.set_yticks(labelled, names, fontsize=6.5)
        ax.invert_yaxis()
        ax.set_xlabel("time (s)")
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside lower center", ncol=3)
        return to_svg(fig, frame.key)


def _band(confidence: ConfidenceResult | None) -> Band:
    return confidence.band if confidence is not None else ()


def speedup(scaling: ScalingResult, limit: float | None = None, *, band: Band = ()) -> FigureJob | None:
    """Measured speedup and efficiency; `band` the resampled fits' 90 % band (methods.md#few-runs-stated-confidence)."""
    if scaling.single_scale:  # one point: no curve, and a degenerate axis; the section says what to add
        return None
    needed = _needed_speedup(scaling, limit)
    knee_text = f"The knee (Kneedle in log2 p) is at {scaling.knee_nodes:,} nodes." if scaling.knee_nodes else \
        "No knee in the measured range."
    goal = (f" The black dash-dot line is the speedup the goal's time per run needs ({needed:.3g})."
            if needed else "")
    frame = FigureFrame("speedup", "Measured speedup against ideal with the Amdahl and Universal Scalability Law fits "
                        "(left: measured blue, ideal grey dotted, Amdahl green dashed, USL pink dash-dot, knee a "
                        "vermilion star) and parallel efficiency (right: orange, E = 0.5 vermilion dashed). "
                        f"{knee_text}{goal}{reference_note(scaling)}"
                        + (" Black bars: the 95 % bootstrap interval over each scale's repeated runs."
                           if scaling.repeated else "")
                        + (" The blue band: the 90 % interval of the fits to the resampled runs, out to the plan."
                           if band else ""),
                        "Speedup and efficiency against node count.", height=3.4)
    return FigureJob(frame, _draw_speedup, (scaling, needed, band))


def _interval_bars(ax: Axes, p: np.ndarray, values: list[float], intervals: list[tuple[float, float] | None]) -> None:
    """One error-bar artist for the scales with repeats, and only them: a scale with one run gets no bar, and no
    caps either (5,000 single-run scales beside ten repeated ones once drew 20,000 caps, a 3.8 MB figure)."""
    kept = [(x, v, ci) for x, v, ci in zip(p, values, intervals, strict=True) if ci]
    if not kept:
        return
    below = [v - ci[0] for _, v, ci in kept]
    above = [ci[1] - v for _, v, ci in kept]
    ax.errorbar([x for x, _, _ in kept], [v for _, v, _ in kept], yerr=[below, above], fmt="none", ecolor=INK,
                elinewidth=0.9, capsize=3, zorder=4)


def _draw_speedup(frame: FigureFrame, scaling: ScalingResult, needed: float | None, resampled: Band) -> str:
    rows = scaling.rows
    p = np.array([r.nodes for r in rows], dtype=float)
    q = p / scaling.reference_nodes
    s = np.array([r.speedup for r in rows])
    dense = np.geomspace(p.min(), p.max() * 1.5, 120)
    with figure(frame) as fig:
        ax, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        ax.plot(p, q, color=GREY, linestyle=":", label="ideal")
        dots = len(rows) <= MAX_MARKERS  # past that a line reads better, and each marker is a path in the SVG
        ax.plot(p, s, "o-" if dots else "-", color=BLUE, markeredgecolor=INK, label="measured")
        _interval_bars(ax, p, list(s), [r.speedup_ci for r in rows])
        band = np.array(resampled) if resampled else None
        beyond = band is not None and float(band[-1, 0]) > float(p.max())  # a plan past the measured range
        if band is not None:  # the resampled fits' 90 % band, out to the plan (methods.md#few-runs-stated-confidence)
            # drawn no higher than 1.25 × ideal: past it a fit's extrapolation says nothing a reader can use
            ceiling = 1.25 * band[:, 0] / scaling.reference_nodes
            band[:, 2] = np.minimum(band[:, 2], ceiling)
            band[:, 1] = np.minimum(band[:, 1], band[:, 2])
            ax.fill_between(band[:, 0], band[:, 1], band[:, 2], color=BLUE, alpha=0.15, linewidth=0,
                            label="90 % band of the resampled fits")
        if scaling.amdahl is not None and scaling.amdahl.serial_fraction > 0:
            f = scaling.amdahl.serial_fraction
            dq = dense / scaling.reference_nodes
            ax.plot(dense, 1 / (f + (1 - f) / dq), color=GREEN, linestyle="--", linewidth=1.1,
                    label=f"Amdahl, f = {f:.3g}")
        if scaling.usl is not None:
            usl = scaling.usl
            fitted = usl_capacity(dense, usl.gamma, usl.sigma, usl.kappa)
            if scaling.form == "throughput":
                fitted = fitted / rows[0].run.throughput
            ax.plot(dense, fitted, color=PURPLE, linestyle="-.", linewidth=1.1,
                    label=f"USL, σ = {usl.sigma:.3g}, κ = {usl.kappa:.3g}")
        if scaling.knee_nodes is not None:
            knee = next(r for r in rows if r.nodes == scaling.knee_nodes)
            ax.plot([knee.nodes], [knee.speedup], "*", color=VERMILION, markersize=13, markeredgecolor=INK,
                    label=f"knee at {knee.nodes:,} nodes")
        draw_goal_line(ax, needed, "speedup the goal's time needs")
        log2_axis(ax, [r.nodes for r in rows] + ([float(band[-1, 0])] if band is not None and beyond else []))
        # the axis is the measurements'; the band widens it only to show a plan beyond them
        top = max([float(s.max()), 1.0, needed or 0.0] + [r.speedup_ci[1] for r in rows if r.speedup_ci]
                  + ([float(band[:, 2].max())] if band is not None and beyond else []))
        ax.set_ylim(0, top * 1.35)
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel(f"speedup over {scaling.reference_nodes:,} node{'s' if scaling.reference_nodes > 1 else ''}")
        ax.legend(loc="upper left")
        right.plot(p, [r.efficiency for r in rows], "s-" if dots else "-", color=ORANGE, markeredgecolor=INK,
                   label="efficiency")
        _interval_bars(right, p, [r.efficiency for r in rows], [r.efficiency_ci for r in rows])
        right.axhline(1.0, color=GREY, linestyle=":")
        right.axhline(0.5, color=VERMILION, linestyle="--", linewidth=1, label="E = 0.5")
        log2_axis(right, [r.nodes for r in rows])
        right.set_ylim(0, max(1.1, max(r.efficiency for r in rows) * 1.1))
        right.set_xlabel("nodes (log scale)")
        right.set_ylabel("parallel efficiency E")  # E = S / (p / p_ref): the full formula overran the axes
        right.legend(loc="lower left")
        return to_svg(fig, frame.key)


# The activity (colour and hatch) each further loss is drawn in (reportgen.analysis.measured.scaling.EXTRA_LOSSES)
LOSS_ACTIVITY = {"lost_io": "io", "lost_bubble": "bubble", "lost_startup": "startup", "lost_contention": "contention"}


def lost_folds(scaling: ScalingResult) -> FigureJob | None:
    if scaling.form != "breakdown" or len(scaling.rows) < 2:
        return None
    key = colour_key([("compute", "achieved"), ("serial", "serial fraction"), ("communication", "communication"),
                      ("idle", "load imbalance")]
                     + [(LOSS_ACTIVITY[field], phrase) for field, _, phrase in scaling.extra_losses])
    frame = FigureFrame("lost-folds", "Every fold of ideal speedup accounted for: the folds achieved, and the folds "
                        f"lost to {scaling.lost_to}, shared in proportion to the "
                        f"time each cause lost ({key}; ideal as a black tick).{reference_note(scaling)}",
                        "Stacked bars of achieved and lost folds.", height=3.0)
    return FigureJob(frame, _draw_lost_folds, (scaling,))


def _draw_lost_folds(frame: FigureFrame, scaling: ScalingResult) -> str:
    rows = scaling.rows
    labels = [f"{r.nodes:,}" for r in rows]
    with figure(frame) as fig:
        ax = fig.subplots()
        causes = (("lost_serial", "serial", "lost to the serial fraction"),
                  ("lost_communication", "communication", "lost to communication"),
                  ("lost_imbalance", "idle", "lost to load imbalance"),
                  *((field, LOSS_ACTIVITY[field], f"lost to {phrase}") for field, _, phrase in scaling.extra_losses))
        stacked_bars(ax, labels, [("compute", "folds achieved (speedup)", [r.speedup for r in rows])] + [
            (activity, label, [max(getattr(r, field) or 0.0, 0.0) for r in rows])
            for field, activity, label in causes])
        ideal = [r.nodes / scaling.reference_nodes for r in rows]
        ax.plot(labels, ideal, "_", color=INK, markersize=18, markeredgewidth=1.5, label="ideal p / p_ref")
        node_categories(ax, len(labels))
        ax.set_ylabel("folds of speedup")
        ax.grid(axis="x", visible=False)
        ax.legend(loc="upper left")
        return to_svg(fig, frame.key)


def karp_flatt(scaling: ScalingResult) -> FigureJob | None:
    points = tuple((r.nodes, r.karp_flatt) for r in scaling.rows if r.karp_flatt is not None)
    if len(points) < 2:
        return None
    frame = FigureFrame("karp-flatt", "Experimentally determined serial fraction (Karp–Flatt). "
                        f"{karp_flatt_reading(scaling)}{reference_note(scaling)}",
                        "Karp-Flatt fraction against node count.", height=2.7)
    return FigureJob(frame, _draw_karp_flatt, (points, scaling))


def karp_flatt_reading(scaling: ScalingResult) -> str:
    """The caption's reading of e(p): its trend, what that trend means, and how it relates to the named cause, so
    that the caption and the cause never disagree."""
    trend = scaling.karp_flatt_trend
    if trend is None:
        return ""
    nodes = [r.nodes for r in scaling.rows if r.karp_flatt is not None]
    change = abs(scaling.karp_flatt_slope or 0.0) * (max(nodes) - min(nodes))
    how = ("changes by less than 10 % of its mean over the measured range" if trend == "flat"
           else f"{'rises' if trend == 'rising' else 'falls'} by {change:.2g} over the measured range, more than "
           "10 % of its mean")
    reading = f"e(p) {how}: its trend is {trend}, {TREND_READING[trend]}."
    if scaling.knee_cause_inferred:
        return f"{reading} This names the likely cause, {scaling.knee_cause}."
    if scaling.knee_cause is not None:
        return f"{reading} The measured breakdown, not this trend, names the cause: {scaling.knee_cause}."
    return reading


def _draw_karp_flatt(frame: FigureFrame, points: tuple[tuple[int, float], ...], scaling: ScalingResult) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        ax.plot([p for p, _ in points], [e for _, e in points], "o-" if len(points) <= MAX_MARKERS else "-",
                color=BLUE, markeredgecolor=INK,
                label="Karp–Flatt e(p), measured")
        if scaling.usl is not None and scaling.reference_nodes == 1:
            dense = np.geomspace(points[0][0], points[-1][0], 60)
            ax.plot(dense, scaling.usl.sigma + scaling.usl.kappa * dense, color=PURPLE, linestyle="-.",
                    label="USL: e(p) = σ + κp")
        if scaling.amdahl is not None:
            ax.axhline(scaling.amdahl.serial_fraction, color=GREEN, linestyle="--", linewidth=1,
                       label=f"Amdahl f = {scaling.amdahl.serial_fraction:.3g}")
        log2_axis(ax, [p for p, _ in points])
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel("serial fraction e(p)")
        ax.legend(loc="best")  # a falling e(p) starts in the upper left corner
        return to_svg(fig, frame.key)
