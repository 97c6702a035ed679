"""load_project(path) → LoadedProject: the project file read, every rule checked, every problem located."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reportgen.errors import InputError
from reportgen.files import why_unreadable
from reportgen.project import carbon, measurements, units
from reportgen.project.flatten import flatten
from reportgen.project.model import Collective, Energy, Prediction, Project, Run, Scaling, common_form
from reportgen.project.records import RowSource
from reportgen.project.spec import INVALID, Items, Reader, Section, file_name_text, locate, read_fields, scalar_text
from reportgen.project.stdio import shown_name
from reportgen.project.yaml_source import compose, read_text
from reportgen.wording import plural


@dataclass(frozen=True)
class LoadedProject:
    """A valid project and where it came from."""

    project: Project
    path: Path
    display: str  # the path as the user named it, for messages
    input_sha256: str  # of the project file's bytes
    measurements_sha256: str | None  # of the CSV named by scaling.file, when there is one
    sources: dict[float, RowSource] = field(default_factory=dict)  # a CSV run's provenance comments, by node count
    rows: tuple[tuple[float, RowSource], ...] = ()  # every CSV row's node count and provenance comments, in order
    nodes: tuple[Node, Node | None] | None = field(default=None, repr=False, compare=False)  # the composed file
    # and the runs' node (the CSV's when the runs come from one): where `written` finds the texts

    def __repr__(self) -> str:
        """One line for a notebook, in the units the file was written in (the dataclasses hold SI floats): the
        title, what the project gives, and its measured scales."""
        project = self.project
        inferred = ("project", "money_currency", "work_unit")  # the title block, and what is not a section
        given = [f.name for f in dataclasses.fields(project) if f.name not in inferred and getattr(project, f.name)]
        runs = project.scaling.runs if project.scaling else ()
        scales = sorted({run.nodes for run in runs})
        measured = f"; {len(runs)} run{'s' if len(runs) != 1 else ''} at {_span(scales)}" if runs else ""
        plan = f"; planned at {project.design.nodes} nodes" if project.design and project.design.nodes else ""
        revision = f" ({project.project.revision})" if project.project.revision else ""
        return (f"<reportgen project {project.project.title!r}{revision} from {self.display}{plan}{measured}; "
                f"sections: {', '.join(given) or 'none'}>")

    def file_named(self, field_path: str, shown: str) -> str:
        """The file a field names (scaling.file, prediction.collectives_file, whose value is `shown`) as written:
        the name to open. `shown` is for display only (see written_name)."""
        return written_name(locate(self.nodes[0], field_path), shown) if self.nodes is not None else shown

    @cached_property
    def written(self) -> dict[str, str]:
        """Each quantity's text as the user wrote it, by field path: for the report's appendix only, so it is
        looked up when first asked for (on a 10,000-run CSV it was a quarter of every load, `check` included)."""
        if self.nodes is None:
            return {}
        root, runs_node = self.nodes
        return _as_written(self.project, root, runs_node)


def _span(scales: list[float]) -> str:
    """Measured node counts in a few words: "1–16 nodes (5 scales)", "8 nodes"."""
    def shown(value: float) -> str:
        return f"{int(value):,}" if value == int(value) else f"{value:g}"
    if len(scales) == 1:
        return f"{shown(scales[0])} node{'s' if scales[0] != 1 else ''}"
    return f"{shown(scales[0])}–{shown(scales[-1])} nodes ({len(scales)} scales)"


def load_project(path: str | Path, *, display: str | None = None,
                 csv_files_may_be_missing: bool = False) -> LoadedProject:
    """Read and validate a project file; InputError with every located problem otherwise.

    `csv_files_may_be_missing` lets `measure` and `ingest` load a project whose CSV they are about to create.
    """
    path = Path(path)
    shown = display or shown_name(path)
    text, data = read_text(path, shown)
    return load_project_text(text, path, shown, data=data, csv_files_may_be_missing=csv_files_may_be_missing)


def load_project_text(text: str, path: Path, display: str, *, data: bytes | None = None,
                      csv_files_may_be_missing: bool = False) -> LoadedProject:
    """Validate project text as if it were the file at `path` (CSV paths resolve beside it)."""
    root = compose(text, display)
    currency, currency_stated = _declared_currency(root)
    reader = Reader(display, currency=currency)
    # Sections are read one by one so that the cross-section checks below run on every valid section even when
    # another section failed: all of a file's problems are reported at once.
    sections, keys_sound = read_fields(Project, root, "", reader)
    measurements_sha = None
    runs_node: Node | None = None
    sources: dict[float, RowSource] = {}
    rows: tuple[tuple[float, RowSource], ...] = ()
    scaling = sections.get("scaling")
    if scaling not in (None, INVALID):
        scaling, runs_node, measurements_sha, sources, rows = _with_file_runs(
            scaling, root, path, reader, missing_ok=csv_files_may_be_missing)
        if scaling is not INVALID:
            _check_runs(scaling, runs_node, root, reader)
        sections["scaling"] = scaling
    prediction = sections.get("prediction")
    if prediction not in (None, INVALID) and prediction.collectives_file is not None:
        sections["prediction"] = _with_file_collectives(prediction, root, path, reader,
                                                        missing_ok=csv_files_may_be_missing)
    if sections.get("energy") not in (None, INVALID):
        _check_location(sections["energy"], root, reader)
    if sections.get("pricing") not in (None, INVALID) and not currency_stated:
        sections["pricing"] = replace(sections["pricing"], currency=currency)
    if sections.get("project") not in (None, INVALID) and scaling not in (None, INVALID) and runs_node is not None:
        _check_serving_runs(sections["project"].workload == "inference", scaling, runs_node, reader)
    service = sections.get("project") not in (None, INVALID) and sections["project"].workload == "inference"
    loads = _loads(root, runs_node if scaling not in (None, INVALID) else None, every_run=service)
    if service:
        _check_load_units(loads, reader)
    project = INVALID if INVALID in sections.values() or not keys_sound \
        else Project(**sections, money_currency=currency, work_unit=loads[0][2] if loads else "request",
                     throughput_counts=_counts(_first_run_throughput(runs_node), reader),
                     work_per_run_counts=_counts(_written_at(root, "scaling.work_per_run"), reader))
    if project is not INVALID:
        for relative, message in project.check():
            reader.error(locate(root, relative), relative, message)
    if reader.problems:
        raise InputError(reader.problems)
    raw = data if data is not None else text.encode("utf-8")
    return LoadedProject(project, path, display, hashlib.sha256(raw).hexdigest(), measurements_sha,
                         sources, rows, (root, runs_node))


def _as_written(project: Project, root: Node, runs_node: Node | None) -> dict[str, str]:
    """Each quantity's text as the user wrote it (in the project file or its CSV), by field path."""
    written = {}
    for leaf in flatten(project, currency=project.currency):
        if not leaf.unit or isinstance(leaf.value, tuple):
            continue
        if leaf.path.startswith("scaling.runs[") and runs_node is not None:
            node = locate(runs_node, leaf.path.removeprefix("scaling.runs"))
        else:
            node = locate(root, leaf.path)
        text = scalar_text(node) if isinstance(node, ScalarNode) else None
        if text is not None:
            written[leaf.path] = text
    return written


