"""`ingest serving` of a per-request file (methods.md#a-service-judged-from-its-requests): each load point judged
by the same function `build` uses, then written as a row of the runs CSV per point, with its records kept beside
the CSV in a store `build` reads.

A row holds what a summary would (throughput = completions over the window in the project's unit, the p99s the
tail guard allows) and the point's own columns: its load (`offered` or `concurrency`), its `attainment` and
`goodput`. Above it: the load test's counts, where the file came from, and the records line naming the store.
Rows at one node count with different loads are points of that scale's load curve; at the same load, repeats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reportgen import wording
from reportgen.analysis.measured.load_point import Judgement, PointFacts, judge_point
from reportgen.analysis.page.prose.load_points import check_sentence, sampled_sentence
from reportgen.errors import UsageError
from reportgen.files import locked
from reportgen.ingest import records_store
from reportgen.ingest.request_records import RecordsFile
from reportgen.project import measurements, units
from reportgen.project.records import PROVENANCE, LoadTestCounts, RecordsLine, inert


@dataclass(frozen=True)
class Judged:
    """One load point of the file, 1-based in it, judged."""

    index: int
    facts: PointFacts


def judge_file(found: RecordsFile, judgement: Judgement | None, only: int | None = None) -> list[Judged]:
    """Every load point of the file (or the `only`-th), judged."""
    if only is not None and not 1 <= only <= len(found.points):
        raise UsageError(f"--point {only}: the file holds {len(found.points)} load point"
                         f"{'s' if len(found.points) != 1 else ''}")
    return [Judged(index, judge_point(point, judgement)) for index, point in enumerate(found.points, start=1)
            if only is None or index == only]


def throughput(facts: PointFacts, unit: str) -> float:
    """What the point served over its window, in the project's unit: completed requests, or their output tokens."""
    requests = facts.point.requests
    ok = requests.ok.astype(bool)
    if unit == "token":
        return float(np.nansum(requests.output_tokens[ok])) / requests.window_s
    if unit != "request":
        raise UsageError(f"per-request records count requests and tokens, and the project's load counts {unit}s: "
                         "state the project's load in request/s or token/s")
    return int(ok.sum()) / requests.window_s


def p99s(facts: PointFacts) -> dict[str, float | None]:
    """The p99 columns of the row, where the tail guard lets the point state them."""
    def p99(name: str) -> float | None:
        found = facts.quantiles.get(name)  # type: ignore[call-overload]  # a name of OBJECTIVES
        return found[-1].value if found else None

    return {"p99_latency": p99("e2e"), "ttft_p99": p99("ttft"), "tpot_p99": p99("tpot")}


def findings(facts: PointFacts) -> list[tuple[str, str]]:
    """(code, sentence) for each check that fired at the point, and for a sampled file."""
    found: list[tuple[str, str]] = [(check.code, check_sentence(check, facts)) for check in facts.fired]
    if facts.point.sampled_from is not None:
        found.append(("records-sampled", sampled_sentence(facts.point)))
    return found


def records_line(found: RecordsFile, judged: Judged, store: str) -> RecordsLine:
    point, facts = judged.facts.point, judged.facts
    return RecordsLine(
        point.tool, found.version or "-", found.file.name, found.sha256, judged.index, len(found.points),
        point.mode or "-", point.offered_per_s, point.concurrency, facts.achieved_send_per_s,
        point.requests.count, facts.failed, point.requests.window_s, point.dropped_warmup, point.tokens_source,
        point.send_times_known, point.e2e_reconstructed, point.sampled_from, point.constant_schedule, store,
        point.file_output_tokens, point.file_requests, point.file_mean_e2e_s, point.energy_j)


