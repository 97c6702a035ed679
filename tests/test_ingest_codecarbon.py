"""CodeCarbon's emissions.csv: a tracked run's energy attached to the project's run at a node count."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.errors import InputError
from reportgen.ingest.emissions import read_emissions
from reportgen.project.loader import load_project
from tests.conftest import DATA

TRACKED = DATA / "codecarbon" / "emissions.csv"  # two runs written by CodeCarbon 3.3's offline tracker here


def rows() -> list[dict[str, str]]:
    with TRACKED.open() as stream:
        return list(csv.DictReader(stream))


def test_the_last_run_or_the_one_named() -> None:
    first, last = rows()
    run = read_emissions(TRACKED)
    assert (run.run_id, run.rows) == (last["run_id"], 1)
    assert run.energy_kwh == pytest.approx(float(last["energy_consumed"])) and run.country == "FRA"
    assert read_emissions(TRACKED, run_id=first["run_id"]).energy_kwh == pytest.approx(float(first["energy_consumed"]))
    assert run.energy_at(8) == pytest.approx(8 * float(last["energy_consumed"]))  # one machine tracked, 8 nodes
    with pytest.raises(InputError, match="no run 'nope'"):
        read_emissions(TRACKED, run_id="nope")


def test_rows_of_one_run_are_its_machines(tmp_path: Path) -> None:
    header, first, _ = TRACKED.read_text().splitlines()
    (tmp_path / "e.csv").write_text("\n".join([header, first, first]) + "\n")  # two machines of one run
    run = read_emissions(tmp_path / "e.csv")
    energy = float(rows()[0]["energy_consumed"])
    assert run.rows == 2 and run.energy_kwh == pytest.approx(2 * energy)
    assert run.energy_at(2) == pytest.approx(2 * energy) and run.energy_at(4) == pytest.approx(4 * energy)
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=r"not CodeCarbon's emissions\.csv"):
        read_emissions(tmp_path / "other.csv")


def test_the_energy_lands_in_the_run_with_its_provenance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n"
                       "energy: {node_power: 1 kW, location: {country: DEU}}\n")
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,100\n8,20\n")
    command = ["ingest", "codecarbon", str(TRACKED), "--project", str(project)]
    assert main([*command, "--nodes", "4"]) == 2  # no run at 4 nodes to attach it to
    assert main([*command, "--nodes", "8"]) == 0
    assert "tracked the run in FRA, but energy.location is DEU" in capsys.readouterr().err
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0] == "nodes,time [s],energy [kWh],co2_recorded [kg]" and lines[1] == "1,100,,"
    assert lines[2].startswith("# reportgen ingest codecarbon: emissions.csv sha256 ")
    assert "scaled to 8 machines assuming each draws the same" in lines[2]
    run = next(r for r in load_project(project).project.scaling.runs if r.nodes == 8)
    # at full precision (15 significant digits, where six were 1e-6 apart): eight times the tracked machine's
    assert run.energy == pytest.approx(8 * float(rows()[1]["energy_consumed"]) * 3.6e6, rel=1e-14, abs=0)
    assert run.co2_recorded == pytest.approx(8 * float(rows()[1]["emissions"]), rel=1e-14, abs=0)
    assert main([*command, "--nodes", "8"]) == 2  # an energy is already there
    assert main([*command, "--nodes", "8", "--replace", "--run-id", rows()[0]["run_id"]]) == 0
    text = (tmp_path / "runs.csv").read_text()
    assert text.count("# reportgen ingest codecarbon") == 1 and rows()[0]["run_id"] in text


def test_codecarbon_s_own_emissions_are_shown_beside_the_report_s(tmp_path: Path) -> None:
    from reportgen.analysis import analyze
    from reportgen.project.carbon import intensity_for

    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n"
                       "energy: {node_power: 1 kW, pue: 1.2, location: {country: FRA}}\n")
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,100\n")
    assert main(["ingest", "codecarbon", str(TRACKED), "--project", str(project), "--nodes", "1", "-q"]) == 0
    loaded = load_project(project)
    energy = analyze(loaded.project, intensity=intensity_for(loaded.project.energy.location)).energy
    row = energy.rows[0]
    last = rows()[-1]
    recorded, kwh = float(last["emissions"]), float(last["energy_consumed"])
    assert row.co2_recorded_kg == pytest.approx(recorded)
    assert row.recorded_intensity_g_per_kwh == pytest.approx(recorded * 1000 / kwh)  # CodeCarbon's own intensity
    assert row.co2_kg == pytest.approx(1.2 * kwh * energy.carbon_intensity_g_per_kwh / 1000)  # one intensity, PUE


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "1e400", "lots", "0", "1e-40"])
def test_a_value_that_is_not_a_measurement_is_refused_before_anything_is_written(tmp_path: Path,
                                                                                value: str) -> None:
    header, first, _ = TRACKED.read_text().splitlines()
    columns = header.split(",")
    cells = first.split(",")
    cells[columns.index("energy_consumed")] = value
    (tmp_path / "e.csv").write_text("\n".join([header, ",".join(cells)]) + "\n")
    with pytest.raises(InputError, match=r"e\.csv:2:\d+: error: energy_consumed must be a number, more than zero"
                       ) as caught:
        read_emissions(tmp_path / "e.csv")
    column = caught.value.problems[0].column  # at the cell, on the row's own line
    assert ",".join(cells)[column - 1:].startswith(value)


def test_json_prints_the_values_written(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["ingest", "codecarbon", str(TRACKED), "--nodes", "2", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    last = rows()[-1]
    assert document["energy_kwh"] == 2 * float(last["energy_consumed"])
    assert document["co2_recorded_kg"] == 2 * float(last["emissions"]) and document["nodes"] == 2


def test_a_single_machine_run_of_many_ranks_keeps_its_measured_energy(tmp_path: Path) -> None:
    """--nodes counts ranks; --machines 1 (a torchrun --standalone job) records CodeCarbon's reading as it is."""
    last = rows()[-1]
    (tmp_path / "p.yaml").write_text("project: {title: T}\nscaling: {file: runs.csv, time_unit: s}\n")
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,100\n4,40\n")
    assert main(["ingest", "codecarbon", str(TRACKED), "--project", str(tmp_path / "p.yaml"), "--nodes", "4",
                 "--machines", "1"]) == 0
    energy = {r.nodes: r.energy for r in load_project(tmp_path / "p.yaml").project.scaling.runs}
    assert energy[4] == pytest.approx(float(last["energy_consumed"]) * 3.6e6)  # J, as measured: never × 4 ranks