# The amounts whose currency code sets the project's currency when pricing.currency is absent, in this order.
_AMOUNTS = ("pricing.node_hour", "pricing.value_of_time", "project.goal.cost_per_run", "project.goal.cost_per_hour")
_DECISION_AMOUNTS = ("max_cost", "max_cost_per_hour")


# Where a service's load is written in the project file; every run's throughput follows
# (methods.md#services-in-tokens-and-several-objectives: the unit is kept)
_LOADS = ("project.goal.load", "baseline.serving.requests_per_second", "baseline.serving.capacity_per_replica")


def _loads(root: Node, runs_node: Node | None, *, every_run: bool) -> list[tuple[str, Node, str]]:
    """Each load written with a unit of work, as (field path, node, unit): the project file's fields in the order the
    work unit is taken from, then the runs' throughputs, in the project file or its CSV: every run's for a service,
    whose units are checked against each other; the first run's alone for any other project, which only names its
    work unit by it (10,000 runs are not read twice for that)."""
    written = [(path, _written_at(root, path)) for path in _LOADS]
    if isinstance(runs_node, SequenceNode):
        runs = runs_node.value if every_run else runs_node.value[:1]
        written += [(f"scaling.runs[{index}].throughput", _written_at(run, "throughput"))
                    for index, run in enumerate(runs)]
    found = []
    for path, node in written:
        text = scalar_text(node) if node is not None else None
        unit = units.work_unit(text) if text else None
        if node is not None and unit is not None:
            found.append((path, node, unit))
    return found


