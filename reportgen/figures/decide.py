"""Decision figures: cost against speedup with both optima, the price regimes, energy and CO2 per scale."""

from __future__ import annotations

from reportgen.analysis import Analysis
from reportgen.analysis.money.cost import CostResult
from reportgen.analysis.money.energy import EnergyResult
from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import (
    BLUE,
    COLOUR_NAMES,
    ENERGY_UNITS,
    GREEN,
    GREY,
    INK,
    MASS_UNITS,
    ORANGE,
    PURPLE,
    VERMILION,
    WORK_UNITS,
    draw_goal_line,
    figure,
    log2_axis,
    log_axes,
    node_categories,
    readable,
    thinned_labels,
    to_svg,
    unit_for,
    wide,
)
from reportgen.project.model import REGIME_NAMES, Project
from reportgen.wording import money

REGIME_STYLE = {"on_demand": (BLUE, "o", "-"), "spot": (ORANGE, "s", "--"), "local": (GREEN, "^", "-.")}
LINE_NAMES = {"-": "solid", "--": "dashed", "-.": "dash-dot", ":": "dotted"}


def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    limit = cost_limit(project, analysis.cost)
    return present(cost_speedup(analysis.cost, limit), regimes(analysis.cost, limit), energy(analysis.energy))


def cost_limit(project: Project, cost: CostResult | None) -> float | None:
    """The goal's budget per run, drawn on the cost figures (not against costs per unit of work)."""
    goal = project.project.goal
    if goal is None or cost is None or cost.per_unit_of_work:
        return None
    return goal.cost_per_run


def _regime_look(name: str, viable: bool) -> str:
    color, _, line = REGIME_STYLE[name]
    return f"{COLOUR_NAMES[color if viable else GREY]} {LINE_NAMES[line]}" + ("" if viable else ", not viable")


def _limit_note(limit: float | None, currency: str) -> str:
    return f" The black dash-dot line is the goal's budget, {money(limit, currency)} per run." if limit else ""


def _cost_axis(cost: CostResult, values: list[float]) -> tuple[float, str]:
    """The factor costs are drawn with, and the axis label: per run, or per a multiple of units of work that
    reads (USD per million units of work)."""
    log = ", log scale" if wide(values) else ""
    if not cost.per_unit_of_work:
        return 1.0, f"cost ({cost.currency} per run{log})"
    name, factor = unit_for(values, WORK_UNITS)
    return factor, f"cost ({cost.currency} per {name}{log})"


def _nodes(count: int) -> str:
    return f"{count:,} node{'' if count == 1 else 's'}"


def cost_speedup(cost: CostResult | None, limit: float | None = None) -> FigureJob | None:
    if cost is None:
        return None
    what = "Cost per unit of work" if cost.per_unit_of_work else "Cost of one run"
    frame = FigureFrame("cost-speedup", f"{what} against speedup at each measured node count (blue), with the "
                        "cost-optimal (green diamond) and the fastest (vermilion star) points. Going from the "
                        f"cheapest to the fastest costs {cost.cost_ratio:.3g}× the money for "
                        f"{cost.speedup_ratio:.3g}× the speed.{_limit_note(limit, cost.currency)}",
                        "Cost against speedup.", height=3.0)
    return FigureJob(frame, _draw_cost_speedup, (cost, limit))


def _draw_cost_speedup(frame: FigureFrame, cost: CostResult, limit: float | None) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        costs = [r.cost for r in cost.rows]
        factor, label = _cost_axis(cost, costs)
        if wide(costs):
            log_axes(ax, y=True)
        ax.plot([r.speedup for r in cost.rows], [r.cost * factor for r in cost.rows], "o-", color=BLUE,
                markeredgecolor=INK, label="measured scales")
        cheap = next(r for r in cost.rows if r.nodes == cost.cost_optimal_nodes)
        fast = next(r for r in cost.rows if r.nodes == cost.fastest_nodes)
        # the optima's node counts first; then every point clear of those already labelled
        ordered = [cheap, fast, *(r for r in cost.rows if r not in (cheap, fast))]
        for index in thinned_labels(ax, [(r.speedup, r.cost * factor) for r in ordered]):
            row = ordered[index]
            ax.annotate(f"{row.nodes:,}", (row.speedup, row.cost * factor), textcoords="offset points",
                        xytext=(4, -10), fontsize=7)
        ax.plot([cheap.speedup], [cheap.cost * factor], "D", color=GREEN, markersize=10, markeredgecolor=INK,
                label=f"cost-optimal: {_nodes(cheap.nodes)}")
        ax.plot([fast.speedup], [fast.cost * factor], "*", color=VERMILION, markersize=13, markeredgecolor=INK,
                label=f"fastest: {_nodes(fast.nodes)}")
        if cost.time_value_optimal_nodes is not None:
            best = next(r for r in cost.rows if r.nodes == cost.time_value_optimal_nodes)
            ax.plot([best.speedup], [best.cost * factor], "P", color=PURPLE, markersize=10, markeredgecolor=INK,
                    label=f"optimal with time valued: {_nodes(best.nodes)}")
        draw_goal_line(ax, limit * factor if limit else None, "the goal's budget per run")
        ax.set_xlabel("speedup")
        ax.set_ylabel(label)
        ax.legend(loc="upper left")
        return to_svg(fig, frame.key)


