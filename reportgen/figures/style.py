"""The one place figures get their look: palette, sizes, and deterministic SVG output.

Colours come from the Okabe–Ito palette (safe for colour-blind readers) and are paired with hatches and markers of
different lightness, so every figure still reads when printed in greyscale.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, get_args

from reportgen.analysis.common import log_spread, power_of_two
from reportgen.figures.jobs import FigureFrame

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, ScalarFormatter


INK = "#222222"
GRID = "#d9d9d9"
BLUE, ORANGE, SKY, GREEN, VERMILION, PURPLE = ("#0072b2", "#e69f00", "#56b4e9", "#009e73", "#d55e00", "#cc79a7")
GREY = "#8c8c8c"
YELLOW = "#f0e442"
WINE = "#882255"
# Causes and activities keep one colour and hatch across every figure.
# Single-density line hatches: denser ones multiply the paths a PDF renderer must draw, and matplotlib's dot
# hatch is a 19 kB path of tiny circles that WeasyPrint parses again for every bar (a fifth of a figure's time).
ACTIVITY = {
    "compute": (BLUE, ""),
    "io": (SKY, "-"),
    "communication": (ORANGE, "/"),
    "idle": (GREY, "x"),
    "serial": (PURPLE, "\\"),
    "wait": (VERMILION, "|"),
    "bubble": (GREEN, "+"),
    "startup": (YELLOW, "//"),
    "contention": (WINE, "\\\\"),  # Tol's wine: the ninth activity, after Okabe–Ito's eight
}

_RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 8.5,
    "axes.titlesize": 9,
    "axes.labelsize": 8.5,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "axes.grid": True,
    "grid.color": GRID,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "svg.fonttype": "none",  # text stays text: smaller files, searchable and selectable in the PDF
    "hatch.linewidth": 0.6,
    "lines.linewidth": 1.6,
}


@contextmanager
def figure(frame: FigureFrame) -> Iterator[Figure]:
    """A matplotlib Figure of the frame's size (no pyplot: it is slower to import and keeps global state) with
    reportgen's style.

    The hash salt is the figure's key, so that clip-path ids are stable run to run and differ between the
    figures inlined into one HTML page.
    """
    from matplotlib.figure import Figure

    with _style(frame.key):
        fig = Figure(figsize=(frame.width, frame.height), layout="constrained")
        yield fig


def _style(key: str) -> AbstractContextManager[None]:
    """reportgen's matplotlib settings over matplotlib's own defaults, with the figure's key as the hash salt of its
    SVG ids. The user's matplotlibrc (./matplotlibrc, $MATPLOTLIBRC, $MPLCONFIGDIR) is left out: text.usetex there
    would break every build, figure.dpi would change the report."""
    import matplotlib

    return matplotlib.rc_context({**_package_defaults(), **_RC,  # type: ignore[dict-item]
                                  "svg.hashsalt": f"reportgen-{key}"})


@cache
def _package_defaults() -> dict[str, Any]:
    """matplotlib's defaults as shipped (rcParamsDefault is read from the package's matplotlibrc alone), less the
    settings a style may not change (the backend and the like)."""
    import matplotlib

    return {key: value for key, value in matplotlib.rcParamsDefault.items() if key not in _NOT_STYLE}


# What matplotlib's styles leave alone (its STYLE_BLACKLIST, whose module 3.11 deprecates): process settings, not looks
_NOT_STYLE = frozenset({"backend", "backend_fallback", "date.epoch", "docstring.hardcopy", "figure.max_open_warning",
                        "figure.raise_window", "interactive", "savefig.directory", "timezone", "tk.window_focus",
                        "toolbar", "webagg.address", "webagg.open_in_browser", "webagg.port", "webagg.port_retries"})


def to_svg(fig: Figure, key: str) -> str:
    """The figure as inline SVG: no XML prologue, no date, no creator, ids prefixed by the figure's key; numbers on
    linear axes written in full."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    _full_numbers(fig)
    with _style(key):
        if clear_legends(fig):
            # laid out for the legends, and nothing moved since: the SVG's drawing need not solve the layout again
            # (two fifths of a figure's drawing)
            fig.set_layout_engine("none")
    buffer = io.StringIO()
    with _style(key):
        metadata = {"Date": None, "Creator": None, "Format": None, "Type": None}  # nothing that varies run to run
        FigureCanvasSVG(fig).print_svg(buffer, metadata=metadata)  # type: ignore[no-untyped-call]
    return _inline(buffer.getvalue(), key)


