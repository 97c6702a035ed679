"""JSON as reportgen reads another tool's file (a vLLM result, a measured split): one reader for all of them, so that
each refuses the same hostile shapes with the same words.

Python's json module takes the last of two equal keys in one object (two runs' figures, silently one), reads NaN
and Infinity, which JSON does not allow, and integers of any length, which become an OverflowError wherever one is
later used as a float. Each is refused here, as a ValueError naming the key or the number.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from reportgen.json_types import JsonRead

# No float holds an integer of more digits than this (sys.float_info.max is about 1.8 × 10^308)
_FLOAT_DIGITS = len(str(int(sys.float_info.max)))


def loads(text: str | bytes) -> Any:
    """The JSON document of `text`; ValueError (or RecursionError, nested past Python's stack) for what is not one,
    or has a key twice in one object, a NaN or Infinity, or an integer past float range."""
    return json.loads(text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant,
                      parse_int=_within_float_range)


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> JsonRead:
    seen: JsonRead = {}
    for key, value in pairs:
        if key in seen:  # two runs' figures in one object: the last would win silently
            raise ValueError(f"the key {json.dumps(key)[:60]} appears twice in one object")
        seen[key] = value
    return seen


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _within_float_range(digits: str) -> int:
    if len(digits.lstrip("-")) > _FLOAT_DIGITS or abs(value := int(digits)) > sys.float_info.max:
        raise ValueError(f"the integer {digits[:20]}… ({len(digits.lstrip('-'))} digits) is past any float's range")
    return value


_BLANK = re.compile(rb"\s*")


def lines(data: bytes) -> Iterator[tuple[int, int]]:
    """Where each line of `data` starts and stops, without copying it (a file may be a gigabyte)."""
    start = 0
    while start < len(data):
        stop = data.find(b"\n", start)
        stop = len(data) if stop < 0 else stop
        yield start, stop
        start = stop + 1


def record_line(data: bytes, index: int) -> int | None:
    """The 1-based line of `data` that holds its index-th record of JSON Lines (a blank line holds none, as the
    decoders skip it); None past the last."""
    filled = (number for number, (start, stop) in enumerate(lines(data), start=1)
              if not _BLANK.fullmatch(data, start, stop))
    return next(itertools.islice(filled, index, None), None)
