"""The `ingest` commands of the command line (and `measure --trace-dir`): files tools wrote → measurements.

Part of the command line: it prints and raises the project's own errors, which `reportgen.commands.cli` turns into exit
statuses; the reading itself is in reportgen.ingest.traces, reportgen.ingest.nccltests and reportgen.ingest.emissions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reportgen import wording
from reportgen.commands import console
from reportgen.errors import ExitCode, UsageError
from reportgen.files import here
from reportgen.formats import SERVING_PRINTED

if TYPE_CHECKING:
    from reportgen.ingest import traces
    from reportgen.ingest.request_records import RecordsFile
    from reportgen.ingest.serving_records import Judged
    from reportgen.project.loader import LoadedProject


def run(arguments: argparse.Namespace) -> int:
    commands = {"trace": _ingest_trace, "nccl-tests": _ingest_nccl_tests, "codecarbon": _ingest_codecarbon,
                "serving": _ingest_serving}
    return commands[arguments.source](arguments)


def _ingest_trace(arguments: argparse.Namespace) -> int:
    import json

    if not (0 < arguments.steps_per_run <= 1e9):
        raise UsageError(f"--steps-per-run must be more than zero (and at most 10⁹), got {arguments.steps_per_run:g}")
    from reportgen.ingest import traces  # here: the other ingests need none of its imports

    job = traces.combine(traces.reduce_files(traces.trace_files(arguments.paths), scheduler=arguments.scheduler))
    if arguments.project is not None and job.sampled and not arguments.sampled:
        raise UsageError(f"the traces hold {len(job.ranks)} of the {job.world_size} ranks of the job (missing: "
                         f"{_listed_ranks(job)}): pass --sampled to append the job from the ranks present "
                         "(their median rank, its wait a lower bound), or add the missing ranks' traces")
    nodes = _trace_nodes(arguments, job.world_size)
    for warning in job.warnings():
        print(warning, file=sys.stderr)
    if arguments.format == "json":
        print(json.dumps(_trace_document(job, arguments.steps_per_run), indent=2))
    else:
        _print_trace_table(job, arguments.steps_per_run)
    if arguments.project is None:
        return ExitCode.OK
    from reportgen.ingest.measure import Measurement, add_breakdown, append_run, check_can_append, csv_of
    from reportgen.project.loader import load_project

    loaded = load_project(arguments.project, csv_files_may_be_missing=True)
    csv_path = csv_of(loaded)
    k = arguments.steps_per_run
    split = job.split_s(k)
    measurement = Measurement(nodes, sum(split.values()), None, split, 0,
                              workers_s=tuple(w * k for w in job.run.workers_s), source=job.provenance(nodes, k),
                              wall_measured=False)
    scaling = loaded.project.scaling
    time_unit = scaling.time_unit if scaling else None
    # the run `measure` recorded (its wall time, no breakdown yet) takes the breakdown: one row holds the run
    completed = None if arguments.replace or arguments.repeat else \
        add_breakdown(csv_path, measurement, run=arguments.run, time_unit_s=time_unit)
    if completed is not None:
        appended = completed
        verb = f"added to the run at {wording.nodes(nodes)} (line {(completed.row or 0) + 1}) of"
    else:
        if arguments.run is not None:
            raise UsageError(f"--run {arguments.run}: no run at {nodes} nodes of {csv_path.name} records a wall time "
                             "without a breakdown")
        check_can_append(csv_path, nodes, replace=arguments.replace, split=True, repeat=arguments.repeat)
        appended = append_run(csv_path, measurement, time_unit_s=time_unit, replace=arguments.replace,
                              repeat=arguments.repeat)
        verb = "appended to"
    cells = ", ".join(f"{name} {value}" for name, value in appended.cells.items() if value and name != "workers")
    console.say(f"{verb} {here(csv_path)}: {cells}", file=sys.stderr if arguments.format == "json" else sys.stdout)
    return ExitCode.OK


def _ingest_nccl_tests(arguments: argparse.Namespace) -> int:
    import json

    from reportgen.ingest import nccltests
    from reportgen.project import measurements

    table = nccltests.read_nccl_tests(arguments.file)
    nodes = table.nodes(arguments.nodes)
    output = sys.stderr if arguments.format == "json" else sys.stdout  # JSON alone on standard output
    if arguments.format == "json":
        print(json.dumps(nccltests.json_document(table, nodes), indent=2))
    elif arguments.project is None:
        ranks = f", {wording.counted(table.ranks, 'rank')}" if table.ranks else ""
        source = "from the log's header" if table.hosts else "from --nodes"
        print(f"# {table.operation} on {wording.nodes(nodes)}{ranks} ({source}; {table.file}); under "
              "prediction.collectives:")
        print(nccltests.yaml_entries(table, nodes))
    if arguments.project is None:
        return ExitCode.OK
    from reportgen.project.loader import load_project

    loaded = load_project(arguments.project, csv_files_may_be_missing=True)
    prediction = loaded.project.prediction
    if prediction is None or prediction.collectives_file is None:
        raise UsageError(f"{loaded.display}: ingest appends to the CSV named by prediction.collectives_file; add "
                         "`collectives_file: collectives.csv` under prediction")
    csv_path = measurements.resolve(loaded.path, loaded.file_named("prediction.collectives_file",
                                                                   prediction.collectives_file))
    rows = nccltests.append_collectives(csv_path, table, nodes, replace=arguments.replace)
    console.say(f"appended {rows} collectives at {nodes} nodes to {here(csv_path)}", file=output)
    return ExitCode.OK


def _ingest_codecarbon(arguments: argparse.Namespace) -> int:
    import json

    from reportgen.ingest import emissions
    from reportgen.ingest.measure import checked_machines

    if arguments.nodes < 1:
        raise UsageError(f"--nodes must be a positive whole number, got {arguments.nodes}")
    machines = checked_machines(arguments.machines, arguments.nodes, default=arguments.nodes)
    run = emissions.read_emissions(arguments.file, run_id=arguments.run_id)
    energy = run.energy_at(machines)
    output = sys.stderr if arguments.format == "json" else sys.stdout  # JSON alone on standard output
    if arguments.format == "json":
        print(json.dumps(emissions.json_document(run, arguments.nodes, machines), indent=2))
    else:
        scaled = f", scaled from {run.rows} tracked machine(s) to {machines} machines" if machines > run.rows else ""
        recorded = f"; CodeCarbon recorded {wording.mass(run.emissions_at(machines))} CO2e" \
            if run.emissions_kg is not None else ""
        print(f"run {run.run_id}: {wording.energy(energy)} at {wording.nodes(arguments.nodes)}{scaled} "
              f"({wording.duration(run.duration_s)}, tracked in {run.country or 'an unknown country'}){recorded}")
    if arguments.project is None:
        return ExitCode.OK
    from reportgen.ingest.measure import csv_of
    from reportgen.project.loader import load_project

    loaded = load_project(arguments.project)
    location = loaded.project.energy.location if loaded.project.energy else None
    if location and location.country and run.country and location.country != run.country:
        print(f"note: CodeCarbon tracked the run in {run.country}, but energy.location is {location.country}: the "
              "energy is recorded; the report's CO2e uses energy.location", file=sys.stderr)
    csv_path = csv_of(loaded)
    scaling = loaded.project.scaling
    emissions.attach_energy(csv_path, run, arguments.nodes, machines=machines, replace=arguments.replace,
                            time_unit_s=scaling.time_unit if scaling else None)
    console.say(f"wrote the energy of the run at {wording.nodes(arguments.nodes)} in {here(csv_path)}", file=output)
    return ExitCode.OK


def _serving_formats(given: list[str] | None) -> tuple[str, str | None]:
    """What to print and the file format named, from --format given at most once each."""
    given = given or []
    printed = [value for value in given if value in SERVING_PRINTED]
    named = [value for value in given if value not in SERVING_PRINTED]
    if len(printed) > 1 or len(named) > 1:
        raise UsageError("--format names what to print once and the file's format once: got " + ", ".join(given))
    return (printed[0] if printed else "table"), (named[0] if named else None)


def _ingest_serving(arguments: argparse.Namespace) -> int:
    import json

    from reportgen.ingest import request_records, serving_bench

    if arguments.nodes < 1:
        raise UsageError(f"--nodes must be a positive whole number, got {arguments.nodes}")
    printed, named = _serving_formats(arguments.format)
    loaded = None
    if arguments.project is not None:
        from reportgen.project.loader import load_project

        loaded = load_project(arguments.project, csv_files_may_be_missing=True)
        if loaded.project.project.workload != "inference":  # its check would refuse every latency column written
            raise UsageError(f"{loaded.display} is not a service: a load test's rows belong to a project with "
                             "project.workload: inference")
    found = None
    if named is None or named in request_records.FORMATS:
        found = request_records.read_records(arguments.file, format=named, none_unless_records=named is None)
    if found is not None:
        return _ingest_records(arguments, found, loaded, printed)
    if arguments.point is not None:
        raise UsageError("--point picks a load point of a per-request file; a summary holds one")
    benchmark = serving_bench.read_serving(arguments.file)
    if named is not None and benchmark.tool != named:
        raise UsageError(f"{arguments.file} is a {benchmark.tool} file, not {named}")
    unit = loaded.project.work_unit if loaded else None
    output = sys.stderr if printed == "json" else sys.stdout  # JSON alone on standard output
    if printed == "json":
        print(json.dumps(serving_bench.json_document(benchmark, arguments.nodes, unit), indent=2))
    else:
        rates = [f"{wording.number(value)} {name}/s" for value, name in
                 ((benchmark.requests_per_s, "requests"), (benchmark.tokens_per_s, "output tokens"))
                 if value is not None]
        latencies = [f"{name} {wording.duration(value)}" for value, name in
                     ((benchmark.p99_s, "p99"), (benchmark.ttft_p99_s, "p99 TTFT"),
                      (benchmark.tpot_p99_s, "p99 TPOT")) if value is not None]
        print(f"{serving_bench.TOOL_NAMES[benchmark.tool]} at {wording.nodes(arguments.nodes)}: "
              f"{', '.join(rates + latencies)}")
    for name in benchmark.placeholders:
        print(f"note [placeholder]: the file gives {name} as 0, which the tool writes when it did not measure it "
              "(a backend that does not stream has no first token): read as not measured", file=sys.stderr)
    for code, problem in benchmark.counts.problems():
        print(f"warning [{code}]: {problem}", file=sys.stderr)
    if loaded is None:
        return ExitCode.OK
    from reportgen.ingest.measure import csv_of

    csv_path = csv_of(loaded)
    cells = serving_bench.append_load_test(csv_path, benchmark, arguments.nodes, unit or "request",
                                           replace=arguments.replace, repeat=arguments.repeat)
    written = ", ".join(f"{name} {value}" for name, value in cells.items() if value)
    console.say(f"appended to {here(csv_path)}: {written}", file=output)
    return ExitCode.OK


def _ingest_records(arguments: argparse.Namespace, found: RecordsFile, loaded: LoadedProject | None,
                    printed: str) -> int:
    """A per-request file: each load point checked and judged, printed, and with --project written as rows."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from reportgen.analysis.measured.load_point import judgement_of
    from reportgen.ingest import records_store, serving_records

    project = loaded.project if loaded is not None else None
    judgement = judgement_of(project.project.goal if project else None)
    with ThreadPoolExecutor(max_workers=1) as archiver:
        # the store is deflated beside the judging (half a second for a million requests; deflate lets go of the GIL)
        archive = archiver.submit(records_store.archive, found.points) if loaded is not None else None
        judged = serving_records.judge_file(found, judgement, arguments.point)
        data = archive.result() if archive is not None else b""
    unit = project.work_unit if project else None
    output = sys.stderr if printed == "json" else sys.stdout  # JSON alone on standard output
    if printed == "json":
        print(json.dumps(serving_records.json_document(found, judged, arguments.nodes, unit), indent=2))
    else:
        for entry in judged:
            print(_point_line(found, entry, arguments.nodes))
    for entry in judged:
        for code, message in serving_records.findings(entry.facts):
            print(f"warning [{code}] point {entry.index}: {message}", file=sys.stderr)
    if loaded is None:
        return ExitCode.OK
    from reportgen.ingest.measure import csv_of

    csv_path = csv_of(loaded)
    rows = serving_records.append_load_points(csv_path, found, judged, arguments.nodes, unit or "request",
                                              replace=arguments.replace, repeat=arguments.repeat, archive=data)
    console.say(f"appended {wording.counted(len(rows), 'load point')} to {here(csv_path)}, the records in "
                f"{here(csv_path.parent / records_store.store_name(csv_path, found.sha256))}", file=output)
    return ExitCode.OK