def append_load_points(csv_path: Path, found: RecordsFile, judged: list[Judged], nodes: int, unit: str, *,
                       replace: bool, repeat: bool, archive: bytes) -> list[dict[str, str]]:
    """A row per load point in the runs CSV (created when absent), the records in their store beside it (`archive`,
    records_store.archive of the file's points), under the CSV lock; returns each row's cells. Refuses a point
    whose scale and load the CSV already has, unless it is to replace that row or to be a repeat of it."""
    from reportgen.ingest.measure import csv_form, csv_lines, with_column, write_lines

    store = records_store.store_name(csv_path, found.sha256)
    wanted = [_values(entry.facts, unit) for entry in judged]
    with locked(csv_path.parent):
        lines, header = csv_lines(csv_path)
        if header is None:
            lines.append(f"nodes,throughput [{unit}/s]")
            header = len(lines) - 1
        elif csv_form(csv_path) not in (None, "throughput"):
            raise UsageError(f"{csv_path.name} records runs in {csv_form(csv_path)} form; a load test is a "
                             "throughput run: keep a service's runs in a CSV of their own")
        for values in wanted:
            for name, (value, column_unit) in values.items():
                if value is not None and name not in measurements.column_names(lines[header]):
                    lines, _ = with_column(lines, header, name, column_unit or "")
        for entry in judged:
            lines = _without_same_load(lines, header, nodes, entry.facts, replace=replace, repeat=repeat,
                                       csv_name=csv_path.name)
        columns = [(column, column_unit) for cell, _ in measurements.split_cells(lines[header])
                   if (read := measurements.header_column(cell)) is not None for column, column_unit in (read,)]
        written = []
        for entry, values in zip(judged, wanted, strict=True):
            cells = {name: _cell(name, column_unit, nodes, values) for name, column_unit in columns}
            written.append(cells)
            facts = entry.facts
            counts = LoadTestCounts(facts.point.offered_per_s, facts.achieved_send_per_s, facts.completed,
                                    facts.failed, facts.point.requests.count)
            ingested = (f"{PROVENANCE}ingested: {found.tool} at {wording.nodes(nodes)} from {inert(found.file.name)} "
                        f"(sha256 {found.sha256})")
            lines += [ingested, counts.line(), records_line(found, entry, store).line(),
                      ",".join(cells[name] for name, _ in columns)]
        records_store.write_store(csv_path.parent / store, archive)
        write_lines(csv_path, lines)
    return written


def _values(facts: PointFacts, unit: str) -> dict[str, tuple[float | None, str | None]]:
    """Each column's value in SI units and the unit a new header gives it."""
    point = facts.point
    measured = facts.attainment
    values: dict[str, tuple[float | None, str | None]] = {
        "throughput": (throughput(facts, unit), f"{unit}/s"),
        "offered": (point.offered_per_s if point.mode == "open" else None, "request/s"),
        "concurrency": (float(point.concurrency) if point.mode == "closed" and point.concurrency else None, None),
        "attainment": (measured.joint if measured else None, None),
        "goodput": (measured.goodput_per_s if measured else None, "request/s")}
    values.update({name: (value, "s") for name, value in p99s(facts).items()})
    return values


def _cell(name: str, column_unit: str | None, nodes: int, values: dict[str, tuple[float | None, str | None]]) -> str:
    from reportgen.ingest.measure import number_text

    if name == "nodes":
        return str(nodes)
    value, unit = values.get(name, (None, None))
    if value is None:
        return ""
    if name == "concurrency":
        return str(int(value))
    if unit is None:  # a share
        return number_text(value)
    if not column_unit:
        return f"{number_text(value)} {unit}"
    dimension = units.TIME if unit == "s" else units.RATE
    return number_text(value / units.parse_unit(column_unit, dimension))


