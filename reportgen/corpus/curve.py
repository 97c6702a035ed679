"""One published scaling curve of the calibration corpus, read and checked (docs/methods.md#the-calibration-corpus).

A curve file is read like a project file: every field by its spec, every problem reported at once with its
file:line:column and field, and a curve of a source kept out of the corpus (one that tests reportgen elsewhere)
refused as `corpus-excluded`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Literal

import yaml
from yaml.nodes import MappingNode, Node

from reportgen.errors import InputError, Problem
from reportgen.project.spec import (
    INVALID,
    Count,
    Flag,
    Items,
    Number,
    OneOf,
    Positive,
    Reader,
    Section,
    Spec,
    Text,
    describe_node,
    field,
    read_struct,
)
from reportgen.project.yaml_source import compose, read_text

MAX_CURVE_BYTES = 256 * 1024  # one curve is numbers and citations; the whole corpus stays under 2 MB
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
Kind = Literal["data-parallel-training", "layout-training", "data-processing", "service", "hpc"]
KINDS: tuple[Kind, ...] = ("data-parallel-training", "layout-training", "data-processing", "service", "hpc")
Data = dict[str, object]  # a YAML mapping as plain data: project fields, overrides, reasons
ValueKind = Literal["time", "throughput"]
Read = Literal["table", "log", "timer", "figure"]
BatchPolicy = Literal["fixed", "grows"]
TIME_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
MAX_READING_ERROR = 0.05  # a digitised figure read less precisely than this does not qualify

# Sources that test reportgen elsewhere, so never calibrate it (each matched in the curve's id, source, paths,
# title, locator and workload name, case-insensitively)
_EXCLUDED_PATTERNS = (
    ("BLOOM", r"\bbloom"),
    ("Llama 3 and Llama 3.x", r"llama[ _-]?3"),
    ("mosaicml/llm-foundry", r"llm-foundry|mosaicml"),
    ("NeMo performance summaries", r"performance[ _-]?summar"),
    ("torchtitan", r"torchtitan"),
    ("MegaScale", r"megascale"),
    ("MT-NLG (Megatron-Turing)", r"mt-nlg|megatron-turing"),
    ("PaLM", r"\bpalm\b"),
    ("Korthikanti et al. 2022", r"2205\.05198|korthikanti|calculon"),
    ("Narayanan et al. 2021", r"2104\.04473|narayanan|model_table\.png"),
)
EXCLUDED = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _EXCLUDED_PATTERNS)


class RawMapping(Spec):
    """A mapping kept as plain data: the project fields a curve's evaluation projects are given, checked when they
    are built."""

    def read(self, node: Node, path: str, reader: Reader) -> Data:
        if not isinstance(node, MappingNode):
            failed: Data = reader.error(node, path, f"expected a mapping, got {describe_node(node)}")
            return failed
        data: object = yaml.SafeLoader("").construct_document(node)
        return {str(key): value for key, value in data.items()} if isinstance(data, dict) else {}

    def kind(self) -> str:
        return "a mapping"


@dataclass(frozen=True)
class Paper:
    title: str = field(Text("The paper's title"), required=True)
    authors: str = field(Text("Its authors"), required=True)
    year: int = field(Count("Year of publication"), required=True)
    locator: str = field(Text("The table or figure read, e.g. Table 3"), required=True)
    doi: str | None = field(Text("DOI"))
    arxiv: str | None = field(Text("arXiv identifier"))
    url: str | None = field(Text("Address"))

    def check(self) -> Iterator[tuple[str, str]]:
        if self.doi is None and self.arxiv is None and self.url is None:
            yield "", "a paper needs a doi, an arxiv identifier or a url"


@dataclass(frozen=True)
class Source:
    licence: str = field(Text("The source's licence (SPDX id), or none-stated"), required=True)
    read: Read = field(OneOf("How the numbers were read", ("table", "log", "timer", "figure")), required=True)
    repo: str | None = field(Text("GitHub owner/name"))
    commit: str | None = field(Text("The full commit read"))
    paths: tuple[str, ...] | None = field(Items(Text(), "The files read"))
    locator: str | None = field(Text("The table, column or timer read"))
    reader: str | None = field(Text("The reader a log was read with"))
    paper: Paper | None = field(Section(Paper, "A paper, instead of a repository"))

    def check(self) -> Iterator[tuple[str, str]]:
        if self.paper is None and (self.repo is None or self.commit is None or not self.paths):
            yield "", "a source is a repository (repo, commit and paths) or a paper"
        if self.commit is not None and not re.fullmatch(r"[0-9a-f]{40}", self.commit):
            yield "commit", "expected the full 40-hex commit read"

    @property
    def name(self) -> str:
        """The source as one name: its repository, or its paper's title."""
        return self.repo or (self.paper.title if self.paper else "")

    @property
    def texts(self) -> tuple[str, ...]:
        """Every text an exclusion is matched in."""
        paper = (self.paper.title, self.paper.authors, self.paper.locator) if self.paper else ()
        return (self.repo or "", *(self.paths or ()), self.locator or "", *paper)


@dataclass(frozen=True)
class Curated:
    by: str = field(Text("Who read it"), required=True)
    date: str = field(Text("When"), required=True)
    tool: str = field(Text("How"), required=True)


@dataclass(frozen=True)
class Hardware:
    name: str = field(Text("The system as the source prints it"), required=True)
    device: str | None = field(Text("The device"))
    devices_per_node: int | None = field(Count("Devices per node"))
    network: str | None = field(Text("The network as printed"))