def _point_line(found: RecordsFile, entry: Judged, nodes: int) -> str:
    """One load point as a line: its load, its requests, and its verdict where the project judges it."""
    from reportgen.analysis.page.prose.load_points import load_words

    facts = entry.facts
    point, measured = facts.point, facts.attainment
    load = load_words(point)
    sent = f"sent at {wording.number(facts.achieved_send_per_s)}/s, " if facts.achieved_send_per_s else ""
    judged = ""
    if measured is not None:
        low, high = measured.joint_ci
        verdict = {"met": "met", "missed": "missed", None: "not decided"}[facts.verdict]
        judged = (f"; {wording.percent(measured.joint)} [{wording.percent(low)}, {wording.percent(high)}] met "
                  f"the objectives: {verdict}")
    validity = "" if facts.valid else " (not valid: see the warnings)"
    return (f"{found.tool} point {entry.index}/{len(found.points)} at {wording.nodes(nodes)}: {load}, "
            f"{sent}{point.requests.count:,} requests, {facts.failed:,} failed, window "
            f"{wording.duration(point.requests.window_s)}{judged}{validity}")


def _trace_nodes(arguments: argparse.Namespace, world: int | None) -> int:
    """--nodes, or the world size over --gpus-per-node; each checked against the world size."""
    if arguments.gpus_per_node is not None:
        if arguments.gpus_per_node < 1 or world is None or world % arguments.gpus_per_node:
            raise UsageError(f"--gpus-per-node {arguments.gpus_per_node} does not divide the traces' world size "
                             f"({world if world is not None else 'not recorded'})")
        derived: int = world // arguments.gpus_per_node
        if arguments.nodes is not None and arguments.nodes != derived:
            raise UsageError(f"--nodes {arguments.nodes} disagrees with world size {world} / --gpus-per-node "
                             f"{arguments.gpus_per_node} = {derived}")
        return derived
    if arguments.nodes is None:
        if arguments.project is not None:
            raise UsageError("--project needs --nodes N (or --gpus-per-node G to derive it from the world size)")
        return 0
    if arguments.nodes < 1 or (world is not None and world % arguments.nodes):
        raise UsageError(f"--nodes {arguments.nodes} does not divide the traces' world size {world}")
    return int(arguments.nodes)


