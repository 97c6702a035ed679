"""reportgen.stack: room on CPython's frame stack for deep, busy code (WeasyPrint's layout, matplotlib's drawing)."""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable

import pytest

from reportgen.stack import with_room


def _descend(depth: int) -> int:
    return 0 if depth == 0 else 1 + _descend(depth - 1)


def _oscillate(times: int, depth: int) -> int:
    """Recurse `depth` deep and back, `times` times: each descent crosses the edge of a 16 KiB frame chunk."""
    return sum(_descend(depth) for _ in range(times))


def test_it_is_the_call_it_wraps() -> None:
    assert with_room(divmod, 17, 5) == (3, 2)
    assert with_room(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]
    with pytest.raises(ZeroDivisionError):
        with_room(divmod, 1, 0)


@pytest.mark.skipif(sys.implementation.name != "cpython" or not sys.platform.startswith("linux"),
                    reason="CPython's frame chunks, counted by Linux's page faults")
def test_deep_recursion_stops_mapping_a_chunk_per_descent() -> None:
    """Without room every descent past a chunk's edge maps a fresh chunk and faults its pages in (a page or more
    each time); with room the descents stay within one chunk mapped once."""

    def faults(run: Callable[[], object]) -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        run()
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    with_room(_oscillate, 10, 300)  # the room's own chunk, once, before counting
    plain = faults(lambda: _oscillate(2000, 300))
    roomy = faults(lambda: with_room(_oscillate, 2000, 300))
    assert plain >= 2000, plain  # at least a page per descent: the thrashing this module is for
    assert roomy < plain / 10, (roomy, plain)
