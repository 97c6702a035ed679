"""Diagnosis figures: the roofline with the steps placed on it, the walls, and the memory stack."""

from __future__ import annotations

import math

import numpy as np

from reportgen.analysis import Analysis
from reportgen.analysis.measured.diagnosis import ADAM_STACK, RIDGE_BAND, DiagnosisResult, StepResult, Wall
from reportgen.figures.jobs import FigureFrame, FigureJob, present
from reportgen.figures.style import (
    BLUE,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    SKY,
    VERMILION,
    figure,
    gaps,
    literal,
    log_axes,
    to_svg,
)
from reportgen.project.model import Hardware, Project

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def jobs(analysis: Analysis, project: Project, full: Analysis | None = None) -> list[FigureJob]:
    diagnosis: DiagnosisResult | None = analysis.diagnosis
    if diagnosis is None:
        return []
    return present(roofline(diagnosis, project.hardware), walls(diagnosis), memory_stack(diagnosis))


def roofline(d: DiagnosisResult, hardware: Hardware | None) -> FigureJob | None:
    placed = tuple(s for s in d.steps if s.intensity is not None and s.attained_flops_per_s)
    if not hardware or not hardware.peak_compute or not hardware.memory_bandwidth or not placed \
            or d.ridge_intensity is None:
        return None
    others = ", the others blue" if len(placed) > 1 else ""
    low_band, high_band = RIDGE_BAND
    frame = FigureFrame("roofline", "Roofline of one node: each profiled step placed at its arithmetic intensity and "
                        "attained rate, under the memory roof (β·I) left of the ridge and the compute roof (π) right "
                        f"of it; the grey band, {low_band:g}–{high_band:g}·I*, is where both floors bind together. "
                        f"The dominant step (longest measured time) is drawn vermilion{others}.",
                        "Log-log roofline with the baseline steps as points and the ridge band shaded.")
    return FigureJob(frame, _draw_roofline, (placed, hardware.peak_compute, hardware.memory_bandwidth,
                                              d.ridge_intensity))


def _draw_roofline(frame: FigureFrame, placed: tuple[StepResult, ...], peak: float, bandwidth: float,
                   ridge: float) -> str:
    finite = [s.intensity for s in placed if s.intensity is not None and math.isfinite(s.intensity)]
    low = min([ridge / 100, *[i / 4 for i in finite]])
    high = max([ridge * 100, *[i * 4 for i in finite]])
    with figure(frame) as fig:
        ax = fig.subplots()
        x = np.array([low, ridge, high])  # the roof is two straight lines on log-log axes: its vertices suffice
        log_axes(ax, x=True, y=True)
        ax.plot(x, np.minimum(peak, bandwidth * x) / 1e12, color=INK, label="roof: min(π, β·I)")
        ax.axvline(ridge, color=GREY, linestyle=":", linewidth=1)
        # the ridge band (methods.md#1-diagnosis-which-resource-runs-out-first): a step in it is `balanced`
        ax.axvspan(RIDGE_BAND[0] * ridge, RIDGE_BAND[1] * ridge, color=GREY, alpha=0.25, linewidth=0)
        ax.annotate(f"ridge I* = {ridge:,.3g} FLOP/B", (ridge, peak / 1e12), textcoords="offset points",
                    xytext=(5, -12), fontsize=7, color=INK)
        for index, step in enumerate(placed):
            if step.intensity is None or step.attained_flops_per_s is None:
                continue  # never: a placed step has both (the None checks narrow the types)
            intensity = step.intensity if math.isfinite(step.intensity) else high / 1.5
            ax.plot(intensity, step.attained_flops_per_s / 1e12, MARKERS[index % len(MARKERS)],
                    color=(VERMILION if step.dominant else BLUE), markersize=7, markeredgecolor=INK,
                    label=f"{literal(step.name, width=40)} ({step.bound or 'unbound'}"
                          f"{', dominant' if step.dominant else ''})")
        ax.set_xlabel("arithmetic intensity I (FLOP per byte of memory traffic)")
        ax.set_ylabel("attained compute (TFLOP/s)")
        ax.legend(loc="lower right")
        return to_svg(fig, frame.key)


