"""`reportgen runs export` (docs/measurements.md#moving-inline-runs-to-a-csv) and `reportgen init --example`: the
newcomer's way from runs typed into the project file to a CSV that `measure` appends to, and from nothing to a
shipped example."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.errors import UsageError
from reportgen.ingest.measure import csv_of
from reportgen.project import runs_export
from reportgen.project.examples import as_written_by_init
from reportgen.project.loader import load_project
from tests.conftest import INPUTS

PROJECT = """project:
  title: Inline runs
design: {nodes: 4}
scaling:   # measured on the lab cluster
  time_unit: min
  runs:
    - {nodes: 1, compute: 118, communication: 0, idle: 0, time: 120}
    - {nodes: 2, compute: 58, communication: 2, idle: 1, time: 63, energy: 1.5 kWh}
    - {nodes: 2, compute: 3480 s, communication: 2, idle: 1}      # a repeat, written in seconds
    - nodes: 4
      compute: 30
      communication: 2
      idle: 1
      workers: [29, 30 min, 1800 s, 31]
  # the next key's comment stays
  axis: nodes
"""


def _runs(path: Path) -> list[tuple]:
    return [(run.nodes, run.time, run.energy, run.compute, run.workers)
            for run in load_project(path).project.scaling.runs]


def test_inline_runs_with_repeats_move_into_a_csv_value_for_value(tmp_path: Path, capsys) -> None:
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT, encoding="utf-8")
    before = _runs(project)
    assert main(["runs", "export", str(project)]) == 0
    assert "moved 4 runs (nodes, compute, communication, idle, time, energy, workers) into runs.csv" in \
        capsys.readouterr().out
    csv = (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines()
    assert csv[1:] == ["nodes,compute,communication,idle,time,energy,workers", "1,118,0,0,120,,",
                       "2,58,2,1,63,1.5 kWh,", "2,3480 s,2,1,,,", "4,30,2,1,,,29 30 30 31"]  # as written
    assert _runs(project) == before  # the same runs, the repeat at 2 nodes included
    assert before[3][4] == (29 * 60.0, 1800.0, 1800.0, 31 * 60.0)
    text = project.read_text(encoding="utf-8")
    assert "  time_unit: min\n  file: runs.csv\n  # the next key's comment stays\n  axis: nodes\n" in text
    assert "scaling:   # measured on the lab cluster\n" in text and "runs:" not in text
    assert csv_of(load_project(project)) == tmp_path / "runs.csv"  # measure appends there now


def test_a_flow_section_is_edited_where_it_stands(tmp_path: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {time_unit: s, runs: [{nodes: 1, time: 10}, {nodes: 2, "
                       "time: 6}], axis: nodes}\n", encoding="utf-8")
    runs_export.export_runs(load_project(project), "measured.csv")
    assert project.read_text(encoding="utf-8") == ("project: {title: T}\nscaling: {time_unit: s, file: measured.csv, "
                                                   "axis: nodes}\n")
    assert [run.time for run in load_project(project).project.scaling.runs] == [10.0, 6.0]


def test_measure_meeting_inline_runs_points_to_the_export(tmp_path: Path) -> None:
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT, encoding="utf-8")
    with pytest.raises(UsageError, match=r"reportgen runs export .*p\.yaml"):
        csv_of(load_project(project))


def test_what_cannot_be_moved_is_refused_and_nothing_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT, encoding="utf-8")
    (tmp_path / "runs.csv").write_text("nodes,time\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"runs\.csv exists"):
        runs_export.export_runs(load_project(project))
    with pytest.raises(UsageError, match="inside the project file's folder"):
        runs_export.export_runs(load_project(project), "../elsewhere.csv")
    # a read-back that differs: the CSV is removed again and the project file is left as it was
    monkeypatch.setattr(runs_export, "_same", lambda old, new: False)
    with pytest.raises(UsageError, match="differ"):
        runs_export.export_runs(load_project(project), "new.csv")
    assert not (tmp_path / "new.csv").exists() and project.read_text(encoding="utf-8") == PROJECT
    monkeypatch.undo()
    runs_export.export_runs(load_project(project), "new.csv")
    with pytest.raises(UsageError, match=r"already come from scaling\.file"):
        runs_export.export_runs(load_project(project), "again.csv")
    (tmp_path / "none.yaml").write_text("project: {title: T}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"no scaling\.runs"):
        runs_export.export_runs(load_project(tmp_path / "none.yaml"))


def test_init_writes_a_shipped_example_with_the_csv_it_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--example", "nightly-repeats"]) == 0
    written = tmp_path / "nightly-repeats.yaml"
    # as shipped, but for the modeline naming the checkout's schema (examples.as_written_by_init)
    assert written.read_text(encoding="utf-8") == as_written_by_init((INPUTS / "nightly-repeats.yaml").read_text())
    assert (tmp_path / "nightly-repeats-runs.csv").read_bytes() == (INPUTS / "nightly-repeats-runs.csv").read_bytes()
    assert main(["check", str(written)]) == 0
    assert main(["init", "--example", "example", "mine.yaml"]) == 0 and (tmp_path / "mine.yaml").exists()
    assert main(["init", "--example", "nightly-repeats", "other.yaml"]) == 2  # its CSV is there: never overwritten
    assert not (tmp_path / "other.yaml").exists()
    with pytest.raises(SystemExit) as unknown:
        main(["init", "--example", "nope"])
    assert unknown.value.code == 2
