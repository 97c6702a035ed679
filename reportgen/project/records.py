"""Provenance records: the `# reportgen` comments written above a measured row of a CSV, read back.

A row recorded by `measure` or `ingest` carries lines saying where it came from (files and their SHA-256, the
assumptions behind its energy) and, for profiler traces, each rank's times; the report shows them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote, unquote

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


_LOAD_TEST = "load test:"
_MACHINES = re.compile(r"× (\d+) machines")
_COUNT = re.compile(r"(requested|achieved|completed|failed|sent)=(\S+)")


@dataclass(frozen=True)
class LoadTestCounts:
    """What a load-test file says of the requests it sent (methods.md#placeholders): the rate asked for and the rate
    reached, per second, and how many requests completed, failed and were sent; None where the file does not say."""

    requested_per_s: float | None
    achieved_per_s: float | None
    completed: int | None
    failed: int | None
    sent: int | None

    def line(self) -> str:
        """The provenance comment that keeps the counts beside the row, read back by `RowSource.load_test`."""
        def shown(value: float | None) -> str:
            return "-" if value is None else f"{value:.12g}"

        return (f"{PROVENANCE}{_LOAD_TEST} requested={shown(self.requested_per_s)} "
                f"achieved={shown(self.achieved_per_s)} completed={shown(self.completed)} "
                f"failed={shown(self.failed)} sent={shown(self.sent)}")

    @classmethod
    def parsed(cls, line: str) -> LoadTestCounts | None:
        if not line.startswith(PROVENANCE + _LOAD_TEST):
            return None
        found: dict[str, float | None] = {}
        for key, text in _COUNT.findall(line):
            try:
                value = None if text == "-" else float(text)
            except ValueError:
                return None  # a hand-edited line that says nothing readable is no count
            if value is not None and not (0 <= value < float("inf")):
                return None
            found[key] = value

        def count(key: str) -> int | None:
            value = found.get(key)
            return None if value is None or value != int(value) else int(value)

        return cls(found.get("requested"), found.get("achieved"), count("completed"), count("failed"), count("sent"))

    @property
    def failed_requests(self) -> bool:
        """Requests failed, or fewer completed than were sent."""
        return bool(self.failed) or (self.sent is not None and self.completed is not None and
                                     self.completed < self.sent)

    @property
    def rate_not_reached(self) -> bool:
        """The rate reached is below 0.9 × the rate asked for (methods.md#placeholders)."""
        return (self.requested_per_s is not None and self.achieved_per_s is not None and
                self.achieved_per_s < RATE_REACHED * self.requested_per_s)


    def problems(self) -> tuple[tuple[str, str], ...]:
        """(code, what is wrong) for each problem the counts show; the same words for `ingest serving` and `build`."""
        out = []
        if self.failed_requests:
            sent = self.sent if self.sent is not None else (self.completed or 0) + (self.failed or 0)
            failed = self.failed if self.failed is not None else sent - (self.completed or 0)
            completed = f", {self.completed:,} completed" if self.completed is not None else ""
            out.append(("failed-requests", f"{failed:,} of {sent:,} requests failed{completed}: the capacity and "
                        "latencies measured are those of the requests that succeeded, under a load the service did "
                        "not carry; find why they failed, then measure again"))
        if self.rate_not_reached and self.requested_per_s and self.achieved_per_s is not None:
            out.append(("rate-not-reached", f"the load test asked for {self.requested_per_s:.4g} requests/s and "
                        f"reached {self.achieved_per_s:.4g} ({self.achieved_per_s / self.requested_per_s:.0%}): the "
                        "service did not take the load asked of it, so its latencies are not those at that load"))
        return tuple(out)


RATE_REACHED = 0.9  # a load test whose achieved rate is below this share of the requested one did not offer its load

_RECORDS = "records:"
_FIELD = re.compile(r"(\w+)=(\S*)")


@dataclass(frozen=True)
class RecordsLine:
    """Where a load point's per-request records are kept (methods.md#a-service-judged-from-its-requests): the
    provenance line `ingest serving` writes above the point's row, naming the tool's file, the point in it, how it
    was sent, and the store beside the CSV that holds its requests, which `build` reads instead of the tool's
    file. Values are percent-encoded, so a file name with spaces stays one field."""

    tool: str
    version: str
    file: str
    sha256: str
    point: int  # 1-based, of `points`
    points: int
    mode: str  # open, closed, or "-" (unbounded: not a point of the load curve)
    offered_per_s: float | None
    concurrency: int | None
    achieved_per_s: float | None
    sent: int
    failed: int
    window_s: float
    dropped_warmup: int
    tokens: str  # where the output-token counts came from: server, client, chunks, mixed, unknown
    sends_known: bool  # the file gives each request's send time
    e2e_reconstructed: bool
    sampled_from: int | None
    constant_schedule: bool
    store: str  # relative to the CSV's folder
    file_output_tokens: int | None = None  # the output tokens the file says it counted, held against the records
    file_requests: int | None = None  # the requests the file's own summary counts
    file_mean_e2e_s: float | None = None  # the successful requests' mean E2E, as the file's summary gives it
    energy_j: float | None = None  # the energy the tool measured over the window

    def line(self) -> str:
        def shown(value: object) -> str:
            if value is None:
                return "-"
            if isinstance(value, bool):
                return "yes" if value else "no"
            if isinstance(value, float):
                return f"{value:.12g}"
            return quote(str(value), safe="/:.-_+")

        fields = {"tool": self.tool, "version": self.version, "file": self.file, "sha256": self.sha256,
                  "point": f"{self.point}/{self.points}", "mode": self.mode, "offered": self.offered_per_s,
                  "concurrency": self.concurrency, "achieved": self.achieved_per_s, "sent": self.sent,
                  "failed": self.failed, "window_s": self.window_s, "dropped": f"warmup:{self.dropped_warmup}",
                  "tokens": self.tokens, "sends": "known" if self.sends_known else "unknown",
                  "e2e": "reconstructed" if self.e2e_reconstructed else "measured", "sampled_from": self.sampled_from,
                  "schedule": "constant" if self.constant_schedule else "-", "store": self.store,
                  "file_tokens": self.file_output_tokens, "file_requests": self.file_requests,
                  "file_e2e_s": self.file_mean_e2e_s, "energy_j": self.energy_j}
        return PROVENANCE + _RECORDS + " " + " ".join(f"{key}={shown(value)}" for key, value in fields.items())

    @classmethod
    def parsed(cls, line: str) -> RecordsLine | None:
        """The line read back; None for any other line, or one edited past reading."""
        if not line.startswith(PROVENANCE + _RECORDS):
            return None
        found = {key: unquote(value) for key, value in _FIELD.findall(line)}
        try:
            point, points = (int(part) for part in found["point"].split("/"))
            return cls(
                found["tool"], found["version"], found["file"], found["sha256"], point, points, found["mode"],
                _real(found["offered"]), _whole(found["concurrency"]),
                _real(found["achieved"]), int(found["sent"]), int(found["failed"]),
                float(found["window_s"]), int(found["dropped"].removeprefix("warmup:")), found["tokens"],
                found["sends"] == "known", found["e2e"] == "reconstructed", _whole(found["sampled_from"]),
                found["schedule"] == "constant", found["store"], _whole(found.get("file_tokens", "-")),
                _whole(found.get("file_requests", "-")), _real(found.get("file_e2e_s", "-")),
                _real(found.get("energy_j", "-")))
        except (KeyError, ValueError):
            return None


def _real(text: str) -> float | None:
    return None if text == "-" else float(text)


def _whole(text: str) -> int | None:
    return None if text == "-" else int(text)


@dataclass(frozen=True)
class RowSource:
    """The provenance comments above one row of a CSV, as reportgen wrote them."""

    lines: tuple[str, ...]

    @property
    def ranks(self) -> tuple[RankTimes, ...]:
        found = (_RANK_LINE.match(line) for line in self.lines)
        return tuple(RankTimes(int(m[1]), *(float(m[i]) for i in range(2, 7))) for m in found if m)

    @property
    def machines(self) -> int | None:
        """The machines a run's energy stands for, as `measure` wrote it: "× K machines", or this one machine."""
        for line in self.lines:
            if (found := _MACHINES.search(line)) is not None:
                return int(found[1])
            if "energy is CodeCarbon's estimate for this machine" in line:
                return 1
        return None

    def with_load_tests_of(self, other: RowSource) -> RowSource:
        """These lines and the load-test counts of another repeat of the scale (each repeat's failures count)."""
        return RowSource((*self.lines, *(line for line in other.lines if LoadTestCounts.parsed(line) is not None)))

    @property
    def load_tests(self) -> tuple[LoadTestCounts, ...]:
        """The load tests' request counts kept above the row (one per repeat that has them)."""
        return tuple(counts for line in self.lines if (counts := LoadTestCounts.parsed(line)) is not None)

    @property
    def records(self) -> RecordsLine | None:
        """Where the row's per-request records are kept, when `ingest serving` read them."""
        return next((found for line in self.lines if (found := RecordsLine.parsed(line)) is not None), None)

    @property
    def described(self) -> tuple[str, ...]:
        """The lines that say where the row came from (not the per-rank detail), without the comment mark."""
        return tuple(line.removeprefix(PROVENANCE) for line in self.lines if not _RANK_LINE.match(line))


# a records store's arrays, uncompressed (and so its file): 10⁷ requests at 37 bytes each is 370 MB
MAX_STORE_BYTES = 1 << 30


def stores_named(csv_text: str) -> list[str]:
    """The records stores a runs CSV's records lines name (relative to its folder), each once, in order."""
    found = (RecordsLine.parsed(line) for line in csv_text.splitlines() if line.startswith(PROVENANCE + _RECORDS))
    return list(dict.fromkeys(line.store for line in found if line is not None))