# Where a legend may go inside its axes, in the order tried; past them, below the axes
LegendPlace = Literal["upper left", "upper right", "lower right", "lower left", "center left", "center right",
                      "upper center", "lower center"]
LEGEND_PLACES: tuple[LegendPlace, ...] = get_args(LegendPlace)


def clear_legends(fig: Figure) -> bool:
    """No line, band or bar drawn across a legend: matplotlib's "best" counts only a line's vertices inside a place,
    and a goal line (two vertices, at the axes' ends) or a band crosses a legend that holds none. A legend something
    crosses is moved to the first place nothing does, else below its axes. A figure without a legend is not laid
    out here: its one layout is the SVG's. Whether the figure was laid out, as it now stands.

    The figure is laid out once, then each place is tried without laying it out again: a legend inside its axes
    takes no room of the layout, and its box follows from its place and the axes alone (measured: the same box as
    after a new layout, to the bit). Only a legend moved below its axes asks for a second layout, to make room for
    it. Drawing the figure at each place tried had made the speedup figure 40 % of all the drawing."""
    if not any(ax.get_legend() is not None for ax in fig.axes):
        return False
    fig.draw_without_rendering()
    below = False
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not _crossed(ax, legend):
            continue
        for place in LEGEND_PLACES:
            legend.set_loc(place)
            if not _crossed(ax, legend):
                break
        else:
            legend.set_loc("upper center")
            legend.set_bbox_to_anchor((0.5, -0.16), transform=ax.transAxes)
            below = True
    if below:
        fig.draw_without_rendering()
    return True


def _crossed(ax: Axes, legend: Any) -> bool:
    """Whether a line, a band or a bar of the axes passes through the legend's box."""
    box = legend.get_window_extent()
    for line in ax.lines:
        drawn = line.get_visible() and line.get_linestyle() not in ("None", "none", " ", "")
        if drawn and line.get_transform().transform_path(line.get_path()).intersects_bbox(box, filled=False):
            return True
    for collection in ax.collections:
        if collection.get_visible():
            transform = collection.get_transform()
            if any(transform.transform_path(path).intersects_bbox(box, filled=True)
                   for path in collection.get_paths()):
                return True
    return any(patch.get_visible() and patch.get_window_extent().overlaps(box) for patch in ax.patches)


def _full_numbers(fig: Figure) -> None:
    """Every linear axis still on matplotlib's default formatter gets one that writes ticks of 1,000 and more in
    full, 20,000 and 1,400,000, where the default writes 20000, or 1.4 under a "1e6" in the corner that a reader
    easily misses. Small numbers keep the default (0.00000188 is harder to read than 1.88 under "1e-6")."""
    from matplotlib.ticker import ScalarFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if type(axis.get_major_formatter()) is ScalarFormatter:
                axis.set_major_formatter(_full_numbers_formatter()())


@cache
def _full_numbers_formatter() -> type[ScalarFormatter]:
    """The formatter class of `_full_numbers` (defined on first use: matplotlib is imported only to draw)."""
    from matplotlib.ticker import ScalarFormatter

    class FullNumbers(ScalarFormatter):
        def set_locs(self, locs: Any) -> None:
            large = len(locs) > 0 and max(abs(float(loc)) for loc in locs) >= 1000
            self.set_useOffset(not large)
            self.set_scientific(not large)
            super().set_locs(locs)

        def __call__(self, value: float, position: int | None = None) -> str:
            text: str = super().__call__(value, position)
            return f"{round(value):,}" if value >= 1000 and text.isdigit() else text

    return FullNumbers