def _trace_document(job: traces.JobBreakdown, steps_per_run: float) -> dict[str, object]:
    run = job.run
    return {
        "ranks": [{"rank": r.breakdown.rank, "window_us": r.breakdown.window_us, "idle_us": r.breakdown.idle_us,
                   "compute_us": r.breakdown.compute_us, "non_compute_us": r.breakdown.non_compute_us,
                   "communication_us": r.breakdown.communication_us, "memory_us": r.breakdown.memory_us,
                   "overlap_pct": r.breakdown.overlap_pct, "steps": r.breakdown.steps,
                   "steps_span_us": r.breakdown.steps_span_us, "wait_us": r.wait_us,
                   "file": r.breakdown.file, "sha256": r.breakdown.sha256} for r in job.ranks],
        "run": {"compute_s": run.compute_s * steps_per_run, "communication_s": run.communication_s * steps_per_run,
                "idle_s": run.idle_s * steps_per_run, "io_s": run.io_s * steps_per_run,
                "workers_s": [w * steps_per_run for w in run.workers_s], "steps_per_run": steps_per_run,
                "profiler_steps": run.steps, "wait_measured": run.wait_measured, "world_size": job.world_size,
                "sampled": job.sampled, "missing_rank_count": job.missing_count,
                "missing_ranks": list(job.missing_first)},
    }


