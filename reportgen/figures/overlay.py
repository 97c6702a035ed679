"""Diff figures: the old revision against the new, drawn from the two results documents."""

from __future__ import annotations

from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import BLUE, GREY, INK, figure, literal, log2_axis, to_svg
from reportgen.json_types import JsonRead

Json = JsonRead

# (key, section, y field, y label, caption)
OVERLAYS = (
    ("overlay-predicted", "prediction", "speedup", "predicted speedup S(p)",
     "Predicted speedup of the alpha-beta model at powers of two and the marked node counts."),
    ("overlay-measured", "scaling", "speedup", "measured speedup", "Measured speedup at each measured scale."),
    ("overlay-cost", "cost", "cost", "cost per run", "Cost per run (or per unit of work) at each measured scale."),
    ("overlay-energy", "energy", "energy_kwh", "energy per run (kWh)", "Energy per run at each measured scale."),
)


def jobs(old: Json, new: Json, old_label: str, new_label: str) -> list[FigureJob]:
    return present(*(overlay(key, _points(old, section, field), _points(new, section, field), label, caption,
                             old_label, new_label) for key, section, field, label, caption in OVERLAYS))


def _points(document: Json, section: str, field: str) -> tuple[tuple[int, float], ...]:
    rows = (document.get(section) or {}).get("rows") or []
    return tuple((row["nodes"], row[field]) for row in rows if isinstance(row.get(field), int | float))


def overlay(key: str, old: tuple[tuple[int, float], ...], new: tuple[tuple[int, float], ...], label: str,
            caption: str, old_label: str, new_label: str) -> FigureJob | None:
    if old == new:  # nothing to see: both absent, or one line drawn twice
        return None
    missing = "" if old and new else f" Only the {'new' if new else 'old'} revision has these results."
    frame = FigureFrame(key, f"{caption} Old revision grey and dashed, new revision blue.{missing}",
                        f"{label}: old against new", height=2.8)
    return FigureJob(frame, _draw_overlay, (old, new, label, old_label, new_label))


def _draw_overlay(frame: FigureFrame, old: tuple[tuple[int, float], ...], new: tuple[tuple[int, float], ...],
                  label: str, old_label: str, new_label: str) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        if old:
            ax.plot([p for p, _ in old], [v for _, v in old], "s--", color=GREY, markeredgecolor=INK,
                    label=literal(f"old: {old_label}", width=60))
        if new:
            ax.plot([p for p, _ in new], [v for _, v in new], "o-", color=BLUE, markeredgecolor=INK,
                    label=literal(f"new: {new_label}", width=60))
        log2_axis(ax, [p for p, _ in (*old, *new)])
        ax.set_xlabel("nodes (log scale)")
        ax.set_ylabel(label)
        ax.legend(loc="best")
        return to_svg(fig, frame.key)
