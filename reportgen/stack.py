"""Room on CPython's frame stack for deep, busy code: WeasyPrint's layout, matplotlib's drawing.

CPython (3.11 to 3.13 at least) keeps the frames of Python calls in chunks of 16 KiB that it maps when a call needs
one more and unmaps as soon as the call that began it returns. Code that recurses up and down across a chunk's edge
(a layout walking nested boxes, a figure drawing nested artists) maps and unmaps a chunk, and faults its pages in
afresh, each time it crosses: measured 14,000 times in one layout of the example report, 0.10 to 0.15 s of system
time out of 1.3 s, and a third of the time of a bare recursion that crosses one edge per descent.

`with_room` calls through a frame whose code declares an evaluation stack of `ROOM_SLOTS` slots, which CPython never
fills but must allocate: the frame gets a chunk of its own, sized for it to the next power of two, and everything
called from it runs in the room left above it, without mapping another chunk until it recurses some 4,000 frames
deeper. Elsewhere (another Python implementation, or one whose code objects refuse the change) it is a plain call.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping
from typing import ParamSpec, TypeVar, cast

Parameters = ParamSpec("Parameters")
Result = TypeVar("Result")

# Slots of a pointer each: the frame then needs 8 × (32,768 + 1,000 of CPython's margin) bytes, so its chunk is
# 512 KiB, of which about 250 KiB are left above the frame for the calls made from it.
ROOM_SLOTS = 1 << 15


def _call(function: Callable[..., object], arguments: tuple[object, ...], keywords: Mapping[str, object]) -> object:
    return function(*arguments, **keywords)


def _roomy(plain: Callable[..., object]) -> Callable[..., object]:
    """`plain` with its code declaring ROOM_SLOTS of evaluation stack (CPython only; else `plain` itself)."""
    if sys.implementation.name != "cpython" or not isinstance(plain, types.FunctionType):
        return plain
    try:
        code = plain.__code__.replace(co_stacksize=ROOM_SLOTS)
    except (AttributeError, TypeError, ValueError):
        return plain
    return types.FunctionType(code, plain.__globals__, plain.__name__)


_ROOMY_CALL = _roomy(_call)


def with_room(function: Callable[Parameters, Result], *arguments: Parameters.args,
              **keywords: Parameters.kwargs) -> Result:
    """`function(*arguments, **keywords)`, run with room on the frame stack (see the module's docstring)."""
    return cast(Result, _ROOMY_CALL(function, arguments, keywords))
