"""Serving figures: the capacity each scale sustains and its p99 against the goal's lines, and what an hour
of service costs in each price regime against the budget.
(docs/methods.md#4x-serving-projects)"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from reportgen.analysis import Analysis
from reportgen.analysis.model.fits import usl_capacity
from reportgen.analysis.verdict.serving import ServingResult
from reportgen.figures.decide import LINE_NAMES, REGIME_STYLE
from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import (
    BLUE,
    COLOUR_NAMES,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    draw_goal_line,
    figure,
    gaps,
    log2_axis,
    to_svg,
)
from reportgen.project.model import REGIME_NAMES, Project
from reportgen.wording import duration, money, number, plural, target_share

if TYPE_CHECKING:
    from matplotlib.axes import Axes



def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    serving: ServingResult | None = (full or analysis).serving
    if serving is None or not serving.rows:
        return []
    return present(capacity(serving), hourly_cost(serving, project.currency), pareto(serving))


def capacity(serving: ServingResult) -> FigureJob | None:
    measured = [r for r in serving.rows if r.measured and r.capacity_rps is not None]
    if not measured:
        return None
    fitted = " the USL fit pink dash-dot," if serving.usl is not None and len(measured) >= 3 else ""
    latency = any(r.p99_s is not None for r in serving.rows)
    right = (" Right: the p99 at each scale (orange; interpolated or modelled points hollow) against the objective."
             if latency and serving.p99_objective_s is not None else "")
    frame = FigureFrame("serving", f"Left: the capacity each load test reached (blue),{fitted} against the capacity "
                        "the goal needs (black dash-dot line: the load plus its headroom); a fitted scale is a hollow "
                        f"square.{right}", "Capacity and p99 latency against node count.", height=3.0)
    return FigureJob(frame, _draw_capacity, (serving,))


def _draw_capacity(frame: FigureFrame, serving: ServingResult) -> str:
    rows = serving.rows
    measured = [r for r in rows if r.measured and r.capacity_rps is not None]
    with_latency = serving.p99_objective_s is not None and any(r.p99_s is not None for r in rows)
    with figure(frame) as fig:
        axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]}) if with_latency else [fig.subplots()]
        ax = axes[0]
        ax.plot([r.nodes for r in measured], gaps(r.capacity_rps for r in measured), "o-", color=BLUE,
                markeredgecolor=INK, label="measured capacity")
        fitted = [r for r in rows if r.capacity_source == "fitted" and r.capacity_rps is not None]
        if serving.usl is not None and len(measured) >= 3:
            top = max(r.nodes for r in rows)
            dense = np.geomspace(min(r.nodes for r in rows), top * 1.25, 120)
            ax.plot(dense, usl_capacity(dense, serving.usl.gamma, serving.usl.sigma, serving.usl.kappa),
                    color=PURPLE, linestyle="-.", linewidth=1.1, label="USL fit")
        if fitted:
            ax.plot([r.nodes for r in fitted], gaps(r.capacity_rps for r in fitted), "s", color=BLUE,
                    markerfacecolor="none", markersize=8, label="fitted scale")
        draw_goal_line(ax, serving.capacity_needed_rps, "capacity needed")
        log2_axis(ax, [r.nodes for r in rows])
        ax.set_ylim(0, max([r.capacity_rps or 0.0 for r in rows] + [serving.capacity_needed_rps]) * 1.15)
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel(f"capacity ({plural(serving.unit)}/s)")
        ax.legend(loc="upper left")
        if with_latency:
            _draw_latency(axes[1], serving)
        return to_svg(fig, frame.key)


def _draw_latency(ax: Axes, serving: ServingResult) -> None:
    known = [r for r in serving.rows if r.p99_s is not None]
    ax.plot([r.nodes for r in known], [r.p99_s * 1e3 for r in known], "-", color=ORANGE)  # type: ignore[operator]
    solid = [r for r in known if r.p99_source == "measured"]
    hollow = [r for r in known if r.p99_source != "measured"]
    ax.plot([r.nodes for r in solid], [r.p99_s * 1e3 for r in solid], "o", color=ORANGE,  # type: ignore[operator]
            markeredgecolor=INK, label="p99 measured")
    if hollow:
        ax.plot([r.nodes for r in hollow], [r.p99_s * 1e3 for r in hollow], "o",  # type: ignore[operator]
                color=ORANGE, markerfacecolor="none", label="p99 interpolated or modelled")
    assert serving.p99_objective_s is not None
    draw_goal_line(ax, serving.p99_objective_s * 1e3, "p99 objective")
    log2_axis(ax, [r.nodes for r in serving.rows])
    highest = max([r.p99_s or 0.0 for r in known] + [serving.p99_objective_s]) * 1e3
    ax.set_ylim(0, highest * 1.25)
    ax.set_xlabel("nodes (log scale)")
    ax.set_ylabel("p99 latency (ms)")
    ax.legend(loc="lower left")


def hourly_cost(serving: ServingResult, currency: str) -> FigureJob | None:
    if not serving.regimes:
        return None
    looks = ", ".join(f"{REGIME_NAMES[r.name]} {COLOUR_NAMES[REGIME_STYLE[r.name][0] if r.viable else GREY]} "
                      f"{LINE_NAMES[REGIME_STYLE[r.name][2]]}" for r in serving.regimes)
    budget = (f" The black dash-dot line is the goal's budget, {money(serving.cost_limit_per_hour, currency)} an "
              "hour." if serving.cost_limit_per_hour is not None else "")
    frame = FigureFrame("serving-cost", f"Cost of an hour of service at each measured scale in each price regime "
                        f"({looks}); a filled marker serves the load within the objective in that regime, a hollow "
                        f"one does not.{budget}", "Cost per hour against nodes per price regime.", height=2.8)
    return FigureJob(frame, _draw_hourly_cost, (serving, currency))


def _draw_hourly_cost(frame: FigureFrame, serving: ServingResult, currency: str) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        for regime in serving.regimes:
            color, marker, line = REGIME_STYLE[regime.name]
            color = color if regime.viable else GREY
            points = [p for p in serving.points if p.regime == regime.name and p.cost_per_hour is not None]
            ax.plot([p.nodes for p in points], gaps(p.cost_per_hour for p in points), linestyle=line, color=color,
                    label=REGIME_NAMES[regime.name] + ("" if regime.viable else " (not viable)"))
            serves = [p for p in points if p.serves]
            short = [p for p in points if not p.serves]
            ax.plot([p.nodes for p in serves], gaps(p.cost_per_hour for p in serves), marker, color=color,
                    markeredgecolor=INK)
            ax.plot([p.nodes for p in short], gaps(p.cost_per_hour for p in short), marker, color=color,
                    markerfacecolor="none")
        draw_goal_line(ax, serving.cost_limit_per_hour, "the goal's budget per hour")
        log2_axis(ax, [r.nodes for r in serving.rows if r.measured])
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel(f"cost ({currency} per hour)")
        ax.legend(loc="upper left")
        return to_svg(fig, frame.key)


def pareto(serving: ServingResult) -> FigureJob | None:
    """Each valid load point's output tokens a second per user against per device
    (methods.md#a-service-judged-from-its-requests); skipped with fewer than two such points."""
    records = serving.records
    if records is None or sum(1 for p in records.points if p.valid and p.pareto.tokens_per_s_per_user) < 2:
        return None
    target = serving.goodput.target if serving.goodput else None
    share = f"{target_share(target)} of requests meet every objective" if target is not None else "judged"
    tpot = serving.goodput.objectives.get("tpot_s") if serving.goodput else None
    line = f" The dash-dot line is the TPOT objective ({duration(tpot)}: {number(1 / tpot)} tokens/s per user)." \
        if tpot else ""
    frame = FigureFrame("serving-pareto", f"Output tokens/s per device against per user (1/TPOT) at each load point; "
                        f"filled: ≥ {share}; hollow: fewer; grey: a check removed the point. The line joins the "
                        f"points no other beats on both; the ring is the operating point at the plan.{line}",
                        "Output tokens per second per device against per user, per load point.", height=2.8)
    return FigureJob(frame, _draw_pareto, (serving,))


def _draw_pareto(frame: FigureFrame, serving: ServingResult) -> str:
    records = serving.records
    assert records is not None
    scales = sorted({p.nodes for p in records.points})
    colours = (BLUE, ORANGE, PURPLE, INK)
    with figure(frame) as fig:
        ax = fig.subplots()
        for index, point in enumerate(records.points):
            per_user = point.pareto.tokens_per_s_per_user
            if per_user is None:
                continue
            colour = colours[scales.index(point.nodes) % len(colours)] if point.valid else GREY
            filled = point.valid and point.verdict == "met"
            ax.plot([per_user], [point.pareto.tokens_per_s_per_device], "o", color=colour, markeredgecolor=colour,
                    markerfacecolor=colour if filled else "none")
            if index == records.chosen:
                ax.plot([per_user], [point.pareto.tokens_per_s_per_device], "o", markersize=14,
                        markerfacecolor="none", markeredgecolor=INK)
        front = [records.points[index] for index in records.frontier]
        ax.plot([p.pareto.tokens_per_s_per_user or np.nan for p in front],
                [p.pareto.tokens_per_s_per_device for p in front], color=GREY, linewidth=1)
        tpot = serving.goodput.objectives.get("tpot_s") if serving.goodput else None
        draw_goal_line(ax, 1 / tpot if tpot else None, "TPOT objective", vertical=True)
        for nodes, colour in zip(scales, colours, strict=False):
            ax.plot([], [], "o", color=colour, label=f"{nodes:g} nodes")
        ax.set_xlabel("output tokens/s per user (1 / median TPOT)")
        ax.set_ylabel("output tokens/s per device")
        ax.legend(loc="best")
        return to_svg(fig, frame.key)