def walls(d: DiagnosisResult) -> FigureJob | None:
    shown = tuple(w for w in d.walls if w.fill is not None)
    if not shown:
        return None
    binding = [w.wall for w in shown if w.binds]
    free = "; green bars do not" if len(binding) < len(shown) else ""
    frame = FigureFrame("walls", "The walls as fill ratios, in the order they are checked (memory, data, serving, "
                        "time). Hatched vermilion bars bind" + (f": {', '.join(binding)}{free}." if binding
                                                                 else "; none binds (green bars)."),
                        "Horizontal bars of wall fill ratios against the capacity line at 1.", height=2.4)
    return FigureJob(frame, _draw_walls, (shown,))


def _draw_walls(frame: FigureFrame, shown: tuple[Wall, ...]) -> str:
    with figure(frame) as fig:
        ax = fig.subplots()
        names = [w.wall for w in shown]
        fills = gaps(w.fill for w in shown)
        colors = [VERMILION if w.binds else GREEN for w in shown]
        bars = ax.barh(names, fills, color=colors, edgecolor=INK, linewidth=0.6,
                       hatch=["/" if w.binds else "" for w in shown])
        ax.axvline(1.0, color=INK, linewidth=1.2, linestyle="--")
        ax.text(1.0, 1.02, " capacity (fill = 1)", transform=ax.get_xaxis_transform(), fontsize=7, va="bottom")
        for bar, fill in zip(bars, fills, strict=True):
            ax.annotate(f"{fill:.3g}×", (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        textcoords="offset points", xytext=(3, -3), fontsize=7)
        if max(fills) / max(min(fills), 1e-9) > 100:
            log_axes(ax, x=True)
        ax.invert_yaxis()
        ax.set_xlabel("fill = demand / capacity (a wall binds at 1 or more)")
        ax.grid(axis="y", visible=False)
        return to_svg(fig, frame.key)


def memory_stack(d: DiagnosisResult) -> FigureJob | None:
    if not d.memory_stack:
        return None
    parameters_bytes = d.memory_stack[0][1]
    per_parameter = d.bytes_per_parameter or 16.0
    parameters = parameters_bytes / per_parameter
    if per_parameter == 16.0:
        parts = [(f"{name} ({size:g} B)", parameters * size) for name, size in ADAM_STACK]
    else:
        parts = [(f"parameters × {per_parameter:g} B", parameters_bytes)]
    parts += [(name, size) for name, size in d.memory_stack[1:]]
    where = "one device" if d.devices_per_node > 1 else "one node"
    shard = (f" A perfect shard needs {d.min_devices} device{'s' if d.min_devices != 1 else ''}"
             f"{', within one node' if d.min_devices <= d.devices_per_node else ''}."
             if d.min_devices is not None and d.min_devices > 1 else "")
    # The caption quotes the input as given: the Adam stack only for 16 bytes per parameter.
    stack = (" With 16 bytes per parameter, mixed-precision Adam's: 2 (bf16 weight) + 2 (bf16 gradient) + 4 (fp32 "
             "master) + 8 (fp32 Adam m and v)." if per_parameter == 16.0 else
             f" {per_parameter:g} bytes per parameter, as the project states.")
    frame = FigureFrame("memory-stack", f"What one replica must hold, against the memory of {where} (dashed "
                        "vermilion line): under plain data parallelism every device holds a whole replica."
                        f"{stack}{shard}",
                        f"Stacked bar of memory demand with the memory line of {where}.", height=2.6)
    return FigureJob(frame, _draw_memory_stack, (tuple(parts), d.device_memory, d.devices_per_node))


def _draw_memory_stack(frame: FigureFrame, parts: tuple[tuple[str, float], ...], capacity: float | None,
                       devices_per_node: int) -> str:
    colors = [BLUE, SKY, GREEN, ORANGE, PURPLE, GREY]
    hatches = ["", "/", "\\", "x", "-", "|"]  # line hatches only: see style.ACTIVITY
    with figure(frame) as fig:
        ax = fig.subplots()
        left = 0.0
        for index, (name, size) in enumerate(parts):
            ax.barh(["one replica"], [size / 1e9], left=left / 1e9, color=colors[index % 6],
                    hatch=hatches[index % 6], edgecolor=INK, linewidth=0.6, label=f"{name}: {size / 1e9:,.4g} GB")
            left += size
        if capacity:
            where = f"one device ({devices_per_node} per node)" if devices_per_node > 1 else "one node"
            ax.axvline(capacity / 1e9, color=VERMILION, linewidth=1.6, linestyle="--",
                       label=f"memory of {where}: {capacity / 1e9:,.4g} GB")
        ax.set_xlabel("memory (GB)")
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside lower center", ncol=2)
        return to_svg(fig, frame.key)
