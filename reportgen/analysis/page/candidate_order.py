"""The order of the ways considered (docs/methods.md#the-order): by rank, then by each rank's ties; the next action is
the first feasible candidate.

1. the design cannot start (ties: the blocking codes' order); 2. a measurement the verdict rests on cannot be right
(the more severe, then the table's order); 3. a way that meets the goal without changing the world (cheapest first,
each in its own regime, without prices the fewer node-hours; a modelled way before a measured one only when cheaper
by more than the model's margin; then fewer nodes, the regime order, the kind order); 4. a measurement or input that
decides the verdict (an input before a run, then the drop in the chance of a wrong verdict per node-hour, then fewer
node-hours); 5. the smallest feasible lever (|log ratio|, then measured, fitted, model); 6. out of reach; 7. model,
noise and advice (errors, warnings, notes, then the table's order).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from reportgen.analysis.findings import SEVERITIES
from reportgen.analysis.page.page_one_facts import KIND_ORDER, REGIME_ORDER, Candidate

SOURCE_ORDER = ("measured", "fitted", "model")


def ordered(candidates: Sequence[Candidate], *, margin: float) -> list[Candidate]:
    """Every candidate sorted by rank, then its rank's ties; `margin` is the model's stated resolution (a modelled
    way goes before a measured one only when cheaper by more than it)."""
    return sorted(candidates, key=lambda c: (c.rank or 8, *_ties(c, margin)))


def _severity(candidate: Candidate) -> int:
    return SEVERITIES.index(candidate.severity) if candidate.severity else len(SEVERITIES)


def _ties(c: Candidate, margin: float) -> tuple[float, ...]:
    if c.rank in (1, 2, 7):
        return (_severity(c), c.table_index)
    if c.rank == 3:
        return (*_cheapest(c, margin), c.nodes or 0.0, REGIME_ORDER.index(c.regime),
                KIND_ORDER.index(c.kind) if c.kind in KIND_ORDER else len(KIND_ORDER))
    if c.rank == 4:
        is_run = c.nodes is not None
        drop = (c.p_wrong_before or 0.0) - (c.p_wrong_after or 0.0)
        per_hour = drop / c.node_hours if c.node_hours else 0.0
        return (float(is_run), -per_hour, c.node_hours or 0.0, c.table_index)
    if c.rank == 5:
        source = SOURCE_ORDER.index(c.source) if c.source in SOURCE_ORDER else len(SOURCE_ORDER)
        return (c.change if c.change is not None else math.inf, source, c.table_index)
    return (c.table_index,)


def _cheapest(c: Candidate, margin: float) -> tuple[float, float]:
    """Money per run in the candidate's own regime (without prices, node-hours per run), a modelled way's raised by
    the margin: it goes first only when cheaper by more than the margin."""
    handicap = 1.0 / (1.0 - margin) if c.effect == "meets-modelled" and 0 <= margin < 1 else 1.0
    if c.cost is not None:
        return (0.0, c.cost * handicap)
    return (1.0, (c.node_hours or math.inf) * handicap)


def first_feasible(candidates: Sequence[Candidate]) -> int | None:
    """The index of the next action: the first feasible candidate."""
    return next((index for index, c in enumerate(candidates) if c.feasible), None)
