"""reportgen measure: runs a command under CodeCarbon's tracker and appends exactly one row, or nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.project.loader import load_project

SPLIT = ("import json, os; json.dump({'compute': 0.8, 'communication': 0.1, 'idle': 0.05}, "
         "open(os.environ['REPORTGEN_SPLIT_FILE'], 'w'))")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("project: {title: M}\nscaling: {file: runs.csv, time_unit: ms}\n"
                    "energy: {node_power: 1 kW, location: {country: FRA}}\n")
    return path


def test_creates_the_csv_and_appends_a_breakdown(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c", SPLIT]) == 0
    csv = (project.parent / "runs.csv").read_text().splitlines()
    assert csv[0] == "nodes,time [s],compute [s],communication [s],idle [s],energy [kWh]"  # one row holds the run
    assert csv[1].startswith("# reportgen measure: 2 nodes; energy is CodeCarbon's estimate for this machine (")
    assert csv[1].endswith("× 2 machines, assuming every machine draws the same")
    per_machine = float(csv[1].split("(")[1].split(" kWh")[0])
    nodes, wall, compute, communication, idle, energy = csv[2].split(",")
    assert float(energy) == pytest.approx(2 * per_machine, rel=1e-5)  # this machine's energy × 2 nodes
    assert (nodes, compute, communication, idle) == ("2", "0.8", "0.1", "0.05")
    # the command's wall time beside its split (the rest is start-up); left empty here, where the split the test
    # command reports (0.95 s) is longer than the command took
    assert wall == "" or float(wall) >= 0.95
    assert float(energy) > 0  # CodeCarbon's estimate for this process and its children
    assert "appended to" in capsys.readouterr().out
    run = load_project(project).project.scaling.runs[0]  # the project stays valid
    assert (run.nodes, run.compute, run.energy) == (2, 0.8, pytest.approx(float(energy) * 3.6e6))


def test_wall_time_in_the_header_unit(project: Path) -> None:
    (project.parent / "runs.csv").write_text("# measured runs\nnodes,time [ms]\n1,900\n")
    assert main(["measure", "--project", str(project), "--nodes", "4", "--", sys.executable, "-c", "pass"]) == 0
    lines = (project.parent / "runs.csv").read_text().splitlines()
    # the energy always lands: a CSV without the column gains it, empty for the runs before
    assert lines[:3] == ["# measured runs", "nodes,time [ms],energy [kWh]", "1,900,"]
    nodes, milliseconds, energy = lines[4].split(",")
    assert nodes == "4" and 1 < float(milliseconds) < 30_000 and (energy == "" or float(energy) > 0)


def test_a_failed_command_appends_nothing_and_passes_its_status(project: Path) -> None:
    (project.parent / "runs.csv").write_text("nodes,time [s]\n1,10\n")
    before = (project.parent / "runs.csv").read_bytes()
    assert main(["measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c",
                 "raise SystemExit(3)"]) == 3
    assert (project.parent / "runs.csv").read_bytes() == before


def test_a_measured_node_count_is_refused_before_running(project: Path, tmp_path: Path) -> None:
    (project.parent / "runs.csv").write_text("nodes,time [s]\n1,10\n")
    marker = tmp_path / "ran"
    assert main(["measure", "--project", str(project), "--nodes", "1", "--", sys.executable, "-c",
                 f"open({str(marker)!r}, 'w')"]) == 2
    assert not marker.exists()
    assert main(["measure", "--project", str(project), "--nodes", "1", "--replace", "--", sys.executable, "-c",
                 "pass"]) == 0
    assert (project.parent / "runs.csv").read_text().count("\n1,") == 1


@pytest.mark.parametrize(("csv", "nodes", "said"), [
    ("nodes,compute [s],communication [s],idle [s],bubble [s]\n1,10,0,0,0\n", "2",
     "has a column measure cannot fill (bubble)"),
    ("nodes,time [s]\n1,10\n", str((1 << 20) + 1), "--nodes must be from 1 to 1,048,576"),
])
def test_what_measure_could_not_record_is_refused_before_running(project: Path, tmp_path: Path, csv: str,
                                                                   nodes: str, said: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (project.parent / "runs.csv").write_text(csv)
    marker = tmp_path / "ran"
    assert main(["measure", "--project", str(project), "--nodes", nodes, "--", sys.executable, "-c",
                 f"open({str(marker)!r}, 'w')"]) == 2
    assert not marker.exists() and said in capsys.readouterr().err
    assert (project.parent / "runs.csv").read_text() == csv


def test_codecarbons_own_co2e_fills_the_column_ingest_codecarbon_added(project: Path) -> None:
    """A CSV that `ingest codecarbon` gave a co2_recorded column: measure fills it with CodeCarbon's CO2e of the run
    (× machines, as the energy), or leaves it empty when the tracker gave none; it was refused after the run."""
    runs = project.parent / "runs.csv"
    runs.write_text("nodes,time [s],energy [kWh],co2_recorded [kg]\n1,10,0.1,0.05\n")
    assert main(["measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c", "pass"]) == 0
    nodes, _, energy, co2 = runs.read_text().splitlines()[-1].split(",")
    assert nodes == "2" and (co2 == "" or (float(co2) > 0 and energy != ""))
    load_project(project)  # the row reads as the project's loader reads it


def test_a_row_written_underneath_the_run_costs_it_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two measures of one scale at once: the second learns only after its run that the scale is taken. Its wall
    time and energy are said, CodeCarbon's record kept, exit 2."""
    runs = project.parent / "runs.csv"
    runs.write_text("nodes,time [s]\n1,10\n")
    other = f"open({str(runs)!r}, 'a').write('2,99\\n')"  # the other measure's row, landing mid-run
    assert main(["measure", "--project", str(project), "--nodes", "2", "--", sys.executable, "-c", other]) == 2
    err = capsys.readouterr().err
    assert "error: measured: wall time" in err and "not recorded in runs.csv" in err and "already has a run" in err
    assert runs.read_text() == "nodes,time [s]\n1,10\n2,99\n"
    if "CodeCarbon's record of the run is in" in err:  # when the tracker gave an energy
        assert (project.parent / "emissions.csv").exists()


