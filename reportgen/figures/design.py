"""Design figures: pressures radar, fan-out budget, predicted speedup and ratio, sensitivity heat map, and a parallel
layout's step terms beside the measured breakdown."""

from __future__ import annotations

import dataclasses

import numpy as np

from reportgen.analysis import Analysis
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.model.layout import LayoutResult
from reportgen.analysis.model.prediction import Curve, PredictionResult, Sensitivity
from reportgen.analysis.plan.plan_search import PlanSearchResult
from reportgen.analysis.verdict.checklist import ChecklistResult, TaxResult
from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import (
    ACTIVITY,
    BLUE,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    SKY,
    VERMILION,
    YELLOW,
    figure,
    log_axes,
    to_svg,
)
from reportgen.project.model import Project, Run
from reportgen.wording import duration


def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    return present(radar(analysis.checklist), fanout_budget(analysis.checklist),
                   predicted(analysis.prediction, analysis.scaling), sensitivity(analysis.prediction),
                   layout_step(analysis.layout, analysis.scaling), search_step(analysis.plan_search))


def _plotted(prediction: PredictionResult | None) -> PredictionResult | None:
    """The prediction with its curve cut to the plotted range and thinned to ~300 points evenly spaced in log p:
    the same drawing, and a job small enough to send to a worker process (max_nodes may be 10^6)."""
    if prediction is None:
        return None
    curve = prediction.curve
    limit = min(prediction.max_nodes, max(4 * prediction.p_star, 64, 2 * (prediction.planned_nodes or 1)))
    shown = np.unique(np.geomspace(1, limit, 300).round().astype(int)) - 1
    thinned = Curve(curve.nodes[shown], curve.t_comm[shown], curve.t_step[shown], curve.speedup[shown],
                    curve.comm_ratio[shown])
    # the layout travels on its own (its curve may hold 10^7 degrees): the job carries only what it draws
    return dataclasses.replace(prediction, curve=thinned, layout=None)


def radar(checklist: ChecklistResult | None) -> FigureJob | None:
    if checklist is None or len(checklist.pressures) < 3:
        return None
    top = " and ".join(checklist.top_pressures)
    frame = FigureFrame("pressures", f"Pressure on each axis of distribution, from 0 to 1 (declared). The strongest: "
                        f"{top}.", "Radar chart of the six axis pressures.", width=3.6, height=3.0)
    return FigureJob(frame, _draw_radar, (tuple(checklist.pressures),))


def _draw_radar(frame: FigureFrame, pressures: tuple[tuple[str, float], ...]) -> str:
    names = [name for name, _ in pressures]
    values = [value for _, value in pressures]
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False)
    with figure(frame) as fig:
        ax = fig.add_subplot(projection="polar")
        closed = np.concatenate([angles, angles[:1]])
        ax.plot(closed, values + values[:1], color=BLUE, marker="o", markersize=4)
        ax.fill(closed, values + values[:1], color=BLUE, alpha=0.18)  # one area: the outline reads in greyscale
        ax.set_xticks(angles)
        ax.set_xticklabels(names)
        ax.tick_params(axis="x", pad=7)  # clear of a marker on the rim (a pressure of 1)
        # a label beside the circle (left or right) grows away from it, not across it ("inference" at 180°)
        for label, angle in zip(ax.get_xticklabels(), angles, strict=True):
            across = np.cos(angle)
            label.set_horizontalalignment("left" if across > 0.3 else "right" if across < -0.3 else "center")
        ax.set_ylim(0, 1)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0])
        ax.set_yticklabels(["0.25", "0.5", "0.75", "1"], fontsize=6.5)
        return to_svg(fig, frame.key)


