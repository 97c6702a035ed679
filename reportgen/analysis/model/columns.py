"""Layouts as columns (methods.md#the-enumeration): one integer array per knob, one element per layout, and a scalar
formula evaluated over them once per distinct row of the columns it reads (10⁵ layouts share a few hundred
combinations of the parameters any one term reads)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layouts:
    """Candidate layouts as parallel integer arrays, one element per layout."""

    tensor: np.ndarray
    pipeline: np.ndarray
    data: np.ndarray
    virtual: np.ndarray
    micro_batch: np.ndarray
    micro_batches: np.ndarray
    zero: np.ndarray
    recompute: np.ndarray  # POLICY_CODE
    sequence_parallel: np.ndarray  # 0 or 1
    context: np.ndarray  # cp: context-parallel degree
    expert: np.ndarray  # e: expert-parallel degree
    left_out: int = 0  # layouts past the cap, counted but not evaluated

    def __len__(self) -> int:
        return len(self.tensor)

    @classmethod
    def of(cls, columns: Sequence[np.ndarray], left_out: int = 0) -> Layouts:
        """From one array per field, in LAYOUT_FIELDS' order."""
        t, p, d, v, b, m, z, r, sp, cp, e = columns
        return cls(t, p, d, v, b, m, z, r, sp, cp, e, left_out)

    @classmethod
    def one(cls, *values: int) -> Layouts:
        """A single layout, from its values in LAYOUT_FIELDS' order."""
        return cls.of([np.array([value], dtype=np.int64) for value in values])

    def subset(self, index: np.ndarray) -> Layouts:
        return Layouts.of([getattr(self, name)[index] for name in LAYOUT_FIELDS])

    def row(self, index: int) -> tuple[int, ...]:
        return tuple(int(getattr(self, name)[index]) for name in LAYOUT_FIELDS)


LAYOUT_FIELDS = ("tensor", "pipeline", "data", "virtual", "micro_batch", "micro_batches", "zero", "recompute",
                 "sequence_parallel", "context", "expert")


def each_distinct(term: Callable[..., float], *columns: np.ndarray) -> np.ndarray:
    """`term` of every layout, from the columns it reads: evaluated once per distinct row of them. The columns are
    folded in one at a time into an integer index of the combinations met so far, renumbered after each so that it
    never overflows (numpy's unique over rows of several columns takes a second for 100,000 rows; over integers,
    milliseconds)."""
    if not len(columns[0]):  # no layout: nothing to evaluate (min and max of an empty column would raise)
        return np.zeros(0, dtype=float)
    index = np.zeros(len(columns[0]), dtype=np.int64)  # the row's combination of the columns so far
    rows: list[tuple[object, ...]] = [()]  # each combination's values
    for column in map(np.asarray, columns):
        if column.dtype.kind in "bui" and column.min() >= 0 and column.max() < 4096:  # counts, flags: their own index
            values, position = np.arange(int(column.max()) + 1), column.astype(np.int64)
        else:
            values, position = np.unique(column, return_inverse=True)
        combined, index = np.unique(index * len(values) + position.reshape(-1), return_inverse=True)
        rows = [(*rows[code // len(values)], values[code % len(values)].item()) for code in combined.tolist()]
    return np.asarray([term(*row) for row in rows], dtype=float)[index.reshape(-1)]