def _counts(node: Node | None, reader: Reader) -> str | None:
    """What a throughput or an amount of work counts, as written: "FLOP" (FLOP/s, as weak-scaling papers publish
    it), else its unit of work ("token"), else None. A run's MFU reads its tokens from it
    (methods.md#flops-mfu-and-hfu)."""
    text = scalar_text(node) if node is not None else None
    if text is None:
        return None
    kinds = (units.RATE, units.WORK, units.COMPUTE_RATE, units.COMPUTE)  # a bare number counts items
    if units.dimension_of(text, kinds, currency=reader.currency) in (units.COMPUTE_RATE, units.COMPUTE):
        return "FLOP"
    return units.work_unit(text)


def _first_run_throughput(runs_node: Node | None) -> Node | None:
    first = runs_node.value[0] if isinstance(runs_node, SequenceNode) and runs_node.value else None
    return _written_at(first, "throughput") if first is not None else None


def _check_load_units(loads: list[tuple[str, Node, str]], reader: Reader) -> None:
    """A service's load, capacities and load tests count one unit of work: their bare numbers are compared (40
    requests/s would be held against 138,000 tokens/s needed), and no rate converts requests into tokens."""
    if not loads:
        return
    first_path, _, first = loads[0]
    for path, node, unit in loads[1:]:
        if unit != first:
            reader.error(node, path, f"counts {plural(unit)} while {first_path} counts {plural(first)}: a service's "
                         "load, capacities and load tests must count one unit of work")


def _scalar_at(root: Node, path: str) -> str | None:
    """The text at a field path when that very field is written, else None."""
    node = _written_at(root, path)
    return scalar_text(node) if node is not None else None


def _written_at(root: Node, path: str) -> Node | None:
    """The node of a field path when that very field is written, else None (locate stops at the deepest node that
    exists, which may be an ancestor)."""
    parent, _, name = path.rpartition(".")
    owner = locate(root, parent) if parent else root  # the field's own mapping, or one with no such key
    return next((value for key, value in owner.value if scalar_text(key) == name), None) \
        if isinstance(owner, MappingNode) else None


def _declared_currency(root: Node) -> tuple[str, bool]:
    """The project's currency, read first because every money field is parsed in it, and whether pricing.currency
    states it: pricing.currency, else the code of the first amount written (a team without prices yet states its
    budget in its own currency: "50 EUR" must not be refused for want of a pricing section), else USD."""
    code = scalar_text(locate(root, "pricing.currency"))
    if code is not None:
        return (code if units.is_currency_code(code) else "USD"), True
    decisions = locate(root, "decisions")
    paths = [*_AMOUNTS, *(f"decisions[{index}].{name}" for index in range(len(decisions.value))
                          for name in _DECISION_AMOUNTS)] if isinstance(decisions, SequenceNode) else list(_AMOUNTS)
    for path in paths:
        for token in re.split(r"[\s*/()^]+", _scalar_at(root, path) or ""):
            if units.is_currency_code(token):
                return token, False
    return "USD", False


def written_name(node: Node, shown: str) -> str:
    """A file name as the project file writes it, for opening the file. The project's value is `shown`, text
    made safe to display (spec.bidi_isolated wraps a name holding bidi controls in isolates), which names another
    file: a CSV named with U+202E was "no such file" to `check`, and `measure` created a second one."""
    text = file_name_text(node)
    return text if text is not None else shown


def _with_file_runs(scaling: Scaling, root: Node, path: Path, reader: Reader, *,
                    missing_ok: bool = False) -> tuple[Scaling, Node, str | None, dict[float, RowSource],
                                                       tuple[tuple[float, RowSource], ...]]:
    """The scaling section with the CSV's runs read in, the node the runs came from, the CSV's hash, each scale's
    provenance comments by node count, and every row's."""
    inline = locate(root, "scaling.runs")
    if scaling.file is None:
        return scaling, inline, None, {}, ()
    file_node = locate(root, "scaling.file")
    name = written_name(file_node, scaling.file)
    failed: tuple[Scaling, Node, None, dict[float, RowSource], tuple[tuple[float, RowSource], ...]] = (
        INVALID, file_node, None, {}, ())
    csv_path = _csv_beside(path, name, "scaling.file", file_node, reader,
                           inline_too="runs" if scaling.runs else None, missing_ok=missing_ok)
    if csv_path is None:
        return scaling, file_node, None, {}, ()
    if csv_path is INVALID:
        return failed
    try:
        runs_node, data, sources = measurements.read_runs(csv_path, str(Path(reader.display).parent / name),
                                                          within=path.parent.resolve())
    except InputError as error:
        reader.problems.extend(error.problems)
        return failed
    with reader.time_unit(scaling.time_unit):
        runs = Items(Section(Run), min_items=0).read(runs_node, "scaling.runs", reader)
    if runs is INVALID:
        return failed
    by_nodes: dict[float, RowSource] = {}
    for run, source in zip(runs, sources, strict=True):
        if source.lines:  # a scale's provenance: its first repeat's that has any, and every repeat's load test
            kept = by_nodes.setdefault(run.nodes, source)
            if kept is not source:
                by_nodes[run.nodes] = kept.with_load_tests_of(source)
    rows = tuple((run.nodes, source) for run, source in zip(runs, sources, strict=True))
    return replace(scaling, runs=runs), runs_node, hashlib.sha256(data).hexdigest(), by_nodes, rows