def fanout_budget(checklist: ChecklistResult | None) -> FigureJob | None:
    if checklist is None or checklist.tax.kind != "interactive":
        return None
    frame = FigureFrame("fanout-budget", "The interactive communication tax: latency budget left against fanout 1 to "
                        "80. The exhausting fanout is the smallest fanout whose tax reaches the objective.",
                        "Line of budget left falling with fanout.", height=2.8)
    return FigureJob(frame, _draw_fanout_budget, (checklist.tax,))


def _draw_fanout_budget(frame: FigureFrame, tax: TaxResult) -> str:
    fanouts = [n for n, _ in tax.budget_curve]
    budget_ms = [left * 1e3 for _, left in tax.budget_curve]
    with figure(frame) as fig:
        ax = fig.subplots()
        ax.plot(fanouts, budget_ms, color=BLUE, label="latency budget left = SLO − fanout × hop latency")
        ax.axhline(0, color=INK, linewidth=1)
        # translucent fill, opaque hatch in the edge colour: a hatch in the fill's own colour does not show
        ax.fill_between(fanouts, budget_ms, 0, where=[b < 0 for b in budget_ms],
                        facecolor=(VERMILION, 0.25), edgecolor=INK, linewidth=0, hatch="//", label="budget exhausted")
        if tax.fanout is not None:
            ax.axvline(tax.fanout, color=GREEN, linestyle="--", label=f"this design: fanout {tax.fanout}")
        if tax.exhausting_fanout:
            ax.axvline(tax.exhausting_fanout, color=VERMILION, linestyle=":",
                       label=f"exhausting fanout {tax.exhausting_fanout}")
        ax.set_xlabel("fanout (hops per request)")
        ax.set_ylabel("budget left (ms)")
        ax.legend(loc="upper right")
        return to_svg(fig, frame.key)


def predicted(prediction: PredictionResult | None, scaling: ScalingResult | None) -> FigureJob | None:
    if prediction is None:
        return None
    measured = scaling is not None and scaling.reference_nodes == 1
    dominated = prediction.p_comm_dominated is not None
    frame = FigureFrame("predicted-speedup", "Predicted speedup S(p) of the alpha-beta model "
                        f"({prediction.pattern.label}; left "
                        "axis) and the communication-to-computation ratio R(p) (right axis, log scale), with the "
                        "optimum p*" + (" and the first communication-dominated node count p_dom" if dominated else "")
                        + " marked (S blue, ideal grey dotted, R orange dashed, p* green dashed"
                        + (", p_dom vermilion dash-dot" if dominated else "")
                        + ("; measured speedups as orange squares)." if measured else ")."),
                        "Speedup and ratio curves against node count.", height=3.2)
    points = tuple((r.nodes, r.speedup) for r in scaling.rows) if scaling is not None and measured else ()
    return FigureJob(frame, _draw_predicted, (_plotted(prediction), points))


def _draw_predicted(frame: FigureFrame, prediction: PredictionResult, measured: tuple[tuple[int, float], ...]) -> str:
    curve = prediction.curve  # already thinned by _plotted
    p = curve.nodes
    with figure(frame) as fig:
        ax = fig.subplots()
        ax.plot(p, curve.speedup, color=BLUE, label="predicted speedup S(p)")
        ax.plot(p, p, color=GREY, linestyle=":", linewidth=1, label="ideal S = p")
        ax.set_ylim(0, max(float(curve.speedup.max()) * 1.25, 2))
        ax.axvline(prediction.p_star, color=GREEN, linestyle="--", label=f"p* = {prediction.p_star:,}")
        if prediction.p_comm_dominated and prediction.p_comm_dominated <= p[-1]:
            ax.axvline(prediction.p_comm_dominated, color=VERMILION, linestyle="-.",
                       label=f"p_dom = {prediction.p_comm_dominated:,} (R ≥ 1)")
        if measured:
            ax.plot([nodes for nodes, _ in measured], [speedup for _, speedup in measured], "s", color=ORANGE,
                    markeredgecolor=INK, label="measured speedup")
        log_axes(ax, x=True, base=2)
        ax.set_xlabel("nodes p (log scale)")
        ax.set_ylabel("speedup S(p)")
        right = ax.twinx()
        right.plot(p, curve.comm_ratio, color=ORANGE, linestyle="--", linewidth=1.2,
                   label="R(p) = T_comm / (T_comp / p)")
        log_axes(right, y=True)
        right.set_ylabel("communication-to-computation ratio R(p)")
        right.grid(False)
        right.spines["right"].set_visible(True)
        lines = ax.get_legend_handles_labels()
        more = right.get_legend_handles_labels()
        ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left")
        return to_svg(fig, frame.key)


