"""The history's timeline (methods.md#a-projects-history): page 1's time per run at the plan, revision by revision,
in each price regime, with its interval where repeats give one, and the goal's time limit."""

from __future__ import annotations

from reportgen.figures.jobs import FigureFrame, FigureJob
from reportgen.figures.style import BLUE, GREEN, INK, ORANGE, draw_goal_line, figure, to_svg
from reportgen.json_types import JsonRead

REGIME_LOOK = {"on_demand": (BLUE, "o", "-", "on demand"), "spot": (ORANGE, "s", "--", "spot"),
               "local": (GREEN, "^", "-.", "owned"), None: (BLUE, "o", "-", "at the plan (no prices)")}


def timeline(revisions: list[JsonRead]) -> FigureJob | None:
    """None when no revision has a time at its plan."""
    points: dict[str | None, list[tuple[int, float, float | None, float | None]]] = {}
    for index, revision in enumerate(revisions):
        for row in revision.get("at_plan") or ():
            if row.get("time_s") is not None and row.get("regime") in REGIME_LOOK:
                points.setdefault(row["regime"], []).append(
                    (index, row["time_s"] / 3600, row.get("time_low"), row.get("time_high")))
    if not points:
        return None
    limits = [r["time_limit_s"] for r in revisions if r.get("time_limit_s")]
    limit = limits[-1] / 3600 if limits else None
    labels = tuple(str(revision["label"]) for revision in revisions)
    frame = FigureFrame("history-timeline", "Page 1's time per run at the plan, revision by revision, in each price "
                        "regime (bars: the 90 % interval where repeats give one)"
                        + ("; the dash-dot line is the goal's time per run." if limit else "."),
                        "A line per price regime of the time per run at the plan across revisions.", height=2.8)
    series = tuple((regime, tuple(values)) for regime, values in points.items())
    return FigureJob(frame, _draw, (labels, series, limit))


def _draw(frame: FigureFrame, labels: tuple[str, ...],
          series: tuple[tuple[str | None, tuple[tuple[int, float, float | None, float | None], ...]], ...],
          limit: float | None) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        for regime, values in series:
            colour, marker, dash, name = REGIME_LOOK[regime]
            xs = [v[0] for v in values]
            ys = [v[1] for v in values]
            ax.plot(xs, ys, marker=marker, linestyle=dash, color=colour, markeredgecolor=INK, label=name)
            for x, _, low, high in values:
                if low is not None and high is not None:
                    ax.plot([x, x], [low / 3600, high / 3600], color=colour, linewidth=1.0)
        if limit is not None:
            draw_goal_line(ax, limit, "the goal's time per run")
        ax.set_xticks(range(len(labels)), labels, rotation=45 if len(labels) > 8 else 0, fontsize=7)
        ax.set_ylabel("time per run at the plan (h)")
        ax.set_ylim(bottom=0)
        ax.legend(loc="best")
        return to_svg(fig, frame.key)
