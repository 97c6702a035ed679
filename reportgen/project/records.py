"""Provenance records: the `# reportgen` comments written above a measured row of a CSV, read back.

A row recorded by `measure` or `ingest` carries lines saying where it came from (files and their SHA-256, the
assumptions behind its energy) and, for profiler traces, each rank's times; the report shows them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Annotated

from reportgen.keys import Key

PROVENANCE = "# reportgen "  # comments reportgen writes above a row it recorded: where the row came from
# Characters a provenance line never carries as themselves: every one str.splitlines() breaks at (\n, \r, \v, \f,
# \x1c-\x1e, \x85, U+2028, U+2029), every other control, and format characters (bidi overrides, zero-width) that
# would reach a terminal or a report. Text from outside (a file name, a CodeCarbon run_id) is written escaped.
_UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def inert(line: str) -> str:
    """The line with each unsafe character written as its escape, so it stays one line and shows what it held."""
    return "".join(c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in _UNSAFE else c
                   for c in line)


_RANK_LINE = re.compile(r"^# reportgen rank (\d+): compute (\S+) s, communication (\S+) s, wait (\S+) s, "
                        r"idle (\S+) s, io (\S+) s$")


@dataclass(frozen=True)
class RankTimes:
    """One rank's share of an ingested run, in seconds per run."""

    rank: Annotated[int, Key("the rank")]
    compute: Annotated[float, Key("compute", name="compute_s")]
    communication: Annotated[float, Key("exposed transfer", name="communication_s")]
    wait: Annotated[float, Key("waiting for the slowest rank", name="wait_s")]
    idle: Annotated[float, Key("idle", name="idle_s")]
    io: Annotated[float, Key("memory-only time", name="io_s")]


@dataclass(frozen=True)
class RowSource:
    """The provenance comments above one row of a CSV, as reportgen wrote them."""

    lines: tuple[str, ...]

    @property
    def ranks(self) -> tuple[RankTimes, ...]:
        found = (_RANK_LINE.match(line) for line in self.lines)
        return tuple(RankTimes(int(m[1]), *(float(m[i]) for i in range(2, 7))) for m in found if m)

    @property
    def described(self) -> tuple[str, ...]:
        """The lines that say where the row came from (not the per-rank detail), without the comment mark."""
        return tuple(line.removeprefix(PROVENANCE) for line in self.lines if not _RANK_LINE.match(line))