def sensitivity(prediction: PredictionResult | None) -> FigureJob | None:
    if prediction is None:
        return None
    frame = FigureFrame("sensitivity", "Sensitivity of the prediction: the optimum p* and its speedup when the latency "
                        "α and the per-link transfer time β are ten times smaller or larger (darker: less speedup).",
                        "Three-by-three heat map of optimum and speedup.", width=4.2, height=2.9)
    return FigureJob(frame, _draw_sensitivity, (tuple(prediction.sensitivity),))


def _draw_sensitivity(frame: FigureFrame, cells: tuple[Sensitivity, ...]) -> str:
    scales = sorted({s.alpha_scale for s in cells})
    grid = np.array([[next(s for s in cells if s.alpha_scale == a and s.beta_scale == b)
                      for b in scales] for a in scales])
    values = np.array([[cell.speedup for cell in row] for row in grid])
    with figure(frame) as fig:
        ax = fig.subplots()
        # pcolormesh, not imshow: imshow embeds a raster image, and the report fetches and embeds nothing
        edges = np.arange(len(scales) + 1) - 0.5
        image = ax.pcolormesh(edges, edges, np.log10(values), cmap="cividis", edgecolors="white", linewidth=1.5)
        ax.set_aspect("equal")
        for i in range(len(scales)):
            for j in range(len(scales)):
                light = bool(np.asarray(image.norm(np.log10(values[i, j]))) < 0.55)
                ax.text(j, i, f"p* = {grid[i, j].p_star:,}\nS = {values[i, j]:.3g}", ha="center", va="center",
                        fontsize=7, color="white" if light else INK)
        labels = [f"β × {s:g}" for s in scales]
        ax.set_xticks(range(len(scales)), labels)
        ax.set_yticks(range(len(scales)), [f"α × {s:g}" for s in scales])
        ax.grid(False)  # no colour bar: matplotlib draws it as a raster image; the cells carry their values
        return to_svg(fig, frame.key)


# The layout's step terms and the measured breakdown's parts in the report's activity colours: the three exchanges
# of the step are communication's orange, told apart by their hatches (single-density, as every figure's)
STEP_TERMS = (("compute", "compute_s", *ACTIVITY["compute"]), ("pipeline bubble", "bubble_s", *ACTIVITY["bubble"]),
              ("tensor all-reduces", "tensor_s", ORANGE, "/"), ("pipeline sends", "pipeline_s", ORANGE, "|"),
              ("data-parallel collective", "data_s", ORANGE, "-"))
MEASURED_PARTS = (("compute", "compute", *ACTIVITY["compute"]), ("pipeline bubble", "bubble", *ACTIVITY["bubble"]),
                  ("communication (measured)", "communication", ORANGE, "x"), ("idle", "idle", *ACTIVITY["idle"]),
                  ("I/O", "io", *ACTIVITY["io"]))