@pytest.mark.slow
def test_an_interrupted_run_leaves_the_csv_as_it_was(project: Path) -> None:
    (project.parent / "runs.csv").write_text("nodes,time [s]\n1,10\n")
    before = (project.parent / "runs.csv").read_bytes()
    process = subprocess.Popen([sys.executable, "-m", "reportgen", "measure", "--project", str(project), "--nodes",
                                "2", "--", sys.executable, "-c", "import time; time.sleep(60)"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(4)  # the tracker is started and the command is sleeping
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=30)
    assert process.returncode != 0
    assert (project.parent / "runs.csv").read_bytes() == before
    assert not [p for p in project.parent.iterdir() if p.name.startswith(".runs.csv.")]


def test_usage_errors(project: Path, tmp_path: Path) -> None:
    inline = tmp_path / "inline.yaml"
    inline.write_text("project: {title: I}\n")
    assert main(["measure", "--project", str(inline), "--nodes", "1", "--", "true"]) == 2  # no scaling.file
    assert main(["measure", "--project", str(project), "--nodes", "1"]) == 2  # no command
    assert main(["measure", "--project", str(project), "--nodes", "1", "--", "no-such-command-here"]) == 2


@pytest.mark.slow  # a second and a half of CodeCarbon for a guard the fast tier can do without
def test_a_command_that_cannot_start_leaves_no_tracker_running(project: Path) -> None:
    """CodeCarbon's scheduler starts a timer thread every second until its tracker is stopped."""
    before = set(threading.enumerate())
    assert main(["measure", "--project", str(project), "--nodes", "1", "--", "no-such-command-here"]) == 2
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(threading.enumerate()) - before


def test_a_split_that_cannot_be_recorded_is_refused_before_running(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = ["--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"]
    (project.parent / "runs.csv").write_text("nodes,compute [s],communication [s],idle [s]\n1,10,0,0\n")
    assert main(["measure", "--project", str(project), "--nodes", "2", *command]) == 2  # may not write one
    assert not marker.exists()


def test_a_promised_split_not_written_loses_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = project.parent / "runs.csv"
    csv.write_text("nodes,compute [s],communication [s],idle [s]\n1,10,0,0\n")
    before = csv.read_bytes()
    assert main(["measure", "--project", str(project), "--nodes", "2", "--split", "--", sys.executable, "-c",
                 "pass"]) == 1
    assert csv.read_bytes() == before
    error = capsys.readouterr().err
    assert "nothing appended" in error and "Measured: wall time" in error and "energy" in error


def test_a_new_csv_gets_the_umask_mode(project: Path) -> None:
    previous = os.umask(0o027)
    try:
        assert main(["measure", "--project", str(project), "--nodes", "1", "--", sys.executable, "-c",
                     "pass"]) == 0
    finally:
        os.umask(previous)
    assert (project.parent / "runs.csv").stat().st_mode & 0o777 == 0o640  # 0666 less 027, not mkstemp's 0600


@pytest.mark.parametrize(("launch", "machines"), [(["--machines", "1"], 1), (["--", "--standalone"], 1), ([], 4)])
def test_energy_is_per_machine_never_per_rank(project: Path, launch: list[str], machines: int) -> None:
    """4 ranks on one machine measured 0.155 Wh and recorded 0.621 Wh (× ranks): energy is × machines."""
    options = [a for a in launch if a != "--" and a != "--standalone"]
    marker = ["--standalone"] if "--standalone" in launch else []  # a single-host launch, as torchrun writes it
    command = [sys.executable, "-c", f"import sys; {SPLIT}", *marker]
    assert main(["measure", "--project", str(project), "--nodes", "4", *options, "--split", "--", *command]) == 0
    lines = (project.parent / "runs.csv").read_text().splitlines()
    comment, row = lines[1], lines[2]
    energy = float(row.split(",")[-1])
    if machines == 1:
        assert "all 4 ranks on this one machine" in comment
        assert lines[0].endswith(",energy [kWh],ranks_per_node") and row.endswith(",4")  # for the contention check
        energy = float(row.split(",")[-2])
        measured = energy  # CodeCarbon's reading, as measured
    else:
        per_machine = float(comment.split("(")[1].split(" kWh")[0])
        assert "× 4 machines" in comment and energy == pytest.approx(4 * per_machine, rel=1e-5)
        measured = per_machine
    assert measured > 0


def test_machines_past_the_nodes_are_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "--project", str(project), "--nodes", "2", "--machines", "3", "--", sys.executable,
                 "-c", "pass"]) == 2
    assert not (project.parent / "runs.csv").exists()
    assert main(["measure", "--project", str(project), "--nodes", "1", "--machines", "0", "--", sys.executable,
                 "-c", "pass"]) == 2
    assert "--machines must be from 1 to the run's 1 node, got 0" in capsys.readouterr().err