def _csv_beside(path: Path, relative: str, field_path: str, node: Node, reader: Reader, *, inline_too: str | None,
                missing_ok: bool) -> Any:
    """The CSV a field names beside the project file; None when it may be missing and is; INVALID (reported)
    when the same rows are also given inline, the path leaves the folder, or the file is not there."""
    if inline_too:
        hint = " (`reportgen runs export` moves inline runs into the CSV and names it)" if inline_too == "runs" else ""
        return reader.error(node, field_path, f"give {inline_too} inline or in a file, not both{hint}")
    try:
        csv_path = measurements.resolve(path, relative)
    except ValueError as error:
        return reader.error(node, field_path, str(error))
    try:
        present = csv_path.exists()
    except OSError as error:  # a name past the system's limit: said at the field, not as a stray error
        return reader.error(node, field_path, f'"{relative}" {why_unreadable(error)}')
    if not present:  # anything else that is not a regular file is refused when read, saying what it is
        if missing_ok:
            return None
        return reader.error(node, field_path, f'no such file "{relative}" beside the project file')
    return csv_path


def _with_file_collectives(prediction: Prediction, root: Node, path: Path, reader: Reader, *,
                           missing_ok: bool = False) -> Any:
    """The prediction with the collectives of its CSV read in (`reportgen ingest nccl-tests` writes it)."""
    assert prediction.collectives_file is not None
    file_node = locate(root, "prediction.collectives_file")
    name = written_name(file_node, prediction.collectives_file)
    csv_path = _csv_beside(path, name, "prediction.collectives_file", file_node, reader,
                           inline_too="collectives" if prediction.collectives else None, missing_ok=missing_ok)
    if csv_path is None or csv_path is INVALID:
        return prediction if csv_path is None else INVALID
    try:
        rows, _, _ = measurements.read_runs(csv_path, str(Path(reader.display).parent / name),
                                         measurements.COLLECTIVE_COLUMNS, within=path.parent.resolve())
    except InputError as error:
        reader.problems.extend(error.problems)
        return INVALID
    collectives = Items(Section(Collective), min_items=0).read(rows, "prediction.collectives", reader)
    if collectives is INVALID:
        return INVALID
    merged = replace(prediction, collectives=collectives)
    for relative, message in merged.check():
        reader.error(file_node, f"prediction.{relative}", message)
    if merged.use_fit and not collectives:
        reader.error(file_node, "prediction.use_fit", f"needs measured collectives, and {prediction.collectives_file} "
                     "holds none yet (`reportgen ingest nccl-tests` appends them)")
    return merged


def check_measurements(text: str, display: str, *, collectives: bool = False,
                       time_unit_s: float | None = None) -> None:
    """CSV text about to replace a project's measurements, every row read as the loader reads it (finite,
    non-negative, in range, in one form): what `measure` and every `ingest` call before writing anything, so
    that no tool writes a row the project would then refuse. InputError located at the row."""
    columns = measurements.COLLECTIVE_COLUMNS if collectives else measurements.COLUMNS
    node, _ = measurements.parse_rows(text, display, columns)
    reader = Reader(display)
    if collectives:
        Items(Section(Collective), min_items=0).read(node, "prediction.collectives", reader)
    else:
        with reader.time_unit(time_unit_s):
            runs = Items(Section(Run), min_items=0).read(node, "scaling.runs", reader)
        forms = [] if runs is INVALID else [run.form for run in runs]
        if runs is not INVALID and common_form(runs) is None:
            for index, form in enumerate(forms):
                if form != forms[0]:
                    reader.error(node.value[index], "", f"every run must be in one form: the first is {forms[0]}, "
                                 f"this one is {form}")
    if reader.problems:
        raise InputError(reader.problems)