def layout_step(layout: LayoutResult | None, scaling: ScalingResult | None) -> FigureJob | None:
    """The predicted step's terms at the declared layout, beside the measured breakdown at the plan when one exists:
    each bar as shares of its own total (a step and a run are different lengths), its total written above it."""
    if layout is None or layout.step is None:
        return None
    step = layout.step
    bars = [(f"predicted step\nd = {layout.data:,}", [(name, getattr(step, key), colour, hatch)
                                                     for name, key, colour, hatch in STEP_TERMS], step.total_s)]
    run = _measured_at(scaling, layout.planned_nodes)
    if run is not None:
        parts = [(name, getattr(run, key) or 0.0, colour, hatch) for name, key, colour, hatch in MEASURED_PARTS]
        bars.append((f"measured run\n{layout.planned_nodes:,} nodes", parts, sum(v for _, v, _, _ in parts)))
    measured = " beside the breakdown measured at the plan" if run is not None else ""
    frame = FigureFrame("layout-step", f"The step of the declared layout (d = {layout.data:,}, t = {layout.tensor}, "
                        f"pp = {layout.pipeline}, m = {layout.micro_batches}) by term, as shares of the step"
                        f"{measured}; each bar's total is written above it.",
                        "Stacked bars of the step's terms.", width=4.6, height=3.0)
    return FigureJob(frame, _draw_layout_step, (tuple((label, tuple(parts), total) for label, parts, total in bars),))


# the search's step: the layout's terms, recomputation, the slowest stage's imbalance, context parallelism's exposed
# exchange and the experts' all-to-all (methods.md#the-step-of-a-layout); a term of zero draws nothing
SEARCH_TERMS = (("compute", "compute_s", *ACTIVITY["compute"]), ("recomputation", "recompute_s", PURPLE, "\\"),
                STEP_TERMS[1], ("stage imbalance", "imbalance_s", YELLOW, "."), *STEP_TERMS[2:],
                ("context exchange", "context_s", SKY, "x"), ("expert all-to-all", "expert_s", VERMILION, "+"))


def search_step(search: PlanSearchResult | None) -> FigureJob | None:
    """The declared layout's step beside the best layout's, term by term (methods.md#the-plan-search)."""
    if search is None or not search.best or search.declared is None or search.declared.step is None:
        return None
    best, declared = search.best[0], search.declared
    assert declared.step is not None
    bars = tuple((label, tuple((name, getattr(step, key), colour, hatch) for name, key, colour, hatch in SEARCH_TERMS),
                  step.total_s)
                 for label, step in ((f"declared\n{declared.layout}", declared.step),
                                     (f"best (#1)\n{best.layout}", best.step)))
    frame = FigureFrame("plan-search-step", f"The step of the declared layout ({declared.layout}) beside the best the "
                        f"search finds ({best.layout}), by term, as shares of each step; each bar's total is written "
                        "above it.", "Stacked bars of the two layouts' step terms.", width=4.6, height=3.0)
    return FigureJob(frame, _draw_layout_step, (bars,))


def _measured_at(scaling: ScalingResult | None, nodes: int | None) -> Run | None:
    if scaling is None or nodes is None or scaling.form != "breakdown":
        return None
    return next((row.run for row in scaling.rows if row.nodes == nodes), None)


def _draw_layout_step(frame: FigureFrame,
                      bars: tuple[tuple[str, tuple[tuple[str, float, str, str], ...], float], ...]) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        seen: set[str] = set()
        for index, (_, parts, total) in enumerate(bars):
            bottom = 0.0
            for name, value, colour, hatch in parts:
                share = value / total if total > 0 else 0.0
                if share <= 0:
                    continue
                ax.bar(index, share, bottom=bottom, color=colour, hatch=hatch or None, edgecolor=INK, linewidth=0.5,
                       width=0.55, label=None if name in seen else name)
                seen.add(name)
                bottom += share
            ax.text(index, 1.02, duration(total), ha="center", va="bottom", fontsize=7.5)
        ax.set_xticks(range(len(bars)), [label for label, _, _ in bars])
        ax.set_xlim(-0.6, len(bars) - 0.4 + 1.1)  # room on the right for the legend
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("share of the step (or run)")
        ax.legend(loc="center right", fontsize=7)
        return to_svg(fig, frame.key)