def test_a_csv_of_wall_times_gains_the_split_beside_the_time(project: Path) -> None:
    """A CSV that measure started with wall times takes a later run's split in new columns (one row per run)."""
    (project.parent / "runs.csv").write_text("nodes,time [ms]\n1,1000\n")
    small = SPLIT.replace("0.8", "0.0008").replace("0.1", "0.0001").replace("0.05", "0.00005")  # within the wall
    assert main(["measure", "--project", str(project), "--nodes", "2", "--split", "--", sys.executable, "-c",
                 small]) == 0
    runs = {r.nodes: r for r in load_project(project).project.scaling.runs}
    assert runs[1].time == 1.0 and runs[1].compute is None
    assert (runs[2].compute, runs[2].communication, runs[2].idle) == pytest.approx((0.0008, 0.0001, 0.00005))
    assert runs[2].time > runs[2].parts  # the wall time beside the split: the rest is start-up


def test_traces_that_cannot_be_read_never_cost_the_measured_run(project: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """measure --trace-dir printed the wall time and energy, refused the traces and appended nothing."""
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "rank0.json").write_text('{"traceEvents": []}')  # a profile with nothing in it
    assert main(["measure", "--project", str(project), "--nodes", "1", "--trace-dir", str(traces), "--",
                 sys.executable, "-c", "pass"]) == 2
    said = capsys.readouterr()
    run = load_project(project).project.scaling.runs[0]
    assert run.time is not None and run.time > 0 and run.compute is None and run.energy is not None
    assert "appended to" in said.out
    assert "the traces were not read, so the run has its wall time and energy only" in said.err


def test_the_banner_shows_a_commands_control_characters_as_escapes(project: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An escape sequence in the command (clear the screen) was written raw into the terminal by the banner."""
    assert main(["measure", "--project", str(project), "--nodes", "1", "--", sys.executable, "-c",
                 "pass  # \x1b[2J\u202e"]) == 0
    banner = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("measuring"))
    assert "\x1b" not in banner and "\u202e" not in banner and "\\x1b[2J" in banner


def test_a_project_without_a_location_is_told_the_country_codecarbon_assumes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without energy.location, CodeCarbon's record of the run's emissions assumes the USA: measure says so, and
    how to set the real one (never a silent default); with a location, it says nothing of it."""
    path = tmp_path / "p.yaml"
    path.write_text("project: {title: M}\nscaling: {file: runs.csv}\nenergy: {node_power: 1 kW}\n")
    assert main(["measure", "--project", str(path), "--nodes", "1", "--", sys.executable, "-c", "pass"]) == 0
    err = capsys.readouterr().err
    assert "energy.location is not set, so CodeCarbon's record of this run's emissions assumes its country is USA" \
        in err and "energy: {location: {country: DEU}}" in err
    path.write_text("project: {title: M}\nscaling: {file: runs.csv}\n"
                    "energy: {node_power: 1 kW, location: {country: FRA}}\n")
    assert main(["measure", "--project", str(path), "--nodes", "2", "--", sys.executable, "-c", "pass"]) == 0
    assert "energy.location is not set" not in capsys.readouterr().err