def _check_runs(scaling: Scaling, runs_node: Node, root: Node, reader: Reader) -> None:
    """One form for every run, and work_per_run only where it means something. Rows with the same node count are
    repeats of one scale (the analyses take their medians)."""
    def at(index: int, field: str = "") -> Node:
        node = runs_node.value[index] if isinstance(runs_node, SequenceNode) else runs_node
        return locate(node, field) if isinstance(node, MappingNode) else node

    if scaling.axis == "nodes":
        for index, run in enumerate(scaling.runs):
            if not isinstance(run.nodes, int):
                reader.error(at(index, "nodes"), f"scaling.runs[{index}].nodes",
                             f"expected a whole number of nodes, got {run.nodes:g}; a load level (concurrency, "
                             "active sessions) may be fractional with scaling.axis: load")
    first_form = scaling.runs[0].form if scaling.runs else None
    if scaling.runs and common_form(scaling.runs) is None:
        for index, run in enumerate(scaling.runs):
            if run.form != first_form:
                reader.error(at(index), f"scaling.runs[{index}]", f"every run must be in one form: the first is "
                             f"{first_form}, this one is {run.form}")
    first_form = common_form(scaling.runs) if scaling.runs else None
    if scaling.work_per_run is not None and first_form not in (None, "throughput"):
        reader.error(locate(root, "scaling.work_per_run"), "scaling.work_per_run",
                     "applies to runs in throughput form only")
    if first_form == "throughput":
        _check_work_units(scaling, [at(index, "throughput") for index in range(len(scaling.runs))], root, reader)


def _check_serving_runs(serving: bool, scaling: Scaling, runs_node: Node, reader: Reader) -> None:
    """A run's p99 latency is a serving measurement: refused, where it is written, in a project that serves nothing
    (it would be silently ignored there)."""
    if serving:
        return
    for index, run in enumerate(scaling.runs):
        for name in ("p99_latency", "ttft_p99", "tpot_p99", "offered", "concurrency", "attainment", "goodput"):
            if getattr(run, name) is not None:
                node = runs_node.value[index] if isinstance(runs_node, SequenceNode) else runs_node
                reader.error(locate(node, name) if isinstance(node, MappingNode) else node,
                             f"scaling.runs[{index}].{name}",
                             "applies to serving projects only: set project.workload: inference")


_RATE_NAMES = {"1/s": "items per second", "FLOP/s": "FLOP/s"}


def _check_work_units(scaling: Scaling, throughput_nodes: list[Node], root: Node, reader: Reader) -> None:
    """Throughput is work per second or FLOP per second (as weak-scaling papers publish it), the same for every run,
    and work_per_run counts the same work: speedups and costs per unit of work would otherwise mix the two."""
    def kind(node: Node, dimensions: tuple[units.Dimension, ...]) -> units.Dimension | None:
        text = scalar_text(node)
        return None if text is None else units.dimension_of(text, dimensions, currency=reader.currency)

    rates = (units.RATE, units.COMPUTE_RATE)
    kinds = [kind(node, rates) for node in throughput_nodes]
    first = kinds[0]
    for index, (node, this) in enumerate(zip(throughput_nodes, kinds, strict=True)):
        if this is not None and first is not None and this != first:
            reader.error(node, f"scaling.runs[{index}].throughput",
                         f"is in {_RATE_NAMES[this.si_unit]} while the first run's is in "
                         f"{_RATE_NAMES[first.si_unit]}: write every run's throughput in one kind of unit")
    if scaling.work_per_run is None or first is None:
        return
    work_node = locate(root, "scaling.work_per_run")
    matching = units.COMPUTE if first == units.COMPUTE_RATE else units.WORK
    if kind(work_node, (units.WORK, units.COMPUTE)) not in (None, matching):
        reader.error(work_node, "scaling.work_per_run",
                     f"the runs' throughput is in {_RATE_NAMES[first.si_unit]}: give the work of one run "
                     f'{"in FLOP" if matching == units.COMPUTE else "as a count"} too, like "{matching.example}"')


def _check_location(energy: Energy, root: Node, reader: Reader) -> None:
    location = energy.location
    if location is None or location.carbon_intensity is not None:
        return
    try:
        carbon.validate(country=location.country, region=location.region, cloud=location.cloud)
    except carbon.UnknownLocation as error:
        path = f"energy.location.{error.field}"
        reader.error(locate(root, path), path, str(error))