def regimes(cost: CostResult | None, limit: float | None = None) -> FigureJob | None:
    if cost is None or len(cost.regimes) < 2:
        return None
    what = "unit of work" if cost.per_unit_of_work else "run"
    styles = [f"{REGIME_NAMES[name]} {_regime_look(name, regime.viable)}" for name, regime in cost.regimes.items()]
    frame = FigureFrame("regimes", f"Cost per {what} in each price regime ({', '.join(styles)}); each viable "
                        "regime's own optimum is drawn large. Spot adds the restart time of expected preemptions "
                        "(first order)." + _limit_note(limit, cost.currency), "Cost against nodes per price regime.",
                        height=2.9)
    return FigureJob(frame, _draw_regimes, (cost, limit))


def _draw_regimes(frame: FigureFrame, cost: CostResult, limit: float | None) -> str:
    costs = [r.cost for regime in cost.regimes.values() for r in regime.rows]
    factor, label = _cost_axis(cost, costs)
    with figure(frame) as fig:
        ax = fig.subplots()
        if wide(costs):
            log_axes(ax, y=True)
        for name, regime in cost.regimes.items():
            color, marker, line = REGIME_STYLE[name]
            name_shown = REGIME_NAMES[name] + ("" if regime.viable else " (not viable)")
            ax.plot([r.nodes for r in regime.rows], [r.cost * factor for r in regime.rows], marker=marker,
                    linestyle=line, color=color if regime.viable else GREY, markeredgecolor=INK, label=name_shown)
            if regime.cost_optimal_nodes is not None:
                best = next(r for r in regime.rows if r.nodes == regime.cost_optimal_nodes)
                ax.plot([best.nodes], [best.cost * factor], marker, color=color, markersize=11, markeredgecolor=INK)
        draw_goal_line(ax, limit * factor if limit else None, "the goal's budget per run")
        log2_axis(ax, [r.nodes for r in cost.rows])
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel(label)
        ax.legend(loc="upper left")
        return to_svg(fig, frame.key)


def _energy_unit(result: EnergyResult) -> str:
    return "per unit of work" if result.per_unit_of_work else "per run"


def energy(result: EnergyResult | None) -> FigureJob | None:
    if result is None:
        return None
    source = f" Carbon intensity {result.carbon_intensity_g_per_kwh:.4g} g/kWh ({result.carbon_source})." \
        if result.carbon_intensity_g_per_kwh is not None else " No location given: CO2e is not computed."
    measured, modelled = any(r.measured for r in result.rows), any(not r.measured for r in result.rows)
    bars = "; ".join([*(["blue bars modelled"] if modelled else []),
                      *(["orange and hatched where measured"] if measured else [])])
    line = " and the CO2e it emits (vermilion dashed line)" if result.carbon_intensity_g_per_kwh is not None else ""
    frame = FigureFrame("energy", f"Energy {_energy_unit(result)} at each scale ({bars}){line}.{source}",
                        "Energy bars and CO2 line per scale.", height=2.9)
    return FigureJob(frame, _draw_energy, (result,))


def _draw_energy(frame: FigureFrame, result: EnergyResult) -> str:
    labels = [f"{r.nodes:,}" for r in result.rows]
    unit = _energy_unit(result)
    energy, energy_unit = readable([r.energy_kwh for r in result.rows], ENERGY_UNITS)
    with figure(frame) as fig:
        ax = fig.subplots()
        bars = ax.bar(labels, energy, color=[ORANGE if r.measured else BLUE for r in result.rows],
                      hatch=["/" if r.measured else "" for r in result.rows], edgecolor=INK, linewidth=0.5)
        for kind, label in ((True, "measured energy"), (False, "modelled energy")):  # one legend entry each
            first = next((b for b, r in zip(bars, result.rows, strict=True) if r.measured == kind), None)
            if first is not None:
                first.set_label(label)
        node_categories(ax, len(labels))
        ax.set_ylabel(f"energy ({energy_unit} {unit})")
        ax.grid(axis="x", visible=False)
        handles, names = ax.get_legend_handles_labels()
        if result.carbon_intensity_g_per_kwh is not None:
            co2, co2_unit = readable([r.co2_kg or 0.0 for r in result.rows], MASS_UNITS)
            right = ax.twinx()
            right.plot(labels, co2, "o--", color=VERMILION, markeredgecolor=INK, label="CO2e")
            right.set_ylabel(f"CO2e ({co2_unit} {unit})")
            right.set_ylim(0, max(co2) * 1.2 or 1.0)
            right.grid(False)
            right.spines["right"].set_visible(True)
            more = right.get_legend_handles_labels()
            handles, names = handles + more[0], names + more[1]
        fig.legend(handles, names, loc="outside lower center", ncol=3)  # bars of any shape leave no corner free
        return to_svg(fig, frame.key)