def thinned_labels(ax: Axes, points: list[tuple[float, float]], *, spacing: float = 12.0) -> list[int]:
    """The indices of the points that can carry a text label, in order of preference: each at least `spacing`
    points (1/72 in) on the page from every point already chosen, so that labels do not print over one another."""
    ax.autoscale_view()
    scale = 72 / ax.figure.dpi
    chosen: list[int] = []
    placed: list[tuple[float, float]] = []
    for index, point in enumerate(points):
        x, y = ax.transData.transform(point) * scale
        if all((x - u) ** 2 + (y - v) ** 2 >= spacing**2 for u, v in placed):
            chosen.append(index)
            placed.append((x, y))
    return chosen


# Units an axis may be drawn in (name, factor from the results' own unit), largest first: per unit of work an energy
# can be 10⁻⁷ kWh and a cost 10⁻⁶ USD, which matplotlib writes as "4" under a "1e−7" that a reader easily misses;
# a run of a benchmark takes seconds, not hours.
TIME_UNITS = (("h", 1 / 3600), ("min", 1 / 60), ("s", 1.0))
ENERGY_UNITS = (("kWh", 1.0), ("Wh", 1e3), ("mWh", 1e6), ("µWh", 1e9))
MASS_UNITS = (("kg", 1.0), ("g", 1e3), ("mg", 1e6), ("µg", 1e9))
WORK_UNITS = (("unit of work", 1.0), ("thousand units of work", 1e3), ("million units of work", 1e6),
              ("billion units of work", 1e9))


def unit_for(values: list[float], units: tuple[tuple[str, float], ...]) -> tuple[str, float]:
    """The first of `units` (name, factor) in which the largest of `values` is at least 1, else the last."""
    largest = max(values, default=0.0)
    return next(((name, factor) for name, factor in units if largest * factor >= 1), units[-1])


def readable(values: list[float], units: tuple[tuple[str, float], ...]) -> tuple[list[float], str]:
    """`values` in the unit `unit_for` chooses, and that unit's name."""
    name, factor = unit_for(values, units)
    return [value * factor for value in values], name


def wide(values: list[float], *, ratio: float = 100.0) -> bool:
    """Whether positive values span more than `ratio`: a linear axis would flatten the small ones to its floor."""
    positive = [value for value in values if value > 0]
    return len(positive) == len(values) > 1 and max(positive) / min(positive) > ratio


_SVG_NS, _XLINK_NS = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
_XLINK_HREF = f"{{{_XLINK_NS}}}href"
_REFERENCE = re.compile(r"url\(#([^)]+)\)")


def _inline(document: str, key: str) -> str:
    """matplotlib's SVG document made fit to inline in a page with other figures.

    - width and height go (the page scales the figure; the viewBox keeps its shape);
    - ids are prefixed with the figure's key, so that the figures of one page cannot collide;
    - groups that only carry an unreferenced id are unwrapped: they draw nothing, and a third of the elements a
      renderer would otherwise walk (measured: 4,881 elements → 1,697 for the example's 14 figures);
    - path data goes on one line (XML would otherwise escape each newline inside the attribute), and the
      indentation goes.
    """
    from xml.etree import ElementTree

    ElementTree.register_namespace("", _SVG_NS)
    ElementTree.register_namespace("xlink", _XLINK_NS)
    root = ElementTree.fromstring(document)
    referenced = {m.group(1) for el in root.iter() for v in el.attrib.values() for m in _REFERENCE.finditer(v)}
    referenced |= {el.attrib[_XLINK_HREF][1:] for el in root.iter() if el.attrib.get(_XLINK_HREF, "")[:1] == "#"}
    _unwrap_bare_groups(root, referenced)
    for name in ("width", "height"):
        root.attrib.pop(name, None)
    for element in root.iter():
        attributes = element.attrib
        if "id" in attributes:
            attributes["id"] = f"{key}-{attributes['id']}"
        if attributes.get(_XLINK_HREF, "")[:1] == "#":
            attributes[_XLINK_HREF] = f"#{key}-{attributes[_XLINK_HREF][1:]}"
        for name, value in attributes.items():
            if "url(#" in value:
                attributes[name] = _REFERENCE.sub(lambda m: f"url(#{key}-{m.group(1)})", value)
        if "d" in attributes:
            attributes["d"] = " ".join(attributes["d"].split())
    text = ElementTree.tostring(root, encoding="unicode")
    return text.replace("<svg ", f'<svg role="img" aria-labelledby="{key}-caption" class="figure-svg" ', 1)