@dataclass(frozen=True)
class Workload:
    kind: Kind = field(OneOf("What ran", KINDS), required=True)
    name: str = field(Text("The workload and model"), required=True)
    batch: BatchPolicy = field(OneOf("fixed: one global batch or problem; grows: per-device batch fixed",
                                     ("fixed", "grows")), required=True)
    software: str | None = field(Text("The software release"))
    precision: str | None = field(Text("The precision"))


@dataclass(frozen=True)
class CurveUnit:
    node: str = field(Text("What one node of `nodes` is"), required=True)
    value: ValueKind = field(OneOf("What the values are", ("time", "throughput")), required=True)
    printed: str = field(Text("The values' unit as printed"), required=True)
    work: str | None = field(Text("What a throughput counts"))

    def check(self) -> Iterator[tuple[str, str]]:
        if self.value == "time" and self.printed not in TIME_UNITS:
            yield "printed", f"a time is written in one of {', '.join(TIME_UNITS)}, got \"{self.printed}\""


@dataclass(frozen=True)
class Point:
    nodes: float = field(Positive("The scale"), required=True)
    values: tuple[float, ...] = field(Items(Positive("A measured repeat")), required=True)
    global_batch: int | None = field(Count("The global batch at this scale"))
    overrides: Data | None = field(RawMapping())
    reading_error: float | None = field(Number(minimum=0.0, maximum=1.0))

    def check(self) -> Iterator[tuple[str, str]]:
        if self.reading_error is not None and self.reading_error > MAX_READING_ERROR:
            yield "reading_error", f"a figure read within {self.reading_error:.0%} does not qualify (at most 5 %)"


@dataclass(frozen=True)
class Curve:
    """A published curve: where it is from, what ran, and every measured repeat at each scale."""

    id: str = field(Text("The file's stem"), required=True)
    source: Source = field(Section(Source), required=True)
    curated: Curated = field(Section(Curated), required=True)
    hardware: Hardware = field(Section(Hardware), required=True)
    workload: Workload = field(Section(Workload), required=True)
    unit: CurveUnit = field(Section(CurveUnit), required=True)
    points: tuple[Point, ...] = field(Items(Section(Point), min_items=3), required=True)
    batch_changes: bool = field(Flag("The global batch differs between scales"), False)
    mixed_submitter: bool = field(Flag("Scales from more than one submitter on identical hardware"), False)
    project: Data | None = field(RawMapping())
    predictors: Data | None = field(RawMapping())

    def check(self) -> Iterator[tuple[str, str]]:
        if not ID_PATTERN.fullmatch(self.id):
            yield "id", "lowercase letters, digits and dashes"
        scales = [point.nodes for point in self.points]
        if len(set(scales)) < 3:
            yield "points", f"at least 3 distinct scales, got {len(set(scales))}"
        if scales != sorted(scales):
            yield "points", "scales in ascending order"
        batches = {point.global_batch for point in self.points if point.global_batch is not None}
        if len(batches) > 1 and not self.batch_changes:
            yield "batch_changes", "the global batch differs between scales: write batch_changes: true"
        if self.workload.batch == "grows" and not self.batch_changes:
            yield "batch_changes", "a batch that grows changes between scales: write batch_changes: true"

    def scales(self) -> tuple[float, ...]:
        return tuple(point.nodes for point in self.points)

    def times(self, point: Point, work: float) -> tuple[float, ...]:
        """A point's repeats as run times in seconds (a throughput's over `work`, in its printed unit's time)."""
        if self.unit.value == "time":
            return tuple(value * TIME_UNITS[self.unit.printed] for value in point.values)
        return tuple(work / value for value in point.values)

    def nominal_work(self) -> float:
        """A throughput curve's work per run when its project gives none: one hour of the smallest scale (any work
        gives the same ratios, so the same scores)."""
        return 3600.0 * median(self.points[0].values)

    def exclusion(self) -> str | None:
        """The excluded source this curve matches, if any."""
        texts = (self.id, self.workload.name, *self.source.texts)
        return next((name for name, pattern in EXCLUDED if any(pattern.search(text) for text in texts)), None)


def read_curve(path: Path, display: str) -> Curve:
    """A curve file, checked; InputError with every problem (file:line:column and field)."""
    return read_curve_file(path, display)[0]


def read_curve_file(path: Path, display: str) -> tuple[Curve, bytes]:
    """A curve file, checked, and its bytes as read (what the corpus's hash is taken over)."""
    text, data = read_text(path, display, limit=MAX_CURVE_BYTES)
    root = compose(text, display)
    reader = Reader(display)
    curve = read_struct(Curve, root, "", reader)
    problems = list(reader.problems)
    if curve is not INVALID:
        if curve.id != path.stem:
            problems.append(_at(root, "id", display, f"the id \"{curve.id}\" is not the file's stem \"{path.stem}\""))
        if (matched := curve.exclusion()) is not None:
            problems.append(_at(root, "source", display, f"corpus-excluded: {matched} tests reportgen elsewhere and "
                                "is kept out of the corpus"))
    if problems:
        raise InputError(problems)
    return curve, data


def _at(root: Node, key: str, display: str, message: str) -> Problem:
    """A problem at a top-level field's value (the document's start when it is absent)."""
    node = next((value for name, value in root.value if name.value == key), root) \
        if isinstance(root, MappingNode) else root
    mark = node.start_mark
    return Problem(display, mark.line + 1, mark.column + 1, key, message)
