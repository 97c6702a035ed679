"""reportgen measure: runs a command under CodeCarbon's tracker and appends exactly one row, or nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.project import load_project

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
    assert csv[0] == "nodes,compute [s],communication [s],idle [s],energy [kWh]"
    nodes, compute, communication, idle, energy = csv[1].split(",")
    assert (nodes, compute, communication, idle) == ("2", "0.8", "0.1", "0.05")
    assert float(energy) > 0  # CodeCarbon's estimate for this process and its children
    assert "appended to" in capsys.readouterr().out
    run = load_project(project).project.scaling.runs[0]  # the project stays valid
    assert (run.nodes, run.compute, run.energy) == (2, 0.8, pytest.approx(float(energy) * 3.6e6))


def test_wall_time_in_the_header_unit(project: Path) -> None:
    (project.parent / "runs.csv").write_text("# measured runs\nnodes,time [ms]\n1,900\n")
    assert main(["measure", "--project", str(project), "--nodes", "4", "--", sys.executable, "-c", "pass"]) == 0
    lines = (project.parent / "runs.csv").read_text().splitlines()
    assert lines[:3] == ["# measured runs", "nodes,time [ms]", "1,900"]
    nodes, milliseconds = lines[3].split(",")
    assert nodes == "4" and 1 < float(milliseconds) < 30_000


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