def _print_trace_table(job: traces.JobBreakdown, steps_per_run: float) -> None:
    print(f"{'rank':>5} {'window ms':>11} {'compute ms':>11} {'exposed comm ms':>16} {'memory ms':>10} "
          f"{'idle ms':>10} {'wait ms':>9} {'overlap':>8} {'steps':>6}")
    for row in job.ranks:
        b = row.breakdown
        wait = f"{row.wait_us / 1e3:9.3f}" if row.wait_us is not None else f"{'—':>9}"
        print(f"{b.rank:>5} {b.window_us / 1e3:11.3f} {b.compute_us / 1e3:11.3f} {b.communication_us / 1e3:16.3f} "
              f"{b.memory_us / 1e3:10.3f} {b.idle_us / 1e3:10.3f} {wait} {b.overlap_pct:7.2f}% {b.steps:>6}")
    run, k = job.run, steps_per_run
    world = f" of a world of {job.world_size}" if job.world_size else ""
    middle = "the median rank" if job.sampled else "the mean rank"
    print(f"run ({len(job.ranks)} rank{'s' if len(job.ranks) != 1 else ''}{world}, {middle}; per {k:g} step"
          f"{'s' if k != 1 else ''}): compute {run.compute_s * k:.6g} s, "
          f"communication {run.communication_s * k:.6g} s, idle {run.idle_s * k:.6g} s, io {run.io_s * k:.6g} s")
    if job.sampled:
        print(f"sampled: {job.missing_count:,} of the {job.world_size} ranks have no trace here "
              f"({_listed_ranks(job)}); the wait for the slowest rank is split over the ranks present, a "
              "lower bound (the slowest may be one not sampled)")
    if not run.wait_measured:
        print("one rank only: waiting for the slowest rank is unknown, so all exposed communication is counted as "
              "communication")