def _unwrap_bare_groups(parent: Element, referenced: set[str]) -> None:
    """Depth first; the indentation whitespace between elements becomes one newline per element."""
    children = []
    for child in parent:
        _unwrap_bare_groups(child, referenced)
        bare = child.tag == f"{{{_SVG_NS}}}g" and set(child.attrib) <= {"id"} and child.get("id") not in referenced
        children.extend(list(child) if bare else [child])
    if parent.tag != f"{{{_SVG_NS}}}text":
        parent.text = parent.text if parent.text and parent.text.strip() else ("\n" if children else None)
        for child in children:
            child.tail = child.tail if child.tail and child.tail.strip() else "\n"
    parent[:] = children


def literal(text: str, *, width: int | None = None, lines: int = 2) -> str:
    """Text from the project file as matplotlib must be given it to draw it as written: "$" escaped (a pair would
    start mathtext). Given a width in characters, wrapped onto at most `lines` lines, shortened with "…" beyond:
    a legend wider than its axes would push them out of the figure (the full text is in the report's tables)."""
    if width is not None:
        text = "\n".join(textwrap.wrap(text, width, max_lines=lines, placeholder=" …"))
    return text.replace("$", r"\$")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_label(value: float, _position: float | None = None) -> str:
    """10², 10⁻³: plain text, so matplotlib need not parse mathtext (a third of its drawing time here)."""
    if value <= 0:
        return ""
    exponent = math.log10(value)
    if abs(exponent - round(exponent)) > 1e-9:
        return ""
    return "10" + str(round(exponent)).translate(_SUPERSCRIPT)


