"""Where each measured number came from: typed in, `reportgen measure`, or ingested files (names and hashes), and
the per-rank split of the largest scale read from profiler traces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.keys import Key
from reportgen.project.records import RankTimes, RowSource


@dataclass(frozen=True)
class SourceRow:
    nodes: Annotated[float, Key("node count, or load level with scaling.axis: load")]
    # typed in | reportgen measure | profiler traces | …, what the row's numbers came from
    origin: Annotated[str, Key("typed in, measured, or ingested (and from what)")]
    # the provenance lines: files, hashes, assumptions
    details: Annotated[tuple[str, ...], Key("the provenance comments of the row", item="a comment")]
    energy_origin: Annotated[str | None, Key("where a measured energy came from")]

    @property
    def shown_details(self) -> tuple[str, ...]:
        """The lines a table shows (the CSV keeps them all)."""
        return self.details[:SHOWN_DETAILS]

    @property
    def more_details(self) -> int:
        return max(len(self.details) - SHOWN_DETAILS, 0)


SHOWN_DETAILS = 3


@dataclass(frozen=True)
class ProvenanceResult:
    rows: Annotated[tuple[SourceRow, ...], Key("per measured scale")]
    ranks_nodes: Annotated[float | None, Key("the largest scale with a per-rank split from traces")]
    ranks: Annotated[tuple[RankTimes, ...], Key("each rank's split at that scale, seconds per run")]
    # scales whose wait for the slowest rank was measured across ranks
    wait_measured_at: Annotated[frozenset[float], Key("scales whose wait for the slowest rank was measured",
                                                      name="wait_measured_nodes",
                                                      item="node count, or load level with scaling.axis: load")]

    def wait_measured(self, nodes: float | None) -> bool:
        return nodes is not None and nodes in self.wait_measured_at

    @property
    def all_typed(self) -> bool:
        """Every measured number was typed into the project: no tool recorded any."""
        return all(row.origin == "typed in" for row in self.rows)


def trace_provenance(scaling: ScalingResult | None, sources: Mapping[float, RowSource]) -> ProvenanceResult | None:
    if scaling is None:
        return None
    rows = []
    for row in scaling.rows:
        source = sources.get(row.nodes)
        described = source.described if source else ()
        rows.append(SourceRow(row.nodes, _origin(described), described,
                              _energy_origin(described) if row.measured_energy_j is not None else None))
    with_ranks = [(nodes, source.ranks) for nodes, source in sorted(sources.items()) if source.ranks]
    measured = frozenset(nodes for nodes, source in sources.items()
                         if any(line.startswith("ingest trace:") and "measured across ranks" in line
                                for line in source.described))
    largest = with_ranks[-1] if with_ranks else (None, ())
    return ProvenanceResult(tuple(rows), largest[0], largest[1], measured)


def _origin(described: tuple[str, ...]) -> str:
    if any(line.startswith("ingest trace:") for line in described):
        files = sum(1 for line in described if line.startswith("trace:"))
        return f"profiler traces ({files} file{'s' if files != 1 else ''})"
    if any(line.startswith("measure:") for line in described):
        return "reportgen measure"
    if any(line.startswith("records:") for line in described):
        return "a load test's requests (ingest serving)"
    if any(line.startswith("ingested:") for line in described):
        return "a load test's summary (ingest serving)"
    return "typed in"


def _energy_origin(described: tuple[str, ...]) -> str:
    if any(line.startswith("ingest codecarbon:") for line in described):
        return "CodeCarbon's emissions.csv"
    if any(line.startswith("measure:") for line in described):
        return "CodeCarbon during reportgen measure"
    return "typed in"