def _without_same_load(lines: list[str], header: int, nodes: int, facts: PointFacts, *, replace: bool,
                       repeat: bool, csv_name: str) -> list[str]:
    """The lines less the rows at this scale and load when they are to be replaced; refused when the CSV has such a
    row and the point is neither to replace it nor a repeat of it. A row at the scale without a load (a summary's)
    counts as the same load: the two could not be told apart."""
    from reportgen.ingest.measure import COMMENT

    point = facts.point
    column = "offered" if point.mode == "open" else "concurrency"
    names = measurements.column_names(lines[header])
    same = []
    for row in measurements.rows_at(lines, header, nodes):
        cells = [cell for cell, _ in measurements.split_cells(lines[row])]
        loads = {name: cells[names.index(name)] if name in names and names.index(name) < len(cells) else ""
                 for name in ("offered", "concurrency")}
        written = loads[column]
        if not any(loads.values()) or (written and _same_load(written, point.load, column, lines[header])):
            same.append(row)
    if not same or repeat:
        return lines
    if not replace:
        load = f" and {point.load:g} {'request/s' if column == 'offered' else 'in flight'}" if point.load else ""
        raise UsageError(f"{csv_name} already has a run at {nodes} nodes{load} (line {same[0] + 1}); use --repeat "
                         "to add another load test of that point, or --replace to replace it")
    drop = set(same)
    for row in same:
        above = row - 1
        while above > header and lines[above].startswith(COMMENT):
            drop.add(above)
            above -= 1
    return [line for index, line in enumerate(lines) if index not in drop]


def _same_load(cell: str, load: float | None, column: str, header_line: str) -> bool:
    if load is None:
        return False
    try:
        if column == "concurrency":
            return float(cell) == load
        header_unit = dict(read for c, _ in measurements.split_cells(header_line)
                           if (read := measurements.header_column(c)) is not None).get(column)
        value = float(cell) * units.parse_unit(header_unit, units.RATE) if header_unit and \
            units.is_number_text(cell) else units.parse_quantity(cell, units.RATE)
    except (ValueError, TypeError):
        return False
    return math.isclose(value, load, rel_tol=1e-9)


def json_document(found: RecordsFile, judged: list[Judged], nodes: int, unit: str | None) -> dict[str, object]:
    """What `--format json` prints: each point with its figures, its findings and the definitions used."""
    def interval(ci: tuple[float, float] | None) -> list[float] | None:
        return list(ci) if ci is not None else None

    points = []
    for entry in judged:
        facts = entry.facts
        point, measured = facts.point, facts.attainment
        points.append({
            "point": entry.index, "mode": point.mode, "offered_per_s": point.offered_per_s,
            "concurrency": point.concurrency, "achieved_send_per_s": facts.achieved_send_per_s,
            "sent": point.requests.count, "completed": facts.completed, "failed": facts.failed,
            "window_s": point.requests.window_s, "dropped": {"warmup": point.dropped_warmup},
            "tokens_source": point.tokens_source, "valid": facts.valid, "verdict": facts.verdict,
            "throughput_per_s": throughput(facts, unit) if unit in ("request", "token") else None,
            "attainment": measured.joint if measured else None,
            "attainment_ci": interval(measured.joint_ci) if measured else None,
            "goodput_per_s": measured.goodput_per_s if measured else None,
            "goodput_ci": interval(measured.goodput_ci) if measured else None,
            "quantiles": {name: {f"p{round(q.p * 100):d}": {"value_s": q.value, "ci": interval(q.ci), "n": q.n,
                                                           "n_needed": q.needed} for q in found_quantiles}
                          for name, found_quantiles in facts.quantiles.items()},
            "findings": [{"code": code, "message": message} for code, message in findings(facts)]})
    return {"tool": found.tool, "tool_version": found.version, "file": str(found.file), "sha256": found.sha256,
            "nodes": nodes, "unit": unit, "points": points, "definitions": DEFINITIONS}


# The canonical quantities every tool's records are reduced to (methods.md#one-set-of-definitions)
DEFINITIONS = [
    {"quantity": "TTFT", "definition": "first content chunk − send time; the client's wait added at an open load"},
    {"quantity": "E2E", "definition": "last byte − send time; the client's wait added at an open load"},
    {"quantity": "TPOT", "definition": "(E2E − TTFT)/(n − 1) for n ≥ 2 output tokens; a request of one token has "
                                       "no decode and passes a TPOT objective"},
    {"quantity": "output tokens", "definition": "the server's usage count, else the tool's tokenizer, else chunks"},
    {"quantity": "good", "definition": "succeeded and met every objective; a failed request stays in the "
                                       "denominator"}]