def log_axes(ax: Axes, *, x: bool = False, y: bool = False, base: int = 10) -> None:
    """Log scales labelled in plain text (powers of ten, or plain numbers for base 2)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for use, axis, setter in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if not use:
            continue
        setter("log", base=base)
        axis.set_major_formatter(FuncFormatter(power_label) if base == 10 else _plain_formatter())
        axis.set_minor_formatter(NullFormatter())


MAX_MINOR_TICKS = 64


def log2_axis(ax: Axes, values: Sequence[float]) -> None:
    """A log2 node axis labelled with the node counts themselves, as many as fit side by side; the others keep an
    unlabelled tick (past MAX_MINOR_TICKS values, only the unlabelled powers of two do: matplotlib lays out every
    tick, and 10,000 of them took a minute)."""
    from matplotlib.ticker import FixedLocator, NullFormatter

    ax.set_xscale("log", base=2)
    every: list[float] = sorted(set(values))
    ticks = every
    if len(ticks) > 12:  # the powers of two, or (a load axis may hold one or none) about ten spread evenly
        powers = [t for t in ticks if power_of_two(t)]
        ticks = powers if len(powers) >= 2 else log_spread(ticks, 10)
    # room from the axes' share of the figure (before the layout moves it a little), a label per ~5.4 pt digit
    room = ax.get_position().width * ax.figure.bbox.width / ax.figure.dpi * 72
    widest = max(len(f"{tick:,}") for tick in ticks) * 5.4 + 8
    ticks = log_spread(ticks, max(2, int(room // widest)))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(_plain_formatter())
    labelled = set(ticks)
    minor = every if len(every) <= MAX_MINOR_TICKS else [value for value in every if power_of_two(value)]
    ax.xaxis.set_minor_locator(FixedLocator([value for value in minor if value not in labelled]))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _plain_formatter() -> FuncFormatter:
    from matplotlib.ticker import FuncFormatter

    # Whole values with thousands separators; a fractional load level (1.53) as it is, never rounded to a neighbour's.
    return FuncFormatter(lambda value, _: f"{value:,.0f}" if float(value).is_integer() else f"{value:.3g}")


def node_categories(ax: Axes, count: int) -> None:
    """The x axis of bars drawn one per measured scale: labelled "nodes", its labels smaller beyond 10 bars and
    slanted beyond 16, so that neighbours such as "1,024" and "2,048" never touch."""
    ax.set_xlabel("nodes")
    if count > 10:
        ax.tick_params(axis="x", labelsize=7, labelrotation=45 if count > 16 else 0)


COLOUR_NAMES = {BLUE: "blue", SKY: "sky blue", ORANGE: "orange", GREY: "grey", PURPLE: "pink", GREEN: "green",
                VERMILION: "vermilion", INK: "black", YELLOW: "yellow", WINE: "wine"}
# (how captions name the drawn colours: a test holds them to it)
GOAL_DASHES = (0, (6, 2, 1, 2))  # the goal's limit on every figure: a black dash-dot line


def draw_goal_line(ax: Axes, value: float | None, label: str, *, vertical: bool = False) -> None:
    """The goal's limit across the axes (a black dash-dot line), labelled in the legend."""
    if value is None:
        return
    (ax.axvline if vertical else ax.axhline)(value, label=label, color=INK, linestyle=GOAL_DASHES, linewidth=1.1)


def gaps(values: Iterable[float | None]) -> list[float]:
    """Values to draw, an unknown one as a gap (NaN, as matplotlib draws None)."""
    return [math.nan if value is None else value for value in values]
# One layer of stacked bars: (activity, legend label, a value per bar)
Layer = tuple[str, str, Sequence[float]]
HATCH_NAMES = {"": "", "-": ", hatched —", "/": ", hatched /", "x": ", hatched ×", "\\": ", hatched \\",
               "|": ", hatched |", "+": ", hatched +", "//": ", hatched //", "\\\\": ", hatched \\\\"}


def colour_key(layers: list[tuple[str, str]]) -> str:
    """How a caption names the colours of stacked layers (activity, label): "compute blue, idle grey, hatched ×"."""
    return "; ".join(f"{label} {COLOUR_NAMES[ACTIVITY[activity][0]]}{HATCH_NAMES[ACTIVITY[activity][1]]}"
                     for activity, label in layers)


def present_layers(layers: list[Layer]) -> list[Layer]:
    """The layers with something to draw: a legend lists only the categories present."""
    return [layer for layer in layers if any(value > 0 for value in layer[2])]


def stacked_bars(ax: Axes, labels: list[str], layers: list[Layer], bottom: Sequence[float] | None = None) -> np.ndarray:
    """Bars stacked in order, each layer (activity, legend label, values) in its activity's colour and hatch;
    returns the tops, where a further layer would start. Layers that are zero everywhere are left out."""
    import numpy as np

    tops = np.zeros(len(labels)) if bottom is None else np.asarray(bottom, dtype=float).copy()
    for activity, label, values in present_layers(layers):
        color, hatch = ACTIVITY[activity]
        ax.bar(labels, values, bottom=tops, color=color, hatch=hatch, edgecolor=INK, linewidth=0.5, label=label)
        tops = tops + np.asarray(values, dtype=float)
    return tops