def _listed_ranks(job: traces.JobBreakdown) -> str:
    """A few absent rank numbers and how many more: a 1,024-rank job sampled at two ranks misses 1,022."""
    shown = ", ".join(str(rank) for rank in job.missing_first[:6])
    return shown if job.missing_count <= 6 else f"{shown} and {job.missing_count - 6:,} more"


def with_trace_split(measurement: Any, trace_dir: Path, steps_per_run: float) -> Any:
    """The measured run with its split read from the traces in `trace_dir`; the measured time and energy are
    printed first, so that a folder without usable traces loses nothing."""
    from dataclasses import replace

    from reportgen.ingest import traces
    from reportgen.ingest.measure import provenance

    print(f"{measurement.said()}; reading the traces in {trace_dir}",
          file=sys.stderr)
    job = traces.combine(traces.reduce_files(traces.trace_files([trace_dir])))
    if job.sampled:
        raise UsageError(f"{trace_dir} holds {len(job.ranks)} of the {job.world_size} ranks of the job (missing: "
                         f"{_listed_ranks(job)}): measure records a whole job; ingest the folder with "
                         "`reportgen ingest trace --sampled` instead")
    for warning in job.warnings():
        print(warning, file=sys.stderr)
    measured = replace(measurement, split_s=job.split_s(steps_per_run))
    return replace(measured, workers_s=tuple(w * steps_per_run for w in job.run.workers_s),
                   source=(*provenance(measured), *job.provenance(measurement.nodes, steps_per_run)))
